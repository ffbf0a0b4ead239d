// dataset.js - kd.data.Dataset (the base class), IterableDataset, TensorDataset, ConcatDataset,
// ChainDataset, Subset and randomSplit, as torch.utils.data.dataset in PyTorch 1.13.
//
// An iterable-style dataset (IterableDataset, or any object with [Symbol.iterator] or
// [Symbol.asyncIterator] and no get) is a stream of samples; DataLoader batches it in order.
//
// A dataset has `length` and `get(i)` (a sample, or a Promise of one for datasets that load
// lazily). Datasets may also have `getBatch(indices)`, returning the collated batch for those
// indices at once: DataLoader uses it (with the default collate) instead of getting and stacking
// samples one by one. TensorDataset's getBatch is one indexSelect per tensor.
//
// Row tensors: a dataset whose samples are rows (dim 0) of CPU tensors says so with
// `rowTensors()`, returning those tensors as an array or a plain object (TensorDataset returns
// its tensors; a Subset of such a dataset has the same rows, through its indices). The batch for
// `indices` is then the same array/object of t.indexSelect(0, indices), which DataLoader's
// `for await` gathers natively in the background (kd.data.gatherRows, on the libuv thread pool).
// A getBatch of the dataset's own takes precedence (it may do more than gather rows).
'use strict';

const { KindlingError, typeError } = require('../errors');
const { Generator } = require('./generator');

const invalidArg = (msg) => new KindlingError(msg, 'KD_INVALID_ARGUMENT');

