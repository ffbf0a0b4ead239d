// dynamic_rnn.js - kd.ao.nn.quantized.dynamic.LSTM and GRU (PyTorch's DynamicQuantizedLSTM /
// DynamicQuantizedGRU): per layer and direction, W_ih and W_hh quantized to qint8 once (with
// their float biases, as PyTorch's linear_prepack(w, b)); the input projection of all time steps
// is one kd._internal.qlinearDynamic (the layer's whole input quantized with one set of qparams,
// as PyTorch precomputes it), each step one more for h W_hh^T (h quantized per step) (Note
// [int8 dynamic linear numerics] in src/cpu/qlinear.c, reduceRange as PyTorch's cell params of
// version 2), then the float gate step (kd._internal.lstmCell / gruCell, PyTorch's formulas).
// Inputs: padded [T, B, I] (batchFirst: [B, T, I]) or unbatched [T, I]; inference only (no
// gradient, as PyTorch's quantized ops).
//
// State dict (Note [Quantized Linear state dict] in dynamic_linear.js): PyTorch saves one packed
// object per layer and direction, '<p>._all_weight_values.<i>.param'; kindling saves tensors:
// '<p>._all_weight_values.<i>.ih.weight' / '.weight_scale' / '.bias' and the same under '.hh'
// (i = layer * directions + direction).
'use strict';

const { KindlingError, typeError } = require('../errors');

