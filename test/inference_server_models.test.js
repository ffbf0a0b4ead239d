// inference_server_models.test.js - the inference-server example (examples/inference-server)
// serving the vision classifiers and GPT-2: /predict answers for ResNet-18 and MobileNetV2 (random
// or loaded weights; JSON and binary float32 bodies, checked) equal the model's own forward, and
// concurrent requests share forward passes; POST /generate streams tokens as Server-Sent Events,
// and continuous batching (requests joining and leaving the decode batch between steps) gives each
// request the greedy tokens it gets decoded alone; a short load on ResNet-18 fails no request and
// leaves the server's memory flat between its first and second half.
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const http = require('node:http');
const kd = require('..');

const SERVER_DIR = path.join(__dirname, '..', 'examples', 'inference-server');
const { startServer } = require(path.join(SERVER_DIR, 'server.js'));
const { request, loadTest } = require(path.join(SERVER_DIR, 'load-test.js'));
const { Generator } = require(path.join(SERVER_DIR, 'generator.js'));
const { GPT2LMHeadModel } = require(path.join(__dirname, '..', 'examples', 'gpt2', 'model.js'));
const vision = require(path.join(__dirname, '..', 'examples', 'vision', 'models'))(kd);

/** POSTs body to url with headers; {status, headers, body (text), chunks: [{text, at}]}. */
function post(url, body, headers = { 'content-type': 'application/json' }) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers }, (res) => {
      const chunks = [];
      res.on('data', (d) => chunks.push({ text: d.toString('utf8'), at: performance.now() }));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: chunks.map((c) => c.text).join(''), chunks }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}
const binary = (url, values, shape) => post(`${url}/predict`, Buffer.from(new Float32Array(values).buffer),
  { 'content-type': 'application/octet-stream', ...(shape === undefined ? {} : { 'x-shape': shape }) });
const errorOf = (r) => JSON.parse(r.body).error;
/** Deterministic inputs in [-1, 1]. */
const image = (n, seed) => Array.from({ length: n }, (_, i) => Math.sin(0.37 * i + seed));
/** The model's softmax for one input of `shape`, alone. */
const reference = (model, x, shape) => kd.inferenceMode(() => kd.tidy(() => model(kd.tensor(x).view(1, ...shape)).softmax(1).dataSync()));
const close = (a, b, tol, what) => a.forEach((v, i) => assert.ok(Math.abs(v - b[i]) <= tol, `${what}[${i}]: ${v} vs ${b[i]}`));

