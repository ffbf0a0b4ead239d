/* reduce.c - CPU reductions over a set of dims: sum, nansum, mean, nanmean, prod, amax/amin
 * (and max()/min() of everything), all/any, countNonzero, var/std (and varMean/stdMean),
 * norm, logsumexp; and the index-returning reductions max.dim, min.dim, argmax, argmin.
 *
 * Note [Reduction accumulators]
 * Every value reduction accumulates into an accumulator tensor shaped like the output: double
 * for floating inputs (float16/bfloat16/float32 too: one rounding at the end, never in the
 * loop; except a float32 sum over contiguous runs, kd_sum_f32_run and kd_sum_cols_f32, which
 * add short float partial sums into the double accumulator: PyTorch's cascade, a few ulps from
 * the float64 sum), int64 for integer and bool inputs (wrapping, as PyTorch). A pass runs
 * through THE iterator with the accumulator given the input's shape and stride 0 along the
 * reduced dims (see Note [Strided iteration]). The inner loop sees either a reduced run (accumulator
 * stride 0: eight independent lanes, so it vectorizes and its order is fixed) or a kept run
 * (accumulator contiguous: acc[i] op= x[i], vectorized across outputs). Two-pass reductions
 * (var: mean first; logsumexp: max first) give the second pass the first one's result as a
 * "center" operand laid out like the accumulator. The finished accumulator is converted into
 * the output (mean divides, std takes the root, ...).
 *
 * Parallelism: a large pass splits along the outermost dim the accumulator owns (different
 * threads write different outputs); when every owned dim is short (a full reduction, or a
 * [3, 1e6] sum over dim 1) it splits the outermost reduced dim into fixed chunks, each with
 * its own partial accumulator, combined in chunk order. Chunk bounds depend only on shapes,
 * so results do not depend on the thread count.
 *
 * max.dim/min.dim/argmax/argmin of a contiguous input over a dim that is not the innermost
 * skip the iterator (whose REDUCE_INNER order would walk each output's column with a large
 * stride): a vertical loop compares whole rows against the running best (it vectorizes), in
 * parallel over (outer index, column block) tasks. */
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "cpu/reduce.h"
#include "cpu/device_hooks.h"
#include "cpu/device_op.h"

/* ---- accumulate kinds (what one pass computes) ---- */
enum kd_rk {
  KD_RK_SUM, KD_RK_NANSUM, KD_RK_PROD, KD_RK_MAX, KD_RK_MIN, KD_RK_ALL, KD_RK_ANY, KD_RK_COUNT_NZ,
  KD_RK_NOTNAN, KD_RK_ABS_SUM, KD_RK_SQ_SUM, KD_RK_ABS_MAX, KD_RK_ABS_MIN, KD_RK_POW_SUM,
  KD_RK_NZ_PROD, KD_RK_ZERO_COUNT,
  KD_RK_CSQ, KD_RK_CEXP, /* centered: (x - c)^2, exp(x - c) */
};
typedef struct kd_red_ctx {
  int kind;
  double p; /* KD_RK_POW_SUM */
} kd_red_ctx;

/* int64 accumulators for integer/bool inputs of these kinds; double otherwise */
static bool kd_rk_int_acc(int kind, kd_dtype in) {
  if (kind == KD_RK_ALL || kind == KD_RK_ANY || kind == KD_RK_COUNT_NZ) return true;
  return !kd_dtype_is_float(in) && kind <= KD_RK_MIN;
}

#define KD_RMAX(a, x) ((x) > (a) || (x) != (x) ? (x) : (a))
#define KD_RMIN(a, x) ((x) < (a) || (x) != (x) ? (x) : (a))
/* integer sums/products wrap in uint64_t accumulators (gcc 12 -O3 -march=native miscompiles
 * the vectorized lanes when they are int64_t with casts through uint64_t) */
#define KD_IADD(a, x) ((int64_t)((uint64_t)(a) + (uint64_t)(int64_t)(x)))
#define KD_IMUL(a, x) ((int64_t)((uint64_t)(a) * (uint64_t)(int64_t)(x)))

/* One run: operand 0 the accumulator (AT), operand 1 the input (T, loaded as CT by LD). */
#define KD_RED_RUN(T, CT, LD, AT, IDENT, STEP, COMB)                                                     \
  do {                                                                                        \
    char *po = data[0], *pi = data[1];                                                        \
    const int64_t so = strides[0], si = strides[1];                                           \
    if (so == 0) {                                                                            \
      AT s[8];                                                                                \
      for (int k = 0; k < 8; k++) s[k] = (IDENT);                                             \
      int64_t i = 0;                                                                          \
      if (si == (int64_t)sizeof(T)) {                                                         \
        const T *xs = (const T *)pi;                                                          \
        for (; i + 8 <= n; i += 8)                                                            \
          for (int k = 0; k < 8; k++) { CT x = LD(xs[i + k]); AT a = s[k]; s[k] = (STEP); }   \
      }                                                                                       \
      for (; i < n; i++) { CT x = LD(*(const T *)(pi + i * si)); AT a = s[0]; s[0] = (STEP); } \
      AT *o = (AT *)po, a, b;                                                                 \
      a = s[0], b = s[1]; s[0] = (COMB); a = s[2], b = s[3]; s[2] = (COMB);                   \
      a = s[4], b = s[5]; s[4] = (COMB); a = s[6], b = s[7]; s[6] = (COMB);                   \
      a = s[0], b = s[2]; s[0] = (COMB); a = s[4], b = s[6]; s[4] = (COMB);                   \
      a = s[0], b = s[4]; s[0] = (COMB); a = *o, b = s[0]; *o = (COMB);                       \
    } else if (so == (int64_t)sizeof(AT) && si == (int64_t)sizeof(T)) {                       \
      AT *o = (AT *)po;                                                                       \
      const T *xs = (const T *)pi;                                                            \
      for (int64_t i = 0; i < n; i++) { CT x = LD(xs[i]); AT a = o[i]; o[i] = (STEP); }       \
    } else {                                                                                  \
      for (int64_t i = 0; i < n; i++) {                                                       \
        CT x = LD(*(const T *)(pi + i * si));                                                 \
        AT *o = (AT *)(po + i * so), a = *o;                                                  \
        *o = (STEP);                                                                          \
      }                                                                                       \
    }                                                                                         \
  } while (0)

/* 8 float lanes: a ymm register with AVX2 and AVX-512, two xmm at the baseline. (A 16-lane
 * vector type would be one zmm with AVX-512, but gcc lowers it through the stack in the avx2 copy
 * of this file, Note [CPU capability dispatch]: half the speed of the baseline.) The helpers take
 * pointers: a vector passed by value is an ABI that differs between the copies (gcc's -Wpsabi). */
typedef float kd_v8f __attribute__((vector_size(32)));
typedef float kd_v4f __attribute__((vector_size(16)));
static inline void kd_v8f_add_load(kd_v8f *acc, const float *p) {
  kd_v8f v;
  memcpy(&v, p, sizeof v);
  *acc += v;
}
/* Lanes summed by halving: (l[k] + l[k + 4]), then + 2, + 1. */
static inline float kd_v8f_hsum(const kd_v8f *h) {
  kd_v4f q = __builtin_shufflevector(*h, *h, 0, 1, 2, 3) + __builtin_shufflevector(*h, *h, 4, 5, 6, 7);
  float a = q[0] + q[2], b = q[1] + q[3];
  return a + b;
}

/* Sum of a contiguous float32 run into the scalar accumulator, at full SIMD width: blocks of
 * up to 2048 elements are summed in 32 float lanes (combined pairwise), and the block sums in
 * double, the cascade PyTorch's float32 sum uses (its error is that of a 64-term float sum per
 * block, not of n terms). The order is fixed, so the result does not depend on thread count. */
