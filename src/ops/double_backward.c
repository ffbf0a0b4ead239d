/* double_backward.c - composites (kd._internal) that the backward formulas of internal backward
 * ops call for their own derivative (double backward), where the formula language alone is too
 * clumsy. Written with other ops through kd_call, so they run on every device and autograd
 * differentiates them in turn (triple backward):
 *   layerNormDoubleBackward  d/d input of <ggInput, layerNormBackward(gradOutput, input, ...)>,
 *                            the weighted gradOutput g given: with xhat = (x - mean) * rstd, sums
 *                            over the normalized dims and N their size,
 *                            A = sum(v g) - sum(v) sum(g) / N, B = sum(v xhat), C = sum(g xhat),
 *                            -rstd^2 / N * (xhat (A - 3 B C / N) + C (v - mean v) + B (g - mean g))
 *                            (mean and rstd as the functions of input they are)
 *   prodDoubleBackward       the Hessian of prod along dim times ggSelf, times gradOutput:
 *                            exact with zeros in the slice (0, 1, 2 or more zeros handled apart)
 *   maxPool2dDoubleBackward  the gradient of maxPool2dBackward w.r.t. gradOutput: ggInput
 *                            gathered at the argmax positions (recomputed when indices is null)
 * Every intermediate tensor goes into a kd_db_scope released at the end on every path. */
#include "ops/kernel.h"

#define KD_DB_SCOPE_MAX 64

typedef struct kd_db_scope {
  kd_tensor *t[KD_DB_SCOPE_MAX];
  int n;
} kd_db_scope;

static kd_status kd_db_keep(kd_db_scope *s, kd_tensor *t, kd_tensor **out) {
  if (s->n >= KD_DB_SCOPE_MAX) {
    kd_tensor_release(t);
    return kd_error(KD_ERR_INTERNAL, "double backward composite: scope full");
  }
  s->t[s->n++] = t;
  *out = t;
  return KD_OK;
}
static kd_status kd_db_call(kd_db_scope *s, kd_op_id op, kd_value *args, kd_tensor **out) {
  kd_tensor *t = NULL;
  KD_TRY(kd_call1(op, args, &t));
  return kd_db_keep(s, t, out);
}
static kd_value kd_db_t(kd_tensor *t) { return kd_value_tensor(t); }
static kd_value kd_db_f(double d) { return kd_value_scalar(kd_scalar_f(d)); }
/* add, sub, mul, div with a tensor or number second operand */
static kd_status kd_db_bin(kd_db_scope *s, kd_op_id op, kd_value a, kd_value b, kd_tensor **out) {
  kd_value v[3] = {a, b, op == KD_OP_add || op == KD_OP_sub ? kd_value_scalar(kd_scalar_i(1)) : kd_value_none()};
  return kd_db_call(s, op, v, out);
}
static kd_status kd_db_sum(kd_db_scope *s, kd_tensor *t, const int64_t *dims, int nd, kd_tensor **out) {
  kd_value a[4] = {kd_db_t(t), kd_value_intlist(dims, nd), kd_value_bool(true), kd_value_none()};
  return kd_db_call(s, KD_OP_sum, a, out);
}
static kd_status kd_db_where(kd_db_scope *s, kd_tensor *c, kd_value a, kd_value b, kd_tensor **out) {
  kd_value v[3] = {kd_db_t(c), a, b};
  return kd_db_call(s, KD_OP_where, v, out);
}
static kd_status kd_db_finish(kd_db_scope *s, kd_status st, kd_tensor *result, kd_value *outs) {
  if (st == KD_OK) kd_out_retain(outs, 0, result);
  for (int i = 0; i < s->n; i++) kd_tensor_release(s->t[i]);
  s->n = 0;
  return st;
}
#define KD_DB_TRY(expr)                                       \
  do {                                                        \
    st = (expr);                                              \
    if (st != KD_OK) return kd_db_finish(&s, st, NULL, outs); \
  } while (0)

