// soak.test.js - long runs that a service would do, each in a child process (a clean heap, an
// RSS of its own, --expose-gc): 10^5 small ops under kd.tidy with RSS growth under 5% between
// the 10^4th and the 10^5th op; a training loop of 3000 steps; tensors left to the GC in an
// async loop (finalizers run as the loop turns); tensors both disposed and collected (no double
// free); each scenario ends with kd.memory() back to its baseline.
'use strict';

const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { assert } = require('./helpers');

const ROOT = path.join(__dirname, '..');

/** Runs `body` (an async function's body, with `kd` in scope) in a child; its return value as JSON. */
function soak(body, env = {}) {
  const script = `
    const kd = require(${JSON.stringify(ROOT)});
    (async () => { ${body} })().then((r) => console.log(JSON.stringify(r)), (e) => { console.error(e.stack); process.exit(1); });`;
  // Under AddressSanitizer (npm run test:asan) freed memory waits in its quarantine (256 MB),
  // which RSS would count as growth: the child runs without one.
  const asanOptions = [process.env.ASAN_OPTIONS, 'quarantine_size_mb=0'].filter(Boolean).join(':');
  // --max-semi-space-size=1: V8's young generation stays at 1 MB. Otherwise V8 grows it (up to
  // 16 MB per semi-space, by its allocation-rate heuristics) and its pages become resident as the
  // allocation pointer first sweeps them, a one-time rise of 4-8 MB that lands between the 10^4th
  // and the 10^5th op or not depending on timing, and plateaus (measured over 4 x 10^5 ops): it is
  // V8 sizing its nursery, not memory kindling keeps.
  const r = spawnSync(process.execPath, ['--expose-gc', '--max-semi-space-size=1', '-e', script],
    { encoding: 'utf8', timeout: 300000, env: { ...process.env, ASAN_OPTIONS: asanOptions, ...env } });
  assert.equal(r.status, 0, `child failed (status ${r.status}, signal ${r.signal}): ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

const MB = (b) => `${(b / 2 ** 20).toFixed(1)} MB`;
// Under AddressSanitizer (npm run test:asan, which preloads libasan) RSS also holds its shadow
// memory and allocator metadata: the RSS bounds are checked on plain runs, the counters on both.
const underAsan = /libasan/.test(process.env.LD_PRELOAD || '');

describe('soak', function () {
  this.timeout(300000);

  it('10^5 small ops under kd.tidy: RSS grows < 5% from the 10^4th op to the 10^5th, liveTensors back to baseline', function () {
    const r = soak(`
      const x = kd.keep(kd.randn([16, 16]));
      const w = kd.keep(kd.randn([16, 16]));
      const base = kd.memory();
      // five ops per step: 20000 steps = 10^5 ops
      const step = () => kd.tidy(() => { x.matmul(w).add(1).relu().sum(1).mean(); });
      const rss = {};
      for (let op = 0, i = 0; op < 100000; i++, op += 5) {
        step();
        if (op === 10000) { global.gc(); rss.at1e4 = process.memoryUsage().rss; }
      }
      global.gc();
      rss.at1e5 = process.memoryUsage().rss;
      const end = kd.memory();
      return { rss, base, end };`);
    const growth = (r.rss.at1e5 - r.rss.at1e4) / r.rss.at1e4;
    if (!underAsan) assert.ok(growth < 0.05, `RSS ${MB(r.rss.at1e4)} at op 10^4, ${MB(r.rss.at1e5)} at op 10^5: ${(growth * 100).toFixed(1)}% growth`);
    assert.equal(r.end.liveTensors, r.base.liveTensors);
    assert.equal(r.end.hostBytesInUse, r.base.hostBytesInUse);
  });

  it('a training loop of 3000 steps learns and leaves no tensor behind', function () {
    const r = soak(`
      kd.manualSeed(0);
      const base = kd.memory().liveTensors;
      const model = new kd.nn.Sequential(new kd.nn.Linear(8, 32), new kd.nn.ReLU(), new kd.nn.Linear(32, 1));
      const opt = new kd.optim.Adam(model.parameters(), { lr: 1e-2 });
      const X = kd.randn([64, 8]);
      const wTrue = kd.randn([8, 1]);
      const Y = X.matmul(wTrue).sin();
      const losses = [];
      let rssAt500 = 0;
      for (let step = 0; step < 3000; step++) {
        const loss = kd.tidy(() => {
          opt.zeroGrad();
          const l = kd.nn.functional.mseLoss(model.forward(X), Y);
          l.backward();
          opt.step();
          return l.item();
        });
        losses.push(loss);
        if (step === 500) { global.gc(); rssAt500 = process.memoryUsage().rss; }
      }
      global.gc();
      const rssEnd = process.memoryUsage().rss;
      const live = kd.memory().liveTensors;
      kd.dispose([X, wTrue, Y, model.parameters()]);
      opt.dispose();
      global.gc(); // (Y's intermediate matmul was left to the GC: its finalizer runs as the loop turns)
      await new Promise((res) => setImmediate(res));
      return { first: losses[0], last: losses[losses.length - 1], rssAt500, rssEnd, liveDuring: live, base, after: kd.memory().liveTensors };`);
    assert.ok(r.last < r.first / 10, `loss ${r.first} -> ${r.last}`);
    if (!underAsan) assert.ok((r.rssEnd - r.rssAt500) / r.rssAt500 < 0.05, `RSS ${MB(r.rssAt500)} at step 500, ${MB(r.rssEnd)} at 3000`);
    assert.equal(r.after, r.base, 'every tensor of the loop is freed once the model and optimizer are disposed');
  });

  it('tensors left to the GC in an async loop are freed as the loop turns: bounded RSS, baseline at the end', function () {
    const r = soak(`
      const base = kd.memory();
      let peak = 0;
      for (let i = 0; i < 4000; i++) {
        kd.ones([128, 128]).add(1); // 64 KiB each, never disposed
        if (i % 100 === 0) {
          await new Promise((res) => setImmediate(res));
          peak = Math.max(peak, process.memoryUsage().rss);
        }
      }
      for (let k = 0; k < 5; k++) { global.gc(); await new Promise((res) => setImmediate(res)); }
      return { peak, base, end: kd.memory() };`);
    // 4000 x 2 tensors x 64 KiB = 500 MB if nothing were freed
    if (!underAsan) assert.ok(r.peak < 400 * 2 ** 20, `peak RSS ${MB(r.peak)}`);
    assert.equal(r.end.liveTensors, r.base.liveTensors);
    assert.equal(r.end.hostBytesInUse, r.base.hostBytesInUse);
  });

  for (const gcFinalizers of ['1', '0']) {
    it(`a tensor both disposed and collected is freed once (${gcFinalizers === '1' ? 'by kindling after a collection' : 'by the finalizers after the loop turns'})`, function () {
      const r = soak(`
        const base = kd.memory();
        for (let round = 0; round < 20; round++) {
          let ts = Array.from({ length: 500 }, (_, i) => kd.full([64], i));
          let views = ts.slice(0, 100).map((t) => t.view([8, 8]));
          kd.dispose(ts.slice(0, 250)); // half disposed, then all dropped
          views.forEach((v) => v.add(1));
          ts = null;
          views = null; // (a suspended async function keeps its registers: drop it by hand)
          global.gc();
          await new Promise((res) => setImmediate(res));
        }
        for (let k = 0; k < 3; k++) { global.gc(); await new Promise((res) => setImmediate(res)); }
        return { base, end: kd.memory() };`, { KINDLING_GC_FINALIZERS: gcFinalizers });
      assert.equal(r.end.liveTensors, r.base.liveTensors);
      assert.equal(r.end.hostBytesInUse, r.base.hostBytesInUse);
    });
  }
});
