/* caching_allocator_core.c - the caching allocator's policy (see caching_allocator_core.h and
 * docs/CUDA.md). Plain C that also compiles as C++: cuda/caching_allocator.cu #includes it for
 * the CUDA library (tools/build.js compiles only .cu files), src/cuda_bridge/alloc_fake.c
 * #includes it for the host-side tests.
 *
 * Data structures: a block is a piece of a segment (one device allocation); the blocks of a
 * segment form a doubly linked list in address order. Free blocks live in one of two pools
 * (small: <= 1 MiB, large), each an array sorted by (stream, size, address) so best-fit is a
 * binary search. Allocated blocks are found by address in an open-addressing hash table.
 * Blocks freed after recordStream wait in a list of (event, block) until the events of every
 * stream that used them complete. One mutex per allocator.
 *
 * Note [Graph-private pools]: while a stream captures a CUDA graph (kd_ca_begin_capture), the
 * allocations made on it come from the graph's private pool: the pool is a number, carried by
 * each of its blocks and segments and leading the free lists' sort key, so a request finds only
 * blocks of its own pool (0 for ordinary allocations). A block freed during the capture, or
 * later, returns to the private pool: it stays reserved for the graphs of that pool (which
 * replay the same addresses) and is never handed to ordinary allocations, nor given back to
 * the device by emptyCache. Graphs may share a pool (a use count: kd_ca_begin_capture with a
 * pool already known adds one); kd_ca_release_private_pool drops one use, and at zero the
 * pool's free segments are given back, and each other segment as soon as it is free again.
 * During a capture no device memory is freed (cudaFree is not capturable): the OOM path does
 * not release the cache, and recordStream's events are not inserted (a capture replays in
 * stream order on one stream). After PyTorch's private pools (CUDACachingAllocator.cpp). */
#include "caching_allocator_core.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct kd_ca_block kd_ca_block;
typedef struct kd_ca_segment kd_ca_segment;

struct kd_ca_segment {
  uint64_t private_pool;      /* 0, or the graph pool it belongs to (Note [Graph-private pools]) */
  char *ptr;
  size_t size;
  uintptr_t stream;
  int pool;                   /* KD_CA_SMALL_POOL or KD_CA_LARGE_POOL */
  kd_ca_block *first;
  kd_ca_segment *prev, *next; /* list of all segments */
};

struct kd_ca_block {
  uint64_t private_pool;      /* as its segment's */
  char *ptr;
  size_t size;
  size_t requested;
  uintptr_t stream;
  int pool;
  int allocated;
  int event_count;            /* stream events still pending before reuse */
  int in_pool;
  kd_ca_block *prev, *next;   /* neighbours inside the segment */
  kd_ca_segment *segment;
  uintptr_t *uses;            /* other streams that used it (recordStream) */
  int n_uses, cap_uses;
};

typedef struct kd_ca_pool {
  kd_ca_block **v;
  size_t n, cap;
} kd_ca_pool;

typedef struct kd_ca_pending {
  void *event;
  kd_ca_block *block;
} kd_ca_pending;

typedef struct kd_ca_capture {
  uintptr_t stream;
  uint64_t pool;
} kd_ca_capture;

typedef struct kd_ca_private {
  uint64_t id;
  int use_count;
} kd_ca_private;

#define KD_CA_MAX_CAPTURES 16
#define KD_CA_MAX_PRIVATE 256

struct kd_ca {
  pthread_mutex_t mu;
  kd_ca_capture captures[KD_CA_MAX_CAPTURES]; /* streams capturing now, and their pools */
  int n_captures;
  kd_ca_private privates[KD_CA_MAX_PRIVATE];  /* live private pools */
  int n_privates;
  kd_ca_device_ops ops;
  kd_ca_config config;
  int device;
  kd_ca_pool pools[3];        /* indexed by KD_CA_SMALL_POOL / KD_CA_LARGE_POOL */
  kd_ca_block **table;        /* allocated blocks by address (open addressing) */
  size_t table_cap, table_n;
  kd_ca_pending *pending;
  size_t n_pending, cap_pending;
  kd_ca_segment *segments;
  size_t allowed_max;         /* 0: no cap */
  double fraction;
  kd_ca_stats stats;
};

/* ---- sizes ---- */

static size_t kd_ca_round_size(size_t n) {
  if (n < KD_CA_MIN_BLOCK) return KD_CA_MIN_BLOCK;
  return KD_CA_MIN_BLOCK * ((n + KD_CA_MIN_BLOCK - 1) / KD_CA_MIN_BLOCK);
}

static size_t kd_ca_allocation_size(size_t n) {
  if (n <= KD_CA_SMALL_SIZE) return KD_CA_SMALL_BUFFER;
  if (n < KD_CA_MIN_LARGE_ALLOC) return KD_CA_LARGE_BUFFER;
  return KD_CA_ROUND_LARGE * ((n + KD_CA_ROUND_LARGE - 1) / KD_CA_ROUND_LARGE);
}

void kd_ca_format_bytes(size_t n, char *buf, size_t len) {
  static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double v = (double)n;
  int u = 0;
  while (v >= 1024.0 && u < 4) { v /= 1024.0; u++; }
  if (u == 0) snprintf(buf, len, "%zu bytes", n);
  else snprintf(buf, len, "%.2f %s", v, units[u]);
}

/* ---- config ---- */

