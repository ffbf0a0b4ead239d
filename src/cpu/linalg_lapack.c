/* linalg_lapack.c - the factorizations of torch.linalg on the CPU, through LAPACK (the one
 * OpenBLAS ships: dgetrf_, dpotrf_, dgeqrf_/dorgqr_, dgesdd_, dsyevd_, dgelsy_/dgels_/dgelsd_/
 * dgelss_), as PyTorch's CPU backend uses them. One kernel, kd_cpu_linalg, with one code per op:
 *   DET / SLOGDET / LOGDET   LU (getrf): the product of U's diagonal and the pivots' sign
 *   INV                      getrf + getri; a zero pivot is PyTorch's "singular" error
 *   SOLVE                    getrf + getrs of A X = B or X A = B on matrix right-hand sides
 *                            (linalg.solve's vector case and its checks: ops/linalg_decomp_composites.c)
 *   CHOLESKY(_OLD)           potrf; info > 0 is PyTorch's "not positive-definite" error
 *   QR(_OLD)                 geqrf + orgqr (modes reduced, complete, r)
 *   SVD(_OLD)                gesdd (U, S, Vh; torch.svd returns V)
 *   EIGH                     syevd (ascending eigenvalues, orthonormal eigenvectors)
 *   LSTSQ                    gelsy (PyTorch's CPU default driver), gels, gelsd or gelss with rcond
 *   SOLVE_TRIANGULAR         substitution in C (no LAPACK needed)
 *
 * Batches (..., m, n): every matrix is copied into a column-major float64 buffer (any strides
 * and both float dtypes, computed in double as one code path; results are rounded to the
 * input dtype), factored, and written to contiguous outputs. Errors found in a batch element
 * use PyTorch's "(Batch element i): " prefix. Builds without LAPACK (no OpenBLAS found at build
 * time) keep the ops, which then fail with KD_NOT_SUPPORTED (see docs/LINALG.md).
 * Tensors on a device (CUDA: cuda/ops_linalg.cu, cuSOLVER): det/slogdet/logdet, inv, solve and
 * cholesky copy their inputs into column-major batches with kindling ops on the device and run
 * the device's getrf/getrs/potrf (kinds KD_DEV_OP_LINALG_*); qr, svd and eigh likewise, and
 * lstsq (driver gels) through the device qr and trsm. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_loops.h"
#include "cpu/device_op_ptrs.h"
#include "ops/shape_scope.h"

#ifndef KD_HAVE_CBLAS
#define KD_HAVE_CBLAS 0
#endif
#define KD_HAVE_LAPACK KD_HAVE_CBLAS /* OpenBLAS, the BLAS the build finds, ships LAPACK */

/* The errors LAPACK reports for an input (singular, not positive-definite, no convergence):
 * PyTorch's torch.linalg.LinAlgError. */
#define LA_ERR KD_ERR_LINALG

#if KD_HAVE_LAPACK
void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);
void dgetri_(const int *n, double *a, const int *lda, const int *ipiv, double *work, const int *lwork, int *info);
void dgetrs_(const char *trans, const int *n, const int *nrhs, const double *a, const int *lda, const int *ipiv,
             double *b, const int *ldb, int *info);
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info);
void dgeqrf_(const int *m, const int *n, double *a, const int *lda, double *tau, double *work, const int *lwork,
             int *info);
void dorgqr_(const int *m, const int *n, const int *k, double *a, const int *lda, const double *tau, double *work,
             const int *lwork, int *info);
void dgesdd_(const char *jobz, const int *m, const int *n, double *a, const int *lda, double *s, double *u,
             const int *ldu, double *vt, const int *ldvt, double *work, const int *lwork, int *iwork, int *info);
void dsyevd_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda, double *w, double *work,
             const int *lwork, int *iwork, const int *liwork, int *info);
void dgelsy_(const int *m, const int *n, const int *nrhs, double *a, const int *lda, double *b, const int *ldb,
             int *jpvt, const double *rcond, int *rank, double *work, const int *lwork, int *info);
void dgels_(const char *trans, const int *m, const int *n, const int *nrhs, double *a, const int *lda, double *b,
            const int *ldb, double *work, const int *lwork, int *info);
void dgelsd_(const int *m, const int *n, const int *nrhs, double *a, const int *lda, double *b, const int *ldb,
             double *s, const double *rcond, int *rank, double *work, const int *lwork, int *iwork, int *info);
void dgelss_(const int *m, const int *n, const int *nrhs, double *a, const int *lda, double *b, const int *ldb,
             double *s, const double *rcond, int *rank, double *work, const int *lwork, int *info);
#endif

/* ---- batches of matrices ---- */

/* Number of matrices of t (product of all dims but the last two). */
static int64_t la_batch(const kd_tensor *t) {
  int64_t b = 1;
  for (int d = 0; d < t->ndim - 2; d++) b *= t->sizes[d];
  return b;
}
/* Element offset of matrix b of t, whose batch dims are broadcast to bsizes[0..nb) (a size-1 or
 * missing dim of t repeats). */
static int64_t la_offset(const kd_tensor *t, const int64_t *bsizes, int nb, int64_t b) {
  int64_t off = 0;
  int tb = t->ndim - 2;
  for (int d = nb - 1; d >= 0; d--) {
    int64_t i = b % bsizes[d];
    b /= bsizes[d];
    int td = d - (nb - tb);
    if (td >= 0 && t->sizes[td] != 1) off += i * t->strides[td];
  }
  return off;
}
/* Copies rows x cols of t at element offset off (row stride rs, col stride cs) into the
 * column-major buf with leading dimension ld; transpose: reads t^T. */
static void la_load(const kd_tensor *t, int64_t off, double *buf, int64_t ld, bool transpose) {
  int64_t r = t->sizes[t->ndim - 2], c = t->sizes[t->ndim - 1];
  int64_t rs = t->strides[t->ndim - 2], cs = t->strides[t->ndim - 1];
  if (transpose) {
    int64_t x = r;
    r = c;
    c = x;
    x = rs;
    rs = cs;
    cs = x;
  }
  if (t->dtype == KD_DTYPE_F64) {
    const double *p = (const double *)kd_tensor_data(t) + off;
    for (int64_t j = 0; j < c; j++)
      for (int64_t i = 0; i < r; i++) buf[i + j * ld] = p[i * rs + j * cs];
  } else {
    const float *p = (const float *)kd_tensor_data(t) + off;
    for (int64_t j = 0; j < c; j++)
      for (int64_t i = 0; i < r; i++) buf[i + j * ld] = p[i * rs + j * cs];
  }
}
/* Writes the column-major rows x cols buf (leading dimension ld) as matrix b of the contiguous
 * out; transpose: writes buf^T (out's matrices are cols x rows). */
static void la_store(kd_tensor *out, int64_t b, const double *buf, int64_t ld, int64_t rows, int64_t cols, bool transpose) {
  int64_t n = rows * cols;
  if (out->dtype == KD_DTYPE_F64) {
    double *p = (double *)kd_tensor_data(out) + b * n;
    for (int64_t i = 0; i < rows; i++)
      for (int64_t j = 0; j < cols; j++) {
        if (transpose) p[j * rows + i] = buf[i + j * ld];
        else p[i * cols + j] = buf[i + j * ld];
      }
  } else {
    float *p = (float *)kd_tensor_data(out) + b * n;
    for (int64_t i = 0; i < rows; i++)
      for (int64_t j = 0; j < cols; j++) {
        if (transpose) p[j * rows + i] = (float)buf[i + j * ld];
        else p[i * cols + j] = (float)buf[i + j * ld];
      }
  }
}
/* Element i of the contiguous out (at batch b of n elements). */
static void la_set(kd_tensor *out, int64_t i, double v) {
  if (out->dtype == KD_DTYPE_F64) ((double *)kd_tensor_data(out))[i] = v;
  else if (out->dtype == KD_DTYPE_F32) ((float *)kd_tensor_data(out))[i] = (float)v;
  else ((int64_t *)kd_tensor_data(out))[i] = (int64_t)v;
}

/* A new contiguous output: batch dims bsizes[0..nb) then up to two more dims. */
static kd_status la_out(const int64_t *bsizes, int nb, int extra, int64_t d0, int64_t d1, kd_dtype dt, kd_tensor **out) {
  int64_t s[KD_MAX_DIMS];
  if (nb + extra > KD_MAX_DIMS) return kd_error(KD_ERR_SHAPE, "too many dimensions");
  memcpy(s, bsizes, sizeof(int64_t) * (size_t)nb);
  if (extra > 0) s[nb] = d0;
  if (extra > 1) s[nb + 1] = d1;
  return kd_tensor_empty(s, nb + extra, dt, kd_device_cpu(), out);
}

/* "(Batch element 3): " for batched inputs, "" for one matrix. */
static const char *la_batch_prefix(const kd_tensor *t, int64_t b, char *buf, size_t n) {
  buf[0] = 0;
  if (t->ndim > 2) snprintf(buf, n, "(Batch element %lld): ", (long long)b);
  return buf;
}

/* The end of a kernel with n outputs ts[]: on success outs[] take them over, else they are
 * released (NULL ones skipped). */
static kd_status la_finish(kd_status st, kd_tensor **ts, int n, kd_value *outs) {
  for (int i = 0; i < n; i++) {
    if (st == KD_OK) kd_out_take(outs, i, ts[i]);
    else if (ts[i]) kd_tensor_release(ts[i]);
  }
  return st;
}

/* ---- PyTorch's checks ---- */

/* The float dtypes LAPACK takes: others get PyTorch's messages. */
static kd_status la_check_dtype(const char *fn, const kd_tensor *t) {
  if (t->dtype == KD_DTYPE_F32 || t->dtype == KD_DTYPE_F64) return KD_OK;
  if (t->dtype == KD_DTYPE_F16 || t->dtype == KD_DTYPE_BF16)
    return kd_error(KD_ERR_NOT_SUPPORTED, "\"%s\" not implemented for '%s'", fn, kd_cpu_torch_name(t->dtype));
  return kd_error(KD_ERR_DTYPE, "%s: Expected a floating point or complex tensor as input. Got %s", fn,
                  kd_cpu_torch_name(t->dtype));
}
static kd_status la_check_matrix(const char *fn, const kd_tensor *t, bool square) {
  if (t->ndim < 2) return kd_error(KD_ERR_SHAPE, "%s: The input tensor A must have at least 2 dimensions.", fn);
  if (square && t->sizes[t->ndim - 1] != t->sizes[t->ndim - 2])
    return kd_error(KD_ERR_SHAPE, "%s: A must be batches of square matrices, but they are %lld by %lld matrices", fn,
                    (long long)t->sizes[t->ndim - 2], (long long)t->sizes[t->ndim - 1]);
  return la_check_dtype(fn, t);
}
static bool la_is_float(const kd_tensor *t) { return t->dtype == KD_DTYPE_F32 || t->dtype == KD_DTYPE_F64; }
/* torch.cholesky's dtype message (its kernel's name; linalg.cholesky checks first). */
static kd_status la_check_cholesky_old(int code, const kd_tensor *A) {
  if (code == KD_LAPACK_CHOLESKY_OLD && A->ndim >= 2 && !kd_dtype_is_float(A->dtype))
    return kd_error(KD_ERR_NOT_SUPPORTED, "\"cholesky_cpu\" not implemented for '%s'", kd_cpu_torch_name(A->dtype));
  return KD_OK;
}
static kd_status __attribute__((unused)) la_no_lapack(const char *fn) {
  return kd_error(KD_ERR_NOT_SUPPORTED,
                  "%s: this build of kindling has no LAPACK (OpenBLAS was not found when it was built); install "
                  "libopenblas-dev and rebuild kindling (npm rebuild kindling)", fn);
}
/* LAPACK takes int sizes. */
static kd_status la_check_int(const char *fn, int64_t v) {
  if (v > 0x3fffffff) return kd_error(KD_ERR_NOT_SUPPORTED, "%s: matrices of %lld rows or columns are too large for LAPACK", fn, (long long)v);
  return KD_OK;
}

