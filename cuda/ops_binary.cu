/* ops_binary.cu - CUDA pointwise binary ops (every KD_BINARY_* code and KD_BX_* variant of
 * src/cpu/binary.c: arithmetic with alpha, true/trunc/floor division, pow, comparisons,
 * remainder/fmod, atan2, hypot, maximum/minimum/fmax/fmin, isclose, logical and bitwise ops,
 * thresholdBackward),
 * plus where/maskedFill (moved as bits) and logical_not/bitwise_not. The host side is the CPU
 * kernel (Note [Device kernels through the CPU kernels] in src/ops/ew_codes.h): both inputs
 * arrive in the compute dtype, the output in it or bool. Integer division by zero raises the
 * device flag word, which the launcher reads back (ZeroDivisionError, as on the CPU). */
#include "iter.cuh"
#include "ops/ew_codes.h"
#include "ops/op_codes.gen.h"
#include "ops_math.cuh"

/* Python's floor division for floats, PyTorch's div_floor_floating (every step rounded to T). */
template <typename T, typename F>
__device__ __forceinline__ F kd_cu_fdiv_floor(F a, F b) {
  if (b == (F)0) return a / b;
  F mod = kd_cu_rnd<T>(kd_cm_fmod(a, b));
  F div = kd_cu_rnd<T>(kd_cu_rnd<T>(a - mod) / b);
  if (mod != (F)0 && (b < (F)0) != (mod < (F)0)) div = kd_cu_rnd<T>(div - (F)1);
  F fl;
  if (div != (F)0) {
    fl = kd_cm_floor(div);
    if (div - fl > (F)0.5) fl += (F)1;
  } else {
    fl = kd_cm_copysign((F)0, a / b);
  }
  return fl;
}

template <typename T, typename CT>
struct kd_cu_binary_f {
  int code;
  CT alpha;
  double rtol, atol;
  bool equal_nan;
  __device__ __forceinline__ CT operator()(CT a, CT b, int64_t) const {
    switch (code) {
      case KD_BX_ADD1: return a + b;
      case KD_BX_SUB1: return a - b;
      case KD_BINARY_ADD: return a + alpha * b;
      case KD_BINARY_SUB: return a - alpha * b;
      case KD_BINARY_MUL: return a * b;
      case KD_BINARY_DIV: return a / b;
      case KD_BINARY_EQ: return (CT)(a == b);
      case KD_BINARY_NE: return (CT)(a != b);
      case KD_BINARY_LT: return (CT)(a < b);
      case KD_BINARY_LE: return (CT)(a <= b);
      case KD_BINARY_GT: return (CT)(a > b);
      case KD_BINARY_GE: return (CT)(a >= b);
      case KD_BINARY_LOGICAL_AND: return (CT)((a != (CT)0) & (b != (CT)0));
      case KD_BINARY_LOGICAL_OR: return (CT)((a != (CT)0) | (b != (CT)0));
      case KD_BINARY_LOGICAL_XOR: return (CT)((a != (CT)0) ^ (b != (CT)0));
      case KD_BX_DIV_TRUNC: return kd_cm_trunc(kd_cu_rnd<T>(a / b));
      case KD_BX_DIV_FLOOR: return kd_cu_fdiv_floor<T>(a, b);
      case KD_BINARY_POW: return kd_cm_pow(a, b);
      case KD_BX_POW_SQUARE: return a * a;
      case KD_BX_POW_CUBE: return a * a * a;
      case KD_BX_POW_SQRT: return kd_cm_sqrt(a);
      case KD_BX_POW_RSQRT: return (CT)1 / kd_cm_sqrt(a);
      case KD_BX_POW_RECIP: return (CT)1 / a;
      case KD_BX_POW_RECIP_SQUARE: return (CT)1 / (a * a);
      case KD_BX_THRESHOLD_BW: return b <= alpha ? (CT)0 : a;
      case KD_BINARY_REMAINDER: {
        CT m = kd_cm_fmod(a, b);
        return (m != (CT)0 && ((b < (CT)0) != (m < (CT)0))) ? m + b : m;
      }
      case KD_BINARY_FMOD: return kd_cm_fmod(a, b);
      case KD_BINARY_ATAN2: return kd_cm_atan2(a, b);
      case KD_BINARY_HYPOT: return kd_cm_hypot(a, b);
      case KD_BINARY_MAXIMUM: return a != a ? a : b != b ? b : a > b ? a : b;
      case KD_BINARY_MINIMUM: return a != a ? a : b != b ? b : a < b ? a : b;
      case KD_BINARY_FMAX: return kd_cm_fmax(a, b);
      case KD_BINARY_FMIN: return kd_cm_fmin(a, b);
      case KD_BINARY_ISCLOSE: {
        if (a == b || (equal_nan && a != a && b != b)) return (CT)1;
        CT d = kd_cu_rnd<T>(kd_cm_fabs(a - b));
        CT tol = kd_cu_rnd<T>((CT)atol + kd_cu_rnd<T>(kd_cm_fabs((CT)rtol * b)));
        return (CT)(isfinite(d) && d <= tol);
      }
      default: return a;
    }
  }
};

