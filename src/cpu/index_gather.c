/* index_gather.c - the reading indexing ops: indexSelect, gather, take and advanced indexing
 * (index, aten::index.Tensor). All are one gather loop over the result's shape (see Note
 * [Indexing through the iterator] in index_common.h); indices are checked before anything runs. */
#include "cpu/index_common.h"


static kd_status kd_ix_finish(kd_status st, kd_tensor *out, kd_tensor *idx, kd_value *outs) {
  if (idx) kd_tensor_release(idx);
  if (st != KD_OK) {
    kd_tensor_release(out);
    return st;
  }
  kd_out_take(outs, 0, out);
  return KD_OK;
}

static kd_status kd_index_select(kd_tensor *self, int64_t dimv, kd_tensor *index, kd_value *outs) {
  int dim;
  KD_TRY(kd_shape_wrap_dim(dimv, self->ndim, &dim));
  if (index->ndim > 1) return kd_error(KD_ERR_INDEX, "index_select(): Index is supposed to be a vector");
  if (index->dtype != KD_DTYPE_I64 && index->dtype != KD_DTYPE_I32)
    return kd_error(KD_ERR_DTYPE, "index_select(): Expected dtype int32 or int64 for index");
  int64_t ni = kd_tensor_numel(index);
  if (self->ndim == 0 && ni != 1)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "index_select(): Index to scalar can have only 1 value, got %lld value(s)",
                    (long long)ni);
  kd_tensor *idx = NULL;
  int64_t bound = 0;
  /* Only along the last dim does the index vary along the loop's runs: there it is checked in
   * the loop (Note [Index checks inside the gather]); along another dim each index value is
   * used for a whole row, and one pass over the short index first costs less. */
  if (dim == self->ndim - 1) KD_TRY(kd_ix_prepare_gather(self, index, kd_ix_size(self, dim), KD_IX_MSG_SELF, dim, &idx, &bound));
  else KD_TRY(kd_ix_prepare(index, kd_ix_size(self, dim), false, KD_IX_MSG_SELF, dim, &idx));
  int64_t osizes[KD_MAX_DIMS], sstr[KD_MAX_DIMS], istr[KD_MAX_DIMS] = {0}, ostr[KD_MAX_DIMS];
  int nd = self->ndim;
  for (int d = 0; d < nd; d++) {
    osizes[d] = d == dim ? ni : self->sizes[d];
    sstr[d] = d == dim ? 0 : self->strides[d];
  }
  if (nd) istr[dim] = 1;
  kd_tensor *out;
  kd_status st = kd_tensor_empty(osizes, nd, self->dtype, kd_tensor_device(self), &out);
  if (st != KD_OK) { kd_tensor_release(idx); return st; }
  kd_shape_contiguous_strides(osizes, nd, ostr);
  kd_iter_operand ops[3] = {kd_ix_operand(out, osizes, ostr, nd), kd_ix_operand(self, osizes, sstr, nd),
                            kd_ix_operand(idx, osizes, istr, nd)};
  kd_ix_ctx ctx = {1, {kd_ix_stride(self, dim) * (int64_t)kd_dtype_size(self->dtype)}, (int64_t)kd_dtype_size(self->dtype), 0};
  ctx.dev = kd_tensor_device(self);
  ctx.bound[0] = bound;
  st = kd_ix_gather_error(kd_ix_run_gather(ops, 3, &ctx), index, kd_ix_size(self, dim), KD_IX_MSG_SELF, dim);
  return kd_ix_finish(st, out, idx, outs);
}

/* The shape checks of gather and of the scatter family (PyTorch's gather_shape_check /
 * scatter_shape_check, after its scatter_gather_dtype_check). src may be NULL (a scalar value). */
kd_status kd_ix_scatter_gather_check(const char *name, const kd_tensor *self, int dim, const kd_tensor *index,
                                     const kd_tensor *src, bool is_gather) {
  /* as PyTorch's scatter_gather_dtype_check: an empty index may have any dtype */
  if (index->dtype != KD_DTYPE_I64 && kd_tensor_numel(index) != 0)
    return kd_error(KD_ERR_DTYPE, "%s(): Expected dtype int64 for index", name);
  int sd = self->ndim ? self->ndim : 1, id = index->ndim ? index->ndim : 1;
  if (is_gather) {
    if (id != sd) return kd_error(KD_ERR_INVALID_ARGUMENT, "Index tensor must have the same number of dimensions as input tensor");
    for (int d = 0; d < sd; d++) {
      if (d == dim) continue;
      if (kd_ix_size(index, d) > kd_ix_size(self, d)) {
        char b1[128], b2[128];
        return kd_error(KD_ERR_SHAPE, "Size does not match at dimension %d expected index %s to be smaller than self %s "
                        "apart from dimension %d", d, kd_shape_format(index->sizes, index->ndim, b1, sizeof b1),
                        kd_shape_format(self->sizes, self->ndim, b2, sizeof b2), dim);
      }
    }
    return KD_OK;
  }
  if (kd_tensor_numel(index) == 0) return KD_OK;
  if (id != sd) return kd_error(KD_ERR_INVALID_ARGUMENT, "Index tensor must have the same number of dimensions as self tensor");
  if (src && (src->ndim ? src->ndim : 1) != id)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "Index tensor must have the same number of dimensions as src tensor");
  for (int d = 0; d < sd; d++) {
    bool bad = (d != dim && kd_ix_size(index, d) > kd_ix_size(self, d)) || (src && kd_ix_size(index, d) > kd_ix_size(src, d));
    if (bad) {
      char b1[128], b2[128], b3[128];
      if (src)
        return kd_error(KD_ERR_SHAPE, "Expected index %s to be smaller than self %s apart from dimension %d and to be "
                        "smaller size than src %s", kd_shape_format(index->sizes, index->ndim, b1, sizeof b1),
                        kd_shape_format(self->sizes, self->ndim, b2, sizeof b2), dim,
                        kd_shape_format(src->sizes, src->ndim, b3, sizeof b3));
      return kd_error(KD_ERR_SHAPE, "Expected index %s to be smaller than self %s apart from dimension %d",
                      kd_shape_format(index->sizes, index->ndim, b1, sizeof b1),
                      kd_shape_format(self->sizes, self->ndim, b2, sizeof b2), dim);
    }
  }
  return KD_OK;
}

