// inference_server.test.js - the inference-server example (examples/inference-server) as a
// service under faults, on the loopback interface, bounded in count and time: a body is judged as
// JSON.parse will read it (a batch under a key spelled with escapes, numbers float32 cannot hold,
// a charset other than UTF-8 are refused); every hostile request of faults.js gets its 4xx answer
// while good requests keep their exact answers; a full queue answers 503 with Retry-After and
// /ready says so; deadlines answer 503 TIMEOUT and free the queue; a client that leaves costs no
// forward pass; graceful shutdown (in process, and server.js on SIGTERM) answers every accepted
// request and exits 0; a dead engine makes /ready 503. Engines with a fixed delay stand in for
// the model where the timing of a batch matters.
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const http = require('node:http');
const { spawn } = require('node:child_process');
const kd = require('..');

const SERVER_DIR = path.join(__dirname, '..', 'examples', 'inference-server');
const { makeModel } = require(path.join(SERVER_DIR, 'make-model.js'));
const { startServer } = require(path.join(SERVER_DIR, 'server.js'));
const { request, loadTest } = require(path.join(SERVER_DIR, 'load-test.js'));
const { FAULTS, rawRequest } = require(path.join(SERVER_DIR, 'faults.js'));

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** Waits (polling, at most 10 s) until cond() holds: no fixed sleeps, so a loaded machine cannot reorder the steps. */
async function until(cond, what) {
  for (const t0 = Date.now(); !(await cond());) {
    if (Date.now() - t0 > 10000) throw new Error(`timed out waiting until ${what}`);
    await sleep(5);
  }
}
const accepted = (s) => s.batcher.queue.length + s.batcher.inFlight;

/** An engine whose every batch takes delayMs; answers row i with [sum of its inputs, batch size]. */
function slowEngine(delayMs) {
  const e = {
    kind: 'test', config: { inFeatures: 4, classes: 2 }, batches: [],
    ready: async () => e,
    run: async (x, n) => {
      e.batches.push(n);
      await sleep(delayMs);
      const out = new Float32Array(n * 2);
      for (let i = 0; i < n; i++) { out[2 * i] = x[4 * i] + x[4 * i + 1] + x[4 * i + 2] + x[4 * i + 3]; out[2 * i + 1] = n; }
      return out;
    },
    close: async () => {},
  };
  return e;
}

const postJson = (agent, url, obj) => request(agent, `${url}/predict`, 'POST', JSON.stringify(obj));

