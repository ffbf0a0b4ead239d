/* composite_matmul.c - torch.matmul as a composition of mm, bmm and views, so it runs on
 * every device (and under autograd) with no kernel of its own:
 *   1-D @ 1-D  -> 0-d dot            unsqueeze, mm, reshape([])
 *   2-D @ 1-D  -> matrix-vector      unsqueeze(-1), mm, reshape([m])
 *   1-D @ 2-D  -> vector-matrix      unsqueeze(0), mm, reshape([p])
 *   2-D @ 2-D  -> mm
 *   N-D @ 1-D/2-D (N >= 3)           fold the leading dims into rows: reshape, mm, reshape
 *   otherwise  (batched)             broadcast the batch dims: expand, reshape to 3-D, bmm, reshape
 * Error messages are PyTorch's, including the ones its dot/mv paths give. Every
 * intermediate tensor is released on every path (see kd_matmul_scope). */
#include <string.h>

#include "ops/kernel.h"

/* Intermediates of one matmul call, released together at the end. */
typedef struct kd_matmul_scope {
  kd_tensor *t[8];
  int n;
} kd_matmul_scope;

static kd_tensor *kd_matmul_keep(kd_matmul_scope *s, kd_tensor *t) {
  s->t[s->n++] = t;
  return t;
}
static void kd_matmul_scope_release(kd_matmul_scope *s) {
  for (int i = 0; i < s->n; i++) kd_tensor_release(s->t[i]);
  s->n = 0;
}

static kd_status kd_matmul_unsqueeze(kd_matmul_scope *s, kd_tensor *t, int64_t dim, kd_tensor **out) {
  kd_value a[2] = {kd_value_tensor(t), kd_value_int(dim)};
  KD_TRY(kd_call1(KD_OP_unsqueeze, a, out));
  kd_matmul_keep(s, *out);
  return KD_OK;
}
static kd_status kd_matmul_reshape(kd_matmul_scope *s, kd_tensor *t, const int64_t *shape, int n, kd_tensor **out) {
  static const int64_t none[1] = {0};
  kd_value a[2] = {kd_value_tensor(t), kd_value_intlist(n ? shape : none, n)};
  KD_TRY(kd_call1(KD_OP_reshape, a, out));
  kd_matmul_keep(s, *out);
  return KD_OK;
}
static kd_status kd_matmul_expand(kd_matmul_scope *s, kd_tensor *t, const int64_t *size, int n, kd_tensor **out) {
  kd_value a[2] = {kd_value_tensor(t), kd_value_intlist(size, n)};
  KD_TRY(kd_call1(KD_OP_expand, a, out));
  kd_matmul_keep(s, *out);
  return KD_OK;
}
static kd_status kd_matmul_mm(kd_matmul_scope *s, kd_op_id id, kd_tensor *a, kd_tensor *b, kd_tensor **out) {
  kd_value v[2] = {kd_value_tensor(a), kd_value_tensor(b)};
  KD_TRY(kd_call1(id, v, out));
  kd_matmul_keep(s, *out);
  return KD_OK;
}

/* PyTorch's ScalarType names, for the dot messages. */
static const char *kd_matmul_scalar_name(kd_dtype t) {
  static const char *const names[KD_DTYPE_COUNT] = {
      [KD_DTYPE_F32] = "Float", [KD_DTYPE_F64] = "Double", [KD_DTYPE_F16] = "Half", [KD_DTYPE_BF16] = "BFloat16",
      [KD_DTYPE_I8] = "Char",   [KD_DTYPE_U8] = "Byte",    [KD_DTYPE_I16] = "Short", [KD_DTYPE_I32] = "Int",
      [KD_DTYPE_I64] = "Long",  [KD_DTYPE_BOOL] = "Bool",
  };
  return (unsigned)t < KD_DTYPE_COUNT ? names[t] : "?";
}

