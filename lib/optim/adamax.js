// optim/adamax.js - kd.optim.Adamax (PyTorch 1.13's torch.optim.Adamax, Adam with the infinity
// norm): lr, betas, eps, weightDecay, maximize. State per parameter: step (a number), expAvg,
// expInf. PyTorch's single-tensor update, op for op.
'use strict';

module.exports = (kd, Optimizer) => {

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
      kd.tidy(() => params.forEach((p, i) => {
        const { expAvg, expInf, step } = states[i];
        let grad = maximize ? grads[i].neg() : grads[i];
        if (weightDecay !== 0) grad = grad.add(p, { alpha: weightDecay });
        expAvg.mul_(b1).add_(grad, { alpha: 1 - b1 });
        expInf.copy_(kd.maximum(expInf.mul_(b2), grad.abs().add_(eps)));
        const clr = lr / (1 - b1 ** step);
        p.addcdiv_(expAvg, expInf, { value: -clr });
      }));
    }
  }
  return Adamax;
};
