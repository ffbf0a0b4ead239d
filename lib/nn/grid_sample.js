// grid_sample.js - the JS side of kd.nn.functional's spatial-transformer pair, PyTorch 1.13's
// affine_grid and grid_sample:
//   affineGrid   the checks and messages of torch/nn/functional.py over ATen's
//                affine_grid_generator, which is a composition of ops: the base grid of normalized
//                positions (N, [D,] H, W, nd + 1) - per axis linspace(-1, 1, n), times (n - 1) / n
//                without alignCorners, 0 for a size-1 axis - with a last column of ones, times theta
//                transposed (bmm). So it runs on every device and is differentiable in theta (the
//                gradient of bmm is ATen's affine_grid_generator_backward).
//   gridSample   the native op (src/ops/oplist/grid_sample.js), wrapped for PyTorch's warning when
//                alignCorners is left out (then false).
// Both warn once per process, where PyTorch's warnings.warn shows a message once per call site.
'use strict';

const { KindlingError } = require('../errors');

const ALIGN_DEFAULT = 'Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. ' +
  'Please specify align_corners=True if the old behavior is desired. See the documentation of grid_sample for details.';
const UNIT_SIZE = 'Since version 1.3.0, affine_grid behavior has changed for unit-size grids when align_corners=True. ' +
  'This is not an intended use case of affine_grid. See the documentation of affine_grid for details.';

module.exports = function installGridSample(kd, nn, { parseArgs, isPlainObject }) {
  const F = kd.nn.functional;
  const warned = new Set();
  const warnOnce = (message) => {
    if (warned.has(message)) return;
    warned.add(message);
    process.emitWarning(message, { code: 'KD_GRID_SAMPLE' });
  };
  const FLOATS = ['float32', 'float64', 'float16', 'bfloat16'];
  const list = (a) => `[${a.join(', ')}]`;

  /** ATen's linspace_from_neg_one: n positions spanning [-1, 1] (the pixel centres' positions without alignCorners). */
  function positions(theta, n, alignCorners) {
    const opts = { dtype: theta.dtype, device: theta.device };
    if (n <= 1) return kd.zeros([1], opts);
    const r = kd.linspace(-1, 1, n, opts);
    return alignCorners ? r : r.mul(n - 1).div(n);
  }

  /** affineGrid(theta, size, alignCorners = null): the sampling grid (N, H, W, 2) of a batch of 2-D
   * affine maps theta (N, 2, 3) for size [N, C, H, W], or (N, D, H, W, 3) of theta (N, 3, 4) for
   * [N, C, D, H, W]. alignCorners left out is false. */
  F.affineGrid = function affineGrid(theta, size, ...args) {
    const o = parseArgs('affineGrid()', args, ['alignCorners'], { alignCorners: null });
    if (!(theta instanceof kd.Tensor)) throw new kd.KindlingTypeError('affineGrid(): theta must be a Tensor');
    if (!Array.isArray(size) || !size.every((s) => Number.isInteger(s)))
      throw new kd.KindlingTypeError('affineGrid(): size must be an array of integers');
    if (o.alignCorners === null || o.alignCorners === undefined) warnOnce(ALIGN_DEFAULT);
    const align = o.alignCorners === true;
    if (!FLOATS.includes(theta.dtype))
      throw new KindlingError(`Expected theta to have floating point type, but got torch.${theta.dtype}`, 'KD_INVALID_ARGUMENT');
    let nd;
    if (size.length === 4) nd = 2;
    else if (size.length === 5) nd = 3;
    else {
      throw new KindlingError('affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, respectively. ' +
        `Got size ${list(size)}.`, 'KD_INVALID_ARGUMENT');
    }
    const ts = theta.shape;
    if (theta.ndim !== 3 || ts[1] !== nd || ts[2] !== nd + 1) {
      throw new KindlingError(`Expected a batch of ${nd}D affine matrices of shape Nx${nd}x${nd + 1} for size ${list(size)}. ` +
        `Got torch.Size(${list(ts)}).`, 'KD_SHAPE_MISMATCH');
    }
    const spatial = size.slice(2);
    if (align && Math.min(...spatial) === 1) warnOnce(UNIT_SIZE);
    else if (Math.min(...size) <= 0) throw new KindlingError(`Expected non-zero, positive output size. Got ${list(size)}`, 'KD_INVALID_ARGUMENT');
    return kd.tidy(() => {
      const N = size[0];
      // the base grid's columns x, y[, z], 1, each broadcast over the spatial dims (W last)
      const cols = [];
      for (let a = 0; a < nd; a++) {
        const n = spatial[nd - 1 - a];
        const shape = spatial.map((_, k) => (k === nd - 1 - a ? n : 1));
        cols.push(positions(theta, n, align).reshape(shape).expand(spatial));
      }
      cols.push(kd.ones(spatial, { dtype: theta.dtype, device: theta.device }));
      const P = spatial.reduce((p, s) => p * s, 1);
      const base = kd.stack(cols, -1).reshape([1, P, nd + 1]).expand([N, P, nd + 1]);
      return base.bmm(theta.transpose(1, 2)).reshape([N, ...spatial, nd]);
    });
  };

  const native = F.gridSample;
  /** gridSample(input, grid, mode = 'bilinear', paddingMode = 'zeros', alignCorners = null): see the op's documentation. */
  F.gridSample = function gridSample(...args) {
    const last = args[args.length - 1];
    const opts = args.length > 0 && isPlainObject(last) ? last : null;
    const given = (args.length > 4 && args[4] !== opts && args[4] !== null && args[4] !== undefined) ||
      (opts !== null && opts.alignCorners !== null && opts.alignCorners !== undefined);
    if (!given) warnOnce(ALIGN_DEFAULT);
    return native(...args);
  };
};
