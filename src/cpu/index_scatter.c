/* index_scatter.c - the writing indexing ops and their in-place forms: scatter (tensor or value,
 * reduce 'add'/'multiply'), scatterAdd, scatterReduce ('sum', 'prod', 'mean', 'amax', 'amin',
 * includeSelf), indexAdd, indexCopy, indexFill and indexPut (advanced indexing, accumulate).
 * Out-of-place forms clone self and scatter into the clone. Shapes, dtypes and every index are
 * checked before anything is written; the writes are one scatter loop through the iterator with
 * the destination as the output (see Note [Indexing through the iterator] in index_common.h). */
#include <math.h>
#include <stdlib.h>

#include "cpu/index_common.h"

/* The destination: self (in place, after PyTorch's overlap check) or a contiguous clone. */
static kd_status kd_ix_dest(const kd_op_info *op, kd_tensor *self, kd_tensor **dst) {
  if (kd_op_is_inplace(op)) {
    KD_TRY(kd_cpu_check_no_internal_overlap(self));
    kd_tensor_retain(self);
    *dst = self;
    return KD_OK;
  }
  KD_TRY(kd_tensor_empty_like(self, self->dtype, dst));
  kd_status st = kd_cpu_copy_into(*dst, self);
  if (st != KD_OK) kd_tensor_release(*dst);
  return st;
}

/* src itself (retained), or a copy when it may overlap dst. */
static kd_status kd_ix_source(kd_tensor *dst, kd_tensor *src, kd_tensor **out) {
  if (kd_cpu_may_overlap(dst, src)) {
    KD_TRY(kd_tensor_empty_like(src, src->dtype, out));
    kd_status st = kd_cpu_copy_into(*out, src);
    if (st != KD_OK) kd_tensor_release(*out);
    return st;
  }
  kd_tensor_retain(src);
  *out = src;
  return KD_OK;
}

static kd_status kd_ix_done(kd_status st, kd_tensor *dst, kd_tensor *src, kd_tensor *idx, kd_value *outs) {
  if (src) kd_tensor_release(src);
  if (idx) kd_tensor_release(idx);
  if (st != KD_OK) {
    kd_tensor_release(dst);
    return st;
  }
  kd_out_take(outs, 0, dst);
  return KD_OK;
}

/* The identity of a scatterReduce mode for dtype dt, as a scalar. */
static kd_scalar kd_ix_identity(int mode, kd_dtype dt) {
  if (mode == KD_IX_ADD) return kd_scalar_i(0);
  if (mode == KD_IX_MUL) return kd_scalar_i(1);
  bool mx = mode == KD_IX_MAX;
  if (kd_dtype_is_float(dt)) return kd_scalar_f(mx ? -INFINITY : INFINITY);
  switch (dt) {
    case KD_DTYPE_I8: return kd_scalar_i(mx ? INT8_MIN : INT8_MAX);
    case KD_DTYPE_U8: return kd_scalar_i(mx ? 0 : UINT8_MAX);
    case KD_DTYPE_I16: return kd_scalar_i(mx ? INT16_MIN : INT16_MAX);
    case KD_DTYPE_I32: return kd_scalar_i(mx ? INT32_MIN : INT32_MAX);
    case KD_DTYPE_I64: return kd_scalar_i(mx ? INT64_MIN : INT64_MAX);
    default: return kd_scalar_b(!mx);
  }
}

/* One op on dev, below autograd (arithmetic inside a kernel); *out (may be NULL) gets
 * the result. */
static kd_status kd_ix_device_op(kd_op_id id, kd_device dev, kd_value *args, kd_tensor **out) {
  kd_value outs[KD_OP_MAX_OUTS];
  for (int i = 0; i < KD_OP_MAX_OUTS; i++) outs[i] = kd_value_none();
  kd_status st = kd_redispatch(&kd_ops[id], KD_KEYSET(kd_device_key(dev)), args, outs);
  if (st == KD_OK && out) {
    *out = outs[0].v.t;
    outs[0] = kd_value_none();
  }
  for (int i = 0; i < KD_OP_MAX_OUTS; i++) kd_value_release(&outs[i]);
  return st;
}

