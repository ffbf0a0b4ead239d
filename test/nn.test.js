// nn.test.js - softmax/logSoftmax, layerNorm, groupNorm, batchNorm, embedding, dropout, the
// losses and scaledDotProductAttention against PyTorch (test/fixtures/nn.json), plus what the
// fixtures cannot say: call forms, running-stat updates, dropout statistics and seeding, the
// internal backward kernels against finite differences, large inputs across the parallel
// grain against float64 references.
'use strict';

const { kd, assert, parityTests, values, expectKdError, assertValuesClose } = require('./helpers');

const F = kd.nn.functional;

parityTests('nn');

/** Deterministic pseudo-random floats in [-3, 3). */
function data(n, seed = 1) {
  const out = new Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(1664525, s) + 1013904223) >>> 0;
    out[i] = (s / 4294967296) * 6 - 3;
  }
  return out;
}
const T = (vals, shape, dtype = 'float32') => kd.tensor(vals, { dtype }).reshape(shape);

describe('nn: call forms and API details', function () {
  it('batchNorm of an empty 1-d input is its (empty) clone, as PyTorch, in training too', function () {
    const x = kd.zeros([0], { requiresGrad: true });
    for (const training of [true, false]) {
      const y = kd.nn.functional.batchNorm(x, kd.zeros([0]), kd.zeros([0]), null, null, training);
      assert.deepEqual(y.shape, [0]);
      assert.notEqual(y, x);
    }
    expectKdError(() => kd.nn.functional.batchNorm(kd.ones([3]), kd.zeros([3]), kd.ones([3])), 'KD_INDEX_OUT_OF_RANGE');
  });

  it("interpolate mode 'area' is adaptive average pooling to the output size (1-d, 2-d, 3-d), with gradients", function () {
    const F = kd.nn.functional;
    const x1 = kd.tensor([[[1, 2, 3, 4, 5, 6]]], { dtype: 'float64', requiresGrad: true });
    const y1 = F.interpolate(x1, [3], null, 'area');
    assert.deepEqual(values(y1), [1.5, 3.5, 5.5]);
    y1.sum().backward();
    assert.deepEqual(values(x1.grad), [0.5, 0.5, 0.5, 0.5, 0.5, 0.5]);
    assert.deepEqual(values(F.interpolate(x1.detach(), { scaleFactor: 0.5, mode: 'area' })), [1.5, 3.5, 5.5]); // floor(6 * 0.5)
    const x2 = kd.arange(16, { dtype: 'float32' }).reshape([1, 1, 4, 4]);
    assert.deepEqual(values(F.interpolate(x2, { size: 2, mode: 'area' })), [2.5, 4.5, 10.5, 12.5]);
    const x3 = kd.arange(8, { dtype: 'float64' }).reshape([1, 1, 2, 2, 2]);
    assert.deepEqual(values(F.interpolate(x3, [1, 1, 1], null, 'area')), [3.5]);
    assert.deepEqual(F.interpolate(x3, { scaleFactor: [1, 1.5, 1], mode: 'area' }).shape, [1, 1, 2, 3, 2]);
    expectKdError(() => F.interpolate(x2, { size: 2, mode: 'area', alignCorners: true }), 'KD_INVALID_ARGUMENT');
    expectKdError(() => F.interpolate(x2, { mode: 'area' }), 'KD_INVALID_ARGUMENT');
  });

  it("pad 'circular' wraps around (negative pads crop), on every dtype, with the gradient summed back", function () {
    const x = kd.arange(6, { dtype: 'float64' }).reshape([1, 2, 3]).requiresGrad_(true);
    const y = kd.nn.functional.pad(x, [2, 1], 'circular');
    assert.deepEqual(y.shape, [1, 2, 6]);
    assert.deepEqual(values(y), [1, 2, 0, 1, 2, 0, 4, 5, 3, 4, 5, 3]);
    y.backward(kd.onesLike(y));
    assert.deepEqual(values(x.grad), [2, 2, 2, 2, 2, 2]);
    assert.deepEqual(values(kd.nn.functional.pad(x.detach(), [-1, 1], 'circular')), [1, 2, 1, 4, 5, 4]); // cropped, then wrapped
    const b = kd.tensor([[[true, false]]]);
    assert.deepEqual(values(kd.nn.functional.pad(b, [1, 1], 'circular')), [false, true, false, true]);
    const img = kd.arange(4).reshape([1, 1, 2, 2]);
    assert.deepEqual(values(kd.nn.functional.pad(img, [1, 0, 0, 1], 'circular')), [1, 0, 1, 3, 2, 3, 1, 0, 1]);
    assert.match(expectKdError(() => kd.nn.functional.pad(x, [4, 0], 'circular'), 'KD_INVALID_ARGUMENT').message,
      /wrapping around more than once/);
  });

  it('adaptiveAvgPool2d takes null in outputSize for the input size, as PyTorch', function () {
    const x = kd.arange(24, { dtype: 'float32' }).reshape([1, 2, 3, 4]);
    const y = kd.nn.functional.adaptiveAvgPool2d(x, [null, 2]);
    assert.deepEqual(y.shape, [1, 2, 3, 2]);
    assert.deepEqual(values(y).slice(0, 2), [0.5, 2.5]);
    assert.deepEqual(kd.nn.functional.adaptiveAvgPool2d(x, { outputSize: [1, null] }).shape, [1, 2, 1, 4]);
  });

  it('softmax is kd.softmax, Tensor#softmax and kd.nn.functional.softmax', function () {
    const x = T([1, 2, 3, 4, 5, 6], [2, 3]);
    const a = values(kd.softmax(x, 1));
    assert.deepEqual(values(x.softmax(1)), a);
    assert.deepEqual(values(F.softmax(x, 1)), a);
    assert.deepEqual(values(x.softmax({ dim: -1 })), a);
    assert.equal(kd.logSoftmax(x, 1, { dtype: 'float64' }).dtype, 'float64');
  });

  it('losses take reduction by name; layerNorm eps as option', function () {
    const x = T([1, 2, 3], [3]), y = T([1, 1, 1], [3]);
    assert.ok(Math.abs(F.mseLoss(x, y).item() - 5 / 3) < 1e-6);
    assert.equal(F.mseLoss(x, y, 'sum').item(), 5);
    assert.equal(F.mseLoss(x, y, { reduction: 'sum' }).item(), 5);
    assert.deepEqual(F.l1Loss(x, y, { reduction: 'none' }).shape, [3]);
    const ln = F.layerNorm(T([1, 2, 3, 4], [2, 2]), [2], { eps: 0 });
    assertValuesClose(values(ln), [-1, 1, -1, 1], 'float32', 'layerNorm');
  });

  it('nativeLayerNorm returns output, mean and rstd with PyTorch shapes', function () {
    const r = kd._internal.nativeLayerNorm(T(data(24), [2, 3, 4]), [4], null, null, 1e-5);
    assert.equal(r.length, 3);
    assert.deepEqual(r.output.shape, [2, 3, 4]);
    assert.deepEqual(r.mean.shape, [2, 3, 1]);
    assert.deepEqual(r.rstd.shape, [2, 3, 1]);
  });

  it('embedding rejects floating indices with PyTorch\'s message', function () {
    const e = expectKdError(() => F.embedding(T([0, 1], [2]), T(data(6), [3, 2])), 'KD_DTYPE_MISMATCH');
    assert.match(e.message, /Long, Int; but got torch.FloatTensor/);
  });

  it('crossEntropy with integer class-probability targets is an error', function () {
    expectKdError(() => F.crossEntropy(T(data(6), [2, 3]), kd.ones([2, 3], { dtype: 'int64' })), 'KD_DTYPE_MISMATCH');
  });

  it('scaledDotProductAttention refuses a mask together with isCausal', function () {
    const q = T(data(12), [3, 4]);
    expectKdError(() => F.scaledDotProductAttention(q, q, q, kd.ones([3, 3], { dtype: 'bool' }), 0, true), 'KD_INVALID_ARGUMENT');
  });
});

