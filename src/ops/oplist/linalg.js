// oplist/linalg.js - linear algebra: mm/bmm/matmul, the fused add forms (addmm/addbmm/baddbmm),
// vector products (dot/vdot/mv/outer), linear and einsum. Part of the op list (see ./index.js).
// Kernels: src/cpu/matmul.c (gemm through OpenBLAS), src/ops/composite_matmul.c,
// src/ops/linalg_composites.c, src/ops/linalg_einsum.c.
'use strict';

const fn = ['function', 'method'];
// The gradients of a matrix product, as PyTorch's mm_mat1_backward / mm_mat2_backward: when the
// operand is column-major (a t() view, as linear's weight.t()), its gradient is computed
// transposed so that it comes out column-major too (the t() backward then sees a contiguous
// matrix, and AccumulateGrad keeps it without a transposing copy). `s` scales by alpha/beta only
// when that is not 1 (PyTorch's maybe_multiply).
const mmGrad1 = (mat1, mat2, s) => scaled(`${mat1}.colMajor ? ${mat2}.mm(grad.t()).t() : grad.mm(${mat2}.t())`, s);
const mmGrad2 = (mat1, mat2, s) => scaled(`${mat2}.colMajor ? grad.t().mm(${mat1}).t() : ${mat1}.t().mm(grad)`, s);
const scaled = (e, s) => (s ? `${s} == 1 ? (${e}) : (${e}) * ${s}` : e);

module.exports = [
  { name: 'mm', args: 'Tensor self, Tensor mat2', returns: 'Tensor', variants: fn,
    kind: 'linalg', cpu: 'kd_cpu_mm', backward: { self: mmGrad1('self', 'mat2'), mat2: mmGrad2('self', 'mat2') },
    doc: 'Matrix product of two 2-D tensors.' },
  { name: 'bmm', args: 'Tensor self, Tensor mat2', returns: 'Tensor', variants: fn,
    kind: 'linalg', cpu: 'kd_cpu_bmm',
    backward: { self: 'grad.bmm(mat2.transpose(1, 2))', mat2: 'self.transpose(1, 2).bmm(grad)' },
    doc: 'Batched matrix product of two 3-D tensors.' },
  { name: 'matmul', args: 'Tensor self, Tensor other', returns: 'Tensor', variants: fn,
    kind: 'linalg', composite: 'kd_composite_matmul',
    doc: 'Matrix product with NumPy/PyTorch broadcasting (1-D, 2-D and batched operands).' },
  { name: 'addmm', args: 'Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1', returns: 'Tensor',
    variants: fn, kind: 'linalg', code: 'KD_ADDMM_MM', cpu: 'kd_cpu_addmm',
    backward: { self: scaled('grad', 'beta'), mat1: mmGrad1('mat1', 'mat2', 'alpha'), mat2: mmGrad2('mat1', 'mat2', 'alpha') },
    doc: 'beta * self + alpha * (mat1 @ mat2), self broadcast to the product (one gemm).' },
  { name: 'baddbmm', args: 'Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1',
    returns: 'Tensor', variants: fn, kind: 'linalg', code: 'KD_ADDMM_BMM', cpu: 'kd_cpu_addmm',
    backward: { self: scaled('grad', 'beta'), batch1: scaled('grad.bmm(batch2.transpose(1, 2))', 'alpha'),
      batch2: scaled('batch1.transpose(1, 2).bmm(grad)', 'alpha') },
    doc: 'beta * self + alpha * bmm(batch1, batch2), self broadcast to the product.' },
  { name: 'addbmm', args: 'Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1',
    returns: 'Tensor', variants: fn, kind: 'linalg', composite: 'kd_composite_addbmm',
    doc: 'beta * self + alpha * (sum over the batch of batch1[i] @ batch2[i]), as one gemm.' },
  { name: 'dot', args: 'Tensor self, Tensor tensor', returns: 'Tensor', variants: fn, kind: 'linalg',
    code: 'KD_VECPROD_DOT', composite: 'kd_composite_vecprod', doc: 'Dot product of two 1-D tensors (0-d result).' },
  { name: 'vdot', args: 'Tensor self, Tensor other', returns: 'Tensor', variants: fn, kind: 'linalg',
    code: 'KD_VECPROD_VDOT', composite: 'kd_composite_vecprod',
    doc: 'Dot product of two 1-D tensors, the first conjugated (the same as dot for real dtypes).' },
  { name: 'mv', args: 'Tensor self, Tensor vec', returns: 'Tensor', variants: fn, kind: 'linalg',
    code: 'KD_VECPROD_MV', composite: 'kd_composite_vecprod', doc: 'Matrix (2-D) times vector (1-D).' },
  { name: 'outer', args: 'Tensor self, Tensor vec2', returns: 'Tensor', variants: fn, kind: 'linalg',
    code: 'KD_VECPROD_OUTER', composite: 'kd_composite_vecprod',
    doc: 'Outer product of two 1-D tensors (dtypes promoted).' },
  { name: 'linear', args: 'Tensor input, Tensor weight, Tensor? bias', returns: 'Tensor', variants: ['function'],
    ns: ['', 'nn.functional'], kind: 'linalg', composite: 'kd_composite_linear',
    doc: 'input @ weight^T + bias; the bias goes into the gemm (beta = 1), so it costs no extra pass.' },
  { name: 'einsum', args: 'str equation, Tensor[] tensors', returns: 'Tensor', variants: ['function'], kind: 'linalg',
    composite: 'kd_composite_einsum', varargs: true,
    doc: "Einstein summation ('bij,bjk->bik'): diagonals, sums, and pairwise contractions by permute + reshape + bmm." },
];
