/* gemm_blocked.c - kindling's own cache-blocked matrix multiply, for every dtype BLAS does
 * not cover (float16/bfloat16, the integer types) and for builds without OpenBLAS.
 *
 * C[b] = A[b] @ B[b] for each of `batch` matrices, A m x k and B k x n given by a data
 * pointer and strides in elements (any strides: transposed, expanded, sliced), C written
 * contiguous (batch x m x n).
 *
 * Note [Blocked GEMM]
 * The classic Goto/BLIS loop nest. The output is cut into tasks of MC rows x nc columns
 * (per batch); tasks run in parallel on the kindling pool (kd_parallel_for), each with its
 * own buffers. Inside a task, for every KC-deep slice of k, the task packs its A block
 * (MC x KC, converted to the accumulator type, micro-panels of MR rows stored k-major) and
 * the B slice (KC x nc, micro-panels of NR columns), zero-padding ragged edges, then a
 * register-tiled micro-kernel computes MR x NR tiles into an accumulator block that lives
 * for the whole k loop. After the last slice the block is converted and stored to C.
 * Packing makes every operand layout equally fast and does the dtype conversion once.
 *
 * Accumulators: float32/float16/bfloat16 accumulate in float, float64 in double, int64 in
 * uint64_t and the narrower integers in uint32_t. Unsigned arithmetic wraps without undefined
 * behaviour, and since truncation to the output width is a ring homomorphism the result
 * equals PyTorch's wrapping integer matmul bit for bit. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/parallel.h"
#include "core/status.h"

/* Block sizes: KC x NR B micro-panels stay in L1, the MC x KC A block in L2. */
#define KD_GEMM_MR 6
#define KD_GEMM_NR 32
#define KD_GEMM_MC 96   /* multiple of MR */
#define KD_GEMM_KC 256
#define KD_GEMM_NC 1024 /* multiple of NR */

typedef struct kd_gemm_args {
  kd_dtype dtype;
  int64_t batch, m, n, k;
  const char *a;
  int64_t a_bs, a_rs, a_cs;
  const char *b;
  int64_t b_bs, b_rs, b_cs;
  char *c; /* contiguous batch x m x n */
  int64_t nc;          /* columns per task (multiple of NR unless n is smaller) */
  int64_t mblocks, nblocks;
  int failed;          /* set (atomically) when a task could not allocate its buffers */
} kd_gemm_args;

/* ---- element loads (to the accumulator type) and stores (from it) ---------------------- */

static inline float kd_gemm_load_f(kd_dtype t, const char *p) {
  switch (t) {
    case KD_DTYPE_F16: return kd_f16_to_f32(*(const uint16_t *)p);
    case KD_DTYPE_BF16: return kd_bf16_to_f32(*(const uint16_t *)p);
    default: return *(const float *)p;
  }
}
static inline double kd_gemm_load_d(kd_dtype t, const char *p) { (void)t; return *(const double *)p; }
static inline uint64_t kd_gemm_load_u(kd_dtype t, const char *p) {
  switch (t) {
    case KD_DTYPE_I8: return (uint64_t)(int64_t) * (const int8_t *)p;
    case KD_DTYPE_U8: return (uint64_t) * (const uint8_t *)p;
    case KD_DTYPE_I16: return (uint64_t)(int64_t) * (const int16_t *)p;
    case KD_DTYPE_I32: return (uint64_t)(int64_t) * (const int32_t *)p;
    default: return *(const uint64_t *)p;
  }
}
/* int8/uint8/int16/int32 accumulate in uint32_t: their outputs keep at most 32 bits, so
 * arithmetic mod 2^32 gives the same wrapped result as mod 2^64, at twice the SIMD width. */
