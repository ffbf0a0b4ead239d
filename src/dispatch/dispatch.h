/* dispatch.h - the dispatcher. An op call computes a keyset
 *   ks = (OR of the tensor arguments' keysets | TLS included) & ~TLS excluded
 * (for factories: the key of the `device` argument), then runs kernel[op][highest key];
 * a NULL slot falls through to the next key. Functionality kernels (Autograd, Autocast) do
 * their job and call kd_redispatch() with the keys below their own. The op table and the
 * kernel table are generated from src/ops/oplist/ (src/ops/ops_gen.c).
 * KINDLING_DISPATCH_TRACE=1 prints every call's path through the keys on stderr. */
#ifndef KD_DISPATCH_H
#define KD_DISPATCH_H

#include "dispatch/keys.h"
#include "dispatch/value.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kd_arg_type {
  KD_ARG_TENSOR,          /* Tensor                          */
  KD_ARG_TENSOR_OPT,      /* Tensor?                         */
  KD_ARG_TENSOR_OR_SCALAR,/* Tensor|Scalar: a JS number is a scalar operand (a "wrapped number") */
  KD_ARG_SCALAR,          /* Scalar                          */
  KD_ARG_SCALAR_OPT,      /* Scalar?                         */
  KD_ARG_INT,             /* int                             */
  KD_ARG_INT_OPT,         /* int?                            */
  KD_ARG_INT_OR_INTLIST,  /* int|int[]                       */
  KD_ARG_INTLIST,         /* int[] (a single int is [int])   */
  KD_ARG_INTLIST_OPT,     /* int[]?                          */
  KD_ARG_DOUBLE,          /* float                           */
  KD_ARG_BOOL,            /* bool                            */
  KD_ARG_DTYPE_OPT,       /* dtype?                          */
  KD_ARG_DEVICE_OPT,      /* device?                         */
  KD_ARG_STRING_OPT,      /* str?                            */
  KD_ARG_TENSORLIST,      /* Tensor[]                        */
  KD_ARG_DOUBLE_OPT,      /* float?                          */
  KD_ARG_BOOL_OPT,        /* bool?                           */
  KD_ARG_STRING,          /* str (usually with a default: str reduction='mean') */
  KD_ARG_TENSORLIST_OPT,  /* Tensor?[]: a list whose elements may be null (NULL in tlist.data) */
  KD_ARG_DOUBLELIST_OPT,  /* float[]? (a single number is [number]) */
} kd_arg_type;

typedef struct kd_arg_schema {
  const char *name;
  kd_arg_type type;
  bool has_default;
  kd_value def; /* used when the argument is left out */
} kd_arg_schema;

enum {
  KD_OP_FLAG_INPLACE = 1u << 0,      /* mutates and returns args[0]; bumps its version     */
  KD_OP_FLAG_VIEW = 1u << 1,         /* outputs alias args[0]'s storage                    */
  KD_OP_FLAG_FACTORY = 1u << 2,      /* no tensor inputs: dispatch on the device argument  */
  KD_OP_FLAG_CROSS_DEVICE = 1u << 3, /* tensor args may live on different devices (copy_)  */
  KD_OP_FLAG_NONDIFF = 1u << 4,      /* never differentiable (comparisons, argmax, ...)    */
  KD_OP_FLAG_CPU_SCALARS = 1u << 5,  /* 0-dim CPU tensors join other devices' (binary ops) */
};

typedef struct kd_op_info {
  const char *name;         /* "add", "add_", "max.dim" */
  int id;
  int code;                 /* selects the operation inside a shared kernel (kd_cpu_binary) */
  unsigned flags;
  int nargs;
  const kd_arg_schema *args;
  int nouts;                /* -1: a tensor list */
  int device_arg;           /* index of the `device` argument, -1 if none */
  int dtype_arg;            /* index of the `dtype` argument, -1 if none */
} kd_op_info;

typedef kd_status (*kd_kernel_fn)(const kd_op_info *op, kd_keyset ks, kd_value *args, kd_value *outs);

#include "ops/ops_gen.h" /* kd_op_id enum, KD_OP_COUNT */

extern const kd_op_info kd_ops[KD_OP_COUNT];
extern kd_kernel_fn kd_kernel_table[KD_OP_COUNT][KD_KEY_COUNT];

/* Calls an op: `args` has kd_ops[op].nargs entries (NONE where left out: defaults are
 * filled in here), `outs` room for the outputs (KD_OP_MAX_OUTS). */
#define KD_OP_MAX_OUTS 4
kd_status kd_call(kd_op_id op, kd_value *args, kd_value *outs);
/* Continues a call below a functionality key: runs the highest key of `ks`. */
kd_status kd_redispatch(const kd_op_info *op, kd_keyset ks, kd_value *args, kd_value *outs);

/* Convenience wrappers for kernels that call other ops. Each returns a new reference. */
kd_status kd_call1(kd_op_id op, kd_value *args, kd_tensor **out);

/* Thread-local include/exclude sets (no_grad, inference mode, autocast, "below autograd"). */
typedef struct kd_dispatch_tls { kd_keyset included, excluded; } kd_dispatch_tls;
kd_dispatch_tls kd_dispatch_tls_get(void);
void kd_dispatch_tls_set(kd_dispatch_tls tls);
/* This thread's state itself, for a caller that saves, changes and restores it around a call:
 * one thread-local lookup instead of three. */
kd_dispatch_tls *kd_dispatch_tls_here(void);

/* Registers a kernel at runtime (the CUDA bridge fills CUDA slots when the library loads). */
void kd_dispatch_register(kd_op_id op, kd_key key, kd_kernel_fn fn);
/* While set, called after every kernel run at the CUDA key with its arguments and (NULL when it
 * failed) its outputs: the CUDA bridge keeps what a graph capture uses alive (Note [Storages a
 * CUDA graph keeps] in src/cuda_bridge/graph_keep.c). NULL (the default) costs one load. */
typedef void (*kd_capture_note_fn)(const kd_op_info *op, const kd_value *args, const kd_value *outs);
void kd_dispatch_set_capture_note(kd_capture_note_fn fn);
/* Reads KINDLING_DISPATCH_TRACE; called once at load. */
void kd_dispatch_init(void);

#ifdef __cplusplus
}
#endif
#endif