/* ---- layerNormDoubleBackward(ggInput, g, input, normalizedShape, mean, rstd) ---- */
KD_KERNEL(kd_composite_layer_norm_double_backward) {
  (void)op;
  (void)ks;
  kd_db_scope s = {.n = 0};
  kd_status st;
  kd_tensor *v = args[0].v.t, *g = args[1].v.t, *x = args[2].v.t, *mean = args[4].v.t, *rstd = args[5].v.t;
  int k = (int)args[3].v.ilist.n;
  if (k < 1 || k > x->ndim) return kd_error(KD_ERR_SHAPE, "layerNormDoubleBackward: bad normalizedShape for input");
  int64_t dims[KD_MAX_DIMS];
  int64_t n = 1;
  for (int i = 0; i < k; i++) {
    dims[i] = x->ndim - k + i;
    n *= x->sizes[x->ndim - k + i];
  }
  double inv_n = n > 0 ? 1.0 / (double)n : 0.0;
  kd_tensor *xc, *xhat, *vg, *svg, *sv, *sg, *vx, *b, *gx, *cc, *a, *t, *bc, *out, *vm, *gm, *r2;
  KD_DB_TRY(kd_db_bin(&s, KD_OP_sub, kd_db_t(x), kd_db_t(mean), &xc));
  KD_DB_TRY(kd_db_bin(&s, KD_OP_mul, kd_db_t(xc), kd_db_t(rstd), &xhat));
  KD_DB_TRY(kd_db_bin(&s, KD_OP_mul, kd_db_t(v), kd_db_t(g), &vg));
  KD_DB_TRY(kd_db_sum(&s, vg, dims, k, &svg));
  KD_DB_TRY(kd_db_sum(&s, v, dims, k, &sv));
  KD_DB_TRY(kd_db_sum(&s, g, dims, k, &sg));
  KD_DB_TRY(kd_db_bin(&s, KD_OP_mul, kd_db_t(v), kd_db_t(xhat), &vx));
  KD_DB_TRY(kd_db_sum(&s, vx, dims, k, &b));
  KD_DB_TRY(kd_db_bin(&s, KD_OP_mul, kd_db_t(g), kd_db_t(xhat), &gx));
  KD_DB_TRY(kd_db_sum(&s, gx, dims, k, &cc));
  /* A - 3 B C / N = sum(v g) - (sum(v) sum(g) + 3 B C) / N */
  KD_DB_TRY(kd_db_bin(&s, KD_OP_mul, kd_db_t(sv), kd_db_t(sg), &a));
  KD_DB_TRY(kd_db_bin(&s, KD_OP_mul, kd_db_t(b), kd_db_t(cc), &bc));
  KD_DB_TRY(kd_db_bin(&s, KD_OP_mul, kd_db_t(bc), kd_db_f(3.0), &t));
  KD_DB_TRY(kd_db_bin(&s, KD_OP_add, kd_db_t(a), kd_db_t(t), &a));
  KD_DB_TRY(kd_db_bin(&s, KD_OP_mul, kd_db_t(a), kd_db_f(inv_n), &a));
  KD_DB_TRY(kd_db_bin(&s, KD_OP_sub, kd_db_t(svg), kd_db_t(a), &a));
  KD_DB_TRY(kd_db_bin(&s, KD_OP_mul, kd_db_t(xhat), kd_db_t(a), &out));
  /* + C (v - mean v) + B (g - mean g) */
  KD_DB_TRY(kd_db_bin(&s, KD_OP_mul, kd_db_t(sv), kd_db_f(inv_n), &vm));
  KD_DB_TRY(kd_db_bin(&s, KD_OP_sub, kd_db_t(v), kd_db_t(vm), &vm));
  KD_DB_TRY(kd_db_bin(&s, KD_OP_mul, kd_db_t(vm), kd_db_t(cc), &vm));
  KD_DB_TRY(kd_db_bin(&s, KD_OP_add, kd_db_t(out), kd_db_t(vm), &out));
  KD_DB_TRY(kd_db_bin(&s, KD_OP_mul, kd_db_t(sg), kd_db_f(inv_n), &gm));
  KD_DB_TRY(kd_db_bin(&s, KD_OP_sub, kd_db_t(g), kd_db_t(gm), &gm));
  KD_DB_TRY(kd_db_bin(&s, KD_OP_mul, kd_db_t(gm), kd_db_t(b), &gm));
  KD_DB_TRY(kd_db_bin(&s, KD_OP_add, kd_db_t(out), kd_db_t(gm), &out));
  /* times -rstd^2 / N */
  KD_DB_TRY(kd_db_bin(&s, KD_OP_mul, kd_db_t(rstd), kd_db_t(rstd), &r2));
  KD_DB_TRY(kd_db_bin(&s, KD_OP_mul, kd_db_t(r2), kd_db_f(-inv_n), &r2));
  KD_DB_TRY(kd_db_bin(&s, KD_OP_mul, kd_db_t(out), kd_db_t(r2), &out));
  return kd_db_finish(&s, KD_OK, out, outs);
}

