// norm_instance.js - instance and local response normalisation: kd.nn.functional.instanceNorm and
// localResponseNorm, and the modules InstanceNorm1d/2d/3d, LocalResponseNorm and CrossMapLRN2d.
// instanceNorm is batch normalisation of the input seen as (1, N * C, *), as in ATen's
// instance_norm: the running statistics (when given) are repeated per sample, updated by
// batchNorm and averaged back over the batch. localResponseNorm averages the squares over a
// window of channels (a view with `unfold` over the zero-padded channel dim), as PyTorch's
// avg_pool form does. Everything is composed of kindling ops: any device, autograd for free.
'use strict';

const { KindlingError } = require('../errors');

module.exports = function installInstanceNorm(kd, nn, { Module, NormBase, parseArgs }) {
  const F = kd.nn.functional;
  const pyFloat = (v) => (Number.isInteger(v) ? `${v}.0` : String(v)); // alpha, beta, k default to Python floats
  const valueError = (m) => new KindlingError(m, 'KD_INVALID_ARGUMENT');

  /** Instance normalisation: each (sample, channel) plane normalised by its own statistics.
   * instanceNorm(input, runningMean?, runningVar?, weight?, bias?, useInputStats=true, momentum=0.1, eps=1e-5). */
  F.instanceNorm = function instanceNorm(...args) {
    const o = parseArgs('instance_norm()', args, ['input', 'runningMean', 'runningVar', 'weight', 'bias', 'useInputStats', 'momentum', 'eps'],
      { runningMean: null, runningVar: null, weight: null, bias: null, useInputStats: true, momentum: 0.1, eps: 1e-5 });
    const x = o.input;
    if (!(x instanceof kd.Tensor)) throw new KindlingError('instance_norm(): argument \'input\' must be a Tensor', 'KD_INVALID_TYPE');
    if (x.ndim < 2) throw valueError(`instance_norm: expected an input of at least 2 dims (got ${x.ndim}D input)`);
    const size = x.shape;
    if (o.useInputStats && size.slice(2).reduce((a, b) => a * b, 1) === 1) {
      throw valueError(`Expected more than 1 spatial element when training, got input size [${size.join(', ')}]`);
    }
    if (!o.useInputStats && (o.runningMean === null || o.runningVar === null)) {
      throw valueError('Expected running_mean and running_var to be defined when use_input_stats is false');
    }
    const [b, c] = size;
    const rep = (t) => (t === null ? null : t.repeat(b));
    const rm = kd.noGrad(() => rep(o.runningMean));
    const rv = kd.noGrad(() => rep(o.runningVar));
    const xr = x.reshape([1, b * c, ...size.slice(2)]);
    const out = F.batchNorm(xr, rm, rv, rep(o.weight), rep(o.bias), o.useInputStats, o.momentum, o.eps);
    kd.noGrad(() => {
      if (o.runningMean !== null) o.runningMean.copy_(rm.view(b, c).mean(0));
      if (o.runningVar !== null) o.runningVar.copy_(rv.view(b, c).mean(0));
    });
    return out.view(size);
  };

  /** Local response normalisation over channels: input / (k + alpha * mean of squares over `size`
   * neighbouring channels)^beta. localResponseNorm(input, size, alpha=1e-4, beta=0.75, k=1). */
  F.localResponseNorm = function localResponseNorm(...args) {
    const o = parseArgs('local_response_norm()', args, ['input', 'size', 'alpha', 'beta', 'k'], { alpha: 1e-4, beta: 0.75, k: 1.0 });
    const x = o.input;
    if (!(x instanceof kd.Tensor)) throw new KindlingError('local_response_norm(): argument \'input\' must be a Tensor', 'KD_INVALID_TYPE');
    if (x.ndim < 3) throw valueError(`Expected 3D or higher dimensionality input (got ${x.ndim} dimensions)`);
    if (!Number.isInteger(o.size) || o.size < 1) throw valueError(`local_response_norm: size must be a positive integer, got ${o.size}`);
    if (x.numel() === 0) return x;
    const size = o.size;
    const lead = Math.floor(size / 2), trail = Math.floor((size - 1) / 2);
    const shape = x.shape;
    const sq = x.mul(x).reshape([shape[0], shape[1], -1]);       // (N, C, S)
    const padded = F.pad(sq.transpose(1, 2), [lead, trail]);      // (N, S, C + size - 1)
    const mean = padded.unfold(2, size, 1).mean(-1).transpose(1, 2).reshape(shape);
    return x.div(mean.mul(o.alpha).add(o.k).pow(o.beta));
  };

  // Sums (N, C, H, W) over windows of `size` channels, the window of channel c starting at
  // c - before (zero-padded at both ends).
  const channelWindowSum = (t, size, before) => {
    const [n, c, h, w] = t.shape;
    const rows = t.reshape([n, c, h * w]).transpose(1, 2);
    return F.pad(rows, [before, size - 1 - before]).unfold(2, size, 1).sum(-1).transpose(1, 2).reshape([n, c, h, w]);
  };

  // PyTorch's CrossMapLRN2d (a running sum, from Lua Torch): scale = k + alpha / size * (the
  // squares of the channels [c - half, c + half], half = floor((size - 1) / 2), clipped, and for
  // c > half channel 0's square too: the running sum never subtracts channel 0); output =
  // input * scale^-beta. Its backward is PyTorch's own formula (that of the centred window), so
  // gradients match PyTorch's, not the derivative of the forward's quirk.
  class CrossMapLRN2dFn extends kd.autograd.Function {
    static forward(ctx, input, size, alpha, beta, k) {
      const half = Math.floor((size - 1) / 2);
      const c = input.shape[1];
      const sq = input.mul(input);
      let sum = channelWindowSum(sq, 2 * half + 1, half);
      if (c > half + 1) {
        const late = kd.arange(c, { device: input.device }).gt(half).to(input.dtype).view(1, c, 1, 1);
        sum = sum.add(sq.narrow(1, 0, 1).mul(late));
      }
      const scale = sum.mul(alpha / size).add(k);
      const output = input.mul(scale.pow(-beta));
      ctx.saveForBackward(input, output, scale);
      Object.assign(ctx, { size, alpha, beta });
      return output;
    }
    static backward(ctx, grad) {
      const [input, output, scale] = ctx.savedTensors;
      const { size, alpha, beta } = ctx;
      const before = Math.trunc(size - (size - 1) / 2);
      const accum = channelWindowSum(grad.mul(output).div(scale), size, before);
      return [scale.pow(-beta).mul(grad).sub(input.mul(accum).mul(2 * alpha * beta / size)), null, null, null, null];
    }
  }

  class InstanceNormNd extends NormBase {
    constructor(what, nd, args) {
      super(what, args, { affine: false, trackRunningStats: false });
      this._nd = nd;
    }
    _instanceNorm(input) {
      return F.instanceNorm(input, this.runningMean, this.runningVar, this.weight, this.bias,
        this.training || !this.trackRunningStats, this.momentum === null ? 0.1 : this.momentum, this.eps);
    }
    forward(input) {
      const nd = this._nd;
      if (input.ndim !== nd + 1 && input.ndim !== nd + 2) {
        throw valueError(nd === 1 ? `expected 2D or 3D input (got ${input.ndim}D input)`
          : `expected ${nd + 1}D or ${nd + 2}D input (got ${input.ndim}D input)`);
      }
      if (input.ndim === nd + 1) {
        const x = input.unsqueeze(0);
        return this._instanceNorm(x).squeeze(0);
      }
      return this._instanceNorm(input);
    }
  }

  /** Instance normalisation of (N, C, L) or (C, L). InstanceNorm1d(numFeatures, eps=1e-5, momentum=0.1, affine=false, trackRunningStats=false). */
  class InstanceNorm1d extends InstanceNormNd { constructor(...args) { super('InstanceNorm1d()', 1, args); } }
  /** Instance normalisation of (N, C, H, W) or (C, H, W). InstanceNorm2d(numFeatures, eps=1e-5, momentum=0.1, affine=false, trackRunningStats=false). */
  class InstanceNorm2d extends InstanceNormNd { constructor(...args) { super('InstanceNorm2d()', 2, args); } }
  /** Instance normalisation of (N, C, D, H, W) or (C, D, H, W). InstanceNorm3d(numFeatures, eps=1e-5, momentum=0.1, affine=false, trackRunningStats=false). */
  class InstanceNorm3d extends InstanceNormNd { constructor(...args) { super('InstanceNorm3d()', 3, args); } }

  /** Local response normalisation over channels. LocalResponseNorm(size, alpha=1e-4, beta=0.75, k=1). */
  class LocalResponseNorm extends Module {
    constructor(...args) {
      super();
      const o = parseArgs('LocalResponseNorm()', args, ['size', 'alpha', 'beta', 'k'], { alpha: 1e-4, beta: 0.75, k: 1.0 });
      Object.assign(this, { size: o.size, alpha: o.alpha, beta: o.beta, k: o.k });
    }
    forward(input) { return F.localResponseNorm(input, this.size, this.alpha, this.beta, this.k); }
    extraRepr() { return `${this.size}, alpha=${pyFloat(this.alpha)}, beta=${pyFloat(this.beta)}, k=${pyFloat(this.k)}`; }
  }

  /** Lua Torch's cross-map LRN of 4-D (N, C, H, W) input: input / (k + alpha / size * sum of squares
   * over `size` neighbouring channels)^beta. CrossMapLRN2d(size, alpha=1e-4, beta=0.75, k=1). */
  class CrossMapLRN2d extends Module {
    constructor(...args) {
      super();
      const o = parseArgs('CrossMapLRN2d()', args, ['size', 'alpha', 'beta', 'k'], { alpha: 1e-4, beta: 0.75, k: 1 });
      Object.assign(this, { size: o.size, alpha: o.alpha, beta: o.beta, k: o.k });
    }
    forward(input) {
      if (input.ndim !== 4) {
        throw valueError(`CrossMapLRN2d: Expected input to be 4D, got ${input.ndim}D instead.`);
      }
      return CrossMapLRN2dFn.apply(input, this.size, this.alpha, this.beta, this.k);
    }
    extraRepr() { return `${this.size}, alpha=${this.alpha}, beta=${this.beta}, k=${this.k}`; }
  }

  Object.assign(nn, { InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, LocalResponseNorm, CrossMapLRN2d });
};
