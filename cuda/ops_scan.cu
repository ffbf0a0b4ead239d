/* ops_scan.cu - CUDA cumsum and cumprod along one dim (src/cpu/scan.c's host side made the
 * input contiguous in the output dtype and allocated the contiguous output), seen as
 * [outer, len, inner]: one thread per line (outer * inner lines), a sequential scan down the
 * line, so results are in the CPU's order. Adjacent threads own adjacent lines, so when
 * inner > 1 every step is one coalesced load and store. Accumulators: double for every
 * floating dtype (as the CPU), uint64 with wrapping for integers and bool
 * (as the CPU's int64); each prefix is rounded to the dtype once. */
#include "ops_reduce.cuh"

template <typename T>
__global__ void kd_scan_k(const T *x, T *y, int64_t outer, int64_t len, int64_t inner, bool sum) {
  typedef typename kd_cu_ct<T>::type CT;
  const int64_t n = outer * inner, step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; c < n; c += step) {
    const int64_t o = c / inner, j = c % inner;
    const T *xc = x + o * len * inner + j;
    T *yc = y + o * len * inner + j;
    if constexpr (std::is_floating_point<CT>::value) {
      double a = sum ? 0.0 : 1.0;
      for (int64_t k = 0; k < len; k++) {
        const double v = (double)kd_cu_ld(xc[k * inner]);
        a = sum ? a + v : a * v;
        yc[k * inner] = kd_cu_st<T>((CT)a);
      }
    } else {
      uint64_t a = sum ? 0 : 1;
      for (int64_t k = 0; k < len; k++) {
        const uint64_t v = (uint64_t)kd_cu_ld(xc[k * inner]);
        a = sum ? a + v : a * v;
        yc[k * inner] = kd_cu_st<T>((int64_t)a);
      }
    }
  }
}

kd_cuda_status kd_cu_scan_rows(int device, const kd_cuda_rows *r) {
  const bool sum = r->op == KD_CUDA_ROWS_CUMSUM;
  cudaStream_t s = kd_cu_stream(device);
  const unsigned grid = kd_cu_grid(device, r->outer * r->inner);
  switch (r->dtype) {
#define KD_SCAN_CASE(DT, T)                                                                                       \
  case DT:                                                                                                        \
    kd_scan_k<T><<<grid, KD_CU_THREADS, 0, s>>>((const T *)r->x, (T *)r->y, r->outer, r->len, r->inner, sum); \
    break;
    KD_CU_FOR_EACH_DTYPE(KD_SCAN_CASE)
#undef KD_SCAN_CASE
    default: return kd_cu_not_supported("cumsum/cumprod", r->dtype);
  }
  KD_CU_CHECK_LAUNCH("a scan kernel");
  return KD_CUDA_OK;
}
