/* shape_composites.c - the shape ops written with other ops through kd_call, so they run on
 * every device and autograd sees the ops they call (no backward formulas needed):
 * stack/hstack/vstack (unsqueeze/reshape + cat), unbind (select), roll (narrow + cat, one dim
 * at a time, as PyTorch's roll_common), repeat/tile (reshape + expand + one copying reshape),
 * repeatInterleave (expand + reshape; with a tensor of counts, expanded narrows + cat),
 * movedim/moveaxis (permute), swapaxes/swapdims (transpose), trace (diagonal + sum), and the
 * gradient helpers catBackward (narrow), diagonalBackward and diag (zeros + copy_ into a
 * diagonal view) and unfoldBackward (zeros + add_ of each window), the last three registered as
 * `generic` kernels with backward formulas of their own. */
#include <stdio.h>
#include <string.h>

#include "ops/shape_scope.h"

static kd_status sc_view1(kd_scope *s, kd_op_id op, kd_tensor *t, int64_t a, kd_tensor **out) {
  kd_value v[2] = {kd_value_tensor(t), kd_value_int(a)};
  return kd_scope_call(s, op, v, out);
}
static kd_status sc_shape(kd_scope *s, kd_op_id op, kd_tensor *t, const int64_t *shape, int n, kd_tensor **out) {
  static const int64_t none[1] = {0};
  kd_value v[2] = {kd_value_tensor(t), kd_value_intlist(n ? shape : none, n)};
  return kd_scope_call(s, op, v, out);
}
static kd_status sc_narrow(kd_scope *s, kd_tensor *t, int dim, int64_t start, int64_t len, kd_tensor **out) {
  kd_value v[4] = {kd_value_tensor(t), kd_value_int(dim), kd_value_int(start), kd_value_int(len)};
  return kd_scope_call(s, KD_OP_narrow, v, out);
}
static kd_status sc_cat(kd_scope *s, kd_tensor **ts, int n, int64_t dim, kd_tensor **out) {
  kd_value v[2] = {kd_value_tlist(ts, n), kd_value_int(dim)};
  return kd_scope_call(s, KD_OP_cat, v, out);
}
static kd_status sc_clone(kd_scope *s, kd_tensor *t, kd_tensor **out) {
  kd_value v[1] = {kd_value_tensor(t)};
  return kd_scope_call(s, KD_OP_clone, v, out);
}
static kd_status sc_zeros(kd_scope *s, const int64_t *sizes, int n, kd_dtype dt, kd_device dev, kd_tensor **out) {
  static const int64_t none[1] = {0};
  kd_value v[3] = {kd_value_intlist(n ? sizes : none, n), kd_value_dtype(dt), kd_value_device(dev)};
  return kd_scope_call(s, KD_OP_zeros, v, out);
}
static kd_status sc_diagonal(kd_scope *s, kd_tensor *t, int64_t off, int64_t d1, int64_t d2, kd_tensor **out) {
  kd_value v[4] = {kd_value_tensor(t), kd_value_int(off), kd_value_int(d1), kd_value_int(d2)};
  return kd_scope_call(s, KD_OP_diagonal, v, out);
}
/* An in-place op (copy_, add_) whose result is its first argument. */
static kd_status sc_inplace(kd_op_id op, kd_tensor *dst, kd_tensor *src) {
  kd_value v[3] = {kd_value_tensor(dst), kd_value_tensor(src), kd_value_none()};
  kd_value o[KD_OP_MAX_OUTS];
  for (int i = 0; i < KD_OP_MAX_OUTS; i++) o[i] = kd_value_none();
  KD_TRY(kd_call(op, v, o));
  for (int i = 0; i < KD_OP_MAX_OUTS; i++) kd_value_release(&o[i]);
  return KD_OK;
}
/* A copy when `r` still shares storage with `self` (ops that PyTorch documents as copying). */
static kd_status sc_ensure_copy(kd_scope *s, kd_tensor *self, kd_tensor **r) {
  if ((*r)->storage == self->storage) return sc_clone(s, *r, r);
  return KD_OK;
}
/* The ints of an int|int[] argument. */
static void sc_ints(const kd_value *v, const int64_t **p, int *n) {
  if (v->kind == KD_VALUE_INT) {
    *p = &v->v.i;
    *n = 1;
  } else if (v->kind == KD_VALUE_INTLIST) {
    *p = v->v.ilist.data;
    *n = v->v.ilist.n;
  } else {
    *p = NULL;
    *n = 0;
  }
}

