/* cuda.c - binding.cuda: device queries for kd.cuda (lib/cuda.js) on top of
 * src/cuda_bridge/. isAvailable(), unavailableReason() and deviceCount() never throw for a
 * missing CUDA (they are how users find out); every other function throws a KD_CUDA_UNAVAILABLE
 * error with the reason. A device argument is an index, 'cuda' or 'cuda:N', or left out for the
 * current device. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/device.h"
#include "cuda_bridge/bridge.h"
#include "napi/napi_util.h"

/* Reads an optional device argument into *out. Returns a non-NULL value on success, NULL with
 * a JS exception pending on failure. */
static napi_value kd_napi_cuda_device_arg(napi_env env, size_t argc, napi_value *argv, int *out) {
  napi_value ok;
  KD_NAPI_CALL(env, napi_get_undefined(env, &ok));
  napi_valuetype t = napi_undefined;
  if (argc > 0) KD_NAPI_CALL(env, napi_typeof(env, argv[0], &t));
  if (t == napi_undefined || t == napi_null) {
    kd_status st = kd_cuda_current_device(out);
    if (st != KD_OK) return kd_napi_throw(env, st);
    return ok;
  }
  if (t == napi_number) {
    double d;
    KD_NAPI_CALL(env, napi_get_value_double(env, argv[0], &d));
    if (!(d >= 0 && d <= 1024 && d == floor(d)))
      return kd_napi_throw_msg(env, KD_ERR_INVALID_ARGUMENT, "Invalid CUDA device index: %g", d);
    *out = (int)d;
    return ok;
  }
  if (t == napi_string) {
    char buf[64];
    KD_NAPI_CALL(env, kd_napi_string_arg(env, argv[0], buf, sizeof buf));
    kd_device dev;
    kd_status st = kd_device_parse(buf, &dev);
    if (st != KD_OK) return kd_napi_throw(env, st);
    if (dev.type != KD_DEVICE_CUDA)
      return kd_napi_throw_msg(env, KD_ERR_INVALID_ARGUMENT, "Expected a cuda device, but got: %s", buf);
    *out = dev.index;
    return ok;
  }
  return kd_napi_throw_msg(env, KD_ERR_TYPE, "device must be a number or a string such as 'cuda:0'");
}

#define KD_NAPI_CUDA_ARGS(n)                                                                \
  size_t argc = (n);                                                                        \
  napi_value argv[(n) > 0 ? (n) : 1];                                                       \
  KD_NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL))

/* isAvailable() -> boolean. Never throws for a missing CUDA. */
static napi_value kd_napi_cuda_is_available(napi_env env, napi_callback_info info) {
  napi_value r;
  KD_NAPI_CALL(env, napi_get_boolean(env, kd_cuda_is_available(), &r));
  return r;
}

/* unavailableReason() -> string ("" when CUDA is available). */
static napi_value kd_napi_cuda_unavailable_reason(napi_env env, napi_callback_info info) {
  (void)kd_cuda_is_available(); /* make sure loading was tried, so the reason is known */
  napi_value r;
  KD_NAPI_CALL(env, napi_create_string_utf8(env, kd_cuda_unavailable_reason(), NAPI_AUTO_LENGTH, &r));
  return r;
}

/* deviceCount() -> number, 0 when CUDA is unavailable. */
static napi_value kd_napi_cuda_device_count(napi_env env, napi_callback_info info) {
  int n = 0;
  const kd_device_backend *be;
  if (kd_cuda_is_available() && kd_device_backend_get(KD_DEVICE_CUDA, &be) == KD_OK) n = be->device_count();
  napi_value r;
  KD_NAPI_CALL(env, napi_create_int32(env, n, &r));
  return r;
}

/* currentDevice() -> number. */
static napi_value kd_napi_cuda_current_device(napi_env env, napi_callback_info info) {
  int d = 0;
  kd_status st = kd_cuda_current_device(&d);
  if (st != KD_OK) return kd_napi_throw(env, st);
  napi_value r;
  KD_NAPI_CALL(env, napi_create_int32(env, d, &r));
  return r;
}

/* setDevice(device) -> undefined. */
static napi_value kd_napi_cuda_set_device(napi_env env, napi_callback_info info) {
  KD_NAPI_CUDA_ARGS(1);
  napi_valuetype t = napi_undefined;
  if (argc > 0) KD_NAPI_CALL(env, napi_typeof(env, argv[0], &t));
  if (t == napi_undefined || t == napi_null)
    return kd_napi_throw_msg(env, KD_ERR_TYPE, "setDevice() needs a device (an index or 'cuda:N')");
  int d = 0;
  if (!kd_napi_cuda_device_arg(env, argc, argv, &d)) return NULL;
  kd_status st = kd_cuda_set_device(d);
  if (st != KD_OK) return kd_napi_throw(env, st);
  napi_value r;
  KD_NAPI_CALL(env, napi_get_undefined(env, &r));
  return r;
}

