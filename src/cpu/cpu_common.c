/* cpu_common.c - helpers shared by the CPU kernels: THE dtype conversion loop (used by copy_,
 * by every kernel that casts an operand to its compute dtype, and for in-place results
 * written back into self), PyTorch dtype names, in-place checks, and the result list of
 * unique / uniqueConsecutive. See cpu_loops.h. */
#include "cpu/cpu_loops.h"

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

/* ---- same-dtype copies: by element size ---- */
#define KD_DEF_COPY_BYTES(N, U)                                                               \
  static void kd_copy_loop_##N(void *ctx, char **data, const int64_t *strides, int64_t n) {   \
    char *pd = data[0], *ps = data[1];                                                        \
    const int64_t sd = strides[0], ss = strides[1];                                           \
    if (sd == N && ss == N) {                                                                 \
      memcpy(pd, ps, (size_t)n * N);                                                          \
    } else if (sd == N && ss == 0) {                                                          \
      U v = *(const U *)ps, *d = (U *)pd;                                                     \
      for (int64_t i = 0; i < n; i++) d[i] = v;                                               \
    } else if (sd == N && ss == -N) { /* flip of the inner dim: a reversed copy */            \
      U *d = (U *)pd;                                                                         \
      const U *s = (const U *)ps;                                                             \
      for (int64_t i = 0; i < n; i++) d[i] = s[-i];                                           \
    } else {                                                                                  \
      for (int64_t i = 0; i < n; i++) *(U *)(pd + i * sd) = *(const U *)(ps + i * ss);        \
    }                                                                                         \
  }
KD_DEF_COPY_BYTES(1, uint8_t)
KD_DEF_COPY_BYTES(2, uint16_t)
KD_DEF_COPY_BYTES(4, uint32_t)
KD_DEF_COPY_BYTES(8, uint64_t)

static kd_iter_loop_fn kd_copy_loop_for_size(size_t n) {
  switch (n) {
    case 1: return kd_copy_loop_1;
    case 2: return kd_copy_loop_2;
    case 4: return kd_copy_loop_4;
    default: return kd_copy_loop_8;
  }
}

/* ---- conversions: one loop per destination dtype, switching on the source dtype per run.
 * The source rows are the rows of KD_ROWS_ALL with the destination row prepended: the
 * preprocessor cannot expand KD_ROWS_ALL inside itself, so they are listed again here. */
#define KD_CONV_SRC_ROWS(X, ...)                                                              \
  X(__VA_ARGS__, KD_DTYPE_F32, float, float, KD_LD_ID, F)                                     \
  X(__VA_ARGS__, KD_DTYPE_F64, double, double, KD_LD_ID, F)                                   \
  X(__VA_ARGS__, KD_DTYPE_F16, uint16_t, float, kd_f16_to_f32, F)                             \
  X(__VA_ARGS__, KD_DTYPE_BF16, uint16_t, float, kd_bf16_to_f32, F)                           \
  X(__VA_ARGS__, KD_DTYPE_I8, int8_t, int8_t, KD_LD_ID, I)                                    \
  X(__VA_ARGS__, KD_DTYPE_U8, uint8_t, uint8_t, KD_LD_ID, I)                                  \
  X(__VA_ARGS__, KD_DTYPE_I16, int16_t, int16_t, KD_LD_ID, I)                                 \
  X(__VA_ARGS__, KD_DTYPE_I32, int32_t, int32_t, KD_LD_ID, I)                                 \
  X(__VA_ARGS__, KD_DTYPE_I64, int64_t, int64_t, KD_LD_ID, I)                                 \
  X(__VA_ARGS__, KD_DTYPE_BOOL, uint8_t, bool, KD_LD_BOOL, B)

#define KD_CONV_CASE(DT_, DCT, DST, DK, SDT, S_T, SCT, SLD, SK)                               \
  case SDT: KD_LOOP1(DT_, S_T, SCT, SLD, KD_ST_ID, KD_CAST(DK, SK, DT_, DCT, DST, x)); break;

#define KD_DEF_CONVERT(SFX, DT, T, CT, LD, ST, MS, K, UT)                                     \
  static void kd_convert_loop_##SFX(void *ctx, char **data, const int64_t *strides, int64_t n) { \
    switch (*(const kd_dtype *)ctx) {                                                         \
      KD_CONV_SRC_ROWS(KD_CONV_CASE, T, CT, ST, K)                                            \
      default: break;                                                                         \
    }                                                                                         \
  }
KD_ROWS_ALL(KD_DEF_CONVERT)

#define KD_CONVERT_ENTRY(SFX, DT, ...) KD_LOOP_ENTRY(kd_convert_loop_, SFX, DT)
static const kd_iter_loop_fn kd_convert_loops[KD_DTYPE_COUNT] = {KD_ROWS_ALL(KD_CONVERT_ENTRY)};

kd_status kd_cpu_copy_into(kd_tensor *dst, const kd_tensor *src) {
  if (kd_tensor_device(dst).type != KD_DEVICE_CPU || kd_tensor_device(src).type != KD_DEVICE_CPU) {
    /* a device tensor (a CPU kernel run for a device, see kd_cpu_iter_run): the device's copy_ */
    kd_value args[2] = {kd_value_tensor(dst), kd_value_tensor((kd_tensor *)src)};
    kd_value outs[KD_OP_MAX_OUTS];
    for (int i = 0; i < KD_OP_MAX_OUTS; i++) outs[i] = kd_value_none();
    kd_device d = kd_tensor_device(dst).type != KD_DEVICE_CPU ? kd_tensor_device(dst) : kd_tensor_device(src);
    kd_status st = kd_redispatch(&kd_ops[KD_OP_copy_], KD_KEYSET(kd_device_key(d)), args, outs);
    for (int i = 0; i < KD_OP_MAX_OUTS; i++) kd_value_release(&outs[i]);
    return st;
  }
  kd_iter_operand ops[2] = {kd_iter_operand_of(dst), kd_iter_operand_of(src)};
  kd_iter it;
  KD_TRY(kd_iter_build(&it, ops, 2, 1, 0));
  kd_dtype sdt = src->dtype;
  if (dst->dtype == src->dtype) kd_iter_for_each(&it, kd_copy_loop_for_size(kd_dtype_size(sdt)), NULL);
  else kd_iter_for_each(&it, kd_convert_loops[dst->dtype], &sdt);
  return KD_OK;
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

/* ---- device launches ---- */

kd_cpu_device_ew_fn kd_cpu_device_ew = NULL;
kd_cpu_device_mm_fn kd_cpu_device_mm = NULL;

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
