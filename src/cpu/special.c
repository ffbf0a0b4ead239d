/* special.c - CPU kernels of the special family (oplist/special.js): the pointwise special
 * functions of one input (lgamma, digamma, polygamma, erfcx, entr, i0, i0e, i1, i1e, ndtr, ndtri,
 * logNdtr, sinc, logit, the Bessel and Airy functions) and of two (xlogy, xlog1py, zeta, igamma,
 * igammac, logaddexp, logaddexp2, nextafter, copysign, heaviside, gcd, lcm, the orthogonal
 * polynomials of x and degree n: KD_SX_POLYNOMIAL with the kind), one kernel switching on the
 * KD_SPECIAL_* code, and frexp (two passes: mantissa, then exponent). The functions themselves
 * are special_math.h, which cuda/ops_special.cu shares; device tensors run the same kernel up to
 * its one iterator pass (Note [Device kernels through the CPU kernels] in ops/ew_codes.h, family
 * KD_EW_SPECIAL).
 * Dtypes as PyTorch: integer and bool inputs compute in float32 (the default dtype), except
 * igamma/igammac/logaddexp/logaddexp2/nextafter (floating only: PyTorch's "not implemented"),
 * gcd/lcm (integers only) and heaviside (any dtype, both the same). float16/bfloat16 compute in
 * float32 (nextafter of them steps in their own format). Two inputs promote as
 * torch.result_type. */
#include "cpu/cpu_loops.h"
#include "cpu/special_math.h"
#include "ops/ew_codes.h"

typedef struct kd_special_ctx {
  int code;
  double p0; /* polygamma's n, logit's eps (< 0: none) */
} kd_special_ctx;

/* the special_math.h function for the compute type of x */
#define KD_SM(fn, x) _Generic((x), float: kd_sm_##fn##_f, double: kd_sm_##fn##_d)
#define KD_SM_NEXTAFTER(a, b) _Generic((a), float: nextafterf, double: nextafter)(a, b)

