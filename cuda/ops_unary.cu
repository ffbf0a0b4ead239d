/* ops_unary.cu - CUDA pointwise unary ops: every KD_UNARY_* code (and KD_UX_* variants) of
 * src/cpu/unary.c, same formulas, same dtype rules. The host side is the CPU kernel itself
 * (Note [Device kernels through the CPU kernels] in src/ops/ew_codes.h): it has checked the
 * op, cast the input to the compute dtype and allocated the output (the input's dtype, or bool
 * for isnan..isneginf), so this file only maps (code, dtype) to a functor and launches it
 * through the CUDA iterator (iter.cuh). float16/bfloat16 compute in float; integers and bool
 * in int64 with wrapping stores (which equals the CPU's narrow wrapping arithmetic). The code
 * switch is inside the functor: it is uniform across a launch, so warps never diverge on it. */
#include "iter.cuh"
#include "ops/ew_codes.h"
#include "ops/op_codes.gen.h"
#include "ops_math.cuh"

template <typename CT>
__device__ __forceinline__ CT kd_cu_clamp(CT x, CT lo, CT hi) { /* hi wins when lo > hi; NaN propagates */
  CT y = x < lo ? lo : x;
  return y > hi ? hi : y;
}

/* Floating inputs; T the storage type (rounding of round(decimals) intermediates). */
template <typename T, typename CT>
struct kd_cu_unary_f {
  int code;
  CT p0, p1, p2;
  __device__ __forceinline__ CT operator()(CT x, int64_t, int64_t) const {
    switch (code) {
      case KD_UNARY_NEG: return -x;
      case KD_UNARY_ABS: return kd_cm_fabs(x);
      case KD_UNARY_EXP: return kd_cm_exp(x);
      case KD_UNARY_LOG: return kd_cm_log(x);
      case KD_UNARY_SQRT: return kd_cm_sqrt(x);
      case KD_UNARY_RELU: return x < (CT)0 ? (CT)0 : x;
      case KD_UNARY_SIGMOID: return (CT)1 / ((CT)1 + kd_cm_exp(-x));
      case KD_UNARY_TANH: return kd_cm_tanh(x);
      case KD_UNARY_SIGN:
      case KD_UNARY_SGN: return (CT)((x > (CT)0) - (x < (CT)0));
      case KD_UNARY_EXP2: return kd_cm_exp2(x);
      case KD_UNARY_EXPM1: return kd_cm_expm1(x);
      case KD_UNARY_LOG2: return kd_cm_log2(x);
      case KD_UNARY_LOG10: return kd_cm_log10(x);
      case KD_UNARY_LOG1P: return kd_cm_log1p(x);
      case KD_UNARY_RSQRT: return (CT)1 / kd_cm_sqrt(x);
      case KD_UNARY_SQUARE: return x * x;
      case KD_UNARY_SIN: return kd_cm_sin(x);
      case KD_UNARY_COS: return kd_cm_cos(x);
      case KD_UNARY_TAN: return kd_cm_tan(x);
      case KD_UNARY_ASIN: return kd_cm_asin(x);
      case KD_UNARY_ACOS: return kd_cm_acos(x);
      case KD_UNARY_ATAN: return kd_cm_atan(x);
      case KD_UNARY_SINH: return kd_cm_sinh(x);
      case KD_UNARY_COSH: return kd_cm_cosh(x);
      case KD_UNARY_ASINH: return kd_cm_asinh(x);
      case KD_UNARY_ACOSH: return kd_cm_acosh(x);
      case KD_UNARY_ATANH: return kd_cm_atanh(x);
      case KD_UNARY_ERF: return kd_cm_erf(x);
      case KD_UNARY_ERFC: return kd_cm_erfc(x);
      case KD_UNARY_ERFINV: return kd_cm_erfinv(x);
      case KD_UNARY_FLOOR: return kd_cm_floor(x);
      case KD_UNARY_CEIL: return kd_cm_ceil(x);
      case KD_UNARY_ROUND: return kd_cm_nearbyint(x);
      case KD_UNARY_TRUNC: return kd_cm_trunc(x);
      case KD_UX_ROUND_DEC: {
        const CT tp = kd_cu_rnd<T>(p0);
        if (p1 != (CT)0) return kd_cm_nearbyint(kd_cu_rnd<T>(x / tp)) * tp;
        return kd_cm_nearbyint(kd_cu_rnd<T>(x * tp)) / tp;
      }
      case KD_UNARY_FRAC: return x - kd_cm_trunc(x);
      case KD_UNARY_RECIPROCAL: return (CT)1 / x;
      case KD_UNARY_NAN_TO_NUM: return x != x ? p0 : (x == (CT)INFINITY ? p1 : (x == -(CT)INFINITY ? p2 : x));
      case KD_UNARY_ISNAN: return (CT)(x != x);
      case KD_UNARY_ISINF: return (CT)(kd_cm_fabs(x) == (CT)INFINITY);
      case KD_UNARY_ISFINITE: return (CT)(kd_cm_fabs(x) < (CT)INFINITY);
      case KD_UNARY_ISPOSINF: return (CT)(x == (CT)INFINITY);
      case KD_UNARY_ISNEGINF: return (CT)(x == -(CT)INFINITY);
      case KD_UNARY_LOGSIGMOID: return (x < (CT)0 ? x : (CT)0) - kd_cm_log1p(kd_cm_exp(-kd_cm_fabs(x)));
      case KD_UNARY_RELU6:
      case KD_UNARY_HARDTANH: return kd_cu_clamp(x, p0, p1);
      case KD_UNARY_LEAKY_RELU: return x > (CT)0 ? x : x * p0;
      case KD_UNARY_ELU:
      case KD_UNARY_SELU: return x <= (CT)0 ? kd_cm_expm1(x) * p0 : x * p1;
      case KD_UNARY_GELU: return x * (CT)0.5 * ((CT)1 + kd_cm_erf(x * (CT)0.70710678118654752));
      case KD_UX_GELU_TANH:
        return (CT)0.5 * x * ((CT)1 + kd_cm_tanh((CT)0.7978845608028654 * (x + (CT)0.044715 * x * x * x)));
      case KD_UNARY_SILU: return x / ((CT)1 + kd_cm_exp(-x));
      case KD_UNARY_MISH: return x * kd_cm_tanh(kd_cm_log1p(kd_cm_exp(x)));
      case KD_UNARY_SOFTPLUS: return x * p0 > p1 ? x : kd_cm_log1p(kd_cm_exp(x * p0)) / p0;
      case KD_UNARY_HARDSIGMOID: return kd_cu_clamp(x + (CT)3, (CT)0, (CT)6) / (CT)6;
      case KD_UNARY_HARDSWISH: return x * kd_cu_clamp(x + (CT)3, (CT)0, (CT)6) / (CT)6;
      default: return x;
    }
  }
};

