// loss_extra.js - the kd.nn loss modules of PyTorch 1.13 beyond loss.js: KLDivLoss, HuberLoss,
// PoissonNLLLoss, GaussianNLLLoss, MarginRankingLoss, HingeEmbeddingLoss, MultiLabelMarginLoss,
// SoftMarginLoss, MultiLabelSoftMarginLoss, CosineEmbeddingLoss, MultiMarginLoss,
// TripletMarginLoss, TripletMarginWithDistanceLoss and CTCLoss, over kd.nn.functional, with
// PyTorch's constructor arguments (the legacy sizeAverage/reduce fold into reduction, as in
// PyTorch's _Loss). Class weights are buffers, as in PyTorch.
'use strict';

const { KindlingError } = require('../errors');

module.exports = function installLossExtra(kd, nn, { Module, parseArgs }) {
  const F = kd.nn.functional;
  const LEGACY = { sizeAverage: null, reduce: null, reduction: 'mean' };

  function reductionOf(o, extra = []) {
    let r = o.reduction;
    if (o.sizeAverage !== null || o.reduce !== null) {
      const sa = o.sizeAverage === null ? true : o.sizeAverage;
      const rd = o.reduce === null ? true : o.reduce;
      r = sa && rd ? 'mean' : rd ? 'sum' : 'none';
    }
    if (!['none', 'mean', 'sum', ...extra].includes(r)) throw new KindlingError(`${r} is not a valid value for reduction`, 'KD_INVALID_ARGUMENT');
    return r;
  }

  // One loss class: `names` are the constructor's positional arguments (PyTorch's order), `kw`
  // keyword-only ones with their defaults; setup(self, options) stores what forward reads.
  function make(name, names, defaults, setup, forward, extra = []) {
    return {
      [name]: class extends Module {
        constructor(...args) {
          super();
          const o = parseArgs(`${name}()`, args, names, { ...LEGACY, ...defaults });
          o.reduction = reductionOf(o, extra);
          this.reduction = o.reduction;
          setup(this, o);
        }
        forward(...inputs) { return forward(this, ...inputs); }
      },
    }[name];
  }
  const L = ['sizeAverage', 'reduce', 'reduction'];
  const keep = (...keys) => (s, o) => { for (const k of keys) s[k] = o[k]; };
  const noSetup = () => {};

  /** KLDivLoss(sizeAverage, reduce, reduction = 'mean', logTarget = false). */
  const KLDivLoss = make('KLDivLoss', [...L, 'logTarget'], { logTarget: false }, keep('logTarget'),
    (s, x, y) => F.klDiv(x, y, { reduction: s.reduction, logTarget: s.logTarget }), ['batchmean']);
  /** HuberLoss(reduction = 'mean', delta = 1). */
  const HuberLoss = make('HuberLoss', ['reduction', 'delta'], { delta: 1.0 }, keep('delta'),
    (s, x, y) => F.huberLoss(x, y, s.reduction, s.delta));
  /** PoissonNLLLoss(logInput = true, full = false, sizeAverage, eps = 1e-8, reduce, reduction = 'mean'). */
  const PoissonNLLLoss = make('PoissonNLLLoss', ['logInput', 'full', 'sizeAverage', 'eps', 'reduce', 'reduction'],
    { logInput: true, full: false, eps: 1e-8 }, keep('logInput', 'full', 'eps'),
    (s, x, y) => F.poissonNllLoss(x, y, s.logInput, s.full, { eps: s.eps, reduction: s.reduction }));
  /** GaussianNLLLoss({full = false, eps = 1e-6, reduction = 'mean'}); called as loss(input, target, var). */
  const GaussianNLLLoss = make('GaussianNLLLoss', [], { full: false, eps: 1e-6 }, keep('full', 'eps'),
    (s, x, y, v) => F.gaussianNllLoss(x, y, v, s.full, s.eps, s.reduction));
  /** MarginRankingLoss(margin = 0, sizeAverage, reduce, reduction = 'mean'); loss(input1, input2, target). */
  const MarginRankingLoss = make('MarginRankingLoss', ['margin', ...L], { margin: 0.0 }, keep('margin'),
    (s, a, b, y) => F.marginRankingLoss(a, b, y, s.margin, { reduction: s.reduction }));
  /** HingeEmbeddingLoss(margin = 1, sizeAverage, reduce, reduction = 'mean'). */
  const HingeEmbeddingLoss = make('HingeEmbeddingLoss', ['margin', ...L], { margin: 1.0 }, keep('margin'),
    (s, x, y) => F.hingeEmbeddingLoss(x, y, s.margin, { reduction: s.reduction }));
  /** MultiLabelMarginLoss(sizeAverage, reduce, reduction = 'mean'). */
  const MultiLabelMarginLoss = make('MultiLabelMarginLoss', L, {}, noSetup,
    (s, x, y) => F.multilabelMarginLoss(x, y, { reduction: s.reduction }));
  /** SoftMarginLoss(sizeAverage, reduce, reduction = 'mean'). */
  const SoftMarginLoss = make('SoftMarginLoss', L, {}, noSetup,
    (s, x, y) => F.softMarginLoss(x, y, { reduction: s.reduction }));
  /** MultiLabelSoftMarginLoss(weight = null, sizeAverage, reduce, reduction = 'mean'). */
  const MultiLabelSoftMarginLoss = make('MultiLabelSoftMarginLoss', ['weight', ...L], { weight: null },
    (s, o) => { s.registerBuffer('weight', o.weight || null); },
    (s, x, y) => F.multilabelSoftMarginLoss(x, y, s.weight, { reduction: s.reduction }));
  /** CosineEmbeddingLoss(margin = 0, sizeAverage, reduce, reduction = 'mean'); loss(input1, input2, target). */
  const CosineEmbeddingLoss = make('CosineEmbeddingLoss', ['margin', ...L], { margin: 0.0 }, keep('margin'),
    (s, a, b, y) => F.cosineEmbeddingLoss(a, b, y, s.margin, { reduction: s.reduction }));
  /** MultiMarginLoss(p = 1, margin = 1, weight = null, sizeAverage, reduce, reduction = 'mean'). */
  const MultiMarginLoss = make('MultiMarginLoss', ['p', 'margin', 'weight', ...L], { p: 1, margin: 1.0, weight: null },
    (s, o) => {
      if (o.p !== 1 && o.p !== 2) throw new KindlingError('only p == 1 and p == 2 supported', 'KD_INVALID_ARGUMENT');
      if (o.weight && o.weight.ndim !== 1) throw new KindlingError('weight must be one-dimensional', 'KD_INVALID_ARGUMENT');
      s.p = o.p; s.margin = o.margin; s.registerBuffer('weight', o.weight || null);
    },
    (s, x, y) => F.multiMarginLoss(x, y, s.p, s.margin, s.weight, { reduction: s.reduction }));
  /** TripletMarginLoss(margin = 1, p = 2, eps = 1e-6, swap = false, sizeAverage, reduce, reduction = 'mean'). */
  const TripletMarginLoss = make('TripletMarginLoss', ['margin', 'p', 'eps', 'swap', ...L], { margin: 1.0, p: 2.0, eps: 1e-6, swap: false },
    keep('margin', 'p', 'eps', 'swap'),
    (s, a, p, n) => F.tripletMarginLoss(a, p, n, s.margin, s.p, s.eps, s.swap, { reduction: s.reduction }));
  /** TripletMarginWithDistanceLoss({distanceFunction = null, margin = 1, swap = false, reduction = 'mean'}). */
  const TripletMarginWithDistanceLoss = make('TripletMarginWithDistanceLoss', [], { distanceFunction: null, margin: 1.0, swap: false },
    (s, o) => {
      if (!(o.margin > 0)) throw new KindlingError(`TripletMarginWithDistanceLoss: expected margin to be greater than 0, got ${o.margin} instead`, 'KD_INVALID_ARGUMENT');
      s.distanceFunction = o.distanceFunction; s.margin = o.margin; s.swap = o.swap;
    },
    (s, a, p, n) => F.tripletMarginWithDistanceLoss(a, p, n,
      { distanceFunction: s.distanceFunction, margin: s.margin, swap: s.swap, reduction: s.reduction }));
  /** CTCLoss(blank = 0, reduction = 'mean', zeroInfinity = false); loss(logProbs, targets, inputLengths, targetLengths). */
  const CTCLoss = make('CTCLoss', ['blank', 'reduction', 'zeroInfinity'], { blank: 0, zeroInfinity: false }, keep('blank', 'zeroInfinity'),
    (s, lp, t, il, tl) => F.ctcLoss(lp, t, il, tl, s.blank, s.reduction, s.zeroInfinity));

  Object.assign(nn, {
    KLDivLoss, HuberLoss, PoissonNLLLoss, GaussianNLLLoss, MarginRankingLoss, HingeEmbeddingLoss, MultiLabelMarginLoss,
    SoftMarginLoss, MultiLabelSoftMarginLoss, CosineEmbeddingLoss, MultiMarginLoss, TripletMarginLoss,
    TripletMarginWithDistanceLoss, CTCLoss,
  });
};
