// cuda_deferred_errors.test.js - an index out of range found on a CUDA device (indexing ops'
// index check, nllLoss's target check) or a binaryCrossEntropy input outside [0, 1] is raised at
// the next sync point, as CUDA's device-side asserts: the call itself does not wait for the
// device, the sync point (dataSync, item, await dataAsync(), await kd.cuda.synchronize()) throws the
// CPU's error (code and message) exactly once, and later work runs normally (Note [Deferred index errors] in
// cuda/deferred_check.cuh). Runs where CUDA is available: on a GPU, or on the emulated GPU.
'use strict';

const { kd, assert } = require('./helpers');

describe('CUDA: index errors found on the device are raised at the next sync point', function () {
  if (!kd.cuda.isAvailable()) return; // nothing to check without a CUDA device
  this.timeout(120000);

  const x = () => kd.arange(24, { dtype: 'float32' }).reshape([4, 6]);
  // [name, the call on a device ('cpu' or 'cuda')]; each index list holds two bad values, the CPU
  // reports the first
  const bad = {
    gather: (d) => x().to(d).gather(1, kd.tensor([[0, 7, 1], [9, 2, 3], [1, 1, 1], [0, 0, 0]], { dtype: 'int64' }).to(d)),
    indexSelect: (d) => x().to(d).indexSelect(0, kd.tensor([1, -5, 4], { dtype: 'int64' }).to(d)),
    embedding: (d) => kd.nn.functional.embedding(kd.tensor([[2, 3], [11, 4]], { dtype: 'int64' }).to(d), x().to(d)),
    nllLoss: (d) => kd.nn.functional.nllLoss(x().to(d).logSoftmax(1), kd.tensor([1, 6, 2, -3], { dtype: 'int64' }).to(d)),
    crossEntropy: (d) => kd.nn.functional.crossEntropy(x().to(d), kd.tensor([0, 1, 8, 5], { dtype: 'int64' }).to(d)),
    binaryCrossEntropy: (d) => kd.nn.functional.binaryCrossEntropy(kd.tensor([0.5, 1.5, 0.25, -1]).to(d), kd.tensor([1, 0, 1, 0]).to(d)),
    'binaryCrossEntropy (float64, a NaN input, with weights)': (d) => kd.nn.functional.binaryCrossEntropy(
      kd.tensor([[0.5, NaN], [0.25, 0.75]], { dtype: 'float64' }).to(d), kd.tensor([[1, 0], [1, 0]], { dtype: 'float64' }).to(d),
      { weight: kd.tensor([2, 3], { dtype: 'float64' }).to(d) }),
  };
  const expectedCode = (name) => (name.startsWith('binaryCrossEntropy') ? 'KD_INVALID_ARGUMENT' : 'KD_INDEX_OUT_OF_RANGE');
  const cpuError = (fn) => {
    try {
      fn('cpu');
    } catch (e) {
      return e;
    }
    assert.fail('the CPU raises no error');
  };
  const syncPoints = {
    dataSync: (r) => r.dataSync(),
    item: (r) => r.sum().item(),
    'await dataAsync()': async (r) => r.dataAsync(),
    'await kd.cuda.synchronize()': async () => kd.cuda.synchronize(),
  };

  for (const [name, fn] of Object.entries(bad)) {
    const expected = cpuError(fn);
    it(`${name}: the CPU's error (${expected.message})`, function () {
      assert.equal(expected.code, expectedCode(name));
    });
    for (const [point, sync] of Object.entries(syncPoints)) {
      it(`${name}: raised by ${point}, once; later work runs normally`, async function () {
        const r = fn('cuda'); // no error at the call: the device has not been waited for
        let err = null;
        try {
          await sync(r);
        } catch (e) {
          err = e;
        }
        assert.ok(err, `${point} raised no error`);
        assert.equal(err.code, expected.code);
        assert.equal(err.message, expected.message);
        assert.ok(err instanceof kd.KindlingError);
        await kd.cuda.synchronize(); // once: cleared when raised
        assert.deepEqual(kd.arange(4, { device: 'cuda' }).gather(0, kd.tensor([3, 0], { dtype: 'int64', device: 'cuda' })).arraySync(), [3, 0]);
        kd.dispose(r);
      });
    }
  }

  it('the first of several failed checks is raised, once', function () {
    const a = bad.indexSelect('cuda');
    const b = bad.gather('cuda');
    assert.throws(() => b.dataSync(), (e) => e.message === cpuError(bad.indexSelect).message);
    assert.doesNotThrow(() => a.dataSync());
    kd.dispose([a, b]);
  });

  it('bad indices are clamped: the ops after the check stay in bounds', function () {
    const expected = cpuError((d) => kd.arange(5, { dtype: 'float32', device: d }).indexSelect(0, kd.tensor([1e9, -1e9, 2], { dtype: 'int64' })));
    const src = kd.arange(5, { dtype: 'float32', device: 'cuda' });
    const big = kd.tensor([1e9, -1e9, 2], { dtype: 'int64', device: 'cuda' });
    const r = src.indexSelect(0, big);
    const dst = kd.zeros([5], { device: 'cuda' }).indexAdd(0, big, kd.ones([3], { device: 'cuda' }));
    assert.throws(() => r.dataSync(), (e) => e.code === 'KD_INDEX_OUT_OF_RANGE' && e.message === expected.message);
    assert.equal(dst.sum().item(), 3); // every value landed inside dst
    kd.dispose([src, big, r, dst]);
  });

  it('an index into an empty dim is still checked at the call', function () {
    const e = kd.zeros([0, 3], { device: 'cuda' });
    assert.throws(() => e.indexSelect(0, kd.tensor([0], { dtype: 'int64', device: 'cuda' })),
      (err) => err.code === 'KD_INDEX_OUT_OF_RANGE');
  });

  it('valid indices raise nothing', async function () {
    const r = x().to('cuda').indexSelect(0, kd.tensor([3, 1, 0], { dtype: 'int64', device: 'cuda' }));
    assert.deepEqual(Array.from(await r.dataAsync()).slice(0, 3), [18, 19, 20]);
    await kd.cuda.synchronize();
  });
});
