// oplist.js - THE op list: every op kindling dispatches is declared here once. tools/gen-ops.js
// turns it into the C op table and kernel table (src/ops/ops_gen.{h,c}), the JS functions and
// Tensor methods (lib/ops.gen.js) and the TypeScript declarations (types/ops.gen.d.ts).
// Run `npm run gen` after editing; a test checks the generated files are fresh.
//
// Fields:
//   name      op name (camelCase JS name; PyTorch's overload suffix after '.', e.g. 'max.dim')
//   args      PyTorch-style schema; '*' starts keyword-only args (options object in JS).
//             Types: Tensor Tensor? Tensor|Scalar Scalar Scalar? int int? int|int[] int[] int[]?
//                    float bool dtype? device? str? Tensor[]
//   returns   'Tensor', 'Tensor[]', or '(Tensor values, Tensor indices)'
//   variants  'function' (kd.op), 'method' (t.op), 'inplace' (also generates 'op_', method only)
//   kind      pointwise | reduction | view | factory | linalg | copy | composite (for docs/OPS.md)
//   code      selects the operation inside a shared kernel (a C enum value)
//   cpu/cuda  kernel function per backend key
//   generic   one device-agnostic kernel for every backend key (views, composite-explicit)
//   composite a decomposition into other ops: registered on every key, Autograd included
//   flags     extra KD_OP_FLAG_* (nondiff, cross_device)
//   doc       one line for JSDoc
'use strict';

const unary = (name, code, doc, extra = {}) => ({
  name, args: 'Tensor self', returns: 'Tensor', variants: ['function', 'method', 'inplace'],
  kind: 'pointwise', code, cpu: 'kd_cpu_unary', doc, ...extra,
});
const binary = (name, code, doc, extra = {}) => ({
  name, args: 'Tensor self, Tensor|Scalar other', returns: 'Tensor', variants: ['function', 'method', 'inplace'],
  kind: 'pointwise', code, cpu: 'kd_cpu_binary', doc, ...extra,
});
const compare = (name, code, doc) => binary(name, code, doc, { flags: ['nondiff'] });
const factory = (name, args, doc, extra = {}) => ({
  name, args, returns: 'Tensor', variants: ['function'], kind: 'factory', doc, ...extra,
});
const like = (name, args, code, doc) => ({
  name, args, returns: 'Tensor', variants: ['function'], kind: 'factory', code, composite: 'kd_composite_like', doc,
});

