// profiler.test.js - kd.profiler (lib/profiler/, src/profiler/) on the CPU: op names and nesting
// (linear -> matmul -> mm), autograd nodes under backward(), counts, input shapes, self <= total,
// key averages and PyTorch's table, the Chrome trace file, user ranges, async profiles, and that
// a throwing fn, a failing op or an abandoned range leave no profile running; profiles are per thread.
'use strict';

const fs = require('node:fs');
const { Worker } = require('node:worker_threads');
const os = require('node:os');
const path = require('node:path');
const { kd, assert, expectKdError, collectGarbage } = require('./helpers');

const F = kd.nn.functional;

function byName(prof, name) {
  return prof.events().filter((e) => e.name === name);
}

function childNames(prof, e) {
  return e.children.map((c) => prof.events()[c].name);
}

function expectError(fn, code, message) {
  assert.match(expectKdError(fn, code, String(message)).message, message);
}

function assertNoProfileRunning() {
  // a new profile can start: the previous one stopped
  const p = kd.profiler.profile().start();
  p.stop();
}

describe('profiler', () => {
  afterEach(assertNoProfileRunning);

  it('records ops with PyTorch names and composite ops as parents: linear -> matmul -> mm', () => {
    const x = kd.randn(4, 3);
    const w = kd.randn(5, 3);
    const prof = kd.profiler.profile({ activities: ['cpu'] }, () => F.linear(x, w));
    const [linear] = byName(prof, 'aten::linear');
    assert.ok(linear, 'aten::linear recorded');
    assert.strictEqual(linear.parent, -1);
    assert.deepStrictEqual(childNames(prof, linear).filter((n) => n !== 'aten::t'), ['aten::matmul']);
    const matmul = prof.events()[linear.children.find((c) => prof.events()[c].name === 'aten::matmul')];
    assert.ok(childNames(prof, matmul).includes('aten::mm'), `matmul's children: ${childNames(prof, matmul)}`);
    for (const e of prof.events()) assert.strictEqual(e.kind, 'op');
    // camelCase op names read as PyTorch's
    const lsm = kd.profiler.profile({}, () => F.logSoftmax(x, 1));
    assert.ok(lsm.events().some((e) => e.name === 'aten::log_softmax'), lsm.events().map((e) => e.name).join());
    // overloads drop their suffix; ops registered with a namespace keep their name
    const { opDisplayName } = require('../lib/profiler/events');
    assert.deepStrictEqual(['max.dim', 'add_', 'mylib::scale'].map(opDisplayName), ['aten::max', 'aten::add_', 'mylib::scale']);
  });

  it('counts calls, and self time <= total time for every event and row', () => {
    const a = kd.ones(8);
    const prof = kd.profiler.profile({}, () => {
      for (let i = 0; i < 3; i++) a.add(a).mul(2);
    });
    const rows = prof.keyAverages();
    const add = rows.find((r) => r.key === 'aten::add');
    const mul = rows.find((r) => r.key === 'aten::mul');
    assert.strictEqual(add.count, 3);
    assert.strictEqual(mul.count, 3);
    for (const e of prof.events()) {
      assert.ok(e.selfCpuTimeTotal <= e.cpuTimeTotal + 1e-9, e.name);
      assert.ok(e.startUs <= e.endUs);
      const childSum = e.children.reduce((s, c) => s + prof.events()[c].cpuTimeTotal, 0);
      assert.ok(childSum <= e.cpuTimeTotal + 1e-6, `${e.name}: children ${childSum} > total ${e.cpuTimeTotal}`);
    }
    for (const r of rows) {
      assert.ok(r.selfCpuTimeTotal <= r.cpuTimeTotal + 1e-9);
      assert.ok(Math.abs(r.cpuTime - r.cpuTimeTotal / r.count) < 1e-9);
    }
  });

  it('records input shapes with recordShapes, [] for non-tensor arguments, and groups by them', () => {
    const a = kd.ones(2, 3);
    const b = kd.ones(4);
    const prof = kd.profiler.profile({ recordShapes: true }, () => {
      a.add(a);
      a.add(a);
      b.add(b, { alpha: 2 });
    });
    const adds = byName(prof, 'aten::add');
    assert.deepStrictEqual(adds.map((e) => e.inputShapes), [[[2, 3], [2, 3], []], [[2, 3], [2, 3], []], [[4], [4], []]]);
    const grouped = prof.keyAverages({ groupByInputShape: true }).filter((r) => r.key === 'aten::add');
    assert.deepStrictEqual(grouped.map((r) => [r.count, r.inputShapes]), [[2, [[2, 3], [2, 3], []]], [1, [[4], [4], []]]]);
    assert.strictEqual(prof.keyAverages().filter((r) => r.key === 'aten::add').length, 1);
    const plain = kd.profiler.profile({}, () => a.add(a));
    assert.strictEqual(plain.events()[0].inputShapes, null);
  });

  it('records autograd nodes under PyTorch names when backward() runs inside the profile, with their ops as children', () => {
    const a = kd.randn(3).requiresGrad_();
    const b = kd.randn(3).requiresGrad_();
    const prof = kd.profiler.profile({}, () => a.mul(b).add(a).sum().backward());
    const names = prof.events().map((e) => e.name);
    for (const n of ['SumBackward0', 'AddBackward0', 'MulBackward0', 'torch::autograd::AccumulateGrad'])
      assert.ok(names.includes(`autograd::engine::evaluate_function: ${n}`), `${n} in ${names}`);
    const [mulNode] = byName(prof, 'autograd::engine::evaluate_function: MulBackward0');
    assert.strictEqual(mulNode.kind, 'backward');
    assert.ok(childNames(prof, mulNode).includes('aten::mul'), `MulBackward0's children: ${childNames(prof, mulNode)}`);
    assert.strictEqual(byName(prof, 'autograd::engine::evaluate_function: torch::autograd::AccumulateGrad').length, 2);
  });

  it("prints PyTorch's table: columns, sortBy, rowLimit, the Input Shapes column and the footer", () => {
    const a = kd.ones(2, 2);
    const prof = kd.profiler.profile({ recordShapes: true }, () => {
      for (let i = 0; i < 4; i++) a.add(a);
      a.mul(a);
    });
    const text = prof.keyAverages().table({ sortBy: 'count', rowLimit: 1 });
    const lines = text.trimEnd().split('\n');
    assert.match(lines[0], /^-+( {2}-+)+ {2}$/);
    assert.deepStrictEqual(lines[1].trim().split(/\s{2,}/),
      ['Name', 'Self CPU %', 'Self CPU', 'CPU total %', 'CPU total', 'CPU time avg', '# of Calls']);
    assert.strictEqual(lines.length, 6, text); // sep, header, sep, one row, sep, footer
    assert.match(lines[3], /^\s*aten::add\s+\d+\.\d\d%\s+\d+\.\d{3}(us|ms|s)\s+.*\s4 {2}$/);
    assert.match(lines[5], /^Self CPU time total: \d+\.\d{3}(us|ms|s)$/);
    const grouped = prof.keyAverages({ groupByInputShape: true }).table({ sortBy: 'cpu_time_total' });
    assert.match(grouped, /Input Shapes/);
    assert.match(grouped, /\[\[2, 2\], \[2, 2\], \[\]\]/);
    const cuda = kd.profiler.profile({ activities: ['cpu', 'cuda'] }, () => a.add(a)).table({ sortBy: 'cuda_time_total' });
    assert.match(cuda, /Self CUDA {2,}Self CUDA % {2,}CUDA total {2,}CUDA time avg/);
    assert.match(cuda, /Self CUDA time total: /);
    expectError(() => prof.table({ sortBy: 'bogus' }), 'KD_INVALID_ARGUMENT', /unknown sortBy 'bogus'/);
  });

  it('exports a Chrome trace whose events nest like the ops', () => {
    const x = kd.randn(4, 3);
    const w = kd.randn(5, 3);
    const prof = kd.profiler.profile({ recordShapes: true }, () => kd.profiler.recordFunction('forward', () => F.linear(x, w)));
    const file = path.join(os.tmpdir(), `kd-trace-${process.pid}.json`);
    try {
      assert.strictEqual(prof.exportChromeTrace(file), file);
      const trace = JSON.parse(fs.readFileSync(file, 'utf8'));
      assert.ok(Array.isArray(trace.traceEvents));
      const xs = trace.traceEvents.filter((e) => e.ph === 'X');
      assert.strictEqual(xs.length, prof.events().length);
      for (const e of xs) {
        assert.strictEqual(typeof e.ts, 'number');
        assert.ok(e.dur >= 0);
        assert.strictEqual(e.pid, process.pid);
        assert.ok(Number.isInteger(e.tid));
        assert.ok(['cpu_op', 'user_annotation'].includes(e.cat), e.cat);
      }
      const get = (name) => xs.find((e) => e.name === name);
      const [fwd, lin, mm] = ['forward', 'aten::linear', 'aten::mm'].map(get);
      assert.strictEqual(fwd.cat, 'user_annotation');
      assert.strictEqual(lin.cat, 'cpu_op');
      assert.deepStrictEqual(lin.args['Input Dims'], [[4, 3], [5, 3], []]);
      for (const [outer, inner] of [[fwd, lin], [lin, mm]]) {
        assert.ok(inner.ts >= outer.ts && inner.ts + inner.dur <= outer.ts + outer.dur + 1e-6, `${inner.name} inside ${outer.name}`);
      }
    } finally {
      fs.rmSync(file, { force: true });
    }
  });

  it('a trace that cannot be written is KD_IO_ERROR naming the file; a path that is not one is KD_INVALID_TYPE', () => {
    const prof = kd.profiler.profile({}, () => kd.ones([2]).add(1));
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-trace-'));
    try {
      const missing = path.join(dir, 'no-such-dir', 't.json');
      const e = expectKdError(() => prof.exportChromeTrace(missing), 'KD_IO_ERROR', 'exportChromeTrace(): ENOENT');
      assert.ok(e instanceof kd.KindlingError);
      assert.match(e.message, /^exportChromeTrace\(\): ENOENT: no such file or directory, open '.*t\.json'$/);
      assert.strictEqual(e.cause.code, 'ENOENT');
      assert.strictEqual(e.path, missing);
      expectError(() => prof.exportChromeTrace(dir), 'KD_IO_ERROR', /EISDIR/);
      // a number would be written to as a file descriptor
      expectError(() => prof.exportChromeTrace(1), 'KD_INVALID_TYPE', /path must be a string, URL or Buffer, got number/);
      expectError(() => prof.exportChromeTrace(), 'KD_INVALID_TYPE', /got undefined/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('recordFunction marks nested user ranges, sync and async, and runs fn without a profile', async () => {
    const a = kd.ones(2);
    assert.strictEqual(kd.profiler.recordFunction('outside', () => 7), 7);
    const prof = await kd.profiler.profile({}, async () => {
      const r = await kd.profiler.recordFunction('outer', async () => {
        kd.profiler.recordFunction('inner', () => a.add(a));
        await new Promise((res) => setImmediate(res));
        a.mul(a);
        return 5;
      });
      assert.strictEqual(r, 5);
      const range = kd.profiler.recordFunction('pair');
      a.sub(a);
      range.end();
      range.end(); // a second end() is a no-op
    });
    const [outer] = byName(prof, 'outer');
    const [inner] = byName(prof, 'inner');
    const [pair] = byName(prof, 'pair');
    assert.strictEqual(outer.kind, 'user');
    assert.strictEqual(inner.parent, outer.id);
    assert.deepStrictEqual(childNames(prof, inner), ['aten::add']);
    assert.ok(childNames(prof, outer).includes('aten::mul'));
    assert.deepStrictEqual(childNames(prof, pair), ['aten::sub']);
    assert.strictEqual(prof.keyAverages().find((r) => r.key === 'outer').count, 1);
    assert.match(prof.table(), /outer/);
  });

  it('range names are kept whole, however long; a name holding a NUL is refused', () => {
    const long = `range-${'x'.repeat(3000)}-end`;
    const prof = kd.profiler.profile({}, () => kd.profiler.recordFunction(long, () => 1));
    assert.strictEqual(byName(prof, long).length, 1);
    assert.throws(() => kd.profiler.recordFunction('a\0b', () => 1), (e) => e.code === 'KD_INVALID_ARGUMENT' && /NUL/.test(e.message));
  });

  it('an async profile covers until its Promise settles, and no further', async () => {
    const a = kd.ones(2);
    const pending = kd.profiler.profile({}, async () => {
      a.add(a);
      await new Promise((res) => setTimeout(res, 5));
      a.mul(a);
    });
    assert.ok(pending instanceof Promise);
    const prof = await pending;
    a.sub(a);
    assert.deepStrictEqual(prof.events().map((e) => e.name), ['aten::add', 'aten::mul']);
  });

  it('the start()/stop() form, and its misuse', () => {
    const a = kd.ones(2);
    const prof = kd.profiler.profile({ recordShapes: true });
    expectError(() => prof.events(), 'KD_INVALID_ARGUMENT', /once the profile has stopped/);
    expectError(() => prof.stop(), 'KD_INVALID_ARGUMENT', /without a running start/);
    prof.start();
    a.add(a);
    const second = kd.profiler.profile();
    expectError(() => second.start(), 'KD_INVALID_ARGUMENT', /already enabled on this thread/);
    prof.stop();
    a.mul(a);
    assert.deepStrictEqual(prof.events().map((e) => e.name), ['aten::add']);
    expectError(() => prof.start(), 'KD_INVALID_ARGUMENT', /once per profile/);
    expectError(() => kd.profiler.profile({ activities: ['tpu'] }), 'KD_INVALID_ARGUMENT', /unknown activity 'tpu'/);
  });

  it('an error thrown inside fn, or a rejected Promise, still stops the profiler', async () => {
    assert.throws(() => kd.profiler.profile({}, () => { throw new Error('boom'); }), /boom/);
    assertNoProfileRunning();
    await assert.rejects(kd.profiler.profile({}, async () => { throw new Error('later'); }), /later/);
    assertNoProfileRunning();
  });

  it('a failing op is recorded and closed; later ops are not its children', () => {
    const a = kd.ones(2);
    const b = kd.ones(3);
    const prof = kd.profiler.profile({}, () => {
      assert.throws(() => a.add(b), /size of tensor a/);
      a.mul(a);
    });
    const [add] = byName(prof, 'aten::add');
    const [mul] = byName(prof, 'aten::mul');
    assert.strictEqual(add.parent, -1);
    assert.strictEqual(mul.parent, -1);
    assert.ok(add.endUs <= mul.startUs);
  });

  it('a range left open ends with the profile, and ending it later touches no other profile', () => {
    const a = kd.ones(2);
    let range;
    const first = kd.profiler.profile({}, () => { range = kd.profiler.recordFunction('open'); a.add(a); });
    const [open] = byName(first, 'open');
    assert.ok(open.endUs >= open.startUs);
    const second = kd.profiler.profile({}, () => {
      const r = kd.profiler.recordFunction('mine');
      range.end(); // belongs to the first profile: ignored
      a.mul(a);
      r.end();
    });
    const [mine] = byName(second, 'mine');
    assert.deepStrictEqual(childNames(second, mine), ['aten::mul']);
  });

  it('profiles are per thread: a worker profiles its own ops while the main thread profiles its own', async () => {
    const src = `
      const { parentPort, workerData } = require('node:worker_threads');
      const kd = require(workerData.root);
      const a = kd.ones(4);
      parentPort.once('message', () => {
        const prof = kd.profiler.profile({}, () => { for (let i = 0; i < 5; i++) a.mul(a); });
        parentPort.postMessage(prof.events().map((e) => e.name));
      });
      parentPort.postMessage('ready');
    `;
    const w = new Worker(src, { eval: true, workerData: { root: path.join(__dirname, '..') } });
    try {
      const messages = [];
      let wake = null;
      w.on('message', (m) => { messages.push(m); if (wake) wake(); });
      const next = () => new Promise((res) => { if (messages.length) res(messages.shift()); else wake = () => { wake = null; res(messages.shift()); }; });
      assert.strictEqual(await next(), 'ready');
      const a = kd.ones(4);
      const prof = await kd.profiler.profile({}, async () => {
        w.postMessage('go');
        const names = await next();
        assert.deepStrictEqual(names, Array(5).fill('aten::mul'));
        a.add(a);
      });
      assert.deepStrictEqual(prof.events().map((e) => e.name), ['aten::add']);
    } finally {
      await w.terminate();
    }
  });

  it('withStack records the JS stack of ops called from JS, and groupByStackN splits rows by it', () => {
    const x = kd.randn(4, 3);
    const w = kd.randn(5, 3);
    function callerA() { return x.add(x); }
    function callerB() { return x.add(x); }
    const prof = kd.profiler.profile({ withStack: true }, () => { callerA(); callerB(); F.linear(x, w); });
    const adds = byName(prof, 'aten::add');
    assert.match(adds[0].stack[0], /callerA .*profiler\.test\.js:\d+:\d+/);
    assert.match(adds[1].stack[0], /callerB /);
    for (const e of prof.events()) {
      if (e.parent >= 0) assert.strictEqual(e.stack, null, `${e.name} inside a composite has no stack`);
      else assert.ok(e.stack.every((f) => !f.includes(path.join(__dirname, '..', 'lib'))), 'no kindling frames');
    }
    const rows = prof.keyAverages({ groupByStackN: 1 }).filter((r) => r.key === 'aten::add');
    assert.strictEqual(rows.length, 2);
    assert.strictEqual(prof.keyAverages().filter((r) => r.key === 'aten::add').length, 1);
    const text = prof.table({ groupByStackN: 2 });
    assert.match(text, /Source Location/);
    assert.match(text, /callerA /);
    const file = path.join(os.tmpdir(), `kd-stack-trace-${process.pid}.json`);
    try {
      prof.exportChromeTrace(file);
      const ev = JSON.parse(fs.readFileSync(file, 'utf8')).traceEvents.find((e) => e.name === 'aten::add');
      assert.match(ev.args['Call stack'], /callerA/);
    } finally {
      fs.rmSync(file, { force: true });
    }
    assert.strictEqual(kd.profiler.profile({}, () => x.add(x)).events()[0].stack, null);
  });

  it('an op defined with kd.library shows under its own name, with the ops its implementation calls as children, and its backward node', () => {
    kd.library.define('proftest::muladd(Tensor x, Tensor w, float alpha) -> Tensor');
    kd.library.impl('proftest::muladd', 'cpu', (x, w, alpha) => x.mul(w).add(alpha));
    kd.library.registerAutograd('proftest::muladd', (ctx, g) => [g.mul(ctx.savedTensors[1]), g.mul(ctx.savedTensors[0])],
      { setupContext: (ctx, [x, w]) => ctx.saveForBackward(x, w) });
    const x = kd.randn([3]).requiresGrad_();
    const w = kd.randn([3]);
    const prof = kd.profiler.profile({ recordShapes: true }, () => kd.ops.proftest.muladd(x, w, 2).sum().backward());
    const [op] = byName(prof, 'proftest::muladd');
    assert.ok(op, prof.events().map((e) => e.name).join());
    assert.strictEqual(op.parent, -1);
    assert.deepStrictEqual(op.inputShapes.slice(0, 2), [[3], [3]]);
    assert.deepStrictEqual(childNames(prof, op).filter((n) => n === 'aten::mul' || n === 'aten::add'), ['aten::mul', 'aten::add']);
    const nodes = prof.events().filter((e) => e.name.startsWith('autograd::engine::evaluate_function: ')).map((e) => e.name);
    assert.ok(nodes.some((n) => /proftest::muladd/.test(n)), nodes.join());
    assert.ok(prof.table().includes('proftest::muladd'));
  });

  it('holds no tensors: the memory in use is the same after a profile', () => {
    const a = kd.ones(64);
    const before = collectGarbage();
    const prof = kd.profiler.profile({ recordShapes: true }, () => { for (let i = 0; i < 20; i++) a.add(a).dispose(); });
    assert.strictEqual(prof.events().length, 20);
    const after = kd.memory();
    assert.strictEqual(after.liveTensors, before.liveTensors);
    assert.strictEqual(after.hostBytesInUse, before.hostBytesInUse);
  });
});
