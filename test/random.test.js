// random.test.js - Philox random numbers: manualSeed reproducibility, rand in [0, 1) with the
// right moments, randn mean/std over 1e5 samples, randint ranges, *Like variants, and the same
// numbers whatever the CPU thread count (kd.setNumThreads).
'use strict';

const { kd, assert, values, expectKdError } = require('./helpers');

function moments(v) {
  let s = 0;
  for (const x of v) s += x;
  const mean = s / v.length;
  let q = 0;
  for (const x of v) q += (x - mean) * (x - mean);
  return { mean, std: Math.sqrt(q / (v.length - 1)) };
}

describe('random', function () {
  let threads0;
  before(function () { threads0 = kd.getNumThreads(); });
  after(function () { kd.setNumThreads(threads0); });

  it('manualSeed makes rand/randn/randint reproducible', function () {
    for (const fn of [() => kd.rand([1000]), () => kd.randn([1000]), () => kd.randint(0, 1000, [1000]),
      () => kd.rand([37], { dtype: 'float64' }), () => kd.randn([5, 7], { dtype: 'float64' })]) {
      kd.manualSeed(1234);
      const a = values(fn());
      kd.manualSeed(1234);
      const b = values(fn());
      assert.deepEqual(a, b);
    }
  });

  it('the stream advances and seeds differ', function () {
    kd.manualSeed(1);
    const a = values(kd.rand([64]));
    const b = values(kd.rand([64]));
    assert.notDeepEqual(a, b, 'two draws after one seed differ');
    kd.manualSeed(2);
    const c = values(kd.rand([64]));
    assert.notDeepEqual(a, c, 'different seeds differ');
    assert.equal(new Set(a).size, 64, 'no repeats in 64 uniform floats');
  });

  it('initialSeed reports the seed', function () {
    kd.manualSeed(987654321);
    assert.equal(Number(kd.initialSeed()), 987654321);
  });

  it('large seeds (beyond 2^32, BigInt) are accepted and distinct', function () {
    kd.manualSeed(2 ** 40 + 1);
    const a = values(kd.rand([8]));
    kd.manualSeed(1);
    const b = values(kd.rand([8]));
    assert.notDeepEqual(a, b, 'seed 2^40+1 must not alias seed 1');
    kd.manualSeed(2n ** 40n + 1n);
    assert.deepEqual(values(kd.rand([8])), a, 'BigInt seed equals the same Number seed');
    expectKdError(() => kd.manualSeed(-1.5), ['KD_INVALID_TYPE', 'KD_INVALID_ARGUMENT']);
  });

  it('rand: uniform on [0, 1) with mean 1/2 and std 1/sqrt(12)', function () {
    kd.manualSeed(7);
    for (const dtype of ['float32', 'float64', 'float16', 'bfloat16']) {
      const v = values(kd.rand([100000], { dtype }));
      assert.ok(v.every((x) => x >= 0 && x < 1), `${dtype}: value outside [0, 1)`);
      const { mean, std } = moments(v);
      assert.ok(Math.abs(mean - 0.5) < 0.01, `${dtype} mean ${mean}`);
      assert.ok(Math.abs(std - 1 / Math.sqrt(12)) < 0.01, `${dtype} std ${std}`);
      // uniformity: 10 bins each within 5% of 10000
      const bins = new Array(10).fill(0);
      for (const x of v) bins[Math.floor(x * 10)]++;
      assert.ok(bins.every((n) => Math.abs(n - 10000) < 500), `${dtype} bins ${bins}`);
    }
  });

  it('randn: mean 0, std 1, symmetric tails over 1e5 samples', function () {
    kd.manualSeed(11);
    for (const dtype of ['float32', 'float64']) {
      const v = values(kd.randn([100000], { dtype }));
      assert.ok(v.every(Number.isFinite));
      const { mean, std } = moments(v);
      assert.ok(Math.abs(mean) < 0.015, `${dtype} mean ${mean}`);
      assert.ok(Math.abs(std - 1) < 0.015, `${dtype} std ${std}`);
      const beyond2 = v.filter((x) => Math.abs(x) > 2).length / v.length; // 4.55%
      assert.ok(Math.abs(beyond2 - 0.0455) < 0.004, `${dtype} P(|x|>2) = ${beyond2}`);
      const neg = v.filter((x) => x < 0).length / v.length;
      assert.ok(Math.abs(neg - 0.5) < 0.01, `${dtype} P(x<0) = ${neg}`);
    }
  });

  it('randn of an odd count and of shapes', function () {
    kd.manualSeed(3);
    const t = kd.randn([3, 5, 7]);
    assert.deepEqual(t.shape, [3, 5, 7]);
    const v = values(t);
    assert.equal(new Set(v).size, v.length);
    assert.deepEqual(kd.randn([0]).shape, [0]);
    assert.deepEqual(kd.rand([]).shape, []);
  });

  it('randint: inclusive low, exclusive high, every value hit, dtype option', function () {
    kd.manualSeed(5);
    const v = values(kd.randint(-5, 5, [100000]));
    assert.ok(v.every((x) => Number.isInteger(x) && x >= -5 && x < 5));
    const counts = new Map();
    for (const x of v) counts.set(x, (counts.get(x) || 0) + 1);
    assert.equal(counts.size, 10);
    for (const [k, n] of counts) assert.ok(Math.abs(n - 10000) < 600, `value ${k}: ${n}`);
    const u = kd.randint(0, 256, [5000], { dtype: 'uint8' });
    assert.equal(u.dtype, 'uint8');
    assert.ok(values(u).includes(255));
    const big = values(kd.randint(0, 2 ** 40, [1000]));
    assert.ok(big.some((x) => x > 2 ** 32), 'randint covers ranges beyond 32 bits');
    expectKdError(() => kd.randint(3, 1, [2]), 'KD_INVALID_ARGUMENT');
  });

  it('same numbers regardless of the thread count', function () {
    const draw = () => {
      kd.manualSeed(2024);
      return [values(kd.rand([300001])), values(kd.randn([200003])), values(kd.randint(0, 100, [100001]))];
    };
    kd.setNumThreads(1);
    assert.equal(kd.getNumThreads(), 1);
    const one = draw();
    kd.setNumThreads(4);
    assert.equal(kd.getNumThreads(), 4);
    const four = draw();
    kd.setNumThreads(3);
    const three = draw();
    for (let i = 0; i < 3; i++) {
      assert.ok(one[i].every((x, j) => x === four[i][j]), `draw ${i}: 1 vs 4 threads differ`);
      assert.ok(one[i].every((x, j) => x === three[i][j]), `draw ${i}: 1 vs 3 threads differ`);
    }
  });

  it('*Like variants follow the seed too', function () {
    const like = kd.zeros([4, 4], { dtype: 'float64' });
    kd.manualSeed(9);
    const a = values(kd.randnLike(like));
    kd.manualSeed(9);
    const b = values(kd.randn([4, 4], { dtype: 'float64' }));
    assert.deepEqual(a, b, 'randnLike(x) == randn(x.shape) for the same seed');
    assert.equal(kd.randLike(like).dtype, 'float64');
  });

  it('rand of an integer dtype is an error', function () {
    expectKdError(() => kd.rand([2], { dtype: 'int32' }), ['KD_NOT_SUPPORTED', 'KD_DTYPE_MISMATCH', 'KD_INVALID_ARGUMENT']);
    expectKdError(() => kd.randn([2], { dtype: 'int64' }), ['KD_NOT_SUPPORTED', 'KD_DTYPE_MISMATCH', 'KD_INVALID_ARGUMENT']);
  });
});
