/* shape_construct.c - the ops of oplist/shape_construct.js written with other ops through
 * kd_call, so they run on every device and autograd sees the ops they call (no backward
 * formulas): meshgrid and cartesianProd (view + expand, flatten + stack), tensorSplit and
 * unflatten (narrow / view: views, as PyTorch), rot90/fliplr/flipud (flip + transpose),
 * diagEmbed (diagonalBackward, which has its own gradient), blockDiag (zero-padded rows + cat),
 * kron (interleaved reshapes + mul), takeAlongDim (expand + gather), tensordot (permute +
 * reshape + mm), cdist (PyTorch's _euclidean_dist matmul for p = 2 on more than 25 rows, else
 * the norm of the pairwise differences), cov/corrcoef (PyTorch's formulas) and allclose/equal
 * (0-d bool tensors that JS reads as booleans). Checks and messages follow PyTorch 1.13. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ops/shape_scope.h"

/* *out = op(values...), kept in the scope `s` of the calling function. */
#define SC_CALL(out, op, ...) kd_scope_call(s, (op), (kd_value[]){__VA_ARGS__}, (out))
#define T_(t) kd_value_tensor(t)
#define I_(i) kd_value_int(i)
#define NONE_ kd_value_none()
#define SI_(i) kd_value_scalar(kd_scalar_i(i))
#define SF_(f) kd_value_scalar(kd_scalar_f(f))

static const int64_t sc_no_ints[1] = {0};
static kd_value L_(const int64_t *p, int n) { return kd_value_intlist(n ? p : sc_no_ints, n); }

/* A composite kernel whose result `r` is computed by EXPR in the scope `s`. */
#define SC_KERNEL(name, EXPR)                                                                 \
  KD_KERNEL(name) {                                                                           \
    (void)op;                                                                                 \
    (void)ks;                                                                                 \
    kd_scope sc, *s = &sc;                                                                    \
    kd_scope_init(s);                                                                         \
    kd_tensor *r = NULL;                                                                      \
    kd_status st = (EXPR);                                                                    \
    return kd_scope_finish(s, st, r, outs);                                                   \
  }

/* The value of a one-element tensor (any device) as a double: a synchronising read, as
 * PyTorch's item() in the same checks. */
static kd_status sc_item(kd_scope *s, kd_tensor *t, double *out) {
  kd_tensor *h;
  KD_TRY(SC_CALL(&h, KD_OP_to, T_(t), kd_value_dtype(KD_DTYPE_F64), kd_value_device(kd_device_cpu()), NONE_));
  KD_TRY(SC_CALL(&h, KD_OP_contiguous, T_(h)));
  *out = *(const double *)kd_tensor_data(h);
  return KD_OK;
}

static bool sc_same_device(kd_device a, kd_device b) { return a.type == b.type && a.index == b.index; }

/* ---- meshgrid / cartesianProd ---- */

static kd_status sc_meshgrid(kd_scope *s, kd_tensor **ts, int n, bool xy, kd_tensor **grids) {
  if (n == 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "meshgrid expects a non-empty TensorList");
  if (n > KD_MAX_DIMS) return kd_error(KD_ERR_INVALID_ARGUMENT, "meshgrid: at most %d tensors are supported", KD_MAX_DIMS);
  for (int i = 0; i < n; i++) {
    if (ts[i]->ndim > 1) {
      char b[256];
      return kd_error(KD_ERR_SHAPE, "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got a tensor of "
                      "shape %s at index %d", kd_shape_format(ts[i]->sizes, ts[i]->ndim, b, sizeof b), i);
    }
  }
  for (int i = 1; i < n; i++) {
    if (ts[i]->dtype != ts[0]->dtype) return kd_error(KD_ERR_DTYPE, "meshgrid expects all tensors to have the same dtype");
    if (!sc_same_device(kd_tensor_device(ts[i]), kd_tensor_device(ts[0])))
      return kd_error(KD_ERR_DEVICE, "meshgrid expects all tensors to have the same device");
  }
  kd_tensor *in[KD_MAX_DIMS];
  for (int i = 0; i < n; i++) in[i] = ts[i];
  bool swap = xy && n >= 2;
  if (swap) in[0] = ts[1], in[1] = ts[0];
  int64_t shape[KD_MAX_DIMS];
  for (int i = 0; i < n; i++) shape[i] = kd_tensor_numel(in[i]);
  for (int i = 0; i < n; i++) {
    int64_t vs[KD_MAX_DIMS];
    for (int j = 0; j < n; j++) vs[j] = j == i ? -1 : 1;
    kd_tensor *v;
    KD_TRY(SC_CALL(&v, KD_OP_view, T_(in[i]), L_(vs, n)));
    KD_TRY(SC_CALL(&grids[i], KD_OP_expand, T_(v), L_(shape, n)));
  }
  if (swap) {
    kd_tensor *g = grids[0];
    grids[0] = grids[1];
    grids[1] = g;
  }
  return KD_OK;
}

KD_KERNEL(kd_composite_meshgrid) {
  (void)op;
  (void)ks;
  bool xy = false;
  if (args[1].kind == KD_VALUE_STRING) {
    const char *ix = args[1].v.str;
    if (strcmp(ix, "xy") == 0) xy = true;
    else if (strcmp(ix, "ij") != 0)
      return kd_error(KD_ERR_INVALID_ARGUMENT, "torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: %s", ix);
  }
  kd_scope sc;
  kd_scope *s = &sc;
  kd_scope_init(s);
  kd_tensor *grids[KD_MAX_DIMS];
  int n = args[0].v.tlist.n;
  kd_status st = sc_meshgrid(s, args[0].v.tlist.data, n, xy, grids);
  if (st == KD_OK) st = kd_scope_out_list(grids, n, outs);
  kd_scope_release(s);
  return st;
}

