// engine.js - runs the served model's forward pass on a batch for server.js, in one of two places:
//   InlineEngine: on the calling (main) thread. The forward is synchronous native work, so each
//     batch blocks the event loop for its duration; server.js bounds that with --max-batch.
//   WorkerEngine: in a worker_thread (kindling loads in workers), so the main thread only parses
//     JSON and moves bytes; batches are posted to the worker with their buffers transferred.
// Both take a Float32Array of n * inFeatures inputs (n inputs of config.inputShape) and resolve to
// a Float32Array of n * classes probabilities; the forward runs under kd.inferenceMode with kd.tidy
// freeing every tensor it makes. The model is a models.js spec (an MLP file, or a vision model).
'use strict';

const path = require('node:path');
const { Worker } = require('node:worker_threads');

/** forward(model, x, n) for both engines: softmax probabilities as a Float32Array. */
function forwardBatch(kd, model, inputShape, x, n, device) {
  return kd.inferenceMode(() => kd.tidy(() => {
    const input = kd.tensor(x, { device }).view(n, ...inputShape);
    return kd.nn.functional.softmax(model(input), 1).cpu().dataSync();
  }));
}

class InlineEngine {
  constructor(spec, { device = 'cpu', threads = 0 } = {}) {
    this.kd = require('../..');
    if (threads > 0) this.kd.setNumThreads(threads);
    const { loadClassifier } = require('./models');
    const { model, config, classes } = loadClassifier(spec, { device });
    Object.assign(this, { model, config, classes, device, kind: 'inline' });
  }
  async ready() { return this; }
  async run(x, n) { return forwardBatch(this.kd, this.model, this.config.inputShape, x, n, this.device); }
  async close() { this.kd.dispose(this.model.parameters()); }
}

class WorkerEngine {
  constructor(spec, { device = 'cpu', threads = 0 } = {}) {
    this.device = device;
    this.kind = 'worker';
    this.pending = new Map();
    this.nextId = 1;
    this.worker = new Worker(path.join(__dirname, 'engine-worker.js'), { workerData: { spec, device, threads } });
    this.worker.unref();
    this.failed = null;
    this.readyPromise = new Promise((resolve, reject) => {
      this.worker.once('message', (m) => {
        if (m.error) { reject(new Error(m.error)); return; }
        Object.assign(this, { config: m.config, classes: m.classes });
        this.worker.on('message', (r) => this.onResult(r));
        resolve(this);
      });
      this.worker.once('error', reject);
    });
    this.worker.on('error', (e) => this.fail(e));
    this.worker.on('exit', (code) => this.fail(new Error(`inference worker exited with code ${code}`)));
  }
  ready() { return this.readyPromise; }
  fail(e) {
    if (this.failed) return;
    this.failed = e;
    for (const { reject } of this.pending.values()) reject(e);
    this.pending.clear();
  }
  onResult({ id, probs, error }) {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    if (error) p.reject(new Error(error)); else p.resolve(probs);
  }
  run(x, n) {
    if (this.failed) return Promise.reject(this.failed);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, x, n }, [x.buffer]);
    });
  }
  async close() {
    this.failed = this.failed || new Error('engine closed');
    await this.worker.terminate();
  }
}

/** An engine for `spec` (models.js: an MLP file's path, or {kind: 'vision', name, ...}). */
function createEngine(spec, options = {}) {
  return options.worker ? new WorkerEngine(spec, options) : new InlineEngine(spec, options);
}

module.exports = { createEngine, InlineEngine, WorkerEngine, forwardBatch };
