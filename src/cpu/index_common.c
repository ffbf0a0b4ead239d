/* index_common.c - index preparation and the advanced-indexing geometry shared by the indexing
 * kernels; see Note [Indexing through the iterator] in index_common.h. The gather/scatter loops
 * are in index_loops.c (compiled per CPU level). */
#include "cpu/index_common.h"
#include "cpu/reduce.h"

#include "cpu/device_op.h"

#include <stdio.h>
#include <stdlib.h>

/* PyTorch's message for an out-of-range index. */
static kd_status kd_ix_bad(kd_ix_msg msg, long long bad, long long sz, int dim) {
  switch (msg) {
    case KD_IX_MSG_SELF: return kd_error(KD_ERR_INDEX, "index out of range in self");
    case KD_IX_MSG_TAKE:
      return kd_error(KD_ERR_INDEX, "out of range: tried to access index %lld on a tensor of %lld elements.", bad, sz);
    case KD_IX_MSG_INDEX_COPY:
      return kd_error(KD_ERR_INDEX, "index_copy_(): index %lld is out of bounds for dimension %d with size %lld", bad, dim,
                      sz);
    case KD_IX_MSG_INDEX_FILL:
      return kd_error(KD_ERR_INDEX, "index %lld is out of bounds for dimension %d with size %lld", bad, dim, sz);
    default: return kd_error(KD_ERR_INDEX, "index %lld is out of bounds for dimension %d with size %lld", bad, dim, sz);
  }
}

/* kd_ix_bad for a device check: args = msg, size, dim. */
static kd_status kd_ix_bad_deferred(int64_t bad, const int64_t args[3]) {
  return kd_ix_bad((kd_ix_msg)args[0], (long long)bad, (long long)args[1], (int)args[2]);
}

kd_status kd_ix_prepare(const kd_tensor *index, int64_t size, bool allow_neg, kd_ix_msg msg, int dim,
                        kd_tensor **out) {
  if (index->dtype == KD_DTYPE_I64 && kd_tensor_is_contiguous(index) &&
      kd_tensor_device(index).type == KD_DEVICE_CPU) { /* no copy when every value is already in [0, size) */
    if (kd_ix_all_in_range((const int64_t *)kd_tensor_data(index), kd_tensor_numel(index), size)) {
      kd_tensor_retain((kd_tensor *)index);
      *out = (kd_tensor *)index;
      return KD_OK;
    }
  }
  kd_tensor *r;
  KD_TRY(kd_tensor_empty(index->sizes, index->ndim, KD_DTYPE_I64, kd_tensor_device(index), &r));
  kd_status st = kd_cpu_copy_into(r, index);
  if (st != KD_OK) {
    kd_tensor_release(r);
    return st;
  }
  if (kd_tensor_device(r).type != KD_DEVICE_CPU) { /* device indices: checked and wrapped by the device hook */
    kd_dev_op d;
    memset(&d, 0, sizeof d);
    d.kind = KD_DEV_OP_IX_CHECK;
    d.data = kd_tensor_data(r);
    d.numel = kd_tensor_numel(r);
    d.i[0] = size;
    d.i[1] = allow_neg;
    d.fail = kd_ix_bad_deferred;
    d.fail_args[0] = (int64_t)msg;
    d.fail_args[1] = size;
    d.fail_args[2] = dim;
    st = kd_cpu_device_run(kd_tensor_device(r), &d);
    if (st == KD_OK && d.result[0]) st = kd_ix_bad(msg, d.result[1], size, dim);
    if (st != KD_OK) {
      kd_tensor_release(r);
      return st;
    }
    *out = r;
    return KD_OK;
  }
  int64_t *p = (int64_t *)kd_tensor_data(r), n = kd_tensor_numel(r);
  for (int64_t i = 0; i < n; i++) {
    int64_t v = p[i];
    if (v < 0 && allow_neg) v += size;
    if (v < 0 || v >= size) {
      long long bad = (long long)p[i], sz = (long long)size;
      kd_tensor_release(r);
      return kd_ix_bad(msg, bad, sz, dim);
    }
    p[i] = v;
  }
  *out = r;
  return KD_OK;
}

