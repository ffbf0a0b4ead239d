/* cuda_async.c - Promises that wait for the GPU, for the async functions of napi/cuda.c
 * (synchronizeAsync, eventSynchronizeAsync, tensorDataAsync).
 *
 * Note [CUDA async completion]
 * A Promise that waits for the GPU (synchronize, event/stream synchronize, tensor data) is a
 * kd_cuda_job: the work is enqueued, then a host function (cudaLaunchHostFunc) is enqueued
 * behind it; when the GPU reaches it, a CUDA-internal thread calls kd_cuda_job_fire, which only
 * queues the job on this environment's napi_threadsafe_function. The main thread then resolves
 * the Promise (for data: copies the pinned buffer into a new ArrayBuffer). No libuv worker and
 * no JS thread ever waits on the GPU. The threadsafe function is unref'd while no job is
 * pending, so it never keeps the process alive by itself.
 *
 * Note [Jobs of a faulted device]
 * After a device fault (an illegal address, a trap: a sticky error) CUDA runs no further work of
 * the device, host functions included, so a job behind the fault would never fire: its Promise
 * would never settle and, its threadsafe function being ref'd, the process would never exit.
 * While jobs are in flight, a watcher thread of the environment asks each of their devices
 * every 20 ms whether it has faulted (cudaStreamQuery of the legacy stream: it waits for
 * nothing and returns the sticky error); the jobs of a faulted device are rejected with that
 * error. A job is settled once: the host function and the watcher race for it with a
 * compare-and-swap of its state, and the loser leaves it alone. A job taken by the watcher is
 * not freed (its tensor and pinned buffer are): its host function may still be running on a
 * CUDA thread and read its state; a few dozen bytes per job of a dead device stay allocated.
 * The watcher sleeps while no job is in flight; it adds no latency to completions (those come
 * from the host function) and no work to the GPU. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_bridge/bridge.h"
#include "cuda_bridge/deferred_check.h"
#include "napi/cuda_async.h"
#include "../../cuda/kd_cuda_api.h"

enum { KD_JOB_QUEUED = 0, KD_JOB_FIRED = 1, KD_JOB_FAULTED = 2 };
enum { KD_WATCH_PERIOD_MS = 20, KD_WATCH_DEVICES = 64 };

struct kd_cuda_async {
  napi_threadsafe_function tsfn;
  int pending; /* jobs not yet settled (main thread only) */
  pthread_mutex_t mu;
  pthread_cond_t wake;
  kd_cuda_job *head; /* jobs in flight (under mu) */
  int watcher_started, stop;
  pthread_t watcher;
};

