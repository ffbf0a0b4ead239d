/* parallel.c - a small fixed thread pool for kd_parallel_for.
 *
 * Note [Thread pool: spin, then sleep]
 * One job at a time, in a static slot. The caller that wins the `busy` flag writes the job
 * (fn, ctx, range, chunk size), opens it by making the sequence number odd, works on chunks
 * itself, closes it (sequence even again) and waits until no worker is inside it. A caller that
 * finds the pool busy (a nested call, or a second thread) runs its range inline.
 *
 * Waking a sleeping thread costs tens of microseconds (a futex wake plus the scheduler), as
 * much as the whole of an in-cache add or sum, so idle workers first spin on the sequence
 * number for KINDLING_SPIN_US microseconds (default 200, 0 = never) and only then sleep on a
 * condition variable; ops issued back to back from JS then find the workers awake, as with
 * OpenMP's default wait policy that PyTorch uses. The caller's wait for the workers likewise
 * spins briefly before sleeping, so an oversubscribed machine does not burn the core a
 * descheduled worker needs.
 *
 * Joining is lock-free: a worker that sees an open job counts itself in `active`, then checks
 * that the same job is still open; if not, it leaves without reading the slot. The caller
 * closes the job before it waits for active == 0, so once it returns no worker can read the
 * slot until the next job is written and opened (release/acquire on the sequence number).
 * The sleep/wake handshakes are Dekker-style: each side stores its flag, then reads the other's
 * (sequentially consistent), so one of them always sees the other and no wake-up is lost. */
#include "core/parallel.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define KD_MAX_THREADS 256
#define KD_SEQ __ATOMIC_SEQ_CST

#if defined(__x86_64__) || defined(__i386__)
#define kd_cpu_relax() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define kd_cpu_relax() __asm__ __volatile__("yield")
#else
#define kd_cpu_relax() ((void)0)
#endif

typedef struct kd_job {
  kd_parallel_fn fn;
  void *ctx;
  int64_t end, chunk;
  int64_t next; /* next chunk start (atomic) */
} kd_job;

static kd_job kd_job_slot;
static uint64_t kd_pool_seq;      /* odd: kd_job_slot is open (atomic) */
static int kd_pool_active;        /* workers inside the open job, or backing out (atomic) */
static int kd_pool_busy;          /* a caller owns the slot (atomic) */
static int kd_pool_num_threads;   /* configured total, callers included; 0 = not yet read (atomic) */
static int kd_pool_threads_started; /* workers alive; written only by the slot's owner */
static int64_t kd_pool_spin_ns = -1; /* how long idle threads spin before sleeping (atomic) */

