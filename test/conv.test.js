// conv.test.js - kd.nn.functional conv1d/conv2d/convTranspose2d, maxPool2d/avgPool2d/
// adaptiveAvgPool2d, interpolate and pad against PyTorch (test/fixtures/conv.json): values,
// dtypes, non-contiguous and unbatched inputs, errors; the backward ops (kd._internal.*) against
// PyTorch's gradients recorded in the same fixtures; call forms; big inputs (parallel paths)
// against a float64 reference.
'use strict';

const { kd, assert, parityTests, fixture, buildArg, assertTensorClose, assertValuesClose, values, expectKdError } = require('./helpers');

const F = kd.nn.functional;
const I = kd._internal;

parityTests('conv', 'nn.functional conv/pool/interpolate/pad (PyTorch fixtures)');

// The gradients of one fixture case computed with the backward ops: [grad of each positional arg].
function backwardOf(c, args, gos) {
  const kw = c.kwargs || {};
  const op = c.op.replace(/^nn\.functional\./, '').split('.')[0]; // 'conv2d.padding' -> conv2d
  const go = gos[0];
  const conv = { stride: kw.stride, padding: kw.padding, dilation: kw.dilation, groups: kw.groups };
  for (const k of Object.keys(conv)) if (conv[k] === undefined) delete conv[k];
  switch (op) {
    case 'conv1d':
    case 'conv2d': {
      const [x, w, b] = args;
      const nd = op === 'conv1d' ? 1 : 2;
      const dims = x.ndim === nd + 2 ? [0, ...Array.from({ length: nd }, (_, i) => i + 2)] : Array.from({ length: nd }, (_, i) => i + 1);
      return [I.conv2dBackwardInput(go, w, x.shape, conv), I.conv2dBackwardWeight(go, x, w.shape, conv),
        b ? go.sum(dims) : null];
    }
    case 'convTranspose2d': {
      const [x, w, b] = args;
      const dims = x.ndim === 4 ? [0, 2, 3] : [1, 2];
      return [F.conv2d(go, w, null, conv), I.conv2dBackwardWeight(x, go, w.shape, conv), b ? go.sum(dims) : null];
    }
    case 'maxPool2d':
    case 'maxPool2dWithIndices': {
      const opts = { kernelSize: kw.kernelSize, stride: kw.stride, padding: kw.padding, dilation: kw.dilation,
        ceilMode: kw.ceilMode || false };
      for (const k of Object.keys(opts)) if (opts[k] === undefined) delete opts[k];
      const ind = F.maxPool2dWithIndices(args[0], opts).indices;
      const viaIndices = I.maxPool2dBackward(go, args[0], { ...opts, indices: ind });
      const recomputed = I.maxPool2dBackward(go, args[0], opts);
      assert.deepEqual(values(viaIndices), values(recomputed), `${c.name}: with and without indices`);
      return [viaIndices];
    }
    case 'avgPool2d': {
      const opts = { kernelSize: kw.kernelSize, stride: kw.stride, padding: kw.padding, ceilMode: kw.ceilMode || false,
        countIncludePad: kw.countIncludePad !== undefined ? kw.countIncludePad : true, divisorOverride: kw.divisorOverride };
      for (const k of Object.keys(opts)) if (opts[k] === undefined) delete opts[k];
      return [I.avgPool2dBackward(go, args[0], opts)];
    }
    case 'adaptiveAvgPool2d': return [I.adaptiveAvgPool2dBackward(go, args[0])];
    case 'interpolate': {
      const opts = { size: kw.size, scaleFactor: kw.scaleFactor, mode: kw.mode || 'nearest', alignCorners: kw.alignCorners,
        recomputeScaleFactor: kw.recomputeScaleFactor, antialias: kw.antialias };
      for (const k of Object.keys(opts)) if (opts[k] === undefined) delete opts[k];
      return [I.interpolateBackward(go, args[0].shape, opts)];
    }
    case 'pad': return [I.padBackward(go, args[0].shape, kw.pad, kw.mode || 'constant')];
    default: throw new Error(`test bug: no backward for ${op}`);
  }
}

