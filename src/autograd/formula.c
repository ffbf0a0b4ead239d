/* formula.c - the runtime of the generated backward formulas (see formula.h): argument coercion by
 * the callee's schema, scalar operands of arithmetic, temporaries, and saved-value access. */
#include "autograd/formula.h"

#include <stdlib.h>
#include <string.h>

void kd_bw_ctx_init(kd_bw_ctx *c, kd_node *n, kd_tensor **grads) {
  memset(c, 0, sizeof *c);
  c->node = n;
  c->op = &kd_ops[n->op];
  c->grads = grads;
  c->temps = c->temps_small;
  c->captemps = (int)(sizeof c->temps_small / sizeof c->temps_small[0]);
}

void kd_bw_ctx_free(kd_bw_ctx *c) {
  for (int i = 0; i < c->ntemps; i++) kd_value_release(&c->temps[i]);
  for (int i = 0; i < c->nallocs; i++) free(c->allocs[i]);
  for (int i = 0; i < KD_BW_MAX_ARGS; i++) kd_value_release(&c->results[i]);
  if (c->temps != c->temps_small) free(c->temps);
  free(c->allocs);
}

static bool kd_f_ok(kd_bw_ctx *c) { return c->st == KD_OK; }

static kd_value kd_f_fail(kd_bw_ctx *c, kd_status st) {
  if (c->st == KD_OK) c->st = st;
  return kd_value_none();
}

/* Takes ownership of v (a tensor or tensor list) until the node's backward ends. */
static kd_value kd_f_temp(kd_bw_ctx *c, kd_value v) {
  if (c->ntemps == c->captemps) {
    int cap = c->captemps * 2;
    kd_value *p = (kd_value *)malloc(sizeof(kd_value) * cap);
    if (p) {
      memcpy(p, c->temps, sizeof(kd_value) * c->ntemps);
      if (c->temps != c->temps_small) free(c->temps);
    } else {
      kd_value_release(&v);
      return kd_f_fail(c, kd_error(KD_ERR_OOM, "out of memory in backward"));
    }
    c->temps = p;
    c->captemps = cap;
  }
  c->temps[c->ntemps++] = v;
  return v;
}

static void *kd_f_alloc(kd_bw_ctx *c, size_t n) {
  if (c->nallocs == c->capallocs) {
    int cap = c->capallocs ? c->capallocs * 2 : 8;
    void **p = (void **)realloc(c->allocs, sizeof(void *) * cap);
    if (!p) return NULL;
    c->allocs = p;
    c->capallocs = cap;
  }
  void *m = malloc(n ? n : 1);
  if (m) c->allocs[c->nallocs++] = m;
  return m;
}

static kd_value kd_f_tensor(kd_bw_ctx *c, kd_tensor *t) { return kd_f_temp(c, kd_value_tensor(t)); }

kd_value kd_f_grad(kd_bw_ctx *c, int i) {
  if (!kd_f_ok(c)) return kd_value_none();
  if (i >= c->node->n_outputs) return kd_f_fail(c, kd_error(KD_ERR_INTERNAL, "formula reads grad%d of a %d-output op", i, c->node->n_outputs));
  if (c->grads[i]) return kd_value_tensor(c->grads[i]);
  const kd_out_meta *m = &c->node->outs[i];
  kd_value a[4] = {kd_value_intlist(m->sizes, m->ndim), kd_value_dtype(m->dtype), kd_value_device(m->device)};
  kd_tensor *z = NULL;
  kd_status st = kd_call1(KD_OP_zeros, a, &z);
  if (st != KD_OK) return kd_f_fail(c, st);
  c->grads[i] = z; /* owned by the engine's buffer from now on */
  return kd_value_tensor(z);
}

kd_value kd_f_out(kd_bw_ctx *c, int i) {
  if (!kd_f_ok(c)) return kd_value_none();
  kd_tensor *t = NULL;
  kd_status st = kd_saved_unpack(c->node, &c->node->saved_outs[i], &t);
  if (st != KD_OK) return kd_f_fail(c, st);
  return kd_f_tensor(c, t);
}

kd_value kd_f_arg(kd_bw_ctx *c, int i) {
  if (!kd_f_ok(c)) return kd_value_none();
  kd_node *n = c->node;
  bool saved = (kd_backward_table[n->op]->save_args & (1u << i)) != 0;
  if (n->saved_args[i].t || (n->released && n->edge_count[i] > 0 && saved && n->args[i].kind != KD_VALUE_TENSORLIST)) {
    kd_tensor *t = NULL;
    kd_status st = kd_saved_unpack(n, &n->saved_args[i], &t);
    if (st != KD_OK) return kd_f_fail(c, st);
    return kd_f_tensor(c, t);
  }
  return n->args[i];
}

