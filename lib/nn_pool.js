// nn_pool.js - kd.nn.functional.maxPool2d's `returnIndices`: PyTorch returns the values, or a
// (values, indices) tuple when returnIndices is true. The op list declares both forms as ops
// (maxPool2d, maxPool2dWithIndices, same schema); this picks one by the flag. And
// adaptiveAvgPool2d's outputSize may hold null for "the input's size", as PyTorch's
// _list_with_default does before calling the op. interpolate's mode 'area' is adaptive average
// pooling to the output size, as in PyTorch's F.interpolate (1-d and 3-d through the 2-d pool:
// the bins of adaptive pooling are separable per dim).
'use strict';

const { KindlingError } = require('./errors');

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

  const interpolate = F.interpolate;
  const NAMES = ['input', 'size', 'scaleFactor', 'mode', 'alignCorners', 'recomputeScaleFactor', 'antialias'];
  F.interpolate = function interpolate_(...args) {
    const opts = args.length > 1 && isOptions(args[args.length - 1]) ? args[args.length - 1] : {};
    const pos = opts === args[args.length - 1] ? args.slice(0, -1) : args;
    const a = Object.fromEntries(NAMES.map((n, i) => [n, pos[i] !== undefined ? pos[i] : opts[n]]));
    if (a.mode !== 'area' || !(a.input instanceof kd.Tensor)) return interpolate(...args);
    const bad = (msg) => new KindlingError(msg, 'KD_INVALID_ARGUMENT');
    const x = a.input;
    const k = x.ndim - 2;
    if (k < 1 || k > 3) {
      throw bad(`Input Error: Only 3D, 4D and 5D input Tensors supported (got ${x.ndim}D) for the modes: ` +
        'nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact (got area)');
    }
    if (a.alignCorners != null) {
      throw bad('align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | trilinear');
    }
    const given = (v) => v !== undefined && v !== null;
    if (given(a.size) === given(a.scaleFactor)) {
      throw bad(given(a.size) ? 'only one of size or scale_factor should be defined' : 'either size or scale_factor should be defined');
    }
    if (a.recomputeScaleFactor === true && given(a.size)) throw bad('recompute_scale_factor is not meaningful with an explicit size.');
    if (a.antialias === true) throw bad('Anti-alias option is only supported for bilinear and bicubic modes');
    const list = (v, what) => {
      const l = Array.isArray(v) ? v : new Array(k).fill(v);
      if (l.length !== k) {
        throw bad(`Input and ${what} must have the same number of spatial dimensions, but got input with spatial ` +
          `dimensions of [${x.shape.slice(2)}] and output size of [${l}]. Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format.`);
      }
      return l;
    };
    const out = given(a.size) ? list(a.size, 'output_size')
      : list(a.scaleFactor, 'scale_factor').map((f, i) => Math.floor(x.shape[2 + i] * f));
    const [n, c] = x.shape;
    if (k === 2) return adaptiveAvg(x, out);
    if (k === 1) return adaptiveAvg(x.unsqueeze(2), [1, out[0]]).squeeze(2);
    // 3-d: the (H, W) bins of every depth slice, then the depth bins
    const [d, h, w] = x.shape.slice(2);
    const hw = adaptiveAvg(x.reshape([n, c * d, h, w]), [out[1], out[2]]);
    const dd = adaptiveAvg(hw.reshape([n, c, d, out[1] * out[2]]), [out[0], out[1] * out[2]]);
    return dd.reshape([n, c, ...out]);
  };
};