static kd_status sc_cartesian_prod(kd_scope *s, kd_tensor **ts, int n, kd_tensor **result) {
  for (int i = 0; i < n; i++) {
    if (ts[i]->ndim != 1) {
      char b[256];
      return kd_error(KD_ERR_SHAPE, "Expect a 1D vector, but got shape %s", kd_shape_format(ts[i]->sizes, ts[i]->ndim, b, sizeof b));
    }
  }
  if (n == 1) {
    *result = ts[0];
    return KD_OK;
  }
  kd_tensor *grids[KD_MAX_DIMS];
  KD_TRY(sc_meshgrid(s, ts, n, false, grids));
  for (int i = 0; i < n; i++) {
    int64_t flat = -1;
    KD_TRY(SC_CALL(&grids[i], KD_OP_reshape, T_(grids[i]), L_(&flat, 1)));
  }
  return SC_CALL(result, KD_OP_stack, kd_value_tlist(grids, n), I_(1));
}

SC_KERNEL(kd_composite_cartesian_prod, sc_cartesian_prod(s, args[0].v.tlist.data, args[0].v.tlist.n, &r))

/* ---- tensorSplit / unflatten (views) ---- */

/* PyTorch's slice(start, end) along d, clamped, as a narrow. */
static kd_status sc_slice(kd_scope *s, kd_tensor *t, int d, int64_t start, int64_t end, kd_tensor **out) {
  int64_t n = t->sizes[d];
  if (start < 0) start = start < -n ? 0 : start + n;
  if (end < 0) end = end < -n ? 0 : end + n;
  if (start > n) start = n;
  if (end > n) end = n;
  if (end < start) end = start;
  return SC_CALL(out, KD_OP_narrow, T_(t), I_(d), I_(start), I_(end - start));
}

static kd_status sc_tensor_split(kd_scope *s, kd_tensor *self, const kd_value *how, int64_t dim, int *count) {
  if (self->ndim == 0)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims");
  int d;
  KD_TRY(kd_shape_wrap_dim(dim, self->ndim, &d));
  const int64_t *idx = NULL;
  int64_t sections = 0, nidx = 0;
  bool by_sections = how->kind == KD_VALUE_INT;
  if (how->kind == KD_VALUE_TENSOR) {
    /* (PyTorch wants it on the CPU; one on a device is read back here, a synchronising copy) */
    kd_tensor *t = how->v.t, *c;
    if (t->dtype != KD_DTYPE_I64)
      return kd_error(KD_ERR_DTYPE, "tensor_split expected tensor_indices_or_sections to have dtype of long, but got %s",
                      kd_dtype_torch_name(t->dtype));
    if (t->ndim > 1)
      return kd_error(KD_ERR_INVALID_ARGUMENT, "tensor_split expected tensor_indices_or_sections to be a zero-dimensional "
                      "or one-dimensional tensor, but got a tensor with %d dims", t->ndim);
    KD_TRY(SC_CALL(&c, KD_OP_to, T_(t), NONE_, kd_value_device(kd_device_cpu()), NONE_));
    KD_TRY(SC_CALL(&c, KD_OP_contiguous, T_(c)));
    by_sections = t->ndim == 0;
    if (by_sections) sections = *(const int64_t *)kd_tensor_data(c);
    else idx = (const int64_t *)kd_tensor_data(c), nidx = t->sizes[0];
  } else if (by_sections) {
    sections = how->v.i;
  } else {
    idx = how->v.ilist.data;
    nidx = how->v.ilist.n;
  }
  if (by_sections) {
    if (sections <= 0)
      return kd_error(KD_ERR_INVALID_ARGUMENT, "number of sections must be larger than 0, got %lld", (long long)sections);
    if (sections > (1 << 24))
      return kd_error(KD_ERR_INVALID_ARGUMENT, "tensor_split: %lld sections are too many", (long long)sections);
    int64_t size = self->sizes[d], base = size / sections, extra = size % sections, start = 0;
    for (int64_t i = 0; i < sections; i++) {
      int64_t len = base + (i < extra ? 1 : 0);
      kd_tensor *p;
      KD_TRY(SC_CALL(&p, KD_OP_narrow, T_(self), I_(d), I_(start), I_(len)));
      start += len;
    }
    *count = (int)sections;
    return KD_OK;
  }
  if (nidx >= (1 << 24)) return kd_error(KD_ERR_INVALID_ARGUMENT, "tensor_split: %lld indices are too many", (long long)nidx);
  int64_t start = 0;
  kd_tensor *p;
  for (int64_t i = 0; i < nidx; i++) {
    KD_TRY(sc_slice(s, self, d, start, idx[i], &p));
    start = idx[i];
  }
  KD_TRY(sc_slice(s, self, d, start, self->sizes[d], &p));
  *count = (int)(nidx + 1);
  return KD_OK;
}

KD_KERNEL(kd_composite_tensor_split) {
  (void)op;
  (void)ks;
  kd_scope sc;
  kd_scope *s = &sc;
  kd_scope_init(s);
  int n = 0;
  kd_tensor *self = args[0].v.t;
  kd_status st = sc_tensor_split(s, self, &args[1], args[2].v.i, &n);
  /* the pieces are the last n tensors of the scope (a tensor argument's host copy may precede them) */
  if (st == KD_OK) st = kd_scope_out_list(s->t + (s->n - n), n, outs);
  kd_scope_release(s);
  return st;
}

