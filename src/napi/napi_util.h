/* napi_util.h - shared helpers of the Node-API layer (src/napi/ is the only place that
 * includes node_api.h): status checking, per-environment instance data, tensor handles,
 * and turning a kd_status into a thrown JS error with a `code`.
 *
 * Every napi_* call is checked with KD_NAPI_CALL: on failure the pending JS exception (or a
 * new Error with Node-API's message) is thrown and the function returns NULL. */
#ifndef KD_NAPI_UTIL_H
#define KD_NAPI_UTIL_H

#include <node_api.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/status.h"
#include "core/storage.h"
#include "core/tensor.h"

struct kd_napi_handle;

/* The handles of an environment: their structs, in pages that never move, and the undisposed
 * ones, swept after collections (handle_table.c, Note [Tensor handles]). */
typedef struct kd_napi_handle_table {
  struct kd_napi_handle **pages; /* KD_NAPI_HANDLE_PAGE structs each */
  size_t npages;
  struct kd_napi_handle *free_list; /* structs of disposed handles, for reuse */
  uint64_t serial;                  /* tokens made so far */
  struct kd_napi_handle **live;     /* the undisposed handles (tracked or not) */
  size_t count, capacity;
  size_t made_since_sweep;   /* handles made since the last sweep */
  uint32_t since_canary_read; /* handles made since the canary was last read */
  int64_t bytes_after_sweep; /* live storage bytes when the last sweep ended */
  napi_ref canary;           /* weak reference that empties at the next collection */
  bool collection_pending;   /* a collection ran since the last sweep */
  bool enabled;              /* KINDLING_GC_FINALIZERS is not 0 */
  bool closed;               /* the environment is shutting down */
} kd_napi_handle_table;

/* The tensors a running op call uses (See Note [Arguments are held for the call] in ops.c):
 * entries are kd_tensor pointers, with KD_NAPI_FRAME_OWNED set once the frame holds a reference
 * that it releases when the call ends. Frames nest (a JS kernel calling ops): outer is the call
 * that was running when this one started. */
#define KD_NAPI_FRAME_OWNED ((uintptr_t)1)
typedef struct kd_napi_call_frame {
  struct kd_napi_call_frame *outer;
  uintptr_t *entries;
  int n, cap;
} kd_napi_call_frame;
/* Releases the references the frame owns (when its call returns). */
void kd_napi_call_frame_end(kd_napi_call_frame *f);

/* Per-environment state (one per main thread / worker thread), set as instance data. */
typedef struct kd_napi_env {
  napi_env env;
  napi_ref error_factory;  /* JS function (code, message) -> Error, from lib/errors.js */
  int64_t reported_bytes;  /* external memory reported to this isolate */
  kd_napi_handle_table table;
  size_t holds;            /* finalizers still to run that read this struct (handle_table.c) */
  bool finalized;          /* the instance data's finalizer ran; freed when holds is 0 too */
  kd_napi_call_frame *frames; /* the innermost op call running on this environment, or NULL */
  _Alignas(16) unsigned char small[64]; /* the values of a small tensor read (tensor.c hostSmall) */
} kd_napi_env;

/* This environment's state (See Note [The first environment's state] in napi_util.c). */
extern _Atomic(napi_env) kd_first_env;
extern _Atomic(kd_napi_env *) kd_first_state;
kd_napi_env *kd_napi_env_lookup(napi_env env);
static inline kd_napi_env *kd_napi_env_get(napi_env env) {
  if (env == atomic_load_explicit(&kd_first_env, memory_order_acquire))
    return atomic_load_explicit(&kd_first_state, memory_order_relaxed);
  return kd_napi_env_lookup(env);
}
/* Called once the state is set as instance data / from the environment's cleanup. */
void kd_napi_env_remember(kd_napi_env *e);
void kd_napi_env_forget(kd_napi_env *e);

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

/* Tensor handles: a JS External whose value is a token naming a kd_napi_handle of the
 * environment's table (Note [Tensor handles] in handle_table.c). dispose() releases the tensor
 * and recycles the struct; a sweep after a collection, or the finalizer, does if it was not. */
typedef struct kd_napi_handle {
  kd_tensor *t;                /* NULL once disposed */
  uint64_t token;              /* the token of the External that names it; 0 when free */
  napi_ref ref;                /* weak reference to the External (tracked handles), or NULL */
  size_t live_index;           /* its index in the table's live list */
  uint32_t slot;               /* its place in the pages */
  struct kd_napi_handle *next; /* next free struct, while free */
} kd_napi_handle;
/* Wraps t, taking over the caller's reference (released on failure). */
napi_status kd_napi_wrap_tensor(napi_env env, kd_tensor *t, napi_value *out);
/* Unwraps a handle: KD_ERR_TYPE if `v` is not a kindling tensor handle, KD_ERR_DISPOSED if it
 * was disposed. The tensor is borrowed. `what` names the argument in messages. */