/* ---- joining ---- */

static kd_status kd_stack_impl(kd_scope *s, kd_tensor **ts, int n, int64_t dim, kd_tensor **result) {
  if (n == 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "stack expects a non-empty TensorList");
  for (int i = 1; i < n; i++) {
    if (ts[i]->ndim != ts[0]->ndim || memcmp(ts[i]->sizes, ts[0]->sizes, sizeof(int64_t) * ts[0]->ndim) != 0) {
      char a[256], b[256];
      return kd_error(KD_ERR_SHAPE, "stack expects each tensor to be equal size, but got %s at entry 0 and %s at entry %d",
                      kd_shape_format(ts[0]->sizes, ts[0]->ndim, a, sizeof a),
                      kd_shape_format(ts[i]->sizes, ts[i]->ndim, b, sizeof b), i);
    }
  }
  int d;
  KD_TRY(kd_shape_wrap_dim(dim, ts[0]->ndim + 1, &d));
  kd_tensor **u = (kd_tensor **)calloc((size_t)n, sizeof(kd_tensor *));
  if (!u) return kd_error(KD_ERR_OOM, "out of host memory");
  kd_status st = KD_OK;
  for (int i = 0; i < n && st == KD_OK; i++) st = sc_view1(s, KD_OP_unsqueeze, ts[i], d, &u[i]);
  if (st == KD_OK) st = sc_cat(s, u, n, d, result);
  free(u);
  return st;
}

KD_KERNEL(kd_composite_stack) {
  (void)op;
  (void)ks;
  kd_scope s;
  kd_scope_init(&s);
  kd_tensor *r = NULL;
  kd_status st = kd_stack_impl(&s, args[0].v.tlist.data, args[0].v.tlist.n, args[1].v.i, &r);
  return kd_scope_finish(&s, st, r, outs);
}

/* hstack (vertical = false) and vstack: at least 1-D / 2-D, then cat. */
static kd_status kd_hvstack_impl(kd_scope *s, kd_tensor **ts, int n, bool vertical, kd_tensor **result) {
  if (n == 0)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "%s expects a non-empty TensorList", vertical ? "vstack" : "hstack");
  kd_tensor **u = (kd_tensor **)calloc((size_t)n, sizeof(kd_tensor *));
  if (!u) return kd_error(KD_ERR_OOM, "out of host memory");
  kd_status st = KD_OK;
  for (int i = 0; i < n && st == KD_OK; i++) {
    kd_tensor *t = ts[i];
    int64_t shape[2] = {1, t->ndim == 1 ? t->sizes[0] : 1};
    if (t->ndim == 0) st = sc_shape(s, KD_OP_reshape, t, shape, vertical ? 2 : 1, &u[i]);
    else if (t->ndim == 1 && vertical) st = sc_shape(s, KD_OP_reshape, t, shape, 2, &u[i]);
    else u[i] = t;
  }
  if (st == KD_OK) st = sc_cat(s, u, n, vertical || u[0]->ndim == 1 ? 0 : 1, result);
  free(u);
  return st;
}

KD_KERNEL(kd_composite_hstack) {
  (void)op;
  (void)ks;
  kd_scope s;
  kd_scope_init(&s);
  kd_tensor *r = NULL;
  kd_status st = kd_hvstack_impl(&s, args[0].v.tlist.data, args[0].v.tlist.n, false, &r);
  return kd_scope_finish(&s, st, r, outs);
}

