/* engine.c - runs backward: from the roots' gradient edges, finds every reachable node
 * (iterative DFS, no recursion: a chain of 100,000 ops is fine), keeps only the nodes that lead
 * to the requested inputs (autograd.grad / backward(inputs=)), counts dependencies, and executes
 * nodes whose gradients are complete, latest-created first. Each gradient a node returns is
 * summed back to its input's shape/dtype/device (kd_autograd_reduce_to_input) and added into the
 * next node's buffer. Leaves accumulate into .grad (AccumulateGrad). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autograd/formula.h"
#include "core/shape.h"
#include "profiler/profiler.h"

/* ---- per-run node table (open addressing on the node pointer) -------------------------------- */
typedef struct kd_run_node {
  kd_node *node;
  int deps;
  bool needed;
  int state;             /* DFS: 0 seen, 1 expanding, 2 finished */
  bool queued;
  kd_tensor **buf;       /* per output of node: the summed gradient so far */
  int *capture;          /* per output: index into results (-1 none) */
} kd_run_node;

typedef struct kd_run {
  kd_run_node *tab;
  size_t cap, count;
} kd_run;

static size_t kd_hash_ptr(const void *p) {
  uintptr_t x = (uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return (size_t)x;
}

static kd_status kd_run_grow(kd_run *r) {
  size_t ncap = r->cap ? r->cap * 2 : 64;
  kd_run_node *nt = (kd_run_node *)calloc(ncap, sizeof *nt);
  if (!nt) return kd_error(KD_ERR_OOM, "out of memory in backward");
  for (size_t i = 0; i < r->cap; i++) {
    if (!r->tab[i].node) continue;
    size_t h = kd_hash_ptr(r->tab[i].node) & (ncap - 1);
    while (nt[h].node) h = (h + 1) & (ncap - 1);
    nt[h] = r->tab[i];
  }
  free(r->tab);
  r->tab = nt;
  r->cap = ncap;
  return KD_OK;
}

static kd_run_node *kd_run_find(kd_run *r, const kd_node *n) {
  if (!r->cap) return NULL;
  size_t h = kd_hash_ptr(n) & (r->cap - 1);
  while (r->tab[h].node) {
    if (r->tab[h].node == n) return &r->tab[h];
    h = (h + 1) & (r->cap - 1);
  }
  return NULL;
}

static kd_status kd_run_add(kd_run *r, kd_node *n, kd_run_node **out) {
  kd_run_node *x = kd_run_find(r, n);
  if (x) { *out = x; return KD_OK; }
  if ((r->count + 1) * 2 > r->cap) KD_TRY(kd_run_grow(r));
  size_t h = kd_hash_ptr(n) & (r->cap - 1);
  while (r->tab[h].node) h = (h + 1) & (r->cap - 1);
  x = &r->tab[h];
  memset(x, 0, sizeof *x);
  x->node = n;
  /* one block: the gradient buffers, then the capture indices */
  size_t nb = (size_t)n->n_outputs + 1;
  x->buf = (kd_tensor **)calloc(1, nb * sizeof(kd_tensor *) + nb * sizeof(int));
  if (!x->buf) {
    x->node = NULL;
    return kd_error(KD_ERR_OOM, "out of memory in backward");
  }
  x->capture = (int *)(x->buf + nb);
  for (int i = 0; i < n->n_outputs; i++) x->capture[i] = -1;
  r->count++;
  *out = x;
  return KD_OK;
}

static void kd_run_free(kd_run *r) {
  for (size_t i = 0; i < r->cap; i++) {
    kd_run_node *x = &r->tab[i];
    if (!x->node) continue;
    for (int j = 0; j < x->node->n_outputs; j++) if (x->buf[j]) kd_tensor_release(x->buf[j]);
    free(x->buf); /* capture lives in the same block */
  }
  free(r->tab);
}

/* ---- growable pointer stack / heap -------------------------------------------------------------- */
typedef struct kd_vec { kd_node **p; size_t n, cap; } kd_vec;
static kd_status kd_vec_push(kd_vec *v, kd_node *x) {
  if (v->n == v->cap) {
    size_t ncap = v->cap ? v->cap * 2 : 64;
    kd_node **np = (kd_node **)realloc(v->p, sizeof(kd_node *) * ncap);
    if (!np) return kd_error(KD_ERR_OOM, "out of memory in backward");
    v->p = np;
    v->cap = ncap;
  }
  v->p[v->n++] = x;
  return KD_OK;
}

/* max-heap on seq: among ready nodes, the most recently created runs first */
static kd_status kd_heap_push(kd_vec *h, kd_node *x) {
  KD_TRY(kd_vec_push(h, x));
  size_t i = h->n - 1;
  while (i > 0) {
    size_t p = (i - 1) / 2;
    if (h->p[p]->seq >= h->p[i]->seq) break;
    kd_node *t = h->p[p]; h->p[p] = h->p[i]; h->p[i] = t;
    i = p;
  }
  return KD_OK;
}
static kd_node *kd_heap_pop(kd_vec *h) {
  kd_node *top = h->p[0];
  h->p[0] = h->p[--h->n];
  size_t i = 0;
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < h->n && h->p[l]->seq > h->p[m]->seq) m = l;
    if (r < h->n && h->p[r]->seq > h->p[m]->seq) m = r;
    if (m == i) break;
    kd_node *t = h->p[m]; h->p[m] = h->p[i]; h->p[i] = t;
    i = m;
  }
  return top;
}