static inline uint32_t kd_gemm_load_w(kd_dtype t, const char *p) {
  switch (t) {
    case KD_DTYPE_I8: return (uint32_t)(int32_t) * (const int8_t *)p;
    case KD_DTYPE_U8: return (uint32_t) * (const uint8_t *)p;
    case KD_DTYPE_I16: return (uint32_t)(int32_t) * (const int16_t *)p;
    default: return *(const uint32_t *)p;
  }
}
static inline void kd_gemm_store_f(kd_dtype t, char *p, float v) {
  switch (t) {
    case KD_DTYPE_F16: *(uint16_t *)p = kd_f32_to_f16(v); break;
    case KD_DTYPE_BF16: *(uint16_t *)p = kd_f32_to_bf16(v); break;
    default: *(float *)p = v; break;
  }
}
static inline void kd_gemm_store_w(kd_dtype t, char *p, uint32_t v) {
  switch (t) {
    case KD_DTYPE_I8: *(int8_t *)p = (int8_t)(uint8_t)v; break;
    case KD_DTYPE_U8: *(uint8_t *)p = (uint8_t)v; break;
    case KD_DTYPE_I16: *(int16_t *)p = (int16_t)(uint16_t)v; break;
    default: *(int32_t *)p = (int32_t)v; break;
  }
}
static inline void kd_gemm_store_d(kd_dtype t, char *p, double v) { (void)t; *(double *)p = v; }
static inline void kd_gemm_store_u(kd_dtype t, char *p, uint64_t v) {
  switch (t) { /* truncation: two's complement wrap, as PyTorch */
    case KD_DTYPE_I8: *(int8_t *)p = (int8_t)(uint8_t)v; break;
    case KD_DTYPE_U8: *(uint8_t *)p = (uint8_t)v; break;
    case KD_DTYPE_I16: *(int16_t *)p = (int16_t)(uint16_t)v; break;
    case KD_DTYPE_I32: *(int32_t *)p = (int32_t)(uint32_t)v; break;
    default: *(uint64_t *)p = v; break;
  }
}

/* ---- one instantiation per accumulator type -------------------------------------------- */

/* KD_GEMM_DEFINE(sfx, acc_t): packing routines, the micro-kernel and the task body for one
 * accumulator type. The source dtype switch sits inside the (inlined) load, which the
 * compiler hoists out of the packing loops. */