/* linalg.lstsq's LAPACK drivers, as PyTorch names them. */
typedef enum { LA_GELSY, LA_GELS, LA_GELSD, LA_GELSS } la_lstsq_driver;

/* The driver argument (None: dflt, PyTorch's default of the device). */
static kd_status la_lstsq_driver_of(const kd_value *driver, la_lstsq_driver dflt, la_lstsq_driver *out) {
  *out = dflt;
  if (driver->kind != KD_VALUE_STRING) return KD_OK;
  const char *d = driver->v.str;
  if (!strcmp(d, "gels")) *out = LA_GELS;
  else if (!strcmp(d, "gelsy")) *out = LA_GELSY;
  else if (!strcmp(d, "gelsd")) *out = LA_GELSD;
  else if (!strcmp(d, "gelss")) *out = LA_GELSS;
  else return kd_error(KD_ERR_INVALID_ARGUMENT, "torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)");
  return KD_OK;
}

/* linalg.lstsq's dtype and dims checks (PyTorch's messages), shared by both paths. */
static kd_status la_check_lstsq(const kd_tensor *A, const kd_tensor *Bm) {
  const char *fn = "torch.linalg.lstsq";
  if (A->dtype != Bm->dtype && kd_dtype_is_float(A->dtype) && kd_dtype_is_float(Bm->dtype))
    return kd_error(KD_ERR_DTYPE, "%s: Expected input and other to have the same dtype, but got input's dtype %s and other's dtype %s",
                    fn, kd_cpu_torch_name(A->dtype), kd_cpu_torch_name(Bm->dtype));
  if ((A->dtype != KD_DTYPE_F32 && A->dtype != KD_DTYPE_F64) || (Bm->dtype != KD_DTYPE_F32 && Bm->dtype != KD_DTYPE_F64))
    return kd_error(KD_ERR_DTYPE, "This function doesn't handle types other than float and double");
  if (A->dtype != Bm->dtype)
    return kd_error(KD_ERR_DTYPE, "%s: Expected input and other to have the same dtype, but got input's dtype %s and other's dtype %s",
                    fn, kd_cpu_torch_name(A->dtype), kd_cpu_torch_name(Bm->dtype));
  if (A->ndim < 2) return kd_error(KD_ERR_SHAPE, "%s: input must have at least 2 dimensions.", fn);
  return KD_OK;
}

#if KD_HAVE_LAPACK

/* Scratch of n doubles (NULL on overflow or OOM). */
static double *la_alloc(int64_t n) {
  if (n < 1) n = 1;
  if ((uint64_t)n > (SIZE_MAX / sizeof(double)) / 2) return NULL;
  return (double *)malloc(sizeof(double) * (size_t)n);
}
#define LA_OOM() kd_error(KD_ERR_OOM, "out of host memory")

/* det / slogdet / logdet / inv of every matrix of A (n x n). */
static kd_status la_lu_family(int code, kd_tensor *A, kd_value *outs) {
  const char *fn = code == KD_LAPACK_DET ? "linalg.det" : code == KD_LAPACK_SLOGDET ? "linalg.slogdet"
                   : code == KD_LAPACK_LOGDET ? "logdet" : "linalg.inv";
  KD_TRY(la_check_matrix(fn, A, true));
  int64_t n = A->sizes[A->ndim - 1], B = la_batch(A);
  KD_TRY(la_check_int(fn, n));
  int nb = A->ndim - 2;
  kd_tensor *o0 = NULL, *o1 = NULL;
  kd_status st = code == KD_LAPACK_INV ? la_out(A->sizes, nb, 2, n, n, A->dtype, &o0) : la_out(A->sizes, nb, 0, 0, 0, A->dtype, &o0);
  if (st == KD_OK && code == KD_LAPACK_SLOGDET) st = la_out(A->sizes, nb, 0, 0, 0, A->dtype, &o1);
  double *a = st == KD_OK ? la_alloc(n * n) : NULL;
  int *piv = st == KD_OK ? (int *)malloc(sizeof(int) * (size_t)(n ? n : 1)) : NULL;
  double *work = st == KD_OK && code == KD_LAPACK_INV ? la_alloc(n * 64) : NULL;
  if (st == KD_OK && (!a || !piv || (code == KD_LAPACK_INV && !work))) st = LA_OOM();
  int ni = (int)n, lda = ni ? ni : 1, lwork = ni * 64 > 0 ? ni * 64 : 1, info = 0;
  for (int64_t b = 0; st == KD_OK && b < B; b++) {
    la_load(A, la_offset(A, A->sizes, nb, b), a, lda, false);
    if (n > 0) dgetrf_(&ni, &ni, a, &lda, piv, &info);
    if (info < 0) st = kd_error(KD_ERR_INTERNAL, "%s: getrf argument %d", fn, -info);
    if (code == KD_LAPACK_INV) {
      if (info > 0) {
        char pre[48];
        st = kd_error(LA_ERR, "%s: %sThe diagonal element %d is zero, the inversion could not be completed because the "
                      "input matrix is singular.", fn, la_batch_prefix(A, b, pre, sizeof pre), info);
        break;
      }
      if (n > 0) dgetri_(&ni, a, &lda, piv, work, &lwork, &info);
      la_store(o0, b, a, lda, n, n, false);
      continue;
    }
    double sign = 1, logabs = 0;
    for (int64_t i = 0; i < n; i++) {
      double d = a[i + i * lda];
      if (piv[i] != i + 1) sign = -sign;
      if (d < 0) sign = -sign;
      logabs += log(fabs(d));
    }
    if (info > 0) { /* an exact zero pivot */
      sign = 0;
      logabs = -INFINITY;
    }
    if (code == KD_LAPACK_DET) la_set(o0, b, sign * exp(logabs));
    else if (code == KD_LAPACK_SLOGDET) {
      la_set(o0, b, sign);
      la_set(o1, b, logabs);
    } else la_set(o0, b, sign < 0 ? NAN : logabs);
    info = 0;
  }
  free(a);
  free(piv);
  free(work);
  return la_finish(st, (kd_tensor *[]){o0, o1}, o1 || st != KD_OK ? 2 : 1, outs);
}

/* Broadcast batch dims of A and B (both with >= 2 dims) into bs; returns their count. */
static kd_status la_broadcast_batch(const kd_tensor *A, const kd_tensor *B, int64_t *bs, int *nb) {
  return kd_shape_broadcast(A->sizes, A->ndim - 2, B->sizes, B->ndim - 2, bs, nb);
}

/* X with A X = B (left) or X A = B, B a batch of matrices (the checks are linalg.solve's). */
static kd_status la_solve(kd_tensor *A, kd_tensor *Bm, bool left, kd_value *outs) {
  const char *fn = "linalg.solve";
  KD_TRY(la_check_matrix(fn, A, true));
  if (Bm->ndim < 2) return kd_error(KD_ERR_SHAPE, "%s: The input tensor B must have at least 2 dimensions.", fn);
  if (A->dtype != Bm->dtype)
    return kd_error(KD_ERR_DTYPE, "%s: Expected A and B to have the same dtype, but found A of type %s and B of type %s instead",
                    fn, kd_cpu_torch_name(A->dtype), kd_cpu_torch_name(Bm->dtype));
  int64_t n = A->sizes[A->ndim - 1], br = Bm->sizes[Bm->ndim - 2], bc = Bm->sizes[Bm->ndim - 1];
  if ((left ? br : bc) != n)
    return kd_error(KD_ERR_SHAPE, "%s: Incompatible shapes of A and B for the equation %s = B (%lldx%lld and %lldx%lld)", fn,
                    left ? "AX" : "XA", (long long)n, (long long)n, (long long)br, (long long)bc);
  int64_t bs[KD_MAX_DIMS];
  int nb;
  KD_TRY(la_broadcast_batch(A, Bm, bs, &nb));
  KD_TRY(la_check_int(fn, n));
  KD_TRY(la_check_int(fn, left ? bc : br));
  int64_t k = left ? bc : br, batch = 1;
  for (int d = 0; d < nb; d++) batch *= bs[d];
  kd_tensor *X = NULL;
  KD_TRY(la_out(bs, nb, 2, br, bc, A->dtype, &X));
  double *a = la_alloc(n * n), *b = la_alloc(n * k);
  int *piv = (int *)malloc(sizeof(int) * (size_t)(n ? n : 1));
  kd_status st = a && b && piv ? KD_OK : LA_OOM();
  int ni = (int)n, ki = (int)k, lda = ni ? ni : 1, info = 0;
  for (int64_t i = 0; st == KD_OK && i < batch && n > 0 && k > 0; i++) {
    /* X A = B  <=>  A^T X^T = B^T */
    la_load(A, la_offset(A, bs, nb, i), a, lda, !left);
    la_load(Bm, la_offset(Bm, bs, nb, i), b, lda, !left);
    dgetrf_(&ni, &ni, a, &lda, piv, &info);
    if (info > 0) {
      char pre[48];
      st = kd_error(LA_ERR, "torch.linalg.solve: %sThe solver failed because the input matrix is singular.",
                    nb > 0 ? la_batch_prefix(A->ndim > 2 ? A : Bm, i, pre, sizeof pre) : "");
      break;
    }
    dgetrs_("N", &ni, &ki, a, &lda, piv, b, &lda, &info);
    la_store(X, i, b, lda, n, k, !left);
  }
  free(a);
  free(b);
  free(piv);
  return la_finish(st, &X, 1, outs);
}

