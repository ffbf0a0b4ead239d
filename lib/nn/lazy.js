// lazy.js - lazy modules (PyTorch's LazyModuleMixin): a layer whose input size is read from its
// first input. kd.nn.lazy(Base, key, infer) makes the lazy variant of any layer whose
// constructor takes that size as its first argument (named `key` in an options object):
//   nn.LazyLinear = lazy(nn.Linear, 'inFeatures', (x) => x.shape[x.ndim - 1]);
// so another layer gets its lazy variant with one line (next to the layer, or here).
//
// Note [Lazy modules]: a lazy module holds its constructor arguments and, as PyTorch's, an
// UninitializedParameter / UninitializedBuffer (lib/nn/uninitialized.js) for each parameter and
// sized buffer the layer has (found by building it once with the initialisers off, size 1 or the
// groups). Its first call builds the full layer (new Base(inferred, ...args): the same checks and
// initialisation as the eager layer), materializes its uninitialised tensors with the full
// layer's values (the same objects: PyTorch's materialize), takes over its other settings, and becomes an instance of
// Base (PyTorch's cls_to_become: `lazy instanceof nn.Linear` afterwards), so later calls cost
// nothing extra. Moves and casts made before that call (`to('cuda')`, `double()`) are replayed on
// the new parameters. loadStateDict() into a lazy module reads the size from the state dict's
// weight (or running mean) instead, as PyTorch's LazyModuleMixin does. As in PyTorch, run one
// forward pass (or load a state dict) before building an optimizer: until then parameters() are
// uninitialised and any use of them throws PyTorch's error.
'use strict';

const { KindlingError } = require('../errors');

module.exports = function installLazy(kd, nn, base) {
  const { Module, stateOf, isPlainObject } = base;
  const LAZY = Symbol('kd.nn lazy arguments');
  const { UninitializedParameter, UninitializedBuffer, isLazy } = nn.parameter;
  const groupsOf = (args) => {
    const last = args[args.length - 1];
    return isPlainObject(last) && last.groups !== undefined ? last.groups : Number.isInteger(args[5]) ? args[5] : 1;
  };

  /**
   * The lazy variant of Base: infer(input, args) is the value of Base's first argument `key`;
   * fromState(stateDict, prefix, args) (optional) reads it from a state dict being loaded.
   */
  function lazy(Base, key, infer, fromState = null) {
    const name = `Lazy${Base.name}`;
    const build = (v, args) => (args.length === 1 && isPlainObject(args[0]) ? new Base({ [key]: v, ...args[0] }) : new Base(v, ...args));
    const Lazy = {
      [name]: class extends Module {
        constructor(...args) {
          super();
          Object.defineProperty(this, LAZY, { value: { args, pending: [] }, configurable: true });
          this._registerUninitialized(args);
          if (fromState !== null) {
            const hook = this._registerLoadStateDictPreHook((sd, prefix) => {
              hook.remove();
              const st = this[LAZY];
              if (st === undefined) return;
              const v = fromState(sd, prefix, st.args);
              if (v !== undefined) this._materialize(v);
            });
          }
        }
        // an uninitialised tensor per parameter and sized buffer of the layer (See Note [Lazy modules])
        _registerUninitialized(args) {
          const probe = nn.init._withoutInit(() => {
            try { return build(1, args); } catch (e) { return build(groupsOf(args), args); }
          });
          const ps = stateOf(probe);
          for (const n of ps.params) {
            const t = probe[n];
            this.registerParameter(n, t ? new UninitializedParameter(t.requiresGrad, { dtype: t.dtype, device: t.device }) : null);
          }
          for (const n of ps.buffers) {
            const t = probe[n];
            const u = t && t.ndim > 0 ? new UninitializedBuffer(false, { dtype: t.dtype, device: t.device }) : t;
            this.registerBuffer(n, u, { persistent: !ps.nonPersistent.has(n) });
          }
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
          this._materialize(infer(input, st.args));
        }
        _materialize(v) {
          const st = this[LAZY];
          const { args } = st;
          const full = build(v, args);
          const fs = stateOf(full);
          // the uninitialised tensors become the full layer's, as the same objects
          const take = (name) => {
            const u = this[name];
            if (!isLazy(u)) return false;
            const t = full[name];
            u.materialize(t.shape, { dtype: t.dtype, device: t.device });
            kd.noGrad(() => { u.data = t; });
            return true;
          };
          for (const b of fs.buffers) if (!take(b)) this.registerBuffer(b, full[b], { persistent: !fs.nonPersistent.has(b) });
          for (const k of Object.keys(full)) if (!fs.buffers.has(k) && !(fs.params.has(k) && take(k))) this[k] = full[k];
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
  // the size from a state dict: dim `d` of the entry `name` (times the groups of a convolution)
  const fromKey = (name, d, grouped = false) => (sd, prefix, args) => {
    const t = sd[prefix + name];
    if (!(t instanceof kd.Tensor) || t.ndim <= d) return undefined;
    if (!grouped) return t.shape[d];
    const last = args[args.length - 1];
    const groups = isPlainObject(last) && last.groups !== undefined ? last.groups : Number.isInteger(args[5]) ? args[5] : 1;
    return t.shape[d] * groups;
  };
  const lastDim = (x) => {
    if (x.ndim < 1) throw new KindlingError('LazyLinear: the input must have at least 1 dim', 'KD_SHAPE_MISMATCH');
    return x.shape[x.ndim - 1];
  };

  // The lazy variants of the layers kindling has: LazyX for X.
  const conv = fromKey('weight', 1, true);
  const convT = fromKey('weight', 0);
  const norm = (sd, prefix, args) => fromKey('weight', 0)(sd, prefix, args) ?? fromKey('running_mean', 0)(sd, prefix, args);
  const table = [
    ['Linear', 'inFeatures', lastDim, fromKey('weight', 1)],
    ['Conv1d', 'inChannels', channels(1, 'LazyConv1d'), conv], ['Conv2d', 'inChannels', channels(2, 'LazyConv2d'), conv],
    ['Conv3d', 'inChannels', channels(3, 'LazyConv3d'), conv],
    ['ConvTranspose1d', 'inChannels', channels(1, 'LazyConvTranspose1d'), convT],
    ['ConvTranspose2d', 'inChannels', channels(2, 'LazyConvTranspose2d'), convT],
    ['ConvTranspose3d', 'inChannels', channels(3, 'LazyConvTranspose3d'), convT],
    ['BatchNorm1d', 'numFeatures', channels(0, 'LazyBatchNorm1d', true), norm],
    ['BatchNorm2d', 'numFeatures', channels(0, 'LazyBatchNorm2d', true), norm],
    ['BatchNorm3d', 'numFeatures', channels(0, 'LazyBatchNorm3d', true), norm],
    ['InstanceNorm1d', 'numFeatures', channels(1, 'LazyInstanceNorm1d'), norm],
    ['InstanceNorm2d', 'numFeatures', channels(2, 'LazyInstanceNorm2d'), norm],
    ['InstanceNorm3d', 'numFeatures', channels(3, 'LazyInstanceNorm3d'), norm],
  ];
  nn.lazy = lazy;
  // installed when the layer is (lib/nn/index.js calls this after the layers)
  for (const [layer, key, infer, fromState] of table) {
    if (nn[layer] && !nn[`Lazy${layer}`]) nn[`Lazy${layer}`] = lazy(nn[layer], key, infer, fromState);
  }
  return lazy;
};