static kd_status sc_unflatten(kd_scope *s, kd_tensor *self, int64_t dim, const int64_t *sizes, int ns, kd_tensor **result) {
  int d;
  KD_TRY(kd_shape_wrap_dim(dim, self->ndim, &d));
  if (ns == 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "unflatten: sizes must be non-empty");
  if (self->ndim - 1 + ns > KD_MAX_DIMS)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "unflatten: at most %d dims are supported", KD_MAX_DIMS);
  int64_t n = self->ndim ? self->sizes[d] : 1, prod = 1;
  int infer = -1;
  for (int i = 0; i < ns; i++) {
    if (sizes[i] == -1) {
      if (infer >= 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "unflatten: only one dimension can be inferred");
      infer = i;
    } else if (sizes[i] < 0) {
      return kd_error(KD_ERR_INVALID_ARGUMENT, "unflatten: invalid shape dimension %lld", (long long)sizes[i]);
    } else if (kd_mul_overflows(prod, sizes[i], &prod)) {
      prod = -1; /* cannot equal any size */
      break;
    }
  }
  int64_t shape[KD_MAX_DIMS];
  int k = 0;
  for (int i = 0; i < d; i++) shape[k++] = self->sizes[i];
  for (int i = 0; i < ns; i++) shape[k++] = sizes[i];
  for (int i = d + 1; i < self->ndim; i++) shape[k++] = self->sizes[i];
  bool fits = infer >= 0 ? prod > 0 && n % prod == 0 : prod == n;
  if (infer >= 0 && prod == 0 && n == 0) {
    char b[256];
    return kd_error(KD_ERR_INVALID_ARGUMENT, "cannot reshape tensor of 0 elements into shape %s because the unspecified "
                    "dimension size -1 can be any value and is ambiguous", kd_shape_format(sizes, ns, b, sizeof b));
  }
  if (!fits) {
    char b[256];
    return kd_error(KD_ERR_SHAPE, "unflatten: Provided sizes %s don't multiply up to the size of dim %d (%lld) in the input tensor",
                    kd_shape_format(sizes, ns, b, sizeof b), d, (long long)n);
  }
  if (infer >= 0) shape[d + infer] = n / prod;
  return SC_CALL(result, KD_OP_view, T_(self), L_(shape, k));
}

SC_KERNEL(kd_composite_unflatten, sc_unflatten(s, args[0].v.t, args[1].v.i, args[2].v.ilist.data, args[2].v.ilist.n, &r))

/* ---- rot90 / fliplr / flipud ---- */

static kd_status sc_flip(kd_scope *s, kd_tensor *t, const int64_t *dims, int n, kd_tensor **out) {
  return SC_CALL(out, KD_OP_flip, T_(t), L_(dims, n));
}

static kd_status sc_rot90(kd_scope *s, kd_tensor *self, int64_t k, const kd_value *dv, kd_tensor **result) {
  static const int64_t plane[2] = {0, 1};
  const int64_t *dims = dv->kind == KD_VALUE_INTLIST ? dv->v.ilist.data : plane;
  int nd = dv->kind == KD_VALUE_INTLIST ? dv->v.ilist.n : 2;
  int64_t total = self->ndim;
  if (nd != 2) return kd_error(KD_ERR_INVALID_ARGUMENT, "expected total rotation dims == 2, but got dims = %d", nd);
  if (total < 2) return kd_error(KD_ERR_INVALID_ARGUMENT, "expected total dims >= 2, but got total dims = %lld", (long long)total);
  int64_t d0 = dims[0], d1 = dims[1], d1_up, d0_up; /* PyTorch: d0 != d1 and |d0 - d1| != total, checked without overflow */
  bool apart = d0 != d1 && (kd_add_overflows(d1, total, &d1_up) || d0 != d1_up) &&
               (kd_add_overflows(d0, total, &d0_up) || d1 != d0_up);
  if (!apart)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "expected rotation dims to be different, but got dim0 = %lld and dim1 = %lld",
                    (long long)d0, (long long)d1);
  if (!(d0 < total && d0 >= -total)) return kd_error(KD_ERR_INVALID_ARGUMENT, "Rotation dim0 out of range, dim0 = %lld", (long long)d0);
  if (!(d1 < total && d1 >= -total)) return kd_error(KD_ERR_INVALID_ARGUMENT, "Rotation dim1 out of range, dim1 = %lld", (long long)d1);
  int64_t r = ((k % 4) + 4) % 4;
  kd_tensor *f;
  switch (r) {
    case 1:
      KD_TRY(sc_flip(s, self, &dims[1], 1, &f));
      return SC_CALL(result, KD_OP_transpose, T_(f), I_(d0), I_(d1));
    case 2:
      return sc_flip(s, self, dims, 2, result);
    case 3:
      KD_TRY(sc_flip(s, self, &dims[0], 1, &f));
      return SC_CALL(result, KD_OP_transpose, T_(f), I_(d0), I_(d1));
    default:
      return SC_CALL(result, KD_OP_clone, T_(self));
  }
}

SC_KERNEL(kd_composite_rot90, sc_rot90(s, args[0].v.t, args[1].v.i, &args[2], &r))

/* fliplr (dim 1, at least 2-D) and flipud (dim 0, at least 1-D). */
static kd_status sc_flip_side(kd_scope *s, kd_tensor *self, int64_t dim, kd_tensor **result) {
  if (self->ndim < dim + 1) return kd_error(KD_ERR_INVALID_ARGUMENT, "Input must be >= %d-d.", (int)dim + 1);
  return sc_flip(s, self, &dim, 1, result);
}

SC_KERNEL(kd_composite_fliplr, sc_flip_side(s, args[0].v.t, 1, &r))
SC_KERNEL(kd_composite_flipud, sc_flip_side(s, args[0].v.t, 0, &r))

/* ---- diagEmbed / blockDiag / kron ---- */

static kd_status sc_diag_embed(kd_scope *s, kd_tensor *self, int64_t offset, int64_t dim1, int64_t dim2, kd_tensor **result) {
  int nd = self->ndim + 1, d1, d2;
  if (nd > KD_MAX_DIMS) return kd_error(KD_ERR_INVALID_ARGUMENT, "diag_embed: at most %d dims are supported", KD_MAX_DIMS);
  KD_TRY(kd_shape_wrap_dim(dim1, nd, &d1));
  KD_TRY(kd_shape_wrap_dim(dim2, nd, &d2));
  if (d1 == d2) return kd_error(KD_ERR_INVALID_ARGUMENT, "diagonal dimensions cannot be identical %lld, %lld", (long long)dim1, (long long)dim2);
  int64_t last = self->ndim ? self->sizes[self->ndim - 1] : 1, n;
  if (offset == INT64_MIN || kd_add_overflows(last, offset < 0 ? -offset : offset, &n))
    return kd_error(KD_ERR_INVALID_ARGUMENT, "diag_embed: offset %lld is too large", (long long)offset);
  int64_t sizes[KD_MAX_DIMS];
  int lo = d1 < d2 ? d1 : d2, hi = d1 < d2 ? d2 : d1, j = 0;
  for (int i = 0; i < nd; i++) sizes[i] = (i == lo || i == hi) ? n : self->sizes[j++];
  kd_tensor *x = self;
  if (self->ndim == 0) KD_TRY(SC_CALL(&x, KD_OP_reshape, T_(self), L_(&last, 1)));
  return SC_CALL(result, KD_OP_diagonalBackward, T_(x), L_(sizes, nd), I_(offset), I_(d1), I_(d2));
}

