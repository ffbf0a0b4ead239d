// dtypes.test.js - dtype strings: PyTorch's aliases are accepted wherever a dtype is (kd.tensor,
// the factories' and ops' dtype options, Tensor#to, Module#to, autocast), an unknown name is an
// "unknown dtype" error listing the valid ones, and kd.tensor(number, {requiresGrad: true})
// infers float32 as torch.tensor(2., requires_grad=True) does.
'use strict';

const { kd, assert, values, expectKdError } = require('./helpers');

// torch 1.13: torch.float is torch.float32, torch.double is torch.float64, torch.half is
// torch.float16, torch.long is torch.int64, torch.int is torch.int32, torch.short is torch.int16
const ALIASES = { float: 'float32', double: 'float64', half: 'float16', long: 'int64', int: 'int32', short: 'int16' };
const NAMES = Object.fromEntries([...kd.dtypes.map((d) => [d, d]), ...Object.entries(ALIASES)]);
const FLOATING = new Set(['float32', 'float64', 'float16', 'bfloat16']);
const UNKNOWN = /unknown dtype '(.*)'; expected one of float32, float64, float16, bfloat16, int8, uint8, int16, int32, int64, bool/;

describe('dtype names', function () {
  for (const [name, dtype] of Object.entries(NAMES)) {
    it(`'${name}' is ${dtype} everywhere a dtype is accepted`, function () {
      const x = kd.tensor([1, 0, 3], { dtype: 'float64' });
      assert.equal(x.to(name).dtype, dtype, 'to(name)');
      assert.equal(x.to(name, { copy: true }).dtype, dtype, 'to(name, options)');
      assert.equal(x.to({ dtype: name }).dtype, dtype, 'to({dtype})');
      assert.equal(x.to({ dtype: name, device: 'cpu' }).dtype, dtype, 'to({dtype, device})');
      assert.equal(kd.zeros([2], { dtype: name }).dtype, dtype, 'zeros');
      if (dtype !== 'bool') assert.equal(kd.arange(3, { dtype: name }).dtype, dtype, 'arange'); // torch: not for Bool
      assert.equal(kd.onesLike(x, { dtype: name }).dtype, dtype, 'onesLike');
      const t = kd.tensor([1, 0, 3], { dtype: name });
      assert.equal(t.dtype, dtype, 'tensor');
      assert.deepEqual(values(t), dtype === 'bool' ? [true, false, true] : [1, 0, 3]);
      assert.equal(kd.tensor(t, { dtype: name }).dtype, dtype, 'tensor(Tensor)');
      if (dtype !== 'bool') assert.equal(x.sum({ dtype: name }).dtype, dtype, 'sum({dtype})');
    });
  }

  it('Module#to and autocast take the aliases of floating dtypes', function () {
    const lin = new kd.nn.Linear(2, 2);
    assert.equal(lin.to('double').weight.dtype, 'float64');
    assert.equal(lin.to({ dtype: 'half' }).weight.dtype, 'float16');
    assert.equal(lin.to('float').bias.dtype, 'float32');
    expectKdError(() => lin.to('long'), 'KD_INVALID_TYPE'); // PyTorch: only floating point dtypes
    assert.equal(kd.autocast({ deviceType: 'cuda', dtype: 'half' }, () => kd.getAutocastDtype('cuda')), 'float16');
  });

  it("an unknown name is an unknown dtype, with the valid ones: t.to('float128'), zeros({dtype: 'cfloat'})", function () {
    const x = kd.ones([2]);
    for (const name of ['float128', 'cfloat', 'Float32', 'gpu', 'float32 ', 'float\u0000', '']) {
      const e = expectKdError(() => x.to(name), 'KD_INVALID_TYPE', `to(${JSON.stringify(name)})`);
      assert.match(e.message, UNKNOWN);
      assert.equal(e.message.match(UNKNOWN)[1], name);
      assert.match(e.message, /^to\(\): /);
    }
    assert.match(expectKdError(() => kd.zeros([2], { dtype: 'float128' }), 'KD_INVALID_TYPE').message,
      /^zeros\(\): unknown dtype 'float128'; expected one of float32, .*, bool$/);
    assert.match(expectKdError(() => x.to({ dtype: 'cfloat' }), 'KD_INVALID_TYPE').message, UNKNOWN);
    assert.match(expectKdError(() => x.sum({ dtype: 'complex64' }), 'KD_INVALID_TYPE').message, UNKNOWN);
    assert.match(expectKdError(() => kd.tensor([1], { dtype: 'float128' }), 'KD_INVALID_TYPE').message, /^tensor\(\): unknown dtype 'float128'/);
    assert.match(expectKdError(() => kd.tensor([1], { dtype: 5 }), 'KD_INVALID_TYPE').message, /dtype must be a string/);
    assert.match(expectKdError(() => new kd.nn.Linear(1, 1).to('float128'), 'KD_INVALID_TYPE').message, UNKNOWN);
    assert.match(expectKdError(() => kd.autocast({ deviceType: 'cpu', dtype: 'float128' }, () => 0), 'KD_INVALID_TYPE').message, UNKNOWN);
  });

  it('device strings still go to the device parser', function () {
    const x = kd.ones([2]);
    assert.equal(x.to('cpu'), x);
    assert.match(expectKdError(() => x.to('cuda:x'), 'KD_INVALID_ARGUMENT').message, /Invalid device string: 'cuda:x'/);
    if (!kd.cuda.isAvailable()) expectKdError(() => x.to('cuda:1'), 'KD_CUDA_UNAVAILABLE');
  });
});

describe('kd.tensor dtype inference with requiresGrad', function () {
  it('numbers with requiresGrad and no dtype are float32, as torch.tensor(2., requires_grad=True)', function () {
    const x = kd.tensor(2.0, { requiresGrad: true });
    assert.equal(x.dtype, 'float32');
    assert.equal(x.requiresGrad, true);
    x.mul(x).backward();
    assert.equal(x.grad.item(), 4); // d(x*x)/dx at 2
    const v = kd.tensor([[1, 2], [3, 4]], { requiresGrad: true });
    assert.equal(v.dtype, 'float32');
    assert.deepEqual(v.shape, [2, 2]);
    assert.equal(kd.tensor([true, 2], { requiresGrad: true }).dtype, 'float32');
    assert.equal(kd.tensor([1, 2], { requiresGrad: true, dtype: 'float64' }).dtype, 'float64');
  });

  it('without requiresGrad inference is PyTorch\'s; explicit integer kinds still cannot require grad', function () {
    assert.equal(kd.tensor(2.0).dtype, 'int64');
    assert.equal(kd.tensor([1, 2], { requiresGrad: false }).dtype, 'int64');
    assert.equal(kd.tensor([1.5], { requiresGrad: true }).dtype, 'float32');
    // torch.tensor([True], requires_grad=True) and int tensors raise "Only Tensors of floating point ..."
    for (const make of [() => kd.tensor([true], { requiresGrad: true }), () => kd.tensor([1n], { requiresGrad: true }),
      () => kd.tensor(new Int32Array(2), { requiresGrad: true }), () => kd.tensor([1], { requiresGrad: true, dtype: 'long' })]) {
      assert.match(expectKdError(make).message, /only Tensors of floating point and complex dtype can require gradients/);
    }
  });
});
