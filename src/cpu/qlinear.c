/* qlinear.c - the int8 dynamic quantized linear layer (kd.ao.nn.quantized.dynamic.Linear,
 * src/ops/oplist/quantized.js): kd_cpu_qlinear_pack packs a qint8 weight once, at quantization
 * time; kd_cpu_qlinear_dynamic quantizes its float32 input to uint8 per call, multiplies it
 * with the packed weight in 32-bit integers and dequantizes the result to float32 with the bias.
 *
 * Note [int8 dynamic linear numerics]
 * The values are PyTorch 1.13's quantized::linear_dynamic (reduce_range=True, as its dynamic
 * Linear calls it) on the oneDNN engine, the quantized engine of a PyTorch 1.13 CPU build
 * without FBGEMM; both engines pick the input's qparams by quant_utils::ChooseQuantizationParams
 * and run the same integer product, and differ only in the float rounding of the dequantization:
 *   qparams   min/max of the whole input (0 included), scale = (max - min) / (qmax - qmin) in
 *             double, qmax - qmin = 127 with reduceRange (255 without), scale 0.1 when it is 0 or
 *             its float reciprocal overflows, raised to 6.1e-5 when smaller (min/max scaled
 *             alike), zero point from min or max (whichever adds the smaller terms), rounded and
 *             clamped to [qmin, qmax]
 *   quantize  inv = float(1.0 / scale); xq = clamp(rint(float(x * inv)) + zp, 0, 255)
 *   product   acc[i][j] = sum_k xq[i][k] * wq[j][k] - zp * colsum[j]   (int32, exact: the
 *             weights are symmetric, zero point 0, so no row offsets are needed)
 *   output    ws = float(1.0 / weightScale[j]); s = float(inv * ws); m = 1.0f / s;
 *             y = float(float(float(acc) + float(bias[j] * s)) * m)   (no bias: float(acc) * m)
 * Every step is a float32 operation (this file turns off FMA contraction), so the output equals
 * PyTorch's bit for bit (test/quantization.test.js).
 *
 * Note [Packed int8 weights]
 * The packed weight is one int8 tensor: columns (output features) in panels of 16, panels padded
 * to an even count (32 columns), k padded to a multiple of 4; within a panel, for each group of
 * 4 k, the 4 bytes of column 0, then column 1, ... (64 bytes: one zmm, the operand of VPDPBUSD,
 * which adds 4 u8 x s8 products into each 32-bit lane), followed by the int32 column sums
 * sum_k wq[j][k] of the padded columns. One layout for every CPU level: the avx512 copy of this
 * file runs VPDPBUSD where the CPU has AVX512-VNNI (kd_cpu_has_avx512_vnni), else
 * VPMADDUBSW + VPMADDWD (AVX512BW); the avx2 copy the same pair on ymm; the default copy a
 * scalar loop. VPMADDUBSW saturates pairs of products to int16, which cannot happen while the
 * input's quantized values stay below 128 (reduceRange); without reduceRange those two paths
 * hand the product to the scalar loop, so the result is always the exact integer product.
 * Tasks of up to 64 rows by 32 (avx512) / 16 columns run in parallel on kindling's pool, in
 * register tiles of up to 8 / 4 rows.
 *
 * Note [int8 GEMM k blocks]
 * With a long k (3072 -> 768) a tile's 32 columns of the weight no longer fit in L1 and every
 * row tile would stream them from L2 again. The SIMD kernels walk k in blocks of KD_QL_KB
 * groups (16 KiB of weight) with the row tiles inside: the int32 sums of a block wait in the
 * output rows (y is m x n floats, the same size) and the last block dequantizes them in place. On a device the same operands go to cuda/ops_qlinear.cu (KD_DEV_OP_QLINEAR):
 * the weight is packed on the CPU and moved with the module. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/alloc_host.h"
#include "core/parallel.h"
#include "cpu/cpu_capability.h"
#include "cpu/device_op_ptrs.h"
#include "cpu/nn_common.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=off") /* Note [int8 dynamic linear numerics]: no fused multiply-add */
#endif

#if defined(__AVX512F__) && defined(__x86_64__) && defined(__GNUC__)
#pragma GCC target("avx512vnni") /* the VPDPBUSD kernel runs only when kd_cpu_has_avx512_vnni() */
#endif
#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

#define KD_QL_PANEL 16 /* columns per panel */
#define KD_QL_MAX_K 65536 /* in_features: 255 * 128 * 65536 < 2^31, the int32 sums never overflow */
#define KD_QL_COLS 32  /* columns are padded to a multiple of this (two panels) */

