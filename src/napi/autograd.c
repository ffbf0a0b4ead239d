/* autograd.c (napi) - the autograd engine exposed to JS (binding.autograd.*): requires_grad,
 * .grad, grad_fn nodes as type-tagged externals, backward / grad, grad and inference modes,
 * tensor hooks and custom (JS) Function nodes. Hooks and custom backward functions are JS
 * functions called synchronously from the engine, which runs on the calling JS thread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autograd/autograd.h"
#include "napi/napi_util.h"

static const napi_type_tag kd_node_tag = {0x6b696e646c696e67ULL, 0x6e6f64652d746167ULL};

#define KD_ARGS(n)                                                                    \
  napi_value argv[n];                                                                 \
  size_t argc = n;                                                                    \
  KD_NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));            \
  for (size_t i_ = argc; i_ < n; i_++) napi_get_undefined(env, &argv[i_]);

static napi_value kd_bool(napi_env env, bool b) {
  napi_value r;
  napi_get_boolean(env, b, &r);
  return r;
}

static bool kd_is_nullish(napi_env env, napi_value v) {
  napi_valuetype t;
  napi_typeof(env, v, &t);
  return t == napi_undefined || t == napi_null;
}

static napi_value kd_tensor_or_null(napi_env env, kd_tensor *t) {
  napi_value r;
  if (!t) {
    napi_get_null(env, &r);
    return r;
  }
  kd_tensor_retain(t);
  if (kd_napi_wrap_tensor(env, t, &r) != napi_ok) return NULL;
  return r;
}

static void kd_node_finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  kd_node_release((kd_node *)data);
}

static napi_value kd_wrap_node(napi_env env, kd_node *n) {
  napi_value r;
  if (!n) {
    napi_get_null(env, &r);
    return r;
  }
  kd_node_retain(n);
  if (napi_create_external(env, n, kd_node_finalize, NULL, &r) != napi_ok) {
    kd_node_release(n);
    return NULL;
  }
  napi_type_tag_object(env, r, &kd_node_tag);
  return r;
}

static kd_node *kd_unwrap_node(napi_env env, napi_value v) {
  bool ok = false;
  if (napi_check_object_type_tag(env, v, &kd_node_tag, &ok) != napi_ok || !ok) return NULL;
  void *p = NULL;
  napi_get_value_external(env, v, &p);
  return (kd_node *)p;
}

#define KD_TENSOR_ARG(var, v, what)                                                   \
  kd_tensor *var = NULL;                                                              \
  do {                                                                                \
    kd_status st_ = kd_napi_unwrap_tensor(env, (v), (what), &var);                    \
    if (st_ != KD_OK) return kd_napi_throw(env, st_);                                 \
  } while (0)

static napi_value kd_ag_requires_grad(napi_env env, napi_callback_info info) {
  KD_ARGS(1);
  KD_TENSOR_ARG(t, argv[0], "self");
  return kd_bool(env, kd_requires_grad(t));
}

static napi_value kd_ag_set_requires_grad(napi_env env, napi_callback_info info) {
  KD_ARGS(2);
  KD_TENSOR_ARG(t, argv[0], "self");
  bool on = false;
  napi_get_value_bool(env, argv[1], &on);
  kd_status st = kd_set_requires_grad(t, on);
  if (st != KD_OK) return kd_napi_throw(env, st);
  return NULL;
}

static napi_value kd_ag_grad(napi_env env, napi_callback_info info) {
  KD_ARGS(1);
  KD_TENSOR_ARG(t, argv[0], "self");
  kd_autograd_meta *m = kd_meta(t);
  return kd_tensor_or_null(env, m ? m->grad : NULL);
}

static napi_value kd_ag_set_grad(napi_env env, napi_callback_info info) {
  KD_ARGS(2);
  KD_TENSOR_ARG(t, argv[0], "self");
  if (kd_is_nullish(env, argv[1])) {
    if (kd_meta(t)) kd_set_grad(t, NULL);
    return NULL;
  }
  KD_TENSOR_ARG(g, argv[1], "grad");
  if (g->ndim != t->ndim || (t->ndim && memcmp(g->sizes, t->sizes, sizeof(int64_t) * t->ndim) != 0))
    return kd_napi_throw_msg(env, KD_ERR_SHAPE, "assigned grad has data of a different size");
  if (g->dtype != t->dtype) return kd_napi_throw_msg(env, KD_ERR_DTYPE, "assigned grad has data of a different type");
  if (!kd_device_eq(kd_tensor_device(g), kd_tensor_device(t)))
    return kd_napi_throw_msg(env, KD_ERR_DEVICE, "assigned grad has data located on a different device");
  kd_tensor_retain(g);
  kd_set_grad(t, g);
  return NULL;
}

static napi_value kd_ag_grad_fn(napi_env env, napi_callback_info info) {
  KD_ARGS(1);
  KD_TENSOR_ARG(t, argv[0], "self");
  kd_status st = KD_OK;
  kd_node *n = kd_grad_fn(t, &st); /* a view whose base changed in place gets its grad_fn now */
  if (st != KD_OK) return kd_napi_throw(env, st);
  return kd_wrap_node(env, n);
}

