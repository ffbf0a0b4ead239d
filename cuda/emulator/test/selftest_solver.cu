/* selftest_solver.cu - the self-test's checks of the emulated cuSOLVER (cusolverDn.h) and of
 * cuBLAS's triangular solves and batched LU routines, called through the headers as CUDA code
 * calls them, on a stream of their own: each factorisation is checked by reconstruction (P A = L U,
 * A = L L^T, A = Q R, A = U S V^T, A V = V diag(w)) and each solve by its residual, in float and
 * double; devInfo and the status for singular, not positive definite and invalid arguments (a
 * size, a leading dimension, too small a workspace, a host pointer, freed memory); stream order
 * (a call sees the kernel enqueued before it on its stream). Part of build/Release/kd_emu_selftest
 * (selftest.cu has main()). */
#include <cublas_v2.h>
#include <cusolverDn.h>
#include <math.h>
#include <stdio.h>

#include <algorithm>
#include <vector>

#include "kd_cuda_internal.h"
#include "selftest.h"

namespace {

/* A deterministic m x n column-major matrix (leading dimension ld) of values in [-1, 1). */
template <typename T>
std::vector<T> random_matrix(int m, int n, int ld, unsigned seed) {
  std::vector<T> a((size_t)ld * n, (T)0);
  unsigned s = seed * 2654435761u + 12345u;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++) {
      s = s * 1664525u + 1013904223u;
      a[(size_t)j * ld + i] = (T)((double)(s >> 8) / (double)(1u << 23) - 1.0);
    }
  return a;
}

/* C = op(A) op(B) in double, m x n dense (ld m); op transposes when ta / tb. */
template <typename T>
std::vector<double> matmul(int m, int n, int k, const T *a, int lda, bool ta, const T *b, int ldb, bool tb) {
  std::vector<double> c((size_t)m * n, 0.0);
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++) {
      double s = 0;
      for (int p = 0; p < k; p++) {
        const double x = ta ? a[(size_t)i * lda + p] : a[(size_t)p * lda + i];
        const double y = tb ? b[(size_t)p * ldb + j] : b[(size_t)j * ldb + p];
        s += x * y;
      }
      c[(size_t)j * m + i] = s;
    }
  return c;
}

/* max |A - B| over an m x n block (A with leading dimension lda, B dense with ld m). */
template <typename T>
double max_diff(int m, int n, const T *a, int lda, const std::vector<double> &b) {
  double d = 0;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++) d = std::max(d, fabs((double)a[(size_t)j * lda + i] - b[(size_t)j * m + i]));
  return d;
}

/* max |Q^T Q - I| for the m x n matrix Q (orthonormal columns). */
template <typename T>
double orthonormality(int m, int n, const T *q, int ldq) {
  std::vector<double> g = matmul(n, n, m, q, ldq, true, q, ldq, false);
  double d = 0;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) d = std::max(d, fabs(g[(size_t)j * n + i] - (i == j ? 1.0 : 0.0)));
  return d;
}

template <typename T>
double tol() {
  return sizeof(T) == 4 ? 2e-4 : 1e-11;
}
template <typename T>
const char *type_name() {
  return sizeof(T) == 4 ? "float" : "double";
}

/* A handle on a fresh stream. */
struct solver {
  cusolverDnHandle_t h = nullptr;
  cudaStream_t s = nullptr;
  solver() {
    cudaStreamCreate(&s);
    cusolverDnCreate(&h);
    cusolverDnSetStream(h, s);
  }
  ~solver() {
    cusolverDnDestroy(h);
    cudaStreamDestroy(s);
  }
  int info(const dev_buf<int> &d) const {
    cudaStreamSynchronize(s);
    return d.get()[0];
  }
};

/* Per-type entry points, so one template test covers float and double. */
template <typename T>
struct dn;
#define KD_SELFTEST_DN(P, T)                                                                                          \
  template <>                                                                                                         \
  struct dn<T> {                                                                                                      \
    static constexpr auto getrf_bufferSize = cusolverDn##P##getrf_bufferSize;                                         \
    static constexpr auto getrf = cusolverDn##P##getrf;                                                               \
    static constexpr auto getrs = cusolverDn##P##getrs;                                                               \
    static constexpr auto potrf_bufferSize = cusolverDn##P##potrf_bufferSize;                                         \
    static constexpr auto potrf = cusolverDn##P##potrf;                                                               \
    static constexpr auto potrs = cusolverDn##P##potrs;                                                               \
    static constexpr auto potri_bufferSize = cusolverDn##P##potri_bufferSize;                                         \
    static constexpr auto potri = cusolverDn##P##potri;                                                               \
    static constexpr auto potrfBatched = cusolverDn##P##potrfBatched;                                                 \
    static constexpr auto potrsBatched = cusolverDn##P##potrsBatched;                                                 \
    static constexpr auto geqrf_bufferSize = cusolverDn##P##geqrf_bufferSize;                                         \
    static constexpr auto geqrf = cusolverDn##P##geqrf;                                                               \
    static constexpr auto orgqr_bufferSize = cusolverDn##P##orgqr_bufferSize;                                         \
    static constexpr auto orgqr = cusolverDn##P##orgqr;                                                               \
    static constexpr auto ormqr_bufferSize = cusolverDn##P##ormqr_bufferSize;                                         \
    static constexpr auto ormqr = cusolverDn##P##ormqr;                                                               \
    static constexpr auto gesvd_bufferSize = cusolverDn##P##gesvd_bufferSize;                                         \
    static constexpr auto gesvd = cusolverDn##P##gesvd;                                                               \
    static constexpr auto gesvdj_bufferSize = cusolverDn##P##gesvdj_bufferSize;                                       \
    static constexpr auto gesvdj = cusolverDn##P##gesvdj;                                                             \
    static constexpr auto gesvdjBatched_bufferSize = cusolverDn##P##gesvdjBatched_bufferSize;                         \
    static constexpr auto gesvdjBatched = cusolverDn##P##gesvdjBatched;                                               \
    static constexpr auto syevd_bufferSize = cusolverDn##P##syevd_bufferSize;                                         \
    static constexpr auto syevd = cusolverDn##P##syevd;                                                               \
    static constexpr auto syevj_bufferSize = cusolverDn##P##syevj_bufferSize;                                         \
    static constexpr auto syevj = cusolverDn##P##syevj;                                                               \
    static constexpr auto syevjBatched_bufferSize = cusolverDn##P##syevjBatched_bufferSize;                           \
    static constexpr auto syevjBatched = cusolverDn##P##syevjBatched;                                                 \
    static constexpr auto trsm = cublas##P##trsm;                                                                     \
    static constexpr auto trsmBatched = cublas##P##trsmBatched;                                                       \
    static constexpr auto getrfBatched = cublas##P##getrfBatched;                                                     \
    static constexpr auto getrsBatched = cublas##P##getrsBatched;                                                     \
    static constexpr auto getriBatched = cublas##P##getriBatched;                                                     \
    static constexpr auto matinvBatched = cublas##P##matinvBatched;                                                   \
  };
KD_SELFTEST_DN(S, float)
KD_SELFTEST_DN(D, double)

/* Applies LAPACK-style row interchanges (row i <-> ipiv[i] - 1, in order) to an m x n matrix. */
template <typename T>
void apply_pivots(std::vector<T> &a, int m, int n, int lda, const int *ipiv, int k) {
  for (int i = 0; i < k; i++) {
    const int p = ipiv[i] - 1;
    if (p != i)
      for (int j = 0; j < n; j++) std::swap(a[(size_t)j * lda + i], a[(size_t)j * lda + p]);
  }
  (void)m;
}