/* Sizes of the packed layout for k x n (Note [Packed int8 weights]). */
static inline int64_t kd_ql_kp(int64_t k) { return (k + 3) / 4 * 4; }
static inline int64_t kd_ql_np(int64_t n) { return (n + KD_QL_COLS - 1) / KD_QL_COLS * KD_QL_COLS; }

/* ---- packing ---------------------------------------------------------------------------- */

KD_KERNEL(kd_cpu_qlinear_pack) {
  (void)op; (void)ks;
  const kd_tensor *w = args[0].v.t;
  if (kd_tensor_device(w).type != KD_DEVICE_CPU)
    return kd_error(KD_ERR_DEVICE, "qlinearPackWeight: the weight must be a CPU tensor, got a tensor on another device");
  if (w->dtype != KD_DTYPE_I8)
    return kd_error(KD_ERR_DTYPE, "qlinearPackWeight: expected an int8 weight, got %s", kd_dtype_name(w->dtype));
  if (w->ndim != 2) return kd_error(KD_ERR_SHAPE, "qlinearPackWeight: expected a 2-D weight [out, in], got %d-D", w->ndim);
  const int64_t n = w->sizes[0], k = w->sizes[1];
  if (k > KD_QL_MAX_K || n > (int64_t)1 << 30)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "qlinearPackWeight: weight of %lld x %lld is too large (in_features up to %d)", (long long)n,
                    (long long)k, KD_QL_MAX_K);
  const int64_t kp = kd_ql_kp(k), np = kd_ql_np(n);
  int64_t bytes = kp * np + np * 4;
  kd_tensor *wc = NULL, *out = NULL;
  KD_TRY(kd_cpu_cast((kd_tensor *)w, KD_DTYPE_I8, true, &wc));
  kd_status st = kd_tensor_empty(&bytes, 1, KD_DTYPE_I8, kd_tensor_device(w), &out);
  if (st != KD_OK) { kd_tensor_release(wc); return st; }
  const int8_t *src = (const int8_t *)kd_tensor_data(wc);
  int8_t *dst = (int8_t *)kd_tensor_data(out);
  int32_t *colsum = (int32_t *)(dst + kp * np);
  memset(dst, 0, (size_t)bytes);
  for (int64_t j = 0; j < n; j++) {
    const int8_t *row = src + j * k;
    int8_t *pd = dst + (j / KD_QL_PANEL) * kp * KD_QL_PANEL + (j % KD_QL_PANEL) * 4;
    int32_t s = 0;
    for (int64_t q = 0; q < k; q++) {
      pd[(q / 4) * KD_QL_PANEL * 4 + q % 4] = row[q];
      s += row[q];
    }
    colsum[j] = s;
  }
  kd_tensor_release(wc);
  kd_out_take(outs, 0, out);
  return KD_OK;
}

/* ---- input qparams and quantization ------------------------------------------------------ */

typedef struct kd_ql_qparams {
  double scale;
  int32_t zero_point;
} kd_ql_qparams;

/* quant_utils::ChooseQuantizationParams (preserve_sparsity and power-of-two scale off). */
static kd_ql_qparams kd_ql_choose(float mn, float mx, int32_t qmin, int32_t qmax, bool reduce_range) {
  if (reduce_range) {
    qmin /= 2;
    qmax /= 2;
  }
  mn = mn < 0.f ? mn : 0.f;
  mx = mx > 0.f ? mx : 0.f;
  double scale = ((double)mx - mn) / (qmax - qmin);
  if ((float)scale == 0.0f || isinf(1.0f / (float)scale)) scale = 0.1;
  const float small = 6.1e-5f;
  if (scale < small) {
    const float org = (float)scale;
    scale = small;
    if (mn == 0.0f) mx = small * (qmax - qmin);
    else if (mx == 0.0f) mn = -small * (qmax - qmin);
    else {
      const float amp = small / org;
      mn *= amp;
      mx *= amp;
    }
  }
  const double zmin = qmin - mn / scale, zmax = qmax - mx / scale;
  const double emin = fabs((double)qmin) - fabs(mn / scale), emax = fabs((double)qmax) - fabs(mx / scale);
  const double z0 = emin < emax ? zmin : zmax;
  kd_ql_qparams p = {scale, 0};
  p.zero_point = z0 < qmin ? qmin : z0 > qmax ? qmax : (int32_t)nearbyint(z0);
  return p;
}

typedef struct kd_ql_quant {
  const float *x;
  uint8_t *xq;
  int64_t k, kp;
  float inv;
  int32_t zp;
} kd_ql_quant;