/* The name of a tensor's grad_fn ('MulBackward0'), or null: what printing needs, without a JS
 * handle of the node, which would keep the node and the tensors it saved alive until the GC runs. */
static napi_value kd_ag_grad_fn_name(napi_env env, napi_callback_info info) {
  KD_ARGS(1);
  KD_TENSOR_ARG(t, argv[0], "self");
  kd_status st = KD_OK;
  kd_node *n = kd_grad_fn(t, &st);
  if (st != KD_OK) return kd_napi_throw(env, st);
  napi_value r;
  if (!n) {
    KD_NAPI_CALL(env, napi_get_null(env, &r));
    return r;
  }
  char buf[96];
  KD_NAPI_CALL(env, napi_create_string_utf8(env, kd_node_name(n, buf, sizeof buf), NAPI_AUTO_LENGTH, &r));
  return r;
}

static napi_value kd_ag_is_leaf(napi_env env, napi_callback_info info) {
  KD_ARGS(1);
  KD_TENSOR_ARG(t, argv[0], "self");
  return kd_bool(env, kd_is_leaf(t));
}

static napi_value kd_ag_retain_grad(napi_env env, napi_callback_info info) {
  KD_ARGS(1);
  KD_TENSOR_ARG(t, argv[0], "self");
  kd_status st = kd_retain_grad(t);
  if (st != KD_OK) return kd_napi_throw(env, st);
  return NULL;
}

static napi_value kd_ag_retains_grad(napi_env env, napi_callback_info info) {
  KD_ARGS(1);
  KD_TENSOR_ARG(t, argv[0], "self");
  kd_autograd_meta *m = kd_meta(t);
  return kd_bool(env, m && m->retains_grad);
}

static napi_value kd_ag_detach(napi_env env, napi_callback_info info) {
  KD_ARGS(1);
  KD_TENSOR_ARG(t, argv[0], "self");
  kd_tensor *d = NULL;
  kd_status st = kd_detach(t, &d);
  if (st != KD_OK) return kd_napi_throw(env, st);
  napi_value r;
  KD_NAPI_CALL(env, kd_napi_wrap_tensor(env, d, &r));
  return r;
}

static napi_value kd_ag_detach_(napi_env env, napi_callback_info info) {
  KD_ARGS(1);
  KD_TENSOR_ARG(t, argv[0], "self");
  kd_status st = kd_detach_(t);
  if (st != KD_OK) return kd_napi_throw(env, st);
  return NULL;
}

static napi_value kd_ag_set_data(napi_env env, napi_callback_info info) {
  KD_ARGS(2);
  KD_TENSOR_ARG(t, argv[0], "self");
  KD_TENSOR_ARG(src, argv[1], "data");
  kd_status st = kd_set_data(t, src);
  if (st != KD_OK) return kd_napi_throw(env, st);
  return NULL;
}

static napi_value kd_ag_is_inference(napi_env env, napi_callback_info info) {
  KD_ARGS(1);
  KD_TENSOR_ARG(t, argv[0], "self");
  return kd_bool(env, !(t->keys & KD_KEYSET(KD_KEY_AUTOGRAD)));
}

/* ---- nodes ------------------------------------------------------------------------------------- */