/* L (unit lower, m x k) times U (upper, k x n) from a packed LU, k = min(m, n). */
template <typename T>
std::vector<double> lu_product(int m, int n, const std::vector<T> &lu, int lda) {
  const int k = std::min(m, n);
  std::vector<T> l((size_t)m * k, 0), u((size_t)k * n, 0);
  for (int j = 0; j < k; j++)
    for (int i = 0; i < m; i++) l[(size_t)j * m + i] = i == j ? 1 : i > j ? lu[(size_t)j * lda + i] : 0;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < k; i++) u[(size_t)j * k + i] = i <= j ? lu[(size_t)j * lda + i] : 0;
  return matmul(m, n, k, l.data(), m, false, u.data(), k, false);
}

__global__ void k_spin_copy(long long cycles, const double *src, double *dst, int n) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
  for (int i = 0; i < n; i++) dst[i] = src[i];
}

/* ---- LU: getrf, getrs ---- */
template <typename T>
void lu_case() {
  solver sv;
  const int m = 7, n = 5, lda = 9;
  std::vector<T> A = random_matrix<T>(m, n, lda, 1);
  dev_buf<T> a(A.size());
  dev_buf<int> ipiv(n), info(1);
  a.put(A);
  int lwork = 0;
  CHECK(dn<T>::getrf_bufferSize(sv.h, m, n, a.p, lda, &lwork) == CUSOLVER_STATUS_SUCCESS && lwork > 0, "bufferSize");
  dev_buf<T> ws(lwork);
  CHECK(dn<T>::getrf(sv.h, m, n, a.p, lda, ws.p, ipiv.p, info.p) == CUSOLVER_STATUS_SUCCESS, "getrf");
  CHECK(sv.info(info) == 0, "%s getrf devInfo %d", type_name<T>(), sv.info(info));
  std::vector<T> lu = a.get(), pa = A;
  std::vector<int> piv = ipiv.get();
  apply_pivots(pa, m, n, lda, piv.data(), n);
  CHECK(max_diff(m, n, pa.data(), lda, lu_product(m, n, lu, lda)) < tol<T>(), "%s P A != L U", type_name<T>());
  CHECK(lu[(size_t)n * lda - 1] == A[(size_t)n * lda - 1], "rows past m were written");

  /* square solve, both transposes; B n x 3 with ldb n + 2 */
  const int k = 6, ldb = k + 2, nrhs = 3;
  std::vector<T> S = random_matrix<T>(k, k, k, 2), B = random_matrix<T>(k, nrhs, ldb, 3);
  dev_buf<T> s(S.size()), b(B.size());
  dev_buf<int> sp(k);
  int lwork_k = 0;
  CHECK(dn<T>::getrf_bufferSize(sv.h, k, k, s.p, k, &lwork_k) == CUSOLVER_STATUS_SUCCESS, "bufferSize");
  dev_buf<T> wk(lwork_k);
  CHECK(dn<T>::getrf(sv.h, k, k, s.p, k, ws.p, sp.p, info.p) == CUSOLVER_STATUS_INVALID_VALUE && sv.info(info) == -5,
        "a workspace smaller than bufferSize accepted");
  for (cublasOperation_t op : {CUBLAS_OP_N, CUBLAS_OP_T}) {
    s.put(S);
    b.put(B);
    CHECK(dn<T>::getrf(sv.h, k, k, s.p, k, wk.p, sp.p, info.p) == CUSOLVER_STATUS_SUCCESS && sv.info(info) == 0, "getrf");
    CHECK(dn<T>::getrs(sv.h, op, k, nrhs, s.p, k, sp.p, b.p, ldb, info.p) == CUSOLVER_STATUS_SUCCESS, "getrs");
    CHECK(sv.info(info) == 0, "getrs devInfo");
    std::vector<T> X = b.get();
    CHECK(max_diff(k, nrhs, B.data(), ldb, matmul(k, nrhs, k, S.data(), k, op == CUBLAS_OP_T, X.data(), ldb, false)) <
              tol<T>() * 10,
          "%s op(A) X != B (op %d)", type_name<T>(), (int)op);
  }
  /* no pivot array: A = L U, solved without pivoting */
  std::vector<T> D = S;
  for (int i = 0; i < k; i++) D[(size_t)i * k + i] += 8;
  s.put(D);
  b.put(B);
  CHECK(dn<T>::getrf(sv.h, k, k, s.p, k, wk.p, nullptr, info.p) == CUSOLVER_STATUS_SUCCESS && sv.info(info) == 0,
        "unpivoted getrf");
  std::vector<T> dlu = s.get();
  CHECK(max_diff(k, k, D.data(), k, lu_product(k, k, dlu, k)) < tol<T>(), "%s unpivoted A != L U", type_name<T>());
  CHECK(dn<T>::getrs(sv.h, CUBLAS_OP_N, k, nrhs, s.p, k, nullptr, b.p, ldb, info.p) == CUSOLVER_STATUS_SUCCESS,
        "unpivoted getrs");
  std::vector<T> X = b.get();
  CHECK(max_diff(k, nrhs, B.data(), ldb, matmul(k, nrhs, k, D.data(), k, false, X.data(), ldb, false)) < tol<T>() * 10,
        "%s unpivoted solve", type_name<T>());

  /* singular: a zero third column gives U(3,3) = 0 */
  std::vector<T> Z = S;
  for (int i = 0; i < k; i++) Z[(size_t)2 * k + i] = 0;
  s.put(Z);
  CHECK(dn<T>::getrf(sv.h, k, k, s.p, k, wk.p, sp.p, info.p) == CUSOLVER_STATUS_SUCCESS, "singular getrf status");
  CHECK(sv.info(info) == 3, "singular getrf devInfo %d, expected 3", sv.info(info));

  /* invalid arguments: status, and devInfo -i (i counted from 1 after the handle) */
  CHECK(dn<T>::getrf(sv.h, m, n, a.p, m - 1, ws.p, ipiv.p, info.p) == CUSOLVER_STATUS_INVALID_VALUE, "lda < m");
  CHECK(sv.info(info) == -4, "lda < m: devInfo %d, expected -4", sv.info(info));
  CHECK(dn<T>::getrf(sv.h, -1, n, a.p, lda, ws.p, ipiv.p, info.p) == CUSOLVER_STATUS_INVALID_VALUE &&
            sv.info(info) == -1, "m < 0");
  CHECK(dn<T>::getrf_bufferSize(sv.h, m, n, a.p, m - 1, &lwork) == CUSOLVER_STATUS_INVALID_VALUE, "bufferSize lda < m");
  std::vector<T> host(A);
  CHECK(dn<T>::getrf(sv.h, m, n, host.data(), lda, ws.p, ipiv.p, info.p) == CUSOLVER_STATUS_INVALID_VALUE &&
            sv.info(info) == -3, "a host matrix accepted");
  T *freed = nullptr;
  CK(cudaMalloc(&freed, A.size() * sizeof(T)));
  CK(cudaFree(freed));
  CHECK(dn<T>::getrf(sv.h, m, n, freed, lda, ws.p, ipiv.p, info.p) == CUSOLVER_STATUS_INVALID_VALUE &&
            sv.info(info) == -3, "freed memory accepted");
  dev_buf<T> small((size_t)(n - 1) * lda + m - 1); /* one element short of the last column */
  CHECK(dn<T>::getrf(sv.h, m, n, small.p, lda, ws.p, ipiv.p, info.p) == CUSOLVER_STATUS_INVALID_VALUE,
        "a matrix past its allocation accepted");
  CHECK(dn<T>::getrs(sv.h, CUBLAS_OP_N, k, nrhs, s.p, k, sp.p, b.p, k - 1, info.p) == CUSOLVER_STATUS_INVALID_VALUE &&
            sv.info(info) == -8, "getrs ldb < n");
  int hinfo = 0;
  CHECK(dn<T>::getrf(sv.h, m, n, a.p, lda, ws.p, ipiv.p, &hinfo) == CUSOLVER_STATUS_INVALID_VALUE && hinfo == 0,
        "a host devInfo accepted");
  CHECK(dn<T>::getrf(nullptr, m, n, a.p, lda, ws.p, ipiv.p, info.p) == CUSOLVER_STATUS_NOT_INITIALIZED, "no handle");
}

