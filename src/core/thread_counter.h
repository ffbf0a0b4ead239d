/* thread_counter.h - counters that each thread adds to without an atomic read-modify-write and
 * that are summed over the threads when read (See Note [Counters per thread] in thread_counter.c). */
#ifndef KD_THREAD_COUNTER_H
#define KD_THREAD_COUNTER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct kd_counter_family;

/* One thread's part of a counter: a _Thread_local of the file that counts. */
typedef struct kd_thread_counter {
  int64_t value;                          /* written by its thread only */
  bool linked;                            /* in its family's list */
  struct kd_counter_family *family;
  struct kd_thread_counter *next;         /* in the family's list */
  struct kd_thread_counter *thread_next;  /* in its thread's list (unlinked at thread exit) */
} kd_thread_counter;

/* A counter: the parts of the running threads, and what exited threads left. */
typedef struct kd_counter_family {
  pthread_mutex_t lock;
  kd_thread_counter *threads;
  int64_t retired;
} kd_counter_family;

/* Keeps a computed value (a _Thread_local's address) in a register: GCC would otherwise look the
 * address up again at each use, one __tls_get_addr call each in a shared library. */
#define KD_KEEP_IN_REGISTER(x) __asm__("" : "+r"(x))

#define KD_COUNTER_FAMILY_INIT {PTHREAD_MUTEX_INITIALIZER, NULL, 0}

/* The first count of a thread: links its part into the family, then adds. */
void kd_thread_counter_add_first(kd_counter_family *f, kd_thread_counter *c, int64_t delta);

static inline void kd_thread_counter_add(kd_counter_family *f, kd_thread_counter *c, int64_t delta) {
  if (__builtin_expect(!c->linked, 0)) {
    kd_thread_counter_add_first(f, c, delta);
    return;
  }
  __atomic_store_n(&c->value, c->value + delta, __ATOMIC_RELAXED);
}

/* The counter's value: the sum over every thread's part (takes the family's lock). */
int64_t kd_counter_family_sum(kd_counter_family *f);

#endif
