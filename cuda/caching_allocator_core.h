/* caching_allocator_core.h - the device-independent core of the CUDA caching allocator: pools,
 * size rounding, block splitting and coalescing, stream-aware reuse, OOM retry, statistics,
 * snapshots and KINDLING_CUDA_ALLOC_CONF parsing, after PyTorch's CUDACachingAllocator (see
 * docs/CUDA.md for the policy).
 *
 * Plain C that is also valid C++: it contains no CUDA call. The device is a table of function
 * pointers (kd_ca_device_ops): cuda/caching_allocator.cu passes cudaMalloc/cudaFree/events, and
 * src/cuda_bridge/alloc_fake.c compiles the same core into kindling.node with a fake device
 * (addresses without memory, events completed on demand) so test/cuda_allocator.test.js tests
 * the policy on a machine without a GPU. One kd_ca per device; every entry is thread-safe. */
#ifndef KD_CACHING_ALLOCATOR_CORE_H
#define KD_CACHING_ALLOCATOR_CORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Policy constants (PyTorch's). */
#define KD_CA_MIN_BLOCK ((size_t)512)                    /* every size is rounded up to 512 bytes */
#define KD_CA_SMALL_SIZE ((size_t)1 << 20)               /* <= 1 MiB: the small pool              */
#define KD_CA_SMALL_BUFFER ((size_t)2 << 20)             /* small pool segments are 2 MiB         */
#define KD_CA_LARGE_BUFFER ((size_t)20 << 20)            /* 1..10 MiB requests get 20 MiB segments */
#define KD_CA_MIN_LARGE_ALLOC ((size_t)10 << 20)         /* >= 10 MiB: own segment, 2 MiB rounded */
#define KD_CA_ROUND_LARGE ((size_t)2 << 20)

/* Device operations. Streams are opaque non-zero-or-zero handles (cudaStream_t as uintptr_t);
 * events are opaque pointers owned by the ops. Each returns 0 on success. */
typedef struct kd_ca_device_ops {
  void *ctx;
  /* 0 ok, 1 out of memory, -1 another error (message in err). */
  int (*malloc)(void *ctx, size_t nbytes, void **out, char *err, size_t errn);
  void (*free)(void *ctx, void *ptr);
  /* A new (or recycled) event recorded on `stream`; 0 ok. */
  int (*event_record)(void *ctx, uintptr_t stream, void **event);
  /* 1 when the event has completed, 0 when not yet (errors count as completed). */
  int (*event_query)(void *ctx, void *event);
  void (*event_synchronize)(void *ctx, void *event);
  void (*event_release)(void *ctx, void *event);
  /* Free and total device memory, for OOM messages and the memory fraction. */
  void (*mem_info)(void *ctx, size_t *free_bytes, size_t *total_bytes);
} kd_ca_device_ops;

typedef struct kd_ca_config {
  size_t max_split_size;        /* blocks this big or bigger are never split; SIZE_MAX: no limit */
  double gc_threshold;          /* 0: off; else reclaim cached blocks above this fraction */
} kd_ca_config;

/* Parses "max_split_size_mb:128,garbage_collection_threshold:0.6" (NULL or "" gives the
 * defaults). Returns 0, or -1 with PyTorch's message in err. */
int kd_ca_parse_conf(const char *s, kd_ca_config *out, char *err, size_t errn);

typedef struct kd_ca_stat {
  int64_t current, peak, allocated, freed;
} kd_ca_stat;

enum { KD_CA_ALL = 0, KD_CA_SMALL_POOL = 1, KD_CA_LARGE_POOL = 2, KD_CA_STAT_TYPES = 3 };

