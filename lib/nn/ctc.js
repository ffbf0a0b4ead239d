// ctc.js - kd.nn.functional.ctcLoss: the connectionist temporal classification loss of PyTorch
// 1.13 (blank, reduction none/mean/sum, zeroInfinity; padded (N, S) or concatenated 1-D
// targets; batched (T, N, C) or unbatched (T, C) log-probabilities). The recursions are the
// native op kd._internal.ctcLossForward (src/cpu/ctc.c, cuda/ops_ctc.cu), whose backward is
// PyTorch's: the gradient for logProbs is exp(logProbs) - occupancy (the gradient through a
// logSoftmax taken as given), NaN for an impossible alignment unless zeroInfinity. This file
// reads the lengths (host lists, as PyTorch's IntArrayRef) and applies zeroInfinity and the
// reduction, as torch.nn.functional.ctc_loss and ATen's ctc_loss wrapper do.
'use strict';

const { KindlingError } = require('../errors');

module.exports = function installCtc(kd, nn, { parseArgs }) {
  const F = kd.nn.functional;
  const INTS = ['int64', 'int32', 'int16', 'int8', 'uint8'];

  /** Lengths given as an array, a number or an integer tensor -> array of numbers. */
  function lengthsOf(v, what) {
    if (v instanceof kd.Tensor) {
      if (!INTS.includes(v.dtype)) throw new KindlingError(`ctc_loss: ${what} must be integral`, 'KD_DTYPE_MISMATCH');
      return Array.from(v.reshape([-1]).to('cpu').to('float64').dataSync());
    }
    if (typeof v === 'number') return [v];
    if (Array.isArray(v) && v.every((x) => Number.isInteger(x))) return v.slice();
    throw new kd.KindlingTypeError(`ctcLoss(): ${what} must be a tensor or an array of integers`);
  }

  /** ctcLoss(logProbs, targets, inputLengths, targetLengths, blank = 0, reduction = 'mean', zeroInfinity = false). */
  F.ctcLoss = function ctcLoss(logProbs, targets, inputLengths, targetLengths, ...args) {
    const o = parseArgs('ctcLoss()', args, ['blank', 'reduction', 'zeroInfinity'], { blank: 0, reduction: 'mean', zeroInfinity: false });
    if (!['none', 'mean', 'sum'].includes(o.reduction)) throw new KindlingError(`${o.reduction} is not a valid value for reduction`, 'KD_INVALID_ARGUMENT');
    if (!(logProbs instanceof kd.Tensor) || !(targets instanceof kd.Tensor)) throw new kd.KindlingTypeError('ctcLoss(): logProbs and targets must be Tensors');
    const unbatched = logProbs.ndim === 2;
    const lp = unbatched ? logProbs.unsqueeze(1) : logProbs;
    const tg = unbatched ? targets.unsqueeze(0) : targets; // unbatched targets are one row
    const inLen = lengthsOf(inputLengths, 'input_lengths');
    const tLen = lengthsOf(targetLengths, 'target_lengths');
    // targets may stay on the CPU with logProbs on a GPU, as in PyTorch
    const tgd = tg.device === lp.device ? tg : tg.to(lp.device);
    const [nll] = kd._internal.ctcLossForward(lp, tgd, inLen, tLen, o.blank, o.zeroInfinity);
    let loss = o.zeroInfinity ? kd.where(nll.eq(Infinity), 0, nll) : nll;
    if (o.reduction === 'mean') {
      const d = kd.tensor(tLen.map((x) => Math.max(1, x)), { dtype: loss.dtype, device: loss.device });
      return loss.div(d).mean();
    }
    if (o.reduction === 'sum') return loss.sum();
    return unbatched ? loss.squeeze(0) : loss;
  };
};
