// data_prefetch.test.js - DataLoader's background prefetch (issue 7): kd.data.gatherRows (the
// native gather on the libuv thread pool, src/napi/data_async.c) and `for await` over row
// tensors: the same batches as sync iteration, gathers that overlap a busy main thread,
// disposing the dataset mid-epoch, and errors as rejected Promises with a `code`.
'use strict';

const assert = require('node:assert/strict');

const kd = require('..');

const { Dataset, TensorDataset, Subset, DataLoader, gatherRows } = kd.data;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const now = () => Number(process.hrtime.bigint()) / 1e6;

// Every batch of a loader, sync or async, as plain data (shape, dtype, values, contiguity).
function describeBatch(b) {
  const one = (t) => ({ shape: t.shape, dtype: t.dtype, values: t.arraySync(), contiguous: t.isContiguous(), grad: t.requiresGrad });
  if (Array.isArray(b)) return b.map(one);
  return Object.fromEntries(Object.entries(b).map(([k, t]) => [k, one(t)]));
}
async function collectAsync(loader) {
  const out = [];
  for await (const b of loader) out.push(describeBatch(b));
  return out;
}
const collectSync = (loader) => [...loader].map(describeBatch);

// A user dataset exposing its rows through rowTensors() (an object-shaped batch), no getBatch.
class RowDataset extends Dataset {
  constructor(tensors, n) { super(); this.t = tensors; this.n = n; }
  get length() { return this.n === undefined ? this.t.image.shape[0] : this.n; }
  get(i) { return { image: this.t.image.select(0, i), label: this.t.label.select(0, i) }; }
  rowTensors() { return this.t; }
}

// Live tensors now. Checked right after the awaited work: a gather releases its sources before its
// Promise settles, and a `for await` loop ends only once the batches it left in flight are
// disposed (lib/data/dataloader.js), so nothing is pending (finalizers may only lower the count).
const liveNow = () => kd.memory().liveTensors;