describe('inference server: scanning a body as it streams in', function () {
  const { BodyScanner, MAX_DEPTH } = require(path.join(SERVER_DIR, 'request.js'));
  /** feeds body to a BodyScanner in pieces of `step` bytes; the count, or the error thrown */
  const count = (body, maxRows, step) => {
    const c = new BodyScanner(maxRows);
    const buf = Buffer.from(body);
    try {
      for (let i = 0; i < buf.length; i += step) c.feed(buf.subarray(i, i + step));
    } catch (e) { return e; }
    return c.rows;
  };
  const img = [[0, 1], [2, 3]];
  const bodies = [
    JSON.stringify({ inputs: [[1, 2], [3, 4], [5, 6]] }),
    JSON.stringify({ inputs: [img, img] }), // a row may be nested (28x28): one row each
    JSON.stringify({ input: [[1, 2], [3, 4], [5, 6], [7, 8]] }), // "input" is one row, whatever its nesting
    JSON.stringify({ note: 'a ] [ "quoted" \\ ]]', tags: [[1], [2], [3], [4], [5]], inputs: [[1], [2]], after: [[9], [9], [9]] }),
    JSON.stringify({ '[inputs': [[1], [2], [3], [4], [5]], inputs: [[1]] }),
    JSON.stringify({ inputs: [[1], [2], [3], [4], [5]], x: 1, inputs2: [[1], [2], [3]] }),
    '{"inputs": [[1], [2], [3], [4], [5]], "inputs": [[1]]}', // a repeated key: JSON.parse keeps the last
    ' { "inputs" : [ [ 1 ] , [ 2 ] ,\n [ 3 ] ] } ',
    JSON.stringify({ inputs: [{ a: [1] }, [1]] }),
    JSON.stringify({ inputs: [] }),
    // keys spelled with escapes are the keys JSON.parse decodes them to (split across chunks too)
    '{"\\u0069nputs": [[1], [2], [3]]}',
    '{"\\u0069\\u006E\\u0070\\u0075\\u0074\\u0073": [[1], [2]]}',
    '{"inputs": [[1]], "in\\u0070uts": [[1], [2], [3], [4]]}', // a repeated key: the last one counts
    '{"\\u0069nputs": [[1], [2], [3], [4]], "inputs": [[1]]}',
    '{"inputs\\u0000": [[1], [2]], "in\\"puts": [[1], [2]], "\\/inputs": [[1]], "inputs\\\\": [[1]]}',
    `{"${'\\u0069'.repeat(40)}": [[1], [2]], "\\u0069nputs": [[1], [2], [3]]}`,
    // a top-level array has no keys: strings in it are values, whatever they spell
    '[1, "inputs", [[1], [2], [3]], "\\u0069nputs", [[1], [2]]]',
  ];
  it('counts exactly what JSON.parse sees as rows of "inputs", in chunks of any size', function () {
    for (const body of bodies) {
      const parsed = JSON.parse(body);
      const want = Array.isArray(parsed.inputs) ? parsed.inputs.filter(Array.isArray).length : 0;
      for (const step of [1, 2, 3, 7, 64, body.length]) assert.equal(count(body, 100, step), want, `${body} in pieces of ${step}`);
    }
  });
  it('refuses with 413 BATCH_TOO_LARGE at the first row past maxRows, before the body ends', function () {
    const body = JSON.stringify({ inputs: Array.from({ length: 9 }, () => [1, 2, 3]) });
    const e = count(body, 8, 5);
    assert.equal(e.status, 413);
    assert.equal(e.code, 'BATCH_TOO_LARGE');
    assert.match(e.message, /at most 8 inputs, got 9 or more/);
    assert.equal(e.headers.connection, 'close');
    assert.equal(count(body, 9, 5), 9);
    // the refusal comes with the 9th row: feeding only up to it is enough
    const c = new BodyScanner(8);
    assert.throws(() => c.feed(Buffer.from(body.slice(0, body.lastIndexOf('[') + 1))), /got 9 or more/);
  });
  it('refuses a batch under a key spelled with escapes, or under a repeated key, with 413', function () {
    const rows = `[${'[],'.repeat(99)}[]]`;
    for (const body of [`{"\\u0069nputs": ${rows}}`, `{"inputs": [[1]], "inp\\u0075ts": ${rows}}`, `{"inputs": ${rows}, "inputs": [[1]]}`]) {
      for (const step of [1, 5, body.length]) assert.equal(count(body, 8, step).code, 'BATCH_TOO_LARGE', `${body.slice(0, 30)} in pieces of ${step}`);
    }
  });
  it('refuses a body opening more than maxArrays arrays and objects, anywhere in it, with 400 TOO_MANY_ARRAYS', function () {
    const opened = (body, maxArrays) => {
      const c = new BodyScanner(100, { maxArrays });
      try { c.feed(Buffer.from(body)); } catch (e) { return e.code; }
      return c.arrays;
    };
    assert.equal(opened(`{"x": [${'[],'.repeat(7)}{}]}`, 10), 10);
    for (const body of [`{"x": [${'[],'.repeat(8)}{}]}`, `{"inputs": [[${'[],'.repeat(8)}[]]]}`, `{"inputs": [[1]], "x": {"a": [${'{},'.repeat(7)}{}]}}`]) {
      assert.equal(opened(body, 10), 'TOO_MANY_ARRAYS', body);
    }
    assert.equal(opened('{"x": "[[[[[[[[[[[[", "inputs": [[1]]}', 3), 3);
  });
  it('refuses nesting deeper than MAX_DEPTH with 400 TOO_DEEP, and accepts a 28x28 row', function () {
    const deep = `{"inputs": ${'['.repeat(5000)}${']'.repeat(5000)}}`;
    const e = count(deep, 100, 64);
    assert.equal(e.status, 400);
    assert.equal(e.code, 'TOO_DEEP');
    assert.match(e.message, new RegExp(`deeper than ${MAX_DEPTH} levels`));
    const img = Array.from({ length: 28 }, () => new Array(28).fill(0.5));
    assert.equal(count(JSON.stringify({ inputs: [img, img] }), 100, 64), 2);
    assert.equal(count(`{"inputs": [${'['.repeat(MAX_DEPTH - 2)}${']'.repeat(MAX_DEPTH - 2)}]}`, 100, 7), 1);
    assert.equal(count(`{"inputs": [${'['.repeat(MAX_DEPTH - 1)}${']'.repeat(MAX_DEPTH - 1)}]}`, 100, 7).code, 'TOO_DEEP');
  });
});

