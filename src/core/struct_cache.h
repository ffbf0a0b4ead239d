/* struct_cache.h - thread-local free lists for the small structs every op allocates
 * (kd_tensor, kd_storage). A 1-element a.add(b) allocates both; glibc malloc/free of ~300-byte
 * blocks was a quarter of the per-op time. Each thread keeps up to KD_STRUCT_CACHE_MAX freed
 * structs of each kind; a struct freed on another thread simply joins that thread's list. */
#ifndef KD_STRUCT_CACHE_H
#define KD_STRUCT_CACHE_H

#include <stddef.h>

#define KD_STRUCT_CACHE_MAX 256

typedef struct kd_struct_cache {
  void *head;   /* singly linked through the first word of each free struct */
  int count;
} kd_struct_cache;

static inline void *kd_struct_cache_get(kd_struct_cache *c, size_t size, void *(*fallback)(size_t)) {
  void *p = c->head;
  if (p) {
    c->head = *(void **)p;
    c->count--;
    return p;
  }
  return fallback(size);
}

static inline void kd_struct_cache_put(kd_struct_cache *c, void *p, void (*fallback)(void *)) {
  if (c->count >= KD_STRUCT_CACHE_MAX) {
    fallback(p);
    return;
  }
  *(void **)p = c->head;
  c->head = p;
  c->count++;
}

#endif
