/* random.h - kindling's random numbers: ONE counter-based generator, Philox4x32-10
 * (Salmon, Moraes, Dror, Shaw: "Parallel random numbers: as easy as 1, 2, 3", SC'11; the
 * Random123 reference), on every device. Everything a kernel needs to turn (seed, offset,
 * element index) into a number is a static inline function here, written so this header
 * also compiles as CUDA C++ (nvcc): the CUDA backend includes it and reproduces the CPU's
 * numbers bit for bit for uniform and integer draws.
 *
 * Note [Random number mapping]
 * Generator state (per thread, see random.c): a 64-bit seed (default 67280421310721,
 * PyTorch's default seed) and a 64-bit offset. Every op call that draws numbers takes ONE
 * fresh offset with kd_random_next_offset() (on the calling thread, before launching) and
 * the offset advances by 1. Within that call:
 *   key      = { (uint32)seed, (uint32)(seed >> 32) }
 *   counter  = { (uint32)block, (uint32)(block >> 32), (uint32)offset, (uint32)(offset >> 32) }
 *   w[0..3]  = philox4x32_10(counter, key)   (multipliers 0xD2511F53 and 0xCD9E8D57, key
 *              bumps 0x9E3779B9 and 0xBB67AE85, 10 rounds; kd_philox4x32_10 below)
 * Element i is the i-th element of the (contiguous, row-major) result:
 *   uniform float32    block i/4, word w = w[i%4]: (w >> 8) * 2^-24           in [0, 1)
 *   uniform float16    block i/4, word w[i%4]:     (w >> 21) * 2^-11          in [0, 1)
 *   uniform bfloat16   block i/4, word w[i%4]:     (w >> 24) * 2^-8           in [0, 1)
 *   uniform float64    block i/2, j = 2*(i%2), v = w[j] | (uint64)w[j+1] << 32:
 *                      (v >> 11) * 2^-53                                     in [0, 1)
 *   normal  float32, float16, bfloat16 (Box-Muller, computed in double, rounded once):
 *                      block i/4, j = 2*((i%4)/2):
 *                      u1 = ((w[j] >> 8) + 1) * 2^-24 in (0, 1], u2 = (w[j+1] >> 8) * 2^-24,
 *                      r = sqrt(-2 ln u1), t = 2 pi u2; even i: r cos t, odd i: r sin t
 *   normal  float64    block i/2: u1 = (((w[0] | w[1] << 32) >> 11) + 1) * 2^-53,
 *                      u2 = ((w[2] | w[3] << 32) >> 11) * 2^-53; even i: r cos t, odd i: r sin t
 *   integer [low, high) block i/2, j = 2*(i%2), v = w[j] | (uint64)w[j+1] << 32:
 *                      low + (int64)(v % (uint64)(high - low)), then converted to the dtype
 * Each element depends only on (seed, offset, i): results do not depend on the number of
 * threads, on how work is split, or on the device. (Normals go through log/sqrt/cos/sin in
 * double; CUDA's double functions are within 1-2 ulp of glibc's, so a float32 normal can
 * differ in its last bit in the rare case where a double result straddles a float rounding
 * boundary; float64 normals may differ by an ulp.) */
#ifndef KD_RANDOM_H
#define KD_RANDOM_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#ifdef __CUDACC__
#define KD_RANDOM_FN static __host__ __device__ __forceinline__
#else
#define KD_RANDOM_FN static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define KD_RANDOM_DEFAULT_SEED 67280421310721ULL

/* ---- the generator state (thread-local; random.c) ---- */
void kd_random_manual_seed(uint64_t seed); /* sets the seed and resets the offset to 0 */
uint64_t kd_random_initial_seed(void);     /* the seed last set (or the default) */
/* Takes the offset for one op call and advances the generator; returns the seed in *seed. */
uint64_t kd_random_next_offset(uint64_t *seed);
/* Whole state, for saving and restoring (getRngState / setRngState). */
void kd_random_get_state(uint64_t *seed, uint64_t *offset);
void kd_random_set_state(uint64_t seed, uint64_t offset);

