/* tensor.h - the tensor: a storage plus sizes, strides (in elements), a storage offset, a
 * dtype and a dispatch keyset, mirroring PyTorch's TensorImpl. Views are tensors sharing a
 * storage (see src/views/). Refcounted; the JS handle holds one reference.
 *
 * Note [Tensor lifetime]
 * kd_tensor_release() of the last reference frees the struct and drops its storage
 * reference; the storage frees its bytes when its last tensor goes. A JS Tensor's
 * dispose() and its GC finalizer both just release the handle's reference. */
#ifndef KD_TENSOR_H
#define KD_TENSOR_H

#include <stdbool.h>
#include <stdint.h>

#include "core/dtype.h"
#include "core/storage.h"
#include "dispatch/keys.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KD_MAX_DIMS 16

typedef struct kd_tensor {
  int32_t refcount;
  int32_t ndim;
  kd_dtype dtype;
  kd_keyset keys;       /* backend key | Autograd (see dispatch/keys.h) */
  kd_storage *storage;
  int64_t offset;       /* in elements */
  int64_t sizes[KD_MAX_DIMS];
  int64_t strides[KD_MAX_DIMS];
  void *autograd;       /* autograd metadata (requires_grad, grad, grad_fn); NULL until used */
} kd_tensor;

static inline kd_device kd_tensor_device(const kd_tensor *t) { return t->storage->device; }
static inline char *kd_tensor_data(const kd_tensor *t) {
  return (char *)t->storage->data + t->offset * (int64_t)kd_dtype_size(t->dtype);
}
int64_t kd_tensor_numel(const kd_tensor *t);
bool kd_tensor_is_contiguous(const kd_tensor *t);

/* A new contiguous tensor with uninitialised memory. */
kd_status kd_tensor_empty(const int64_t *sizes, int ndim, kd_dtype dtype, kd_device device, kd_tensor **out);
/* A tensor with the same sizes (contiguous), dtype and device as `like` unless overridden. */
kd_status kd_tensor_empty_like(const kd_tensor *like, kd_dtype dtype, kd_tensor **out);
/* A new tensor sharing `base`'s storage with the given geometry. Callers check the geometry
 * against the op's own rules (with the op's message); this checks what no view may break
 * whatever the op: its numel fits in int64 and every element it reaches lies inside the
 * storage (See Note [Checked shape arithmetic] in shape.h). */
kd_status kd_tensor_new_view(const kd_tensor *base, const int64_t *sizes, const int64_t *strides, int ndim,
                             int64_t offset, kd_tensor **out);

static inline void kd_tensor_retain(kd_tensor *t) { __atomic_fetch_add(&t->refcount, 1, __ATOMIC_RELAXED); }
void kd_tensor_release(kd_tensor *t);

/* Shared tensors (See Note [Shared tensors] in tensor.c): share registers t under a new id
 * (process-wide, so another thread may ask for it) and holds a reference to it until unshare;
 * from_shared makes a new tensor with the registered one's geometry, dtype and device over an
 * alias of its storage (KD_ERR_INVALID_ARGUMENT for an id not registered). */
kd_status kd_tensor_share(kd_tensor *t, uint64_t *id);
kd_status kd_tensor_from_shared(uint64_t id, kd_tensor **out);
void kd_tensor_unshare(uint64_t id);

/* Number of kd_tensor structs alive in the process. */
int64_t kd_tensor_live_count(void);

/* Hook that frees autograd metadata when a tensor dies (set by the autograd layer). */
extern void (*kd_tensor_autograd_free_hook)(kd_tensor *t);

/* Keys new tensors get are masked with this (thread-local): inference mode drops Autograd, which
 * marks inference tensors. */
void kd_tensor_set_default_keys_mask(kd_keyset mask);

#ifdef __cplusplus
}
#endif
#endif
