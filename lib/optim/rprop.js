// optim/rprop.js - kd.optim.Rprop (PyTorch 1.13's torch.optim.Rprop, resilient backpropagation):
// lr, etas, stepSizes, maximize. State per parameter: step (a number), prev (the last gradient,
// zeroed where its sign flipped) and stepSize (per element, starting at lr). PyTorch's
// single-tensor update, op for op.
'use strict';

module.exports = (kd, Optimizer) => {
  const { num, err, typeErr } = Optimizer;

  class Rprop extends Optimizer {
    /** new Rprop(params, {lr = 1e-2, etas = [0.5, 1.2], stepSizes = [1e-6, 50], foreach = null, maximize = false}) */
    constructor(params, options = {}) {
      if (typeof options === 'number') options = { lr: options };
      const { lr = 1e-2, etas = [0.5, 1.2], stepSizes = [1e-6, 50], foreach = null, maximize = false } = options;
      super(params, { lr, etas, stepSizes, foreach, maximize });
    }

    _checkGroup(g) {
      Optimizer.checkNonNegative(g);
      for (const k of ['etas', 'stepSizes']) {
        if (!Array.isArray(g[k]) || g[k].length !== 2) throw typeErr(`${k} must be an array of two numbers`);
        num(g[k][0], `${k}[0]`);
        num(g[k][1], `${k}[1]`);
      }
      if (!(g.etas[0] > 0 && g.etas[0] < 1 && g.etas[1] > 1)) throw err(`Invalid eta values: ${g.etas[0]}, ${g.etas[1]}`);
    }

    _stepGroup(g, params, grads) {
      const { lr, etas: [etaminus, etaplus], stepSizes: [minStep, maxStep], maximize } = g;
      kd.tidy(() => params.forEach((p, i) => {
        const s = this._stateOf(p, () => ({ step: 0, prev: kd.keep(kd.zerosLike(p)), stepSize: kd.keep(kd.fullLike(grads[i], lr)) }));
        s.step += 1;
        let grad = maximize ? grads[i].neg() : grads[i];
        const sign = grad.mul(s.prev).sign();
        sign.maskedFill_(sign.gt(0), etaplus);
        sign.maskedFill_(sign.lt(0), etaminus);
        sign.maskedFill_(sign.eq(0), 1);
        s.stepSize.mul_(sign).clamp_(minStep, maxStep);
        grad = grad.clone();
        grad.maskedFill_(sign.eq(etaminus), 0);
        p.addcmul_(grad.sign(), s.stepSize, { value: -1 });
        s.prev.copy_(grad);
      }));
    }
  }
  return Rprop;
};
