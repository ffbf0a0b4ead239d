#!/usr/bin/env node
// server.js - a node:http inference server (README.md) for the safetensors MLP written by
// make-model.js or a vision classifier of examples/vision (--model resnet18, mobilenet_v2, ...),
// with dynamic batching (batcher.js), or for a GPT-2 of examples/gpt2 (--model gpt2: POST
// /generate, Server-Sent Events, continuous batching in generator.js). For the classifiers,
// requests that arrive together are stacked into one input
// tensor and run as one forward pass (engine.js: under kd.inferenceMode, tensors freed by
// kd.tidy; in a worker_thread by default, so that the event loop only parses JSON and moves
// bytes, or on the main thread with --engine inline). Routes:
//   POST /predict  {"inputs": [[784 numbers], ...]} or {"input": [784 numbers]} (a 28x28 nested
//                  array works too; an image: 3 * H * W numbers), or a binary body
//                  (application/octet-stream: float32 little-endian, shape in X-Shape: "N,3,H,W")
//                  -> {"predictions": [{"class", "label", "probability", "probs"}], "batch": rows in its forward pass}
//   POST /generate {"prompt": [token ids], "maxNewTokens", "eosTokenId", "doSample", "temperature",
//                  "topK", "topP", "seed"} -> text/event-stream:
//                  `data: {"token", "index"}` per token, then `event: done` {"tokens", "finishReason"}
//   GET  /health   liveness: {"status": "ok", "state", ...counters}
//   GET  /ready    readiness: 200, or 503 while shutting down, with the queue full or the engine failed
// As a service: bodies are checked before work is queued (request.js: JSON only, size limit,
// shape); the queue is bounded and a full queue answers 503 with Retry-After (backpressure);
// every request is answered within --request-timeout-ms (503 TIMEOUT otherwise); headers and
// body must arrive within --body-timeout-ms (408: slow clients cannot hold connections); on
// SIGTERM/SIGINT the server stops taking requests, answers every accepted one, then exits 0.
// Errors are JSON {"error": {"code", "message"}} with 400 (bad JSON or shape, too deep or too
// many arrays, a value float32 cannot hold, or inputs the model's output is not finite for:
// never null probabilities), 404, 405, 408, 413 (body or batch too large), 415 (not JSON, or a
// charset other than UTF-8) or 503 (queue full, timeout, shutting down); 500 only for a failure
// inside the model.
//
//   node examples/inference-server/server.js [--port 8080] [--device cuda] [--engine worker|inline] [--threads 1] [--help]
'use strict';

const http = require('node:http');
const path = require('node:path');
const fs = require('node:fs');
const { createEngine } = require('./engine');
const { Batcher } = require('./batcher');
const { HttpError, checkContentType, readBody, parseInputs, isBinary, parseBinary, maxJsonBody } = require('./request');
const { UsageError, runCli } = require('../cli');
const { VISION_NAMES } = require('./models');

/** The main thread's memory: kindling's live tensors and bytes, and the process's RSS. */
function memory() {
  const m = require('../..').memory();
  return { liveTensors: m.liveTensors, hostBytesInUse: m.hostBytesInUse, rss: process.memoryUsage().rss };
}

/**
 * A Generator (generator.js) on the main thread for a spec {kind: 'gpt2', dir (a Hugging Face
 * GPT-2 folder) | weights (a safetensors file; config: its shape, GPT-2 small's by default) | neither
 * (random weights of `config`, seeded by seed), slots, maxLength, maxNewTokens}.
 */
function createGenerator(spec, { device = 'cpu', threads = 0 } = {}) {
  const kd = require('../..');
  if (threads > 0) kd.setNumThreads(threads);
  const { GPT2LMHeadModel } = require('../gpt2/model');
  let m;
  if (spec.dir) m = GPT2LMHeadModel.fromPretrained(spec.dir, { device });
  else if (spec.weights) m = GPT2LMHeadModel.fromSafetensors(spec.weights, spec.config || {}, { device });
  else {
    kd.manualSeed(spec.seed || 0);
    m = new GPT2LMHeadModel(spec.config || SMALL_GPT2);
    if (device !== 'cpu') m.to(device);
  }
  m.eval();
  const { Generator } = require('./generator');
  const maxLength = Math.min(spec.maxLength || m.config.nPositions, m.config.nPositions);
  return new Generator(m, { slots: spec.slots, maxLength, maxNewTokens: spec.maxNewTokens, maxWaiting: spec.maxWaiting, timeoutMs: spec.timeoutMs });
}

