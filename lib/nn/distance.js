// distance.js - kd.nn.functional.pairwiseDistance, cosineSimilarity and pdist, and the modules
// PairwiseDistance and CosineSimilarity, with PyTorch 1.13's arguments, formulas and errors, as
// compositions of differentiable ops.
'use strict';

const { KindlingError } = require('../errors');

module.exports = function installDistance(kd, nn, { Module, parseArgs }) {
  const F = kd.nn.functional;
  const invalid = (msg) => new KindlingError(msg, 'KD_INVALID_ARGUMENT');
  const shapeError = (msg) => new KindlingError(msg, 'KD_SHAPE_MISMATCH');

  /** ||x1 - x2 + eps||_p over the last dim. pairwiseDistance(x1, x2, p = 2, eps = 1e-6, keepdim = false). */
  F.pairwiseDistance = function pairwiseDistance(x1, x2, ...args) {
    const o = parseArgs('pairwiseDistance()', args, ['p', 'eps', 'keepdim'], { p: 2.0, eps: 1e-6, keepdim: false });
    const d = Math.max(x1.ndim, x2.ndim);
    const diff = x1.sub(x2).add(o.eps);
    if (d === 0) return diff.abs();
    return diff.norm(o.p, d - 1, o.keepdim);
  };

  /** sum(x1 * x2) / sqrt(max(|x1|^2 |x2|^2, eps^2)) along dim. cosineSimilarity(x1, x2, dim = 1, eps = 1e-8). */
  F.cosineSimilarity = function cosineSimilarity(x1, x2, ...args) {
    const o = parseArgs('cosineSimilarity()', args, ['dim', 'eps'], { dim: 1, eps: 1e-8 });
    const float = (t) => (['float32', 'float64', 'float16', 'bfloat16'].includes(t.dtype) ? t : t.to('float32'));
    const a = float(x1);
    const b = float(x2);
    const x12 = a.mul(b).sum(o.dim);
    const n1 = a.mul(a).sum(o.dim);
    const n2 = b.mul(b).sum(o.dim);
    return x12.div(n1.mul(n2).clampMin(o.eps * o.eps).sqrt());
  };

  /** The p-norm distances between the rows of a 2-D input, pairs i < j in row-major order. pdist(input, p = 2). */
  F.pdist = function pdist(input, ...args) {
    const { p } = parseArgs('pdist()', args, ['p'], { p: 2 });
    if (input.ndim !== 2) throw shapeError(`pdist only supports 2D tensors, got: ${input.ndim}D`);
    if (!['float32', 'float64', 'float16', 'bfloat16'].includes(input.dtype)) throw invalid('pdist only supports floating-point dtypes');
    if (!(p >= 0)) throw invalid('pdist only supports non-negative p values');
    const n = input.shape[0];
    const ij = kd.triuIndices(n, n, 1, { device: input.device });
    const [i, j] = ij.unbind(0);
    return input.indexSelect(0, i).sub(input.indexSelect(0, j)).norm(p, 1);
  };

  /** ||x1 - x2 + eps||_p over the last dim. PairwiseDistance(p = 2, eps = 1e-6, keepdim = false). */
  class PairwiseDistance extends Module {
    constructor(...args) {
      super();
      const o = parseArgs('PairwiseDistance()', args, ['p', 'eps', 'keepdim'], { p: 2.0, eps: 1e-6, keepdim: false });
      this.norm = o.p;
      this.eps = o.eps;
      this.keepdim = o.keepdim;
    }
    forward(x1, x2) { return F.pairwiseDistance(x1, x2, this.norm, this.eps, this.keepdim); }
  }
  /** Cosine similarity along dim. CosineSimilarity(dim = 1, eps = 1e-8). */
  class CosineSimilarity extends Module {
    constructor(...args) {
      super();
      const o = parseArgs('CosineSimilarity()', args, ['dim', 'eps'], { dim: 1, eps: 1e-8 });
      this.dim = o.dim;
      this.eps = o.eps;
    }
    forward(x1, x2) { return F.cosineSimilarity(x1, x2, this.dim, this.eps); }
  }
  Object.assign(nn, { PairwiseDistance, CosineSimilarity });
};
