// oplist/autograd_views.js - the internal op behind the gradient of asStrided and of views whose
// base changed in place (AsStridedBackward0, src/autograd/copy_slices.c); not public API.
// Part of the op list (see ./index.js).
'use strict';

module.exports = [
  { name: 'asStridedBackward',
    args: 'Tensor grad, int[] inputSize, int[] inputStride, int inputStorageOffset, int[] size, int[] stride, int storageOffset',
    returns: 'Tensor', variants: ['function'], ns: ['_internal'], kind: 'composite',
    composite: 'kd_composite_as_strided_backward',
    doc: "The gradient of asStrided (PyTorch's as_strided_backward): grad scattered into a storage-sized buffer through the output geometry (summing overlaps), read back through the input geometry (overlaps share it)." },
];
