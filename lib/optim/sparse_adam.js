// optim/sparse_adam.js - kd.optim.SparseAdam (PyTorch 1.13's torch.optim.SparseAdam): the lazy
// Adam of sparse gradients. kindling's gradients are dense (it has no sparse layout), and
// PyTorch's SparseAdam refuses dense gradients, so step() raises PyTorch's error for every
// parameter with a gradient; construction checks the hyperparameters as PyTorch does.
'use strict';

module.exports = (kd, Optimizer) => {
  const { num, err } = Optimizer;

  class SparseAdam extends Optimizer {
    /** new SparseAdam(params, {lr = 1e-3, betas = [0.9, 0.999], eps = 1e-8, maximize = false}) */
    constructor(params, options = {}) {
      if (typeof options === 'number') options = { lr: options };
      const { lr = 1e-3, betas = [0.9, 0.999], eps = 1e-8, maximize = false } = options;
      super(params, { lr, betas, eps, maximize });
    }

    _checkGroup(g) {
      if (!(num(g.lr, 'lr') > 0)) throw err(`Invalid learning rate: ${g.lr}`);
      if (!(num(g.eps, 'eps') > 0)) throw err(`Invalid epsilon value: ${g.eps}`);
      Optimizer.checkBetas(g.betas);
    }

    _stepGroup() {
      throw new kd.KindlingError('SparseAdam does not support dense gradients, please consider Adam instead', 'KD_NOT_SUPPORTED');
    }
  }
  return SparseAdam;
};
