/* formula.h - the runtime of the backward formulas: what the C code generated from the op list's
 * `backward` expressions (tools/gen-backward.js -> src/ops/backward_gen.c) calls. Every value is a
 * kd_value; every tensor made while a formula runs is a temporary owned by the context and
 * released when the node's backward ends. After the first error every call is a no-op returning
 * none, and the node's backward returns that error. */
#ifndef KD_FORMULA_H
#define KD_FORMULA_H

#include "autograd/autograd.h"
#include "ops/ops_gen.h"

#define KD_BW_MAX_ARGS 16
#define KD_BW_MAX_OUTS KD_OP_MAX_OUTS

typedef struct kd_bw_ctx {
  kd_node *node;
  const kd_op_info *op;
  kd_tensor **grads;                 /* per output; NULL: no gradient (zeros when a formula reads it) */
  bool needs[KD_BW_MAX_ARGS];        /* which args' gradients are wanted */
  kd_value results[KD_BW_MAX_ARGS];  /* per arg: the gradient (tensor or tensor list), owned */
  kd_status st;
  kd_value *temps;                   /* temps_small until more are needed */
  int ntemps, captemps;
  kd_value temps_small[16];
  void **allocs;
  int nallocs, capallocs;
} kd_bw_ctx;

enum { KD_F_SHAPE, KD_F_DTYPE, KD_F_NDIM, KD_F_NUMEL, KD_F_DEVICE, KD_F_COL_MAJOR };

kd_value kd_f_grad(kd_bw_ctx *c, int i);
kd_value kd_f_out(kd_bw_ctx *c, int i);
kd_value kd_f_arg(kd_bw_ctx *c, int i);
kd_value kd_f_arg_meta(kd_bw_ctx *c, int i, int what);
kd_value kd_f_attr(kd_bw_ctx *c, kd_value v, int what);
/* The device the op ran on (of its outputs and their gradients): where factories in formulas put
 * their tensors when the formula names no device. */
kd_value kd_f_device(kd_bw_ctx *c);
kd_value kd_f_call(kd_bw_ctx *c, int op, int nargs, const kd_value *args);
kd_value kd_f_index(kd_bw_ctx *c, int op, int nargs, const kd_value *args, int out_index);
/* kd_f_index for a call that several gradients of one formula pick from: the first pick runs it
 * and keeps every output in *m (as temps of c), the later ones read them. */
typedef struct kd_f_memo {
  bool done;
  kd_value outs[KD_OP_MAX_OUTS];
} kd_f_memo;
kd_value kd_f_index_memo(kd_f_memo *m, kd_bw_ctx *c, int op, int nargs, const kd_value *args, int out_index);
kd_value kd_f_binop(kd_bw_ctx *c, int op, kd_value a, kd_value b);
kd_value kd_f_neg(kd_bw_ctx *c, kd_value a);
bool kd_f_truthy(kd_bw_ctx *c, kd_value v);
kd_value kd_f_list(kd_bw_ctx *c, int n, const kd_value *vals);
kd_value kd_f_elem(kd_bw_ctx *c, kd_value list, int64_t i);
void kd_f_set(kd_bw_ctx *c, int arg, kd_value v);

static inline kd_value kd_f_int(int64_t i) { return kd_value_int(i); }
static inline kd_value kd_f_float(double d) { return kd_value_double(d); }
static inline kd_value kd_f_bool(bool b) { return kd_value_bool(b); }
static inline kd_value kd_f_str(const char *s) { kd_value v; v.kind = KD_VALUE_STRING; v.v.str = s; return v; }

void kd_bw_ctx_init(kd_bw_ctx *c, kd_node *n, kd_tensor **grads);
void kd_bw_ctx_free(kd_bw_ctx *c);

#endif
