// utils.js - kd.nn.utils: gradient clipping (clipGradNorm_, clipGradValue_) and flattening
// parameters to one vector and back (parametersToVector, vectorToParameters).
'use strict';

const { KindlingError, typeError } = require('../errors');

module.exports = function installUtils(kd, nn, { parseArgs }) {
  const { Tensor } = kd;
  const asList = (params, what) => {
    if (params instanceof Tensor) return [params];
    if (params === null || params === undefined || typeof params[Symbol.iterator] !== 'function') {
      throw typeError(`${what}: parameters must be a Tensor or an iterable of Tensors`);
    }
    return [...params];
  };

  /**
   * Scales the gradients of parameters in place so that their joint normType-norm is at most
   * maxNorm. Returns the total norm (before clipping) as a 0-d tensor. clipGradNorm_(params,
   * maxNorm, normType = 2, {errorIfNonfinite = false}); normType may be Infinity.
   */
  function clipGradNorm_(parameters, ...rest) {
    const o = parseArgs('clipGradNorm_()', rest, ['maxNorm', 'normType', 'errorIfNonfinite'], { normType: 2, errorIfNonfinite: false, foreach: null });
    let normType = o.normType;
    if (normType === 'inf') normType = Infinity;
    const params = asList(parameters, 'clipGradNorm_');
    // Every tensor made here but the returned norm (the per-gradient norms, their stack, the
    // gradient handles read) is disposed when the tidy scope closes.
    return kd.noGrad(() => kd.tidy(() => {
      const grads = params.map((p) => p.grad).filter((g) => g !== null);
      if (grads.length === 0) return kd.tensor(0.0);
      const norms = grads.map((g) => g.norm(normType));
      const total = normType === Infinity
        ? (norms.length === 1 ? norms[0] : kd.stack(norms.map((n) => n.to(norms[0].device))).max())
        : kd.stack(norms.map((n) => n.to(norms[0].device))).norm(normType);
      const t = total.item();
      if (o.errorIfNonfinite && !Number.isFinite(t)) {
        throw new KindlingError(`The total norm of order ${normType} for gradients from \`parameters\` is non-finite, so it cannot be clipped. To disable this error and scale the gradients by the non-finite norm anyway, set \`errorIfNonfinite=false\``, 'KD_INVALID_ARGUMENT');
      }
      const coef = Math.min(o.maxNorm / (t + 1e-6), 1.0);
      for (const g of grads) g.mul_(coef);
      return total;
    }));
  }

  /** Clamps the gradients of parameters in place to [-clipValue, clipValue]. */
  function clipGradValue_(parameters, clipValue) {
    if (typeof clipValue !== 'number') throw typeError('clipGradValue_(): clipValue must be a number');
    const v = Math.abs(clipValue);
    kd.noGrad(() => {
      for (const p of asList(parameters, 'clipGradValue_')) {
        const g = p.grad;
        if (g !== null) g.clamp_(-v, v);
      }
    });
  }

  /** The parameters flattened and concatenated into one 1-D tensor. */
  function parametersToVector(parameters) {
    const ps = asList(parameters, 'parametersToVector');
    return kd.tidy(() => kd.cat(ps.map((p) => p.reshape([-1]))));
  }

  /** Copies the consecutive slices of vec into the parameters (in place). */
  function vectorToParameters(vec, parameters) {
    if (!(vec instanceof Tensor)) throw typeError(`expected torch.Tensor, but got: ${typeof vec}`);
    const ps = asList(parameters, 'vectorToParameters');
    const total = ps.reduce((n, p) => n + p.numel(), 0);
    if (vec.ndim !== 1 || vec.shape[0] !== total) {
      throw new KindlingError(`vectorToParameters: vec has ${vec.numel()} elements, the parameters ${total}`, 'KD_SHAPE_MISMATCH');
    }
    kd.noGrad(() => kd.tidy(() => {
      let off = 0;
      for (const p of ps) {
        const n = p.numel();
        p.copy_(vec.narrow(0, off, n).view(p.shape));
        off += n;
      }
    }));
  }

  nn.utils = { clipGradNorm_, clipGradValue_, parametersToVector, vectorToParameters };
  return nn.utils;
};
