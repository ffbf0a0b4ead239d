/* storage.c - storage lifetime. CPU bytes come from the caching host allocator, device bytes
 * from the device backend's allocator (the CUDA caching allocator). */
#include "core/storage.h"

#include <stdlib.h>

#include "core/alloc_host.h"
#include "core/struct_cache.h"

static _Thread_local kd_struct_cache kd_storage_cache;

static int64_t kd_live_bytes[KD_DEVICE_TYPE_COUNT];

kd_status kd_storage_new(kd_device device, size_t nbytes, kd_storage **out) {
  const kd_device_backend *be = NULL;
  KD_TRY(kd_device_backend_get((kd_device_type)device.type, &be));
  kd_storage *s = (kd_storage *)kd_struct_cache_get(&kd_storage_cache, sizeof *s, malloc);
  if (!s) return kd_error(KD_ERR_OOM, "out of host memory allocating a storage");
  s->refcount = 1;
  s->version = 0;
  s->device = device;
  s->nbytes = nbytes;
  s->data = NULL;
  kd_status st = be->alloc(device.index, nbytes, &s->data);
  if (st != KD_OK) { kd_struct_cache_put(&kd_storage_cache, s, free); return st; }
  __atomic_fetch_add(&kd_live_bytes[device.type], (int64_t)nbytes, __ATOMIC_RELAXED);
  *out = s;
  return KD_OK;
}

void kd_storage_release(kd_storage *s) {
  if (!s || __atomic_sub_fetch(&s->refcount, 1, __ATOMIC_ACQ_REL) != 0) return;
  const kd_device_backend *be = NULL;
  if (kd_device_backend_get((kd_device_type)s->device.type, &be) == KD_OK) be->free(s->device.index, s->data, s->nbytes);
  __atomic_fetch_sub(&kd_live_bytes[s->device.type], (int64_t)s->nbytes, __ATOMIC_RELAXED);
  kd_struct_cache_put(&kd_storage_cache, s, free);
}

int64_t kd_storage_live_bytes(kd_device_type type) {
  return __atomic_load_n(&kd_live_bytes[type], __ATOMIC_RELAXED);
}
