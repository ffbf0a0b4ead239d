/* shape_copy.c - CPU kernels of the shape ops that move data: cat (promoting dtypes, skipping
 * legacy empty 1-D tensors as PyTorch does), flip, and tril/triu (codes KD_TRI_*).
 * cat and flip are copies through THE conversion loop (kd_cpu_copy_into, i.e. the strided
 * iterator): cat copies each input into a narrow view of the output; flip copies a view of
 * self with negated strides (dims reversed) into a contiguous output. tril/triu copy self
 * with the iterator and then zero the masked part row by row (whole rows: a memset on the
 * contiguous output, strided stores in place), in parallel over the rows. On a device, cat and
 * flip are the device's copy_ (one strided copy kernel per input of cat: for the few inputs cat
 * usually has, as fast as one kernel over a table of inputs, and it converts dtypes for free;
 * many small inputs pay one launch each), and tril/triu's zeroing is KD_DEV_OP_TRI. */
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "cpu/cpu_loops.h"
#include "cpu/device_op.h"

/* ---- cat ---- */

static bool kd_cat_skip(const kd_tensor *t) { return t->ndim == 1 && t->sizes[0] == 0; }

KD_KERNEL(kd_cpu_cat) {
  (void)op;
  (void)ks;
  int n = args[0].v.tlist.n;
  kd_tensor **ts = args[0].v.tlist.data;
  if (n == 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "torch.cat(): expected a non-empty list of Tensors");
  kd_dtype dt = ts[0]->dtype;
  int ref = -1;
  for (int i = 0; i < n; i++) {
    if (ts[i]->ndim == 0)
      return kd_error(KD_ERR_INVALID_ARGUMENT, "zero-dimensional tensor (at position %d) cannot be concatenated", i);
    dt = kd_promote_types(dt, ts[i]->dtype);
    if (ref < 0 && !kd_cat_skip(ts[i])) ref = i;
  }
  int dim = 0;
  int64_t sizes[KD_MAX_DIMS];
  int ndim = 1;
  sizes[0] = 0;
  if (ref >= 0) {
    const kd_tensor *r = ts[ref];
    KD_TRY(kd_shape_wrap_dim(args[1].v.i, r->ndim, &dim));
    ndim = r->ndim;
    memcpy(sizes, r->sizes, sizeof(int64_t) * ndim);
    sizes[dim] = 0;
    for (int i = 0; i < n; i++) {
      const kd_tensor *t = ts[i];
      if (kd_cat_skip(t)) continue;
      if (t->ndim != ndim)
        return kd_error(KD_ERR_SHAPE, "Tensors must have same number of dimensions: got %d and %d", ndim, t->ndim);
      for (int d = 0; d < ndim; d++)
        if (d != dim && t->sizes[d] != r->sizes[d])
          return kd_error(KD_ERR_SHAPE, "Sizes of tensors must match except in dimension %d. Expected size %lld but "
                          "got size %lld for tensor number %d in the list.", dim, (long long)r->sizes[d],
                          (long long)t->sizes[d], i);
      sizes[dim] += t->sizes[dim];
    }
  } else {
    KD_TRY(kd_shape_wrap_dim(args[1].v.i, 1, &dim));
  }
  kd_tensor *out;
  KD_TRY(kd_tensor_empty(sizes, ndim, dt, kd_tensor_device(ts[0]), &out));
  int64_t pos = 0;
  for (int i = 0; i < n && ref >= 0; i++) {
    kd_tensor *t = ts[i];
    if (kd_cat_skip(t) || t->sizes[dim] == 0) continue;
    int64_t vs[KD_MAX_DIMS];
    memcpy(vs, sizes, sizeof(int64_t) * ndim);
    vs[dim] = t->sizes[dim];
    kd_tensor *v;
    kd_status st = kd_tensor_new_view(out, vs, out->strides, ndim, pos * out->strides[dim], &v);
    if (st == KD_OK) {
      st = kd_cpu_copy_into(v, t);
      kd_tensor_release(v);
    }
    if (st != KD_OK) {
      kd_tensor_release(out);
      return st;
    }
    pos += t->sizes[dim];
  }
  kd_out_take(outs, 0, out);
  return KD_OK;
}

