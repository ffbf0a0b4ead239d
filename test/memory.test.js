// memory.test.js - deterministic memory management: dispose, use after dispose (KD_DISPOSED),
// kd.tidy (sync, async, nested, returned tensors, errors, concurrency), kd.keep, kd.dispose,
// Symbol.dispose / `using`, kd.memory() accounting, GC finalizers, and synchronous loops that
// never dispose or tidy every iteration (child processes: bounded memory, no growth per iteration).
'use strict';

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { kd, assert, values, expectKdError, collectGarbage } = require('./helpers');

const ROOT = path.join(__dirname, '..');
const underAsan = /libasan/.test(process.env.LD_PRELOAD || '');
const live = () => kd.memory().liveTensors;

// Without CUDA, moving a tensor there fails (KD_CUDA_UNAVAILABLE); with CUDA, ops on bad CUDA
// input fail. Either way nothing leaks: tensors, host bytes and, with CUDA, device bytes.
// Returns whether CUDA ran. Self-contained: a child process also runs it, from its source.
function cudaFailuresLeakNothing(kd, assert) {
  const on = kd.cuda.isAvailable();
  const failing = on ? {
    cudaMatmul: () => kd.ones([2, 3], { device: 'cuda' }).matmul(kd.ones([4, 5], { device: 'cuda' })),
    cudaSumDim: () => kd.ones([2, 3], { device: 'cuda' }).sum(5),
    cudaDeviceIndex: () => kd.ones([2]).to(`cuda:${kd.cuda.deviceCount()}`),
  } : { cuda: () => kd.ones([2]).to('cuda') };
  const deviceBytes = () => (on ? kd.cuda.memoryAllocated() : 0);
  for (const [name, fn] of Object.entries(failing)) {
    const n0 = kd.memory().liveTensors, b0 = kd.memory().hostBytesInUse, d0 = deviceBytes();
    for (let i = 0; i < 20; i++) {
      assert.throws(() => kd.tidy(fn), (e) => typeof e.code === 'string' && (on || e.code === 'KD_CUDA_UNAVAILABLE'), name);
    }
    assert.equal(kd.memory().liveTensors, n0, `${name}: liveTensors`);
    assert.equal(kd.memory().hostBytesInUse, b0, `${name}: hostBytesInUse`);
    assert.equal(deviceBytes(), d0, `${name}: device bytes`);
  }
  return on;
}