module.exports = function installDynamicRnn(kd, { LinearPackedParams, quantizeWeight }) {
  const { Module } = kd.nn;
  const I = kd._internal;

  /** The packed W_ih and W_hh (with their biases) of one layer and direction. */
  class CellParams extends Module {
    constructor() {
      super();
      this.ih = new LinearPackedParams('qint8');
      this.hh = new LinearPackedParams('qint8');
    }
    forward(x) { return x; }
  }

  const GATES = { LSTM: 4, GRU: 3 };

  class RNNBase extends Module {
    constructor(mode, inputSize, hiddenSize, opts = {}) {
      super();
      const { numLayers = 1, bias = true, batchFirst = false, dropout = 0, bidirectional = false, dtype = 'qint8' } = opts;
      if (String(dtype).replace(/^torch\./, '') !== 'qint8') {
        throw new KindlingError(`Unsupported dtype for dynamic quantized ${mode}: ${dtype} (kindling supports qint8)`, 'KD_NOT_SUPPORTED');
      }
      for (const [k, v] of [['inputSize', inputSize], ['hiddenSize', hiddenSize], ['numLayers', numLayers]]) {
        if (!Number.isInteger(v) || v <= 0) throw typeError(`${k} must be a positive integer, got ${v}`);
      }
      if (!bias) throw new KindlingError(`dynamic quantized ${mode} needs bias=true (as PyTorch's)`, 'KD_INVALID_ARGUMENT');
      Object.assign(this, { mode, inputSize, hiddenSize, numLayers, bias: true, batchFirst, dropout, bidirectional, dtype: 'qint8', version: 2 });
      const cells = [];
      for (let i = 0; i < numLayers * (bidirectional ? 2 : 1); i++) cells.push(new CellParams());
      this._allWeightValues = new kd.nn.ModuleList(cells);
    }
    extraRepr() {
      let s = `${this.inputSize}, ${this.hiddenSize}`;
      if (this.numLayers !== 1) s += `, num_layers=${this.numLayers}`;
      if (this.batchFirst) s += ', batch_first=True';
      if (this.dropout !== 0) s += `, dropout=${this.dropout}`;
      if (this.bidirectional) s += ', bidirectional=True';
      return s;
    }
    toString() { return `DynamicQuantized${this.mode}(${this.extraRepr()})`; }

    /** forward(input, hx = null) -> [output, hN] (LSTM: [output, [hN, cN]]), as kd.nn's. */
    forward(input, hx = null) {
      const lstm = this.mode === 'LSTM';
      const name = `DynamicQuantized${this.mode}.forward()`;
      if (input instanceof kd.nn.utils.rnn.PackedSequence) {
        throw new KindlingError(`${name}: PackedSequence inputs are not supported by kindling's dynamic quantized RNNs; pad the batch`,
          'KD_NOT_SUPPORTED');
      }
      if (!(input instanceof kd.Tensor)) throw typeError(`${name}: input must be a Tensor`);
      if (input.dim() !== 2 && input.dim() !== 3) {
        throw new KindlingError(`${this.mode}: Expected input to be 2D or 3D, got ${input.dim()}D instead`, 'KD_SHAPE_MISMATCH');
      }
      if (input.shape[input.dim() - 1] !== this.inputSize) {
        throw new KindlingError(`input.size(-1) must be equal to input_size. Expected ${this.inputSize}, got ${input.shape[input.dim() - 1]}`,
          'KD_SHAPE_MISMATCH');
      }
      const unbatched = input.dim() === 2;
      const D = this.bidirectional ? 2 : 1;
      const H = this.hiddenSize;
      const G = GATES[this.mode];
      return kd.noGrad(() => kd.tidy(() => {
        let x = unbatched ? input.unsqueeze(1) : this.batchFirst ? input.transpose(0, 1) : input;
        const [T, B] = x.shape;
        let h0;
        let c0 = null;
        const state = (t) => (unbatched ? t.unsqueeze(1) : t);
        if (hx === null || hx === undefined) {
          h0 = kd.zeros([this.numLayers * D, B, H], { device: input.device });
          if (lstm) c0 = kd.zeros([this.numLayers * D, B, H], { device: input.device });
        } else if (lstm) {
          if (!Array.isArray(hx) || hx.length !== 2) throw typeError(`${name}: hx must be an array [h0, c0] of two Tensors`);
          [h0, c0] = hx.map(state);
        } else {
          h0 = state(hx);
        }
        for (const [what, t] of [['hidden', h0], ['cell', c0]]) {
          if (t !== null && (t.dim() !== 3 || t.shape[0] !== this.numLayers * D || t.shape[1] !== B || t.shape[2] !== H)) {
            throw new KindlingError(`Expected ${what} size (${this.numLayers * D}, ${B}, ${H}), got [${t.shape}]`, 'KD_SHAPE_MISMATCH');
          }
        }
        const hs = [];
        const cs = [];
        for (let l = 0; l < this.numLayers; l++) {
          const outs = [];
          const inSize = l === 0 ? this.inputSize : H * D;
          for (let d = 0; d < D; d++) {
            const p = this._allWeightValues[l * D + d];
            let h = h0.select(0, l * D + d).contiguous();
            let c = lstm ? c0.select(0, l * D + d).contiguous() : null;
            const steps = new Array(T);
            // the input projection of all steps at once: one set of input qparams per layer (PyTorch's)
            const gAll = I.qlinearDynamic(x.contiguous(), p.ih.packed, p.ih.weightScale, p.ih.bias, inSize, G * H);
            for (let s = 0; s < T; s++) {
              const t = d === 1 ? T - 1 - s : s;
              const gi = gAll.select(0, t);
              const gh = I.qlinearDynamic(h, p.hh.packed, p.hh.weightScale, p.hh.bias, H, G * H);
              if (lstm) [h, c] = I.lstmCell(gh.add(gi), c);
              else [h] = I.gruCell(gi, gh, h);
              steps[t] = h;
            }
            outs.push(kd.stack(steps));
            hs.push(h);
            if (lstm) cs.push(c);
          }
          x = D === 2 ? kd.cat(outs, 2) : outs[0];
          if (this.dropout > 0 && this.training && l < this.numLayers - 1) x = kd.nn.functional.dropout(x, this.dropout, true);
        }
        const fix = (t) => (unbatched ? t.squeeze(1) : t);
        const output = unbatched ? x.squeeze(1) : this.batchFirst ? x.transpose(0, 1).contiguous() : x;
        const hN = fix(kd.stack(hs));
        return lstm ? [output, [hN, fix(kd.stack(cs))]] : [output, hN];
      }));
    }

    /** Quantizes a float kd.nn.LSTM / GRU with its qconfig's weight observer (default: per tensor). */
    static _fromFloat(Cls, mode, mod, qconfig) {
      if (!(mod instanceof kd.nn[mode])) throw typeError(`nn.quantized.dynamic.${mode}.fromFloat only works for kd.nn.${mode}`);
      if (!mod.bias) throw new KindlingError(`dynamic quantized ${mode} needs a float module with bias`, 'KD_INVALID_ARGUMENT');
      if (mod.projSize) throw new KindlingError('dynamic quantized LSTM does not support projSize (as PyTorch\'s)', 'KD_NOT_SUPPORTED');
      const q = qconfig || mod.qconfig || kd.ao.quantization.defaultDynamicQConfig;
      const out = new Cls(mod.inputSize, mod.hiddenSize, {
        numLayers: mod.numLayers, bias: true, batchFirst: mod.batchFirst, dropout: mod.dropout, bidirectional: mod.bidirectional,
      });
      const D = mod.bidirectional ? 2 : 1;
      for (let l = 0; l < mod.numLayers; l++) {
        for (let d = 0; d < D; d++) {
          const sfx = `L${l}${d === 1 ? 'Reverse' : ''}`;
          const p = out._allWeightValues[l * D + d];
          p.ih.setWeightBias(quantizeWeight(mod[`weightIh${sfx}`], q), mod[`biasIh${sfx}`]);
          p.hh.setWeightBias(quantizeWeight(mod[`weightHh${sfx}`], q), mod[`biasHh${sfx}`]);
        }
      }
      return out;
    }
  }

  /** LSTM(inputSize, hiddenSize, {numLayers, bias, batchFirst, dropout, bidirectional, dtype: 'qint8'}). */
  class LSTM extends RNNBase {
    constructor(inputSize, hiddenSize, opts = {}) { super('LSTM', inputSize, hiddenSize, opts); }
    static fromFloat(mod, qconfig = null) { return RNNBase._fromFloat(LSTM, 'LSTM', mod, qconfig); }
  }
  /** GRU(inputSize, hiddenSize, {numLayers, bias, batchFirst, dropout, bidirectional, dtype: 'qint8'}). */
  class GRU extends RNNBase {
    constructor(inputSize, hiddenSize, opts = {}) { super('GRU', inputSize, hiddenSize, opts); }
    static fromFloat(mod, qconfig = null) { return RNNBase._fromFloat(GRU, 'GRU', mod, qconfig); }
  }
  return { LSTM, GRU, RNNBase };
};
