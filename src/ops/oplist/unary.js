// oplist/unary.js - unary pointwise math (sign, exp2..erfinv, trig, rounding, nanToNum, isnan..),
// activations (kd.op and kd.nn.functional.op) and the backward ops of the activations whose
// gradient needs its own kernel (kd._internal). Kernels: src/cpu/unary.c (forward, one loop per
// dtype switching on the KD_UNARY_* code) and src/cpu/unary_backward.c (KD_ACTBW_*).
// Part of the op list (see ./index.js).
'use strict';

const { unary } = require('./define');

const NNF = ['', 'nn.functional'];
const LN2 = '0.6931471805599453';
const LN10 = '2.302585092994046';
const TWO_OVER_SQRTPI = '1.1283791670955126';
const SQRTPI_OVER_2 = '0.886226925452758';
const SELU_ALPHA = '1.6732632423543772';
const SELU_SCALE = '1.0507009873554805';
const zero = 'grad * 0';
// second derivatives of the activations whose backward has its own kernel (their double backward)
const GELU_D2 = '(2 - self * self) * (self * self * -0.5).exp() * 0.3989422804014327';
const GELU_U1 = '(self * self * 0.134145 + 1) * 0.7978845608028654'; // u' for u = k (x + 0.044715 x^3)
const GELU_T = '((self * self * 0.044715 + 1) * self * 0.7978845608028654).tanh()';
const GELU_TANH_D2 = `(1 - ${GELU_T} * ${GELU_T}) * (${GELU_U1} + self * 0.5 * (self * 0.21406444881780076 - ${GELU_T} * ${GELU_U1} * ${GELU_U1} * 2))`;
const SILU_D2 = 'self.sigmoid() * (1 - self.sigmoid()) * (2 + self * (1 - self.sigmoid() * 2))';
const MISH_T = 'self.softplus().tanh()';
const MISH_D2 = `(1 - ${MISH_T} * ${MISH_T}) * self.sigmoid() * (2 + self * (1 - self.sigmoid()) - self * ${MISH_T} * self.sigmoid() * 2)`;

// unary math: function, method, in place
const math = (name, code, doc, backward, extra = {}) => unary(name, code, doc, { backward: { self: backward }, ...extra });
// activations: also in kd.nn.functional; in place only where PyTorch has it
const act = (name, code, doc, backward, extra = {}) =>
  unary(name, code, doc, { ns: NNF, backward: { self: backward }, ...extra });
const noInplace = { variants: ['function', 'method'] };
const test = (name, code, doc) => unary(name, code, doc, { variants: ['function', 'method'], flags: ['nondiff'] });
const internal = (name, args, code, doc, backward) => ({
  name, args, returns: 'Tensor', variants: ['function'], ns: ['_internal'], kind: 'pointwise', code,
  cpu: 'kd_cpu_act_backward', doc, backward,
});

