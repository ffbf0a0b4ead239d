/* cusolverDn.h (emulated GPU) - the dense cuSOLVER routines kindling's CUDA sources may call, with
 * the types and exact signatures of CUDA 13's header, run by cuda/emulator/cusolver.cpp on LAPACK
 * (OpenBLAS's), in the order of the handle's stream (cusolverDnSetStream). Column-major; matrices,
 * workspaces and devInfo are device memory; `lwork` counts elements, as from the routine's
 * _bufferSize. cuda/emulator/README.md ("cuSOLVER") says what is modelled. */
#ifndef KD_EMU_CUSOLVERDN_H
#define KD_EMU_CUSOLVERDN_H

#include "cublas_v2.h"
#include "cuda_runtime.h"
#include "cusolver_common.h"

struct cusolverDnContext;
typedef struct cusolverDnContext *cusolverDnHandle_t;

struct syevjInfo;
typedef struct syevjInfo *syevjInfo_t;

struct gesvdjInfo;
typedef struct gesvdjInfo *gesvdjInfo_t;

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the handle ---- */
cusolverStatus_t CUSOLVERAPI
cusolverDnCreate(cusolverDnHandle_t *handle);
cusolverStatus_t CUSOLVERAPI
cusolverDnDestroy(cusolverDnHandle_t handle);
cusolverStatus_t CUSOLVERAPI
cusolverDnSetStream(cusolverDnHandle_t handle, cudaStream_t streamId);
cusolverStatus_t CUSOLVERAPI
cusolverDnGetStream(cusolverDnHandle_t handle, cudaStream_t *streamId);

/* ---- Jacobi parameters: kept, but LAPACK's algorithms run instead of Jacobi sweeps (README) ---- */
cusolverStatus_t CUSOLVERAPI
cusolverDnCreateSyevjInfo(syevjInfo_t *info);
cusolverStatus_t CUSOLVERAPI
cusolverDnDestroySyevjInfo(syevjInfo_t info);
cusolverStatus_t CUSOLVERAPI
cusolverDnXsyevjSetTolerance(syevjInfo_t info, double tolerance);
cusolverStatus_t CUSOLVERAPI
cusolverDnXsyevjSetMaxSweeps(syevjInfo_t info, int max_sweeps);
cusolverStatus_t CUSOLVERAPI
cusolverDnXsyevjSetSortEig(syevjInfo_t info, int sort_eig);
cusolverStatus_t CUSOLVERAPI
cusolverDnXsyevjGetResidual(cusolverDnHandle_t handle, syevjInfo_t info, double *residual);
cusolverStatus_t CUSOLVERAPI
cusolverDnXsyevjGetSweeps(cusolverDnHandle_t handle, syevjInfo_t info, int *executed_sweeps);
cusolverStatus_t CUSOLVERAPI
cusolverDnCreateGesvdjInfo(gesvdjInfo_t *info);
cusolverStatus_t CUSOLVERAPI
cusolverDnDestroyGesvdjInfo(gesvdjInfo_t info);
cusolverStatus_t CUSOLVERAPI
cusolverDnXgesvdjSetTolerance(gesvdjInfo_t info, double tolerance);
cusolverStatus_t CUSOLVERAPI
cusolverDnXgesvdjSetMaxSweeps(gesvdjInfo_t info, int max_sweeps);
cusolverStatus_t CUSOLVERAPI
cusolverDnXgesvdjSetSortEig(gesvdjInfo_t info, int sort_svd);
cusolverStatus_t CUSOLVERAPI
cusolverDnXgesvdjGetResidual(cusolverDnHandle_t handle, gesvdjInfo_t info, double *residual);
cusolverStatus_t CUSOLVERAPI
cusolverDnXgesvdjGetSweeps(cusolverDnHandle_t handle, gesvdjInfo_t info, int *executed_sweeps);

/* ---- LU ---- */
cusolverStatus_t CUSOLVERAPI
cusolverDnSgetrf_bufferSize(cusolverDnHandle_t handle, int m, int n, float *A, int lda, int *Lwork);
cusolverStatus_t CUSOLVERAPI
cusolverDnDgetrf_bufferSize(cusolverDnHandle_t handle, int m, int n, double *A, int lda, int *Lwork);
cusolverStatus_t CUSOLVERAPI
cusolverDnSgetrf(cusolverDnHandle_t handle, int m, int n, float *A, int lda, float *Workspace, int *devIpiv, int
    *devInfo);
