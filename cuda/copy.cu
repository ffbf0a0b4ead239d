/* copy.cu - the strided copy kernel: dst[i] = convert(src[i]) over one shape with arbitrary
 * (element) strides, offsets and any pair of the 10 dtypes (see convert.cuh for the rules).
 * Launcher: validate and coalesce (Note [CUDA layouts] in layout.cu), then
 *   same dtype, both contiguous -> cudaMemcpyAsync;
 *   same dtype                  -> bit-moving kernel on 1/2/4/8-byte words;
 *   different dtypes            -> converting kernel <D, S>;
 * each as a flat loop when both sides are contiguous, else the strided loop.
 * Grid-stride loops, 64-bit indices. Asynchronous on the device's current stream. */
#include <stdint.h>

#include "convert.cuh"
#include "kd_cuda_internal.h"

template <typename D, typename S>
struct kd_cu_cast_op {
  __device__ __forceinline__ D operator()(S x) const { return kd_cu_convert<D, S>(x); }
};
template <typename T>
struct kd_cu_bits_op {
  __device__ __forceinline__ T operator()(T x) const { return x; }
};

template <typename D, typename S, typename Op>
__global__ void kd_cu_copy_contig_kernel(D *__restrict__ dst, const S *__restrict__ src, int64_t n) {
  Op op;
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) dst[i] = op(src[i]);
}

template <typename D, typename S, typename Op>
__global__ void kd_cu_copy_strided_kernel(D *dst, const S *src, const kd_cu_layout L, int64_t n) {
  Op op;
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t od, os;
    kd_cu_layout_offsets(L, i, &od, &os);
    dst[od] = op(src[os]);
  }
}

static bool kd_cu_layout_contiguous(const kd_cu_layout &L) {
  return L.ndim == 1 && L.strides[0][0] == 1 && L.strides[1][0] == 1;
}

template <typename D, typename S, typename Op>
static kd_cuda_status kd_cu_launch_copy(int device, char *dst, const char *src, const kd_cu_layout &L, int64_t n) {
  const unsigned grid = kd_cu_grid(device, n);
  cudaStream_t s = kd_cu_stream(device);
  if (kd_cu_layout_contiguous(L))
    KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_cu_copy_contig_kernel<D, S, Op>)((D *)dst, (const S *)src, n);
  else
    KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_cu_copy_strided_kernel<D, S, Op>)((D *)dst, (const S *)src, L, n);
  KD_CU_CHECK_LAUNCH("the copy kernel");
  return KD_CUDA_OK;
}

template <typename D>
static kd_cuda_status kd_cu_copy_to(int32_t src_dtype, int device, char *dst, const char *src, const kd_cu_layout &L,
                                    int64_t n) {
  switch (src_dtype) {
#define KD_CU_CASE(code, T) \
  case code: return kd_cu_launch_copy<D, T, kd_cu_cast_op<D, T>>(device, dst, src, L, n);
    KD_CU_FOR_EACH_DTYPE(KD_CU_CASE)
#undef KD_CU_CASE
    default: return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "copy: invalid source dtype %d", (int)src_dtype);
  }
}

kd_cuda_status kd_cu_copy(int device, const kd_cuda_array *dst, const kd_cuda_array *src) {
  kd_cu_layout L;
  int64_t n = 0;
  KD_CU_TRY(kd_cu_layout_build(dst, src, &L, &n));
  if (n == 0) return KD_CUDA_OK;
  kd_cu_device_guard g;
  KD_CU_TRY(g.enter(device));
  const size_t dsz = kd_cu_dtype_size(dst->dtype), ssz = kd_cu_dtype_size(src->dtype);
  char *d = (char *)dst->data + dst->offset * (int64_t)dsz;
  const char *s = (const char *)src->data + src->offset * (int64_t)ssz;

  if (dst->dtype == src->dtype) {
    if (kd_cu_layout_contiguous(L)) {
      if (d != s) KD_CU_CHECK(cudaMemcpyAsync(d, s, (size_t)n * dsz, cudaMemcpyDeviceToDevice, kd_cu_stream(device)));
      return KD_CUDA_OK;
    }
    switch (dsz) {
      case 1: return kd_cu_launch_copy<uint8_t, uint8_t, kd_cu_bits_op<uint8_t>>(device, d, s, L, n);
      case 2: return kd_cu_launch_copy<uint16_t, uint16_t, kd_cu_bits_op<uint16_t>>(device, d, s, L, n);
      case 4: return kd_cu_launch_copy<uint32_t, uint32_t, kd_cu_bits_op<uint32_t>>(device, d, s, L, n);
      case 8: return kd_cu_launch_copy<uint64_t, uint64_t, kd_cu_bits_op<uint64_t>>(device, d, s, L, n);
      default: return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "copy: bad element size %zu", dsz);
    }
  }
  switch (dst->dtype) {
#define KD_CU_CASE(code, T) \
  case code: return kd_cu_copy_to<T>(src->dtype, device, d, s, L, n);
    KD_CU_FOR_EACH_DTYPE(KD_CU_CASE)
#undef KD_CU_CASE
    default: return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "copy: invalid destination dtype %d", (int)dst->dtype);
  }
}
