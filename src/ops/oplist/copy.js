// oplist/copy.js - copies and conversions: fill_/zero_/copy_/to/clone/contiguous. Part of the op list (see ./index.js).
'use strict';

module.exports = [
  { name: 'fill', args: 'Tensor self, Scalar value', returns: 'Tensor', variants: ['inplace'], kind: 'pointwise',
    cpu: 'kd_cpu_fill', backward: { self: 'zerosLike(grad)' }, doc: 'Fills self with value.', inplaceOnly: true },
  { name: 'zero', args: 'Tensor self', returns: 'Tensor', variants: ['inplace'], kind: 'pointwise',
    composite: 'kd_composite_zero', doc: 'Fills self with zeros.', inplaceOnly: true },
  { name: 'copy', args: 'Tensor self, Tensor src', returns: 'Tensor', variants: ['inplace'], kind: 'copy',
    cpu: 'kd_cpu_copy', flags: ['cross_device'], inplaceOnly: true,
    backward: { self: 'zerosLike(grad)', src: 'grad' },
    doc: 'Copies src into self (broadcasting src, converting dtype, across devices).' },
  { name: 'to', args: 'Tensor self, *, dtype? dtype, device? device, bool copy=false', returns: 'Tensor',
    variants: ['method'], kind: 'copy', composite: 'kd_composite_to', flags: ['cross_device'],
    doc: 'This tensor converted to dtype and/or moved to device (self when nothing changes and copy is false).' },
  { name: 'clone', args: 'Tensor self', returns: 'Tensor', variants: ['function', 'method'], kind: 'copy',
    composite: 'kd_composite_clone', doc: 'A copy with its own storage.' },
  { name: 'contiguous', args: 'Tensor self', returns: 'Tensor', variants: ['method'], kind: 'copy',
    composite: 'kd_composite_contiguous', doc: 'self if contiguous, else a contiguous copy.' },
];
