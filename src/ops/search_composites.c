/* search_composites.c - the search family's ops written with other ops through kd_call, so they
 * run on every device and autograd differentiates the ops they call:
 *   isin(elements, testElements, assumeUnique, invert)
 *       tensor/tensor: both in their result type, the test elements flattened and sorted, each
 *       element looked up with searchsorted and compared with what it lands on (NaN is in
 *       nothing, as PyTorch's == says and its elementwise path answers; its sorting path, for
 *       large test sets, finds NaN in NaN); a number on the right is eq/ne, as PyTorch's
 *   aminmax(self, dim, keepdim)          (amin, amax) with PyTorch's checks
 *   quantile / nanquantile(self, q, dim, keepdim, interpolation)
 *       PyTorch's quantile_impl: the lines sorted, ranks q * (n - 1) (a line holding NaN:
 *       n - 1, so NaN; nanquantile: q * (non-NaN count - 1), at least 0), rounded per
 *       interpolation, the values at floor and ceil gathered and lerped; gradients flow
 *       through sort, gather and lerp as in PyTorch
 * Every intermediate is released on every path (kd_sc_scope). */
#include <math.h>
#include <string.h>

#include "cpu/cpu_loops.h"
#include "ops/kernel.h"

#define KD_SC_MAX 40
typedef struct kd_sc_scope {
  kd_tensor *t[KD_SC_MAX];
  int n;
} kd_sc_scope;

static void kd_sc_release(kd_sc_scope *s) {
  for (int i = 0; i < s->n; i++) kd_tensor_release(s->t[i]);
  s->n = 0;
}

/* Calls a one-output op with its first nargs arguments (the rest left to their defaults); the
 * result is kept in the scope. */
static kd_status kd_sc_call(kd_sc_scope *s, kd_op_id id, int nargs, const kd_value *given, kd_tensor **out) {
  if (s->n >= KD_SC_MAX) return kd_error(KD_ERR_INTERNAL, "search composite: scope full");
  kd_value a[16];
  if (kd_ops[id].nargs > 16 || nargs > kd_ops[id].nargs) return kd_error(KD_ERR_INTERNAL, "search composite: arguments");
  for (int i = 0; i < 16; i++) a[i] = i < nargs ? given[i] : kd_value_none();
  KD_TRY(kd_call1(id, a, out));
  s->t[s->n++] = *out;
  return KD_OK;
}
#define KD_SC(s, op, out, ...) kd_sc_call(s, op, sizeof((kd_value[]){__VA_ARGS__}) / sizeof(kd_value), (kd_value[]){__VA_ARGS__}, out)
#define KD_T(x) kd_value_tensor(x)
#define KD_NUM(x) kd_value_scalar(kd_scalar_f(x))
#define KD_INT(x) kd_value_int(x)

static kd_status kd_sc_finish(kd_sc_scope *s, kd_status st, kd_tensor *r0, kd_tensor *r1, kd_value *outs) {
  if (st == KD_OK) {
    kd_out_retain(outs, 0, r0);
    if (r1) kd_out_retain(outs, 1, r1);
  }
  kd_sc_release(s);
  return st;
}

/* ---- isin ---- */

