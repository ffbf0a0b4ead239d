/* ternary.c - CPU pointwise ops of three tensors through the strided iterator with 4 operands
 * (out, self, x, y), one general kernel selected by KD_TERNARY_* codes:
 *   clamp(self, min, max) (scalar or tensor bounds, either missing), clamp_min, clamp_max,
 *   lerp(self, end, weight), addcmul(self, t1, t2, value), addcdiv(self, t1, t2, value),
 * and their in-place forms. All operands are converted to the compute dtype first (see
 * Note [CPU dtype rows] in cpu_loops.h); a missing clamp bound becomes the dtype's lowest or
 * highest value (-inf/+inf for floats), so one loop serves clamp, clamp_min and clamp_max. */
#include "cpu/cpu_loops.h"
#include "ops/ew_codes.h"

/* lerp by a number: the weight stays in the compute type (float for float16/bfloat16), not
 * rounded to the storage type; the third operand is then unused */
/* (KD_TX_LERP_SCALAR: ops/ew_codes.h) */

typedef struct kd_ternary_ctx {
  int code;
  double value_f; /* addcmul/addcdiv value, lerp's number weight */
  int64_t value_i;
} kd_ternary_ctx;

/* out[i] = EXPR with `a` (self), `b`, `c` the CT values of the three inputs, all of dtype T.
 * Fast paths: all contiguous; b and c broadcast scalars (clamp with number bounds); c a scalar
 * (lerp with a number weight). */
#define KD_LOOP3(T, CT, LD, ST, EXPR)                                                         \
  do {                                                                                        \
    char *po_ = data[0], *pa_ = data[1], *pb_ = data[2], *pc_ = data[3];                      \
    const int64_t so_ = strides[0], sa_ = strides[1], sb_ = strides[2], sc_ = strides[3];     \
    const int64_t es_ = (int64_t)sizeof(T);                                                   \
    T *o_ = (T *)po_;                                                                         \
    const T *as_ = (const T *)pa_, *bs_ = (const T *)pb_, *cs_ = (const T *)pc_;              \
    if (so_ == es_ && sa_ == es_ && sb_ == es_ && sc_ == es_) {                               \
      for (int64_t i_ = 0; i_ < n; i_++) {                                                    \
        CT a = LD(as_[i_]), b = LD(bs_[i_]), c = LD(cs_[i_]);                                 \
        o_[i_] = ST(EXPR);                                                                    \
      }                                                                                       \
    } else if (so_ == es_ && sa_ == es_ && sb_ == 0 && sc_ == 0) {                            \
      const CT b = LD(*bs_), c = LD(*cs_);                                                    \
      for (int64_t i_ = 0; i_ < n; i_++) { CT a = LD(as_[i_]); o_[i_] = ST(EXPR); }           \
    } else if (so_ == es_ && sa_ == es_ && sb_ == es_ && sc_ == 0) {                          \
      const CT c = LD(*cs_);                                                                  \
      for (int64_t i_ = 0; i_ < n; i_++) { CT a = LD(as_[i_]), b = LD(bs_[i_]); o_[i_] = ST(EXPR); } \
    } else {                                                                                  \
      for (int64_t i_ = 0; i_ < n; i_++) {                                                    \
        CT a = LD(*(const T *)(pa_ + i_ * sa_)), b = LD(*(const T *)(pb_ + i_ * sb_));        \
        CT c = LD(*(const T *)(pc_ + i_ * sc_));                                              \
        *(T *)(po_ + i_ * so_) = ST(EXPR);                                                    \
      }                                                                                       \
    }                                                                                         \
  } while (0)

/* clamp: b = min, c = max; min > max gives max. Floats: NaN in self or a bound is NaN. */
#define KD_CLAMP_F(a, b, c) ((a) != (a) ? (a) : (b) != (b) ? (b) : (c) != (c) ? (c)            \
                             : ((a) < (b) ? (b) : (a)) > (c) ? (c) : ((a) < (b) ? (b) : (a)))
