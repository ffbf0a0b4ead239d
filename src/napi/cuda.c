/* cuda.c - binding.cuda: device queries for kd.cuda (lib/cuda.js) on top of
 * src/cuda_bridge/. isAvailable(), unavailableReason() and deviceCount() never throw for a
 * missing CUDA (they are how users find out); every other function throws a KD_CUDA_UNAVAILABLE
 * error with the reason. A device argument is an index, 'cuda' or 'cuda:N', or left out for the
 * current device. */
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "core/device.h"
#include "core/random.h"
#include "cuda_bridge/bridge.h"
#include "cuda_bridge/deferred_check.h"
#include "cuda_bridge/graph_keep.h"
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

/* libraryFound() -> boolean: the CUDA library exists (built with nvcc); nothing is loaded. */
static napi_value kd_napi_cuda_library_found(napi_env env, napi_callback_info info) {
  napi_value r;
  KD_NAPI_CALL(env, napi_get_boolean(env, kd_cuda_library_found(), &r));
  return r;
}

/* addLibraryDir(dir): another directory to look for the CUDA library in (lib/index.js). */
static napi_value kd_napi_cuda_add_library_dir(napi_env env, napi_callback_info info) {
  KD_NAPI_CUDA_ARGS(1);
  char dir[4096];
  if (argc < 1) return kd_napi_throw_msg(env, KD_ERR_TYPE, "addLibraryDir(dir) takes a directory path");
  KD_NAPI_CALL(env, kd_napi_string_arg(env, argv[0], dir, sizeof dir));
  kd_status st = kd_cuda_add_library_dir(dir);
  if (st != KD_OK) return kd_napi_throw(env, st);
  napi_value r;
  KD_NAPI_CALL(env, napi_get_undefined(env, &r));
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

/* deviceIndex(device?) -> the index a device argument names (the current device when left
 * out): KD_INVALID_TYPE / KD_INVALID_ARGUMENT for a bad argument, then KD_CUDA_UNAVAILABLE
 * when CUDA cannot be used. lib/cuda.js resolves every device argument through it. */
static napi_value kd_napi_cuda_device_index(napi_env env, napi_callback_info info) {
  KD_NAPI_CUDA_ARGS(1);
  int d = 0;
  if (!kd_napi_cuda_device_arg(env, argc, argv, &d)) return NULL;
  kd_status st = kd_cuda_bridge_load();
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

#define KD_NAPI_TRY_STATUS(call)                                                            \
  do {                                                                                      \
    napi_status kd_napi_s_ = (call);                                                        \
    if (kd_napi_s_ != napi_ok) return kd_napi_s_;                                           \
  } while (0)

/* ==== memory, streams, events, async completion ====
 * The library's function table (cuda/kd_cuda_api.h) is used directly; failures become JS errors
 * through kd_cuda_status_error. Streams are numbers (the cudaStream_t, 0 for the default
 * stream); events are externals whose finalizer destroys the cudaEvent_t. The Promises that wait
 * for the GPU are jobs of napi/cuda_async.c (Note [CUDA async completion]). */

#include "../../cuda/kd_cuda_api.h"
#include "napi/cuda_async.h"

static kd_cuda_async *kd_cuda_async_of(napi_env env, napi_callback_info info) {
  void *data = NULL;
  if (napi_get_cb_info(env, info, NULL, NULL, NULL, &data) != napi_ok) return NULL;
  return (kd_cuda_async *)data;
}

/* Reads argv[i] as a number (a stream handle, a priority, a fraction). */
static int kd_napi_cuda_number(napi_env env, napi_value v, double *out, const char *what) {
  napi_valuetype t = napi_undefined;
  if (v) napi_typeof(env, v, &t);
  if (t != napi_number) {
    kd_napi_throw_msg(env, KD_ERR_TYPE, "%s must be a number", what);
    return -1;
  }
  napi_get_value_double(env, v, out);
  return 0;
}

#define KD_NAPI_CUDA_API(api)                                                               \
  const kd_cuda_api *api = NULL;                                                            \
  do {                                                                                      \
    kd_status kd_st_ = kd_cuda_api_get(&api);                                               \
    if (kd_st_ != KD_OK) return kd_napi_throw(env, kd_st_);                                 \
  } while (0)

#define KD_NAPI_CUDA_TRY(call)                                                              \
  do {                                                                                      \
    int kd_cs_ = (call);                                                                    \
    if (kd_cs_ != KD_CUDA_OK) return kd_napi_throw(env, kd_cuda_status_error(kd_cs_));      \
  } while (0)

static napi_value kd_napi_undefined(napi_env env) {
  napi_value r;
  KD_NAPI_CALL(env, napi_get_undefined(env, &r));
  return r;
}

static napi_value kd_napi_cuda_string_result(napi_env env, const kd_cuda_api *api, char *s) {
  napi_value r;
  napi_status st = napi_create_string_utf8(env, s ? s : "", NAPI_AUTO_LENGTH, &r);
  api->free_string(s);
  KD_NAPI_CALL(env, st);
  return r;
}

/* memoryStatsJson(device?) / memorySnapshotJson(device?) / memorySummary(device?) -> string */
static napi_value kd_napi_cuda_memory_text(napi_env env, napi_callback_info info, int which) {
  KD_NAPI_CUDA_ARGS(1);
  KD_NAPI_CUDA_API(api);
  int d = 0;
  if (!kd_napi_cuda_device_arg(env, argc, argv, &d)) return NULL;
  char *s = NULL;
  int cs = which == 0 ? api->memory_stats_json(d, &s) : which == 1 ? api->memory_snapshot_json(d, &s)
                                                                   : api->memory_summary(d, &s);
  if (cs != KD_CUDA_OK) return kd_napi_throw(env, kd_cuda_status_error(cs));
  return kd_napi_cuda_string_result(env, api, s);
}
static napi_value kd_napi_cuda_memory_stats(napi_env env, napi_callback_info info) {
  return kd_napi_cuda_memory_text(env, info, 0);
}
static napi_value kd_napi_cuda_memory_snapshot(napi_env env, napi_callback_info info) {
  return kd_napi_cuda_memory_text(env, info, 1);
}
static napi_value kd_napi_cuda_memory_summary(napi_env env, napi_callback_info info) {
  return kd_napi_cuda_memory_text(env, info, 2);
}

/* emptyCache(device?) / resetPeakMemoryStats(device?) */
static napi_value kd_napi_cuda_empty_cache(napi_env env, napi_callback_info info) {
  KD_NAPI_CUDA_ARGS(1);
  KD_NAPI_CUDA_API(api);
  int d = 0;
  if (!kd_napi_cuda_device_arg(env, argc, argv, &d)) return NULL;
  KD_NAPI_CUDA_TRY(api->empty_cache(d));
  return kd_napi_undefined(env);
}
static napi_value kd_napi_cuda_reset_peak(napi_env env, napi_callback_info info) {
  KD_NAPI_CUDA_ARGS(1);
  KD_NAPI_CUDA_API(api);
  int d = 0;
  if (!kd_napi_cuda_device_arg(env, argc, argv, &d)) return NULL;
  KD_NAPI_CUDA_TRY(api->reset_peak_memory_stats(d));
  return kd_napi_undefined(env);
}

/* setPerProcessMemoryFraction(fraction, device?) */
static napi_value kd_napi_cuda_set_fraction(napi_env env, napi_callback_info info) {
  KD_NAPI_CUDA_ARGS(2);
  double f;
  if (kd_napi_cuda_number(env, argc > 0 ? argv[0] : NULL, &f, "fraction")) return NULL;
  KD_NAPI_CUDA_API(api);
  int d = 0;
  if (!kd_napi_cuda_device_arg(env, argc > 1 ? 1 : 0, argv + 1, &d)) return NULL;
  KD_NAPI_CUDA_TRY(api->set_memory_fraction(d, f));
  return kd_napi_undefined(env);
}

/* streamCreate(device?, priority) -> handle */
static napi_value kd_napi_cuda_stream_create(napi_env env, napi_callback_info info) {
  KD_NAPI_CUDA_ARGS(2);
  KD_NAPI_CUDA_API(api);
  int d = 0;
  if (!kd_napi_cuda_device_arg(env, argc, argv, &d)) return NULL;
  double prio = 0;
  if (argc > 1 && kd_napi_cuda_number(env, argv[1], &prio, "priority")) return NULL;
  uintptr_t h = 0;
  KD_NAPI_CUDA_TRY(api->stream_create(d, (int)prio, &h));
  napi_value r;
  KD_NAPI_CALL(env, napi_create_double(env, (double)h, &r));
  return r;
}

/* streamQuery(device, handle) -> boolean */
static napi_value kd_napi_cuda_stream_query(napi_env env, napi_callback_info info) {
  KD_NAPI_CUDA_ARGS(2);
  KD_NAPI_CUDA_API(api);
  int d = 0;
  double h;
  if (!kd_napi_cuda_device_arg(env, argc, argv, &d) || kd_napi_cuda_number(env, argv[1], &h, "stream")) return NULL;
  int done = 0;
  KD_NAPI_CUDA_TRY(api->stream_query(d, (uintptr_t)h, &done));
  napi_value r;
  KD_NAPI_CALL(env, napi_get_boolean(env, done != 0, &r));
  return r;
}

/* currentStream(device?) -> handle; setCurrentStream(device, handle) */
static napi_value kd_napi_cuda_current_stream(napi_env env, napi_callback_info info) {
  KD_NAPI_CUDA_ARGS(1);
  KD_NAPI_CUDA_API(api);
  int d = 0;
  if (!kd_napi_cuda_device_arg(env, argc, argv, &d)) return NULL;
  uintptr_t h = 0;
  KD_NAPI_CUDA_TRY(api->current_stream(d, &h));
  napi_value r;
  KD_NAPI_CALL(env, napi_create_double(env, (double)h, &r));
  return r;
}
static napi_value kd_napi_cuda_set_current_stream(napi_env env, napi_callback_info info) {
  KD_NAPI_CUDA_ARGS(2);
  KD_NAPI_CUDA_API(api);
  int d = 0;
  double h;
  if (!kd_napi_cuda_device_arg(env, argc, argv, &d) || kd_napi_cuda_number(env, argv[1], &h, "stream")) return NULL;
  KD_NAPI_CUDA_TRY(api->set_current_stream(d, (uintptr_t)h));
  return kd_napi_undefined(env);
}

/* eventCreate(device, enableTiming) -> external */
static void kd_napi_cuda_event_finalize(napi_env env, void *data, void *hint) {
  const kd_cuda_api *api = NULL;
  if (kd_cuda_api_get(&api) == KD_OK) api->event_destroy(data);
}
static void *kd_napi_cuda_event_arg(napi_env env, napi_value v) {
  void *p = NULL;
  if (!v || napi_get_value_external(env, v, &p) != napi_ok || !p) {
    kd_napi_throw_msg(env, KD_ERR_TYPE, "expected a kd.cuda.Event");
    return NULL;
  }
  return p;
}
static napi_value kd_napi_cuda_event_create(napi_env env, napi_callback_info info) {
  KD_NAPI_CUDA_ARGS(2);
  KD_NAPI_CUDA_API(api);
  int d = 0;
  if (!kd_napi_cuda_device_arg(env, argc, argv, &d)) return NULL;
  bool timing = false;
  if (argc > 1) napi_get_value_bool(env, argv[1], &timing);
  void *ev = NULL;
  KD_NAPI_CUDA_TRY(api->event_create(d, timing ? 1 : 0, &ev));
  napi_value r;
  napi_status st = napi_create_external(env, ev, kd_napi_cuda_event_finalize, NULL, &r);
  if (st != napi_ok) api->event_destroy(ev);
  KD_NAPI_CALL(env, st);
  return r;
}

/* eventRecord(event, device, stream) / streamWaitEvent(device, stream, event) */
static napi_value kd_napi_cuda_event_record(napi_env env, napi_callback_info info) {
  KD_NAPI_CUDA_ARGS(3);
  KD_NAPI_CUDA_API(api);
  void *ev = kd_napi_cuda_event_arg(env, argv[0]);
  int d = 0;
  double h;
  if (!ev || !kd_napi_cuda_device_arg(env, argc - 1, argv + 1, &d) || kd_napi_cuda_number(env, argv[2], &h, "stream"))
    return NULL;
  KD_NAPI_CUDA_TRY(api->event_record(ev, d, (uintptr_t)h));
  return kd_napi_undefined(env);
}
static napi_value kd_napi_cuda_stream_wait_event(napi_env env, napi_callback_info info) {
  KD_NAPI_CUDA_ARGS(3);
  KD_NAPI_CUDA_API(api);
  int d = 0;
  double h;
  if (!kd_napi_cuda_device_arg(env, argc, argv, &d) || kd_napi_cuda_number(env, argv[1], &h, "stream")) return NULL;
  void *ev = kd_napi_cuda_event_arg(env, argv[2]);
  if (!ev) return NULL;
  KD_NAPI_CUDA_TRY(api->stream_wait_event(d, (uintptr_t)h, ev));
  return kd_napi_undefined(env);
}

/* eventQuery(event) -> boolean; eventElapsedTime(start, end) -> ms */
static napi_value kd_napi_cuda_event_query(napi_env env, napi_callback_info info) {
  KD_NAPI_CUDA_ARGS(1);
  KD_NAPI_CUDA_API(api);
  void *ev = kd_napi_cuda_event_arg(env, argv[0]);
  if (!ev) return NULL;
  int done = 0;
  KD_NAPI_CUDA_TRY(api->event_query(ev, &done));
  napi_value r;
  KD_NAPI_CALL(env, napi_get_boolean(env, done != 0, &r));
  return r;
}
static napi_value kd_napi_cuda_event_elapsed(napi_env env, napi_callback_info info) {
  KD_NAPI_CUDA_ARGS(2);
  KD_NAPI_CUDA_API(api);
  void *a = kd_napi_cuda_event_arg(env, argv[0]);
  void *b = a ? kd_napi_cuda_event_arg(env, argv[1]) : NULL;
  if (!a || !b) return NULL;
  float ms = 0;
  KD_NAPI_CUDA_TRY(api->event_elapsed_time(a, b, &ms));
  napi_value r;
  KD_NAPI_CALL(env, napi_create_double(env, (double)ms, &r));
  return r;
}

/* graphOp(device, code, a, b) -> result[0]: a KD_CUDA_OP_GRAPH call (cuda/graphs.cu; code a
 * KD_CUDA_GRAPH_* value, a and b its i[0], i[1]) on the device's current stream, as
 * lib/cuda_graphs.js's CUDAGraph uses it. A capture's begin and end also tell the bridge, which
 * then refuses sync points (Note [Refused during graph capture] in src/cuda_bridge/bridge.c). The
 * generator's state goes along (i[2], i[3]) and a replay advances it (Note [Random ops in CUDA
 * graphs] in cuda/philox_state.cuh). A graph keeps the storages its capture used until its reset
 * (Note [Storages a CUDA graph keeps] in src/cuda_bridge/graph_keep.c). */
static napi_value kd_napi_cuda_graph_op(napi_env env, napi_callback_info info) {
  KD_NAPI_CUDA_ARGS(4);
  KD_NAPI_CUDA_API(api);
  int d = 0;
  double code = 0, a = 0, b = 0;
  if (!kd_napi_cuda_device_arg(env, argc, argv, &d) || kd_napi_cuda_number(env, argv[1], &code, "code") ||
      kd_napi_cuda_number(env, argv[2], &a, "a") || kd_napi_cuda_number(env, argv[3], &b, "b"))
    return NULL;
  kd_cuda_op op;
  memset(&op, 0, sizeof op);
  op.kind = KD_CUDA_OP_GRAPH;
  op.code = (int32_t)code;
  op.i[0] = (int64_t)a;
  op.i[1] = (int64_t)b;
  uint64_t seed = 0, offset = 0; /* the generator: Note [Random ops in CUDA graphs] in cuda/philox_state.cuh */
  kd_random_get_state(&seed, &offset);
  op.i[2] = (int64_t)(op.code == KD_CUDA_GRAPH_REPLAY ? seed : offset);
  op.i[3] = (int64_t)offset;
  if (op.code == KD_CUDA_GRAPH_BEGIN) { /* before the capture: what it uses is kept from its first kernel */
    kd_status kept = kd_cuda_graph_keep_begin(d);
    if (kept != KD_OK) return kd_napi_throw(env, kept);
  }
  const int cs = api->op(d, &op);
  if (op.code == KD_CUDA_GRAPH_END) { /* the capture is over, failed or not: the graph (or nothing) keeps its storages */
    kd_cuda_set_capturing(d, false);
    kd_cuda_graph_keep_end(d, cs == KD_CUDA_OK ? (uint64_t)op.result[0] : 0);
  }
  if (op.code == KD_CUDA_GRAPH_BEGIN && cs != KD_CUDA_OK) kd_cuda_graph_keep_end(d, 0);
  if (cs != KD_CUDA_OK) return kd_napi_throw(env, kd_cuda_status_error(cs));
  if (op.code == KD_CUDA_GRAPH_BEGIN) kd_cuda_set_capturing(d, true);
  if (op.code == KD_CUDA_GRAPH_RESET) kd_cuda_graph_keep_drop(d, (uint64_t)op.i[0]); /* after the graph is gone */
  if (op.code == KD_CUDA_GRAPH_REPLAY) kd_random_set_state(seed, offset + (uint64_t)op.result[1]);
  napi_value r;
  KD_NAPI_CALL(env, napi_create_double(env, (double)op.result[0], &r));
  return r;
}

/* synchronizeAsync(device?, stream?) -> Promise: resolves when the stream (default: the legacy
 * default stream, i.e. the whole device) has finished the work queued so far. */
static napi_value kd_napi_cuda_synchronize_async(napi_env env, napi_callback_info info) {
  KD_NAPI_CUDA_ARGS(2);
  kd_cuda_async *ctx = kd_cuda_async_of(env, info);
  KD_NAPI_CUDA_API(api);
  int d = 0;
  if (!kd_napi_cuda_device_arg(env, argc, argv, &d)) return NULL;
  double h = 0;
  napi_valuetype t = napi_undefined;
  if (argc > 1) napi_typeof(env, argv[1], &t);
  if (t != napi_undefined && kd_napi_cuda_number(env, argv[1], &h, "stream")) return NULL;
  kd_status refused = kd_cuda_capture_refuse(d, "synchronize()");
  if (refused != KD_OK) return kd_napi_throw(env, refused);
  napi_value promise;
  kd_cuda_job *j = kd_cuda_job_new(env, ctx, d, &promise);
  if (!j) return NULL;
  /* An event marks the end of the work queued so far; the completion runs on the device's
   * internal waiter stream once it is reached, so it adds no work to the stream itself: when the
   * Promise resolves the stream is idle (query() is true) unless more work was queued since. */
  void *ev = NULL;
  int cs = api->event_create(d, 0, &ev);
  if (cs == KD_CUDA_OK) cs = api->event_record(ev, d, (uintptr_t)h);
  if (cs == KD_CUDA_OK) cs = api->event_host_func(d, ev, kd_cuda_job_fire, j);
  if (ev) api->event_destroy(ev); /* released once reached; the waiter stream holds its place */
  if (cs != KD_CUDA_OK) return kd_cuda_job_fail(env, j, kd_cuda_status_error(cs), promise);
  kd_cuda_job_started(env, j);
  return promise;
}

/* eventSynchronizeAsync(event, device) -> Promise */
static napi_value kd_napi_cuda_event_synchronize_async(napi_env env, napi_callback_info info) {
  KD_NAPI_CUDA_ARGS(2);
  kd_cuda_async *ctx = kd_cuda_async_of(env, info);
  KD_NAPI_CUDA_API(api);
  void *ev = kd_napi_cuda_event_arg(env, argv[0]);
  int d = 0;
  if (!ev || !kd_napi_cuda_device_arg(env, argc - 1, argv + 1, &d)) return NULL;
  kd_status refused = kd_cuda_capture_refuse(d, "Event.synchronize()");
  if (refused != KD_OK) return kd_napi_throw(env, refused);
  napi_value promise;
  kd_cuda_job *j = kd_cuda_job_new(env, ctx, d, &promise);
  if (!j) return NULL;
  int cs = api->event_host_func(d, ev, kd_cuda_job_fire, j);
  if (cs != KD_CUDA_OK) return kd_cuda_job_fail(env, j, kd_cuda_status_error(cs), promise);
  kd_cuda_job_started(env, j);
  return promise;
}

/* tensorDataAsync(tensor) -> Promise<ArrayBuffer>: the elements of a CUDA tensor in row-major
 * order, copied on the current stream into pinned memory (see Note [CUDA async completion]). */
static napi_value kd_napi_cuda_tensor_data_async(napi_env env, napi_callback_info info) {
  KD_NAPI_CUDA_ARGS(1);
  kd_cuda_async *ctx = kd_cuda_async_of(env, info);
  kd_tensor *t;
  kd_status st = kd_napi_unwrap_tensor(env, argv[0], "tensor", &t);
  if (st != KD_OK) return kd_napi_throw(env, st);
  if (kd_tensor_device(t).type != KD_DEVICE_CUDA)
    return kd_napi_throw_msg(env, KD_ERR_INVALID_ARGUMENT, "tensorDataAsync: expected a CUDA tensor");
  KD_NAPI_CUDA_API(api);
  int d = kd_tensor_device(t).index;
  st = kd_cuda_capture_refuse(d, "reading a CUDA tensor on the host (dataAsync(), array())");
  if (st != KD_OK) return kd_napi_throw(env, st);
  kd_tensor *c = NULL;
  st = kd_cuda_contiguous(t, &c);
  if (st != KD_OK) return kd_napi_throw(env, st);
  napi_value promise;
  kd_cuda_job *j = kd_cuda_job_new(env, ctx, d, &promise);
  if (!j) {
    kd_tensor_release(c);
    return NULL;
  }
  j->keep = c;
  j->want_buffer = 1;
  j->nbytes = (size_t)kd_tensor_numel(c) * kd_dtype_size(c->dtype);
  uintptr_t stream = 0;
  int cs = api->current_stream(d, &stream);
  if (cs == KD_CUDA_OK && j->nbytes) cs = api->host_alloc(j->nbytes, &j->pinned);
  if (cs == KD_CUDA_OK && j->nbytes) cs = api->memcpy_d2h_async(d, j->pinned, kd_tensor_data(c), j->nbytes);
  if (cs == KD_CUDA_OK) cs = api->launch_host_func(d, stream, kd_cuda_job_fire, j);
  if (cs != KD_CUDA_OK) return kd_cuda_job_fail(env, j, kd_cuda_status_error(cs), promise);
  kd_cuda_job_started(env, j);
  return promise;
}

/* recordStream(tensor, stream) */
static napi_value kd_napi_cuda_record_stream(napi_env env, napi_callback_info info) {
  KD_NAPI_CUDA_ARGS(2);
  kd_tensor *t;
  kd_status st = kd_napi_unwrap_tensor(env, argv[0], "tensor", &t);
  if (st != KD_OK) return kd_napi_throw(env, st);
  double h;
  if (kd_napi_cuda_number(env, argv[1], &h, "stream")) return NULL;
  if (kd_tensor_device(t).type != KD_DEVICE_CUDA)
    return kd_napi_throw_msg(env, KD_ERR_INVALID_ARGUMENT, "recordStream: expected a CUDA tensor");
  KD_NAPI_CUDA_API(api);
  if (t->storage->data) KD_NAPI_CUDA_TRY(api->record_stream(kd_tensor_device(t).index, t->storage->data, (uintptr_t)h));
  return kd_napi_undefined(env);
}

/* pinMemory(tensor) -> tensor; isPinned(tensor) -> boolean; setNonBlocking(bool) */
static napi_value kd_napi_cuda_pin_memory(napi_env env, napi_callback_info info) {
  KD_NAPI_CUDA_ARGS(1);
  kd_tensor *t, *p;
  kd_status st = kd_napi_unwrap_tensor(env, argv[0], "tensor", &t);
  if (st == KD_OK) st = kd_cuda_pin_memory(t, &p);
  if (st != KD_OK) return kd_napi_throw(env, st);
  napi_value r;
  KD_NAPI_CALL(env, kd_napi_wrap_tensor(env, p, &r));
  return r;
}
static napi_value kd_napi_cuda_is_pinned(napi_env env, napi_callback_info info) {
  KD_NAPI_CUDA_ARGS(1);
  kd_tensor *t;
  kd_status st = kd_napi_unwrap_tensor(env, argv[0], "tensor", &t);
  if (st != KD_OK) return kd_napi_throw(env, st);
  napi_value r;
  KD_NAPI_CALL(env, napi_get_boolean(env, kd_cuda_is_pinned(t), &r));
  return r;
}
static napi_value kd_napi_cuda_set_non_blocking(napi_env env, napi_callback_info info) {
  KD_NAPI_CUDA_ARGS(1);
  bool on = false;
  if (argc > 0) napi_get_value_bool(env, argv[0], &on);
  kd_cuda_set_non_blocking(on);
  return kd_napi_undefined(env);
}

/* setAllowTF32(on) / getAllowTF32(): kd.backends.cuda.matmul.allowTF32 (loads nothing). */
static napi_value kd_napi_cuda_set_allow_tf32(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  KD_NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  bool on = false;
  if (argc > 0) napi_get_value_bool(env, argv[0], &on);
  kd_cuda_set_allow_tf32(on);
  return kd_napi_undefined(env);
}
static napi_value kd_napi_cuda_get_allow_tf32(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value r;
  KD_NAPI_CALL(env, napi_get_boolean(env, kd_cuda_get_allow_tf32(), &r));
  return r;
}

/* spin(device, ms): test hook, a kernel busy for about ms milliseconds on the current stream;
 * ms < 0: busy for -ms milliseconds, then it traps (a device fault, sticky as on a GPU). */
static napi_value kd_napi_cuda_spin(napi_env env, napi_callback_info info) {
  KD_NAPI_CUDA_ARGS(2);
  KD_NAPI_CUDA_API(api);
  int d = 0;
  double ms;
  if (!kd_napi_cuda_device_arg(env, argc, argv, &d) || kd_napi_cuda_number(env, argv[1], &ms, "ms")) return NULL;
  KD_NAPI_CUDA_TRY(api->spin(d, ms));
  return kd_napi_undefined(env);
}

/* emulatorStats() -> the emulated GPU's counters (Note [Emulator counters]), or null when the
 * CUDA backend in use is not the emulator. */
static napi_value kd_napi_cuda_emulator_stats(napi_env env, napi_callback_info info) {
  kd_cuda_emu_stats st;
  napi_value r, v;
  if (!kd_cuda_emulator_stats(&st)) {
    KD_NAPI_CALL(env, napi_get_null(env, &r));
    return r;
  }
  KD_NAPI_CALL(env, napi_create_object(env, &r));
  const struct {
    const char *name;
    uint64_t value;
  } fields[] = {
      {"launches", st.launches},       {"blocks", st.blocks},
      {"threads", st.threads},         {"syncs", st.syncs},
      {"bytesHostToDevice", st.h2d_bytes}, {"bytesDeviceToHost", st.d2h_bytes},
      {"bytesDeviceToDevice", st.d2d_bytes}, {"copiesHostToDevice", st.h2d_copies},
      {"copiesDeviceToHost", st.d2h_copies}, {"copiesDeviceToDevice", st.d2d_copies},
      {"mallocs", st.mallocs},         {"frees", st.frees},
      {"hostFunctions", st.host_funcs}, {"devices", st.devices},
      {"memory", st.memory},           {"seed", st.seed},
      {"graphLaunches", st.graph_launches}, {"graphKernels", st.graph_kernels},
  };
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
    KD_NAPI_CALL(env, napi_create_double(env, (double)fields[i].value, &v));
    KD_NAPI_CALL(env, napi_set_named_property(env, r, fields[i].name, v));
  }
  KD_NAPI_CALL(env, napi_create_string_utf8(env, st.fault, NAPI_AUTO_LENGTH, &v));
  KD_NAPI_CALL(env, napi_set_named_property(env, r, "fault", v));
  return r;
}

static napi_status kd_napi_register_cuda_async(napi_env env, napi_value cuda) {
  kd_cuda_async *ctx = kd_cuda_async_create(env);
  if (!ctx) return napi_generic_failure;
  static const struct {
    const char *name;
    napi_callback cb;
  } fns[] = {
      {"memoryStatsJson", kd_napi_cuda_memory_stats},
      {"memorySnapshotJson", kd_napi_cuda_memory_snapshot},
      {"memorySummary", kd_napi_cuda_memory_summary},
      {"emptyCache", kd_napi_cuda_empty_cache},
      {"resetPeakMemoryStats", kd_napi_cuda_reset_peak},
      {"setPerProcessMemoryFraction", kd_napi_cuda_set_fraction},
      {"streamCreate", kd_napi_cuda_stream_create},
      {"streamQuery", kd_napi_cuda_stream_query},
      {"currentStream", kd_napi_cuda_current_stream},
      {"setCurrentStream", kd_napi_cuda_set_current_stream},
      {"eventCreate", kd_napi_cuda_event_create},
      {"eventRecord", kd_napi_cuda_event_record},
      {"eventQuery", kd_napi_cuda_event_query},
      {"eventElapsedTime", kd_napi_cuda_event_elapsed},
      {"streamWaitEvent", kd_napi_cuda_stream_wait_event},
      {"synchronizeAsync", kd_napi_cuda_synchronize_async},
      {"graphOp", kd_napi_cuda_graph_op},
      {"eventSynchronizeAsync", kd_napi_cuda_event_synchronize_async},
      {"tensorDataAsync", kd_napi_cuda_tensor_data_async},
      {"recordStream", kd_napi_cuda_record_stream},
      {"pinMemory", kd_napi_cuda_pin_memory},
      {"isPinned", kd_napi_cuda_is_pinned},
      {"setNonBlocking", kd_napi_cuda_set_non_blocking},
      {"spin", kd_napi_cuda_spin},
  };
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
    KD_NAPI_TRY_STATUS(kd_napi_set_fn(env, cuda, fns[i].name, fns[i].cb, ctx));
  return napi_ok;
}

/* src/cuda_bridge/alloc_fake.c: the allocator core on a fake device, for the CPU-only tests. */
napi_status kd_napi_register_cuda_alloc_fake(napi_env env, napi_value cuda);

napi_status kd_napi_register_cuda(napi_env env, napi_value exports) {
  static const struct {
    const char *name;
    napi_callback cb;
  } fns[] = {
      {"isAvailable", kd_napi_cuda_is_available},
      {"unavailableReason", kd_napi_cuda_unavailable_reason},
      {"libraryFound", kd_napi_cuda_library_found},
      {"addLibraryDir", kd_napi_cuda_add_library_dir},
      {"emulatorStats", kd_napi_cuda_emulator_stats},
      {"deviceCount", kd_napi_cuda_device_count},
      {"currentDevice", kd_napi_cuda_current_device},
      {"deviceIndex", kd_napi_cuda_device_index},
      {"setDevice", kd_napi_cuda_set_device},
      {"getDeviceName", kd_napi_cuda_get_device_name},
      {"getDeviceProperties", kd_napi_cuda_get_device_properties},
      {"setAllowTF32", kd_napi_cuda_set_allow_tf32},
      {"getAllowTF32", kd_napi_cuda_get_allow_tf32},
  };
  napi_value cuda;
  KD_NAPI_TRY_STATUS(napi_create_object(env, &cuda));
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
    KD_NAPI_TRY_STATUS(kd_napi_set_fn(env, cuda, fns[i].name, fns[i].cb, NULL));
  KD_NAPI_TRY_STATUS(kd_napi_register_cuda_async(env, cuda));
  KD_NAPI_TRY_STATUS(kd_napi_register_cuda_alloc_fake(env, cuda));
  return napi_set_named_property(env, exports, "cuda", cuda);
}
