// optim/adamax.js - kd.optim.Adamax (PyTorch 1.13's torch.optim.Adamax, Adam with the infinity
// norm): lr, betas, eps, weightDecay, maximize. State per parameter: step (a number), expAvg,
// expInf. One fused native call per group and step count (kd._internal.foreachAdamaxStep_,
// src/cpu/optim.c and cuda/ops_optim.cu: PyTorch's single-tensor update, op for op).
'use strict';

module.exports = (kd, Optimizer) => {
  const I = kd._internal;

  class Adamax extends Optimizer {
    /** new Adamax(params, {lr = 2e-3, betas = [0.9, 0.999], eps = 1e-8, weightDecay = 0, foreach = null, maximize = false}) */
    constructor(params, options = {}) {
      if (typeof options === 'number') options = { lr: options };
      const { lr = 2e-3, betas = [0.9, 0.999], eps = 1e-8, weightDecay = 0, foreach = null, maximize = false } = options;
      super(params, { lr, betas, eps, weightDecay, foreach, maximize });
    }

    _checkGroup(g) {
      Optimizer.checkNonNegative(g);
      Optimizer.checkBetas(g.betas);
    }

    _stepGroup(g, params, grads) {
      const { lr, betas: [b1, b2], eps, weightDecay, maximize } = g;
      const states = params.map((p) => {
        const s = this._stateOf(p, () => ({ step: 0, expAvg: kd.keep(kd.zerosLike(p)), expInf: kd.keep(kd.zerosLike(p)) }));
        s.step += 1;
        return s;
      });
      for (const [step, idx] of Optimizer._partition(states, (s) => s.step)) {
        const pick = (a) => idx.map((i) => a[i]);
        const ss = pick(states);
        I.foreachAdamaxStep_(pick(params), pick(grads), ss.map((s) => s.expAvg), ss.map((s) => s.expInf), lr, b1, b2, eps,
          weightDecay, step, !!maximize);
      }
    }
  }
  return Adamax;
};
