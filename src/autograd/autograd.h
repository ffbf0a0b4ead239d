/* autograd.h - reverse-mode automatic differentiation: per-tensor autograd metadata, the graph
 * nodes recorded by the Autograd dispatch key, grad mode, and the engine entry points.
 *
 * The picture (as PyTorch's torch/csrc/autograd):
 *   - a tensor that requires grad has a kd_autograd_meta: requires_grad, grad, grad_fn (the node
 *     that produced it, NULL for leaves), output_nr (which output of grad_fn it is), hooks;
 *   - the Autograd kernel (record.c), registered at KD_KEY_AUTOGRAD for every op with a backward
 *     formula, runs the op below itself and, when grad mode is on and an input requires grad,
 *     records a kd_node: the saved values its formula needs (with their versions), the metadata of
 *     each input, and one edge per differentiable input to the node that produced that input
 *     (or to the input's AccumulateGrad when it is a leaf);
 *   - the engine (engine.c) walks the graph from the roots in dependency order, iteratively,
 *     calls each node's backward, sums a gradient back to its input's shape/dtype/device (one
 *     helper, kd_autograd_reduce_to_input), and accumulates into leaves' .grad.
 * Backward formulas are written with kindling ops (src/ops/oplist/, field `backward`), compiled by
 * tools/gen-backward.js into src/ops/backward_gen.c, so they run on any device and can be
 * differentiated again (create_graph). */
#ifndef KD_AUTOGRAD_H
#define KD_AUTOGRAD_H

#include <stdbool.h>
#include <stdint.h>

#include "core/device.h"
#include "core/status.h"
#include "core/tensor.h"
#include "dispatch/dispatch.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kd_node kd_node;

/* A hook on the gradient of a tensor. It may replace the gradient: set *out to a new reference
 * (or leave it NULL to keep the gradient). A replacement must have the gradient's shape, dtype
 * and device, or backward fails (PyTorch's check of a hook's result). Used for JS hooks
 * (src/napi/autograd.c). */
typedef kd_status (*kd_grad_hook_fn)(void *data, kd_tensor *grad, kd_tensor **out);
typedef void (*kd_grad_hook_free_fn)(void *data);

typedef struct kd_hook {
  struct kd_hook *next;
  int64_t id;
  char *name;               /* owned: for errors ("hook 'scale' has changed the size of value") */
  int output_nr;            /* which output of the node the hook watches (node hooks) */
  kd_grad_hook_fn fn;       /* NULL: a retain_grad hook writing into `retain` */
  kd_grad_hook_free_fn free_data;
  void *data;
  struct kd_autograd_meta *retain; /* retain_grad: the non-leaf whose .grad receives the gradient */
} kd_hook;

/* How a differentiable view was made (PyTorch's CreationMeta): in-place ops on views made any
 * other way than DEFAULT are errors when they would be recorded (see copy_slices.c). */
typedef enum kd_view_creation {
  KD_VIEW_DEFAULT = 0,
  KD_VIEW_NO_GRAD,          /* made while grad mode was off */
  KD_VIEW_MULTI_OUTPUT      /* an output of split/chunk/unbind */
} kd_view_creation;

typedef struct kd_autograd_meta {
  bool requires_grad;
  bool retains_grad;
  bool is_view;             /* a differentiable view: base is set (see Note [Views and in-place ops]) */
  uint8_t creation;         /* kd_view_creation of a view */
  int output_nr;
  int multi_op;             /* KD_VIEW_MULTI_OUTPUT: the op that returned the views, and which of its */
  int multi_index;          /* outputs this is (for the message) */
  kd_tensor *base;          /* owned: the root base of a view (views of views collapse to it) */
  uint32_t attr_version;    /* of a view: the storage version when grad_fn was last set */
  kd_tensor *grad;          /* owned */
  kd_node *grad_fn;         /* owned reference; NULL for leaves */
  kd_node *accumulator;     /* owned: the leaf's AccumulateGrad node (made on first use, kept with the
                               leaf, so recording an op on a leaf allocates no node for it) */
  kd_hook *hooks;           /* leaf hooks (run before accumulation) */
  kd_tensor *self;          /* back pointer (weak) */
} kd_autograd_meta;

