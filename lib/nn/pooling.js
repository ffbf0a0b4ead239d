// pooling.js - kd.nn pooling modules: MaxPool1d/2d/3d, AvgPool1d/2d/3d, AdaptiveAvgPool1d/2d/3d,
// AdaptiveMaxPool1d/2d/3d, LPPool1d/2d, FractionalMaxPool2d/3d and MaxUnpool1d/2d/3d, over
// kd.nn.functional (the native 2-D pools, and lib/nn/functional_pool.js), with PyTorch's
// constructor arguments, defaults and reprs.
'use strict';

const { KindlingError } = require('../errors');

module.exports = function installPooling(kd, nn, { Module, parseArgs }) {
  const F = kd.nn.functional;
  const py = (v) => {
    if (v === null || v === undefined) return 'None';
    if (v === true) return 'True';
    if (v === false) return 'False';
    if (Array.isArray(v)) return `(${v.map(py).join(', ')}${v.length === 1 ? ',' : ''})`;
    return String(v);
  };
  const single = (v) => (Array.isArray(v) ? v : [v]);

  class MaxPoolNd extends Module {
    constructor(what, nd, args) {
      super();
      const o = parseArgs(what, args, ['kernelSize', 'stride', 'padding', 'dilation', 'returnIndices', 'ceilMode'],
        { stride: null, padding: 0, dilation: 1, returnIndices: false, ceilMode: false });
      this.kernelSize = o.kernelSize;
      this.stride = o.stride === null ? o.kernelSize : o.stride;
      this.padding = o.padding;
      this.dilation = o.dilation;
      this.returnIndices = o.returnIndices;
      this.ceilMode = o.ceilMode;
      this._nd = nd;
    }
    forward(input) {
      const fn = [F.maxPool1d, F.maxPool2d, F.maxPool3d][this._nd - 1];
      return fn(input, this.kernelSize, this.stride, this.padding, this.dilation, this.ceilMode, this.returnIndices);
    }
    extraRepr() {
      return `kernel_size=${py(this.kernelSize)}, stride=${py(this.stride)}, padding=${py(this.padding)}, dilation=${py(this.dilation)}, ceil_mode=${py(this.ceilMode)}`;
    }
  }
  /** 1-D max pooling. MaxPool1d(kernelSize, stride=kernelSize, padding=0, dilation=1, returnIndices=false, ceilMode=false). */
  class MaxPool1d extends MaxPoolNd { constructor(...args) { super('MaxPool1d()', 1, args); } }
  /** 2-D max pooling. MaxPool2d(kernelSize, stride=kernelSize, padding=0, dilation=1, returnIndices=false, ceilMode=false). */
  class MaxPool2d extends MaxPoolNd { constructor(...args) { super('MaxPool2d()', 2, args); } }
  /** 3-D max pooling. MaxPool3d(kernelSize, stride=kernelSize, padding=0, dilation=1, returnIndices=false, ceilMode=false). */
  class MaxPool3d extends MaxPoolNd { constructor(...args) { super('MaxPool3d()', 3, args); } }

  /** 1-D average pooling. AvgPool1d(kernelSize, stride=kernelSize, padding=0, ceilMode=false, countIncludePad=true). */
  class AvgPool1d extends Module {
    constructor(...args) {
      super();
      const o = parseArgs('AvgPool1d()', args, ['kernelSize', 'stride', 'padding', 'ceilMode', 'countIncludePad'],
        { stride: null, padding: 0, ceilMode: false, countIncludePad: true });
      this.kernelSize = single(o.kernelSize);
      this.stride = single(o.stride === null ? o.kernelSize : o.stride);
      this.padding = single(o.padding);
      this.ceilMode = o.ceilMode;
      this.countIncludePad = o.countIncludePad;
    }
    forward(input) { return F.avgPool1d(input, this.kernelSize, this.stride, this.padding, this.ceilMode, this.countIncludePad); }
    extraRepr() { return `kernel_size=${py(this.kernelSize)}, stride=${py(this.stride)}, padding=${py(this.padding)}`; }
  }
  class AvgPoolNd extends Module {
    constructor(what, nd, args) {
      super();
      const o = parseArgs(what, args, ['kernelSize', 'stride', 'padding', 'ceilMode', 'countIncludePad', 'divisorOverride'],
        { stride: null, padding: 0, ceilMode: false, countIncludePad: true, divisorOverride: null });
      this.kernelSize = o.kernelSize;
      this.stride = o.stride === null ? o.kernelSize : o.stride;
      this.padding = o.padding;
      this.ceilMode = o.ceilMode;
      this.countIncludePad = o.countIncludePad;
      this.divisorOverride = o.divisorOverride;
      this._nd = nd;
    }
    forward(input) {
      const fn = this._nd === 2 ? F.avgPool2d : F.avgPool3d;
      return fn(input, this.kernelSize, this.stride, this.padding, this.ceilMode, this.countIncludePad, this.divisorOverride);
    }
    extraRepr() { return `kernel_size=${py(this.kernelSize)}, stride=${py(this.stride)}, padding=${py(this.padding)}`; }
  }
  /** 2-D average pooling. AvgPool2d(kernelSize, stride=kernelSize, padding=0, ceilMode=false, countIncludePad=true, divisorOverride=null). */
  class AvgPool2d extends AvgPoolNd { constructor(...args) { super('AvgPool2d()', 2, args); } }
  /** 3-D average pooling. AvgPool3d(kernelSize, stride=kernelSize, padding=0, ceilMode=false, countIncludePad=true, divisorOverride=null). */
  class AvgPool3d extends AvgPoolNd { constructor(...args) { super('AvgPool3d()', 3, args); } }

  class AdaptivePool extends Module {
    constructor(what, fn, withIndices, args) {
      super();
      const o = withIndices ? parseArgs(what, args, ['outputSize', 'returnIndices'], { returnIndices: false })
        : parseArgs(what, args, ['outputSize']);
      this.outputSize = o.outputSize;
      if (withIndices) this.returnIndices = o.returnIndices;
      this._fn = fn;
    }
    forward(input) {
      return this.returnIndices === undefined ? this._fn(input, this.outputSize) : this._fn(input, this.outputSize, this.returnIndices);
    }
    extraRepr() { return `output_size=${py(this.outputSize)}`; }
  }
  /** 1-D adaptive average pooling to outputSize. AdaptiveAvgPool1d(outputSize). */
  class AdaptiveAvgPool1d extends AdaptivePool { constructor(...args) { super('AdaptiveAvgPool1d()', F.adaptiveAvgPool1d, false, args); } }
  /** 2-D adaptive average pooling to outputSize (a number, or [H, W] where null keeps the input's size). AdaptiveAvgPool2d(outputSize). */
  class AdaptiveAvgPool2d extends AdaptivePool { constructor(...args) { super('AdaptiveAvgPool2d()', F.adaptiveAvgPool2d, false, args); } }
  /** 3-D adaptive average pooling to outputSize (null keeps a size). AdaptiveAvgPool3d(outputSize). */
  class AdaptiveAvgPool3d extends AdaptivePool { constructor(...args) { super('AdaptiveAvgPool3d()', F.adaptiveAvgPool3d, false, args); } }
  /** 1-D adaptive max pooling. AdaptiveMaxPool1d(outputSize, returnIndices=false). */
  class AdaptiveMaxPool1d extends AdaptivePool { constructor(...args) { super('AdaptiveMaxPool1d()', F.adaptiveMaxPool1d, true, args); } }
  /** 2-D adaptive max pooling. AdaptiveMaxPool2d(outputSize, returnIndices=false). */
  class AdaptiveMaxPool2d extends AdaptivePool { constructor(...args) { super('AdaptiveMaxPool2d()', F.adaptiveMaxPool2d, true, args); } }
  /** 3-D adaptive max pooling. AdaptiveMaxPool3d(outputSize, returnIndices=false). */
  class AdaptiveMaxPool3d extends AdaptivePool { constructor(...args) { super('AdaptiveMaxPool3d()', F.adaptiveMaxPool3d, true, args); } }

  class LPPoolNd extends Module {
    constructor(what, fn, args) {
      super();
      const o = parseArgs(what, args, ['normType', 'kernelSize', 'stride', 'ceilMode'], { stride: null, ceilMode: false });
      Object.assign(this, { normType: o.normType, kernelSize: o.kernelSize, stride: o.stride, ceilMode: o.ceilMode });
      this._fn = fn;
    }
    forward(input) { return this._fn(input, this.normType, this.kernelSize, this.stride, this.ceilMode); }
    extraRepr() {
      return `norm_type=${this.normType}, kernel_size=${py(this.kernelSize)}, stride=${py(this.stride)}, ceil_mode=${py(this.ceilMode)}`;
    }
  }
  /** 1-D power-average pooling. LPPool1d(normType, kernelSize, stride=kernelSize, ceilMode=false). */
  class LPPool1d extends LPPoolNd { constructor(...args) { super('LPPool1d()', F.lpPool1d, args); } }
  /** 2-D power-average pooling. LPPool2d(normType, kernelSize, stride=kernelSize, ceilMode=false). */
  class LPPool2d extends LPPoolNd { constructor(...args) { super('LPPool2d()', F.lpPool2d, args); } }

  class FractionalMaxPoolNd extends Module {
    constructor(what, nd, fn, args) {
      super();
      const o = parseArgs(what, args, ['kernelSize', 'outputSize', 'outputRatio', 'returnIndices', '_randomSamples'],
        { outputSize: null, outputRatio: null, returnIndices: false, _randomSamples: null });
      const name = what.slice(0, -2);
      const tuple = (v) => (v === null ? null : Array.isArray(v) ? v.slice() : Array(nd).fill(v));
      this.kernelSize = tuple(o.kernelSize);
      this.returnIndices = o.returnIndices;
      this.registerBuffer('_randomSamples', o._randomSamples);
      this.outputSize = tuple(o.outputSize);
      this.outputRatio = tuple(o.outputRatio);
      if (o.outputSize === null && o.outputRatio === null) {
        throw new KindlingError(`${name} requires specifying either an output size, or a pooling ratio`, 'KD_INVALID_ARGUMENT');
      }
      if (o.outputSize !== null && o.outputRatio !== null) {
        throw new KindlingError('only one of output_size and output_ratio may be specified', 'KD_INVALID_ARGUMENT');
      }
      if (this.outputRatio !== null && !this.outputRatio.every((r) => r > 0 && r < 1)) {
        throw new KindlingError(`output_ratio must be between 0 and 1 (got ${py(o.outputRatio)})`, 'KD_INVALID_ARGUMENT');
      }
      this._fn = fn;
    }
    forward(input) {
      return this._fn(input, this.kernelSize, this.outputSize, this.outputRatio, this.returnIndices, this._randomSamples);
    }
  }
  /** 2-D fractional max pooling. FractionalMaxPool2d(kernelSize, outputSize=null, outputRatio=null, returnIndices=false, _randomSamples=null). */
  class FractionalMaxPool2d extends FractionalMaxPoolNd { constructor(...args) { super('FractionalMaxPool2d()', 2, F.fractionalMaxPool2d, args); } }
  /** 3-D fractional max pooling. FractionalMaxPool3d(kernelSize, outputSize=null, outputRatio=null, returnIndices=false, _randomSamples=null). */
  class FractionalMaxPool3d extends FractionalMaxPoolNd { constructor(...args) { super('FractionalMaxPool3d()', 3, F.fractionalMaxPool3d, args); } }

  class MaxUnpoolNd extends Module {
    constructor(what, nd, fn, args) {
      super();
      const o = parseArgs(what, args, ['kernelSize', 'stride', 'padding'], { stride: null, padding: 0 });
      const tuple = (v) => (Array.isArray(v) ? v.slice() : Array(nd).fill(v));
      this.kernelSize = tuple(o.kernelSize);
      this.stride = tuple(o.stride === null ? o.kernelSize : o.stride);
      this.padding = tuple(o.padding);
      this._fn = fn;
    }
    /** forward(input, indices, outputSize?) */
    forward(input, indices, outputSize = null) {
      return this._fn(input, indices, this.kernelSize, this.stride, this.padding, outputSize);
    }
    extraRepr() { return `kernel_size=${py(this.kernelSize)}, stride=${py(this.stride)}, padding=${py(this.padding)}`; }
  }
  /** Partial inverse of MaxPool1d. MaxUnpool1d(kernelSize, stride=kernelSize, padding=0); forward(input, indices, outputSize?). */
  class MaxUnpool1d extends MaxUnpoolNd { constructor(...args) { super('MaxUnpool1d()', 1, F.maxUnpool1d, args); } }
  /** Partial inverse of MaxPool2d. MaxUnpool2d(kernelSize, stride=kernelSize, padding=0); forward(input, indices, outputSize?). */
  class MaxUnpool2d extends MaxUnpoolNd { constructor(...args) { super('MaxUnpool2d()', 2, F.maxUnpool2d, args); } }
  /** Partial inverse of MaxPool3d. MaxUnpool3d(kernelSize, stride=kernelSize, padding=0); forward(input, indices, outputSize?). */
  class MaxUnpool3d extends MaxUnpoolNd { constructor(...args) { super('MaxUnpool3d()', 3, F.maxUnpool3d, args); } }

  Object.assign(nn, {
    MaxPool1d, MaxPool2d, MaxPool3d, AvgPool1d, AvgPool2d, AvgPool3d, AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d,
    AdaptiveMaxPool1d, AdaptiveMaxPool2d,
    AdaptiveMaxPool3d, LPPool1d, LPPool2d, FractionalMaxPool2d, FractionalMaxPool3d, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d,
  });
};