describe('inference server: what a request may hold', function () {
  const { parseInputs } = require(path.join(SERVER_DIR, 'request.js'));
  let s;
  before(async () => { s = await startServer({ engine: slowEngine(0), port: 0, maxBatch: 2, maxWaitMs: 1 }); });
  after(() => s.close());
  /** POSTs body (text) to /predict with the given Content-Type (undefined: none); {status, body} */
  const post = (body, type = 'application/json') => rawRequest({ port: s.port }, 'POST /predict HTTP/1.1\r\nHost: x\r\nConnection: close\r\n' +
    `${type === undefined ? '' : `Content-Type: ${type}\r\n`}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n`, [body]);
  const errorOf = (r) => JSON.parse(r.body).error;
  const thrown = (f) => { try { f(); } catch (e) { return e; } assert.fail('did not throw'); };

  it('checks the row count, and each row\'s count of values, before allocating for them', function () {
    // (a Float32Array of 3 * 2**52 floats cannot be made: the count must be refused first)
    const e = thrown(() => parseInputs('{"inputs": [[], [], []]}', 2 ** 52, 2));
    assert.equal(e.status, 413);
    assert.equal(e.code, 'BATCH_TOO_LARGE');
    assert.match(e.message, /at most 2 inputs, got 3/);
    assert.equal(thrown(() => parseInputs('{"inputs": [[[1, 2], [3]], [1, 2, 3, 4]]}', 3, 2)).code, 'INVALID_SHAPE');
    const { x, n } = parseInputs('{"inputs": [[[1, 2], [3]], [[4], 5, [6]]]}', 3, 2);
    assert.equal(n, 2);
    assert.deepEqual(Array.from(x), [1, 2, 3, 4, 5, 6]);
  });

  it('refuses a batch under a key spelled with escapes with 413, as the server streams it in', async function () {
    for (const key of ['\\u0069nputs', 'inpu\\u0074s', '\\u0069\\u006e\\u0070\\u0075\\u0074\\u0073']) {
      const r = await post(`{"inputs": [[1, 2, 3, 4]], "${key}": [${'[],'.repeat(1199)}[]]}`); // (under the body limit, 4352 bytes)
      assert.equal(r.status, 413, r.body);
      assert.equal(errorOf(r).code, 'BATCH_TOO_LARGE');
    }
  });

  it('refuses a body that would make more arrays than a batch needs, before parsing it', async function () {
    const row = '[[1], [2], [3], [4]]'; // (a row may nest one array per value: maxBatch * (1 + inFeatures) + 16 in all)
    assert.equal((await post(`{"inputs": [${row}, ${row}], "x": [${'[],'.repeat(4)}[]]}`)).status, 200);
    for (const body of [`{"inputs": [[${'[],'.repeat(1199)}[]]]}`, `{"input": [1, 2, 3, 4], "x": [${'[],'.repeat(1199)}[]]}`]) {
      const r = await post(body);
      assert.equal(r.status, 400, r.body);
      assert.equal(errorOf(r).code, 'TOO_MANY_ARRAYS');
    }
  });

  it('refuses numbers float32 cannot hold with 400, and accepts what rounds to a float32', async function () {
    for (const v of ['1e39', '-1e39', '3.5e38', '-3.4028236e38', '1e400', '-1e400', '123456789e999999999']) {
      const r = await post(`{"input": [0, ${v}, 0, 0]}`);
      assert.equal(r.status, 400, `${v}: ${r.body}`);
      assert.equal(errorOf(r).code, 'INVALID_INPUT');
      assert.match(errorOf(r).message, /inputs\[0\]\[1\] .*(float32|not a finite number)/, v);
    }
    for (const v of ['NaN', 'Infinity', '-Infinity', 'nan', 'inf', '0x10', '+1', '.5', '1.', '01']) {
      const r = await post(`{"input": [0, ${v}, 0, 0]}`);
      assert.equal(r.status, 400, `${v}: ${r.body}`);
      assert.equal(errorOf(r).code, 'INVALID_JSON', v);
    }
    for (const v of ['"1"', '"NaN"', 'null', 'true', '[1]', '{}']) {
      const r = await post(`{"input": [0, ${v}, 0, 0]}`);
      assert.equal(r.status, 400, `${v}: ${r.body}`);
      assert.equal(errorOf(r).code, 'INVALID_INPUT', v);
    }
    // subnormals, values that round to 0 or to the largest float32, -0: answered (the test engine sums a row)
    for (const [v, sum] of [['1e-40', Math.fround(1e-40)], ['-1e-45', Math.fround(-1e-45)], ['1e-400', 0], ['-0', 0],
      ['3.4028235e38', Math.fround(3.4028235e38)], ['-3.4e38', Math.fround(-3.4e38)]]) {
      const r = await post(`{"input": [0, ${v}, 0, 0]}`);
      assert.equal(r.status, 200, `${v}: ${r.body}`);
      assert.equal(JSON.parse(r.body).predictions[0].probs[0], sum, v);
    }
  });

  it('answers 400, never null probabilities, when the model\'s output for valid inputs is not finite', async function () {
    const r = await post('{"input": [3e38, 3e38, 0, 0]}'); // each a float32; their sum is not
    assert.equal(r.status, 400, r.body);
    assert.equal(errorOf(r).code, 'INVALID_INPUT');
    assert.match(errorOf(r).message, /output for inputs\[0\] is not finite/);
  });

  it('reads the body as UTF-8 only: 415 for a Content-Type with another charset', async function () {
    const body = '{"input": [1, 2, 3, 4]}';
    for (const type of [undefined, 'application/json', 'Application/JSON', 'application/json; charset=utf-8', 'application/json;charset=UTF-8',
      'application/json; charset="utf-8"', 'application/json ; Charset="UTF-8"', 'application/json; q=1; charset=utf-8']) {
      const r = await post(body, type);
      assert.equal(r.status, 200, `${type}: ${r.body}`);
    }
    for (const type of ['application/json; charset=utf-16', 'application/json; charset="UTF-16LE"', 'application/json; charset=iso-8859-1',
      'application/json; charset=utf8', 'application/json; charset=utf-8; charset=utf-16', 'application/json; charset=',
      'application/json; charset', 'application/json; charset="utf-8', 'text/plain', 'application/jsonx', 'application/json/x']) {
      const r = await post(body, type);
      assert.equal(r.status, 415, `${type}: ${r.body}`);
      assert.equal(errorOf(r).code, 'UNSUPPORTED_MEDIA_TYPE', type);
      assert.match(errorOf(r).message, /application\/json/, type);
    }
    assert.match(errorOf(await post(body, 'application/json; charset=utf-16')).message, /charset.*utf-8.*got 'utf-16'/);
  });
});

