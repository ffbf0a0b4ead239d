// optim/nadam.js - kd.optim.NAdam (PyTorch 1.13's torch.optim.NAdam, Adam with Nesterov
// momentum): lr, betas, eps, weightDecay, momentumDecay. State per parameter: step (a number),
// muProduct, expAvg, expAvgSq. One fused native call per group and step count
// (kd._internal.foreachNadamStep_, src/cpu/optim.c and cuda/ops_optim.cu: PyTorch's
// single-tensor update, op for op); PyTorch keeps muProduct in a float32 tensor, so it is
// rounded to float32 here too.
'use strict';

module.exports = (kd, Optimizer) => {
  const I = kd._internal;
  const { num, err } = Optimizer;
  const f32 = Math.fround;

  class NAdam extends Optimizer {
    /** new NAdam(params, {lr = 2e-3, betas = [0.9, 0.999], eps = 1e-8, weightDecay = 0, momentumDecay = 4e-3, foreach = null}) */
    constructor(params, options = {}) {
      if (typeof options === 'number') options = { lr: options };
      const { lr = 2e-3, betas = [0.9, 0.999], eps = 1e-8, weightDecay = 0, momentumDecay = 4e-3, foreach = null } = options;
      super(params, { lr, betas, eps, weightDecay, momentumDecay, foreach });
    }

    _checkGroup(g) {
      Optimizer.checkNonNegative(g);
      Optimizer.checkBetas(g.betas);
      if (!(num(g.momentumDecay, 'momentumDecay') >= 0)) throw err(`Invalid momentum_decay value: ${g.momentumDecay}`);
    }

    _stepGroup(g, params, grads) {
      const { lr, betas: [b1, b2], eps, weightDecay, momentumDecay } = g;
      const states = params.map((p) => {
        const s = this._stateOf(p, () => ({ step: 0, muProduct: 1, expAvg: kd.keep(kd.zerosLike(p)), expAvgSq: kd.keep(kd.zerosLike(p)) }));
        s.step += 1;
        return s;
      });
      for (const s of states) s.muProduct = f32(s.muProduct * f32(b1 * (1 - 0.5 * 0.96 ** (s.step * momentumDecay))));
      for (const [, idx] of Optimizer._partition(states, (s) => `${s.step}:${s.muProduct}`)) {
        const pick = (a) => idx.map((i) => a[i]);
        const ss = pick(states);
        I.foreachNadamStep_(pick(params), pick(grads), ss.map((s) => s.expAvg), ss.map((s) => s.expAvgSq), lr, b1, b2, eps,
          weightDecay, momentumDecay, ss[0].step, ss[0].muProduct);
      }
    }
  }
  return NAdam;
};
