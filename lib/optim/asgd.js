// optim/asgd.js - kd.optim.ASGD (PyTorch 1.13's torch.optim.ASGD, averaged SGD): lr, lambd,
// alpha, t0, weightDecay, maximize. State per parameter: step, eta, mu (numbers) and ax (the
// running average of the parameter). One fused native call per group and (eta, mu)
// (kd._internal.foreachAsgdStep_, src/cpu/optim.c and cuda/ops_optim.cu: PyTorch's single-tensor
// update, op for op); PyTorch keeps eta and mu in float32 tensors, so they are rounded to float32
// here too.
'use strict';

module.exports = (kd, Optimizer) => {
  const I = kd._internal;
  const { num } = Optimizer;
  const f32 = Math.fround;

  class ASGD extends Optimizer {
    /** new ASGD(params, {lr = 1e-2, lambd = 1e-4, alpha = 0.75, t0 = 1e6, weightDecay = 0, foreach = null, maximize = false}) */
    constructor(params, options = {}) {
      if (typeof options === 'number') options = { lr: options };
      const { lr = 1e-2, lambd = 1e-4, alpha = 0.75, t0 = 1e6, weightDecay = 0, foreach = null, maximize = false } = options;
      super(params, { lr, lambd, alpha, t0, weightDecay, foreach, maximize });
    }

    _checkGroup(g) {
      Optimizer.checkNonNegative(g);
      num(g.lambd, 'lambd');
      num(g.alpha, 'alpha');
      num(g.t0, 't0');
    }

    _stepGroup(g, params, grads) {
      const { lr, lambd, alpha, t0, weightDecay, maximize } = g;
      const states = params.map((p) => {
        const s = this._stateOf(p, () => ({ step: 0, eta: f32(lr), mu: 1, ax: kd.keep(kd.zerosLike(p)) }));
        s.step += 1;
        return s;
      });
      for (const [, idx] of Optimizer._partition(states, (s) => `${s.eta}:${s.mu}`)) {
        const pick = (a) => idx.map((i) => a[i]);
        const ss = pick(states);
        I.foreachAsgdStep_(pick(params), pick(grads), ss.map((s) => s.ax), lambd, ss[0].eta, ss[0].mu, weightDecay, !!maximize);
      }
      for (const s of states) {
        s.eta = f32(lr / Math.pow(1 + lambd * lr * s.step, alpha));
        s.mu = f32(1 / Math.max(1, s.step - t0));
      }
    }
  }
  return ASGD;
};
