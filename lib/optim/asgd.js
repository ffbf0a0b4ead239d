// optim/asgd.js - kd.optim.ASGD (PyTorch 1.13's torch.optim.ASGD, averaged SGD): lr, lambd,
// alpha, t0, weightDecay, maximize. State per parameter: step, eta, mu (numbers) and ax (the
// running average of the parameter). PyTorch's single-tensor update, op for op; PyTorch keeps
// eta and mu in float32 tensors, so they are rounded to float32 here too.
'use strict';

module.exports = (kd, Optimizer) => {
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
      kd.tidy(() => params.forEach((p, i) => {
        const s = this._stateOf(p, () => ({ step: 0, eta: f32(lr), mu: 1, ax: kd.keep(kd.zerosLike(p)) }));
        let grad = maximize ? grads[i].neg() : grads[i];
        s.step += 1;
        if (weightDecay !== 0) grad = grad.add(p, { alpha: weightDecay });
        p.mul_(1 - lambd * s.eta);
        p.add_(grad, { alpha: -s.eta });
        if (s.mu !== 1) s.ax.add_(p.sub(s.ax).mul(s.mu));
        else s.ax.copy_(p);
        s.eta = f32(lr / Math.pow(1 + lambd * lr * s.step, alpha));
        s.mu = f32(1 / Math.max(1, s.step - t0));
      }));
    }
  }
  return ASGD;
};