/* ---- Philox4x32-10 ---- */
#define KD_PHILOX_M0 0xD2511F53u
#define KD_PHILOX_M1 0xCD9E8D57u
#define KD_PHILOX_W0 0x9E3779B9u
#define KD_PHILOX_W1 0xBB67AE85u

/* out = philox4x32_10(ctr, key); out may alias ctr. */
KD_RANDOM_FN void kd_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]) {
  uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
  uint32_t k0 = key[0], k1 = key[1];
  for (int r = 0; r < 10; r++) {
    if (r > 0) {
      k0 += KD_PHILOX_W0;
      k1 += KD_PHILOX_W1;
    }
    uint64_t p0 = (uint64_t)KD_PHILOX_M0 * c0;
    uint64_t p1 = (uint64_t)KD_PHILOX_M1 * c2;
    uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
    uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

/* The four words of block `block` of the call with (seed, offset). */
KD_RANDOM_FN void kd_philox_block(uint64_t seed, uint64_t offset, uint64_t block, uint32_t w[4]) {
  uint32_t ctr[4], key[2];
  ctr[0] = (uint32_t)block;
  ctr[1] = (uint32_t)(block >> 32);
  ctr[2] = (uint32_t)offset;
  ctr[3] = (uint32_t)(offset >> 32);
  key[0] = (uint32_t)seed;
  key[1] = (uint32_t)(seed >> 32);
  kd_philox4x32_10(ctr, key, w);
}

/* ---- word(s) -> number ---- */
KD_RANDOM_FN float kd_random_u32_to_f32(uint32_t w) { return (float)(w >> 8) * (1.0f / 16777216.0f); }
KD_RANDOM_FN float kd_random_u32_to_f16val(uint32_t w) { return (float)(w >> 21) * (1.0f / 2048.0f); }
KD_RANDOM_FN float kd_random_u32_to_bf16val(uint32_t w) { return (float)(w >> 24) * (1.0f / 256.0f); }
KD_RANDOM_FN double kd_random_u64_to_f64(uint64_t v) { return (double)(v >> 11) * (1.0 / 9007199254740992.0); }
KD_RANDOM_FN uint64_t kd_random_words64(uint32_t lo, uint32_t hi) { return (uint64_t)lo | ((uint64_t)hi << 32); }

/* Box-Muller from two 32-bit words (float32 family): z[0] = r cos t, z[1] = r sin t. */
KD_RANDOM_FN void kd_random_box_muller32(uint32_t a, uint32_t b, double z[2]) {
  double u1 = ((double)(a >> 8) + 1.0) * (1.0 / 16777216.0);
  double u2 = (double)(b >> 8) * (1.0 / 16777216.0);
  double r = sqrt(-2.0 * log(u1)), t = 6.283185307179586476925 * u2;
  z[0] = r * cos(t);
  z[1] = r * sin(t);
}
/* Box-Muller from two 64-bit values (float64). */
KD_RANDOM_FN void kd_random_box_muller64(uint64_t a, uint64_t b, double z[2]) {
  double u1 = ((double)(a >> 11) + 1.0) * (1.0 / 9007199254740992.0);
  double u2 = (double)(b >> 11) * (1.0 / 9007199254740992.0);
  double r = sqrt(-2.0 * log(u1)), t = 6.283185307179586476925 * u2;
  z[0] = r * cos(t);
  z[1] = r * sin(t);
}

/* ---- per-element forms (what a CUDA thread computes for element i) ---- */
KD_RANDOM_FN float kd_random_uniform_f32(uint64_t seed, uint64_t offset, uint64_t i) {
  uint32_t w[4];
  kd_philox_block(seed, offset, i >> 2, w);
  return kd_random_u32_to_f32(w[i & 3]);
}
KD_RANDOM_FN double kd_random_uniform_f64(uint64_t seed, uint64_t offset, uint64_t i) {
  uint32_t w[4];
  kd_philox_block(seed, offset, i >> 1, w);
  int j = (int)(i & 1) * 2;
  return kd_random_u64_to_f64(kd_random_words64(w[j], w[j + 1]));
}
/* float32-family normal (round the result to float16/bfloat16 for those dtypes). */
KD_RANDOM_FN double kd_random_normal_f32(uint64_t seed, uint64_t offset, uint64_t i) {
  uint32_t w[4];
  double z[2];
  kd_philox_block(seed, offset, i >> 2, w);
  int j = (int)((i & 3) >> 1) * 2;
  kd_random_box_muller32(w[j], w[j + 1], z);
  return z[i & 1];
}
KD_RANDOM_FN double kd_random_normal_f64(uint64_t seed, uint64_t offset, uint64_t i) {
  uint32_t w[4];
  double z[2];
  kd_philox_block(seed, offset, i >> 1, w);
  kd_random_box_muller64(kd_random_words64(w[0], w[1]), kd_random_words64(w[2], w[3]), z);
  return z[i & 1];
}
/* range = high - low > 0, as uint64. */
KD_RANDOM_FN int64_t kd_random_int(uint64_t seed, uint64_t offset, uint64_t i, int64_t low, uint64_t range) {
  uint32_t w[4];
  kd_philox_block(seed, offset, i >> 1, w);
  int j = (int)(i & 1) * 2;
  return (int64_t)((uint64_t)low + kd_random_words64(w[j], w[j + 1]) % range);
}


/* ---- distributions: the in-place fillers, bernoulli/poisson/normal with tensor parameters,
 * randperm's keys (src/cpu/random_dist.c, cuda/ops_random_dist.cu) ----
 * Note [Random distributions]
 * One op call, one (seed, offset) as in Note [Random number mapping]; element i of the
 * contiguous (row-major) result is a function of (seed, offset, i) and of its parameter alone,
 * the same function on every device:
 *   wide (float64 output): block i/2, 53-bit values as rand's float64; otherwise block i/4,
 *   24-bit values from word w[i%4] (float32, float16, bfloat16, the integer dtypes, bool).
 *   u in [0, 1) as rand (float16/bfloat16 uniform_ uses their coarser rand mapping, so a
 *   rounded value never reaches `to`), v = (bits + 1/2) * 2^-bits in (0, 1) strictly,
 *   z the normal of randn for the same i.
 *   uniform_(a, b)      a + (b - a) * u             (uniform_(0, 1) == rand)
 *   normal_(a, b)       a + b * z                   (normal_(0, 1) == randn)
 *   logNormal_(a, b)    exp(a + b * z)
 *   exponential_(a)     -log(v) / a
 *   cauchy_(a, b)       a + b * tan(pi * (v - 1/2))
 *   geometric_(a)       ceil(log(v) / log1p(-a))    (>= 1 for a in (0, 1))
 *   bernoulli (p)       u < p ? 1 : 0               (p = a, or the element's parameter)
 *   integers            low + bits64 % range as randint (block i/2; range 0 means 2^64:
 *                       low + bits64, random_ over a whole 64-bit range, randperm's keys)
 *   poisson (rate)      element i draws from its own stream of 53-bit uniforms, block
 *                       i + (j << 40) for its j-th block (two uniforms a block): Knuth's
 *                       product method below rate 10, Hormann's transformed rejection (PTRS)
 *                       from 10, as PyTorch's CPU sampler.
 * Floating results are computed in double and rounded once. Uniform, bernoulli and integer
 * draws are bit-identical across devices; those through log/exp/tan/lgamma agree to the ulp
 * of CUDA's double functions (so a poisson or geometric count, or a multinomial order, could
 * differ only where a draw lands within an ulp of a boundary). */
enum kd_random_dist {
  KD_RANDOM_DIST_UNIFORM = 1, KD_RANDOM_DIST_NORMAL, KD_RANDOM_DIST_LOG_NORMAL, KD_RANDOM_DIST_EXPONENTIAL,
  KD_RANDOM_DIST_CAUCHY, KD_RANDOM_DIST_GEOMETRIC, KD_RANDOM_DIST_BERNOULLI, KD_RANDOM_DIST_INT,
  KD_RANDOM_DIST_POISSON,
};
/* What one filling draw needs. ubits: the uniform mapping of the output dtype (53 float64,
 * 24 float32 and the non-floating dtypes, 11 float16, 8 bfloat16). */
typedef struct kd_random_dist_args {
  int code;
  int ubits;
  uint64_t seed, offset;
  double a, b;
  int64_t low;
  uint64_t range;
} kd_random_dist_args;

/* The Philox block that element i draws from (not for poisson, which has its own stream). */
KD_RANDOM_FN uint64_t kd_random_dist_block(const kd_random_dist_args *r, uint64_t i) {
  return (r->ubits == 53 || r->code == KD_RANDOM_DIST_INT) ? i >> 1 : i >> 2;
}

/* The integer draw of element i from its block's words w. */
KD_RANDOM_FN int64_t kd_random_dist_int(const kd_random_dist_args *r, const uint32_t w[4], uint64_t i) {
  int j = (int)(i & 1) * 2;
  uint64_t v = kd_random_words64(w[j], w[j + 1]);
  return (int64_t)((uint64_t)r->low + (r->range ? v % r->range : v));
}

/* x rounded to a float with `bits` significand bits (53: x; 24: float32; 11: float16; 8:
 * bfloat16; ties to even), for uniform_'s bound. */
KD_RANDOM_FN double kd_random_round_bits(double x, int bits) {
  if (bits >= 53 || x == 0 || !isfinite(x)) return x;
  if (bits == 24) return (double)(float)x;
  int e;
  const double m = frexp(x, &e); /* x = m 2^e, 0.5 <= |m| < 1 */
  return ldexp(rint(ldexp(m, bits)), e - bits);
}

/* The Box-Muller pair of elements i & ~1 and i | 1 (randn's), from element i's block words. */
KD_RANDOM_FN void kd_random_dist_normal_pair(const kd_random_dist_args *r, const uint32_t w[4], uint64_t i, double z[2]) {
  if (r->ubits == 53) kd_random_box_muller64(kd_random_words64(w[0], w[1]), kd_random_words64(w[2], w[3]), z);
  else kd_random_box_muller32(w[i & 2], w[(i & 2) + 1], z);
}
/* normal_ / logNormal_ of a standard normal z. */
KD_RANDOM_FN double kd_random_dist_from_normal(const kd_random_dist_args *r, double z) {
  const double x = r->a + r->b * z;
  return r->code == KD_RANDOM_DIST_NORMAL ? x : exp(x);
}

/* The floating draw of element i (code other than INT/POISSON) from its block's words w;
 * p is the element's bernoulli probability when the op has a tensor of them, else r->a. */
KD_RANDOM_FN double kd_random_dist_value(const kd_random_dist_args *r, const uint32_t w[4], uint64_t i, double p) {
  const bool wide = r->ubits == 53;
  const int j = wide ? (int)(i & 1) * 2 : (int)(i & 3);
  const uint64_t bits = wide ? kd_random_words64(w[j], w[j + 1]) >> 11 : (uint64_t)(w[j] >> 8);
  const double scale = wide ? 1.0 / 9007199254740992.0 : 1.0 / 16777216.0;
  const double u = (double)bits * scale, v = ((double)bits + 0.5) * scale;
  const double pi = 3.14159265358979323846;
  switch (r->code) {
    case KD_RANDOM_DIST_UNIFORM: {
      double uu = u;
      if (r->ubits == 11) uu = (double)kd_random_u32_to_f16val(w[j]);
      else if (r->ubits == 8) uu = (double)kd_random_u32_to_bf16val(w[j]);
      const double x = r->a + (r->b - r->a) * uu;
      /* a draw that rounds up to `to` in the output dtype is `from`, so the result stays in [from, to) */
      return kd_random_round_bits(x, r->ubits) >= r->b && r->b > r->a ? r->a : x;
    }
    case KD_RANDOM_DIST_NORMAL:
    case KD_RANDOM_DIST_LOG_NORMAL: {
      double z[2];
      kd_random_dist_normal_pair(r, w, i, z);
      return kd_random_dist_from_normal(r, z[i & 1]);
    }
    case KD_RANDOM_DIST_EXPONENTIAL: return -log(v) / r->a + 0.0;
    case KD_RANDOM_DIST_CAUCHY: return r->a + r->b * tan(pi * (v - 0.5));
    case KD_RANDOM_DIST_GEOMETRIC: return ceil(log(v) / log1p(-r->a));
    case KD_RANDOM_DIST_BERNOULLI: return u < p ? 1.0 : 0.0;
    default: return 0.0;
  }
}

/* Element i's own stream of 53-bit uniforms in [0, 1) (poisson). */
typedef struct kd_random_substream {
  uint64_t seed, offset, i, j;
  uint32_t w[4];
  int k; /* uniforms left in w: 2, 1 or 0 */
} kd_random_substream;
KD_RANDOM_FN double kd_random_substream_next(kd_random_substream *s) {
  if (s->k == 0) {
    kd_philox_block(s->seed, s->offset, s->i + (s->j << 40), s->w);
    s->j++;
    s->k = 2;
  }
  const int j = s->k == 2 ? 0 : 2;
  s->k--;
  return kd_random_u64_to_f64(kd_random_words64(s->w[j], s->w[j + 1]));
}

/* A Poisson count of rate `rate` >= 0 (PyTorch's CPU sampler, on element i's stream). */
KD_RANDOM_FN double kd_random_poisson(uint64_t seed, uint64_t offset, uint64_t i, double rate) {
  kd_random_substream s;
  s.seed = seed;
  s.offset = offset;
  s.i = i;
  s.j = 0;
  s.k = 0;
  if (rate == 0) return 0.0;
  if (!(rate < 1e300)) return -9223372036854775808.0; /* +inf: PyTorch's count overflows to INT64_MIN */
  if (rate < 10) { /* Knuth: multiply uniforms until the product drops to exp(-rate) */
    const double enlam = exp(-rate);
    double prod = 1.0, x = 0;
    for (;;) {
      prod *= kd_random_substream_next(&s);
      if (prod > enlam) x += 1;
      else return x;
    }
  }
  /* transformed rejection (Hormann 1993) */
  const double slam = sqrt(rate), loglam = log(rate);
  const double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
  const double invalpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2);
  for (;;) {
    const double u = kd_random_substream_next(&s) - 0.5, v = kd_random_substream_next(&s);
    const double us = 0.5 - fabs(u);
    const double k = floor((2 * a / us + b) * u + rate + 0.43);
    if (us >= 0.07 && v <= vr) return k;
    if (k < 0 || (us < 0.013 && v > us)) continue;
    if (log(v) + log(invalpha) - log(a / (us * us) + b) <= -rate + k * loglam - lgamma(k + 1)) return k;
  }
}

/* multinomial (src/cpu/multinomial.c): without replacement, category c of row r gets the key
 * Exp(1) / p = -log(v) / p, v the wide draw of element r * C + c (p = 0: +inf), and the
 * numSamples smallest keys (stable sort, ties by category) are the sample, as PyTorch's
 * "p / Exp(1), top k"; with replacement, sample s of row r is the first category whose running
 * sum (in double, in order) exceeds u * total, u the wide uniform of element r * S + s. */
KD_RANDOM_FN double kd_random_multinomial_key(uint64_t seed, uint64_t offset, uint64_t e, double p) {
  uint32_t w[4];
  kd_philox_block(seed, offset, e >> 1, w);
  const int j = (int)(e & 1) * 2;
  const double v = ((double)(kd_random_words64(w[j], w[j + 1]) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
  return -log(v) / p;
}
/* The category of one draw with replacement from a row's running sums cdf[0..C) (cdf[C-1] > 0). */
KD_RANDOM_FN int64_t kd_random_multinomial_pick(const double *cdf, int64_t C, double u) {
  const double target = u * cdf[C - 1];
  int64_t lo = 0, hi = C - 1; /* the first c with cdf[c] > target; the last category if none */
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (cdf[mid] > target) hi = mid;
    else lo = mid + 1;
  }
  while (lo > 0 && cdf[lo] == cdf[lo - 1]) lo--; /* never a zero-probability category */
  return lo;
}

#ifdef __cplusplus
}
#endif
#endif
