// activation_extra.js - the kd.nn activation modules of PyTorch 1.13 beyond activation.js: ELU,
// CELU, SELU, GLU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, ReLU6, LogSigmoid, Mish, PReLU
// (a learnable slope per channel), RReLU, Softplus, Softshrink, Softsign, Tanhshrink, Threshold,
// Softmin and Softmax2d: stateless wrappers of kd.nn.functional with PyTorch's constructor
// arguments, defaults and extraRepr.
'use strict';

const { KindlingError } = require('../errors');

module.exports = function installActivationExtra(kd, nn, { Module, parseArgs, ownedParameter }) {
  const F = kd.nn.functional;

  /** A number as Python prints a float: 1 -> '1.0', 0.5 -> '0.5'. */
  const pyFloat = (v) => (Number.isInteger(v) ? v.toFixed(1) : String(v));
  const inplaceStr = (m) => (m.inplace ? ', inplace=True' : '');

  // One module class: its arguments (names and defaults) become properties; forward(self, input)
  // and repr(self) give the rest.
  function make(name, names, defaults, forward, repr = null, check = null) {
    return {
      [name]: class extends Module {
        constructor(...args) {
          super();
          const o = parseArgs(`${name}()`, args, names, defaults);
          if (check) check(o);
          for (const k of names) this[k] = o[k];
        }
        forward(input) { return forward(this, input); }
        extraRepr() { return repr ? repr(this) : ''; }
      },
    }[name];
  }

  const ELU = make('ELU', ['alpha', 'inplace'], { alpha: 1.0, inplace: false },
    (m, x) => F.elu(x, m.alpha, m.inplace), (m) => `alpha=${pyFloat(m.alpha)}${inplaceStr(m)}`);
  const CELU = make('CELU', ['alpha', 'inplace'], { alpha: 1.0, inplace: false },
    (m, x) => F.celu(x, m.alpha, m.inplace), (m) => `alpha=${pyFloat(m.alpha)}${inplaceStr(m)}`);
  const SELU = make('SELU', ['inplace'], { inplace: false }, (m, x) => F.selu(x, m.inplace), (m) => (m.inplace ? 'inplace=True' : ''));
  const GLU = make('GLU', ['dim'], { dim: -1 }, (m, x) => F.glu(x, m.dim), (m) => `dim=${m.dim}`);
  const Hardshrink = make('Hardshrink', ['lambd'], { lambd: 0.5 }, (m, x) => F.hardshrink(x, m.lambd), (m) => pyFloat(m.lambd));
  const Softshrink = make('Softshrink', ['lambd'], { lambd: 0.5 }, (m, x) => F.softshrink(x, m.lambd), (m) => pyFloat(m.lambd));
  const Hardsigmoid = make('Hardsigmoid', ['inplace'], { inplace: false }, (m, x) => F.hardsigmoid(x, m.inplace));
  const Hardswish = make('Hardswish', ['inplace'], { inplace: false }, (m, x) => F.hardswish(x, m.inplace));
  const Hardtanh = make('Hardtanh', ['minVal', 'maxVal', 'inplace', 'minValue', 'maxValue'],
    { minVal: -1.0, maxVal: 1.0, inplace: false, minValue: null, maxValue: null },
    (m, x) => F.hardtanh(x, m.minVal, m.maxVal, m.inplace),
    (m) => `min_val=${pyFloat(m.minVal)}, max_val=${pyFloat(m.maxVal)}${inplaceStr(m)}`,
    (o) => {
      if (o.minValue !== null) o.minVal = o.minValue;
      if (o.maxValue !== null) o.maxVal = o.maxValue;
      if (!(o.maxVal > o.minVal)) throw new KindlingError(`Hardtanh(): maxVal (${o.maxVal}) must be greater than minVal (${o.minVal})`, 'KD_INVALID_ARGUMENT');
    });
  // PyTorch's ReLU6 is a Hardtanh(0, 6) (same attributes), with its own repr.
  class ReLU6 extends Hardtanh {
    constructor(...args) {
      const o = parseArgs('ReLU6()', args, ['inplace'], { inplace: false });
      super(0.0, 6.0, o.inplace);
    }
    extraRepr() { return this.inplace ? 'inplace=True' : ''; }
  }
  const LogSigmoid = make('LogSigmoid', [], {}, (m, x) => F.logsigmoid(x));
  const Mish = make('Mish', ['inplace'], { inplace: false }, (m, x) => F.mish(x, m.inplace), (m) => (m.inplace ? 'inplace=True' : ''));
  const Softplus = make('Softplus', ['beta', 'threshold'], { beta: 1, threshold: 20 },
    (m, x) => F.softplus(x, m.beta, m.threshold), (m) => `beta=${m.beta}, threshold=${m.threshold}`);
  const Softsign = make('Softsign', [], {}, (m, x) => F.softsign(x));
  const Tanhshrink = make('Tanhshrink', [], {}, (m, x) => F.tanhshrink(x));
  const Threshold = make('Threshold', ['threshold', 'value', 'inplace'], { inplace: false },
    (m, x) => F.threshold(x, m.threshold, m.value, m.inplace),
    (m) => `threshold=${pyFloat(m.threshold)}, value=${pyFloat(m.value)}${inplaceStr(m)}`);
  const RReLU = make('RReLU', ['lower', 'upper', 'inplace'], { lower: 1 / 8, upper: 1 / 3, inplace: false },
    (m, x) => F.rrelu(x, m.lower, m.upper, m.training, m.inplace),
    (m) => `lower=${m.lower}, upper=${m.upper}${inplaceStr(m)}`);
  const Softmin = make('Softmin', ['dim'], { dim: null }, (m, x) => F.softmin(x, m.dim), (m) => `dim=${m.dim === null ? 'None' : m.dim}`);
  /** softmax over the channels (dim -3) of (C, H, W) or (N, C, H, W) input. */
  const Softmax2d = make('Softmax2d', [], {}, (m, x) => {
    if (x.ndim !== 3 && x.ndim !== 4) throw new KindlingError('Softmax2d requires a 3D or 4D tensor as input', 'KD_SHAPE_MISMATCH');
    return F.softmax(x, -3);
  });

  /** x for x > 0, weight * x otherwise, with a learnable weight (one value, or one per channel).
   * PReLU(numParameters = 1, init = 0.25, {device, dtype}). */
  class PReLU extends Module {
    constructor(...args) {
      super();
      const o = parseArgs('PReLU()', args, ['numParameters', 'init'], { numParameters: 1, init: 0.25, device: null, dtype: null });
      if (!Number.isInteger(o.numParameters) || o.numParameters < 0) {
        throw new KindlingError(`PReLU(): numParameters must be a non-negative integer, got ${o.numParameters}`, 'KD_INVALID_ARGUMENT');
      }
      this.numParameters = o.numParameters;
      this.init = o.init;
      const opts = {};
      if (o.device) opts.device = o.device;
      if (o.dtype) opts.dtype = o.dtype;
      this.weight = ownedParameter(kd.full([o.numParameters], o.init, opts));
    }
    resetParameters() { kd.noGrad(() => this.weight.fill_(this.init)); }
    forward(input) { return F.prelu(input, this.weight); }
    extraRepr() { return `num_parameters=${this.numParameters}`; }
  }

  Object.assign(nn, {
    ELU, CELU, SELU, GLU, Hardshrink, Softshrink, Hardsigmoid, Hardswish, Hardtanh, ReLU6, LogSigmoid, Mish,
    Softplus, Softsign, Tanhshrink, Threshold, RReLU, Softmin, Softmax2d, PReLU,
  });
};
