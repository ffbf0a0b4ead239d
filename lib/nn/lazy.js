// lazy.js - lazy modules (PyTorch's LazyModuleMixin): a layer whose input size is read from its
// first input. kd.nn.lazy(Base, key, infer) makes the lazy variant of any layer whose
// constructor takes that size as its first argument (named `key` in an options object):
//   nn.LazyLinear = lazy(nn.Linear, 'inFeatures', (x) => x.shape[x.ndim - 1]);
// so another layer gets its lazy variant with one line (next to the layer, or here).
//
// Note [Lazy modules]: a lazy module holds its constructor arguments and no parameters. Its first
// call builds the full layer (new Base(inferred, ...args): the same checks and initialisation as
// the eager layer), takes over its parameters, buffers and settings, and becomes an instance of
// Base (PyTorch's cls_to_become: `lazy instanceof nn.Linear` afterwards), so later calls cost
// nothing extra. Moves and casts made before that call (`to('cuda')`, `double()`) are replayed on
// the new parameters. As in PyTorch, run one forward pass before building an optimizer or
// loading a state dict: until then parameters() is empty.
'use strict';

const { KindlingError } = require('../errors');

module.exports = function installLazy(kd, nn, base) {
  const { Module, stateOf, isPlainObject } = base;
  const LAZY = Symbol('kd.nn lazy arguments');

  /** The lazy variant of Base: infer(input) is the value of Base's first argument `key`. */
  function lazy(Base, key, infer) {
    const name = `Lazy${Base.name}`;
    const Lazy = {
      [name]: class extends Module {
        constructor(...args) {
          super();
          Object.defineProperty(this, LAZY, { value: { args, pending: [] }, configurable: true });
        }
        /** True until the first call has made the parameters. */
        hasUninitializedParams() { return this[LAZY] !== undefined; }
        /** Makes the parameters for this input (the first call does it). See Note [Lazy modules]. */
        initializeParameters(input) {
          const st = this[LAZY];
          if (st === undefined) return;
          if (!(input instanceof kd.Tensor)) {
            throw new KindlingError(`${name}: the first input must be a Tensor (its size sets ${key})`, 'KD_INVALID_ARGUMENT');
          }
          const v = infer(input, st.args);
          const { args } = st;
          const full = args.length === 1 && isPlainObject(args[0]) ? new Base({ [key]: v, ...args[0] }) : new Base(v, ...args);
          const fs = stateOf(full);
          for (const b of fs.buffers) this.registerBuffer(b, full[b], { persistent: !fs.nonPersistent.has(b) });
          for (const k of Object.keys(full)) if (!fs.buffers.has(k)) this[k] = full[k];
          delete this[LAZY];
          Object.setPrototypeOf(this, Base.prototype);
          for (const fn of st.pending) this._apply(fn);
        }
        _apply(fn) {
          if (this[LAZY] !== undefined) { this[LAZY].pending.push(fn); return this; }
          return super._apply(fn);
        }
        forward(...inputs) {
          this.initializeParameters(inputs[0]);
          return this.forward(...inputs);
        }
        extraRepr() { return `${key}=<inferred from the first input>`; }
      },
    }[name];
    return Lazy;
  }

  // The channel dim of a conv or norm input: dim 1 of a batched input, dim 0 of an unbatched one
  // (nd spatial dims), with PyTorch's error for other ranks.
  const channels = (nd, what, batchedOnly = false) => (x) => {
    const unbatched = nd + 1;
    if (batchedOnly ? x.ndim < 2 : x.ndim !== unbatched && x.ndim !== unbatched + 1) {
      throw new KindlingError(batchedOnly ? `${what}: expected an input of at least 2 dims, got ${x.ndim}`
        : `Expected ${unbatched}D (unbatched) or ${unbatched + 1}D (batched) input to ${what}, but got input of size: [${x.shape.join(', ')}]`,
      'KD_SHAPE_MISMATCH');
    }
    return batchedOnly || x.ndim === unbatched + 1 ? x.shape[1] : x.shape[0];
  };
  const lastDim = (x) => {
    if (x.ndim < 1) throw new KindlingError('LazyLinear: the input must have at least 1 dim', 'KD_SHAPE_MISMATCH');
    return x.shape[x.ndim - 1];
  };

  // The lazy variants of the layers kindling has: LazyX for X.
  const table = [
    ['Linear', 'inFeatures', lastDim],
    ['Conv1d', 'inChannels', channels(1, 'LazyConv1d')], ['Conv2d', 'inChannels', channels(2, 'LazyConv2d')],
    ['Conv3d', 'inChannels', channels(3, 'LazyConv3d')],
    ['ConvTranspose1d', 'inChannels', channels(1, 'LazyConvTranspose1d')],
    ['ConvTranspose2d', 'inChannels', channels(2, 'LazyConvTranspose2d')],
    ['ConvTranspose3d', 'inChannels', channels(3, 'LazyConvTranspose3d')],
    ['BatchNorm1d', 'numFeatures', channels(0, 'LazyBatchNorm1d', true)],
    ['BatchNorm2d', 'numFeatures', channels(0, 'LazyBatchNorm2d', true)],
    ['BatchNorm3d', 'numFeatures', channels(0, 'LazyBatchNorm3d', true)],
    ['InstanceNorm1d', 'numFeatures', channels(1, 'LazyInstanceNorm1d')],
    ['InstanceNorm2d', 'numFeatures', channels(2, 'LazyInstanceNorm2d')],
    ['InstanceNorm3d', 'numFeatures', channels(3, 'LazyInstanceNorm3d')],
  ];
  nn.lazy = lazy;
  // installed when the layer is (lib/nn/index.js calls this after the layers)
  for (const [layer, key, infer] of table) if (nn[layer] && !nn[`Lazy${layer}`]) nn[`Lazy${layer}`] = lazy(nn[layer], key, infer);
  return lazy;
};
