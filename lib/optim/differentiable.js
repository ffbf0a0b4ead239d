// optim/differentiable.js - the `differentiable: true` updates of SGD, Adam and RMSprop (PyTorch
// 1.13's option): PyTorch's single-tensor update written with kindling ops and run with gradients
// enabled, so autograd records it and the updated parameters (and state) are differentiable
// with respect to the gradients, the old parameters and the state (meta-learning, gradcheck of
// an update). The fused native updates are not recorded by autograd; these are used instead
// for groups created with differentiable: true. Each takes (group, params, grads, stateOf) where
// stateOf(p, init) is the optimizer's lazily made state.
'use strict';

module.exports = (kd) => {
  /** SGD: momentum buffer cloned (detached) from the first update, as PyTorch. */
  function sgd(g, params, grads, stateOf) {
    const { lr, momentum, dampening, nesterov, weightDecay, maximize } = g;
    params.forEach((p, i) => {
      const s = stateOf(p, () => ({ momentumBuffer: null }));
      let d = maximize ? grads[i].neg() : grads[i];
      if (weightDecay !== 0) d = d.add(p, { alpha: weightDecay });
      if (momentum !== 0) {
        if (s.momentumBuffer === null || s.momentumBuffer === undefined) s.momentumBuffer = kd.keep(d.clone().detach());
        else s.momentumBuffer.mul_(momentum).add_(d, { alpha: 1 - dampening });
        d = nesterov ? d.add(s.momentumBuffer, { alpha: momentum }) : s.momentumBuffer;
      }
      p.add_(d, { alpha: -lr });
    });
  }

  /** Adam (L2 weight decay; AdamW has no differentiable option in PyTorch 1.13). */
  function adam(g, params, grads, stateOf) {
    const { lr, betas: [b1, b2], eps, weightDecay, amsgrad, maximize } = g;
    params.forEach((p, i) => {
      const s = stateOf(p, () => {
        const ns = { step: 0, expAvg: kd.keep(kd.zerosLike(p)), expAvgSq: kd.keep(kd.zerosLike(p)) };
        if (amsgrad) ns.maxExpAvgSq = kd.keep(kd.zerosLike(p));
        return ns;
      });
      if (amsgrad && !s.maxExpAvgSq) s.maxExpAvgSq = kd.keep(kd.zerosLike(p));
      s.step += 1;
      let grad = maximize ? grads[i].neg() : grads[i];
      if (weightDecay !== 0) grad = grad.add(p, { alpha: weightDecay });
      s.expAvg.mul_(b1).add_(grad, { alpha: 1 - b1 });
      s.expAvgSq.mul_(b2).addcmul_(grad, grad, { value: 1 - b2 });
      const stepSizeNeg = -(lr / (1 - b1 ** s.step));
      const bc2Sqrt = Math.sqrt(1 - b2 ** s.step);
      let sq = s.expAvgSq;
      if (amsgrad) sq = s.maxExpAvgSq.copy_(kd.maximum(s.maxExpAvgSq.clone(), s.expAvgSq));
      const denom = sq.sqrt().div(bc2Sqrt * stepSizeNeg).add_(eps / stepSizeNeg);
      p.addcdiv_(s.expAvg, denom);
    });
  }

  /** RMSprop (centered, momentum). */
  function rmsprop(g, params, grads, stateOf) {
    const { lr, alpha, eps, weightDecay, momentum, centered, maximize } = g;
    params.forEach((p, i) => {
      const s = stateOf(p, () => {
        const ns = { step: 0, squareAvg: kd.keep(kd.zerosLike(p)) };
        if (momentum > 0) ns.momentumBuffer = kd.keep(kd.zerosLike(p));
        if (centered) ns.gradAvg = kd.keep(kd.zerosLike(p));
        return ns;
      });
      s.step += 1;
      let grad = maximize ? grads[i].neg() : grads[i];
      if (weightDecay !== 0) grad = grad.add(p, { alpha: weightDecay });
      s.squareAvg.mul_(alpha).addcmul_(grad, grad, { value: 1 - alpha });
      let avg;
      if (centered) {
        s.gradAvg.mul_(alpha).add_(grad, { alpha: 1 - alpha });
        avg = s.squareAvg.addcmul(s.gradAvg, s.gradAvg, { value: -1 }).sqrt_();
      } else avg = s.squareAvg.sqrt();
      avg = avg.add(eps);
      if (momentum > 0) {
        s.momentumBuffer.mul_(momentum).addcdiv_(grad, avg);
        p.add_(s.momentumBuffer, { alpha: -lr });
      } else p.addcdiv_(grad, avg, { value: -lr });
    });
  }

  return { SGD: sgd, Adam: adam, RMSprop: rmsprop };
};