kd_status kd_napi_unwrap_tensor(napi_env env, napi_value v, const char *what, kd_tensor **out);
/* The handle struct behind `v` (one with t == NULL when `v` was disposed), or NULL if `v` is not
 * a tensor handle. Valid until the next call that disposes or makes a handle. */
kd_napi_handle *kd_napi_handle_of(napi_env env, napi_value v);
/* Releases the handle's tensor and recycles its struct (nothing if it was disposed). */
void kd_napi_dispose_handle(napi_env env, kd_napi_handle *h);

/* The handle table (handle_table.c). */
void kd_napi_handle_table_init(kd_napi_env *e);
/* A new handle struct holding t, entered in the live list, with its token set; NULL when out of
 * memory. */
kd_napi_handle *kd_napi_handle_new(kd_napi_env *e, kd_tensor *t);
/* The live handle struct a token names, or NULL (a disposed handle's or a foreign token). */
kd_napi_handle *kd_napi_handle_find(kd_napi_env *e, uint64_t token);
/* True when a token has the mark of a kindling handle (live or disposed). */
bool kd_napi_token_is_handle(uint64_t token);
/* Releases h's tensor, deletes its reference, takes it out of the live list and recycles it. */
void kd_napi_handle_free(napi_env env, kd_napi_env *e, kd_napi_handle *h);
bool kd_napi_handle_table_enabled(kd_napi_env *e);
/* After a collection, releases the tensors of collected handles: once the table has grown
 * enough since the last sweep, or after every collection when every_collection is set. */
void kd_napi_collect_unreachable(napi_env env, bool every_collection);
/* At environment shutdown: releases every live tensor and empties the live list (the structs
 * stay until kd_napi_env_release frees them, for finalizers that run later). */
void kd_napi_handle_table_close(napi_env env, kd_napi_env *e);
/* The instance data's finalizer: frees e once no finalizer that reads it is left. */
void kd_napi_env_release(kd_napi_env *e);
/* A finalizer that read e (counted in e->holds) is done with it; frees e if it was the last one
 * after the instance data's finalizer ran. */
void kd_napi_env_unhold(kd_napi_env *e);

/* Reports changes in the bytes of allocated live storages, host and device, to V8
 * (napi_adjust_external_memory) once they add up (small storages are not counted: Note
 * [Small storages]). */
void kd_napi_report_external_memory(napi_env env, kd_napi_env *e, int64_t delta);
static inline void kd_napi_sync_external_memory(napi_env env) {
  kd_napi_env *e = kd_napi_env_get(env);
  if (!e) return;
  int64_t delta = kd_storage_allocated_bytes(KD_DEVICE_CPU) + kd_storage_allocated_bytes(KD_DEVICE_CUDA) - e->reported_bytes;
  if (delta > (1 << 20) || delta < -(1 << 20)) kd_napi_report_external_memory(env, e, delta);
}

/* The longest JS list kindling reads into C (See Note [JS lengths in C] in ops.c). */
#define KD_NAPI_MAX_LIST ((uint32_t)1 << 24)

/* Small value helpers (return napi_status). */
napi_status kd_napi_set_fn(napi_env env, napi_value obj, const char *name, napi_callback cb, void *data);
napi_status kd_napi_string_arg(napi_env env, napi_value v, char *buf, size_t n);
/* A string argument of any length up to max_len bytes, copied whole into *out (malloc'ed; the
 * caller frees it); a longer string, a non-string or one holding a NUL is an error naming `what`. */
kd_status kd_napi_string_dup(napi_env env, napi_value v, const char *what, size_t max_len, char **out);

/* Each src/napi/<part>.c exports its functions from one register function, called by addon.c. */
napi_status kd_napi_register_ops(napi_env env, napi_value exports);
napi_status kd_napi_register_tensor(napi_env env, napi_value exports);
napi_status kd_napi_register_runtime(napi_env env, napi_value exports);
napi_status kd_napi_register_cuda(napi_env env, napi_value exports);
napi_status kd_napi_register_autograd(napi_env env, napi_value exports);
napi_status kd_napi_register_file_map(napi_env env, napi_value exports);
napi_status kd_napi_register_data_async(napi_env env, napi_value exports);

#endif
