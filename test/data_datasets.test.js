// data_datasets.test.js - kd.data's dataset kinds beyond TensorDataset/Subset: IterableDataset
// (sync and async iterables) through DataLoader, ConcatDataset (indexing across parts, negative
// indices, PyTorch's errors), ChainDataset, defaultConvert, and getWorkerInfo on the main thread.
'use strict';

const { kd, assert } = require('./helpers');

const { Dataset, IterableDataset, ConcatDataset, ChainDataset, DataLoader, defaultConvert, getWorkerInfo } = kd.data;

class Range extends Dataset {
  constructor(lo, hi) { super(); this.lo = lo; this.hi = hi; }
  get length() { return this.hi - this.lo; }
  get(i) { return this.lo + i; }
}

class Count extends IterableDataset {
  constructor(n) { super(); this.n = n; }
  get length() { return this.n; }
  * [Symbol.iterator]() { for (let i = 0; i < this.n; i++) yield i; }
}

class AsyncCount extends IterableDataset {
  constructor(n) { super(); this.n = n; this.closed = 0; }
  async* [Symbol.asyncIterator]() {
    try {
      for (let i = 0; i < this.n; i++) {
        await new Promise((r) => setImmediate(r));
        yield { v: i, s: `s${i}` };
      }
    } finally { this.closed++; }
  }
}

const nums = (t) => Array.from(t.dataSync(), Number);

describe('kd.data datasets', () => {
  it('IterableDataset: batches in order, dropLast, batchSize null, length', async () => {
    const ds = new Count(7);
    assert.deepEqual([...new DataLoader(ds, { batchSize: 3 })].map(nums), [[0, 1, 2], [3, 4, 5], [6]]);
    assert.deepEqual([...new DataLoader(ds, { batchSize: 3, dropLast: true })].map(nums), [[0, 1, 2], [3, 4, 5]]);
    assert.deepEqual([...new DataLoader(ds, { batchSize: null })], [0, 1, 2, 3, 4, 5, 6]);
    assert.equal(new DataLoader(ds, { batchSize: 3 }).length, 3);
    assert.equal(new DataLoader(ds, { batchSize: 3, dropLast: true }).length, 2);
    const got = [];
    for await (const b of new DataLoader(ds, { batchSize: 4 })) got.push(nums(b));
    assert.deepEqual(got, [[0, 1, 2, 3], [4, 5, 6]]);
    // any iterable without get() is iterable-style
    const gen = { * [Symbol.iterator]() { yield 5; yield 6; } };
    assert.deepEqual([...new DataLoader(gen, { batchSize: 2 })].map(nums), [[5, 6]]);
    assert.throws(() => new IterableDataset().length, { code: 'KD_INVALID_TYPE', message: /has no length/ });
    assert.throws(() => new IterableDataset().get(0), { code: 'KD_NOT_SUPPORTED' });
  });

  it('async iterables: for await only; break closes the dataset\'s iterator', async () => {
    const ds = new AsyncCount(5);
    const got = [];
    for await (const b of new DataLoader(ds, { batchSize: 2 })) got.push([nums(b.v), b.s]);
    assert.deepEqual(got, [[[0, 1], ['s0', 's1']], [[2, 3], ['s2', 's3']], [[4], ['s4']]]);
    assert.throws(() => [...new DataLoader(ds, { batchSize: 2 })], { code: 'KD_INVALID_TYPE', message: /async iterable; iterate with `for await`/ });
    const before = ds.closed;
    for await (const b of new DataLoader(ds, { batchSize: 1 })) { void b; break; }
    assert.equal(ds.closed, before + 1);
  });

  it('ConcatDataset: indices across parts, negative indices, cumulativeSizes, PyTorch\'s errors', () => {
    const c = new ConcatDataset([new Range(0, 3), new Range(10, 10), new Range(100, 102)]);
    assert.equal(c.length, 5);
    assert.deepEqual(c.cumulativeSizes, [3, 3, 5]);
    assert.deepEqual([0, 1, 2, 3, 4, -1, -5].map((i) => c.get(i)), [0, 1, 2, 100, 101, 101, 0]);
    assert.throws(() => c.get(-6), /absolute value of index should not exceed dataset length/);
    assert.throws(() => c.get(5), { code: 'KD_INDEX_OUT_OF_RANGE' });
    assert.throws(() => c.get(1.5), { code: 'KD_INVALID_TYPE' });
    assert.throws(() => new ConcatDataset([]), /datasets should not be an empty iterable/);
    assert.throws(() => new ConcatDataset([new Count(2)]), /ConcatDataset does not support IterableDataset/);
    assert.throws(() => new ConcatDataset([{}]), { code: 'KD_INVALID_TYPE' });
    assert.deepEqual([...new DataLoader(c, { batchSize: 2 })].map(nums), [[0, 1], [2, 100], [101]]);
  });

  it('ChainDataset: iterables one after another, sync and async; length sums', async () => {
    const ch = new ChainDataset([new Count(2), new Count(3)]);
    assert.deepEqual([...ch], [0, 1, 0, 1, 2]);
    assert.equal(ch.length, 5);
    const mixed = new ChainDataset([new Count(1), new AsyncCount(2)]);
    const got = [];
    for await (const x of mixed) got.push(typeof x === 'number' ? x : x.v);
    assert.deepEqual(got, [0, 0, 1]);
    assert.throws(() => [...mixed], { code: 'KD_INVALID_TYPE', message: /async-only/ });
    assert.throws(() => mixed.length, /has no length/);
    assert.throws(() => new ChainDataset([new Range(0, 2)]), /ChainDataset only supports IterableDataset/);
    assert.deepEqual([...new DataLoader(ch, { batchSize: 4 })].map(nums), [[0, 1, 0, 1], [2]]);
  });

  it('defaultConvert: typed arrays -> tensors, recursively; the rest unchanged', () => {
    const out = defaultConvert({ a: new Int32Array([1, 2]), b: [new Float64Array([0.5]), 3, 'x'], m: new Map([['k', new Uint8Array([7])]]) });
    assert.equal(out.a.dtype, 'int32');
    assert.deepEqual(out.a.arraySync(), [1, 2]);
    assert.equal(out.b[0].dtype, 'float64');
    assert.equal(out.b[1], 3);
    assert.equal(out.b[2], 'x');
    assert.equal(out.m.get('k').dtype, 'uint8');
    const t = kd.ones([2]);
    assert.equal(defaultConvert(t), t);
    assert.equal(defaultConvert(null), null);
  });

  it('getWorkerInfo is null on the main thread; kd.utils.data is kd.data', () => {
    assert.equal(kd.utils.data, kd.data);
    assert.equal(getWorkerInfo(), null);
  });
});

describe('kd.data collation of named results', () => {
  it('an array naming its elements (a multi-output result) collates to a batch with the same names', () => {
    const samples = [0, 1, 2].map((i) => kd.tensor([[i, 5], [7, i]]).max(1));
    const b = kd.data.defaultCollate(samples);
    assert.deepEqual(b.values.arraySync(), [[5, 7], [5, 7], [5, 7]]);
    assert.deepEqual(b.indices.arraySync(), [[1, 0], [1, 0], [1, 0]]);
    assert.equal(b.values, b[0]);
    assert.equal(b.indices, b[1]);
    assert.deepEqual(Object.keys(b), ['0', '1']);
    const c = kd.data.defaultConvert(samples[0]);
    assert.equal(c.indices, c[1]);
  });
});
