/* cublas_lu.cpp - the emulated cuBLAS's triangular solves (trsm, trsmBatched) and batched LU
 * routines (getrfBatched, getrsBatched, getriBatched, matinvBatched) for float and double, on
 * LAPACK (OpenBLAS's), in the order of the handle's stream. Arguments are checked when called
 * (CUBLAS_STATUS_INVALID_VALUE, with getrsBatched's host info set to -i as cuBLAS does); a matrix
 * or array outside device memory is refused there too. The arrays of matrices are device arrays
 * of device pointers, read when the call runs: a pointer in them outside device memory is a sticky
 * cudaErrorIllegalAddress, as the fault it is on a GPU. A null pivot array means no pivoting, as
 * in cuBLAS. alpha is read from host memory when called. */
#include <functional>
#include <vector>

#include "cublas_handle.h"
#include "emu.h"
#include "lapack.h"

using kd_emu::extent;
using kd_emu::lapack;
using kd_emu::matrix_at;
using kd_emu::on_device;

namespace {

int max1(int v) { return v > 1 ? v : 1; }

cublasStatus_t submit(cublasHandle_t h, const char *name, bool ok, std::function<void()> work) {
  if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!ok) return CUBLAS_STATUS_INVALID_VALUE;
  if (kd_emu::enqueue(h->stream, name, 1, std::move(work)) != cudaSuccess) return CUBLAS_STATUS_EXECUTION_FAILED;
  return CUBLAS_STATUS_SUCCESS;
}

struct trsm_args {
  CBLAS_SIDE side;
  CBLAS_UPLO uplo;
  CBLAS_TRANSPOSE trans;
  CBLAS_DIAG diag;
  int k; /* the order of A */
  bool ok;
};
trsm_args trsm_check(cublasSideMode_t side, cublasFillMode_t uplo, cublasOperation_t trans, cublasDiagType_t diag,
                     int m, int n, const void *alpha, int lda, int ldb) {
  trsm_args t;
  t.side = side == CUBLAS_SIDE_LEFT ? CblasLeft : CblasRight;
  t.uplo = uplo == CUBLAS_FILL_MODE_LOWER ? CblasLower : CblasUpper;
  t.trans = trans == CUBLAS_OP_N ? CblasNoTrans : CblasTrans;
  t.diag = diag == CUBLAS_DIAG_UNIT ? CblasUnit : CblasNonUnit;
  t.k = side == CUBLAS_SIDE_LEFT ? m : n;
  t.ok = (side == CUBLAS_SIDE_LEFT || side == CUBLAS_SIDE_RIGHT) &&
         (uplo == CUBLAS_FILL_MODE_LOWER || uplo == CUBLAS_FILL_MODE_UPPER) &&
         (trans == CUBLAS_OP_N || trans == CUBLAS_OP_T || trans == CUBLAS_OP_C) &&
         (diag == CUBLAS_DIAG_UNIT || diag == CUBLAS_DIAG_NON_UNIT) && m >= 0 && n >= 0 && alpha &&
         lda >= max1(t.k) && ldb >= max1(m);
  return t;
}

template <typename T>
cublasStatus_t trsm(cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo, cublasOperation_t trans,
                    cublasDiagType_t diag, int m, int n, const T *alpha, const T *A, int lda, T *B, int ldb) {
  const trsm_args t = trsm_check(side, uplo, trans, diag, m, n, alpha, lda, ldb);
  const bool ok = t.ok && on_device(A, extent(t.k, t.k, lda), sizeof(T)) && on_device(B, extent(m, n, ldb), sizeof(T));
  const T a = ok ? *alpha : 0;
  return submit(h, "cublasXtrsm", ok, [=] {
    lapack<T>::trsm(t.side, t.uplo, t.trans, t.diag, m, n, a, A, lda, B, ldb);
  });
}
template <typename T>
cublasStatus_t trsm_batched(cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo, cublasOperation_t trans,
                            cublasDiagType_t diag, int m, int n, const T *alpha, const T *const *A, int lda,
                            T *const *B, int ldb, int batch) {
  const trsm_args t = trsm_check(side, uplo, trans, diag, m, n, alpha, lda, ldb);
  const bool ok = t.ok && batch >= 0 && on_device(A, batch, sizeof(T *)) && on_device(B, batch, sizeof(T *));
  const T a = ok ? *alpha : 0;
  return submit(h, "cublasXtrsmBatched", ok, [=] {
    for (int i = 0; i < batch; i++)
      lapack<T>::trsm(t.side, t.uplo, t.trans, t.diag, m, n, a, matrix_at(A, i, extent(t.k, t.k, lda)), lda,
                      matrix_at(B, i, extent(m, n, ldb)), ldb);
  });
}

