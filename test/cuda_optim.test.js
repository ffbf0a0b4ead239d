// cuda_optim.test.js - the fused optimizer updates on CUDA against the CPU: SGD (momentum,
// dampening, nesterov, weight decay, maximize), Adam/AdamW (amsgrad), RMSprop (centered,
// momentum), Adagrad, Adadelta, RAdam (rectified from the 6th step), Adamax, NAdam, ASGD (averaging
// from the 3rd step) and Rprop, for float32, float64 and a float16/bfloat16 parameter, 8 steps
// from the same parameters and gradients; LBFGS and swaUtils (written with ops) too. Runs where CUDA is available: on a GPU, or on the emulated
// GPU in `npm test`.
'use strict';

const { kd, assert } = require('./helpers');

const TOL = { float32: 1e-5, float64: 1e-12, float16: 2e-3, bfloat16: 2e-2 };

describe('CUDA optimizer steps (CUDA vs CPU)', function () {
  if (!kd.cuda.isAvailable()) return; // nothing to compare without a CUDA device
  this.timeout(120000);

  const configs = [
    ['SGD', { lr: 0.1 }],
    ['SGD', { lr: 0.1, momentum: 0.9, dampening: 0.1, weightDecay: 0.01 }],
    ['SGD', { lr: 0.1, momentum: 0.9, nesterov: true, maximize: true }],
    ['Adam', { lr: 0.01 }],
    ['Adam', { lr: 0.01, weightDecay: 0.1, amsgrad: true }],
    ['AdamW', { lr: 0.01, weightDecay: 0.1 }],
    ['RMSprop', { lr: 0.01 }],
    ['RMSprop', { lr: 0.01, centered: true, momentum: 0.5, weightDecay: 0.01 }],
    ['Adagrad', { lr: 0.1, lrDecay: 0.01, weightDecay: 0.01 }],
    ['Adadelta', {}],
    ['Adadelta', { lr: 0.5, rho: 0.8, weightDecay: 0.1, maximize: true }],
    ['RAdam', { lr: 0.01 }],
    ['RAdam', { lr: 0.01, betas: [0.8, 0.9], weightDecay: 0.1 }],
    ['Adamax', { lr: 0.01, weightDecay: 0.1 }],
    ['NAdam', { lr: 0.01, weightDecay: 0.1 }],
    ['ASGD', { lr: 0.01, t0: 2 }],
    ['Rprop', { lr: 0.01, maximize: true }],
  ];
  it('LBFGS (strong Wolfe) and swaUtils.AveragedModel on CUDA follow the CPU', function () {
    kd.manualSeed(4);
    const w0 = kd.randn([5, 3], { dtype: 'float64' });
    const x0 = kd.randn([3], { dtype: 'float64' });
    const run = (device) => {
      const w = w0.to(device, { copy: true }).requiresGrad_();
      const x = x0.to(device);
      const opt = new kd.optim.LBFGS([w], { lineSearchFn: 'strong_wolfe', historySize: 4 });
      const closure = () => { opt.zeroGrad(); const l = w.mv(x).sub(1).pow(2).sum(); l.backward(); return l; };
      for (let i = 0; i < 3; i++) opt.step(closure);
      const avg = new kd.optim.swaUtils.AveragedModel(new kd.nn.Linear(3, 5).double().to(device));
      return [w, ...avg.module.parameters()].map((t) => Array.from(t.detach().to('cpu').dataSync()));
    };
    kd.manualSeed(5);
    const cpu = run('cpu');
    kd.manualSeed(5);
    const cuda = run('cuda');
    cpu.forEach((a, k) => a.forEach((v, i) => assert.ok(Math.abs(v - cuda[k][i]) <= 1e-9 * (1 + Math.abs(v)), `${k}[${i}]: ${v} vs ${cuda[k][i]}`)));
  });

  for (const dtype of ['float32', 'float64', 'float16', 'bfloat16']) {
    for (const [name, opts] of configs) {
      it(`${name} ${JSON.stringify(opts)} ${dtype}`, function () {
        kd.manualSeed(3);
        const p0 = kd.randn([5, 7]).to(dtype), grads = [1, 2, 3, 4, 5, 6, 7, 8].map(() => kd.randn([5, 7]).to(dtype));
        const run = (device) => {
          const p = p0.to(device, { copy: true }).requiresGrad_();
          const opt = new kd.optim[name]([p], opts);
          for (const g of grads) {
            p.grad = g.to(device, { copy: true });
            opt.step();
          }
          const out = p.detach().to('cpu', { copy: true });
          kd.dispose(p);
          return out;
        };
        const cpu = run('cpu'), cuda = run('cuda');
        const a = cpu.to('float64').dataSync(), b = cuda.to('float64').dataSync();
        for (let i = 0; i < a.length; i++) {
          assert.ok(Math.abs(a[i] - b[i]) <= TOL[dtype] * (1 + Math.abs(a[i])), `element ${i}: cpu ${a[i]} cuda ${b[i]}`);
        }
        kd.dispose([p0, ...grads, cpu, cuda]);
      });
    }
  }
});