/* ---- the shared gradient helpers ---------------------------------------------------------------- */

static kd_status kd_call_below_grad(kd_op_id op, kd_value *a, kd_tensor **out) { return kd_call1(op, a, out); }

kd_status kd_autograd_reduce_to_input(kd_tensor *grad, const kd_edge *e, kd_tensor **out) {
  kd_tensor *g = grad;
  kd_tensor_retain(g);
  bool same = g->ndim == e->ndim && (e->ndim == 0 || memcmp(g->sizes, e->sizes, sizeof(int64_t) * e->ndim) == 0);
  if (!same) {
    int lead = g->ndim - e->ndim;
    int64_t dims[KD_MAX_DIMS];
    int nd = 0;
    bool ok = lead >= 0;
    for (int i = 0; ok && i < g->ndim; i++) {
      if (i < lead) { dims[nd++] = i; continue; }
      int64_t want = e->sizes[i - lead], have = g->sizes[i];
      if (want == have) continue;
      if (want == 1) dims[nd++] = i;
      else ok = false;
    }
    if (!ok) {
      char a[160], b[160];
      kd_shape_format(g->sizes, g->ndim, a, sizeof a);
      kd_shape_format(e->sizes, e->ndim, b, sizeof b);
      kd_tensor_release(g);
      return kd_error(KD_ERR_SHAPE, "a backward function returned an invalid gradient - got %s but expected shape compatible with %s", a, b);
    }
    kd_tensor *s = NULL;
    kd_status st = KD_OK;
    if (nd) {
      kd_value a[4] = {kd_value_tensor(g), kd_value_intlist(dims, nd), kd_value_bool(true), kd_value_none()};
      st = kd_call_below_grad(KD_OP_sum, a, &s);
      kd_tensor_release(g);
      if (st != KD_OK) return st;
      g = s;
    }
    if (lead > 0 || nd) {
      kd_value a[2] = {kd_value_tensor(g), kd_value_intlist(e->sizes, e->ndim)};
      st = kd_call_below_grad(KD_OP_reshape, a, &s);
      kd_tensor_release(g);
      if (st != KD_OK) return st;
      g = s;
    }
  }
  if (g->dtype != e->dtype || !kd_device_eq(kd_tensor_device(g), e->device)) {
    kd_value a[4] = {kd_value_tensor(g), kd_value_dtype(e->dtype), kd_value_device(e->device), kd_value_bool(false)};
    kd_tensor *s = NULL;
    kd_status st = kd_call_below_grad(KD_OP_to, a, &s);
    kd_tensor_release(g);
    if (st != KD_OK) return st;
    g = s;
  }
  *out = g;
  return KD_OK;
}

