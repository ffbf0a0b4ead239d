// rnn_cell.js - kd.nn.RNNCell, LSTMCell and GRUCell: one time step of the recurrent layers,
// with PyTorch 1.13's parameters (weight_ih [k*H, I], weight_hh [k*H, H], bias_ih, bias_hh),
// initialisation U(+-1/sqrt(hiddenSize)), unbatched (1-D) input and errors. The LSTM and GRU
// steps run their gate math as one native op (kd._internal.lstmCell / gruCell, differentiated
// by its backward op), after the two matrix products.
'use strict';

const { KindlingError, typeError } = require('../errors');

module.exports = function installRnnCells(kd, nn, { Module, ownedParameter, parseArgs }) {
  const F = kd.nn.functional;
  const I = kd._internal;
  const factory = (o) => ({ dtype: o.dtype || undefined, device: o.device || undefined });

  /** The shared base of the cells (PyTorch's RNNCellBase). */
  class RNNCellBase extends Module {
    constructor(what, o, chunks) {
      super();
      for (const k of ['inputSize', 'hiddenSize']) {
        if (!Number.isInteger(o[k]) || o[k] < 0) throw typeError(`${what}: ${k} must be a non-negative integer, got ${o[k]}`);
      }
      this.inputSize = o.inputSize;
      this.hiddenSize = o.hiddenSize;
      this.bias = !!o.bias;
      this.weightIh = ownedParameter(kd.empty([chunks * o.hiddenSize, o.inputSize], factory(o)));
      this.weightHh = ownedParameter(kd.empty([chunks * o.hiddenSize, o.hiddenSize], factory(o)));
      if (this.bias) {
        this.biasIh = ownedParameter(kd.empty([chunks * o.hiddenSize], factory(o)));
        this.biasHh = ownedParameter(kd.empty([chunks * o.hiddenSize], factory(o)));
      } else {
        this.registerParameter('biasIh', null);
        this.registerParameter('biasHh', null);
      }
      this.resetParameters();
    }

    resetParameters() {
      const stdv = this.hiddenSize > 0 ? 1 / Math.sqrt(this.hiddenSize) : 0;
      for (const w of this.parameters()) nn.init.uniform_(w, -stdv, stdv);
    }

    /** The input as 2-D (unbatched 1-D input gets a batch of one) and whether it was batched. */
    _input(input) {
      const name = this.constructor.name;
      if (!(input instanceof kd.Tensor)) throw typeError(`${name}.forward(): input must be a Tensor`);
      if (input.ndim !== 1 && input.ndim !== 2) {
        throw new KindlingError(`${name}: Expected input to be 1-D or 2-D but received ${input.ndim}-D tensor`, 'KD_SHAPE_MISMATCH');
      }
      const x = input.ndim === 2 ? input : input.unsqueeze(0);
      if (x.shape[1] !== this.inputSize) {
        throw new KindlingError(`input has inconsistent input_size: got ${x.shape[1]} expected ${this.inputSize}`, 'KD_SHAPE_MISMATCH');
      }
      return [x, input.ndim === 2];
    }

    /** A state given for input x (checked as PyTorch's check_rnn_cell_forward_hidden), or zeros. */
    _state(x, h, batched, label) {
      if (h === null || h === undefined) return kd.zeros([x.shape[0], this.hiddenSize], { dtype: x.dtype, device: x.device });
      if (!(h instanceof kd.Tensor)) throw typeError(`${this.constructor.name}.forward(): hx must be a Tensor`);
      const s = batched ? h : h.unsqueeze(0);
      if (s.ndim !== 2) {
        throw new KindlingError(`${this.constructor.name}: Expected hidden${label} to be ${batched ? 2 : 1}-D but received ${h.ndim}-D tensor`, 'KD_SHAPE_MISMATCH');
      }
      if (s.shape[0] !== x.shape[0]) {
        throw new KindlingError(`Input batch size ${x.shape[0]} doesn't match hidden${label} batch size ${s.shape[0]}`, 'KD_SHAPE_MISMATCH');
      }
      if (s.shape[1] !== this.hiddenSize) {
        throw new KindlingError(`hidden${label} has inconsistent hidden_size: got ${s.shape[1]}, expected ${this.hiddenSize}`, 'KD_SHAPE_MISMATCH');
      }
      return s;
    }

    extraRepr() {
      let s = `${this.inputSize}, ${this.hiddenSize}`;
      if (this.bias !== true) s += ', bias=False';
      if (this.nonlinearity !== undefined && this.nonlinearity !== 'tanh') s += `, nonlinearity=${this.nonlinearity}`;
      return s;
    }
  }

  const NAMES = ['inputSize', 'hiddenSize', 'bias'];
  const DEFAULTS = { bias: true, device: null, dtype: null };

  /**
   * h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (nonlinearity 'relu': relu).
   * RNNCell(inputSize, hiddenSize, bias = true, nonlinearity = 'tanh', {device, dtype}).
   */
  class RNNCell extends RNNCellBase {
    constructor(...args) {
      const o = parseArgs('RNNCell()', args, [...NAMES, 'nonlinearity'], { ...DEFAULTS, nonlinearity: 'tanh' });
      super('RNNCell()', o, 1);
      this.nonlinearity = o.nonlinearity;
    }
    forward(input, hx = null) {
      return kd.tidy(() => {
        const [x, batched] = this._input(input);
        const h = this._state(x, hx, batched, '');
        const pre = F.linear(x, this.weightIh, this.biasIh).add(F.linear(h, this.weightHh, this.biasHh));
        let y;
        if (this.nonlinearity === 'tanh') y = pre.tanh();
        else if (this.nonlinearity === 'relu') y = pre.relu();
        else throw new KindlingError(`Unknown nonlinearity: ${this.nonlinearity}`, 'KD_INVALID_ARGUMENT');
        return batched ? y : y.squeeze(0);
      });
    }
  }

  /** One LSTM step. LSTMCell(inputSize, hiddenSize, bias = true, {device, dtype}); forward(input, [h, c]?) -> [h', c']. */
  class LSTMCell extends RNNCellBase {
    constructor(...args) {
      super('LSTMCell()', parseArgs('LSTMCell()', args, NAMES, DEFAULTS), 4);
    }
    forward(input, hx = null) {
      if (hx !== null && hx !== undefined && (!Array.isArray(hx) || hx.length !== 2)) {
        throw typeError('LSTMCell.forward(): hx must be an array [h, c] of two Tensors');
      }
      return kd.tidy(() => {
        const [x, batched] = this._input(input);
        const h = this._state(x, hx ? hx[0] : null, batched, '0');
        const c = this._state(x, hx ? hx[1] : null, batched, '1');
        const gates = kd.addmm(F.linear(x, this.weightIh, this.biasIh), h, this.weightHh.t());
        const r = I.lstmCell(this.biasHh ? gates.add(this.biasHh) : gates, c);
        return batched ? [r[0], r[1]] : [r[0].squeeze(0), r[1].squeeze(0)];
      });
    }
  }

  /** One GRU step. GRUCell(inputSize, hiddenSize, bias = true, {device, dtype}); forward(input, h?) -> h'. */
  class GRUCell extends RNNCellBase {
    constructor(...args) {
      super('GRUCell()', parseArgs('GRUCell()', args, NAMES, DEFAULTS), 3);
    }
    forward(input, hx = null) {
      return kd.tidy(() => {
        const [x, batched] = this._input(input);
        const h = this._state(x, hx, batched, '');
        const [y] = I.gruCell(F.linear(x, this.weightIh, this.biasIh), F.linear(h, this.weightHh, this.biasHh), h);
        return batched ? y : y.squeeze(0);
      });
    }
  }

  Object.assign(nn, { RNNCellBase, RNNCell, LSTMCell, GRUCell });
};