KD_KERNEL(kd_composite_vstack) {
  (void)op;
  (void)ks;
  kd_scope s;
  kd_scope_init(&s);
  kd_tensor *r = NULL;
  kd_status st = kd_hvstack_impl(&s, args[0].v.tlist.data, args[0].v.tlist.n, true, &r);
  return kd_scope_finish(&s, st, r, outs);
}

/* ---- splitting ---- */

KD_KERNEL(kd_composite_unbind) {
  (void)op;
  (void)ks;
  kd_tensor *self = args[0].v.t;
  if (self->ndim == 0) return kd_error(KD_ERR_INDEX, "Dimension specified as %lld but tensor has no dimensions",
                                       (long long)args[1].v.i);
  int d;
  KD_TRY(kd_shape_wrap_dim(args[1].v.i, self->ndim, &d));
  int n = (int)self->sizes[d];
  kd_scope s;
  kd_scope_init(&s);
  kd_status st = KD_OK;
  for (int i = 0; i < n && st == KD_OK; i++) {
    kd_value v[3] = {kd_value_tensor(self), kd_value_int(d), kd_value_int(i)};
    kd_tensor *t;
    st = kd_scope_call(&s, KD_OP_select, v, &t);
  }
  if (st == KD_OK) st = kd_scope_out_list(s.t, n, outs);
  kd_scope_release(&s);
  return st;
}

KD_KERNEL(kd_composite_cat_backward) {
  (void)op;
  (void)ks;
  kd_tensor *grad = args[0].v.t;
  kd_tensor **ts = args[1].v.tlist.data;
  int n = args[1].v.tlist.n, d = 0;
  if (grad->ndim > 0) KD_TRY(kd_shape_wrap_dim(args[2].v.i, grad->ndim, &d));
  kd_scope s;
  kd_scope_init(&s);
  kd_status st = KD_OK;
  int64_t pos = 0;
  for (int i = 0; i < n && st == KD_OK; i++) {
    kd_tensor *t;
    if (ts[i]->ndim == 1 && ts[i]->sizes[0] == 0) { /* a legacy empty tensor cat skipped */
      int64_t z = 0;
      st = sc_zeros(&s, &z, 1, grad->dtype, kd_tensor_device(grad), &t);
    } else {
      st = sc_narrow(&s, grad, d, pos, ts[i]->sizes[d], &t);
      pos += ts[i]->sizes[d];
    }
  }
  if (st == KD_OK) st = kd_scope_out_list(s.t, s.n, outs);
  kd_scope_release(&s);
  return st;
}

/* ---- reordering ---- */

static kd_status kd_roll_impl(kd_scope *s, kd_tensor *self, const kd_value *shifts_v, const kd_value *dims_v,
                              kd_tensor **result) {
  const int64_t *shifts, *dims;
  int ns, nd;
  sc_ints(shifts_v, &shifts, &ns);
  sc_ints(dims_v, &dims, &nd);
  if (ns == 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "`shifts` required");
  if (nd == 0 && ns == 1) {
    int64_t flat = -1;
    kd_tensor *f, *r;
    KD_TRY(sc_shape(s, KD_OP_reshape, self, &flat, 1, &f));
    int64_t zero = 0;
    kd_value v[3] = {kd_value_tensor(f), kd_value_int(shifts[0]), kd_value_intlist(&zero, 1)};
    KD_TRY(kd_scope_call(s, KD_OP_roll, v, &r));
    return sc_shape(s, KD_OP_view, r, self->sizes, self->ndim, result);
  }
  if (ns != nd)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "shifts and dimensions must align. shifts: %d, dims:%d", ns, nd);
  kd_tensor *cur = self;
  for (int i = 0; i < nd; i++) {
    int d;
    KD_TRY(kd_shape_wrap_dim(dims[i], self->ndim, &d));
    int64_t n = cur->sizes[d];
    if (n == 0) continue;
    int64_t sh = ((shifts[i] % n) + n) % n;
    kd_tensor *p[2];
    KD_TRY(sc_narrow(s, cur, d, n - sh, sh, &p[0]));
    KD_TRY(sc_narrow(s, cur, d, 0, n - sh, &p[1]));
    KD_TRY(sc_cat(s, p, 2, d, &cur));
  }
  if (cur == self) return sc_clone(s, self, result);
  *result = cur;
  return KD_OK;
}