/* buf += g (out of place, so a recorded graph stays valid under create_graph). */
static kd_status kd_accumulate_into(kd_tensor **buf, kd_tensor *g) {
  if (!*buf) {
    kd_tensor_retain(g);
    *buf = g;
    return KD_OK;
  }
  kd_value a[3] = {kd_value_tensor(*buf), kd_value_tensor(g), kd_value_none()};
  kd_tensor *s = NULL;
  KD_TRY(kd_call1(KD_OP_add, a, &s));
  kd_tensor_release(*buf);
  *buf = s;
  return KD_OK;
}

/* Note [Hooks may do anything]
 * A hook is user code: it may dispose the tensor it watches, register or remove hooks (itself
 * included), or run another backward. So the hook list is never walked by its `next` pointers
 * while hooks run: the ids of the hooks present when the list is reached are taken first, and
 * each is looked up again (by id, from the list head) just before it runs; a hook removed
 * meanwhile is skipped, a hook added meanwhile waits for the next gradient. The head itself
 * must outlive the call: a node's list lives as long as the node (held by the graph being
 * run), a leaf's as long as its meta, so the engine holds a reference on the leaf while its
 * hooks run (see kd_leaf_hooks_run). */
static kd_hook *kd_hook_find(kd_hook *h, int64_t id) {
  for (; h; h = h->next)
    if (h->id == id) return h;
  return NULL;
}

/* A hook may replace a gradient only by one of the same shape, dtype and device (PyTorch's
 * check_single_result, with its messages): what it returns is accumulated into .grad or handed
 * to the node's formula as the gradient of that output. */
static kd_status kd_hook_result_check(const char *name, const kd_tensor *was, const kd_tensor *got) {
  if (got->dtype != was->dtype)
    return kd_error(KD_ERR_DTYPE, "hook '%s' has changed the type of value (was %s got %s)", name, kd_dtype_name(was->dtype),
                    kd_dtype_name(got->dtype));
  if (!kd_device_eq(kd_tensor_device(got), kd_tensor_device(was))) {
    char a[32], b[32];
    kd_device_format(kd_tensor_device(was), a, sizeof a);
    kd_device_format(kd_tensor_device(got), b, sizeof b);
    return kd_error(KD_ERR_DEVICE, "hook '%s' has changed the type of value (was a %s tensor got a %s tensor)", name, a, b);
  }
  if (got->ndim != was->ndim || (was->ndim && memcmp(got->sizes, was->sizes, sizeof(int64_t) * was->ndim) != 0))
    return kd_error(KD_ERR_SHAPE, "hook '%s' has changed the size of value", name);
  return KD_OK;
}

