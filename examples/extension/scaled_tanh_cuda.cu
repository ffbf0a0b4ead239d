/* scaled_tanh_cuda.cu - the CUDA kernels of the example extension (scaled_tanh.c, compiled with
 * -DWITH_CUDA, checks the arguments and makes the outputs): the fused forward y = tanh(alpha * x)
 * and its fused backward grad * alpha * (1 - tanh(alpha x)^2), float32 and float64, a grid-stride
 * loop over contiguous tensors, launched on the call's current stream. Builds with nvcc, and with
 * the host C++ compiler for the emulated GPU (KINDLING_CUDA=emulate). */
#include <kindling_cuda.h>

template <typename T>
__global__ void scaled_tanh_kernel(const T *x, T *y, T alpha, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    y[i] = tanh(alpha * x[i]);
}

template <typename T>
__global__ void scaled_tanh_backward_kernel(const T *grad, const T *x, T *gx, T alpha, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    T t = tanh(alpha * x[i]);
    gx[i] = grad[i] * alpha * (T(1) - t * t);
  }
}

static const unsigned kThreads = 256;
/* Enough blocks to cover n, at most 4096 (the grid-stride loop does the rest). */
static unsigned blocks_for(int64_t n) {
  int64_t b = (n + kThreads - 1) / kThreads;
  return (unsigned)(b < 1 ? 1 : b > 4096 ? 4096 : b);
}

template <typename T>
static void launch_forward(const kindling_api *kd, kd_op_call *c, const kd_tensor *x, kd_tensor *y, double alpha) {
  int64_t n = kd->numel(x);
  KD_LAUNCH(blocks_for(n), kThreads, 0, kd_cuda_current_stream(kd, c), scaled_tanh_kernel<T>)(
      (const T *)kd->data(x), (T *)kd->data(y), (T)alpha, n);
}

template <typename T>
static void launch_backward(const kindling_api *kd, kd_op_call *c, const kd_tensor *grad, const kd_tensor *x,
                            kd_tensor *gx, double alpha) {
  int64_t n = kd->numel(x);
  KD_LAUNCH(blocks_for(n), kThreads, 0, kd_cuda_current_stream(kd, c), scaled_tanh_backward_kernel<T>)(
      (const T *)kd->data(grad), (const T *)kd->data(x), (T *)kd->data(gx), (T)alpha, n);
}

extern "C" int scaled_tanh_forward_cuda(const kindling_api *kd, kd_op_call *c, const kd_tensor *x, kd_tensor *y,
                                        double alpha) {
  if (kd->numel(x) == 0) return KD_SUCCESS;
  if (kd->dtype(x) == KD_FLOAT32) launch_forward<float>(kd, c, x, y, alpha);
  else launch_forward<double>(kd, c, x, y, alpha);
  return kd_cuda_check(kd, "extdemo::scaled_tanh");
}

extern "C" int scaled_tanh_backward_cuda(const kindling_api *kd, kd_op_call *c, const kd_tensor *grad,
                                         const kd_tensor *x, kd_tensor *gx, double alpha) {
  if (kd->numel(x) == 0) return KD_SUCCESS;
  if (kd->dtype(x) == KD_FLOAT32) launch_backward<float>(kd, c, grad, x, gx, alpha);
  else launch_backward<double>(kd, c, grad, x, gx, alpha);
  return kd_cuda_check(kd, "extdemo::scaled_tanh_backward");
}
