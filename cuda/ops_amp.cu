/* ops_amp.cu - CUDA gradient scaling: the device half of src/cpu/amp.c (kind KD_CUDA_OP_AMP).
 * code KD_AMP_UNSCALE: one gradient's iteration (op 0, in place) times *inv_scale, and
 * *found_inf = 1 when a value (before scaling) is inf/NaN; i[0] = addr of found_inf, i[1] = addr
 * of inv_scale (1-element float32 device buffers, read on the device: no host sync). One thread
 * per element, grid-stride, as PyTorch's _amp_non_finite_check_and_unscale_cuda_; the CPU kernel
 * issues one launch per gradient of the list. code KD_AMP_UPDATE_SCALE: _amp_update_scale_ on
 * one thread: i[0] = addr of the float32 scale, i[1] = of the int32 growth tracker, i[2] = of
 * found_inf, i[3] = growthInterval; d[0] = growthFactor, d[1] = backoffFactor. */
#include "ops/op_codes.gen.h"
#include "ops_op.cuh"

typedef kd_cu_iter<KD_CUDA_OP_MAX_OPS> kd_cu_it8;

template <typename T, typename I>
__global__ void kd_cu_amp_unscale_kernel(const kd_cu_it8 it, float *found, const float *inv_scale) {
  typedef typename kd_cu_ct<T>::type CT;
  const CT inv = (CT)*inv_scale;
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < it.numel; i += step) {
    I off[KD_CUDA_OP_MAX_OPS];
    kd_cu_iter_offsets<I, KD_CUDA_OP_MAX_OPS>(it, (I)i, off);
    T *p = (T *)(it.data[0] + off[0]);
    const CT v = kd_cu_ld(*p);
    if (!isfinite(v)) *found = 1.0f;
    *p = kd_cu_st<T>(v * inv);
  }
}

template <typename T>
static kd_cuda_status kd_cu_amp_unscale_t(int device, const kd_cu_it8 &it, float *found, const float *inv) {
  cudaStream_t s = kd_cu_stream(device);
  const unsigned grid = kd_cu_grid(device, it.numel);
  if (kd_cu_iter_fits_32(it)) KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_cu_amp_unscale_kernel<T, int32_t>)(it, found, inv);
  else KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_cu_amp_unscale_kernel<T, int64_t>)(it, found, inv);
  KD_CU_CHECK_LAUNCH("the gradient unscale kernel");
  return KD_CUDA_OK;
}

__global__ void kd_cu_amp_update_scale_kernel(float *scale, int32_t *tracker, const float *found, double growth,
                                              double backoff, int64_t interval) {
  if (*found) {
    *scale = (float)((*scale) * backoff);
    *tracker = 0;
  } else {
    const int32_t successful = (*tracker) + 1;
    if (successful == interval) {
      const float ns = (float)((*scale) * growth);
      if (isfinite(ns)) *scale = ns;
      *tracker = 0;
    } else {
      *tracker = successful;
    }
  }
}

kd_cuda_status kd_cu_amp(int device, kd_cuda_op *o) {
  if (o->code == KD_AMP_UPDATE_SCALE) {
    float *scale = (float *)(intptr_t)o->i[0];
    int32_t *tracker = (int32_t *)(intptr_t)o->i[1];
    const float *found = (const float *)(intptr_t)o->i[2];
    if (!scale || !tracker || !found) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "update scale: null operand");
    KD_LAUNCH(1, 1, 0, kd_cu_stream(device), kd_cu_amp_update_scale_kernel)(scale, tracker, found, o->d[0], o->d[1], o->i[3]);
    KD_CU_CHECK_LAUNCH("the scale update kernel");
    return KD_CUDA_OK;
  }
  if (o->code != KD_AMP_UNSCALE) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "amp: unknown code %d", (int)o->code);
  kd_cu_it8 it;
  KD_CU_TRY(kd_cu_op_iter(o, &it));
  float *found = (float *)(intptr_t)o->i[0];
  const float *inv = (const float *)(intptr_t)o->i[1];
  if (it.scalar_mask || o->nops != 1 || !found || !inv) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "unscale: bad operands");
  if (it.numel == 0) return KD_CUDA_OK;
  switch (o->dtype) {
    case KD_DTYPE_F32: return kd_cu_amp_unscale_t<float>(device, it, found, inv);
    case KD_DTYPE_F64: return kd_cu_amp_unscale_t<double>(device, it, found, inv);
    case KD_DTYPE_F16: return kd_cu_amp_unscale_t<__half>(device, it, found, inv);
    case KD_DTYPE_BF16: return kd_cu_amp_unscale_t<__nv_bfloat16>(device, it, found, inv);
    default: return kd_cu_not_supported("_amp_foreach_non_finite_check_and_unscale_", o->dtype);
  }
}
