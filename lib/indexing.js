// indexing.js - PyTorch-style indexing for JS: kd.slice(start, stop, step), Tensor#index(key) and
// Tensor#indexPut_(key, values, accumulate). A key is an array (or one item) of integers (select),
// kd.slice objects, null (a new axis), '...' (the remaining dims), and index tensors / JS arrays of
// integers or booleans (advanced indexing). Basic items become views (select/slice/unsqueeze);
// the advanced items are then handed to the C op index / indexPut_ (aten::index.Tensor semantics:
// index tensors broadcast together; adjacent ones keep their place, separated ones go first).
// The function forms kd.index(t, indices) and kd.indexPut(t, indices, values) stay the raw ops
// (null = a full slice there). Also: nonzero's {asTuple} option and unique's single-tensor result.
'use strict';

const { typeError, KindlingError, KindlingRangeError } = require('./errors');

class Slice {
  constructor(start = null, stop = null, step = null) {
    this.start = start;
    this.stop = stop;
    this.step = step;
    Object.freeze(this);
  }
}

module.exports = function installIndexing(kd, Tensor) {
  const rawIndex = kd.index;
  const rawIndexPut_ = Tensor.prototype.indexPut_;
  const rawNonzero = kd.nonzero;
  const rawUnique = kd.unique;

  /** A Python-style slice start:stop:step for Tensor#index (null for a default bound). */
  kd.slice = (start = null, stop = null, step = null) => new Slice(start, stop, step);
  kd.Slice = Slice;

  const consumed = (it) => {
    if (it === null || it === '...') return 0;
    if (it instanceof Tensor) return it.dtype === 'bool' || it.dtype === 'uint8' ? it.ndim : 1;
    return 1;
  };

  // An index item as an index tensor on `device`, the indexed tensor's: JS arrays are made there,
  // and CPU index tensors index a tensor on any device, moved to it (as PyTorch's).
  function toIndexTensor(it, device) {
    if (it instanceof Tensor) {
      if (it.device === 'cpu' && device !== 'cpu') it = it.to(device);
      if (it.dtype === 'bool' || it.dtype === 'uint8' || it.dtype === 'int64') return it;
      if (it.dtype === 'int32' || it.dtype === 'int16' || it.dtype === 'int8') return it.to('int64');
      throw new KindlingRangeError('tensors used as indices must be long, int, byte or bool tensors', 'KD_INDEX_OUT_OF_RANGE');
    }
    const flat = it.flat(Infinity);
    const isBool = flat.length > 0 && flat.every((v) => typeof v === 'boolean');
    if (!isBool && !flat.every((v) => Number.isInteger(v) || typeof v === 'bigint')) {
      throw typeError('index arrays must hold integers or booleans');
    }
    return kd.tensor(it, { dtype: isBool ? 'bool' : 'int64', device });
  }

  // Lowers key on t: returns { view, adv } where adv is the aten-style list for the view (or null).
  function lower(t, key) {
    const items = Array.isArray(key) ? key : [key];
    let ell = 0;
    let used = 0;
    for (const it of items) {
      if (it === '...') ell++;
      else used += consumed(Array.isArray(it) ? toIndexTensor(it, 'cpu') : it);
    }
    if (ell > 1) throw new KindlingError('an index can only have a single ellipsis (\'...\')', 'KD_INVALID_ARGUMENT');
    if (used > t.ndim) {
      throw new KindlingRangeError(`too many indices for tensor of dimension ${t.ndim}`, 'KD_INDEX_OUT_OF_RANGE');
    }
    let view = t;
    let dim = 0;
    const adv = [];
    let hasAdv = false;
    for (let it of items) {
      if (typeof it === 'number' || typeof it === 'bigint') {
        if (!Number.isInteger(Number(it))) throw typeError('index must be an integer');
        view = view.select(dim, Number(it));
      } else if (it instanceof Slice) {
        const step = it.step == null ? 1 : it.step;
        if (step <= 0) throw new KindlingError('step must be greater than zero', 'KD_INVALID_ARGUMENT');
        view = view.slice(dim, it.start, it.stop, step);
        adv.push(null);
        dim++;
      } else if (it === null || it === undefined) {
        view = view.unsqueeze(dim);
        adv.push(null);
        dim++;
      } else if (it === '...') {
        const n = t.ndim - used;
        for (let i = 0; i < n; i++) adv.push(null);
        dim += n;
      } else if (it instanceof Tensor || Array.isArray(it)) {
        it = toIndexTensor(it, t.device);
        adv.push(it);
        hasAdv = true;
        dim += consumed(it);
      } else if (typeof it === 'boolean') {
        throw new KindlingError('boolean scalar indices are not supported; use a bool tensor', 'KD_NOT_SUPPORTED');
      } else {
        throw typeError(`unsupported index item ${String(it)}: use integers, kd.slice(), null, '...', tensors or arrays`);
      }
    }
    if (!hasAdv) return { view, adv: null };
    while (adv.length && adv[adv.length - 1] === null) adv.pop();
    return { view, adv };
  }

  /** PyTorch-style indexing (t[key] in Python): views for basic keys, a gather for advanced ones. */
  const isOpts = (k) => k !== null && typeof k === 'object' && !Array.isArray(k) && !(k instanceof Tensor) && !(k instanceof Slice);
  Tensor.prototype.index = function index(key) {
    if (isOpts(key)) key = key.indices;
    const { view, adv } = lower(this, key);
    return adv ? rawIndex(view, adv) : view;
  };

  /** t[key] = values (or += with accumulate), in place; key as in Tensor#index. */
  Tensor.prototype.indexPut_ = function indexPut_(key, values, accumulate = false) {
    if (isOpts(key)) ({ indices: key, values, accumulate = false } = key);
    if (accumulate !== null && typeof accumulate === 'object') accumulate = !!accumulate.accumulate;
    const { view, adv } = lower(this, key);
    // values given as numbers or arrays are made on this tensor's device; a 0-d CPU tensor moves
    // there (PyTorch's index_put_ does the same)
    let v = values instanceof Tensor ? values : kd.tensor(values, { dtype: this.dtype, device: this.device });
    if (v.ndim === 0 && v.device === 'cpu' && this.device !== 'cpu') v = v.to(this.device);
    if (adv) rawIndexPut_.call(view, adv, v.dtype === this.dtype ? v : v.to(this.dtype), accumulate);
    else if (accumulate) view.add_(v);
    else view.copy_(v);
    return this;
  };

  function nonzero(self, opts) {
    if (opts && typeof opts === 'object' && opts.asTuple) {
      const nz = rawNonzero(self.ndim === 0 ? self.reshape([1]) : self);
      const out = [];
      for (let i = 0; i < nz.shape[1]; i++) out.push(nz.select(1, i).contiguous());
      return out;
    }
    return rawNonzero(self);
  }
  kd.nonzero = nonzero;
  Tensor.prototype.nonzero = function (opts) { return nonzero(this, opts); };

  function unique(...args) {
    const r = rawUnique(...args);
    return r.length === 1 ? r[0] : r;
  }
  kd.unique = unique;
  Tensor.prototype.unique = function (...args) { return unique(this, ...args); };
};
