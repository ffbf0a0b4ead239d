/* node.c - autograd metadata of tensors, graph nodes and saved tensors: creation, reference
 * counting, names, the version check of saved tensors, hooks, detach. */
#include "autograd/autograd.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/shape.h"
#include "core/struct_cache.h"
#include "ops/ops_gen.h"

static _Thread_local uint64_t kd_node_seq;
static _Thread_local int64_t kd_hook_ids;

/* Note [Autograd struct caches]
 * Recording an op allocates the output's kd_autograd_meta and one block for the node; a
 * 1-element op with grad is a few hundred nanoseconds, so these come from thread-local free
 * lists (core/struct_cache.h) as tensors and storages do. Node blocks are cached by size class
 * (multiples of KD_NODE_CACHE_STEP bytes, up to KD_NODE_CACHE_CLASSES of them); larger ones
 * use malloc/free. */
#define KD_NODE_CACHE_STEP 256
#define KD_NODE_CACHE_CLASSES 16
static _Thread_local kd_struct_cache kd_meta_cache;
static _Thread_local kd_struct_cache kd_node_cache[KD_NODE_CACHE_CLASSES];

/* ---- metadata ---------------------------------------------------------------------------------- */

static void kd_meta_free_hook(kd_tensor *t);

kd_status kd_meta_get(kd_tensor *t, kd_autograd_meta **out) {
  if (!t->autograd) {
    kd_autograd_meta *m = (kd_autograd_meta *)kd_struct_cache_get(&kd_meta_cache, sizeof *m, malloc);
    if (!m) return kd_error(KD_ERR_OOM, "out of memory");
    memset(m, 0, sizeof *m);
    m->self = t;
    t->autograd = m;
    kd_tensor_autograd_free_hook = kd_meta_free_hook;
  }
  *out = kd_meta(t);
  return KD_OK;
}

static void kd_hooks_free(kd_hook *h) {
  while (h) {
    kd_hook *next = h->next;
    if (h->free_data) h->free_data(h->data);
    free(h->name);
    free(h);
    h = next;
  }
}

/* A node's retain_grad hooks point at metas: drop those of a meta that goes away. */
void kd_node_forget_meta(kd_node *n, kd_autograd_meta *m) {
  kd_hook **p = &n->hooks;
  while (*p) {
    if ((*p)->retain == m) {
      kd_hook *dead = *p;
      *p = dead->next;
      free(dead);
    } else {
      p = &(*p)->next;
    }
  }
}

static void kd_meta_free_hook(kd_tensor *t) {
  kd_autograd_meta *m = kd_meta(t);
  if (!m) return;
  if (m->grad_fn) {
    if (m->retains_grad) kd_node_forget_meta(m->grad_fn, m);
    kd_node_release(m->grad_fn);
  }
  if (m->accumulator) {
    m->accumulator->leaf = NULL;
    kd_node_release(m->accumulator);
  }
  if (m->grad) kd_tensor_release(m->grad);
  if (m->base) kd_tensor_release(m->base);
  kd_hooks_free(m->hooks);
  kd_struct_cache_put(&kd_meta_cache, m, free);
  t->autograd = NULL;
}

kd_status kd_set_requires_grad(kd_tensor *t, bool on) {
  kd_autograd_meta *m = kd_meta(t);
  if (m) KD_TRY(kd_view_update(t));
  if (m && m->grad_fn) {
    if (on) return KD_OK;
    return kd_error(KD_ERR_INVALID_ARGUMENT,
                    "you can only change requires_grad flags of leaf variables. If you want to use a computed variable "
                    "in a subgraph that doesn't require differentiation use var_no_grad = var.detach().");
  }
  if (on && !(kd_dtype_is_float(t->dtype)))
    return kd_error(KD_ERR_DTYPE, "only Tensors of floating point and complex dtype can require gradients");
  if (!m && !on) return KD_OK;
  KD_TRY(kd_meta_get(t, &m));
  m->requires_grad = on;
  return KD_OK;
}