/** The random GPT-2 served without weights: small enough to answer in milliseconds anywhere. */
const SMALL_GPT2 = { vocabSize: 256, nPositions: 128, nEmbd: 64, nLayer: 2, nHead: 4 };

/** Reads and drops what is left of a refused request (at most 1 s), then closes its connection. */
function drainThenClose(req) {
  if (req.complete) { req.socket.destroySoon(); return; }
  const timer = setTimeout(() => req.socket.destroy(), 1000);
  req.on('end', () => { clearTimeout(timer); req.socket.destroySoon(); });
  req.on('error', () => { clearTimeout(timer); req.socket.destroy(); });
  req.resume();
}

/**
 * Starts the server. Options: model (a models.js spec: an MLP file's path, or {kind: 'vision',
 * name, weights, imageSize, ...}; modelPath is the MLP file's, as before), port (0 = ephemeral), host, device, worker, maxBatch,
 * maxWaitMs, maxQueueRows, threads, requestTimeoutMs (answer within, or 503 TIMEOUT),
 * bodyTimeoutMs (headers and body must arrive within, or 408), engine (an engine object with
 * ready/run/close/config instead of loading modelPath: a custom runtime, or a test's). Resolves
 * to {server, port, url, engine, batcher, state(), close({graceful, timeoutMs})}.
 */