static kd_value kd_f_meta_of(kd_bw_ctx *c, const int64_t *sizes, int ndim, kd_dtype dt, kd_device dev, bool col_major,
                             int what) {
  switch (what) {
    case KD_F_COL_MAJOR: return kd_value_bool(col_major);
    case KD_F_SHAPE: return kd_value_intlist(sizes, ndim);
    case KD_F_DTYPE: return kd_value_dtype(dt);
    case KD_F_DEVICE: return kd_value_device(dev);
    case KD_F_NDIM: return kd_value_int(ndim);
    case KD_F_NUMEL: {
      int64_t k = 1;
      for (int d = 0; d < ndim; d++) k *= sizes[d];
      return kd_value_int(k);
    }
  }
  return kd_f_fail(c, kd_error(KD_ERR_INTERNAL, "unknown tensor attribute"));
}

kd_value kd_f_arg_meta(kd_bw_ctx *c, int i, int what) {
  if (!kd_f_ok(c)) return kd_value_none();
  kd_node *n = c->node;
  if (n->edge_count[i] < 1) {
    if (n->args[i].kind == KD_VALUE_TENSOR) return kd_f_attr(c, n->args[i], what);
    return kd_f_fail(c, kd_error(KD_ERR_INTERNAL, "formula of '%s' reads metadata of a non-tensor arg", c->op->name));
  }
  const kd_edge *e = &n->edges[n->edge_start[i]];
  return kd_f_meta_of(c, e->sizes, e->ndim, e->dtype, e->device, e->col_major, what);
}

kd_value kd_f_attr(kd_bw_ctx *c, kd_value v, int what) {
  if (!kd_f_ok(c)) return kd_value_none();
  if (v.kind != KD_VALUE_TENSOR) return kd_f_fail(c, kd_error(KD_ERR_INTERNAL, "attribute of a non-tensor in a formula"));
  kd_tensor *t = v.v.t;
  return kd_f_meta_of(c, t->sizes, t->ndim, t->dtype, kd_tensor_device(t), kd_tensor_col_major(t), what);
}

kd_value kd_f_device(kd_bw_ctx *c) {
  if (!kd_f_ok(c)) return kd_value_none();
  if (c->node->n_outputs < 1)
    return kd_f_fail(c, kd_error(KD_ERR_INTERNAL, "formula of '%s' asks the device of an op with no outputs", c->op->name));
  return kd_value_device(c->node->outs[0].device);
}

static bool kd_f_is_number(const kd_value *v) {
  return v->kind == KD_VALUE_INT || v->kind == KD_VALUE_DOUBLE || v->kind == KD_VALUE_SCALAR || v->kind == KD_VALUE_BOOL;
}

static kd_scalar kd_f_to_scalar(const kd_value *v) {
  switch (v->kind) {
    case KD_VALUE_INT: return kd_scalar_i(v->v.i);
    case KD_VALUE_DOUBLE: return kd_scalar_f(v->v.d);
    case KD_VALUE_BOOL: return kd_scalar_b(v->v.b);
    default: return v->v.s;
  }
}

static double kd_f_to_double(const kd_value *v) {
  kd_scalar s = kd_f_to_scalar(v);
  return s.kind == KD_KIND_FLOAT ? s.v.f : s.kind == KD_KIND_INT ? (double)s.v.i : (double)s.v.b;
}

/* Converts v to what the callee's schema expects (numbers between int/float/Scalar, an int to
 * an int list). Returns false (with c->st set) when it cannot. */