bool kd_is_leaf(const kd_tensor *t) {
  const kd_autograd_meta *m = kd_meta(t);
  if (m && m->base) {
    kd_status st = KD_OK;
    return kd_grad_fn((kd_tensor *)t, &st) == NULL;
  }
  return !m || !m->grad_fn;
}

kd_node *kd_grad_fn(kd_tensor *t, kd_status *st) {
  kd_autograd_meta *m = kd_meta(t);
  *st = KD_OK;
  if (!m) return NULL;
  if ((*st = kd_view_update(t)) != KD_OK) return NULL;
  return m->grad_fn;
}

void kd_set_grad(kd_tensor *t, kd_tensor *grad) {
  kd_autograd_meta *m = NULL;
  if (kd_meta_get(t, &m) != KD_OK) {
    if (grad) kd_tensor_release(grad);
    return;
  }
  if (m->grad) kd_tensor_release(m->grad);
  m->grad = grad;
}

kd_status kd_retain_grad(kd_tensor *t) {
  kd_autograd_meta *m = kd_meta(t);
  if (!m || !kd_requires_grad(t))
    return kd_error(KD_ERR_INVALID_ARGUMENT, "can't retain_grad on Tensor that has requires_grad=False");
  KD_TRY(kd_view_update(t));
  if (!m->grad_fn || m->retains_grad) return KD_OK; /* leaves keep their grad anyway */
  kd_hook *h = (kd_hook *)calloc(1, sizeof *h);
  if (!h) return kd_error(KD_ERR_OOM, "out of memory");
  h->id = ++kd_hook_ids;
  h->output_nr = m->output_nr;
  h->retain = m;
  h->next = m->grad_fn->hooks;
  m->grad_fn->hooks = h;
  m->retains_grad = true;
  return KD_OK;
}

kd_status kd_detach(kd_tensor *t, kd_tensor **out) {
  return kd_tensor_new_view(t, t->sizes, t->strides, t->ndim, t->offset, out);
}

/* Note [set_data]
 * `p.data = src` (PyTorch's VariableHooks::set_data) swaps what p's tensor struct points at:
 * storage, offset, sizes, strides, dtype and the backend key come from src; requires_grad,
 * grad, grad_fn and hooks stay p's, so every JS handle of p, optimizers' parameter lists and
 * autograd edges see the new data. The version counter lives in the storage, so p's version is
 * src's afterwards; values saved for backward before the swap keep the old storage and their
 * own versions. A leaf's AccumulateGrad records the leaf's dtype, device and sizes: when one of
 * them changes, the leaf forgets it (a graph recorded before the swap no longer accumulates
 * into p) and the next use makes a new one. A differentiable view stops aliasing its base, so
 * it stops being a view (keeping its grad_fn). */
kd_status kd_set_data(kd_tensor *t, kd_tensor *src) {
  kd_device d = kd_tensor_device(t), s = kd_tensor_device(src);
  if (d.type != s.type)
    return kd_error(KD_ERR_DEVICE, "Attempted to call `variable.set_data(tensor)`, but `variable` and `tensor` have "
                                   "incompatible tensor type.");
  if (kd_requires_grad(t) && !kd_dtype_is_float(src->dtype))
    return kd_error(KD_ERR_DTYPE, "data set to a tensor that requires gradients must be floating point or complex dtype");
  if (t == src) return KD_OK;
  kd_autograd_meta *m = kd_meta(t);
  if (m && m->accumulator) {
    bool same = t->dtype == src->dtype && d.index == s.index && t->ndim == src->ndim &&
                (t->ndim == 0 || memcmp(t->sizes, src->sizes, sizeof(int64_t) * t->ndim) == 0);
    if (!same) {
      m->accumulator->leaf = NULL;
      kd_node_release(m->accumulator);
      m->accumulator = NULL;
    }
  }
  if (m && m->is_view) {
    kd_tensor_release(m->base);
    m->base = NULL;
    m->is_view = false;
    m->creation = KD_VIEW_DEFAULT;
  }
  kd_storage_retain(src->storage);
  kd_storage_release(t->storage);
  t->storage = src->storage;
  t->dtype = src->dtype;
  t->offset = src->offset;
  t->ndim = src->ndim;
  if (src->ndim) {
    memcpy(t->sizes, src->sizes, sizeof(int64_t) * src->ndim);
    memcpy(t->strides, src->strides, sizeof(int64_t) * src->ndim);
  }
  t->keys = (kd_keyset)((t->keys & ~KD_KEYSET_BACKENDS) | (src->keys & KD_KEYSET_BACKENDS));
  return KD_OK;
}