static napi_value kd_ag_node_name(napi_env env, napi_callback_info info) {
  KD_ARGS(1);
  kd_node *n = kd_unwrap_node(env, argv[0]);
  if (!n) return kd_napi_throw_msg(env, KD_ERR_TYPE, "not a grad_fn node");
  char buf[96];
  napi_value r;
  KD_NAPI_CALL(env, napi_create_string_utf8(env, kd_node_name(n, buf, sizeof buf), NAPI_AUTO_LENGTH, &r));
  return r;
}

/* [[node|null, input_nr], ...] */
static napi_value kd_ag_node_next(napi_env env, napi_callback_info info) {
  KD_ARGS(1);
  kd_node *n = kd_unwrap_node(env, argv[0]);
  if (!n) return kd_napi_throw_msg(env, KD_ERR_TYPE, "not a grad_fn node");
  napi_value arr;
  KD_NAPI_CALL(env, napi_create_array_with_length(env, n->n_edges, &arr));
  for (int i = 0; i < n->n_edges; i++) {
    napi_value pair, fn, nr;
    KD_NAPI_CALL(env, napi_create_array_with_length(env, 2, &pair));
    fn = kd_wrap_node(env, n->edges[i].fn);
    if (!fn) return NULL;
    KD_NAPI_CALL(env, napi_create_int32(env, n->edges[i].input_nr, &nr));
    KD_NAPI_CALL(env, napi_set_element(env, pair, 0, fn));
    KD_NAPI_CALL(env, napi_set_element(env, pair, 1, nr));
    KD_NAPI_CALL(env, napi_set_element(env, arr, i, pair));
  }
  return arr;
}

static napi_value kd_ag_node_same(napi_env env, napi_callback_info info) {
  KD_ARGS(2);
  return kd_bool(env, kd_unwrap_node(env, argv[0]) != NULL && kd_unwrap_node(env, argv[0]) == kd_unwrap_node(env, argv[1]));
}

static napi_value kd_ag_node_leaf(napi_env env, napi_callback_info info) {
  KD_ARGS(1);
  kd_node *n = kd_unwrap_node(env, argv[0]);
  if (!n || n->kind != KD_NODE_ACCUMULATE) {
    napi_value r;
    napi_get_null(env, &r);
    return r;
  }
  return kd_tensor_or_null(env, n->leaf);
}

/* ---- calling JS from the engine -------------------------------------------------------------- */

typedef struct kd_js_fn {
  napi_env env;
  napi_ref fn;
} kd_js_fn;

static void kd_js_fn_free(void *data) {
  kd_js_fn *f = (kd_js_fn *)data;
  if (!f) return;
  if (f->fn) napi_delete_reference(f->env, f->fn);
  free(f);
}

static kd_js_fn *kd_js_fn_new(napi_env env, napi_value fn) {
  kd_js_fn *f = (kd_js_fn *)calloc(1, sizeof *f);
  if (!f) return NULL;
  f->env = env;
  if (napi_create_reference(env, fn, 1, &f->fn) != napi_ok) {
    free(f);
    return NULL;
  }
  return f;
}

/* A JS exception thrown by a hook or custom backward becomes this call's error. */
static kd_status kd_js_exception(napi_env env, const char *what) {
  bool pending = false;
  napi_is_exception_pending(env, &pending);
  char msg[512] = "";
  if (pending) {
    napi_value exc, s;
    napi_get_and_clear_last_exception(env, &exc);
    if (napi_coerce_to_string(env, exc, &s) == napi_ok) {
      size_t len;
      napi_get_value_string_utf8(env, s, msg, sizeof msg, &len);
    }
  }
  return kd_error(KD_ERR_INVALID_ARGUMENT, "%s threw: %s", what, msg);
}

static kd_status kd_js_hook(void *data, kd_tensor *grad, kd_tensor **out) {
  kd_js_fn *f = (kd_js_fn *)data;
  napi_env env = f->env;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return kd_error(KD_ERR_INTERNAL, "napi scope");
  kd_status st = KD_OK;
  napi_value fn, g, global, r;
  napi_get_reference_value(env, f->fn, &fn);
  napi_get_global(env, &global);
  kd_tensor_retain(grad);
  if (kd_napi_wrap_tensor(env, grad, &g) != napi_ok) st = kd_error(KD_ERR_INTERNAL, "napi wrap");
  if (st == KD_OK && napi_call_function(env, global, fn, 1, &g, &r) != napi_ok) st = kd_js_exception(env, "a tensor hook");
  if (st == KD_OK && !kd_is_nullish(env, r)) {
    kd_tensor *t = NULL;
    st = kd_napi_unwrap_tensor(env, r, "hook result", &t);
    if (st == KD_OK) {
      kd_tensor_retain(t);
      *out = t;
    }
  }
  napi_close_handle_scope(env, scope);
  return st;
}

