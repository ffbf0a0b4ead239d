// generator.js - kd.data.Generator: the seeded random source of samplers, DataLoader shuffling
// and randomSplit. It is PyTorch's CPU generator, in pure JS: the same seed gives the same
// numbers and the same orders as torch.Generator().manual_seed(seed) on the CPU in PyTorch 1.13:
//   - state: mt19937 (at::mt19937), seeded with the seed's low 32 bits (PyTorch keeps the full
//     64-bit seed for initialSeed() but mt19937 takes 32 bits);
//   - random(): the next 32 bits; random64(): two draws r1, r2 -> (r1 << 32) | r2;
//   - randint(high): random() % high when high < 2^32, else random64() % high (random_from_to);
//   - uniform(): (random64() & (2^53 - 1)) * 2^-53 (uniform_real_distribution<double>);
//   - exponential(): -log(1 - uniform()) (the CPU transformation without MKL);
//   - randperm(n): p = [0..n-1]; for i = 0..n-2: z = random() % (n - i); swap p[i], p[i + z]
//     (randperm_cpu);
//   - multinomial(weights, k, replacement) (torch.multinomial on float64 weights): without
//     replacement, the k largest of w / exponential() (the Gumbel top-k; ties, which only
//     zero weights make, in index order, where PyTorch's topk leaves their order unspecified);
//     with replacement, a binary search of uniform() in the normalised cumulative weights.
// kindling's global generator (kd.manualSeed, kd.randn) is Philox on every device, not mt19937:
// where PyTorch draws from its global generator (a sampler without a generator draws a seed with
// torch.empty((), dtype=torch.int64).random_()), kindling draws that seed from its own global
// generator, so kd.manualSeed makes it reproducible but the order differs from PyTorch's. Give
// a generator to get PyTorch's order.
'use strict';

const { KindlingError, typeError } = require('../errors');

// make(), with the RangeError of an array or buffer too large to allocate as KD_OUT_OF_MEMORY.
function fitsArray(n, where, make) {
  try {
    return make();
  } catch (e) {
    if (!(e instanceof RangeError) || e instanceof KindlingError) throw e;
    throw new KindlingError(`${where}: ${n} indices do not fit in memory (${e.message})`, 'KD_OUT_OF_MEMORY');
  }
}

const TWO32 = 4294967296;
const MT_N = 624;
const MT_M = 397;
const DEFAULT_SEED = 67280421310721n; // PyTorch's default_rng_seed_val

function seedBigInt(seed, where) {
  if (typeof seed === 'bigint') return BigInt.asUintN(64, seed);
  if (!Number.isSafeInteger(seed)) {
    throw typeError(`${where}: seed must be an integer of magnitude below 2^53 (or a BigInt), got ${String(seed)}`);
  }
  return BigInt.asUintN(64, BigInt(seed)); // negative seeds wrap as PyTorch's do
}

class Generator {
  /** A generator seeded with `seed` (an integer or a BigInt; default PyTorch's 67280421310721). */
  constructor(seed = DEFAULT_SEED) {
    this.mt = new Uint32Array(MT_N);
    this.mti = MT_N;
    this.manualSeed(seed);
  }

  /** Resets the generator to the start of `seed`'s sequence; returns this (torch's manual_seed). */
  manualSeed(seed) {
    const s = seedBigInt(seed, 'Generator.manualSeed');
    this._seed = s <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(s) : s;
    const mt = this.mt;
    mt[0] = Number(s & 0xffffffffn);
    for (let j = 1; j < MT_N; j++) {
      const prev = mt[j - 1] ^ (mt[j - 1] >>> 30);
      mt[j] = (Math.imul(1812433253, prev) + j) >>> 0;
    }
    this.mti = MT_N;
    return this;
  }

  /** Seeds the generator from a non-deterministic source and returns the seed (torch's seed()). */
  seed() {
    const b = require('node:crypto').randomBytes(8);
    const s = b.readBigUInt64LE(0) & ((1n << 63n) - 1n);
    this.manualSeed(s);
    return this._seed;
  }

  /** The seed given last to manualSeed (a number, or a BigInt above 2^53). */
  initialSeed() { return this._seed; }

  /** The generator's state (a copy), for setState. */
  getState() { return { seed: this._seed, mt: Uint32Array.from(this.mt), index: this.mti }; }
  setState(state) {
    if (state === null || typeof state !== 'object' || !(state.mt instanceof Uint32Array) || state.mt.length !== MT_N
        || !Number.isInteger(state.index) || state.index < 0 || state.index > MT_N) {
      throw typeError('Generator.setState: expected the object getState() returned');
    }
    this.mt.set(state.mt);
    this.mti = state.index;
    this._seed = state.seed;
    return this;
  }

  _twist() {
    const mt = this.mt;
    for (let i = 0; i < MT_N; i++) {
      const y = (mt[i] & 0x80000000) | (mt[(i + 1) % MT_N] & 0x7fffffff);
      mt[i] = mt[(i + MT_M) % MT_N] ^ (y >>> 1) ^ ((y & 1) ? 0x9908b0df : 0);
    }
    this.mti = 0;
  }

