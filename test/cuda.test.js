// cuda.test.js - without a GPU: kd.cuda.isAvailable() is false and every CUDA request is a
// clean KD_CUDA_UNAVAILABLE error. With a GPU: round trips to('cuda') and back for every
// dtype, ops on CUDA agree with the CPU, Philox gives the same numbers on both.
'use strict';

const { kd, assert, values, expectKdError, ALL_DTYPES } = require('./helpers');

const available = kd.cuda.isAvailable();

describe('cuda', function () {
  it('isAvailable() is a boolean and the module loaded either way', function () {
    assert.equal(typeof available, 'boolean');
    assert.equal(typeof kd.cuda.isAvailable, 'function');
  });

  describe('without a GPU', function () {
    before(function () {
      if (available) {
        console.log('      (skipped: a CUDA GPU is available here)');
        this.skip();
      }
    });
    it('CUDA requests throw KD_CUDA_UNAVAILABLE and CPU work continues', function () {
      const calls = [
        () => kd.zeros([2], { device: 'cuda' }), () => kd.ones([2], { device: 'cuda:0' }),
        () => kd.ones([2]).to('cuda'), () => kd.ones([2]).cuda(), () => kd.ones([2]).to({ device: 'cuda', dtype: 'float64' }),
        () => kd.tensor([1], { device: 'cuda' }), () => kd.arange(3, { device: 'cuda' }),
      ];
      for (const fn of calls) {
        const e = expectKdError(fn, 'KD_CUDA_UNAVAILABLE');
        assert.ok(e instanceof kd.KindlingError || e instanceof Error);
      }
      assert.deepEqual(values(kd.ones([2]).add(1)), [2, 2]);
    });
    it('the kd.cuda namespace: queries never throw, everything else is KD_CUDA_UNAVAILABLE', async function () {
      assert.equal(kd.cuda.deviceCount(), 0);
      if (typeof kd.cuda.unavailableReason === 'function') {
        const why = kd.cuda.unavailableReason();
        assert.equal(typeof why, 'string');
        assert.ok(why.length > 0, 'unavailableReason() explains why');
      }
      for (const name of ['currentDevice', 'setDevice', 'getDeviceName', 'getDeviceProperties']) {
        if (typeof kd.cuda[name] === 'function') expectKdError(() => kd.cuda[name](0), 'KD_CUDA_UNAVAILABLE', name);
      }
      if (typeof kd.cuda.synchronize === 'function') {
        await assert.rejects(Promise.resolve().then(() => kd.cuda.synchronize()), (e) => e.code === 'KD_CUDA_UNAVAILABLE');
      }
    });
    it('deviceCount() is 0 when present', function () {
      if (typeof kd.cuda.deviceCount === 'function') assert.equal(kd.cuda.deviceCount(), 0);
    });
  });

  describe('with a GPU', function () {
    before(function () {
      if (!available) {
        console.log('      (skipped: no CUDA GPU here - kd.cuda.isAvailable() is false)');
        this.skip();
      }
    });

    for (const dtype of ALL_DTYPES) {
      it(`round-trips ${dtype} to('cuda') and back`, async function () {
        const src = dtype === 'bool' ? [true, false, true, true] : [1, 0, 3, dtype === 'uint8' ? 200 : -2];
        const c = kd.tensor(src, { dtype });
        const g = c.to('cuda');
        assert.match(g.device, /^cuda(:0)?$/);
        assert.equal(g.dtype, dtype);
        const back = g.to('cpu');
        assert.equal(back.device, 'cpu');
        assert.deepEqual(values(back), values(c));
        assert.deepEqual(Array.from(await g.data(), (x) => (typeof x === 'bigint' ? Number(x) : x)),
          Array.from(c.dataSync(), (x) => (typeof x === 'bigint' ? Number(x) : x)));
        // a non-contiguous view goes to the GPU too
        const v = kd.tensor([[1, 2], [3, 4]], { dtype: dtype === 'bool' ? 'float32' : dtype }).t();
        assert.deepEqual(values(v.to('cuda').to('cpu')), values(v));
      });
    }

    it('ops on CUDA match the CPU', function () {
      kd.manualSeed(0);
      const a = kd.randn([33, 17]);
      const b = kd.randn([17, 9]);
      const cpu = values(a.matmul(b).relu().sum(1));
      const gpu = values(a.to('cuda').matmul(b.to('cuda')).relu().sum(1).to('cpu'));
      cpu.forEach((x, i) => assert.ok(Math.abs(x - gpu[i]) < 1e-3 + 1e-3 * Math.abs(x), `element ${i}`));
    });

    it('mixing devices is KD_DEVICE_MISMATCH', function () {
      expectKdError(() => kd.ones([2]).add(kd.ones([2], { device: 'cuda' })), 'KD_DEVICE_MISMATCH');
    });

    it('manualSeed gives the same numbers on CPU and CUDA', function () {
      kd.manualSeed(77);
      const c = values(kd.randn([1000]));
      kd.manualSeed(77);
      const g = values(kd.randn([1000], { device: 'cuda' }).to('cpu'));
      c.forEach((x, i) => assert.ok(Math.abs(x - g[i]) < 1e-5, `element ${i}: ${x} vs ${g[i]}`));
    });
  });
});
