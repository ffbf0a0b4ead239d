// utils.js - kd.nn.utils: gradient clipping (clipGradNorm_, clipGradValue_) and flattening
// parameters to one vector and back (parametersToVector, vectorToParameters).
'use strict';

const { KindlingError, typeError } = require('../errors');

module.exports = function installUtils(kd, nn, { parseArgs, typeName }) {
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
      const device = grads[0].device;
      const norms = grads.map((g) => (normType === Infinity ? g.abs().max() : g.norm(normType)).to(device));
      const total = normType === Infinity
        ? (norms.length === 1 ? norms[0] : kd.stack(norms).max())
        : kd.stack(norms).norm(normType);
      // the only read of the device: the check asked for (as PyTorch's)
      if (o.errorIfNonfinite && !Number.isFinite(total.item())) {
        throw new KindlingError(`The total norm of order ${normType} for gradients from \`parameters\` is non-finite, so it cannot be clipped. To disable this error and scale the gradients by the non-finite norm anyway, set \`errorIfNonfinite=false\``, 'KD_INVALID_ARGUMENT');
      }
      // maxNorm / (total + 1e-6), at most 1, as a tensor: no wait for the device
      const coef = total.add(1e-6).reciprocal().mul(o.maxNorm).clamp({ max: 1.0 });
      for (const g of grads) g.mul_(coef.to(g.device));
      return total;
    }));
  }

  /** Clamps the gradients of parameters in place to [-clipValue, clipValue]. */
  function clipGradValue_(parameters, clipValue) {
    if (typeof clipValue !== 'number') throw typeError('clipGradValue_(): clipValue must be a number');
    const v = clipValue; // as PyTorch: a negative clipValue clamps everything to it
    kd.noGrad(() => {
      for (const p of asList(parameters, 'clipGradValue_')) {
        const g = p.grad;
        if (g !== null) g.clamp_(-v, v);
      }
    });
  }

  // PyTorch's _check_param_device: every parameter on one device.
  function checkSameDevice(ps) {
    for (const p of ps) {
      if (p.device === ps[0].device) continue;
      const gpu = (d) => d.startsWith('cuda');
      throw new KindlingError(gpu(p.device) && gpu(ps[0].device) ? 'Found two parameters on different GPU devices, this is currently not supported.'
        : 'Found one parameter on GPU and one on CPU, this is currently not supported.', 'KD_DEVICE_MISMATCH');
    }
  }

  /** The parameters flattened and concatenated into one 1-D tensor. */
  function parametersToVector(parameters) {
    const ps = asList(parameters, 'parametersToVector');
    checkSameDevice(ps);
    return kd.tidy(() => kd.cat(ps.map((p) => p.reshape([-1]))));
  }

  /**
   * Gives the parameters the consecutive slices of vec as their data (p.data = slice, as
   * PyTorch: the parameters then share vec's storage and take its dtype).
   */
  function vectorToParameters(vec, parameters) {
    if (!(vec instanceof Tensor)) throw typeError(`expected torch.Tensor, but got: ${typeName(vec)}`);
    const ps = asList(parameters, 'vectorToParameters');
    checkSameDevice([vec, ...ps]);
    const total = ps.reduce((n, p) => n + p.numel(), 0);
    if (vec.ndim !== 1 || vec.shape[0] < total) {
      throw new KindlingError(`vectorToParameters: vec has ${vec.numel()} elements, the parameters ${total}`, 'KD_SHAPE_MISMATCH');
    }
    kd.noGrad(() => kd.tidy(() => {
      let off = 0;
      for (const p of ps) {
        const n = p.numel();
        p.data = vec.narrow(0, off, n).view(p.shape);
        off += n;
      }
    }));
  }

  let warned = false;
  /** PyTorch's deprecated name of clipGradNorm_ (it warns once). */
  function clipGradNorm(...args) {
    if (!warned) {
      warned = true;
      process.emitWarning('torch.nn.utils.clip_grad_norm is now deprecated in favor of torch.nn.utils.clip_grad_norm_.',
        { type: 'DeprecationWarning', code: 'KD_DEPRECATED' });
    }
    return clipGradNorm_(...args);
  }

  nn.utils = Object.assign(nn.utils || {}, { clipGradNorm_, clipGradNorm, clipGradValue_, parametersToVector, vectorToParameters });
  return nn.utils;
};
