// workers.test.js - the addon is context-aware: it loads and computes in worker_threads, two
// at once and alongside the main thread, and loads again after a worker exits; four workers
// train a model each at once and match the same training on the main thread; async kd.tidy
// scopes run concurrently in workers; a worker terminated mid-op (sync, or with async work in
// flight) takes nothing down; workers that exit leave neither tensors, bytes nor threads behind.
'use strict';

const path = require('node:path');
const { Worker, MessageChannel } = require('node:worker_threads');
const { kd, assert, values, collectGarbage } = require('./helpers');

const ROOT = path.join(__dirname, '..');

const WORKER_SRC = `
  const { parentPort, workerData } = require('node:worker_threads');
  const kd = require(workerData.root);
  const k = workerData.k;
  kd.manualSeed(42);
  const r = kd.randn([64]);
  let acc = 0;
  for (let i = 0; i < 50; i++) {
    const a = kd.full([32, 32], k, { dtype: 'float64' });
    const b = kd.eye(32, { dtype: 'float64' }).mul(i + 1);
    const c = a.matmul(b).sum();
    acc += c.item();
    a.dispose(); b.dispose(); c.dispose();
  }
  const live = kd.memory().liveTensors;
  parentPort.postMessage({ acc, randn: Array.from(r.dataSync()), live, err: (() => {
    try { kd.ones([2]).add(kd.ones([3])); } catch (e) { return e.code; }
    return null;
  })() });
`;

function runWorker(k) {
  return new Promise((resolve, reject) => {
    const w = new Worker(WORKER_SRC, { eval: true, workerData: { root: ROOT, k } });
    let msg = null;
    w.on('message', (m) => { msg = m; });
    w.on('error', reject);
    w.on('exit', (code) => (code === 0 && msg ? resolve(msg) : reject(new Error(`worker exited with ${code}, message ${JSON.stringify(msg)}`))));
  });
}

// sum over i=1..50 of (k * 32 * 32 * (i + 1))... each c = sum(a @ (I*(i+1))) = k*(i+1)*1024
const expectedAcc = (k) => { let s = 0; for (let i = 0; i < 50; i++) s += k * (i + 1) * 1024; return s; };

// Trains a tiny MLP with Adam for `steps` steps from seed `seed`; returns the losses and the
// final weights. Self-contained: workers run it from its source.
function trainTiny(kd, seed, steps) {
  kd.manualSeed(seed);
  const model = new kd.nn.Sequential(new kd.nn.Linear(6, 16), new kd.nn.Tanh(), new kd.nn.Linear(16, 2));
  const opt = new kd.optim.Adam(model.parameters(), { lr: 0.01 });
  const X = kd.randn([32, 6]);
  const y = kd.randint(0, 2, [32]);
  const losses = [];
  for (let i = 0; i < steps; i++) {
    losses.push(kd.tidy(() => {
      opt.zeroGrad();
      const l = kd.nn.functional.crossEntropy(model.forward(X), y);
      l.backward();
      opt.step();
      return l.item();
    }));
  }
  const weights = model.parameters().map((p) => Array.from(p.dataSync()));
  kd.dispose([X, y, model.parameters(), opt]);
  return { losses, weights };
}

const TRAIN_SRC = `
  const { parentPort, workerData } = require('node:worker_threads');
  const kd = require(workerData.root);
  const trainTiny = ${trainTiny.toString()};
  parentPort.postMessage({ ...trainTiny(kd, workerData.seed, workerData.steps), live: kd.memory().liveTensors });
`;

function runSrc(src, workerData) {
  return new Promise((resolve, reject) => {
    const w = new Worker(src, { eval: true, workerData: { root: ROOT, ...workerData } });
    let msg = null;
    w.on('message', (m) => { msg = m; });
    w.on('error', reject);
    w.on('exit', (code) => (code === 0 && msg ? resolve(msg) : reject(new Error(`worker exited with ${code}, message ${JSON.stringify(msg)}`))));
  });
}

/** The threads of this process (Linux), or null elsewhere. */
const threadCount = () => { try { return require('node:fs').readdirSync('/proc/self/task').length; } catch { return null; } };

