// parametrize.js - kd.nn.utils.parametrize (torch.nn.utils.parametrize): a module's parameter or
// buffer computed by modules (parametrizations) from an unconstrained original:
//   parametrize.registerParametrization(linear, 'weight', new Symmetric());
//   linear.weight  // Symmetric()(linear.parametrizations.weight.original), recomputed per read
//
// Note [Parametrized modules]: as PyTorch, registering moves the tensor to
// module.parametrizations[name].original (a ParametrizationList: the parametrizations in order,
// state-dict key 'parametrizations.weight.original') and gives the module a class of its own,
// 'Parametrized' + its class name, a subclass of its class with a getter and setter for the name:
// reading runs the parametrizations (once per `cached()` scope), assigning runs their
// rightInverse in reverse order and stores the result in original. A parametrization's
// rightInverse(value) (optional) maps a value back to an original; it may return an array, and
// then the originals are original0, original1, ... and the first parametrization takes them all.
'use strict';

const { KindlingError, typeError } = require('../errors');

module.exports = function installParametrize(kd, nn, base) {
  const { Module, Parameter, ParameterClass, stateOf, snake } = base;
  const { ModuleList, ModuleDict } = nn;

  let cacheDepth = 0;
  const cache = new Map(); // `${id}:${name}` -> tensor, while cacheDepth > 0
  const ids = new WeakMap();
  let nextId = 0;
  const idOf = (m) => { if (!ids.has(m)) ids.set(m, nextId++); return ids.get(m); };

  const sameMeta = (a, b) => a.dtype === b.dtype && a.shape.join() === b.shape.join();

  /** The parametrizations of one tensor, in order, and its original(s). */
  class ParametrizationList extends ModuleList {
    constructor(modules, original, unsafe = false) {
      super(modules);
      Object.defineProperty(this, 'unsafe', { value: unsafe, writable: true });
      const isParam = original instanceof ParameterClass;
      let value = original;
      kd.noGrad(() => {
        // as PyTorch: a rightInverse that is not available (KD_NOT_SUPPORTED, PyTorch's
        // NotImplementedError) counts as the identity here
        for (const m of [...modules].reverse()) {
          if (typeof m.rightInverse !== 'function') continue;
          try {
            value = m.rightInverse(value);
          } catch (e) {
            if (!(e && e.code === 'KD_NOT_SUPPORTED')) throw e;
          }
        }
      });
      if (value instanceof kd.Tensor) {
        if (!unsafe && !sameMeta(value, original)) {
          throw new KindlingError(`When \`right_inverse\` outputs one tensor, it may not change the dtype or shape.\noriginal.dtype: ${original.dtype}\nright_inverse(original).dtype: ${value.dtype}\noriginal.shape: [${original.shape}]\nright_inverse(original).shape: [${value.shape}]`,
            'KD_INVALID_ARGUMENT');
        }
        if (value !== original) kd.noGrad(() => { original.data = value; });
        Object.defineProperty(this, 'isTensor', { value: true, writable: true });
        if (isParam) this.registerParameter('original', original);
        else this.registerBuffer('original', original);
      } else if (Array.isArray(value)) {
        Object.defineProperty(this, 'isTensor', { value: false, writable: true });
        Object.defineProperty(this, 'ntensors', { value: value.length, writable: true });
        value.forEach((t, i) => {
          if (!(t instanceof kd.Tensor)) throw typeError(`'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). Got element ${i} of type ${typeof t}`);
          if (isParam) this.registerParameter(`original${i}`, new Parameter(t, original.requiresGrad));
          else this.registerBuffer(`original${i}`, t);
        });
      } else {
        throw typeError(`'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). Got ${typeof value}`);
      }
    }
    /** Stores value as the original(s): the rightInverse of each parametrization, last first. */
    rightInverse(value) {
      kd.noGrad(() => {
        const mods = [...this].reverse();
        for (const m of mods) {
          if (typeof m.rightInverse !== 'function') {
            throw new KindlingError(`parametrization ${m.constructor.name} does not implement right_inverse.`, 'KD_NOT_SUPPORTED');
          }
          value = m.rightInverse(value);
        }
        if (this.isTensor) {
          if (!(value instanceof kd.Tensor)) throw typeError(`\`right_inverse\` should return a tensor. Got ${typeof value}`);
          if (!this.unsafe && !sameMeta(value, this.original)) {
            throw new KindlingError(`The tensor returned by \`right_inverse\` has dtype ${value.dtype} and shape [${value.shape}] while \`original\` has dtype ${this.original.dtype} and shape [${this.original.shape}]`,
              'KD_INVALID_ARGUMENT');
          }
          this.original.data = value;
        } else {
          if (!Array.isArray(value) || value.length !== this.ntensors) {
            throw new KindlingError(`'right_inverse' must return a sequence of tensors of length ${this.ntensors}`, 'KD_INVALID_ARGUMENT');
          }
          value.forEach((t, i) => { this[`original${i}`].data = t; });
        }
      });
    }
    forward() {
      const mods = [...this];
      let x = this.isTensor ? mods[0](this.original) : mods[0](...Array.from({ length: this.ntensors }, (_, i) => this[`original${i}`]));
      for (const m of mods.slice(1)) x = m(x);
      return x;
    }
  }

  function isParametrized(module, tensorName = null) {
    const p = Object.prototype.hasOwnProperty.call(module, 'parametrizations') ? module.parametrizations : null;
    if (!(p instanceof ModuleDict)) return false;
    if (tensorName === null || tensorName === undefined) return p.length > 0;
    return p.has(tensorName);
  }

  // the module's own class, 'Parametrized' + its name (See Note [Parametrized modules])
  function injectClass(module) {
    const Cls = Object.getPrototypeOf(module).constructor;
    const name = `Parametrized${Cls.name}`;
    const P = { [name]: class extends Cls {} }[name];
    Object.setPrototypeOf(module, P.prototype);
  }
  function injectProperty(module, name) {
    Object.defineProperty(Object.getPrototypeOf(module), name, {
      configurable: true,
      get() {
        const list = this.parametrizations.get(name);
        if (cacheDepth === 0) return list();
        const key = `${idOf(this)}:${name}`;
        let t = cache.get(key);
        if (t === undefined) { t = list(); cache.set(key, t); }
        return t;
      },
      set(value) { this.parametrizations.get(name).rightInverse(value); },
    });
  }

  /**
   * Parametrizes module[tensorName] (a parameter, a buffer or an already parametrized tensor) by
   * the module `parametrization` (See Note [Parametrized modules]). Options: {unsafe} skips the
   * checks that the parametrization keeps the dtype and shape. Returns the module.
   */
  function registerParametrization(module, tensorName, parametrization, options = {}) {
    if (!(module instanceof Module)) throw typeError('registerParametrization: module must be a kd.nn.Module');
    if (!(parametrization instanceof Module)) throw typeError('registerParametrization: parametrization must be a kd.nn.Module');
    const { unsafe = false } = options;
    parametrization.train(module.training);
    if (isParametrized(module, tensorName)) {
      if (!unsafe) {
        const Y = module[tensorName];
        const X = parametrization(Y);
        if (!(X instanceof kd.Tensor)) throw typeError(`A parametrization must return a tensor. Got ${typeof X}.`);
        if (X.dtype !== Y.dtype) throw new KindlingError(`Registering a parametrization may not change the dtype of the tensor, unless the \`unsafe\` flag is enabled.\nunparametrized dtype: ${Y.dtype}\nparametrized dtype: ${X.dtype}`, 'KD_INVALID_ARGUMENT');
        if (X.shape.join() !== Y.shape.join()) throw new KindlingError(`Registering a parametrization may not change the shape of the tensor, unless the \`unsafe\` flag is enabled.\nunparametrized shape: [${Y.shape}]\nparametrized shape: [${X.shape}]`, 'KD_INVALID_ARGUMENT');
      }
      const list = module.parametrizations.get(tensorName);
      list.append(parametrization);
      list.unsafe = list.unsafe || unsafe;
      return module;
    }
    const s = stateOf(module);
    const prop = [...s.params, ...s.buffers].find((n) => n === tensorName || snake(n) === tensorName);
    if (prop === undefined || module[prop] === null || module[prop] === undefined) {
      throw new KindlingError(`Module '${module.constructor.name}' does not have a parameter, a buffer, or a parametrized element with name '${tensorName}'`,
        'KD_INVALID_ARGUMENT');
    }
    const original = module[prop];
    const list = new ParametrizationList([parametrization], original, unsafe);
    delete module[prop];
    if (!isParametrized(module)) {
      injectClass(module);
      module.parametrizations = new ModuleDict();
    }
    injectProperty(module, prop);
    module.parametrizations.set(prop, list);
    return module;
  }

  /**
   * Removes the parametrizations of module[tensorName]. leaveParametrized (default true): the
   * tensor keeps its current (parametrized) value; false: it goes back to the original.
   */
  function removeParametrizations(module, tensorName, leaveParametrized = true) {
    if (typeof leaveParametrized === 'object' && leaveParametrized !== null) ({ leaveParametrized = true } = leaveParametrized);
    if (!isParametrized(module, tensorName)) {
      throw new KindlingError(`Module ${module.constructor.name} does not have a parametrization on ${tensorName}`, 'KD_INVALID_ARGUMENT');
    }
    const list = module.parametrizations.get(tensorName);
    let original;
    if (list.isTensor) {
      original = list.original;
      if (leaveParametrized) {
        const t = kd.noGrad(() => module[tensorName]);
        kd.noGrad(() => { original.data = t; });
      }
    } else {
      if (!leaveParametrized) {
        throw new KindlingError('Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is parametrized in terms of a sequence of tensors.',
          'KD_INVALID_ARGUMENT');
      }
      const t = kd.noGrad(() => module[tensorName]);
      original = list.original0 instanceof ParameterClass ? new Parameter(t, list.original0.requiresGrad) : t;
    }
    delete Object.getPrototypeOf(module)[tensorName];
    module.parametrizations.delete(tensorName);
    if (original instanceof ParameterClass) module.registerParameter(tensorName, original);
    else module.registerBuffer(tensorName, original);
    if (!isParametrized(module)) {
      delete module.parametrizations;
      Object.setPrototypeOf(module, Object.getPrototypeOf(Object.getPrototypeOf(module)));
    }
    return module;
  }

  /**
   * fn() with the parametrized tensors computed once each and reused (PyTorch's `with cached():`),
   * e.g. around a recurrent loop that reads a parametrized weight at every step. Returns what fn
   * returns (a Promise's end closes the scope).
   */
  function cached(fn) {
    if (typeof fn !== 'function') throw typeError('cached(fn): fn must be a function');
    cacheDepth++;
    const close = () => { cacheDepth--; if (cacheDepth === 0) cache.clear(); };
    let r;
    try { r = fn(); } catch (e) { close(); throw e; }
    if (r && typeof r.then === 'function') return r.finally(close);
    close();
    return r;
  }

  /** The module's class before parametrizations were registered (its own class when it has none). */
  function typeBeforeParametrizations(module) {
    if (!(module instanceof Module)) throw typeError('typeBeforeParametrizations: module must be a kd.nn.Module');
    return isParametrized(module) ? Object.getPrototypeOf(module.constructor) : module.constructor;
  }

  /**
   * Registers the parametrizations of fromModule (all, or those of tensorName) on toModule, the
   * same parametrization modules, and makes toModule's originals fromModule's (shared, as
   * PyTorch's). A tensor toModule lacks is first created as a Parameter of fromModule's
   * parametrized value. Nothing happens when fromModule has no parametrizations. Returns toModule.
   */
  function transferParametrizationsAndParams(fromModule, toModule, tensorName = null) {
    if (!(fromModule instanceof Module) || !(toModule instanceof Module)) {
      throw typeError('transferParametrizationsAndParams: fromModule and toModule must be kd.nn.Modules');
    }
    if (typeof tensorName === 'object' && tensorName !== null) ({ tensorName = null } = tensorName);
    if (!isParametrized(fromModule)) return toModule;
    if (tensorName !== null && !isParametrized(fromModule, tensorName)) {
      throw new KindlingError(`Module ${fromModule.constructor.name} does not have a parametrization on ${tensorName}`, 'KD_INVALID_ARGUMENT');
    }
    const names = tensorName === null ? fromModule.parametrizations.keys() : [tensorName];
    for (const name of names) {
      if (toModule[name] === undefined) {
        toModule.registerParameter(name, new Parameter(kd.noGrad(() => fromModule[name]).detach()));
      }
      const from = fromModule.parametrizations.get(name);
      for (const f of from) registerParametrization(toModule, name, f);
      const to = toModule.parametrizations.get(name);
      const originals = from.isTensor ? ['original'] : Array.from({ length: from.ntensors }, (_, i) => `original${i}`);
      for (const o of originals) {
        if (from[o] instanceof ParameterClass) to.registerParameter(o, from[o]);
        else to.registerBuffer(o, from[o]);
      }
    }
    return toModule;
  }

  nn.utils.parametrize = {
    registerParametrization, removeParametrizations, isParametrized, cached, ParametrizationList,
    typeBeforeParametrizations, transferParametrizationsAndParams,
  };
};