__device__ __forceinline__ int64_t kd_cu_powi(int64_t a, int64_t b) {
  if (b < 0) {
    if (a == 1) return 1;
    if (a == -1) return (b & 1) ? -1 : 1;
    return 0;
  }
  uint64_t r = 1, x = (uint64_t)a;
  while (b) {
    if (b & 1) r *= x;
    b >>= 1;
    x *= x;
  }
  return (int64_t)r;
}

/* Integers and bool as int64 (bool: 0/1; add is or, mul is and after the != 0 store). */
struct kd_cu_binary_i {
  int code;
  int64_t alpha;
  double rtol, atol;
  int32_t *zero_div;
  __device__ __forceinline__ int64_t zdiv() const {
    *zero_div = 1;
    return 0;
  }
  __device__ __forceinline__ int64_t operator()(int64_t a, int64_t b, int64_t) const {
    const uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
    switch (code) {
      case KD_BX_ADD1: return (int64_t)(ua + ub);
      case KD_BX_SUB1: return (int64_t)(ua - ub);
      case KD_BINARY_ADD: return (int64_t)(ua + (uint64_t)alpha * ub);
      case KD_BINARY_SUB: return (int64_t)(ua - (uint64_t)alpha * ub);
      case KD_BINARY_MUL: return (int64_t)(ua * ub);
      case KD_BINARY_EQ: return a == b;
      case KD_BINARY_NE: return a != b;
      case KD_BINARY_LT: return a < b;
      case KD_BINARY_LE: return a <= b;
      case KD_BINARY_GT: return a > b;
      case KD_BINARY_GE: return a >= b;
      case KD_BINARY_LOGICAL_AND: return (a != 0) & (b != 0);
      case KD_BINARY_LOGICAL_OR: return (a != 0) | (b != 0);
      case KD_BINARY_LOGICAL_XOR: return (a != 0) ^ (b != 0);
      case KD_BX_DIV_TRUNC:
        if (b == 0) return zdiv();
        return b == -1 ? (int64_t)(0ull - ua) : a / b;
      case KD_BX_DIV_FLOOR: {
        if (b == 0) return zdiv();
        if (b == -1) return (int64_t)(0ull - ua);
        int64_t q = a / b, r = a % b;
        if (r != 0 && ((r < 0) != (b < 0))) q--;
        return q;
      }
      case KD_BINARY_POW: return kd_cu_powi(a, b);
      case KD_BINARY_REMAINDER: {
        if (b == 0) return zdiv();
        if (b == -1) return 0;
        int64_t r = a % b;
        return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
      }
      case KD_BINARY_FMOD:
        if (b == 0) return zdiv();
        return b == -1 ? 0 : a % b;
      case KD_BINARY_MAXIMUM:
      case KD_BINARY_FMAX: return a > b ? a : b;
      case KD_BINARY_MINIMUM:
      case KD_BINARY_FMIN: return a < b ? a : b;
      case KD_BINARY_BITWISE_AND: return a & b;
      case KD_BINARY_BITWISE_OR: return a | b;
      case KD_BINARY_BITWISE_XOR: return a ^ b;
      case KD_BX_THRESHOLD_BW: return b <= alpha ? 0 : a;
      case KD_BINARY_ISCLOSE: {
        if (a == b) return 1;
        float fa = (float)a, fb = (float)b;
        return fabsf(fa - fb) <= (float)atol + fabsf((float)rtol * fb);
      }
      default: return a;
    }
  }
};

static bool kd_cu_binary_bool_out(int code) {
  return (code >= KD_BINARY_EQ && code <= KD_BINARY_GE) || code == KD_BINARY_LOGICAL_AND ||
         code == KD_BINARY_LOGICAL_OR || code == KD_BINARY_LOGICAL_XOR || code == KD_BINARY_ISCLOSE;
}
static bool kd_cu_binary_may_raise(int code) {
  return code == KD_BX_DIV_TRUNC || code == KD_BX_DIV_FLOOR || code == KD_BINARY_REMAINDER || code == KD_BINARY_FMOD;
}

/* Hot float codes get their own functor (no code switch in the loop). */
template <typename CT>
struct kd_cu_add_f {
  CT alpha;
  __device__ __forceinline__ CT operator()(CT a, CT b, int64_t) const { return a + alpha * b; }
};
template <typename CT>
struct kd_cu_mul_f {
  __device__ __forceinline__ CT operator()(CT a, CT b, int64_t) const { return a * b; }
};
template <typename CT>
struct kd_cu_div_f {
  __device__ __forceinline__ CT operator()(CT a, CT b, int64_t) const { return a / b; }
};

