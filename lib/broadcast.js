// broadcast.js - torch.broadcast_shapes, broadcast_to and broadcast_tensors as kindling
// functions (kd.broadcastShapes, kd.broadcastTo / t.broadcastTo, kd.broadcastTensors), written
// with expand(): the results are views, as PyTorch's.
//
//   kd.broadcastShapes([2, 1], [3])        -> [2, 3]
//   kd.broadcastTensors(a, b)              -> [a', b'] (an array; also kd.broadcastTensors([a, b]))
'use strict';

const { KindlingError, typeError } = require('./errors');

module.exports = function installBroadcast(kd, Tensor) {
  const shapeError = (msg) => new KindlingError(msg, 'KD_SHAPE_MISMATCH');

  /** The broadcast shape of `shapes` (arrays), or throws PyTorch's error naming the two sizes. */
  function broadcastOf(shapes, describe) {
    const nd = Math.max(0, ...shapes.map((s) => s.length));
    const out = new Array(nd).fill(1);
    const from = new Array(nd).fill(-1);
    shapes.forEach((s, k) => {
      for (let i = 0; i < s.length; i++) {
        const d = nd - s.length + i;
        const v = s[i];
        if (v === 1) continue;
        if (out[d] === 1) { out[d] = v; from[d] = k; } else if (out[d] !== v) throw describe(from[d], k, out[d], v, d);
      }
    });
    return out;
  }

  kd.broadcastShapes = function broadcastShapes(...shapes) {
    shapes = shapes.map((s) => (typeof s === 'number' ? [s] : s));
    for (const s of shapes) {
      if (!Array.isArray(s) || !s.every((d) => Number.isInteger(d) && d >= 0)) throw typeError('broadcastShapes(...shapes): each shape must be an array of non-negative integers (or one integer)');
    }
    return broadcastOf(shapes, () => shapeError(`Shape mismatch: objects cannot be broadcast to a single shape`));
  };

  kd.broadcastTensors = function broadcastTensors(...tensors) {
    if (tensors.length === 1 && Array.isArray(tensors[0])) tensors = tensors[0];
    tensors.forEach((t, i) => { if (!(t instanceof Tensor)) throw typeError(`broadcastTensors(): argument ${i} must be a Tensor`); });
    const shape = broadcastOf(tensors.map((t) => t.shape), (a, b, va, vb, d) => shapeError(
      `The size of tensor a (${va}) must match the size of tensor b (${vb}) at non-singleton dimension ${d}`));
    return tensors.map((t) => t.expand(shape));
  };

  kd.broadcastTo = function broadcastTo(t, ...shape) {
    if (!(t instanceof Tensor)) throw typeError('broadcastTo(input, size): input must be a Tensor');
    return t.expand(...shape);
  };
  Tensor.prototype.broadcastTo = function broadcastTo(...shape) { return this.expand(...shape); };
};
