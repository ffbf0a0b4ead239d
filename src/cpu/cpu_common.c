/* cpu_common.c - helpers shared by the CPU kernels: casting an operand to a compute dtype (with
 * THE dtype conversion loop, kd_cpu_copy_into in copy.c), PyTorch dtype names, in-place checks,
 * the result list of unique / uniqueConsecutive, and the device hooks. See cpu_loops.h. */
#include "cpu/cpu_loops.h"
#include "cpu/device_hooks.h"

#include <stdlib.h>

const char *kd_cpu_torch_name(kd_dtype t) {
  static const char *const names[KD_DTYPE_COUNT] = {
      [KD_DTYPE_F32] = "Float", [KD_DTYPE_F64] = "Double", [KD_DTYPE_F16] = "Half",
      [KD_DTYPE_BF16] = "BFloat16", [KD_DTYPE_I8] = "Char", [KD_DTYPE_U8] = "Byte",
      [KD_DTYPE_I16] = "Short", [KD_DTYPE_I32] = "Int", [KD_DTYPE_I64] = "Long",
      [KD_DTYPE_BOOL] = "Bool",
  };
  return (unsigned)t < KD_DTYPE_COUNT ? names[t] : "Undefined";
}

kd_status kd_cpu_check_no_internal_overlap(const kd_tensor *t) {
  for (int d = 0; d < t->ndim; d++)
    if (t->sizes[d] > 1 && t->strides[d] == 0)
      return kd_error(KD_ERR_INVALID_ARGUMENT,
                      "unsupported operation: more than one element of the written-to tensor refers to a single "
                      "memory location. Please clone() the tensor before performing the operation.");
  return KD_OK;
}

kd_status kd_cpu_check_inplace_cast(kd_dtype result, kd_dtype self) {
  if (!kd_can_cast(result, self))
    return kd_error(KD_ERR_DTYPE, "result type %s can't be cast to the desired output type %s",
                    kd_cpu_torch_name(result), kd_cpu_torch_name(self));
  return KD_OK;
}

kd_status kd_cpu_scalar_check_fits(kd_scalar s, kd_dtype dt) {
  static const char *const cname[KD_DTYPE_COUNT] = {
      [KD_DTYPE_F32] = "float", [KD_DTYPE_F64] = "double", [KD_DTYPE_F16] = "at::Half",
      [KD_DTYPE_BF16] = "at::BFloat16", [KD_DTYPE_I8] = "int8_t", [KD_DTYPE_U8] = "uint8_t",
      [KD_DTYPE_I16] = "int16_t", [KD_DTYPE_I32] = "int", [KD_DTYPE_I64] = "int64_t", [KD_DTYPE_BOOL] = "bool",
  };
  static const double fmax_[KD_DTYPE_COUNT] = {
      [KD_DTYPE_F32] = 3.4028234663852886e38, [KD_DTYPE_F64] = 1.7976931348623157e308,
      [KD_DTYPE_F16] = 65504.0, [KD_DTYPE_BF16] = 3.3895313892515355e38,
  };
  static const int64_t imin[KD_DTYPE_COUNT] = {[KD_DTYPE_I8] = INT8_MIN, [KD_DTYPE_U8] = 0, [KD_DTYPE_I16] = INT16_MIN,
                                               [KD_DTYPE_I32] = INT32_MIN, [KD_DTYPE_I64] = INT64_MIN};
  static const int64_t imax[KD_DTYPE_COUNT] = {[KD_DTYPE_I8] = INT8_MAX, [KD_DTYPE_U8] = UINT8_MAX, [KD_DTYPE_I16] = INT16_MAX,
                                               [KD_DTYPE_I32] = INT32_MAX, [KD_DTYPE_I64] = INT64_MAX};
  bool over = false;
  if (s.kind == KD_KIND_BOOL || dt == KD_DTYPE_BOOL) return KD_OK;
  if (s.kind == KD_KIND_INT) {
    int64_t v = s.v.i;
    if (kd_dtype_is_float(dt)) over = (double)v > fmax_[dt] || (double)v < -fmax_[dt];
    else if (dt == KD_DTYPE_U8) over = v > 255 || v < -255; /* negative values wrap, as in PyTorch */
    else over = v < imin[dt] || v > imax[dt];
  } else {
    double f = s.v.f;
    if (kd_dtype_is_float(dt)) over = !isinf(f) && f == f && (f > fmax_[dt] || f < -fmax_[dt]);
    else over = f != f || f < (double)imin[dt] || f > (double)imax[dt];
  }
  if (over) return kd_error(KD_ERR_INVALID_ARGUMENT, "value cannot be converted to type %s without overflow", cname[dt]);
  return KD_OK;
}

