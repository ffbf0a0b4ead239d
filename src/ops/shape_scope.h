/* shape_scope.h - a growable list of intermediate tensors for composites that call many ops
 * (shape_composites.c, linalg_composites.c, linalg_einsum.c): every tensor a composite creates
 * goes into one scope, and the scope releases them all on every exit path. */
#ifndef KD_SHAPE_SCOPE_H
#define KD_SHAPE_SCOPE_H

#include <stdlib.h>

#include "ops/kernel.h"

typedef struct kd_scope {
  kd_tensor **t;
  int n, cap;
} kd_scope;

static inline void kd_scope_init(kd_scope *s) {
  s->t = NULL;
  s->n = s->cap = 0;
}
static inline void kd_scope_release(kd_scope *s) {
  for (int i = 0; i < s->n; i++) kd_tensor_release(s->t[i]);
  free(s->t);
  kd_scope_init(s);
}
/* Takes over t's reference (released with the scope). */
static inline kd_status kd_scope_keep(kd_scope *s, kd_tensor *t) {
  if (s->n == s->cap) {
    int cap = s->cap ? s->cap * 2 : 16;
    kd_tensor **p = (kd_tensor **)realloc(s->t, sizeof(kd_tensor *) * (size_t)cap);
    if (!p) {
      kd_tensor_release(t);
      return kd_error(KD_ERR_OOM, "out of host memory");
    }
    s->t = p;
    s->cap = cap;
  }
  s->t[s->n++] = t;
  return KD_OK;
}
/* *out = op(args), kept in the scope. */
static inline kd_status kd_scope_call(kd_scope *s, kd_op_id op, kd_value *args, kd_tensor **out) {
  KD_TRY(kd_call1(op, args, out));
  return kd_scope_keep(s, *out);
}
static inline kd_value kd_value_tlist(kd_tensor **ts, int n) {
  kd_value v;
  v.kind = KD_VALUE_TENSORLIST;
  v.v.tlist.data = ts;
  v.v.tlist.n = n;
  return v;
}
/* outs[0] = a tensor list holding new references of ts[0..n) (composites returning Tensor[]). */
static inline kd_status kd_scope_out_list(kd_tensor **ts, int n, kd_value *outs) {
  kd_tensor **list = (kd_tensor **)calloc(n > 0 ? (size_t)n : 1, sizeof(kd_tensor *));
  if (!list) return kd_error(KD_ERR_OOM, "out of host memory");
  for (int i = 0; i < n; i++) {
    kd_tensor_retain(ts[i]);
    list[i] = ts[i];
  }
  outs[0] = kd_value_tlist(list, n);
  return KD_OK;
}
/* The usual end of a composite: outs[0] = result (retained) when st is OK; releases the scope. */
static inline kd_status kd_scope_finish(kd_scope *s, kd_status st, kd_tensor *result, kd_value *outs) {
  if (st == KD_OK) kd_out_retain(outs, 0, result);
  kd_scope_release(s);
  return st;
}

#endif
