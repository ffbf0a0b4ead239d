// random_state.js - the part of numpy's legacy RandomState that generate_sine_wave.py uses, bit
// for bit: np.random.seed(s) (MT19937's init_genrand) and np.random.randint(low, high, size)
// (32-bit draws masked to the next power of two minus one, rejected until within the range, as
// numpy's random_bounded_uint64_fill does with use_masked for ranges below 2**32), so that
// generate_sine_wave.js writes the same sine waves as the original.
'use strict';

class RandomState {
  constructor(seed) {
    this.mt = new Uint32Array(624);
    this.seed(seed);
  }

  /** init_genrand(seed): numpy's RandomState.seed for an integer in [0, 2**32). */
  seed(seed) {
    if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw new RangeError('Seed must be between 0 and 2**32 - 1');
    const mt = this.mt;
    mt[0] = seed >>> 0;
    for (let i = 1; i < 624; i++) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      // 1812433253 * prev + i (mod 2**32), multiplied in 16-bit halves to stay exact
      mt[i] = (((((prev & 0xffff0000) >>> 16) * 1812433253) << 16) + (prev & 0x0000ffff) * 1812433253 + i) >>> 0;
    }
    this.index = 624;
  }

  /** genrand_int32: the next 32-bit output of MT19937. */
  nextUint32() {
    const mt = this.mt;
    if (this.index >= 624) {
      for (let i = 0; i < 624; i++) {
        const y = (mt[i] & 0x80000000) | (mt[(i + 1) % 624] & 0x7fffffff);
        mt[i] = mt[(i + 397) % 624] ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
      }
      this.index = 0;
    }
    let y = mt[this.index++];
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** randint(low, high, size): size integers in [low, high), as numbers. */
  randint(low, high, size) {
    const rng = high - 1 - low;
    if (!(rng >= 0)) throw new RangeError('low >= high');
    if (rng > 0xffffffff) throw new RangeError('ranges of 2**32 or more are not supported here');
    let mask = rng;
    for (let s = 1; s <= 16; s *= 2) mask |= mask >>> s;
    const out = new Array(size);
    for (let i = 0; i < size; i++) {
      let v;
      do v = (this.nextUint32() & mask) >>> 0; while (v > rng);
      out[i] = low + v;
    }
    return out;
  }
}

module.exports = { RandomState };
