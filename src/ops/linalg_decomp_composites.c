/* linalg_decomp_composites.c - the torch.linalg ops written with other ops through kd_call
 * (every device; autograd through the ops they call): linalg.solve's vector right-hand sides,
 * svdvals/eigvalsh (the factorizations' values), pinv/pinverse and matrix_rank (SVD or eigh with
 * PyTorch's atol/rtol rule), vector/matrix/linalg norms and torch.norm's 'fro'/'nuc', the cross
 * product, and the backward helpers whose formulas branch on shapes (PyTorch's linalg_qr_backward, svd_backward,
 * pinv_backward, from torch/csrc/autograd/FunctionsManual.cpp). The factorizations themselves
 * are kernels: src/cpu/linalg_lapack.c. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cpu/cpu_loops.h" /* kd_cpu_torch_name: PyTorch's dtype names in messages */
#include "ops/shape_scope.h"

#define V_T(x) kd_value_tensor(x)
#define V_I(x) kd_value_int(x)
#define V_B(x) kd_value_bool(x)
#define V_D(x) kd_value_double(x)
#define V_F(x) kd_value_scalar(kd_scalar_f(x))
#define V_N kd_value_none()
/* *out = op(args...) kept in the scope s (in scope at the call site). */
#define LC(out, op, ...) KD_TRY(kd_scope_call(s, (op), (kd_value[]){__VA_ARGS__}, (out)))

static kd_value lc_str(const char *x) {
  kd_value v;
  v.kind = KD_VALUE_STRING;
  v.v.str = x;
  return v;
}

/* An op with n tensor outputs; all are kept in the scope. */
static kd_status lc_calln(kd_scope *s, kd_op_id op, kd_value *args, int n, kd_tensor **outs) {
  kd_value o[4];
  memset(o, 0, sizeof o);
  KD_TRY(kd_call(op, args, o));
  kd_status st = KD_OK;
  for (int i = 0; i < n; i++) {
    outs[i] = o[i].v.t;
    if (st == KD_OK) st = kd_scope_keep(s, o[i].v.t);
    else kd_tensor_release(o[i].v.t);
  }
  return st;
}
static kd_status lc_mt(kd_scope *s, kd_tensor *x, kd_tensor **out) {
  LC(out, KD_OP_transpose, V_T(x), V_I(-2), V_I(-1));
  return KD_OK;
}
static kd_status lc_mm(kd_scope *s, kd_tensor *a, kd_tensor *b, kd_tensor **out) {
  LC(out, KD_OP_matmul, V_T(a), V_T(b));
  return KD_OK;
}
static kd_status lc_add(kd_scope *s, kd_tensor *a, kd_tensor *b, double alpha, kd_tensor **out) {
  /* an integer alpha: cross of integer tensors uses it too */
  LC(out, KD_OP_add, V_T(a), V_T(b), kd_value_scalar(alpha == (int64_t)alpha ? kd_scalar_i((int64_t)alpha) : kd_scalar_f(alpha)));
  return KD_OK;
}
static kd_status lc_mul(kd_scope *s, kd_tensor *a, kd_tensor *b, kd_tensor **out) {
  LC(out, KD_OP_mul, V_T(a), V_T(b));
  return KD_OK;
}
/* num / den where num != 0, else 0 (the terms of a gradient whose incoming part is zero, which
 * PyTorch skips as undefined, must not become 0/0). */
static kd_status lc_safe_div(kd_scope *s, kd_tensor *num, kd_tensor *den, kd_tensor **out) {
  kd_tensor *q, *z;
  LC(&q, KD_OP_div, V_T(num), V_T(den), V_N);
  LC(&z, KD_OP_eq, V_T(num), V_F(0));
  LC(out, KD_OP_where, V_T(z), V_F(0), V_T(q));
  return KD_OK;
}
/* diag_embed(v): v (..., k) on the diagonal of (..., k, k) matrices. */
static kd_status lc_diag_embed(kd_scope *s, kd_tensor *v, kd_tensor **out) {
  kd_tensor *col, *ones, *row, *full, *lo;
  LC(&col, KD_OP_unsqueeze, V_T(v), V_I(-1));
  LC(&ones, KD_OP_onesLike, V_T(v), V_N, V_N);
  LC(&row, KD_OP_unsqueeze, V_T(ones), V_I(-2));
  KD_TRY(lc_mul(s, col, row, &full));
  LC(&lo, KD_OP_tril, V_T(full), V_I(0));
  LC(out, KD_OP_triu, V_T(lo), V_I(0));
  return KD_OK;
}

