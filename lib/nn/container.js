// container.js - kd.nn containers: Sequential (runs its modules in order), ModuleList and
// ModuleDict (hold modules so they are registered; no forward). Items are registered as
// properties named '0', '1', ... (Sequential, ModuleList) or by key (ModuleDict), so
// `seq[0]`, `list[1]`, `dict.fc` work and the state-dict keys are PyTorch's ('0.weight').
'use strict';

const { KindlingError, KindlingRangeError, typeError } = require('../errors');

module.exports = function installContainer(kd, nn, { Module, isPlainObject, stateOf, typeName }) {
  function checkModule(m, what) {
    if (!(m instanceof Module)) throw typeError(`${what}: ${typeName(m)} is not a Module subclass`);
    return m;
  }

  // Shared by Sequential and ModuleList: items under the keys '0'..'n-1'.
  class IndexedContainer extends Module {
    /** The number of items. */
    get length() { return stateOf(this).modules.size; }
    _index(i, what) {
      const n = this.length;
      if (!Number.isInteger(i) || i < -n || i >= n) throw new KindlingRangeError(`index ${i} is out of range`);
      return i < 0 ? i + n : i;
    }
    /** The item at i (negative counts from the end). */
    at(i) { return this[String(this._index(i))]; }
    /** Replaces the item at i. */
    set(i, module) { this[String(this._index(i))] = checkModule(module, 'set'); }
    _items() { const out = []; for (let i = 0; i < this.length; i++) out.push(this[String(i)]); return out; }
    _reset(items) {
      for (let i = 0; i < this.length + items.length + 1; i++) if (Object.prototype.hasOwnProperty.call(this, String(i))) delete this[String(i)];
      items.forEach((m, i) => { this[String(i)] = m; });
    }
    /** Adds a module at the end. Returns this. */
    append(module) { this[String(this.length)] = checkModule(module, 'append'); return this; }
    /** Adds modules at the end. Returns this. */
    extend(modules) { for (const m of modules) this.append(m); return this; }
    /** Inserts a module before index. */
    insert(index, module) {
      checkModule(module, 'insert');
      const items = this._items();
      const n = items.length;
      if (!Number.isInteger(index)) throw typeError('insert(): index must be an integer');
      let i = index < 0 ? index + n : index;
      i = Math.max(0, Math.min(n, i));
      items.splice(i, 0, module);
      this._reset(items);
    }
    /** Removes and returns the item at i (default the last). */
    pop(i = -1) {
      const k = this._index(i);
      const items = this._items();
      const [m] = items.splice(k, 1);
      this._reset(items);
      return m;
    }
    /** A new container of the same class holding items start..end. */
    slice(start, end) { return new this.constructor(...this._items().slice(start, end)); }
    [Symbol.iterator]() { return this._items()[Symbol.iterator](); }
  }

  /** Runs modules in order, each on the previous one's output. Sequential(m1, m2, ...) or Sequential({name: m, ...}). */
  class Sequential extends IndexedContainer {
    constructor(...modules) {
      super();
      if (modules.length === 1 && (isPlainObject(modules[0]) || modules[0] instanceof Map)) {
        const entries = modules[0] instanceof Map ? [...modules[0]] : Object.entries(modules[0]);
        for (const [k, m] of entries) this.registerModule(k, checkModule(m, 'Sequential'));
        this._named = true;
        return;
      }
      modules.forEach((m, i) => { this[String(i)] = checkModule(m, 'Sequential'); });
    }
    _items() { return [...stateOf(this).modules].map((k) => this[k]); }
    at(i) { return this._items()[this._index(i)]; }
    set(i, module) { this[[...stateOf(this).modules][this._index(i)]] = checkModule(module, 'set'); }
    append(module) {
      if (this._named) throw new KindlingError('append() on a Sequential built from named modules: use registerModule', 'KD_NOT_SUPPORTED');
      return super.append(module);
    }
    forward(input) {
      let x = input;
      for (const name of stateOf(this).modules) {
        const m = this[name];
        if (m) x = m(x);
      }
      return x;
    }
  }

  /** Holds modules in a list (registered, so their parameters belong to the owner). */
  class ModuleList extends IndexedContainer {
    constructor(modules) {
      super();
      if (modules !== undefined && modules !== null) {
        if (typeof modules[Symbol.iterator] !== 'function') throw typeError(`ModuleList(modules): modules must be iterable, got ${typeName(modules)}`);
        for (const m of modules) this.append(m);
      }
    }
    slice(start, end) { return new ModuleList(this._items().slice(start, end)); }
    forward() { throw new KindlingError('ModuleList has no forward(); call its items', 'KD_NOT_SUPPORTED'); }
  }

  /** Holds modules by name: get/set/has/delete/keys/values/entries; items are also properties (dict.fc). */
  class ModuleDict extends Module {
    constructor(modules) {
      super();
      if (modules !== undefined && modules !== null) this.update(modules);
    }
    get length() { return stateOf(this).modules.size; }
    /** The module under key. */
    get(key) {
      if (!stateOf(this).modules.has(key)) throw new KindlingError(`KeyError: '${key}'`, 'KD_INVALID_ARGUMENT');
      return this[key];
    }
    /** Adds or replaces the module under key. */
    set(key, module) { this.registerModule(key, checkModule(module, 'ModuleDict.set')); }
    has(key) { return stateOf(this).modules.has(key); }
    /** Removes and returns the module under key. */
    pop(key) { const m = this.get(key); delete this[key]; return m; }
    delete(key) { const had = this.has(key); if (had) delete this[key]; return had; }
    clear() { for (const k of [...stateOf(this).modules]) delete this[k]; }
    keys() { return [...stateOf(this).modules]; }
    values() { return this.keys().map((k) => this[k]); }
    entries() { return this.keys().map((k) => [k, this[k]]); }
    /** Adds the entries of a plain object, Map or array of [key, module] pairs. */
    update(modules) {
      const entries = modules instanceof Map || Array.isArray(modules) ? [...modules]
        : isPlainObject(modules) || modules instanceof ModuleDict ? (modules instanceof ModuleDict ? modules.entries() : Object.entries(modules))
          : null;
      if (entries === null) throw typeError(`ModuleDict.update should be called with an object, a Map or [key, module] pairs, but got ${typeName(modules)}`);
      for (const [k, m] of entries) this.set(k, m);
    }
    [Symbol.iterator]() { return this.keys()[Symbol.iterator](); }
    forward() { throw new KindlingError('ModuleDict has no forward(); call its items', 'KD_NOT_SUPPORTED'); }
  }

  Object.assign(nn, { Sequential, ModuleList, ModuleDict });
};
