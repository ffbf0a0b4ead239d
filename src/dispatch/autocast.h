/* autocast.h - automatic mixed precision: the Autocast dispatch key (after PyTorch 1.13's
 * aten/src/ATen/autocast_mode.cpp). Inside an autocast scope (kd.autocast in lib/autocast.js) the
 * Autocast key is in the thread's included set; every op with a policy for the call's device type
 * (src/ops/autocast_policy.js -> kd_op_autocast_policy) runs kd_autocast_kernel first, which casts
 * its floating tensor arguments per the policy and redispatches below itself with Autocast
 * excluded (so the ops a composite calls are not cast a second time). Casts are ordinary `to`
 * calls, recorded by autograd, so gradients flow back to float32 parameters in float32.
 *
 * State is thread-local (as PyTorch's): enabled flag and lower-precision dtype per device type,
 * the nesting depth of scopes, and the cast cache: lower-precision copies of float32 leaf tensors
 * that require grad (weights), kept until the outermost scope exits (kd_autocast_clear_cache),
 * so a weight used twice is cast once. Unlike PyTorch's, an entry is dropped when its source was
 * changed in place (version counter) or when it was made without recording and is now needed
 * with recording. */
#ifndef KD_AUTOCAST_H
#define KD_AUTOCAST_H

#include <stdbool.h>
#include <stdint.h>

#include "dispatch/dispatch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Device types autocast distinguishes (the column order of kd_op_autocast_policy). */
typedef enum kd_autocast_dev { KD_AUTOCAST_DEV_CPU = 0, KD_AUTOCAST_DEV_CUDA = 1, KD_AUTOCAST_NDEV = 2 } kd_autocast_dev;

/* Cast policies (see src/ops/autocast_policy.js). */
typedef enum kd_autocast_policy {
  KD_AUTOCAST_NONE = 0,
  KD_AUTOCAST_LOWER,              /* lower_precision_fp */
  KD_AUTOCAST_FP32,               /* fp32 */
  KD_AUTOCAST_FP32_SET_OPT_DTYPE, /* fp32_set_opt_dtype / fp32_append_dtype */
  KD_AUTOCAST_PROMOTE,            /* promote */
  KD_AUTOCAST_BANNED,             /* an error */
  KD_AUTOCAST_NATIVE,             /* no cast, and autocast off for the ops it calls */
} kd_autocast_policy;

/* Generated (src/ops/ops_gen.c): the policy of each op per device type. */
extern const unsigned char kd_op_autocast_policy[KD_OP_COUNT][KD_AUTOCAST_NDEV];

typedef struct kd_autocast_state {
  bool enabled[KD_AUTOCAST_NDEV];
  kd_dtype dtype[KD_AUTOCAST_NDEV]; /* the lower-precision dtype: bfloat16 (CPU), float16 (CUDA) */
  bool cache_enabled;
  int nesting;
} kd_autocast_state;

kd_autocast_state kd_autocast_get(void);
/* Sets this thread's state; puts the Autocast key in (or out of) the included set. */
void kd_autocast_set(const kd_autocast_state *s);
/* Drops every cached cast of this thread. */
void kd_autocast_clear_cache(void);

/* Counters for tests: casts made by autocast, cast-cache hits, entries in the cache. */
typedef struct kd_autocast_stats { int64_t casts, cache_hits, cached; } kd_autocast_stats;
kd_autocast_stats kd_autocast_stats_get(void);

/* The dtype each of n floating tensor arguments (dtypes[i], on the scope's device) is cast to
 * under `policy` with lower-precision dtype `lower`; targets[i] == dtypes[i] when it stays. For
 * KD_AUTOCAST_FP32_SET_OPT_DTYPE the tensors stay and *set_dtype gets float32 when the op's dtype
 * should be set (first tensor eligible), else -1. The kernel and the policy query
 * (kd._internal.autocastPlan) share it. Non-floating dtypes and float64 never change. */
void kd_autocast_plan(int policy, kd_dtype lower, int n, const kd_dtype *dtypes, kd_dtype *targets, int *set_dtype);

/* The policy of op on device type dev (the generated table, unless a test overrode it). */
int kd_autocast_policy_of(int op, int dev);
/* Test hook: replaces op's policy on dev (-1 restores the table's). Only ops that have a policy
 * on some device type have an Autocast kernel, so only theirs can be changed. */
void kd_autocast_override(int op, int dev, int policy);

/* The Autocast kernel of every op with a policy. */
kd_status kd_autocast_kernel(const kd_op_info *op, kd_keyset ks, kd_value *args, kd_value *outs);

#ifdef __cplusplus
}
#endif
#endif