int kd_ca_parse_conf(const char *s, kd_ca_config *out, char *err, size_t errn) {
  out->max_split_size = SIZE_MAX;
  out->gc_threshold = 0.0;
  if (!s) return 0;
  const char *p = s;
  while (*p) {
    while (*p == ' ' || *p == ',') p++;
    if (!*p) break;
    const char *key = p;
    while (*p && *p != ':' && *p != ',') p++;
    size_t klen = (size_t)(p - key);
    while (klen > 0 && key[klen - 1] == ' ') klen--;
    if (*p != ':') {
      snprintf(err, errn, "Error parsing KINDLING_CUDA_ALLOC_CONF: expected key:value, got '%.*s'", (int)klen, key);
      return -1;
    }
    p++;
    const char *val = p;
    while (*p && *p != ',') p++;
    char vbuf[64];
    snprintf(vbuf, sizeof vbuf, "%.*s", (int)(p - val), val);
    char *end = NULL;
    double v = strtod(vbuf, &end);
    while (end && *end == ' ') end++;
    int bad_number = end == vbuf || (end && *end);
    if (klen == 17 && strncmp(key, "max_split_size_mb", klen) == 0) {
      if (bad_number) {
        snprintf(err, errn, "Error parsing KINDLING_CUDA_ALLOC_CONF: max_split_size_mb needs a number, got '%s'", vbuf);
        return -1;
      }
      if (v <= (double)(KD_CA_LARGE_BUFFER >> 20)) {
        snprintf(err, errn, "CachingAllocator option max_split_size_mb too small, must be > %zu",
                 (size_t)(KD_CA_LARGE_BUFFER >> 20));
        return -1;
      }
      out->max_split_size = v >= (double)(SIZE_MAX >> 21) ? SIZE_MAX : (size_t)v << 20;
    } else if (klen == 28 && strncmp(key, "garbage_collection_threshold", klen) == 0) {
      if (bad_number) {
        snprintf(err, errn,
                 "Error parsing KINDLING_CUDA_ALLOC_CONF: garbage_collection_threshold needs a number, got '%s'", vbuf);
        return -1;
      }
      if (v <= 0.0) {
        snprintf(err, errn, "garbage_collect_threshold too small, set it 0.0~1.0");
        return -1;
      }
      if (v >= 1.0) {
        snprintf(err, errn, "garbage_collect_threshold too big, set it 0.0~1.0");
        return -1;
      }
      out->gc_threshold = v;
    } else {
      snprintf(err, errn, "Unrecognized CachingAllocator option: %.*s", (int)klen, key);
      return -1;
    }
  }
  return 0;
}

/* ---- stats ---- */

static void kd_ca_stat_add(kd_ca_stat *s, int64_t d) {
  s->current += d;
  if (s->current > s->peak) s->peak = s->current;
  if (d > 0) s->allocated += d;
  else s->freed -= d;
}

/* Updates the "all" entry and the pool's entry of a stat array. */
static void kd_ca_stat_pool(kd_ca_stat *arr, int pool, int64_t d) {
  if (d == 0) return;
  kd_ca_stat_add(&arr[KD_CA_ALL], d);
  kd_ca_stat_add(&arr[pool], d);
}

/* ---- free pools: sorted by (stream, size, address) ---- */

/* First index whose block is not less than (private pool, stream, size, ptr). */
static size_t kd_ca_lower_bound(const kd_ca_pool *p, uint64_t priv, uintptr_t stream, size_t size, const char *ptr) {
  size_t lo = 0, hi = p->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    const kd_ca_block *b = p->v[mid];
    int b_less = b->private_pool != priv ? b->private_pool < priv
                 : b->stream != stream   ? b->stream < stream
                 : b->size != size       ? b->size < size
                                         : b->ptr < ptr;
    if (b_less) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static int kd_ca_pool_insert(kd_ca_pool *p, kd_ca_block *b) {
  if (p->n == p->cap) {
    size_t cap = p->cap ? p->cap * 2 : 64;
    kd_ca_block **v = (kd_ca_block **)realloc(p->v, cap * sizeof *v);
    if (!v) return -1;
    p->v = v;
    p->cap = cap;
  }
  size_t i = kd_ca_lower_bound(p, b->private_pool, b->stream, b->size, b->ptr);
  memmove(p->v + i + 1, p->v + i, (p->n - i) * sizeof *p->v);
  p->v[i] = b;
  p->n++;
  b->in_pool = 1;
  return 0;
}

static void kd_ca_pool_remove(kd_ca_pool *p, kd_ca_block *b) {
  size_t i = kd_ca_lower_bound(p, b->private_pool, b->stream, b->size, b->ptr);
  if (i < p->n && p->v[i] == b) {
    memmove(p->v + i, p->v + i + 1, (p->n - i - 1) * sizeof *p->v);
    p->n--;
  }
  b->in_pool = 0;
}

/* ---- allocated blocks by address ---- */

static size_t kd_ca_hash(const void *p, size_t cap) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return (size_t)x & (cap - 1);
}

static int kd_ca_table_put(kd_ca *a, kd_ca_block *b);

static int kd_ca_table_grow(kd_ca *a) {
  size_t old_cap = a->table_cap;
  kd_ca_block **old = a->table;
  size_t cap = old_cap ? old_cap * 2 : 256;
  kd_ca_block **t = (kd_ca_block **)calloc(cap, sizeof *t);
  if (!t) return -1;
  a->table = t;
  a->table_cap = cap;
  a->table_n = 0;
  for (size_t i = 0; i < old_cap; i++)
    if (old[i]) kd_ca_table_put(a, old[i]);
  free(old);
  return 0;
}

static int kd_ca_table_put(kd_ca *a, kd_ca_block *b) {
  if ((a->table_n + 1) * 2 > a->table_cap && kd_ca_table_grow(a) != 0) return -1;
  size_t i = kd_ca_hash(b->ptr, a->table_cap);
  while (a->table[i]) i = (i + 1) & (a->table_cap - 1);
  a->table[i] = b;
  a->table_n++;
  return 0;
}

static size_t kd_ca_table_find(const kd_ca *a, const void *ptr) {
  if (!a->table_cap) return SIZE_MAX;
  size_t i = kd_ca_hash(ptr, a->table_cap);
  while (a->table[i]) {
    if (a->table[i]->ptr == (const char *)ptr) return i;
    i = (i + 1) & (a->table_cap - 1);
  }
  return SIZE_MAX;
}

/* Removes slot i, shifting later entries of its probe run back (no tombstones). */
static void kd_ca_table_erase(kd_ca *a, size_t i) {
  size_t mask = a->table_cap - 1;
  a->table[i] = NULL;
  a->table_n--;
  size_t j = i;
  for (;;) {
    j = (j + 1) & mask;
    if (!a->table[j]) break;
    size_t h = kd_ca_hash(a->table[j]->ptr, a->table_cap);
    /* Move j back to i when its home h is not within (i, j] cyclically. */
    int move = i <= j ? (h <= i || h > j) : (h <= i && h > j);
    if (move) {
      a->table[i] = a->table[j];
      a->table[j] = NULL;
      i = j;
    }
  }
}

/* ---- blocks and segments ---- */

static kd_ca_block *kd_ca_block_new(void) { return (kd_ca_block *)calloc(1, sizeof(kd_ca_block)); }

static void kd_ca_block_delete(kd_ca_block *b) {
  free(b->uses);
  free(b);
}

