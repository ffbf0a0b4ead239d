/* ops_softmax.cu - CUDA softmax and logSoftmax along one dim, and the entry of every row op
 * (kd_cu_rows: softmax here, scans in ops_scan.cu, layer norm in ops_norm.cu).
 *
 * The host side is src/cpu/softmax.c: it checked the op, made the input contiguous in the
 * compute dtype (float32 for float32/float16/bfloat16, float64) and allocated y; the result
 * is rounded to a half output by the CPU kernel's copy. The tensor is [outer, len, inner]:
 *   inner == 1: one block per row (grid-stride over rows): block max (warp shuffles, NaN
 *     propagates), block sum of exp(x - max), then the write pass;
 *   inner > 1: one thread per (outer, inner) column, three passes down the column (adjacent
 *     threads read adjacent columns, so every load is coalesced).
 * Same formulas as the CPU: softmax = exp(x - m) / sum, logSoftmax = (x - m) - log(sum). */
#include "ops_math.cuh"
#include "ops_reduce.cuh"

template <typename T>
__global__ void kd_sm_rows_k(const T *x, T *y, int64_t outer, int64_t len, bool islog) {
  kd_cu_max_op<T> mx;
  kd_cu_sum_op<T> sum;
  for (int64_t row = blockIdx.x; row < outer; row += gridDim.x) {
    const T *xr = x + row * len;
    T *yr = y + row * len;
    T m = mx.ident();
    for (int64_t i = threadIdx.x; i < len; i += blockDim.x) m = mx.comb(m, xr[i]);
    m = kd_cu_block_allreduce(m, mx);
    T s = 0;
    for (int64_t i = threadIdx.x; i < len; i += blockDim.x) s += kd_cm_exp(xr[i] - m);
    s = kd_cu_block_allreduce(s, sum);
    if (islog) {
      const T c = kd_cm_log(s);
      for (int64_t i = threadIdx.x; i < len; i += blockDim.x) yr[i] = (xr[i] - m) - c;
    } else {
      const T rs = (T)1 / s;
      for (int64_t i = threadIdx.x; i < len; i += blockDim.x) yr[i] = kd_cm_exp(xr[i] - m) * rs;
    }
  }
}

template <typename T>
__global__ void kd_sm_cols_k(const T *x, T *y, int64_t outer, int64_t len, int64_t inner, bool islog) {
  kd_cu_max_op<T> mx;
  const int64_t n = outer * inner, step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; c < n; c += step) {
    const int64_t o = c / inner, j = c % inner;
    const T *xc = x + o * len * inner + j;
    T *yc = y + o * len * inner + j;
    T m = mx.ident();
    for (int64_t k = 0; k < len; k++) m = mx.comb(m, xc[k * inner]);
    T s = 0;
    for (int64_t k = 0; k < len; k++) s += kd_cm_exp(xc[k * inner] - m);
    if (islog) {
      const T lc = kd_cm_log(s);
      for (int64_t k = 0; k < len; k++) yc[k * inner] = (xc[k * inner] - m) - lc;
    } else {
      const T rs = (T)1 / s;
      for (int64_t k = 0; k < len; k++) yc[k * inner] = kd_cm_exp(xc[k * inner] - m) * rs;
    }
  }
}

template <typename T>
static kd_cuda_status kd_sm_launch(int device, const kd_cuda_rows *r) {
  cudaStream_t s = kd_cu_stream(device);
  const bool islog = r->op == KD_CUDA_ROWS_LOG_SOFTMAX;
  if (r->inner == 1) {
    int sms = kd_cu_sm_count(device) > 0 ? kd_cu_sm_count(device) : 128;
    int64_t blocks = r->outer < (int64_t)sms * 32 ? r->outer : (int64_t)sms * 32;
    const int threads = r->len <= 128 ? 32 : r->len <= 1024 ? 128 : 512;
    KD_LAUNCH((unsigned)blocks, threads, 0, s, kd_sm_rows_k<T>)((const T *)r->x, (T *)r->y, r->outer, r->len, islog);
  } else {
    KD_LAUNCH(kd_cu_grid(device, r->outer * r->inner), KD_CU_THREADS, 0, s, kd_sm_cols_k<T>)(
        (const T *)r->x, (T *)r->y, r->outer, r->len, r->inner, islog);
  }
  KD_CU_CHECK_LAUNCH("a softmax kernel");
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_rows(int device, const kd_cuda_rows *r) {
  if (!r) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "rows: null argument");
  if (r->outer < 0 || r->len < 0 || r->inner < 0)
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "rows: negative extent");
  /* empty tensors have no storage (x, y NULL): nothing to write, except layer norm's
   * per-row statistics of empty rows (NaN, as the CPU's) */
  if (r->outer == 0 || r->inner == 0 || (r->len == 0 && r->op != KD_CUDA_ROWS_LAYER_NORM)) return KD_CUDA_OK;
  if (r->len > 0 && (!r->x || !r->y)) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "rows: null argument");
  kd_cu_device_guard guard;
  KD_CU_TRY(guard.enter(device));
  switch (r->op) {
    case KD_CUDA_ROWS_SOFTMAX:
    case KD_CUDA_ROWS_LOG_SOFTMAX:
      if (r->dtype == KD_DTYPE_F32) return kd_sm_launch<float>(device, r);
      if (r->dtype == KD_DTYPE_F64) return kd_sm_launch<double>(device, r);
      return kd_cu_not_supported("softmax", r->dtype);
    case KD_CUDA_ROWS_CUMSUM:
    case KD_CUDA_ROWS_CUMPROD: return kd_cu_scan_rows(device, r);
    case KD_CUDA_ROWS_LAYER_NORM:
    case KD_CUDA_ROWS_LAYER_NORM_BACKWARD: return kd_cu_layer_norm_rows(device, r);
    default: return kd_cu_error(KD_CUDA_ERR_NOT_SUPPORTED, "rows: unknown op %d", (int)r->op);
  }
}