static kd_status la_cholesky(int code, kd_tensor *A, bool upper, kd_value *outs) {
  const char *fn = code == KD_LAPACK_CHOLESKY ? "linalg.cholesky" : "cholesky";
  KD_TRY(la_check_cholesky_old(code, A));
  KD_TRY(la_check_matrix(fn, A, true));
  int64_t n = A->sizes[A->ndim - 1], B = la_batch(A);
  KD_TRY(la_check_int(fn, n));
  int nb = A->ndim - 2;
  kd_tensor *L = NULL;
  KD_TRY(la_out(A->sizes, nb, 2, n, n, A->dtype, &L));
  double *a = la_alloc(n * n);
  kd_status st = a ? KD_OK : LA_OOM();
  int ni = (int)n, lda = ni ? ni : 1, info = 0;
  for (int64_t b = 0; st == KD_OK && b < B; b++) {
    la_load(A, la_offset(A, A->sizes, nb, b), a, lda, false);
    if (n > 0) dpotrf_("L", &ni, a, &lda, &info);
    if (info > 0) {
      char pre[48];
      st = kd_error(LA_ERR, "%s: %sThe factorization could not be completed because the input is not positive-definite "
                    "(the leading minor of order %d is not positive-definite).", fn, la_batch_prefix(A, b, pre, sizeof pre), info);
      break;
    }
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < j; i++) a[i + j * lda] = 0; /* the strict upper triangle */
    la_store(L, b, a, lda, n, n, upper);
  }
  free(a);
  return la_finish(st, &L, 1, outs);
}

/* mode: 0 reduced, 1 complete, 2 r. */
static kd_status la_qr(kd_tensor *A, int mode, kd_value *outs) {
  const char *fn = "linalg.qr";
  KD_TRY(la_check_matrix(fn, A, false));
  int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = m < n ? m : n, B = la_batch(A);
  KD_TRY(la_check_int(fn, m));
  KD_TRY(la_check_int(fn, n));
  int nb = A->ndim - 2;
  int64_t qc = mode == 1 ? m : k, rr = mode == 1 ? m : k; /* Q: m x qc; R: rr x n */
  kd_tensor *Q = NULL, *R = NULL;
  kd_status st = mode == 2 ? la_out(A->sizes, nb, 1, 0, 0, A->dtype, &Q) : la_out(A->sizes, nb, 2, m, qc, A->dtype, &Q);
  if (mode == 2 && st == KD_OK) { /* an empty Q, as PyTorch's */
    kd_tensor_release(Q);
    int64_t z = 0;
    st = kd_tensor_empty(&z, 1, A->dtype, kd_device_cpu(), &Q);
  }
  if (st == KD_OK) st = la_out(A->sizes, nb, 2, rr, n, A->dtype, &R);
  int64_t cols = n > qc ? n : qc;
  double *a = st == KD_OK ? la_alloc(m * cols) : NULL, *tau = la_alloc(k), *r = la_alloc(rr * n);
  int mi = (int)m, ni = (int)n, ki = (int)k, qi = (int)qc, lda = mi ? mi : 1, info = 0, lwork = -1;
  double wq = 0;
  if (st == KD_OK && (!a || !tau || !r)) st = LA_OOM();
  double *work = NULL;
  if (st == KD_OK) {
    int64_t w = 64 * (cols + 1);
    if (m > 0 && n > 0) {
      dgeqrf_(&mi, &ni, a, &lda, tau, &wq, &lwork, &info);
      if (wq > w) w = (int64_t)wq;
      if (mode != 2 && qi > 0) {
        dorgqr_(&mi, &qi, &ki, a, &lda, tau, &wq, &lwork, &info);
        if (wq > w) w = (int64_t)wq;
      }
    }
    lwork = (int)w;
    work = la_alloc(w);
    if (!work) st = LA_OOM();
  }
  for (int64_t b = 0; st == KD_OK && b < B; b++) {
    la_load(A, la_offset(A, A->sizes, nb, b), a, lda, false);
    if (m > 0 && n > 0) dgeqrf_(&mi, &ni, a, &lda, tau, work, &lwork, &info);
    for (int64_t j = 0; j < n; j++)
      for (int64_t i = 0; i < rr; i++) r[i + j * rr] = i <= j && i < m ? a[i + j * lda] : 0;
    la_store(R, b, r, rr ? rr : 1, rr, n, false);
    if (mode == 2) continue;
    if (qc > 0 && m > 0) {
      if (k < qc) /* complete mode with m > n: the columns beyond the reflectors start as zeros */
        for (int64_t j = k; j < qc; j++)
          for (int64_t i = 0; i < m; i++) a[i + j * lda] = 0;
      dorgqr_(&mi, &qi, &ki, a, &lda, tau, work, &lwork, &info);
    }
    la_store(Q, b, a, lda, m, qc, false);
  }
  free(a);
  free(tau);
  free(r);
  free(work);
  return la_finish(st, (kd_tensor *[]){Q, R}, 2, outs);
}

/* gesdd: U (m x ucols), S (k), Vh (vrows x n); full: ucols = m, vrows = n. old: torch.svd's V
 * (n x vrows, the transpose) and zero-filled U/V when !compute_uv. */
static kd_status la_svd(kd_tensor *A, bool full, bool compute_uv, bool old, kd_value *outs) {
  const char *fn = "linalg.svd";
  KD_TRY(la_check_matrix(fn, A, false));
  int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = m < n ? m : n, B = la_batch(A);
  KD_TRY(la_check_int(fn, m));
  KD_TRY(la_check_int(fn, n));
  int nb = A->ndim - 2;
  int64_t uc = full ? m : k, vr = full ? n : k;
  kd_tensor *U = NULL, *S = NULL, *V = NULL;
  kd_status st = la_out(A->sizes, nb, 2, m, uc, A->dtype, &U);
  if (st == KD_OK) st = la_out(A->sizes, nb, 1, k, 0, A->dtype, &S);
  if (st == KD_OK) st = old ? la_out(A->sizes, nb, 2, n, vr, A->dtype, &V) : la_out(A->sizes, nb, 2, vr, n, A->dtype, &V);
  double *a = la_alloc(m * n), *s = la_alloc(k), *u = la_alloc(m * uc), *vt = la_alloc(vr * n);
  int *iwork = (int *)malloc(sizeof(int) * (size_t)(8 * k + 1));
  if (st == KD_OK && (!a || !s || !u || !vt || !iwork)) st = LA_OOM();
  const char *jobz = full ? "A" : "S";
  int mi = (int)m, ni = (int)n, lda = mi ? mi : 1, ldu = lda, ldvt = vr ? (int)vr : 1, lwork = -1, info = 0;
  double wq = 0, *work = NULL;
  if (st == KD_OK && k > 0) {
    dgesdd_(jobz, &mi, &ni, a, &lda, s, u, &ldu, vt, &ldvt, &wq, &lwork, iwork, &info);
    lwork = (int)wq + 1;
    work = la_alloc(lwork);
    if (!work) st = LA_OOM();
  }
  for (int64_t b = 0; st == KD_OK && b < B; b++) {
    la_load(A, la_offset(A, A->sizes, nb, b), a, lda, false);
    if (k > 0) {
      bool finite = true;
      for (int64_t i = 0; i < m * n; i++) finite = finite && isfinite(a[i]);
      if (!finite) {
        char pre[48];
        st = kd_error(LA_ERR, "%s: %sThe algorithm failed to converge because the input matrix contained non-finite values.",
                      fn, la_batch_prefix(A, b, pre, sizeof pre));
        break;
      }
      dgesdd_(jobz, &mi, &ni, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, &info);
      if (info > 0) {
        char pre[48];
        st = kd_error(LA_ERR, "%s: %sThe algorithm failed to converge because the input matrix is ill-conditioned or has "
                      "too many repeated singular values (error code: %d).", fn, la_batch_prefix(A, b, pre, sizeof pre), info - 1);
        break;
      }
    } else { /* an empty matrix: identity-like U and V for the full case, as LAPACK's convention */
      for (int64_t i = 0; i < m * uc; i++) u[i] = 0;
      for (int64_t i = 0; i < vr * n; i++) vt[i] = 0;
      for (int64_t i = 0; i < uc && i < m; i++) u[i + i * m] = 1;
      for (int64_t i = 0; i < vr && i < n; i++) vt[i + i * vr] = 1;
    }
    if (old && !compute_uv) {
      for (int64_t i = 0; i < m * uc; i++) u[i] = 0;
      for (int64_t i = 0; i < vr * n; i++) vt[i] = 0;
    }
    la_store(U, b, u, ldu, m, uc, false);
    for (int64_t i = 0; i < k; i++) la_set(S, b * k + i, s[i]);
    la_store(V, b, vt, ldvt, vr, n, old);
  }
  free(a);
  free(s);
  free(u);
  free(vt);
  free(iwork);
  free(work);
  return la_finish(st, (kd_tensor *[]){U, S, V}, 3, outs);
}

static kd_status la_eigh(kd_tensor *A, const char *uplo, kd_value *outs) {
  const char *fn = "linalg.eigh";
  if (strcmp(uplo, "L") != 0 && strcmp(uplo, "U") != 0)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "Expected UPLO argument to be 'L' or 'U', but got %s", uplo);
  if (A->ndim >= 2 && A->sizes[A->ndim - 1] == A->sizes[A->ndim - 2] && A->dtype != KD_DTYPE_F32 && A->dtype != KD_DTYPE_F64)
    return kd_error(KD_ERR_NOT_SUPPORTED, "\"linalg_eigh_cpu\" not implemented for '%s'", kd_cpu_torch_name(A->dtype));
  KD_TRY(la_check_matrix(fn, A, true));
  int64_t n = A->sizes[A->ndim - 1], B = la_batch(A);
  KD_TRY(la_check_int(fn, n));
  int nb = A->ndim - 2;
  kd_tensor *W = NULL, *V = NULL;
  kd_status st = la_out(A->sizes, nb, 1, n, 0, A->dtype, &W);
  if (st == KD_OK) st = la_out(A->sizes, nb, 2, n, n, A->dtype, &V);
  double *a = la_alloc(n * n), *w = la_alloc(n), *work = NULL;
  int *iwork = NULL;
  if (st == KD_OK && (!a || !w)) st = LA_OOM();
  int ni = (int)n, lda = ni ? ni : 1, lwork = -1, liwork = -1, info = 0, iwq = 0;
  double wq = 0;
  if (st == KD_OK && n > 0) {
    dsyevd_("V", uplo, &ni, a, &lda, w, &wq, &lwork, &iwq, &liwork, &info);
    lwork = (int)wq + 1;
    liwork = iwq + 1;
    work = la_alloc(lwork);
    iwork = (int *)malloc(sizeof(int) * (size_t)liwork);
    if (!work || !iwork) st = LA_OOM();
  }
  for (int64_t b = 0; st == KD_OK && b < B; b++) {
    la_load(A, la_offset(A, A->sizes, nb, b), a, lda, false);
    if (n > 0) dsyevd_("V", uplo, &ni, a, &lda, w, work, &lwork, iwork, &liwork, &info);
    if (info > 0) {
      char pre[48];
      st = kd_error(LA_ERR, "%s: %sThe algorithm failed to converge because the input matrix is ill-conditioned or has "
                    "too many repeated eigenvalues (error code: %d).", fn, la_batch_prefix(A, b, pre, sizeof pre), info);
      break;
    }
    for (int64_t i = 0; i < n; i++) la_set(W, b * n + i, w[i]);
    la_store(V, b, a, lda, n, n, false);
  }
  free(a);
  free(w);
  free(work);
  free(iwork);
  return la_finish(st, (kd_tensor *[]){W, V}, 2, outs);
}

