// module.js - kd.nn.Module (the base class of layers and models) and kd.nn.Parameter.
//
// Note [Callable modules]: a module is a function. Module's constructor returns a Proxy around
// a bare function whose prototype is the subclass's prototype, so `model(x)` runs
// `model.forward(x)` with the forward pre-hooks and hooks around it (the Proxy's apply trap), and
// `model instanceof kd.nn.Linear` holds. The function's own `name` and `length` are deleted, so
// user attributes may use those names. Modules do not inherit Function.prototype (no call/apply/bind).
//
// Note [Registration]: the Proxy's defineProperty trap sees every property written on a module
// (`this.fc = new Linear(...)`, class fields, Object.defineProperty). A kd.nn.Parameter value
// registers a parameter, a Module value a submodule; `registerBuffer(name, tensor)` registers a
// buffer. Values stay ordinary own properties (reads cost no trap); the module keeps the names of
// each kind in registration order (PyTorch's _parameters/_buffers/_modules). Assigning a wrong
// kind of value to a registered name throws PyTorch's TypeError; null keeps the slot (bias=None).
// `delete module.name` unregisters. Internal state lives under a symbol key.
//
// Note [Tensor attributes]: a Tensor written on a module - a buffer, or a plain attribute such as
// a mask a forward caches for the next call (`this.srcMask = mask`) - belongs to the module, as a
// Python attribute holds its tensor: kd.tidy scopes never dispose it (kd.keep), even when it was
// made inside one; it is freed by dispose() or when the garbage collector finds it unreachable.
//
// Note [State-dict keys]: properties are camelCase (bn.runningMean, mha.inProjWeight); the names
// in namedParameters(), namedBuffers(), namedModules() and stateDict() are their snake_case
// forms (running_mean, in_proj_weight, layers.0.weight), which are PyTorch's, so checkpoints
// written by PyTorch load directly.
'use strict';

const util = require('node:util');
const tidyState = require('../tidy').state;
const { KindlingError, typeError } = require('../errors');
const { checkDtype, dtypeOrDevice } = require('../dtypes');

const S = Symbol('kd.nn.Module state');

/** camelCase -> snake_case: runningMean -> running_mean (already snake names are unchanged). */
function snake(name) {
  return name.replace(/(?<=[a-z0-9])([A-Z])/g, (m) => `_${m.toLowerCase()}`);
}

function isPlainObject(v) {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const p = Object.getPrototypeOf(v);
  return p === Object.prototype || p === null;
}

function typeName(v) {
  if (v === null) return 'null';
  if (v === undefined) return 'undefined';
  if (typeof v === 'object' || typeof v === 'function') return (v.constructor && v.constructor.name) || typeof v;
  return typeof v;
}

/**
 * PyTorch-style arguments: positional values in `names` order, optionally followed by an options
 * object (any name, plus keyword-only ones); returns {name: value} with defaults filled in.
 * `what` names the callee in errors. Only for callees whose positional args are never plain objects.
 */
function parseArgs(what, args, names, defaults = {}) {
  const out = { ...defaults };
  let n = args.length;
  if (n > 0 && isPlainObject(args[n - 1])) {
    const opts = args[n - 1];
    n--;
    for (const k of Object.keys(opts)) {
      if (!(k in defaults) && !names.includes(k)) throw typeError(`${what}: unexpected keyword argument '${k}'`);
      if (opts[k] !== undefined) out[k] = opts[k];
    }
  }
  if (n > names.length) throw typeError(`${what}: takes ${names.length} positional arguments but ${n} were given`);
  for (let i = 0; i < n; i++) if (args[i] !== undefined) out[names[i]] = args[i];
  for (const k of names) {
    if (out[k] === undefined && !(k in defaults)) throw typeError(`${what}: missing required argument '${k}'`);
  }
  return out;
}

function fmtShape(s) { return `[${s.join(', ')}]`; }