async function startServer(options = {}) {
  const {
    modelPath = path.join(__dirname, 'out', 'model.safetensors'), model = modelPath, port = 8080, host = '127.0.0.1', device = 'cpu',
    worker = false, maxBatch = 64, maxWaitMs = 2, maxQueueRows = 4096, threads = 0, requestTimeoutMs = 10000,
    bodyTimeoutMs = 10000, maxJsonBytes = 64 * 2 ** 20, log = () => {},
  } = options;
  // a text model (options.generator, or model {kind: 'gpt2'}) serves POST /generate; a classifier POST /predict
  let generator = options.generator || null;
  if (!generator && model && model.kind === 'gpt2') generator = createGenerator({ timeoutMs: requestTimeoutMs, ...model }, { device, threads });
  const engine = generator ? null : options.engine || createEngine(model, { device, worker, threads });
  if (engine) await engine.ready();
  const { inFeatures = 0, classes: nClasses = 0 } = engine ? engine.config : {};
  const inputShape = engine ? engine.config.inputShape || [inFeatures] : [];
  const labels = engine && engine.classes ? engine.classes : Array.from({ length: nClasses }, (_, i) => String(i));
  const batcher = engine ? new Batcher(engine, { inFeatures, classes: nClasses, maxBatch, maxWaitMs, maxQueueRows, timeoutMs: requestTimeoutMs }) : null;
  const maxBody = maxJsonBody(maxBatch, inFeatures, maxJsonBytes);
  const maxBinaryBody = maxBatch * inFeatures * 4;
  // the most arrays and objects a body may open: a row of inFeatures values nests at most one
  // array per value (28 x 28: 28), and 16 more for the body, "inputs" and other members
  const maxArrays = maxBatch * (1 + inFeatures) + 16;
  const started = Date.now();
  let state = 'ready'; // -> 'draining' -> 'closed'

  const send = (res, status, obj, headers = {}) => {
    if (res.headersSent || res.destroyed) return;
    const body = JSON.stringify(obj);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
    res.end(body);
  };
  const sendError = (res, e) => {
    if (e instanceof HttpError) send(res, e.status, { error: { code: e.code, message: e.message } }, e.headers);
    else { log(`error: ${e.stack || e}`); send(res, 500, { error: { code: 'INTERNAL', message: String(e.message || e) } }); }
  };
  /** Why the server cannot take work now (null: it can). */
  const notReady = () => {
    if (state !== 'ready') return 'shutting down';
    const failed = engine ? engine.failed : generator.failed;
    if (failed) return `the engine failed: ${failed.message}`;
    if (engine ? batcher.full() : generator.full()) return 'the queue is full';
    return null;
  };

  async function predict(req, res) {
    if (!engine) throw new HttpError(404, 'NOT_FOUND', 'this server serves a text model: POST /generate');
    if (req.method !== 'POST') throw new HttpError(405, 'METHOD_NOT_ALLOWED', `${req.method} /predict: use POST with a JSON body`);
    if (state !== 'ready') throw new HttpError(503, 'SHUTTING_DOWN', 'the server is shutting down', { connection: 'close' });
    let x;
    let n;
    if (isBinary(req)) {
      ({ x, n } = parseBinary(await readBody(req, maxBinaryBody, { binary: true }), req.headers['x-shape'], inputShape, maxBatch));
    } else {
      checkContentType(req);
      ({ x, n } = parseInputs(await readBody(req, maxBody, { maxRows: maxBatch, maxArrays }), inFeatures, maxBatch));
    }
    const { promise, cancel } = batcher.submit(x, n);
    // a client that goes away before its answer does not cost a forward pass
    const onClose = () => { if (!res.writableFinished) cancel(); };
    res.once('close', onClose);
    const { probs, batch } = await promise;
    const predictions = [];
    for (let i = 0; i < n; i++) {
      const p = Array.from(probs.subarray(i * nClasses, (i + 1) * nClasses));
      // (inputs that float32 holds can still overflow inside the model: JSON would answer null)
      if (!p.every(Number.isFinite)) {
        throw new HttpError(400, 'INVALID_INPUT',
          `the model's output for inputs[${i}] is not finite: its values are too large in magnitude for the model's float32 arithmetic`);
      }
      let best = 0;
      for (let c = 1; c < nClasses; c++) if (p[c] > p[best]) best = c;
      predictions.push({ class: best, label: labels[best], probability: p[best], probs: p });
    }
    send(res, 200, { predictions, batch }, state === 'ready' ? {} : { connection: 'close' });
  }

  /**
   * POST /generate {"prompt": [ids], "maxNewTokens"?, "eosTokenId"?, sampling options?}: Server-Sent Events, one
   * `data: {"token", "index"}` event per token as it is produced, then `event: done` with
   * {"tokens", "finishReason"} (or `event: error` with {"code", "message"} if it failed after the
   * stream began). Refusals before the stream begins are JSON errors as for /predict.
   */
  async function generate(req, res) {
    if (req.method !== 'POST') throw new HttpError(405, 'METHOD_NOT_ALLOWED', `${req.method} /generate: use POST with a JSON body`);
    if (state !== 'ready') throw new HttpError(503, 'SHUTTING_DOWN', 'the server is shutting down', { connection: 'close' });
    checkContentType(req);
    const text = await readBody(req, generator.maxLength * 24 + 4096, { maxRows: Infinity, maxArrays: 16 });
    let body;
    try { body = JSON.parse(text); } catch (e) { throw new HttpError(400, 'INVALID_JSON', `invalid JSON: ${e.message}`); }
    const job = generator.check(body);
    let started = false;
    const event = (name, obj) => { if (!res.destroyed) res.write(`${name ? `event: ${name}\n` : ''}data: ${JSON.stringify(obj)}\n\n`); };
    const { promise, cancel } = generator.submit(job, (token, index) => {
      if (!started) {
        started = true;
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...(state === 'ready' ? {} : { connection: 'close' }) });
      }
      event(null, { token, index });
    });
    res.once('close', () => { if (!res.writableFinished) cancel(); });
    try {
      const r = await promise;
      event('done', r);
      res.end();
    } catch (e) {
      if (!started) throw e;
      event('error', { code: e.code || 'INTERNAL', message: e.message });
      res.end();
    }
  }

  const server = http.createServer({
    // how often Node checks the two timeouts below (its default, 30 s, would let a slow client
    // hold a connection that long)
    connectionsCheckingInterval: Math.max(50, Math.min(1000, bodyTimeoutMs / 4)),
    headersTimeout: bodyTimeoutMs,
    requestTimeout: bodyTimeoutMs,
  }, async (req, res) => {
    try {
      const url = req.url.split('?')[0];
      if (url === '/health' || url === '/ready') {
        if (req.method !== 'GET' && req.method !== 'HEAD') throw new HttpError(405, 'METHOD_NOT_ALLOWED', `${req.method} ${url}: use GET`);
        if (url === '/ready') {
          const why = notReady();
          if (why) send(res, 503, { status: 'unavailable', reason: why }, { 'retry-after': '1' });
          else send(res, 200, { status: 'ready' });
          return;
        }
        if (generator) {
          const st = generator.stats;
          send(res, 200, {
            status: 'ok', state, uptimeS: (Date.now() - started) / 1000, device, engine: 'inline', model: generator.config,
            queue: { requests: generator.waiting.length, running: generator.active.length, maxRequests: generator.maxWaiting },
            served: { ...st, meanStepRows: st.steps ? st.stepRows / st.steps : 0 }, memory: memory(),
          });
          return;
        }
        send(res, 200, {
          status: 'ok', state, uptimeS: (Date.now() - started) / 1000, device, engine: engine.kind,
          model: engine.config, queue: { requests: batcher.queue.length, rows: batcher.queuedRows, maxRows: maxQueueRows },
          served: { ...batcher.stats, meanBatch: batcher.stats.batches ? batcher.stats.rows / batcher.stats.batches : 0 }, memory: memory(),
        });
        return;
      }
      if (url === '/predict') { await predict(req, res); return; }
      if (url === '/generate' && generator) { await generate(req, res); return; }
      throw new HttpError(404, 'NOT_FOUND', `no route ${req.method} ${url} (routes: POST ${generator ? '/generate' : '/predict'}, GET /health, GET /ready)`);
    } catch (e) {
      sendError(res, e);
      // the rest of a refused body is not read: close the connection once the answer is out
      // (closing a socket with unread bytes resets it, and the client may lose the answer: read
      // the rest and drop it, for at most a second, then close)
      if (e instanceof HttpError && e.headers.connection === 'close') res.once('finish', () => drainThenClose(req));
    }
  });
  server.keepAliveTimeout = 5000;
  await new Promise((resolve, reject) => { server.once('error', reject); server.listen(port, host, resolve); });
  const actualPort = server.address().port;
  let closing = null;
  /**
   * Stops the server. graceful (default): refuse new requests (503, /ready 503), answer every
   * accepted one (queued and in flight) within timeoutMs, then close; otherwise (or after
   * timeoutMs) answer the queued ones 503. Resolves {drained: whether all were answered}.
   */
  const close = ({ graceful = true, timeoutMs = 10000 } = {}) => {
    if (!closing) {
      closing = (async () => {
        state = 'draining';
        const listening = new Promise((resolve) => server.close(() => resolve()));
        let drained = true;
        if (graceful) {
          let timer;
          const deadline = new Promise((resolve) => { timer = setTimeout(() => resolve(false), timeoutMs); });
          drained = await Promise.race([(batcher || generator).drain().then(() => true), deadline]);
          clearTimeout(timer);
        }
        (batcher || generator).close(); // (after the timeout: the queued ones get 503; engine.close() ends a stuck batch)
        server.closeIdleConnections();
        const force = setTimeout(() => server.closeAllConnections(), graceful ? 1000 : 0);
        await listening;
        clearTimeout(force);
        state = 'closed';
        if (engine) await engine.close();
        else { await generator.drain(); if (!options.generator) generator.dispose(); }
        return { drained };
      })();
    }
    return closing;
  };
  return { server, port: actualPort, url: `http://${host}:${actualPort}`, engine, batcher, generator, state: () => state, close };
}