module.exports = [
  // ---- creation --------------------------------------------------------------------------
  factory('empty', 'int[] size, *, dtype? dtype, device? device', 'A tensor with uninitialised data.',
    { generic: 'kd_factory_empty' }),
  factory('zeros', 'int[] size, *, dtype? dtype, device? device', 'A tensor filled with 0.',
    { composite: 'kd_factory_fill', code: 'KD_FILL_ZEROS' }),
  factory('ones', 'int[] size, *, dtype? dtype, device? device', 'A tensor filled with 1.',
    { composite: 'kd_factory_fill', code: 'KD_FILL_ONES' }),
  factory('full', 'int[] size, Scalar fillValue, *, dtype? dtype, device? device',
    'A tensor filled with fillValue (dtype inferred from it when not given).',
    { composite: 'kd_factory_fill', code: 'KD_FILL_VALUE' }),
  factory('arange', 'Scalar start, Scalar? end, Scalar step=1, *, dtype? dtype, device? device',
    'Values from start (inclusive) to end (exclusive) by step; arange(end) counts from 0.',
    { cpu: 'kd_cpu_arange' }),
  factory('linspace', 'Scalar start, Scalar end, int steps, *, dtype? dtype, device? device',
    'steps values evenly spaced from start to end inclusive.', { cpu: 'kd_cpu_linspace' }),
  factory('eye', 'int n, int? m, *, dtype? dtype, device? device', 'A 2-D tensor with ones on the diagonal.',
    { composite: 'kd_factory_eye' }),
  factory('rand', 'int[] size, *, dtype? dtype, device? device', 'Uniform random numbers in [0, 1) (Philox4x32-10).',
    { cpu: 'kd_cpu_random', code: 'KD_RANDOM_UNIFORM' }),
  factory('randn', 'int[] size, *, dtype? dtype, device? device', 'Standard normal random numbers (Philox4x32-10).',
    { cpu: 'kd_cpu_random', code: 'KD_RANDOM_NORMAL' }),
  factory('randint', 'int low, int high, int[] size, *, dtype? dtype, device? device',
    'Random integers in [low, high) (int64 unless dtype says otherwise).',
    { cpu: 'kd_cpu_random', code: 'KD_RANDOM_INT' }),
  like('emptyLike', 'Tensor self, *, dtype? dtype, device? device', 'KD_LIKE_EMPTY', 'empty() with the shape of self.'),
  like('zerosLike', 'Tensor self, *, dtype? dtype, device? device', 'KD_LIKE_ZEROS', 'zeros() with the shape of self.'),
  like('onesLike', 'Tensor self, *, dtype? dtype, device? device', 'KD_LIKE_ONES', 'ones() with the shape of self.'),
  like('fullLike', 'Tensor self, Scalar fillValue, *, dtype? dtype, device? device', 'KD_LIKE_FULL',
    'full() with the shape of self.'),
  like('randLike', 'Tensor self, *, dtype? dtype, device? device', 'KD_LIKE_RAND', 'rand() with the shape of self.'),
  like('randnLike', 'Tensor self, *, dtype? dtype, device? device', 'KD_LIKE_RANDN', 'randn() with the shape of self.'),
  like('randintLike', 'Tensor self, int low, int high, *, dtype? dtype, device? device', 'KD_LIKE_RANDINT',
    'randint() with the shape of self.'),

  // ---- copies and conversions -------------------------------------------------------------
  { name: 'fill', args: 'Tensor self, Scalar value', returns: 'Tensor', variants: ['inplace'], kind: 'pointwise',
    cpu: 'kd_cpu_fill', doc: 'Fills self with value.', inplaceOnly: true },
  { name: 'zero', args: 'Tensor self', returns: 'Tensor', variants: ['inplace'], kind: 'pointwise',
    composite: 'kd_composite_zero', doc: 'Fills self with zeros.', inplaceOnly: true },
  { name: 'copy', args: 'Tensor self, Tensor src', returns: 'Tensor', variants: ['inplace'], kind: 'copy',
    cpu: 'kd_cpu_copy', flags: ['cross_device'], inplaceOnly: true,
    doc: 'Copies src into self (broadcasting src, converting dtype, across devices).' },
  { name: 'to', args: 'Tensor self, *, dtype? dtype, device? device, bool copy=false', returns: 'Tensor',
    variants: ['method'], kind: 'copy', composite: 'kd_composite_to', flags: ['cross_device'],
    doc: 'This tensor converted to dtype and/or moved to device (self when nothing changes and copy is false).' },
  { name: 'clone', args: 'Tensor self', returns: 'Tensor', variants: ['function', 'method'], kind: 'copy',
    composite: 'kd_composite_clone', doc: 'A copy with its own storage.' },
  { name: 'contiguous', args: 'Tensor self', returns: 'Tensor', variants: ['method'], kind: 'copy',
    composite: 'kd_composite_contiguous', doc: 'self if contiguous, else a contiguous copy.' },

  // ---- views ------------------------------------------------------------------------------
  { name: 'view', args: 'Tensor self, int[] size', returns: 'Tensor', variants: ['method'], kind: 'view',
    generic: 'kd_view_view', doc: 'A view with a new shape (one dim may be -1); fails if the strides do not allow it.' },
  { name: 'reshape', args: 'Tensor self, int[] shape', returns: 'Tensor', variants: ['function', 'method'],
    kind: 'view', composite: 'kd_composite_reshape', doc: 'A view with a new shape when possible, else a copy.' },
  { name: 'flatten', args: 'Tensor self, int startDim=0, int endDim=-1', returns: 'Tensor',
    variants: ['function', 'method'], kind: 'view', composite: 'kd_composite_flatten',
    doc: 'Flattens dims startDim..endDim into one.' },
  { name: 'transpose', args: 'Tensor self, int dim0, int dim1', returns: 'Tensor', variants: ['function', 'method'],
    kind: 'view', generic: 'kd_view_transpose', doc: 'Swaps two dims (a view).' },
  { name: 't', args: 'Tensor self', returns: 'Tensor', variants: ['function', 'method'], kind: 'view',
    composite: 'kd_composite_t', doc: 'Transposes a tensor of at most 2 dims.' },
  { name: 'permute', args: 'Tensor self, int[] dims', returns: 'Tensor', variants: ['function', 'method'],
    kind: 'view', generic: 'kd_view_permute', doc: 'Reorders the dims (a view).' },
  { name: 'narrow', args: 'Tensor self, int dim, int start, int length', returns: 'Tensor',
    variants: ['function', 'method'], kind: 'view', generic: 'kd_view_narrow',
    doc: 'length elements of dim from start (a view).' },
  { name: 'select', args: 'Tensor self, int dim, int index', returns: 'Tensor', variants: ['function', 'method'],
    kind: 'view', generic: 'kd_view_select', doc: 'The slice at index along dim, removing dim (a view).' },
  { name: 'slice', args: 'Tensor self, int dim=0, int? start, int? end, int step=1', returns: 'Tensor',
    variants: ['method'], kind: 'view', generic: 'kd_view_slice',
    doc: 'Elements start:end:step along dim, Python-style bounds (a view).' },
  { name: 'unsqueeze', args: 'Tensor self, int dim', returns: 'Tensor', variants: ['function', 'method'],
    kind: 'view', generic: 'kd_view_unsqueeze', doc: 'Inserts a dim of size 1 (a view).' },
  { name: 'squeeze', args: 'Tensor self, int[]? dim', returns: 'Tensor', variants: ['function', 'method'],
    kind: 'view', generic: 'kd_view_squeeze', doc: 'Removes dims of size 1 (all, or those listed).' },
  { name: 'expand', args: 'Tensor self, int[] size', returns: 'Tensor', variants: ['method'], kind: 'view',
    generic: 'kd_view_expand', doc: 'Broadcasts size-1 dims to size with stride 0 (-1 keeps a size).' },
  { name: 'expandAs', args: 'Tensor self, Tensor other', returns: 'Tensor', variants: ['method'], kind: 'view',
    composite: 'kd_composite_expand_as', doc: 'expand() to the shape of other.' },
  { name: 'asStrided', args: 'Tensor self, int[] size, int[] stride, int? storageOffset', returns: 'Tensor',
    variants: ['function', 'method'], kind: 'view', generic: 'kd_view_as_strided',
    doc: 'A view with explicit sizes, strides and storage offset (bounds-checked against the storage).' },
  { name: 'chunk', args: 'Tensor self, int chunks, int dim=0', returns: 'Tensor[]', variants: ['function', 'method'],
    kind: 'view', composite: 'kd_composite_chunk', doc: 'Splits into `chunks` views of (nearly) equal size.' },
  { name: 'split', args: 'Tensor self, int|int[] splitSize, int dim=0', returns: 'Tensor[]',
    variants: ['function', 'method'], kind: 'view', composite: 'kd_composite_split',
    doc: 'Splits into views of splitSize each (or of the listed sizes).' },

  // ---- pointwise --------------------------------------------------------------------------
  binary('add', 'KD_BINARY_ADD', 'self + alpha * other, broadcasting.', { args: 'Tensor self, Tensor|Scalar other, *, Scalar alpha=1' }),
  binary('sub', 'KD_BINARY_SUB', 'self - alpha * other, broadcasting.', { args: 'Tensor self, Tensor|Scalar other, *, Scalar alpha=1' }),
  binary('mul', 'KD_BINARY_MUL', 'self * other, broadcasting.'),
  binary('div', 'KD_BINARY_DIV', "self / other; roundingMode 'trunc' or 'floor' rounds the quotient.",
    { args: 'Tensor self, Tensor|Scalar other, *, str? roundingMode' }),
  binary('pow', 'KD_BINARY_POW', 'self raised to the power other.'),
  compare('eq', 'KD_BINARY_EQ', 'self == other (bool).'),
  compare('ne', 'KD_BINARY_NE', 'self != other (bool).'),
  compare('lt', 'KD_BINARY_LT', 'self < other (bool).'),
  compare('le', 'KD_BINARY_LE', 'self <= other (bool).'),
  compare('gt', 'KD_BINARY_GT', 'self > other (bool).'),
  compare('ge', 'KD_BINARY_GE', 'self >= other (bool).'),
  unary('neg', 'KD_UNARY_NEG', '-self.'),
  unary('abs', 'KD_UNARY_ABS', '|self|.'),
  unary('exp', 'KD_UNARY_EXP', 'e^self.'),
  unary('log', 'KD_UNARY_LOG', 'Natural logarithm.'),
  unary('sqrt', 'KD_UNARY_SQRT', 'Square root.'),
  unary('relu', 'KD_UNARY_RELU', 'max(self, 0).'),
  unary('sigmoid', 'KD_UNARY_SIGMOID', '1 / (1 + e^-self).'),
  unary('tanh', 'KD_UNARY_TANH', 'Hyperbolic tangent.'),
  { name: 'where', args: 'Tensor condition, Tensor|Scalar self, Tensor|Scalar other', returns: 'Tensor',
    variants: ['function'], kind: 'pointwise', cpu: 'kd_cpu_where',
    doc: 'Elements of self where condition is true, else of other, broadcasting all three.' },

  // ---- reductions -------------------------------------------------------------------------
  { name: 'sum', args: 'Tensor self, int[]? dim, bool keepdim=false, *, dtype? dtype', returns: 'Tensor',
    variants: ['function', 'method'], kind: 'reduction', code: 'KD_REDUCE_SUM', cpu: 'kd_cpu_reduce',
    doc: 'Sum over dim (all dims when omitted); integer and bool inputs sum as int64.' },
  { name: 'mean', args: 'Tensor self, int[]? dim, bool keepdim=false, *, dtype? dtype', returns: 'Tensor',
    variants: ['function', 'method'], kind: 'reduction', code: 'KD_REDUCE_MEAN', cpu: 'kd_cpu_reduce',
    doc: 'Mean over dim (all dims when omitted); floating-point inputs only unless dtype is given.' },
  { name: 'max', args: 'Tensor self', returns: 'Tensor', variants: ['function', 'method'], kind: 'reduction',
    code: 'KD_REDUCE_MAX', cpu: 'kd_cpu_reduce', doc: 'The largest element.' },
  { name: 'max.dim', args: 'Tensor self, int dim, bool keepdim=false', returns: '(Tensor values, Tensor indices)',
    variants: ['function', 'method'], kind: 'reduction', code: 'KD_REDUCE_MAX', cpu: 'kd_cpu_arg_reduce',
    doc: 'Largest values along dim and their indices.' },
  { name: 'min', args: 'Tensor self', returns: 'Tensor', variants: ['function', 'method'], kind: 'reduction',
    code: 'KD_REDUCE_MIN', cpu: 'kd_cpu_reduce', doc: 'The smallest element.' },
  { name: 'min.dim', args: 'Tensor self, int dim, bool keepdim=false', returns: '(Tensor values, Tensor indices)',
    variants: ['function', 'method'], kind: 'reduction', code: 'KD_REDUCE_MIN', cpu: 'kd_cpu_arg_reduce',
    doc: 'Smallest values along dim and their indices.' },
  { name: 'argmax', args: 'Tensor self, int? dim, bool keepdim=false', returns: 'Tensor',
    variants: ['function', 'method'], kind: 'reduction', code: 'KD_REDUCE_ARGMAX', cpu: 'kd_cpu_arg_reduce',
    flags: ['nondiff'], doc: 'Index of the largest value along dim (of the flattened tensor when omitted).' },

  // ---- linear algebra ---------------------------------------------------------------------
  { name: 'mm', args: 'Tensor self, Tensor mat2', returns: 'Tensor', variants: ['function', 'method'],
    kind: 'linalg', cpu: 'kd_cpu_mm', doc: 'Matrix product of two 2-D tensors.' },
  { name: 'bmm', args: 'Tensor self, Tensor mat2', returns: 'Tensor', variants: ['function', 'method'],
    kind: 'linalg', cpu: 'kd_cpu_bmm', doc: 'Batched matrix product of two 3-D tensors.' },
  { name: 'matmul', args: 'Tensor self, Tensor other', returns: 'Tensor', variants: ['function', 'method'],
    kind: 'linalg', composite: 'kd_composite_matmul',
    doc: 'Matrix product with NumPy/PyTorch broadcasting (1-D, 2-D and batched operands).' },
];
