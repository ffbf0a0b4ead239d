// dataloader.js - kd.data.DataLoader: batches of a dataset, as torch.utils.data.DataLoader in
// PyTorch 1.13 (options camelCased: batchSize, shuffle, sampler, batchSampler, numWorkers,
// collateFn, pinMemory, dropLast, timeout, workerInitFn, generator, prefetchFactor,
// persistentWorkers; kindling adds seed, prefetch and collate, the older name of collateFn).
//
//   const loader = new kd.data.DataLoader(ds, {batchSize: 64, shuffle: true, generator: g});
//   for await (const [x, y] of loader) { ... }   // with background prefetch or worker threads
//   for (const [x, y] of loader) { ... }         // sync, when ds.get is sync and numWorkers is 0
//
// Indices come from the index sampler as PyTorch's: batchSampler, or BatchSampler(sampler,
// batchSize, dropLast) with sampler defaulting to RandomSampler(dataset, {generator}) when
// shuffling and SequentialSampler(dataset) otherwise (lib/data/sampler.js); batchSize null turns
// auto-batching off (each sample is converted by defaultConvert, or given to collateFn alone).
// Each pass first draws the workers' base seed from the generator, as PyTorch's iterators do, so
// that a loader with a kd.data.Generator seeded s shuffles in PyTorch's order for seed s.
// An iterable-style dataset (IterableDataset, or any (async) iterable without get) is read in
// order and cut into batches of batchSize (dropLast drops a smaller last one).
//
// A batch is collate(samples) (default: defaultCollate); with the default collate and a dataset
// that has getBatch(indices) or row tensors (TensorDataset, a Subset of one, or any dataset with
// rowTensors(): see dataset.js), the batch is gathered in one step (one indexSelect per tensor).
//
// numWorkers > 0 (async iteration only): batches are made in worker threads (worker_pool.js),
// which load the dataset themselves: the dataset must be given as a recipe a worker can run (a
// module path, {module, export, args}, a self-contained factory function, or a dataset made by
// kd.data.fromModule: see portable.js); a collateFn or workerInitFn is a module spec or a
// self-contained function, sent the same way (a collateFn that does not compile on its own is
// an error). Tensors come back as transferred typed arrays and are wrapped on the main thread.
// Exception: a dataset of row tensors on the CPU (TensorDataset, a Subset of one, rowTensors())
// with the default collate and no workerInitFn needs no threads: its batches are gathered on
// the libuv thread pool as with numWorkers 0, which is what workers would do, without copies.
//
// pinMemory: with CUDA available, every CPU tensor of a batch is copied into pinned host memory
// (t.pinMemory()) before it is yielded, for asynchronous host-to-device copies; without CUDA it
// does nothing (PyTorch 1.13 likewise pins only when torch.cuda.is_available()).
//
// Prefetch with numWorkers 0 (async iteration only): while the loop body works on batch k,
// batches k+1..k+prefetch are being assembled. Two paths:
//   - row tensors on the CPU, the default collate and prefetch > 0: every batch is gathered by
//     kd.data.gatherRows on the libuv thread pool (src/napi/data_async.c), so the gathers of
//     k+1..k+prefetch really run in the background, in parallel with the loop body's compute
//     on the main thread. Batches never require grad.
//   - anything else (a custom collate, datasets with get(i) only or a getBatch of their own,
//     prefetch 0): batches are built on the main thread, ahead in setImmediate tasks, and
//     samples' Promises (async datasets) are in flight meanwhile; that overlaps I/O and awaited
//     GPU work, not main-thread compute. prefetch 0 builds each batch when it is asked for.
// Batches are always yielded in order and are the same on every path (and the same as sync
// iteration). Batches belong to the caller (dispose them, or let the GC have them); prefetched
// batches that were never yielded (a `break`, or an error) are disposed, and the loop statement
// ends only once they are: `for await` awaits the iterator's return(), which waits for the
// batches in flight to settle and disposes them, so no work of the loader outlives it.
//
// Disposing the dataset's tensors mid-epoch: gathers in flight hold their own references (no
// freed memory is ever read), and the next batch asked for rejects with KD_DISPOSED; the epoch
// ends there (its pending batches are disposed).
'use strict';

const { KindlingError, typeError } = require('../errors');
const portable = require('./portable');
const { mapTree, RECURSE } = require('./tree');

const invalidArg = (msg) => new KindlingError(msg, 'KD_INVALID_ARGUMENT');
const OPTIONS = [
  'batchSize', 'shuffle', 'sampler', 'batchSampler', 'numWorkers', 'collateFn', 'pinMemory', 'dropLast',
  'timeout', 'workerInitFn', 'generator', 'prefetchFactor', 'persistentWorkers', 'seed', 'prefetch', 'collate',
];

