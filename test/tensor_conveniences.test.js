// tensor_conveniences.test.js - PyTorch's Tensor conveniences: the `t.data` property and its
// setter (set_data), and the small methods ported programs use (tolist, viewAs, newZeros, the
// dtype shorthands, type(), the legacy constructors kd.FloatTensor and friends).
'use strict';

const { kd, assert } = require('./helpers');

const vals = (t) => Array.from(t.dataSync(), Number);

describe('t.data', function () {
  it('is a tensor sharing the storage, outside autograd', function () {
    const p = kd.tensor([1, 2, 3], { requiresGrad: true });
    const d = p.data;
    assert.ok(d instanceof kd.Tensor);
    assert.equal(d.requiresGrad, false);
    assert.equal(d.gradFn, null);
    assert.ok(p.requiresGrad, 'the source keeps requiring grad');
    d.mul_(2); // in place on .data, not recorded
    assert.deepEqual(vals(p), [2, 4, 6]);
    assert.equal(p.gradFn, null, 'p stays a leaf');
    p.data.normal_(0, 0.1);
    assert.ok(vals(p).every((v) => Math.abs(v) < 1));
  });

  it('works as a value: h = h.data, kd.max(out.data, 1)', function () {
    const x = kd.tensor([[1, 5, 2], [7, 0, 3]], { requiresGrad: true });
    const out = x.mul(2);
    const [v, i] = kd.max(out.data, 1);
    assert.deepEqual(vals(v), [10, 14]);
    assert.deepEqual(vals(i).map(Number), [1, 0]);
    let h = out;
    h = h.data;
    assert.equal(h.requiresGrad, false);
    assert.deepEqual(h.shape, [2, 3]);
  });

  it('p.data = t swaps the storage, shape and dtype and keeps the autograd state', function () {
    const p = new kd.nn.Parameter(kd.zeros(2, 2));
    const opt = new kd.optim.SGD([p], { lr: 0.5 });
    const t = kd.tensor([1, 2, 3], { dtype: 'float64' });
    p.data = t;
    assert.deepEqual(p.shape, [3]);
    assert.equal(p.dtype, 'float64');
    assert.ok(p.requiresGrad);
    assert.ok(p instanceof kd.nn.Parameter);
    t.add_(1); // shares t's storage now
    assert.deepEqual(vals(p), [2, 3, 4]);
    // autograd and the optimizer see the new data through the same object
    p.mul(p).sum().backward();
    assert.deepEqual(p.grad.shape, [3]);
    assert.deepEqual(vals(p.grad), [4, 6, 8]);
    opt.step();
    assert.deepEqual(vals(p), [0, 0, 0]);
  });

  it('p.data = t with the same shape: gradients keep accumulating into p', function () {
    const p = kd.tensor([1, 2], { requiresGrad: true });
    p.mul(3).sum().backward();
    p.data = kd.tensor([5, 6], { dtype: 'float32' });
    p.mul(p).sum().backward();
    assert.deepEqual(vals(p.grad), [3 + 10, 3 + 12]);
  });

  it('errors as PyTorch: not a tensor, an integer tensor into one that requires grad', function () {
    const p = kd.tensor([1, 2], { requiresGrad: true });
    assert.throws(() => { p.data = [1, 2]; }, (e) => e instanceof TypeError && /Variable data has to be a tensor, but got an array/.test(e.message));
    assert.throws(() => { p.data = kd.tensor([1, 2], { dtype: 'int64' }); },
      (e) => e.code === 'KD_DTYPE_MISMATCH' && /must be floating point/.test(e.message));
    const q = kd.tensor([1, 2]);
    q.data = kd.tensor([true]);
    assert.equal(q.dtype, 'bool');
  });

  it('a view that is given new data stops being a view of its base', function () {
    const base = kd.tensor([1, 2, 3, 4], { requiresGrad: true });
    const v = base.mul(1).narrow(0, 0, 2);
    v.data = kd.tensor([9, 9], { dtype: 'float32' });
    base.data.zero_();
    assert.deepEqual(vals(v), [9, 9]);
  });

  it('the old method form fails: t.data is a Tensor, the async read is dataAsync()', async function () {
    const t = kd.tensor([1.5, 2]);
    assert.equal(typeof t.data, 'object');
    assert.throws(() => t.data(), (e) => e instanceof TypeError && /t\.data is not a function/.test(e.message));
    assert.deepEqual(Array.from(await t.dataAsync()), [1.5, 2]);
  });
});