static double kd_sum_f32_run(const float *x, int64_t n) {
  double total = 0;
  int64_t i = 0;
  while (n - i >= 32) {
    int64_t end = n - i >= 2048 ? i + 2048 : n - (n - i) % 32;
    kd_v8f a0 = {0}, a1 = {0}, b0 = {0}, b1 = {0}; /* lanes 0-7, 8-15, 16-23, 24-31 of a block row */
    for (; i < end; i += 32) {
      kd_v8f_add_load(&a0, x + i);
      kd_v8f_add_load(&a1, x + i + 8);
      kd_v8f_add_load(&b0, x + i + 16);
      kd_v8f_add_load(&b1, x + i + 24);
    }
    const kd_v8f h = (a0 + b0) + (a1 + b1); /* lane k + lane k + 16, then + 8, + 4, + 2, + 1 */
    total += kd_v8f_hsum(&h);
  }
  for (; i < n; i++) total += x[i];
  return total;
}

/* Column sums of a float32 matrix with contiguous rows (row stride ld elements): acc[j] +=
 * sum over the rows of x[r * ld + j] for j in [c0, c1). Rows are taken 8 at a time, summed in
 * float in a fixed pairwise order and added to the double accumulator once per 8 rows, so the
 * accumulator is read and written once per 8 rows instead of once per row. Columns are done
 * in blocks whose accumulators stay in L1. Each column's order depends only on the row count. */
static void kd_sum_cols_f32(double *restrict acc, const float *restrict x, int64_t ld, int64_t rows, int64_t c0,
                            int64_t c1) {
  for (int64_t b0 = c0; b0 < c1; b0 += 1024) {
    int64_t b1 = b0 + 1024 < c1 ? b0 + 1024 : c1, r = 0;
    for (; r + 8 <= rows; r += 8) {
      const float *p = x + r * ld;
      for (int64_t j = b0; j < b1; j++) {
        float s = ((p[j] + p[ld + j]) + (p[2 * ld + j] + p[3 * ld + j])) +
                  ((p[4 * ld + j] + p[5 * ld + j]) + (p[6 * ld + j] + p[7 * ld + j]));
        acc[j] += (double)s;
      }
    }
    for (; r < rows; r++)
      for (int64_t j = b0; j < b1; j++) acc[j] += (double)x[r * ld + j];
  }
}

/* A float32 matrix sum for the pool: rows of x (row stride ld) into acc; n is the length of the
 * dim not split (rows for column sums, columns for row sums). */
typedef struct kd_sum2d_job {
  double *acc;
  const float *x;
  int64_t ld, n;
} kd_sum2d_job;

static void kd_cols_body(void *p, int64_t c0, int64_t c1) {
  const kd_sum2d_job *j = (const kd_sum2d_job *)p;
  kd_sum_cols_f32(j->acc, j->x, j->ld, j->n, c0, c1);
}

static void kd_rows_body(void *p, int64_t r0, int64_t r1) {
  const kd_sum2d_job *j = (const kd_sum2d_job *)p;
  for (int64_t r = r0; r < r1; r++) j->acc[r] += kd_sum_f32_run(j->x + r * j->ld, j->n);
}

/* A float32 sum whose iteration is [rows (kept), cols (reduced, contiguous)] with the
 * accumulator contiguous: sum(1) of a matrix, sum(-1), ...: each row through kd_sum_f32_run (the
 * same order as the generic loop) without an indirect call per row, in parallel over rows. */
static bool kd_red_sum_rows_f32(const kd_iter *it) {
  if (it->ndim != 2 || it->strides[0][0] != 0 || it->strides[1][0] != (int64_t)sizeof(float) ||
      it->strides[0][1] != (int64_t)sizeof(double) || it->strides[1][1] % (int64_t)sizeof(float))
    return false;
  kd_sum2d_job j = {(double *)it->data[0], (const float *)it->data[1], it->strides[1][1] / (int64_t)sizeof(float),
                    it->shape[0]};
  int64_t grain = (KD_PARALLEL_GRAIN + j.n - 1) / j.n;
  if (it->flags & KD_ITER_SERIAL) grain = it->shape[1];
  kd_parallel_for(0, it->shape[1], grain, kd_rows_body, &j);
  return true;
}

/* A float32 sum whose iteration is [rows (reduced), cols (kept, contiguous)]: sum(0) of a
 * matrix, mean(-2), ...: done by kd_sum_cols_f32, in parallel over columns. False when the
 * iteration has another shape. */
static bool kd_red_sum_cols_f32(const kd_iter *it) {
  if (it->ndim != 2 || it->shape[0] < 16 || it->strides[0][0] != (int64_t)sizeof(double) ||
      it->strides[1][0] != (int64_t)sizeof(float) || it->strides[0][1] != 0 || it->strides[1][1] % (int64_t)sizeof(float))
    return false;
  kd_sum2d_job j = {(double *)it->data[0], (const float *)it->data[1], it->strides[1][1] / (int64_t)sizeof(float),
                    it->shape[1]};
  int64_t grain = (KD_PARALLEL_GRAIN + j.n - 1) / j.n;
  grain = grain < 16 ? 16 : (grain + 15) / 16 * 16;
  if (it->flags & KD_ITER_SERIAL) grain = it->shape[0];
  kd_parallel_for(0, it->shape[0], grain, kd_cols_body, &j);
  return true;
}

/* ctx->kind selects the body; floats accumulate in double, ints/bool in int64. */
#define KD_DEF_RED(SFX, DT, T, CT, LD, ST, MS, K, UT)                                         \
  static void kd_red_loop_##SFX(void *ctx_, char **data, const int64_t *strides, int64_t n) { \
    const kd_red_ctx *ctx = (const kd_red_ctx *)ctx_;                                         \
    const bool fl = K##_IS_FLOAT;                                                             \
    if (DT == KD_DTYPE_F32 && ctx->kind == KD_RK_SUM && strides[0] == 0 &&                     \
        strides[1] == (int64_t)sizeof(float)) {                                               \
      *(double *)data[0] += kd_sum_f32_run((const float *)data[1], n);                        \
      return;                                                                                 \
    }                                                                                         \
    switch (ctx->kind) {                                                                      \
      case KD_RK_ALL: KD_RED_RUN(T, CT, LD, uint64_t, 1, a & (uint64_t)(x != 0), a & b); return;                   \
      case KD_RK_ANY: KD_RED_RUN(T, CT, LD, uint64_t, 0, a | (uint64_t)(x != 0), a | b); return;                   \
      case KD_RK_COUNT_NZ: KD_RED_RUN(T, CT, LD, uint64_t, 0, a + (uint64_t)(x != 0), a + b); return;              \
      default: break;                                                                         \
    }                                                                                         \
    if (!fl) {                                                                                \
      switch (ctx->kind) {                                                                    \
        case KD_RK_SUM: case KD_RK_NANSUM: KD_RED_RUN(T, CT, LD, uint64_t, 0, a + (uint64_t)(int64_t)x, a + b); return; \
        case KD_RK_PROD: KD_RED_RUN(T, CT, LD, uint64_t, 1, a * (uint64_t)(int64_t)x, a * b); return;       \
        case KD_RK_MAX: KD_RED_RUN(T, CT, LD, int64_t, INT64_MIN, (int64_t)x > a ? (int64_t)x : a, b > a ? b : a); return; \
        case KD_RK_MIN: KD_RED_RUN(T, CT, LD, int64_t, INT64_MAX, (int64_t)x < a ? (int64_t)x : a, b < a ? b : a); return; \
        default: return;                                                                      \
      }                                                                                       \
    }                                                                                         \
    switch (ctx->kind) {                                                                      \
      case KD_RK_SUM: KD_RED_RUN(T, CT, LD, double, 0, a + (double)x, a + b); return;                   \
      case KD_RK_NANSUM: KD_RED_RUN(T, CT, LD, double, 0, a + (x != x ? 0.0 : (double)x), a + b); return; \
      case KD_RK_PROD: KD_RED_RUN(T, CT, LD, double, 1, a * (double)x, a * b); return;                  \
      case KD_RK_MAX: KD_RED_RUN(T, CT, LD, double, -INFINITY, KD_RMAX(a, (double)x), KD_RMAX(a, b)); return; \
      case KD_RK_MIN: KD_RED_RUN(T, CT, LD, double, INFINITY, KD_RMIN(a, (double)x), KD_RMIN(a, b)); return; \
      case KD_RK_NOTNAN: KD_RED_RUN(T, CT, LD, double, 0, a + (double)(x == x), a + b); return;          \
      case KD_RK_ABS_SUM: KD_RED_RUN(T, CT, LD, double, 0, a + fabs((double)x), a + b); return;          \
      case KD_RK_SQ_SUM: KD_RED_RUN(T, CT, LD, double, 0, a + (double)x * (double)x, a + b); return;     \
      case KD_RK_ABS_MAX: KD_RED_RUN(T, CT, LD, double, 0, KD_RMAX(a, fabs((double)x)), KD_RMAX(a, b)); return; \
      case KD_RK_ABS_MIN: KD_RED_RUN(T, CT, LD, double, INFINITY, KD_RMIN(a, fabs((double)x)), KD_RMIN(a, b)); return; \
      case KD_RK_POW_SUM: { const double p = ctx->p;                                          \
        KD_RED_RUN(T, CT, LD, double, 0, a + pow(fabs((double)x), p), a + b); return; }                  \
      case KD_RK_NZ_PROD: KD_RED_RUN(T, CT, LD, double, 1, a * (x == 0 ? 1.0 : (double)x), a * b); return; \
      case KD_RK_ZERO_COUNT: KD_RED_RUN(T, CT, LD, double, 0, a + (double)(x == 0), a + b); return;      \
      default: return;                                                                        \
    }                                                                                         \
  }