template <typename T>
static kd_cuda_status kd_cu_binary_float(int device, const kd_cuda_ew *e, const kd_cu_iter<4> &it) {
  typedef typename kd_cu_ct<T>::type CT;
  if (kd_cu_binary_bool_out(e->code)) {
    kd_cu_binary_f<T, CT> f{e->code, (CT)e->p[0], e->p[1], e->p[2], e->ip[1] != 0};
    return kd_cu_pointwise<kd_cu_bool, T, T, kd_cu_none>(device, it, 2, f);
  }
  switch (e->code) {
    case KD_BX_ADD1: return kd_cu_pointwise<T, T, T, kd_cu_none>(device, it, 2, kd_cu_add_f<CT>{(CT)1});
    case KD_BX_SUB1: return kd_cu_pointwise<T, T, T, kd_cu_none>(device, it, 2, kd_cu_add_f<CT>{(CT)-1});
    case KD_BINARY_MUL: return kd_cu_pointwise<T, T, T, kd_cu_none>(device, it, 2, kd_cu_mul_f<CT>{});
    case KD_BINARY_DIV: return kd_cu_pointwise<T, T, T, kd_cu_none>(device, it, 2, kd_cu_div_f<CT>{});
    default: {
      kd_cu_binary_f<T, CT> f{e->code, (CT)e->p[0], e->p[1], e->p[2], e->ip[1] != 0};
      return kd_cu_pointwise<T, T, T, kd_cu_none>(device, it, 2, f);
    }
  }
}

template <typename T>
static kd_cuda_status kd_cu_binary_int(int device, const kd_cuda_ew *e, const kd_cu_iter<4> &it, int32_t *flags) {
  const bool raise = kd_cu_binary_may_raise(e->code);
  int32_t *zflag = NULL;
  if (raise) KD_CU_TRY(kd_cu_flags_reset(device, &zflag));
  kd_cu_binary_i f{e->code, e->ip[0], e->p[1], e->p[2], zflag};
  if (kd_cu_binary_bool_out(e->code)) KD_CU_TRY((kd_cu_pointwise<kd_cu_bool, T, T, kd_cu_none>(device, it, 2, f)));
  else KD_CU_TRY((kd_cu_pointwise<T, T, T, kd_cu_none>(device, it, 2, f)));
  if (raise) {
    int32_t z = 0;
    KD_CU_TRY(kd_cu_flags_read(device, zflag, &z));
    if (z) *flags |= KD_EW_FLAG_ZERO_DIV;
  }
  return KD_CUDA_OK;
}

/* ---- where: out = cond ? x : y, by element size ---- */
template <typename U>
struct kd_cu_where_f {
  __device__ __forceinline__ int64_t operator()(int64_t c, int64_t x, int64_t y) const { return c ? x : y; }
};
template <typename U>
static kd_cuda_status kd_cu_where_n(int device, const kd_cu_iter<4> &it) {
  /* U (a signed word) moved through int64 compute values: sign-extended and wrapped back, exact */
  return kd_cu_pointwise<U, uint8_t, U, U>(device, it, 3, kd_cu_where_f<U>{});
}

/* ---- logical_not (any dtype -> bool) and bitwise_not (integers, bool) ---- */
struct kd_cu_lnot_f {
  template <typename CT>
  __device__ __forceinline__ int64_t operator()(CT x, int64_t, int64_t) const { return x == (CT)0; }
};
struct kd_cu_bnot_f {
  bool is_bool;
  __device__ __forceinline__ int64_t operator()(int64_t x, int64_t, int64_t) const { return is_bool ? !x : ~x; }
};

#define KD_CU_SWITCH_DTYPE(dt, CALL, what)                                                    \
  switch (dt) {                                                                               \
    case KD_DTYPE_F32: { typedef float T; return CALL; }                                      \
    case KD_DTYPE_F64: { typedef double T; return CALL; }                                     \
    case KD_DTYPE_F16: { typedef __half T; return CALL; }                                     \
    case KD_DTYPE_BF16: { typedef __nv_bfloat16 T; return CALL; }                             \
    case KD_DTYPE_I8: { typedef int8_t T; return CALL; }                                      \
    case KD_DTYPE_U8: { typedef uint8_t T; return CALL; }                                     \
    case KD_DTYPE_I16: { typedef int16_t T; return CALL; }                                    \
    case KD_DTYPE_I32: { typedef int32_t T; return CALL; }                                    \
    case KD_DTYPE_I64: { typedef int64_t T; return CALL; }                                    \
    case KD_DTYPE_BOOL: { typedef kd_cu_bool T; return CALL; }                                \
    default: return kd_cu_not_supported(what, dt);                                            \
  }

