// optim/radam.js - kd.optim.RAdam (PyTorch 1.13's torch.optim.RAdam, rectified Adam): lr,
// betas, eps, weightDecay. State per parameter: step (a number), expAvg, expAvgSq. PyTorch's
// single-tensor update, op for op (plain momentum SGD while the variance is not tractable).
'use strict';

module.exports = (kd, Optimizer) => {
  const { num, err } = Optimizer;

  class RAdam extends Optimizer {
    /** new RAdam(params, {lr = 1e-3, betas = [0.9, 0.999], eps = 1e-8, weightDecay = 0, foreach = null}) */
    constructor(params, options = {}) {
      if (typeof options === 'number') options = { lr: options };
      const { lr = 1e-3, betas = [0.9, 0.999], eps = 1e-8, weightDecay = 0, foreach = null } = options;
      super(params, { lr, betas, eps, weightDecay, foreach });
    }

    _checkGroup(g) {
      if (!(num(g.lr, 'lr') >= 0)) throw err(`Invalid learning rate: ${g.lr}`);
      if (!(num(g.eps, 'eps') >= 0)) throw err(`Invalid epsilon value: ${g.eps}`);
      Optimizer.checkBetas(g.betas);
      if (!(num(g.weightDecay, 'weightDecay') >= 0)) throw err(`Invalid weight_decay value: ${g.weightDecay}`);
    }

    _stepGroup(g, params, grads) {
      const { lr, betas: [b1, b2], eps, weightDecay } = g;
      const states = params.map((p) => {
        const s = this._stateOf(p, () => ({ step: 0, expAvg: kd.keep(kd.zerosLike(p)), expAvgSq: kd.keep(kd.zerosLike(p)) }));
        s.step += 1;
        return s;
      });
      kd.tidy(() => params.forEach((p, i) => {
        const { expAvg, expAvgSq, step } = states[i];
        const bc1 = 1 - b1 ** step;
        const bc2 = 1 - b2 ** step;
        let grad = grads[i];
        if (weightDecay !== 0) grad = grad.add(p, { alpha: weightDecay });
        expAvg.mul_(b1).add_(grad, { alpha: 1 - b1 });
        expAvgSq.mul_(b2).addcmul_(grad, grad, { value: 1 - b2 });
        const corrected = expAvg.div(bc1);
        const rhoInf = 2 / (1 - b2) - 1;
        const rhoT = rhoInf - 2 * step * (b2 ** step) / bc2;
        if (rhoT > 5) {
          const rect = Math.sqrt((rhoT - 4) * (rhoT - 2) * rhoInf / ((rhoInf - 4) * (rhoInf - 2) * rhoT));
          const adaptiveLr = expAvgSq.sqrt().add_(eps).reciprocal().mul(Math.sqrt(bc2));
          p.add_(corrected.mul(lr).mul(adaptiveLr).mul(rect), { alpha: -1 });
        } else {
          p.add_(corrected.mul(lr), { alpha: -1 });
        }
      }));
    }
  }
  return RAdam;
};
