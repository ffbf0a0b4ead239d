// data_order.test.js - kd.data's random orders against PyTorch 1.13 (test/fixtures/data.json,
// written by tools/fixtures/data.py): kd.data.Generator's draws, randperm, randint and
// multinomial; RandomSampler, SubsetRandomSampler, WeightedRandomSampler and BatchSampler over
// two passes; randomSplit; shuffled DataLoader epochs (which draw a base seed first, as
// PyTorch's iterators do); and the samplers' and DataLoader's own checks.
'use strict';

const { kd, assert, fixture } = require('./helpers');

const {
  Generator, RandomSampler, SubsetRandomSampler, WeightedRandomSampler, BatchSampler, SequentialSampler,
  Sampler, randomSplit, DataLoader, Dataset,
} = kd.data;

const cases = fixture('data');
const seedOf = (s) => (typeof s === 'string' ? BigInt(s) : s);

class Range extends Dataset {
  constructor(n) { super(); this.n = n; }
  get length() { return this.n; }
  get(i) { return i; }
}

describe('kd.data random orders (PyTorch 1.13)', () => {
  describe('Generator', () => {
    for (const c of cases.generator) {
      it(`seed ${c.seed}: raw draws, randperm, randint, multinomial`, () => {
        const g = new Generator(seedOf(c.seed));
        assert.deepEqual(Array.from({ length: 5 }, () => Number(g.random64() % (2n ** 32n))), c.randint2_32);
        for (const u of c.uniform) assert.equal(g.uniform(), u);
        for (const e of c.exponential) assert.ok(Math.abs(g.exponential() - e) <= 1e-15 * Math.max(1, e), `${e}`);
        for (const [n, p] of Object.entries(c.randperm)) assert.deepEqual(g.randperm(Number(n)), p, `randperm(${n})`);
        for (const [n, r] of Object.entries(c.randint)) assert.deepEqual(g.randint(Number(n), 20), r, `randint(${n})`);
        for (const m of c.multinomial) assert.deepEqual(g.multinomial(c.weights, m.n, m.replacement), m.out, JSON.stringify(m));
      });
    }

    it('getState/setState, initialSeed, seed()', () => {
      const g = new Generator(5);
      g.randperm(10);
      const st = g.getState();
      const a = g.randperm(50);
      g.setState(st);
      assert.deepEqual(g.randperm(50), a);
      assert.equal(g.initialSeed(), 5);
      assert.equal(new Generator().initialSeed(), 67280421310721);
      const s = g.seed();
      assert.equal(g.initialSeed(), s);
      assert.throws(() => g.setState([1, 2]), { code: 'KD_INVALID_TYPE' });
      assert.throws(() => g.manualSeed(0.5), { code: 'KD_INVALID_TYPE' });
    });

    it('multinomial errors are PyTorch\'s', () => {
      const g = new Generator(0);
      assert.throws(() => g.multinomial([1, 2], 3, false), /cannot sample n_sample > prob_dist.size\(-1\) samples without replacement/);
      assert.throws(() => g.multinomial([1, -2], 1, true), /probability tensor contains either `inf`, `nan` or element < 0/);
      assert.throws(() => g.multinomial([0, 0], 1, true), /invalid multinomial distribution \(sum of probabilities <= 0\)/);
      assert.throws(() => g.multinomial([1, NaN], 1, true), { code: 'KD_INVALID_ARGUMENT' });
      assert.throws(() => g.multinomial([1, 2], 0), /cannot sample n_sample <= 0 samples/);
      assert.throws(() => g.multinomial('ab', 1), { code: 'KD_INVALID_TYPE' });
    });
  });

  describe('samplers', () => {
    for (const c of cases.samplers) {
      it(`${c.sampler} ${JSON.stringify(c.options)}${c.batchSize ? ` in batches of ${c.batchSize}` : ''}: two passes`, () => {
        const g = new Generator(c.seed);
        const o = c.options;
        const data = new Range(c.n);
        let s;
        if (c.sampler === 'RandomSampler') s = new RandomSampler(data, { replacement: o.replacement || false, numSamples: o.num_samples ?? null, generator: g });
        else if (c.sampler === 'SubsetRandomSampler') s = new SubsetRandomSampler(o.indices, g);
        else s = new WeightedRandomSampler(o.weights, o.num_samples, o.replacement ?? true, g);
        if (c.batchSize) s = new BatchSampler(s, c.batchSize, false);
        assert.deepEqual([[...s], [...s]], c.passes);
        assert.equal(s.length, c.length);
      });
    }

    it('without a generator, kd.manualSeed makes the order reproducible', () => {
      const data = new Range(20);
      kd.manualSeed(3);
      const a = [...new RandomSampler(data)];
      const w = [...new WeightedRandomSampler([1, 2, 3], 10)];
      kd.manualSeed(3);
      assert.deepEqual([...new RandomSampler(data)], a);
      assert.deepEqual([...new WeightedRandomSampler([1, 2, 3], 10)], w);
      assert.deepEqual([...a].sort((x, y) => x - y), Array.from({ length: 20 }, (_, i) => i));
    });

    it('SequentialSampler, BatchSampler(dropLast), any iterable as a sampler', () => {
      assert.deepEqual([...new SequentialSampler(new Range(4))], [0, 1, 2, 3]);
      assert.deepEqual([...new BatchSampler(new SequentialSampler(new Range(10)), 3, false)], [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]);
      assert.deepEqual([...new BatchSampler(new SequentialSampler(new Range(10)), 3, true)], [[0, 1, 2], [3, 4, 5], [6, 7, 8]]);
      assert.equal(new BatchSampler(new SequentialSampler(new Range(10)), 3, true).length, 3);
      assert.equal(new BatchSampler([5, 6, 7, 8], { batchSize: 3, dropLast: false }).length, 2);
      assert.deepEqual([...new BatchSampler([5, 6, 7, 8], 3, false)], [[5, 6, 7], [8]]);
      class Evens extends Sampler {
        * [Symbol.iterator]() { yield 0; yield 2; yield 4; }
        get length() { return 3; }
      }
      const batches = [...new DataLoader(new Range(6), { sampler: new Evens(), batchSize: 2 })].map((b) => Array.from(b.dataSync(), Number));
      assert.deepEqual(batches, [[0, 2], [4]]);
      assert.throws(() => [...new Sampler()], { code: 'KD_NOT_SUPPORTED' });
    });

    it('errors are PyTorch\'s', () => {
      const data = new Range(5);
      assert.throws(() => new RandomSampler(data, 'yes'), { code: 'KD_INVALID_TYPE', message: /replacement should be a boolean value, but got replacement=yes/ });
      assert.throws(() => new RandomSampler(data, false, 0), /num_samples should be a positive integer value, but got num_samples=0/);
      assert.throws(() => new RandomSampler(new Range(0)), /num_samples should be a positive integer value, but got num_samples=0/);
      assert.throws(() => new RandomSampler(data, false, null, {}), { code: 'KD_INVALID_TYPE' });
      assert.throws(() => new WeightedRandomSampler([1, 2], 0), /num_samples should be a positive integer value, but got num_samples=0/);
      assert.throws(() => new WeightedRandomSampler([1, 2], 2, 1), /replacement should be a boolean value, but got replacement=1/);
      assert.throws(() => new WeightedRandomSampler(kd.ones([2, 2]), 2), /weights should be a 1d sequence but given weights have shape \(2, 2\)/);
      assert.throws(() => [...new WeightedRandomSampler([1, 2], 3, false)], /cannot sample n_sample > prob_dist.size\(-1\) samples without replacement/);
      assert.throws(() => new BatchSampler([1], 0, false), /batch_size should be a positive integer value, but got batch_size=0/);
      assert.throws(() => new BatchSampler([1], 2, 'no'), /drop_last should be a boolean value, but got drop_last=no/);
      assert.throws(() => new BatchSampler(5, 2, false), { code: 'KD_INVALID_TYPE' });
      assert.throws(() => new SubsetRandomSampler('abc'), { code: 'KD_INVALID_TYPE' });
      assert.deepEqual([...new WeightedRandomSampler(kd.tensor([0, 1, 0]), 3)], [1, 1, 1]);
    });
  });

  describe('randomSplit', () => {
    for (const c of cases.splits) {
      it(`${c.n} samples into ${JSON.stringify(c.lengths)}, seed ${c.seed}`, () => {
        const parts = randomSplit(new Range(c.n), c.lengths, new Generator(c.seed));
        assert.deepEqual(parts.map((p) => p.indices), c.indices);
        assert.deepEqual(randomSplit(new Range(c.n), c.lengths, { generator: new Generator(c.seed) }).map((p) => p.indices), c.indices);
      });
    }
  });

  describe('DataLoader', () => {
    for (const c of cases.loaders) {
      it(`shuffles ${c.n} samples in batches of ${c.batchSize}${c.dropLast ? ' (dropLast)' : ''} as PyTorch, two epochs`, async () => {
        const toArrays = (batches) => batches.map((b) => Array.from(b.dataSync(), Number));
        const g = new Generator(c.seed);
        const loader = new DataLoader(new Range(c.n), { batchSize: c.batchSize, shuffle: true, dropLast: c.dropLast, generator: g });
        assert.deepEqual([toArrays([...loader]), toArrays([...loader])], c.epochs);
        const g2 = new Generator(c.seed);
        const again = new DataLoader(new Range(c.n), { batchSize: c.batchSize, shuffle: true, dropLast: c.dropLast, generator: g2 });
        const epochs = [];
        for (let e = 0; e < 2; e++) {
          const got = [];
          for await (const b of again) got.push(b);
          epochs.push(toArrays(got));
        }
        assert.deepEqual(epochs, c.epochs);
        assert.equal(loader.length, c.epochs[0].length);
      });
    }

    it('contradictory options are PyTorch\'s errors', () => {
      const ds = new Range(10);
      const smp = new SequentialSampler(ds);
      const bsmp = new BatchSampler(smp, 2, false);
      const stream = new (class extends kd.data.IterableDataset { * [Symbol.iterator]() { yield 1; } })();
      const bad = [
        [ds, { sampler: smp, shuffle: true }, /^sampler option is mutually exclusive with shuffle$/],
        [ds, { batchSampler: bsmp, batchSize: 4 }, /batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last/],
        [ds, { batchSampler: bsmp, shuffle: true }, /batch_sampler option is mutually exclusive/],
        [ds, { batchSampler: bsmp, sampler: smp }, /batch_sampler option is mutually exclusive/],
        [ds, { batchSampler: bsmp, dropLast: true }, /batch_sampler option is mutually exclusive/],
        [ds, { batchSize: null, dropLast: true }, /batch_size=None option disables auto-batching and is mutually exclusive with drop_last/],
        [ds, { numWorkers: -1 }, /num_workers option should be non-negative; use num_workers=0 to disable multiprocessing./],
        [ds, { timeout: -1 }, /timeout option should be non-negative/],
        [ds, { prefetchFactor: 4 }, /prefetch_factor option could only be specified in multiprocessing/],
        [ds, { persistentWorkers: true }, /persistent_workers option needs num_workers > 0/],
        [stream, { shuffle: true }, /DataLoader with IterableDataset: expected unspecified shuffle option, but got shuffle=true/],
        [stream, { sampler: smp }, /DataLoader with IterableDataset: expected unspecified sampler option/],
        [stream, { batchSampler: bsmp }, /DataLoader with IterableDataset: expected unspecified batch_sampler option/],
        [ds, { numWorkers: 2 }, /numWorkers > 0 loads the dataset in worker threads, which cannot receive JS objects or closures/],
      ];
      for (const [d, opts, msg] of bad) assert.throws(() => new DataLoader(d, opts), { code: 'KD_INVALID_ARGUMENT', message: msg }, JSON.stringify(Object.keys(opts)));
      assert.throws(() => new DataLoader(ds, { sampler: 5 }), { code: 'KD_INVALID_TYPE' });
      assert.throws(() => new DataLoader(ds, { pinMemory: 'yes' }), { code: 'KD_INVALID_TYPE' });
      assert.throws(() => new DataLoader(ds, { collateFn: (b) => b, collate: (b) => b }), /either collateFn or collate/);
      assert.throws(() => new DataLoader(ds, { workerInitFn: 3 }), { code: 'KD_INVALID_TYPE' });
    });

    it('batchSampler, batchSize null (defaultConvert), collateFn', () => {
      const ds = new Range(5);
      const viaBatchSampler = [...new DataLoader(ds, { batchSampler: [[4, 0], [2]] })].map((b) => Array.from(b.dataSync(), Number));
      assert.deepEqual(viaBatchSampler, [[4, 0], [2]]);
      assert.deepEqual([...new DataLoader(ds, { batchSize: null })], [0, 1, 2, 3, 4]);
      assert.deepEqual([...new DataLoader(ds, { batchSize: 2, collateFn: (s) => s.join('+') })], ['0+1', '2+3', '4']);
      assert.equal(new DataLoader(ds, { batchSize: null }).length, 5);
      const td = new (class extends Dataset { get length() { return 2; } get(i) { return { v: new Float32Array([i, i]) }; } })();
      const [first] = new DataLoader(td, { batchSize: null });
      assert.ok(first.v instanceof kd.Tensor);
      assert.deepEqual(first.v.arraySync(), [0, 0]);
    });

    it('pinMemory pins CPU tensors when CUDA is available, and otherwise leaves batches as they are', async () => {
      const ds = new kd.data.TensorDataset(kd.arange(4));
      const [b] = new DataLoader(ds, { batchSize: 4, pinMemory: true });
      assert.deepEqual(b[0].arraySync(), [0, 1, 2, 3]);
      assert.equal(b[0].isPinned(), kd.cuda.isAvailable());
      for await (const [x] of new DataLoader(ds, { batchSize: 2, pinMemory: true })) assert.equal(x.isPinned(), kd.cuda.isAvailable());
      const [{ v }] = new DataLoader(new Range(3), { batchSize: 3, pinMemory: true, collateFn: (s) => ({ v: kd.tensor(s) }) });
      assert.equal(v.isPinned(), kd.cuda.isAvailable());
      assert.equal(new DataLoader(ds).pinMemory, false);
    });
  });
});