static kd_status kd_isin(kd_sc_scope *s, kd_value *args, kd_tensor **out) {
  const bool invert = args[3].v.b;
  kd_value *ev = &args[0], *tv = &args[1];
  if (ev->kind != KD_VALUE_TENSOR && tv->kind != KD_VALUE_TENSOR)
    return kd_error(KD_ERR_TYPE, "isin(): expected elements or testElements to be a tensor");
  if (tv->kind != KD_VALUE_TENSOR) /* PyTorch's isin.Tensor_Scalar: a comparison */
    return KD_SC(s, invert ? KD_OP_ne : KD_OP_eq, out, *ev, *tv);
  kd_tensor *test = tv->v.t;
  kd_result_type_state rs;
  kd_result_type_init(&rs);
  kd_result_type_add_tensor(&rs, test->dtype, test->ndim);
  if (ev->kind == KD_VALUE_TENSOR) kd_result_type_add_tensor(&rs, ev->v.t->dtype, ev->v.t->ndim);
  else kd_result_type_add_scalar(&rs, ev->v.s);
  kd_dtype dt = kd_result_type_finish(&rs);
  /* PyTorch's check_for_unsupported_isin_dtype */
  kd_dtype bad = ev->kind == KD_VALUE_TENSOR && (ev->v.t->dtype == KD_DTYPE_BOOL || ev->v.t->dtype == KD_DTYPE_BF16)
                     ? ev->v.t->dtype : test->dtype;
  if (bad == KD_DTYPE_BOOL || bad == KD_DTYPE_BF16)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "Unsupported input type encountered for isin(): %s", kd_cpu_torch_name(bad));
  kd_tensor *e, *t, *sorted, *idx, *near, *hit;
  if (ev->kind == KD_VALUE_TENSOR) {
    KD_TRY(KD_SC(s, KD_OP_to, &e, *ev, kd_value_dtype(dt)));
  } else { /* PyTorch's wrapped_scalar_tensor on the test elements' device */
    static const int64_t none[1] = {0};
    KD_TRY(KD_SC(s, KD_OP_full, &e, kd_value_intlist(none, 0), ev->kind == KD_VALUE_SCALAR ? *ev : KD_NUM(0),
                 kd_value_dtype(dt), kd_value_device(kd_tensor_device(test))));
  }
  if (kd_tensor_numel(test) == 0) {
    KD_TRY(KD_SC(s, KD_OP_zerosLike, &hit, KD_T(e), kd_value_dtype(KD_DTYPE_BOOL)));
    return invert ? KD_SC(s, KD_OP_logicalNot, out, KD_T(hit)) : KD_SC(s, KD_OP_clone, out, KD_T(hit));
  }
  const int64_t flat[1] = {-1};
  KD_TRY(KD_SC(s, KD_OP_to, &t, KD_T(test), kd_value_dtype(dt)));
  KD_TRY(KD_SC(s, KD_OP_reshape, &t, KD_T(t), kd_value_intlist(flat, 1)));
  kd_value sa[4] = {KD_T(t), KD_INT(0), kd_value_bool(false), kd_value_bool(true)};
  kd_value so[KD_OP_MAX_OUTS];
  for (int i = 0; i < KD_OP_MAX_OUTS; i++) so[i] = kd_value_none();
  KD_TRY(kd_call(KD_OP_sort, sa, so));
  sorted = so[0].v.t;
  s->t[s->n++] = sorted;
  kd_tensor_release(so[1].v.t);
  /* NaN (sorted last) is in nothing, and would break the binary search's order: search a copy
   * with NaN as +inf, compare with the original (an inf element finds a real inf first) */
  kd_tensor *keys = sorted;
  if (kd_dtype_is_float(dt)) {
    kd_tensor *nan;
    KD_TRY(KD_SC(s, KD_OP_isnan, &nan, KD_T(sorted)));
    KD_TRY(KD_SC(s, KD_OP_where, &keys, KD_T(nan), KD_NUM(INFINITY), KD_T(sorted)));
  }
  KD_TRY(KD_SC(s, KD_OP_searchsorted, &idx, KD_T(keys), KD_T(e)));
  KD_TRY(KD_SC(s, KD_OP_clamp, &idx, KD_T(idx), kd_value_none(), kd_value_scalar(kd_scalar_i(kd_tensor_numel(test) - 1))));
  KD_TRY(KD_SC(s, KD_OP_take, &near, KD_T(sorted), KD_T(idx)));
  return KD_SC(s, invert ? KD_OP_ne : KD_OP_eq, out, KD_T(near), KD_T(e));
}

kd_status kd_composite_isin(const kd_op_info *op, kd_keyset ks, kd_value *args, kd_value *outs) {
  (void)op, (void)ks;
  kd_sc_scope s = {{0}, 0};
  kd_tensor *r = NULL;
  kd_status st = kd_isin(&s, args, &r);
  return kd_sc_finish(&s, st, r, NULL, outs);
}

