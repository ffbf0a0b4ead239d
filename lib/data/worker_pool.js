// worker_pool.js - DataLoader's worker threads (numWorkers > 0), as PyTorch's multi-process
// loading with threads: numWorkers worker_threads each run lib/data/worker_main.js, loading the
// dataset (and a collateFn/workerInitFn given as recipes, lib/data/portable.js) themselves.
//
// One pass (epoch()): batches are tasks numbered k = 0, 1, ... in the index sampler's order,
// sent round-robin to the workers that are still active, at most prefetchFactor * numWorkers
// outstanding; results are yielded in task order whatever order they come back in (so the
// batches are those of numWorkers 0, in the same order). For an iterable-style dataset each
// worker iterates its own copy of the dataset and a task asks a worker for its next batch; a
// worker whose iterator is done answers 'stop' and gets no more tasks (its task is skipped);
// the pass ends when every worker has stopped (PyTorch's order: round-robin over workers).
//
// Errors: an error thrown in a worker (the dataset's get, the iterator, collate) rejects that
// batch with "Caught <name> in DataLoader worker <id>." and the worker's stack (code kept); a
// worker that fails to load, exits or crashes rejects what it owed; `timeout` > 0 (seconds)
// bounds each wait for a batch (KD_TIMEOUT). Any of these ends the pass and, unless the workers
// are persistent and healthy, terminates them. Without persistentWorkers a pool lives for one
// pass; with them it stays for the next (a new pass resets iterable datasets' iterators; base
// seeds are drawn once); loader.shutdown() terminates it. Workers are referenced (keep the
// process alive) only while the main thread waits for a batch, so neither idle persistent
// workers nor an iterator left unfinished keep the process from exiting.
'use strict';

const path = require('node:path');
const { Worker } = require('node:worker_threads');
const { KindlingError, KindlingTypeError, KindlingRangeError } = require('../errors');

const ROOT = path.join(__dirname, '..', '..');
const MAIN = path.join(__dirname, 'worker_main.js');

// The main thread's error for a worker's error record: the same class kind and code.
function workerError(rec, id, when = '') {
  const message = `Caught ${rec.name} in DataLoader worker ${id}${when}.\nOriginal ${rec.stack}`;
  const code = rec.code || (rec.name === 'TypeError' ? 'KD_INVALID_TYPE' : rec.name === 'RangeError' ? 'KD_INDEX_OUT_OF_RANGE' : 'KD_ERROR');
  let err;
  if (/TypeError$/.test(rec.name)) err = new KindlingTypeError(message, code);
  else if (/RangeError$/.test(rec.name)) err = new KindlingRangeError(message, code);
  else err = new KindlingError(message, code);
  err.workerId = id;
  err.workerStack = rec.stack;
  return err;
}

class WorkerPool {
  /**
   * cfg: {numWorkers, baseSeed (BigInt), dataset, collate (a recipe, or null: the default), initFn,
   * mode ('map' | 'iterable'), batchSize (null: no auto-batching), dropLast, autoCollation,
   * prefetchFactor, timeout (seconds), persistent}.
   */
  constructor(cfg) {
    this.cfg = cfg;
    this.dead = null; // the error that killed the pool
    this.epochId = 0;
    this.pending = new Map(); // k -> {resolve, reject, worker} of the current epoch
    this.workers = [];
    for (let id = 0; id < cfg.numWorkers; id++) {
      const w = new Worker(MAIN, {
        workerData: {
          root: ROOT, id, numWorkers: cfg.numWorkers, seed: cfg.baseSeed + BigInt(id), mode: cfg.mode,
          batchSize: cfg.batchSize, dropLast: cfg.dropLast, autoCollation: cfg.autoCollation,
          dataset: cfg.dataset, collate: cfg.collate, initFn: cfg.initFn,
        },
      });
      w.unref();
      w.on('message', (m) => this._onMessage(id, m));
      w.on('error', (e) => this._fail(workerError({ name: e && e.name, message: e && e.message, stack: e && e.stack, code: e && e.code }, id, ' (uncaught)')));
      w.on('exit', (code) => {
        if (!this.closing) this._fail(new KindlingError(`DataLoader worker (id ${id}) exited unexpectedly with exit code ${code}`, 'KD_WORKER_EXITED'));
      });
      this.workers.push(w);
    }
  }

