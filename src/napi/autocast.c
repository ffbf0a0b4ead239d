/* autocast.c (napi) - the autocast state of src/dispatch/autocast.c for lib/autocast.js
 * (binding.autocast.*): set/get the thread's whole state at once (lib/autocast.js keeps the
 * scopes, sync and async, and re-applies a scope's state before each op), clear the cast cache,
 * and the test hooks: cast counters, an op's policy, and the dtype plan of a policy. */
#include <string.h>

#include "dispatch/autocast.h"
#include "napi/napi_util.h"

#define KD_AC_ARGS(n)                                                                 \
  napi_value argv[n];                                                                 \
  size_t argc = n;                                                                    \
  KD_NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));            \
  for (size_t i_ = argc; i_ < n; i_++) napi_get_undefined(env, &argv[i_]);

static const char *const kd_ac_policy_names[] = {NULL, "lower", "fp32", "fp32SetOptDtype", "promote", "banned", "native"};

static bool kd_ac_dtype_arg(napi_env env, napi_value v, kd_dtype *out) {
  char buf[32];
  if (kd_napi_string_arg(env, v, buf, sizeof buf) != napi_ok) return false;
  return kd_dtype_parse(buf, out);
}

static int kd_ac_dev_arg(napi_env env, napi_value v) {
  char buf[16];
  if (kd_napi_string_arg(env, v, buf, sizeof buf) != napi_ok) return -1;
  return strcmp(buf, "cpu") == 0 ? KD_AUTOCAST_DEV_CPU : strcmp(buf, "cuda") == 0 ? KD_AUTOCAST_DEV_CUDA : -1;
}

/* setState(cpuEnabled, cpuDtype, cudaEnabled, cudaDtype, cacheEnabled, nesting) */
static napi_value kd_ac_set_state(napi_env env, napi_callback_info info) {
  KD_AC_ARGS(6);
  kd_autocast_state s = kd_autocast_get();
  bool b;
  int32_t nest = 0;
  KD_NAPI_CALL(env, napi_get_value_bool(env, argv[0], &b));
  s.enabled[KD_AUTOCAST_DEV_CPU] = b;
  KD_NAPI_CALL(env, napi_get_value_bool(env, argv[2], &b));
  s.enabled[KD_AUTOCAST_DEV_CUDA] = b;
  if (!kd_ac_dtype_arg(env, argv[1], &s.dtype[KD_AUTOCAST_DEV_CPU]) ||
      !kd_ac_dtype_arg(env, argv[3], &s.dtype[KD_AUTOCAST_DEV_CUDA]))
    return kd_napi_throw_msg(env, KD_ERR_TYPE, "autocast: bad dtype");
  KD_NAPI_CALL(env, napi_get_value_bool(env, argv[4], &b));
  s.cache_enabled = b;
  KD_NAPI_CALL(env, napi_get_value_int32(env, argv[5], &nest));
  s.nesting = nest;
  kd_autocast_set(&s);
  return NULL;
}

static napi_value kd_ac_str(napi_env env, const char *s) {
  napi_value r;
  if (!s) napi_get_null(env, &r);
  else napi_create_string_utf8(env, s, NAPI_AUTO_LENGTH, &r);
  return r;
}

/* getState() -> [cpuEnabled, cpuDtype, cudaEnabled, cudaDtype, cacheEnabled, nesting] */
static napi_value kd_ac_get_state(napi_env env, napi_callback_info info) {
  (void)info;
  kd_autocast_state s = kd_autocast_get();
  napi_value r, v[6];
  napi_get_boolean(env, s.enabled[KD_AUTOCAST_DEV_CPU], &v[0]);
  v[1] = kd_ac_str(env, kd_dtype_name(s.dtype[KD_AUTOCAST_DEV_CPU]));
  napi_get_boolean(env, s.enabled[KD_AUTOCAST_DEV_CUDA], &v[2]);
  v[3] = kd_ac_str(env, kd_dtype_name(s.dtype[KD_AUTOCAST_DEV_CUDA]));
  napi_get_boolean(env, s.cache_enabled, &v[4]);
  napi_create_int32(env, s.nesting, &v[5]);
  KD_NAPI_CALL(env, napi_create_array_with_length(env, 6, &r));
  for (uint32_t i = 0; i < 6; i++) KD_NAPI_CALL(env, napi_set_element(env, r, i, v[i]));
  return r;
}

static napi_value kd_ac_clear_cache(napi_env env, napi_callback_info info) {
  (void)env;
  (void)info;
  kd_autocast_clear_cache();
  return NULL;
}

/* stats() -> [casts, cacheHits, cached] */
static napi_value kd_ac_stats(napi_env env, napi_callback_info info) {
  (void)info;
  kd_autocast_stats s = kd_autocast_stats_get();
  napi_value r, v;
  KD_NAPI_CALL(env, napi_create_array_with_length(env, 3, &r));
  const int64_t x[3] = {s.casts, s.cache_hits, s.cached};
  for (uint32_t i = 0; i < 3; i++) {
    KD_NAPI_CALL(env, napi_create_int64(env, x[i], &v));
    KD_NAPI_CALL(env, napi_set_element(env, r, i, v));
  }
  return r;
}

