// cuda_emulator.test.js - the emulated GPU (cuda/emulator, KINDLING_CUDA=emulate): its self-test
// program (CUDA semantics: barriers, shuffles, atomics, launch limits, order, streams, memory,
// cuBLAS, cuSOLVER, CUB, sticky faults), the counters that stand in for GPU performance (the launch and
// sync counts of the hot ops are pinned: an op that synchronises the device where PyTorch does
// not is a bug), and its configuration (out-of-memory paths). Runs when the emulated GPU is built
// (npm run build:emulator); `npm test` runs this file again with KINDLING_CUDA=emulate.
'use strict';

const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const kd = require('..');

const release = path.join(__dirname, '..', 'build', 'Release');
const built = fs.existsSync(path.join(release, 'libkindling_cuda_emu.so'));
const selftest = path.join(release, 'kd_emu_selftest');

/** Runs a script in a child process on the emulated GPU; returns its parsed JSON output. */
function emulated(script, env = {}) {
  const r = spawnSync(process.execPath, ['-e', script], {
    cwd: path.join(__dirname, '..'),
    env: { ...process.env, KINDLING_CUDA: 'emulate', ...env },
    encoding: 'utf8',
    timeout: 120000,
  });
  assert.equal(r.status, 0, `child failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

describe('the emulated GPU', function () {
  this.timeout(180000);
  if (!built) {
    it('is not built here (npm run build:emulator)', function () {
      console.log('      (skipped: build/Release/libkindling_cuda_emu.so not built; npm run build:emulator)');
      this.skip();
    });
    return;
  }

  it('passes its self-test (CUDA semantics) with two seeds', function () {
    for (const seed of ['1', '12345']) {
      const r = spawnSync(selftest, [], {
        env: { ...process.env, KINDLING_CUDA_EMU_DEVICES: '3', KINDLING_CUDA_EMU_SEED: seed },
        encoding: 'utf8',
        timeout: 120000,
      });
      assert.equal(r.status, 0, `seed ${seed}:\n${r.stdout}${r.stderr}`);
      assert.match(r.stdout, /^passed: 0 failed$/m);
      assert.equal((r.stdout.match(/^ok /gm) || []).length, 19, r.stdout);
    }
  });

  it('is a CUDA device that says it is emulated, with two devices and settable memory', function () {
    const r = emulated(`const kd = require('.');
      const p = kd.cuda.getDeviceProperties(1);
      console.log(JSON.stringify({ a: kd.cuda.isAvailable(), n: kd.cuda.deviceCount(), e: kd.cuda.emulator.isEnabled(),
        name: p.name, mem: p.totalMemory, s: kd.cuda.emulator.stats() }));`, { KINDLING_CUDA_EMU_MEMORY: '64M' });
    assert.equal(r.a, true);
    assert.equal(r.n, 2);
    assert.equal(r.e, true);
    assert.match(r.name, /emulated/);
    assert.equal(r.mem, 64 * 1024 * 1024);
    assert.equal(r.s.memory, 64 * 1024 * 1024);
    assert.equal(r.s.devices, 2);
    assert.equal(r.s.fault, '');
  });

  it('runs out of memory as a GPU would: a coded error, and the device is usable after', function () {
    const r = emulated(`const kd = require('.');
      let code = null, msg = '';
      try { kd.empty([64, 1024, 1024], { device: 'cuda' }); } catch (e) { code = e.code; msg = e.message; }
      const t = kd.ones([1024], { device: 'cuda' }).mul(2);
      console.log(JSON.stringify({ code, msg, sum: t.sum().item() }));`, { KINDLING_CUDA_EMU_MEMORY: '32M' });
    assert.equal(r.code, 'KD_CUDA_OOM');
    assert.match(r.msg, /out of memory/i);
    assert.equal(r.sum, 2048);
  });

  it('reads its device and memory configuration, and cuda:1 works with peer copies', function () {
    const r = emulated(`const kd = require('.');
      const a = kd.arange(0, 10, { device: 'cuda:1' }).mul(3);
      const b = a.to('cuda:0').add(1);
      console.log(JSON.stringify({ n: kd.cuda.deviceCount(), d: b.device, v: b.cpu().arraySync() }));`, { KINDLING_CUDA_EMU_DEVICES: '3' });
    assert.equal(r.n, 3);
    assert.equal(r.d, 'cuda:0');
    assert.deepEqual(r.v, [1, 4, 7, 10, 13, 16, 19, 22, 25, 28]);
  });

  describe('counters (in the emulated run of npm test)', function () {
    if (!kd.cuda.emulator.isEnabled()) return; // the CPU run of this file: nothing to count

    /** Launch/sync/copy deltas of fn's second call (the first warms caches and handles up). */
    function counts(fn) {
      kd.tidy(fn);
      const a = kd.cuda.emulator.stats();
      kd.tidy(fn);
      const b = kd.cuda.emulator.stats();
      return { launches: b.launches - a.launches, syncs: b.syncs - a.syncs, h2d: b.copiesHostToDevice - a.copiesHostToDevice,
        d2h: b.copiesDeviceToHost - a.copiesDeviceToHost };
    }
    const dev = 'cuda';
    let x, y, w, g, b, model, opt;
    before(function () {
      kd.manualSeed(0);
      x = kd.randn([64, 128], { device: dev });
      y = kd.randn([64, 128], { device: dev });
      w = kd.randn([128, 32], { device: dev });
      g = kd.ones([128], { device: dev });
      b = kd.zeros([128], { device: dev });
      model = new kd.nn.Linear(128, 32).to(dev);
      opt = new kd.optim.Adam(model.parameters(), { lr: 1e-3 });
      kd.tidy(() => model.forward(x).pow(2).mean().backward());
    });
    after(function () {
      kd.dispose([x, y, w, g, b]);
    });

    const pinned = {
      add: [() => x.add(y), 1],
      'add a scalar': [() => x.add(1), 1],
      matmul: [() => x.matmul(w), 1], // one cuBLAS call
      softmax: [() => x.softmax(1), 1],
      layerNorm: [() => kd.nn.functional.layerNorm(x, [128], g, b), 1],
      'an Adam step': [() => opt.step(), 2],
    };
    for (const [name, [fn, launches]] of Object.entries(pinned)) {
      it(`${name}: ${launches} launch(es), no device sync, no host copy`, function () {
        assert.deepEqual(counts(fn), { launches, syncs: 0, h2d: 0, d2h: 0 });
      });
    }

    // The index checks of the indexing ops and nllLoss/crossEntropy record a bad index on the
    // device (binaryCrossEntropy an input outside [0, 1]) and raise it at the next sync point (Note [Deferred index errors] in
    // cuda/deferred_check.cuh): no sync and no read-back at the call, as PyTorch's device-side
    // asserts. Pinned so that no sync creeps back.
    describe('index checks without a sync', function () {
      let t, ix, rows, pos, p, pos01;
      before(function () {
        t = kd.tidy(() => kd.randint(0, 128, [64], { device: dev }));
        ix = kd.tidy(() => kd.randint(0, 64, [64, 16], { device: dev }));
        rows = kd.tidy(() => kd.randint(-64, 64, [32], { device: dev }));
        pos = kd.tidy(() => rows.abs());
        p = kd.tidy(() => x.sigmoid());
        pos01 = kd.tidy(() => y.gt(0).to('float32'));
      });
      after(function () {
        kd.dispose([t, ix, rows, pos, p, pos01]);
      });
      const checked = {
        crossEntropy: [() => kd.nn.functional.crossEntropy(x, t), 9],
        nllLoss: [() => kd.nn.functional.nllLoss(x, t), 8],
        gather: [() => x.gather(1, ix), 2],
        indexSelect: [() => x.indexSelect(0, pos), 2],
        'index (negative indices)': [() => x.index([rows]), 2],
        embedding: [() => kd.nn.functional.embedding(pos, x), 2],
        scatterAdd: [() => x.scatterAdd(1, ix, y.narrow(1, 0, 16)), 2],
        binaryCrossEntropy: [() => kd.nn.functional.binaryCrossEntropy(p, pos01), 5],
      };
      for (const [name, [fn, launches]] of Object.entries(checked)) {
        it(`${name}: ${launches} launches, no device sync, no host copy`, function () {
          assert.deepEqual(counts(fn), { launches, syncs: 0, h2d: 0, d2h: 0 });
        });
      }
    });

    // Every op on CUDA tensors must run on the device: a CPU loop reading device memory works on
    // the emulated GPU (its device memory is host memory) but faults on a GPU. The counters show
    // it: an op that computes a CUDA result launches at least one kernel (argmax/max/min along
    // dim 0 used to take a CPU fast path on device memory).
    it('every op that computes on CUDA tensors launches device work', function () {
      const b = kd.tidy(() => x.gt(0)), i = kd.tidy(() => kd.randint(0, 64, [64, 4], { device: dev }));
      const s = kd.tidy(() => x.narrow(1, 0, 64));
      const ops = {
        'sum()': () => x.sum(), 'sum(0)': () => x.sum(0), 'mean(1)': () => x.mean(1), 'amax(0)': () => x.amax(0),
        'amin(1)': () => x.amin(1), 'argmax(0)': () => x.argmax(0), 'argmax(1)': () => x.argmax(1), 'argmin(0)': () => x.argmin(0),
        'argmax()': () => x.argmax(), 'max(0)': () => x.max(0).values, 'min(0)': () => x.min(0).indices, 'max()': () => x.max(),
        'prod(0)': () => s.prod(0), 'std(0)': () => x.std(0), 'var(1)': () => x.var(1), 'norm()': () => x.norm(),
        'logsumexp([1])': () => x.logsumexp([1]), 'all()': () => b.all(), 'any(0)': () => b.any(0), 'cumsum(0)': () => x.cumsum(0),
        'cumprod(1)': () => s.cumprod(1), 'cummax(0)': () => x.cummax(0).values, 'softmax(0)': () => x.softmax(0),
        'sort(0)': () => x.sort(0).values, 'topk(3)': () => x.topk(3).values, 'median(0)': () => x.median(0).values,
        'clamp': () => x.clamp(-0.5, 0.5), 'where': () => kd.where(b, x, 0), 'tril': () => s.tril(), 'flip': () => x.flip([0]),
        'cat': () => kd.cat([x, x], 1), 'gather': () => x.gather(1, i), 'countNonzero': () => b.countNonzero(),
        'transpose().contiguous()': () => x.t().contiguous(), 'to float16': () => x.to('float16'), 'repeat': () => x.repeat([2, 1]),
        'pad': () => kd.nn.functional.pad(x, [1, 1]), 'embedding': () => kd.nn.functional.embedding(i, s),
        'dropout': () => kd.nn.functional.dropout(x, 0.5, true), 'oneHot': () => kd.nn.functional.oneHot(i.select(1, 0), 64),
        'diag': () => s.diag(), 'indexSelect': () => x.indexSelect(0, i.select(1, 0)), 'unique': () => i.unique(),
      };
      const none = [];
      for (const [name, f] of Object.entries(ops)) {
        const a = kd.cuda.emulator.stats().launches;
        kd.tidy(f);
        if (kd.cuda.emulator.stats().launches === a) none.push(name);
      }
      kd.dispose([b, i, s]);
      assert.deepEqual(none, [], `ran no device work: ${none.join(', ')}`);
    });

    // Streams really overlap here, so the races a GPU has are possible: a block freed while
    // another stream still writes it is reused at once unless recordStream told the allocator.
    it('a block freed while another stream writes it is reused at once; recordStream prevents it', async function () {
      const trial = async (record) => {
        const s1 = new kd.cuda.Stream(), s2 = new kd.cuda.Stream();
        const n = 1 << 16;
        const t = kd.cuda.withStream(s1, () => kd.zeros([n], { device: dev }));
        await s1.synchronize();
        kd.cuda.withStream(s2, () => { kd.cuda._spin(400); t.fill_(7); }); // s2 writes t late (after s1's work below)
        if (record) t.recordStream(s2);
        t.dispose();
        const u = kd.cuda.withStream(s1, () => kd.zeros([n], { device: dev }).fill_(1));
        await s1.synchronize();
        await s2.synchronize();
        const v = kd.cuda.withStream(s1, () => u.sum().item());
        u.dispose();
        return v;
      };
      assert.equal(await trial(false), 7 * 65536, 'the race is visible: s2\'s late write landed in the reused block');
      assert.equal(await trial(true), 65536);
    });

    it('item() is one blocking copy (a data-dependent read, as PyTorch)', function () {
      const c = counts(() => x.sum().item());
      assert.equal(c.d2h, 1);
      assert.equal(c.syncs, 1);
    });

    it('blocks and threads are counted as the grids run', async function () {
      await kd.cuda.synchronize();
      const a = kd.cuda.emulator.stats();
      kd.tidy(() => kd.ones([1000], { device: dev }).mul(3));
      await kd.cuda.synchronize(); /* the grids run on the stream's thread, after the call returned */
      const s = kd.cuda.emulator.stats();
      assert.ok(s.launches > a.launches && s.blocks > a.blocks && s.threads >= a.threads + 1000);
    });
  });
});