static int kd_ca_is_split(const kd_ca_block *b) { return b->prev != NULL || b->next != NULL; }

static int kd_ca_is_oversize(const kd_ca *a, size_t size) { return size >= a->config.max_split_size; }

/* Best fit in the request's pool, private pool and stream; NULL when nothing fits. */
static kd_ca_block *kd_ca_find_free(kd_ca *a, int pool, uint64_t priv, uintptr_t stream, size_t size) {
  kd_ca_pool *p = &a->pools[pool];
  size_t i = kd_ca_lower_bound(p, priv, stream, size, NULL);
  if (i >= p->n) return NULL;
  kd_ca_block *b = p->v[i];
  if (b->stream != stream || b->private_pool != priv) return NULL;
  /* Do not hand a big unsplittable block to a small request, nor a much bigger one to a big
   * request (PyTorch's max_split_size rules). */
  if (!kd_ca_is_oversize(a, size) && kd_ca_is_oversize(a, b->size)) return NULL;
  if (kd_ca_is_oversize(a, size) && b->size >= size + KD_CA_LARGE_BUFFER) return NULL;
  kd_ca_pool_remove(p, b);
  return b;
}

static int kd_ca_should_split(const kd_ca *a, const kd_ca_block *b, size_t size) {
  size_t remaining = b->size - size;
  if (b->pool == KD_CA_SMALL_POOL) return remaining >= KD_CA_MIN_BLOCK;
  return size < a->config.max_split_size && remaining > KD_CA_SMALL_SIZE;
}

static size_t kd_ca_limit(kd_ca *a) { return a->allowed_max; }

static size_t kd_ca_reserved(const kd_ca *a) { return (size_t)a->stats.reserved_bytes[KD_CA_ALL].current; }

/* A new segment of `size` bytes for (pool, stream). 0 ok, 1 OOM, -1 other error. */
static int kd_ca_alloc_segment(kd_ca *a, int pool, uint64_t priv, uintptr_t stream, size_t size, kd_ca_block **out,
                               char *err, size_t errn) {
  size_t limit = kd_ca_limit(a);
  if (limit && kd_ca_reserved(a) + size > limit) return 1;
  void *ptr = NULL;
  int r = a->ops.malloc(a->ops.ctx, size, &ptr, err, errn);
  if (r != 0) return r;
  kd_ca_block *b = kd_ca_block_new();
  kd_ca_segment *s = (kd_ca_segment *)calloc(1, sizeof *s);
  if (!b || !s) {
    free(b);
    free(s);
    a->ops.free(a->ops.ctx, ptr);
    snprintf(err, errn, "out of host memory for the CUDA allocator's bookkeeping");
    return -1;
  }
  b->ptr = (char *)ptr;
  b->size = size;
  b->stream = stream;
  b->pool = pool;
  b->private_pool = priv;
  b->segment = s;
  s->private_pool = priv;
  s->ptr = (char *)ptr;
  s->size = size;
  s->stream = stream;
  s->pool = pool;
  s->first = b;
  s->next = a->segments;
  if (a->segments) a->segments->prev = s;
  a->segments = s;
  a->stats.num_device_alloc++;
  kd_ca_stat_pool(a->stats.segment, pool, 1);
  kd_ca_stat_pool(a->stats.reserved_bytes, pool, (int64_t)size);
  if (size >= a->config.max_split_size) kd_ca_stat_add(&a->stats.oversize_segments, 1);
  *out = b;
  return 0;
}

/* Gives a whole free segment (one unsplit block in a pool) back to the device. */
static void kd_ca_release_block(kd_ca *a, kd_ca_block *b) {
  kd_ca_pool_remove(&a->pools[b->pool], b);
  kd_ca_segment *s = b->segment;
  a->ops.free(a->ops.ctx, b->ptr);
  a->stats.num_device_free++;
  kd_ca_stat_pool(a->stats.segment, b->pool, -1);
  kd_ca_stat_pool(a->stats.reserved_bytes, b->pool, -(int64_t)b->size);
  if (b->size >= a->config.max_split_size) kd_ca_stat_add(&a->stats.oversize_segments, -1);
  if (s->prev) s->prev->next = s->next;
  else a->segments = s->next;
  if (s->next) s->next->prev = s->prev;
  free(s);
  kd_ca_block_delete(b);
}

/* Merges `src` (a free neighbour) into dst; returns the bytes merged (0 if it cannot be). */
static size_t kd_ca_try_merge(kd_ca *a, kd_ca_block *dst, kd_ca_block *src) {
  if (!src || src->allocated || src->event_count > 0 || src->n_uses > 0 || !src->in_pool) return 0;
  kd_ca_pool_remove(&a->pools[src->pool], src);
  if (dst->prev == src) {
    dst->ptr = src->ptr;
    dst->prev = src->prev;
    if (dst->prev) dst->prev->next = dst;
    else dst->segment->first = dst;
  } else {
    dst->next = src->next;
    if (dst->next) dst->next->prev = dst;
  }
  size_t n = src->size;
  dst->size += n;
  kd_ca_block_delete(src);
  return n;
}

/* A block nobody uses any more goes back to its pool, merged with free neighbours. */
static void kd_ca_free_block(kd_ca *a, kd_ca_block *b) {
  size_t original = b->size, requested = b->requested;
  int64_t split_blocks = 0, split_bytes = 0;
  kd_ca_block *nb[2] = {b->prev, b->next};
  for (int i = 0; i < 2; i++) {
    size_t n = kd_ca_try_merge(a, b, nb[i]);
    if (n) {
      split_blocks -= 1;
      split_bytes -= (int64_t)n;
    }
  }
  b->requested = 0;
  (void)kd_ca_pool_insert(&a->pools[b->pool], b); /* out of host memory: the block leaks, no crash */
  if (kd_ca_is_split(b)) {
    split_blocks += 1;
    split_bytes += (int64_t)b->size;
  }
  kd_ca_stat_pool(a->stats.inactive_split, b->pool, split_blocks);
  kd_ca_stat_pool(a->stats.inactive_split_bytes, b->pool, split_bytes);
  kd_ca_stat_pool(a->stats.active, b->pool, -1);
  kd_ca_stat_pool(a->stats.active_bytes, b->pool, -(int64_t)original);
  kd_ca_stat_pool(a->stats.requested_bytes, b->pool, -(int64_t)requested);
}