/* One input of a node: where its gradient goes, and what that input looked like. */
typedef struct kd_edge {
  kd_node *fn;              /* owned reference; NULL: this input needs no gradient */
  int input_nr;             /* which output of fn (the gradient slot of fn) */
  bool col_major;           /* a column-major matrix (t() of a contiguous one): the formulas of mm and
                               addmm pick their gemm's layout by it, as PyTorch's mm_mat*_backward */
  int ndim;
  kd_dtype dtype;
  kd_device device;
  int64_t sizes[KD_MAX_DIMS];
} kd_edge;

/* Output metadata of a node (to make zeros for outputs that got no gradient). */
typedef struct kd_out_meta {
  int ndim;
  kd_dtype dtype;
  kd_device device;
  int64_t sizes[KD_MAX_DIMS];
} kd_out_meta;

typedef enum kd_node_kind { KD_NODE_OP, KD_NODE_ACCUMULATE, KD_NODE_CUSTOM } kd_node_kind;

/* A tensor saved for backward, with the version it had when saved.
 * Note [Saved tensors hold no tensor with a history]
 * What a node saves is an alias of the tensor's storage without autograd meta, never the tensor
 * itself (PyTorch's SavedVariable saves the data and the metadata it needs, not the variable,
 * wherever the variable could lead back to the node). With the alias: the version the tensor had
 * (the storage's counter, shared by views and their base: an in-place op on any of them is seen
 * when the value is unpacked), and, for an input that requires grad, where its gradient goes
 * (`producer`: its grad_fn, a view's brought up to date, or a leaf's AccumulateGrad, which holds
 * the leaf weakly). A tensor owns its grad_fn and a view owns its base, so holding the tensor
 * would close a cycle as soon as the tensor's history comes to lead back to this node: an
 * output saved by its own node (y = exp(x)), an input that an in-place op later gives a history
 * through this node (t.sub_(f(t))), or a view whose base is modified in place with a value
 * computed from the view (c.clamp_(c.narrow(0, 0, 2).max())). No dispose or GC frees such a
 * cycle. Saved tensor lists (cat) are aliases too. Unpacked with create_graph, an alias is
 * connected again: an output to this node, an input to its producer (kd_saved_unpack). */
typedef struct kd_saved {
  kd_tensor *t;
  int64_t version;
  bool is_output;
  bool alias_of_input;     /* t is an alias of an input whose gradient goes to `producer`:
                              backward with create_graph connects it to producer again */
  int output_nr;
  kd_node *producer;       /* a reference: the input's grad_fn or AccumulateGrad (NULL: none) */
  int producer_output_nr;
} kd_saved;

struct kd_node {
  int32_t refcount;
  kd_node_kind kind;
  uint64_t seq;             /* creation order: the engine runs later nodes first among ready ones */
  bool released;            /* saved values freed after a backward without retain_graph */
  int op;                   /* KD_NODE_OP: the op id */
  int n_edges;
  kd_edge *edges;
  int n_outputs;
  kd_out_meta *outs;
  kd_hook *hooks;           /* pre-hooks on the gradients of outputs (tensor hooks, retain_grad) */
  /* KD_NODE_OP */
  int nargs;
  kd_value *args;           /* saved non-tensor args (deep copies), tensors as kd_saved below */
  kd_saved *saved_args;     /* per arg (t == NULL: not saved); KD_NODE_CUSTOM: the nargs tensors its
                               JS ctx saved (a separate allocation, freed with the node) */
  kd_saved *saved_outs;     /* per output */
  int *edge_start;          /* per arg: first edge index; edge_count per arg */
  int *edge_count;
  /* KD_NODE_ACCUMULATE */
  kd_tensor *leaf;          /* weak: cleared when the leaf is freed (its meta owns this node) */
  /* KD_NODE_CUSTOM (JS autograd.Function, kd.library ops) */
  kd_status (*custom_apply)(kd_node *n, kd_tensor **grads, kd_tensor **grads_out);
  void (*custom_free)(kd_node *n);
  void *custom_data;
  const char *custom_name;
  char *trace;              /* anomaly mode: where the forward op was called (owned) */
  kd_node *inner;           /* owned: CopySlices' wrapped node (the in-place op's), released with it */
  size_t block_size;        /* the arrays above that live inside the node's own allocation */
};

/* ---- grad mode ------------------------------------------------------------------------------ */
bool kd_grad_enabled(void);
void kd_set_grad_enabled(bool on);
/* Inference mode: excludes the Autograd key; tensors made meanwhile are inference tensors. */
bool kd_inference_mode(void);
void kd_set_inference_mode(bool on);
/* Anomaly mode: check every backward output for NaN and name the node. */
void kd_set_anomaly_enabled(bool on);
bool kd_anomaly_enabled(void);
/* Anomaly mode records where each node's forward op was called: this hook (set by the Node-API
 * layer) returns a malloc'ed description of the current call site, or NULL. */