SC_KERNEL(kd_composite_diag_embed, sc_diag_embed(s, args[0].v.t, args[1].v.i, args[2].v.i, args[3].v.i, &r))

static kd_status sc_zeros(kd_scope *s, int64_t r, int64_t c, kd_dtype dt, kd_device dev, kd_tensor **out) {
  int64_t sz[2] = {r, c};
  return SC_CALL(out, KD_OP_zeros, L_(sz, 2), kd_value_dtype(dt), kd_value_device(dev));
}

static kd_status sc_block_diag(kd_scope *s, kd_tensor **ts, int n, kd_tensor **result) {
  if (n == 0) return sc_zeros(s, 1, 0, KD_DTYPE_DEFAULT, kd_device_cpu(), result);
  kd_result_type_state rt;
  kd_result_type_init(&rt);
  int64_t rows = 0, cols = 0;
  for (int i = 0; i < n; i++) {
    if (ts[i]->ndim > 2)
      return kd_error(KD_ERR_INVALID_ARGUMENT, "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input %d has %d dimensions",
                      i, ts[i]->ndim);
    if (!sc_same_device(kd_tensor_device(ts[i]), kd_tensor_device(ts[0])))
      return kd_error(KD_ERR_DEVICE, "torch.block_diag: input tensors must all be on the same device. Input 0 and input %d "
                      "are on different devices", i);
    kd_result_type_add_tensor(&rt, ts[i]->dtype, ts[i]->ndim);
  }
  kd_dtype dt = kd_result_type_finish(&rt);
  kd_device dev = kd_tensor_device(ts[0]);
  size_t count = n > 0 ? (size_t)n : 1;
  kd_tensor **mats = (kd_tensor **)calloc(count, sizeof(kd_tensor *));
  kd_tensor **rowv = (kd_tensor **)calloc(count, sizeof(kd_tensor *));
  if (!mats || !rowv) {
    free(mats);
    free(rowv);
    return kd_error(KD_ERR_OOM, "out of host memory");
  }
  kd_status st = KD_OK;
  for (int i = 0; i < n && st == KD_OK; i++) {
    kd_tensor *t = ts[i];
    int64_t shape[2] = {1, t->ndim == 2 ? t->sizes[1] : t->ndim == 1 ? t->sizes[0] : 1};
    if (t->ndim == 2) shape[0] = t->sizes[0];
    mats[i] = t;
    if (t->ndim < 2) st = SC_CALL(&mats[i], KD_OP_reshape, T_(t), L_(shape, 2));
    if (st == KD_OK && t->dtype != dt)
      st = SC_CALL(&mats[i], KD_OP_to, T_(mats[i]), kd_value_dtype(dt), NONE_, NONE_);
    if (st == KD_OK && (kd_add_overflows(rows, shape[0], &rows) || kd_add_overflows(cols, shape[1], &cols)))
      st = kd_error(KD_ERR_INVALID_ARGUMENT, "torch.block_diag: the result's size overflows");
  }
  int64_t left = 0;
  for (int i = 0; i < n && st == KD_OK; i++) {
    int64_t r = mats[i]->sizes[0], c = mats[i]->sizes[1];
    kd_tensor *parts[3];
    st = sc_zeros(s, r, left, dt, dev, &parts[0]);
    parts[1] = mats[i];
    if (st == KD_OK) st = sc_zeros(s, r, cols - left - c, dt, dev, &parts[2]);
    if (st == KD_OK) st = SC_CALL(&rowv[i], KD_OP_cat, kd_value_tlist(parts, 3), I_(1));
    left += c;
  }
  if (st == KD_OK) st = SC_CALL(result, KD_OP_cat, kd_value_tlist(rowv, n), I_(0));
  free(mats);
  free(rowv);
  return st;
}

SC_KERNEL(kd_composite_block_diag, sc_block_diag(s, args[0].v.tlist.data, args[0].v.tlist.n, &r))

static kd_status sc_kron(kd_scope *s, kd_tensor *a, kd_tensor *b, kd_tensor **result) {
  int m = a->ndim > b->ndim ? a->ndim : b->ndim;
  if (2 * m > KD_MAX_DIMS) return kd_error(KD_ERR_INVALID_ARGUMENT, "kron: at most %d dims are supported", KD_MAX_DIMS / 2);
  int pa = m - a->ndim, pb = m - b->ndim;
  int64_t ar[KD_MAX_DIMS], br[KD_MAX_DIMS], rr[KD_MAX_DIMS];
  for (int i = 0; i < m; i++) {
    ar[2 * i] = i >= pa ? a->sizes[i - pa] : 1;
    ar[2 * i + 1] = 1;
    br[2 * i] = 1;
    br[2 * i + 1] = i >= pb ? b->sizes[i - pb] : 1;
    if (kd_mul_overflows(ar[2 * i], br[2 * i + 1], &rr[i]))
      return kd_error(KD_ERR_INVALID_ARGUMENT, "kron: the result's size overflows");
  }
  kd_tensor *av, *bv, *p;
  KD_TRY(SC_CALL(&av, KD_OP_reshape, T_(a), L_(ar, 2 * m)));
  KD_TRY(SC_CALL(&bv, KD_OP_reshape, T_(b), L_(br, 2 * m)));
  KD_TRY(SC_CALL(&p, KD_OP_mul, T_(av), T_(bv)));
  return SC_CALL(result, KD_OP_reshape, T_(p), L_(rr, m));
}

SC_KERNEL(kd_composite_kron, sc_kron(s, args[0].v.t, args[1].v.t, &r))

