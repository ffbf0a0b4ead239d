// profiler_cuda.test.js - kd.profiler with the 'cuda' activity (src/profiler/profiler_cuda.c):
// each op on a CUDA device gets its GPU time from events recorded on the current stream around it,
// and the kernels it launched by name (the CUDA library's launch observer), read once the profile
// stops; the CUDA columns of the table, totals and self times over nested ops, kernel rows in the
// Chrome trace, and no device synchronisation per op. Skipped when kd.cuda.isAvailable() is false (run on
// the emulated GPU by test/emulated-gpu.mocharc.json, whose event times are host clock readings of
// when the emulated stream ran the work, not GPU timings).
'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { kd, assert } = require('./helpers');

const available = kd.cuda.isAvailable();
const F = kd.nn.functional;

(available ? describe : describe.skip)('profiler on CUDA', () => {
  it('times each CUDA op on its stream: cudaUs, self <= total, totals over children', async () => {
    const x = kd.randn(64, 128).to('cuda');
    const w = kd.randn(32, 128).to('cuda');
    await kd.cuda.synchronize();
    const prof = kd.profiler.profile({ activities: ['cpu', 'cuda'] }, () =>
      kd.profiler.recordFunction('forward', () => F.relu(F.linear(x, w)).sum()));
    const events = prof.events();
    const ops = events.filter((e) => e.kind === 'op');
    assert.ok(ops.length >= 4, ops.map((e) => e.name).join());
    for (const e of ops) {
      assert.strictEqual(typeof e.cudaUs, 'number', `${e.name} has a CUDA time`);
      assert.ok(e.cudaUs >= 0);
    }
    for (const e of events) {
      assert.ok(e.selfCudaTimeTotal <= e.cudaTimeTotal + 1e-9, e.name);
      const children = e.children.reduce((s, c) => s + events[c].cudaTimeTotal, 0);
      if (e.kind === 'user') assert.ok(Math.abs(e.cudaTimeTotal - children) < 1e-6, 'a range sums its children');
    }
    const mm = events.find((e) => e.name === 'aten::mm');
    assert.ok(mm && mm.cudaUs > 0, 'the matmul took GPU time');
    const [fwd] = events.filter((e) => e.name === 'forward');
    assert.strictEqual(fwd.cudaUs, null);
    assert.ok(fwd.cudaTimeTotal >= mm.cudaTimeTotal);
    const rows = prof.keyAverages();
    const total = rows.reduce((s, r) => s + r.selfCudaTimeTotal, 0);
    assert.ok(total > 0);
    const text = rows.table({ sortBy: 'cuda_time_total', rowLimit: 3 });
    assert.match(text, /Self CUDA {2,}Self CUDA % {2,}CUDA total {2,}CUDA time avg {2,}# of Calls/);
    assert.match(text.split('\n')[3], /^\s+forward\s/); // the range holds every op's GPU time
  });

  it('lists the kernels each op launched, by name, timed, and puts them in the Chrome trace', () => {
    const x = kd.randn(256).to('cuda');
    const prof = kd.profiler.profile({ activities: ['cuda'] }, () => x.relu().add(x).sum());
    const events = prof.events();
    for (const name of ['aten::relu', 'aten::add', 'aten::sum']) {
      const e = events.find((v) => v.name === name);
      assert.ok(e.kernels.length >= 1, `${name} launched a kernel`);
      for (const k of e.kernels) {
        assert.match(k.name, /^[A-Za-z_][\w:]*(<.*>)?$/, k.name);
        assert.strictEqual(k.device, 0);
        assert.ok(k.durationUs >= 0 && k.startUs >= 0, `${k.name} timed`);
      }
    }
    assert.notStrictEqual(events.find((v) => v.name === 'aten::relu').kernels[0].name,
      events.find((v) => v.name === 'aten::sum').kernels[0].name);
    const file = path.join(os.tmpdir(), `kd-cuda-trace-${process.pid}.json`);
    try {
      prof.exportChromeTrace(file);
      const trace = JSON.parse(fs.readFileSync(file, 'utf8')).traceEvents;
      const kernels = trace.filter((e) => e.cat === 'kernel');
      assert.strictEqual(kernels.length, events.reduce((n, e) => n + e.kernels.length, 0));
      for (const k of kernels) {
        assert.strictEqual(k.ph, 'X');
        assert.strictEqual(k.pid, 'GPU 0');
        assert.match(k.tid, /^stream \d+$/);
        assert.ok(events[k.args['External id']].kernels.some((v) => v.name === k.name));
      }
      assert.ok(trace.some((e) => e.ph === 'M' && e.pid === 'GPU 0'));
    } finally {
      fs.rmSync(file, { force: true });
    }
    // no profile: no kernel is recorded anywhere
    const quiet = kd.profiler.profile({ activities: ['cpu'] }, () => x.relu());
    assert.deepStrictEqual(quiet.events()[0].kernels, []);
  });

  it('only the cpu activity records no CUDA times', () => {
    const x = kd.ones(16).to('cuda');
    const prof = kd.profiler.profile({ activities: ['cpu'] }, () => x.add(x));
    assert.strictEqual(prof.events()[0].cudaUs, null);
    assert.strictEqual(prof.events()[0].cudaTimeTotal, 0);
  });

  it('does not synchronise the device per op: the stop waits on events', function () {
    if (!kd.cuda.emulator.isEnabled()) this.skip(); // the counters exist on the emulated GPU only
    const stats = kd.cuda.emulator.stats;
    const x = kd.ones(1024).to('cuda');
    const before = stats().syncs;
    const prof = kd.profiler.profile({ activities: ['cuda'] }, () => {
      for (let i = 0; i < 20; i++) x.add(x).mul(2);
    });
    assert.strictEqual(prof.events().filter((e) => e.cudaUs !== null).length, 40);
    assert.strictEqual(stats().syncs - before, 0);
  });
});