/* scatterReduce 'mean': work (contiguous) holds the sums; divides each place by the number of
 * values reduced into it (self counts once with includeSelf; places without any keep their value).
 * The counts are a float64 scatter-add of ones through the same index operand, so on a device
 * they are atomics there too; integer sums are divided with floor, as PyTorch. */
static kd_status kd_scatter_mean_divide(kd_tensor *work, int dim, kd_iter_operand index_op, const int64_t *index_sizes,
                                        int nd, bool include_self) {
  kd_device dev = kd_tensor_device(work);
  kd_tensor *cnt = NULL, *quot = NULL;
  KD_TRY(kd_tensor_empty(work->sizes, work->ndim, KD_DTYPE_F64, dev, &cnt));
  kd_value fill[2] = {kd_value_tensor(cnt), kd_value_scalar(kd_scalar_f(include_self ? 1.0 : 0.0))};
  kd_status st = kd_ix_device_op(KD_OP_fill_, dev, fill, NULL);
  double one = 1.0;
  int64_t cstr[KD_MAX_DIMS];
  for (int d = 0; d < nd; d++) cstr[d] = d == dim ? 0 : kd_ix_stride(cnt, d);
  kd_iter_operand cops[3] = {kd_ix_operand(cnt, index_sizes, cstr, nd), kd_cpu_scalar_operand(&one, KD_DTYPE_F64), index_op};
  kd_ix_ctx cctx = {1, {kd_ix_stride(cnt, dim) * 8}, 8, KD_IX_ADD};
  cctx.dev = dev;
  if (st == KD_OK) st = kd_ix_run_scatter(cops, 3, &cctx);
  kd_value clamp[2] = {kd_value_tensor(cnt), kd_value_scalar(kd_scalar_f(1.0))};
  if (st == KD_OK) st = kd_ix_device_op(KD_OP_clampMin_, dev, clamp, NULL);
  kd_value str = kd_value_none();
  if (!kd_dtype_is_float(work->dtype)) {
    str.kind = KD_VALUE_STRING;
    str.v.str = "floor";
  }
  kd_value div[3] = {kd_value_tensor(work), kd_value_tensor(cnt), str};
  if (st == KD_OK) st = kd_ix_device_op(KD_OP_div, dev, div, &quot);
  if (st == KD_OK) st = kd_cpu_copy_into(work, quot);
  if (quot) kd_tensor_release(quot);
  kd_tensor_release(cnt);
  return st;
}