extern _Thread_local char *(*kd_anomaly_trace_hook)(void);

/* PyTorch's test in mm_mat1_backward / mm_mat2_backward: a 2-D tensor stored column by column. */
static inline bool kd_tensor_col_major(const kd_tensor *t) {
  return t->ndim == 2 && t->strides[0] == 1 && t->strides[1] == t->sizes[0];
}

/* ---- metadata -------------------------------------------------------------------------------- */
static inline kd_autograd_meta *kd_meta(const kd_tensor *t) { return (kd_autograd_meta *)t->autograd; }
/* A view requires grad when its base does (PyTorch's DifferentiableViewMeta::requires_grad). */
static inline bool kd_requires_grad(const kd_tensor *t) {
  const kd_autograd_meta *m = kd_meta(t);
  if (!m) return false;
  if (m->requires_grad) return true;
  if (!m->base) return false;
  const kd_autograd_meta *b = kd_meta(m->base);
  return b && b->requires_grad;
}
kd_status kd_meta_get(kd_tensor *t, kd_autograd_meta **out);
kd_status kd_set_requires_grad(kd_tensor *t, bool on);
bool kd_is_leaf(const kd_tensor *t);
void kd_set_grad(kd_tensor *t, kd_tensor *grad); /* takes a reference; NULL clears */
kd_status kd_retain_grad(kd_tensor *t);
/* A new tensor sharing t's storage and geometry, with no autograd history. */
kd_status kd_detach(kd_tensor *t, kd_tensor **out);
kd_status kd_detach_(kd_tensor *t);
/* PyTorch's set_data (`t.data = src`): t takes src's storage, dtype and geometry and keeps its
 * own autograd metadata. The device type must match; a leaf requiring grad needs a float src.
 * See Note [set_data]. */
kd_status kd_set_data(kd_tensor *t, kd_tensor *src);
/* The edge gradients of t flow into: (grad_fn, output_nr), or the leaf's AccumulateGrad. */
kd_status kd_gradient_edge(kd_tensor *t, kd_node **fn, int *input_nr);
void kd_edge_set_meta(kd_edge *e, const kd_tensor *t);

/* Tensor hooks: on a leaf they run before accumulation, on a non-leaf before its grad_fn. name
 * (copied; NULL or "": "<anonymous>") names the hook in errors. */
kd_status kd_add_hook(kd_tensor *t, kd_grad_hook_fn fn, void *data, kd_grad_hook_free_fn free_data, const char *name,
                      int64_t *id);
void kd_remove_hook(kd_tensor *t, int64_t id);

/* ---- nodes ------------------------------------------------------------------------------------ */
kd_node *kd_node_new(kd_node_kind kind, int n_edges, int n_outputs);
/* One allocation holding the node and its per-edge, per-output and per-arg arrays (an op node
 * with nargs arguments; n_outputs may be 0 when the count is known only after the op ran). */
kd_node *kd_node_new_op(int n_edges, int n_outputs, int nargs);
static inline void kd_node_retain(kd_node *n) { n->refcount++; }
void kd_node_release(kd_node *n);
/* Drops n's retain_grad hooks that point at m (a meta that goes away or changes grad_fn). */
void kd_node_forget_meta(kd_node *n, kd_autograd_meta *m);
void kd_node_release_saved(kd_node *n);
/* PyTorch's name: "MulBackward0", "AccumulateGrad", or the custom function's name. */
const char *kd_node_name(const kd_node *n, char *buf, int len);
/* Unpacks a saved tensor, checking its version (PyTorch's in-place error). */
kd_status kd_saved_unpack(const kd_node *n, const kd_saved *s, kd_tensor **out);
/* Calls a node's backward (engine.c): grads_out gets one gradient per edge (NULL: none). */
kd_status kd_node_apply(kd_node *n, kd_tensor **grads_in, kd_tensor **grads_out);
kd_status kd_saved_init(kd_saved *s, kd_tensor *t, bool is_output, int output_nr, int64_t version_offset);
void kd_saved_clear(kd_saved *s);

