// creation.test.js - kd.tensor and the factories against PyTorch (test/fixtures/creation.json):
// dtype inference, arange/linspace/eye/full/zeros/ones, *Like functions, typed arrays,
// varargs vs array shapes, options objects, and bad arguments.
'use strict';

const { kd, assert, fixture, decodeDeep, assertTensorClose, values, expectKdError, codesForTorchError,
  assertMessageLike } = require('./helpers');

describe('creation (PyTorch fixtures)', function () {
  for (const f of fixture('creation').factories) {
    it(f.name, function () {
      const [fn, ...args] = f.call;
      const call = () => kd[fn](...decodeDeep(args));
      if (f.error) {
        const codes = f.name.includes('ragged') ? ['KD_SHAPE_MISMATCH', 'KD_INVALID_ARGUMENT'] : codesForTorchError(f.error);
        const err = expectKdError(call, codes, f.name);
        assertMessageLike(err.message, f.error.message, f.name);
        return;
      }
      const t = call();
      assertTensorClose(t, f.expected, f.name);
      assert.equal(t.device, 'cpu');
      assert.equal(t.isContiguous(), true);
    });
  }
});

describe('creation: API details', function () {
  it('randintLike(x, high) draws from [0, high), as randint_like(input, high)', function () {
    const x = kd.zeros([400], { dtype: 'int64' });
    const r = values(kd.randintLike(x, 3));
    assert.ok(r.every((v) => v >= 0 && v < 3) && new Set(r).size === 3);
    const r2 = values(kd.randintLike(x, 5, 7));
    assert.ok(r2.every((v) => v >= 5 && v < 7));
  });

  it('shapes as arrays or varargs, options last', function () {
    for (const fn of ['zeros', 'ones', 'empty', 'rand', 'randn']) {
      assert.deepEqual(kd[fn]([2, 3]).shape, [2, 3], fn);
      assert.deepEqual(kd[fn](2, 3).shape, [2, 3], fn);
      const t = kd[fn]([2, 3], { dtype: 'float64' });
      assert.equal(t.dtype, 'float64', fn);
      assert.equal(kd[fn](4, { dtype: 'float64' }).dtype, 'float64', fn);
      assert.deepEqual(kd[fn](4, { dtype: 'float64' }).shape, [4], fn);
      assert.equal(kd[fn]([2]).dtype, 'float32', `${fn} default dtype`);
    }
    assert.deepEqual(kd.zeros([2, 3], { dtype: 'int32' }).dtype, 'int32');
    assert.deepEqual(kd.zeros(0).shape, [0]);
    assert.deepEqual(kd.zeros([]).shape, [], 'zeros([]) is 0-d');
  });

  it('zeros/ones/full fill every dtype', function () {
    for (const dtype of kd.dtypes) {
      const z = kd.zeros([3], { dtype });
      const o = kd.ones([3], { dtype });
      assert.equal(z.dtype, dtype);
      const zero = dtype === 'bool' ? false : 0;
      const one = dtype === 'bool' ? true : 1;
      assert.deepEqual(values(z), [zero, zero, zero], dtype);
      assert.deepEqual(values(o), [one, one, one], dtype);
      const f = kd.full([2], dtype === 'bool' ? true : 5, { dtype });
      assert.deepEqual(values(f), dtype === 'bool' ? [true, true] : [5, 5], dtype);
    }
    assert.deepEqual(values(kd.full([2], -2.5, { dtype: 'float16' })), [-2.5, -2.5]);
  });

  it('*Like functions keep shape and dtype unless told otherwise', function () {
    const src = kd.tensor([[1, 2, 3], [4, 5, 6]], { dtype: 'int32' });
    const tr = src.t(); // non-contiguous source: the result still has its shape
    const z = kd.zerosLike(tr);
    assert.deepEqual(z.shape, [3, 2]);
    assert.equal(z.dtype, 'int32');
    assert.deepEqual(values(z), [0, 0, 0, 0, 0, 0]);
    assert.deepEqual(values(kd.onesLike(src, { dtype: 'float64' })), [1, 1, 1, 1, 1, 1]);
    assert.equal(kd.onesLike(src, { dtype: 'float64' }).dtype, 'float64');
    assert.deepEqual(values(kd.fullLike(src, 7)), [7, 7, 7, 7, 7, 7]);
    assert.equal(kd.fullLike(src, 7).dtype, 'int32');
    assert.deepEqual(kd.emptyLike(src).shape, [2, 3]);
    const f = kd.zeros([4, 5]);
    const r = kd.randLike(f);
    assert.deepEqual(r.shape, [4, 5]);
    assert.ok(values(r).every((v) => v >= 0 && v < 1));
    assert.deepEqual(kd.randnLike(f).shape, [4, 5]);
    const ri = kd.randintLike(src, 0, 3);
    assert.equal(ri.dtype, 'int32');
    assert.ok(values(ri).every((v) => v >= 0 && v < 3 && Number.isInteger(v)));
  });

  it('kd.tensor infers dtypes like torch.tensor', function () {
    assert.equal(kd.tensor([1, 2]).dtype, 'int64');
    assert.equal(kd.tensor([1, 2.5]).dtype, 'float32');
    assert.equal(kd.tensor([NaN]).dtype, 'float32');
    assert.equal(kd.tensor([true, false]).dtype, 'bool');
    assert.equal(kd.tensor(7).dtype, 'int64');
    assert.deepEqual(kd.tensor(7).shape, []);
    assert.equal(kd.tensor(7).item(), 7);
    assert.equal(kd.tensor(true).item(), true);
    assert.equal(kd.tensor(0.5).item(), 0.5);
  });

  it('kd.tensor from typed arrays keeps their type', function () {
    const cases = [
      [new Float32Array([1.5, 2]), 'float32'], [new Float64Array([1.5, 2]), 'float64'],
      [new Int32Array([1, -2]), 'int32'], [new BigInt64Array([1n, -2n]), 'int64'],
      [new Uint8Array([1, 2]), 'uint8'], [new Int8Array([1, -2]), 'int8'], [new Int16Array([1, -2]), 'int16'],
    ];
    for (const [arr, dtype] of cases) {
      const t = kd.tensor(arr);
      assert.equal(t.dtype, dtype, arr.constructor.name);
      assert.deepEqual(t.shape, [2]);
      assert.deepEqual(values(t), Array.from(arr, Number), arr.constructor.name);
    }
    const big = kd.tensor(new BigInt64Array([9007199254740993n]));
    assert.equal(big.dataSync()[0], 9007199254740993n, 'int64 keeps all 64 bits');
    assert.equal(kd.tensor(new Float32Array([1, 2]), { dtype: 'float64' }).dtype, 'float64');
    // half types from raw bits
    const h = kd.tensor(new Uint16Array([0x3c00, 0xc000]), { dtype: 'float16' });
    assert.deepEqual(values(h), [1, -2]);
    const bf = kd.tensor(new Uint16Array([0x3f80, 0x4040]), { dtype: 'bfloat16' });
    assert.deepEqual(values(bf), [1, 3]);
  });

  it('kd.tensor copies its input', function () {
    const arr = new Float32Array([1, 2, 3]);
    const t = kd.tensor(arr);
    arr[0] = 100;
    assert.deepEqual(values(t), [1, 2, 3]);
    const nested = [[1, 2]];
    const t2 = kd.tensor(nested, { dtype: 'float32' });
    nested[0][0] = 5;
    assert.deepEqual(values(t2), [1, 2]);
  });

  it('device option cpu', function () {
    assert.equal(kd.zeros([2], { device: 'cpu' }).device, 'cpu');
    assert.equal(kd.tensor([1], { device: 'cpu' }).device, 'cpu');
    assert.equal(kd.arange(3, { device: 'cpu' }).device, 'cpu');
  });

  it('randint range, dtype and shape', function () {
    const r = kd.randint(-3, 4, [1000]);
    assert.equal(r.dtype, 'int64');
    const v = values(r);
    assert.ok(v.every((x) => Number.isInteger(x) && x >= -3 && x < 4));
    for (let k = -3; k < 4; k++) assert.ok(v.includes(k), `randint never produced ${k}`);
    assert.equal(kd.randint(0, 10, [3], { dtype: 'int32' }).dtype, 'int32');
    assert.deepEqual(kd.randint(0, 2, [2, 3]).shape, [2, 3]);
  });

  it('bad arguments are coded errors', function () {
    expectKdError(() => kd.tensor('abc'), 'KD_INVALID_TYPE');
    expectKdError(() => kd.tensor([1, 'a']), 'KD_INVALID_TYPE');
    expectKdError(() => kd.tensor([[1, 2], [3]]), ['KD_SHAPE_MISMATCH', 'KD_INVALID_ARGUMENT']);
    expectKdError(() => kd.tensor({}), 'KD_INVALID_TYPE');
    expectKdError(() => kd.tensor([1], { dtype: 'float128' }), ['KD_INVALID_TYPE', 'KD_INVALID_ARGUMENT']);
    expectKdError(() => kd.zeros([2], { dtype: 'float128' }), ['KD_INVALID_TYPE', 'KD_INVALID_ARGUMENT']);
    expectKdError(() => kd.zeros([2, 'a']), 'KD_INVALID_TYPE');
    expectKdError(() => kd.zeros(2.5), 'KD_INVALID_TYPE');
    expectKdError(() => kd.zeros([NaN]), 'KD_INVALID_TYPE');
    expectKdError(() => kd.zeros([-1]), 'KD_INVALID_ARGUMENT');
    expectKdError(() => kd.full([2]), ['KD_INVALID_TYPE', 'KD_INVALID_ARGUMENT']);
    expectKdError(() => kd.full([2], 'x'), 'KD_INVALID_TYPE');
    expectKdError(() => kd.randint(5, 5, [2]), 'KD_INVALID_ARGUMENT');
    expectKdError(() => kd.randint(0, 5), ['KD_INVALID_TYPE', 'KD_INVALID_ARGUMENT']);
    expectKdError(() => kd.arange(0, 5, 0), 'KD_INVALID_ARGUMENT');
    expectKdError(() => kd.arange(0, Infinity), ['KD_INVALID_ARGUMENT', 'KD_INVALID_TYPE']);
    expectKdError(() => kd.tensor([300], { dtype: 'uint8' }), ['KD_INVALID_ARGUMENT', 'KD_INDEX_OUT_OF_RANGE']);
    expectKdError(() => kd.zeros([2], { device: 'tpu' }), ['KD_INVALID_ARGUMENT', 'KD_INVALID_TYPE']);
    expectKdError(() => kd.zeros([2], { dtype: 'float32', bogus: 1 }), ['KD_INVALID_TYPE', 'KD_INVALID_ARGUMENT']);
  });

  it('a huge size is a clean error, not a crash', function () {
    expectKdError(() => kd.empty([1e15]), ['KD_OUT_OF_MEMORY', 'KD_INVALID_ARGUMENT']);
    expectKdError(() => kd.empty([2 ** 40, 2 ** 40]), ['KD_OUT_OF_MEMORY', 'KD_INVALID_ARGUMENT']);
  });
});
