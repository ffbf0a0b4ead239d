/* linalg_composites.c - linear-algebra ops written with other ops through kd_call (every
 * device, autograd through the ops they call): addbmm (one addmm over the batch folded into
 * the inner dim), dot/vdot/mv (checks with PyTorch's messages, then matmul, which reaches
 * gemv/gemm), outer (a broadcast mul, promoting dtypes as PyTorch) and linear (addmm with the
 * bias as C and beta = 1, so the bias costs no extra pass; N-D inputs folded to 2-D). */
#include <string.h>

#include "ops/shape_scope.h"

static const char *la_name(kd_dtype t) {
  static const char *const names[KD_DTYPE_COUNT] = {
      [KD_DTYPE_F32] = "Float", [KD_DTYPE_F64] = "Double", [KD_DTYPE_F16] = "Half", [KD_DTYPE_BF16] = "BFloat16",
      [KD_DTYPE_I8] = "Char",   [KD_DTYPE_U8] = "Byte",    [KD_DTYPE_I16] = "Short", [KD_DTYPE_I32] = "Int",
      [KD_DTYPE_I64] = "Long",  [KD_DTYPE_BOOL] = "Bool",
  };
  return (unsigned)t < KD_DTYPE_COUNT ? names[t] : "?";
}

static kd_status la_shape(kd_scope *s, kd_op_id op, kd_tensor *t, const int64_t *shape, int n, kd_tensor **out) {
  static const int64_t none[1] = {0};
  kd_value v[2] = {kd_value_tensor(t), kd_value_intlist(n ? shape : none, n)};
  return kd_scope_call(s, op, v, out);
}
static kd_status la_t(kd_scope *s, kd_tensor *t, kd_tensor **out) {
  kd_value v[1] = {kd_value_tensor(t)};
  return kd_scope_call(s, KD_OP_t, v, out);
}
static kd_status la_binary(kd_scope *s, kd_op_id op, kd_tensor *a, kd_tensor *b, kd_tensor **out) {
  kd_value v[3] = {kd_value_tensor(a), kd_value_tensor(b), kd_value_none()};
  return kd_scope_call(s, op, v, out);
}
static kd_status la_addmm(kd_scope *s, kd_tensor *self, kd_tensor *a, kd_tensor *b, kd_value beta, kd_value alpha,
                          kd_tensor **out) {
  kd_value v[5] = {kd_value_tensor(self), kd_value_tensor(a), kd_value_tensor(b), beta, alpha};
  return kd_scope_call(s, KD_OP_addmm, v, out);
}

static kd_status kd_addbmm_impl(kd_scope *s, kd_value *args, kd_tensor **result) {
  kd_tensor *self = args[0].v.t, *b1 = args[1].v.t, *b2 = args[2].v.t;
  if (b1->ndim != 3) return kd_error(KD_ERR_SHAPE, "batch1 must be a 3D tensor");
  if (b2->ndim != 3) return kd_error(KD_ERR_SHAPE, "batch2 must be a 3D tensor");
  if (b1->sizes[0] != b2->sizes[0])
    return kd_error(KD_ERR_SHAPE, "batch1 and batch2 must have same number of batches, got %lld and %lld",
                    (long long)b1->sizes[0], (long long)b2->sizes[0]);
  if (b1->sizes[2] != b2->sizes[1])
    return kd_error(KD_ERR_SHAPE, "Incompatible matrix sizes for bmm (%lldx%lld and %lldx%lld)", (long long)b1->sizes[1],
                    (long long)b1->sizes[2], (long long)b2->sizes[1], (long long)b2->sizes[2]);
  int64_t B = b1->sizes[0], n = b1->sizes[1], k = b1->sizes[2], p = b2->sizes[2];
  int64_t perm[3] = {1, 0, 2}, s1[2] = {n, B * k}, s2[2] = {B * k, p};
  kd_tensor *a, *b;
  KD_TRY(la_shape(s, KD_OP_permute, b1, perm, 3, &a));
  KD_TRY(la_shape(s, KD_OP_reshape, a, s1, 2, &a));
  KD_TRY(la_shape(s, KD_OP_reshape, b2, s2, 2, &b));
  return la_addmm(s, self, a, b, args[3], args[4], result);
}

KD_KERNEL(kd_composite_addbmm) {
  (void)op;
  (void)ks;
  kd_scope s;
  kd_scope_init(&s);
  kd_tensor *r = NULL;
  kd_status st = kd_addbmm_impl(&s, args, &r);
  return kd_scope_finish(&s, st, r, outs);
}