static void kd_ql_quant_rows(void *ctx, int64_t r0, int64_t r1) {
  const kd_ql_quant *q = (const kd_ql_quant *)ctx;
  for (int64_t r = r0; r < r1; r++) {
    const float *x = q->x + r * q->k;
    uint8_t *d = q->xq + r * q->kp;
    int64_t c = 0;
    /* the same float32 steps, 16 / 8 wide: multiply, round to nearest even, add zp, clamp */
#if defined(__AVX512F__)
    const __m512 inv16 = _mm512_set1_ps(q->inv), zp16 = _mm512_set1_ps((float)q->zp), hi16 = _mm512_set1_ps(255.f);
    for (; c + 16 <= q->k; c += 16) {
      __m512 v = _mm512_roundscale_ps(_mm512_mul_ps(_mm512_loadu_ps(x + c), inv16), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      v = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(v, zp16), _mm512_setzero_ps()), hi16);
      _mm_storeu_si128((__m128i *)(d + c), _mm512_cvtusepi32_epi8(_mm512_cvtps_epi32(v)));
    }
#elif defined(__AVX2__)
    const __m256 inv8 = _mm256_set1_ps(q->inv), zp8 = _mm256_set1_ps((float)q->zp), hi8 = _mm256_set1_ps(255.f);
    const __m256i low_bytes = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                               0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    for (; c + 8 <= q->k; c += 8) {
      __m256 v = _mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(x + c), inv8), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      v = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(v, zp8), _mm256_setzero_ps()), hi8);
      const __m256i b = _mm256_shuffle_epi8(_mm256_cvtps_epi32(v), low_bytes);
      const int32_t lo = _mm256_extract_epi32(b, 0), hi = _mm256_extract_epi32(b, 4);
      memcpy(d + c, &lo, 4);
      memcpy(d + c + 4, &hi, 4);
    }
#endif
    for (; c < q->k; c++) {
      float v = nearbyintf(x[c] * q->inv) + (float)q->zp; /* exact: an integer plus an integer */
      v = v < 0.f ? 0.f : v > 255.f ? 255.f : v;
      d[c] = (uint8_t)v;
    }
    for (c = q->k; c < q->kp; c++) d[c] = 0;
  }
}

/* ---- the product ------------------------------------------------------------------------- */

typedef struct kd_ql_job {
  const uint8_t *xq;    /* m x kp */
  const int8_t *w;      /* packed */
  const int32_t *colsum;
  const float *badd;    /* float(bias[j] * s[j]) or NULL */
  const float *mult;    /* m[j] */
  float *y;             /* m x n */
  int64_t m, n, kp, mblocks;       /* mblocks: row blocks of KD_QL_RB rows */
  int32_t zp;
  bool simd;            /* the SIMD kernel may run (no int16 saturation possible, or VNNI) */
} kd_ql_job;

/* y[i][j] for one accumulator value (Note [int8 dynamic linear numerics]). */
static inline float kd_ql_out(const kd_ql_job *j, int32_t acc, int64_t c) {
  const int32_t a = (int32_t)((uint32_t)acc - (uint32_t)j->zp * (uint32_t)j->colsum[c]); /* wraps as the SIMD lanes */
  if (j->badd) {
    const float t = (float)a + j->badd[c];
    return t * j->mult[c];
  }
  return (float)a * j->mult[c];
}

/* Scalar tile: rows [r0, r1) x columns [c0, c1). */
static void kd_ql_tile_scalar(const kd_ql_job *j, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
  for (int64_t r = r0; r < r1; r++) {
    const uint8_t *a = j->xq + r * j->kp;
    for (int64_t c = c0; c < c1; c++) {
      const int8_t *b = j->w + (c / KD_QL_PANEL) * j->kp * KD_QL_PANEL + (c % KD_QL_PANEL) * 4;
      int32_t acc = 0;
      for (int64_t g = 0; g < j->kp / 4; g++) {
        const int8_t *bg = b + g * KD_QL_PANEL * 4;
        const uint8_t *ag = a + g * 4;
        acc += ag[0] * bg[0] + ag[1] * bg[1] + ag[2] * bg[2] + ag[3] * bg[3];
      }
      j->y[r * j->n + c] = kd_ql_out(j, acc, c);
    }
  }
}

/* Stores the 16 int32 accumulators of row r, columns [c0, c0 + 16). */
static inline void kd_ql_store16(const kd_ql_job *j, int64_t r, int64_t c0, const int32_t *acc) {
  const int64_t cols = j->n - c0 < KD_QL_PANEL ? j->n - c0 : KD_QL_PANEL;
  float *yr = j->y + r * j->n + c0;
  for (int64_t q = 0; q < cols; q++) yr[q] = kd_ql_out(j, acc[q], c0 + q);
}

#if defined(__AVX512F__)
#define KD_QL_MR 8
#define KD_QL_TN 32 /* columns per tile */
#define KD_QL_KB 128 /* k groups per block: 16 KiB of the weight's 32 columns */

