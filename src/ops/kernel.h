/* kernel.h - what every kernel file includes: the dispatcher types, the op codes, and small
 * helpers to read arguments and set outputs. Kernel signature (all kernels):
 *   kd_status fn(const kd_op_info *op, kd_keyset ks, kd_value *args, kd_value *outs);
 * args[i] follows the op's schema in src/ops/oplist/ with defaults already filled in
 * (a left-out optional is KD_VALUE_NONE). Put new references in outs[]. For in-place ops
 * (op->flags & KD_OP_FLAG_INPLACE) write into args[0] and return it retained in outs[0]. */
#ifndef KD_KERNEL_H
#define KD_KERNEL_H

#include "core/dtype.h"
#include "core/iter.h"
#include "core/shape.h"
#include "core/status.h"
#include "core/tensor.h"
#include "dispatch/dispatch.h"
#include "ops/op_codes.gen.h"

#define KD_KERNEL(name) kd_status name(const kd_op_info *op, kd_keyset ks, kd_value *args, kd_value *outs)

static inline bool kd_op_is_inplace(const kd_op_info *op) { return (op->flags & KD_OP_FLAG_INPLACE) != 0; }

/* Sets outs[0] to a new reference of t (retaining it). */
static inline void kd_out_retain(kd_value *outs, int i, kd_tensor *t) {
  kd_tensor_retain(t);
  outs[i] = kd_value_tensor(t);
}
/* Sets outs[i] to t, taking over the caller's reference. */
static inline void kd_out_take(kd_value *outs, int i, kd_tensor *t) { outs[i] = kd_value_tensor(t); }

/* The dtype argument if given, else `fallback`. */
static inline kd_dtype kd_arg_dtype_or(const kd_value *v, kd_dtype fallback) {
  return v->kind == KD_VALUE_DTYPE ? v->v.dtype : fallback;
}
/* The device argument if given, else `fallback`. */
static inline kd_device kd_arg_device_or(const kd_value *v, kd_device fallback) {
  return v->kind == KD_VALUE_DEVICE ? v->v.device : fallback;
}

#endif
