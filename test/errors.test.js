// errors.test.js - every kind of bad input gives a JS error of the right class with a stable
// code and a PyTorch-worded message, and the process lives on: shapes, dtypes, devices,
// out-of-range dims and indices, disposed tensors, non-numbers, forged handles and misuse of
// the Tensor prototype (the forged-handle battery runs in a child process so that a crash
// shows up as a failed test rather than a dead test runner).
'use strict';

const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { kd, assert, expectKdError } = require('./helpers');

const a23 = () => kd.ones([2, 3]);

describe('errors: classes and codes', function () {
  it('the ErrorCode type of the TypeScript declarations lists every code the C core and lib/ raise', function () {
    const fs = require('node:fs');
    const root = path.join(__dirname, '..');
    const decl = fs.readFileSync(path.join(root, 'types', 'index.d.ts'), 'utf8');
    const type = /export type ErrorCode =([^;]*);/.exec(decl)[1];
    const listed = new Set(type.match(/KD_[A-Z_]+/g));
    const raised = new Set(fs.readFileSync(path.join(root, 'src', 'core', 'status.c'), 'utf8').match(/"KD_[A-Z_]+"/g).map((c) => c.slice(1, -1)));
    raised.delete('KD_OK');
    for (const f of fs.readdirSync(path.join(root, 'lib'), { recursive: true }).filter((f) => f.endsWith('.js'))) {
      const src = fs.readFileSync(path.join(root, 'lib', f), 'utf8');
      // codes given to error constructors (warnings carry codes of their own: { code: ... } in emitWarning)
      for (const m of src.matchAll(/Error\([^;]*?'(KD_[A-Z_]+)'/g)) raised.add(m[1]);
    }
    const missing = [...raised].filter((c) => !listed.has(c));
    assert.deepEqual(missing, [], `codes missing from ErrorCode in types/index.d.ts: ${missing}`);
  });

  it('error classes are exported and are Error subclasses', function () {
    assert.ok(new kd.KindlingError('x', 'KD_SHAPE_MISMATCH') instanceof Error);
    assert.ok(new kd.KindlingTypeError('x') instanceof TypeError);
    assert.ok(new kd.KindlingRangeError('x') instanceof RangeError);
  });

  it('one `instanceof kd.KindlingError` catches every kindling error, TypeError and RangeError kinds included', function () {
    const thrown = [
      expectKdError(() => kd.ones(2).add('x'), 'KD_INVALID_TYPE'),
      expectKdError(() => a23().transpose(0, 2), 'KD_INDEX_OUT_OF_RANGE'),
      expectKdError(() => a23().size(5), 'KD_INDEX_OUT_OF_RANGE'),
      expectKdError(() => kd.ones(2).add(kd.ones(3)), 'KD_SHAPE_MISMATCH'),
    ];
    const made = [new kd.KindlingError('m', 'KD_SHAPE_MISMATCH'), new kd.KindlingTypeError('m'), new kd.KindlingRangeError('m')];
    for (const e of [...thrown, ...made]) {
      assert.ok(e instanceof kd.KindlingError, `${e.name} instanceof KindlingError`);
      assert.ok(e instanceof Error);
      assert.equal(typeof e.code, 'string');
      assert.match(e.stack, new RegExp(`^${e.name}: `));
    }
    const [typeErr, rangeErr] = thrown;
    assert.ok(typeErr instanceof TypeError && typeErr instanceof kd.KindlingTypeError);
    assert.equal(typeErr.name, 'KindlingTypeError');
    assert.ok(rangeErr instanceof RangeError && rangeErr instanceof kd.KindlingRangeError);
    assert.equal(rangeErr.name, 'KindlingRangeError');
    assert.equal(made[1].code, 'KD_INVALID_TYPE');
    assert.equal(made[2].code, 'KD_INDEX_OUT_OF_RANGE');
    // the stack starts where the user called kindling, not inside the error helpers
    assert.doesNotMatch(typeErr.stack.split('\n')[1], /errors\.js/);
    // not everything is a kindling error, and the classes stay distinct
    assert.ok(!(new TypeError('x') instanceof kd.KindlingError));
    assert.ok(!(new RangeError('x') instanceof kd.KindlingError));
    assert.ok(!(null instanceof kd.KindlingError) && !('x' instanceof kd.KindlingError));
    assert.ok(!(made[0] instanceof kd.KindlingTypeError));
    assert.ok(!(made[1] instanceof kd.KindlingRangeError) && !(made[2] instanceof kd.KindlingTypeError));
    // a user's subclass keeps ordinary instanceof semantics
    class MyError extends kd.KindlingError {}
    const mine = new MyError('mine', 'KD_INVALID_ARGUMENT');
    assert.ok(mine instanceof MyError && mine instanceof kd.KindlingError);
    assert.ok(!(made[0] instanceof MyError) && !(made[1] instanceof MyError));
  });

  it('shape mismatch: PyTorch wording', function () {
    const e = expectKdError(() => kd.ones([2, 3]).add(kd.ones([4])), 'KD_SHAPE_MISMATCH');
    assert.ok(e instanceof kd.KindlingError);
    assert.match(e.message, /The size of tensor a \(3\) must match the size of tensor b \(4\) at non-singleton dimension 1/);
    const m = expectKdError(() => kd.ones([2, 3]).mm(kd.ones([4, 5])), 'KD_SHAPE_MISMATCH');
    assert.match(m.message, /mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)/);
    const r = expectKdError(() => a23().reshape([4, 4]), 'KD_SHAPE_MISMATCH');
    assert.match(r.message, /shape '\[4, 4\]' is invalid for input of size 6/);
    const x = expectKdError(() => a23().expand([2, 4]), 'KD_SHAPE_MISMATCH');
    assert.match(x.message, /The expanded size of the tensor \(4\) must match the existing size \(3\) at non-singleton dimension 1/);
    const o = expectKdError(() => kd.ones([3]).add_(kd.ones([2, 3])), 'KD_SHAPE_MISMATCH');
    assert.match(o.message, /output with shape \[3\] doesn't match the broadcast shape \[2, 3\]/);
  });

  it('dim and index out of range: RangeError, PyTorch wording', function () {
    const d = expectKdError(() => a23().transpose(0, 2), 'KD_INDEX_OUT_OF_RANGE');
    assert.ok(d instanceof RangeError);
    assert.match(d.message, /Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)/);
    expectKdError(() => a23().sum(-3), 'KD_INDEX_OUT_OF_RANGE');
    expectKdError(() => a23().unsqueeze(3), 'KD_INDEX_OUT_OF_RANGE');
    expectKdError(() => a23().unsqueeze(-4), 'KD_INDEX_OUT_OF_RANGE');
    expectKdError(() => a23().squeeze(2), 'KD_INDEX_OUT_OF_RANGE');
    expectKdError(() => a23().permute([0, 2]), ['KD_INDEX_OUT_OF_RANGE', 'KD_INVALID_ARGUMENT']);
    expectKdError(() => a23().size(2), 'KD_INDEX_OUT_OF_RANGE');
    expectKdError(() => a23().stride(-3), 'KD_INDEX_OUT_OF_RANGE');
    const s = expectKdError(() => a23().select(0, 2), 'KD_INDEX_OUT_OF_RANGE');
    assert.match(s.message, /select\(\): index 2 out of range for tensor of size \[2, 3\] at dimension 0/);
    expectKdError(() => a23().select(1, -4), 'KD_INDEX_OUT_OF_RANGE');
    expectKdError(() => a23().narrow(1, 2, 2), ['KD_INDEX_OUT_OF_RANGE', 'KD_INVALID_ARGUMENT']);
    expectKdError(() => a23().narrow(1, -5, 1), ['KD_INDEX_OUT_OF_RANGE', 'KD_INVALID_ARGUMENT']);
    expectKdError(() => a23().max(2), 'KD_INDEX_OUT_OF_RANGE');
    expectKdError(() => a23().chunk(2, 5), 'KD_INDEX_OUT_OF_RANGE');
    expectKdError(() => a23().flatten(0, 5), 'KD_INDEX_OUT_OF_RANGE');
    expectKdError(() => a23().asStrided([3, 3], [3, 1]), ['KD_INDEX_OUT_OF_RANGE', 'KD_INVALID_ARGUMENT']);
    expectKdError(() => a23().asStrided([2], [-1], 1), ['KD_INVALID_ARGUMENT', 'KD_INDEX_OUT_OF_RANGE']);
    expectKdError(() => a23().asStrided([2], [1], -1), ['KD_INVALID_ARGUMENT', 'KD_INDEX_OUT_OF_RANGE']);
  });

  it('huge ints and int64 range are coded errors', function () {
    expectKdError(() => a23().select(0, 2 ** 52), ['KD_INDEX_OUT_OF_RANGE']);
    expectKdError(() => a23().select(0, 2 ** 60), ['KD_INDEX_OUT_OF_RANGE', 'KD_INVALID_TYPE']);
    expectKdError(() => a23().transpose(0, 2 ** 53), ['KD_INDEX_OUT_OF_RANGE']);
    expectKdError(() => a23().view([2 ** 40, 2 ** 40, 2 ** 40]), ['KD_SHAPE_MISMATCH', 'KD_INVALID_ARGUMENT']);
    expectKdError(() => kd.zeros([2 ** 40, 2 ** 40, 2 ** 40]), ['KD_INVALID_ARGUMENT', 'KD_OUT_OF_MEMORY']);
    expectKdError(() => a23().add(10n ** 30n), ['KD_INVALID_TYPE', 'KD_INVALID_ARGUMENT']);
    expectKdError(() => a23().transpose(0, 1e300), ['KD_INVALID_TYPE', 'KD_INDEX_OUT_OF_RANGE']);
  });

  it('shapes whose element count overflows int64 are refused (PyTorch: "numel: integer multiplication overflow")', function () {
    const codes = ['KD_INVALID_ARGUMENT', 'KD_SHAPE_MISMATCH', 'KD_OUT_OF_MEMORY', 'KD_INDEX_OUT_OF_RANGE'];
    // 2^120 elements wraps to 0 in int64 arithmetic; 1050655 * 684737634023226 wraps to 6
    expectKdError(() => kd.ones([1, 1, 1]).expand([2 ** 40, 2 ** 40, 2 ** 40]), codes, 'expand to 2^120 elements');
    expectKdError(() => kd.ones([1]).expand([2 ** 40, 2 ** 40, 2 ** 40]), codes, 'expand (new dims) to 2^120 elements');
    expectKdError(() => kd.ones([1, 1]).expand([1050655, 684737634023226]), codes, 'expand to a count that wraps to 6');
    expectKdError(() => kd.ones([1]).asStrided([2 ** 40, 2 ** 40, 2 ** 40], [0, 0, 0]), codes, 'asStrided to 2^120 elements');
    expectKdError(() => kd.ones([1, 1]).unsqueeze(0).expand([2 ** 30, 2 ** 30, 2 ** 30]), codes, 'expand to 2^90 elements');
    expectKdError(() => kd.zeros([2 ** 40, 2 ** 40, 2 ** 40]), codes, 'zeros 2^120');
    expectKdError(() => kd.arange(6).view([1050655, 684737634023226]), codes, 'view whose size product wraps to 6');
    expectKdError(() => kd.arange(6).reshape([1050655, 684737634023226]), codes, 'reshape whose size product wraps to 6');
  });

  it('dtype errors', function () {
    expectKdError(() => kd.ones([2], { dtype: 'int32' }).add_(1.5), 'KD_DTYPE_MISMATCH');
    const c = expectKdError(() => kd.ones([2], { dtype: 'int32' }).add_(kd.ones([2])), 'KD_DTYPE_MISMATCH');
    assert.match(c.message, /result type Float can't be cast to the desired output type Int/);
    expectKdError(() => kd.ones([2]).mm(kd.ones([2, 2], { dtype: 'float64' }).view([2, 2])), ['KD_DTYPE_MISMATCH', 'KD_SHAPE_MISMATCH']);
    expectKdError(() => kd.ones([2, 2]).mm(kd.ones([2, 2], { dtype: 'float64' })), 'KD_DTYPE_MISMATCH');
    expectKdError(() => kd.where(kd.ones([2]), kd.ones([2]), kd.ones([2])), ['KD_DTYPE_MISMATCH', 'KD_INVALID_TYPE']);
    expectKdError(() => kd.ones([2], { dtype: 'int64' }).mean(), ['KD_DTYPE_MISMATCH', 'KD_INVALID_ARGUMENT']);
    expectKdError(() => kd.tensor([true]).neg(), ['KD_NOT_SUPPORTED', 'KD_DTYPE_MISMATCH', 'KD_INVALID_TYPE']);
    expectKdError(() => kd.tensor([true]).sub(kd.tensor([true])), ['KD_NOT_SUPPORTED', 'KD_DTYPE_MISMATCH', 'KD_INVALID_TYPE']);
    expectKdError(() => a23().to('complex64'), ['KD_INVALID_TYPE', 'KD_INVALID_ARGUMENT']);
    expectKdError(() => a23().sum({ dtype: 'nope' }), ['KD_INVALID_TYPE', 'KD_INVALID_ARGUMENT']);
  });

  it('device errors: cuda is unavailable here, unknown devices are invalid', function () {
    if (kd.cuda.isAvailable()) this.skip();
    for (const fn of [
      () => kd.zeros([2], { device: 'cuda' }),
      () => kd.zeros([2], { device: 'cuda:0' }),
      () => kd.tensor([1, 2], { device: 'cuda' }),
      () => a23().to('cuda'),
      () => a23().to({ device: 'cuda:0' }),
      () => a23().cuda(),
      () => kd.randn([2], { device: 'cuda' }),
      () => kd.onesLike(a23(), { device: 'cuda' }),
    ]) {
      const e = expectKdError(fn, 'KD_CUDA_UNAVAILABLE');
      assert.ok(e.message.length > 10);
    }
    for (const dev of ['tpu', 'cpu:1x', '', 'CPU ', 'cuda0']) {
      expectKdError(() => kd.zeros([2], { device: dev }), ['KD_INVALID_ARGUMENT', 'KD_INVALID_TYPE'], `device '${dev}'`);
    }
    for (const dev of ['cuda:-1', 'cuda:x']) {
      expectKdError(() => kd.zeros([2], { device: dev }), ['KD_INVALID_ARGUMENT', 'KD_INVALID_TYPE', 'KD_CUDA_UNAVAILABLE'], `device '${dev}'`);
    }
    expectKdError(() => a23().to({ device: 5 }), 'KD_INVALID_TYPE');
  });

  it('non-numbers and wrong types are TypeErrors with KD_INVALID_TYPE', function () {
    const t = a23();
    const bad = [
      () => t.add('1'), () => t.add(null), () => t.add(undefined), () => t.add({}), () => t.add([1, 2, 3]),
      () => t.mul(Symbol('s')), () => t.add(() => 1), () => kd.fmod(1, t), () => kd.add('a', 'b'),
      () => t.view('a'), () => t.view([2, 'x']), () => t.view([2.5, 2]), () => t.transpose(0, '1'),
      () => t.transpose(0, 0.5), () => t.select(0, NaN), () => t.sum(1, 'yes'), () => t.max('a'),
      () => t.matmul([1, 2]), () => t.mm(null), () => kd.where(true, t, t), () => t.fill_('x'),
      () => t.copy_([1, 2]), () => t.narrow(0, 0), () => t.permute([0, 1.5]), () => t.expand({}),
      () => t.split('2'), () => t.add(t, { alpha: 'x' }), () => t.div(t, { roundingMode: 5 }),
      () => t.add(t, { nope: 1 }), () => kd.zeros([2], 'float64'), () => kd.arange('5'),
      () => kd.linspace(0, 1, 2.5), () => kd.eye('3'), () => t.to(42), () => t.to([1]),
      () => kd.manualSeed('x'), () => kd.setNumThreads('x'),
    ];
    bad.forEach((fn, i) => expectKdError(fn, 'KD_INVALID_TYPE', `bad call #${i}: ${fn}`));
  });

  it('bad values are KD_INVALID_ARGUMENT', function () {
    expectKdError(() => a23().div(2, { roundingMode: 'round' }), 'KD_INVALID_ARGUMENT');
    expectKdError(() => a23().chunk(0), 'KD_INVALID_ARGUMENT');
    expectKdError(() => a23().split([1, 2]), ['KD_INVALID_ARGUMENT', 'KD_SHAPE_MISMATCH']);
    expectKdError(() => a23().slice(1, 0, 3, 0), 'KD_INVALID_ARGUMENT');
    expectKdError(() => a23().slice(1, 0, 3, -1), 'KD_INVALID_ARGUMENT');
    expectKdError(() => a23().view([-1, -1]), ['KD_INVALID_ARGUMENT', 'KD_SHAPE_MISMATCH']);
    expectKdError(() => a23().permute([0, 0]), 'KD_INVALID_ARGUMENT');
    expectKdError(() => kd.eye(-1), 'KD_INVALID_ARGUMENT');
    expectKdError(() => kd.linspace(0, 1, -1), 'KD_INVALID_ARGUMENT');
    expectKdError(() => kd.setNumThreads(0), 'KD_INVALID_ARGUMENT');
    expectKdError(() => kd.setNumThreads(-2), 'KD_INVALID_ARGUMENT');
    expectKdError(() => kd.ones([2], { dtype: 'int32' }).pow(-1), ['KD_INVALID_ARGUMENT', 'KD_NOT_SUPPORTED']);
    expectKdError(() => kd.ones([2], { dtype: 'int32' }).add(kd.ones([2], { dtype: 'int32' }), { alpha: 0.5 }),
      ['KD_INVALID_ARGUMENT', 'KD_DTYPE_MISMATCH', 'KD_INVALID_TYPE']);
  });

  it('an in-place op on a view of a disposed base still works; on a disposed tensor it throws', function () {
    const base = a23();
    const v = base.select(0, 0);
    base.dispose();
    v.add_(1);
    assert.deepEqual(Array.from(v.dataSync()), [2, 2, 2]);
    expectKdError(() => base.add_(1), 'KD_DISPOSED');
    expectKdError(() => v.add(base), 'KD_DISPOSED');
  });

  it('errors carry the caller\'s JS stack', function () {
    function thisFunctionCallsKindling() { return a23().add(kd.ones([5])); }
    const e = expectKdError(thisFunctionCallsKindling, 'KD_SHAPE_MISMATCH');
    assert.match(e.stack, /thisFunctionCallsKindling/);
  });

  it('the process survives thousands of errors', function () {
    const t = a23();
    for (let i = 0; i < 5000; i++) {
      try { t.add(kd.ones([i % 7 + 4])); } catch (e) { if (e.code !== 'KD_SHAPE_MISMATCH') throw e; }
    }
    assert.deepEqual(Array.from(t.add(1).dataSync()), [2, 2, 2, 2, 2, 2]);
  });
});

describe('errors: forged handles and prototype misuse (child process)', function () {
  // Each attempt must throw a JS error with a string code; none may crash the process.
  const attempts = {
    'method on forged {_h: {}}': 'kd.Tensor.prototype.add.call({ _h: {} }, 1)',
    'getter on forged {_h: {}}': 'Object.getOwnPropertyDescriptor(kd.Tensor.prototype, "shape").get.call({ _h: {} })',
    'dataSync on forged': 'kd.Tensor.prototype.dataSync.call({ _h: {} })',
    'dispose on forged': 'kd.Tensor.prototype.dispose.call({ _h: {} })',
    'forged with number handle': 'kd.Tensor.prototype.sum.call({ _h: 12345 })',
    'forged with null handle': 'kd.Tensor.prototype.neg.call({ _h: null })',
    'forged handle is another tensor\'s wrapper': 'kd.Tensor.prototype.add.call({ _h: kd.ones([2]) }, 1)',
    'forged as other operand': 'const x = Object.create(kd.Tensor.prototype); x._h = {}; kd.ones([2]).add(x)',
    'forged via Object.create(prototype)': 'const x = Object.create(kd.Tensor.prototype); x.shape',
    'Object.create(prototype) as matmul operand': 'const x = Object.create(kd.Tensor.prototype); kd.ones([2, 2]).matmul(x)',
    'new kd.Tensor({}) then use': 'new kd.Tensor({}).add(1)',
    'new kd.Tensor() then use': 'new kd.Tensor().dataSync()',
    'new kd.Tensor(array buffer) then use': 'new kd.Tensor(new ArrayBuffer(64)).item()',
    'prototype method on prototype': 'kd.Tensor.prototype.add(1)',
    'getter on prototype': 'kd.Tensor.prototype.shape',
    'item on prototype': 'kd.Tensor.prototype.item()',
    'prototype toString': 'String(kd.Tensor.prototype.toString.call({ _h: "x" }))',
    'handle from one tensor used after dispose via copy': 'const t = kd.ones([2]); const f = { _h: t._h }; t.dispose(); kd.Tensor.prototype.add.call(f, 1)',
    'kd.add with forged first': 'kd.add({ _h: {} }, 1)',
    'where with forged': 'kd.where({ _h: {} }, 1, 0)',
    'copy_ from forged': 'kd.ones([2]).copy_({ _h: {} })',
    'tidy returns forged': 'kd.tidy(() => ({ _h: {} })); throw Object.assign(new Error("no error"), { code: "KD_TEST_NO_ERROR" })',
    'handle swapped between tensors': 'const a = kd.ones([2]); const b = kd.ones([3]); a._h = 7; a.add(b)',
  };

  it('every forged/misused call throws a coded error and the process lives on', function () {
    const script = `
      const kd = require(${JSON.stringify(path.join(__dirname, '..'))});
      const attempts = ${JSON.stringify(attempts)};
      const out = {};
      for (const [name, code] of Object.entries(attempts)) {
        try { new Function('kd', code)(kd); out[name] = { threw: false }; }
        catch (e) { out[name] = { threw: true, isError: e instanceof Error, code: e && e.code, message: String(e && e.message) }; }
      }
      // still alive and computing
      out.__alive = Array.from(kd.ones([2]).add(1).dataSync());
      process.stdout.write(JSON.stringify(out));`;
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 60000 });
    assert.equal(r.signal, null, `child killed by ${r.signal}: ${r.stderr}`);
    assert.equal(r.status, 0, `child exited with ${r.status}: ${r.stderr.slice(0, 2000)}`);
    const out = JSON.parse(r.stdout);
    assert.deepEqual(out.__alive, [2, 2]);
    const bad = [];
    for (const name of Object.keys(attempts)) {
      const o = out[name];
      if (name === 'tidy returns forged') {
        if (!o.threw || o.code !== 'KD_TEST_NO_ERROR') bad.push(`${name}: ${JSON.stringify(o)}`);
        continue;
      }
      if (!o.threw || !o.isError || typeof o.code !== 'string' || !o.code.startsWith('KD_')) bad.push(`${name}: ${JSON.stringify(o)}`);
    }
    assert.equal(bad.length, 0, `calls without a coded error:\n  ${bad.join('\n  ')}`);
  });
});
