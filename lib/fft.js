// fft.js - kd.fft's helpers that need no transform, as torch.fft's (PyTorch 1.13, camelCased):
//
//   kd.fft.fftfreq(n, d = 1, { dtype, device, requiresGrad })   // [0, 1, ..., -(n/2), ..., -1] / (d * n)
//   kd.fft.rfftfreq(n, d = 1, { dtype, device, requiresGrad })  // [0, 1, ..., n/2] / (d * n)
//   kd.fft.fftshift(input, dim)    // roll each dim (all when dim is null) by floor(size / 2)
//   kd.fft.ifftshift(input, dim)   // its inverse: roll by -floor(size / 2)
//
// The frequencies are made in the requested floating dtype (default: the default dtype), the
// shifts are kd.roll, so they are differentiable and work on every device.
'use strict';

const { makeError, typeError } = require('./errors');

module.exports = function makeFft(kd) {
  function freqs(name, n, d, options, values) {
    if (typeof d === 'object' && d !== null) { options = d; d = 1; }
    if (!Number.isInteger(n)) throw typeError(`${name}(): argument 'n' must be int, not ${typeof n}`);
    if (typeof d !== 'number') throw typeError(`${name}(): argument 'd' must be float, not ${typeof d}`);
    if (n < 0) throw makeError('KD_INVALID_ARGUMENT', `Trying to create tensor with negative dimension ${n}: [${n}]`);
    const { dtype = null, device = null, requiresGrad = false } = options || {};
    const out = dtype === null ? kd.zeros([0]).dtype : dtype;
    if (!/^float(16|32|64)$|^bfloat16$/.test(kd.zeros([0], { dtype: out }).dtype)) {
      throw makeError('KD_DTYPE_MISMATCH', `${name} requires a floating point or complex dtype`);
    }
    const scale = 1 / (n * d);
    const t = kd.tensor(values.map((v) => v * scale), { dtype: out, ...(device === null ? {} : { device }) });
    return requiresGrad ? t.requiresGrad_(true) : t;
  }

  function fftfreq(n, d = 1, options = {}) {
    const v = [];
    for (let i = 0; i < n; i++) v.push(i <= Math.floor((n - 1) / 2) ? i : i - n);
    return freqs('fftfreq', n, d, options, v);
  }

  function rfftfreq(n, d = 1, options = {}) {
    const v = [];
    for (let i = 0; i <= Math.floor(n / 2); i++) v.push(i);
    return freqs('rfftfreq', n, d, options, Number.isInteger(n) && n >= 0 ? v : []);
  }

  function shift(input, dim, sign) {
    let dims = dim === null || dim === undefined ? [...Array(input.ndim).keys()] : dim;
    if (!Array.isArray(dims)) dims = [dims];
    const size = (k) => input.shape[k < 0 ? k + input.ndim : k];
    // roll checks the dims (PyTorch's IndexError) before any size is read
    const shifts = dims.map((k) => {
      const s = size(k);
      return s === undefined ? 0 : sign * Math.floor(s / 2);
    });
    return kd.roll(input, shifts, dims);
  }

  return {
    fftfreq,
    rfftfreq,
    fftshift: (input, dim = null) => shift(input, dim, 1),
    ifftshift: (input, dim = null) => shift(input, dim, -1),
  };
};