/* getrf runs in the order of its stream: it factors what a kernel enqueued before it wrote. */
void lu_stream_order() {
  solver sv;
  const int n = 4;
  std::vector<double> A = random_matrix<double>(n, n, n, 9);
  for (int i = 0; i < n; i++) A[(size_t)i * n + i] += 4;
  dev_buf<double> src(A.size()), a(A.size()), ws(n);
  dev_buf<int> ipiv(n), info(1);
  src.put(A);
  KD_LAUNCH(1, 1, 0, sv.s, k_spin_copy)(1755000ll * 30, src.p, a.p, n * n); /* a is all zeros until then */
  CK(cudaGetLastError());
  CHECK(cusolverDnDgetrf(sv.h, n, n, a.p, n, ws.p, ipiv.p, info.p) == CUSOLVER_STATUS_SUCCESS, "getrf");
  CHECK(cudaStreamQuery(sv.s) == cudaErrorNotReady, "the host waited for the stream");
  CHECK(sv.info(info) == 0, "getrf ran before the kernel that wrote its matrix (devInfo %d)", sv.info(info));
  cudaStream_t got = nullptr;
  CHECK(cusolverDnGetStream(sv.h, &got) == CUSOLVER_STATUS_SUCCESS && got == sv.s, "cusolverDnGetStream");
}

/* ---- Cholesky: potrf, potrs, potri, potrfBatched, potrsBatched ---- */
template <typename T>
std::vector<T> spd_matrix(int n, int ld, unsigned seed) {
  std::vector<T> m = random_matrix<T>(n, n, n, seed), a((size_t)ld * n, (T)0);
  std::vector<double> g = matmul(n, n, n, m.data(), n, false, m.data(), n, true);
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) a[(size_t)j * ld + i] = (T)(g[(size_t)j * n + i] + (i == j ? n : 0));
  return a;
}

template <typename T>
void cholesky_case() {
  solver sv;
  const int n = 6, lda = 8;
  std::vector<T> A = spd_matrix<T>(n, lda, 4);
  dev_buf<T> a(A.size());
  dev_buf<int> info(1);
  for (cublasFillMode_t uplo : {CUBLAS_FILL_MODE_LOWER, CUBLAS_FILL_MODE_UPPER}) {
    const bool lower = uplo == CUBLAS_FILL_MODE_LOWER;
    std::vector<T> in = A;
    for (int j = 0; j < n; j++) /* the other triangle is not referenced: fill it with garbage */
      for (int i = 0; i < n; i++)
        if (lower ? i < j : i > j) in[(size_t)j * lda + i] = (T)99;
    a.put(in);
    int lwork = 0;
    CHECK(dn<T>::potrf_bufferSize(sv.h, uplo, n, a.p, lda, &lwork) == CUSOLVER_STATUS_SUCCESS && lwork > 0, "bufferSize");
    dev_buf<T> ws(lwork);
    CHECK(dn<T>::potrf(sv.h, uplo, n, a.p, lda, ws.p, lwork, info.p) == CUSOLVER_STATUS_SUCCESS, "potrf");
    CHECK(sv.info(info) == 0, "potrf devInfo %d", sv.info(info));
    std::vector<T> f = a.get(), tri((size_t)n * n, 0);
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) {
        if (lower ? i >= j : i <= j) tri[(size_t)j * n + i] = f[(size_t)j * lda + i];
        else CHECK(f[(size_t)j * lda + i] == (T)99, "the other triangle was written");
      }
    /* lower: L L^T; upper: U^T U */
    std::vector<double> r = matmul(n, n, n, tri.data(), n, !lower, tri.data(), n, lower);
    CHECK(max_diff(n, n, A.data(), lda, r) < tol<T>() * 10, "%s A != factor product (%s)", type_name<T>(),
          lower ? "lower" : "upper");
    /* potrs */
    const int nrhs = 2, ldb = n + 1;
    std::vector<T> B = random_matrix<T>(n, nrhs, ldb, 5);
    dev_buf<T> b(B.size());
    b.put(B);
    CHECK(dn<T>::potrs(sv.h, uplo, n, nrhs, a.p, lda, b.p, ldb, info.p) == CUSOLVER_STATUS_SUCCESS && sv.info(info) == 0,
          "potrs");
    std::vector<T> X = b.get();
    CHECK(max_diff(n, nrhs, B.data(), ldb, matmul(n, nrhs, n, A.data(), lda, false, X.data(), ldb, false)) <
              tol<T>() * 10,
          "%s A X != B", type_name<T>());
    /* potri: the inverse from the factor, in the uplo triangle */
    int liwork = 0;
    CHECK(dn<T>::potri_bufferSize(sv.h, uplo, n, a.p, lda, &liwork) == CUSOLVER_STATUS_SUCCESS && liwork > 0,
          "potri bufferSize");
    dev_buf<T> wi(liwork);
    CHECK(dn<T>::potri(sv.h, uplo, n, a.p, lda, wi.p, liwork, info.p) == CUSOLVER_STATUS_SUCCESS && sv.info(info) == 0,
          "potri");
    std::vector<T> inv = a.get(), full((size_t)n * n);
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++)
        full[(size_t)j * n + i] = (lower ? i >= j : i <= j) ? inv[(size_t)j * lda + i] : inv[(size_t)i * lda + j];
    std::vector<double> id = matmul(n, n, n, A.data(), lda, false, full.data(), n, false);
    std::vector<double> eye((size_t)n * n, 0.0);
    for (int i = 0; i < n; i++) eye[(size_t)i * n + i] = 1;
    double d = 0;
    for (size_t i = 0; i < id.size(); i++) d = std::max(d, fabs(id[i] - eye[i]));
    CHECK(d < tol<T>() * 10, "%s A potri(A) != I (%g)", type_name<T>(), d);
    /* too small a workspace */
    a.put(in);
    CHECK(dn<T>::potrf(sv.h, uplo, n, a.p, lda, ws.p, lwork - 1, info.p) == CUSOLVER_STATUS_INVALID_VALUE &&
              sv.info(info) == -6,
          "lwork below bufferSize accepted");
  }
  /* not positive definite: the leading minor of order 4 */
  std::vector<T> N((size_t)n * n, 0);
  for (int i = 0; i < n; i++) N[(size_t)i * n + i] = i == 3 ? -1 : 2;
  dev_buf<T> nb(N.size()), ws(n);
  nb.put(N);
  CHECK(dn<T>::potrf(sv.h, CUBLAS_FILL_MODE_LOWER, n, nb.p, n, ws.p, n, info.p) == CUSOLVER_STATUS_SUCCESS, "potrf");
  CHECK(sv.info(info) == 4, "not positive definite: devInfo %d, expected 4", sv.info(info));
  CHECK(dn<T>::potrf(sv.h, (cublasFillMode_t)7, n, nb.p, n, ws.p, n, info.p) == CUSOLVER_STATUS_INVALID_VALUE &&
            sv.info(info) == -1, "bad uplo");

  /* batched: three matrices, the second not positive definite; one right-hand side each */
  const int batch = 3;
  std::vector<dev_buf<T> *> mats, rhs;
  std::vector<T *> mp, rp;
  std::vector<std::vector<T>> As, Bs;
  for (int i = 0; i < batch; i++) {
    As.push_back(i == 1 ? N : spd_matrix<T>(n, n, 10 + i));
    Bs.push_back(random_matrix<T>(n, 1, n, 20 + i));
    mats.push_back(new dev_buf<T>(n * n));
    rhs.push_back(new dev_buf<T>(n));
    mats[i]->put(As[i]);
    rhs[i]->put(Bs[i]);
    mp.push_back(mats[i]->p);
    rp.push_back(rhs[i]->p);
  }
  dev_buf<T *> am(batch), bm(batch);
  dev_buf<int> infos(batch);
  am.put(mp);
  bm.put(rp);
  CHECK(dn<T>::potrfBatched(sv.h, CUBLAS_FILL_MODE_LOWER, n, am.p, n, infos.p, batch) == CUSOLVER_STATUS_SUCCESS,
        "potrfBatched");
  cudaStreamSynchronize(sv.s);
  std::vector<int> iv = infos.get();
  CHECK(iv[0] == 0 && iv[1] == 4 && iv[2] == 0, "potrfBatched infos %d %d %d", iv[0], iv[1], iv[2]);
  CHECK(dn<T>::potrsBatched(sv.h, CUBLAS_FILL_MODE_LOWER, n, 1, am.p, n, bm.p, n, info.p, batch) ==
                CUSOLVER_STATUS_SUCCESS && sv.info(info) == 0,
        "potrsBatched");
  for (int i = 0; i < batch; i += 2) {
    std::vector<T> x = rhs[i]->get();
    CHECK(max_diff(n, 1, Bs[i].data(), n, matmul(n, 1, n, As[i].data(), n, false, x.data(), n, false)) < tol<T>() * 10,
          "%s potrsBatched matrix %d", type_name<T>(), i);
  }
  CHECK(dn<T>::potrsBatched(sv.h, CUBLAS_FILL_MODE_LOWER, n, 2, am.p, n, bm.p, n, info.p, batch) ==
                CUSOLVER_STATUS_INVALID_VALUE && sv.info(info) == -3,
        "potrsBatched nrhs 2 accepted");
  std::vector<T *> hostp(batch);
  CHECK(dn<T>::potrfBatched(sv.h, CUBLAS_FILL_MODE_LOWER, n, hostp.data(), n, infos.p, batch) ==
            CUSOLVER_STATUS_INVALID_VALUE, "a host pointer array accepted");
  for (int i = 0; i < batch; i++) {
    delete mats[i];
    delete rhs[i];
  }
}

