/* device_hooks.h - the device hooks of the non-pointwise CPU kernels (reductions, row ops,
 * random draws), after kd_cpu_device_ew (Note [Device kernels through the CPU kernels] in
 * ops/ew_codes.h): the CPU kernel does every device-independent step (checks with PyTorch's
 * messages, dtype rules, casts, output allocation on the input's device) and, for a tensor
 * that is not on the CPU, hands the prepared launch to the hook the device backend set
 * (src/cuda_bridge/bridge.c). NULL hooks: KD_ERR_NOT_SUPPORTED. */
#ifndef KD_CPU_DEVICE_HOOKS_H
#define KD_CPU_DEVICE_HOOKS_H

#include "cpu/cpu_loops.h"

/* A reduction of `in` (any strides, already in the compute dtype) over the dims flagged in
 * reduced[]: code a KD_REDUCE_* op code; arg: an index reduction (out values or NULL, out2
 * int64 indices; exactly one reduced dim). out/out2 are new contiguous tensors with the
 * output's sizes; out2 of varMean/stdMean is the mean. (reduce.c) */
typedef struct kd_dev_reduce {
  int code;
  bool arg;
  const kd_tensor *in;
  bool reduced[KD_MAX_DIMS];
  double p, correction;
  kd_tensor *out, *out2;
} kd_dev_reduce;
typedef kd_status (*kd_cpu_device_reduce_fn)(const kd_dev_reduce *r);
extern kd_cpu_device_reduce_fn kd_cpu_device_reduce;

/* Row ops on contiguous tensors seen as [outer, len, inner] (softmax.c, scan.c, norm.c); op is
 * a KD_DEV_ROWS_* value, the same numbering as the CUDA ABI's kd_cuda_rows. */
enum {
  KD_DEV_ROWS_SOFTMAX = 1, KD_DEV_ROWS_LOG_SOFTMAX, KD_DEV_ROWS_CUMSUM, KD_DEV_ROWS_CUMPROD,
  KD_DEV_ROWS_LAYER_NORM, KD_DEV_ROWS_LAYER_NORM_BACKWARD,
};
typedef struct kd_dev_rows {
  kd_device dev;
  int op;
  kd_dtype dtype;
  int64_t outer, len, inner;
  double eps;
  const void *x, *g, *w, *b;
  void *y, *mean, *rstd;
} kd_dev_rows;
typedef kd_status (*kd_cpu_device_rows_fn)(const kd_dev_rows *r);
extern kd_cpu_device_rows_fn kd_cpu_device_rows;

/* Random draws into a contiguous output of n elements (factory.c, dropout.c), Note [Random
 * number mapping] in core/random.h; kind a KD_DEV_RANDOM_* value. */
enum { KD_DEV_RANDOM_UNIFORM = 1, KD_DEV_RANDOM_NORMAL, KD_DEV_RANDOM_INT, KD_DEV_RANDOM_DROPOUT };
typedef struct kd_dev_random {
  kd_device dev;
  int kind;
  kd_dtype dtype;
  int64_t n;
  uint64_t seed, offset;
  int64_t low;
  uint64_t range;
  float keep_below;
  double scale;
  const void *x;
  void *y, *mask;
} kd_dev_random;
typedef kd_status (*kd_cpu_device_random_fn)(const kd_dev_random *r);
extern kd_cpu_device_random_fn kd_cpu_device_random;

#endif
