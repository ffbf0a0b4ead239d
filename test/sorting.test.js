// sorting.test.js - sort, argsort, topk and unique against PyTorch (test/fixtures/sorting.json):
// every dtype, NaN/inf order, stability, descending, long rows (radix and select paths),
// non-contiguous inputs, 0-d/empty; then tuple names, unique's result forms, and a large
// parallel sort checked against a JS reference.
'use strict';

const { kd, assert, fixture, runOpCase, buildArg, assertTensorClose, expectKdError, values } = require('./helpers');

describe('sorting (PyTorch fixtures)', function () {
  for (const c of fixture('sorting')) {
    it(`${c.op}: ${c.name}${c.form !== 'function' ? ` [${c.form}]` : ''}`, function () {
      if (!c.uniqueTuple) return runOpCase(c);
      // unique's tuple results are plain arrays (no .values/.indices names)
      const args = c.args.map(buildArg);
      const call = () => kd.unique(...args, c.kwargs || {});
      if (c.error) return expectKdError(call);
      const r = call();
      const exp = c.tuple ? c.expected : [c.expected];
      assert.equal(r.length, exp.length);
      exp.forEach((e, i) => assertTensorClose(r[i], e, `${c.name} [${i}]`));
    });
  }
});

describe('sorting: API details', function () {
  it('sort/topk return [values, indices] with names; argsort a tensor', function () {
    const x = kd.tensor([[3, 1, 2]], { dtype: 'float32' });
    const r = x.sort({ descending: true });
    assert.equal(r.values, r[0]);
    assert.deepEqual(values(r.values), [3, 2, 1]);
    assert.deepEqual(values(r.indices), [0, 2, 1]);
    assert.deepEqual(values(kd.argsort(x)), [1, 2, 0]);
    const t = kd.topk(x, 2, { largest: false });
    assert.deepEqual(values(t.values), [1, 2]);
    assert.deepEqual(values(t.indices), [1, 2]);
  });

  it('unique without flags returns a tensor, with flags an array', function () {
    const x = kd.tensor([2, 1, 2], { dtype: 'int64' });
    const u = kd.unique(x);
    assert.ok(u instanceof kd.Tensor);
    assert.deepEqual(values(u), [1, 2]);
    const [v, inv, cnt] = x.unique({ returnInverse: true, returnCounts: true });
    assert.deepEqual(values(v), [1, 2]);
    assert.deepEqual(values(inv), [1, 0, 1]);
    assert.deepEqual(values(cnt), [1, 2]);
  });

  it('a large parallel sort matches a JS reference (float64, both directions)', function () {
    const rows = 8, n = 20000;
    const data = new Float64Array(rows * n);
    let s = 12345;
    for (let i = 0; i < data.length; i++) { s = (1664525 * s + 1013904223) >>> 0; data[i] = (s / 4294967296) * 200 - 100; }
    const x = kd.tensor(data).reshape([rows, n]);
    for (const desc of [false, true]) {
      const [v, idx] = x.sort(1, desc);
      const vv = v.dataSync(), ii = idx.dataSync();
      for (let r = 0; r < rows; r++) {
        const ref = Array.from(data.subarray(r * n, (r + 1) * n)).sort((a, b) => (desc ? b - a : a - b));
        for (let j = 0; j < n; j++) {
          if (vv[r * n + j] !== ref[j]) assert.fail(`row ${r} pos ${j}: ${vv[r * n + j]} vs ${ref[j]}`);
          if (data[r * n + Number(ii[r * n + j])] !== ref[j]) assert.fail(`index row ${r} pos ${j}`);
        }
      }
    }
  });

  it('topk of a large row equals the head of the sort', function () {
    const x = kd.rand([3, 50000]);
    const t = x.topk(10, 1);
    const s = x.sort(1, true);
    assert.deepEqual(values(t.values), values(s.values.narrow(1, 0, 10)));
  });
});