/* ---- aminmax ---- */

kd_status kd_composite_aminmax(const kd_op_info *op, kd_keyset ks, kd_value *args, kd_value *outs) {
  (void)op, (void)ks;
  kd_tensor *self = args[0].v.t;
  const bool keepdim = args[2].v.b, has_dim = args[1].kind == KD_VALUE_INT;
  int64_t d = 0;
  if (has_dim) {
    int w;
    if (self->ndim == 0 && args[1].v.i != 0 && args[1].v.i != -1)
      return kd_error(KD_ERR_INDEX, "aminmax: Expected reduction dim 0 or -1 for scalar but got %lld", (long long)args[1].v.i);
    KD_TRY(kd_shape_wrap_dim(args[1].v.i, self->ndim, &w));
    if (self->ndim > 0 && self->sizes[w] == 0)
      return kd_error(KD_ERR_INDEX, "aminmax: Expected reduction dim %d to have non-zero size.", w);
    d = self->ndim ? w : 0;
  } else if (kd_tensor_numel(self) == 0) {
    return kd_error(KD_ERR_INVALID_ARGUMENT,
                    "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.");
  }
  kd_sc_scope s = {{0}, 0};
  kd_tensor *mn = NULL, *mx = NULL;
  kd_value dim = has_dim && self->ndim ? kd_value_intlist(&d, 1) : kd_value_none();
  kd_status st = KD_SC(&s, KD_OP_amin, &mn, KD_T(self), dim, kd_value_bool(keepdim));
  if (st == KD_OK) st = KD_SC(&s, KD_OP_amax, &mx, KD_T(self), dim, kd_value_bool(keepdim));
  return kd_sc_finish(&s, st, mn, mx, outs);
}

/* ---- quantile / nanquantile ---- */

enum { KD_Q_LINEAR, KD_Q_LOWER, KD_Q_HIGHER, KD_Q_MIDPOINT, KD_Q_NEAREST };

