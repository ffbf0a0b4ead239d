/* special_composites.c - the special family's ops written with other ops through kd_call, as
 * PyTorch 1.13 writes them, so they run on every device and autograd differentiates them
 * through the ops they call:
 *   mvlgamma(self, p)        lgamma(self.unsqueeze(-1) + arange(-(p - 1) / 2, 1/2, 1/2)).sum(-1)
 *                            + p (p - 1) / 4 log(pi); integers compute in float32
 *   ldexp(self, other)       self * exp2(other) (PyTorch: self * pow(2.0, other); the same dtypes)
 *   floatPower(self, exp)    pow(self.to(float64), exponent.to(float64)) */
#include <math.h>

#include "ops/kernel.h"

/* x converted to dt (a new reference either way). */
static kd_status kd_sc_to(kd_tensor *x, kd_dtype dt, kd_tensor **out) {
  kd_value a[4] = {kd_value_tensor(x), kd_value_dtype(dt), kd_value_none(), kd_value_bool(false)};
  return kd_call1(KD_OP_to, a, out);
}

KD_KERNEL(kd_composite_mvlgamma) {
  (void)op;
  (void)ks;
  kd_tensor *self = args[0].v.t;
  const int64_t p = args[1].v.i;
  if (self->dtype == KD_DTYPE_BOOL) return kd_error(KD_ERR_INVALID_ARGUMENT, "The input tensor may not be a boolean tensor.");
  if (p < 1) return kd_error(KD_ERR_INVALID_ARGUMENT, "p has to be greater than or equal to 1");
  const kd_dtype dt = kd_dtype_is_float(self->dtype) ? self->dtype : KD_DTYPE_DEFAULT;
  kd_tensor *x = NULL, *offs = NULL, *xu = NULL, *sh = NULL, *lg = NULL, *s = NULL;
  kd_status st = kd_sc_to(self, dt, &x);
  if (st == KD_OK) { /* offsets -(p-1)/2, ..., -1/2, 0: p of them */
    kd_value a[5] = {kd_value_scalar(kd_scalar_f(-0.5 * (double)(p - 1))), kd_value_scalar(kd_scalar_f(0.25)),
                     kd_value_scalar(kd_scalar_f(0.5)), kd_value_dtype(dt), kd_value_device(kd_tensor_device(self))};
    st = kd_call1(KD_OP_arange, a, &offs);
  }
  if (st == KD_OK) {
    kd_value a[2] = {kd_value_tensor(x), kd_value_int(-1)};
    st = kd_call1(KD_OP_unsqueeze, a, &xu);
  }
  if (st == KD_OK) {
    kd_value a[3] = {kd_value_tensor(xu), kd_value_tensor(offs), kd_value_scalar(kd_scalar_i(1))};
    st = kd_call1(KD_OP_add, a, &sh);
  }
  if (st == KD_OK) {
    kd_value a[1] = {kd_value_tensor(sh)};
    st = kd_call1(KD_OP_lgamma, a, &lg);
  }
  if (st == KD_OK) {
    const int64_t last = -1;
    kd_value a[4] = {kd_value_tensor(lg), kd_value_intlist(&last, 1), kd_value_bool(false), kd_value_none()};
    st = kd_call1(KD_OP_sum, a, &s);
  }
  kd_tensor *r = NULL;
  if (st == KD_OK) {
    const double c = (double)p * (double)(p - 1) / 4.0 * 1.1447298858494002; /* log(pi) */
    kd_value a[3] = {kd_value_tensor(s), kd_value_scalar(kd_scalar_f(c)), kd_value_scalar(kd_scalar_i(1))};
    st = kd_call1(KD_OP_add, a, &r);
  }
  kd_tensor *tmp[6] = {x, offs, xu, sh, lg, s};
  for (int i = 0; i < 6; i++)
    if (tmp[i]) kd_tensor_release(tmp[i]);
  if (st != KD_OK) return st;
  kd_out_take(outs, 0, r);
  return KD_OK;
}

KD_KERNEL(kd_composite_ldexp) {
  (void)op;
  (void)ks;
  kd_tensor *e = NULL, *r = NULL;
  kd_value a1[1] = {args[1]};
  KD_TRY(kd_call1(KD_OP_exp2, a1, &e));
  kd_value a2[2] = {args[0], kd_value_tensor(e)};
  kd_status st = kd_call1(KD_OP_mul, a2, &r);
  kd_tensor_release(e);
  if (st != KD_OK) return st;
  kd_out_take(outs, 0, r);
  return KD_OK;
}

KD_KERNEL(kd_composite_float_power) {
  (void)op;
  (void)ks;
  kd_tensor *x = NULL, *y = NULL, *r = NULL;
  KD_TRY(kd_sc_to(args[0].v.t, KD_DTYPE_F64, &x));
  kd_value e = args[1];
  kd_status st = KD_OK;
  if (e.kind == KD_VALUE_TENSOR) {
    st = kd_sc_to(e.v.t, KD_DTYPE_F64, &y);
    e = kd_value_tensor(y);
  } else if (e.kind == KD_VALUE_SCALAR) {
    e = kd_value_scalar(kd_scalar_f(kd_scalar_to_double(e.v.s)));
  }
  if (st == KD_OK) {
    kd_value a[2] = {kd_value_tensor(x), e};
    st = kd_call1(KD_OP_pow, a, &r);
  }
  kd_tensor_release(x);
  if (y) kd_tensor_release(y);
  if (st != KD_OK) return st;
  kd_out_take(outs, 0, r);
  return KD_OK;
}