kd_status kd_detach_(kd_tensor *t) {
  kd_autograd_meta *m = kd_meta(t);
  if (!m) return KD_OK;
  if (m->is_view)
    return kd_error(KD_ERR_INVALID_ARGUMENT,
                    "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel (DDP) for "
                    "training, and gradient_as_bucket_view is set as True, gradients are views of DDP buckets, and hence "
                    "detach_() cannot be called on these gradients. To fix this error, please refer to the "
                    "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.");
  if (m->grad_fn) {
    if (m->retains_grad) kd_node_forget_meta(m->grad_fn, m);
    kd_node_release(m->grad_fn);
    m->grad_fn = NULL;
  }
  m->retains_grad = false;
  m->requires_grad = false;
  m->output_nr = 0;
  return KD_OK;
}

void kd_edge_set_meta(kd_edge *e, const kd_tensor *t) {
  e->ndim = t->ndim;
  e->col_major = kd_tensor_col_major(t);
  e->dtype = t->dtype;
  e->device = kd_tensor_device(t);
  if (t->ndim) memcpy(e->sizes, t->sizes, sizeof(int64_t) * t->ndim);
}

kd_status kd_gradient_edge(kd_tensor *t, kd_node **fn, int *input_nr) {
  kd_autograd_meta *m = kd_meta(t);
  *fn = NULL;
  *input_nr = 0;
  if (!m) return KD_OK;
  if (m->base) KD_TRY(kd_view_update(t));
  if (m->grad_fn) {
    *fn = m->grad_fn;
    *input_nr = m->output_nr;
    kd_node_retain(m->grad_fn);
    return KD_OK;
  }
  if (!m->requires_grad) return KD_OK;
  if (!m->accumulator) {
    kd_node *n = kd_node_new(KD_NODE_ACCUMULATE, 0, 1);
    if (!n) return kd_error(KD_ERR_OOM, "out of memory");
    n->leaf = t; /* weak */
    kd_out_meta *o = &n->outs[0];
    o->ndim = t->ndim;
    o->dtype = t->dtype;
    o->device = kd_tensor_device(t);
    if (t->ndim) memcpy(o->sizes, t->sizes, sizeof(int64_t) * t->ndim);
    m->accumulator = n; /* the meta's reference */
    kd_node_retain(n);  /* the edge's */
    *fn = n;
    return KD_OK;
  }
  *fn = m->accumulator;
  kd_node_retain(m->accumulator);
  return KD_OK;
}

kd_status kd_add_hook(kd_tensor *t, kd_grad_hook_fn fn, void *data, kd_grad_hook_free_fn free_data, const char *name,
                      int64_t *id) {
  kd_autograd_meta *m = kd_meta(t);
  if (!m || !kd_requires_grad(t))
    return kd_error(KD_ERR_INVALID_ARGUMENT, "cannot register a hook on a tensor that doesn't require gradient");
  KD_TRY(kd_view_update(t));
  kd_hook *h = (kd_hook *)calloc(1, sizeof *h);
  if (h) h->name = strdup(name && *name ? name : "<anonymous>");
  if (!h || !h->name) {
    free(h);
    return kd_error(KD_ERR_OOM, "out of memory");
  }
  h->id = ++kd_hook_ids;
  h->fn = fn;
  h->data = data;
  h->free_data = free_data;
  h->output_nr = m->output_nr;
  kd_hook **list = m->grad_fn ? &m->grad_fn->hooks : &m->hooks;
  /* append: hooks run in registration order */
  while (*list) list = &(*list)->next;
  *list = h;
  *id = h->id;
  return KD_OK;
}