static bool lc_is_float(const kd_tensor *t) { return t->dtype == KD_DTYPE_F32 || t->dtype == KD_DTYPE_F64; }
static double lc_eps(const kd_tensor *t) { return t->dtype == KD_DTYPE_F64 ? 2.220446049250313e-16 : 1.1920928955078125e-07; }

/* ---- linalg.solve: vector right-hand sides become one-column matrices ---- */
static kd_status lc_solve(kd_scope *s, kd_value *args, kd_tensor **result) {
  kd_tensor *A = args[0].v.t, *B = args[1].v.t;
  bool left = args[2].v.b;
  if (A->ndim < 2) return kd_error(KD_ERR_SHAPE, "linalg.solve: The input tensor A must have at least 2 dimensions.");
  /* PyTorch's linalg_solve_is_vector_rhs */
  bool vec = B->ndim == A->ndim - 1;
  for (int d = 0; vec && d < B->ndim; d++) vec = B->sizes[d] == A->sizes[d];
  vec = vec || B->ndim == 1;
  if (!vec) {
    LC(result, KD_OP_linalgSolveMatrix, V_T(A), V_T(B), V_B(left));
    return KD_OK;
  }
  kd_tensor *b, *x;
  LC(&b, KD_OP_unsqueeze, V_T(B), V_I(-1));
  LC(&x, KD_OP_linalgSolveMatrix, V_T(A), V_T(b), V_B(left));
  int64_t last = -1;
  LC(result, KD_OP_squeeze, V_T(x), kd_value_intlist(&last, 1));
  return KD_OK;
}

/* ---- svdvals, eigvalsh ---- */
static kd_status lc_svdvals(kd_scope *s, kd_tensor *A, kd_value driver, kd_tensor **S) {
  kd_tensor *o[3];
  KD_TRY(lc_calln(s, KD_OP_linalgSvd, (kd_value[]){V_T(A), V_B(false), driver}, 3, o));
  *S = o[1];
  return KD_OK;
}
static kd_status lc_eigh(kd_scope *s, kd_tensor *A, kd_value uplo, kd_tensor **L, kd_tensor **V) {
  kd_tensor *o[2];
  KD_TRY(lc_calln(s, KD_OP_linalgEigh, (kd_value[]){V_T(A), uplo}, 2, o));
  *L = o[0];
  if (V) *V = o[1];
  return KD_OK;
}

/* ---- pinv / pinverse / matrix_rank ---- */
/* PyTorch's get_atol_rtol: atol 0 unless given; rtol eps * max(m, n) unless given, or 0 when
 * only a positive atol is given. The cutoff is max(atol, rtol * max singular value). */
static kd_status lc_tolerance(kd_scope *s, kd_tensor *A, const kd_value *atol, const kd_value *rtol, kd_tensor *smax,
                              kd_tensor **tol) {
  double a = atol->kind == KD_VALUE_DOUBLE ? atol->v.d : 0.0;
  int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1];
  double r = rtol->kind == KD_VALUE_DOUBLE ? rtol->v.d
             : (atol->kind == KD_VALUE_DOUBLE && a > 0) ? 0.0 : lc_eps(A) * (double)(m > n ? m : n);
  kd_tensor *rs;
  LC(&rs, KD_OP_mul, V_T(smax), V_F(r));
  LC(tol, KD_OP_clampMin, V_T(rs), V_F(a));
  return KD_OK;
}

