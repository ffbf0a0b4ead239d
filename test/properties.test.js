// properties.test.js - metadata (shape, dtype, device, ndim, numel, stride, storageOffset,
// isContiguous), reading data (data, dataSync, array, arraySync, item) for every dtype, and
// printing (toString / util.inspect) against PyTorch's str() (test/fixtures/creation.json),
// autograd suffixes and summarised views included.
'use strict';

const util = require('node:util');
const { kd, assert, fixture, decodeDeep, values, expectKdError } = require('./helpers');

describe('properties', function () {
  it('shape, ndim, numel, dtype, device', function () {
    const t = kd.zeros([2, 3, 4]);
    assert.ok(Array.isArray(t.shape));
    assert.deepEqual(t.shape, [2, 3, 4]);
    t.shape.push(99); // a copy: mutating it does not change the tensor
    assert.deepEqual(t.shape, [2, 3, 4]);
    assert.equal(t.ndim, 3);
    assert.equal(t.numel(), 24);
    assert.equal(t.dtype, 'float32');
    assert.equal(t.device, 'cpu');
    const s = kd.tensor(5);
    assert.deepEqual(s.shape, []);
    assert.equal(s.ndim, 0);
    assert.equal(s.numel(), 1);
    assert.equal(kd.zeros([3, 0]).numel(), 0);
  });

  it('stride, storageOffset, isContiguous', function () {
    const t = kd.zeros([2, 3, 4]);
    assert.deepEqual(t.stride(), [12, 4, 1]);
    assert.equal(t.storageOffset(), 0);
    assert.equal(t.isContiguous(), true);
    const p = t.permute([2, 0, 1]);
    assert.deepEqual(p.stride(), [1, 12, 4]);
    assert.equal(p.isContiguous(), false);
    const s = t.select(1, 2);
    assert.equal(s.storageOffset(), 8);
    assert.deepEqual(s.stride(), [12, 1]);
    const sl = t.slice(2, 1, 4, 2);
    assert.deepEqual(sl.stride(), [12, 4, 2]);
    assert.equal(sl.storageOffset(), 1);
    assert.deepEqual(kd.tensor(1).stride(), []);
  });

  it('size(), dim(), stride(dim) and negative dims', function () {
    const t = kd.zeros([2, 3, 4]);
    assert.deepEqual(t.size(), [2, 3, 4]);
    assert.equal(t.size(-1), 4);
    assert.equal(t.size(0), 2);
    assert.equal(t.dim(), 3);
    assert.equal(t.stride(0), 12);
    assert.equal(t.stride(-1), 1);
  });

  it('many concurrent dataAsync() calls resolve to the right values', async function () {
    const ts = Array.from({ length: 50 }, (_, i) => kd.full([100], i, { dtype: 'int32' }));
    const all = await Promise.all(ts.map((t) => t.dataAsync()));
    all.forEach((d, i) => { assert.equal(d.length, 100); assert.equal(d[99], i); });
    const arrays = await Promise.all(ts.slice(0, 5).map((t) => t.view([10, 10]).array()));
    assert.deepEqual(arrays[3][9], new Array(10).fill(3));
  });

  it('dataSync returns the right typed array per dtype', function () {
    const expect = {
      float32: Float32Array, float64: Float64Array, float16: Float32Array, bfloat16: Float32Array,
      int8: Int8Array, uint8: Uint8Array, int16: Int16Array, int32: Int32Array, int64: BigInt64Array, bool: Uint8Array,
    };
    for (const dtype of kd.dtypes) {
      const t = kd.tensor(dtype === 'bool' ? [true, false, true] : [1, 0, 3], { dtype });
      const d = t.dataSync();
      assert.ok(d instanceof expect[dtype], `${dtype}: ${d.constructor.name}`);
      assert.deepEqual(Array.from(d, Number), dtype === 'bool' ? [1, 0, 1] : [1, 0, 3], dtype);
    }
  });

  it('dataAsync() resolves to the same as dataSync(); array()/arraySync() nest', async function () {
    const t = kd.tensor([[1, 2, 3], [4, 5, 6]], { dtype: 'float32' });
    const d = await t.dataAsync();
    assert.ok(d instanceof Float32Array);
    assert.deepEqual(Array.from(d), [1, 2, 3, 4, 5, 6]);
    assert.deepEqual(await t.array(), [[1, 2, 3], [4, 5, 6]]);
    assert.deepEqual(t.arraySync(), [[1, 2, 3], [4, 5, 6]]);
    assert.deepEqual(kd.tensor([[true], [false]]).arraySync(), [[true], [false]]);
    assert.deepEqual(kd.tensor([5, 6]).arraySync(), [5, 6], 'int64 as numbers');
    assert.equal(kd.tensor(2.5).arraySync(), 2.5);
    assert.deepEqual(kd.zeros([2, 0]).arraySync(), [[], []]);
  });

  // Note [dataAsync() of a CPU tensor] (src/napi/tensor.c): a copy taken at the call, in a resolved Promise.
  it('dataAsync() of a CPU tensor: every dtype and layout as dataSync(), a snapshot taken at the call, settled at once', async function () {
    for (const dtype of kd.dtypes) {
      const base = kd.arange(24).reshape([2, 3, 4]).to(dtype);
      const views = [base, base.transpose(0, 2), base.index([kd.slice(), 1]), base.narrow(2, 1, 2),
        base.index([0, 0]).expand([3, 4]), base.index([1, 2, 3]), kd.zeros([0, 3], { dtype })];
      for (const v of views) {
        const d = await v.dataAsync();
        const want = v.dataSync();
        assert.equal(d.constructor, want.constructor, `${dtype} ${v.shape}`);
        assert.deepEqual(Array.from(d, String), Array.from(want, String), `${dtype} ${v.shape}`);
      }
    }
    const t = kd.tensor([1, 2, 3], { dtype: 'float32' });
    const p = t.dataAsync();
    t.fill_(7); // after the call: not in the data
    const d = await p;
    assert.deepEqual(Array.from(d), [1, 2, 3]);
    d[0] = 100; // the data is a copy
    assert.deepEqual(Array.from(t.dataSync()), [7, 7, 7]);
    let settled = false;
    t.dataAsync().then(() => { settled = true; });
    await null; // one microtask turn: no thread pool, no event loop turn
    await null;
    assert.equal(settled, true);
    const gone = kd.ones([2]);
    gone.dispose();
    const r = gone.dataAsync(); // a rejection, not a throw
    await assert.rejects(r, { code: 'KD_DISPOSED' });
    await assert.rejects(gone.array(), { code: 'KD_DISPOSED' });
  });

  it('arraySync of empty tensors with huge dims: nested empties as tolist(), or KD_OUT_OF_MEMORY, never a hang', function () {
    // In a child process: building 2^31 empty arrays would hang or end the process when V8's heap runs out.
    const script = `
      const kd = require(${JSON.stringify(require.resolve('..'))});
      const out = {};
      for (const shape of [[0, 2 ** 40], [3, 0, 2 ** 40], [2, 3, 0, 5], [2 ** 31, 0, 2 ** 31], [2 ** 40, 0], [2 ** 33]]) {
        const t = shape[0] === 2 ** 33 ? kd.ones([1]).expand(shape) : kd.zeros(shape);
        try { out[shape.join('x')] = { value: t.arraySync() }; } catch (e) { out[shape.join('x')] = { code: e.code, kd: e instanceof kd.KindlingError, message: e.message }; }
      }
      process.stdout.write(JSON.stringify(out));`;
    // a fixed heap limit, so that the refused shapes are refused on any machine
    const r = require('node:child_process').spawnSync(process.execPath, ['--max-old-space-size=2048', '-e', script],
      { encoding: 'utf8', timeout: 120000 });
    assert.equal(r.status, 0, `child failed (signal ${r.signal}): ${r.stderr}`);
    const out = JSON.parse(r.stdout);
    // torch.zeros(0, 2**40).tolist() == [], torch.zeros(3, 0, 2**40).tolist() == [[], [], []]
    assert.deepEqual(out['0x1099511627776'], { value: [] });
    assert.deepEqual(out['3x0x1099511627776'], { value: [[], [], []] });
    assert.deepEqual(out['2x3x0x5'], { value: [[[], [], []], [[], [], []]] });
    for (const key of ['2147483648x0x2147483648', '1099511627776x0', '8589934592']) {
      assert.equal(out[key].code, 'KD_OUT_OF_MEMORY', `${key}: ${JSON.stringify(out[key])}`);
      assert.ok(out[key].kd);
      assert.match(out[key].message, /^arraySync\(\): the nested arrays of a tensor of shape \[\d+(, \d+)*\] would take about [\d.]+ GB of JavaScript heap/);
    }
  });

  it('data of a non-contiguous view is in logical (row-major) order', function () {
    const t = kd.arange(6, { dtype: 'float32' }).reshape([2, 3]).t();
    assert.deepEqual(Array.from(t.dataSync()), [0, 3, 1, 4, 2, 5]);
    assert.deepEqual(t.arraySync(), [[0, 3], [1, 4], [2, 5]]);
    const e = kd.tensor([1, 2], { dtype: 'int32' }).unsqueeze(0).expand([2, 2]);
    assert.deepEqual(Array.from(e.dataSync()), [1, 2, 1, 2]);
    const s = kd.arange(10).slice(0, 1, 10, 3);
    assert.deepEqual(s.arraySync(), [1, 4, 7]);
  });

  it('dataSync returns a copy', function () {
    const t = kd.ones([3]);
    const d = t.dataSync();
    d[0] = 100;
    assert.deepEqual(values(t), [1, 1, 1]);
  });

  it('item() for every dtype, errors for more than one element', function () {
    assert.equal(kd.tensor([2.5]).item(), 2.5);
    assert.equal(kd.tensor(3, { dtype: 'int32' }).item(), 3);
    assert.equal(kd.tensor(3).item(), 3, 'int64 item is a number');
    assert.equal(kd.tensor([[7]], { dtype: 'uint8' }).item(), 7);
    assert.equal(kd.tensor(true).item(), true);
    assert.equal(kd.tensor(1.5, { dtype: 'float16' }).item(), 1.5);
    assert.equal(kd.tensor(1.5, { dtype: 'bfloat16' }).item(), 1.5);
    assert.ok(Number.isNaN(kd.tensor(NaN).item()));
    expectKdError(() => kd.zeros([2]).item(), ['KD_INVALID_ARGUMENT', 'KD_SHAPE_MISMATCH']);
    expectKdError(() => kd.zeros([0]).item(), ['KD_INVALID_ARGUMENT', 'KD_SHAPE_MISMATCH']);
  });

  it('float16/bfloat16 values round-trip through dataSync', function () {
    const vals = [0, -0, 1, -2.5, 65504, 6.103515625e-05, 5.960464477539063e-08, Infinity, -Infinity];
    const h = kd.tensor(vals, { dtype: 'float16' });
    assert.deepEqual(Array.from(h.dataSync()), vals.map(Math.fround));
    assert.ok(Object.is(h.dataSync()[1], -0), 'negative zero kept');
    assert.ok(Number.isNaN(kd.tensor([NaN], { dtype: 'float16' }).dataSync()[0]));
    const bvals = [1, -3, 3.140625, 1e30, 2 ** -126];
    const b = kd.tensor(bvals, { dtype: 'bfloat16' });
    const out = Array.from(b.dataSync());
    assert.deepEqual(out.slice(0, 3), [1, -3, 3.140625]);
    assert.ok(Math.abs(out[3] - 1e30) / 1e30 < 1e-2);
    assert.equal(out[4], 2 ** -126);
  });
});