/* ---- QR: geqrf, orgqr, ormqr ---- */
template <typename T>
void qr_case() {
  solver sv;
  const int m = 7, n = 4, lda = 8;
  std::vector<T> A = random_matrix<T>(m, n, lda, 6);
  dev_buf<T> a(A.size()), tau(n);
  dev_buf<int> info(1);
  a.put(A);
  int lwork = 0;
  CHECK(dn<T>::geqrf_bufferSize(sv.h, m, n, a.p, lda, &lwork) == CUSOLVER_STATUS_SUCCESS && lwork > 0, "bufferSize");
  dev_buf<T> ws(lwork);
  CHECK(dn<T>::geqrf(sv.h, m, n, a.p, lda, tau.p, ws.p, lwork, info.p) == CUSOLVER_STATUS_SUCCESS &&
            sv.info(info) == 0, "geqrf");
  std::vector<T> f = a.get(), R((size_t)n * n, 0);
  for (int j = 0; j < n; j++)
    for (int i = 0; i <= j; i++) R[(size_t)j * n + i] = f[(size_t)j * lda + i];
  /* the full Q (m x m) and the thin Q (m x n) from the reflectors */
  dev_buf<T> qf((size_t)m * m), qt(f.size());
  std::vector<T> qfill((size_t)m * m, 0);
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++) qfill[(size_t)j * m + i] = f[(size_t)j * lda + i];
  qf.put(qfill);
  qt.put(f);
  int lq = 0, lqf = 0;
  CHECK(dn<T>::orgqr_bufferSize(sv.h, m, n, n, qt.p, lda, tau.p, &lq) == CUSOLVER_STATUS_SUCCESS &&
            dn<T>::orgqr_bufferSize(sv.h, m, m, n, qf.p, m, tau.p, &lqf) == CUSOLVER_STATUS_SUCCESS,
        "orgqr bufferSize");
  dev_buf<T> wq(std::max(lq, lqf));
  CHECK(dn<T>::orgqr(sv.h, m, n, n, qt.p, lda, tau.p, wq.p, lq, info.p) == CUSOLVER_STATUS_SUCCESS && sv.info(info) == 0,
        "orgqr thin");
  CHECK(dn<T>::orgqr(sv.h, m, m, n, qf.p, m, tau.p, wq.p, lqf, info.p) == CUSOLVER_STATUS_SUCCESS && sv.info(info) == 0,
        "orgqr full");
  std::vector<T> Q = qt.get(), QF = qf.get();
  CHECK(orthonormality(m, n, Q.data(), lda) < tol<T>() && orthonormality(m, m, QF.data(), m) < tol<T>(),
        "%s Q^T Q != I", type_name<T>());
  CHECK(max_diff(m, n, A.data(), lda, matmul(m, n, n, Q.data(), lda, false, R.data(), n, false)) < tol<T>(),
        "%s A != Q R", type_name<T>());
  /* ormqr: Q^T C (left) and C Q (right) against the explicit full Q */
  const int nc = 3, ldc = m + 1;
  std::vector<T> C = random_matrix<T>(m, nc, ldc, 7);
  dev_buf<T> c(C.size());
  c.put(C);
  int lo = 0;
  CHECK(dn<T>::ormqr_bufferSize(sv.h, CUBLAS_SIDE_LEFT, CUBLAS_OP_T, m, nc, n, a.p, lda, tau.p, c.p, ldc, &lo) ==
            CUSOLVER_STATUS_SUCCESS, "ormqr bufferSize");
  dev_buf<T> wo(lo);
  CHECK(dn<T>::ormqr(sv.h, CUBLAS_SIDE_LEFT, CUBLAS_OP_T, m, nc, n, a.p, lda, tau.p, c.p, ldc, wo.p, lo, info.p) ==
                CUSOLVER_STATUS_SUCCESS && sv.info(info) == 0,
        "ormqr");
  std::vector<T> QC = c.get();
  CHECK(max_diff(m, nc, QC.data(), ldc, matmul(m, nc, m, QF.data(), m, true, C.data(), ldc, false)) < tol<T>(),
        "%s ormqr Q^T C", type_name<T>());
  const int mr = 2;
  std::vector<T> CR = random_matrix<T>(mr, m, mr, 8);
  dev_buf<T> cr(CR.size());
  cr.put(CR);
  CHECK(dn<T>::ormqr_bufferSize(sv.h, CUBLAS_SIDE_RIGHT, CUBLAS_OP_N, mr, m, n, a.p, lda, tau.p, cr.p, mr, &lo) ==
            CUSOLVER_STATUS_SUCCESS, "ormqr bufferSize (right)");
  dev_buf<T> wr(lo);
  CHECK(dn<T>::ormqr(sv.h, CUBLAS_SIDE_RIGHT, CUBLAS_OP_N, mr, m, n, a.p, lda, tau.p, cr.p, mr, wr.p, lo, info.p) ==
                CUSOLVER_STATUS_SUCCESS && sv.info(info) == 0,
        "ormqr right");
  std::vector<T> CQ = cr.get();
  CHECK(max_diff(mr, m, CQ.data(), mr, matmul(mr, m, m, CR.data(), mr, false, QF.data(), m, false)) < tol<T>(),
        "%s ormqr C Q", type_name<T>());
  /* invalid: too small a workspace, n > m for orgqr */
  CHECK(dn<T>::geqrf(sv.h, m, n, a.p, lda, tau.p, ws.p, lwork - 1, info.p) == CUSOLVER_STATUS_INVALID_VALUE &&
            sv.info(info) == -7, "geqrf lwork below bufferSize");
  CHECK(dn<T>::orgqr(sv.h, n, m, n, qt.p, lda, tau.p, wq.p, lq, info.p) == CUSOLVER_STATUS_INVALID_VALUE &&
            sv.info(info) == -2, "orgqr n > m");
  CHECK(dn<T>::ormqr(sv.h, CUBLAS_SIDE_LEFT, CUBLAS_OP_T, m, nc, m + 1, a.p, lda, tau.p, c.p, ldc, wo.p, lo, info.p) ==
                CUSOLVER_STATUS_INVALID_VALUE && sv.info(info) == -5,
        "ormqr k > m");
}