/* P (n per matrix) may be null: no pivoting. info[i]: 0, or j when U(j,j) is exactly zero. */
template <typename T>
cublasStatus_t getrf_batched(cublasHandle_t h, int n, T *const *A, int lda, int *P, int *info, int batch) {
  const bool ok = n >= 0 && lda >= max1(n) && batch >= 0 && on_device(A, batch, sizeof(T *)) &&
                  (!P || on_device(P, (size_t)n * batch, sizeof(int))) && on_device(info, batch, sizeof(int));
  return submit(h, "cublasXgetrfBatched", ok, [=] {
    for (int i = 0; i < batch; i++) {
      T *a = matrix_at(A, i, extent(n, n, lda));
      info[i] = P ? lapack<T>::getrf(n, n, a, lda, P + (size_t)i * n) : kd_emu::lu_unpivoted(n, n, a, lda);
    }
  });
}
/* info is a host pointer: 0, or -i for the first invalid argument (from 1, not counting the handle). */
template <typename T>
cublasStatus_t getrs_batched(cublasHandle_t h, cublasOperation_t trans, int n, int nrhs, const T *const *A, int lda,
                             const int *P, T *const *B, int ldb, int *info, int batch) {
  if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
  int bad = 0;
  if (trans != CUBLAS_OP_N && trans != CUBLAS_OP_T && trans != CUBLAS_OP_C) bad = 1;
  else if (n < 0) bad = 2;
  else if (nrhs < 0) bad = 3;
  else if (batch < 0) bad = 10;
  else if (!on_device(A, batch, sizeof(T *))) bad = 4;
  else if (lda < max1(n)) bad = 5;
  else if (P && !on_device(P, (size_t)n * batch, sizeof(int))) bad = 6;
  else if (!on_device(B, batch, sizeof(T *))) bad = 7;
  else if (ldb < max1(n)) bad = 8;
  if (!info) return CUBLAS_STATUS_INVALID_VALUE;
  *info = -bad;
  const char t = trans == CUBLAS_OP_N ? 'N' : 'T';
  return submit(h, "cublasXgetrsBatched", bad == 0, [=] {
    for (int i = 0; i < batch; i++) {
      const T *a = matrix_at(A, i, extent(n, n, lda));
      T *b = matrix_at(B, i, extent(n, nrhs, ldb));
      if (P) lapack<T>::getrs(t, n, nrhs, a, lda, P + (size_t)i * n, b, ldb);
      else kd_emu::lu_unpivoted_solve(t != 'N', n, nrhs, a, lda, b, ldb);
    }
  });
}
/* C[i] = A[i]^-1 from the factors of getrfBatched (A is not changed); info[i] as getrfBatched's. */
template <typename T>
void invert_from_lu(int n, const T *a, int lda, const int *p, T *c, int ldc, int *info) {
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) c[(size_t)j * ldc + i] = a[(size_t)j * lda + i];
  std::vector<int> identity;
  if (!p) {
    identity.resize(n);
    for (int i = 0; i < n; i++) identity[i] = i + 1;
    p = identity.data();
  }
  T query = 0;
  lapack<T>::getri(n, c, ldc, p, &query, -1);
  std::vector<T> work(max1((int)query));
  *info = lapack<T>::getri(n, c, ldc, p, work.data(), (int)work.size());
}
template <typename T>
cublasStatus_t getri_batched(cublasHandle_t h, int n, const T *const *A, int lda, const int *P, T *const *C, int ldc,
                             int *info, int batch) {
  const bool ok = n >= 0 && lda >= max1(n) && ldc >= max1(n) && batch >= 0 && on_device(A, batch, sizeof(T *)) &&
                  (!P || on_device(P, (size_t)n * batch, sizeof(int))) && on_device(C, batch, sizeof(T *)) &&
                  on_device(info, batch, sizeof(int));
  return submit(h, "cublasXgetriBatched", ok, [=] {
    for (int i = 0; i < batch; i++)
      invert_from_lu(n, matrix_at(A, i, extent(n, n, lda)), lda, P ? P + (size_t)i * n : nullptr,
                     matrix_at(C, i, extent(n, n, ldc)), ldc, info + i);
  });
}
/* Ainv[i] = A[i]^-1 (n <= 32, A not changed); info[i]: 0, or j when U(j,j) of A's LU is zero. */
template <typename T>
cublasStatus_t matinv_batched(cublasHandle_t h, int n, const T *const *A, int lda, T *const *Ainv, int lda_inv,
                              int *info, int batch) {
  const bool ok = n >= 0 && n <= 32 && lda >= max1(n) && lda_inv >= max1(n) && batch >= 0 &&
                  on_device(A, batch, sizeof(T *)) && on_device(Ainv, batch, sizeof(T *)) &&
                  on_device(info, batch, sizeof(int));
  return submit(h, "cublasXmatinvBatched", ok, [=] {
    for (int i = 0; i < batch; i++) {
      const T *a = matrix_at(A, i, extent(n, n, lda));
      T *c = matrix_at(Ainv, i, extent(n, n, lda_inv));
      std::vector<T> lu((size_t)n * n);
      for (int j = 0; j < n; j++)
        for (int r = 0; r < n; r++) lu[(size_t)j * n + r] = a[(size_t)j * lda + r];
      std::vector<int> piv(max1(n));
      info[i] = lapack<T>::getrf(n, n, lu.data(), max1(n), piv.data());
      if (info[i] == 0) invert_from_lu(n, lu.data(), max1(n), piv.data(), c, lda_inv, info + i);
    }
  });
}

}  // namespace