static kd_status kd_gather(kd_tensor *self, int64_t dimv, kd_tensor *index, kd_value *outs) {
  int dim;
  KD_TRY(kd_shape_wrap_dim(dimv, self->ndim, &dim));
  KD_TRY(kd_ix_scatter_gather_check("gather", self, dim, index, NULL, true));
  kd_tensor *idx = NULL;
  int64_t bound;
  KD_TRY(kd_ix_prepare_gather(self, index, kd_ix_size(self, dim), KD_IX_MSG_BOUNDS, dim, &idx, &bound));
  int nd = index->ndim;
  int64_t sstr[KD_MAX_DIMS], istr[KD_MAX_DIMS], ostr[KD_MAX_DIMS];
  for (int d = 0; d < nd; d++) sstr[d] = d == dim ? 0 : kd_ix_stride(self, d);
  kd_shape_contiguous_strides(index->sizes, nd, istr);
  kd_tensor *out;
  kd_status st = kd_tensor_empty(index->sizes, nd, self->dtype, kd_tensor_device(self), &out);
  if (st != KD_OK) { kd_tensor_release(idx); return st; }
  memcpy(ostr, istr, sizeof istr);
  kd_iter_operand ops[3] = {kd_ix_operand(out, index->sizes, ostr, nd), kd_ix_operand(self, index->sizes, sstr, nd),
                            kd_ix_operand(idx, index->sizes, istr, nd)};
  int64_t es = (int64_t)kd_dtype_size(self->dtype);
  kd_ix_ctx ctx = {1, {kd_ix_stride(self, dim) * es}, es, 0};
  ctx.dev = kd_tensor_device(self);
  ctx.bound[0] = bound;
  st = kd_ix_gather_error(kd_ix_run_gather(ops, 3, &ctx), index, kd_ix_size(self, dim), KD_IX_MSG_BOUNDS, dim);
  return kd_ix_finish(st, out, idx, outs);
}

static kd_status kd_take(kd_tensor *self, kd_tensor *index, kd_value *outs) {
  if (index->dtype != KD_DTYPE_I64)
    return kd_error(KD_ERR_DTYPE, "take(): Expected a long tensor for index, but got %s", kd_cpu_torch_name(index->dtype));
  int64_t n = kd_tensor_numel(self);
  if (n == 0 && kd_tensor_numel(index) > 0)
    return kd_error(KD_ERR_INDEX, "take(): tried to take from an empty tensor");
  kd_tensor *idx = NULL, *flat = NULL;
  KD_TRY(kd_ix_prepare(index, n, true, KD_IX_MSG_TAKE, 0, &idx));
  kd_status st = kd_cpu_cast(self, self->dtype, true, &flat);
  if (st != KD_OK) { kd_tensor_release(idx); return st; }
  kd_tensor *out;
  st = kd_tensor_empty(index->sizes, index->ndim, self->dtype, kd_tensor_device(self), &out);
  if (st == KD_OK) {
    int64_t es = (int64_t)kd_dtype_size(self->dtype);
    kd_iter_operand ops[3] = {kd_iter_operand_of(out), kd_cpu_scalar_operand(kd_tensor_data(flat), self->dtype),
                              kd_iter_operand_of(idx)};
    kd_ix_ctx ctx = {1, {es}, es, 0};
    ctx.dev = kd_tensor_device(self);
    st = kd_ix_run_gather(ops, 3, &ctx);
  } else {
    out = NULL;
  }
  kd_tensor_release(flat);
  if (!out) { kd_tensor_release(idx); return st; }
  return kd_ix_finish(st, out, idx, outs);
}

static kd_status kd_index(kd_tensor *self, const kd_value *indices, kd_value *outs) {
  kd_ix_adv a;
  KD_TRY(kd_ix_adv_build(self, indices, &a));
  kd_tensor *out;
  kd_status st = kd_tensor_empty(a.rshape, a.rnd, self->dtype, kd_tensor_device(self), &out);
  if (st == KD_OK) {
    kd_iter_operand ops[KD_ITER_MAX_OPS];
    kd_ix_ctx ctx;
    ops[0] = kd_iter_operand_of(out);
    kd_ix_adv_operands(self, &a, ops, &ctx);
    st = kd_ix_run_gather(ops, 2 + a.nidx, &ctx);
    if (st != KD_OK) kd_tensor_release(out);
  }
  kd_ix_adv_free(&a);
  KD_TRY(st);
  kd_out_take(outs, 0, out);
  return KD_OK;
}

KD_KERNEL(kd_cpu_gather) {
  (void)ks;
  switch (op->code) {
    case KD_GATHER_INDEX_SELECT: return kd_index_select(args[0].v.t, args[1].v.i, args[2].v.t, outs);
    case KD_GATHER_GATHER: return kd_gather(args[0].v.t, args[1].v.i, args[2].v.t, outs);
    case KD_GATHER_TAKE: return kd_take(args[0].v.t, args[1].v.t, outs);
    case KD_GATHER_INDEX: return kd_index(args[0].v.t, &args[1], outs);
    default: return kd_error(KD_ERR_INTERNAL, "kd_cpu_gather: unknown op '%s'", op->name);
  }
}
