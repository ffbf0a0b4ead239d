// oplist/grid_sample.js - kd.nn.functional.gridSample (PyTorch's grid_sample / grid_sampler_2d /
// grid_sampler_3d) and its backward op (kd._internal.gridSampleBackward, ATen's
// grid_sampler_{2,3}d_backward). Part of the op list (see ./index.js). Kernels: src/cpu/grid_sample.c
// (CPU, and the checks of every device), cuda/ops_grid_sample.cu (device op kind 53).
// F.affineGrid is a composition of ops (lib/nn/grid_sample.js, which also wraps gridSample for its warning), as ATen's affine_grid_generator.
//
// The backward op computes the input gradient, the grid gradient or both (inputGrad / gridGrad;
// an output not asked for is an empty tensor): each formula asks for its own, so a graph that
// needs one gradient pays for one pass. 'nearest' has no grid gradient: zeros, as PyTorch.
'use strict';

const SAMPLE = "Tensor input, Tensor grid, str mode='bilinear', str paddingMode='zeros', bool? alignCorners";
const BACKWARD = 'gridSampleBackward(grad, input, grid, mode, paddingMode, alignCorners';

module.exports = [
  { name: 'gridSample', args: SAMPLE, returns: 'Tensor', variants: ['function'], ns: ['nn.functional'], kind: 'nn',
    code: 'KD_GRID_SAMPLE_FORWARD', cpu: 'kd_cpu_grid_sample',
    autocast: { cpu: 'fp32', cuda: 'promote' }, // PyTorch's grid_sampler policies
    backward: { input: `${BACKWARD}, true, false)[0]`, grid: `${BACKWARD}, false, true)[1]` },
    doc: "Samples input (N, C, H, W) or (N, C, D, H, W) at the normalized positions of grid (N, H', W', 2) or (N, D', H', W', 3), " +
      "x (width) first, in [-1, 1]: mode 'bilinear' (trilinear on 5-D), 'nearest' or 'bicubic' (4-D); paddingMode 'zeros', 'border' " +
      "or 'reflection' for positions outside; alignCorners (default false) maps -1 and 1 to the corner pixels' centres." },
  { name: 'gridSampleBackward',
    args: 'Tensor gradOutput, Tensor input, Tensor grid, str mode, str paddingMode, bool? alignCorners, bool inputGrad=true, bool gridGrad=true',
    returns: '(Tensor gradInput, Tensor gradGrid)', variants: ['function'], ns: ['_internal'], kind: 'nn',
    code: 'KD_GRID_SAMPLE_BACKWARD', cpu: 'kd_cpu_grid_sample',
    doc: 'Gradients of gridSample w.r.t. input (when inputGrad) and grid (when gridGrad; zeros for nearest); an output not asked for is empty.' },
];
