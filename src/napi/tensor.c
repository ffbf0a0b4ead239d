/* tensor.c (napi) - per-handle functions: dispose, metadata getters, reading data into typed
 * arrays (and dataAsync() of a CPU tensor: Note [dataAsync() of a CPU tensor]), creating tensors from
 * typed arrays, float16/bfloat16 conversions for JS, and shared tensors between threads
 * (share / fromShared / unshare: See Note [Shared tensors] in src/core/tensor.c). */
#include <stdlib.h>
#include <string.h>

#include "dispatch/dispatch.h"
#include "napi/napi_util.h"

/* Unwraps argv[0] as a live tensor or throws. */
#define KD_NAPI_TENSOR_ARG(env, info, t)                                                      \
  napi_value argv_[1];                                                                         \
  size_t argc_ = 1;                                                                            \
  KD_NAPI_CALL(env, napi_get_cb_info(env, info, &argc_, argv_, NULL, NULL));                   \
  if (argc_ < 1) return kd_napi_throw_msg(env, KD_ERR_TYPE, "expected a tensor handle");       \
  kd_tensor *t;                                                                                \
  {                                                                                            \
    kd_status s_ = kd_napi_unwrap_tensor(env, argv_[0], "self", &t);                           \
    if (s_ != KD_OK) return kd_napi_throw(env, s_);                                            \
  }

static napi_value kd_napi_dispose(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  size_t argc = 1;
  KD_NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  kd_napi_handle *h = argc ? kd_napi_handle_of(env, argv[0]) : NULL;
  if (!h) return kd_napi_throw_msg(env, KD_ERR_TYPE, "dispose: expected a tensor handle");
  bool was_live = h->t != NULL;
  kd_napi_dispose_handle(env, h);
  kd_napi_sync_external_memory(env);
  napi_value r;
  KD_NAPI_CALL(env, napi_get_boolean(env, was_live, &r));
  return r;
}

static napi_value kd_napi_is_disposed(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  size_t argc = 1;
  KD_NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  kd_napi_handle *h = argc ? kd_napi_handle_of(env, argv[0]) : NULL;
  if (!h) return kd_napi_throw_msg(env, KD_ERR_TYPE, "isDisposed: expected a tensor handle");
  napi_value r;
  KD_NAPI_CALL(env, napi_get_boolean(env, h->t == NULL, &r));
  return r;
}

static napi_value kd_napi_int_array(napi_env env, const int64_t *v, int n) {
  napi_value arr;
  KD_NAPI_CALL(env, napi_create_array_with_length(env, n, &arr));
  for (int i = 0; i < n; i++) {
    napi_value x;
    KD_NAPI_CALL(env, napi_create_double(env, (double)v[i], &x));
    KD_NAPI_CALL(env, napi_set_element(env, arr, i, x));
  }
  return arr;
}

static napi_value kd_napi_number(napi_env env, double d) {
  napi_value r;
  KD_NAPI_CALL(env, napi_create_double(env, d, &r));
  return r;
}

