// handles.test.js - the native handles behind JS tensors (Note [Tensor handles] in
// src/napi/handle_table.c): a disposed handle stays disposed when its slot is reused, forged
// handles are refused, more handles than one page of the table, and environments (worker
// threads) that end with undisposed tensors in either GC mode.
'use strict';

const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { kd, assert, expectKdError } = require('./helpers');

const ROOT = path.join(__dirname, '..');

function runChild(script, env = {}) {
  const r = spawnSync(process.execPath, ['--expose-gc', '-e', script],
    { encoding: 'utf8', timeout: 120000, env: { ...process.env, ...env } });
  assert.equal(r.status, 0, `child failed (${r.signal || r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

describe('tensor handles', function () {
  it('a disposed handle stays disposed after its slot is reused by new tensors', function () {
    const a = kd.full([3], 5);
    const stale = a._h;
    a.dispose();
    // enough new tensors to reuse a's slot many times over, across pages of the table
    for (let i = 0; i < 3000; i++) {
      const t = kd.full([1], i);
      assert.equal(t.item(), i);
      assert.equal(a.isDisposed, true);
      if (i % 2) t.dispose();
      else kd.dispose(t);
    }
    assert.equal(a.isDisposed, true);
    expectKdError(() => a.add(1), 'KD_DISPOSED', 'add on a disposed tensor');
    expectKdError(() => kd.add(new kd.Tensor(stale), 1), 'KD_DISPOSED', 'a copy of the stale handle');
    assert.equal(a.dispose(), undefined); // twice is harmless
  });

  it('values and disposal stay right with several pages of live handles, disposed in any order', function () {
    // in a process of its own, so that no other test's tensors (or threads) move the count
    const script = `
      const assert = require('node:assert');
      const kd = require(${JSON.stringify(ROOT)});
      const n0 = kd.memory().liveTensors;
      const ts = [];
      for (let i = 0; i < 5000; i++) ts.push(kd.full([2], i));
      // dispose every third one, make more (reusing their slots), check every value
      for (let i = 0; i < ts.length; i += 3) ts[i].dispose();
      for (let i = 0; i < ts.length; i += 3) ts[i] = kd.full([2], -i - 1);
      for (let i = 0; i < ts.length; i++) assert.deepEqual(ts[i].arraySync(), i % 3 === 0 ? [-i - 1, -i - 1] : [i, i], 'tensor ' + i);
      // a pseudo-random order
      let s = 7;
      const order = ts.map((t, i) => [((s = (s * 1103515245 + 12345) % 2147483648)), i]).sort((x, y) => x[0] - y[0]);
      for (const [, i] of order) ts[i].dispose();
      console.log(JSON.stringify({ n0, after: kd.memory().liveTensors, disposed: ts.every((t) => t.isDisposed) }));`;
    const { n0, after, disposed } = runChild(script);
    assert.ok(disposed);
    assert.equal(after, n0);
  });

  it('a handle that is not a kindling handle is refused with KD_INVALID_TYPE, never used', function () {
    const forged = [{}, { _h: {} }, [], () => 1, Object.create(null), new Proxy({}, {})];
    for (const h of forged) {
      expectKdError(() => kd.add(new kd.Tensor(h), 1), ['KD_INVALID_TYPE'], `forged handle ${typeof h}`);
      expectKdError(() => new kd.Tensor(h).shape, ['KD_INVALID_TYPE'], `shape of a forged handle ${typeof h}`);
      expectKdError(() => new kd.Tensor(h).dispose(), ['KD_INVALID_TYPE'], `dispose of a forged handle ${typeof h}`);
    }
    // numbers and bigints that look like tokens are not handles either
    for (const h of [2 ** 63, -1, 0]) expectKdError(() => kd.add(new kd.Tensor(h), 1), ['KD_INVALID_TYPE'], `handle ${h}`);
  });

  it('a handle cannot be cloned into another thread (postMessage and structuredClone refuse it)', function () {
    const t = kd.ones([2]);
    try {
      assert.throws(() => structuredClone(t._h), (e) => e.name === 'DataCloneError');
    } finally {
      t.dispose();
    }
  });

  for (const mode of ['default', '0']) {
    it(`worker threads that end with undisposed tensors free them (KINDLING_GC_FINALIZERS ${mode})`, function () {
      this.timeout(120000);
      const script = `
        const { Worker } = require('node:worker_threads');
        const kd = require(${JSON.stringify(ROOT)});
        const src = \`
          const kd = require(${JSON.stringify(ROOT)});
          const keep = [];
          for (let i = 0; i < 2500; i++) {
            const t = kd.full([4], i);
            if (i % 3 === 0) t.dispose(); else if (i % 3 === 1) keep.push(t);
          }
          if (globalThis.gc) gc();
          require('node:worker_threads').parentPort.postMessage(keep.length);\`;
        (async () => {
          const base = kd.memory().liveTensors;
          for (let w = 0; w < 4; w++) {
            const worker = new Worker(src, { eval: true });
            await new Promise((resolve, reject) => { worker.on('message', () => {}); worker.on('error', reject); worker.on('exit', resolve); });
          }
          global.gc();
          console.log(JSON.stringify({ base, after: kd.memory().liveTensors }));
        })();`;
      const env = mode === '0' ? { KINDLING_GC_FINALIZERS: '0' } : {};
      const { base, after } = runChild(script, env);
      // kd.memory() counts tensors of every thread: the workers' are gone once each ended
      assert.equal(after, base);
    });
  }
});
