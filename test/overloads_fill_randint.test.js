// overloads_fill_randint.test.js - two PyTorch call forms that ported programs use:
// kd.randint(high, size) (PyTorch's first randint overload, low = 0; word_language_model's
// generate.py draws its first word with it) and t.fill_(value) with a 0-d Tensor value
// (PyTorch's fill_.Tensor; generate.py feeds the sampled word back with it): values, dtypes,
// devices, value's gradient (the sum of the filled tensor's gradient) and PyTorch's errors.
'use strict';

const assert = require('node:assert/strict');
const kd = require('..');
const { expectKdError } = require('./helpers');

describe('randint(high, size) and fill_(Tensor)', function () {
  it('randint(high, size) draws from [0, high) as randint(0, high, size), with dtype, device and requiresGrad options', function () {
    kd.manualSeed(7);
    const a = kd.randint(5, [400]);
    kd.manualSeed(7);
    const b = kd.randint(0, 5, [400]);
    assert.equal(a.dtype, 'int64');
    assert.deepEqual(a.shape, [400]);
    assert.deepEqual(a.arraySync(), b.arraySync(), 'the same stream as randint(0, high, size)');
    const seen = new Set(a.arraySync());
    assert.deepEqual([...seen].sort(), [0, 1, 2, 3, 4]);
    assert.equal(kd.randint(3, [2, 2], { dtype: 'int32' }).dtype, 'int32');
    assert.deepEqual(kd.randint(3, new Int32Array([2, 3])).shape, [2, 3]);
    const f = kd.randint(4, [3], { dtype: 'float32', requiresGrad: true });
    assert.equal(f.requiresGrad, true);
    // the three-argument form is unchanged
    const c = kd.randint(-3, 4, [50]).arraySync();
    assert.ok(c.every((v) => v >= -3 && v < 4));
  });

  it('randint(high, size) gives PyTorch\'s errors', function () {
    // torch.randint(0, (2,)): random_ expects 'from' to be less than 'to', but got from=0 >= to=0
    expectKdError(() => kd.randint(0, [2]), 'KD_INVALID_ARGUMENT');
    expectKdError(() => kd.randint(5), ['KD_INVALID_TYPE', 'KD_INVALID_ARGUMENT']);
    expectKdError(() => kd.randint(2.5, [2]), ['KD_INVALID_TYPE', 'KD_INVALID_ARGUMENT']);
  });

  it('fill_(0-d Tensor) fills with its value, cast to the tensor\'s dtype, and returns the tensor', function () {
    const a = kd.zeros(2, 3);
    assert.equal(a.fill_(kd.tensor(2.5)), a);
    assert.deepEqual(a.arraySync(), [[2.5, 2.5, 2.5], [2.5, 2.5, 2.5]]);
    // torch.zeros(2, dtype=torch.long).fill_(torch.tensor(7.9)) -> tensor([7, 7])
    const b = kd.zeros([2], { dtype: 'int64' });
    b.fill_(kd.tensor(7.9));
    assert.deepEqual(b.arraySync(), [7, 7]);
    const c = kd.zeros([3], { dtype: 'float64' }).fill_(kd.tensor(4, { dtype: 'int64' }));
    assert.equal(c.dtype, 'float64');
    assert.deepEqual(c.arraySync(), [4, 4, 4]);
    // a view: only its elements change
    const base = kd.zeros(2, 2);
    base.select(0, 1).fill_(kd.tensor(1));
    assert.deepEqual(base.arraySync(), [[0, 0], [1, 1]]);
    // scalars still take the fast path
    assert.deepEqual(kd.zeros(2).fill_(3).arraySync(), [3, 3]);
  });

  it('fill_(Tensor) passes the gradient to value: the sum of the filled tensor\'s gradient', function () {
    // torch: v = tensor(3., requires_grad=True); (zeros(2, 3).fill_(v) * arange(6).view(2, 3)).sum().backward(); v.grad == 15
    const v = kd.tensor(3.0, { requiresGrad: true });
    const filled = kd.zeros(2, 3).fill_(v);
    assert.equal(filled.requiresGrad, true);
    filled.mul(kd.arange(6).view(2, 3)).sum().backward();
    assert.equal(v.grad.item(), 15);
  });

  it('on CUDA: randint(high, size, {device}) and fill_ of a CUDA tensor with a CPU or CUDA 0-d value', function () {
    if (!kd.cuda.isAvailable()) this.skip();
    const r = kd.randint(6, [300], { device: 'cuda' });
    assert.equal(r.device, 'cuda:0');
    assert.ok(r.cpu().arraySync().every((v) => v >= 0 && v < 6));
    const a = kd.zeros([2, 2], { device: 'cuda' });
    a.fill_(kd.tensor(1.5));
    assert.deepEqual(a.cpu().arraySync(), [[1.5, 1.5], [1.5, 1.5]]);
    a.fill_(kd.tensor(-2, { device: 'cuda' }));
    assert.deepEqual(a.cpu().arraySync(), [[-2, -2], [-2, -2]]);
  });

  it('fill_(Tensor) with a value of more than 0 dims is PyTorch\'s error', function () {
    const err = expectKdError(() => kd.zeros(2).fill_(kd.ones(2)), 'KD_INVALID_ARGUMENT');
    assert.match(err.message, /fill_ only supports 0-dimension value tensor but got tensor with 1 dimensions/);
    expectKdError(() => kd.zeros(2).fill_(kd.tensor(1), 2), 'KD_INVALID_TYPE');
  });
});