describe('Tensor conveniences', function () {
  it('tolist: nested arrays, a number for a 0-d tensor, booleans for bool', function () {
    assert.deepEqual(kd.tensor([[1, 2], [3, 4]]).tolist(), [[1, 2], [3, 4]]);
    assert.equal(kd.tensor(3).tolist(), 3);
    assert.deepEqual(kd.tensor([true, false]).tolist(), [true, false]);
  });

  it('viewAs, reshapeAs, typeAs, nelement, ravel, isCuda', function () {
    const a = kd.arange(6);
    assert.deepEqual(a.viewAs(kd.zeros(2, 3)).shape, [2, 3]);
    const t = kd.arange(6).reshape(2, 3).t();
    assert.throws(() => t.viewAs(kd.zeros(6)), /view size is not compatible/);
    assert.deepEqual(vals(t.reshapeAs(kd.zeros(6))), [0, 3, 1, 4, 2, 5]);
    assert.deepEqual(vals(t.ravel()), [0, 3, 1, 4, 2, 5]);
    const f = kd.tensor([1.5, 2.5]);
    const same = f.typeAs(kd.zeros(1));
    assert.equal(same.dtype, 'float32');
    assert.equal(f.typeAs(kd.zeros(1, { dtype: 'int64' })).dtype, 'int64');
    assert.deepEqual(vals(f.typeAs(kd.zeros(1, { dtype: 'int32' }))), [1, 2]);
    assert.equal(kd.zeros(2, 3).nelement(), 6);
    assert.equal(kd.zeros(2).isCuda, false);
    assert.throws(() => f.viewAs([2]), (e) => e instanceof TypeError && /other must be a Tensor/.test(e.message));
  });

  it('newZeros/newOnes/newEmpty/newFull/newTensor take this dtype and device unless given', function () {
    const d = kd.zeros(1, { dtype: 'float64' });
    const z = d.newZeros(2, 3);
    assert.deepEqual([z.shape, z.dtype], [[2, 3], 'float64']);
    assert.deepEqual(vals(d.newOnes([2])), [1, 1]);
    assert.equal(d.newOnes([2], { dtype: 'int32' }).dtype, 'int32');
    assert.deepEqual(d.newEmpty([4]).shape, [4]);
    const full = d.newFull([2], 7, { requiresGrad: true });
    assert.deepEqual([vals(full), full.dtype, full.requiresGrad], [[7, 7], 'float64', true]);
    // PyTorch: torch.ones(2, dtype=torch.int64).new_tensor([1.5]) is int64 ([1])
    const n = kd.zeros(2, { dtype: 'int64' }).newTensor([1.5]);
    assert.deepEqual([n.dtype, vals(n).map(Number)], ['int64', [1]]);
    assert.throws(() => d.newZeros([2], { shape: 1 }), /unexpected option 'shape'/);
    assert.throws(() => d.newFull(2, 1), /size must be an array/);
  });

  it('dtype shorthands convert, and return the tensor itself when the dtype is already right', function () {
    const t = kd.tensor([1.7, -2.5]);
    const expect = { float: 'float32', double: 'float64', half: 'float16', bfloat16: 'bfloat16', long: 'int64',
      int: 'int32', short: 'int16', char: 'int8', byte: 'uint8', bool: 'bool' };
    for (const [m, dtype] of Object.entries(expect)) assert.equal(t[m]().dtype, dtype, m);
    assert.deepEqual(vals(t.long()).map(Number), [1, -2]); // truncation, as PyTorch
    assert.deepEqual(vals(t.bool()), [1, 1]);
    assert.equal(t.float(), t);
    assert.equal(t.float({ memoryFormat: 'preserveFormat' }).dtype, 'float32');
  });

  it('type(): legacy names; type(name) converts', function () {
    assert.equal(kd.zeros(1).type(), 'torch.FloatTensor');
    assert.equal(kd.zeros(1, { dtype: 'bfloat16' }).type(), 'torch.BFloat16Tensor');
    assert.equal(kd.zeros(1, { dtype: 'int8' }).type(), 'torch.CharTensor');
    assert.equal(kd.zeros(1).type('torch.DoubleTensor').dtype, 'float64');
    assert.equal(kd.zeros(1).type(kd.LongTensor).dtype, 'int64');
    assert.equal(kd.zeros(1).type('int32').dtype, 'int32');
    assert.throws(() => kd.zeros(1).type('torch.FooTensor'), (e) => e.code === 'KD_INVALID_ARGUMENT' && /invalid type: 'torch.FooTensor'/.test(e.message));
  });

  it('legacy constructors: sizes, data, empty, a tensor of the same type; instanceof checks the type', function () {
    const u = kd.FloatTensor(2, 3);
    assert.deepEqual([u.shape, u.dtype], [[2, 3], 'float32']);
    assert.deepEqual(kd.LongTensor([1.7, -2.5]).tolist(), [1, -2]);
    assert.deepEqual(kd.FloatTensor().shape, [0]);
    assert.deepEqual(kd.DoubleTensor([[1, 2]]).dtype, 'float64');
    assert.deepEqual(kd.ByteTensor(new Uint8Array([3, 4])).tolist(), [3, 4]);
    assert.equal(kd.IntTensor(1).dtype, 'int32');
    assert.equal(kd.BoolTensor([true]).dtype, 'bool');
    assert.equal(kd.HalfTensor(2).dtype, 'float16');
    const a = kd.FloatTensor([1]);
    assert.equal(kd.FloatTensor(a), a);
    assert.throws(() => kd.FloatTensor(kd.LongTensor([1])), /expected torch.FloatTensor \(got torch.LongTensor\)/);
    assert.throws(() => kd.FloatTensor(2, { device: 'cuda' }), /legacy constructor expects device type: cpu but device type: cuda was passed/);
    assert.throws(() => kd.FloatTensor('a'), (e) => e instanceof TypeError);
    assert.ok(kd.zeros(1) instanceof kd.FloatTensor);
    assert.ok(!(kd.zeros(1, { dtype: 'int64' }) instanceof kd.FloatTensor));
    assert.ok(kd.zeros(1, { dtype: 'int64' }) instanceof kd.LongTensor);
    // kd.Tensor called as a function is torch.Tensor; it stays the class
    assert.deepEqual([kd.Tensor(2, 3).shape, kd.Tensor(2, 3).dtype], [[2, 3], 'float32']);
    assert.deepEqual(kd.Tensor([1, 2]).tolist(), [1, 2]);
    assert.ok(kd.zeros(1) instanceof kd.Tensor);
    assert.ok(new kd.nn.Parameter(kd.zeros(1)) instanceof kd.Tensor);
  });
});

