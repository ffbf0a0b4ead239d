/* alloc_host.c - caching host allocator.
 *
 * Note [Host caching policy]
 * Every CPU storage is allocated here. Requests are rounded up to a size class: multiples of
 * 64 bytes up to 1 KiB, then 8 classes per power of two (at most 12.5% slack). A freed block
 * goes onto its class's free list (the list link lives in the block itself) and the next
 * request of that class takes it back: a 64 MiB temporary freed and asked for again costs no
 * page faults and no mmap/munmap, which is what makes "a + b into a new tensor" run at
 * memory bandwidth in a loop. The cache is bounded (KINDLING_HOST_CACHE_MB, default 2048):
 * a free that would exceed the bound returns the block to the system instead, and an
 * allocation the system refuses first empties the cache and retries, then fails with
 * KD_ERR_OOM. kd_host_alloc_empty_cache() gives everything back. One mutex guards the lists;
 * the system calls happen outside it.
 */
#include "core/alloc_host.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#define KD_HOST_ALIGN 64
#define KD_HOST_SMALL_LIMIT 1024
#define KD_HOST_NUM_CLASSES (16 + 54 * 8)

typedef struct kd_free_block { struct kd_free_block *next; } kd_free_block;

static pthread_mutex_t kd_host_mu = PTHREAD_MUTEX_INITIALIZER;
static kd_free_block *kd_host_lists[KD_HOST_NUM_CLASSES];
static kd_host_alloc_stats kd_host_stats;
static int64_t kd_host_cache_limit = -1;

/* Size class of a request and the rounded size it is served with. */
static int kd_host_class(size_t n, size_t *rounded) {
  if (n == 0) n = 1;
  if (n <= KD_HOST_SMALL_LIMIT) {
    size_t r = (n + KD_HOST_ALIGN - 1) & ~(size_t)(KD_HOST_ALIGN - 1);
    *rounded = r;
    return (int)(r / KD_HOST_ALIGN) - 1;
  }
  int p = 64 - __builtin_clzll((unsigned long long)(n - 1)); /* 2^(p-1) < n <= 2^p, p >= 11 */
  size_t step = (size_t)1 << (p - 4);
  size_t r = (n + step - 1) / step * step; /* 2^(p-1) < r <= 2^p: r / step in {9..16} */
  *rounded = r;
  int cls = 16 + (p - 11) * 8 + (int)(r / step) - 9;
  return cls < KD_HOST_NUM_CLASSES ? cls : -1; /* -1: too large to cache */
}

static int64_t kd_host_limit(void) {
  if (kd_host_cache_limit < 0) {
    const char *env = getenv("KINDLING_HOST_CACHE_MB");
    long long mb = env ? atoll(env) : 2048;
    kd_host_cache_limit = (mb < 0 ? 0 : mb) * 1024 * 1024;
  }
  return kd_host_cache_limit;
}

/* Stats for a block handed out (under kd_host_mu). */
static void kd_host_note_alloc(size_t rounded) {
  kd_host_stats.allocated_bytes += (int64_t)rounded;
  if (kd_host_stats.allocated_bytes > kd_host_stats.peak_allocated_bytes)
    kd_host_stats.peak_allocated_bytes = kd_host_stats.allocated_bytes;
}

kd_status kd_host_alloc(size_t nbytes, void **out) {
  size_t rounded;
  int cls = kd_host_class(nbytes, &rounded);
  if (cls < 0 || nbytes > ((size_t)1 << 50))
    return kd_error(KD_ERR_OOM, "cannot allocate %zu bytes of host memory: request too large", nbytes);
  void *p = NULL;
  pthread_mutex_lock(&kd_host_mu);
  kd_host_stats.num_allocs++;
  kd_free_block *b = kd_host_lists[cls];
  if (b) { /* cache hit: one critical section */
    kd_host_lists[cls] = b->next;
    kd_host_stats.cached_bytes -= (int64_t)rounded;
    kd_host_stats.num_cache_hits++;
    kd_host_note_alloc(rounded);
    pthread_mutex_unlock(&kd_host_mu);
    *out = b;
    return KD_OK;
  }
  pthread_mutex_unlock(&kd_host_mu);
  p = aligned_alloc(KD_HOST_ALIGN, rounded);
  if (!p) {
    kd_host_alloc_empty_cache();
    p = aligned_alloc(KD_HOST_ALIGN, rounded);
  }
  if (!p) return kd_error(KD_ERR_OOM, "out of host memory: failed to allocate %zu bytes", nbytes);
  pthread_mutex_lock(&kd_host_mu);
  kd_host_note_alloc(rounded);
  pthread_mutex_unlock(&kd_host_mu);
  *out = p;
  return KD_OK;
}

void kd_host_free(void *ptr, size_t nbytes) {
  if (!ptr) return;
  size_t rounded;
  int cls = kd_host_class(nbytes, &rounded);
  bool cached = false;
  pthread_mutex_lock(&kd_host_mu);
  kd_host_stats.allocated_bytes -= (int64_t)rounded;
  if (cls >= 0 && kd_host_stats.cached_bytes + (int64_t)rounded <= kd_host_limit()) {
    kd_free_block *b = (kd_free_block *)ptr;
    b->next = kd_host_lists[cls];
    kd_host_lists[cls] = b;
    kd_host_stats.cached_bytes += (int64_t)rounded;
    cached = true;
  }
  pthread_mutex_unlock(&kd_host_mu);
  if (!cached) free(ptr);
}

void kd_host_alloc_get_stats(kd_host_alloc_stats *out) {
  pthread_mutex_lock(&kd_host_mu);
  *out = kd_host_stats;
  pthread_mutex_unlock(&kd_host_mu);
}

void kd_host_alloc_empty_cache(void) {
  kd_free_block *all = NULL;
  pthread_mutex_lock(&kd_host_mu);
  for (int c = 0; c < KD_HOST_NUM_CLASSES; c++) {
    while (kd_host_lists[c]) {
      kd_free_block *b = kd_host_lists[c];
      kd_host_lists[c] = b->next;
      b->next = all;
      all = b;
    }
  }
  kd_host_stats.cached_bytes = 0;
  pthread_mutex_unlock(&kd_host_mu);
  while (all) {
    kd_free_block *n = all->next;
    free(all);
    all = n;
  }
}