describe('nn: batchNorm running statistics', function () {
  it('training updates runningMean/runningVar in place (unbiased variance, momentum)', function () {
    const vals = data(24, 7);
    const x = T(vals, [4, 3, 2]);
    const rm = T([0.5, -1, 2], [3]), rv = T([1, 2, 0.5], [3]);
    const v0 = rm.version;
    F.batchNorm(x, rm, rv, null, null, true, 0.25);
    for (let c = 0; c < 3; c++) {
      const xs = [];
      for (let n = 0; n < 4; n++) for (let k = 0; k < 2; k++) xs.push(vals[n * 6 + c * 2 + k]);
      const m = xs.reduce((a, b) => a + b, 0) / xs.length;
      const v = xs.reduce((a, b) => a + (b - m) ** 2, 0) / (xs.length - 1);
      assert.ok(Math.abs(values(rm)[c] - (0.75 * [0.5, -1, 2][c] + 0.25 * m)) < 1e-5, `running mean ${c}`);
      assert.ok(Math.abs(values(rv)[c] - (0.75 * [1, 2, 0.5][c] + 0.25 * v)) < 1e-5, `running var ${c}`);
    }
    if (v0 !== undefined) assert.ok(rm.version > v0, 'version bumped');
  });

  it('eval mode leaves the running statistics alone', function () {
    const rm = T([0, 0], [2]), rv = T([1, 1], [2]);
    F.batchNorm(T(data(4), [2, 2]), rm, rv);
    assert.deepEqual(values(rm), [0, 0]);
    assert.deepEqual(values(rv), [1, 1]);
  });
});