#define KD_SPECIAL_CASES_F(DT, T, CT, LD, ST, c)                                              \
  case KD_SPECIAL_LGAMMA: KD_LOOP1(T, T, CT, LD, ST, _Generic(x, float: kd_sm_lgammaf_r, double: kd_sm_lgamma_r)(x)); break; \
  case KD_SPECIAL_DIGAMMA: KD_LOOP1(T, T, CT, LD, ST, KD_SM(digamma, x)(x)); break;            \
  case KD_SPECIAL_POLYGAMMA: {                                                                \
    const int64_t n_ = (int64_t)(c)->p0;                                                      \
    KD_LOOP1(T, T, CT, LD, ST, KD_SM(polygamma, x)(x, n_));                                   \
    break;                                                                                    \
  }                                                                                           \
  case KD_SPECIAL_ERFCX: KD_LOOP1(T, T, CT, LD, ST, KD_SM(erfcx, x)(x)); break;                \
  case KD_SPECIAL_ENTR: KD_LOOP1(T, T, CT, LD, ST, KD_SM(entr, x)(x)); break;                  \
  case KD_SPECIAL_I0: KD_LOOP1(T, T, CT, LD, ST, KD_SM(i0, x)(x)); break;                      \
  case KD_SPECIAL_I0E: KD_LOOP1(T, T, CT, LD, ST, KD_SM(i0e, x)(x)); break;                    \
  case KD_SPECIAL_I1: KD_LOOP1(T, T, CT, LD, ST, KD_SM(i1, x)(x)); break;                      \
  case KD_SPECIAL_I1E: KD_LOOP1(T, T, CT, LD, ST, KD_SM(i1e, x)(x)); break;                    \
  case KD_SPECIAL_NDTR: KD_LOOP1(T, T, CT, LD, ST, KD_SM(ndtr, x)(x)); break;                  \
  case KD_SPECIAL_NDTRI: KD_LOOP1(T, T, CT, LD, ST, KD_SM(ndtri, x)(x)); break;                \
  case KD_SPECIAL_LOG_NDTR: KD_LOOP1(T, T, CT, LD, ST, KD_SM(log_ndtr, x)(x)); break;          \
  case KD_SPECIAL_SINC: KD_LOOP1(T, T, CT, LD, ST, KD_SM(sinc, x)(x)); break;                  \
  case KD_SPECIAL_LOGIT: {                                                                    \
    const CT eps_ = (CT)(c)->p0;                                                              \
    KD_LOOP1(T, T, CT, LD, ST, KD_SM(logit, x)(x, eps_));                                     \
    break;                                                                                    \
  }                                                                                           \
  case KD_SPECIAL_BESSEL_J0: KD_LOOP1(T, T, CT, LD, ST, KD_SM(bessel_j0, x)(x)); break;        \
  case KD_SPECIAL_BESSEL_J1: KD_LOOP1(T, T, CT, LD, ST, KD_SM(bessel_j1, x)(x)); break;        \
  case KD_SPECIAL_BESSEL_Y0: KD_LOOP1(T, T, CT, LD, ST, KD_SM(bessel_y0, x)(x)); break;        \
  case KD_SPECIAL_BESSEL_Y1: KD_LOOP1(T, T, CT, LD, ST, KD_SM(bessel_y1, x)(x)); break;        \
  case KD_SPECIAL_MODIFIED_BESSEL_I0: KD_LOOP1(T, T, CT, LD, ST, KD_SM(i0, x)(x)); break;      \
  case KD_SPECIAL_MODIFIED_BESSEL_I1: KD_LOOP1(T, T, CT, LD, ST, KD_SM(i1, x)(x)); break;      \
  case KD_SPECIAL_MODIFIED_BESSEL_K0: KD_LOOP1(T, T, CT, LD, ST, KD_SM(bessel_k, x)(x, 0, 0)); break; \
  case KD_SPECIAL_MODIFIED_BESSEL_K1: KD_LOOP1(T, T, CT, LD, ST, KD_SM(bessel_k, x)(x, 1, 0)); break; \
  case KD_SPECIAL_SCALED_MODIFIED_BESSEL_K0: KD_LOOP1(T, T, CT, LD, ST, KD_SM(bessel_k, x)(x, 0, 1)); break; \
  case KD_SPECIAL_SCALED_MODIFIED_BESSEL_K1: KD_LOOP1(T, T, CT, LD, ST, KD_SM(bessel_k, x)(x, 1, 1)); break; \
  case KD_SPECIAL_SPHERICAL_BESSEL_J0: KD_LOOP1(T, T, CT, LD, ST, KD_SM(spherical_bessel_j0, x)(x)); break; \
  case KD_SPECIAL_AIRY_AI: KD_LOOP1(T, T, CT, LD, ST, KD_SM(airy_ai, x)(x)); break;            \
  case KD_SX_POLYNOMIAL: {                                                                    \
    const int kind_ = (int)(c)->p0;                                                           \
    KD_LOOP2(T, T, CT, LD, ST, KD_SM(polynomial, a)(a, b, kind_));                            \
    break;                                                                                    \
  }                                                                                           \
  case KD_SPECIAL_FREXP: KD_LOOP1(T, T, CT, LD, ST, ({ int e_; (CT)_Generic(x, float: frexpf, double: frexp)(x, &e_); })); break; \
  case KD_SX_FREXP_EXPONENT:                                                                  \
    KD_LOOP1(int32_t, T, CT, LD, KD_ST_ID, ({ int e_ = 0; if (isfinite(x)) _Generic(x, float: frexpf, double: frexp)(x, &e_); (int32_t)e_; })); \
    break;                                                                                    \
  case KD_SPECIAL_XLOGY: KD_LOOP2(T, T, CT, LD, ST, KD_SM(xlogy, a)(a, b)); break;             \
  case KD_SPECIAL_XLOG1PY: KD_LOOP2(T, T, CT, LD, ST, KD_SM(xlog1py, a)(a, b)); break;         \
  case KD_SPECIAL_ZETA: KD_LOOP2(T, T, CT, LD, ST, (CT)kd_sm_zeta((double)a, (double)b)); break; \
  case KD_SPECIAL_IGAMMA: KD_LOOP2(T, T, CT, LD, ST, KD_SM(igamma, a)(a, b)); break;           \
  case KD_SPECIAL_IGAMMAC: KD_LOOP2(T, T, CT, LD, ST, KD_SM(igammac, a)(a, b)); break;         \
  case KD_SPECIAL_LOGADDEXP: KD_LOOP2(T, T, CT, LD, ST, KD_SM(logaddexp, a)(a, b)); break;     \
  case KD_SPECIAL_LOGADDEXP2: KD_LOOP2(T, T, CT, LD, ST, KD_SM(logaddexp2, a)(a, b)); break;   \
  case KD_SPECIAL_NEXTAFTER:                                                                  \
    KD_LOOP2(T, T, CT, LD, ST, sizeof(T) == 2 ? (CT)kd_sm_nextafter16((float)a, (float)b, (DT) == KD_DTYPE_BF16) \
                                              : KD_SM_NEXTAFTER(a, b));                       \
    break;                                                                                    \
  case KD_SPECIAL_COPYSIGN: KD_LOOP2(T, T, CT, LD, ST, _Generic(a, float: copysignf, double: copysign)(a, b)); break; \
  case KD_SPECIAL_HEAVISIDE: KD_LOOP2(T, T, CT, LD, ST, a == 0 ? b : (CT)(a > 0)); break;