/* registerHook(handle, fn, name): name is the user's function's, for errors */
static napi_value kd_ag_register_hook(napi_env env, napi_callback_info info) {
  KD_ARGS(3);
  KD_TENSOR_ARG(t, argv[0], "self");
  char name[96] = "";
  napi_valuetype nt;
  if (napi_typeof(env, argv[2], &nt) == napi_ok && nt == napi_string) kd_napi_string_arg(env, argv[2], name, sizeof name);
  kd_js_fn *f = kd_js_fn_new(env, argv[1]);
  if (!f) return kd_napi_throw_msg(env, KD_ERR_OOM, "out of memory");
  int64_t id = 0;
  kd_status st = kd_add_hook(t, kd_js_hook, f, kd_js_fn_free, name, &id);
  if (st != KD_OK) {
    kd_js_fn_free(f);
    return kd_napi_throw(env, st);
  }
  napi_value r;
  KD_NAPI_CALL(env, napi_create_double(env, (double)id, &r));
  return r;
}

static napi_value kd_ag_remove_hook(napi_env env, napi_callback_info info) {
  KD_ARGS(2);
  KD_TENSOR_ARG(t, argv[0], "self");
  double id = 0;
  napi_get_value_double(env, argv[1], &id);
  kd_remove_hook(t, (int64_t)id);
  return NULL;
}

/* Custom nodes (kd.autograd.Function, kd.library ops, C extensions' backward ops).
 *
 * Note [Tensors a custom node saves]
 * The tensors a JS ctx keeps for backward (saveForBackward, and tensors among its properties)
 * are handed to the node, which saves them as the engine saves a built-in node's values
 * (kd_saved): an output of the node as an alias without history (no cycle node -> output ->
 * node), checked against in-place changes (those of saveForBackward), freed after a backward
 * without retain_graph (kd_node_release_saved) and when the node goes, and connected again to
 * the node (or to the input's producer) when backward runs with create_graph. The JS ctx keeps
 * only their places; the JS backward gets new handles to them, which it disposes when it returns.
 * So no JS object holds a saved tensor between the forward and the backward, and nothing waits
 * for the garbage collector. */
typedef struct kd_custom_data {
  kd_js_fn *backward; /* called as fn(grads: (handle|null)[], saved: (handle|string)[]) -> (handle|null)[] */
  int nchecked;       /* the first nchecked saved tensors (n->saved_args) are checked against in-place changes */
} kd_custom_data;

/* The node's saved tensors are freed by the node itself (kd_node_release_saved). */
static void kd_custom_free(kd_node *n) {
  kd_custom_data *d = (kd_custom_data *)n->custom_data;
  if (d) {
    kd_js_fn_free(d->backward);
    free(d);
  }
  free((void *)n->custom_name);
}

/* The saved tensors for a JS backward: a new handle each, or the message of why it cannot be had
 * (freed by an earlier backward, changed in place), which the JS ctx throws when it is read. */
static kd_status kd_custom_unpack_saved(napi_env env, kd_node *n, napi_value *out) {
  kd_custom_data *d = (kd_custom_data *)n->custom_data;
  if (napi_create_array_with_length(env, (size_t)n->nargs, out) != napi_ok) return kd_error(KD_ERR_INTERNAL, "napi array");
  for (int i = 0; i < n->nargs; i++) {
    kd_saved *s = &n->saved_args[i];
    if (i >= d->nchecked && s->t) s->version = (int64_t)s->t->storage->version; /* ctx properties: no check */
    kd_tensor *t = NULL;
    napi_value v;
    if (kd_saved_unpack(n, s, &t) == KD_OK) {
      if (kd_napi_wrap_tensor(env, t, &v) != napi_ok) return kd_error(KD_ERR_INTERNAL, "napi wrap");
    } else if (napi_create_string_utf8(env, kd_last_error(), NAPI_AUTO_LENGTH, &v) != napi_ok) {
      return kd_error(KD_ERR_INTERNAL, "napi string");
    }
    if (napi_set_element(env, *out, (uint32_t)i, v) != napi_ok) return kd_error(KD_ERR_INTERNAL, "napi set");
  }
  return KD_OK;
}