/* ---- stream events ---- */

static void kd_ca_event_done(kd_ca *a, size_t i) {
  kd_ca_pending p = a->pending[i];
  a->pending[i] = a->pending[--a->n_pending];
  a->ops.event_release(a->ops.ctx, p.event);
  if (--p.block->event_count == 0) kd_ca_free_block(a, p.block);
}

static int kd_ca_process_events_locked(kd_ca *a) {
  for (size_t i = 0; i < a->n_pending;) {
    if (a->ops.event_query(a->ops.ctx, a->pending[i].event)) kd_ca_event_done(a, i);
    else i++;
  }
  return (int)a->n_pending;
}

static void kd_ca_synchronize_events(kd_ca *a) {
  while (a->n_pending > 0) {
    a->ops.event_synchronize(a->ops.ctx, a->pending[a->n_pending - 1].event);
    kd_ca_event_done(a, a->n_pending - 1);
  }
}

/* Records one event per other stream that used b; b is reused after they all complete. */
static void kd_ca_insert_events(kd_ca *a, kd_ca_block *b) {
  for (int i = 0; i < b->n_uses; i++) {
    void *ev = NULL;
    if (a->n_pending == a->cap_pending) {
      size_t cap = a->cap_pending ? a->cap_pending * 2 : 32;
      kd_ca_pending *v = (kd_ca_pending *)realloc(a->pending, cap * sizeof *v);
      if (!v) continue; /* out of host memory: reuse without waiting for this stream */
      a->pending = v;
      a->cap_pending = cap;
    }
    if (a->ops.event_record(a->ops.ctx, b->uses[i], &ev) != 0) continue;
    a->pending[a->n_pending].event = ev;
    a->pending[a->n_pending].block = b;
    a->n_pending++;
    b->event_count++;
  }
  b->n_uses = 0;
}

/* ---- graph-private pools (Note [Graph-private pools]) ---- */

static kd_ca_private *kd_ca_private_find(kd_ca *a, uint64_t id) {
  for (int i = 0; i < a->n_privates; i++)
    if (a->privates[i].id == id) return &a->privates[i];
  return NULL;
}

/* The private pool allocations on `stream` come from now (0: none). */
static uint64_t kd_ca_capture_pool(const kd_ca *a, uintptr_t stream) {
  for (int i = 0; i < a->n_captures; i++)
    if (a->captures[i].stream == stream) return a->captures[i].pool;
  return 0;
}

/* A cached free block may go back to the device: not while a capture runs (cudaFree would break
 * it), and not when it is reserved for the graphs of a live private pool. */
static int kd_ca_releasable(kd_ca *a, const kd_ca_block *b) {
  if (a->n_captures > 0) return 0;
  return !b->private_pool || !kd_ca_private_find(a, b->private_pool);
}

/* ---- releasing cached memory ---- */

/* Frees whole free segments of a pool; with min_size only those at least that big. */
static size_t kd_ca_release_pool(kd_ca *a, int pool, size_t min_size) {
  size_t released = 0;
  kd_ca_pool *p = &a->pools[pool];
  for (size_t i = p->n; i-- > 0;) {
    kd_ca_block *b = p->v[i];
    if (!b->prev && !b->next && b->size >= min_size && kd_ca_releasable(a, b)) {
      released += b->size;
      kd_ca_release_block(a, b);
    }
  }
  return released;
}

/* With max_split_size set: frees cached oversize segments (the smallest one big enough for
 * the request, else the biggest ones until `size` bytes are freed). */
static int kd_ca_release_available(kd_ca *a, int pool, uintptr_t stream, size_t size) {
  if (a->config.max_split_size == SIZE_MAX || a->n_captures > 0) return 0;
  kd_ca_pool *p = &a->pools[pool];
  size_t key = size < a->config.max_split_size ? a->config.max_split_size : size;
  size_t i = kd_ca_lower_bound(p, 0, stream, key, NULL);
  if (i < p->n && p->v[i]->stream == stream && !p->v[i]->private_pool && !kd_ca_is_split(p->v[i])) {
    kd_ca_release_block(a, p->v[i]);
    return 1;
  }
  size_t total = 0;
  for (size_t j = p->n; j-- > 0 && total < size;) {
    kd_ca_block *b = p->v[j];
    if (b->stream == stream && !b->private_pool && b->size >= a->config.max_split_size && !kd_ca_is_split(b)) {
      total += b->size;
      kd_ca_release_block(a, b);
      if (j > p->n) j = p->n;
    }
  }
  return total >= size;
}

static void kd_ca_release_cached(kd_ca *a) {
  if (a->n_captures > 0) return; /* nothing is freed while a graph is being captured */
  kd_ca_synchronize_events(a);
  kd_ca_release_pool(a, KD_CA_LARGE_POOL, 0);
  kd_ca_release_pool(a, KD_CA_SMALL_POOL, 0);
}

/* garbage_collection_threshold: above threshold * limit reserved, free cached whole segments
 * (largest first) until below it. */
static void kd_ca_garbage_collect(kd_ca *a) {
  size_t limit = a->allowed_max;
  if (!limit) {
    size_t f = 0, t = 0;
    a->ops.mem_info(a->ops.ctx, &f, &t);
    limit = t;
  }
  size_t target = (size_t)(a->config.gc_threshold * (double)limit);
  if (kd_ca_reserved(a) <= target) return;
  for (int pool = KD_CA_LARGE_POOL; pool >= KD_CA_SMALL_POOL; pool--) {
    kd_ca_pool *p = &a->pools[pool];
    for (size_t i = p->n; i-- > 0 && kd_ca_reserved(a) > target;) {
      kd_ca_block *b = p->v[i];
      if (!kd_ca_is_split(b) && kd_ca_releasable(a, b)) {
        kd_ca_release_block(a, b);
        if (i > p->n) i = p->n;
      }
    }
  }
}

/* ---- public entries ---- */

kd_ca *kd_ca_create(const kd_ca_device_ops *ops, const kd_ca_config *config, int device) {
  kd_ca *a = (kd_ca *)calloc(1, sizeof *a);
  if (!a) return NULL;
  pthread_mutex_init(&a->mu, NULL);
  a->ops = *ops;
  if (config) a->config = *config;
  else {
    a->config.max_split_size = SIZE_MAX;
    a->config.gc_threshold = 0;
  }
  a->device = device;
  a->stats.max_split_size = a->config.max_split_size == SIZE_MAX ? -1 : (int64_t)a->config.max_split_size;
  return a;
}

