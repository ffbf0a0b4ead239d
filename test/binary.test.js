// binary.test.js - the binary and ternary pointwise ops of src/ops/oplist/binary.js against
// PyTorch (test/fixtures/binary.json: every dtype, broadcasting, views, 0-d, empty, NaN/Inf,
// in-place forms, PyTorch's errors), plus what fixtures cannot say: call forms, overloads of
// clamp, in-place identity and version bumps, NaN number arguments, large (parallel) inputs
// against a float64 JS reference.
'use strict';

const { kd, assert, parityTests, values, expectKdError } = require('./helpers');

parityTests('binary', 'binary and ternary pointwise ops (PyTorch fixtures)');

/** n deterministic values in [-4, 4) (an LCG). */
function rand(n, seed = 1) {
  let s = seed >>> 0;
  const out = new Array(n);
  for (let i = 0; i < n; i++) {
    s = (Math.imul(1664525, s) + 1013904223) >>> 0;
    out[i] = (s / 4294967296) * 8 - 4;
  }
  return out;
}

describe('binary ops: API details', function () {
  it('clamp binds numbers, tensors, null and options', function () {
    const x = kd.tensor([-3, -1, 0, 2, 5], { dtype: 'float32' });
    assert.deepEqual(values(x.clamp(-1, 2)), [-1, -1, 0, 2, 2]);
    assert.deepEqual(values(kd.clamp(x, { max: 1 })), [-3, -1, 0, 1, 1]);
    assert.deepEqual(values(x.clamp(null, 1)), [-3, -1, 0, 1, 1]);
    assert.deepEqual(values(x.clamp(kd.zeros([5]))), [0, 0, 0, 2, 5]);
    assert.deepEqual(values(x.clamp(null, kd.zeros([5]))), [-3, -1, 0, 0, 0]);
    assert.deepEqual(values(x.clip({ min: 0 })), [0, 0, 0, 2, 5]);
    assert.deepEqual(values(x.clampMin(kd.tensor(1))), [1, 1, 1, 2, 5]);
    assert.deepEqual(values(x.clampMax(0)), [-3, -1, 0, 0, 0]);
    expectKdError(() => x.clamp(), 'KD_INVALID_ARGUMENT');
    expectKdError(() => x.clamp(0, kd.ones([5])), 'KD_INVALID_TYPE'); // number and tensor: no overload binds
  });

  it('NaN number bounds: clamp(min=NaN) alone keeps self (torch 1.13), clampMin(NaN) is NaN', function () {
    const x = kd.tensor([1, NaN, 3], { dtype: 'float32' });
    assert.ok(values(x.clamp(NaN)).every((v, i) => (i === 1 ? Number.isNaN(v) : v === [1, NaN, 3][i])));
    assert.ok(values(x.clamp(NaN, 2)).every(Number.isNaN));
    assert.ok(values(x.clampMin(NaN)).every(Number.isNaN));
    assert.ok(values(x.clampMax(NaN)).every(Number.isNaN));
    const m = kd.maskedFill(kd.zeros([3]), kd.tensor([true, false, true]), NaN);
    assert.ok(Number.isNaN(values(m)[0]) && values(m)[1] === 0);
  });

  it('in-place forms return self and bump the version', function () {
    const ops = [
      (t) => t.floorDivide_(2), (t) => t.remainder_(3), (t) => t.fmod_(3), (t) => t.atan2_(kd.onesLike(t)),
      (t) => t.hypot_(t), (t) => t.clamp_(0, 1), (t) => t.clampMin_(0), (t) => t.clampMax_(1),
      (t) => t.lerp_(kd.onesLike(t), 0.5), (t) => t.addcmul_(t, t), (t) => t.addcdiv_(t, kd.onesLike(t), { value: 2 }),
      (t) => t.maskedFill_(kd.tensor([true, false]), 7), (t) => t.logicalNot_(), (t) => t.logicalAnd_(t),
    ];
    for (const f of ops) {
      const t = kd.tensor([1.5, 2.5], { dtype: 'float32' });
      const v0 = t.version;
      assert.equal(f(t), t);
      assert.ok(t.version > v0, `${f}: version`);
    }
    const i = kd.tensor([6, 3], { dtype: 'int32' });
    assert.equal(i.bitwiseAnd_(5).bitwiseNot_().bitwiseXor_(1), i);
    assert.deepEqual(values(i), [~4 ^ 1, ~1 ^ 1]);
  });

  it('isclose positional and options forms', function () {
    const a = kd.tensor([1, 2, NaN]);
    const b = kd.tensor([1.05, 2, NaN]);
    assert.deepEqual(values(kd.isclose(a, b)), [false, true, false]);
    assert.deepEqual(values(kd.isclose(a, b, 0.1)), [true, true, false]);
    assert.deepEqual(values(a.isclose(b, { atol: 0.1, equalNan: true })), [true, true, true]);
  });

  it('maskedFill with a 0-d tensor value and a uint8 mask', function () {
    const x = kd.tensor([[1, 2], [3, 4]], { dtype: 'int32' });
    const r = x.maskedFill(kd.tensor([1, 0], { dtype: 'uint8' }), kd.tensor(9.7));
    assert.equal(r.dtype, 'int32');
    assert.deepEqual(values(r), [9, 2, 9, 4]);
    expectKdError(() => x.maskedFill(kd.tensor([1.0, 0.0]), 1), ['KD_DTYPE_MISMATCH', 'KD_INVALID_ARGUMENT']);
  });

  it('in place with an operand that overlaps self (a shifted view) reads the old values', function () {
    const base = kd.tensor([1, 2, 3, 4, 5], { dtype: 'float32' });
    const a = base.slice(0, 0, 4);
    const b = base.slice(0, 1, 5);
    a.lerp_(b, 0.5);
    assert.deepEqual(values(base), [1.5, 2.5, 3.5, 4.5, 5]);
    const c = kd.tensor([1, 2, 3, 4, 5], { dtype: 'float32' });
    c.slice(0, 1, 5).addcmul_(c.slice(0, 0, 4), c.slice(0, 0, 4));
    assert.deepEqual(values(c), [1, 3, 7, 13, 21]);
  });
});

