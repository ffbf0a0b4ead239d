// optim/rmsprop.js - kd.optim.RMSprop (PyTorch 1.13): alpha, eps, weightDecay, momentum,
// centered, maximize. State per parameter: step, squareAvg (and momentumBuffer with momentum,
// gradAvg when centered). One fused native call per group (kd._internal.foreachRmspropStep_).
'use strict';

module.exports = (kd, Optimizer) => {
  const { num, err } = Optimizer;
  const I = kd._internal;

  class RMSprop extends Optimizer {
    /** new RMSprop(params, {lr = 1e-2, alpha = 0.99, eps = 1e-8, weightDecay = 0, momentum = 0, centered = false, foreach = null,
     * maximize = false, differentiable = false}) */
    constructor(params, options = {}) {
      if (typeof options === 'number') options = { lr: options };
      const { lr = 1e-2, alpha = 0.99, eps = 1e-8, weightDecay = 0, momentum = 0, centered = false, foreach = null, maximize = false,
        differentiable = false } = options;
      super(params, { lr, momentum, alpha, eps, centered, weightDecay, foreach, maximize, differentiable });
    }

    _checkGroup(g) {
      if (num(g.lr, 'lr') < 0) throw err(`Invalid learning rate: ${g.lr}`);
      if (num(g.eps, 'eps') < 0) throw err(`Invalid epsilon value: ${g.eps}`);
      if (num(g.momentum, 'momentum') < 0) throw err(`Invalid momentum value: ${g.momentum}`);
      if (num(g.weightDecay, 'weightDecay') < 0) throw err(`Invalid weight_decay value: ${g.weightDecay}`);
      if (num(g.alpha, 'alpha') < 0) throw err(`Invalid alpha value: ${g.alpha}`);
      Optimizer.checkDifferentiable(g);
    }

    _stepDifferentiable(g, params, grads) { Optimizer.differentiable.RMSprop(g, params, grads, this._stateFn); }

    _stepGroup(g, params, grads) {
      const { lr, alpha, eps, weightDecay, momentum, centered, maximize } = g;
      const states = params.map((p) => {
        const s = this._stateOf(p, () => {
          const ns = { step: 0, squareAvg: kd.keep(kd.zerosLike(p)) };
          if (momentum > 0) ns.momentumBuffer = kd.keep(kd.zerosLike(p));
          if (centered) ns.gradAvg = kd.keep(kd.zerosLike(p));
          return ns;
        });
        if (momentum > 0 && !s.momentumBuffer) s.momentumBuffer = kd.keep(kd.zerosLike(p));
        if (centered && !s.gradAvg) s.gradAvg = kd.keep(kd.zerosLike(p));
        s.step += 1;
        return s;
      });
      I.foreachRmspropStep_(params, grads, states.map((s) => s.squareAvg), centered ? states.map((s) => s.gradAvg) : [],
        momentum > 0 ? states.map((s) => s.momentumBuffer) : [], lr, alpha, eps, weightDecay, momentum, maximize);
    }
  }
  return RMSprop;
};
