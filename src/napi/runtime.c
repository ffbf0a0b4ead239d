/* runtime.c (napi) - process and thread settings exposed to JS: the error factory, the random
 * seed, memory statistics, the host cache, thread count, build facts (BLAS, the CPU capability
 * level in use), and the dtype-name parser. */
#include <string.h>

#include "core/alloc_host.h"
#include "core/dtype.h"
#include "core/parallel.h"
#include "core/random.h"
#include "core/storage.h"
#include "cpu/cpu_capability.h"
#include "cpu/gemm_bf16.h"
#include "napi/napi_util.h"

#if KD_HAVE_CBLAS
char *openblas_get_config(void); /* OpenBLAS's build string: version, target core, threading */
#endif

static napi_value kd_napi_set_error_factory(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  size_t argc = 1;
  KD_NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  napi_valuetype t = napi_undefined;
  if (argc) napi_typeof(env, argv[0], &t);
  if (t != napi_function) return kd_napi_throw_msg(env, KD_ERR_TYPE, "setErrorFactory expects a function");
  kd_napi_env *e = kd_napi_env_get(env);
  if (e->error_factory) napi_delete_reference(env, e->error_factory);
  e->error_factory = NULL;
  KD_NAPI_CALL(env, napi_create_reference(env, argv[0], 1, &e->error_factory));
  return NULL;
}

static napi_value kd_napi_manual_seed(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  size_t argc = 1;
  KD_NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  napi_valuetype t = napi_undefined;
  if (argc) napi_typeof(env, argv[0], &t);
  uint64_t seed;
  if (t == napi_bigint) {
    bool lossless;
    KD_NAPI_CALL(env, napi_get_value_bigint_uint64(env, argv[0], &seed, &lossless));
  } else if (t == napi_number) {
    double d;
    KD_NAPI_CALL(env, napi_get_value_double(env, argv[0], &d));
    if (d != (double)(int64_t)d) return kd_napi_throw_msg(env, KD_ERR_TYPE, "manualSeed expects an integer seed, got %g", d);
    seed = (uint64_t)(int64_t)d;
  } else {
    return kd_napi_throw_msg(env, KD_ERR_TYPE, "manualSeed expects an integer (number or bigint)");
  }
  kd_random_manual_seed(seed);
  return NULL;
}

static napi_value kd_napi_initial_seed(napi_env env, napi_callback_info info) {
  napi_value r;
  KD_NAPI_CALL(env, napi_create_bigint_uint64(env, kd_random_initial_seed(), &r));
  return r;
}

static napi_status kd_set_number(napi_env env, napi_value obj, const char *name, double v) {
  napi_value x;
  napi_status st = napi_create_double(env, v, &x);
  return st == napi_ok ? napi_set_named_property(env, obj, name, x) : st;
}

static napi_value kd_napi_memory(napi_env env, napi_callback_info info) {
  kd_napi_collect_unreachable(env, true); /* the counts leave out what the GC collected */
  kd_host_alloc_stats s;
  kd_host_alloc_get_stats(&s);
  napi_value r;
  KD_NAPI_CALL(env, napi_create_object(env, &r));
  KD_NAPI_CALL(env, kd_set_number(env, r, "liveTensors", (double)kd_tensor_live_count()));
  KD_NAPI_CALL(env, kd_set_number(env, r, "hostBytesInUse", (double)kd_storage_live_bytes(KD_DEVICE_CPU)));
  KD_NAPI_CALL(env, kd_set_number(env, r, "hostBytesAllocated", (double)s.allocated_bytes));
  KD_NAPI_CALL(env, kd_set_number(env, r, "hostBytesCached", (double)s.cached_bytes));
  KD_NAPI_CALL(env, kd_set_number(env, r, "hostBytesPeak", (double)s.peak_allocated_bytes));
  KD_NAPI_CALL(env, kd_set_number(env, r, "cudaBytesInUse", (double)kd_storage_live_bytes(KD_DEVICE_CUDA)));
  return r;
}

static napi_value kd_napi_empty_cache(napi_env env, napi_callback_info info) {
  kd_host_alloc_empty_cache();
  return NULL;
}

static napi_value kd_napi_set_num_threads(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  size_t argc = 1;
  KD_NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  double d = 0;
  if (!argc || napi_get_value_double(env, argv[0], &d) != napi_ok)
    return kd_napi_throw_msg(env, KD_ERR_TYPE, "setNumThreads expects a positive integer");
  if (d < 1 || d > 1024 || d != (double)(int)d)
    return kd_napi_throw_msg(env, KD_ERR_INVALID_ARGUMENT, "setNumThreads expects a positive integer, got %g", d);
  kd_set_num_threads((int)d);
  return NULL;
}