/* ---- SVD: gesvd, gesvdj, gesvdjBatched ---- */
/* max |A - U[:, :p] diag(S) W^T| for W (n x p) given as W itself (w_is_vt false) or as W^T (p x n rows of VT). */
template <typename T>
double svd_error(int m, int n, const std::vector<T> &A, int lda, const T *U, int ldu, const T *S, const T *W, int ldw,
                 bool w_is_vt) {
  const int p = std::min(m, n);
  std::vector<T> us((size_t)m * p);
  for (int j = 0; j < p; j++)
    for (int i = 0; i < m; i++) us[(size_t)j * m + i] = U[(size_t)j * ldu + i] * S[j];
  return max_diff(m, n, A.data(), lda, matmul(m, n, p, us.data(), m, false, W, ldw, !w_is_vt));
}
template <typename T>
bool descending(const T *s, int p) {
  for (int i = 1; i < p; i++)
    if (s[i] > s[i - 1]) return false;
  return p == 0 || s[p - 1] >= 0;
}

template <typename T>
void svd_case() {
  solver sv;
  const int m = 6, n = 4, lda = 7;
  std::vector<T> A = random_matrix<T>(m, n, lda, 11);
  dev_buf<T> a(A.size()), s(n), u((size_t)m * m), vt((size_t)n * n);
  dev_buf<int> info(1);
  int lwork = 0;
  CHECK(dn<T>::gesvd_bufferSize(sv.h, m, n, &lwork) == CUSOLVER_STATUS_SUCCESS && lwork > 0, "bufferSize");
  dev_buf<T> ws(lwork), rwork(n);
  std::vector<T> Sall;
  for (char job : {'A', 'S', 'N'}) {
    a.put(A);
    CHECK(dn<T>::gesvd(sv.h, job, job, m, n, a.p, lda, s.p, u.p, m, vt.p, n, ws.p, lwork, rwork.p, info.p) ==
                  CUSOLVER_STATUS_SUCCESS && sv.info(info) == 0,
          "gesvd %c", job);
    std::vector<T> S = s.get(), U = u.get(), VT = vt.get();
    CHECK(descending(S.data(), n), "%s singular values not descending", type_name<T>());
    if (job == 'A') Sall = S;
    if (job != 'N') {
      CHECK(svd_error(m, n, A, lda, U.data(), m, S.data(), VT.data(), n, true) < tol<T>(), "%s A != U S VT (%c)",
            type_name<T>(), job);
      CHECK(orthonormality(m, job == 'A' ? m : n, U.data(), m) < tol<T>() && orthonormality(n, n, VT.data(), n) < tol<T>(),
            "%s U, VT not orthogonal (%c)", type_name<T>(), job);
    } else {
      for (int i = 0; i < n; i++) CHECK(fabs((double)S[i] - (double)Sall[i]) < tol<T>(), "%s S without vectors", type_name<T>());
    }
  }
  /* cuSOLVER's gesvd needs m >= n */
  CHECK(dn<T>::gesvd_bufferSize(sv.h, n, m, &lwork) == CUSOLVER_STATUS_INVALID_VALUE, "bufferSize m < n accepted");
  CHECK(dn<T>::gesvd(sv.h, 'A', 'A', n, m, a.p, n, s.p, u.p, n, vt.p, m, ws.p, lwork, rwork.p, info.p) ==
                CUSOLVER_STATUS_INVALID_VALUE && sv.info(info) == -4,
        "gesvd m < n accepted");
  CHECK(dn<T>::gesvd(sv.h, 'X', 'A', m, n, a.p, lda, s.p, u.p, m, vt.p, n, ws.p, lwork, rwork.p, info.p) ==
                CUSOLVER_STATUS_INVALID_VALUE && sv.info(info) == -1,
        "gesvd jobu X accepted");
  CHECK(dn<T>::gesvd(sv.h, 'A', 'A', m, n, a.p, lda, s.p, u.p, m, vt.p, n, ws.p, lwork - 1, rwork.p, info.p) ==
                CUSOLVER_STATUS_INVALID_VALUE && sv.info(info) == -13,
        "gesvd lwork below bufferSize");

  /* gesvdj: wide and tall, full and economy; V (not V^T) */
  gesvdjInfo_t params;
  CHECK(cusolverDnCreateGesvdjInfo(&params) == CUSOLVER_STATUS_SUCCESS, "CreateGesvdjInfo");
  CHECK(cusolverDnXgesvdjSetTolerance(params, 1e-7) == CUSOLVER_STATUS_SUCCESS &&
            cusolverDnXgesvdjSetMaxSweeps(params, 20) == CUSOLVER_STATUS_SUCCESS &&
            cusolverDnXgesvdjSetSortEig(params, 1) == CUSOLVER_STATUS_SUCCESS, "gesvdj setters");
  for (int shape = 0; shape < 2; shape++)
    for (int econ = 0; econ < 2; econ++) {
      const int mm = shape ? 3 : 6, nn = shape ? 5 : 4, p = std::min(mm, nn), ld = mm + 1;
      std::vector<T> B = random_matrix<T>(mm, nn, ld, 12 + shape);
      dev_buf<T> b(B.size()), sj(p), uj((size_t)mm * mm), vj((size_t)nn * nn);
      b.put(B);
      int lj = 0;
      CHECK(dn<T>::gesvdj_bufferSize(sv.h, CUSOLVER_EIG_MODE_VECTOR, econ, mm, nn, b.p, ld, sj.p, uj.p, mm, vj.p, nn, &lj,
                                     params) == CUSOLVER_STATUS_SUCCESS, "gesvdj bufferSize");
      dev_buf<T> wj(lj);
      CHECK(dn<T>::gesvdj(sv.h, CUSOLVER_EIG_MODE_VECTOR, econ, mm, nn, b.p, ld, sj.p, uj.p, mm, vj.p, nn, wj.p, lj,
                          info.p, params) == CUSOLVER_STATUS_SUCCESS && sv.info(info) == 0,
            "gesvdj");
      std::vector<T> S = sj.get(), U = uj.get(), V = vj.get();
      CHECK(descending(S.data(), p), "%s gesvdj not sorted", type_name<T>());
      CHECK(svd_error(mm, nn, B, ld, U.data(), mm, S.data(), V.data(), nn, false) < tol<T>(), "%s gesvdj A != U S V^T (%dx%d econ %d)",
            type_name<T>(), mm, nn, econ);
      CHECK(orthonormality(mm, econ ? p : mm, U.data(), mm) < tol<T>() &&
                orthonormality(nn, econ ? p : nn, V.data(), nn) < tol<T>(),
            "%s gesvdj U, V not orthonormal", type_name<T>());
      double res = -1;
      int sweeps = -1;
      CHECK(cusolverDnXgesvdjGetResidual(sv.h, params, &res) == CUSOLVER_STATUS_SUCCESS && res >= 0 && res < tol<T>() * 10 &&
                cusolverDnXgesvdjGetSweeps(sv.h, params, &sweeps) == CUSOLVER_STATUS_SUCCESS && sweeps >= 1,
            "gesvdj residual %g, sweeps %d", res, sweeps);
    }
  /* gesvdjBatched: 3 matrices 5 x 3, full U and V; m > 32 refused */
  const int bm = 5, bn = 3, batch = 3;
  std::vector<T> BA = random_matrix<T>(bm, bn * batch, bm, 14);
  dev_buf<T> ba(BA.size()), bs(bn * batch), bu((size_t)bm * bm * batch), bv((size_t)bn * bn * batch);
  dev_buf<int> binfo(batch);
  ba.put(BA);
  int lb = 0;
  CHECK(dn<T>::gesvdjBatched_bufferSize(sv.h, CUSOLVER_EIG_MODE_VECTOR, bm, bn, ba.p, bm, bs.p, bu.p, bm, bv.p, bn, &lb,
                                        params, batch) == CUSOLVER_STATUS_SUCCESS, "gesvdjBatched bufferSize");
  dev_buf<T> wb(lb);
  CHECK(dn<T>::gesvdjBatched(sv.h, CUSOLVER_EIG_MODE_VECTOR, bm, bn, ba.p, bm, bs.p, bu.p, bm, bv.p, bn, wb.p, lb,
                             binfo.p, params, batch) == CUSOLVER_STATUS_SUCCESS, "gesvdjBatched");
  cudaStreamSynchronize(sv.s);
  std::vector<T> S = bs.get(), U = bu.get(), V = bv.get();
  std::vector<int> bi = binfo.get();
  for (int i = 0; i < batch; i++) {
    std::vector<T> Ai(BA.begin() + (size_t)i * bm * bn, BA.begin() + (size_t)(i + 1) * bm * bn);
    CHECK(bi[i] == 0, "gesvdjBatched info[%d] %d", i, bi[i]);
    CHECK(svd_error(bm, bn, Ai, bm, U.data() + (size_t)i * bm * bm, bm, S.data() + i * bn, V.data() + (size_t)i * bn * bn,
                    bn, false) < tol<T>(), "%s gesvdjBatched matrix %d", type_name<T>(), i);
  }
  double res = 0;
  CHECK(cusolverDnXgesvdjGetResidual(sv.h, params, &res) == CUSOLVER_STATUS_NOT_SUPPORTED, "batched residual");
  CHECK(dn<T>::gesvdjBatched(sv.h, CUSOLVER_EIG_MODE_VECTOR, 33, bn, ba.p, 33, bs.p, bu.p, 33, bv.p, bn, wb.p, lb,
                             binfo.p, params, 1) == CUSOLVER_STATUS_INVALID_VALUE, "gesvdjBatched m 33 accepted");
  CHECK(cusolverDnDestroyGesvdjInfo(params) == CUSOLVER_STATUS_SUCCESS, "DestroyGesvdjInfo");
}

