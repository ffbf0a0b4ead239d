// distributions.js - kd.distributions: torch.distributions' Distribution base and Categorical
// (PyTorch 1.13, camelCased), what policy-gradient programs use:
//
//   const m = new kd.distributions.Categorical(probs);     // or new Categorical({ logits })
//   const action = m.sample();                             // int64, batchShape (or sampleShape + batchShape)
//   const logp = m.logProb(action);                        // differentiable in probs / logits
//   m.entropy(), m.probs, m.logits, m.mode, m.batchShape, m.eventShape, m.enumerateSupport()
//
// As in PyTorch: probs are normalised along the last dim (probs / probs.sum(-1)), logits
// are made log-probabilities (logits - logits.logsumexp(-1)); the other parameter is derived on
// first use (softmax of logits; log of probs clamped to [eps, 1 - eps]). Arguments are validated
// by default (Distribution.setDefaultValidateArgs(false) or {validateArgs: false} turns it off):
// probs must be a simplex (non-negative, summing to 1 after normalisation), logits finite or
// -inf, and logProb's values integers in [0, numEvents), with PyTorch's ValueError messages (as
// KD_INVALID_ARGUMENT errors). Sampling uses kd.multinomial (kindling's generator, so the
// draws differ from PyTorch's for the same seed).
'use strict';

const { KindlingError, typeError } = require('./errors');

const valueError = (msg) => new KindlingError(msg, 'KD_INVALID_ARGUMENT');
const sizeStr = (shape) => `torch.Size([${shape.join(', ')}])`;

