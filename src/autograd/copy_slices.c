/* copy_slices.c - in-place ops on views under autograd (see Note [Views and in-place ops] in
 * autograd.h), after PyTorch's torch/csrc/autograd (variable.cpp: as_view, rebase_history,
 * VariableHooks::grad_fn, handle_view_on_rebase; functions/tensor.cpp: CopySlices):
 *   - kd_view_track: a view op's output remembers its root base, how it was made, and the version;
 *   - kd_view_check_inplace: PyTorch's errors for in-place ops on views that cannot be recorded;
 *   - kd_view_rebase: the base's history becomes CopySlices(base's old history, view geometry,
 *     the in-place op's node), and the view's grad_fn AsStridedBackward0 of the base;
 *   - kd_view_regenerate: a view whose base changed in place since its grad_fn was set gets
 *     AsStridedBackward0 of the base's current history;
 *   - the two custom nodes, CopySlices and AsStridedBackward0. Their backward is written with
 *     kindling ops (asStrided, copy_, clone, _internal.asStridedBackward), so it runs on any device
 *     and records a graph under create_graph (double backward). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autograd/autograd.h"
#include "ops/kernel.h"
#include "ops/ops_gen.h"

/* A tensor's geometry: sizes, strides and storage offset (in elements). */
typedef struct kd_geom {
  int ndim;
  int64_t offset;
  int64_t sizes[KD_MAX_DIMS];
  int64_t strides[KD_MAX_DIMS];
} kd_geom;

static void kd_geom_of(kd_geom *g, const kd_tensor *t) {
  g->ndim = t->ndim;
  g->offset = t->offset;
  if (t->ndim) {
    memcpy(g->sizes, t->sizes, sizeof(int64_t) * t->ndim);
    memcpy(g->strides, t->strides, sizeof(int64_t) * t->ndim);
  }
}

static void kd_out_meta_of(kd_out_meta *o, const kd_tensor *t) {
  o->ndim = t->ndim;
  o->dtype = t->dtype;
  o->device = kd_tensor_device(t);
  if (t->ndim) memcpy(o->sizes, t->sizes, sizeof(int64_t) * t->ndim);
}

/* ---- views ------------------------------------------------------------------------------------- */

kd_status kd_view_track(kd_tensor *self, kd_tensor *view, bool grad_mode) {
  if (view == self || !(view->keys & KD_KEYSET(KD_KEY_AUTOGRAD))) return KD_OK;
  kd_autograd_meta *sm = kd_meta(self);
  kd_tensor *base = sm && sm->base ? sm->base : self;
  kd_autograd_meta *m = NULL;
  KD_TRY(kd_meta_get(view, &m));
  kd_tensor_retain(base);
  if (m->base) kd_tensor_release(m->base);
  m->base = base;
  m->is_view = true;
  m->creation = grad_mode ? KD_VIEW_DEFAULT : KD_VIEW_NO_GRAD;
  if (sm && sm->base && sm->creation != KD_VIEW_DEFAULT && m->creation == KD_VIEW_DEFAULT) {
    /* PyTorch's propagate_creation_meta: a view of a view keeps the restriction of its input */
    m->creation = sm->creation;
    m->multi_op = sm->multi_op;
    m->multi_index = sm->multi_index;
  }
  m->attr_version = kd_tensor_version(view);
  return KD_OK;
}

/* handle_view_on_rebase: the error for an in-place op on (indirect: the base of) a view that
 * was not made in grad mode or is one of several views returned by one function. */
