/* lapack.h - what the emulated cuSOLVER (cusolver.cpp) and cuBLAS's LU routines (cublas_lu.cpp)
 * share: LAPACK's Fortran entry points in OpenBLAS as one template per element type, the
 * unpivoted LU (which LAPACK lacks), a matrix's extent in memory, the device-pointer check (a host
 * pointer, freed memory or a range past the allocation is refused, as the runtime refuses them in
 * copies) and the reading of arrays of matrices. */
#ifndef KD_EMU_LAPACK_H
#define KD_EMU_LAPACK_H

#include <stddef.h>

#include "emu.h"

#include KD_EMU_CBLAS_HEADER

/* gfortran's hidden lengths of character arguments follow the others (as size_t). */
#define KD_EMU_LAPACK_DECLARE(T, p)                                                                                   \
  extern "C" {                                                                                                       \
  void p##getrf_(const int *m, const int *n, T *a, const int *lda, int *ipiv, int *info);                             \
  void p##getrs_(const char *trans, const int *n, const int *nrhs, const T *a, const int *lda, const int *ipiv, T *b, \
                 const int *ldb, int *info, size_t);                                                                  \
  void p##getri_(const int *n, T *a, const int *lda, const int *ipiv, T *work, const int *lwork, int *info);          \
  void p##potrf_(const char *uplo, const int *n, T *a, const int *lda, int *info, size_t);                           \
  void p##potrs_(const char *uplo, const int *n, const int *nrhs, const T *a, const int *lda, T *b, const int *ldb,  \
                 int *info, size_t);                                                                                  \
  void p##potri_(const char *uplo, const int *n, T *a, const int *lda, int *info, size_t);                           \
  void p##geqrf_(const int *m, const int *n, T *a, const int *lda, T *tau, T *work, const int *lwork, int *info);    \
  void p##orgqr_(const int *m, const int *n, const int *k, T *a, const int *lda, const T *tau, T *work,              \
                 const int *lwork, int *info);                                                                        \
  void p##ormqr_(const char *side, const char *trans, const int *m, const int *n, const int *k, const T *a,          \
                 const int *lda, const T *tau, T *c, const int *ldc, T *work, const int *lwork, int *info, size_t,    \
                 size_t);                                                                                             \
  void p##gesvd_(const char *jobu, const char *jobvt, const int *m, const int *n, T *a, const int *lda, T *s, T *u,   \
                 const int *ldu, T *vt, const int *ldvt, T *work, const int *lwork, int *info, size_t, size_t);       \
  void p##syevd_(const char *jobz, const char *uplo, const int *n, T *a, const int *lda, T *w, T *work,              \
                 const int *lwork, int *iwork, const int *liwork, int *info, size_t, size_t);                        \
  }
KD_EMU_LAPACK_DECLARE(float, s)
KD_EMU_LAPACK_DECLARE(double, d)

namespace kd_emu {

/* lapack<T>::name(...) calls ?name_ with the arguments by value (characters as char); a workspace
 * query (lwork -1) is query_name(...), returning the optimal lwork. */
template <typename T>
struct lapack;

#define KD_EMU_LAPACK_TRAITS(T, p)                                                                                   \
  template <>                                                                                                        \
  struct lapack<T> {                                                                                                 \
    static int getrf(int m, int n, T *a, int lda, int *ipiv) {                                                       \
      int info = 0;                                                                                                  \
      p##getrf_(&m, &n, a, &lda, ipiv, &info);                                                                       \
      return info;                                                                                                   \
    }                                                                                                                \
    static int getrs(char trans, int n, int nrhs, const T *a, int lda, const int *ipiv, T *b, int ldb) {             \
      int info = 0;                                                                                                  \
      p##getrs_(&trans, &n, &nrhs, a, &lda, ipiv, b, &ldb, &info, 1);                                                \
      return info;                                                                                                   \
    }                                                                                                                \
    static int getri(int n, T *a, int lda, const int *ipiv, T *work, int lwork) {                                    \
      int info = 0;                                                                                                  \
      p##getri_(&n, a, &lda, ipiv, work, &lwork, &info);                                                             \
      return info;                                                                                                   \
    }                                                                                                                \
    static int potrf(char uplo, int n, T *a, int lda) {                                                              \
      int info = 0;                                                                                                  \
      p##potrf_(&uplo, &n, a, &lda, &info, 1);                                                                       \
      return info;                                                                                                   \
    }                                                                                                                \
    static int potrs(char uplo, int n, int nrhs, const T *a, int lda, T *b, int ldb) {                               \
      int info = 0;                                                                                                  \
      p##potrs_(&uplo, &n, &nrhs, a, &lda, b, &ldb, &info, 1);                                                       \
      return info;                                                                                                   \
    }                                                                                                                \
    static int potri(char uplo, int n, T *a, int lda) {                                                              \
      int info = 0;                                                                                                  \
      p##potri_(&uplo, &n, a, &lda, &info, 1);                                                                       \
      return info;                                                                                                   \
    }                                                                                                                \
    static int geqrf(int m, int n, T *a, int lda, T *tau, T *work, int lwork) {                                      \
      int info = 0;                                                                                                  \
      p##geqrf_(&m, &n, a, &lda, tau, work, &lwork, &info);                                                          \
      return info;                                                                                                   \
    }                                                                                                                \
    static int orgqr(int m, int n, int k, T *a, int lda, const T *tau, T *work, int lwork) {                         \
      int info = 0;                                                                                                  \
      p##orgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, &info);                                                      \
      return info;                                                                                                   \
    }                                                                                                                \
    static int ormqr(char side, char trans, int m, int n, int k, const T *a, int lda, const T *tau, T *c, int ldc,   \
                     T *work, int lwork) {                                                                           \
      int info = 0;                                                                                                  \
      p##ormqr_(&side, &trans, &m, &n, &k, a, &lda, tau, c, &ldc, work, &lwork, &info, 1, 1);                        \
      return info;                                                                                                   \
    }                                                                                                                \
    static int gesvd(char jobu, char jobvt, int m, int n, T *a, int lda, T *s, T *u, int ldu, T *vt, int ldvt,       \
                     T *work, int lwork) {                                                                           \
      int info = 0;                                                                                                  \
      p##gesvd_(&jobu, &jobvt, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, &info, 1, 1);                   \
      return info;                                                                                                   \
    }                                                                                                                \
    static int syevd(char jobz, char uplo, int n, T *a, int lda, T *w, T *work, int lwork, int *iwork, int liwork) { \
      int info = 0;                                                                                                  \
      p##syevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, &info, 1, 1);                            \
      return info;                                                                                                   \
    }                                                                                                                \
    static void trsm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_TRANSPOSE trans, CBLAS_DIAG diag, int m, int n,         \
                     T alpha, const T *a, int lda, T *b, int ldb) {                                                  \
      if (m > 0 && n > 0) cblas_##p##trsm(CblasColMajor, side, uplo, trans, diag, m, n, alpha, a, lda, b, ldb);      \
    }                                                                                                                \
    static void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, T alpha, const T *a, int lda,      \
                     const T *b, int ldb, T beta, T *c, int ldc) {                                                   \
      if (m > 0 && n > 0) cblas_##p##gemm(CblasColMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);      \
    }                                                                                                                \
  };