static bool kd_hook_remove_from(kd_hook **p, int64_t id) {
  for (; *p; p = &(*p)->next) {
    if ((*p)->id == id) {
      kd_hook *dead = *p;
      *p = dead->next;
      if (dead->free_data) dead->free_data(dead->data);
      free(dead->name);
      free(dead);
      return true;
    }
  }
  return false;
}

void kd_remove_hook(kd_tensor *t, int64_t id) {
  kd_autograd_meta *m = kd_meta(t);
  if (!m) return;
  if (m->grad_fn && kd_hook_remove_from(&m->grad_fn->hooks, id)) return;
  kd_hook_remove_from(&m->hooks, id);
}

/* ---- nodes -------------------------------------------------------------------------------------- */

static size_t kd_align16(size_t n) { return (n + 15) & ~(size_t)15; }

/* One calloc for the node and its arrays: the per-op cost of recording is mostly allocation. */
static kd_node *kd_node_alloc(kd_node_kind kind, int n_edges, int n_outputs, int nargs, bool saved_outs) {
  size_t off_edges = kd_align16(sizeof(kd_node));
  size_t off_outs = kd_align16(off_edges + sizeof(kd_edge) * (size_t)n_edges);
  size_t off_souts = kd_align16(off_outs + sizeof(kd_out_meta) * (size_t)n_outputs);
  size_t off_args = kd_align16(off_souts + (saved_outs ? sizeof(kd_saved) * (size_t)n_outputs : 0));
  size_t off_sargs = kd_align16(off_args + sizeof(kd_value) * (size_t)nargs);
  size_t off_es = kd_align16(off_sargs + sizeof(kd_saved) * (size_t)nargs);
  size_t off_ec = off_es + sizeof(int) * (size_t)nargs;
  size_t size = off_ec + sizeof(int) * (size_t)nargs;
  size = (size + KD_NODE_CACHE_STEP - 1) / KD_NODE_CACHE_STEP * KD_NODE_CACHE_STEP;
  size_t cls = size / KD_NODE_CACHE_STEP - 1; /* See Note [Autograd struct caches] */
  char *b = cls < KD_NODE_CACHE_CLASSES ? (char *)kd_struct_cache_get(&kd_node_cache[cls], size, malloc) : (char *)malloc(size);
  if (!b) return NULL;
  memset(b, 0, size);
  kd_node *n = (kd_node *)b;
  n->refcount = 1;
  n->kind = kind;
  n->seq = ++kd_node_seq;
  n->n_edges = n_edges;
  n->n_outputs = n_outputs;
  n->block_size = size;
  n->edges = n_edges ? (kd_edge *)(b + off_edges) : NULL;
  n->outs = n_outputs ? (kd_out_meta *)(b + off_outs) : NULL;
  if (saved_outs && n_outputs) n->saved_outs = (kd_saved *)(b + off_souts);
  if (nargs) {
    n->nargs = nargs;
    n->args = (kd_value *)(b + off_args);
    n->saved_args = (kd_saved *)(b + off_sargs);
    n->edge_start = (int *)(b + off_es);
    n->edge_count = (int *)(b + off_ec);
  }
  return n;
}

kd_node *kd_node_new(kd_node_kind kind, int n_edges, int n_outputs) {
  return kd_node_alloc(kind, n_edges, n_outputs, 0, false);
}

kd_node *kd_node_new_op(int n_edges, int n_outputs, int nargs) {
  return kd_node_alloc(KD_NODE_OP, n_edges, n_outputs, nargs, true);
}

/* Frees an array of node x unless it lives inside x's own allocation. */
static void kd_node_free_part(const kd_node *x, void *p) {
  if (p && !((char *)p >= (const char *)x && (char *)p < (const char *)x + x->block_size)) free(p);
}

void kd_saved_clear(kd_saved *s) {
  if (s->t) kd_tensor_release(s->t);
  s->t = NULL;
  if (s->producer) kd_node_release(s->producer);
  s->producer = NULL;
}