module.exports = function makeDatasets(kd, Tensor, drawSeed) {
  class Dataset {
    /** The sample at index i (subclasses implement it). */
    get(i) { throw new KindlingError(`${this.constructor.name}.get() is not implemented`, 'KD_NOT_SUPPORTED'); }
    /** The number of samples (subclasses implement it). */
    get length() { throw new KindlingError(`${this.constructor.name}.length is not implemented`, 'KD_NOT_SUPPORTED'); }
  }

  function checkIndex(i, n, what) {
    if (!Number.isInteger(i)) throw typeError(`${what}: index must be an integer, got ${String(i)}`);
    if (i < -n || i >= n) throw new kd.KindlingRangeError(`${what}: index ${i} is out of range for a dataset of ${n} samples`);
    return i < 0 ? i + n : i;
  }

  // An int64 index tensor from an array of non-negative integers.
  function indexTensor(indices) {
    const a = new BigInt64Array(indices.length);
    for (let i = 0; i < indices.length; i++) a[i] = BigInt(indices[i]);
    return kd.tensor(a);
  }

  class TensorDataset extends Dataset {
    /** Samples are the i-th rows of each tensor: get(i) -> [t0[i], t1[i], ...]. */
    constructor(...tensors) {
      super();
      if (tensors.length === 1 && Array.isArray(tensors[0])) tensors = tensors[0];
      if (tensors.length === 0) throw invalidArg('TensorDataset: expected at least one tensor');
      for (const t of tensors) {
        if (!(t instanceof Tensor)) throw typeError('TensorDataset: every argument must be a Tensor');
        if (t.ndim === 0) throw invalidArg('TensorDataset: tensors must have at least one dimension');
      }
      const n = tensors[0].shape[0];
      if (!tensors.every((t) => t.shape[0] === n)) throw invalidArg('Size mismatch between tensors');
      this.tensors = tensors;
    }
    get length() { return this.tensors[0].shape[0]; }
    get(i) {
      const j = checkIndex(i, this.length, 'TensorDataset.get');
      return this.tensors.map((t) => t.select(0, j));
    }
    /** The tensors whose rows are the samples (see the file header): this.tensors. */
    rowTensors() { return this.tensors; }
    /** [t0[indices], t1[indices], ...]: one indexSelect per tensor. */
    getBatch(indices) {
      const n = this.length;
      const idx = indices.map((i) => checkIndex(i, n, 'TensorDataset.getBatch'));
      const index = indexTensor(idx);
      try {
        return this.tensors.map((t) => t.indexSelect(0, index));
      } finally {
        index.dispose();
      }
    }
  }

  class IterableDataset extends Dataset {
    /** Subclasses implement [Symbol.iterator]() or [Symbol.asyncIterator]() (the samples). */
    get(i) { void i; throw new KindlingError(`${this.constructor.name} is an IterableDataset: iterate it`, 'KD_NOT_SUPPORTED'); }
    get length() { throw typeError(`object of type ${this.constructor.name} has no length`); }
  }

  const isMapStyle = (ds) => ds !== null && typeof ds === 'object' && !(ds instanceof IterableDataset) && typeof ds.get === 'function';
  const isIterableStyle = (ds) => ds !== null && typeof ds === 'object' && !isMapStyle(ds) && !Array.isArray(ds) && !ArrayBuffer.isView(ds)
    && (typeof ds[Symbol.iterator] === 'function' || typeof ds[Symbol.asyncIterator] === 'function');

  class ConcatDataset extends Dataset {
    /** The samples of several map-style datasets, one after the other. */
    constructor(datasets) {
      super();
      if (datasets === null || typeof datasets !== 'object' || typeof datasets[Symbol.iterator] !== 'function') {
        throw typeError('ConcatDataset: datasets must be an iterable of datasets');
      }
      this.datasets = Array.from(datasets);
      if (this.datasets.length === 0) throw invalidArg('datasets should not be an empty iterable');
      for (const d of this.datasets) {
        if (d instanceof IterableDataset || isIterableStyle(d)) throw invalidArg('ConcatDataset does not support IterableDataset');
        if (!isMapStyle(d)) throw typeError('ConcatDataset: every dataset must have get(i) and length');
      }
      this.cumulativeSizes = [];
      let acc = 0;
      for (const d of this.datasets) { acc += d.length; this.cumulativeSizes.push(acc); }
    }
    get length() { return this.cumulativeSizes[this.cumulativeSizes.length - 1]; }
    get(idx) {
      if (!Number.isInteger(idx)) throw typeError(`ConcatDataset.get: index must be an integer, got ${String(idx)}`);
      const n = this.length;
      if (idx < 0) {
        if (-idx > n) throw invalidArg('absolute value of index should not exceed dataset length');
        idx += n;
      }
      if (idx >= n) throw new kd.KindlingRangeError(`ConcatDataset.get: index ${idx} is out of range for a dataset of ${n} samples`);
      let lo = 0;
      let hi = this.cumulativeSizes.length;
      while (lo < hi) { // bisect_right
        const mid = (lo + hi) >> 1;
        if (idx < this.cumulativeSizes[mid]) hi = mid; else lo = mid + 1;
      }
      const sampleIdx = lo === 0 ? idx : idx - this.cumulativeSizes[lo - 1];
      return this.datasets[lo].get(sampleIdx);
    }
  }

  class ChainDataset extends IterableDataset {
    /** The samples of several iterable-style datasets, one after the other (chained lazily). */
    constructor(datasets) {
      super();
      if (datasets === null || typeof datasets !== 'object' || typeof datasets[Symbol.iterator] !== 'function') {
        throw typeError('ChainDataset: datasets must be an iterable of datasets');
      }
      this.datasets = Array.from(datasets);
      for (const d of this.datasets) {
        if (!(d instanceof IterableDataset) && !isIterableStyle(d)) throw invalidArg('ChainDataset only supports IterableDataset');
      }
    }
    * [Symbol.iterator]() {
      for (const d of this.datasets) {
        if (typeof d[Symbol.iterator] !== 'function') throw typeError('ChainDataset: a dataset is async-only; iterate with `for await`');
        yield* d;
      }
    }
    async* [Symbol.asyncIterator]() {
      for (const d of this.datasets) {
        if (typeof d[Symbol.asyncIterator] === 'function') yield* d[Symbol.asyncIterator]();
        else yield* d;
      }
    }
    get length() {
      let total = 0;
      for (const d of this.datasets) {
        if (d instanceof IterableDataset || isIterableStyle(d)) total += d.length; // throws for datasets without one
      }
      return total;
    }
  }

  class Subset extends Dataset {
    /** The samples of `dataset` at `indices`, in that order. */
    constructor(dataset, indices) {
      super();
      if (dataset === null || typeof dataset !== 'object' || typeof dataset.get !== 'function') {
        throw typeError('Subset: dataset must have get(i) and length');
      }
      if (!Array.isArray(indices) && !ArrayBuffer.isView(indices)) throw typeError('Subset: indices must be an array of integers');
      const n = dataset.length;
      this.indices = Array.from(indices, (i) => checkIndex(Number(i), n, 'Subset'));
      this.dataset = dataset;
    }
    get length() { return this.indices.length; }
    get(i) { return this.dataset.get(this.indices[checkIndex(i, this.indices.length, 'Subset.get')]); }
  }
  // Only subsets of datasets with getBatch get one (so DataLoader's fast path follows).
  Object.defineProperty(Subset.prototype, 'getBatch', {
    configurable: true,
    get() {
      if (typeof this.dataset.getBatch !== 'function') return undefined;
      return (indices) => {
        const n = this.indices.length;
        return this.dataset.getBatch(indices.map((i) => this.indices[checkIndex(i, n, 'Subset.getBatch')]));
      };
    },
  });

  // The row source of a dataset for DataLoader's background gathers: {tensors, keys, map} where
  // keys (null for an array) name the tensors of an object-shaped batch and map(indices) turns
  // dataset indices into rows; null when the dataset has no row tensors, a getBatch of its own,
  // or tensors off the CPU (those keep the main-thread path).
  function rowSource(ds) {
    if (ds instanceof Subset) {
      const inner = rowSource(ds.dataset);
      if (!inner) return null;
      const n = ds.indices.length;
      return { ...inner, map: (indices) => inner.map(indices.map((i) => ds.indices[checkIndex(i, n, 'Subset.getBatch')])) };
    }
    if (ds === null || typeof ds !== 'object' || typeof ds.rowTensors !== 'function') return null;
    if (typeof ds.getBatch === 'function' && ds.getBatch !== TensorDataset.prototype.getBatch) return null;
    const rt = ds.rowTensors();
    const isArr = Array.isArray(rt);
    if (!isArr && (rt === null || typeof rt !== 'object' || Object.getPrototypeOf(rt) !== Object.prototype)) {
      throw typeError(`${ds.constructor.name}.rowTensors() must return an array or a plain object of tensors`);
    }
    const keys = isArr ? null : Object.keys(rt);
    const tensors = isArr ? rt.slice() : keys.map((k) => rt[k]);
    if (tensors.length === 0) throw invalidArg(`${ds.constructor.name}.rowTensors() returned no tensors`);
    for (const t of tensors) {
      if (!(t instanceof Tensor)) throw typeError(`${ds.constructor.name}.rowTensors() must return tensors`);
      if (t.ndim === 0) throw invalidArg(`${ds.constructor.name}.rowTensors(): tensors must have at least one dimension`);
    }
    const n0 = tensors[0].shape[0];
    if (!tensors.every((t) => t.shape[0] === n0)) throw invalidArg('Size mismatch between tensors');
    if (!tensors.every((t) => t.device === 'cpu')) return null;
    return { tensors, keys, map: (indices) => indices };
  }

  // A generator for one use: the one given, one seeded with `seed`, or null.
  function resolveGenerator(opts, where) {
    const { generator, seed } = opts;
    if (generator !== undefined && generator !== null) {
      if (seed !== undefined && seed !== null) throw typeError(`${where}: give either generator or seed, not both`);
      if (!(generator instanceof Generator)) throw typeError(`${where}: generator must be a kd.data.Generator`);
      return generator;
    }
    if (seed !== undefined && seed !== null) return new Generator(seed);
    return null;
  }

  /**
   * Splits a dataset into non-overlapping Subsets of the given lengths (integers summing to the
   * dataset's length) or fractions (summing to 1: floor(f * n) each, the remainder dealt one by
   * one from the first split), as torch.utils.data.random_split: the indices are
   * generator.randperm(n). The third argument is a kd.data.Generator or {generator} or {seed};
   * without one, the permutation's generator is seeded from kindling's global generator.
   */
  function randomSplit(dataset, lengths, options = {}) {
    if (!isMapStyle(dataset)) throw typeError('randomSplit: dataset must have get(i) and length');
    if (!Array.isArray(lengths) || !lengths.every((x) => typeof x === 'number' && Number.isFinite(x))) {
      throw typeError('randomSplit: lengths must be an array of numbers');
    }
    if (options instanceof Generator) options = { generator: options };
    if (options === null || typeof options !== 'object') throw typeError('randomSplit: options must be a kd.data.Generator or an object');
    const n = dataset.length;
    let sizes = lengths;
    const total = lengths.reduce((a, b) => a + b, 0);
    if (Math.abs(total - 1) <= 1e-9 * Math.max(1, Math.abs(total)) && total <= 1) { // math.isclose(sum, 1) and sum <= 1
      sizes = lengths.map((f, i) => {
        if (f < 0 || f > 1) throw invalidArg(`Fraction at index ${i} is not between 0 and 1`);
        return Math.floor(n * f);
      });
      const rest = n - sizes.reduce((a, b) => a + b, 0);
      for (let i = 0; i < rest; i++) sizes[i % sizes.length] += 1;
      sizes.forEach((len, i) => {
        if (len === 0) process.emitWarning(`Length of split at index ${i} is 0. This might result in an empty dataset.`);
      });
    } else if (!lengths.every((x) => Number.isInteger(x) && x >= 0)) {
      throw invalidArg('randomSplit: lengths must be non-negative integers, or fractions summing to 1');
    }
    if (sizes.reduce((a, b) => a + b, 0) !== n) {
      throw invalidArg('Sum of input lengths does not equal the length of the input dataset!');
    }
    const gen = resolveGenerator(options, 'randomSplit') || new Generator(drawSeed(null));
    const perm = gen.permutation(n, `randomSplit: shuffling a dataset of ${n} samples`);
    const out = [];
    let off = 0;
    for (const s of sizes) {
      out.push(new Subset(dataset, perm.slice(off, off + s)));
      off += s;
    }
    return out;
  }

  return {
    Dataset, IterableDataset, TensorDataset, ConcatDataset, ChainDataset, Subset, randomSplit,
    resolveGenerator, rowSource, isMapStyle, isIterableStyle,
  };
};
