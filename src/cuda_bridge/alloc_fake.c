/* alloc_fake.c - the CUDA caching allocator's core (cuda/caching_allocator_core.c) compiled into
 * kindling.node with a fake device, so its policy is tested on machines without a GPU
 * (test/cuda_allocator.test.js, through kd.cuda._testing.FakeAllocator in lib/cuda.js).
 *
 * The fake device hands out addresses without memory behind them (no byte is ever touched),
 * has a capacity (malloc beyond it is "out of memory"), and events that complete only when the
 * test says so (completeEvents) or when the allocator synchronizes on them: exactly what is
 * needed to check rounding, pools, splitting, coalescing, stream reuse, OOM retry and stats.
 * Test-only: nothing else uses it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../cuda/caching_allocator_core.c"
#include "napi/napi_util.h"

typedef struct kd_fake_event {
  uintptr_t stream;
  int done;
  struct kd_fake_event *next;
} kd_fake_event;

typedef struct kd_fake_seg {
  uint64_t addr;
  size_t size;
} kd_fake_seg;

typedef struct kd_fake_dev {
  size_t capacity, used;
  uint64_t next_addr;
  int64_t mallocs, frees, events_recorded;
  kd_fake_seg *segs;
  size_t n_segs, cap_segs;
  kd_fake_event *events; /* live events */
  kd_ca *ca;
} kd_fake_dev;

static int kd_fake_malloc(void *ctx, size_t n, void **out, char *err, size_t errn) {
  kd_fake_dev *d = (kd_fake_dev *)ctx;
  if (n > d->capacity - d->used) return 1;
  if (d->n_segs == d->cap_segs) {
    size_t cap = d->cap_segs ? d->cap_segs * 2 : 16;
    kd_fake_seg *v = (kd_fake_seg *)realloc(d->segs, cap * sizeof *v);
    if (!v) {
      snprintf(err, errn, "fake device: out of host memory");
      return -1;
    }
    d->segs = v;
    d->cap_segs = cap;
  }
  d->segs[d->n_segs].addr = d->next_addr;
  d->segs[d->n_segs].size = n;
  d->n_segs++;
  *out = (void *)(uintptr_t)d->next_addr;
  d->next_addr += n + (1 << 20); /* a gap, so segments are never adjacent */
  d->used += n;
  d->mallocs++;
  return 0;
}

static void kd_fake_free(void *ctx, void *p) {
  kd_fake_dev *d = (kd_fake_dev *)ctx;
  for (size_t i = 0; i < d->n_segs; i++) {
    if (d->segs[i].addr == (uint64_t)(uintptr_t)p) {
      d->used -= d->segs[i].size;
      d->segs[i] = d->segs[--d->n_segs];
      d->frees++;
      return;
    }
  }
}

static int kd_fake_event_record(void *ctx, uintptr_t stream, void **out) {
  kd_fake_dev *d = (kd_fake_dev *)ctx;
  kd_fake_event *e = (kd_fake_event *)calloc(1, sizeof *e);
  if (!e) return -1;
  e->stream = stream;
  e->next = d->events;
  d->events = e;
  d->events_recorded++;
  *out = e;
  return 0;
}

static int kd_fake_event_query(void *ctx, void *ev) { return ((kd_fake_event *)ev)->done; }
static void kd_fake_event_sync(void *ctx, void *ev) { ((kd_fake_event *)ev)->done = 1; }

static void kd_fake_event_release(void *ctx, void *ev) {
  kd_fake_dev *d = (kd_fake_dev *)ctx;
  for (kd_fake_event **p = &d->events; *p; p = &(*p)->next) {
    if (*p == ev) {
      *p = ((kd_fake_event *)ev)->next;
      free(ev);
      return;
    }
  }
}

static void kd_fake_mem_info(void *ctx, size_t *free_b, size_t *total_b) {
  kd_fake_dev *d = (kd_fake_dev *)ctx;
  *free_b = d->capacity - d->used;
  *total_b = d->capacity;
}

