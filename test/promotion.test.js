// promotion.test.js - result dtypes follow torch.result_type (test/fixtures/promotion.json):
// every dtype pair, tensor x JS-number/boolean scalar (integer-valued numbers are int
// "wrapped numbers", others float ones), 0-d tensors against dimensioned ones, in-place ops
// that may not cast the result down, div/eq/mul and sum/mean result dtypes.
'use strict';

const { kd, assert, fixture, expectKdError, values } = require('./helpers');

const P = fixture('promotion');

function t(dtype, zeroDim = false) {
  return zeroDim ? kd.ones([], { dtype }) : kd.ones([2], { dtype });
}

describe('type promotion (torch.result_type fixtures)', function () {
  describe('tensor + tensor, every pair', function () {
    for (const p of P.pairs) {
      it(`${p.a} + ${p.b} -> ${p.result}`, function () {
        const r = kd.add(t(p.a), t(p.b));
        assert.equal(r.dtype, p.result);
        const expectedValue = p.result === 'bool' ? true : 2;
        assert.deepEqual(values(r), [expectedValue, expectedValue]);
      });
    }
  });

  describe('tensor + JS scalar', function () {
    for (const s of P.scalars) {
      it(`${s.dtype} + ${JSON.stringify(s.scalar)} -> ${s.result}`, function () {
        assert.equal(kd.add(t(s.dtype), s.scalar).dtype, s.result);
        assert.equal(t(s.dtype).mul(s.scalar).dtype, s.result);
      });
    }
  });

  describe('0-d tensor with a dimensioned tensor', function () {
    for (const z of P.zeroDim) {
      it(`0-d ${z.zeroDim} + ${z.dims}[2] -> ${z.result}`, function () {
        assert.equal(kd.add(t(z.zeroDim, true), t(z.dims)).dtype, z.result);
        assert.equal(kd.add(t(z.dims), t(z.zeroDim, true)).dtype, z.result, 'order does not matter');
      });
    }
    for (const z of P.zeroDimBoth) {
      it(`0-d ${z.a} + 0-d ${z.b} -> ${z.result}`, function () {
        const r = kd.add(t(z.a, true), t(z.b, true));
        assert.equal(r.dtype, z.result);
        assert.deepEqual(r.shape, []);
      });
    }
  });

  describe('in-place: the result must be castable to self', function () {
    for (const e of P.inplace) {
      it(`${e.self}.add_(${e.other}) ${e.ok ? 'keeps ' + e.self : 'is an error'}`, function () {
        const self = t(e.self);
        if (e.ok) {
          const r = self.add_(t(e.other));
          assert.equal(r, self);
          assert.equal(self.dtype, e.self);
        } else {
          expectKdError(() => self.add_(t(e.other)), ['KD_DTYPE_MISMATCH'], `${e.self}.add_(${e.other})`);
          assert.deepEqual(values(self), e.self === 'bool' ? [true, true] : [1, 1], 'self unchanged after the error');
        }
      });
    }
  });

  describe('div / eq / mul result dtypes', function () {
    for (const o of P.ops) {
      it(`${o.op}(${o.a}, ${o.b}) ${o.error ? 'is an error' : '-> ' + o.result}`, function () {
        if (o.error) {
          expectKdError(() => kd[o.op](t(o.a), t(o.b)), null, o.op);
          return;
        }
        assert.equal(kd[o.op](t(o.a), t(o.b)).dtype, o.result);
      });
    }
  });

  describe('sum / mean result dtypes', function () {
    for (const o of P.sum) {
      it(`${o.op}(${o.dtype}) ${o.error ? 'is an error' : '-> ' + o.result}`, function () {
        if (o.error) {
          expectKdError(() => kd[o.op](t(o.dtype)), ['KD_DTYPE_MISMATCH', 'KD_INVALID_ARGUMENT', 'KD_NOT_SUPPORTED'], o.op);
          return;
        }
        assert.equal(kd[o.op](t(o.dtype)).dtype, o.result);
      });
    }
  });
});

describe('type promotion: examples from the spec', function () {
  const cases = [
    ['int32 + 2 -> int32', () => t('int32').add(2), 'int32'],
    ['int32 + 2.5 -> float32', () => t('int32').add(2.5), 'float32'],
    ['uint8 + int8 -> int16', () => t('uint8').add(t('int8')), 'int16'],
    ['bool + bool -> bool', () => t('bool').add(t('bool')), 'bool'],
    ['float16 + bfloat16 -> float32', () => t('float16').add(t('bfloat16')), 'float32'],
    ['int64 / int64 -> float32', () => t('int64').div(t('int64')), 'float32'],
    ['0-d float64 + float32[2] -> float32', () => t('float64', true).add(t('float32')), 'float32'],
    ['int32[2] + 0-d float64 -> float64', () => t('int32').add(t('float64', true)), 'float64'],
    ['float16 * 1e10 stays float16 (inf)', () => t('float16').mul(1e10), 'float16'],
    ['bool + 1 -> int64', () => t('bool').add(1), 'int64'],
    ['bool + 1.5 -> float32', () => t('bool').add(1.5), 'float32'],
    ['uint8 + true -> uint8', () => t('uint8').add(true), 'uint8'],
    ['int8 > 1.5 -> bool', () => t('int8').gt(1.5), 'bool'],
  ];
  for (const [name, fn, dtype] of cases) it(name, function () { assert.equal(fn().dtype, dtype); });

  it('int32 + 2.5 computes in float (values)', function () {
    assert.deepEqual(values(kd.tensor([1, 2], { dtype: 'int32' }).add(2.5)), [3.5, 4.5]);
    assert.deepEqual(values(kd.tensor([1, 2], { dtype: 'int32' }).mul(0.5)), [0.5, 1]);
  });

  it('int + large integer scalar wraps in the tensor dtype like PyTorch', function () {
    // torch.tensor([1], dtype=torch.int8) + 200 -> tensor([-55], dtype=torch.int8)
    const r = kd.tensor([1], { dtype: 'int8' }).add(200);
    assert.equal(r.dtype, 'int8');
    assert.deepEqual(values(r), [-55]);
  });
});