#define KD_GEMM_DEFINE(sfx, acc_t)                                                                         \
  /* A block rows [i0, i0+mc) x cols [p0, p0+kc) -> micro-panels of MR rows, k-major. */                    \
  static void kd_gemm_pack_a_##sfx(const kd_gemm_args *g, const char *a, int64_t i0, int64_t mc,          \
                                   int64_t p0, int64_t kc, acc_t *dst) {                                  \
    size_t es = kd_dtype_size(g->dtype);                                                                   \
    for (int64_t ir = 0; ir < mc; ir += KD_GEMM_MR) {                                                      \
      int64_t mr = mc - ir < KD_GEMM_MR ? mc - ir : KD_GEMM_MR;                                            \
      for (int64_t i = 0; i < KD_GEMM_MR; i++) {                                                           \
        acc_t *d = dst + i;                                                                                \
        if (i < mr) {                                                                                      \
          const char *s = a + ((i0 + ir + i) * g->a_rs + p0 * g->a_cs) * (int64_t)es;                      \
          int64_t step = g->a_cs * (int64_t)es;                                                            \
          for (int64_t p = 0; p < kc; p++, s += step) d[p * KD_GEMM_MR] = kd_gemm_load_##sfx(g->dtype, s); \
        } else {                                                                                           \
          for (int64_t p = 0; p < kc; p++) d[p * KD_GEMM_MR] = 0;                                          \
        }                                                                                                  \
      }                                                                                                    \
      dst += KD_GEMM_MR * kc;                                                                              \
    }                                                                                                      \
  }                                                                                                        \
  /* B slice rows [p0, p0+kc) x cols [j0, j0+nc) -> micro-panels of NR columns, k-major. */                 \
  static void kd_gemm_pack_b_##sfx(const kd_gemm_args *g, const char *b, int64_t p0, int64_t kc,          \
                                   int64_t j0, int64_t nc, acc_t *dst) {                                  \
    size_t es = kd_dtype_size(g->dtype);                                                                   \
    for (int64_t jr = 0; jr < nc; jr += KD_GEMM_NR) {                                                      \
      int64_t nr = nc - jr < KD_GEMM_NR ? nc - jr : KD_GEMM_NR;                                            \
      for (int64_t p = 0; p < kc; p++) {                                                                   \
        acc_t *d = dst + p * KD_GEMM_NR;                                                                   \
        const char *s = b + ((p0 + p) * g->b_rs + (j0 + jr) * g->b_cs) * (int64_t)es;                      \
        int64_t step = g->b_cs * (int64_t)es;                                                              \
        int64_t j = 0;                                                                                     \
        for (; j < nr; j++, s += step) d[j] = kd_gemm_load_##sfx(g->dtype, s);                             \
        for (; j < KD_GEMM_NR; j++) d[j] = 0;                                                              \
      }                                                                                                    \
      dst += KD_GEMM_NR * kc;                                                                              \
    }                                                                                                      \
  }                                                                                                        \
  /* c[MR x NR] (row stride ldc) += or = ap (kc x MR) @ bp (kc x NR). */                                   \
  static void kd_gemm_micro_##sfx(int64_t kc, const acc_t *restrict ap, const acc_t *restrict bp,         \
                                  acc_t *restrict c, int64_t ldc, int first) {                            \
    acc_t acc[KD_GEMM_MR][KD_GEMM_NR];                                                                     \
    if (first) {                                                                                           \
      for (int i = 0; i < KD_GEMM_MR; i++)                                                                 \
        for (int j = 0; j < KD_GEMM_NR; j++) acc[i][j] = 0;                                                \
    } else {                                                                                               \
      for (int i = 0; i < KD_GEMM_MR; i++)                                                                 \
        for (int j = 0; j < KD_GEMM_NR; j++) acc[i][j] = c[i * ldc + j];                                   \
    }                                                                                                      \
    for (int64_t p = 0; p < kc; p++) {                                                                     \
      const acc_t *bq = bp + p * KD_GEMM_NR;                                                               \
      for (int i = 0; i < KD_GEMM_MR; i++) {                                                               \
        acc_t av = ap[p * KD_GEMM_MR + i];                                                                 \
        for (int j = 0; j < KD_GEMM_NR; j++) acc[i][j] += av * bq[j];                                      \
      }                                                                                                    \
    }                                                                                                      \
    for (int i = 0; i < KD_GEMM_MR; i++)                                                                   \
      for (int j = 0; j < KD_GEMM_NR; j++) c[i * ldc + j] = acc[i][j];                                     \
  }                                                                                                        \
  /* Tasks [t0, t1): task t is (batch, row block, column block). */                                        \
  static void kd_gemm_tasks_##sfx(void *ctx, int64_t t0, int64_t t1) {                                    \
    kd_gemm_args *g = (kd_gemm_args *)ctx;                                                                 \
    size_t es = kd_dtype_size(g->dtype);                                                                   \
    int64_t kcmax = g->k < KD_GEMM_KC ? g->k : KD_GEMM_KC;                                                 \
    int64_t ncpad = (g->nc + KD_GEMM_NR - 1) / KD_GEMM_NR * KD_GEMM_NR;                                    \
    acc_t *ap = (acc_t *)malloc(sizeof(acc_t) * KD_GEMM_MC * kcmax);                                       \
    acc_t *bp = (acc_t *)malloc(sizeof(acc_t) * ncpad * kcmax);                                            \
    acc_t *cb = (acc_t *)malloc(sizeof(acc_t) * KD_GEMM_MC * ncpad);                                       \
    if (!ap || !bp || !cb) {                                                                               \
      __atomic_store_n(&g->failed, 1, __ATOMIC_RELAXED);                                                   \
      free(ap); free(bp); free(cb);                                                                        \
      return;                                                                                              \
    }                                                                                                      \
    for (int64_t t = t0; t < t1; t++) {                                                                    \
      int64_t bi = t / (g->mblocks * g->nblocks), rest = t % (g->mblocks * g->nblocks);                   \
      int64_t i0 = (rest / g->nblocks) * KD_GEMM_MC, j0 = (rest % g->nblocks) * g->nc;                     \
      int64_t mc = g->m - i0 < KD_GEMM_MC ? g->m - i0 : KD_GEMM_MC;                                        \
      int64_t nc = g->n - j0 < g->nc ? g->n - j0 : g->nc;                                                  \
      const char *a = g->a + bi * g->a_bs * (int64_t)es;                                                   \
      const char *b = g->b + bi * g->b_bs * (int64_t)es;                                                   \
      for (int64_t p0 = 0; p0 < g->k; p0 += KD_GEMM_KC) {                                                  \
        int64_t kc = g->k - p0 < KD_GEMM_KC ? g->k - p0 : KD_GEMM_KC;                                      \
        kd_gemm_pack_b_##sfx(g, b, p0, kc, j0, nc, bp);                                                    \
        kd_gemm_pack_a_##sfx(g, a, i0, mc, p0, kc, ap);                                                    \
        for (int64_t jr = 0; jr < nc; jr += KD_GEMM_NR)                                                    \
          for (int64_t ir = 0; ir < mc; ir += KD_GEMM_MR)                                                  \
            kd_gemm_micro_##sfx(kc, ap + ir * kc, bp + jr * kc, cb + ir * ncpad + jr, ncpad, p0 == 0);     \
      }                                                                                                    \
      char *c = g->c + ((bi * g->m + i0) * g->n + j0) * (int64_t)es;                                       \
      for (int64_t i = 0; i < mc; i++)                                                                     \
        for (int64_t j = 0; j < nc; j++)                                                                   \
          kd_gemm_store_##sfx(g->dtype, c + (i * g->n + j) * (int64_t)es, cb[i * ncpad + j]);              \
    }                                                                                                      \
    free(ap); free(bp); free(cb);                                                                          \
  }

