// optim/adagrad.js - kd.optim.Adagrad (PyTorch 1.13): lrDecay, weightDecay,
// initialAccumulatorValue, eps, maximize. State per parameter (made in the constructor, as
// PyTorch does): step and sum. One fused native call per group and step count
// (kd._internal.foreachAdagradStep_; the decayed lr depends on the step).
'use strict';

module.exports = (kd, Optimizer) => {
  const { num, err } = Optimizer;
  const I = kd._internal;

  class Adagrad extends Optimizer {
    /** new Adagrad(params, {lr = 1e-2, lrDecay = 0, weightDecay = 0, initialAccumulatorValue = 0, eps = 1e-10,
     * foreach = null, maximize = false}) */
    constructor(params, options = {}) {
      if (typeof options === 'number') options = { lr: options };
      const { lr = 1e-2, lrDecay = 0, weightDecay = 0, initialAccumulatorValue = 0, eps = 1e-10, foreach = null, maximize = false } = options;
      super(params, { lr, lrDecay, eps, weightDecay, initialAccumulatorValue, foreach, maximize });
      for (const grp of this.paramGroups) for (const p of grp.params) this._initState(p, grp);
    }

    _initState(p, g) {
      if (!this.state.has(p)) this.state.set(p, { step: 0, sum: kd.keep(kd.fullLike(p, g.initialAccumulatorValue)) });
    }

    addParamGroup(group) {
      super.addParamGroup(group);
      if (this.state) { // not while the base constructor runs (the state map is made first there)
        const g = this.paramGroups[this.paramGroups.length - 1];
        for (const p of g.params) this._initState(p, g);
      }
    }

    _checkGroup(g) {
      if (num(g.lr, 'lr') < 0) throw err(`Invalid learning rate: ${g.lr}`);
      if (num(g.lrDecay, 'lrDecay') < 0) throw err(`Invalid lr_decay value: ${g.lrDecay}`);
      if (num(g.weightDecay, 'weightDecay') < 0) throw err(`Invalid weight_decay value: ${g.weightDecay}`);
      if (num(g.initialAccumulatorValue, 'initialAccumulatorValue') < 0) {
        throw err(`Invalid initial_accumulator_value value: ${g.initialAccumulatorValue}`);
      }
      if (num(g.eps, 'eps') < 0) throw err(`Invalid epsilon value: ${g.eps}`);
    }

    _stepGroup(g, params, grads) {
      const { lr, lrDecay, eps, weightDecay, maximize } = g;
      const states = params.map((p) => {
        this._initState(p, g);
        const s = this.state.get(p);
        s.step += 1;
        return s;
      });
      for (const [step, idx] of Optimizer._partition(states, (s) => s.step)) {
        const pick = (a) => idx.map((i) => a[i]);
        I.foreachAdagradStep_(pick(params), pick(grads), pick(states).map((s) => s.sum), lr, lrDecay, weightDecay, eps,
          step, maximize);
      }
    }
  }
  return Adagrad;
};
