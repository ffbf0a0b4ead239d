/* softmax.c - CPU softmax and logSoftmax along one dim (op codes KD_SOFTMAX_SOFTMAX/LOG).
 *
 * Whole rows are needed (max, then sum of exponentials, then the division), so this kernel
 * does not run through the strided iterator: a non-contiguous input is first made contiguous
 * (kd_cpu_cast, one copy, cheaper than strided rows), and float16/bfloat16 inputs are
 * converted to float32 the same way, computed in float32 and rounded once at the end.
 * The contiguous input is then seen as [outer, len, inner] with len the size of dim:
 *   inner == 1 (dim is the last one): one fused pass per row (max; exp and sum; scale),
 *     rows split over the thread pool;
 *   inner > 1: a block of up to KD_SM_COLS adjacent columns at a time, so every step works on
 *     contiguous runs of KD_SM_COLS values (vectorised across columns); blocks are split
 *     over the thread pool.
 * Stability: x - max(row) <= 0 before exponentiation. float32 uses kd_sm_expf below, a
 * branch-free exp (Cephes polynomial, ~1 ulp) that gcc vectorises; float64 uses libm.
 * A row with NaN (or +inf, or only -inf) gives NaN, as PyTorch. */
#include <math.h>

#include "core/parallel.h"
#include "cpu/cpu_loops.h"
#include "cpu/device_hooks.h"

/* exp(x) for float32 without libm, vectorisable: 2^n * p(r), r = x - n ln2 in [-ln2/2, ln2/2].
 * Below -87.3 the result is 0 (so exp(-inf) == 0); above 88.7 it is inf; NaN stays NaN. */
static inline float kd_sm_expf(float x) {
  float xc = x > 88.72f ? 88.72f : x;
  xc = xc < -87.3f ? -87.3f : xc;
  float t = xc * 1.44269504088896341f + 12582912.0f; /* round to nearest via the magic number */
  float n = t - 12582912.0f;
  float r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  int32_t bits = (int32_t)((uint32_t)((int32_t)n + 127) << 23); /* unsigned: n + 127 < 0 below -87.3 (masked below) */
  float scale;
  memcpy(&scale, &bits, 4);
  float y = p * scale;
  y = x < -87.3f ? 0.0f : y;
  y = x > 88.72f ? INFINITY : y;
  return x != x ? x : y;
}

#define KD_SM_COLS 64

typedef struct kd_sm_job {
  const char *x;
  char *y;
  int64_t outer, len, inner, nblk; /* nblk: column blocks per outer slab (inner > 1) */
  bool log;
} kd_sm_job;