/* ---- flip ---- */

KD_KERNEL(kd_cpu_flip) {
  (void)op;
  (void)ks;
  kd_tensor *self = args[0].v.t;
  const int64_t *dims = args[1].v.ilist.data;
  int nd = args[1].v.ilist.n;
  bool flip[KD_MAX_DIMS] = {false};
  for (int i = 0; i < nd; i++) {
    int d;
    KD_TRY(kd_shape_wrap_dim(dims[i], self->ndim, &d));
    if (flip[d]) return kd_error(KD_ERR_INVALID_ARGUMENT, "dim %d appears multiple times in the list of dims", d);
    flip[d] = true;
  }
  kd_tensor *out;
  KD_TRY(kd_tensor_empty(self->sizes, self->ndim, self->dtype, kd_tensor_device(self), &out));
  if (kd_tensor_numel(self) > 0) {
    int64_t strides[KD_MAX_DIMS], offset = self->offset;
    for (int d = 0; d < self->ndim; d++) {
      strides[d] = self->strides[d];
      if (flip[d] && self->ndim > 0) {
        offset += (self->sizes[d] - 1) * self->strides[d];
        strides[d] = -self->strides[d];
      }
    }
    kd_tensor *v;
    kd_status st = kd_tensor_new_view(self, self->sizes, strides, self->ndim, offset, &v);
    if (st == KD_OK) {
      st = kd_cpu_copy_into(out, v);
      kd_tensor_release(v);
    }
    if (st != KD_OK) {
      kd_tensor_release(out);
      return st;
    }
  }
  kd_out_take(outs, 0, out);
  return KD_OK;
}

/* ---- tril / triu ---- */

typedef struct kd_tri_job {
  char *data;
  int ndim;
  const int64_t *sizes, *strides; /* of the written tensor, elements */
  int64_t rows, cols, k;
  size_t es;
  bool lower;
} kd_tri_job;

static void kd_tri_zero(char *p, int64_t n, int64_t stride, size_t es) {
  if (n <= 0) return;
  if (stride == 1) {
    memset(p, 0, (size_t)n * es);
    return;
  }
  int64_t sb = stride * (int64_t)es;
  switch (es) {
    case 1: for (int64_t i = 0; i < n; i++) *(uint8_t *)(p + i * sb) = 0; break;
    case 2: for (int64_t i = 0; i < n; i++) *(uint16_t *)(p + i * sb) = 0; break;
    case 4: for (int64_t i = 0; i < n; i++) *(uint32_t *)(p + i * sb) = 0; break;
    default: for (int64_t i = 0; i < n; i++) *(uint64_t *)(p + i * sb) = 0; break;
  }
}

/* Rows [r0, r1) of all matrices, numbered batch-major. */
static void kd_tri_rows(void *ctx, int64_t r0, int64_t r1) {
  const kd_tri_job *j = (const kd_tri_job *)ctx;
  int nb = j->ndim - 2;
  int64_t rs = j->strides[nb], cs = j->strides[nb + 1];
  for (int64_t r = r0; r < r1; r++) {
    int64_t b = r / j->rows, i = r % j->rows, off = i * rs;
    for (int d = nb - 1; d >= 0; d--) {
      off += (b % j->sizes[d]) * j->strides[d];
      b /= j->sizes[d];
    }
    char *row = j->data + off * (int64_t)j->es;
    if (j->lower) { /* zero j > i + k */
      int64_t start = i + j->k + 1;
      if (start < 0) start = 0;
      if (start < j->cols) kd_tri_zero(row + start * cs * (int64_t)j->es, j->cols - start, cs, j->es);
    } else { /* zero j < i + k */
      int64_t end = i + j->k;
      if (end > j->cols) end = j->cols;
      kd_tri_zero(row, end, cs, j->es);
    }
  }
}