/* ---- symmetric eigenvalues: syevd, syevj, syevjBatched ---- */
/* max |A V - V diag(w)| and max |V^T V - I| for the symmetric A (dense, ld n). */
template <typename T>
double eig_error(int n, const std::vector<T> &A, const T *V, int ldv, const T *w) {
  std::vector<double> av = matmul(n, n, n, A.data(), n, false, V, ldv, false);
  double d = orthonormality(n, n, V, ldv);
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) d = std::max(d, fabs(av[(size_t)j * n + i] - (double)V[(size_t)j * ldv + i] * w[j]));
  return d;
}
template <typename T>
std::vector<T> symmetric(int n, unsigned seed) {
  std::vector<T> a = random_matrix<T>(n, n, n, seed);
  for (int j = 0; j < n; j++)
    for (int i = 0; i < j; i++) a[(size_t)j * n + i] = a[(size_t)i * n + j];
  return a;
}
template <typename T>
bool ascending(const T *w, int n) {
  for (int i = 1; i < n; i++)
    if (w[i] < w[i - 1]) return false;
  return true;
}

template <typename T>
void eig_case() {
  solver sv;
  const int n = 5;
  std::vector<T> A = symmetric<T>(n, 15), lowerOnly = A;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < j; i++) lowerOnly[(size_t)j * n + i] = (T)77; /* the upper triangle is not referenced */
  dev_buf<T> a(A.size()), w(n);
  dev_buf<int> info(1);
  syevjInfo_t params;
  CHECK(cusolverDnCreateSyevjInfo(&params) == CUSOLVER_STATUS_SUCCESS &&
            cusolverDnXsyevjSetTolerance(params, 1e-7) == CUSOLVER_STATUS_SUCCESS &&
            cusolverDnXsyevjSetMaxSweeps(params, 30) == CUSOLVER_STATUS_SUCCESS &&
            cusolverDnXsyevjSetSortEig(params, 1) == CUSOLVER_STATUS_SUCCESS, "syevj parameters");
  for (int jacobi = 0; jacobi < 2; jacobi++) {
    a.put(lowerOnly);
    int lwork = 0;
    const cusolverStatus_t st =
        jacobi ? dn<T>::syevj_bufferSize(sv.h, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n, a.p, n, w.p, &lwork, params)
               : dn<T>::syevd_bufferSize(sv.h, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n, a.p, n, w.p, &lwork);
    CHECK(st == CUSOLVER_STATUS_SUCCESS && lwork > 0, "bufferSize");
    dev_buf<T> ws(lwork);
    const cusolverStatus_t run =
        jacobi ? dn<T>::syevj(sv.h, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n, a.p, n, w.p, ws.p, lwork, info.p, params)
               : dn<T>::syevd(sv.h, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n, a.p, n, w.p, ws.p, lwork, info.p);
    CHECK(run == CUSOLVER_STATUS_SUCCESS && sv.info(info) == 0, "%s", jacobi ? "syevj" : "syevd");
    std::vector<T> V = a.get(), W = w.get();
    CHECK(ascending(W.data(), n), "%s eigenvalues not ascending", type_name<T>());
    CHECK(eig_error(n, A, V.data(), n, W.data()) < tol<T>(), "%s A V != V diag(w) (%s)", type_name<T>(),
          jacobi ? "syevj" : "syevd");
    if (jacobi) {
      double res = -1;
      CHECK(cusolverDnXsyevjGetResidual(sv.h, params, &res) == CUSOLVER_STATUS_SUCCESS && res >= 0 && res < tol<T>() * 10,
            "syevj residual %g", res);
    }
    /* invalid: jobz, lwork */
    CHECK((jacobi ? dn<T>::syevj(sv.h, (cusolverEigMode_t)5, CUBLAS_FILL_MODE_LOWER, n, a.p, n, w.p, ws.p, lwork, info.p, params)
                  : dn<T>::syevd(sv.h, (cusolverEigMode_t)5, CUBLAS_FILL_MODE_LOWER, n, a.p, n, w.p, ws.p, lwork,
                                 info.p)) == CUSOLVER_STATUS_INVALID_VALUE && sv.info(info) == -1,
          "bad jobz accepted");
    CHECK((jacobi ? dn<T>::syevj(sv.h, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n, a.p, n, w.p, ws.p, lwork - 1,
                                 info.p, params)
                  : dn<T>::syevd(sv.h, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n, a.p, n, w.p, ws.p, lwork - 1,
                                 info.p)) == CUSOLVER_STATUS_INVALID_VALUE && sv.info(info) == -8,
          "lwork below bufferSize accepted");
  }
  /* eigenvalues only: the same values */
  a.put(A);
  int lwn = 0;
  CHECK(dn<T>::syevd_bufferSize(sv.h, CUSOLVER_EIG_MODE_NOVECTOR, CUBLAS_FILL_MODE_UPPER, n, a.p, n, w.p, &lwn) ==
            CUSOLVER_STATUS_SUCCESS, "bufferSize");
  std::vector<T> W0 = w.get();
  dev_buf<T> wn(lwn);
  CHECK(dn<T>::syevd(sv.h, CUSOLVER_EIG_MODE_NOVECTOR, CUBLAS_FILL_MODE_UPPER, n, a.p, n, w.p, wn.p, lwn, info.p) ==
                CUSOLVER_STATUS_SUCCESS && sv.info(info) == 0,
        "syevd without vectors");
  std::vector<T> W1 = w.get();
  for (int i = 0; i < n; i++) CHECK(fabs((double)W1[i] - (double)W0[i]) < tol<T>(), "%s eigenvalues only", type_name<T>());

  /* syevjBatched: 3 matrices of order 4 (upper), lda 5; n > 32 refused */
  const int bn = 4, lda = 5, batch = 3;
  std::vector<T> BA((size_t)lda * bn * batch, 0);
  std::vector<std::vector<T>> mats;
  for (int b = 0; b < batch; b++) {
    mats.push_back(symmetric<T>(bn, 30 + b));
    for (int j = 0; j < bn; j++)
      for (int i = 0; i < bn; i++) BA[(size_t)b * lda * bn + (size_t)j * lda + i] = mats[b][(size_t)j * bn + i];
  }
  dev_buf<T> ba(BA.size()), bw(bn * batch);
  dev_buf<int> binfo(batch);
  ba.put(BA);
  int lb = 0;
  CHECK(dn<T>::syevjBatched_bufferSize(sv.h, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, bn, ba.p, lda, bw.p, &lb,
                                       params, batch) == CUSOLVER_STATUS_SUCCESS, "syevjBatched bufferSize");
  dev_buf<T> wb(lb);
  CHECK(dn<T>::syevjBatched(sv.h, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, bn, ba.p, lda, bw.p, wb.p, lb, binfo.p,
                            params, batch) == CUSOLVER_STATUS_SUCCESS, "syevjBatched");
  cudaStreamSynchronize(sv.s);
  std::vector<T> V = ba.get(), W = bw.get();
  std::vector<int> bi = binfo.get();
  for (int b = 0; b < batch; b++) {
    CHECK(bi[b] == 0, "syevjBatched info[%d] %d", b, bi[b]);
    CHECK(ascending(W.data() + b * bn, bn) &&
              eig_error(bn, mats[b], V.data() + (size_t)b * lda * bn, lda, W.data() + b * bn) < tol<T>(),
          "%s syevjBatched matrix %d", type_name<T>(), b);
  }
  CHECK(dn<T>::syevjBatched(sv.h, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, 33, ba.p, 33, bw.p, wb.p, lb, binfo.p,
                            params, 1) == CUSOLVER_STATUS_INVALID_VALUE, "syevjBatched n 33 accepted");
  CHECK(cusolverDnDestroySyevjInfo(params) == CUSOLVER_STATUS_SUCCESS, "DestroySyevjInfo");
}