module.exports = function makeDistributions(kd) {
  let defaultValidate = true;

  class Distribution {
    /** batchShape, eventShape (arrays); validateArgs (default: Distribution's default, true). */
    constructor(batchShape = [], eventShape = [], validateArgs = null) {
      this._batchShape = batchShape.slice();
      this._eventShape = eventShape.slice();
      this._validateArgs = validateArgs === null || validateArgs === undefined ? defaultValidate : !!validateArgs;
    }
    static setDefaultValidateArgs(value) {
      if (typeof value !== 'boolean') throw typeError('setDefaultValidateArgs(value): value must be a boolean');
      defaultValidate = value;
    }
    get batchShape() { return this._batchShape.slice(); }
    get eventShape() { return this._eventShape.slice(); }
    /** sampleShape + batchShape + eventShape. */
    _extendedShape(sampleShape = []) { return [...sampleShape, ...this._batchShape, ...this._eventShape]; }
    /** A sample without gradient (PyTorch's sample() runs under no_grad). */
    sample() { throw new KindlingError(`${this.constructor.name}.sample() is not implemented`, 'KD_NOT_SUPPORTED'); }
    toString() { return `${this.constructor.name}()`; }
  }

  function sampleShapeOf(s) {
    if (s === undefined || s === null) return [];
    if (typeof s === 'number') s = [s];
    if (!Array.isArray(s) || !s.every((d) => Number.isInteger(d) && d >= 0)) throw typeError('sample(sampleShape): sampleShape must be an array of non-negative integers');
    return s;
  }

  class Categorical extends Distribution {
    /** new Categorical(probs) or new Categorical({probs | logits, validateArgs}); probs/logits: [..., numEvents]. */
    constructor(probs, logits, validateArgs) {
      let opts = {};
      if (probs !== null && typeof probs === 'object' && Object.getPrototypeOf(probs) === Object.prototype) { opts = probs; probs = undefined; }
      probs = probs !== undefined ? probs : opts.probs;
      logits = logits !== undefined ? logits : opts.logits;
      validateArgs = validateArgs !== undefined ? validateArgs : opts.validateArgs;
      const given = (x) => x !== undefined && x !== null;
      if (given(probs) === given(logits)) throw valueError('Either `probs` or `logits` must be specified, but not both.');
      const param = given(probs) ? probs : logits;
      const name = given(probs) ? 'probs' : 'logits';
      if (!(param instanceof kd.Tensor)) throw typeError(`Categorical: ${name} must be a Tensor`);
      if (param.ndim < 1) throw valueError(`\`${name}\` parameter must be at least one-dimensional.`);
      const normalised = given(probs) ? probs.div(probs.sum(-1, true)) : logits.sub(logits.logsumexp(-1, true));
      const shape = param.shape;
      super(shape.slice(0, -1), [], validateArgs);
      this._numEvents = shape[shape.length - 1];
      this._probs = given(probs) ? normalised : null;
      this._logits = given(probs) ? null : normalised;
      this._param = normalised;
      if (this._validateArgs) this._checkParam(name, param, normalised);
    }

    _checkParam(name, raw, value) {
      const ok = kd.noGrad(() => {
        if (name === 'probs') {
          const nonneg = value.ge(0).all().item();
          const sums = value.sum(-1).sub(1).abs().le(1e-6).all().item();
          return nonneg && sums;
        }
        return value.isfinite().logicalOr(value.eq(-Infinity)).all().item();
      });
      if (!ok) {
        const constraint = name === 'probs' ? 'Simplex()' : 'IndependentConstraint(Real(), 1)';
        throw valueError(`Expected parameter ${name} (Tensor of shape (${raw.shape.join(', ')})) of distribution ${this} ` +
          `to satisfy the constraint ${constraint}, but found invalid values:\n${value}`);
      }
    }

    get probs() {
      if (this._probs === null) this._probs = kd.softmax(this._logits, -1);
      return this._probs;
    }
    get logits() {
      if (this._logits === null) {
        const eps = this._probs.dtype === 'float64' ? 2.220446049250313e-16 : (this._probs.dtype === 'float32' ? 1.1920928955078125e-7 : 0.0009765625);
        this._logits = this._probs.clamp(eps, 1 - eps).log();
      }
      return this._logits;
    }
    get paramShape() { return this._param.shape; }
    get mean() { return kd.full(this._extendedShape(), NaN, { dtype: this.probs.dtype, device: this.probs.device }); }
    get variance() { return this.mean; }
    get mode() { return this.probs.argmax(-1); }
    get support() { return { lowerBound: 0, upperBound: this._numEvents - 1 }; }

    /** Integer samples of shape sampleShape + batchShape (int64). */
    sample(sampleShape) {
      const s = sampleShapeOf(sampleShape);
      const n = s.reduce((a, b) => a * b, 1);
      return kd.noGrad(() => {
        const probs2d = this.probs.reshape(-1, this._numEvents);
        const samples2d = kd.multinomial(probs2d, n, true).t();
        return samples2d.reshape(this._extendedShape(s));
      });
    }

    /** log P(value), value integers broadcasting against batchShape. */
    logProb(value) {
      if (!(value instanceof kd.Tensor)) throw typeError('logProb(value): value must be a Tensor');
      if (this._validateArgs) this._validateSample(value);
      let v = value.long().unsqueeze(-1);
      let logPmf;
      [v, logPmf] = kd.broadcastTensors(v, this.logits);
      v = v.narrow(-1, 0, 1);
      return logPmf.gather(-1, v).squeeze(-1);
    }

    _validateSample(value) {
      const actual = value.shape;
      const expected = this._batchShape;
      for (let i = 1; i <= Math.min(actual.length, expected.length); i++) {
        const a = actual[actual.length - i], e = expected[expected.length - i];
        if (a !== 1 && e !== 1 && a !== e) throw valueError(`Value is not broadcastable with batch_shape+event_shape: ${sizeStr(actual)} vs ${sizeStr(expected)}.`);
      }
      const ok = kd.noGrad(() => value.eq(value.floor()).logicalAnd(value.ge(0)).logicalAnd(value.le(this._numEvents - 1)).all().item());
      if (!ok) {
        throw valueError(`Expected value argument (Tensor of shape (${actual.join(', ')})) to be within the support ` +
          `(IntegerInterval(lower_bound=0, upper_bound=${this._numEvents - 1})) of the distribution ${this}, but found invalid values:\n${value}`);
      }
    }

    entropy() {
      const minReal = this.logits.dtype === 'float64' ? -Number.MAX_VALUE : -3.4028234663852886e38;
      const logits = this.logits.clamp({ min: minReal });
      const pLogP = logits.mul(this.probs);
      return pLogP.sum(-1).neg();
    }

    /** The values 0..numEvents-1, shaped [numEvents, 1, ...] and expanded over batchShape unless expand is false. */
    enumerateSupport(expand = true) {
      let values = kd.arange(this._numEvents, { dtype: 'int64', device: this._param.device });
      values = values.view(-1, ...this._batchShape.map(() => 1));
      return expand ? values.expand(-1, ...this._batchShape) : values;
    }

    toString() { return `Categorical(${this._probs !== null && this._logits === null ? 'probs' : 'logits'}: ${sizeStr(this._param.shape)})`; }
  }

  return { Distribution, Categorical };
};
