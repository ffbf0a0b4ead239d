// optim/lr_scheduler.js - kd.optim.lrScheduler (PyTorch 1.13's torch.optim.lr_scheduler):
// StepLR, MultiStepLR, ExponentialLR, CosineAnnealingLR, LinearLR, OneCycleLR,
// ReduceLROnPlateau, SequentialLR, with PyTorch's (chainable, recursive) formulas so the lr
// sequences match step for step. Arguments: PyTorch's positional order after the optimizer,
// or by camelCase name in a final options object: `new StepLR(opt, 30, {gamma: 0.5})`,
// `new StepLR(opt, {stepSize: 30})`. Group keys the schedulers add are camelCased
// (initialLr, maxLr, minLr, maxMomentum, baseMomentum). Schedulers only touch group
// hyperparameters (plain numbers): no tensors here.
'use strict';

const { setOwn } = require('../own_keys');

module.exports = (kd, Optimizer) => {
  const { err, typeErr } = Optimizer;

  const isOptions = (x) => x !== null && typeof x === 'object' && !Array.isArray(x) &&
    (Object.getPrototypeOf(x) === Object.prototype || Object.getPrototypeOf(x) === null);
  /** Positional args (PyTorch's order) and a final options object -> one object of names. */
  function parse(names, args, defaults) {
    const a = Array.from(args);
    const opts = a.length && isOptions(a[a.length - 1]) ? a.pop() : {}; // no positional argument is a plain object
    if (a.length > names.length) throw typeErr(`expected at most ${names.length} arguments after the optimizer`);
    const out = { ...defaults };
    names.forEach((n, i) => { if (a[i] !== undefined) out[n] = a[i]; });
    for (const [k, v] of Object.entries(opts)) {
      if (!(k in defaults) && !names.includes(k)) throw typeErr(`unexpected option '${k}'`);
      if (v !== undefined) out[k] = v;
    }
    for (const n of names) if (out[n] === undefined) throw typeErr(`missing required argument '${n}'`);
    return out;
  }
  const checkOptimizer = (o) => {
    if (!(o instanceof Optimizer)) throw typeErr(`${o && o.constructor ? o.constructor.name : typeof o} is not an Optimizer`);
  };
  const bisectRight = (a, x) => { let i = 0; while (i < a.length && a[i] <= x) i++; return i; };
  const pymod = (a, b) => ((a % b) + b) % b;
  const omit = (o, k) => { const r = { ...o }; delete r[k]; return r; };
  /** Python's '{:.4e}'. */
  const fmt4e = (x) => x.toExponential(4).replace(/e([+-])(\d)$/, 'e$10$2');
  /** PyTorch's print_lr (verbose schedulers). */
  function printLr(verbose, group, lr, epoch) {
    if (!verbose) return;
    if (epoch === undefined || epoch === null) console.log(`Adjusting learning rate of group ${group} to ${fmt4e(lr)}.`);
    else {
      const e = Number.isInteger(epoch) ? String(epoch).padStart(5, '0') : epoch.toFixed(2);
      console.log(`Epoch ${e}: adjusting learning rate of group ${group} to ${fmt4e(lr)}.`);
    }
  }
  const EPOCH_DEPRECATION_WARNING = 'The epoch parameter in `scheduler.step()` was not necessary and is being ' +
    'deprecated where possible. Please use `scheduler.step()` to step the scheduler. During the deprecation, if ' +
    'epoch is different from None, the closed form is used instead of the new chainable form, where available. ' +
    'Please open an issue if you are unable to replicate your use case: ' +
    'https://github.com/pytorch/pytorch/issues/new/choose.';
  let epochWarned = false;
  /** Warns once per process that step(epoch) is deprecated (PyTorch's UserWarning). */
  function warnEpoch() {
    if (epochWarned) return;
    epochWarned = true;
    process.emitWarning(EPOCH_DEPRECATION_WARNING, { type: 'DeprecationWarning', code: 'KD_LR_SCHEDULER_EPOCH' });
  }

  class LRScheduler {
    /** fields: the subclass's settings, set before the first step(). */
    constructor(optimizer, lastEpoch = -1, fields = {}) {
      checkOptimizer(optimizer);
      Object.assign(this, fields);
      Object.defineProperty(this, 'optimizer', { value: optimizer, enumerable: false, writable: true });
      if (lastEpoch === -1) {
        for (const g of optimizer.paramGroups) if (g.initialLr === undefined) g.initialLr = g.lr;
      } else {
        optimizer.paramGroups.forEach((g, i) => {
          if (g.initialLr === undefined) {
            throw err(`param 'initial_lr' is not specified in param_groups[${i}] when resuming an optimizer`);
          }
        });
      }
      this.baseLrs = optimizer.paramGroups.map((g) => g.initialLr);
      this.lastEpoch = lastEpoch;
      this._initialStep();
    }
    _initialStep() {
      this._stepCount = 0;
      this.step();
    }
    /** Advances one epoch. `step(epoch)` (deprecated, as in PyTorch: warns once) jumps to
     * `epoch`, using the closed form where there is one. */
    step(epoch) {
      if (epoch !== undefined && epoch !== null) warnEpoch();
      this._stepTo(epoch);
    }
    _stepTo(epoch) {
      this._stepCount += 1;
      let values;
      if (epoch === undefined || epoch === null) {
        this.lastEpoch += 1;
        values = this.getLr();
      } else {
        this.lastEpoch = epoch;
        values = this._closedFormLr ? this._closedFormLr() : this.getLr();
      }
      this.optimizer.paramGroups.forEach((g, i) => {
        g.lr = values[i];
        printLr(this.verbose, i, values[i], epoch);
      });
      this._lastLr = this.optimizer.paramGroups.map((g) => g.lr);
    }
    /** The lrs the last step() set, one per group. */
    getLastLr() { return this._lastLr.slice(); }
    /** The scheduler's state (everything but the optimizer). */
    // Keys may come from a file (a checkpoint): See Note [Keys from files] in lib/own_keys.js.
    stateDict() {
      const sd = {};
      for (const [k, v] of Object.entries(this)) setOwn(sd, k, Array.isArray(v) ? v.slice() : v);
      return sd;
    }
    loadStateDict(sd) {
      for (const [k, v] of Object.entries(sd)) setOwn(this, k, Array.isArray(v) ? v.slice() : v);
    }
    _groupLrs() { return this.optimizer.paramGroups.map((g) => g.lr); }
  }

  class StepLR extends LRScheduler {
    /** new StepLR(optimizer, stepSize, {gamma = 0.1, lastEpoch = -1}) */
    constructor(optimizer, ...args) {
      const o = parse(['stepSize'], args, { gamma: 0.1, lastEpoch: -1, verbose: false });
      super(optimizer, o.lastEpoch, omit(o, 'lastEpoch'));
    }
    getLr() {
      if (this.lastEpoch === 0 || this.lastEpoch % this.stepSize !== 0) return this._groupLrs();
      return this._groupLrs().map((lr) => lr * this.gamma);
    }
    _closedFormLr() {
      return this.baseLrs.map((b) => b * this.gamma ** Math.floor(this.lastEpoch / this.stepSize));
    }
  }

  class MultiStepLR extends LRScheduler {
    /** new MultiStepLR(optimizer, milestones, {gamma = 0.1, lastEpoch = -1}) */
    constructor(optimizer, ...args) {
      const o = parse(['milestones'], args, { gamma: 0.1, lastEpoch: -1, verbose: false });
      if (!Array.isArray(o.milestones)) throw typeErr('milestones must be an array of integers');
      o.milestones = o.milestones.slice().sort((a, b) => a - b);
      checkOptimizer(optimizer);
      super(optimizer, o.lastEpoch, omit(o, 'lastEpoch'));
    }
    getLr() {
      const count = this.milestones.filter((m) => m === this.lastEpoch).length;
      if (count === 0) return this._groupLrs();
      return this._groupLrs().map((lr) => lr * this.gamma ** count);
    }
    _closedFormLr() {
      return this.baseLrs.map((b) => b * this.gamma ** bisectRight(this.milestones, this.lastEpoch));
    }
  }

  class ExponentialLR extends LRScheduler {
    /** new ExponentialLR(optimizer, gamma, {lastEpoch = -1}) */
    constructor(optimizer, ...args) {
      const o = parse(['gamma'], args, { lastEpoch: -1, verbose: false });
      checkOptimizer(optimizer);
      super(optimizer, o.lastEpoch, omit(o, 'lastEpoch'));
    }
    getLr() {
      if (this.lastEpoch === 0) return this._groupLrs();
      return this._groupLrs().map((lr) => lr * this.gamma);
    }
    _closedFormLr() { return this.baseLrs.map((b) => b * this.gamma ** this.lastEpoch); }
  }

  class CosineAnnealingLR extends LRScheduler {
    /** new CosineAnnealingLR(optimizer, TMax, {etaMin = 0, lastEpoch = -1}) */
    constructor(optimizer, ...args) {
      const o = parse(['TMax'], args, { etaMin: 0, lastEpoch: -1, verbose: false });
      checkOptimizer(optimizer);
      super(optimizer, o.lastEpoch, omit(o, 'lastEpoch'));
    }
    getLr() {
      const { lastEpoch: e, TMax: T, etaMin } = this;
      const groups = this.optimizer.paramGroups;
      if (e === 0) return this._groupLrs();
      if (this._stepCount === 1 && e > 0) {
        return this.baseLrs.map((b) => etaMin + (b - etaMin) * (1 + Math.cos(e * Math.PI / T)) / 2);
      }
      if (pymod(e - 1 - T, 2 * T) === 0) {
        return groups.map((g, i) => g.lr + (this.baseLrs[i] - etaMin) * (1 - Math.cos(Math.PI / T)) / 2);
      }
      return groups.map((g) => (1 + Math.cos(Math.PI * e / T)) / (1 + Math.cos(Math.PI * (e - 1) / T)) * (g.lr - etaMin) + etaMin);
    }
    _closedFormLr() {
      return this.baseLrs.map((b) => this.etaMin + (b - this.etaMin) * (1 + Math.cos(Math.PI * this.lastEpoch / this.TMax)) / 2);
    }
  }

  class LinearLR extends LRScheduler {
    /** new LinearLR(optimizer, {startFactor = 1/3, endFactor = 1, totalIters = 5, lastEpoch = -1}) */
    constructor(optimizer, ...args) {
      const o = parse([], args, { startFactor: 1 / 3, endFactor: 1.0, totalIters: 5, lastEpoch: -1, verbose: false });
      if (o.startFactor > 1.0 || o.startFactor <= 0) {
        throw err('Starting multiplicative factor expected to be greater than 0 and less or equal to 1.');
      }
      if (o.endFactor > 1.0 || o.endFactor < 0) throw err('Ending multiplicative factor expected to be between 0 and 1.');
      checkOptimizer(optimizer);
      super(optimizer, o.lastEpoch, omit(o, 'lastEpoch'));
    }
    getLr() {
      const { lastEpoch: e, startFactor: s, endFactor: f, totalIters: n } = this;
      if (e === 0) return this._groupLrs().map((lr) => lr * s);
      if (e > n) return this._groupLrs();
      return this._groupLrs().map((lr) => lr * (1 + (f - s) / (n * s + (e - 1) * (f - s))));
    }
    _closedFormLr() {
      const { lastEpoch: e, startFactor: s, endFactor: f, totalIters: n } = this;
      return this.baseLrs.map((b) => b * (s + (f - s) * Math.min(n, e) / n));
    }
  }

  class OneCycleLR extends LRScheduler {
    /** new OneCycleLR(optimizer, maxLr, {totalSteps, epochs, stepsPerEpoch, pctStart = 0.3,
     * annealStrategy = 'cos', cycleMomentum = true, baseMomentum = 0.85, maxMomentum = 0.95,
     * divFactor = 25, finalDivFactor = 1e4, threePhase = false, lastEpoch = -1}) */
    constructor(optimizer, ...args) {
      const o = parse(['maxLr'], args, {
        totalSteps: null, epochs: null, stepsPerEpoch: null, pctStart: 0.3, annealStrategy: 'cos', cycleMomentum: true,
        baseMomentum: 0.85, maxMomentum: 0.95, divFactor: 25, finalDivFactor: 1e4, threePhase: false, lastEpoch: -1, verbose: false,
      });
      checkOptimizer(optimizer);
      const posInt = (v) => Number.isInteger(v) && v > 0;
      if (o.totalSteps === null && o.epochs === null && o.stepsPerEpoch === null) {
        throw err('You must define either total_steps OR (epochs AND steps_per_epoch)');
      }
      let total;
      if (o.totalSteps !== null) {
        if (!posInt(o.totalSteps)) throw err(`Expected positive integer total_steps, but got ${o.totalSteps}`);
        total = o.totalSteps;
      } else {
        if (!posInt(o.epochs)) throw err(`Expected positive integer epochs, but got ${o.epochs}`);
        if (!posInt(o.stepsPerEpoch)) throw err(`Expected positive integer steps_per_epoch, but got ${o.stepsPerEpoch}`);
        total = o.epochs * o.stepsPerEpoch;
      }
      if (typeof o.pctStart !== 'number' || o.pctStart < 0 || o.pctStart > 1) {
        throw err(`Expected float between 0 and 1 pct_start, but got ${o.pctStart}`);
      }
      if (o.annealStrategy !== 'cos' && o.annealStrategy !== 'linear') {
        throw err(`anneal_strategy must by one of 'cos' or 'linear', instead got ${o.annealStrategy}`);
      }
      const groups = optimizer.paramGroups;
      const perGroup = (name, v) => {
        if (Array.isArray(v)) {
          if (v.length !== groups.length) throw err(`expected ${groups.length} values for ${name}, got ${v.length}`);
          return v.slice();
        }
        return groups.map(() => v);
      };
      const maxLrs = perGroup('max_lr', o.maxLr);
      if (o.lastEpoch === -1) {
        groups.forEach((g, i) => {
          g.initialLr = maxLrs[i] / o.divFactor;
          g.maxLr = maxLrs[i];
          g.minLr = g.initialLr / o.finalDivFactor;
        });
      }
      let useBeta1 = false;
      if (o.cycleMomentum) {
        const d = optimizer.defaults;
        if (!('momentum' in d) && !('betas' in d)) throw err('optimizer must support momentum with `cycle_momentum` option enabled');
        useBeta1 = 'betas' in d;
        const maxM = perGroup('max_momentum', o.maxMomentum);
        const baseM = perGroup('base_momentum', o.baseMomentum);
        if (o.lastEpoch === -1) {
          groups.forEach((g, i) => {
            if (useBeta1) g.betas = [maxM[i], ...g.betas.slice(1)];
            else g.momentum = maxM[i];
            g.maxMomentum = maxM[i];
            g.baseMomentum = baseM[i];
          });
        }
      }
      const p = o.pctStart;
      const phases = o.threePhase ? [
        { endStep: p * total - 1, startLr: 'initialLr', endLr: 'maxLr', startMomentum: 'maxMomentum', endMomentum: 'baseMomentum' },
        { endStep: 2 * p * total - 2, startLr: 'maxLr', endLr: 'initialLr', startMomentum: 'baseMomentum', endMomentum: 'maxMomentum' },
        { endStep: total - 1, startLr: 'initialLr', endLr: 'minLr', startMomentum: 'maxMomentum', endMomentum: 'maxMomentum' },
      ] : [
        { endStep: p * total - 1, startLr: 'initialLr', endLr: 'maxLr', startMomentum: 'maxMomentum', endMomentum: 'baseMomentum' },
        { endStep: total - 1, startLr: 'maxLr', endLr: 'minLr', startMomentum: 'baseMomentum', endMomentum: 'maxMomentum' },
      ];
      super(optimizer, o.lastEpoch, {
        verbose: o.verbose, totalSteps: total, _schedulePhases: phases, annealStrategy: o.annealStrategy, cycleMomentum: o.cycleMomentum, useBeta1: useBeta1,
      });
    }
    getLr() {
      const step = this.lastEpoch;
      if (step > this.totalSteps) {
        throw err(`Tried to step ${step + 1} times. The specified number of total steps is ${this.totalSteps}`);
      }
      const anneal = this.annealStrategy === 'cos'
        ? (a, b, pct) => b + (a - b) / 2.0 * (Math.cos(Math.PI * pct) + 1)
        : (a, b, pct) => (b - a) * pct + a;
      return this.optimizer.paramGroups.map((g) => {
        let start = 0;
        let lr;
        let mom;
        for (let i = 0; i < this._schedulePhases.length; i++) {
          const ph = this._schedulePhases[i];
          if (step <= ph.endStep || i === this._schedulePhases.length - 1) {
            const pct = (step - start) / (ph.endStep - start);
            lr = anneal(g[ph.startLr], g[ph.endLr], pct);
            if (this.cycleMomentum) mom = anneal(g[ph.startMomentum], g[ph.endMomentum], pct);
            break;
          }
          start = ph.endStep;
        }
        if (this.cycleMomentum) {
          if (this.useBeta1) g.betas = [mom, ...g.betas.slice(1)];
          else g.momentum = mom;
        }
        return lr;
      });
    }
  }

  class ReduceLROnPlateau {
    /** new ReduceLROnPlateau(optimizer, {mode = 'min', factor = 0.1, patience = 10, threshold = 1e-4,
     * thresholdMode = 'rel', cooldown = 0, minLr = 0, eps = 1e-8}); step(metric) after each epoch. */
    constructor(optimizer, ...args) {
      const o = parse([], args, {
        mode: 'min', factor: 0.1, patience: 10, threshold: 1e-4, thresholdMode: 'rel', cooldown: 0, minLr: 0, eps: 1e-8,
        verbose: false,
      });
      if (o.factor >= 1.0) throw err('Factor should be < 1.0.');
      checkOptimizer(optimizer);
      Object.defineProperty(this, 'optimizer', { value: optimizer, enumerable: false, writable: true });
      const n = optimizer.paramGroups.length;
      if (Array.isArray(o.minLr)) {
        if (o.minLr.length !== n) throw err(`expected ${n} min_lrs, got ${o.minLr.length}`);
        this.minLrs = o.minLr.slice();
      } else this.minLrs = Array(n).fill(o.minLr);
      if (o.mode !== 'min' && o.mode !== 'max') throw err(`mode ${o.mode} is unknown!`);
      if (o.thresholdMode !== 'rel' && o.thresholdMode !== 'abs') throw err(`threshold mode ${o.thresholdMode} is unknown!`);
      Object.assign(this, { factor: o.factor, patience: o.patience, cooldown: o.cooldown, cooldownCounter: 0, mode: o.mode,
        threshold: o.threshold, thresholdMode: o.thresholdMode, eps: o.eps, lastEpoch: 0, verbose: o.verbose });
      this.modeWorse = o.mode === 'min' ? Infinity : -Infinity;
      this.best = this.modeWorse;
      this.numBadEpochs = 0;
      this._lastLr = optimizer.paramGroups.map((g) => g.lr);
    }
    _isBetter(a, best) {
      const t = this.threshold;
      if (this.mode === 'min') return this.thresholdMode === 'rel' ? a < best * (1 - t) : a < best - t;
      return this.thresholdMode === 'rel' ? a > best * (t + 1) : a > best + t;
    }
    get inCooldown() { return this.cooldownCounter > 0; }
    /** One epoch's metric (a number or a one-element tensor). */
    step(metrics, epoch) {
      const current = typeof metrics === 'number' ? metrics : Number(metrics.item());
      if (epoch !== undefined && epoch !== null) warnEpoch();
      this.lastEpoch = epoch === undefined || epoch === null ? this.lastEpoch + 1 : epoch;
      if (this._isBetter(current, this.best)) { this.best = current; this.numBadEpochs = 0; } else this.numBadEpochs += 1;
      if (this.inCooldown) { this.cooldownCounter -= 1; this.numBadEpochs = 0; }
      if (this.numBadEpochs > this.patience) {
        this.optimizer.paramGroups.forEach((g, i) => {
          const old = g.lr;
          const nl = Math.max(old * this.factor, this.minLrs[i]);
          if (old - nl > this.eps) {
            g.lr = nl;
            if (this.verbose) console.log(`Epoch ${String(this.lastEpoch).padStart(5, '0')}: reducing learning rate of group ${i} to ${fmt4e(nl)}.`);
          }
        });
        this.cooldownCounter = this.cooldown;
        this.numBadEpochs = 0;
      }
      this._lastLr = this.optimizer.paramGroups.map((g) => g.lr);
    }
    getLastLr() { return this._lastLr.slice(); }
    stateDict() { return LRScheduler.prototype.stateDict.call(this); }
    loadStateDict(sd) { LRScheduler.prototype.loadStateDict.call(this, sd); }
  }

  class SequentialLR {
    /** new SequentialLR(optimizer, schedulers, milestones, {lastEpoch = -1}) */
    constructor(optimizer, ...args) {
      const o = parse(['schedulers', 'milestones'], args, { lastEpoch: -1, verbose: false });
      checkOptimizer(optimizer);
      const { schedulers, milestones } = o;
      schedulers.forEach((s, i) => {
        if (s.optimizer !== optimizer) {
          throw err('Sequential Schedulers expects all schedulers to belong to the same optimizer, but ' +
            `got schedulers at index ${i} to be different than the optimizer passed in.`);
        }
      });
      if (milestones.length !== schedulers.length - 1) {
        throw err('Sequential Schedulers expects number of schedulers provided to be one more than the number of ' +
          `milestone points, but got number of schedulers ${schedulers.length} and the number of milestones to be ` +
          `equal to ${milestones.length}`);
      }
      Object.defineProperty(this, 'optimizer', { value: optimizer, enumerable: false, writable: true });
      Object.defineProperty(this, '_schedulers', { value: schedulers, enumerable: false, writable: true });
      this._milestones = milestones.slice();
      this.lastEpoch = o.lastEpoch + 1;
      for (const g of optimizer.paramGroups) g.lr = g.initialLr;
      for (const s of schedulers) s.lastEpoch -= 1;
      schedulers[0]._initialStep();
      this._lastLr = schedulers[0].getLastLr();
    }
    step() {
      this.lastEpoch += 1;
      const idx = bisectRight(this._milestones, this.lastEpoch);
      const s = this._schedulers[idx];
      if (idx > 0 && this._milestones[idx - 1] === this.lastEpoch) s._stepTo(0);
      else s.step();
      this._lastLr = s.getLastLr();
    }
    getLastLr() { return this._lastLr.slice(); }
    stateDict() {
      const sd = LRScheduler.prototype.stateDict.call(this);
      sd._schedulers = this._schedulers.map((s) => s.stateDict());
      return sd;
    }
    loadStateDict(sd) {
      const { _schedulers: inner, ...rest } = sd;
      LRScheduler.prototype.loadStateDict.call(this, rest);
      if (inner) inner.forEach((s, i) => this._schedulers[i].loadStateDict(s));
    }
  }

  LRScheduler._parse = parse;
  LRScheduler._checkOptimizer = checkOptimizer;
  LRScheduler._printLr = printLr;
  LRScheduler._warnEpoch = warnEpoch;
  return {
    LRScheduler, StepLR, MultiStepLR, ExponentialLR, CosineAnnealingLR, LinearLR, OneCycleLR, ReduceLROnPlateau, SequentialLR,
  };
};