/* policy(opName, deviceType) -> 'lower' | 'fp32' | ... | null; undefined for an unknown op */
static napi_value kd_ac_policy(napi_env env, napi_callback_info info) {
  KD_AC_ARGS(2);
  char name[96];
  KD_NAPI_CALL(env, kd_napi_string_arg(env, argv[0], name, sizeof name));
  int dev = kd_ac_dev_arg(env, argv[1]);
  if (dev < 0) return kd_napi_throw_msg(env, KD_ERR_INVALID_ARGUMENT, "unknown device type");
  for (int i = 0; i < KD_OP_COUNT; i++)
    if (strcmp(kd_ops[i].name, name) == 0) return kd_ac_str(env, kd_ac_policy_names[kd_autocast_policy_of(i, dev)]);
  return NULL;
}

/* setPolicy(opName, deviceType, policy | null) -> whether the op has an Autocast kernel (test hook) */
static napi_value kd_ac_set_policy(napi_env env, napi_callback_info info) {
  KD_AC_ARGS(3);
  char name[96], pname[32];
  KD_NAPI_CALL(env, kd_napi_string_arg(env, argv[0], name, sizeof name));
  int dev = kd_ac_dev_arg(env, argv[1]);
  if (dev < 0) return kd_napi_throw_msg(env, KD_ERR_INVALID_ARGUMENT, "unknown device type");
  int policy = -1;
  napi_valuetype t;
  KD_NAPI_CALL(env, napi_typeof(env, argv[2], &t));
  if (t == napi_string) {
    KD_NAPI_CALL(env, kd_napi_string_arg(env, argv[2], pname, sizeof pname));
    for (int p = 1; p < (int)(sizeof kd_ac_policy_names / sizeof kd_ac_policy_names[0]); p++)
      if (strcmp(pname, kd_ac_policy_names[p]) == 0) policy = p;
    if (policy < 0) return kd_napi_throw_msg(env, KD_ERR_INVALID_ARGUMENT, "unknown autocast policy '%s'", pname);
  }
  for (int i = 0; i < KD_OP_COUNT; i++) {
    if (strcmp(kd_ops[i].name, name) != 0) continue;
    kd_autocast_override(i, dev, policy);
    napi_value r;
    napi_get_boolean(env, kd_kernel_table[i][KD_KEY_AUTOCAST] != NULL, &r);
    return r;
  }
  return kd_napi_throw_msg(env, KD_ERR_INVALID_ARGUMENT, "unknown op '%s'", name);
}

/* plan(policy, lowerDtype, dtypes[]) -> [targets[], setDtype | null] */
static napi_value kd_ac_plan(napi_env env, napi_callback_info info) {
  KD_AC_ARGS(3);
  char pname[32];
  KD_NAPI_CALL(env, kd_napi_string_arg(env, argv[0], pname, sizeof pname));
  int policy = -1;
  for (int p = 1; p < (int)(sizeof kd_ac_policy_names / sizeof kd_ac_policy_names[0]); p++)
    if (strcmp(pname, kd_ac_policy_names[p]) == 0) policy = p;
  kd_dtype lower;
  if (policy < 0 || !kd_ac_dtype_arg(env, argv[1], &lower))
    return kd_napi_throw_msg(env, KD_ERR_INVALID_ARGUMENT, "autocast plan: bad policy or dtype");
  uint32_t n = 0;
  KD_NAPI_CALL(env, napi_get_array_length(env, argv[2], &n));
  if (n > 64) return kd_napi_throw_msg(env, KD_ERR_INVALID_ARGUMENT, "autocast plan: too many dtypes");
  kd_dtype dts[64], to[64];
  for (uint32_t i = 0; i < n; i++) {
    napi_value e;
    KD_NAPI_CALL(env, napi_get_element(env, argv[2], i, &e));
    if (!kd_ac_dtype_arg(env, e, &dts[i])) return kd_napi_throw_msg(env, KD_ERR_TYPE, "autocast plan: bad dtype");
  }
  int set_dtype = -1;
  kd_autocast_plan(policy, lower, (int)n, dts, to, &set_dtype);
  napi_value r, list;
  KD_NAPI_CALL(env, napi_create_array_with_length(env, n, &list));
  for (uint32_t i = 0; i < n; i++) KD_NAPI_CALL(env, napi_set_element(env, list, i, kd_ac_str(env, kd_dtype_name(to[i]))));
  KD_NAPI_CALL(env, napi_create_array_with_length(env, 2, &r));
  KD_NAPI_CALL(env, napi_set_element(env, r, 0, list));
  KD_NAPI_CALL(env, napi_set_element(env, r, 1, kd_ac_str(env, set_dtype >= 0 ? kd_dtype_name((kd_dtype)set_dtype) : NULL)));
  return r;
}

napi_status kd_napi_register_autocast(napi_env env, napi_value exports) {
  napi_value o;
  napi_status st = napi_create_object(env, &o);
  static const struct { const char *name; napi_callback cb; } fns[] = {
      {"setState", kd_ac_set_state}, {"getState", kd_ac_get_state}, {"clearCache", kd_ac_clear_cache},
      {"stats", kd_ac_stats},        {"policy", kd_ac_policy},       {"plan", kd_ac_plan},
      {"setPolicy", kd_ac_set_policy},
  };
  for (size_t i = 0; st == napi_ok && i < sizeof fns / sizeof fns[0]; i++) st = kd_napi_set_fn(env, o, fns[i].name, fns[i].cb, NULL);
  if (st == napi_ok) st = napi_set_named_property(env, exports, "autocast", o);
  return st;
}