/* R rows x 2 panels over the k groups [g0, g1) (VNNI: VPDPBUSD, else VPMADDUBSW + VPMADDWD); the
 * int32 sums of earlier groups wait in y (Note [int8 GEMM k blocks]) unless `first`; `last`
 * dequantizes, else the sums go back to y. */
static inline __attribute__((always_inline)) void kd_ql_tile_avx512(const kd_ql_job *j, int64_t r0, int R, int64_t pn,
                                                                   bool vnni, int64_t g0, int64_t g1, bool first, bool last) {
  __m512i acc[KD_QL_MR][2];
  __mmask16 masks[2];
  for (int h = 0; h < 2; h++) {
    const int64_t c0 = (pn + h) * KD_QL_PANEL, cols = j->n - c0 < KD_QL_PANEL ? (j->n > c0 ? j->n - c0 : 0) : KD_QL_PANEL;
    masks[h] = (__mmask16)((1u << cols) - 1u);
  }
  for (int i = 0; i < R; i++)
    for (int h = 0; h < 2; h++)
      acc[i][h] = first ? _mm512_setzero_si512()
                        : _mm512_maskz_loadu_epi32(masks[h], j->y + (r0 + i) * j->n + (pn + h) * KD_QL_PANEL);
  const int8_t *b0 = j->w + pn * j->kp * KD_QL_PANEL, *b1 = b0 + j->kp * KD_QL_PANEL;
  const uint8_t *a = j->xq + r0 * j->kp;
  const __m512i ones = _mm512_set1_epi16(1);
  for (int64_t g = g0; g < g1; g++) {
    const __m512i w0 = _mm512_loadu_si512((const void *)(b0 + g * 64));
    const __m512i w1 = _mm512_loadu_si512((const void *)(b1 + g * 64));
    for (int i = 0; i < R; i++) {
      int32_t word;
      memcpy(&word, a + i * j->kp + g * 4, 4);
      const __m512i ai = _mm512_set1_epi32(word);
      if (vnni) {
        acc[i][0] = _mm512_dpbusd_epi32(acc[i][0], ai, w0);
        acc[i][1] = _mm512_dpbusd_epi32(acc[i][1], ai, w1);
      } else {
        acc[i][0] = _mm512_add_epi32(acc[i][0], _mm512_madd_epi16(_mm512_maddubs_epi16(ai, w0), ones));
        acc[i][1] = _mm512_add_epi32(acc[i][1], _mm512_madd_epi16(_mm512_maddubs_epi16(ai, w1), ones));
      }
    }
  }
  if (!last) {
    for (int i = 0; i < R; i++)
      for (int h = 0; h < 2; h++) _mm512_mask_storeu_epi32(j->y + (r0 + i) * j->n + (pn + h) * KD_QL_PANEL, masks[h], acc[i][h]);
    return;
  }
  for (int h = 0; h < 2; h++) {
    const int64_t c0 = (pn + h) * KD_QL_PANEL;
    if (c0 >= j->n) break;
    const __mmask16 mask = masks[h];
    /* the epilogue of kd_ql_out, 16 columns wide: each operation rounds to float32 once */
    const __m512i corr = _mm512_mullo_epi32(_mm512_set1_epi32(j->zp), _mm512_maskz_loadu_epi32(mask, j->colsum + c0));
    const __m512 mult = _mm512_maskz_loadu_ps(mask, j->mult + c0);
    const __m512 badd = j->badd ? _mm512_maskz_loadu_ps(mask, j->badd + c0) : _mm512_setzero_ps();
    for (int i = 0; i < R; i++) {
      __m512 v = _mm512_cvtepi32_ps(_mm512_sub_epi32(acc[i][h], corr));
      if (j->badd) v = _mm512_add_ps(v, badd);
      _mm512_mask_storeu_ps(j->y + (r0 + i) * j->n + c0, mask, _mm512_mul_ps(v, mult));
    }
  }
}

static void kd_ql_tile_simd(const kd_ql_job *j, int64_t r0, int R, int64_t pn, int64_t g0, int64_t g1) {
  const bool vnni = kd_cpu_has_avx512_vnni(), first = g0 == 0, last = g1 == j->kp / 4;
#define KD_QL_CASE(N)                                                                  \
  case N:                                                                              \
    vnni ? kd_ql_tile_avx512(j, r0, N, pn, true, g0, g1, first, last)                  \
         : kd_ql_tile_avx512(j, r0, N, pn, false, g0, g1, first, last);                \
    break;
  switch (R) { KD_QL_CASE(1) KD_QL_CASE(2) KD_QL_CASE(3) KD_QL_CASE(4) KD_QL_CASE(5) KD_QL_CASE(6) KD_QL_CASE(7)
               KD_QL_CASE(8) }
#undef KD_QL_CASE
}
#elif defined(__AVX2__)
#define KD_QL_MR 4
#define KD_QL_TN 16
#define KD_QL_KB 256 /* k groups per block: 16 KiB of the weight's 16 columns */