static kd_status kd_custom_apply(kd_node *n, kd_tensor **grads, kd_tensor **grads_out) {
  kd_js_fn *f = ((kd_custom_data *)n->custom_data)->backward;
  napi_env env = f->env;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return kd_error(KD_ERR_INTERNAL, "napi scope");
  kd_status st = KD_OK;
  napi_value fn, argv[2], global, r;
  napi_get_reference_value(env, f->fn, &fn);
  napi_get_global(env, &global);
  napi_create_array_with_length(env, n->n_outputs, &argv[0]);
  for (int i = 0; i < n->n_outputs && st == KD_OK; i++) {
    napi_value g;
    if (grads[i]) {
      kd_tensor_retain(grads[i]);
      if (kd_napi_wrap_tensor(env, grads[i], &g) != napi_ok) st = kd_error(KD_ERR_INTERNAL, "napi wrap");
    } else {
      napi_get_null(env, &g);
    }
    if (st == KD_OK) napi_set_element(env, argv[0], i, g);
  }
  if (st == KD_OK) st = kd_custom_unpack_saved(env, n, &argv[1]);
  if (st == KD_OK && napi_call_function(env, global, fn, 2, argv, &r) != napi_ok) {
    char nb[96];
    char what[160];
    snprintf(what, sizeof what, "the backward of %s", kd_node_name(n, nb, sizeof nb));
    st = kd_js_exception(env, what);
  }
  if (st == KD_OK) {
    bool is_array = false;
    napi_is_array(env, r, &is_array);
    if (!is_array) st = kd_error(KD_ERR_TYPE, "a custom backward must return one gradient (or null) per input");
    for (int i = 0; i < n->n_edges && st == KD_OK; i++) {
      napi_value e;
      if (napi_get_element(env, r, i, &e) != napi_ok) {
        st = kd_js_exception(env, "reading a custom backward's result");
        break;
      }
      if (kd_is_nullish(env, e)) continue;
      kd_tensor *t = NULL;
      st = kd_napi_unwrap_tensor(env, e, "custom backward result", &t);
      if (st == KD_OK) {
        kd_tensor_retain(t);
        grads_out[i] = t;
      }
    }
  }
  napi_close_handle_scope(env, scope);
  return st;
}

/* Saves the tensors of `handles` in n (See Note [Tensors a custom node saves]): an output of n
 * (one of `outputs`) as an output. */
static kd_status kd_custom_save(napi_env env, kd_node *n, napi_value handles, uint32_t nchecked, napi_value outputs) {
  kd_custom_data *d = (kd_custom_data *)n->custom_data;
  uint32_t ns = 0, nout = 0;
  if (napi_get_array_length(env, handles, &ns) != napi_ok || ns == 0) return KD_OK;
  napi_get_array_length(env, outputs, &nout);
  if (ns > (1u << 20)) return kd_error(KD_ERR_INVALID_ARGUMENT, "too many saved tensors (%u)", ns);
  n->saved_args = (kd_saved *)calloc(ns, sizeof(kd_saved));
  if (!n->saved_args) return kd_error(KD_ERR_OOM, "out of memory");
  d->nchecked = (int)(nchecked < ns ? nchecked : ns);
  for (uint32_t i = 0; i < ns; i++) {
    napi_value e;
    kd_tensor *t = NULL;
    if (napi_get_element(env, handles, i, &e) != napi_ok) return kd_error(KD_ERR_INVALID_ARGUMENT, "reading a saved tensor failed");
    KD_TRY(kd_napi_unwrap_tensor(env, e, "saved tensor", &t));
    int output_nr = -1;
    for (uint32_t j = 0; j < nout && output_nr < 0; j++) {
      napi_value o;
      kd_tensor *ot = NULL;
      if (napi_get_element(env, outputs, j, &o) == napi_ok && kd_napi_unwrap_tensor(env, o, "output", &ot) == KD_OK && ot == t)
        output_nr = (int)j;
    }
    KD_TRY(kd_saved_init(&n->saved_args[i], t, output_nr >= 0, output_nr, 0));
    n->nargs = (int)i + 1;
  }
  return KD_OK;
}

