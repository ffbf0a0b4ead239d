// fft.test.js - kd.fft's helpers against PyTorch 1.13's values (test/fixtures/fft.json, from
// tools/fixtures/fft.py): fftfreq and rfftfreq in float32 and float64, fftshift and ifftshift;
// their gradient, the emulated GPU when present, and the argument checks.
'use strict';

const { kd, assert } = require('./helpers');
const fx = require('./fixtures/fft.json');

function close(actual, expected, tol) {
  const a = [actual].flat(Infinity), e = [expected].flat(Infinity);
  assert.equal(a.length, e.length);
  a.forEach((x, i) => assert.ok(Math.abs(x - e[i]) <= tol * (1 + Math.abs(e[i])), `${x} vs ${e[i]} at ${i}`));
}

describe('kd.fft.fftfreq / rfftfreq', function () {
  for (const c of fx.freq) {
    it(`n=${c.n} d=${c.d} ${c.dtype} as PyTorch's`, function () {
      const tol = c.dtype === 'float32' ? 1e-6 : 1e-15;
      const f = kd.fft.fftfreq(c.n, c.d, { dtype: c.dtype });
      const r = kd.fft.rfftfreq(c.n, c.d, { dtype: c.dtype });
      assert.equal(f.dtype, c.dtype);
      assert.deepEqual(f.shape, [c.fftfreq.length]);
      assert.deepEqual(r.shape, [c.rfftfreq.length]);
      close(f.arraySync(), c.fftfreq, tol);
      close(r.arraySync(), c.rfftfreq, tol);
    });
  }

  it('defaults: d = 1, the default dtype; options in place of d; requiresGrad', function () {
    assert.equal(kd.fft.fftfreq(4).dtype, 'float32');
    close(kd.fft.fftfreq(4).arraySync(), [0, 0.25, -0.5, -0.25], 0);
    const t = kd.fft.rfftfreq(4, { dtype: 'float64', requiresGrad: true });
    assert.equal(t.dtype, 'float64');
    assert.equal(t.requiresGrad, true);
    close(t.arraySync(), [0, 0.25, 0.5], 0);
  });

  it('n = 0 as PyTorch: fftfreq empty, rfftfreq [NaN] (0 / 0)', function () {
    assert.deepEqual(kd.fft.fftfreq(0).shape, [0]);
    const r = kd.fft.rfftfreq(0).arraySync();
    assert.equal(r.length, 1);
    assert.ok(Number.isNaN(r[0]));
  });

  it('errors as PyTorch: negative n, a non-floating dtype, a non-integer n', function () {
    assert.throws(() => kd.fft.fftfreq(-1), (e) => e.code === 'KD_INVALID_ARGUMENT' && /negative dimension -1/.test(e.message));
    assert.throws(() => kd.fft.rfftfreq(4, { dtype: 'int64' }),
      (e) => e.code === 'KD_DTYPE_MISMATCH' && /rfftfreq requires a floating point or complex dtype/.test(e.message));
    assert.throws(() => kd.fft.fftfreq(2.5), TypeError);
  });
});

describe('kd.fft.fftshift / ifftshift', function () {
  for (const c of fx.shift) {
    it(`[${c.shape}] dim=${JSON.stringify(c.dim)} as PyTorch's`, function () {
      const n = c.shape.reduce((a, b) => a * b, 1);
      const x = kd.arange(n).reshape(c.shape);
      assert.deepEqual(kd.fft.fftshift(x, c.dim).arraySync(), c.fftshift);
      assert.deepEqual(kd.fft.ifftshift(x, c.dim).arraySync(), c.ifftshift);
      assert.deepEqual(kd.fft.ifftshift(kd.fft.fftshift(x, c.dim), c.dim).arraySync(), x.arraySync());
    });
  }

  it('the gradient is the inverse shift', function () {
    const x = kd.arange(7, { dtype: 'float64' }).requiresGrad_(true);
    const w = kd.arange(7, { dtype: 'float64' }).mul(kd.tensor(3, { dtype: 'float64' })).add(kd.tensor(1, { dtype: 'float64' }));
    kd.fft.fftshift(x).mul(w).sum().backward();
    assert.deepEqual(x.grad.arraySync(), kd.fft.ifftshift(w).arraySync());
  });

  it('errors as PyTorch: a dim out of range, an empty dim list', function () {
    assert.throws(() => kd.fft.fftshift(kd.zeros([3]), 3), (e) => e.code === 'KD_INDEX_OUT_OF_RANGE');
    assert.throws(() => kd.fft.ifftshift(kd.zeros([3]), []), (e) => e.code === 'KD_INVALID_ARGUMENT');
  });

  it('on the emulated GPU when present', function () {
    if (!kd.cuda.isAvailable()) this.skip();
    const x = kd.arange(10, { device: 'cuda' }).reshape([2, 5]);
    assert.equal(kd.fft.fftshift(x).device, 'cuda:0');
    assert.deepEqual(kd.fft.fftshift(x).cpu().arraySync(), kd.fft.fftshift(x.cpu()).arraySync());
    assert.equal(kd.fft.fftfreq(4, { device: 'cuda' }).device, 'cuda:0');
  });
});