/* ---- cuBLAS: trsm, trsmBatched, getrfBatched, getrsBatched, getriBatched, matinvBatched ---- */
template <typename T>
void cublas_lu_case() {
  cublasHandle_t h;
  cudaStream_t st;
  CK(cudaStreamCreate(&st));
  CHECK(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS && cublasSetStream(h, st) == CUBLAS_STATUS_SUCCESS, "cublasCreate");
  const int n = 5, nrhs = 3, lda = 6, ldb = 7;
  /* a well-conditioned triangular A (lower and upper parts both set: only uplo's is read) */
  std::vector<T> A = random_matrix<T>(n, n, lda, 40);
  for (int i = 0; i < n; i++) A[(size_t)i * lda + i] = (T)(3 + i);
  std::vector<T> B = random_matrix<T>(n, nrhs, ldb, 41);
  dev_buf<T> a(A.size()), b(B.size());
  a.put(A);
  const T alpha = 2;
  for (cublasFillMode_t uplo : {CUBLAS_FILL_MODE_LOWER, CUBLAS_FILL_MODE_UPPER})
    for (cublasOperation_t op : {CUBLAS_OP_N, CUBLAS_OP_T}) {
      b.put(B);
      CHECK(dn<T>::trsm(h, CUBLAS_SIDE_LEFT, uplo, op, CUBLAS_DIAG_NON_UNIT, n, nrhs, &alpha, a.p, lda, b.p, ldb) ==
                CUBLAS_STATUS_SUCCESS, "trsm");
      cudaStreamSynchronize(st);
      std::vector<T> X = b.get(), tri((size_t)n * n, 0);
      for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++)
          if (uplo == CUBLAS_FILL_MODE_LOWER ? i >= j : i <= j) tri[(size_t)j * n + i] = A[(size_t)j * lda + i];
      std::vector<double> r = matmul(n, nrhs, n, tri.data(), n, op == CUBLAS_OP_T, X.data(), ldb, false);
      for (double &x : r) x /= 2;
      CHECK(max_diff(n, nrhs, B.data(), ldb, r) < tol<T>(), "%s trsm op(A) X != alpha B", type_name<T>());
    }
  /* right side: X A = B with A upper, unit diagonal */
  std::vector<T> R = random_matrix<T>(nrhs, n, nrhs, 42);
  dev_buf<T> r(R.size());
  r.put(R);
  const T one = 1;
  CHECK(dn<T>::trsm(h, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_UNIT, nrhs, n, &one, a.p, lda, r.p,
                    nrhs) == CUBLAS_STATUS_SUCCESS, "trsm right");
  cudaStreamSynchronize(st);
  {
    std::vector<T> X = r.get(), tri((size_t)n * n, 0);
    for (int j = 0; j < n; j++)
      for (int i = 0; i <= j; i++) tri[(size_t)j * n + i] = i == j ? 1 : A[(size_t)j * lda + i];
    CHECK(max_diff(nrhs, n, R.data(), nrhs, matmul(nrhs, n, n, X.data(), nrhs, false, tri.data(), n, false)) < tol<T>(),
          "%s trsm right", type_name<T>());
  }
  CHECK(dn<T>::trsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, n, nrhs, &alpha, a.p,
                    n - 1, b.p, ldb) == CUBLAS_STATUS_INVALID_VALUE, "trsm lda < m accepted");
  std::vector<T> hostB(B);
  CHECK(dn<T>::trsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, n, nrhs, &alpha, a.p,
                    lda, hostB.data(), ldb) == CUBLAS_STATUS_INVALID_VALUE, "trsm host B accepted");

  /* batched LU of 3 matrices (ld lda); the third singular */
  const int batch = 3;
  std::vector<std::vector<T>> As;
  std::vector<dev_buf<T> *> mats, rhs, invs;
  std::vector<T *> mp, rp, ip;
  for (int i = 0; i < batch; i++) {
    As.push_back(random_matrix<T>(n, n, lda, 50 + i));
    if (i == 2)
      for (int r2 = 0; r2 < n; r2++) As[i][(size_t)1 * lda + r2] = 0; /* U(2,2) = 0 */
    mats.push_back(new dev_buf<T>(As[i].size()));
    rhs.push_back(new dev_buf<T>(B.size()));
    invs.push_back(new dev_buf<T>((size_t)n * n));
    mats[i]->put(As[i]);
    rhs[i]->put(B);
    mp.push_back(mats[i]->p);
    rp.push_back(rhs[i]->p);
    ip.push_back(invs[i]->p);
  }
  dev_buf<T *> am(batch), bm(batch), cm(batch);
  dev_buf<int> piv(n * batch), infos(batch);
  am.put(mp);
  bm.put(rp);
  cm.put(ip);
  /* the inverses first, with matinvBatched (A unchanged) */
  CHECK(dn<T>::matinvBatched(h, n, am.p, lda, cm.p, n, infos.p, batch) == CUBLAS_STATUS_SUCCESS, "matinvBatched");
  cudaStreamSynchronize(st);
  std::vector<int> iv = infos.get();
  CHECK(iv[0] == 0 && iv[1] == 0 && iv[2] > 0, "matinvBatched infos %d %d %d", iv[0], iv[1], iv[2]);
  auto check_inverse = [&](int i, const char *what) -> bool {
    std::vector<T> inv = invs[i]->get();
    std::vector<double> id = matmul(n, n, n, As[i].data(), lda, false, inv.data(), n, false);
    for (int j = 0; j < n; j++)
      for (int k = 0; k < n; k++)
        if (fabs(id[(size_t)j * n + k] - (j == k ? 1.0 : 0.0)) > tol<T>() * 100) {
          printf("FAIL %s: %s A inverse != I (matrix %d)\n", what, type_name<T>(), i);
          return false;
        }
    return true;
  };
  for (int i = 0; i < 2; i++) CHECK(check_inverse(i, "matinvBatched"), "matinvBatched");
  CHECK(dn<T>::matinvBatched(h, 33, am.p, 33, cm.p, 33, infos.p, 1) == CUBLAS_STATUS_INVALID_VALUE,
        "matinvBatched n 33 accepted");
  /* getrfBatched, pivoted */
  CHECK(dn<T>::getrfBatched(h, n, am.p, lda, piv.p, infos.p, batch) == CUBLAS_STATUS_SUCCESS, "getrfBatched");
  cudaStreamSynchronize(st);
  iv = infos.get();
  CHECK(iv[0] == 0 && iv[1] == 0 && iv[2] == 2, "getrfBatched infos %d %d %d", iv[0], iv[1], iv[2]);
  std::vector<int> pv = piv.get();
  for (int i = 0; i < 2; i++) {
    std::vector<T> lu = mats[i]->get(), pa = As[i];
    apply_pivots(pa, n, n, lda, pv.data() + i * n, n);
    CHECK(max_diff(n, n, pa.data(), lda, lu_product(n, n, lu, lda)) < tol<T>(), "%s getrfBatched P A != L U (%d)",
          type_name<T>(), i);
  }
  /* getrsBatched (host info) on the first two */
  int hinfo = -99;
  CHECK(dn<T>::getrsBatched(h, CUBLAS_OP_N, n, nrhs, am.p, lda, piv.p, bm.p, ldb, &hinfo, 2) == CUBLAS_STATUS_SUCCESS &&
            hinfo == 0, "getrsBatched");
  cudaStreamSynchronize(st);
  for (int i = 0; i < 2; i++) {
    std::vector<T> X = rhs[i]->get();
    CHECK(max_diff(n, nrhs, B.data(), ldb, matmul(n, nrhs, n, As[i].data(), lda, false, X.data(), ldb, false)) <
              tol<T>() * 10, "%s getrsBatched A X != B (%d)", type_name<T>(), i);
  }
  CHECK(dn<T>::getrsBatched(h, CUBLAS_OP_N, n, nrhs, am.p, n - 1, piv.p, bm.p, ldb, &hinfo, 2) ==
                CUBLAS_STATUS_INVALID_VALUE && hinfo == -5,
        "getrsBatched lda < n: info %d, expected -5", hinfo);
  /* getriBatched from the factors */
  dev_buf<T> zero((size_t)n * n);
  for (int i = 0; i < batch; i++) cudaMemcpy(invs[i]->p, zero.p, (size_t)n * n * sizeof(T), cudaMemcpyDeviceToDevice);
  CHECK(dn<T>::getriBatched(h, n, am.p, lda, piv.p, cm.p, n, infos.p, 2) == CUBLAS_STATUS_SUCCESS, "getriBatched");
  cudaStreamSynchronize(st);
  iv = infos.get();
  CHECK(iv[0] == 0 && iv[1] == 0, "getriBatched infos %d %d", iv[0], iv[1]);
  for (int i = 0; i < 2; i++) CHECK(check_inverse(i, "getriBatched"), "getriBatched");
  /* unpivoted getrfBatched (P null) on a diagonally dominant matrix: A = L U */
  std::vector<T> D = As[0];
  for (int i = 0; i < n; i++) D[(size_t)i * lda + i] += 6;
  mats[0]->put(D);
  CHECK(dn<T>::getrfBatched(h, n, am.p, lda, nullptr, infos.p, 1) == CUBLAS_STATUS_SUCCESS, "getrfBatched unpivoted");
  cudaStreamSynchronize(st);
  CHECK(infos.get()[0] == 0, "unpivoted info");
  std::vector<T> dlu = mats[0]->get();
  CHECK(max_diff(n, n, D.data(), lda, lu_product(n, n, dlu, lda)) < tol<T>(), "%s unpivoted getrfBatched",
        type_name<T>());
  /* trsmBatched: L X = B from the unpivoted factor (unit lower) */
  rhs[0]->put(B);
  CHECK(dn<T>::trsmBatched(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_UNIT, n, nrhs, &one,
                           am.p, lda, bm.p, ldb, 1) == CUBLAS_STATUS_SUCCESS, "trsmBatched");
  cudaStreamSynchronize(st);
  {
    std::vector<T> X = rhs[0]->get(), l((size_t)n * n, 0);
    for (int j = 0; j < n; j++)
      for (int i = j; i < n; i++) l[(size_t)j * n + i] = i == j ? 1 : dlu[(size_t)j * lda + i];
    CHECK(max_diff(n, nrhs, B.data(), ldb, matmul(n, nrhs, n, l.data(), n, false, X.data(), ldb, false)) < tol<T>(),
          "%s trsmBatched", type_name<T>());
  }
  CHECK(dn<T>::getrfBatched(h, n, am.p, n - 1, piv.p, infos.p, batch) == CUBLAS_STATUS_INVALID_VALUE,
        "getrfBatched lda < n accepted");
  for (int i = 0; i < batch; i++) {
    delete mats[i];
    delete rhs[i];
    delete invs[i];
  }
  cublasDestroy(h);
  cudaStreamDestroy(st);
}

}  // namespace