  _onMessage(id, m) {
    if (m.type === 'ready') return;
    if (m.type === 'initError') { this._fail(workerError(m.error, id, ' while loading')); return; }
    if (m.epoch !== this.epochId) return; // a batch of a pass that was left early
    const p = this.pending.get(m.k);
    if (!p) return;
    this.pending.delete(m.k);
    if (m.type === 'error') p.reject(workerError(m.error, id));
    else p.resolve(m);
  }

  _fail(err) {
    if (this.dead) return;
    this.dead = err;
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
    this.close();
  }

  /** Terminates the workers (idempotent); resolves when they are gone. */
  close() {
    if (!this.closed) {
      this.closing = true;
      this.closed = Promise.all(this.workers.map((w) => w.terminate().catch(() => {})));
    }
    return this.closed;
  }

  _ref(on) { for (const w of this.workers) (on ? w.ref() : w.unref()); }

  /**
   * The async iterator of one pass: nextIndices() gives the next task's indices (map-style; an
   * array, a number without auto-batching, or null when the sampler is done); finish(msg)
   * turns a result message into the batch (decode, main-thread collate, pin).
   */
  epoch(nextIndices, finish) {
    if (this.dead) throw this.dead;
    const cfg = this.cfg;
    const epoch = ++this.epochId;
    // a pass still running on these (persistent) workers ends: its batches would never come
    const superseded = new KindlingError('DataLoader: a new pass started on the same persistent workers before this one ended', 'KD_INVALID_ARGUMENT');
    for (const p of this.pending.values()) p.reject(superseded);
    this.pending.clear();
    if (epoch > 1 && cfg.mode === 'iterable') for (const w of this.workers) w.postMessage({ type: 'reset' });
    const active = this.workers.map(() => true);
    let rr = 0; // the next worker to try, round-robin
    let sent = 0;
    let received = 0;
    let exhausted = false;
    let ended = false;
    const results = new Map(); // k -> Promise of the result message
    const limit = cfg.prefetchFactor * cfg.numWorkers;

    const put = () => {
      while (!exhausted && !this.dead && sent - received < limit) {
        let worker = -1;
        for (let j = 0; j < active.length; j++) {
          const c = (rr + j) % active.length;
          if (active[c]) { worker = c; break; }
        }
        if (worker < 0) { exhausted = true; break; }
        const k = sent;
        let msg;
        if (cfg.mode === 'iterable') {
          msg = { type: 'next', epoch, k };
        } else {
          let idx;
          try {
            idx = nextIndices();
          } catch (e) {
            results.set(k, Promise.reject(e));
            results.get(k).catch(() => {});
            sent++;
            exhausted = true;
            break;
          }
          if (idx === null) { exhausted = true; break; }
          msg = Array.isArray(idx) ? { type: 'task', epoch, k, indices: idx } : { type: 'task', epoch, k, indices: null, index: idx };
        }
        const p = new Promise((resolve, reject) => this.pending.set(k, { resolve, reject, worker }));
        p.catch(() => {});
        p.worker = worker;
        results.set(k, p);
        this.workers[worker].postMessage(msg);
        rr = (worker + 1) % active.length;
        sent++;
      }
    };

    const waitFor = (p) => {
      if (!(cfg.timeout > 0)) return p;
      let timer;
      const t = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new KindlingError(`DataLoader timed out after ${cfg.timeout} seconds`, 'KD_TIMEOUT')), cfg.timeout * 1000);
      });
      return Promise.race([p, t]).finally(() => clearTimeout(timer));
    };

    const end = async (failed) => {
      if (ended) return;
      ended = true;
      results.clear();
      if (this.epochId === epoch) this.pending.clear();
      if (!cfg.persistent || failed || this.dead) await this.close();
    };

    return {
      next: async () => {
        if (ended) return { value: undefined, done: true };
        for (;;) {
          put();
          if (received >= sent) {
            if (this.dead) { const e = this.dead; await end(true); throw e; }
            await end(false);
            return { value: undefined, done: true };
          }
          const k = received;
          const p = results.get(k);
          let msg;
          this._ref(true); // waiting for a batch keeps the process alive; nothing else does
          try {
            msg = await waitFor(p);
          } catch (e) {
            await end(true);
            throw e;
          } finally {
            if (!this.closing) this._ref(false);
          }
          results.delete(k);
          received++;
          if (msg.type === 'stop') { active[p.worker] = false; continue; }
          try {
            return { value: finish(msg), done: false };
          } catch (e) {
            await end(true);
            throw e;
          }
        }
      },
      return: async (value) => { await end(false); return { value, done: true }; },
      [Symbol.asyncIterator]() { return this; },
    };
  }
}

module.exports = { WorkerPool, workerError };
