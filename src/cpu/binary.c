/* binary.c - CPU pointwise binary ops with PyTorch's type promotion and their in-place forms:
 * add, sub, mul, div, pow, comparisons, floor_divide, remainder, fmod, atan2, maximum/minimum,
 * fmax/fmin, hypot, isclose, logical and bitwise and/or/xor (one kernel, KD_BINARY_* codes),
 * logical_not/bitwise_not, where() and masked_fill (where's loops). See cpu_loops.h for the
 * dtype rows and the conversion of operands to the compute dtype. */
#include "cpu/cpu_loops.h"
#include "ops/ew_codes.h"

/* Codes beyond the op list's (KD_BX_*: rounding divisions, pow by a known scalar): ops/ew_codes.h. */

typedef struct kd_binary_ctx {
  int code;
  kd_scalar alpha;
  int zero_div; /* set when an integer division by zero is met (atomic store) */
  double rtol, atol; /* isclose */
  bool equal_nan;
} kd_binary_ctx;

/* ---- scalar helpers ---- */
static inline int64_t kd_idiv_trunc(int64_t a, int64_t b) {
  if (b == -1) return (int64_t)(0u - (uint64_t)a); /* INT64_MIN / -1 wraps */
  return a / b;
}
static inline int64_t kd_idiv_floor(int64_t a, int64_t b) {
  if (b == -1) return (int64_t)(0u - (uint64_t)a);
  int64_t q = a / b, r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) q--;
  return q;
}
/* PyTorch's div_floor_floating: Python's floor division, IEEE result on a zero divisor.
 * RND rounds an intermediate to the storage type: float16/bfloat16 arithmetic in PyTorch
 * rounds every step, and the quotient's rounding decides the floor near integers. */
