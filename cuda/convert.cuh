/* convert.cuh - device-side element types and dtype conversion, matching core/dtype.h's
 * scalar rules (kd_scalar_load + kd_scalar_store) so a CUDA copy converts like a CPU one:
 *   - every value is first read as float (float32/float16/bfloat16), double (float64),
 *     int64 (integer dtypes) or bool;
 *   - to a float dtype: a plain cast, float16/bfloat16 round to nearest even;
 *   - float to an integer dtype: NaN -> 0, saturate to the int64 range, then wrap to the width;
 *   - integer to a narrower integer: wrap (two's complement);
 *   - anything to bool: x != 0 (NaN is true).
 * Same-dtype copies never convert: they move bits (copy.cu), so NaN payloads survive. */
#ifndef KD_CUDA_CONVERT_CUH
#define KD_CUDA_CONVERT_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "core/dtype.h"

/* bool elements: one byte, 0 or 1; a distinct type so it does not collide with uint8. */
struct kd_cu_bool {
  uint8_t v;
};

/* ---- read: element -> canonical value ---- */
__host__ __device__ __forceinline__ float kd_cu_canon(float x) { return x; }
__host__ __device__ __forceinline__ double kd_cu_canon(double x) { return x; }
__host__ __device__ __forceinline__ float kd_cu_canon(__half x) { return __half2float(x); }
__host__ __device__ __forceinline__ float kd_cu_canon(__nv_bfloat16 x) { return __bfloat162float(x); }
__host__ __device__ __forceinline__ int64_t kd_cu_canon(int8_t x) { return x; }
__host__ __device__ __forceinline__ int64_t kd_cu_canon(uint8_t x) { return x; }
__host__ __device__ __forceinline__ int64_t kd_cu_canon(int16_t x) { return x; }
__host__ __device__ __forceinline__ int64_t kd_cu_canon(int32_t x) { return x; }
__host__ __device__ __forceinline__ int64_t kd_cu_canon(int64_t x) { return x; }
__host__ __device__ __forceinline__ bool kd_cu_canon(kd_cu_bool x) { return x.v != 0; }

/* float -> int64 without undefined behaviour (as kd_double_to_i64 in core/dtype.c). */
__host__ __device__ __forceinline__ int64_t kd_cu_f2i(double d) {
  if (d != d) return 0;
  if (d >= 9223372036854775807.0) return INT64_MAX;
  if (d <= -9223372036854775808.0) return INT64_MIN;
  return (int64_t)d;
}

/* ---- write: canonical value -> element ---- */
template <typename D>
struct kd_cu_to;

template <>
struct kd_cu_to<float> {
  static __host__ __device__ __forceinline__ float from(float v) { return v; }
  static __host__ __device__ __forceinline__ float from(double v) { return (float)v; }
  static __host__ __device__ __forceinline__ float from(int64_t v) { return (float)v; }
  static __host__ __device__ __forceinline__ float from(bool v) { return v ? 1.0f : 0.0f; }
};
template <>
struct kd_cu_to<double> {
  static __host__ __device__ __forceinline__ double from(float v) { return (double)v; }
  static __host__ __device__ __forceinline__ double from(double v) { return v; }
  static __host__ __device__ __forceinline__ double from(int64_t v) { return (double)v; }
  static __host__ __device__ __forceinline__ double from(bool v) { return v ? 1.0 : 0.0; }
};
/* float64 -> float16/bfloat16 goes through float32, as the CPU does. */
template <>
struct kd_cu_to<__half> {
  static __host__ __device__ __forceinline__ __half from(float v) { return __float2half_rn(v); }
  static __host__ __device__ __forceinline__ __half from(double v) { return __float2half_rn((float)v); }
  static __host__ __device__ __forceinline__ __half from(int64_t v) { return __float2half_rn((float)(double)v); }
  static __host__ __device__ __forceinline__ __half from(bool v) { return __float2half_rn(v ? 1.0f : 0.0f); }
};
template <>
struct kd_cu_to<__nv_bfloat16> {
  static __host__ __device__ __forceinline__ __nv_bfloat16 from(float v) { return __float2bfloat16_rn(v); }
  static __host__ __device__ __forceinline__ __nv_bfloat16 from(double v) { return __float2bfloat16_rn((float)v); }
  static __host__ __device__ __forceinline__ __nv_bfloat16 from(int64_t v) { return __float2bfloat16_rn((float)(double)v); }
  static __host__ __device__ __forceinline__ __nv_bfloat16 from(bool v) { return __float2bfloat16_rn(v ? 1.0f : 0.0f); }
};
template <typename I>
struct kd_cu_to_int {
  static __host__ __device__ __forceinline__ I from(float v) { return (I)kd_cu_f2i((double)v); }
  static __host__ __device__ __forceinline__ I from(double v) { return (I)kd_cu_f2i(v); }
  static __host__ __device__ __forceinline__ I from(int64_t v) { return (I)v; }
  static __host__ __device__ __forceinline__ I from(bool v) { return (I)(v ? 1 : 0); }
};
template <> struct kd_cu_to<int8_t> : kd_cu_to_int<int8_t> {};
template <> struct kd_cu_to<uint8_t> : kd_cu_to_int<uint8_t> {};
template <> struct kd_cu_to<int16_t> : kd_cu_to_int<int16_t> {};
template <> struct kd_cu_to<int32_t> : kd_cu_to_int<int32_t> {};
template <> struct kd_cu_to<int64_t> : kd_cu_to_int<int64_t> {};
template <>
struct kd_cu_to<kd_cu_bool> {
  static __host__ __device__ __forceinline__ kd_cu_bool from(float v) { return kd_cu_bool{(uint8_t)(v != 0.0f)}; }
  static __host__ __device__ __forceinline__ kd_cu_bool from(double v) { return kd_cu_bool{(uint8_t)(v != 0.0)}; }
  static __host__ __device__ __forceinline__ kd_cu_bool from(int64_t v) { return kd_cu_bool{(uint8_t)(v != 0)}; }
  static __host__ __device__ __forceinline__ kd_cu_bool from(bool v) { return kd_cu_bool{(uint8_t)v}; }
};

template <typename D, typename S>
__host__ __device__ __forceinline__ D kd_cu_convert(S x) {
  return kd_cu_to<D>::from(kd_cu_canon(x));
}

/* X(kd_dtype value, element type) for every dtype: the one list the dispatch switches use. */
#define KD_CU_FOR_EACH_DTYPE(X)   \
  X(KD_DTYPE_F32, float)          \
  X(KD_DTYPE_F64, double)         \
  X(KD_DTYPE_F16, __half)         \
  X(KD_DTYPE_BF16, __nv_bfloat16) \
  X(KD_DTYPE_I8, int8_t)          \
  X(KD_DTYPE_U8, uint8_t)         \
  X(KD_DTYPE_I16, int16_t)        \
  X(KD_DTYPE_I32, int32_t)        \
  X(KD_DTYPE_I64, int64_t)        \
  X(KD_DTYPE_BOOL, kd_cu_bool)

#endif
