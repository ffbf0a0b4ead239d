// distributed.js - kd.data.DistributedSampler, as torch.utils.data.DistributedSampler in PyTorch
// 1.13: the share of a dataset's indices that one of numReplicas processes reads. Each pass takes
// randperm(n) from a kd.data.Generator seeded with seed + epoch (PyTorch's order: see
// lib/data/generator.js) or 0..n-1 without shuffle; pads it by repeating indices from its start to
// a multiple of numReplicas (or drops the tail, with dropLast), and yields every numReplicas-th
// index from `rank`. kindling has no process groups (kd.distributed) yet: numReplicas and rank
// must be given, as where PyTorch has no default process group (its error, code
// KD_NO_PROCESS_GROUP).
'use strict';

const { KindlingError, typeError, noProcessGroupError } = require('../errors');
const { Generator } = require('./generator');

module.exports = function makeDistributedSampler(kd, { Sampler }) {
  const lengthOf = (ds) => {
    const n = ds === null || ds === undefined ? undefined : ds.length;
    if (!Number.isSafeInteger(n) || n < 0) throw typeError(`DistributedSampler: expected a dataset with a non-negative integer length, got ${String(n)}`);
    return n;
  };
  const intArg = (v, name) => {
    if (!Number.isSafeInteger(v)) throw typeError(`DistributedSampler: ${name} must be an integer, got ${String(v)}`);
    return v;
  };

  class DistributedSampler extends Sampler {
    /**
     * DistributedSampler(dataset, {numReplicas, rank, shuffle = true, seed = 0, dropLast = false})
     * (or the same positionally, PyTorch's order).
     */
    constructor(dataset, numReplicas = null, rank = null, shuffle = true, seed = 0, dropLast = false) {
      super(dataset);
      if (numReplicas !== null && typeof numReplicas === 'object') {
        ({ numReplicas = null, rank = null, shuffle = true, seed = 0, dropLast = false } = numReplicas);
      }
      // PyTorch asks the default process group for what is not given; kindling has none
      if (numReplicas === null || numReplicas === undefined || rank === null || rank === undefined) {
        throw noProcessGroupError('DistributedSampler: numReplicas and rank must be given');
      }
      intArg(numReplicas, 'numReplicas');
      intArg(rank, 'rank');
      if (rank >= numReplicas || rank < 0) {
        throw new KindlingError(`Invalid rank ${rank}, rank should be in the interval [0, ${numReplicas - 1}]`, 'KD_INVALID_ARGUMENT');
      }
      if (typeof shuffle !== 'boolean') throw typeError(`DistributedSampler: shuffle must be a boolean, got ${String(shuffle)}`);
      if (typeof dropLast !== 'boolean') throw typeError(`DistributedSampler: dropLast must be a boolean, got ${String(dropLast)}`);
      if (!Number.isSafeInteger(seed) && typeof seed !== 'bigint') throw typeError(`DistributedSampler: seed must be an integer, got ${String(seed)}`);
      const n = lengthOf(dataset);
      this.dataset = dataset;
      this.numReplicas = numReplicas;
      this.rank = rank;
      this.epoch = 0;
      this.dropLast = dropLast;
      // Python's math.ceil; `|| 0` turns Math.ceil's -0 (dropLast, n < numReplicas) into 0
      this.numSamples = (dropLast && n % numReplicas !== 0 ? Math.ceil((n - numReplicas) / numReplicas) : Math.ceil(n / numReplicas)) || 0;
      this.totalSize = this.numSamples * numReplicas;
      this.shuffle = shuffle;
      this.seed = seed;
    }

    * [Symbol.iterator]() {
      const n = lengthOf(this.dataset);
      let indices;
      if (this.shuffle) {
        const s = typeof this.seed === 'bigint' || typeof this.epoch === 'bigint' ? BigInt(this.seed) + BigInt(this.epoch) : this.seed + this.epoch;
        indices = new Generator(s).permutation(n, `DistributedSampler: shuffling a dataset of ${n} samples`);
      } else {
        indices = Array.from({ length: n }, (_, i) => i);
      }
      const total = this.totalSize;
      const { rank, numReplicas } = this;
      // index k of the padded (or cut) list is indices[k % n]: padding repeats the list from its start
      for (let k = rank; k < total; k += numReplicas) yield indices[k % n];
    }

    get length() { return this.numSamples; }

    /** The epoch whose order the next pass takes (shuffled with seed + epoch). */
    setEpoch(epoch) {
      if (!Number.isSafeInteger(epoch) && typeof epoch !== 'bigint') throw typeError(`DistributedSampler.setEpoch: epoch must be an integer, got ${String(epoch)}`);
      this.epoch = epoch;
    }
  }

  return { DistributedSampler };
};