static napi_value kd_napi_shape(napi_env env, napi_callback_info info) {
  KD_NAPI_TENSOR_ARG(env, info, t);
  return kd_napi_int_array(env, t->sizes, t->ndim);
}
static napi_value kd_napi_strides(napi_env env, napi_callback_info info) {
  KD_NAPI_TENSOR_ARG(env, info, t);
  return kd_napi_int_array(env, t->strides, t->ndim);
}
static napi_value kd_napi_storage_offset(napi_env env, napi_callback_info info) {
  KD_NAPI_TENSOR_ARG(env, info, t);
  return kd_napi_number(env, (double)t->offset);
}
static napi_value kd_napi_ndim(napi_env env, napi_callback_info info) {
  KD_NAPI_TENSOR_ARG(env, info, t);
  return kd_napi_number(env, t->ndim);
}
static napi_value kd_napi_numel(napi_env env, napi_callback_info info) {
  KD_NAPI_TENSOR_ARG(env, info, t);
  return kd_napi_number(env, (double)kd_tensor_numel(t));
}
static napi_value kd_napi_version(napi_env env, napi_callback_info info) {
  KD_NAPI_TENSOR_ARG(env, info, t);
  return kd_napi_number(env, t->storage->version);
}
static napi_value kd_napi_dtype(napi_env env, napi_callback_info info) {
  KD_NAPI_TENSOR_ARG(env, info, t);
  napi_value r;
  KD_NAPI_CALL(env, napi_create_string_utf8(env, kd_dtype_name(t->dtype), NAPI_AUTO_LENGTH, &r));
  return r;
}
static napi_value kd_napi_device(napi_env env, napi_callback_info info) {
  KD_NAPI_TENSOR_ARG(env, info, t);
  char buf[32];
  kd_device_format(kd_tensor_device(t), buf, sizeof buf);
  napi_value r;
  KD_NAPI_CALL(env, napi_create_string_utf8(env, buf, NAPI_AUTO_LENGTH, &r));
  return r;
}
static napi_value kd_napi_is_contiguous(napi_env env, napi_callback_info info) {
  KD_NAPI_TENSOR_ARG(env, info, t);
  napi_value r;
  KD_NAPI_CALL(env, napi_get_boolean(env, kd_tensor_is_contiguous(t), &r));
  return r;
}

/* The typed array type that holds a dtype's raw elements. */
static napi_typedarray_type kd_typed_array_type(kd_dtype d) {
  switch (d) {
    case KD_DTYPE_F32: return napi_float32_array;
    case KD_DTYPE_F64: return napi_float64_array;
    case KD_DTYPE_F16:
    case KD_DTYPE_BF16: return napi_uint16_array;
    case KD_DTYPE_I8: return napi_int8_array;
    case KD_DTYPE_I16: return napi_int16_array;
    case KD_DTYPE_I32: return napi_int32_array;
    case KD_DTYPE_I64: return napi_bigint64_array;
    case KD_DTYPE_U8:
    case KD_DTYPE_BOOL:
    default: return napi_uint8_array;
  }
}

/* A contiguous CPU tensor with t's values (t itself, retained, when it already is one: without
 * a trip through the dispatcher, as item() and dataAsync() of a small tensor cost little more). */
static kd_status kd_napi_host_contiguous(kd_tensor *t, kd_tensor **out) {
  if (kd_tensor_device(t).type == KD_DEVICE_CPU && kd_tensor_is_contiguous(t)) {
    kd_tensor_retain(t);
    *out = t;
    return KD_OK;
  }
  kd_tensor *cpu;
  kd_value a[4] = {kd_value_tensor(t), kd_value_none(), kd_value_device(kd_device_cpu()), kd_value_none()};
  KD_TRY(kd_call1(KD_OP_to, a, &cpu));
  kd_value c[1] = {kd_value_tensor(cpu)};
  kd_status st = kd_call1(KD_OP_contiguous, c, out);
  kd_tensor_release(cpu);
  return st;
}

static napi_value kd_napi_to_typed_array(napi_env env, napi_callback_info info) {
  KD_NAPI_TENSOR_ARG(env, info, t);
  kd_tensor *host;
  kd_status st = kd_napi_host_contiguous(t, &host);
  if (st != KD_OK) return kd_napi_throw(env, st);
  int64_t n = kd_tensor_numel(host);
  size_t bytes = (size_t)n * kd_dtype_size(host->dtype);
  void *dst;
  napi_value ab, ta;
  napi_status ns = napi_create_arraybuffer(env, bytes, &dst, &ab);
  if (ns == napi_ok && bytes) memcpy(dst, kd_tensor_data(host), bytes);
  kd_dtype dtype = host->dtype;
  kd_tensor_release(host);
  if (ns != napi_ok) return kd_napi_throw_msg(env, KD_ERR_OOM, "cannot allocate a %zu-byte ArrayBuffer", bytes);
  KD_NAPI_CALL(env, napi_create_typedarray(env, kd_typed_array_type(dtype), (size_t)n, ab, 0, &ta));
  return ta;
}

