/* gemm_bf16.c - bfloat16 matrix products on CPUs with AVX512-BF16 (Cooper Lake, Sapphire Rapids,
 * Zen 4 and later), for matmul.c: C[b] = A[b] @ B[b] with bfloat16 operands (any strides),
 * float32 accumulation and C rounded to bfloat16 once, as PyTorch's oneDNN path computes it.
 *
 * Note [bfloat16 dot-product GEMM]
 * VDPBF16PS multiplies 16 pairs of bfloat16 and adds each pair's two products to a float32 lane,
 * so it consumes k two at a time at twice float32's rate. Operands are packed once per product
 * (gemm_bf16_pack.h) with k in pairs (odd k padded with a zero): A as rows of 32-bit
 * (a[i][2p], a[i][2p+1]) words (a row-contiguous A with even k already is that, and is read in
 * place), B as panels of KD_BF_NR columns holding (b[2p][j], b[2p+1][j]) words, zero-padded to
 * whole panels and tiles. A KD_BF_MR x KD_BF_NR tile of C lives in 16 zmm accumulators for the
 * whole k loop: per k pair, two B loads, eight broadcasts of A words and sixteen dot products.
 * Tiles run in parallel on kindling's pool, column panel by column panel so that a panel stays
 * in cache while the row tiles sweep it. Like oneDNN's kernel, VDPBF16PS treats bfloat16
 * subnormals as zero. The avx512 copy of this file (Note [CPU capability dispatch]) is the one
 * with the kernel, compiled for AVX512-BF16 too and used only where the CPU has it
 * (kd_cpu_has_avx512_bf16); where the CPU also has AMX-BF16, gemm_bf16_amx.c takes the product
 * instead (Note [bfloat16 GEMM on AMX tiles]). The other levels compile a stub that declines
 * every call, and matmul.c's float32 route (widen, sgemm, round) takes the product. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc_host.h"
#include "core/dtype.h"
#include "core/parallel.h"
#include "core/status.h"

#include "cpu/cpu_capability.h"
#include "cpu/gemm_bf16.h"
#include "cpu/gemm_bf16_amx.h"
#include "cpu/gemm_bf16_pack.h"

#if defined(__AVX512F__) && defined(__x86_64__) && defined(__GNUC__)
#pragma GCC target("avx512bf16") /* run only when kd_cpu_has_avx512_bf16() */
#endif

#if defined(__AVX512BF16__) && defined(__AVX512F__)
#include <immintrin.h>

#define KD_BF_MR 8
#define KD_BF_NR 32

typedef struct kd_bf_job {
  const uint32_t *ap;  /* packed A: mp x kp words; or A itself (rows of kp words, see a_ld) */
  int64_t a_ld;        /* words from one row of ap to the next */
  const uint32_t *bp;  /* packed B: np / NR panels of kp x NR words */
  char *c;             /* bfloat16 C of this batch, m x n contiguous */
  int64_t m, n, kp, mtiles;
  int64_t m_rows;      /* rows of ap that exist: mp when packed, m when A is read in place */
} kd_bf_job;

/* One tile of C: rows [r0, r0 + MR) x columns of panel `pn`, rounded to bfloat16 and stored
 * where they fall inside m x n. */
static void kd_bf_tile(const kd_bf_job *j, int64_t r0, int64_t pn) {
  __m512 acc[KD_BF_MR][2];
  for (int i = 0; i < KD_BF_MR; i++) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
  const uint32_t *arow[KD_BF_MR]; /* rows past m (unpacked A) repeat the last one; never stored */
  for (int i = 0; i < KD_BF_MR; i++) arow[i] = j->ap + (r0 + i < j->m_rows ? r0 + i : j->m_rows - 1) * j->a_ld;
  const uint32_t *b = j->bp + pn * j->kp * KD_BF_NR;
  for (int64_t p = 0; p < j->kp; p++) {
    const __m512bh b0 = (__m512bh)_mm512_loadu_si512((const void *)(b + p * KD_BF_NR));
    const __m512bh b1 = (__m512bh)_mm512_loadu_si512((const void *)(b + p * KD_BF_NR + 16));
    for (int i = 0; i < KD_BF_MR; i++) {
      const __m512bh ai = (__m512bh)_mm512_set1_epi32((int)arow[i][p]);
      acc[i][0] = _mm512_dpbf16_ps(acc[i][0], ai, b0);
      acc[i][1] = _mm512_dpbf16_ps(acc[i][1], ai, b1);
    }
  }
  const int64_t c0 = pn * KD_BF_NR;
  const int64_t cols = j->n - c0 < KD_BF_NR ? j->n - c0 : KD_BF_NR;
  for (int i = 0; i < KD_BF_MR && r0 + i < j->m; i++) {
    uint16_t *crow = (uint16_t *)j->c + (r0 + i) * j->n + c0;
    float v[KD_BF_NR];
    _mm512_storeu_ps(v, acc[i][0]);
    _mm512_storeu_ps(v + 16, acc[i][1]);
    for (int64_t q = 0; q < cols; q++) crow[q] = kd_f32_to_bf16(v[q]);
  }
}

