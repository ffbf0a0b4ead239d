// adaptive.js - kd.nn.AdaptiveLogSoftmaxWithLoss (PyTorch 1.13's efficient softmax
// approximation, Grave et al. 2016): a head over the shortlist classes plus one entry per
// cluster, and a two-layer tail projection per cluster. forward(input, target) returns
// [output, loss] (also .output and .loss), the target log-probabilities and their negated mean;
// logProb(input) the full (N, nClasses) log-distribution; predict(input) its argmax. As in
// PyTorch, the rows of each cluster are picked with nonzero (a host sync) so each tail runs only
// on its own rows.
'use strict';

const { KindlingError } = require('../errors');

module.exports = function installAdaptive(kd, nn, { Module, parseArgs }) {
  const F = kd.nn.functional;

  /** AdaptiveLogSoftmaxWithLoss(inFeatures, nClasses, cutoffs, divValue = 4, headBias = false, {device, dtype}). */
  class AdaptiveLogSoftmaxWithLoss extends Module {
    constructor(...args) {
      super();
      const o = parseArgs('AdaptiveLogSoftmaxWithLoss()', args, ['inFeatures', 'nClasses', 'cutoffs', 'divValue', 'headBias'],
        { divValue: 4.0, headBias: false, device: null, dtype: null });
      const cutoffs = Array.from(o.cutoffs || []);
      const sorted = cutoffs.every((c, i) => i === 0 || cutoffs[i - 1] < c);
      if (!cutoffs.length || !sorted || Math.min(...cutoffs) <= 0 || Math.max(...cutoffs) > o.nClasses - 1
        || cutoffs.some((c) => !Number.isInteger(c))) {
        throw new KindlingError('cutoffs should be a sequence of unique, positive integers sorted in an increasing order, '
          + 'where each value is between 1 and n_classes-1', 'KD_INVALID_ARGUMENT');
      }
      const factory = {};
      if (o.device) factory.device = o.device;
      if (o.dtype) factory.dtype = o.dtype;
      this.inFeatures = o.inFeatures;
      this.nClasses = o.nClasses;
      this.cutoffs = [...cutoffs, o.nClasses];
      this.divValue = o.divValue;
      this.headBias = o.headBias;
      this.shortlistSize = this.cutoffs[0];
      this.nClusters = this.cutoffs.length - 1;
      this.headSize = this.shortlistSize + this.nClusters;
      this.head = new nn.Linear(this.inFeatures, this.headSize, { bias: this.headBias, ...factory });
      this.tail = new nn.ModuleList();
      for (let i = 0; i < this.nClusters; i++) {
        const hsz = Math.floor(this.inFeatures / this.divValue ** (i + 1));
        const osz = this.cutoffs[i + 1] - this.cutoffs[i];
        this.tail.append(new nn.Sequential(
          new nn.Linear(this.inFeatures, hsz, { bias: false, ...factory }),
          new nn.Linear(hsz, osz, { bias: false, ...factory })));
      }
    }

    resetParameters() {
      this.head.resetParameters();
      for (const seq of this.tail) for (const lin of seq) lin.resetParameters();
    }

    forward(input_, target_) {
      const td = target_.ndim;
      if (td === 1) {
        if (input_.shape[0] !== target_.shape[0]) {
          throw new KindlingError('Input and target should have the same size in the batch dimension.', 'KD_SHAPE_MISMATCH');
        }
        if (input_.ndim !== 2) {
          throw new KindlingError(`1D target tensor expects 2D input tensors, but found inputs with size [${input_.shape.join(', ')}]`, 'KD_SHAPE_MISMATCH');
        }
      } else if (td === 0) {
        if (input_.ndim !== 1) {
          throw new KindlingError(`0D target tensor expects 1D input tensors, but found inputs with size [${input_.shape.join(', ')}]`, 'KD_SHAPE_MISMATCH');
        }
      } else {
        throw new KindlingError('0D or 1D target tensor expected, multi-target not supported', 'KD_NOT_SUPPORTED');
      }
      const batched = td > 0;
      const input = batched ? input_ : input_.unsqueeze(0);
      const target = (batched ? target_ : target_.unsqueeze(0)).to('int64');
      const n = target.shape[0];
      let output = kd.zeros([n], { dtype: input.dtype, device: input.device });
      let gatherInds = kd.zeros([n], { dtype: 'int64', device: target.device });
      const bounds = [0, ...this.cutoffs];
      let usedRows = 0;
      for (let i = 0; i < bounds.length - 1; i++) {
        const lo = bounds[i];
        const mask = target.ge(lo).logicalAnd(target.lt(bounds[i + 1]));
        const rows = mask.nonzero().reshape([-1]);
        const k = rows.shape[0];
        if (k === 0) continue;
        const rowTargets = target.indexSelect(0, rows);
        if (i === 0) {
          gatherInds = gatherInds.indexCopy(0, rows, rowTargets);
        } else {
          const clusterOut = this.tail[i - 1](input.indexSelect(0, rows));
          gatherInds = gatherInds.indexFill(0, rows, this.shortlistSize + i - 1);
          const local = F.logSoftmax(clusterOut, 1).gather(1, rowTargets.sub(lo).unsqueeze(1));
          output = output.indexCopy(0, rows, local.squeeze(1));
        }
        usedRows += k;
      }
      if (usedRows !== n) {
        throw new kd.KindlingRangeError(`Target values should be in [0, ${this.nClasses - 1}], but values in range `
          + `[${target.min().item()}, ${target.max().item()}] were found. `);
      }
      const headLogprob = F.logSoftmax(this.head(input), 1);
      output = output.add(headLogprob.gather(1, gatherInds.unsqueeze(1)).reshape([n]));
      const loss = output.neg().mean();
      if (!batched) output = output.squeeze(0);
      const r = [output, loss];
      r.output = output;
      r.loss = loss;
      return r;
    }

    /** The full (N, nClasses) log-distribution from input and the head's output. */
    _fullLogProb(input, headOutput) {
      const headLogprob = F.logSoftmax(headOutput, 1);
      const parts = [headLogprob.narrow(1, 0, this.shortlistSize)];
      for (let i = 0; i < this.nClusters; i++) {
        const clusterLogprob = F.logSoftmax(this.tail[i](input), 1);
        parts.push(clusterLogprob.add(headLogprob.narrow(1, this.shortlistSize + i, 1)));
      }
      return kd.cat(parts, 1);
    }

    /** Log-probabilities of every class, (N, nClasses). */
    logProb(input) { return this._fullLogProb(input, this.head(input)); }

    /** The most likely class of each row, (N): logProb(input).argmax(1), skipping the tails where the head picks a shortlist class. */
    predict(input) {
      const headOutput = this.head(input);
      const output = headOutput.argmax(1);
      const notInShortlist = output.ge(this.shortlistSize);
      if (!notInShortlist.any().item()) return output;
      if (notInShortlist.all().item()) return this._fullLogProb(input, headOutput).argmax(1);
      const rows = notInShortlist.nonzero().reshape([-1]);
      const lp = this._fullLogProb(input.indexSelect(0, rows), headOutput.indexSelect(0, rows));
      return output.indexCopy(0, rows, lp.argmax(1));
    }

    extraRepr() { return ''; }
  }

  nn.AdaptiveLogSoftmaxWithLoss = AdaptiveLogSoftmaxWithLoss;
};
