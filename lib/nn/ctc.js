// ctc.js - kd.nn.functional.ctcLoss: the connectionist temporal classification loss of PyTorch
// 1.13 (blank, reduction none/mean/sum, zeroInfinity; padded (N, S) or concatenated 1-D
// targets; batched (T, N, C) or unbatched (T, C) log-probabilities). The forward (alpha)
// recursion runs over time with differentiable ops on the extended label sequences
// (blank, l1, blank, l2, ..., blank), so the gradient is autograd's and every device runs it.
// Each step works in probability space rescaled per step (Rabiner's scaling): alpha_t is divided
// by its sum c_t and the step's probabilities by their largest value e^m_t, and
// log p(target) = log(alpha_T at the two final states) + sum_t (log c_t + m_t). No -inf enters
// the graph, so an impossible alignment gives an infinite loss (zeroInfinity turns it into 0)
// with a finite gradient where PyTorch's is NaN; every other value and gradient is PyTorch's.
'use strict';

const { KindlingError } = require('../errors');

module.exports = function installCtc(kd, nn, { parseArgs }) {
  const F = kd.nn.functional;
  const invalid = (msg) => new KindlingError(msg, 'KD_INVALID_ARGUMENT');
  const shapeError = (msg) => new KindlingError(msg, 'KD_SHAPE_MISMATCH');
  const FLOATS = ['float32', 'float64', 'float16', 'bfloat16'];
  const INTS = ['int64', 'int32', 'int16', 'int8', 'uint8'];

  /** Lengths given as an array, a number or an integer tensor -> array of numbers. */
  function lengthsOf(v, what) {
    if (v instanceof kd.Tensor) {
      if (!INTS.includes(v.dtype)) throw invalid(`${what} must be integral`);
      return Array.from(v.reshape([-1]).to('cpu').to('float64').dataSync());
    }
    if (typeof v === 'number') return [v];
    if (Array.isArray(v) && v.every((x) => Number.isInteger(x))) return v.slice();
    throw new kd.KindlingTypeError(`ctcLoss(): ${what} must be a tensor or an array of integers`);
  }

  /** ctcLoss(logProbs, targets, inputLengths, targetLengths, blank = 0, reduction = 'mean', zeroInfinity = false). */
  F.ctcLoss = function ctcLoss(logProbs, targets, inputLengths, targetLengths, ...args) {
    const o = parseArgs('ctcLoss()', args, ['blank', 'reduction', 'zeroInfinity'], { blank: 0, reduction: 'mean', zeroInfinity: false });
    if (!['none', 'mean', 'sum'].includes(o.reduction)) throw invalid(`${o.reduction} is not a valid value for reduction`);
    if (!(logProbs instanceof kd.Tensor) || !(targets instanceof kd.Tensor)) throw new kd.KindlingTypeError('ctcLoss(): logProbs and targets must be Tensors');
    if (!FLOATS.includes(logProbs.dtype)) throw invalid(`ctc_loss: expected log_probs to be a floating point tensor, got ${logProbs.dtype}`);
    if (!INTS.includes(targets.dtype)) throw invalid(`ctc_loss: expected targets to be an integer tensor, got ${targets.dtype}`);
    const unbatched = logProbs.ndim === 2;
    if (logProbs.ndim !== 3 && !unbatched) throw shapeError(`ctc_loss: expected log_probs to be 2-D or 3-D, got ${logProbs.ndim}-D`);
    const lp = unbatched ? logProbs.unsqueeze(1) : logProbs;
    const tg = unbatched ? targets.unsqueeze(0) : targets; // unbatched targets are one row
    const [T, N, C] = lp.shape;
    const inLen = lengthsOf(inputLengths, 'input_lengths');
    const tLen = lengthsOf(targetLengths, 'target_lengths');
    if (!(o.blank >= 0 && o.blank < C)) throw invalid('blank must be in label range');
    if (inLen.length !== N) throw shapeError(`input_lengths must be of size batch_size`);
    if (tLen.length !== N) throw shapeError(`target_lengths must be of size batch_size`);
    for (const l of inLen) {
      if (l > T || l < 0) throw invalid(`Expected input_lengths to have value at most ${T}, but got value ${l} (while checking arguments for ctc_loss_cpu)`);
    }
    for (const l of tLen) if (l < 0) throw invalid(`Expected target_lengths to be non-negative, but got value ${l}`);
    const S = Math.max(0, ...tLen);
    const dev = lp.device;
    // targets as (N, S): padded rows, or gathered from the concatenated 1-D form
    let padded;
    if (tg.ndim === 2) {
      if (tg.shape[0] !== N) throw shapeError(`Expected tensor to have size ${N} at dimension 0, but got size ${tg.shape[0]} for argument #2 'targets' (while checking arguments for ctc_loss_cpu)`);
      if (tg.shape[1] < S) throw shapeError(`Expected tensor to have size at least ${S} at dimension 1, but got size ${tg.shape[1]} for argument #2 'targets' (while checking arguments for ctc_loss_cpu)`);
      padded = tg.narrow(1, 0, S).to('int64').to(dev);
    } else if (tg.ndim === 1) {
      const total = tLen.reduce((a, b) => a + b, 0);
      if (tg.shape[0] < total) throw shapeError(`Expected tensor to have size at least ${total} at dimension 0, but got size ${tg.shape[0]} for argument #2 'targets' (while checking arguments for ctc_loss_cpu)`);
      const idx = [];
      let off = 0;
      for (let n = 0; n < N; n++) {
        for (let s = 0; s < S; s++) idx.push(s < tLen[n] ? off + s : 0);
        off += tLen[n];
      }
      padded = total === 0 ? kd.zeros([N, S], { dtype: 'int64', device: dev })
        : tg.to('int64').indexSelect(0, kd.tensor(idx, { dtype: 'int64', device: tg.device })).reshape([N, S]).to(dev);
    } else {
      throw shapeError(`ctc_loss: expected targets to be 1-D or 2-D, got ${tg.ndim}-D`);
    }
    const L = 2 * S + 1;
    const sIdx = kd.arange(S, { device: dev }).unsqueeze(0);
    const tl = kd.tensor(tLen, { dtype: 'int64', device: dev }).unsqueeze(1);
    const labels = kd.where(sIdx.lt(tl), padded, o.blank); // (N, S), blank past each target's end
    // extended labels (N, L): blank at even positions, the labels at odd ones
    const ext = kd.full([N, S + 1], o.blank, { dtype: 'int64', device: dev });
    const extended = kd.stack([ext.narrow(1, 0, S), labels], 2).reshape([N, 2 * S]);
    const extL = kd.cat([extended, ext.narrow(1, S, 1)], 1);
    // a label may follow the label two states back when they differ (skipping the blank between)
    const skip = kd.cat([kd.zeros([N, 2], { dtype: 'bool', device: dev }),
      extL.narrow(1, 2, L - 2).ne(extL.narrow(1, 0, L - 2))], 1).logicalAnd(kd.arange(L, { device: dev }).remainder(2).eq(1).unsqueeze(0));
    const lpe = lp.gather(2, extL.unsqueeze(0).expand([T, N, L])); // (T, N, L) log-probabilities of the states
    const m = kd.noGrad(() => lpe.amax(2, true)).detach(); // (T, N, 1) per-step shift
    const p = lpe.sub(m).exp();
    const zero = kd.zeros([N, 1], { dtype: lp.dtype, device: dev });
    const zero2 = kd.zeros([N, 2], { dtype: lp.dtype, device: dev });
    const started = kd.arange(L, { device: dev }).lt(2).unsqueeze(0);
    const lens = kd.tensor(inLen, { dtype: 'int64', device: dev });
    let alpha = null;
    let logScale = kd.zeros([N], { dtype: lp.dtype, device: dev });
    for (let t = 0; t < T; t++) {
      const pt = p.select(0, t);
      let a;
      if (alpha === null) {
        a = kd.where(started, pt, 0);
      } else {
        const s1 = kd.cat([zero, alpha.narrow(1, 0, L - 1)], 1);
        const s2 = kd.cat([zero2, alpha.narrow(1, 0, L - 2)], 1);
        a = alpha.add(s1).add(kd.where(skip, s2, 0)).mul(pt);
      }
      const c = a.sum(1);
      const live = c.gt(0);
      const cs = kd.where(live, c, 1);
      const active = lens.gt(t);
      const next = a.div(cs.unsqueeze(1));
      alpha = alpha === null ? kd.where(active.unsqueeze(1), next, started.to(lp.dtype).expand([N, L])) : kd.where(active.unsqueeze(1), next, alpha);
      const stepLog = kd.where(live, cs.log(), -Infinity).add(m.select(0, t).squeeze(1));
      logScale = logScale.add(kd.where(active, stepLog, 0));
    }
    let loss;
    if (T === 0 || alpha === null) {
      loss = kd.full([N], Infinity, { dtype: lp.dtype, device: dev });
    } else {
      const last = tl.mul(2);
      const endBlank = alpha.gather(1, last);
      const endLabel = kd.where(tl.gt(0), alpha.gather(1, last.sub(1).clampMin(0)), 0);
      const end = endBlank.add(endLabel).squeeze(1);
      const endLive = end.gt(0);
      const logEnd = kd.where(endLive, kd.where(endLive, end, 1).log(), -Infinity);
      // an input of length 0 reads the initial state: only an empty target is possible (p = 1)
      const empty = lens.eq(0);
      loss = kd.where(empty, kd.where(tl.squeeze(1).eq(0), 0, Infinity), logEnd.add(logScale).neg());
    }
    // PyTorch's gradient for logProbs is exp(logProbs) - occupancy (the gradient through a
    // logSoftmax taken as given): a term of value 0 whose gradient is exp(logProbs) where t < inputLength
    const inTime = kd.arange(T, { device: dev }).unsqueeze(1).lt(lens.unsqueeze(0)).unsqueeze(2);
    const mass = kd.where(inTime, lp.exp(), 0).sum([0, 2]);
    loss = loss.add(mass.sub(mass.detach()));
    if (o.zeroInfinity) loss = kd.where(loss.isinf(), 0, loss);
    if (o.reduction === 'mean') {
      const d = kd.tensor(tLen.map((x) => Math.max(1, x)), { dtype: lp.dtype, device: dev });
      return loss.div(d).mean();
    }
    if (o.reduction === 'sum') return loss.sum();
    return unbatched ? loss.squeeze(0) : loss;
  };
};