/* Row kernels (inner == 1) and column-block kernels (inner > 1) for float and double. */
#define KD_DEF_SOFTMAX(SFX, T, EXP, LOG)                                                      \
  /* one row; restrict and 16 independent lanes so gcc vectorises every loop */               \
  static void kd_sm_row_##SFX(const T *restrict x, T *restrict y, int64_t n, bool islog) {    \
    T mx[16], acc[16];                                                                        \
    int32_t nan[16];                                                                          \
    for (int k = 0; k < 16; k++) { mx[k] = -INFINITY; acc[k] = 0; nan[k] = 0; }               \
    int64_t i = 0;                                                                            \
    /* max and "saw a NaN" kept apart: both vectorise (vmaxps, a compare) */                  \
    for (; i + 16 <= n; i += 16)                                                              \
      for (int k = 0; k < 16; k++) {                                                          \
        T v = x[i + k];                                                                       \
        mx[k] = v > mx[k] ? v : mx[k];                                                        \
        nan[k] |= v != v;                                                                     \
      }                                                                                       \
    T m = -INFINITY;                                                                          \
    for (int k = 0; k < 16; k++) { m = mx[k] > m ? mx[k] : m; nan[0] |= nan[k]; }             \
    for (; i < n; i++) { m = x[i] > m ? x[i] : m; nan[0] |= x[i] != x[i]; }                   \
    if (nan[0]) m = (T)NAN;                                                                   \
    if (islog) {                                                                              \
      for (i = 0; i + 16 <= n; i += 16)                                                       \
        for (int k = 0; k < 16; k++) acc[k] += EXP(x[i + k] - m);                             \
      for (; i < n; i++) acc[0] += EXP(x[i] - m);                                             \
    } else {                                                                                  \
      for (i = 0; i + 16 <= n; i += 16)                                                       \
        for (int k = 0; k < 16; k++) { T e = EXP(x[i + k] - m); y[i + k] = e; acc[k] += e; }  \
      for (; i < n; i++) { T e = EXP(x[i] - m); y[i] = e; acc[0] += e; }                      \
    }                                                                                         \
    T s = 0;                                                                                  \
    for (int k = 0; k < 16; k++) s += acc[k];                                                 \
    if (islog) {                                                                              \
      const T c = LOG(s);                                                                     \
      for (i = 0; i < n; i++) y[i] = (x[i] - m) - c;                                          \
    } else {                                                                                  \
      const T r = (T)1 / s;                                                                   \
      for (i = 0; i < n; i++) y[i] *= r;                                                      \
    }                                                                                         \
  }                                                                                           \
  static void kd_sm_rows_##SFX(void *p, int64_t begin, int64_t end) {                        \
    const kd_sm_job *j = (const kd_sm_job *)p;                                                \
    const int64_t n = j->len;                                                                 \
    for (int64_t row = begin; row < end; row++)                                               \
      kd_sm_row_##SFX((const T *)j->x + row * n, (T *)j->y + row * n, n, j->log);             \
  }                                                                                           \
  static void kd_sm_cols_##SFX(void *p, int64_t begin, int64_t end) {                        \
    const kd_sm_job *j = (const kd_sm_job *)p;                                                \
    const int64_t len = j->len, inner = j->inner;                                             \
    for (int64_t b = begin; b < end; b++) {                                                   \
      int64_t o = b / j->nblk, c0 = (b % j->nblk) * KD_SM_COLS;                               \
      int64_t w = inner - c0 < KD_SM_COLS ? inner - c0 : KD_SM_COLS;                          \
      const T *x = (const T *)j->x + o * len * inner + c0;                                    \
      T *y = (T *)j->y + o * len * inner + c0;                                                \
      T m[KD_SM_COLS], s[KD_SM_COLS];                                                         \
      for (int64_t c = 0; c < w; c++) { m[c] = -INFINITY; s[c] = 0; }                         \
      for (int64_t k = 0; k < len; k++) {                                                     \
        const T *xk = x + k * inner;                                                          \
        for (int64_t c = 0; c < w; c++) m[c] = xk[c] > m[c] || xk[c] != xk[c] ? xk[c] : m[c]; \
      }                                                                                       \
      for (int64_t k = 0; k < len; k++) {                                                     \
        const T *xk = x + k * inner;                                                          \
        T *yk = y + k * inner;                                                                \
        if (j->log) for (int64_t c = 0; c < w; c++) s[c] += EXP(xk[c] - m[c]);                \
        else for (int64_t c = 0; c < w; c++) { T e = EXP(xk[c] - m[c]); yk[c] = e; s[c] += e; } \
      }                                                                                       \
      if (j->log) {                                                                           \
        for (int64_t c = 0; c < w; c++) s[c] = LOG(s[c]);                                     \
        for (int64_t k = 0; k < len; k++) {                                                   \
          const T *xk = x + k * inner;                                                        \
          T *yk = y + k * inner;                                                              \
          for (int64_t c = 0; c < w; c++) yk[c] = (xk[c] - m[c]) - s[c];                      \
        }                                                                                     \
      } else {                                                                                \
        for (int64_t c = 0; c < w; c++) s[c] = (T)1 / s[c];                                   \
        for (int64_t k = 0; k < len; k++) {                                                   \
          T *yk = y + k * inner;                                                              \
          for (int64_t c = 0; c < w; c++) yk[c] *= s[c];                                      \
        }                                                                                     \
      }                                                                                       \
    }                                                                                         \
  }
KD_DEF_SOFTMAX(f32, float, kd_sm_expf, logf)
KD_DEF_SOFTMAX(f64, double, exp, log)

/* PyTorch's kernel names, for its "not implemented for" message. */
static const char *kd_sm_kernel_name(bool log, bool lastdim) {
  if (log) return lastdim ? "log_softmax_lastdim_kernel_impl" : "log_softmax_kernel_impl";
  return lastdim ? "softmax_lastdim_kernel_impl" : "softmax_kernel_impl";
}

