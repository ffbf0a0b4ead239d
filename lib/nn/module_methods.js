// module_methods.js - the rest of torch.nn.Module's methods on kd.nn.Module: getParameter,
// getBuffer, getExtraState/setExtraState, toEmpty, shareMemory, type, and the state-dict hooks
// (_registerStateDictHook, _registerLoadStateDictPreHook, registerLoadStateDictPostHook).
// stateDict/loadStateDict in module.js run the hooks and save/restore the extra state.
'use strict';

const { KindlingError, typeError } = require('../errors');

module.exports = function installModuleMethods(kd, nn, base) {
  const { Module, Parameter, stateOf, snake, isPlainObject, ownedParameter } = base;

  // The one deep copy of a module (Python's copy.deepcopy), for the layers, fusion and swa_utils.
  base.deepCopy = require('./deepcopy')(kd, base);
  Object.defineProperty(nn, '_copyModule', { value: base.deepCopy, enumerable: false });

  // hook into map under the next id of counter (a module's state); returns its handle
  function addHook(map, hook, counter) {
    if (typeof hook !== 'function') throw typeError('a hook must be a function');
    const id = counter.nextHook++;
    map.set(id, hook);
    return { id, remove() { map.delete(id); } };
  }
  base.addHook = addHook;

  // 'encoder.layers.0.weight' -> [the submodule, its property name of 'weight' (snake_case or
  // property names), 'weight'], or an error naming the module that lacks it.
  function member(m, target, kind, what) {
    if (typeof target !== 'string') throw typeError(`${what}(target): target must be a string, got ${typeof target}`);
    const dot = target.lastIndexOf('.');
    const mod = m.getSubmodule(dot < 0 ? '' : target.slice(0, dot));
    const name = target.slice(dot + 1);
    const s = stateOf(mod);
    const set = s[kind];
    const hit = set.has(name) ? name : [...set].find((n) => snake(n) === name);
    if (hit === undefined) {
      const other = ['params', 'buffers', 'modules'].some((k) => [...s[k]].some((n) => n === name || snake(n) === name));
      if (other || name in mod) {
        throw new KindlingError(`\`${name}\` is not ${kind === 'params' ? 'an nn.Parameter' : 'a buffer'}`, 'KD_INVALID_ARGUMENT');
      }
      throw new KindlingError(`${mod.constructor.name} has no attribute \`${name}\``, 'KD_INVALID_ARGUMENT');
    }
    return mod[hit];
  }

  /** The parameter at a dotted path ('encoder.layers.0.weight'), as PyTorch's get_parameter. */
  Module.prototype.getParameter = function getParameter(target) { return member(this, target, 'params', 'getParameter'); };
  /** The buffer at a dotted path ('bn.running_mean'), as PyTorch's get_buffer. */
  Module.prototype.getBuffer = function getBuffer(target) { return member(this, target, 'buffers', 'getBuffer'); };

  /**
   * A module overrides getExtraState() to save any value in its state dict under
   * '<prefix>_extra_state', and setExtraState(state) to read it back in loadStateDict.
   */
  Module.prototype.getExtraState = function getExtraState() {
    throw new KindlingError('Reached a code path in Module.getExtraState() that should never be called: a module with extra state overrides getExtraState()',
      'KD_NOT_SUPPORTED');
  };
  Module.prototype.setExtraState = function setExtraState() {
    throw new KindlingError('Reached a code path in Module.setExtraState() that should never be called: a module with extra state overrides setExtraState()',
      'KD_NOT_SUPPORTED');
  };

  /**
   * Moves the parameters and buffers to `device` without copying their values (uninitialised
   * memory, as PyTorch's to_empty). A parameter on the same kind of device keeps its object (its
   * data is swapped in); on another kind it is replaced. Returns this.
   */
  Module.prototype.toEmpty = function toEmpty(options) {
    const device = isPlainObject(options) ? options.device : options;
    if (typeof device !== 'string') throw typeError(`toEmpty(): expected {device}, got ${options === undefined ? 'nothing' : typeof device}`);
    const devType = (d) => d.split(':')[0];
    kd.noGrad(() => {
      for (const [, m] of this.namedModules()) {
        const s = stateOf(m);
        for (const name of s.params) {
          const p = m[name];
          if (!p) continue;
          const e = kd.empty(p.shape, { dtype: p.dtype, device });
          if (devType(e.device) === devType(p.device)) {
            p.data = e;
            e.dispose();
            if (p.grad !== null) p.grad = null;
          } else {
            m[name] = ownedParameter(e, p.requiresGrad);
          }
        }
        for (const name of s.buffers) {
          const b = m[name];
          if (b) m[name] = kd.empty(b.shape, { dtype: b.dtype, device });
        }
      }
    });
    return this;
  };

  /**
   * PyTorch's share_memory(): shareMemory_() on every parameter and buffer, so that
   * kd.multiprocessing.reduceTensor can hand them to worker threads, which train the same
   * bytes (Hogwild). Returns the module.
   */
  Module.prototype.shareMemory = function shareMemory() { return this._apply((t) => t.shareMemory_()); };

  /** Casts every parameter and buffer (integer ones too) to dstType: a dtype or a legacy name. */
  Module.prototype.type = function type(dstType) {
    if (dstType === undefined || dstType === null) throw typeError('type(dstType): dstType is required');
    return this._apply((t) => t.type(dstType));
  };

  /**
   * hook(module, stateDict, prefix, localMetadata) runs after this module's stateDict() has
   * added its entries (and its children's); returning an object replaces the state dict.
   */
  Module.prototype._registerStateDictHook = function _registerStateDictHook(hook) {
    const s = stateOf(this);
    return addHook(s.stateDictHooks, hook, s);
  };
  /**
   * hook(stateDict, prefix, localMetadata, strict, missingKeys, unexpectedKeys, errorMsgs) runs
   * before this module loads its entries; it may rename or change entries of stateDict (a copy
   * of what was passed to loadStateDict). withModule: hook(module, stateDict, ...).
   */
  Module.prototype._registerLoadStateDictPreHook = function _registerLoadStateDictPreHook(hook, withModule = false) {
    if (typeof hook !== 'function') throw typeError('a hook must be a function');
    const s = stateOf(this);
    const self = this;
    const fn = withModule ? (...a) => hook(self, ...a) : hook;
    return addHook(s.loadPreHooks, fn, s);
  };
  /**
   * hook(module, incompatibleKeys) runs after loadStateDict() has loaded everything;
   * incompatibleKeys is {missingKeys, unexpectedKeys}, which it may change in place (strict
   * checks them afterwards).
   */
  Module.prototype.registerLoadStateDictPostHook = function registerLoadStateDictPostHook(hook) {
    const s = stateOf(this);
    return addHook(s.loadPostHooks, hook, s);
  };
};