/* Tiles t0..t1 in column-panel-major order (t = panel * mtiles + row tile). */
static void kd_bf_tiles(void *ctx, int64_t t0, int64_t t1) {
  const kd_bf_job *j = (const kd_bf_job *)ctx;
  for (int64_t t = t0; t < t1; t++) kd_bf_tile(j, (t % j->mtiles) * KD_BF_MR, t / j->mtiles);
}

/* Word p of row r (see gemm_bf16_pack.h); r < rows. */
static inline uint32_t kd_bf_pack_word(const kd_bf_pack *q, const uint16_t *row, int64_t p) {
  if (2 * p + 1 < q->k) return (uint32_t)row[2 * p * q->cs] | (uint32_t)row[(2 * p + 1) * q->cs] << 16;
  return 2 * p < q->k ? row[2 * p * q->cs] : 0u;
}

/* Interleaved panels (group 1, several rows): unit u = pair * row_blocks + row block, so that
 * consecutive units read B's two rows of a pair along their length (interleaved in a vector
 * loop where they are contiguous). */
static void kd_bf_pack_panels(const kd_bf_pack *q, int64_t u0, int64_t u1) {
  const int64_t R = q->block_rows, full = q->k / 2; /* pairs without the odd tail */
  int64_t p = u0 / q->row_blocks, blk = u0 % q->row_blocks;
  for (int64_t u = u0; u < u1; u++) {
    uint32_t *dp = q->dst + (blk * q->kpp + p) * R;
    const int64_t live = q->rows - blk * R < R ? q->rows - blk * R : R; /* rows of the block that exist */
    const uint16_t *s = q->src + (live > 0 ? blk * R * q->rs : 0);
    if (q->rs == 1 && live == R && p < full) {
      const uint16_t *s0 = s + 2 * p * q->cs, *s1 = s0 + q->cs;
      for (int64_t l = 0; l < R; l++) dp[l] = (uint32_t)s0[l] | (uint32_t)s1[l] << 16;
    } else {
      for (int64_t l = 0; l < live; l++) dp[l] = kd_bf_pack_word(q, s + l * q->rs, p);
      for (int64_t l = live > 0 ? live : 0; l < R; l++) dp[l] = 0;
    }
    if (++blk == q->row_blocks) {
      blk = 0;
      p++;
    }
  }
}

/* See gemm_bf16_pack.h. Panels: kd_bf_pack_panels. Otherwise unit u = row block * kpp + pair,
 * walking each row's pairs, whose words lie in runs of `group` (a whole row when block_rows is
 * 1), copied where the row is contiguous along k. */
void kd_bf_pack_units(void *ctx, int64_t u0, int64_t u1) {
  const kd_bf_pack *q = (const kd_bf_pack *)ctx;
  const int64_t R = q->block_rows, G = q->group, kpp = q->kpp, full = q->k / 2; /* pairs without the odd tail */
  if (G == 1 && R > 1) {
    kd_bf_pack_panels(q, u0, u1);
    return;
  }
  for (int64_t u = u0; u < u1;) {
    const int64_t blk = u / kpp, p0 = u % kpp, p1 = p0 + (u1 - u) < kpp ? p0 + (u1 - u) : kpp;
    uint32_t *d = q->dst + blk * kpp * R;
    const int64_t live = q->rows - blk * R < R ? q->rows - blk * R : R; /* rows of the block that exist */
    const int64_t run = R == 1 ? kpp : G; /* words of a row stored one after the other */
    for (int64_t l = 0; l < R; l++) {
      const uint16_t *s = l < live ? q->src + (blk * R + l) * q->rs : q->src;
      uint32_t *dg = d + l * G + (p0 / run) * R * G; /* the run of p */
      for (int64_t p = p0, pr = p0 % run; p < p1;) {
        const int64_t len = run - pr < p1 - p ? run - pr : p1 - p; /* words left in this run */
        if (l < live && q->cs == 1 && p + len <= full) {
          if (len == 16) /* an AMX tile row */
            _mm512_storeu_si512((void *)(dg + pr), _mm512_loadu_si512((const void *)(s + 2 * p)));
          else
            memcpy(dg + pr, s + 2 * p, (size_t)len * 4);
        } else {
          for (int64_t i = 0; i < len; i++) dg[pr + i] = l < live ? kd_bf_pack_word(q, s, p + i) : 0u;
        }
        p += len;
        pr = 0;
        dg += R * G;
      }
    }
    u += p1 - p0;
  }
}

