/* ops_norm.cu - CUDA layer normalisation: nativeLayerNorm (y, mean, rstd) and
 * layerNormBackward's input gradient. src/cpu/norm.c's host side checked the shapes with
 * PyTorch's messages, made every operand contiguous in the compute dtype (float32 for
 * float32/float16/bfloat16, float64) and allocated the outputs; rows are [rows, n] with n the
 * normalized size. One block per row (grid-stride over rows), the CPU's formulas:
 *   forward:  mean = sum(x) / n; var = sum((x - mean)^2) / n (two passes, no cancellation);
 *             rstd = 1 / sqrt(var + eps); y = (x - mean) * rstd * w + b;
 *   backward: gw = g * w; dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)). */
#include "ops_math.cuh"
#include "ops_reduce.cuh"

template <typename T>
__global__ void kd_ln_fwd_k(const T *x, const T *w, const T *b, T *y, T *mean, T *rstd, int64_t rows, int64_t n,
                            double eps) {
  kd_cu_sum_op<T> sum;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T *xr = x + row * n;
    T *yr = y + row * n;
    T s = 0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) s += xr[i];
    const T m = kd_cu_block_allreduce(s, sum) / (T)n;
    T q = 0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      const T d = xr[i] - m;
      q += d * d;
    }
    const T var = kd_cu_block_allreduce(q, sum) / (T)n;
    const T rs = (T)1 / kd_cm_sqrt(var + (T)eps);
    if (threadIdx.x == 0) {
      mean[row] = m;
      rstd[row] = rs;
    }
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      T v = (xr[i] - m) * rs;
      if (w) v = v * w[i];
      if (b) v = v + b[i];
      yr[i] = v;
    }
  }
}

template <typename T>
__global__ void kd_ln_bwd_k(const T *x, const T *g, const T *w, const T *mean, const T *rstd, T *dx, int64_t rows,
                            int64_t n) {
  kd_cu_sum_op<T> sum;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T *xr = x + row * n, *gr = g + row * n;
    T *dr = dx + row * n;
    const T m = mean[row], rs = rstd[row];
    T a = 0, c = 0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      const T gw = w ? gr[i] * w[i] : gr[i];
      a += gw;
      c += gw * (xr[i] - m);
    }
    a = kd_cu_block_allreduce(a, sum);
    c = kd_cu_block_allreduce(c, sum);
    const T ma = a / (T)n, mc = c * rs / (T)n;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      const T gw = w ? gr[i] * w[i] : gr[i];
      dr[i] = rs * (gw - ma - (xr[i] - m) * rs * mc);
    }
  }
}

template <typename T>
static kd_cuda_status kd_ln_launch(int device, const kd_cuda_rows *r) {
  cudaStream_t s = kd_cu_stream(device);
  const int64_t rows = r->outer, n = r->len;
  int sms = kd_cu_sm_count(device) > 0 ? kd_cu_sm_count(device) : 128;
  const unsigned blocks = (unsigned)(rows < (int64_t)sms * 32 ? rows : (int64_t)sms * 32);
  const int threads = n <= 128 ? 32 : n <= 1024 ? 128 : 512;
  if (r->op == KD_CUDA_ROWS_LAYER_NORM) {
    if (!r->mean || !r->rstd) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "layer norm: null mean/rstd");
    KD_LAUNCH(blocks, threads, 0, s, kd_ln_fwd_k<T>)((const T *)r->x, (const T *)r->w, (const T *)r->b, (T *)r->y,
                                              (T *)r->mean, (T *)r->rstd, rows, n, r->eps);
  } else {
    if (!r->g || !r->mean || !r->rstd)
      return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "layer norm backward: null argument");
    KD_LAUNCH(blocks, threads, 0, s, kd_ln_bwd_k<T>)((const T *)r->x, (const T *)r->g, (const T *)r->w,
                                              (const T *)r->mean, (const T *)r->rstd, (T *)r->y, rows, n);
  }
  KD_CU_CHECK_LAUNCH("a layer norm kernel");
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_layer_norm_rows(int device, const kd_cuda_rows *r) {
  if (r->inner != 1) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "layer norm: inner must be 1");
  if (r->dtype == KD_DTYPE_F32) return kd_ln_launch<float>(device, r);
  if (r->dtype == KD_DTYPE_F64) return kd_ln_launch<double>(device, r);
  return kd_cu_not_supported("layer norm", r->dtype);
}