static pthread_mutex_t kd_pool_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t kd_pool_wake = PTHREAD_COND_INITIALIZER; /* a job was opened */
static pthread_cond_t kd_pool_done = PTHREAD_COND_INITIALIZER; /* active reached 0 */
static int kd_pool_sleepers;      /* workers asleep (or about to be) on kd_pool_wake (atomic) */
static int kd_pool_caller_waits;  /* the caller sleeps on kd_pool_done (atomic) */
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
  int n = __atomic_load_n(&kd_pool_num_threads, __ATOMIC_RELAXED);
  if (n) return n;
  n = kd_default_threads();
  int zero = 0; /* a concurrent kd_set_num_threads wins */
  if (!__atomic_compare_exchange_n(&kd_pool_num_threads, &zero, n, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return zero;
  return n;
}

void kd_set_num_threads(int n) {
  if (n < 1) n = 1;
  if (n > KD_MAX_THREADS) n = KD_MAX_THREADS;
  __atomic_store_n(&kd_pool_num_threads, n, __ATOMIC_RELAXED); /* extra started workers stay idle */
}

static int64_t kd_spin_ns(void) {
  int64_t ns = __atomic_load_n(&kd_pool_spin_ns, __ATOMIC_RELAXED);
  if (ns >= 0) return ns;
  const char *env = getenv("KINDLING_SPIN_US");
  long us = env && *env ? atol(env) : 200;
  ns = us < 0 ? 0 : (int64_t)us * 1000;
  __atomic_store_n(&kd_pool_spin_ns, ns, __ATOMIC_RELAXED);
  return ns;
}

static int64_t kd_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Spins for up to the spin budget until done(arg) holds; returns whether it did. */
static bool kd_spin_until(bool (*done)(const void *), const void *arg) {
  int64_t budget = kd_spin_ns();
  if (budget <= 0) return done(arg);
  int64_t deadline = 0;
  for (unsigned i = 0;; i++) {
    if (done(arg)) return true;
    kd_cpu_relax();
    if ((i & 63) == 63) {
      int64_t now = kd_now_ns();
      if (!deadline) deadline = now + budget;
      else if (now >= deadline) return false;
    }
  }
}

static void kd_run_chunks(kd_job *j) {
  for (;;) {
    int64_t b = __atomic_fetch_add(&j->next, j->chunk, __ATOMIC_RELAXED);
    if (b >= j->end) break;
    j->fn(j->ctx, b, b + j->chunk < j->end ? b + j->chunk : j->end);
  }
}

/* ---- workers ---- */

static bool kd_new_job_open(const void *seen) {
  uint64_t s = __atomic_load_n(&kd_pool_seq, __ATOMIC_ACQUIRE);
  return (s & 1) && s != *(const uint64_t *)seen;
}

/* Waits for a job other than `seen` to be opened; returns its sequence number. */
static uint64_t kd_wait_for_job(uint64_t seen) {
  if (!kd_spin_until(kd_new_job_open, &seen)) {
    pthread_mutex_lock(&kd_pool_mu);
    __atomic_add_fetch(&kd_pool_sleepers, 1, KD_SEQ);
    while (!kd_new_job_open(&seen)) pthread_cond_wait(&kd_pool_wake, &kd_pool_mu);
    __atomic_sub_fetch(&kd_pool_sleepers, 1, KD_SEQ);
    pthread_mutex_unlock(&kd_pool_mu);
  }
  return __atomic_load_n(&kd_pool_seq, __ATOMIC_ACQUIRE);
}

static void *kd_worker_main(void *arg) {
  uint64_t seen = (uint64_t)(uintptr_t)arg; /* the last job before this worker existed */
  for (;;) {
    uint64_t s = kd_wait_for_job(seen);
    if (!(s & 1)) continue; /* closed again already */
    seen = s;
    __atomic_add_fetch(&kd_pool_active, 1, KD_SEQ);
    if (__atomic_load_n(&kd_pool_seq, KD_SEQ) == s) kd_run_chunks(&kd_job_slot);
    if (__atomic_sub_fetch(&kd_pool_active, 1, KD_SEQ) == 0 && __atomic_load_n(&kd_pool_caller_waits, KD_SEQ)) {
      pthread_mutex_lock(&kd_pool_mu);
      pthread_cond_broadcast(&kd_pool_done);
      pthread_mutex_unlock(&kd_pool_mu);
    }
  }
  return NULL;
}

/* ---- the caller ---- */

static bool kd_no_worker_active(const void *unused) {
  (void)unused;
  return __atomic_load_n(&kd_pool_active, __ATOMIC_ACQUIRE) == 0;
}

void kd_parallel_for(int64_t begin, int64_t end, int64_t grain, kd_parallel_fn fn, void *ctx) {
  if (end <= begin) return;
  if (grain < 1) grain = 1;
  int64_t n = end - begin;
  int threads = kd_get_num_threads();
  if (threads <= 1 || n <= grain || kd_thread_inline) { fn(ctx, begin, end); return; }

  int idle = 0;
  if (!__atomic_compare_exchange_n(&kd_pool_busy, &idle, 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
    fn(ctx, begin, end); /* nested or concurrent: inline */
    return;
  }
  uint64_t seq = __atomic_load_n(&kd_pool_seq, __ATOMIC_RELAXED); /* even: closed */
  while (kd_pool_threads_started < threads - 1) {
    pthread_t th;
    if (pthread_create(&th, NULL, kd_worker_main, (void *)(uintptr_t)seq) != 0) break;
    pthread_detach(th);
    kd_pool_threads_started++;
  }
  int workers = kd_pool_threads_started < threads - 1 ? kd_pool_threads_started : threads - 1;
  if (workers == 0) { /* no thread could be started */
    __atomic_store_n(&kd_pool_busy, 0, __ATOMIC_RELEASE);
    fn(ctx, begin, end);
    return;
  }
  int64_t nchunks = n / grain < (workers + 1) * 4 ? n / grain : (workers + 1) * 4;
  if (nchunks < 1) nchunks = 1;
  kd_job *j = &kd_job_slot;
  j->fn = fn;
  j->ctx = ctx;
  j->end = end;
  j->chunk = (n + nchunks - 1) / nchunks;
  j->next = begin;
  __atomic_store_n(&kd_pool_seq, seq + 1, KD_SEQ); /* open */
  if (__atomic_load_n(&kd_pool_sleepers, KD_SEQ) > 0) {
    pthread_mutex_lock(&kd_pool_mu);
    pthread_cond_broadcast(&kd_pool_wake);
    pthread_mutex_unlock(&kd_pool_mu);
  }

  kd_run_chunks(j);

  __atomic_store_n(&kd_pool_seq, seq + 2, KD_SEQ); /* closed: no worker joins from now on */
  if (!kd_spin_until(kd_no_worker_active, NULL)) {
    pthread_mutex_lock(&kd_pool_mu);
    __atomic_store_n(&kd_pool_caller_waits, 1, KD_SEQ);
    while (__atomic_load_n(&kd_pool_active, KD_SEQ) > 0) pthread_cond_wait(&kd_pool_done, &kd_pool_mu);
    __atomic_store_n(&kd_pool_caller_waits, 0, KD_SEQ);
    pthread_mutex_unlock(&kd_pool_mu);
  }
  __atomic_store_n(&kd_pool_busy, 0, __ATOMIC_RELEASE);
}