/* ---- takeAlongDim / tensordot ---- */

static kd_status sc_take_along_dim(kd_scope *s, kd_tensor *self, kd_tensor *ix, const kd_value *dv, kd_tensor **result) {
  if (ix->dtype != KD_DTYPE_I64)
    return kd_error(KD_ERR_DTYPE, "torch.take_along_dim(): dtype of indices should be Long but got %s", kd_dtype_torch_name(ix->dtype));
  if (dv->kind != KD_VALUE_INT) {
    int64_t flat = -1;
    kd_tensor *a, *b;
    KD_TRY(SC_CALL(&a, KD_OP_view, T_(self), L_(&flat, 1)));
    KD_TRY(SC_CALL(&b, KD_OP_view, T_(ix), L_(&flat, 1)));
    return SC_CALL(result, KD_OP_gather, T_(a), I_(0), T_(b));
  }
  if (self->ndim != ix->ndim)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "torch.take_along_dim(): input and indices should have the same number of "
                    "dimensions, but got %d dimensions for input, and %d dimensions for indices", self->ndim, ix->ndim);
  int d;
  KD_TRY(kd_shape_wrap_dim(dv->v.i, self->ndim, &d));
  int nd = self->ndim, n1, n2;
  int64_t a[KD_MAX_DIMS], b[KD_MAX_DIMS], shape_ix[KD_MAX_DIMS], shape_self[KD_MAX_DIMS];
  memcpy(a, self->sizes, sizeof(int64_t) * (size_t)nd);
  if (nd) a[d] = ix->sizes[d];
  KD_TRY(kd_shape_broadcast(a, nd, ix->sizes, nd, shape_ix, &n1));
  memcpy(b, ix->sizes, sizeof(int64_t) * (size_t)nd);
  if (nd) b[d] = self->sizes[d];
  KD_TRY(kd_shape_broadcast(b, nd, self->sizes, nd, shape_self, &n2));
  kd_tensor *ib, *sb;
  KD_TRY(SC_CALL(&ib, KD_OP_expand, T_(ix), L_(shape_ix, n1)));
  KD_TRY(SC_CALL(&sb, KD_OP_expand, T_(self), L_(shape_self, n2)));
  return SC_CALL(result, KD_OP_gather, T_(sb), I_(d), T_(ib));
}

SC_KERNEL(kd_composite_take_along_dim, sc_take_along_dim(s, args[0].v.t, args[1].v.t, &args[2], &r))

/* PyTorch's tensordot: size-1 contracted dims summed away first, the rest permuted to the
 * inner dims of one mm. */
static kd_status sc_tensordot(kd_scope *s, kd_tensor *a, kd_tensor *b, const int64_t *da, int na, const int64_t *db, int nb,
                              kd_tensor **result) {
  if (na != nb) return kd_error(KD_ERR_INVALID_ARGUMENT, "both dimension lists should have same length");
  bool ca[KD_MAX_DIMS] = {false}, cb[KD_MAX_DIMS] = {false};
  int wa[KD_MAX_DIMS], wb[KD_MAX_DIMS];
  if (na > KD_MAX_DIMS) return kd_error(KD_ERR_INVALID_ARGUMENT, "tensordot: too many dims");
  int64_t csize = 1;
  kd_tensor *t1 = a, *t2 = b;
  for (int i = 0; i < na; i++) {
    KD_TRY(kd_shape_wrap_dim(da[i], a->ndim, &wa[i]));
    KD_TRY(kd_shape_wrap_dim(db[i], b->ndim, &wb[i]));
    int64_t s1 = a->sizes[wa[i]], s2 = b->sizes[wb[i]];
    if (s2 == 1) {
      int64_t dd = wa[i];
      KD_TRY(SC_CALL(&t1, KD_OP_sum, T_(t1), L_(&dd, 1), kd_value_bool(true), NONE_));
    } else if (s1 == 1) {
      int64_t dd = wb[i];
      KD_TRY(SC_CALL(&t2, KD_OP_sum, T_(t2), L_(&dd, 1), kd_value_bool(true), NONE_));
    } else if (s1 != s2) {
      return kd_error(KD_ERR_SHAPE, "contracted dimensions need to match, but first has size %lld in dim %lld and second "
                      "has size %lld in dim %lld", (long long)s1, (long long)da[i], (long long)s2, (long long)db[i]);
    } else {
      csize *= s1;
    }
    if (ca[wa[i]] || cb[wb[i]])
      return kd_error(KD_ERR_INVALID_ARGUMENT, "dim %lld appears multiple times in the list of dims",
                      (long long)(ca[wa[i]] ? da[i] : db[i]));
    ca[wa[i]] = true;
    cb[wb[i]] = true;
  }
  int64_t p1[KD_MAX_DIMS], p2[KD_MAX_DIMS], rs[2 * KD_MAX_DIMS];
  int k1 = 0, k2 = 0, nr = 0;
  int64_t size1 = 1, size2 = 1;
  for (int i = 0; i < a->ndim; i++)
    if (!ca[i]) {
      p1[k1++] = i;
      size1 *= t1->sizes[i];
      rs[nr++] = t1->sizes[i];
    }
  for (int i = 0; i < na; i++) p1[k1++] = wa[i];
  for (int i = 0; i < nb; i++) p2[k2++] = wb[i];
  for (int i = 0; i < b->ndim; i++)
    if (!cb[i]) {
      p2[k2++] = i;
      size2 *= t2->sizes[i];
      rs[nr++] = t2->sizes[i];
    }
  if (nr > KD_MAX_DIMS) return kd_error(KD_ERR_INVALID_ARGUMENT, "tensordot: the result would have more than %d dims", KD_MAX_DIMS);
  int64_t s1[2] = {size1, csize}, s2[2] = {csize, size2};
  kd_tensor *m1, *m2, *p;
  KD_TRY(SC_CALL(&m1, KD_OP_permute, T_(t1), L_(p1, k1)));
  KD_TRY(SC_CALL(&m1, KD_OP_reshape, T_(m1), L_(s1, 2)));
  KD_TRY(SC_CALL(&m2, KD_OP_permute, T_(t2), L_(p2, k2)));
  KD_TRY(SC_CALL(&m2, KD_OP_reshape, T_(m2), L_(s2, 2)));
  KD_TRY(SC_CALL(&p, KD_OP_mm, T_(m1), T_(m2)));
  return SC_CALL(result, KD_OP_reshape, T_(p), L_(rs, nr));
}