  /** The next 32 random bits, as an unsigned integer (mt19937). */
  random() {
    if (this.mti >= MT_N) this._twist();
    let y = this.mt[this.mti++];
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** Same as random(). */
  nextUint32() { return this.random(); }

  /** The next 64 random bits as a BigInt: (random() << 32) | random(). */
  random64() {
    const hi = this.random();
    const lo = this.random();
    return (BigInt(hi) << 32n) | BigInt(lo);
  }

  /** A uniform double in [0, 1) from 53 bits of random64(). */
  uniform() {
    const hi = this.random();
    const lo = this.random();
    return ((hi & 0x1fffff) * TWO32 + lo) * 2 ** -53;
  }

  /** An exponential variate with rate 1: -log(1 - uniform()). */
  exponential() { return -Math.log(1 - this.uniform()); }

  /** An integer in [0, n) as torch.randint(n) draws it (modulo; random64 for n >= 2^32). */
  below(n) {
    if (!Number.isSafeInteger(n) || n < 1) throw typeError(`Generator.below: n must be a positive integer below 2^53, got ${n}`);
    if (n < TWO32) return this.random() % n;
    return Number(this.random64() % BigInt(n));
  }

  /** `size` integers in [0, high), as torch.randint(high, [size], generator=g).tolist(). */
  randint(high, size) {
    if (!Number.isSafeInteger(size) || size < 0) throw typeError(`Generator.randint: size must be a non-negative integer, got ${size}`);
    if (!Number.isSafeInteger(high) || high < 1) {
      throw new KindlingError(`random_ expects 'from' to be less than 'to', but got from=0 >= to=${high}`, 'KD_INVALID_ARGUMENT');
    }
    const out = new Array(size);
    for (let i = 0; i < size; i++) out[i] = this.below(high);
    return out;
  }

  /** A random permutation of 0..n-1 as torch.randperm(n, generator=g).tolist(). */
  randperm(n) {
    return fitsArray(n, 'Generator.randperm', () => Array.from(this.permutation(n, 'Generator.randperm')));
  }

  /**
   * randperm(n) as a Uint32Array (4 bytes an index): what samplers and randomSplit shuffle with.
   * n is at most 2^32; a permutation that cannot be allocated is KD_OUT_OF_MEMORY.
   */
  permutation(n, where = 'Generator.permutation') {
    if (!Number.isInteger(n) || n < 0) throw typeError(`${where}: n must be a non-negative integer, got ${n}`);
    if (n > TWO32) {
      throw new KindlingError(`${where}: a permutation of ${n} indices is not supported (at most 2^32)`, 'KD_NOT_SUPPORTED');
    }
    const p = fitsArray(n, where, () => new Uint32Array(n));
    for (let i = 0; i < n; i++) p[i] = i;
    for (let i = 0; i < n - 1; i++) {
      const z = this.random() % (n - i);
      const tmp = p[i];
      p[i] = p[i + z];
      p[i + z] = tmp;
    }
    return p;
  }

  /**
   * `numSamples` indices drawn with probabilities proportional to `weights` (an array or typed
   * array of non-negative finite numbers, not all zero), as torch.multinomial(torch.tensor(weights,
   * dtype=torch.double), numSamples, replacement, generator=g).tolist() (see the file header).
   */
  multinomial(weights, numSamples, replacement = false) {
    if (!Array.isArray(weights) && !(ArrayBuffer.isView(weights) && !(weights instanceof DataView))) {
      throw typeError('Generator.multinomial: weights must be an array of numbers');
    }
    const w = Float64Array.from(weights, Number);
    const n = w.length;
    if (n === 0) throw new KindlingError('cannot sample from an empty distribution', 'KD_INVALID_ARGUMENT');
    if (!Number.isInteger(numSamples) || numSamples <= 0) {
      throw new KindlingError('cannot sample n_sample <= 0 samples', 'KD_INVALID_ARGUMENT');
    }
    if (!replacement && numSamples > n) {
      throw new KindlingError('cannot sample n_sample > prob_dist.size(-1) samples without replacement', 'KD_INVALID_ARGUMENT');
    }
    let sum = 0;
    for (let i = 0; i < n; i++) {
      if (!(w[i] >= 0) || w[i] === Infinity) {
        throw new KindlingError('probability tensor contains either `inf`, `nan` or element < 0', 'KD_INVALID_ARGUMENT');
      }
      sum += w[i];
    }
    if (!(sum > 0)) throw new KindlingError('invalid multinomial distribution (sum of probabilities <= 0)', 'KD_INVALID_ARGUMENT');
    if (!replacement) {
      // Gumbel top-k: the largest w / q with q ~ Exp(1)
      const q = new Float64Array(n);
      for (let i = 0; i < n; i++) q[i] = this.exponential();
      for (let i = 0; i < n; i++) q[i] = w[i] / q[i];
      const idx = Array.from({ length: n }, (_, i) => i);
      idx.sort((a, b) => (q[b] - q[a]) || (a - b));
      return idx.slice(0, numSamples);
    }
    const cum = new Float64Array(n);
    let acc = 0;
    for (let i = 0; i < n; i++) { acc += w[i]; cum[i] = acc; }
    for (let i = 0; i < n; i++) cum[i] /= acc;
    cum[n - 1] = 1;
    const out = new Array(numSamples);
    for (let j = 0; j < numSamples; j++) {
      const u = this.uniform();
      let left = 0;
      let right = n;
      while (right - left > 0) {
        const mid = left + ((right - left) >> 1);
        if (cum[mid] < u) left = mid + 1;
        else right = mid;
      }
      out[j] = left;
    }
    return out;
  }
}

module.exports = { Generator, fitsArray, DEFAULT_SEED };
