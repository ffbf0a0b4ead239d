/* ops_matmul.cu - matrix products on cuBLAS: C[b] = A[b] @ B[b] for every batch b (mm, bmm,
 * and through them addmm/baddbmm, matmul, linear), one cublasGemmStridedBatchedEx call.
 * The host side is the CPU kernel (src/cpu/matmul.c: checks, PyTorch's messages, output
 * allocation); its last step calls kd_cpu_device_mm for device tensors, which lands here.
 *
 * Layout: C is row-major contiguous [batch, m, n]. cuBLAS is column-major, so we compute
 * C^T = B^T A^T: a row-major C is a column-major C^T with ld = n. A row-major operand X (r x c,
 * strides rs, cs) with cs == 1 is already a column-major X^T (ld = rs, op N); one with rs == 1
 * (a transposed view) is a column-major X (ld = cs) and is used with op T. No copies for those;
 * other layouts (expanded, stepped in both dims) are first copied to a contiguous buffer.
 * Dtypes: float32 (CUBLAS_COMPUTE_32F, or TF32 tensor cores when allow_tf32), float64, float16
 * and bfloat16 (fp32 accumulation); integers are not supported (as PyTorch's CUDA addmm).
 * One cuBLAS handle per device, bound to the device's current stream, with its own workspace. */
#include <cublas_v2.h>
#include <limits.h>

#include "iter.cuh"

#define KD_CU_MM_MAX_DEVICES 64
#define KD_CU_MM_WORKSPACE (32u << 20)
static cublasHandle_t kd_cu_blas[KD_CU_MM_MAX_DEVICES];

static kd_cuda_status kd_cu_blas_fail(cublasStatus_t s, const char *what) {
  return kd_cu_error(s == CUBLAS_STATUS_ALLOC_FAILED ? KD_CUDA_ERR_OOM : KD_CUDA_ERR_RUNTIME, "cuBLAS error: %s (%d) in %s",
                     cublasGetStatusString(s), (int)s, what);
}
#define KD_CU_BLAS_CHECK(call)                                                              \
  do {                                                                                      \
    cublasStatus_t kd_bs_ = (call);                                                         \
    if (kd_bs_ != CUBLAS_STATUS_SUCCESS) return kd_cu_blas_fail(kd_bs_, #call);             \
  } while (0)

/* The device's handle, created on first use, set to the device's current stream. */
static kd_cuda_status kd_cu_blas_handle(int device, cublasHandle_t *out) {
  if (device < 0 || device >= KD_CU_MM_MAX_DEVICES) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "bad device %d", device);
  if (!kd_cu_blas[device]) {
    cublasHandle_t h;
    KD_CU_BLAS_CHECK(cublasCreate(&h));
    void *ws = NULL;
    if (cudaMalloc(&ws, KD_CU_MM_WORKSPACE) == cudaSuccess) {
      if (cublasSetWorkspace(h, ws, KD_CU_MM_WORKSPACE) != CUBLAS_STATUS_SUCCESS) {
        cudaFree(ws);
        ws = NULL;
      }
    } else {
      (void)cudaGetLastError(); /* no workspace: cuBLAS uses its default */
    }
    kd_cu_blas[device] = h; /* the handle and its workspace live as long as the process */
  }
  KD_CU_BLAS_CHECK(cublasSetStream(kd_cu_blas[device], kd_cu_stream(device)));
  *out = kd_cu_blas[device];
  return KD_CUDA_OK;
}

/* How an (r x c) row-major operand with strides (rs, cs) enters cuBLAS as its transpose
 * (see the header): op and ld, or false when it needs packing. */
static bool kd_cu_mm_layout(int64_t r, int64_t c, int64_t rs, int64_t cs, cublasOperation_t *op, int64_t *ld) {
  if (c == 1) cs = 1; /* a column: any column stride */
  if (r == 1) rs = c; /* a row: any row stride */
  if (cs == 1 && rs >= c && rs >= 1) {
    *op = CUBLAS_OP_N;
    *ld = rs;
    return true;
  }
  if (rs == 1 && cs >= r && cs >= 1) {
    *op = CUBLAS_OP_T;
    *ld = cs;
    return true;
  }
  return false;
}