void test_cusolver_lu() {
  const int failed = g_failed;
  lu_case<float>();
  lu_case<double>();
  lu_stream_order();
  if (g_failed == failed)
    printf("ok cuSOLVER LU (getrf P A = L U, unpivoted, getrs both transposes; singular devInfo; bad arguments, host "
           "and freed pointers; stream order)\n");
}
void test_cusolver_cholesky() {
  const int failed = g_failed;
  cholesky_case<float>();
  cholesky_case<double>();
  if (g_failed == failed)
    printf("ok cuSOLVER Cholesky (potrf lower/upper, potrs, potri, potrfBatched, potrsBatched; not positive definite "
           "devInfo; workspace and argument checks)\n");
}
void test_cusolver_qr() {
  const int failed = g_failed;
  qr_case<float>();
  qr_case<double>();
  if (g_failed == failed) printf("ok cuSOLVER QR (geqrf, orgqr thin and full, ormqr left and right; argument checks)\n");
}
void test_cusolver_svd() {
  const int failed = g_failed;
  svd_case<float>();
  svd_case<double>();
  if (g_failed == failed)
    printf("ok cuSOLVER SVD (gesvd A/S/N with m >= n, gesvdj full and economy, wide and tall, residual, "
           "gesvdjBatched; argument checks)\n");
}
void test_cusolver_eig() {
  const int failed = g_failed;
  eig_case<float>();
  eig_case<double>();
  if (g_failed == failed)
    printf("ok cuSOLVER symmetric eigenvalues (syevd, syevj, syevjBatched, one triangle read; argument checks)\n");
}
/* Last, on device 0 (which it leaves faulted): a pointer outside device memory in an array of
 * matrices passes the call's checks (the array is read when the call runs) and is then the
 * illegal address a GPU faults on, sticky. */
void test_solver_array_fault() {
  CK(cudaSetDevice(0));
  solver sv;
  std::vector<double> host(4, 4.0); /* potrf would make host[0] 2 */
  dev_buf<double *> array(1);
  dev_buf<int> info(1);
  array.put({host.data()});
  CHECK(cusolverDnDpotrfBatched(sv.h, CUBLAS_FILL_MODE_LOWER, 2, array.p, 2, info.p, 1) == CUSOLVER_STATUS_SUCCESS,
        "the call's own arguments are valid");
  cudaError_t e = cudaStreamSynchronize(sv.s);
  CHECK(e == cudaErrorIllegalAddress, "a host matrix in the array: %s", cudaGetErrorName(e));
  void *q = nullptr;
  CHECK(cudaMalloc(&q, 16) == cudaErrorIllegalAddress, "the fault is sticky");
  CHECK(host[0] == 4.0, "the host matrix was factored");
  printf("ok cuSOLVER arrays of matrices are read on the stream (a host pointer in one is a sticky illegal address)\n");
}

void test_cublas_lu() {
  const int failed = g_failed;
  cublas_lu_case<float>();
  cublas_lu_case<double>();
  if (g_failed == failed)
    printf("ok cuBLAS triangular solves and batched LU (trsm, trsmBatched, getrfBatched, getrsBatched, getriBatched, "
           "matinvBatched; singular infos; argument checks)\n");
}
