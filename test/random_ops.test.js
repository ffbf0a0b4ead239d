// random_ops.test.js - the random ops of src/ops/oplist/random.js (randperm, multinomial,
// bernoulli, poisson, normal, the in-place fillers). PyTorch's errors and its draw-independent
// values come from test/fixtures/random_ops.json (parityTests); PyTorch's generator is not
// kindling's, so the draws themselves are checked here: the same numbers for the same seed, the
// identities of Note [Random distributions] (uniform_(0, 1) == rand, normal_(0, 1) == randn,
// random_ == randint), distributions with fixed seeds (moments within 5 standard errors of the
// sample size, Kolmogorov-Smirnov and chi-square at the 0.1% level: deterministic, so they
// cannot flake), non-contiguous self, thread-count independence and gradients.
'use strict';

const { kd, assert, values, parityTests, expectKdError } = require('./helpers');

parityTests('random_ops');

// ---- statistics ----
function moments(v) {
  let s = 0;
  for (const x of v) s += x;
  const mean = s / v.length;
  let q = 0;
  for (const x of v) q += (x - mean) * (x - mean);
  return { mean, variance: q / (v.length - 1) };
}
// erf (Abramowitz-Stegun 7.1.26, |error| < 1.5e-7: far below the KS bounds used here)
function erf(x) {
  const s = Math.sign(x);
  x = Math.abs(x);
  const t = 1 / (1 + 0.3275911 * x);
  const y = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-x * x);
  return s * y;
}
const normalCdf = (m, s) => (x) => 0.5 * (1 + erf((x - m) / (s * Math.SQRT2)));
// Kolmogorov-Smirnov statistic of v against the CDF F; the 0.1% critical value is 1.95 / sqrt(n).
function ksStatistic(v, F) {
  const x = Float64Array.from(v).sort();
  const n = x.length;
  let d = 0;
  for (let i = 0; i < n; i++) {
    const f = F(x[i]);
    d = Math.max(d, f - i / n, (i + 1) / n - f);
  }
  return d;
}
function assertKs(v, F, what) {
  const d = ksStatistic(v, F), crit = 1.95 / Math.sqrt(v.length);
  assert.ok(d < crit, `${what}: KS statistic ${d} >= ${crit}`);
}
// Pearson chi-square of observed counts against expected counts; the 0.1% critical value of
// chi-square with df degrees of freedom by the Wilson-Hilferty approximation.
function assertChiSquare(observed, expected, what) {
  let chi = 0;
  for (let k = 0; k < observed.length; k++) chi += (observed[k] - expected[k]) ** 2 / expected[k];
  const df = observed.length - 1, z = 3.09;
  const crit = df * (1 - 2 / (9 * df) + z * Math.sqrt(2 / (9 * df))) ** 3;
  assert.ok(chi < crit, `${what}: chi-square ${chi.toFixed(2)} >= ${crit.toFixed(2)} (df ${df}); counts ${observed}`);
}
// |mean - mu| within 5 standard errors, and the variance within 5 of its standard errors (given
// the distribution's fourth central moment mu4).
function assertMoments(v, mu, sigma2, mu4, what) {
  const n = v.length;
  const { mean, variance } = moments(v);
  assert.ok(Math.abs(mean - mu) < 5 * Math.sqrt(sigma2 / n), `${what}: mean ${mean}, expected ${mu}`);
  if (mu4 !== undefined) {
    assert.ok(Math.abs(variance - sigma2) < 5 * Math.sqrt((mu4 - sigma2 * sigma2) / n), `${what}: variance ${variance}, expected ${sigma2}`);
  }
}
const counts = (v, k) => { const c = new Array(k).fill(0); for (const x of v) c[x]++; return c; };
const seeded = (seed, fn) => { kd.manualSeed(seed); return fn(); };
const N = 100000;

