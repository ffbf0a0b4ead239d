// cuda_grid_limits.test.js - CUDA kernels at the grid's limits, against the CPU: row and column
// counts above 65535 (where a kernel maps rows or columns to a grid dimension, or caps its grid
// and loops), sizes that need many blocks, and outputs that end mid-block. Runs where CUDA is
// available: on a GPU, or on the emulated GPU (which enforces an H100's launch limits) in
// `npm test`.
'use strict';

const { kd, assert } = require('./helpers');

const close = (got, want, tol, what) => {
  const g = got.to('float64').cpu().dataSync(), w = want.to('float64').dataSync();
  assert.equal(g.length, w.length, `${what}: length`);
  let bad = 0, first = -1;
  for (let i = 0; i < w.length; i++) {
    const ok = Number.isNaN(w[i]) ? Number.isNaN(g[i]) : Math.abs(g[i] - w[i]) <= tol * (1 + Math.abs(w[i]));
    if (!ok) { bad++; if (first < 0) first = i; }
  }
  assert.equal(bad, 0, `${what}: ${bad}/${w.length} differ, first at ${first}: cuda ${g[first]} cpu ${w[first]}`);
};

describe('CUDA kernels at the grid limits (CUDA vs CPU)', function () {
  if (!kd.cuda.isAvailable()) return; // nothing to compare without a CUDA device
  this.timeout(300000);

  const R = 70001; // rows or columns: more than a grid's y/z (65535), and not a multiple of a block
  let x, xc;
  before(function () {
    kd.manualSeed(7);
    x = kd.randn([R, 3]);
    xc = x.to('cuda');
  });
  after(function () { kd.dispose([x, xc]); });

  const rowOps = {
    'cumsum along the last dim': (t) => t.cumsum(1),
    'cumprod along the last dim': (t) => t.cumprod(1),
    'softmax along the last dim': (t) => t.softmax(1),
    'logSoftmax along the last dim': (t) => t.logSoftmax(1),
    'layerNorm of each row': (t) => kd.nn.functional.layerNorm(t, [3]),
    'sum of each row': (t) => t.sum(1),
    'max of each row': (t) => t.amax(1),
    'argmax of each row': (t) => t.argmax(1),
    'sort of each row': (t) => t.sort(1).values,
    'sum of each column of the transpose': (t) => t.t().sum(0),
    'sum of everything': (t) => t.sum(),
    'cumsum along the first dim': (t) => t.cumsum(0),
  };
  for (const [name, f] of Object.entries(rowOps)) {
    it(`${name} of ${R} x 3`, function () {
      const want = kd.tidy(() => f(x));
      const got = kd.tidy(() => f(xc));
      // float32 sums in another order; layerNorm of 3 values divides by a small deviation
      const loose = /cumprod|everything|first dim|layerNorm/.test(name);
      close(got, want, loose ? 1e-4 : 2e-5, name);
      kd.dispose([want, got]);
    });
  }

  it('gather and scatterAdd with an index of 70001 rows', function () {
    const idx = kd.randint(0, 3, [R, 1]);
    const want = x.gather(1, idx), got = xc.gather(1, idx.to('cuda'));
    close(got, want, 0, 'gather');
    const acc = kd.zeros([3]).scatterAdd(0, idx.view(-1), x.select(1, 0));
    const accc = kd.zeros([3], { device: 'cuda' }).scatterAdd(0, idx.view(-1).to('cuda'), xc.select(1, 0));
    close(accc, acc, 1e-4, 'scatterAdd');
    kd.dispose([idx, want, got, acc, accc]);
  });

  it('pointwise ops over 3 * 70001 elements (many blocks, a grid-stride loop) and a broadcast', function () {
    const b = kd.randn([3]);
    const want = x.mul(b).add(1).exp(), got = xc.mul(b.to('cuda')).add(1).exp();
    close(got, want, 1e-6, 'pointwise');
    kd.dispose([b, want, got]);
  });
});
