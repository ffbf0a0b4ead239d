// fold.js - kd.nn.Fold and kd.nn.Unfold: sliding local blocks of an image to columns and back,
// over kd.nn.functional.fold / unfold (lib/nn/functional_conv.js), as PyTorch's.
'use strict';

module.exports = function installFold(kd, nn, { Module, parseArgs }) {
  const F = kd.nn.functional;
  const repr = (v) => (Array.isArray(v) ? `(${v.join(', ')})` : String(v));

  /** Sums sliding blocks (N, C * prod(kernelSize), L) into (N, C, *outputSize).
   * Fold(outputSize, kernelSize, dilation=1, padding=0, stride=1). */
  class Fold extends Module {
    constructor(...args) {
      super();
      const o = parseArgs('Fold()', args, ['outputSize', 'kernelSize', 'dilation', 'padding', 'stride'], { dilation: 1, padding: 0, stride: 1 });
      Object.assign(this, { outputSize: o.outputSize, kernelSize: o.kernelSize, dilation: o.dilation, padding: o.padding, stride: o.stride });
    }
    forward(input) { return F.fold(input, this.outputSize, this.kernelSize, this.dilation, this.padding, this.stride); }
    extraRepr() {
      return `output_size=${repr(this.outputSize)}, kernel_size=${repr(this.kernelSize)}, dilation=${repr(this.dilation)}, padding=${repr(this.padding)}, stride=${repr(this.stride)}`;
    }
  }
  /** Extracts sliding blocks of (N, C, H, W) as columns (N, C * prod(kernelSize), L).
   * Unfold(kernelSize, dilation=1, padding=0, stride=1). */
  class Unfold extends Module {
    constructor(...args) {
      super();
      const o = parseArgs('Unfold()', args, ['kernelSize', 'dilation', 'padding', 'stride'], { dilation: 1, padding: 0, stride: 1 });
      Object.assign(this, { kernelSize: o.kernelSize, dilation: o.dilation, padding: o.padding, stride: o.stride });
    }
    forward(input) { return F.unfold(input, this.kernelSize, this.dilation, this.padding, this.stride); }
    extraRepr() {
      return `kernel_size=${repr(this.kernelSize)}, dilation=${repr(this.dilation)}, padding=${repr(this.padding)}, stride=${repr(this.stride)}`;
    }
  }

  Object.assign(nn, { Fold, Unfold });
};
