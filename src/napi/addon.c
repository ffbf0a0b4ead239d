/* addon.c - the module's entry point. Context-aware: all state lives in per-environment
 * instance data (kd_napi_env), released by its finalizer and an env cleanup hook, so the
 * addon loads in the main thread and in any number of worker_threads. It also declares the
 * Node-API version the module is run with (See Note [Finalizers run by the GC]). */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdlib.h>

#include "autograd/autograd.h"
#include "core/storage.h"
#include "dispatch/dispatch.h"
#include "napi/napi_util.h"

napi_status kd_napi_register_autocast(napi_env env, napi_value exports); /* napi/autocast.c */
napi_status kd_napi_register_library(napi_env env, napi_value exports);  /* napi/library.c */
napi_status kd_napi_register_extension(napi_env env, napi_value exports); /* napi/extension.c */
napi_status kd_napi_register_profiler(napi_env env, napi_value exports); /* napi/profiler.c */

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

/* Note [Finalizers run by the GC]
 * Node-API queues the finalizers of a module built for a stable Node-API version and runs them
 * from a SetImmediate, when the event loop turns. Synchronous code never lets it turn, so
 * `for (...) kd.randn([256, 256]).add(1)` freed nothing: the GC collected the wrappers, but
 * every tensor behind them waited in that queue (10 GB after 20000 iterations). (A disposed
 * handle leaves nothing in that queue: dispose() removes its finalizer, Note [Handles and their
 * finalizers] in napi_util.c, so kd.tidy loops stay flat either way.)
 * A module that declares NAPI_VERSION_EXPERIMENTAL gets its finalizers called by the GC itself,
 * as soon as a wrapper is collected. They may then touch no JS value and call only "basic"
 * Node-API functions (napi_delete_reference, ...): kindling's finalizers only drop a reference
 * (See Note [Tensor lifetime]), and the hook and custom-function frees that can follow only
 * delete napi references. The GC can run inside any Node-API call that allocates, so C code
 * holds no tensor across such a call that neither it nor a JS value on its handle scope owns.
 * The runtimes that call finalizers from the GC are those that export
 * node_api_post_finalizer, which came with it (Node 18.19+, 20.10+, 21+).
 * It is opt-in (KINDLING_GC_FINALIZERS=1): on Node 20.20 a collection that runs while a native
 * call has a JS exception pending (a callback or getter that threw, not yet returned to JS)
 * makes Node's finalizer call see that exception and abort the process ("Check failed:
 * AllowJavascriptExecution::IsAllowed"); it happened in about one run in three of the emulated
 * CUDA suite. By default the module declares the stable version and its finalizers wait for the
 * loop. Either way the bytes of live storages are reported to V8 (napi_adjust_external_memory),
 * so a loop that allocates little JS but large tensors still triggers collections. */
static int32_t kd_napi_module_api_version(void) {
  const char *opt = getenv("KINDLING_GC_FINALIZERS");
  bool gc_finalizers = opt && opt[0] == '1' && opt[1] == 0;
  return gc_finalizers && dlsym(RTLD_DEFAULT, "node_api_post_finalizer") ? NAPI_VERSION_EXPERIMENTAL : NAPI_VERSION;
}

NAPI_MODULE_EXPORT int32_t NODE_API_MODULE_GET_API_VERSION(void) { return kd_napi_module_api_version(); }
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
  KD_NAPI_CALL(env, kd_napi_register_library(env, exports));
  KD_NAPI_CALL(env, kd_napi_register_extension(env, exports));
  KD_NAPI_CALL(env, kd_napi_register_profiler(env, exports));
  return exports;
}
