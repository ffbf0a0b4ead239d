/* extension.c (napi) - loads a C extension (include/kindling.h): dlopen's the shared object that
 * kd.utils.cppExtension.load compiled (lib/cpp_extension.js), runs its kindling_extension_init
 * with the function table (src/extension/api.c) and returns the ops it defined, as define does. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "extension/api.h"
#include "napi/napi_util.h"

napi_status kd_napi_library_op_object(napi_env env, int id, napi_value *out); /* napi/library.c */

/* loadExtension(path) -> [op objects] */
static napi_value kd_ext_load(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  KD_NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  char *path = NULL; /* whole: a path cut short could name another file */
  kd_status st = kd_napi_string_dup(env, argc < 1 ? NULL : argv[0], "loadExtension(path): path", 4095, &path);
  if (st != KD_OK) return kd_napi_throw(env, st);
  void *so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!so) {
    napi_value e = kd_napi_throw_msg(env, KD_ERR_INVALID_ARGUMENT, "could not load the extension %s: %s", path, dlerror());
    free(path);
    return e;
  }
  kd_extension_init_fn init = (kd_extension_init_fn)dlsym(so, "kindling_extension_init");
  if (!init) {
    dlclose(so);
    napi_value e = kd_napi_throw_msg(env, KD_ERR_INVALID_ARGUMENT, "the extension %s defines no kindling_extension_init", path);
    free(path);
    return e;
  }
  int *ops = NULL, nops = 0;
  st = kd_extension_init(init, path, &ops, &nops);
  free(path);
  /* the library stays loaded: ops it defined point into it even when init failed later */
  napi_value arr = NULL;
  napi_status ns = napi_create_array_with_length(env, (size_t)nops, &arr);
  for (int i = 0; i < nops && ns == napi_ok; i++) {
    napi_value o;
    ns = kd_napi_library_op_object(env, ops[i], &o);
    if (ns == napi_ok) ns = napi_set_element(env, arr, (uint32_t)i, o);
  }
  free(ops);
  if (st != KD_OK) return kd_napi_throw(env, st);
  if (ns != napi_ok) return kd_napi_throw_last(env, ns);
  return arr;
}

napi_status kd_napi_register_extension(napi_env env, napi_value exports) {
  napi_value lib;
  napi_status st = napi_get_named_property(env, exports, "library", &lib);
  if (st == napi_ok) st = kd_napi_set_fn(env, lib, "loadExtension", kd_ext_load, NULL);
  return st;
}
