// views.test.js - view ops against PyTorch (test/fixtures/views.json): shape, strides, storage
// offset, contiguity and values; storage sharing (a fill through a view is seen in the base,
// a copy is not); plus clone/contiguous/copy_/to.
'use strict';

const { kd, assert, fixture, buildContiguous, applyView, assertTensorClose, values, expectKdError,
  codesForTorchError, assertMessageLike, decode, runOpCase, callOp, buildArg } = require('./helpers');

describe('views (PyTorch fixtures)', function () {
  for (const c of fixture('views').filter((x) => !x.op)) {
    it(c.name, function () {
      const base = buildContiguous(c.base);
      const apply = () => {
        let t = base;
        for (const o of c.ops) t = applyView(t, o);
        return t;
      };
      if (c.error) {
        const err = expectKdError(apply, codesForTorchError(c.error), c.name);
        assertMessageLike(err.message, c.error.message, c.name);
        return;
      }
      const t = apply();
      assertTensorClose(t, c.expected, c.name);
      const shape = t.shape;
      const stride = t.stride();
      assert.equal(stride.length, shape.length, 'stride() length');
      shape.forEach((s, d) => {
        if (s > 1) assert.equal(stride[d], c.stride[d], `stride of dim ${d}: got [${stride}], PyTorch [${c.stride}]`);
      });
      if (t.numel() > 0) assert.equal(t.storageOffset(), c.storageOffset, 'storageOffset');
      assert.equal(t.isContiguous(), c.contiguous, 'isContiguous');
      if (c.baseAfterFill) {
        t.fill_(c.fillValue);
        assertTensorClose(base, c.baseAfterFill,
          c.sharesStorage ? 'base after filling the view (must share storage)' : 'base after filling a copy (must not change)');
      }
    });
  }
});

// The op cases of views.json (one view or copy op on built inputs, runOpCase format; chunk returns a list).
describe('view and copy ops (PyTorch fixtures)', function () {
  for (const c of fixture('views').filter((x) => x.op)) {
    it(`${c.op}: ${c.name}${c.form !== 'function' ? ` [${c.form}]` : ''}`, function () {
      if (c.error || !Array.isArray(c.expected)) return runOpCase(c);
      const r = callOp(c, c.args.map(buildArg));
      assert.ok(Array.isArray(r), `${c.name}: expected an array of tensors`);
      assert.equal(r.length, c.expected.length, `${c.name}: number of tensors`);
      c.expected.forEach((e, i) => assertTensorClose(r[i], e, `${c.name} [${i}]`));
    });
  }
});