cusolverStatus_t CUSOLVERAPI
cusolverDnDgetrf(cusolverDnHandle_t handle, int m, int n, double *A, int lda, double *Workspace, int *devIpiv,
    int *devInfo);
cusolverStatus_t CUSOLVERAPI
cusolverDnSgetrs(cusolverDnHandle_t handle, cublasOperation_t trans, int n, int nrhs, const float *A, int lda,
    const int *devIpiv, float *B, int ldb, int *devInfo);
cusolverStatus_t CUSOLVERAPI
cusolverDnDgetrs(cusolverDnHandle_t handle, cublasOperation_t trans, int n, int nrhs, const double *A, int lda,
    const int *devIpiv, double *B, int ldb, int *devInfo);

/* ---- Cholesky ---- */
cusolverStatus_t CUSOLVERAPI
cusolverDnSpotrf_bufferSize(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, float *A, int lda, int
    *Lwork);
cusolverStatus_t CUSOLVERAPI
cusolverDnDpotrf_bufferSize(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, double *A, int lda, int
    *Lwork);
cusolverStatus_t CUSOLVERAPI
cusolverDnSpotrf(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, float *A, int lda, float *Workspace,
    int Lwork, int *devInfo);
cusolverStatus_t CUSOLVERAPI
cusolverDnDpotrf(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, double *A, int lda, double *Workspace,
    int Lwork, int *devInfo);
cusolverStatus_t CUSOLVERAPI
cusolverDnSpotrs(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, int nrhs, const float *A, int lda,
    float *B, int ldb, int *devInfo);
cusolverStatus_t CUSOLVERAPI
cusolverDnDpotrs(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, int nrhs, const double *A, int lda,
    double *B, int ldb, int *devInfo);
cusolverStatus_t CUSOLVERAPI
cusolverDnSpotri_bufferSize(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, float *A, int lda, int
    *lwork);
cusolverStatus_t CUSOLVERAPI
cusolverDnDpotri_bufferSize(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, double *A, int lda, int
    *lwork);
cusolverStatus_t CUSOLVERAPI
cusolverDnSpotri(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, float *A, int lda, float *work, int
    lwork, int *devInfo);
cusolverStatus_t CUSOLVERAPI
cusolverDnDpotri(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, double *A, int lda, double *work, int
    lwork, int *devInfo);
cusolverStatus_t CUSOLVERAPI
cusolverDnSpotrfBatched(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, float *Aarray[], int lda, int
    *infoArray, int batchSize);
cusolverStatus_t CUSOLVERAPI
cusolverDnDpotrfBatched(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, double *Aarray[], int lda, int
    *infoArray, int batchSize);
cusolverStatus_t CUSOLVERAPI
cusolverDnSpotrsBatched(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, int nrhs, float *A[], int lda,
    float *B[], int ldb, int *d_info, int batchSize);
cusolverStatus_t CUSOLVERAPI
cusolverDnDpotrsBatched(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, int nrhs, double *A[], int lda,
    double *B[], int ldb, int *d_info, int batchSize);

/* ---- QR ---- */
cusolverStatus_t CUSOLVERAPI
cusolverDnSgeqrf_bufferSize(cusolverDnHandle_t handle, int m, int n, float *A, int lda, int *lwork);
cusolverStatus_t CUSOLVERAPI
cusolverDnDgeqrf_bufferSize(cusolverDnHandle_t handle, int m, int n, double *A, int lda, int *lwork);
cusolverStatus_t CUSOLVERAPI
cusolverDnSgeqrf(cusolverDnHandle_t handle, int m, int n, float *A, int lda, float *TAU, float *Workspace, int
    Lwork, int *devInfo);
cusolverStatus_t CUSOLVERAPI
cusolverDnDgeqrf(cusolverDnHandle_t handle, int m, int n, double *A, int lda, double *TAU, double *Workspace,
    int Lwork, int *devInfo);
cusolverStatus_t CUSOLVERAPI
cusolverDnSorgqr_bufferSize(cusolverDnHandle_t handle, int m, int n, int k, const float *A, int lda, const float
    *tau, int *lwork);
