// rnn.js - kd.nn.RNN, LSTM and GRU: multi-layer, optionally bidirectional recurrent layers
// with PyTorch 1.13's constructor, parameters (named as its state dict: weight_ih_l0,
// weight_hh_l0, bias_ih_l0, bias_hh_l0, *_reverse, weight_hr_l0 for an LSTM's projection; the
// properties are their camelCase forms, weightIhL0, ...), initialisation U(+-1/sqrt(hiddenSize)),
// input forms (padded [T, B, I], batchFirst [B, T, I], unbatched [T, I], a PackedSequence),
// initial states, inter-layer dropout and errors. Each layer and direction runs through
// ./rnn_layer.js (one input GEMM, a fused native step per time step, one autograd node).
'use strict';

const { KindlingError, typeError } = require('../errors');

module.exports = function installRnn(kd, nn, { Module, ownedParameter, parseArgs }) {
  const F = kd.nn.functional;
  const { runLayer } = require('./rnn_layer')(kd);
  const { PackedSequence } = nn.utils.rnn;
  const factory = (o) => ({ dtype: o.dtype || undefined, device: o.device || undefined });
  const camel = (name) => name.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
  const tuple = (a) => `(${a.join(', ')}${a.length === 1 ? ',' : ''})`;
  const py = (v) => (v === true ? 'True' : v === false ? 'False' : String(v));

  function checkSize(v, what, min) {
    if (!Number.isInteger(v)) throw typeError(`${what} should be of type int, got: ${typeof v}`);
    if (v < min) throw new KindlingError(`${what} must be greater than ${min === 1 ? 'zero' : 'or equal to zero'}`, 'KD_INVALID_ARGUMENT');
  }

  const NAMES = ['inputSize', 'hiddenSize', 'numLayers', 'bias', 'batchFirst', 'dropout', 'bidirectional'];
  const DEFAULTS = { numLayers: 1, bias: true, batchFirst: false, dropout: 0, bidirectional: false, device: null, dtype: null };

  /** The shared base of RNN, LSTM and GRU (PyTorch's RNNBase). */
  class RNNBase extends Module {
    constructor(mode, o) {
      super();
      const lstm = mode === 'LSTM';
      const gateSize = { LSTM: 4, GRU: 3, RNN_TANH: 1, RNN_RELU: 1 }[mode];
      if (gateSize === undefined) throw new KindlingError(`Unrecognized RNN mode: ${mode}`, 'KD_INVALID_ARGUMENT');
      checkSize(o.inputSize, 'input_size', 0);
      checkSize(o.hiddenSize, 'hidden_size', 1);
      checkSize(o.numLayers, 'num_layers', 1);
      const d = o.dropout;
      if (typeof d !== 'number' || !(d >= 0 && d <= 1)) {
        throw new KindlingError('dropout should be a number in range [0, 1] representing the probability of an element being zeroed', 'KD_INVALID_ARGUMENT');
      }
      if (d > 0 && o.numLayers === 1) {
        process.emitWarning(`dropout option adds dropout after all but last recurrent layer, so non-zero dropout expects num_layers greater than 1, but got dropout=${d} and num_layers=${o.numLayers}`);
      }
      const proj = lstm ? o.projSize : 0;
      if (!Number.isInteger(proj)) throw typeError(`proj_size should be of type int, got: ${typeof proj}`);
      if (proj < 0) throw new KindlingError('proj_size should be a positive integer or zero to disable projections', 'KD_INVALID_ARGUMENT');
      if (proj >= o.hiddenSize) throw new KindlingError('proj_size has to be smaller than hidden_size', 'KD_INVALID_ARGUMENT');
      this.mode = mode;
      this.inputSize = o.inputSize;
      this.hiddenSize = o.hiddenSize;
      this.numLayers = o.numLayers;
      this.bias = !!o.bias;
      this.batchFirst = !!o.batchFirst;
      this.dropout = d;
      this.bidirectional = !!o.bidirectional;
      this.projSize = proj;
      const dirs = this.bidirectional ? 2 : 1;
      const H = o.hiddenSize;
      const real = proj > 0 ? proj : H;
      const names = [];
      const all = [];
      for (let layer = 0; layer < o.numLayers; layer++) {
        for (let dir = 0; dir < dirs; dir++) {
          const inSize = layer === 0 ? o.inputSize : real * dirs;
          const sfx = dir === 1 ? '_reverse' : '';
          const shapes = [[`weight_ih_l${layer}${sfx}`, [gateSize * H, inSize]], [`weight_hh_l${layer}${sfx}`, [gateSize * H, real]]];
          if (this.bias) shapes.push([`bias_ih_l${layer}${sfx}`, [gateSize * H]], [`bias_hh_l${layer}${sfx}`, [gateSize * H]]);
          if (proj > 0) shapes.push([`weight_hr_l${layer}${sfx}`, [proj, H]]);
          for (const [name, shape] of shapes) this[camel(name)] = ownedParameter(kd.empty(shape, factory(o)));
          names.push(...shapes.map((s) => s[0]));
          all.push(shapes.map((s) => s[0]));
        }
      }
      Object.defineProperty(this, '_flatWeightsNames', { value: names, enumerable: false });
      Object.defineProperty(this, '_allWeights', { value: all, enumerable: false });
      this.resetParameters();
    }

    /** Every parameter U(-1/sqrt(hiddenSize), 1/sqrt(hiddenSize)), as PyTorch. */
    resetParameters() {
      const stdv = this.hiddenSize > 0 ? 1 / Math.sqrt(this.hiddenSize) : 0;
      for (const w of this.parameters()) nn.init.uniform_(w, -stdv, stdv);
    }

    /** The parameters per layer and direction, in PyTorch's order. */
    get allWeights() { return this._allWeights.map((ns) => ns.map((n) => this[camel(n)])); }
    /** The parameters in PyTorch's flat order (weight_ih, weight_hh, bias_ih, bias_hh, weight_hr per layer and direction). */
    get _flatWeights() { return this._flatWeightsNames.map((n) => this[camel(n)]); }
    /** A no-op, as PyTorch's on the CPU (the weights are used where they are). */
    flattenParameters() {}

    _checkInput(input, packed) {
      const want = packed ? 2 : 3;
      if (input.ndim !== want) throw new KindlingError(`input must have ${want} dimensions, got ${input.ndim}`, 'KD_SHAPE_MISMATCH');
      const last = input.shape[input.ndim - 1];
      if (this.inputSize !== last) {
        throw new KindlingError(`input.size(-1) must be equal to input_size. Expected ${this.inputSize}, got ${last}`, 'KD_SHAPE_MISMATCH');
      }
    }

    _checkHidden(h, expected, label) {
      if (!(h instanceof kd.Tensor)) throw typeError(`${label === null ? 'hx' : `hx[${label}]`} must be a Tensor`);
      if (h.ndim !== 3 || h.shape.some((v, i) => v !== expected[i])) {
        const what = label === null ? 'hidden size' : `hidden[${label}] size`;
        throw new KindlingError(`Expected ${what} ${tuple(expected)}, got [${h.shape.join(', ')}]`, 'KD_SHAPE_MISMATCH');
      }
    }

    /**
     * input [T, B, inputSize] (batchFirst: [B, T, inputSize]), [T, inputSize] unbatched, or a
     * PackedSequence; hx the initial state [numLayers * dirs, B, Hout] (LSTM: [h0, c0]; default
     * zeros). Returns [output, hN] (LSTM: [output, [hN, cN]]); output is a PackedSequence for
     * one.
     */
    forward(input, hx = null) {
      const lstm = this.mode === 'LSTM';
      const packed = input instanceof PackedSequence;
      if (!packed && !(input instanceof kd.Tensor)) throw typeError(`${this.constructor.name}.forward(): input must be a Tensor or a PackedSequence`);
      if (lstm && hx !== null && hx !== undefined && (!Array.isArray(hx) || hx.length !== 2)) {
        throw typeError('LSTM.forward(): hx must be an array [h0, c0] of two Tensors');
      }
      if (!lstm && hx !== null && hx !== undefined && !(hx instanceof kd.Tensor)) throw typeError(`${this.constructor.name}.forward(): hx must be a Tensor`);
      const r = kd.tidy(() => this._run(input, hx === undefined ? null : hx, packed));
      if (packed) {
        const out = new PackedSequence(r[0], input.batchSizes, input.sortedIndices, input.unsortedIndices);
        return lstm ? [out, [r[1], r[2]]] : [out, r[1]];
      }
      return lstm ? [r[0], [r[1], r[2]]] : [r[0], r[1]];
    }

    _run(input, hx, packed) {
      const lstm = this.mode === 'LSTM';
      const dirs = this.bidirectional ? 2 : 1;
      const H = this.hiddenSize;
      const Hr = this.projSize > 0 ? this.projSize : H;
      let x;
      let bs;
      let isBatched = true;
      const batchDim = this.batchFirst ? 0 : 1;
      let maxBatch;
      let sorted = null;
      let unsorted = null;
      if (packed) {
        x = input.data;
        bs = input.batchSizes.arraySync();
        sorted = input.sortedIndices;
        unsorted = input.unsortedIndices;
        maxBatch = bs.length ? bs[0] : 0;
      } else {
        x = input;
        isBatched = x.ndim === 3;
        if (!isBatched) {
          x = x.unsqueeze(batchDim);
          if (hx !== null) {
            const dims = lstm ? [hx[0].ndim, hx[1].ndim] : [hx.ndim];
            if (dims.some((n) => n !== 2)) {
              throw new KindlingError(lstm
                ? `For unbatched 2-D input, hx and cx should also be 2-D but got (${dims[0]}-D, ${dims[1]}-D) tensors`
                : `For unbatched 2-D input, hx should also be 2-D but got ${dims[0]}-D tensor`, 'KD_SHAPE_MISMATCH');
            }
            hx = lstm ? [hx[0].unsqueeze(1), hx[1].unsqueeze(1)] : hx.unsqueeze(1);
          }
        } else if (hx !== null) {
          const dims = lstm ? [hx[0].ndim, hx[1].ndim] : [hx.ndim];
          if (dims.some((n) => n !== 3)) {
            throw new KindlingError(lstm
              ? `For batched 3-D input, hx and cx should also be 3-D but got (${dims[0]}-D, ${dims[1]}-D) tensors`
              : `For batched 3-D input, hx should also be 3-D but got ${dims[0]}-D tensor`, 'KD_SHAPE_MISMATCH');
          }
        }
        maxBatch = x.ndim >= 2 ? x.shape[batchDim] : 0;
      }
      let h0;
      let c0 = null;
      if (hx === null) {
        h0 = kd.zeros([this.numLayers * dirs, maxBatch, Hr], { dtype: x.dtype, device: x.device });
        if (lstm) c0 = kd.zeros([this.numLayers * dirs, maxBatch, H], { dtype: x.dtype, device: x.device });
      } else if (lstm) {
        [h0, c0] = hx;
        if (sorted !== null) { h0 = h0.indexSelect(1, sorted); c0 = c0.indexSelect(1, sorted); }
      } else {
        h0 = sorted !== null ? hx.indexSelect(1, sorted) : hx;
      }
      this._checkInput(x, packed);
      this._checkHidden(h0, [this.numLayers * dirs, maxBatch, Hr], lstm ? 0 : null);
      if (lstm) this._checkHidden(c0, [this.numLayers * dirs, maxBatch, H], 1);

      let T = 0;
      if (!packed) {
        if (this.batchFirst) x = x.transpose(0, 1);
        T = x.shape[0];
        if (T === 0) throw new KindlingError('Expected sequence length to be larger than 0 in RNN', 'KD_INVALID_ARGUMENT');
        bs = new Array(T).fill(maxBatch);
        x = x.reshape([T * maxBatch, this.inputSize]);
      }
      const hs = [];
      const cs = [];
      let layerIn = x;
      for (let layer = 0; layer < this.numLayers; layer++) {
        const outs = [];
        for (let dir = 0; dir < dirs; dir++) {
          const sfx = dir === 1 ? 'Reverse' : '';
          const p = (n) => this[`${n}L${layer}${sfx}`];
          const w = {
            wIh: p('weightIh'), wHh: p('weightHh'), bIh: this.bias ? p('biasIh') : null, bHh: this.bias ? p('biasHh') : null,
            wHr: this.projSize > 0 ? p('weightHr') : null,
          };
          const k = layer * dirs + dir;
          const [out, hN, cN] = runLayer(this.mode, layerIn, h0.select(0, k), lstm ? c0.select(0, k) : null, w, bs, dir === 1);
          outs.push(out);
          hs.push(hN);
          if (lstm) cs.push(cN);
        }
        layerIn = dirs === 1 ? outs[0] : kd.cat(outs, 1);
        if (this.dropout > 0 && this.training && layer < this.numLayers - 1) layerIn = F.dropout(layerIn, this.dropout, true);
      }
      let hN = kd.stack(hs);
      let cN = lstm ? kd.stack(cs) : null;
      let output = layerIn;
      if (packed) {
        if (unsorted !== null) {
          hN = hN.indexSelect(1, unsorted);
          if (lstm) cN = cN.indexSelect(1, unsorted);
        }
      } else {
        output = output.reshape([T, maxBatch, dirs * Hr]);
        if (this.batchFirst) output = output.transpose(0, 1);
        if (!isBatched) {
          output = output.squeeze(batchDim);
          hN = hN.squeeze(1);
          if (lstm) cN = cN.squeeze(1);
        }
      }
      return lstm ? [output, hN, cN] : [output, hN];
    }

    extraRepr() {
      let s = `${this.inputSize}, ${this.hiddenSize}`;
      if (this.projSize !== 0) s += `, proj_size=${this.projSize}`;
      if (this.numLayers !== 1) s += `, num_layers=${this.numLayers}`;
      if (this.bias !== true) s += `, bias=${py(this.bias)}`;
      if (this.batchFirst !== false) s += `, batch_first=${py(this.batchFirst)}`;
      if (this.dropout !== 0) s += `, dropout=${Number.isInteger(this.dropout) ? `${this.dropout}.0` : this.dropout}`; // a Python float
      if (this.bidirectional !== false) s += `, bidirectional=${py(this.bidirectional)}`;
      return s;
    }
  }

  /**
   * Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (nonlinearity 'relu': relu).
   * RNN(inputSize, hiddenSize, numLayers = 1, bias = true, batchFirst = false, dropout = 0,
   * bidirectional = false, {nonlinearity = 'tanh', device, dtype}).
   */
  class RNN extends RNNBase {
    constructor(...args) {
      const last = args[args.length - 1];
      if (last && typeof last === 'object' && !Array.isArray(last) && 'projSize' in last) {
        throw new KindlingError('proj_size argument is only supported for LSTM, not RNN or GRU', 'KD_INVALID_ARGUMENT');
      }
      const o = parseArgs('RNN()', args, NAMES, { ...DEFAULTS, nonlinearity: 'tanh' });
      const mode = o.nonlinearity === 'tanh' ? 'RNN_TANH' : o.nonlinearity === 'relu' ? 'RNN_RELU' : null;
      if (mode === null) throw new KindlingError(`Unknown nonlinearity '${o.nonlinearity}'`, 'KD_INVALID_ARGUMENT');
      super(mode, o);
      this.nonlinearity = o.nonlinearity;
    }
  }

  /**
   * Long short-term memory. LSTM(inputSize, hiddenSize, numLayers = 1, bias = true,
   * batchFirst = false, dropout = 0, bidirectional = false, projSize = 0, {device, dtype}).
   * forward(input, [h0, c0]?) -> [output, [hN, cN]].
   */
  class LSTM extends RNNBase {
    constructor(...args) {
      super('LSTM', parseArgs('LSTM()', args, [...NAMES, 'projSize'], { ...DEFAULTS, projSize: 0 }));
    }
  }

  /**
   * Gated recurrent unit. GRU(inputSize, hiddenSize, numLayers = 1, bias = true, batchFirst =
   * false, dropout = 0, bidirectional = false, {device, dtype}).
   */
  class GRU extends RNNBase {
    constructor(...args) {
      const last = args[args.length - 1];
      if (last && typeof last === 'object' && !Array.isArray(last) && 'projSize' in last) {
        throw new KindlingError('proj_size argument is only supported for LSTM, not RNN or GRU', 'KD_INVALID_ARGUMENT');
      }
      super('GRU', parseArgs('GRU()', args, NAMES, DEFAULTS));
    }
  }

  Object.assign(nn, { RNNBase, RNN, LSTM, GRU });
};