describe('binary ops: large inputs (parallel paths) against a float64 reference', function () {
  const n = 100003;
  const xs = rand(n, 7);
  const ys = rand(n, 11).map((v) => (Math.abs(v) < 0.01 ? 0.5 : v));
  const zs = rand(n, 13);
  const x = kd.tensor(xs, { dtype: 'float64' });
  const y = kd.tensor(ys, { dtype: 'float64' });
  const z = kd.tensor(zs, { dtype: 'float64' });
  const pyMod = (a, b) => { const m = a % b; return m !== 0 && (m < 0) !== (b < 0) ? m + b : m; };
  const refs = {
    remainder: [() => kd.remainder(x, y), (i) => pyMod(xs[i], ys[i])],
    fmod: [() => kd.fmod(x, y), (i) => xs[i] % ys[i]],
    floorDivide: [() => kd.floorDivide(x, y), (i) => Math.floor(xs[i] / ys[i])],
    atan2: [() => kd.atan2(x, y), (i) => Math.atan2(xs[i], ys[i])],
    hypot: [() => kd.hypot(x, y), (i) => Math.hypot(xs[i], ys[i])],
    maximum: [() => kd.maximum(x, y), (i) => Math.max(xs[i], ys[i])],
    fmin: [() => kd.fmin(x, y), (i) => Math.min(xs[i], ys[i])],
    clamp: [() => kd.clamp(x, -1, 2), (i) => Math.min(Math.max(xs[i], -1), 2)],
    clampTensor: [() => kd.clamp(x, y, z), (i) => Math.min(Math.max(xs[i], ys[i]), zs[i])],
    lerp: [() => kd.lerp(x, y, z), (i) => (Math.abs(zs[i]) < 0.5 ? xs[i] + zs[i] * (ys[i] - xs[i])
      : ys[i] - (ys[i] - xs[i]) * (1 - zs[i]))],
    addcmul: [() => kd.addcmul(x, y, z, { value: 0.5 }), (i) => xs[i] + 0.5 * ys[i] * zs[i]],
    addcdiv: [() => kd.addcdiv(z, x, y, { value: 2 }), (i) => zs[i] + (2 * xs[i]) / ys[i]],
    maskedFill: [() => kd.maskedFill(x, y.gt(0), -9), (i) => (ys[i] > 0 ? -9 : xs[i])],
  };
  for (const [name, [f, ref]] of Object.entries(refs)) {
    it(name, function () {
      const r = values(f());
      assert.equal(r.length, n);
      for (let i = 0; i < n; i += 1) {
        const e = ref(i);
        if (!(Math.abs(r[i] - e) <= 1e-12 * Math.max(1, Math.abs(e)))) assert.fail(`${name}[${i}]: ${r[i]} vs ${e}`);
      }
    });
  }

  it('non-contiguous large float32 clamp and logicalXor', function () {
    const m = kd.tensor(xs.slice(0, 400 * 250), { dtype: 'float32' }).reshape([400, 250]);
    const t = m.t();
    const c = values(t.clamp(-1, 1).contiguous());
    const mv = values(m);
    for (let i = 0; i < 250; i += 7) {
      for (let j = 0; j < 400; j += 13) assert.equal(c[i * 400 + j], Math.min(Math.max(mv[j * 250 + i], -1), 1));
    }
    const lx = values(kd.logicalXor(t, t.gt(0)).contiguous());
    for (let i = 0; i < 250; i += 7) {
      for (let j = 0; j < 400; j += 13) assert.equal(lx[i * 400 + j], (mv[j * 250 + i] !== 0) !== (mv[j * 250 + i] > 0));
    }
  });
});
