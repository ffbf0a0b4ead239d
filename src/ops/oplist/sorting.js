// oplist/sorting.js - sort, argsort, topk (kd_cpu_sort) and unique (kd_cpu_unique). Part of the op
// list (see ./index.js).
'use strict';

module.exports = [
  { name: 'sort', args: 'Tensor self, int dim=-1, bool descending=false, *, bool stable=false',
    returns: '(Tensor values, Tensor indices)', variants: ['function', 'method'], kind: 'composite',
    code: 'KD_SORT_SORT', cpu: 'kd_cpu_sort',
    backward: { self: 'zeros(self.shape, dtype=grad.dtype).scatter(dim, result1, grad)' },
    doc: 'Values sorted along dim and their original indices (always stable; NaN sorts as the largest).' },
  { name: 'argsort', args: 'Tensor self, int dim=-1, bool descending=false, *, bool stable=false', returns: 'Tensor',
    variants: ['function', 'method'], kind: 'composite', code: 'KD_SORT_ARGSORT', cpu: 'kd_cpu_sort',
    flags: ['nondiff'], doc: 'The indices that sort self along dim.' },
  { name: 'topk', args: 'Tensor self, int k, int dim=-1, bool largest=true, bool sorted=true',
    returns: '(Tensor values, Tensor indices)', variants: ['function', 'method'], kind: 'composite',
    code: 'KD_SORT_TOPK', cpu: 'kd_cpu_sort',
    backward: { self: 'zeros(self.shape, dtype=grad.dtype).scatter(dim, result1, grad)' },
    doc: 'The k largest (or smallest) values along dim and their indices.' },
  { name: 'unique', args: 'Tensor self, bool sorted=true, bool returnInverse=false, bool returnCounts=false, int? dim',
    returns: 'Tensor[]', variants: ['function', 'method'], kind: 'composite', cpu: 'kd_cpu_unique',
    flags: ['nondiff'],
    doc: 'The sorted unique elements (or slices along dim), with the inverse indices and counts on request.' },
];