/* Whether two tensors' byte ranges in one storage may intersect. */
bool kd_cpu_may_overlap(const kd_tensor *a, const kd_tensor *b) {
  if (a->storage != b->storage) return false;
  int64_t na = kd_tensor_numel(a), nb = kd_tensor_numel(b);
  if (na == 0 || nb == 0) return false;
  int64_t lo[2], hi[2];
  const kd_tensor *t[2] = {a, b};
  for (int k = 0; k < 2; k++) {
    int64_t es = (int64_t)kd_dtype_size(t[k]->dtype);
    int64_t l = t[k]->offset * es, h = l;
    for (int d = 0; d < t[k]->ndim; d++) {
      int64_t ext = (t[k]->sizes[d] - 1) * t[k]->strides[d] * es;
      if (ext < 0) l += ext;
      else h += ext;
    }
    lo[k] = l;
    hi[k] = h + es; /* exclusive */
  }
  return lo[0] < hi[1] && lo[1] < hi[0];
}

kd_status kd_cpu_cast(kd_tensor *t, kd_dtype dt, bool contiguous, kd_tensor **out) {
  if (t->dtype == dt && (!contiguous || kd_tensor_is_contiguous(t))) {
    kd_tensor_retain(t);
    *out = t;
    return KD_OK;
  }
  kd_tensor *r;
  KD_TRY(kd_tensor_empty(t->sizes, t->ndim, dt, kd_tensor_device(t), &r));
  kd_status st = kd_cpu_copy_into(r, t);
  if (st != KD_OK) { kd_tensor_release(r); return st; }
  *out = r;
  return KD_OK;
}

kd_status kd_cpu_operand_as(kd_tensor *t, kd_dtype dt, kd_tensor **tmp, kd_tensor **use) {
  *tmp = NULL;
  if (t->dtype == dt) {
    *use = t;
    return KD_OK;
  }
  KD_TRY(kd_cpu_cast(t, dt, false, tmp));
  *use = *tmp;
  return KD_OK;
}

/* ---- device launches ---- */

kd_cpu_device_ew_fn kd_cpu_device_ew = NULL;
kd_cpu_device_mm_fn kd_cpu_device_mm = NULL;
/* the reduction and row hooks (device_hooks.h), here rather than in reduce.c and softmax.c,
 * which are compiled once per CPU level (Note [CPU capability dispatch]) */
kd_cpu_device_reduce_fn kd_cpu_device_reduce = NULL;
kd_cpu_device_rows_fn kd_cpu_device_rows = NULL;

kd_status kd_cpu_iter_run(kd_device dev, const kd_iter *it, const kd_iter_operand *ops, kd_iter_loop_fn loop,
                          void *ctx, const kd_ew_desc *d) {
  if (dev.type == KD_DEVICE_CPU) {
    kd_iter_for_each(it, loop, ctx);
    return KD_OK;
  }
  if (!kd_cpu_device_ew) return kd_error(KD_ERR_NOT_SUPPORTED, "no pointwise kernels are registered for this device");
  return kd_cpu_device_ew(dev, d, it, ops);
}

kd_status kd_cpu_item(const kd_tensor *t, kd_scalar *out) {
  kd_device dev = kd_tensor_device(t);
  if (dev.type == KD_DEVICE_CPU) {
    *out = kd_scalar_load(t->dtype, kd_tensor_data(t));
    return KD_OK;
  }
  const kd_device_backend *be;
  KD_TRY(kd_device_backend_get(dev.type, &be));
  uint64_t buf = 0;
  KD_TRY(be->memcpy(&buf, kd_device_cpu(), kd_tensor_data(t), dev, kd_dtype_size(t->dtype)));
  *out = kd_scalar_load(t->dtype, &buf);
  return KD_OK;
}

kd_status kd_cpu_finish_out(kd_status st, bool inplace, kd_tensor *self, kd_tensor *out, kd_value *outs) {
  if (st == KD_OK && inplace && out != self) {
    st = kd_cpu_copy_into(self, out);
    kd_tensor_release(out);
    out = self;
    kd_tensor_retain(out);
  }
  if (st != KD_OK) {
    kd_tensor_release(out);
    return st;
  }
  kd_out_take(outs, 0, out);
  return KD_OK;
}

kd_status kd_cpu_unique_result(kd_status st, kd_tensor *values, kd_tensor *inverse, kd_tensor *counts, bool want_inv,
                               bool want_cnt, kd_value *outs) {
  kd_tensor **list = NULL;
  if (st == KD_OK) {
    list = malloc(sizeof(kd_tensor *) * 3);
    if (!list) st = kd_error(KD_ERR_OOM, "out of host memory in unique");
  }
  if (st != KD_OK) {
    if (values) kd_tensor_release(values);
    if (inverse) kd_tensor_release(inverse);
    if (counts) kd_tensor_release(counts);
    return st;
  }
  int n = 0;
  list[n++] = values;
  if (want_inv) list[n++] = inverse; else kd_tensor_release(inverse);
  if (want_cnt) list[n++] = counts; else kd_tensor_release(counts);
  outs[0].kind = KD_VALUE_TENSORLIST;
  outs[0].v.tlist.data = list;
  outs[0].v.tlist.n = n;
  return KD_OK;
}