describe('kd.data background prefetch', () => {
  describe('gatherRows', () => {
    it('resolves with indexSelect(0, indices) of each tensor, any dtype and strides, never requiring grad', async () => {
      const x = kd.randn([20, 3, 4]);
      const xt = kd.randn([5, 20]).t(); // non-contiguous rows
      const y = kd.arange(20);
      const h = kd.arange(40, { dtype: 'float16' }).reshape([20, 2]);
      const b = kd.tensor(Array.from({ length: 20 }, (_, i) => i % 3 === 0));
      const w = kd.randn([20], { requiresGrad: true });
      const idx = [3, 0, 19, 3, 7];
      const srcs = [x, xt, y, h, b, w];
      const got = await gatherRows(srcs, idx);
      const index = kd.tensor(BigInt64Array.from(idx.map(BigInt)));
      got.forEach((g, i) => {
        const want = kd.noGrad(() => srcs[i].indexSelect(0, index));
        assert.deepEqual(g.shape, want.shape);
        assert.equal(g.dtype, srcs[i].dtype);
        assert.deepEqual(g.arraySync(), want.arraySync());
        assert.equal(g.isContiguous(), true);
        assert.equal(g.requiresGrad, false);
      });
      // typed-array indices and an empty batch
      const [g32] = await gatherRows([y], Int32Array.from([4, 2]));
      assert.deepEqual(g32.arraySync(), [4, 2]);
      const [g64] = await gatherRows([y], BigInt64Array.from([5n]));
      assert.deepEqual(g64.arraySync(), [5]);
      const [e] = await gatherRows([x], []);
      assert.deepEqual(e.shape, [0, 3, 4]);
    });

    it('errors are rejected Promises with a code', async () => {
      const x = kd.arange(10);
      await assert.rejects(gatherRows([x], [1, 10]), { code: 'KD_INDEX_OUT_OF_RANGE' });
      await assert.rejects(gatherRows([x], [-1]), { code: 'KD_INDEX_OUT_OF_RANGE' });
      await assert.rejects(gatherRows([x], [1.5]), { code: 'KD_INVALID_TYPE' });
      await assert.rejects(gatherRows([x], 'abc'), { code: 'KD_INVALID_TYPE' });
      await assert.rejects(gatherRows([x, 3], [0]), { code: 'KD_INVALID_TYPE' });
      await assert.rejects(gatherRows([kd.tensor(1)], [0]), { code: 'KD_INVALID_ARGUMENT' });
      const d = kd.arange(4);
      d.dispose();
      await assert.rejects(gatherRows([d], [0]), { code: 'KD_DISPOSED' });
      // the process and later gathers are fine
      const [ok] = await gatherRows([x], [9]);
      assert.deepEqual(ok.arraySync(), [9]);
    });

    it('a source disposed while its gather is in flight stays alive until the gather settles', async () => {
      const x = kd.arange(200000, { dtype: 'float32' }).reshape([1000, 200]);
      const live = kd.memory().liveTensors;
      const idx = Array.from({ length: 500 }, (_, i) => (i * 7) % 1000);
      const p = gatherRows([x], idx);
      x.dispose(); // the gather holds its own reference: no freed memory is read
      const [g] = await p;
      const d = g.dataSync();
      for (let r = 0; r < idx.length; r++) assert.equal(d[r * 200 + 3], idx[r] * 200 + 3);
      g.dispose();
      assert.ok(liveNow() <= live - 1, `${liveNow()} live tensors, ${live - 1} expected`);
    });
  });

  describe('DataLoader for await over row tensors', () => {
    const make = () => new TensorDataset(kd.randn([53, 3]), kd.arange(53), kd.randn([53, 4, 2]).transpose(1, 2));

    it('gives the same batches as sync iteration: shuffled, unshuffled, dropLast, prefetch sizes', async () => {
      const ds = make();
      for (const opts of [{ batchSize: 8 }, { batchSize: 8, dropLast: true }, { batchSize: 5, shuffle: true, seed: 3 },
        { batchSize: 7, shuffle: true, seed: 11, dropLast: true, prefetch: 4 }, { batchSize: 60 }, { batchSize: 1, prefetch: 1 }]) {
        const sync = collectSync(new DataLoader(ds, opts));
        const asyncB = await collectAsync(new DataLoader(ds, opts));
        assert.deepEqual(asyncB.map((b) => b.map((t) => ({ ...t, grad: false }))), sync.map((b) => b.map((t) => ({ ...t, grad: false }))), JSON.stringify(opts));
        assert.equal(asyncB.length, new DataLoader(ds, opts).length);
        // the shuffled epochs of one loader advance its generator the same way on both paths
        if (opts.shuffle) {
          const a = new DataLoader(ds, opts);
          const s = new DataLoader(ds, opts);
          await collectAsync(a);
          collectSync(s);
          assert.deepEqual(await collectAsync(a), collectSync(s));
        }
      }
    });

    it('takes the background path (batches never require grad) for TensorDataset, Subset and rowTensors()', async () => {
      const w = kd.randn([12, 2], { requiresGrad: true });
      const ds = new TensorDataset(w, kd.arange(12));
      for await (const [x] of new DataLoader(ds, { batchSize: 5 })) assert.equal(x.requiresGrad, false);
      // prefetch 0 keeps the main-thread path (getBatch, which records the graph as before)
      for await (const [x] of new DataLoader(ds, { batchSize: 5, prefetch: 0 })) assert.equal(x.requiresGrad, true);
      const sub = new Subset(ds, [11, 2, 5, 7]);
      const got = [];
      for await (const [x, y] of new DataLoader(sub, { batchSize: 3 })) {
        assert.equal(x.requiresGrad, false);
        got.push(...y.arraySync());
      }
      assert.deepEqual(got, [11, 2, 5, 7]);
      // a user dataset with rowTensors() and an object-shaped batch
      const rd = new RowDataset({ image: kd.randn([9, 2, 2]), label: kd.arange(9) });
      const syncB = collectSync(new DataLoader(rd, { batchSize: 4, shuffle: true, seed: 2 }));
      const asyncB = await collectAsync(new DataLoader(rd, { batchSize: 4, shuffle: true, seed: 2 }));
      assert.deepEqual(asyncB, syncB);
      assert.deepEqual(Object.keys(asyncB[0]), ['image', 'label']);
      assert.throws(() => new DataLoader(new RowDataset([1, 2], 2), { batchSize: 2 })[Symbol.asyncIterator](), { code: 'KD_INVALID_TYPE' });
    });

    it('a custom collate or a dataset without row tensors keeps the main-thread path', async () => {
      const ds = make();
      const loader = new DataLoader(ds, { batchSize: 20, collate: (samples) => samples.map(([, y]) => y.item()) });
      const got = [];
      for await (const b of loader) got.push(b);
      assert.deepEqual(got, [[...Array(20).keys()], [...Array(20).keys()].map((i) => i + 20), [...Array(13).keys()].map((i) => i + 40)]);
      class Plain extends Dataset { get length() { return 4; } get(i) { return kd.tensor([i]); } }
      const plain = [];
      for await (const b of new DataLoader(new Plain(), { batchSize: 3 })) plain.push(b.arraySync());
      assert.deepEqual(plain, [[[0], [1], [2]], [[3]]]);
    });

    it('break disposes the batches gathered ahead', async () => {
      const ds = make();
      const live = kd.memory().liveTensors;
      let n = 0;
      for await (const b of new DataLoader(ds, { batchSize: 4, prefetch: 3 })) {
        for (const t of b) t.dispose();
        if (++n === 2) break;
      }
      assert.ok(liveNow() <= live, `${liveNow()} live tensors, ${live} before`);
    });

    it('disposing the dataset mid-epoch: the next batch rejects with KD_DISPOSED, nothing leaks or crashes', async () => {
      const x = kd.randn([40, 30]);
      const y = kd.arange(40);
      const ds = new TensorDataset(x, y);
      const live = kd.memory().liveTensors;
      const seen = [];
      await assert.rejects(async () => {
        for await (const [bx, by] of new DataLoader(ds, { batchSize: 4, shuffle: true, seed: 1, prefetch: 3 })) {
          seen.push(by.arraySync());
          bx.dispose();
          by.dispose();
          if (seen.length === 2) x.dispose(); // while batches 3..5 are being gathered
        }
      }, (e) => e.code === 'KD_DISPOSED' && /disposed during the epoch/.test(e.message));
      assert.equal(seen.length, 2);
      y.dispose();
      assert.ok(liveNow() <= live - 2, `${liveNow()} live tensors, ${live - 2} expected`);
      // a new epoch over the disposed dataset fails at once, with the same code
      await assert.rejects(async () => { for await (const b of new DataLoader(ds, { batchSize: 4 })) void b; }, { code: 'KD_DISPOSED' });
    });

    it('an index past the tensors (a dataset whose length lies) rejects the batch with a code', async () => {
      const rd = new RowDataset({ image: kd.randn([6, 2]), label: kd.arange(6) }, 8);
      const got = [];
      await assert.rejects(async () => {
        for await (const b of new DataLoader(rd, { batchSize: 3, prefetch: 2 })) got.push(...b.label.arraySync());
      }, { code: 'KD_INDEX_OUT_OF_RANGE' });
      assert.deepEqual(got, [0, 1, 2, 3, 4, 5]); // batches [0..2], [3..5]; [6, 7] fails
    });
  });

  it('a worker thread terminated with gathers in flight does not take the process down', async () => {
    const { Worker } = require('node:worker_threads');
    const src = `
      const kd = require(${JSON.stringify(require.resolve('..'))});
      const x = kd.rand([1000, 3000]).t();
      for (let i = 0; i < 6; i++) kd.data.gatherRows([x], Array.from({ length: 2000 }, (_, j) => (j * 13 + i) % 3000));
      require('node:worker_threads').parentPort.postMessage('started');`;
    for (let r = 0; r < 2; r++) {
      const w = new Worker(src, { eval: true });
      await new Promise((resolve, reject) => { w.once('message', resolve); w.once('error', reject); });
      await w.terminate();
    }
    const [g] = await gatherRows([kd.arange(5)], [4]);
    assert.deepEqual(g.arraySync(), [4]);
  });

  describe('overlap', function () {
    this.timeout(120000);

    // Blocks the main thread (the event loop too) for `ms`.
    const busy = (ms) => { const end = now() + ms; let x = 0; while (now() < end) x++; return x; };

    it('batch k+1 is gathered while the main thread is blocked on batch k', async () => {
      // One gather must take long enough to measure on a loaded machine (~100 ms here) with
      // little memory: batches of 3000 rows of a transposed 3000x6000 float32 tensor (72 MiB),
      // whose rows are strided columns of the storage (a cache miss per element).
      const rows = 6000;
      const batch = 3000;
      const x = kd.rand([3000, rows]).t();
      const ds = new TensorDataset(x);
      try {
        // The cost of one gather of this size on the main thread (the old path's cost of the
        // next batch), warm: the fastest of a few.
        let gather = Infinity;
        const idx = Array.from({ length: batch }, (_, i) => (i * 7919) % rows);
        for (let i = 0; i < 4; i++) {
          const t0 = now();
          const [b] = ds.getBatch(idx);
          gather = Math.min(gather, now() - t0);
          b.dispose();
        }
        const results = [];
        // Up to 3 tries, so a burst of load from other processes does not fail the test.
        for (let attempt = 0; attempt < 3; attempt++) {
          const it = new DataLoader(ds, { batchSize: batch, shuffle: true, seed: attempt, prefetch: 1 })[Symbol.asyncIterator]();
          const first = await it.next(); // batch 1's gather is in flight from here on
          busy(Math.max(6 * gather, 300)); // "the training step" (the background gather may run at half speed)
          const t0 = now();
          const second = await it.next();
          const wait = now() - t0;
          for (const t of first.value) t.dispose();
          for (const t of second.value) t.dispose();
          await it.return();
          results.push(wait);
          // On the old path the await does the whole gather on the main thread (>= `gather`).
          if (wait < gather / 2) break;
        }
        const best = Math.min(...results);
        if (process.env.KD_PREFETCH_DEBUG) console.log('gather', gather, 'waits', results);
        assert.ok(best < gather / 2, `await of the next batch took ${results.map((r) => r.toFixed(1)).join(', ')} ms; one gather takes ${gather.toFixed(1)} ms`);
      } finally {
        x.dispose();
        await sleep(50);
      }
    });
  });
});