#define F_IS_FLOAT true
#define I_IS_FLOAT false
#define B_IS_FLOAT false
KD_ROWS_ALL(KD_DEF_RED)
#define KD_RED_ENTRY(SFX, DT, ...) KD_LOOP_ENTRY(kd_red_loop_, SFX, DT)
static const kd_iter_loop_fn kd_red_loops[KD_DTYPE_COUNT] = {KD_ROWS_ALL(KD_RED_ENTRY)};

/* Centered passes (floating inputs only): operands acc (double), center (double, laid out
 * like acc), input. */
#define KD_CRED_RUN(T, LD, EXPR)                                                                     \
  do {                                                                                        \
    char *po = data[0], *pc = data[1], *pi = data[2];                                         \
    const int64_t so = strides[0], sc = strides[1], si = strides[2];                          \
    if (so == 0) {                                                                            \
      const double c = *(const double *)pc;                                                   \
      double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};                                                 \
      int64_t i = 0;                                                                          \
      if (si == (int64_t)sizeof(T)) {                                                         \
        const T *xs = (const T *)pi;                                                          \
        for (; i + 8 <= n; i += 8)                                                            \
          for (int k = 0; k < 8; k++) { double d = (double)LD(xs[i + k]) - c; s[k] += (EXPR); } \
      }                                                                                       \
      for (; i < n; i++) { double d = (double)LD(*(const T *)(pi + i * si)) - c; s[0] += (EXPR); } \
      *(double *)po += ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));    \
    } else if (so == 8 && sc == 8 && si == (int64_t)sizeof(T)) {                              \
      double *o = (double *)po;                                                               \
      const double *cs = (const double *)pc;                                                  \
      const T *xs = (const T *)pi;                                                            \
      for (int64_t i = 0; i < n; i++) { double d = (double)LD(xs[i]) - cs[i]; o[i] += (EXPR); } \
    } else {                                                                                  \
      for (int64_t i = 0; i < n; i++) {                                                       \
        double d = (double)LD(*(const T *)(pi + i * si)) - *(const double *)(pc + i * sc);    \
        *(double *)(po + i * so) += (EXPR);                                                   \
      }                                                                                       \
    }                                                                                         \
  } while (0)
#define KD_DEF_CRED(SFX, DT, T, CT, LD, ST, MS, K, UT)                                        \
  static void kd_cred_loop_##SFX(void *ctx_, char **data, const int64_t *strides, int64_t n) { \
    if (((const kd_red_ctx *)ctx_)->kind == KD_RK_CSQ) KD_CRED_RUN(T, LD, d * d);                     \
    else KD_CRED_RUN(T, LD, exp(d));                                                                 \
  }
KD_ROWS_FLOAT(KD_DEF_CRED)
#define KD_CRED_ENTRY(SFX, DT, ...) KD_LOOP_ENTRY(kd_cred_loop_, SFX, DT)
static const kd_iter_loop_fn kd_cred_loops[KD_DTYPE_COUNT] = {KD_ROWS_FLOAT(KD_CRED_ENTRY)};

static double kd_rk_ident_d(int kind) {
  switch (kind) {
    case KD_RK_PROD: case KD_RK_NZ_PROD: case KD_RK_ALL: return 1;
    case KD_RK_MAX: return -INFINITY;
    case KD_RK_MIN: case KD_RK_ABS_MIN: return INFINITY;
    default: return 0;
  }
}
static int64_t kd_rk_ident_i(int kind) {
  switch (kind) {
    case KD_RK_PROD: case KD_RK_ALL: return 1;
    case KD_RK_MAX: return INT64_MIN;
    case KD_RK_MIN: return INT64_MAX;
    default: return 0;
  }
}
static void kd_rk_fill(int kind, bool iacc, void *p, int64_t n) {
  if (iacc) {
    int64_t v = kd_rk_ident_i(kind), *a = (int64_t *)p;
    for (int64_t i = 0; i < n; i++) a[i] = v;
  } else {
    double v = kd_rk_ident_d(kind), *a = (double *)p;
    for (int64_t i = 0; i < n; i++) a[i] = v;
  }
}
/* dst[i] = combine(dst[i], src[i]) */
static void kd_rk_combine(int kind, bool iacc, void *dst, const void *src, int64_t n) {
  if (iacc) {
    int64_t *a = (int64_t *)dst;
    const int64_t *b = (const int64_t *)src;
    for (int64_t i = 0; i < n; i++) {
      switch (kind) {
        case KD_RK_PROD: a[i] = KD_IMUL(a[i], b[i]); break;
        case KD_RK_MAX: a[i] = b[i] > a[i] ? b[i] : a[i]; break;
        case KD_RK_MIN: a[i] = b[i] < a[i] ? b[i] : a[i]; break;
        case KD_RK_ALL: a[i] &= b[i]; break;
        case KD_RK_ANY: a[i] |= b[i]; break;
        default: a[i] = KD_IADD(a[i], b[i]); break;
      }
    }
  } else {
    double *a = (double *)dst;
    const double *b = (const double *)src;
    for (int64_t i = 0; i < n; i++) {
      switch (kind) {
        case KD_RK_PROD: case KD_RK_NZ_PROD: a[i] *= b[i]; break;
        case KD_RK_MAX: case KD_RK_ABS_MAX: a[i] = KD_RMAX(a[i], b[i]); break;
        case KD_RK_MIN: case KD_RK_ABS_MIN: a[i] = KD_RMIN(a[i], b[i]); break;
        default: a[i] += b[i]; break;
      }
    }
  }
}

