/* napi_util.c - Node-API helpers: errors, tensor handles, external-memory reporting.
 * See napi_util.h. */
#include "napi/napi_util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/storage.h"

/* Note [The first environment's state]
 * kd_napi_env_get runs several times per op (every tensor argument, every result, dispose). The
 * first environment that loads the addon (the main thread's in almost every program) is kept in
 * two atomics, so that its lookups are a compare and a load instead of a call into Node. The
 * state is published before the environment (release) and the environment is withdrawn before
 * the state (kd_napi_env_forget, from that environment's own cleanup): a thread that finds its
 * own env in kd_first_env therefore reads that env's state, which is alive while the env runs
 * JS. Other environments (workers) ask Node. */
_Atomic(napi_env) kd_first_env;
_Atomic(kd_napi_env *) kd_first_state;

kd_napi_env *kd_napi_env_lookup(napi_env env) {
  void *data = NULL;
  if (napi_get_instance_data(env, &data) != napi_ok) return NULL;
  return (kd_napi_env *)data;
}

void kd_napi_env_remember(kd_napi_env *e) {
  kd_napi_env *none = NULL;
  if (!atomic_compare_exchange_strong(&kd_first_state, &none, e)) return; /* another env is first */
  atomic_store_explicit(&kd_first_env, e->env, memory_order_release);
}

void kd_napi_env_forget(kd_napi_env *e) {
  if (atomic_load_explicit(&kd_first_state, memory_order_acquire) != e) return;
  atomic_store_explicit(&kd_first_env, NULL, memory_order_release);
  atomic_store_explicit(&kd_first_state, NULL, memory_order_release);
}

napi_value kd_napi_throw_last(napi_env env, napi_status st) {
  bool pending = false;
  napi_is_exception_pending(env, &pending);
  if (!pending) {
    const napi_extended_error_info *info = NULL;
    napi_get_last_error_info(env, &info);
    char msg[256];
    snprintf(msg, sizeof msg, "Node-API call failed: %s",
             info && info->error_message ? info->error_message : "unknown error");
    napi_throw_error(env, "KD_INTERNAL", msg);
  }
  return NULL;
}

static napi_value kd_napi_throw_code(napi_env env, const char *code, const char *message) {
  bool pending = false;
  napi_is_exception_pending(env, &pending);
  if (pending) return NULL;
  kd_napi_env *e = kd_napi_env_get(env);
  napi_value factory = NULL, args[2], err = NULL, undefined;
  if (e && e->error_factory && napi_get_reference_value(env, e->error_factory, &factory) == napi_ok && factory &&
      napi_create_string_utf8(env, code, NAPI_AUTO_LENGTH, &args[0]) == napi_ok &&
      napi_create_string_utf8(env, message, NAPI_AUTO_LENGTH, &args[1]) == napi_ok &&
      napi_get_undefined(env, &undefined) == napi_ok &&
      napi_call_function(env, undefined, factory, 2, args, &err) == napi_ok && err) {
    napi_throw(env, err);
    return NULL;
  }
  napi_is_exception_pending(env, &pending);
  if (!pending) napi_throw_error(env, code, message);
  return NULL;
}

napi_value kd_napi_throw(napi_env env, kd_status st) {
  return kd_napi_throw_code(env, kd_status_code(st), kd_last_error());
}

napi_value kd_napi_throw_msg(napi_env env, kd_status st, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return kd_napi_throw_code(env, kd_status_code(st), msg);
}

/* Finalizer of an untracked handle's External (KINDLING_GC_FINALIZERS=0), run when the event loop
 * turns or at teardown: frees the handle if it was not disposed; calls no JS. */
static void kd_napi_handle_finalize(napi_env env, void *data, void *hint) {
  kd_napi_env *e = (kd_napi_env *)hint;
  kd_napi_handle *h = kd_napi_handle_find(e, (uint64_t)(uintptr_t)data);
  if (h) kd_napi_handle_free(env, e, h);
  kd_napi_env_unhold(e);
}

static kd_napi_handle kd_napi_disposed_handle; /* t == NULL, never written */

