/* ops_linalg.cu - the factorizations of kd.linalg on the GPU through cuSOLVER (kinds 47..51 of
 * kd_cuda_op; the host side is src/cpu/linalg_lapack.c, which hands over contiguous
 * column-major batches and composes det/inv/solve/cholesky from these calls):
 *   KD_CUDA_OP_LINALG_LU (47)        code 0 getrf of every n x n matrix of data[0] (in place), pivots
 *                                    to data[1] (int32, batch x n), infos to data[2] (int32, batch);
 *                                    code 1 getrs: data[2] (n x k per matrix) = A^{-1} data[2] from
 *                                    the LU factors data[0] and pivots data[1]. i[] = n, batch, k;
 *                                    code 2 trsm: data[2] (n x k) = T^{-1} data[2], T the upper
 *                                    (i[3]) or lower triangle of data[0], unit diagonal if i[4].
 *   KD_CUDA_OP_LINALG_CHOLESKY (48)  potrf (lower) of every n x n matrix of data[0] in place, infos
 *                                    to data[1] (int32, batch). i[] = n, batch.
 * getrf/potrf/syevd report the first matrix whose info is > 0: result[0] = its index + 1 (0: none),
 * result[1] = the info (reading the infos waits for the stream, as PyTorch's error checks do).
 *   KD_CUDA_OP_LINALG_EIGH (51)      syevd of every n x n matrix of data[0] (eigenvectors in place),
 *                                    ascending eigenvalues to data[1] (dtype, batch x n), infos to
 *                                    data[2]; i[] = n, batch, upper (read the upper triangle).
 *   KD_CUDA_OP_LINALG_QR (49)        code 0 geqrf of every m x n matrix of data[0] in place (lda m),
 *                                    tau to data[1] (dtype, batch x k); code 1 orgqr: the first q
 *                                    columns of every matrix of data[0] (m x c each, lda m) become
 *                                    Q from the k reflectors there and data[1]. i[] = m, n, batch,
 *                                    k, q, c (code 0: c = n).
 *   KD_CUDA_OP_LINALG_SVD (50)       gesvd of every m x n (m >= n) matrix of data[0] (destroyed):
 *                                    singular values to data[1] (dtype, batch x n), U to data[2]
 *                                    (m x m if full else m x n per matrix, lda m), V^T to data[3]
 *                                    (n x n), infos to data[4]. i[] = m, n, batch, full. Reports
 *                                    as getrf (the host transposes wide matrices first).
 * One handle per device on the device's current stream; workspaces from the caching allocator.
 * Matrices are factored one call each, in order on the stream. */
#include <cublas_v2.h>
#include <cusolverDn.h>

#include "iter.cuh"
#include "scratch.cuh"

#define KD_CU_LA_MAX_DEVICES 64
static cusolverDnHandle_t kd_cu_solver[KD_CU_LA_MAX_DEVICES];

static kd_cuda_status kd_cu_solver_fail(cusolverStatus_t s, const char *what) {
  return kd_cu_error(s == CUSOLVER_STATUS_ALLOC_FAILED ? KD_CUDA_ERR_OOM : KD_CUDA_ERR_RUNTIME, "cuSOLVER error %d in %s",
                     (int)s, what);
}
#define KD_CU_SOLVER_CHECK(call)                                                            \
  do {                                                                                      \
    cusolverStatus_t kd_ss_ = (call);                                                       \
    if (kd_ss_ != CUSOLVER_STATUS_SUCCESS) return kd_cu_solver_fail(kd_ss_, #call);         \
  } while (0)

/* The device's handle, created on first use, set to the device's current stream. */
static kd_cuda_status kd_cu_solver_handle(int device, cusolverDnHandle_t *out) {
  if (device < 0 || device >= KD_CU_LA_MAX_DEVICES) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "bad device %d", device);
  if (!kd_cu_solver[device]) {
    cusolverDnHandle_t h;
    KD_CU_SOLVER_CHECK(cusolverDnCreate(&h));
    kd_cu_solver[device] = h; /* lives as long as the process */
  }
  KD_CU_SOLVER_CHECK(cusolverDnSetStream(kd_cu_solver[device], kd_cu_stream(device)));
  *out = kd_cu_solver[device];
  return KD_CUDA_OK;
}