cusolverStatus_t CUSOLVERAPI
cusolverDnDorgqr_bufferSize(cusolverDnHandle_t handle, int m, int n, int k, const double *A, int lda, const
    double *tau, int *lwork);
cusolverStatus_t CUSOLVERAPI
cusolverDnSorgqr(cusolverDnHandle_t handle, int m, int n, int k, float *A, int lda, const float *tau, float
    *work, int lwork, int *info);
cusolverStatus_t CUSOLVERAPI
cusolverDnDorgqr(cusolverDnHandle_t handle, int m, int n, int k, double *A, int lda, const double *tau, double
    *work, int lwork, int *info);
cusolverStatus_t CUSOLVERAPI
cusolverDnSormqr_bufferSize(cusolverDnHandle_t handle, cublasSideMode_t side, cublasOperation_t trans, int m,
    int n, int k, const float *A, int lda, const float *tau, const float *C, int ldc, int *lwork);
cusolverStatus_t CUSOLVERAPI
cusolverDnDormqr_bufferSize(cusolverDnHandle_t handle, cublasSideMode_t side, cublasOperation_t trans, int m,
    int n, int k, const double *A, int lda, const double *tau, const double *C, int ldc, int *lwork);
cusolverStatus_t CUSOLVERAPI
cusolverDnSormqr(cusolverDnHandle_t handle, cublasSideMode_t side, cublasOperation_t trans, int m, int n, int k,
    const float *A, int lda, const float *tau, float *C, int ldc, float *work, int lwork, int *devInfo);
cusolverStatus_t CUSOLVERAPI
cusolverDnDormqr(cusolverDnHandle_t handle, cublasSideMode_t side, cublasOperation_t trans, int m, int n, int k,
    const double *A, int lda, const double *tau, double *C, int ldc, double *work, int lwork, int *devInfo);

/* ---- singular values (gesvd: m >= n only, as in cuSOLVER; gesvdjBatched: m, n <= 32) ---- */
cusolverStatus_t CUSOLVERAPI
cusolverDnSgesvd_bufferSize(cusolverDnHandle_t handle, int m, int n, int *lwork);
cusolverStatus_t CUSOLVERAPI
cusolverDnDgesvd_bufferSize(cusolverDnHandle_t handle, int m, int n, int *lwork);
cusolverStatus_t CUSOLVERAPI
cusolverDnSgesvd(cusolverDnHandle_t handle, signed char jobu, signed char jobvt, int m, int n, float *A, int
    lda, float *S, float *U, int ldu, float *VT, int ldvt, float *work, int lwork, float *rwork, int *info);
cusolverStatus_t CUSOLVERAPI
cusolverDnDgesvd(cusolverDnHandle_t handle, signed char jobu, signed char jobvt, int m, int n, double *A, int
    lda, double *S, double *U, int ldu, double *VT, int ldvt, double *work, int lwork, double *rwork, int
    *info);
cusolverStatus_t CUSOLVERAPI
cusolverDnSgesvdj_bufferSize(cusolverDnHandle_t handle, cusolverEigMode_t jobz, int econ, int m, int n, const
    float *A, int lda, const float *S, const float *U, int ldu, const float *V, int ldv, int *lwork,
    gesvdjInfo_t params);
cusolverStatus_t CUSOLVERAPI
cusolverDnDgesvdj_bufferSize(cusolverDnHandle_t handle, cusolverEigMode_t jobz, int econ, int m, int n, const
    double *A, int lda, const double *S, const double *U, int ldu, const double *V, int ldv, int *lwork,
    gesvdjInfo_t params);
cusolverStatus_t CUSOLVERAPI
cusolverDnSgesvdj(cusolverDnHandle_t handle, cusolverEigMode_t jobz, int econ, int m, int n, float *A, int lda,
    float *S, float *U, int ldu, float *V, int ldv, float *work, int lwork, int *info, gesvdjInfo_t params);
cusolverStatus_t CUSOLVERAPI
cusolverDnDgesvdj(cusolverDnHandle_t handle, cusolverEigMode_t jobz, int econ, int m, int n, double *A, int lda,
    double *S, double *U, int ldu, double *V, int ldv, double *work, int lwork, int *info, gesvdjInfo_t params);
