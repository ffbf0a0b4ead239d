/* fill.cu - fill a strided tensor with one value. The caller converts the scalar to the
 * tensor's dtype on the host (kd_scalar_store), so the kernel only moves 1/2/4/8-byte words:
 * contiguous fills of a repeated byte (any zero fill, any 1-byte dtype) use cudaMemsetAsync,
 * others a flat or strided grid-stride kernel (see Note [CUDA layouts] in layout.cu). */
#include <stdint.h>
#include <string.h>

#include "kd_cuda_internal.h"

template <typename T>
__global__ void kd_cu_fill_contig_kernel(T *__restrict__ dst, const T v, int64_t n) {
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) dst[i] = v;
}

template <typename T>
__global__ void kd_cu_fill_strided_kernel(T *dst, const T v, const kd_cu_layout L, int64_t n) {
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t o, unused;
    kd_cu_layout_offsets(L, i, &o, &unused);
    dst[o] = v;
  }
}

template <typename T>
static kd_cuda_status kd_cu_launch_fill(int device, char *dst, const void *value, const kd_cu_layout &L, int64_t n) {
  T v;
  memcpy(&v, value, sizeof v);
  const unsigned grid = kd_cu_grid(device, n);
  cudaStream_t s = kd_cu_stream(device);
  if (L.ndim == 1 && L.strides[0][0] == 1)
    KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_cu_fill_contig_kernel<T>)((T *)dst, v, n);
  else
    KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_cu_fill_strided_kernel<T>)((T *)dst, v, L, n);
  KD_CU_CHECK_LAUNCH("the fill kernel");
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_fill(int device, const kd_cuda_array *dst, const void *value) {
  if (!value) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "fill: null value");
  kd_cu_layout L;
  int64_t n = 0;
  KD_CU_TRY(kd_cu_layout_build(dst, NULL, &L, &n));
  if (n == 0) return KD_CUDA_OK;
  kd_cu_device_guard g;
  KD_CU_TRY(g.enter(device));
  const size_t sz = kd_cu_dtype_size(dst->dtype);
  char *d = (char *)dst->data + dst->offset * (int64_t)sz;

  const unsigned char *b = (const unsigned char *)value;
  bool same_bytes = true;
  for (size_t k = 1; k < sz; k++) same_bytes = same_bytes && b[k] == b[0];
  if (L.ndim == 1 && L.strides[0][0] == 1 && same_bytes) {
    KD_CU_CHECK(cudaMemsetAsync(d, b[0], (size_t)n * sz, kd_cu_stream(device)));
    return KD_CUDA_OK;
  }
  switch (sz) {
    case 1: return kd_cu_launch_fill<uint8_t>(device, d, value, L, n);
    case 2: return kd_cu_launch_fill<uint16_t>(device, d, value, L, n);
    case 4: return kd_cu_launch_fill<uint32_t>(device, d, value, L, n);
    case 8: return kd_cu_launch_fill<uint64_t>(device, d, value, L, n);
    default: return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "fill: bad element size %zu", sz);
  }
}
