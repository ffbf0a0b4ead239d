#!/usr/bin/env node
// load-test.js - load test for server.js on loopback: `--concurrency` clients send /predict
// requests back to back over keep-alive connections (node:http Agent) for `--duration` seconds,
// while a poller in its own worker_thread GETs /health every `--health-every-ms` (and, with --faults, hostile
// clients in another send bad requests); reports latency percentiles
// (p50/p90/p99/max), throughput, the server's mean batch size, the server's memory (kindling's
// live tensors and bytes, RSS: /health) at the start, half-way and at the end of the measured
// window, and whether the event loop stayed responsive (p99 of /health below 10 ms). The model is
// the server's (its /health says): a classifier gets /predict requests of random inputs of its
// shape, a text model /generate requests (random prompts, --tokens new tokens, the stream read to
// its end). Without --url it starts the server itself (a child process on a free port; it writes
// the model first if missing) and stops it at the end.
//
//   node examples/inference-server/load-test.js [--duration 10] [--concurrency 64] [--engine worker|inline] [--threads 1] [--device cuda]
//   node examples/inference-server/load-test.js --model resnet18 --image-size 64 --max-batch 16
//   node examples/inference-server/load-test.js --model gpt2 --tokens 16 --concurrency 8
//   node examples/inference-server/load-test.js --url http://127.0.0.1:8080
'use strict';

const http = require('node:http');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { Worker } = require('node:worker_threads');
const { runCli } = require('../cli');

// The /health poller (a worker_thread): GETs the url every `everyMs` ms over one keep-alive
// connection, records latencies between 'start' and 'stop', then posts {latencies, errors}.
const POLLER_SRC = `
const http = require('node:http');
const { parentPort, workerData } = require('node:worker_threads');
const { request } = require(workerData.loadTest);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
let recording = false; let stop = false; const latencies = []; let errors = 0;
parentPort.on('message', (m) => { if (m === 'start') recording = true; else stop = true; });
(async () => {
  while (!stop) {
    const t = performance.now();
    try {
      const r = await request(agent, workerData.url, 'GET');
      if (recording && r.status === 200) latencies.push(r.ms); else if (r.status !== 200) errors++;
    } catch (e) { errors++; }
    await new Promise((res) => setTimeout(res, Math.max(0, workerData.everyMs - (performance.now() - t))));
  }
  agent.destroy();
  parentPort.postMessage({ latencies, errors });
  parentPort.close();
})();
`;

// The hostile clients (a worker_thread running runFaults until 'stop', then posting its result):
// building and sending bad requests (a 65-row JSON body, a megabyte of chunks) takes CPU time, which
// on this thread would delay reading the good clients' answers and count as server latency.
const FAULTS_SRC = `
const { parentPort, workerData } = require('node:worker_threads');
const { runFaults } = require(workerData.loadTest);
const run = runFaults(workerData.url, workerData.options);
parentPort.once('message', async () => { parentPort.postMessage(await run.stop()); parentPort.close(); });
`;

/** runFaults in its own thread: resolves stop() to the same result. */
function runFaultsInWorker(url, options) {
  const worker = new Worker(FAULTS_SRC, { eval: true, workerData: { url, options, loadTest: __filename } });
  const result = new Promise((resolve, reject) => { worker.once('message', resolve); worker.once('error', reject); });
  return { stop: () => { worker.postMessage('stop'); return result; } };
}

function percentile(sorted, q) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

function summary(lat) {
  const s = Float64Array.from(lat).sort();
  const mean = s.reduce((a, b) => a + b, 0) / Math.max(1, s.length);
  return { count: s.length, mean, p50: percentile(s, 0.5), p90: percentile(s, 0.9), p99: percentile(s, 0.99), max: s.length ? s[s.length - 1] : NaN };
}

/** body: a string (sent as JSON) or {data: Buffer, shape} (sent as binary float32 with X-Shape). */
function request(agent, url, method, body) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const raw = body && typeof body === 'object';
    const headers = !body ? {} : raw ? { 'content-type': 'application/octet-stream', 'x-shape': body.shape, 'content-length': body.data.length }
      : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
    const req = http.request(url, { method, agent, headers }, (res) => {
      const chunks = [];
      let firstMs = null; // (a stream's first event: the time to its first token)
      res.on('data', (c) => { if (firstMs === null) firstMs = performance.now() - t0; chunks.push(c); });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - t0, firstMs }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(raw ? body.data : body);
  });
}

