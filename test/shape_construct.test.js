// shape_construct.test.js - the shape and construction ops (meshgrid, cartesianProd, tensorSplit,
// unflatten, rot90, fliplr/flipud, diagEmbed, blockDiag, kron, trilIndices/triuIndices,
// takeAlongDim, tensordot, cdist, cov, corrcoef, allclose, equal) against PyTorch
// (test/fixtures/shape_construct.json), plus what fixtures cannot say: JS call forms (spread
// tensors or one list, options objects, tensordot's dims), views sharing storage (tensorSplit,
// unflatten, meshgrid) and copies not sharing it, JS booleans from allclose/equal, and large
// inputs against float64 references (cdist's matmul path, kron, cov, trilIndices).
'use strict';

const { kd, assert, fixture, runOpCase, buildArg, callOp, assertTensorClose, values, expectKdError, decode, collectGarbage } = require('./helpers');

// runOpCase, except for ops returning a list of tensors (compared one by one) or a boolean.
function runCase(c) {
  if (c.error) return runOpCase(c);
  const isList = Array.isArray(c.expected);
  const isBool = !isList && c.expected && 'scalar' in c.expected;
  if (!isList && !isBool) return runOpCase(c);
  const r = callOp(c, c.args.map(buildArg));
  if (isBool) {
    assert.strictEqual(r, decode(c.expected.scalar), `${c.name}: expected the JS boolean ${c.expected.scalar}`);
    return;
  }
  assert.ok(Array.isArray(r), `${c.name}: expected an array of tensors`);
  assert.equal(r.length, c.expected.length, `${c.name}: number of tensors`);
  c.expected.forEach((e, i) => assertTensorClose(r[i], e, `${c.name} [${i}]`));
}

describe('shape and construction ops (PyTorch fixtures)', function () {
  const groups = new Map();
  for (const c of fixture('shape_construct')) {
    if (!groups.has(c.op)) groups.set(c.op, []);
    groups.get(c.op).push(c);
  }
  for (const [op, list] of groups) {
    describe(op, function () {
      for (const c of list) it(c.name + (c.form !== 'function' ? ` [${c.form}]` : ''), function () { runCase(c); });
    });
  }
});

// A deterministic float64 matrix (an LCG) as nested JS arrays, and its tensor in `dtype`.
function lcgData(rows, cols, seed) {
  let s = seed >>> 0;
  const next = () => { s = (Math.imul(1664525, s) + 1013904223) >>> 0; return s / 4294967296 * 4 - 2; };
  return Array.from({ length: rows }, () => Array.from({ length: cols }, next));
}
const flat = (a) => a.flat(Infinity);