/* One driver call on the column-major a (m x n, lda) and b (ldb x k); iwork is gelsd's. With
 * lwork == -1 it is a workspace query: *work gets the size (and *iwork gelsd's integer size). */
static int la_lstsq_call(la_lstsq_driver drv, int m, int n, int k, double *a, int lda, double *b, int ldb, int *jpvt,
                         double *sv, double rc, int *rank, double *work, int lwork, int *iwork) {
  int info = 0;
  switch (drv) {
    case LA_GELSY: dgelsy_(&m, &n, &k, a, &lda, b, &ldb, jpvt, &rc, rank, work, &lwork, &info); break;
    case LA_GELS: dgels_("N", &m, &n, &k, a, &lda, b, &ldb, work, &lwork, &info); break;
    case LA_GELSD: dgelsd_(&m, &n, &k, a, &lda, b, &ldb, sv, &rc, rank, work, &lwork, iwork, &info); break;
    case LA_GELSS: dgelss_(&m, &n, &k, a, &lda, b, &ldb, sv, &rc, rank, work, &lwork, &info); break;
  }
  return info;
}

/* A (m x n), B (m x k) -> solution (n x k); residuals (k squared norms of the rows past n, when
 * m > n and the driver is not gelsy, and gelsd/gelss found every matrix of full rank; else
 * empty); rank (int64; empty for gels); singularValues (min(m, n) for gelsd/gelss; else empty).
 * Output shapes as PyTorch's. */
static kd_status la_lstsq(kd_tensor *A, kd_tensor *Bm, const kd_value *rcond, const kd_value *driver, kd_value *outs) {
  const char *fn = "torch.linalg.lstsq";
  KD_TRY(la_check_lstsq(A, Bm));
  if (Bm->ndim == A->ndim - 1) { /* a batch of vectors: one-column matrices, the solution squeezed back */
    if (A->sizes[A->ndim - 2] != Bm->sizes[Bm->ndim - 1])
      return kd_error(KD_ERR_SHAPE, "%s: input.size(-2) should match other.size(-1)", fn);
    int64_t sz[KD_MAX_DIMS], sd[KD_MAX_DIMS];
    memcpy(sz, Bm->sizes, sizeof(int64_t) * (size_t)Bm->ndim);
    memcpy(sd, Bm->strides, sizeof(int64_t) * (size_t)Bm->ndim);
    sz[Bm->ndim] = 1;
    sd[Bm->ndim] = 1;
    kd_tensor *col = NULL;
    KD_TRY(kd_tensor_new_view(Bm, sz, sd, Bm->ndim + 1, Bm->offset, &col));
    kd_status st = la_lstsq(A, col, rcond, driver, outs);
    kd_tensor_release(col);
    if (st != KD_OK) return st;
    kd_tensor *X = outs[0].v.t, *x = NULL;
    st = kd_tensor_new_view(X, X->sizes, X->strides, X->ndim - 1, X->offset, &x);
    kd_tensor_release(X);
    if (st != KD_OK) {
      for (int i = 1; i < 4; i++) kd_tensor_release(outs[i].v.t);
      return st;
    }
    outs[0] = kd_value_tensor(x);
    return KD_OK;
  }
  if (Bm->ndim < 2) return kd_error(KD_ERR_SHAPE, "%s: other must have at least 2 dimensions.", fn);
  la_lstsq_driver drv;
  KD_TRY(la_lstsq_driver_of(driver, LA_GELSY, &drv));
  bool has_rank = drv != LA_GELS, has_sv = drv == LA_GELSD || drv == LA_GELSS;
  int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = Bm->sizes[Bm->ndim - 1];
  if (Bm->sizes[Bm->ndim - 2] != m) return kd_error(KD_ERR_SHAPE, "%s: input.size(-2) should match other.size(-2)", fn);
  KD_TRY(la_check_int(fn, m));
  KD_TRY(la_check_int(fn, n));
  KD_TRY(la_check_int(fn, k));
  int64_t bs[KD_MAX_DIMS];
  int nb;
  KD_TRY(la_broadcast_batch(A, Bm, bs, &nb));
  int64_t batch = 1;
  for (int d = 0; d < nb; d++) batch *= bs[d];
  double eps = A->dtype == KD_DTYPE_F64 ? 2.220446049250313e-16 : 1.1920928955078125e-07;
  double rc = rcond->kind == KD_VALUE_DOUBLE ? rcond->v.d : eps * (double)(m > n ? m : n);
  int64_t mn = m < n ? m : n, ldb = m > n ? m : n;
  if (ldb < 1) ldb = 1;
  kd_tensor *X = NULL, *res = NULL, *rank = NULL, *sv = NULL;
  int64_t z = 0;
  kd_status st = la_out(bs, nb, 2, n, k, A->dtype, &X);
  if (st == KD_OK) st = has_rank ? la_out(bs, nb, 0, 0, 0, KD_DTYPE_I64, &rank) : kd_tensor_empty(&z, 1, KD_DTYPE_I64, kd_device_cpu(), &rank);
  if (st == KD_OK) st = has_sv ? la_out(bs, nb, 1, mn, 0, A->dtype, &sv) : kd_tensor_empty(&z, 1, A->dtype, kd_device_cpu(), &sv);
  /* the rows past n of every solved b, kept for the residuals */
  bool want_res = m > n && drv != LA_GELSY;
  double *a = la_alloc(m * n), *b = la_alloc(ldb * k), *s = la_alloc(mn), *work = NULL;
  double *sq = want_res ? la_alloc(batch * k) : NULL;
  int *jpvt = (int *)malloc(sizeof(int) * (size_t)(n + 1)), *iwork = NULL;
  if (st == KD_OK && (!a || !b || !s || !jpvt || (want_res && !sq))) st = LA_OOM();
  int mi = (int)m, ni = (int)n, ki = (int)k, lda = mi ? mi : 1, ldbi = (int)ldb, lwork = 0, r = 0;
  bool solve = m > 0 && n > 0 && k > 0, full_rank = true;
  if (st == KD_OK && solve) {
    double wq = 0;
    int iq = 1;
    la_lstsq_call(drv, mi, ni, ki, a, lda, b, ldbi, jpvt, s, rc, &r, &wq, -1, &iq);
    lwork = (int)wq + 1;
    work = la_alloc(lwork);
    iwork = (int *)malloc(sizeof(int) * (size_t)(iq > 1 ? iq : 1));
    if (!work || !iwork) st = LA_OOM();
  }
  char pre[48];
  for (int64_t i = 0; st == KD_OK && i < batch; i++) {
    la_load(A, la_offset(A, bs, nb, i), a, lda, false);
    la_load(Bm, la_offset(Bm, bs, nb, i), b, ldbi, false);
    r = (int)mn;
    for (int64_t j = 0; j < mn; j++) s[j] = 0;
    if (solve) {
      for (int64_t j = 0; j < n; j++) jpvt[j] = 0;
      int info = la_lstsq_call(drv, mi, ni, ki, a, lda, b, ldbi, jpvt, s, rc, &r, work, lwork, iwork);
      if (info > 0 && drv == LA_GELS)
        st = kd_error(LA_ERR, "%storch.linalg.lstsq: The least squares solution could not be computed because the input "
                      "matrix does not have full rank (error code: %d).", la_batch_prefix(A, i, pre, sizeof pre), info);
      else if (info > 0)
        st = kd_error(LA_ERR, "%storch.linalg.lstsq: The algorithm failed to converge because the input matrix is "
                      "ill-conditioned or has too many repeated singular values (error code: %d).",
                      la_batch_prefix(A, i, pre, sizeof pre), info);
    } else {
      for (int64_t j = 0; j < ldb * k; j++) b[j] = 0;
      r = 0;
    }
    if (st != KD_OK) break;
    la_store(X, i, b, ldbi, n, k, false);
    if (has_rank) la_set(rank, i, r);
    if (has_sv)
      for (int64_t j = 0; j < mn; j++) la_set(sv, i * mn + j, s[j]);
    if (r < n) full_rank = false;
    for (int64_t c = 0; want_res && c < k; c++) {
      double acc = 0;
      for (int64_t j = n; j < m; j++) acc += b[j + c * ldb] * b[j + c * ldb];
      sq[i * k + c] = acc;
    }
  }
  /* PyTorch: gels always has them (full rank is assumed); gelsd/gelss when every rank is n */
  if (st == KD_OK) {
    if (want_res && (drv == LA_GELS || full_rank)) {
      st = la_out(bs, nb, 1, k, 0, A->dtype, &res);
      for (int64_t i = 0; st == KD_OK && i < batch * k; i++) la_set(res, i, sq[i]);
    } else {
      st = kd_tensor_empty(&z, 1, A->dtype, kd_device_cpu(), &res);
    }
  }
  free(a);
  free(b);
  free(s);
  free(sq);
  free(jpvt);
  free(work);
  free(iwork);
  return la_finish(st, (kd_tensor *[]){X, res, rank, sv}, 4, outs);
}
#endif /* KD_HAVE_LAPACK */

/* linalg.solve_triangular's argument checks (PyTorch's messages), shared by both paths; *out_n:
 * the order of A. */