static cublasHandle_t kd_cu_la_blas[KD_CU_LA_MAX_DEVICES];
/* A cuBLAS handle of the device for the triangular solves, on its current stream. */
static kd_cuda_status kd_cu_la_blas_handle(int device, cublasHandle_t *out) {
  if (device < 0 || device >= KD_CU_LA_MAX_DEVICES) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "bad device %d", device);
  if (!kd_cu_la_blas[device] && cublasCreate(&kd_cu_la_blas[device]) != CUBLAS_STATUS_SUCCESS) {
    kd_cu_la_blas[device] = NULL;
    return kd_cu_error(KD_CUDA_ERR_RUNTIME, "cuBLAS: cublasCreate failed");
  }
  if (cublasSetStream(kd_cu_la_blas[device], kd_cu_stream(device)) != CUBLAS_STATUS_SUCCESS)
    return kd_cu_error(KD_CUDA_ERR_RUNTIME, "cuBLAS: cublasSetStream failed");
  *out = kd_cu_la_blas[device];
  return KD_CUDA_OK;
}
static cublasStatus_t kd_cu_trsm(cublasHandle_t h, cublasFillMode_t u, cublasDiagType_t d, int n, int k, const float *a, float *b) {
  const float one = 1;
  return cublasStrsm(h, CUBLAS_SIDE_LEFT, u, CUBLAS_OP_N, d, n, k, &one, a, n, b, n);
}
static cublasStatus_t kd_cu_trsm(cublasHandle_t h, cublasFillMode_t u, cublasDiagType_t d, int n, int k, const double *a, double *b) {
  const double one = 1;
  return cublasDtrsm(h, CUBLAS_SIDE_LEFT, u, CUBLAS_OP_N, d, n, k, &one, a, n, b, n);
}

/* float / double overloads of the calls used here. */
static cusolverStatus_t kd_cu_getrf_ws(cusolverDnHandle_t h, int n, float *a, int *lw) { return cusolverDnSgetrf_bufferSize(h, n, n, a, n, lw); }
static cusolverStatus_t kd_cu_getrf_ws(cusolverDnHandle_t h, int n, double *a, int *lw) { return cusolverDnDgetrf_bufferSize(h, n, n, a, n, lw); }
static cusolverStatus_t kd_cu_getrf(cusolverDnHandle_t h, int n, float *a, float *w, int *p, int *info) { return cusolverDnSgetrf(h, n, n, a, n, w, p, info); }
static cusolverStatus_t kd_cu_getrf(cusolverDnHandle_t h, int n, double *a, double *w, int *p, int *info) { return cusolverDnDgetrf(h, n, n, a, n, w, p, info); }
static cusolverStatus_t kd_cu_getrs(cusolverDnHandle_t h, int n, int k, const float *a, const int *p, float *b, int *info) {
  return cusolverDnSgetrs(h, CUBLAS_OP_N, n, k, a, n, p, b, n, info);
}
static cusolverStatus_t kd_cu_getrs(cusolverDnHandle_t h, int n, int k, const double *a, const int *p, double *b, int *info) {
  return cusolverDnDgetrs(h, CUBLAS_OP_N, n, k, a, n, p, b, n, info);
}
static cusolverStatus_t kd_cu_potrf_ws(cusolverDnHandle_t h, int n, float *a, int *lw) { return cusolverDnSpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, a, n, lw); }
static cusolverStatus_t kd_cu_potrf_ws(cusolverDnHandle_t h, int n, double *a, int *lw) { return cusolverDnDpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, a, n, lw); }
static cusolverStatus_t kd_cu_potrf(cusolverDnHandle_t h, int n, float *a, float *w, int lw, int *info) { return cusolverDnSpotrf(h, CUBLAS_FILL_MODE_LOWER, n, a, n, w, lw, info); }
static cusolverStatus_t kd_cu_potrf(cusolverDnHandle_t h, int n, double *a, double *w, int lw, int *info) { return cusolverDnDpotrf(h, CUBLAS_FILL_MODE_LOWER, n, a, n, w, lw, info); }