static kd_status lc_pinv(kd_scope *s, int code, kd_value *args, kd_tensor **result) {
  kd_tensor *A = args[0].v.t;
  kd_value none = V_N, rc;
  const kd_value *atol = code == KD_LACOMP_PINVERSE ? &none : &args[1];
  const kd_value *rtol = &args[2];
  if (code == KD_LACOMP_PINVERSE) {
    rc = V_D(args[1].v.d);
    rtol = &rc;
  }
  bool herm = code == KD_LACOMP_PINV && args[3].v.b;
  if (A->ndim < 2 || !lc_is_float(A)) {
    char shape[128];
    return kd_error(KD_ERR_DTYPE, "linalg.pinv(%s{%s}): expected a tensor with 2 or more dimensions of float, double, cfloat or "
                    "cdouble types", kd_cpu_torch_name(A->dtype), kd_shape_format(A->sizes, A->ndim, shape, sizeof shape));
  }
  if (kd_tensor_numel(A) == 0) { /* an empty (..., n, m) result */
    kd_tensor *t;
    KD_TRY(lc_mt(s, A, &t));
    LC(result, KD_OP_contiguous, V_T(t));
    return KD_OK;
  }
  kd_tensor *tol, *keep, *inv, *sinv, *row, *left, *right;
  if (!herm) {
    kd_tensor *o[3], *smax;
    KD_TRY(lc_calln(s, KD_OP_linalgSvd, (kd_value[]){V_T(A), V_B(false), V_N}, 3, o));
    LC(&smax, KD_OP_narrow, V_T(o[1]), V_I(-1), V_I(0), V_I(1)); /* singular values are descending */
    KD_TRY(lc_tolerance(s, A, atol, rtol, smax, &tol));
    LC(&keep, KD_OP_gt, V_T(o[1]), V_T(tol));
    LC(&inv, KD_OP_reciprocal, V_T(o[1]));
    LC(&sinv, KD_OP_where, V_T(keep), V_T(inv), V_F(0));
    LC(&row, KD_OP_unsqueeze, V_T(sinv), V_I(-2));
    KD_TRY(lc_mt(s, o[2], &left));
    KD_TRY(lc_mul(s, left, row, &left));
    KD_TRY(lc_mt(s, o[0], &right));
    return lc_mm(s, left, right, result);
  }
  kd_tensor *L, *V, *absL, *lmax;
  KD_TRY(lc_eigh(s, A, lc_str("L"), &L, &V));
  LC(&absL, KD_OP_abs, V_T(L));
  int64_t last = -1;
  LC(&lmax, KD_OP_amax, V_T(absL), kd_value_intlist(&last, 1), V_B(true));
  KD_TRY(lc_tolerance(s, A, atol, rtol, lmax, &tol));
  LC(&keep, KD_OP_gt, V_T(absL), V_T(tol));
  LC(&inv, KD_OP_reciprocal, V_T(L));
  LC(&sinv, KD_OP_where, V_T(keep), V_T(inv), V_F(0));
  LC(&row, KD_OP_unsqueeze, V_T(sinv), V_I(-2));
  KD_TRY(lc_mul(s, V, row, &left));
  KD_TRY(lc_mt(s, V, &right));
  return lc_mm(s, left, right, result);
}

static kd_status lc_matrix_rank(kd_scope *s, kd_value *args, kd_tensor **result) {
  kd_tensor *A = args[0].v.t;
  if (A->ndim < 2)
    return kd_error(KD_ERR_SHAPE, "torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions.");
  if (!lc_is_float(A)) return kd_error(KD_ERR_DTYPE, "This function doesn't handle types other than float and double");
  int64_t last = -1;
  if (kd_tensor_numel(A) == 0) {
    int64_t bs[KD_MAX_DIMS];
    memcpy(bs, A->sizes, sizeof(int64_t) * (size_t)(A->ndim - 2));
    LC(result, KD_OP_zeros, kd_value_intlist(bs, A->ndim - 2), kd_value_dtype(KD_DTYPE_I64),
       kd_value_device(kd_tensor_device(A)));
    return KD_OK;
  }
  kd_tensor *S, *smax, *tol, *keep;
  if (args[3].v.b) {
    kd_tensor *L;
    KD_TRY(lc_eigh(s, A, lc_str("L"), &L, NULL));
    LC(&S, KD_OP_abs, V_T(L));
  } else {
    KD_TRY(lc_svdvals(s, A, V_N, &S));
  }
  LC(&smax, KD_OP_amax, V_T(S), kd_value_intlist(&last, 1), V_B(true));
  KD_TRY(lc_tolerance(s, A, &args[1], &args[2], smax, &tol));
  LC(&keep, KD_OP_gt, V_T(S), V_T(tol));
  LC(result, KD_OP_sum, V_T(keep), kd_value_intlist(&last, 1), V_B(false), kd_value_dtype(KD_DTYPE_I64));
  return KD_OK;
}

