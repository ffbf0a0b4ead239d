// cpu_scalars.test.js - a 0-dim CPU tensor joins tensors of another device in the binary ops, as in
// PyTorch's TensorIterator (allow_cpu_scalars): `torch.tensor(0.) + x_cuda` runs on CUDA, and the
// scalar's gradient comes back to the CPU (See Note [CPU scalars] in src/dispatch/dispatch.c).
// What PyTorch 1.13 refuses stays refused: a CPU tensor with one or more dims, a 0-dim CPU tensor
// as the output of an in-place op, and ops outside the binary family. Runs on CUDA (the emulated
// GPU with KINDLING_CUDA=emulate); skipped when CUDA is not available. PyTorch's rule is
// TensorIteratorConfig::allow_cpu_scalars (ATen/TensorIterator.h), set by its binary and comparison
// op configurations; the expected values are the plain arithmetic of the expressions.
'use strict';

const assert = require('node:assert/strict');
const kd = require('..');

describe('0-dim CPU tensors in binary ops with CUDA tensors', function () {
  before(function () { if (!kd.cuda.isAvailable()) this.skip(); });

  const close = (t, want) => t.cpu().flatten().arraySync().forEach((v, i) => assert.ok(Math.abs(v - want[i]) < 1e-6, `${v} vs ${want[i]}`));

  it('runs on the other tensor\'s device, either argument order, with promotion as usual', function () {
    kd.tidy(() => {
      const x = kd.tensor([1, 2, 3], { dtype: 'float32' }).to('cuda');
      const s = kd.tensor(2.0);
      for (const [r, want] of [[s.add(x), [3, 4, 5]], [x.mul(s), [2, 4, 6]], [s.sub(x), [1, 0, -1]], [x.div(s), [0.5, 1, 1.5]],
        [kd.pow(x, s), [1, 4, 9]], [kd.maximum(s, x), [2, 2, 3]]]) {
        assert.equal(r.device, 'cuda:0');
        close(r, want);
      }
      const cmp = x.gt(s);
      assert.equal(cmp.device, 'cuda:0');
      assert.deepEqual(cmp.cpu().arraySync(), [false, false, true]);
      // an int64 0-dim CPU tensor with a float CUDA tensor: float32, as PyTorch's promotion
      const r = x.add(kd.tensor(1));
      assert.equal(r.dtype, 'float32');
      close(r, [2, 3, 4]);
      // the alpha of add and a 0-dim CUDA tensor with a 0-dim CPU one
      close(x.add(s, { alpha: 3 }), [7, 8, 9]);
      const z = kd.tensor(5.0).to('cuda').sub(s);
      assert.equal(z.device, 'cuda:0');
      assert.equal(z.item(), 3);
    });
  });

  it('the scalar\'s gradient comes back to the CPU', function () {
    const s = kd.tensor(3.0, { requiresGrad: true });
    const x = kd.tensor([1, 2, 4], { dtype: 'float32', requiresGrad: true }).to('cuda');
    x.retainGrad();
    const y = x.mul(s).add(s).sum();
    y.backward();
    assert.equal(s.grad.device, 'cpu');
    assert.ok(Math.abs(s.grad.item() - (7 + 3)) < 1e-6);
    close(x.grad, [3, 3, 3]);
    kd.dispose([s, x, y]);
  });

  it('in place: the CUDA tensor takes a CPU scalar; a CPU scalar cannot take a CUDA result', function () {
    kd.tidy(() => {
      const x = kd.tensor([1, 2], { dtype: 'float32' }).to('cuda');
      x.add_(kd.tensor(10.0));
      close(x, [11, 12]);
      x.mul_(kd.tensor(2.0));
      close(x, [22, 24]);
      const s = kd.tensor(1.0);
      assert.throws(() => s.add_(x), (e) => e.code === 'KD_DEVICE_MISMATCH' && /cpu and cuda:0/.test(e.message));
      assert.equal(s.item(), 1);
    });
  });

  it('a CPU tensor with dims, and ops outside the binary family, are still device mismatches', function () {
    kd.tidy(() => {
      const x = kd.tensor([1, 2], { dtype: 'float32' }).to('cuda');
      assert.throws(() => x.add(kd.tensor([1.0])), (e) => e.code === 'KD_DEVICE_MISMATCH');
      assert.throws(() => kd.tensor([1.0, 2.0]).mul(x), (e) => e.code === 'KD_DEVICE_MISMATCH');
      assert.throws(() => kd.where(x.gt(1), x, kd.tensor(0.0).expand(2)), (e) => e.code === 'KD_DEVICE_MISMATCH');
      assert.throws(() => kd.cat([x, kd.tensor([3.0])]), (e) => e.code === 'KD_DEVICE_MISMATCH');
    });
  });
});