describe('nn: dropout', function () {
  it('keeps about 1-p of the elements, scaled by 1/(1-p)', function () {
    const y = F.dropout(kd.ones([100000]), 0.3);
    const v = values(y);
    const kept = v.filter((x) => x !== 0);
    assert.ok(Math.abs(kept.length / v.length - 0.7) < 0.01, `kept ${kept.length}`);
    for (const x of kept.slice(0, 100)) assert.ok(Math.abs(x - 1 / 0.7) < 1e-6);
  });

  it('is reproducible under manualSeed and returns its mask from nativeDropout', function () {
    kd.manualSeed(42);
    const a = values(F.dropout(kd.ones([1000]), 0.5));
    kd.manualSeed(42);
    const r = kd._internal.nativeDropout(kd.ones([1000]), 0.5, true);
    assert.deepEqual(values(r.output), a);
    assert.equal(r.mask.dtype, 'bool');
    assert.deepEqual(values(r.mask), a.map((x) => x !== 0));
  });

  it('returns the input itself when not training or p == 0', function () {
    const x = kd.ones([3]);
    assert.equal(F.dropout(x, 0.5, false), x);
    assert.equal(F.dropout(x, 0), x);
  });

  it('float16 and bfloat16 inputs', function () {
    for (const dtype of ['float16', 'bfloat16']) {
      const y = F.dropout(kd.ones([1000], { dtype }), 0.5);
      assert.equal(y.dtype, dtype);
      assert.ok(values(y).every((x) => x === 0 || x === 2));
    }
  });
});

