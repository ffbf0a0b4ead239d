// dynamic_linear.js - kd.ao.nn.quantized.dynamic.Linear (PyTorch's DynamicQuantizedLinear) and
// the LinearPackedParams module that holds its weight: qint8 weights quantized once (per tensor
// or per output feature, zero point 0), a float32 bias, float32 in and out; each forward
// quantizes its input to quint8 with reduceRange and runs kd._internal.qlinearDynamic (Note
// [int8 dynamic linear numerics] in src/cpu/qlinear.c).
//
// Note [Quantized Linear state dict]
// PyTorch saves '<p>.scale', '<p>.zero_point' (the output qparams of a static quantized Linear,
// 1.0 and 0 here, unused by the dynamic one), '<p>._packed_params.dtype' (torch.qint8) and
// '<p>._packed_params._packed_params' (a (qint8 weight, bias) tuple). kindling has no quantized
// tensor and keeps tensors only, so it saves '<p>.scale' (float32 0-d), '<p>.zero_point'
// (int64 0-d) as PyTorch, and, instead of the tuple, '<p>._packed_params.weight' (the int8
// values, [out, in]), '<p>._packed_params.weight_scale' (float32: 0-d per tensor, [out] per
// channel) and '<p>._packed_params.bias' (float32 [out], absent without bias). The int8 GEMM's
// packed layout is rebuilt from them (once, on load), never saved.
'use strict';

const { KindlingError, typeError } = require('../errors');

