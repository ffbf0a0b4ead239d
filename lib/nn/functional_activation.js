// functional_activation.js - the activation functions of kd.nn.functional that PyTorch 1.13 has
// beyond the generated ops: hardshrink, softshrink, tanhshrink, softsign, softmin, threshold,
// celu, glu, prelu, rrelu, gumbelSoftmax, normalize, and PyTorch's `inplace` argument (plus the
// trailing-underscore forms relu_, elu_, ...) on the generated activations. Each is a composition
// of differentiable ops, so autograd and every device come with it.
'use strict';

const { KindlingError } = require('../errors');

module.exports = function installFunctionalActivation(kd, nn, { parseArgs }) {
  const F = kd.nn.functional;
  const invalid = (msg) => new KindlingError(msg, 'KD_INVALID_ARGUMENT');

  // PyTorch's _get_softmax_dim for dim=None (legacy): 0 for 0-, 1- and 3-D input, else 1.
  const softmaxDim = (ndim) => (ndim === 0 || ndim === 1 || ndim === 3 ? 0 : 1);

  // The generated activations take PyTorch's trailing `inplace`: F.elu(x, alpha, inplace) and
  // F.elu_(x, alpha). `names`/`defaults` are the op's own arguments after the input.
  function withInplace(name, names = [], defaults = {}) {
    const op = kd[name];
    const fn = {
      [name](input, ...args) {
        const o = parseArgs(`${name}()`, args, [...names, 'inplace'], { ...defaults, inplace: false });
        const vals = names.map((k) => o[k]);
        return o.inplace ? input[`${name}_`](...vals) : op(input, ...vals);
      },
    }[name];
    F[name] = fn;
    F[`${name}_`] = (input, ...args) => {
      const o = parseArgs(`${name}_()`, args, names, defaults);
      return input[`${name}_`](...names.map((k) => o[k]));
    };
  }
  withInplace('relu');
  withInplace('relu6');
  withInplace('elu', ['alpha'], { alpha: 1.0 });
  withInplace('selu');
  withInplace('leakyRelu', ['negativeSlope'], { negativeSlope: 0.01 });
  withInplace('hardtanh', ['minVal', 'maxVal'], { minVal: -1.0, maxVal: 1.0 });
  withInplace('silu');
  withInplace('mish');
  withInplace('hardsigmoid');
  withInplace('hardswish');

  /** The result of an out-of-place computation, written into input when inplace. */
  const maybeInplace = (input, out, inplace) => (inplace ? input.copy_(out) : out);

  /** 0 where |x| <= lambd, else x. hardshrink(input, lambd = 0.5). */
  F.hardshrink = function hardshrink(input, ...args) {
    const { lambd } = parseArgs('hardshrink()', args, ['lambd'], { lambd: 0.5 });
    return kd.where(input.abs().le(lambd), 0, input);
  };
  /** x - lambd above lambd, x + lambd below -lambd, else 0. softshrink(input, lambd = 0.5). */
  F.softshrink = function softshrink(input, ...args) {
    const { lambd } = parseArgs('softshrink()', args, ['lambd'], { lambd: 0.5 });
    if (!(lambd >= 0)) throw invalid(`lambda must be greater or equal to 0, but found to be ${lambd}.`);
    return input.sub(input.clamp(-lambd, lambd));
  };
  /** x - tanh(x). */
  F.tanhshrink = function tanhshrink(input) { return input.sub(input.tanh()); };
  /** x / (1 + |x|). */
  F.softsign = function softsign(input) { return input.div(input.abs().add(1)); };
  /** softmax(-x) along dim. softmin(input, dim = null, _stacklevel, {dtype}). */
  F.softmin = function softmin(input, ...args) {
    const o = parseArgs('softmin()', args, ['dim', '_stacklevel', 'dtype'], { dim: null, _stacklevel: 3, dtype: null });
    const dim = o.dim === null ? softmaxDim(input.ndim) : o.dim;
    const x = o.dtype ? input.to(o.dtype) : input;
    return kd.softmax(x.neg(), dim);
  };
  /** value where x <= threshold, else x. threshold(input, threshold, value, inplace = false). */
  F.threshold = function threshold(input, ...args) {
    const o = parseArgs('threshold()', args, ['threshold', 'value', 'inplace'], { inplace: false });
    return maybeInplace(input, kd.where(input.le(o.threshold), o.value, input), o.inplace);
  };
  F.threshold_ = (input, ...args) => {
    const o = parseArgs('threshold_()', args, ['threshold', 'value']);
    return F.threshold(input, o.threshold, o.value, true);
  };
  /** x for x > 0, alpha * (e^(x / alpha) - 1) otherwise. celu(input, alpha = 1, inplace = false). */
  F.celu = function celu(input, ...args) {
    const o = parseArgs('celu()', args, ['alpha', 'inplace'], { alpha: 1.0, inplace: false });
    if (o.alpha === 0) throw invalid('ZeroDivisionError: alpha cannot be 0 for CELU');
    const out = kd.where(input.gt(0), input, kd.elu(input.mul(1 / o.alpha), o.alpha));
    return maybeInplace(input, out, o.inplace);
  };
  F.celu_ = (input, ...args) => {
    const o = parseArgs('celu_()', args, ['alpha'], { alpha: 1.0 });
    return F.celu(input, o.alpha, true);
  };
  /** a * sigmoid(b), a and b the halves of input along dim. glu(input, dim = -1). */
  F.glu = function glu(input, ...args) {
    const { dim } = parseArgs('glu()', args, ['dim'], { dim: -1 });
    if (input.ndim === 0) throw invalid('glu does not support scalars because halving size must be even');
    const d = dim < 0 ? dim + input.ndim : dim;
    if (!(d >= 0 && d < input.ndim)) {
      throw new kd.KindlingRangeError(`Dimension out of range (expected to be in range of [${-input.ndim}, ${input.ndim - 1}], but got ${dim})`);
    }
    const n = input.shape[d];
    if (n % 2 !== 0) throw invalid(`Halving dimension must be even, but dimension ${d} is size ${n}`);
    const [a, b] = input.chunk(2, d);
    return a.mul(b.sigmoid());
  };
  /** x for x > 0, weight * x otherwise, weight one value or one per channel (dim 1). prelu(input, weight). */
  F.prelu = function prelu(input, weight) {
    if (!(weight instanceof kd.Tensor)) throw new kd.KindlingTypeError('prelu(): weight must be a Tensor');
    if (weight.ndim > 1) throw invalid(`prelu: Expected \`weight\` to be a scalar or 1D tensor, but got ndim = ${weight.ndim}`);
    let w = weight;
    const k = weight.numel();
    if (k !== 1) {
      if (input.ndim === 0) throw invalid('Not allow zero-dim input tensor.');
      const c = input.ndim > 1 ? input.shape[1] : 1;
      if (c !== k) {
        throw new KindlingError(`Mismatch of parameter numbers and input channel size. Found parameter numbers = ${k} and channel size = ${c}.`,
          'KD_SHAPE_MISMATCH');
      }
      if (input.ndim > 1) w = weight.reshape([k, ...new Array(input.ndim - 2).fill(1)]);
    } else if (weight.ndim === 1 && input.ndim === 0) {
      w = weight.reshape([]);
    }
    return kd.where(input.gt(0), input, input.mul(w));
  };
  /** Randomized leaky ReLU: negative x times a slope drawn from U(lower, upper) per element in
   * training, times (lower + upper) / 2 otherwise. rrelu(input, lower = 1/8, upper = 1/3, training = false, inplace = false). */
  F.rrelu = function rrelu(input, ...args) {
    const o = parseArgs('rrelu()', args, ['lower', 'upper', 'training', 'inplace'],
      { lower: 1 / 8, upper: 1 / 3, training: false, inplace: false });
    if (!(o.lower <= o.upper)) {
      throw invalid('Lower bound should be less than or equal to the upper bound');
    }
    if (!o.training) {
      const slope = (o.lower + o.upper) / 2;
      return o.inplace ? input.leakyRelu_(slope) : kd.leakyRelu(input, slope);
    }
    const slopes = kd.noGrad(() => kd.emptyLike(input).uniform_(o.lower, o.upper));
    const noise = kd.where(input.le(0), slopes, 1);
    return maybeInplace(input, input.mul(noise), o.inplace);
  };
  F.rrelu_ = (input, ...args) => {
    const o = parseArgs('rrelu_()', args, ['lower', 'upper', 'training'], { lower: 1 / 8, upper: 1 / 3, training: false });
    return F.rrelu(input, o.lower, o.upper, o.training, true);
  };
  /** Samples of the Gumbel-softmax distribution over dim (straight-through one-hot when hard).
   * gumbelSoftmax(logits, tau = 1, hard = false, eps = 1e-10, dim = -1). */
  F.gumbelSoftmax = function gumbelSoftmax(logits, ...args) {
    const o = parseArgs('gumbelSoftmax()', args, ['tau', 'hard', 'eps', 'dim'], { tau: 1, hard: false, eps: 1e-10, dim: -1 });
    const gumbels = kd.noGrad(() => kd.emptyLike(logits).exponential_().log().neg());
    const ySoft = logits.add(gumbels).div(o.tau).softmax(o.dim);
    if (!o.hard) return ySoft;
    const index = ySoft.max(o.dim, true).indices;
    const yHard = kd.zerosLike(logits).scatter_(o.dim, index, 1.0);
    return yHard.sub(ySoft.detach()).add(ySoft);
  };
  /** input / max(||input||_p along dim, eps). normalize(input, p = 2, dim = 1, eps = 1e-12). */
  F.normalize = function normalize(input, ...args) {
    const o = parseArgs('normalize()', args, ['p', 'dim', 'eps', 'out'], { p: 2.0, dim: 1, eps: 1e-12, out: null });
    const denom = input.norm(o.p, o.dim, true).clampMin(o.eps).expandAs(input);
    const r = input.div(denom);
    return o.out ? o.out.copy_(r) : r;
  };
};