static kd_status la_check_solve_triangular(const kd_tensor *A, const kd_tensor *Bm, bool left, int64_t *out_n) {
  const char *fn = "linalg.solve_triangular";
  if (A->ndim < 2) return kd_error(KD_ERR_SHAPE, "%s: The input tensor A must have at least 2 dimensions.", fn);
  if (Bm->ndim < 2) return kd_error(KD_ERR_SHAPE, "%s: The input tensor B must have at least 2 dimensions.", fn);
  int64_t n = A->sizes[A->ndim - 1];
  if (A->sizes[A->ndim - 2] != n)
    return kd_error(KD_ERR_SHAPE, "%s: A must be batches of square matrices, but they are %lld by %lld matrices", fn,
                    (long long)A->sizes[A->ndim - 2], (long long)n);
  if (A->dtype != Bm->dtype)
    return kd_error(KD_ERR_DTYPE, "%s: Expected A and B to have the same dtype, but found A of type %s and B of type %s instead",
                    fn, kd_cpu_torch_name(A->dtype), kd_cpu_torch_name(Bm->dtype));
  if (!la_is_float(A))
    return kd_error(KD_ERR_NOT_SUPPORTED, "\"triangular_solve_cpu\" not implemented for '%s'", kd_cpu_torch_name(A->dtype));
  int64_t br = Bm->sizes[Bm->ndim - 2], bc = Bm->sizes[Bm->ndim - 1];
  if ((left ? br : bc) != n)
    return kd_error(KD_ERR_SHAPE, "%s: Incompatible shapes of A and B for the equation %s = B (%lldx%lld and %lldx%lld)", fn,
                    left ? "AX" : "XA", (long long)n, (long long)n, (long long)br, (long long)bc);
  *out_n = n;
  return KD_OK;
}

/* linalg.solve_triangular: substitution, any float dtype (computed in double). */
static kd_status la_solve_triangular(kd_tensor *A, kd_tensor *Bm, bool upper, bool left, bool unit, kd_value *outs) {
  const char *fn = "linalg.solve_triangular";
  int64_t n = 0;
  KD_TRY(la_check_solve_triangular(A, Bm, left, &n));
  int64_t br = Bm->sizes[Bm->ndim - 2], bc = Bm->sizes[Bm->ndim - 1];
  int64_t bs[KD_MAX_DIMS];
  int nb;
  KD_TRY(kd_shape_broadcast(A->sizes, A->ndim - 2, Bm->sizes, Bm->ndim - 2, bs, &nb));
  int64_t batch = 1, k = left ? bc : br;
  for (int d = 0; d < nb; d++) batch *= bs[d];
  kd_tensor *X = NULL;
  KD_TRY(la_out(bs, nb, 2, br, bc, A->dtype, &X));
  if (n * n < 0 || n * k < 0) return kd_error(KD_ERR_SHAPE, "%s: too large", fn);
  double *a = (double *)malloc(sizeof(double) * (size_t)(n * n > 0 ? n * n : 1));
  double *b = (double *)malloc(sizeof(double) * (size_t)(n * k > 0 ? n * k : 1));
  kd_status st = a && b ? KD_OK : kd_error(KD_ERR_OOM, "out of host memory");
  /* X A = B <=> A^T X^T = B^T: A^T is triangular the other way */
  bool up = left ? upper : !upper;
  int64_t ld = n ? n : 1;
  for (int64_t i = 0; st == KD_OK && i < batch; i++) {
    la_load(A, la_offset(A, bs, nb, i), a, ld, !left);
    la_load(Bm, la_offset(Bm, bs, nb, i), b, ld, !left);
    for (int64_t c = 0; c < k; c++) {
      double *x = b + c * ld;
      if (up)
        for (int64_t r = n - 1; r >= 0; r--) {
          double s = x[r];
          for (int64_t j = r + 1; j < n; j++) s -= a[r + j * ld] * x[j];
          x[r] = unit ? s : s / a[r + r * ld];
        }
      else
        for (int64_t r = 0; r < n; r++) {
          double s = x[r];
          for (int64_t j = 0; j < r; j++) s -= a[r + j * ld] * x[j];
          x[r] = unit ? s : s / a[r + r * ld];
        }
    }
    la_store(X, i, b, ld, n, k, !left);
  }
  free(a);
  free(b);
  return la_finish(st, &X, 1, outs);
}

static const char *la_fn_name(int code) {
  switch (code) {
    case KD_LAPACK_DET: return "linalg.det";
    case KD_LAPACK_SLOGDET: return "linalg.slogdet";
    case KD_LAPACK_LOGDET: return "logdet";
    case KD_LAPACK_INV: return "linalg.inv";
    case KD_LAPACK_SOLVE: return "linalg.solve";
    case KD_LAPACK_CHOLESKY: return "linalg.cholesky";
    case KD_LAPACK_CHOLESKY_OLD: return "cholesky";
    case KD_LAPACK_QR: case KD_LAPACK_QR_OLD: return "linalg.qr";
    case KD_LAPACK_SVD: case KD_LAPACK_SVD_OLD: return "linalg.svd";
    case KD_LAPACK_EIGH: return "linalg.eigh";
    case KD_LAPACK_LSTSQ: return "torch.linalg.lstsq";
    default: return "linalg";
  }
}


/* ---- tensors on a device: column-major batches through the device's getrf/getrs/potrf ---- */
#define LD(out, op, ...) KD_TRY(kd_scope_call(s, (op), (kd_value[]){__VA_ARGS__}, (out)))

/* A fresh contiguous copy of x on its device (the factorizations work in place); transpose:
 * of x^T, i.e. x's matrices column-major. */
static kd_status ld_copy(kd_scope *s, kd_tensor *x, bool transpose, kd_tensor **out) {
  kd_tensor *src = x, *dst, *r;
  if (transpose) LD(&src, KD_OP_transpose, kd_value_tensor(x), kd_value_int(-2), kd_value_int(-1));
  KD_TRY(kd_tensor_empty(src->sizes, src->ndim, x->dtype, kd_tensor_device(x), &dst));
  KD_TRY(kd_scope_keep(s, dst));
  LD(&r, KD_OP_copy_, kd_value_tensor(dst), kd_value_tensor(src));
  *out = dst;
  return KD_OK;
}
static kd_status ld_expand(kd_scope *s, kd_tensor *x, const int64_t *bs, int nb, kd_tensor **out) {
  int64_t sz[KD_MAX_DIMS];
  memcpy(sz, bs, sizeof(int64_t) * (size_t)nb);
  sz[nb] = x->sizes[x->ndim - 2];
  sz[nb + 1] = x->sizes[x->ndim - 1];
  LD(out, KD_OP_expand, kd_value_tensor(x), kd_value_intlist(sz, nb + 2));
  return KD_OK;
}
/* An int32 scratch on like's device: one value per matrix of the nb batch dims (last < 0: the
 * infos), or last of them (pivots; 0 for 0 x 0 matrices). */
static kd_status ld_int32(kd_scope *s, kd_tensor *like, int nb, int64_t last, kd_tensor **out) {
  int64_t sz[KD_MAX_DIMS];
  memcpy(sz, like->sizes, sizeof(int64_t) * (size_t)nb);
  sz[nb] = last;
  KD_TRY(kd_tensor_empty(sz, last >= 0 ? nb + 1 : nb, KD_DTYPE_I32, kd_tensor_device(like), out));
  return kd_scope_keep(s, *out);
}
/* getrf (code 0) / getrs (code 1) / potrf (kind CHOLESKY) on n x n column-major batches. */
static kd_status ld_run(kd_tensor *a, int kind, int code, int64_t n, int64_t batch, int64_t k, kd_tensor *p1, kd_tensor *p2,
                        int64_t *bad, int64_t *info) {
  kd_dev_op op;
  memset(&op, 0, sizeof op);
  op.kind = kind;
  op.code = code;
  op.dtype = a->dtype;
  op.i[0] = n;
  op.i[1] = batch;
  op.i[2] = k;
  void *p[3] = {kd_dev_ptr(a), kd_dev_ptr(p1), kd_dev_ptr(p2)};
  const kd_dtype dts[3] = {a->dtype, p1 ? p1->dtype : a->dtype, p2 ? p2->dtype : a->dtype};
  KD_TRY(kd_dev_op_run_ptrs(kd_tensor_device(a), &op, p2 ? 3 : 2, p, dts));
  if (bad) *bad = op.result[0];
  if (info) *info = op.result[1];
  return KD_OK;
}

/* qr of device tensors: geqrf on column-major A, R from its upper triangle, Q by orgqr in place
 * (complete with m > n: in an m x m buffer whose columns beyond n start as zeros). */
/* Empty matrices on a device (a 0 dim or an empty batch): nothing to factor, so the CPU kernel
 * runs on an empty CPU copy and its outputs (identity factors where PyTorch has them, e.g. Q of
 * a 5 x 0 matrix in complete mode) move to the device. code: QR(_OLD) or SVD(_OLD). */
static kd_status la_device_empty(kd_scope *s, int code, kd_tensor *A, int mode, bool full, bool compute_uv, kd_value *outs) {
#if KD_HAVE_LAPACK
  kd_tensor *a;
  LD(&a, KD_OP_to, kd_value_tensor(A), kd_value_none(), kd_value_device(kd_device_cpu()), kd_value_bool(false));
  kd_value tmp[3];
  memset(tmp, 0, sizeof tmp);
  int n = code == KD_LAPACK_QR || code == KD_LAPACK_QR_OLD ? 2 : 3;
  KD_TRY(n == 2 ? la_qr(a, mode, tmp) : la_svd(a, full, compute_uv, code == KD_LAPACK_SVD_OLD, tmp));
  kd_status st = KD_OK;
  for (int i = 0; i < n; i++) { /* the scope owns them from here */
    kd_status k = kd_scope_keep(s, tmp[i].v.t);
    if (st == KD_OK) st = k;
  }
  if (st != KD_OK) return st;
  for (int i = 0; i < n; i++) {
    kd_tensor *t;
    LD(&t, KD_OP_to, kd_value_tensor(tmp[i].v.t), kd_value_none(), kd_value_device(kd_tensor_device(A)), kd_value_bool(false));
    kd_out_retain(outs, i, t);
  }
  return KD_OK;
#else
  (void)s, (void)code, (void)A, (void)mode, (void)full, (void)compute_uv, (void)outs;
  return la_no_lapack(la_fn_name(code));
#endif
}