/* See Note [Saved tensors hold no tensor with a history] in autograd.h. */
kd_status kd_saved_init(kd_saved *s, kd_tensor *t, bool is_output, int output_nr, int64_t version_offset) {
  memset(s, 0, sizeof *s);
  KD_TRY(kd_detach(t, &s->t));
  if (!is_output && kd_requires_grad(t)) {
    /* where the input's gradient goes: its grad_fn (a view's, brought up to date), or the leaf's
     * AccumulateGrad, which holds the leaf only weakly */
    kd_status st = kd_gradient_edge(t, &s->producer, &s->producer_output_nr);
    if (st != KD_OK) {
      kd_saved_clear(s);
      return st;
    }
    s->alias_of_input = s->producer != NULL;
  }
  s->version = (int64_t)t->storage->version + version_offset;
  s->is_output = is_output;
  s->output_nr = output_nr;
  return KD_OK;
}

void kd_node_release_saved(kd_node *n) {
  if (n->inner) kd_node_release_saved(n->inner);
  if (n->kind == KD_NODE_CUSTOM && n->saved_args) { /* what a JS ctx saved (src/napi/autograd.c) */
    for (int i = 0; i < n->nargs; i++) kd_saved_clear(&n->saved_args[i]);
    n->released = true;
  }
  if (n->kind != KD_NODE_OP) return;
  if (n->saved_args)
    for (int i = 0; i < n->nargs; i++) kd_saved_clear(&n->saved_args[i]);
  if (n->args)
    for (int i = 0; i < n->nargs; i++)
      if (n->args[i].kind == KD_VALUE_TENSORLIST) kd_value_release(&n->args[i]);
  if (n->saved_outs)
    for (int i = 0; i < n->n_outputs; i++) kd_saved_clear(&n->saved_outs[i]);
  n->released = true;
}

static void kd_node_destroy(kd_node *n) {
  /* Iterative: releasing a long chain must not recurse once per node. */
  kd_node *stack_small[64];
  kd_node **stack = stack_small;
  int cap = 64, top = 0;
  stack[top++] = n;
  while (top) {
    kd_node *x = stack[--top];
    /* the producers of saved inputs (See kd_saved_init) are let go here too, not by
     * kd_saved_clear's kd_node_release, which would recurse along a chain */
    kd_saved *saved = x->kind != KD_NODE_ACCUMULATE ? x->saved_args : NULL;
    int nsaved = saved ? x->nargs : 0;
    for (int i = -1; i < x->n_edges + nsaved; i++) {
      kd_node *c;
      if (i < 0) c = x->inner; /* CopySlices' inner node, then the edges, then the producers */
      else if (i < x->n_edges) c = x->edges[i].fn;
      else {
        c = saved[i - x->n_edges].producer;
        saved[i - x->n_edges].producer = NULL;
      }
      if (c && --c->refcount == 0) {
        if (top == cap) {
          int ncap = cap * 2;
          kd_node **ns = (kd_node **)malloc(sizeof(kd_node *) * ncap);
          if (!ns) { c->refcount = 1; continue; } /* leak rather than crash */
          memcpy(ns, stack, sizeof(kd_node *) * top);
          if (stack != stack_small) free(stack);
          stack = ns;
          cap = ncap;
        }
        stack[top++] = c;
      }
    }
    if (x->kind == KD_NODE_OP) {
      kd_node_release_saved(x);
      if (x->args) for (int i = 0; i < x->nargs; i++) {
        kd_value *a = &x->args[i];
        if (a->kind == KD_VALUE_INTLIST) free((void *)a->v.ilist.data);
        else if (a->kind == KD_VALUE_DOUBLELIST) free((void *)a->v.dlist.data);
        else if (a->kind == KD_VALUE_STRING) free((void *)a->v.str);
      }
      kd_node_free_part(x, x->args);
      kd_node_free_part(x, x->saved_args);
      kd_node_free_part(x, x->saved_outs);
      kd_node_free_part(x, x->edge_start);
      kd_node_free_part(x, x->edge_count);
    } else if (x->kind == KD_NODE_CUSTOM) {
      kd_node_release_saved(x);
      kd_node_free_part(x, x->saved_args);
      if (x->custom_free) x->custom_free(x);
    }
    kd_hooks_free(x->hooks);
    free(x->trace);
    kd_node_free_part(x, x->edges);
    kd_node_free_part(x, x->outs);
    size_t cls = x->block_size / KD_NODE_CACHE_STEP - 1;
    if (x->block_size % KD_NODE_CACHE_STEP == 0 && cls < KD_NODE_CACHE_CLASSES) kd_struct_cache_put(&kd_node_cache[cls], x, free);
    else free(x);
  }
  if (stack != stack_small) free(stack);
}

