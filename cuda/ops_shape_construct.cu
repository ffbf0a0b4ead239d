/* ops_shape_construct.cu - the device kernel of trilIndices/triuIndices (KD_CUDA_OP_TRI_INDICES,
 * src/cpu/tri_indices.c): one thread per output column k finds its row by a binary search over
 * the closed-form count of triangle elements in the rows above (integer arithmetic modulo 2^64,
 * as the CPU's, exact for every size the CPU accepts), then its column from the row's first
 * element. Grid-stride, coalesced stores of the row and column halves of the [2, n] output. */
#include "ops_shape.cuh"

/* sum_{i<r} max(i + b, 0) and sum_{i<r} max(a - i, 0), modulo 2^64 */
__device__ static uint64_t kd_cu_tri_ramp_up(int64_t r, int64_t b) {
  const int64_t lo = b < 0 ? -b : 0;
  if (r <= lo) return 0;
  const uint64_t n = (uint64_t)(r - lo), ends = (uint64_t)(lo + b) + (uint64_t)(r - 1 + b);
  return n % 2 == 0 ? (n / 2) * ends : n * (ends / 2);
}
__device__ static uint64_t kd_cu_tri_ramp_down(int64_t r, int64_t a) {
  if (a <= 0) return 0;
  const uint64_t m = (uint64_t)(r < a ? r : a);
  return m * (uint64_t)a - (m % 2 == 0 ? (m / 2) * (m - 1) : m * ((m - 1) / 2));
}
__device__ static int64_t kd_cu_tri_before(int64_t r, int64_t col, int64_t offset, bool lower) {
  if (lower) return (int64_t)(kd_cu_tri_ramp_up(r, offset + 1) - kd_cu_tri_ramp_up(r, offset + 1 - col));
  return (int64_t)(kd_cu_tri_ramp_down(r, col - offset) - kd_cu_tri_ramp_down(r, -offset));
}

template <typename T>
__global__ void kd_cu_tri_indices_kernel(T *out, int64_t rows, int64_t cols, int64_t offset, int64_t n, bool lower) {
  KD_CU_FOR(k, n) {
    int64_t lo = 0, hi = rows - 1; /* the last row r with before(r) <= k */
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo + 1) / 2;
      if (kd_cu_tri_before(mid, cols, offset, lower) <= k) lo = mid;
      else hi = mid - 1;
    }
    const int64_t first = lower ? 0 : (lo + offset > 0 ? lo + offset : 0);
    out[k] = (T)lo;
    out[n + k] = (T)(first + k - kd_cu_tri_before(lo, cols, offset, lower));
  }
}

kd_cuda_status kd_cu_tri_indices(int device, kd_cuda_op *o) {
  const int64_t rows = o->i[0], cols = o->i[1], offset = o->i[2], n = o->i[3];
  if (o->nops != 1 || rows < 0 || cols < 0 || n < 0 || o->numel != 2 * n)
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "trilIndices/triuIndices: bad arguments");
  if (n == 0) return KD_CUDA_OK;
  const unsigned grid = kd_cu_grid(device, n);
  cudaStream_t s = kd_cu_stream(device);
  const bool lower = o->code != 0;
  if (o->dtype == KD_DTYPE_I64)
    KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_cu_tri_indices_kernel<int64_t>)((int64_t *)o->data[0], rows, cols, offset, n, lower);
  else if (o->dtype == KD_DTYPE_I32)
    KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_cu_tri_indices_kernel<int32_t>)((int32_t *)o->data[0], rows, cols, offset, n, lower);
  else
    return kd_cu_not_supported("trilIndices/triuIndices", o->dtype);
  KD_CU_CHECK_LAUNCH("the trilIndices/triuIndices kernel");
  return KD_CUDA_OK;
}