SC_KERNEL(kd_composite_tensordot, sc_tensordot(s, args[0].v.t, args[1].v.t, args[2].v.ilist.data, args[2].v.ilist.n, args[3].v.ilist.data, args[3].v.ilist.n, &r))

/* ---- cdist ---- */

/* PyTorch's _euclidean_dist: |x1|^2 - 2 x1.x2 + |x2|^2 as one matmul of padded operands,
 * clamped at 1e-30 before the square root. */
static kd_status sc_euclidean_dist(kd_scope *s, kd_tensor *x1, kd_tensor *x2, kd_tensor **result) {
  int64_t last = -1;
  kd_tensor *sq1, *n1, *pad1, *sq2, *n2, *pad2, *m1, *a1, *a2, *t2, *r;
  KD_TRY(SC_CALL(&sq1, KD_OP_pow, T_(x1), SI_(2)));
  KD_TRY(SC_CALL(&n1, KD_OP_sum, T_(sq1), L_(&last, 1), kd_value_bool(true), NONE_));
  KD_TRY(SC_CALL(&pad1, KD_OP_onesLike, T_(n1), NONE_, NONE_));
  KD_TRY(SC_CALL(&sq2, KD_OP_pow, T_(x2), SI_(2)));
  KD_TRY(SC_CALL(&n2, KD_OP_sum, T_(sq2), L_(&last, 1), kd_value_bool(true), NONE_));
  KD_TRY(SC_CALL(&pad2, KD_OP_onesLike, T_(n2), NONE_, NONE_));
  KD_TRY(SC_CALL(&m1, KD_OP_mul, T_(x1), SI_(-2)));
  kd_tensor *l1[3] = {m1, n1, pad1}, *l2[3] = {x2, pad2, n2};
  KD_TRY(SC_CALL(&a1, KD_OP_cat, kd_value_tlist(l1, 3), I_(-1)));
  KD_TRY(SC_CALL(&a2, KD_OP_cat, kd_value_tlist(l2, 3), I_(-1)));
  KD_TRY(SC_CALL(&t2, KD_OP_transpose, T_(a2), I_(-1), I_(-2)));
  KD_TRY(SC_CALL(&r, KD_OP_matmul, T_(a1), T_(t2)));
  KD_TRY(SC_CALL(&r, KD_OP_clampMin, T_(r), SF_(1e-30)));
  return SC_CALL(result, KD_OP_sqrt, T_(r));
}

/* The p-norms of the differences of every row of a [..., r1, m] with every row of b [..., r2, m]. */
static kd_status sc_pairwise_norm(kd_scope *s, kd_tensor *a, kd_tensor *b, double p, kd_tensor **result) {
  kd_tensor *ua, *ub, *diff;
  int64_t last = -1;
  KD_TRY(SC_CALL(&ua, KD_OP_unsqueeze, T_(a), I_(-2)));
  KD_TRY(SC_CALL(&ub, KD_OP_unsqueeze, T_(b), I_(-3)));
  KD_TRY(SC_CALL(&diff, KD_OP_sub, T_(ua), T_(ub), NONE_));
  return SC_CALL(result, KD_OP_norm, T_(diff), kd_value_double(p), L_(&last, 1), kd_value_bool(false), NONE_);
}

/* Elements of pairwise differences one block of cdist's norm path may hold (64 MiB of float32). */
#define SC_CDIST_BLOCK ((int64_t)1 << 24)