/* Integer and bool inputs (as int64; stores wrap to the width). */
struct kd_cu_unary_i {
  int code;
  int64_t lo, hi;
  __device__ __forceinline__ int64_t operator()(int64_t x, int64_t, int64_t) const {
    switch (code) {
      case KD_UNARY_NEG: return (int64_t)(0ull - (uint64_t)x);
      case KD_UNARY_ABS: return x < 0 ? (int64_t)(0ull - (uint64_t)x) : x;
      case KD_UNARY_RELU: return x < 0 ? 0 : x;
      case KD_UNARY_SIGN:
      case KD_UNARY_SGN: return (x > 0) - (x < 0);
      case KD_UNARY_SQUARE: return (int64_t)((uint64_t)x * (uint64_t)x);
      case KD_UNARY_RELU6:
      case KD_UNARY_HARDTANH: return kd_cu_clamp<int64_t>(x, lo, hi);
      case KD_UNARY_ISNAN:
      case KD_UNARY_ISINF:
      case KD_UNARY_ISPOSINF:
      case KD_UNARY_ISNEGINF: return 0;
      case KD_UNARY_ISFINITE: return 1;
      default: return x; /* floor, ceil, round, trunc, nanToNum: the identity */
    }
  }
};

static bool kd_cu_unary_is_test(int code) {
  return code == KD_UNARY_ISNAN || code == KD_UNARY_ISINF || code == KD_UNARY_ISFINITE || code == KD_UNARY_ISPOSINF ||
         code == KD_UNARY_ISNEGINF;
}

template <typename T>
static kd_cuda_status kd_cu_unary_float(int device, const kd_cuda_ew *e, const kd_cu_iter<4> &it) {
  typedef typename kd_cu_ct<T>::type CT;
  kd_cu_unary_f<T, CT> f{e->code, (CT)e->p[0], (CT)e->p[1], (CT)e->p[2]};
  if (e->dtypes[0] == KD_DTYPE_BOOL) return kd_cu_pointwise<kd_cu_bool, T, kd_cu_none, kd_cu_none>(device, it, 1, f);
  return kd_cu_pointwise<T, T, kd_cu_none, kd_cu_none>(device, it, 1, f);
}

template <typename T>
static kd_cuda_status kd_cu_unary_int(int device, const kd_cuda_ew *e, const kd_cu_iter<4> &it) {
  kd_cu_unary_i f{e->code, kd_cu_f2i(e->p[0]), kd_cu_f2i(e->p[1])};
  if (e->dtypes[0] == KD_DTYPE_BOOL) return kd_cu_pointwise<kd_cu_bool, T, kd_cu_none, kd_cu_none>(device, it, 1, f);
  return kd_cu_pointwise<T, T, kd_cu_none, kd_cu_none>(device, it, 1, f);
}

kd_cuda_status kd_cu_unary(int device, const kd_cuda_ew *e, int32_t *flags) {
  (void)flags;
  kd_cu_iter<4> it;
  if (e->nops != 2 || !kd_cu_iter_from(e, &it)) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "unary: bad operands");
  const bool test = kd_cu_unary_is_test(e->code);
  if (e->dtypes[0] != (test ? (int32_t)KD_DTYPE_BOOL : e->dtypes[1]))
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "unary: output dtype %d for input dtype %d", (int)e->dtypes[0],
                       (int)e->dtypes[1]);
  switch (e->dtypes[1]) {
    case KD_DTYPE_F32: return kd_cu_unary_float<float>(device, e, it);
    case KD_DTYPE_F64: return kd_cu_unary_float<double>(device, e, it);
    case KD_DTYPE_F16: return kd_cu_unary_float<__half>(device, e, it);
    case KD_DTYPE_BF16: return kd_cu_unary_float<__nv_bfloat16>(device, e, it);
    case KD_DTYPE_I8: return kd_cu_unary_int<int8_t>(device, e, it);
    case KD_DTYPE_U8: return kd_cu_unary_int<uint8_t>(device, e, it);
    case KD_DTYPE_I16: return kd_cu_unary_int<int16_t>(device, e, it);
    case KD_DTYPE_I32: return kd_cu_unary_int<int32_t>(device, e, it);
    case KD_DTYPE_I64: return kd_cu_unary_int<int64_t>(device, e, it);
    case KD_DTYPE_BOOL: return kd_cu_unary_int<kd_cu_bool>(device, e, it);
    default: return kd_cu_not_supported("unary", e->dtypes[1]);
  }
}
