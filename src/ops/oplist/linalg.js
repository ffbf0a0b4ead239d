// oplist/linalg.js - linear algebra: mm/bmm/matmul. Part of the op list (see ./index.js).
'use strict';

module.exports = [
  { name: 'mm', args: 'Tensor self, Tensor mat2', returns: 'Tensor', variants: ['function', 'method'],
    kind: 'linalg', cpu: 'kd_cpu_mm', backward: { self: 'grad.mm(mat2.t())', mat2: 'self.t().mm(grad)' }, doc: 'Matrix product of two 2-D tensors.' },
  { name: 'bmm', args: 'Tensor self, Tensor mat2', returns: 'Tensor', variants: ['function', 'method'],
    kind: 'linalg', cpu: 'kd_cpu_bmm',
    backward: { self: 'grad.bmm(mat2.transpose(1, 2))', mat2: 'self.transpose(1, 2).bmm(grad)' }, doc: 'Batched matrix product of two 3-D tensors.' },
  { name: 'matmul', args: 'Tensor self, Tensor other', returns: 'Tensor', variants: ['function', 'method'],
    kind: 'linalg', composite: 'kd_composite_matmul',
    doc: 'Matrix product with NumPy/PyTorch broadcasting (1-D, 2-D and batched operands).' },
];