#define KD_CLAMP_I(a, b, c) (((a) < (b) ? (b) : (a)) > (c) ? (c) : ((a) < (b) ? (b) : (a)))
/* PyTorch's lerp: from the nearer end, exact at weight 0 and 1 */
#define KD_LERP(a, b, c, CT, MS) (fabs##MS(c) < (CT)0.5 ? (a) + (c) * ((b) - (a)) : (b) - ((b) - (a)) * ((CT)1 - (c)))

#define KD_TERNARY_CASES_F(T, CT, LD, ST, MS, UT, x)                                          \
  case KD_TERNARY_CLAMP: KD_LOOP3(T, CT, LD, ST, KD_CLAMP_F(a, b, c)); break;                 \
  case KD_TERNARY_LERP: KD_LOOP3(T, CT, LD, ST, KD_LERP(a, b, c, CT, MS)); break;             \
  case KD_TX_LERP_SCALAR: {                                                                   \
    const CT w = (CT)(x)->value_f;                                                            \
    KD_LOOP3(T, CT, LD, ST, ((void)c, KD_LERP(a, b, w, CT, MS)));                             \
    break;                                                                                    \
  }                                                                                           \
  case KD_TERNARY_ADDCMUL: {                                                                  \
    const CT v = (CT)(x)->value_f;                                                            \
    KD_LOOP3(T, CT, LD, ST, a + v * b * c);                                                   \
    break;                                                                                    \
  }                                                                                           \
  case KD_TERNARY_ADDCDIV: {                                                                  \
    const CT v = (CT)(x)->value_f;                                                            \
    KD_LOOP3(T, CT, LD, ST, a + v * b / c);                                                   \
    break;                                                                                    \
  }
#define KD_TERNARY_CASES_I(T, CT, LD, ST, MS, UT, x)                                          \
  case KD_TERNARY_CLAMP: KD_LOOP3(T, CT, LD, ST, KD_CLAMP_I(a, b, c)); break;                 \
  case KD_TERNARY_ADDCMUL: {                                                                  \
    const UT v = (UT)(x)->value_i;                                                            \
    KD_LOOP3(T, CT, LD, ST, (CT)((UT)a + v * (UT)b * (UT)c));                                 \
    break;                                                                                    \
  }
#define KD_TERNARY_CASES_B(T, CT, LD, ST, MS, UT, x) /* clamp with one bool tensor bound; others refused */ \
  case KD_TERNARY_CLAMP: KD_LOOP3(T, CT, LD, ST, KD_CLAMP_I(a, b, c)); break;

#define KD_DEF_TERNARY(SFX, DT, T, CT, LD, ST, MS, K, UT)                                     \
  static void kd_ternary_loop_##SFX(void *ctx, char **data, const int64_t *strides, int64_t n) { \
    kd_ternary_ctx *x_ = (kd_ternary_ctx *)ctx;                                               \
    switch (x_->code) {                                                                       \
      KD_TERNARY_CASES_##K(T, CT, LD, ST, MS, UT, x_)                                         \
      default: break;                                                                         \
    }                                                                                         \
  }
KD_ROWS_ALL(KD_DEF_TERNARY)
#define KD_TERNARY_ENTRY(SFX, DT, ...) KD_LOOP_ENTRY(kd_ternary_loop_, SFX, DT)
static const kd_iter_loop_fn kd_ternary_loops[KD_DTYPE_COUNT] = {KD_ROWS_ALL(KD_TERNARY_ENTRY)};

/* PyTorch's C++ type names, used by lerp's dtype messages */
static const char *kd_ternary_cpp_name(kd_dtype t) {
  static const char *const n[KD_DTYPE_COUNT] = {
      [KD_DTYPE_F32] = "float", [KD_DTYPE_F64] = "double", [KD_DTYPE_F16] = "c10::Half",
      [KD_DTYPE_BF16] = "c10::BFloat16", [KD_DTYPE_I8] = "signed char", [KD_DTYPE_U8] = "unsigned char",
      [KD_DTYPE_I16] = "short int", [KD_DTYPE_I32] = "int", [KD_DTYPE_I64] = "long int", [KD_DTYPE_BOOL] = "bool",
  };
  return n[t];
}

