// oplist/reductions.js - reductions: sum/mean/max/min/argmax. Part of the op list (see ./index.js).
'use strict';

module.exports = [
  { name: 'sum', args: 'Tensor self, int[]? dim, bool keepdim=false, *, dtype? dtype', returns: 'Tensor',
    variants: ['function', 'method'], kind: 'reduction', code: 'KD_REDUCE_SUM', cpu: 'kd_cpu_reduce',
    backward: { self: 'reduceBackward(grad, self.shape, dim, keepdim)' },
    doc: 'Sum over dim (all dims when omitted); integer and bool inputs sum as int64.' },
  { name: 'mean', args: 'Tensor self, int[]? dim, bool keepdim=false, *, dtype? dtype', returns: 'Tensor',
    variants: ['function', 'method'], kind: 'reduction', code: 'KD_REDUCE_MEAN', cpu: 'kd_cpu_reduce',
    backward: { self: 'reduceBackward(grad, self.shape, dim, keepdim) / (self.numel / grad.numel)' },
    doc: 'Mean over dim (all dims when omitted); floating-point inputs only unless dtype is given.' },
  { name: 'max', args: 'Tensor self', returns: 'Tensor', variants: ['function', 'method'], kind: 'reduction',
    code: 'KD_REDUCE_MAX', cpu: 'kd_cpu_reduce',
    backward: { self: 'where(self == result, grad / (self == result).sum(), 0)' }, doc: 'The largest element.' },
  { name: 'max.dim', args: 'Tensor self, int dim, bool keepdim=false', returns: '(Tensor values, Tensor indices)',
    variants: ['function', 'method'], kind: 'reduction', code: 'KD_REDUCE_MAX', cpu: 'kd_cpu_arg_reduce',
    doc: 'Largest values along dim and their indices.' },
  { name: 'min', args: 'Tensor self', returns: 'Tensor', variants: ['function', 'method'], kind: 'reduction',
    code: 'KD_REDUCE_MIN', cpu: 'kd_cpu_reduce',
    backward: { self: 'where(self == result, grad / (self == result).sum(), 0)' }, doc: 'The smallest element.' },
  { name: 'min.dim', args: 'Tensor self, int dim, bool keepdim=false', returns: '(Tensor values, Tensor indices)',
    variants: ['function', 'method'], kind: 'reduction', code: 'KD_REDUCE_MIN', cpu: 'kd_cpu_arg_reduce',
    doc: 'Smallest values along dim and their indices.' },
  { name: 'argmax', args: 'Tensor self, int? dim, bool keepdim=false', returns: 'Tensor',
    variants: ['function', 'method'], kind: 'reduction', code: 'KD_REDUCE_ARGMAX', cpu: 'kd_cpu_arg_reduce',
    flags: ['nondiff'], doc: 'Index of the largest value along dim (of the flattened tensor when omitted).' },
];