describe('random ops: the same numbers for the same seed', function () {
  const draws = {
    uniform_: () => kd.empty([1000]).uniform_(-1, 2),
    'normal_ float64': () => kd.empty([999], { dtype: 'float64' }).normal_(3, 2),
    'bernoulli_ int32': () => kd.empty([1000], { dtype: 'int32' }).bernoulli_(0.4),
    'bernoulli_ tensor p': () => kd.empty([10, 100]).bernoulli_(kd.full([100], 0.3)),
    exponential_: () => kd.empty([1000], { dtype: 'float16' }).exponential_(),
    'random_ int64': () => kd.empty([1000], { dtype: 'int64' }).random_(-50, 50),
    geometric_: () => kd.empty([1000], { dtype: 'int16' }).geometric_(0.2),
    cauchy_: () => kd.empty([1000], { dtype: 'bfloat16' }).cauchy_(),
    logNormal_: () => kd.empty([1000]).logNormal_(),
    randperm: () => kd.randperm(1000),
    'multinomial with replacement': () => kd.multinomial(kd.tensor([[1, 2, 3, 4], [4, 0, 1, 1]], { dtype: 'float32' }), 500, true),
    'multinomial without replacement': () => kd.multinomial(kd.linspace(1, 2, 2000).reshape([50, 40]), 20),
    bernoulli: () => kd.bernoulli(kd.full([1000], 0.5)),
    'bernoulli p': () => kd.bernoulli(kd.empty([1000]), { p: 0.25 }),
    poisson: () => kd.poisson(kd.linspace(0, 100, 1000)),
    'normal Tensor_Tensor': () => kd.normal(kd.zeros([4, 250]), kd.ones([250])),
    'normal float_float': () => kd.normal(1, 3, [1000], { dtype: 'float64' }),
  };
  for (const [name, fn] of Object.entries(draws)) {
    it(name, function () {
      const a = values(seeded(1234, fn)), b = values(seeded(1234, fn)), c = values(seeded(1235, fn));
      assert.deepStrictEqual(a, b, 'seed 1234 twice');
      assert.notDeepStrictEqual(a, c, 'seeds 1234 and 1235');
    });
  }

  it('each call takes one generator offset, as rand does', function () {
    const after = (fn) => { kd.manualSeed(77); fn(); return values(kd.rand([16])); };
    const ref = after(() => kd.rand([3]));
    for (const fn of Object.values(draws)) assert.deepStrictEqual(after(fn), ref);
  });
});

describe('random ops: the mapping of Note [Random distributions]', function () {
  for (const dtype of ['float32', 'float64', 'float16', 'bfloat16']) {
    it(`${dtype}: uniform_(0, 1) == rand, normal_(0, 1) == randn == normal(0, 1, size)`, function () {
      const u = seeded(5, () => kd.empty([3, 1001], { dtype }).uniform_());
      assert.deepStrictEqual(values(u), values(seeded(5, () => kd.rand([3, 1001], { dtype }))));
      const z = seeded(6, () => kd.empty([7, 333], { dtype }).normal_());
      assert.deepStrictEqual(values(z), values(seeded(6, () => kd.randn([7, 333], { dtype }))));
      assert.deepStrictEqual(values(z), values(seeded(6, () => kd.normal(0, 1, [7, 333], { dtype }))));
    });
  }
  it('normal(mean, std) is randn * std + mean', function () {
    const mean = kd.linspace(-3, 3, 500, { dtype: 'float64' }), std = kd.linspace(0, 2, 500, { dtype: 'float64' });
    const z = seeded(8, () => kd.randn([500], { dtype: 'float64' }));
    const want = values(z.mul(std).add(mean));
    assert.deepStrictEqual(values(seeded(8, () => kd.normal(mean, std))), want);
    assert.deepStrictEqual(values(seeded(8, () => kd.normal(mean, 2))), values(z.mul(2).add(mean)));
    assert.deepStrictEqual(values(seeded(8, () => kd.normal(1.5, std))), values(z.mul(std).add(1.5)));
    assert.deepStrictEqual(values(seeded(8, () => kd.empty([500], { dtype: 'float64' }).normal_(1.5, 2))),
      values(z.mul(2).add(1.5)));
  });
  it('random_(from, to) == randint(from, to) for every integer dtype', function () {
    for (const dtype of ['int64', 'int32', 'int16', 'int8', 'uint8']) {
      const r = seeded(9, () => kd.empty([2000], { dtype }).random_(0, 100));
      assert.deepStrictEqual(values(r), values(seeded(9, () => kd.randint(0, 100, [2000], { dtype }))), dtype);
    }
  });
  it('randomInt_ is random_', function () {
    assert.strictEqual(kd.Tensor.prototype.randomInt_, kd.Tensor.prototype.random_);
    const a = seeded(3, () => kd.empty([100], { dtype: 'int32' }).randomInt_(3, 9));
    assert.deepStrictEqual(values(a), values(seeded(3, () => kd.empty([100], { dtype: 'int32' }).random_(3, 9))));
  });
});

