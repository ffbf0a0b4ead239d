#!/usr/bin/env node
// server.js - a node:http inference server for the safetensors model written by make-model.js,
// with dynamic batching: requests that arrive together (within --max-wait-ms of the first, or
// until --max-batch rows are waiting) are stacked into one input tensor and run as one forward
// pass (engine.js: under kd.inferenceMode, tensors freed by kd.tidy; in a worker_thread by
// default, so that the event loop only parses JSON and moves bytes, or on the main thread with
// --engine inline). Routes:
//   POST /predict  {"inputs": [[784 numbers], ...]} or {"input": [784 numbers]} (a 28x28 nested
//                  array works too) -> {"predictions": [{"class", "label", "probability", "probs"}], "batch": rows in its forward pass}
//   GET  /health   {"status": "ok", ...counters}
// Errors are JSON {"error": {"code", "message"}} with 400 (bad JSON or shape), 404, 405, 413
// (body or batch too large) or 429 (queue full); 500 only for a failure inside the model.
//
//   node examples/inference-server/server.js [--port 8080] [--device cuda] [--engine worker|inline] [--threads 1] [--help]
'use strict';

const http = require('node:http');
const path = require('node:path');
const fs = require('node:fs');
const { createEngine } = require('./engine');
const { UsageError, runCli } = require('../cli');

class HttpError extends Error {
  constructor(status, code, message) { super(message); this.status = status; this.code = code; }
}

/**
 * Collects submitted rows and runs them as batches through `engine`, one batch in flight at a
 * time. submit(x: Float32Array of n rows) resolves to {probs: Float32Array, batch}.
 */
class Batcher {
  constructor(engine, { inFeatures, classes, maxBatch = 64, maxWaitMs = 2, maxQueueRows = 4096 }) {
    Object.assign(this, { engine, inFeatures, classes, maxBatch, maxWaitMs, maxQueueRows });
    this.queue = []; // {x, n, resolve, reject}
    this.queuedRows = 0;
    this.busy = false;
    this.timer = null;
    this.stats = { requests: 0, rows: 0, batches: 0, maxBatchSeen: 0 };
  }

  submit(x, n) {
    if (n > this.maxBatch) return Promise.reject(new HttpError(413, 'BATCH_TOO_LARGE', `a request may hold at most ${this.maxBatch} inputs, got ${n}`));
    if (this.queuedRows + n > this.maxQueueRows) return Promise.reject(new HttpError(429, 'QUEUE_FULL', `the server has ${this.queuedRows} inputs queued; try again later`));
    return new Promise((resolve, reject) => {
      this.queue.push({ x, n, resolve, reject });
      this.queuedRows += n;
      this.schedule();
    });
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
      items.push(it);
      rows += it.n;
    }
    this.queuedRows -= rows;
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
        it.resolve({ probs: probs.subarray(r * this.classes, (r + it.n) * this.classes), batch: rows });
        r += it.n;
      }
    } catch (e) {
      for (const it of items) it.reject(e);
    }
    this.busy = false;
    // requests that queued during this batch have waited already: run them now
    if (this.queue.length) {
      this.busy = true;
      clearTimeout(this.timer);
      this.timer = null;
      setImmediate(() => this.dispatch());
    }
  }

  close() {
    clearTimeout(this.timer);
    for (const it of this.queue) it.reject(new HttpError(503, 'SHUTTING_DOWN', 'the server is shutting down'));
    this.queue = [];
  }
}

