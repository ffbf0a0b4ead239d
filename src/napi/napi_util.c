/* napi_util.c - Node-API helpers: errors, tensor handles, external-memory reporting.
 * See napi_util.h. */
#include "napi/napi_util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/storage.h"

/* Note [Tensor handle tag]: every handle is tagged with this UUID, so an external made by
 * another addon (or a forged object) can never be unwrapped as a tensor. */
static const napi_type_tag kd_tensor_tag = {0x6b696e646c696e67ULL, 0x74656e736f720001ULL};

kd_napi_env *kd_napi_env_get(napi_env env) {
  void *data = NULL;
  if (napi_get_instance_data(env, &data) != napi_ok) return NULL;
  return (kd_napi_env *)data;
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

/* Note [Handles and their finalizers]
 * A tensor handle is a plain JS object that wraps a kd_napi_handle (napi_wrap) and carries
 * kindling's type tag. The wrap's finalizer drops the handle's reference when an undisposed
 * handle was collected and kindling's own sweep has not freed it first (See Note [Freeing what
 * the GC collected] in handle_table.c). dispose() releases the tensor AND removes the wrap
 * (napi_remove_wrap) and its reference, so a disposed handle has no finalizer left: Node-API
 * runs the finalizers of a stable-version module only when the event loop turns, and every
 * finalizer still registered when a handle is collected waits in that queue, about 190 bytes a
 * handle; a synchronous loop of kd.tidy steps would grow by that much per tensor until the loop
 * turned. A tagged object without a wrap is a disposed handle (kd_napi_handle_of returns the
 * shared one with t == NULL). */

void kd_napi_handle_free(napi_env env, kd_napi_handle *h) {
  if (h->t) kd_tensor_release(h->t);
  h->t = NULL;
  if (h->ref) napi_delete_reference(env, h->ref);
  kd_napi_handle_untrack(h);
  free(h);
}

/* Finalizer, run when the event loop turns or at teardown: frees the handle; calls no JS. */
static void kd_napi_handle_finalize(napi_env env, void *data, void *hint) { kd_napi_handle_free(env, (kd_napi_handle *)data); }

static kd_napi_handle kd_napi_disposed_handle; /* t == NULL, never written */

napi_status kd_napi_wrap_tensor(napi_env env, kd_tensor *t, napi_value *out) {
  kd_napi_collect_unreachable(env, false);
  kd_napi_handle *h = (kd_napi_handle *)calloc(1, sizeof *h);
  if (!h) {
    kd_tensor_release(t);
    return napi_generic_failure;
  }
  h->t = t;
  kd_napi_env *e = kd_napi_env_get(env);
  bool tracked = kd_napi_handle_table_enabled(e);
  napi_status st = napi_create_object(env, out);
  if (st == napi_ok) st = napi_wrap(env, *out, h, kd_napi_handle_finalize, NULL, tracked ? &h->ref : NULL);
  if (st != napi_ok) {
    kd_tensor_release(t);
    free(h);
    return st;
  }
  if (tracked) kd_napi_handle_track(e, h); /* out of memory for the table: the finalizer frees it */
  return napi_type_tag_object(env, *out, &kd_tensor_tag);
}

kd_napi_handle *kd_napi_handle_of(napi_env env, napi_value v) {
  napi_valuetype type;
  if (napi_typeof(env, v, &type) != napi_ok || type != napi_object) return NULL;
  bool ok = false;
  if (napi_check_object_type_tag(env, v, &kd_tensor_tag, &ok) != napi_ok || !ok) return NULL;
  void *data = NULL;
  if (napi_unwrap(env, v, &data) != napi_ok || !data) return &kd_napi_disposed_handle;
  return (kd_napi_handle *)data;
}

void kd_napi_dispose_handle(napi_env env, napi_value v, kd_napi_handle *h) {
  if (!h->t) return;
  void *data = NULL;
  napi_remove_wrap(env, v, &data); /* the wrap's own reference, when untracked, goes with it */
  kd_napi_handle_free(env, h);
}

kd_status kd_napi_unwrap_tensor(napi_env env, napi_value v, const char *what, kd_tensor **out) {
  kd_napi_handle *h = kd_napi_handle_of(env, v);
  if (!h) return kd_error(KD_ERR_TYPE, "argument '%s' must be a Tensor", what);
  if (!h->t) return kd_error(KD_ERR_DISPOSED, "argument '%s': the tensor has been disposed", what);
  *out = h->t;
  return KD_OK;
}

void kd_napi_sync_external_memory(napi_env env) {
  kd_napi_env *e = kd_napi_env_get(env);
  if (!e) return;
  int64_t now = kd_storage_live_bytes(KD_DEVICE_CPU) + kd_storage_live_bytes(KD_DEVICE_CUDA);
  int64_t delta = now - e->reported_bytes;
  if (delta > (1 << 20) || delta < -(1 << 20)) {
    if (delta < -e->reported_bytes) delta = -e->reported_bytes;
    int64_t result;
    if (napi_adjust_external_memory(env, delta, &result) == napi_ok) e->reported_bytes += delta;
  }
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