/* Packs operand (batch x r x c, strides in elements) into a new contiguous buffer. */
static kd_cuda_status kd_cu_mm_pack(int device, int32_t dtype, int64_t batch, int64_t r, int64_t c, const void *data,
                                    int64_t bs, int64_t rs, int64_t cs, void **out) {
  const size_t es = kd_cu_dtype_size(dtype);
  KD_CU_CHECK(cudaMallocAsync(out, (size_t)(batch * r * c) * es, kd_cu_stream(device)));
  kd_cuda_array dst, src;
  memset(&dst, 0, sizeof dst);
  memset(&src, 0, sizeof src);
  dst.data = *out;
  src.data = (void *)data;
  dst.dtype = src.dtype = dtype;
  dst.ndim = src.ndim = 3;
  dst.sizes[0] = src.sizes[0] = batch;
  dst.sizes[1] = src.sizes[1] = r;
  dst.sizes[2] = src.sizes[2] = c;
  dst.strides[0] = r * c;
  dst.strides[1] = c;
  dst.strides[2] = 1;
  src.strides[0] = bs;
  src.strides[1] = rs;
  src.strides[2] = cs;
  return kd_cu_copy(device, &dst, &src);
}

kd_cuda_status kd_cu_gemm(int device, const kd_cuda_gemm *g) {
  if (!g) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "gemm: null argument");
  const int64_t batch = g->batch, m = g->m, n = g->n, k = g->k;
  if (batch < 0 || m < 0 || n < 0 || k < 0) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "gemm: negative size");
  cudaDataType_t ty;
  cublasComputeType_t ct;
  switch (g->dtype) {
    case KD_DTYPE_F32: ty = CUDA_R_32F; ct = g->allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F; break;
    case KD_DTYPE_F64: ty = CUDA_R_64F; ct = CUBLAS_COMPUTE_64F; break;
    case KD_DTYPE_F16: ty = CUDA_R_16F; ct = CUBLAS_COMPUTE_32F; break;
    case KD_DTYPE_BF16: ty = CUDA_R_16BF; ct = CUBLAS_COMPUTE_32F; break;
    default: return kd_cu_not_supported("matrix multiplication", g->dtype);
  }
  if (batch == 0 || m == 0 || n == 0) return KD_CUDA_OK;
  kd_cu_device_guard guard;
  KD_CU_TRY(guard.enter(device));
  cudaStream_t s = kd_cu_stream(device);
  const size_t es = kd_cu_dtype_size(g->dtype);
  if (k == 0) {
    KD_CU_CHECK(cudaMemsetAsync(g->c, 0, (size_t)(batch * m * n) * es, s));
    return KD_CUDA_OK;
  }
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX || batch > INT_MAX)
    return kd_cu_error(KD_CUDA_ERR_NOT_SUPPORTED, "gemm: sizes beyond cuBLAS's int range");
  const void *a = g->a, *b = g->b;
  int64_t a_bs = g->a_bs, b_bs = g->b_bs;
  void *apack = NULL, *bpack = NULL;
  cublasOperation_t opa, opb;
  int64_t lda, ldb;
  if (!kd_cu_mm_layout(m, k, g->a_rs, g->a_cs, &opa, &lda)) {
    KD_CU_TRY(kd_cu_mm_pack(device, g->dtype, batch, m, k, a, a_bs, g->a_rs, g->a_cs, &apack));
    a = apack;
    a_bs = m * k;
    kd_cu_mm_layout(m, k, k, 1, &opa, &lda);
  }
  if (!kd_cu_mm_layout(k, n, g->b_rs, g->b_cs, &opb, &ldb)) {
    kd_cuda_status st = kd_cu_mm_pack(device, g->dtype, batch, k, n, b, b_bs, g->b_rs, g->b_cs, &bpack);
    if (st != KD_CUDA_OK) {
      if (apack) cudaFreeAsync(apack, s);
      return st;
    }
    b = bpack;
    b_bs = k * n;
    kd_cu_mm_layout(k, n, n, 1, &opb, &ldb);
  }
  kd_cuda_status st = KD_CUDA_OK;
  cublasHandle_t h;
  st = kd_cu_blas_handle(device, &h);
  if (st == KD_CUDA_OK) {
    const float alpha_f = 1.0f, beta_f = 0.0f;
    const double alpha_d = 1.0, beta_d = 0.0;
    const void *alpha = g->dtype == KD_DTYPE_F64 ? (const void *)&alpha_d : (const void *)&alpha_f;
    const void *beta = g->dtype == KD_DTYPE_F64 ? (const void *)&beta_d : (const void *)&beta_f;
    /* C^T (n x m, ld n) = op(B^T) (n x k) * op(A^T) (k x m) */
    cublasStatus_t bs = cublasGemmStridedBatchedEx(h, opb, opa, (int)n, (int)m, (int)k, alpha, b, ty, (int)ldb, b_bs, a, ty,
                                                   (int)lda, a_bs, beta, g->c, ty, (int)n, m * n, (int)batch, ct,
                                                   CUBLAS_GEMM_DEFAULT);
    if (bs != CUBLAS_STATUS_SUCCESS) st = kd_cu_blas_fail(bs, "cublasGemmStridedBatchedEx");
  }
  if (apack) cudaFreeAsync(apack, s);
  if (bpack) cudaFreeAsync(bpack, s);
  return st;
}