typedef struct kd_ca_stats {
  kd_ca_stat allocation[KD_CA_STAT_TYPES];       /* live blocks handed out */
  kd_ca_stat segment[KD_CA_STAT_TYPES];          /* device allocations */
  kd_ca_stat active[KD_CA_STAT_TYPES];           /* allocated or waiting for stream events */
  kd_ca_stat inactive_split[KD_CA_STAT_TYPES];   /* free blocks inside partly used segments */
  kd_ca_stat allocated_bytes[KD_CA_STAT_TYPES];
  kd_ca_stat reserved_bytes[KD_CA_STAT_TYPES];
  kd_ca_stat active_bytes[KD_CA_STAT_TYPES];
  kd_ca_stat inactive_split_bytes[KD_CA_STAT_TYPES];
  kd_ca_stat requested_bytes[KD_CA_STAT_TYPES];
  kd_ca_stat oversize_allocations;
  kd_ca_stat oversize_segments;
  int64_t num_alloc_retries;
  int64_t num_ooms;
  int64_t num_device_alloc;
  int64_t num_device_free;
  int64_t max_split_size;                        /* -1: no limit */
} kd_ca_stats;

typedef struct kd_ca kd_ca;

kd_ca *kd_ca_create(const kd_ca_device_ops *ops, const kd_ca_config *config, int device);
/* Gives every segment back (live blocks included) and frees the allocator. */
void kd_ca_destroy(kd_ca *a);

/* 0 ok (*out NULL for nbytes 0); 1 out of memory after freeing the cache and retrying, with
 * PyTorch's message and a memory summary in err; -1 another device error. */
int kd_ca_malloc(kd_ca *a, size_t nbytes, uintptr_t stream, void **out, char *err, size_t errn);
/* 0 ok; -1 for a pointer this allocator did not hand out. */
int kd_ca_free(kd_ca *a, void *ptr);
/* The block holding ptr is used by `stream` too: its memory is reused only after the work
 * queued on that stream at free time has finished. 0 ok, -1 unknown pointer. */
int kd_ca_record_stream(kd_ca *a, void *ptr, uintptr_t stream);
/* Size the block of an allocated pointer has (rounded), 0 if unknown. */
size_t kd_ca_block_size(kd_ca *a, void *ptr);
/* Graph-private pools (Note [Graph-private pools] in caching_allocator_core.c). From
 * begin_capture to end_capture, allocations on `stream` come from private pool `pool` (a
 * non-zero id; a new id makes a pool with one use, a known one gains a use: pools shared
 * between graphs). 0 ok, -1 for pool 0, a stream already capturing, or too many captures/pools.
 * release_private_pool drops one use (a graph's reset); at zero the pool's memory goes back to
 * the device as it becomes free. -1 for an unknown pool. private_pool_uses: its use count. */
int kd_ca_begin_capture(kd_ca *a, uint64_t pool, uintptr_t stream);
void kd_ca_end_capture(kd_ca *a, uintptr_t stream);
int kd_ca_release_private_pool(kd_ca *a, uint64_t pool);
int kd_ca_private_pool_uses(kd_ca *a, uint64_t pool);
/* Waits for pending stream events and gives every fully free segment back to the device. */
void kd_ca_empty_cache(kd_ca *a);
void kd_ca_reset_peak(kd_ca *a);
void kd_ca_reset_accumulated(kd_ca *a);
/* Caps reserved memory at fraction * total device memory (0 < fraction <= 1); -1 if out of range. */
int kd_ca_set_memory_fraction(kd_ca *a, double fraction);
void kd_ca_get_stats(kd_ca *a, kd_ca_stats *out);
/* Completed stream events are collected (blocks return to their pool); returns how many
 * events are still pending. */
int kd_ca_process_events(kd_ca *a);

/* malloc'd strings (free with free()), NULL when out of host memory:
 *   stats:    {"allocated_bytes.all.current": n, ...}   (PyTorch's memory_stats keys)
 *   snapshot: [{"device", "address", "totalSize", "allocatedSize", "activeSize",
 *               "requestedSize", "stream", "segmentType", "blocks": [{"address", "size",
 *               "requestedSize", "state"}]}]           (PyTorch's memory_snapshot)
 *   summary:  a text table (PyTorch's memory_summary) */
char *kd_ca_stats_json(kd_ca *a);
char *kd_ca_snapshot_json(kd_ca *a);
char *kd_ca_summary(kd_ca *a);

/* "2.00 GiB" */
void kd_ca_format_bytes(size_t n, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