module.exports = function installModule(kd, nn) {
  const { Tensor } = kd;

  /**
   * A Tensor that modules recognise as a parameter: a leaf sharing `data`'s storage, with
   * requiresGrad (default true). `new kd.nn.Parameter(t)` or `kd.nn.Parameter(t)`. Parameters are
   * never disposed by kd.tidy scopes (they belong to their module).
   */
  class ParameterClass extends Tensor {
    constructor(data, requiresGrad = true) {
      const made = data === undefined || data === null;
      if (made) data = kd.empty([0]);
      if (!(data instanceof Tensor)) throw typeError(`Parameter(data): data must be a Tensor, got ${typeName(data)}`);
      if (typeof requiresGrad !== 'boolean') throw typeError('Parameter(data, requiresGrad): requiresGrad must be a boolean');
      const saved = tidyState.active;
      tidyState.active = 0; // not tracked by tidy scopes (see the class comment)
      try {
        super(data.detach()._h);
      } finally {
        tidyState.active = saved;
      }
      if (made) data.dispose();
      this.requiresGrad = requiresGrad;
    }
    toString() { return `Parameter containing:\n${super.toString()}`; }
  }
  const Parameter = new Proxy(ParameterClass, { apply: (T, _this, args) => new T(...args) });

  /**
   * A Parameter made from a tensor created for it (a layer's kd.empty / ones / zeros), which is
   * disposed once the Parameter shares its storage: a layer's constructor leaves nothing behind
   * for the garbage collector.
   */
  function ownedParameter(fresh, requiresGrad = true) {
    const p = new ParameterClass(fresh, requiresGrad);
    fresh.dispose();
    return p;
  }

  function register(t, key, v) {
    const s = t[S];
    if (v instanceof ParameterClass) {
      s.buffers.delete(key); s.modules.delete(key); s.nonPersistent.delete(key);
      s.params.add(key);
      return;
    }
    if (v instanceof Module) {
      s.params.delete(key); s.buffers.delete(key); s.nonPersistent.delete(key);
      s.modules.add(key);
      return;
    }
    const empty = v === null || v === undefined;
    if (s.params.has(key)) {
      if (empty) return;
      throw typeError(`cannot assign '${typeName(v)}' as parameter '${key}' (kd.nn.Parameter or null expected)`);
    }
    if (s.modules.has(key)) {
      if (empty) return;
      throw typeError(`cannot assign '${typeName(v)}' as child module '${key}' (kd.nn.Module or null expected)`);
    }
    if (s.buffers.has(key)) {
      if (empty) return;
      if (!(v instanceof Tensor)) throw typeError(`cannot assign '${typeName(v)}' as buffer '${key}' (Tensor or null expected)`);
    }
    // a buffer or a plain tensor attribute (a cached mask): see Note [Tensor attributes]
    if (v instanceof Tensor) kd.keep(v);
  }

  const handler = {
    defineProperty(t, key, desc) {
      if (typeof key === 'string' && 'value' in desc && t[S].swapping === 0) register(t, key, desc.value);
      return Reflect.defineProperty(t, key, desc);
    },
    deleteProperty(t, key) {
      if (typeof key === 'string' && t[S]) {
        const s = t[S];
        s.params.delete(key); s.buffers.delete(key); s.modules.delete(key); s.nonPersistent.delete(key);
      }
      return Reflect.deleteProperty(t, key);
    },
    apply(t, _this, args) { return t[S].self._callImpl(args); },
  };

  function checkName(m, name, what) {
    if (typeof name !== 'string') throw typeError(`${what} name should be a string. Got ${typeName(name)}`);
    if (name === '') throw new KindlingError(`${what} name can't be empty string ""`, 'KD_INVALID_ARGUMENT');
    if (name.includes('.')) throw new KindlingError(`${what} name can't contain "."`, 'KD_INVALID_ARGUMENT');
    const s = m[S];
    if (name in m && !s.params.has(name) && !s.buffers.has(name) && !s.modules.has(name)) {
      throw new KindlingError(`attribute '${name}' already exists`, 'KD_INVALID_ARGUMENT');
    }
  }

  /**
   * Base class of layers and models. Subclasses call super(), assign parameters, buffers
   * (registerBuffer) and submodules as properties, and define forward(...). A module is callable:
   * `model(x)` runs forward with the hooks (see Note [Callable modules]).
   */
  class Module {
    constructor() {
      const target = () => {};
      delete target.name;
      delete target.length;
      Object.setPrototypeOf(target, new.target.prototype);
      const proxy = new Proxy(target, handler);
      Object.defineProperty(target, S, {
        value: {
          self: proxy, params: new Set(), buffers: new Set(), modules: new Set(), nonPersistent: new Set(),
          preHooks: new Map(), hooks: new Map(), nextHook: 0, backwardHooks: new Map(), fullBackward: null,
          stateDictHooks: new Map(), loadPreHooks: new Map(), loadPostHooks: new Map(),
          swapping: 0, // > 0 while kd.nn.utils.stateless swaps tensors in: assignments register nothing
        },
      });
      Object.defineProperty(target, 'training', { value: true, writable: true, configurable: true, enumerable: false });
      return proxy;
    }

    /** The computation; subclasses override it. Call the module itself (`model(x)`) to run hooks too. */
    forward() {
      throw new KindlingError(`Module [${this.constructor.name}] is missing the required "forward" function`, 'KD_NOT_SUPPORTED');
    }

    _callImpl(args) {
      const s = this[S];
      const G = globalHooks;
      if (G.any === 0 && s.preHooks.size === 0 && s.hooks.size === 0 && s.backwardHooks.size === 0) return this.forward(...args);
      if (s.preHooks.size !== 0 || G.preHooks.size !== 0) {
        for (const h of [...G.preHooks.values(), ...s.preHooks.values()]) {
          const r = h(this, args);
          if (r !== undefined && r !== null) args = Array.isArray(r) ? r : [r];
        }
      }
      let bw = null; // See Note [Module backward hooks] in module_hooks.js
      if (s.backwardHooks.size !== 0 || G.backwardHooks.size !== 0) {
        bw = G.setupBackwardHooks(this, args, [...G.backwardHooks.values(), ...s.backwardHooks.values()]);
        if (bw !== null) args = bw.args;
      }
      let out = this.forward(...args);
      if (s.hooks.size !== 0 || G.hooks.size !== 0) {
        for (const h of [...G.hooks.values(), ...s.hooks.values()]) {
          const r = h(this, args, out);
          if (r !== undefined && r !== null) out = r;
        }
      }
      if (bw !== null) out = bw.wrapOutput(out);
      return out;
    }

    // ------------------------------------------------------------------ registration
    /** Registers a parameter (a kd.nn.Parameter, or null for an absent one like bias=None). */
    registerParameter(name, param) {
      checkName(this, name, 'parameter');
      if (param !== null && param !== undefined && !(param instanceof ParameterClass)) {
        throw typeError(`cannot assign '${typeName(param)}' object to parameter '${name}' (kd.nn.Parameter or null required)`);
      }
      const s = this[S];
      s.buffers.delete(name); s.modules.delete(name); s.nonPersistent.delete(name);
      s.params.add(name);
      this[name] = param === undefined ? null : param;
    }

    /** Registers a buffer: a Tensor saved in the state dict (unless persistent is false) but not trained. */
    registerBuffer(name, tensor, options = {}) {
      checkName(this, name, 'buffer');
      const { persistent = true } = options;
      if (tensor !== null && tensor !== undefined && !(tensor instanceof Tensor)) {
        throw typeError(`cannot assign '${typeName(tensor)}' object to buffer '${name}' (Tensor or null required)`);
      }
      const s = this[S];
      s.params.delete(name); s.modules.delete(name);
      s.buffers.add(name);
      if (persistent) s.nonPersistent.delete(name); else s.nonPersistent.add(name);
      this[name] = tensor === undefined ? null : tensor;
    }

    /** Registers a submodule (or null). */
    registerModule(name, module) {
      checkName(this, name, 'module');
      if (module !== null && module !== undefined && !(module instanceof Module)) {
        throw typeError(`${typeName(module)} is not a Module subclass`);
      }
      const s = this[S];
      s.params.delete(name); s.buffers.delete(name); s.nonPersistent.delete(name);
      s.modules.add(name);
      this[name] = module === undefined ? null : module;
    }
    /** registerModule under PyTorch's older name. */
    addModule(name, module) { this.registerModule(name, module); }

    // ------------------------------------------------------------------ traversal
    /** [[name, module], ...]: this module (name prefix) and all below it, each once. */
    namedModules(options = {}) {
      const { prefix = '', removeDuplicate = true } = options;
      const out = [];
      const memo = new Set();
      const walk = (m, pre) => {
        if (removeDuplicate) {
          if (memo.has(m)) return;
          memo.add(m);
        }
        out.push([pre, m]);
        for (const name of m[S].modules) {
          const c = m[name];
          if (c) walk(c, pre ? `${pre}.${snake(name)}` : snake(name));
        }
      };
      walk(this, prefix);
      return out;
    }
    /** This module and all below it. */
    modules() { return this.namedModules().map((e) => e[1]); }
    /** [[name, module], ...] of the direct submodules. */
    namedChildren() {
      const out = [];
      const memo = new Set();
      for (const name of this[S].modules) {
        const c = this[name];
        if (c && !memo.has(c)) { memo.add(c); out.push([snake(name), c]); }
      }
      return out;
    }
    /** The direct submodules. */
    children() { return this.namedChildren().map((e) => e[1]); }

    _namedMembers(kind, options) {
      const { prefix = '', recurse = true, removeDuplicate = true } = options || {};
      const mods = recurse ? this.namedModules({ prefix, removeDuplicate }) : [[prefix, this]];
      const out = [];
      const memo = new Set();
      for (const [pre, m] of mods) {
        for (const name of m[S][kind]) {
          const v = m[name];
          if (v === null || v === undefined) continue;
          if (removeDuplicate) {
            if (memo.has(v)) continue;
            memo.add(v);
          }
          out.push([pre ? `${pre}.${snake(name)}` : snake(name), v]);
        }
      }
      return out;
    }
    /** [[name, Parameter], ...] with dotted PyTorch names ('layers.0.weight'); each parameter once. */
    namedParameters(options) { return this._namedMembers('params', options); }
    /** All parameters (of submodules too, unless recurse is false). */
    parameters(recurse = true) {
      const r = typeof recurse === 'object' && recurse !== null ? recurse : { recurse };
      return this.namedParameters(r).map((e) => e[1]);
    }
    /** [[name, Tensor], ...] of the buffers. */
    namedBuffers(options) { return this._namedMembers('buffers', options); }
    /** All buffers (of submodules too, unless recurse is false). */
    buffers(recurse = true) {
      const r = typeof recurse === 'object' && recurse !== null ? recurse : { recurse };
      return this.namedBuffers(r).map((e) => e[1]);
    }
    /** The submodule at a dotted path ('encoder.layers.0'), snake_case or property names. */
    getSubmodule(target) {
      if (target === '') return this;
      let m = this;
      for (const part of target.split('.')) {
        const hit = m[S].modules.has(part) ? part : [...m[S].modules].find((n) => snake(n) === part);
        if (hit === undefined || !m[hit]) {
          throw new KindlingError(`${m.constructor.name} has no attribute \`${part}\``, 'KD_INVALID_ARGUMENT');
        }
        m = m[hit];
      }
      return m;
    }

    // ------------------------------------------------------------------ modes and moves
    /** Sets training mode on this module and all below it (dropout, batch norm). Returns this. */
    train(mode = true) {
      if (typeof mode !== 'boolean') throw typeError('training mode is expected to be boolean');
      this.training = mode;
      for (const c of this.children()) c.train(mode);
      return this;
    }
    /** train(false). */
    eval() { return this.train(false); }
    /** Sets requiresGrad on every parameter. Returns this. */
    requiresGrad_(requiresGrad = true) {
      for (const p of this.parameters()) p.requiresGrad_(requiresGrad);
      return this;
    }
    /** Clears the parameters' gradients: sets them to null (default) or zeroes them (setToNone false). */
    zeroGrad(options = {}) {
      const setToNone = typeof options === 'boolean' ? options : options.setToNone !== false;
      for (const p of this.parameters()) {
        const g = p.grad;
        if (g === null) continue;
        if (setToNone) {
          p.grad = null;
        } else {
          if (g.gradFn !== null) g.detach_(); else g.requiresGrad_(false);
          g.zero_();
        }
      }
    }
    /** fn(module) on every submodule (children first) and then this one. Returns this. */
    apply(fn) {
      if (typeof fn !== 'function') throw typeError('apply(fn): fn must be a function');
      for (const c of this.children()) c.apply(fn);
      fn(this);
      return this;
    }
    /**
     * Converts parameters and buffers with fn (tensor -> tensor), children first. Parameters are
     * replaced by new Parameter objects when the data changes (create optimizers after moving).
     */
    _apply(fn) {
      for (const c of this.children()) c._apply(fn);
      const s = this[S];
      kd.noGrad(() => {
        for (const name of s.params) {
          const p = this[name];
          if (!p) continue;
          const d = fn(p);
          if (d.dtype === p.dtype && d.device === p.device) continue;
          const np = ownedParameter(d, p.requiresGrad);
          const g = p.grad;
          if (g !== null) {
            const ng = fn(g);
            np.grad = ng;
            if (ng !== g) ng.dispose(); // the parameter holds the converted gradient
          }
          this[name] = np;
        }
        for (const name of s.buffers) {
          const b = this[name];
          if (!b) continue;
          const d = fn(b);
          if (d.dtype !== b.dtype || d.device !== b.device) this[name] = d;
        }
      });
      return this;
    }
    /**
     * Moves and/or casts parameters and buffers: to('float64'), to('cuda'), to(tensor),
     * to({dtype, device}). Only floating-point tensors change dtype. Returns this.
     */
    to(target, options) {
      let dtype = null;
      let device = null;
      const take = (o) => {
        if (o.dtype !== undefined && o.dtype !== null) dtype = o.dtype;
        if (o.device !== undefined && o.device !== null) device = o.device;
      };
      if (typeof target === 'string') {
        ({ dtype = null, device = null } = dtypeOrDevice(target, 'to()'));
      } else if (target instanceof Tensor) {
        dtype = target.dtype; device = target.device;
      } else if (isPlainObject(target)) {
        take(target);
      } else if (target !== undefined && target !== null) {
        throw typeError(`to(): expected a dtype, a device, a Tensor or an options object, got ${typeName(target)}`);
      }
      if (isPlainObject(options)) take(options);
      if (dtype !== null) {
        dtype = checkDtype(dtype, 'to()');
        if (!['float32', 'float64', 'float16', 'bfloat16'].includes(dtype)) {
          throw typeError(`nn.Module.to only accepts floating point or complex dtypes, but got desired dtype=${dtype}`);
        }
      }
      const isFloat = (t) => ['float32', 'float64', 'float16', 'bfloat16'].includes(t.dtype);
      return this._apply((t) => {
        const o = {};
        if (device !== null) o.device = device;
        if (dtype !== null && isFloat(t)) o.dtype = dtype;
        return Object.keys(o).length ? t.to(o) : t;
      });
    }
    /** to('float32') / ('float64') / ('float16') / ('bfloat16'); cpu(); cuda(index). */
    float() { return this.to('float32'); }
    double() { return this.to('float64'); }
    half() { return this.to('float16'); }
    bfloat16() { return this.to('bfloat16'); }
    cpu() { return this.to({ device: 'cpu' }); }
    cuda(index) { return this.to({ device: index === undefined ? 'cuda' : `cuda:${index}` }); }

    // ------------------------------------------------------------------ state dict
    /**
     * {key: Tensor} of parameters and persistent buffers, with PyTorch's dotted snake_case keys
     * ('layers.0.weight', 'bn.running_mean'). Tensors are detached and share storage with the
     * module (keepVars: true gives the parameters themselves).
     */
    stateDict(options = {}) {
      const { prefix = '', keepVars = false } = options;
      const dest = options.destination || {};
      const s = this[S];
      // an uninitialised tensor (a lazy module's) is saved as itself, as PyTorch's LazyModuleMixin does
      const keep = (t) => keepVars || nn.parameter.isLazy(t);
      for (const name of s.params) {
        const p = this[name];
        if (p) dest[prefix + snake(name)] = keep(p) ? p : p.detach();
      }
      for (const name of s.buffers) {
        const b = this[name];
        if (b && !s.nonPersistent.has(name)) dest[prefix + snake(name)] = keep(b) ? b : b.detach();
      }
      if (this.getExtraState !== Module.prototype.getExtraState) dest[`${prefix}_extra_state`] = this.getExtraState();
      for (const name of s.modules) {
        const c = this[name];
        if (c) c.stateDict({ destination: dest, prefix: `${prefix}${snake(name)}.`, keepVars });
      }
      let out = dest;
      for (const h of [...s.stateDictHooks.values()]) {
        const r = h(this, out, prefix, {});
        if (r !== undefined && r !== null) out = r;
      }
      return out;
    }

    /**
     * Copies a state dict (a plain object or Map of key -> Tensor) into the parameters and
     * buffers. strict (default true): missing or unexpected keys throw, as in PyTorch; shape
     * mismatches always throw. Returns {missingKeys, unexpectedKeys}.
     */
    loadStateDict(stateDict, options = {}) {
      if (typeof options === 'boolean') options = { strict: options };
      const { strict = true } = options;
      // a copy the load-state-dict pre-hooks may change (rename keys), as PyTorch's
      const sd = Object.create(null);
      if (stateDict instanceof Map) for (const [k, v] of stateDict) sd[k] = v;
      else if (stateDict !== null && typeof stateDict === 'object' && !Array.isArray(stateDict)) Object.assign(sd, stateDict);
      else throw typeError(`Expected state_dict to be dict-like, got ${typeName(stateDict)}.`);
      const entries = { has: (k) => k in sd, get: (k) => sd[k] };
      const missingKeys = [];
      const unexpectedKeys = [];
      const expected = new Set();
      const errorMsgs = [];
      let shapeError = false;
      const loaded = [];
      const load = (m, prefix) => {
        const s = m[S];
        loaded.push(m);
        for (const h of [...s.loadPreHooks.values()]) h(sd, prefix, {}, strict, missingKeys, unexpectedKeys, errorMsgs);
        if (m.setExtraState !== Module.prototype.setExtraState) {
          const key = `${prefix}_extra_state`;
          expected.add(key);
          if (key in sd) m.setExtraState(sd[key]);
          else missingKeys.push(key);
        }
        const local = [];
        for (const name of s.params) if (m[name]) local.push(name);
        for (const name of s.buffers) if (m[name] && !s.nonPersistent.has(name)) local.push(name);
        for (const name of local) {
          const key = prefix + snake(name);
          expected.add(key);
          if (!entries.has(key)) { missingKeys.push(key); continue; }
          const input = entries.get(key);
          const param = m[name];
          if (!(input instanceof Tensor)) {
            errorMsgs.push(`While copying the parameter named "${key}", expected Tensor from checkpoint but received ${typeName(input)}`);
            continue;
          }
          const a = input.shape;
          const b = param.shape;
          if (a.length !== b.length || a.some((v, i) => v !== b[i])) {
            shapeError = true;
            errorMsgs.push(`size mismatch for ${key}: copying a param with shape ${fmtShape(a)} from checkpoint, the shape in current model is ${fmtShape(b)}.`);
            continue;
          }
          kd.noGrad(() => param.copy_(input));
        }
        for (const name of s.modules) {
          const c = m[name];
          if (c) load(c, `${prefix}${snake(name)}.`);
        }
      };
      load(this, '');
      for (const k of Object.keys(sd)) if (!expected.has(k)) unexpectedKeys.push(k);
      const incompatible = { missingKeys, unexpectedKeys };
      for (const m of loaded) for (const h of [...m[S].loadPostHooks.values()]) h(m, incompatible);
      if (strict) {
        if (unexpectedKeys.length) errorMsgs.unshift(`Unexpected key(s) in state_dict: ${unexpectedKeys.map((k) => `"${k}"`).join(', ')}. `);
        if (missingKeys.length) errorMsgs.unshift(`Missing key(s) in state_dict: ${missingKeys.map((k) => `"${k}"`).join(', ')}. `);
      }
      if (errorMsgs.length) {
        throw new KindlingError(`Error(s) in loading state_dict for ${this.constructor.name}:\n\t${errorMsgs.join('\n\t')}`,
          shapeError && !missingKeys.length && !unexpectedKeys.length ? 'KD_SHAPE_MISMATCH' : 'KD_INVALID_ARGUMENT');
      }
      return { missingKeys, unexpectedKeys };
    }

    // ------------------------------------------------------------------ hooks
    /**
     * hook(module, args) runs before every forward; returning an array (or one value) replaces
     * the arguments. Returns a handle whose remove() unregisters it.
     */
    registerForwardPreHook(hook) { return addHook(this[S], 'preHooks', hook); }
    /**
     * hook(module, args, output) runs after every forward; returning a value replaces the
     * output. Returns a handle whose remove() unregisters it.
     */
    registerForwardHook(hook) { return addHook(this[S], 'hooks', hook); }

    // ------------------------------------------------------------------ printing
    /** The part inside the parentheses of this module's line (subclasses override it). */
    extraRepr() { return ''; }
    toString() {
      const lines = [];
      const extra = this.extraRepr();
      const childLines = [];
      for (const name of this[S].modules) {
        const c = this[name];
        if (!c) continue;
        const text = String(c.toString()).split('\n').join('\n  ');
        childLines.push(`(${snake(name)}): ${text}`);
      }
      let main = `${this.constructor.name}(`;
      if (extra) lines.push(...extra.split('\n'));
      lines.push(...childLines);
      if (lines.length) {
        if (!childLines.length && !extra.includes('\n')) main += extra;
        else main += `\n  ${lines.join('\n  ')}\n`;
      }
      return `${main})`;
    }
    [util.inspect.custom]() { return this.toString(); }
  }

  // The global module hooks (kd.nn.modules.module.registerModuleForwardHook, ...: module_hooks.js);
  // `any` counts them (kept by module_hooks.js), so a call with no hook at all costs one comparison.
  const globalHooks = {
    preHooks: new Map(), hooks: new Map(), backwardHooks: new Map(), fullBackward: null, setupBackwardHooks: null, any: 0,
  };

  function addHook(s, kind, hook) {
    if (typeof hook !== 'function') throw typeError('a hook must be a function');
    const id = s.nextHook++;
    s[kind].set(id, hook);
    return { id, remove() { s[kind].delete(id); } };
  }

  /** @internal Reads registration sets (for containers). */
  function stateOf(m) { return m[S]; }

  nn.Module = Module;
  nn.Parameter = Parameter;
  return { Module, Parameter, ParameterClass, ownedParameter, parseArgs, isPlainObject, typeName, snake, stateOf, globalHooks };
};