/* ---- JS glue: binding.cuda.fakeAlloc* (wrapped by lib/cuda.js) ---- */

static void kd_fake_finalize(napi_env env, void *data, void *hint) {
  kd_fake_dev *d = (kd_fake_dev *)data;
  kd_ca_destroy(d->ca);
  while (d->events) {
    kd_fake_event *n = d->events->next;
    free(d->events);
    d->events = n;
  }
  free(d->segs);
  free(d);
}

static kd_fake_dev *kd_fake_arg(napi_env env, napi_value v) {
  void *p = NULL;
  if (napi_get_value_external(env, v, &p) != napi_ok || !p) {
    kd_napi_throw_msg(env, KD_ERR_TYPE, "expected a fake allocator handle");
    return NULL;
  }
  return (kd_fake_dev *)p;
}

static int kd_fake_number(napi_env env, napi_value v, double *out) {
  if (napi_get_value_double(env, v, out) != napi_ok) {
    kd_napi_throw_msg(env, KD_ERR_TYPE, "expected a number");
    return -1;
  }
  return 0;
}

#define KD_FAKE_ARGS(n)                                                                     \
  size_t argc = (n);                                                                        \
  napi_value argv[(n)];                                                                     \
  for (size_t i_ = 0; i_ < (n); i_++) argv[i_] = NULL;                                      \
  KD_NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));                  \
  if (argc < (n)) return kd_napi_throw_msg(env, KD_ERR_TYPE, "expected %d arguments", (int)(n))

/* fakeAllocCreate(capacityBytes, confString) -> handle */
static napi_value kd_fake_create(napi_env env, napi_callback_info info) {
  KD_FAKE_ARGS(2);
  double cap;
  if (kd_fake_number(env, argv[0], &cap)) return NULL;
  char conf[256];
  KD_NAPI_CALL(env, kd_napi_string_arg(env, argv[1], conf, sizeof conf));
  kd_ca_config cfg;
  char err[256];
  if (kd_ca_parse_conf(conf, &cfg, err, sizeof err) != 0) return kd_napi_throw_msg(env, KD_ERR_INVALID_ARGUMENT, "%s", err);
  kd_fake_dev *d = (kd_fake_dev *)calloc(1, sizeof *d);
  if (!d) return kd_napi_throw_msg(env, KD_ERR_OOM, "out of memory");
  d->capacity = (size_t)cap;
  d->next_addr = (uint64_t)1 << 32;
  kd_ca_device_ops ops = {d, kd_fake_malloc, kd_fake_free, kd_fake_event_record, kd_fake_event_query,
                          kd_fake_event_sync, kd_fake_event_release, kd_fake_mem_info};
  d->ca = kd_ca_create(&ops, &cfg, 0);
  if (!d->ca) {
    free(d);
    return kd_napi_throw_msg(env, KD_ERR_OOM, "out of memory");
  }
  napi_value r;
  KD_NAPI_CALL(env, napi_create_external(env, d, kd_fake_finalize, NULL, &r));
  return r;
}

/* fakeAllocMalloc(h, nbytes, stream) -> address (a number) */
static napi_value kd_fake_malloc_js(napi_env env, napi_callback_info info) {
  KD_FAKE_ARGS(3);
  kd_fake_dev *d = kd_fake_arg(env, argv[0]);
  double n, s;
  if (!d || kd_fake_number(env, argv[1], &n) || kd_fake_number(env, argv[2], &s)) return NULL;
  void *p = NULL;
  char err[1024];
  int r = kd_ca_malloc(d->ca, (size_t)n, (uintptr_t)s, &p, err, sizeof err);
  if (r == 1) return kd_napi_throw_msg(env, KD_ERR_CUDA_OOM, "%s", err);
  if (r != 0) return kd_napi_throw_msg(env, KD_ERR_CUDA, "%s", err);
  napi_value v;
  KD_NAPI_CALL(env, napi_create_double(env, (double)(uintptr_t)p, &v));
  return v;
}

