/* library.c (napi) - runtime ops from JS (lib/library.js, kd.library): defining an op from its
 * schema, JS functions as its kernels for a dispatch key, its autograd recorder and its autocast
 * policy. A JS kernel is an ordinary kd_kernel_fn (kd_js_kernel) that boxes the call's arguments,
 * calls the JS function on the thread that registered it, and unboxes the tensors it returns,
 * so kd_call treats the op as any other.
 *
 * Note [JS kernels and their tensors]
 * The JS kernel gets new handles for its tensor arguments; they are disposed when it returns (an
 * implementation keeps a clone, not its argument). It returns [handles, fresh]: the output
 * handles and, per output, whether the handle was made by the implementation (not one the caller
 * holds); fresh handles are disposed once the kernel has its own reference, so nothing waits for
 * the garbage collector. An output that is one of the inputs becomes a new alias (detach), as a
 * non-view op must not return its input. A JS exception thrown by the implementation is taken,
 * the handles cleaned up, and thrown again: the op call throws that same error. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "autograd/autograd.h"
#include "dispatch/autocast.h"
#include "dispatch/op_registry.h"
#include "napi/napi_util.h"

napi_status kd_napi_op_function(napi_env env, const kd_op_info *op, napi_value *out); /* napi/ops.c */

#define KD_LIB_MAX_SCHEMA ((size_t)1 << 16)

/* A JS function bound to the environment and thread that registered it. */
typedef struct kd_js_callable {
  napi_env env;    /* NULL once that environment is torn down */
  napi_ref fn;
  pthread_t thread;
} kd_js_callable;

static void kd_js_callable_env_gone(void *data) {
  kd_js_callable *c = (kd_js_callable *)data;
  c->env = NULL;
}

static void kd_js_callable_free(void *data) {
  kd_js_callable *c = (kd_js_callable *)data;
  if (c->env) {
    napi_remove_env_cleanup_hook(c->env, kd_js_callable_env_gone, c);
    napi_delete_reference(c->env, c->fn);
  }
  free(c);
}

static kd_js_callable *kd_js_callable_new(napi_env env, napi_value fn) {
  kd_js_callable *c = (kd_js_callable *)calloc(1, sizeof *c);
  if (!c) return NULL;
  c->env = env;
  c->thread = pthread_self();
  if (napi_create_reference(env, fn, 1, &c->fn) != napi_ok) {
    free(c);
    return NULL;
  }
  napi_add_env_cleanup_hook(env, kd_js_callable_env_gone, c);
  return c;
}

static kd_status kd_js_callable_check(const kd_js_callable *c, const kd_op_info *op, const char *what) {
  if (!c->env) return kd_error(KD_ERR_NOT_SUPPORTED, "the JS %s of '%s' belonged to a worker that has exited", what, op->name);
  if (!pthread_equal(c->thread, pthread_self()))
    return kd_error(KD_ERR_NOT_SUPPORTED, "the JS %s of '%s' can only run on the thread that registered it", what, op->name);
  return KD_OK;
}

/* An int for JS: a number, or a BigInt past 2^53 where a number would round it. */
static napi_status kd_box_int(napi_env env, int64_t i, napi_value *out) {
  const int64_t exact = (int64_t)1 << 53;
  if (i > exact || i < -exact) return napi_create_bigint_int64(env, i, out);
  return napi_create_double(env, (double)i, out);
}