/* Runs the hooks of the list at *head for output nr on *grad (may replace it). */
static kd_status kd_run_hooks(kd_hook *const *head, int nr, bool leaf_list, kd_tensor **grad, bool create_graph) {
  int64_t ids_small[16];
  int64_t *ids = ids_small;
  int n = 0, cap = 16;
  for (kd_hook *h = *head; h; h = h->next) {
    if (!leaf_list && h->output_nr != nr) continue;
    if (n == cap) {
      int64_t *bigger = (int64_t *)malloc(sizeof(int64_t) * (size_t)cap * 2);
      if (!bigger) {
        if (ids != ids_small) free(ids);
        return kd_error(KD_ERR_OOM, "out of memory running gradient hooks");
      }
      memcpy(bigger, ids, sizeof(int64_t) * (size_t)n);
      if (ids != ids_small) free(ids);
      ids = bigger;
      cap *= 2;
    }
    ids[n++] = h->id;
  }
  kd_status st = KD_OK;
  for (int i = 0; i < n && st == KD_OK; i++) {
    kd_hook *h = kd_hook_find(*head, ids[i]);
    if (!h || !*grad) continue;
    if (!h->fn) { /* retain_grad */
      kd_tensor *g = *grad, *keep = NULL;
      if (create_graph) {
        kd_tensor_retain(g);
        keep = g;
      } else {
        kd_value a[1] = {kd_value_tensor(g)};
        if ((st = kd_call1(KD_OP_clone, a, &keep)) != KD_OK) break;
      }
      kd_tensor *old = h->retain->grad;
      if (old) {
        kd_value a[3] = {kd_value_tensor(old), kd_value_tensor(keep), kd_value_none()};
        kd_tensor *s = NULL;
        st = kd_call1(KD_OP_add, a, &s);
        kd_tensor_release(keep);
        if (st != KD_OK) break;
        keep = s;
        kd_tensor_release(old);
      }
      h->retain->grad = keep;
      continue;
    }
    char name[96];
    snprintf(name, sizeof name, "%s", h->name ? h->name : "<anonymous>");
    kd_tensor *repl = NULL;
    st = h->fn(h->data, *grad, &repl); /* h may be gone after this */
    if (st == KD_OK && repl) st = kd_hook_result_check(name, *grad, repl);
    if (st == KD_OK && repl) {
      kd_tensor_release(*grad);
      *grad = repl;
    } else if (repl) {
      kd_tensor_release(repl);
    }
  }
  if (ids != ids_small) free(ids);
  return st;
}

/* Runs a leaf's hooks on *grad, holding a reference on the leaf so that a hook disposing it
 * frees neither the leaf's meta nor its hook list under the engine (Note [Hooks may do
 * anything]). *leaf_kept gets that reference; the caller releases it when done with the leaf. */
static kd_status kd_leaf_hooks_run(kd_tensor *leaf, kd_tensor **grad, bool create_graph, kd_tensor **leaf_kept) {
  *leaf_kept = NULL;
  kd_autograd_meta *m = leaf ? kd_meta(leaf) : NULL;
  if (!m) return KD_OK;
  kd_tensor_retain(leaf);
  *leaf_kept = leaf;
  return kd_run_hooks(&m->hooks, 0, true, grad, create_graph);
}

/* leaf.grad += grad, taking over the reference `grad`. */
static kd_status kd_accumulate_into_leaf(kd_tensor *leaf, kd_tensor *grad, bool create_graph) {
  kd_autograd_meta *m = NULL;
  kd_status st = kd_meta_get(leaf, &m);
  if (st != KD_OK) { kd_tensor_release(grad); return st; }
  if (!m->grad) {
    if (create_graph || (grad->refcount <= 2 && kd_tensor_is_contiguous(grad))) {
      m->grad = grad; /* only the engine's buffer shares it: take it */
      return KD_OK;
    }
    kd_value a[1] = {kd_value_tensor(grad)};
    st = kd_call1(KD_OP_clone, a, &m->grad);
    kd_tensor_release(grad);
    return st;
  }
  kd_value a[3] = {kd_value_tensor(m->grad), kd_value_tensor(grad), kd_value_none()};
  kd_tensor *s = NULL;
  st = kd_call1(KD_OP_add, a, &s);
  kd_tensor_release(grad);
  if (st != KD_OK) return st;
  kd_tensor_release(m->grad);
  m->grad = s;
  return KD_OK;
}

static kd_status kd_accumulate_grad(kd_node *n, kd_tensor *grad, bool create_graph) {
  kd_tensor *leaf = n->leaf;
  if (!leaf || !grad) return KD_OK;
  kd_tensor *kept = NULL;
  kd_tensor_retain(grad);
  kd_status st = kd_leaf_hooks_run(leaf, &grad, create_graph, &kept);
  if (st == KD_OK) st = kd_accumulate_into_leaf(leaf, grad, create_graph);
  else kd_tensor_release(grad);
  if (kept) kd_tensor_release(kept);
  return st;
}

/* Opens the profiler's event for running node n, named as PyTorch's
 * "autograd::engine::evaluate_function: MulBackward0"; -1 when not profiling. */