describe('inference server: vision classifiers', function () {
  this.timeout(60000);
  let s;
  const shape = [3, 32, 32];
  const n = 3 * 32 * 32;
  before(async () => {
    s = await startServer({ model: { kind: 'vision', name: 'resnet18', imageSize: 32, numClasses: 10, width: 16 }, port: 0, maxBatch: 4, maxWaitMs: 20 });
  });
  after(() => s && s.close());

  it('answers JSON and binary float32 requests with the model\'s own softmax, batched or not', async function () {
    assert.deepEqual(s.engine.config.inputShape, shape);
    const xs = [image(n, 1), image(n, 2), image(n, 3)];
    const refs = xs.map((x) => reference(s.engine.model, x, shape));
    const viaJson = JSON.parse((await post(`${s.url}/predict`, JSON.stringify({ inputs: xs }))).body);
    assert.equal(viaJson.batch, 3);
    viaJson.predictions.forEach((p, i) => {
      close(p.probs, refs[i], 1e-5, `json ${i}`);
      assert.equal(p.class, refs[i].indexOf(Math.max(...refs[i])));
    });
    const viaBinary = JSON.parse((await binary(s.url, xs.flat(), `3,${shape}`)).body);
    viaBinary.predictions.forEach((p, i) => close(p.probs, refs[i], 1e-5, `binary ${i}`));
    const one = await binary(s.url, xs[1], shape.join(', '));
    assert.equal(one.status, 200, one.body);
    close(JSON.parse(one.body).predictions[0].probs, refs[1], 1e-5, 'one binary input');
    // requests that arrive together share a forward pass (dynamic batching)
    const rs = await Promise.all(xs.map((x) => binary(s.url, x, shape.join(','))));
    rs.forEach((r, i) => close(JSON.parse(r.body).predictions[0].probs, refs[i], 1e-5, `concurrent ${i}`));
    assert.ok(rs.some((r) => JSON.parse(r.body).batch > 1), rs.map((r) => JSON.parse(r.body).batch).join(' '));
  });

  it('refuses binary bodies whose X-Shape or length is wrong, with non-finite values, or too many inputs', async function () {
    const x = image(n, 0);
    const cases = [
      [x, undefined, 400, 'INVALID_SHAPE', /X-Shape header/],
      [x, 'abc', 400, 'INVALID_SHAPE', /X-Shape header/],
      [x, '3,32,31', 400, 'INVALID_SHAPE', /not \[N, 3,32,32\]/],
      [x, '1,1,3,32,32', 400, 'INVALID_SHAPE', /not \[N/],
      [x, '2,3,32,32', 400, 'INVALID_SHAPE', /needs 24576/],
      [x.slice(1), '3,32,32', 400, 'INVALID_SHAPE', /holds 12284 bytes/],
      [[...x.slice(0, 5), NaN, ...x.slice(6)], '3,32,32', 400, 'INVALID_INPUT', /value 5 .*not a finite number/],
      [[...x.slice(0, 5), Infinity, ...x.slice(6)], '3,32,32', 400, 'INVALID_INPUT', /not a finite number/],
      [[], '0,3,32,32', 400, 'INVALID_INPUT', /no input/],
      [[], '5,3,32,32', 413, 'BATCH_TOO_LARGE', /at most 4 inputs, got 5/],
      [[], '99999999999,3,32,32', 400, 'INVALID_SHAPE', /X-Shape header/],
    ];
    for (const [values, hdr, status, code, message] of cases) {
      const r = await binary(s.url, values, hdr);
      assert.equal(r.status, status, `${hdr}: ${r.body}`);
      assert.equal(errorOf(r).code, code, hdr);
      assert.match(errorOf(r).message, message, hdr);
    }
    // a body larger than maxBatch inputs is refused from its Content-Length
    const big = await binary(s.url, new Array(5 * n).fill(0), `5,${shape}`);
    assert.equal(big.status, 413);
    assert.equal(errorOf(big).code, 'BODY_TOO_LARGE');
    // a JSON row of the wrong size still answers 400 INVALID_SHAPE
    const r = await post(`${s.url}/predict`, JSON.stringify({ input: [1, 2, 3] }));
    assert.equal(errorOf(r).code, 'INVALID_SHAPE');
    assert.equal((await binary(s.url, x, '3,32,32')).status, 200, 'still serving');
  });

  it('serves MobileNetV2, and a ResNet-18 state dict loaded from a file (--weights)', async function () {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-serve-'));
    kd.manualSeed(5);
    const ref = vision.resnet18({ numClasses: 10, width: 8 }).eval();
    // BatchNorm statistics that matter (fusing them must keep the answers)
    kd.noGrad(() => {
      for (const [name, b] of Object.entries(ref.stateDict())) {
        if (name.endsWith('running_mean')) b.copy_(kd.randn(b.shape).mul(0.1));
        if (name.endsWith('running_var')) b.copy_(kd.rand(b.shape).add(0.5));
      }
    });
    const file = path.join(tmp, 'resnet18.safetensors');
    kd.saveSync(ref.stateDict(), file);
    const servers = [];
    try {
      const loaded = await startServer({ model: { kind: 'vision', name: 'resnet18', imageSize: 32, numClasses: 10, width: 8, weights: file }, port: 0 });
      servers.push(loaded);
      const x = image(n, 7);
      const r = JSON.parse((await binary(loaded.url, x, '3,32,32')).body);
      close(r.predictions[0].probs, reference(ref, x, shape), 1e-4, 'loaded weights');
      assert.equal(loaded.engine.config.weights, 'loaded');
      const mobile = await startServer({ model: { kind: 'vision', name: 'mobilenet_v2', imageSize: 32, numClasses: 7 }, port: 0, worker: true });
      servers.push(mobile);
      const m = await binary(mobile.url, x, '1,3,32,32');
      assert.equal(m.status, 200, m.body);
      const p = JSON.parse(m.body).predictions[0];
      assert.equal(p.probs.length, 7);
      assert.ok(Math.abs(p.probs.reduce((a, b) => a + b, 0) - 1) < 1e-5);
    } finally {
      for (const t of servers) await t.close();
      kd.dispose(ref.parameters());
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('a short load (16 clients) on ResNet-18 fails no request and keeps memory flat between its halves', async function () {
    const r = await loadTest({ url: s.url, duration: 2, warmup: 0.3, concurrency: 16, healthEveryMs: 50 });
    assert.equal(r.errors, 0);
    assert.ok(r.predict.count >= 50, `${r.predict.count} requests`);
    assert.ok(r.meanBatch > 1, `mean batch ${r.meanBatch}`);
    const { half, end } = r.memory;
    // (the live tensors are those of the batch in flight when /health answers: at most one batch's worth more)
    assert.ok(end.liveTensors <= half.liveTensors + 8, `live tensors ${half.liveTensors} -> ${end.liveTensors}`);
    assert.ok(end.hostBytesInUse <= half.hostBytesInUse + 4 * 2 ** 20, `host bytes ${half.hostBytesInUse} -> ${end.hostBytesInUse}`);
    // (RSS also holds this process's clients and V8's heap growth: a loose bound, against a leak of
    // a batch's tensors per request, 16 x 12 KB x ~500 requests a half)
    assert.ok(end.rss <= half.rss + 64 * 2 ** 20, `RSS ${half.rss} -> ${end.rss}`);
    console.log(`      resnet18 3x32x32 (width 16), 16 clients, ${r.seconds.toFixed(1)} s: ${r.predict.count} requests, ` +
      `${r.throughput.requestsPerS.toFixed(0)}/s, p50 ${r.predict.p50.toFixed(1)} ms, p99 ${r.predict.p99.toFixed(1)} ms, mean batch ${r.meanBatch.toFixed(1)}; ` +
      `RSS ${(half.rss / 2 ** 20).toFixed(0)} -> ${(end.rss / 2 ** 20).toFixed(0)} MB; load ${os.loadavg()[0].toFixed(2)}`);
  });
});

/** A small GPT-2 whose greedy tokens vary (weights larger than GPT-2's initialisation). */
function textModel(seed = 0) {
  kd.manualSeed(seed);
  const model = new GPT2LMHeadModel({ vocabSize: 96, nPositions: 48, nEmbd: 32, nLayer: 2, nHead: 4 }).eval();
  kd.noGrad(() => { for (const p of model.parameters()) if (p.ndim === 2) kd.nn.init.normal_(p, 0, 0.5); });
  return model;
}
/** The events of an SSE body: [{event, data}]. */
const events = (body) => body.split('\n\n').filter(Boolean).map((e) => {
  const ev = /^event: (.*)$/m.exec(e);
  return { event: ev ? ev[1] : 'message', data: JSON.parse(/^data: (.*)$/m.exec(e)[1]) };
});

describe('inference server: text generation', function () {
  this.timeout(60000);
  const prompts = [[1, 2, 3], [9], [5, 6, 7, 8, 9, 10, 11], [60, 30], [42, 43, 44, 45], [7, 7], [80, 1, 80, 1, 80]];
  const lengths = [10, 4, 12, 7, 1, 9, 15];

  it('continuous batching: each request gets the greedy tokens it gets decoded alone', async function () {
    const model = textModel();
    const g = new Generator(model, { slots: 3, maxLength: 48 });
    // in two waves: the second joins while the first is decoding
    const first = prompts.slice(0, 4).map((p, i) => g.submit(g.check({ prompt: p, maxNewTokens: lengths[i] })).promise);
    await new Promise((r) => setTimeout(r, 5));
    const second = prompts.slice(4).map((p, i) => g.submit(g.check({ prompt: p, maxNewTokens: lengths[4 + i] })).promise);
    const outs = await Promise.all([...first, ...second]);
    for (let i = 0; i < prompts.length; i++) {
      const alone = (await model.generate(prompts[i], { maxNewTokens: lengths[i] })).slice(prompts[i].length);
      assert.deepEqual(outs[i].tokens, alone, `request ${i}`);
      assert.equal(outs[i].finishReason, 'length');
    }
    assert.ok(outs.some((o) => new Set(o.tokens).size > 3), 'the tokens vary (the test can tell sequences apart)');
    assert.equal(g.stats.maxStepRows, 3);
    assert.ok(g.stats.steps < lengths.reduce((a, b) => a + b, 0) - prompts.length, 'steps were shared');
    // every row left the cache (kindling's memory under load: the ResNet-18 load test above)
    assert.deepEqual([g.active.length, g.cache.batch, g.waiting.length], [0, 0, 0]);
    // eosTokenId ends a request early
    const eos = outs[6].tokens[3];
    const early = await g.submit(g.check({ prompt: prompts[6], maxNewTokens: 15, eosTokenId: eos })).promise;
    assert.equal(early.finishReason, 'eos');
    assert.deepEqual(early.tokens, outs[6].tokens.slice(0, outs[6].tokens.indexOf(eos) + 1));
    // sampling rows (each with its seed) next to greedy rows: the tokens each gets decoded alone
    const opts = [{ doSample: true, topK: 20, seed: 1 }, {}, { doSample: true, temperature: 0.7, topP: 0.9, seed: 2 }, { doSample: true, seed: 3 }];
    const sampled = await Promise.all(opts.map((o, i) => g.submit(g.check({ prompt: prompts[i], maxNewTokens: 12, ...o })).promise));
    for (let i = 0; i < opts.length; i++) {
      const alone = (await model.generate(prompts[i], { maxNewTokens: 12, ...opts[i] })).slice(prompts[i].length);
      assert.deepEqual(sampled[i].tokens, alone, `sampled request ${i}`);
    }
    assert.notDeepEqual(sampled[0].tokens, (await model.generate(prompts[0], { maxNewTokens: 12 })).slice(prompts[0].length), 'sampling differs from greedy');
    for (const [o, message] of [[{ doSample: true, topP: 0 }, /topP must be a number in \(0, 1\]/], [{ doSample: true, temperature: -1 }, /temperature/],
      [{ doSample: true, seed: 1.5 }, /seed must be null or an integer/], [{ doSample: 'yes' }, /doSample must be a boolean/]]) {
      assert.throws(() => g.check({ prompt: [1], ...o }), (e) => e.status === 400 && message.test(e.message), JSON.stringify(o));
    }
    g.dispose();
  });

  it('continuous batching on CUDA (the emulated GPU too): greedy and sampled rows equal decoding alone', async function () {
    if (!kd.cuda.isAvailable()) this.skip();
    const model = textModel();
    model.to('cuda');
    const g = new Generator(model, { slots: 2, maxLength: 48 });
    const opts = prompts.slice(0, 4).map((p, i) => ({ maxNewTokens: 6 + i, ...(i === 1 ? { doSample: true, topK: 10, seed: 4 } : {}) }));
    const outs = await Promise.all(opts.map((o, i) => g.submit(g.check({ prompt: prompts[i], ...o })).promise));
    for (let i = 0; i < opts.length; i++) {
      assert.deepEqual(outs[i].tokens, (await model.generate(prompts[i], opts[i])).slice(prompts[i].length), `request ${i}`);
    }
    assert.match(String(g.cache.kv[0].device), /^cuda/);
    g.dispose();
    kd.dispose(model.parameters());
  });

  it('POST /generate streams Server-Sent Events as tokens are produced; refusals are JSON errors', async function () {
    const model = textModel();
    const s = await startServer({ generator: new Generator(model, { slots: 2, maxLength: 48, maxWaiting: 2 }), port: 0 });
    try {
      const r = await post(`${s.url}/generate`, JSON.stringify({ prompt: prompts[2], maxNewTokens: 30 }));
      assert.equal(r.status, 200);
      assert.equal(r.headers['content-type'], 'text/event-stream');
      const ev = events(r.body);
      const alone = (await model.generate(prompts[2], { maxNewTokens: 30 })).slice(prompts[2].length);
      assert.deepEqual(ev.slice(0, -1).map((e) => e.data), alone.map((token, index) => ({ token, index })));
      assert.deepEqual(ev[ev.length - 1], { event: 'done', data: { tokens: alone, finishReason: 'length' } });
      assert.ok(r.chunks.length > 2, `the tokens came in ${r.chunks.length} chunks, as they were produced`);
      // refusals
      const bad = [
        [{ prompt: [] }, 400, /non-empty array/], [{ prompt: [1, 96] }, 400, /prompt\[1\] = 96 is not a token id in \[0, 96\)/],
        [{ prompt: [1.5] }, 400, /token id/], [{ prompt: [1], maxNewTokens: 0 }, 400, /positive integer/],
        [{ prompt: [1, 2], maxNewTokens: 47 }, 400, /exceeds the server's maxLength=48/], [[1, 2], 400, /JSON object/],
        [{ prompt: [1], eosTokenId: -1 }, 400, /eosTokenId/],
      ];
      for (const [body, status, message] of bad) {
        const e = await post(`${s.url}/generate`, JSON.stringify(body));
        assert.equal(e.status, status, e.body);
        assert.match(errorOf(e).message, message);
      }
      assert.equal(errorOf(await post(`${s.url}/generate`, '{"prompt": [1,')).code, 'INVALID_JSON');
      assert.equal((await post(`${s.url}/generate`, '{}', { 'content-type': 'text/plain' })).status, 415);
      assert.equal(errorOf(await post(`${s.url}/generate`, `{"prompt": ${'['.repeat(50)}${']'.repeat(50)}}`)).code, 'TOO_DEEP');
      assert.equal((await post(`${s.url}/predict`, '{"input": [1]}')).status, 404);
      const agent = new http.Agent();
      assert.equal((await request(agent, `${s.url}/generate`, 'GET')).status, 405);
      const h = JSON.parse((await request(agent, `${s.url}/health`, 'GET')).body);
      assert.equal(h.model.kind, 'gpt2');
      assert.equal(h.queue.running, 0);
      agent.destroy();
    } finally { await s.close(); }
  });

  it('a client that goes away leaves the decode batch; a full queue answers 503; close drains', async function () {
    const model = textModel();
    const s = await startServer({ generator: new Generator(model, { slots: 1, maxLength: 48, maxWaiting: 1 }), port: 0 });
    try {
      // a client that reads its first token, then disconnects
      await new Promise((resolve, reject) => {
        const req = http.request(`${s.url}/generate`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
          res.on('error', () => {});
          res.once('data', () => { req.destroy(); resolve(); });
        });
        req.on('error', () => {});
        req.on('close', resolve);
        req.end(JSON.stringify({ prompt: [1, 2], maxNewTokens: 40 }));
        setTimeout(() => reject(new Error('no token')), 5000);
      });
      for (let t0 = Date.now(); s.generator.active.length && Date.now() - t0 < 5000;) await new Promise((r) => setTimeout(r, 5));
      assert.equal(s.generator.active.length, 0);
      assert.equal(s.generator.stats.cancelled, 1);
      assert.ok(s.generator.stats.tokens < 40, `${s.generator.stats.tokens} tokens: it stopped early`);
      // one running, one waiting: the third is refused at once
      const rs = await Promise.all([0, 1, 2].map((k) => post(`${s.url}/generate`, JSON.stringify({ prompt: [k + 1], maxNewTokens: 20 }))));
      const statuses = rs.map((r) => r.status).sort();
      assert.deepEqual(statuses, [200, 200, 503]);
      const full = rs.find((r) => r.status === 503);
      assert.equal(errorOf(full).code, 'QUEUE_FULL');
      assert.equal(full.headers['retry-after'], '1');
      // a request that waits for a row longer than its timeout is answered 503 TIMEOUT
      for (let t0 = Date.now(); !s.generator.idle() && Date.now() - t0 < 5000;) await new Promise((r) => setTimeout(r, 1));
      s.generator.timeoutMs = 30;
      s.generator.running = true; // (a decode loop that never frees a row)
      const late = await post(`${s.url}/generate`, JSON.stringify({ prompt: [2], maxNewTokens: 2 }));
      s.generator.running = false;
      assert.equal(late.status, 503, late.body);
      assert.equal(errorOf(late).code, 'TIMEOUT');
      assert.equal(late.headers['retry-after'], '1');
      assert.equal(s.generator.stats.timedOut, 1);
      assert.equal(s.generator.waiting.length, 0);
      s.generator.timeoutMs = 10000;
      // graceful close answers the accepted streams to their end
      const accepted = s.generator.stats.requests + 1;
      const pending = post(`${s.url}/generate`, JSON.stringify({ prompt: [3], maxNewTokens: 20 }));
      for (let t0 = Date.now(); s.generator.stats.requests < accepted && Date.now() - t0 < 5000;) await new Promise((r) => setTimeout(r, 1));
      assert.deepEqual(await s.close({ graceful: true, timeoutMs: 5000 }), { drained: true });
      const last = events((await pending).body);
      assert.equal(last[last.length - 1].event, 'done');
      assert.equal(last[last.length - 1].data.tokens.length, 20);
    } finally { await s.close(); }
  });

  it('load-test.js on /generate: no failed stream, the first token before the last, decode steps shared', async function () {
    const s = await startServer({ generator: new Generator(textModel(), { slots: 4, maxLength: 48 }), port: 0 });
    try {
      const r = await loadTest({ url: s.url, duration: 0.8, warmup: 0.1, concurrency: 8, healthEveryMs: 50, tokens: 24 });
      assert.equal(r.route, '/generate');
      assert.equal(r.errors, 0);
      assert.ok(r.predict.count > 4, `${r.predict.count} streams`);
      assert.equal(r.firstToken.count, r.predict.count);
      assert.ok(r.firstToken.p50 < r.predict.p50, `first token ${r.firstToken.p50} ms, whole stream ${r.predict.p50} ms`);
      assert.ok(r.meanBatch > 1.5, `mean decode-step batch ${r.meanBatch}`);
      assert.ok(r.memory.end.liveTensors <= r.memory.half.liveTensors + 2, 'live tensors flat (but a step\'s token tensor being read)');
    } finally { await s.close(); }
  });

  it('serves a GPT-2 loaded from a safetensors file (--model gpt2 --weights)', async function () {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-serve-'));
    const model = textModel(3);
    const config = { vocabSize: 96, nPositions: 48, nEmbd: 32, nLayer: 2, nHead: 4 };
    const file = path.join(tmp, 'gpt2.safetensors');
    kd.saveSync(model.stateDict(), file);
    const s = await startServer({ model: { kind: 'gpt2', weights: file, config, slots: 2 }, port: 0 });
    try {
      const r = events((await post(`${s.url}/generate`, JSON.stringify({ prompt: [4, 5, 6], maxNewTokens: 12 }))).body);
      const alone = (await model.generate([4, 5, 6], { maxNewTokens: 12 })).slice(3);
      assert.deepEqual(r[r.length - 1].data.tokens, alone);
    } finally {
      await s.close();
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
});

describe('inference server: --model on the command line', function () {
  this.timeout(60000);
  const { spawn, spawnSync } = require('node:child_process');
  /** Starts server.js with args, runs f(url), then SIGTERMs it; resolves to its exit code and output. */
  const withServer = (args, f) => new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(SERVER_DIR, 'server.js'), '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let ran = null;
    child.stderr.on('data', (d) => { err += d; });
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (!m || ran) return;
      ran = Promise.resolve().then(() => f(m[1])).finally(() => child.kill('SIGTERM'));
    });
    child.on('exit', (code) => {
      if (!ran) { reject(new Error(`exited ${code} before listening: ${err}`)); return; }
      ran.then(() => resolve({ code, out, err }), reject);
    });
  });

  it('--model resnet18 --image-size 32 --classes 10 and --model gpt2 serve, then exit 0 on SIGTERM', async function () {
    const v = await withServer(['--model', 'resnet18', '--image-size', '32', '--classes', '10', '--engine', 'inline'], async (url) => {
      const r = await binary(url, image(3 * 32 * 32, 1), '3,32,32');
      assert.equal(r.status, 200, r.body);
      assert.equal(JSON.parse(r.body).predictions[0].probs.length, 10);
    });
    assert.equal(v.code, 0, v.err);
    assert.match(v.out, /"name":"resnet18"/);
    const t = await withServer(['--model', 'gpt2', '--slots', '2', '--max-length', '32'], async (url) => {
      const r = await post(`${url}/generate`, JSON.stringify({ prompt: [1, 2, 3], maxNewTokens: 5 }));
      assert.equal(r.status, 200, r.body);
      const ev = events(r.body);
      assert.equal(ev[ev.length - 1].data.tokens.length, 5);
      assert.equal((await post(`${url}/generate`, JSON.stringify({ prompt: [1], maxNewTokens: 32 }))).status, 400, 'over --max-length');
    });
    assert.equal(t.code, 0, t.err);
  });

  it('an unknown --model is one line, exit status 2', function () {
    const r = spawnSync(process.execPath, [path.join(SERVER_DIR, 'server.js'), '--model', 'resnet9'], { encoding: 'utf8' });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /--model must be a \.safetensors MLP file or one of resnet18, .*, gpt2, got 'resnet9'/);
    assert.equal(r.stderr.trim().split('\n').length, 1);
  });
});