/* ---- norms ---- */
static kd_status lc_vector_norm(kd_scope *s, kd_tensor *A, double ord, kd_value dim, bool keepdim, kd_value dtype,
                                kd_tensor **result) {
  if (!kd_dtype_is_float(A->dtype))
    return kd_error(KD_ERR_DTYPE, "linalg.vector_norm: Expected a floating point or complex tensor as input. Got %s",
                    kd_cpu_torch_name(A->dtype));
  LC(result, KD_OP_norm, V_T(A), V_D(ord), dim, V_B(keepdim), dtype);
  return KD_OK;
}

/* ord: a number (str NULL) or 'fro' / 'nuc'. dim: NULL for (-2, -1). */
static kd_status lc_matrix_norm(kd_scope *s, kd_tensor *A, double ord, const char *str, const kd_value *dimv, bool keepdim,
                                kd_value dtype, kd_tensor **result) {
  if (A->ndim < 2) return kd_error(KD_ERR_SHAPE, "linalg.matrix_norm: The input tensor A must have at least 2 dimensions.");
  if (!kd_dtype_is_float(A->dtype))
    return kd_error(KD_ERR_DTYPE, "linalg.matrix_norm: Expected a floating point or complex tensor as input. Got %s",
                    kd_cpu_torch_name(A->dtype));
  int64_t dims[2] = {-2, -1};
  if (dimv && dimv->kind == KD_VALUE_INTLIST) {
    if (dimv->v.ilist.n != 2) return kd_error(KD_ERR_INVALID_ARGUMENT, "linalg.matrix_norm: dim must be a 2-tuple. Got %d dims", dimv->v.ilist.n);
    dims[0] = dimv->v.ilist.data[0];
    dims[1] = dimv->v.ilist.data[1];
  }
  int d0, d1;
  KD_TRY(kd_shape_wrap_dim(dims[0], A->ndim, &d0));
  KD_TRY(kd_shape_wrap_dim(dims[1], A->ndim, &d1));
  if (d0 == d1) return kd_error(KD_ERR_INVALID_ARGUMENT, "linalg.matrix_norm: dims must be different. Got (%lld, %lld)",
                                (long long)dims[0], (long long)dims[1]);
  bool spectral = str ? !strcmp(str, "nuc") : fabs(ord) == 2;
  if (str && strcmp(str, "fro") && strcmp(str, "nuc"))
    return kd_error(KD_ERR_NOT_SUPPORTED, "linalg.matrix_norm: Order %s not supported.", str);
  if (!str && fabs(ord) != 1 && fabs(ord) != 2 && !isinf(ord))
    return kd_error(KD_ERR_NOT_SUPPORTED, "linalg.matrix_norm: Order %g not supported.", ord);
  if (str && !strcmp(str, "fro")) {
    int64_t dd[2] = {d0, d1};
    return lc_vector_norm(s, A, 2, kd_value_intlist(dd, 2), keepdim, dtype, result);
  }
  if (dtype.kind == KD_VALUE_DTYPE) LC(&A, KD_OP_to, V_T(A), dtype, V_N, V_B(false));
  if (spectral) {
    int64_t src[2] = {d0, d1}, dst[2] = {-2, -1}, last = -1;
    kd_tensor *M, *S, *r;
    LC(&M, KD_OP_movedim, V_T(A), kd_value_intlist(src, 2), kd_value_intlist(dst, 2));
    KD_TRY(lc_svdvals(s, M, V_N, &S));
    kd_op_id red = str ? KD_OP_sum : ord > 0 ? KD_OP_amax : KD_OP_amin;
    if (red == KD_OP_sum) LC(&r, red, V_T(S), kd_value_intlist(&last, 1), V_B(false), V_N);
    else LC(&r, red, V_T(S), kd_value_intlist(&last, 1), V_B(false));
    if (keepdim) {
      LC(&r, KD_OP_unsqueeze, V_T(r), V_I(d0 < d1 ? d0 : d1));
      LC(&r, KD_OP_unsqueeze, V_T(r), V_I(d0 < d1 ? d1 : d0));
    }
    *result = r;
    return KD_OK;
  }
  if (isinf(ord)) {
    int x = d0;
    d0 = d1;
    d1 = x;
  }
  int64_t sd = d0;
  kd_tensor *ab, *sm;
  LC(&ab, KD_OP_abs, V_T(A));
  LC(&sm, KD_OP_sum, V_T(ab), kd_value_intlist(&sd, 1), V_B(keepdim), V_N);
  int64_t md = !keepdim && d0 < d1 ? d1 - 1 : d1;
  LC(result, ord > 0 ? KD_OP_amax : KD_OP_amin, V_T(sm), kd_value_intlist(&md, 1), V_B(keepdim));
  return KD_OK;
}