/* fakeAllocFree(h, address) / fakeAllocRecordStream(h, address, stream) */
static napi_value kd_fake_free_js(napi_env env, napi_callback_info info) {
  KD_FAKE_ARGS(2);
  kd_fake_dev *d = kd_fake_arg(env, argv[0]);
  double a;
  if (!d || kd_fake_number(env, argv[1], &a)) return NULL;
  if (kd_ca_free(d->ca, (void *)(uintptr_t)a) != 0)
    return kd_napi_throw_msg(env, KD_ERR_INVALID_ARGUMENT, "free: pointer %.0f was not allocated here", a);
  return NULL;
}

static napi_value kd_fake_record_stream_js(napi_env env, napi_callback_info info) {
  KD_FAKE_ARGS(3);
  kd_fake_dev *d = kd_fake_arg(env, argv[0]);
  double a, s;
  if (!d || kd_fake_number(env, argv[1], &a) || kd_fake_number(env, argv[2], &s)) return NULL;
  if (kd_ca_record_stream(d->ca, (void *)(uintptr_t)a, (uintptr_t)s) != 0)
    return kd_napi_throw_msg(env, KD_ERR_INVALID_ARGUMENT, "recordStream: pointer %.0f was not allocated here", a);
  return NULL;
}

/* fakeAllocCapture(h, what, pool, stream): what 0 begin a capture of `stream` into private pool
 * `pool`, 1 end the capture of `stream`, 2 release one use of `pool`, 3 -> the pool's uses. */
static napi_value kd_fake_capture_js(napi_env env, napi_callback_info info) {
  KD_FAKE_ARGS(4);
  kd_fake_dev *d = kd_fake_arg(env, argv[0]);
  double what, pool, s;
  if (!d || kd_fake_number(env, argv[1], &what) || kd_fake_number(env, argv[2], &pool) ||
      kd_fake_number(env, argv[3], &s))
    return NULL;
  int r = 0;
  switch ((int)what) {
    case 0: r = kd_ca_begin_capture(d->ca, (uint64_t)pool, (uintptr_t)s); break;
    case 1: kd_ca_end_capture(d->ca, (uintptr_t)s); break;
    case 2: r = kd_ca_release_private_pool(d->ca, (uint64_t)pool); break;
    case 3: r = kd_ca_private_pool_uses(d->ca, (uint64_t)pool); break;
    default: r = -1;
  }
  if (r < 0) return kd_napi_throw_msg(env, KD_ERR_INVALID_ARGUMENT, "fakeAllocCapture: refused (%d)", (int)what);
  napi_value v;
  KD_NAPI_CALL(env, napi_create_double(env, (double)r, &v));
  return v;
}

static napi_value kd_fake_string(napi_env env, char *s) {
  if (!s) return kd_napi_throw_msg(env, KD_ERR_OOM, "out of memory");
  napi_value v;
  napi_status st = napi_create_string_utf8(env, s, NAPI_AUTO_LENGTH, &v);
  free(s);
  KD_NAPI_CALL(env, st);
  return v;
}

/* fakeAllocQuery(h, what): 'stats' | 'snapshot' | 'summary' (strings), 'device' (JSON of the
 * fake device's counters), 'emptyCache', 'resetPeak', 'resetAccumulated', 'processEvents'
 * (pending count), 'completeEvents' (marks every recorded event complete). */