/* ---- one accumulate pass with the reduced-range split ---- */
typedef struct kd_chunk_job {
  const kd_iter *it;
  kd_iter_loop_fn loop;
  const kd_red_ctx *ctx;
  int dim;
  int64_t chunk;     /* length of a chunk along dim */
  char *partials;    /* one accumulator (acc_numel elements of 8 bytes) per chunk */
  int64_t acc_numel;
  bool iacc;
} kd_chunk_job;

static void kd_chunk_body(void *p, int64_t begin, int64_t end) {
  kd_chunk_job *j = (kd_chunk_job *)p;
  for (int64_t c = begin; c < end; c++) {
    int64_t b = c * j->chunk, e = b + j->chunk < j->it->shape[j->dim] ? b + j->chunk : j->it->shape[j->dim];
    kd_iter sub;
    kd_red_sub_iter(j->it, j->dim, b, e, &sub);
    sub.data[0] = j->partials + c * j->acc_numel * 8;
    kd_rk_fill(j->ctx->kind, j->iacc, sub.data[0], j->acc_numel);
    kd_iter_for_each(&sub, j->loop, (void *)j->ctx);
  }
}

/* Accumulates `in` over its reduced dims into acc (acc_numel elements, int64 when iacc else
 * double, initialised here), with an optional center (double, like acc). */
static kd_status kd_red_pass(kd_tensor *in, const int64_t *acc_strides, void *acc, int64_t acc_numel, bool iacc,
                             const double *center, kd_red_ctx *ctx) {
  kd_rk_fill(ctx->kind, iacc, acc, acc_numel);
  kd_iter_operand ops[3];
  int nops = 0;
  ops[nops] = kd_iter_operand_of(in);
  ops[nops].data = (char *)acc;
  ops[nops].dtype = iacc ? KD_DTYPE_I64 : KD_DTYPE_F64;
  ops[nops].strides = acc_strides;
  nops++;
  if (center) {
    ops[nops] = ops[0];
    ops[nops].data = (char *)center;
    ops[nops].dtype = KD_DTYPE_F64;
    nops++;
  }
  ops[nops++] = kd_iter_operand_of(in);
  kd_iter it;
  KD_TRY(kd_iter_build(&it, ops, nops, 1, 0));
  if (!center && ctx->kind == KD_RK_SUM && in->dtype == KD_DTYPE_F32 &&
      (kd_red_sum_cols_f32(&it) || kd_red_sum_rows_f32(&it)))
    return KD_OK;
  kd_iter_loop_fn loop = center ? kd_cred_loops[in->dtype] : kd_red_loops[in->dtype];
  if (!loop) return kd_error(KD_ERR_INTERNAL, "reduction: no loop for %s", kd_cpu_torch_name(in->dtype));
  if (kd_red_run_owned(&it, loop, ctx, 1)) return KD_OK;
  /* split the outermost reduced dim into fixed chunks with partial accumulators */
  int r = -1;
  for (int d = it.ndim - 1; d >= 0 && r < 0; d--)
    if (it.strides[0][d] == 0 && it.shape[d] > 1) r = d;
  int64_t inner = r >= 0 ? it.numel / it.shape[r] : 0;
  int64_t chunk = r >= 0 ? (KD_PARALLEL_GRAIN + inner - 1) / inner : 0;
  if (r >= 0 && (it.shape[r] + chunk - 1) / chunk > 256) chunk = (it.shape[r] + 255) / 256;
  int64_t nch = r >= 0 ? (it.shape[r] + chunk - 1) / chunk : 0;
  if (r < 0 || nch < 2 || nch * acc_numel > ((int64_t)1 << 23)) {
    it.flags |= KD_ITER_SERIAL;
    kd_iter_for_each(&it, loop, ctx);
    return KD_OK;
  }
  char *partials = (char *)malloc((size_t)(nch * acc_numel * 8));
  if (!partials) return kd_error(KD_ERR_OOM, "out of host memory in a reduction");
  kd_chunk_job j = {&it, loop, ctx, r, chunk, partials, acc_numel, iacc};
  kd_parallel_for(0, nch, 1, kd_chunk_body, &j);
  for (int64_t c = 0; c < nch; c++) kd_rk_combine(ctx->kind, iacc, acc, partials + c * acc_numel * 8, acc_numel);
  free(partials);
  return KD_OK;
}

/* ---- the value reductions ---- */
typedef struct kd_red_setup {
  bool reduced[KD_MAX_DIMS];
  int64_t osizes[KD_MAX_DIMS], ostrides[KD_MAX_DIMS], count, onumel;
  int ond;
} kd_red_setup;

static kd_status kd_red_prepare(const kd_tensor *self, const kd_value *dim, bool keepdim, kd_red_setup *s) {
  KD_TRY(kd_red_parse_dims(self, dim, s->reduced));
  kd_red_geometry(self, s->reduced, keepdim, s->osizes, &s->ond, s->ostrides, &s->count);
  s->onumel = 1;
  for (int d = 0; d < s->ond; d++) s->onumel *= s->osizes[d];
  return KD_OK;
}

/* A new double (or int64) accumulator tensor with the output's sizes. */
static kd_status kd_red_acc(const kd_red_setup *s, bool iacc, kd_tensor **acc) {
  return kd_tensor_empty(s->osizes, s->ond, iacc ? KD_DTYPE_I64 : KD_DTYPE_F64, kd_device_cpu(), acc);
}

static kd_status kd_red_simple_pass(kd_tensor *in, const kd_red_setup *s, int kind, double p, const double *center,
                                    kd_tensor **acc) {
  bool iacc = kd_rk_int_acc(kind, in->dtype) && !center;
  KD_TRY(kd_red_acc(s, iacc, acc));
  kd_red_ctx ctx = {kind, p};
  kd_status st = kd_red_pass(in, s->ostrides, kd_tensor_data(*acc), s->onumel, iacc, center, &ctx);
  if (st != KD_OK) {
    kd_tensor_release(*acc);
    *acc = NULL;
  }
  return st;
}

static const char *kd_red_name(int code) {
  switch (code) {
    case KD_REDUCE_SUM: return "sum";
    case KD_REDUCE_NANSUM: return "nansum";
    case KD_REDUCE_MEAN: return "mean";
    case KD_REDUCE_NANMEAN: return "nanmean";
    case KD_REDUCE_PROD: return "prod";
    case KD_REDUCE_MAX: return "max";
    case KD_REDUCE_MIN: return "min";
    case KD_REDUCE_AMAX: return "amax";
    case KD_REDUCE_AMIN: return "amin";
    case KD_REDUCE_VAR: case KD_REDUCE_VAR_MEAN: return "var";
    case KD_REDUCE_STD: case KD_REDUCE_STD_MEAN: return "std";
    case KD_REDUCE_NORM: return "norm";
    case KD_REDUCE_LOGSUMEXP: return "logsumexp";
    case KD_REDUCE_ALL: return "all";
    case KD_REDUCE_ANY: return "any";
    default: return "count_nonzero";
  }
}

/* Parsed arguments of every value reduction. */
typedef struct kd_red_args {
  kd_tensor *self;
  const kd_value *dim; /* none: every dim */
  bool keepdim;
  kd_value dtype;      /* KD_VALUE_NONE or a dtype */
  double p;            /* norm */
  double correction;   /* var/std */
} kd_red_args;