static const char *lc_format_list(const kd_value *v, char *buf, size_t n) {
  size_t k = (size_t)snprintf(buf, n, "[");
  for (int i = 0; i < v->v.ilist.n && k < n; i++)
    k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? ", " : "", (long long)v->v.ilist.data[i]);
  if (k < n) snprintf(buf + k, n - k, "]");
  return buf;
}

static kd_status lc_linalg_norm(kd_scope *s, kd_value *args, kd_tensor **result) {
  kd_tensor *A = args[0].v.t;
  const kd_value *ord = &args[1], *dim = &args[2];
  bool keepdim = args[3].v.b, has_dim = dim->kind == KD_VALUE_INTLIST, is_str = ord->kind == KD_VALUE_STRING;
  if (has_dim && dim->v.ilist.n != 1 && dim->v.ilist.n != 2) {
    char b[160];
    return kd_error(KD_ERR_INVALID_ARGUMENT, "linalg.norm: If dim is specified, it m%st be of length 1 or 2. Got %s",
                    is_str ? "u" : "us", lc_format_list(dim, b, sizeof b));
  }
  if (!has_dim && (is_str || ord->kind == KD_VALUE_DOUBLE) && A->ndim != 1 && A->ndim != 2)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got %dD.",
                    A->ndim);
  if (is_str) return lc_matrix_norm(s, A, 0, ord->v.str, has_dim ? dim : NULL, keepdim, args[4], result);
  if (ord->kind == KD_VALUE_DOUBLE && ((has_dim && dim->v.ilist.n == 2) || (!has_dim && A->ndim == 2)))
    return lc_matrix_norm(s, A, ord->v.d, NULL, has_dim ? dim : NULL, keepdim, args[4], result);
  return lc_vector_norm(s, A, ord->kind == KD_VALUE_DOUBLE ? ord->v.d : 2.0, *dim, keepdim, args[4], result);
}

/* torch.norm with a string p: 'fro' is the vector 2-norm over dim (all elements by default),
 * 'nuc' the nuclear norm of a matrix (of the two dims given), with PyTorch's checks. */
static kd_status lc_norm_str(kd_scope *s, kd_value *args, kd_tensor **result) {
  kd_tensor *A = args[0].v.t;
  const char *p = args[1].v.str;
  const kd_value *dim = &args[2];
  bool keepdim = args[3].v.b;
  if (!strcmp(p, "fro")) {
    LC(result, KD_OP_norm, V_T(A), V_D(2), *dim, V_B(keepdim), args[4]);
    return KD_OK;
  }
  if (strcmp(p, "nuc")) return kd_error(KD_ERR_INVALID_ARGUMENT, "only valid string values are 'fro' and 'nuc', found %s", p);
  if (args[4].kind == KD_VALUE_DTYPE)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "dtype argument is not supported in nuclear norm");
  bool has_dim = dim->kind == KD_VALUE_INTLIST;
  if (has_dim && dim->v.ilist.n != 2)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "nuclear norm requires a 'dim' argument of size 2");
  if (!has_dim && A->ndim != 2)
    return kd_error(KD_ERR_SHAPE, "Expected a tensor with 2 dimensions, but got a tensor with %d dimension%s instead.", A->ndim,
                    A->ndim == 1 ? "" : "s");
  return lc_matrix_norm(s, A, 0, "nuc", has_dim ? dim : NULL, keepdim, V_N, result);
}