void kd_bf_pack_run(kd_bf_pack *q, int64_t row_blocks) {
  q->row_blocks = row_blocks;
  kd_parallel_for(0, row_blocks * q->kpp, 1 + KD_PARALLEL_GRAIN / q->block_rows, kd_bf_pack_units, q);
}

bool kd_gemm_bf16_available(void) { return kd_cpu_has_avx512_bf16(); }

kd_status kd_gemm_bf16(int64_t batch, int64_t m, int64_t n, int64_t k, const char *a, int64_t a_bs, int64_t a_rs,
                       int64_t a_cs, const char *b, int64_t b_bs, int64_t b_rs, int64_t b_cs, char *c, bool *done) {
  *done = false;
  if (!kd_cpu_has_avx512_bf16()) return KD_OK;
  if (kd_cpu_has_amx_bf16()) /* Note [bfloat16 GEMM on AMX tiles] */
    return kd_gemm_bf16_amx(batch, m, n, k, a, a_bs, a_rs, a_cs, b, b_bs, b_rs, b_cs, c, done);
  const int64_t kp = (k + 1) / 2, mtiles = (m + KD_BF_MR - 1) / KD_BF_MR, mp = mtiles * KD_BF_MR;
  const int64_t panels = (n + KD_BF_NR - 1) / KD_BF_NR, np = panels * KD_BF_NR; /* padded columns */
  size_t bytes = ((size_t)mp * (size_t)kp + (size_t)np * (size_t)kp) * 4;
  /* A is read in place when its rows are contiguous, k is even and rows start on a word */
  const bool a_in_place = a_cs == 1 && k % 2 == 0 && a_rs % 2 == 0 && a_bs % 2 == 0 && ((uintptr_t)a & 3) == 0;
  uint32_t *buf = NULL;
  if (kd_host_alloc(bytes, (void **)&buf) != KD_OK) return KD_OK; /* matmul.c has other routes */
  uint32_t *ap = buf, *bp = buf + mp * kp;
  for (int64_t bi = 0; bi < batch; bi++) {
    kd_bf_pack pb = {(const uint16_t *)b + bi * b_bs, b_cs, b_rs, n, k, kp, KD_BF_NR, 1, bp}; /* B's columns as rows */
    kd_bf_pack_run(&pb, panels);
    kd_bf_job j = {ap, kp, bp, c + (size_t)(bi * m * n) * 2, m, n, kp, mtiles, mp};
    if (a_in_place) { /* rows of contiguous pairs already: (a[i][2p], a[i][2p+1]) is one 32-bit word */
      j.ap = (const uint32_t *)((const uint16_t *)a + bi * a_bs);
      j.a_ld = a_rs / 2;
      j.m_rows = m;
    } else {
      kd_bf_pack pa = {(const uint16_t *)a + bi * a_bs, a_rs, a_cs, m, k, kp, 1, 1, ap};
      kd_bf_pack_run(&pa, mp);
    }
    int64_t per_tile = KD_BF_MR * KD_BF_NR * kp;
    kd_parallel_for(0, panels * mtiles, 1 + KD_PARALLEL_GRAIN / (per_tile > 0 ? per_tile : 1), kd_bf_tiles, &j);
  }
  kd_host_free(buf, bytes);
  *done = true;
  return KD_OK;
}

#else /* not the avx512 copy */

bool kd_gemm_bf16_available(void) { return false; }

kd_status kd_gemm_bf16(int64_t batch, int64_t m, int64_t n, int64_t k, const char *a, int64_t a_bs, int64_t a_rs,
                       int64_t a_cs, const char *b, int64_t b_bs, int64_t b_rs, int64_t b_cs, char *c, bool *done) {
  (void)batch; (void)m; (void)n; (void)k; (void)a; (void)a_bs; (void)a_rs; (void)a_cs;
  (void)b; (void)b_bs; (void)b_rs; (void)b_cs; (void)c;
  *done = false;
  return KD_OK;
}

#endif