KD_KERNEL(kd_composite_roll) {
  (void)op;
  (void)ks;
  kd_scope s;
  kd_scope_init(&s);
  kd_tensor *r = NULL;
  kd_status st = kd_roll_impl(&s, args[0].v.t, &args[1], &args[2], &r);
  return kd_scope_finish(&s, st, r, outs);
}

static kd_status kd_movedim_impl(kd_scope *s, kd_tensor *self, const kd_value *src_v, const kd_value *dst_v,
                                 kd_tensor **result) {
  const int64_t *src, *dst;
  int ns, nd, n = self->ndim;
  sc_ints(src_v, &src, &ns);
  sc_ints(dst_v, &dst, &nd);
  char a[256], b[256];
  if (ns != nd)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "movedim: Invalid source or destination dims: source (%s dims) should "
                    "contain the same number of dims as destination (%s dims)", kd_shape_format(src, ns, a, sizeof a),
                    kd_shape_format(dst, nd, b, sizeof b));
  int order[KD_MAX_DIMS], ws[KD_MAX_DIMS], wd[KD_MAX_DIMS];
  bool used_src[KD_MAX_DIMS] = {false}, used_dst[KD_MAX_DIMS] = {false};
  int distinct = n > 0 ? n : 1; /* how many different dims wrap_dim accepts (a 0-d tensor takes 0 and -1) */
  for (int i = 0; i < ns; i++) { /* every dim is checked; only the first `distinct` can differ (and are stored) */
    int a_dim, b_dim;
    KD_TRY(kd_shape_wrap_dim(src[i], n, &a_dim));
    KD_TRY(kd_shape_wrap_dim(dst[i], n, &b_dim));
    if (i < distinct) {
      ws[i] = a_dim;
      wd[i] = b_dim;
    }
  }
  if (ns > distinct) /* more dims than the tensor has: some repeat (PyTorch reports the source first) */
    return kd_error(KD_ERR_INVALID_ARGUMENT, "movedim: repeated dim in `source` (%s)", kd_shape_format(src, ns, a, sizeof a));
  for (int i = 0; i < ns; i++) {
    if (used_src[ws[i]])
      return kd_error(KD_ERR_INVALID_ARGUMENT, "movedim: repeated dim in `source` (%s)", kd_shape_format(src, ns, a, sizeof a));
    used_src[ws[i]] = true;
  }
  for (int i = 0; i < nd; i++) {
    if (used_dst[wd[i]])
      return kd_error(KD_ERR_INVALID_ARGUMENT, "movedim: repeated dim in `destination` (%s)",
                      kd_shape_format(dst, nd, b, sizeof b));
    used_dst[wd[i]] = true;
  }
  for (int i = 0; i < n; i++) order[i] = -1;
  for (int i = 0; i < ns; i++) order[wd[i]] = ws[i];
  int next = 0;
  for (int i = 0; i < n; i++) {
    if (order[i] >= 0) continue;
    while (used_src[next]) next++;
    order[i] = next++;
  }
  int64_t perm[KD_MAX_DIMS];
  for (int i = 0; i < n; i++) perm[i] = order[i];
  return sc_shape(s, KD_OP_permute, self, perm, n, result);
}

