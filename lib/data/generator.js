// generator.js - kd.data.Generator: the seeded random source of DataLoader shuffling and
// randomSplit. Pure JS, deterministic across platforms and runs: the same seed gives the same
// sequence of permutations everywhere.
//
// Algorithm (documented so other implementations can reproduce the orders):
//   - state: xoshiro128** (four 32-bit words), seeded by running SplitMix32 over the seed's
//     low and high 32-bit halves (seed is an integer in [0, 2^53), or a BigInt, taken mod 2^64):
//       z = (x += 0x9e3779b9); z = (z ^ z>>>16) * 0x85ebca6b; z = (z ^ z>>>13) * 0xc2b2ae35;
//       z ^= z>>>16
//     s0, s1 come from x = lo ^ 0x6a09e667, then x ^= hi ^ 0x3c6ef372 and s2, s3 follow
//     (see manualSeed);
//   - below(n): a uniform integer in [0, n) by rejection: draw x (32 bits) until
//     x < 2^32 - (2^32 mod n), return x mod n.
//   - randperm(n): Durstenfeld's Fisher-Yates: p = [0, 1, ..., n-1]; for i = n-1 down to 1:
//     j = below(i + 1); swap p[i], p[j]. permutation(n) is the same, in a Uint32Array.
// This is not PyTorch's generator (torch.randperm's order cannot be reproduced outside torch),
// so shuffled orders differ from PyTorch's; the shape of the API is the same.
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

function rotl(x, k) { return (x << k) | (x >>> (32 - k)); }

function splitmix32(state) {
  state.x = (state.x + 0x9e3779b9) | 0;
  let z = state.x;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

function seedHalves(seed) {
  if (typeof seed === 'bigint') {
    const s = BigInt.asUintN(64, seed);
    return [Number(s & 0xffffffffn), Number(s >> 32n)];
  }
  if (!Number.isSafeInteger(seed) || seed < 0) {
    throw typeError(`Generator: seed must be a non-negative integer below 2^53 (or a BigInt), got ${String(seed)}`);
  }
  return [seed % TWO32, Math.floor(seed / TWO32)];
}

class Generator {
  /** A generator seeded with `seed` (a non-negative integer or a BigInt). */
  constructor(seed = 0) {
    this.s = new Int32Array(4);
    this.manualSeed(seed);
  }

  /** Resets the generator to the start of `seed`'s sequence; returns this. */
  manualSeed(seed) {
    const [lo, hi] = seedHalves(seed);
    this._seed = seed;
    const st = { x: (lo ^ 0x6a09e667) | 0 };
    this.s[0] = splitmix32(st);
    this.s[1] = splitmix32(st);
    st.x = (st.x ^ hi ^ 0x3c6ef372) | 0;
    this.s[2] = splitmix32(st);
    this.s[3] = splitmix32(st);
    if ((this.s[0] | this.s[1] | this.s[2] | this.s[3]) === 0) this.s[0] = 1;
    return this;
  }

  /** The seed given last to the constructor or manualSeed. */
  initialSeed() { return this._seed; }

  /** The generator's state (a copy), for getState/setState round trips. */
  getState() { return Array.from(this.s); }
  setState(state) {
    if (!Array.isArray(state) || state.length !== 4 || !state.every(Number.isInteger)) {
      throw typeError('Generator.setState: expected the array getState() returned');
    }
    this.s.set(state);
    return this;
  }

  /** The next 32 random bits, as an unsigned integer (xoshiro128**). */
  nextUint32() {
    const s = this.s;
    const result = Math.imul(rotl(Math.imul(s[1], 5), 7), 9) >>> 0;
    const t = s[1] << 9;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 11);
    return result;
  }

  /** A uniform integer in [0, n), 1 <= n <= 2^32 (rejection sampling, no modulo bias). */
  below(n) {
    if (!Number.isInteger(n) || n < 1 || n > TWO32) throw typeError(`Generator.below: n must be an integer in [1, 2^32], got ${n}`);
    const limit = TWO32 - (TWO32 % n);
    for (;;) {
      const x = this.nextUint32();
      if (x < limit) return x % n;
    }
  }

  /** A random permutation of 0..n-1 (Fisher-Yates), as an array of numbers. */
  randperm(n) {
    return fitsArray(n, 'Generator.randperm', () => Array.from(this.permutation(n, 'Generator.randperm')));
  }

  /**
   * randperm(n) as a Uint32Array (4 bytes an index): what DataLoader and randomSplit shuffle
   * with. n is at most 2^32 (below's range); a permutation that cannot be allocated is
   * KD_OUT_OF_MEMORY.
   */
  permutation(n, where = 'Generator.permutation') {
    if (!Number.isInteger(n) || n < 0) throw typeError(`${where}: n must be a non-negative integer, got ${n}`);
    if (n > TWO32) {
      throw new KindlingError(`${where}: a permutation of ${n} indices is not supported (at most 2^32)`, 'KD_NOT_SUPPORTED');
    }
    const p = fitsArray(n, where, () => new Uint32Array(n));
    for (let i = 0; i < n; i++) p[i] = i;
    for (let i = n - 1; i > 0; i--) {
      const j = this.below(i + 1);
      const tmp = p[i];
      p[i] = p[j];
      p[j] = tmp;
    }
    return p;
  }
}

module.exports = { Generator, fitsArray };