/* makeCustomNode(name, inputs: handle[], outputs: handle[], backward, saved: handle[], nchecked) :
 * connects outputs to a new node whose edges lead to the inputs that require grad, and saves
 * `saved` in it (the first nchecked checked against in-place changes). Returns nothing: the node
 * lives as long as the outputs' history (a JS object holding it would wait for the garbage
 * collector). */
static napi_value kd_ag_make_custom_node(napi_env env, napi_callback_info info) {
  KD_ARGS(6);
  char *name = NULL;
  kd_status nst = kd_napi_string_dup(env, argv[0], "makeCustomNode: name", 4096, &name);
  if (nst != KD_OK) return kd_napi_throw(env, nst);
  uint32_t nin = 0, nout = 0, nchecked = 0;
  napi_get_array_length(env, argv[1], &nin);
  napi_get_array_length(env, argv[2], &nout);
  napi_get_value_uint32(env, argv[5], &nchecked);
  if (nin > (1u << 20) || nout > (1u << 20)) {
    free(name);
    return kd_napi_throw_msg(env, KD_ERR_INVALID_ARGUMENT, "too many inputs or outputs");
  }
  kd_custom_data *d = (kd_custom_data *)calloc(1, sizeof *d);
  kd_js_fn *backward = d ? kd_js_fn_new(env, argv[3]) : NULL;
  kd_node *n = backward ? kd_node_new(KD_NODE_CUSTOM, (int)nin, (int)nout) : NULL;
  if (!n) {
    kd_js_fn_free(backward);
    free(d);
    free(name);
    return kd_napi_throw_msg(env, KD_ERR_OOM, "out of memory");
  }
  d->backward = backward;
  n->custom_data = d;
  n->custom_apply = kd_custom_apply;
  n->custom_free = kd_custom_free;
  n->custom_name = name;
  if (kd_anomaly_enabled() && kd_anomaly_trace_hook) n->trace = kd_anomaly_trace_hook();
  kd_status st = KD_OK;
  for (uint32_t i = 0; i < nin && st == KD_OK; i++) {
    napi_value e;
    if (napi_get_element(env, argv[1], i, &e) != napi_ok) {
      st = kd_error(KD_ERR_INVALID_ARGUMENT, "reading an input failed");
      break;
    }
    if (kd_is_nullish(env, e)) continue;
    kd_tensor *t = NULL;
    st = kd_napi_unwrap_tensor(env, e, "input", &t);
    if (st == KD_OK) {
      kd_edge_set_meta(&n->edges[i], t);
      st = kd_gradient_edge(t, &n->edges[i].fn, &n->edges[i].input_nr);
    }
  }
  if (st == KD_OK && !kd_is_nullish(env, argv[4])) st = kd_custom_save(env, n, argv[4], nchecked, argv[2]);
  for (uint32_t i = 0; i < nout && st == KD_OK; i++) {
    napi_value e;
    kd_tensor *t = NULL;
    st = napi_get_element(env, argv[2], i, &e) == napi_ok ? kd_napi_unwrap_tensor(env, e, "output", &t)
                                                          : kd_error(KD_ERR_INVALID_ARGUMENT, "reading an output failed");
    if (st != KD_OK) break;
    kd_out_meta *om = &n->outs[i];
    om->ndim = t->ndim;
    om->dtype = t->dtype;
    om->device = kd_tensor_device(t);
    if (t->ndim) memcpy(om->sizes, t->sizes, sizeof(int64_t) * t->ndim);
    if (!kd_dtype_is_float(t->dtype)) continue;
    kd_autograd_meta *m = NULL;
    st = kd_meta_get(t, &m);
    if (st != KD_OK) break;
    if (m->grad_fn) kd_node_release(m->grad_fn);
    m->requires_grad = true;
    m->grad_fn = n;
    kd_node_retain(n);
    m->output_nr = (int)i;
  }
  if (st != KD_OK) {
    kd_node_release(n);
    return kd_napi_throw(env, st);
  }
  kd_node_release(n);
  return NULL;
}