/* ---- scatter / scatterAdd / scatterReduce ---- */
static kd_status kd_scatter(const kd_op_info *op, kd_value *args, kd_value *outs) {
  kd_tensor *self = args[0].v.t, *index = args[2].v.t;
  bool is_reduce = op->code == KD_SCATTER_REDUCE;
  const char *name = op->code == KD_SCATTER_ADD ? "scatter_add" : is_reduce ? "scatter_reduce" : "scatter";
  int dim;
  KD_TRY(kd_shape_wrap_dim(args[1].v.i, self->ndim, &dim));
  kd_tensor *srct = args[3].kind == KD_VALUE_TENSOR ? args[3].v.t : NULL;
  int mode = op->code == KD_SCATTER_ADD ? KD_IX_ADD : KD_IX_COPY;
  bool mean = false, include_self = true;
  if (op->code == KD_SCATTER_SCATTER && args[4].kind == KD_VALUE_STRING) {
    const char *r = args[4].v.str;
    if (!strcmp(r, "add")) mode = KD_IX_ADD;
    else if (!strcmp(r, "multiply")) mode = KD_IX_MUL;
    else return kd_error(KD_ERR_INVALID_ARGUMENT, "reduce argument must be either add or multiply.");
  }
  if (is_reduce) {
    const char *r = args[4].kind == KD_VALUE_STRING ? args[4].v.str : "";
    if (!strcmp(r, "sum")) mode = KD_IX_ADD;
    else if (!strcmp(r, "prod")) mode = KD_IX_MUL;
    else if (!strcmp(r, "mean")) mode = KD_IX_ADD, mean = true;
    else if (!strcmp(r, "amax")) mode = KD_IX_MAX;
    else if (!strcmp(r, "amin")) mode = KD_IX_MIN;
    else return kd_error(KD_ERR_INVALID_ARGUMENT, "reduce argument must be either sum, prod, mean, amax or amin, got %s", r);
    include_self = !(args[5].kind == KD_VALUE_BOOL && !args[5].v.b);
  }
  if (srct && srct->dtype != self->dtype)
    return kd_error(KD_ERR_DTYPE, "%s(): Expected self.dtype to be equal to src.dtype", name);
  KD_TRY(kd_ix_scatter_gather_check(name, self, dim, index, srct, false));
  if (mode != KD_IX_COPY && self->dtype == KD_DTYPE_BOOL && is_reduce && mean)
    return kd_error(KD_ERR_NOT_SUPPORTED, "\"scatter_reduce_cpu\" not implemented for 'Bool'");
  kd_tensor *idx = NULL, *dst = NULL, *src = NULL;
  KD_TRY(kd_ix_prepare(index, kd_ix_size(self, dim), false, KD_IX_MSG_BOUNDS, dim, &idx));
  kd_status st = kd_ix_dest(op, self, &dst);
  if (st != KD_OK) { kd_tensor_release(idx); return st; }
  if (srct) st = kd_ix_source(dst, srct, &src);
  if (st != KD_OK) return kd_ix_done(st, dst, NULL, idx, outs);
  /* a mean over a non-contiguous in-place self works on a contiguous copy */
  kd_tensor *work = dst;
  kd_tensor_retain(work);
  if (mean && !kd_tensor_is_contiguous(dst)) {
    kd_tensor_release(work);
    st = kd_tensor_empty_like(dst, dst->dtype, &work);
    if (st == KD_OK) st = kd_cpu_copy_into(work, dst);
    if (st != KD_OK) return kd_ix_done(st, dst, src, idx, outs);
  }
  int nd = index->ndim;
  int64_t es = (int64_t)kd_dtype_size(self->dtype);
  int64_t dstr[KD_MAX_DIMS], istr[KD_MAX_DIMS];
  for (int d = 0; d < nd; d++) dstr[d] = d == dim ? 0 : kd_ix_stride(work, d);
  kd_shape_contiguous_strides(index->sizes, nd, istr);
  int64_t buf = 0;
  kd_iter_operand ops[3];
  ops[0] = kd_ix_operand(work, index->sizes, dstr, nd);
  ops[2] = kd_ix_operand(idx, index->sizes, istr, nd);
  kd_ix_ctx ctx = {1, {kd_ix_stride(work, dim) * es}, es, KD_IX_COPY};
  ctx.dev = kd_tensor_device(work);
  if (!include_self) { /* the scattered-to positions start from the reduction's identity */
    kd_scalar_store(kd_ix_identity(mode, self->dtype), self->dtype, &buf);
    ops[1] = kd_cpu_scalar_operand(&buf, self->dtype);
    st = kd_ix_run_scatter(ops, 3, &ctx);
  }
  if (src) ops[1] = kd_ix_operand(src, index->sizes, src->ndim ? src->strides : istr, nd);
  else {
    kd_scalar_store(args[3].v.s, self->dtype, &buf);
    ops[1] = kd_cpu_scalar_operand(&buf, self->dtype);
  }
  ctx.mode = mode;
  if (st == KD_OK) st = kd_ix_run_scatter(ops, 3, &ctx);
  if (st == KD_OK && mean) st = kd_scatter_mean_divide(work, dim, ops[2], index->sizes, nd, include_self);
  if (st == KD_OK && work != dst) st = kd_cpu_copy_into(dst, work);
  kd_tensor_release(work);
  return kd_ix_done(st, dst, src, idx, outs);
}

