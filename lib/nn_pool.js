// nn_pool.js - kd.nn.functional.maxPool2d's `returnIndices`: PyTorch returns the values, or a
// (values, indices) tuple when returnIndices is true. The op list declares both forms as ops
// (maxPool2d, maxPool2dWithIndices, same schema); this picks one by the flag.
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
};
