// conv.js - kd.nn convolution modules: Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d,
// ConvTranspose3d, over kd.nn.functional (pooling modules: pooling.js). Convolution weights start as PyTorch's (kaiming_uniform with a = sqrt(5); bias
// U(+-1/sqrt(fanIn))). paddingMode 'reflect', 'replicate' and 'circular' pad with F.pad first.
'use strict';

const { KindlingError, typeError } = require('../errors');

module.exports = function installConv(kd, nn, { Module, ownedParameter, parseArgs }) {
  const F = kd.nn.functional;
  const init = nn.init;
  const factory = (o) => ({ dtype: o.dtype || undefined, device: o.device || undefined });
  const tuple = (v, n, what) => {
    const a = Array.isArray(v) ? v.slice() : Array(n).fill(v);
    if (a.length !== n || !a.every(Number.isInteger)) throw typeError(`${what} must be an int or a list of ${n} ints, got ${JSON.stringify(v)}`);
    return a;
  };
  const pyTuple = (a) => `(${a.join(', ')}${a.length === 1 ? ',' : ''})`;

  class ConvNd extends Module {
    constructor(what, nd, transposed, args) {
      super();
      const names = transposed
        ? ['inChannels', 'outChannels', 'kernelSize', 'stride', 'padding', 'outputPadding', 'groups', 'bias', 'dilation', 'paddingMode']
        : ['inChannels', 'outChannels', 'kernelSize', 'stride', 'padding', 'dilation', 'groups', 'bias', 'paddingMode'];
      const o = parseArgs(what, args, names, {
        stride: 1, padding: 0, outputPadding: 0, dilation: 1, groups: 1, bias: true, paddingMode: 'zeros', device: null, dtype: null,
      });
      const { inChannels, outChannels, groups } = o;
      if (!Number.isInteger(groups) || groups <= 0) throw new KindlingError('groups must be a positive integer', 'KD_INVALID_ARGUMENT');
      if (inChannels % groups !== 0) throw new KindlingError('in_channels must be divisible by groups', 'KD_INVALID_ARGUMENT');
      if (outChannels % groups !== 0) throw new KindlingError('out_channels must be divisible by groups', 'KD_INVALID_ARGUMENT');
      if (!['zeros', 'reflect', 'replicate', 'circular'].includes(o.paddingMode)) {
        throw new KindlingError(`padding_mode must be one of ['zeros', 'reflect', 'replicate', 'circular'], but got padding_mode='${o.paddingMode}'`, 'KD_INVALID_ARGUMENT');
      }
      this.inChannels = inChannels;
      this.outChannels = outChannels;
      this.kernelSize = tuple(o.kernelSize, nd, 'kernel_size');
      this.stride = tuple(o.stride, nd, 'stride');
      if (typeof o.padding === 'string') {
        if (o.padding !== 'same' && o.padding !== 'valid') {
          throw new KindlingError(`Invalid padding string '${o.padding}', should be one of ['valid', 'same']`, 'KD_INVALID_ARGUMENT');
        }
        if (o.padding === 'same' && this.stride.some((s) => s !== 1)) {
          throw new KindlingError("padding='same' is not supported for strided convolutions", 'KD_INVALID_ARGUMENT');
        }
        if (transposed) throw new KindlingError('string padding is not supported for transposed convolutions', 'KD_INVALID_ARGUMENT');
        this.padding = o.padding;
      } else {
        this.padding = tuple(o.padding, nd, 'padding');
      }
      this.dilation = tuple(o.dilation, nd, 'dilation');
      this.transposed = transposed;
      this.outputPadding = tuple(o.outputPadding, nd, 'output_padding');
      this.groups = groups;
      this.paddingMode = o.paddingMode;
      const wshape = transposed ? [inChannels, outChannels / groups, ...this.kernelSize] : [outChannels, inChannels / groups, ...this.kernelSize];
      this.weight = ownedParameter(kd.empty(wshape, factory(o)));
      if (o.bias) this.bias = ownedParameter(kd.empty([outChannels], factory(o)));
      else this.registerParameter('bias', null);
      this.resetParameters();
    }
    resetParameters() {
      init.kaimingUniform_(this.weight, { a: Math.sqrt(5) });
      if (this.bias) {
        const [fanIn] = init._calculateFanInAndFanOut(this.weight);
        if (fanIn !== 0) {
          const bound = 1 / Math.sqrt(fanIn);
          init.uniform_(this.bias, -bound, bound);
        }
      }
    }
    // 'reflect' / 'replicate': F.pad the input by padding (last dim first), then a valid convolution.
    _padded(input) {
      if (this.paddingMode === 'zeros') return [input, this.padding];
      const pads = [];
      for (let i = this.kernelSize.length - 1; i >= 0; i--) {
        if (this.padding === 'valid') { pads.push(0, 0); continue; }
        if (this.padding === 'same') { // PyTorch: total d * (k - 1), the extra one on the right
          const total = this.dilation[i] * (this.kernelSize[i] - 1);
          const left = Math.floor(total / 2);
          pads.push(left, total - left);
          continue;
        }
        pads.push(this.padding[i], this.padding[i]);
      }
      return [F.pad(input, pads, this.paddingMode), 0];
    }
    extraRepr() {
      let s = `${this.inChannels}, ${this.outChannels}, kernel_size=${pyTuple(this.kernelSize)}, stride=${pyTuple(this.stride)}`;
      if (typeof this.padding === 'string') s += `, padding=${this.padding}`;
      else if (this.padding.some((v) => v !== 0)) s += `, padding=${pyTuple(this.padding)}`;
      if (this.dilation.some((v) => v !== 1)) s += `, dilation=${pyTuple(this.dilation)}`;
      if (this.outputPadding.some((v) => v !== 0)) s += `, output_padding=${pyTuple(this.outputPadding)}`;
      if (this.groups !== 1) s += `, groups=${this.groups}`;
      if (!this.bias) s += ', bias=False';
      if (this.paddingMode !== 'zeros') s += `, padding_mode=${this.paddingMode}`;
      return s;
    }
  }

  /** 1-D convolution over (N, C, L). Conv1d(in, out, kernelSize, stride=1, padding=0, dilation=1, groups=1, bias=true, paddingMode='zeros'). */
  class Conv1d extends ConvNd {
    constructor(...args) { super('Conv1d()', 1, false, args); }
    forward(input) {
      const [x, pad] = this._padded(input);
      return F.conv1d(x, this.weight, this.bias, this.stride, pad, this.dilation, this.groups);
    }
  }
  /** 2-D convolution over (N, C, H, W). Conv2d(in, out, kernelSize, stride=1, padding=0, dilation=1, groups=1, bias=true, paddingMode='zeros'). */
  class Conv2d extends ConvNd {
    constructor(...args) { super('Conv2d()', 2, false, args); }
    forward(input) {
      const [x, pad] = this._padded(input);
      return F.conv2d(x, this.weight, this.bias, this.stride, pad, this.dilation, this.groups);
    }
  }
  /** 3-D convolution over (N, C, D, H, W). Conv3d(in, out, kernelSize, stride=1, padding=0, dilation=1, groups=1, bias=true, paddingMode='zeros'). */
  class Conv3d extends ConvNd {
    constructor(...args) { super('Conv3d()', 3, false, args); }
    forward(input) {
      const [x, pad] = this._padded(input);
      return F.conv3d(x, this.weight, this.bias, this.stride, pad, this.dilation, this.groups);
    }
  }

  class ConvTransposeNd extends ConvNd {
    constructor(what, nd, args) {
      super(what, nd, true, args);
      if (this.paddingMode !== 'zeros') throw new KindlingError(`Only "zeros" padding mode is supported for ${this.constructor.name}`, 'KD_INVALID_ARGUMENT');
    }
    // The output padding that gives outputSize (PyTorch's _output_padding).
    _outputPadding(input, outputSize) {
      if (outputSize !== null && typeof outputSize === 'object' && !Array.isArray(outputSize)) outputSize = outputSize.outputSize; // forward(input, {outputSize})
      if (outputSize === undefined || outputSize === null) return this.outputPadding;
      const nd = this.kernelSize.length;
      const hasBatch = input.ndim === nd + 2;
      let size = outputSize.slice();
      if (size.length === nd + 2 || (size.length === nd + 1 && !hasBatch)) size = size.slice(-nd);
      if (size.length !== nd) {
        throw new KindlingError(`ConvTranspose${nd}D: for ${input.ndim}D input, output_size must have ${nd} or ${nd + 2} elements (got ${outputSize.length})`, 'KD_INVALID_ARGUMENT');
      }
      const spatial = input.shape.slice(-nd);
      const mins = [], maxs = [];
      for (let d = 0; d < nd; d++) {
        mins.push((spatial[d] - 1) * this.stride[d] - 2 * this.padding[d] + this.dilation[d] * (this.kernelSize[d] - 1) + 1);
        maxs.push(mins[d] + this.stride[d] - 1);
      }
      for (let d = 0; d < nd; d++) {
        if (size[d] < mins[d] || size[d] > maxs[d]) {
          throw new KindlingError(`requested an output size of [${size.join(', ')}], but valid sizes range from [${mins.join(', ')}] to [${maxs.join(', ')}] (for an input of [${spatial.join(', ')}])`, 'KD_INVALID_ARGUMENT');
        }
      }
      return size.map((v, d) => v - mins[d]);
    }
  }
  /** 1-D transposed convolution. ConvTranspose1d(in, out, kernelSize, stride=1, padding=0, outputPadding=0, groups=1, bias=true, dilation=1).
   * forward(input, outputSize?) picks the output padding that gives outputSize. */
  class ConvTranspose1d extends ConvTransposeNd {
    constructor(...args) { super('ConvTranspose1d()', 1, args); }
    forward(input, outputSize) {
      return F.convTranspose1d(input, this.weight, this.bias, this.stride, this.padding, this._outputPadding(input, outputSize), this.groups, this.dilation);
    }
  }
  /** 2-D transposed convolution. ConvTranspose2d(in, out, kernelSize, stride=1, padding=0, outputPadding=0, groups=1, bias=true, dilation=1).
   * forward(input, outputSize?) picks the output padding that gives outputSize. */
  class ConvTranspose2d extends ConvTransposeNd {
    constructor(...args) { super('ConvTranspose2d()', 2, args); }
    forward(input, outputSize) {
      return F.convTranspose2d(input, this.weight, this.bias, this.stride, this.padding, this._outputPadding(input, outputSize), this.groups, this.dilation);
    }
  }
  /** 3-D transposed convolution. ConvTranspose3d(in, out, kernelSize, stride=1, padding=0, outputPadding=0, groups=1, bias=true, dilation=1).
   * forward(input, outputSize?) picks the output padding that gives outputSize. */
  class ConvTranspose3d extends ConvTransposeNd {
    constructor(...args) { super('ConvTranspose3d()', 3, args); }
    forward(input, outputSize) {
      return F.convTranspose3d(input, this.weight, this.bias, this.stride, this.padding, this._outputPadding(input, outputSize), this.groups, this.dilation);
    }
  }

  Object.assign(nn, { Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d });
};