/** Starts server.js as a child process on a free port; resolves to {url, child}. */
function spawnServer(extraArgs) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(__dirname, 'server.js'), '--port', '0', ...extraArgs], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) { child.stdout.removeAllListeners('data'); child.stdout.resume(); console.log(out.trim()); resolve({ url: m[1], child }); }
    });
    child.once('exit', (code) => reject(Object.assign(new Error(`server.js exited with status ${code} before listening${out.trim() ? `: ${out.trim().split('\n').pop()}` : ''}`),
      { code: 'SERVER_EXITED' })));
  });
}

/**
 * Hostile clients alongside the load (faults.js): `clients` loops, each sending the faults in
 * turn, until stop() is called; resolves to {sent, byStatus, unexpected: [name status]}.
 */
function runFaults(url, { clients = 4, inFeatures = 784, maxBatch = 64, rate = 100 } = {}) {
  const { FAULTS } = require('./faults');
  const u = new URL(url);
  const target = { host: u.hostname, port: Number(u.port) };
  const model = { inFeatures, maxBatch, maxBody: require('./request').maxJsonBody(maxBatch, inFeatures) };
  const names = Object.keys(FAULTS);
  const result = { sent: 0, byStatus: {}, unexpected: [] };
  let stopped = false;
  const slow = new Set(); // slow faults hold a connection until the server's body timeout: at most 8 at once, not awaited
  const record = (name, r) => {
    result.sent++;
    result.byStatus[r.status] = (result.byStatus[r.status] || 0) + 1;
    if (!FAULTS[name].expect.includes(r.status)) result.unexpected.push(`${name} ${r.status}`);
  };
  const loop = async (k) => {
    for (let i = k; !stopped; i++) {
      const name = names[i % names.length];
      if (name === 'slowBody' || name === 'slowHeaders') {
        if (slow.size >= 8) continue;
        const p = FAULTS[name].send(target, model).then((r) => { record(name, r); slow.delete(p); });
        slow.add(p);
        continue;
      }
      const t0 = performance.now();
      record(name, await FAULTS[name].send(target, model));
      // `rate` faults per second in all: each client waits out its share
      const wait = (clients * 1000) / rate - (performance.now() - t0);
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
  };
  const loops = Array.from({ length: clients }, (_, k) => loop(k));
  return { stop: async () => { stopped = true; await Promise.all(loops); await Promise.all([...slow]); return result; } };
}

async function loadTest({ url, duration = 10, concurrency = 64, rows = 1, healthEveryMs = 5, inFeatures: givenFeatures, warmup = 1, faults = 0,
  faultRate = 100, maxBatch = 64, tokens = 8 }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency + 1 });
  const health = async () => JSON.parse((await request(agent, `${url}/health`, 'GET')).body);
  const { model } = await health();
  const text = model && model.kind === 'gpt2';
  const inFeatures = givenFeatures || (model && model.inFeatures) || 784;
  const route = text ? '/generate' : '/predict';
  // a few pre-serialised bodies (random "images", or prompts), so the client spends little time on
  // them: images as binary float32 (what a client should send), the MLP's inputs as JSON
  const binary = model && model.kind === 'vision';
  const values = (n) => Array.from({ length: n }, () => Math.round(Math.random() * 1000) / 1000);
  const bodies = Array.from({ length: 16 }, (_, k) => (text
    ? JSON.stringify({ prompt: Array.from({ length: 2 + (k % 7) }, () => Math.floor(Math.random() * model.vocabSize)), maxNewTokens: tokens })
    : binary ? { data: Buffer.from(new Float32Array(values(rows * inFeatures)).buffer), shape: [rows, ...model.inputShape].join(',') }
      : JSON.stringify({ inputs: Array.from({ length: rows }, () => values(inFeatures)) })));
  const predictLat = []; const healthLat = []; const batches = []; const firstLat = [];
  let errors = 0; let okRows = 0; let measuring = false; let stop = false;

  const client = async (k) => {
    let i = k;
    while (!stop) {
      try {
        const r = await request(agent, `${url}${route}`, 'POST', bodies[i++ % bodies.length]);
        // (a stream that ends without its done event failed)
        if (r.status !== 200 || (text && !r.body.includes('event: done'))) { errors++; continue; }
        if (measuring) {
          predictLat.push(r.ms);
          if (text) firstLat.push(r.firstMs);
          okRows += text ? (r.body.match(/^data: \{"token"/gm) || []).length : rows;
          if (!text) batches.push(JSON.parse(r.body).batch);
        }
      } catch (e) {
        errors++;
        if (stop) break;
      }
    }
  };
  // /health is polled from its own thread, so that the load clients' work in this process does
  // not delay reading its answers: the latency measured is the server's.
  const poller = new Worker(POLLER_SRC, { eval: true, workerData: { url: `${url}/health`, everyMs: healthEveryMs, loadTest: __filename } });
  const pollerDone = new Promise((resolve, reject) => { poller.once('message', resolve); poller.once('error', reject); });
  const tasks = Array.from({ length: concurrency }, (_, k) => client(k));
  const faulty = faults > 0 ? runFaultsInWorker(url, { clients: faults, inFeatures, maxBatch, rate: faultRate }) : null;
  await new Promise((res) => setTimeout(res, warmup * 1000));
  measuring = true;
  poller.postMessage('start');
  const t0 = performance.now();
  const memory = { start: (await health()).memory };
  await new Promise((res) => setTimeout(res, (duration * 1000) / 2 - (performance.now() - t0)));
  memory.half = (await health()).memory;
  await new Promise((res) => setTimeout(res, duration * 1000 - (performance.now() - t0)));
  memory.end = (await health()).memory;
  measuring = false;
  poller.postMessage('stop');
  const seconds = (performance.now() - t0) / 1000;
  stop = true;
  await Promise.all(tasks);
  const faultResult = faulty ? await faulty.stop() : null;
  const polled = await pollerDone;
  healthLat.push(...polled.latencies);
  errors += polled.errors;
  const { served } = await health();
  agent.destroy();
  const meanBatch = text ? served.meanStepRows : batches.reduce((a, b) => a + b, 0) / Math.max(1, batches.length);
  return {
    model, route, seconds, errors, predict: summary(predictLat), health: summary(healthLat), firstToken: text ? summary(firstLat) : null,
    throughput: { requestsPerS: predictLat.length / seconds, rowsPerS: okRows / seconds }, meanBatch, served, faults: faultResult, memory,
  };
}