void kd_ca_destroy(kd_ca *a) {
  if (!a) return;
  kd_ca_synchronize_events(a);
  for (kd_ca_segment *s = a->segments; s;) {
    kd_ca_segment *next = s->next;
    for (kd_ca_block *b = s->first; b;) {
      kd_ca_block *bn = b->next;
      kd_ca_block_delete(b);
      b = bn;
    }
    a->ops.free(a->ops.ctx, s->ptr);
    free(s);
    s = next;
  }
  free(a->pools[1].v);
  free(a->pools[2].v);
  free(a->table);
  free(a->pending);
  pthread_mutex_destroy(&a->mu);
  free(a);
}

/* "Memory summary: ..." in one paragraph, for the OOM message (which must fit a 1 KiB error). */
static void kd_ca_short_summary(kd_ca *a, char *buf, size_t n) {
  char al[32], alp[32], rs[32], rsp[32], sp[32];
  kd_ca_format_bytes((size_t)a->stats.allocated_bytes[0].current, al, sizeof al);
  kd_ca_format_bytes((size_t)a->stats.allocated_bytes[0].peak, alp, sizeof alp);
  kd_ca_format_bytes((size_t)a->stats.reserved_bytes[0].current, rs, sizeof rs);
  kd_ca_format_bytes((size_t)a->stats.reserved_bytes[0].peak, rsp, sizeof rsp);
  kd_ca_format_bytes((size_t)a->stats.inactive_split_bytes[0].current, sp, sizeof sp);
  snprintf(buf, n,
           "Memory summary (device %d): allocated %s (peak %s) in %lld blocks; reserved %s (peak %s) in %lld "
           "segments (%lld small, %lld large); inactive split %s; %lld alloc retries, %lld OOMs. "
           "See kd.cuda.memorySummary().",
           a->device, al, alp, (long long)a->stats.allocation[0].current, rs, rsp,
           (long long)a->stats.segment[0].current, (long long)a->stats.segment[1].current,
           (long long)a->stats.segment[2].current, sp, (long long)a->stats.num_alloc_retries,
           (long long)a->stats.num_ooms);
}

static void kd_ca_oom_message(kd_ca *a, size_t nbytes, char *err, size_t errn) {
  size_t free_b = 0, total_b = 0;
  a->ops.mem_info(a->ops.ctx, &free_b, &total_b);
  char want[32], total[32], avail[32], alloc[32], unalloc[32], lim[32], sum[640];
  kd_ca_format_bytes(nbytes, want, sizeof want);
  kd_ca_format_bytes(total_b, total, sizeof total);
  kd_ca_format_bytes(free_b, avail, sizeof avail);
  kd_ca_format_bytes((size_t)a->stats.allocated_bytes[0].current, alloc, sizeof alloc);
  int64_t un = a->stats.reserved_bytes[0].current - a->stats.allocated_bytes[0].current;
  kd_ca_format_bytes((size_t)(un > 0 ? un : 0), unalloc, sizeof unalloc);
  char limit_msg[96] = "";
  if (a->allowed_max) {
    kd_ca_format_bytes(a->allowed_max, lim, sizeof lim);
    snprintf(limit_msg, sizeof limit_msg, " This process is limited to %s (setPerProcessMemoryFraction).", lim);
  }
  kd_ca_short_summary(a, sum, sizeof sum);
  snprintf(err, errn,
           "CUDA out of memory. Tried to allocate %s. GPU %d has a total capacity of %s of which %s is free.%s "
           "Of the allocated memory %s is allocated by kindling, and %s is reserved by kindling but unallocated. "
           "If reserved but unallocated memory is large try setting KINDLING_CUDA_ALLOC_CONF=max_split_size_mb:<n> "
           "to avoid fragmentation.\n%s",
           want, a->device, total, avail, limit_msg, alloc, unalloc, sum);
}

int kd_ca_malloc(kd_ca *a, size_t nbytes, uintptr_t stream, void **out, char *err, size_t errn) {
  *out = NULL;
  if (nbytes == 0) return 0;
  if (nbytes > SIZE_MAX / 2) {
    pthread_mutex_lock(&a->mu);
    a->stats.num_ooms++;
    kd_ca_oom_message(a, nbytes, err, errn);
    pthread_mutex_unlock(&a->mu);
    return 1;
  }
  pthread_mutex_lock(&a->mu);
  kd_ca_process_events_locked(a);
  size_t size = kd_ca_round_size(nbytes);
  int pool = size <= KD_CA_SMALL_SIZE ? KD_CA_SMALL_POOL : KD_CA_LARGE_POOL;
  size_t alloc_size = kd_ca_allocation_size(size);
  const uint64_t priv = kd_ca_capture_pool(a, stream);
  kd_ca_block *b = kd_ca_find_free(a, pool, priv, stream, size);
  int r = 0;
  if (!b) {
    if (a->config.gc_threshold > 0 && a->n_captures == 0) kd_ca_garbage_collect(a);
    r = kd_ca_alloc_segment(a, pool, priv, stream, alloc_size, &b, err, errn);
    if (r == 1 && kd_ca_release_available(a, pool, stream, size))
      r = kd_ca_alloc_segment(a, pool, priv, stream, alloc_size, &b, err, errn);
    if (r == 1 && a->n_captures == 0) {
      kd_ca_release_cached(a);
      a->stats.num_alloc_retries++;
      r = kd_ca_alloc_segment(a, pool, priv, stream, alloc_size, &b, err, errn);
    }
    if (r != 0) {
      if (r == 1) {
        a->stats.num_ooms++;
        kd_ca_oom_message(a, nbytes, err, errn);
      }
      pthread_mutex_unlock(&a->mu);
      return r;
    }
  }
  int already_split = kd_ca_is_split(b);
  if (kd_ca_should_split(a, b, size)) {
    kd_ca_block *rest = kd_ca_block_new();
    if (rest) {
      rest->ptr = b->ptr + size;
      rest->size = b->size - size;
      rest->stream = b->stream;
      rest->pool = b->pool;
      rest->private_pool = b->private_pool;
      rest->segment = b->segment;
      rest->prev = b;
      rest->next = b->next;
      if (rest->next) rest->next->prev = rest;
      b->next = rest;
      b->size = size;
      if (kd_ca_pool_insert(&a->pools[pool], rest) != 0) { /* undo: keep the block whole */
        b->next = rest->next;
        if (b->next) b->next->prev = b;
        b->size += rest->size;
        kd_ca_block_delete(rest);
      } else if (already_split) {
        kd_ca_stat_pool(a->stats.inactive_split_bytes, pool, -(int64_t)b->size);
      } else {
        kd_ca_stat_pool(a->stats.inactive_split_bytes, pool, (int64_t)rest->size);
        kd_ca_stat_pool(a->stats.inactive_split, pool, 1);
      }
    }
  } else if (already_split) {
    kd_ca_stat_pool(a->stats.inactive_split_bytes, pool, -(int64_t)b->size);
    kd_ca_stat_pool(a->stats.inactive_split, pool, -1);
  }
  if (kd_ca_table_put(a, b) != 0) {
    kd_ca_block *bb = b;
    b->allocated = 0;
    b->requested = 0;
    kd_ca_stat_pool(a->stats.active, pool, 1);
    kd_ca_stat_pool(a->stats.active_bytes, pool, (int64_t)bb->size);
    kd_ca_free_block(a, bb);
    snprintf(err, errn, "out of host memory for the CUDA allocator's bookkeeping");
    pthread_mutex_unlock(&a->mu);
    return -1;
  }
  b->allocated = 1;
  b->requested = nbytes;
  kd_ca_stat_pool(a->stats.allocation, pool, 1);
  kd_ca_stat_pool(a->stats.allocated_bytes, pool, (int64_t)b->size);
  kd_ca_stat_pool(a->stats.active, pool, 1);
  kd_ca_stat_pool(a->stats.active_bytes, pool, (int64_t)b->size);
  kd_ca_stat_pool(a->stats.requested_bytes, pool, (int64_t)nbytes);
  if (b->size >= a->config.max_split_size) kd_ca_stat_add(&a->stats.oversize_allocations, 1);
  *out = b->ptr;
  pthread_mutex_unlock(&a->mu);
  return 0;
}

