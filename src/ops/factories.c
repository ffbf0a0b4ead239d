/* factories.c - tensor creation that needs no per-device kernel of its own: empty (storage
 * from the device's allocator), zeros/ones/full (empty + fill_), eye (zeros + fill_ of a
 * strided diagonal view) and the *_like forms. Random and range factories are per-backend
 * kernels (src/cpu/). */
#include "ops/kernel.h"

static void kd_release_outs(kd_value *o) {
  for (int i = 0; i < KD_OP_MAX_OUTS; i++) kd_value_release(&o[i]);
}

KD_KERNEL(kd_factory_empty) {
  kd_dtype dtype = kd_arg_dtype_or(&args[1], KD_DTYPE_DEFAULT);
  kd_device device = kd_arg_device_or(&args[2], kd_device_cpu());
  kd_tensor *t = NULL;
  KD_TRY(kd_tensor_empty(args[0].v.ilist.data, args[0].v.ilist.n, dtype, device, &t));
  kd_out_take(outs, 0, t);
  return KD_OK;
}

/* t.fill_(value), dropping the returned reference. */
static kd_status kd_fill_inplace(kd_tensor *t, kd_scalar value) {
  kd_value a[2] = {kd_value_tensor(t), kd_value_scalar(value)};
  kd_value o[KD_OP_MAX_OUTS];
  KD_TRY(kd_call(KD_OP_fill_, a, o));
  kd_release_outs(o);
  return KD_OK;
}

KD_KERNEL(kd_factory_fill) {
  kd_scalar value;
  kd_value *dtype_arg = &args[op->dtype_arg], *device_arg = &args[op->device_arg];
  kd_dtype dtype = KD_DTYPE_DEFAULT;
  switch (op->code) {
    case KD_FILL_ZEROS: value = kd_scalar_i(0); break;
    case KD_FILL_ONES: value = kd_scalar_i(1); break;
    default: value = args[1].v.s; dtype = kd_scalar_default_dtype(value); break;
  }
  kd_value a[3] = {args[0], kd_value_dtype(kd_arg_dtype_or(dtype_arg, dtype)), *device_arg};
  kd_tensor *t = NULL;
  KD_TRY(kd_call1(KD_OP_empty, a, &t));
  kd_status st = kd_fill_inplace(t, value);
  if (st != KD_OK) { kd_tensor_release(t); return st; }
  kd_out_take(outs, 0, t);
  return KD_OK;
}

KD_KERNEL(kd_factory_eye) {
  int64_t n = args[0].v.i, m = args[1].kind == KD_VALUE_INT ? args[1].v.i : n;
  if (n < 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "n must be greater or equal to 0, got %lld", (long long)n);
  if (m < 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "m must be greater or equal to 0, got %lld", (long long)m);
  int64_t size[2] = {n, m};
  kd_value a[3] = {kd_value_intlist(size, 2), args[2], args[3]};
  kd_tensor *t = NULL;
  KD_TRY(kd_call1(KD_OP_zeros, a, &t));
  int64_t k = n < m ? n : m;
  if (k > 0) {
    int64_t dsize[1] = {k}, dstride[1] = {m + 1};
    kd_value d[4] = {kd_value_tensor(t), kd_value_intlist(dsize, 1), kd_value_intlist(dstride, 1), kd_value_int(0)};
    kd_tensor *diag;
    kd_status st = kd_call1(KD_OP_asStrided, d, &diag);
    if (st == KD_OK) {
      st = kd_fill_inplace(diag, kd_scalar_i(1));
      kd_tensor_release(diag);
    }
    if (st != KD_OK) { kd_tensor_release(t); return st; }
  }
  kd_out_take(outs, 0, t);
  return KD_OK;
}

KD_KERNEL(kd_composite_like) {
  kd_tensor *self = args[0].v.t;
  kd_value size = kd_value_intlist(self->sizes, self->ndim);
  kd_value dtype = kd_value_dtype(kd_arg_dtype_or(&args[op->dtype_arg], self->dtype));
  kd_value device = kd_value_device(kd_arg_device_or(&args[op->device_arg], kd_tensor_device(self)));
  kd_value a[5];
  kd_op_id target;
  switch (op->code) {
    case KD_LIKE_EMPTY: target = KD_OP_empty; break;
    case KD_LIKE_ZEROS: target = KD_OP_zeros; break;
    case KD_LIKE_ONES: target = KD_OP_ones; break;
    case KD_LIKE_RAND: target = KD_OP_rand; break;
    case KD_LIKE_RANDN: target = KD_OP_randn; break;
    case KD_LIKE_FULL:
      a[0] = size; a[1] = args[1]; a[2] = dtype; a[3] = device;
      target = KD_OP_full;
      goto call;
    case KD_LIKE_RANDINT: /* (self, high) is PyTorch's randint_like(input, high): low = 0 */
      a[0] = args[2].kind == KD_VALUE_NONE ? kd_value_int(0) : args[1];
      a[1] = args[2].kind == KD_VALUE_NONE ? args[1] : args[2];
      a[2] = size; a[3] = dtype; a[4] = device;
      target = KD_OP_randint;
      goto call;
    default: return kd_error(KD_ERR_INTERNAL, "unknown *_like op");
  }
  a[0] = size; a[1] = dtype; a[2] = device;
call:;
  kd_tensor *t = NULL;
  KD_TRY(kd_call1(target, a, &t));
  kd_out_take(outs, 0, t);
  return KD_OK;
}
