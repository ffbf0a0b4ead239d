/* ops_special.cu - CUDA special functions: every KD_SPECIAL_* code (and the KD_SX_* ones) of
 * src/cpu/special.c, with the same device-and-host math (src/cpu/special_math.h, compiled here as
 * device functions), so the CPU and the GPU compute each value the same way. The host side is the
 * CPU kernel (Note [Device kernels through the CPU kernels] in src/ops/ew_codes.h): inputs arrive
 * in the compute dtype (floating, or integer/bool for gcd/lcm/heaviside), the output in it (int32
 * for frexp's exponent). float16/bfloat16 compute in float; nextafter of them steps in their own
 * format.
 *
 * Note [One kernel per special function]
 * The code is a template argument: the launcher switches on it once per launch and each kernel
 * holds the one function it computes (the switch of kd_cu_special_eval folds away). A single
 * kernel switching over every function at run time held all of special_math.h inlined, times the
 * vector width of the contiguous mode, times the four modes and four dtypes: ptxas needed over
 * 5 minutes and 6.6 GB for one architecture. Codes that compute the same function share a kernel
 * (modifiedBesselI0/I1 are i0/i1), and each code gets the arity it has (kd_special_class_of in
 * src/cpu/special.c): one or two inputs, never both. */
#include "iter.cuh"
#include "ops/ew_codes.h"
#include "ops/op_codes.gen.h"
#include "../src/cpu/special_math.h"

__device__ __forceinline__ float kd_cu_sm_lgamma(float x) { return lgammaf(x); }
__device__ __forceinline__ double kd_cu_sm_lgamma(double x) { return lgamma(x); }

#define KD_CU_SM(fn) (sizeof(CT) == sizeof(float) ? (CT)kd_sm_##fn##_f((float)x) : (CT)kd_sm_##fn##_d((double)x))
#define KD_CU_SM2(fn) (sizeof(CT) == sizeof(float) ? (CT)kd_sm_##fn##_f((float)a, (float)b) : (CT)kd_sm_##fn##_d((double)a, (double)b))

/* The function of `code` (a constant where it is called) of floating inputs; T the storage type
 * (nextafter of 16-bit types), CT float or double. */
template <typename T, typename CT>
__device__ __forceinline__ CT kd_cu_special_eval(int code, CT a, CT b, double p0) {
  const CT x = a;
  switch (code) {
    case KD_SPECIAL_LGAMMA: return kd_cu_sm_lgamma(x);
    case KD_SPECIAL_DIGAMMA: return KD_CU_SM(digamma);
    case KD_SPECIAL_POLYGAMMA:
      return sizeof(CT) == sizeof(float) ? (CT)kd_sm_polygamma_f((float)x, (int64_t)p0)
                                         : (CT)kd_sm_polygamma_d((double)x, (int64_t)p0);
    case KD_SPECIAL_ERFCX: return KD_CU_SM(erfcx);
    case KD_SPECIAL_ENTR: return KD_CU_SM(entr);
    case KD_SPECIAL_I0: return KD_CU_SM(i0);
    case KD_SPECIAL_I0E: return KD_CU_SM(i0e);
    case KD_SPECIAL_I1: return KD_CU_SM(i1);
    case KD_SPECIAL_I1E: return KD_CU_SM(i1e);
    case KD_SPECIAL_NDTR: return KD_CU_SM(ndtr);
    case KD_SPECIAL_NDTRI: return KD_CU_SM(ndtri);
    case KD_SPECIAL_LOG_NDTR: return KD_CU_SM(log_ndtr);
    case KD_SPECIAL_SINC: return KD_CU_SM(sinc);
    case KD_SPECIAL_LOGIT:
      return sizeof(CT) == sizeof(float) ? (CT)kd_sm_logit_f((float)x, (float)p0) : (CT)kd_sm_logit_d((double)x, p0);
    case KD_SPECIAL_BESSEL_J0: return KD_CU_SM(bessel_j0);
    case KD_SPECIAL_BESSEL_J1: return KD_CU_SM(bessel_j1);
    case KD_SPECIAL_BESSEL_Y0: return KD_CU_SM(bessel_y0);
    case KD_SPECIAL_BESSEL_Y1: return KD_CU_SM(bessel_y1);
    case KD_SPECIAL_MODIFIED_BESSEL_K0:
    case KD_SPECIAL_MODIFIED_BESSEL_K1:
    case KD_SPECIAL_SCALED_MODIFIED_BESSEL_K0:
    case KD_SPECIAL_SCALED_MODIFIED_BESSEL_K1: {
      const int order = code == KD_SPECIAL_MODIFIED_BESSEL_K1 || code == KD_SPECIAL_SCALED_MODIFIED_BESSEL_K1;
      const int scaled = code == KD_SPECIAL_SCALED_MODIFIED_BESSEL_K0 || code == KD_SPECIAL_SCALED_MODIFIED_BESSEL_K1;
      return sizeof(CT) == sizeof(float) ? (CT)kd_sm_bessel_k_f((float)x, order, scaled)
                                         : (CT)kd_sm_bessel_k_d((double)x, order, scaled);
    }
    case KD_SPECIAL_SPHERICAL_BESSEL_J0: return KD_CU_SM(spherical_bessel_j0);
    case KD_SPECIAL_AIRY_AI: return KD_CU_SM(airy_ai);
    case KD_SX_POLYNOMIAL:
      return sizeof(CT) == sizeof(float) ? (CT)kd_sm_polynomial_f((float)a, (float)b, (int)p0)
                                         : (CT)kd_sm_polynomial_d((double)a, (double)b, (int)p0);
    case KD_SPECIAL_FREXP: {
      int e;
      return (CT)frexp((double)x, &e); /* exact: the mantissa of x has x's precision */
    }
    case KD_SX_FREXP_EXPONENT: {
      int e = 0;
      if (isfinite(x)) frexp((double)x, &e);
      return (CT)e;
    }
    case KD_SPECIAL_XLOGY: return KD_CU_SM2(xlogy);
    case KD_SPECIAL_XLOG1PY: return KD_CU_SM2(xlog1py);
    case KD_SPECIAL_ZETA: return (CT)kd_sm_zeta((double)a, (double)b);
    case KD_SPECIAL_IGAMMA: return KD_CU_SM2(igamma);
    case KD_SPECIAL_IGAMMAC: return KD_CU_SM2(igammac);
    case KD_SPECIAL_LOGADDEXP: return KD_CU_SM2(logaddexp);
    case KD_SPECIAL_LOGADDEXP2: return KD_CU_SM2(logaddexp2);
    case KD_SPECIAL_NEXTAFTER:
      if (sizeof(T) == 2) return (CT)kd_sm_nextafter16((float)a, (float)b, std::is_same<T, __nv_bfloat16>::value);
      return sizeof(CT) == sizeof(float) ? (CT)nextafterf((float)a, (float)b) : (CT)nextafter((double)a, (double)b);
    case KD_SPECIAL_COPYSIGN: return sizeof(CT) == sizeof(float) ? (CT)copysignf((float)a, (float)b) : (CT)copysign((double)a, (double)b);
    case KD_SPECIAL_HEAVISIDE: return a == (CT)0 ? b : (CT)(a > (CT)0);
    default: return x;
  }
}

