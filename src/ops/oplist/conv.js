// oplist/conv.js - convolution, pooling, interpolation and padding (kd.nn.functional), with the
// backward ops their gradients use (kd._internal). Part of the op list (see ./index.js).
// Kernels: src/cpu/conv.c (conv1d/conv2d/convTranspose2d and their backward), src/cpu/pool.c
// (max/avg/adaptive-avg pooling), src/cpu/interpolate.c, src/cpu/pad.c.
//
// stride/padding/dilation are `int[]?`: a number or an array (PyTorch's int or tuple); left out
// (null) they take PyTorch's defaults (stride 1, or kernelSize for pooling; padding 0; dilation 1).
// The convolution backward ops serve conv1d and conv2d alike (the weight's ndim says which).
'use strict';

const F = ['nn.functional'];
const I = ['_internal'];
const fn = (e) => ({ returns: 'Tensor', variants: ['function'], ns: F, kind: 'nn', ...e });
const internal = (e) => ({ returns: 'Tensor', variants: ['function'], ns: I, kind: 'nn', ...e });

const convArgs = (pad) => `Tensor input, Tensor weight, Tensor? bias, int[]? stride, ${pad}, int[]? dilation, int groups=1`;
const convBackward = (biasDims) => ({
  input: 'conv2dBackwardInput(grad, weight, input.shape, stride, padding, dilation, groups)',
  weight: 'conv2dBackwardWeight(grad, input, weight.shape, stride, padding, dilation, groups)',
  bias: biasDims,
});
const bias1d = "input.ndim == 3 ? grad.sum([0, 2]) : grad.sum([1])";
const bias2d = "input.ndim == 4 ? grad.sum([0, 2, 3]) : grad.sum([1, 2])";
const convBwArgs = (pad) => `int[]? stride, ${pad}, int[]? dilation, int groups=1`;

const poolArgs = 'Tensor input, int|int[] kernelSize, int[]? stride, int[]? padding, int[]? dilation, ' +
  'bool ceilMode=false, bool returnIndices=false';

