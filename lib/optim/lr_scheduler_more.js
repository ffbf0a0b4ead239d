// optim/lr_scheduler_more.js - the rest of kd.optim.lrScheduler (PyTorch 1.13): LambdaLR,
// MultiplicativeLR, ConstantLR, PolynomialLR, CyclicLR (triangular, triangular2, exp_range or
// a scaleFn; momentum cycling), CosineAnnealingWarmRestarts (fractional epochs) and
// ChainedScheduler, on the LRScheduler base of ./lr_scheduler.js (same argument conventions:
// PyTorch's positional order or camelCase names in a final options object). Functions given
// to a scheduler (lrLambda, scaleFn) are not part of its stateDict(), as in PyTorch.
'use strict';

const { setOwn } = require('../own_keys');

module.exports = (kd, Optimizer, base) => {
  const { err, typeErr } = Optimizer;
  const { LRScheduler } = base;
  const parse = LRScheduler._parse;
  const checkOptimizer = LRScheduler._checkOptimizer;
  const hidden = (o, k, v) => Object.defineProperty(o, k, { value: v, enumerable: false, writable: true, configurable: true });

  /** One function per group (a function, or an array of them). */
  function lambdasFor(optimizer, f) {
    const n = optimizer.paramGroups.length;
    if (!Array.isArray(f)) {
      if (typeof f !== 'function') throw typeErr('lrLambda must be a function or an array of functions');
      return Array(n).fill(f);
    }
    if (f.length !== n) throw err(`Expected ${n} lr_lambdas, but got ${f.length}`);
    f.forEach((x) => { if (typeof x !== 'function') throw typeErr('lrLambda must be a function or an array of functions'); });
    return f.slice();
  }

  /** LambdaLR and MultiplicativeLR: the functions stay out of the state dict; a function's own
   * enumerable properties (PyTorch: a callable object's __dict__) are saved in its place. */
  class LambdaBase extends LRScheduler {
    constructor(optimizer, args) {
      checkOptimizer(optimizer);
      const o = parse(['lrLambda'], args, { lastEpoch: -1, verbose: false });
      const lambdas = lambdasFor(optimizer, o.lrLambda);
      // the lambdas must exist before the base constructor's first step
      super(optimizer, o.lastEpoch, { verbose: o.verbose, _pending: lambdas });
    }
    get lrLambdas() { return this._lambdas; }
    stateDict() {
      const sd = super.stateDict();
      sd.lrLambdas = this._lambdas.map((f) => (Object.keys(f).length ? { ...f } : null));
      return sd;
    }
    loadStateDict(sd) {
      const { lrLambdas, ...rest } = sd;
      super.loadStateDict(rest);
      if (lrLambdas) lrLambdas.forEach((d, i) => { if (d) for (const [k, v] of Object.entries(d)) setOwn(this._lambdas[i], k, v); });
    }
    _initialStep() {
      if ('_pending' in this) { // the first time (SequentialLR runs it again)
        hidden(this, '_lambdas', this._pending);
        delete this._pending;
      }
      super._initialStep();
    }
  }

  class LambdaLR extends LambdaBase {
    /** new LambdaLR(optimizer, lrLambda, {lastEpoch = -1, verbose = false}): lr = initial lr * lrLambda(epoch). */
    constructor(optimizer, ...args) { super(optimizer, args); }
    getLr() { return this.baseLrs.map((b, i) => b * this._lambdas[i](this.lastEpoch)); }
  }

  class MultiplicativeLR extends LambdaBase {
    /** new MultiplicativeLR(optimizer, lrLambda, {lastEpoch = -1, verbose = false}): lr *= lrLambda(epoch). */
    constructor(optimizer, ...args) { super(optimizer, args); }
    getLr() {
      if (this.lastEpoch > 0) return this._groupLrs().map((lr, i) => lr * this._lambdas[i](this.lastEpoch));
      return this._groupLrs();
    }
  }

  class ConstantLR extends LRScheduler {
    /** new ConstantLR(optimizer, {factor = 1/3, totalIters = 5, lastEpoch = -1, verbose = false}) */
    constructor(optimizer, ...args) {
      const o = parse([], args, { factor: 1 / 3, totalIters: 5, lastEpoch: -1, verbose: false });
      if (o.factor > 1.0 || o.factor < 0) throw err('Constant multiplicative factor expected to be between 0 and 1.');
      checkOptimizer(optimizer);
      super(optimizer, o.lastEpoch, { factor: o.factor, totalIters: o.totalIters, verbose: o.verbose });
    }
    getLr() {
      const e = this.lastEpoch;
      if (e === 0) return this._groupLrs().map((lr) => lr * this.factor);
      if (e !== this.totalIters) return this._groupLrs();
      return this._groupLrs().map((lr) => lr * (1.0 / this.factor));
    }
    _closedFormLr() {
      return this.baseLrs.map((b) => b * (this.factor + (this.lastEpoch >= this.totalIters ? 1 : 0) * (1 - this.factor)));
    }
  }

  class PolynomialLR extends LRScheduler {
    /** new PolynomialLR(optimizer, {totalIters = 5, power = 1, lastEpoch = -1, verbose = false}) */
    constructor(optimizer, ...args) {
      const o = parse([], args, { totalIters: 5, power: 1.0, lastEpoch: -1, verbose: false });
      checkOptimizer(optimizer);
      super(optimizer, o.lastEpoch, { totalIters: o.totalIters, power: o.power, verbose: o.verbose });
    }
    getLr() {
      const { lastEpoch: e, totalIters: n } = this;
      if (e === 0 || e > n) return this._groupLrs();
      const decay = ((1.0 - e / n) / (1.0 - (e - 1) / n)) ** this.power;
      return this._groupLrs().map((lr) => lr * decay);
    }
    _closedFormLr() {
      return this.baseLrs.map((b) => b * (1.0 - Math.min(this.totalIters, this.lastEpoch) / this.totalIters) ** this.power);
    }
  }

  class CyclicLR extends LRScheduler {
    /** new CyclicLR(optimizer, baseLr, maxLr, {stepSizeUp = 2000, stepSizeDown = null,
     * mode = 'triangular', gamma = 1, scaleFn = null, scaleMode = 'cycle', cycleMomentum = true,
     * baseMomentum = 0.8, maxMomentum = 0.9, lastEpoch = -1, verbose = false}) */
    constructor(optimizer, ...args) {
      const o = parse(['baseLr', 'maxLr'], args, {
        stepSizeUp: 2000, stepSizeDown: null, mode: 'triangular', gamma: 1.0, scaleFn: null, scaleMode: 'cycle',
        cycleMomentum: true, baseMomentum: 0.8, maxMomentum: 0.9, lastEpoch: -1, verbose: false,
      });
      checkOptimizer(optimizer);
      const groups = optimizer.paramGroups;
      const format = (name, v) => {
        if (Array.isArray(v)) {
          if (v.length !== groups.length) throw err(`expected ${groups.length} values for ${name}, got ${v.length}`);
          return v.slice();
        }
        return groups.map(() => v);
      };
      const baseLrs = format('base_lr', o.baseLr);
      if (o.lastEpoch === -1) groups.forEach((g, i) => { g.lr = baseLrs[i]; });
      const maxLrs = format('max_lr', o.maxLr);
      const up = Number(o.stepSizeUp);
      const down = o.stepSizeDown !== null ? Number(o.stepSizeDown) : up;
      if (!['triangular', 'triangular2', 'exp_range'].includes(o.mode) && o.scaleFn === null) {
        throw err('mode is invalid and scale_fn is None');
      }
      if (o.scaleFn !== null && typeof o.scaleFn !== 'function') throw typeErr('scaleFn must be a function');
      const scaleMode = o.scaleFn === null ? (o.mode === 'exp_range' ? 'iterations' : 'cycle') : o.scaleMode;
      const f = { maxLrs, totalSize: up + down, stepRatio: up / (up + down), mode: o.mode, gamma: o.gamma, scaleMode,
        cycleMomentum: o.cycleMomentum, verbose: o.verbose };
      if (o.cycleMomentum) {
        if (!('momentum' in optimizer.defaults)) throw err('optimizer must support momentum with `cycle_momentum` option enabled');
        const baseM = format('base_momentum', o.baseMomentum);
        if (o.lastEpoch === -1) groups.forEach((g, i) => { g.momentum = baseM[i]; });
        f.baseMomentums = groups.map((g) => g.momentum);
        f.maxMomentums = format('max_momentum', o.maxMomentum);
      }
      super(optimizer, o.lastEpoch, { ...f, _scaleFnPending: o.scaleFn });
      this.baseLrs = baseLrs;
    }
    _initialStep() {
      if ('_scaleFnPending' in this) { // the first time (SequentialLR runs it again)
        hidden(this, '_scaleFnCustom', this._scaleFnPending);
        delete this._scaleFnPending;
      }
      super._initialStep();
    }
    scaleFn(x) {
      if (this._scaleFnCustom) return this._scaleFnCustom(x);
      if (this.mode === 'triangular') return 1.0;
      if (this.mode === 'triangular2') return 1 / (2.0 ** (x - 1));
      return this.gamma ** x;
    }
    getLr() {
      const e = this.lastEpoch;
      const cycle = Math.floor(1 + e / this.totalSize);
      const x = 1.0 + e / this.totalSize - cycle;
      const scale = x <= this.stepRatio ? x / this.stepRatio : (x - 1) / (this.stepRatio - 1);
      const arg = this.scaleMode === 'cycle' ? cycle : e;
      const lrs = this.baseLrs.map((b, i) => b + (this.maxLrs[i] - b) * scale * this.scaleFn(arg));
      if (this.cycleMomentum) {
        this.optimizer.paramGroups.forEach((g, i) => {
          g.momentum = this.maxMomentums[i] - (this.maxMomentums[i] - this.baseMomentums[i]) * scale * this.scaleFn(arg);
        });
      }
      return lrs;
    }
  }

  class CosineAnnealingWarmRestarts extends LRScheduler {
    /** new CosineAnnealingWarmRestarts(optimizer, T0, {TMult = 1, etaMin = 0, lastEpoch = -1,
     * verbose = false}); step(epoch) takes fractional epochs (epoch + batch / batches). */
    constructor(optimizer, ...args) {
      const o = parse(['T0'], args, { TMult: 1, etaMin: 0, lastEpoch: -1, verbose: false });
      if (!Number.isInteger(o.T0) || o.T0 <= 0) throw err(`Expected positive integer T_0, but got ${o.T0}`);
      if (!Number.isInteger(o.TMult) || o.TMult < 1) throw err(`Expected integer T_mult >= 1, but got ${o.TMult}`);
      checkOptimizer(optimizer);
      super(optimizer, o.lastEpoch, { T0: o.T0, Ti: o.T0, TMult: o.TMult, etaMin: o.etaMin, TCur: o.lastEpoch, verbose: o.verbose });
    }
    getLr() {
      return this.baseLrs.map((b) => this.etaMin + (b - this.etaMin) * (1 + Math.cos(Math.PI * this.TCur / this.Ti)) / 2);
    }
    /** step() advances one epoch; step(epoch) (not deprecated here) jumps to a possibly fractional epoch. */
    step(epoch) {
      if ((epoch === undefined || epoch === null) && this.lastEpoch < 0) epoch = 0;
      if (epoch === undefined || epoch === null) {
        epoch = this.lastEpoch + 1;
        this.TCur += 1;
        if (this.TCur >= this.Ti) {
          this.TCur -= this.Ti;
          this.Ti *= this.TMult;
        }
      } else {
        if (typeof epoch !== 'number' || Number.isNaN(epoch)) throw typeErr('epoch must be a number');
        if (epoch < 0) throw err(`Expected non-negative epoch, but got ${epoch}`);
        if (epoch >= this.T0) {
          if (this.TMult === 1) this.TCur = ((epoch % this.T0) + this.T0) % this.T0;
          else {
            const n = Math.trunc(Math.log(epoch / this.T0 * (this.TMult - 1) + 1) / Math.log(this.TMult));
            this.TCur = epoch - this.T0 * (this.TMult ** n - 1) / (this.TMult - 1);
            this.Ti = this.T0 * this.TMult ** n;
          }
        } else {
          this.Ti = this.T0;
          this.TCur = epoch;
        }
      }
      this.lastEpoch = Math.floor(epoch);
      const values = this.getLr();
      this.optimizer.paramGroups.forEach((g, i) => {
        g.lr = values[i];
        LRScheduler._printLr(this.verbose, i, values[i], epoch);
      });
      this._lastLr = this.optimizer.paramGroups.map((g) => g.lr);
    }
    _initialStep() {
      this._stepCount = 0;
      this.step();
    }
  }

  class ChainedScheduler {
    /** new ChainedScheduler(schedulers): steps every scheduler at each step(). */
    constructor(schedulers) {
      if (!Array.isArray(schedulers) || schedulers.length === 0) throw typeErr('ChainedScheduler expects a non-empty array of schedulers');
      for (let i = 1; i < schedulers.length; i++) {
        if (schedulers[i].optimizer !== schedulers[0].optimizer) {
          throw err('ChainedScheduler expects all schedulers to belong to the same optimizer, but ' +
            `got schedulers at index 0 and ${i} to be different`);
        }
      }
      hidden(this, '_schedulers', schedulers.slice());
      hidden(this, 'optimizer', schedulers[0].optimizer);
      this._lastLr = this.optimizer.paramGroups.map((g) => g.lr);
    }
    step() {
      for (const s of this._schedulers) s.step();
      this._lastLr = this.optimizer.paramGroups.map((g) => g.lr);
    }
    getLastLr() { return this._lastLr.slice(); }
    /** Its fields and each scheduler's state dict (as SequentialLR's). */
    stateDict() { return base.SequentialLR.prototype.stateDict.call(this); }
    loadStateDict(sd) { base.SequentialLR.prototype.loadStateDict.call(this, sd); }
  }

  return { LambdaLR, MultiplicativeLR, ConstantLR, PolynomialLR, CyclicLR, CosineAnnealingWarmRestarts, ChainedScheduler };
};
