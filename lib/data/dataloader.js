// dataloader.js - kd.data.DataLoader: batches of a dataset, in order or shuffled.
//
//   const loader = new kd.data.DataLoader(ds, {batchSize: 64, shuffle: true, seed: 0});
//   for await (const [x, y] of loader) { ... }   // with background prefetch
//   for (const [x, y] of loader) { ... }         // sync, when ds.get is sync
//
// Each pass (epoch) takes an order of the indices - 0..n-1, or a permutation from the loader's
// generator when shuffling (see lib/data/generator.js for the algorithm; with a seed or
// generator the sequence of epochs is reproducible; without, each epoch seeds a generator from
// kindling's global one, so kd.manualSeed makes it reproducible) - and cuts it into batches of
// batchSize (the last one smaller unless dropLast), each batch's indices made when it is built
// (so a dataset of any length iterates in order; a shuffle holds one Uint32Array permutation,
// at most 2^32 samples). A batch is collate(samples) (default:
// defaultCollate); with the default collate and a dataset that has getBatch(indices) or row
// tensors (TensorDataset, a Subset of one, or any dataset with rowTensors(): see dataset.js), the
// batch is gathered in one step (one indexSelect per tensor).
//
// Prefetch (async iteration only): while the loop body works on batch k, batches
// k+1..k+prefetch are being assembled. Two paths:
//   - row tensors on the CPU, the default collate and prefetch > 0: every batch is gathered by
//     kd.data.gatherRows on the libuv thread pool (src/napi/data_async.c), so the gathers of
//     k+1..k+prefetch really run in the background, in parallel with the loop body's compute
//     on the main thread. Batches never require grad.
//   - anything else (a custom collate, datasets with get(i) only or a getBatch of their own,
//     prefetch 0): batches are built on the main thread, ahead in setImmediate tasks, and
//     samples' Promises (async datasets) are in flight meanwhile; that overlaps I/O and awaited
//     GPU work, not main-thread compute. prefetch 0 builds each batch when it is asked for.
// Batches are always yielded in order and are the same on both paths (and the same as sync
// iteration). Batches belong to the caller (dispose them, or let the GC have them); prefetched
// batches that were never yielded (a `break`, or an error) are disposed, and the loop statement
// ends only once they are: `for await` awaits the iterator's return(), which waits for the
// batches in flight to settle and disposes them (gathers take microseconds to milliseconds; an
// async dataset's samples already requested are awaited), so no work of the loader outlives it.
//
// Disposing the dataset's tensors mid-epoch: gathers in flight hold their own references (no
// freed memory is ever read), and the next batch asked for rejects with KD_DISPOSED; the epoch
// ends there (its pending batches are disposed).
'use strict';

const { KindlingError, typeError } = require('../errors');

const invalidArg = (msg) => new KindlingError(msg, 'KD_INVALID_ARGUMENT');
const OPTIONS = ['batchSize', 'shuffle', 'generator', 'seed', 'dropLast', 'collate', 'prefetch'];