/* ---- engine ------------------------------------------------------------------------------------ */

static kd_status kd_handles(napi_env env, napi_value arr, const char *what, bool nulls, kd_tensor ***out, uint32_t *n) {
  *out = NULL;
  *n = 0;
  if (kd_is_nullish(env, arr)) return KD_OK;
  napi_get_array_length(env, arr, n);
  /* a length is the caller's (an array-like's map may return anything): capped, counted in size_t */
  if (*n > KD_NAPI_MAX_LIST) return kd_error(KD_ERR_INVALID_ARGUMENT, "too many %s (%u)", what, *n);
  *out = (kd_tensor **)calloc((size_t)*n + 1, sizeof(kd_tensor *));
  if (!*out) return kd_error(KD_ERR_OOM, "out of memory");
  for (uint32_t i = 0; i < *n; i++) {
    napi_value e;
    if (napi_get_element(env, arr, i, &e) != napi_ok) return kd_error(KD_ERR_INVALID_ARGUMENT, "reading %s failed", what);
    if (nulls && kd_is_nullish(env, e)) continue;
    KD_TRY(kd_napi_unwrap_tensor(env, e, what, &(*out)[i]));
  }
  return KD_OK;
}

/* run(roots, grads, inputs, keepGraph, createGraph, accumulate, allowUnused) -> (handle|null)[] */
static napi_value kd_ag_run(napi_env env, napi_callback_info info) {
  KD_ARGS(7);
  kd_tensor **roots = NULL, **grads = NULL, **inputs = NULL, **results = NULL;
  uint32_t nr = 0, ng = 0, ni = 0;
  kd_backward_opts o = {0};
  napi_get_value_bool(env, argv[3], &o.keep_graph);
  napi_get_value_bool(env, argv[4], &o.create_graph);
  napi_get_value_bool(env, argv[5], &o.accumulate);
  napi_get_value_bool(env, argv[6], &o.allow_unused);
  kd_status st = kd_handles(env, argv[0], "tensors", false, &roots, &nr);
  if (st == KD_OK) st = kd_handles(env, argv[1], "grad_tensors", true, &grads, &ng);
  if (st == KD_OK) st = kd_handles(env, argv[2], "inputs", false, &inputs, &ni);
  if (st == KD_OK && ng != nr) st = kd_error(KD_ERR_INVALID_ARGUMENT, "grad_tensors should have the same length as tensors (%u vs %u)", ng, nr);
  if (st == KD_OK) {
    results = (kd_tensor **)calloc(ni + 1, sizeof(kd_tensor *));
    if (!results) st = kd_error(KD_ERR_OOM, "out of memory");
  }
  if (st == KD_OK) st = kd_autograd_run(roots, grads, (int)nr, inputs, (int)ni, &o, results);
  napi_value r = NULL;
  if (st == KD_OK) {
    napi_create_array_with_length(env, ni, &r);
    for (uint32_t i = 0; i < ni; i++) {
      napi_value h;
      if (results[i]) {
        if (kd_napi_wrap_tensor(env, results[i], &h) != napi_ok) { napi_get_null(env, &h); }
        results[i] = NULL;
      } else {
        napi_get_null(env, &h);
      }
      napi_set_element(env, r, i, h);
    }
  }
  if (results) for (uint32_t i = 0; i < ni; i++) if (results[i]) kd_tensor_release(results[i]);
  free(roots);
  free(grads);
  free(inputs);
  free(results);
  kd_napi_sync_external_memory(env);
  if (st != KD_OK) return kd_napi_throw(env, st);
  return r;
}

/* ---- modes --------------------------------------------------------------------------------------- */

