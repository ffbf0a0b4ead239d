// cuda_random.test.js - GPU-only checks of the version-4 CUDA kernels that the fixture-driven
// parity suite (cuda_parity.test.js) does not cover: random numbers (rand, randn, randint,
// nativeDropout) equal to the CPU's for the same seed (Note [Random number mapping]), large
// reductions that take the split (two-kernel) path, and kd.backends.cuda.matmul.allowTF32.
// The GPU part is skipped, with the reason printed, when kd.cuda.isAvailable() is false.
'use strict';

const { kd, assert } = require('./helpers');

const available = kd.cuda.isAvailable();

describe('kd.backends.cuda.matmul.allowTF32', () => {
  it('defaults to false and round-trips', () => {
    assert.strictEqual(kd.backends.cuda.matmul.allowTF32, false);
    kd.backends.cuda.matmul.allowTF32 = true;
    assert.strictEqual(kd.backends.cuda.matmul.allowTF32, true);
    kd.backends.cuda.matmul.allowTF32 = false;
    assert.strictEqual(kd.backends.cuda.matmul.allowTF32, false);
    assert.throws(() => { kd.backends.cuda.matmul.allowTF32 = 1; }, /boolean/);
  });
});

describe('CUDA random numbers and large reductions', function () {
  before(function () {
    if (!available) {
      console.log(`    (skipped: CUDA is not available: ${kd.cuda.unavailableReason()})`);
      this.skip();
    }
  });

  const same = (a, b, tol = 0) => {
    const x = a.dataSync(), y = b.cpu().dataSync();
    assert.strictEqual(x.length, y.length);
    for (let i = 0; i < x.length; i++) {
      const ok = tol === 0 ? Object.is(Number(x[i]), Number(y[i])) : Math.abs(Number(x[i]) - Number(y[i])) <= tol * (1 + Math.abs(Number(x[i])));
      if (!ok) assert.fail(`element ${i}: cpu ${x[i]} cuda ${y[i]}`);
    }
  };
  const both = (fn) => {
    kd.manualSeed(1234);
    const c = fn('cpu');
    kd.manualSeed(1234);
    const g = fn('cuda');
    return [c, g];
  };

  for (const dtype of ['float32', 'float64', 'float16', 'bfloat16']) {
    it(`rand ${dtype}: the CPU's numbers`, () => {
      const [c, g] = both((device) => kd.rand([3, 1001], { dtype, device }));
      same(c, g);
    });
    it(`randn ${dtype}: the CPU's numbers`, () => {
      const [c, g] = both((device) => kd.randn([7, 333], { dtype, device }));
      same(c, g, { float64: 1e-15, float32: 3e-7, float16: 1e-3, bfloat16: 8e-3 }[dtype]);
    });
  }
  for (const dtype of ['int64', 'int32', 'uint8', 'float32']) {
    it(`randint ${dtype}: the CPU's numbers`, () => {
      const [c, g] = both((device) => kd.randint(0, 200, [5, 99], { dtype, device }));
      same(c, g);
    });
  }
  it('successive draws advance the offset the same way', () => {
    const [c, g] = both((device) => { kd.rand([10], { device }); return kd.randn([4, 5], { device }); });
    same(c, g, 3e-7);
  });
  it('nativeDropout: same mask and output as the CPU', () => {
    const x = kd.randn([37, 41]);
    const [c, g] = both((device) => kd._internal.nativeDropout(x.to(device), 0.3, true));
    same(c.mask, g.mask);
    same(c.output, g.output, 1e-7);
    const e = kd._internal.nativeDropout(x.cuda(), 0.3, false);
    same(x, e.output);
    assert.ok(e.mask.cpu().all().item());
  });

  // CUDA reduces float32 in double accumulators (cuda/ops_reduce.cu), so each float32 result is
  // the float64 CPU result rounded once: within half an ulp, 2^-24 relative. (The CPU's float32
  // sum is a float cascade, a few ulps off, so it is not the reference here.)
  const rounded = (ref, got) => {
    const r = ref.dataSync(), g = got.cpu().dataSync();
    assert.strictEqual(got.dtype, 'float32');
    assert.strictEqual(r.length, g.length);
    for (let i = 0; i < r.length; i++) {
      if (!(Math.abs(g[i] - r[i]) <= Math.abs(r[i]) * 2 ** -24 * (1 + 1e-6)))
        assert.fail(`element ${i}: float64 ${r[i]} cuda ${g[i]}, more than half an ulp apart`);
    }
  };

  it('full and long reductions (split path) are the float64 results rounded once', () => {
    const x = kd.randn([3, 1 << 18]);
    const g = x.cuda(), d = x.to('float64');
    rounded(d.sum(), g.sum());
    rounded(d.sum(1), g.sum(1));
    rounded(d.std(1), g.std(1));
    rounded(d.logsumexp([1]), g.logsumexp([1]));
    rounded(d.norm(), g.norm());
    rounded(d.sum(0), g.sum(0));
    const xt = x.t();
    rounded(xt.to('float64').sum(0), xt.cuda().sum(0));
    same(x.amax(), g.amax());
    same(x.argmax(), g.argmax());
    const i = kd.randint(-100, 100, [1 << 20]);
    same(i.sum(), i.cuda().sum());
    same(i.max(), i.cuda().max());
  });

  it('softmax, layer norm and cumsum on long rows match the CPU', () => {
    const x = kd.randn([4, 5000]);
    const g = x.cuda();
    same(x.softmax(1), g.softmax(1), 1e-5);
    same(x.logSoftmax(0), g.logSoftmax(0), 1e-5);
    same(x.cumsum(1), g.cumsum(1), 1e-6);
    const w = kd.randn([5000]), b = kd.randn([5000]);
    const c = kd._internal.nativeLayerNorm(x, [5000], w, b, 1e-5);
    const d = kd._internal.nativeLayerNorm(g, [5000], w.cuda(), b.cuda(), 1e-5);
    same(c[0], d[0], 1e-4);
  });

  it('allowTF32 changes float32 matmul only when set', () => {
    const a = kd.randn([256, 256]).cuda(), b = kd.randn([256, 256]).cuda();
    const ref = a.cpu().matmul(b.cpu());
    same(ref, a.matmul(b), 1e-4);
    kd.backends.cuda.matmul.allowTF32 = true;
    try {
      same(ref, a.matmul(b), 5e-2);
    } finally {
      kd.backends.cuda.matmul.allowTF32 = false;
    }
  });
});
