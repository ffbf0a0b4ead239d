// factory_fast_path.test.js - kd.empty/zeros/ones/rand/randn called with a plain size list and
// plain options take a direct path (Note [Factories' fast path] in lib/autograd.js): the same
// results, modes and errors as the general binding, and nothing of the caller's list is read
// inside the native call.
'use strict';

const { kd, assert } = require('./helpers');

describe('factories: the direct path for a size list and plain options', function () {
  it('gives what the general binding gives (shape, dtype, device, values, requiresGrad)', function () {
    for (const [name, opts] of [['zeros', undefined], ['ones', { dtype: 'float64' }], ['empty', { device: 'cpu' }],
      ['zeros', { dtype: 'int64', device: 'cpu' }], ['ones', { requiresGrad: true }], ['zeros', { dtype: undefined }]]) {
      const fast = opts === undefined ? kd[name]([2, 3]) : kd[name]([2, 3], opts);
      const slow = opts === undefined ? kd[name](2, 3) : kd[name](2, 3, opts); // varargs: the general path
      assert.deepEqual(fast.shape, slow.shape);
      assert.equal(fast.dtype, slow.dtype);
      assert.equal(fast.device, slow.device);
      assert.equal(fast.requiresGrad, slow.requiresGrad);
      if (name !== 'empty') assert.deepEqual(fast.arraySync(), slow.arraySync());
      kd.dispose([fast, slow]);
    }
    assert.deepEqual(kd.zeros([]).shape, []);
    assert.deepEqual(kd.ones([0, 4]).shape, [0, 4]);
  });

  it('random factories follow the seed as before', function () {
    kd.manualSeed(7);
    const a = kd.randn([5]).dataSync();
    kd.manualSeed(7);
    const b = kd.randn(5).dataSync();
    assert.deepEqual(Array.from(a), Array.from(b));
    kd.manualSeed(3);
    const c = kd.rand([4], { dtype: 'float64' }).dataSync();
    kd.manualSeed(3);
    const d = kd.rand(4, { dtype: 'float64' }).dataSync();
    assert.deepEqual(Array.from(c), Array.from(d));
  });

  it('errors are the general binding\'s: bad dtype, bad device, unknown option, negative size', function () {
    const msg = (f) => { try { f(); } catch (e) { return `${e.code}: ${e.message}`; } return 'no error'; };
    assert.equal(msg(() => kd.zeros([2], { dtype: 'nope' })), msg(() => kd.zeros(2, { dtype: 'nope' })));
    assert.equal(msg(() => kd.zeros([2], { device: 'gpu' })), msg(() => kd.zeros(2, { device: 'gpu' })));
    assert.equal(msg(() => kd.zeros([2], { foo: 1 })), msg(() => kd.zeros(2, { foo: 1 })));
    assert.equal(msg(() => kd.ones([2], { dtype: 5 })), msg(() => kd.ones(2, { dtype: 5 })));
    assert.equal(msg(() => kd.empty([-1, 2])), msg(() => kd.empty(-1, 2)));
    assert.match(msg(() => kd.empty([2.5])), /KD_INVALID_TYPE/);
  });

  it('a size list with a getter is read once, before native code runs', function () {
    const sizes = [2, 0];
    let reads = 0;
    Object.defineProperty(sizes, 1, { get() { reads++; return 3; } });
    const t = kd.zeros(sizes);
    assert.deepEqual(t.shape, [2, 3]);
    assert.equal(reads, 1);
    t.dispose();
  });

  it('grad modes apply: inference mode makes inference tensors, also from async code', async function () {
    const t = kd.inferenceMode(() => kd.ones([2]));
    const u = kd.ones([2]);
    assert.equal(t.isInference(), true);
    assert.equal(u.isInference(), false);
    const v = await kd.inferenceMode(async () => { await null; return kd.zeros([1]); });
    assert.equal(v.isInference(), true);
    kd.dispose([t, u, v]);
  });
});