static cusolverStatus_t kd_cu_syevd_ws(cusolverDnHandle_t h, cublasFillMode_t u, int n, float *a, float *w, int *lw) {
  return cusolverDnSsyevd_bufferSize(h, CUSOLVER_EIG_MODE_VECTOR, u, n, a, n, w, lw);
}
static cusolverStatus_t kd_cu_syevd_ws(cusolverDnHandle_t h, cublasFillMode_t u, int n, double *a, double *w, int *lw) {
  return cusolverDnDsyevd_bufferSize(h, CUSOLVER_EIG_MODE_VECTOR, u, n, a, n, w, lw);
}
static cusolverStatus_t kd_cu_syevd(cusolverDnHandle_t h, cublasFillMode_t u, int n, float *a, float *w, float *ws, int lw, int *info) {
  return cusolverDnSsyevd(h, CUSOLVER_EIG_MODE_VECTOR, u, n, a, n, w, ws, lw, info);
}
static cusolverStatus_t kd_cu_syevd(cusolverDnHandle_t h, cublasFillMode_t u, int n, double *a, double *w, double *ws, int lw, int *info) {
  return cusolverDnDsyevd(h, CUSOLVER_EIG_MODE_VECTOR, u, n, a, n, w, ws, lw, info);
}

static cusolverStatus_t kd_cu_geqrf_ws(cusolverDnHandle_t h, int m, int n, float *a, int *lw) { return cusolverDnSgeqrf_bufferSize(h, m, n, a, m, lw); }
static cusolverStatus_t kd_cu_geqrf_ws(cusolverDnHandle_t h, int m, int n, double *a, int *lw) { return cusolverDnDgeqrf_bufferSize(h, m, n, a, m, lw); }
static cusolverStatus_t kd_cu_geqrf(cusolverDnHandle_t h, int m, int n, float *a, float *t, float *w, int lw, int *info) { return cusolverDnSgeqrf(h, m, n, a, m, t, w, lw, info); }
static cusolverStatus_t kd_cu_geqrf(cusolverDnHandle_t h, int m, int n, double *a, double *t, double *w, int lw, int *info) { return cusolverDnDgeqrf(h, m, n, a, m, t, w, lw, info); }
static cusolverStatus_t kd_cu_orgqr_ws(cusolverDnHandle_t h, int m, int q, int k, float *a, float *t, int *lw) { return cusolverDnSorgqr_bufferSize(h, m, q, k, a, m, t, lw); }
static cusolverStatus_t kd_cu_orgqr_ws(cusolverDnHandle_t h, int m, int q, int k, double *a, double *t, int *lw) { return cusolverDnDorgqr_bufferSize(h, m, q, k, a, m, t, lw); }
static cusolverStatus_t kd_cu_orgqr(cusolverDnHandle_t h, int m, int q, int k, float *a, float *t, float *w, int lw, int *info) { return cusolverDnSorgqr(h, m, q, k, a, m, t, w, lw, info); }
static cusolverStatus_t kd_cu_orgqr(cusolverDnHandle_t h, int m, int q, int k, double *a, double *t, double *w, int lw, int *info) { return cusolverDnDorgqr(h, m, q, k, a, m, t, w, lw, info); }