/* ---- indexAdd / indexCopy / indexFill ---- */
static kd_status kd_index_along(const kd_op_info *op, kd_value *args, kd_value *outs) {
  kd_tensor *self = args[0].v.t, *index = args[2].v.t;
  int code = op->code;
  const char *name = code == KD_SCATTER_INDEX_ADD ? "index_add_" : code == KD_SCATTER_INDEX_COPY ? "index_copy_" : "index_fill_";
  int dim;
  KD_TRY(kd_shape_wrap_dim(args[1].v.i, self->ndim, &dim));
  if (code == KD_SCATTER_INDEX_COPY) {
    if (index->ndim > 1) return kd_error(KD_ERR_INVALID_ARGUMENT, "index_copy_(): Index should have dimension 1 or 0 (got %d)", index->ndim);
    if (index->dtype != KD_DTYPE_I64)
      return kd_error(KD_ERR_DTYPE, "index_copy_(): Expected a long tensor for index, but got %s", kd_cpu_torch_name(index->dtype));
  } else if (code == KD_SCATTER_INDEX_FILL) {
    if (index->dtype != KD_DTYPE_I64) return kd_error(KD_ERR_DTYPE, "index_fill_(): Expected dtype int64 for index.");
    if (index->ndim > 1) return kd_error(KD_ERR_INVALID_ARGUMENT, "Index has to be a vector/scalar");
  } else {
    if (index->ndim > 1) return kd_error(KD_ERR_INVALID_ARGUMENT, "index_add_(): Index is supposed to be a vector");
    if (index->dtype != KD_DTYPE_I64 && index->dtype != KD_DTYPE_I32)
      return kd_error(KD_ERR_DTYPE, "index_add_(): Expected dtype int32/int64 for index");
  }
  int64_t ni = kd_tensor_numel(index);
  kd_tensor *source = NULL;
  int64_t buf = 0;
  if (code == KD_SCATTER_INDEX_FILL) {
    kd_scalar v;
    if (args[3].kind == KD_VALUE_TENSOR) {
      kd_tensor *vt = args[3].v.t;
      if (vt->ndim != 0)
        return kd_error(KD_ERR_INVALID_ARGUMENT, "index_fill_ only supports a 0-dimensional value tensor, but got tensor "
                        "with %d dimension(s).", vt->ndim);
      KD_TRY(kd_cpu_item(vt, &v)); /* a 0-d value on any device */
    } else {
      v = args[3].v.s;
    }
    kd_scalar_store(v, self->dtype, &buf);
  } else {
    source = args[3].v.t;
    if (source->dtype != self->dtype) {
      if (code == KD_SCATTER_INDEX_COPY)
        return kd_error(KD_ERR_DTYPE, "index_copy_(): self and source expected to have the same dtype, but got (self) %s "
                        "and (source) %s", kd_cpu_torch_name(self->dtype), kd_cpu_torch_name(source->dtype));
      return kd_error(KD_ERR_DTYPE, "index_add_(): self (%s) and source (%s) must have the same scalar type",
                      kd_cpu_torch_name(self->dtype), kd_cpu_torch_name(source->dtype));
    }
    int64_t ssz = kd_ix_size(source, dim);
    if (ssz != ni)
      return kd_error(KD_ERR_INVALID_ARGUMENT, "%s(): Number of indices (%lld) should be equal to source.size(dim): (%lld), "
                      "for dim: %d", name, (long long)ni, (long long)ssz, dim);
    bool same = (source->ndim ? source->ndim : 1) == (self->ndim ? self->ndim : 1);
    for (int d = 0; same && d < (self->ndim ? self->ndim : 1); d++)
      if (d != dim && kd_ix_size(source, d) != kd_ix_size(self, d)) same = false;
    if (!same) {
      char b1[128], b2[128];
      kd_shape_format(self->sizes, self->ndim, b1, sizeof b1);
      kd_shape_format(source->sizes, source->ndim, b2, sizeof b2);
      if (code == KD_SCATTER_INDEX_COPY)
        return kd_error(KD_ERR_SHAPE, "index_copy_(): Source/destination tensor must have same slice shapes. Destination "
                        "slice shape: %s at dimension %d and source slice shape: %s at dimension 0.", b1, dim, b2);
      int bad = 0;
      for (int d = 0; d < (self->ndim ? self->ndim : 1); d++)
        if (d != dim && kd_ix_size(source, d) != kd_ix_size(self, d)) { bad = d; break; }
      return kd_error(KD_ERR_SHAPE, "The size of tensor a (%lld) must match the size of tensor b (%lld) at non-singleton "
                      "dimension %d", (long long)kd_ix_size(self, bad), (long long)kd_ix_size(source, bad), bad - (bad > dim));
    }
  }
  kd_tensor *idx = NULL, *dst = NULL, *src = NULL;
  kd_ix_msg msg = code == KD_SCATTER_INDEX_ADD ? KD_IX_MSG_SELF : code == KD_SCATTER_INDEX_COPY ? KD_IX_MSG_INDEX_COPY
                                                                                               : KD_IX_MSG_INDEX_FILL;
  KD_TRY(kd_ix_prepare(index, kd_ix_size(self, dim), code == KD_SCATTER_INDEX_FILL, msg, dim, &idx));
  kd_status st = kd_ix_dest(op, self, &dst);
  if (st != KD_OK) { kd_tensor_release(idx); return st; }
  if (source) {
    /* alpha: indexAdd adds alpha * source */
    if (code == KD_SCATTER_INDEX_ADD && args[4].kind == KD_VALUE_SCALAR &&
        !(args[4].v.s.kind != KD_KIND_FLOAT && kd_scalar_to_int(args[4].v.s) == 1)) {
      if (!kd_dtype_is_float(self->dtype) && args[4].v.s.kind == KD_KIND_FLOAT)
        return kd_ix_done(kd_error(KD_ERR_DTYPE, "For integral input tensors, argument alpha must not be a floating point number."),
                          dst, NULL, idx, outs);
      kd_value a[2] = {kd_value_tensor(source), kd_value_scalar(args[4].v.s)};
      st = kd_call1(KD_OP_mul, a, &src);
      if (st == KD_OK && src->dtype != self->dtype) { /* a float alpha on a float self keeps its dtype */
        kd_tensor *c;
        st = kd_cpu_cast(src, self->dtype, false, &c);
        kd_tensor_release(src);
        src = st == KD_OK ? c : NULL;
      }
    } else {
      st = kd_ix_source(dst, source, &src);
    }
    if (st != KD_OK) return kd_ix_done(st, dst, NULL, idx, outs);
  }
  /* iteration shape: source's (indexAdd/indexCopy) or self's with ni along dim (indexFill) */
  int nd = self->ndim;
  int64_t sizes[KD_MAX_DIMS], dstr[KD_MAX_DIMS], istr[KD_MAX_DIMS] = {0}, one = 1;
  for (int d = 0; d < nd; d++) {
    sizes[d] = d == dim ? ni : self->sizes[d];
    dstr[d] = d == dim ? 0 : dst->strides[d];
  }
  if (nd) istr[dim] = 1;
  int64_t es = (int64_t)kd_dtype_size(self->dtype);
  kd_iter_operand ops[3];
  ops[0] = kd_ix_operand(dst, sizes, dstr, nd);
  ops[1] = src ? kd_ix_operand(src, sizes, src->ndim ? src->strides : &one, nd) : kd_cpu_scalar_operand(&buf, self->dtype);
  ops[2] = kd_ix_operand(idx, sizes, istr, nd);
  if (nd == 0) ops[2] = kd_cpu_scalar_operand(kd_tensor_data(idx), KD_DTYPE_I64);
  if (src && src->ndim == 0) ops[1] = kd_cpu_scalar_operand(kd_tensor_data(src), self->dtype);
  kd_ix_ctx ctx = {1, {kd_ix_stride(dst, dim) * es}, es, code == KD_SCATTER_INDEX_ADD ? KD_IX_ADD : KD_IX_COPY};
  ctx.dev = kd_tensor_device(dst);
  st = kd_ix_run_scatter(ops, 3, &ctx);
  return kd_ix_done(st, dst, src, idx, outs);
}

