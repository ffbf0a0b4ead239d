/* reduce_composites.c - the backward helpers of the reductions family written with other ops
 * through kd_call, so they run on every device and can themselves be differentiated:
 *   sumBackward(grad, sizes, dim, keepdim)   grad unsqueezed at the reduced dims (unless
 *                                            keepdim) and expanded to sizes
 *   meanBackward(...)                        the same divided by the reduced count
 *   varBackward(grad, self, dim, unbiased, keepdim, correction)
 *                                            2 * grad * (self - mean) / (N - correction)
 *   normBackward(grad, self, p, result, dim, keepdim)
 *                                            PyTorch's norm_backward, zero where the norm is 0
 * Every intermediate is released on every path (kd_rc_scope). */
#include <math.h>
#include <string.h>

#include "ops/kernel.h"

typedef struct kd_rc_scope {
  kd_tensor *t[24];
  int n;
} kd_rc_scope;

static void kd_rc_release(kd_rc_scope *s) {
  for (int i = 0; i < s->n; i++) kd_tensor_release(s->t[i]);
  s->n = 0;
}
/* Calls a one-output op and keeps its result in the scope. */
static kd_status kd_rc_call(kd_rc_scope *s, kd_op_id id, kd_value *args, kd_tensor **out) {
  if (s->n >= 24) return kd_error(KD_ERR_INTERNAL, "reduce composite: scope full");
  KD_TRY(kd_call1(id, args, out));
  s->t[s->n++] = *out;
  return KD_OK;
}
static kd_status kd_rc_bin(kd_rc_scope *s, kd_op_id id, kd_tensor *a, kd_value b, kd_tensor **out) {
  kd_value v[3] = {kd_value_tensor(a), b, kd_value_none()};
  return kd_rc_call(s, id, v, out);
}
static kd_value kd_rc_num(double x) { return kd_value_scalar(kd_scalar_f(x)); }

/* reduced[d] of an ndim-dim shape for dim (none or empty: all); returns the count. */
static kd_status kd_rc_reduced(const kd_value *dim, const int64_t *sizes, int nd, bool reduced[KD_MAX_DIMS], int64_t *count) {
  memset(reduced, 0, sizeof(bool) * KD_MAX_DIMS);
  bool all = dim->kind == KD_VALUE_NONE || (dim->kind == KD_VALUE_INTLIST && dim->v.ilist.n == 0);
  if (all) {
    for (int d = 0; d < nd; d++) reduced[d] = true;
  } else if (dim->kind == KD_VALUE_INT) {
    int w;
    KD_TRY(kd_shape_wrap_dim(dim->v.i, nd, &w));
    if (nd) reduced[w] = true;
  } else {
    for (int i = 0; i < dim->v.ilist.n; i++) {
      int w;
      KD_TRY(kd_shape_wrap_dim(dim->v.ilist.data[i], nd, &w));
      if (nd) reduced[w] = true;
    }
  }
  /* sizes may come from a caller of sumBackward/meanBackward: their product must not wrap */
  *count = 1;
  for (int d = 0; d < nd; d++)
    if (reduced[d] && kd_mul_overflows(*count, sizes[d], count))
      return kd_error(KD_ERR_INVALID_ARGUMENT, "numel: integer multiplication overflow");
  return KD_OK;
}

/* grad back on `sizes`, divided by `div` when div != 1. */
static kd_status kd_rc_expand(kd_rc_scope *s, kd_tensor *grad, const int64_t *sizes, int nd, const kd_value *dim,
                              bool keepdim, bool mean, kd_tensor **out) {
  bool reduced[KD_MAX_DIMS];
  int64_t count;
  KD_TRY(kd_rc_reduced(dim, sizes, nd, reduced, &count));
  kd_tensor *g = grad;
  if (mean) KD_TRY(kd_rc_bin(s, KD_OP_div, g, kd_rc_num((double)count), &g));
  if (!keepdim && g->ndim < nd)
    for (int d = 0; d < nd; d++)
      if (reduced[d]) {
        kd_value a[2] = {kd_value_tensor(g), kd_value_int(d)};
        KD_TRY(kd_rc_call(s, KD_OP_unsqueeze, a, &g));
      }
  static const int64_t none[1] = {0};
  kd_value a[2] = {kd_value_tensor(g), kd_value_intlist(nd ? sizes : none, nd)};
  return kd_rc_call(s, KD_OP_expand, a, out);
}