/* ---- a row-major strided-batched gemm for the other kernel files (ops_conv.cu) ----
 * C[b] = alpha * op(A[b]) @ op(B[b]) + beta * C[b] for b < batch: C m x n (ldc, batch stride sc),
 * op(A) m x k, op(B) k x n, ta/tb: A/B stored transposed; strides in elements, 0 = shared.
 * A and B of ab_dtype; C of c_dtype: the same, or float32 for float16/bfloat16 A and B
 * (fp32 accumulation, CUBLAS_COMPUTE_32F, also for 16-bit C). No TF32. */
kd_cuda_status kd_cu_gemm_rm(int device, int32_t ab_dtype, int32_t c_dtype, bool ta, bool tb, int64_t m, int64_t n,
                             int64_t k, double alpha, const void *a, int64_t lda, int64_t sa, const void *b, int64_t ldb,
                             int64_t sb, double beta, void *c, int64_t ldc, int64_t sc, int64_t batch) {
  cudaDataType_t ab, ct;
  cublasComputeType_t comp = CUBLAS_COMPUTE_32F;
  switch (ab_dtype) {
    case KD_DTYPE_F32: ab = CUDA_R_32F; break;
    case KD_DTYPE_F64: ab = CUDA_R_64F; comp = CUBLAS_COMPUTE_64F; break;
    case KD_DTYPE_F16: ab = CUDA_R_16F; break;
    case KD_DTYPE_BF16: ab = CUDA_R_16BF; break;
    default: return kd_cu_not_supported("gemm", ab_dtype);
  }
  if (c_dtype == ab_dtype) ct = ab;
  else if (c_dtype == KD_DTYPE_F32 && (ab_dtype == KD_DTYPE_F16 || ab_dtype == KD_DTYPE_BF16)) ct = CUDA_R_32F;
  else return kd_cu_error(KD_CUDA_ERR_NOT_SUPPORTED, "gemm: dtypes %d x %d -> %d", (int)ab_dtype, (int)ab_dtype, (int)c_dtype);
  if (batch <= 0 || m <= 0 || n <= 0) return KD_CUDA_OK;
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX || batch > INT_MAX || lda > INT_MAX || ldb > INT_MAX || ldc > INT_MAX)
    return kd_cu_error(KD_CUDA_ERR_NOT_SUPPORTED, "gemm: sizes beyond cuBLAS's int range");
  cublasHandle_t h;
  KD_CU_TRY(kd_cu_blas_handle(device, &h));
  const float af = (float)alpha, bf = (float)beta;
  const void *pa = comp == CUBLAS_COMPUTE_64F ? (const void *)&alpha : (const void *)&af;
  const void *pb = comp == CUBLAS_COMPUTE_64F ? (const void *)&beta : (const void *)&bf;
  /* row-major C (m x n) is column-major C^T (n x m): C^T = op(B)^T op(A)^T */
  KD_CU_BLAS_CHECK(cublasGemmStridedBatchedEx(h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, (int)n,
                                              (int)m, (int)k, pa, b, ab, (int)ldb, sb, a, ab, (int)lda, sa, pb, c, ct,
                                              (int)ldc, sc, (int)batch, comp, CUBLAS_GEMM_DEFAULT));
  return KD_CUDA_OK;
}
