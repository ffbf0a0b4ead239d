// linalg.test.js - addmm/baddbmm/addbmm/dot/vdot/mv/outer/linear/einsum against PyTorch
// (test/fixtures/linalg.json), plus JS call forms (kd.linear and kd.nn.functional.linear,
// alpha/beta options, einsum's list), a float64 reference for a big product with a bias, and
// einsum agreeing with matmul on the attention contractions.
'use strict';

const { kd, assert, parityTests, values, expectKdError } = require('./helpers');

parityTests('linalg', 'linear algebra (PyTorch fixtures)');

function rand(shape, seed, dtype = 'float64') {
  const n = shape.reduce((a, b) => a * b, 1);
  const v = new Array(n);
  let s = seed;
  for (let i = 0; i < n; i++) {
    s = (1664525 * s + 1013904223) >>> 0;
    v[i] = s / 4294967296 - 0.5;
  }
  return { t: kd.tensor(v, { dtype }).reshape(shape), v };
}

describe('linear algebra: API details', function () {
  it('linear lives in kd and kd.nn.functional; addmm takes alpha/beta options', function () {
    assert.equal(kd.linear, kd.nn.functional.linear);
    const x = kd.ones([2, 3]);
    const w = kd.ones([4, 3]);
    assert.deepEqual(values(kd.nn.functional.linear(x, w, kd.ones([4]))), new Array(8).fill(4));
    assert.deepEqual(values(kd.linear(x, w, null)), new Array(8).fill(3));
    assert.deepEqual(values(kd.ones([4]).addmm(x, w.t(), { beta: -1, alpha: 2 })), new Array(8).fill(5));
    assert.deepEqual(kd.einsum('ij,jk->ik', [x, w.t()]).shape, [2, 4]);
  });

  it("einsum takes its operands as varargs or as one list, as torch.einsum(eq, *operands)", function () {
    const a = kd.tensor([[1, 2], [3, 4]]);
    const b = kd.tensor([[5, 6], [7, 8]]);
    assert.deepEqual(values(kd.einsum('ij,jk->ik', a, b)), [19, 22, 43, 50]);
    assert.deepEqual(values(kd.einsum('ij,jk->ik', [a, b])), [19, 22, 43, 50]);
    assert.deepEqual(values(kd.einsum('ij->', a)), [10]);
    assert.deepEqual(values(kd.einsum('i,i,i->', a.select(0, 0), b.select(0, 0), a.select(0, 1))), [1 * 5 * 3 + 2 * 6 * 4]);
    assert.match(expectKdError(() => kd.einsum('ij,jk->ik', a, 2), 'KD_INVALID_TYPE').message, /element 1 is/);
  });

  it('a big linear with bias matches a float64 reference (gemm with beta = 1)', function () {
    const M = 130, K = 70, N = 90;
    const x = rand([M, K], 1);
    const w = rand([N, K], 2);
    const b = rand([N], 3);
    const y = values(kd.linear(x.t, w.t, b.t));
    for (const [i, j] of [[0, 0], [M - 1, N - 1], [65, 33], [1, 89]]) {
      let s = b.v[j];
      for (let k = 0; k < K; k++) s += x.v[i * K + k] * w.v[j * K + k];
      assert.ok(Math.abs(y[i * N + j] - s) < 1e-12, `y[${i}][${j}] = ${y[i * N + j]}, expected ${s}`);
    }
  });

  it('einsum agrees with matmul on attention and bilinear contractions', function () {
    const q = rand([2, 3, 5, 8], 4, 'float32').t;
    const k = rand([2, 3, 7, 8], 5, 'float32').t;
    const v = rand([2, 3, 7, 8], 6, 'float32').t;
    const s1 = values(kd.einsum('bhqd,bhkd->bhqk', [q, k]));
    const s2 = values(q.matmul(k.transpose(-1, -2)));
    s1.forEach((x, i) => assert.ok(Math.abs(x - s2[i]) < 1e-5));
    const p = kd.einsum('bhqd,bhkd->bhqk', [q, k]);
    const o1 = values(kd.einsum('bhqk,bhkd->bhqd', [p, v]));
    const o2 = values(p.matmul(v));
    o1.forEach((x, i) => assert.ok(Math.abs(x - o2[i]) < 1e-5));
    const x1 = rand([4, 3], 7).t;
    const A = rand([3, 5], 8).t;
    const x2 = rand([4, 5], 9).t;
    const bl = values(kd.einsum('bi,ij,bj->b', [x1, A, x2]));
    const ref = values(x1.matmul(A).mul(x2).sum(1));
    bl.forEach((x, i) => assert.ok(Math.abs(x - ref[i]) < 1e-12));
  });

  it('einsum of a permutation or a diagonal is a view', function () {
    const a = kd.arange(9, { dtype: 'float32' }).reshape([3, 3]);
    kd.einsum('ii->i', [a]).fill_(0);
    kd.einsum('ij->ji', [a]).select(0, 1).fill_(-1);
    assert.deepEqual(values(a), [0, -1, 2, 3, -1, 5, 6, -1, 0]);
  });

  it('bad arguments are errors, never crashes', function () {
    expectKdError(() => kd.einsum('ij', []), ['KD_INVALID_ARGUMENT']);
    expectKdError(() => kd.einsum('i...j..', [kd.ones([2, 2])]), ['KD_INVALID_ARGUMENT']);
    expectKdError(() => kd.einsum('abcdefghijklmnopq', [kd.ones([1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1])]),
      ['KD_INVALID_ARGUMENT', 'KD_SHAPE_MISMATCH']);
    expectKdError(() => kd.addmm(kd.ones([2]), kd.ones([2, 2]), kd.ones([2, 2]), { beta: 'x' }), ['KD_INVALID_TYPE']);
    expectKdError(() => kd.linear(kd.ones([2, 3]), kd.ones([2, 2, 3])), ['KD_SHAPE_MISMATCH', 'KD_INVALID_ARGUMENT']);
  });
});
