/* cusolver.cpp - the emulated cuSOLVER dense API (include/cusolverDn.h) on LAPACK (OpenBLAS's):
 * LU, Cholesky, QR, SVD and symmetric eigenvalue routines for float and double with cuSOLVER's
 * semantics. Each call checks its arguments when called (cuSOLVER's numbering, from 1 without the
 * handle; matrices, workspaces and devInfo must lie in device memory, lwork must reach what the
 * routine's _bufferSize returned), then runs on the handle's stream in stream order and writes
 * devInfo there: 0, or > 0 for a singular / not positive definite / unconverged matrix. A refused
 * call returns CUSOLVER_STATUS_INVALID_VALUE and, when devInfo itself is device memory, writes
 * -i to it in stream order. The workspace a routine asks for is LAPACK's optimal lwork (one
 * column where LAPACK needs none), and LAPACK works in it; arrays of matrices (potrfBatched,
 * potrsBatched) are read when the call runs, and a pointer in them outside device memory is a
 * sticky cudaErrorIllegalAddress, as the fault it is on a GPU. The Jacobi routines (syevj,
 * gesvdj and their batches) run LAPACK's divide-and-conquer / QR algorithms: results are sorted,
 * the tolerance and sweep limit are kept but not used, one sweep is reported. */
#include <limits.h>
#include <math.h>
#include <string.h>

#include <functional>
#include <vector>

#include "cusolverDn.h"
#include "emu.h"
#include "lapack.h"

using kd_emu::extent;
using kd_emu::lapack;
using kd_emu::matrix_at;
using kd_emu::on_device;

struct cusolverDnContext {
  cudaStream_t stream = nullptr;
};

/* The Jacobi routines' parameters and the results of their last unbatched run. */
struct jacobi_params {
  double tolerance = 0; /* 0: machine accuracy */
  int max_sweeps = 100;
  int sort = 1;
  double residual = 0;
  int sweeps = 0;
  bool batched = false; /* the last run was a batch: no residual or sweeps to report */
};
struct syevjInfo : jacobi_params {};
struct gesvdjInfo : jacobi_params {};

extern "C" {

cusolverStatus_t cusolverGetVersion(int *version) {
  if (!version) return CUSOLVER_STATUS_INVALID_VALUE;
  *version = CUSOLVER_VERSION;
  return CUSOLVER_STATUS_SUCCESS;
}

cusolverStatus_t cusolverDnCreate(cusolverDnHandle_t *handle) {
  if (!handle) return CUSOLVER_STATUS_INVALID_VALUE;
  *handle = new cusolverDnContext();
  return CUSOLVER_STATUS_SUCCESS;
}
cusolverStatus_t cusolverDnDestroy(cusolverDnHandle_t handle) {
  if (!handle) return CUSOLVER_STATUS_NOT_INITIALIZED;
  delete handle;
  return CUSOLVER_STATUS_SUCCESS;
}
cusolverStatus_t cusolverDnSetStream(cusolverDnHandle_t handle, cudaStream_t streamId) {
  if (!handle) return CUSOLVER_STATUS_NOT_INITIALIZED;
  handle->stream = streamId;
  return CUSOLVER_STATUS_SUCCESS;
}
cusolverStatus_t cusolverDnGetStream(cusolverDnHandle_t handle, cudaStream_t *streamId) {
  if (!handle) return CUSOLVER_STATUS_NOT_INITIALIZED;
  if (!streamId) return CUSOLVER_STATUS_INVALID_VALUE;
  *streamId = handle->stream;
  return CUSOLVER_STATUS_SUCCESS;
}

}  // extern "C"

