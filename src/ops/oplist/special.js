// oplist/special.js - special functions: the gamma family (lgamma, digamma, polygamma, mvlgamma,
// igamma, igammac, kd.special.zeta), Bessel functions (i0, kd.special.i0e/i1/i1e, besselJ0/J1/Y0/Y1,
// modifiedBessel*, scaledModifiedBesselK0/K1, sphericalBesselJ0), Airy Ai, the orthogonal
// polynomials (kd.special.chebyshevPolynomialT, ..., legendrePolynomialP),
// the normal distribution (kd.special.ndtr/ndtri/logNdtr), erfcx, entr, sinc, logit, xlogy,
// kd.special.xlog1py, logaddexp/logaddexp2, nextafter, copysign, heaviside, gcd/lcm, frexp, and
// the composites ldexp and floatPower. kd.special's other names (psi, gammaln, expit, ...) are
// aliases of these and of older ops: src/ops/aliases.js. Part of the op list (see ./index.js).
// Kernels: src/cpu/special.c (one kernel, KD_SPECIAL_* codes; the math in special_math.h, shared
// with cuda/ops_special.cu), composites in src/ops/special_composites.c. Gradients as PyTorch's
// derivatives.yaml.
'use strict';

const { unary, binary } = require('./define');

const SPECIAL = ['special'];
const PI = '3.141592653589793';
const INV_SQRT_2PI = '0.3989422804014327';
const SQRT_2PI = '2.5066282746310002';
const TWO_OVER_SQRTPI = '1.1283791670955126';
const kernel = { cpu: 'kd_cpu_special' };

// unary: kd.op, t.op, t.op_ (where PyTorch has them)
const math = (name, code, doc, backward, extra = {}) =>
  unary(name, code, doc, { ...kernel, backward: backward ? { self: backward } : undefined, ...extra });
// kd.special.op only
const special = (name, code, doc, backward, extra = {}) =>
  math(name, code, doc, backward, { variants: ['function'], ns: SPECIAL, ...extra });
const two = (name, code, doc, extra = {}) => binary(name, code, doc, { ...kernel, ...extra });
const composite = (name, args, doc, fn, extra = {}) => ({
  name, args, returns: 'Tensor', variants: ['function', 'method'], kind: 'composite', composite: fn, doc, ...extra,
});
// d/dx (-x log x); d/dx log(x / (1 - x)) (NaN outside [0, 1] without eps, as PyTorch: sqrt(-1))
const LOGIT_D = 'grad / (self * (1 - self))';
const LOGIT_BW = `eps == null ? where((self < 0).logicalOr(self > 1), (self * 0 - 1).sqrt(), ${LOGIT_D}) : ` +
  `where((self < eps).logicalOr(self > 1 - eps), 0, ${LOGIT_D})`;
const IGAMMA_D = '((self - 1) * other.log() - other - self.lgamma()).exp()';

