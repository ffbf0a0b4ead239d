// upsampling.js - kd.nn resizing modules over kd.nn.functional.interpolate: Upsample(size,
// scaleFactor, mode='nearest', alignCorners, recomputeScaleFactor), UpsamplingNearest2d and
// UpsamplingBilinear2d (bilinear with alignCorners true), as PyTorch's; and PyTorch's deprecated
// functional forms F.upsample, F.upsampleNearest and F.upsampleBilinear (interpolate with the same
// choices, each warning once as PyTorch warns).
'use strict';

module.exports = function installUpsampling(kd, nn, { Module, parseArgs }) {
  const F = kd.nn.functional;
  const pyRatio = (v) => (Number.isInteger(v) ? `${v}.0` : String(v));

  /** Resizes (N, C, L), (N, C, H, W) or (N, C, D, H, W) input to `size` or by `scaleFactor`.
   * Upsample(size=null, scaleFactor=null, mode='nearest', alignCorners=null, recomputeScaleFactor=null). */
  class Upsample extends Module {
    constructor(...args) {
      super();
      this._init(parseArgs(this.constructor.name + '()', args, ['size', 'scaleFactor', 'mode', 'alignCorners', 'recomputeScaleFactor'],
        { size: null, scaleFactor: null, mode: 'nearest', alignCorners: null, recomputeScaleFactor: null }));
    }
    _init(o) {
      this.name = this.constructor.name;
      this.size = o.size;
      this.scaleFactor = o.scaleFactor ? o.scaleFactor : null;
      this.mode = o.mode;
      this.alignCorners = o.alignCorners;
      this.recomputeScaleFactor = o.recomputeScaleFactor;
    }
    forward(input) {
      return F.interpolate(input, this.size, this.scaleFactor, this.mode, this.alignCorners, this.recomputeScaleFactor);
    }
    extraRepr() {
      const sf = this.scaleFactor;
      const info = sf !== null ? `scale_factor=${Array.isArray(sf) ? `(${sf.map(pyRatio).join(', ')})` : pyRatio(sf)}`
        : `size=${Array.isArray(this.size) ? `(${this.size.join(', ')})` : this.size}`;
      return `${info}, mode=${this.mode}`;
    }
  }
  /** 2-D nearest-neighbour upsampling. UpsamplingNearest2d(size=null, scaleFactor=null). */
  class UpsamplingNearest2d extends Upsample {
    constructor(...args) {
      super();
      const o = parseArgs('UpsamplingNearest2d()', args, ['size', 'scaleFactor'], { size: null, scaleFactor: null });
      this._init({ ...o, mode: 'nearest', alignCorners: null, recomputeScaleFactor: null });
    }
  }
  /** 2-D bilinear upsampling with alignCorners true. UpsamplingBilinear2d(size=null, scaleFactor=null). */
  class UpsamplingBilinear2d extends Upsample {
    constructor(...args) {
      super();
      const o = parseArgs('UpsamplingBilinear2d()', args, ['size', 'scaleFactor'], { size: null, scaleFactor: null });
      this._init({ ...o, mode: 'bilinear', alignCorners: true, recomputeScaleFactor: null });
    }
  }

  Object.assign(nn, { Upsample, UpsamplingNearest2d, UpsamplingBilinear2d });

  // PyTorch's deprecated wrappers of interpolate. F.interpolate is looked up at each call: later
  // installers wrap it (mode 'area').
  const warned = new Set();
  const deprecated = (name) => {
    if (warned.has(name)) return;
    warned.add(name);
    process.emitWarning(`nn.functional.${name} is deprecated. Use nn.functional.interpolate instead.`,
      { type: 'DeprecationWarning', code: 'KD_DEPRECATED' });
  };
  /** Deprecated: F.interpolate(input, size, scaleFactor, mode, alignCorners). upsample(input, size=null, scaleFactor=null, mode='nearest', alignCorners=null). */
  F.upsample = function upsample(input, ...args) {
    const o = parseArgs('upsample()', args, ['size', 'scaleFactor', 'mode', 'alignCorners'],
      { size: null, scaleFactor: null, mode: 'nearest', alignCorners: null });
    deprecated('upsample');
    return F.interpolate(input, o.size, o.scaleFactor, o.mode, o.alignCorners);
  };
  /** Deprecated: F.interpolate with mode 'nearest'. upsampleNearest(input, size=null, scaleFactor=null). */
  F.upsampleNearest = function upsampleNearest(input, ...args) {
    const o = parseArgs('upsampleNearest()', args, ['size', 'scaleFactor'], { size: null, scaleFactor: null });
    deprecated('upsample_nearest');
    return F.interpolate(input, o.size, o.scaleFactor, 'nearest');
  };
  /** Deprecated: F.interpolate with mode 'bilinear' and alignCorners true. upsampleBilinear(input, size=null, scaleFactor=null). */
  F.upsampleBilinear = function upsampleBilinear(input, ...args) {
    const o = parseArgs('upsampleBilinear()', args, ['size', 'scaleFactor'], { size: null, scaleFactor: null });
    deprecated('upsample_bilinear');
    return F.interpolate(input, o.size, o.scaleFactor, 'bilinear', true);
  };
};