static kd_status kd_view_rebase_error(kd_autograd_meta *m, bool indirect) {
  const char *what = indirect ? "its base or another view of its base has been" : "is being";
  char head[256], nb[96];
  if (m->grad_fn) {
    const char *name;
    int nr = m->output_nr;
    if (m->creation == KD_VIEW_MULTI_OUTPUT) {
      name = m->multi_op == -1 ? "SplitWithSizesBackward0" : m->multi_op == KD_OP_unbind ? "UnbindBackward0" : "SplitBackward0";
      nr = m->multi_index;
    } else {
      name = kd_node_name(m->grad_fn, nb, sizeof nb);
    }
    snprintf(head, sizeof head, "Output %d of %s is a view and %s modified inplace.", nr, name, what);
  } else {
    snprintf(head, sizeof head, "A view was created in no_grad mode and %s modified inplace with grad mode enabled.", what);
  }
  if (m->creation == KD_VIEW_MULTI_OUTPUT)
    return kd_error(KD_ERR_INVALID_ARGUMENT,
                    "%s This view is the output of a function that returns multiple views. Such functions do not allow the "
                    "output views to be modified inplace. You should replace the inplace operation by an out-of-place one.",
                    head);
  return kd_error(KD_ERR_INVALID_ARGUMENT,
                  "%s Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by "
                  "moving both the view and the inplace either both inside the no_grad block (if you don't want the inplace "
                  "to be tracked) or both outside (if you want the inplace to be tracked).",
                  head);
}

kd_status kd_view_check_inplace(kd_tensor *self) {
  kd_autograd_meta *m = kd_meta(self);
  if (m->creation != KD_VIEW_DEFAULT) return kd_view_rebase_error(m, false);
  if (kd_requires_grad(self) && kd_is_leaf(m->base))
    return kd_error(KD_ERR_INVALID_ARGUMENT, "a view of a leaf Variable that requires grad is being used in an in-place operation.");
  return KD_OK;
}

/* Sets a view's grad_fn to n (a new reference), dropping the old one and its retain_grad hook. */
static void kd_view_set_grad_fn(kd_autograd_meta *m, kd_node *n, uint32_t version) {
  if (m->grad_fn) {
    kd_node_forget_meta(m->grad_fn, m);
    m->retains_grad = false;
    kd_node_release(m->grad_fn);
  }
  m->grad_fn = n;
  m->output_nr = 0;
  m->requires_grad = true;
  m->attr_version = version;
}

kd_status kd_view_regenerate(kd_tensor *t) {
  kd_autograd_meta *m = kd_meta(t);
  if (!m->grad_fn && !kd_requires_grad(m->base)) return KD_OK;
  if (m->creation != KD_VIEW_DEFAULT) return kd_view_rebase_error(m, true);
  kd_node *n = NULL;
  KD_TRY(kd_as_strided_node(m->base, t, &n));
  kd_view_set_grad_fn(m, n, kd_tensor_version(t));
  return KD_OK;
}

/* ---- AsStridedBackward0 ------------------------------------------------------------------------- */

typedef struct kd_as_strided_data {
  kd_geom in, out;
} kd_as_strided_data;

static kd_status kd_as_strided_apply(kd_node *n, kd_tensor **grads, kd_tensor **grads_out) {
  const kd_as_strided_data *d = (const kd_as_strided_data *)n->custom_data;
  if (!grads[0] || !n->edges[0].fn) return KD_OK;
  kd_value a[7] = {kd_value_tensor(grads[0]),
                   kd_value_intlist(d->in.sizes, d->in.ndim),
                   kd_value_intlist(d->in.strides, d->in.ndim),
                   kd_value_int(d->in.offset),
                   kd_value_intlist(d->out.sizes, d->out.ndim),
                   kd_value_intlist(d->out.strides, d->out.ndim),
                   kd_value_int(d->out.offset)};
  return kd_call1(KD_OP_asStridedBackward, a, &grads_out[0]);
}

static void kd_custom_data_free(kd_node *n) { free(n->custom_data); }

kd_status kd_as_strided_node(kd_tensor *input, const kd_tensor *view, kd_node **out) {
  kd_node *n = kd_node_new(KD_NODE_CUSTOM, 1, 1);
  kd_as_strided_data *d = (kd_as_strided_data *)malloc(sizeof *d);
  if (!n || !d) {
    free(d);
    if (n) kd_node_release(n);
    return kd_error(KD_ERR_OOM, "out of memory");
  }
  kd_geom_of(&d->in, input);
  kd_geom_of(&d->out, view);
  n->custom_apply = kd_as_strided_apply;
  n->custom_free = kd_custom_data_free;
  n->custom_data = d;
  n->custom_name = "AsStridedBackward0";
  kd_out_meta_of(&n->outs[0], view);
  kd_edge_set_meta(&n->edges[0], input);
  kd_status st = kd_gradient_edge(input, &n->edges[0].fn, &n->edges[0].input_nr);
  if (st != KD_OK) {
    kd_node_release(n);
    return st;
  }
  *out = n;
  return KD_OK;
}

