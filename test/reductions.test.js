// reductions.test.js - sum, mean, max, min (whole tensor and along a dim, returning
// [values, indices]), argmax against PyTorch (test/fixtures/reductions.json): every dtype,
// dim lists, negative dims, keepdim, dtype option, empty and 0-d inputs, NaN/Inf, ties,
// non-contiguous inputs.
'use strict';

const { kd, assert, fixture, runOpCase, values, expectKdError, buildArg, callOp, assertTensorClose, reductionLength } = require('./helpers');

// varMean/stdMean return [var, mean] arrays named .var/.mean (or .std/.mean), not
// values/indices as runOpCase expects of tuples.
const TUPLE_NAMES = { varMean: ['var', 'mean'], stdMean: ['std', 'mean'] };
function runCase(c) {
  const names = TUPLE_NAMES[c.op.split('.')[0]];
  if (!names || c.error) return runOpCase(c);
  const args = c.args.map(buildArg);
  const terms = reductionLength(c, args);
  const r = callOp(c, args);
  assert.ok(Array.isArray(r) && r.length === 2, `${c.name}: expected [${names}]`);
  names.forEach((n, i) => assert.equal(r[n], r[i], `${c.name}: .${n}`));
  c.expected.forEach((e, i) => assertTensorClose(r[i], e, `${c.name} [${i}]`, { terms }));
}

describe('reductions (PyTorch fixtures)', function () {
  const groups = new Map();
  for (const c of fixture('reductions')) {
    if (!groups.has(c.op)) groups.set(c.op, []);
    groups.get(c.op).push(c);
  }
  for (const [op, list] of groups) {
    describe(op, function () {
      for (const c of list) it(c.name + (c.form !== 'function' ? ` [${c.form}]` : ''), function () { runCase(c); });
    });
  }
});