static kd_status la_device_qr(kd_scope *s, int code, kd_value *args, kd_value *outs) {
  kd_tensor *A = args[0].v.t;
  const char *fn = "linalg.qr";
  int mode = 0;
  if (code == KD_LAPACK_QR) {
    const char *md = args[1].v.str;
    mode = !strcmp(md, "reduced") ? 0 : !strcmp(md, "complete") ? 1 : !strcmp(md, "r") ? 2 : -1;
    if (mode < 0)
      return kd_error(KD_ERR_INVALID_ARGUMENT, "qr received unrecognized mode '%s' but expected one of 'reduced' (default), "
                      "'r', or 'complete'", md);
  } else {
    mode = args[1].v.b ? 0 : 1;
  }
  KD_TRY(la_check_matrix(fn, A, false));
  int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = m < n ? m : n, batch = la_batch(A);
  KD_TRY(la_check_int(fn, m));
  KD_TRY(la_check_int(fn, n));
  if (m == 0 || n == 0 || batch == 0) return la_device_empty(s, code, A, mode, false, false, outs);
  int nb = A->ndim - 2;
  int64_t qc = mode == 1 ? m : k, rr = mode == 1 ? m : k;
  kd_tensor *a, *tau, *t, *R, *Q;
  KD_TRY(ld_copy(s, A, true, &a)); /* [.., n, m] row-major: column-major m x n */
  int64_t sz[KD_MAX_DIMS];
  memcpy(sz, A->sizes, sizeof(int64_t) * (size_t)nb);
  sz[nb] = k;
  KD_TRY(kd_tensor_empty(sz, nb + 1, A->dtype, kd_tensor_device(A), &tau));
  KD_TRY(kd_scope_keep(s, tau));
  kd_dev_op op;
  memset(&op, 0, sizeof op);
  op.kind = KD_DEV_OP_LINALG_QR;
  op.dtype = A->dtype;
  int64_t iv[6] = {m, n, batch, k, 0, n};
  memcpy(op.i, iv, sizeof iv);
  void *p[2] = {kd_dev_ptr(a), kd_dev_ptr(tau)};
  const kd_dtype dts[2] = {A->dtype, A->dtype};
  KD_TRY(kd_dev_op_run_ptrs(kd_tensor_device(A), &op, 2, p, dts));
  LD(&t, KD_OP_transpose, kd_value_tensor(a), kd_value_int(-2), kd_value_int(-1)); /* m x n: R in its upper triangle */
  if (rr < m) LD(&t, KD_OP_narrow, kd_value_tensor(t), kd_value_int(-2), kd_value_int(0), kd_value_int(rr));
  LD(&R, KD_OP_triu, kd_value_tensor(t), kd_value_int(0));
  if (mode == 2) {
    int64_t z = 0;
    KD_TRY(kd_tensor_empty(&z, 1, A->dtype, kd_tensor_device(A), &Q));
    KD_TRY(kd_scope_keep(s, Q));
  } else {
    kd_tensor *qb = a;
    int64_t cols = n;
    if (qc > n) { /* complete, m > n: m columns, the ones beyond n zero */
      kd_tensor *z, *parts[2], *cat;
      int64_t zs[KD_MAX_DIMS];
      memcpy(zs, A->sizes, sizeof(int64_t) * (size_t)nb);
      zs[nb] = qc - n;
      zs[nb + 1] = m;
      LD(&z, KD_OP_zeros, kd_value_intlist(zs, nb + 2), kd_value_dtype(A->dtype), kd_value_device(kd_tensor_device(A)));
      parts[0] = a;
      parts[1] = z;
      LD(&cat, KD_OP_cat, kd_value_tlist(parts, 2), kd_value_int(-2));
      KD_TRY(ld_copy(s, cat, false, &qb));
      cols = qc;
    }
    op.code = 1;
    int64_t iq[6] = {m, n, batch, k, qc, cols};
    memcpy(op.i, iq, sizeof iq);
    void *pq[2] = {kd_dev_ptr(qb), kd_dev_ptr(tau)};
    KD_TRY(kd_dev_op_run_ptrs(kd_tensor_device(A), &op, 2, pq, dts));
    if (qc < cols) LD(&qb, KD_OP_narrow, kd_value_tensor(qb), kd_value_int(-2), kd_value_int(0), kd_value_int(qc));
    LD(&t, KD_OP_transpose, kd_value_tensor(qb), kd_value_int(-2), kd_value_int(-1));
    LD(&Q, KD_OP_contiguous, kd_value_tensor(t));
  }
  LD(&R, KD_OP_contiguous, kd_value_tensor(R));
  kd_out_retain(outs, 0, Q);
  kd_out_retain(outs, 1, R);
  return KD_OK;
}

/* svd of device tensors: gesvd takes m >= n, so a wide A is factored as A^T = U' S V'^T (its
 * row-major memory is A^T column-major), giving U = V' and Vh = U'^T, which are then already
 * row-major in the buffers. */
static kd_status la_device_svd(kd_scope *s, int code, kd_value *args, kd_value *outs) {
  kd_tensor *A = args[0].v.t;
  const char *fn = "linalg.svd";
  bool old = code == KD_LAPACK_SVD_OLD, full = old ? !args[1].v.b || !args[2].v.b : args[1].v.b;
  KD_TRY(la_check_matrix(fn, A, false));
  int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], batch = la_batch(A);
  KD_TRY(la_check_int(fn, m));
  KD_TRY(la_check_int(fn, n));
  if (m == 0 || n == 0 || batch == 0) return la_device_empty(s, code, A, 0, old ? !args[1].v.b : full, !old || args[2].v.b, outs);
  { /* PyTorch's check for non-finite input (one sync) */
    kd_tensor *fin, *all, *h;
    LD(&fin, KD_OP_isfinite, kd_value_tensor(A));
    LD(&all, KD_OP_all, kd_value_tensor(fin), kd_value_none(), kd_value_bool(false));
    LD(&h, KD_OP_to, kd_value_tensor(all), kd_value_none(), kd_value_device(kd_device_cpu()), kd_value_bool(false));
    if (!*(const bool *)kd_tensor_data(h))
      return kd_error(LA_ERR, "%s: The algorithm failed to converge because the input matrix contained non-finite values.", fn);
  }
  bool wide = m < n;
  int64_t M = wide ? n : m, N = wide ? m : n, uc = full ? M : N;
  int nb = A->ndim - 2;
  kd_tensor *a, *S, *u, *vt, *info, *U, *Vh;
  KD_TRY(ld_copy(s, A, !wide, &a));
  int64_t sz[KD_MAX_DIMS];
  memcpy(sz, A->sizes, sizeof(int64_t) * (size_t)nb);
  kd_device dev = kd_tensor_device(A);
  sz[nb] = N;
  KD_TRY(kd_tensor_empty(sz, nb + 1, A->dtype, dev, &S));
  KD_TRY(kd_scope_keep(s, S));
  sz[nb] = uc;
  sz[nb + 1] = M;
  KD_TRY(kd_tensor_empty(sz, nb + 2, A->dtype, dev, &u)); /* column-major M x uc */
  KD_TRY(kd_scope_keep(s, u));
  sz[nb] = N;
  sz[nb + 1] = N;
  KD_TRY(kd_tensor_empty(sz, nb + 2, A->dtype, dev, &vt)); /* column-major N x N */
  KD_TRY(kd_scope_keep(s, vt));
  KD_TRY(ld_int32(s, A, nb, -1, &info));
  kd_dev_op op;
  memset(&op, 0, sizeof op);
  op.kind = KD_DEV_OP_LINALG_SVD;
  op.dtype = A->dtype;
  op.i[0] = M;
  op.i[1] = N;
  op.i[2] = batch;
  op.i[3] = full;
  void *p[5] = {kd_dev_ptr(a), kd_dev_ptr(S), kd_dev_ptr(u), kd_dev_ptr(vt), kd_dev_ptr(info)};
  const kd_dtype dts[5] = {A->dtype, A->dtype, A->dtype, A->dtype, KD_DTYPE_I32};
  KD_TRY(kd_dev_op_run_ptrs(dev, &op, 5, p, dts));
  if (op.result[0]) {
    char pre[48];
    return kd_error(LA_ERR, "%s: %sThe algorithm failed to converge because the input matrix is ill-conditioned or has too "
                    "many repeated singular values (error code: %lld).", fn, la_batch_prefix(A, op.result[0] - 1, pre, sizeof pre),
                    (long long)op.result[1] - 1);
  }
  if (wide) {
    U = vt;
    Vh = u;
  } else {
    kd_tensor *t;
    LD(&t, KD_OP_transpose, kd_value_tensor(u), kd_value_int(-2), kd_value_int(-1));
    LD(&U, KD_OP_contiguous, kd_value_tensor(t));
    LD(&t, KD_OP_transpose, kd_value_tensor(vt), kd_value_int(-2), kd_value_int(-1));
    LD(&Vh, KD_OP_contiguous, kd_value_tensor(t));
  }
  if (old) { /* torch.svd: V, zero-filled U and V without computeUv */
    kd_tensor *t;
    LD(&t, KD_OP_transpose, kd_value_tensor(Vh), kd_value_int(-2), kd_value_int(-1));
    LD(&Vh, KD_OP_contiguous, kd_value_tensor(t));
    if (!args[2].v.b) {
      LD(&U, KD_OP_zerosLike, kd_value_tensor(U), kd_value_none(), kd_value_none());
      LD(&Vh, KD_OP_zerosLike, kd_value_tensor(Vh), kd_value_none(), kd_value_none());
    }
  }
  kd_out_retain(outs, 0, U);
  kd_out_retain(outs, 1, S);
  kd_out_retain(outs, 2, Vh);
  return KD_OK;
}

/* solve_triangular of device tensors: cuBLAS trsm on column-major A and B (X A = B as
 * A^T X^T = B^T on the row-major copies, the triangle flipped). */
static kd_status la_device_solve_triangular(kd_scope *s, kd_value *args, kd_value *outs) {
  kd_tensor *A = args[0].v.t, *Bm = args[1].v.t;
  bool upper = args[2].v.b, left = args[3].v.b, unit = args[4].v.b;
  const char *fn = "linalg.solve_triangular";
  int64_t n = 0;
  KD_TRY(la_check_solve_triangular(A, Bm, left, &n));
  int64_t br = Bm->sizes[Bm->ndim - 2], bc = Bm->sizes[Bm->ndim - 1];
  KD_TRY(la_check_int(fn, n));
  int64_t bs[KD_MAX_DIMS], batch = 1;
  int nb;
  KD_TRY(kd_shape_broadcast(A->sizes, A->ndim - 2, Bm->sizes, Bm->ndim - 2, bs, &nb));
  for (int d = 0; d < nb; d++) batch *= bs[d];
  kd_tensor *Ae, *Be, *a, *b, *x, *r;
  KD_TRY(ld_expand(s, A, bs, nb, &Ae));
  KD_TRY(ld_expand(s, Bm, bs, nb, &Be));
  KD_TRY(ld_copy(s, Ae, left, &a));
  KD_TRY(ld_copy(s, Be, left, &b));
  int64_t k = left ? bc : br;
  if (n > 0 && k > 0 && batch > 0) {
    kd_dev_op op;
    memset(&op, 0, sizeof op);
    op.kind = KD_DEV_OP_LINALG_LU;
    op.code = 2;
    op.dtype = A->dtype;
    int64_t iv[5] = {n, batch, k, left ? upper : !upper, unit};
    memcpy(op.i, iv, sizeof iv);
    void *p[3] = {kd_dev_ptr(a), NULL, kd_dev_ptr(b)};
    const kd_dtype dts[3] = {A->dtype, KD_DTYPE_I32, A->dtype};
    KD_TRY(kd_dev_op_run_ptrs(kd_tensor_device(A), &op, 3, p, dts));
  }
  if (!left) {
    kd_out_retain(outs, 0, b);
    return KD_OK;
  }
  LD(&x, KD_OP_transpose, kd_value_tensor(b), kd_value_int(-2), kd_value_int(-1));
  LD(&r, KD_OP_contiguous, kd_value_tensor(x));
  kd_out_retain(outs, 0, r);
  return KD_OK;
}