const OPTIONS = {
  model: { type: 'string', default: path.join(__dirname, 'out', 'model.safetensors'),
    help: `a safetensors MLP from make-model.js (made if missing), a vision classifier (${VISION_NAMES.join(', ')}), or gpt2 (POST /generate)` },
  weights: { type: 'string', help: 'vision: a safetensors state dict (export_torchvision.py); gpt2: a Hugging Face GPT-2 safetensors file (GPT-2 small); default: random weights' },
  'gpt2-dir': { type: 'string', help: 'gpt2: a Hugging Face GPT-2 folder (config.json, model.safetensors)' },
  slots: { type: 'string', default: '8', help: 'gpt2: most sequences in the running decode batch' },
  'max-length': { type: 'string', default: '0', help: "gpt2: most tokens (prompt + new) per request (0: the model's nPositions)" },
  labels: { type: 'string', help: 'vision: class names, one a line' },
  'image-size': { type: 'string', default: '224', help: 'vision: the side of the square input images' },
  classes: { type: 'string', default: '1000', help: 'vision: the number of classes' },
  port: { type: 'string', default: '8080', help: 'port (0: any free port)' },
  host: { type: 'string', default: '127.0.0.1', help: 'address to listen on' },
  device: { type: 'string', default: 'cpu', help: "'cpu' or 'cuda'" },
  engine: { type: 'string', default: 'worker', help: "'worker': forward passes in a worker_thread; 'inline': on the main thread" },
  'max-batch': { type: 'string', default: '64', help: 'most inputs in one forward pass' },
  'max-wait-ms': { type: 'string', default: '2', help: 'how long the first request of a batch waits for others' },
  'max-queue': { type: 'string', default: '4096', help: 'most inputs waiting; beyond, 503 QUEUE_FULL' },
  'request-timeout-ms': { type: 'string', default: '10000', help: 'answer within this, or 503 TIMEOUT' },
  'body-timeout-ms': { type: 'string', default: '10000', help: 'headers and body must arrive within this, or 408' },
  'shutdown-timeout-ms': { type: 'string', default: '10000', help: 'on SIGTERM, how long accepted requests may take' },
  threads: { type: 'string', default: '0', help: 'CPU threads for the kernels (0: default)' },
  help: { type: 'boolean', default: false, help: 'this message' },
};