static kd_status kd_red_read_args(const kd_op_info *op, kd_value *args, kd_red_args *a) {
  static const kd_value none = {KD_VALUE_NONE, {0}};
  a->self = args[0].v.t;
  a->dim = &none;
  a->keepdim = false;
  a->dtype = none;
  a->p = 2;
  a->correction = 1;
  int n = op->nargs;
  switch (op->code) {
    case KD_REDUCE_MAX: case KD_REDUCE_MIN: return KD_OK;
    case KD_REDUCE_COUNT_NONZERO: a->dim = &args[1]; return KD_OK;
    case KD_REDUCE_VAR: case KD_REDUCE_STD: case KD_REDUCE_VAR_MEAN: case KD_REDUCE_STD_MEAN:
      if (n == 2) { /* var(self, unbiased) */
        a->correction = args[1].v.b ? 1 : 0;
        return KD_OK;
      }
      a->dim = &args[1];
      a->keepdim = args[3].kind == KD_VALUE_BOOL && args[3].v.b;
      if (args[2].kind == KD_VALUE_BOOL && args[4].kind == KD_VALUE_DOUBLE)
        return kd_error(KD_ERR_INVALID_ARGUMENT, "Cannot specify both unbiased and correction");
      if (args[2].kind == KD_VALUE_BOOL) a->correction = args[2].v.b ? 1 : 0;
      if (args[4].kind == KD_VALUE_DOUBLE) a->correction = args[4].v.d;
      return KD_OK;
    case KD_REDUCE_NORM:
      if (args[1].kind == KD_VALUE_DOUBLE) a->p = args[1].v.d; /* torch.norm's 'fro'/'nuc': kd_composite_norm_str */
      a->dim = &args[2];
      a->keepdim = args[3].kind == KD_VALUE_BOOL && args[3].v.b;
      a->dtype = args[4];
      return KD_OK;
    default: /* (self, dim, keepdim[, dtype]) */
      a->dim = &args[1];
      a->keepdim = n > 2 && args[2].kind == KD_VALUE_BOOL && args[2].v.b;
      if (n > 3) a->dtype = args[3];
      return KD_OK;
  }
}

/* Writes `res` (double or int64, the output's sizes) into a new tensor of dtype odt. */
static kd_status kd_red_finish(kd_tensor *res, kd_dtype odt, kd_tensor **out) {
  if (res->dtype == odt) {
    kd_tensor_retain(res);
    *out = res;
    return KD_OK;
  }
  KD_TRY(kd_tensor_empty(res->sizes, res->ndim, odt, kd_device_cpu(), out));
  kd_status st = kd_cpu_copy_into(*out, res);
  if (st != KD_OK) kd_tensor_release(*out);
  return st;
}

/* A value reduction of a device tensor: the outputs on its device, the device hook computes. */
static kd_status kd_red_device_values(int code, kd_tensor *in, const kd_red_setup *s, const kd_red_args *a, kd_dtype odt,
                                      kd_tensor **out, kd_tensor **out2) {
  *out = *out2 = NULL;
  if (!kd_cpu_device_reduce) return kd_error(KD_ERR_NOT_SUPPORTED, "no reduction kernels are registered for this device");
  kd_dev_reduce r;
  memset(&r, 0, sizeof r);
  r.code = code;
  r.in = in;
  memcpy(r.reduced, s->reduced, sizeof r.reduced);
  r.p = a->p;
  r.correction = a->correction;
  kd_status st = kd_tensor_empty(s->osizes, s->ond, odt, kd_tensor_device(in), out);
  if (st == KD_OK && (code == KD_REDUCE_VAR_MEAN || code == KD_REDUCE_STD_MEAN))
    st = kd_tensor_empty(s->osizes, s->ond, odt, kd_tensor_device(in), out2);
  r.out = *out;
  r.out2 = *out2;
  if (st == KD_OK) st = kd_cpu_device_reduce(&r);
  if (st != KD_OK) {
    if (*out) kd_tensor_release(*out);
    if (*out2) kd_tensor_release(*out2);
    *out = *out2 = NULL;
  }
  return st;
}