static bool kd_f_coerce(kd_bw_ctx *c, const kd_op_info *op, int i, kd_value *v) {
  kd_arg_type t = op->args[i].type;
  if (v->kind == KD_VALUE_NONE) return true;
  switch (t) {
    case KD_ARG_TENSOR:
      if (v->kind == KD_VALUE_TENSOR) return true;
      break;
    case KD_ARG_TENSOR_OPT:
      if (v->kind == KD_VALUE_TENSOR) return true;
      break;
    case KD_ARG_TENSOR_OR_SCALAR:
      if (v->kind == KD_VALUE_TENSOR) return true;
      if (kd_f_is_number(v)) { *v = kd_value_scalar(kd_f_to_scalar(v)); return true; }
      break;
    case KD_ARG_SCALAR: case KD_ARG_SCALAR_OPT:
      if (kd_f_is_number(v)) { *v = kd_value_scalar(kd_f_to_scalar(v)); return true; }
      break;
    case KD_ARG_INT: case KD_ARG_INT_OPT:
      if (v->kind == KD_VALUE_INT) return true;
      if (v->kind == KD_VALUE_SCALAR && v->v.s.kind == KD_KIND_INT) { *v = kd_value_int(v->v.s.v.i); return true; }
      if (v->kind == KD_VALUE_BOOL) { *v = kd_value_int(v->v.b); return true; }
      break;
    case KD_ARG_INT_OR_INTLIST:
      if (v->kind == KD_VALUE_INT || v->kind == KD_VALUE_INTLIST) return true;
      if (v->kind == KD_VALUE_SCALAR && v->v.s.kind == KD_KIND_INT) { *v = kd_value_int(v->v.s.v.i); return true; }
      break;
    case KD_ARG_INTLIST: case KD_ARG_INTLIST_OPT:
      if (v->kind == KD_VALUE_INTLIST) return true;
      if (v->kind == KD_VALUE_INT || (v->kind == KD_VALUE_SCALAR && v->v.s.kind == KD_KIND_INT)) {
        int64_t *p = (int64_t *)kd_f_alloc(c, sizeof(int64_t));
        if (!p) { kd_f_fail(c, kd_error(KD_ERR_OOM, "out of memory")); return false; }
        *p = v->kind == KD_VALUE_INT ? v->v.i : v->v.s.v.i;
        *v = kd_value_intlist(p, 1);
        return true;
      }
      break;
    case KD_ARG_DOUBLE: case KD_ARG_DOUBLE_OPT:
      if (kd_f_is_number(v)) { *v = kd_value_double(kd_f_to_double(v)); return true; }
      break;
    case KD_ARG_BOOL: case KD_ARG_BOOL_OPT:
      if (v->kind == KD_VALUE_BOOL) return true;
      if (v->kind == KD_VALUE_SCALAR && v->v.s.kind == KD_KIND_BOOL) { *v = kd_value_bool(v->v.s.v.b); return true; }
      break;
    case KD_ARG_DTYPE_OPT: if (v->kind == KD_VALUE_DTYPE) return true; break;
    case KD_ARG_DEVICE_OPT: if (v->kind == KD_VALUE_DEVICE) return true; break;
    case KD_ARG_STRING: case KD_ARG_STRING_OPT: if (v->kind == KD_VALUE_STRING) return true; break;
    case KD_ARG_TENSORLIST: case KD_ARG_TENSORLIST_OPT: if (v->kind == KD_VALUE_TENSORLIST) return true; break;
    case KD_ARG_DOUBLELIST_OPT: if (v->kind == KD_VALUE_DOUBLELIST) return true; break;
  }
  kd_f_fail(c, kd_error(KD_ERR_INTERNAL, "backward formula passes a bad value (kind %d) as argument '%s' of '%s'",
                        (int)v->kind, op->args[i].name, op->name));
  return false;
}

/* Calls op with the formula's arguments coerced to its schema; false (c failed) on an error. */
static bool kd_f_run(kd_bw_ctx *c, int op_id, int nargs, const kd_value *args, kd_value *outs) {
  const kd_op_info *op = &kd_ops[op_id];
  kd_value a[KD_BW_MAX_ARGS + 8];
  for (int i = 0; i < nargs; i++) {
    a[i] = args[i];
    if (!kd_f_coerce(c, op, i, &a[i])) return false;
  }
  kd_status st = kd_call((kd_op_id)op_id, a, outs);
  if (st != KD_OK) kd_f_fail(c, st);
  return st == KD_OK;
}

kd_value kd_f_index(kd_bw_ctx *c, int op_id, int nargs, const kd_value *args, int out_index) {
  if (!kd_f_ok(c)) return kd_value_none();
  const kd_op_info *op = &kd_ops[op_id];
  kd_value outs[KD_OP_MAX_OUTS];
  if (!kd_f_run(c, op_id, nargs, args, outs)) return kd_value_none();
  kd_value r = kd_value_none();
  for (int i = 0; i < KD_OP_MAX_OUTS; i++) {
    if (i == out_index) r = outs[i];
    else kd_value_release(&outs[i]);
  }
  if (r.kind == KD_VALUE_NONE) return kd_f_fail(c, kd_error(KD_ERR_INTERNAL, "'%s' returned no output %d", op->name, out_index));
  return kd_f_temp(c, r);
}