static cusolverStatus_t kd_cu_gesvd_ws(cusolverDnHandle_t h, int m, int n, float *, int *lw) { return cusolverDnSgesvd_bufferSize(h, m, n, lw); }
static cusolverStatus_t kd_cu_gesvd_ws(cusolverDnHandle_t h, int m, int n, double *, int *lw) { return cusolverDnDgesvd_bufferSize(h, m, n, lw); }
static cusolverStatus_t kd_cu_gesvd(cusolverDnHandle_t h, signed char ju, int m, int n, float *a, float *s, float *u, float *vt, float *w,
                                    int lw, float *rw, int *info) {
  return cusolverDnSgesvd(h, ju, 'A', m, n, a, m, s, u, m, vt, n, w, lw, rw, info);
}
static cusolverStatus_t kd_cu_gesvd(cusolverDnHandle_t h, signed char ju, int m, int n, double *a, double *s, double *u, double *vt,
                                    double *w, int lw, double *rw, int *info) {
  return cusolverDnDgesvd(h, ju, 'A', m, n, a, m, s, u, m, vt, n, w, lw, rw, info);
}

/* result[] = the first info > 0 of the batch's infos (device int32). */
static kd_cuda_status kd_cu_la_report(int device, const int *infos, int64_t batch, kd_cuda_op *o) {
  if (batch <= 0) return KD_CUDA_OK;
  int *host = (int *)malloc(sizeof(int) * (size_t)batch);
  if (!host) return kd_cu_error(KD_CUDA_ERR_OOM, "out of host memory");
  cudaStream_t s = kd_cu_stream(device);
  cudaError_t e = cudaMemcpyAsync(host, infos, sizeof(int) * (size_t)batch, cudaMemcpyDeviceToHost, s);
  if (e == cudaSuccess) e = cudaStreamSynchronize(s);
  if (e != cudaSuccess) {
    free(host);
    return kd_cu_fail(e, "reading the factorization infos");
  }
  for (int64_t b = 0; b < batch; b++)
    if (host[b] > 0) {
      o->result[0] = b + 1;
      o->result[1] = host[b];
      break;
    }
  free(host);
  return KD_CUDA_OK;
}

template <typename T>
static kd_cuda_status kd_cu_la_lu(int device, kd_cuda_op *o) {
  const int64_t n = o->i[0], batch = o->i[1], k = o->i[2];
  if (n < 1 || batch < 1 || n > INT32_MAX / 2 || (o->code == 1 && (k < 1 || k > INT32_MAX / 2)))
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "linalg LU: bad sizes n=%lld batch=%lld", (long long)n, (long long)batch);
  cusolverDnHandle_t h;
  KD_CU_TRY(kd_cu_solver_handle(device, &h));
  T *a = (T *)o->data[0];
  int *piv = (int *)o->data[1];
  const int ni = (int)n;
  if (o->code == 0) {
    int *info = (int *)o->data[2];
    int lw = 0;
    KD_CU_SOLVER_CHECK(kd_cu_getrf_ws(h, ni, a, &lw));
    kd_cu_scratch ws(device);
    KD_CU_TRY(ws.alloc(sizeof(T) * (size_t)(lw > 0 ? lw : 1)));
    for (int64_t b = 0; b < batch; b++)
      KD_CU_SOLVER_CHECK(kd_cu_getrf(h, ni, a + b * n * n, ws.as<T>(), piv + b * n, info + b));
    return kd_cu_la_report(device, info, batch, o);
  }
  T *x = (T *)o->data[2];
  if (o->code == 2) {
    cublasHandle_t bh;
    KD_CU_TRY(kd_cu_la_blas_handle(device, &bh));
    const cublasFillMode_t u = o->i[3] ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
    const cublasDiagType_t d = o->i[4] ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT;
    for (int64_t b = 0; b < batch; b++)
      if (kd_cu_trsm(bh, u, d, ni, (int)k, a + b * n * n, x + b * n * k) != CUBLAS_STATUS_SUCCESS)
        return kd_cu_error(KD_CUDA_ERR_RUNTIME, "cuBLAS: trsm failed");
    return KD_CUDA_OK;
  }
  kd_cu_scratch info(device);
  KD_CU_TRY(info.alloc(sizeof(int)));
  for (int64_t b = 0; b < batch; b++)
    KD_CU_SOLVER_CHECK(kd_cu_getrs(h, ni, (int)k, a + b * n * n, piv + b * n, x + b * n * k, info.as<int>()));
  return KD_CUDA_OK;
}