/* Boxes one argument value for JS (tensors as new handles, recorded in `made`). */
static napi_status kd_box_arg(napi_env env, const kd_value *v, napi_value *out, napi_value made) {
  uint32_t n_made;
  switch (v->kind) {
    case KD_VALUE_TENSOR: {
      kd_tensor_retain(v->v.t);
      napi_status st = kd_napi_wrap_tensor(env, v->v.t, out);
      if (st != napi_ok) return st;
      napi_get_array_length(env, made, &n_made);
      return napi_set_element(env, made, n_made, *out);
    }
    case KD_VALUE_SCALAR:
      if (v->v.s.kind == KD_KIND_BOOL) return napi_get_boolean(env, v->v.s.v.b, out);
      return napi_create_double(env, kd_scalar_to_double(v->v.s), out);
    case KD_VALUE_INT: return kd_box_int(env, v->v.i, out);
    case KD_VALUE_DOUBLE: return napi_create_double(env, v->v.d, out);
    case KD_VALUE_BOOL: return napi_get_boolean(env, v->v.b, out);
    case KD_VALUE_DTYPE: return napi_create_string_utf8(env, kd_dtype_name(v->v.dtype), NAPI_AUTO_LENGTH, out);
    case KD_VALUE_DEVICE: {
      char buf[32];
      kd_device_format(v->v.device, buf, sizeof buf);
      return napi_create_string_utf8(env, buf, NAPI_AUTO_LENGTH, out);
    }
    case KD_VALUE_STRING: return napi_create_string_utf8(env, v->v.str, NAPI_AUTO_LENGTH, out);
    case KD_VALUE_INTLIST:
    case KD_VALUE_DOUBLELIST: {
      bool ints = v->kind == KD_VALUE_INTLIST;
      int n = ints ? v->v.ilist.n : v->v.dlist.n;
      napi_status st = napi_create_array_with_length(env, (size_t)n, out);
      for (int i = 0; i < n && st == napi_ok; i++) {
        napi_value e;
        st = ints ? kd_box_int(env, v->v.ilist.data[i], &e) : napi_create_double(env, v->v.dlist.data[i], &e);
        if (st == napi_ok) st = napi_set_element(env, *out, (uint32_t)i, e);
      }
      return st;
    }
    case KD_VALUE_TENSORLIST: {
      napi_status st = napi_create_array_with_length(env, (size_t)v->v.tlist.n, out);
      for (int i = 0; i < v->v.tlist.n && st == napi_ok; i++) {
        napi_value e;
        kd_value t = v->v.tlist.data[i] ? kd_value_tensor(v->v.tlist.data[i]) : kd_value_none();
        st = kd_box_arg(env, &t, &e, made);
        if (st == napi_ok) st = napi_set_element(env, *out, (uint32_t)i, e);
      }
      return st;
    }
    case KD_VALUE_NONE:
    default: return napi_get_null(env, out);
  }
}

static napi_status kd_box_args(napi_env env, const kd_op_info *op, const kd_value *args, napi_value *arr, napi_value made) {
  napi_status st = napi_create_array_with_length(env, (size_t)op->nargs, arr);
  for (int i = 0; i < op->nargs && st == napi_ok; i++) {
    napi_value e;
    st = kd_box_arg(env, &args[i], &e, made);
    if (st == napi_ok) st = napi_set_element(env, *arr, (uint32_t)i, e);
  }
  return st;
}

/* Disposes every handle in `arr`. */
static void kd_dispose_all(napi_env env, napi_value arr) {
  uint32_t n = 0;
  napi_get_array_length(env, arr, &n);
  for (uint32_t i = 0; i < n; i++) {
    napi_value h;
    if (napi_get_element(env, arr, i, &h) != napi_ok) continue;
    kd_napi_handle *hd = kd_napi_handle_of(env, h);
    if (hd && hd->t) kd_napi_dispose_handle(env, hd);
  }
}

/* Whether t is one of the op's tensor arguments (also an element of a Tensor[] argument). */
static bool kd_is_input(const kd_op_info *op, const kd_value *args, const kd_tensor *t) {
  for (int i = 0; i < op->nargs; i++) {
    if (args[i].kind == KD_VALUE_TENSOR && args[i].v.t == t) return true;
    if (args[i].kind == KD_VALUE_TENSORLIST)
      for (int j = 0; j < args[i].v.tlist.n; j++)
        if (args[i].v.tlist.data[j] == t) return true;
  }
  return false;
}

/* One returned tensor: a new reference in *out (an alias when it is one of the inputs). */
static kd_status kd_take_output(napi_env env, const kd_op_info *op, const kd_value *args, napi_value h, kd_tensor **out) {
  kd_tensor *t = NULL;
  KD_TRY(kd_napi_unwrap_tensor(env, h, "output", &t));
  if (kd_is_input(op, args, t)) return kd_detach(t, out);
  kd_tensor_retain(t);
  *out = t;
  return KD_OK;
}

