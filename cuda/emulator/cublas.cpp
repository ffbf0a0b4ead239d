/* cublas.cpp - the emulated cuBLAS: cublasGemmEx and cublasGemmStridedBatchedEx with cuBLAS's
 * column-major semantics (op(A) m x k, op(B) k x n, C m x n, leading dimensions, batch strides,
 * alpha/beta read from host memory when called), run in the order of the handle's stream on
 * OpenBLAS: float32 and float64 directly; float16/bfloat16 widened to float32 and the result
 * rounded once (cuBLAS's CUBLAS_COMPUTE_32F); CUBLAS_COMPUTE_32F_FAST_TF32 (or the TF32 math
 * mode) rounds float32 inputs to TF32's 10-bit mantissa first, as tensor cores do. */
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "cublas_v2.h"
#include "cuda_bf16.h"
#include "cuda_fp16.h"
#include "cublas_handle.h"
#include "emu.h"

#include KD_EMU_CBLAS_HEADER


cublasStatus_t cublasCreate(cublasHandle_t *h) {
  if (!h) return CUBLAS_STATUS_INVALID_VALUE;
  *h = new cublasContext();
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasDestroy(cublasHandle_t h) {
  if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
  delete h;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetStream(cublasHandle_t h, cudaStream_t s) {
  if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
  h->stream = s;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasGetStream(cublasHandle_t h, cudaStream_t *s) {
  if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (s) *s = h->stream;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetWorkspace(cublasHandle_t h, void *ws, size_t bytes) {
  if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (bytes && kd_emu::classify(ws, bytes, nullptr) != 2) return CUBLAS_STATUS_INVALID_VALUE;
  h->workspace = ws;
  h->workspace_bytes = bytes;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetMathMode(cublasHandle_t h, cublasMath_t mode) {
  if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
  h->math = mode;
  return CUBLAS_STATUS_SUCCESS;
}

const char *cublasGetStatusString(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
  }
  return "CUBLAS_STATUS_UNKNOWN";
}

namespace {

size_t type_size(cudaDataType_t t) {
  switch (t) {
    case CUDA_R_32F: return 4;
    case CUDA_R_64F: return 8;
    case CUDA_R_16F: case CUDA_R_16BF: return 2;
  }
  return 0;
}

float to_float(const void *p, cudaDataType_t t, size_t i) {
  switch (t) {
    case CUDA_R_32F: return ((const float *)p)[i];
    case CUDA_R_64F: return (float)((const double *)p)[i];
    case CUDA_R_16F: return kd_emu::half_bits_to_float(((const uint16_t *)p)[i]);
    case CUDA_R_16BF: return kd_emu::bf16_bits_to_float(((const uint16_t *)p)[i]);
  }
  return 0;
}

void from_float(void *p, cudaDataType_t t, size_t i, float v) {
  switch (t) {
    case CUDA_R_32F: ((float *)p)[i] = v; break;
    case CUDA_R_64F: ((double *)p)[i] = v; break;
    case CUDA_R_16F: ((uint16_t *)p)[i] = kd_emu::float_to_half_bits(v); break;
    case CUDA_R_16BF: ((uint16_t *)p)[i] = kd_emu::float_to_bf16_bits(v); break;
  }
}

float round_tf32(float v) {
  uint32_t b;
  memcpy(&b, &v, 4);
  if ((b & 0x7f800000u) != 0x7f800000u) {
    b += 0xfffu + ((b >> 13) & 1u);
    b &= ~0x1fffu;
  }
  memcpy(&v, &b, 4);
  return v;
}

/* A dense float copy (ld = rows) of a column-major rows x cols matrix. */
std::vector<float> widen(const void *p, cudaDataType_t t, int rows, int cols, int ld, bool tf32) {
  std::vector<float> v((size_t)rows * (size_t)cols);
  for (int j = 0; j < cols; j++)
    for (int i = 0; i < rows; i++) {
      float x = to_float(p, t, (size_t)j * (size_t)ld + (size_t)i);
      v[(size_t)j * (size_t)rows + (size_t)i] = tf32 ? round_tf32(x) : x;
    }
  return v;
}

struct gemm {
  CBLAS_TRANSPOSE ta, tb;
  int m, n, k, lda, ldb, ldc, batch;
  long long sa, sb, sc;
  const void *a, *b;
  void *c;
  cudaDataType_t at, ct;
  bool f64, tf32;
  double alpha, beta;

  void run_one(const char *a0, const char *b0, char *c0) const {
    if (f64) {
      cblas_dgemm(CblasColMajor, ta, tb, m, n, k, alpha, (const double *)a0, lda, (const double *)b0, ldb, beta,
                  (double *)c0, ldc);
      return;
    }
    const bool widen_ab = at != CUDA_R_32F || tf32;
    const int ar = ta == CblasNoTrans ? m : k, ac = ta == CblasNoTrans ? k : m;
    const int br = tb == CblasNoTrans ? k : n, bc = tb == CblasNoTrans ? n : k;
    std::vector<float> aw, bw, cw;
    const float *pa = (const float *)a0, *pb = (const float *)b0;
    int la = lda, lb = ldb, lc = ldc;
    if (widen_ab) {
      aw = widen(a0, at, ar, ac, lda, tf32);
      bw = widen(b0, at, br, bc, ldb, tf32);
      pa = aw.data();
      pb = bw.data();
      la = ar > 0 ? ar : 1;
      lb = br > 0 ? br : 1;
    }
    float *pc = (float *)c0;
    if (ct != CUDA_R_32F) {
      cw = widen(c0, ct, m, n, ldc, false);
      pc = cw.data();
      lc = m > 0 ? m : 1;
    }
    cblas_sgemm(CblasColMajor, ta, tb, m, n, k, (float)alpha, pa, la, pb, lb, (float)beta, pc, lc);
    if (ct != CUDA_R_32F)
      for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) from_float(c0, ct, (size_t)j * (size_t)ldc + (size_t)i, cw[(size_t)j * (size_t)m + i]);
  }

  void run() const {
    const size_t as = type_size(at), cs = type_size(ct);
    for (int i = 0; i < batch; i++)
      run_one((const char *)a + (size_t)(sa * i) * as, (const char *)b + (size_t)(sb * i) * as,
              (char *)c + (size_t)(sc * i) * cs);
  }
};

cublasStatus_t gemm_ex(cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
                       const void *alpha, const void *A, cudaDataType_t Atype, int lda, long long sa, const void *B,
                       cudaDataType_t Btype, int ldb, long long sb, const void *beta, void *C, cudaDataType_t Ctype,
                       int ldc, long long sc, int batch, cublasComputeType_t compute) {
  if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (m < 0 || n < 0 || k < 0 || batch < 0 || !alpha || !beta) return CUBLAS_STATUS_INVALID_VALUE;
  if (transa == CUBLAS_OP_C || transb == CUBLAS_OP_C || (transa != CUBLAS_OP_N && transa != CUBLAS_OP_T) ||
      (transb != CUBLAS_OP_N && transb != CUBLAS_OP_T))
    return CUBLAS_STATUS_INVALID_VALUE;
  const int arows = transa == CUBLAS_OP_N ? m : k, brows = transb == CUBLAS_OP_N ? k : n;
  if (lda < (arows > 1 ? arows : 1) || ldb < (brows > 1 ? brows : 1) || ldc < (m > 1 ? m : 1))
    return CUBLAS_STATUS_INVALID_VALUE;
  if (Atype != Btype || type_size(Atype) == 0 || type_size(Ctype) == 0) return CUBLAS_STATUS_NOT_SUPPORTED;
  gemm g;
  g.f64 = compute == CUBLAS_COMPUTE_64F;
  if (g.f64 != (Atype == CUDA_R_64F) || (g.f64 && Ctype != CUDA_R_64F)) return CUBLAS_STATUS_NOT_SUPPORTED;
  if (!g.f64) {
    if (compute != CUBLAS_COMPUTE_32F && compute != CUBLAS_COMPUTE_32F_FAST_TF32) return CUBLAS_STATUS_NOT_SUPPORTED;
    if (Ctype != Atype && !(Ctype == CUDA_R_32F && (Atype == CUDA_R_16F || Atype == CUDA_R_16BF)))
      return CUBLAS_STATUS_NOT_SUPPORTED;
    if (compute == CUBLAS_COMPUTE_32F_FAST_TF32 && Atype != CUDA_R_32F) return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  g.tf32 = Atype == CUDA_R_32F && (compute == CUBLAS_COMPUTE_32F_FAST_TF32 || h->math == CUBLAS_TF32_TENSOR_OP_MATH);
  g.alpha = g.f64 ? *(const double *)alpha : (double)*(const float *)alpha;
  g.beta = g.f64 ? *(const double *)beta : (double)*(const float *)beta;
  g.ta = transa == CUBLAS_OP_N ? CblasNoTrans : CblasTrans;
  g.tb = transb == CUBLAS_OP_N ? CblasNoTrans : CblasTrans;
  g.m = m;
  g.n = n;
  g.k = k;
  g.lda = lda;
  g.ldb = ldb;
  g.ldc = ldc;
  g.sa = sa;
  g.sb = sb;
  g.sc = sc;
  g.batch = batch;
  g.a = A;
  g.b = B;
  g.c = C;
  g.at = Atype;
  g.ct = Ctype;
  if (m == 0 || n == 0 || batch == 0) return CUBLAS_STATUS_SUCCESS;
  cudaError_t e = kd_emu::enqueue(h->stream, "cublasGemmEx", 1, [g] { g.run(); });
  if (e != cudaSuccess) return CUBLAS_STATUS_EXECUTION_FAILED;
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace

cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
                            const void *alpha, const void *A, cudaDataType_t Atype, int lda, const void *B,
                            cudaDataType_t Btype, int ldb, const void *beta, void *C, cudaDataType_t Ctype, int ldc,
                            cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  (void)algo;
  return gemm_ex(h, transa, transb, m, n, k, alpha, A, Atype, lda, 0, B, Btype, ldb, 0, beta, C, Ctype, ldc, 0, 1,
                 computeType);
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb, int m,
                                          int n, int k, const void *alpha, const void *A, cudaDataType_t Atype, int lda,
                                          long long strideA, const void *B, cudaDataType_t Btype, int ldb,
                                          long long strideB, const void *beta, void *C, cudaDataType_t Ctype, int ldc,
                                          long long strideC, int batchCount, cublasComputeType_t computeType,
                                          cublasGemmAlgo_t algo) {
  (void)algo;
  return gemm_ex(h, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb, strideB, beta, C, Ctype,
                 ldc, strideC, batchCount, computeType);
}
