// parameter_containers.js - kd.nn.ParameterList and kd.nn.ParameterDict: parameters held in a
// list or by key, registered on the container (so an owner's parameters() and stateDict() hold
// them, under '0', '1', ... or the keys). A Tensor that is not a Parameter is made one (sharing
// its storage), as PyTorch 1.13 does.
'use strict';

const { KindlingError, KindlingRangeError, typeError } = require('../errors');

module.exports = function installParameterContainers(kd, nn, { Module, Parameter, ParameterClass, isPlainObject, stateOf, typeName }) {
  const asParam = (v) => (v instanceof ParameterClass || !(v instanceof kd.Tensor) ? v : new Parameter(v));

  // PyTorch's extra_repr line of one item: '(0): Parameter containing: [torch.float32 of size 2x3]'
  function itemLine(k, p) {
    if (!(p instanceof kd.Tensor)) return `  (${k}): Object of type: ${typeName(p)}`;
    const size = p.shape.join('x');
    const dev = p.device.startsWith('cuda') ? ` (GPU ${Number(p.device.slice(5)) || 0})` : '';
    const dtype = { float32: 'float32', float64: 'float64', float16: 'float16', bfloat16: 'bfloat16' }[p.dtype] || p.dtype;
    return `  (${k}): ${p instanceof ParameterClass ? 'Parameter' : 'Tensor'} containing: [torch.${dtype} of size ${size}${dev}]`;
  }

  /** Parameters in a list: list.at(i), list[i], append, extend, length, iteration. */
  class ParameterList extends Module {
    constructor(values) {
      super();
      Object.defineProperty(this, '_size', { value: 0, writable: true });
      if (values !== undefined && values !== null) {
        if (typeof values[Symbol.iterator] !== 'function') throw typeError(`ParameterList(values): values must be iterable, got ${typeName(values)}`);
        this.extend(values);
      }
    }
    /** The number of items. */
    get length() { return this._size; }
    _index(i) {
      const n = this._size;
      if (!Number.isInteger(i) || i < -n || i >= n) throw new KindlingRangeError(`index ${i} is out of range`);
      return i < 0 ? i + n : i;
    }
    /** The item at i (negative counts from the end). */
    at(i) { return this[String(this._index(i))]; }
    /** Replaces the item at i (a Tensor becomes a Parameter). */
    set(i, value) { this._put(String(this._index(i)), value); }
    _put(key, value) {
      const v = asParam(value);
      if (v instanceof ParameterClass) this.registerParameter(key, v);
      else {
        if (stateOf(this).params.has(key)) delete this[key];
        this[key] = v;
      }
    }
    /** Adds a value at the end. Returns this. */
    append(value) { this._put(String(this._size), value); this._size += 1; return this; }
    /** Adds values at the end. Returns this. */
    extend(values) {
      if (values === null || values === undefined || typeof values[Symbol.iterator] !== 'function') {
        throw typeError(`ParameterList.extend should be called with an iterable, but got ${typeName(values)}`);
      }
      for (const v of [...values]) this.append(v);
      return this;
    }
    [Symbol.iterator]() { const out = []; for (let i = 0; i < this._size; i++) out.push(this[String(i)]); return out[Symbol.iterator](); }
    extraRepr() { return [...this].map((p, i) => itemLine(i, p)).join('\n'); }
    forward() { throw new KindlingError('ParameterList has no forward(); use its items', 'KD_NOT_SUPPORTED'); }
  }

  /** Parameters by key: get/set/has/delete/pop/keys/values/entries/update/clear; items are also properties. */
  class ParameterDict extends Module {
    constructor(parameters) {
      super();
      Object.defineProperty(this, '_keys', { value: [], writable: true });
      if (parameters !== undefined && parameters !== null) this.update(parameters);
    }
    get length() { return this._keys.length; }
    /** The value under key (a KeyError when absent, unless a default is given). */
    get(key, ...dflt) {
      if (!this.has(key)) {
        if (dflt.length) return dflt[0];
        throw new KindlingError(`KeyError: '${key}'`, 'KD_INVALID_ARGUMENT');
      }
      return this[key];
    }
    /** Adds or replaces the value under key (a Tensor becomes a Parameter). */
    set(key, value) {
      if (typeof key !== 'string') throw typeError(`ParameterDict keys must be strings, got ${typeName(key)}`);
      const v = asParam(value);
      if (v instanceof ParameterClass) this.registerParameter(key, v);
      else {
        if (stateOf(this).params.has(key)) delete this[key];
        this[key] = v;
      }
      if (!this._keys.includes(key)) this._keys.push(key);
    }
    has(key) { return this._keys.includes(key); }
    /** Removes and returns the value under key. */
    pop(key) { const v = this.get(key); this.delete(key); return v; }
    /** Removes and returns the last [key, value] pair. */
    popitem() {
      if (!this._keys.length) throw new KindlingError("KeyError: 'popitem(): dictionary is empty'", 'KD_INVALID_ARGUMENT');
      const k = this._keys[this._keys.length - 1];
      return [k, this.pop(k)];
    }
    /** The value under key; sets it to value first when absent. */
    setdefault(key, value = null) { if (!this.has(key)) this.set(key, value); return this[key]; }
    delete(key) {
      const had = this.has(key);
      if (had) { delete this[key]; this._keys = this._keys.filter((k) => k !== key); }
      return had;
    }
    clear() { for (const k of [...this._keys]) this.delete(k); }
    keys() { return this._keys.slice(); }
    values() { return this._keys.map((k) => this[k]); }
    entries() { return this._keys.map((k) => [k, this[k]]); }
    items() { return this.entries(); }
    /** A new ParameterDict holding the same parameters. */
    copy() { return new ParameterDict(this.entries()); }
    /** Adds the entries of a plain object, Map, ParameterDict or array of [key, value] pairs. */
    update(parameters) {
      const entries = parameters instanceof ParameterDict ? parameters.entries()
        : parameters instanceof Map || Array.isArray(parameters) ? [...parameters]
          : isPlainObject(parameters) ? Object.entries(parameters) : null;
      if (entries === null) throw typeError(`ParametersDict.update should be called with an iterable of key/value pairs, but got ${typeName(parameters)}`);
      for (const e of entries) {
        if (!Array.isArray(e) || e.length !== 2) throw typeError('ParameterDict update sequence element has to be a [key, value] pair');
        this.set(e[0], e[1]);
      }
    }
    /** A ParameterDict of keys, each holding value (default null). */
    static fromkeys(keys, value = null) { return new ParameterDict([...keys].map((k) => [k, value])); }
    [Symbol.iterator]() { return this.keys()[Symbol.iterator](); }
    extraRepr() { return this.entries().map(([k, p]) => itemLine(k, p)).join('\n'); }
    forward() { throw new KindlingError('ParameterDict has no forward(); use its items', 'KD_NOT_SUPPORTED'); }
  }

  Object.assign(nn, { ParameterList, ParameterDict });
};