/** A one-line name of the model a /health reports. */
const modelName = (m) => (!m ? '?' : m.kind === 'vision' ? `${m.name} ${m.inputShape.join('x')}` : m.kind === 'gpt2'
  ? `gpt2 ${m.nLayer} layers x ${m.nEmbd}, ${m.slots} slots` : `${m.kind || 'mlp'} ${m.inFeatures} -> ${m.classes}`);

function report(r, { concurrency, rows }) {
  const f = (v) => v.toFixed(2).padStart(8);
  const line = (name, s) => `${name.padEnd(10)} ${String(s.count).padStart(7)} ${f(s.mean)} ${f(s.p50)} ${f(s.p90)} ${f(s.p99)} ${f(s.max)}`;
  const text = r.route === '/generate';
  console.log(`\nmodel ${modelName(r.model)}: ${r.seconds.toFixed(1)} s, ${concurrency} concurrent clients x ` +
    `${text ? 'one prompt' : `${rows} input(s)`} per request, /health polled alongside`);
  console.log(`${'route'.padEnd(10)} ${'count'.padStart(7)} ${'mean ms'.padStart(8)} ${'p50'.padStart(8)} ${'p90'.padStart(8)} ${'p99'.padStart(8)} ${'max'.padStart(8)}`);
  console.log(line(r.route, r.predict));
  if (r.firstToken) console.log(line(' 1st token', r.firstToken));
  console.log(line('/health', r.health));
  console.log(`throughput: ${r.throughput.requestsPerS.toFixed(1)} requests/s, ${r.throughput.rowsPerS.toFixed(0)} ${text ? 'tokens' : 'inputs'}/s; ` +
    `mean ${text ? 'decode-step batch' : 'forward batch'} ${r.meanBatch.toFixed(1)} ${text ? 'sequences' : 'inputs'}; errors ${r.errors}`);
  const mem = (m) => (m ? `${m.liveTensors} tensors, ${(m.hostBytesInUse / 2 ** 20).toFixed(1)} MB, RSS ${(m.rss / 2 ** 20).toFixed(0)} MB` : '?');
  console.log(`server memory (main thread): start ${mem(r.memory.start)}; half-way ${mem(r.memory.half)}; end ${mem(r.memory.end)}`);
  if (r.faults) {
    const st = Object.entries(r.faults.byStatus).map(([k, v]) => `${k === 'null' ? 'closed' : k}: ${v}`).join(', ');
    console.log(`faults sent alongside: ${r.faults.sent} (${st}); answered otherwise than expected: ${r.faults.unexpected.length}` +
      `${r.faults.unexpected.length ? ` (${[...new Set(r.faults.unexpected)].join(', ')})` : ''}`);
  }
  const ok = r.health.p99 < 10;
  console.log(`event loop responsive (p99 of /health under load < 10 ms): ${ok ? 'yes' : 'NO'} (${r.health.p99.toFixed(2)} ms)`);
  return ok;
}

