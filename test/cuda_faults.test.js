// cuda_faults.test.js - what a device fault (a trap in a kernel: a sticky error, as an illegal
// address is) does to work in flight, each case in a child process because a faulted device
// stays faulted: Promises waiting on the device (dataAsync(), synchronizeAsync, an event's
// synchronize) reject with KD_CUDA_ERROR instead of never settling, the process then exits by
// itself, and later calls fail with the same coded error instead of hanging or crashing.
// Needs a CUDA device (the emulated GPU in npm test); skipped with the reason otherwise.
'use strict';

const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { kd, assert } = require('./helpers');

const ROOT = path.join(__dirname, '..');

/** Runs `body` (an async function body with kd in scope) in a child; its result as JSON. */
function inChild(body) {
  const script = `
    const kd = require(${JSON.stringify(ROOT)});
    (async () => { ${body} })().then((r) => console.log(JSON.stringify(r)), (e) => { console.error(e.stack); process.exit(1); });`;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 60000, env: process.env });
  assert.equal(r.signal, null, `child killed by ${r.signal} (a Promise that never settled keeps the process alive): ${r.stderr}`);
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

describe('CUDA: a device fault with work in flight', function () {
  this.timeout(120000);
  before(function () {
    if (!kd.cuda.isAvailable()) {
      console.log(`      (skipped: ${kd.cuda.unavailableReason()})`);
      this.skip();
    }
  });

  it('Promises waiting on the faulted device reject with KD_CUDA_ERROR, and the process exits', function () {
    const r = inChild(`
      const x = kd.ones([1000], { device: 'cuda' });
      const ev = new kd.cuda.Event();
      kd.cuda._fault(20);
      const y = x.add(1); // queued behind the fault: never runs
      ev.record();
      const settle = (p) => p.then(() => 'resolved', (e) => e.code);
      const t0 = Date.now();
      const outcomes = await Promise.all([settle(y.dataAsync()), settle(kd.cuda.synchronize()), settle(ev.synchronize())]);
      const later = (() => { try { kd.ones([4], { device: 'cuda' }).add(1).cpu(); return 'ok'; } catch (e) { return e.code; } })();
      return { outcomes, ms: Date.now() - t0, later };`);
    assert.deepEqual(r.outcomes, ['KD_CUDA_ERROR', 'KD_CUDA_ERROR', 'KD_CUDA_ERROR']);
    assert.equal(r.later, 'KD_CUDA_ERROR', 'the device stays faulted: later work fails with a coded error');
  });

  it('work that completed before the fault still resolves with its values', function () {
    const r = inChild(`
      const x = kd.arange(6, { device: 'cuda', dtype: 'float32' }).mul(2);
      const done = await x.dataAsync();
      kd.cuda._fault(5);
      const after = await x.dataAsync().then(() => 'resolved', (e) => e.code);
      return { done: Array.from(done), after };`);
    assert.deepEqual(r.done, [0, 2, 4, 6, 8, 10]);
    assert.equal(r.after, 'KD_CUDA_ERROR');
  });
});