/* ---- views and in-place ops (copy_slices.c) ---------------------------------------------------
 * Note [Views and in-place ops]
 * As PyTorch's Notes [View + Inplace update on base/view tensor]: a view made by a view op in grad
 * mode (of a float tensor that is not an inference tensor) remembers its root base and the
 * storage version when its grad_fn was set (attr_version). Views and their base share one
 * storage, so one version counter. An in-place op on a view rewrites the BASE's history as
 * CopySlices(base's old history, the view's geometry, the op's node); the view's grad_fn is then
 * regenerated as AsStridedBackward0 of the base whenever the version moved (an in-place op on
 * the base or on another view), lazily, by kd_view_update() where grad_fn is read. */
static inline uint32_t kd_tensor_version(const kd_tensor *t) { return t->storage->version; }
/* Regenerates a view's grad_fn if its base changed in place since it was set. */
kd_status kd_view_regenerate(kd_tensor *t);
static inline kd_status kd_view_update(kd_tensor *t) {
  kd_autograd_meta *m = kd_meta(t);
  if (!m || !m->base || m->attr_version == kd_tensor_version(t)) return KD_OK;
  return kd_view_regenerate(t);
}
/* The grad_fn of t after kd_view_update (NULL on error too; the error is then set). */
kd_node *kd_grad_fn(kd_tensor *t, kd_status *st);
/* Makes the outputs of a view op differentiable views of the root base of self. */
kd_status kd_view_track(kd_tensor *self, kd_tensor *view, bool grad_mode);
/* check_inplace + handle_view_on_rebase for an in-place op on self that will be recorded. */
kd_status kd_view_check_inplace(kd_tensor *self);
/* rebase_history for an in-place op on the view self with node n: base's history becomes
 * CopySlices(base, self's geometry, n). */
kd_status kd_view_rebase(kd_tensor *self, kd_node *n);
/* AsStridedBackward0: a node from a tensor of input geometry to its as-strided view. */
kd_status kd_as_strided_node(kd_tensor *input, const kd_tensor *view, kd_node **out);

/* ---- engine ------------------------------------------------------------------------------------ */
typedef struct kd_backward_opts {
  bool keep_graph;
  bool create_graph;
  bool accumulate;          /* backward(): accumulate into .grad; grad(): return the gradients */
  bool allow_unused;
} kd_backward_opts;
/* roots[i] with gradients grads[i] (NULL: ones, only for one-element roots). inputs: for
 * accumulate, restrict accumulation to these (NULL/0: all leaves); for !accumulate, the tensors
 * whose gradients are returned in results[] (new references; NULL when unused and allowed). */
kd_status kd_autograd_run(kd_tensor **roots, kd_tensor **grads, int n_roots, kd_tensor **inputs, int n_inputs,
                          const kd_backward_opts *opts, kd_tensor **results);

/* The shared helper: sums a (broadcast) gradient back to the shape of an input and casts it to
 * the input's dtype and device. Returns a new reference (maybe grad itself, retained). */
kd_status kd_autograd_reduce_to_input(kd_tensor *grad, const kd_edge *e, kd_tensor **out);

/* Registration of the Autograd kernel for every differentiable op (record.c). */
void kd_autograd_init(void);
/* What every Autograd kernel does (record.c): run the op below Autograd with Autograd excluded in
 * TLS, and tell whether grad mode is on and a tensor argument requires grad. */
kd_status kd_autograd_run_below(const kd_op_info *op, kd_keyset ks, kd_value *args, kd_value *outs);
bool kd_autograd_any_requires_grad(const kd_op_info *op, const kd_value *args);
/* Defines a runtime op (op_registry.h) with its Autograd kernel: it runs the op below Autograd and,
 * when an input requires grad, calls the op's recorder (runtime_op.c). */
kd_status kd_runtime_op_define(const char *schema, int *id);

/* Generated by tools/gen-backward.js (src/ops/backward_gen.c). */
struct kd_bw_ctx;
typedef kd_status (*kd_backward_fn)(struct kd_bw_ctx *c);
typedef struct kd_backward_spec {
  kd_backward_fn fn;
  uint32_t diff_args;        /* args with a formula */
  uint32_t save_args;        /* tensor args the formula uses by value */
  uint32_t save_outs;        /* outputs the formula uses */
  uint32_t self_by_value;    /* formula reads `self` by value (in-place ops save a copy) */
} kd_backward_spec;
extern const kd_backward_spec *const kd_backward_table[];

#ifdef __cplusplus
}
#endif
#endif