describe('inference server under faults', function () {
  this.timeout(60000);
  let tmp;
  let modelPath;
  before(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-server-'));
    modelPath = path.join(tmp, 'tiny.safetensors');
    makeModel({ out: modelPath, hidden: [8], inFeatures: 784, seed: 3 });
  });
  after(() => { fs.rmSync(tmp, { recursive: true, force: true }); });

  it('answers every fault with its 4xx while good requests keep their answers (worker engine)', async function () {
    const maxBatch = 8;
    const s = await startServer({ modelPath, port: 0, worker: true, maxBatch, maxWaitMs: 2, bodyTimeoutMs: 400, requestTimeoutMs: 10000 });
    const model = { inFeatures: 784, maxBatch, maxBody: maxBatch * 784 * 32 + 4096 };
    const target = { port: s.port };
    const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
    const img = Array.from({ length: 784 }, (_, i) => ((i * 5) % 13) / 13);
    const live0 = kd.memory().liveTensors;
    try {
      const ref = JSON.parse((await postJson(agent, s.url, { input: img })).body).predictions[0].probs;
      // good clients, back to back, for as long as the faults run
      let stop = false;
      const good = { ok: 0, bad: [] };
      const client = async () => {
        while (!stop) {
          const r = await postJson(agent, s.url, { inputs: [img, img] });
          if (r.status !== 200) { good.bad.push(`${r.status} ${r.body}`); continue; }
          for (const p of JSON.parse(r.body).predictions) {
            p.probs.forEach((v, i) => { if (Math.abs(v - ref[i]) > 1e-5) good.bad.push(`probs[${i}] ${v} != ${ref[i]}`); });
          }
          good.ok++;
        }
      };
      const clients = Array.from({ length: 3 }, client);
      const seen = {};
      // every fault 3 times, all of them at once
      await Promise.all(Object.entries(FAULTS).flatMap(([name, f]) => Array.from({ length: 3 }, async () => {
        const r = await f.send(target, model);
        (seen[name] = seen[name] || []).push(r.status);
      })));
      stop = true;
      await Promise.all(clients);
      for (const [name, f] of Object.entries(FAULTS)) {
        for (const st of seen[name]) assert.ok(f.expect.includes(st), `${name}: answered ${st}, expected ${f.expect.join(' or ')}`);
      }
      assert.deepEqual(good.bad, []);
      assert.ok(good.ok > 0);
      // still serving, nothing queued, nothing leaked in the main thread
      const h = JSON.parse((await request(agent, `${s.url}/health`, 'GET')).body);
      assert.equal(h.state, 'ready');
      assert.equal(h.queue.rows, 0);
      assert.equal((await request(agent, `${s.url}/ready`, 'GET')).status, 200);
      assert.equal((await postJson(agent, s.url, { input: img })).status, 200);
      assert.ok(kd.memory().liveTensors <= live0);
    } finally {
      agent.destroy();
      await s.close();
    }
  });

  it('load-test.js --faults: hostile clients alongside the load, each answer checked', async function () {
    const s = await startServer({ modelPath, port: 0, maxBatch: 8, bodyTimeoutMs: 300 });
    try {
      // 2 s: the fault clients run in a worker thread whose start (loading kindling) took most of a
      // shorter run under ASan on a loaded machine
      const r = await loadTest({ url: s.url, duration: 2, warmup: 0.05, concurrency: 2, healthEveryMs: 20, faults: 2, maxBatch: 8 });
      assert.equal(r.errors, 0);
      assert.ok(r.faults.sent > 10, `${r.faults.sent} faults sent`);
      assert.deepEqual(r.faults.unexpected, []);
      assert.ok(r.faults.byStatus[400] > 0 && r.faults.byStatus[413] > 0);
    } finally { await s.close(); }
  });

  it('a refused body answers with its error and the JSON error object, then closes the connection', async function () {
    const s = await startServer({ modelPath, port: 0, maxBatch: 2 });
    try {
      const r = await rawRequest({ port: s.port }, 'POST /predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 99999999\r\n\r\n', ['{"in'], { stall: true });
      assert.equal(r.status, 413);
      assert.deepEqual(Object.keys(JSON.parse(r.body).error), ['code', 'message']);
      assert.equal(JSON.parse(r.body).error.code, 'BODY_TOO_LARGE');
      assert.match(r.headers, /connection: close/i);
    } finally { await s.close(); }
  });

  it('a full queue answers 503 QUEUE_FULL with Retry-After, and /ready is 503 while it is full', async function () {
    const engine = slowEngine(150);
    const s = await startServer({ engine, port: 0, maxBatch: 2, maxWaitMs: 1, maxQueueRows: 4 });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 20 });
    try {
      const pending = Array.from({ length: 12 }, (_, i) => postJson(agent, s.url, { input: [i, 0, 0, 0] }));
      await until(() => s.batcher.full(), 'the queue is full');
      const ready = await request(agent, `${s.url}/ready`, 'GET');
      assert.equal(ready.status, 503);
      assert.match(JSON.parse(ready.body).reason, /queue is full/);
      const rs = await Promise.all(pending);
      const full = rs.filter((r) => r.status === 503);
      const ok = rs.filter((r) => r.status === 200);
      assert.ok(full.length >= 1 && ok.length >= 4, rs.map((r) => r.status).join(' '));
      assert.equal(full.length + ok.length, 12);
      for (const r of full) {
        assert.equal(JSON.parse(r.body).error.code, 'QUEUE_FULL');
        assert.equal(r.headers['retry-after'], '1');
      }
      const raw = await rawRequest({ port: s.port }, 'GET /ready HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      assert.equal(raw.status, 200);
      assert.ok(s.batcher.stats.rejectedFull >= 1);
      // a refused request is answered at once (it never waits for a batch)
      for (const r of ok) { const b = JSON.parse(r.body); assert.ok(b.batch <= 2); }
    } finally { agent.destroy(); await s.close(); }
  });

  it('answers 503 TIMEOUT after requestTimeoutMs, with the queued rows dropped', async function () {
    const engine = slowEngine(400);
    const s = await startServer({ engine, port: 0, maxBatch: 1, maxWaitMs: 1, requestTimeoutMs: 150 });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
    try {
      const rs = await Promise.all([0, 1, 2].map((i) => postJson(agent, s.url, { input: [i, 0, 0, 0] })));
      for (const r of rs) {
        assert.equal(r.status, 503, r.body);
        assert.equal(JSON.parse(r.body).error.code, 'TIMEOUT');
      }
      await until(() => !s.batcher.busy, 'the batch in flight ends'); // the timed-out queued ones never run
      assert.equal(s.batcher.queuedRows, 0);
      assert.deepEqual(engine.batches, [1]);
      assert.equal(s.batcher.stats.timedOut, 3);
    } finally { agent.destroy(); await s.close(); }
  });

  it('drops a queued request whose client disconnected, before its forward pass', async function () {
    const engine = slowEngine(200);
    const s = await startServer({ engine, port: 0, maxBatch: 1, maxWaitMs: 1 });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
    try {
      const first = postJson(agent, s.url, { input: [1, 1, 1, 1] });
      await until(() => s.batcher.inFlight === 1, 'the first request runs');
      const body = JSON.stringify({ input: [2, 2, 2, 2] });
      const gone = rawRequest({ port: s.port }, `POST /predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`, [body], { abortAfterMs: 50 });
      await until(() => s.batcher.queue.length === 1, 'the second request is queued');
      const third = postJson(agent, s.url, { input: [3, 3, 3, 3] });
      assert.equal((await gone).status, null);
      const [a, c] = await Promise.all([first, third]);
      assert.equal(JSON.parse(a.body).predictions[0].probs[0], 4);
      assert.equal(JSON.parse(c.body).predictions[0].probs[0], 12);
      assert.deepEqual(engine.batches, [1, 1], 'two forward passes: the departed client\'s request never ran');
      assert.equal(s.batcher.stats.cancelled, 1);
    } finally { agent.destroy(); await s.close(); }
  });

  it('graceful close answers queued and in-flight requests and refuses new ones', async function () {
    const engine = slowEngine(100);
    const s = await startServer({ engine, port: 0, maxBatch: 1, maxWaitMs: 1 });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
    try {
      const sent = [0, 1, 2].map((i) => postJson(agent, s.url, { input: [i, 0, 0, 0] }));
      await until(() => accepted(s) === 3, 'the three requests are accepted');
      const closing = s.close({ graceful: true, timeoutMs: 5000 });
      assert.equal(s.state(), 'draining');
      const late = await rawRequest({ port: s.port }, 'GET /ready HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      assert.notEqual(late.status, 200, 'not ready while draining (refused, or no new connection)');
      const rs = await Promise.all(sent);
      assert.deepEqual(rs.map((r) => r.status), [200, 200, 200]);
      assert.deepEqual(rs.map((r) => JSON.parse(r.body).predictions[0].probs[0]), [0, 1, 2]);
      assert.deepEqual(await closing, { drained: true });
      assert.equal(s.server.listening, false);
    } finally { agent.destroy(); await s.close(); }
  });

  it('close after its timeout answers what is still queued 503 SHUTTING_DOWN', async function () {
    const engine = slowEngine(300);
    const s = await startServer({ engine, port: 0, maxBatch: 1, maxWaitMs: 1 });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
    try {
      const sent = [0, 1, 2].map((i) => postJson(agent, s.url, { input: [i, 0, 0, 0] }));
      await until(() => accepted(s) === 3, 'the three requests are accepted');
      const { drained } = await s.close({ graceful: true, timeoutMs: 100 });
      assert.equal(drained, false);
      const rs = await Promise.all(sent);
      assert.equal(rs[0].status, 200, 'the batch in flight finishes');
      for (const r of rs.slice(1)) { assert.equal(r.status, 503); assert.equal(JSON.parse(r.body).error.code, 'SHUTTING_DOWN'); }
    } finally { agent.destroy(); }
  });

  it('/ready is 503 and /predict 500 once the worker engine has died; /health still answers', async function () {
    const s = await startServer({ modelPath, port: 0, worker: true, maxBatch: 4 });
    const agent = new http.Agent({ keepAlive: true });
    try {
      assert.equal((await request(agent, `${s.url}/ready`, 'GET')).status, 200);
      await s.engine.worker.terminate();
      const ready = await request(agent, `${s.url}/ready`, 'GET');
      assert.equal(ready.status, 503);
      assert.match(JSON.parse(ready.body).reason, /engine failed/);
      const r = await postJson(agent, s.url, { input: Array(784).fill(0) });
      assert.equal(r.status, 500);
      assert.equal((await request(agent, `${s.url}/health`, 'GET')).status, 200);
    } finally { agent.destroy(); await s.close(); }
  });

  it('server.js on SIGTERM answers the requests it accepted, then exits 0', function (done) {
    // a long batching wait, so that the requests are still queued when the signal arrives
    const child = spawn(process.execPath, [path.join(SERVER_DIR, 'server.js'), '--port', '0', '--model', modelPath,
      '--max-wait-ms', '3000', '--max-batch', '8', '--engine', 'inline'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stderr.on('data', (d) => { err += d; });
    const agent = new http.Agent({ keepAlive: false });
    let answers = null;
    child.stdout.on('data', async (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (!m || answers) return;
      const img = Array.from({ length: 784 }, (_, i) => (i % 3) / 3);
      answers = Promise.all([0, 1, 2].map(() => postJson(agent, m[1], { input: img })));
      const probe = new http.Agent({ keepAlive: false });
      await until(async () => JSON.parse((await request(probe, `${m[1]}/health`, 'GET')).body).queue.requests === 3, 'the server holds the three requests');
      child.kill('SIGTERM');
    });
    child.on('exit', async (code, signal) => {
      try {
        assert.equal(signal, null, err);
        assert.equal(code, 0, err);
        const rs = await answers;
        assert.deepEqual(rs.map((r) => r.status), [200, 200, 200]);
        assert.deepEqual(rs.map((r) => JSON.parse(r.body).batch), [3, 3, 3]);
        assert.match(out, /SIGTERM: finishing 3 accepted request\(s\)/);
        assert.match(out, /all accepted requests answered; bye/);
        done();
      } catch (e) { done(e); }
    });
  });
});
