// oplist/autograd.js - internal ops that backward formulas of the foundation's views call (kd._internal.*; not public API). Part of the op list (see ./index.js).
'use strict';

const internal = (name, args, code, doc, backward) => ({
  name, args, returns: 'Tensor', variants: ['function'], ns: ['_internal'], kind: 'composite', code,
  generic: 'kd_view_backward', backward, doc,
});

module.exports = [
  internal('sliceBackward', 'Tensor grad, int[] inputSizes, int dim, int? start, int? end, int step',
    'KD_VIEWBW_SLICE', 'Zeros of inputSizes with grad written into the slice (the gradient of slice).',
    { grad: 'grad.slice(dim, start, end, step)' }),
  internal('selectBackward', 'Tensor grad, int[] inputSizes, int dim, int index',
    'KD_VIEWBW_SELECT', 'Zeros of inputSizes with grad written at index along dim (the gradient of select).',
    { grad: 'grad.select(dim, index)' }),
  internal('narrowBackward', 'Tensor grad, int[] inputSizes, int dim, int start, int length',
    'KD_VIEWBW_NARROW', 'Zeros of inputSizes with grad written into the narrowed range (the gradient of narrow).',
    { grad: 'grad.narrow(dim, start, length)' }),
  internal('permuteBackward', 'Tensor grad, int[] dims',
    'KD_VIEWBW_PERMUTE', 'grad permuted by the inverse of dims (the gradient of permute).',
    { grad: 'grad.permute(dims)' }),
];
