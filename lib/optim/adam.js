// optim/adam.js - kd.optim.Adam and kd.optim.AdamW (PyTorch 1.13): betas, eps, weightDecay
// (L2 for Adam, decoupled for AdamW), amsgrad, maximize. State per parameter: step (a number),
// expAvg, expAvgSq (and maxExpAvgSq with amsgrad). One fused native call per group and step
// count (kd._internal.foreachAdamStep_ / foreachAdamwStep_; the bias corrections depend on the step).
// capturable (as PyTorch's): the step is a one-element tensor on the parameter's device and the
// bias corrections are computed there, so the update can be captured in a CUDA graph and
// replayed (kd.cuda.graph); it runs as ordinary ops, eagerly or replayed alike.
'use strict';

module.exports = (kd, Optimizer) => {
  const { num, err, typeErr } = Optimizer;
  const I = kd._internal;

  function adamOptions(options, defaultWd) {
    if (typeof options === 'number') options = { lr: options };
    const { lr = 1e-3, betas = [0.9, 0.999], eps = 1e-8, weightDecay = defaultWd, amsgrad = false, maximize = false, foreach = null,
      capturable = false, differentiable = false, fused = false } = options;
    const o = { lr, betas, eps, weightDecay, amsgrad, maximize, foreach, capturable };
    // PyTorch 1.13's Adam has differentiable and fused, its AdamW neither
    return defaultWd === 0 ? { ...o, differentiable, fused } : o;
  }

  class Adam extends Optimizer {
    /** new Adam(params, {lr = 1e-3, betas = [0.9, 0.999], eps = 1e-8, weightDecay = 0, amsgrad = false, maximize = false,
     * foreach = null, capturable = false, differentiable = false, fused = false}) */
    constructor(params, options = {}) {
      super(params, adamOptions(options, 0));
    }

    _checkGroup(g) {
      if (num(g.lr, 'lr') < 0) throw err(`Invalid learning rate: ${g.lr}`);
      if (num(g.eps, 'eps') < 0) throw err(`Invalid epsilon value: ${g.eps}`);
      if (!Array.isArray(g.betas) || g.betas.length !== 2) throw typeErr('betas must be an array of two numbers');
      if (!(num(g.betas[0], 'betas[0]') >= 0 && g.betas[0] < 1)) throw err(`Invalid beta parameter at index 0: ${g.betas[0]}`);
      if (!(num(g.betas[1], 'betas[1]') >= 0 && g.betas[1] < 1)) throw err(`Invalid beta parameter at index 1: ${g.betas[1]}`);
      if (num(g.weightDecay, 'weightDecay') < 0) throw err(`Invalid weight_decay value: ${g.weightDecay}`);
      Optimizer.checkDifferentiable(g);
    }

    _stepDifferentiable(g, params, grads) {
      if (this._decoupled) throw err('AdamW has no differentiable option');
      Optimizer.differentiable.Adam(g, params, grads, this._stateFn);
    }

    _stepGroup(g, params, grads) {
      if (g.capturable) return this._stepCapturable(g, params, grads);
      if (params.length && params[0].device.startsWith('cuda') && kd.cuda.isCurrentStreamCapturing()) {
        // PyTorch's capture health check: the fused step bakes the step count into the graph
        throw new kd.KindlingError(`Attempting CUDA graph capture of step() for an instance of ${this.constructor.name} but its capturable option is false; create it with {capturable: true}`, 'KD_CUDA_GRAPH_CAPTURE');
      }
      const { lr, betas, eps, weightDecay, amsgrad, maximize } = g;
      const states = params.map((p) => {
        const s = this._stateOf(p, () => {
          const ns = { step: 0, expAvg: kd.keep(kd.zerosLike(p)), expAvgSq: kd.keep(kd.zerosLike(p)) };
          if (amsgrad) ns.maxExpAvgSq = kd.keep(kd.zerosLike(p));
          return ns;
        });
        if (amsgrad && !s.maxExpAvgSq) s.maxExpAvgSq = kd.keep(kd.zerosLike(p));
        s.step += 1;
        return s;
      });
      for (const [step, idx] of Optimizer._partition(states, (s) => s.step)) {
        const pick = (a) => idx.map((i) => a[i]);
        const ss = pick(states);
        (this._decoupled ? I.foreachAdamwStep_ : I.foreachAdamStep_)(pick(params), pick(grads), ss.map((s) => s.expAvg), ss.map((s) => s.expAvgSq),
          amsgrad ? ss.map((s) => s.maxExpAvgSq) : [], lr, betas[0], betas[1], eps, weightDecay, step, maximize);
      }
    }

    /** PyTorch's capturable single-tensor Adam: no host value depends on the step count. */
    _stepCapturable(g, params, grads) {
      const { lr, betas: [b1, b2], eps, weightDecay, amsgrad, maximize } = g;
      params.forEach((p, i) => {
        const s = this._stateOf(p, () => {
          const ns = { step: kd.keep(kd.zeros([], { dtype: p.dtype === 'float64' ? 'float64' : 'float32', device: p.device })),
            expAvg: kd.keep(kd.zerosLike(p)), expAvgSq: kd.keep(kd.zerosLike(p)) };
          if (amsgrad) ns.maxExpAvgSq = kd.keep(kd.zerosLike(p));
          return ns;
        });
        kd.noGrad(() => kd.tidy(() => {
          let grad = maximize ? grads[i].neg() : grads[i];
          s.step.add_(1);
          if (weightDecay !== 0) {
            if (this._decoupled) p.mul_(1 - lr * weightDecay);
            else grad = grad.add(p, { alpha: weightDecay });
          }
          s.expAvg.lerp_(grad, 1 - b1);
          s.expAvgSq.mul_(b2).addcmul_(grad, grad, { value: 1 - b2 });
          const bias1 = kd.fullLike(s.step, b1).pow(s.step).neg().add(1);
          const bias2Sqrt = kd.fullLike(s.step, b2).pow(s.step).neg().add(1).sqrt();
          let sq = s.expAvgSq;
          if (amsgrad) sq = s.maxExpAvgSq.copy_(kd.maximum(s.maxExpAvgSq, s.expAvgSq));
          const denom = sq.sqrt().div(bias2Sqrt.to(p.dtype)).add(eps);
          p.sub_(s.expAvg.div(denom).mul(bias1.reciprocal().mul(lr).to(p.dtype)));
        }));
      });
    }
  }

  class AdamW extends Adam {
    /** new AdamW(params, {lr = 1e-3, betas = [0.9, 0.999], eps = 1e-8, weightDecay = 1e-2, amsgrad = false, maximize = false,
     * foreach = null, capturable = false}) */
    constructor(params, options = {}) {
      super(params, adamOptions(options, 1e-2));
    }
    get _decoupled() { return true; }
  }
  return { Adam, AdamW };
};
