/* ops_ternary.cu - CUDA pointwise ops of three inputs (src/cpu/ternary.c's KD_TERNARY_* codes):
 * clamp (tensor or number bounds; a missing bound arrives as the dtype's limit), lerp (tensor
 * or number weight, KD_TX_LERP_SCALAR), addcmul, addcdiv. The host side is the CPU kernel (Note
 * [Device kernels through the CPU kernels] in src/ops/ew_codes.h): every operand arrives in the
 * compute dtype. Same formulas as the CPU's KD_CLAMP_F/KD_CLAMP_I/KD_LERP. */
#include "iter.cuh"
#include "ops/ew_codes.h"
#include "ops/op_codes.gen.h"
#include "ops_math.cuh"

template <typename CT>
struct kd_cu_ternary_f {
  int code;
  CT value;
  __device__ __forceinline__ CT lerp(CT a, CT b, CT w) const {
    return kd_cm_fabs(w) < (CT)0.5 ? a + w * (b - a) : b - (b - a) * ((CT)1 - w);
  }
  __device__ __forceinline__ CT operator()(CT a, CT b, CT c) const {
    switch (code) {
      case KD_TERNARY_CLAMP: {
        if (a != a) return a;
        if (b != b) return b;
        if (c != c) return c;
        CT y = a < b ? b : a;
        return y > c ? c : y;
      }
      case KD_TERNARY_LERP: return lerp(a, b, c);
      case KD_TX_LERP_SCALAR: return lerp(a, b, value);
      case KD_TERNARY_ADDCMUL: return a + value * b * c;
      case KD_TERNARY_ADDCDIV: return a + value * b / c;
      default: return a;
    }
  }
};

struct kd_cu_ternary_i {
  int code;
  int64_t value;
  __device__ __forceinline__ int64_t operator()(int64_t a, int64_t b, int64_t c) const {
    switch (code) {
      case KD_TERNARY_CLAMP: {
        int64_t y = a < b ? b : a;
        return y > c ? c : y;
      }
      case KD_TERNARY_ADDCMUL: return (int64_t)((uint64_t)a + (uint64_t)value * (uint64_t)b * (uint64_t)c);
      default: return a;
    }
  }
};

template <typename T>
static kd_cuda_status kd_cu_ternary_float(int device, const kd_cuda_ew *e, const kd_cu_iter<4> &it) {
  typedef typename kd_cu_ct<T>::type CT;
  return kd_cu_pointwise<T, T, T, T>(device, it, 3, kd_cu_ternary_f<CT>{e->code, (CT)e->p[0]});
}
template <typename T>
static kd_cuda_status kd_cu_ternary_int(int device, const kd_cuda_ew *e, const kd_cu_iter<4> &it) {
  return kd_cu_pointwise<T, T, T, T>(device, it, 3, kd_cu_ternary_i{e->code, e->ip[0]});
}

kd_cuda_status kd_cu_ternary(int device, const kd_cuda_ew *e, int32_t *flags) {
  (void)flags;
  kd_cu_iter<4> it;
  if (e->nops != 4 || !kd_cu_iter_from(e, &it)) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "ternary: bad operands");
  for (int k = 1; k < 4; k++)
    if (e->dtypes[k] != e->dtypes[0]) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "ternary: operand dtypes differ");
  switch (e->dtypes[0]) {
    case KD_DTYPE_F32: return kd_cu_ternary_float<float>(device, e, it);
    case KD_DTYPE_F64: return kd_cu_ternary_float<double>(device, e, it);
    case KD_DTYPE_F16: return kd_cu_ternary_float<__half>(device, e, it);
    case KD_DTYPE_BF16: return kd_cu_ternary_float<__nv_bfloat16>(device, e, it);
    case KD_DTYPE_I8: return kd_cu_ternary_int<int8_t>(device, e, it);
    case KD_DTYPE_U8: return kd_cu_ternary_int<uint8_t>(device, e, it);
    case KD_DTYPE_I16: return kd_cu_ternary_int<int16_t>(device, e, it);
    case KD_DTYPE_I32: return kd_cu_ternary_int<int32_t>(device, e, it);
    case KD_DTYPE_I64: return kd_cu_ternary_int<int64_t>(device, e, it);
    case KD_DTYPE_BOOL: return kd_cu_ternary_int<kd_cu_bool>(device, e, it);
    default: return kd_cu_not_supported("ternary", e->dtypes[0]);
  }
}
