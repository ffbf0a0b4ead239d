// oplist/pointwise.js - pointwise ops: unary math, binary arithmetic, comparisons, where. Part of the op list (see ./index.js).
'use strict';

const { unary, binary, compare } = require('./define');

module.exports = [
  binary('add', 'KD_BINARY_ADD', 'self + alpha * other, broadcasting.', { numberSelf: true, args: 'Tensor self, Tensor|Scalar other, *, Scalar alpha=1',
    backward: { self: 'grad', other: 'alpha == 1 ? grad : grad * alpha' } }),
  binary('sub', 'KD_BINARY_SUB', 'self - alpha * other, broadcasting.', { numberSelf: true, args: 'Tensor self, Tensor|Scalar other, *, Scalar alpha=1',
    backward: { self: 'grad', other: 'alpha == 1 ? -grad : grad * -alpha' } }),
  binary('mul', 'KD_BINARY_MUL', 'self * other, broadcasting.',
    { numberSelf: true, backward: { self: 'grad * other', other: 'grad * self' } }),
  binary('div', 'KD_BINARY_DIV', "self / other; roundingMode 'trunc' or 'floor' rounds the quotient.",
    { numberSelf: true, args: 'Tensor self, Tensor|Scalar other, *, str? roundingMode',
      backward: { self: 'roundingMode ? zerosLike(grad) : grad / other',
        other: 'roundingMode ? zerosLike(grad) : -grad * self / (other * other)' } }),
  binary('pow', 'KD_BINARY_POW', 'self raised to the power other.', { numberSelf: true, backward: {
    // 0 where the exponent is 0 (also for a number exponent: zerosLike(self) + other is a tensor)
    self: 'where(zerosLike(self) + other == 0, 0, grad * other * pow(self, other - 1))',
    other: 'grad * where((self == 0).logicalAnd(other >= 0), 0, result * log(self))' } }),
  compare('eq', 'KD_BINARY_EQ', 'self == other (bool).'),
  compare('ne', 'KD_BINARY_NE', 'self != other (bool).'),
  compare('lt', 'KD_BINARY_LT', 'self < other (bool).'),
  compare('le', 'KD_BINARY_LE', 'self <= other (bool).'),
  compare('gt', 'KD_BINARY_GT', 'self > other (bool).'),
  compare('ge', 'KD_BINARY_GE', 'self >= other (bool).'),
  unary('neg', 'KD_UNARY_NEG', '-self.', { backward: { self: '-grad' } }),
  unary('abs', 'KD_UNARY_ABS', '|self|.', { backward: { self: 'grad * self.sgn()' } }),
  unary('exp', 'KD_UNARY_EXP', 'e^self.', { backward: { self: 'grad * result' } }),
  unary('log', 'KD_UNARY_LOG', 'Natural logarithm.', { backward: { self: 'grad / self' } }),
  unary('sqrt', 'KD_UNARY_SQRT', 'Square root.', { backward: { self: 'grad / (result * 2)' } }),
  unary('relu', 'KD_UNARY_RELU', 'max(self, 0).', { ns: ['', 'nn.functional'], backward: { self: 'thresholdBackward(grad, result, 0)' } }),
  unary('sigmoid', 'KD_UNARY_SIGMOID', '1 / (1 + e^-self).', { ns: ['', 'nn.functional'], backward: { self: 'grad * result * (-result + 1)' } }),
  unary('tanh', 'KD_UNARY_TANH', 'Hyperbolic tangent.', { ns: ['', 'nn.functional'], backward: { self: 'grad * (-result * result + 1)' } }),
  { name: 'where', args: 'Tensor condition, Tensor|Scalar self, Tensor|Scalar other', returns: 'Tensor',
    variants: ['function'], kind: 'pointwise', cpu: 'kd_cpu_where',
    backward: { self: 'where(condition, grad, 0)', other: 'where(condition, 0, grad)' },
    doc: 'Elements of self where condition is true, else of other, broadcasting all three.' },
];
