// library_cuda.test.js - kd.library ops on CUDA: an op with 'cpu' and 'cuda' implementations
// written with kd ops gives the CPU's values and gradients on the device (gradcheck in float64),
// dispatches by the inputs' device, refuses mixed devices as built-in ops do, and autocasts to
// float16 under a CUDA autocast scope. Skipped when kd.cuda.isAvailable() is false (run on the
// emulated GPU by test/emulated-gpu.mocharc.json).
'use strict';

const { kd, assert } = require('./helpers');

const available = kd.cuda.isAvailable();
const L = kd.library;

(available ? describe : describe.skip)('kd.library on CUDA', function () {
  const devicesSeen = [];
  before(function () {
    L.define('cudalib::gelu_tanh(Tensor x, float scale=1.0) -> Tensor');
    const impl = (x, scale) => {
      devicesSeen.push(x.device);
      const inner = x.add(x.pow(3).mul(0.044715)).mul(Math.sqrt(2 / Math.PI));
      return x.mul(0.5).mul(inner.tanh().add(1)).mul(scale);
    };
    L.impl('cudalib::gelu_tanh', ['cpu', 'cuda'], impl);
    L.registerAutograd('cudalib::gelu_tanh', (ctx, g) => {
      const [x] = ctx.savedTensors;
      const k = Math.sqrt(2 / Math.PI);
      const t = x.add(x.pow(3).mul(0.044715)).mul(k).tanh();
      const dt = t.pow(2).neg().add(1).mul(x.pow(2).mul(3 * 0.044715).add(1).mul(k));
      return [g.mul(t.add(1).mul(0.5).add(x.mul(0.5).mul(dt))).mul(ctx.scale), null];
    }, { setupContext: (ctx, [x, scale]) => { ctx.saveForBackward(x); ctx.scale = scale; } });
    L.registerAutocast('cudalib::gelu_tanh', { cuda: 'lower' });
  });

  it('runs the CUDA implementation for CUDA inputs, with the CPU values', function () {
    kd.manualSeed(3);
    const x = kd.randn([257], { dtype: 'float64' });
    const cpu = kd.ops.cudalib.gelu_tanh(x, 1.5);
    const cu = kd.ops.cudalib.gelu_tanh(x.to('cuda'), 1.5);
    assert.equal(cu.device, 'cuda:0');
    assert.equal(devicesSeen[devicesSeen.length - 1], 'cuda:0');
    const a = cpu.dataSync();
    const b = cu.to('cpu').dataSync();
    for (let i = 0; i < a.length; i++) assert.ok(Math.abs(a[i] - b[i]) < 1e-12, `element ${i}`);
  });

  it('gradcheck and gradgradcheck on the device', function () {
    kd.manualSeed(4);
    const x = kd.randn([5], { dtype: 'float64', device: 'cuda' }).requiresGrad_();
    assert.ok(kd.autograd.gradcheck((t) => kd.ops.cudalib.gelu_tanh(t, 0.5), [x]));
    assert.ok(kd.autograd.gradgradcheck((t) => kd.ops.cudalib.gelu_tanh(t, 0.5), [x]));
  });

  it('mixed devices are refused as for built-in ops', function () {
    L.define('cudalib::add2(Tensor a, Tensor b) -> Tensor');
    L.impl('cudalib::add2', ['cpu', 'cuda'], (a, b) => a.add(b));
    assert.throws(() => kd.ops.cudalib.add2(kd.ones([2]), kd.ones([2], { device: 'cuda' })),
      (e) => e.code === 'KD_DEVICE_MISMATCH' && /cudalib::add2/.test(e.message));
  });

  it('an op with only a CPU implementation says so for CUDA inputs', function () {
    L.define('cudalib::cpuOnly(Tensor a) -> Tensor');
    L.impl('cudalib::cpuOnly', 'cpu', (a) => a.neg());
    assert.throws(() => kd.ops.cudalib.cpuOnly(kd.ones([2], { device: 'cuda' })),
      (e) => e.code === 'KD_NOT_SUPPORTED' && /'cudalib::cpuOnly' with arguments from the 'CUDA' backend/.test(e.message));
  });

  it('autocast on CUDA casts to float16 by the registered policy', function () {
    const x = kd.ones([4], { device: 'cuda' });
    const y = kd.autocast({ deviceType: 'cuda' }, () => kd.ops.cudalib.gelu_tanh(x));
    assert.equal(y.dtype, 'float16');
    assert.equal(kd.ops.cudalib.gelu_tanh(x).dtype, 'float32');
  });
});
