/* unary.c - CPU pointwise unary ops and their in-place forms: neg, abs, exp, log, sqrt, relu,
 * sigmoid, tanh, the unary math of oplist/unary.js (sign, exp2..erfinv, trig, rounding, frac,
 * reciprocal, nanToNum, isnan..isneginf) and the activations (relu6, leakyRelu, elu, selu, gelu,
 * silu, mish, softplus, hardtanh, hardsigmoid, hardswish, logsigmoid). One loop per dtype
 * switching on the KD_UNARY_* code; ops with parameters read them from kd_unary_ctx.
 * Dtypes as PyTorch: transcendental ops of integer or bool inputs compute in float32 (the
 * default dtype); activations (but relu/relu6/hardtanh) and frac refuse integers with PyTorch's
 * "not implemented" message; floor/ceil/round/trunc/nanToNum leave integers unchanged; square of
 * bool is int64; isnan..isneginf give bool. float16/bfloat16 compute in float32 (the row's CT).
 * Transcendentals go through unary_math.h so float32/float64 contiguous loops vectorize. */
#include "cpu/cpu_loops.h"
#include "cpu/unary_math.h"
#include "ops/ew_codes.h"

#include <float.h>

/* Codes beyond the op list's (KD_UX_*): src/ops/ew_codes.h. */

typedef struct kd_unary_ctx {
  int code;
  double p0, p1, p2; /* parameters: see kd_cpu_unary */
} kd_unary_ctx;