/* ---- cross ---- */
static kd_status lc_cross(kd_scope *s, kd_value *args, kd_tensor **result) {
  kd_tensor *a = args[0].v.t, *b = args[1].v.t;
  if (a->ndim != b->ndim) return kd_error(KD_ERR_SHAPE, "linalg.cross: inputs must have the same number of dimensions.");
  if (a->dtype != b->dtype)
    return kd_error(KD_ERR_DTYPE, "expected scalar type %s but found %s", kd_cpu_torch_name(a->dtype), kd_cpu_torch_name(b->dtype));
  int64_t dv;
  if (args[2].kind == KD_VALUE_INT) dv = args[2].v.i;
  else { /* torch.cross without dim: the first dim of size 3 */
    dv = -1;
    for (int d = 0; d < a->ndim && dv < 0; d++)
      if (a->sizes[d] == 3) dv = d;
    if (dv < 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "no dimension of size 3 in input");
  }
  int d;
  KD_TRY(kd_shape_wrap_dim(dv, a->ndim, &d));
  if (a->sizes[d] != 3 || b->sizes[d] != 3)
    return kd_error(KD_ERR_SHAPE, "linalg.cross: inputs dimension %lld must have length 3. Got %lld and %lld", (long long)dv,
                    (long long)a->sizes[d], (long long)b->sizes[d]);
  int64_t dd = d, one = -1, two = -2;
  kd_tensor *a1, *a2, *b1, *b2, *p, *q;
  LC(&a1, KD_OP_roll, V_T(a), kd_value_intlist(&one, 1), kd_value_intlist(&dd, 1));
  LC(&a2, KD_OP_roll, V_T(a), kd_value_intlist(&two, 1), kd_value_intlist(&dd, 1));
  LC(&b1, KD_OP_roll, V_T(b), kd_value_intlist(&one, 1), kd_value_intlist(&dd, 1));
  LC(&b2, KD_OP_roll, V_T(b), kd_value_intlist(&two, 1), kd_value_intlist(&dd, 1));
  KD_TRY(lc_mul(s, a1, b2, &p));
  KD_TRY(lc_mul(s, a2, b1, &q));
  return lc_add(s, p, q, -1, result);
}

/* ---- backward helpers ---- */
/* linalg_qr_backward. */
/* The backward ops are callable by users (kd._internal): what they index as matrices must be. */
static kd_status lc_need_dims(const char *op, const char *what, const kd_tensor *t, int nd) {
  if (t && t->ndim < nd)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "%s: expected %s to have at least %d dimensions, but got %d", op, what, nd, t->ndim);
  return KD_OK;
}

static kd_status lc_qr_backward(kd_scope *s, kd_value *args, kd_tensor **result) {
  kd_tensor *gQ = args[0].v.t, *gR = args[1].v.t, *Q = args[2].v.t, *R = args[3].v.t;
  const char *mode = args[4].v.str;
  if (!strcmp(mode, "r"))
    return kd_error(KD_ERR_INVALID_ARGUMENT, "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please "
                    "use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.");
  KD_TRY(lc_need_dims("linalg_qr_backward", "Q", Q, 2));
  KD_TRY(lc_need_dims("linalg_qr_backward", "R", R, 2));
  int64_t m = Q->sizes[Q->ndim - 2], n = R->sizes[R->ndim - 1];
  if (!strcmp(mode, "complete") && m > n)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "The QR decomposition is not differentiable when mode='complete' and nrows > ncols.");
  kd_tensor *Rt, *Qt, *t1, *t2, *gA;
  KD_TRY(lc_mt(s, R, &Rt));
  KD_TRY(lc_mt(s, Q, &Qt));
  KD_TRY(lc_mm(s, gR, Rt, &t1));
  KD_TRY(lc_mm(s, Qt, gQ, &t2));
  KD_TRY(lc_add(s, t1, t2, -1, &gA)); /* gR R^H - Q^H gQ */
  if (m >= n) {
    kd_tensor *T, *T1, *T1t, *sym, *x;
    LC(&T, KD_OP_triu, V_T(gA), V_I(0));
    LC(&T1, KD_OP_triu, V_T(gA), V_I(1));
    KD_TRY(lc_mt(s, T1, &T1t));
    KD_TRY(lc_add(s, T, T1t, 1, &sym)); /* syminvadj(triu(gA)) */
    KD_TRY(lc_mm(s, Q, sym, &x));
    KD_TRY(lc_add(s, x, gQ, 1, &x));
    LC(result, KD_OP_linalgSolveTriangular, V_T(Rt), V_T(x), V_B(false), V_B(false), V_B(false));
    return KD_OK;
  }
  kd_tensor *gAt, *sk, *lo, *x, *R1, *R1t, *pad, *z, *full, *QgR;
  KD_TRY(lc_mt(s, gA, &gAt));
  KD_TRY(lc_add(s, gAt, gA, -1, &sk)); /* -gA - (-gA)^H */
  LC(&lo, KD_OP_tril, V_T(sk), V_I(0));
  KD_TRY(lc_mm(s, Q, lo, &x));
  LC(&R1, KD_OP_narrow, V_T(R), V_I(-1), V_I(0), V_I(m));
  KD_TRY(lc_mt(s, R1, &R1t));
  LC(&x, KD_OP_linalgSolveTriangular, V_T(R1t), V_T(x), V_B(false), V_B(false), V_B(false));
  LC(&pad, KD_OP_narrow, V_T(R), V_I(-1), V_I(m), V_I(n - m));
  LC(&z, KD_OP_zerosLike, V_T(pad), V_N, V_N);
  kd_tensor *parts[2] = {x, z};
  LC(&full, KD_OP_cat, kd_value_tlist(parts, 2), V_I(-1));
  KD_TRY(lc_mm(s, Q, gR, &QgR));
  return lc_add(s, full, QgR, 1, result);
}

