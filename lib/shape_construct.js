// shape_construct.js - kd.tensordot(a, b, dims): PyTorch's Python-level dims argument (an int n:
// the last n dims of a with the first n of b; or a pair of dim lists, or of single dims) turned
// into the two dim lists of the native op (kd._internal.tensordot, src/ops/shape_construct.c).
'use strict';

const { KindlingError, typeError } = require('./errors');

module.exports = function installShapeConstruct(kd) {
  const raw = kd._internal.tensordot;
  const isOptions = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof kd.Tensor);
  const asList = (d) => (Number.isInteger(d) ? [d] : d);

  /**
   * Contracts dims of a with dims of b: `dims` = n sums the last n dims of a with the first n of
   * b (default 2); `[dimsA, dimsB]` pairs the listed dims.
   */
  kd.tensordot = function tensordot(a, b, dims, options) {
    if (isOptions(dims) && options === undefined) {
      options = dims;
      dims = undefined;
    }
    if (options !== undefined) {
      if (!isOptions(options)) throw typeError('tensordot(): the last argument must be an options object');
      for (const k of Object.keys(options)) if (k !== 'dims') throw typeError(`tensordot(): unexpected option '${k}'`);
      if (options.dims !== undefined) {
        if (dims !== undefined) throw typeError("tensordot(): got multiple values for argument 'dims'");
        dims = options.dims;
      }
    }
    if (dims === undefined || dims === null) dims = 2;
    let da;
    let db;
    if (Number.isInteger(dims)) {
      if (dims < 0) throw new KindlingError(`tensordot expects dims >= 0, but got dims=${dims}`, 'KD_INVALID_ARGUMENT');
      da = Array.from({ length: dims }, (_, i) => i - dims);
      db = Array.from({ length: dims }, (_, i) => i);
    } else if (Array.isArray(dims) && dims.length === 2) {
      da = asList(dims[0]);
      db = asList(dims[1]);
    } else if (dims instanceof kd.Tensor) { // as PyTorch: a one-element tensor is n, else a pair of dim lists
      return kd.tensordot(a, b, dims.numel() === 1 ? Number(dims.item()) : dims.arraySync());
    } else {
      throw typeError('tensordot(): dims must be an integer or a pair of lists of dims');
    }
    return raw(a, b, da, db);
  };
};
