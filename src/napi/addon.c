/* addon.c - the module's entry point. Context-aware: all state lives in per-environment
 * instance data (kd_napi_env), released by its finalizer and an env cleanup hook, so the
 * addon loads in the main thread and in any number of worker_threads. */
#include <stdlib.h>

#include "autograd/autograd.h"
#include "core/storage.h"
#include "dispatch/dispatch.h"
#include "napi/napi_util.h"

napi_status kd_napi_register_autocast(napi_env env, napi_value exports); /* napi/autocast.c */

/* Runs when the environment shuts down, before the instance-data finalizer: drops the error
 * factory reference and gives back the external memory this isolate was told about. */
static void kd_napi_env_cleanup(void *arg) {
  kd_napi_env *e = (kd_napi_env *)arg;
  if (e->error_factory) napi_delete_reference(e->env, e->error_factory);
  e->error_factory = NULL;
  int64_t ignored;
  if (e->reported_bytes) napi_adjust_external_memory(e->env, -e->reported_bytes, &ignored);
  e->reported_bytes = 0;
}

static void kd_napi_env_finalize(napi_env env, void *data, void *hint) {
  kd_napi_env *e = (kd_napi_env *)data;
  if (e->error_factory) napi_delete_reference(env, e->error_factory);
  free(e);
}

NAPI_MODULE_INIT(/* napi_env env, napi_value exports */) {
  kd_dispatch_init();
  kd_autograd_init();
  kd_napi_env *e = (kd_napi_env *)calloc(1, sizeof *e);
  if (!e) {
    napi_throw_error(env, "KD_OUT_OF_MEMORY", "kindling: out of memory at load");
    return NULL;
  }
  e->env = env;
  KD_NAPI_CALL(env, napi_set_instance_data(env, e, kd_napi_env_finalize, NULL));
  KD_NAPI_CALL(env, napi_add_env_cleanup_hook(env, kd_napi_env_cleanup, e));
  KD_NAPI_CALL(env, kd_napi_register_ops(env, exports));
  KD_NAPI_CALL(env, kd_napi_register_tensor(env, exports));
  KD_NAPI_CALL(env, kd_napi_register_runtime(env, exports));
  KD_NAPI_CALL(env, kd_napi_register_cuda(env, exports));
  KD_NAPI_CALL(env, kd_napi_register_autograd(env, exports));
  KD_NAPI_CALL(env, kd_napi_register_file_map(env, exports));
  KD_NAPI_CALL(env, kd_napi_register_data_async(env, exports));
  KD_NAPI_CALL(env, kd_napi_register_autocast(env, exports));
  return exports;
}
