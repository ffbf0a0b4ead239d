/* attention.h - the fused attention's plan (shapes, strides, outputs: Note [Fused attention] in
 * attention.c, which checks and lays it out) that the CPU loops of attention_loops.c run, and
 * what the scaledDotProductAttention composite (src/ops/nn_composites.c) takes from them. */
#ifndef KD_CPU_ATTENTION_H
#define KD_CPU_ATTENTION_H

#include <stdbool.h>
#include <stdint.h>

#include "core/status.h"
#include "core/tensor.h"

/* PyTorch 2's checks of scaled_dot_product_attention (same dtype and device for query, key and
 * value, at least 2 dims each, a bool mask or one of query's dtype, no mask with isCausal) and
 * the shapes: query [..., L, E], key [..., S, E], value [..., S, Ev], batch dims and the mask
 * broadcasting. */
kd_status kd_sdpa_check(const kd_tensor *q, const kd_tensor *k, const kd_tensor *v, const kd_tensor *mask, bool causal);

/* The largest head dim (E and Ev) the device kernels take (cuda/ops_attention.cu); larger ones
 * run the math composition there. */
#define KD_SDPA_DEVICE_MAX_HEAD_DIM 256

/* The CPU loops' blocks: query rows per task, keys per step. */
enum { KD_ATTN_BQ = 64, KD_ATTN_BK = 128 };
/* Operands, in the device launch's order too. */
enum { A_Q, A_K, A_V, A_M, A_G, A_O, A_LSE, A_NOPS };

typedef struct kd_attn_plan {
  kd_dtype dtype;
  int nb;                         /* batch dims */
  int64_t bshape[KD_MAX_DIMS];
  int64_t nbatch, L, S, E, Ev;
  const char *data[A_NOPS];       /* NULL: absent */
  int64_t bst[A_NOPS][KD_MAX_DIMS]; /* batch strides, elements (0 where broadcast) */
  int64_t rs[A_NOPS], cs[A_NOPS]; /* row and column strides, elements */
  int mask_kind;                  /* 0 none, 1 bool, 2 float */
  bool causal;
  double scale;
  double dropout;                 /* p; weights kept with probability 1 - p, scaled by 1 / (1 - p) */
  uint64_t seed, offset;          /* the dropout's Philox stream (Note [Fused attention]) */
  char *out, *lse, *dq, *dk, *dv; /* contiguous outputs */
} kd_attn_plan;

/* The operand's element offset for batch n. */
static inline int64_t kd_attn_offset(const kd_attn_plan *p, int k, int64_t n) {
  int64_t off = 0;
  for (int d = p->nb - 1; d >= 0; d--) {
    int64_t sz = p->bshape[d];
    off += (n % sz) * p->bst[k][d];
    n /= sz;
  }
  return off;
}

/* Runs the plan's CPU loops (attention_loops.c, compiled per CPU level): the forward, parallel over
 * (batch, query block), or the backward, parallel over the batch. */
kd_status kd_attn_run_cpu(kd_attn_plan *p, bool backward);

#endif
