// oplist/binary.js - binary and ternary pointwise ops beyond the arithmetic of pointwise.js:
// rounding divisions and remainders, atan2/hypot, elementwise max/min, logical and bitwise ops,
// isclose, masked_fill, clamp, lerp, addcmul/addcdiv. Part of the op list (see ./index.js).
// Kernels: src/cpu/binary.c (two inputs, KD_BINARY_* codes; masked_fill with where's loops) and
// src/cpu/ternary.c (three inputs, KD_TERNARY_* codes: clamp, lerp, addcmul, addcdiv).
'use strict';

const { binary } = require('./define');

const tensorOther = { args: 'Tensor self, Tensor other' };
const logical = (name, code, doc) => binary(name, code, doc, { ...tensorOther, flags: ['nondiff'] });
const bitwise = (name, code, doc) => binary(name, code, doc, { flags: ['nondiff'], numberSelf: true });
const unaryNot = (name, code, doc) => ({
  name, args: 'Tensor self', returns: 'Tensor', variants: ['function', 'method', 'inplace'],
  kind: 'pointwise', code, cpu: 'kd_cpu_binary_not', flags: ['nondiff'], doc,
});
const ternary = (name, args, code, doc, extra = {}) => ({
  name, args, returns: 'Tensor', variants: ['function', 'method', 'inplace'], kind: 'pointwise', code,
  cpu: 'kd_cpu_ternary', doc, ...extra,
});

// clamp: the gradient of self is grad where min <= self <= max (a missing bound is no limit)
const clampSelf = "max == null ? where(self >= min, grad, 0) : (min == null ? where(self <= max, grad, 0) : " +
  'where((self >= min).logicalAnd(self <= max), grad, 0))';
const maximumBackward = { self: 'where(self == other, grad / 2, grad).maskedFill(self < other, 0)',
  other: 'where(self == other, grad / 2, grad).maskedFill(self > other, 0)' };
const minimumBackward = { self: 'where(self == other, grad / 2, grad).maskedFill(self > other, 0)',
  other: 'where(self == other, grad / 2, grad).maskedFill(self < other, 0)' };
const clampBackward = {
  self: clampSelf,
  min: 'max == null ? where(self < min, grad, 0) : where((self < min).logicalAnd(min < max), grad, 0)',
  max: 'min == null ? where(self > max, grad, 0) : where((self > max).logicalOr(max < min), grad, 0)',
};
const clampSelfOnly = { self: clampSelf };