int kd_ca_free(kd_ca *a, void *ptr) {
  if (!ptr) return 0;
  pthread_mutex_lock(&a->mu);
  size_t i = kd_ca_table_find(a, ptr);
  if (i == SIZE_MAX) {
    pthread_mutex_unlock(&a->mu);
    return -1;
  }
  kd_ca_block *b = a->table[i];
  kd_ca_table_erase(a, i);
  b->allocated = 0;
  kd_ca_stat_pool(a->stats.allocation, b->pool, -1);
  kd_ca_stat_pool(a->stats.allocated_bytes, b->pool, -(int64_t)b->size);
  if (b->size >= a->config.max_split_size) kd_ca_stat_add(&a->stats.oversize_allocations, -1);
  if (b->n_uses > 0 && a->n_captures > 0) b->n_uses = 0; /* see Note [Graph-private pools] */
  if (b->n_uses > 0) kd_ca_insert_events(a, b);
  if (b->event_count == 0) {
    kd_ca_free_block(a, b);
    if (b->private_pool && !kd_ca_is_split(b) && kd_ca_releasable(a, b)) kd_ca_release_block(a, b); /* pool reset */
  }
  pthread_mutex_unlock(&a->mu);
  return 0;
}

int kd_ca_begin_capture(kd_ca *a, uint64_t pool, uintptr_t stream) {
  if (!pool) return -1;
  pthread_mutex_lock(&a->mu);
  int r = -1;
  if (a->n_captures < KD_CA_MAX_CAPTURES && !kd_ca_capture_pool(a, stream)) {
    kd_ca_private *p = kd_ca_private_find(a, pool);
    if (p) {
      p->use_count++;
      r = 0;
    } else if (a->n_privates < KD_CA_MAX_PRIVATE) {
      a->privates[a->n_privates].id = pool;
      a->privates[a->n_privates].use_count = 1;
      a->n_privates++;
      r = 0;
    }
    if (r == 0) {
      a->captures[a->n_captures].stream = stream;
      a->captures[a->n_captures].pool = pool;
      a->n_captures++;
    }
  }
  pthread_mutex_unlock(&a->mu);
  return r;
}

void kd_ca_end_capture(kd_ca *a, uintptr_t stream) {
  pthread_mutex_lock(&a->mu);
  for (int i = 0; i < a->n_captures; i++)
    if (a->captures[i].stream == stream) {
      a->captures[i] = a->captures[--a->n_captures];
      break;
    }
  pthread_mutex_unlock(&a->mu);
}

/* Frees the whole free segments of pools that are no longer reserved (after a reset). */
static void kd_ca_release_unreserved(kd_ca *a) {
  for (int pool = KD_CA_SMALL_POOL; pool <= KD_CA_LARGE_POOL; pool++) {
    kd_ca_pool *p = &a->pools[pool];
    for (size_t i = p->n; i-- > 0;) {
      kd_ca_block *b = p->v[i];
      if (b->private_pool && !kd_ca_is_split(b) && kd_ca_releasable(a, b)) {
        kd_ca_release_block(a, b);
        if (i > p->n) i = p->n;
      }
    }
  }
}

int kd_ca_release_private_pool(kd_ca *a, uint64_t pool) {
  pthread_mutex_lock(&a->mu);
  kd_ca_private *p = kd_ca_private_find(a, pool);
  int r = p ? 0 : -1;
  if (p && --p->use_count == 0) {
    *p = a->privates[--a->n_privates];
    kd_ca_release_unreserved(a);
  }
  pthread_mutex_unlock(&a->mu);
  return r;
}

int kd_ca_private_pool_uses(kd_ca *a, uint64_t pool) {
  pthread_mutex_lock(&a->mu);
  kd_ca_private *p = kd_ca_private_find(a, pool);
  int n = p ? p->use_count : 0;
  pthread_mutex_unlock(&a->mu);
  return n;
}