/* One code's function as a pointwise functor: CODE fixed at compile time. */
template <int CODE, typename T, typename CT>
struct kd_cu_special_f {
  double p0;
  __device__ __forceinline__ CT operator()(CT a, CT b, int64_t) const { return kd_cu_special_eval<T, CT>(CODE, a, b, p0); }
};

/* The codes of floating inputs by arity (kd_special_class_of in src/cpu/special.c); the
 * modified Bessel functions of the first kind are launched as i0/i1. */
#define KD_CU_SPECIAL_UNARY(X)                                                                                     \
  X(KD_SPECIAL_LGAMMA) X(KD_SPECIAL_DIGAMMA) X(KD_SPECIAL_POLYGAMMA) X(KD_SPECIAL_ERFCX) X(KD_SPECIAL_ENTR)         \
  X(KD_SPECIAL_I0) X(KD_SPECIAL_I0E) X(KD_SPECIAL_I1) X(KD_SPECIAL_I1E) X(KD_SPECIAL_NDTR) X(KD_SPECIAL_NDTRI)      \
  X(KD_SPECIAL_LOG_NDTR) X(KD_SPECIAL_SINC) X(KD_SPECIAL_LOGIT) X(KD_SPECIAL_BESSEL_J0) X(KD_SPECIAL_BESSEL_J1)    \
  X(KD_SPECIAL_BESSEL_Y0) X(KD_SPECIAL_BESSEL_Y1) X(KD_SPECIAL_MODIFIED_BESSEL_K0) X(KD_SPECIAL_MODIFIED_BESSEL_K1) \
  X(KD_SPECIAL_SCALED_MODIFIED_BESSEL_K0) X(KD_SPECIAL_SCALED_MODIFIED_BESSEL_K1)                                  \
  X(KD_SPECIAL_SPHERICAL_BESSEL_J0) X(KD_SPECIAL_AIRY_AI) X(KD_SPECIAL_FREXP)
#define KD_CU_SPECIAL_BINARY(X)                                                                                   \
  X(KD_SX_POLYNOMIAL) X(KD_SPECIAL_XLOGY) X(KD_SPECIAL_XLOG1PY) X(KD_SPECIAL_ZETA) X(KD_SPECIAL_IGAMMA)            \
  X(KD_SPECIAL_IGAMMAC) X(KD_SPECIAL_LOGADDEXP) X(KD_SPECIAL_LOGADDEXP2) X(KD_SPECIAL_NEXTAFTER)                  \
  X(KD_SPECIAL_COPYSIGN) X(KD_SPECIAL_HEAVISIDE)

