// matmul.test.js - matmul (every torch.matmul case: 1-D/2-D/batched, broadcasting, empty),
// mm and bmm against PyTorch (test/fixtures/matmul.json), over several dtypes and
// non-contiguous operands, plus errors.
'use strict';

const { kd, assert, fixture, runOpCase, values, nonContiguous, expectKdError, decode, reductionLength, buildArg, assertValuesClose } = require('./helpers');

describe('matmul / mm / bmm (PyTorch fixtures)', function () {
  for (const c of fixture('matmul')) {
    it(c.name + (c.form !== 'function' ? ` [${c.form}]` : ''), function () { runOpCase(c); });
  }
});

// Note [Tolerance of reductions] in helpers.js: a float32 product summed in another order (as
// another kernel, SIMD width or BLAS does) differs from PyTorch's by more than one rounding.
describe('matmul: the fixtures allow for the summation order (float32 70x130 @ 130x90)', function () {
  const c = fixture('matmul').find((x) => x.name === 'matmul float32 large 70x130 @ 130x90');
  const [M, K, N] = [70, 130, 90];
  const a = c.args[0].data.map(decode);
  const b = c.args[1].data.map(decode);
  const expected = c.expected.data.map(decode);
  const f = Math.fround;
  // the float32 product with the k terms added in `order` (a list of k), one rounding per step;
  // with lanes > 1, k goes to lane k % lanes (a SIMD accumulator each), and the lanes are added last
  function product(order, lanes = 1, drop = -1) {
    const out = [];
    for (let i = 0; i < M; i++) {
      for (let j = 0; j < N; j++) {
        const acc = new Array(lanes).fill(0);
        for (const k of order) if (k !== drop) acc[k % lanes] = f(acc[k % lanes] + f(a[i * K + k] * b[k * N + j]));
        out.push(acc.reduce((x, y) => f(x + y), 0));
      }
    }
    return out;
  }
  const ascending = Array.from({ length: K }, (_, k) => k);

  it('the case reduces K = 130 terms', function () {
    assert.equal(reductionLength(c, c.args.map(buildArg)), K);
  });

  for (const [what, order, lanes] of [['in order', ascending, 1], ['in reverse', [...ascending].reverse(), 1], ['in 8 lanes (AVX2)', ascending, 8], ['in 16 lanes (AVX-512)', ascending, 16]]) {
    it(`a float32 kernel summing ${what} passes`, function () {
      assertValuesClose(product(order, lanes), expected, 'float32', what, { terms: K });
    });
  }

  it('a kernel that drops a term still fails', function () {
    assert.throws(() => assertValuesClose(product(ascending, 8, 64), expected, 'float32', 'k = 64 dropped', { terms: K }), /elements differ/);
  });
});

describe('matmul: API details', function () {
  it('agrees with a JS reference on a larger float64 product (blocked/BLAS path)', function () {
    const M = 67, K = 129, N = 45;
    const a = [];
    const b = [];
    for (let i = 0; i < M * K; i++) a.push(((i * 7919) % 1000) / 500 - 1);
    for (let i = 0; i < K * N; i++) b.push(((i * 104729) % 1000) / 500 - 1);
    const A = kd.tensor(a, { dtype: 'float64' }).reshape([M, K]);
    const B = kd.tensor(b, { dtype: 'float64' }).reshape([K, N]);
    const C = values(A.matmul(B));
    for (const [i, j] of [[0, 0], [M - 1, N - 1], [13, 29], [66, 0]]) {
      let s = 0;
      for (let k = 0; k < K; k++) s += a[i * K + k] * b[k * N + j];
      assert.ok(Math.abs(C[i * N + j] - s) < 1e-10, `C[${i}][${j}] = ${C[i * N + j]}, expected ${s}`);
    }
  });

  it('non-contiguous operands built by helpers give the same result as contiguous ones', function () {
    const av = [1, 2, 3, 4, 5, 6];
    const bv = [1, 0, -1, 2, 0.5, 3];
    const a = kd.tensor([[1, 2, 3], [4, 5, 6]], { dtype: 'float32' });
    const b = kd.tensor([[1, 0], [-1, 2], [0.5, 3]], { dtype: 'float32' });
    const ref = values(a.mm(b));
    assert.deepEqual(values(nonContiguous(av, [2, 3], 'transpose').mm(b)), ref);
    assert.deepEqual(values(a.mm(nonContiguous(bv, [3, 2], 'slice'))), ref);
    assert.deepEqual(ref, [0.5, 13, 2, 28]);
  });

  // float16/bfloat16 products of >= 32^3 multiply-adds take their own routes (bfloat16: AVX512-BF16
  // dot products where the build has them, A read in place when its rows are contiguous and k is
  // even, else packed; otherwise float32 sgemm), all with float32 accumulation rounded once
  for (const [dtype, eps] of [['float16', 2 ** -10], ['bfloat16', 2 ** -7]]) {
    for (const [K, aLayout] of [[50, 'transposed'], [50, 'contiguous'], [51, 'contiguous']]) {
      it(`${dtype} 3x40x${K} @ 3x${K}x60 (A ${aLayout}, B a column slice) is the float32 product rounded once`, function () {
        const B = 3, M = 40, N = 60;
        const av = Array.from({ length: B * K * M }, (_, i) => (((i * 7919) % 997) / 498.5 - 1));
        const bv = Array.from({ length: B * K * (N + 4) }, (_, i) => (((i * 104729) % 991) / 495.5 - 1));
        const a = aLayout === 'transposed' ? kd.tensor(av, { dtype }).reshape([B, K, M]).transpose(1, 2)
          : kd.tensor(av, { dtype }).reshape([B, M, K]);
        const b = kd.tensor(bv, { dtype }).reshape([B, K, N + 4]).narrow(2, 2, N);
        const aw = values(a.to('float64')), bw = values(b.to('float64')); // the dtype's values, exactly
        for (const [what, c] of [['bmm', a.bmm(b)], ['matmul', a.matmul(b)], ['mm', a.select(0, 1).mm(b.select(0, 1))]]) {
          assert.equal(c.dtype, dtype);
          const got = values(c.to('float64'));
          const batches = what === 'mm' ? [1] : [0, 1, 2];
          batches.forEach((bi, q) => {
            for (let i = 0; i < M; i++) {
              for (let j = 0; j < N; j++) {
                let ref = 0;
                for (let k = 0; k < K; k++) ref += aw[(bi * M + i) * K + k] * bw[(bi * K + k) * N + j];
                const x = got[(q * M + i) * N + j];
                assert.ok(Math.abs(x - ref) <= eps * (Math.abs(ref) + 0.05), `${what} [${bi},${i},${j}] = ${x}, expected ${ref}`);
              }
            }
          });
        }
      });
    }
  }

  it('mixing devices or dtypes is an error', function () {
    const a = kd.ones([2, 2]);
    expectKdError(() => a.mm(kd.ones([2, 2], { dtype: 'float64' })), 'KD_DTYPE_MISMATCH');
    expectKdError(() => a.matmul(kd.ones([3])), 'KD_SHAPE_MISMATCH');
    expectKdError(() => a.matmul(2), 'KD_INVALID_TYPE');
  });
});