/* R rows x 1 panel (two ymm of 8 columns) over the k groups [g0, g1), VPMADDUBSW + VPMADDWD; the
 * int32 sums wait in y between k blocks as in the avx512 kernel (Note [int8 GEMM k blocks]). */
static inline __attribute__((always_inline)) void kd_ql_tile_avx2(const kd_ql_job *j, int64_t r0, int R, int64_t pn,
                                                                 int64_t g0, int64_t g1, bool first, bool last) {
  const int64_t c0 = pn * KD_QL_PANEL, cols = j->n - c0 < KD_QL_PANEL ? j->n - c0 : KD_QL_PANEL;
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i masks[2] = {_mm256_cmpgt_epi32(_mm256_set1_epi32((int)cols), lane),
                            _mm256_cmpgt_epi32(_mm256_set1_epi32((int)cols - 8), lane)};
  __m256i acc[KD_QL_MR][2];
  for (int i = 0; i < R; i++)
    for (int h = 0; h < 2; h++)
      acc[i][h] = first ? _mm256_setzero_si256() : _mm256_maskload_epi32((const int *)(j->y + (r0 + i) * j->n + c0 + 8 * h), masks[h]);
  const int8_t *b = j->w + pn * j->kp * KD_QL_PANEL;
  const uint8_t *a = j->xq + r0 * j->kp;
  const __m256i ones = _mm256_set1_epi16(1);
  for (int64_t g = g0; g < g1; g++) {
    const __m256i w0 = _mm256_loadu_si256((const __m256i *)(b + g * 64));
    const __m256i w1 = _mm256_loadu_si256((const __m256i *)(b + g * 64 + 32));
    for (int i = 0; i < R; i++) {
      int32_t word;
      memcpy(&word, a + i * j->kp + g * 4, 4);
      const __m256i ai = _mm256_set1_epi32(word);
      acc[i][0] = _mm256_add_epi32(acc[i][0], _mm256_madd_epi16(_mm256_maddubs_epi16(ai, w0), ones));
      acc[i][1] = _mm256_add_epi32(acc[i][1], _mm256_madd_epi16(_mm256_maddubs_epi16(ai, w1), ones));
    }
  }
  if (!last) {
    for (int i = 0; i < R; i++)
      for (int h = 0; h < 2; h++) _mm256_maskstore_epi32((int *)(j->y + (r0 + i) * j->n + c0 + 8 * h), masks[h], acc[i][h]);
    return;
  }
  if (cols < KD_QL_PANEL) { /* the last, partial panel */
    for (int i = 0; i < R; i++) {
      int32_t v[16];
      _mm256_storeu_si256((__m256i *)v, acc[i][0]);
      _mm256_storeu_si256((__m256i *)(v + 8), acc[i][1]);
      kd_ql_store16(j, r0 + i, c0, v);
    }
    return;
  }
  for (int h = 0; h < 2; h++) { /* the epilogue of kd_ql_out, 8 columns wide */
    const int64_t c = c0 + 8 * h;
    const __m256i corr = _mm256_mullo_epi32(_mm256_set1_epi32(j->zp), _mm256_loadu_si256((const __m256i *)(j->colsum + c)));
    const __m256 mult = _mm256_loadu_ps(j->mult + c);
    const __m256 badd = j->badd ? _mm256_loadu_ps(j->badd + c) : _mm256_setzero_ps();
    for (int i = 0; i < R; i++) {
      __m256 v = _mm256_cvtepi32_ps(_mm256_sub_epi32(acc[i][h], corr));
      if (j->badd) v = _mm256_add_ps(v, badd);
      _mm256_storeu_ps(j->y + (r0 + i) * j->n + c, _mm256_mul_ps(v, mult));
    }
  }
}

static void kd_ql_tile_simd(const kd_ql_job *j, int64_t r0, int R, int64_t pn, int64_t g0, int64_t g1) {
  const bool first = g0 == 0, last = g1 == j->kp / 4;
#define KD_QL_CASE(N) \
  case N: kd_ql_tile_avx2(j, r0, N, pn, g0, g1, first, last); break;
  switch (R) { KD_QL_CASE(1) KD_QL_CASE(2) KD_QL_CASE(3) KD_QL_CASE(4) }
#undef KD_QL_CASE
}
#else
#define KD_QL_MR 4
#define KD_QL_TN 16
#define KD_QL_KB INT64_MAX
#endif
#define KD_QL_RB 64 /* rows per task */