kd_value kd_f_index_memo(kd_f_memo *m, kd_bw_ctx *c, int op_id, int nargs, const kd_value *args, int out_index) {
  if (!kd_f_ok(c)) return kd_value_none();
  if (!m->done) {
    kd_value outs[KD_OP_MAX_OUTS];
    if (!kd_f_run(c, op_id, nargs, args, outs)) return kd_value_none();
    for (int i = 0; i < KD_OP_MAX_OUTS; i++)
      m->outs[i] = outs[i].kind == KD_VALUE_NONE ? outs[i] : kd_f_temp(c, outs[i]);
    m->done = true;
    if (!kd_f_ok(c)) return kd_value_none();
  }
  if (out_index < 0 || out_index >= KD_OP_MAX_OUTS || m->outs[out_index].kind == KD_VALUE_NONE)
    return kd_f_fail(c, kd_error(KD_ERR_INTERNAL, "'%s' returned no output %d", kd_ops[op_id].name, out_index));
  return m->outs[out_index];
}

kd_value kd_f_call(kd_bw_ctx *c, int op_id, int nargs, const kd_value *args) {
  return kd_f_index(c, op_id, nargs, args, 0);
}

/* A 0-d tensor holding number v, with like's dtype and device (for `1 - t`). */
static kd_value kd_f_scalar_tensor(kd_bw_ctx *c, const kd_value *v, const kd_tensor *like) {
  kd_value a[4] = {kd_value_intlist(NULL, 0), kd_value_scalar(kd_f_to_scalar(v)), kd_value_dtype(like->dtype),
                   kd_value_device(kd_tensor_device(like))};
  kd_tensor *t = NULL;
  kd_status st = kd_call1(KD_OP_full, a, &t);
  if (st != KD_OK) return kd_f_fail(c, st);
  return kd_f_tensor(c, t);
}

kd_value kd_f_binop(kd_bw_ctx *c, int op, kd_value a, kd_value b) {
  if (!kd_f_ok(c)) return kd_value_none();
  if (a.kind == KD_VALUE_TENSOR || b.kind == KD_VALUE_TENSOR) {
    if (a.kind != KD_VALUE_TENSOR) {
      if (!kd_f_is_number(&a)) return kd_f_fail(c, kd_error(KD_ERR_INTERNAL, "bad operand in a backward formula"));
      a = kd_f_scalar_tensor(c, &a, b.v.t);
      if (!kd_f_ok(c)) return kd_value_none();
    }
    kd_value args[3] = {a, b, kd_value_none()};
    return kd_f_call(c, op, kd_ops[op].nargs, args);
  }
  if ((op == KD_OP_eq || op == KD_OP_ne) && (a.kind == KD_VALUE_STRING || b.kind == KD_VALUE_STRING)) {
    bool same = a.kind == b.kind && a.v.str && b.v.str && strcmp(a.v.str, b.v.str) == 0;
    return kd_value_bool(op == KD_OP_eq ? same : !same);
  }
  if (!kd_f_is_number(&a) || !kd_f_is_number(&b))
    return kd_f_fail(c, kd_error(KD_ERR_INTERNAL, "bad operands in a backward formula of '%s'", c->op->name));
  kd_scalar sa = kd_f_to_scalar(&a), sb = kd_f_to_scalar(&b);
  bool ints = sa.kind != KD_KIND_FLOAT && sb.kind != KD_KIND_FLOAT;
  double x = kd_f_to_double(&a), y = kd_f_to_double(&b);
  int64_t xi = ints ? (sa.kind == KD_KIND_INT ? sa.v.i : sa.v.b) : 0, yi = ints ? (sb.kind == KD_KIND_INT ? sb.v.i : sb.v.b) : 0;
  switch (op) {
    case KD_OP_add: return ints ? kd_value_int(xi + yi) : kd_value_double(x + y);
    case KD_OP_sub: return ints ? kd_value_int(xi - yi) : kd_value_double(x - y);
    case KD_OP_mul: return ints ? kd_value_int(xi * yi) : kd_value_double(x * y);
    case KD_OP_div: return kd_value_double(x / y);
    case KD_OP_lt: return kd_value_bool(x < y);
    case KD_OP_le: return kd_value_bool(x <= y);
    case KD_OP_gt: return kd_value_bool(x > y);
    case KD_OP_ge: return kd_value_bool(x >= y);
    case KD_OP_eq: return kd_value_bool(x == y);
    case KD_OP_ne: return kd_value_bool(x != y);
  }
  return kd_f_fail(c, kd_error(KD_ERR_INTERNAL, "bad operator in a backward formula"));
}