/* svd_backward (real case). */
static kd_status lc_svd_backward(kd_scope *s, kd_value *args, kd_tensor **result) {
  kd_tensor *gU = args[0].v.t, *gS = args[1].v.t, *gVh = args[2].v.t, *U = args[3].v.t, *S = args[4].v.t, *Vh = args[5].v.t;
  KD_TRY(lc_need_dims("svd_backward", "S", S, 1));
  KD_TRY(lc_need_dims("svd_backward", "U", U, 2));
  KD_TRY(lc_need_dims("svd_backward", "Vh", Vh, 2));
  int64_t k = S->sizes[S->ndim - 1];
  if (args[6].v.b) { /* full matrices: only the first k singular vectors carry a gradient */
    LC(&gU, KD_OP_narrow, V_T(gU), V_I(-1), V_I(0), V_I(k));
    LC(&U, KD_OP_narrow, V_T(U), V_I(-1), V_I(0), V_I(k));
    LC(&gVh, KD_OP_narrow, V_T(gVh), V_I(-2), V_I(0), V_I(k));
    LC(&Vh, KD_OP_narrow, V_T(Vh), V_I(-2), V_I(0), V_I(k));
  }
  int64_t m = U->sizes[U->ndim - 2], n = Vh->sizes[Vh->ndim - 1];
  kd_tensor *Ut, *V, *gV, *a, *at, *UhgU, *b, *bt, *VhgV, *Srow, *Scol, *S2, *S2r, *S2c, *E, *n1, *n2, *num, *ret, *dS, *gA;
  KD_TRY(lc_mt(s, U, &Ut));
  KD_TRY(lc_mt(s, Vh, &V));
  KD_TRY(lc_mt(s, gVh, &gV));
  KD_TRY(lc_mm(s, Ut, gU, &a));
  KD_TRY(lc_mt(s, a, &at));
  KD_TRY(lc_add(s, a, at, -1, &UhgU)); /* skew(U^H gU) */
  KD_TRY(lc_mm(s, Vh, gV, &b));
  KD_TRY(lc_mt(s, b, &bt));
  KD_TRY(lc_add(s, b, bt, -1, &VhgV)); /* skew(V^H gV) */
  LC(&Srow, KD_OP_unsqueeze, V_T(S), V_I(-2));
  LC(&Scol, KD_OP_unsqueeze, V_T(S), V_I(-1));
  KD_TRY(lc_mul(s, S, S, &S2));
  LC(&S2r, KD_OP_unsqueeze, V_T(S2), V_I(-2));
  LC(&S2c, KD_OP_unsqueeze, V_T(S2), V_I(-1));
  KD_TRY(lc_add(s, S2r, S2c, -1, &E)); /* E_jk = S_k^2 - S_j^2 */
  KD_TRY(lc_mul(s, UhgU, Srow, &n1));
  KD_TRY(lc_mul(s, Scol, VhgV, &n2));
  KD_TRY(lc_add(s, n1, n2, 1, &num));
  KD_TRY(lc_safe_div(s, num, E, &ret));
  KD_TRY(lc_diag_embed(s, gS, &dS));
  KD_TRY(lc_add(s, ret, dS, 1, &ret));
  if (m > n) { /* gA = [U ret + (I - U U^H) gU S^{-1}] V^H */
    kd_tensor *x, *g, *p;
    KD_TRY(lc_mm(s, U, ret, &x));
    KD_TRY(lc_safe_div(s, gU, Srow, &g));
    KD_TRY(lc_mm(s, Ut, g, &p));
    KD_TRY(lc_mm(s, U, p, &p));
    KD_TRY(lc_add(s, x, g, 1, &x));
    KD_TRY(lc_add(s, x, p, -1, &x));
    return lc_mm(s, x, Vh, result);
  }
  if (m < n) { /* gA = U [ret V^H + S^{-1} gV^H (I - V V^H)] */
    kd_tensor *x, *g, *p;
    KD_TRY(lc_mm(s, ret, Vh, &x));
    KD_TRY(lc_safe_div(s, gVh, Scol, &g));
    KD_TRY(lc_mm(s, g, V, &p));
    KD_TRY(lc_mm(s, p, Vh, &p));
    KD_TRY(lc_add(s, x, g, 1, &x));
    KD_TRY(lc_add(s, x, p, -1, &x));
    return lc_mm(s, U, x, result);
  }
  KD_TRY(lc_mm(s, ret, Vh, &gA));
  return lc_mm(s, U, gA, result);
}