kd_status kd_ix_prepare_gather(const kd_tensor *self, const kd_tensor *index, int64_t size, kd_ix_msg msg, int dim,
                               kd_tensor **out, int64_t *bound) {
  *bound = 0;
  if (size > 0 && index->dtype == KD_DTYPE_I64 && kd_tensor_is_contiguous(index) &&
      kd_tensor_device(index).type == KD_DEVICE_CPU && kd_tensor_device(self).type == KD_DEVICE_CPU) { /* See Note [Index checks inside the gather] */
    kd_tensor_retain((kd_tensor *)index);
    *out = (kd_tensor *)index;
    *bound = size;
    return KD_OK;
  }
  return kd_ix_prepare(index, size, false, msg, dim, out);
}

kd_status kd_ix_gather_error(kd_status st, const kd_tensor *index, int64_t size, kd_ix_msg msg, int dim) {
  if (st != KD_ERR_INDEX) return st;
  kd_tensor *checked = NULL;
  kd_status why = kd_ix_prepare(index, size, false, msg, dim, &checked);
  if (why == KD_OK) { /* not reached: the loop saw a bad index */
    kd_tensor_release(checked);
    return kd_error(KD_ERR_INDEX, "index out of range");
  }
  return why;
}

/* ---- advanced indexing ---- */
void kd_ix_adv_free(kd_ix_adv *a) {
  for (int k = 0; k < a->nidx; k++)
    if (a->idx[k]) kd_tensor_release(a->idx[k]);
  a->nidx = 0;
}

