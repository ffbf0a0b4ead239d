/* nn_common.h - helpers shared by the kd.nn.functional kernels of conv.c, pool.c, interpolate.c
 * and pad.c: reading `int[]?` size arguments (a number, a list of 1 or of `nd` numbers, or left
 * out), picking the compute dtype (float16/bfloat16 run in float32), and a gemm that goes to
 * OpenBLAS when the build has it (KD_HAVE_CBLAS) and to a plain loop otherwise (always for
 * the uint64_t one of integer convolutions).
 *
 * These kernels work on contiguous buffers of the compute dtype: their inputs are converted once
 * with kd_cpu_cast (a no-op for contiguous float32/float64), because windowed access (im2col,
 * pooling windows, interpolation taps) over arbitrary strides would cost more than one copy. */
#ifndef KD_NN_COMMON_H
#define KD_NN_COMMON_H

#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "cpu/cpu_loops.h"

#if KD_HAVE_CBLAS
#include <cblas.h>
#endif

/* Reads an optional list argument of `nd` values into out[] ("stride", "padding", ...):
 * left out -> def; a number or a 1-element list -> repeated; else exactly nd values. */
static inline kd_status kd_nn_ints(const kd_value *v, int nd, int64_t def, const char *fn, const char *name,
                                   int64_t *out) {
  if (v->kind == KD_VALUE_NONE) {
    for (int i = 0; i < nd; i++) out[i] = def;
    return KD_OK;
  }
  if (v->kind == KD_VALUE_INT) {
    for (int i = 0; i < nd; i++) out[i] = v->v.i;
    return KD_OK;
  }
  if (v->kind == KD_VALUE_INTLIST && (v->v.ilist.n == 1 || v->v.ilist.n == nd)) {
    for (int i = 0; i < nd; i++) out[i] = v->v.ilist.data[v->v.ilist.n == 1 ? 0 : i];
    return KD_OK;
  }
  return kd_error(KD_ERR_INVALID_ARGUMENT, "%s: %s must be a number or a list of %d numbers", fn, name, nd);
}

/* The dtype a float kernel computes in: float64 stays, every other float type is float32.
 * Non-float dtypes: PyTorch's "\"<kernel>\" not implemented for '<Type>'". */
static inline kd_status kd_nn_compute_dtype(kd_dtype dt, const char *kernel, kd_dtype *out) {
  if (dt == KD_DTYPE_F64) { *out = KD_DTYPE_F64; return KD_OK; }
  if (dt == KD_DTYPE_F32 || dt == KD_DTYPE_F16 || dt == KD_DTYPE_BF16) { *out = KD_DTYPE_F32; return KD_OK; }
  return kd_error(KD_ERR_NOT_SUPPORTED, "\"%s\" not implemented for '%s'", kernel, kd_cpu_torch_name(dt));
}

/* `t` converted to a contiguous tensor of dtype cdt (t itself, retained, when it already is). */
static inline kd_status kd_nn_prep(kd_tensor *t, kd_dtype cdt, kd_tensor **out) {
  return kd_cpu_cast(t, cdt, true, out);
}

/* result (compute dtype, owned) as dtype `dt`: returned as is, or converted (result released). */
static inline kd_status kd_nn_finish(kd_tensor *result, kd_dtype dt, kd_tensor **out) {
  if (result->dtype == dt) { *out = result; return KD_OK; }
  kd_tensor *o = NULL;
  kd_status st = kd_tensor_empty(result->sizes, result->ndim, dt, kd_tensor_device(result), &o);
  if (st == KD_OK) st = kd_cpu_copy_into(o, result);
  kd_tensor_release(result);
  if (st != KD_OK) { if (o) kd_tensor_release(o); return st; }
  *out = o;
  return KD_OK;
}

/* C (m x n, ldc) = alpha * op(A) @ op(B) + beta * C, row-major; ta/tb transpose A (m x k as
 * stored k x m) / B. One call runs on the calling thread unless OpenBLAS threads it. */
#define KD_NN_GEMM_DEF(SFX, T, BLAS)                                                                      \
  static inline void kd_nn_gemm_##SFX(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T *a, \
                                      int64_t lda, const T *b, int64_t ldb, T beta, T *c, int64_t ldc) {    \
    if (m <= 0 || n <= 0) return;                                                                         \
    BLAS                                                                                                  \
    for (int64_t i = 0; i < m; i++) {                                                                     \
      T *cr = c + i * ldc;                                                                                \
      if (beta == (T)0) for (int64_t j = 0; j < n; j++) cr[j] = 0;                                        \
      else if (beta != (T)1) for (int64_t j = 0; j < n; j++) cr[j] *= beta;                              \
      for (int64_t p = 0; p < k; p++) {                                                                   \
        T av = alpha * (ta ? a[p * lda + i] : a[i * lda + p]);                                            \
        if (av == (T)0) continue;                                                                         \
        if (!tb) { const T *br = b + p * ldb; for (int64_t j = 0; j < n; j++) cr[j] += av * br[j]; }      \
        else for (int64_t j = 0; j < n; j++) cr[j] += av * b[j * ldb + p];                                \
      }                                                                                                   \
    }                                                                                                     \
  }
#if KD_HAVE_CBLAS
#define KD_NN_GEMM_BLAS(BLASFN)                                                                           \
  if (k > 0) {                                                                                            \
    BLASFN(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)m, (int)n,  \
           (int)k, alpha, a, (int)lda, b, (int)ldb, beta, c, (int)ldc);                                    \
    return;                                                                                               \
  }
#else
#define KD_NN_GEMM_BLAS(BLASFN)
#endif
KD_NN_GEMM_DEF(f32, float, KD_NN_GEMM_BLAS(cblas_sgemm))
KD_NN_GEMM_DEF(f64, double, KD_NN_GEMM_BLAS(cblas_dgemm))
/* integer convolutions (conv.c): wrapping 64-bit arithmetic, the plain loop */
KD_NN_GEMM_DEF(u64, uint64_t, )

/* OpenBLAS's thread count set to kindling's, when it differs (matmul.c). */
#if KD_HAVE_CBLAS
void kd_blas_sync_threads(void);
#else
static inline void kd_blas_sync_threads(void) {}
#endif

/* Runs fn over [0, n) split into up to kd_get_num_threads() chunks of whole items, with BLAS
 * calls inside them single-threaded (as PyTorch does inside at::parallel_for), so the pool's
 * threads and OpenBLAS's never oversubscribe the cores. One chunk (n == 1, or one thread) runs
 * on the calling thread with OpenBLAS at kindling's thread count. */
static inline void kd_nn_parallel_blas(int64_t n, kd_parallel_fn fn, void *ctx) {
  int nt = kd_get_num_threads();
  if (nt <= 1 || n <= 1) {
    kd_blas_sync_threads();
    fn(ctx, 0, n);
    return;
  }
#if KD_HAVE_CBLAS && defined(OPENBLAS_VERSION)
  openblas_set_num_threads(1);
#endif
  kd_parallel_for(0, n, 1, fn, ctx);
#if KD_HAVE_CBLAS && defined(OPENBLAS_VERSION)
  openblas_set_num_threads(nt);
#endif
}

#endif