/* Tasks t0..t1: task t = column tile t / mblocks, rows of row block t % mblocks (KD_QL_RB rows),
 * k in blocks of KD_QL_KB groups outermost (Note [int8 GEMM k blocks]). */
static void kd_ql_tiles(void *ctx, int64_t t0, int64_t t1) {
  const kd_ql_job *j = (const kd_ql_job *)ctx;
  for (int64_t t = t0; t < t1; t++) {
    const int64_t ct = t / j->mblocks, rb0 = (t % j->mblocks) * KD_QL_RB;
    const int64_t rb1 = rb0 + KD_QL_RB < j->m ? rb0 + KD_QL_RB : j->m;
#if defined(__AVX512F__) || defined(__AVX2__)
    if (j->simd) {
      const int64_t groups = j->kp / 4;
      for (int64_t g0 = 0; g0 < groups; g0 += KD_QL_KB) {
        const int64_t g1 = groups - g0 < KD_QL_KB ? groups : g0 + KD_QL_KB;
        for (int64_t r0 = rb0; r0 < rb1; r0 += KD_QL_MR)
          kd_ql_tile_simd(j, r0, (int)(rb1 - r0 < KD_QL_MR ? rb1 - r0 : KD_QL_MR), ct * (KD_QL_TN / KD_QL_PANEL), g0, g1);
      }
      continue;
    }
#endif
    const int64_t c0 = ct * KD_QL_TN, c1 = c0 + KD_QL_TN < j->n ? c0 + KD_QL_TN : j->n;
    kd_ql_tile_scalar(j, rb0, rb1, c0, c1);
  }
}

/* ---- the op ------------------------------------------------------------------------------ */

/* The checked, contiguous float32 operands of one call. */
typedef struct kd_ql_args {
  const kd_tensor *x, *packed, *wscale, *bias; /* bias may be NULL */
  kd_tensor *y;
  int64_t m, k, n, kp, nscale;
  bool reduce_range;
} kd_ql_args;

#define KD_QL_MINMAX_BLOCKS 64

typedef struct kd_ql_minmax {
  const float *x;
  int64_t numel;
  float mn[KD_QL_MINMAX_BLOCKS], mx[KD_QL_MINMAX_BLOCKS];
} kd_ql_minmax;

/* min/max of block b of KD_QL_MINMAX_BLOCKS equal parts of x (an empty part keeps x[0]). */
static void kd_ql_minmax_blocks(void *ctx, int64_t b0, int64_t b1) {
  kd_ql_minmax *r = (kd_ql_minmax *)ctx;
  for (int64_t b = b0; b < b1; b++) {
    const int64_t i0 = r->numel * b / KD_QL_MINMAX_BLOCKS, i1 = r->numel * (b + 1) / KD_QL_MINMAX_BLOCKS;
    const float *x = r->x;
    float mn = x[i0 < r->numel ? i0 : 0], mx = mn;
    int64_t i = i0;
#if defined(__AVX512F__)
    __m512 vmn = _mm512_set1_ps(mn), vmx = vmn;
    for (; i + 16 <= i1; i += 16) {
      const __m512 v = _mm512_loadu_ps(x + i);
      vmn = _mm512_min_ps(v, vmn);
      vmx = _mm512_max_ps(v, vmx);
    }
    mn = _mm512_reduce_min_ps(vmn);
    mx = _mm512_reduce_max_ps(vmx);
#elif defined(__AVX2__)
    __m256 vmn = _mm256_set1_ps(mn), vmx = vmn;
    for (; i + 8 <= i1; i += 8) {
      const __m256 v = _mm256_loadu_ps(x + i);
      vmn = _mm256_min_ps(v, vmn);
      vmx = _mm256_max_ps(v, vmx);
    }
    float lmn[8], lmx[8];
    _mm256_storeu_ps(lmn, vmn);
    _mm256_storeu_ps(lmx, vmx);
    for (int l = 0; l < 8; l++) {
      mn = lmn[l] < mn ? lmn[l] : mn;
      mx = lmx[l] > mx ? lmx[l] : mx;
    }
#endif
    for (; i < i1; i++) {
      mn = x[i] < mn ? x[i] : mn;
      mx = x[i] > mx ? x[i] : mx;
    }
    r->mn[b] = mn;
    r->mx[b] = mx;
  }
}