describe('views: storage sharing and copies', function () {
  it("narrow takes a 0-d integer tensor for start, as PyTorch's argument parser does for any int", function () {
    const x = kd.arange(10).reshape([2, 5]);
    assert.deepEqual(values(x.narrow(1, kd.tensor(1), 2)), [1, 2, 6, 7]);
    assert.deepEqual(values(kd.narrow(x, 1, kd.tensor(3, { dtype: 'int32' }), 2)), [3, 4, 8, 9]);
    expectKdError(() => x.narrow(1, kd.tensor(1, { dtype: 'float32' }), 2), 'KD_INVALID_TYPE'); // not an integer
    expectKdError(() => x.narrow(1, kd.tensor([1]), 2), 'KD_INVALID_TYPE'); // not 0-d
  });

  const grid = () => kd.arange(12, { dtype: 'float32' }).reshape([3, 4]);

  it('copy_ into a narrow/select view writes the base', function () {
    const g = grid();
    g.narrow(1, 1, 2).copy_(kd.full([3, 2], -1));
    assert.deepEqual(values(g), [0, -1, -1, 3, 4, -1, -1, 7, 8, -1, -1, 11]);
    g.select(0, 2).copy_(kd.tensor([9, 9, 9, 9], { dtype: 'float32' }));
    assert.deepEqual(values(g).slice(8), [9, 9, 9, 9]);
  });

  it('copy_ broadcasts and converts dtype', function () {
    const g = grid();
    g.copy_(kd.tensor([1, 2, 3, 4], { dtype: 'int32' }));
    assert.equal(g.dtype, 'float32');
    assert.deepEqual(values(g), [1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4]);
    expectKdError(() => g.copy_(kd.ones([5])), 'KD_SHAPE_MISMATCH');
  });

  it('in-place op on a transposed/permuted/sliced view writes the base', function () {
    const g = grid();
    g.t().slice(0, 0, 4, 2).mul_(10); // columns 0 and 2
    assert.deepEqual(values(g), [0, 1, 20, 3, 40, 5, 60, 7, 80, 9, 100, 11]);
    const h = kd.zeros([2, 3, 4]);
    h.permute([2, 0, 1]).select(0, 3).fill_(1);
    assert.equal(h.sum().item(), 6);
    assert.deepEqual(values(h.select(2, 3).flatten()), [1, 1, 1, 1, 1, 1]);
  });

  it('writes to the base are seen through existing views', function () {
    const g = grid();
    const v = g.view([12]);
    const col = g.select(1, 3);
    g.fill_(2);
    assert.deepEqual(values(v), new Array(12).fill(2));
    assert.deepEqual(values(col), [2, 2, 2]);
  });

  it('views keep the storage alive after the base is disposed', function () {
    const g = grid();
    const v = g.narrow(0, 1, 1);
    g.dispose();
    assert.deepEqual(values(v), [4, 5, 6, 7]);
  });

  it('reshape copies only when it must', function () {
    const g = grid();
    const r1 = g.reshape([4, 3]);
    r1.fill_(1);
    assert.equal(g.sum().item(), 12, 'contiguous reshape is a view');
    const g2 = grid();
    const r2 = g2.t().reshape([12]);
    r2.fill_(0);
    assert.equal(g2.sum().item(), 66, 'reshape of a transpose copies');
  });

  it('clone and contiguous', function () {
    const g = grid();
    const c = g.clone();
    c.fill_(0);
    assert.equal(g.sum().item(), 66);
    assert.equal(g.contiguous(), g, 'contiguous() of a contiguous tensor is the tensor itself');
    const tc = g.t().contiguous();
    assert.equal(tc.isContiguous(), true);
    assert.deepEqual(tc.stride(), [3, 1]);
    assert.deepEqual(values(tc), [0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]);
    tc.fill_(0);
    assert.equal(g.sum().item(), 66);
  });

  it('chunk and split return views covering the tensor', function () {
    const g = grid();
    const ch = g.chunk(2, 1);
    assert.equal(ch.length, 2);
    assert.deepEqual(ch.map((t) => t.shape), [[3, 2], [3, 2]]);
    ch[1].fill_(-5);
    assert.deepEqual(values(g.select(0, 0)), [0, 1, -5, -5]);
    const sp = kd.split(g, [1, 2]);
    assert.deepEqual(sp.map((t) => t.shape), [[1, 4], [2, 4]]);
    const sp2 = g.split(2);
    assert.deepEqual(sp2.map((t) => t.shape), [[2, 4], [1, 4]]);
    assert.deepEqual(kd.chunk(kd.arange(5), 3).map((t) => values(t)), [[0, 1], [2, 3], [4]]);
  });

  it('varargs and array shapes are the same', function () {
    const g = grid();
    assert.deepEqual(g.view(2, 6).shape, [2, 6]);
    assert.deepEqual(g.reshape(6, -1).shape, [6, 2]);
    assert.deepEqual(g.permute(1, 0).shape, [4, 3]);
    assert.deepEqual(g.unsqueeze(0).expand(2, 3, 4).shape, [2, 3, 4]);
    assert.deepEqual(g.unsqueeze(0).expand([2, -1, -1]).stride(), [0, 4, 1]);
  });

  it('expandAs and squeeze with a list', function () {
    const a = kd.tensor([[1], [2]], { dtype: 'float32' });
    const b = kd.zeros([2, 3]);
    const e = a.expandAs(b);
    assert.deepEqual(e.shape, [2, 3]);
    assert.deepEqual(e.stride()[1], 0);
    assert.deepEqual(values(e), [1, 1, 1, 2, 2, 2]);
    const s = kd.zeros([1, 2, 1, 3]).squeeze([0, 2]);
    assert.deepEqual(s.shape, [2, 3]);
  });

  it('to() accepts a tensor, dtype + options, and cpu()', function () {
    const g = grid();
    const like = kd.zeros([1], { dtype: 'int16' });
    const r = g.to(like);
    assert.equal(r.dtype, 'int16');
    assert.deepEqual(values(r), values(g));
    const c = g.to('float32', { copy: true });
    assert.notEqual(c, g);
    c.fill_(-1);
    assert.equal(g.sum().item(), 66, 'copy: true copies');
    assert.equal(g.cpu().device, 'cpu');
    const viaTensor = kd.tensor(g);
    viaTensor.fill_(0);
    assert.equal(g.sum().item(), 66, 'kd.tensor(t) copies');
    assert.equal(kd.tensor(g, { dtype: 'float64' }).dtype, 'float64');
  });

  it('to() converts dtype and returns self when nothing changes', function () {
    const g = grid();
    assert.equal(g.to('float32'), g);
    assert.equal(g.to('cpu'), g);
    assert.equal(g.to({ dtype: 'float32' }), g);
    const d = g.to('float64');
    assert.equal(d.dtype, 'float64');
    assert.deepEqual(values(d), values(g));
    const i = kd.tensor([-1.7, 2.9, 0.5], { dtype: 'float32' }).to('int32');
    assert.deepEqual(values(i), [-1, 2, 0]);
    const b = kd.tensor([0, 2, -0.5], { dtype: 'float32' }).to({ dtype: 'bool' });
    assert.deepEqual(values(b), [false, true, true]);
    const c = g.to({ dtype: 'float32', copy: true });
    assert.notEqual(c, g);
    c.fill_(0);
    assert.equal(g.sum().item(), 66);
    const h = kd.tensor([1.5, 65504, 70000, 1e-8], { dtype: 'float64' }).to('float16');
    assert.deepEqual(values(h), [1.5, 65504, Infinity, 0]);
    const bf = kd.tensor([1, 3.14159], { dtype: 'float32' }).to('bfloat16');
    assert.deepEqual(values(bf), [1, 3.140625]);
    void decode;
  });
});