const OPTIONS = {
  url: { type: 'string', help: 'a running server to test (default: start server.js on a free port)' },
  duration: { type: 'string', default: '10', help: 'seconds of load' },
  concurrency: { type: 'string', default: '64', help: 'clients sending requests back to back' },
  rows: { type: 'string', default: '1', help: 'inputs per request' },
  'health-every-ms': { type: 'string', default: '5', help: 'period of the /health poller' },
  model: { type: 'string', help: 'server.js --model (an MLP file, resnet18, mobilenet_v2, ..., gpt2)' },
  'image-size': { type: 'string', default: '224', help: 'server.js --image-size (vision models)' },
  classes: { type: 'string', default: '1000', help: 'server.js --classes (vision models)' },
  tokens: { type: 'string', default: '8', help: 'gpt2: new tokens per request' },
  device: { type: 'string', default: 'cpu', help: "server.js --device ('cpu' or 'cuda')" },
  engine: { type: 'string', default: 'worker', help: "server.js --engine ('worker' or 'inline')" },
  threads: { type: 'string', default: '1', help: 'server.js --threads' },
  'max-batch': { type: 'string', default: '64', help: 'server.js --max-batch' },
  'max-wait-ms': { type: 'string', default: '2', help: 'server.js --max-wait-ms' },
  faults: { type: 'string', default: '0', help: 'hostile clients (faults.js) sending bad requests alongside the load' },
  'fault-rate': { type: 'string', default: '100', help: 'bad requests per second, all fault clients together' },
  compare: { type: 'boolean', default: false, help: 'run twice, without and then with --faults clients, and compare /predict latency' },
  json: { type: 'boolean', default: false, help: 'also print the results as one JSON line' },
  help: { type: 'boolean', default: false, help: 'this message' },
};

async function main(values) {
  let child = null;
  let url = values.url;
  if (!url) {
    const extra = ['--device', values.device, '--max-batch', values['max-batch'], '--max-wait-ms', values['max-wait-ms'],
      '--engine', values.engine, '--threads', values.threads, '--image-size', values['image-size'], '--classes', values.classes,
      ...(values.model ? ['--model', values.model] : [])];
    ({ url, child } = await spawnServer(extra));
  }
  const opts = { url, duration: Number(values.duration), concurrency: Number(values.concurrency), rows: Number(values.rows),
    healthEveryMs: Number(values['health-every-ms']), maxBatch: Number(values['max-batch']), faults: Number(values.faults),
    faultRate: Number(values['fault-rate']), tokens: Number(values.tokens) };
  try {
    if (values.compare) {
      const faults = opts.faults || 4;
      const base = await loadTest({ ...opts, faults: 0 });
      report(base, opts);
      const withFaults = await loadTest({ ...opts, faults });
      report(withFaults, opts);
      if (values.json) console.log(JSON.stringify({ base, withFaults }));
      const ratio = withFaults.predict.p99 / base.predict.p99;
      console.log(`\n/predict p99 with ${faults} fault clients / without: ${withFaults.predict.p99.toFixed(2)} / ${base.predict.p99.toFixed(2)} ms = ${ratio.toFixed(2)}x; ` +
        `good requests failed: ${withFaults.errors}; faults answered otherwise than expected: ${withFaults.faults.unexpected.length}`);
      if (withFaults.errors || withFaults.faults.unexpected.length) process.exitCode = 1;
    } else {
      const r = await loadTest(opts);
      if (values.json) console.log(JSON.stringify(r));
      if (!report(r, opts)) process.exitCode = 1;
      if (r.faults && r.faults.unexpected.length) process.exitCode = 1;
    }
  } finally {
    if (child) { child.removeAllListeners('exit'); child.kill('SIGTERM'); }
  }
}

if (require.main === module) {
  runCli(__filename, OPTIONS, main, 'Load test of server.js: latency percentiles, throughput, batch sizes, event-loop responsiveness.');
}

module.exports = { loadTest, runFaults, percentile, summary, request };