static kd_status kd_unbox_outputs(napi_env env, const kd_op_info *op, const kd_value *args, napi_value r, kd_value *outs) {
  napi_value handles, fresh;
  uint32_t n = 0;
  bool ok = napi_get_element(env, r, 0, &handles) == napi_ok && napi_get_element(env, r, 1, &fresh) == napi_ok &&
            napi_get_array_length(env, handles, &n) == napi_ok;
  if (!ok) return kd_error(KD_ERR_INTERNAL, "the JS kernel of '%s' returned no output list", op->name);
  if (n > KD_NAPI_MAX_LIST) return kd_error(KD_ERR_INVALID_ARGUMENT, "the implementation of '%s' returned %u tensors", op->name, n);
  if (op->nouts >= 0 && (int)n != op->nouts)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "the implementation of '%s' returned %u tensors, its schema says %d", op->name, n,
                    op->nouts);
  kd_status st = KD_OK;
  kd_tensor **list = NULL;
  if (op->nouts < 0) {
    list = (kd_tensor **)calloc(n ? n : 1, sizeof(kd_tensor *));
    if (!list) return kd_error(KD_ERR_OOM, "out of memory");
    outs[0].kind = KD_VALUE_TENSORLIST;
    outs[0].v.tlist.data = list;
    outs[0].v.tlist.n = 0;
  }
  for (uint32_t i = 0; i < n && st == KD_OK; i++) {
    napi_value h;
    kd_tensor *t = NULL;
    st = napi_get_element(env, handles, i, &h) == napi_ok ? kd_take_output(env, op, args, h, &t) : KD_ERR_INVALID_ARGUMENT;
    if (st != KD_OK) {
      st = kd_error(st, "the implementation of '%s' must return %s (output %u is not a tensor)", op->name,
                    op->nouts == 1 ? "a Tensor" : "an array of Tensors", i);
      break;
    }
    if (list) list[outs[0].v.tlist.n++] = t;
    else outs[i] = kd_value_tensor(t);
    napi_value f;
    bool is_fresh = false;
    if (napi_get_element(env, fresh, i, &f) == napi_ok) napi_get_value_bool(env, f, &is_fresh);
    kd_napi_handle *hd = kd_napi_handle_of(env, h);
    if (is_fresh && hd && hd->t) kd_napi_dispose_handle(env, hd);
  }
  if (st != KD_OK)
    for (int i = 0; i < KD_OP_MAX_OUTS; i++) kd_value_release(&outs[i]);
  return st;
}

/* Calls a JS callable with one array argument, leaving a thrown exception in *exc (cleared). */
static kd_status kd_call_js(napi_env env, const kd_js_callable *c, napi_value *argv, size_t argc, napi_value *result,
                            napi_value *exc, bool *threw) {
  napi_value fn, global;
  napi_get_reference_value(env, c->fn, &fn);
  napi_get_global(env, &global);
  *threw = false;
  if (napi_call_function(env, global, fn, argc, argv, result) != napi_ok) {
    bool pending = false;
    napi_is_exception_pending(env, &pending);
    if (!pending) return kd_error(KD_ERR_INTERNAL, "calling a JS function failed");
    napi_get_and_clear_last_exception(env, exc);
    *threw = true;
  }
  return KD_OK;
}

/* The kernel of every JS implementation: kernel data of the running key is its kd_js_callable. */
static kd_status kd_js_kernel(const kd_op_info *op, kd_keyset ks, kd_value *args, kd_value *outs) {
  const int key = kd_keyset_highest(ks);
  kd_js_callable *c = (kd_js_callable *)kd_op_kernel_data(op->id, key);
  if (!c) return kd_error(KD_ERR_INTERNAL, "no JS implementation of '%s' for %s", op->name, kd_key_name(key));
  KD_TRY(kd_js_callable_check(c, op, "implementation"));
  napi_env env = c->env;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return kd_error(KD_ERR_INTERNAL, "napi scope");
  napi_value made, arr, r, exc = NULL;
  bool threw = false;
  kd_status st = napi_create_array(env, &made) == napi_ok && kd_box_args(env, op, args, &arr, made) == napi_ok
                     ? KD_OK
                     : kd_error(KD_ERR_INTERNAL, "boxing the arguments of '%s' failed", op->name);
  if (st == KD_OK) st = kd_call_js(env, c, &arr, 1, &r, &exc, &threw);
  if (st == KD_OK && !threw) st = kd_unbox_outputs(env, op, args, r, outs);
  kd_dispose_all(env, made);
  if (threw) {
    napi_throw(env, exc); /* the caller (the op's JS entry) sees it pending and lets it propagate */
    st = kd_error(KD_ERR_INVALID_ARGUMENT, "the implementation of '%s' threw", op->name);
  }
  napi_close_handle_scope(env, scope);
  return st;
}