/* pinv_backward (its m <= n arrangement, valid for every shape). */
static kd_status lc_pinv_backward(kd_scope *s, kd_value *args, kd_tensor **result) {
  kd_tensor *g = args[0].v.t, *P = args[1].v.t, *A = args[2].v.t;
  kd_tensor *Pt, *gt, *K, *KPt, *PK, *PKt, *AP, *APKPt, *PtP, *KA, *d, *last, *r;
  KD_TRY(lc_mt(s, P, &Pt));
  KD_TRY(lc_mt(s, g, &gt));
  KD_TRY(lc_mm(s, gt, P, &K));
  KD_TRY(lc_mm(s, K, Pt, &KPt));
  KD_TRY(lc_mm(s, P, K, &PK));
  KD_TRY(lc_mt(s, PK, &PKt));
  KD_TRY(lc_mm(s, A, P, &AP));
  KD_TRY(lc_mm(s, AP, KPt, &APKPt));
  KD_TRY(lc_mm(s, Pt, P, &PtP));
  KD_TRY(lc_mm(s, K, A, &KA));
  KD_TRY(lc_add(s, gt, KA, -1, &d));
  KD_TRY(lc_mm(s, PtP, d, &last));
  KD_TRY(lc_add(s, KPt, PKt, -1, &r));
  KD_TRY(lc_add(s, r, APKPt, -1, &r));
  return lc_add(s, r, last, 1, result);
}

/* ---- kernels ---- */
#define LC_KERNEL(name, call)                                   \
  KD_KERNEL(name) {                                             \
    (void)ks;                                                   \
    (void)op;                                                   \
    kd_scope sc;                                                \
    kd_scope_init(&sc);                                         \
    kd_tensor *r = NULL;                                        \
    kd_status st = call;                                        \
    return kd_scope_finish(&sc, st, r, outs);                   \
  }

LC_KERNEL(kd_composite_linalg_solve, lc_solve(&sc, args, &r))
LC_KERNEL(kd_composite_linalg_svdvals, lc_svdvals(&sc, args[0].v.t, args[1], &r))
LC_KERNEL(kd_composite_linalg_eigvalsh, lc_eigh(&sc, args[0].v.t, args[1], &r, NULL))
LC_KERNEL(kd_composite_linalg_pinv, lc_pinv(&sc, op->code, args, &r))
LC_KERNEL(kd_composite_linalg_matrix_rank, lc_matrix_rank(&sc, args, &r))
LC_KERNEL(kd_composite_linalg_vector_norm, lc_vector_norm(&sc, args[0].v.t, args[1].v.d, args[2], args[3].v.b, args[4], &r))
LC_KERNEL(kd_composite_linalg_matrix_norm,
          lc_matrix_norm(&sc, args[0].v.t, args[1].kind == KD_VALUE_DOUBLE ? args[1].v.d : 0,
                         args[1].kind == KD_VALUE_STRING ? args[1].v.str : NULL, &args[2], args[3].v.b, args[4], &r))
LC_KERNEL(kd_composite_linalg_norm, lc_linalg_norm(&sc, args, &r))
LC_KERNEL(kd_composite_norm_str, lc_norm_str(&sc, args, &r))
LC_KERNEL(kd_composite_linalg_cross, lc_cross(&sc, args, &r))
LC_KERNEL(kd_composite_linalg_qr_backward, lc_qr_backward(&sc, args, &r))
LC_KERNEL(kd_composite_linalg_svd_backward, lc_svd_backward(&sc, args, &r))
LC_KERNEL(kd_composite_pinv_backward, lc_pinv_backward(&sc, args, &r))
