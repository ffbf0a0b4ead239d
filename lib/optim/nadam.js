// optim/nadam.js - kd.optim.NAdam (PyTorch 1.13's torch.optim.NAdam, Adam with Nesterov
// momentum): lr, betas, eps, weightDecay, momentumDecay. State per parameter: step (a number),
// muProduct, expAvg, expAvgSq. PyTorch's single-tensor update, op for op; PyTorch keeps
// muProduct in a float32 tensor, so it is rounded to float32 here too.
'use strict';

module.exports = (kd, Optimizer) => {
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
      kd.tidy(() => params.forEach((p, i) => {
        const s = states[i];
        const { expAvg, expAvgSq, step } = s;
        const bc2 = 1 - b2 ** step;
        let grad = grads[i];
        if (weightDecay !== 0) grad = grad.add(p, { alpha: weightDecay });
        const mu = b1 * (1 - 0.5 * 0.96 ** (step * momentumDecay));
        const muNext = b1 * (1 - 0.5 * 0.96 ** ((step + 1) * momentumDecay));
        s.muProduct = f32(s.muProduct * f32(mu));
        const muProductNext = f32(f32(s.muProduct * f32(mu)) * f32(muNext));
        expAvg.mul_(b1).add_(grad, { alpha: 1 - b1 });
        expAvgSq.mul_(b2).addcmul_(grad, grad, { value: 1 - b2 });
        const denom = expAvgSq.div(bc2).sqrt().add_(eps);
        p.addcdiv_(grad, denom, { value: -lr * (1 - mu) / (1 - s.muProduct) });
        p.addcdiv_(expAvg, denom, { value: -lr * muNext / (1 - muProductNext) });
      }));
    }
  }
  return NAdam;
};