describe('worker_threads', function () {
  it('loads and computes in one worker', async function () {
    const m = await runWorker(2);
    assert.equal(m.acc, expectedAcc(2));
    assert.equal(m.err, 'KD_SHAPE_MISMATCH', 'errors are coded inside workers too');
  });

  it('two workers at once, with the main thread computing meanwhile', async function () {
    const p = Promise.all([runWorker(1), runWorker(3)]);
    let mainAcc = 0;
    for (let i = 0; i < 20; i++) mainAcc += kd.ones([64, 64]).matmul(kd.ones([64, 64])).sum().item();
    const [m1, m3] = await p;
    assert.equal(mainAcc, 20 * 64 * 64 * 64);
    assert.equal(m1.acc, expectedAcc(1));
    assert.equal(m3.acc, expectedAcc(3));
    assert.deepEqual(m1.randn, m3.randn, 'same seed, same numbers in each worker');
    kd.manualSeed(42);
    const mainRandn = Array.from(kd.randn([64]).dataSync());
    assert.deepEqual(m1.randn, mainRandn, 'same numbers as the main thread');
  });

  it('loads again after workers exit, and the main thread is unaffected', async function () {
    const before = values(kd.arange(4));
    for (let i = 0; i < 3; i++) {
      const m = await runWorker(i + 1);
      assert.equal(m.acc, expectedAcc(i + 1));
    }
    assert.deepEqual(values(kd.arange(4)), before);
  });

  it('a worker terminated mid-computation does not take the process down', async function () {
    const w = new Worker(`
      const kd = require(${JSON.stringify(ROOT)});
      require('node:worker_threads').parentPort.postMessage('ready');
      for (;;) kd.randn([256, 256]).matmul(kd.randn([256, 256])).dispose();
    `, { eval: true });
    await new Promise((resolve, reject) => { w.once('message', resolve); w.once('error', reject); });
    await new Promise((r) => setTimeout(r, 50));
    await w.terminate();
    assert.deepEqual(values(kd.ones([2]).add(1)), [2, 2]);
  });

  it('four workers train a model each at once, each exactly as the same training on the main thread', async function () {
    this.timeout(60000);
    const steps = 150;
    const results = await Promise.all([1, 2, 3, 4].map((seed) => runSrc(TRAIN_SRC, { seed, steps })));
    for (const [k, r] of results.entries()) {
      const ref = trainTiny(kd, k + 1, steps);
      assert.deepEqual(r.losses, ref.losses, `worker ${k + 1}: losses`);
      assert.deepEqual(r.weights, ref.weights, `worker ${k + 1}: weights`);
      assert.ok(r.losses[steps - 1] < r.losses[0] * 0.5, `worker ${k + 1} learned: ${r.losses[0]} -> ${r.losses[steps - 1]}`);
    }
    assert.notDeepEqual(results[0].losses, results[1].losses, 'different seeds, different runs');
  });

  it('concurrent async kd.tidy scopes in two workers and the main thread keep their own tensors', async function () {
    const src = `
      const { parentPort, workerData } = require('node:worker_threads');
      const kd = require(workerData.root);
      const scope = (k) => kd.tidy(async () => {
        const a = kd.full([1000], k, { dtype: 'float32' });
        await new Promise((r) => setTimeout(r, 1 + (k % 3)));
        const b = a.mul(2);
        const v = (await b.dataAsync())[0];
        await new Promise((r) => setImmediate(r));
        return v + a.sum().item();
      });
      Promise.all(Array.from({ length: 20 }, (_, k) => scope(k))).then((vs) => {
        parentPort.postMessage({ vs });
      });
    `;
    const main = Promise.all(Array.from({ length: 20 }, (_, k) => kd.tidy(async () => {
      const a = kd.full([10], k);
      await new Promise((r) => setTimeout(r, 2));
      return a.sum().item();
    })));
    const [w1, w2, m] = await Promise.all([runSrc(src, {}), runSrc(src, {}), main]);
    const expected = Array.from({ length: 20 }, (_, k) => 2 * k + 1000 * k);
    assert.deepEqual(w1.vs, expected);
    assert.deepEqual(w2.vs, expected);
    assert.deepEqual(m, Array.from({ length: 20 }, (_, k) => 10 * k));
  });

  it('a worker terminated with async work in flight (dataAsync(), a DataLoader) takes nothing down', async function () {
    const w = new Worker(`
      const kd = require(${JSON.stringify(ROOT)});
      const big = kd.randn([512, 512]);
      require('node:worker_threads').parentPort.postMessage('ready');
      (async () => { for (;;) { await big.matmul(big).dataAsync(); } })();
      (async () => {
        const ds = new kd.data.TensorDataset(kd.randn([4096, 16]), kd.randn([4096]));
        for (;;) for await (const [x] of new kd.data.DataLoader(ds, { batchSize: 64, shuffle: true })) x.sum();
      })();
    `, { eval: true });
    await new Promise((resolve, reject) => { w.once('message', resolve); w.once('error', reject); });
    await new Promise((r) => setTimeout(r, 100));
    await w.terminate();
    assert.deepEqual(values(kd.ones([2]).mul(3)), [3, 3]);
  });

  it('a Tensor cannot be posted or structured-cloned: a DataCloneError saying what to post instead', async function () {
    const t = kd.tensor([1, 2, 3], { dtype: 'float32' });
    const refused = (e) => e instanceof Error && e.name === 'DataCloneError' && /kindling Tensor cannot be posted.*await t\.dataAsync\(\)/.test(e.message);
    assert.throws(() => structuredClone(t), refused);
    assert.throws(() => structuredClone({ weights: [t] }), refused, 'nested in what is posted');
    assert.throws(() => structuredClone(kd.nn.Parameter(t)), refused, 'a Parameter is a Tensor');
    const { port1, port2 } = new MessageChannel();
    try {
      assert.throws(() => port1.postMessage({ t }), refused);
      // what to post instead arrives whole, and rebuilds the tensor
      const got = new Promise((resolve) => port2.once('message', resolve));
      port1.postMessage({ data: await t.dataAsync(), shape: t.shape });
      const m = await got;
      assert.deepEqual(kd.tensor(m.data).reshape(m.shape).arraySync(), [1, 2, 3]);
    } finally {
      port1.close();
    }
    const w = new Worker('require("node:worker_threads").parentPort.on("message", () => {})', { eval: true });
    try {
      assert.throws(() => w.postMessage(t), refused);
    } finally {
      await w.terminate();
    }
  });

  it('workers that exit leave no tensors, bytes or threads behind (the addon unloads with its env)', async function () {
    this.timeout(60000);
    const leaky = `
      const { parentPort } = require('node:worker_threads');
      const kd = require(${JSON.stringify(ROOT)});
      globalThis.keep = [kd.randn([256, 256]), kd.ones([1000]).add(1)]; // left alive at exit
      kd.randn([64, 64]).matmul(kd.randn([64, 64])).sum().item();
      parentPort.postMessage({ live: kd.memory().liveTensors });
    `;
    await runSrc(leaky, {}); // the first worker may start the shared thread pool
    const live0 = kd.memory().liveTensors;
    const bytes0 = kd.memory().hostBytesInUse;
    const threads0 = threadCount();
    for (let i = 0; i < 6; i++) await runSrc(leaky, {});
    await new Promise((r) => setTimeout(r, 50)); // exited threads leave /proc/self/task
    // (<=: the counters are the process's, and garbage of earlier tests may be finalized meanwhile)
    assert.ok(kd.memory().liveTensors <= live0, 'tensors a worker left alive are freed when its env goes');
    assert.ok(kd.memory().hostBytesInUse <= bytes0, 'and their bytes');
    if (threads0 !== null) assert.ok(threadCount() <= threads0, `threads: ${threads0} before, ${threadCount()} after six workers`);
  });

  it('kd.memory() counts the tensors and small storages of every thread, exactly (Note [Counters per thread])', async function () {
    this.timeout(60000);
    // a loaded worker makes 5 small tensors (16 bytes each, held in their storage structs) and 1
    // large one and keeps them until told to exit; the main thread sees exactly them, then sees
    // them go with the worker
    const src = `
      const { parentPort } = require('node:worker_threads');
      const kd = require(${JSON.stringify(ROOT)});
      parentPort.postMessage('loaded');
      parentPort.once('message', () => {
        globalThis.keep = [0, 1, 2, 3, 4].map((i) => kd.full([4], i + 0.5)).concat([kd.zeros([1024])]);
        parentPort.postMessage('made');
        parentPort.once('message', () => process.exit(0));
      });
    `;
    const w = new Worker(src, { eval: true });
    const exited = new Promise((resolve) => w.on('exit', resolve));
    const next = () => new Promise((resolve, reject) => { w.once('message', resolve); w.once('error', reject); });
    assert.equal(await next(), 'loaded');
    collectGarbage();
    const m0 = collectGarbage();
    w.postMessage('make');
    assert.equal(await next(), 'made');
    const m1 = kd.memory();
    assert.equal(m1.liveTensors - m0.liveTensors, 6, 'the worker\'s six live tensors');
    assert.equal(m1.hostBytesInUse - m0.hostBytesInUse, 5 * 16 + 4096, 'and their bytes, small and allocated');
    w.postMessage('exit');
    assert.equal(await exited, 0);
    const m2 = kd.memory();
    assert.ok(m2.liveTensors <= m0.liveTensors, 'gone with the worker, whose thread has exited');
    assert.ok(m2.hostBytesInUse <= m0.hostBytesInUse);
  });
});
