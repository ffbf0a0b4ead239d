// shape.test.js - the shape ops against PyTorch (test/fixtures/shape.json: every dtype,
// non-contiguous inputs, 0-d and empty tensors, errors), plus what fixtures cannot say:
// JS call forms, views sharing storage (unfold, diagonal, movedim), copies not sharing it
// (repeat, flip, cat), in-place tril_/triu_, and large inputs across the parallel grain.
'use strict';

const { kd, assert, fixture, runOpCase, buildArg, callOp, assertTensorClose, values, expectKdError } = require('./helpers');

// runOpCase, except for ops returning a list of tensors (split, unbind), compared one by one.
function runShapeCase(c) {
  if (c.error || c.tuple || !Array.isArray(c.expected)) return runOpCase(c);
  const r = callOp(c, c.args.map(buildArg));
  assert.ok(Array.isArray(r), `${c.name}: expected an array of tensors`);
  assert.equal(r.length, c.expected.length, `${c.name}: number of tensors`);
  c.expected.forEach((e, i) => assertTensorClose(r[i], e, `${c.name} [${i}]`));
}

describe('shape ops (PyTorch fixtures)', function () {
  const groups = new Map();
  for (const c of fixture('shape')) {
    if (!groups.has(c.op)) groups.set(c.op, []);
    groups.get(c.op).push(c);
  }
  for (const [op, list] of groups) {
    describe(op, function () {
      for (const c of list) it(c.name + (c.form !== 'function' ? ` [${c.form}]` : ''), function () { runShapeCase(c); });
    });
  }
});

describe('shape ops: API details', function () {
  it('call forms: options objects, varargs repeat, list splits', function () {
    const a = kd.arange(6, { dtype: 'float32' }).reshape([2, 3]);
    assert.deepEqual(kd.cat([a, a], { dim: 1 }).shape, [2, 6]);
    assert.deepEqual(kd.stack({ tensors: [a, a], dim: 2 }).shape, [2, 3, 2]);
    assert.deepEqual(a.repeat(2, 2).shape, [4, 6]);
    assert.deepEqual(a.repeat([1, 2]).shape, [2, 6]);
    assert.deepEqual(a.split([1, 2], 1).map((t) => t.shape), [[2, 1], [2, 2]]);
    assert.deepEqual(values(a.roll({ shifts: 1 })), [5, 0, 1, 2, 3, 4]);
    assert.deepEqual(values(a.tril({ diagonal: -1 })), [0, 0, 0, 3, 0, 0]);
    assert.deepEqual(kd.repeatInterleave(kd.tensor([1, 2]), kd.tensor([2, 1])).shape, [3]);
  });

  it('views share storage; copies do not', function () {
    const a = kd.arange(12, { dtype: 'float32' }).reshape([3, 4]);
    const d = a.diagonal();
    d.fill_(-1);
    assert.deepEqual(values(a).slice(0, 6), [-1, 1, 2, 3, 4, -1]);
    const u = a.unfold(1, 2, 2);
    assert.deepEqual(u.shape, [3, 2, 2]);
    u.select(0, 2).fill_(7);
    assert.deepEqual(values(a).slice(8), [7, 7, 7, 7]);
    const m = kd.movedim(a, 0, 1);
    assert.deepEqual(m.stride(), [1, 4]);
    for (const copy of [a.repeat(1, 1), a.flip([0]), kd.cat([a]), kd.roll(a, 0, 0), kd.tril(a)]) {
      copy.fill_(100);
      assert.notEqual(values(a)[1], 100);
    }
  });

  it('tril_/triu_ keep identity and bump the version', function () {
    const a = kd.ones([3, 3]);
    const v0 = a.version;
    assert.equal(a.triu_(1), a);
    assert.ok(a.version > v0);
    assert.deepEqual(values(a), [0, 1, 1, 0, 0, 1, 0, 0, 0]);
  });

  it('large inputs (parallel paths) match a JS reference', function () {
    const n = 300;
    const a = kd.arange(n * n, { dtype: 'float64' }).reshape([n, n]);
    const t = values(kd.tril(a.t(), 3));
    const f = values(a.flip([1]));
    const c = values(kd.cat([a.t(), a], 1));
    for (const [i, j] of [[0, 0], [5, 9], [9, 5], [299, 0], [17, 20], [150, 153], [150, 154]]) {
      assert.equal(t[i * n + j], j <= i + 3 ? j * n + i : 0, `tril[${i}][${j}]`);
      assert.equal(f[i * n + j], i * n + (n - 1 - j), `flip[${i}][${j}]`);
      assert.equal(c[i * 2 * n + j], j * n + i, `cat[${i}][${j}]`);
      assert.equal(c[i * 2 * n + n + j], i * n + j, `cat[${i}][${n + j}]`);
    }
  });

  it('bad arguments are errors, never crashes', function () {
    expectKdError(() => kd.cat([]), ['KD_INVALID_ARGUMENT']);
    expectKdError(() => kd.stack([]), ['KD_INVALID_ARGUMENT']);
    expectKdError(() => kd.ones([2]).unfold(0, 3, 1), ['KD_INVALID_ARGUMENT']);
    expectKdError(() => kd.ones([2]).unfold(0, -1, 1), ['KD_INVALID_ARGUMENT']);
    expectKdError(() => kd.repeatInterleave(kd.ones([2]), kd.ones([2])), ['KD_DTYPE_MISMATCH']);
    expectKdError(() => kd.cat([kd.ones([2])], 'x'), ['KD_INVALID_TYPE']);
  });
});

describe('shape ops: backward helpers (kd._internal)', function () {
  it('diagonalBackward, unfoldBackward and catBackward', function () {
    const g = kd.tensor([1, 2], { dtype: 'float32' });
    assert.deepEqual(values(kd._internal.diagonalBackward(g, [2, 3], 1, 0, 1)), [0, 1, 0, 0, 0, 2]);
    const gu = kd.ones([3, 3]);
    assert.deepEqual(values(kd._internal.unfoldBackward(gu, [5], 0, 3, 1)), [1, 2, 3, 2, 1]);
    const parts = kd._internal.catBackward(kd.arange(5, { dtype: 'float32' }), [kd.ones([2]), kd.zeros([0]), kd.ones([3])], 0);
    assert.deepEqual(parts.map((p) => values(p)), [[0, 1], [], [2, 3, 4]]);
  });
});

describe('shape ops: dim lists longer than any tensor', function () {
  // movedim stored every wrapped dim in 16-element arrays before checking for repeats
  it('movedim with 17 dims is PyTorch\'s repeated-dim error', function () {
    const err = expectKdError(() => kd.ones([2, 3]).movedim(new Array(17).fill(0), new Array(17).fill(1)), 'KD_INVALID_ARGUMENT');
    assert.match(err.message, /^movedim: repeated dim in `source` \(\[0, 0, 0/);
    assert.equal(expectKdError(() => kd.ones([2, 3]).movedim([0, 1, 0], [1, 0, 1]), 'KD_INVALID_ARGUMENT').message,
      'movedim: repeated dim in `source` ([0, 1, 0])');
    assert.deepEqual(kd.ones([2, 3]).movedim([0], [1]).shape, [3, 2]);
  });
});
