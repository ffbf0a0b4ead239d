// optim/adadelta.js - kd.optim.Adadelta (PyTorch 1.13's torch.optim.Adadelta): lr, rho, eps,
// weightDecay, maximize. State per parameter: step (a number), squareAvg, accDelta. One fused
// native call per group (kd._internal.foreachAdadeltaStep_, src/cpu/optim.c and
// cuda/ops_optim.cu: PyTorch's single-tensor update in one pass over memory, op for op).
'use strict';

module.exports = (kd, Optimizer) => {
  const { num, err } = Optimizer;
  const I = kd._internal;

  class Adadelta extends Optimizer {
    /** new Adadelta(params, {lr = 1, rho = 0.9, eps = 1e-6, weightDecay = 0, foreach = null, maximize = false}) */
    constructor(params, options = {}) {
      if (typeof options === 'number') options = { lr: options };
      const { lr = 1.0, rho = 0.9, eps = 1e-6, weightDecay = 0, foreach = null, maximize = false } = options;
      super(params, { lr, rho, eps, weightDecay, maximize, foreach });
    }

    _checkGroup(g) {
      Optimizer.checkNonNegative(g);
      if (!(num(g.rho, 'rho') >= 0 && g.rho <= 1)) throw err(`Invalid rho value: ${g.rho}`);
    }

    _stepGroup(g, params, grads) {
      const states = params.map((p) => {
        const s = this._stateOf(p, () => ({ step: 0, squareAvg: kd.keep(kd.zerosLike(p)), accDelta: kd.keep(kd.zerosLike(p)) }));
        s.step += 1;
        return s;
      });
      I.foreachAdadeltaStep_(params, grads, states.map((s) => s.squareAvg), states.map((s) => s.accDelta),
        g.lr, g.rho, g.eps, g.weightDecay, !!g.maximize);
    }
  }
  return Adadelta;
};
