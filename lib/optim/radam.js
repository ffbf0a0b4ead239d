// optim/radam.js - kd.optim.RAdam (PyTorch 1.13's torch.optim.RAdam, rectified Adam): lr,
// betas, eps, weightDecay. State per parameter: step (a number), expAvg, expAvgSq. One fused
// native call per group and step count (kd._internal.foreachRadamStep_, src/cpu/optim.c and
// cuda/ops_optim.cu: PyTorch's single-tensor update, op for op; the rectification, or plain
// momentum while the variance is not tractable, depends on the step).
'use strict';

module.exports = (kd, Optimizer) => {
  const I = kd._internal;

  class RAdam extends Optimizer {
    /** new RAdam(params, {lr = 1e-3, betas = [0.9, 0.999], eps = 1e-8, weightDecay = 0, foreach = null}) */
    constructor(params, options = {}) {
      if (typeof options === 'number') options = { lr: options };
      const { lr = 1e-3, betas = [0.9, 0.999], eps = 1e-8, weightDecay = 0, foreach = null } = options;
      super(params, { lr, betas, eps, weightDecay, foreach });
    }

    _checkGroup(g) {
      Optimizer.checkNonNegative(g);
      Optimizer.checkBetas(g.betas);
    }

    _stepGroup(g, params, grads) {
      const { lr, betas: [b1, b2], eps, weightDecay } = g;
      const states = params.map((p) => {
        const s = this._stateOf(p, () => ({ step: 0, expAvg: kd.keep(kd.zerosLike(p)), expAvgSq: kd.keep(kd.zerosLike(p)) }));
        s.step += 1;
        return s;
      });
      for (const [step, idx] of Optimizer._partition(states, (s) => s.step)) {
        const pick = (a) => idx.map((i) => a[i]);
        const ss = pick(states);
        I.foreachRadamStep_(pick(params), pick(grads), ss.map((s) => s.expAvg), ss.map((s) => s.expAvgSq), lr, b1, b2, eps,
          weightDecay, step);
      }
    }
  }
  return RAdam;
};