/* The lowest (hi = false) or highest value of dtype dt, as a scalar: a missing clamp bound. */
static kd_scalar kd_ternary_limit(kd_dtype dt, bool hi) {
  switch (dt) {
    case KD_DTYPE_I8: return kd_scalar_i(hi ? INT8_MAX : INT8_MIN);
    case KD_DTYPE_U8: return kd_scalar_i(hi ? UINT8_MAX : 0);
    case KD_DTYPE_I16: return kd_scalar_i(hi ? INT16_MAX : INT16_MIN);
    case KD_DTYPE_I32: return kd_scalar_i(hi ? INT32_MAX : INT32_MIN);
    case KD_DTYPE_I64: return kd_scalar_i(hi ? INT64_MAX : INT64_MIN);
    case KD_DTYPE_BOOL: return kd_scalar_b(hi);
    default: return kd_scalar_f(hi ? INFINITY : -INFINITY);
  }
}

static bool kd_is_none(const kd_value *v) { return v->kind == KD_VALUE_NONE; }
static bool kd_is_tensor(const kd_value *v) { return v->kind == KD_VALUE_TENSOR; }

/* An operand converted to ct: a number into `buf`, a tensor as itself or a converted copy
 * (*tmp, to release). In place, a tensor that may overlap self (but is not self) is copied. */
static kd_status kd_ternary_operand(const kd_value *v, kd_dtype ct, const kd_tensor *self, bool inplace,
                                    uint64_t *buf, kd_tensor **tmp, kd_iter_operand *op) {
  *tmp = NULL;
  if (v->kind != KD_VALUE_TENSOR) {
    kd_scalar_store(v->v.s, ct, buf);
    *op = kd_cpu_scalar_operand(buf, ct);
    return KD_OK;
  }
  kd_tensor *t = v->v.t;
  if (inplace && t != self && kd_cpu_may_overlap(t, self)) {
    KD_TRY(kd_tensor_empty(t->sizes, t->ndim, ct, kd_tensor_device(t), tmp));
    kd_status st = kd_cpu_copy_into(*tmp, t);
    if (st != KD_OK) {
      kd_tensor_release(*tmp);
      *tmp = NULL;
      return st;
    }
  } else {
    KD_TRY(kd_cpu_cast(t, ct, false, tmp));
  }
  *op = kd_iter_operand_of(*tmp);
  return KD_OK;
}

