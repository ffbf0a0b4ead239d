/* storage.h - refcounted bytes on one device, with a version counter that in-place ops bump
 * (autograd checks it to detect a saved tensor modified in place). */
#ifndef KD_STORAGE_H
#define KD_STORAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/device.h"
#include "core/refcount.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of a CPU storage kept inside its struct (See Note [Small storages] in storage.c). */
#define KD_STORAGE_INLINE_BYTES 64

typedef struct kd_storage {
  int32_t refcount; /* atomic (GCC builtins, so the header also compiles as C++) */
  uint32_t version;
  kd_device device;
  size_t nbytes;
  void *data;       /* == small for a storage of at most KD_STORAGE_INLINE_BYTES on the CPU */
#ifdef __cplusplus
  alignas(64) unsigned char small[KD_STORAGE_INLINE_BYTES];
#else
  _Alignas(64) unsigned char small[KD_STORAGE_INLINE_BYTES];
#endif
  struct kd_storage *owner; /* non-NULL for an alias: `data` is owner's (See Note [Storage aliases]) */
} kd_storage;

kd_status kd_storage_new(kd_device device, size_t nbytes, kd_storage **out);
/* A storage over owner's bytes with a version counter of its own; it holds a reference to
 * owner (to owner's own owner when owner is an alias). See Note [Storage aliases]. */
kd_status kd_storage_new_alias(kd_storage *owner, kd_storage **out);
/* While set on this thread, CPU storages come from the device backend even when small (pinned
 * host memory: the CUDA bridge's wrapped CPU allocator reads it too). */
void kd_storage_set_pinning(bool on);
bool kd_storage_pinning(void);
static inline void kd_storage_retain(kd_storage *s) { __atomic_fetch_add(&s->refcount, 1, __ATOMIC_RELAXED); }
void kd_storage_release(kd_storage *s);
static inline void kd_storage_bump_version(kd_storage *s) { __atomic_fetch_add(&s->version, 1, __ATOMIC_RELAXED); }

/* Bytes held by live storages, per device type (for kd.memory()): exact, summed over threads. */
int64_t kd_storage_live_bytes(kd_device_type type);
/* The part of those bytes that came from the device's allocator, i.e. without small CPU storages
 * (Note [Small storages]): one load, for checks on every op (reporting external memory to V8). */
extern int64_t kd_storage_live[KD_DEVICE_TYPE_COUNT];
static inline int64_t kd_storage_allocated_bytes(kd_device_type type) {
  return __atomic_load_n(&kd_storage_live[type], __ATOMIC_RELAXED);
}

#ifdef __cplusplus
}
#endif
#endif
