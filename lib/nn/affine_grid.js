// affine_grid.js - kd.nn.functional.affineGrid: PyTorch 1.13's affine_grid (the checks and messages
// of torch/nn/functional.py) over ATen's affine_grid_generator, which is a composition of ops:
// the base grid of normalized positions (N, [D,] H, W, nd + 1) - per axis linspace(-1, 1, n),
// times (n - 1) / n without alignCorners, 0 for a size-1 axis - with a last column of ones, times
// theta transposed (bmm). So it runs on every device and is differentiable in theta (the
// gradient of bmm is ATen's affine_grid_generator_backward). F.gridSample takes its result.
'use strict';

const { KindlingError } = require('../errors');

module.exports = function installAffineGrid(kd, nn, { parseArgs }) {
  const F = kd.nn.functional;
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
    if (!(align && Math.min(...spatial) === 1) && Math.min(...size) <= 0)
      throw new KindlingError(`Expected non-zero, positive output size. Got ${list(size)}`, 'KD_INVALID_ARGUMENT');
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
};