/* Softmax of the contiguous float32/float64 tensor `x` along `dim` into the new tensor `y`. */
static void kd_sm_run(const kd_tensor *x, kd_tensor *y, int dim, bool log) {
  kd_sm_job j;
  j.x = kd_tensor_data(x);
  j.y = kd_tensor_data(y);
  j.log = log;
  j.len = x->ndim ? x->sizes[dim] : 1;
  j.outer = 1;
  j.inner = 1;
  for (int d = 0; d < dim; d++) j.outer *= x->sizes[d];
  for (int d = dim + 1; d < x->ndim; d++) j.inner *= x->sizes[d];
  bool f32 = x->dtype == KD_DTYPE_F32;
  if (j.inner == 1) {
    int64_t grain = KD_PARALLEL_GRAIN / (j.len > 0 ? j.len : 1);
    kd_parallel_for(0, j.outer, grain > 0 ? grain : 1, f32 ? kd_sm_rows_f32 : kd_sm_rows_f64, &j);
  } else {
    j.nblk = (j.inner + KD_SM_COLS - 1) / KD_SM_COLS;
    int64_t grain = KD_PARALLEL_GRAIN / (j.len * KD_SM_COLS);
    kd_parallel_for(0, j.outer * j.nblk, grain > 0 ? grain : 1, f32 ? kd_sm_cols_f32 : kd_sm_cols_f64, &j);
  }
}

KD_KERNEL(kd_cpu_softmax) {
  (void)ks;
  kd_tensor *self = args[0].v.t;
  bool log = op->code == KD_SOFTMAX_LOG;
  int dim;
  KD_TRY(kd_shape_wrap_dim(args[1].v.i, self->ndim, &dim));
  kd_dtype odt = kd_arg_dtype_or(&args[2], self->dtype);
  if (!kd_dtype_is_float(odt)) {
    bool lastdim = self->ndim == 0 || dim == self->ndim - 1;
    return kd_error(KD_ERR_NOT_SUPPORTED, "\"%s\" not implemented for '%s'", kd_sm_kernel_name(log, lastdim),
                    kd_cpu_torch_name(odt));
  }
  kd_tensor *out;
  KD_TRY(kd_tensor_empty(self->sizes, self->ndim, odt, kd_tensor_device(self), &out));
  if (kd_tensor_numel(self) == 0) {
    kd_out_take(outs, 0, out);
    return KD_OK;
  }
  kd_dtype cdt = odt == KD_DTYPE_F64 ? KD_DTYPE_F64 : KD_DTYPE_F32;
  kd_tensor *x = NULL, *y = NULL;
  kd_status st = kd_cpu_cast(self, cdt, true, &x);
  if (st == KD_OK) {
    if (cdt == odt) {
      y = out;
      kd_tensor_retain(y);
    } else {
      st = kd_tensor_empty(self->sizes, self->ndim, cdt, kd_tensor_device(self), &y);
    }
  }
  if (st == KD_OK && kd_tensor_device(self).type != KD_DEVICE_CPU) { /* the device hook */
    kd_dev_rows r;
    memset(&r, 0, sizeof r);
    r.dev = kd_tensor_device(self);
    r.op = log ? KD_DEV_ROWS_LOG_SOFTMAX : KD_DEV_ROWS_SOFTMAX;
    r.dtype = cdt;
    r.len = x->ndim ? x->sizes[dim] : 1;
    r.outer = r.inner = 1;
    for (int d = 0; d < dim; d++) r.outer *= x->sizes[d];
    for (int d = dim + 1; d < x->ndim; d++) r.inner *= x->sizes[d];
    r.x = kd_tensor_data(x);
    r.y = kd_tensor_data(y);
    st = kd_cpu_device_rows ? kd_cpu_device_rows(&r)
                            : kd_error(KD_ERR_NOT_SUPPORTED, "no softmax kernel is registered for this device");
    if (st == KD_OK && y != out) st = kd_cpu_copy_into(out, y);
  } else if (st == KD_OK) {
    kd_sm_run(x, y, dim, log);
    if (y != out) st = kd_cpu_copy_into(out, y);
  }
  if (x) kd_tensor_release(x);
  if (y) kd_tensor_release(y);
  if (st != KD_OK) {
    kd_tensor_release(out);
    return st;
  }
  kd_out_take(outs, 0, out);
  return KD_OK;
}