kd_value kd_f_neg(kd_bw_ctx *c, kd_value a) {
  if (!kd_f_ok(c)) return kd_value_none();
  if (a.kind == KD_VALUE_TENSOR) {
    kd_value args[1] = {a};
    return kd_f_call(c, KD_OP_neg, 1, args);
  }
  if (a.kind == KD_VALUE_INT) return kd_value_int(-a.v.i);
  if (kd_f_is_number(&a)) return kd_value_double(-kd_f_to_double(&a));
  return kd_f_fail(c, kd_error(KD_ERR_INTERNAL, "bad operand of unary minus in a backward formula"));
}

bool kd_f_truthy(kd_bw_ctx *c, kd_value v) {
  switch (v.kind) {
    case KD_VALUE_NONE: return false;
    case KD_VALUE_BOOL: return v.v.b;
    case KD_VALUE_INT: return v.v.i != 0;
    case KD_VALUE_DOUBLE: return v.v.d != 0;
    case KD_VALUE_SCALAR: return kd_f_to_double(&v) != 0;
    case KD_VALUE_STRING: return v.v.str && *v.v.str;
    case KD_VALUE_INTLIST: return v.v.ilist.n > 0;
    default: (void)c; return true;
  }
}

kd_value kd_f_list(kd_bw_ctx *c, int n, const kd_value *vals) {
  if (!kd_f_ok(c)) return kd_value_none();
  bool tensors = n > 0 && vals[0].kind == KD_VALUE_TENSOR;
  if (tensors) {
    kd_tensor **list = (kd_tensor **)malloc(sizeof(kd_tensor *) * n);
    if (!list) return kd_f_fail(c, kd_error(KD_ERR_OOM, "out of memory"));
    for (int i = 0; i < n; i++) {
      if (vals[i].kind != KD_VALUE_TENSOR) {
        for (int j = 0; j < i; j++) kd_tensor_release(list[j]);
        free(list);
        return kd_f_fail(c, kd_error(KD_ERR_INTERNAL, "mixed list in a backward formula"));
      }
      list[i] = vals[i].v.t;
      kd_tensor_retain(list[i]);
    }
    kd_value v;
    v.kind = KD_VALUE_TENSORLIST;
    v.v.tlist.data = list;
    v.v.tlist.n = n;
    return kd_f_temp(c, v);
  }
  int64_t *p = (int64_t *)kd_f_alloc(c, sizeof(int64_t) * (n ? n : 1));
  if (!p) return kd_f_fail(c, kd_error(KD_ERR_OOM, "out of memory"));
  for (int i = 0; i < n; i++) {
    kd_value v = vals[i];
    if (v.kind == KD_VALUE_INT) p[i] = v.v.i;
    else if (v.kind == KD_VALUE_SCALAR && v.v.s.kind == KD_KIND_INT) p[i] = v.v.s.v.i;
    else return kd_f_fail(c, kd_error(KD_ERR_INTERNAL, "a list in a backward formula must hold integers or tensors"));
  }
  return kd_value_intlist(p, n);
}

kd_value kd_f_elem(kd_bw_ctx *c, kd_value list, int64_t i) {
  if (!kd_f_ok(c)) return kd_value_none();
  if (list.kind == KD_VALUE_TENSORLIST && i >= 0 && i < list.v.tlist.n) return kd_value_tensor(list.v.tlist.data[i]);
  if (list.kind == KD_VALUE_INTLIST && i >= 0 && i < list.v.ilist.n) return kd_value_int(list.v.ilist.data[i]);
  return kd_f_fail(c, kd_error(KD_ERR_INTERNAL, "bad list index in a backward formula"));
}

void kd_f_set(kd_bw_ctx *c, int arg, kd_value v) {
  if (!kd_f_ok(c)) return;
  if (v.kind == KD_VALUE_TENSOR) {
    kd_tensor_retain(v.v.t);
    c->results[arg] = v;
  } else if (v.kind == KD_VALUE_TENSORLIST) {
    kd_tensor **list = (kd_tensor **)malloc(sizeof(kd_tensor *) * (v.v.tlist.n ? v.v.tlist.n : 1));
    if (!list) { kd_f_fail(c, kd_error(KD_ERR_OOM, "out of memory")); return; }
    for (int i = 0; i < v.v.tlist.n; i++) {
      list[i] = v.v.tlist.data[i];
      if (list[i]) kd_tensor_retain(list[i]);
    }
    c->results[arg].kind = KD_VALUE_TENSORLIST;
    c->results[arg].v.tlist.data = list;
    c->results[arg].v.tlist.n = v.v.tlist.n;
  } else if (v.kind != KD_VALUE_NONE) {
    kd_f_fail(c, kd_error(KD_ERR_INTERNAL, "the backward formula of '%s' for argument %d is not a tensor", c->op->name, arg));
  }
}