#define KD_DEF_FDIV_FLOOR(NAME, F, MS, RND)                                                   \
  static inline F NAME(F a, F b) {                                                            \
    if (b == 0) return a / b;                                                                 \
    F mod = RND(fmod##MS(a, b));                                                              \
    F div = RND(RND(a - mod) / b);                                                            \
    if (mod != 0 && (b < 0) != (mod < 0)) div = RND(div - (F)1);                              \
    F fl;                                                                                     \
    if (div != 0) {                                                                           \
      fl = floor##MS(div);                                                                    \
      if (div - fl > (F)0.5) fl += (F)1;                                                      \
    } else {                                                                                  \
      fl = copysign##MS((F)0, a / b);                                                         \
    }                                                                                         \
    return fl;                                                                                \
  }
#define KD_RND_F16(x) kd_f16_to_f32(kd_f32_to_f16(x))
#define KD_RND_BF16(x) kd_bf16_to_f32(kd_f32_to_bf16(x))
KD_DEF_FDIV_FLOOR(kd_fdiv_floor_f32, float, f, KD_LD_ID)
KD_DEF_FDIV_FLOOR(kd_fdiv_floor_f64, double, , KD_LD_ID)
KD_DEF_FDIV_FLOOR(kd_fdiv_floor_f16, float, f, KD_RND_F16)
KD_DEF_FDIV_FLOOR(kd_fdiv_floor_bf16, float, f, KD_RND_BF16)
/* PyTorch's powi: wrapping multiplication; negative exponents give 0 except for bases 1 and -1. */
static inline int64_t kd_powi(int64_t a, int64_t b) {
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

/* PyTorch's remainder (Python's %): fmod, moved to the sign of the divisor. */
static inline float kd_fremf(float a, float b) {
  float m = fmodf(a, b);
  return (m != 0 && ((b < 0) != (m < 0))) ? m + b : m;
}
static inline double kd_frem(double a, double b) {
  double m = fmod(a, b);
  return (m != 0 && ((b < 0) != (m < 0))) ? m + b : m;
}
static inline int64_t kd_irem(int64_t a, int64_t b) { /* b != 0 */
  if (b == -1) return 0;
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
static inline int64_t kd_ifmod(int64_t a, int64_t b) { return b == -1 ? 0 : a % b; }
/* maximum/minimum: NaN if either operand is NaN */
#define KD_FMAXIMUM(a, b) ((a) != (a) ? (a) : (b) != (b) ? (b) : (a) > (b) ? (a) : (b))
#define KD_FMINIMUM(a, b) ((a) != (a) ? (a) : (b) != (b) ? (b) : (a) < (b) ? (a) : (b))
/* isclose, as PyTorch composes it: a == b, or both NaN with equal_nan, or a finite
 * |a - b| <= atol + |rtol * b|; every step rounded to the storage type (LD(ST(..))). */
#define KD_ISCLOSE_F(a, b, CT, LD, ST, MS, c)                                                 \
  ((a) == (b) || ((c)->equal_nan && (a) != (a) && (b) != (b)) ||                              \
   (isfinite(LD(ST(fabs##MS((a) - (b))))) &&                                                  \
    LD(ST(fabs##MS((a) - (b)))) <= LD(ST((CT)(c)->atol + LD(ST(fabs##MS((CT)(c)->rtol * (b))))))))
/* integers (and bool): compared in float32, PyTorch's default dtype */
#define KD_ISCLOSE_I(a, b, CT, UT, c) ((a) == (b) || kd_isclose_int((float)(a), (float)(b), (c)))
struct kd_binary_ctx;
static inline bool kd_isclose_int(float a, float b, const struct kd_binary_ctx *c);

#define KD_ZERO_DIV(c, CT) (__atomic_store_n(&(c)->zero_div, 1, __ATOMIC_RELAXED), (CT)0)

/* alpha in the compute type (integral results reject a floating alpha before this) */
#define KD_ALPHA_F(c, CT, UT) ((UT)(CT)kd_scalar_to_double((c)->alpha))
#define KD_ALPHA_I(c, CT, UT) ((UT)kd_scalar_to_int((c)->alpha))
#define KD_ALPHA_B(c, CT, UT) ((UT)(kd_scalar_to_int((c)->alpha) != 0))

/* bool * bool is logical and */
#define KD_MUL_F(a, b, CT, UT) ((CT)((UT)(a) * (UT)(b)))
#define KD_MUL_I(a, b, CT, UT) ((CT)((UT)(a) * (UT)(b)))
#define KD_MUL_B(a, b, CT, UT) ((CT)((a) && (b)))

/* Cases shared by every kind: add/sub/mul in wrapping arithmetic and the comparisons. */
#define KD_BINARY_CASES_COMMON(T, CT, LD, ST, K, UT, c)                                       \
  case KD_BX_ADD1: KD_LOOP2(T, T, CT, LD, ST, (CT)((UT)a + (UT)b)); break;                    \
  case KD_BX_SUB1: KD_LOOP2(T, T, CT, LD, ST, (CT)((UT)a - (UT)b)); break;                    \
  case KD_BINARY_ADD: {                                                                       \
    const UT al = KD_ALPHA_##K(c, CT, UT);                                                    \
    KD_LOOP2(T, T, CT, LD, ST, (CT)((UT)a + al * (UT)b));                                     \
    break;                                                                                    \
  }                                                                                           \
  case KD_BINARY_SUB: {                                                                       \
    const UT al = KD_ALPHA_##K(c, CT, UT);                                                    \
    KD_LOOP2(T, T, CT, LD, ST, (CT)((UT)a - al * (UT)b));                                     \
    break;                                                                                    \
  }                                                                                           \
  case KD_BINARY_MUL: KD_LOOP2(T, T, CT, LD, ST, KD_MUL_##K(a, b, CT, UT)); break;            \
  case KD_BINARY_EQ: KD_LOOP2(uint8_t, T, CT, LD, KD_ST_ID, (uint8_t)(a == b)); break;        \
  case KD_BINARY_NE: KD_LOOP2(uint8_t, T, CT, LD, KD_ST_ID, (uint8_t)(a != b)); break;        \
  case KD_BINARY_LT: KD_LOOP2(uint8_t, T, CT, LD, KD_ST_ID, (uint8_t)(a < b)); break;         \
  case KD_BINARY_LE: KD_LOOP2(uint8_t, T, CT, LD, KD_ST_ID, (uint8_t)(a <= b)); break;        \
  case KD_BINARY_GT: KD_LOOP2(uint8_t, T, CT, LD, KD_ST_ID, (uint8_t)(a > b)); break;         \
  case KD_BINARY_GE: KD_LOOP2(uint8_t, T, CT, LD, KD_ST_ID, (uint8_t)(a >= b)); break;        \
  case KD_BINARY_LOGICAL_AND: KD_LOOP2(uint8_t, T, CT, LD, KD_ST_ID, (uint8_t)((a != 0) & (b != 0))); break; \
  case KD_BINARY_LOGICAL_OR: KD_LOOP2(uint8_t, T, CT, LD, KD_ST_ID, (uint8_t)((a != 0) | (b != 0))); break; \
  case KD_BINARY_LOGICAL_XOR: KD_LOOP2(uint8_t, T, CT, LD, KD_ST_ID, (uint8_t)((a != 0) ^ (b != 0))); break;

#define KD_BINARY_CASES_F(SFX, T, CT, LD, ST, MS, UT, c)                                      \
  case KD_BINARY_DIV: KD_LOOP2(T, T, CT, LD, ST, a / b); break;                               \
  case KD_BX_DIV_TRUNC: KD_LOOP2(T, T, CT, LD, ST, trunc##MS(LD(ST(a / b)))); break;          \
  case KD_BX_DIV_FLOOR: KD_LOOP2(T, T, CT, LD, ST, kd_fdiv_floor_##SFX(a, b)); break;         \
  case KD_BINARY_POW: KD_LOOP2(T, T, CT, LD, ST, pow##MS(a, b)); break;                       \
  case KD_BX_POW_SQUARE: KD_LOOP2(T, T, CT, LD, ST, ((void)b, a * a)); break;                 \
  case KD_BX_POW_CUBE: KD_LOOP2(T, T, CT, LD, ST, ((void)b, a * a * a)); break;               \
  case KD_BX_POW_SQRT: KD_LOOP2(T, T, CT, LD, ST, ((void)b, sqrt##MS(a))); break;             \
  case KD_BX_POW_RSQRT: KD_LOOP2(T, T, CT, LD, ST, ((void)b, (CT)1 / sqrt##MS(a))); break;    \
  case KD_BX_POW_RECIP: KD_LOOP2(T, T, CT, LD, ST, ((void)b, (CT)1 / a)); break;              \
  case KD_BX_POW_RECIP_SQUARE: KD_LOOP2(T, T, CT, LD, ST, ((void)b, (CT)1 / (a * a))); break; \
  case KD_BINARY_REMAINDER: KD_LOOP2(T, T, CT, LD, ST, kd_frem##MS(a, b)); break;            \
  case KD_BINARY_FMOD: KD_LOOP2(T, T, CT, LD, ST, fmod##MS(a, b)); break;                    \
  case KD_BINARY_ATAN2: KD_LOOP2(T, T, CT, LD, ST, atan2##MS(a, b)); break;                  \
  case KD_BINARY_HYPOT: KD_LOOP2(T, T, CT, LD, ST, hypot##MS(a, b)); break;                  \
  case KD_BINARY_MAXIMUM: KD_LOOP2(T, T, CT, LD, ST, KD_FMAXIMUM(a, b)); break;              \
  case KD_BINARY_MINIMUM: KD_LOOP2(T, T, CT, LD, ST, KD_FMINIMUM(a, b)); break;              \
  case KD_BINARY_FMAX: KD_LOOP2(T, T, CT, LD, ST, fmax##MS(a, b)); break;                    \
  case KD_BINARY_FMIN: KD_LOOP2(T, T, CT, LD, ST, fmin##MS(a, b)); break;                    \
  case KD_BINARY_ISCLOSE:                                                                     \
    KD_LOOP2(uint8_t, T, CT, LD, KD_ST_ID, (uint8_t)KD_ISCLOSE_F(a, b, CT, LD, ST, MS, c));   \
    break;
#define KD_BINARY_CASES_I(SFX, T, CT, LD, ST, MS, UT, c)                                      \
  case KD_BX_DIV_TRUNC:                                                                       \
    KD_LOOP2(T, T, CT, LD, ST, b == 0 ? KD_ZERO_DIV(c, CT) : (CT)kd_idiv_trunc(a, b));        \
    break;                                                                                    \
  case KD_BX_DIV_FLOOR:                                                                       \
    KD_LOOP2(T, T, CT, LD, ST, b == 0 ? KD_ZERO_DIV(c, CT) : (CT)kd_idiv_floor(a, b));        \
    break;                                                                                    \
  case KD_BINARY_POW: KD_LOOP2(T, T, CT, LD, ST, (CT)kd_powi(a, b)); break;                 \
  case KD_BINARY_REMAINDER:                                                                   \
    KD_LOOP2(T, T, CT, LD, ST, b == 0 ? KD_ZERO_DIV(c, CT) : (CT)kd_irem(a, b));              \
    break;                                                                                    \
  case KD_BINARY_FMOD:                                                                        \
    KD_LOOP2(T, T, CT, LD, ST, b == 0 ? KD_ZERO_DIV(c, CT) : (CT)kd_ifmod(a, b));             \
    break;                                                                                    \
  case KD_BINARY_MAXIMUM: case KD_BINARY_FMAX: KD_LOOP2(T, T, CT, LD, ST, a > b ? a : b); break; \
  case KD_BINARY_MINIMUM: case KD_BINARY_FMIN: KD_LOOP2(T, T, CT, LD, ST, a < b ? a : b); break; \
  case KD_BINARY_BITWISE_AND: KD_LOOP2(T, T, CT, LD, ST, (CT)(a & b)); break;                \
  case KD_BINARY_BITWISE_OR: KD_LOOP2(T, T, CT, LD, ST, (CT)(a | b)); break;                 \
  case KD_BINARY_BITWISE_XOR: KD_LOOP2(T, T, CT, LD, ST, (CT)(a ^ b)); break;                \
  case KD_BINARY_ISCLOSE: KD_LOOP2(uint8_t, T, CT, LD, KD_ST_ID, (uint8_t)KD_ISCLOSE_I(a, b, CT, UT, c)); break;
/* add (or), mul (and), comparisons, and: */
#define KD_BINARY_CASES_B(SFX, T, CT, LD, ST, MS, UT, c)                                      \
  case KD_BINARY_MAXIMUM: case KD_BINARY_FMAX: case KD_BINARY_BITWISE_OR:                     \
    KD_LOOP2(T, T, CT, LD, ST, a || b); break;                                                \
  case KD_BINARY_MINIMUM: case KD_BINARY_FMIN: case KD_BINARY_BITWISE_AND:                    \
    KD_LOOP2(T, T, CT, LD, ST, a && b); break;                                                \
  case KD_BINARY_BITWISE_XOR: KD_LOOP2(T, T, CT, LD, ST, a != b); break;                     \
  case KD_BINARY_ISCLOSE: KD_LOOP2(uint8_t, T, CT, LD, KD_ST_ID, (uint8_t)KD_ISCLOSE_I(a, b, CT, UT, c)); break;

static inline bool kd_isclose_int(float a, float b, const struct kd_binary_ctx *c) {
  return fabsf(a - b) <= (float)c->atol + fabsf((float)c->rtol * b);
}

#define KD_DEF_BINARY(SFX, DT, T, CT, LD, ST, MS, K, UT)                                      \
  static void kd_binary_loop_##SFX(void *ctx, char **data, const int64_t *strides, int64_t n) { \
    kd_binary_ctx *c_ = (kd_binary_ctx *)ctx;                                                 \
    switch (c_->code) {                                                                       \
      KD_BINARY_CASES_COMMON(T, CT, LD, ST, K, UT, c_)                                        \
      KD_BINARY_CASES_##K(SFX, T, CT, LD, ST, MS, UT, c_)                                     \
      default: break;                                                                         \
    }                                                                                         \
  }
KD_ROWS_ALL(KD_DEF_BINARY)
#define KD_BINARY_ENTRY(SFX, DT, ...) KD_LOOP_ENTRY(kd_binary_loop_, SFX, DT)
static const kd_iter_loop_fn kd_binary_loops[KD_DTYPE_COUNT] = {KD_ROWS_ALL(KD_BINARY_ENTRY)};

/* ---- checks with PyTorch's messages ---- */
static kd_status kd_alpha_check(kd_dtype rt, kd_scalar alpha) {
  if (alpha.kind == KD_KIND_BOOL && rt != KD_DTYPE_BOOL)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "Boolean alpha only supported for Boolean results.");
  if (!kd_dtype_is_float(rt) && alpha.kind == KD_KIND_FLOAT)
    return kd_error(KD_ERR_INVALID_ARGUMENT,
                    "For integral input tensors, argument alpha must not be a floating point number.");
  return KD_OK;
}

/* An operand that is a Tensor or a wrapped number, converted to the compute dtype `ct`.
 * Scalars land in `buf`; tensors of another dtype become a temporary in *tmp. */
static kd_status kd_operand_as(const kd_value *v, kd_dtype ct, uint64_t *buf, kd_tensor **tmp, kd_iter_operand *op) {
  *tmp = NULL;
  if (v->kind == KD_VALUE_SCALAR) {
    kd_scalar_store(v->v.s, ct, buf);
    *op = kd_cpu_scalar_operand(buf, ct);
    return KD_OK;
  }
  kd_tensor *use;
  KD_TRY(kd_cpu_operand_as(v->v.t, ct, tmp, &use));
  *op = kd_iter_operand_of(use);
  return KD_OK;
}

static void kd_operand_shape(const kd_value *v, const int64_t **sizes, int *ndim) {
  if (v->kind == KD_VALUE_TENSOR) {
    *sizes = v->v.t->sizes;
    *ndim = v->v.t->ndim;
  } else {
    *sizes = NULL;
    *ndim = 0;
  }
}

static kd_status kd_check_operand(const kd_op_info *op, const kd_value *v, const char *name) {
  if (v->kind != KD_VALUE_TENSOR && v->kind != KD_VALUE_SCALAR)
    return kd_error(KD_ERR_TYPE, "%s(): argument '%s' must be a Tensor or a number", op->name, name);
  return KD_OK;
}

static kd_dtype kd_operand_dtype(const kd_value *v) {
  return v->kind == KD_VALUE_TENSOR ? v->v.t->dtype : kd_scalar_default_dtype(v->v.s);
}

/* The checks and code choices of the ops after pow (binary.js): PyTorch's dtype errors, the
 * compute dtype (atan2 of integers is float32), isclose's tolerances. */
static kd_status kd_binary_prepare_more(kd_binary_ctx *ctx, const kd_tensor *self, const kd_value *other,
                                        const kd_value *args, kd_dtype rt, kd_dtype *ct) {
  const char *nm = NULL; /* PyTorch's kernel name when rt is refused */
  switch (ctx->code) {
    case KD_BINARY_FLOOR_DIVIDE:
      ctx->code = KD_BX_DIV_FLOOR;
      if (rt == KD_DTYPE_BOOL) nm = "div_floor_cpu";
      break;
    case KD_BINARY_REMAINDER: if (rt == KD_DTYPE_BOOL) nm = "remainder_cpu"; break;
    case KD_BINARY_FMOD: if (rt == KD_DTYPE_BOOL) nm = "fmod_cpu"; break;
    case KD_BINARY_ATAN2: if (!kd_dtype_is_float(rt)) *ct = KD_DTYPE_DEFAULT; break;
    case KD_BINARY_HYPOT: if (!kd_dtype_is_float(rt)) nm = "hypot_cpu"; break;
    case KD_BINARY_BITWISE_AND: if (kd_dtype_is_float(rt)) nm = "bitwise_and_cpu"; break;
    case KD_BINARY_BITWISE_OR: if (kd_dtype_is_float(rt)) nm = "bitwise_or_cpu"; break;
    case KD_BINARY_BITWISE_XOR: if (kd_dtype_is_float(rt)) nm = "bitwise_xor_cpu"; break;
    case KD_BINARY_ISCLOSE: {
      kd_dtype odt = kd_operand_dtype(other);
      if (odt != self->dtype)
        return kd_error(KD_ERR_INVALID_ARGUMENT, "%s did not match %s", kd_cpu_torch_name(self->dtype), kd_cpu_torch_name(odt));
      ctx->rtol = args[2].kind == KD_VALUE_DOUBLE ? args[2].v.d : 1e-5;
      ctx->atol = args[3].kind == KD_VALUE_DOUBLE ? args[3].v.d : 1e-8;
      ctx->equal_nan = args[4].kind == KD_VALUE_BOOL && args[4].v.b;
      if (!(ctx->rtol >= 0))
        return kd_error(KD_ERR_INVALID_ARGUMENT, "rtol must be greater than or equal to zero, but got %g", ctx->rtol);
      if (!(ctx->atol >= 0))
        return kd_error(KD_ERR_INVALID_ARGUMENT, "atol must be greater than or equal to zero, but got %g", ctx->atol);
      *ct = self->dtype;
      break;
    }
    default: break;
  }
  if (nm) return kd_error(KD_ERR_DTYPE, "\"%s\" not implemented for '%s'", nm, kd_cpu_torch_name(rt));
  return KD_OK;
}

/* add/sub/mul/div/pow/comparisons and their in-place forms. The compute dtype is
 * torch.result_type(self, other) (float32 for true division of integers); comparisons write
 * bool. Operands of another dtype are converted first (kd_cpu_cast); in place with a result
 * dtype other than self's, the result goes to a temporary that is converted into self, as
 * PyTorch's CPU iterator does. */
KD_KERNEL(kd_cpu_binary) {
  kd_tensor *self = args[0].v.t;
  const kd_value *other = &args[1];
  bool inplace = kd_op_is_inplace(op);
  int code = op->code;
  bool cmp = (code >= KD_BINARY_EQ && code <= KD_BINARY_GE) || code == KD_BINARY_LOGICAL_AND ||
             code == KD_BINARY_LOGICAL_OR || code == KD_BINARY_LOGICAL_XOR || code == KD_BINARY_ISCLOSE;
  KD_TRY(kd_check_operand(op, other, "other"));

  kd_result_type_state rs;
  kd_result_type_init(&rs);
  kd_result_type_add_tensor(&rs, self->dtype, self->ndim);
  if (other->kind == KD_VALUE_TENSOR) kd_result_type_add_tensor(&rs, other->v.t->dtype, other->v.t->ndim);
  else kd_result_type_add_scalar(&rs, other->v.s);
  kd_dtype rt = kd_result_type_finish(&rs), ct = rt;
  kd_dtype odt = kd_operand_dtype(other);

  kd_binary_ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.code = code;
  ctx.alpha = kd_scalar_i(1);
  if (code == KD_BINARY_ADD || code == KD_BINARY_SUB) {
    if (code == KD_BINARY_SUB) {
      if (self->dtype == KD_DTYPE_BOOL && odt == KD_DTYPE_BOOL)
        return kd_error(KD_ERR_DTYPE, "Subtraction, the `-` operator, with two bool tensors is not supported. "
                                      "Use the `^` or `logical_xor()` operator instead.");
      if (self->dtype == KD_DTYPE_BOOL || odt == KD_DTYPE_BOOL)
        return kd_error(KD_ERR_DTYPE, "Subtraction, the `-` operator, with a bool tensor is not supported. "
                                      "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.");
    }
    if (op->nargs > 2 && args[2].kind == KD_VALUE_SCALAR) ctx.alpha = args[2].v.s;
    KD_TRY(kd_alpha_check(rt, ctx.alpha));
    if (kd_scalar_to_double(ctx.alpha) == 1.0) ctx.code = code == KD_BINARY_ADD ? KD_BX_ADD1 : KD_BX_SUB1;
  } else if (code == KD_BINARY_DIV) {
    const kd_value *rm = op->nargs > 2 ? &args[2] : NULL;
    if (!rm || rm->kind == KD_VALUE_NONE) {
      if (!kd_dtype_is_float(rt)) ct = KD_DTYPE_DEFAULT; /* true division: int / int -> float32 */
    } else {
      const char *mode = rm->kind == KD_VALUE_STRING && rm->v.str ? rm->v.str : "";
      if (strcmp(mode, "trunc") == 0) ctx.code = KD_BX_DIV_TRUNC;
      else if (strcmp(mode, "floor") == 0) ctx.code = KD_BX_DIV_FLOOR;
      else
        return kd_error(KD_ERR_INVALID_ARGUMENT,
                        "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '%s'", mode);
      if (rt == KD_DTYPE_BOOL)
        return kd_error(KD_ERR_DTYPE, "\"%s\" not implemented for 'Bool'",
                        ctx.code == KD_BX_DIV_TRUNC ? "div_trunc_cpu" : "div_floor_cpu");
    }
  } else if (code == KD_BINARY_POW) {
    if (other->kind == KD_VALUE_SCALAR && !kd_dtype_is_float(self->dtype) && other->v.s.kind != KD_KIND_FLOAT &&
        kd_scalar_to_int(other->v.s) < 0)
      return kd_error(KD_ERR_INVALID_ARGUMENT, "Integers to negative integer powers are not allowed.");
    if (rt == KD_DTYPE_BOOL) return kd_error(KD_ERR_DTYPE, "\"pow\" not implemented for 'Bool'");
    if (other->kind == KD_VALUE_SCALAR && kd_dtype_is_float(ct)) {
      double e = kd_scalar_to_double(other->v.s);
      if (e == 2.0) ctx.code = KD_BX_POW_SQUARE;
      else if (e == 3.0) ctx.code = KD_BX_POW_CUBE;
      else if (e == 0.5) ctx.code = KD_BX_POW_SQRT;
      else if (e == -0.5) ctx.code = KD_BX_POW_RSQRT;
      else if (e == -1.0) ctx.code = KD_BX_POW_RECIP;
      else if (e == -2.0) ctx.code = KD_BX_POW_RECIP_SQUARE;
    }
  } else {
    KD_TRY(kd_binary_prepare_more(&ctx, self, other, args, rt, &ct));
  }
  kd_dtype outdt = cmp ? KD_DTYPE_BOOL : ct;

  /* output: a fresh tensor of the broadcast shape, self, or a temporary to convert into self */
  kd_tensor *out = NULL, *a = NULL, *b = NULL, *ocopy = NULL;
  kd_status st = KD_OK;
  if (inplace) {
    KD_TRY(kd_cpu_check_inplace_cast(outdt, self->dtype));
    KD_TRY(kd_cpu_check_no_internal_overlap(self));
    if (outdt == self->dtype) {
      out = self;
      kd_tensor_retain(out);
    } else {
      st = kd_tensor_empty(self->sizes, self->ndim, outdt, kd_tensor_device(self), &out);
    }
  } else {
    const int64_t *osz;
    int ond;
    kd_operand_shape(other, &osz, &ond);
    int64_t shape[KD_MAX_DIMS];
    int nd;
    KD_TRY(kd_shape_broadcast(self->sizes, self->ndim, osz, ond, shape, &nd));
    st = kd_tensor_empty(shape, nd, outdt, kd_tensor_device(self), &out);
  }
  if (st != KD_OK) return st;

  uint64_t sbuf = 0;
  kd_iter_operand ops[3];
  ops[0] = kd_iter_operand_of(out);
  kd_tensor *sa;
  st = kd_cpu_operand_as(self, ct, &a, &sa);
  if (st == KD_OK) {
    ops[1] = kd_iter_operand_of(sa);
    /* in place, an `other` that partially overlaps self is read from a copy first */
    kd_value ov = *other;
    if (inplace && other->kind == KD_VALUE_TENSOR && other->v.t != self && kd_cpu_may_overlap(other->v.t, self)) {
      kd_tensor *o = other->v.t;
      st = kd_tensor_empty(o->sizes, o->ndim, o->dtype, kd_tensor_device(o), &ocopy);
      if (st == KD_OK) st = kd_cpu_copy_into(ocopy, o);
      ov = kd_value_tensor(ocopy);
    }
    if (st == KD_OK) st = kd_operand_as(&ov, ct, &sbuf, &b, &ops[2]);
  }
  if (st == KD_OK) {
    kd_iter it;
    st = kd_iter_build(&it, ops, 3, 1, 0);
    kd_ew_desc d = {KD_EW_BINARY, ctx.code, {kd_scalar_to_double(ctx.alpha), ctx.rtol, ctx.atol, 0},
                    {kd_scalar_to_int(ctx.alpha), ctx.equal_nan}};
    if (st == KD_OK) st = kd_cpu_iter_run(kd_tensor_device(out), &it, ops, kd_binary_loops[ct], &ctx, &d);
    if (st == KD_OK && ctx.zero_div) st = kd_error(KD_ERR_INVALID_ARGUMENT, "ZeroDivisionError");
  }
  if (a) kd_tensor_release(a);
  if (b) kd_tensor_release(b);
  if (ocopy) kd_tensor_release(ocopy);
  return kd_cpu_finish_out(st, inplace, self, out, outs);
}

/* ---- where(condition, self, other): by element size; the condition is read as bytes ---- */
#define KD_DEF_WHERE(N, U)                                                                    \
  static void kd_where_loop_##N(void *ctx, char **data, const int64_t *strides, int64_t n) {  \
    char *po = data[0], *pc = data[1], *pa = data[2], *pb = data[3];                          \
    const int64_t so = strides[0], sc = strides[1], sa = strides[2], sb = strides[3];         \
    if (so == N && sc == 1 && sa == N && sb == N) {                                           \
      U *o = (U *)po;                                                                         \
      const uint8_t *c = (const uint8_t *)pc;                                                 \
      const U *x = (const U *)pa, *y = (const U *)pb;                                         \
      for (int64_t i = 0; i < n; i++) o[i] = c[i] ? x[i] : y[i];                              \
    } else if (so == N && sc == 1 && sa == 0 && sb == N) { /* masked_fill: a scalar value */  \
      U *o = (U *)po;                                                                         \
      const uint8_t *c = (const uint8_t *)pc;                                                 \
      const U x = *(const U *)pa, *y = (const U *)pb;                                         \
      for (int64_t i = 0; i < n; i++) o[i] = c[i] ? x : y[i];                                 \
    } else {                                                                                  \
      for (int64_t i = 0; i < n; i++)                                                         \
        *(U *)(po + i * so) = *(const uint8_t *)(pc + i * sc) ? *(const U *)(pa + i * sa)     \
                                                              : *(const U *)(pb + i * sb);    \
    }                                                                                         \
  }
KD_DEF_WHERE(1, uint8_t)
KD_DEF_WHERE(2, uint16_t)
KD_DEF_WHERE(4, uint32_t)
KD_DEF_WHERE(8, uint64_t)

KD_KERNEL(kd_cpu_where) {
  kd_tensor *cond = args[0].v.t;
  if (cond->dtype != KD_DTYPE_BOOL && cond->dtype != KD_DTYPE_U8)
    return kd_error(KD_ERR_DTYPE, "where expected condition to be a boolean tensor, but got a tensor with dtype %s",
                    kd_cpu_torch_name(cond->dtype));
  KD_TRY(kd_check_operand(op, &args[1], "self"));
  KD_TRY(kd_check_operand(op, &args[2], "other"));
  kd_result_type_state rs;
  kd_result_type_init(&rs);
  for (int k = 1; k <= 2; k++) {
    if (args[k].kind == KD_VALUE_TENSOR) kd_result_type_add_tensor(&rs, args[k].v.t->dtype, args[k].v.t->ndim);
    else kd_result_type_add_scalar(&rs, args[k].v.s);
  }
  kd_dtype ct = kd_result_type_finish(&rs);
  for (int k = 1; k <= 2; k++)
    if (args[k].kind == KD_VALUE_SCALAR) KD_TRY(kd_cpu_scalar_check_fits(args[k].v.s, ct));

  int64_t shape[KD_MAX_DIMS], tmp[KD_MAX_DIMS];
  int nd = cond->ndim;
  memcpy(shape, cond->sizes, sizeof(int64_t) * nd);
  for (int k = 1; k <= 2; k++) {
    const int64_t *sz;
    int n;
    kd_operand_shape(&args[k], &sz, &n);
    int nt;
    KD_TRY(kd_shape_broadcast(shape, nd, sz, n, tmp, &nt));
    memcpy(shape, tmp, sizeof(int64_t) * nt);
    nd = nt;
  }
  kd_tensor *out, *x = NULL, *y = NULL;
  KD_TRY(kd_tensor_empty(shape, nd, ct, kd_tensor_device(cond), &out));
  uint64_t bx = 0, by = 0;
  kd_iter_operand ops[4];
  ops[0] = kd_iter_operand_of(out);
  ops[1] = kd_iter_operand_of(cond);
  kd_status st = kd_operand_as(&args[1], ct, &bx, &x, &ops[2]);
  if (st == KD_OK) st = kd_operand_as(&args[2], ct, &by, &y, &ops[3]);
  if (st == KD_OK) {
    kd_iter it;
    st = kd_iter_build(&it, ops, 4, 1, 0);
    kd_iter_loop_fn loop;
    switch (kd_dtype_size(ct)) {
      case 1: loop = kd_where_loop_1; break;
      case 2: loop = kd_where_loop_2; break;
      case 4: loop = kd_where_loop_4; break;
      default: loop = kd_where_loop_8; break;
    }
    kd_ew_desc d = {KD_EW_WHERE, 0, {0}, {0}};
    if (st == KD_OK) st = kd_cpu_iter_run(kd_tensor_device(out), &it, ops, loop, NULL, &d);
  }
  if (x) kd_tensor_release(x);
  if (y) kd_tensor_release(y);
  if (st != KD_OK) {
    kd_tensor_release(out);
    return st;
  }
  kd_out_take(outs, 0, out);
  return KD_OK;
}

static kd_iter_loop_fn kd_where_loop_for(size_t size) {
  switch (size) {
    case 1: return kd_where_loop_1;
    case 2: return kd_where_loop_2;
    case 4: return kd_where_loop_4;
    default: return kd_where_loop_8;
  }
}

/* ---- masked_fill(self, mask, value): where(mask, value, self) in self's dtype ---- */
KD_KERNEL(kd_cpu_masked_fill) {
  kd_tensor *self = args[0].v.t, *mask = args[1].v.t;
  const kd_value *value = &args[2];
  bool inplace = kd_op_is_inplace(op);
  if (mask->dtype != KD_DTYPE_BOOL && mask->dtype != KD_DTYPE_U8)
    return kd_error(KD_ERR_DTYPE, "masked_fill_ only supports boolean masks, but got mask with dtype %s",
                    kd_cpu_torch_name(mask->dtype));
  KD_TRY(kd_check_operand(op, value, "value"));
  kd_scalar v;
  if (value->kind == KD_VALUE_TENSOR) {
    kd_tensor *vt = value->v.t;
    if (vt->ndim != 0)
      return kd_error(KD_ERR_INVALID_ARGUMENT,
                      "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with %d dimension(s).",
                      vt->ndim);
    KD_TRY(kd_cpu_item(vt, &v));
  } else {
    v = value->v.s;
  }
  KD_TRY(kd_cpu_scalar_check_fits(v, self->dtype));
  uint64_t vbuf = 0;
  kd_scalar_store(v, self->dtype, &vbuf);

  kd_tensor *out;
  if (inplace) {
    KD_TRY(kd_cpu_check_no_internal_overlap(self));
    out = self;
    kd_tensor_retain(out);
  } else {
    int64_t shape[KD_MAX_DIMS];
    int nd;
    KD_TRY(kd_shape_broadcast(self->sizes, self->ndim, mask->sizes, mask->ndim, shape, &nd));
    KD_TRY(kd_tensor_empty(shape, nd, self->dtype, kd_tensor_device(self), &out));
  }
  kd_iter_operand ops[4];
  ops[0] = kd_iter_operand_of(out);
  ops[1] = kd_iter_operand_of(mask);
  ops[2] = kd_cpu_scalar_operand(&vbuf, self->dtype);
  ops[3] = kd_iter_operand_of(self);
  kd_iter it;
  kd_status st = kd_iter_build(&it, ops, 4, 1, 0);
  kd_ew_desc d = {KD_EW_WHERE, 0, {0}, {0}};
  if (st == KD_OK) st = kd_cpu_iter_run(kd_tensor_device(out), &it, ops, kd_where_loop_for(kd_dtype_size(self->dtype)), NULL, &d);
  if (st != KD_OK) {
    kd_tensor_release(out);
    return st;
  }
  kd_out_take(outs, 0, out);
  return KD_OK;
}

/* ---- logical_not (bool result; in place: 0/1 in self's dtype) and bitwise_not ---- */
#define KD_DEF_NOT(SFX, DT, T, CT, LD, ST, MS, K, UT)                                         \
  static void kd_lnot_loop_##SFX(void *ctx, char **data, const int64_t *strides, int64_t n) {   \
    KD_LOOP1(uint8_t, T, CT, LD, KD_ST_ID, (uint8_t)(x == 0));                                \
  }
KD_ROWS_ALL(KD_DEF_NOT)
#define KD_LNOT_ENTRY(SFX, DT, ...) KD_LOOP_ENTRY(kd_lnot_loop_, SFX, DT)
static const kd_iter_loop_fn kd_lnot_loops[KD_DTYPE_COUNT] = {KD_ROWS_ALL(KD_LNOT_ENTRY)};
#define KD_DEF_BNOT(SFX, DT, T, CT, LD, ST, MS, K, UT)                                        \
  static void kd_bnot_loop_##SFX(void *ctx, char **data, const int64_t *strides, int64_t n) {   \
    KD_LOOP1(T, T, CT, LD, ST, KD_BNOT_##K(x, CT));                                           \
  }
#define KD_BNOT_I(x, CT) ((CT)~(x))
#define KD_BNOT_B(x, CT) (!(x))
KD_ROWS_INT(KD_DEF_BNOT)
KD_ROWS_BOOL(KD_DEF_BNOT)
#define KD_BNOT_ENTRY(SFX, DT, ...) KD_LOOP_ENTRY(kd_bnot_loop_, SFX, DT)
static const kd_iter_loop_fn kd_bnot_loops[KD_DTYPE_COUNT] = {KD_ROWS_INT(KD_BNOT_ENTRY) KD_ROWS_BOOL(KD_BNOT_ENTRY)};

KD_KERNEL(kd_cpu_binary_not) {
  kd_tensor *self = args[0].v.t;
  bool inplace = kd_op_is_inplace(op);
  bool logical = op->code == KD_BINARY_LOGICAL_NOT;
  if (!logical && kd_dtype_is_float(self->dtype))
    return kd_error(KD_ERR_DTYPE, "\"bitwise_not_cpu\" not implemented for '%s'", kd_cpu_torch_name(self->dtype));
  kd_dtype outdt = logical ? KD_DTYPE_BOOL : self->dtype;
  kd_tensor *out = NULL;
  kd_status st;
  if (inplace) {
    KD_TRY(kd_cpu_check_no_internal_overlap(self));
    if (outdt == self->dtype) {
      out = self;
      kd_tensor_retain(out);
      st = KD_OK;
    } else {
      st = kd_tensor_empty(self->sizes, self->ndim, outdt, kd_tensor_device(self), &out);
    }
  } else {
    st = kd_tensor_empty(self->sizes, self->ndim, outdt, kd_tensor_device(self), &out);
  }
  if (st != KD_OK) return st;
  kd_iter_operand ops[2] = {kd_iter_operand_of(out), kd_iter_operand_of(self)};
  kd_iter it;
  st = kd_iter_build(&it, ops, 2, 1, 0);
  kd_ew_desc d = {logical ? KD_EW_LOGICAL_NOT : KD_EW_BITWISE_NOT, op->code, {0}, {0}};
  if (st == KD_OK)
    st = kd_cpu_iter_run(kd_tensor_device(out), &it, ops, (logical ? kd_lnot_loops : kd_bnot_loops)[self->dtype], NULL, &d);
  return kd_cpu_finish_out(st, inplace, self, out, outs);
}
