// activation.js - kd.nn activation modules (ReLU, LeakyReLU, GELU, SiLU, Tanh, Sigmoid, Softmax,
// LogSoftmax) and Dropout: stateless wrappers of kd.nn.functional. `inplace` options use the
// in-place op where kindling has one.
'use strict';

const { KindlingError } = require('../errors');

module.exports = function installActivation(kd, nn, { Module, parseArgs }) {
  const F = kd.nn.functional;

  /** max(x, 0). ReLU(inplace = false). */
  class ReLU extends Module {
    constructor(...args) { super(); this.inplace = parseArgs('ReLU()', args, ['inplace'], { inplace: false }).inplace; }
    forward(input) { return this.inplace ? input.relu_() : F.relu(input); }
    extraRepr() { return this.inplace ? 'inplace=True' : ''; }
  }
  /** x for x > 0, negativeSlope * x otherwise. LeakyReLU(negativeSlope = 0.01, inplace = false). */
  class LeakyReLU extends Module {
    constructor(...args) {
      super();
      const o = parseArgs('LeakyReLU()', args, ['negativeSlope', 'inplace'], { negativeSlope: 0.01, inplace: false });
      this.negativeSlope = o.negativeSlope;
      this.inplace = o.inplace;
    }
    forward(input) { return this.inplace ? input.leakyRelu_(this.negativeSlope) : F.leakyRelu(input, this.negativeSlope); }
    extraRepr() { return `negative_slope=${this.negativeSlope}${this.inplace ? ', inplace=True' : ''}`; }
  }
  /** x * Phi(x); GELU(approximate = 'none' | 'tanh'). */
  class GELU extends Module {
    constructor(...args) {
      super();
      this.approximate = parseArgs('GELU()', args, ['approximate'], { approximate: 'none' }).approximate;
    }
    forward(input) { return F.gelu(input, { approximate: this.approximate }); }
    extraRepr() { return `approximate='${this.approximate}'`; }
  }
  /** x * sigmoid(x). SiLU(inplace = false). */
  class SiLU extends Module {
    constructor(...args) { super(); this.inplace = parseArgs('SiLU()', args, ['inplace'], { inplace: false }).inplace; }
    forward(input) { return this.inplace ? input.silu_() : F.silu(input); }
    extraRepr() { return this.inplace ? 'inplace=True' : ''; }
  }
  /** tanh(x). */
  class Tanh extends Module { forward(input) { return F.tanh(input); } }
  /** 1 / (1 + e^-x). */
  class Sigmoid extends Module { forward(input) { return F.sigmoid(input); } }

  // PyTorch's _get_softmax_dim for dim=None (legacy): 0 for 0-, 1- and 3-D input, else 1.
  const softmaxDim = (ndim) => (ndim === 0 || ndim === 1 || ndim === 3 ? 0 : 1);
  /** softmax along dim. Softmax(dim = null). */
  class Softmax extends Module {
    constructor(...args) { super(); this.dim = parseArgs('Softmax()', args, ['dim'], { dim: null }).dim; }
    forward(input) { return F.softmax(input, this.dim === null ? softmaxDim(input.ndim) : this.dim); }
    extraRepr() { return `dim=${this.dim === null ? 'None' : this.dim}`; }
  }
  /** logSoftmax along dim. LogSoftmax(dim = null). */
  class LogSoftmax extends Module {
    constructor(...args) { super(); this.dim = parseArgs('LogSoftmax()', args, ['dim'], { dim: null }).dim; }
    forward(input) { return F.logSoftmax(input, this.dim === null ? softmaxDim(input.ndim) : this.dim); }
    extraRepr() { return `dim=${this.dim === null ? 'None' : this.dim}`; }
  }

  /** In training mode zeroes elements with probability p and scales the rest by 1/(1-p);
   * the identity in eval mode. Dropout(p = 0.5, inplace = false). */
  class Dropout extends Module {
    constructor(...args) {
      super();
      const o = parseArgs('Dropout()', args, ['p', 'inplace'], { p: 0.5, inplace: false });
      if (typeof o.p !== 'number' || !(o.p >= 0 && o.p <= 1)) {
        throw new KindlingError(`dropout probability has to be between 0 and 1, but got ${o.p}`, 'KD_INVALID_ARGUMENT');
      }
      this.p = o.p;
      this.inplace = o.inplace;
    }
    forward(input) {
      const out = F.dropout(input, this.p, this.training);
      if (this.inplace && out !== input && this.training) return input.copy_(out);
      return out;
    }
    extraRepr() { return `p=${this.p}, inplace=${this.inplace ? 'True' : 'False'}`; }
  }

  Object.assign(nn, { ReLU, LeakyReLU, GELU, SiLU, Tanh, Sigmoid, Softmax, LogSoftmax, Dropout });
};
