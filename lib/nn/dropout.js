// dropout.js - the channel-wise and alpha dropouts of PyTorch 1.13: F.dropout1d/2d/3d,
// F.alphaDropout, F.featureAlphaDropout and the modules Dropout1d, Dropout2d, Dropout3d,
// AlphaDropout, FeatureAlphaDropout; F.dropout also takes PyTorch's `inplace`. As ATen's
// _dropout_impl: a Bernoulli(1 - p) mask of the input's shape, or of (N, C, 1, ...) for the
// feature (channel-wise) forms, scaled by 1 / (1 - p), or for alpha dropout the affine map that
// keeps SELU's zero mean and unit variance.
'use strict';

const { KindlingError } = require('../errors');

module.exports = function installDropout(kd, nn, { Module, parseArgs }) {
  const F = kd.nn.functional;
  const ALPHA = 1.7580993408473766; // SELU's -scale * alpha

  function checkP(p) {
    if (typeof p !== 'number' || !(p >= 0 && p <= 1)) {
      throw new KindlingError(`dropout probability has to be between 0 and 1, but got ${p}`, 'KD_INVALID_ARGUMENT');
    }
  }

  /** ATen's _dropout_impl: feature picks a per-channel mask, alpha the alpha-dropout map. */
  function dropoutImpl(input, p, train, feature, alpha, inplace) {
    if (p === 0 || !train || input.numel() === 0) return input;
    const opts = { dtype: input.dtype, device: input.device };
    if (p === 1) return inplace ? input.mul_(0) : input.mul(kd.zeros([], opts));
    let shape = input.shape;
    if (feature) {
      if (input.ndim < 2) throw new KindlingError('Feature dropout requires at least 2 dimensions in the input', 'KD_SHAPE_MISMATCH');
      shape = [shape[0], shape[1], ...new Array(input.ndim - 2).fill(1)];
    }
    const noise = kd.empty(shape, opts).bernoulli_(1 - p);
    if (!alpha) return inplace ? input.mul_(noise.div_(1 - p)) : input.mul(noise.div_(1 - p));
    const a = 1 / Math.sqrt((ALPHA * ALPHA * p + 1) * (1 - p));
    const b = noise.add(-1).mul_(ALPHA * a).add_(ALPHA * a * p);
    noise.mul_(a);
    return inplace ? input.mul_(noise).add_(b) : input.mul(noise).add(b);
  }

  const dropoutOp = F.dropout;
  /** F.dropout(input, p = 0.5, training = true, inplace = false). */
  F.dropout = function dropout(input, ...args) {
    const o = parseArgs('dropout()', args, ['p', 'training', 'inplace'], { p: 0.5, training: true, inplace: false });
    checkP(o.p);
    if (!o.inplace) return dropoutOp(input, o.p, o.training);
    return dropoutImpl(input, o.p, o.training, false, false, true);
  };

  // dropout1d/2d/3d: how many dims a batched input has (unbatched input has one fewer and gets
  // a batch dim for the mask), and whether other ranks are an error (1d) or accepted (2d, 3d).
  function featureDropout(name, batched, strict) {
    return {
      [name](input, ...args) {
        const o = parseArgs(`${name}()`, args, ['p', 'training', 'inplace'], { p: 0.5, training: true, inplace: false });
        checkP(o.p);
        const nd = input.ndim;
        if (strict && nd !== batched && nd !== batched - 1) {
          throw new KindlingError(`${name}: Expected ${batched - 1}D or ${batched}D input, but received a ${nd}D input. `
            + `Note that ${name} exists to provide channel-wise dropout on inputs with ${batched - 2} spatial dimension, `
            + `a channel dimension, and an optional batch dimension (i.e. ${batched - 1}D or ${batched}D inputs).`, 'KD_SHAPE_MISMATCH');
        }
        // dropout2d keeps PyTorch 1.13's reading of 3-D input as (N, C, L)
        const unbatched = name !== 'dropout2d' && nd !== batched;
        if (!unbatched) return dropoutImpl(input, o.p, o.training, true, false, o.inplace);
        // in place, the batched view shares input's storage: the writes land in input
        const r = dropoutImpl(input.unsqueeze(0), o.p, o.training, true, false, o.inplace);
        return o.inplace ? input : r.squeeze(0);
      },
    }[name];
  }
  F.dropout1d = featureDropout('dropout1d', 3, true);
  F.dropout2d = featureDropout('dropout2d', 4, false);
  F.dropout3d = featureDropout('dropout3d', 5, false);

  /** Alpha dropout (keeps SELU's self-normalisation). alphaDropout(input, p = 0.5, training = false, inplace = false). */
  F.alphaDropout = function alphaDropout(input, ...args) {
    const o = parseArgs('alphaDropout()', args, ['p', 'training', 'inplace'], { p: 0.5, training: false, inplace: false });
    checkP(o.p);
    return dropoutImpl(input, o.p, o.training, false, true, o.inplace);
  };
  /** Alpha dropout of whole channels. featureAlphaDropout(input, p = 0.5, training = false, inplace = false). */
  F.featureAlphaDropout = function featureAlphaDropout(input, ...args) {
    const o = parseArgs('featureAlphaDropout()', args, ['p', 'training', 'inplace'], { p: 0.5, training: false, inplace: false });
    checkP(o.p);
    return dropoutImpl(input, o.p, o.training, true, true, o.inplace);
  };

  // The modules: Dropout1d(p = 0.5, inplace = false) and the others, as PyTorch's _DropoutNd.
  function make(name, fn) {
    return {
      [name]: class extends Module {
        constructor(...args) {
          super();
          const o = parseArgs(`${name}()`, args, ['p', 'inplace'], { p: 0.5, inplace: false });
          checkP(o.p);
          this.p = o.p;
          this.inplace = o.inplace;
        }
        forward(input) { return F[fn](input, this.p, this.training, this.inplace); }
        extraRepr() { return `p=${this.p}, inplace=${this.inplace ? 'True' : 'False'}`; }
      },
    }[name];
  }
  Object.assign(nn, {
    Dropout1d: make('Dropout1d', 'dropout1d'),
    Dropout2d: make('Dropout2d', 'dropout2d'),
    Dropout3d: make('Dropout3d', 'dropout3d'),
    AlphaDropout: make('AlphaDropout', 'alphaDropout'),
    FeatureAlphaDropout: make('FeatureAlphaDropout', 'featureAlphaDropout'),
  });
};
