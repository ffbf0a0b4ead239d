/* storage.c - storage lifetime. CPU bytes come from the caching host allocator, device bytes
 * from the device backend's allocator (the CUDA caching allocator).
 *
 * Note [Small storages]
 * A CPU storage of at most KD_STORAGE_INLINE_BYTES (a scalar, a loss, a 4x4 matrix) keeps its
 * bytes in the struct itself (64-byte aligned, as the host allocator's blocks are), so the op
 * that makes it takes nothing from the host allocator and its lock: on the per-op path of small
 * tensors that lock and its bookkeeping were a tenth of the native time. Such bytes are counted
 * in kd_storage_live_bytes (hostBytesInUse), per thread (Note [Counters per thread]), but not in
 * the host allocator's statistics (hostBytesAllocated) nor in the external memory reported to V8
 * (a million of them is 64 MB, next to the million JS objects that V8 sees anyway). Pinned
 * storages (kd_storage_set_pinning) always come from the backend. */
#include "core/storage.h"

#include <stdlib.h>

#include "core/alloc_host.h"
#include "core/struct_cache.h"
#include "core/thread_counter.h"

/* this thread's free storage structs, pinning flag and part of the small storages' bytes */
typedef struct kd_storage_thread {
  kd_struct_cache cache;
  bool pin;
  kd_thread_counter small_bytes;
} kd_storage_thread;
static _Thread_local kd_storage_thread kd_storage_tls; /* its address is taken once per function: one lookup */

int64_t kd_storage_live[KD_DEVICE_TYPE_COUNT]; /* bytes of allocated live storages per device type */
static kd_counter_family kd_storage_small_bytes = KD_COUNTER_FAMILY_INIT;

int64_t kd_storage_live_bytes(kd_device_type type) {
  int64_t n = kd_storage_allocated_bytes(type);
  return type == KD_DEVICE_CPU ? n + kd_counter_family_sum(&kd_storage_small_bytes) : n;
}

void kd_storage_set_pinning(bool on) { kd_storage_tls.pin = on; }
bool kd_storage_pinning(void) { return kd_storage_tls.pin; }

/* The struct's own alignment (64, for `small`): malloc gives 16. */
static void *kd_storage_struct_alloc(size_t size) { return aligned_alloc(_Alignof(kd_storage), size); }

kd_status kd_storage_new(kd_device device, size_t nbytes, kd_storage **out) {
  const kd_device_backend *be = NULL;
  KD_TRY(kd_device_backend_get((kd_device_type)device.type, &be));
  kd_storage_thread *here = &kd_storage_tls;
  KD_KEEP_IN_REGISTER(here);
  kd_storage *s = (kd_storage *)kd_struct_cache_get(&here->cache, sizeof *s, kd_storage_struct_alloc);
  if (!s) return kd_error(KD_ERR_OOM, "out of host memory allocating a storage");
  s->refcount = 1;
  s->version = 0;
  s->device = device;
  s->nbytes = nbytes;
  s->data = NULL;
  s->owner = NULL;
  if (device.type == KD_DEVICE_CPU && nbytes <= KD_STORAGE_INLINE_BYTES && !here->pin) {
    s->data = s->small;
    kd_thread_counter_add(&kd_storage_small_bytes, &here->small_bytes, (int64_t)nbytes);
  } else {
    kd_status st = be->alloc(device.index, nbytes, &s->data);
    if (st != KD_OK) { kd_struct_cache_put(&here->cache, s, free); return st; }
    __atomic_fetch_add(&kd_storage_live[device.type], (int64_t)nbytes, __ATOMIC_RELAXED);
  }
  *out = s;
  return KD_OK;
}

/* Note [Storage aliases]
 * A tensor shared with another thread (kd_tensor_share) is seen there through an alias: a
 * storage struct whose data pointer is the owner's, with a refcount and a version counter of
 * its own. The bytes are the same, so in-place updates on either side are seen by both (the
 * point of sharing: Hogwild training), but autograd's saved-tensor checks on one thread do not
 * trip over the other thread's in-place updates, as in PyTorch, where each process sharing a
 * storage has its own version counters. The alias frees nothing: its last release drops its
 * reference to the owner, and its bytes are not counted twice in kd_storage_live. */
kd_status kd_storage_new_alias(kd_storage *owner, kd_storage **out) {
  if (owner->owner) owner = owner->owner;
  kd_storage *s = (kd_storage *)kd_struct_cache_get(&kd_storage_tls.cache, sizeof *s, kd_storage_struct_alloc);
  if (!s) return kd_error(KD_ERR_OOM, "out of host memory allocating a storage");
  s->refcount = 1;
  s->version = 0;
  s->device = owner->device;
  s->nbytes = owner->nbytes;
  s->data = owner->data;
  s->owner = owner;
  kd_storage_retain(owner);
  *out = s;
  return KD_OK;
}

void kd_storage_release(kd_storage *s) {
  if (!s || !kd_refcount_drop(&s->refcount)) return;
  if (s->owner) {
    kd_storage_release(s->owner);
    kd_struct_cache_put(&kd_storage_tls.cache, s, free);
    return;
  }
  const kd_device_backend *be = NULL;
  kd_storage_thread *here = &kd_storage_tls;
  KD_KEEP_IN_REGISTER(here);
  if (s->data == s->small) {
    kd_thread_counter_add(&kd_storage_small_bytes, &here->small_bytes, -(int64_t)s->nbytes);
  } else {
    if (kd_device_backend_get((kd_device_type)s->device.type, &be) == KD_OK) be->free(s->device.index, s->data, s->nbytes);
    __atomic_fetch_sub(&kd_storage_live[s->device.type], (int64_t)s->nbytes, __ATOMIC_RELAXED);
  }
  kd_struct_cache_put(&here->cache, s, free);
}
