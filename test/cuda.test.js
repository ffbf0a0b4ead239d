// cuda.test.js - without a GPU: kd.cuda.isAvailable() is false and every CUDA request is a
// clean KD_CUDA_UNAVAILABLE error. With a GPU: round trips to('cuda') and back for every
// dtype, ops on CUDA agree with the CPU, Philox gives the same numbers on both; the runtime:
// caching allocator stats, OOM, emptyCache, streams/events, non-blocking dataAsync() (timers keep
// firing while a kernel runs), pinned memory. The GPU tests only use copy_/fill_ on the device,
// so they do not depend on the op kernels. How to run them on a lent GPU: docs/CUDA.md.
'use strict';

const { kd, assert, values, expectKdError, ALL_DTYPES, collectGarbage } = require('./helpers');

const available = kd.cuda.isAvailable();

describe('cuda', function () {
  it('isAvailable() is a boolean and the module loaded either way', function () {
    assert.equal(typeof available, 'boolean');
    assert.equal(typeof kd.cuda.isAvailable, 'function');
  });

  describe('kd.build.cuda', function () {
    const { spawnSync } = require('node:child_process');
    const fs = require('node:fs');
    const os = require('node:os');
    const path = require('node:path');
    const release = path.join(__dirname, '..', 'build', 'Release');
    const childBuild = (env, script = "process.stdout.write(JSON.stringify(require('.').build))") => {
      const r = spawnSync(process.execPath, ['-e', script], {
        cwd: path.join(__dirname, '..'), env: { ...process.env, ...env }, encoding: 'utf8',
      });
      assert.equal(r.status, 0, r.stderr);
      return JSON.parse(r.stdout);
    };

    // The library the loader looks for: the emulated GPU's with KINDLING_CUDA=emulate.
    const libName = (env) => (env.KINDLING_CUDA === 'emulate' ? 'libkindling_cuda_emu.so' : 'libkindling_cuda.so');
    const MODES = [{ KINDLING_CUDA: '' }, { KINDLING_CUDA: 'emulate' }];

    it('says whether the CUDA library was built next to the addon (without loading it)', function () {
      const envLib = process.env.KINDLING_CUDA_LIBRARY;
      const expected = envLib ? fs.existsSync(envLib) : fs.existsSync(path.join(release, libName(process.env)));
      assert.equal(kd.build.cuda, expected);
      if (available) assert.equal(kd.build.cuda, true, 'CUDA runs, so its library was built');
      assert.equal(typeof kd.build.blas, 'boolean');
      assert.ok(Object.isFrozen(kd.build));
      // both libraries, whichever this process uses
      for (const mode of MODES) {
        const env = { ...mode, KINDLING_CUDA_LIBRARY: '' };
        assert.equal(childBuild(env).cuda, fs.existsSync(path.join(release, libName(env))), JSON.stringify(mode));
      }
    });

    for (const mode of MODES) {
      it(`finds ${libName(mode)} at KINDLING_CUDA_LIBRARY or next to kindling.node, as the loader does`, function () {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-build-'));
        try {
          const lib = path.join(dir, libName(mode));
          fs.writeFileSync(lib, 'not loaded by kd.build');
          assert.equal(childBuild({ ...mode, KINDLING_CUDA_LIBRARY: lib }).cuda, true);
          assert.equal(childBuild({ ...mode, KINDLING_CUDA_LIBRARY: path.join(dir, 'missing.so') }).cuda, false);
          // an addon with the library next to it (a copy of kindling.node in dir)
          fs.copyFileSync(path.join(release, 'kindling.node'), path.join(dir, 'kindling.node'));
          const script = `process.stdout.write(JSON.stringify(require(${JSON.stringify(path.join(dir, 'kindling.node'))}).cuda.libraryFound()))`;
          assert.equal(childBuild({ ...mode, KINDLING_CUDA_LIBRARY: '' }, script), true);
          // the other mode's library does not count
          const other = MODES.find((m) => m !== mode);
          assert.equal(childBuild({ ...other, KINDLING_CUDA_LIBRARY: '' }, script), false);
          fs.unlinkSync(lib);
          assert.equal(childBuild({ ...mode, KINDLING_CUDA_LIBRARY: '' }, script), false);
        } finally {
          fs.rmSync(dir, { recursive: true, force: true });
        }
      });
    }
  });

  describe('without a GPU', function () {
    before(function () {
      if (available) {
        console.log('      (skipped: a CUDA GPU is available here)');
        this.skip();
      }
    });
    it('CUDA requests throw KD_CUDA_UNAVAILABLE and CPU work continues', function () {
      const calls = [
        () => kd.zeros([2], { device: 'cuda' }), () => kd.ones([2], { device: 'cuda:0' }),
        () => kd.ones([2]).to('cuda'), () => kd.ones([2]).cuda(), () => kd.ones([2]).to({ device: 'cuda', dtype: 'float64' }),
        () => kd.tensor([1], { device: 'cuda' }), () => kd.arange(3, { device: 'cuda' }),
      ];
      for (const fn of calls) {
        const e = expectKdError(fn, 'KD_CUDA_UNAVAILABLE');
        assert.ok(e instanceof kd.KindlingError || e instanceof Error);
      }
      assert.deepEqual(values(kd.ones([2]).add(1)), [2, 2]);
    });
    it('the kd.cuda namespace: queries never throw, everything else is KD_CUDA_UNAVAILABLE', async function () {
      assert.equal(kd.cuda.deviceCount(), 0);
      if (typeof kd.cuda.unavailableReason === 'function') {
        const why = kd.cuda.unavailableReason();
        assert.equal(typeof why, 'string');
        assert.ok(why.length > 0, 'unavailableReason() explains why');
      }
      for (const name of ['currentDevice', 'setDevice', 'getDeviceName', 'getDeviceProperties']) {
        if (typeof kd.cuda[name] === 'function') expectKdError(() => kd.cuda[name](0), 'KD_CUDA_UNAVAILABLE', name);
      }
      if (typeof kd.cuda.synchronize === 'function') {
        await assert.rejects(Promise.resolve().then(() => kd.cuda.synchronize()), (e) => e.code === 'KD_CUDA_UNAVAILABLE');
      }
    });
    it('every kd.cuda function given bad arguments throws a coded kindling error (type, then value, then no CUDA)', async function () {
      const c = kd.cuda;
      const T = 'KD_INVALID_TYPE';
      const A = 'KD_INVALID_ARGUMENT';
      const U = 'KD_CUDA_UNAVAILABLE';
      const givenDevices = [[{}, T], [[0], T], [true, T], [-1, A], [1.5, A], ['x', A], ['cpu', A], ['cuda:-1', A], [0, U], ['cuda:1', U]];
      const given = (fn) => givenDevices.map(([d, code]) => [() => fn(d), code]);
      const perDevice = (fn) => [...given(fn), [() => fn(), U]]; // left out: the current device
      const ev = new c.Event();
      const calls = {
        isAvailable: [], unavailableReason: [], deviceCount: [], // never throw (checked below)
        currentDevice: [[() => c.currentDevice(), U]],
        setDevice: [[() => c.setDevice(), T], [() => c.setDevice(null), T], ...given(c.setDevice)],
        getDeviceName: perDevice(c.getDeviceName),
        getDeviceProperties: perDevice(c.getDeviceProperties),
        synchronize: perDevice(c.synchronize),
        memoryAllocated: perDevice(c.memoryAllocated),
        maxMemoryAllocated: perDevice(c.maxMemoryAllocated),
        memoryReserved: perDevice(c.memoryReserved),
        maxMemoryReserved: perDevice(c.maxMemoryReserved),
        memoryStats: perDevice(c.memoryStats),
        memorySummary: perDevice(c.memorySummary),
        memorySnapshot: perDevice(c.memorySnapshot),
        emptyCache: perDevice(c.emptyCache),
        resetPeakMemoryStats: perDevice(c.resetPeakMemoryStats),
        setPerProcessMemoryFraction: [[() => c.setPerProcessMemoryFraction('0.5'), T], [() => c.setPerProcessMemoryFraction(), T],
          [() => c.setPerProcessMemoryFraction(1.5), A], [() => c.setPerProcessMemoryFraction(NaN), A],
          [() => c.setPerProcessMemoryFraction(0.5, {}), T], [() => c.setPerProcessMemoryFraction(0.5, 'x'), A],
          [() => c.setPerProcessMemoryFraction(0.5), U]],
        Stream: [[() => new c.Stream(5), T], [() => new c.Stream('cuda'), T], [() => new c.Stream({ priority: 'high' }), T],
          [() => new c.Stream({ priority: 0.5 }), T], ...perDevice((device) => new c.Stream({ device })), [() => new c.Stream(null), U]],
        Event: [[() => new c.Event(5), T], [() => new c.Event({ enableTiming: 1 }), T],
          [() => ev.record(5), T], [() => ev.record({}), T], [() => ev.record(), U],
          [() => ev.elapsedTime(), T], [() => ev.elapsedTime({}), T], [() => ev.wait(3), T], [() => ev.wait(), U]],
        currentStream: perDevice(c.currentStream),
        defaultStream: perDevice(c.defaultStream),
        withStream: [[() => c.withStream(null, 3), T], [() => c.withStream({}, () => 0), T], [() => c.withStream(0, () => 0), T]],
        emulator: [[() => c.emulator.stats(), U]], // isEnabled() never throws (checked below)
        CUDAGraph: [[() => new c.CUDAGraph().captureBegin(5), T], [() => new c.CUDAGraph().captureBegin(null), T],
          [() => new c.CUDAGraph().captureEnd(), A], [() => new c.CUDAGraph().replay(), A], [() => new c.CUDAGraph().pool(), A],
          [() => new c.CUDAGraph().captureBegin(), U], [() => new c.CUDAGraph().captureBegin({ pool: 3 }), U]],
        GraphPoolHandle: [[() => new c.GraphPoolHandle(), T], [() => new c.GraphPoolHandle(1, 0), T]],
        graph: [[() => c.graph(null, () => 0), T], [() => c.graph(new c.CUDAGraph(), 3), T],
          [() => c.graph(new c.CUDAGraph(), () => 0, 5), T], [() => c.graph(new c.CUDAGraph(), () => 0), U]],
        graphPoolHandle: perDevice(c.graphPoolHandle),
        isCurrentStreamCapturing: [[() => c.isCurrentStreamCapturing(), U]],
        makeGraphedCallables: [[() => c.makeGraphedCallables(3, []), T], [() => c.makeGraphedCallables((x) => x, []), T],
          [() => c.makeGraphedCallables((x) => x, kd.ones([2])), T], [() => c.makeGraphedCallables((x) => x, [3]), T]],
      };
      // the legacy constructors (kd.cuda.FloatTensor, ...): sizes or data, then no CUDA
      for (const name of Object.keys(c).filter((k) => /^[A-Z]\w*Tensor$/.test(k))) {
        calls[name] = [[() => c[name]('x'), T], [() => c[name](2, 'x'), T], [() => c[name](2, 3), U], [() => c[name]([1, 0]), U]];
      }
      for (const name of Object.keys(c).filter((k) => !k.startsWith('_'))) {
        assert.ok(name in calls, `kd.cuda.${name} has no bad-argument cases here`);
      }
      for (const [name, cases] of Object.entries(calls)) {
        for (const [i, [call, code]] of cases.entries()) {
          let err = null;
          try {
            await call();
          } catch (e) {
            err = e;
          }
          assert.ok(err !== null, `kd.cuda.${name} case ${i}: expected ${code}, nothing was thrown`);
          assert.ok(err instanceof kd.KindlingError, `kd.cuda.${name} case ${i}: ${err.name}: ${err.message}`);
          assert.equal(err.code, code, `kd.cuda.${name} case ${i}: ${err.message}`);
          if (code === T) assert.ok(err instanceof TypeError);
        }
      }
      // the tensor methods lib/cuda.js installs
      const t = kd.ones([2]);
      for (const bad of [undefined, {}, 3]) expectKdError(() => t.recordStream(bad), T, 'recordStream');
      expectKdError(() => t.pinMemory(), U, 'pinMemory');
      assert.equal(t.isPinned(), false);
      expectKdError(() => t.to('cuda', { nonBlocking: true }), U, 'to(cuda, nonBlocking)');
      // queries never throw, whatever they are given
      assert.equal(c.isAvailable({}), false);
      assert.equal(c.emulator.isEnabled(5), false);
      assert.equal(c.deviceCount('x'), 0);
      assert.equal(typeof c.unavailableReason(5), 'string');
      // and neither do the switches in kd.backends, which are coded too
      expectKdError(() => { kd.backends.cuda.matmul.allowTF32 = 1; }, T, 'allowTF32');
    });
    it('deviceCount() is 0 when present', function () {
      if (typeof kd.cuda.deviceCount === 'function') assert.equal(kd.cuda.deviceCount(), 0);
    });
  });

  describe('with a GPU', function () {
    before(function () {
      if (!available) {
        console.log('      (skipped: no CUDA GPU here - kd.cuda.isAvailable() is false)');
        this.skip();
      }
    });

    for (const dtype of ALL_DTYPES) {
      it(`round-trips ${dtype} to('cuda') and back`, async function () {
        const src = dtype === 'bool' ? [true, false, true, true] : [1, 0, 3, dtype === 'uint8' ? 200 : -2];
        const c = kd.tensor(src, { dtype });
        const g = c.to('cuda');
        assert.match(g.device, /^cuda(:0)?$/);
        assert.equal(g.dtype, dtype);
        const back = g.to('cpu');
        assert.equal(back.device, 'cpu');
        assert.deepEqual(values(back), values(c));
        assert.deepEqual(Array.from(await g.dataAsync(), (x) => (typeof x === 'bigint' ? Number(x) : x)),
          Array.from(c.dataSync(), (x) => (typeof x === 'bigint' ? Number(x) : x)));
        // a non-contiguous view goes to the GPU too
        const v = kd.tensor([[1, 2], [3, 4]], { dtype: dtype === 'bool' ? 'float32' : dtype }).t();
        assert.deepEqual(values(v.to('cuda').to('cpu')), values(v));
      });
    }

    it('ops on CUDA match the CPU', function () {
      kd.manualSeed(0);
      const a = kd.randn([33, 17]);
      const b = kd.randn([17, 9]);
      const cpu = values(a.matmul(b).relu().sum(1));
      const gpu = values(a.to('cuda').matmul(b.to('cuda')).relu().sum(1).to('cpu'));
      cpu.forEach((x, i) => assert.ok(Math.abs(x - gpu[i]) < 1e-3 + 1e-3 * Math.abs(x), `element ${i}`));
    });

    it('mixing devices is KD_DEVICE_MISMATCH', function () {
      expectKdError(() => kd.ones([2]).add(kd.ones([2], { device: 'cuda' })), 'KD_DEVICE_MISMATCH');
    });

    it('manualSeed gives the same numbers on CPU and CUDA', function () {
      kd.manualSeed(77);
      const c = values(kd.randn([1000]));
      kd.manualSeed(77);
      const g = values(kd.randn([1000], { device: 'cuda' }).to('cpu'));
      c.forEach((x, i) => assert.ok(Math.abs(x - g[i]) < 1e-5, `element ${i}: ${x} vs ${g[i]}`));
    });
  });

  describe('runtime without a GPU: allocator, streams, events, pinned memory', function () {
    before(function () {
      if (available) {
        console.log('      (skipped: a CUDA GPU is available here)');
        this.skip();
      }
    });
    it('memory, stream and event functions throw KD_CUDA_UNAVAILABLE; isPinned() is false', async function () {
      for (const name of ['memoryAllocated', 'maxMemoryAllocated', 'memoryReserved', 'maxMemoryReserved', 'memoryStats',
        'memorySummary', 'memorySnapshot', 'emptyCache', 'resetPeakMemoryStats', 'currentStream']) {
        expectKdError(() => kd.cuda[name](), 'KD_CUDA_UNAVAILABLE', name);
      }
      expectKdError(() => kd.cuda.setPerProcessMemoryFraction(0.5), 'KD_CUDA_UNAVAILABLE');
      expectKdError(() => new kd.cuda.Stream(), 'KD_CUDA_UNAVAILABLE');
      expectKdError(() => new kd.cuda.Event().record(), 'KD_CUDA_UNAVAILABLE');
      expectKdError(() => kd.ones([2]).pinMemory(), 'KD_CUDA_UNAVAILABLE');
      assert.equal(kd.ones([2]).isPinned(), false);
      assert.equal(new kd.cuda.Event().query(), true, 'an unrecorded event is complete');
      await new kd.cuda.Event().synchronize();
      assert.deepEqual(Array.from(await kd.tensor([1.5, 2]).dataAsync()), [1.5, 2]);
      assert.deepEqual(await kd.tensor([[1.5, 2]]).array(), [[1.5, 2]]);
      assert.equal(kd.ones([2]).to('float64', { nonBlocking: true }).dtype, 'float64');
    });
  });

  describe('runtime with a GPU: allocator, streams, events, async data', function () {
    before(function () {
      if (!available) {
        console.log('      (skipped: no CUDA GPU here - kd.cuda.isAvailable() is false)');
        this.skip();
      }
    });
    const MiB = 1024 * 1024;

    it('device queries', function () {
      assert.ok(kd.cuda.deviceCount() >= 1);
      assert.equal(kd.cuda.currentDevice(), 0);
      const p = kd.cuda.getDeviceProperties(0);
      assert.equal(typeof p.name, 'string');
      assert.ok(p.totalMemory > 0);
      assert.equal(kd.cuda.getDeviceName(), p.name);
      kd.cuda.setDevice(0);
      expectKdError(() => kd.cuda.setDevice(kd.cuda.deviceCount()), 'KD_INVALID_ARGUMENT');
    });

    it('allocator stats move as expected; emptyCache releases', async function () {
      await kd.cuda.synchronize();
      collectGarbage(); // tensors earlier tests left to the GC are freed now, not within the counts
      kd.cuda.emptyCache();
      const a0 = kd.cuda.memoryAllocated();
      const t = kd.empty([1000], { device: 'cuda' }); // 4000 bytes -> a 4096-byte block of a 2 MiB small segment
      assert.equal(kd.cuda.memoryAllocated() - a0, 4096);
      assert.ok(kd.cuda.memoryReserved() >= 2 * MiB);
      const big = kd.empty([4 * MiB], { device: 'cuda' }); // 16 MiB: large pool
      const s = kd.cuda.memoryStats();
      assert.ok(s['allocated_bytes.large_pool.current'] >= 16 * MiB);
      assert.ok(kd.cuda.maxMemoryAllocated() >= kd.cuda.memoryAllocated());
      const reserved = kd.cuda.memoryReserved();
      big.dispose();
      t.dispose();
      assert.equal(kd.cuda.memoryAllocated(), a0);
      assert.equal(kd.cuda.memoryReserved(), reserved, 'freed memory stays cached');
      kd.cuda.emptyCache();
      assert.ok(kd.cuda.memoryReserved() < reserved);
      kd.cuda.resetPeakMemoryStats();
      assert.equal(kd.cuda.maxMemoryAllocated(), kd.cuda.memoryAllocated());
      assert.match(kd.cuda.memorySummary(), /Allocated memory/);
      const snap = kd.cuda.memorySnapshot();
      assert.ok(Array.isArray(snap));
      // reuse: the same size gets a cached block without a new cudaMalloc
      const x = kd.empty([1000], { device: 'cuda' });
      const n = kd.cuda.memoryStats().num_device_alloc;
      x.dispose();
      const y = kd.empty([1000], { device: 'cuda' });
      assert.equal(kd.cuda.memoryStats().num_device_alloc, n);
      y.dispose();
    });

    it('out of memory is KD_CUDA_OOM with a summary, and memory is usable after', function () {
      const total = kd.cuda.getDeviceProperties().totalMemory;
      const e = expectKdError(() => kd.empty([Math.ceil(total / 4) * 2], { device: 'cuda' }), 'KD_CUDA_OOM');
      assert.match(e.message, /CUDA out of memory\. Tried to allocate/);
      assert.match(e.message, /Memory summary/);
      assert.ok(kd.cuda.memoryStats().num_ooms >= 1);
      kd.cuda.setPerProcessMemoryFraction(0.01);
      expectKdError(() => kd.empty([Math.ceil(total / 50)], { device: 'cuda', dtype: 'uint8' }), 'KD_CUDA_OOM');
      kd.cuda.setPerProcessMemoryFraction(1);
      const ok = kd.ones([10], { device: 'cuda' });
      assert.deepEqual(values(ok.cpu()), new Array(10).fill(1));
    });

    it('dataAsync() and array() resolve with the values, for every dtype and views', async function () {
      for (const dtype of ALL_DTYPES) {
        const src = dtype === 'bool' ? [true, false, true, true] : [1, 0, 3, dtype === 'uint8' ? 200 : -2];
        const c = kd.tensor(src, { dtype });
        const g = c.to('cuda');
        assert.deepEqual(Array.from(await g.dataAsync()), Array.from(c.dataSync()), dtype);
        assert.deepEqual(await g.array(), c.arraySync(), dtype);
      }
      const v = kd.arange(12).to('cuda').reshape([3, 4]).t();
      assert.deepEqual(Array.from(await v.dataAsync()), Array.from(v.cpu().dataSync()));
      assert.deepEqual(Array.from(await kd.empty([0], { device: 'cuda' }).dataAsync()), []);
    });

    it('timers keep firing while a long kernel runs (no thread blocks on the GPU)', async function () {
      this.timeout(10000);
      const x = kd.ones([4], { device: 'cuda' });
      await kd.cuda.synchronize();
      let ticks = 0;
      const timer = setInterval(() => { ticks++; }, 10);
      let d, launchMs, totalMs;
      try { // a failure must not leave the timer holding the process open
        const t0 = Date.now();
        kd.cuda._spin(200);
        const y = x.clone(); // queued behind the spin kernel
        const p = y.dataAsync();
        launchMs = Date.now() - t0;
        d = await p;
        totalMs = Date.now() - t0;
      } finally {
        clearInterval(timer);
      }
      assert.deepEqual(Array.from(d), [1, 1, 1, 1]);
      assert.ok(launchMs < 100, `launching returned at once (${launchMs} ms)`);
      assert.ok(totalMs >= 150, `the kernel ran ~200 ms (${totalMs} ms)`);
      assert.ok(ticks >= 5, `setInterval ticked ${ticks} times while the kernel ran`);
    });

    it('synchronize(), stream.synchronize() and event.synchronize() resolve without blocking', async function () {
      this.timeout(10000);
      let ticks = 0;
      const timer = setInterval(() => { ticks++; }, 10);
      try { // a failure must not leave the timer holding the process open
        kd.cuda._spin(150);
        await kd.cuda.synchronize();
        const s = new kd.cuda.Stream();
        kd.cuda.withStream(s, () => kd.cuda._spin(100));
        assert.equal(s.query(), false);
        await s.synchronize();
        assert.equal(s.query(), true);
        const e = new kd.cuda.Event();
        kd.cuda.withStream(s, () => { kd.cuda._spin(100); e.record(); });
        await e.synchronize();
        assert.equal(e.query(), true);
      } finally {
        clearInterval(timer);
      }
      assert.ok(ticks >= 10, `timers ticked ${ticks} times`);
    });

    it('streams and events order work; withStream scopes the current stream; elapsedTime', async function () {
      const s = new kd.cuda.Stream();
      const def = kd.cuda.currentStream();
      assert.ok(def.equals(kd.cuda.defaultStream()));
      kd.cuda.withStream(s, () => assert.ok(kd.cuda.currentStream().equals(s)));
      assert.ok(kd.cuda.currentStream().equals(def));
      await kd.cuda.withStream(s, async () => { await null; assert.ok(kd.cuda.currentStream().equals(s)); });
      assert.ok(kd.cuda.currentStream().equals(def));
      // producer on s, consumer on the default stream after waitEvent
      const a = kd.zeros([1 << 20], { device: 'cuda' });
      const done = new kd.cuda.Event();
      kd.cuda.withStream(s, () => { kd.cuda._spin(50); a.fill_(3); done.record(); });
      kd.cuda.currentStream().waitEvent(done);
      a.recordStream(s);
      const got = await a.dataAsync();
      assert.equal(got[0], 3);
      assert.equal(got[got.length - 1], 3);
      const start = new kd.cuda.Event({ enableTiming: true });
      const end = new kd.cuda.Event({ enableTiming: true });
      start.record();
      kd.cuda._spin(20);
      end.record();
      await end.synchronize();
      const ms = start.elapsedTime(end);
      assert.ok(ms > 10 && ms < 1000, `elapsedTime ${ms} ms`);
    });

    it('recordStream delays reuse of a freed block until the other stream is done', async function () {
      const s = new kd.cuda.Stream();
      const t = kd.empty([1000], { device: 'cuda' });
      kd.cuda.withStream(s, () => kd.cuda._spin(100));
      t.recordStream(s);
      const snapBefore = kd.cuda.memorySnapshot();
      t.dispose();
      const pending = kd.cuda.memorySnapshot().flatMap((g) => g.blocks).filter((b) => b.state === 'active_pending_free');
      assert.ok(pending.length >= 1, 'the block waits for stream s');
      assert.ok(snapBefore.length >= 1);
      await s.synchronize();
      const u = kd.empty([1000], { device: 'cuda' }); // processes events
      u.dispose();
      const still = kd.cuda.memorySnapshot().flatMap((g) => g.blocks).filter((b) => b.state === 'active_pending_free');
      assert.equal(still.length, 0);
    });

    it('pinMemory, isPinned and non-blocking copies from pinned memory', async function () {
      const c = kd.arange(1000, { dtype: 'float32' });
      assert.equal(c.isPinned(), false);
      const p = c.pinMemory();
      assert.equal(p.isPinned(), true);
      assert.equal(p.pinMemory().isPinned(), true);
      assert.deepEqual(Array.from(p.dataSync()), Array.from(c.dataSync()));
      const g = p.to('cuda', { nonBlocking: true });
      assert.deepEqual(Array.from(await g.dataAsync()), Array.from(c.dataSync()));
      const g2 = p.to({ device: 'cuda', nonBlocking: true, dtype: 'float64' });
      assert.equal(g2.dtype, 'float64');
      assert.deepEqual(Array.from(await g2.dataAsync()), Array.from(c.dataSync()));
      // dataAsync() of the pinned source while a non-blocking copy still reads it: a copy of it at
      // once (a non-blocking copy only reads host memory; Note [dataAsync() of a CPU tensor])
      const big = kd.arange(1 << 20, { dtype: 'float32' }).pinMemory();
      const g3 = big.to('cuda', { nonBlocking: true });
      const [host, dev] = await Promise.all([big.dataAsync(), g3.dataAsync()]);
      assert.equal(host[(1 << 20) - 1], (1 << 20) - 1);
      assert.deepEqual(host, dev);
      big.dispose();
      p.dispose();
    });

    it('pinMemory of tensors small enough to live in their storage struct (Note [Small storages])', function () {
      for (const n of [1, 16, 17]) { // 4, 64 and 68 bytes: inline, the largest inline, and not
        const c = kd.arange(n, { dtype: 'float32' });
        assert.equal(c.isPinned(), false);
        const p = c.pinMemory();
        assert.equal(p.isPinned(), true, `${n} elements`);
        assert.deepEqual(Array.from(p.dataSync()), Array.from(c.dataSync()));
        kd.dispose([c, p]);
      }
    });
  });
});