module.exports = function installDynamicLinear(kd, QuantizedTensor) {
  const { Module } = kd.nn;

  /** Holds a dynamic quantized Linear's weight, scales and bias, and their packed form. */
  class LinearPackedParams extends Module {
    constructor(dtype = 'qint8') {
      super();
      this.dtype = dtype;
      this.registerBuffer('weight', null);
      this.registerBuffer('weightScale', null);
      this.registerBuffer('bias', null);
      this.registerBuffer('packed', null, { persistent: false });
      this.registerLoadStateDictPostHook((m) => m._pack());
    }
    /** weight: int8 [out, in]; scales: JS numbers; perChannel: whether there is one per row. */
    _set(weight, scales, perChannel, bias) {
      this.weight = weight;
      const o = { dtype: 'float32', device: weight.device };
      this.weightScale = perChannel ? kd.tensor(scales, o) : kd.tensor(scales[0], o);
      this.bias = bias;
      this._pack();
    }
    /** w: a QuantizedTensor of qint8 values [out, in], zero point 0; b: float bias or null. */
    setWeightBias(w, b) {
      if (!(w instanceof QuantizedTensor)) throw typeError('setWeightBias: weight must be a kd.ao.QuantizedTensor');
      const perChannel = w.qscheme() === 'torch.per_channel_affine';
      if (perChannel && w.qPerChannelAxis() !== 0) {
        throw new KindlingError('setWeightBias: per-channel weights must be quantized along axis 0', 'KD_INVALID_ARGUMENT');
      }
      if (w._zeroPoints.some((z) => z !== 0)) {
        throw new KindlingError('setWeightBias: the weight must be quantized symmetrically (zero point 0), as the oneDNN engine requires',
          'KD_INVALID_ARGUMENT');
      }
      const bias = b === null || b === undefined ? null : kd.tidy(() => kd.keep(b.detach().to('float32').contiguous().clone()));
      this._set(w._int.to('int8').contiguous(), w._scales, perChannel, bias);
    }
    _pack() {
      if (this.weight === null) return;
      const w = this.weight;
      this.packed = w.device === 'cpu' ? kd._internal.qlinearPackWeight(w)
        : kd.tidy(() => kd._internal.qlinearPackWeight(w.to('cpu')).to(w.device)); // packed on the CPU
    }
    forward(x) { return x; }
  }

  const dtypeName = (d) => String(d).replace(/^torch\./, '');

  /**
   * A float [out, in] weight quantized by a qconfig's weight observer (default: per tensor,
   * symmetric): PyTorch's _quantize_weight, q = clamp(rint(w * float(1 / scale)) + zp). Returns
   * a QuantizedTensor (int8, axis 0 per channel).
   */
  function quantizeWeight(weight, qconfig) {
    const obs = ((qconfig && qconfig.weight) || kd.ao.quantization.defaultDynamicQConfig.weight)();
    if (obs.dtype !== 'qint8') {
      throw new KindlingError(`The only supported dtypes for dynamic quantized linear are qint8 and float16 got: ${obs.dtype}` +
        (obs.dtype === 'float16' ? ' (float16 weights are not supported by kindling, as by PyTorch\'s oneDNN engine)' : ''),
      'KD_NOT_SUPPORTED');
    }
    const w = weight.detach().to('float32');
    obs.forward(w);
    const [scales, zps] = obs._qparams();
    const perChannel = obs.qscheme.startsWith('per_channel');
    if (perChannel && obs.chAxis !== 0) throw new KindlingError('per-channel weight observers must use chAxis 0', 'KD_INVALID_ARGUMENT');
    const qw = kd.tidy(() => {
      const o = { dtype: 'float32', device: w.device };
      const inv = kd.tensor(scales.map((s) => Math.fround(1 / s)), o).reshape([perChannel ? -1 : 1, 1]);
      const zp = kd.tensor(zps, o).reshape([perChannel ? -1 : 1, 1]);
      return kd.keep(w.mul(inv).round().add(zp).clamp(-128, 127).to('int8'));
    });
    return new QuantizedTensor(qw, scales, zps, perChannel ? 0 : null);
  }

  /** y = dequantize(quantize(x) @ Wq^T) + b: Linear(inFeatures, outFeatures, bias = true, {dtype: 'qint8'}). */
  class Linear extends Module {
    constructor(inFeatures, outFeatures, bias = true, opts = {}) {
      super();
      if (typeof bias === 'object' && bias !== null) { opts = bias; bias = opts.bias === undefined ? true : opts.bias; }
      const dtype = dtypeName(opts.dtype || 'qint8');
      if (dtype !== 'qint8') {
        throw new KindlingError(`Unsupported dtype specified for dynamic quantized Linear: ${dtype} (kindling supports qint8)`,
          'KD_NOT_SUPPORTED');
      }
      for (const [k, v] of [['inFeatures', inFeatures], ['outFeatures', outFeatures]]) {
        if (!Number.isInteger(v) || v <= 0) throw typeError(`${k} must be a positive integer, got ${v}`);
      }
      this.inFeatures = inFeatures;
      this.outFeatures = outFeatures;
      this.scale = 1.0;
      this.zeroPoint = 0;
      this.version = 4;
      this._packedParams = new LinearPackedParams(dtype);
      const w = kd.zeros([outFeatures, inFeatures], { dtype: 'int8' });
      this._packedParams._set(w, [1.0], false, bias ? kd.zeros([outFeatures]) : null);
      this._registerStateDictHook((m, sd, prefix) => {
        sd[`${prefix}scale`] = kd.tensor(m.scale, { dtype: 'float32' });
        sd[`${prefix}zero_point`] = kd.tensor(m.zeroPoint, { dtype: 'int64' });
      });
      this._registerLoadStateDictPreHook((sd, prefix) => {
        for (const [k, f, set] of [['scale', 'scale', (v) => v], ['zero_point', 'zeroPoint', Math.trunc]]) {
          const v = sd[prefix + k];
          if (v === undefined) continue;
          this[f] = set(v instanceof kd.Tensor ? v.item() : v);
          delete sd[prefix + k];
        }
      });
    }
    forward(x) {
      const p = this._packedParams;
      return kd._internal.qlinearDynamic(x, p.packed, p.weightScale, p.bias, this.inFeatures, this.outFeatures,
        { reduceRange: true });
    }
    /** The quantized weight (a kd.ao.QuantizedTensor: intRepr(), qScale() / qPerChannelScales(), ...). */
    weight() {
      const p = this._packedParams;
      const s = p.weightScale;
      const perChannel = s.dim() === 1;
      const scales = perChannel ? s.arraySync() : [s.item()];
      return new QuantizedTensor(p.weight.clone(), scales, scales.map(() => 0), perChannel ? 0 : null);
    }
    /** The float32 bias (null without one). */
    bias() { return this._packedParams.bias; }
    /** Sets the weight (a QuantizedTensor of qint8 values, zero point 0) and the bias (float32 or null). */
    setWeightBias(w, b) {
      if (!(w instanceof QuantizedTensor)) throw typeError('setWeightBias: weight must be a kd.ao.QuantizedTensor');
      const shape = w.shape;
      if (shape.length !== 2 || shape[0] !== this.outFeatures || shape[1] !== this.inFeatures) {
        throw new KindlingError(`setWeightBias: expected a [${this.outFeatures}, ${this.inFeatures}] weight, got [${shape}]`, 'KD_SHAPE_MISMATCH');
      }
      this._packedParams.setWeightBias(w, b);
    }
    extraRepr() {
      return `in_features=${this.inFeatures}, out_features=${this.outFeatures}, dtype=torch.${this._packedParams.dtype}, ` +
        `qscheme=${this._packedParams.weightScale.dim() === 1 ? 'torch.per_channel_affine' : 'torch.per_tensor_affine'}`;
    }
    // PyTorch prints the layer without its LinearPackedParams child.
    toString() { return `DynamicQuantizedLinear(${this.extraRepr()})`; }

    /** Quantizes a float kd.nn.Linear with its qconfig's weight observer (default: defaultDynamicQConfig). */
    static fromFloat(mod, qconfig = null) {
      if (!(mod instanceof kd.nn.Linear)) throw typeError('nn.quantized.dynamic.Linear.fromFloat only works for kd.nn.Linear');
      const q = qconfig || mod.qconfig || kd.ao.quantization.defaultDynamicQConfig;
      const qw = quantizeWeight(mod.weight, q);
      const lin = new Linear(mod.inFeatures, mod.outFeatures, mod.bias !== null);
      lin.setWeightBias(qw, mod.bias);
      return lin;
    }
  }
  return { Linear, LinearPackedParams, quantizeWeight };
};