const accepted = (s) => (s.batcher ? s.batcher.queue.length + s.batcher.inFlight : s.generator.waiting.length + s.generator.active.length);

/** Checks that the numeric options are numbers in range (a UsageError otherwise). */
function checkNumbers(values) {
  for (const [k, min] of [['port', 0], ['max-batch', 1], ['image-size', 8], ['classes', 1], ['slots', 1], ['max-length', 0], ['max-wait-ms', 0], ['threads', 0], ['max-queue', 1],
    ['request-timeout-ms', 1], ['body-timeout-ms', 1], ['shutdown-timeout-ms', 0]]) {
    const v = Number(values[k]);
    if (!Number.isInteger(v) || v < min) throw new UsageError(`--${k} must be an integer >= ${min}, got '${values[k]}'`);
  }
}

async function main(values) {
  checkNumbers(values);
  if (!/^(cpu|cuda(:\d+)?)$/.test(values.device)) throw new UsageError(`--device must be 'cpu', 'cuda' or 'cuda:<index>', got '${values.device}'`);
  if (values.engine !== 'worker' && values.engine !== 'inline') throw new UsageError(`--engine must be 'worker' or 'inline', got '${values.engine}'`);
  const kd = require('../..');
  if (values.device.startsWith('cuda') && !kd.cuda.isAvailable()) {
    throw new kd.KindlingError(`--device ${values.device}: CUDA is not available (built without the CUDA backend, or no GPU); use --device cpu`, 'KD_CUDA_UNAVAILABLE');
  }
  let model = values.model;
  if (values.model === 'gpt2') {
    model = { kind: 'gpt2', dir: values['gpt2-dir'] || null, weights: values.weights || null, slots: Number(values.slots), maxLength: Number(values['max-length']) || 0 };
  } else if (VISION_NAMES.includes(values.model)) {
    model = { kind: 'vision', name: values.model, weights: values.weights || null, labels: values.labels || null,
      imageSize: Number(values['image-size']), numClasses: Number(values.classes) };
  } else if (!fs.existsSync(values.model)) {
    if (!values.model.endsWith('.safetensors')) throw new UsageError(`--model must be a .safetensors MLP file or one of ${VISION_NAMES.join(', ')}, gpt2, got '${values.model}'`);
    const { makeModel } = require('./make-model');
    makeModel({ out: values.model });
    console.log(`${values.model} did not exist: wrote a random-weight Fashion-MNIST MLP there (make-model.js)`);
  }
  const s = await startServer({
    model, port: Number(values.port), host: values.host, device: values.device, worker: values.engine === 'worker',
    maxBatch: Number(values['max-batch']), maxWaitMs: Number(values['max-wait-ms']), threads: Number(values.threads), log: console.error,
    maxQueueRows: Number(values['max-queue']), requestTimeoutMs: Number(values['request-timeout-ms']), bodyTimeoutMs: Number(values['body-timeout-ms']),
  });
  console.log(`listening on ${s.url} (model ${JSON.stringify((s.engine || s.generator).config)}, device ${values.device}, ${s.engine ? s.engine.kind : 'inline'} engine, ` +
    `max batch ${values['max-batch']}, max wait ${values['max-wait-ms']} ms)`);
  // graceful: answer what was accepted, then exit 0; a second signal exits at once
  const stop = (signal) => {
    console.log(`${signal}: finishing ${accepted(s)} accepted request(s), then exiting`);
    process.once(signal, () => process.exit(1));
    s.close({ graceful: true, timeoutMs: Number(values['shutdown-timeout-ms']) }).then(({ drained }) => {
      console.log(drained ? 'all accepted requests answered; bye' : 'shutdown timeout: the rest were answered 503; bye');
      process.exit(0);
    });
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

if (require.main === module) runCli(__filename, OPTIONS, main, 'A node:http inference server with dynamic batching (POST /predict, GET /health, GET /ready).');

module.exports = { startServer, Batcher, parseInputs, HttpError };