namespace {

/* The Jacobi parameter entry points of both kinds. */
template <typename P>
cusolverStatus_t params_create(P **info) {
  if (!info) return CUSOLVER_STATUS_INVALID_VALUE;
  *info = new P();
  return CUSOLVER_STATUS_SUCCESS;
}
template <typename P>
cusolverStatus_t params_destroy(P *info) {
  delete info;
  return CUSOLVER_STATUS_SUCCESS;
}
cusolverStatus_t set_tolerance(jacobi_params *p, double tolerance) {
  if (!p) return CUSOLVER_STATUS_INVALID_VALUE;
  p->tolerance = tolerance;
  return CUSOLVER_STATUS_SUCCESS;
}
cusolverStatus_t set_max_sweeps(jacobi_params *p, int sweeps) {
  if (!p || sweeps <= 0) return CUSOLVER_STATUS_INVALID_VALUE;
  p->max_sweeps = sweeps;
  return CUSOLVER_STATUS_SUCCESS;
}
cusolverStatus_t set_sort(jacobi_params *p, int sort) {
  if (!p) return CUSOLVER_STATUS_INVALID_VALUE;
  p->sort = sort;
  return CUSOLVER_STATUS_SUCCESS;
}
cusolverStatus_t get_residual(cusolverDnHandle_t h, const jacobi_params *p, double *residual) {
  if (!h) return CUSOLVER_STATUS_NOT_INITIALIZED;
  if (!p || !residual) return CUSOLVER_STATUS_INVALID_VALUE;
  if (p->batched) return CUSOLVER_STATUS_NOT_SUPPORTED;
  *residual = p->residual;
  return CUSOLVER_STATUS_SUCCESS;
}
cusolverStatus_t get_sweeps(cusolverDnHandle_t h, const jacobi_params *p, int *sweeps) {
  if (!h) return CUSOLVER_STATUS_NOT_INITIALIZED;
  if (!p || !sweeps) return CUSOLVER_STATUS_INVALID_VALUE;
  if (p->batched) return CUSOLVER_STATUS_NOT_SUPPORTED;
  *sweeps = p->sweeps;
  return CUSOLVER_STATUS_SUCCESS;
}

/* The first invalid argument of a call, numbered as devInfo reports it (from 1, not counting the
 * handle); 0 when all are valid. */
struct arg_check {
  int bad = 0;
  void need(int position, bool ok) {
    if (!ok && (!bad || position < bad)) bad = position;
  }
};

int at_least_1(long long v) { return v > 1 ? (int)v : 1; }

/* A _bufferSize's answer: the workspace in elements (at least 1), or the refusal. */
cusolverStatus_t buffer_size(cusolverDnHandle_t h, const arg_check &a, int *lwork, long long need) {
  if (!h) return CUSOLVER_STATUS_NOT_INITIALIZED;
  if (a.bad || !lwork || need > INT_MAX) return CUSOLVER_STATUS_INVALID_VALUE;
  *lwork = at_least_1(need);
  return CUSOLVER_STATUS_SUCCESS;
}

/* Runs work on the handle's stream, or refuses the call (writing -i to devInfo in stream order
 * when devInfo is device memory). */
cusolverStatus_t submit(cusolverDnHandle_t h, const char *name, const arg_check &a, int *info,
                        std::function<void()> work) {
  if (!h) return CUSOLVER_STATUS_NOT_INITIALIZED;
  if (a.bad) {
    if (on_device(info, 1, sizeof(int))) {
      const int v = -a.bad;
      kd_emu::enqueue(h->stream, name, 0, [info, v] { *info = v; });
    }
    return CUSOLVER_STATUS_INVALID_VALUE;
  }
  if (kd_emu::enqueue(h->stream, name, 1, std::move(work)) != cudaSuccess) return CUSOLVER_STATUS_EXECUTION_FAILED;
  return CUSOLVER_STATUS_SUCCESS;
}

char fill_char(cublasFillMode_t uplo) {
  return uplo == CUBLAS_FILL_MODE_LOWER ? 'L' : uplo == CUBLAS_FILL_MODE_UPPER ? 'U' : 0;
}
char op_char(cublasOperation_t op) {
  return op == CUBLAS_OP_N ? 'N' : op == CUBLAS_OP_T ? 'T' : op == CUBLAS_OP_C ? 'C' : 0;
}
bool eig_mode_ok(cusolverEigMode_t jobz) {
  return jobz == CUSOLVER_EIG_MODE_NOVECTOR || jobz == CUSOLVER_EIG_MODE_VECTOR;
}
int min_of(int a, int b) { return a < b ? a : b; }
int max1(int v) { return v > 1 ? v : 1; }

/* ---- LU ---- */
template <typename T>
cusolverStatus_t getrf_buffer_size(cusolverDnHandle_t h, int m, int n, int lda, int *lwork) {
  arg_check a;
  a.need(1, m >= 0);
  a.need(2, n >= 0);
  a.need(4, lda >= max1(m));
  return buffer_size(h, a, lwork, n);
}
template <typename T>
cusolverStatus_t getrf(cusolverDnHandle_t h, int m, int n, T *A, int lda, T *ws, int *ipiv, int *info) {
  arg_check a;
  a.need(1, m >= 0);
  a.need(2, n >= 0);
  a.need(4, lda >= max1(m));
  a.need(3, a.bad || on_device(A, extent(m, n, lda), sizeof(T)));
  a.need(5, on_device(ws, max1(n), sizeof(T)));
  a.need(6, !ipiv || on_device(ipiv, min_of(m, n), sizeof(int)));
  a.need(7, on_device(info, 1, sizeof(int)));
  return submit(h, "cusolverDnXgetrf", a, info, [=] {
    *info = ipiv ? lapack<T>::getrf(m, n, A, lda, ipiv) : kd_emu::lu_unpivoted(m, n, A, lda);
  });
}
template <typename T>
cusolverStatus_t getrs(cusolverDnHandle_t h, cublasOperation_t trans, int n, int nrhs, const T *A, int lda,
                       const int *ipiv, T *B, int ldb, int *info) {
  arg_check a;
  const char t = op_char(trans);
  a.need(1, t != 0);
  a.need(2, n >= 0);
  a.need(3, nrhs >= 0);
  a.need(5, lda >= max1(n));
  a.need(8, ldb >= max1(n));
  a.need(4, a.bad || on_device(A, extent(n, n, lda), sizeof(T)));
  a.need(6, !ipiv || on_device(ipiv, n, sizeof(int)));
  a.need(7, a.bad || on_device(B, extent(n, nrhs, ldb), sizeof(T)));
  a.need(9, on_device(info, 1, sizeof(int)));
  return submit(h, "cusolverDnXgetrs", a, info, [=] {
    if (ipiv) *info = lapack<T>::getrs(t, n, nrhs, A, lda, ipiv, B, ldb);
    else {
      kd_emu::lu_unpivoted_solve(t != 'N', n, nrhs, A, lda, B, ldb);
      *info = 0;
    }
  });
}

/* ---- Cholesky ---- */
template <typename T>
cusolverStatus_t potrf_buffer_size(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, int lda, int *lwork) {
  arg_check a;
  a.need(1, fill_char(uplo) != 0);
  a.need(2, n >= 0);
  a.need(4, lda >= max1(n));
  return buffer_size(h, a, lwork, n);
}
/* potrf and potri: in place on the uplo triangle, with a nominal workspace of one column. */
template <typename T>
cusolverStatus_t potrf_potri(cusolverDnHandle_t h, bool inverse, cublasFillMode_t uplo, int n, T *A, int lda,
                             T *work, int lwork, int *info) {
  arg_check a;
  const char u = fill_char(uplo);
  a.need(1, u != 0);
  a.need(2, n >= 0);
  a.need(4, lda >= max1(n));
  a.need(3, a.bad || on_device(A, extent(n, n, lda), sizeof(T)));
  a.need(6, lwork >= max1(n));
  a.need(5, a.bad || on_device(work, lwork, sizeof(T)));
  a.need(7, on_device(info, 1, sizeof(int)));
  return submit(h, inverse ? "cusolverDnXpotri" : "cusolverDnXpotrf", a, info, [=] {
    *info = inverse ? lapack<T>::potri(u, n, A, lda) : lapack<T>::potrf(u, n, A, lda);
  });
}
template <typename T>
cusolverStatus_t potrs(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, int nrhs, const T *A, int lda, T *B,
                       int ldb, int *info) {
  arg_check a;
  const char u = fill_char(uplo);
  a.need(1, u != 0);
  a.need(2, n >= 0);
  a.need(3, nrhs >= 0);
  a.need(5, lda >= max1(n));
  a.need(7, ldb >= max1(n));
  a.need(4, a.bad || on_device(A, extent(n, n, lda), sizeof(T)));
  a.need(6, a.bad || on_device(B, extent(n, nrhs, ldb), sizeof(T)));
  a.need(8, on_device(info, 1, sizeof(int)));
  return submit(h, "cusolverDnXpotrs", a, info, [=] { *info = lapack<T>::potrs(u, n, nrhs, A, lda, B, ldb); });
}
template <typename T>
cusolverStatus_t potrf_batched(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, T *const *Aarray, int lda,
                               int *info, int batch) {
  arg_check a;
  const char u = fill_char(uplo);
  a.need(1, u != 0);
  a.need(2, n >= 0);
  a.need(4, lda >= max1(n));
  a.need(6, batch >= 0);
  a.need(3, a.bad || on_device(Aarray, batch, sizeof(T *)));
  a.need(5, a.bad || on_device(info, batch, sizeof(int)));
  return submit(h, "cusolverDnXpotrfBatched", a, info, [=] {
    for (int i = 0; i < batch; i++) info[i] = lapack<T>::potrf(u, n, matrix_at(Aarray, i, extent(n, n, lda)), lda);
  });
}
/* cuSOLVER solves one right-hand side per matrix here; d_info is one int (the argument check). */
template <typename T>
cusolverStatus_t potrs_batched(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, int nrhs, T *const *A, int lda,
                               T *const *B, int ldb, int *info, int batch) {
  arg_check a;
  const char u = fill_char(uplo);
  a.need(1, u != 0);
  a.need(2, n >= 0);
  a.need(3, nrhs == 1);
  a.need(5, lda >= max1(n));
  a.need(7, ldb >= max1(n));
  a.need(9, batch >= 0);
  a.need(4, a.bad || on_device(A, batch, sizeof(T *)));
  a.need(6, a.bad || on_device(B, batch, sizeof(T *)));
  a.need(8, on_device(info, 1, sizeof(int)));
  return submit(h, "cusolverDnXpotrsBatched", a, info, [=] {
    for (int i = 0; i < batch; i++)
      lapack<T>::potrs(u, n, nrhs, matrix_at(A, i, extent(n, n, lda)), lda, matrix_at(B, i, extent(n, nrhs, ldb)),
                       ldb);
    *info = 0;
  });
}

/* ---- QR ---- */
template <typename T>
long long geqrf_lwork(int m, int n, int lda) {
  T w = 0, dummy = 0;
  lapack<T>::geqrf(m, n, &dummy, lda, &dummy, &w, -1);
  return (long long)w;
}
template <typename T>
cusolverStatus_t geqrf_buffer_size(cusolverDnHandle_t h, int m, int n, int lda, int *lwork) {
  arg_check a;
  a.need(1, m >= 0);
  a.need(2, n >= 0);
  a.need(4, lda >= max1(m));
  return buffer_size(h, a, lwork, a.bad ? 0 : geqrf_lwork<T>(m, n, lda));
}
template <typename T>
cusolverStatus_t geqrf(cusolverDnHandle_t h, int m, int n, T *A, int lda, T *tau, T *work, int lwork, int *info) {
  arg_check a;
  a.need(1, m >= 0);
  a.need(2, n >= 0);
  a.need(4, lda >= max1(m));
  a.need(3, a.bad || on_device(A, extent(m, n, lda), sizeof(T)));
  a.need(5, a.bad || on_device(tau, min_of(m, n), sizeof(T)));
  a.need(7, a.bad || lwork >= at_least_1(geqrf_lwork<T>(m, n, lda)));
  a.need(6, a.bad || on_device(work, lwork, sizeof(T)));
  a.need(8, on_device(info, 1, sizeof(int)));
  return submit(h, "cusolverDnXgeqrf", a, info, [=] { *info = lapack<T>::geqrf(m, n, A, lda, tau, work, lwork); });
}
template <typename T>
long long orgqr_lwork(int m, int n, int k, int lda) {
  T w = 0, dummy = 0;
  lapack<T>::orgqr(m, n, k, &dummy, lda, &dummy, &w, -1);
  return (long long)w;
}
void orgqr_sizes(arg_check &a, int m, int n, int k, int lda) {
  a.need(1, m >= 0);
  a.need(2, n >= 0 && n <= m);
  a.need(3, k >= 0 && k <= n);
  a.need(5, lda >= max1(m));
}
template <typename T>
cusolverStatus_t orgqr_buffer_size(cusolverDnHandle_t h, int m, int n, int k, int lda, int *lwork) {
  arg_check a;
  orgqr_sizes(a, m, n, k, lda);
  return buffer_size(h, a, lwork, a.bad ? 0 : orgqr_lwork<T>(m, n, k, lda));
}
template <typename T>
cusolverStatus_t orgqr(cusolverDnHandle_t h, int m, int n, int k, T *A, int lda, const T *tau, T *work, int lwork,
                       int *info) {
  arg_check a;
  orgqr_sizes(a, m, n, k, lda);
  a.need(4, a.bad || on_device(A, extent(m, n, lda), sizeof(T)));
  a.need(6, a.bad || on_device(tau, k, sizeof(T)));
  a.need(8, a.bad || lwork >= at_least_1(orgqr_lwork<T>(m, n, k, lda)));
  a.need(7, a.bad || on_device(work, lwork, sizeof(T)));
  a.need(9, on_device(info, 1, sizeof(int)));
  return submit(h, "cusolverDnXorgqr", a, info, [=] { *info = lapack<T>::orgqr(m, n, k, A, lda, tau, work, lwork); });
}
template <typename T>
long long ormqr_lwork(char side, char trans, int m, int n, int k, int lda, int ldc) {
  T w = 0, dummy = 0;
  lapack<T>::ormqr(side, trans, m, n, k, &dummy, lda, &dummy, &dummy, ldc, &w, -1);
  return (long long)w;
}
/* Q is nq x nq (nq = m on the left, n on the right), from k reflectors; the real routines take
 * CUBLAS_OP_C as CUBLAS_OP_T. */
void ormqr_sizes(arg_check &a, cublasSideMode_t side, cublasOperation_t trans, int m, int n, int k, int lda,
                 int ldc) {
  const int nq = side == CUBLAS_SIDE_LEFT ? m : n;
  a.need(1, side == CUBLAS_SIDE_LEFT || side == CUBLAS_SIDE_RIGHT);
  a.need(2, op_char(trans) != 0);
  a.need(3, m >= 0);
  a.need(4, n >= 0);
  a.need(5, k >= 0 && k <= nq);
  a.need(7, lda >= max1(nq));
  a.need(10, ldc >= max1(m));
}
char side_char(cublasSideMode_t side) { return side == CUBLAS_SIDE_LEFT ? 'L' : 'R'; }
char real_op_char(cublasOperation_t op) { return op == CUBLAS_OP_N ? 'N' : 'T'; }
template <typename T>
cusolverStatus_t ormqr_buffer_size(cusolverDnHandle_t h, cublasSideMode_t side, cublasOperation_t trans, int m, int n,
                                   int k, int lda, int ldc, int *lwork) {
  arg_check a;
  ormqr_sizes(a, side, trans, m, n, k, lda, ldc);
  return buffer_size(h, a, lwork,
                     a.bad ? 0 : ormqr_lwork<T>(side_char(side), real_op_char(trans), m, n, k, lda, ldc));
}
template <typename T>
cusolverStatus_t ormqr(cusolverDnHandle_t h, cublasSideMode_t side, cublasOperation_t trans, int m, int n, int k,
                       const T *A, int lda, const T *tau, T *C, int ldc, T *work, int lwork, int *info) {
  arg_check a;
  ormqr_sizes(a, side, trans, m, n, k, lda, ldc);
  const char s = side_char(side), t = real_op_char(trans);
  const int nq = side == CUBLAS_SIDE_LEFT ? m : n;
  a.need(6, a.bad || on_device(A, extent(nq, k, lda), sizeof(T)));
  a.need(8, a.bad || on_device(tau, k, sizeof(T)));
  a.need(9, a.bad || on_device(C, extent(m, n, ldc), sizeof(T)));
  a.need(12, a.bad || lwork >= at_least_1(ormqr_lwork<T>(s, t, m, n, k, lda, ldc)));
  a.need(11, a.bad || on_device(work, lwork, sizeof(T)));
  a.need(13, on_device(info, 1, sizeof(int)));
  return submit(h, "cusolverDnXormqr", a, info,
                [=] { *info = lapack<T>::ormqr(s, t, m, n, k, A, lda, tau, C, ldc, work, lwork); });
}

/* ---- singular values ---- */
template <typename T>
long long gesvd_lwork(char jobu, char jobvt, int m, int n) {
  T w = 0, dummy = 0;
  const int p = min_of(m, n);
  const int ldu = max1(m), ldvt = max1(jobvt == 'A' ? n : jobvt == 'S' ? p : 1);
  lapack<T>::gesvd(jobu, jobvt, m, n, &dummy, max1(m), &dummy, &dummy, ldu, &dummy, ldvt, &w, -1);
  return (long long)w;
}
/* gesvd's workspace serves every jobu and jobvt. */
template <typename T>
long long gesvd_any_lwork(int m, int n) {
  long long most = 0;
  for (char ju : {'A', 'S', 'O', 'N'})
    for (char jv : {'A', 'S', 'O', 'N'}) {
      if (ju == 'O' && jv == 'O') continue;
      const long long w = gesvd_lwork<T>(ju, jv, m, n);
      if (w > most) most = w;
    }
  return most;
}
template <typename T>
cusolverStatus_t gesvd_buffer_size(cusolverDnHandle_t h, int m, int n, int *lwork) {
  arg_check a;
  a.need(1, m >= 0);
  a.need(2, n >= 0 && n <= m);
  return buffer_size(h, a, lwork, a.bad ? 0 : gesvd_any_lwork<T>(m, n));
}
bool job_ok(signed char j) { return j == 'A' || j == 'S' || j == 'O' || j == 'N'; }
/* A = U diag(S) VT with U m x m ('A') or m x n ('S'), VT n x n; cuSOLVER requires m >= n. */
template <typename T>
cusolverStatus_t gesvd(cusolverDnHandle_t h, signed char jobu, signed char jobvt, int m, int n, T *A, int lda, T *S,
                       T *U, int ldu, T *VT, int ldvt, T *work, int lwork, T *rwork, int *info) {
  arg_check a;
  a.need(1, job_ok(jobu));
  a.need(2, job_ok(jobvt) && !(jobu == 'O' && jobvt == 'O'));
  a.need(3, m >= 0);
  a.need(4, n >= 0 && n <= m);
  a.need(6, lda >= max1(m));
  a.need(9, ldu >= max1(jobu == 'A' || jobu == 'S' ? m : 1));
  a.need(11, ldvt >= max1(jobvt == 'A' || jobvt == 'S' ? n : 1));
  const int p = min_of(m, n);
  if (!a.bad) {
    a.need(5, on_device(A, extent(m, n, lda), sizeof(T)));
    a.need(7, on_device(S, p, sizeof(T)));
    a.need(8, jobu == 'A' ? on_device(U, extent(m, m, ldu), sizeof(T))
                          : jobu == 'S' ? on_device(U, extent(m, p, ldu), sizeof(T)) : true);
    a.need(10, jobvt == 'A' || jobvt == 'S' ? on_device(VT, extent(n, n, ldvt), sizeof(T)) : true);
    a.need(13, lwork >= at_least_1(gesvd_any_lwork<T>(m, n)));
    a.need(12, on_device(work, lwork, sizeof(T)));
    a.need(14, !rwork || on_device(rwork, p > 1 ? p - 1 : 0, sizeof(T)));
  }
  a.need(15, on_device(info, 1, sizeof(int)));
  const char ju = (char)jobu, jv = (char)jobvt;
  return submit(h, "cusolverDnXgesvd", a, info, [=] {
    const int r = lapack<T>::gesvd(ju, jv, m, n, A, lda, S, U, ldu, VT, ldvt, work, lwork);
    /* the unconverged superdiagonal, as LAPACK leaves it in work(2:p) */
    if (r > 0 && rwork)
      for (int i = 0; i + 1 < p; i++) rwork[i] = work[i + 1];
    *info = r;
  });
}

/* ||A0 - X diag(d) Y^T||_F, the residual of a decomposition: A0 dense m x n (changed), X m x p,
 * Y n x p. */
template <typename T>
double residual_norm(std::vector<T> &a0, int m, int n, int p, const T *x, int ldx, const T *d, const T *y, int ldy) {
  if (m == 0 || n == 0) return 0;
  std::vector<T> xd((size_t)m * p);
  for (int j = 0; j < p; j++)
    for (int i = 0; i < m; i++) xd[(size_t)j * m + i] = x[(size_t)j * ldx + i] * d[j];
  lapack<T>::gemm(CblasNoTrans, CblasTrans, m, n, p, -1, xd.data(), m, y, ldy, 1, a0.data(), m);
  double sum = 0;
  for (T v : a0) sum += (double)v * (double)v;
  return sqrt(sum);
}

/* One gesvdj: A = U diag(S) V^T through LAPACK's gesvd (V, not V^T, as gesvdj returns it; econ:
 * U m x p, V n x p with p = min(m, n)); the residual ||A - U diag(S) V^T||_F is kept. Returns
 * LAPACK's info. */
template <typename T>
int svd_jacobi_one(bool vectors, bool econ, int m, int n, T *A, int lda, T *S, T *U, int ldu, T *V, int ldv, T *work,
                   int lwork, double *residual) {
  const int p = min_of(m, n), vcols = econ ? p : n, ldvt = max1(vcols);
  std::vector<T> vt(vectors ? (size_t)ldvt * n : 0), a0;
  if (vectors) {
    a0.resize((size_t)m * n);
    for (int j = 0; j < n; j++) memcpy(&a0[(size_t)j * m], A + (size_t)j * lda, sizeof(T) * m);
  }
  const char job = vectors ? (econ ? 'S' : 'A') : 'N';
  const int r = lapack<T>::gesvd(job, job, m, n, A, lda, S, U, ldu, vt.data(), ldvt, work, lwork);
  *residual = 0;
  if (!vectors) return r;
  for (int j = 0; j < vcols; j++)
    for (int i = 0; i < n; i++) V[(size_t)j * ldv + i] = vt[(size_t)i * ldvt + j];
  *residual = residual_norm(a0, m, n, p, U, ldu, S, V, ldv);
  return r;
}
template <typename T>
long long gesvdj_lwork(bool vectors, bool econ, int m, int n) {
  const char job = vectors ? (econ ? 'S' : 'A') : 'N';
  return gesvd_lwork<T>(job, job, m, n);
}
template <typename T>
void gesvdj_sizes(arg_check &a, cusolverEigMode_t jobz, int econ, int m, int n, int lda, int ldu, int ldv) {
  a.need(1, eig_mode_ok(jobz));
  a.need(2, econ == 0 || econ == 1);
  a.need(3, m >= 0);
  a.need(4, n >= 0);
  a.need(6, lda >= max1(m));
  a.need(9, jobz != CUSOLVER_EIG_MODE_VECTOR || ldu >= max1(m));
  a.need(11, jobz != CUSOLVER_EIG_MODE_VECTOR || ldv >= max1(n));
}
template <typename T>
cusolverStatus_t gesvdj_buffer_size(cusolverDnHandle_t h, cusolverEigMode_t jobz, int econ, int m, int n, int lda,
                                    int ldu, int ldv, int *lwork, gesvdjInfo_t params) {
  arg_check a;
  gesvdj_sizes<T>(a, jobz, econ, m, n, lda, ldu, ldv);
  a.need(13, params != nullptr);
  return buffer_size(h, a, lwork, a.bad ? 0 : gesvdj_lwork<T>(jobz == CUSOLVER_EIG_MODE_VECTOR, econ, m, n));
}
template <typename T>
cusolverStatus_t gesvdj(cusolverDnHandle_t h, cusolverEigMode_t jobz, int econ, int m, int n, T *A, int lda, T *S,
                        T *U, int ldu, T *V, int ldv, T *work, int lwork, int *info, gesvdjInfo_t params) {
  arg_check a;
  gesvdj_sizes<T>(a, jobz, econ, m, n, lda, ldu, ldv);
  const bool vectors = jobz == CUSOLVER_EIG_MODE_VECTOR;
  const int p = min_of(m, n);
  if (!a.bad) {
    a.need(5, on_device(A, extent(m, n, lda), sizeof(T)));
    a.need(7, on_device(S, p, sizeof(T)));
    a.need(8, !vectors || on_device(U, extent(m, econ ? p : m, ldu), sizeof(T)));
    a.need(10, !vectors || on_device(V, extent(n, econ ? p : n, ldv), sizeof(T)));
    a.need(13, lwork >= at_least_1(gesvdj_lwork<T>(vectors, econ, m, n)));
    a.need(12, on_device(work, lwork, sizeof(T)));
  }
  a.need(14, on_device(info, 1, sizeof(int)));
  a.need(15, params != nullptr);
  return submit(h, "cusolverDnXgesvdj", a, info, [=] {
    double res = 0;
    const int r = svd_jacobi_one(vectors, econ != 0, m, n, A, lda, S, U, ldu, V, ldv, work, lwork, &res);
    params->batched = false;
    params->residual = res;
    params->sweeps = 1;
    *info = r > 0 ? p + 1 : r;
  });
}
/* gesvdjBatched: m, n <= 32, full U (m x m) and V (n x n); matrix i at A + i lda n, S + i min(m,n),
 * U + i ldu m, V + i ldv n; info[i] per matrix. */
template <typename T>
void gesvdj_batched_sizes(arg_check &a, cusolverEigMode_t jobz, int m, int n, int lda, int ldu, int ldv) {
  a.need(1, eig_mode_ok(jobz));
  a.need(2, m >= 0 && m <= 32);
  a.need(3, n >= 0 && n <= 32);
  a.need(5, lda >= max1(m));
  a.need(8, jobz != CUSOLVER_EIG_MODE_VECTOR || ldu >= max1(m));
  a.need(10, jobz != CUSOLVER_EIG_MODE_VECTOR || ldv >= max1(n));
}
template <typename T>
cusolverStatus_t gesvdj_batched_buffer_size(cusolverDnHandle_t h, cusolverEigMode_t jobz, int m, int n, int lda,
                                            int ldu, int ldv, int *lwork, gesvdjInfo_t params, int batch) {
  arg_check a;
  gesvdj_batched_sizes<T>(a, jobz, m, n, lda, ldu, ldv);
  a.need(12, params != nullptr);
  a.need(13, batch >= 0);
  return buffer_size(h, a, lwork, a.bad ? 0 : gesvdj_lwork<T>(jobz == CUSOLVER_EIG_MODE_VECTOR, false, m, n));
}
template <typename T>
cusolverStatus_t gesvdj_batched(cusolverDnHandle_t h, cusolverEigMode_t jobz, int m, int n, T *A, int lda, T *S,
                                T *U, int ldu, T *V, int ldv, T *work, int lwork, int *info, gesvdjInfo_t params,
                                int batch) {
  arg_check a;
  gesvdj_batched_sizes<T>(a, jobz, m, n, lda, ldu, ldv);
  a.need(15, batch >= 0);
  const bool vectors = jobz == CUSOLVER_EIG_MODE_VECTOR;
  const int p = min_of(m, n);
  if (!a.bad) {
    a.need(4, on_device(A, extent(m, (long long)n * batch, lda), sizeof(T)));
    a.need(6, on_device(S, (size_t)p * batch, sizeof(T)));
    a.need(7, !vectors || on_device(U, extent(m, (long long)m * batch, ldu), sizeof(T)));
    a.need(9, !vectors || on_device(V, extent(n, (long long)n * batch, ldv), sizeof(T)));
    a.need(12, lwork >= at_least_1(gesvdj_lwork<T>(vectors, false, m, n)));
    a.need(11, on_device(work, lwork, sizeof(T)));
    a.need(13, on_device(info, batch, sizeof(int)));
  } else {
    a.need(13, on_device(info, 1, sizeof(int)));
  }
  a.need(14, params != nullptr);
  return submit(h, "cusolverDnXgesvdjBatched", a, info, [=] {
    for (int i = 0; i < batch; i++) {
      double res = 0;
      const int r = svd_jacobi_one(vectors, false, m, n, A + (size_t)i * lda * n, lda, S + (size_t)i * p,
                                   vectors ? U + (size_t)i * ldu * m : U, ldu, vectors ? V + (size_t)i * ldv * n : V,
                                   ldv, work, lwork, &res);
      info[i] = r > 0 ? p + 1 : r;
    }
    params->batched = true;
  });
}

/* ---- symmetric eigenvalues ---- */
template <typename T>
void syevd_query(char jobz, char uplo, int n, int lda, long long *lwork, int *liwork) {
  T w = 0, dummy = 0;
  int iw = 0;
  lapack<T>::syevd(jobz, uplo, n, &dummy, max1(lda), &dummy, &w, -1, &iw, -1);
  if (lwork) *lwork = (long long)w;
  if (liwork) *liwork = iw;
}
template <typename T>
long long syevd_lwork(cusolverEigMode_t jobz, cublasFillMode_t uplo, int n, int lda) {
  long long w = 0;
  syevd_query<T>(jobz == CUSOLVER_EIG_MODE_VECTOR ? 'V' : 'N', fill_char(uplo), n, lda, &w, nullptr);
  return w;
}
void syev_sizes(arg_check &a, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n, int lda, int max_n) {
  a.need(1, eig_mode_ok(jobz));
  a.need(2, fill_char(uplo) != 0);
  a.need(3, n >= 0 && n <= max_n);
  a.need(5, lda >= max1(n));
}
/* One symmetric eigendecomposition (eigenvalues ascending in W, eigenvectors over A); with
 * residual, ||A - V diag(W) V^T||_F of the uplo triangle's matrix is kept there. LAPACK's info. */
template <typename T>
int syev_one(bool vectors, char uplo, int n, T *A, int lda, T *W, T *work, int lwork, double *residual) {
  std::vector<T> a0;
  if (vectors && residual) {
    a0.resize((size_t)n * n);
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) {
        const bool stored = uplo == 'L' ? i >= j : i <= j;
        a0[(size_t)j * n + i] = stored ? A[(size_t)j * lda + i] : A[(size_t)i * lda + j];
      }
  }
  int liwork = 1;
  syevd_query<T>(vectors ? 'V' : 'N', uplo, n, lda, nullptr, &liwork);
  std::vector<int> iwork(max1(liwork));
  const int r = lapack<T>::syevd(vectors ? 'V' : 'N', uplo, n, A, lda, W, work, lwork, iwork.data(), max1(liwork));
  if (residual) {
    *residual = 0;
    if (vectors) *residual = residual_norm(a0, n, n, n, A, lda, W, A, lda);
  }
  return r;
}
template <typename T>
cusolverStatus_t syevd_buffer_size(cusolverDnHandle_t h, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n,
                                   int lda, int *lwork) {
  arg_check a;
  syev_sizes(a, jobz, uplo, n, lda, INT_MAX);
  return buffer_size(h, a, lwork, a.bad ? 0 : syevd_lwork<T>(jobz, uplo, n, lda));
}
/* syevd and syevj (jacobi: params given, devInfo n + 1 when not converged). */
template <typename T>
cusolverStatus_t syev(cusolverDnHandle_t h, bool jacobi, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n, T *A,
                      int lda, T *W, T *work, int lwork, int *info, syevjInfo_t params) {
  arg_check a;
  syev_sizes(a, jobz, uplo, n, lda, INT_MAX);
  if (!a.bad) {
    a.need(4, on_device(A, extent(n, n, lda), sizeof(T)));
    a.need(6, on_device(W, n, sizeof(T)));
    a.need(8, lwork >= at_least_1(syevd_lwork<T>(jobz, uplo, n, lda)));
    a.need(7, on_device(work, lwork, sizeof(T)));
  }
  a.need(9, on_device(info, 1, sizeof(int)));
  if (jacobi) a.need(10, params != nullptr);
  const bool vectors = jobz == CUSOLVER_EIG_MODE_VECTOR;
  const char u = fill_char(uplo);
  return submit(h, jacobi ? "cusolverDnXsyevj" : "cusolverDnXsyevd", a, info, [=] {
    double res = 0;
    const int r = syev_one(vectors, u, n, A, lda, W, work, lwork, jacobi ? &res : nullptr);
    if (jacobi) {
      params->batched = false;
      params->residual = res;
      params->sweeps = 1;
    }
    *info = jacobi && r > 0 ? n + 1 : r;
  });
}
template <typename T>
cusolverStatus_t syevj_buffer_size(cusolverDnHandle_t h, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n, int lda,
                                   int *lwork, syevjInfo_t params, int max_n, int batch) {
  arg_check a;
  syev_sizes(a, jobz, uplo, n, lda, max_n);
  a.need(8, params != nullptr);
  a.need(9, batch >= 0);
  return buffer_size(h, a, lwork, a.bad ? 0 : syevd_lwork<T>(jobz, uplo, n, lda));
}
/* syevjBatched: n <= 32; matrix i at A + i lda n, W + i n; info[i] per matrix. */
template <typename T>
cusolverStatus_t syevj_batched(cusolverDnHandle_t h, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n, T *A,
                               int lda, T *W, T *work, int lwork, int *info, syevjInfo_t params, int batch) {
  arg_check a;
  syev_sizes(a, jobz, uplo, n, lda, 32);
  a.need(11, batch >= 0);
  if (!a.bad) {
    a.need(4, on_device(A, extent(n, (long long)n * batch, lda), sizeof(T)));
    a.need(6, on_device(W, (size_t)n * batch, sizeof(T)));
    a.need(8, lwork >= at_least_1(syevd_lwork<T>(jobz, uplo, n, lda)));
    a.need(7, on_device(work, lwork, sizeof(T)));
    a.need(9, on_device(info, batch, sizeof(int)));
  } else {
    a.need(9, on_device(info, 1, sizeof(int)));
  }
  a.need(10, params != nullptr);
  const bool vectors = jobz == CUSOLVER_EIG_MODE_VECTOR;
  const char u = fill_char(uplo);
  return submit(h, "cusolverDnXsyevjBatched", a, info, [=] {
    for (int i = 0; i < batch; i++) {
      const int r = syev_one(vectors, u, n, A + (size_t)i * lda * n, lda, W + (size_t)i * n, work, lwork, nullptr);
      info[i] = r > 0 ? n + 1 : r;
    }
    params->batched = true;
  });
}

}  // namespace