int kd_ca_record_stream(kd_ca *a, void *ptr, uintptr_t stream) {
  pthread_mutex_lock(&a->mu);
  size_t i = kd_ca_table_find(a, ptr);
  if (i == SIZE_MAX) {
    pthread_mutex_unlock(&a->mu);
    return -1;
  }
  kd_ca_block *b = a->table[i];
  int r = 0;
  if (stream != b->stream) {
    int seen = 0;
    for (int k = 0; k < b->n_uses; k++) seen |= b->uses[k] == stream;
    if (!seen) {
      if (b->n_uses == b->cap_uses) {
        int cap = b->cap_uses ? b->cap_uses * 2 : 4;
        uintptr_t *v = (uintptr_t *)realloc(b->uses, (size_t)cap * sizeof *v);
        if (!v) r = -1;
        else {
          b->uses = v;
          b->cap_uses = cap;
        }
      }
      if (r == 0) b->uses[b->n_uses++] = stream;
    }
  }
  pthread_mutex_unlock(&a->mu);
  return r;
}

size_t kd_ca_block_size(kd_ca *a, void *ptr) {
  pthread_mutex_lock(&a->mu);
  size_t i = kd_ca_table_find(a, ptr);
  size_t n = i == SIZE_MAX ? 0 : a->table[i]->size;
  pthread_mutex_unlock(&a->mu);
  return n;
}

void kd_ca_empty_cache(kd_ca *a) {
  pthread_mutex_lock(&a->mu);
  kd_ca_release_cached(a);
  pthread_mutex_unlock(&a->mu);
}

static void kd_ca_reset_peak_array(kd_ca_stat *s, int n) {
  for (int i = 0; i < n; i++) s[i].peak = s[i].current;
}

void kd_ca_reset_peak(kd_ca *a) {
  pthread_mutex_lock(&a->mu);
  kd_ca_stats *s = &a->stats;
  kd_ca_reset_peak_array(s->allocation, 3);
  kd_ca_reset_peak_array(s->segment, 3);
  kd_ca_reset_peak_array(s->active, 3);
  kd_ca_reset_peak_array(s->inactive_split, 3);
  kd_ca_reset_peak_array(s->allocated_bytes, 3);
  kd_ca_reset_peak_array(s->reserved_bytes, 3);
  kd_ca_reset_peak_array(s->active_bytes, 3);
  kd_ca_reset_peak_array(s->inactive_split_bytes, 3);
  kd_ca_reset_peak_array(s->requested_bytes, 3);
  kd_ca_reset_peak_array(&s->oversize_allocations, 1);
  kd_ca_reset_peak_array(&s->oversize_segments, 1);
  pthread_mutex_unlock(&a->mu);
}

static void kd_ca_reset_acc_array(kd_ca_stat *s, int n) {
  for (int i = 0; i < n; i++) s[i].allocated = s[i].freed = 0;
}

void kd_ca_reset_accumulated(kd_ca *a) {
  pthread_mutex_lock(&a->mu);
  kd_ca_stats *s = &a->stats;
  kd_ca_reset_acc_array(s->allocation, 3);
  kd_ca_reset_acc_array(s->segment, 3);
  kd_ca_reset_acc_array(s->active, 3);
  kd_ca_reset_acc_array(s->inactive_split, 3);
  kd_ca_reset_acc_array(s->allocated_bytes, 3);
  kd_ca_reset_acc_array(s->reserved_bytes, 3);
  kd_ca_reset_acc_array(s->active_bytes, 3);
  kd_ca_reset_acc_array(s->inactive_split_bytes, 3);
  kd_ca_reset_acc_array(s->requested_bytes, 3);
  kd_ca_reset_acc_array(&s->oversize_allocations, 1);
  kd_ca_reset_acc_array(&s->oversize_segments, 1);
  s->num_alloc_retries = s->num_ooms = s->num_device_alloc = s->num_device_free = 0;
  pthread_mutex_unlock(&a->mu);
}

int kd_ca_set_memory_fraction(kd_ca *a, double fraction) {
  if (!(fraction > 0.0 && fraction <= 1.0)) return -1;
  size_t f = 0, t = 0;
  a->ops.mem_info(a->ops.ctx, &f, &t);
  pthread_mutex_lock(&a->mu);
  a->fraction = fraction;
  a->allowed_max = (size_t)(fraction * (double)t);
  pthread_mutex_unlock(&a->mu);
  return 0;
}

void kd_ca_get_stats(kd_ca *a, kd_ca_stats *out) {
  pthread_mutex_lock(&a->mu);
  *out = a->stats;
  pthread_mutex_unlock(&a->mu);
}

int kd_ca_process_events(kd_ca *a) {
  pthread_mutex_lock(&a->mu);
  int n = kd_ca_process_events_locked(a);
  pthread_mutex_unlock(&a->mu);
  return n;
}

/* ---- text output ---- */

typedef struct kd_ca_buf {
  char *s;
  size_t n, cap;
  int failed;
} kd_ca_buf;

static void kd_ca_printf(kd_ca_buf *b, const char *fmt, ...) {
  if (b->failed) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
    va_end(ap);
    if (k < 0) {
      b->failed = 1;
      return;
    }
    if (b->s && b->n + (size_t)k < b->cap) {
      b->n += (size_t)k;
      return;
    }
    size_t cap = b->cap ? b->cap * 2 : 4096;
    while (cap < b->n + (size_t)k + 1) cap *= 2;
    char *s = (char *)realloc(b->s, cap);
    if (!s) {
      b->failed = 1;
      return;
    }
    b->s = s;
    b->cap = cap;
  }
}

static char *kd_ca_buf_take(kd_ca_buf *b) {
  if (b->failed) {
    free(b->s);
    return NULL;
  }
  if (!b->s) {
    b->s = (char *)malloc(1);
    if (b->s) b->s[0] = 0;
  }
  return b->s;
}

static void kd_ca_json_stat(kd_ca_buf *b, const char *name, const char *type, const kd_ca_stat *s, int *first) {
  static const char *const parts[4] = {"current", "peak", "allocated", "freed"};
  const int64_t v[4] = {s->current, s->peak, s->allocated, s->freed};
  for (int i = 0; i < 4; i++) {
    kd_ca_printf(b, "%s\"%s%s%s.%s\":%lld", *first ? "" : ",", name, type ? "." : "", type ? type : "", parts[i],
                 (long long)v[i]);
    *first = 0;
  }
}