/* n float16 (or bfloat16) values widened to float32. */
static void kd_napi_widen_half(bool bf16, const uint16_t *src, float *dst, size_t n) {
  for (size_t i = 0; i < n; i++) dst[i] = bf16 ? kd_bf16_to_f32(src[i]) : kd_f16_to_f32(src[i]);
}

/* Note [dataAsync() of a CPU tensor]
 * `await t.dataAsync()` of a CPU tensor resolves with a copy taken at the call, in a Promise that is
 * already resolved: no thread hop, no wait, because nothing can still be writing a CPU tensor
 * that JS holds. CPU kernels run inline on the calling thread (the CPU stream is inline
 * execution, DESIGN.md); the only background CPU work, kd.data.gatherRows (data_async.c),
 * writes new tensors that JS receives only when it has finished; asynchronous copies
 * (to('cuda', {nonBlocking})) go host to device, reading a pinned CPU tensor, never writing
 * one, and device-to-host copies block. Should CPU work ever leave the calling thread, this is
 * the place that must wait for it. hostData(h) is that copy, as dataAsync() returns it (float16 and
 * bfloat16 widened to a Float32Array), or null for a tensor whose data is on a device: dataAsync()
 * (lib/cuda.js) then takes the asynchronous device-to-host path, which never blocks. */
static napi_value kd_napi_host_data(napi_env env, napi_callback_info info) {
  KD_NAPI_TENSOR_ARG(env, info, t);
  if (kd_tensor_device(t).type != KD_DEVICE_CPU) {
    napi_value null;
    KD_NAPI_CALL(env, napi_get_null(env, &null));
    return null;
  }
  kd_tensor *host;
  kd_status st = kd_napi_host_contiguous(t, &host);
  if (st != KD_OK) return kd_napi_throw(env, st);
  int64_t n = kd_tensor_numel(host);
  kd_dtype dtype = host->dtype;
  bool half = dtype == KD_DTYPE_F16 || dtype == KD_DTYPE_BF16;
  size_t bytes = (size_t)n * (half ? sizeof(float) : kd_dtype_size(dtype));
  void *dst;
  napi_value ab, ta;
  napi_status ns = napi_create_arraybuffer(env, bytes, &dst, &ab);
  if (ns == napi_ok && half) {
    kd_napi_widen_half(dtype == KD_DTYPE_BF16, (const uint16_t *)kd_tensor_data(host), (float *)dst, (size_t)n);
  } else if (ns == napi_ok && bytes) {
    memcpy(dst, kd_tensor_data(host), bytes);
  }
  kd_tensor_release(host);
  if (ns != napi_ok) return kd_napi_throw_msg(env, KD_ERR_OOM, "cannot allocate a %zu-byte ArrayBuffer", bytes);
  KD_NAPI_CALL(env, napi_create_typedarray(env, half ? napi_float32_array : kd_typed_array_type(dtype), (size_t)n, ab, 0, &ta));
  return ta;
}

static napi_value kd_napi_item(napi_env env, napi_callback_info info) {
  KD_NAPI_TENSOR_ARG(env, info, t);
  int64_t n = kd_tensor_numel(t);
  if (n != 1)
    return kd_napi_throw_msg(env, KD_ERR_INVALID_ARGUMENT, "a Tensor with %lld elements cannot be converted to Scalar",
                             (long long)n);
  kd_tensor *host;
  kd_status st = kd_napi_host_contiguous(t, &host);
  if (st != KD_OK) return kd_napi_throw(env, st);
  kd_scalar s = kd_scalar_load(host->dtype, kd_tensor_data(host));
  kd_tensor_release(host);
  napi_value r;
  if (s.kind == KD_KIND_BOOL) KD_NAPI_CALL(env, napi_get_boolean(env, s.v.b, &r));
  else KD_NAPI_CALL(env, napi_create_double(env, kd_scalar_to_double(s), &r));
  return r;
}

/* fromTypedArray(typedArray, shape, dtype, device?) -> handle. The typed array must be the raw
 * element type of dtype (see kd_typed_array_type); its bytes are copied. */
