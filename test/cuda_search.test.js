// cuda_search.test.js - the search family's CUDA kernels (cuda/ops_search.cu, logcumsumexp in
// ops_scan.cu) on inputs larger than the fixtures', against the CPU: many blocks of shared-memory
// histograms and the global-atomics path past 4096 bins, batched searchsorted with a sorter, many
// runs of uniqueConsecutive, long kthvalue/mode rows with ties, logcumsumexp along inner and outer
// dims, and the gradients of kthvalue, quantile and logcumsumexp; plus the device round trips
// (uniqueConsecutive reads its run count back once). Skipped when kd.cuda.isAvailable() is false
// (run on the emulated GPU by test/emulated-gpu.mocharc.json).
'use strict';

const { kd, assert, values } = require('./helpers');

const available = kd.cuda.isAvailable();

/** A CPU tensor of n values: floats from randn, integers in [low, high). */
function input(shape, dtype, seed, low = 0, high = 50) {
  kd.manualSeed(seed);
  if (dtype === 'float32' || dtype === 'float64') return kd.randn(shape, { dtype });
  return kd.randint(low, high, shape, { dtype });
}

/** fn on the CPU tensors and on their CUDA copies: results equal (floats within tol). */
function same(fn, inputs, tol = 0) {
  const cpu = fn(...inputs);
  const cu = fn(...inputs.map((t) => (t instanceof kd.Tensor ? t.to('cuda') : t)));
  const a = Array.isArray(cpu) ? cpu : [cpu];
  const b = Array.isArray(cu) ? cu : [cu];
  assert.equal(b.length, a.length);
  a.forEach((x, i) => {
    assert.ok(String(b[i].device).startsWith('cuda'), `result ${i} on ${b[i].device}`);
    assert.deepEqual(b[i].shape, x.shape, `result ${i} shape`);
    assert.equal(b[i].dtype, x.dtype, `result ${i} dtype`);
    const e = values(x), g = values(b[i].cpu());
    for (let j = 0; j < e.length; j++) {
      const ok = Number.isNaN(e[j]) ? Number.isNaN(g[j]) : tol ? Math.abs(g[j] - e[j]) <= tol * (1 + Math.abs(e[j])) : g[j] === e[j];
      if (!ok) assert.fail(`result ${i} [${j}]: cuda ${g[j]} cpu ${e[j]}`);
    }
  });
}

describe('CUDA search and counting on larger inputs (CUDA vs CPU)', function () {
  if (!available) {
    it('is skipped: CUDA is not available', function () { this.skip(); });
    return;
  }

  it('histc: shared-memory bins over many blocks, and global atomics past 4096 bins', function () {
    const x = input([200000], 'float32', 1);
    same((t) => kd.histc(t, 100, -3, 3), [x]);
    same((t) => kd.histc(t, 5000), [x]);
    same((t) => kd.histc(t, 64), [input([50000], 'int64', 2, -100, 100)]);
  });

  it('bincount: counts and float32/float64 weights, shared and global bins', function () {
    const small = input([100000], 'int32', 3, 0, 300);
    const wide = input([100000], 'int64', 4, 0, 20000);
    same((t) => kd.bincount(t), [small]);
    same((t) => kd.bincount(t), [wide]);
    same((t, w) => kd.bincount(t, w), [small, input([100000], 'float64', 5)], 1e-9);
    same((t, w) => kd.bincount(t, w, 30000), [wide, input([100000], 'float32', 6)], 1e-4);
  });

  it('searchsorted: batched rows with a sorter, both sides, int32 output', function () {
    const seq = input([8, 1000], 'float64', 7);
    const sorter = kd.argsort(seq, 1);
    const v = input([8, 5000], 'float64', 8);
    same((s, t, o) => kd.searchsorted(s, t, { sorter: o }), [seq, v, sorter]);
    same((s, t) => kd.searchsorted(s.sort(1).values, t, { right: true, outInt32: true }), [seq, v]);
    same((s, t) => kd.bucketize(t, s), [input([3000], 'int64', 9).sort().values, input([40000], 'int64', 10)]);
  });

  it('uniqueConsecutive: many runs, flat and along a dim', function () {
    const x = input([100000], 'int64', 11, 0, 3);
    same((t) => kd.uniqueConsecutive(t, true, true), [x]);
    same((t) => kd.uniqueConsecutive(t, { dim: 1, returnInverse: true, returnCounts: true }), [input([3, 5000], 'int32', 12, 0, 2)]);
  });

  it('kthvalue and mode of long rows with ties; isin, quantile, aminmax, logcumsumexp', function () {
    const x = input([16, 3000], 'int64', 13, 0, 40);
    same((t) => t.kthvalue(777, 1), [x]);
    same((t) => t.kthvalue(5, 0, true), [x]);
    same((t) => kd.mode(t, 1), [x]);
    same((t, u) => kd.isin(t, u), [input([50000], 'int32', 14, 0, 1000), input([700], 'int64', 15, 0, 1000)]);
    const f = input([6, 4000], 'float64', 16);
    same((t) => kd.quantile(t, kd.tensor([0.1, 0.5, 0.9], { dtype: 'float64', device: t.device }), 1), [f], 1e-12);
    same((t) => kd.aminmax(t, { dim: 0 }), [f]);
    same((t) => kd.logcumsumexp(t, 1), [f], 1e-12);
    same((t) => kd.logcumsumexp(t, 0), [f], 1e-12);
  });

  it('gradients of kthvalue, quantile and logcumsumexp match the CPU', function () {
    const grads = (device) => {
      const x = input([5, 300], 'float64', 17).to(device).requiresGrad_();
      const y = x.kthvalue(100, 1).values.sum().add(kd.nanquantile(x, 0.3, 1).mul(2).sum())
        .add(kd.logcumsumexp(x, 1).mul(x.detach()).sum());
      y.backward();
      return values(x.grad.cpu());
    };
    const a = grads('cpu'), b = grads('cuda');
    a.forEach((e, i) => assert.ok(Math.abs(b[i] - e) <= 1e-9 * (1 + Math.abs(e)), `[${i}] cuda ${b[i]} cpu ${e}`));
  });

  it('uniqueConsecutive reads its run count back with one device-to-host copy', function () {
    if (!kd.cuda.emulator.isEnabled()) this.skip();
    const x = input([10000], 'int64', 18, 0, 3).to('cuda');
    const count = () => {
      const a = kd.cuda.emulator.stats();
      kd.tidy(() => kd.uniqueConsecutive(x, true, true));
      const b = kd.cuda.emulator.stats();
      return b.copiesDeviceToHost - a.copiesDeviceToHost;
    };
    count(); // warm up
    assert.equal(count(), 1);
  });
});
