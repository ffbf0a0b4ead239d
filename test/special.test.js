// special.test.js - the special functions (src/ops/oplist/special.js, kd.special): PyTorch parity
// from test/fixtures/special.json (tools/fixtures/special.py), then what fixtures cannot say: the
// call forms (kd.special aliases are the ops themselves, polygamma's method, frexp's names),
// in-place identity, and big random inputs crossing the parallel grain against a float64 reference.
'use strict';
const assert = require('node:assert');
const kd = require('..');
const { parityTests, uniformValues: uniform } = require('./helpers');

parityTests('special');

function assertClose(actual, expected, rtol, atol, what) {
  let worst = 0, at = -1;
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i], e = expected[i];
    if (Number.isNaN(e) && Number.isNaN(a)) continue;
    if (a === e) continue;
    const err = Math.abs(a - e) - (atol + rtol * Math.abs(e));
    if (!(err <= 0) && (at < 0 || err > worst)) { worst = err; at = i; }
  }
  assert.ok(at < 0, `${what}: element ${at}: ${actual[at]} vs ${expected[at]}`);
}

describe('special: call forms', () => {
  it('kd.special aliases are the ops themselves', () => {
    assert.strictEqual(kd.special.psi, kd.digamma);
    assert.strictEqual(kd.special.digamma, kd.digamma);
    assert.strictEqual(kd.special.gammaln, kd.lgamma);
    assert.strictEqual(kd.special.expit, kd.sigmoid);
    assert.strictEqual(kd.special.multigammaln, kd.mvlgamma);
    assert.strictEqual(kd.special.gammainc, kd.igamma);
    assert.strictEqual(kd.special.gammaincc, kd.igammac);
    assert.strictEqual(kd.special.xlogy, kd.xlogy);
    assert.strictEqual(kd.special.sinc, kd.sinc);
    assert.strictEqual(kd.special.logSoftmax, kd.logSoftmax);
  });
  it('polygamma as a method, logit with an options object', () => {
    const x = kd.tensor([0.5, 1, 2.5], { dtype: 'float64' });
    assert.deepStrictEqual(x.polygamma(2).arraySync(), kd.polygamma(2, x).arraySync());
    const p = kd.tensor([0.01, 0.5, 0.99]);
    assert.deepStrictEqual(kd.logit(p, { eps: 0.1 }).arraySync(), kd.logit(p, 0.1).arraySync());
  });
  it('frexp returns (mantissa, exponent) by name', () => {
    const r = kd.frexp(kd.tensor([8, -0.375]));
    assert.deepStrictEqual(r.mantissa.arraySync(), [0.5, -0.75]);
    assert.deepStrictEqual(r.exponent.arraySync(), [4, -1]);
    assert.strictEqual(r.exponent.dtype, 'int32');
    const [m, e] = r;
    assert.strictEqual(m, r.mantissa);
    assert.strictEqual(e, r.exponent);
  });
  it('in-place forms return self and bump its version', () => {
    const x = kd.tensor([0.5, 1.5, 3]);
    const v = x.version;
    assert.strictEqual(x.lgamma_(), x);
    assert.ok(x.version > v);
    const y = kd.tensor([1, 2, 3], { dtype: 'float64' });
    assert.strictEqual(y.xlogy_(kd.tensor([2, 2, 2], { dtype: 'float64' })), y);
    assert.deepStrictEqual(y.arraySync(), [Math.log(2), 2 * Math.log(2), 3 * Math.log(2)]);
  });
  it('kd.erfinv(kd.ones([1])) is inf', () => {
    assert.deepStrictEqual(kd.erfinv(kd.ones([1])).arraySync(), [Infinity]);
  });
});