function readBody(req, limit) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (c) => {
      size += c.length;
      if (size > limit) { reject(new HttpError(413, 'BODY_TOO_LARGE', `request body larger than ${limit} bytes`)); req.resume(); return; }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** {"inputs": [...]} or {"input": [...]} -> Float32Array of n rows of `inF` finite numbers. */
function parseInputs(text, inF) {
  let body;
  try { body = JSON.parse(text); } catch (e) { throw new HttpError(400, 'INVALID_JSON', `invalid JSON: ${e.message}`); }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new HttpError(400, 'INVALID_INPUT', 'expected a JSON object {"inputs": [[...], ...]} or {"input": [...]}');
  let rows;
  if (Array.isArray(body.inputs)) rows = body.inputs;
  else if (Array.isArray(body.input)) rows = [body.input];
  else throw new HttpError(400, 'INVALID_INPUT', 'expected a JSON object {"inputs": [[...], ...]} or {"input": [...]}');
  if (rows.length === 0) throw new HttpError(400, 'INVALID_INPUT', '"inputs" is empty');
  const x = new Float32Array(rows.length * inF);
  rows.forEach((row, i) => {
    if (!Array.isArray(row)) throw new HttpError(400, 'INVALID_INPUT', `inputs[${i}] is not an array`);
    const flat = Array.isArray(row[0]) ? row.flat() : row;
    if (flat.length !== inF) throw new HttpError(400, 'INVALID_SHAPE', `inputs[${i}] has ${flat.length} values, expected ${inF}`);
    for (let j = 0; j < inF; j++) {
      const v = flat[j];
      if (typeof v !== 'number' || !Number.isFinite(v)) throw new HttpError(400, 'INVALID_INPUT', `inputs[${i}][${j}] is not a finite number`);
      x[i * inF + j] = v;
    }
  });
  return { x, n: rows.length };
}

/**
 * Starts the server. Options: modelPath, port (0 = ephemeral), host, device, worker, maxBatch,
 * maxWaitMs, maxQueueRows, threads. Resolves to {server, port, url, engine, batcher, close()}.
 */
async function startServer(options = {}) {
  const {
    modelPath = path.join(__dirname, 'out', 'model.safetensors'), port = 8080, host = '127.0.0.1', device = 'cpu',
    worker = false, maxBatch = 64, maxWaitMs = 2, maxQueueRows = 4096, threads = 0, log = () => {},
  } = options;
  const engine = createEngine(modelPath, { device, worker, threads });
  await engine.ready();
  const { inFeatures, classes: nClasses } = engine.config;
  const labels = engine.classes || Array.from({ length: nClasses }, (_, i) => String(i));
  const batcher = new Batcher(engine, { inFeatures, classes: nClasses, maxBatch, maxWaitMs, maxQueueRows });
  const maxBody = maxBatch * inFeatures * 32 + 4096;
  const started = Date.now();

  const send = (res, status, obj) => {
    const body = JSON.stringify(obj);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };
  const sendError = (res, e) => {
    if (e instanceof HttpError) send(res, e.status, { error: { code: e.code, message: e.message } });
    else { log(`error: ${e.stack || e}`); send(res, 500, { error: { code: 'INTERNAL', message: String(e.message || e) } }); }
  };

  const server = http.createServer(async (req, res) => {
    try {
      const url = req.url.split('?')[0];
      if (url === '/health') {
        if (req.method !== 'GET' && req.method !== 'HEAD') throw new HttpError(405, 'METHOD_NOT_ALLOWED', `${req.method} /health: use GET`);
        send(res, 200, {
          status: 'ok', uptimeS: (Date.now() - started) / 1000, device, engine: engine.kind,
          model: engine.config, queue: { requests: batcher.queue.length, rows: batcher.queuedRows },
          served: { ...batcher.stats, meanBatch: batcher.stats.batches ? batcher.stats.rows / batcher.stats.batches : 0 },
        });
        return;
      }
      if (url === '/predict') {
        if (req.method !== 'POST') throw new HttpError(405, 'METHOD_NOT_ALLOWED', `${req.method} /predict: use POST with a JSON body`);
        const { x, n } = parseInputs(await readBody(req, maxBody), inFeatures);
        const { probs, batch } = await batcher.submit(x, n);
        const predictions = [];
        for (let i = 0; i < n; i++) {
          const p = Array.from(probs.subarray(i * nClasses, (i + 1) * nClasses));
          let best = 0;
          for (let c = 1; c < nClasses; c++) if (p[c] > p[best]) best = c;
          predictions.push({ class: best, label: labels[best], probability: p[best], probs: p });
        }
        send(res, 200, { predictions, batch });
        return;
      }
      throw new HttpError(404, 'NOT_FOUND', `no route ${req.method} ${url} (routes: GET /health, POST /predict)`);
    } catch (e) {
      sendError(res, e);
    }
  });
  server.keepAliveTimeout = 5000;
  await new Promise((resolve, reject) => { server.once('error', reject); server.listen(port, host, resolve); });
  const actualPort = server.address().port;
  let closing = null;
  const close = () => {
    if (!closing) {
      closing = (async () => {
        batcher.close();
        await new Promise((resolve) => { server.close(() => resolve()); server.closeIdleConnections(); });
        await engine.close();
      })();
    }
    return closing;
  };
  return { server, port: actualPort, url: `http://${host}:${actualPort}`, engine, batcher, close };
}

const OPTIONS = {
  model: { type: 'string', default: path.join(__dirname, 'out', 'model.safetensors'), help: 'safetensors model from make-model.js (made if missing)' },
  port: { type: 'string', default: '8080', help: 'port (0: any free port)' },
  host: { type: 'string', default: '127.0.0.1', help: 'address to listen on' },
  device: { type: 'string', default: 'cpu', help: "'cpu' or 'cuda'" },
  engine: { type: 'string', default: 'worker', help: "'worker': forward passes in a worker_thread; 'inline': on the main thread" },
  'max-batch': { type: 'string', default: '64', help: 'most inputs in one forward pass' },
  'max-wait-ms': { type: 'string', default: '2', help: 'how long the first request of a batch waits for others' },
  threads: { type: 'string', default: '0', help: 'CPU threads for the kernels (0: default)' },
  help: { type: 'boolean', default: false, help: 'this message' },
};

async function main(values) {
  if (!/^(cpu|cuda(:\d+)?)$/.test(values.device)) throw new UsageError(`--device must be 'cpu', 'cuda' or 'cuda:<index>', got '${values.device}'`);
  if (values.engine !== 'worker' && values.engine !== 'inline') throw new UsageError(`--engine must be 'worker' or 'inline', got '${values.engine}'`);
  const kd = require('../..');
  if (values.device.startsWith('cuda') && !kd.cuda.isAvailable()) {
    throw new kd.KindlingError(`--device ${values.device}: CUDA is not available (built without the CUDA backend, or no GPU); use --device cpu`, 'KD_CUDA_UNAVAILABLE');
  }
  if (!fs.existsSync(values.model)) {
    const { makeModel } = require('./make-model');
    makeModel({ out: values.model });
    console.log(`${values.model} did not exist: wrote a random-weight Fashion-MNIST MLP there (make-model.js)`);
  }
  const s = await startServer({
    modelPath: values.model, port: Number(values.port), host: values.host, device: values.device, worker: values.engine === 'worker',
    maxBatch: Number(values['max-batch']), maxWaitMs: Number(values['max-wait-ms']), threads: Number(values.threads), log: console.error,
  });
  console.log(`listening on ${s.url} (model ${JSON.stringify(s.engine.config)}, device ${values.device}, ${s.engine.kind} engine, ` +
    `max batch ${values['max-batch']}, max wait ${values['max-wait-ms']} ms)`);
  const stop = () => { s.close().then(() => process.exit(0)); };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

if (require.main === module) runCli(__filename, OPTIONS, main, 'A node:http inference server with dynamic batching (POST /predict, GET /health).');

module.exports = { startServer, Batcher, parseInputs, HttpError };