static kd_status kd_quantile(kd_sc_scope *s, bool ignore_nan, kd_value *args, kd_tensor **out) {
  kd_tensor *self = args[0].v.t;
  kd_value *qv = &args[1];
  const bool has_dim = args[2].kind == KD_VALUE_INT, keepdim = args[3].v.b;
  const char *ip = args[4].kind == KD_VALUE_STRING ? args[4].v.str : "linear";
  if (qv->kind != KD_VALUE_TENSOR) {
    double q = kd_scalar_to_double(qv->v.s);
    if (!(q >= 0 && q <= 1)) return kd_error(KD_ERR_INVALID_ARGUMENT, "quantile() q must be in the range [0, 1] but got %g", q);
  }
  int mode;
  if (!strcmp(ip, "linear")) mode = KD_Q_LINEAR;
  else if (!strcmp(ip, "lower")) mode = KD_Q_LOWER;
  else if (!strcmp(ip, "higher")) mode = KD_Q_HIGHER;
  else if (!strcmp(ip, "midpoint")) mode = KD_Q_MIDPOINT;
  else if (!strcmp(ip, "nearest")) mode = KD_Q_NEAREST;
  else
    return kd_error(KD_ERR_INVALID_ARGUMENT,
                    "quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, but got %s", ip);
  kd_tensor *qt = qv->kind == KD_VALUE_TENSOR ? qv->v.t : NULL;
  if (kd_tensor_numel(self) == 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "quantile() input tensor must be non-empty");
  if (qt && qt->ndim > 1) return kd_error(KD_ERR_SHAPE, "quantile() q must be a scalar or 1D tensor");
  if (self->dtype != KD_DTYPE_F32 && self->dtype != KD_DTYPE_F64)
    return kd_error(KD_ERR_DTYPE, "quantile() input tensor must be either float or double dtype");
  if (qt && qt->dtype != self->dtype)
    return kd_error(KD_ERR_DTYPE, "quantile() q tensor must be same dtype as the input tensor");
  kd_device dev = kd_tensor_device(self);
  if (qt && (kd_tensor_device(qt).type != dev.type || kd_tensor_device(qt).index != dev.index))
    return kd_error(KD_ERR_DEVICE, "quantile() q tensor must be on the same device as the input tensor");
  if (qt && kd_tensor_numel(qt) > 0) { /* on any device (PyTorch checks only on the CPU; a device pays one sync) */
    kd_tensor *ge, *le, *ok, *all;
    kd_scalar v;
    KD_TRY(KD_SC(s, KD_OP_ge, &ge, KD_T(qt), KD_NUM(0)));
    KD_TRY(KD_SC(s, KD_OP_le, &le, KD_T(qt), KD_NUM(1)));
    KD_TRY(KD_SC(s, KD_OP_logicalAnd, &ok, KD_T(ge), KD_T(le)));
    KD_TRY(KD_SC(s, KD_OP_all, &all, KD_T(ok)));
    KD_TRY(kd_cpu_item(all, &v));
    if (!v.v.b) return kd_error(KD_ERR_INVALID_ARGUMENT, "quantile() q values must be in the range [0, 1]");
  }
  int wdim = 0;
  if (has_dim) KD_TRY(kd_shape_wrap_dim(args[2].v.i, self->ndim, &wdim));
  /* the output shape: [Q,] then self's with dim removed (or 1), or all ones with keepdim */
  int64_t oshape[KD_MAX_DIMS + 1];
  int ond = 0;
  if (qt && qt->ndim == 1) oshape[ond++] = qt->sizes[0];
  if (has_dim && self->ndim > 0) {
    for (int d = 0; d < self->ndim; d++)
      if (d != wdim || keepdim) oshape[ond++] = d == wdim ? 1 : self->sizes[d];
  } else if (keepdim) {
    for (int d = 0; d < self->ndim; d++) oshape[ond++] = 1;
  }
  /* S: the lines sorted, [*B, n] */
  kd_tensor *x, *S, *q1, *ranks, *t, *below, *vb, *r;
  const int64_t flat[1] = {-1};
  if (has_dim && self->ndim > 0) {
    KD_TRY(KD_SC(s, KD_OP_movedim, &x, KD_T(self), KD_INT(wdim), KD_INT(-1)));
  } else {
    KD_TRY(KD_SC(s, KD_OP_reshape, &x, KD_T(self), kd_value_intlist(flat, 1)));
  }
  kd_value sa[4] = {KD_T(x), KD_INT(-1), kd_value_bool(false), kd_value_bool(false)};
  kd_value so[KD_OP_MAX_OUTS];
  for (int i = 0; i < KD_OP_MAX_OUTS; i++) so[i] = kd_value_none();
  KD_TRY(kd_call(KD_OP_sort, sa, so));
  S = so[0].v.t;
  s->t[s->n++] = S;
  kd_tensor_release(so[1].v.t);
  const int64_t n = S->sizes[S->ndim - 1];
  /* q as a 1-D tensor of self's dtype on self's device */
  if (qt) {
    KD_TRY(KD_SC(s, KD_OP_reshape, &q1, KD_T(qt), kd_value_intlist(flat, 1)));
  } else {
    const int64_t one[1] = {1};
    KD_TRY(KD_SC(s, KD_OP_full, &q1, kd_value_intlist(one, 1), *qv, kd_value_dtype(self->dtype), kd_value_device(dev)));
  }
  kd_tensor *isnan_, *m;
  KD_TRY(KD_SC(s, KD_OP_isnan, &isnan_, KD_T(S)));
  if (ignore_nan) {
    kd_tensor *ok, *cnt;
    int64_t last = -1;
    KD_TRY(KD_SC(s, KD_OP_logicalNot, &ok, KD_T(isnan_)));
    KD_TRY(KD_SC(s, KD_OP_sum, &cnt, KD_T(ok), kd_value_intlist(&last, 1), kd_value_bool(true)));
    KD_TRY(KD_SC(s, KD_OP_sub, &cnt, KD_T(cnt), kd_value_scalar(kd_scalar_i(1))));
    KD_TRY(KD_SC(s, KD_OP_mul, &t, KD_T(q1), KD_T(cnt)));
    KD_TRY(KD_SC(s, KD_OP_lt, &m, KD_T(t), KD_NUM(0)));
    KD_TRY(KD_SC(s, KD_OP_where, &ranks, KD_T(m), KD_NUM(0), KD_T(t)));
  } else {
    int64_t last = -1;
    KD_TRY(KD_SC(s, KD_OP_any, &m, KD_T(isnan_), kd_value_intlist(&last, 1), kd_value_bool(true)));
    KD_TRY(KD_SC(s, KD_OP_mul, &t, KD_T(q1), KD_NUM((double)(n - 1))));
    KD_TRY(KD_SC(s, KD_OP_where, &ranks, KD_T(m), KD_NUM((double)(n - 1)), KD_T(t)));
  }
  if (mode == KD_Q_LOWER) KD_TRY(KD_SC(s, KD_OP_floor, &ranks, KD_T(ranks)));
  else if (mode == KD_Q_HIGHER) KD_TRY(KD_SC(s, KD_OP_ceil, &ranks, KD_T(ranks)));
  else if (mode == KD_Q_NEAREST) KD_TRY(KD_SC(s, KD_OP_round, &ranks, KD_T(ranks)));
  /* ranks is [*B, Q] (a line of one rank per q broadcast over the lines) */
  if (ranks->ndim < S->ndim) {
    int64_t rs[KD_MAX_DIMS];
    memcpy(rs, S->sizes, sizeof(int64_t) * (size_t)S->ndim);
    rs[S->ndim - 1] = ranks->sizes[ranks->ndim - 1];
    KD_TRY(KD_SC(s, KD_OP_expand, &ranks, KD_T(ranks), kd_value_intlist(rs, S->ndim)));
  }
  KD_TRY(KD_SC(s, KD_OP_to, &below, KD_T(ranks), kd_value_dtype(KD_DTYPE_I64)));
  KD_TRY(KD_SC(s, KD_OP_gather, &vb, KD_T(S), KD_INT(-1), KD_T(below)));
  r = vb;
  if (mode == KD_Q_LINEAR || mode == KD_Q_MIDPOINT) {
    kd_tensor *w, *up, *above, *va;
    if (mode == KD_Q_MIDPOINT) KD_TRY(KD_SC(s, KD_OP_fullLike, &w, KD_T(ranks), KD_NUM(0.5)));
    else KD_TRY(KD_SC(s, KD_OP_sub, &w, KD_T(ranks), KD_T(below)));
    KD_TRY(KD_SC(s, KD_OP_ceil, &up, KD_T(ranks)));
    KD_TRY(KD_SC(s, KD_OP_to, &above, KD_T(up), kd_value_dtype(KD_DTYPE_I64)));
    KD_TRY(KD_SC(s, KD_OP_gather, &va, KD_T(S), KD_INT(-1), KD_T(above)));
    KD_TRY(KD_SC(s, KD_OP_lerp, &r, KD_T(vb), KD_T(va), KD_T(w)));
  }
  /* [*B, Q] -> [Q, *B] (a tensor q) or [*B], then the output shape */
  if (qt && qt->ndim == 1) KD_TRY(KD_SC(s, KD_OP_movedim, &r, KD_T(r), KD_INT(-1), KD_INT(0)));
  return KD_SC(s, KD_OP_reshape, out, KD_T(r), kd_value_intlist(oshape, ond));
}

kd_status kd_composite_quantile(const kd_op_info *op, kd_keyset ks, kd_value *args, kd_value *outs) {
  (void)ks;
  kd_sc_scope s = {{0}, 0};
  kd_tensor *r = NULL;
  kd_status st = kd_quantile(&s, op->id == KD_OP_nanquantile, args, &r);
  return kd_sc_finish(&s, st, r, NULL, outs);
}