describe('printing', function () {
  for (const p of fixture('creation').printing) {
    it(`${p.name}: ${JSON.stringify(p.str)}`, function () {
      const [fn, ...args] = p.call;
      let t;
      if (fn === 'reshape-arange') t = kd.arange(args[0], { dtype: 'float32' }).reshape(args[1]);
      else if (fn === 'arange-div') t = kd.arange(args[0], { dtype: 'float32' }).div(args[1]);
      else if (fn === 'chain') {
        // ['chain', [kd function, ...args], [method, ...args], ...]
        const [[first, ...firstArgs], ...calls] = args;
        t = kd[first](...decodeDeep(firstArgs));
        for (const [method, ...margs] of calls) t = t[method](...decodeDeep(margs));
      } else t = kd[fn](...decodeDeep(args));
      // kindling names dtypes without the torch. prefix: dtype=int32
      const expected = p.str.replace(/torch\./g, '');
      assert.equal(t.toString(), expected);
      assert.equal(util.inspect(t), expected);
      assert.equal(`${t}`, expected);
    });
  }
  it('printing a view prints its logical values', function () {
    const t = kd.tensor([[1, 2], [3, 4]]).t();
    assert.equal(t.toString(), 'tensor([[1, 3],\n        [2, 4]])');
  });
  it('printing does not throw for large tensors and summarises them', function () {
    const s = kd.arange(5000).toString();
    assert.ok(s.startsWith('tensor([   0,    1,    2,  ..., 4997, 4998, 4999])'), s);
  });
});