// How many terms each element of a convolution's gradient adds up (Note [Tolerance of reductions]
// in helpers.js): the input's, C_out / groups * kernel products (at most); the weight's and the
// bias's, one per output position of every sample. Other ops' gradients: 1.
function gradTerms(c, args, go, i) {
  if (!/conv/.test(c.op) || !go) return 1;
  const w = args[1].shape;
  const outPerChannel = go.shape.reduce((a, b) => a * b, 1) / go.shape[1];
  const kernel = w.slice(2).reduce((a, b) => a * b, 1);
  return i === 0 ? Math.max(w[0], go.shape[1]) * kernel : outPerChannel;
}

describe('nn.functional conv/pool/interpolate/pad: backward ops against PyTorch gradients', function () {
  for (const c of fixture('conv').filter((x) => x.expectedGrads)) {
    it(c.name, function () {
      const args = c.args.map(buildArg);
      const gos = c.gradOutputs.filter((g) => g !== null).map(buildArg);
      const grads = backwardOf(c, args, gos);
      c.expectedGrads.forEach((e, i) => {
        if (e === null) return;
        assert.ok(grads[i], `${c.name}: no gradient for arg ${i}`);
        assertTensorClose(grads[i], e, `${c.name}: grad of arg ${i}`, { terms: gradTerms(c, args, gos[0], i) });
      });
    });
  }
});

// float64 reference convolution (NCHW, no groups) for the big-input checks.
function refConv2d(x, xs, w, ws, b, stride, pad) {
  const [N, C, H, W] = xs;
  const [O, , KH, KW] = ws;
  const OH = Math.floor((H + 2 * pad - KH) / stride) + 1, OW = Math.floor((W + 2 * pad - KW) / stride) + 1;
  const out = new Float64Array(N * O * OH * OW);
  for (let n = 0; n < N; n++) for (let o = 0; o < O; o++) for (let oy = 0; oy < OH; oy++) for (let ox = 0; ox < OW; ox++) {
    let s = b ? b[o] : 0;
    for (let c = 0; c < C; c++) for (let i = 0; i < KH; i++) for (let j = 0; j < KW; j++) {
      const iy = oy * stride - pad + i, ix = ox * stride - pad + j;
      if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
      s += x[((n * C + c) * H + iy) * W + ix] * w[((o * C + c) * KH + i) * KW + j];
    }
    out[((n * O + o) * OH + oy) * OW + ox] = s;
  }
  return out;
}

