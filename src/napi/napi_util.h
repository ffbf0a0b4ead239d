/* napi_util.h - shared helpers of the Node-API layer (src/napi/ is the only place that
 * includes node_api.h): status checking, per-environment instance data, tensor handles,
 * and turning a kd_status into a thrown JS error with a `code`.
 *
 * Every napi_* call is checked with KD_NAPI_CALL: on failure the pending JS exception (or a
 * new Error with Node-API's message) is thrown and the function returns NULL. */
#ifndef KD_NAPI_UTIL_H
#define KD_NAPI_UTIL_H

#include <node_api.h>
#include <stdbool.h>

#include "core/status.h"
#include "core/tensor.h"

struct kd_napi_handle;

/* The undisposed handles of an environment, swept after collections (handle_table.c). */
typedef struct kd_napi_handle_table {
  struct kd_napi_handle **handles;
  size_t count, capacity;
  size_t made_since_sweep;   /* handles entered since the last sweep */
  uint32_t since_canary_read; /* calls since the canary was last read */
  int64_t bytes_after_sweep; /* live storage bytes when the last sweep ended */
  napi_ref canary;           /* weak reference that empties at the next collection */
  bool collection_pending;   /* a collection ran since the last sweep */
  bool enabled;              /* KINDLING_GC_FINALIZERS is not 0 */
  bool closed;               /* the environment is shutting down */
} kd_napi_handle_table;

/* Per-environment state (one per main thread / worker thread), set as instance data. */
typedef struct kd_napi_env {
  napi_env env;
  napi_ref error_factory;  /* JS function (code, message) -> Error, from lib/errors.js */
  int64_t reported_bytes;  /* external memory reported to this isolate */
  kd_napi_handle_table table;
} kd_napi_env;

kd_napi_env *kd_napi_env_get(napi_env env);

/* Throws the pending Node-API error (if any is not already pending) and returns NULL. */
napi_value kd_napi_throw_last(napi_env env, napi_status st);
#define KD_NAPI_CALL(env, call)                                                                  \
  do {                                                                                           \
    napi_status kd_napi_st_ = (call);                                                            \
    if (kd_napi_st_ != napi_ok) return kd_napi_throw_last((env), kd_napi_st_);                   \
  } while (0)

/* Throws a JS error for a failed kd_status: the error factory gets kd_status_code(st) and the
 * thread-local message. Returns NULL so callers can `return kd_napi_throw(env, st);`. */
napi_value kd_napi_throw(napi_env env, kd_status st);
/* Same, with a message of its own (for argument errors found in the napi layer). */
napi_value kd_napi_throw_msg(napi_env env, kd_status st, const char *fmt, ...);

/* Tensor handles: a type-tagged object wrapping a kd_napi_handle. dispose() releases the
 * tensor and frees the struct; a sweep after a collection or the finalizer does if it was not.
 * Note [Handles and their finalizers], Note [Freeing what the GC collected]. */
typedef struct kd_napi_handle {
  kd_tensor *t;
  napi_ref ref;        /* the wrap's weak reference to the handle object (NULL if untracked) */
  kd_napi_env *owner;  /* the table the handle is entered in, or NULL */
  size_t slot;         /* its index there */
} kd_napi_handle;
/* Wraps t, taking over the caller's reference (released on failure). */
napi_status kd_napi_wrap_tensor(napi_env env, kd_tensor *t, napi_value *out);
/* Unwraps a handle: KD_ERR_TYPE if `v` is not a kindling tensor handle, KD_ERR_DISPOSED if it
 * was disposed. The tensor is borrowed. `what` names the argument in messages. */
kd_status kd_napi_unwrap_tensor(napi_env env, napi_value v, const char *what, kd_tensor **out);
/* The handle struct behind `v`, or NULL if `v` is not a tensor handle. */
kd_napi_handle *kd_napi_handle_of(napi_env env, napi_value v);
/* Releases the handle's tensor and removes its wrap (no finalizer left); v is the handle h came from. */
void kd_napi_dispose_handle(napi_env env, napi_value v, kd_napi_handle *h);
/* Releases h's tensor, deletes its reference, takes it out of its table and frees it. */
void kd_napi_handle_free(napi_env env, kd_napi_handle *h);

/* The handle table (handle_table.c, Note [Freeing what the GC collected]). */
void kd_napi_handle_table_init(kd_napi_env *e);
bool kd_napi_handle_table_enabled(kd_napi_env *e);
/* Enters h in e's table; false (h untracked) when out of memory. */
bool kd_napi_handle_track(kd_napi_env *e, kd_napi_handle *h);
void kd_napi_handle_untrack(kd_napi_handle *h);
/* After a collection, releases the tensors of collected handles: once the table has grown
 * enough since the last sweep, or after every collection when every_collection is set. */
void kd_napi_collect_unreachable(napi_env env, bool every_collection);
/* At environment shutdown: releases every tracked tensor and empties the table. */
void kd_napi_handle_table_close(napi_env env, kd_napi_env *e);

/* Reports changes in the bytes of live storages, host and device, to V8
 * (napi_adjust_external_memory) once they add up. */
void kd_napi_sync_external_memory(napi_env env);

/* Small value helpers (return napi_status). */
napi_status kd_napi_set_fn(napi_env env, napi_value obj, const char *name, napi_callback cb, void *data);
napi_status kd_napi_string_arg(napi_env env, napi_value v, char *buf, size_t n);

/* Each src/napi/<part>.c exports its functions from one register function, called by addon.c. */
napi_status kd_napi_register_ops(napi_env env, napi_value exports);
napi_status kd_napi_register_tensor(napi_env env, napi_value exports);
napi_status kd_napi_register_runtime(napi_env env, napi_value exports);
napi_status kd_napi_register_cuda(napi_env env, napi_value exports);
napi_status kd_napi_register_autograd(napi_env env, napi_value exports);
napi_status kd_napi_register_file_map(napi_env env, napi_value exports);
napi_status kd_napi_register_data_async(napi_env env, napi_value exports);

#endif