/* The recorder of JS ops: fn(args, outputHandles) makes the node (lib/library.js). */
static kd_status kd_js_record(void *data, const kd_op_info *op, kd_value *args, kd_value *outs) {
  kd_js_callable *c = (kd_js_callable *)data;
  KD_TRY(kd_js_callable_check(c, op, "autograd formula"));
  napi_env env = c->env;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return kd_error(KD_ERR_INTERNAL, "napi scope");
  napi_value made, argv[2], r, exc = NULL;
  bool threw = false;
  kd_status st = KD_OK;
  int nouts = op->nouts;
  if (napi_create_array(env, &made) != napi_ok || kd_box_args(env, op, args, &argv[0], made) != napi_ok) st = KD_ERR_INTERNAL;
  if (st == KD_OK) {
    kd_value list = nouts < 0 ? outs[0] : kd_value_none();
    if (nouts >= 0) {
      napi_create_array_with_length(env, (size_t)nouts, &argv[1]);
      for (int i = 0; i < nouts && st == KD_OK; i++) {
        napi_value h;
        if (kd_box_arg(env, &outs[i], &h, made) != napi_ok) st = KD_ERR_INTERNAL;
        else napi_set_element(env, argv[1], (uint32_t)i, h);
      }
    } else if (kd_box_arg(env, &list, &argv[1], made) != napi_ok) {
      st = KD_ERR_INTERNAL;
    }
    if (st != KD_OK) st = kd_error(KD_ERR_INTERNAL, "boxing the arguments of '%s' failed", op->name);
  }
  if (st == KD_OK) st = kd_call_js(env, c, argv, 2, &r, &exc, &threw);
  kd_dispose_all(env, made); /* the node holds what the formula saved (See Note [Tensors a custom node saves]) */
  if (threw) {
    napi_throw(env, exc);
    st = kd_error(KD_ERR_INVALID_ARGUMENT, "the autograd setup of '%s' threw", op->name);
  }
  napi_close_handle_scope(env, scope);
  return st;
}

/* { id, name, nouts, args: [{name, type, hasDefault}], fn, backward? } of a runtime op (also for the ops of
 * C extensions, src/napi/extension.c). */
napi_status kd_napi_library_op_object(napi_env env, int id, napi_value *out) {
  const kd_op_info *op = kd_op_info_of(id);
  const kd_op_schema *s = kd_op_schema_of(id);
  napi_value r, v, args;
  napi_status st = napi_create_object(env, &r);
  if (st == napi_ok) st = napi_create_int32(env, id, &v);
  if (st == napi_ok) st = napi_set_named_property(env, r, "id", v);
  if (st == napi_ok) st = napi_create_string_utf8(env, op->name, NAPI_AUTO_LENGTH, &v);
  if (st == napi_ok) st = napi_set_named_property(env, r, "name", v);
  if (st == napi_ok) st = napi_create_int32(env, op->nouts, &v);
  if (st == napi_ok) st = napi_set_named_property(env, r, "nouts", v);
  if (st == napi_ok) st = napi_create_array_with_length(env, (size_t)op->nargs, &args);
  for (int i = 0; i < op->nargs && st == napi_ok; i++) {
    napi_value a;
    st = napi_create_object(env, &a);
    if (st == napi_ok) st = napi_create_string_utf8(env, op->args[i].name, NAPI_AUTO_LENGTH, &v);
    if (st == napi_ok) st = napi_set_named_property(env, a, "name", v);
    if (st == napi_ok) st = napi_create_string_utf8(env, s->type_names[i], NAPI_AUTO_LENGTH, &v);
    if (st == napi_ok) st = napi_set_named_property(env, a, "type", v);
    if (st == napi_ok) st = napi_get_boolean(env, op->args[i].has_default, &v);
    if (st == napi_ok) st = napi_set_named_property(env, a, "hasDefault", v);
    if (st == napi_ok) st = napi_set_element(env, args, (uint32_t)i, a);
  }
  if (st == napi_ok) st = napi_set_named_property(env, r, "args", args);
  const kd_op_info *bw = kd_op_info_of(kd_op_backward(id));
  if (st == napi_ok && bw) st = napi_create_string_utf8(env, bw->name, NAPI_AUTO_LENGTH, &v);
  if (st == napi_ok && bw) st = napi_set_named_property(env, r, "backward", v);
  if (st == napi_ok) st = kd_napi_op_function(env, op, &v);
  if (st == napi_ok) st = napi_set_named_property(env, r, "fn", v);
  if (st == napi_ok) *out = r;
  return st;
}