KD_GEMM_DEFINE(f, float)
KD_GEMM_DEFINE(d, double)
KD_GEMM_DEFINE(u, uint64_t)
KD_GEMM_DEFINE(w, uint32_t)

/* Declared in matmul.c (the only caller). Requires m, n, k > 0; dtype not bool. */
kd_status kd_gemm_blocked(kd_dtype dtype, int64_t batch, int64_t m, int64_t n, int64_t k,
                          const char *a, int64_t a_bs, int64_t a_rs, int64_t a_cs,
                          const char *b, int64_t b_bs, int64_t b_rs, int64_t b_cs, char *c) {
  kd_gemm_args g;
  g.dtype = dtype;
  g.batch = batch; g.m = m; g.n = n; g.k = k;
  g.a = a; g.a_bs = a_bs; g.a_rs = a_rs; g.a_cs = a_cs;
  g.b = b; g.b_bs = b_bs; g.b_rs = b_rs; g.b_cs = b_cs;
  g.c = c;
  g.failed = 0;
  g.mblocks = (m + KD_GEMM_MC - 1) / KD_GEMM_MC;
  /* Split columns too when rows and batches alone leave threads idle (matrix-vector, ...). */
  int threads = kd_get_num_threads();
  int64_t want = 4 * (int64_t)threads, have = batch * g.mblocks;
  int64_t nc = n < KD_GEMM_NC ? n : KD_GEMM_NC;
  if (have < want && n > KD_GEMM_NR) {
    int64_t split = (want + have - 1) / have;
    int64_t per = (n + split - 1) / split;
    per = (per + KD_GEMM_NR - 1) / KD_GEMM_NR * KD_GEMM_NR;
    if (per < nc) nc = per;
  }
  g.nc = nc;
  g.nblocks = (n + nc - 1) / nc;
  int64_t tasks = batch * g.mblocks * g.nblocks;

  kd_parallel_fn fn;
  switch (dtype) {
    case KD_DTYPE_F32: case KD_DTYPE_F16: case KD_DTYPE_BF16: fn = kd_gemm_tasks_f; break;
    case KD_DTYPE_F64: fn = kd_gemm_tasks_d; break;
    case KD_DTYPE_I8: case KD_DTYPE_U8: case KD_DTYPE_I16: case KD_DTYPE_I32: fn = kd_gemm_tasks_w; break;
    case KD_DTYPE_I64: fn = kd_gemm_tasks_u; break;
    default: return kd_error(KD_ERR_NOT_SUPPORTED, "matmul: unsupported dtype %s", kd_dtype_name(dtype));
  }
  /* Small products stay on the calling thread: waking the pool costs more than it saves. */
  double flops = 2.0 * (double)batch * (double)m * (double)n * (double)k;
  if (flops < 2.0 * 64 * 64 * 64 || tasks == 1) fn(&g, 0, tasks);
  else kd_parallel_for(0, tasks, 1, fn, &g);
  if (g.failed) return kd_error(KD_ERR_OOM, "out of host memory in matmul (packing buffers)");
  return KD_OK;
}