static kd_status kd_vecprod_impl(kd_scope *s, int code, kd_tensor *a, kd_tensor *b, kd_tensor **result) {
  switch (code) {
    case KD_VECPROD_DOT:
    case KD_VECPROD_VDOT:
      if (a->ndim != 1 || b->ndim != 1)
        return kd_error(KD_ERR_SHAPE, "1D tensors expected, but got %dD and %dD tensors", a->ndim, b->ndim);
      if (a->dtype != b->dtype)
        return kd_error(KD_ERR_DTYPE, "%s : expected both vectors to have same dtype, but found %s and %s", /* vdot says dot too */
                        "dot", la_name(a->dtype), la_name(b->dtype));
      if (a->sizes[0] != b->sizes[0])
        return kd_error(KD_ERR_SHAPE, "inconsistent tensor size, expected tensor [%lld] and src [%lld] to have the same "
                        "number of elements, but got %lld and %lld elements respectively", (long long)a->sizes[0],
                        (long long)b->sizes[0], (long long)a->sizes[0], (long long)b->sizes[0]);
      return la_binary(s, KD_OP_matmul, a, b, result);
    case KD_VECPROD_MV:
      if (a->ndim != 2 || b->ndim != 1)
        return kd_error(KD_ERR_SHAPE, "vector + matrix @ vector expected, got 1, %d, %d", a->ndim, b->ndim);
      if (a->sizes[1] != b->sizes[0])
        return kd_error(KD_ERR_SHAPE, "size mismatch, got %lld, %lldx%lld,%lld", (long long)a->sizes[0],
                        (long long)a->sizes[0], (long long)a->sizes[1], (long long)b->sizes[0]);
      if (a->dtype != b->dtype)
        return kd_error(KD_ERR_DTYPE, "expected scalar type %s but found %s", la_name(a->dtype), la_name(b->dtype));
      return la_binary(s, KD_OP_matmul, a, b, result);
    default: { /* outer */
      if (a->ndim != 1) return kd_error(KD_ERR_SHAPE, "outer: Expected 1-D argument self, but got %d-D", a->ndim);
      if (b->ndim != 1) return kd_error(KD_ERR_SHAPE, "outer: Expected 1-D argument vec2, but got %d-D", b->ndim);
      int64_t col[2] = {-1, 1};
      kd_tensor *c;
      KD_TRY(la_shape(s, KD_OP_reshape, a, col, 2, &c));
      return la_binary(s, KD_OP_mul, c, b, result);
    }
  }
}

KD_KERNEL(kd_composite_vecprod) {
  (void)ks;
  kd_scope s;
  kd_scope_init(&s);
  kd_tensor *r = NULL;
  kd_status st = kd_vecprod_impl(&s, op->code, args[0].v.t, args[1].v.t, &r);
  return kd_scope_finish(&s, st, r, outs);
}

static kd_status kd_linear_impl(kd_scope *s, kd_tensor *x, kd_tensor *w, kd_tensor *bias, kd_tensor **result) {
  kd_tensor *wt;
  KD_TRY(la_t(s, w, &wt));
  kd_value one = kd_value_scalar(kd_scalar_i(1));
  if (bias && x->ndim == 2 && w->ndim == 2) return la_addmm(s, bias, x, wt, one, one, result);
  if (bias && x->ndim > 2 && w->ndim == 2) { /* fold the leading dims into rows: one gemm */
    int64_t rows = 1, shape[KD_MAX_DIMS];
    for (int i = 0; i < x->ndim - 1; i++) rows *= x->sizes[i];
    int64_t fold[2] = {rows, x->sizes[x->ndim - 1]};
    kd_tensor *x2, *r;
    KD_TRY(la_shape(s, KD_OP_reshape, x, fold, 2, &x2));
    KD_TRY(la_addmm(s, bias, x2, wt, one, one, &r));
    memcpy(shape, x->sizes, sizeof(int64_t) * (x->ndim - 1));
    shape[x->ndim - 1] = r->sizes[1];
    return la_shape(s, KD_OP_reshape, r, shape, x->ndim, result);
  }
  kd_tensor *r;
  KD_TRY(la_binary(s, KD_OP_matmul, x, wt, &r));
  if (!bias) {
    *result = r;
    return KD_OK;
  }
  return la_binary(s, KD_OP_add, r, bias, result);
}

KD_KERNEL(kd_composite_linear) {
  (void)op;
  (void)ks;
  kd_scope s;
  kd_scope_init(&s);
  kd_tensor *r = NULL;
  kd_status st = kd_linear_impl(&s, args[0].v.t, args[1].v.t, args[2].kind == KD_VALUE_TENSOR ? args[2].v.t : NULL, &r);
  return kd_scope_finish(&s, st, r, outs);
}