describe('nn: backward kernels against finite differences', function () {
  /** Central differences of the scalar sum(f(x) * g) with respect to x (float64). */
  function numGrad(f, xv, shape, g) {
    const eps = 1e-6;
    const out = new Array(xv.length);
    for (let i = 0; i < xv.length; i++) {
      const p = xv.slice(), m = xv.slice();
      p[i] += eps;
      m[i] -= eps;
      const fp = values(f(T(p, shape, 'float64')).mul(g).sum())[0];
      const fm = values(f(T(m, shape, 'float64')).mul(g).sum())[0];
      out[i] = (fp - fm) / (2 * eps);
    }
    return out;
  }

  it('layerNormBackward', function () {
    const xv = data(12, 3), shape = [3, 4];
    const w = T(data(4, 5), [4], 'float64'), b = T(data(4, 6), [4], 'float64');
    const g = T(data(12, 4), shape, 'float64');
    const f = (x) => kd._internal.nativeLayerNorm(x, [4], w, b, 1e-5)[0];
    const r = kd._internal.nativeLayerNorm(T(xv, shape, 'float64'), [4], w, b, 1e-5);
    const dx = kd._internal.layerNormBackward(g, T(xv, shape, 'float64'), [4], r.mean, r.rstd, w);
    assertValuesClose(values(dx), numGrad(f, xv, shape, g), 'float32', 'dx');
  });

  it('nllLossBackward and embeddingBackward', function () {
    const xv = data(12, 8), shape = [4, 3];
    const t = kd.tensor([0, 2, 1, 2], { dtype: 'int64' }), w = T([0.5, 2, 1], [3], 'float64');
    const g = kd.tensor(1.5, { dtype: 'float64' });
    const f = (x) => F.nllLoss(x, t, w);
    const dx = kd._internal.nllLossBackward(g, T(xv, shape, 'float64'), t, w, -100, 'mean');
    assertValuesClose(values(dx), numGrad(f, xv, shape, g), 'float32', 'nll dx');
    const idx = kd.tensor([0, 2, 0, 1], { dtype: 'int64' });
    const ge = T(data(8, 9), [4, 2], 'float64');
    const dw = kd._internal.embeddingBackward(ge, idx, [3, 2], 1);
    const gv = values(ge);
    assert.deepEqual(values(dw), [gv[0] + gv[4], gv[1] + gv[5], 0, 0, gv[2], gv[3]]);
  });

  it('pointwiseLossBackward for every kind, input and target', function () {
    const shape = [2, 3];
    const a = data(6, 11).map((v) => v / 7 + 0.5), bv = data(6, 12).map((v) => v / 7 + 0.5);
    const w = T([0.5, 1, 2], [3], 'float64'), pw = T([2, 0.5, 1], [3], 'float64');
    const g = kd.tensor(0.7, { dtype: 'float64' });
    const losses = [
      [1, (x, y) => F.l1Loss(x, y), null, null],
      [2, (x, y) => F.smoothL1Loss(x, y, 'mean', 0.2), null, null],
      [3, (x, y) => F.binaryCrossEntropy(x, y, w), w, null],
      [4, (x, y) => F.binaryCrossEntropyWithLogits(x, y, w, 'mean', pw), w, pw],
    ];
    for (const [kind, fn, wt, p] of losses) {
      const beta = kind === 2 ? 0.2 : 1;
      const x = T(a, shape, 'float64'), y = T(bv, shape, 'float64');
      const dx = kd._internal.pointwiseLossBackward(g, x, y, wt, p, 'mean', beta, kind, false);
      assertValuesClose(values(dx), numGrad((t) => fn(t, y), a, shape, g), 'float32', `kind ${kind} input`);
      const dy = kd._internal.pointwiseLossBackward(g, x, y, wt, p, 'mean', beta, kind, true);
      assertValuesClose(values(dy), numGrad((t) => fn(x, t), bv, shape, g), 'float32', `kind ${kind} target`);
    }
  });
});

describe('nn: large inputs across the parallel grain (float64 references)', function () {
  it('softmax over the last dim and dim 0 of [300, 257]', function () {
    const vals = data(300 * 257, 21);
    const x = T(vals, [300, 257]);
    const ref = (dim) => values(T(vals, [300, 257], 'float64').softmax(dim));
    assertValuesClose(values(x.softmax(1)), ref(1), 'float32', 'dim 1', { terms: 257 });
    assertValuesClose(values(x.softmax(0)), ref(0), 'float32', 'dim 0', { terms: 300 });
    assertValuesClose(values(x.logSoftmax(0)), values(T(vals, [300, 257], 'float64').logSoftmax(0)), 'float32', 'log dim 0', { terms: 300 });
  });

  it('layerNorm of [200, 300] against a JS float64 computation', function () {
    const vals = data(200 * 300, 22);
    const y = values(F.layerNorm(T(vals, [200, 300]), [300]));
    const exp = [];
    for (let r = 0; r < 200; r++) {
      const row = vals.slice(r * 300, r * 300 + 300);
      const m = row.reduce((a, b) => a + b, 0) / 300;
      const v = row.reduce((a, b) => a + (b - m) ** 2, 0) / 300;
      for (const x of row) exp.push((x - m) / Math.sqrt(v + 1e-5));
    }
    assertValuesClose(y, exp, 'float32', 'layerNorm', { terms: 300 });
  });

  it('crossEntropy of [4096, 20] matches float64', function () {
    const vals = data(4096 * 20, 23);
    const t = kd.tensor(Array.from({ length: 4096 }, (_, i) => (i * 7) % 20), { dtype: 'int64' });
    const a = F.crossEntropy(T(vals, [4096, 20]), t).item();
    const b = F.crossEntropy(T(vals, [4096, 20], 'float64'), t).item();
    assert.ok(Math.abs(a - b) < 1e-5 * Math.abs(b), `${a} vs ${b}`);
  });
});