static kd_cuda_status kd_cu_where(int device, const kd_cuda_ew *e, const kd_cu_iter<4> &it) {
  if (e->nops != 4 || kd_cu_dtype_size(e->dtypes[1]) != 1 || e->dtypes[2] != e->dtypes[0] || e->dtypes[3] != e->dtypes[0])
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "where: bad operands");
  switch (kd_cu_dtype_size(e->dtypes[0])) {
    case 1: return kd_cu_where_n<int8_t>(device, it);
    case 2: return kd_cu_where_n<int16_t>(device, it);
    case 4: return kd_cu_where_n<int32_t>(device, it);
    default: return kd_cu_where_n<int64_t>(device, it);
  }
}

static kd_cuda_status kd_cu_not(int device, const kd_cuda_ew *e, const kd_cu_iter<4> &it) {
  if (e->nops != 2) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "not: bad operands");
  if (e->family == KD_EW_LOGICAL_NOT) {
    if (e->dtypes[0] != KD_DTYPE_BOOL) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "logical_not: bool output expected");
    KD_CU_SWITCH_DTYPE(e->dtypes[1], (kd_cu_pointwise<kd_cu_bool, T, kd_cu_none, kd_cu_none>(device, it, 1, kd_cu_lnot_f{})),
                       "logical_not")
  }
  if (e->dtypes[0] != e->dtypes[1]) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "bitwise_not: dtypes differ");
  kd_cu_bnot_f f{e->dtypes[1] == KD_DTYPE_BOOL};
  switch (e->dtypes[1]) {
    case KD_DTYPE_I8: return kd_cu_pointwise<int8_t, int8_t, kd_cu_none, kd_cu_none>(device, it, 1, f);
    case KD_DTYPE_U8: return kd_cu_pointwise<uint8_t, uint8_t, kd_cu_none, kd_cu_none>(device, it, 1, f);
    case KD_DTYPE_I16: return kd_cu_pointwise<int16_t, int16_t, kd_cu_none, kd_cu_none>(device, it, 1, f);
    case KD_DTYPE_I32: return kd_cu_pointwise<int32_t, int32_t, kd_cu_none, kd_cu_none>(device, it, 1, f);
    case KD_DTYPE_I64: return kd_cu_pointwise<int64_t, int64_t, kd_cu_none, kd_cu_none>(device, it, 1, f);
    case KD_DTYPE_BOOL: return kd_cu_pointwise<kd_cu_bool, kd_cu_bool, kd_cu_none, kd_cu_none>(device, it, 1, f);
    default: return kd_cu_not_supported("bitwise_not", e->dtypes[1]);
  }
}

kd_cuda_status kd_cu_binary(int device, const kd_cuda_ew *e, int32_t *flags) {
  kd_cu_iter<4> it;
  if (!kd_cu_iter_from(e, &it)) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "binary: bad operands");
  if (e->family == KD_EW_WHERE) return kd_cu_where(device, e, it);
  if (e->family != KD_EW_BINARY) return kd_cu_not(device, e, it);
  if (e->nops != 3 || e->dtypes[1] != e->dtypes[2] ||
      e->dtypes[0] != (kd_cu_binary_bool_out(e->code) ? (int32_t)KD_DTYPE_BOOL : e->dtypes[1]))
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "binary: operand dtypes %d, %d -> %d", (int)e->dtypes[1],
                       (int)e->dtypes[2], (int)e->dtypes[0]);
  switch (e->dtypes[1]) {
    case KD_DTYPE_F32: return kd_cu_binary_float<float>(device, e, it);
    case KD_DTYPE_F64: return kd_cu_binary_float<double>(device, e, it);
    case KD_DTYPE_F16: return kd_cu_binary_float<__half>(device, e, it);
    case KD_DTYPE_BF16: return kd_cu_binary_float<__nv_bfloat16>(device, e, it);
    case KD_DTYPE_I8: return kd_cu_binary_int<int8_t>(device, e, it, flags);
    case KD_DTYPE_U8: return kd_cu_binary_int<uint8_t>(device, e, it, flags);
    case KD_DTYPE_I16: return kd_cu_binary_int<int16_t>(device, e, it, flags);
    case KD_DTYPE_I32: return kd_cu_binary_int<int32_t>(device, e, it, flags);
    case KD_DTYPE_I64: return kd_cu_binary_int<int64_t>(device, e, it, flags);
    case KD_DTYPE_BOOL: return kd_cu_binary_int<kd_cu_bool>(device, e, it, flags);
    default: return kd_cu_not_supported("binary", e->dtypes[1]);
  }
}
