// init.js - kd.nn.init: PyTorch's weight initialisers (torch.nn.init). Each fills a tensor in
// place under noGrad with numbers from kindling's seeded generator (kd.manualSeed), drawn in
// float32 (float64 for float64 tensors) and cast, and returns the tensor. Arguments are
// positional in PyTorch's order or in a final options object: kaimingUniform_(w, {a: Math.sqrt(5)}).
'use strict';

const { KindlingError, typeError } = require('../errors');

module.exports = function installInit(kd, nn, { parseArgs }) {
  const { Tensor } = kd;

  function check(t, what) {
    if (!(t instanceof Tensor)) throw typeError(`${what}: tensor must be a Tensor`);
  }
  const drawDtype = (t) => (t.dtype === 'float64' ? 'float64' : 'float32');
  // fn draws the values; everything it makes (the draw and each step of scaling it) is freed
  // now by the tidy scope, not left to the garbage collector.
  // > 0 inside kd.nn.utils.skipInit: the initialisers leave tensors as they are
  let skipping = 0;
  const fill = (t, fn) => {
    if (t.numel() === 0 || skipping !== 0) return t; // PyTorch: "Initializing zero-element tensors is a no-op"
    kd.noGrad(() => kd.tidy(() => { t.copy_(fn()); }));
    return t;
  };

  /** The recommended gain for a nonlinearity ('relu', 'leaky_relu' (param: slope), 'tanh', 'selu', ...). */
  function calculateGain(nonlinearity, param = null) {
    const linear = ['linear', 'conv1d', 'conv2d', 'conv3d', 'conv_transpose1d', 'conv_transpose2d', 'conv_transpose3d',
      'convTranspose1d', 'convTranspose2d', 'convTranspose3d'];
    if (linear.includes(nonlinearity) || nonlinearity === 'sigmoid') return 1;
    if (nonlinearity === 'tanh') return 5.0 / 3;
    if (nonlinearity === 'relu') return Math.sqrt(2.0);
    if (nonlinearity === 'leaky_relu' || nonlinearity === 'leakyRelu') {
      let slope;
      if (param === null || param === undefined) slope = 0.01;
      else if (typeof param === 'number') slope = param; // PyTorch refuses a bool here
      else throw new KindlingError(`negative_slope ${param} not a valid number`, 'KD_INVALID_ARGUMENT');
      return Math.sqrt(2.0 / (1 + slope * slope));
    }
    if (nonlinearity === 'selu') return 3.0 / 4;
    throw new KindlingError(`Unsupported nonlinearity ${nonlinearity}`, 'KD_INVALID_ARGUMENT');
  }

  /** [fanIn, fanOut] of a weight of 2 or more dims (dim 1 in, dim 0 out, times the receptive field). */
  function calculateFanInAndFanOut(t) {
    const shape = t.shape;
    if (shape.length < 2) {
      throw new KindlingError('Fan in and fan out can not be computed for tensor with fewer than 2 dimensions', 'KD_INVALID_ARGUMENT');
    }
    let receptive = 1;
    for (let i = 2; i < shape.length; i++) receptive *= shape[i];
    return [shape[1] * receptive, shape[0] * receptive];
  }

  function fanOf(t, mode) {
    if (mode !== 'fan_in' && mode !== 'fan_out' && mode !== 'fanIn' && mode !== 'fanOut') {
      throw new KindlingError(`Mode ${mode} not supported, please use one of ['fan_in', 'fan_out']`, 'KD_INVALID_ARGUMENT');
    }
    const [fi, fo] = calculateFanInAndFanOut(t);
    return mode === 'fan_in' || mode === 'fanIn' ? fi : fo;
  }

  function uniformFill(t, a, b) {
    return fill(t, () => kd.rand(t.shape, { dtype: drawDtype(t), device: t.device }).mul(b - a).add(a));
  }
  function normalFill(t, mean, std) {
    return fill(t, () => kd.randn(t.shape, { dtype: drawDtype(t), device: t.device }).mul(std).add(mean));
  }

  /** Fills with U(a, b). */
  function uniform_(tensor, ...rest) {
    check(tensor, 'uniform_');
    const { a, b } = parseArgs('uniform_()', rest, ['a', 'b'], { a: 0, b: 1 });
    return uniformFill(tensor, a, b);
  }
  /** Fills with N(mean, std^2). */
  function normal_(tensor, ...rest) {
    check(tensor, 'normal_');
    const { mean, std } = parseArgs('normal_()', rest, ['mean', 'std'], { mean: 0, std: 1 });
    return normalFill(tensor, mean, std);
  }
  /** Fills with N(mean, std^2) truncated to [a, b] (inverse-CDF method, as PyTorch). */
  function truncNormal_(tensor, ...rest) {
    check(tensor, 'truncNormal_');
    const { mean, std, a, b } = parseArgs('truncNormal_()', rest, ['mean', 'std', 'a', 'b'], { mean: 0, std: 1, a: -2, b: 2 });
    const cdf = (x) => (1 + erf(x / Math.SQRT2)) / 2;
    const l = cdf((a - mean) / std);
    const u = cdf((b - mean) / std);
    return fill(tensor, () => kd.rand(tensor.shape, { dtype: drawDtype(tensor), device: tensor.device })
      .mul(2 * u - 2 * l).add(2 * l - 1).erfinv().mul(std * Math.SQRT2).add(mean).clamp(a, b));
  }
  /** Fills with val. */
  function constant_(tensor, val) {
    check(tensor, 'constant_');
    if (val !== null && typeof val === 'object') val = parseArgs('constant_()', [val], ['val']).val;
    if (skipping === 0) kd.noGrad(() => tensor.fill_(val));
    return tensor;
  }
  /** Fills with 0. */
  function zeros_(tensor) { check(tensor, 'zeros_'); if (skipping === 0) kd.noGrad(() => tensor.zero_()); return tensor; }
  /** Fills with 1. */
  function ones_(tensor) { check(tensor, 'ones_'); if (skipping === 0) kd.noGrad(() => tensor.fill_(1)); return tensor; }
  /** Glorot uniform: U(-b, b), b = gain * sqrt(6 / (fanIn + fanOut)). */
  function xavierUniform_(tensor, ...rest) {
    check(tensor, 'xavierUniform_');
    const { gain } = parseArgs('xavierUniform_()', rest, ['gain'], { gain: 1 });
    const [fi, fo] = calculateFanInAndFanOut(tensor);
    const std = gain * Math.sqrt(2.0 / (fi + fo));
    const bound = Math.sqrt(3.0) * std;
    return uniformFill(tensor, -bound, bound);
  }
  /** Glorot normal: N(0, std^2), std = gain * sqrt(2 / (fanIn + fanOut)). */
  function xavierNormal_(tensor, ...rest) {
    check(tensor, 'xavierNormal_');
    const { gain } = parseArgs('xavierNormal_()', rest, ['gain'], { gain: 1 });
    const [fi, fo] = calculateFanInAndFanOut(tensor);
    return normalFill(tensor, 0, gain * Math.sqrt(2.0 / (fi + fo)));
  }
  /** He uniform: U(-b, b), b = gain(nonlinearity, a) * sqrt(3 / fan(mode)). */
  function kaimingUniform_(tensor, ...rest) {
    check(tensor, 'kaimingUniform_');
    const { a, mode, nonlinearity } = parseArgs('kaimingUniform_()', rest, ['a', 'mode', 'nonlinearity'],
      { a: 0, mode: 'fan_in', nonlinearity: 'leaky_relu' });
    if (tensor.numel() === 0) return tensor;
    const fan = fanOf(tensor, mode);
    const std = calculateGain(nonlinearity, a) / Math.sqrt(fan);
    const bound = Math.sqrt(3.0) * std;
    return uniformFill(tensor, -bound, bound);
  }
  /** He normal: N(0, std^2), std = gain(nonlinearity, a) / sqrt(fan(mode)). */
  function kaimingNormal_(tensor, ...rest) {
    check(tensor, 'kaimingNormal_');
    const { a, mode, nonlinearity } = parseArgs('kaimingNormal_()', rest, ['a', 'mode', 'nonlinearity'],
      { a: 0, mode: 'fan_in', nonlinearity: 'leaky_relu' });
    if (tensor.numel() === 0) return tensor;
    const fan = fanOf(tensor, mode);
    return normalFill(tensor, 0, calculateGain(nonlinearity, a) / Math.sqrt(fan));
  }

  /**
   * A (semi-)orthogonal matrix, as Saxe et al. 2013: the Q of the QR decomposition of a normal
   * matrix (rows = dim 0, the other dims flattened), signs fixed by R's diagonal, times gain.
   */
  function orthogonal_(tensor, ...rest) {
    check(tensor, 'orthogonal_');
    const { gain } = parseArgs('orthogonal_()', rest, ['gain'], { gain: 1 });
    if (tensor.ndim < 2) throw new KindlingError('Only tensors with 2 or more dimensions are supported', 'KD_INVALID_ARGUMENT');
    if (tensor.numel() === 0) return tensor;
    const rows = tensor.shape[0];
    const cols = tensor.numel() / rows;
    // the QR runs in float32 (float64 for float64 tensors), as PyTorch's does in the tensor's dtype
    return fill(tensor, () => {
      let flat = kd.randn([rows, cols], { dtype: drawDtype(tensor), device: tensor.device });
      if (rows < cols) flat = flat.t();
      const [q, r] = kd.linalg.qr(flat);
      let qs = q.mul(kd.diagonal(r, 0).sign());
      if (rows < cols) qs = qs.t();
      return qs.mul(gain).reshape(tensor.shape);
    });
  }
  /**
   * A 2-D tensor as a sparse matrix (Martens 2010): N(0, std^2) with ceil(sparsity * rows) zeros
   * in each column, at random rows.
   */
  function sparse_(tensor, ...rest) {
    check(tensor, 'sparse_');
    const { sparsity, std } = parseArgs('sparse_()', rest, ['sparsity', 'std'], { std: 0.01 });
    if (tensor.ndim !== 2) throw new KindlingError('Only tensors with 2 dimensions are supported', 'KD_INVALID_ARGUMENT');
    const [rows, cols] = tensor.shape;
    const numZeros = Math.ceil(sparsity * rows);
    return fill(tensor, () => {
      const values = kd.randn([rows, cols], { dtype: drawDtype(tensor), device: tensor.device }).mul(std);
      // each column's rows in a random order (the ranks of uniform draws): the first numZeros go
      const rank = kd.rand([rows, cols], { device: tensor.device }).argsort(0).argsort(0);
      return values.maskedFill(rank.lt(numZeros), 0);
    });
  }
  /**
   * The Dirac delta of a convolution weight (3-5 dims): each output channel (in each of `groups`)
   * copies its input channel, so the convolution preserves its input.
   */
  function dirac_(tensor, ...rest) {
    check(tensor, 'dirac_');
    const { groups } = parseArgs('dirac_()', rest, ['groups'], { groups: 1 });
    const shape = tensor.shape;
    if (shape.length < 3 || shape.length > 5) {
      throw new KindlingError('Only tensors with 3, 4, or 5 dimensions are supported', 'KD_INVALID_ARGUMENT');
    }
    if (!Number.isInteger(groups) || groups < 1 || shape[0] % groups !== 0) {
      throw new KindlingError('dim 0 must be divisible by groups', 'KD_INVALID_ARGUMENT');
    }
    const perGroup = shape[0] / groups;
    const minDim = Math.min(perGroup, shape[1]);
    const strides = [];
    for (let i = shape.length - 1, acc = 1; i >= 0; i--) { strides[i] = acc; acc *= shape[i]; }
    const centre = shape.slice(2).reduce((o, n, i) => o + Math.floor(n / 2) * strides[i + 2], 0);
    const values = new Float64Array(tensor.numel());
    for (let g = 0; g < groups; g++) {
      for (let d = 0; d < minDim; d++) values[(g * perGroup + d) * strides[0] + d * strides[1] + centre] = 1;
    }
    return fill(tensor, () => kd.tensor(values, { device: tensor.device }).reshape(shape));
  }
  /** The identity matrix (a 2-D tensor): inputs preserved by a Linear layer. */
  function eye_(tensor) {
    check(tensor, 'eye_');
    if (tensor.ndim !== 2) throw new KindlingError('Only tensors with 2 dimensions are supported', 'KD_INVALID_ARGUMENT');
    return fill(tensor, () => kd.eye(tensor.shape[0], tensor.shape[1], { device: tensor.device }));
  }

  // Abramowitz-Stegun 7.1.26 is too coarse for the CDF bounds; use a series/continued fraction.
  function erf(x) {
    const sign = x < 0 ? -1 : 1;
    const z = Math.abs(x);
    if (z < 3) { // Taylor series
      let sum = z;
      let term = z;
      for (let n = 1; n < 200; n++) {
        term *= -z * z / n;
        const add = term / (2 * n + 1);
        sum += add;
        if (Math.abs(add) < 1e-17 * Math.abs(sum)) break;
      }
      return sign * 2 / Math.sqrt(Math.PI) * sum;
    }
    // continued fraction for erfc
    let f = 0;
    for (let n = 60; n >= 1; n--) f = (n / 2) / (z + f);
    const erfc = Math.exp(-z * z) / Math.sqrt(Math.PI) / (z + f);
    return sign * (1 - erfc);
  }

  nn.init = {
    calculateGain, uniform_, normal_, truncNormal_, constant_, zeros_, ones_, xavierUniform_, xavierNormal_,
    kaimingUniform_, kaimingNormal_, orthogonal_, sparse_, dirac_, eye_, _calculateFanInAndFanOut: calculateFanInAndFanOut,
  };
  // fn() with every initialiser a no-op (kd.nn.utils.skipInit)
  Object.defineProperty(nn.init, '_withoutInit', {
    value: (fn) => { skipping++; try { return fn(); } finally { skipping--; } },
  });
  // PyTorch's deprecated names without the underscore (nn.init.uniform, ...): the same function,
  // with PyTorch's deprecation warning once per name.
  for (const name of ['uniform_', 'normal_', 'constant_', 'eye_', 'dirac_', 'xavierUniform_', 'xavierNormal_',
    'kaimingUniform_', 'kaimingNormal_', 'orthogonal_', 'sparse_']) {
    const old = name.slice(0, -1);
    let warned = false;
    nn.init[old] = { [old](...args) {
      if (!warned) {
        warned = true;
        process.emitWarning(`nn.init.${old} is now deprecated in favor of nn.init.${name}.`, { type: 'DeprecationWarning', code: 'KD_DEPRECATED' });
      }
      return nn.init[name](...args);
    } }[old];
  }
  return nn.init;
};