static napi_value kd_napi_from_typed_array(napi_env env, napi_callback_info info) {
  napi_value argv[4];
  size_t argc = 4;
  KD_NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  bool is_ta = false;
  if (argc < 3 || napi_is_typedarray(env, argv[0], &is_ta) != napi_ok || !is_ta)
    return kd_napi_throw_msg(env, KD_ERR_TYPE, "fromTypedArray(typedArray, shape, dtype, device?)");
  napi_typedarray_type tt;
  size_t length, byte_offset;
  void *src;
  napi_value ab;
  KD_NAPI_CALL(env, napi_get_typedarray_info(env, argv[0], &tt, &length, &src, &ab, &byte_offset));
  char dname[32], devname[32];
  if (kd_napi_string_arg(env, argv[2], dname, sizeof dname) != napi_ok)
    return kd_napi_throw_msg(env, KD_ERR_TYPE, "dtype must be a string");
  kd_dtype dtype;
  if (!kd_dtype_parse(dname, &dtype)) return kd_napi_throw_msg(env, KD_ERR_TYPE, "unknown dtype '%s'", dname);
  if (kd_typed_array_type(dtype) != tt)
    return kd_napi_throw_msg(env, KD_ERR_TYPE, "typed array type does not match dtype %s", dname);
  kd_device device = kd_device_cpu();
  napi_valuetype vt = napi_undefined;
  if (argc >= 4) napi_typeof(env, argv[3], &vt);
  if (vt == napi_string) {
    kd_napi_string_arg(env, argv[3], devname, sizeof devname);
    kd_status st = kd_device_parse(devname, &device);
    if (st != KD_OK) return kd_napi_throw(env, st);
  }
  bool is_array = false;
  napi_is_array(env, argv[1], &is_array);
  if (!is_array) return kd_napi_throw_msg(env, KD_ERR_TYPE, "shape must be an array");
  uint32_t nd;
  napi_get_array_length(env, argv[1], &nd);
  if (nd > KD_MAX_DIMS) return kd_napi_throw_msg(env, KD_ERR_INVALID_ARGUMENT, "at most %d dims", KD_MAX_DIMS);
  int64_t sizes[KD_MAX_DIMS];
  int64_t numel = 1;
  for (uint32_t i = 0; i < nd; i++) {
    napi_value e;
    double d;
    KD_NAPI_CALL(env, napi_get_element(env, argv[1], i, &e));
    if (napi_get_value_double(env, e, &d) != napi_ok || d < 0 || d != (double)(int64_t)d)
      return kd_napi_throw_msg(env, KD_ERR_TYPE, "shape must hold non-negative integers");
    sizes[i] = (int64_t)d;
    numel *= sizes[i];
  }
  if ((size_t)numel != length)
    return kd_napi_throw_msg(env, KD_ERR_SHAPE, "shape has %lld elements but the data has %zu", (long long)numel, length);
  kd_tensor *cpu;
  kd_status st = kd_tensor_empty(sizes, (int)nd, dtype, kd_device_cpu(), &cpu);
  if (st != KD_OK) return kd_napi_throw(env, st);
  if (length) memcpy(kd_tensor_data(cpu), src, length * kd_dtype_size(dtype));
  if (dtype == KD_DTYPE_BOOL) { /* normalise to 0/1 */
    uint8_t *p = (uint8_t *)kd_tensor_data(cpu);
    for (size_t i = 0; i < length; i++) p[i] = p[i] != 0;
  }
  kd_tensor *out = cpu;
  if (device.type != KD_DEVICE_CPU) {
    kd_value a[4] = {kd_value_tensor(cpu), kd_value_none(), kd_value_device(device), kd_value_none()};
    st = kd_call1(KD_OP_to, a, &out);
    kd_tensor_release(cpu);
    if (st != KD_OK) return kd_napi_throw(env, st);
  }
  napi_value h;
  KD_NAPI_CALL(env, kd_napi_wrap_tensor(env, out, &h));
  kd_napi_sync_external_memory(env);
  return h;
}

/* float16/bfloat16 <-> float32 typed-array conversions (kind: 0 f16->f32, 1 f32->f16,
 * 2 bf16->f32, 3 f32->bf16). */
