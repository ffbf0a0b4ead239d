/* record.c - the Autograd dispatch key: grad mode, and the one kernel registered at
 * KD_KEY_AUTOGRAD for every op with a backward formula. It runs the op below autograd and, when
 * grad mode is on and a tensor argument requires grad, records a node (see autograd.h). Ops with
 * neither a formula nor a composite decomposition (and not marked nondiff) get a kernel that
 * refuses inputs that require grad, so a missing derivative is an error, never a silent zero. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "autograd/autograd.h"
#include "ops/kernel.h"
#include "ops/ops_gen.h"

static _Thread_local bool kd_grad_off;   /* grad mode is on by default */
static _Thread_local bool kd_inference;
static _Thread_local bool kd_anomaly;
_Thread_local char *(*kd_anomaly_trace_hook)(void);

bool kd_grad_enabled(void) { return !kd_grad_off; }
void kd_set_grad_enabled(bool on) { kd_grad_off = !on; }
bool kd_inference_mode(void) { return kd_inference; }
void kd_set_anomaly_enabled(bool on) { kd_anomaly = on; }
bool kd_anomaly_enabled(void) { return kd_anomaly; }

void kd_set_inference_mode(bool on) {
  kd_inference = on;
  kd_dispatch_tls tls = kd_dispatch_tls_get();
  if (on) tls.excluded |= KD_KEYSET(KD_KEY_AUTOGRAD);
  else tls.excluded &= (kd_keyset)~KD_KEYSET(KD_KEY_AUTOGRAD);
  kd_dispatch_tls_set(tls);
  kd_tensor_set_default_keys_mask(on ? (kd_keyset)~KD_KEYSET(KD_KEY_AUTOGRAD) : KD_KEYSET_ALL);
}

/* Runs the op with the keys below Autograd and Autograd excluded in TLS (kernels that call other
 * ops must not record them a second time). */
static kd_status kd_run_below(const kd_op_info *op, kd_keyset ks, kd_value *args, kd_value *outs) {
  kd_dispatch_tls *here = kd_dispatch_tls_here(), saved = *here;
  here->excluded |= KD_KEYSET(KD_KEY_AUTOGRAD);
  kd_status st = kd_redispatch(op, ks & kd_keyset_below(KD_KEY_AUTOGRAD), args, outs);
  *here = saved;
  return st;
}

/* Which tensor arguments require grad; false when none does (or grad mode is off). */
static bool kd_any_requires_grad(const kd_op_info *op, const kd_value *args) {
  if (kd_grad_off) return false;
  for (int i = 0; i < op->nargs; i++) {
    const kd_value *a = &args[i];
    if (a->kind == KD_VALUE_TENSOR) {
      if (kd_requires_grad(a->v.t)) return true;
    } else if (a->kind == KD_VALUE_TENSORLIST) {
      for (int j = 0; j < a->v.tlist.n; j++)
        if (a->v.tlist.data[j] && kd_requires_grad(a->v.tlist.data[j])) return true;
    }
  }
  return false;
}

kd_status kd_autograd_run_below(const kd_op_info *op, kd_keyset ks, kd_value *args, kd_value *outs) {
  return kd_run_below(op, ks, args, outs);
}
bool kd_autograd_any_requires_grad(const kd_op_info *op, const kd_value *args) { return kd_any_requires_grad(op, args); }

static kd_status kd_not_differentiable(const kd_op_info *op, const char *arg) {
  if (arg)
    return kd_error(KD_ERR_NOT_SUPPORTED, "the derivative for '%s' w.r.t. '%s' is not implemented", op->name, arg);
  return kd_error(KD_ERR_NOT_SUPPORTED, "the derivative for '%s' is not implemented", op->name);
}

/* Deep copy of a non-tensor argument, owned by the node. */
static kd_status kd_copy_arg(const kd_value *a, kd_value *out) {
  *out = *a;
  if (a->kind == KD_VALUE_INTLIST) {
    int64_t *p = (int64_t *)malloc(sizeof(int64_t) * (a->v.ilist.n ? a->v.ilist.n : 1));
    if (!p) return kd_error(KD_ERR_OOM, "out of memory");
    if (a->v.ilist.n) memcpy(p, a->v.ilist.data, sizeof(int64_t) * a->v.ilist.n);
    out->v.ilist.data = p;
  } else if (a->kind == KD_VALUE_DOUBLELIST) {
    double *p = (double *)malloc(sizeof(double) * (a->v.dlist.n ? a->v.dlist.n : 1));
    if (!p) return kd_error(KD_ERR_OOM, "out of memory");
    if (a->v.dlist.n) memcpy(p, a->v.dlist.data, sizeof(double) * a->v.dlist.n);
    out->v.dlist.data = p;
  } else if (a->kind == KD_VALUE_STRING) {
    char *p = strdup(a->v.str ? a->v.str : "");
    if (!p) return kd_error(KD_ERR_OOM, "out of memory");
    out->v.str = p;
  } else if (a->kind == KD_VALUE_TENSOR || a->kind == KD_VALUE_TENSORLIST) {
    *out = kd_value_none();
  }
  return KD_OK;
}

