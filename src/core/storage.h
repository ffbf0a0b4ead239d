/* storage.h - refcounted bytes on one device, with a version counter that in-place ops bump
 * (autograd checks it to detect a saved tensor modified in place). */
#ifndef KD_STORAGE_H
#define KD_STORAGE_H

#include <stddef.h>
#include <stdint.h>

#include "core/device.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kd_storage {
  int32_t refcount; /* atomic (GCC builtins, so the header also compiles as C++) */
  uint32_t version;
  kd_device device;
  size_t nbytes;
  void *data;
} kd_storage;

kd_status kd_storage_new(kd_device device, size_t nbytes, kd_storage **out);
static inline void kd_storage_retain(kd_storage *s) { __atomic_fetch_add(&s->refcount, 1, __ATOMIC_RELAXED); }
void kd_storage_release(kd_storage *s);
static inline void kd_storage_bump_version(kd_storage *s) { __atomic_fetch_add(&s->version, 1, __ATOMIC_RELAXED); }

/* Bytes held by live storages, per device type (for kd.memory()). */
int64_t kd_storage_live_bytes(kd_device_type type);

#ifdef __cplusplus
}
#endif
#endif
