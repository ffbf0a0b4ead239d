// nn_pool.js - kd.nn.functional.maxPool2d's `returnIndices`: PyTorch returns the values, or a
// (values, indices) tuple when returnIndices is true. The op list declares both forms as ops
// (maxPool2d, maxPool2dWithIndices, same schema); this picks one by the flag. And
// adaptiveAvgPool2d's outputSize may hold null for "the input's size", as PyTorch's
// _list_with_default does before calling the op.
'use strict';

module.exports = function installPool(kd) {
  const F = kd.nn.functional;
  const values = F.maxPool2d;
  const withIndices = F.maxPool2dWithIndices;
  const isOptions = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof kd.Tensor) &&
    !ArrayBuffer.isView(v);
  F.maxPool2d = function maxPool2d(...args) {
    const last = args[args.length - 1];
    const ri = isOptions(last) && last.returnIndices !== undefined ? last.returnIndices : args[6];
    if (ri === true) return withIndices(...args);
    // Training on the CPU: maxPool2d's backward recomputes the argmax (a second pooling pass,
    // ~10x the cost of scattering through saved indices), so when a graph is recorded take the
    // indices form, whose backward uses the saved indices, and drop our reference to them.
    const input = isOptions(args[0]) ? args[0].input : args[0];
    if (input instanceof kd.Tensor && input.requiresGrad && input.device === 'cpu' && kd.isGradEnabled()) {
      const [v, indices] = withIndices(...args);
      indices.dispose();
      return v;
    }
    return values(...args);
  };

  const adaptiveAvg = F.adaptiveAvgPool2d;
  F.adaptiveAvgPool2d = function adaptiveAvgPool2d(...args) {
    const opts = isOptions(args[args.length - 1]) ? args[args.length - 1] : null;
    const input = args[0] instanceof kd.Tensor ? args[0] : opts && opts.input;
    const inOpts = opts && opts.outputSize !== undefined;
    const size = inOpts ? opts.outputSize : args[1];
    if (!(input instanceof kd.Tensor) || !Array.isArray(size) || !size.some((v) => v === null)) return adaptiveAvg(...args);
    const shape = input.shape;
    const filled = size.map((v, i) => (v === null ? shape[shape.length - size.length + i] : v));
    if (inOpts) return adaptiveAvg(...args.slice(0, -1), { ...opts, outputSize: filled });
    return adaptiveAvg(args[0], filled, ...args.slice(2));
  };
};
