// prune.js - kd.nn.utils.prune (torch.nn.utils.prune): pruning a module's parameter by a mask.
// Pruning `weight` moves the parameter to <name>Orig (state-dict key weight_orig), adds the
// buffer <name>Mask (weight_mask) and a forward pre-hook that sets module.weight = orig * mask
// before every call. Pruning the same tensor again combines the methods in a PruningContainer
// (the new method only sees the entries, or channels, still unpruned); remove() makes the
// pruned values permanent. Methods: Identity, RandomUnstructured, L1Unstructured,
// RandomStructured, LnStructured, CustomFromMask, and subclasses of BasePruningMethod (define
// computeMask(t, defaultMask) and a static PRUNING_TYPE).
//
// `amount`: an integer is a number of parameters (or channels) to prune, as Python's int; a
// fraction is a non-integer in [0, 1] (0.3), as Python's float.
'use strict';

const { KindlingError, typeError } = require('../errors');

module.exports = function installPrune(kd, nn, { Module, stateOf, snake }) {
  const registry = new WeakMap(); // module -> Map(prop -> {method, handle})

  function validateAmountInit(amount) {
    if (typeof amount !== 'number' || Number.isNaN(amount)) throw typeError(`Invalid type for amount: ${amount}. Must be int or float.`);
    if ((Number.isInteger(amount) && amount < 0) || (!Number.isInteger(amount) && (amount > 1 || amount < 0))) {
      throw new KindlingError(`amount=${amount} should either be a float in the range [0, 1] or a non-negative integer`, 'KD_INVALID_ARGUMENT');
    }
  }
  // Python's round(): halves to even
  const roundHalfEven = (x) => {
    const f = Math.floor(x);
    const d = x - f;
    if (d > 0.5) return f + 1;
    if (d < 0.5) return f;
    return f % 2 === 0 ? f : f + 1;
  };
  const nToPrune = (amount, size) => (Number.isInteger(amount) ? amount : roundHalfEven(amount * size));
  function validateAmount(n, size) {
    if (n > size) throw new KindlingError(`amount=${n} should be smaller than the number of parameters to prune=${size}`, 'KD_INVALID_ARGUMENT');
  }
  function validateStructured(t) {
    if (t.ndim <= 1) {
      throw new KindlingError(`Structured pruning can only be applied to multidimensional tensors. Found tensor of shape [${t.shape.join(', ')}] with ${t.ndim} dims`,
        'KD_INVALID_ARGUMENT');
    }
  }
  function validateDim(t, dim) {
    if (dim >= t.ndim) throw new KindlingError(`Invalid index ${dim} for tensor of size [${t.shape.join(', ')}]`, 'KD_INVALID_ARGUMENT');
  }
  // zeros at the flat indices idx (a 1-D int64 tensor) of a copy of mask
  const zeroAt = (mask, idx) => mask.reshape(-1).indexFill(0, idx, 0).reshape(mask.shape);
  // a mask keeping the channels `keep` (indices along dim) of t
  const channelMask = (t, dim, keep) => kd.zerosLike(t).indexFill(dim < 0 ? dim + t.ndim : dim, keep, 1);

  /** The base of pruning methods: subclasses define computeMask(t, defaultMask) and PRUNING_TYPE. */
  class BasePruningMethod {
    constructor() { this._tensorName = null; }
    get PRUNING_TYPE() { return this.constructor.PRUNING_TYPE; }
    computeMask() { throw new KindlingError(`${this.constructor.name}.computeMask is not defined`, 'KD_NOT_SUPPORTED'); }
    /** module[name + 'Orig'] * module[name + 'Mask']. */
    applyMask(module) {
      const orig = module[`${this._tensorName}Orig`];
      const mask = module[`${this._tensorName}Mask`];
      return mask.to({ dtype: orig.dtype }).mul(orig);
    }
    /** t with this method's mask applied (t itself is not changed). */
    prune(t, defaultMask = null, importanceScores = null) {
      const scores = importanceScores === null ? t : importanceScores;
      if (scores.shape.join() !== t.shape.join()) throw new KindlingError('importance_scores should have the same shape as parameter', 'KD_SHAPE_MISMATCH');
      return kd.noGrad(() => t.mul(this.computeMask(scores, defaultMask === null ? kd.onesLike(t) : defaultMask)));
    }
    /** Makes the pruning of module[name] permanent: the parameter holds orig * mask again. */
    remove(module) {
      const name = this._tensorName;
      if (name === null) throw new KindlingError(`Module ${module.constructor.name} has to be pruned before pruning can be removed`, 'KD_INVALID_ARGUMENT');
      const weight = kd.noGrad(() => this.applyMask(module));
      delete module[name];
      const orig = module[`${name}Orig`];
      orig.data = weight;
      delete module[`${name}Orig`];
      delete module[`${name}Mask`];
      module[name] = orig;
    }
    /** Prunes module[name] with a method made of args (a subclass's constructor arguments). */
    static apply(module, name, ...args) {
      let importanceScores = null;
      if (args.length && args[args.length - 1] !== null && typeof args[args.length - 1] === 'object' &&
          !(args[args.length - 1] instanceof kd.Tensor) && 'importanceScores' in args[args.length - 1]) {
        ({ importanceScores } = args.pop());
        if (importanceScores === undefined) importanceScores = null;
      }
      return applyMethod(module, name, new this(...args), importanceScores);
    }
  }

  function resolve(module, name) {
    if (!(module instanceof Module)) throw typeError('prune: module must be a kd.nn.Module');
    const s = stateOf(module);
    const prop = [...s.params, ...s.buffers].find((n) => n === name || snake(n) === name);
    const known = registry.get(module);
    if (prop !== undefined) return prop;
    if (known) for (const p of known.keys()) if (p === name || snake(p) === name) return p;
    throw new KindlingError(`Parameter '${name}' of module ${module.constructor.name} has to be pruned`, 'KD_INVALID_ARGUMENT');
  }

  // BasePruningMethod.apply: see the file comment.
  function applyMethod(module, name, method, importanceScores) {
    if (!(module instanceof Module)) throw typeError('prune: module must be a kd.nn.Module');
    const s = stateOf(module);
    const known = registry.get(module) || new Map();
    let prop = [...known.keys()].find((p) => p === name || snake(p) === name);
    const old = prop === undefined ? null : known.get(prop);
    if (prop === undefined) {
      prop = [...s.params].find((n) => n === name || snake(n) === name);
      if (prop === undefined || !module[prop]) {
        throw new KindlingError(`Parameter '${name}' of module ${module.constructor.name} has to be a registered parameter`, 'KD_INVALID_ARGUMENT');
      }
    }
    let combined = method;
    if (old !== null) {
      old.handle.remove();
      if (old.method instanceof PruningContainer) { old.method.addPruningMethod(method); combined = old.method; } else {
        combined = new PruningContainer(old.method);
        combined.addPruningMethod(method);
      }
    }
    method._tensorName = prop;
    combined._tensorName = prop;
    const orig = old === null ? module[prop] : module[`${prop}Orig`];
    const scores = importanceScores === null ? orig : importanceScores;
    if (scores.shape.join() !== orig.shape.join()) throw new KindlingError('importance_scores should have the same shape as parameter', 'KD_SHAPE_MISMATCH');
    kd.noGrad(() => {
      let defaultMask;
      if (old === null) {
        delete module[prop];
        module[`${prop}Orig`] = orig;
        defaultMask = kd.onesLike(orig);
      } else {
        defaultMask = module[`${prop}Mask`].detach().clone();
      }
      const mask = combined.computeMask(scores, defaultMask);
      module.registerBuffer(`${prop}Mask`, mask);
    });
    module[prop] = combined.applyMask(module);
    const handle = module.registerForwardPreHook((m) => { m[prop] = combined.applyMask(m); });
    known.set(prop, { method: combined, handle });
    registry.set(module, known);
    return combined;
  }

  /** Several methods applied to one tensor in turn; each sees what the ones before left. */
  class PruningContainer extends BasePruningMethod {
    constructor(...methods) {
      super();
      this._pruningMethods = [];
      const list = methods.length === 1 && Array.isArray(methods[0]) ? methods[0] : methods;
      for (const m of list) this.addPruningMethod(m);
    }
    addPruningMethod(method) {
      if (!(method instanceof BasePruningMethod) && method !== null) throw typeError(`${typeof method} is not a BasePruningMethod subclass`);
      if (method !== null && this._tensorName !== null && method._tensorName !== null && this._tensorName !== method._tensorName) {
        throw new KindlingError(`Can only add pruning methods acting on the parameter named '${this._tensorName}' to PruningContainer. Found '${method._tensorName}'`,
          'KD_INVALID_ARGUMENT');
      }
      if (method !== null) this._pruningMethods.push(method);
    }
    get length() { return this._pruningMethods.length; }
    [Symbol.iterator]() { return this._pruningMethods[Symbol.iterator](); }
    /** The last method's mask over what defaultMask keeps, combined into defaultMask. */
    computeMask(t, defaultMask) {
      const method = this._pruningMethods[this._pruningMethods.length - 1];
      const type = method.PRUNING_TYPE;
      if (type === 'unstructured' || type === 'global') {
        if (type === 'global') return method.computeMask(t, defaultMask).to({ dtype: defaultMask.dtype });
        const keep = defaultMask.eq(1);
        const partial = method.computeMask(t.index(keep), defaultMask.index(keep));
        return defaultMask.clone().indexPut_(keep, partial.to({ dtype: defaultMask.dtype }));
      }
      if (type === 'structured') {
        let dim = method.dim;
        if (dim < 0) dim += t.ndim;
        const others = [];
        for (let d = 0; d < t.ndim; d++) if (d !== dim) others.push(d);
        const keepIdx = defaultMask.sum(others).ne(0).nonzero().reshape(-1);
        const partial = method.computeMask(t.indexSelect(dim, keepIdx), defaultMask.indexSelect(dim, keepIdx));
        return defaultMask.clone().indexCopy_(dim, keepIdx, partial.to({ dtype: defaultMask.dtype }));
      }
      throw new KindlingError(`Unrecognized PRUNING_TYPE ${type}`, 'KD_INVALID_ARGUMENT');
    }
  }
  PruningContainer.PRUNING_TYPE = 'unstructured';

  /** Prunes nothing (the mask is all ones). */
  class Identity extends BasePruningMethod {
    computeMask(t, defaultMask) { return defaultMask; }
  }
  Identity.PRUNING_TYPE = 'unstructured';

  // The unstructured methods: prune the `amount` entries that drop(t, n) picks (flat indices).
  class AmountUnstructured extends BasePruningMethod {
    constructor(amount) { super(); validateAmountInit(amount); this.amount = amount; }
    computeMask(t, defaultMask) {
      const size = t.numel();
      const n = nToPrune(this.amount, size);
      validateAmount(n, size);
      if (n === 0) return defaultMask.clone();
      return zeroAt(defaultMask, this.drop(t, n));
    }
  }

  /** Prunes `amount` entries chosen at random. */
  class RandomUnstructured extends AmountUnstructured {
    drop(t, n) { return kd.randLike(t, { dtype: 'float32' }).reshape(-1).topk(n).indices; }
  }
  RandomUnstructured.PRUNING_TYPE = 'unstructured';

  /** Prunes the `amount` entries of smallest absolute value. */
  class L1Unstructured extends AmountUnstructured {
    drop(t, n) { return t.abs().reshape(-1).topk(n, { largest: false }).indices; }
  }
  L1Unstructured.PRUNING_TYPE = 'unstructured';

  /** Prunes `amount` channels along dim (default -1) chosen at random. */
  class RandomStructured extends BasePruningMethod {
    constructor(amount, dim = -1) { super(); validateAmountInit(amount); this.amount = amount; this.dim = dim; }
    computeMask(t, defaultMask) {
      validateStructured(t);
      validateDim(t, this.dim);
      const size = t.shape[this.dim < 0 ? this.dim + t.ndim : this.dim];
      const n = nToPrune(this.amount, size);
      validateAmount(n, size);
      if (n === 0) return defaultMask.clone();
      const keep = kd.rand([size], { device: t.device }).topk(size - n).indices;
      return channelMask(t, this.dim, keep).mul(defaultMask.to({ dtype: t.dtype }));
    }
  }
  RandomStructured.PRUNING_TYPE = 'structured';

  /** Prunes the `amount` channels along dim (default -1) of smallest L`n` norm. */
  class LnStructured extends BasePruningMethod {
    constructor(amount, n, dim = -1) { super(); validateAmountInit(amount); this.amount = amount; this.n = n; this.dim = dim; }
    computeMask(t, defaultMask) {
      validateStructured(t);
      validateDim(t, this.dim);
      const d = this.dim < 0 ? this.dim + t.ndim : this.dim;
      const size = t.shape[d];
      const nPrune = nToPrune(this.amount, size);
      validateAmount(nPrune, size);
      if (nPrune === 0) return defaultMask.clone();
      const others = [];
      for (let i = 0; i < t.ndim; i++) if (i !== d) others.push(i);
      const p = this.n === 'fro' ? 2 : this.n;
      const norm = p === Infinity ? t.abs().amax(others) : t.abs().pow(p).sum(others).pow(1 / p);
      const keep = norm.topk(size - nPrune, { largest: true }).indices;
      return channelMask(t, d, keep).mul(defaultMask.to({ dtype: t.dtype }));
    }
  }
  LnStructured.PRUNING_TYPE = 'structured';

  /** Prunes where mask is 0. */
  class CustomFromMask extends BasePruningMethod {
    constructor(mask) { super(); this.mask = mask; }
    computeMask(t, defaultMask) {
      if (this.mask.shape.join() !== defaultMask.shape.join()) throw new KindlingError('mask and parameter shapes differ', 'KD_SHAPE_MISMATCH');
      return defaultMask.mul(this.mask.to({ dtype: defaultMask.dtype }));
    }
  }
  CustomFromMask.PRUNING_TYPE = 'global';

  const opts = (o) => (o && typeof o === 'object' && !(o instanceof kd.Tensor) ? o : {});
  const prune = {
    BasePruningMethod, PruningContainer, Identity, RandomUnstructured, L1Unstructured, RandomStructured, LnStructured, CustomFromMask,
    /** Adds a mask of ones to module[name] (the pruning reparametrisation, pruning nothing). */
    identity: (module, name) => { applyMethod(module, name, new Identity(), null); return module; },
    /** Prunes `amount` entries of module[name] at random. */
    randomUnstructured: (module, name, amount) => {
      if (typeof amount === 'object') ({ amount } = amount);
      applyMethod(module, name, new RandomUnstructured(amount), null);
      return module;
    },
    /** Prunes the `amount` entries of smallest |value| (or importanceScores). */
    l1Unstructured: (module, name, amount, options) => {
      if (typeof amount === 'object') { options = amount; ({ amount } = amount); }
      applyMethod(module, name, new L1Unstructured(amount), opts(options).importanceScores || null);
      return module;
    },
    /** Prunes `amount` channels along dim at random. */
    randomStructured: (module, name, amount, dim) => {
      if (typeof amount === 'object') ({ amount, dim } = amount);
      applyMethod(module, name, new RandomStructured(amount, dim), null);
      return module;
    },
    /** Prunes the `amount` channels along dim of smallest Ln norm (n: a number, Infinity or 'fro'). */
    lnStructured: (module, name, amount, n, dim, options) => {
      if (typeof amount === 'object') { options = amount; ({ amount, n, dim } = amount); }
      applyMethod(module, name, new LnStructured(amount, n, dim), opts(options).importanceScores || null);
      return module;
    },
    /** Prunes where mask is 0. */
    customFromMask: (module, name, mask) => { applyMethod(module, name, new CustomFromMask(mask), null); return module; },
    /**
     * Prunes the [module, name] pairs together: the method (an unstructured class, e.g.
     * prune.L1Unstructured, with options such as {amount}) sees all their entries at once.
     */
    globalUnstructured: (parameters, pruningMethod, options = {}) => {
      const { importanceScores = null, ...kwargs } = options;
      const pairs = [...parameters];
      if (typeof pruningMethod !== 'function') throw typeError('globalUnstructured: pruningMethod must be a pruning method class');
      // importanceScores: a Map from [module, name] pairs (matched by their items) to tensors
      const scoreOf = ([m, n]) => {
        if (importanceScores instanceof Map) for (const [k, v] of importanceScores) if (k[0] === m && k[1] === n) return v;
        return m[resolve(m, n)];
      };
      const flatScores = kd.cat(pairs.map((p) => scoreOf(p).reshape(-1)));
      const flatMask = kd.cat(pairs.map(([m, n]) => {
        const prop = resolve(m, n);
        const mk = m[`${prop}Mask`];
        return (mk ? mk : kd.onesLike(m[prop])).reshape(-1);
      }));
      const method = new pruningMethod(...Object.values(kwargs)); // eslint-disable-line new-cap
      if (method.PRUNING_TYPE !== 'unstructured') {
        throw typeError(`Only "unstructured" PRUNING_TYPE supported for the \`pruning_method\`. Found method ${pruningMethod.name} of type ${method.PRUNING_TYPE}`);
      }
      const container = new PruningContainer();
      container._tensorName = 'temp';
      method._tensorName = 'temp';
      container.addPruningMethod(method);
      const finalMask = kd.noGrad(() => container.computeMask(flatScores, flatMask));
      let off = 0;
      for (const [m, n] of pairs) {
        const p = m[resolve(m, n)];
        const k = p.numel();
        applyMethod(m, n, new CustomFromMask(finalMask.narrow(0, off, k).reshape(p.shape)), null);
        off += k;
      }
    },
    /** Makes the pruning of module[name] permanent and removes the mask and the hook. */
    remove: (module, name) => {
      const known = registry.get(module);
      const prop = known && [...known.keys()].find((p) => p === name || snake(p) === name);
      if (prop === undefined) throw new KindlingError(`Parameter '${name}' of module ${module.constructor.name} has to be pruned before pruning can be removed`, 'KD_INVALID_ARGUMENT');
      const { method, handle } = known.get(prop);
      handle.remove();
      method.remove(module);
      known.delete(prop);
      return module;
    },
    /** Whether module or any submodule has a pruned tensor. */
    isPruned: (module) => module.modules().some((m) => registry.has(m) && registry.get(m).size !== 0),
  };
  nn.utils.prune = prune;
};