kd_status kd_ix_adv_build(const kd_tensor *self, const kd_value *indices, kd_ix_adv *a) {
  memset(a, 0, sizeof *a);
  int n = indices->kind == KD_VALUE_TENSORLIST ? indices->v.tlist.n : 0;
  kd_tensor *const *list = indices->kind == KD_VALUE_TENSORLIST ? indices->v.tlist.data : NULL;
  /* how many self dims the indices consume */
  int used = 0;
  for (int i = 0; i < n; i++) {
    kd_tensor *e = list[i];
    if (e && (e->dtype == KD_DTYPE_BOOL || e->dtype == KD_DTYPE_U8)) used += e->ndim;
    else used++;
  }
  if (used > self->ndim)
    return kd_error(KD_ERR_INDEX, "too many indices for tensor of dimension %d (got %d)", self->ndim, used);
  kd_tensor *raw[KD_MAX_DIMS]; /* owned: int index tensors (retained) and mask columns */
  int nraw = 0, pos = 0;
  kd_status st = KD_OK;
  for (int i = 0; i < n && st == KD_OK; i++) {
    kd_tensor *e = list[i];
    if (!e) { pos++; continue; }
    if (e->dtype == KD_DTYPE_BOOL || e->dtype == KD_DTYPE_U8) {
      if (e->ndim == 0) { st = kd_error(KD_ERR_NOT_SUPPORTED, "index: a 0-d boolean index tensor is not supported"); break; }
      for (int j = 0; j < e->ndim; j++)
        if (e->sizes[j] != self->sizes[pos + j]) {
          char b1[128], b2[128];
          st = kd_error(KD_ERR_INDEX, "The shape of the mask %s at index %d does not match the shape of the indexed "
                        "tensor %s at index %d", kd_shape_format(e->sizes, e->ndim, b1, sizeof b1), j,
                        kd_shape_format(self->sizes, self->ndim, b2, sizeof b2), pos + j);
          break;
        }
      if (st != KD_OK) break;
      kd_tensor *nz;
      st = kd_cpu_nonzero_of(e, &nz);
      if (st != KD_OK) break;
      for (int j = 0; j < e->ndim && st == KD_OK; j++) {
        int64_t sz = nz->sizes[0], sd = nz->strides[0];
        st = kd_tensor_new_view(nz, &sz, &sd, 1, nz->offset + j, &raw[nraw]);
        if (st == KD_OK) { a->dims[nraw++] = pos + j; }
      }
      kd_tensor_release(nz);
      pos += e->ndim;
    } else if (e->dtype == KD_DTYPE_I64) {
      kd_tensor_retain(e);
      raw[nraw] = e;
      a->dims[nraw++] = pos++;
    } else {
      st = kd_error(KD_ERR_INDEX, "tensors used as indices must be long, byte or bool tensors");
    }
  }
  /* PyTorch 1.13 has no answer for index(t, []) or index(t, [None]) either (an internal assert):
   * the result geometry below needs at least one index tensor. */
  if (st == KD_OK && nraw == 0)
    st = kd_error(KD_ERR_INDEX, "index: at least one index tensor is required (got %s)", n ? "only nulls" : "an empty list");
  if (st == KD_OK && nraw > KD_IX_MAX_INDICES)
    st = kd_error(KD_ERR_NOT_SUPPORTED, "index: at most %d indexed dims are supported, got %d", KD_IX_MAX_INDICES, nraw);
  /* broadcast the index tensors */
  int64_t bshape[KD_MAX_DIMS];
  int bnd = 0;
  for (int k = 0; k < nraw && st == KD_OK; k++) {
    int64_t tmp[KD_MAX_DIMS];
    int nt;
    if (kd_shape_broadcast(bshape, bnd, raw[k]->sizes, raw[k]->ndim, tmp, &nt) != KD_OK) {
      char msg[512] = "shape mismatch: indexing tensors could not be broadcast together with shapes ";
      for (int j = 0; j < nraw; j++) {
        char b[128];
        size_t l = strlen(msg);
        snprintf(msg + l, sizeof msg - l, "%s%s", j ? ", " : "", kd_shape_format(raw[j]->sizes, raw[j]->ndim, b, sizeof b));
      }
      st = kd_error(KD_ERR_INDEX, "%s", msg);
      break;
    }
    memcpy(bshape, tmp, sizeof(int64_t) * nt);
    bnd = nt;
  }
  /* bounds (and wrap) */
  for (int k = 0; k < nraw && st == KD_OK; k++) {
    st = kd_ix_prepare(raw[k], self->sizes[a->dims[k]], true, KD_IX_MSG_BOUNDS, a->dims[k], &a->idx[k]);
    if (st == KD_OK) a->nidx = k + 1;
  }
  for (int k = 0; k < nraw; k++) kd_tensor_release(raw[k]);
  if (st != KD_OK) {
    kd_ix_adv_free(a);
    return st;
  }
  a->nidx = nraw;
  /* result geometry: the broadcast block replaces adjacent indexed dims, else goes first */
  bool adjacent = true;
  for (int k = 1; k < nraw; k++)
    if (a->dims[k] != a->dims[k - 1] + 1) adjacent = false;
  bool indexed[KD_MAX_DIMS] = {false};
  for (int k = 0; k < nraw; k++) indexed[a->dims[k]] = true;
  int block = nraw == 0 ? -1 : adjacent ? a->dims[0] : 0; /* where the block starts in the result */
  int r = 0, bstart = -1;
  int before = adjacent ? block : 0;
  for (int d = 0; d < before; d++) {
    a->rshape[r] = self->sizes[d];
    a->src_strides[r++] = self->strides[d];
  }
  if (nraw) {
    bstart = r;
    for (int b = 0; b < bnd; b++) {
      a->rshape[r] = bshape[b];
      a->src_strides[r++] = 0;
    }
  }
  for (int d = before; d < self->ndim; d++) {
    if (indexed[d]) continue;
    if (r >= KD_MAX_DIMS) return kd_ix_adv_free(a), kd_error(KD_ERR_NOT_SUPPORTED, "index: result has too many dims");
    a->rshape[r] = self->sizes[d];
    a->src_strides[r++] = self->strides[d];
  }
  a->rnd = r;
  for (int k = 0; k < nraw; k++) {
    const kd_tensor *t = a->idx[k];
    memset(a->idx_strides[k], 0, sizeof a->idx_strides[k]);
    int64_t cs[KD_MAX_DIMS];
    kd_shape_contiguous_strides(t->sizes, t->ndim, cs);
    for (int j = 0; j < t->ndim; j++) {
      int b = bnd - t->ndim + j;
      a->idx_strides[k][bstart + b] = t->sizes[j] == 1 ? 0 : cs[j];
    }
  }
  return KD_OK;
}

kd_status kd_ix_adv_operands(const kd_tensor *self, const kd_ix_adv *a, kd_iter_operand *ops, kd_ix_ctx *ctx) {
  int64_t es = (int64_t)kd_dtype_size(self->dtype);
  ops[1] = kd_ix_operand(self, a->rshape, a->src_strides, a->rnd);
  memset(ctx, 0, sizeof *ctx);
  ctx->dev = kd_tensor_device(self);
  ctx->nidx = a->nidx;
  ctx->es = es;
  for (int k = 0; k < a->nidx; k++) {
    ops[2 + k] = kd_ix_operand(a->idx[k], a->rshape, a->idx_strides[k], a->rnd);
    ctx->stride[k] = self->strides[a->dims[k]] * es;
  }
  return KD_OK;
}
