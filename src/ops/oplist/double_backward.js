// oplist/double_backward.js - internal composites (kd._internal) that the backward formulas of
// other internal backward ops call for their own derivative (double backward): written with
// other ops (src/ops/double_backward.c), so autograd differentiates them in turn.
// Part of the op list (see ./index.js).
'use strict';

const internal = (e) => ({ returns: 'Tensor', variants: ['function'], ns: ['_internal'], kind: 'composite', ...e });

module.exports = [
  internal({ name: 'layerNormDoubleBackward',
    args: 'Tensor ggInput, Tensor gradOutput, Tensor input, int[] normalizedShape, Tensor mean, Tensor rstd',
    composite: 'kd_composite_layer_norm_double_backward',
    doc: 'Gradient of layerNormBackward w.r.t. its input (gradOutput already times the weight), for the incoming gradient ggInput.' }),
  internal({ name: 'prodDoubleBackward', args: 'Tensor ggSelf, Tensor gradOutput, Tensor self, int? dim, bool keepdim',
    composite: 'kd_composite_prod_double_backward',
    doc: 'Gradient of prodBackward w.r.t. self (the Hessian of prod along dim times ggSelf, times gradOutput), exact with zeros.' }),
  internal({ name: 'maxPool2dDoubleBackward',
    args: 'Tensor ggInput, Tensor input, int|int[] kernelSize, int[]? stride, int[]? padding, int[]? dilation, bool ceilMode, Tensor? indices',
    composite: 'kd_composite_max_pool2d_double_backward',
    doc: 'Gradient of maxPool2dBackward w.r.t. gradOutput: ggInput gathered at the argmax positions (recomputed when indices is null).' }),
];