describe('memory', function () {
  it('kd.memory() reports numbers', function () {
    const m = kd.memory();
    for (const k of ['liveTensors', 'hostBytesInUse']) assert.equal(typeof m[k], 'number', k);
  });

  it('creating and disposing moves liveTensors and hostBytesInUse', function () {
    const n0 = live();
    const b0 = kd.memory().hostBytesInUse;
    const t = kd.zeros([1000], { dtype: 'float64' });
    assert.equal(live(), n0 + 1);
    assert.ok(kd.memory().hostBytesInUse >= b0 + 8000, 'hostBytesInUse counts the new storage');
    const v = t.view([10, 100]);
    assert.equal(live(), n0 + 2, 'a view is a tensor');
    t.dispose();
    assert.equal(live(), n0 + 2, 'a view keeps its base (autograd view tracking, as PyTorch\'s _base)');
    assert.ok(kd.memory().hostBytesInUse >= b0 + 8000, 'the view keeps the storage alive');
    v.dispose();
    assert.equal(live(), n0);
    assert.equal(kd.memory().hostBytesInUse, b0, 'storage freed with its last tensor');
  });

  it('small storages (kept in their struct, Note [Small storages]) are counted, shared by views and freed', function () {
    const b0 = kd.memory().hostBytesInUse;
    const t = kd.arange(16, { dtype: 'float32' }); // 64 bytes: the largest kept in the struct
    const u = kd.arange(17, { dtype: 'float32' }); // 68 bytes: from the host allocator
    assert.equal(kd.memory().hostBytesInUse, b0 + 64 + 68);
    const t44 = t.view([4, 4]);
    const v = t44.narrow(1, 1, 2);
    t44.dispose();
    v.mul_(10);
    assert.deepEqual(Array.from(t.dataSync()), [0, 10, 20, 3, 4, 50, 60, 7, 8, 90, 100, 11, 12, 130, 140, 15]);
    const un = u.narrow(0, 0, 16);
    const r = t.add(un);
    assert.deepEqual(Array.from(r.dataSync()).slice(0, 4), [0, 11, 22, 6]);
    kd.dispose([t, u, un, r]);
    assert.equal(kd.memory().hostBytesInUse, b0 + 64, 'the view keeps its storage');
    v.dispose();
    assert.equal(kd.memory().hostBytesInUse, b0);
  });

  it('dispose is idempotent and isDisposed reports it', function () {
    const t = kd.ones([2]);
    assert.equal(t.isDisposed, false);
    t.dispose();
    assert.equal(t.isDisposed, true);
    t.dispose();
    assert.equal(t.isDisposed, true);
    assert.equal(String(t), 'tensor(<disposed>)');
  });

  it('every use of a disposed tensor throws KD_DISPOSED', function () {
    const t = kd.ones([2, 2]);
    const other = kd.ones([2, 2]);
    t.dispose();
    const uses = {
      shape: () => t.shape, dtype: () => t.dtype, numel: () => t.numel(), stride: () => t.stride(),
      dataSync: () => t.dataSync(), arraySync: () => t.arraySync(), item: () => t.item(),
      add: () => t.add(1), addAsOther: () => other.add(t), kdAdd: () => kd.add(other, t), add_: () => t.add_(1),
      copyInto: () => other.copy_(t), view: () => t.view([4]), transpose: () => t.t(), sum: () => t.sum(),
      max: () => t.max(1), matmul: () => other.matmul(t), to: () => t.to('float64'), clone: () => t.clone(),
      zerosLike: () => kd.zerosLike(t), where: () => kd.where(kd.tensor([true, false]), t, other),
      fill_: () => t.fill_(1), contiguous: () => t.contiguous(),
    };
    for (const [name, fn] of Object.entries(uses)) expectKdError(fn, 'KD_DISPOSED', name);
    assert.deepEqual(values(other), [1, 1, 1, 1], 'the other operand is untouched');
  });

  it('dataAsync() of a disposed tensor rejects with KD_DISPOSED', async function () {
    const t = kd.ones([2]);
    t.dispose();
    await assert.rejects(async () => t.dataAsync(), (e) => e.code === 'KD_DISPOSED');
    await assert.rejects(async () => t.array(), (e) => e.code === 'KD_DISPOSED');
  });

  describe('tidy (sync)', function () {
    it('disposes what it does not return and keeps what it returns', function () {
      const n0 = live();
      let inner;
      const r = kd.tidy(() => {
        inner = kd.ones([3]);
        const b = inner.mul(2);
        return b.add(1);
      });
      assert.equal(inner.isDisposed, true);
      assert.equal(r.isDisposed, false);
      assert.deepEqual(values(r), [3, 3, 3]);
      assert.equal(live(), n0 + 1);
      r.dispose();
      assert.equal(live(), n0);
    });

    it('keeps tensors inside returned arrays and objects, and tuples from max', function () {
      const n0 = live();
      const out = kd.tidy(() => {
        const x = kd.tensor([[1, 5], [7, 2]], { dtype: 'float32' });
        return { list: [x.sum(), x.mean()], nested: { m: x.max(1) }, n: 3 };
      });
      assert.equal(out.n, 3);
      assert.deepEqual(values(out.list[0]), [15]);
      assert.deepEqual(values(out.nested.m.values), [5, 7]);
      assert.deepEqual(values(out.nested.m.indices), [1, 0]);
      assert.equal(live(), n0 + 4);
      kd.dispose(out);
      assert.equal(live(), n0);
    });

    it('does not dispose tensors created outside it', function () {
      const outside = kd.ones([2]);
      kd.tidy(() => { outside.add(1); });
      assert.equal(outside.isDisposed, false);
      assert.deepEqual(values(outside), [1, 1]);
      outside.dispose();
    });

    it('nested: inner results move to the outer scope', function () {
      const n0 = live();
      let fromInner;
      const r = kd.tidy(() => {
        fromInner = kd.tidy(() => kd.ones([2]).mul(5));
        assert.equal(fromInner.isDisposed, false, 'returned from the inner scope');
        const keepMe = fromInner.add(1);
        return keepMe;
      });
      assert.equal(fromInner.isDisposed, true, 'disposed by the outer scope');
      assert.deepEqual(values(r), [6, 6]);
      r.dispose();
      assert.equal(live(), n0);
    });

    it('disposes on throw and rethrows', function () {
      const n0 = live();
      let made;
      assert.throws(() => kd.tidy(() => { made = kd.ones([4]); throw new Error('boom'); }), /boom/);
      assert.equal(made.isDisposed, true);
      assert.equal(live(), n0);
    });

    it('kd.keep exempts a tensor', function () {
      const n0 = live();
      let kept;
      kd.tidy(() => { kept = kd.keep(kd.ones([2])); kd.zeros([2]); });
      assert.equal(kept.isDisposed, false);
      kept.dispose();
      assert.equal(live(), n0);
    });

    it('tidy of a function throwing a kindling error leaves no tensors', function () {
      const n0 = live();
      assert.throws(() => kd.tidy(() => kd.ones([2, 3]).add(kd.ones([2]))), (e) => e.code === 'KD_SHAPE_MISMATCH');
      assert.equal(live(), n0);
    });

    it('many ops in a loop return liveTensors to its start value', function () {
      const n0 = live();
      const b0 = kd.memory().hostBytesInUse;
      for (let i = 0; i < 200; i++) {
        kd.tidy(() => {
          const x = kd.randn([16, 16]);
          const y = x.matmul(x.t()).relu().sum(1).max(0);
          return y.values.item();
        });
      }
      assert.equal(live(), n0);
      assert.equal(kd.memory().hostBytesInUse, b0);
    });

    it('rejects a non-function', function () {
      expectKdError(() => kd.tidy(42), 'KD_INVALID_TYPE');
    });
  });

  describe('tidy (async)', function () {
    it('tracks tensors created after awaits', async function () {
      const n0 = live();
      const made = [];
      const r = await kd.tidy(async () => {
        made.push(kd.ones([2]));
        await new Promise((res) => setTimeout(res, 5));
        made.push(kd.ones([2]).mul(3));
        await null;
        return made[1].add(1);
      });
      assert.ok(made.every((t) => t.isDisposed));
      assert.deepEqual(values(r), [4, 4]);
      r.dispose();
      assert.equal(live(), n0);
    });

    it('two concurrent async tidies do not see each other', async function () {
      const n0 = live();
      const results = await Promise.all([1, 2].map((k) => kd.tidy(async () => {
        const a = kd.full([2], k);
        await new Promise((res) => setTimeout(res, 10 * k));
        const b = a.mul(10);
        await new Promise((res) => setTimeout(res, 5));
        return b;
      })));
      assert.deepEqual(values(results[0]), [10, 10]);
      assert.deepEqual(values(results[1]), [20, 20]);
      kd.dispose(results);
      assert.equal(live(), n0);
    });

    it('rejections dispose and propagate', async function () {
      const n0 = live();
      await assert.rejects(kd.tidy(async () => { kd.ones([2]); await null; kd.ones([2]); throw new Error('late'); }), /late/);
      assert.equal(live(), n0);
    });

    it('sync tidy inside async tidy', async function () {
      const n0 = live();
      const r = await kd.tidy(async () => {
        const a = kd.tidy(() => kd.ones([2]).add(1));
        await null;
        return a.mul(2);
      });
      assert.deepEqual(values(r), [4, 4]);
      r.dispose();
      assert.equal(live(), n0);
    });
  });

  it('failing ops leak neither tensors nor host bytes', function () {
    const failing = {
      matmul: () => kd.ones([2, 3]).matmul(kd.ones([4, 5])),
      inplaceBroadcast: () => kd.ones([3]).add_(kd.ones([2, 3])),
      inplaceCast: () => kd.ones([2], { dtype: 'int32' }).add_(1.5),
      sumDim: () => kd.ones([2, 3]).sum(5),
      view: () => kd.ones([2, 3]).t().view([6]),
      ragged: () => kd.tensor([[1, 2], [3]]),
      badValue: () => kd.tensor([1, 'a']),
      uint8Range: () => kd.tensor([300], { dtype: 'uint8' }),
      zeroDiv: () => kd.ones([2], { dtype: 'int32' }).div(0, { roundingMode: 'floor' }),
      bmm: () => kd.ones([2, 2, 3]).bmm(kd.ones([3, 3, 2])),
      where: () => kd.where(kd.ones([2]), kd.ones([2]), kd.ones([2])),
      mean: () => kd.ones([2], { dtype: 'int64' }).mean(),
      split: () => kd.ones([4]).split([1, 1]),
      maxEmpty: () => kd.zeros([0]).max(),
      typeErr: () => kd.ones([2]).add('x'),
      expand: () => kd.ones([2, 3]).expand([3, 3]),
      asStrided: () => kd.ones([4]).asStrided([5], [1]),
      oom: () => kd.empty([1e15]),
    };
    collectGarbage();
    for (const [name, fn] of Object.entries(failing)) {
      const n0 = live();
      const b0 = kd.memory().hostBytesInUse;
      for (let i = 0; i < 20; i++) {
        assert.throws(() => kd.tidy(fn), (e) => typeof e.code === 'string', name);
      }
      assert.equal(live(), n0, `${name}: liveTensors`);
      assert.equal(kd.memory().hostBytesInUse, b0, `${name}: hostBytesInUse`);
    }
  });

  it('failing CUDA requests leak nothing, with CUDA and without', function () {
    const here = cudaFailuresLeakNothing(kd, assert);
    // the other branch in a child process where this machine allows it: CUDA made unavailable
    // by a missing library, or the emulated GPU when it is built
    const emu = path.join(ROOT, 'build', 'Release', 'libkindling_cuda_emu.so');
    let env = null;
    if (here) env = { KINDLING_CUDA: '', KINDLING_CUDA_LIBRARY: path.join(ROOT, 'build', 'no-such-library.so') };
    else if (fs.existsSync(emu)) env = { KINDLING_CUDA: 'emulate', KINDLING_CUDA_LIBRARY: '' };
    if (!env) return;
    const script = "const kd = require('.'); const assert = require('node:assert');" +
      `process.stdout.write(String((${cudaFailuresLeakNothing})(kd, assert)));`;
    const r = spawnSync(process.execPath, ['-e', script], { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, String(!here), 'the child ran the other branch');
  });

  it('printing a tensor with a grad_fn keeps nothing alive past its dispose', function () {
    const n0 = live();
    const b0 = kd.memory().hostBytesInUse;
    kd.tidy(() => {
      const x = kd.ones([2, 3]).requiresGrad_(true);
      const y = x.mul(x); // saves x in its node
      assert.equal(String(y), 'tensor([[1., 1., 1.],\n        [1., 1., 1.]], grad_fn=<MulBackward0>)');
      assert.match(kd.ones([2000]).requiresGrad_(true).mul(2).toString(), /grad_fn=<MulBackward0>/); // summarised
    });
    assert.equal(live(), n0, 'no node handle keeps the saved tensors until the GC');
    assert.equal(kd.memory().hostBytesInUse, b0);
  });

  // A node keeps the value of a saved input and the node that made it, not the input tensor: an
  // in-place op that later gives the input a history leading back to the node (found by the API
  // fuzzer) made a cycle input -> new node -> ... -> node -> input that nothing freed.
  it('an input saved for backward and then changed in place by an op on its consumer keeps nothing alive', function () {
    const n0 = live();
    const b0 = kd.memory().hostBytesInUse;
    kd.tidy(() => {
      const target = kd.ones([2]); // does not require grad
      target.sub_(kd.nn.functional.mseLoss(kd.ones([]).requiresGrad_(true), target));
      const t = kd.ones([2]).requiresGrad_(true).mul(2); // has a history
      t.sub_(t.sin().sum());
      // the saved value changed: backward fails as PyTorch's does, the graph still frees
      expectKdError(() => t.sum().backward(), 'KD_INVALID_ARGUMENT');
    });
    assert.equal(live(), n0);
    assert.equal(kd.memory().hostBytesInUse, b0);
  });

  it('disposing views, chunks and tuples releases everything', function () {
    const n0 = live();
    const b0 = kd.memory().hostBytesInUse;
    const base = kd.arange(24, { dtype: 'float32' });
    const nar = base.narrow(0, 2, 3);
    const uns = nar.unsqueeze(1);
    const v46 = base.view([4, 6]);
    const parts = [v46, ...base.chunk(5), ...base.split([20, 4]), nar, uns, uns.expand([3, 4])];
    const mx = v46.max(1);
    base.dispose();
    assert.ok(kd.memory().hostBytesInUse >= b0 + 96, 'views keep the storage');
    kd.dispose(parts);
    kd.dispose(mx);
    assert.equal(live(), n0);
    assert.equal(kd.memory().hostBytesInUse, b0);
  });

  it('Symbol.dispose disposes (and `using` when the runtime supports it)', function () {
    const t = kd.ones([2]);
    assert.equal(typeof Symbol.dispose, 'symbol');
    assert.equal(typeof t[Symbol.dispose], 'function');
    t[Symbol.dispose]();
    assert.equal(t.isDisposed, true);
    let usingFn = null;
    try {
      usingFn = new Function('kd', 'let leaked; { using t = kd.ones([3]); leaked = t; } return leaked;'); // eslint-disable-line no-new-func
    } catch (e) {
      if (!(e instanceof SyntaxError)) throw e;
    }
    if (usingFn) {
      const leaked = usingFn(kd);
      assert.equal(leaked.isDisposed, true, '`using` disposed at block end');
    } else {
      console.log(`      (\`using\` is not supported by Node ${process.version}; called [Symbol.dispose]() directly)`);
    }
  });

  it('kd.dispose walks arrays, objects, Maps and Sets', function () {
    const n0 = live();
    const a = kd.ones([1]);
    const b = kd.ones([1]);
    const c = kd.ones([1]);
    const d = kd.ones([1]);
    kd.dispose([a, { x: b, y: [new Map([['k', c]])] }, new Set([d])]);
    assert.ok([a, b, c, d].every((t) => t.isDisposed));
    assert.equal(live(), n0);
  });

  it('GC finalizers release tensors that were never disposed', function () {
    const script = `
      const kd = require(${JSON.stringify(ROOT)});
      const n0 = kd.memory().liveTensors;
      let made = [];
      for (let i = 0; i < 2000; i++) made.push(kd.ones([64]).add(1));
      const before = kd.memory().liveTensors;
      made = null;
      (async () => {
        for (let i = 0; i < 20; i++) { global.gc(); await new Promise((r) => setTimeout(r, 10)); }
        console.log(JSON.stringify({ n0, before, after: kd.memory().liveTensors }));
      })();`;
    const { n0, before, after } = runChild(script);
    assert.ok(before >= n0 + 2000, `2000 tensors are held, liveTensors ${before}`);
    assert.ok(after < n0 + 500, `after GC liveTensors is ${after} (start ${n0}): finalizers did not release tensors`);
  });

  it('a tensor with a hook is freed once unreachable: its hook does not hold it', function () {
    const script = `
      const kd = require(${JSON.stringify(ROOT)});
      const n0 = kd.memory().liveTensors;
      (function () {
        for (let i = 0; i < 100; i++) {
          const x = kd.randn([3], { requiresGrad: true });
          x.registerHook((g) => g);
          x.mul(2).registerHook((g) => g.mul(1));
        }
      })();
      (async () => {
        for (let i = 0; i < 10; i++) { global.gc(); await new Promise((r) => setImmediate(r)); }
        console.log(JSON.stringify({ n0, after: kd.memory().liveTensors }));
      })();`;
    const { n0, after } = runChild(script);
    assert.equal(after - n0, 0, 'tensors with hooks (and their graphs) still alive after GC');
  });
});

// Node-API runs finalizers only when the event loop turns; kindling frees the tensors of the
// handles the GC collected from its own next native call (See Note [Freeing what the GC
// collected] in src/napi/handle_table.c), unless KINDLING_GC_FINALIZERS=0.

describe('memory: synchronous code without dispose', function () {
  this.timeout(120000);

  it('a loop of undisposed tensors stays bounded, and gc() frees them without a loop turn', function () {
    // 20000 iterations make 40000 tensors of 256 KiB (10 GB if nothing were freed before the
    // loop ends); the child stops early once its RSS passes 1 GB.
    const script = `
      const kd = require(${JSON.stringify(ROOT)});
      global.gc();
      const base = kd.memory();
      let peakRss = 0;
      let i = 0;
      (function () {
        for (; i < 20000; i++) {
          kd.ones([256, 256]).add(1);
          if (i % 250 === 0) {
            peakRss = Math.max(peakRss, process.memoryUsage().rss);
            if (peakRss > 2 ** 30) break;
          }
        }
      })();
      global.gc();
      console.log(JSON.stringify({ iterations: i, peakRss, base, after: kd.memory() }));`;
    const { iterations, peakRss, base, after } = runChild(script);
    const mb = (b) => `${(b / 2 ** 20).toFixed(0)} MB`;
    // (under AddressSanitizer RSS also holds shadow memory and the quarantine)
    const bound = underAsan ? 2 ** 30 : 500 * 2 ** 20;
    assert.ok(peakRss < bound, `peak RSS ${mb(peakRss)} after ${iterations} iterations: collected tensors were not freed`);
    assert.equal(iterations, 20000);
    assert.equal(after.liveTensors, base.liveTensors, 'gc() released every unreachable tensor');
    assert.equal(after.hostBytesInUse, base.hostBytesInUse, 'gc() freed their storages');
  });

  it('a kd.tidy loop does not grow per iteration', function () {
    // Each iteration makes and disposes five tensors (an options object, a tuple, a scalar
    // read); nothing of them may stay behind once the GC has run.
    const script = `
      const kd = require(${JSON.stringify(ROOT)});
      const x = kd.keep(kd.randn([4, 4]));
      const step = () => kd.tidy(() => { x.add(1).mul(2).sum({ dim: 0, keepdim: true }); x.max(1); x.sum().item(); });
      for (let i = 0; i < 20000; i++) step();
      global.gc();
      const rss0 = process.memoryUsage().rss;
      const live0 = kd.memory().liveTensors;
      const n = 200000;
      for (let i = 0; i < n; i++) step();
      global.gc();
      const rss1 = process.memoryUsage().rss;
      console.log(JSON.stringify({ perIteration: (rss1 - rss0) / n, live0, live1: kd.memory().liveTensors }));`;
    // Under AddressSanitizer (npm run test:asan) freed memory waits in its quarantine (256 MB)
    // before reuse, which would read as growth here: this child runs without it.
    const asanOptions = [process.env.ASAN_OPTIONS, 'quarantine_size_mb=0'].filter(Boolean).join(':');
    const { perIteration, live0, live1 } = runChild(script, { ASAN_OPTIONS: asanOptions });
    assert.equal(live1, live0, 'tidy disposed every tensor');
    assert.ok(perIteration < 100, `RSS grew by ${perIteration.toFixed(0)} bytes per iteration`);
  });
});

describe('memory: what the GC collected, freed by kindling or by the finalizers', function () {
  this.timeout(120000);

  for (const mode of ['default', '0']) {
    it(`gc() frees collected tensors ${mode === '0' ? 'only once the loop turns with KINDLING_GC_FINALIZERS=0' : 'before the loop turns'}`, function () {
      const script = `
        const kd = require(${JSON.stringify(ROOT)});
        const base = kd.memory();
        (function () {
          const keep = [];
          for (let i = 0; i < 300; i++) {
            const t = kd.full([64], i);
            const v = t.view([8, 8]).add(1);
            if (i % 3 === 0) t.dispose(); // some disposed, some views of disposed handles
            if (i % 5 === 0) keep.push(v);
          }
          kd.dispose(keep);
        })();
        global.gc();
        const beforeTurn = kd.memory();
        setImmediate(() => {
          global.gc();
          setImmediate(() => console.log(JSON.stringify({ base, beforeTurn, afterTurn: kd.memory() })));
        });`;
      const env = mode === '0' ? { KINDLING_GC_FINALIZERS: '0' } : {};
      const { base, beforeTurn, afterTurn } = runChild(script, env);
      if (mode === '0') assert.ok(beforeTurn.liveTensors > base.liveTensors, 'the finalizers wait for the loop');
      else assert.equal(beforeTurn.liveTensors, base.liveTensors, 'freed at the first native call after gc()');
      assert.equal(afterTurn.liveTensors, base.liveTensors);
      assert.equal(afterTurn.hostBytesInUse, base.hostBytesInUse);
    });
  }

  for (const device of ['cpu', 'cuda']) {
    it(`native calls that throw, hooks that throw and collections between them never abort the process (${device})`, function () {
      if (device === 'cuda' && !kd.cuda.isAvailable()) this.skip();
      // A collection while a native call has an exception pending aborted Node 20 when the GC
      // called kindling's finalizers itself (Note [Finalizers run by the GC] in src/napi/addon.c).
      const script = `
        const kd = require(${JSON.stringify(ROOT)});
        const on = { device: '${device}' };
        const base = kd.memory();
        let caught = 0;
        const shapes = { get dim() { kd.ones([32], on).add(1); throw new Error('getter'); } };
        (function () {
          for (let i = 0; i < 3000; i++) {
            kd.ones([16, 16], on).add(1); // left to the GC
            try { kd.ones([2, 3], on).view([7]); } catch (e) { caught++; }
            try { kd.ones([2], on).matmul(kd.ones([3], on)); } catch (e) { caught++; }
            try { kd.ones([2, 2], on).sum(shapes); } catch (e) { caught++; }
            if (i % 50 === 0) {
              const x = kd.ones([4], { requiresGrad: true, ...on });
              x.registerHook(() => { kd.ones([64], on).add(2); global.gc(); throw new Error('hook'); });
              try { x.mul(2).sum().backward(); } catch (e) { caught++; }
              global.gc();
            }
          }
        })();
        global.gc();
        console.log(JSON.stringify({ caught, base, end: kd.memory() }));`;
      for (let run = 0; run < 3; run++) {
        const { caught, base, end } = runChild(script);
        assert.equal(caught, 3 * 3000 + 60);
        assert.equal(end.liveTensors, base.liveTensors);
        assert.equal(end.cudaBytesInUse, base.cudaBytesInUse);
      }
    });
  }
});

describe('memory: synchronous code without dispose, on the GPU', function () {
  this.timeout(120000);
  before(function () {
    if (!kd.cuda.isAvailable()) this.skip();
  });

  it('device bytes are reported to V8, so a loop of CUDA tensors stays bounded', function () {
    // A loop that allocates little JS is collected because V8 is told about the device bytes
    // (20000 tensors of 4 MiB, 80 GB if nothing were freed; the child stops past 2 GB).
    const script = `
      const kd = require(${JSON.stringify(ROOT)});
      const base = kd.memory().cudaBytesInUse;
      let peak = 0;
      let i = 0;
      (function () {
        for (; i < 10000; i++) {
          kd.ones([1024, 1024], { device: 'cuda' }).add(1);
          peak = Math.max(peak, kd.memory().cudaBytesInUse - base);
          if (peak > 2 ** 31) break;
        }
      })();
      console.log(JSON.stringify({ iterations: i, peak }));`;
    const { iterations, peak } = runChild(script);
    assert.ok(peak < 2 ** 31, `${(peak / 2 ** 20).toFixed(0)} MB of device memory held after ${iterations} iterations`);
    assert.equal(iterations, 10000);
  });
});

/** Runs a script in a child node with --expose-gc and returns the JSON of its last line. */
function runChild(script, env = {}) {
  const r = spawnSync(process.execPath, ['--expose-gc', '-e', script],
    { encoding: 'utf8', timeout: 120000, env: { ...process.env, ...env } });
  assert.equal(r.status, 0, `child failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}
