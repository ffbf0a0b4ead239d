// oplist/reductions.js - reductions and scans: sum/nansum/mean/nanmean/prod, max/min/amax/amin,
// argmax/argmin, var/std (and their *Mean forms), norm, logsumexp, all/any, countNonzero,
// median, cumsum/cumprod/cummax/cummin, plus the _internal ops their gradients use.
// Part of the op list (see ./index.js).
'use strict';

const R = (name, args, code, doc, extra = {}) => ({
  name, args, returns: 'Tensor', variants: ['function', 'method'], kind: 'reduction', code, cpu: 'kd_cpu_reduce',
  doc, ...extra,
});
// The gradient of an op that reduces `dim` of self: grad put back on self's shape.
// sum of x from each position to the end along dim
const RCUMSUM = (x) => `flip(cumsum(flip(${x}, [dim]), dim), [dim])`;
const EXPAND = 'sumBackward(grad, self.shape, dim, keepdim)';
// Evenly distributes grad among the elements equal to result (PyTorch's evenly_distribute_backward).
const EVEN = '(self == result) * grad / (self == result).sum()';
// Scatters grad to the positions in result1 along dim (PyTorch's value_selecting_reduction_backward).
const SELECT = 'zeros(self.shape, dtype=grad.dtype).scatter(dim, keepdim ? result1 : result1.unsqueeze(dim), ' +
  'keepdim ? grad : grad.unsqueeze(dim))';
// amax/amin: grad shared evenly among the ties of each reduced slice.
const AMASK = `(self == sumBackward(result, self.shape, dim, keepdim))`;
const VARGRAD = 'varBackward(grad, self, dim, unbiased, keepdim, correction=correction)';
const STDGRAD = 'varBackward(where(result == 0, 0, grad / (result * 2)), self, dim, unbiased, keepdim, correction=correction)';
const VARARGS = 'Tensor self, int[]? dim, bool? unbiased, bool keepdim=false, *, float? correction';

