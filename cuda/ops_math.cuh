/* ops_math.cuh - device math for the pointwise kernels: kd_cm_<fn>(x) overloaded for float
 * (the libdevice f-functions) and double, so one functor body serves both compute types, as
 * the CPU's MS suffix does (unary_math.h). */
#ifndef KD_CUDA_OPS_MATH_CUH
#define KD_CUDA_OPS_MATH_CUH

#define KD_CM1(fn)                                                                            \
  __device__ __forceinline__ float kd_cm_##fn(float x) { return fn##f(x); }                   \
  __device__ __forceinline__ double kd_cm_##fn(double x) { return fn(x); }
#define KD_CM2(fn)                                                                            \
  __device__ __forceinline__ float kd_cm_##fn(float x, float y) { return fn##f(x, y); }       \
  __device__ __forceinline__ double kd_cm_##fn(double x, double y) { return fn(x, y); }

KD_CM1(exp) KD_CM1(exp2) KD_CM1(expm1) KD_CM1(log) KD_CM1(log2) KD_CM1(log10) KD_CM1(log1p)
KD_CM1(sin) KD_CM1(cos) KD_CM1(tan) KD_CM1(asin) KD_CM1(acos) KD_CM1(atan) KD_CM1(sinh)
KD_CM1(cosh) KD_CM1(tanh) KD_CM1(asinh) KD_CM1(acosh) KD_CM1(atanh) KD_CM1(erf) KD_CM1(erfc)
KD_CM1(erfinv) KD_CM1(floor) KD_CM1(ceil) KD_CM1(trunc) KD_CM1(nearbyint) KD_CM1(sqrt)
KD_CM1(fabs)
KD_CM2(fmod) KD_CM2(atan2) KD_CM2(hypot) KD_CM2(pow) KD_CM2(fmax) KD_CM2(fmin) KD_CM2(copysign)
#undef KD_CM1
#undef KD_CM2

#endif
