/* median.c - CPU median: of all elements (a 0-d tensor) and along a dim (values, indices).
 * PyTorch's lower median (element (n - 1) / 2 of the sorted line); a line holding NaN gives
 * NaN and the index of its first NaN. When the median value occurs several times, the index is
 * that of its first occurrence in the line (and the value is read there), on every device:
 * PyTorch leaves the choice to each device's algorithm; kindling's CPU and CUDA kernels give
 * the same indices. Each line is copied with its indices into a buffer and
 * partially ordered by quickselect. THE iterator runs over the lines (operands given size 1
 * along dim), the dim's byte strides come through the context (as in scan.c); large inputs
 * split their lines across threads. float16/bfloat16 select in float32.
 * Device tensors: the lines are made contiguous (dim last) and handed to the device op
 * (KD_DEV_OP_MEDIAN, cuda/ops_sort.cu: a stable sort of each line, same NaN rule). */
#include <stdlib.h>

#include "cpu/device_op_ptrs.h"
#include "cpu/reduce.h"

/* Median of a device tensor: in's lines along dim (in->ndim == 0: one line of one element). */
static kd_status kd_median_device(kd_tensor *in, int dim, kd_tensor *values, kd_tensor *indices) {
  int64_t sz[KD_MAX_DIMS], stv[KD_MAX_DIMS];
  int q = 0;
  for (int d = 0; d < in->ndim; d++)
    if (d != dim) sz[q] = in->sizes[d], stv[q++] = in->strides[d];
  if (in->ndim) sz[q] = in->sizes[dim], stv[q++] = in->strides[dim];
  kd_tensor *v = NULL, *x = NULL;
  kd_status st = kd_tensor_new_view(in, sz, stv, in->ndim, in->offset, &v);
  if (st == KD_OK) st = kd_cpu_cast(v, in->dtype, true, &x);
  if (st == KD_OK) {
    kd_dev_op op;
    memset(&op, 0, sizeof op);
    op.kind = KD_DEV_OP_MEDIAN;
    op.dtype = in->dtype;
    op.i[1] = in->ndim ? in->sizes[dim] : 1;
    op.i[0] = kd_tensor_numel(x) / op.i[1];
    void *p[3] = {kd_dev_ptr(x), kd_dev_ptr(values), kd_dev_ptr(indices)};
    kd_dtype dts[3] = {in->dtype, in->dtype, KD_DTYPE_I64};
    st = kd_dev_op_run_ptrs(kd_tensor_device(in), &op, 3, p, dts);
  }
  if (v) kd_tensor_release(v);
  if (x) kd_tensor_release(x);
  return st;
}

typedef struct kd_median_ctx {
  int64_t len;
  int64_t sd[3];
  bool oom;
} kd_median_ctx;

