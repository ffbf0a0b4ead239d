// batcher.js - dynamic batching for server.js: requests that arrive together (within maxWaitMs
// of the first, or until maxBatch rows wait) are stacked into one input and run as one forward
// pass, one batch in flight at a time. The queue is bounded (maxQueueRows: a full queue answers
// 503 at once, backpressure instead of unbounded latency), every request has a deadline
// (timeoutMs: still queued or running then, it is answered 503 TIMEOUT and its rows are dropped
// from the next batch), a request whose client went away is dropped before it costs a forward
// pass, and drain() waits for everything accepted to be answered (graceful shutdown).
'use strict';

const { HttpError, tooManyRows } = require('./request');

class Batcher {
  constructor(engine, { inFeatures, classes, maxBatch = 64, maxWaitMs = 2, maxQueueRows = 4096, timeoutMs = 10000 }) {
    Object.assign(this, { engine, inFeatures, classes, maxBatch, maxWaitMs, maxQueueRows, timeoutMs });
    this.queue = []; // items {x, n, resolve, reject, timer, done}
    this.queuedRows = 0;
    this.busy = false;
    this.inFlight = 0; // items in the batch being run
    this.timer = null;
    this.closed = false;
    this.idleWaiters = [];
    this.stats = { requests: 0, rows: 0, batches: 0, maxBatchSeen: 0, rejectedFull: 0, timedOut: 0, cancelled: 0 };
  }

  /** Whether a request of n rows would be refused as the queue stands. */
  full(n = 1) { return this.queuedRows + n > this.maxQueueRows; }

  /**
   * Queues x (a Float32Array of n rows). Returns {promise, cancel}: promise resolves to
   * {probs, batch} or rejects with an HttpError; cancel() drops the request (client gone).
   */
  submit(x, n) {
    let item = null;
    const promise = new Promise((resolve, reject) => {
      if (this.closed) throw new HttpError(503, 'SHUTTING_DOWN', 'the server is shutting down');
      if (n > this.maxBatch) throw tooManyRows(this.maxBatch, n);
      if (this.full(n)) {
        this.stats.rejectedFull++;
        throw new HttpError(503, 'QUEUE_FULL', `the server has ${this.queuedRows} inputs queued (at most ${this.maxQueueRows}); try again later`,
          { 'retry-after': '1' });
      }
      item = { x, n, resolve, reject, done: false, queued: true, timer: null };
      item.timer = setTimeout(() => {
        this.stats.timedOut++;
        this.finish(item, null, new HttpError(503, 'TIMEOUT', `no answer within ${this.timeoutMs} ms; the server is overloaded`, { 'retry-after': '1' }));
      }, this.timeoutMs);
      this.queue.push(item);
      this.queuedRows += n;
      this.schedule();
    });
    const cancel = () => {
      if (item && !item.done) { this.stats.cancelled++; this.finish(item, null, new HttpError(499, 'CLIENT_CLOSED', 'the client closed the connection')); }
    };
    return { promise, cancel };
  }

  /** Answers an item once; a queued item leaves the queue (its rows no longer count). */
  finish(item, value, error) {
    if (item.done) return;
    item.done = true;
    clearTimeout(item.timer);
    if (item.queued) {
      item.queued = false;
      this.queue.splice(this.queue.indexOf(item), 1);
      this.queuedRows -= item.n;
    }
    if (error) item.reject(error); else item.resolve(value);
    this.notifyIdle();
  }

  schedule() {
    if (this.busy || this.queue.length === 0) return;
    if (this.queuedRows >= this.maxBatch) {
      clearTimeout(this.timer);
      this.timer = null;
      this.busy = true; // reserved until dispatch runs
      setImmediate(() => this.dispatch());
    } else if (this.timer === null) {
      this.timer = setTimeout(() => { this.timer = null; this.busy = true; this.dispatch(); }, this.maxWaitMs);
    }
  }

  async dispatch() {
    // take whole requests, in order, up to maxBatch rows
    const items = [];
    let rows = 0;
    while (this.queue.length && rows + this.queue[0].n <= this.maxBatch) {
      const it = this.queue.shift();
      it.queued = false;
      this.queuedRows -= it.n;
      items.push(it);
      rows += it.n;
    }
    if (rows > 0) {
      this.inFlight = items.length;
      const x = new Float32Array(rows * this.inFeatures);
      let off = 0;
      for (const it of items) { x.set(it.x, off); off += it.x.length; }
      try {
        const probs = await this.engine.run(x, rows);
        this.stats.batches++;
        this.stats.rows += rows;
        this.stats.requests += items.length;
        this.stats.maxBatchSeen = Math.max(this.stats.maxBatchSeen, rows);
        let r = 0;
        for (const it of items) {
          this.finish(it, { probs: probs.subarray(r * this.classes, (r + it.n) * this.classes), batch: rows });
          r += it.n;
        }
      } catch (e) {
        for (const it of items) this.finish(it, null, e);
      }
      this.inFlight = 0;
    }
    this.busy = false;
    // requests that queued during this batch have waited already: run them now
    if (this.queue.length) {
      this.busy = true;
      clearTimeout(this.timer);
      this.timer = null;
      setImmediate(() => this.dispatch());
    }
    this.notifyIdle();
  }

  idle() { return this.queue.length === 0 && !this.busy; }

  notifyIdle() {
    if (!this.idle()) return;
    for (const w of this.idleWaiters.splice(0)) w();
  }

  /** Refuses new requests; resolves when every accepted request has been answered. */
  drain() {
    this.closed = true;
    // nothing more will join the batch being gathered: run it now
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
      this.busy = true;
      setImmediate(() => this.dispatch());
    }
    if (this.idle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Refuses new requests and answers every queued one 503 at once (the batch in flight finishes). */
  close() {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = null;
    for (const it of [...this.queue]) this.finish(it, null, new HttpError(503, 'SHUTTING_DOWN', 'the server is shutting down'));
  }
}

module.exports = { Batcher };