if (kd.cuda.isAvailable()) {
  describe('Tensor conveniences on CUDA', function () {
    it('type() names, isCuda, kd.cuda.FloatTensor, type() moves between devices', function () {
      const g = kd.zeros(2, { device: 'cuda' });
      assert.equal(g.type(), 'torch.cuda.FloatTensor');
      assert.equal(g.isCuda, true);
      assert.equal(g.type('torch.LongTensor').device, 'cpu');
      assert.equal(kd.zeros(1).type('torch.cuda.DoubleTensor').device, 'cuda:0');
      const c = kd.cuda.FloatTensor([1, 2]);
      assert.deepEqual([c.device, c.dtype], ['cuda:0', 'float32']);
      assert.ok(c instanceof kd.cuda.FloatTensor && !(c instanceof kd.FloatTensor));
      assert.equal(g.newZeros(3).device, 'cuda:0');
      assert.equal(kd.zeros(1).typeAs(g).device, 'cuda:0');
    });
  });
}

if (kd.cuda.isAvailable()) {
  describe('t.data on CUDA', function () {
    it('swaps CUDA data into a CUDA tensor; a CPU tensor is refused', function () {
      const p = kd.zeros(2, { device: 'cuda', requiresGrad: true });
      p.data = kd.tensor([3.5, 4], { device: 'cuda' });
      assert.deepEqual(vals(p.cpu()), [3.5, 4]);
      assert.equal(p.data.device, 'cuda:0');
      assert.throws(() => { p.data = kd.tensor([1.5, 2]); },
        (e) => e.code === 'KD_DEVICE_MISMATCH' && /incompatible tensor type/.test(e.message));
    });
  });
} else {
  describe('t.data across device types', function () {
    it('needs CUDA (the emulated GPU runs it)', function () { this.skip(); });
  });
}