#define KD_EMU_CUBLAS_LU(P, T)                                                                                        \
  cublasStatus_t cublas##P##trsm(cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo,                      \
                                 cublasOperation_t trans, cublasDiagType_t diag, int m, int n, const T *alpha,         \
                                 const T *A, int lda, T *B, int ldb) {                                                 \
    return trsm<T>(h, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb);                                          \
  }                                                                                                                   \
  cublasStatus_t cublas##P##trsmBatched(cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo,               \
                                        cublasOperation_t trans, cublasDiagType_t diag, int m, int n, const T *alpha,  \
                                        const T *const A[], int lda, T *const B[], int ldb, int batchCount) {         \
    return trsm_batched<T>(h, side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb, batchCount);                      \
  }                                                                                                                   \
  cublasStatus_t cublas##P##getrfBatched(cublasHandle_t h, int n, T *const A[], int lda, int *P_, int *info,           \
                                         int batchSize) {                                                             \
    return getrf_batched<T>(h, n, A, lda, P_, info, batchSize);                                                       \
  }                                                                                                                   \
  cublasStatus_t cublas##P##getrsBatched(cublasHandle_t h, cublasOperation_t trans, int n, int nrhs,                  \
                                         const T *const Aarray[], int lda, const int *devIpiv, T *const Barray[],     \
                                         int ldb, int *info, int batchSize) {                                         \
    return getrs_batched<T>(h, trans, n, nrhs, Aarray, lda, devIpiv, Barray, ldb, info, batchSize);                   \
  }                                                                                                                   \
  cublasStatus_t cublas##P##getriBatched(cublasHandle_t h, int n, const T *const A[], int lda, const int *P_,         \
                                         T *const C[], int ldc, int *info, int batchSize) {                           \
    return getri_batched<T>(h, n, A, lda, P_, C, ldc, info, batchSize);                                               \
  }                                                                                                                   \
  cublasStatus_t cublas##P##matinvBatched(cublasHandle_t h, int n, const T *const A[], int lda, T *const Ainv[],      \
                                          int lda_inv, int *info, int batchSize) {                                    \
    return matinv_batched<T>(h, n, A, lda, Ainv, lda_inv, info, batchSize);                                           \
  }
KD_EMU_CUBLAS_LU(S, float)
KD_EMU_CUBLAS_LU(D, double)