KD_KERNEL(kd_composite_movedim) {
  (void)op;
  (void)ks;
  kd_scope s;
  kd_scope_init(&s);
  kd_tensor *r = NULL;
  kd_status st = kd_movedim_impl(&s, args[0].v.t, &args[1], &args[2], &r);
  return kd_scope_finish(&s, st, r, outs);
}

KD_KERNEL(kd_composite_swapaxes) {
  (void)op;
  (void)ks;
  kd_value v[3] = {args[0], args[1], args[2]};
  kd_tensor *r;
  KD_TRY(kd_call1(KD_OP_transpose, v, &r));
  kd_out_take(outs, 0, r);
  return KD_OK;
}

/* ---- repeating ---- */

static kd_status kd_repeat_impl(kd_scope *s, kd_tensor *self, const int64_t *rep, int nr, kd_tensor **result) {
  if (nr < self->ndim)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "Number of dimensions of repeat dims can not be smaller than number of "
                    "dimensions of tensor");
  if (nr > KD_MAX_DIMS) return kd_error(KD_ERR_INVALID_ARGUMENT, "repeat: at most %d dims are supported", KD_MAX_DIMS);
  int64_t padded[KD_MAX_DIMS], target[KD_MAX_DIMS];
  int lead = nr - self->ndim;
  for (int i = 0; i < nr; i++) {
    padded[i] = i < lead ? 1 : self->sizes[i - lead];
    if (rep[i] >= 0 && kd_mul_overflows(padded[i], rep[i], &target[i]))
      return kd_error(KD_ERR_INVALID_ARGUMENT, "Storage size calculation overflowed: size %lld repeated %lld times at "
                      "dimension %d", (long long)padded[i], (long long)rep[i], i);
    if (rep[i] < 0 && kd_mul_overflows(padded[i], rep[i], &target[i])) target[i] = rep[i]; /* for the message */
  }
  for (int i = 0; i < nr; i++)
    if (rep[i] < 0) {
      char a[256];
      return kd_error(KD_ERR_INVALID_ARGUMENT, "Trying to create tensor with negative dimension %lld: %s",
                      (long long)target[i], kd_shape_format(target, nr, a, sizeof a));
    }
  /* base: padded shape with a size-1 dim before every dim that is both repeated and > 1 */
  int64_t base[2 * KD_MAX_DIMS], exp[2 * KD_MAX_DIMS];
  int nb = 0;
  for (int i = 0; i < nr; i++) {
    if (rep[i] != 1 && padded[i] != 1) {
      base[nb] = 1;
      exp[nb++] = rep[i];
      base[nb] = padded[i];
      exp[nb++] = padded[i];
    } else {
      base[nb] = padded[i];
      exp[nb++] = target[i];
    }
  }
  if (nb > KD_MAX_DIMS) return kd_error(KD_ERR_INVALID_ARGUMENT, "repeat: at most %d dims are supported", KD_MAX_DIMS);
  kd_tensor *x;
  KD_TRY(sc_shape(s, KD_OP_reshape, self, base, nb, &x));
  KD_TRY(sc_shape(s, KD_OP_expand, x, exp, nb, &x));
  KD_TRY(sc_shape(s, KD_OP_reshape, x, target, nr, &x));
  KD_TRY(sc_ensure_copy(s, self, &x));
  *result = x;
  return KD_OK;
}

KD_KERNEL(kd_composite_repeat) {
  (void)op;
  (void)ks;
  kd_scope s;
  kd_scope_init(&s);
  kd_tensor *r = NULL;
  kd_status st = kd_repeat_impl(&s, args[0].v.t, args[1].v.ilist.data, args[1].v.ilist.n, &r);
  return kd_scope_finish(&s, st, r, outs);
}

