/* copy_composites.c - conversions built on empty + copy_: to (dtype/device), clone,
 * contiguous, zero_. Device-agnostic: copy_ is dispatched to the right backend (a copy that
 * involves a CUDA tensor runs the CUDA kernel). */
#include "ops/kernel.h"

/* A new contiguous tensor of self's shape with the given dtype/device, holding self's values. */
static kd_status kd_copy_to_new(kd_tensor *self, kd_dtype dtype, kd_device device, kd_tensor **out) {
  kd_value a[3] = {kd_value_intlist(self->sizes, self->ndim), kd_value_dtype(dtype), kd_value_device(device)};
  kd_tensor *t = NULL;
  KD_TRY(kd_call1(KD_OP_empty, a, &t));
  kd_value c[2] = {kd_value_tensor(t), kd_value_tensor(self)};
  kd_value o[KD_OP_MAX_OUTS];
  kd_status st = kd_call(KD_OP_copy_, c, o);
  if (st != KD_OK) { kd_tensor_release(t); return st; }
  for (int i = 0; i < KD_OP_MAX_OUTS; i++) kd_value_release(&o[i]);
  *out = t;
  return KD_OK;
}

KD_KERNEL(kd_composite_to) {
  kd_tensor *self = args[0].v.t;
  kd_dtype dtype = kd_arg_dtype_or(&args[1], self->dtype);
  kd_device device = kd_arg_device_or(&args[2], kd_tensor_device(self));
  bool copy = args[3].kind == KD_VALUE_BOOL && args[3].v.b;
  if (!copy && dtype == self->dtype && kd_device_eq(device, kd_tensor_device(self))) {
    kd_out_retain(outs, 0, self);
    return KD_OK;
  }
  kd_tensor *t = NULL;
  KD_TRY(kd_copy_to_new(self, dtype, device, &t));
  kd_out_take(outs, 0, t);
  return KD_OK;
}

KD_KERNEL(kd_composite_clone) {
  kd_tensor *self = args[0].v.t;
  kd_tensor *t = NULL;
  KD_TRY(kd_copy_to_new(self, self->dtype, kd_tensor_device(self), &t));
  kd_out_take(outs, 0, t);
  return KD_OK;
}

KD_KERNEL(kd_composite_contiguous) {
  kd_tensor *self = args[0].v.t;
  if (kd_tensor_is_contiguous(self)) {
    kd_out_retain(outs, 0, self);
    return KD_OK;
  }
  kd_tensor *t = NULL;
  KD_TRY(kd_copy_to_new(self, self->dtype, kd_tensor_device(self), &t));
  kd_out_take(outs, 0, t);
  return KD_OK;
}

KD_KERNEL(kd_composite_zero) {
  kd_value a[2] = {args[0], kd_value_scalar(kd_scalar_i(0))};
  kd_value o[KD_OP_MAX_OUTS];
  KD_TRY(kd_call(KD_OP_fill_, a, o));
  for (int i = 0; i < KD_OP_MAX_OUTS; i++) kd_value_release(&o[i]);
  kd_out_retain(outs, 0, args[0].v.t);
  return KD_OK;
}