describe('random ops: distributions (fixed seeds)', function () {
  this.timeout(60000);

  it('uniform_(from, to): KS against the uniform CDF, within [from, to), every float dtype', function () {
    const v = values(seeded(11, () => kd.empty([N], { dtype: 'float64' }).uniform_(-2, 3)));
    assertKs(v, (x) => (x + 2) / 5, 'uniform_ float64');
    assertMoments(v, 0.5, 25 / 12, 625 / 80, 'uniform_ float64');
    for (const dtype of ['float32', 'float16', 'bfloat16']) {
      const w = values(seeded(12, () => kd.empty([N], { dtype }).uniform_(0.5, 1)));
      assert.ok(w.every((x) => x >= 0.5 && x < 1), `${dtype}: outside [0.5, 1)`);
    }
  });

  it('normal_(mean, std): KS and moments', function () {
    for (const dtype of ['float32', 'float64']) {
      const v = values(seeded(13, () => kd.empty([N], { dtype }).normal_(1.5, 2)));
      assertKs(v, normalCdf(1.5, 2), `normal_ ${dtype}`);
      assertMoments(v, 1.5, 4, 3 * 16, `normal_ ${dtype}`);
    }
  });

  it('logNormal_(mean, std): log of the values is normal', function () {
    const v = values(seeded(14, () => kd.empty([N], { dtype: 'float64' }).logNormal_(0.5, 0.75)));
    assert.ok(v.every((x) => x > 0));
    assertKs(v.map(Math.log), normalCdf(0.5, 0.75), 'logNormal_');
  });

  it('exponential_(lambd): KS and moments, all positive', function () {
    for (const dtype of ['float32', 'float64']) {
      const v = values(seeded(15, () => kd.empty([N], { dtype }).exponential_(2.5)));
      assert.ok(v.every((x) => x > 0), `${dtype}: a non-positive exponential`);
      assertKs(v, (x) => 1 - Math.exp(-2.5 * x), `exponential_ ${dtype}`);
      assertMoments(v, 0.4, 0.16, 9 * 0.4 ** 4, `exponential_ ${dtype}`);
    }
  });

  it('cauchy_(median, sigma): KS against the Cauchy CDF', function () {
    const v = values(seeded(16, () => kd.empty([N], { dtype: 'float64' }).cauchy_(1, 0.5)));
    assertKs(v, (x) => 0.5 + Math.atan((x - 1) / 0.5) / Math.PI, 'cauchy_');
  });

  it('geometric_(p): counts of 1, 2, ... against p (1 - p)^(k - 1), on float and integer dtypes', function () {
    const p = 0.3;
    for (const dtype of ['float32', 'float64', 'int32', 'int64']) {
      const v = values(seeded(17, () => kd.empty([N], { dtype }).geometric_(p)));
      assert.ok(v.every((x) => Number.isInteger(x) && x >= 1), `${dtype}: not a count >= 1`);
      const K = 12, obs = new Array(K + 1).fill(0), exp = new Array(K + 1).fill(0);
      for (const x of v) obs[Math.min(x, K + 1) - 1]++;
      for (let k = 1; k <= K; k++) exp[k - 1] = N * p * (1 - p) ** (k - 1);
      exp[K] = N * (1 - p) ** K;
      assertChiSquare(obs, exp, `geometric_ ${dtype}`);
      assertMoments(v, 1 / p, (1 - p) / (p * p), undefined, `geometric_ ${dtype}`);
    }
  });

  it('bernoulli_(p) and bernoulli(probabilities): frequencies within 5 standard errors', function () {
    const a = values(seeded(18, () => kd.empty([N], { dtype: 'uint8' }).bernoulli_(0.3)));
    assertMoments(a, 0.3, 0.21, undefined, 'bernoulli_(0.3)');
    const probs = kd.tensor([0.1, 0.9, 0.5, 0.02], { dtype: 'float64' });
    const b = seeded(19, () => kd.bernoulli(probs.expand([N / 4, 4]).contiguous()));
    const cols = [0, 1, 2, 3].map((j) => values(b.select(1, j)));
    [0.1, 0.9, 0.5, 0.02].forEach((p, j) => assertMoments(cols[j], p, p * (1 - p), undefined, `bernoulli p=${p}`));
    const c = seeded(20, () => kd.empty([N / 4, 4], { dtype: 'bool' }).bernoulli_(probs.to('float32')));
    [0.1, 0.9, 0.5, 0.02].forEach((p, j) => assertMoments(values(c.select(1, j)).map(Number), p, p * (1 - p), undefined,
      `bernoulli_(tensor) p=${p}`));
  });

  it('random_: uniform over [from, to), and the default ranges', function () {
    const v = values(seeded(21, () => kd.empty([N], { dtype: 'int32' }).random_(-3, 7)));
    assertChiSquare(counts(v.map((x) => x + 3), 10), new Array(10).fill(N / 10), 'random_(-3, 7)');
    const f = values(seeded(22, () => kd.empty([N]).random_()));
    assert.ok(f.every((x) => Number.isInteger(x) && x >= 0 && x <= 2 ** 24), 'float32 random_() in [0, 2^24]');
    assertMoments(f, 2 ** 23, (2 ** 24 + 1) ** 2 / 12, undefined, 'float32 random_()');
    const i8 = values(seeded(23, () => kd.empty([N], { dtype: 'int8' }).random_()));
    assert.ok(i8.every((x) => x >= 0 && x <= 127));
    assertChiSquare(counts(i8.map((x) => x >> 4), 8), new Array(8).fill(N / 8), 'int8 random_() in 8 bins');
    const b = values(seeded(24, () => kd.empty([1000], { dtype: 'bool' }).random_()));
    assert.ok(b.includes(true) && b.includes(false));
    const h = values(seeded(25, () => kd.empty([N], { dtype: 'float16' }).random_(2000, null)));
    assert.ok(h.every((x) => x >= 2000 && x <= 2048), 'float16 random_(2000, null) in [2000, 2^11]');
    const full = seeded(26, () => kd.empty([1000], { dtype: 'int64' }).random_(-(2n ** 63n), null)).dataSync();
    assert.ok(full.some((x) => x < -(2n ** 62n)) && full.some((x) => x > 2n ** 62n), 'int64 random_(min, null) spans both halves');
  });

  it('poisson(rates): mean and variance = rate below and above 10 (both samplers), counts of rate 4', function () {
    const rates = [0.5, 4, 9.5, 30, 250];
    const t = seeded(27, () => kd.poisson(kd.tensor(rates, { dtype: 'float64' }).expand([20000, 5]).contiguous()));
    rates.forEach((r, j) => {
      const v = values(t.select(1, j));
      assert.ok(v.every((x) => Number.isInteger(x) && x >= 0), `rate ${r}: not a count`);
      assertMoments(v, r, r, r + 3 * r * r, `poisson rate ${r}`);
    });
    const v4 = values(t.select(1, 1));
    const K = 12, obs = new Array(K + 1).fill(0), exp = new Array(K + 1).fill(0);
    let pk = Math.exp(-4), tail = 1;
    for (let k = 0; k < K; k++) { exp[k] = 20000 * pk; tail -= pk; pk *= 4 / (k + 1); }
    exp[K] = 20000 * tail;
    for (const x of v4) obs[Math.min(x, K)]++;
    assertChiSquare(obs, exp, 'poisson rate 4');
    assert.deepStrictEqual(values(kd.poisson(kd.zeros([5]))), [0, 0, 0, 0, 0]);
  });

  it('multinomial with replacement: category frequencies of each row', function () {
    const probs = kd.tensor([[1, 2, 3, 4], [0, 5, 0, 5]], { dtype: 'float64' });
    const s = seeded(28, () => kd.multinomial(probs, 20000, true));
    assert.deepStrictEqual(s.shape, [2, 20000]);
    assert.strictEqual(s.dtype, 'int64');
    assertChiSquare(counts(values(s.select(0, 0)), 4), [2000, 4000, 6000, 8000], 'row 0');
    const row1 = counts(values(s.select(0, 1)), 4);
    assert.strictEqual(row1[0] + row1[2], 0, 'zero-probability categories are never drawn');
    assertChiSquare([row1[1], row1[3]], [10000, 10000], 'row 1');
  });

  it('multinomial without replacement: distinct samples; first and second picks as sampling without replacement', function () {
    const p = [0.1, 0.2, 0.3, 0.4], R = 20000;
    const s = seeded(29, () => kd.multinomial(kd.tensor(p, { dtype: 'float32' }).expand([R, 4]).contiguous(), 2));
    const first = values(s.select(1, 0)), second = values(s.select(1, 1));
    assert.ok(first.every((x, i) => x !== second[i]), 'a category drawn twice');
    assertChiSquare(counts(first, 4), p.map((x) => x * R), 'first pick');
    // P(second = j) = sum over i != j of p_i p_j / (1 - p_i)
    const p2 = p.map((pj, j) => p.reduce((acc, pi, i) => acc + (i === j ? 0 : pi * pj / (1 - pi)), 0));
    assertChiSquare(counts(second, 4), p2.map((x) => x * R), 'second pick');
    const all = seeded(30, () => kd.multinomial(kd.rand([100, 7]).add(0.01), 7));
    for (let r = 0; r < 100; r++) assert.deepStrictEqual(values(all.select(0, r)).sort(), [0, 1, 2, 3, 4, 5, 6]);
    const onlyTwo = values(seeded(31, () => kd.multinomial(kd.tensor([0, 1, 1, 0], { dtype: 'float32' }), 2))).sort();
    assert.deepStrictEqual(onlyTwo, [1, 2]);
  });

  it('randperm: permutations, large ones too, and a uniform position of each value', function () {
    for (const n of [1, 2, 1000, 70001]) {
      const v = values(seeded(32, () => kd.randperm(n)));
      assert.deepStrictEqual(Float64Array.from(v).sort(), Float64Array.from({ length: n }, (_, i) => i), `randperm(${n})`);
    }
    kd.manualSeed(33);
    const where = new Array(5).fill(0);
    for (let k = 0; k < 4000; k++) where[values(kd.randperm(5)).indexOf(0)]++;
    assertChiSquare(where, new Array(5).fill(800), 'position of 0 in randperm(5)');
    for (const dtype of ['int32', 'int16', 'float32', 'float64', 'bfloat16', 'uint8']) {
      const t = seeded(34, () => kd.randperm(200, { dtype }));
      assert.strictEqual(t.dtype, dtype);
      assert.deepStrictEqual(values(t), values(seeded(34, () => kd.randperm(200))), dtype);
    }
    assert.deepStrictEqual(kd.randperm(0).shape, [0]);
  });

  it('normal(mean, std) tensor overloads: the moments of each column', function () {
    const t = seeded(35, () => kd.normal(kd.tensor([0, 10], { dtype: 'float64' }), kd.tensor([[1, 0.1]], { dtype: 'float64' }).expand([50000, 2])));
    assert.deepStrictEqual(t.shape, [50000, 2]);
    assertMoments(values(t.select(1, 0)), 0, 1, 3, 'column 0');
    assertMoments(values(t.select(1, 1)), 10, 0.01, 3e-4, 'column 1');
  });
});