module.exports = [
  binary('floorDivide', 'KD_BINARY_FLOOR_DIVIDE', 'self / other rounded down (Python //); integer division by zero is an error.',
    { numberSelf: true, backward: { self: 'zerosLike(grad)', other: 'zerosLike(grad)' } }),
  binary('remainder', 'KD_BINARY_REMAINDER', 'Python-style modulus: the result has the sign of other.',
    { numberSelf: true, backward: { self: 'grad', other: "-grad * self.div(other, roundingMode='floor')" } }),
  binary('fmod', 'KD_BINARY_FMOD', 'C-style modulus (fmod): the result has the sign of self.',
    { backward: { self: 'grad', other: "-grad * self.div(other, roundingMode='trunc')" } }),
  binary('atan2', 'KD_BINARY_ATAN2', 'atan(self / other) in the quadrant of (other, self); integers promote to float.',
    { ...tensorOther, backward: { self: 'grad * other / (self * self + other * other)',
      other: '-grad * self / (self * self + other * other)' } }),
  binary('maximum', 'KD_BINARY_MAXIMUM', 'Elementwise maximum; NaN if either is NaN.', {
    ...tensorOther, variants: ['function', 'method'], backward: maximumBackward }),
  binary('minimum', 'KD_BINARY_MINIMUM', 'Elementwise minimum; NaN if either is NaN.', {
    ...tensorOther, variants: ['function', 'method'], backward: minimumBackward }),
  // PyTorch's max(Tensor, Tensor) / min(Tensor, Tensor) overloads are maximum / minimum
  binary('max.other', 'KD_BINARY_MAXIMUM', 'max(self, other): elementwise maximum, as maximum.', {
    ...tensorOther, variants: ['function', 'method'], backward: maximumBackward }),
  binary('min.other', 'KD_BINARY_MINIMUM', 'min(self, other): elementwise minimum, as minimum.', {
    ...tensorOther, variants: ['function', 'method'], backward: minimumBackward }),
  binary('fmax', 'KD_BINARY_FMAX', 'Elementwise maximum ignoring NaN (the other value wins).', {
    ...tensorOther, variants: ['function', 'method'],
    backward: { self: 'grad.maskedFill((self >= other).logicalOr(other != other).logicalNot(), 0)',
      other: 'grad.maskedFill((self >= other).logicalOr(other != other), 0)' } }),
  binary('fmin', 'KD_BINARY_FMIN', 'Elementwise minimum ignoring NaN (the other value wins).', {
    ...tensorOther, variants: ['function', 'method'],
    backward: { self: 'grad.maskedFill((self <= other).logicalOr(other != other).logicalNot(), 0)',
      other: 'grad.maskedFill((self <= other).logicalOr(other != other), 0)' } }),
  binary('hypot', 'KD_BINARY_HYPOT', 'sqrt(self^2 + other^2) without overflow; floating types only.',
    { ...tensorOther, backward: { self: 'grad * self / result', other: 'grad * other / result' } }),
  { name: 'isclose', args: 'Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, bool equalNan=false',
    returns: 'Tensor', variants: ['function', 'method'], kind: 'pointwise', code: 'KD_BINARY_ISCLOSE',
    cpu: 'kd_cpu_binary', flags: ['nondiff'],
    doc: '|self - other| <= atol + rtol * |other| (bool); equalNan makes NaN close to NaN.' },
  logical('logicalAnd', 'KD_BINARY_LOGICAL_AND', 'self != 0 and other != 0 (bool; in place keeps self\'s dtype).'),
  logical('logicalOr', 'KD_BINARY_LOGICAL_OR', 'self != 0 or other != 0 (bool; in place keeps self\'s dtype).'),
  logical('logicalXor', 'KD_BINARY_LOGICAL_XOR', '(self != 0) != (other != 0) (bool; in place keeps self\'s dtype).'),
  unaryNot('logicalNot', 'KD_BINARY_LOGICAL_NOT', 'self == 0 (bool; in place keeps self\'s dtype).'),
  bitwise('bitwiseAnd', 'KD_BINARY_BITWISE_AND', 'Bitwise and of integer or bool tensors.'),
  bitwise('bitwiseOr', 'KD_BINARY_BITWISE_OR', 'Bitwise or of integer or bool tensors.'),
  bitwise('bitwiseXor', 'KD_BINARY_BITWISE_XOR', 'Bitwise xor of integer or bool tensors.'),
  unaryNot('bitwiseNot', 'KD_BINARY_BITWISE_NOT', 'Bitwise not of an integer or bool tensor.'),
  { name: 'maskedFill', args: 'Tensor self, Tensor mask, Tensor|Scalar value', returns: 'Tensor',
    variants: ['function', 'method', 'inplace'], kind: 'pointwise', cpu: 'kd_cpu_masked_fill',
    backward: { self: 'grad.maskedFill(mask, 0)', value: 'where(mask, grad, 0).sum()' },
    doc: 'self with value where mask (bool) is true; value is a number or a 0-d tensor.' },
  ternary('clamp', 'Tensor self, Scalar? min, Scalar? max', 'KD_TERNARY_CLAMP',
    'self limited to [min, max] (either may be left out; min > max gives max).', { backward: clampSelfOnly }),
  ternary('clamp.Tensor', 'Tensor self, Tensor? min, Tensor? max', 'KD_TERNARY_CLAMP',
    'self limited elementwise to [min, max] given as tensors (broadcasting).', { backward: clampBackward }),
  ternary('clip', 'Tensor self, Scalar? min, Scalar? max', 'KD_TERNARY_CLAMP', 'Alias of clamp.',
    { backward: clampSelfOnly }),
  ternary('clip.Tensor', 'Tensor self, Tensor? min, Tensor? max', 'KD_TERNARY_CLAMP', 'Alias of clamp.',
    { backward: clampBackward }),
  ternary('clampMin', 'Tensor self, Tensor|Scalar min', 'KD_TERNARY_CLAMP_MIN', 'max(self, min) (NaN propagates).',
    { backward: { self: 'where(self >= min, grad, 0)', min: 'where(self < min, grad, 0)' } }),
  ternary('clampMax', 'Tensor self, Tensor|Scalar max', 'KD_TERNARY_CLAMP_MAX', 'min(self, max) (NaN propagates).',
    { backward: { self: 'where(self <= max, grad, 0)', max: 'where(self > max, grad, 0)' } }),
  ternary('lerp', 'Tensor self, Tensor end, Tensor|Scalar weight', 'KD_TERNARY_LERP',
    'self + weight * (end - self); floating types, end (and a tensor weight) of self\'s dtype.',
    { backward: { self: 'grad - grad * weight', end: 'grad * weight', weight: 'grad * (end - self)' } }),
  ternary('addcmul', 'Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1', 'KD_TERNARY_ADDCMUL',
    'self + value * tensor1 * tensor2, broadcasting.',
    { backward: { self: 'grad', tensor1: 'grad * tensor2 * value', tensor2: 'grad * tensor1 * value' } }),
  ternary('addcdiv', 'Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1', 'KD_TERNARY_ADDCDIV',
    'self + value * tensor1 / tensor2, broadcasting (not for two integer tensors).',
    { backward: { self: 'grad', tensor1: 'grad * value / tensor2',
      tensor2: '-grad * value * tensor1 / (tensor2 * tensor2)' } }),
];