static napi_value kd_ag_set_grad_enabled(napi_env env, napi_callback_info info) {
  KD_ARGS(1);
  bool on = true;
  napi_get_value_bool(env, argv[0], &on);
  kd_set_grad_enabled(on);
  return NULL;
}
static napi_value kd_ag_is_grad_enabled(napi_env env, napi_callback_info info) {
  (void)info;
  return kd_bool(env, kd_grad_enabled());
}
static napi_value kd_ag_set_inference_mode(napi_env env, napi_callback_info info) {
  KD_ARGS(1);
  bool on = false;
  napi_get_value_bool(env, argv[0], &on);
  kd_set_inference_mode(on);
  return NULL;
}
static napi_value kd_ag_is_inference_mode(napi_env env, napi_callback_info info) {
  (void)info;
  return kd_bool(env, kd_inference_mode());
}
/* Anomaly mode: a JS function returning the current stack (new Error().stack), called when a
 * node is recorded. */
static _Thread_local napi_env kd_trace_env;
static _Thread_local napi_ref kd_trace_fn;

static char *kd_js_trace(void) {
  napi_env env = kd_trace_env;
  if (!env || !kd_trace_fn) return NULL;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return NULL;
  char *out = NULL;
  napi_value fn, global, r;
  if (napi_get_reference_value(env, kd_trace_fn, &fn) == napi_ok && napi_get_global(env, &global) == napi_ok &&
      napi_call_function(env, global, fn, 0, NULL, &r) == napi_ok) {
    size_t len = 0;
    if (napi_get_value_string_utf8(env, r, NULL, 0, &len) == napi_ok) {
      out = (char *)malloc(len + 1);
      if (out) napi_get_value_string_utf8(env, r, out, len + 1, &len);
    }
  } else {
    bool pending = false;
    napi_is_exception_pending(env, &pending);
    if (pending) {
      napi_value exc;
      napi_get_and_clear_last_exception(env, &exc);
    }
  }
  napi_close_handle_scope(env, scope);
  return out;
}

/* setAnomalyEnabled(on, traceFn?) */
static napi_value kd_ag_set_anomaly(napi_env env, napi_callback_info info) {
  KD_ARGS(2);
  bool on = false;
  napi_get_value_bool(env, argv[0], &on);
  if (kd_trace_fn) {
    napi_delete_reference(env, kd_trace_fn);
    kd_trace_fn = NULL;
  }
  kd_anomaly_trace_hook = NULL;
  if (on && !kd_is_nullish(env, argv[1])) {
    KD_NAPI_CALL(env, napi_create_reference(env, argv[1], 1, &kd_trace_fn));
    kd_trace_env = env;
    kd_anomaly_trace_hook = kd_js_trace;
  }
  kd_set_anomaly_enabled(on);
  return NULL;
}

napi_status kd_napi_register_autograd(napi_env env, napi_value exports) {
  napi_value o;
  napi_status st = napi_create_object(env, &o);
  static const struct { const char *name; napi_callback cb; } fns[] = {
      {"requiresGrad", kd_ag_requires_grad}, {"setRequiresGrad", kd_ag_set_requires_grad},
      {"grad", kd_ag_grad}, {"setGrad", kd_ag_set_grad}, {"gradFn", kd_ag_grad_fn}, {"gradFnName", kd_ag_grad_fn_name}, {"isLeaf", kd_ag_is_leaf},
      {"retainGrad", kd_ag_retain_grad}, {"retainsGrad", kd_ag_retains_grad}, {"detach", kd_ag_detach},
      {"detach_", kd_ag_detach_}, {"setData", kd_ag_set_data}, {"isInference", kd_ag_is_inference}, {"nodeName", kd_ag_node_name},
      {"nodeNext", kd_ag_node_next}, {"nodeSame", kd_ag_node_same}, {"nodeLeaf", kd_ag_node_leaf},
      {"registerHook", kd_ag_register_hook}, {"removeHook", kd_ag_remove_hook},
      {"makeCustomNode", kd_ag_make_custom_node}, {"run", kd_ag_run},
      {"setGradEnabled", kd_ag_set_grad_enabled}, {"isGradEnabled", kd_ag_is_grad_enabled},
      {"setInferenceMode", kd_ag_set_inference_mode}, {"isInferenceMode", kd_ag_is_inference_mode},
      {"setAnomalyEnabled", kd_ag_set_anomaly},
  };
  for (size_t i = 0; st == napi_ok && i < sizeof fns / sizeof fns[0]; i++) st = kd_napi_set_fn(env, o, fns[i].name, fns[i].cb, NULL);
  if (st == napi_ok) st = napi_set_named_property(env, exports, "autograd", o);
  return st;
}