/* See Note [Tensor handles] in handle_table.c. */
napi_status kd_napi_wrap_tensor(napi_env env, kd_tensor *t, napi_value *out) {
  kd_napi_collect_unreachable(env, false);
  kd_napi_env *e = kd_napi_env_get(env);
  kd_napi_handle *h = e ? kd_napi_handle_new(e, t) : NULL;
  if (!h) {
    kd_tensor_release(t);
    return napi_generic_failure;
  }
  void *token = (void *)(uintptr_t)h->token;
  bool tracked = kd_napi_handle_table_enabled(e);
  napi_status st = napi_create_external(env, token, tracked ? NULL : kd_napi_handle_finalize, e, out);
  if (st == napi_ok && !tracked) e->holds++;
  if (st == napi_ok && tracked) st = napi_create_reference(env, *out, 0, &h->ref);
  if (st != napi_ok) kd_napi_handle_free(env, e, h); /* releases t; an External made is left inert */
  return st;
}

kd_napi_handle *kd_napi_handle_of(napi_env env, napi_value v) {
  void *data = NULL;
  if (napi_get_value_external(env, v, &data) != napi_ok) return NULL;
  uint64_t token = (uint64_t)(uintptr_t)data;
  if (!kd_napi_token_is_handle(token)) return NULL; /* another addon's External */
  kd_napi_handle *h = kd_napi_handle_find(kd_napi_env_get(env), token);
  return h ? h : &kd_napi_disposed_handle;
}

void kd_napi_dispose_handle(napi_env env, kd_napi_handle *h) {
  if (!h->t) return;
  kd_napi_handle_free(env, kd_napi_env_get(env), h);
}

kd_status kd_napi_unwrap_tensor(napi_env env, napi_value v, const char *what, kd_tensor **out) {
  kd_napi_handle *h = kd_napi_handle_of(env, v);
  if (!h) return kd_error(KD_ERR_TYPE, "argument '%s' must be a Tensor", what);
  if (!h->t) return kd_error(KD_ERR_DISPOSED, "argument '%s': the tensor has been disposed", what);
  *out = h->t;
  return KD_OK;
}

void kd_napi_report_external_memory(napi_env env, kd_napi_env *e, int64_t delta) {
  if (delta < -e->reported_bytes) delta = -e->reported_bytes;
  int64_t result;
  if (napi_adjust_external_memory(env, delta, &result) == napi_ok) e->reported_bytes += delta;
}

napi_status kd_napi_set_fn(napi_env env, napi_value obj, const char *name, napi_callback cb, void *data) {
  napi_value fn;
  napi_status st = napi_create_function(env, name, NAPI_AUTO_LENGTH, cb, data, &fn);
  if (st != napi_ok) return st;
  return napi_set_named_property(env, obj, name, fn);
}

napi_status kd_napi_string_arg(napi_env env, napi_value v, char *buf, size_t n) {
  size_t len;
  return napi_get_value_string_utf8(env, v, buf, n, &len);
}

/* A string argument of any length up to max_len bytes, copied into *out (malloc'ed; free it)
 * (See Note [JS strings in C] in ops.c). Used where C keeps a name or a schema. */
kd_status kd_napi_string_dup(napi_env env, napi_value v, const char *what, size_t max_len, char **out) {
  *out = NULL;
  napi_valuetype t = napi_undefined;
  napi_typeof(env, v, &t);
  if (t != napi_string) return kd_error(KD_ERR_TYPE, "%s must be a string", what);
  size_t len = 0;
  napi_get_value_string_utf8(env, v, NULL, 0, &len);
  if (len > max_len) return kd_error(KD_ERR_INVALID_ARGUMENT, "%s is too long (%zu bytes, at most %zu)", what, len, max_len);
  char *buf = (char *)malloc(len + 1);
  if (!buf) return kd_error(KD_ERR_OOM, "out of memory");
  napi_get_value_string_utf8(env, v, buf, len + 1, &len);
  if (strlen(buf) != len) {
    free(buf);
    return kd_error(KD_ERR_INVALID_ARGUMENT, "%s holds a NUL character", what);
  }
  *out = buf;
  return KD_OK;
}
