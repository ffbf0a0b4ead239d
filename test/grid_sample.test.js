// grid_sample.test.js - kd.nn.functional.gridSample (src/cpu/grid_sample.c, cuda/ops_grid_sample.cu)
// and affineGrid (lib/nn/grid_sample.js): PyTorch parity from test/fixtures/grid_sample.json
// (tools/fixtures/grid_sample.py: every mode x paddingMode x alignCorners, 2-D and 3-D, errors;
// test/autograd_parity.test.js checks their gradients and gradchecks the float64 ones), then what
// fixtures cannot say: the call forms, the backward op's inputGrad / gridGrad outputs, finite
// differences of both gradients per mode, a large case across the parallel grain against a
// plain float64 reference, the missing double backward (as PyTorch), and the emulated GPU
// against the CPU for every mode, padding and rank, forward and both gradients.
'use strict';
const assert = require('node:assert');
const kd = require('..');
const { parityTests } = require('./helpers');

parityTests('grid_sample');

const F = kd.nn.functional;
const values = (t) => Array.from(t.dataSync());
const MODES = ['bilinear', 'nearest', 'bicubic'];
const PADS = ['zeros', 'border', 'reflection'];

// Deterministic values in [lo, hi) (an LCG), as a float64 tensor of shape.
function lcg(shape, lo, hi, seed) {
  let s = seed >>> 0;
  const n = shape.reduce((a, b) => a * b, 1);
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    s = (Math.imul(1664525, s) + 1013904223) >>> 0;
    out[i] = lo + (hi - lo) * (s / 4294967296);
  }
  return kd.tensor(out).reshape(shape);
}

// Bilinear, zeros padding, alignCorners false, over contiguous (N, C, H, W) values in float64.
function refBilinear(x, [n, c, h, w], g, [oh, ow]) {
  const out = new Float64Array(n * c * oh * ow);
  for (let b = 0; b < n; b++) {
    for (let p = 0; p < oh * ow; p++) {
      const gx = g[(b * oh * ow + p) * 2], gy = g[(b * oh * ow + p) * 2 + 1];
      const ix = ((gx + 1) * w - 1) / 2, iy = ((gy + 1) * h - 1) / 2;
      const x0 = Math.floor(ix), y0 = Math.floor(iy);
      for (let ch = 0; ch < c; ch++) {
        let s = 0;
        for (const [yy, wy] of [[y0, y0 + 1 - iy], [y0 + 1, iy - y0]]) {
          for (const [xx, wx] of [[x0, x0 + 1 - ix], [x0 + 1, ix - x0]]) {
            if (yy >= 0 && yy < h && xx >= 0 && xx < w) s += wy * wx * x[((b * c + ch) * h + yy) * w + xx];
          }
        }
        out[((b * c + ch) * oh * ow) + p] = s;
      }
    }
  }
  return out;
}

