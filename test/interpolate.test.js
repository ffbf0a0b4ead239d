// interpolate.test.js - kd.nn.functional.interpolate's modes (src/cpu/interpolate.c): PyTorch
// parity from test/fixtures/interpolate.json (tools/fixtures/interpolate.py; 2-D nearest,
// bilinear and 'area' are in conv.json), then what fixtures cannot say: the call forms of
// recomputeScaleFactor and antialias, the backward op against finite differences of
// <gy, interpolate(x)> in float64, and big inputs (planes crossing the parallel grain) against a
// plain float64 reference.
'use strict';
const assert = require('node:assert');
const kd = require('..');
const { parityTests } = require('./helpers');

parityTests('interpolate');

const F = kd.nn.functional;
const values = (t) => Array.from(t.dataSync());

// PyTorch's cubic convolution weights (A = -0.75) of positions i-1 .. i+2 at fraction t.
function cubicWeights(t) {
  const A = -0.75;
  const c1 = (x) => ((A + 2) * x - (A + 3)) * x * x + 1;
  const c2 = (x) => ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
  return [c2(t + 1), c1(t), c1(1 - t), c2(2 - t)];
}

// A plain float64 bicubic (alignCorners false, sizes given) over contiguous (N, C, H, W) values.
function refBicubic(x, [n, c, h, w], [oh, ow]) {
  const out = [];
  const taps = (o, inn, outn) => {
    const src = (inn / outn) * (o + 0.5) - 0.5;
    const i0 = Math.floor(src);
    const wts = cubicWeights(Math.min(Math.max(src - i0, 0), 1));
    return wts.map((wt, k) => [Math.min(Math.max(i0 - 1 + k, 0), inn - 1), wt]);
  };
  for (let p = 0; p < n * c; p++) {
    for (let y = 0; y < oh; y++) {
      const ty = taps(y, h, oh);
      for (let xx = 0; xx < ow; xx++) {
        const tx = taps(xx, w, ow);
        let s = 0;
        for (const [iy, wy] of ty) for (const [ix, wx] of tx) s += wy * wx * x[(p * h + iy) * w + ix];
        out.push(s);
      }
    }
  }
  return out;
}

describe('interpolate: call forms and references', () => {
  it('recomputeScaleFactor positionally and by name; size with it is an error', () => {
    const x = kd.arange(5, { dtype: 'float64' }).reshape([1, 1, 5]);
    const byName = F.interpolate(x, { scaleFactor: 1.7, mode: 'linear', recomputeScaleFactor: true });
    const positional = F.interpolate(x, null, 1.7, 'linear', null, true);
    const bySize = F.interpolate(x, { size: 8, mode: 'linear' });
    assert.deepEqual(values(byName), values(bySize));
    assert.deepEqual(values(positional), values(bySize));
    assert.notDeepEqual(values(F.interpolate(x, { scaleFactor: 1.7, mode: 'linear' })), values(bySize));
    assert.throws(() => F.interpolate(x, { size: 8, mode: 'linear', recomputeScaleFactor: true }),
      (e) => e instanceof kd.KindlingError && e.code === 'KD_INVALID_ARGUMENT');
    assert.throws(() => F.interpolate(kd.ones([1, 1, 3, 3]), { size: [2, 2], mode: 'area', recomputeScaleFactor: true }),
      (e) => e instanceof kd.KindlingError && /recompute_scale_factor/.test(e.message));
  });

  it('antialias positionally and by name; modes without it are errors', () => {
    const x = kd.arange(48, { dtype: 'float64' }).reshape([1, 1, 6, 8]);
    const byName = F.interpolate(x, { size: [2, 3], mode: 'bicubic', antialias: true });
    const positional = F.interpolate(x, [2, 3], null, 'bicubic', null, null, true);
    assert.deepEqual(values(byName), values(positional));
    assert.notDeepEqual(values(byName), values(F.interpolate(x, [2, 3], null, 'bicubic')));
    for (const mode of ['nearest', 'area']) {
      assert.throws(() => F.interpolate(x, { size: [2, 3], mode, antialias: true }),
        (e) => e instanceof kd.KindlingError && /Anti-alias option is only supported/.test(e.message), mode);
    }
  });

  it('the backward op agrees with finite differences of <gy, interpolate(x)> (float64)', () => {
    kd.manualSeed(3);
    const settings = [
      [[1, 2, 4, 3], { size: [5, 6], mode: 'bicubic' }],
      [[1, 1, 3, 4], { scaleFactor: 1.6, mode: 'bicubic', alignCorners: true }],
      [[1, 1, 2, 3, 2], { size: [3, 2, 4], mode: 'trilinear' }],
      [[1, 2, 5], { size: 3, mode: 'nearest-exact' }],
      [[1, 1, 2, 2, 3], { scaleFactor: 1.5, mode: 'nearest' }],
      [[1, 1, 9, 5], { size: [2, 4], mode: 'bilinear', antialias: true }],
    ];
    for (const [shape, opts] of settings) {
      const x = kd.randn(shape, { dtype: 'float64' });
      const y = F.interpolate(x, opts);
      const gy = kd.randn(y.shape, { dtype: 'float64' });
      const gx = values(kd._internal.interpolateBackward(gy, shape, opts));
      const xv = values(x);
      const dot = (v) => {
        const yv = values(F.interpolate(kd.tensor(v, { dtype: 'float64' }).reshape(shape), opts));
        return yv.reduce((s, e, i) => s + e * gy.dataSync()[i], 0);
      };
      for (let i = 0; i < xv.length; i++) {
        const hi = xv.slice(); hi[i] += 1e-6;
        const lo = xv.slice(); lo[i] -= 1e-6;
        const fd = (dot(hi) - dot(lo)) / 2e-6;
        assert.ok(Math.abs(fd - gx[i]) < 1e-6 * (1 + Math.abs(fd)), `${JSON.stringify(opts)} element ${i}: ${gx[i]} vs ${fd}`);
      }
    }
  });

  it('bicubic on a big batch (parallel over planes) matches a float64 reference', () => {
    kd.manualSeed(5);
    const shape = [3, 40, 9, 11];
    const x = kd.randn(shape, { dtype: 'float64' });
    const got = values(F.interpolate(x, [13, 7], null, 'bicubic'));
    const ref = refBicubic(values(x), shape, [13, 7]);
    assert.equal(got.length, ref.length);
    for (let i = 0; i < ref.length; i++) assert.ok(Math.abs(got[i] - ref[i]) < 1e-12, `element ${i}: ${got[i]} vs ${ref[i]}`);
    const x32 = x.to('float32');
    const got32 = values(F.interpolate(x32, [13, 7], null, 'bicubic'));
    for (let i = 0; i < ref.length; i++) assert.ok(Math.abs(got32[i] - ref[i]) < 1e-5 * (1 + Math.abs(ref[i])), `float32 element ${i}`);
  });

  it('trilinear through planes in parallel equals one plane at a time', () => {
    kd.manualSeed(6);
    const x = kd.randn([2, 64, 3, 4, 5]);
    const all = values(F.interpolate(x, [5, 6, 4], null, 'trilinear'));
    const one = values(F.interpolate(x.narrow(1, 17, 1).contiguous(), [5, 6, 4], null, 'trilinear'));
    const per = 5 * 6 * 4;
    assert.deepEqual(all.slice(17 * per, 18 * per), one.slice(0, per));
  });
});