/* det / slogdet / logdet / inv / solve / cholesky of device tensors (checks done by the caller's
 * checks, repeated here on shapes only). */
/* lstsq of device tensors: driver gels only, as PyTorch's CUDA (full rank assumed), through the
 * device QR and triangular solve: m >= n: A = Q R, X = R^-1 Q^T B; m < n (the minimum-norm
 * solution): A^T = Q R, X = Q R^-T B. Residuals (m > n): |A X - B|^2 summed over the rows;
 * rank and singular values empty, as gels gives them. */
static kd_status la_device_lstsq(kd_scope *s, kd_value *args, kd_value *outs) {
  kd_tensor *A = args[0].v.t, *Bm = args[1].v.t;
  KD_TRY(la_check_lstsq(A, Bm));
  la_lstsq_driver drv;
  KD_TRY(la_lstsq_driver_of(&args[3], LA_GELS, &drv));
  if (drv != LA_GELS)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "torch.linalg.lstsq: `driver` other than `gels` is not supported on CUDA");
  if (Bm->ndim == A->ndim - 1) { /* a batch of vectors: one-column matrices, the solution squeezed back */
    if (A->sizes[A->ndim - 2] != Bm->sizes[Bm->ndim - 1])
      return kd_error(KD_ERR_SHAPE, "torch.linalg.lstsq: input.size(-2) should match other.size(-1)");
    kd_tensor *col, *x;
    LD(&col, KD_OP_unsqueeze, kd_value_tensor(Bm), kd_value_int(-1));
    kd_value a2[4] = {args[0], kd_value_tensor(col), args[2], args[3]}, o[4];
    KD_TRY(la_device_lstsq(s, a2, o));
    for (int i = 0; i < 4; i++) KD_TRY(kd_scope_keep(s, o[i].v.t));
    int64_t lastd = -1;
    LD(&x, KD_OP_squeeze, kd_value_tensor(o[0].v.t), kd_value_intlist(&lastd, 1));
    kd_out_retain(outs, 0, x);
    for (int i = 1; i < 4; i++) kd_out_retain(outs, i, o[i].v.t);
    return KD_OK;
  }
  if (Bm->ndim < 2) return kd_error(KD_ERR_SHAPE, "torch.linalg.lstsq: other must have at least 2 dimensions.");
  int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1];
  if (Bm->sizes[Bm->ndim - 2] != m)
    return kd_error(KD_ERR_SHAPE, "torch.linalg.lstsq: input.size(-2) should match other.size(-2)");
  bool tall = m >= n;
  kd_tensor *F = A, *qr[2], *X, *t, *res, *rank, *sv;
  if (!tall) LD(&F, KD_OP_transpose, kd_value_tensor(A), kd_value_int(-2), kd_value_int(-1));
  kd_value qa[2] = {kd_value_tensor(F), {.kind = KD_VALUE_STRING, .v.str = "reduced"}}, qo[2];
  KD_TRY(la_device_qr(s, KD_LAPACK_QR, qa, qo));
  for (int i = 0; i < 2; i++) KD_TRY(kd_scope_keep(s, qo[i].v.t));
  qr[0] = qo[0].v.t;
  qr[1] = qo[1].v.t;
  kd_value so[1];
  if (tall) { /* X = R^-1 (Q^T B) */
    kd_tensor *qt;
    LD(&qt, KD_OP_transpose, kd_value_tensor(qr[0]), kd_value_int(-2), kd_value_int(-1));
    LD(&t, KD_OP_matmul, kd_value_tensor(qt), kd_value_tensor(Bm));
    kd_value sa[5] = {kd_value_tensor(qr[1]), kd_value_tensor(t), kd_value_bool(true), kd_value_bool(true), kd_value_bool(false)};
    KD_TRY(la_device_solve_triangular(s, sa, so));
    KD_TRY(kd_scope_keep(s, so[0].v.t));
    X = so[0].v.t;
  } else { /* X = Q (R^-T B): R^T is lower triangular */
    kd_tensor *rt;
    LD(&rt, KD_OP_transpose, kd_value_tensor(qr[1]), kd_value_int(-2), kd_value_int(-1));
    kd_value sa[5] = {kd_value_tensor(rt), kd_value_tensor(Bm), kd_value_bool(false), kd_value_bool(true), kd_value_bool(false)};
    KD_TRY(la_device_solve_triangular(s, sa, so));
    KD_TRY(kd_scope_keep(s, so[0].v.t));
    LD(&X, KD_OP_matmul, kd_value_tensor(qr[0]), kd_value_tensor(so[0].v.t));
  }
  LD(&X, KD_OP_contiguous, kd_value_tensor(X));
  int64_t z = 0, last = -2;
  kd_device dev = kd_tensor_device(A);
  if (m > n) {
    kd_tensor *ax, *d;
    LD(&ax, KD_OP_matmul, kd_value_tensor(A), kd_value_tensor(X));
    LD(&d, KD_OP_sub, kd_value_tensor(ax), kd_value_tensor(Bm), kd_value_scalar(kd_scalar_i(1)));
    LD(&d, KD_OP_mul, kd_value_tensor(d), kd_value_tensor(d));
    LD(&res, KD_OP_sum, kd_value_tensor(d), kd_value_intlist(&last, 1), kd_value_bool(false), kd_value_none());
  } else {
    LD(&res, KD_OP_empty, kd_value_intlist(&z, 1), kd_value_dtype(A->dtype), kd_value_device(dev));
  }
  LD(&rank, KD_OP_empty, kd_value_intlist(&z, 1), kd_value_dtype(KD_DTYPE_I64), kd_value_device(dev));
  LD(&sv, KD_OP_empty, kd_value_intlist(&z, 1), kd_value_dtype(A->dtype), kd_value_device(dev));
  kd_out_retain(outs, 0, X);
  kd_out_retain(outs, 1, res);
  kd_out_retain(outs, 2, rank);
  kd_out_retain(outs, 3, sv);
  return KD_OK;
}