static kd_status kd_rc_finish(kd_rc_scope *s, kd_status st, kd_tensor *result, kd_value *outs) {
  if (st == KD_OK) kd_out_retain(outs, 0, result);
  kd_rc_release(s);
  return st;
}

/* sumBackward / meanBackward */
kd_status kd_composite_sum_backward(const kd_op_info *op, kd_keyset ks, kd_value *args, kd_value *outs) {
  (void)ks;
  kd_rc_scope s = {{0}, 0};
  kd_tensor *r = NULL;
  int nd = args[1].v.ilist.n;
  if (nd > KD_MAX_DIMS) return kd_error(KD_ERR_INVALID_ARGUMENT, "%s(): too many dims", op->name);
  kd_status st = kd_rc_expand(&s, args[0].v.t, args[1].v.ilist.data, nd, &args[2], args[3].v.b,
                              op->id == KD_OP_meanBackward, &r);
  return kd_rc_finish(&s, st, r, outs);
}

static kd_status kd_rc_var_backward(kd_rc_scope *s, kd_value *args, kd_tensor **out) {
  kd_tensor *grad = args[0].v.t, *self = args[1].v.t;
  double corr = args[3].kind == KD_VALUE_BOOL ? (args[3].v.b ? 1 : 0) : 1;
  if (args[5].kind == KD_VALUE_DOUBLE) corr = args[5].v.d;
  bool reduced[KD_MAX_DIMS];
  int64_t count;
  KD_TRY(kd_rc_reduced(&args[2], self->sizes, self->ndim, reduced, &count));
  double div = (double)count - corr > 0 ? (double)count - corr : 0;
  kd_tensor *g, *m, *c, *t;
  KD_TRY(kd_rc_expand(s, grad, self->sizes, self->ndim, &args[2], args[4].v.b, false, &g));
  kd_value ma[4] = {kd_value_tensor(self), args[2], kd_value_bool(true), kd_value_none()};
  KD_TRY(kd_rc_call(s, KD_OP_mean, ma, &m));
  kd_value sa[3] = {kd_value_tensor(self), kd_value_tensor(m), kd_value_none()};
  KD_TRY(kd_rc_call(s, KD_OP_sub, sa, &c));
  KD_TRY(kd_rc_bin(s, KD_OP_mul, c, kd_value_tensor(g), &t));
  return kd_rc_bin(s, KD_OP_mul, t, kd_rc_num(2.0 / div), out);
}

kd_status kd_composite_var_backward(const kd_op_info *op, kd_keyset ks, kd_value *args, kd_value *outs) {
  (void)op, (void)ks;
  kd_rc_scope s = {{0}, 0};
  kd_tensor *r = NULL;
  kd_status st = kd_rc_var_backward(&s, args, &r);
  return kd_rc_finish(&s, st, r, outs);
}

/* where(cond, 0, x) */
static kd_status kd_rc_zero_where(kd_rc_scope *s, kd_tensor *cond, kd_tensor *x, kd_tensor **out) {
  kd_value a[3] = {kd_value_tensor(cond), kd_value_scalar(kd_scalar_i(0)), kd_value_tensor(x)};
  return kd_rc_call(s, KD_OP_where, a, out);
}

