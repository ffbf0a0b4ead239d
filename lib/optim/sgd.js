// optim/sgd.js - kd.optim.SGD (PyTorch 1.13's torch.optim.SGD): momentum, dampening, nesterov,
// weightDecay, maximize. One fused native call per group (kd._internal.foreachSgdStep_); the
// parameters whose momentum buffer is new this step go in a call of their own, which
// initialises the buffer to the gradient as PyTorch does.
'use strict';

module.exports = (kd, Optimizer) => {
  const { num, err, REQUIRED } = Optimizer;
  const I = kd._internal;

  class SGD extends Optimizer {
    /** new SGD(params, {lr, momentum = 0, dampening = 0, weightDecay = 0, nesterov = false, maximize = false,
     * foreach = null, differentiable = false}) */
    constructor(params, options = {}) {
      if (typeof options === 'number') options = { lr: options };
      const { lr = REQUIRED, momentum = 0, dampening = 0, weightDecay = 0, nesterov = false, maximize = false, foreach = null,
        differentiable = false } = options;
      super(params, { lr, momentum, dampening, weightDecay, nesterov, maximize, foreach, differentiable });
    }

    _checkGroup(g) {
      if (num(g.lr, 'lr') < 0) throw err(`Invalid learning rate: ${g.lr}`);
      if (num(g.momentum, 'momentum') < 0) throw err(`Invalid momentum value: ${g.momentum}`);
      if (num(g.weightDecay, 'weightDecay') < 0) throw err(`Invalid weight_decay value: ${g.weightDecay}`);
      num(g.dampening, 'dampening');
      Optimizer.checkDifferentiable(g);
      if (g.nesterov && (g.momentum <= 0 || g.dampening !== 0)) {
        throw err('Nesterov momentum requires a momentum and zero dampening');
      }
    }

    _stepDifferentiable(g, params, grads) { Optimizer.differentiable.SGD(g, params, grads, this._stateFn); }

    _stepGroup(g, params, grads) {
      const { lr, momentum, dampening, nesterov, weightDecay, maximize } = g;
      if (momentum === 0) {
        for (const p of params) this._stateOf(p, () => ({ momentumBuffer: null }));
        I.foreachSgdStep_(params, grads, [], lr, 0, dampening, nesterov, weightDecay, maximize, false);
        return;
      }
      const fresh = [];
      const states = params.map((p) => {
        const s = this._stateOf(p, () => ({ momentumBuffer: null }));
        fresh.push(s.momentumBuffer === null || s.momentumBuffer === undefined);
        if (fresh[fresh.length - 1]) s.momentumBuffer = kd.keep(kd.zerosLike(p));
        return s;
      });
      for (const first of [false, true]) {
        const idx = params.map((_, i) => i).filter((i) => fresh[i] === first);
        if (idx.length === 0) continue;
        I.foreachSgdStep_(idx.map((i) => params[i]), idx.map((i) => grads[i]), idx.map((i) => states[i].momentumBuffer),
          lr, momentum, dampening, nesterov, weightDecay, maximize, first);
      }
    }
  }
  return SGD;
};
