/* kindling_cuda.h - CUDA kernels in kindling extensions (.cu sources given to
 * kd.utils.cppExtension.load; docs/EXTENDING.md, "CUDA sources"). The same .cu source builds with
 * nvcc for a GPU and with the host C++ compiler for the emulated GPU (KINDLING_CUDA=emulate), when
 * its kernels are launched with KD_LAUNCH and enqueued on the call's stream:
 *
 *   #include <kindling_cuda.h>
 *   __global__ void scale_kernel(const float *x, float *y, float alpha, int64_t n) { ... }
 *   static int scale_cuda(kd_op_call *c) {
 *     ...
 *     cudaStream_t stream = kd_cuda_current_stream(kd, c);
 *     KD_LAUNCH((unsigned)((n + 255) / 256), 256, 0, stream, scale_kernel)(in, out, (float)alpha, n);
 *     return kd_cuda_check(kd, "mylib::scale");
 *   }
 *
 * Tensor data (kd->data) of a CUDA call is device memory of the call's device. */
#ifndef KINDLING_CUDA_H
#define KINDLING_CUDA_H

#include <cuda_runtime.h>

#include "kindling.h"

/* KD_LAUNCH(grid, block, smem, stream, kernel)(args...) is kernel<<<grid, block, smem, stream>>>(args...);
 * on the emulated GPU it enqueues the grid on the stream of the emulated device. */
#ifdef KD_CUDA_EMULATED
#define KD_LAUNCH(grid, block, smem, stream, ...) kd_emu::launch(grid, block, smem, stream, #__VA_ARGS__, __VA_ARGS__)
#else
#define KD_LAUNCH(grid, block, smem, stream, ...) __VA_ARGS__<<<grid, block, smem, stream>>>
#endif

/* The stream a CUDA kernel of the call enqueues its work on (kindling's current stream of the
 * call's device), so that it is ordered with kindling's own work. */
static inline cudaStream_t kd_cuda_current_stream(const kindling_api *api, kd_op_call *c) {
  return (cudaStream_t)api->cuda_stream(c);
}

/* KD_SUCCESS, or a KD_ERROR_INVALID_ARGUMENT error naming `what` and CUDA's error when the last
 * launch failed (a bad configuration; errors during a kernel surface at the next synchronisation). */
static inline int kd_cuda_check(const kindling_api *api, const char *what) {
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) return KD_SUCCESS;
  return api->error(KD_ERROR_INVALID_ARGUMENT, "%s: CUDA launch failed: %s", what, cudaGetErrorString(e));
}

#endif