/* Integer and bool inputs (as int64; stores wrap to the width): gcd, lcm, heaviside. */
struct kd_cu_special_i {
  int code;
  bool is_bool;
  __device__ __forceinline__ int64_t operator()(int64_t a, int64_t b, int64_t) const {
    switch (code) {
      case KD_SPECIAL_GCD: return kd_sm_gcd(a, b);
      case KD_SPECIAL_LCM: {
        const int64_t g = kd_sm_gcd(a, b);
        if (g == 0) return 0;
        const int64_t l = (int64_t)((uint64_t)(a / g) * (uint64_t)b);
        return l < 0 ? (int64_t)(0ull - (uint64_t)l) : l;
      }
      case KD_SPECIAL_HEAVISIDE: return a == 0 ? b : (is_bool ? a : (int64_t)(a > 0));
      default: return a;
    }
  }
};

template <typename T>
static kd_cuda_status kd_cu_special_float(int device, const kd_cuda_ew *e, const kd_cu_iter<4> &it, int nin) {
  typedef typename kd_cu_ct<T>::type CT;
  typedef kd_cu_none N;
  const double p0 = e->p[0];
  int code = e->code;
  if (code == KD_SPECIAL_MODIFIED_BESSEL_I0) code = KD_SPECIAL_I0;
  if (code == KD_SPECIAL_MODIFIED_BESSEL_I1) code = KD_SPECIAL_I1;
#define KD_CU_SPECIAL_LAUNCH1(C) \
  case C: return kd_cu_pointwise<T, T, N, N>(device, it, 1, kd_cu_special_f<C, T, CT>{p0});
#define KD_CU_SPECIAL_LAUNCH2(C) \
  case C: return kd_cu_pointwise<T, T, T, N>(device, it, 2, kd_cu_special_f<C, T, CT>{p0});
  if (nin == 1) {
    switch (code) {
      KD_CU_SPECIAL_UNARY(KD_CU_SPECIAL_LAUNCH1)
      case KD_SX_FREXP_EXPONENT: /* int32 out */
        return kd_cu_pointwise<int32_t, T, N, N>(device, it, 1, kd_cu_special_f<KD_SX_FREXP_EXPONENT, T, CT>{p0});
      default: break;
    }
  } else {
    switch (code) { KD_CU_SPECIAL_BINARY(KD_CU_SPECIAL_LAUNCH2) default: break; }
  }
#undef KD_CU_SPECIAL_LAUNCH1
#undef KD_CU_SPECIAL_LAUNCH2
  return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "special: code %d does not take %d floating input(s)", code, nin);
}

template <typename T>
static kd_cuda_status kd_cu_special_int(int device, const kd_cuda_ew *e, const kd_cu_iter<4> &it, int nin) {
  if (nin != 2) return kd_cu_not_supported("special (integer)", e->dtypes[1]);
  kd_cu_special_i f{e->code, e->dtypes[1] == KD_DTYPE_BOOL};
  return kd_cu_pointwise<T, T, T, kd_cu_none>(device, it, 2, f);
}

kd_cuda_status kd_cu_special(int device, const kd_cuda_ew *e, int32_t *flags) {
  (void)flags;
  kd_cu_iter<4> it;
  if (e->nops < 2 || e->nops > 3 || !kd_cu_iter_from(e, &it))
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "special: bad operands");
  const int nin = e->nops - 1;
  if (nin == 2 && e->dtypes[2] != e->dtypes[1])
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "special: input dtypes %d and %d", (int)e->dtypes[1], (int)e->dtypes[2]);
  if (e->dtypes[0] != (e->code == KD_SX_FREXP_EXPONENT ? (int32_t)KD_DTYPE_I32 : e->dtypes[1]))
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "special: output dtype %d for input dtype %d", (int)e->dtypes[0],
                       (int)e->dtypes[1]);
  switch (e->dtypes[1]) {
    case KD_DTYPE_F32: return kd_cu_special_float<float>(device, e, it, nin);
    case KD_DTYPE_F64: return kd_cu_special_float<double>(device, e, it, nin);
    case KD_DTYPE_F16: return kd_cu_special_float<__half>(device, e, it, nin);
    case KD_DTYPE_BF16: return kd_cu_special_float<__nv_bfloat16>(device, e, it, nin);
    case KD_DTYPE_I8: return kd_cu_special_int<int8_t>(device, e, it, nin);
    case KD_DTYPE_U8: return kd_cu_special_int<uint8_t>(device, e, it, nin);
    case KD_DTYPE_I16: return kd_cu_special_int<int16_t>(device, e, it, nin);
    case KD_DTYPE_I32: return kd_cu_special_int<int32_t>(device, e, it, nin);
    case KD_DTYPE_I64: return kd_cu_special_int<int64_t>(device, e, it, nin);
    case KD_DTYPE_BOOL: return kd_cu_special_int<kd_cu_bool>(device, e, it, nin);
    default: return kd_cu_not_supported("special", e->dtypes[1]);
  }
}
