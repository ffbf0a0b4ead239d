/* addon.c - the module's entry point. Context-aware: all state lives in per-environment
 * instance data (kd_napi_env), released by its finalizer and an env cleanup hook, so the
 * addon loads in the main thread and in any number of worker_threads. It also declares the
 * Node-API version the module is run with (See Note [Finalizers run by the GC]). */
#include <stdlib.h>

#include "autograd/autograd.h"
#include "core/storage.h"
#include "dispatch/dispatch.h"
#include "napi/napi_util.h"

napi_status kd_napi_register_autocast(napi_env env, napi_value exports); /* napi/autocast.c */
napi_status kd_napi_register_library(napi_env env, napi_value exports);  /* napi/library.c */
napi_status kd_napi_register_extension(napi_env env, napi_value exports); /* napi/extension.c */
napi_status kd_napi_register_profiler(napi_env env, napi_value exports); /* napi/profiler.c */

/* Runs when the environment shuts down, before the instance-data finalizer: releases the
 * tensors of undisposed handles, drops the error factory reference and gives back the external
 * memory this isolate was told about. */
static void kd_napi_env_cleanup(void *arg) {
  kd_napi_env *e = (kd_napi_env *)arg;
  kd_napi_env_forget(e);
  kd_napi_handle_table_close(e->env, e);
  if (e->error_factory) napi_delete_reference(e->env, e->error_factory);
  e->error_factory = NULL;
  int64_t ignored;
  if (e->reported_bytes) napi_adjust_external_memory(e->env, -e->reported_bytes, &ignored);
  e->reported_bytes = 0;
}

static void kd_napi_env_finalize(napi_env env, void *data, void *hint) {
  kd_napi_env *e = (kd_napi_env *)data;
  kd_napi_env_forget(e);
  if (!e->table.closed) kd_napi_handle_table_close(env, e);
  if (e->error_factory) napi_delete_reference(env, e->error_factory);
  e->error_factory = NULL;
  kd_napi_env_release(e); /* freed now, or by the last handle finalizer still to run */
}

/* Note [Finalizers run by the GC]
 * Node-API queues the finalizers of a module built for a stable Node-API version and runs them
 * from a SetImmediate, when the event loop turns. A module that declares
 * NAPI_VERSION_EXPERIMENTAL (Node 18.19+, 20.10+, 21+) gets them called by the GC itself, but
 * on Node 20 a collection that runs while a native call has a JS exception pending makes Node's
 * finalizer call report that exception from inside the GC, which aborts the process. kindling
 * declares the stable version, so none of its code runs during a collection, and frees what
 * the GC collected itself, from its next native call: See Note [Freeing what the GC collected]
 * in handle_table.c. The bytes of live storages are reported to V8
 * (napi_adjust_external_memory), so a loop that allocates little JS but large tensors still
 * triggers collections. */
NAPI_MODULE_EXPORT int32_t NODE_API_MODULE_GET_API_VERSION(void) { return NAPI_VERSION; }
NAPI_MODULE_EXPORT napi_value NAPI_MODULE_INITIALIZER(napi_env env, napi_value exports);

napi_value NAPI_MODULE_INITIALIZER(napi_env env, napi_value exports) {
  kd_dispatch_init();
  kd_autograd_init();
  kd_napi_env *e = (kd_napi_env *)calloc(1, sizeof *e);
  if (!e) {
    napi_throw_error(env, "KD_OUT_OF_MEMORY", "kindling: out of memory at load");
    return NULL;
  }
  e->env = env;
  kd_napi_handle_table_init(e);
  KD_NAPI_CALL(env, napi_set_instance_data(env, e, kd_napi_env_finalize, NULL));
  KD_NAPI_CALL(env, napi_add_env_cleanup_hook(env, kd_napi_env_cleanup, e));
  kd_napi_env_remember(e);
  KD_NAPI_CALL(env, kd_napi_register_ops(env, exports));
  KD_NAPI_CALL(env, kd_napi_register_tensor(env, exports));
  KD_NAPI_CALL(env, kd_napi_register_runtime(env, exports));
  KD_NAPI_CALL(env, kd_napi_register_cuda(env, exports));
  KD_NAPI_CALL(env, kd_napi_register_autograd(env, exports));
  KD_NAPI_CALL(env, kd_napi_register_file_map(env, exports));
  KD_NAPI_CALL(env, kd_napi_register_data_async(env, exports));
  KD_NAPI_CALL(env, kd_napi_register_autocast(env, exports));
  KD_NAPI_CALL(env, kd_napi_register_library(env, exports));
  KD_NAPI_CALL(env, kd_napi_register_extension(env, exports));
  KD_NAPI_CALL(env, kd_napi_register_profiler(env, exports));
  return exports;
}
