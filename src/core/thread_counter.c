/* thread_counter.c - linking threads' parts of counters, summing them, and folding the part of
 * a thread that exits into its counter. */
#include "core/thread_counter.h"

#include <stddef.h>

/* Note [Counters per thread]
 * kd.memory() reports the live tensors and the bytes of small storages; counting them with a
 * locked add at every creation and release cost about 20 cycles each, four times on the path of
 * a 1-element op (its result's tensor and storage, made and freed). So each thread counts in
 * its own part, a _Thread_local of the counting file (no extra thread-local lookup: the file
 * reads its struct cache there already), with a plain store; a reader sums the parts under the
 * family's lock. A part is linked into its family at its thread's first count; when the thread
 * exits, a thread-specific key's destructor folds its parts into the families' `retired` and
 * unlinks them, before the thread's _Thread_local memory goes. A tensor made on one thread and
 * freed on another counts +1 on the first and -1 on the second: only the sum means anything. */

static pthread_once_t kd_counter_key_once = PTHREAD_ONCE_INIT;
static pthread_key_t kd_counter_key;
static bool kd_counter_key_ok;
static _Thread_local kd_thread_counter *kd_thread_parts; /* this thread's linked parts */

static void kd_thread_counters_exit(void *head) {
  kd_thread_counter *c = *(kd_thread_counter **)head;
  for (; c; c = c->thread_next) {
    kd_counter_family *f = c->family;
    pthread_mutex_lock(&f->lock);
    __atomic_fetch_add(&f->retired, c->value, __ATOMIC_RELAXED);
    for (kd_thread_counter **p = &f->threads; *p; p = &(*p)->next)
      if (*p == c) {
        *p = c->next;
        break;
      }
    pthread_mutex_unlock(&f->lock);
    c->linked = false;
  }
  *(kd_thread_counter **)head = NULL;
}

static void kd_counter_key_init(void) { kd_counter_key_ok = pthread_key_create(&kd_counter_key, kd_thread_counters_exit) == 0; }

void kd_thread_counter_add_first(kd_counter_family *f, kd_thread_counter *c, int64_t delta) {
  pthread_once(&kd_counter_key_once, kd_counter_key_init);
  if (!kd_counter_key_ok) { /* no key, so no folding at exit: count in the family itself */
    __atomic_fetch_add(&f->retired, delta, __ATOMIC_RELAXED);
    return;
  }
  pthread_mutex_lock(&f->lock);
  c->family = f;
  c->value = delta;
  c->next = f->threads;
  f->threads = c;
  pthread_mutex_unlock(&f->lock);
  c->thread_next = kd_thread_parts;
  kd_thread_parts = c;
  c->linked = true;
  /* the key's value points at the list head, so that parts linked later are folded too */
  pthread_setspecific(kd_counter_key, &kd_thread_parts);
}

int64_t kd_counter_family_sum(kd_counter_family *f) {
  pthread_mutex_lock(&f->lock);
  int64_t sum = __atomic_load_n(&f->retired, __ATOMIC_RELAXED);
  for (kd_thread_counter *c = f->threads; c; c = c->next) sum += __atomic_load_n(&c->value, __ATOMIC_RELAXED);
  pthread_mutex_unlock(&f->lock);
  return sum;
}