/* A tensor-list argument the formula reads: the node keeps aliases of its tensors without
 * autograd meta (See Note [Saved tensors hold no tensor with a history]; no version check for
 * lists: the formulas that read one, cat's, use only the shapes). */
static kd_status kd_save_list(const kd_value *a, kd_value *out) {
  int n = a->v.tlist.n;
  kd_tensor **list = (kd_tensor **)calloc((size_t)(n ? n : 1), sizeof(kd_tensor *));
  if (!list) return kd_error(KD_ERR_OOM, "out of memory");
  for (int j = 0; j < n; j++) {
    if (!a->v.tlist.data[j]) continue;
    kd_status st = kd_detach(a->v.tlist.data[j], &list[j]);
    if (st != KD_OK) {
      for (int k = 0; k < j; k++) if (list[k]) kd_tensor_release(list[k]);
      free(list);
      return st;
    }
  }
  out->kind = KD_VALUE_TENSORLIST;
  out->v.tlist.data = list;
  out->v.tlist.n = n;
  return KD_OK;
}

static kd_status kd_record_fail(kd_node *n, kd_status st) {
  kd_node_release(n);
  return st;
}

/* The outputs of a view op that records no node are still views of self's base (see Note
 * [Views and in-place ops]): an in-place op on them later may make the base require grad. */
static kd_status kd_run_view_untracked(const kd_op_info *op, kd_keyset ks, kd_value *args, kd_value *outs) {
  KD_TRY(kd_run_below(op, ks, args, outs));
  kd_tensor *self = args[0].v.t;
  if (outs[0].kind == KD_VALUE_TENSOR && kd_dtype_is_float(outs[0].v.t->dtype)) {
    kd_status st = kd_view_track(self, outs[0].v.t, !kd_grad_off);
    if (st != KD_OK) {
      for (int j = 0; j < KD_OP_MAX_OUTS; j++) kd_value_release(&outs[j]);
      return st;
    }
  }
  return KD_OK;
}