static kd_status kd_ql_run_cpu(const kd_ql_args *a) {
  const int64_t m = a->m, k = a->k, n = a->n, kp = a->kp, np = kd_ql_np(n);
  uint8_t *xq = NULL;
  float *vec = NULL;
  const size_t xq_bytes = (size_t)(m * kp), vec_bytes = (size_t)n * 2 * sizeof(float);
  kd_status st = kd_host_alloc(xq_bytes, (void **)&xq);
  if (st == KD_OK) st = kd_host_alloc(vec_bytes, (void **)&vec);
  if (st == KD_OK) {
    const float *xd = (const float *)kd_tensor_data(a->x);
    kd_ql_minmax r;
    r.x = xd;
    r.numel = m * k;
    kd_parallel_for(0, KD_QL_MINMAX_BLOCKS, r.numel > KD_PARALLEL_GRAIN ? 1 : KD_QL_MINMAX_BLOCKS, kd_ql_minmax_blocks, &r);
    float mn = r.mn[0], mx = r.mx[0];
    for (int b = 1; b < KD_QL_MINMAX_BLOCKS; b++) {
      mn = r.mn[b] < mn ? r.mn[b] : mn;
      mx = r.mx[b] > mx ? r.mx[b] : mx;
    }
    const kd_ql_qparams qp = kd_ql_choose(mn, mx, 0, 255, a->reduce_range);
    const float inv = (float)(1.0 / qp.scale);
    kd_ql_quant q = {xd, xq, k, kp, inv, qp.zero_point};
    kd_parallel_for(0, m, 1 + KD_PARALLEL_GRAIN / kp, kd_ql_quant_rows, &q);
    /* per-column factors (Note [int8 dynamic linear numerics]) */
    const float *ws = (const float *)kd_tensor_data(a->wscale), *bd = a->bias ? (const float *)kd_tensor_data(a->bias) : NULL;
    float *mult = vec, *badd = vec + n;
    for (int64_t c = 0; c < n; c++) {
      const float wi = (float)(1.0 / (double)ws[a->nscale == 1 ? 0 : c]);
      const float s = inv * wi;
      mult[c] = 1.0f / s;
      if (bd) badd[c] = bd[c] * s;
    }
    const int8_t *pw = (const int8_t *)kd_tensor_data(a->packed);
    /* the largest quantized input value: VPMADDUBSW's int16 pairs cannot saturate below 128 */
    const bool small = qp.zero_point + nearbyintf(mx * inv) < 128.f;
    kd_ql_job j = {xq, pw, (const int32_t *)(pw + kp * np), bd ? badd : NULL, mult, (float *)kd_tensor_data(a->y),
                   m, n, kp, (m + KD_QL_RB - 1) / KD_QL_RB, qp.zero_point, small};
#if defined(__AVX512F__)
    if (kd_cpu_has_avx512_vnni()) j.simd = true;
#endif
    const int64_t ctiles = (n + KD_QL_TN - 1) / KD_QL_TN, rows = m < KD_QL_RB ? m : KD_QL_RB, per_task = rows * KD_QL_TN * kp / 8;
    kd_parallel_for(0, ctiles * j.mblocks, 1 + KD_PARALLEL_GRAIN / (per_task > 0 ? per_task : 1), kd_ql_tiles, &j);
  }
  if (xq) kd_host_free(xq, xq_bytes);
  if (vec) kd_host_free(vec, vec_bytes);
  return st;
}

/* The same on a device (cuda/ops_qlinear.cu), with device scratch for the quantized input and
 * the qparams. */
static kd_status kd_ql_run_device(kd_device dev, const kd_ql_args *a) {
  kd_tensor *xs = NULL, *scratch = NULL;
  int64_t xs_n = a->m * a->kp, scratch_n = 2 * 256 + 2;
  kd_status st = kd_tensor_empty(&xs_n, 1, KD_DTYPE_I8, dev, &xs);
  if (st == KD_OK) st = kd_tensor_empty(&scratch_n, 1, KD_DTYPE_F32, dev, &scratch);
  if (st == KD_OK) {
    kd_dev_op d;
    memset(&d, 0, sizeof d);
    d.kind = KD_DEV_OP_QLINEAR;
    d.dtype = KD_DTYPE_F32;
    const int64_t params[6] = {a->m, a->k, a->n, a->kp, a->nscale, a->reduce_range};
    memcpy(d.i, params, sizeof params);
    void *p[7] = {kd_dev_ptr(a->x), kd_dev_ptr(a->packed), kd_dev_ptr(a->wscale), kd_dev_ptr(a->bias), kd_dev_ptr(a->y),
                  kd_dev_ptr(xs), kd_dev_ptr(scratch)};
    const kd_dtype dts[7] = {KD_DTYPE_F32, KD_DTYPE_I8, KD_DTYPE_F32, KD_DTYPE_F32, KD_DTYPE_F32, KD_DTYPE_I8, KD_DTYPE_F32};
    st = kd_dev_op_run_ptrs(dev, &d, 7, p, dts);
  }
  if (xs) kd_tensor_release(xs);
  if (scratch) kd_tensor_release(scratch);
  return st;
}