char *kd_ca_stats_json(kd_ca *a) {
  kd_ca_stats s;
  kd_ca_get_stats(a, &s);
  static const char *const types[3] = {"all", "small_pool", "large_pool"};
  const struct {
    const char *name;
    const kd_ca_stat *arr;
  } arrays[] = {
      {"allocation", s.allocation},         {"segment", s.segment},
      {"active", s.active},                 {"inactive_split", s.inactive_split},
      {"allocated_bytes", s.allocated_bytes}, {"reserved_bytes", s.reserved_bytes},
      {"active_bytes", s.active_bytes},     {"inactive_split_bytes", s.inactive_split_bytes},
      {"requested_bytes", s.requested_bytes},
  };
  kd_ca_buf b = {NULL, 0, 0, 0};
  int first = 1;
  kd_ca_printf(&b, "{");
  for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; k++)
    for (int t = 0; t < 3; t++) kd_ca_json_stat(&b, arrays[k].name, types[t], &arrays[k].arr[t], &first);
  kd_ca_json_stat(&b, "oversize_allocations", NULL, &s.oversize_allocations, &first);
  kd_ca_json_stat(&b, "oversize_segments", NULL, &s.oversize_segments, &first);
  kd_ca_printf(&b, ",\"num_alloc_retries\":%lld,\"num_ooms\":%lld,\"num_device_alloc\":%lld,"
               "\"num_device_free\":%lld,\"max_split_size\":%lld}",
               (long long)s.num_alloc_retries, (long long)s.num_ooms, (long long)s.num_device_alloc,
               (long long)s.num_device_free, (long long)s.max_split_size);
  return kd_ca_buf_take(&b);
}

char *kd_ca_snapshot_json(kd_ca *a) {
  kd_ca_buf b = {NULL, 0, 0, 0};
  pthread_mutex_lock(&a->mu);
  kd_ca_printf(&b, "[");
  /* Segments sorted by address would need a sort; list order (newest first) reversed instead. */
  kd_ca_segment *last = a->segments;
  while (last && last->next) last = last->next;
  for (kd_ca_segment *s = last; s; s = s->prev) {
    size_t allocated = 0, active = 0, requested = 0;
    for (kd_ca_block *k = s->first; k; k = k->next) {
      if (k->allocated) allocated += k->size, requested += k->requested;
      if (k->allocated || k->event_count > 0) active += k->size;
    }
    kd_ca_printf(&b,
                 "%s{\"device\":%d,\"address\":%llu,\"totalSize\":%zu,\"allocatedSize\":%zu,\"activeSize\":%zu,"
                 "\"requestedSize\":%zu,\"stream\":%llu,\"segmentType\":\"%s\",\"blocks\":[",
                 s == last ? "" : ",", a->device, (unsigned long long)(uintptr_t)s->ptr, s->size, allocated, active,
                 requested, (unsigned long long)s->stream, s->pool == KD_CA_SMALL_POOL ? "small" : "large");
    for (kd_ca_block *k = s->first; k; k = k->next) {
      const char *state = k->allocated ? "active_allocated" : k->event_count > 0 ? "active_pending_free" : "inactive";
      kd_ca_printf(&b, "%s{\"address\":%llu,\"size\":%zu,\"requestedSize\":%zu,\"state\":\"%s\"}",
                   k == s->first ? "" : ",", (unsigned long long)(uintptr_t)k->ptr, k->size, k->requested, state);
    }
    kd_ca_printf(&b, "]}");
  }
  kd_ca_printf(&b, "]");
  pthread_mutex_unlock(&a->mu);
  return kd_ca_buf_take(&b);
}

static void kd_ca_summary_row(kd_ca_buf *b, const char *label, const kd_ca_stat *s, int bytes) {
  char v[4][32];
  const int64_t x[4] = {s->current, s->peak, s->allocated, s->freed};
  for (int i = 0; i < 4; i++) {
    if (bytes) {
      /* PyTorch prints bytes in B/KiB/MiB/GiB with no decimals beyond what fits. */
      kd_ca_format_bytes((size_t)(x[i] > 0 ? x[i] : 0), v[i], sizeof v[i]);
    } else {
      snprintf(v[i], sizeof v[i], "%lld", (long long)x[i]);
    }
  }
  kd_ca_printf(b, "| %-23s | %10s | %10s | %10s | %10s |\n", label, v[0], v[1], v[2], v[3]);
}

char *kd_ca_summary(kd_ca *a) {
  kd_ca_stats s;
  kd_ca_get_stats(a, &s);
  kd_ca_buf b = {NULL, 0, 0, 0};
  const char *rule = "|===========================================================================|\n";
  const char *line = "|---------------------------------------------------------------------------|\n";
  kd_ca_printf(&b, "%s", rule);
  kd_ca_printf(&b, "|                kindling CUDA memory summary, device ID %-3d                |\n", a->device);
  kd_ca_printf(&b, "%s", line);
  kd_ca_printf(&b, "|            CUDA OOMs: %-13lld|        cudaMalloc retries: %-10lld|\n", (long long)s.num_ooms,
               (long long)s.num_alloc_retries);
  kd_ca_printf(&b, "%s", rule);
  kd_ca_printf(&b, "| %-23s | %10s | %10s | %10s | %10s |\n", "Metric", "Cur Usage", "Peak Usage", "Tot Alloc",
               "Tot Freed");
  const struct {
    const char *label;
    const kd_ca_stat *arr;
    int bytes;
  } rows[] = {
      {"Allocated memory", s.allocated_bytes, 1}, {"Active memory", s.active_bytes, 1},
      {"Requested memory", s.requested_bytes, 1}, {"GPU reserved memory", s.reserved_bytes, 1},
      {"Non-releasable memory", s.inactive_split_bytes, 1}, {"Allocations", s.allocation, 0},
      {"Active allocs", s.active, 0},             {"GPU reserved segments", s.segment, 0},
      {"Non-releasable allocs", s.inactive_split, 0},
  };
  for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
    kd_ca_printf(&b, "%s", line);
    kd_ca_summary_row(&b, rows[r].label, &rows[r].arr[KD_CA_ALL], rows[r].bytes);
    kd_ca_summary_row(&b, "      from large pool", &rows[r].arr[KD_CA_LARGE_POOL], rows[r].bytes);
    kd_ca_summary_row(&b, "      from small pool", &rows[r].arr[KD_CA_SMALL_POOL], rows[r].bytes);
  }
  kd_ca_printf(&b, "%s", line);
  kd_ca_summary_row(&b, "Oversize allocations", &s.oversize_allocations, 0);
  kd_ca_summary_row(&b, "Oversize GPU segments", &s.oversize_segments, 0);
  kd_ca_printf(&b, "%s", rule);
  return kd_ca_buf_take(&b);
}
