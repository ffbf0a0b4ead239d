// pointwise.test.js - every pointwise op against PyTorch (test/fixtures/pointwise.json): each
// dtype, broadcasting, non-contiguous inputs (transposed, step-sliced, expanded, permuted),
// 0-d and empty tensors, NaN/Inf, JS-number scalars, mixed dtypes, in-place forms (also on
// views, whose writes must reach the base), alpha and rounding modes, kd.where.
'use strict';

const { kd, assert, parityTests, values, expectKdError, assertKdError } = require('./helpers');

parityTests('pointwise', 'pointwise ops (PyTorch fixtures)');

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

describe('pointwise ops: aliasing, int64 range, robustness', function () {
  it('full overlap in place is fine: a.mul_(a), a.add_(a)', function () {
    const a = kd.tensor([[1, 2], [3, 4]], { dtype: 'float32' });
    a.mul_(a);
    assert.deepEqual(values(a), [1, 4, 9, 16]);
    a.add_(a, { alpha: -0.5 });
    assert.deepEqual(values(a), [0.5, 2, 4.5, 8]);
  });

  it('partial overlap in place: refused like PyTorch, or computed as if the input were cloned first', function () {
    // PyTorch raises "unsupported operation: some elements of the input tensor and the
    // written-to tensor refer to a single memory location"; a silently wrong answer is the bug.
    const check = (what, make, run, expected) => {
      const { self, other } = make();
      let err = null;
      try { run(self, other); } catch (e) { err = e; }
      if (err !== null) {
        assertKdError(err, ['KD_INVALID_ARGUMENT', 'KD_NOT_SUPPORTED'], what);
        assert.match(err.message, /single memory location/, what);
      } else {
        assert.deepEqual(values(self.base), expected, `${what}: wrong values`);
      }
    };
    const sq = () => { const base = kd.tensor([[1, 2], [3, 4]], { dtype: 'float32' }); return { self: Object.assign(base, { base }), other: base.t() }; };
    check('a.add_(a.t())', sq, (s, o) => s.add_(o), [2, 5, 5, 8]);
    check('a.copy_(a.t())', sq, (s, o) => s.copy_(o), [1, 3, 2, 4]);
    check('a.mul_(a.t())', sq, (s, o) => s.mul_(o), [1, 6, 6, 16]);
    const shifted = () => {
      const base = kd.arange(6, { dtype: 'float32' });
      const self = base.narrow(0, 1, 4);
      self.base = base;
      return { self, other: base.narrow(0, 0, 4) };
    };
    check('v[1:5] += v[0:4]', shifted, (s, o) => s.add_(o), [0, 1, 3, 5, 7, 5]);
    check('v[1:5].copy_(v[0:4])', shifted, (s, o) => s.copy_(o), [0, 0, 1, 2, 3, 5]);
    const big = () => {
      const base = kd.arange(4096, { dtype: 'float64' });
      const self = base.narrow(0, 0, 4095);
      self.base = base;
      return { self, other: base.narrow(0, 1, 4095) };
    };
    const exp = Array.from({ length: 4096 }, (_, i) => (i < 4095 ? 2 * i + 1 : 4095));
    check('large v[0:n-1] += v[1:n]', big, (s, o) => s.add_(o), exp);
  });

  it('int64 keeps values beyond 2^53 through ops', function () {
    const big = 2n ** 60n + 3n;
    const t = kd.tensor(new BigInt64Array([big, -big]));
    assert.deepEqual(Array.from(t.add(1).dataSync()), [big + 1n, -big + 1n]);
    assert.deepEqual(Array.from(t.mul(2).dataSync()), [2n * big, -2n * big]);
    assert.deepEqual(Array.from(t.neg().dataSync()), [-big, big]);
    assert.deepEqual(Array.from(t.sum().dataSync()), [0n]);
    assert.deepEqual(Array.from(t.max().dataSync()), [big]);
    assert.deepEqual(Array.from(kd.tensor(new BigInt64Array([big])).sub(kd.tensor(new BigInt64Array([big - 5n]))).dataSync()), [5n]);
    assert.deepEqual(Array.from(t.eq(kd.tensor(new BigInt64Array([big + 1n, -big]))).dataSync()), [0, 1], 'comparison is exact, not via double');
    assert.deepEqual(Array.from(t.add(2n ** 40n).dataSync()), [big + 2n ** 40n, -big + 2n ** 40n], 'BigInt scalar');
  });

  it('integer division by zero and INT_MIN / -1 do not crash the process (child)', function () {
    const { spawnSync } = require('node:child_process');
    const path = require('node:path');
    const script = `
      const kd = require(${JSON.stringify(path.join(__dirname, '..'))});
      const out = [];
      const tryit = (f) => { try { const r = f(); out.push(Array.from(r.dataSync(), Number)); } catch (e) { out.push(e.code || String(e)); } };
      for (const dtype of ['int8', 'uint8', 'int16', 'int32', 'int64']) {
        tryit(() => kd.tensor([1, 2], { dtype }).div(0, { roundingMode: 'floor' }));
        tryit(() => kd.tensor([1, 2], { dtype }).div(kd.zeros([2], { dtype }), { roundingMode: 'trunc' }));
        tryit(() => kd.tensor([5], { dtype }).div(0));
      }
      tryit(() => kd.tensor([-2147483648], { dtype: 'int32' }).div(-1, { roundingMode: 'trunc' }));
      tryit(() => kd.tensor([-128], { dtype: 'int8' }).div(-1, { roundingMode: 'floor' }));
      tryit(() => kd.tensor(new BigInt64Array([-(2n ** 63n)])).div(-1, { roundingMode: 'floor' }));
      tryit(() => kd.tensor([NaN, Infinity, -Infinity, 1e20], { dtype: 'float32' }).to('int32'));
      tryit(() => kd.tensor([NaN, 1e300], { dtype: 'float64' }).to('int64'));
      console.log(JSON.stringify(out));`;
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 60000 });
    assert.equal(r.signal, null, `child killed by ${r.signal} (SIGFPE on integer division?)`);
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout.trim());
    for (let i = 0; i < 5; i++) {
      assert.equal(out[3 * i], 'KD_INVALID_ARGUMENT', 'integer floor division by zero: PyTorch raises ZeroDivisionError');
      assert.equal(out[3 * i + 1], 'KD_INVALID_ARGUMENT', 'integer trunc division by zero');
      assert.deepEqual(out[3 * i + 2], [null], 'int / 0 (true division) is inf, which JSON writes as null');
    }
    assert.deepEqual(out[15], [-2147483648], 'INT_MIN / -1 wraps');
    assert.deepEqual(out[16], [-128]);
  });

  it('NaN and Infinity scalars are float wrapped numbers', function () {
    const i = kd.tensor([1, 2], { dtype: 'int32' });
    const n = i.add(NaN);
    assert.equal(n.dtype, 'float32');
    assert.ok(values(n).every(Number.isNaN));
    assert.deepEqual(values(i.mul(Infinity)), [Infinity, Infinity]);
    assert.equal(kd.full([2], NaN).dtype, 'float32');
    assert.deepEqual(values(i.lt(Infinity)), [true, true]);
  });
});