/* integers: gcd, lcm (PyTorch's: lcm = |a / gcd * b|, 0 when gcd is 0) and heaviside */
#define KD_SPECIAL_CASES_I(DT, T, CT, LD, ST, c)                                              \
  case KD_SPECIAL_GCD: KD_LOOP2(T, T, CT, LD, ST, (CT)kd_sm_gcd((int64_t)a, (int64_t)b)); break; \
  case KD_SPECIAL_LCM:                                                                        \
    KD_LOOP2(T, T, CT, LD, ST, ({ const int64_t g_ = kd_sm_gcd((int64_t)a, (int64_t)b);       \
                                  const CT l_ = g_ == 0 ? (CT)0 : (CT)((CT)(a / (CT)g_) * b); \
                                  KD_IS_NEG(l_) ? (CT)(0 - l_) : l_; }));                     \
    break;                                                                                    \
  case KD_SPECIAL_HEAVISIDE: KD_LOOP2(T, T, CT, LD, ST, a == 0 ? b : (CT)(a > 0)); break;
#define KD_SPECIAL_CASES_B(DT, T, CT, LD, ST, c)                                              \
  case KD_SPECIAL_HEAVISIDE: KD_LOOP2(T, T, CT, LD, ST, a == 0 ? b : a); break;

#define KD_DEF_SPECIAL(SFX, DT, T, CT, LD, ST, MS, K, UT)                                     \
  static void kd_special_loop_##SFX(void *ctx, char **data, const int64_t *strides, int64_t n) { \
    const kd_special_ctx *c_ = (const kd_special_ctx *)ctx;                                   \
    switch (c_->code) {                                                                       \
      KD_SPECIAL_CASES_##K(DT, T, CT, LD, ST, c_)                                             \
      default: break;                                                                         \
    }                                                                                         \
  }
KD_ROWS_ALL(KD_DEF_SPECIAL)
#define KD_SPECIAL_ENTRY(SFX, DT, ...) KD_LOOP_ENTRY(kd_special_loop_, SFX, DT)
static const kd_iter_loop_fn kd_special_loops[KD_DTYPE_COUNT] = {KD_ROWS_ALL(KD_SPECIAL_ENTRY)};

/* How an op treats dtypes. */
typedef enum {
  KD_SCLS_TO_FLOAT,   /* integers and bool compute in float32 */
  KD_SCLS_FLOAT_ONLY, /* integers and bool: PyTorch's "not implemented" */
  KD_SCLS_INT_ONLY,   /* gcd, lcm: floating and bool are "not implemented" */
  KD_SCLS_SAME,       /* heaviside: any dtype, both operands the same */
} kd_special_class;

/* The class of a code, its number of tensor inputs and PyTorch's kernel name for messages. */
static kd_special_class kd_special_class_of(int code, int *nin, const char **name) {
  *nin = 2;
  *name = NULL;
  switch (code) {
    case KD_SPECIAL_XLOGY: case KD_SPECIAL_XLOG1PY: case KD_SPECIAL_ZETA: case KD_SPECIAL_COPYSIGN:
    case KD_SX_POLYNOMIAL:
      return KD_SCLS_TO_FLOAT;
    case KD_SPECIAL_IGAMMA: *name = "igamma_cpu"; return KD_SCLS_FLOAT_ONLY;
    case KD_SPECIAL_IGAMMAC: *name = "igammac_cpu"; return KD_SCLS_FLOAT_ONLY;
    case KD_SPECIAL_LOGADDEXP: *name = "logaddexp_cpu"; return KD_SCLS_FLOAT_ONLY;
    case KD_SPECIAL_LOGADDEXP2: *name = "logaddexp2_cpu"; return KD_SCLS_FLOAT_ONLY;
    case KD_SPECIAL_NEXTAFTER: *name = "nextafter_cpu"; return KD_SCLS_FLOAT_ONLY;
    case KD_SPECIAL_GCD: *name = "gcd_cpu"; return KD_SCLS_INT_ONLY;
    case KD_SPECIAL_LCM: *name = "lcm_cpu"; return KD_SCLS_INT_ONLY;
    case KD_SPECIAL_HEAVISIDE: return KD_SCLS_SAME;
    default: *nin = 1; return KD_SCLS_TO_FLOAT;
  }
}

