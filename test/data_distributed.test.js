// data_distributed.test.js - kd.data.DistributedSampler against PyTorch 1.13
// (test/fixtures/parallel.json, written by tools/fixtures/parallel.py): the indices and length of
// every rank for several dataset sizes, replica counts, shuffle, seeds, epochs and dropLast; the
// errors without a process group and for a rank out of range; use in a DataLoader.
'use strict';

const { kd, assert, fixture } = require('./helpers');

const { DistributedSampler, DataLoader, Sampler } = kd.data;
const { sampler } = fixture('parallel');
const range = (n) => Array.from({ length: n }, (_, i) => i);

describe('kd.data.DistributedSampler', () => {
  it('is kd.utils.data.DistributedSampler, a Sampler', () => {
    assert.strictEqual(kd.utils.data.DistributedSampler, DistributedSampler);
    assert.ok(new DistributedSampler(range(3), { numReplicas: 1, rank: 0 }) instanceof Sampler);
  });

  it(`gives PyTorch's indices for every rank (${sampler.cases.length} cases)`, () => {
    for (const c of sampler.cases) {
      const s = new DistributedSampler(range(c.n), { numReplicas: c.numReplicas, rank: c.rank, shuffle: c.shuffle, seed: c.seed, dropLast: c.dropLast });
      s.setEpoch(c.epoch);
      const what = JSON.stringify({ ...c, indices: undefined });
      assert.strictEqual(s.length, c.length, what);
      assert.deepStrictEqual([...s], c.indices, what);
      assert.deepStrictEqual([...s], c.indices, `${what} (a second pass)`);
    }
  });

  it('takes PyTorch\'s positional arguments', () => {
    const c = sampler.cases.find((x) => x.shuffle && x.seed === 7 && x.n === 11 && x.numReplicas === 3 && x.rank === 1 && !x.dropLast);
    const s = new DistributedSampler(range(11), 3, 1, true, 7, false);
    s.setEpoch(c.epoch);
    assert.deepStrictEqual([...s], c.indices);
    assert.strictEqual(s.numSamples, c.length);
    assert.strictEqual(s.totalSize, c.length * 3);
  });

  it('without numReplicas or rank, asks for a process group (KD_NO_PROCESS_GROUP)', () => {
    for (const opts of [undefined, {}, { numReplicas: 2 }, { rank: 0 }]) {
      assert.throws(() => new DistributedSampler(range(4), opts), (e) => {
        assert.strictEqual(e.code, 'KD_NO_PROCESS_GROUP');
        assert.ok(e.message.includes(sampler.errors.no_group.message), e.message);
        assert.ok(e.message.includes('process group'));
        return true;
      });
    }
  });

  it('rejects a rank out of range with PyTorch\'s message', () => {
    assert.throws(() => new DistributedSampler(range(4), { numReplicas: 2, rank: 2 }),
      (e) => e.code === 'KD_INVALID_ARGUMENT' && e.message === sampler.errors.rank_high.message);
    assert.throws(() => new DistributedSampler(range(4), { numReplicas: 3, rank: -1 }),
      (e) => e.code === 'KD_INVALID_ARGUMENT' && e.message === sampler.errors.rank_negative.message);
    assert.throws(() => new DistributedSampler(range(4), { numReplicas: 0, rank: 0 }), /Invalid rank 0, rank should be in the interval \[0, -1\]/);
    assert.throws(() => new DistributedSampler(range(4), { numReplicas: 1.5, rank: 0 }), TypeError);
    assert.throws(() => new DistributedSampler({}, { numReplicas: 1, rank: 0 }), TypeError);
    assert.throws(() => new DistributedSampler(range(4), { numReplicas: 2, rank: 0, shuffle: 1 }), TypeError);
    assert.throws(() => new DistributedSampler(range(4), { numReplicas: 2, rank: 0 }).setEpoch(0.5), TypeError);
  });

  it('covers the dataset across ranks, and feeds a DataLoader', () => {
    const ds = new kd.data.TensorDataset(kd.arange(10));
    const seen = [];
    for (let rank = 0; rank < 3; rank++) {
      const s = new DistributedSampler(ds, { numReplicas: 3, rank, seed: 5 });
      s.setEpoch(4);
      const batches = [...new DataLoader(ds, { batchSize: 2, sampler: s })];
      const got = batches.flatMap(([b]) => Array.from(b.dataSync(), Number));
      assert.deepStrictEqual(got, [...s]);
      seen.push(...got);
    }
    assert.strictEqual(seen.length, 12);
    assert.deepStrictEqual([...new Set(seen)].sort((a, b) => a - b), range(10));
  });
});
