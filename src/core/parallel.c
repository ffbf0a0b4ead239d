/* parallel.c - a small fixed thread pool for kd_parallel_for.
 * One job at a time: the caller publishes (fn, ctx, range, chunk size), wakes the workers,
 * works on chunks itself, then waits until every chunk is done. A caller that finds the pool
 * busy (nested call, or a second Node thread) runs its range inline. */
#include "core/parallel.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#define KD_MAX_THREADS 256

static pthread_mutex_t kd_pool_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t kd_pool_wake = PTHREAD_COND_INITIALIZER;
static pthread_cond_t kd_pool_done = PTHREAD_COND_INITIALIZER;
static int kd_pool_threads_started; /* workers alive (excluding callers) */
static int kd_pool_num_threads;     /* configured total, callers included */
static bool kd_pool_busy;
static uint64_t kd_pool_generation;

/* A job lives on the caller's stack. Workers take a pointer to it under the mutex and count
 * themselves in `active`; the caller unpublishes it under the mutex and waits for active == 0
 * before returning, so no worker can touch a job that is gone. */
typedef struct kd_job {
  kd_parallel_fn fn;
  void *ctx;
  int64_t end, chunk;
  int64_t next; /* next chunk start (atomic) */
  int active;   /* workers inside the job (under mu) */
} kd_job;
static kd_job *kd_current_job;
static _Thread_local bool kd_thread_inline; /* see kd_parallel_set_thread_inline */

void kd_parallel_set_thread_inline(bool on) { kd_thread_inline = on; }

static int kd_default_threads(void) {
  const char *env = getenv("KINDLING_NUM_THREADS");
  int n = env ? atoi(env) : 0;
  if (n <= 0) {
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    n = c > 0 ? (int)c : 1;
  }
  return n > KD_MAX_THREADS ? KD_MAX_THREADS : n;
}

int kd_get_num_threads(void) {
  pthread_mutex_lock(&kd_pool_mu);
  if (!kd_pool_num_threads) kd_pool_num_threads = kd_default_threads();
  int n = kd_pool_num_threads;
  pthread_mutex_unlock(&kd_pool_mu);
  return n;
}

void kd_set_num_threads(int n) {
  if (n < 1) n = 1;
  if (n > KD_MAX_THREADS) n = KD_MAX_THREADS;
  pthread_mutex_lock(&kd_pool_mu);
  kd_pool_num_threads = n; /* extra started workers simply stay idle */
  pthread_mutex_unlock(&kd_pool_mu);
}

static void kd_run_chunks(kd_job *j) {
  for (;;) {
    int64_t b = __atomic_fetch_add(&j->next, j->chunk, __ATOMIC_RELAXED);
    if (b >= j->end) break;
    j->fn(j->ctx, b, b + j->chunk < j->end ? b + j->chunk : j->end);
  }
}

static void *kd_worker_main(void *arg) {
  (void)arg;
  uint64_t seen = 0;
  pthread_mutex_lock(&kd_pool_mu);
  for (;;) {
    while (kd_pool_generation == seen) pthread_cond_wait(&kd_pool_wake, &kd_pool_mu);
    seen = kd_pool_generation;
    kd_job *j = kd_current_job;
    if (!j) continue;
    j->active++;
    pthread_mutex_unlock(&kd_pool_mu);
    kd_run_chunks(j);
    pthread_mutex_lock(&kd_pool_mu);
    if (--j->active == 0) pthread_cond_broadcast(&kd_pool_done);
  }
  return NULL;
}

void kd_parallel_for(int64_t begin, int64_t end, int64_t grain, kd_parallel_fn fn, void *ctx) {
  if (end <= begin) return;
  if (grain < 1) grain = 1;
  int64_t n = end - begin;
  int threads = kd_get_num_threads();
  if (threads <= 1 || n <= grain || kd_thread_inline) { fn(ctx, begin, end); return; }

  pthread_mutex_lock(&kd_pool_mu);
  if (kd_pool_busy) { /* nested or concurrent: inline */
    pthread_mutex_unlock(&kd_pool_mu);
    fn(ctx, begin, end);
    return;
  }
  kd_pool_busy = true;
  while (kd_pool_threads_started < threads - 1) {
    pthread_t th;
    if (pthread_create(&th, NULL, kd_worker_main, NULL) != 0) break;
    pthread_detach(th);
    kd_pool_threads_started++;
  }
  int workers = kd_pool_threads_started < threads - 1 ? kd_pool_threads_started : threads - 1;
  int64_t nchunks = n / grain < (workers + 1) * 4 ? n / grain : (workers + 1) * 4;
  if (nchunks < 1) nchunks = 1;
  kd_job j;
  j.fn = fn;
  j.ctx = ctx;
  j.end = end;
  j.chunk = (n + nchunks - 1) / nchunks;
  j.next = begin;
  j.active = 0;
  kd_current_job = &j;
  kd_pool_generation++;
  pthread_cond_broadcast(&kd_pool_wake);
  pthread_mutex_unlock(&kd_pool_mu);

  kd_run_chunks(&j);

  pthread_mutex_lock(&kd_pool_mu);
  kd_current_job = NULL; /* no worker joins from now on */
  while (j.active > 0) pthread_cond_wait(&kd_pool_done, &kd_pool_mu);
  kd_pool_busy = false;
  pthread_mutex_unlock(&kd_pool_mu);
}