describe('nn.functional conv/pool: API details', function () {
  it('conv2d accepts numbers, arrays and an options object', function () {
    const x = kd.randn([2, 3, 6, 6]);
    const w = kd.randn([4, 3, 3, 3]);
    const a = F.conv2d(x, w, null, 1, 1);
    const b = F.conv2d(x, w, null, [1, 1], [1, 1], [1, 1], 1);
    const c = F.conv2d(x, w, { padding: 1 });
    const d = F.conv2d(x, w, { padding: 'same' });
    assert.deepEqual(a.shape, [2, 4, 6, 6]);
    for (const r of [b, c, d]) assert.deepEqual(values(r), values(a));
    assert.deepEqual(F.conv2d(x, w).shape, [2, 4, 4, 4]);
  });

  it('maxPool2d returns a (values, indices) tuple only with returnIndices', function () {
    const x = kd.arange(16, { dtype: 'float32' }).reshape([1, 1, 4, 4]);
    const v = F.maxPool2d(x, 2);
    assert.ok(v instanceof kd.Tensor);
    assert.deepEqual(values(v), [5, 7, 13, 15]);
    const r = F.maxPool2d(x, 2, { returnIndices: true });
    assert.ok(Array.isArray(r));
    assert.deepEqual(values(r.values), [5, 7, 13, 15]);
    assert.deepEqual(values(r.indices), [5, 7, 13, 15]);
    assert.equal(r.indices.dtype, 'int64');
    const [pv, pi] = F.maxPool2d(x, 2, null, 0, 1, false, true);
    assert.deepEqual(values(pv), [5, 7, 13, 15]);
    assert.deepEqual(values(pi), [5, 7, 13, 15]);
  });

  it('pad and interpolate call forms', function () {
    const x = kd.arange(6, { dtype: 'float32' }).reshape([1, 2, 3]);
    assert.deepEqual(values(F.pad(x, [1, 1], 'constant', 9)), [9, 0, 1, 2, 9, 9, 3, 4, 5, 9]);
    assert.deepEqual(values(F.pad(x, [1, 1], { mode: 'replicate' })), [0, 0, 1, 2, 2, 3, 3, 4, 5, 5]);
    assert.deepEqual(F.interpolate(x, { scaleFactor: 2 }).shape, [1, 2, 6]);
    assert.deepEqual(F.interpolate(x, 5, null, 'linear').shape, [1, 2, 5]);
  });

  it('bad arguments are kindling errors', function () {
    const x = kd.randn([1, 3, 5, 5]);
    expectKdError(() => F.conv2d(x, kd.randn([4, 3, 3, 3]), null, 1, 'full'), 'KD_INVALID_ARGUMENT');
    expectKdError(() => F.conv2d(x, kd.randn([4, 3, 3, 3]), null, [1, 1, 1]), 'KD_INVALID_ARGUMENT');
    expectKdError(() => F.interpolate(kd.randn([1, 3, 5]), [7], null, 'bicubic'), 'KD_INVALID_ARGUMENT');
    expectKdError(() => F.pad(x, [1, 1], 'circular'), 'KD_NOT_SUPPORTED');
    expectKdError(() => I.conv2dBackwardInput(kd.randn([1, 4, 2, 2]), kd.randn([4, 3, 3, 3]), [1, 3, 5, 5]), 'KD_SHAPE_MISMATCH');
  });

  it('conv2d on a big batch (parallel over samples) matches a float64 reference', function () {
    kd.manualSeed(1);
    const x = kd.randn([6, 5, 12, 11]);
    const w = kd.randn([7, 5, 3, 3]);
    const b = kd.randn([7]);
    const got = values(F.conv2d(x, w, b, 2, 1));
    const ref = refConv2d(values(x), x.shape, values(w), w.shape, values(b), 2, 1);
    assert.equal(got.length, ref.length);
    assertValuesClose(got, ref, 'float32', 'conv2d', { terms: 5 * 3 * 3 }); // C_in * kernel products per output
  });

  it('conv2d backward ops agree with finite differences of <gy, conv2d(x, w)> (float64)', function () {
    kd.manualSeed(2);
    const x = kd.randn([3, 4, 7, 6], { dtype: 'float64' });
    const w = kd.randn([6, 2, 3, 2], { dtype: 'float64' });
    const opts = { stride: [2, 1], padding: [1, 0], dilation: [1, 2], groups: 2 };
    const y = F.conv2d(x, w, null, opts);
    const gy = kd.randn(y.shape, { dtype: 'float64' });
    const gx = values(I.conv2dBackwardInput(gy, w, x.shape, opts));
    const gw = values(I.conv2dBackwardWeight(gy, x, w.shape, opts));
    // linearity: <gy, conv(x, w)> == <gx, x> == <gw, w>
    const dot = (a, b) => a.reduce((s, v, i) => s + v * b[i], 0);
    const lhs = dot(values(gy), values(y));
    assert.ok(Math.abs(dot(gx, values(x)) - lhs) < 1e-8 * (1 + Math.abs(lhs)));
    assert.ok(Math.abs(dot(gw, values(w)) - lhs) < 1e-8 * (1 + Math.abs(lhs)));
  });

  it('pooling and interpolation on big inputs match small-batch results', function () {
    kd.manualSeed(3);
    const x = kd.randn([16, 8, 20, 20]);
    const mp = F.maxPool2d(x, 3, 2, 1);
    const ap = F.avgPool2d(x, 2);
    const up = F.interpolate(x, [33, 27], null, 'bilinear');
    const x0 = x.narrow(0, 5, 1);
    assert.deepEqual(values(mp.narrow(0, 5, 1)), values(F.maxPool2d(x0, 3, 2, 1)));
    assert.deepEqual(values(ap.narrow(0, 5, 1)), values(F.avgPool2d(x0, 2)));
    assert.deepEqual(values(up.narrow(0, 5, 1)), values(F.interpolate(x0, [33, 27], null, 'bilinear')));
  });
});