/* The body; every tensor it creates goes into `s`, and *result is one of them. */
static kd_status kd_matmul_impl(kd_matmul_scope *s, kd_tensor *t1, kd_tensor *t2, kd_tensor **result) {
  int d1 = t1->ndim, d2 = t2->ndim;
  kd_tensor *x, *y, *r;
  if (d1 == 0 || d2 == 0)
    return kd_error(KD_ERR_SHAPE, "both arguments to matmul need to be at least 1D, but they are %dD and %dD", d1, d2);

  if (d1 == 1 && d2 == 1) { /* dot */
    if (t1->dtype != t2->dtype)
      return kd_error(KD_ERR_DTYPE, "dot : expected both vectors to have same dtype, but found %s and %s",
                      kd_matmul_scalar_name(t1->dtype), kd_matmul_scalar_name(t2->dtype));
    if (t1->sizes[0] != t2->sizes[0])
      return kd_error(KD_ERR_SHAPE, "inconsistent tensor size, expected tensor [%lld] and src [%lld] to have the same "
                      "number of elements, but got %lld and %lld elements respectively",
                      (long long)t1->sizes[0], (long long)t2->sizes[0], (long long)t1->sizes[0], (long long)t2->sizes[0]);
    if (t1->dtype == KD_DTYPE_BOOL) return kd_error(KD_ERR_NOT_SUPPORTED, "\"dot\" not implemented for 'Bool'");
    KD_TRY(kd_matmul_unsqueeze(s, t1, 0, &x));
    KD_TRY(kd_matmul_unsqueeze(s, t2, 1, &y));
    KD_TRY(kd_matmul_mm(s, KD_OP_mm, x, y, &r));
    return kd_matmul_reshape(s, r, NULL, 0, result);
  }
  if (d1 == 2 && d2 == 2) return kd_matmul_mm(s, KD_OP_mm, t1, t2, result);
  if (d1 == 1 && d2 == 2) { /* vector @ matrix */
    KD_TRY(kd_matmul_unsqueeze(s, t1, 0, &x));
    KD_TRY(kd_matmul_mm(s, KD_OP_mm, x, t2, &r));
    return kd_matmul_reshape(s, r, &t2->sizes[1], 1, result);
  }
  if (d1 >= 2 && d2 <= 2) { /* matrix-vector, or fold N-D @ 1-D/2-D into one mm */
    int64_t k = t1->sizes[d1 - 1], rows = 1;
    for (int i = 0; i < d1 - 1; i++) rows *= t1->sizes[i];
    if (d2 == 1 && t2->sizes[0] != k)
      return kd_error(KD_ERR_SHAPE, "size mismatch, got input (%lld), mat (%lldx%lld), vec (%lld)", (long long)rows,
                      (long long)rows, (long long)k, (long long)t2->sizes[0]);
    int64_t shape[KD_MAX_DIMS];
    if (d1 > 2) {
      int64_t fold[2] = {rows, k};
      KD_TRY(kd_matmul_reshape(s, t1, fold, 2, &x));
    } else {
      x = t1;
    }
    if (d2 == 1) KD_TRY(kd_matmul_unsqueeze(s, t2, 1, &y));
    else y = t2;
    KD_TRY(kd_matmul_mm(s, KD_OP_mm, x, y, &r));
    memcpy(shape, t1->sizes, sizeof(int64_t) * (d1 - 1));
    int n = d1 - 1;
    if (d2 == 2) shape[n++] = t2->sizes[1];
    return kd_matmul_reshape(s, r, shape, n, result);
  }

  /* Batched: at least one side has >= 3 dims (and t2 has >= 3 when t1 has <= 2). */
  int64_t n = d1 > 1 ? t1->sizes[d1 - 2] : 1, m1 = t1->sizes[d1 - 1];
  int64_t m2 = t2->sizes[d2 - 2], p = t2->sizes[d2 - 1];
  int nb1 = d1 > 2 ? d1 - 2 : 0, nb2 = d2 - 2;
  int64_t batch[KD_MAX_DIMS];
  int nb;
  KD_TRY(kd_shape_broadcast(t1->sizes, nb1, t2->sizes, nb2, batch, &nb));
  if (nb + 2 > KD_MAX_DIMS) return kd_error(KD_ERR_INVALID_ARGUMENT, "matmul: at most %d dims are supported", KD_MAX_DIMS);
  int64_t bprod = 1;
  for (int i = 0; i < nb; i++) bprod *= batch[i];
  int64_t size[KD_MAX_DIMS];
  memcpy(size, batch, sizeof(int64_t) * nb);
  size[nb] = n;
  size[nb + 1] = m1;
  KD_TRY(kd_matmul_expand(s, t1, size, nb + 2, &x));
  int64_t s3[3] = {bprod, n, m1};
  KD_TRY(kd_matmul_reshape(s, x, s3, 3, &x));
  size[nb] = m2;
  size[nb + 1] = p;
  KD_TRY(kd_matmul_expand(s, t2, size, nb + 2, &y));
  s3[1] = m2;
  s3[2] = p;
  KD_TRY(kd_matmul_reshape(s, y, s3, 3, &y));
  KD_TRY(kd_matmul_mm(s, KD_OP_bmm, x, y, &r));
  /* output: batch + [n if t1 is a matrix] + [p] */
  int no = nb;
  if (d1 > 1) size[no++] = n;
  size[no++] = p;
  return kd_matmul_reshape(s, r, size, no, result);
}

KD_KERNEL(kd_composite_matmul) {
  (void)op;
  (void)ks;
  kd_matmul_scope s;
  s.n = 0;
  kd_tensor *result = NULL;
  kd_status st = kd_matmul_impl(&s, args[0].v.t, args[1].v.t, &result);
  if (st == KD_OK) kd_out_retain(outs, 0, result); /* result lives in s: take our own reference */
  kd_matmul_scope_release(&s);
  return st;
}