describe('nn: pad over many dims', function () {
  // constant padding of 4 dims overflowed 3-element arrays (reference: PyTorch 1.13.1)
  it('constant padding of 4 dims, and its backward', function () {
    const x = kd.arange(16, { dtype: 'float32' }).reshape([2, 2, 2, 2]).add(1);
    const pad = [1, 0, 0, 1, 1, 1, 0, 2];
    const y = F.pad(x, pad);
    assert.deepEqual(y.shape, [4, 4, 3, 3]);
    assert.equal(y.sum().item(), 136);
    assert.deepEqual(values(y.select(0, 0).select(0, 1)), [0, 1, 2, 0, 3, 4, 0, 0, 0]);
    assert.deepEqual(values(kd._internal.padBackward(y, [2, 2, 2, 2], pad)), values(x));
  });
  it('padBackward validates inputSize like any op (at most 16 dims)', function () {
    const err = expectKdError(() => kd._internal.padBackward(kd.ones([1]), new Array(20).fill(1), [0, 0]), 'KD_INVALID_ARGUMENT');
    assert.equal(err.message, 'padBackward: inputSize has 20 dims; tensors have at most 16');
  });
  it('padding whose padded size overflows int64 is an error', function () {
    expectKdError(() => F.pad(kd.ones([2]), [2n ** 63n - 1n, 1]), 'KD_INVALID_ARGUMENT');
  });
  it('huge pads of an empty tensor give an empty tensor; a padded shape past int64 is an error in every mode', function () {
    // the copied window's offset (pad times a stride) left int64 although nothing is copied
    assert.deepEqual(F.pad(kd.zeros([0, 0, 0]), [2 ** 31, 2 ** 31, 2 ** 31, 2]).shape, [0, 2 ** 31 + 2, 2 ** 32]);
    assert.deepEqual(F.pad(kd.zeros([0, 1, 1]), [2 ** 52, 2 ** 52], 'replicate').shape, [0, 1, 2 ** 53 + 1]);
    // (reflect and circular pads may not exceed the input: they cannot grow a shape that far)
    for (const mode of ['constant', 'replicate']) {
      const e = expectKdError(() => F.pad(kd.zeros([1, 1, 1, 1]), new Array(6).fill(2 ** 52), mode), 'KD_INVALID_ARGUMENT');
      assert.match(e.message, /^pad: the padded size \[1, 9007199254740993, 9007199254740993, 9007199254740993\] has more elements than fit in int64$/, mode);
    }
    // a padded size that fits int64 but whose index map does not fit in memory (its byte count wrapped)
    expectKdError(() => F.pad(kd.zeros([1, 1, 1]), [2n ** 60n, 2n ** 60n - 1n], 'replicate'), 'KD_OUT_OF_MEMORY');
    const x = kd.zeros([1, 2, 3]).requiresGrad_();
    const y = F.pad(x, [-3, 0], 'circular'); // cropped to nothing
    assert.deepEqual(y.shape, [1, 2, 0]);
    y.sum().backward();
    assert.deepEqual(Array.from(x.grad.dataSync()), [0, 0, 0, 0, 0, 0]);
  });
});