describe('random ops: layouts, threads, in-place semantics', function () {
  let threads0;
  before(function () { threads0 = kd.getNumThreads(); });
  after(function () { kd.setNumThreads(threads0); });

  it('a non-contiguous self gets the draws of its logical (row-major) order, and nothing else is written', function () {
    const base = kd.zeros([40, 30]);
    const t = base.t();
    seeded(40, () => t.uniform_());
    assert.deepStrictEqual(values(t.contiguous()), values(seeded(40, () => kd.rand([30, 40]))));
    const strided = kd.full([10, 9], -1, { dtype: 'int64' });
    const view = strided.slice(1, 0, 9, 3); // columns 0, 3, 6
    seeded(41, () => view.random_(0, 1000));
    assert.deepStrictEqual(values(view.contiguous()), values(seeded(41, () => kd.randint(0, 1000, [10, 3]))));
    const rest = values(strided).filter((_, i) => i % 3 !== 0);
    assert.ok(rest.every((x) => x === -1), 'elements outside the view were written');
    const bt = kd.zeros([3, 4]).t();
    seeded(42, () => bt.bernoulli_(kd.full([4, 3], 0.5)));
    assert.deepStrictEqual(values(bt.contiguous()), values(seeded(42, () => kd.empty([4, 3]).bernoulli_(kd.full([4, 3], 0.5)))));
  });

  it('the same numbers whatever the thread count (inputs beyond the parallel grain)', function () {
    const draw = () => {
      kd.manualSeed(2024);
      return [kd.empty([100003]).uniform_(), kd.empty([100003], { dtype: 'float64' }).normal_(), kd.empty([70001]).exponential_(),
        kd.empty([70001], { dtype: 'int32' }).geometric_(0.1), kd.poisson(kd.full([40001], 12.5)), kd.empty([70001], { dtype: 'int64' }).random_(),
        kd.randperm(50001), kd.multinomial(kd.rand([300, 200]), 50, true), kd.multinomial(kd.rand([300, 200]), 50)].map(values);
    };
    kd.setNumThreads(1);
    const one = draw();
    kd.setNumThreads(4);
    const four = draw();
    one.forEach((a, i) => assert.ok(a.every((x, j) => Object.is(x, four[i][j])), `draw ${i}: 1 vs 4 threads differ`));
  });

  it('in-place fillers return self and bump its version', function () {
    const t = kd.zeros([5]);
    for (const f of [(x) => x.uniform_(), (x) => x.normal_(), (x) => x.bernoulli_(0.5), (x) => x.bernoulli_(kd.full([5], 0.5)),
      (x) => x.exponential_(), (x) => x.random_(), (x) => x.random_(4), (x) => x.random_(1, 4), (x) => x.geometric_(0.5),
      (x) => x.cauchy_(), (x) => x.logNormal_()]) {
      const v = t.version;
      assert.strictEqual(f(t), t);
      assert.ok(t.version > v, 'version not bumped');
    }
  });

  it('empty tensors', function () {
    for (const f of [(x) => x.uniform_(), (x) => x.normal_(), (x) => x.bernoulli_(0.5), (x) => x.exponential_(), (x) => x.random_(),
      (x) => x.geometric_(0.5), (x) => x.cauchy_(), (x) => x.logNormal_()]) {
      assert.deepStrictEqual(f(kd.empty([0, 3])).shape, [0, 3]);
    }
    assert.deepStrictEqual(kd.poisson(kd.empty([2, 0])).shape, [2, 0]);
    assert.deepStrictEqual(kd.bernoulli(kd.empty([0])).shape, [0]);
    assert.deepStrictEqual(kd.multinomial(kd.empty([0, 4]), 3, true).shape, [0, 3]);
    assert.deepStrictEqual(kd.normal(kd.empty([0]), kd.empty([0])).shape, [0]);
  });

  it('a failed bernoulli_(p tensor) leaves self untouched', function () {
    const t = kd.full([4], 7);
    expectKdError(() => t.bernoulli_(kd.tensor([0.5, 0.5, 2, 0.5])), 'KD_INVALID_ARGUMENT');
    assert.deepStrictEqual(values(t), [7, 7, 7, 7]);
  });
});