static kd_status sc_cdist(kd_scope *s, kd_tensor *x1, kd_tensor *x2, double p, const kd_value *mode_v, kd_tensor **result) {
  int mode = 0;
  if (mode_v->kind == KD_VALUE_STRING) {
    const char *m = mode_v->v.str;
    if (strcmp(m, "use_mm_for_euclid_dist_if_necessary") == 0) mode = 0;
    else if (strcmp(m, "use_mm_for_euclid_dist") == 0) mode = 1;
    else if (strcmp(m, "donot_use_mm_for_euclid_dist") == 0) mode = 2;
    else return kd_error(KD_ERR_INVALID_ARGUMENT, "%s is not a valid value for compute_mode", m);
  }
  if (x1->ndim < 2) return kd_error(KD_ERR_SHAPE, "cdist only supports at least 2D tensors, X1 got: %dD", x1->ndim);
  if (x2->ndim < 2) return kd_error(KD_ERR_SHAPE, "cdist only supports at least 2D tensors, X2 got: %dD", x2->ndim);
  int64_t c1 = x1->sizes[x1->ndim - 1], c2 = x2->sizes[x2->ndim - 1];
  if (c1 != c2)
    return kd_error(KD_ERR_SHAPE, "X1 and X2 must have the same number of columns. X1: %lld X2: %lld", (long long)c1, (long long)c2);
  if (!kd_dtype_is_float(x1->dtype))
    return kd_error(KD_ERR_DTYPE, "cdist only supports floating-point dtypes, X1 got: %s", kd_dtype_torch_name(x1->dtype));
  if (!kd_dtype_is_float(x2->dtype))
    return kd_error(KD_ERR_DTYPE, "cdist only supports floating-point dtypes, X2 got: %s", kd_dtype_torch_name(x2->dtype));
  if (x1->dtype != x2->dtype)
    return kd_error(KD_ERR_DTYPE, "expected scalar type %s but found %s", kd_dtype_torch_name(x1->dtype), kd_dtype_torch_name(x2->dtype));
  if (!(p >= 0)) return kd_error(KD_ERR_INVALID_ARGUMENT, "cdist only supports non-negative p values");
  if (!sc_same_device(kd_tensor_device(x1), kd_tensor_device(x2)))
    return kd_error(KD_ERR_DEVICE, "cdist expects X1 and X2 on the same device");
  /* the batch dims broadcast */
  int nb, n1 = x1->ndim - 2, n2 = x2->ndim - 2;
  int64_t batch[KD_MAX_DIMS], e1[KD_MAX_DIMS], e2[KD_MAX_DIMS];
  KD_TRY(kd_shape_broadcast(x1->sizes, n1, x2->sizes, n2, batch, &nb));
  if (nb + 3 > KD_MAX_DIMS) return kd_error(KD_ERR_INVALID_ARGUMENT, "cdist: at most %d batch dims are supported", KD_MAX_DIMS - 3);
  int64_t r1 = x1->sizes[x1->ndim - 2], r2 = x2->sizes[x2->ndim - 2];
  memcpy(e1, batch, sizeof(int64_t) * (size_t)nb);
  memcpy(e2, batch, sizeof(int64_t) * (size_t)nb);
  e1[nb] = r1, e1[nb + 1] = c1;
  e2[nb] = r2, e2[nb + 1] = c1;
  kd_tensor *a, *b;
  KD_TRY(SC_CALL(&a, KD_OP_expand, T_(x1), L_(e1, nb + 2)));
  KD_TRY(SC_CALL(&b, KD_OP_expand, T_(x2), L_(e2, nb + 2)));
  bool empty = kd_tensor_numel(x1) == 0 || kd_tensor_numel(x2) == 0;
  if (!empty && p == 2 && (mode == 1 || (mode == 0 && (r1 > 25 || r2 > 25)))) return sc_euclidean_dist(s, a, b, result);
  /* the norm of the pairwise differences [..., rows, r2, m] over the last dim, for blocks of
   * the rows of x1 small enough that the differences stay under SC_CDIST_BLOCK elements */
  int64_t per_row = r2 * c1, nbatch = 1;
  for (int i = 0; i < nb; i++) nbatch = kd_mul_overflows(nbatch, batch[i], &nbatch) ? INT64_MAX : nbatch;
  per_row = kd_mul_overflows(per_row, nbatch, &per_row) || per_row == 0 ? 1 : per_row;
  int64_t block = SC_CDIST_BLOCK / per_row > 0 ? SC_CDIST_BLOCK / per_row : 1;
  if (block >= r1) return sc_pairwise_norm(s, a, b, p, result);
  int64_t nblocks = (r1 + block - 1) / block;
  kd_tensor **parts = (kd_tensor **)calloc((size_t)nblocks, sizeof(kd_tensor *));
  if (!parts) return kd_error(KD_ERR_OOM, "out of host memory");
  kd_status st = KD_OK;
  for (int64_t i = 0; i < nblocks && st == KD_OK; i++) {
    kd_tensor *rows;
    int64_t start = i * block, len = r1 - start < block ? r1 - start : block;
    st = SC_CALL(&rows, KD_OP_narrow, T_(a), I_(nb), I_(start), I_(len));
    if (st == KD_OK) st = sc_pairwise_norm(s, rows, b, p, &parts[i]);
  }
  if (st == KD_OK) st = SC_CALL(result, KD_OP_cat, kd_value_tlist(parts, (int)nblocks), I_(nb));
  free(parts);
  return st;
}

SC_KERNEL(kd_composite_cdist, sc_cdist(s, args[0].v.t, args[1].v.t, args[2].v.d, &args[3], &r))

/* ---- cov / corrcoef (PyTorch's at::cov and at::corrcoef) ---- */

static kd_status sc_check_weights(kd_scope *s, kd_tensor *w, const char *what, bool integral, int64_t nobs) {
  if (w->ndim > 1)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "cov(): expected %s to have one or fewer dimensions but got %s with %d dimensions",
                    what, what, w->ndim);
  if (integral ? !kd_dtype_is_int(w->dtype) : !kd_dtype_is_float(w->dtype))
    return kd_error(KD_ERR_DTYPE, "cov(): expected %s to have %s dtype but got %s with %s dtype", what,
                    integral ? "integral" : "floating point", what, kd_dtype_torch_name(w->dtype));
  if (kd_tensor_numel(w) != nobs)
    return kd_error(KD_ERR_SHAPE, "cov(): expected %s to have the same numel as there are observations in the input but got "
                    "%lld != %lld", what, (long long)kd_tensor_numel(w), (long long)nobs);
  if (nobs > 0) {
    kd_tensor *m;
    double v;
    KD_TRY(SC_CALL(&m, KD_OP_min, T_(w)));
    KD_TRY(sc_item(s, m, &v));
    if (!(v >= 0)) return kd_error(KD_ERR_INVALID_ARGUMENT, "cov(): %s cannot be negative", what);
  }
  return KD_OK;
}