KD_KERNEL(kd_autograd_kernel) {
  if (!kd_any_requires_grad(op, args)) {
    if (op->flags & KD_OP_FLAG_VIEW) return kd_run_view_untracked(op, ks, args, outs);
    return kd_run_below(op, ks, args, outs);
  }
  const kd_backward_spec *spec = kd_backward_table[op->id];
  if (!spec) return kd_not_differentiable(op, NULL);
  bool inplace = (op->flags & KD_OP_FLAG_INPLACE) != 0;
  int nargs = op->nargs;

  /* checks, before anything runs */
  int n_edges = 0;
  for (int i = 0; i < nargs; i++) {
    const kd_value *a = &args[i];
    int cnt = a->kind == KD_VALUE_TENSOR ? 1 : a->kind == KD_VALUE_TENSORLIST ? a->v.tlist.n : 0;
    for (int j = 0; j < cnt; j++) {
      kd_tensor *t = a->kind == KD_VALUE_TENSOR ? a->v.t : a->v.tlist.data[j];
      if (!t) continue;
      if (kd_requires_grad(t) && !(spec->diff_args & (1u << i))) return kd_not_differentiable(op, op->args[i].name);
      if (!(t->keys & KD_KEYSET(KD_KEY_AUTOGRAD)) && (spec->save_args & (1u << i)))
        return kd_error(KD_ERR_INVALID_ARGUMENT,
                        "Inference tensors cannot be saved for backward. To work around you can make a clone to get a "
                        "normal tensor and use it in autograd.");
    }
    n_edges += cnt;
  }
  kd_tensor *self = inplace ? args[0].v.t : NULL;
  if (inplace) {
    kd_autograd_meta *m = kd_meta(self);
    if (m && m->base) KD_TRY(kd_view_check_inplace(self));
    else if (m && m->requires_grad && !m->grad_fn)
      return kd_error(KD_ERR_INVALID_ARGUMENT, "a leaf Variable that requires grad is being used in an in-place operation.");
  }

  int nouts_fixed = op->nouts > 0 ? op->nouts : 0;
  kd_node *n = kd_node_new_op(n_edges, nouts_fixed, nargs);
  if (!n) return kd_error(KD_ERR_OOM, "out of memory");
  n->op = op->id;

  /* edges and saved inputs */
  int e = 0;
  for (int i = 0; i < nargs; i++) {
    const kd_value *a = &args[i];
    kd_status st = kd_copy_arg(a, &n->args[i]);
    if (st != KD_OK) return kd_record_fail(n, st);
    n->edge_start[i] = e;
    int cnt = a->kind == KD_VALUE_TENSOR ? 1 : a->kind == KD_VALUE_TENSORLIST ? a->v.tlist.n : 0;
    n->edge_count[i] = cnt;
    for (int j = 0; j < cnt; j++, e++) {
      kd_tensor *t = a->kind == KD_VALUE_TENSOR ? a->v.t : a->v.tlist.data[j];
      if (!t) continue;
      kd_edge_set_meta(&n->edges[e], t);
      if (spec->diff_args & (1u << i)) {
        st = kd_gradient_edge(t, &n->edges[e].fn, &n->edges[e].input_nr);
        if (st != KD_OK) return kd_record_fail(n, st);
      }
    }
    if (a->kind == KD_VALUE_TENSORLIST && (spec->save_args & (1u << i))) {
      st = kd_save_list(a, &n->args[i]);
      if (st != KD_OK) return kd_record_fail(n, st);
    }
    if (a->kind == KD_VALUE_TENSOR && (spec->save_args & (1u << i))) {
      kd_tensor *t = a->v.t;
      kd_status st2;
      if (inplace && (i == 0 || t->storage == args[0].v.t->storage)) {
        /* the formula reads self's old value, which the op is about to overwrite: a copy made
         * with autograd (PyTorch's original_self = self.clone()), so it keeps self's history
         * and a double backward differentiates through it. The same for another argument that
         * is self or a view of it (x.mul_(x), x.clamp_(lo, x)): its old value is what the formula
         * needs, not the value the op is about to write. */
        kd_value ca[1] = {kd_value_tensor(t)};
        kd_tensor *copy = NULL;
        st2 = kd_call1(KD_OP_clone, ca, &copy);
        if (st2 == KD_OK) {
          st2 = kd_saved_init(&n->saved_args[i], copy, false, 0, 0);
          kd_tensor_release(copy);
        }
      } else {
        st2 = kd_saved_init(&n->saved_args[i], t, false, 0, 0);
      }
      if (st2 != KD_OK) return kd_record_fail(n, st2);
    }
  }

  kd_status st = kd_run_below(op, ks, args, outs);
  if (st != KD_OK) return kd_record_fail(n, st);

  /* outputs */
  int nouts = 0;
  kd_tensor *fixed_t[KD_OP_MAX_OUTS];
  kd_tensor **out_t = fixed_t;
  if (op->nouts < 0) {
    if (outs[0].kind == KD_VALUE_TENSORLIST) {
      out_t = outs[0].v.tlist.data;
      nouts = outs[0].v.tlist.n;
    }
  } else {
    for (int j = 0; j < nouts_fixed; j++) out_t[nouts++] = outs[j].kind == KD_VALUE_TENSOR ? outs[j].v.t : NULL;
  }
  if (!nouts_fixed) { /* a tensor list: its length is known now */
    n->n_outputs = nouts;
    n->outs = (kd_out_meta *)calloc((size_t)nouts + 1, sizeof(kd_out_meta));
    n->saved_outs = (kd_saved *)calloc((size_t)nouts + 1, sizeof(kd_saved));
  }
  if (!n->outs || !n->saved_outs) {
    kd_node_release(n);
    return KD_OK; /* the op ran; without memory for the node, its outputs are simply not tracked */
  }
  bool any_diff = false;
  for (int j = 0; j < nouts; j++) {
    kd_tensor *t = out_t[j];
    if (!t) continue;
    kd_out_meta *om = &n->outs[j];
    om->ndim = t->ndim;
    om->dtype = t->dtype;
    om->device = kd_tensor_device(t);
    if (t->ndim) memcpy(om->sizes, t->sizes, sizeof(int64_t) * t->ndim);
    if (spec->save_outs & (1u << j)) { /* integer outputs too: indices of max.dim, sort, ... */
      st = kd_saved_init(&n->saved_outs[j], t, true, j, inplace ? 1 : 0);
      if (st != KD_OK) break;
    }
    if (!kd_dtype_is_float(t->dtype)) continue;
    kd_autograd_meta *m = NULL;
    st = kd_meta_get(t, &m);
    if (st != KD_OK) break;
    if (inplace && j == 0 && m->base) { /* rebase_history: the base's history becomes CopySlices */
      st = kd_view_rebase(t, n);
      if (st != KD_OK) break;
      any_diff = true;
      continue;
    }
    if (m->grad_fn) {
      if (m->retains_grad) {
        m->retains_grad = false; /* history rebased: the old node's retain hook no longer applies */
      }
      kd_node_release(m->grad_fn);
    }
    m->requires_grad = true;
    m->grad_fn = n;
    kd_node_retain(n);
    m->output_nr = j;
    if (op->flags & KD_OP_FLAG_VIEW) {
      st = kd_view_track(args[0].v.t, t, true);
      if (st != KD_OK) break;
    }
    any_diff = true;
  }
  (void)any_diff;
  if (kd_anomaly && kd_anomaly_trace_hook) n->trace = kd_anomaly_trace_hook();
  kd_node_release(n);
  if (st != KD_OK) {
    for (int j = 0; j < KD_OP_MAX_OUTS; j++) kd_value_release(&outs[j]);
    return st;
  }
  return KD_OK;
}