module.exports = [
  math('lgamma', 'KD_SPECIAL_LGAMMA', 'Natural logarithm of |Gamma(self)|; integers compute in float32.', 'grad * digamma(self)'),
  math('digamma', 'KD_SPECIAL_DIGAMMA', 'Logarithmic derivative of Gamma (psi); -inf/+inf at -0/+0, NaN at negative integers.',
    'grad * polygamma(1, self)'),
  { name: 'polygamma', args: 'int n, Tensor self', returns: 'Tensor', variants: ['function'], kind: 'pointwise',
    code: 'KD_SPECIAL_POLYGAMMA', ...kernel, backward: { self: 'grad * polygamma(n + 1, self)' },
    doc: 'The n-th derivative of digamma (n >= 0); t.polygamma(n) is the method form.' },
  composite('mvlgamma', 'Tensor self, int p', 'Multivariate log-gamma of dimension p: sum of lgamma(self - j / 2), j < p, plus p (p - 1) / 4 log(pi).',
    'kd_composite_mvlgamma'),
  special('erfcx', 'KD_SPECIAL_ERFCX', 'Scaled complementary error function exp(self^2) erfc(self).',
    `grad * (self * result * 2 - ${TWO_OVER_SQRTPI})`),
  special('entr', 'KD_SPECIAL_ENTR', 'Elementwise entropy -self log(self) (0 at 0, -inf below 0).', 'grad * -(self.log() + 1)'),
  math('i0', 'KD_SPECIAL_I0', 'Modified Bessel function of the first kind, order 0.', 'grad * i1(self)'),
  special('i0e', 'KD_SPECIAL_I0E', 'Exponentially scaled i0: exp(-|self|) i0(self).', 'grad * (i1e(self) - self.sgn() * result)'),
  special('i1', 'KD_SPECIAL_I1', 'Modified Bessel function of the first kind, order 1.',
    'grad * where(self == 0, 0.5, i0(self) - result / self)'),
  special('i1e', 'KD_SPECIAL_I1E', 'Exponentially scaled i1: exp(-|self|) i1(self).',
    'grad * where(self == 0, 0.5, i0e(self) - result * (self.sgn() + self.reciprocal()))'),
  special('ndtr', 'KD_SPECIAL_NDTR', 'The standard normal distribution function (area under the Gaussian from -inf to self).',
    `grad * (self * self * -0.5).exp() * ${INV_SQRT_2PI}`),
  special('ndtri', 'KD_SPECIAL_NDTRI', 'The inverse of ndtr: the x with ndtr(x) = self.', `grad * (result * result * 0.5).exp() * ${SQRT_2PI}`),
  special('logNdtr', 'KD_SPECIAL_LOG_NDTR', 'log(ndtr(self)), accurate in both tails.',
    `grad * (self * self * -0.5 - result).exp() * ${INV_SQRT_2PI}`),
  math('sinc', 'KD_SPECIAL_SINC', 'Normalized sinc: sin(pi self) / (pi self), 1 at 0.',
    `grad * (((self * ${PI}).cos() - (self * ${PI}).sin() / (self * ${PI})) / self).maskedFill(self == 0, 0)`,
    { ns: ['', 'special'] }),
  math('logit', 'KD_SPECIAL_LOGIT', 'log(self / (1 - self)), self first clamped to [eps, 1 - eps] when eps is given.', LOGIT_BW,
    { args: 'Tensor self, float? eps' }),
  special('besselJ0', 'KD_SPECIAL_BESSEL_J0', 'Bessel function of the first kind, order 0 (not differentiable, as in PyTorch).',
    null, { flags: ['nondiff'] }),
  special('besselJ1', 'KD_SPECIAL_BESSEL_J1', 'Bessel function of the first kind, order 1 (not differentiable, as in PyTorch).',
    null, { flags: ['nondiff'] }),
  ...[['besselY0', 'KD_SPECIAL_BESSEL_Y0', 'Bessel function of the second kind, order 0 (NaN below 0).'],
    ['besselY1', 'KD_SPECIAL_BESSEL_Y1', 'Bessel function of the second kind, order 1 (NaN below 0).'],
    ['modifiedBesselI0', 'KD_SPECIAL_MODIFIED_BESSEL_I0', 'Modified Bessel function of the first kind, order 0.'],
    ['modifiedBesselI1', 'KD_SPECIAL_MODIFIED_BESSEL_I1', 'Modified Bessel function of the first kind, order 1.'],
    ['modifiedBesselK0', 'KD_SPECIAL_MODIFIED_BESSEL_K0', 'Modified Bessel function of the second kind, order 0.'],
    ['modifiedBesselK1', 'KD_SPECIAL_MODIFIED_BESSEL_K1', 'Modified Bessel function of the second kind, order 1.'],
    ['scaledModifiedBesselK0', 'KD_SPECIAL_SCALED_MODIFIED_BESSEL_K0', 'exp(self) modifiedBesselK0(self).'],
    ['scaledModifiedBesselK1', 'KD_SPECIAL_SCALED_MODIFIED_BESSEL_K1', 'exp(self) modifiedBesselK1(self).'],
    ['sphericalBesselJ0', 'KD_SPECIAL_SPHERICAL_BESSEL_J0', 'Spherical Bessel function of the first kind, order 0: sin(self) / self.'],
    ['airyAi', 'KD_SPECIAL_AIRY_AI', 'Airy function Ai.'],
  ].map(([name, code, doc]) => special(name, code, `${doc} Not differentiable, as in PyTorch.`, null, { flags: ['nondiff'] })),
  // orthogonal polynomials of x and degree n (truncated to an integer; below 0: 0)
  ...[['chebyshevPolynomialT', 'KD_SPECIAL_CHEBYSHEV_POLYNOMIAL_T', 'Chebyshev polynomial of the first kind T_n(x).'],
    ['chebyshevPolynomialU', 'KD_SPECIAL_CHEBYSHEV_POLYNOMIAL_U', 'Chebyshev polynomial of the second kind U_n(x).'],
    ['chebyshevPolynomialV', 'KD_SPECIAL_CHEBYSHEV_POLYNOMIAL_V', 'Chebyshev polynomial of the third kind V_n(x).'],
    ['chebyshevPolynomialW', 'KD_SPECIAL_CHEBYSHEV_POLYNOMIAL_W', 'Chebyshev polynomial of the fourth kind W_n(x).'],
    ['shiftedChebyshevPolynomialT', 'KD_SPECIAL_SHIFTED_CHEBYSHEV_POLYNOMIAL_T', 'Shifted Chebyshev polynomial T_n(2x - 1).'],
    ['shiftedChebyshevPolynomialU', 'KD_SPECIAL_SHIFTED_CHEBYSHEV_POLYNOMIAL_U', 'Shifted Chebyshev polynomial U_n(2x - 1).'],
    ['shiftedChebyshevPolynomialV', 'KD_SPECIAL_SHIFTED_CHEBYSHEV_POLYNOMIAL_V', 'Shifted Chebyshev polynomial V_n(2x - 1).'],
    ['shiftedChebyshevPolynomialW', 'KD_SPECIAL_SHIFTED_CHEBYSHEV_POLYNOMIAL_W', 'Shifted Chebyshev polynomial W_n(2x - 1).'],
    ['hermitePolynomialH', 'KD_SPECIAL_HERMITE_POLYNOMIAL_H', "Physicists' Hermite polynomial H_n(x) (NaN above degree 128 in float32, 512 in float64)."],
    ['hermitePolynomialHe', 'KD_SPECIAL_HERMITE_POLYNOMIAL_HE', "Probabilists' Hermite polynomial He_n(x) (NaN above degree 128 in float32, 512 in float64)."],
    ['laguerrePolynomialL', 'KD_SPECIAL_LAGUERRE_POLYNOMIAL_L', 'Laguerre polynomial L_n(x).'],
    ['legendrePolynomialP', 'KD_SPECIAL_LEGENDRE_POLYNOMIAL_P', 'Legendre polynomial P_n(x).'],
  ].map(([name, code, doc]) => two(name, code, `${doc} Not differentiable, as in PyTorch.`,
    { args: 'Tensor x, Tensor|Scalar n', variants: ['function'], ns: SPECIAL, flags: ['nondiff'] })),
  { name: 'frexp', args: 'Tensor self', returns: '(Tensor mantissa, Tensor exponent)', variants: ['function', 'method'],
    kind: 'pointwise', code: 'KD_SPECIAL_FREXP', ...kernel, backward: { self: 'grad / result1.exp2()' },
    doc: 'self = mantissa * 2^exponent with |mantissa| in [0.5, 1) (exponent int32); floating types only.' },

  two('xlogy', 'KD_SPECIAL_XLOGY', 'self * log(other), 0 where self is 0 (unless other is NaN).', {
    ns: ['', 'special'], numberSelf: true,
    backward: { self: 'xlogy(grad, other).maskedFill((self == 0).logicalAnd(zerosLike(self) + other <= 0), 0)',
      other: 'grad * self / other' } }),
  two('xlog1py', 'KD_SPECIAL_XLOG1PY', 'self * log1p(other), 0 where self is 0 (unless other is NaN).', {
    variants: ['function'], ns: SPECIAL, numberSelf: true,
    backward: { self: 'xlog1py(grad, other).maskedFill((self == 0).logicalAnd(zerosLike(self) + other <= -1), 0)',
      other: 'grad * self / (other + 1)' } }),
  two('zeta', 'KD_SPECIAL_ZETA', 'Hurwitz zeta function zeta(self, other) = sum over k >= 0 of (k + other)^-self.', {
    variants: ['function'], ns: SPECIAL, numberSelf: true, backward: { other: 'grad * -self * zeta(self + 1, other)' } }),
  two('igamma', 'KD_SPECIAL_IGAMMA', 'Regularized lower incomplete gamma function P(self, other); floating types only.', {
    args: 'Tensor self, Tensor other', backward: { other: `grad * ${IGAMMA_D}` } }),
  two('igammac', 'KD_SPECIAL_IGAMMAC', 'Regularized upper incomplete gamma function Q(self, other) = 1 - P; floating types only.', {
    args: 'Tensor self, Tensor other', backward: { other: `-grad * ${IGAMMA_D}` } }),
  two('logaddexp', 'KD_SPECIAL_LOGADDEXP', 'log(exp(self) + exp(other)) without overflow; floating types only.', {
    args: 'Tensor self, Tensor other', variants: ['function', 'method'],
    backward: { self: 'grad / ((other - self).exp() + 1)', other: 'grad / ((self - other).exp() + 1)' } }),
  two('logaddexp2', 'KD_SPECIAL_LOGADDEXP2', 'log2(2^self + 2^other) without overflow; floating types only.', {
    args: 'Tensor self, Tensor other', variants: ['function', 'method'],
    backward: { self: 'grad / ((other - self).exp2() + 1)', other: 'grad / ((self - other).exp2() + 1)' } }),
  two('nextafter', 'KD_SPECIAL_NEXTAFTER', 'The next representable value after self toward other (in self\'s dtype); floating types only.', {
    args: 'Tensor self, Tensor other' }),
  two('copysign', 'KD_SPECIAL_COPYSIGN', 'The magnitude of self with the sign of other; integers compute in float32.', {
    backward: { self: 'grad * (result / self).maskedFill(self == 0, 0)', other: 'grad * 0' } }),
  two('heaviside', 'KD_SPECIAL_HEAVISIDE', 'Step function: 0 where self < 0, values where self == 0, 1 where self > 0 (same dtypes).', {
    args: 'Tensor self, Tensor values' }),
  two('gcd', 'KD_SPECIAL_GCD', 'Greatest common divisor of |self| and |other|; integer types only.', {
    args: 'Tensor self, Tensor other', flags: ['nondiff'] }),
  two('lcm', 'KD_SPECIAL_LCM', 'Least common multiple of |self| and |other|; integer types only.', {
    args: 'Tensor self, Tensor other', flags: ['nondiff'] }),
  composite('ldexp', 'Tensor self, Tensor other', 'self * 2^other.', 'kd_composite_ldexp'),
  composite('floatPower', 'Tensor self, Tensor|Scalar exponent', 'pow computed in float64: self and exponent are converted to float64 first.',
    'kd_composite_float_power', { numberSelf: true }),
];