/* ---- the entry points: one template per routine, S and D ---- */
extern "C" {

cusolverStatus_t cusolverDnCreateSyevjInfo(syevjInfo_t *info) { return params_create(info); }
cusolverStatus_t cusolverDnDestroySyevjInfo(syevjInfo_t info) { return params_destroy(info); }
cusolverStatus_t cusolverDnXsyevjSetTolerance(syevjInfo_t info, double tolerance) {
  return set_tolerance(info, tolerance);
}
cusolverStatus_t cusolverDnXsyevjSetMaxSweeps(syevjInfo_t info, int max_sweeps) { return set_max_sweeps(info, max_sweeps); }
cusolverStatus_t cusolverDnXsyevjSetSortEig(syevjInfo_t info, int sort_eig) { return set_sort(info, sort_eig); }
cusolverStatus_t cusolverDnXsyevjGetResidual(cusolverDnHandle_t handle, syevjInfo_t info, double *residual) {
  return get_residual(handle, info, residual);
}
cusolverStatus_t cusolverDnXsyevjGetSweeps(cusolverDnHandle_t handle, syevjInfo_t info, int *executed_sweeps) {
  return get_sweeps(handle, info, executed_sweeps);
}
cusolverStatus_t cusolverDnCreateGesvdjInfo(gesvdjInfo_t *info) { return params_create(info); }
cusolverStatus_t cusolverDnDestroyGesvdjInfo(gesvdjInfo_t info) { return params_destroy(info); }
cusolverStatus_t cusolverDnXgesvdjSetTolerance(gesvdjInfo_t info, double tolerance) {
  return set_tolerance(info, tolerance);
}
cusolverStatus_t cusolverDnXgesvdjSetMaxSweeps(gesvdjInfo_t info, int max_sweeps) {
  return set_max_sweeps(info, max_sweeps);
}
cusolverStatus_t cusolverDnXgesvdjSetSortEig(gesvdjInfo_t info, int sort_svd) { return set_sort(info, sort_svd); }
cusolverStatus_t cusolverDnXgesvdjGetResidual(cusolverDnHandle_t handle, gesvdjInfo_t info, double *residual) {
  return get_residual(handle, info, residual);
}
cusolverStatus_t cusolverDnXgesvdjGetSweeps(cusolverDnHandle_t handle, gesvdjInfo_t info, int *executed_sweeps) {
  return get_sweeps(handle, info, executed_sweeps);
}

#define KD_EMU_CUSOLVER_TYPED(P, T)                                                                                   \
  cusolverStatus_t cusolverDn##P##getrf_bufferSize(cusolverDnHandle_t h, int m, int n, T *A, int lda, int *Lwork) {   \
    return getrf_buffer_size<T>(h, m, n, lda, Lwork);                                                                 \
  }                                                                                                                   \
  cusolverStatus_t cusolverDn##P##getrf(cusolverDnHandle_t h, int m, int n, T *A, int lda, T *Workspace,             \
                                        int *devIpiv, int *devInfo) {                                                 \
    return getrf<T>(h, m, n, A, lda, Workspace, devIpiv, devInfo);                                                    \
  }                                                                                                                   \
  cusolverStatus_t cusolverDn##P##getrs(cusolverDnHandle_t h, cublasOperation_t trans, int n, int nrhs, const T *A,  \
                                        int lda, const int *devIpiv, T *B, int ldb, int *devInfo) {                   \
    return getrs<T>(h, trans, n, nrhs, A, lda, devIpiv, B, ldb, devInfo);                                             \
  }                                                                                                                   \
  cusolverStatus_t cusolverDn##P##potrf_bufferSize(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, T *A, int lda, \
                                                   int *Lwork) {                                                      \
    return potrf_buffer_size<T>(h, uplo, n, lda, Lwork);                                                              \
  }                                                                                                                   \
  cusolverStatus_t cusolverDn##P##potrf(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, T *A, int lda,           \
                                        T *Workspace, int Lwork, int *devInfo) {                                      \
    return potrf_potri<T>(h, false, uplo, n, A, lda, Workspace, Lwork, devInfo);                                      \
  }                                                                                                                   \
  cusolverStatus_t cusolverDn##P##potrs(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, int nrhs, const T *A,    \
                                        int lda, T *B, int ldb, int *devInfo) {                                       \
    return potrs<T>(h, uplo, n, nrhs, A, lda, B, ldb, devInfo);                                                       \
  }                                                                                                                   \
  cusolverStatus_t cusolverDn##P##potri_bufferSize(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, T *A, int lda, \
                                                   int *lwork) {                                                      \
    return potrf_buffer_size<T>(h, uplo, n, lda, lwork);                                                              \
  }                                                                                                                   \
  cusolverStatus_t cusolverDn##P##potri(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, T *A, int lda, T *work,  \
                                        int lwork, int *devInfo) {                                                    \
    return potrf_potri<T>(h, true, uplo, n, A, lda, work, lwork, devInfo);                                            \
  }                                                                                                                   \
  cusolverStatus_t cusolverDn##P##potrfBatched(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, T *Aarray[],      \
                                               int lda, int *infoArray, int batchSize) {                              \
    return potrf_batched<T>(h, uplo, n, Aarray, lda, infoArray, batchSize);                                           \
  }                                                                                                                   \
  cusolverStatus_t cusolverDn##P##potrsBatched(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, int nrhs, T *A[], \
                                               int lda, T *B[], int ldb, int *d_info, int batchSize) {                \
    return potrs_batched<T>(h, uplo, n, nrhs, A, lda, B, ldb, d_info, batchSize);                                     \
  }                                                                                                                   \
  cusolverStatus_t cusolverDn##P##geqrf_bufferSize(cusolverDnHandle_t h, int m, int n, T *A, int lda, int *lwork) {   \
    return geqrf_buffer_size<T>(h, m, n, lda, lwork);                                                                 \
  }                                                                                                                   \
  cusolverStatus_t cusolverDn##P##geqrf(cusolverDnHandle_t h, int m, int n, T *A, int lda, T *TAU, T *Workspace,     \
                                        int Lwork, int *devInfo) {                                                    \
    return geqrf<T>(h, m, n, A, lda, TAU, Workspace, Lwork, devInfo);                                                 \
  }                                                                                                                   \
  cusolverStatus_t cusolverDn##P##orgqr_bufferSize(cusolverDnHandle_t h, int m, int n, int k, const T *A, int lda,   \
                                                   const T *tau, int *lwork) {                                        \
    return orgqr_buffer_size<T>(h, m, n, k, lda, lwork);                                                              \
  }                                                                                                                   \
  cusolverStatus_t cusolverDn##P##orgqr(cusolverDnHandle_t h, int m, int n, int k, T *A, int lda, const T *tau,      \
                                        T *work, int lwork, int *info) {                                              \
    return orgqr<T>(h, m, n, k, A, lda, tau, work, lwork, info);                                                      \
  }                                                                                                                   \
  cusolverStatus_t cusolverDn##P##ormqr_bufferSize(cusolverDnHandle_t h, cublasSideMode_t side,                       \
                                                   cublasOperation_t trans, int m, int n, int k, const T *A, int lda, \
                                                   const T *tau, const T *C, int ldc, int *lwork) {                   \
    return ormqr_buffer_size<T>(h, side, trans, m, n, k, lda, ldc, lwork);                                            \
  }                                                                                                                   \
  cusolverStatus_t cusolverDn##P##ormqr(cusolverDnHandle_t h, cublasSideMode_t side, cublasOperation_t trans, int m, \
                                        int n, int k, const T *A, int lda, const T *tau, T *C, int ldc, T *work,      \
                                        int lwork, int *devInfo) {                                                    \
    return ormqr<T>(h, side, trans, m, n, k, A, lda, tau, C, ldc, work, lwork, devInfo);                              \
  }                                                                                                                   \
  cusolverStatus_t cusolverDn##P##gesvd_bufferSize(cusolverDnHandle_t h, int m, int n, int *lwork) {                  \
    return gesvd_buffer_size<T>(h, m, n, lwork);                                                                      \
  }                                                                                                                   \
  cusolverStatus_t cusolverDn##P##gesvd(cusolverDnHandle_t h, signed char jobu, signed char jobvt, int m, int n,      \
                                        T *A, int lda, T *S, T *U, int ldu, T *VT, int ldvt, T *work, int lwork,      \
                                        T *rwork, int *info) {                                                        \
    return gesvd<T>(h, jobu, jobvt, m, n, A, lda, S, U, ldu, VT, ldvt, work, lwork, rwork, info);                     \
  }                                                                                                                   \
  cusolverStatus_t cusolverDn##P##gesvdj_bufferSize(cusolverDnHandle_t h, cusolverEigMode_t jobz, int econ, int m,   \
                                                    int n, const T *A, int lda, const T *S, const T *U, int ldu,      \
                                                    const T *V, int ldv, int *lwork, gesvdjInfo_t params) {           \
    return gesvdj_buffer_size<T>(h, jobz, econ, m, n, lda, ldu, ldv, lwork, params);                                  \
  }                                                                                                                   \
  cusolverStatus_t cusolverDn##P##gesvdj(cusolverDnHandle_t h, cusolverEigMode_t jobz, int econ, int m, int n, T *A, \
                                         int lda, T *S, T *U, int ldu, T *V, int ldv, T *work, int lwork, int *info,  \
                                         gesvdjInfo_t params) {                                                       \
    return gesvdj<T>(h, jobz, econ, m, n, A, lda, S, U, ldu, V, ldv, work, lwork, info, params);                      \
  }                                                                                                                   \
  cusolverStatus_t cusolverDn##P##gesvdjBatched_bufferSize(                                                           \
      cusolverDnHandle_t h, cusolverEigMode_t jobz, int m, int n, const T *A, int lda, const T *S, const T *U,        \
      int ldu, const T *V, int ldv, int *lwork, gesvdjInfo_t params, int batchSize) {                                 \
    return gesvdj_batched_buffer_size<T>(h, jobz, m, n, lda, ldu, ldv, lwork, params, batchSize);                     \
  }                                                                                                                   \
  cusolverStatus_t cusolverDn##P##gesvdjBatched(cusolverDnHandle_t h, cusolverEigMode_t jobz, int m, int n, T *A,    \
                                                int lda, T *S, T *U, int ldu, T *V, int ldv, T *work, int lwork,      \
                                                int *info, gesvdjInfo_t params, int batchSize) {                      \
    return gesvdj_batched<T>(h, jobz, m, n, A, lda, S, U, ldu, V, ldv, work, lwork, info, params, batchSize);         \
  }                                                                                                                   \
  cusolverStatus_t cusolverDn##P##syevd_bufferSize(cusolverDnHandle_t h, cusolverEigMode_t jobz,                     \
                                                   cublasFillMode_t uplo, int n, const T *A, int lda, const T *W,     \
                                                   int *lwork) {                                                      \
    return syevd_buffer_size<T>(h, jobz, uplo, n, lda, lwork);                                                        \
  }                                                                                                                   \
  cusolverStatus_t cusolverDn##P##syevd(cusolverDnHandle_t h, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n,  \
                                        T *A, int lda, T *W, T *work, int lwork, int *info) {                         \
    return syev<T>(h, false, jobz, uplo, n, A, lda, W, work, lwork, info, nullptr);                                   \
  }                                                                                                                   \
  cusolverStatus_t cusolverDn##P##syevj_bufferSize(cusolverDnHandle_t h, cusolverEigMode_t jobz,                     \
                                                   cublasFillMode_t uplo, int n, const T *A, int lda, const T *W,     \
                                                   int *lwork, syevjInfo_t params) {                                  \
    return syevj_buffer_size<T>(h, jobz, uplo, n, lda, lwork, params, INT_MAX, 0);                                    \
  }                                                                                                                   \
  cusolverStatus_t cusolverDn##P##syevj(cusolverDnHandle_t h, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n,  \
                                        T *A, int lda, T *W, T *work, int lwork, int *info, syevjInfo_t params) {     \
    return syev<T>(h, true, jobz, uplo, n, A, lda, W, work, lwork, info, params);                                     \
  }                                                                                                                   \
  cusolverStatus_t cusolverDn##P##syevjBatched_bufferSize(cusolverDnHandle_t h, cusolverEigMode_t jobz,              \
                                                          cublasFillMode_t uplo, int n, const T *A, int lda,          \
                                                          const T *W, int *lwork, syevjInfo_t params,                 \
                                                          int batchSize) {                                            \
    return syevj_buffer_size<T>(h, jobz, uplo, n, lda, lwork, params, 32, batchSize);                                 \
  }                                                                                                                   \
  cusolverStatus_t cusolverDn##P##syevjBatched(cusolverDnHandle_t h, cusolverEigMode_t jobz, cublasFillMode_t uplo,  \
                                               int n, T *A, int lda, T *W, T *work, int lwork, int *info,             \
                                               syevjInfo_t params, int batchSize) {                                   \
    return syevj_batched<T>(h, jobz, uplo, n, A, lda, W, work, lwork, info, params, batchSize);                       \
  }
KD_EMU_CUSOLVER_TYPED(S, float)
KD_EMU_CUSOLVER_TYPED(D, double)

}  // extern "C"