static kd_status kd_red_values(const kd_op_info *op, kd_value *args, kd_value *outs) {
  kd_red_args a;
  KD_TRY(kd_red_read_args(op, args, &a));
  kd_tensor *self = a.self;
  int code = op->code;
  const char *name = kd_red_name(code);
  bool fl = kd_dtype_is_float(self->dtype);
  bool has_dt = a.dtype.kind == KD_VALUE_DTYPE;
  kd_dtype odt = self->dtype; /* output dtype */
  kd_dtype cdt = self->dtype; /* the dtype the input is converted to first */
  int kind = KD_RK_SUM;
  switch (code) {
    case KD_REDUCE_SUM: case KD_REDUCE_NANSUM: case KD_REDUCE_PROD:
      odt = has_dt ? a.dtype.v.dtype : fl ? self->dtype : KD_DTYPE_I64;
      /* PyTorch casts to `dtype` first when the kind changes (int -> float, ... -> bool) */
      cdt = (kd_dtype_is_float(odt) == fl && (odt != KD_DTYPE_BOOL || self->dtype == KD_DTYPE_BOOL)) ? self->dtype : odt;
      kind = code == KD_REDUCE_PROD ? KD_RK_PROD : code == KD_REDUCE_NANSUM ? KD_RK_NANSUM : KD_RK_SUM;
      break;
    case KD_REDUCE_MEAN: case KD_REDUCE_NANMEAN:
      if (code == KD_REDUCE_NANMEAN && !fl)
        return kd_error(KD_ERR_INVALID_ARGUMENT, "nanmean(): expected input to have floating point dtype but got %s",
                        kd_cpu_torch_name(self->dtype));
      odt = has_dt ? a.dtype.v.dtype : self->dtype;
      if (!kd_dtype_is_float(odt))
        return kd_error(KD_ERR_DTYPE, "mean(): could not infer output dtype. %s dtype must be either a floating point "
                        "or complex dtype. Got: %s", has_dt ? "Optional" : "Input", kd_cpu_torch_name(odt));
      cdt = fl ? self->dtype : odt;
      kind = code == KD_REDUCE_NANMEAN ? KD_RK_NANSUM : KD_RK_SUM;
      break;
    case KD_REDUCE_MAX: case KD_REDUCE_MIN: case KD_REDUCE_AMAX: case KD_REDUCE_AMIN: {
      bool mx = code == KD_REDUCE_MAX || code == KD_REDUCE_AMAX;
      kind = mx ? KD_RK_MAX : KD_RK_MIN;
      if (kd_tensor_numel(self) == 0 && (a.dim->kind == KD_VALUE_NONE ||
                                         (a.dim->kind == KD_VALUE_INTLIST && a.dim->v.ilist.n == 0)))
        return kd_error(KD_ERR_INVALID_ARGUMENT, "%s(): Expected reduction dim to be specified for input.numel() == 0. "
                        "Specify the reduction dim with the 'dim' argument.", name);
      break;
    }
    case KD_REDUCE_VAR: case KD_REDUCE_STD: case KD_REDUCE_VAR_MEAN: case KD_REDUCE_STD_MEAN:
      if (!fl) return kd_error(KD_ERR_INVALID_ARGUMENT, "std and var only support floating point and complex dtypes");
      break;
    case KD_REDUCE_NORM:
      if (!fl)
        return kd_error(KD_ERR_INVALID_ARGUMENT, "norm(): input dtype should be either floating point or complex. Got %s instead.",
                        kd_cpu_torch_name(self->dtype));
      if (has_dt) {
        if (!kd_dtype_is_float(a.dtype.v.dtype))
          return kd_error(KD_ERR_INVALID_ARGUMENT, "norm(): the desired output dtype should be either floating point or complex. "
                          "Got %s instead.", kd_cpu_torch_name(a.dtype.v.dtype));
        odt = cdt = a.dtype.v.dtype;
      }
      break;
    case KD_REDUCE_LOGSUMEXP:
      if (!fl) odt = cdt = KD_DTYPE_F32; /* integers promote to the default float dtype */
      break;
    case KD_REDUCE_ALL: case KD_REDUCE_ANY:
      odt = self->dtype == KD_DTYPE_U8 ? KD_DTYPE_U8 : KD_DTYPE_BOOL;
      kind = code == KD_REDUCE_ALL ? KD_RK_ALL : KD_RK_ANY;
      break;
    case KD_REDUCE_COUNT_NONZERO:
      odt = KD_DTYPE_I64;
      kind = KD_RK_COUNT_NZ;
      break;
    default: return kd_error(KD_ERR_INTERNAL, "kd_cpu_reduce: unknown op '%s'", op->name);
  }
  kd_red_setup s;
  KD_TRY(kd_red_prepare(self, a.dim, a.keepdim, &s));
  if (code == KD_REDUCE_AMAX || code == KD_REDUCE_AMIN) {
    for (int d = 0; d < self->ndim; d++)
      if (s.reduced[d] && self->sizes[d] == 0)
        return kd_error(KD_ERR_INDEX, "%s(): Expected reduction dim %d to have non-zero size.", name, d);
  }
  kd_tensor *in = NULL, *acc = NULL, *acc2 = NULL, *res = NULL, *out = NULL, *out2 = NULL;
  kd_status st = kd_cpu_cast(self, cdt, false, &in);
  if (st != KD_OK) return st;
  if (kd_tensor_device(self).type != KD_DEVICE_CPU) {
    st = kd_red_device_values(code, in, &s, &a, odt, &out, &out2);
    kd_tensor_release(in);
    if (st != KD_OK) return st;
    kd_out_take(outs, 0, out);
    if (out2) kd_out_take(outs, 1, out2);
    return KD_OK;
  }
  double cnt = (double)s.count;
  switch (code) {
    case KD_REDUCE_VAR: case KD_REDUCE_STD: case KD_REDUCE_VAR_MEAN: case KD_REDUCE_STD_MEAN: {
      st = kd_red_simple_pass(in, &s, KD_RK_SUM, 0, NULL, &acc); /* acc: the mean */
      if (st != KD_OK) break;
      double *m = (double *)kd_tensor_data(acc);
      for (int64_t i = 0; i < s.onumel; i++) m[i] /= cnt;
      st = kd_red_simple_pass(in, &s, KD_RK_CSQ, 0, m, &acc2);
      if (st != KD_OK) break;
      double div = cnt - a.correction > 0 ? cnt - a.correction : 0, *v = (double *)kd_tensor_data(acc2);
      bool sq = code == KD_REDUCE_STD || code == KD_REDUCE_STD_MEAN;
      for (int64_t i = 0; i < s.onumel; i++) v[i] = sq ? sqrt(v[i] / div) : v[i] / div;
      st = kd_red_finish(acc2, odt, &out);
      if (st == KD_OK && (code == KD_REDUCE_VAR_MEAN || code == KD_REDUCE_STD_MEAN)) st = kd_red_finish(acc, odt, &out2);
      break;
    }
    case KD_REDUCE_LOGSUMEXP: {
      st = kd_red_simple_pass(in, &s, KD_RK_MAX, 0, NULL, &acc);
      if (st != KD_OK) break;
      double *m = (double *)kd_tensor_data(acc);
      for (int64_t i = 0; i < s.onumel; i++) if (isinf(m[i])) m[i] = 0;
      st = kd_red_simple_pass(in, &s, KD_RK_CEXP, 0, m, &acc2);
      if (st != KD_OK) break;
      double *v = (double *)kd_tensor_data(acc2);
      for (int64_t i = 0; i < s.onumel; i++) v[i] = log(v[i]) + m[i];
      st = kd_red_finish(acc2, odt, &out);
      break;
    }
    case KD_REDUCE_NORM: {
      double p = a.p;
      int k = p == 0 ? KD_RK_COUNT_NZ : p == 1 ? KD_RK_ABS_SUM : p == 2 ? KD_RK_SQ_SUM : isinf(p) ? (p > 0 ? KD_RK_ABS_MAX : KD_RK_ABS_MIN)
            : KD_RK_POW_SUM;
      st = kd_red_simple_pass(in, &s, k, p, NULL, &acc);
      if (st != KD_OK) break;
      if (k == KD_RK_COUNT_NZ) {
        st = kd_red_finish(acc, odt, &out);
        break;
      }
      double *v = (double *)kd_tensor_data(acc);
      for (int64_t i = 0; i < s.onumel; i++) {
        if (s.count == 0) v[i] = 0;
        else if (k == KD_RK_SQ_SUM) v[i] = sqrt(v[i]);
        else if (k == KD_RK_POW_SUM) v[i] = pow(v[i], 1.0 / p);
      }
      st = kd_red_finish(acc, odt, &out);
      break;
    }
    default: {
      st = kd_red_simple_pass(in, &s, kind, 0, NULL, &acc);
      if (st != KD_OK) break;
      if (code == KD_REDUCE_MEAN) {
        double *v = (double *)kd_tensor_data(acc); /* 0 / 0: NaN for empty */
        for (int64_t i = 0; i < s.onumel; i++) v[i] /= cnt;
      } else if (code == KD_REDUCE_NANMEAN) {
        st = kd_red_simple_pass(in, &s, KD_RK_NOTNAN, 0, NULL, &acc2);
        if (st != KD_OK) break;
        double *v = (double *)kd_tensor_data(acc), *c = (double *)kd_tensor_data(acc2);
        for (int64_t i = 0; i < s.onumel; i++) v[i] /= c[i];
      }
      st = kd_red_finish(acc, odt, &out);
      break;
    }
  }
  (void)res;
  kd_tensor_release(in);
  if (acc) kd_tensor_release(acc);
  if (acc2) kd_tensor_release(acc2);
  if (st != KD_OK) {
    if (out) kd_tensor_release(out);
    return st;
  }
  kd_out_take(outs, 0, out);
  if (out2) kd_out_take(outs, 1, out2);
  return KD_OK;
}

KD_KERNEL(kd_cpu_reduce) { return kd_red_values(op, args, outs); }

/* ---- max.dim / min.dim / argmax / argmin ---- */

/* With KD_ITER_REDUCE_INNER: operands values, indices, input. A run with output strides 0 is
 * one whole reduced run (the loop index is the position); otherwise the reduced dim has size
 * 1 and every element is its own result. PyTorch's rule: the first index wins ties and the
 * first NaN wins over everything. */
#define KD_DEF_ARG(SFX, DT, T, CT, LD, ST, MS, K, UT)                                         \
  static void kd_arg_loop_##SFX(void *ctx, char **data, const int64_t *strides, int64_t n) {  \
    char *pv = data[0], *px = data[1], *pi = data[2];                                         \
    const int64_t sv = strides[0], sx = strides[1], si = strides[2];                          \
    if (sv == 0 && sx == 0) {                                                                 \
      CT best = LD(*(const T *)pi);                                                           \
      int64_t bi = 0;                                                                         \
      if (*(const int *)ctx) {                                                                \
        for (int64_t i = 0; i < n; i++) {                                                     \
          CT x = LD(*(const T *)(pi + i * si));                                               \
          if (!(x <= best)) { best = x; bi = i; if (x != x) break; }                          \
        }                                                                                     \
      } else {                                                                                \
        for (int64_t i = 0; i < n; i++) {                                                     \
          CT x = LD(*(const T *)(pi + i * si));                                               \
          if (!(x >= best)) { best = x; bi = i; if (x != x) break; }                          \
        }                                                                                     \
      }                                                                                       \
      *(T *)pv = ST(best);                                                                    \
      *(int64_t *)px = bi;                                                                    \
    } else {                                                                                  \
      for (int64_t i = 0; i < n; i++) {                                                       \
        *(T *)(pv + i * sv) = *(const T *)(pi + i * si);                                      \
        *(int64_t *)(px + i * sx) = 0;                                                        \
      }                                                                                       \
    }                                                                                         \
  }
