/* attention.h - what the scaledDotProductAttention composite (src/ops/nn_composites.c) takes
 * from the fused attention kernels of attention.c. */
#ifndef KD_CPU_ATTENTION_H
#define KD_CPU_ATTENTION_H

#include "core/tensor.h"

/* PyTorch 2's checks of scaled_dot_product_attention (same dtype and device for query, key and
 * value, at least 2 dims each, a bool mask or one of query's dtype, no mask with isCausal) and
 * the shapes: query [..., L, E], key [..., S, E], value [..., S, Ev], batch dims and the mask
 * broadcasting. */
kd_status kd_sdpa_check(const kd_tensor *q, const kd_tensor *k, const kd_tensor *v, const kd_tensor *mask, bool causal);

/* The largest head dim (E and Ev) the device kernels take (cuda/ops_attention.cu); larger ones
 * run the math composition there. */
#define KD_SDPA_DEVICE_MAX_HEAD_DIM 256

#endif
