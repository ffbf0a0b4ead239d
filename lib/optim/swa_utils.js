// optim/swa_utils.js - kd.optim.swaUtils (PyTorch 1.13's torch.optim.swa_utils): stochastic
// weight averaging. AveragedModel keeps a deep copy of a model whose parameters (and buffers
// with useBuffers) are the running average of the model's (or any avgFn: EMA, ...);
// SWALR anneals each group's lr to its swaLr ('cos' or 'linear') and then holds it;
// updateBn(loader, model) recomputes BatchNorm running statistics with one pass over the data.
'use strict';

module.exports = (kd, sched) => {
  const { LRScheduler } = sched;
  const parse = LRScheduler._parse;
  const err = (m) => new kd.KindlingError(m, 'KD_INVALID_ARGUMENT');
  const typeErr = (m) => new kd.KindlingTypeError(m, 'KD_INVALID_TYPE');
  const { Module } = kd.nn;
  // PyTorch's _BatchNorm: the common base class of BatchNorm1d, BatchNorm2d, ...
  const BatchNormBase = Object.getPrototypeOf(kd.nn.BatchNorm2d.prototype).constructor;

  /** The default average: avg + (x - avg) / (n + 1) (n: a one-element int64 tensor). */
  const meanAvg = (avg, x, n) => avg.add(x.sub(avg).div(n.add(1)));

  class AveragedModel extends Module {
    /** new AveragedModel(model, {device = null, avgFn = null, useBuffers = false}); avgFn(avgParam,
     * modelParam, numAveraged) returns the new average (numAveraged: an int64 tensor). */
    constructor(model, ...args) {
      super();
      if (!(model instanceof Module)) throw typeErr('AveragedModel(model): model must be a kd.nn.Module');
      const o = parse([], args, { device: null, avgFn: null, useBuffers: false });
      if (o.avgFn !== null && typeof o.avgFn !== 'function') throw typeErr('avgFn must be a function');
      let m = kd.nn._copyModule(model);
      if (o.device !== null) m = m.to({ device: o.device });
      this.module = m;
      this.registerBuffer('nAveraged', kd.tensor(0, { dtype: 'int64', device: o.device || undefined }));
      Object.defineProperty(this, 'avgFn', { value: o.avgFn || meanAvg, writable: true, enumerable: false });
      this.useBuffers = o.useBuffers;
    }

    forward(...args) { return this.module(...args); }

    /** Folds model's current parameters (and buffers with useBuffers) into the average. */
    updateParameters(model) {
      const mine = this.useBuffers ? [...this.module.parameters(), ...this.module.buffers()] : [...this.parameters()];
      const theirs = this.useBuffers ? [...model.parameters(), ...model.buffers()] : [...model.parameters()];
      kd.noGrad(() => kd.tidy(() => {
        const first = this.nAveraged.item() === 0;
        const n = Math.min(mine.length, theirs.length); // zip()
        for (let i = 0; i < n; i++) {
          const pSwa = mine[i];
          const pModel = theirs[i].detach().to({ device: pSwa.device });
          if (first) pSwa.detach().copy_(pModel);
          else pSwa.detach().copy_(this.avgFn(pSwa.detach(), pModel, this.nAveraged.to({ device: pSwa.device })));
        }
        this.nAveraged.add_(1);
      }));
    }
  }

  /** Recomputes the running statistics of every BatchNorm of model from the batches of loader
   * (an iterable of tensors, or of arrays whose first element is the input). */
  function updateBn(loader, model, device = null) {
    if (device !== null && typeof device === 'object') ({ device = null } = device);
    const momenta = new Map();
    kd.noGrad(() => {
      for (const m of model.modules()) {
        if (m instanceof BatchNormBase) {
          if (m.runningMean === null) continue; // trackRunningStats false: nothing to update
          m.runningMean = kd.zerosLike(m.runningMean);
          m.runningVar = kd.onesLike(m.runningVar);
          momenta.set(m, m.momentum);
        }
      }
    });
    if (momenta.size === 0) return;
    const wasTraining = model.training;
    model.train();
    kd.noGrad(() => {
      for (const m of momenta.keys()) {
        m.momentum = null;
        m.numBatchesTracked.mul_(0);
      }
      for (let input of loader) {
        if (Array.isArray(input)) input = input[0];
        kd.tidy(() => {
          model(device !== null ? input.to({ device }) : input);
        });
      }
    });
    for (const [m, mom] of momenta) m.momentum = mom;
    model.train(wasTraining);
  }

  class SWALR extends LRScheduler {
    /** new SWALR(optimizer, swaLr, {annealEpochs = 10, annealStrategy = 'cos', lastEpoch = -1}) */
    constructor(optimizer, ...args) {
      const o = parse(['swaLr'], args, { annealEpochs: 10, annealStrategy: 'cos', lastEpoch: -1, verbose: false });
      LRScheduler._checkOptimizer(optimizer);
      const groups = optimizer.paramGroups;
      let swaLrs;
      if (Array.isArray(o.swaLr)) {
        if (o.swaLr.length !== groups.length) {
          throw err(`swa_lr must have the same length as optimizer.param_groups: swa_lr has ${o.swaLr.length}, ` +
            `optimizer.param_groups has ${groups.length}`);
        }
        swaLrs = o.swaLr.slice();
      } else swaLrs = groups.map(() => o.swaLr);
      groups.forEach((g, i) => { g.swaLr = swaLrs[i]; });
      if (o.annealStrategy !== 'cos' && o.annealStrategy !== 'linear') {
        throw err(`anneal_strategy must by one of 'cos' or 'linear', instead got ${o.annealStrategy}`);
      }
      if (!Number.isInteger(o.annealEpochs) || o.annealEpochs < 0) {
        throw err(`anneal_epochs must be equal or greater than 0, got ${o.annealEpochs}`);
      }
      super(optimizer, o.lastEpoch, { annealStrategy: o.annealStrategy, annealEpochs: o.annealEpochs, verbose: o.verbose });
    }
    _anneal(t) { return this.annealStrategy === 'cos' ? (1 - Math.cos(Math.PI * t)) / 2 : t; }
    getLr() {
      let step = this._stepCount - 1;
      if (this.annealEpochs === 0) step = Math.max(1, step);
      const initial = (lr, swaLr, alpha) => (alpha === 1 ? swaLr : (lr - alpha * swaLr) / (1 - alpha));
      const prevAlpha = this._anneal(Math.max(0, Math.min(1, (step - 1) / Math.max(1, this.annealEpochs))));
      const alpha = this._anneal(Math.max(0, Math.min(1, step / Math.max(1, this.annealEpochs))));
      return this.optimizer.paramGroups.map((g) => g.swaLr * alpha + initial(g.lr, g.swaLr, prevAlpha) * (1 - alpha));
    }
  }

  return { AveragedModel, SWALR, updateBn };
};