static kd_status sc_cov(kd_scope *s, kd_tensor *self, int64_t correction, kd_tensor *fw, kd_tensor *aw, kd_tensor **result) {
  if (self->ndim > 2)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "cov(): expected input to have two or fewer dimensions but got an input with %d dimensions",
                    self->ndim);
  if (self->dtype == KD_DTYPE_BOOL) return kd_error(KD_ERR_DTYPE, "cov(): bool dtype is not supported for input");
  kd_tensor *in = self;
  if (self->ndim < 2) {
    int64_t sz[2] = {1, -1};
    KD_TRY(SC_CALL(&in, KD_OP_view, T_(self), L_(sz, 2)));
  }
  int64_t nobs = in->sizes[1];
  kd_tensor *w = NULL;
  if (fw) {
    KD_TRY(sc_check_weights(s, fw, "fweights", true, nobs));
    w = fw;
  }
  if (aw) {
    KD_TRY(sc_check_weights(s, aw, "aweights", false, nobs));
    if (w) KD_TRY(SC_CALL(&w, KD_OP_mul, T_(w), T_(aw)));
    else w = aw;
  }
  kd_tensor *wsum = NULL, *wx, *avg, *centred, *cw, *ct, *c, *nf = NULL;
  if (w) {
    double v;
    KD_TRY(SC_CALL(&wsum, KD_OP_sum, T_(w), NONE_, NONE_, NONE_));
    KD_TRY(sc_item(s, wsum, &v));
    if (v == 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "cov(): weights sum to zero, can't be normalized");
    KD_TRY(SC_CALL(&wx, KD_OP_mul, T_(in), T_(w)));
  } else {
    wx = in;
  }
  int64_t one = 1;
  KD_TRY(SC_CALL(&avg, KD_OP_sum, T_(wx), L_(&one, 1), NONE_, NONE_));
  if (w) KD_TRY(SC_CALL(&avg, KD_OP_div, T_(avg), T_(wsum), NONE_));
  else KD_TRY(SC_CALL(&avg, KD_OP_div, T_(avg), SI_(nobs), NONE_));
  /* the normalisation factor: w_sum - correction (* sum(w * aw) / w_sum with aweights), 0 when <= 0 */
  if (w && correction != 0) {
    if (aw) {
      kd_tensor *waw;
      KD_TRY(SC_CALL(&waw, KD_OP_mul, T_(w), T_(aw)));
      KD_TRY(SC_CALL(&waw, KD_OP_sum, T_(waw), NONE_, NONE_, NONE_));
      KD_TRY(SC_CALL(&waw, KD_OP_mul, T_(waw), SI_(correction)));
      KD_TRY(SC_CALL(&waw, KD_OP_div, T_(waw), T_(wsum), NONE_));
      KD_TRY(SC_CALL(&nf, KD_OP_sub, T_(wsum), T_(waw), NONE_));
    } else {
      KD_TRY(SC_CALL(&nf, KD_OP_sub, T_(wsum), SI_(correction), NONE_));
    }
  } else if (w) {
    nf = wsum;
  }
  if (nf) KD_TRY(SC_CALL(&nf, KD_OP_clampMin, T_(nf), SI_(0)));
  kd_tensor *au;
  KD_TRY(SC_CALL(&au, KD_OP_unsqueeze, T_(avg), I_(1)));
  KD_TRY(SC_CALL(&centred, KD_OP_sub, T_(in), T_(au), NONE_));
  if (w) KD_TRY(SC_CALL(&cw, KD_OP_mul, T_(centred), T_(w)));
  else cw = centred;
  KD_TRY(SC_CALL(&ct, KD_OP_t, T_(cw)));
  KD_TRY(SC_CALL(&c, KD_OP_mm, T_(centred), T_(ct)));
  if (nf) {
    KD_TRY(SC_CALL(&c, KD_OP_div, T_(c), T_(nf), NONE_));
  } else {
    int64_t f = correction >= nobs ? 0 : correction < 0 && nobs - INT64_MAX > correction ? INT64_MAX : nobs - correction;
    KD_TRY(SC_CALL(&c, KD_OP_div, T_(c), SI_(f), NONE_));
  }
  return SC_CALL(result, KD_OP_squeeze, T_(c), NONE_);
}

static kd_tensor *sc_opt_tensor(const kd_value *v) { return v->kind == KD_VALUE_TENSOR ? v->v.t : NULL; }

SC_KERNEL(kd_composite_cov, sc_cov(s, args[0].v.t, args[1].v.i, sc_opt_tensor(&args[2]), sc_opt_tensor(&args[3]), &r))

static kd_status sc_corrcoef(kd_scope *s, kd_tensor *self, kd_tensor **result) {
  if (self->ndim > 2)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "corrcoef(): expected input to have two or fewer dimensions but got an input with %d "
                    "dimensions", self->ndim);
  kd_tensor *c, *d, *sd, *col, *row;
  KD_TRY(sc_cov(s, self, 1, NULL, NULL, &c));
  if (c->ndim == 0) return SC_CALL(result, KD_OP_div, T_(c), T_(c), NONE_);
  KD_TRY(SC_CALL(&d, KD_OP_diagonal, T_(c), I_(0), I_(0), I_(1)));
  KD_TRY(SC_CALL(&sd, KD_OP_sqrt, T_(d)));
  int64_t cs[2] = {-1, 1}, rs[2] = {1, -1};
  KD_TRY(SC_CALL(&col, KD_OP_view, T_(sd), L_(cs, 2)));
  KD_TRY(SC_CALL(&row, KD_OP_view, T_(sd), L_(rs, 2)));
  KD_TRY(SC_CALL(&c, KD_OP_div, T_(c), T_(col), NONE_));
  KD_TRY(SC_CALL(&c, KD_OP_div, T_(c), T_(row), NONE_));
  return SC_CALL(result, KD_OP_clip, T_(c), SI_(-1), SI_(1));
}

SC_KERNEL(kd_composite_corrcoef, sc_corrcoef(s, args[0].v.t, &r))

/* ---- allclose / equal: 0-d bool tensors on the inputs' device ---- */

static kd_status sc_allclose(kd_scope *s, const kd_value *args, kd_tensor **result) {
  kd_tensor *c;
  KD_TRY(SC_CALL(&c, KD_OP_isclose, args[0], args[1], args[2], args[3], args[4]));
  return SC_CALL(result, KD_OP_all, T_(c), NONE_, NONE_);
}

static kd_status sc_equal(kd_scope *s, kd_tensor *a, kd_tensor *b, kd_tensor **result) {
  if (a->ndim != b->ndim || memcmp(a->sizes, b->sizes, sizeof(int64_t) * (size_t)a->ndim) != 0) {
    if (!sc_same_device(kd_tensor_device(a), kd_tensor_device(b)))
      return kd_error(KD_ERR_DEVICE, "Cannot compare two tensors on different devices");
    return SC_CALL(result, KD_OP_zeros, L_(NULL, 0), kd_value_dtype(KD_DTYPE_BOOL), kd_value_device(kd_tensor_device(a)));
  }
  kd_tensor *e;
  KD_TRY(SC_CALL(&e, KD_OP_eq, T_(a), T_(b)));
  return SC_CALL(result, KD_OP_all, T_(e), NONE_, NONE_);
}

SC_KERNEL(kd_composite_allclose, sc_allclose(s, args, &r))
SC_KERNEL(kd_composite_equal, sc_equal(s, args[0].v.t, args[1].v.t, &r))