describe('gridSample: call forms, gradients and references', () => {
  it('takes mode, paddingMode and alignCorners positionally or in an options object', () => {
    const x = lcg([1, 2, 3, 4], -1, 1, 1);
    const g = lcg([1, 2, 3, 2], -1.2, 1.2, 2);
    const a = F.gridSample(x, g, { mode: 'bicubic', paddingMode: 'border', alignCorners: true });
    const b = F.gridSample(x, g, 'bicubic', 'border', true);
    assert.deepEqual(values(a), values(b));
    assert.notDeepEqual(values(a), values(F.gridSample(x, g, 'bicubic', 'border', false)));
    assert.deepEqual(values(F.gridSample(x, g)), values(F.gridSample(x, g, { alignCorners: false })));
    assert.deepEqual(a.shape, [1, 2, 2, 3]);
  });

  it('gradients of input and grid match finite differences (float64, every mode and padding)', function () {
    this.timeout(60000);
    for (const mode of MODES) {
      for (const paddingMode of PADS) {
        for (const alignCorners of [false, true]) {
          const x = lcg([2, 2, 3, 4], -1, 1, 3).requiresGrad_();
          const g = lcg([2, 2, 3, 2], -1.3, 1.3, 4).requiresGrad_();
          const ok = kd.autograd.gradcheck((a, b) => F.gridSample(a, b, { mode, paddingMode, alignCorners }), [x, g]);
          assert.ok(ok, `${mode} ${paddingMode} ${alignCorners}`);
        }
      }
    }
    for (const mode of ['bilinear', 'nearest']) {
      const x = lcg([1, 2, 2, 3, 3], -1, 1, 5).requiresGrad_();
      const g = lcg([1, 2, 2, 2, 3], -1.3, 1.3, 6).requiresGrad_();
      assert.ok(kd.autograd.gradcheck((a, b) => F.gridSample(a, b, { mode, paddingMode: 'reflection', alignCorners: false }), [x, g]));
    }
  });

  it('nearest has a zero grid gradient, as PyTorch', () => {
    const x = lcg([1, 1, 3, 3], -1, 1, 7);
    const g = lcg([1, 2, 2, 2], -1, 1, 8).requiresGrad_();
    F.gridSample(x, g, { mode: 'nearest', alignCorners: false }).sum().backward();
    assert.deepEqual(values(g.grad), new Array(8).fill(0));
  });

  it('the backward op computes the gradients asked for; the other output is empty', () => {
    const x = lcg([2, 2, 3, 4], -1, 1, 9);
    const g = lcg([2, 3, 2, 2], -1.2, 1.2, 10);
    const go = lcg([2, 2, 3, 2], -1, 1, 11);
    const both = kd._internal.gridSampleBackward(go, x, g, 'bilinear', 'zeros', false);
    const onlyInput = kd._internal.gridSampleBackward(go, x, g, 'bilinear', 'zeros', false, true, false);
    const onlyGrid = kd._internal.gridSampleBackward(go, x, g, 'bilinear', 'zeros', false, false, true);
    assert.deepEqual(both.gradInput.shape, [2, 2, 3, 4]);
    assert.deepEqual(both.gradGrid.shape, [2, 3, 2, 2]);
    assert.deepEqual(values(onlyInput[0]), values(both[0]));
    assert.deepEqual(onlyInput[1].shape, [0]);
    assert.deepEqual(values(onlyGrid[1]), values(both[1]));
    assert.deepEqual(onlyGrid[0].shape, [0]);
    assert.throws(() => kd._internal.gridSampleBackward(go.narrow(3, 0, 1), x, g, 'bilinear', 'zeros', false),
      (e) => e.code === 'KD_SHAPE_MISMATCH' && /gradOutput/.test(e.message));
  });

  it('has no double backward, as PyTorch', () => {
    const x = lcg([1, 1, 3, 3], -1, 1, 12).requiresGrad_();
    const g = lcg([1, 2, 2, 2], -1, 1, 13).requiresGrad_();
    assert.throws(() => {
      const [gx] = kd.autograd.grad(F.gridSample(x, g, { alignCorners: false }).sum(), [x], { createGraph: true });
      gx.sum().backward();
    }, (e) => e instanceof kd.KindlingError && /derivative for 'gridSampleBackward'.*not implemented/.test(e.message));
  });

  it('a large float32 case (across the parallel grain) matches a float64 reference', () => {
    const shape = [4, 8, 20, 24], oh = 24, ow = 24;
    const x = lcg(shape, -1, 1, 14);
    const g = lcg([4, oh, ow, 2], -1.2, 1.2, 15);
    const y = F.gridSample(x.float(), g.float(), { alignCorners: false });
    const ref = refBilinear(x.dataSync(), shape, g.dataSync(), [oh, ow]);
    const got = y.dataSync();
    let worst = 0;
    for (let i = 0; i < ref.length; i++) worst = Math.max(worst, Math.abs(got[i] - ref[i]));
    assert.ok(worst < 1e-5, `max error ${worst}`);
    const y64 = values(F.gridSample(x, g, { alignCorners: false }));
    for (let i = 0; i < ref.length; i++) assert.ok(Math.abs(y64[i] - ref[i]) < 1e-12);
  });

  it('works under kd.tidy and with an empty batch backward', () => {
    const x = kd.zeros([0, 2, 3, 3]).requiresGrad_();
    const g = kd.zeros([0, 2, 2, 2]).requiresGrad_();
    F.gridSample(x, g, { alignCorners: false }).sum().backward();
    assert.deepEqual(x.grad.shape, [0, 2, 3, 3]);
    assert.deepEqual(g.grad.shape, [0, 2, 2, 2]);
  });
});

