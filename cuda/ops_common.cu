/* ops_common.cu - the entry of every pointwise launch (kd_cu_elementwise: validates the
 * kd_cuda_ew, picks the family's launcher) and what the ops_*.cu launchers share: the
 * "not supported" status and the per-device flag word kernels raise (integer division by
 * zero, reported as PyTorch's ZeroDivisionError by the caller). */
#include "iter.cuh"
#include "ops/ew_codes.h"

kd_cuda_status kd_cu_not_supported(const char *what, int32_t dtype) {
  return kd_cu_error(KD_CUDA_ERR_NOT_SUPPORTED, "%s is not implemented on CUDA for dtype %d", what, (int)dtype);
}

#define KD_CU_MAX_DEVICES 64
static int32_t *kd_cu_flag_words[KD_CU_MAX_DEVICES]; /* one int32 per device, allocated once */

kd_cuda_status kd_cu_flags_reset(int device, int32_t **dev_flag) {
  if (device < 0 || device >= KD_CU_MAX_DEVICES) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "bad device %d", device);
  if (!kd_cu_flag_words[device]) KD_CU_CHECK(cudaMalloc((void **)&kd_cu_flag_words[device], sizeof(int32_t)));
  KD_CU_CHECK(cudaMemsetAsync(kd_cu_flag_words[device], 0, sizeof(int32_t), kd_cu_stream(device)));
  *dev_flag = kd_cu_flag_words[device];
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_flags_read(int device, int32_t *dev_flag, int32_t *out) {
  cudaStream_t s = kd_cu_stream(device);
  KD_CU_CHECK(cudaMemcpyAsync(out, dev_flag, sizeof(int32_t), cudaMemcpyDeviceToHost, s));
  KD_CU_CHECK(cudaStreamSynchronize(s));
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_elementwise(int device, const kd_cuda_ew *e, int32_t *flags) {
  if (!e || !flags) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "elementwise: null argument");
  *flags = 0;
  if (e->nops < 2 || e->nops > KD_CUDA_EW_MAX_OPS || e->ndim < 0 || e->ndim > KD_CUDA_MAX_DIMS)
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "elementwise: %d operands, %d dims", (int)e->nops, (int)e->ndim);
  if (!e->data[0]) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "elementwise: the output is not a device tensor");
  for (int k = 0; k < e->nops; k++)
    if (kd_cu_dtype_size(e->dtypes[k]) == 0)
      return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "elementwise: invalid dtype %d", (int)e->dtypes[k]);
  if (e->numel == 0) return KD_CUDA_OK;
  kd_cu_device_guard g;
  KD_CU_TRY(g.enter(device));
  switch (e->family) {
    case KD_EW_UNARY: return kd_cu_unary(device, e, flags);
    case KD_EW_BINARY:
    case KD_EW_WHERE:
    case KD_EW_LOGICAL_NOT:
    case KD_EW_BITWISE_NOT: return kd_cu_binary(device, e, flags);
    case KD_EW_TERNARY: return kd_cu_ternary(device, e, flags);
    case KD_EW_SPECIAL: return kd_cu_special(device, e, flags);
    default: return kd_cu_error(KD_CUDA_ERR_NOT_SUPPORTED, "elementwise: unknown family %d", (int)e->family);
  }
}