// float32 results of big inputs (over the 32768-element parallel grain, strided) against the same
// op in float64: the float32 algorithms stay within float32 accuracy everywhere in the range.
describe('special: big inputs against a float64 reference', () => {
  const N = 70001;
  const unary = [
    ['lgamma', (x) => kd.lgamma(x), -20, 30, 2e-5, 1e-4],
    ['digamma', (x) => kd.digamma(x), 0.01, 50, 2e-5, 1e-5],
    ['polygamma(2)', (x) => kd.polygamma(2, x), 0.2, 30, 2e-5, 1e-6],
    ['erfcx', (x) => kd.special.erfcx(x), -5, 1e4, 1e-5, 1e-7],
    ['i0', (x) => kd.i0(x), -40, 40, 2e-5, 1e-6],
    ['i0e', (x) => kd.special.i0e(x), -100, 100, 2e-5, 1e-7],
    ['i1', (x) => kd.special.i1(x), -40, 40, 2e-5, 1e-6],
    ['i1e', (x) => kd.special.i1e(x), -100, 100, 2e-5, 1e-7],
    ['ndtr', (x) => kd.special.ndtr(x), -9, 9, 1e-5, 1e-7],
    ['ndtri', (x) => kd.special.ndtri(x), 1e-6, 1, 1e-5, 1e-6],
    ['logNdtr', (x) => kd.special.logNdtr(x), -60, 9, 1e-5, 1e-7],
    ['sinc', (x) => kd.sinc(x), -20, 20, 1e-5, 1e-6],
    ['besselJ0', (x) => kd.special.besselJ0(x), -60, 60, 1e-4, 2e-6],
    ['besselJ1', (x) => kd.special.besselJ1(x), -60, 60, 1e-4, 2e-6],
    ['besselY0', (x) => kd.special.besselY0(x), 0.01, 60, 1e-4, 2e-6],
    ['modifiedBesselK1', (x) => kd.special.modifiedBesselK1(x), 0.01, 60, 2e-5, 1e-7],
    ['scaledModifiedBesselK0', (x) => kd.special.scaledModifiedBesselK0(x), 0.01, 600, 2e-5, 1e-7],
    ['airyAi', (x) => kd.special.airyAi(x), -30, 30, 1e-4, 1e-5], // float32 phase of the oscillation below -2
  ];
  for (const [name, f, lo, hi, rtol, atol] of unary) {
    it(name, () => {
      const x64 = kd.tensor(uniform(2 * N, lo, hi)).reshape([N, 2]).t(); // strided
      const ref = f(x64).dataSync();
      const got = f(x64.to({ dtype: 'float32' })).to({ dtype: 'float64' }).dataSync();
      const x32 = x64.to({ dtype: 'float32' }).to({ dtype: 'float64' });
      const ref32 = f(x32).dataSync(); // the float64 value at the float32-rounded input
      assertClose(got, ref32, rtol, atol, name);
      assert.strictEqual(ref.length, 2 * N);
    });
  }
  const binary = [
    ['igamma', (a, b) => kd.igamma(a, b), 0.01, 400, 0.01, 420, 1e-4, 1e-6],
    ['igammac', (a, b) => kd.igammac(a, b), 0.01, 400, 0.01, 420, 1e-4, 1e-6],
    ['zeta', (a, b) => kd.special.zeta(a, b), 1.1, 30, 0.1, 10, 1e-5, 1e-7],
    ['xlog1py', (a, b) => kd.special.xlog1py(a, b), -10, 10, -0.99, 100, 1e-5, 1e-6],
    ['logaddexp', (a, b) => kd.logaddexp(a, b), -100, 100, -100, 100, 1e-6, 1e-6],
    ['logaddexp2', (a, b) => kd.logaddexp2(a, b), -100, 100, -100, 100, 1e-6, 1e-6],
    ['legendrePolynomialP', (a, b) => kd.special.legendrePolynomialP(a, b), -1, 1, 0, 30, 1e-4, 1e-5],
  ];
  for (const [name, f, alo, ahi, blo, bhi, rtol, atol] of binary) {
    it(name, () => {
      const a64 = kd.tensor(uniform(N, alo, ahi, 3)), b64 = kd.tensor(uniform(N, blo, bhi, 5));
      const a32 = a64.to({ dtype: 'float32' }), b32 = b64.to({ dtype: 'float32' });
      const got = f(a32, b32).to({ dtype: 'float64' }).dataSync();
      const ref = f(a32.to({ dtype: 'float64' }), b32.to({ dtype: 'float64' })).dataSync();
      assertClose(got, ref, rtol, atol, name);
    });
  }
});

describe('special: polynomial degrees past the recurrence limit', function () {
  it('a degree above 2^20 gives NaN at once instead of an O(n) loop per element (1e15 would take days)', function () {
    for (const f of ['legendrePolynomialP', 'laguerrePolynomialL', 'chebyshevPolynomialT', 'shiftedChebyshevPolynomialU']) {
      const x = kd.tensor([0.5, 1.5], { dtype: 'float64' });
      assert.ok(kd.special[f](x, 1e15).dataSync().every(Number.isNaN), f);
      assert.ok(kd.special[f](x, 2 ** 20 + 1).dataSync().every(Number.isNaN), f);
      assert.ok(kd.special[f](x, 3).dataSync().every(Number.isFinite), f);
    }
  });
});