module.exports = function makeDataLoader(kd, Tensor, datasets, defaultCollate, gatherRows) {
  const { Generator, fitsArray } = require('./generator');

  function disposeTree(x, depth = 0) {
    if (depth > 32 || x === null || typeof x !== 'object') return;
    if (x instanceof Tensor) { x.dispose(); return; }
    const values = x instanceof Map ? x.values() : Array.isArray(x) ? x : Object.values(x);
    for (const v of values) disposeTree(v, depth + 1);
  }

  // A row source's gathered tensors in the batch's shape: the array, or an object by its keys.
  function shape(src, tensors) {
    if (!src.keys) return tensors;
    const out = {};
    src.keys.forEach((k, i) => { out[k] = tensors[i]; });
    return out;
  }

  // The main-thread gather of row tensors (sync iteration, prefetch 0): one indexSelect each.
  function gatherSync(tensors, indices) {
    const a = new BigInt64Array(indices.length);
    for (let i = 0; i < indices.length; i++) a[i] = BigInt(indices[i]);
    const index = kd.tensor(a);
    const out = [];
    try {
      for (const t of tensors) out.push(kd.noGrad(() => t.indexSelect(0, index)));
    } catch (e) {
      for (const t of out) t.dispose();
      throw e;
    } finally {
      index.dispose();
    }
    return out;
  }

  const isThenable = (x) => x !== null && (typeof x === 'object' || typeof x === 'function') && typeof x.then === 'function';

  class DataLoader {
    constructor(dataset, options = {}) {
      if (dataset === null || typeof dataset !== 'object' || typeof dataset.get !== 'function') {
        throw typeError('DataLoader: dataset must have get(i) and length (e.g. a kd.data.Dataset)');
      }
      if (options === null || typeof options !== 'object' || Array.isArray(options)) {
        throw typeError('DataLoader: options must be an object');
      }
      for (const k of Object.keys(options)) {
        if (!OPTIONS.includes(k)) throw typeError(`DataLoader: unexpected option '${k}' (expected ${OPTIONS.join(', ')})`);
      }
      const {
        batchSize = 1, shuffle = false, dropLast = false, collate = null, prefetch = 2,
      } = options;
      if (!Number.isInteger(batchSize) || batchSize < 1) {
        throw invalidArg(`batch_size should be a positive integer value, but got batch_size=${String(batchSize)}`);
      }
      if (typeof shuffle !== 'boolean') throw typeError(`DataLoader: shuffle must be a boolean, got ${String(shuffle)}`);
      if (typeof dropLast !== 'boolean') throw typeError(`DataLoader: dropLast must be a boolean, got ${String(dropLast)}`);
      if (collate !== null && typeof collate !== 'function') throw typeError('DataLoader: collate must be a function');
      if (!Number.isInteger(prefetch) || prefetch < 0) {
        throw invalidArg(`DataLoader: prefetch must be a non-negative integer, got ${String(prefetch)}`);
      }
      const n = dataset.length;
      if (!Number.isSafeInteger(n) || n < 0) throw typeError(`DataLoader: dataset.length must be a non-negative integer below 2^53, got ${String(n)}`);
      this.dataset = dataset;
      this.batchSize = batchSize;
      this.shuffle = shuffle;
      this.dropLast = dropLast;
      this.collate = collate || defaultCollate;
      this.prefetch = prefetch;
      this.generator = datasets.resolveGenerator(options, 'DataLoader');
    }

    /** The number of batches in one pass. */
    get length() {
      const n = this.dataset.length;
      return this.dropLast ? Math.floor(n / this.batchSize) : Math.ceil(n / this.batchSize);
    }

    /**
     * The index batches of one pass (advances the generator when shuffling): {count, at(k)}, at(k)
     * the indices of batch k as an array. Batches are cut when asked for: in order, from the
     * dataset's length alone (any length); shuffled, from one permutation (a Uint32Array).
     */
    _batchIndices() {
      const n = this.dataset.length;
      const bs = this.batchSize;
      let order = null;
      if (this.shuffle) {
        const gen = this.generator || new Generator(datasets.globalSeed());
        order = gen.permutation(n, `DataLoader: shuffling a dataset of ${n} samples`);
      }
      const at = (k) => {
        const begin = k * bs;
        const end = Math.min(n, begin + bs);
        return fitsArray(end - begin, 'DataLoader: a batch', () => {
          if (order) return Array.from(order.subarray(begin, end));
          const out = new Array(end - begin);
          for (let i = 0; i < out.length; i++) out[i] = begin + i;
          return out;
        });
      };
      return { count: this.length, at };
    }

    // The batch for `indices`: the batch itself, or a Promise of it when samples are Promises.
    _build(indices, allowAsync) {
      const ds = this.dataset;
      if (this.collate === defaultCollate && typeof ds.getBatch === 'function') return ds.getBatch(indices);
      if (this.collate === defaultCollate) {
        const src = datasets.rowSource(ds);
        if (src) return shape(src, gatherSync(src.tensors, src.map(indices)));
      }
      const samples = indices.map((i) => ds.get(i));
      if (samples.some(isThenable)) {
        if (!allowAsync) {
          for (const s of samples) if (isThenable(s)) Promise.resolve(s).catch(() => {});
          throw typeError('DataLoader: dataset.get() returned a Promise; iterate with `for await`');
        }
        return Promise.all(samples).then((s) => this.collate(s));
      }
      return this.collate(samples);
    }

    /** Sync iteration: batches are built on demand (no prefetch). */
    * [Symbol.iterator]() {
      const batches = this._batchIndices();
      for (let k = 0; k < batches.count; k++) yield this._build(batches.at(k), false);
    }

    /** Async iteration with `prefetch` batches assembled ahead (see the file header). */
    [Symbol.asyncIterator]() {
      const src = this.collate === defaultCollate && this.prefetch > 0 ? datasets.rowSource(this.dataset) : null;
      const batches = this._batchIndices();
      if (src) {
        // every batch is a background gather (gatherRows)
        return prefetchIterator(batches.count, this.prefetch,
          (k) => gatherRows(src.tensors, src.map(batches.at(k))).then((ts) => shape(src, ts)),
          () => {
            if (src.tensors.some((t) => t.isDisposed)) {
              throw new KindlingError("DataLoader: a tensor of the dataset was disposed during the epoch (dispose the dataset's tensors after the loop)", 'KD_DISPOSED');
            }
          });
      }
      // batches assembled on the main thread, the ones ahead in setImmediate tasks
      return prefetchIterator(batches.count, this.prefetch, (k, first, isDone) => (first
        ? new Promise((resolve) => resolve(this._build(batches.at(k), true)))
        : new Promise((resolve, reject) => setImmediate(() => {
          if (isDone()) { resolve(undefined); return; }
          try { resolve(this._build(batches.at(k), true)); } catch (e) { reject(e); }
        }))));
    }
  }

  /**
   * The async iterator of both paths: batches are yielded in order, with batches
   * [next, next + 1 + prefetch) in flight. start(k, first, isDone) begins batch k and returns its
   * Promise (first: it is the batch about to be awaited); check() (optional) throws when the epoch
   * cannot go on. Batches started but never yielded (break, error) are disposed before return()
   * resolves or the error is thrown.
   */
  function prefetchIterator(count, prefetch, start, check = null) {
    const pending = new Map(); // batch number -> Promise of the batch
    let next = 0; // the next batch to yield
    let scheduled = 0; // batches [next, scheduled) are in `pending`
    let done = false;
    const isDone = () => done;
    const schedule = () => {
      const until = Math.min(count, next + 1 + prefetch);
      while (scheduled < until) {
        const k = scheduled++;
        let p;
        try {
          p = start(k, k === next, isDone);
        } catch (e) {
          p = Promise.reject(e);
        }
        p.catch(() => {}); // surfaced when it is awaited
        pending.set(k, p);
      }
    };
    // Ends the epoch: resolves once every batch in flight has settled and been disposed.
    const cleanup = () => {
      done = true;
      const settling = [...pending.values()].map((p) => p.then(disposeTree, () => {}));
      pending.clear();
      return Promise.all(settling);
    };
    // The error that ends the epoch (check() threw), or null.
    const whyDead = () => {
      if (!check) return null;
      try {
        check();
        return null;
      } catch (e) {
        return e;
      }
    };
    return {
      next: async () => {
        if (done || next >= count) { await cleanup(); return { value: undefined, done: true }; }
        const dead = whyDead();
        if (dead) { await cleanup(); throw dead; }
        schedule();
        const k = next++;
        const p = pending.get(k);
        pending.delete(k);
        let value;
        try {
          value = await p;
        } catch (e) {
          await cleanup();
          throw e;
        }
        const deadNow = whyDead();
        if (deadNow) {
          disposeTree(value);
          await cleanup();
          throw deadNow;
        }
        schedule(); // keep the window full while the caller works on this batch
        return { value, done: false };
      },
      return: async (value) => { await cleanup(); return { value, done: true }; },
      [Symbol.asyncIterator]() { return this; },
    };
  }

  return { DataLoader };
};
