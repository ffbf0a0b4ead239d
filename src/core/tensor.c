/* tensor.c - tensor creation and lifetime. See Note [Tensor lifetime] in tensor.h. */
#include "core/tensor.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/shape.h"
#include "core/struct_cache.h"
#include "core/thread_counter.h"

/* this thread's free tensor structs and its part of the live count (Note [Counters per thread]) */
typedef struct kd_tensor_thread {
  kd_struct_cache cache;
  kd_thread_counter live;
} kd_tensor_thread;
static _Thread_local kd_tensor_thread kd_tensor_tls; /* its address is taken once per function: one lookup */
static kd_counter_family kd_tensors_alive = KD_COUNTER_FAMILY_INIT;
void (*kd_tensor_autograd_free_hook)(kd_tensor *t);
static _Thread_local kd_keyset kd_default_keys_mask = KD_KEYSET_ALL;
void kd_tensor_set_default_keys_mask(kd_keyset mask) { kd_default_keys_mask = mask; }

int64_t kd_tensor_numel(const kd_tensor *t) {
  int64_t n = 1;
  for (int i = 0; i < t->ndim; i++) n *= t->sizes[i];
  return n;
}

bool kd_tensor_is_contiguous(const kd_tensor *t) {
  return kd_shape_is_contiguous(t->sizes, t->strides, t->ndim);
}

static kd_status kd_tensor_alloc_struct(kd_tensor **out) {
  kd_tensor_thread *here = &kd_tensor_tls;
  KD_KEEP_IN_REGISTER(here);
  kd_tensor *t = (kd_tensor *)kd_struct_cache_get(&here->cache, sizeof *t, malloc);
  if (!t) return kd_error(KD_ERR_OOM, "out of host memory allocating a tensor");
  t->refcount = 1;
  t->autograd = NULL;
  kd_thread_counter_add(&kd_tensors_alive, &here->live, 1);
  *out = t;
  return KD_OK;
}

kd_status kd_tensor_empty(const int64_t *sizes, int ndim, kd_dtype dtype, kd_device device, kd_tensor **out) {
  if (ndim < 0 || ndim > KD_MAX_DIMS)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "tensors may have at most %d dimensions, got %d", KD_MAX_DIMS, ndim);
  if ((unsigned)dtype >= KD_DTYPE_COUNT) return kd_error(KD_ERR_INVALID_ARGUMENT, "invalid dtype");
  char buf[256];
  for (int i = 0; i < ndim; i++)
    if (sizes[i] < 0)
      return kd_error(KD_ERR_INVALID_ARGUMENT, "Trying to create tensor with negative dimension %lld: %s",
                      (long long)sizes[i], kd_shape_format(sizes, ndim, buf, sizeof buf));
  int64_t numel, nbytes;
  if (kd_shape_numel_checked(sizes, ndim, &numel) != KD_OK ||
      kd_mul_overflows(numel, (int64_t)kd_dtype_size(dtype), &nbytes))
    return kd_error(KD_ERR_INVALID_ARGUMENT, "Storage size calculation overflowed with sizes=%s",
                    kd_shape_format(sizes, ndim, buf, sizeof buf));
  if (numel > INT64_MAX / 16) return kd_error(KD_ERR_OOM, "tensor of this shape is too large to allocate");
  kd_storage *s = NULL;
  KD_TRY(kd_storage_new(device, (size_t)numel * kd_dtype_size(dtype), &s));
  kd_tensor *t = NULL;
  kd_status st = kd_tensor_alloc_struct(&t);
  if (st != KD_OK) { kd_storage_release(s); return st; }
  t->ndim = ndim;
  t->dtype = dtype;
  t->keys = (kd_keyset)((KD_KEYSET(kd_device_key(device)) | KD_KEYSET(KD_KEY_AUTOGRAD)) & kd_default_keys_mask);
  t->storage = s;
  t->offset = 0;
  for (int i = 0; i < ndim; i++) t->sizes[i] = sizes[i]; /* a few dims: cheaper than the memcpy's rep movs */
  kd_shape_contiguous_strides(sizes, ndim, t->strides);
  *out = t;
  return KD_OK;
}

kd_status kd_tensor_empty_like(const kd_tensor *like, kd_dtype dtype, kd_tensor **out) {
  return kd_tensor_empty(like->sizes, like->ndim, dtype, kd_tensor_device(like), out);
}

