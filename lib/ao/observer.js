// observer.js - the weight observers of kd.ao.quantization's dynamic qconfigs: MinMaxObserver
// (per tensor) and PerChannelMinMaxObserver, PyTorch 1.13's min/max -> scale/zero-point rule
// (torch.ao.quantization.observer._calculate_qparams) for qint8 and quint8, and
// PlaceholderObserver (the activation entry of a dynamic qconfig: the input is quantized at run
// time, Note [int8 dynamic linear numerics] in src/cpu/qlinear.c). Observers take float32
// tensors; scales and zero points are JS numbers (float32 values) here, tensors in
// calculateQparams() as PyTorch returns them.
'use strict';

const { KindlingError } = require('../errors');

const EPS = 1.1920928955078125e-7; // torch.finfo(torch.float32).eps
const RANGES = { qint8: [-128, 127], quint8: [0, 255] };
const QSCHEMES = ['per_tensor_affine', 'per_tensor_symmetric', 'per_channel_affine', 'per_channel_symmetric'];

module.exports = function installObservers(kd) {
  const invalid = (msg) => new KindlingError(msg, 'KD_INVALID_ARGUMENT');
  const bare = (q) => String(q).replace(/^torch\./, '');

  const roundHalfEven = (v) => {
    const r = Math.round(v);
    return Math.abs(v % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
  };

  /** scale and zero point of one [min, max] (PyTorch's _calculate_qparams, float32 arithmetic). */
  function qparams(minVal, maxVal, qmin, qmax, symmetric, dtype) {
    const minNeg = Math.min(minVal, 0);
    const maxPos = Math.max(maxVal, 0);
    let scale;
    let zp = 0;
    if (symmetric) {
      scale = Math.fround(Math.max(-minNeg, maxPos) / ((qmax - qmin) / 2));
      scale = Math.max(scale, EPS);
      if (dtype === 'quint8') zp = 128;
    } else {
      scale = Math.fround(Math.fround(maxPos - minNeg) / (qmax - qmin));
      scale = Math.max(scale, EPS);
      zp = qmin - roundHalfEven(Math.fround(minNeg / scale));
      zp = Math.min(Math.max(zp, qmin), qmax);
    }
    return [scale, zp];
  }

  class ObserverBase {
    constructor(opts = {}, perChannel = false) {
      const { dtype = 'qint8', qscheme = perChannel ? 'per_channel_affine' : 'per_tensor_affine', reduceRange = false,
        chAxis = 0 } = opts;
      if (!(dtype in RANGES)) throw invalid(`Default Observer only works for qint8 and quint8 data type, got ${dtype}`);
      const q = bare(qscheme);
      if (!QSCHEMES.includes(q) || q.startsWith('per_channel') !== perChannel) {
        throw invalid(`Default Observer only works for ${perChannel ? 'per_channel_affine and per_channel_symmetric' : 'per_tensor_affine and per_tensor_symmetric'} quantization scheme, got ${qscheme}`);
      }
      this.dtype = dtype;
      this.qscheme = q;
      this.reduceRange = !!reduceRange;
      this.chAxis = chAxis;
      let [qmin, qmax] = RANGES[dtype];
      if (this.reduceRange) { qmin = Math.trunc(qmin / 2); qmax = Math.trunc(qmax / 2); }
      this.quantMin = qmin;
      this.quantMax = qmax;
      this.minVal = null;
      this.maxVal = null;
    }
    /** The scales and zero points as JS number arrays. */
    _qparams() {
      if (this.minVal === null) return [[1], [0]];
      const sym = this.qscheme.endsWith('symmetric');
      const out = this.minVal.map((mn, i) => qparams(mn, this.maxVal[i], this.quantMin, this.quantMax, sym, this.dtype));
      return [out.map((o) => o[0]), out.map((o) => o[1])];
    }
    /** [scale, zeroPoint] tensors (float32, int64), as PyTorch returns them. */
    calculateQparams() {
      const [s, z] = this._qparams();
      const shape = this instanceof PerChannelMinMaxObserver ? [s.length] : [1];
      return [kd.tensor(s, { dtype: 'float32' }).reshape(shape), kd.tensor(z, { dtype: 'int64' }).reshape(shape)];
    }
    extraRepr() { return `min_val=${this.minVal}, max_val=${this.maxVal}`; }
  }

  /** Running min/max of every value seen (forward returns its input). */
  class MinMaxObserver extends ObserverBase {
    constructor(opts = {}) { super(opts, false); }
    forward(x) {
      if (x.numel() === 0) return x;
      const mn = x.detach().min().item();
      const mx = x.detach().max().item();
      this.minVal = [this.minVal === null ? mn : Math.min(this.minVal[0], mn)];
      this.maxVal = [this.maxVal === null ? mx : Math.max(this.maxVal[0], mx)];
      return x;
    }
  }

  /** Running min/max per slice along chAxis (default 0: a Linear weight's output features). */
  class PerChannelMinMaxObserver extends ObserverBase {
    constructor(opts = {}) { super(opts, true); }
    forward(x) {
      if (x.numel() === 0) return x;
      const [mn, mx] = kd.tidy(() => {
        const y = x.detach().movedim(this.chAxis, 0).flatten(1);
        return [y.amin(1).arraySync(), y.amax(1).arraySync()];
      });
      this.minVal = this.minVal === null ? mn : mn.map((v, i) => Math.min(v, this.minVal[i]));
      this.maxVal = this.maxVal === null ? mx : mx.map((v, i) => Math.max(v, this.maxVal[i]));
      return x;
    }
  }

  /** The activation observer of a dynamic qconfig: records nothing (the input is quantized per call). */
  class PlaceholderObserver {
    constructor(opts = {}) {
      this.dtype = opts.dtype || 'float32';
      this.computeDtype = opts.computeDtype || null;
    }
    forward(x) { return x; }
  }

  /** PyTorch's Observer.with_args: a factory making observers with these options. */
  const withArgs = (Cls) => (opts) => {
    const f = () => new Cls(opts);
    f.observerClass = Cls;
    f.options = { ...opts };
    return f;
  };
  for (const C of [MinMaxObserver, PerChannelMinMaxObserver, PlaceholderObserver]) C.withArgs = withArgs(C);
  return { MinMaxObserver, PerChannelMinMaxObserver, PlaceholderObserver, EPS };
};
