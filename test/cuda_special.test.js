// cuda_special.test.js - the special functions on CUDA (cuda/ops_special.cu) against the CPU on
// inputs the fixtures leave out: big (past a grid's worth of elements per launch), contiguous
// (the vectorized path), strided (the index path) and broadcast, in every floating dtype; the
// fixture cases themselves run on CUDA in cuda_parity.test.js. Skipped without CUDA (run it on the
// emulated GPU: KINDLING_CUDA=emulate).
'use strict';
const assert = require('node:assert');
const kd = require('..');
const { uniformValues: uniform } = require('./helpers');

const available = kd.cuda.isAvailable();
const TOL = { float32: [2e-5, 1e-6], float64: [1e-12, 1e-14], float16: [1e-3, 1e-3], bfloat16: [8e-3, 8e-3] };

function assertSame(gpu, cpu, dtype, what) {
  const g = gpu.to('cpu').to({ dtype: 'float64' }).dataSync(), c = cpu.to({ dtype: 'float64' }).dataSync();
  const [rtol, atol] = TOL[dtype];
  for (let i = 0; i < c.length; i++) {
    if (Number.isNaN(c[i]) && Number.isNaN(g[i])) continue;
    if (g[i] === c[i]) continue;
    assert.ok(Math.abs(g[i] - c[i]) <= atol + rtol * Math.abs(c[i]), `${what}: element ${i}: cuda ${g[i]} vs cpu ${c[i]}`);
  }
}

(available ? describe : describe.skip)('CUDA special functions vs CPU on big inputs', function () {
  const N = 50003;
  const unary = {
    lgamma: [(x) => kd.lgamma(x), -10, 30], digamma: [(x) => kd.digamma(x), -10, 30],
    polygamma3: [(x) => kd.polygamma(3, x), 0.1, 20], erfcx: [(x) => kd.special.erfcx(x), -5, 100],
    i1e: [(x) => kd.special.i1e(x), -50, 50], ndtri: [(x) => kd.special.ndtri(x), 0, 1],
    logNdtr: [(x) => kd.special.logNdtr(x), -40, 5], besselY1: [(x) => kd.special.besselY1(x), 0, 40],
    airyAi: [(x) => kd.special.airyAi(x), -10, 10], logit: [(x) => kd.logit(x, 0.01), 0, 1],
  };
  for (const dtype of ['float32', 'float64', 'float16', 'bfloat16']) {
    for (const [name, [f, lo, hi]] of Object.entries(unary)) {
      it(`${name} ${dtype}: contiguous and strided`, function () {
        const x = kd.tensor(uniform(2 * N, lo, hi, 11), { dtype });
        assertSame(f(x.to('cuda')), f(x), dtype, `${name} contiguous`);
        const xs = x.reshape([N, 2]).t();
        assertSame(f(x.to('cuda').reshape([N, 2]).t()), f(xs), dtype, `${name} strided`);
      });
    }
    it(`igamma, zeta, legendre and nextafter ${dtype}: broadcast`, function () {
      const a = kd.tensor(uniform(N, 0.1, 60, 3), { dtype }).reshape([N, 1]);
      const b = kd.tensor(uniform(4, 0.1, 60, 5), { dtype });
      const [ac, bc] = [a.to('cuda'), b.to('cuda')];
      assertSame(kd.igamma(ac, bc), kd.igamma(a, b), dtype, 'igamma');
      assertSame(kd.special.zeta(ac.add(1), bc), kd.special.zeta(a.add(1), b), dtype, 'zeta');
      // degrees up to 12: the recurrence's rounding (FMA contraction differs between compilers) stays small
      assertSame(kd.special.legendrePolynomialP(ac.div(60), bc.div(5)), kd.special.legendrePolynomialP(a.div(60), b.div(5)), dtype, 'legendre');
      assertSame(kd.nextafter(ac, bc), kd.nextafter(a, b), dtype, 'nextafter');
    });
  }
  it('gcd, lcm and heaviside of integers', function () {
    const a = kd.tensor(uniform(N, -1000, 1000, 7)).to({ dtype: 'int32' }), b = kd.tensor(uniform(N, -1000, 1000, 9)).to({ dtype: 'int32' });
    for (const f of [kd.gcd, kd.lcm, kd.heaviside]) {
      assert.deepStrictEqual(Array.from(f(a.to('cuda'), b.to('cuda')).to('cpu').dataSync()), Array.from(f(a, b).dataSync()));
    }
  });
  it('frexp', function () {
    const x = kd.tensor(uniform(N, -1e6, 1e6, 13));
    const g = kd.frexp(x.to('cuda')), c = kd.frexp(x);
    assert.deepStrictEqual(Array.from(g.mantissa.to('cpu').dataSync()), Array.from(c.mantissa.dataSync()));
    assert.deepStrictEqual(Array.from(g.exponent.to('cpu').dataSync()), Array.from(c.exponent.dataSync()));
  });
});