KD_KERNEL(kd_cpu_tri) {
  (void)ks;
  kd_tensor *self = args[0].v.t;
  bool lower = op->code == KD_TRI_LOWER;
  if (self->ndim < 2) { /* torch 1.13 reads dim -2: "Dimension out of range (... but got -2)" */
    int unused;
    KD_TRY(kd_shape_wrap_dim(-2, self->ndim, &unused));
    return kd_error(KD_ERR_INVALID_ARGUMENT, "%s: input tensor must have at least 2 dimensions", lower ? "tril" : "triu");
  }
  /* Every diagonal k >= cols keeps (tril) or zeroes (triu) whole rows, as does every k <= -rows:
   * clamping k there gives the same result and keeps i + k inside int64. */
  int64_t k = args[1].v.i, rows = self->sizes[self->ndim - 2], cols = self->sizes[self->ndim - 1];
  if (k > cols) k = cols;
  if (k < -rows) k = -rows;
  kd_tensor *dst;
  if (kd_op_is_inplace(op)) {
    KD_TRY(kd_cpu_check_no_internal_overlap(self));
    kd_tensor_retain(self);
    dst = self;
  } else {
    KD_TRY(kd_tensor_empty(self->sizes, self->ndim, self->dtype, kd_tensor_device(self), &dst));
    kd_status st = kd_cpu_copy_into(dst, self);
    if (st != KD_OK) {
      kd_tensor_release(dst);
      return st;
    }
  }
  int64_t numel = kd_tensor_numel(dst);
  if (numel > 0 && kd_tensor_device(dst).type != KD_DEVICE_CPU) {
    /* the device hook (cuda/ops_shape.cu): dst's dims uncoalesced, columns innermost, so the
     * kernel reads (row, column) off the element index */
    kd_iter it;
    memset(&it, 0, sizeof it);
    int64_t es = (int64_t)kd_dtype_size(dst->dtype);
    it.nops = it.nout = 1;
    it.ndim = dst->ndim;
    it.numel = numel;
    it.data[0] = kd_tensor_data(dst);
    it.dtypes[0] = dst->dtype;
    for (int d = 0; d < dst->ndim; d++) {
      it.shape[d] = dst->sizes[dst->ndim - 1 - d];
      it.strides[0][d] = dst->strides[dst->ndim - 1 - d] * es;
    }
    kd_iter_operand o = kd_iter_operand_of(dst);
    kd_dev_op d;
    memset(&d, 0, sizeof d);
    d.kind = KD_DEV_OP_TRI;
    d.dtype = dst->dtype;
    d.it = &it;
    d.ops = &o;
    d.i[0] = k;
    d.i[1] = lower;
    kd_status st = kd_cpu_device_run(kd_tensor_device(dst), &d);
    if (st != KD_OK) {
      kd_tensor_release(dst);
      return st;
    }
  } else if (numel > 0) {
    kd_tri_job j;
    j.data = kd_tensor_data(dst);
    j.ndim = dst->ndim;
    j.sizes = dst->sizes;
    j.strides = dst->strides;
    j.rows = dst->sizes[dst->ndim - 2];
    j.cols = dst->sizes[dst->ndim - 1];
    j.k = k;
    j.es = kd_dtype_size(dst->dtype);
    j.lower = lower;
    int64_t nrows = numel / j.cols;
    int64_t grain = KD_PARALLEL_GRAIN / (j.cols > 0 ? j.cols : 1);
    kd_parallel_for(0, nrows, grain > 0 ? grain : 1, kd_tri_rows, &j);
  }
  kd_out_take(outs, 0, dst);
  return KD_OK;
}
