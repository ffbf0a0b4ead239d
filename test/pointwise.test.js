// pointwise.test.js - every pointwise op against PyTorch (test/fixtures/pointwise.json): each
// dtype, broadcasting, non-contiguous inputs (transposed, step-sliced, expanded, permuted),
// 0-d and empty tensors, NaN/Inf, JS-number scalars, mixed dtypes, in-place forms (also on
// views, whose writes must reach the base), alpha and rounding modes, kd.where.
'use strict';

const { kd, assert, fixture, runOpCase, values, expectKdError } = require('./helpers');

describe('pointwise ops (PyTorch fixtures)', function () {
  const cases = fixture('pointwise');
  const groups = new Map();
  for (const c of cases) {
    const key = c.op;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(c);
  }
  for (const [op, list] of groups) {
    describe(op, function () {
      for (const c of list) it(c.name + (c.form !== 'function' ? ` [${c.form}]` : ''), function () { runOpCase(c); });
    });
  }
});

describe('pointwise ops: API details', function () {
  it('function, method and options forms agree', function () {
    const a = kd.tensor([1, 2, 3], { dtype: 'float32' });
    const b = kd.tensor([10, 20, 30], { dtype: 'float32' });
    assert.deepEqual(values(kd.add(a, b, { alpha: 2 })), [21, 42, 63]);
    assert.deepEqual(values(a.add(b, { alpha: 2 })), [21, 42, 63]);
    assert.deepEqual(values(a.add({ other: b, alpha: -1 })), [-9, -18, -27]);
    assert.deepEqual(values(a.sub(b, { alpha: 0.5 })), [-4, -8, -12]);
  });

  it('in-place ops bump the version and keep identity', function () {
    const a = kd.ones([3]);
    const v0 = a.version;
    const r = a.mul_(3).add_(1);
    assert.equal(r, a);
    assert.ok(a.version > v0, 'version counter bumped by in-place ops');
    assert.deepEqual(values(a), [4, 4, 4]);
  });

  it('in-place op through an expanded (stride 0) self is refused or well-defined', function () {
    // PyTorch: "unsupported operation: more than one element of the written-to tensor refers
    // to a single memory location. Please clone() the tensor before performing the operation."
    const base = kd.tensor([1, 2], { dtype: 'float32' });
    const e = base.unsqueeze(0).expand([3, 2]);
    expectKdError(() => e.add_(1), ['KD_INVALID_ARGUMENT', 'KD_NOT_SUPPORTED'], 'add_ on expanded self');
  });

  it('scalar first operand via kd.where scalars and tensor/boolean scalars', function () {
    const c = kd.tensor([true, false, true]);
    const r = kd.where(c, 1, 0);
    assert.equal(r.dtype, 'int64');
    assert.deepEqual(values(r), [1, 0, 1]);
    const r2 = kd.where(c, kd.tensor([1.5, 2.5, 3.5]), -1);
    assert.equal(r2.dtype, 'float32');
    assert.deepEqual(values(r2), [1.5, -1, 3.5]);
  });

  it('a result of an op on a view does not alias the base', function () {
    const base = kd.tensor([[1, 2], [3, 4]], { dtype: 'float32' });
    const r = base.t().mul(2);
    r.fill_(0);
    assert.deepEqual(values(base), [1, 2, 3, 4]);
  });

  it('ops on large tensors (parallel paths) match a JS reference', function () {
    const n = 1 << 17;
    const x = kd.arange(n, { dtype: 'float32' }).div(n);
    const y = x.mul(x).add(x.neg().exp()).sigmoid();
    const xs = values(x);
    const ys = values(y);
    for (let i = 0; i < n; i += 997) {
      const ref = 1 / (1 + Math.exp(-(xs[i] * xs[i] + Math.exp(-xs[i]))));
      assert.ok(Math.abs(ys[i] - ref) < 1e-6, `element ${i}: ${ys[i]} vs ${ref}`);
    }
    // non-contiguous large: transposed 2-D
    const m = kd.arange(512 * 300, { dtype: 'float64' }).reshape([512, 300]);
    const s = m.t().add(m.t());
    const sv = values(s.contiguous());
    assert.equal(sv[1], 2 * 300); // s[0][1] = 2 * m[1][0]
    assert.equal(sv[300 * 0 + 511 + 512 * 7], 2 * (511 * 300 + 7));
  });
});