cusolverStatus_t CUSOLVERAPI
cusolverDnSgesvdjBatched_bufferSize(cusolverDnHandle_t handle, cusolverEigMode_t jobz, int m, int n, const float
    *A, int lda, const float *S, const float *U, int ldu, const float *V, int ldv, int *lwork, gesvdjInfo_t
    params, int batchSize);
cusolverStatus_t CUSOLVERAPI
cusolverDnDgesvdjBatched_bufferSize(cusolverDnHandle_t handle, cusolverEigMode_t jobz, int m, int n, const
    double *A, int lda, const double *S, const double *U, int ldu, const double *V, int ldv, int *lwork,
    gesvdjInfo_t params, int batchSize);
cusolverStatus_t CUSOLVERAPI
cusolverDnSgesvdjBatched(cusolverDnHandle_t handle, cusolverEigMode_t jobz, int m, int n, float *A, int lda,
    float *S, float *U, int ldu, float *V, int ldv, float *work, int lwork, int *info, gesvdjInfo_t params, int
    batchSize);
cusolverStatus_t CUSOLVERAPI
cusolverDnDgesvdjBatched(cusolverDnHandle_t handle, cusolverEigMode_t jobz, int m, int n, double *A, int lda,
    double *S, double *U, int ldu, double *V, int ldv, double *work, int lwork, int *info, gesvdjInfo_t params,
    int batchSize);

/* ---- symmetric eigenvalues (ascending; syevjBatched: n <= 32) ---- */
cusolverStatus_t CUSOLVERAPI
cusolverDnSsyevd_bufferSize(cusolverDnHandle_t handle, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n,
    const float *A, int lda, const float *W, int *lwork);
cusolverStatus_t CUSOLVERAPI
cusolverDnDsyevd_bufferSize(cusolverDnHandle_t handle, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n,
    const double *A, int lda, const double *W, int *lwork);
cusolverStatus_t CUSOLVERAPI
cusolverDnSsyevd(cusolverDnHandle_t handle, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n, float *A, int
    lda, float *W, float *work, int lwork, int *info);
cusolverStatus_t CUSOLVERAPI
cusolverDnDsyevd(cusolverDnHandle_t handle, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n, double *A, int
    lda, double *W, double *work, int lwork, int *info);
cusolverStatus_t CUSOLVERAPI
cusolverDnSsyevj_bufferSize(cusolverDnHandle_t handle, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n,
    const float *A, int lda, const float *W, int *lwork, syevjInfo_t params);
cusolverStatus_t CUSOLVERAPI
cusolverDnDsyevj_bufferSize(cusolverDnHandle_t handle, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n,
    const double *A, int lda, const double *W, int *lwork, syevjInfo_t params);
cusolverStatus_t CUSOLVERAPI
cusolverDnSsyevj(cusolverDnHandle_t handle, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n, float *A, int
    lda, float *W, float *work, int lwork, int *info, syevjInfo_t params);
cusolverStatus_t CUSOLVERAPI
cusolverDnDsyevj(cusolverDnHandle_t handle, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n, double *A, int
    lda, double *W, double *work, int lwork, int *info, syevjInfo_t params);
cusolverStatus_t CUSOLVERAPI
cusolverDnSsyevjBatched_bufferSize(cusolverDnHandle_t handle, cusolverEigMode_t jobz, cublasFillMode_t uplo, int
    n, const float *A, int lda, const float *W, int *lwork, syevjInfo_t params, int batchSize);
cusolverStatus_t CUSOLVERAPI
cusolverDnDsyevjBatched_bufferSize(cusolverDnHandle_t handle, cusolverEigMode_t jobz, cublasFillMode_t uplo, int
    n, const double *A, int lda, const double *W, int *lwork, syevjInfo_t params, int batchSize);
cusolverStatus_t CUSOLVERAPI
cusolverDnSsyevjBatched(cusolverDnHandle_t handle, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n, float
    *A, int lda, float *W, float *work, int lwork, int *info, syevjInfo_t params, int batchSize);
cusolverStatus_t CUSOLVERAPI
cusolverDnDsyevjBatched(cusolverDnHandle_t handle, cusolverEigMode_t jobz, cublasFillMode_t uplo, int n, double
    *A, int lda, double *W, double *work, int lwork, int *info, syevjInfo_t params, int batchSize);

#ifdef __cplusplus
}
#endif

#endif