module.exports = function makeDataLoader(kd, Tensor, datasets, samplers, collation, gatherRows, transfer) {
  const { Generator, fitsArray } = require('./generator');
  const { WorkerPool } = require('./worker_pool');
  const { defaultCollate, defaultConvert } = collation;
  const { SequentialSampler, RandomSampler, BatchSampler, drawSeed } = samplers;

  function disposeTree(x, depth = 0) {
    if (depth > 32 || x === null || typeof x !== 'object') return;
    if (x instanceof Tensor) { x.dispose(); return; }
    const values = x instanceof Map ? x.values() : Array.isArray(x) ? x : Object.values(x);
    for (const v of values) disposeTree(v, depth + 1);
  }

  // The batch with every CPU tensor copied into pinned host memory (the originals disposed).
  const pinTree = (batch) => mapTree(batch, (x) => {
    if (!(x instanceof Tensor)) return RECURSE;
    if (x.device !== 'cpu' || x.isPinned()) return x;
    const p = x.pinMemory();
    x.dispose();
    return p;
  });

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
  const given = (x) => x !== undefined && x !== null;
  const describe = (x) => (x === null || x === undefined ? String(x) : typeof x === 'object' ? (x.constructor ? x.constructor.name : 'object') : String(x));

  // A function option: a function (main thread), or, for workers, a module spec or function source.
  function functionOption(value, name) {
    if (!given(value)) return null;
    if (typeof value === 'function') return value;
    if (portable.isPlainObject(value) && 'module' in value) return value;
    throw typeError(`DataLoader: ${name} must be a function or a module spec {module, export}`);
  }

  class DataLoader {
    constructor(dataset, options = {}) {
      if (options === null || typeof options !== 'object' || Array.isArray(options)) {
        throw typeError('DataLoader: options must be an object');
      }
      for (const k of Object.keys(options)) {
        if (!OPTIONS.includes(k)) throw typeError(`DataLoader: unexpected option '${k}' (expected ${OPTIONS.join(', ')})`);
      }
      // a recipe (module path or spec, factory function): the dataset is loaded from it here too
      let source = null;
      if (typeof dataset === 'string' || typeof dataset === 'function' || (portable.isPlainObject(dataset) && 'module' in dataset)) {
        source = portable.toPortable(dataset, 'DataLoader: dataset');
        dataset = portable.tag(portable.load(source, kd, true), source);
      } else if (dataset !== null && typeof dataset === 'object') {
        source = portable.toPortable(dataset, 'DataLoader: dataset');
      }
      const iterable = datasets.isIterableStyle(dataset);
      if (!iterable && !datasets.isMapStyle(dataset)) {
        throw typeError('DataLoader: dataset must have get(i) and length (e.g. a kd.data.Dataset), or be iterable (a kd.data.IterableDataset)');
      }
      const {
        batchSize = 1, shuffle = null, sampler = null, batchSampler = null, numWorkers = 0,
        pinMemory = false, dropLast = false, timeout = 0, prefetchFactor = 2, persistentWorkers = false, prefetch = 2,
      } = options;
      if (given(options.collateFn) && given(options.collate)) throw typeError('DataLoader: give either collateFn or collate, not both');
      const collateFn = functionOption(given(options.collateFn) ? options.collateFn : options.collate, 'collateFn');
      const workerInitFn = functionOption(options.workerInitFn, 'workerInitFn');
      if (!Number.isSafeInteger(numWorkers)) throw typeError(`DataLoader: numWorkers must be an integer, got ${String(numWorkers)}`);
      if (numWorkers < 0) throw invalidArg('num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.');
      if (typeof timeout !== 'number' || Number.isNaN(timeout)) throw typeError(`DataLoader: timeout must be a number of seconds, got ${String(timeout)}`);
      if (timeout < 0) throw invalidArg('timeout option should be non-negative');
      if (numWorkers === 0 && prefetchFactor !== 2) {
        throw invalidArg('prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 to enable multiprocessing.');
      }
      if (!Number.isSafeInteger(prefetchFactor) || prefetchFactor <= 0) {
        throw invalidArg(`DataLoader: prefetchFactor must be a positive integer, got ${String(prefetchFactor)}`);
      }
      if (typeof persistentWorkers !== 'boolean') throw typeError(`DataLoader: persistentWorkers must be a boolean, got ${String(persistentWorkers)}`);
      if (persistentWorkers && numWorkers === 0) throw invalidArg('persistent_workers option needs num_workers > 0');
      if (typeof pinMemory !== 'boolean') throw typeError(`DataLoader: pinMemory must be a boolean, got ${String(pinMemory)}`);
      if (batchSize !== null && (!Number.isSafeInteger(batchSize) || batchSize < 1)) {
        throw invalidArg(`batch_size should be a positive integer value, but got batch_size=${String(batchSize)}`);
      }
      if (shuffle !== null && typeof shuffle !== 'boolean') throw typeError(`DataLoader: shuffle must be a boolean, got ${String(shuffle)}`);
      if (typeof dropLast !== 'boolean') throw typeError(`DataLoader: dropLast must be a boolean, got ${String(dropLast)}`);
      if (!Number.isInteger(prefetch) || prefetch < 0) {
        throw invalidArg(`DataLoader: prefetch must be a non-negative integer, got ${String(prefetch)}`);
      }
      const generator = datasets.resolveGenerator(options, 'DataLoader');
      if (iterable) {
        if (shuffle) throw invalidArg(`DataLoader with IterableDataset: expected unspecified shuffle option, but got shuffle=${shuffle}`);
        if (given(sampler)) throw invalidArg(`DataLoader with IterableDataset: expected unspecified sampler option, but got sampler=${describe(sampler)}`);
        if (given(batchSampler)) {
          throw invalidArg(`DataLoader with IterableDataset: expected unspecified batch_sampler option, but got batch_sampler=${describe(batchSampler)}`);
        }
      } else {
        const n = dataset.length;
        if (!Number.isSafeInteger(n) || n < 0) throw typeError(`DataLoader: dataset.length must be a non-negative integer below 2^53, got ${String(n)}`);
      }
      if (given(sampler) && shuffle) throw invalidArg('sampler option is mutually exclusive with shuffle');
      for (const [name, s] of [['sampler', sampler], ['batchSampler', batchSampler]]) {
        if (given(s) && typeof s[Symbol.iterator] !== 'function') throw typeError(`DataLoader: ${name} must be an iterable of indices (e.g. a kd.data.Sampler)`);
      }
      let bs = batchSize;
      let drop = dropLast;
      if (given(batchSampler)) {
        if (batchSize !== 1 || shuffle || given(sampler) || dropLast) {
          throw invalidArg('batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last');
        }
        bs = null;
        drop = false;
      } else if (batchSize === null && dropLast) {
        throw invalidArg('batch_size=None option disables auto-batching and is mutually exclusive with drop_last');
      }
      let smp = sampler;
      let bsmp = batchSampler;
      if (!iterable) {
        if (!given(smp)) smp = shuffle ? new RandomSampler(dataset, false, null, generator) : new SequentialSampler(dataset);
        if (bs !== null && !given(bsmp)) bsmp = new BatchSampler(smp, bs, drop);
      }
      // Row tensors on the CPU with the default collate and no workerInitFn: the batches are
      // gathered on the libuv thread pool as with numWorkers 0 (no threads to start, no copies).
      const rowsInline = numWorkers > 0 && !source && !iterable && Boolean(bsmp) && collateFn === null && workerInitFn === null
        && datasets.rowSource(dataset) !== null;
      if (numWorkers > 0 && !source && !rowsInline) {
        throw invalidArg('DataLoader: numWorkers > 0 loads the dataset in worker threads, which cannot receive JS objects or '
          + 'closures: give the dataset as a module path, {module, export, args}, a self-contained factory function, or '
          + 'kd.data.fromModule(...)');
      }
      this._threads = numWorkers > 0 && !rowsInline;
      this.dataset = dataset;
      this.batchSize = bs;
      this.dropLast = drop;
      this.shuffle = Boolean(shuffle);
      this.sampler = iterable ? null : smp;
      this.batchSampler = iterable ? null : (bsmp || null);
      this.numWorkers = numWorkers;
      this.collateFn = collateFn || (iterable ? (bs !== null ? defaultCollate : defaultConvert) : (bsmp ? defaultCollate : defaultConvert));
      this.pinMemory = pinMemory;
      this.timeout = timeout;
      this.workerInitFn = workerInitFn;
      this.generator = generator;
      this.prefetchFactor = prefetchFactor;
      this.persistentWorkers = persistentWorkers;
      this.prefetch = prefetch;
      this._iterable = iterable;
      this._source = source;
      this._pool = null;
      if (this._threads) {
        // recipes for the workers, checked now
        this._workerCollate = collateFn === null ? null : (portable.toPortable(collateFn, 'DataLoader: collateFn'));
        this._workerInitFn = workerInitFn === null ? null : portable.toPortable(workerInitFn, 'DataLoader: workerInitFn');
      }
    }

    /** Kept for code written before collateFn: the collate function. */
    get collate() { return this.collateFn; }

    get _autoCollation() { return this.batchSampler !== null || (this._iterable && this.batchSize !== null); }

    /** The number of batches in one pass (the index sampler's length; iterable datasets: from their length). */
    get length() {
      if (this._iterable) {
        const n = this.dataset.length;
        if (this.batchSize === null) return n;
        return this.dropLast ? Math.floor(n / this.batchSize) : Math.ceil(n / this.batchSize);
      }
      const s = this.batchSampler || this.sampler;
      const n = s.length;
      if (!Number.isSafeInteger(n) || n < 0) throw typeError(`DataLoader: the sampler has no length (got ${String(n)})`);
      return n;
    }

    /** Terminates persistent worker threads (a new pass starts them again). */
    async shutdown() {
      const pool = this._pool;
      this._pool = null;
      if (pool) await pool.close();
    }

    // The next-indices function of one pass over a map-style dataset: an array of indices (auto
    // batching) or one index, null at the end. Draws the pass's base seed first, as PyTorch.
    _indexStream(drawBase = true) {
      if (drawBase) this._baseSeed = drawSeed(this.generator);
      const it = (this.batchSampler || this.sampler)[Symbol.iterator]();
      return () => {
        const r = it.next();
        if (r.done) return null;
        return this.batchSampler ? fitsArray(r.value.length, 'DataLoader: a batch', () => Array.from(r.value, Number)) : Number(r.value);
      };
    }

    // The batch for `indices` (or one index without auto-batching): the batch itself, or a
    // Promise of it when samples are Promises.
    _build(indices, allowAsync) {
      const ds = this.dataset;
      if (!Array.isArray(indices)) {
        const s = ds.get(indices);
        if (isThenable(s)) {
          if (!allowAsync) throw typeError('DataLoader: dataset.get() returned a Promise; iterate with `for await`');
          return Promise.resolve(s).then((v) => this._finish(this.collateFn(v)));
        }
        return this._finish(this.collateFn(s));
      }
      if (this.collateFn === defaultCollate && typeof ds.getBatch === 'function') return this._finish(ds.getBatch(indices));
      if (this.collateFn === defaultCollate) {
        const src = datasets.rowSource(ds);
        if (src) return this._finish(shape(src, gatherSync(src.tensors, src.map(indices))));
      }
      const samples = indices.map((i) => ds.get(i));
      if (samples.some(isThenable)) {
        if (!allowAsync) {
          for (const s of samples) if (isThenable(s)) Promise.resolve(s).catch(() => {});
          throw typeError('DataLoader: dataset.get() returned a Promise; iterate with `for await`');
        }
        return Promise.all(samples).then((s) => this._finish(this.collateFn(s)));
      }
      return this._finish(this.collateFn(samples));
    }

    _finish(batch) {
      if (!this.pinMemory || !kd.cuda.isAvailable()) return batch;
      if (isThenable(batch)) return Promise.resolve(batch).then((b) => pinTree(b));
      return pinTree(batch);
    }

    /** Sync iteration (numWorkers 0): batches are built on demand (no prefetch). */
    * [Symbol.iterator]() {
      if (this._threads) throw typeError('DataLoader: numWorkers > 0 loads batches in worker threads; iterate with `for await`');
      if (this._iterable) {
        if (typeof this.dataset[Symbol.iterator] !== 'function') throw typeError('DataLoader: the dataset is an async iterable; iterate with `for await`');
        drawSeed(this.generator);
        yield* this._iterableBatches(this.dataset[Symbol.iterator]());
        return;
      }
      const next = this._indexStream();
      for (let idx = next(); idx !== null; idx = next()) yield this._build(idx, false);
    }

    // Batches of an iterable-style dataset's iterator (closed when the loop ends early).
    * _iterableBatches(it) {
      let finished = false;
      try {
        yield* this._iterableBatchesOf(it);
        finished = true;
      } finally {
        if (!finished && typeof it.return === 'function') it.return();
      }
    }

    * _iterableBatchesOf(it) {
      for (;;) {
        if (this.batchSize === null) {
          const r = it.next();
          if (r.done) return;
          yield this._finish(this.collateFn(r.value));
          continue;
        }
        const samples = [];
        while (samples.length < this.batchSize) {
          const r = it.next();
          if (r.done) break;
          samples.push(r.value);
        }
        if (samples.length === 0 || (this.dropLast && samples.length < this.batchSize)) return;
        yield this._finish(this.collateFn(samples));
      }
    }

    async* _asyncIterableBatches() {
      const ds = this.dataset;
      const it = typeof ds[Symbol.asyncIterator] === 'function' ? ds[Symbol.asyncIterator]() : ds[Symbol.iterator]();
      try {
        for (;;) {
          const samples = [];
          const want = this.batchSize === null ? 1 : this.batchSize;
          while (samples.length < want) {
            const r = await it.next();
            if (r.done) break;
            samples.push(r.value);
          }
          if (samples.length === 0 || (this.dropLast && samples.length < want)) return;
          yield await this._finish(this.collateFn(this.batchSize === null ? samples[0] : samples));
        }
      } finally {
        if (typeof it.return === 'function') await it.return();
      }
    }

    /** Async iteration: worker threads (numWorkers > 0) or `prefetch` batches assembled ahead. */
    [Symbol.asyncIterator]() {
      if (this._threads) return this._workerIterator();
      if (this._iterable) {
        drawSeed(this.generator);
        return this._asyncIterableBatches();
      }
      const batched = this.batchSampler !== null;
      const src = batched && this.collateFn === defaultCollate && this.prefetch > 0 && !(this.pinMemory && kd.cuda.isAvailable())
        ? datasets.rowSource(this.dataset) : null;
      const next = this._indexStream();
      if (src) {
        // every batch is a background gather (gatherRows)
        return prefetchIterator(next, this.prefetch,
          (indices) => gatherRows(src.tensors, src.map(indices)).then((ts) => shape(src, ts)),
          () => {
            if (src.tensors.some((t) => t.isDisposed)) {
              throw new KindlingError("DataLoader: a tensor of the dataset was disposed during the epoch (dispose the dataset's tensors after the loop)", 'KD_DISPOSED');
            }
          });
      }
      // batches assembled on the main thread, the ones ahead in setImmediate tasks
      return prefetchIterator(next, this.prefetch, (indices, first, isDone) => (first
        ? new Promise((resolve) => resolve(this._build(indices, true)))
        : new Promise((resolve, reject) => setImmediate(() => {
          if (isDone()) { resolve(undefined); return; }
          try { resolve(this._build(indices, true)); } catch (e) { reject(e); }
        }))));
    }

    // One pass with worker threads (see worker_pool.js).
    _workerIterator() {
      let pool = this.persistentWorkers ? this._pool : null;
      if (pool && pool.dead) pool = null;
      const fresh = !pool;
      const next = this._iterable ? null : this._indexStream(fresh);
      if (this._iterable && fresh) this._baseSeed = drawSeed(this.generator);
      if (fresh) {
        pool = new WorkerPool({
          numWorkers: this.numWorkers,
          baseSeed: this._baseSeed,
          dataset: this._source,
          collate: this._workerCollate,
          initFn: this._workerInitFn,
          mode: this._iterable ? 'iterable' : 'map',
          batchSize: this.batchSize,
          dropLast: this.dropLast,
          autoCollation: this._autoCollation,
          prefetchFactor: this.prefetchFactor,
          timeout: this.timeout,
          persistent: this.persistentWorkers,
        });
        if (this.persistentWorkers) this._pool = pool;
      }
      return pool.epoch(next, (msg) => this._finish(transfer.decode(msg.value)));
    }
  }

  /**
   * The async iterator of the numWorkers 0 paths: batches are yielded in order, with batches
   * [next, next + 1 + prefetch) in flight. nextIndices() gives the next batch's indices (null at
   * the end); start(indices, first, isDone) begins that batch and returns its Promise (first: it
   * is the batch about to be awaited); check() (optional) throws when the epoch cannot go on.
   * Batches started but never yielded (break, error) are disposed before return() resolves or
   * the error is thrown.
   */
  function prefetchIterator(nextIndices, prefetch, start, check = null) {
    const pending = new Map(); // batch number -> Promise of the batch
    let next = 0; // the next batch to yield
    let scheduled = 0; // batches [next, scheduled) are in `pending`
    let exhausted = false; // nextIndices() said null (or threw)
    let done = false;
    const isDone = () => done;
    const schedule = () => {
      while (!exhausted && scheduled < next + 1 + prefetch) {
        const k = scheduled;
        let p;
        try {
          const indices = nextIndices();
          if (indices === null) { exhausted = true; break; }
          p = start(indices, k === next, isDone);
        } catch (e) {
          exhausted = true;
          p = Promise.reject(e);
        }
        scheduled++;
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
        if (done) return { value: undefined, done: true };
        const dead = whyDead();
        if (dead) { await cleanup(); throw dead; }
        schedule();
        if (next >= scheduled) { await cleanup(); return { value: undefined, done: true }; }
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