describe('random ops: gradients (as derivatives.yaml)', function () {
  it('normal: zero gradients for mean and std (every overload)', function () {
    const mean = kd.randn([4, 3], { dtype: 'float64' }).requiresGrad_(), std = kd.rand([3], { dtype: 'float64' }).requiresGrad_();
    kd.normal(mean, std).mul(3).sum().backward();
    assert.deepStrictEqual(values(mean.grad), new Array(12).fill(0));
    assert.deepStrictEqual(values(std.grad), [0, 0, 0]);
    const m2 = kd.zeros([3]).requiresGrad_();
    const y = kd.normal(m2, 2);
    assert.ok(y.requiresGrad);
    y.sum().backward();
    assert.deepStrictEqual(values(m2.grad), [0, 0, 0]);
    const s2 = kd.ones([3]).requiresGrad_();
    kd.normal(1, s2).sum().backward();
    assert.deepStrictEqual(values(s2.grad), [0, 0, 0]);
  });

  it('the fillers give self a zero gradient; bernoulli_ its p too', function () {
    for (const f of [(y) => y.uniform_(), (y) => y.normal_(), (y) => y.exponential_(), (y) => y.cauchy_(), (y) => y.logNormal_(),
      (y) => y.geometric_(0.5), (y) => y.random_(0, 3), (y) => y.bernoulli_(0.5)]) {
      const x = kd.ones([3]).requiresGrad_();
      const y = x.mul(2);
      f(y);
      y.sum().backward();
      assert.deepStrictEqual(values(x.grad), [0, 0, 0]);
    }
    const p = kd.full([3], 0.5).requiresGrad_(), x = kd.ones([3]).requiresGrad_();
    const y = x.mul(1);
    y.bernoulli_(p);
    y.sum().backward();
    assert.deepStrictEqual(values(p.grad), [0, 0, 0]);
    assert.deepStrictEqual(values(x.grad), [0, 0, 0]);
  });

  it('bernoulli and poisson: zero gradients; bernoulli(self, {p}) and multinomial do not require grad', function () {
    const p = kd.full([3], 0.5).requiresGrad_();
    kd.bernoulli(p).sum().backward();
    assert.deepStrictEqual(values(p.grad), [0, 0, 0]);
    const r = kd.full([3], 2.5).requiresGrad_();
    kd.poisson(r).sum().backward();
    assert.deepStrictEqual(values(r.grad), [0, 0, 0]);
    assert.strictEqual(kd.bernoulli(p, { p: 0.3 }).requiresGrad, false);
    assert.strictEqual(kd.multinomial(p, 2).requiresGrad, false);
  });

  it('a filler on a leaf that requires grad is refused, as any in-place op', function () {
    expectKdError(() => kd.ones([2]).requiresGrad_().uniform_(), ['KD_INVALID_ARGUMENT']);
  });
});