KD_KERNEL(kd_cpu_qlinear_dynamic) {
  (void)op; (void)ks;
  const kd_tensor *x = args[0].v.t, *packed = args[1].v.t, *wscale = args[2].v.t;
  const kd_tensor *bias = args[3].kind == KD_VALUE_TENSOR ? args[3].v.t : NULL;
  const int64_t k = args[4].v.i, n = args[5].v.i;
  const bool reduce_range = args[6].v.b;
  const kd_device dev = kd_tensor_device(x);
  if (!kd_device_eq(kd_tensor_device(packed), dev) || !kd_device_eq(kd_tensor_device(wscale), dev) ||
      (bias && !kd_device_eq(kd_tensor_device(bias), dev)))
    return kd_error(KD_ERR_DEVICE, "Expected all tensors to be on the same device, but found at least two devices (qlinearDynamic)");
  if (x->dtype != KD_DTYPE_F32)
    return kd_error(KD_ERR_DTYPE, "qlinearDynamic: expected a float32 input, got %s", kd_dtype_name(x->dtype));
  if (k <= 0 || n <= 0 || k > KD_QL_MAX_K || n > (int64_t)1 << 30)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "qlinearDynamic: invalid features %lld -> %lld (in_features from 1 to %d)", (long long)k,
                    (long long)n, KD_QL_MAX_K);
  const int64_t kp = kd_ql_kp(k), np = kd_ql_np(n);
  if (packed->dtype != KD_DTYPE_I8 || packed->ndim != 1 || packed->sizes[0] != kp * np + np * 4 || !kd_tensor_is_contiguous(packed))
    return kd_error(KD_ERR_INVALID_ARGUMENT, "qlinearDynamic: the packed weight is not that of a %lld -> %lld layer", (long long)k,
                    (long long)n);
  const int64_t nscale = kd_tensor_numel(wscale);
  if (wscale->dtype != KD_DTYPE_F32 || wscale->ndim > 1 || (nscale != 1 && nscale != n))
    return kd_error(KD_ERR_INVALID_ARGUMENT, "qlinearDynamic: weightScale must be a 0-d or 1-D float32 tensor of 1 or %lld scales", (long long)n);
  if (bias && (bias->ndim != 1 || bias->sizes[0] != n))
    return kd_error(KD_ERR_SHAPE, "qlinearDynamic: bias must have shape [%lld], got %d-D", (long long)n, bias->ndim);
  if (bias && bias->dtype != KD_DTYPE_F32)
    return kd_error(KD_ERR_DTYPE, "qlinearDynamic: expected a float32 bias, got %s", kd_dtype_name(bias->dtype));
  if (x->ndim < 1 || x->sizes[x->ndim - 1] != k)
    return kd_error(KD_ERR_SHAPE, "qlinearDynamic: input's last dimension must be %lld (in_features), got shape with %lld",
                    (long long)k, x->ndim ? (long long)x->sizes[x->ndim - 1] : 0LL);
  const int64_t m = kd_tensor_numel(x) / k;

  int64_t osizes[KD_MAX_DIMS];
  for (int d = 0; d < x->ndim - 1; d++) osizes[d] = x->sizes[d];
  osizes[x->ndim - 1] = n;
  kd_tensor *y = NULL, *xc = NULL, *sc = NULL, *bc = NULL;
  KD_TRY(kd_tensor_empty(osizes, x->ndim, KD_DTYPE_F32, dev, &y));
  if (m == 0) {
    kd_out_take(outs, 0, y);
    return KD_OK;
  }
  kd_status st = kd_cpu_cast((kd_tensor *)x, KD_DTYPE_F32, true, &xc);
  if (st == KD_OK) st = kd_cpu_cast((kd_tensor *)wscale, KD_DTYPE_F32, true, &sc);
  if (st == KD_OK && bias) st = kd_cpu_cast((kd_tensor *)bias, KD_DTYPE_F32, true, &bc);
  const kd_ql_args a = {xc, packed, sc, bc, y, m, k, n, kp, nscale, reduce_range};
  if (st == KD_OK) st = dev.type == KD_DEVICE_CPU ? kd_ql_run_cpu(&a) : kd_ql_run_device(dev, &a);
  if (xc) kd_tensor_release(xc);
  if (sc) kd_tensor_release(sc);
  if (bc) kd_tensor_release(bc);
  if (st != KD_OK) {
    kd_tensor_release(y);
    return st;
  }
  kd_out_take(outs, 0, y);
  return KD_OK;
}
