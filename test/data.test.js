// data.test.js - kd.data: Dataset/TensorDataset/Subset, DataLoader semantics (batch sizes,
// dropLast, shuffle determinism and coverage, default collate of nested structures, prefetch
// order, async datasets, option errors), randomSplit and the seeded Generator.
'use strict';

const assert = require('node:assert/strict');

const kd = require('..');

const { Dataset, TensorDataset, Subset, DataLoader, randomSplit, defaultCollate, Generator } = kd.data;

// A dataset of plain samples: get(i) -> fn(i).
class FnDataset extends Dataset {
  constructor(n, fn) { super(); this.n = n; this.fn = fn; }
  get length() { return this.n; }
  get(i) { return this.fn(i); }
}

const range = (n) => Array.from({ length: n }, (_, i) => i);
const flat = (batches) => batches.flatMap((b) => b);

describe('kd.data', () => {
  describe('Generator', () => {
    it('is deterministic per seed and gives permutations', () => {
      const a = new Generator(42).randperm(100);
      assert.deepEqual(new Generator(42).randperm(100), a);
      assert.notDeepEqual(new Generator(43).randperm(100), a);
      assert.deepEqual([...a].sort((x, y) => x - y), range(100));
      assert.deepEqual(new Generator(2n ** 60n + 1n).randperm(5).length, 5);
      // PyTorch 1.13's torch.randperm(8, generator=torch.Generator().manual_seed(0))
      assert.deepEqual(new Generator(0).randperm(8), [4, 0, 7, 3, 2, 5, 1, 6]);
      assert.deepEqual(new Generator(0).permutation(8), Uint32Array.from([4, 0, 7, 3, 2, 5, 1, 6]));
      // negative seeds wrap to 64 bits, as PyTorch's (manual_seed(-1) -> 2^64 - 1)
      assert.deepEqual(new Generator(-1).randperm(8), [3, 6, 4, 7, 2, 1, 5, 0]);
      assert.equal(new Generator(-1).initialSeed(), 2n ** 64n - 1n);
      const g = new Generator(7);
      const s = g.getState();
      const x = g.nextUint32();
      g.setState(s);
      assert.equal(g.nextUint32(), x);
      assert.throws(() => new Generator(1.5), { code: 'KD_INVALID_TYPE' });
    });

    it('below(n) is roughly uniform', () => {
      const g = new Generator(1);
      const counts = new Array(6).fill(0);
      for (let i = 0; i < 60000; i++) counts[g.below(6)]++;
      for (const c of counts) assert.ok(Math.abs(c - 10000) < 500, String(counts));
    });
  });

  describe('TensorDataset / Subset', () => {
    it('samples are rows; sizes must match', () => {
      const x = kd.arange(12, { dtype: 'float32' }).reshape([6, 2]);
      const y = kd.arange(6);
      const ds = new TensorDataset(x, y);
      assert.equal(ds.length, 6);
      const [xi, yi] = ds.get(4);
      assert.deepEqual(xi.arraySync(), [8, 9]);
      assert.equal(yi.item(), 4);
      assert.deepEqual(ds.get(-1)[1].item(), 5);
      assert.throws(() => ds.get(6), { code: 'KD_INDEX_OUT_OF_RANGE' });
      assert.throws(() => new TensorDataset(x, kd.arange(5)), /Size mismatch between tensors/);
      assert.throws(() => new TensorDataset(), { code: 'KD_INVALID_ARGUMENT' });
      assert.throws(() => new TensorDataset(kd.tensor(1)), { code: 'KD_INVALID_ARGUMENT' });
      assert.throws(() => new TensorDataset([1, 2]), { code: 'KD_INVALID_TYPE' });
      const sub = new Subset(ds, [5, 0]);
      assert.equal(sub.length, 2);
      assert.equal(sub.get(0)[1].item(), 5);
      assert.deepEqual(sub.getBatch([1, 0])[1].arraySync(), [0, 5]);
      assert.throws(() => new Subset(ds, [6]), { code: 'KD_INDEX_OUT_OF_RANGE' });
      assert.equal(new Subset(new FnDataset(3, (i) => i), [2]).getBatch, undefined);
    });

    it('the base class says what is missing', () => {
      assert.throws(() => new Dataset().get(0), { code: 'KD_NOT_SUPPORTED' });
      assert.throws(() => new Dataset().length, { code: 'KD_NOT_SUPPORTED' });
    });
  });

  describe('DataLoader', () => {
    const ds10 = () => new TensorDataset(kd.arange(20, { dtype: 'float32' }).reshape([10, 2]), kd.arange(10));

    it('batch sizes, length and dropLast', () => {
      const ds = ds10();
      for (const [bs, dropLast, sizes] of [[3, false, [3, 3, 3, 1]], [3, true, [3, 3, 3]], [5, false, [5, 5]],
        [1, false, new Array(10).fill(1)], [20, false, [10]], [20, true, []]]) {
        const loader = new DataLoader(ds, { batchSize: bs, dropLast });
        const got = [...loader].map(([x, y]) => {
          assert.deepEqual(x.shape, [y.shape[0], 2]);
          return y.shape[0];
        });
        assert.deepEqual(got, sizes, `batchSize ${bs} dropLast ${dropLast}`);
        assert.equal(loader.length, sizes.length);
      }
      const [[x0, y0]] = new DataLoader(ds, { batchSize: 4 });
      assert.deepEqual(y0.arraySync(), [0, 1, 2, 3]);
      assert.equal(y0.dtype, 'int64');
      assert.deepEqual(x0.arraySync()[3], [6, 7]);
      assert.equal(new DataLoader(new FnDataset(0, (i) => i)).length, 0);
    });

    it('shuffle: same seed same order, covers every sample once, epochs differ', () => {
      const ds = ds10();
      const order = (loader) => flat([...loader].map(([, y]) => y.arraySync()));
      const a = new DataLoader(ds, { batchSize: 3, shuffle: true, seed: 5 });
      const b = new DataLoader(ds, { batchSize: 3, shuffle: true, seed: 5 });
      const a1 = order(a);
      const a2 = order(a);
      assert.deepEqual(order(b), a1);
      assert.deepEqual(order(b), a2);
      assert.notDeepEqual(a1, a2);
      assert.notDeepEqual(a1, range(10));
      assert.deepEqual([...a1].sort((x, y) => x - y), range(10));
      assert.deepEqual([...order(new DataLoader(ds, { batchSize: 4, shuffle: true, dropLast: true, seed: 1 }))].length, 8);
      // a shared generator, and the global seed for loaders without one
      const g = new Generator(5);
      assert.deepEqual(order(new DataLoader(ds, { batchSize: 3, shuffle: true, generator: g })), a1);
      kd.manualSeed(3);
      const c1 = order(new DataLoader(ds, { batchSize: 3, shuffle: true }));
      kd.manualSeed(3);
      assert.deepEqual(order(new DataLoader(ds, { batchSize: 3, shuffle: true })), c1);
      assert.deepEqual(order(new DataLoader(ds, { batchSize: 3 })), range(10));
    });

    it('default collate of nested structures (objects, arrays, Maps, numbers, strings, typed arrays)', () => {
      const ds = new FnDataset(5, (i) => ({
        image: kd.full([2, 2], i),
        label: i,
        weight: i + 0.5,
        flag: i % 2 === 0,
        name: `s${i}`,
        pair: [i, kd.tensor([i, -i])],
        extra: new Map([['k', i * 10]]),
        raw: Float32Array.from([i, i + 1, i + 2]),
      }));
      const batches = [...new DataLoader(ds, { batchSize: 2 })];
      assert.equal(batches.length, 3);
      const b = batches[1];
      assert.deepEqual(b.image.shape, [2, 2, 2]);
      assert.deepEqual(b.image.arraySync()[1], [[3, 3], [3, 3]]);
      assert.equal(b.label.dtype, 'int64');
      assert.deepEqual(b.label.arraySync(), [2, 3]);
      assert.equal(b.weight.dtype, 'float64');
      assert.deepEqual(b.weight.arraySync(), [2.5, 3.5]);
      assert.equal(b.flag.dtype, 'bool');
      assert.deepEqual(b.flag.arraySync(), [true, false]);
      assert.deepEqual(b.name, ['s2', 's3']);
      assert.deepEqual(b.pair[0].arraySync(), [2, 3]);
      assert.deepEqual(b.pair[1].arraySync(), [[2, -2], [3, -3]]);
      assert.deepEqual(b.extra.get('k').arraySync(), [20, 30]);
      assert.equal(b.raw.dtype, 'float32');
      assert.deepEqual(b.raw.arraySync(), [[2, 3, 4], [3, 4, 5]]);
      assert.deepEqual(batches[2].label.arraySync(), [4]);
    });

    it('collate errors: unequal lists, mixed kinds, unsupported values, empty batch', () => {
      assert.throws(() => defaultCollate([[1, 2], [1]]), /each element in list of batch should be of equal size/);
      assert.throws(() => defaultCollate([1, 'a']), { code: 'KD_INVALID_TYPE' });
      assert.throws(() => defaultCollate([null]), { code: 'KD_INVALID_TYPE' });
      assert.throws(() => defaultCollate([{ a: 1 }, { b: 1 }]), /has no key 'a'/);
      assert.throws(() => defaultCollate([]), { code: 'KD_INVALID_ARGUMENT' });
      assert.throws(() => defaultCollate([kd.ones([2]), kd.ones([3])]), (e) => e instanceof kd.KindlingError);
    });

    it('a custom collate gets the list of samples', () => {
      const ds = ds10();
      const seen = [];
      const loader = new DataLoader(ds, {
        batchSize: 4,
        collate: (samples) => { seen.push(samples.length); return samples.map(([, y]) => y.item()); },
      });
      assert.deepEqual([...loader], [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]);
      assert.deepEqual(seen, [4, 4, 2]);
    });

    it('for await with prefetch keeps the order, also with async datasets that finish out of order', async () => {
      const delays = [30, 1, 20, 1, 10, 1, 5, 1];
      let inflight = 0;
      let maxInflight = 0;
      const samples = []; // every sample's Promise, so that none outlives the test
      const ds = new FnDataset(8, (i) => {
        const p = (async () => {
          inflight++;
          maxInflight = Math.max(maxInflight, inflight);
          await new Promise((r) => setTimeout(r, delays[i]));
          inflight--;
          return { x: kd.tensor([i, i], { dtype: 'float32' }), y: i };
        })();
        samples.push(p);
        return p;
      });
      for (const prefetch of [0, 1, 3]) {
        maxInflight = 0;
        const got = [];
        for await (const b of new DataLoader(ds, { batchSize: 2, prefetch })) {
          got.push(...b.y.arraySync());
          assert.deepEqual(b.x.shape, [2, 2]);
          await new Promise((r) => setTimeout(r, 5)); // "compute"
        }
        assert.deepEqual(got, range(8), `prefetch ${prefetch}`);
        if (prefetch === 0) assert.ok(maxInflight <= 2);
        else assert.ok(maxInflight > 2, `prefetch ${prefetch}: max in flight ${maxInflight}`);
      }
      assert.throws(() => [...new DataLoader(ds, { batchSize: 2 })], /returned a Promise; iterate with `for await`/);
      // the samples sync iteration asked for before refusing still resolve (creating tensors) after
      // the refusal: wait for them, so that no tensor appears during a later test
      for (const s of await Promise.all(samples)) s.x.dispose();
    });

    it('for await over a TensorDataset gives the same batches as sync iteration; break cleans up', async () => {
      const ds = ds10();
      const loader = new DataLoader(ds, { batchSize: 3, shuffle: true, seed: 9, prefetch: 2 });
      const asyncOrder = [];
      for await (const [, y] of loader) asyncOrder.push(...y.arraySync());
      const again = new DataLoader(ds, { batchSize: 3, shuffle: true, seed: 9 });
      assert.deepEqual(flat([...again].map(([, y]) => y.arraySync())), asyncOrder);
      let n = 0;
      const live = kd.memory().liveTensors;
      for await (const [x, y] of new DataLoader(ds, { batchSize: 2, prefetch: 3 })) {
        assert.equal(x.isDisposed, false);
        x.dispose();
        y.dispose();
        if (++n === 2) break;
      }
      // the batches prefetched but never yielded (gathers maybe still on the thread pool at the
      // break) are disposed by the time the loop statement ends: `for await` awaits return(), which
      // waits for them. (Finalizers of older tensors may only lower the count.)
      assert.equal(n, 2);
      assert.ok(kd.memory().liveTensors <= live, `${kd.memory().liveTensors} live tensors, ${live} before`);
    });

    it('break: the loop ends once the batches in flight are built and disposed (async samples awaited)', async () => {
      // batch 0's samples come as soon as batch 1 has started (a gate, so no timer decides the
      // order), the later ones after 20 ms: at the break, the batches started wait for their samples
      const requested = [];
      let openGate;
      const gate = new Promise((r) => { openGate = r; });
      const ds = new FnDataset(12, (i) => {
        requested.push(i);
        if (i === 2) openGate();
        return i < 2 ? gate.then(() => kd.tensor([i, -i])) : new Promise((r) => setTimeout(() => r(kd.tensor([i, -i])), 20));
      });
      const batches = [];
      const collate = (samples) => {
        const b = defaultCollate(samples);
        for (const s of samples) s.dispose();
        batches.push(b);
        return b;
      };
      let first = null;
      for await (const b of new DataLoader(ds, { batchSize: 2, prefetch: 3, collate })) {
        first = b;
        break;
      }
      assert.deepEqual(first.arraySync(), [[0, 0], [1, -1]]);
      const started = Math.ceil(requested.length / 2);
      assert.ok(started >= 2, `only ${started} batch started`);
      assert.equal(batches.length, started, 'every batch started was built before the loop ended');
      assert.deepEqual(batches.slice(1).map((b) => b.isDisposed), new Array(started - 1).fill(true));
      assert.equal(first.isDisposed, false);
      first.dispose();
    });

    it('errors from the dataset surface at the batch that failed', async () => {
      const ds = new FnDataset(6, (i) => { if (i === 3) throw new Error('bad sample'); return i; });
      const got = [];
      await assert.rejects(async () => {
        for await (const b of new DataLoader(ds, { batchSize: 2, prefetch: 2 })) got.push(...b.arraySync());
      }, /bad sample/);
      assert.deepEqual(got, [0, 1]);
      assert.throws(() => [...new DataLoader(ds, { batchSize: 2 })], /bad sample/);
    });

    it('a dataset of 2^40 samples: batches in order are cut when asked for; shuffling it is a clear error', async () => {
      const huge = new FnDataset(2 ** 40, (i) => i);
      const loader = new DataLoader(huge, { batchSize: 4, collate: (s) => s });
      assert.equal(loader.length, 2 ** 38);
      assert.deepEqual(loader[Symbol.iterator]().next().value, [0, 1, 2, 3]);
      const it = loader[Symbol.asyncIterator]();
      assert.deepEqual((await it.next()).value, [0, 1, 2, 3]);
      assert.deepEqual((await it.next()).value, [4, 5, 6, 7]);
      await it.return();
      assert.deepEqual(new DataLoader(huge, { batchSize: 3, collate: (s) => s })[Symbol.iterator]().next().value, [0, 1, 2]);
      const tooMany = { code: 'KD_NOT_SUPPORTED', message: /shuffling a dataset of 1099511627776 samples: a permutation of 1099511627776 indices is not supported/ };
      assert.throws(() => [...new DataLoader(huge, { shuffle: true, seed: 1 })], tooMany);
      await assert.rejects(async () => { for await (const b of new DataLoader(huge, { shuffle: true, seed: 1 })) assert.fail(b); }, tooMany);
      assert.throws(() => randomSplit(huge, [0.5, 0.5], { seed: 1 }), { code: 'KD_NOT_SUPPORTED' });
      assert.throws(() => new Generator(1).randperm(2 ** 40), { code: 'KD_NOT_SUPPORTED' });
      // a batch too large for an array
      assert.throws(() => [...new DataLoader(huge, { batchSize: 2 ** 33 })], { code: 'KD_OUT_OF_MEMORY', message: /BatchSampler: a batch: 8589934592 indices do not fit in memory/ });
      assert.throws(() => new DataLoader(new FnDataset(2 ** 60, (i) => i)), { code: 'KD_INVALID_TYPE', message: /below 2\^53/ });
    });

    it('bad options are errors', () => {
      const ds = ds10();
      assert.throws(() => new DataLoader(ds, { batchSize: 0 }), /batch_size should be a positive integer value, but got batch_size=0/);
      assert.throws(() => new DataLoader(ds, { batchSize: 1.5 }), { code: 'KD_INVALID_ARGUMENT' });
      assert.throws(() => new DataLoader(ds, { shuffle: 'yes' }), { code: 'KD_INVALID_TYPE' });
      assert.throws(() => new DataLoader(ds, { dropLast: 1 }), { code: 'KD_INVALID_TYPE' });
      assert.throws(() => new DataLoader(ds, { collate: 3 }), { code: 'KD_INVALID_TYPE' });
      assert.throws(() => new DataLoader(ds, { prefetch: -1 }), { code: 'KD_INVALID_ARGUMENT' });
      assert.throws(() => new DataLoader(ds, { batch_size: 2 }), /unexpected option 'batch_size'/);
      assert.throws(() => new DataLoader(ds, { seed: 1, generator: new Generator(1) }), /either generator or seed/);
      assert.throws(() => new DataLoader(ds, { generator: {} }), { code: 'KD_INVALID_TYPE' });
      assert.throws(() => new DataLoader([1, 2, 3]), { code: 'KD_INVALID_TYPE' });
      assert.throws(() => new DataLoader(ds, 5), { code: 'KD_INVALID_TYPE' });
    });
  });

  describe('randomSplit', () => {
    const ds = new FnDataset(10, (i) => i);
    it('lengths and fractions (remainder dealt from the first split, as PyTorch)', () => {
      assert.deepEqual(randomSplit(ds, [7, 3], { seed: 0 }).map((s) => s.length), [7, 3]);
      assert.deepEqual(randomSplit(ds, [0.5, 0.5], { seed: 0 }).map((s) => s.length), [5, 5]);
      assert.deepEqual(randomSplit(ds, [0.33, 0.33, 0.34], { seed: 0 }).map((s) => s.length), [4, 3, 3]);
      assert.deepEqual(randomSplit(new FnDataset(11, (i) => i), [0.25, 0.25, 0.5]).map((s) => s.length), [3, 3, 5]);
    });
    it('disjoint, covering, deterministic per seed', () => {
      const [a, b] = randomSplit(ds, [6, 4], { seed: 3 });
      const all = [...range(a.length).map((i) => a.get(i)), ...range(b.length).map((i) => b.get(i))];
      assert.deepEqual([...all].sort((x, y) => x - y), range(10));
      const [a2] = randomSplit(ds, [6, 4], { seed: 3 });
      assert.deepEqual(a2.indices, a.indices);
      assert.notDeepEqual(randomSplit(ds, [6, 4], { seed: 4 })[0].indices, a.indices);
      // subsets of a TensorDataset keep the indexSelect fast path
      const tds = new TensorDataset(kd.arange(10));
      const [s] = randomSplit(tds, [5, 5], { seed: 1 });
      const [[y]] = new DataLoader(s, { batchSize: 5 });
      assert.deepEqual(y.arraySync(), s.indices);
    });
    it('errors', () => {
      assert.throws(() => randomSplit(ds, [5, 4]), /Sum of input lengths does not equal the length of the input dataset!/);
      assert.throws(() => randomSplit(ds, [0.5, 0.4]), { code: 'KD_INVALID_ARGUMENT' });
      assert.throws(() => randomSplit(ds, []), /Sum of input lengths does not equal/);
      assert.throws(() => randomSplit(ds, ['1']), { code: 'KD_INVALID_TYPE' });
      assert.throws(() => randomSplit(ds, [-1, 11]), { code: 'KD_INVALID_ARGUMENT' });
      assert.throws(() => randomSplit(ds, [1.5, -0.5]), /Fraction at index 0 is not between 0 and 1/);
      assert.throws(() => randomSplit(null, [1]), { code: 'KD_INVALID_TYPE' });
    });
  });
});
