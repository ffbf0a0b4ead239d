// multiprocessing.test.js - kd.multiprocessing and shareMemory: a tensor shared with a worker
// thread is the same bytes there (writes go both ways, an optimizer step in the worker changes
// the main thread's module), with a version counter of its own on each side (an in-place update
// on one side does not invalidate a backward pending on the other); errors for bad arguments and
// for registrations that do not exist; a CUDA tensor shared the same way (emulated GPU).
'use strict';

const path = require('node:path');
const { Worker } = require('node:worker_threads');
const { kd, assert } = require('./helpers');

const ROOT = path.join(__dirname, '..');

/**
 * Runs `src` in a worker thread (workerData: data, kd and root in scope); resolves its message once
 * the worker has exited, so that what its environment frees at exit is freed before the next test
 * counts live tensors.
 */
function inWorker(src, data) {
  const code = `const { workerData, parentPort } = require('node:worker_threads');
    const kd = require(${JSON.stringify(ROOT)});
    const data = workerData;
    parentPort.postMessage((() => { ${src} })());`;
  return new Promise((resolve, reject) => {
    const w = new Worker(code, { eval: true, workerData: data });
    let msg;
    let got = false;
    w.once('message', (m) => { msg = m; got = true; });
    w.once('error', reject);
    w.once('exit', (c) => (got ? resolve(msg) : reject(new Error(`the worker exited with ${c} before answering`))));
  });
}

describe('kd.multiprocessing (tensors shared with worker threads)', function () {
  this.timeout(30000);

  it('shareMemory_ registers a tensor; isShared says so', function () {
    const t = kd.zeros(3);
    assert.equal(t.isShared(), false);
    assert.equal(t.shareMemory_(), t);
    assert.equal(t.isShared(), true);
    assert.equal(t.shareMemory_(), t); // idempotent
  });

  it('a worker reads and writes the same bytes', async function () {
    const t = kd.arange(6, { dtype: 'float32' }).view(2, 3);
    const r = kd.multiprocessing.reduceTensor(t.select(1, 1)); // a view: its geometry is kept
    const seen = await inWorker(`
      const u = kd.multiprocessing.rebuildTensor(data);
      const before = u.tolist();
      u.mul_(10);
      return { before, shape: u.shape, shared: u.isShared() };`, r);
    assert.deepEqual(seen, { before: [1, 4], shape: [2], shared: true });
    assert.deepEqual(t.tolist(), [[0, 10, 2], [3, 40, 5]]);
  });

  it('Module.shareMemory: an optimizer step in a worker changes the main thread\'s parameters', async function () {
    kd.manualSeed(0);
    const model = new kd.nn.Linear(3, 2);
    assert.equal(model.shareMemory(), model);
    for (const p of model.parameters()) assert.equal(p.isShared(), true);
    const expected = model.bias.detach().clone().sub(0.5 * 4); // d(sum)/d(bias) = batch size 4, lr 0.5
    const state = Object.fromEntries([...model.namedParameters()].map(([n, p]) => [n, kd.multiprocessing.reduceTensor(p)]));
    const out = await inWorker(`
      const m = new kd.nn.Linear(3, 2);
      for (const [n, p] of m.namedParameters()) p.data = kd.multiprocessing.rebuildTensor(data[n]);
      const opt = new kd.optim.SGD(m.parameters(), { lr: 0.5 });
      m(kd.ones(4, 3)).sum().backward();
      opt.step();
      return m.bias.tolist();`, state);
    assert.deepEqual(model.bias.tolist(), out);
    assert.deepEqual(out, expected.tolist());
  });

  it('rebuilt tensors keep their own version counter: a worker\'s in-place update does not invalidate a pending backward', async function () {
    const w = kd.ones(3, { requiresGrad: true });
    const y = w.mul(w).sum(); // saves w
    await inWorker('kd.noGrad(() => kd.multiprocessing.rebuildTensor(data).add_(1)); return 0;', kd.multiprocessing.reduceTensor(w));
    assert.deepEqual(w.tolist(), [2, 2, 2]);
    y.backward(); // PyTorch's processes each have their own counters: no error
    assert.deepEqual(w.grad.tolist(), [4, 4, 4]); // 2 * w, with w as it is now
  });

  it('rebuilds Parameters as Parameters, requiresGrad kept', async function () {
    const p = new kd.nn.Parameter(kd.ones(2));
    const seen = await inWorker(`
      const u = kd.multiprocessing.rebuildTensor(data);
      return [u instanceof kd.nn.Parameter, u.requiresGrad];`, kd.multiprocessing.reduceTensor(p));
    assert.deepEqual(seen, [true, true]);
  });

  it('a CUDA tensor is shared the same way (the emulated GPU in CI)', async function () {
    if (!kd.cuda.isAvailable()) this.skip();
    const t = kd.arange(4, { dtype: 'float32' }).to('cuda');
    const seen = await inWorker(`
      const u = kd.multiprocessing.rebuildTensor(data);
      u.mul_(2);
      return [u.device, u.tolist()];`, kd.multiprocessing.reduceTensor(t));
    assert.deepEqual(seen, ['cuda:0', [0, 2, 4, 6]]);
    assert.deepEqual(t.tolist(), [0, 2, 4, 6]);
  });

  it('errors: not a tensor, not a reduction, unknown registration', function () {
    assert.throws(() => kd.multiprocessing.reduceTensor([1, 2]), { code: 'KD_INVALID_TYPE' });
    assert.throws(() => kd.multiprocessing.rebuildTensor({ id: 1 }), { code: 'KD_INVALID_TYPE' });
    const r = kd.multiprocessing.reduceTensor(kd.ones(2));
    assert.throws(() => kd.multiprocessing.rebuildTensor({ ...r, id: 2 ** 52 }), { code: 'KD_INVALID_ARGUMENT', message: /no shared tensor with id/ });
    assert.throws(() => kd.multiprocessing.rebuildTensor({ ...r, id: -1 }), { code: 'KD_INVALID_TYPE' });
    const u = kd.multiprocessing.rebuildTensor(r);
    assert.throws(() => kd.multiprocessing.reduceTensor(u), { code: 'KD_INVALID_TYPE', message: /rebuilt/ });
  });
});
