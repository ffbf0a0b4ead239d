// search.test.js - searchsorted, bucketize, histc, bincount, isin, uniqueConsecutive, kthvalue,
// mode, quantile/nanquantile, aminmax and logcumsumexp against PyTorch (test/fixtures/search.json):
// every dtype, ties, NaN/inf, empty/0-d, non-contiguous and batched inputs, errors; then the JS
// call forms and tuple names, what fixtures cannot say (a sorter out of range), and large inputs
// that cross the parallel grain checked against float64 JS references.
'use strict';

const { kd, assert, fixture, runOpCase, buildArg, assertTensorClose, expectKdError, values } = require('./helpers');

describe('search (PyTorch fixtures)', function () {
  for (const c of fixture('search')) {
    it(`${c.op}: ${c.name}${c.form !== 'function' ? ` [${c.form}]` : ''}`, function () {
      if (!c.plainTuple) return runOpCase(c);
      // uniqueConsecutive's results: a tensor, or a plain array with the inverse / counts
      const args = c.args.map(buildArg);
      const call = () => kd.uniqueConsecutive(...args, c.kwargs || {});
      if (c.error) return expectKdError(call);
      const r = call();
      if (!c.tuple) return assertTensorClose(r, c.expected, c.name);
      assert.ok(Array.isArray(r), `${c.name}: expected an array`);
      assert.equal(r.length, c.expected.length);
      c.expected.forEach((e, i) => assertTensorClose(r[i], e, `${c.name} [${i}]`));
    });
  }
});

/** Deterministic float64 data in [lo, hi) (an LCG, as the fixtures'). */
function lcg(n, seed, lo = -100, hi = 100) {
  const out = new Float64Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) { s = (1664525 * s + 1013904223) >>> 0; out[i] = lo + (hi - lo) * (s / 4294967296); }
  return out;
}
const lowerBound = (a, v, right) => {
  let lo = 0, hi = a.length;
  while (lo < hi) { const m = (lo + hi) >> 1; if (right ? !(a[m] > v) : !(a[m] >= v)) lo = m + 1; else hi = m; }
  return lo;
};

describe('search: API details', function () {
  it('kthvalue/mode return [values, indices], aminmax [min, max], with names', function () {
    const x = kd.tensor([[3, 1, 2], [0, 5, 5]], { dtype: 'float32' });
    const k = x.kthvalue(2, { dim: 1 });
    assert.equal(k.values, k[0]);
    assert.equal(k.indices, k[1]);
    assert.deepEqual(values(k.values), [2, 5]);
    const m = kd.mode(x, 1, true);
    assert.deepEqual(m.values.shape, [2, 1]);
    assert.deepEqual(values(m.values), [1, 5]);
    assert.deepEqual(values(m.indices), [1, 2]);
    const [mn, mx] = x.aminmax({ dim: 0 });
    assert.equal(x.aminmax().min.item(), 0);
    assert.deepEqual(values(mn), [0, 1, 2]);
    assert.deepEqual(values(mx), [3, 5, 5]);
  });

  it('searchsorted/bucketize take options and numbers; isin a number on either side', function () {
    const s = kd.tensor([1, 2, 2, 3], { dtype: 'float32' });
    assert.deepEqual(values(kd.searchsorted(s, kd.tensor([2], { dtype: 'float32' }), { side: 'right' })), [3]);
    const r = kd.searchsorted(s, 2, { outInt32: true });
    assert.equal(r.dtype, 'int32');
    assert.deepEqual(r.shape, []);
    assert.equal(r.item(), 1);
    assert.equal(kd.bucketize(2.5, s, { right: true }).item(), 3);
    assert.deepEqual(values(kd.isin(s, 2, { invert: true })), [true, false, false, true]);
    assert.equal(kd.isin(3, s).item(), true);
  });

  it('uniqueConsecutive returns a tensor without flags, an array with them', function () {
    const x = kd.tensor([1, 1, 2, 1], { dtype: 'int64' });
    const u = x.uniqueConsecutive();
    assert.ok(u instanceof kd.Tensor);
    assert.deepEqual(values(u), [1, 2, 1]);
    const [v, inv, cnt] = kd.uniqueConsecutive(x, true, true);
    assert.deepEqual(values(v), [1, 2, 1]);
    assert.deepEqual(values(inv), [0, 0, 1, 2]);
    assert.deepEqual(values(cnt), [2, 1, 1]);
  });

  it('a sorter index out of range is an error, not a read outside the sequence', function () {
    const s = kd.tensor([3, 1, 2], { dtype: 'float32' });
    const v = kd.tensor([2.5], { dtype: 'float32' });
    for (const bad of [[1, 2, 5], [1, -1, 0]]) {
      const err = expectKdError(() => kd.searchsorted(s, v, { sorter: kd.tensor(bad, { dtype: 'int64' }) }), 'KD_INDEX_OUT_OF_RANGE');
      assert.match(err.message, /sorter index -?\d+ is out of range/);
    }
  });

  it('histc of integers bins in integer arithmetic, as PyTorch\'s CUDA (its CPU refuses them)', function () {
    const x = kd.tensor([0, 1, 2, 3, 4, 5, 9, 10, 11, -1], { dtype: 'int64' });
    const h = kd.histc(x, 4, 0, 10);
    assert.equal(h.dtype, 'int64');
    assert.deepEqual(values(h), [3, 2, 1, 2]); // (x - 0) * 4 / 10 truncated; 10 in the last bin
    assert.deepEqual(values(kd.histc(kd.tensor([2, 2], { dtype: 'int32' }), 2)), [0, 2]); // [1, 3]: bin (2 - 1) * 2 / 2
    expectKdError(() => kd.histc(x, 2, 0.25, 0.75), 'KD_INVALID_ARGUMENT'); // truncated to [0, 0]
  });

  it('bincount of huge values is an error, never an overflowed size', function () {
    const max = kd.full([1], 0, { dtype: 'int64' }).bitwiseNot().bitwiseXor(kd.full([1], -(2 ** 63), { dtype: 'int64' }));
    expectKdError(() => kd.bincount(max), 'KD_INVALID_ARGUMENT'); // INT64_MAX + 1 bins
    expectKdError(() => kd.bincount(kd.full([1], 2 ** 62, { dtype: 'int64' })), ['KD_OUT_OF_MEMORY', 'KD_INVALID_ARGUMENT']);
  });

  it('aminmax shares the gradient evenly among ties (as amin/amax)', function () {
    const x = kd.tensor([1, 3, 3, 0, 0], { dtype: 'float64', requiresGrad: true });
    const { min, max } = kd.aminmax(x);
    min.add(max.mul(2)).backward();
    assert.deepEqual(values(x.grad), [0, 1, 1, 0.5, 0.5]);
  });

  it('quantile under CPU autocast runs in float32 (PyTorch 1.13\'s fp32 policy; CUDA has none)', function () {
    const x = kd.tensor([1, 2.5, 3, 4.25], { dtype: 'bfloat16' });
    expectKdError(() => kd.quantile(x, 0.4), 'KD_DTYPE_MISMATCH');
    const r = kd.autocast({ deviceType: 'cpu' }, () => kd.nanquantile(x, 0.4));
    assert.equal(r.dtype, 'float32');
    assert.equal(r.item(), kd.nanquantile(x.to({ dtype: 'float32' }), 0.4).item());
  });

  it('the counting and searching results never require grad', function () {
    const x = kd.tensor([0.5, 1.5, 2.5], { dtype: 'float64', requiresGrad: true });
    assert.equal(kd.histc(x, 3, 0, 3).requiresGrad, false);
    assert.equal(kd.bincount(kd.tensor([0, 2, 2]), x).requiresGrad, false);
    assert.equal(kd.uniqueConsecutive(x).requiresGrad, false);
  });
});

