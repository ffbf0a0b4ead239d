/* copy.c - CPU fill_ and copy_, and THE dtype conversion loop (kd_cpu_copy_into: used by copy_,
 * by every kernel that casts an operand to its compute dtype, and for in-place results written
 * back into self). copy_ here is CPU <-> CPU only: the CUDA backend registers its own copy_ at
 * the CUDA key for copies with a CUDA side. */
#include "cpu/cpu_loops.h"

/* ---- fill_: by element size; the value is converted to self's dtype once ---- */
#define KD_DEF_FILL(N, U)                                                                     \
  static void kd_fill_loop_##N(void *ctx, char **data, const int64_t *strides, int64_t n) {   \
    const U v = *(const U *)ctx;                                                              \
    char *p = data[0];                                                                        \
    const int64_t s = strides[0];                                                             \
    if (s == N) {                                                                             \
      U *d = (U *)p;                                                                          \
      for (int64_t i = 0; i < n; i++) d[i] = v;                                               \
    } else {                                                                                  \
      for (int64_t i = 0; i < n; i++) *(U *)(p + i * s) = v;                                  \
    }                                                                                         \
  }
KD_DEF_FILL(1, uint8_t)
KD_DEF_FILL(2, uint16_t)
KD_DEF_FILL(4, uint32_t)
KD_DEF_FILL(8, uint64_t)

KD_KERNEL(kd_cpu_fill) {
  kd_tensor *self = args[0].v.t;
  if (args[1].kind != KD_VALUE_SCALAR) return kd_error(KD_ERR_TYPE, "fill_(): value must be a number or a boolean");
  KD_TRY(kd_cpu_scalar_check_fits(args[1].v.s, self->dtype));
  uint64_t buf = 0;
  kd_scalar_store(args[1].v.s, self->dtype, &buf);
  kd_iter_operand o = kd_iter_operand_of(self);
  kd_iter it;
  KD_TRY(kd_iter_build(&it, &o, 1, 1, 0));
  kd_iter_loop_fn loop;
  switch (kd_dtype_size(self->dtype)) {
    case 1: loop = kd_fill_loop_1; break;
    case 2: loop = kd_fill_loop_2; break;
    case 4: loop = kd_fill_loop_4; break;
    default: loop = kd_fill_loop_8; break;
  }
  kd_iter_for_each(&it, loop, &buf);
  kd_out_retain(outs, 0, self);
  return KD_OK;
}

KD_KERNEL(kd_cpu_copy) {
  kd_tensor *self = args[0].v.t, *src = args[1].v.t;
  if (kd_tensor_device(self).type != KD_DEVICE_CPU || kd_tensor_device(src).type != KD_DEVICE_CPU)
    return kd_error(KD_ERR_NOT_SUPPORTED, "copy_(): copies to or from a CUDA tensor need the CUDA backend");
  /* PyTorch's messages: a broadcast failure first, then a source larger than self */
  int64_t bshape[KD_MAX_DIMS];
  int bnd;
  KD_TRY(kd_shape_broadcast(self->sizes, self->ndim, src->sizes, src->ndim, bshape, &bnd));
  KD_TRY(kd_cpu_check_no_internal_overlap(self));
  bool same_view = self->storage == src->storage && self->offset == src->offset && self->dtype == src->dtype &&
                   self->ndim == src->ndim &&
                   memcmp(self->sizes, src->sizes, sizeof(int64_t) * self->ndim) == 0 &&
                   memcmp(self->strides, src->strides, sizeof(int64_t) * self->ndim) == 0;
  if (!same_view) {
    if (kd_cpu_may_overlap(self, src)) { /* read everything before writing anything */
      kd_tensor *tmp;
      KD_TRY(kd_tensor_empty(src->sizes, src->ndim, src->dtype, kd_tensor_device(src), &tmp));
      kd_status st = kd_cpu_copy_into(tmp, src);
      if (st == KD_OK) st = kd_cpu_copy_into(self, tmp);
      kd_tensor_release(tmp);
      KD_TRY(st);
    } else {
      KD_TRY(kd_cpu_copy_into(self, src));
    }
  }
  kd_out_retain(outs, 0, self);
  return KD_OK;
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