KD_EMU_LAPACK_TRAITS(float, s)
KD_EMU_LAPACK_TRAITS(double, d)
#undef KD_EMU_LAPACK_TRAITS

/* The elements a column-major rows x cols matrix with leading dimension ld spans (0 if empty). */
inline size_t extent(long long rows, long long cols, long long ld) {
  return rows <= 0 || cols <= 0 ? 0 : (size_t)((cols - 1) * ld + rows);
}

/* Whether p..p+count elements of size bytes lie in one device allocation (true when count is 0). */
inline bool on_device(const void *p, size_t count, size_t size) {
  return count == 0 || (p && classify(p, count * size, nullptr) == 2);
}

/* Matrix i of an array of device pointers (itself in device memory), read when the call runs: a
 * pointer outside device memory is the illegal address a GPU faults on (sticky, on the stream). */
template <typename T>
T *matrix_at(T *const *array, int i, size_t count) {
  T *p = array[i];
  if (!on_device(p, count, sizeof(T))) throw fault{cudaErrorIllegalAddress};
  return p;
}

/* LU without pivoting (getrf given no pivot array): A = L U in place; the index (1-based) of the
 * first exactly zero pivot, or 0. Columns under a zero pivot are left unscaled, as LAPACK does. */
template <typename T>
int lu_unpivoted(int m, int n, T *a, int lda) {
  int info = 0;
  const int k = m < n ? m : n;
  for (int j = 0; j < k; j++) {
    const T p = a[(size_t)j * lda + j];
    if (p == 0) {
      if (!info) info = j + 1;
      continue;
    }
    for (int i = j + 1; i < m; i++) a[(size_t)j * lda + i] /= p;
    for (int c = j + 1; c < n; c++) {
      const T f = a[(size_t)c * lda + j];
      if (f != 0)
        for (int i = j + 1; i < m; i++) a[(size_t)c * lda + i] -= a[(size_t)j * lda + i] * f;
    }
  }
  return info;
}

/* Solves op(A) X = B (n x nrhs) with A = L U from lu_unpivoted (L unit lower, U upper). */
template <typename T>
void lu_unpivoted_solve(bool transpose, int n, int nrhs, const T *a, int lda, T *b, int ldb) {
  if (!transpose) {
    lapack<T>::trsm(CblasLeft, CblasLower, CblasNoTrans, CblasUnit, n, nrhs, 1, a, lda, b, ldb);
    lapack<T>::trsm(CblasLeft, CblasUpper, CblasNoTrans, CblasNonUnit, n, nrhs, 1, a, lda, b, ldb);
  } else {
    lapack<T>::trsm(CblasLeft, CblasUpper, CblasTrans, CblasNonUnit, n, nrhs, 1, a, lda, b, ldb);
    lapack<T>::trsm(CblasLeft, CblasLower, CblasTrans, CblasUnit, n, nrhs, 1, a, lda, b, ldb);
  }
}

}  // namespace kd_emu

#endif
