// extension_cuda.test.js - CUDA sources in C extensions (include/kindling_cuda.h) through
// kd.utils.cppExtension.load: the example extension with its CUDA kernels
// (examples/extension/scaled_tanh_cuda.cu, a fused op and its fused backward) compiled into a fresh
// cache dir for the CUDA backend in use, its values on 'cuda' against the CPU kernels and Math.tanh
// over grids of several blocks, gradcheck on the device, on a device that is not the current one,
// errors, the current stream given to kernels (kd_cuda_current_stream) and that calls leave no
// tensor behind. Skipped when
// kd.cuda.isAvailable() is false (run on the emulated GPU by test/emulated-gpu.mocharc.json).
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { kd, assert, uniformValues } = require('./helpers');
const { useFreshExtensionCache, assertScaledTanhLeavesNothing } = require('./extension_helpers');

const available = kd.cuda.isAvailable();

/** |a - b| <= tol elementwise. */
function assertClose(actual, expected, tol, what) {
  assert.equal(actual.length, expected.length, `${what}: length`);
  for (let i = 0; i < expected.length; i++) {
    assert.ok(Math.abs(actual[i] - expected[i]) <= tol, `${what}[${i}]: ${actual[i]} vs ${expected[i]}`);
  }
}

(available ? describe : describe.skip)('kd.utils.cppExtension with CUDA sources', function () {
  this.timeout(120000);
  const cache = useFreshExtensionCache('kd-extcu-');
  let ext;
  before(function () {
    ext = require('../examples/extension/run.js').loadScaledTanh({ cuda: true });
  });

  it('compiles the .c and .cu sources into one shared object and registers its ops', function () {
    assert.equal(ext.built, true);
    assert.equal(path.dirname(ext.path), cache.dir);
    assert.deepEqual(Object.keys(ext.ops).sort(), ['scaled_tanh', 'scaled_tanh_backward']);
  });

  it("the forward kernel gives the CPU's values on 'cuda' over a grid of several blocks (float32, float64)", function () {
    const n = 5000; // 20 blocks of 256 threads
    const v = uniformValues(n, -3, 3, 11);
    const expected = Array.from(v, (a) => Math.tanh(0.8 * a));
    for (const [dtype, tol] of [['float32', 1e-6], ['float64', 1e-15]]) {
      const xCpu = kd.tensor(v, { dtype });
      const before = kd.cuda.emulator.isEnabled() ? kd.cuda.emulator.stats() : null;
      const y = kd.ops.extdemo.scaled_tanh(xCpu.to('cuda'), 0.8);
      assert.equal(y.device, 'cuda:0');
      assert.equal(y.dtype, dtype);
      const got = Array.from(y.cpu().dataSync());
      if (before) {
        const after = kd.cuda.emulator.stats();
        assert.equal(after.blocks - before.blocks, Math.ceil(n / 256), 'one block per 256 elements');
      }
      assertClose(got, Array.from(kd.ops.extdemo.scaled_tanh(xCpu, 0.8).dataSync()), tol, `${dtype} vs the CPU kernel`);
      assertClose(got, expected, dtype === 'float32' ? 1e-6 : 1e-15, `${dtype} vs Math.tanh`);
    }
  });

  it("the backward kernel gives the CPU's gradient (float32) and gradcheck passes on 'cuda' (float64)", function () {
    const v = uniformValues(3000, -2, 2, 5);
    const xCpu = kd.tensor(v).requiresGrad_();
    const xCuda = kd.tensor(v, { device: 'cuda' }).requiresGrad_();
    const w = kd.tensor(uniformValues(3000, -1, 1, 9));
    kd.ops.extdemo.scaled_tanh(xCpu, 1.3).mul(w).sum().backward();
    const y = kd.ops.extdemo.scaled_tanh(xCuda, 1.3);
    assert.equal(y.gradFn.name, 'extdemo::scaled_tanhBackward');
    y.mul(w.to('cuda')).sum().backward();
    assert.equal(xCuda.grad.device, 'cuda:0');
    assertClose(Array.from(xCuda.grad.cpu().dataSync()), Array.from(xCpu.grad.dataSync()), 1e-6, 'float32 gradient');
    kd.manualSeed(3);
    const x64 = kd.randn([700], { dtype: 'float64', device: 'cuda' }).requiresGrad_();
    assert.ok(kd.autograd.gradcheck((t) => kd.ops.extdemo.scaled_tanh(t, 0.7), [x64]));
  });

  it("runs with the tensors' device current: on cuda:1 from cuda:0, which stays current", async function () {
    if (kd.cuda.deviceCount() < 2) this.skip(); // one device: nothing to switch
    const v = uniformValues(1500, -2, 2, 13);
    assert.equal(kd.cuda.currentDevice(), 0);
    for (const dtype of ['float32', 'float64']) {
      const x = kd.tensor(v, { dtype, device: 'cuda:1' }).requiresGrad_();
      const y = kd.ops.extdemo.scaled_tanh(x, 0.6);
      assert.equal(y.device, 'cuda:1');
      y.sum().backward();
      const xCpu = kd.tensor(v, { dtype }).requiresGrad_();
      const yCpu = kd.ops.extdemo.scaled_tanh(xCpu, 0.6);
      yCpu.sum().backward();
      const tol = dtype === 'float32' ? 1e-6 : 1e-15;
      assertClose(Array.from(y.cpu().dataSync()), Array.from(yCpu.dataSync()), tol, `${dtype} forward on cuda:1`);
      assertClose(Array.from(x.grad.cpu().dataSync()), Array.from(xCpu.grad.dataSync()), tol, `${dtype} backward on cuda:1`);
    }
    // on a stream of cuda:1, which a launch with cuda:0 current would refuse
    const side = new kd.cuda.Stream({ device: 1 });
    const y = kd.cuda.withStream(side, () => kd.ops.extdemo.scaled_tanh(kd.tensor(v, { device: 'cuda:1' }), 0.6));
    await kd.cuda.synchronize(1);
    assertClose(Array.from(y.cpu().dataSync()), Array.from(v, (a) => Math.tanh(0.6 * a)), 1e-6, 'on a stream of cuda:1');
    assert.equal(kd.cuda.currentDevice(), 0);
  });

  it("a CUDA kernel's error reaches JS with its code and message", function () {
    assert.throws(() => kd.ops.extdemo.scaled_tanh(kd.ones([2], { dtype: 'int32', device: 'cuda' })),
      (e) => e.code === 'KD_DTYPE_MISMATCH' && e.message === 'extdemo::scaled_tanh: expected a float32 or float64 tensor');
  });

  it("kernels get the call's current stream (kd_cuda_current_stream) and run in its order", async function () {
    const src = path.join(cache.dir, 'stream_of.cu');
    fs.writeFileSync(src, `#include <kindling_cuda.h>
static const kindling_api *kd;
/* The handle of the stream the call gives its kernels, as an int64 tensor, written on that stream. */
static int stream_of(kd_op_call *c) {
  int64_t one = 1;
  kd_tensor *out = kd->new_output(c, 0, &one, 1, KD_INT64);
  if (!out) return kd->last_status();
  cudaStream_t s = kd_cuda_current_stream(kd, c);
  int64_t handle = (int64_t)(uintptr_t)s;
  if (cudaMemcpyAsync(kd->data(out), &handle, sizeof handle, cudaMemcpyHostToDevice, s) != cudaSuccess)
    return kd->error(KD_ERROR_INVALID_ARGUMENT, "stream_of: cudaMemcpyAsync failed");
  return cudaStreamSynchronize(s) == cudaSuccess ? KD_SUCCESS : kd->error(KD_ERROR_INVALID_ARGUMENT, "stream_of: sync failed");
}
extern "C" int kindling_extension_init(const kindling_api *api) {
  int op;
  kd = api;
  return kd->define("extstream::stream_of(Tensor x) -> Tensor", &op) || kd->impl(op, KD_DEVICE_TYPE_CUDA, stream_of);
}
`);
    const m = kd.utils.cppExtension.load({ name: 'stream_of', sources: [src] });
    const x = kd.ones([1], { device: 'cuda' });
    assert.equal(Number(m.ops.stream_of(x).item()), kd.cuda.currentStream().handle);
    const s = new kd.cuda.Stream();
    assert.notEqual(s.handle, 0);
    const v = uniformValues(2048, -2, 2, 3);
    const y = kd.cuda.withStream(s, () => {
      assert.equal(Number(m.ops.stream_of(x).item()), s.handle);
      // made on s, used by the extension's kernel on s
      const a = kd.tensor(v, { device: 'cuda' }).mul(2);
      return kd.ops.extdemo.scaled_tanh(a, 0.5);
    });
    await kd.cuda.synchronize();
    assertClose(Array.from(y.cpu().dataSync()), Array.from(v, (a) => Math.tanh(a)), 1e-6, 'on a side stream');
  });

  it('calls and backward leave nothing allocated', function () {
    assertScaledTanhLeavesNothing('cuda');
  });
});