/* An operand (tensor or number) as an iterator operand of dtype ct; a number lands in buf. */
static kd_status kd_special_operand(const kd_value *v, kd_dtype ct, uint64_t *buf, kd_tensor **tmp,
                                    kd_iter_operand *op) {
  *tmp = NULL;
  if (v->kind == KD_VALUE_SCALAR) {
    kd_scalar_store(v->v.s, ct, buf);
    *op = kd_cpu_scalar_operand(buf, ct);
    return KD_OK;
  }
  KD_TRY(kd_cpu_cast(v->v.t, ct, false, tmp));
  *op = kd_iter_operand_of(*tmp);
  return KD_OK;
}

/* One pass out = f(in...) over the iteration of ops[0..nops). */
static kd_status kd_special_pass(kd_tensor *out, kd_iter_operand *ops, int nops, kd_dtype ct, kd_special_ctx *ctx) {
  kd_iter it;
  KD_TRY(kd_iter_build(&it, ops, nops, 1, 0));
  kd_ew_desc d = {KD_EW_SPECIAL, ctx->code, {ctx->p0, 0, 0, 0}, {0, 0}};
  return kd_cpu_iter_run(kd_tensor_device(out), &it, ops, kd_special_loops[ct], ctx, &d);
}

/* frexp(self) -> (mantissa, exponent int32): two passes over self. */
static kd_status kd_special_frexp(kd_tensor *self, kd_value *outs) {
  if (!kd_dtype_is_float(self->dtype))
    return kd_error(KD_ERR_INVALID_ARGUMENT, "torch.frexp() only supports floating-point dtypes");
  kd_tensor *m = NULL, *e = NULL;
  KD_TRY(kd_tensor_empty(self->sizes, self->ndim, self->dtype, kd_tensor_device(self), &m));
  kd_status st = kd_tensor_empty(self->sizes, self->ndim, KD_DTYPE_I32, kd_tensor_device(self), &e);
  kd_special_ctx ctx = {KD_SPECIAL_FREXP, 0};
  if (st == KD_OK) {
    kd_iter_operand ops[2] = {kd_iter_operand_of(m), kd_iter_operand_of(self)};
    st = kd_special_pass(m, ops, 2, self->dtype, &ctx);
  }
  if (st == KD_OK) {
    kd_iter_operand ops[2] = {kd_iter_operand_of(e), kd_iter_operand_of(self)};
    ctx.code = KD_SX_FREXP_EXPONENT;
    st = kd_special_pass(e, ops, 2, self->dtype, &ctx);
  }
  if (st != KD_OK) {
    kd_tensor_release(m);
    if (e) kd_tensor_release(e);
    return st;
  }
  kd_out_take(outs, 0, m);
  kd_out_take(outs, 1, e);
  return KD_OK;
}

/* Reads the op's parameters; checks their values. */
static kd_status kd_special_params(const kd_op_info *op, const kd_value *args, kd_special_ctx *c) {
  c->code = op->code;
  c->p0 = 0;
  if (op->code == KD_SPECIAL_POLYGAMMA) {
    if (args[0].v.i < 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "polygamma(n, x) does not support negative n.");
    c->p0 = (double)args[0].v.i;
  } else if (op->code == KD_SPECIAL_LOGIT) {
    c->p0 = args[1].kind == KD_VALUE_DOUBLE ? args[1].v.d : -1.0;
  } else {
    static const int polys[12] = {
        KD_SPECIAL_CHEBYSHEV_POLYNOMIAL_T, KD_SPECIAL_CHEBYSHEV_POLYNOMIAL_U, KD_SPECIAL_CHEBYSHEV_POLYNOMIAL_V,
        KD_SPECIAL_CHEBYSHEV_POLYNOMIAL_W, KD_SPECIAL_SHIFTED_CHEBYSHEV_POLYNOMIAL_T,
        KD_SPECIAL_SHIFTED_CHEBYSHEV_POLYNOMIAL_U, KD_SPECIAL_SHIFTED_CHEBYSHEV_POLYNOMIAL_V,
        KD_SPECIAL_SHIFTED_CHEBYSHEV_POLYNOMIAL_W, KD_SPECIAL_HERMITE_POLYNOMIAL_H, KD_SPECIAL_HERMITE_POLYNOMIAL_HE,
        KD_SPECIAL_LAGUERRE_POLYNOMIAL_L, KD_SPECIAL_LEGENDRE_POLYNOMIAL_P};
    for (int k = 0; k < 12; k++) /* the kind of special_math.h's polynomial() */
      if (op->code == polys[k]) {
        c->code = KD_SX_POLYNOMIAL;
        c->p0 = k;
      }
  }
  return KD_OK;
}