describe('reductions: API details', function () {
  it("max/min of two tensors are PyTorch's max(Tensor, Tensor) overloads: maximum/minimum, with their gradients", function () {
    const a = kd.tensor([1, 5, 3, -2], { requiresGrad: true });
    const b = kd.tensor([4, 2, 3, -1], { requiresGrad: true });
    assert.deepEqual(values(kd.max(a, b)), [4, 5, 3, -1]);
    assert.deepEqual(values(a.min(b)), [1, 2, 3, -2]);
    assert.deepEqual(values(kd.max(a, kd.tensor(0))), [1, 5, 3, 0]); // broadcasting
    kd.max(a, b).sum().backward();
    assert.deepEqual(values(a.grad), [0, 1, 0.5, 0]); // ties share the gradient, as maximum
    assert.deepEqual(values(b.grad), [1, 0, 0.5, 1]);
    assert.equal(kd.max(a).item(), 5); // the other overloads still bind
    assert.deepEqual(values(kd.max(a, 0).values), [5]);
  });

  it('varMean/stdMean(x, unbiased) are the whole-tensor overloads, as var(x, unbiased)', function () {
    const x = kd.tensor([1, 2, 3, 6], { dtype: 'float64', requiresGrad: true });
    const [v, m] = kd.varMean(x, false);
    assert.equal(v.item(), 3.5);
    assert.equal(m.item(), 3);
    assert.ok(Math.abs(x.stdMean(true)[0].item() - Math.sqrt(14 / 3)) < 1e-12);
    v.add(m).backward();
    // d var / dx = 2 (x - mean) / n, d mean / dx = 1 / n
    assert.deepEqual(values(x.grad), [-1 + 0.25, -0.5 + 0.25, 0.25, 1.5 + 0.25]);
  });

  const x = () => kd.tensor([[1, 5, 2], [7, 0, 3]], { dtype: 'float32' });

  it('max/min with a dim return an array with .values and .indices', function () {
    const r = x().max(1);
    assert.ok(Array.isArray(r));
    const [v, i] = r;
    assert.equal(r.values, v);
    assert.equal(r.indices, i);
    assert.deepEqual(values(v), [5, 7]);
    assert.equal(i.dtype, 'int64');
    assert.deepEqual(values(i), [1, 0]);
    const m = kd.min(x(), 0, true);
    assert.deepEqual(m.values.shape, [1, 3]);
    assert.deepEqual(values(m.indices), [0, 1, 0]);
  });

  it('max/min without a dim return a 0-d tensor', function () {
    const m = x().max();
    assert.ok(m instanceof kd.Tensor);
    assert.deepEqual(m.shape, []);
    assert.equal(m.item(), 7);
    assert.equal(kd.min(x()).item(), 0);
  });

  it('argmax of the flattened tensor and along a dim', function () {
    assert.equal(x().argmax().item(), 3);
    assert.deepEqual(values(x().argmax(0)), [1, 0, 1]);
    assert.deepEqual(x().argmax(1, true).shape, [2, 1]);
  });

  it('sum/mean accept dim as number, list and option', function () {
    assert.deepEqual(values(x().sum(1)), [8, 10]);
    assert.deepEqual(values(x().sum([0, 1])), [18]);
    assert.deepEqual(x().sum([0, 1]).shape, []);
    assert.deepEqual(values(x().sum({ dim: 0 })), [8, 5, 5]);
    assert.deepEqual(x().mean({ dim: 1, keepdim: true }).shape, [2, 1]);
    assert.deepEqual(values(kd.mean(x(), 0)), [4, 2.5, 2.5]);
  });

  it("logsumexp takes one int for its int[1] dim, as PyTorch's IntArrayRef[1] does", function () {
    const t = kd.tensor([[0, Math.log(3)], [Math.log(2), Math.log(2)]], { dtype: 'float64' });
    for (const r of [kd.logsumexp(t, 1), t.logsumexp(1), kd.logsumexp(t, [1]), kd.logsumexp(t, { dim: 1 }), kd.logsumexp(t, -1)]) {
      assert.deepEqual(r.shape, [2]);
      assert.ok(Math.abs(values(r)[0] - Math.log(4)) < 1e-12 && Math.abs(values(r)[1] - Math.log(4)) < 1e-12);
    }
    assert.deepEqual(kd.logsumexp(t, 0, true).shape, [1, 2]);
    assert.match(expectKdError(() => kd.logsumexp(t, 1.5), 'KD_INVALID_TYPE').message, /argument 'dim' must be an integer or an array of integers/);
  });

  it('sum with dtype accumulates in that dtype', function () {
    const big = kd.full([100], 100, { dtype: 'uint8' });
    assert.equal(big.sum().dtype, 'int64');
    assert.equal(big.sum().item(), 10000);
    const s = big.sum({ dtype: 'float64' });
    assert.equal(s.dtype, 'float64');
    assert.equal(s.item(), 10000);
  });

  it('large float32 sums are accurate (pairwise / wide accumulation)', function () {
    const n = 1 << 22; // 4M ones + 0.1: naive float32 accumulation stalls at 2^24
    const t = kd.full([n], 1.1, { dtype: 'float32' });
    const s = t.sum().item();
    const expected = n * Math.fround(1.1);
    assert.ok(Math.abs(s - expected) / expected < 1e-5, `sum ${s} vs ${expected}`);
    const m = t.mean().item();
    assert.ok(Math.abs(m - Math.fround(1.1)) < 1e-5, `mean ${m}`);
  });

  it('sum over a large non-contiguous tensor along each dim', function () {
    const m = kd.arange(300 * 200, { dtype: 'float64' }).reshape([300, 200]).t(); // [200, 300]
    const s0 = values(m.sum(0)); // sums over the 200 -> per original row r: sum_c (r*200 + c)
    for (const r of [0, 1, 299]) assert.equal(s0[r], r * 200 * 200 + (199 * 200) / 2);
    const s1 = values(m.sum(1)); // per original column c: sum_r (r*200 + c)
    for (const c of [0, 5, 199]) assert.equal(s1[c], 200 * (299 * 300) / 2 + 300 * c);
  });

  it('bad dims are errors with codes', function () {
    expectKdError(() => x().sum(2), 'KD_INDEX_OUT_OF_RANGE');
    expectKdError(() => x().max(-3), 'KD_INDEX_OUT_OF_RANGE');
    expectKdError(() => x().argmax(5), 'KD_INDEX_OUT_OF_RANGE');
    expectKdError(() => x().sum('a'), ['KD_INVALID_TYPE']);
    expectKdError(() => x().sum(1.5), ['KD_INVALID_TYPE']);
  });
});

// PyTorch leaves the index of a repeated median to each device's algorithm; kindling's is the
// first occurrence of the median value along the dim, on the CPU and on CUDA alike.
describe('median.dim: a repeated median value gives the index of its first occurrence', function () {
  for (const dtype of ['int16', 'int64', 'uint8', 'float32', 'float16']) {
    it(dtype, function () {
      kd.manualSeed(7);
      const x = kd.randint(0, 4, [50, 9], { dtype }); // 4 values in rows of 9: many ties
      const [v, i] = kd.median(x.t(), 0); // a transposed view: the lines are strided
      const rows = x.arraySync();
      const vs = values(v);
      const is = values(i);
      rows.forEach((row, r) => {
        const sorted = [...row].sort((a, b) => a - b);
        const median = sorted[(row.length - 1) >> 1];
        assert.equal(vs[r], median, `row ${r}: value`);
        assert.equal(Number(is[r]), row.indexOf(median), `row ${r} [${row}]: index`);
      });
      assert.deepEqual(values(kd.median(kd.tensor([1, 1, 1, 1, 1], { dtype }), 0).indices), [0]);
    });
  }
});