static napi_value kd_napi_half_convert(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  size_t argc = 1;
  void *data;
  KD_NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, &data));
  int kind = (int)(intptr_t)data;
  bool is_ta = false;
  napi_typedarray_type tt;
  size_t n, off;
  void *src;
  napi_value ab;
  if (argc < 1 || napi_is_typedarray(env, argv[0], &is_ta) != napi_ok || !is_ta ||
      napi_get_typedarray_info(env, argv[0], &tt, &n, &src, &ab, &off) != napi_ok ||
      tt != ((kind & 1) ? napi_float32_array : napi_uint16_array))
    return kd_napi_throw_msg(env, KD_ERR_TYPE, (kind & 1) ? "expected a Float32Array" : "expected a Uint16Array");
  void *dst;
  napi_value out_ab, out;
  KD_NAPI_CALL(env, napi_create_arraybuffer(env, n * ((kind & 1) ? 2 : 4), &dst, &out_ab));
  if (!(kind & 1)) kd_napi_widen_half(kind == 2, (const uint16_t *)src, (float *)dst, n);
  for (size_t i = 0; (kind & 1) && i < n; i++)
    ((uint16_t *)dst)[i] = kind == 1 ? kd_f32_to_f16(((float *)src)[i]) : kd_f32_to_bf16(((float *)src)[i]);
  KD_NAPI_CALL(env, napi_create_typedarray(env, (kind & 1) ? napi_uint16_array : napi_float32_array, n, out_ab, 0, &out));
  return out;
}

/* Note [Reading small tensors]
 * A typed array made by native code needs an ArrayBuffer with its own backing store (a malloc,
 * a shared pointer, a V8 extension object): half a microsecond, five times the cost of item().
 * For a CPU tensor of at most 8 elements (a loss, a metric, a scalar), hostSmall(h) instead
 * writes the values (float16/bfloat16 widened to float32) into 64 bytes of the environment's
 * state that JS sees as an ArrayBuffer (smallBuffer(), made once), and returns kind * 16 + n;
 * lib/tensor.js copies them into a typed array made in JS (small ones live in the JS heap). It
 * returns -1 for any other tensor. Kinds: 0 float32 (also float16, bfloat16), 1 float64, 2 int8,
 * 3 uint8 (also bool), 4 int16, 5 int32, 6 int64. */
static int kd_small_kind(kd_dtype d) {
  switch (d) {
    case KD_DTYPE_F32:
    case KD_DTYPE_F16:
    case KD_DTYPE_BF16: return 0;
    case KD_DTYPE_F64: return 1;
    case KD_DTYPE_I8: return 2;
    case KD_DTYPE_I16: return 4;
    case KD_DTYPE_I32: return 5;
    case KD_DTYPE_I64: return 6;
    case KD_DTYPE_U8:
    case KD_DTYPE_BOOL:
    default: return 3;
  }
}

static napi_value kd_napi_host_small(napi_env env, napi_callback_info info) {
  KD_NAPI_TENSOR_ARG(env, info, t);
  kd_napi_env *e = kd_napi_env_get(env);
  int64_t n = kd_tensor_numel(t);
  int code = -1;
  if (e && kd_tensor_device(t).type == KD_DEVICE_CPU && n <= 8) {
    kd_tensor *host;
    kd_status st = kd_napi_host_contiguous(t, &host);
    if (st != KD_OK) return kd_napi_throw(env, st);
    kd_dtype dtype = host->dtype;
    if (dtype == KD_DTYPE_F16 || dtype == KD_DTYPE_BF16)
      kd_napi_widen_half(dtype == KD_DTYPE_BF16, (const uint16_t *)kd_tensor_data(host), (float *)e->small, (size_t)n);
    else if (n)
      memcpy(e->small, kd_tensor_data(host), (size_t)n * kd_dtype_size(dtype));
    kd_tensor_release(host);
    code = kd_small_kind(dtype) * 16 + (int)n;
  }
  napi_value r;
  KD_NAPI_CALL(env, napi_create_int32(env, code, &r));
  return r;
}