/* Whether this call moved the job from QUEUED to `to` (it then settles the job). */
static int kd_cuda_job_claim(kd_cuda_job *j, int to) {
  int expected = KD_JOB_QUEUED;
  return __atomic_compare_exchange_n(&j->state, &expected, to, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

void kd_cuda_job_fire(void *user) {
  kd_cuda_job *j = (kd_cuda_job *)user;
  if (!kd_cuda_job_claim(j, KD_JOB_FIRED)) return; /* the watcher rejected it: its device faulted */
  /* Nonblocking: a full queue is impossible (unbounded); a closing one means the environment
   * is gone, and the job is dropped. */
  (void)napi_call_threadsafe_function(j->ctx->tsfn, j, napi_tsfn_nonblocking);
}

/* Gives back the job's tensor and pinned buffer; frees the job itself unless the watcher took it
 * (Note [Jobs of a faulted device]). */
static void kd_cuda_job_free(kd_cuda_job *j) {
  const kd_cuda_api *api = NULL;
  if (j->pinned && kd_cuda_api_get(&api) == KD_OK) api->host_free(j->pinned);
  j->pinned = NULL;
  if (j->keep) kd_tensor_release(j->keep);
  j->keep = NULL;
  if (__atomic_load_n(&j->state, __ATOMIC_ACQUIRE) != KD_JOB_FAULTED) free(j);
}

static void kd_cuda_job_unlink(kd_cuda_async *ctx, kd_cuda_job *j) {
  pthread_mutex_lock(&ctx->mu);
  if (j->prev) j->prev->next = j->next;
  else if (ctx->head == j) ctx->head = j->next;
  if (j->next) j->next->prev = j->prev;
  j->prev = j->next = NULL;
  pthread_mutex_unlock(&ctx->mu);
}

/* The main thread settles a job: fired (its work is done, or an earlier error is now known) or
 * taken by the watcher (its device faulted). */
static void kd_cuda_job_call_js(napi_env env, napi_value js_cb, void *context, void *data) {
  (void)js_cb;
  kd_cuda_job *j = (kd_cuda_job *)data;
  kd_cuda_async *ctx = (kd_cuda_async *)context;
  kd_cuda_job_unlink(ctx, j);
  if (!env) { /* environment teardown */
    kd_cuda_job_free(j);
    return;
  }
  if (--ctx->pending == 0) napi_unref_threadsafe_function(env, ctx->tsfn);
  const kd_cuda_api *api = NULL;
  kd_status st = kd_cuda_api_get(&api);
  if (st == KD_OK) {
    int cs = api->peek_error(j->device);
    if (cs != KD_CUDA_OK) st = kd_cuda_status_error(cs);
    else if (__atomic_load_n(&j->state, __ATOMIC_ACQUIRE) == KD_JOB_FAULTED)
      st = kd_error(KD_ERR_CUDA, "CUDA error: device %d faulted before this work completed", j->device);
    else st = kd_cuda_deferred_take(j->device); /* a sync point (Note [Deferred index errors]) */
  }
  napi_value result = NULL;
  if (st == KD_OK && j->want_buffer) {
    void *bytes = NULL;
    if (napi_create_arraybuffer(env, j->nbytes, &bytes, &result) == napi_ok) {
      if (j->nbytes) memcpy(bytes, j->pinned, j->nbytes);
    } else {
      result = NULL;
    }
  } else if (st == KD_OK) {
    napi_get_undefined(env, &result);
  }
  if (result) {
    napi_resolve_deferred(env, j->deferred, result);
  } else {
    napi_value err = NULL;
    if (st == KD_OK) st = kd_error(KD_ERR_OOM, "out of memory creating the ArrayBuffer");
    kd_napi_throw(env, st);
    napi_get_and_clear_last_exception(env, &err);
    napi_reject_deferred(env, j->deferred, err);
  }
  kd_cuda_job_free(j);
}

/* The watcher (Note [Jobs of a faulted device]). */
static void *kd_cuda_watch(void *arg) {
  kd_cuda_async *ctx = (kd_cuda_async *)arg;
  const kd_cuda_api *api = NULL;
  if (kd_cuda_api_get(&api) != KD_OK) return NULL;
  pthread_mutex_lock(&ctx->mu);
  while (!ctx->stop) {
    if (!ctx->head) {
      pthread_cond_wait(&ctx->wake, &ctx->mu);
      continue;
    }
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += KD_WATCH_PERIOD_MS * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
      until.tv_sec++;
      until.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&ctx->wake, &ctx->mu, &until);
    if (ctx->stop) break;
    uint64_t devices = 0;
    for (kd_cuda_job *j = ctx->head; j; j = j->next)
      if (j->device >= 0 && j->device < KD_WATCH_DEVICES) devices |= (uint64_t)1 << j->device;
    pthread_mutex_unlock(&ctx->mu);
    uint64_t faulted = 0;
    for (int d = 0; d < KD_WATCH_DEVICES; d++) {
      if (!(devices >> d & 1)) continue;
      int done = 0;
      if (api->stream_query(d, 0, &done) != KD_CUDA_OK) faulted |= (uint64_t)1 << d;
    }
    pthread_mutex_lock(&ctx->mu);
    if (!faulted) continue;
    for (kd_cuda_job *j = ctx->head; j; j = j->next) {
      if (j->device < 0 || j->device >= KD_WATCH_DEVICES || !(faulted >> j->device & 1)) continue;
      if (kd_cuda_job_claim(j, KD_JOB_FAULTED)) (void)napi_call_threadsafe_function(ctx->tsfn, j, napi_tsfn_nonblocking);
    }
  }
  pthread_mutex_unlock(&ctx->mu);
  return NULL;
}

kd_cuda_job *kd_cuda_job_new(napi_env env, kd_cuda_async *ctx, int device, napi_value *promise) {
  kd_cuda_job *j = (kd_cuda_job *)calloc(1, sizeof *j);
  if (!j) {
    kd_napi_throw_msg(env, KD_ERR_OOM, "out of memory");
    return NULL;
  }
  j->ctx = ctx;
  j->device = device;
  j->state = KD_JOB_QUEUED;
  if (napi_create_promise(env, &j->deferred, promise) != napi_ok) {
    free(j);
    kd_napi_throw_last(env, napi_generic_failure);
    return NULL;
  }
  return j;
}

void kd_cuda_job_started(napi_env env, kd_cuda_job *j) {
  kd_cuda_async *ctx = j->ctx;
  if (ctx->pending++ == 0) napi_ref_threadsafe_function(env, ctx->tsfn);
  pthread_mutex_lock(&ctx->mu);
  j->next = ctx->head;
  if (ctx->head) ctx->head->prev = j;
  ctx->head = j;
  /* without a watcher (a thread cannot be made), jobs still settle when they fire */
  if (!ctx->watcher_started && pthread_create(&ctx->watcher, NULL, kd_cuda_watch, ctx) == 0) ctx->watcher_started = 1;
  pthread_cond_signal(&ctx->wake);
  pthread_mutex_unlock(&ctx->mu);
}

napi_value kd_cuda_job_fail(napi_env env, kd_cuda_job *j, kd_status st, napi_value promise) {
  napi_value err = NULL;
  kd_napi_throw(env, st);
  napi_get_and_clear_last_exception(env, &err);
  napi_reject_deferred(env, j->deferred, err);
  kd_cuda_job_free(j);
  return promise;
}

/* Environment teardown: the watcher stops (jobs still in flight are freed by the threadsafe
 * function's teardown calls). The context itself stays: the functions' data points at it. */
static void kd_cuda_async_cleanup(void *arg) {
  kd_cuda_async *ctx = (kd_cuda_async *)arg;
  pthread_mutex_lock(&ctx->mu);
  ctx->stop = 1;
  pthread_cond_signal(&ctx->wake);
  int started = ctx->watcher_started;
  pthread_mutex_unlock(&ctx->mu);
  if (started) pthread_join(ctx->watcher, NULL);
}

kd_cuda_async *kd_cuda_async_create(napi_env env) {
  kd_cuda_async *ctx = (kd_cuda_async *)calloc(1, sizeof *ctx); /* lives as long as the process */
  if (!ctx) return NULL;
  pthread_mutex_init(&ctx->mu, NULL);
  pthread_cond_init(&ctx->wake, NULL);
  napi_value name;
  if (napi_create_string_utf8(env, "kindling.cuda", NAPI_AUTO_LENGTH, &name) != napi_ok ||
      napi_create_threadsafe_function(env, NULL, NULL, name, 0, 1, NULL, NULL, ctx, kd_cuda_job_call_js, &ctx->tsfn) != napi_ok ||
      napi_unref_threadsafe_function(env, ctx->tsfn) != napi_ok ||
      napi_add_env_cleanup_hook(env, kd_cuda_async_cleanup, ctx) != napi_ok)
    return NULL;
  return ctx;
}