describe('shape and construction ops: API details', function () {
  const x = () => kd.arange(12, { dtype: 'float32' }).reshape([3, 4]);

  it('meshgrid, cartesianProd and blockDiag take spread tensors or one list, and options', function () {
    const a = kd.tensor([1, 2, 3]);
    const b = kd.tensor([4, 5]);
    assert.deepEqual(kd.meshgrid(a, b).map((t) => t.shape), [[3, 2], [3, 2]]);
    assert.deepEqual(kd.meshgrid([a, b]).map((t) => t.shape), [[3, 2], [3, 2]]);
    assert.deepEqual(kd.meshgrid(a, b, { indexing: 'xy' }).map((t) => t.shape), [[2, 3], [2, 3]]);
    assert.deepEqual(kd.meshgrid([a, b], { indexing: 'xy' }).map((t) => t.shape), [[2, 3], [2, 3]]);
    assert.deepEqual(kd.meshgrid({ tensors: [a, b], indexing: 'xy' })[1].arraySync(), [[4, 4, 4], [5, 5, 5]]);
    assert.deepEqual(kd.cartesianProd(a, b).arraySync(), kd.cartesianProd([a, b]).arraySync());
    assert.deepEqual(kd.blockDiag(a, b).shape, [2, 5]);
    assert.deepEqual(kd.blockDiag([a, b]).shape, [2, 5]);
    const none = kd.blockDiag();
    assert.deepEqual([none.shape, none.dtype], [[1, 0], 'float32']);
    expectKdError(() => kd.meshgrid(), 'KD_INVALID_ARGUMENT');
    expectKdError(() => kd.meshgrid(a, 3), 'KD_INVALID_TYPE');
  });

  it('tensorSplit: an int is a number of sections, a list (or 1-D tensor) the split indices', function () {
    const t = kd.arange(7);
    assert.deepEqual(kd.tensorSplit(t, 3).map((p) => p.shape), [[3], [2], [2]]);
    assert.deepEqual(kd.tensorSplit(t, [3]).map((p) => p.shape), [[3], [4]]);
    assert.deepEqual(t.tensorSplit(kd.tensor(3)).map((p) => p.shape), [[3], [2], [2]]);
    assert.deepEqual(t.tensorSplit(kd.tensor([3])).map((p) => p.shape), [[3], [4]]);
    assert.deepEqual(kd.tensorSplit(x(), { indicesOrSections: [1], dim: 1 }).map((p) => p.shape), [[3, 1], [3, 3]]);
  });

  it('tensordot takes an int, a pair of lists or of dims, a tensor, or {dims}', function () {
    const a = kd.arange(24, { dtype: 'float64' }).reshape([2, 3, 4]);
    const b = kd.arange(24, { dtype: 'float64' }).reshape([3, 4, 2]);
    const ref = kd.einsum('ijk,jkl->il', [a, b]).arraySync();
    assert.deepEqual(kd.tensordot(a, b).arraySync(), ref);
    assert.deepEqual(kd.tensordot(a, b, 2).arraySync(), ref);
    assert.deepEqual(kd.tensordot(a, b, { dims: 2 }).arraySync(), ref);
    assert.deepEqual(kd.tensordot(a, b, [[1, 2], [0, 1]]).arraySync(), ref);
    assert.deepEqual(kd.tensordot(a, b, kd.tensor([[1, 2], [0, 1]])).arraySync(), ref);
    assert.deepEqual(kd.tensordot(a, b, kd.tensor(2)).arraySync(), ref);
    assert.deepEqual(kd.tensordot(a, b, [2, 1]).shape, [2, 3, 3, 2]);
    expectKdError(() => kd.tensordot(a, b, -1), 'KD_INVALID_ARGUMENT');
    expectKdError(() => kd.tensordot(a, b, 'all'), 'KD_INVALID_TYPE');
    expectKdError(() => kd.tensordot(a, b, 2, { dim: 1 }), 'KD_INVALID_TYPE');
  });

  it('options objects: rot90, diagEmbed, cdist, cov, allclose, takeAlongDim', function () {
    const t = x();
    assert.deepEqual(kd.rot90(t, { k: 2, dims: [1, 0] }).arraySync(), kd.rot90(t, 2).arraySync());
    assert.deepEqual(t.diagEmbed({ offset: 1 }).shape, [3, 5, 5]);
    assert.deepEqual(kd.cdist(t, t, { p: 1, computeMode: 'donot_use_mm_for_euclid_dist' }).arraySync()[0], [0, 16, 32]);
    expectKdError(() => kd.cdist(t, t, { computeMode: 'sometimes' }), 'KD_INVALID_ARGUMENT');
    // PyTorch's cdist(x1, x2, p, compute_mode) takes compute_mode positionally too
    assert.deepEqual(kd.cdist(t, t, 1, 'donot_use_mm_for_euclid_dist').arraySync()[0], [0, 16, 32]);
    expectKdError(() => kd.cdist(t, t, 2, 'sometimes'), 'KD_INVALID_ARGUMENT');
    assert.deepEqual(t.cov({ correction: 0, fweights: kd.tensor([1, 1, 1, 1]) }).shape, [3, 3]);
    assert.strictEqual(kd.allclose(t, t.add(1e-3), { atol: 1e-2 }), true);
    assert.deepEqual(t.takeAlongDim(kd.tensor([[3], [2], [1]]), { dim: 1 }).arraySync(), [[3], [6], [9]]);
    assert.deepEqual(kd.unflatten(t, { dim: 1, sizes: [2, 2] }).shape, [3, 2, 2]);
  });

  it('allclose and equal return JS booleans and leave no tensor behind', function () {
    const a = x();
    const b = x();
    const b1 = b.add(1);
    const b43 = b.reshape([4, 3]);
    const nan = kd.tensor([NaN]);
    const live = collectGarbage().liveTensors;
    assert.strictEqual(kd.allclose(a, b), true);
    assert.strictEqual(a.allclose(b1), false);
    assert.strictEqual(kd.equal(a, b), true);
    assert.strictEqual(a.equal(b43), false);
    assert.strictEqual(kd.equal(nan, nan), false);
    assert.strictEqual(kd.allclose(nan, nan, { equalNan: true }), true);
    assert.strictEqual(kd.memory().liveTensors, live);
  });

  it('tensorSplit, unflatten and meshgrid return views; the other ops copy', function () {
    const t = x();
    const [p0, p1] = kd.tensorSplit(t, 2, 1);
    p1.fill_(-1);
    assert.deepEqual(values(t).slice(0, 4), [0, 1, -1, -1]);
    p0.select(1, 0).fill_(-2);
    assert.deepEqual(values(t).slice(0, 4), [-2, 1, -1, -1]);
    const u = t.unflatten(1, [2, 2]);
    u.select(1, 1).fill_(7);
    assert.deepEqual(values(t).slice(0, 4), [-2, 1, 7, 7]);
    const v = kd.tensor([1, 2, 3]);
    const [g0] = kd.meshgrid(v, kd.tensor([1, 2]));
    assert.deepEqual(g0.stride(), [1, 0]);
    v.fill_(9);
    assert.deepEqual(values(g0), [9, 9, 9, 9, 9, 9]);
    kd.cartesianProd(v).fill_(4); // one tensor: itself, as PyTorch
    assert.deepEqual(values(v), [4, 4, 4]);
    const before = values(t);
    for (const c of [kd.rot90(t, 0), kd.rot90(t), kd.fliplr(t), kd.flipud(t), kd.kron(t, kd.ones([1])), kd.blockDiag(t),
      kd.diagEmbed(t), kd.takeAlongDim(t, kd.tensor([[0]]), 1)]) {
      c.fill_(100);
      assert.deepEqual(values(t), before);
    }
  });

  it('hostile integers are errors, never crashes or wrong shapes', function () {
    const t = x();
    const MIN = -9223372036854775808n;
    const MAX = 9223372036854775807n;
    expectKdError(() => kd.rot90(t, 1, [MIN, 1]), 'KD_INVALID_ARGUMENT');
    expectKdError(() => kd.rot90(t, 1, [1, MAX]), 'KD_INVALID_ARGUMENT');
    assert.deepEqual(kd.rot90(t, MAX).shape, [4, 3]);
    const big = kd.zeros(Array(16).fill(1));
    expectKdError(() => kd.tensordot(big, big, [Array(16).fill(0), Array(16).fill(0)]), 'KD_INVALID_ARGUMENT');
    expectKdError(() => kd.unflatten(t, 1, [2n ** 62n, 4]), 'KD_SHAPE_MISMATCH');
    expectKdError(() => kd.unflatten(t, 1, [MAX, MAX]), 'KD_SHAPE_MISMATCH');
    expectKdError(() => kd.tensorSplit(t, 2 ** 40), 'KD_INVALID_ARGUMENT');
    expectKdError(() => kd.trilIndices(2 ** 40, 2 ** 40), 'KD_INVALID_ARGUMENT');
    expectKdError(() => kd.triuIndices(MAX, 2), 'KD_INVALID_ARGUMENT');
    expectKdError(() => kd.diagEmbed(t, MAX), 'KD_INVALID_ARGUMENT');
    expectKdError(() => kd.diagEmbed(t, MIN), 'KD_INVALID_ARGUMENT');
    for (const correction of [MIN, MAX]) {
      const c = values(kd.cov(t, { correction }));
      assert.equal(c.length, 9);
    }
  });

  it('cdist: the matmul path (more than 25 rows) matches a float64 reference on a large input', function () {
    const A = lcgData(300, 16, 1);
    const B = lcgData(200, 16, 2);
    const d = kd.cdist(kd.tensor(A), kd.tensor(B)); // float32, mm path
    const d64 = kd.cdist(kd.tensor(A, { dtype: 'float64' }), kd.tensor(B, { dtype: 'float64' }),
      { computeMode: 'donot_use_mm_for_euclid_dist' });
    const got = values(d);
    const ref = [];
    for (const a of A) for (const b of B) ref.push(Math.sqrt(a.reduce((s, ai, k) => s + (ai - b[k]) ** 2, 0)));
    got.forEach((g, i) => assert.ok(Math.abs(g - ref[i]) <= 1e-4 + 1e-4 * ref[i], `[${i}] ${g} vs ${ref[i]}`));
    values(d64).forEach((g, i) => assert.ok(Math.abs(g - ref[i]) <= 1e-12 * (1 + ref[i]), `[${i}] ${g} vs ${ref[i]}`));
    const p1 = values(kd.cdist(kd.tensor(A, { dtype: 'float64' }), kd.tensor(B, { dtype: 'float64' }), 1));
    const ref1 = [];
    for (const a of A) for (const b of B) ref1.push(a.reduce((s, ai, k) => s + Math.abs(ai - b[k]), 0));
    p1.forEach((g, i) => assert.ok(Math.abs(g - ref1[i]) <= 1e-12 * (1 + ref1[i])));
  });

  it('cdist: the norm path in blocks of rows (differences over 2^24 elements) matches a float64 reference', function () {
    const A = lcgData(1100, 16, 11);
    const B = lcgData(1000, 16, 12);
    const got = values(kd.cdist(kd.tensor(A, { dtype: 'float64' }), kd.tensor(B, { dtype: 'float64' }), 3));
    assert.equal(got.length, 1100 * 1000);
    for (let i = 0; i < 1100; i += 3) {
      for (let j = 0; j < 1000; j += 5) {
        const r = A[i].reduce((acc, v, k) => acc + Math.abs(v - B[j][k]) ** 3, 0) ** (1 / 3);
        assert.ok(Math.abs(got[i * 1000 + j] - r) <= 1e-12 * (1 + r), `[${i}, ${j}] ${got[i * 1000 + j]} vs ${r}`);
      }
    }
  });

  it('kron, tensordot, cov and takeAlongDim match float64 references on inputs across the parallel grain', function () {
    const A = lcgData(40, 50, 3);
    const B = lcgData(30, 20, 4);
    const k = values(kd.kron(kd.tensor(A), kd.tensor(B)));
    assert.equal(k.length, 1200 * 1000);
    for (let i = 0; i < 1200; i += 7) {
      for (let j = 0; j < 1000; j += 13) {
        const r = A[Math.floor(i / 30)][Math.floor(j / 20)] * B[i % 30][j % 20];
        assert.ok(Math.abs(k[i * 1000 + j] - r) <= 1e-6 * (1 + Math.abs(r)));
      }
    }
    // tensordot over two dims: [64, 50] x [50, 30] after folding, against a float64 loop
    const P = lcgData(64, 50, 5);
    const Q = lcgData(50, 30, 6);
    const td = values(kd.tensordot(kd.tensor(P).reshape([64, 5, 10]), kd.tensor(Q).reshape([5, 10, 30]), 2));
    for (let i = 0; i < 64; i++) {
      for (let j = 0; j < 30; j++) {
        let r = 0;
        for (let c = 0; c < 50; c++) r += P[i][c] * Q[c][j];
        assert.ok(Math.abs(td[i * 30 + j] - r) <= 1e-4 * (1 + Math.abs(r)), `[${i}, ${j}] ${td[i * 30 + j]} vs ${r}`);
      }
    }
    // cov of 6 variables over 6000 observations
    const X = lcgData(6, 6000, 7);
    const c = values(kd.cov(kd.tensor(X)));
    const mean = X.map((row) => row.reduce((s, v) => s + v, 0) / row.length);
    for (let i = 0; i < 6; i++) {
      for (let j = 0; j < 6; j++) {
        let r = 0;
        for (let o = 0; o < 6000; o++) r += (X[i][o] - mean[i]) * (X[j][o] - mean[j]);
        r /= 5999;
        assert.ok(Math.abs(c[i * 6 + j] - r) <= 1e-5 * (1 + Math.abs(r)), `cov[${i}, ${j}] ${c[i * 6 + j]} vs ${r}`);
      }
    }
    // corrcoef in float16 against float64 (half precision steps: a few half ulps)
    const cc = values(kd.corrcoef(kd.tensor(X.map((r) => r.slice(0, 50)), { dtype: 'float16' })));
    const cc64 = values(kd.corrcoef(kd.tensor(X.map((r) => r.slice(0, 50)), { dtype: 'float64' })));
    cc.forEach((g, i) => assert.ok(Math.abs(g - cc64[i]) <= 4e-3, `corrcoef float16 [${i}] ${g} vs ${cc64[i]}`));
    // takeAlongDim with 300 x 400 random indices
    const src = kd.tensor(lcgData(300, 400, 8));
    const ix = kd.randint(0, 400, [300, 400]);
    const got = values(kd.takeAlongDim(src, ix, 1));
    const sv = values(src);
    const iv = values(ix);
    got.forEach((g, i) => assert.equal(g, sv[Math.floor(i / 400) * 400 + iv[i]]));
  });

  it('trilIndices and triuIndices match a row-by-row reference on large matrices', function () {
    for (const [rows, cols, off] of [[700, 900, 17], [900, 700, -300], [1, 50000, 3], [1000, 1, 0]]) {
      for (const lower of [true, false]) {
        const t = (lower ? kd.trilIndices : kd.triuIndices)(rows, cols, off);
        const v = values(t);
        const n = v.length / 2;
        let k = 0;
        let ok = true;
        for (let r = 0; r < rows && ok; r++) {
          const first = lower ? 0 : Math.max(0, r + off);
          const end = lower ? Math.min(cols, r + off + 1) : cols;
          for (let c2 = first; c2 < end; c2++, k++) if (v[k] !== r || v[n + k] !== c2) { ok = false; break; }
        }
        assert.ok(ok && k === n, `${lower ? 'tril' : 'triu'}Indices(${rows}, ${cols}, ${off}) differs at ${k}`);
      }
    }
  });

  it('on a GPU: trilIndices/triuIndices are made on the device and equal the CPU\'s', function () {
    if (!kd.cuda.isAvailable()) this.skip();
    for (const [rows, cols, off] of [[5, 7, 0], [7, 5, -2], [300, 200, 40], [3, 3, 9], [3, 3, -9], [0, 3, 0]]) {
      for (const f of [kd.trilIndices, kd.triuIndices]) {
        for (const dtype of ['int64', 'int32']) {
          const g = f(rows, cols, off, { dtype, device: 'cuda' });
          assert.ok(String(g.device).startsWith('cuda'));
          assert.deepEqual(g.cpu().arraySync(), f(rows, cols, off, { dtype }).arraySync());
        }
      }
    }
  });
});
