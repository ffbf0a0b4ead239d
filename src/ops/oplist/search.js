// oplist/search.js - searching and counting: searchsorted/bucketize (kd_cpu_searchsorted),
// histc/bincount (src/cpu/histogram.c), isin, uniqueConsecutive, kthvalue/mode (src/cpu/select.c),
// quantile/nanquantile and aminmax (composites in src/ops/search_composites.c) and logcumsumexp
// (the scans of src/cpu/scan.c). Part of the op list (see ./index.js).
'use strict';

// Scatters grad to the positions in result1 along dim (PyTorch's value_selecting_reduction_backward).
const SELECT = 'zeros(self.shape, dtype=grad.dtype).scatter(dim, keepdim ? result1 : result1.unsqueeze(dim), ' +
  'keepdim ? grad : grad.unsqueeze(dim))';
// PyTorch's logcumsumexp_backward: the positive and negative parts of grad in log space, each
// summed from the end with a reversed logcumsumexp (-3.38e38 stands for log(0), finite in every
// floating dtype but float16, where it is -inf).
const RLCSE = (x) => `flip(logcumsumexp(flip(${x}, [dim]), dim), [dim])`;
const LCSE_GRAD = 'self.ndim == 0 ? grad : ' +
  `exp(${RLCSE('where(grad > 0, log(abs(grad)), -3.38e38) - result')} + self) - ` +
  `exp(${RLCSE('where(grad < 0, log(abs(grad)), -3.38e38) - result')} + self)`;
const QUANTILE_ARGS = "Tensor self, Tensor|Scalar q, int? dim, bool keepdim=false, *, str interpolation='linear'";

module.exports = [
  { name: 'searchsorted',
    args: 'Tensor sortedSequence, Tensor|Scalar values, *, bool outInt32=false, bool right=false, str? side, Tensor? sorter',
    returns: 'Tensor', variants: ['function'], kind: 'composite', code: 'KD_SEARCH_SEARCHSORTED', cpu: 'kd_cpu_searchsorted',
    flags: ['nondiff'],
    doc: 'Indices where values would be inserted into the innermost dim of sortedSequence to keep it sorted ' +
      "(right / side='right': after equal elements; sorter: the indices that sort an unsorted sequence)." },
  { name: 'bucketize', args: 'Tensor|Scalar self, Tensor boundaries, *, bool outInt32=false, bool right=false',
    returns: 'Tensor', variants: ['function'], kind: 'composite', code: 'KD_SEARCH_BUCKETIZE', cpu: 'kd_cpu_searchsorted',
    flags: ['nondiff'], doc: 'The bucket of each element of self among the sorted 1-D boundaries (searchsorted(boundaries, self)).' },
  { name: 'histc', args: 'Tensor self, int bins=100, Scalar min=0, Scalar max=0', returns: 'Tensor',
    variants: ['function', 'method'], kind: 'reduction', cpu: 'kd_cpu_histc', flags: ['nondiff'],
    doc: 'Histogram of self in bins equal-width bins over [min, max] (the data range when min == max); ' +
      'elements outside are ignored. Floating inputs (and integers, binned as PyTorch\'s CUDA does).' },
  { name: 'bincount', args: 'Tensor self, Tensor? weights, int minlength=0', returns: 'Tensor',
    variants: ['function', 'method'], kind: 'reduction', cpu: 'kd_cpu_bincount', flags: ['nondiff'],
    doc: 'Occurrences of each value of a 1-D non-negative integer tensor (or the sums of weights), ' +
      'at least minlength bins.' },
  { name: 'isin', args: 'Tensor|Scalar elements, Tensor|Scalar testElements, *, bool assumeUnique=false, bool invert=false',
    returns: 'Tensor', variants: ['function'], kind: 'composite', composite: 'kd_composite_isin', flags: ['nondiff'],
    doc: 'Whether each element of elements occurs in testElements (bool, shaped as elements; invert: not in).' },
  { name: 'uniqueConsecutive', args: 'Tensor self, bool returnInverse=false, bool returnCounts=false, int? dim',
    returns: 'Tensor[]', variants: ['function', 'method'], kind: 'composite', cpu: 'kd_cpu_unique_consecutive',
    flags: ['nondiff'],
    doc: 'Self with each run of equal consecutive elements (or slices along dim) collapsed to one, ' +
      'with the inverse indices and run lengths on request.' },
  { name: 'kthvalue', args: 'Tensor self, int k, int dim=-1, bool keepdim=false', returns: '(Tensor values, Tensor indices)',
    variants: ['function', 'method'], kind: 'reduction', code: 'KD_SELECT_KTHVALUE', cpu: 'kd_cpu_select_rows',
    backward: { self: SELECT }, doc: 'The k-th smallest value along dim (NaN the largest) and its index.' },
  { name: 'mode', args: 'Tensor self, int dim=-1, bool keepdim=false', returns: '(Tensor values, Tensor indices)',
    variants: ['function', 'method'], kind: 'reduction', code: 'KD_SELECT_MODE', cpu: 'kd_cpu_select_rows',
    backward: { self: SELECT },
    doc: 'The most frequent value along dim (the smallest of equally frequent ones) and the index of its last occurrence.' },
  { name: 'quantile', args: QUANTILE_ARGS, returns: 'Tensor', variants: ['function', 'method'], kind: 'reduction',
    composite: 'kd_composite_quantile',
    doc: "The q-th quantiles of self along dim (of all elements when omitted); interpolation 'linear', 'lower', " +
      "'higher', 'midpoint' or 'nearest'; a line holding NaN gives NaN. A tensor q puts its dim first." },
  { name: 'nanquantile', args: QUANTILE_ARGS, returns: 'Tensor', variants: ['function', 'method'], kind: 'reduction',
    composite: 'kd_composite_quantile', doc: 'quantile ignoring NaN (NaN only for a line of NaN).' },
  { name: 'aminmax', args: 'Tensor self, *, int? dim, bool keepdim=false', returns: '(Tensor min, Tensor max)',
    variants: ['function', 'method'], kind: 'reduction', composite: 'kd_composite_aminmax',
    doc: 'The smallest and the largest values along dim (of all elements when omitted), as (min, max).' },
  { name: 'logcumsumexp', args: 'Tensor self, int dim', returns: 'Tensor', variants: ['function', 'method'],
    kind: 'reduction', code: 'KD_SCAN_LOGCUMSUMEXP', cpu: 'kd_cpu_scan', backward: { self: LCSE_GRAD },
    doc: 'log(cumsum(exp(self))) along dim, computed stably.' },
];