static kd_status kd_rc_norm_backward(kd_rc_scope *s, kd_value *args, kd_tensor **out) {
  kd_tensor *grad = args[0].v.t, *self = args[1].v.t, *result = args[3].v.t;
  double p = args[2].kind == KD_VALUE_DOUBLE ? args[2].v.d : 2;
  bool keepdim = args[5].v.b;
  if (p == 0) {
    kd_value a[3] = {kd_value_tensor(self), kd_value_none(), kd_value_none()};
    return kd_rc_call(s, KD_OP_zerosLike, a, out);
  }
  kd_tensor *g, *r, *t, *u, *z, *sg, *ab;
  KD_TRY(kd_rc_expand(s, grad, self->sizes, self->ndim, &args[4], keepdim, false, &g));
  KD_TRY(kd_rc_expand(s, result, self->sizes, self->ndim, &args[4], keepdim, false, &r));
  /* sign(self) = where(self == 0, 0, self / |self|) */
  kd_value aa[1] = {kd_value_tensor(self)};
  KD_TRY(kd_rc_call(s, KD_OP_abs, aa, &ab));
  KD_TRY(kd_rc_bin(s, KD_OP_div, self, kd_value_tensor(ab), &t));
  KD_TRY(kd_rc_bin(s, KD_OP_eq, self, kd_rc_num(0), &z));
  KD_TRY(kd_rc_zero_where(s, z, t, &sg));
  if (p == 1) return kd_rc_bin(s, KD_OP_mul, sg, kd_value_tensor(g), out);
  if (isinf(p)) { /* evenly among the elements whose |x| is the norm */
    kd_tensor *mask, *cnt;
    KD_TRY(kd_rc_bin(s, KD_OP_eq, ab, kd_value_tensor(r), &mask));
    kd_value sa[4] = {kd_value_tensor(mask), args[4], kd_value_bool(true), kd_value_none()};
    KD_TRY(kd_rc_call(s, KD_OP_sum, sa, &cnt));
    KD_TRY(kd_rc_bin(s, KD_OP_mul, sg, kd_value_tensor(g), &t));
    KD_TRY(kd_rc_bin(s, KD_OP_mul, t, kd_value_tensor(mask), &u));
    return kd_rc_bin(s, KD_OP_div, u, kd_value_tensor(cnt), out);
  }
  if (p < 1) { /* PyTorch's: sign(x) |x|^(p-1) (0 where x is 0) grad norm^(1-p), which is 0 at a zero norm */
    kd_tensor *rp;
    KD_TRY(kd_rc_bin(s, KD_OP_pow, ab, kd_rc_num(p - 1), &u));
    KD_TRY(kd_rc_bin(s, KD_OP_mul, sg, kd_value_tensor(u), &t));
    KD_TRY(kd_rc_zero_where(s, z, t, &t));
    KD_TRY(kd_rc_bin(s, KD_OP_mul, t, kd_value_tensor(g), &t));
    KD_TRY(kd_rc_bin(s, KD_OP_pow, r, kd_rc_num(1 - p), &rp));
    return kd_rc_bin(s, KD_OP_mul, t, kd_value_tensor(rp), out);
  }
  /* sign(x) |x|^(p-1) grad / norm^(p-1), 0 where the norm is 0 (p > 1: where norm^(p-1) is) */
  if (p == 2) {
    KD_TRY(kd_rc_bin(s, KD_OP_mul, self, kd_value_tensor(g), &t));
  } else {
    KD_TRY(kd_rc_bin(s, KD_OP_pow, ab, kd_rc_num(p - 1), &u));
    KD_TRY(kd_rc_bin(s, KD_OP_mul, sg, kd_value_tensor(u), &t));
    KD_TRY(kd_rc_bin(s, KD_OP_mul, t, kd_value_tensor(g), &t));
    KD_TRY(kd_rc_bin(s, KD_OP_pow, r, kd_rc_num(p - 1), &r));
  }
  KD_TRY(kd_rc_bin(s, KD_OP_div, t, kd_value_tensor(r), &u));
  KD_TRY(kd_rc_bin(s, KD_OP_eq, r, kd_rc_num(0), &z));
  return kd_rc_zero_where(s, z, u, out);
}

kd_status kd_composite_norm_backward(const kd_op_info *op, kd_keyset ks, kd_value *args, kd_value *outs) {
  (void)op, (void)ks;
  kd_rc_scope s = {{0}, 0};
  kd_tensor *r = NULL;
  kd_status st = kd_rc_norm_backward(&s, args, &r);
  return kd_rc_finish(&s, st, r, outs);
}