kd_status kd_tensor_new_view(const kd_tensor *base, const int64_t *sizes, const int64_t *strides, int ndim,
                             int64_t offset, kd_tensor **out) {
  if (ndim < 0 || ndim > KD_MAX_DIMS)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "tensors may have at most %d dimensions, got %d", KD_MAX_DIMS, ndim);
  for (int i = 0; i < ndim; i++)
    if (sizes[i] < 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "negative size %lld in a view", (long long)sizes[i]);
  int64_t numel, lowest, highest;
  KD_TRY(kd_shape_numel_checked(sizes, ndim, &numel));
  KD_TRY(kd_shape_extent(sizes, strides, ndim, offset, &lowest, &highest));
  int64_t capacity = (int64_t)(base->storage->nbytes / kd_dtype_size(base->dtype)), offset_bytes;
  /* an empty view may sit past the end, as in PyTorch, but its data pointer must be computable */
  if (offset < 0 || kd_mul_overflows(offset, (int64_t)kd_dtype_size(base->dtype), &offset_bytes))
    return kd_error(KD_ERR_INVALID_ARGUMENT, "invalid storage offset %lld for a view", (long long)offset);
  if (numel > 0 && (lowest < 0 || highest >= capacity)) {
    char a[256], b[256];
    return kd_error(KD_ERR_INDEX, "a view with sizes %s, strides %s and storage offset %lld reaches element %lld, "
                    "outside its storage of %lld elements", kd_shape_format(sizes, ndim, a, sizeof a),
                    kd_shape_format(strides, ndim, b, sizeof b), (long long)offset,
                    (long long)(lowest < 0 ? lowest : highest), (long long)capacity);
  }
  kd_tensor *t = NULL;
  KD_TRY(kd_tensor_alloc_struct(&t));
  t->ndim = ndim;
  t->dtype = base->dtype;
  t->keys = base->keys;
  t->storage = base->storage;
  kd_storage_retain(base->storage);
  t->offset = offset;
  if (ndim) {
    memcpy(t->sizes, sizes, sizeof(int64_t) * ndim);
    memcpy(t->strides, strides, sizeof(int64_t) * ndim);
  }
  *out = t;
  return KD_OK;
}

void kd_tensor_release(kd_tensor *t) {
  if (!t || !kd_refcount_drop(&t->refcount)) return;
  if (t->autograd && kd_tensor_autograd_free_hook) kd_tensor_autograd_free_hook(t);
  kd_storage_release(t->storage);
  kd_tensor_thread *here = &kd_tensor_tls;
  KD_KEEP_IN_REGISTER(here);
  kd_thread_counter_add(&kd_tensors_alive, &here->live, -1);
  kd_struct_cache_put(&here->cache, t, free);
}

int64_t kd_tensor_live_count(void) { return kd_counter_family_sum(&kd_tensors_alive); }

/* Note [Shared tensors]
 * Worker threads share the process's memory, but a JS Tensor cannot cross threads: a thread
 * registers a tensor here (kd.multiprocessing.reduceTensor, Tensor#shareMemory_), posts the id,
 * and the other thread makes its own tensor over the same bytes from it. That tensor's storage
 * is an alias (See Note [Storage aliases] in storage.c), so the threads see each other's writes
 * but keep their own version counters. The table is process-wide (one mutex); an entry holds a
 * reference to the registered tensor until kd_tensor_unshare, so the bytes outlive the thread
 * that registered them while the entry or any alias lives. */
typedef struct { uint64_t id; kd_tensor *t; } kd_share_entry;
static pthread_mutex_t kd_share_mu = PTHREAD_MUTEX_INITIALIZER;
static kd_share_entry *kd_share_tab;
static size_t kd_share_n, kd_share_cap;
static uint64_t kd_share_next = 1;

kd_status kd_tensor_share(kd_tensor *t, uint64_t *id) {
  pthread_mutex_lock(&kd_share_mu);
  if (kd_share_n == kd_share_cap) {
    size_t cap = kd_share_cap ? 2 * kd_share_cap : 64;
    kd_share_entry *tab = (kd_share_entry *)realloc(kd_share_tab, cap * sizeof *tab);
    if (!tab) {
      pthread_mutex_unlock(&kd_share_mu);
      return kd_error(KD_ERR_OOM, "out of host memory registering a shared tensor");
    }
    kd_share_tab = tab;
    kd_share_cap = cap;
  }
  kd_tensor_retain(t);
  *id = kd_share_next++;
  kd_share_tab[kd_share_n++] = (kd_share_entry){*id, t};
  pthread_mutex_unlock(&kd_share_mu);
  return KD_OK;
}

kd_status kd_tensor_from_shared(uint64_t id, kd_tensor **out) {
  kd_status st = KD_OK;
  pthread_mutex_lock(&kd_share_mu);
  kd_tensor *src = NULL;
  for (size_t i = 0; i < kd_share_n; i++)
    if (kd_share_tab[i].id == id) { src = kd_share_tab[i].t; break; }
  if (!src) {
    st = kd_error(KD_ERR_INVALID_ARGUMENT, "no shared tensor with id %llu (it was never shared, or was released)",
                  (unsigned long long)id);
  } else {
    kd_storage *alias = NULL;
    kd_tensor *t = NULL;
    st = kd_storage_new_alias(src->storage, &alias);
    if (st == KD_OK) st = kd_tensor_alloc_struct(&t);
    if (st == KD_OK) {
      t->ndim = src->ndim;
      t->dtype = src->dtype;
      t->keys = src->keys;
      t->storage = alias;
      t->offset = src->offset;
      memcpy(t->sizes, src->sizes, sizeof t->sizes);
      memcpy(t->strides, src->strides, sizeof t->strides);
      *out = t;
    } else {
      kd_storage_release(alias);
    }
  }
  pthread_mutex_unlock(&kd_share_mu);
  return st;
}

void kd_tensor_unshare(uint64_t id) {
  kd_tensor *t = NULL;
  pthread_mutex_lock(&kd_share_mu);
  for (size_t i = 0; i < kd_share_n; i++) {
    if (kd_share_tab[i].id == id) {
      t = kd_share_tab[i].t;
      kd_share_tab[i] = kd_share_tab[--kd_share_n];
      break;
    }
  }
  pthread_mutex_unlock(&kd_share_mu);
  kd_tensor_release(t);
}