static napi_value kd_napi_get_num_threads(napi_env env, napi_callback_info info) {
  napi_value r;
  KD_NAPI_CALL(env, napi_create_int32(env, kd_get_num_threads(), &r));
  return r;
}

/* parseDtype(name) -> the canonical dtype name ('float' -> 'float32'), or null when name is not a
 * dtype. lib/dtypes.js reads every dtype string through this, so JS accepts what kd_dtype_parse does. */
static napi_value kd_napi_parse_dtype(napi_env env, napi_callback_info info) {
  napi_value argv[1], r;
  size_t argc = 1;
  KD_NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  napi_valuetype t = napi_undefined;
  if (argc) napi_typeof(env, argv[0], &t);
  char name[32];
  size_t len = 0;
  kd_dtype dtype;
  /* too long for any name, or with an embedded NUL: not a dtype */
  if (t != napi_string || napi_get_value_string_utf8(env, argv[0], name, sizeof name, &len) != napi_ok ||
      len + 1 >= sizeof name || strlen(name) != len || !kd_dtype_parse(name, &dtype)) {
    KD_NAPI_CALL(env, napi_get_null(env, &r));
    return r;
  }
  KD_NAPI_CALL(env, napi_create_string_utf8(env, kd_dtype_name(dtype), NAPI_AUTO_LENGTH, &r));
  return r;
}

napi_status kd_napi_register_runtime(napi_env env, napi_value exports) {
  napi_status st = kd_napi_set_fn(env, exports, "setErrorFactory", kd_napi_set_error_factory, NULL);
  if (st == napi_ok) st = kd_napi_set_fn(env, exports, "manualSeed", kd_napi_manual_seed, NULL);
  if (st == napi_ok) st = kd_napi_set_fn(env, exports, "initialSeed", kd_napi_initial_seed, NULL);
  if (st == napi_ok) st = kd_napi_set_fn(env, exports, "memory", kd_napi_memory, NULL);
  if (st == napi_ok) st = kd_napi_set_fn(env, exports, "emptyCache", kd_napi_empty_cache, NULL);
  if (st == napi_ok) st = kd_napi_set_fn(env, exports, "setNumThreads", kd_napi_set_num_threads, NULL);
  if (st == napi_ok) st = kd_napi_set_fn(env, exports, "getNumThreads", kd_napi_get_num_threads, NULL);
  if (st == napi_ok) st = kd_napi_set_fn(env, exports, "parseDtype", kd_napi_parse_dtype, NULL);
  napi_value b;
  if (st == napi_ok) st = napi_get_boolean(env, KD_HAVE_CBLAS != 0, &b);
  if (st == napi_ok) st = napi_set_named_property(env, exports, "hasBlas", b);
  napi_value blas_config;
#if KD_HAVE_CBLAS
  if (st == napi_ok) st = napi_create_string_utf8(env, openblas_get_config(), NAPI_AUTO_LENGTH, &blas_config);
#else
  if (st == napi_ok) st = napi_get_null(env, &blas_config);
#endif
  if (st == napi_ok) st = napi_set_named_property(env, exports, "blasConfig", blas_config);
  /* the CPU level is chosen here, at load (Note [CPU capability dispatch]); JS reports the warning */
  napi_value level, warning;
  if (st == napi_ok) st = napi_create_string_utf8(env, kd_cpu_capability_name(kd_cpu_capability()), NAPI_AUTO_LENGTH, &level);
  if (st == napi_ok) st = napi_set_named_property(env, exports, "cpuCapability", level);
  const char *why = kd_cpu_capability_warning();
  if (st == napi_ok) st = why ? napi_create_string_utf8(env, why, NAPI_AUTO_LENGTH, &warning) : napi_get_null(env, &warning);
  if (st == napi_ok) st = napi_set_named_property(env, exports, "cpuCapabilityWarning", warning);
  napi_value bf16_gemm;
  if (st == napi_ok) st = napi_create_string_utf8(env, kd_gemm_bf16_kernel(), NAPI_AUTO_LENGTH, &bf16_gemm);
  if (st == napi_ok) st = napi_set_named_property(env, exports, "bf16Gemm", bf16_gemm);
  napi_value int8_gemm;
  if (st == napi_ok) st = napi_create_string_utf8(env, kd_qlinear_kernel(), NAPI_AUTO_LENGTH, &int8_gemm);
  if (st == napi_ok) st = napi_set_named_property(env, exports, "int8Gemm", int8_gemm);
  return st;
}