KD_KERNEL(kd_composite_tile) {
  (void)op;
  (void)ks;
  kd_tensor *self = args[0].v.t;
  int n = args[1].v.ilist.n;
  int64_t rep[KD_MAX_DIMS];
  if (n > KD_MAX_DIMS) return kd_error(KD_ERR_INVALID_ARGUMENT, "tile: at most %d dims are supported", KD_MAX_DIMS);
  int lead = self->ndim > n ? self->ndim - n : 0;
  for (int i = 0; i < lead; i++) rep[i] = 1;
  memcpy(rep + lead, args[1].v.ilist.data, sizeof(int64_t) * n);
  kd_scope s;
  kd_scope_init(&s);
  kd_tensor *r = NULL;
  kd_status st = kd_repeat_impl(&s, self, rep, n + lead, &r);
  return kd_scope_finish(&s, st, r, outs);
}

/* The counts of a repeats tensor as int64 on the host (caller frees). */
static kd_status kd_repeats_values(kd_scope *s, kd_tensor *rep, int64_t **out) {
  if (rep->dtype != KD_DTYPE_I64 && rep->dtype != KD_DTYPE_I32)
    return kd_error(KD_ERR_DTYPE, "repeats has to be Long or Int tensor");
  kd_tensor *h;
  kd_value v[4] = {kd_value_tensor(rep), kd_value_dtype(KD_DTYPE_I64), kd_value_device(kd_device_cpu()), kd_value_none()};
  KD_TRY(kd_scope_call(s, KD_OP_to, v, &h));
  kd_value c[1] = {kd_value_tensor(h)};
  KD_TRY(kd_scope_call(s, KD_OP_contiguous, c, &h));
  int64_t n = kd_tensor_numel(h);
  int64_t *p = (int64_t *)malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
  if (!p) return kd_error(KD_ERR_OOM, "out of host memory");
  memcpy(p, kd_tensor_data(h), sizeof(int64_t) * (size_t)n);
  *out = p;
  return KD_OK;
}

static kd_status kd_repeat_interleave_impl(kd_scope *s, kd_tensor *self, const kd_value *rv, const kd_value *dv,
                                           kd_tensor **result) {
  kd_tensor *x = self;
  int d = 0;
  if (dv->kind == KD_VALUE_INT) {
    KD_TRY(kd_shape_wrap_dim(dv->v.i, self->ndim, &d));
  } else {
    int64_t flat = -1;
    KD_TRY(sc_shape(s, KD_OP_reshape, self, &flat, 1, &x));
  }
  if (x->ndim == 0) { /* a 0-d self with dim given: as a 1-element vector, result 1-D */
    int64_t one = 1;
    KD_TRY(sc_shape(s, KD_OP_reshape, x, &one, 1, &x));
  }
  int64_t len = x->sizes[d];
  if (rv->kind == KD_VALUE_INT || (rv->kind == KD_VALUE_TENSOR && kd_tensor_numel(rv->v.t) == 1 && rv->v.t->ndim <= 1)) {
    int64_t r;
    if (rv->kind == KD_VALUE_INT) {
      r = rv->v.i;
    } else {
      int64_t *vals;
      KD_TRY(kd_repeats_values(s, rv->v.t, &vals));
      r = vals[0];
      free(vals);
    }
    if (r < 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "repeats can not be negative");
    kd_tensor *u;
    KD_TRY(sc_view1(s, KD_OP_unsqueeze, x, d + 1, &u));
    int64_t sz[KD_MAX_DIMS], fin[KD_MAX_DIMS];
    memcpy(sz, u->sizes, sizeof(int64_t) * u->ndim);
    sz[d + 1] = r;
    KD_TRY(sc_shape(s, KD_OP_expand, u, sz, u->ndim, &u));
    memcpy(fin, x->sizes, sizeof(int64_t) * x->ndim);
    if (kd_mul_overflows(len, r, &fin[d]))
      return kd_error(KD_ERR_INVALID_ARGUMENT, "Storage size calculation overflowed: %lld elements repeated %lld times",
                      (long long)len, (long long)r);
    KD_TRY(sc_shape(s, KD_OP_reshape, u, fin, x->ndim, &u));
    KD_TRY(sc_ensure_copy(s, self, &u));
    *result = u;
    return KD_OK;
  }
  kd_tensor *rep = rv->v.t;
  if (rep->ndim > 1) return kd_error(KD_ERR_INVALID_ARGUMENT, "repeats must be 0-dim or 1-dim tensor");
  if (rep->sizes[0] != len)
    return kd_error(KD_ERR_SHAPE, "repeats must have the same size as input along dim, but got repeats.size(0) = %lld "
                    "and input.size(%d) = %lld", (long long)rep->sizes[0], d, (long long)len);
  int64_t *vals;
  KD_TRY(kd_repeats_values(s, rep, &vals));
  kd_status st = KD_OK;
  for (int64_t i = 0; i < len; i++)
    if (vals[i] < 0) st = kd_error(KD_ERR_INVALID_ARGUMENT, "repeats can not be negative");
  kd_tensor **pieces = st == KD_OK ? (kd_tensor **)calloc((size_t)(len > 0 ? len : 1), sizeof(kd_tensor *)) : NULL;
  if (st == KD_OK && !pieces) st = kd_error(KD_ERR_OOM, "out of host memory");
  int np = 0;
  for (int64_t i = 0; i < len && st == KD_OK; i++) {
    if (vals[i] == 0) continue;
    kd_tensor *p;
    st = sc_narrow(s, x, d, i, 1, &p);
    if (st != KD_OK) break;
    int64_t sz[KD_MAX_DIMS];
    memcpy(sz, p->sizes, sizeof(int64_t) * p->ndim);
    sz[d] = vals[i];
    st = sc_shape(s, KD_OP_expand, p, sz, p->ndim, &pieces[np++]);
  }
  free(vals);
  if (st == KD_OK) {
    if (np == 0) {
      kd_tensor *e;
      st = sc_narrow(s, x, d, 0, 0, &e);
      if (st == KD_OK) st = sc_clone(s, e, result);
    } else {
      st = sc_cat(s, pieces, np, d, result);
    }
  }
  free(pieces);
  return st;
}