/* define(schema) -> the op object */
static napi_value kd_lib_define(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  KD_NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  char *schema = NULL;
  kd_status st = kd_napi_string_dup(env, argc < 1 ? NULL : argv[0], "define(schema): schema", KD_LIB_MAX_SCHEMA, &schema);
  int id = -1;
  if (st == KD_OK) st = kd_runtime_op_define(schema, &id);
  free(schema);
  if (st != KD_OK) return kd_napi_throw(env, st);
  napi_value r;
  KD_NAPI_CALL(env, kd_napi_library_op_object(env, id, &r));
  return r;
}

static int kd_lib_id_arg(napi_env env, napi_value v) {
  int32_t id = -1;
  napi_get_value_int32(env, v, &id);
  return kd_op_schema_of(id) ? id : -1;
}

/* Binds fn to op `id`: as its kernel for a backend key, or (KD_KEY_AUTOGRAD) as its recorder. */
static napi_value kd_lib_attach(napi_env env, napi_value fn, int id, kd_key key) {
  kd_js_callable *c = kd_js_callable_new(env, fn);
  if (!c) return kd_napi_throw_msg(env, KD_ERR_OOM, "out of memory");
  kd_status st = key == KD_KEY_AUTOGRAD ? kd_op_set_recorder(id, kd_js_record, c, false)
                                        : kd_op_set_kernel(id, key, kd_js_kernel, c, kd_js_callable_free, false);
  if (st != KD_OK) {
    kd_js_callable_free(c);
    return kd_napi_throw(env, st);
  }
  return NULL;
}

/* impl(id, 'CPU'|'CUDA', fn(args) -> [handles, fresh]) */
static napi_value kd_lib_impl(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  KD_NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  int id = argc == 3 ? kd_lib_id_arg(env, argv[0]) : -1;
  char *key = NULL;
  if (id < 0 || kd_napi_string_dup(env, argv[1], "impl: key", 8, &key) != KD_OK || (strcmp(key, "CPU") != 0 && strcmp(key, "CUDA") != 0)) {
    free(key);
    return kd_napi_throw_msg(env, KD_ERR_TYPE, "impl(id, key, fn): bad arguments");
  }
  const kd_key k = strcmp(key, "CPU") == 0 ? KD_KEY_CPU : KD_KEY_CUDA;
  free(key);
  return kd_lib_attach(env, argv[2], id, k);
}

/* setRecorder(id, fn(args, outputs)): the autograd formula of a JS op (once). */
static napi_value kd_lib_set_recorder(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  KD_NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  int id = argc == 2 ? kd_lib_id_arg(env, argv[0]) : -1;
  if (id < 0) return kd_napi_throw_msg(env, KD_ERR_TYPE, "setRecorder(id, fn): bad arguments");
  return kd_lib_attach(env, argv[1], id, KD_KEY_AUTOGRAD);
}

/* setAutocast(id, deviceType (0 cpu, 1 cuda), policy (kd_autocast_policy)) */
static napi_value kd_lib_set_autocast(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  KD_NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  int id = argc == 3 ? kd_lib_id_arg(env, argv[0]) : -1;
  int32_t dev = -1, policy = -1;
  napi_get_value_int32(env, argv[1], &dev);
  napi_get_value_int32(env, argv[2], &policy);
  if (id < 0) return kd_napi_throw_msg(env, KD_ERR_TYPE, "setAutocast(id, dev, policy): bad arguments");
  kd_status st = kd_op_set_autocast(id, dev, policy);
  if (st != KD_OK) return kd_napi_throw(env, st);
  return NULL;
}

napi_status kd_napi_register_library(napi_env env, napi_value exports) {
  napi_value o;
  napi_status st = napi_create_object(env, &o);
  if (st == napi_ok) st = kd_napi_set_fn(env, o, "define", kd_lib_define, NULL);
  if (st == napi_ok) st = kd_napi_set_fn(env, o, "impl", kd_lib_impl, NULL);
  if (st == napi_ok) st = kd_napi_set_fn(env, o, "setRecorder", kd_lib_set_recorder, NULL);
  if (st == napi_ok) st = kd_napi_set_fn(env, o, "setAutocast", kd_lib_set_autocast, NULL);
  if (st == napi_ok) st = napi_set_named_property(env, exports, "library", o);
  return st;
}