/* ---- CopySlices ---------------------------------------------------------------------------------- */

typedef struct kd_copy_slices_data {
  kd_geom base;   /* offset 0 */
  kd_geom view;   /* offset relative to the base's */
} kd_copy_slices_data;

static bool kd_geom_contiguous(const kd_geom *g) {
  int64_t expect = 1;
  for (int i = g->ndim - 1; i >= 0; i--) {
    if (g->sizes[i] != 1 && g->strides[i] != expect) return false;
    expect *= g->sizes[i];
  }
  return true;
}

static kd_status kd_as_strided_call(kd_tensor *t, const kd_geom *g, int64_t offset, kd_tensor **out) {
  kd_value a[4] = {kd_value_tensor(t), kd_value_intlist(g->sizes, g->ndim), kd_value_intlist(g->strides, g->ndim),
                   kd_value_int(offset)};
  return kd_call1(KD_OP_asStrided, a, out);
}

static kd_status kd_copy_into(kd_tensor *dst, kd_tensor *src) {
  kd_value a[2] = {kd_value_tensor(dst), kd_value_tensor(src)};
  kd_value o[KD_OP_MAX_OUTS];
  KD_TRY(kd_call(KD_OP_copy_, a, o));
  for (int i = 0; i < KD_OP_MAX_OUTS; i++) kd_value_release(&o[i]);
  return KD_OK;
}

/* PyTorch's CopySlices::apply: the base's gradient with the view's region replaced by the
 * gradient the in-place op's node gives its input self; the node's other gradients pass on. */
static kd_status kd_copy_slices_apply(kd_node *n, kd_tensor **grads, kd_tensor **grads_out) {
  const kd_copy_slices_data *d = (const kd_copy_slices_data *)n->custom_data;
  kd_node *fn = n->inner;
  kd_tensor *grad = grads[0];
  if (!grad) return KD_OK;
  kd_tensor *result = NULL, *slice = NULL, *fn_in = NULL, *flat = NULL;
  kd_tensor *res_small[8] = {NULL};
  kd_tensor **res = fn->n_edges <= 8 ? res_small : (kd_tensor **)calloc((size_t)fn->n_edges, sizeof(kd_tensor *));
  if (!res) return kd_error(KD_ERR_OOM, "out of memory in backward");
  kd_status st;
  /* result: a copy of grad laid out with the base's strides, so the view's geometry finds its
   * region in it (the base is not a view, so usually contiguous: a plain clone) */
  if (kd_geom_contiguous(&d->base)) {
    kd_value a[3] = {kd_value_intlist(d->base.sizes, d->base.ndim), kd_value_dtype(grad->dtype),
                     kd_value_device(kd_tensor_device(grad))};
    st = kd_call1(KD_OP_empty, a, &result);
  } else {
    int64_t span = 1;
    for (int i = 0; i < d->base.ndim; i++) span += (d->base.sizes[i] - 1) * d->base.strides[i];
    for (int i = 0; i < d->base.ndim; i++) if (d->base.sizes[i] == 0) span = 0;
    kd_value a[3] = {kd_value_intlist(&span, 1), kd_value_dtype(grad->dtype), kd_value_device(kd_tensor_device(grad))};
    st = kd_call1(KD_OP_zeros, a, &flat);
    if (st == KD_OK) st = kd_as_strided_call(flat, &d->base, 0, &result);
  }
  if (st == KD_OK) st = kd_copy_into(result, grad);
  if (st == KD_OK) st = kd_as_strided_call(result, &d->view, result->offset + d->view.offset, &slice);
  if (st == KD_OK) {
    kd_value a[1] = {kd_value_tensor(slice)};
    st = kd_call1(KD_OP_clone, a, &fn_in);
  }
  kd_tensor *fn_grads[KD_OP_MAX_OUTS] = {NULL};
  if (st == KD_OK) {
    fn_grads[0] = fn_in;
    st = kd_node_apply(fn, fn_grads, res);
    /* kd_node_apply may fill zeros for outputs without gradient: those are owned here */
    for (int i = 1; i < fn->n_outputs && i < KD_OP_MAX_OUTS; i++)
      if (fn_grads[i]) kd_tensor_release(fn_grads[i]);
    if (fn_grads[0] && fn_grads[0] != fn_in) kd_tensor_release(fn_grads[0]);
  }
  if (st == KD_OK && n->edges[0].fn) {
    if (res[0]) {
      kd_tensor *r0 = NULL;
      st = kd_autograd_reduce_to_input(res[0], &fn->edges[0], &r0);
      if (st == KD_OK) {
        st = kd_copy_into(slice, r0);
        kd_tensor_release(r0);
      }
    } else {
      kd_value a[2] = {kd_value_tensor(slice), kd_value_scalar(kd_scalar_i(0))};
      kd_value o[KD_OP_MAX_OUTS];
      st = kd_call(KD_OP_fill_, a, o);
      if (st == KD_OK) for (int i = 0; i < KD_OP_MAX_OUTS; i++) kd_value_release(&o[i]);
    }
    if (st == KD_OK) {
      grads_out[0] = result;
      result = NULL;
    }
  }
  for (int i = 1; i < fn->n_edges; i++) {
    if (st == KD_OK && i < n->n_edges) {
      grads_out[i] = res[i];
      res[i] = NULL;
    }
  }
  for (int i = 0; i < fn->n_edges; i++) if (res[i]) kd_tensor_release(res[i]);
  if (res != res_small) free(res);
  if (fn_in) kd_tensor_release(fn_in);
  if (slice) kd_tensor_release(slice);
  if (result) kd_tensor_release(result);
  if (flat) kd_tensor_release(flat);
  return st;
}