module.exports = [
  // ---- convolution
  fn({ name: 'conv1d', args: convArgs('int[]? padding'), code: 'KD_CONV_1D', cpu: 'kd_cpu_conv',
    backward: convBackward(bias1d),
    doc: '1-D convolution over (N, C, L) or (C, L) input; weight (O, C/groups, k).' }),
  fn({ name: 'conv1d.padding', args: convArgs("str padding='valid'"), code: 'KD_CONV_1D', cpu: 'kd_cpu_conv',
    backward: convBackward(bias1d),
    doc: "1-D convolution with padding 'valid' or 'same'." }),
  fn({ name: 'conv2d', args: convArgs('int[]? padding'), code: 'KD_CONV_2D', cpu: 'kd_cpu_conv',
    backward: convBackward(bias2d),
    doc: '2-D convolution over (N, C, H, W) or (C, H, W) input; weight (O, C/groups, kH, kW).' }),
  fn({ name: 'conv2d.padding', args: convArgs("str padding='valid'"), code: 'KD_CONV_2D', cpu: 'kd_cpu_conv',
    backward: convBackward(bias2d),
    doc: "2-D convolution with padding 'valid' or 'same'." }),
  fn({ name: 'convTranspose2d',
    args: 'Tensor input, Tensor weight, Tensor? bias, int[]? stride, int[]? padding, int[]? outputPadding, int groups=1, int[]? dilation',
    code: 'KD_CONV_TRANSPOSE_2D', cpu: 'kd_cpu_conv',
    backward: {
      input: 'conv2d(grad, weight, null, stride, padding, dilation, groups)',
      weight: 'conv2dBackwardWeight(input, grad, weight.shape, stride, padding, dilation, groups)',
      bias: bias2d,
    },
    doc: '2-D transposed convolution ("deconvolution"); weight (C_in, C_out/groups, kH, kW).' }),
  internal({ name: 'conv2dBackwardInput',
    args: `Tensor gradOutput, Tensor weight, int[] inputSize, ${convBwArgs('int[]? padding')}`,
    code: 'KD_CONV_BACKWARD_INPUT', cpu: 'kd_cpu_conv',
    backward: {
      gradOutput: 'weight.ndim == 3 ? conv1d(grad, weight, null, stride, padding, dilation, groups) : conv2d(grad, weight, null, stride, padding, dilation, groups)',
      weight: 'conv2dBackwardWeight(gradOutput, grad, weight.shape, stride, padding, dilation, groups)',
    },
    doc: 'Gradient of conv1d/conv2d w.r.t. its input (a transposed convolution of gradOutput).' }),
  internal({ name: 'conv2dBackwardInput.padding',
    args: `Tensor gradOutput, Tensor weight, int[] inputSize, ${convBwArgs("str padding='valid'")}`,
    code: 'KD_CONV_BACKWARD_INPUT', cpu: 'kd_cpu_conv',
    backward: {
      gradOutput: 'weight.ndim == 3 ? conv1d(grad, weight, null, stride, padding, dilation, groups) : conv2d(grad, weight, null, stride, padding, dilation, groups)',
      weight: 'conv2dBackwardWeight(gradOutput, grad, weight.shape, stride, padding, dilation, groups)',
    },
    doc: "conv2dBackwardInput for padding 'valid'/'same'." }),
  internal({ name: 'conv2dBackwardWeight',
    args: `Tensor gradOutput, Tensor input, int[] weightSize, ${convBwArgs('int[]? padding')}`,
    code: 'KD_CONV_BACKWARD_WEIGHT', cpu: 'kd_cpu_conv',
    backward: {
      gradOutput: 'grad.ndim == 3 ? conv1d(input, grad, null, stride, padding, dilation, groups) : conv2d(input, grad, null, stride, padding, dilation, groups)',
      input: 'conv2dBackwardInput(gradOutput, grad, input.shape, stride, padding, dilation, groups)',
    },
    doc: 'Gradient of conv1d/conv2d w.r.t. its weight.' }),
  internal({ name: 'conv2dBackwardWeight.padding',
    args: `Tensor gradOutput, Tensor input, int[] weightSize, ${convBwArgs("str padding='valid'")}`,
    code: 'KD_CONV_BACKWARD_WEIGHT', cpu: 'kd_cpu_conv',
    backward: {
      gradOutput: 'grad.ndim == 3 ? conv1d(input, grad, null, stride, padding, dilation, groups) : conv2d(input, grad, null, stride, padding, dilation, groups)',
      input: 'conv2dBackwardInput(gradOutput, grad, input.shape, stride, padding, dilation, groups)',
    },
    doc: "conv2dBackwardWeight for padding 'valid'/'same'." }),

  // ---- pooling
  fn({ name: 'maxPool2d', args: poolArgs, code: 'KD_POOL_MAX', cpu: 'kd_cpu_pool',
    backward: { input: 'maxPool2dBackward(grad, input, kernelSize, stride, padding, dilation, ceilMode, null)' },
    doc: '2-D max pooling; with returnIndices also the flat (h * W + w) argmax positions (see maxPool2dWithIndices).' }),
  fn({ name: 'maxPool2dWithIndices', args: poolArgs, returns: '(Tensor values, Tensor indices)',
    code: 'KD_POOL_MAX', cpu: 'kd_cpu_pool',
    backward: { input: 'maxPool2dBackward(grad, input, kernelSize, stride, padding, dilation, ceilMode, result1)' },
    doc: '2-D max pooling returning the values and their flat (h * W + w) positions in each plane.' }),
  internal({ name: 'maxPool2dBackward',
    args: 'Tensor gradOutput, Tensor input, int|int[] kernelSize, int[]? stride, int[]? padding, int[]? dilation, bool ceilMode, Tensor? indices',
    code: 'KD_POOL_MAX_BACKWARD', cpu: 'kd_cpu_pool',
    backward: { gradOutput: 'maxPool2dDoubleBackward(grad, input, kernelSize, stride, padding, dilation, ceilMode, indices)',
      input: 'zerosLike(grad)' },
    doc: 'Gradient of maxPool2d: gradOutput scattered (added) to the argmax positions (recomputed when indices is null).' }),
  fn({ name: 'avgPool2d',
    args: 'Tensor input, int|int[] kernelSize, int[]? stride, int[]? padding, bool ceilMode=false, bool countIncludePad=true, int? divisorOverride',
    code: 'KD_POOL_AVG', cpu: 'kd_cpu_pool',
    backward: { input: 'avgPool2dBackward(grad, input, kernelSize, stride, padding, ceilMode, countIncludePad, divisorOverride)' },
    doc: '2-D average pooling.' }),
  internal({ name: 'avgPool2dBackward',
    args: 'Tensor gradOutput, Tensor input, int|int[] kernelSize, int[]? stride, int[]? padding, bool ceilMode, bool countIncludePad, int? divisorOverride',
    code: 'KD_POOL_AVG_BACKWARD', cpu: 'kd_cpu_pool',
    backward: { gradOutput: 'avgPool2d(grad, kernelSize, stride, padding, ceilMode, countIncludePad, divisorOverride)',
      input: 'zerosLike(grad)' },
    doc: 'Gradient of avgPool2d w.r.t. its input.' }),
  fn({ name: 'adaptiveAvgPool2d', args: 'Tensor input, int|int[] outputSize', code: 'KD_POOL_ADAPTIVE_AVG', cpu: 'kd_cpu_pool',
    backward: { input: 'adaptiveAvgPool2dBackward(grad, input)' },
    doc: '2-D adaptive average pooling to outputSize (H, W) (a number means square).' }),
  internal({ name: 'adaptiveAvgPool2dBackward', args: 'Tensor gradOutput, Tensor input',
    code: 'KD_POOL_ADAPTIVE_AVG_BACKWARD', cpu: 'kd_cpu_pool',
    backward: { gradOutput: 'adaptiveAvgPool2d(grad, [gradOutput.shape[gradOutput.ndim - 2], gradOutput.shape[gradOutput.ndim - 1]])',
      input: 'zerosLike(grad)' },
    doc: 'Gradient of adaptiveAvgPool2d w.r.t. its input.' }),

  // ---- interpolation
  fn({ name: 'interpolate',
    args: "Tensor input, int[]? size, float[]? scaleFactor, str mode='nearest', bool? alignCorners, bool? recomputeScaleFactor, " +
      'bool antialias=false',
    code: 'KD_INTERP_FORWARD', cpu: 'kd_cpu_interpolate',
    backward: { input: 'interpolateBackward(grad, input.shape, size, scaleFactor, mode, alignCorners, recomputeScaleFactor, antialias)' },
    doc: "Resizes (N, C, L), (N, C, H, W) or (N, C, D, H, W) input to size or by scaleFactor: mode 'nearest', " +
      "'nearest-exact', 'linear' (3-D), 'bilinear' or 'bicubic' (4-D, antialias when downsampling), 'trilinear' (5-D), 'area'." }),
  internal({ name: 'interpolateBackward',
    args: 'Tensor gradOutput, int[] inputSize, int[]? size, float[]? scaleFactor, str mode, bool? alignCorners, bool? recomputeScaleFactor, ' +
      'bool antialias=false',
    code: 'KD_INTERP_BACKWARD', cpu: 'kd_cpu_interpolate',
    backward: { gradOutput: 'interpolate(grad, size, scaleFactor, mode, alignCorners, recomputeScaleFactor, antialias)' },
    doc: 'Gradient of interpolate w.r.t. its input.' }),

  // ---- padding
  fn({ name: 'pad', args: "Tensor input, int[] pad, str mode='constant', float? value",
    code: 'KD_PAD_FORWARD', cpu: 'kd_cpu_pad',
    backward: { input: 'padBackward(grad, input.shape, pad, mode)' },
    doc: "Pads the last len(pad)/2 dims (pad = [left, right, top, bottom, ...], last dim first): mode 'constant' (value), 'reflect' or 'replicate'." }),
  internal({ name: 'padBackward', args: "Tensor gradOutput, int[] inputSize, int[] pad, str mode='constant'",
    code: 'KD_PAD_BACKWARD', cpu: 'kd_cpu_pad',
    backward: { gradOutput: 'pad(grad, pad, mode)' }, // value left out: 0, and no error for 'reflect'/'replicate'
    doc: 'Gradient of pad w.r.t. its input (reflected/replicated borders summed back).' }),
];