KD_KERNEL(kd_composite_repeat_interleave) {
  (void)op;
  (void)ks;
  kd_scope s;
  kd_scope_init(&s);
  kd_tensor *r = NULL;
  kd_status st = kd_repeat_interleave_impl(&s, args[0].v.t, &args[1], &args[2], &r);
  return kd_scope_finish(&s, st, r, outs);
}

/* ---- diagonals ---- */

KD_KERNEL(kd_composite_trace) {
  (void)op;
  (void)ks;
  kd_tensor *self = args[0].v.t;
  if (self->ndim != 2)
    return kd_error(KD_ERR_SHAPE, "trace: expected a matrix, but got tensor with dim %d", self->ndim);
  kd_scope s;
  kd_scope_init(&s);
  kd_tensor *d = NULL, *r = NULL;
  kd_status st = sc_diagonal(&s, self, 0, 0, 1, &d);
  if (st == KD_OK) {
    kd_value v[4] = {kd_value_tensor(d), kd_value_none(), kd_value_none(), kd_value_none()};
    st = kd_scope_call(&s, KD_OP_sum, v, &r);
  }
  return kd_scope_finish(&s, st, r, outs);
}

static kd_status kd_diag_impl(kd_scope *s, kd_tensor *self, int64_t k, kd_tensor **result) {
  if (self->ndim == 1) {
    int64_t n; /* the square's side: size + |k| (which may not fit; then no square does) */
    if (k == INT64_MIN || kd_add_overflows(self->sizes[0], k < 0 ? -k : k, &n))
      return kd_error(KD_ERR_INVALID_ARGUMENT, "Storage size calculation overflowed: diag of a vector of %lld elements "
                      "at diagonal %lld", (long long)self->sizes[0], (long long)k);
    int64_t sz[2] = {n, n};
    kd_tensor *z, *v;
    KD_TRY(sc_zeros(s, sz, 2, self->dtype, kd_tensor_device(self), &z));
    KD_TRY(sc_diagonal(s, z, k, 0, 1, &v));
    KD_TRY(sc_inplace(KD_OP_copy_, v, self));
    *result = z;
    return KD_OK;
  }
  if (self->ndim == 2) {
    kd_tensor *v;
    KD_TRY(sc_diagonal(s, self, k, 0, 1, &v));
    return sc_clone(s, v, result);
  }
  return kd_error(KD_ERR_SHAPE, "matrix or a vector expected");
}

