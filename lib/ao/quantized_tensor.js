// quantized_tensor.js - kd.ao.QuantizedTensor: what PyTorch's qint8 QTensor answers about a
// quantized weight (DynamicQuantizedLinear.weight()): the int8 values (intRepr), the scales and
// zero points per tensor or per channel, qscheme, dequantize. kindling has no quantized dtype;
// this object holds the int8 tensor and its parameters, and is read-only.
'use strict';

const { KindlingError } = require('../errors');

module.exports = function installQuantizedTensor(kd) {
  class QuantizedTensor {
    /**
     * intRepr: int8 tensor; scales: JS numbers (one: per tensor; one per slice along axis: per
     * channel); zeroPoints likewise; axis: the channel axis (per channel) or null.
     */
    constructor(intRepr, scales, zeroPoints, axis = null, dtype = 'qint8') {
      this._int = intRepr;
      this._scales = scales.slice();
      this._zeroPoints = zeroPoints.slice();
      this._axis = axis;
      this.dtype = dtype;
    }
    get shape() { return this._int.shape; }
    size(dim) { return this._int.size(dim); }
    dim() { return this._int.dim(); }
    get device() { return this._int.device; }
    get isQuantized() { return true; }
    /** 'torch.per_tensor_affine' or 'torch.per_channel_affine' (as PyTorch's qscheme() prints). */
    qscheme() { return this._axis === null ? 'torch.per_tensor_affine' : 'torch.per_channel_affine'; }
    /** The int8 values (a copy). */
    intRepr() { return this._int.clone(); }
    qScale() { this._perTensor('qScale'); return this._scales[0]; }
    qZeroPoint() { this._perTensor('qZeroPoint'); return this._zeroPoints[0]; }
    qPerChannelScales() { this._perChannel('qPerChannelScales'); return kd.tensor(this._scales, { dtype: 'float64' }); }
    qPerChannelZeroPoints() { this._perChannel('qPerChannelZeroPoints'); return kd.tensor(this._zeroPoints, { dtype: 'int64' }); }
    qPerChannelAxis() { this._perChannel('qPerChannelAxis'); return this._axis; }
    /** float32 values: (q - zeroPoint) * scale. */
    dequantize() {
      return kd.tidy(() => {
        const shape = this._axis === null ? [1] : this._int.shape.map((s, d) => (d === this._axis ? s : 1));
        const s = kd.tensor(this._scales, { dtype: 'float32' }).reshape(shape);
        const z = kd.tensor(this._zeroPoints, { dtype: 'float32' }).reshape(shape);
        return this._int.to('float32').sub(z).mul(s);
      });
    }
    toString() {
      const q = this._axis === null ? `scale=${this._scales[0]}, zero_point=${this._zeroPoints[0]}` : `axis=${this._axis}`;
      return `QuantizedTensor(shape=[${this.shape}], dtype=torch.${this.dtype}, qscheme=${this.qscheme()}, ${q})`;
    }
    _perTensor(what) {
      if (this._axis !== null) throw new KindlingError(`${what}: Expected per tensor quantizer, got per channel`, 'KD_INVALID_ARGUMENT');
    }
    _perChannel(what) {
      if (this._axis === null) throw new KindlingError(`${what}: Expected per channel quantizer, got per tensor`, 'KD_INVALID_ARGUMENT');
    }
  }
  return QuantizedTensor;
};