describe('search: large inputs (past the parallel grain) against float64 references', function () {
  this.timeout(60000);
  const N = 100000;

  it('searchsorted, left and right, 1-D and batched', function () {
    const seq = Array.from(lcg(2000, 1, -50, 50)).map(Math.round).sort((a, b) => a - b);
    const vals = lcg(N, 2, -60, 60);
    const s = kd.tensor(seq, { dtype: 'float64' });
    const v = kd.tensor(vals, { dtype: 'float64' });
    for (const right of [false, true]) {
      const got = values(kd.searchsorted(s, v, { right }));
      for (let i = 0; i < N; i++) if (got[i] !== lowerBound(seq, vals[i], right)) assert.fail(`[${i}] ${got[i]}`);
    }
    const rows = 4, n = 500, m = N / rows;
    const bseq = Array.from(lcg(rows * n, 3)).map((x, i) => x + 1000 * Math.floor(i / n));
    for (let r = 0; r < rows; r++) bseq.splice(r * n, n, ...bseq.slice(r * n, (r + 1) * n).sort((a, b) => a - b));
    const bv = Array.from(lcg(N, 4, -100, 4100));
    const got = values(kd.searchsorted(kd.tensor(bseq).reshape([rows, n]), kd.tensor(bv).reshape([rows, m])));
    for (let i = 0; i < N; i++) {
      const r = Math.floor(i / m);
      if (got[i] !== lowerBound(bseq.slice(r * n, (r + 1) * n), bv[i], false)) assert.fail(`batched [${i}]`);
    }
  });

  it('histc and bincount count every element once', function () {
    const x = lcg(N, 5, -3, 3);
    const h = values(kd.histc(kd.tensor(x, { dtype: 'float64' }), 30, -2, 2));
    const ref = new Array(30).fill(0);
    for (const v of x) if (v >= -2 && v <= 2) ref[Math.min(29, Math.floor((v + 2) * 30 / 4))]++;
    assert.deepEqual(h, ref);
    const ints = Array.from(lcg(N, 6, 0, 1000)).map(Math.floor);
    const w = lcg(N, 7, -1, 1);
    const c = values(kd.bincount(kd.tensor(ints, { dtype: 'int64' })));
    const cw = values(kd.bincount(kd.tensor(ints, { dtype: 'int32' }), kd.tensor(w, { dtype: 'float64' })));
    const rc = new Array(1000).fill(0), rw = new Array(1000).fill(0);
    ints.forEach((v, i) => { rc[v]++; rw[v] += w[i]; });
    assert.deepEqual(c.slice(0, rc.length), rc);
    rw.forEach((e, i) => assert.ok(Math.abs(cw[i] - e) < 1e-9, `weights [${i}]`));
  });

  it('kthvalue and mode of long rows', function () {
    const rows = 20, n = 5000;
    const data = Array.from(lcg(rows * n, 8, 0, 300)).map(Math.floor);
    const x = kd.tensor(data, { dtype: 'float64' }).reshape([rows, n]);
    const k = 1234;
    const kv = x.kthvalue(k, 1);
    const km = kd.mode(x, 1);
    const kvv = values(kv.values), kvi = values(kv.indices), mv = values(km.values), mi = values(km.indices);
    for (let r = 0; r < rows; r++) {
      const row = data.slice(r * n, (r + 1) * n);
      assert.equal(kvv[r], row.slice().sort((a, b) => a - b)[k - 1]);
      assert.equal(row[kvi[r]], kvv[r]);
      const counts = new Map();
      for (const v of row) counts.set(v, (counts.get(v) || 0) + 1);
      let best = -1, bv = 0;
      for (const [v, c] of [...counts].sort((a, b) => a[0] - b[0])) if (c > best) { best = c; bv = v; }
      assert.equal(mv[r], bv);
      assert.equal(mi[r], row.lastIndexOf(bv));
    }
  });

  it('quantile, nanquantile and logcumsumexp', function () {
    const x = lcg(N, 9);
    const sorted = Array.from(x).sort((a, b) => a - b);
    const qs = [0, 0.1, 0.5, 0.999, 1];
    const got = values(kd.quantile(kd.tensor(x), kd.tensor(qs, { dtype: 'float64' })));
    qs.forEach((q, i) => {
      const rank = q * (N - 1), lo = Math.floor(rank), hi = Math.ceil(rank);
      const e = sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo);
      assert.ok(Math.abs(got[i] - e) < 1e-9, `q ${q}: ${got[i]} vs ${e}`);
    });
    const withNan = Array.from(x);
    for (let i = 0; i < N; i += 7) withNan[i] = NaN;
    const clean = withNan.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
    const nq = kd.nanquantile(kd.tensor(withNan, { dtype: 'float64' }), 0.5).item();
    const r = 0.5 * (clean.length - 1);
    assert.ok(Math.abs(nq - (clean[Math.floor(r)] + (clean[Math.ceil(r)] - clean[Math.floor(r)]) * (r - Math.floor(r)))) < 1e-9);
    assert.ok(Number.isNaN(kd.quantile(kd.tensor(withNan, { dtype: 'float64' }), 0.5).item()));
    const rows = 3, n = 40000;
    const y = lcg(rows * n, 10, -20, 20);
    const l = values(kd.logcumsumexp(kd.tensor(y).reshape([rows, n]), 1));
    for (let rr = 0; rr < rows; rr++) {
      let acc = -Infinity;
      for (let j = 0; j < n; j++) {
        const v = y[rr * n + j], mx = Math.max(acc, v);
        acc = mx + Math.log1p(Math.exp(Math.min(acc, v) - mx));
        if (Math.abs(l[rr * n + j] - acc) > 1e-9 * Math.max(1, Math.abs(acc))) assert.fail(`[${rr}, ${j}]`);
      }
    }
  });

  it('isin, uniqueConsecutive and aminmax', function () {
    const e = Array.from(lcg(N, 11, 0, 5000)).map(Math.floor);
    const t = Array.from(lcg(3000, 12, 0, 5000)).map(Math.floor);
    const set = new Set(t);
    const got = values(kd.isin(kd.tensor(e, { dtype: 'int32' }), kd.tensor(t, { dtype: 'int64' })));
    e.forEach((v, i) => { if (got[i] !== set.has(v)) assert.fail(`isin [${i}]`); });
    const runs = e.map((v) => Math.floor(v / 2000));
    const [u, inv, cnt] = kd.uniqueConsecutive(kd.tensor(runs, { dtype: 'int64' }), true, true);
    const ru = [], rc = [], ri = [];
    runs.forEach((v, i) => {
      if (i === 0 || v !== runs[i - 1]) { ru.push(v); rc.push(0); }
      rc[rc.length - 1]++;
      ri.push(ru.length - 1);
    });
    assert.deepEqual(values(u), ru);
    assert.deepEqual(values(cnt), rc);
    assert.deepEqual(values(inv), ri);
    const x = lcg(N, 13);
    const [mn, mx] = kd.aminmax(kd.tensor(x));
    assert.equal(mn.item(), Math.min(...x));
    assert.equal(mx.item(), Math.max(...x));
  });
});