KD_KERNEL(kd_autograd_refuse) {
  if (kd_any_requires_grad(op, args)) return kd_not_differentiable(op, NULL);
  if (op->flags & KD_OP_FLAG_VIEW) return kd_run_view_untracked(op, ks, args, outs);
  return kd_run_below(op, ks, args, outs);
}

/* asStrided: AsStridedBackward0 keeps the geometry of self and of the result, not self itself
 * (PyTorch's as_strided_backward; copy_slices.c). */
KD_KERNEL(kd_autograd_as_strided) {
  if (!kd_any_requires_grad(op, args)) return kd_run_view_untracked(op, ks, args, outs);
  kd_tensor *self = args[0].v.t;
  KD_TRY(kd_run_below(op, ks, args, outs));
  kd_tensor *t = outs[0].v.t;
  kd_node *n = NULL;
  kd_autograd_meta *m = NULL;
  kd_status st = kd_as_strided_node(self, t, &n);
  if (st == KD_OK) st = kd_meta_get(t, &m);
  if (st == KD_OK) {
    if (m->grad_fn) kd_node_release(m->grad_fn);
    m->grad_fn = n;
    n = NULL;
    m->requires_grad = true;
    m->output_nr = 0;
    st = kd_view_track(self, t, true);
  }
  if (n) kd_node_release(n);
  if (st != KD_OK) {
    for (int j = 0; j < KD_OP_MAX_OUTS; j++) kd_value_release(&outs[j]);
    return st;
  }
  if (kd_anomaly && kd_anomaly_trace_hook && m && m->grad_fn) m->grad_fn->trace = kd_anomaly_trace_hook();
  return KD_OK;
}

/* split/chunk/unbind (composites over narrow/select): their outputs are views that must not be
 * modified in place while recorded (PyTorch's CreationMeta::MULTI_OUTPUT_NODE). */
static kd_kernel_fn kd_multi_view_orig[KD_OP_COUNT];

KD_KERNEL(kd_autograd_multi_view) {
  KD_TRY(kd_multi_view_orig[op->id](op, ks, args, outs));
  if (kd_grad_off || outs[0].kind != KD_VALUE_TENSORLIST) return KD_OK;
  for (int j = 0; j < outs[0].v.tlist.n; j++) {
    kd_tensor *t = outs[0].v.tlist.data[j];
    kd_autograd_meta *m = t ? kd_meta(t) : NULL;
    if (!m || !m->base || m->creation != KD_VIEW_DEFAULT) continue;
    m->creation = KD_VIEW_MULTI_OUTPUT;
    m->multi_op = op->id == KD_OP_split && args[1].kind == KD_VALUE_INTLIST ? -1 : (int)op->id;
    m->multi_index = j;
  }
  return KD_OK;
}

/* Every op that is not a composite (those record the ops they call) and not a factory gets
 * an Autograd kernel: the recorder when it has a formula, else the refuser (nondiff ops: plain
 * fall-through, their outputs never require grad). */
static void kd_autograd_init_once(void) {
  for (int i = 0; i < KD_OP_COUNT; i++) {
    const kd_op_info *op = &kd_ops[i];
    if (i == KD_OP_split || i == KD_OP_chunk || i == KD_OP_unbind) {
      kd_multi_view_orig[i] = kd_kernel_table[i][KD_KEY_AUTOGRAD];
      if (kd_multi_view_orig[i]) kd_kernel_table[i][KD_KEY_AUTOGRAD] = kd_autograd_multi_view;
      continue;
    }
    if (i == KD_OP_asStrided) {
      kd_kernel_table[i][KD_KEY_AUTOGRAD] = kd_autograd_as_strided;
      continue;
    }
    if (kd_kernel_table[i][KD_KEY_AUTOGRAD]) continue; /* composite */
    if (op->flags & KD_OP_FLAG_FACTORY) continue;
    if (op->flags & KD_OP_FLAG_NONDIFF) continue;
    kd_kernel_table[i][KD_KEY_AUTOGRAD] = kd_backward_table[i] ? kd_autograd_kernel : kd_autograd_refuse;
  }
}

void kd_autograd_init(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, kd_autograd_init_once);
}