static kd_status la_device(kd_scope *s, int code, kd_value *args, kd_value *outs) {
  kd_tensor *A = args[0].v.t;
  const char *fn = la_fn_name(code);
  bool square = code != KD_LAPACK_QR && code != KD_LAPACK_QR_OLD && code != KD_LAPACK_SVD && code != KD_LAPACK_SVD_OLD &&
                code != KD_LAPACK_LSTSQ;
  if (code == KD_LAPACK_QR || code == KD_LAPACK_QR_OLD) return la_device_qr(s, code, args, outs);
  if (code == KD_LAPACK_SVD || code == KD_LAPACK_SVD_OLD) return la_device_svd(s, code, args, outs);
  if (code == KD_LAPACK_SOLVE_TRIANGULAR) return la_device_solve_triangular(s, args, outs);
  if (code == KD_LAPACK_LSTSQ) return la_device_lstsq(s, args, outs);
  if (!square)
    return kd_error(KD_ERR_NOT_SUPPORTED, "%s: no kernel for tensors on CUDA yet (only det, slogdet, logdet, inv, solve, "
                    "cholesky, qr and eigh)", fn);
  if (code == KD_LAPACK_EIGH) {
    const char *uplo = args[1].v.str;
    if (strcmp(uplo, "L") != 0 && strcmp(uplo, "U") != 0)
      return kd_error(KD_ERR_INVALID_ARGUMENT, "Expected UPLO argument to be 'L' or 'U', but got %s", uplo);
    if (A->ndim >= 2 && A->sizes[A->ndim - 1] == A->sizes[A->ndim - 2] && !la_is_float(A))
      return kd_error(KD_ERR_NOT_SUPPORTED, "\"linalg_eigh_cpu\" not implemented for '%s'", kd_cpu_torch_name(A->dtype));
  }
  KD_TRY(la_check_cholesky_old(code, A));
  KD_TRY(la_check_matrix(fn, A, true));
  int64_t n = A->sizes[A->ndim - 1];
  KD_TRY(la_check_int(fn, n));
  char pre[48];
  if (code == KD_LAPACK_CHOLESKY || code == KD_LAPACK_CHOLESKY_OLD) {
    int nb = A->ndim - 2;
    kd_tensor *a, *info, *t, *r;
    KD_TRY(ld_copy(s, A, true, &a));
    int64_t batch = la_batch(A), bad = 0, i = 0;
    KD_TRY(ld_int32(s, A, nb, -1, &info));
    if (n > 0 && batch > 0) KD_TRY(ld_run(a, KD_DEV_OP_LINALG_CHOLESKY, 0, n, batch, 0, info, NULL, &bad, &i));
    if (bad)
      return kd_error(LA_ERR, "%s: %sThe factorization could not be completed because the input is not positive-definite "
                      "(the leading minor of order %lld is not positive-definite).", fn, la_batch_prefix(A, bad - 1, pre, sizeof pre),
                      (long long)i);
    /* a holds L^T row-major: its upper triangle is L^T */
    LD(&t, KD_OP_triu, kd_value_tensor(a), kd_value_int(0));
    if (args[1].v.b) {
      kd_out_retain(outs, 0, t);
      return KD_OK;
    }
    LD(&t, KD_OP_transpose, kd_value_tensor(t), kd_value_int(-2), kd_value_int(-1));
    LD(&r, KD_OP_contiguous, kd_value_tensor(t));
    kd_out_retain(outs, 0, r);
    return KD_OK;
  }
  if (code == KD_LAPACK_EIGH) { /* syevd on column-major A: eigenvectors column-major in place */
    int nb = A->ndim - 2;
    kd_tensor *a, *w, *info, *v, *r;
    KD_TRY(ld_copy(s, A, true, &a));
    int64_t sz[KD_MAX_DIMS], batch = la_batch(A), bad = 0, i = 0;
    memcpy(sz, A->sizes, sizeof(int64_t) * (size_t)(nb + 1));
    KD_TRY(kd_tensor_empty(sz, nb + 1, A->dtype, kd_tensor_device(A), &w));
    KD_TRY(kd_scope_keep(s, w));
    KD_TRY(ld_int32(s, A, nb, -1, &info));
    if (n > 0 && batch > 0) {
      kd_dev_op op;
      memset(&op, 0, sizeof op);
      op.kind = KD_DEV_OP_LINALG_EIGH;
      op.dtype = A->dtype;
      op.i[0] = n;
      op.i[1] = batch;
      op.i[2] = !strcmp(args[1].v.str, "U");
      void *p[3] = {kd_dev_ptr(a), kd_dev_ptr(w), kd_dev_ptr(info)};
      const kd_dtype dts[3] = {A->dtype, A->dtype, KD_DTYPE_I32};
      KD_TRY(kd_dev_op_run_ptrs(kd_tensor_device(A), &op, 3, p, dts));
      bad = op.result[0];
      i = op.result[1];
    }
    if (bad)
      return kd_error(LA_ERR, "%s: %sThe algorithm failed to converge because the input matrix is ill-conditioned or has "
                      "too many repeated eigenvalues (error code: %lld).", fn, la_batch_prefix(A, bad - 1, pre, sizeof pre), (long long)i);
    LD(&v, KD_OP_transpose, kd_value_tensor(a), kd_value_int(-2), kd_value_int(-1));
    LD(&r, KD_OP_contiguous, kd_value_tensor(v));
    kd_out_retain(outs, 0, w);
    kd_out_retain(outs, 1, r);
    return KD_OK;
  }
  /* LU: A X = B (left) on column-major A and B; X A = B as A^T X^T = B^T (the row-major memory) */
  kd_tensor *Bm = NULL;
  bool left = true;
  if (code == KD_LAPACK_SOLVE) {
    Bm = args[1].v.t;
    left = args[2].v.b;
    if (Bm->ndim < 2) return kd_error(KD_ERR_SHAPE, "%s: The input tensor B must have at least 2 dimensions.", fn);
    if (A->dtype != Bm->dtype)
      return kd_error(KD_ERR_DTYPE, "%s: Expected A and B to have the same dtype, but found A of type %s and B of type %s instead",
                      fn, kd_cpu_torch_name(A->dtype), kd_cpu_torch_name(Bm->dtype));
    int64_t br = Bm->sizes[Bm->ndim - 2], bc = Bm->sizes[Bm->ndim - 1];
    if ((left ? br : bc) != n)
      return kd_error(KD_ERR_SHAPE, "%s: Incompatible shapes of A and B for the equation %s = B (%lldx%lld and %lldx%lld)", fn,
                      left ? "AX" : "XA", (long long)n, (long long)n, (long long)br, (long long)bc);
  }
  int64_t bs[KD_MAX_DIMS];
  int nb = A->ndim - 2;
  memcpy(bs, A->sizes, sizeof(int64_t) * (size_t)nb);
  if (Bm) KD_TRY(kd_shape_broadcast(A->sizes, A->ndim - 2, Bm->sizes, Bm->ndim - 2, bs, &nb));
  int64_t batch = 1;
  for (int d = 0; d < nb; d++) batch *= bs[d];
  kd_tensor *Ae, *a, *piv, *info;
  KD_TRY(ld_expand(s, A, bs, nb, &Ae));
  KD_TRY(ld_copy(s, Ae, left, &a));
  KD_TRY(ld_int32(s, a, nb, n, &piv));
  KD_TRY(ld_int32(s, a, nb, -1, &info));
  int64_t bad = 0, i = 0;
  if (n > 0 && batch > 0) KD_TRY(ld_run(a, KD_DEV_OP_LINALG_LU, 0, n, batch, 0, piv, info, &bad, &i));
  if (code == KD_LAPACK_INV || code == KD_LAPACK_SOLVE) {
    if (bad && code == KD_LAPACK_INV)
      return kd_error(LA_ERR, "%s: %sThe diagonal element %lld is zero, the inversion could not be completed because the input "
                      "matrix is singular.", fn, la_batch_prefix(A, bad - 1, pre, sizeof pre), (long long)i);
    if (bad)
      return kd_error(LA_ERR, "torch.linalg.solve: %sThe solver failed because the input matrix is singular.",
                      nb > 0 ? la_batch_prefix(A->ndim > 2 ? A : Bm, bad - 1, pre, sizeof pre) : "");
    kd_tensor *b, *x, *r;
    if (code == KD_LAPACK_INV) {
      kd_tensor *I;
      LD(&I, KD_OP_eye, kd_value_int(n), kd_value_none(), kd_value_dtype(A->dtype), kd_value_device(kd_tensor_device(A)));
      KD_TRY(ld_expand(s, I, bs, nb, &I));
      KD_TRY(ld_copy(s, I, false, &b));
    } else {
      kd_tensor *Be;
      KD_TRY(ld_expand(s, Bm, bs, nb, &Be));
      KD_TRY(ld_copy(s, Be, left, &b)); /* column-major B (left) or B^T */
    }
    int64_t k = b->sizes[b->ndim - 2];
    if (n > 0 && k > 0 && batch > 0) KD_TRY(ld_run(a, KD_DEV_OP_LINALG_LU, 1, n, batch, k, piv, b, NULL, NULL));
    if (!left) {
      kd_out_retain(outs, 0, b);
      return KD_OK;
    }
    LD(&x, KD_OP_transpose, kd_value_tensor(b), kd_value_int(-2), kd_value_int(-1));
    LD(&r, KD_OP_contiguous, kd_value_tensor(x));
    kd_out_retain(outs, 0, r);
    return KD_OK;
  }
  /* det family from the LU factors: product of U's diagonal, sign of the pivot permutation */
  int64_t last = -1;
  kd_tensor *diag, *ar, *moved, *cnt, *odd, *psign, *r;
  LD(&diag, KD_OP_diagonal, kd_value_tensor(a), kd_value_int(0), kd_value_int(-2), kd_value_int(-1));
  LD(&ar, KD_OP_arange, kd_value_scalar(kd_scalar_i(1)), kd_value_scalar(kd_scalar_i(n + 1)), kd_value_scalar(kd_scalar_i(1)),
     kd_value_dtype(KD_DTYPE_I32), kd_value_device(kd_tensor_device(A)));
  LD(&moved, KD_OP_ne, kd_value_tensor(piv), kd_value_tensor(ar));
  LD(&cnt, KD_OP_sum, kd_value_tensor(moved), kd_value_intlist(&last, 1), kd_value_bool(false), kd_value_dtype(KD_DTYPE_I64));
  LD(&odd, KD_OP_remainder, kd_value_tensor(cnt), kd_value_scalar(kd_scalar_i(2)));
  LD(&psign, KD_OP_mul, kd_value_tensor(odd), kd_value_scalar(kd_scalar_i(-2)));
  LD(&psign, KD_OP_add, kd_value_tensor(psign), kd_value_scalar(kd_scalar_i(1)), kd_value_scalar(kd_scalar_i(1)));
  if (code == KD_LAPACK_DET) {
    kd_tensor *p;
    LD(&p, KD_OP_prod, kd_value_tensor(diag), kd_value_int(-1), kd_value_bool(false), kd_value_none());
    LD(&r, KD_OP_mul, kd_value_tensor(p), kd_value_tensor(psign));
    LD(&r, KD_OP_to, kd_value_tensor(r), kd_value_dtype(A->dtype), kd_value_none(), kd_value_bool(false));
    kd_out_retain(outs, 0, r);
    return KD_OK;
  }
  kd_tensor *sg, *dsign, *sign, *ab, *lg, *logabs;
  LD(&sg, KD_OP_sign, kd_value_tensor(diag));
  LD(&dsign, KD_OP_prod, kd_value_tensor(sg), kd_value_int(-1), kd_value_bool(false), kd_value_none());
  LD(&sign, KD_OP_mul, kd_value_tensor(dsign), kd_value_tensor(psign));
  LD(&sign, KD_OP_to, kd_value_tensor(sign), kd_value_dtype(A->dtype), kd_value_none(), kd_value_bool(false));
  LD(&ab, KD_OP_abs, kd_value_tensor(diag));
  LD(&lg, KD_OP_log, kd_value_tensor(ab));
  LD(&logabs, KD_OP_sum, kd_value_tensor(lg), kd_value_intlist(&last, 1), kd_value_bool(false), kd_value_none());
  if (code == KD_LAPACK_SLOGDET) {
    kd_out_retain(outs, 0, sign);
    kd_out_retain(outs, 1, logabs);
    return KD_OK;
  }
  kd_tensor *neg;
  LD(&neg, KD_OP_lt, kd_value_tensor(sign), kd_value_scalar(kd_scalar_i(0)));
  LD(&r, KD_OP_where, kd_value_tensor(neg), kd_value_scalar(kd_scalar_f(NAN)), kd_value_tensor(logabs));
  kd_out_retain(outs, 0, r);
  return KD_OK;
}

KD_KERNEL(kd_cpu_linalg) {
  (void)ks;
  int code = op->code;
  kd_tensor *A = args[0].v.t;
  for (int i = 0; i < 2 && i < op->nargs; i++)
    if (args[i].kind == KD_VALUE_TENSOR && kd_tensor_device(args[i].v.t).type != KD_DEVICE_CPU) {
      if (i == 1 && kd_tensor_device(A).type != kd_tensor_device(args[1].v.t).type)
        return kd_error(KD_ERR_DEVICE, "Expected all tensors to be on the same device");
      kd_scope sc;
      kd_scope_init(&sc);
      kd_status st = la_device(&sc, code, args, outs);
      kd_scope_release(&sc);
      return st;
    }
  if (code == KD_LAPACK_SOLVE_TRIANGULAR)
    return la_solve_triangular(A, args[1].v.t, args[2].v.b, args[3].v.b, args[4].v.b, outs);
#if KD_HAVE_LAPACK
  switch (code) {
    case KD_LAPACK_DET: case KD_LAPACK_SLOGDET: case KD_LAPACK_LOGDET: case KD_LAPACK_INV:
      return la_lu_family(code, A, outs);
    case KD_LAPACK_SOLVE: return la_solve(A, args[1].v.t, args[2].v.b, outs);
    case KD_LAPACK_CHOLESKY: case KD_LAPACK_CHOLESKY_OLD: return la_cholesky(code, A, args[1].v.b, outs);
    case KD_LAPACK_QR: {
      const char *m = args[1].v.str;
      int mode = !strcmp(m, "reduced") ? 0 : !strcmp(m, "complete") ? 1 : !strcmp(m, "r") ? 2 : -1;
      if (mode < 0)
        return kd_error(KD_ERR_INVALID_ARGUMENT, "qr received unrecognized mode '%s' but expected one of 'reduced' (default), "
                        "'r', or 'complete'", m);
      return la_qr(A, mode, outs);
    }
    case KD_LAPACK_QR_OLD: return la_qr(A, args[1].v.b ? 0 : 1, outs);
    case KD_LAPACK_SVD: return la_svd(A, args[1].v.b, true, false, outs);
    case KD_LAPACK_SVD_OLD: return la_svd(A, !args[1].v.b, args[2].v.b, true, outs);
    case KD_LAPACK_EIGH: return la_eigh(A, args[1].v.str, outs);
    case KD_LAPACK_LSTSQ: return la_lstsq(A, args[1].v.t, &args[2], &args[3], outs);
    default: return kd_error(KD_ERR_INTERNAL, "linalg: unknown code %d", code);
  }
#else
  (void)outs;
  return la_no_lapack(la_fn_name(code));
#endif
}