#define KD_GELU_TANH(x, CT, MS)                                                               \
  ((CT)0.5 * (x) * ((CT)1 + kd_vm_tanh##MS((CT)0.7978845608028654 * ((x) + (CT)0.044715 * (x) * (x) * (x)))))
/* clamp as PyTorch's clamp(x, lo, hi): hi wins when lo > hi; NaN propagates */
#define KD_CLAMP(x, lo, hi) ((((x) < (lo)) ? (lo) : (x)) > (hi) ? (hi) : (((x) < (lo)) ? (lo) : (x)))

/* Floating cases; `x` is the CT input, c the context; RND rounds to the storage type (the
 * intermediate roundings of PyTorch's bfloat16/half arithmetic in round(decimals)). */
#define KD_UNARY_CASES_F(T, CT, LD, ST, MS, UT, c)                                            \
  case KD_UNARY_NEG: KD_LOOP1(T, T, CT, LD, ST, -x); break;                                   \
  case KD_UNARY_ABS: KD_LOOP1(T, T, CT, LD, ST, fabs##MS(x)); break;                          \
  case KD_UNARY_EXP: KD_LOOP1(T, T, CT, LD, ST, kd_vm_exp##MS(x)); break;                     \
  case KD_UNARY_LOG: KD_LOOP1(T, T, CT, LD, ST, kd_vm_log##MS(x)); break;                     \
  case KD_UNARY_SQRT: KD_LOOP1(T, T, CT, LD, ST, sqrt##MS(x)); break;                         \
  case KD_UNARY_RELU: KD_LOOP1(T, T, CT, LD, ST, x < (CT)0 ? (CT)0 : x); break;               \
  case KD_UNARY_SIGMOID: KD_LOOP1(T, T, CT, LD, ST, (CT)1 / ((CT)1 + kd_vm_exp##MS(-x))); break; \
  case KD_UNARY_TANH: KD_LOOP1(T, T, CT, LD, ST, kd_vm_tanh##MS(x)); break;                   \
  case KD_UNARY_SIGN:                                                                         \
  case KD_UNARY_SGN: KD_LOOP1(T, T, CT, LD, ST, (CT)((x > (CT)0) - (x < (CT)0))); break;      \
  case KD_UNARY_EXP2: KD_LOOP1(T, T, CT, LD, ST, kd_vm_exp2##MS(x)); break;                   \
  case KD_UNARY_EXPM1: KD_LOOP1(T, T, CT, LD, ST, kd_vm_expm1##MS(x)); break;                 \
  case KD_UNARY_LOG2: KD_LOOP1(T, T, CT, LD, ST, kd_vm_log2##MS(x)); break;                   \
  case KD_UNARY_LOG10: KD_LOOP1(T, T, CT, LD, ST, kd_vm_log10##MS(x)); break;                 \
  case KD_UNARY_LOG1P: KD_LOOP1(T, T, CT, LD, ST, kd_vm_log1p##MS(x)); break;                 \
  case KD_UNARY_RSQRT: KD_LOOP1(T, T, CT, LD, ST, (CT)1 / sqrt##MS(x)); break;                \
  case KD_UNARY_SQUARE: KD_LOOP1(T, T, CT, LD, ST, x * x); break;                             \
  case KD_UNARY_SIN: KD_LOOP1(T, T, CT, LD, ST, kd_vm_sin##MS(x)); break;                     \
  case KD_UNARY_COS: KD_LOOP1(T, T, CT, LD, ST, kd_vm_cos##MS(x)); break;                     \
  case KD_UNARY_TAN: KD_LOOP1(T, T, CT, LD, ST, kd_vm_tan##MS(x)); break;                     \
  case KD_UNARY_ASIN: KD_LOOP1(T, T, CT, LD, ST, kd_vm_asin##MS(x)); break;                   \
  case KD_UNARY_ACOS: KD_LOOP1(T, T, CT, LD, ST, kd_vm_acos##MS(x)); break;                   \
  case KD_UNARY_ATAN: KD_LOOP1(T, T, CT, LD, ST, kd_vm_atan##MS(x)); break;                   \
  case KD_UNARY_SINH: KD_LOOP1(T, T, CT, LD, ST, kd_vm_sinh##MS(x)); break;                   \
  case KD_UNARY_COSH: KD_LOOP1(T, T, CT, LD, ST, kd_vm_cosh##MS(x)); break;                   \
  case KD_UNARY_ASINH: KD_LOOP1(T, T, CT, LD, ST, kd_vm_asinh##MS(x)); break;                 \
  case KD_UNARY_ACOSH: KD_LOOP1(T, T, CT, LD, ST, kd_vm_acosh##MS(x)); break;                 \
  case KD_UNARY_ATANH: KD_LOOP1(T, T, CT, LD, ST, kd_vm_atanh##MS(x)); break;                 \
  case KD_UNARY_ERF: KD_LOOP1(T, T, CT, LD, ST, kd_vm_erf##MS(x)); break;                     \
  case KD_UNARY_ERFC: KD_LOOP1(T, T, CT, LD, ST, kd_vm_erfc##MS(x)); break;                   \
  case KD_UNARY_ERFINV: KD_LOOP1(T, T, CT, LD, ST, (CT)kd_erfinv((double)x)); break;          \
  case KD_UNARY_FLOOR: KD_LOOP1(T, T, CT, LD, ST, floor##MS(x)); break;                       \
  case KD_UNARY_CEIL: KD_LOOP1(T, T, CT, LD, ST, ceil##MS(x)); break;                         \
  case KD_UNARY_ROUND: KD_LOOP1(T, T, CT, LD, ST, nearbyint##MS(x)); break;                   \
  case KD_UNARY_TRUNC: KD_LOOP1(T, T, CT, LD, ST, trunc##MS(x)); break;                       \
  case KD_UX_ROUND_DEC: {                                                                     \
    const CT tp = LD(ST((CT)(c)->p0));                                                        \
    if ((c)->p1 != 0) KD_LOOP1(T, T, CT, LD, ST, nearbyint##MS(LD(ST(x / tp))) * tp);         \
    else KD_LOOP1(T, T, CT, LD, ST, nearbyint##MS(LD(ST(x * tp))) / tp);                      \
    break;                                                                                    \
  }                                                                                           \
  case KD_UNARY_FRAC: KD_LOOP1(T, T, CT, LD, ST, x - trunc##MS(x)); break;                    \
  case KD_UNARY_RECIPROCAL: KD_LOOP1(T, T, CT, LD, ST, (CT)1 / x); break;                     \
  case KD_UNARY_NAN_TO_NUM: {                                                                 \
    const CT nn = (CT)(c)->p0, pi = (CT)(c)->p1, ni = (CT)(c)->p2;                            \
    KD_LOOP1(T, T, CT, LD, ST, x != x ? nn : (x == (CT)INFINITY ? pi : (x == -(CT)INFINITY ? ni : x))); \
    break;                                                                                    \
  }                                                                                           \
  case KD_UNARY_ISNAN: KD_LOOP1(uint8_t, T, CT, LD, KD_ST_ID, (uint8_t)(x != x)); break;      \
  case KD_UNARY_ISINF: KD_LOOP1(uint8_t, T, CT, LD, KD_ST_ID, (uint8_t)(fabs##MS(x) == (CT)INFINITY)); break; \
  case KD_UNARY_ISFINITE: KD_LOOP1(uint8_t, T, CT, LD, KD_ST_ID, (uint8_t)(fabs##MS(x) < (CT)INFINITY)); break; \
  case KD_UNARY_ISPOSINF: KD_LOOP1(uint8_t, T, CT, LD, KD_ST_ID, (uint8_t)(x == (CT)INFINITY)); break; \
  case KD_UNARY_ISNEGINF: KD_LOOP1(uint8_t, T, CT, LD, KD_ST_ID, (uint8_t)(x == -(CT)INFINITY)); break; \
  case KD_UNARY_LOGSIGMOID:                                                                   \
    KD_LOOP1(T, T, CT, LD, ST, (x < (CT)0 ? x : (CT)0) - kd_vm_log1p##MS(kd_vm_exp##MS(-fabs##MS(x)))); \
    break;                                                                                    \
  case KD_UNARY_RELU6:                                                                        \
  case KD_UNARY_HARDTANH: {                                                                   \
    const CT lo = (CT)(c)->p0, hi = (CT)(c)->p1;                                              \
    KD_LOOP1(T, T, CT, LD, ST, KD_CLAMP(x, lo, hi));                                          \
    break;                                                                                    \
  }                                                                                           \
  case KD_UNARY_LEAKY_RELU: {                                                                 \
    const CT s = (CT)(c)->p0;                                                                 \
    KD_LOOP1(T, T, CT, LD, ST, x > (CT)0 ? x : x * s);                                        \
    break;                                                                                    \
  }                                                                                           \
  case KD_UNARY_ELU:                                                                          \
  case KD_UNARY_SELU: {                                                                       \
    const CT neg = (CT)(c)->p0, pos = (CT)(c)->p1;                                            \
    /* branch-free: expm1 of min(x, 0) always, then a bit blend, so the loop vectorizes */    \
    KD_LOOP1(T, T, CT, LD, ST, ({ const CT e_ = kd_vm_expm1##MS(x < (CT)0 ? x : (CT)0);        \
                                  kd_vm_sel##MS(x <= (CT)0, e_ * neg, x * pos); }));           \
    break;                                                                                    \
  }                                                                                           \
  case KD_UNARY_GELU:                                                                         \
    KD_LOOP1(T, T, CT, LD, ST, x * (CT)0.5 * ((CT)1 + kd_vm_erf##MS(x * (CT)0.70710678118654752))); \
    break;                                                                                    \
  case KD_UX_GELU_TANH: KD_LOOP1(T, T, CT, LD, ST, KD_GELU_TANH(x, CT, MS)); break;           \
  case KD_UNARY_SILU: KD_LOOP1(T, T, CT, LD, ST, x / ((CT)1 + kd_vm_exp##MS(-x))); break;     \
  case KD_UNARY_MISH: KD_LOOP1(T, T, CT, LD, ST, x * kd_vm_tanh##MS(kd_vm_log1p##MS(kd_vm_exp##MS(x)))); break; \
  case KD_UNARY_SOFTPLUS: {                                                                   \
    const CT beta = (CT)(c)->p0, th = (CT)(c)->p1;                                            \
    /* branch-free as elu: the log1p(exp()) of min(x * beta, th) always, then a select */    \
    KD_LOOP1(T, T, CT, LD, ST, ({ const CT xb_ = x * beta;                                    \
                                  const CT s_ = kd_vm_log1p##MS(kd_vm_exp##MS(xb_ > th ? th : xb_)) / beta; \
                                  kd_vm_sel##MS(xb_ > th, x, s_); }));                        \
    break;                                                                                    \
  }                                                                                           \
  case KD_UNARY_HARDSIGMOID:                                                                  \
    KD_LOOP1(T, T, CT, LD, ST, KD_CLAMP(x + (CT)3, (CT)0, (CT)6) / (CT)6);                    \
    break;                                                                                    \
  case KD_UNARY_HARDSWISH:                                                                    \
    KD_LOOP1(T, T, CT, LD, ST, x * KD_CLAMP(x + (CT)3, (CT)0, (CT)6) / (CT)6);                \
    break;

/* Integer cases: wrapping arithmetic in UT; rounding and nanToNum are the identity. */
#define KD_UNARY_CASES_I(T, CT, LD, ST, MS, UT, c)                                            \
  case KD_UNARY_NEG: KD_LOOP1(T, T, CT, LD, ST, (CT)((UT)0 - (UT)x)); break;                  \
  case KD_UNARY_ABS: KD_LOOP1(T, T, CT, LD, ST, KD_IS_NEG(x) ? (CT)((UT)0 - (UT)x) : x); break; \
  case KD_UNARY_RELU: KD_LOOP1(T, T, CT, LD, ST, KD_IS_NEG(x) ? (CT)0 : x); break;            \
  case KD_UNARY_SIGN:                                                                         \
  case KD_UNARY_SGN: KD_LOOP1(T, T, CT, LD, ST, (CT)((x > 0) - KD_IS_NEG(x))); break;         \
  case KD_UNARY_SQUARE: KD_LOOP1(T, T, CT, LD, ST, (CT)((UT)x * (UT)x)); break;               \
  case KD_UNARY_FLOOR:                                                                        \
  case KD_UNARY_CEIL:                                                                         \
  case KD_UNARY_ROUND:                                                                        \
  case KD_UNARY_TRUNC:                                                                        \
  case KD_UNARY_NAN_TO_NUM: KD_LOOP1(T, T, CT, LD, ST, x); break;                             \
  case KD_UNARY_RELU6:                                                                        \
  case KD_UNARY_HARDTANH: {                                                                   \
    const int64_t lo = kd_cpu_f2i((c)->p0), hi = kd_cpu_f2i((c)->p1);                         \
    KD_LOOP1(T, T, CT, LD, ST, (CT)KD_CLAMP((int64_t)x, lo, hi));                             \
    break;                                                                                    \
  }                                                                                           \
  KD_UNARY_CASES_TESTS(T, CT, LD)

/* isnan..isneginf of integers and bools: constant */
#define KD_UNARY_CASES_TESTS(T, CT, LD)                                                       \
  case KD_UNARY_ISNAN:                                                                        \
  case KD_UNARY_ISINF:                                                                        \
  case KD_UNARY_ISPOSINF:                                                                     \
  case KD_UNARY_ISNEGINF: KD_LOOP1(uint8_t, T, CT, LD, KD_ST_ID, ((void)x, (uint8_t)0)); break; \
  case KD_UNARY_ISFINITE: KD_LOOP1(uint8_t, T, CT, LD, KD_ST_ID, ((void)x, (uint8_t)1)); break;

#define KD_UNARY_CASES_B(T, CT, LD, ST, MS, UT, c)                                            \
  case KD_UNARY_SIGN:                                                                         \
  case KD_UNARY_SGN:                                                                          \
  case KD_UNARY_NAN_TO_NUM: KD_LOOP1(T, T, CT, LD, ST, x); break;                             \
  KD_UNARY_CASES_TESTS(T, CT, LD)

#define KD_DEF_UNARY(SFX, DT, T, CT, LD, ST, MS, K, UT)                                       \
  static void kd_unary_loop_##SFX(void *ctx, char **data, const int64_t *strides, int64_t n) { \
    const kd_unary_ctx *c_ = (const kd_unary_ctx *)ctx;                                       \
    switch (c_->code) {                                                                       \
      KD_UNARY_CASES_##K(T, CT, LD, ST, MS, UT, c_)                                           \
      default: break;                                                                         \
    }                                                                                         \
  }
KD_ROWS_ALL(KD_DEF_UNARY)
#define KD_UNARY_ENTRY(SFX, DT, ...) KD_LOOP_ENTRY(kd_unary_loop_, SFX, DT)
static const kd_iter_loop_fn kd_unary_loops[KD_DTYPE_COUNT] = {KD_ROWS_ALL(KD_UNARY_ENTRY)};

/* How an op treats dtypes. */
typedef enum {
  KD_UCLS_KEEP,       /* result dtype = self's (integers and bool where the cases allow) */
  KD_UCLS_TO_FLOAT,   /* integers and bool compute in float32 */
  KD_UCLS_FLOAT_ONLY, /* integers and bool: PyTorch's "not implemented" */
  KD_UCLS_TEST,       /* bool result */
} kd_unary_class;

/* The class of a code and, for "not implemented" messages, PyTorch's kernel name. */
static kd_unary_class kd_unary_class_of(int code, const char **name) {
  *name = NULL;
  switch (code) {
    case KD_UNARY_EXP: case KD_UNARY_LOG: case KD_UNARY_SQRT: case KD_UNARY_SIGMOID: case KD_UNARY_TANH:
    case KD_UNARY_EXP2: case KD_UNARY_EXPM1: case KD_UNARY_LOG2: case KD_UNARY_LOG10: case KD_UNARY_LOG1P:
    case KD_UNARY_RSQRT: case KD_UNARY_SIN: case KD_UNARY_COS: case KD_UNARY_TAN: case KD_UNARY_ASIN:
    case KD_UNARY_ACOS: case KD_UNARY_ATAN: case KD_UNARY_SINH: case KD_UNARY_COSH: case KD_UNARY_ASINH:
    case KD_UNARY_ACOSH: case KD_UNARY_ATANH: case KD_UNARY_ERF: case KD_UNARY_ERFC: case KD_UNARY_ERFINV:
    case KD_UNARY_RECIPROCAL:
      return KD_UCLS_TO_FLOAT;
    case KD_UNARY_ISNAN: case KD_UNARY_ISINF: case KD_UNARY_ISFINITE: case KD_UNARY_ISPOSINF:
    case KD_UNARY_ISNEGINF:
      return KD_UCLS_TEST;
    case KD_UNARY_LOGSIGMOID: *name = "log_sigmoid_cpu"; return KD_UCLS_FLOAT_ONLY;
    case KD_UNARY_LEAKY_RELU: *name = "leaky_relu_cpu"; return KD_UCLS_FLOAT_ONLY;
    case KD_UNARY_ELU: case KD_UNARY_SELU: *name = "elu_cpu"; return KD_UCLS_FLOAT_ONLY;
    case KD_UNARY_GELU: case KD_UX_GELU_TANH: *name = "GeluKernelImpl"; return KD_UCLS_FLOAT_ONLY;
    case KD_UNARY_SILU: *name = "silu_cpu"; return KD_UCLS_FLOAT_ONLY;
    case KD_UNARY_MISH: *name = "mish_cpu"; return KD_UCLS_FLOAT_ONLY;
    case KD_UNARY_SOFTPLUS: *name = "softplus_cpu"; return KD_UCLS_FLOAT_ONLY;
    case KD_UNARY_HARDSIGMOID: *name = "hardsigmoid_cpu"; return KD_UCLS_FLOAT_ONLY;
    case KD_UNARY_HARDSWISH: *name = "hardswish_cpu"; return KD_UCLS_FLOAT_ONLY;
    case KD_UNARY_FRAC: *name = "frac_cpu"; return KD_UCLS_FLOAT_ONLY;
    case KD_UX_ROUND_DEC: *name = "round_cpu"; return KD_UCLS_FLOAT_ONLY;
    case KD_UNARY_FLOOR: *name = "floor_vml_cpu"; return KD_UCLS_KEEP;
    case KD_UNARY_CEIL: *name = "ceil_vml_cpu"; return KD_UCLS_KEEP;
    case KD_UNARY_ROUND: *name = "round_vml_cpu"; return KD_UCLS_KEEP;
    case KD_UNARY_TRUNC: *name = "trunc_vml_cpu"; return KD_UCLS_KEEP;
    default: return KD_UCLS_KEEP;
  }
}

/* The largest finite value of a floating dtype (nanToNum's default posinf). */
static double kd_unary_float_max(kd_dtype t) {
  switch (t) {
    case KD_DTYPE_F64: return DBL_MAX;
    case KD_DTYPE_F16: return 65504.0;
    case KD_DTYPE_BF16: return 3.3895313892515355e38;
    default: return FLT_MAX;
  }
}

/* Reads the op's parameters into c (and picks the code variant); checks their values. */
static kd_status kd_unary_params(const kd_op_info *op, const kd_value *args, kd_dtype dt, kd_unary_ctx *c) {
  c->code = op->code;
  c->p0 = c->p1 = c->p2 = 0;
  switch (op->code) {
    case KD_UNARY_ROUND: {
      int64_t dec = args[1].v.i;
      if (dec != 0) {
        c->code = KD_UX_ROUND_DEC;
        c->p1 = dec < 0;
        c->p0 = pow(10.0, fabs((double)dec)); /* -dec would overflow for INT64_MIN */
      }
      break;
    }
    case KD_UNARY_NAN_TO_NUM: {
      double mx = kd_unary_float_max(dt);
      c->p0 = args[1].kind == KD_VALUE_DOUBLE ? args[1].v.d : 0.0;
      c->p1 = args[2].kind == KD_VALUE_DOUBLE ? args[2].v.d : mx;
      c->p2 = args[3].kind == KD_VALUE_DOUBLE ? args[3].v.d : -mx;
      break;
    }
    case KD_UNARY_RELU6: c->p0 = 0; c->p1 = 6; break;
    case KD_UNARY_HARDTANH: c->p0 = args[1].v.d; c->p1 = args[2].v.d; break;
    case KD_UNARY_LEAKY_RELU: c->p0 = args[1].v.d; break;
    case KD_UNARY_ELU: c->p0 = args[1].v.d; c->p1 = 1; break; /* alpha * scale, scale */
    case KD_UNARY_SELU: c->p0 = 1.6732632423543772848170429916717 * 1.0507009873554804934193349852946;
      c->p1 = 1.0507009873554804934193349852946; break;
    case KD_UNARY_SOFTPLUS: c->p0 = args[1].v.d; c->p1 = args[2].v.d; break;
    case KD_UNARY_GELU: {
      const char *a = args[1].kind == KD_VALUE_STRING && args[1].v.str ? args[1].v.str : "none";
      if (strcmp(a, "tanh") == 0) c->code = KD_UX_GELU_TANH;
      else if (strcmp(a, "none") != 0)
        return kd_error(KD_ERR_INVALID_ARGUMENT, "approximate argument must be either none or tanh.");
      break;
    }
    default: break;
  }
  return KD_OK;
}

KD_KERNEL(kd_cpu_unary) {
  kd_tensor *self = args[0].v.t;
  bool inplace = kd_op_is_inplace(op);
  kd_unary_ctx ctx;
  KD_TRY(kd_unary_params(op, args, self->dtype, &ctx));
  const int code = ctx.code;
  const char *kname;
  kd_unary_class cls = kd_unary_class_of(code, &kname);
  const kd_dtype dt = self->dtype;
  if (dt == KD_DTYPE_BOOL) {
    if (code == KD_UNARY_NEG)
      return kd_error(KD_ERR_DTYPE,
                      "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a "
                      "mask, use the `~` or `logical_not()` operator instead.");
    if (code == KD_UNARY_RELU) return kd_error(KD_ERR_DTYPE, "Boolean inputs not supported for relu");
    if (code == KD_UNARY_ABS) return kd_error(KD_ERR_DTYPE, "\"abs_cpu\" not implemented for 'Bool'");
    if (code == KD_UNARY_RELU6 || code == KD_UNARY_HARDTANH)
      return kd_error(KD_ERR_DTYPE, "Bool inputs not supported for hardtanh");
    if (kname && cls == KD_UCLS_KEEP)
      return kd_error(KD_ERR_DTYPE, "\"%s\" not implemented for 'Bool'", kname);
  }
  if (cls == KD_UCLS_FLOAT_ONLY && !kd_dtype_is_float(dt))
    return kd_error(KD_ERR_DTYPE, "\"%s\" not implemented for '%s'", kname, kd_cpu_torch_name(dt));
  if (code == KD_UNARY_HARDTANH && dt == KD_DTYPE_U8 && (ctx.p0 < 0 || ctx.p1 < 0))
    return kd_error(KD_ERR_INVALID_ARGUMENT, "cannot do hardtanh on an unsigned type with negative limits");

  kd_dtype ct = dt;
  if (cls == KD_UCLS_TO_FLOAT && !kd_dtype_is_float(dt)) ct = KD_DTYPE_DEFAULT;
  if (code == KD_UNARY_SQUARE && dt == KD_DTYPE_BOOL) ct = KD_DTYPE_I64;
  kd_dtype odt = cls == KD_UCLS_TEST ? KD_DTYPE_BOOL : ct;
  if (inplace) {
    if (code == KD_UNARY_SQUARE && dt == KD_DTYPE_BOOL)
      return kd_error(KD_ERR_DTYPE, "Found dtype Bool but expected Long");
    KD_TRY(kd_cpu_check_inplace_cast(odt, dt));
    KD_TRY(kd_cpu_check_no_internal_overlap(self));
  }

  kd_tensor *tmp = NULL, *in = NULL, *out = NULL;
  kd_status st = kd_cpu_operand_as(self, ct, &tmp, &in);
  if (st != KD_OK) return st;
  /* in place writes straight into self (odt == self's dtype here: can_cast passed and the
   * only dtype changes are int -> float and bool -> int64, which it refuses) */
  if (inplace) {
    out = self;
    kd_tensor_retain(out);
  } else {
    st = kd_tensor_empty(self->sizes, self->ndim, odt, kd_tensor_device(self), &out);
  }
  if (st == KD_OK) {
    kd_iter_operand ops[2] = {kd_iter_operand_of(out), kd_iter_operand_of(in)};
    kd_iter it;
    st = kd_iter_build(&it, ops, 2, 1, 0);
    kd_ew_desc d = {KD_EW_UNARY, ctx.code, {ctx.p0, ctx.p1, ctx.p2, 0}, {0, 0}};
    if (st == KD_OK) st = kd_cpu_iter_run(kd_tensor_device(out), &it, ops, kd_unary_loops[ct], &ctx, &d);
  }
  if (tmp) kd_tensor_release(tmp);
  if (st != KD_OK) {
    if (out) kd_tensor_release(out);
    return st;
  }
  kd_out_take(outs, 0, out);
  return KD_OK;
}