static napi_value kd_fake_query_js(napi_env env, napi_callback_info info) {
  KD_FAKE_ARGS(2);
  kd_fake_dev *d = kd_fake_arg(env, argv[0]);
  if (!d) return NULL;
  char what[32];
  KD_NAPI_CALL(env, kd_napi_string_arg(env, argv[1], what, sizeof what));
  if (!strcmp(what, "stats")) return kd_fake_string(env, kd_ca_stats_json(d->ca));
  if (!strcmp(what, "snapshot")) return kd_fake_string(env, kd_ca_snapshot_json(d->ca));
  if (!strcmp(what, "summary")) return kd_fake_string(env, kd_ca_summary(d->ca));
  napi_value v;
  if (!strcmp(what, "device")) {
    int live = 0;
    for (kd_fake_event *e = d->events; e; e = e->next) live++;
    char buf[256];
    snprintf(buf, sizeof buf,
             "{\"mallocs\":%lld,\"frees\":%lld,\"used\":%zu,\"liveEvents\":%d,\"eventsRecorded\":%lld}",
             (long long)d->mallocs, (long long)d->frees, d->used, live, (long long)d->events_recorded);
    KD_NAPI_CALL(env, napi_create_string_utf8(env, buf, NAPI_AUTO_LENGTH, &v));
    return v;
  }
  int n = 0;
  if (!strcmp(what, "emptyCache")) kd_ca_empty_cache(d->ca);
  else if (!strcmp(what, "resetPeak")) kd_ca_reset_peak(d->ca);
  else if (!strcmp(what, "resetAccumulated")) kd_ca_reset_accumulated(d->ca);
  else if (!strcmp(what, "processEvents")) n = kd_ca_process_events(d->ca);
  else if (!strcmp(what, "completeEvents")) {
    for (kd_fake_event *e = d->events; e; e = e->next) e->done = 1;
  } else return kd_napi_throw_msg(env, KD_ERR_INVALID_ARGUMENT, "fakeAllocQuery: unknown request '%s'", what);
  KD_NAPI_CALL(env, napi_create_int32(env, n, &v));
  return v;
}

/* fakeAllocSetFraction(h, fraction) */
static napi_value kd_fake_set_fraction_js(napi_env env, napi_callback_info info) {
  KD_FAKE_ARGS(2);
  kd_fake_dev *d = kd_fake_arg(env, argv[0]);
  double f;
  if (!d || kd_fake_number(env, argv[1], &f)) return NULL;
  if (kd_ca_set_memory_fraction(d->ca, f) != 0)
    return kd_napi_throw_msg(env, KD_ERR_INVALID_ARGUMENT, "Invalid fraction value: %g. It should be in [0, 1]", f);
  return NULL;
}

/* fakeAllocParseConf(conf) -> {maxSplitSize, gcThreshold} (maxSplitSize -1: unlimited) */
static napi_value kd_fake_parse_conf_js(napi_env env, napi_callback_info info) {
  KD_FAKE_ARGS(1);
  char conf[256], err[256];
  KD_NAPI_CALL(env, kd_napi_string_arg(env, argv[0], conf, sizeof conf));
  kd_ca_config cfg;
  if (kd_ca_parse_conf(conf, &cfg, err, sizeof err) != 0) return kd_napi_throw_msg(env, KD_ERR_INVALID_ARGUMENT, "%s", err);
  napi_value r, v;
  KD_NAPI_CALL(env, napi_create_object(env, &r));
  KD_NAPI_CALL(env, napi_create_double(env, cfg.max_split_size == SIZE_MAX ? -1.0 : (double)cfg.max_split_size, &v));
  KD_NAPI_CALL(env, napi_set_named_property(env, r, "maxSplitSize", v));
  KD_NAPI_CALL(env, napi_create_double(env, cfg.gc_threshold, &v));
  KD_NAPI_CALL(env, napi_set_named_property(env, r, "gcThreshold", v));
  return r;
}

napi_status kd_napi_register_cuda_alloc_fake(napi_env env, napi_value cuda) {
  static const struct {
    const char *name;
    napi_callback cb;
  } fns[] = {
      {"fakeAllocCreate", kd_fake_create},           {"fakeAllocMalloc", kd_fake_malloc_js},
      {"fakeAllocFree", kd_fake_free_js},             {"fakeAllocRecordStream", kd_fake_record_stream_js},
      {"fakeAllocQuery", kd_fake_query_js},           {"fakeAllocSetFraction", kd_fake_set_fraction_js},
      {"fakeAllocParseConf", kd_fake_parse_conf_js}, {"fakeAllocCapture", kd_fake_capture_js},
  };
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
    napi_status st = kd_napi_set_fn(env, cuda, fns[i].name, fns[i].cb, NULL);
    if (st != napi_ok) return st;
  }
  return napi_ok;
}
