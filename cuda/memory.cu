/* memory.cu - device memory and copies between host and device.
 * kd_cu_malloc/kd_cu_free are the one place device memory comes from: the caching allocator
 * (a later change) replaces their bodies, nothing else. Copies are ordered on the device's
 * current stream (kd_cu_stream). */
#include <stdio.h>

#include "kd_cuda_internal.h"

/* "2.00 GiB", as PyTorch prints sizes in its OOM message. */
static void kd_cu_format_bytes(size_t n, char *buf, size_t len) {
  const char *units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double v = (double)n;
  int u = 0;
  while (v >= 1024.0 && u < 4) { v /= 1024.0; u++; }
  if (u == 0) snprintf(buf, len, "%zu bytes", n);
  else snprintf(buf, len, "%.2f %s", v, units[u]);
}

kd_cuda_status kd_cu_malloc(int device, size_t nbytes, void **out) {
  if (!out) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "malloc: null output pointer");
  *out = NULL;
  kd_cu_device_guard g;
  KD_CU_TRY(g.enter(device));
  if (nbytes == 0) return KD_CUDA_OK;
  void *p = NULL;
  cudaError_t e = cudaMalloc(&p, nbytes);
  if (e == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) (void)cudaGetLastError();
    char want[32], total[32], avail[32];
    kd_cu_format_bytes(nbytes, want, sizeof want);
    kd_cu_format_bytes(total_b, total, sizeof total);
    kd_cu_format_bytes(free_b, avail, sizeof avail);
    return kd_cu_error(KD_CUDA_ERR_OOM,
                       "CUDA out of memory. Tried to allocate %s. GPU %d has a total capacity of %s of which %s is free.",
                       want, device, total, avail);
  }
  if (e != cudaSuccess) return kd_cu_fail(e, "cudaMalloc");
  *out = p;
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_free(int device, void *ptr) {
  if (!ptr) return KD_CUDA_OK;
  kd_cu_device_guard g;
  KD_CU_TRY(g.enter(device));
  KD_CU_CHECK(cudaFree(ptr));
  return KD_CUDA_OK;
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
   * once; from pinned memory wait, since the caller may free `src` right after. */
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
  KD_CU_CHECK(cudaStreamSynchronize(s));
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
