/* memory.cu - device memory and copies between host and device.
 * kd_cu_malloc/kd_cu_free are the one place device memory comes from: they go to the caching
 * allocator (caching_allocator.cu). Copies are ordered on the device's
 * current stream (kd_cu_stream). */
#include <stdio.h>

#include "kd_cuda_internal.h"

kd_cuda_status kd_cu_ca_malloc(int device, size_t nbytes, void **out); /* caching_allocator.cu */
kd_cuda_status kd_cu_ca_free(int device, void *ptr);

kd_cuda_status kd_cu_malloc(int device, size_t nbytes, void **out) {
  if (!out) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "malloc: null output pointer");
  *out = NULL;
  kd_cu_device_guard g;
  KD_CU_TRY(g.enter(device));
  if (nbytes == 0) return KD_CUDA_OK;
  return kd_cu_ca_malloc(device, nbytes, out);
}

kd_cuda_status kd_cu_free(int device, void *ptr) {
  if (!ptr) return KD_CUDA_OK;
  kd_cu_device_guard g;
  KD_CU_TRY(g.enter(device));
  return kd_cu_ca_free(device, ptr);
}

/* Whether a host pointer is page-locked (pinned or registered): then an async copy really is
 * asynchronous and the caller's buffer must outlive it. */
static bool kd_cu_host_is_pinned(const void *p) {
  cudaPointerAttributes a;
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return a.type == cudaMemoryTypeHost;
}

kd_cuda_status kd_cu_memcpy_h2d(int device, void *dst, const void *src, size_t nbytes) {
  if (nbytes == 0) return KD_CUDA_OK;
  if (!dst || !src) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "memcpy_h2d: null pointer");
  kd_cu_device_guard g;
  KD_CU_TRY(g.enter(device));
  cudaStream_t s = kd_cu_stream(device);
  /* From pageable memory the runtime stages `src` before returning, so it may be reused at
   * once; from pinned memory wait, since the caller may free or overwrite `src` right after
   * (memcpy_h2d_async is the non-blocking path). */
  KD_CU_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyHostToDevice, s));
  if (kd_cu_host_is_pinned(src)) KD_CU_CHECK(cudaStreamSynchronize(s));
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_memcpy_d2h(int device, void *dst, const void *src, size_t nbytes) {
  if (nbytes == 0) return KD_CUDA_OK;
  if (!dst || !src) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "memcpy_d2h: null pointer");
  kd_cu_device_guard g;
  KD_CU_TRY(g.enter(device));
  cudaStream_t s = kd_cu_stream(device);
  KD_CU_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToHost, s));
  /* into pageable memory the copy returned once done; into pinned memory it did not */
  if (kd_cu_host_is_pinned(dst)) KD_CU_CHECK(cudaStreamSynchronize(s));
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_memcpy_d2d(int dst_device, void *dst, int src_device, const void *src, size_t nbytes) {
  if (nbytes == 0) return KD_CUDA_OK;
  if (!dst || !src) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "memcpy_d2d: null pointer");
  KD_CU_TRY(kd_cu_check_device(src_device));
  kd_cu_device_guard g;
  KD_CU_TRY(g.enter(dst_device));
  if (dst_device == src_device) {
    KD_CU_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToDevice, kd_cu_stream(dst_device)));
    return KD_CUDA_OK;
  }
  /* Between devices: cudaMemcpyPeer is serialised with the legacy default streams of both
   * devices; waiting for it makes the copy synchronous, so neither side's later work (on any
   * stream) can race it. Revisit when per-device streams arrive. */
  KD_CU_CHECK(cudaMemcpyPeer(dst, dst_device, src, src_device, nbytes));
  KD_CU_CHECK(cudaStreamSynchronize(kd_cu_stream(dst_device)));
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_memcpy_h2d_async(int device, void *dst, const void *src, size_t nbytes) {
  if (nbytes == 0) return KD_CUDA_OK;
  if (!dst || !src) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "memcpy_h2d_async: null pointer");
  kd_cu_device_guard g;
  KD_CU_TRY(g.enter(device));
  cudaStream_t s = kd_cu_stream(device);
  KD_CU_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyHostToDevice, s));
  kd_cu_host_record(src, s); /* a pinned block is not reused before the copy has read it */
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_memcpy_d2h_async(int device, void *dst, const void *src, size_t nbytes) {
  if (nbytes == 0) return KD_CUDA_OK;
  if (!dst || !src) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "memcpy_d2h_async: null pointer");
  kd_cu_device_guard g;
  KD_CU_TRY(g.enter(device));
  cudaStream_t s = kd_cu_stream(device);
  KD_CU_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToHost, s));
  kd_cu_host_record(dst, s);
  return KD_CUDA_OK;
}