/* getDeviceName(device?) -> string. */
static napi_value kd_napi_cuda_get_device_name(napi_env env, napi_callback_info info) {
  KD_NAPI_CUDA_ARGS(1);
  int d = 0;
  if (!kd_napi_cuda_device_arg(env, argc, argv, &d)) return NULL;
  kd_cuda_properties p;
  kd_status st = kd_cuda_get_properties(d, &p);
  if (st != KD_OK) return kd_napi_throw(env, st);
  napi_value r;
  KD_NAPI_CALL(env, napi_create_string_utf8(env, p.name, NAPI_AUTO_LENGTH, &r));
  return r;
}

/* getDeviceProperties(device?) -> {name, totalMemory, major, minor, multiProcessorCount}. */
static napi_value kd_napi_cuda_get_device_properties(napi_env env, napi_callback_info info) {
  KD_NAPI_CUDA_ARGS(1);
  int d = 0;
  if (!kd_napi_cuda_device_arg(env, argc, argv, &d)) return NULL;
  kd_cuda_properties p;
  kd_status st = kd_cuda_get_properties(d, &p);
  if (st != KD_OK) return kd_napi_throw(env, st);
  napi_value r, v;
  KD_NAPI_CALL(env, napi_create_object(env, &r));
  KD_NAPI_CALL(env, napi_create_string_utf8(env, p.name, NAPI_AUTO_LENGTH, &v));
  KD_NAPI_CALL(env, napi_set_named_property(env, r, "name", v));
  KD_NAPI_CALL(env, napi_create_double(env, (double)p.total_memory, &v));
  KD_NAPI_CALL(env, napi_set_named_property(env, r, "totalMemory", v));
  KD_NAPI_CALL(env, napi_create_int32(env, p.major, &v));
  KD_NAPI_CALL(env, napi_set_named_property(env, r, "major", v));
  KD_NAPI_CALL(env, napi_create_int32(env, p.minor, &v));
  KD_NAPI_CALL(env, napi_set_named_property(env, r, "minor", v));
  KD_NAPI_CALL(env, napi_create_int32(env, p.multiprocessor_count, &v));
  KD_NAPI_CALL(env, napi_set_named_property(env, r, "multiProcessorCount", v));
  return r;
}

/* synchronize(device?) -> undefined. Blocks the calling thread (lib/cuda.js wraps it in a
 * Promise; a stream-signalled version comes with streams). */
static napi_value kd_napi_cuda_synchronize(napi_env env, napi_callback_info info) {
  KD_NAPI_CUDA_ARGS(1);
  int d = 0;
  if (!kd_napi_cuda_device_arg(env, argc, argv, &d)) return NULL;
  kd_status st = kd_cuda_synchronize(d);
  if (st != KD_OK) return kd_napi_throw(env, st);
  napi_value r;
  KD_NAPI_CALL(env, napi_get_undefined(env, &r));
  return r;
}

#define KD_NAPI_TRY_STATUS(call)                                                            \
  do {                                                                                      \
    napi_status kd_napi_s_ = (call);                                                        \
    if (kd_napi_s_ != napi_ok) return kd_napi_s_;                                           \
  } while (0)

napi_status kd_napi_register_cuda(napi_env env, napi_value exports) {
  static const struct {
    const char *name;
    napi_callback cb;
  } fns[] = {
      {"isAvailable", kd_napi_cuda_is_available},
      {"unavailableReason", kd_napi_cuda_unavailable_reason},
      {"deviceCount", kd_napi_cuda_device_count},
      {"currentDevice", kd_napi_cuda_current_device},
      {"setDevice", kd_napi_cuda_set_device},
      {"getDeviceName", kd_napi_cuda_get_device_name},
      {"getDeviceProperties", kd_napi_cuda_get_device_properties},
      {"synchronize", kd_napi_cuda_synchronize},
  };
  napi_value cuda;
  KD_NAPI_TRY_STATUS(napi_create_object(env, &cuda));
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
    KD_NAPI_TRY_STATUS(kd_napi_set_fn(env, cuda, fns[i].name, fns[i].cb, NULL));
  return napi_set_named_property(env, exports, "cuda", cuda);
}
