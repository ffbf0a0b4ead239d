// optim/adadelta.js - kd.optim.Adadelta (PyTorch 1.13's torch.optim.Adadelta): lr, rho, eps,
// weightDecay, maximize. State per parameter: step (a number), squareAvg, accDelta. The update
// is PyTorch's single-tensor one, op for op, so results match to rounding.
'use strict';

module.exports = (kd, Optimizer) => {
  const { num, err } = Optimizer;

  class Adadelta extends Optimizer {
    /** new Adadelta(params, {lr = 1, rho = 0.9, eps = 1e-6, weightDecay = 0, foreach = null, maximize = false}) */
    constructor(params, options = {}) {
      if (typeof options === 'number') options = { lr: options };
      const { lr = 1.0, rho = 0.9, eps = 1e-6, weightDecay = 0, foreach = null, maximize = false } = options;
      super(params, { lr, rho, eps, weightDecay, maximize, foreach });
    }

    _checkGroup(g) {
      if (!(num(g.lr, 'lr') >= 0)) throw err(`Invalid learning rate: ${g.lr}`);
      if (!(num(g.rho, 'rho') >= 0 && g.rho <= 1)) throw err(`Invalid rho value: ${g.rho}`);
      if (!(num(g.eps, 'eps') >= 0)) throw err(`Invalid epsilon value: ${g.eps}`);
      if (!(num(g.weightDecay, 'weightDecay') >= 0)) throw err(`Invalid weight_decay value: ${g.weightDecay}`);
    }

    _stepGroup(g, params, grads) {
      const states = params.map((p) => {
        const s = this._stateOf(p, () => ({ step: 0, squareAvg: kd.keep(kd.zerosLike(p)), accDelta: kd.keep(kd.zerosLike(p)) }));
        s.step += 1;
        return s;
      });
      const { lr, rho, eps, weightDecay, maximize } = g;
      kd.tidy(() => params.forEach((p, i) => {
        const { squareAvg, accDelta } = states[i];
        let grad = maximize ? grads[i].neg() : grads[i];
        if (weightDecay !== 0) grad = grad.add(p, { alpha: weightDecay });
        squareAvg.mul_(rho).addcmul_(grad, grad, { value: 1 - rho });
        const std = squareAvg.add(eps).sqrt_();
        const delta = accDelta.add(eps).sqrt_().div_(std).mul_(grad);
        accDelta.mul_(rho).addcmul_(delta, delta, { value: 1 - rho });
        p.add_(delta, { alpha: -lr });
      }));
    }
  }
  return Adadelta;
};