#define KD_DEF_MEDIAN(SFX, DT, T, CT, LD, ST, MS, K, UT)                                      \
  typedef struct { CT v; int64_t i; } kd_mpair_##SFX;                                         \
  static void kd_mselect_##SFX(kd_mpair_##SFX *a, int64_t n, int64_t k) {                     \
    int64_t lo = 0, hi = n - 1;                                                               \
    while (hi > lo) {                                                                         \
      int64_t mid = lo + (hi - lo) / 2;                                                       \
      if (a[mid].v < a[lo].v) { kd_mpair_##SFX t = a[mid]; a[mid] = a[lo]; a[lo] = t; }        \
      if (a[hi].v < a[lo].v) { kd_mpair_##SFX t = a[hi]; a[hi] = a[lo]; a[lo] = t; }          \
      if (a[hi].v < a[mid].v) { kd_mpair_##SFX t = a[hi]; a[hi] = a[mid]; a[mid] = t; }        \
      CT pv = a[mid].v;                                                                       \
      int64_t i = lo, j = hi;                                                                 \
      while (i <= j) {                                                                        \
        while (a[i].v < pv) i++;                                                              \
        while (pv < a[j].v) j--;                                                              \
        if (i <= j) { kd_mpair_##SFX t = a[i]; a[i] = a[j]; a[j] = t; i++; j--; }             \
      }                                                                                       \
      if (k <= j) hi = j;                                                                     \
      else if (k >= i) lo = i;                                                                \
      else return;                                                                            \
    }                                                                                         \
  }                                                                                           \
  static void kd_median_loop_##SFX(void *ctx, char **data, const int64_t *strides, int64_t n) { \
    kd_median_ctx *c = (kd_median_ctx *)ctx;                                                  \
    kd_mpair_##SFX *buf = (kd_mpair_##SFX *)malloc(sizeof(kd_mpair_##SFX) * (size_t)c->len);  \
    if (!buf) { c->oom = true; return; }                                                      \
    for (int64_t l = 0; l < n; l++) {                                                         \
      char *pi = data[2] + l * strides[2];                                                    \
      int64_t nan_at = -1;                                                                    \
      for (int64_t k = 0; k < c->len; k++) {                                                  \
        CT x = LD(*(const T *)(pi + k * c->sd[2]));                                           \
        if (x != x && nan_at < 0) nan_at = k;                                                 \
        buf[k].v = x;                                                                         \
        buf[k].i = k;                                                                         \
      }                                                                                       \
      int64_t at = nan_at;                                                                    \
      if (nan_at < 0) { /* the first occurrence of the median (see the top of this file) */   \
        int64_t pos = (c->len - 1) / 2;                                                       \
        kd_mselect_##SFX(buf, c->len, pos);                                                   \
        at = buf[pos].i;                                                                      \
        for (int64_t k = 0; k < c->len; k++)                                                  \
          if (buf[k].v == buf[pos].v && buf[k].i < at) at = buf[k].i;                         \
      }                                                                                       \
      *(T *)(data[0] + l * strides[0]) = *(const T *)(pi + at * c->sd[2]);                    \
      *(int64_t *)(data[1] + l * strides[1]) = at;                                            \
    }                                                                                         \
    free(buf);                                                                                \
  }
KD_ROWS_FLOAT(KD_DEF_MEDIAN)
KD_ROWS_INT(KD_DEF_MEDIAN)
#define KD_MEDIAN_ENTRY(SFX, DT, ...) KD_LOOP_ENTRY(kd_median_loop_, SFX, DT)
static const kd_iter_loop_fn kd_median_loops[KD_DTYPE_COUNT] = {KD_ROWS_FLOAT(KD_MEDIAN_ENTRY) KD_ROWS_INT(KD_MEDIAN_ENTRY)};

KD_KERNEL(kd_cpu_median) {
  kd_tensor *self = args[0].v.t;
  bool with_dim = op->nargs > 1;
  if (self->dtype == KD_DTYPE_BOOL)
    return kd_error(KD_ERR_DTYPE, "\"%s\" not implemented for 'Bool'", with_dim ? "median_out" : "median_cpu");
  kd_tensor *in = NULL;
  int dim = 0;
  bool keepdim = false;
  int64_t osizes[KD_MAX_DIMS];
  int ond = 0;
  if (!with_dim) {
    int64_t numel = kd_tensor_numel(self);
    if (numel == 0) { /* PyTorch: NaN (floating) */
      kd_tensor *out;
      KD_TRY(kd_tensor_empty(NULL, 0, self->dtype, kd_tensor_device(self), &out));
      kd_tensor *nanv;
      kd_status st = kd_tensor_empty(NULL, 0, KD_DTYPE_F64, kd_device_cpu(), &nanv);
      if (st == KD_OK) {
        *(double *)kd_tensor_data(nanv) = kd_dtype_is_float(self->dtype) ? NAN : 0;
        st = kd_cpu_copy_into(out, nanv);
        kd_tensor_release(nanv);
      }
      if (st != KD_OK) { kd_tensor_release(out); return st; }
      kd_out_take(outs, 0, out);
      return KD_OK;
    }
    kd_tensor *c;
    KD_TRY(kd_cpu_cast(self, self->dtype, true, &c));
    int64_t one = 1;
    kd_status st = kd_tensor_new_view(c, &numel, &one, 1, c->offset, &in);
    kd_tensor_release(c);
    KD_TRY(st);
  } else {
    KD_TRY(kd_shape_wrap_dim(args[1].v.i, self->ndim, &dim));
    keepdim = args[2].kind == KD_VALUE_BOOL && args[2].v.b;
    if (self->ndim > 0 && self->sizes[dim] == 0)
      return kd_error(KD_ERR_INDEX, "median(): Expected reduction dim %d to have non-zero size.", dim);
    for (int d = 0; d < self->ndim; d++)
      if (d != dim || keepdim) osizes[ond++] = d == dim ? 1 : self->sizes[d];
    in = self;
    kd_tensor_retain(in);
  }
  /* values/indices laid out with in's sizes (1 along dim) */
  int64_t lsizes[KD_MAX_DIMS], lstrides[KD_MAX_DIMS];
  memcpy(lsizes, in->sizes, sizeof(int64_t) * (size_t)in->ndim);
  if (in->ndim) lsizes[dim] = 1;
  kd_shape_contiguous_strides(lsizes, in->ndim, lstrides);
  kd_tensor *values = NULL, *indices = NULL;
  kd_status st = kd_tensor_empty(osizes, ond, self->dtype, kd_tensor_device(self), &values);
  if (st == KD_OK) st = kd_tensor_empty(osizes, ond, KD_DTYPE_I64, kd_tensor_device(self), &indices);
  kd_median_ctx c = {in->ndim ? in->sizes[dim] : 1, {0, 0, in->ndim ? in->strides[dim] * (int64_t)kd_dtype_size(in->dtype) : 0}, false};
  if (st == KD_OK && kd_tensor_numel(in) > 0 && kd_tensor_device(in).type != KD_DEVICE_CPU) {
    st = kd_median_device(in, dim, values, indices);
  } else if (st == KD_OK && kd_tensor_numel(in) > 0) {
    kd_iter_operand ops[3] = {kd_iter_operand_of(values), kd_iter_operand_of(indices), kd_iter_operand_of(in)};
    for (int k = 0; k < 3; k++) ops[k].ndim = in->ndim, ops[k].sizes = lsizes;
    ops[0].strides = lstrides;
    ops[1].strides = lstrides;
    kd_iter it;
    st = kd_iter_build(&it, ops, 3, 2, 0);
    if (st == KD_OK && !kd_red_run_owned(&it, kd_median_loops[self->dtype], &c, c.len)) {
      it.flags |= KD_ITER_SERIAL;
      kd_iter_for_each(&it, kd_median_loops[self->dtype], &c);
    }
    if (st == KD_OK && c.oom) st = kd_error(KD_ERR_OOM, "out of host memory in median");
  }
  kd_tensor_release(in);
  if (st != KD_OK) {
    if (values) kd_tensor_release(values);
    if (indices) kd_tensor_release(indices);
    return st;
  }
  kd_out_take(outs, 0, values);
  if (with_dim) kd_out_take(outs, 1, indices);
  else kd_tensor_release(indices);
  return KD_OK;
}
