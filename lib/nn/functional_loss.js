// functional_loss.js - the loss and distance functions of kd.nn.functional that PyTorch 1.13 has
// beyond the generated ops: klDiv, huberLoss, poissonNllLoss, gaussianNllLoss,
// marginRankingLoss, hingeEmbeddingLoss, multilabelMarginLoss, softMarginLoss,
// multilabelSoftMarginLoss, cosineEmbeddingLoss, multiMarginLoss, tripletMarginLoss,
// tripletMarginWithDistanceLoss (distances: distance.js). Each follows
// ATen's (or torch.nn.functional's) formula with differentiable ops, so autograd and every device
// come with it. Arguments in PyTorch's order, the legacy sizeAverage/reduce included.
'use strict';

const { KindlingError } = require('../errors');

module.exports = function installFunctionalLoss(kd, nn, { parseArgs }) {
  const F = kd.nn.functional;
  const invalid = (msg) => new KindlingError(msg, 'KD_INVALID_ARGUMENT');
  const shapeError = (msg) => new KindlingError(msg, 'KD_SHAPE_MISMATCH');
  const fmt = (s) => `[${s.join(', ')}]`;

  /** PyTorch's reduction argument, with the legacy sizeAverage/reduce overriding it. */
  function reductionOf(o) {
    let r = o.reduction;
    if ((o.sizeAverage !== undefined && o.sizeAverage !== null) || (o.reduce !== undefined && o.reduce !== null)) {
      const sizeAverage = o.sizeAverage === null || o.sizeAverage === undefined ? true : o.sizeAverage;
      const reduce = o.reduce === null || o.reduce === undefined ? true : o.reduce;
      r = sizeAverage && reduce ? 'mean' : reduce ? 'sum' : 'none';
    }
    if (r !== 'none' && r !== 'mean' && r !== 'sum') throw invalid(`${r} is not a valid value for reduction`);
    return r;
  }
  const LEGACY = { sizeAverage: null, reduce: null, reduction: 'mean' };
  const reduce = (loss, r) => (r === 'mean' ? loss.mean() : r === 'sum' ? loss.sum() : loss);
  const tensorArg = (what, v) => {
    if (!(v instanceof kd.Tensor)) throw new kd.KindlingTypeError(`${what} must be a Tensor`);
    return v;
  };

  /** Kullback-Leibler divergence of target from input (log-probabilities).
   * klDiv(input, target, sizeAverage, reduce, reduction = 'mean', logTarget = false); 'batchmean' divides the sum by the batch size. */
  F.klDiv = function klDiv(input, target, ...args) {
    const o = parseArgs('klDiv()', args, ['sizeAverage', 'reduce', 'reduction', 'logTarget'], { ...LEGACY, logTarget: false });
    const batchmean = o.reduction === 'batchmean' && o.sizeAverage === null && o.reduce === null;
    const r = batchmean ? 'sum' : reductionOf(o);
    const loss = o.logTarget ? target.exp().mul(target.sub(input)) : kd.xlogy(target, target).sub(target.mul(input));
    const red = reduce(loss, r);
    return batchmean && input.ndim !== 0 ? red.div(input.shape[0]) : red;
  };

  /** 0.5 d^2 for |d| < delta, else delta (|d| - 0.5 delta), d = input - target.
   * huberLoss(input, target, reduction = 'mean', delta = 1). */
  F.huberLoss = function huberLoss(input, target, ...args) {
    const o = parseArgs('huberLoss()', args, ['reduction', 'delta'], { reduction: 'mean', delta: 1.0 });
    const r = reductionOf(o);
    if (!(o.delta > 0)) throw invalid('huber_loss does not support non-positive values for delta.');
    const d = input.sub(target);
    const a = d.abs();
    const loss = kd.where(a.lt(o.delta), d.mul(d).mul(0.5), a.sub(0.5 * o.delta).mul(o.delta));
    return reduce(loss, r);
  };

  /** Negative log-likelihood of Poisson counts target with rate exp(input) (logInput) or input.
   * poissonNllLoss(input, target, logInput = true, full = false, sizeAverage, eps = 1e-8, reduce, reduction = 'mean'). */
  F.poissonNllLoss = function poissonNllLoss(input, target, ...args) {
    const o = parseArgs('poissonNllLoss()', args, ['logInput', 'full', 'sizeAverage', 'eps', 'reduce', 'reduction'],
      { logInput: true, full: false, eps: 1e-8, ...LEGACY });
    const r = reductionOf(o);
    let loss = o.logInput ? input.exp().sub(target.mul(input)) : input.sub(target.mul(input.add(o.eps).log()));
    if (o.full) {
      // Stirling's approximation of log(target!), for target > 1
      const stirling = target.mul(target.log()).sub(target).add(target.mul(2 * Math.PI).log().mul(0.5));
      loss = loss.add(stirling.maskedFill(target.le(1), 0));
    }
    return reduce(loss, r);
  };

  /** Gaussian negative log-likelihood of target under N(input, var).
   * gaussianNllLoss(input, target, var, full = false, eps = 1e-6, reduction = 'mean'). */
  F.gaussianNllLoss = function gaussianNllLoss(input, target, variance, ...args) {
    const o = parseArgs('gaussianNllLoss()', args, ['full', 'eps', 'reduction'], { full: false, eps: 1e-6, reduction: 'mean' });
    let v = tensorArg('gaussianNllLoss(): var', variance);
    const is = input.shape;
    const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
    if (!same(v.shape, is)) {
      if (same(is.slice(0, -1), v.shape)) v = v.unsqueeze(-1);
      else if (!(v.ndim > 0 && same(is.slice(0, -1), v.shape.slice(0, -1)) && v.shape[v.ndim - 1] === 1)) throw invalid('var is of incorrect size');
    }
    if (o.reduction !== 'none' && o.reduction !== 'mean' && o.reduction !== 'sum') throw invalid(`${o.reduction} is not valid`);
    if (v.lt(0).any().item()) throw invalid('var has negative entry/entries');
    // clamped for stability; the clamp passes no gradient, as PyTorch's no_grad clamp_
    const clamped = v.add(kd.noGrad(() => v.clampMin(o.eps).sub(v)));
    let loss = clamped.log().add(input.sub(target).pow(2).div(clamped)).mul(0.5);
    if (o.full) loss = loss.add(0.5 * Math.log(2 * Math.PI));
    return reduce(loss, o.reduction);
  };

  /** max(0, -target * (input1 - input2) + margin).
   * marginRankingLoss(input1, input2, target, margin = 0, sizeAverage, reduce, reduction = 'mean'). */
  F.marginRankingLoss = function marginRankingLoss(input1, input2, target, ...args) {
    const o = parseArgs('marginRankingLoss()', args, ['margin', 'sizeAverage', 'reduce', 'reduction'], { margin: 0, ...LEGACY });
    const r = reductionOf(o);
    if (input1.ndim !== input2.ndim || input1.ndim !== target.ndim) {
      throw shapeError(`margin_ranking_loss : All input tensors should have same dimension but got sizes: input1: ${fmt(input1.shape)}, input2: ${fmt(input2.shape)}, target: ${fmt(target.shape)} `);
    }
    return reduce(target.neg().mul(input1.sub(input2)).add(o.margin).clampMin(0), r);
  };

  /** input where target is 1, max(0, margin - input) where target is -1.
   * hingeEmbeddingLoss(input, target, margin = 1, sizeAverage, reduce, reduction = 'mean'). */
  F.hingeEmbeddingLoss = function hingeEmbeddingLoss(input, target, ...args) {
    const o = parseArgs('hingeEmbeddingLoss()', args, ['margin', 'sizeAverage', 'reduce', 'reduction'], { margin: 1.0, ...LEGACY });
    const r = reductionOf(o);
    const marginClamp = input.neg().add(o.margin).clampMin(0);
    const outMargin = kd.where(target.ne(1), marginClamp, 0);
    const outSelf = kd.where(target.ne(-1), input, 0);
    return reduce(outMargin.add(outSelf), r);
  };

  /** Multi-class multi-label hinge loss; target holds class indices, ended by the first -1.
   * multilabelMarginLoss(input, target, sizeAverage, reduce, reduction = 'mean'). */
  F.multilabelMarginLoss = function multilabelMarginLoss(input, target, ...args) {
    const o = parseArgs('multilabelMarginLoss()', args, ['sizeAverage', 'reduce', 'reduction'], LEGACY);
    const r = reductionOf(o);
    const nd = input.ndim;
    if (!((nd <= 1 && input.numel() !== 0) || (nd === 2 && input.shape[1] !== 0))) {
      throw shapeError(`Expected non-empty vector or matrix with optional 0-dim batch size, but got: ${fmt(input.shape)}`);
    }
    const c = nd === 0 ? 1 : input.shape[nd - 1];
    const same = target.ndim === input.ndim && target.shape.every((s, i) => s === input.shape[i]);
    if (!same) throw shapeError(`inconsistent size ${fmt(target.shape)} for argument #2 'target'`);
    const x = input.reshape([-1, c]);
    const t = target.reshape([-1, c]);
    const valid = t.ge(0).to('int64').cumprod(1).to('bool'); // targets before the first -1
    const idx = t.clampMin(0);
    // the classes that are targets of each row (slots after the first -1 add nothing)
    const hits = kd.zeros(x.shape, { dtype: x.dtype, device: x.device }).scatterAdd(1, idx, valid.to(x.dtype)).gt(0);
    const xy = x.gather(1, idx); // [n, c]: input at each target slot
    const pair = xy.unsqueeze(2).neg().add(x.unsqueeze(1)).add(1).clampMin(0); // [n, j, i]
    const keep = valid.unsqueeze(2).logicalAnd(hits.logicalNot().unsqueeze(1));
    let loss = kd.where(keep, pair, 0).sum([1, 2]).div(c);
    loss = nd <= 1 ? loss.reshape([]) : loss;
    return reduce(loss, r);
  };

  /** log(1 + exp(-target * input)). softMarginLoss(input, target, sizeAverage, reduce, reduction = 'mean'). */
  F.softMarginLoss = function softMarginLoss(input, target, ...args) {
    const o = parseArgs('softMarginLoss()', args, ['sizeAverage', 'reduce', 'reduction'], LEGACY);
    const r = reductionOf(o);
    return reduce(input.neg().mul(target).exp().log1p(), r);
  };

  /** One-versus-all logistic loss averaged over the classes (last dim).
   * multilabelSoftMarginLoss(input, target, weight = null, sizeAverage, reduce, reduction = 'mean'). */
  F.multilabelSoftMarginLoss = function multilabelSoftMarginLoss(input, target, ...args) {
    const o = parseArgs('multilabelSoftMarginLoss()', args, ['weight', 'sizeAverage', 'reduce', 'reduction'], { weight: null, ...LEGACY });
    const r = reductionOf(o);
    let loss = target.mul(kd.logsigmoid(input)).add(target.neg().add(1).mul(kd.logsigmoid(input.neg()))).neg();
    if (o.weight) loss = loss.mul(o.weight);
    const cd = input.ndim - 1;
    loss = loss.sum(cd).div(input.shape[cd]);
    return reduce(loss, r);
  };

  /** 1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where it is -1.
   * cosineEmbeddingLoss(input1, input2, target, margin = 0, sizeAverage, reduce, reduction = 'mean'). */
  F.cosineEmbeddingLoss = function cosineEmbeddingLoss(input1, input2, target, ...args) {
    const o = parseArgs('cosineEmbeddingLoss()', args, ['margin', 'sizeAverage', 'reduce', 'reduction'], { margin: 0, ...LEGACY });
    const r = reductionOf(o);
    const td = target.ndim;
    if (td > 1) throw new KindlingError('0D or 1D target tensor expected, multi-target not supported', 'KD_NOT_SUPPORTED');
    if (td === 1 && (input1.ndim !== 2 || input2.ndim !== 2)) {
      throw shapeError(`1D target tensor expects 2D input tensors, but found inputs with sizes ${fmt(input1.shape)} and ${fmt(input2.shape)}.`);
    }
    if (td === 0 && (input1.ndim !== 1 || input2.ndim !== 1)) {
      throw shapeError(`0D target tensor expects 1D input tensors, but found inputs with sizes ${fmt(input1.shape)} and ${fmt(input2.shape)}.`);
    }
    const EPS = 1e-12;
    const prod = input1.mul(input2).sum(td);
    const m1 = input1.mul(input1).sum(td).add(EPS);
    const m2 = input2.mul(input2).sum(td).add(EPS);
    const cos = prod.div(m1.mul(m2).sqrt());
    const pos = cos.neg().add(1);
    const neg = cos.sub(o.margin).clampMin(0);
    return reduce(kd.where(target.eq(1), pos, 0).add(kd.where(target.eq(-1), neg, 0)), r);
  };

  /** Multi-class hinge loss: sum over i != y of max(0, margin - x[y] + x[i])^p (times weight[y]) / C.
   * multiMarginLoss(input, target, p = 1, margin = 1, weight = null, sizeAverage, reduce, reduction = 'mean'). */
  F.multiMarginLoss = function multiMarginLoss(input, target, ...args) {
    const o = parseArgs('multiMarginLoss()', args, ['p', 'margin', 'weight', 'sizeAverage', 'reduce', 'reduction'],
      { p: 1, margin: 1, weight: null, ...LEGACY });
    const r = reductionOf(o);
    if (o.p !== 1 && o.p !== 2) throw invalid('only p == 1 and p == 2 supported');
    if (o.weight && o.weight.ndim !== 1) throw invalid('weight must be one-dimensional');
    const nd = input.ndim;
    if (!((nd <= 1 && input.numel() !== 0) || (nd === 2 && input.shape[1] !== 0))) {
      throw shapeError(`Expected non-empty vector or matrix with optional 0-dim batch size, but got: ${fmt(input.shape)}`);
    }
    const c = nd === 0 ? 1 : input.shape[nd - 1];
    const n = nd === 2 ? input.shape[0] : 1;
    if (!(target.ndim <= 1 && target.numel() === n)) throw shapeError(`inconsistent target size, got: ${fmt(target.shape)}`);
    if (o.weight && o.weight.numel() !== c) throw shapeError(`inconsistent weight size, expected ${c} but got ${fmt(o.weight.shape)}`);
    const x = input.reshape([n, c]);
    const y = target.reshape([n, 1]);
    let z = x.sub(x.gather(1, y)).add(o.margin).clampMin(0);
    if (o.p === 2) z = z.mul(z);
    if (o.weight) z = z.mul(o.weight.gather(0, y.reshape([n])).unsqueeze(1));
    const isY = kd.arange(c, { device: x.device }).unsqueeze(0).eq(y);
    let loss = kd.where(isY, 0, z).sum(1).div(c);
    if (nd <= 1) loss = loss.reshape([]);
    return reduce(loss, r);
  };

  function checkTripletDims(a, p, n, msg) {
    if (a.ndim !== p.ndim || p.ndim !== n.ndim) throw shapeError(msg(a.ndim, p.ndim, n.ndim));
  }

  /** max(d(a, p) - d(a, n) + margin, 0), d the pairwise p-norm distance.
   * tripletMarginLoss(anchor, positive, negative, margin = 1, p = 2, eps = 1e-6, swap = false, sizeAverage, reduce, reduction = 'mean'). */
  F.tripletMarginLoss = function tripletMarginLoss(anchor, positive, negative, ...args) {
    const o = parseArgs('tripletMarginLoss()', args, ['margin', 'p', 'eps', 'swap', 'sizeAverage', 'reduce', 'reduction'],
      { margin: 1.0, p: 2, eps: 1e-6, swap: false, ...LEGACY });
    const r = reductionOf(o);
    checkTripletDims(anchor, positive, negative, (a, p, n) => `All inputs should have same dimension but got ${a}D, ${p}D and ${n}D inputs.`);
    const dPos = F.pairwiseDistance(anchor, positive, o.p, o.eps);
    let dNeg = F.pairwiseDistance(anchor, negative, o.p, o.eps);
    if (o.swap) dNeg = kd.minimum(dNeg, F.pairwiseDistance(positive, negative, o.p, o.eps));
    return reduce(dPos.sub(dNeg).add(o.margin).clampMin(0), r);
  };

  /** tripletMarginLoss with any distance function (default pairwiseDistance).
   * tripletMarginWithDistanceLoss(anchor, positive, negative, {distanceFunction = null, margin = 1, swap = false, reduction = 'mean'}). */
  F.tripletMarginWithDistanceLoss = function tripletMarginWithDistanceLoss(anchor, positive, negative, ...args) {
    const o = parseArgs('tripletMarginWithDistanceLoss()', args, [],
      { distanceFunction: null, margin: 1.0, swap: false, reduction: 'mean' });
    const r = reductionOf(o);
    checkTripletDims(anchor, positive, negative, (a, p, n) => `The anchor, positive, and negative tensors are expected to have the same number of dimensions, but got: anchor ${a}D, positive ${p}D, and negative ${n}D inputs`);
    const dist = o.distanceFunction || ((x, y) => F.pairwiseDistance(x, y));
    if (typeof dist !== 'function') throw new kd.KindlingTypeError('tripletMarginWithDistanceLoss(): distanceFunction must be a function');
    const dPos = dist(anchor, positive);
    let dNeg = dist(anchor, negative);
    if (o.swap) dNeg = kd.minimum(dNeg, dist(positive, negative));
    return reduce(dPos.sub(dNeg).add(o.margin).clampMin(0), r);
  };

  return { reductionOf, LEGACY };
};