KD_KERNEL(kd_diag) {
  (void)op;
  (void)ks;
  kd_scope s;
  kd_scope_init(&s);
  kd_tensor *r = NULL;
  kd_status st = kd_diag_impl(&s, args[0].v.t, args[1].v.i, &r);
  return kd_scope_finish(&s, st, r, outs);
}

KD_KERNEL(kd_diagonal_backward) {
  (void)op;
  (void)ks;
  kd_tensor *grad = args[0].v.t;
  kd_scope s;
  kd_scope_init(&s);
  kd_tensor *z = NULL, *v;
  kd_status st = sc_zeros(&s, args[1].v.ilist.data, args[1].v.ilist.n, grad->dtype, kd_tensor_device(grad), &z);
  if (st == KD_OK) st = sc_diagonal(&s, z, args[2].v.i, args[3].v.i, args[4].v.i, &v);
  if (st == KD_OK) st = sc_inplace(KD_OP_copy_, v, grad);
  return kd_scope_finish(&s, st, z, outs);
}

static kd_status kd_unfold_backward_impl(kd_scope *s, kd_tensor *grad, const int64_t *in_sizes, int n, int64_t dim,
                                         int64_t size, int64_t step, kd_tensor **result) {
  kd_tensor *z;
  KD_TRY(sc_zeros(s, in_sizes, n, grad->dtype, kd_tensor_device(grad), &z));
  *result = z;
  if (n == 0) { /* unfold of a 0-d tensor: grad has shape [size] with size <= 1 */
    if (kd_tensor_numel(grad) == 1) {
      kd_tensor *g;
      KD_TRY(sc_shape(s, KD_OP_reshape, grad, NULL, 0, &g));
      KD_TRY(sc_inplace(KD_OP_add_, z, g));
    }
    return KD_OK;
  }
  int d;
  KD_TRY(kd_shape_wrap_dim(dim, n, &d));
  if (grad->ndim != n + 1) return kd_error(KD_ERR_SHAPE, "unfoldBackward: gradient has %d dims, expected %d", grad->ndim, n + 1);
  int64_t windows = grad->sizes[d];
  for (int64_t w = 0; w < windows; w++) {
    kd_tensor *slot, *g;
    KD_TRY(sc_narrow(s, z, d, w * step, size, &slot));
    kd_value v[3] = {kd_value_tensor(grad), kd_value_int(d), kd_value_int(w)};
    KD_TRY(kd_scope_call(s, KD_OP_select, v, &g));
    int64_t src = -1, dst = d;
    kd_value m[3] = {kd_value_tensor(g), kd_value_intlist(&src, 1), kd_value_intlist(&dst, 1)};
    KD_TRY(kd_scope_call(s, KD_OP_movedim, m, &g));
    KD_TRY(sc_inplace(KD_OP_add_, slot, g));
  }
  return KD_OK;
}

KD_KERNEL(kd_unfold_backward) {
  (void)op;
  (void)ks;
  kd_scope s;
  kd_scope_init(&s);
  kd_tensor *r = NULL;
  kd_status st = kd_unfold_backward_impl(&s, args[0].v.t, args[1].v.ilist.data, args[1].v.ilist.n, args[2].v.i,
                                         args[3].v.i, args[4].v.i, &r);
  return kd_scope_finish(&s, st, r, outs);
}