KD_KERNEL(kd_cpu_ternary) {
  kd_tensor *self = args[0].v.t;
  bool inplace = kd_op_is_inplace(op);
  int code = op->code;
  kd_value x, y; /* the second and third operands (a clamp bound may be NONE) */
  kd_ternary_ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.code = code == KD_TERNARY_CLAMP_MIN || code == KD_TERNARY_CLAMP_MAX ? KD_TERNARY_CLAMP : code;
  if (code == KD_TERNARY_CLAMP_MIN) {
    x = args[1];
    y = kd_value_none();
  } else if (code == KD_TERNARY_CLAMP_MAX) {
    x = kd_value_none();
    y = args[1];
  } else {
    x = args[1];
    y = args[2];
  }
  for (int k = 0; k < 2; k++) {
    const kd_value *v = k ? &y : &x;
    if (v->kind != KD_VALUE_TENSOR && v->kind != KD_VALUE_SCALAR && v->kind != KD_VALUE_NONE)
      return kd_error(KD_ERR_TYPE, "%s(): expected a Tensor or a number", op->name);
  }

  /* compute dtype and PyTorch's checks */
  kd_dtype ct;
  kd_result_type_state rs;
  kd_result_type_init(&rs);
  kd_result_type_add_tensor(&rs, self->dtype, self->ndim);
  if (ctx.code == KD_TERNARY_CLAMP) {
    if (kd_is_none(&x) && kd_is_none(&y))
      return kd_error(KD_ERR_INVALID_ARGUMENT, "torch.clamp: At least one of 'min' or 'max' must not be None");
    /* torch 1.13: clamp with a single number bound that is NaN leaves self as it is */
    if (code == KD_TERNARY_CLAMP && !kd_is_tensor(&x) && !kd_is_tensor(&y)) {
      if (kd_is_none(&y) && x.v.s.kind == KD_KIND_FLOAT && x.v.s.v.f != x.v.s.v.f) x = kd_value_none();
      else if (kd_is_none(&x) && y.v.s.kind == KD_KIND_FLOAT && y.v.s.v.f != y.v.s.v.f) y = kd_value_none();
    }
    for (int k = 0; k < 2; k++) {
      const kd_value *v = k ? &y : &x;
      if (kd_is_tensor(v)) kd_result_type_add_tensor(&rs, v->v.t->dtype, v->v.t->ndim);
      else if (!kd_is_none(v)) kd_result_type_add_scalar(&rs, v->v.s);
    }
    ct = kd_result_type_finish(&rs);
    /* bool: only a single tensor bound (clamp_min/clamp_max of two bool tensors) */
    bool one_tensor = (kd_is_tensor(&x) && kd_is_none(&y)) || (kd_is_none(&x) && kd_is_tensor(&y));
    if (ct == KD_DTYPE_BOOL && !one_tensor) {
      const char *nm = code == KD_TERNARY_CLAMP_MIN ? "clamp_min_cpu" : code == KD_TERNARY_CLAMP_MAX ? "clamp_max_cpu"
                       : (kd_is_tensor(&x) || kd_is_tensor(&y)) ? "clamp_cpu"
                       : kd_is_none(&y) ? "clamp_min_cpu" : kd_is_none(&x) ? "clamp_max_cpu" : "clamp_scalar_cpu";
      return kd_error(KD_ERR_DTYPE, "\"%s\" not implemented for 'Bool'", nm);
    }
    for (int k = 0; k < 2; k++) {
      const kd_value *v = k ? &y : &x;
      if (v->kind == KD_VALUE_SCALAR) KD_TRY(kd_cpu_scalar_check_fits(v->v.s, ct));
    }
    if (kd_is_none(&x)) x = kd_value_scalar(kd_ternary_limit(ct, false));
    if (kd_is_none(&y)) y = kd_value_scalar(kd_ternary_limit(ct, true));
  } else if (code == KD_TERNARY_LERP) {
    if (!kd_is_tensor(&x)) return kd_error(KD_ERR_TYPE, "lerp(): argument 'end' must be a Tensor");
    if (x.v.t->dtype != self->dtype)
      return kd_error(KD_ERR_INVALID_ARGUMENT, "expected dtype %s for `end` but got dtype %s", kd_ternary_cpp_name(self->dtype),
                      kd_ternary_cpp_name(x.v.t->dtype));
    if (kd_is_tensor(&y) && y.v.t->dtype != self->dtype)
      return kd_error(KD_ERR_INVALID_ARGUMENT, "expected dtype %s for `weight` but got dtype %s", kd_ternary_cpp_name(self->dtype),
                      kd_ternary_cpp_name(y.v.t->dtype));
    if (!kd_dtype_is_float(self->dtype))
      return kd_error(KD_ERR_DTYPE, "\"%s\" not implemented for '%s'",
                      kd_is_tensor(&y) ? "lerp_kernel_tensor" : "lerp_kernel_scalar", kd_cpu_torch_name(self->dtype));
    if (kd_is_none(&y)) return kd_error(KD_ERR_TYPE, "lerp(): argument 'weight' must be a Tensor or a number");
    ct = self->dtype;
    if (!kd_is_tensor(&y)) {
      ctx.code = KD_TX_LERP_SCALAR;
      ctx.value_f = kd_scalar_to_double(y.v.s);
    }
  } else { /* addcmul, addcdiv */
    if (!kd_is_tensor(&x) || !kd_is_tensor(&y))
      return kd_error(KD_ERR_TYPE, "%s(): arguments 'tensor1' and 'tensor2' must be Tensors", op->name);
    if (code == KD_TERNARY_ADDCDIV && !kd_dtype_is_float(x.v.t->dtype) && !kd_dtype_is_float(y.v.t->dtype))
      return kd_error(KD_ERR_INVALID_ARGUMENT,
                      "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will "
                      "perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
                      "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer "
                      "inputs and as (input + value * tensor1 / tensor2) for float inputs. The future addcdiv "
                      "behavior is just the latter implementation: (input + value * tensor1 / tensor2), for all "
                      "dtypes.");
    kd_result_type_add_tensor(&rs, x.v.t->dtype, x.v.t->ndim);
    kd_result_type_add_tensor(&rs, y.v.t->dtype, y.v.t->ndim);
    ct = kd_result_type_finish(&rs);
    if (ct == KD_DTYPE_BOOL)
      return kd_error(KD_ERR_DTYPE, "\"%s\" not implemented for 'Bool'",
                      code == KD_TERNARY_ADDCMUL ? "addcmul_cpu_out" : "addcdiv_cpu_out");
    kd_scalar v = op->nargs > 3 && args[3].kind == KD_VALUE_SCALAR ? args[3].v.s : kd_scalar_i(1);
    ctx.value_f = kd_scalar_to_double(v);
    ctx.value_i = kd_scalar_to_int(v);
  }

  /* output: a new tensor of the broadcast shape, self, or a temporary converted into self */
  kd_tensor *out = NULL;
  kd_status st = KD_OK;
  if (inplace) {
    KD_TRY(kd_cpu_check_inplace_cast(ct, self->dtype));
    KD_TRY(kd_cpu_check_no_internal_overlap(self));
    if (ct == self->dtype) {
      out = self;
      kd_tensor_retain(out);
    } else {
      /* the broadcast check against self comes from kd_iter_build on the temporary */
      st = kd_tensor_empty(self->sizes, self->ndim, ct, kd_tensor_device(self), &out);
    }
  } else {
    int64_t shape[KD_MAX_DIMS], tmp[KD_MAX_DIMS];
    int nd = self->ndim;
    memcpy(shape, self->sizes, sizeof(int64_t) * nd);
    for (int k = 0; k < 2; k++) {
      const kd_value *v = k ? &y : &x;
      if (!kd_is_tensor(v)) continue;
      int nt;
      KD_TRY(kd_shape_broadcast(shape, nd, v->v.t->sizes, v->v.t->ndim, tmp, &nt));
      memcpy(shape, tmp, sizeof(int64_t) * nt);
      nd = nt;
    }
    st = kd_tensor_empty(shape, nd, ct, kd_tensor_device(self), &out);
  }
  if (st != KD_OK) return st;

  kd_tensor *ta = NULL, *tb = NULL, *tc = NULL;
  uint64_t bb = 0, bc = 0;
  kd_iter_operand ops[4];
  ops[0] = kd_iter_operand_of(out);
  st = kd_cpu_cast(self, ct, false, &ta);
  if (st == KD_OK) {
    ops[1] = kd_iter_operand_of(ta);
    st = kd_ternary_operand(&x, ct, self, inplace, &bb, &tb, &ops[2]);
  }
  if (st == KD_OK) st = kd_ternary_operand(&y, ct, self, inplace, &bc, &tc, &ops[3]);
  if (st == KD_OK) {
    kd_iter it;
    st = kd_iter_build(&it, ops, 4, 1, 0);
    kd_ew_desc d = {KD_EW_TERNARY, ctx.code, {ctx.value_f, 0, 0, 0}, {ctx.value_i, 0}};
    if (st == KD_OK) st = kd_cpu_iter_run(kd_tensor_device(out), &it, ops, kd_ternary_loops[ct], &ctx, &d);
  }
  if (ta) kd_tensor_release(ta);
  if (tb) kd_tensor_release(tb);
  if (tc) kd_tensor_release(tc);
  return kd_cpu_finish_out(st, inplace, self, out, outs);
}
