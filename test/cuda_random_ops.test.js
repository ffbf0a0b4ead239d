// cuda_random_ops.test.js - the random ops on CUDA draw the CPU's numbers for the same seed
// (Note [Random distributions] in src/core/random.h): uniform, bernoulli and integer draws, the
// running sums of multinomial with replacement and the sort orders of randperm and multinomial
// without replacement bit for bit; draws through log/exp/tan/lgamma within the ulps of CUDA's
// double functions (exact on the emulated GPU, which uses the host's libm). Errors found on the
// device (bernoulli probabilities, poisson rates, multinomial rows) are thrown as on the CPU.
// Skipped, with the reason printed, when kd.cuda.isAvailable() is false.
'use strict';

const { kd, assert, expectKdError } = require('./helpers');

describe('CUDA random ops: the CPU\'s numbers for the same seed', function () {
  before(function () {
    if (!kd.cuda.isAvailable()) {
      console.log(`    (skipped: CUDA is not available: ${kd.cuda.unavailableReason()})`);
      this.skip();
    }
  });

  const same = (c, g, tol = 0, what = '') => {
    assert.deepStrictEqual(g.shape, c.shape, `${what}: shape`);
    assert.strictEqual(g.dtype, c.dtype, `${what}: dtype`);
    assert.ok(g.device.startsWith('cuda'), `${what}: on ${g.device}`);
    const x = c.dataSync(), y = g.cpu().dataSync();
    for (let i = 0; i < x.length; i++) {
      const a = Number(x[i]), b = Number(y[i]);
      const ok = tol === 0 ? Object.is(a, b) || x[i] === y[i] : Object.is(a, b) || Math.abs(a - b) <= tol * (1 + Math.abs(a));
      if (!ok) assert.fail(`${what} element ${i}: cpu ${x[i]} cuda ${y[i]}`);
    }
  };
  const both = (fn, tol = 0, what = '') => {
    kd.manualSeed(4321);
    const c = fn('cpu');
    kd.manualSeed(4321);
    const g = fn('cuda');
    same(c, g, tol, what);
    return [c, g];
  };
  // a non-contiguous self on each device (the draws follow its logical order)
  const self = (device, dtype, shape = [37, 29]) => kd.zeros([shape[1], shape[0]], { dtype, device }).t();
  const TOL = { float64: 1e-15, float32: 3e-7, float16: 1e-3, bfloat16: 8e-3 };

  for (const dtype of ['float32', 'float64', 'float16', 'bfloat16']) {
    it(`${dtype}: uniform_, bernoulli_ exactly; normal_, logNormal_, exponential_, cauchy_ to the ulp`, function () {
      both((d) => self(d, dtype).uniform_(-3, 5), 0, 'uniform_');
      both((d) => self(d, dtype).bernoulli_(0.3), 0, 'bernoulli_');
      both((d) => self(d, dtype).random_(0, 100), 0, 'random_');
      both((d) => self(d, dtype).normal_(1, 2), TOL[dtype], 'normal_');
      both((d) => self(d, dtype).logNormal_(0.1, 0.5), TOL[dtype], 'logNormal_');
      both((d) => self(d, dtype).exponential_(3), TOL[dtype], 'exponential_');
      both((d) => self(d, dtype).cauchy_(0, 0.01), TOL[dtype], 'cauchy_');
      both((d) => self(d, dtype).geometric_(0.2), 0, 'geometric_');
    });
  }
  for (const dtype of ['int64', 'int32', 'int16', 'int8', 'uint8', 'bool']) {
    it(`${dtype}: random_ (bounded, default and full ranges), bernoulli_, geometric_`, function () {
      both((d) => self(d, dtype).random_(), 0, 'random_()');
      both((d) => self(d, dtype).random_(0, 2), 0, 'random_(0, 2)');
      both((d) => self(d, dtype).bernoulli_(0.6), 0, 'bernoulli_');
      if (dtype !== 'bool') both((d) => self(d, dtype).geometric_(0.4), 0, 'geometric_');
    });
  }
  it('random_ over the whole int64 range', function () {
    both((d) => kd.empty([1001], { dtype: 'int64', device: d }).random_(-(2n ** 63n), null), 0);
  });
  it('bernoulli_ with a tensor of probabilities (broadcast), bernoulli(probabilities), bernoulli(self, {p})', function () {
    const p = kd.rand([29]);
    both((d) => self(d, 'float32').bernoulli_(p.to(d)), 0, 'bernoulli_(p)');
    both((d) => kd.bernoulli(p.to('float64').expand([5, 29]).to(d)), 0, 'bernoulli');
    both((d) => kd.bernoulli(kd.zeros([300], { device: d }), { p: 0.7 }), 0, 'bernoulli p');
  });
  it('poisson: both samplers (rates below and above 10)', function () {
    const rates = kd.linspace(0, 60, 3000, { dtype: 'float64' });
    both((d) => kd.poisson(rates.to(d)), 0, 'float64');
    both((d) => kd.poisson(rates.to('float32').to(d)), 0, 'float32');
  });
  it('normal: every overload', function () {
    const mean = kd.randn([7, 11]), std = kd.rand([11]);
    both((d) => kd.normal(mean.to(d), std.to(d)), 3e-7, 'Tensor_Tensor');
    both((d) => kd.normal(mean.to(d), 2), 3e-7, 'Tensor_float');
    both((d) => kd.normal(-1, std.to(d)), 3e-7, 'float_Tensor');
    both((d) => kd.normal(3, 0.5, [1000], { device: d, dtype: 'float64' }), 1e-15, 'float_float');
  });
  it('randperm: the same permutation (the device sort of the same keys), every dtype', function () {
    for (const n of [0, 1, 10, 4097]) both((d) => kd.randperm(n, { device: d }), 0, `randperm(${n})`);
    for (const dtype of ['int32', 'float32', 'float16']) both((d) => kd.randperm(1000, { device: d, dtype }), 0, dtype);
  });
  it('multinomial with and without replacement, 1-D and 2-D', function () {
    const probs = kd.rand([13, 50]).mul(kd.rand([13, 50]).gt(0.3));
    both((d) => kd.multinomial(probs.to(d), 200, true), 0, '2-D with replacement');
    both((d) => kd.multinomial(probs.to(d), 1, true), 0, 'one sample');
    both((d) => kd.multinomial(probs.select(0, 2).to(d), 300, true), 0, '1-D with replacement');
    both((d) => kd.multinomial(kd.rand([13, 50], { dtype: 'float64' }).to(d), 50), 0, 'all categories');
    both((d) => kd.multinomial(probs.to(d).t().contiguous().t(), 5), 0, 'non-contiguous rows');
  });
  it('errors found on the device are thrown as on the CPU; the failed in-place op leaves self untouched', function () {
    const t = kd.full([3], 7, { device: 'cuda', dtype: 'float32' });
    expectKdError(() => t.bernoulli_(kd.tensor([0.5, 2, 0.5], { device: 'cuda' })), 'KD_INVALID_ARGUMENT');
    assert.deepStrictEqual(Array.from(t.cpu().dataSync()), [7, 7, 7]);
    expectKdError(() => kd.poisson(kd.tensor([1, -1], { device: 'cuda', dtype: 'float32' })), 'KD_INVALID_ARGUMENT');
    const bad = [[[0.5, -1], /element < 0/], [[0.5, Infinity], /inf/], [[0, 0], /sum of probabilities/]];
    for (const [p, re] of bad) {
      const e = expectKdError(() => kd.multinomial(kd.tensor(p, { device: 'cuda', dtype: 'float32' }), 1), 'KD_INVALID_ARGUMENT');
      assert.match(e.message, re);
    }
    const e = expectKdError(() => kd.multinomial(kd.tensor([[1, 0], [0.5, Infinity]], { device: 'cuda' }), 2, true), 'KD_INVALID_ARGUMENT');
    assert.match(e.message, /infinity or NaN/);
  });
});