void kd_node_release(kd_node *n) {
  if (n && --n->refcount == 0) kd_node_destroy(n);
}

const char *kd_node_name(const kd_node *n, char *buf, int len) {
  if (n->kind == KD_NODE_ACCUMULATE) return "AccumulateGrad";
  if (n->kind == KD_NODE_CUSTOM) return n->custom_name ? n->custom_name : "BackwardCFunction";
  /* "logSoftmax_" / "max.dim" -> "LogSoftmaxBackward0" / "MaxBackward0" */
  const char *name = kd_ops[n->op].name;
  int j = 0;
  for (int i = 0; name[i] && name[i] != '.' && j < len - 11; i++) {
    if (name[i] == '_') continue;
    buf[j++] = (char)(i == 0 ? toupper((unsigned char)name[i]) : name[i]);
  }
  snprintf(buf + j, (size_t)(len - j), "Backward0");
  return buf;
}

kd_status kd_saved_unpack(const kd_node *n, const kd_saved *s, kd_tensor **out) {
  if (!s->t) {
    if (n->released)
      return kd_error(KD_ERR_INVALID_ARGUMENT,
                      "Trying to backward through the graph a second time (or directly access saved tensors after they have "
                      "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
                      "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time "
                      "or if you need to access saved tensors after calling backward.");
    return kd_error(KD_ERR_INTERNAL, "a saved tensor is missing");
  }
  int64_t now = (int64_t)s->t->storage->version;
  if (now != s->version) {
    char shape[160], nb[64], who[128] = "";
    kd_shape_format(s->t->sizes, s->t->ndim, shape, sizeof shape);
    if (s->is_output) snprintf(who, sizeof who, ", which is output %d of %s,", s->output_nr, kd_node_name(n, nb, sizeof nb));
    else if (s->producer && s->producer->kind != KD_NODE_ACCUMULATE) /* a leaf is named by no node */
      snprintf(who, sizeof who, ", which is output %d of %s,", s->producer_output_nr, kd_node_name(s->producer, nb, sizeof nb));
    return kd_error(KD_ERR_INVALID_ARGUMENT,
                    "one of the variables needed for gradient computation has been modified by an inplace operation: "
                    "[%s tensor %s]%s is at version %lld; expected version %lld instead. Hint: the backtrace further above "
                    "shows the operation that failed to compute its gradient. The variable in question was changed in there "
                    "or anywhere later. Good luck!",
                    kd_dtype_name(s->t->dtype), shape, who, (long long)now, (long long)s->version);
  }
  if (!(s->is_output || s->alias_of_input) || !kd_grad_enabled() || !kd_dtype_is_float(s->t->dtype)) {
    kd_tensor_retain(s->t);
    *out = s->t;
    return KD_OK;
  }
  /* create_graph: the saved output must be connected to this node again, a saved input to the
   * node that made it (a leaf's: to its AccumulateGrad, so gradients still reach the leaf) */
  kd_tensor *t = NULL;
  KD_TRY(kd_detach(s->t, &t));
  kd_autograd_meta *m = NULL;
  kd_status st = kd_meta_get(t, &m);
  if (st != KD_OK) { kd_tensor_release(t); return st; }
  m->requires_grad = true;
  m->grad_fn = s->is_output ? (kd_node *)n : s->producer;
  kd_node_retain(m->grad_fn);
  m->output_nr = s->is_output ? s->output_nr : s->producer_output_nr;
  *out = t;
  return KD_OK;
}
