/* alloc_host.h - the caching host allocator behind every CPU storage. Freed blocks are kept
 * in size-class free lists and handed out again, so large buffers are reused without new
 * page faults (see the policy note in alloc_host.c). Thread-safe. */
#ifndef KD_ALLOC_HOST_H
#define KD_ALLOC_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 64-byte aligned; KD_ERR_OOM with a message when the system has no memory left. */
kd_status kd_host_alloc(size_t nbytes, void **out);
void kd_host_free(void *ptr, size_t nbytes);

typedef struct kd_host_alloc_stats {
  int64_t allocated_bytes;      /* bytes in live blocks (rounded sizes)     */
  int64_t cached_bytes;         /* bytes held in the free lists             */
  int64_t peak_allocated_bytes;
  int64_t num_allocs;           /* calls to kd_host_alloc                   */
  int64_t num_cache_hits;       /* ... served from the cache                */
} kd_host_alloc_stats;

void kd_host_alloc_get_stats(kd_host_alloc_stats *out);
/* Returns every cached block to the system. */
void kd_host_alloc_empty_cache(void);

#ifdef __cplusplus
}
#endif
#endif