template <typename T>
static kd_cuda_status kd_cu_la_cholesky(int device, kd_cuda_op *o) {
  const int64_t n = o->i[0], batch = o->i[1];
  if (n < 1 || batch < 1 || n > INT32_MAX / 2)
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "linalg cholesky: bad sizes n=%lld batch=%lld", (long long)n, (long long)batch);
  cusolverDnHandle_t h;
  KD_CU_TRY(kd_cu_solver_handle(device, &h));
  T *a = (T *)o->data[0];
  int *info = (int *)o->data[1];
  const int ni = (int)n;
  int lw = 0;
  KD_CU_SOLVER_CHECK(kd_cu_potrf_ws(h, ni, a, &lw));
  kd_cu_scratch ws(device);
  KD_CU_TRY(ws.alloc(sizeof(T) * (size_t)(lw > 0 ? lw : 1)));
  for (int64_t b = 0; b < batch; b++) KD_CU_SOLVER_CHECK(kd_cu_potrf(h, ni, a + b * n * n, ws.as<T>(), lw, info + b));
  return kd_cu_la_report(device, info, batch, o);
}

template <typename T>
static kd_cuda_status kd_cu_la_eigh(int device, kd_cuda_op *o) {
  const int64_t n = o->i[0], batch = o->i[1];
  if (n < 1 || batch < 1 || n > INT32_MAX / 2)
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "linalg eigh: bad sizes n=%lld batch=%lld", (long long)n, (long long)batch);
  cusolverDnHandle_t h;
  KD_CU_TRY(kd_cu_solver_handle(device, &h));
  T *a = (T *)o->data[0], *w = (T *)o->data[1];
  int *info = (int *)o->data[2];
  const cublasFillMode_t uplo = o->i[2] ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
  const int ni = (int)n;
  int lw = 0;
  KD_CU_SOLVER_CHECK(kd_cu_syevd_ws(h, uplo, ni, a, w, &lw));
  kd_cu_scratch ws(device);
  KD_CU_TRY(ws.alloc(sizeof(T) * (size_t)(lw > 0 ? lw : 1)));
  for (int64_t b = 0; b < batch; b++)
    KD_CU_SOLVER_CHECK(kd_cu_syevd(h, uplo, ni, a + b * n * n, w + b * n, ws.as<T>(), lw, info + b));
  return kd_cu_la_report(device, info, batch, o);
}

template <typename T>
static kd_cuda_status kd_cu_la_qr(int device, kd_cuda_op *o) {
  const int64_t m = o->i[0], n = o->i[1], batch = o->i[2], k = o->i[3], q = o->i[4], c = o->code == 0 ? n : o->i[5];
  if (m < 1 || n < 1 || batch < 1 || k < 1 || k > m || k > n || m > INT32_MAX / 2 || n > INT32_MAX / 2 ||
      (o->code == 1 && (q < k || q > m || c < q)))
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "linalg qr: bad sizes m=%lld n=%lld batch=%lld", (long long)m, (long long)n,
                       (long long)batch);
  cusolverDnHandle_t h;
  KD_CU_TRY(kd_cu_solver_handle(device, &h));
  T *a = (T *)o->data[0], *tau = (T *)o->data[1];
  int lw = 0;
  if (o->code == 0) KD_CU_SOLVER_CHECK(kd_cu_geqrf_ws(h, (int)m, (int)n, a, &lw));
  else KD_CU_SOLVER_CHECK(kd_cu_orgqr_ws(h, (int)m, (int)q, (int)k, a, tau, &lw));
  kd_cu_scratch ws(device), info(device);
  KD_CU_TRY(ws.alloc(sizeof(T) * (size_t)(lw > 0 ? lw : 1)));
  KD_CU_TRY(info.alloc(sizeof(int)));
  for (int64_t b = 0; b < batch; b++) {
    if (o->code == 0)
      KD_CU_SOLVER_CHECK(kd_cu_geqrf(h, (int)m, (int)n, a + b * m * c, tau + b * k, ws.as<T>(), lw, info.as<int>()));
    else
      KD_CU_SOLVER_CHECK(kd_cu_orgqr(h, (int)m, (int)q, (int)k, a + b * m * c, tau + b * k, ws.as<T>(), lw, info.as<int>()));
  }
  return KD_CUDA_OK;
}