KD_ROWS_ALL(KD_DEF_ARG)
#define KD_ARG_ENTRY(SFX, DT, ...) KD_LOOP_ENTRY(kd_arg_loop_, SFX, DT)
static const kd_iter_loop_fn kd_arg_loops[KD_DTYPE_COUNT] = {KD_ROWS_ALL(KD_ARG_ENTRY)};

/* The vertical path: input [outer, R, inner] contiguous, outputs [outer, inner] contiguous. */
typedef struct kd_argv_job {
  const char *x;
  char *v;
  int64_t *ix;
  int64_t R, inner, nblk;
  int is_max;
} kd_argv_job;
#define KD_ARGV_BLOCK 512
#define KD_DEF_ARGV(SFX, DT, T, CT, LD, ST, MS, K, UT)                                        \
  static void kd_argv_body_##SFX(void *p, int64_t begin, int64_t end) {                       \
    const kd_argv_job *j = (const kd_argv_job *)p;                                            \
    for (int64_t t = begin; t < end; t++) {                                                   \
      int64_t o = t / j->nblk, c0 = t % j->nblk * KD_ARGV_BLOCK;                              \
      int64_t w = j->inner - c0 < KD_ARGV_BLOCK ? j->inner - c0 : KD_ARGV_BLOCK;              \
      const T *x = (const T *)j->x + o * j->R * j->inner + c0;                                \
      T *v = (T *)j->v + o * j->inner + c0;                                                   \
      int64_t *ix = j->ix + o * j->inner + c0;                                                \
      for (int64_t c = 0; c < w; c++) { v[c] = x[c]; ix[c] = 0; }                             \
      for (int64_t r = 1; r < j->R; r++) {                                                    \
        const T *xr = x + r * j->inner;                                                       \
        if (j->is_max) {                                                                      \
          for (int64_t c = 0; c < w; c++) {                                                   \
            CT b = LD(v[c]), y = LD(xr[c]);                                                   \
            bool u = b == b && !(y <= b); /* the first NaN wins and stays */                  \
            v[c] = u ? xr[c] : v[c];                                                          \
            ix[c] = u ? r : ix[c];                                                            \
          }                                                                                   \
        } else {                                                                              \
          for (int64_t c = 0; c < w; c++) {                                                   \
            CT b = LD(v[c]), y = LD(xr[c]);                                                   \
            bool u = b == b && !(y >= b);                                                     \
            v[c] = u ? xr[c] : v[c];                                                          \
            ix[c] = u ? r : ix[c];                                                            \
          }                                                                                   \
        }                                                                                     \
      }                                                                                       \
    }                                                                                         \
  }
KD_ROWS_ALL(KD_DEF_ARGV)
#define KD_ARGV_ENTRY(SFX, DT, ...) [DT] = kd_argv_body_##SFX,
static const kd_parallel_fn kd_argv_bodies[KD_DTYPE_COUNT] = {KD_ROWS_ALL(KD_ARGV_ENTRY)};

/* True (and done) when `in` is a contiguous CPU tensor reduced over a dim with inner elements
 * after it (a device tensor's memory is not the host's: it goes to the device hook). */
static bool kd_arg_vertical(const kd_tensor *in, int dim, kd_tensor *values, kd_tensor *indices, int is_max) {
  if (kd_tensor_device(in).type != KD_DEVICE_CPU) return false;
  if (in->ndim == 0 || !kd_tensor_is_contiguous(in) || !kd_tensor_is_contiguous(values) ||
      !kd_tensor_is_contiguous(indices))
    return false;
  int64_t outer = 1, inner = 1, R = in->sizes[dim];
  for (int d = 0; d < dim; d++) outer *= in->sizes[d];
  for (int d = dim + 1; d < in->ndim; d++) inner *= in->sizes[d];
  if (inner < 16 || R < 2) return false;
  kd_argv_job j = {kd_tensor_data(in), kd_tensor_data(values), (int64_t *)kd_tensor_data(indices), R, inner,
                   (inner + KD_ARGV_BLOCK - 1) / KD_ARGV_BLOCK, is_max};
  int64_t per = R * (inner < KD_ARGV_BLOCK ? inner : KD_ARGV_BLOCK);
  kd_parallel_for(0, outer * j.nblk, (KD_PARALLEL_GRAIN + per - 1) / per, kd_argv_bodies[in->dtype], &j);
  return true;
}

KD_KERNEL(kd_cpu_arg_reduce) {
  kd_tensor *self = args[0].v.t;
  bool argx = op->code == KD_REDUCE_ARGMAX || op->code == KD_REDUCE_ARGMIN;
  int is_max = op->code == KD_REDUCE_MAX || op->code == KD_REDUCE_ARGMAX;
  const char *name = op->code == KD_REDUCE_ARGMAX ? "argmax" : op->code == KD_REDUCE_ARGMIN ? "argmin" : is_max ? "max" : "min";
  bool keepdim = args[2].kind == KD_VALUE_BOOL && args[2].v.b;

  kd_tensor *in = NULL; /* the tensor reduced: self, or self flattened for argmax without dim */
  int dim;
  int64_t osizes[KD_MAX_DIMS];
  int ond;
  if (argx && args[1].kind == KD_VALUE_NONE) {
    int64_t numel = kd_tensor_numel(self);
    if (numel == 0)
      return kd_error(KD_ERR_INDEX, "%s(): Expected reduction dim to be specified for input.numel() == 0.", name);
    kd_tensor *c;
    KD_TRY(kd_cpu_cast(self, self->dtype, true, &c));
    int64_t one = 1;
    kd_status st = kd_tensor_new_view(c, &numel, &one, 1, c->offset, &in);
    kd_tensor_release(c);
    KD_TRY(st);
    dim = 0;
    ond = keepdim ? self->ndim : 0;
    for (int d = 0; d < ond; d++) osizes[d] = 1;
  } else {
    int64_t dv = args[1].kind == KD_VALUE_INT ? args[1].v.i : 0;
    if (args[1].kind != KD_VALUE_INT) return kd_error(KD_ERR_TYPE, "%s(): argument 'dim' must be an integer", name);
    KD_TRY(kd_shape_wrap_dim(dv, self->ndim, &dim));
    if (self->ndim > 0 && self->sizes[dim] == 0)
      return kd_error(KD_ERR_INDEX, "%s(): Expected reduction dim %d to have non-zero size.", name, dim);
    in = self;
    kd_tensor_retain(in);
    ond = 0;
    for (int d = 0; d < self->ndim; d++)
      if (d != dim || keepdim) osizes[ond++] = d == dim ? 1 : self->sizes[d];
  }
  /* PyTorch has no bool argmax kernel; it skips it for an empty result or a size-1 dim */
  bool flat = args[1].kind == KD_VALUE_NONE;
  if (argx && self->dtype == KD_DTYPE_BOOL && kd_tensor_numel(in) > 0 && (flat || self->ndim == 0 || in->sizes[dim] > 1)) {
    kd_tensor_release(in);
    return kd_error(KD_ERR_DTYPE, "\"%s_cpu\" not implemented for 'Bool'", name);
  }
  bool reduced[KD_MAX_DIMS] = {false};
  if (in->ndim) reduced[dim] = true;
  int64_t dummy_sizes[KD_MAX_DIMS], ostrides[KD_MAX_DIMS], count;
  int dummy_nd;
  kd_red_geometry(in, reduced, true, dummy_sizes, &dummy_nd, ostrides, &count);

  kd_tensor *values = NULL, *indices = NULL;
  kd_status st = kd_tensor_empty(osizes, ond, self->dtype, kd_tensor_device(self), &values);
  if (st == KD_OK) st = kd_tensor_empty(osizes, ond, KD_DTYPE_I64, kd_tensor_device(self), &indices);
  if (st == KD_OK && kd_arg_vertical(in, dim, values, indices, is_max)) {
    /* done */
  } else if (st == KD_OK) {
    kd_iter_operand ops[3] = {kd_red_operand(values, in, ostrides), kd_red_operand(indices, in, ostrides),
                              kd_iter_operand_of(in)};
    kd_iter it;
    if (kd_tensor_device(self).type != KD_DEVICE_CPU) { /* the device hook */
      kd_dev_reduce r;
      memset(&r, 0, sizeof r);
      r.code = op->code;
      r.arg = true;
      r.in = in;
      memcpy(r.reduced, reduced, sizeof r.reduced);
      r.out = values;
      r.out2 = indices;
      st = kd_cpu_device_reduce ? kd_cpu_device_reduce(&r)
                                : kd_error(KD_ERR_NOT_SUPPORTED, "no reduction kernels are registered for this device");
    } else {
      st = kd_iter_build(&it, ops, 3, 2, KD_ITER_REDUCE_INNER);
      if (st == KD_OK) kd_iter_for_each(&it, kd_arg_loops[self->dtype], &is_max);
    }
  }
  kd_tensor_release(in);
  if (st != KD_OK) {
    if (values) kd_tensor_release(values);
    if (indices) kd_tensor_release(indices);
    return st;
  }
  if (argx) {
    kd_tensor_release(values);
    kd_out_take(outs, 0, indices);
  } else {
    kd_out_take(outs, 0, values);
    kd_out_take(outs, 1, indices);
  }
  return KD_OK;
}