static int64_t kd_profile_node(const kd_node *n) {
  if (!__atomic_load_n(&kd_profiler_enabled, __ATOMIC_RELAXED)) return -1;
  char nb[96];
  return kd_profiler_begin(KD_PROF_BACKWARD,
                           n->kind == KD_NODE_ACCUMULATE ? "autograd::engine::evaluate_function: torch::autograd::"
                                                         : "autograd::engine::evaluate_function: ",
                           kd_node_name(n, nb, sizeof nb));
}

/* Calls a node's backward: grads_out gets one gradient per edge (NULL: none). */
kd_status kd_node_apply(kd_node *n, kd_tensor **grads_in, kd_tensor **grads_out) {
  if (n->kind == KD_NODE_CUSTOM) return n->custom_apply(n, grads_in, grads_out);
  const kd_backward_spec *spec = kd_backward_table[n->op];
  kd_bw_ctx c;
  kd_bw_ctx_init(&c, n, grads_in);
  for (int i = 0; i < n->nargs && i < KD_BW_MAX_ARGS; i++) {
    for (int j = 0; j < n->edge_count[i]; j++)
      if (n->edges[n->edge_start[i] + j].fn) c.needs[i] = true;
  }
  kd_status st = spec->fn(&c);
  if (st == KD_OK) st = c.st;
  if (st == KD_OK) {
    for (int i = 0; i < n->nargs && i < KD_BW_MAX_ARGS; i++) {
      if (!c.needs[i]) continue;
      kd_value *r = &c.results[i];
      int s0 = n->edge_start[i];
      if (r->kind == KD_VALUE_TENSOR && n->edge_count[i] == 1) {
        grads_out[s0] = r->v.t;
        r->kind = KD_VALUE_NONE;
      } else if (r->kind == KD_VALUE_TENSORLIST) {
        for (int j = 0; j < n->edge_count[i] && j < r->v.tlist.n; j++) {
          grads_out[s0 + j] = r->v.tlist.data[j];
          r->v.tlist.data[j] = NULL;
        }
      }
    }
  }
  kd_bw_ctx_free(&c);
  return st;
}

static bool kd_has_nan(kd_tensor *g) {
  kd_tensor *m = NULL, *any = NULL;
  if (kd_call1(KD_OP_ne, (kd_value[]){kd_value_tensor(g), kd_value_tensor(g)}, &m) != KD_OK) return false;
  kd_value b[4] = {kd_value_tensor(m), kd_value_none(), kd_value_bool(false), kd_value_none()};
  bool r = false;
  if (kd_call1(KD_OP_sum, b, &any) == KD_OK) {
    kd_tensor *cpu = any;
    if (kd_tensor_device(any).type == KD_DEVICE_CPU) r = *(int64_t *)kd_tensor_data(cpu) != 0;
    kd_tensor_release(any);
  }
  kd_tensor_release(m);
  return r;
}