template <typename T>
static kd_cuda_status kd_cu_la_svd(int device, kd_cuda_op *o) {
  const int64_t m = o->i[0], n = o->i[1], batch = o->i[2];
  const bool full = o->i[3] != 0;
  if (n < 1 || m < n || batch < 1 || m > INT32_MAX / 2)
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "linalg svd: bad sizes m=%lld n=%lld batch=%lld", (long long)m, (long long)n,
                       (long long)batch);
  cusolverDnHandle_t h;
  KD_CU_TRY(kd_cu_solver_handle(device, &h));
  T *a = (T *)o->data[0], *sv = (T *)o->data[1], *u = (T *)o->data[2], *vt = (T *)o->data[3];
  int *info = (int *)o->data[4];
  const int64_t uc = full ? m : n;
  int lw = 0;
  KD_CU_SOLVER_CHECK(kd_cu_gesvd_ws(h, (int)m, (int)n, a, &lw));
  kd_cu_scratch ws(device), rw(device);
  KD_CU_TRY(ws.alloc(sizeof(T) * (size_t)(lw > 0 ? lw : 1)));
  KD_CU_TRY(rw.alloc(sizeof(T) * (size_t)n));
  for (int64_t b = 0; b < batch; b++)
    KD_CU_SOLVER_CHECK(kd_cu_gesvd(h, full ? 'A' : 'S', (int)m, (int)n, a + b * m * n, sv + b * n, u + b * m * uc, vt + b * n * n,
                                   ws.as<T>(), lw, rw.as<T>(), info + b));
  return kd_cu_la_report(device, info, batch, o);
}

kd_cuda_status kd_cu_linalg(int device, kd_cuda_op *o) {
  const bool f64 = o->dtype == KD_DTYPE_F64;
  if (!f64 && o->dtype != KD_DTYPE_F32) return kd_cu_not_supported("linalg", o->dtype);
  switch (o->kind) {
    case KD_CUDA_OP_LINALG_LU: return f64 ? kd_cu_la_lu<double>(device, o) : kd_cu_la_lu<float>(device, o);
    case KD_CUDA_OP_LINALG_CHOLESKY: return f64 ? kd_cu_la_cholesky<double>(device, o) : kd_cu_la_cholesky<float>(device, o);
    case KD_CUDA_OP_LINALG_SVD: return f64 ? kd_cu_la_svd<double>(device, o) : kd_cu_la_svd<float>(device, o);
    case KD_CUDA_OP_LINALG_QR: return f64 ? kd_cu_la_qr<double>(device, o) : kd_cu_la_qr<float>(device, o);
    case KD_CUDA_OP_LINALG_EIGH: return f64 ? kd_cu_la_eigh<double>(device, o) : kd_cu_la_eigh<float>(device, o);
    default: return kd_cu_error(KD_CUDA_ERR_NOT_SUPPORTED, "linalg: kind %d has no CUDA kernel yet", (int)o->kind);
  }
}
