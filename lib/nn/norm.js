// norm.js - kd.nn normalisation modules: BatchNorm1d, BatchNorm2d, BatchNorm3d (running statistics as
// buffers running_mean / running_var / num_batches_tracked, momentum or a cumulative average
// when momentum is null, batch statistics in training mode), LayerNorm and GroupNorm, over
// kd.nn.functional. Affine weights start at 1, biases at 0.
'use strict';

const { KindlingError } = require('../errors');

module.exports = function installNorm(kd, nn, base) {
  const { Module, ownedParameter, parseArgs } = base;
  const F = kd.nn.functional;
  const factory = (o) => ({ dtype: o.dtype || undefined, device: o.device || undefined });
  const py = (b) => (b ? 'True' : 'False');
  // Python's float repr for small numbers: 1e-05, not 0.00001
  const pyNum = (v) => (v !== 0 && Math.abs(v) < 1e-4 ? v.toExponential().replace(/e([+-])(\d)$/, 'e$10$2') : String(v));

  // PyTorch's _NormBase: the affine parameters and running statistics of batch and instance
  // normalisation (InstanceNorm*d in norm_instance.js extend it, with affine and
  // trackRunningStats off by default).
  class NormBase extends Module {
    constructor(what, args, defaults = { affine: true, trackRunningStats: true }) {
      super();
      const o = parseArgs(what, args, ['numFeatures', 'eps', 'momentum', 'affine', 'trackRunningStats'],
        { eps: 1e-5, momentum: 0.1, ...defaults, device: null, dtype: null });
      this.numFeatures = o.numFeatures;
      this.eps = o.eps;
      this.momentum = o.momentum;
      this.affine = o.affine;
      this.trackRunningStats = o.trackRunningStats;
      if (o.affine) {
        this.weight = ownedParameter(kd.ones([o.numFeatures], factory(o)));
        this.bias = ownedParameter(kd.zeros([o.numFeatures], factory(o)));
      } else {
        this.registerParameter('weight', null);
        this.registerParameter('bias', null);
      }
      if (o.trackRunningStats) {
        this.registerBuffer('runningMean', kd.zeros([o.numFeatures], factory(o)));
        this.registerBuffer('runningVar', kd.ones([o.numFeatures], factory(o)));
        this.registerBuffer('numBatchesTracked', kd.tensor(0, { dtype: 'int64', device: o.device || undefined }));
      } else {
        this.registerBuffer('runningMean', null);
        this.registerBuffer('runningVar', null);
        this.registerBuffer('numBatchesTracked', null);
      }
    }
    /** Running statistics back to mean 0, variance 1, no batches. */
    resetRunningStats() {
      if (!this.trackRunningStats) return;
      kd.noGrad(() => { this.runningMean.zero_(); this.runningVar.fill_(1); this.numBatchesTracked.zero_(); });
    }
    resetParameters() {
      this.resetRunningStats();
      if (this.affine) kd.noGrad(() => { this.weight.fill_(1); this.bias.zero_(); });
    }
    extraRepr() {
      return `${this.numFeatures}, eps=${pyNum(this.eps)}, momentum=${this.momentum === null ? 'None' : this.momentum}, affine=${py(this.affine)}, track_running_stats=${py(this.trackRunningStats)}`;
    }
  }
  base.NormBase = NormBase;

  class BatchNormNd extends NormBase {
    forward(input) {
      this._checkInputDim(input);
      return this._batchNorm(input);
    }
    // PyTorch's _BatchNorm.forward after the input check; beforeNorm(bnTraining), when given, runs
    // just before normalising (SyncBatchNorm's check for a process group: sync_batchnorm.js)
    _batchNorm(input, beforeNorm = null) {
      let factor = this.momentum === null ? 0.0 : this.momentum;
      if (this.training && this.trackRunningStats && this.numBatchesTracked !== null) {
        kd.noGrad(() => this.numBatchesTracked.add_(1));
        if (this.momentum === null) factor = 1.0 / this.numBatchesTracked.item();
      }
      const bnTraining = this.training || (this.runningMean === null && this.runningVar === null);
      const useRunning = !this.training || this.trackRunningStats;
      if (beforeNorm !== null) beforeNorm(bnTraining);
      return F.batchNorm(input, useRunning ? this.runningMean : null, useRunning ? this.runningVar : null,
        this.weight, this.bias, bnTraining, factor, this.eps);
    }
  }

  base.BatchNormNd = BatchNormNd;

  /** Batch normalisation of (N, C) or (N, C, L). BatchNorm1d(numFeatures, eps=1e-5, momentum=0.1, affine=true, trackRunningStats=true). */
  class BatchNorm1d extends BatchNormNd {
    constructor(...args) { super('BatchNorm1d()', args); }
    _checkInputDim(input) {
      if (input.ndim !== 2 && input.ndim !== 3) {
        throw new KindlingError(`expected 2D or 3D input (got ${input.ndim}D input)`, 'KD_SHAPE_MISMATCH');
      }
    }
  }
  /** Batch normalisation of (N, C, H, W). BatchNorm2d(numFeatures, eps=1e-5, momentum=0.1, affine=true, trackRunningStats=true). */
  class BatchNorm2d extends BatchNormNd {
    constructor(...args) { super('BatchNorm2d()', args); }
    _checkInputDim(input) {
      if (input.ndim !== 4) throw new KindlingError(`expected 4D input (got ${input.ndim}D input)`, 'KD_SHAPE_MISMATCH');
    }
  }

  /** Batch normalisation of (N, C, D, H, W). BatchNorm3d(numFeatures, eps=1e-5, momentum=0.1, affine=true, trackRunningStats=true). */
  class BatchNorm3d extends BatchNormNd {
    constructor(...args) { super('BatchNorm3d()', args); }
    _checkInputDim(input) {
      if (input.ndim !== 5) throw new KindlingError(`expected 5D input (got ${input.ndim}D input)`, 'KD_SHAPE_MISMATCH');
    }
  }

  /** Normalises over the trailing normalizedShape dims. LayerNorm(normalizedShape, eps=1e-5, elementwiseAffine=true, bias=true). */
  class LayerNorm extends Module {
    constructor(...args) {
      super();
      const o = parseArgs('LayerNorm()', args, ['normalizedShape', 'eps', 'elementwiseAffine'],
        { eps: 1e-5, elementwiseAffine: true, bias: true, device: null, dtype: null });
      this.normalizedShape = Array.isArray(o.normalizedShape) ? o.normalizedShape.slice() : [o.normalizedShape];
      this.eps = o.eps;
      this.elementwiseAffine = o.elementwiseAffine;
      if (o.elementwiseAffine) {
        this.weight = ownedParameter(kd.ones(this.normalizedShape, factory(o)));
        if (o.bias) this.bias = ownedParameter(kd.zeros(this.normalizedShape, factory(o)));
        else this.registerParameter('bias', null);
      } else {
        this.registerParameter('weight', null);
        this.registerParameter('bias', null);
      }
    }
    resetParameters() {
      kd.noGrad(() => { if (this.weight) this.weight.fill_(1); if (this.bias) this.bias.zero_(); });
    }
    forward(input) { return F.layerNorm(input, this.normalizedShape, this.weight, this.bias, this.eps); }
    extraRepr() {
      const s = this.normalizedShape;
      return `(${s.join(', ')}${s.length === 1 ? ',' : ''}), eps=${pyNum(this.eps)}, elementwise_affine=${py(this.elementwiseAffine)}`;
    }
  }

  /** Normalises (N, C, *) over groups of channels. GroupNorm(numGroups, numChannels, eps=1e-5, affine=true). */
  class GroupNorm extends Module {
    constructor(...args) {
      super();
      const o = parseArgs('GroupNorm()', args, ['numGroups', 'numChannels', 'eps', 'affine'],
        { eps: 1e-5, affine: true, device: null, dtype: null });
      if (!Number.isInteger(o.numGroups) || o.numGroups <= 0 || o.numChannels % o.numGroups !== 0) {
        throw new KindlingError('num_channels must be divisible by num_groups', 'KD_INVALID_ARGUMENT');
      }
      this.numGroups = o.numGroups;
      this.numChannels = o.numChannels;
      this.eps = o.eps;
      this.affine = o.affine;
      if (o.affine) {
        this.weight = ownedParameter(kd.ones([o.numChannels], factory(o)));
        this.bias = ownedParameter(kd.zeros([o.numChannels], factory(o)));
      } else {
        this.registerParameter('weight', null);
        this.registerParameter('bias', null);
      }
    }
    resetParameters() {
      kd.noGrad(() => { if (this.weight) this.weight.fill_(1); if (this.bias) this.bias.zero_(); });
    }
    forward(input) { return F.groupNorm(input, this.numGroups, this.weight, this.bias, this.eps); }
    extraRepr() { return `${this.numGroups}, ${this.numChannels}, eps=${pyNum(this.eps)}, affine=${py(this.affine)}`; }
  }

  Object.assign(nn, { BatchNorm1d, BatchNorm2d, BatchNorm3d, LayerNorm, GroupNorm });
};