static napi_value kd_napi_small_buffer(napi_env env, napi_callback_info info) {
  kd_napi_env *e = kd_napi_env_get(env);
  if (!e) return kd_napi_throw_msg(env, KD_ERR_INTERNAL, "no environment state");
  napi_value ab;
  /* no finalizer: the bytes belong to the environment's state, which outlives its JS objects */
  KD_NAPI_CALL(env, napi_create_external_arraybuffer(env, e->small, sizeof e->small, NULL, NULL, &ab));
  return ab;
}

/* share(handle) -> id (a number): registers the tensor for other threads. */
static napi_value kd_napi_share(napi_env env, napi_callback_info info) {
  KD_NAPI_TENSOR_ARG(env, info, t);
  uint64_t id;
  kd_status st = kd_tensor_share(t, &id);
  if (st != KD_OK) return kd_napi_throw(env, st);
  return kd_napi_number(env, (double)id);
}

/* The id argument of fromShared / unshare: a positive safe integer. */
static bool kd_napi_share_id(napi_env env, napi_callback_info info, uint64_t *id) {
  napi_value argv[1];
  size_t argc = 1;
  double d = 0;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 ||
      napi_get_value_double(env, argv[0], &d) != napi_ok || !(d >= 1 && d <= 9007199254740991.0) || d != (double)(uint64_t)d)
    return false;
  *id = (uint64_t)d;
  return true;
}

/* fromShared(id) -> handle: a tensor over the shared tensor's bytes (its own version counter). */
static napi_value kd_napi_from_shared(napi_env env, napi_callback_info info) {
  uint64_t id;
  if (!kd_napi_share_id(env, info, &id)) return kd_napi_throw_msg(env, KD_ERR_TYPE, "fromShared(id): id must be a positive integer");
  kd_tensor *t;
  kd_status st = kd_tensor_from_shared(id, &t);
  if (st != KD_OK) return kd_napi_throw(env, st);
  napi_value h;
  KD_NAPI_CALL(env, kd_napi_wrap_tensor(env, t, &h));
  return h;
}

/* unshare(id): drops the registration (unknown ids are ignored). */
static napi_value kd_napi_unshare(napi_env env, napi_callback_info info) {
  uint64_t id;
  if (!kd_napi_share_id(env, info, &id)) return kd_napi_throw_msg(env, KD_ERR_TYPE, "unshare(id): id must be a positive integer");
  kd_tensor_unshare(id);
  return NULL;
}

napi_status kd_napi_register_tensor(napi_env env, napi_value exports) {
  static const struct { const char *name; napi_callback cb; } fns[] = {
      {"dispose", kd_napi_dispose},           {"isDisposed", kd_napi_is_disposed},
      {"shape", kd_napi_shape},               {"strides", kd_napi_strides},
      {"storageOffset", kd_napi_storage_offset}, {"ndim", kd_napi_ndim},
      {"numel", kd_napi_numel},               {"version", kd_napi_version},
      {"dtype", kd_napi_dtype},               {"device", kd_napi_device},
      {"isContiguous", kd_napi_is_contiguous}, {"toTypedArray", kd_napi_to_typed_array},
      {"item", kd_napi_item},                 {"fromTypedArray", kd_napi_from_typed_array},
      {"hostData", kd_napi_host_data},        {"hostSmall", kd_napi_host_small},
      {"smallBuffer", kd_napi_small_buffer},
      {"share", kd_napi_share},               {"fromShared", kd_napi_from_shared},
      {"unshare", kd_napi_unshare},
  };
  napi_status st = napi_ok;
  for (size_t i = 0; i < sizeof fns / sizeof fns[0] && st == napi_ok; i++)
    st = kd_napi_set_fn(env, exports, fns[i].name, fns[i].cb, NULL);
  static const char *const half_names[4] = {"float16ToFloat32", "float32ToFloat16", "bfloat16ToFloat32", "float32ToBfloat16"};
  for (intptr_t k = 0; k < 4 && st == napi_ok; k++)
    st = kd_napi_set_fn(env, exports, half_names[k], kd_napi_half_convert, (void *)k);
  return st;
}