kd_status kd_autograd_run(kd_tensor **roots, kd_tensor **grads, int n_roots, kd_tensor **inputs, int n_inputs,
                          const kd_backward_opts *opts, kd_tensor **results) {
  kd_run run = {0};
  kd_vec stack = {0}, order = {0}, ready = {0};
  kd_status st = KD_OK;
  bool prev_grad = kd_grad_enabled();
  kd_node **root_fn = (kd_node **)calloc((size_t)n_roots + 1, sizeof(kd_node *));
  int *root_nr = (int *)calloc((size_t)n_roots + 1, sizeof(int));
  kd_tensor **root_grad = (kd_tensor **)calloc((size_t)n_roots + 1, sizeof(kd_tensor *));
  kd_node **in_fn = (kd_node **)calloc((size_t)n_inputs + 1, sizeof(kd_node *));
  int *in_nr = (int *)calloc((size_t)n_inputs + 1, sizeof(int));
  if (!root_fn || !root_nr || !root_grad || !in_fn || !in_nr) { st = kd_error(KD_ERR_OOM, "out of memory in backward"); goto done; }
  for (int i = 0; i < n_inputs; i++) results[i] = NULL;

  /* roots and their gradients */
  for (int i = 0; i < n_roots; i++) {
    kd_tensor *r = roots[i];
    if (!kd_requires_grad(r)) {
      st = kd_error(KD_ERR_INVALID_ARGUMENT, "element %d of tensors does not require grad and does not have a grad_fn", i);
      goto done;
    }
    if (grads[i]) {
      kd_tensor *g = grads[i];
      bool same = g->ndim == r->ndim && (r->ndim == 0 || memcmp(g->sizes, r->sizes, sizeof(int64_t) * r->ndim) == 0);
      if (!same) {
        char a[160], b[160];
        kd_shape_format(g->sizes, g->ndim, a, sizeof a);
        kd_shape_format(r->sizes, r->ndim, b, sizeof b);
        st = kd_error(KD_ERR_SHAPE, "Mismatch in shape: grad_output[%d] has a shape of %s and output[%d] has a shape of %s.", i, a, i, b);
        goto done;
      }
      kd_tensor_retain(g);
      root_grad[i] = g;
    } else {
      if (kd_tensor_numel(r) != 1) {
        st = kd_error(KD_ERR_INVALID_ARGUMENT, "grad can be implicitly created only for scalar outputs");
        goto done;
      }
      kd_value a[3] = {kd_value_tensor(r), kd_value_dtype(r->dtype), kd_value_device(kd_tensor_device(r))};
      st = kd_call1(KD_OP_onesLike, a, &root_grad[i]);
      if (st != KD_OK) goto done;
    }
    st = kd_gradient_edge(r, &root_fn[i], &root_nr[i]);
    if (st != KD_OK) goto done;
  }
  for (int i = 0; i < n_inputs; i++) {
    kd_tensor *t = inputs[i];
    if (!kd_requires_grad(t)) {
      st = kd_error(KD_ERR_INVALID_ARGUMENT, "One of the differentiated Tensors does not require grad");
      goto done;
    }
    kd_autograd_meta *m = kd_meta(t);
    if ((st = kd_view_update(t)) != KD_OK) goto done;
    if (m->grad_fn) {
      in_fn[i] = m->grad_fn;
      in_nr[i] = m->output_nr;
    } else {
      in_fn[i] = m->accumulator; /* NULL: the leaf is not in any graph */
      in_nr[i] = 0;
    }
  }

  /* 1. every node reachable from the roots, in post-order (children before parents): an
   * iterative DFS; state 0 = seen, 1 = children pushed, 2 = finished. A node seen but not yet
   * expanded is pushed again by every parent that meets it, so it finishes before all of them. */
  for (int i = 0; i < n_roots; i++) {
    kd_run_node *x;
    if ((st = kd_run_add(&run, root_fn[i], &x)) != KD_OK) goto done;
    if ((st = kd_vec_push(&stack, root_fn[i])) != KD_OK) goto done;
  }
  while (stack.n) {
    kd_node *n = stack.p[stack.n - 1];
    kd_run_node *x = kd_run_find(&run, n);
    if (x->state == 0) {
      x->state = 1;
      for (int e = 0; e < n->n_edges; e++) {
        kd_node *c = n->edges[e].fn;
        if (!c) continue;
        kd_run_node *y = kd_run_find(&run, c);
        if (!y && (st = kd_run_add(&run, c, &y)) != KD_OK) goto done;
        if (y->state == 0 && (st = kd_vec_push(&stack, c)) != KD_OK) goto done;
      }
    } else {
      stack.n--;
      if (x->state == 1) {
        x->state = 2;
        if ((st = kd_vec_push(&order, n)) != KD_OK) goto done;
      }
    }
  }
  /* 2. captures and which nodes are needed (children before parents in post-order) */
  bool restrict_inputs = n_inputs > 0;
  for (int i = 0; i < n_inputs; i++) {
    if (!in_fn[i]) continue;
    kd_run_node *x = kd_run_find(&run, in_fn[i]);
    if (x) x->capture[in_nr[i]] = i;
  }
  for (size_t k = 0; k < order.n; k++) {
    kd_node *n = order.p[k];
    kd_run_node *x = kd_run_find(&run, n);
    if (!restrict_inputs) {
      x->needed = true;
      continue;
    }
    for (int j = 0; j < n->n_outputs; j++) if (x->capture[j] >= 0) x->needed = true;
    for (int e = 0; e < n->n_edges && !x->needed; e++) {
      kd_node *c = n->edges[e].fn;
      if (c && kd_run_find(&run, c)->needed) x->needed = true;
    }
  }
  /* 3. dependencies among needed nodes */
  for (size_t k = 0; k < order.n; k++) {
    kd_node *n = order.p[k];
    kd_run_node *x = kd_run_find(&run, n);
    if (!x->needed) continue;
    for (int e = 0; e < n->n_edges; e++) {
      kd_node *c = n->edges[e].fn;
      if (c) {
        kd_run_node *y = kd_run_find(&run, c);
        if (y->needed) y->deps++;
      }
    }
  }
  /* 4. seed the roots' gradients */
  for (int i = 0; i < n_roots; i++) {
    kd_run_node *x = kd_run_find(&run, root_fn[i]);
    if ((st = kd_accumulate_into(&x->buf[root_nr[i]], root_grad[i])) != KD_OK) goto done;
  }
  for (int i = 0; i < n_roots; i++) {
    kd_run_node *x = kd_run_find(&run, root_fn[i]);
    if (x->needed && x->deps == 0 && !x->queued) {
      x->queued = true;
      if ((st = kd_heap_push(&ready, root_fn[i])) != KD_OK) goto done;
    }
  }

  /* 5. execute */
  kd_set_grad_enabled(opts->create_graph);
  while (ready.n) {
    kd_node *n = kd_heap_pop(&ready);
    kd_run_node *x = kd_run_find(&run, n);
    /* hooks on this node's outputs (tensor hooks, retain_grad), then captures */
    for (int j = 0; j < n->n_outputs && n->kind != KD_NODE_ACCUMULATE; j++)
      if ((st = kd_run_hooks(&n->hooks, j, false, &x->buf[j], opts->create_graph)) != KD_OK) goto done;
    bool run_it = true;
    for (int j = 0; j < n->n_outputs; j++) {
      int ci = x->capture[j];
      if (ci < 0) continue;
      kd_tensor *g = x->buf[j];
      if (n->kind == KD_NODE_ACCUMULATE && g) {
        kd_tensor *kept = NULL;
        st = kd_leaf_hooks_run(n->leaf, &x->buf[j], opts->create_graph, &kept);
        if (kept) kd_tensor_release(kept);
        if (st != KD_OK) goto done;
        g = x->buf[j];
      }
      if (!opts->accumulate && g) {
        kd_tensor_retain(g);
        results[ci] = g;
      } else if (opts->accumulate && g && n->kind != KD_NODE_ACCUMULATE) {
        /* backward(inputs=[non-leaf]): its .grad receives the gradient */
        kd_autograd_meta *m = kd_meta(inputs[ci]);
        kd_tensor *keep = NULL;
        kd_value a[1] = {kd_value_tensor(g)};
        if ((st = kd_call1(KD_OP_clone, a, &keep)) != KD_OK) goto done;
        if (m->grad) {
          kd_value b[3] = {kd_value_tensor(m->grad), kd_value_tensor(keep), kd_value_none()};
          kd_tensor *sum = NULL;
          st = kd_call1(KD_OP_add, b, &sum);
          kd_tensor_release(keep);
          if (st != KD_OK) goto done;
          keep = sum;
          kd_tensor_release(m->grad);
        }
        m->grad = keep;
      }
      if (!opts->accumulate && n->kind == KD_NODE_ACCUMULATE) run_it = false;
    }
    if (n->kind == KD_NODE_ACCUMULATE) {
      if (run_it && opts->accumulate) {
        int64_t prof = kd_profile_node(n);
        st = kd_accumulate_grad(n, x->buf[0], opts->create_graph);
        kd_profiler_end(prof);
        if (st != KD_OK) goto done;
      }
      continue;
    }
    if (!opts->accumulate && restrict_inputs) {
      /* nothing below this node is needed: it was only a capture point */
      bool below = false;
      for (int e = 0; e < n->n_edges && !below; e++)
        if (n->edges[e].fn && kd_run_find(&run, n->edges[e].fn)->needed) below = true;
      if (!below) continue;
    }
    kd_tensor *gout_small[8] = {NULL};
    kd_tensor **gout = n->n_edges <= 8 ? gout_small : (kd_tensor **)calloc((size_t)n->n_edges + 1, sizeof(kd_tensor *));
    if (!gout) { st = kd_error(KD_ERR_OOM, "out of memory in backward"); goto done; }
    int64_t prof = kd_profile_node(n);
    st = kd_node_apply(n, x->buf, gout);
    kd_profiler_end(prof);
    if (st == KD_OK && kd_anomaly_enabled()) {
      for (int e = 0; e < n->n_edges; e++) {
        if (gout[e] && kd_dtype_is_float(gout[e]->dtype) && kd_has_nan(gout[e])) {
          char nb[96];
          st = kd_error(KD_ERR_INVALID_ARGUMENT, "Function '%s' returned nan values in its %dth output.%s%s",
                        kd_node_name(n, nb, sizeof nb), e,
                        n->trace ? "\nTraceback of forward call that caused the error:\n" : "", n->trace ? n->trace : "");
          break;
        }
      }
    }
    for (int e = 0; e < n->n_edges; e++) {
      kd_edge *ed = &n->edges[e];
      kd_tensor *g = gout[e];
      if (st == KD_OK && ed->fn && g) {
        kd_run_node *y = kd_run_find(&run, ed->fn);
        if (y && y->needed && !y->queued) {
          kd_tensor *r = NULL;
          st = kd_autograd_reduce_to_input(g, ed, &r);
          if (st == KD_OK) {
            st = kd_accumulate_into(&y->buf[ed->input_nr], r);
            kd_tensor_release(r);
          }
        }
      }
      if (g) kd_tensor_release(g);
    }
    if (gout != gout_small) free(gout);
    if (st != KD_OK) goto done;
    if (!opts->keep_graph) kd_node_release_saved(n);
    for (int j = 0; j < n->n_outputs; j++)
      if (x->buf[j]) { kd_tensor_release(x->buf[j]); x->buf[j] = NULL; }
    for (int e = 0; e < n->n_edges; e++) {
      kd_node *c = n->edges[e].fn;
      if (!c) continue;
      kd_run_node *y = kd_run_find(&run, c);
      if (!y || !y->needed) continue;
      if (--y->deps == 0 && !y->queued) {
        y->queued = true;
        if ((st = kd_heap_push(&ready, c)) != KD_OK) goto done;
      }
    }
  }
  if (!opts->accumulate && !opts->allow_unused) {
    for (int i = 0; i < n_inputs; i++) {
      if (!results[i]) {
        st = kd_error(KD_ERR_INVALID_ARGUMENT,
                      "One of the differentiated Tensors appears to not have been used in the graph. Set allow_unused=True "
                      "if this is the desired behavior.");
        break;
      }
    }
  }

done:
  kd_set_grad_enabled(prev_grad);
  if (st != KD_OK && results)
    for (int i = 0; i < n_inputs; i++) if (results[i]) { kd_tensor_release(results[i]); results[i] = NULL; }
  kd_run_free(&run); /* before the roots' references go: they keep every node alive */
  if (root_fn) for (int i = 0; i < n_roots; i++) if (root_fn[i]) kd_node_release(root_fn[i]);
  if (root_grad) for (int i = 0; i < n_roots; i++) if (root_grad[i]) kd_tensor_release(root_grad[i]);
  free(root_fn);
  free(root_nr);
  free(root_grad);
  free(in_fn);
  free(in_nr);
  free(stack.p);
  free(order.p);
  free(ready.p);
  return st;
}