/* ---- prodDoubleBackward(ggSelf, gradOutput, self, dim?, keepdim) ----
 * For one slice with P the product of its non-zero elements, z its zero mask, v = ggSelf and
 * a = v / x (0 where x is 0): no zero: P / x_j * (sum(a) - a_j); one zero at m: P * sum(a) at m,
 * v_m * P / x_j elsewhere; two zeros: the other zero's v times P at each zero, 0 elsewhere. */
KD_KERNEL(kd_composite_prod_double_backward) {
  (void)op;
  (void)ks;
  kd_db_scope s = {.n = 0};
  kd_status st;
  kd_tensor *v = args[0].v.t, *go = args[1].v.t, *x = args[2].v.t;
  bool all = args[3].kind == KD_VALUE_NONE, keepdim = args[4].v.b;
  int64_t d = 0;
  if (all) {
    int64_t flat = -1;
    kd_value r1[2] = {kd_db_t(x), kd_value_intlist(&flat, 1)};
    KD_DB_TRY(kd_db_call(&s, KD_OP_reshape, r1, &x));
    kd_value r2[2] = {kd_db_t(v), kd_value_intlist(&flat, 1)};
    KD_DB_TRY(kd_db_call(&s, KD_OP_reshape, r2, &v));
  } else {
    int dd = 0;
    KD_DB_TRY(kd_shape_wrap_dim(args[3].v.i, x->ndim, &dd));
    d = dd;
    if (!keepdim && x->ndim > 0) {
      kd_value u[2] = {kd_db_t(go), kd_value_int(d)};
      KD_DB_TRY(kd_db_call(&s, KD_OP_unsqueeze, u, &go));
    }
  }
  kd_tensor *z, *zf, *cnt, *xs, *p, *a, *an, *sa, *vz, *t, *o0, *o1, *o2, *c, *out;
  KD_DB_TRY(kd_db_bin(&s, KD_OP_eq, kd_db_t(x), kd_db_f(0.0), &z));
  kd_value tz[4] = {kd_db_t(z), kd_value_dtype(v->dtype), kd_value_none(), kd_value_bool(false)};
  KD_DB_TRY(kd_db_call(&s, KD_OP_to, tz, &zf));
  KD_DB_TRY(kd_db_sum(&s, zf, &d, 1, &cnt));
  KD_DB_TRY(kd_db_where(&s, z, kd_db_f(1.0), kd_db_t(x), &xs));
  kd_value pa[4] = {kd_db_t(xs), kd_value_int(d), kd_value_bool(true), kd_value_none()};
  KD_DB_TRY(kd_db_call(&s, KD_OP_prod, pa, &p));
  KD_DB_TRY(kd_db_bin(&s, KD_OP_div, kd_db_t(v), kd_db_t(xs), &a));
  KD_DB_TRY(kd_db_where(&s, z, kd_db_f(0.0), kd_db_t(a), &an)); /* a, 0 at the zeros */
  KD_DB_TRY(kd_db_sum(&s, an, &d, 1, &sa));
  KD_DB_TRY(kd_db_where(&s, z, kd_db_t(v), kd_db_f(0.0), &vz));
  KD_DB_TRY(kd_db_sum(&s, vz, &d, 1, &vz)); /* v at the zeros, summed */
  /* no zero: P / x * (sum(a) - a) */
  KD_DB_TRY(kd_db_bin(&s, KD_OP_sub, kd_db_t(sa), kd_db_t(an), &t));
  KD_DB_TRY(kd_db_bin(&s, KD_OP_mul, kd_db_t(t), kd_db_t(p), &t));
  KD_DB_TRY(kd_db_bin(&s, KD_OP_div, kd_db_t(t), kd_db_t(xs), &o0));
  /* one zero: P * sum(a) at the zero, v_m * P / x elsewhere */
  KD_DB_TRY(kd_db_bin(&s, KD_OP_mul, kd_db_t(p), kd_db_t(sa), &t));
  KD_DB_TRY(kd_db_bin(&s, KD_OP_mul, kd_db_t(p), kd_db_t(vz), &o1));
  KD_DB_TRY(kd_db_bin(&s, KD_OP_div, kd_db_t(o1), kd_db_t(xs), &o1));
  KD_DB_TRY(kd_db_where(&s, z, kd_db_t(t), kd_db_t(o1), &o1));
  /* two zeros: (sum of v at the zeros - v) * P at the zeros */
  KD_DB_TRY(kd_db_bin(&s, KD_OP_sub, kd_db_t(vz), kd_db_t(v), &t));
  KD_DB_TRY(kd_db_bin(&s, KD_OP_mul, kd_db_t(t), kd_db_t(p), &t));
  KD_DB_TRY(kd_db_where(&s, z, kd_db_t(t), kd_db_f(0.0), &o2));
  KD_DB_TRY(kd_db_bin(&s, KD_OP_eq, kd_db_t(cnt), kd_db_f(2.0), &c));
  KD_DB_TRY(kd_db_where(&s, c, kd_db_t(o2), kd_db_f(0.0), &out));
  KD_DB_TRY(kd_db_bin(&s, KD_OP_eq, kd_db_t(cnt), kd_db_f(1.0), &c));
  KD_DB_TRY(kd_db_where(&s, c, kd_db_t(o1), kd_db_t(out), &out));
  KD_DB_TRY(kd_db_bin(&s, KD_OP_eq, kd_db_t(cnt), kd_db_f(0.0), &c));
  KD_DB_TRY(kd_db_where(&s, c, kd_db_t(o0), kd_db_t(out), &out));
  KD_DB_TRY(kd_db_bin(&s, KD_OP_mul, kd_db_t(out), kd_db_t(go), &out));
  if (all) {
    kd_tensor *self = args[2].v.t;
    kd_value r[2] = {kd_db_t(out), kd_value_intlist(self->sizes, self->ndim)};
    KD_DB_TRY(kd_db_call(&s, KD_OP_reshape, r, &out));
  }
  return kd_db_finish(&s, KD_OK, out, outs);
}

