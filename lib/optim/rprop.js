// optim/rprop.js - kd.optim.Rprop (PyTorch 1.13's torch.optim.Rprop, resilient backpropagation):
// lr, etas, stepSizes, maximize. State per parameter: step (a number), prev (the last gradient,
// zeroed where its sign flipped) and stepSize (per element, starting at lr). One fused
// native call per group (kd._internal.foreachRpropStep_, src/cpu/optim.c and cuda/ops_optim.cu:
// PyTorch's single-tensor update, op for op).
'use strict';

module.exports = (kd, Optimizer) => {
  const I = kd._internal;
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
      const states = params.map((p, i) => {
        const s = this._stateOf(p, () => ({ step: 0, prev: kd.keep(kd.zerosLike(p)), stepSize: kd.keep(kd.fullLike(grads[i], lr)) }));
        s.step += 1;
        return s;
      });
      I.foreachRpropStep_(params, grads, states.map((s) => s.prev), states.map((s) => s.stepSize), etaminus, etaplus, minStep,
        maxStep, !!maximize);
    }
  }
  return Rprop;
};
