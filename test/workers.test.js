// workers.test.js - the addon is context-aware: it loads and computes in worker_threads, two
// at once and alongside the main thread, and loads again after a worker exits.
'use strict';

const path = require('node:path');
const { Worker } = require('node:worker_threads');
const { kd, assert, values } = require('./helpers');

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
});
