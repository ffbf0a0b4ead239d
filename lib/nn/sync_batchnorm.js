// sync_batchnorm.js - kd.nn.SyncBatchNorm, as torch.nn.SyncBatchNorm in PyTorch 1.13: batch
// normalisation of (N, C, *) CUDA inputs whose training statistics are computed over a process
// group. Its forward follows 1.13's step by step: a non-CUDA input is refused first (in every
// mode), then inputs under 2-D and zero channels; in training with tracked statistics
// numBatchesTracked is counted; then, when the batch statistics are used in training, the
// statistics need synchronising unless the process group (or, without one, the default group)
// has one process. kindling has no process groups (kd.distributed) yet: without a processGroup
// that reports size() 1 that step throws PyTorch's "Default process group has not been
// initialized" error (code KD_NO_PROCESS_GROUP). In eval mode, or with a group of one, it is
// F.batchNorm over the input, as BatchNorm*d. SyncBatchNorm.convertSyncBatchnorm(module,
// processGroup) replaces the BatchNorm*d (and SyncBatchNorm) modules of a model, as PyTorch's.
'use strict';

const { KindlingError, typeError, noProcessGroupError } = require('../errors');

module.exports = function installSyncBatchNorm(kd, nn, base) {
  const { BatchNormNd, isPlainObject, stateOf } = base;
  const NAMES = 5; // numFeatures, eps, momentum, affine, trackRunningStats, then processGroup

  const OPTIONS = new Set(['numFeatures', 'eps', 'momentum', 'affine', 'trackRunningStats', 'processGroup', 'device', 'dtype']);
  const isOptions = (v) => isPlainObject(v) && Object.keys(v).every((k) => OPTIONS.has(k));

  // (args without processGroup, processGroup): the sixth positional argument (anything but an
  // options object), or an option
  function takeProcessGroup(args) {
    const a = args.slice();
    let pg = null;
    if (a.length > NAMES && !isOptions(a[NAMES])) pg = a.splice(NAMES, 1)[0];
    const last = a[a.length - 1];
    if (isOptions(last) && 'processGroup' in last) {
      const { processGroup, ...rest } = last;
      pg = processGroup === undefined ? null : processGroup;
      a[a.length - 1] = rest;
    }
    return [a, pg];
  }

  class SyncBatchNorm extends BatchNormNd {
    /** SyncBatchNorm(numFeatures, {eps = 1e-5, momentum = 0.1, affine = true, trackRunningStats = true, processGroup = null}). */
    constructor(...args) {
      const [rest, pg] = takeProcessGroup(args);
      super('SyncBatchNorm()', rest);
      this.processGroup = pg;
    }

    forward(input) {
      if (!(input instanceof kd.Tensor) || !input.device.startsWith('cuda')) {
        throw new KindlingError('SyncBatchNorm expected input tensor to be on GPU', 'KD_DEVICE_MISMATCH');
      }
      if (input.ndim < 2) throw new KindlingError(`expected at least 2D input (got ${input.ndim}D input)`, 'KD_SHAPE_MISMATCH');
      if (input.shape[1] === 0) throw new KindlingError('SyncBatchNorm number of input channels should be non-zero', 'KD_SHAPE_MISMATCH');
      return this._batchNorm(input, (bnTraining) => {
        if (!bnTraining || !this.training) return;
        const n = this._worldSize();
        if (n > 1) throw new KindlingError(`SyncBatchNorm: synchronising batch statistics over a process group of ${n} processes needs kd.distributed, which kindling does not have yet`, 'KD_NO_PROCESS_GROUP');
      });
    }

    // torch.distributed.get_world_size(processGroup or the default group)
    _worldSize() {
      const pg = this.processGroup;
      if (!pg) throw noProcessGroupError('SyncBatchNorm: training synchronises batch statistics over a process group');
      if (typeof pg.size !== 'function') throw typeError(`SyncBatchNorm: processGroup must be a process group (with size()), got ${String(pg)}`);
      return pg.size();
    }

    /**
     * `module` with each BatchNorm1d/2d/3d or SyncBatchNorm in it replaced by a SyncBatchNorm with
     * its settings, sharing its parameters and buffers (and qconfig); a batch norm given itself
     * gives the new module. As in PyTorch 1.13 the new modules start in training mode.
     */
    static convertSyncBatchnorm(module, processGroup = null) {
      let out = module;
      if (module instanceof nn.BatchNorm1d || module instanceof nn.BatchNorm2d || module instanceof nn.BatchNorm3d || module instanceof SyncBatchNorm) {
        out = new SyncBatchNorm(module.numFeatures, module.eps, module.momentum, module.affine, module.trackRunningStats, { processGroup });
        const fresh = [out.weight, out.bias, out.runningMean, out.runningVar, out.numBatchesTracked];
        if (module.affine) {
          out.weight = module.weight;
          out.bias = module.bias;
        }
        out.runningMean = module.runningMean;
        out.runningVar = module.runningVar;
        out.numBatchesTracked = module.numBatchesTracked;
        for (const t of fresh) if (t && !out.parameters().includes(t) && !out.buffers().includes(t)) t.dispose();
        if (module.qconfig !== undefined) out.qconfig = module.qconfig;
      }
      const s = stateOf(module);
      const seen = new Set();
      for (const name of [...s.modules]) {
        const child = module[name];
        if (!child || seen.has(child)) continue;
        seen.add(child);
        out.registerModule(name, SyncBatchNorm.convertSyncBatchnorm(child, processGroup));
      }
      return out;
    }
  }

  nn.SyncBatchNorm = SyncBatchNorm;
};