KD_KERNEL(kd_cpu_special) {
  const int tensor_arg = op->code == KD_SPECIAL_POLYGAMMA ? 1 : 0; /* polygamma(int n, Tensor self) */
  kd_tensor *self = args[tensor_arg].v.t;
  if (op->code == KD_SPECIAL_FREXP) return kd_special_frexp(self, outs);
  const bool inplace = kd_op_is_inplace(op);
  kd_special_ctx ctx;
  KD_TRY(kd_special_params(op, args, &ctx));
  int nin;
  const char *kname;
  const kd_special_class cls = kd_special_class_of(ctx.code, &nin, &kname);
  const kd_value *other = nin == 2 ? &args[1] : NULL;
  if (other && other->kind != KD_VALUE_TENSOR && other->kind != KD_VALUE_SCALAR)
    return kd_error(KD_ERR_TYPE, "%s(): argument 'other' must be a Tensor or a number", op->name);

  /* the compute dtype */
  kd_dtype rt = self->dtype;
  if (other) {
    kd_result_type_state rs;
    kd_result_type_init(&rs);
    kd_result_type_add_tensor(&rs, self->dtype, self->ndim);
    if (other->kind == KD_VALUE_TENSOR) kd_result_type_add_tensor(&rs, other->v.t->dtype, other->v.t->ndim);
    else kd_result_type_add_scalar(&rs, other->v.s);
    rt = kd_result_type_finish(&rs);
  }
  kd_dtype ct = rt;
  switch (cls) {
    case KD_SCLS_TO_FLOAT: if (!kd_dtype_is_float(rt)) ct = KD_DTYPE_DEFAULT; break;
    case KD_SCLS_FLOAT_ONLY:
      if (!kd_dtype_is_float(rt))
        return kd_error(KD_ERR_DTYPE, "\"%s\" not implemented for '%s'", kname, kd_cpu_torch_name(rt));
      break;
    case KD_SCLS_INT_ONLY:
      if (!kd_dtype_is_int(rt))
        return kd_error(KD_ERR_DTYPE, "\"%s\" not implemented for '%s'", kname, kd_cpu_torch_name(rt));
      break;
    case KD_SCLS_SAME:
      if (other->v.t->dtype != self->dtype)
        return kd_error(KD_ERR_INVALID_ARGUMENT, "heaviside is not yet implemented for tensors with different dtypes");
      break;
  }

  /* the output: a fresh tensor of the broadcast shape, self, or a temporary converted into self */
  kd_tensor *out = NULL;
  if (inplace) {
    KD_TRY(kd_cpu_check_inplace_cast(ct, self->dtype));
    KD_TRY(kd_cpu_check_no_internal_overlap(self));
  }
  int64_t shape[KD_MAX_DIMS];
  int nd = self->ndim;
  memcpy(shape, self->sizes, sizeof(int64_t) * (size_t)nd);
  if (other && other->kind == KD_VALUE_TENSOR && !inplace)
    KD_TRY(kd_shape_broadcast(self->sizes, self->ndim, other->v.t->sizes, other->v.t->ndim, shape, &nd));
  if (inplace && ct == self->dtype) {
    out = self;
    kd_tensor_retain(out);
  } else {
    KD_TRY(kd_tensor_empty(shape, nd, ct, kd_tensor_device(self), &out));
  }

  kd_tensor *a = NULL, *b = NULL, *ocopy = NULL;
  uint64_t sbuf = 0;
  kd_iter_operand ops[3];
  ops[0] = kd_iter_operand_of(out);
  kd_status st = kd_cpu_cast(self, ct, false, &a);
  if (st == KD_OK) ops[1] = kd_iter_operand_of(a);
  if (st == KD_OK && other) {
    kd_value ov = *other;
    /* in place, an `other` that partially overlaps self is read from a copy first */
    if (inplace && other->kind == KD_VALUE_TENSOR && other->v.t != self && kd_cpu_may_overlap(other->v.t, self)) {
      kd_tensor *o = other->v.t;
      st = kd_tensor_empty(o->sizes, o->ndim, o->dtype, kd_tensor_device(o), &ocopy);
      if (st == KD_OK) st = kd_cpu_copy_into(ocopy, o);
      ov = kd_value_tensor(ocopy);
    }
    if (st == KD_OK) st = kd_special_operand(&ov, ct, &sbuf, &b, &ops[2]);
  }
  if (st == KD_OK) st = kd_special_pass(out, ops, other ? 3 : 2, ct, &ctx);
  if (a) kd_tensor_release(a);
  if (b) kd_tensor_release(b);
  if (ocopy) kd_tensor_release(ocopy);
  return kd_cpu_finish_out(st, inplace, self, out, outs);
}