describe('affineGrid: composition with gridSample', () => {
  it('the identity transform with alignCorners samples the input back', () => {
    const x = lcg([2, 3, 4, 5], -1, 1, 16);
    const theta = kd.tensor([[[1, 0, 0], [0, 1, 0]], [[1, 0, 0], [0, 1, 0]]], { dtype: 'float64' });
    for (const alignCorners of [false, true]) {
      const y = F.gridSample(x, F.affineGrid(theta, [2, 3, 4, 5], alignCorners), { alignCorners });
      const a = values(y), b = values(x);
      for (let i = 0; i < a.length; i++) assert.ok(Math.abs(a[i] - b[i]) < 1e-12);
    }
  });

  it('gradchecks theta through gridSample (a spatial transformer)', () => {
    const x = lcg([1, 2, 4, 4], -1, 1, 17);
    const theta = kd.tensor([[[0.9, 0.13, 0.05], [-0.11, 0.8, -0.07]]], { dtype: 'float64', requiresGrad: true });
    assert.ok(kd.autograd.gradcheck((t) => F.gridSample(x, F.affineGrid(t, [1, 2, 3, 5], false), { alignCorners: false }), [theta]));
    const t3 = lcg([1, 3, 4], -0.5, 0.5, 18).add(kd.eye(3, 4, { dtype: 'float64' })).requiresGrad_();
    assert.ok(kd.autograd.gradcheck((t) => F.affineGrid(t, [1, 1, 2, 3, 2], true), [t3]));
  });

  it('rejects what is not a tensor or a size list', () => {
    assert.throws(() => F.affineGrid([[1, 0, 0]], [1, 1, 2, 2]), (e) => e instanceof TypeError && e.code === 'KD_INVALID_TYPE');
    assert.throws(() => F.affineGrid(kd.zeros([1, 2, 3]), 'big'), (e) => e instanceof TypeError && e.code === 'KD_INVALID_TYPE');
  });
});

(kd.cuda.isAvailable() ? describe : describe.skip)('gridSample on the GPU (vs the CPU)', () => {
  const close = (a, b, tol, what) => {
    const x = values(a), y = values(b);
    assert.equal(x.length, y.length, what);
    for (let i = 0; i < x.length; i++) assert.ok(Math.abs(x[i] - y[i]) <= tol * (1 + Math.abs(y[i])), `${what}: [${i}] ${x[i]} vs ${y[i]}`);
  };
  for (const nd of [2, 3]) {
    for (const mode of nd === 2 ? MODES : ['bilinear', 'nearest']) {
      it(`${nd}-D ${mode}: forward and both gradients, every padding and alignCorners, float32 and float64`, function () {
        this.timeout(120000);
        for (const paddingMode of PADS) {
          for (const alignCorners of [false, true]) {
            for (const dtype of ['float64', 'float32']) {
              const xs = nd === 2 ? [2, 3, 4, 5] : [2, 2, 3, 4, 3];
              const gs = nd === 2 ? [2, 3, 4, 2] : [2, 2, 3, 2, 3];
              const x = lcg(xs, -1, 1, 19).to(dtype), g = lcg(gs, -1.6, 1.6, 20).to(dtype);
              const go = lcg([xs[0], xs[1], ...gs.slice(1, -1)], -1, 1, 21).to(dtype);
              const opts = { mode, paddingMode, alignCorners };
              const what = `${paddingMode} ${alignCorners} ${dtype}`;
              const tol = dtype === 'float64' ? 1e-12 : 1e-5;
              const cx = x.clone().requiresGrad_(), cg = g.clone().requiresGrad_();
              const dx = x.to('cuda').requiresGrad_(), dg = g.to('cuda').requiresGrad_();
              const cy = F.gridSample(cx, cg, opts), dy = F.gridSample(dx, dg, opts);
              assert.equal(dy.device, 'cuda:0');
              close(dy.to('cpu'), cy, tol, `forward ${what}`);
              cy.backward(go);
              dy.backward(go.to('cuda'));
              close(dx.grad.to('cpu'), cx.grad, tol, `input gradient ${what}`);
              close(dg.grad.to('cpu'), cg.grad, tol * 10, `grid gradient ${what}`);
            }
          }
        }
      });
    }
  }

  it('float16 computes in float32 on the GPU; errors are the CPU ones', () => {
    const x = lcg([1, 2, 3, 3], -1, 1, 22), g = lcg([1, 2, 2, 2], -1, 1, 23);
    const y = F.gridSample(x.half().to('cuda'), g.half().to('cuda'), { alignCorners: false });
    assert.equal(y.dtype, 'float16');
    close(y.to('cpu').double(), F.gridSample(x.half().float(), g.half().float(), { alignCorners: false }).half().double(), 1e-3, 'float16');
    assert.throws(() => F.gridSample(x.to('cuda'), g.narrow(0, 0, 0).to('cuda')), (e) => e.code === 'KD_SHAPE_MISMATCH' && /same batch size/.test(e.message));
    assert.throws(() => F.gridSample(kd.zeros([1, 1, 2, 2, 2], { device: 'cuda' }), kd.zeros([1, 1, 1, 1, 3], { device: 'cuda' }), { mode: 'bicubic' }),
      (e) => /bicubic interpolation only supports 4D input/.test(e.message));
  });

  it('affineGrid runs on the GPU', () => {
    const theta = lcg([2, 2, 3], -1, 1, 24);
    close(F.affineGrid(theta.to('cuda'), [2, 1, 3, 4], false).to('cpu'), F.affineGrid(theta, [2, 1, 3, 4], false), 1e-12, 'affineGrid');
  });
});
