// sampler.js - kd.data samplers, as torch.utils.data.sampler in PyTorch 1.13: Sampler (the base
// class), SequentialSampler, RandomSampler, SubsetRandomSampler, WeightedRandomSampler and
// BatchSampler. A sampler is an iterable of dataset indices (`for (const i of sampler)`) with a
// `length`; any JS iterable of integers (an array, a generator) works where a sampler is asked
// for. With a kd.data.Generator seeded as torch.Generator().manual_seed(s), the random samplers
// yield PyTorch's indices in PyTorch's order (see lib/data/generator.js); without one, a seed is
// drawn from kindling's global generator for each pass (kd.manualSeed makes it reproducible).
'use strict';

const { KindlingError, typeError } = require('../errors');
const { Generator, fitsArray } = require('./generator');

const valueError = (msg) => new KindlingError(msg, 'KD_INVALID_ARGUMENT');
const TWO63 = 1n << 63n;

module.exports = function makeSamplers(kd) {
  // A seed as torch.empty((), dtype=torch.int64).random_(generator=g) draws it: random64() mod
  // 2^63 from `gen`, or (no generator) 63 bits from kindling's global generator.
  function drawSeed(gen) {
    if (gen) return gen.random64() % TWO63;
    const r = kd.randint(0, 2 ** 31, [3], { dtype: 'int64' });
    const d = r.dataSync();
    r.dispose();
    return ((BigInt(d[0]) << 32n) | (BigInt(d[1]) << 1n) | (BigInt(d[2]) & 1n)) % TWO63;
  }

  function checkGenerator(generator, where) {
    if (generator === undefined || generator === null) return null;
    if (!(generator instanceof Generator)) throw typeError(`${where}: generator must be a kd.data.Generator`);
    return generator;
  }

  function lengthOf(x, where) {
    const n = x === null || x === undefined ? undefined : x.length;
    if (!Number.isSafeInteger(n) || n < 0) throw typeError(`${where}: expected an object with a non-negative integer length, got ${String(n)}`);
    return n;
  }

  class Sampler {
    /** The base class: subclasses implement [Symbol.iterator]() (indices) and, usually, length. */
    constructor(dataSource) { void dataSource; }
    [Symbol.iterator]() { throw new KindlingError(`${this.constructor.name}[Symbol.iterator] is not implemented`, 'KD_NOT_SUPPORTED'); }
  }

  class SequentialSampler extends Sampler {
    /** 0, 1, ..., dataSource.length - 1. */
    constructor(dataSource) {
      super(dataSource);
      lengthOf(dataSource, 'SequentialSampler');
      this.dataSource = dataSource;
    }
    * [Symbol.iterator]() {
      const n = this.dataSource.length;
      for (let i = 0; i < n; i++) yield i;
    }
    get length() { return this.dataSource.length; }
  }

  class RandomSampler extends Sampler {
    /**
     * Random indices of dataSource: a permutation per pass (numSamples beyond the length take
     * further permutations), or, with replacement, numSamples independent draws.
     */
    constructor(dataSource, replacement = false, numSamples = null, generator = null) {
      super(dataSource);
      if (replacement !== null && typeof replacement === 'object') ({ replacement = false, numSamples = null, generator = null } = replacement);
      lengthOf(dataSource, 'RandomSampler');
      this.dataSource = dataSource;
      this.replacement = replacement;
      this._numSamples = numSamples;
      this.generator = checkGenerator(generator, 'RandomSampler');
      if (typeof replacement !== 'boolean') throw typeError(`replacement should be a boolean value, but got replacement=${String(replacement)}`);
      const ns = this.numSamples;
      if (!Number.isSafeInteger(ns) || ns <= 0) throw valueError(`num_samples should be a positive integer value, but got num_samples=${String(ns)}`);
    }
    get numSamples() { return this._numSamples === null || this._numSamples === undefined ? this.dataSource.length : this._numSamples; }
    get length() { return this.numSamples; }
    * [Symbol.iterator]() {
      const n = this.dataSource.length;
      const gen = this.generator || new Generator(drawSeed(null));
      const ns = this.numSamples;
      if (this.replacement) {
        for (let k = 0; k < Math.floor(ns / 32); k++) yield* gen.randint(n, 32);
        yield* gen.randint(n, ns % 32);
        return;
      }
      for (let k = 0; k < Math.floor(ns / n); k++) yield* gen.permutation(n, `RandomSampler: shuffling a dataset of ${n} samples`);
      const last = gen.permutation(n, `RandomSampler: shuffling a dataset of ${n} samples`);
      yield* last.subarray(0, ns % n);
    }
  }

  class SubsetRandomSampler extends Sampler {
    /** The given indices in a random order (a permutation per pass). */
    constructor(indices, generator = null) {
      super(null);
      if (generator !== null && typeof generator === 'object' && !(generator instanceof Generator)) ({ generator = null } = generator);
      if (!Array.isArray(indices) && !ArrayBuffer.isView(indices)) throw typeError('SubsetRandomSampler: indices must be an array of integers');
      this.indices = indices;
      this.generator = checkGenerator(generator, 'SubsetRandomSampler');
    }
    get length() { return this.indices.length; }
    * [Symbol.iterator]() {
      const gen = this.generator || new Generator(drawSeed(null));
      for (const i of gen.permutation(this.indices.length, 'SubsetRandomSampler')) yield this.indices[i];
    }
  }

  class WeightedRandomSampler extends Sampler {
    /** numSamples indices of weights, drawn with probabilities proportional to the weights. */
    constructor(weights, numSamples, replacement = true, generator = null) {
      super(null);
      if (replacement !== null && typeof replacement === 'object') ({ replacement = true, generator = null } = replacement);
      if (!Number.isSafeInteger(numSamples) || numSamples <= 0) {
        throw valueError(`num_samples should be a positive integer value, but got num_samples=${String(numSamples)}`);
      }
      if (typeof replacement !== 'boolean') throw valueError(`replacement should be a boolean value, but got replacement=${String(replacement)}`);
      let w = weights;
      if (w instanceof kd.Tensor) {
        if (w.ndim !== 1) throw valueError(`weights should be a 1d sequence but given weights have shape (${w.shape.join(', ')}${w.ndim === 1 ? ',' : ''})`);
        w = Array.from(w.to('cpu').dataSync(), Number);
      } else if (Array.isArray(w) || (ArrayBuffer.isView(w) && !(w instanceof DataView))) {
        if (Array.isArray(w) && w.some((x) => typeof x !== 'number')) {
          throw valueError('weights should be a 1d sequence of numbers');
        }
        w = Float64Array.from(w, Number);
      } else {
        throw typeError('WeightedRandomSampler: weights must be an array, a typed array or a 1-D tensor');
      }
      this.weights = Float64Array.from(w);
      this.numSamples = numSamples;
      this.replacement = replacement;
      this.generator = checkGenerator(generator, 'WeightedRandomSampler');
    }
    get length() { return this.numSamples; }
    * [Symbol.iterator]() {
      // torch.multinomial(weights, ...) with generator=None draws from the global generator
      const gen = this.generator || new Generator(drawSeed(null));
      yield* gen.multinomial(this.weights, this.numSamples, this.replacement);
    }
  }

  class BatchSampler extends Sampler {
    /** Arrays of batchSize indices from `sampler` (any iterable of indices); the last is smaller unless dropLast. */
    constructor(sampler, batchSize, dropLast) {
      super(null);
      if (batchSize !== null && typeof batchSize === 'object') ({ batchSize, dropLast } = batchSize);
      if (sampler === null || sampler === undefined || typeof sampler[Symbol.iterator] !== 'function') {
        throw typeError('BatchSampler: sampler must be an iterable of indices');
      }
      if (!Number.isSafeInteger(batchSize) || batchSize <= 0) {
        throw valueError(`batch_size should be a positive integer value, but got batch_size=${String(batchSize)}`);
      }
      if (typeof dropLast !== 'boolean') throw valueError(`drop_last should be a boolean value, but got drop_last=${String(dropLast)}`);
      this.sampler = sampler;
      this.batchSize = batchSize;
      this.dropLast = dropLast;
    }
    * [Symbol.iterator]() {
      if (this.batchSize > 0xffffffff) fitsArray(this.batchSize, 'BatchSampler: a batch', () => new Array(this.batchSize));
      let batch = [];
      for (const i of this.sampler) {
        batch.push(i);
        if (batch.length === this.batchSize) {
          yield batch;
          batch = [];
        }
      }
      if (batch.length > 0 && !this.dropLast) yield batch;
    }
    get length() {
      const n = lengthOf(this.sampler, 'BatchSampler.length');
      return this.dropLast ? Math.floor(n / this.batchSize) : Math.ceil(n / this.batchSize);
    }
  }

  return {
    Sampler, SequentialSampler, RandomSampler, SubsetRandomSampler, WeightedRandomSampler, BatchSampler, drawSeed,
  };
};