describe('views: T, mT, H and mH (PyTorch 1.13)', function () {
  const shapeOf = (p, t) => t[p].shape;
  it('T reverses every dim; mT and mH swap the last two; H is the transpose of a matrix', function () {
    const a = kd.arange(24, { dtype: 'float32' });
    const m = a.narrow(0, 0, 6).reshape([2, 3]);
    for (const p of ['T', 'mT', 'H', 'mH']) {
      assert.deepEqual(shapeOf(p, m), [3, 2], p);
      assert.deepEqual(m[p].arraySync(), [[0, 3], [1, 4], [2, 5]], p);
      assert.deepEqual(m[p].stride(), [1, 3], `${p} is a view`);
    }
    const b = a.reshape([2, 3, 4]);
    assert.deepEqual(b.T.shape, [4, 3, 2]);
    assert.deepEqual(b.T.stride(), [1, 4, 12]);
    assert.deepEqual(b.mT.shape, [2, 4, 3]);
    assert.deepEqual(b.mH.stride(), [12, 1, 4]);
    // a @ a.mT, as PyTorch code writes it
    assert.deepEqual(m.matmul(m.mT).arraySync(), [[5, 14], [14, 50]]);
    // 1-d: T is a view of the vector; 0-d: every one of them is a view of the scalar
    const v = kd.tensor([1, 2, 3], { dtype: 'float32' });
    assert.deepEqual(v.T.arraySync(), [1, 2, 3]);
    const s = kd.tensor(7, { dtype: 'float32' });
    for (const p of ['T', 'mT', 'H', 'mH']) {
      assert.deepEqual(s[p].shape, [], p);
      assert.equal(s[p].item(), 7, p);
    }
  });

  it('they share storage with the tensor, and a new handle each time', function () {
    const m = kd.zeros([2, 3]);
    const t = m.mT;
    assert.notEqual(t, m);
    t.select(0, 2).fill_(5); // column 2 of m
    assert.deepEqual(m.arraySync(), [[0, 0, 5], [0, 0, 5]]);
    t.dispose();
    assert.equal(m.isDisposed, false);
  });

  it("1-d mT/mH and H on anything but 0-d and 2-d are PyTorch's errors", function () {
    const v = kd.ones([3]);
    expectKdError(() => v.mT, 'KD_INVALID_ARGUMENT', 'mT');
    assert.throws(() => v.mT, { message: 'tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor.' });
    assert.throws(() => v.mH, { message: 'tensor.mH is only supported on matrices or batches of matrices. Got 1-D tensor.' });
    assert.throws(() => v.H, { code: 'KD_INVALID_ARGUMENT', message: 'tensor.H is only supported on matrices (2-D tensors). Got 1-D tensor.' });
    assert.throws(() => kd.ones([2, 2, 2]).H,
      { message: 'tensor.H is only supported on matrices (2-D tensors). Got 3-D tensor. For batches of matrices, consider using tensor.mH' });
  });

  it('gradients flow through them', function () {
    const x = kd.tensor([[1, 2, 3], [4, 5, 6]], { dtype: 'float64', requiresGrad: true });
    const w = kd.tensor([[1, 0], [0, 2], [3, 1]], { dtype: 'float64' });
    for (const p of ['T', 'mT', 'H', 'mH']) {
      x.grad = null;
      x[p].mul(w).sum().backward();
      assert.deepEqual(x.grad.arraySync(), [[1, 0, 3], [0, 2, 1]], p);
    }
    const s = kd.tensor(2, { dtype: 'float64', requiresGrad: true });
    s.T.mul(3).backward();
    assert.equal(s.grad.item(), 3);
    assert.ok(kd.autograd.gradcheck((t) => t.mT.matmul(t), [kd.randn([2, 3, 4], { dtype: 'float64' }).requiresGrad_()]));
  });
});