module.exports = [
  R('sum', 'Tensor self, int[]? dim, bool keepdim=false, *, dtype? dtype', 'KD_REDUCE_SUM',
    'Sum over dim (all dims when omitted); integer and bool inputs sum as int64.', { backward: { self: EXPAND } }),
  R('nansum', 'Tensor self, int[]? dim, bool keepdim=false, *, dtype? dtype', 'KD_REDUCE_NANSUM',
    'Sum over dim treating NaN as zero.', { backward: { self: `where(isnan(self), 0, ${EXPAND})` } }),
  R('mean', 'Tensor self, int[]? dim, bool keepdim=false, *, dtype? dtype', 'KD_REDUCE_MEAN',
    'Mean over dim (all dims when omitted); floating-point inputs only unless dtype is given.',
    { backward: { self: 'meanBackward(grad, self.shape, dim, keepdim)' } }),
  R('nanmean', 'Tensor self, int[]? dim, bool keepdim=false, *, dtype? dtype', 'KD_REDUCE_NANMEAN',
    'Mean over dim of the elements that are not NaN.',
    { backward: { self: `where(isnan(self), 0, ${EXPAND} / logicalNot(isnan(self)).sum(dim, true))` } }),
  R('prod', 'Tensor self, int? dim, bool keepdim=false, *, dtype? dtype', 'KD_REDUCE_PROD',
    'Product over dim (all elements when omitted); integer and bool inputs multiply as int64.',
    { backward: { self: 'prodBackward(grad, self, result, dim, keepdim)' } }),
  R('max', 'Tensor self', 'KD_REDUCE_MAX', 'The largest element.', { backward: { self: EVEN } }),
  { name: 'max.dim', args: 'Tensor self, int dim, bool keepdim=false', returns: '(Tensor values, Tensor indices)',
    variants: ['function', 'method'], kind: 'reduction', code: 'KD_REDUCE_MAX', cpu: 'kd_cpu_arg_reduce',
    backward: { self: SELECT }, doc: 'Largest values along dim and their indices.' },
  R('min', 'Tensor self', 'KD_REDUCE_MIN', 'The smallest element.', { backward: { self: EVEN } }),
  { name: 'min.dim', args: 'Tensor self, int dim, bool keepdim=false', returns: '(Tensor values, Tensor indices)',
    variants: ['function', 'method'], kind: 'reduction', code: 'KD_REDUCE_MIN', cpu: 'kd_cpu_arg_reduce',
    backward: { self: SELECT }, doc: 'Smallest values along dim and their indices.' },
  R('amax', 'Tensor self, int[]? dim, bool keepdim=false', 'KD_REDUCE_AMAX',
    'Largest values over the dims (all when empty); gradient shared evenly among ties.',
    { backward: { self: `${EXPAND} * ${AMASK} / ${AMASK}.sum(dim, true)` } }),
  R('amin', 'Tensor self, int[]? dim, bool keepdim=false', 'KD_REDUCE_AMIN',
    'Smallest values over the dims (all when empty); gradient shared evenly among ties.',
    { backward: { self: `${EXPAND} * ${AMASK} / ${AMASK}.sum(dim, true)` } }),
  { name: 'argmax', args: 'Tensor self, int? dim, bool keepdim=false', returns: 'Tensor',
    variants: ['function', 'method'], kind: 'reduction', code: 'KD_REDUCE_ARGMAX', cpu: 'kd_cpu_arg_reduce',
    flags: ['nondiff'], doc: 'Index of the largest value along dim (of the flattened tensor when omitted).' },
  { name: 'argmin', args: 'Tensor self, int? dim, bool keepdim=false', returns: 'Tensor',
    variants: ['function', 'method'], kind: 'reduction', code: 'KD_REDUCE_ARGMIN', cpu: 'kd_cpu_arg_reduce',
    flags: ['nondiff'], doc: 'Index of the smallest value along dim (of the flattened tensor when omitted).' },
  R('var', VARARGS, 'KD_REDUCE_VAR',
    'Variance over dim with Bessel\'s correction (correction=1, or unbiased=false for 0).', { backward: { self: VARGRAD } }),
  R('var.unbiased', 'Tensor self, bool unbiased', 'KD_REDUCE_VAR', 'Variance of all elements.',
    { backward: { self: 'varBackward(grad, self, null, unbiased, false)' } }),
  R('std', VARARGS, 'KD_REDUCE_STD',
    'Standard deviation over dim (correction=1, or unbiased=false for 0).', { backward: { self: STDGRAD } }),
  R('std.unbiased', 'Tensor self, bool unbiased', 'KD_REDUCE_STD', 'Standard deviation of all elements.',
    { backward: { self: 'varBackward(where(result == 0, 0, grad / (result * 2)), self, null, unbiased, false)' } }),
  R('varMean', VARARGS, 'KD_REDUCE_VAR_MEAN', 'Variance and mean over dim, as (var, mean).',
    { returns: '(Tensor var, Tensor mean)', backward: { self: `${VARGRAD} + meanBackward(grad1, self.shape, dim, keepdim)` } }),
  R('stdMean', VARARGS, 'KD_REDUCE_STD_MEAN', 'Standard deviation and mean over dim, as (std, mean).',
    { returns: '(Tensor std, Tensor mean)', backward: { self: `${STDGRAD} + meanBackward(grad1, self.shape, dim, keepdim)` } }),
  R('varMean.unbiased', 'Tensor self, bool unbiased', 'KD_REDUCE_VAR_MEAN', 'Variance and mean of all elements, as (var, mean).',
    { returns: '(Tensor var, Tensor mean)',
      backward: { self: 'varBackward(grad, self, null, unbiased, false) + meanBackward(grad1, self.shape, null, false)' } }),
  R('stdMean.unbiased', 'Tensor self, bool unbiased', 'KD_REDUCE_STD_MEAN', 'Standard deviation and mean of all elements, as (std, mean).',
    { returns: '(Tensor std, Tensor mean)',
      backward: { self: 'varBackward(where(result == 0, 0, grad / (result * 2)), self, null, unbiased, false) + ' +
        'meanBackward(grad1, self.shape, null, false)' } }),
  R('norm', 'Tensor self, float? p=2, int[]? dim, bool keepdim=false, *, dtype? dtype', 'KD_REDUCE_NORM',
    'Vector p-norm over dim (all elements when omitted): p any number, Infinity or -Infinity.',
    { backward: { self: 'normBackward(grad, self, p, result, dim, keepdim)' } }),
  // 'fro' is the 2-norm above; 'nuc' the sum of singular values (linalg.matrix_norm), so the
  // gradient goes through the SVD as PyTorch's
  { name: 'norm.str', args: 'Tensor self, str p, int[]? dim, bool keepdim=false, *, dtype? dtype', returns: 'Tensor',
    variants: ['function', 'method'], kind: 'composite', composite: 'kd_composite_norm_str',
    doc: "Frobenius norm over dim for p='fro'; nuclear norm (sum of singular values) over the two dims for p='nuc'." },
  R('logsumexp', 'Tensor self, int[1] dim, bool keepdim=false', 'KD_REDUCE_LOGSUMEXP',
    'log(sum(exp(self))) over dim, computed stably.',
    { backward: { self: `${EXPAND} * exp(self - sumBackward(result, self.shape, dim, keepdim))` } }),
  R('all', 'Tensor self, int[]? dim, bool keepdim=false', 'KD_REDUCE_ALL',
    'Whether every element is non-zero (over dim when given); bool result (uint8 for uint8 input).', { flags: ['nondiff'] }),
  R('any', 'Tensor self, int[]? dim, bool keepdim=false', 'KD_REDUCE_ANY',
    'Whether some element is non-zero (over dim when given); bool result (uint8 for uint8 input).', { flags: ['nondiff'] }),
  R('countNonzero', 'Tensor self, int[]? dim', 'KD_REDUCE_COUNT_NONZERO',
    'Number of non-zero elements over dim (all when omitted), as int64.', { flags: ['nondiff'] }),
  { name: 'median', args: 'Tensor self', returns: 'Tensor', variants: ['function', 'method'], kind: 'reduction',
    code: 'KD_REDUCE_MEDIAN', cpu: 'kd_cpu_median', backward: { self: EVEN },
    doc: 'The lower median of all elements (NaN if any element is NaN).' },
  { name: 'median.dim', args: 'Tensor self, int dim, bool keepdim=false', returns: '(Tensor values, Tensor indices)',
    variants: ['function', 'method'], kind: 'reduction', code: 'KD_REDUCE_MEDIAN', cpu: 'kd_cpu_median',
    backward: { self: SELECT }, doc: 'Lower medians along dim and their indices.' },
  { name: 'cumsum', args: 'Tensor self, int dim, *, dtype? dtype', returns: 'Tensor', variants: ['function', 'method'],
    kind: 'reduction', code: 'KD_SCAN_CUMSUM', cpu: 'kd_cpu_scan', backward: { self: 'flip(cumsum(flip(grad, [dim]), dim), [dim])' },
    doc: 'Cumulative sum along dim; integer and bool inputs sum as int64.' },
  { name: 'cumprod', args: 'Tensor self, int dim, *, dtype? dtype', returns: 'Tensor', variants: ['function', 'method'],
    kind: 'reduction', code: 'KD_SCAN_CUMPROD', cpu: 'kd_cpu_scan', backward: { self: 'cumprodBackward(grad, self, dim, result)' },
    doc: 'Cumulative product along dim; integer and bool inputs multiply as int64.' },
  { name: 'cummax', args: 'Tensor self, int dim', returns: '(Tensor values, Tensor indices)', variants: ['function', 'method'],
    kind: 'reduction', code: 'KD_SCAN_CUMMAX', cpu: 'kd_cpu_scan',
    backward: { self: 'zeros(self.shape, dtype=grad.dtype).scatterAdd(dim, result1, grad)' },
    doc: 'Running maximum along dim and the index where it was found (the last of ties).' },
  { name: 'cummin', args: 'Tensor self, int dim', returns: '(Tensor values, Tensor indices)', variants: ['function', 'method'],
    kind: 'reduction', code: 'KD_SCAN_CUMMIN', cpu: 'kd_cpu_scan',
    backward: { self: 'zeros(self.shape, dtype=grad.dtype).scatterAdd(dim, result1, grad)' },
    doc: 'Running minimum along dim and the index where it was found (the last of ties).' },

  // ---- the backward ops of the family (kd._internal, not public API) ----
  { name: 'sumBackward', args: 'Tensor grad, int[] sizes, int[]? dim, bool keepdim', returns: 'Tensor',
    variants: ['function'], ns: ['_internal'], kind: 'composite', composite: 'kd_composite_sum_backward',
    doc: 'grad of a reduction over dim put back on the input shape (unsqueezed if not keepdim, then expanded).' },
  { name: 'meanBackward', args: 'Tensor grad, int[] sizes, int[]? dim, bool keepdim', returns: 'Tensor',
    variants: ['function'], ns: ['_internal'], kind: 'composite', composite: 'kd_composite_sum_backward',
    doc: 'sumBackward divided by the number of elements reduced.' },
  { name: 'varBackward', args: 'Tensor grad, Tensor self, int[]? dim, bool? unbiased, bool keepdim, *, float? correction',
    returns: 'Tensor', variants: ['function'], ns: ['_internal'], kind: 'composite', composite: 'kd_composite_var_backward',
    doc: 'Gradient of var: 2 * grad * (self - mean) / (N - correction).' },
  { name: 'normBackward', args: 'Tensor grad, Tensor self, float? p, Tensor result, int[]? dim, bool keepdim',
    returns: 'Tensor', variants: ['function'], ns: ['_internal'], kind: 'composite', composite: 'kd_composite_norm_backward',
    doc: 'Gradient of the vector p-norm (PyTorch\'s norm_backward; zero where the norm is zero).' },
  { name: 'prodBackward', args: 'Tensor gradOutput, Tensor self, Tensor output, int? dim, bool keepdim', returns: 'Tensor',
    variants: ['function'], ns: ['_internal'], kind: 'reduction', code: 'KD_REDUCE_PROD_BACKWARD', cpu: 'kd_cpu_reduce_backward',
    // double backward: output is prod(self), so the self formula is the total derivative (the
    // Hessian of prod, exact with zeros) and output gets none of its own ('result' in a formula
    // names this op's own output, hence the argument's name)
    backward: {
      gradOutput: '(grad * prodBackward(onesLike(gradOutput), self, output, dim, keepdim)).sum(dim, keepdim)',
      self: 'prodDoubleBackward(grad, gradOutput, self, dim, keepdim)',
      output: 'zeros(output.shape, dtype=grad.dtype)',
    },
    doc: 'Gradient of prod, exact when the reduced slice holds zeros.' },
  { name: 'cumprodBackward', args: 'Tensor gradOutput, Tensor self, int dim, Tensor output', returns: 'Tensor',
    variants: ['function'], ns: ['_internal'], kind: 'reduction', code: 'KD_SCAN_CUMPROD_BACKWARD', cpu: 'kd_cpu_scan',
    // double backward (output = cumprod(self): the self formula is the total derivative, output
    // gets none of its own); exact for inputs without zeros (a zero gives inf/NaN, never a silent 0)
    backward: {
      gradOutput: 'cumsum(grad / self, dim) * output',
      self: `(${RCUMSUM('gradOutput * output * cumsum(grad / self, dim)')} - grad / self * ${RCUMSUM('gradOutput * output')}) / self`,
      output: 'zeros(output.shape, dtype=grad.dtype)',
    },
    doc: 'Gradient of cumprod, exact when the line holds zeros.' },
];