/* ---- indexPut ---- */
static kd_status kd_index_put(const kd_op_info *op, kd_value *args, kd_value *outs) {
  kd_tensor *self = args[0].v.t, *values = args[2].v.t;
  bool acc = args[3].kind == KD_VALUE_BOOL && args[3].v.b;
  if (values->dtype != self->dtype)
    return kd_error(KD_ERR_DTYPE, "Index put requires the source and destination dtypes match, got %s for the destination "
                    "and %s for the source.", kd_cpu_torch_name(self->dtype), kd_cpu_torch_name(values->dtype));
  kd_tensor *dst = NULL, *src = NULL;
  KD_TRY(kd_ix_dest(op, self, &dst));
  kd_ix_adv a;
  kd_status st = kd_ix_adv_build(dst, &args[1], &a);
  if (st != KD_OK) return kd_ix_done(st, dst, NULL, NULL, outs);
  int64_t tmp[KD_MAX_DIMS];
  int nt;
  if (kd_shape_broadcast(values->sizes, values->ndim, a.rshape, a.rnd, tmp, &nt) != KD_OK || nt != a.rnd ||
      memcmp(tmp, a.rshape, sizeof(int64_t) * nt) != 0) {
    char b1[128], b2[128];
    st = kd_error(KD_ERR_SHAPE, "shape mismatch: value tensor of shape %s cannot be broadcast to indexing result of shape %s",
                  kd_shape_format(values->sizes, values->ndim, b1, sizeof b1), kd_shape_format(a.rshape, a.rnd, b2, sizeof b2));
  }
  if (st == KD_OK) st = kd_ix_source(dst, values, &src);
  if (st == KD_OK) {
    kd_iter_operand ops[KD_ITER_MAX_OPS];
    kd_ix_ctx ctx;
    kd_ix_adv_operands(dst, &a, ops, &ctx);
    ops[0] = ops[1];   /* the destination, restrided: the iteration's output */
    ops[1] = kd_iter_operand_of(src);
    ctx.mode = acc ? KD_IX_ADD : KD_IX_COPY;
    st = kd_ix_run_scatter(ops, 2 + a.nidx, &ctx);
  }
  kd_ix_adv_free(&a);
  return kd_ix_done(st, dst, src, NULL, outs);
}

KD_KERNEL(kd_cpu_scatter) {
  (void)ks;
  switch (op->code) {
    case KD_SCATTER_SCATTER:
    case KD_SCATTER_ADD:
    case KD_SCATTER_REDUCE: return kd_scatter(op, args, outs);
    case KD_SCATTER_INDEX_ADD:
    case KD_SCATTER_INDEX_COPY:
    case KD_SCATTER_INDEX_FILL: return kd_index_along(op, args, outs);
    case KD_SCATTER_INDEX_PUT: return kd_index_put(op, args, outs);
    default: return kd_error(KD_ERR_INTERNAL, "kd_cpu_scatter: unknown op '%s'", op->name);
  }
}