module.exports = [
  math('sign', 'KD_UNARY_SIGN', 'Sign of self: -1, 0 or 1 (0 for NaN).', zero),
  math('sgn', 'KD_UNARY_SGN', 'Sign of self (sign() for real tensors).', zero),
  math('exp2', 'KD_UNARY_EXP2', '2^self.', `grad * result * ${LN2}`),
  math('expm1', 'KD_UNARY_EXPM1', 'e^self - 1, accurate near 0.', 'grad * (result + 1)'),
  math('log2', 'KD_UNARY_LOG2', 'Base-2 logarithm.', `grad / (self * ${LN2})`),
  math('log10', 'KD_UNARY_LOG10', 'Base-10 logarithm.', `grad / (self * ${LN10})`),
  math('log1p', 'KD_UNARY_LOG1P', 'log(1 + self), accurate near 0.', 'grad / (self + 1)'),
  math('rsqrt', 'KD_UNARY_RSQRT', '1 / sqrt(self).', 'grad * result.pow(3) * -0.5'),
  math('square', 'KD_UNARY_SQUARE', 'self * self (bool promotes to int64).', 'grad * self * 2'),
  math('sin', 'KD_UNARY_SIN', 'Sine.', 'grad * self.cos()'),
  math('cos', 'KD_UNARY_COS', 'Cosine.', 'grad * -self.sin()'),
  math('tan', 'KD_UNARY_TAN', 'Tangent.', 'grad * (result * result + 1)'),
  math('asin', 'KD_UNARY_ASIN', 'Arcsine.', 'grad * (-self * self + 1).rsqrt()'),
  math('acos', 'KD_UNARY_ACOS', 'Arccosine.', 'grad * -((-self * self + 1).rsqrt())'),
  math('atan', 'KD_UNARY_ATAN', 'Arctangent.', 'grad / (self * self + 1)'),
  math('sinh', 'KD_UNARY_SINH', 'Hyperbolic sine.', 'grad * self.cosh()'),
  math('cosh', 'KD_UNARY_COSH', 'Hyperbolic cosine.', 'grad * self.sinh()'),
  math('asinh', 'KD_UNARY_ASINH', 'Inverse hyperbolic sine.', 'grad * (self * self + 1).rsqrt()'),
  math('acosh', 'KD_UNARY_ACOSH', 'Inverse hyperbolic cosine.', 'grad * (self * self - 1).rsqrt()'),
  math('atanh', 'KD_UNARY_ATANH', 'Inverse hyperbolic tangent.', 'grad / (-self * self + 1)'),
  math('erf', 'KD_UNARY_ERF', 'Error function.', `grad * (-self * self).exp() * ${TWO_OVER_SQRTPI}`),
  math('erfc', 'KD_UNARY_ERFC', 'Complementary error function 1 - erf(self).', `grad * (-self * self).exp() * -${TWO_OVER_SQRTPI}`),
  math('erfinv', 'KD_UNARY_ERFINV', 'Inverse error function.', `grad * (result * result).exp() * ${SQRTPI_OVER_2}`),
  math('floor', 'KD_UNARY_FLOOR', 'Largest integer <= self (integers unchanged).', zero),
  math('ceil', 'KD_UNARY_CEIL', 'Smallest integer >= self (integers unchanged).', zero),
  math('round', 'KD_UNARY_ROUND', 'Round half to even, to `decimals` decimal places (negative: tens, hundreds, ...).', zero,
    { args: 'Tensor self, *, int decimals=0' }),
  math('trunc', 'KD_UNARY_TRUNC', 'Integer part of self, rounding toward zero.', zero),
  math('frac', 'KD_UNARY_FRAC', 'self - trunc(self).', 'grad'),
  math('reciprocal', 'KD_UNARY_RECIPROCAL', '1 / self.', '-(grad * result * result)'),
  math('nanToNum', 'KD_UNARY_NAN_TO_NUM', 'NaN, +inf and -inf replaced by nan (default 0), posinf and neginf (default: the dtype\'s largest and lowest finite values).',
    'where(self.isfinite(), grad, 0)', { args: 'Tensor self, float? nan, float? posinf, float? neginf' }),
  test('isnan', 'KD_UNARY_ISNAN', 'Whether each element is NaN (bool).'),
  test('isinf', 'KD_UNARY_ISINF', 'Whether each element is +inf or -inf (bool).'),
  test('isfinite', 'KD_UNARY_ISFINITE', 'Whether each element is finite (bool).'),
  test('isposinf', 'KD_UNARY_ISPOSINF', 'Whether each element is +inf (bool).'),
  test('isneginf', 'KD_UNARY_ISNEGINF', 'Whether each element is -inf (bool).'),

  act('logsigmoid', 'KD_UNARY_LOGSIGMOID', 'log(sigmoid(self)), computed stably.', 'grad * (-self).sigmoid()', noInplace),
  act('relu6', 'KD_UNARY_RELU6', 'min(max(self, 0), 6).', 'where((self > 0) * (self < 6), grad, 0)'),
  act('leakyRelu', 'KD_UNARY_LEAKY_RELU', 'self if self > 0 else negativeSlope * self.',
    'where(self > 0, grad, grad * negativeSlope)', { args: 'Tensor self, float negativeSlope=0.01' }),
  act('elu', 'KD_UNARY_ELU', 'self if self > 0 else alpha * (e^self - 1).',
    'eluBackward(grad, alpha, 1, 1, false, self)', { args: 'Tensor self, float alpha=1' }),
  act('selu', 'KD_UNARY_SELU', `${SELU_SCALE} * elu(self, ${SELU_ALPHA}).`,
    `eluBackward(grad, ${SELU_ALPHA}, ${SELU_SCALE}, 1, false, self)`),
  act('gelu', 'KD_UNARY_GELU', "self * Phi(self) (approximate 'none'), or its tanh approximation (approximate 'tanh').",
    'geluBackward(grad, self, approximate=approximate)', { args: "Tensor self, *, str approximate='none'", ...noInplace }),
  act('silu', 'KD_UNARY_SILU', 'self * sigmoid(self) (swish).', 'siluBackward(grad, self)'),
  act('mish', 'KD_UNARY_MISH', 'self * tanh(softplus(self)).', 'mishBackward(grad, self)'),
  act('softplus', 'KD_UNARY_SOFTPLUS', 'log(1 + e^(beta * self)) / beta; self where beta * self > threshold.',
    'where(self * beta > threshold, grad, grad * (self * beta).sigmoid())',
    { args: 'Tensor self, float beta=1, float threshold=20', ...noInplace }),
  act('hardtanh', 'KD_UNARY_HARDTANH', 'self clamped to [minVal, maxVal].',
    'where((self > minVal) * (self < maxVal), grad, 0)', { args: 'Tensor self, float minVal=-1, float maxVal=1' }),
  act('hardsigmoid', 'KD_UNARY_HARDSIGMOID', 'min(max(self / 6 + 1/2, 0), 1).', 'where((self > -3) * (self < 3), grad / 6, 0)'),
  act('hardswish', 'KD_UNARY_HARDSWISH', 'self * hardsigmoid(self).',
    'where(self < -3, 0, where(self <= 3, grad * (self / 3 + 0.5), grad))'),

  internal('geluBackward', "Tensor gradOutput, Tensor self, *, str approximate='none'", 'KD_ACTBW_GELU',
    'Gradient of gelu: gradOutput * d gelu(self) / d self.',
    { gradOutput: 'geluBackward(grad, self, approximate=approximate)', self: `grad * gradOutput * (approximate == 'tanh' ? ${GELU_TANH_D2} : ${GELU_D2})` }),
  internal('siluBackward', 'Tensor gradOutput, Tensor self', 'KD_ACTBW_SILU',
    'Gradient of silu: gradOutput * sigmoid(self) * (1 + self * (1 - sigmoid(self))).',
    { gradOutput: 'siluBackward(grad, self)', self: `grad * gradOutput * ${SILU_D2}` }),
  internal('mishBackward', 'Tensor gradOutput, Tensor self', 'KD_ACTBW_MISH',
    'Gradient of mish: gradOutput * d mish(self) / d self.',
    { gradOutput: 'mishBackward(grad, self)', self: `grad * gradOutput * ${MISH_D2}` }),
  internal('eluBackward', 'Tensor gradOutput, float alpha, float scale, float inputScale, bool isResult, Tensor selfOrResult',
    'KD_ACTBW_ELU', 'Gradient of elu/selu, from the input (isResult false) or from the result (isResult true).',
    { gradOutput: 'eluBackward(grad, alpha, scale, inputScale, isResult, selfOrResult)',
      // PyTorch's elu_double_backward: d/dx of the negative branch (the positive one is constant)
      selfOrResult: 'where(selfOrResult <= 0, isResult ? grad * gradOutput * inputScale : ' +
        'eluBackward(grad * gradOutput * inputScale, alpha, scale, inputScale, false, selfOrResult), 0)' }),
];
