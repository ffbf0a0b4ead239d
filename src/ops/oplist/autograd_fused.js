// oplist/autograd_fused.js - fused ops that backward formulas call instead of chains of pointwise
// ops (kd._internal.*; not public API). Kernels: src/cpu/autograd_fused.c. Part of the op list
// (see ./index.js).
'use strict';

module.exports = [
  { name: 'thresholdBackward', args: 'Tensor gradOutput, Tensor self, Scalar threshold', returns: 'Tensor',
    variants: ['function'], ns: ['_internal'], kind: 'pointwise', generic: 'kd_threshold_backward',
    backward: { gradOutput: 'thresholdBackward(grad, self, threshold)', self: 'zerosLike(grad)' },
    doc: 'gradOutput where self > threshold, else 0, in one pass (the gradient of relu; PyTorch\'s threshold_backward).' },
];
