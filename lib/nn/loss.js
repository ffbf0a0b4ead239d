// loss.js - kd.nn loss modules: MSELoss, L1Loss, SmoothL1Loss, CrossEntropyLoss, NLLLoss,
// BCELoss, BCEWithLogitsLoss, over kd.nn.functional. Called as loss(input, target). Class
// weights (weight, posWeight) are buffers, as in PyTorch (saved in the state dict, moved by to()).
'use strict';

const { KindlingError } = require('../errors');

module.exports = function installLoss(kd, nn, { Module, parseArgs }) {
  const F = kd.nn.functional;
  const REDUCTIONS = ['none', 'mean', 'sum'];

  // One class per loss: named options parsed, setup(self, options) stores them, forward(self, input, target).
  function make(name, names, defaults, setup, forward) {
    const C = {
      [name]: class extends Module {
        constructor(...args) {
          super();
          const o = parseArgs(`${name}()`, args, names, { reduction: 'mean', ...defaults });
          if (!REDUCTIONS.includes(o.reduction)) throw new KindlingError(`${o.reduction} is not a valid value for reduction`, 'KD_INVALID_ARGUMENT');
          this.reduction = o.reduction;
          setup(this, o);
        }
        forward(input, target) { return forward(this, input, target); }
      },
    }[name];
    return C;
  }

  const noSetup = () => {};
  const weighted = (self, o) => { self.registerBuffer('weight', o.weight || null); };

  /** Mean (or summed) squared error. MSELoss(reduction = 'mean'). */
  const MSELoss = make('MSELoss', ['reduction'], {}, noSetup, (s, x, y) => F.mseLoss(x, y, s.reduction));
  /** Mean (or summed) absolute error. L1Loss(reduction = 'mean'). */
  const L1Loss = make('L1Loss', ['reduction'], {}, noSetup, (s, x, y) => F.l1Loss(x, y, s.reduction));
  /** Huber-like loss: squared below beta, absolute above. SmoothL1Loss(reduction = 'mean', beta = 1). */
  const SmoothL1Loss = make('SmoothL1Loss', ['reduction', 'beta'], { beta: 1.0 }, (s, o) => { s.beta = o.beta; },
    (s, x, y) => F.smoothL1Loss(x, y, s.reduction, s.beta));
  /** logSoftmax + nllLoss (class indices or class probabilities). CrossEntropyLoss(weight = null, ignoreIndex = -100, reduction = 'mean', labelSmoothing = 0). */
  const CrossEntropyLoss = make('CrossEntropyLoss', ['weight', 'ignoreIndex', 'reduction', 'labelSmoothing'],
    { weight: null, ignoreIndex: -100, labelSmoothing: 0.0 },
    (s, o) => { weighted(s, o); s.ignoreIndex = o.ignoreIndex; s.labelSmoothing = o.labelSmoothing; },
    (s, x, y) => F.crossEntropy(x, y, s.weight, s.ignoreIndex, s.reduction, s.labelSmoothing));
  /** Negative log-likelihood of class indices. NLLLoss(weight = null, ignoreIndex = -100, reduction = 'mean'). */
  const NLLLoss = make('NLLLoss', ['weight', 'ignoreIndex', 'reduction'], { weight: null, ignoreIndex: -100 },
    (s, o) => { weighted(s, o); s.ignoreIndex = o.ignoreIndex; },
    (s, x, y) => F.nllLoss(x, y, s.weight, s.ignoreIndex, s.reduction));
  /** Binary cross-entropy of probabilities. BCELoss(weight = null, reduction = 'mean'). */
  const BCELoss = make('BCELoss', ['weight', 'reduction'], { weight: null }, weighted,
    (s, x, y) => F.binaryCrossEntropy(x, y, s.weight, s.reduction));
  /** Binary cross-entropy of logits (stable). BCEWithLogitsLoss(weight = null, reduction = 'mean', posWeight = null). */
  const BCEWithLogitsLoss = make('BCEWithLogitsLoss', ['weight', 'reduction', 'posWeight'], { weight: null, posWeight: null },
    (s, o) => { weighted(s, o); s.registerBuffer('posWeight', o.posWeight || null); },
    (s, x, y) => F.binaryCrossEntropyWithLogits(x, y, s.weight, s.reduction, s.posWeight));

  Object.assign(nn, { MSELoss, L1Loss, SmoothL1Loss, CrossEntropyLoss, NLLLoss, BCELoss, BCEWithLogitsLoss });
};
