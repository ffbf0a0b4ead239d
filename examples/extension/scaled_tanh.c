/* scaled_tanh.c - an example kindling C extension (include/kindling.h): a fused op
 *   extdemo::scaled_tanh(Tensor x, float alpha=1.0) -> Tensor        y = tanh(alpha * x)
 * and its backward, a second fused op
 *   extdemo::scaled_tanh_backward(Tensor grad, Tensor x, float alpha) -> Tensor
 *                                                                    grad * alpha * (1 - tanh(alpha x)^2)
 * for contiguous float32 and float64 tensors on the CPU, and on CUDA when compiled with -DWITH_CUDA
 * together with scaled_tanh_cuda.cu (its kernels); set_backward makes the second the first's
 * backward. Each op checks its arguments and makes its output here, for both devices. run.js loads
 * it with kd.utils.cppExtension.load. */
#include <kindling.h>
#include <math.h>

static const kindling_api *kd;

#ifdef WITH_CUDA
/* scaled_tanh_cuda.cu: the kernels on the call's stream, for contiguous tensors of one dtype. */
int scaled_tanh_forward_cuda(const kindling_api *api, kd_op_call *c, const kd_tensor *x, kd_tensor *y, double alpha);
int scaled_tanh_backward_cuda(const kindling_api *api, kd_op_call *c, const kd_tensor *grad, const kd_tensor *x,
                              kd_tensor *gx, double alpha);
#endif

/* x (and grad) as contiguous float32/float64 tensors of one dtype, or an error. */
static int check(kd_tensor *x, kd_tensor *other, const char *what) {
  int dt = kd->dtype(x);
  if (dt != KD_FLOAT32 && dt != KD_FLOAT64) return kd->error(KD_ERROR_DTYPE, "%s: expected a float32 or float64 tensor", what);
  if (!kd->is_contiguous(x) || (other && !kd->is_contiguous(other)))
    return kd->error(KD_ERROR_INVALID_ARGUMENT, "%s: expected contiguous tensors", what);
  if (other && (kd->dtype(other) != dt || kd->numel(other) != kd->numel(x)))
    return kd->error(KD_ERROR_SHAPE, "%s: grad and x differ in dtype or size", what);
  return KD_SUCCESS;
}

static int forward(kd_op_call *c) {
  kd_tensor *x = kd->arg_tensor(c, 0);
  double alpha = kd->arg_double(c, 1);
  int st = check(x, NULL, "extdemo::scaled_tanh");
  if (st) return st;
  kd_tensor *y = kd->new_output(c, 0, kd->sizes(x), kd->ndim(x), kd->dtype(x));
  if (!y) return kd->last_status();
#ifdef WITH_CUDA
  if (kd->device_type(x) == KD_DEVICE_TYPE_CUDA) return scaled_tanh_forward_cuda(kd, c, x, y, alpha);
#endif
  int64_t n = kd->numel(x);
  if (kd->dtype(x) == KD_FLOAT32) {
    const float *in = kd->data(x);
    float *out = kd->data(y);
    for (int64_t i = 0; i < n; i++) out[i] = tanhf((float)alpha * in[i]);
  } else {
    const double *in = kd->data(x);
    double *out = kd->data(y);
    for (int64_t i = 0; i < n; i++) out[i] = tanh(alpha * in[i]);
  }
  return KD_SUCCESS;
}

static int backward(kd_op_call *c) {
  kd_tensor *g = kd->arg_tensor(c, 0), *x = kd->arg_tensor(c, 1);
  double alpha = kd->arg_double(c, 2);
  int st = check(x, g, "extdemo::scaled_tanh_backward");
  if (st) return st;
  kd_tensor *gx = kd->new_output(c, 0, kd->sizes(x), kd->ndim(x), kd->dtype(x));
  if (!gx) return kd->last_status();
#ifdef WITH_CUDA
  if (kd->device_type(x) == KD_DEVICE_TYPE_CUDA) return scaled_tanh_backward_cuda(kd, c, g, x, gx, alpha);
#endif
  int64_t n = kd->numel(x);
  if (kd->dtype(x) == KD_FLOAT32) {
    const float *gi = kd->data(g), *xi = kd->data(x);
    float *out = kd->data(gx);
    for (int64_t i = 0; i < n; i++) {
      float t = tanhf((float)alpha * xi[i]);
      out[i] = gi[i] * (float)alpha * (1.0f - t * t);
    }
  } else {
    const double *gi = kd->data(g), *xi = kd->data(x);
    double *out = kd->data(gx);
    for (int64_t i = 0; i < n; i++) {
      double t = tanh(alpha * xi[i]);
      out[i] = gi[i] * alpha * (1.0 - t * t);
    }
  }
  return KD_SUCCESS;
}

int kindling_extension_init(const kindling_api *api) {
  if (api->abi_version < KINDLING_EXTENSION_ABI) return -1;
  kd = api;
  int fwd, bwd;
  if (kd->define("extdemo::scaled_tanh(Tensor x, float alpha=1.0) -> Tensor", &fwd)) return -1;
  if (kd->define("extdemo::scaled_tanh_backward(Tensor grad, Tensor x, float alpha) -> Tensor", &bwd)) return -1;
  if (kd->impl(fwd, KD_DEVICE_TYPE_CPU, forward)) return -1;
  if (kd->impl(bwd, KD_DEVICE_TYPE_CPU, backward)) return -1;
#ifdef WITH_CUDA
  if (kd->impl(fwd, KD_DEVICE_TYPE_CUDA, forward)) return -1;
  if (kd->impl(bwd, KD_DEVICE_TYPE_CUDA, backward)) return -1;
#endif
  return kd->set_backward(fwd, bwd);
}