/* ---- maxPool2dDoubleBackward(ggInput, input, kernelSize, stride, padding, dilation, ceilMode, indices?) ---- */
KD_KERNEL(kd_composite_max_pool2d_double_backward) {
  (void)op;
  (void)ks;
  kd_db_scope s = {.n = 0};
  kd_status st;
  kd_tensor *gg = args[0].v.t, *idx = args[7].kind == KD_VALUE_TENSOR ? args[7].v.t : NULL;
  if (!idx) {
    kd_value pa[7] = {args[1], args[2], args[3], args[4], args[5], args[6], kd_value_bool(true)};
    kd_value po[KD_OP_MAX_OUTS];
    for (int i = 0; i < KD_OP_MAX_OUTS; i++) po[i] = kd_value_none();
    { /* the indices carry no gradient: recompute them below autograd */
      kd_dispatch_tls saved = kd_dispatch_tls_get(), tls = saved;
      tls.excluded |= KD_KEYSET(KD_KEY_AUTOGRAD);
      kd_dispatch_tls_set(tls);
      st = kd_call(KD_OP_maxPool2dWithIndices, pa, po);
      kd_dispatch_tls_set(saved);
    }
    if (st != KD_OK) return kd_db_finish(&s, st, NULL, outs);
    kd_value_release(&po[0]);
    for (int i = 2; i < KD_OP_MAX_OUTS; i++) kd_value_release(&po[i]);
    KD_DB_TRY(kd_db_keep(&s, po[1].v.t, &idx));
  }
  if (gg->ndim < 2 || idx->ndim != gg->ndim) return kd_db_finish(&s, kd_error(KD_ERR_SHAPE, "maxPool2dDoubleBackward: bad shapes"), NULL, outs);
  kd_tensor *gf, *if_, *out;
  kd_value f1[3] = {kd_db_t(gg), kd_value_int(gg->ndim - 2), kd_value_int(-1)};
  KD_DB_TRY(kd_db_call(&s, KD_OP_flatten, f1, &gf));
  kd_value f2[3] = {kd_db_t(idx), kd_value_int(idx->ndim - 2), kd_value_int(-1)};
  KD_DB_TRY(kd_db_call(&s, KD_OP_flatten, f2, &if_));
  kd_value ga[3] = {kd_db_t(gf), kd_value_int(-1), kd_db_t(if_)};
  KD_DB_TRY(kd_db_call(&s, KD_OP_gather, ga, &out));
  kd_value r[2] = {kd_db_t(out), kd_value_intlist(idx->sizes, idx->ndim)};
  KD_DB_TRY(kd_db_call(&s, KD_OP_reshape, r, &out));
  return kd_db_finish(&s, KD_OK, out, outs);
}