kd_status kd_view_rebase(kd_tensor *self, kd_node *fn) {
  kd_autograd_meta *m = kd_meta(self);
  kd_tensor *base = m->base;
  kd_node *n = kd_node_new(KD_NODE_CUSTOM, fn->n_edges > 0 ? fn->n_edges : 1, 1);
  kd_copy_slices_data *d = (kd_copy_slices_data *)malloc(sizeof *d);
  if (!n || !d) {
    free(d);
    if (n) kd_node_release(n);
    return kd_error(KD_ERR_OOM, "out of memory");
  }
  kd_geom_of(&d->base, base);
  kd_geom_of(&d->view, self);
  d->view.offset -= d->base.offset;
  d->base.offset = 0;
  n->custom_apply = kd_copy_slices_apply;
  n->custom_free = kd_custom_data_free;
  n->custom_data = d;
  n->custom_name = "CopySlices";
  kd_node_retain(fn);
  n->inner = fn;
  kd_out_meta_of(&n->outs[0], base);
  /* edge 0: the base's history so far; the others: the in-place op's other inputs */
  kd_edge_set_meta(&n->edges[0], base);
  kd_status st = kd_gradient_edge(base, &n->edges[0].fn, &n->edges[0].input_nr);
  for (int i = 1; i < fn->n_edges; i++) {
    n->edges[i] = fn->edges[i];
    if (n->edges[i].fn) kd_node_retain(n->edges[i].fn);
  }
  if (st != KD_OK) {
    kd_node_release(n);
    return st;
  }
  kd_autograd_meta *bm = NULL;
  st = kd_meta_get(base, &bm);
  if (st != KD_OK) {
    kd_node_release(n);
    return st;
  }
  if (bm->grad_fn) {
    if (bm->retains_grad) { /* the retain hook of the old node no longer applies */
      kd_node_forget_meta(bm->grad_fn, bm);
      bm->retains_grad = false;
    }
    kd_node_release(bm->grad_fn);
  }
  bm->grad_fn = n; /* the node's creation reference */
  bm->output_nr = 0;
  bm->requires_grad = true;
  /* the view: AsStridedBackward0 of the base's new history, at the version the op's dispatch
   * is about to set (kd_call bumps it after the kernel returns) */
  kd_node *v = NULL;
  st = kd_as_strided_node(base, self, &v);
  if (st != KD_OK) return st;
  kd_view_set_grad_fn(m, v, kd_tensor_version(self) + 1);
  return KD_OK;
}
