/* copy.c - CPU fill_ and copy_. copy_ here is CPU <-> CPU only: the CUDA backend registers
 * its own copy_ at the CUDA key for copies with a CUDA side. */
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