/* ---- prodBackward: exact with zeros ---- */

/* operands gin (T), grad, nonzero product, zero count (double, stride 0 along reduced dims),
 * self (T): grad * (no zero: prod / x; one zero: prod of the others at the zero; else 0). */
#define KD_DEF_PRODB(SFX, DT, T, CT, LD, ST, MS, K, UT)                                       \
  static void kd_prodb_loop_##SFX(void *ctx, char **data, const int64_t *strides, int64_t n) { \
    for (int64_t i = 0; i < n; i++) {                                                         \
      double g = *(const double *)(data[1] + i * strides[1]), p = *(const double *)(data[2] + i * strides[2]); \
      double z = *(const double *)(data[3] + i * strides[3]);                                 \
      double x = (double)LD(*(const T *)(data[4] + i * strides[4]));                          \
      double v = z == 0 ? g * p / x : (z == 1 && x == 0) ? g * p : 0.0;                       \
      *(T *)(data[0] + i * strides[0]) = ST((CT)v);                                           \
    }                                                                                         \
  }
KD_ROWS_FLOAT(KD_DEF_PRODB)
#define KD_PRODB_ENTRY(SFX, DT, ...) KD_LOOP_ENTRY(kd_prodb_loop_, SFX, DT)
static const kd_iter_loop_fn kd_prodb_loops[KD_DTYPE_COUNT] = {KD_ROWS_FLOAT(KD_PRODB_ENTRY)};

/* prodBackward's two reductions on a device, through the ops (so the device's reductions):
 * the product of the non-zero elements and the zero count along dim, in float64, contiguous
 * with the output's element order (keepdim or not). */
static kd_status kd_prodb_device_passes(kd_tensor *self, const kd_value *dim, kd_tensor **p, kd_tensor **z) {
  kd_tensor *zm = NULL, *nz = NULL;
  kd_value dl = dim->kind == KD_VALUE_INT ? kd_value_intlist(&dim->v.i, 1) : kd_value_none();
  kd_value pd = dim->kind == KD_VALUE_INT ? *dim : kd_value_none();
  kd_value a[2] = {kd_value_tensor(self), kd_value_scalar(kd_scalar_i(0))};
  kd_status st = kd_call1(KD_OP_eq, a, &zm);
  if (st == KD_OK) {
    kd_value b[3] = {kd_value_tensor(self), kd_value_tensor(zm), kd_value_scalar(kd_scalar_i(1))};
    st = kd_call1(KD_OP_maskedFill, b, &nz);
  }
  if (st == KD_OK) {
    kd_value c[4] = {kd_value_tensor(nz), pd, kd_value_bool(false), kd_value_dtype(KD_DTYPE_F64)};
    st = kd_call1(KD_OP_prod, c, p);
  }
  if (st == KD_OK) {
    kd_value c[4] = {kd_value_tensor(zm), dl, kd_value_bool(false), kd_value_dtype(KD_DTYPE_F64)};
    st = kd_call1(KD_OP_sum, c, z);
  }
  if (zm) kd_tensor_release(zm);
  if (nz) kd_tensor_release(nz);
  return st;
}

KD_KERNEL(kd_cpu_reduce_backward) {
  kd_tensor *grad = args[0].v.t, *self = args[1].v.t;
  bool keepdim = args[4].kind == KD_VALUE_BOOL && args[4].v.b;
  if (!kd_dtype_is_float(self->dtype))
    return kd_error(KD_ERR_DTYPE, "prodBackward(): expected a floating point input, got %s", kd_cpu_torch_name(self->dtype));
  kd_red_setup s;
  KD_TRY(kd_red_prepare(self, &args[3], keepdim, &s));
  if (kd_tensor_numel(grad) != s.onumel)
    return kd_error(KD_ERR_SHAPE, "prodBackward(): grad has %lld elements, expected %lld", (long long)kd_tensor_numel(grad),
                    (long long)s.onumel);
  kd_tensor *p = NULL, *z = NULL, *g = NULL, *out = NULL;
  bool dev = kd_tensor_device(self).type != KD_DEVICE_CPU;
  kd_status st = dev ? kd_prodb_device_passes(self, &args[3], &p, &z) : kd_red_simple_pass(self, &s, KD_RK_NZ_PROD, 0, NULL, &p);
  if (st == KD_OK && !dev) st = kd_red_simple_pass(self, &s, KD_RK_ZERO_COUNT, 0, NULL, &z);
  if (st == KD_OK) st = kd_cpu_cast(grad, KD_DTYPE_F64, true, &g);
  if (st == KD_OK) st = kd_tensor_empty(self->sizes, self->ndim, self->dtype, kd_tensor_device(self), &out);
  if (st == KD_OK) {
    kd_iter_operand ops[5] = {kd_iter_operand_of(out), kd_red_operand(g, self, s.ostrides), kd_red_operand(p, self, s.ostrides),
                              kd_red_operand(z, self, s.ostrides), kd_iter_operand_of(self)};
    kd_iter it;
    st = kd_iter_build(&it, ops, 5, 1, 0);
    if (st == KD_OK && dev && it.numel) { /* cuda/ops_shape.cu: the same element formula */
      kd_dev_op d;
      memset(&d, 0, sizeof d);
      d.kind = KD_DEV_OP_PROD_BACKWARD;
      d.dtype = self->dtype;
      d.it = &it;
      d.ops = ops;
      st = kd_cpu_device_run(kd_tensor_device(self), &d);
    } else if (st == KD_OK && !dev) {
      kd_iter_for_each(&it, kd_prodb_loops[self->dtype], NULL);
    }
  }
  if (p) kd_tensor_release(p);
  if (z) kd_tensor_release(z);
  if (g) kd_tensor_release(g);
  if (st != KD_OK) {
    if (out) kd_tensor_release(out);
    return st;
  }
  kd_out_take(outs, 0, out);
  return KD_OK;
}
