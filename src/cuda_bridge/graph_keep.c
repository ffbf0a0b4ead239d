/* graph_keep.c - the storages a CUDA graph keeps alive: every storage a kernel captured into it
 * reads or writes, referenced from the capture's begin until the graph is reset (or collected).
 *
 * Note [Storages a CUDA graph keeps]: a replay runs the captured kernels on the addresses they
 * were captured with. Memory the capture allocated comes from the graph's private pool (Note
 * [Graph-private pools] in cuda/caching_allocator_core.c), but the tensors the captured work
 * reads and writes may be older (the static inputs, parameters, optimizer state) or come from
 * another graph's pool. Were one of them disposed, its block would go back to the cache and be
 * handed to a new tensor (or, after emptyCache, to the device), and each replay would then write
 * into that tensor or into freed memory. So while a capture runs on a thread, the dispatcher
 * calls kd_cuda_graph_keep_note after every kernel at the CUDA key, which takes a reference on
 * the storage of each tensor argument and output (a CPU tensor too: a captured host-to-device
 * copy reads it at replay). The end of the capture hands the set to the graph (keyed by its
 * handle); the graph's reset drops it. A capture that failed or was discarded drops it at once.
 * Storages the capture's own pool already reserves are kept too: one rule, whatever pool a
 * storage came from, and a static output disposed by the user stays valid for the graph. */
#include "cuda_bridge/graph_keep.h"

#include <pthread.h>
#include <stdlib.h>

#include "core/storage.h"

typedef struct kd_cuda_keep {
  int device;
  uint64_t graph;     /* the graph's handle once the capture ended (0 while it runs) */
  kd_storage **set;   /* open addressing, cap a power of two, at most half full */
  size_t n, cap;
  struct kd_cuda_keep *next;
} kd_cuda_keep;

static _Thread_local kd_cuda_keep *kd_keep_open; /* this thread's captures, innermost first */
static kd_cuda_keep *kd_keep_graphs;             /* captured graphs, under kd_keep_mu */
static int kd_keep_captures;                     /* captures running in the process, under kd_keep_mu */
static pthread_mutex_t kd_keep_mu = PTHREAD_MUTEX_INITIALIZER;

static void kd_keep_free(kd_cuda_keep *k) {
  if (!k) return;
  for (size_t i = 0; i < k->cap; i++)
    if (k->set[i]) kd_storage_release(k->set[i]);
  free(k->set);
  free(k);
}

static size_t kd_keep_slot(const kd_storage *s, size_t cap) {
  uintptr_t h = (uintptr_t)s;
  h ^= h >> 17;
  h *= (uintptr_t)0x9E3779B97F4A7C15ull;
  return (size_t)(h >> 7) & (cap - 1);
}

/* Adds s (a new reference) unless already there. false when out of host memory. */
static bool kd_keep_add(kd_cuda_keep *k, kd_storage *s) {
  if (2 * (k->n + 1) > k->cap) {
    const size_t cap = k->cap ? 2 * k->cap : 64;
    kd_storage **set = (kd_storage **)calloc(cap, sizeof *set);
    if (!set) return false;
    for (size_t i = 0; i < k->cap; i++) {
      if (!k->set[i]) continue;
      size_t j = kd_keep_slot(k->set[i], cap);
      while (set[j]) j = (j + 1) & (cap - 1);
      set[j] = k->set[i];
    }
    free(k->set);
    k->set = set;
    k->cap = cap;
  }
  size_t j = kd_keep_slot(s, k->cap);
  for (; k->set[j]; j = (j + 1) & (k->cap - 1))
    if (k->set[j] == s) return true;
  kd_storage_retain(s);
  k->set[j] = s;
  k->n++;
  return true;
}

static void kd_keep_tensor(kd_cuda_keep *k, const kd_tensor *t) {
  /* out of host memory: the storage goes unkept, as before this mechanism; the capture goes on */
  if (t && t->storage) (void)kd_keep_add(k, t->storage);
}

static void kd_keep_value(kd_cuda_keep *k, const kd_value *v) {
  if (v->kind == KD_VALUE_TENSOR) {
    kd_keep_tensor(k, v->v.t);
  } else if (v->kind == KD_VALUE_TENSORLIST) {
    for (int j = 0; j < v->v.tlist.n; j++) kd_keep_tensor(k, v->v.tlist.data[j]);
  }
}

/* The CUDA device of the first CUDA tensor of v, or -1. */
static int kd_keep_device_of(const kd_value *v) {
  if (v->kind == KD_VALUE_TENSOR && v->v.t && kd_tensor_device(v->v.t).type == KD_DEVICE_CUDA)
    return kd_tensor_device(v->v.t).index;
  if (v->kind == KD_VALUE_TENSORLIST)
    for (int j = 0; j < v->v.tlist.n; j++)
      if (v->v.tlist.data[j] && kd_tensor_device(v->v.tlist.data[j]).type == KD_DEVICE_CUDA)
        return kd_tensor_device(v->v.tlist.data[j]).index;
  return -1;
}

static void kd_cuda_graph_keep_note(const kd_op_info *op, const kd_value *args, const kd_value *outs) {
  if (!kd_keep_open) return; /* a capture runs on another thread */
  int device = -1;
  for (int i = 0; i < op->nargs && device < 0; i++) device = kd_keep_device_of(&args[i]);
  for (int i = 0; outs && i < KD_OP_MAX_OUTS && device < 0; i++) device = kd_keep_device_of(&outs[i]);
  kd_cuda_keep *k = kd_keep_open;
  while (k && k->device != device) k = k->next;
  if (!k) return; /* no capture on this thread runs on the kernel's device */
  for (int i = 0; i < op->nargs; i++) kd_keep_value(k, &args[i]);
  for (int i = 0; outs && i < KD_OP_MAX_OUTS; i++) kd_keep_value(k, &outs[i]);
}

kd_status kd_cuda_graph_keep_begin(int device) {
  kd_cuda_keep *k = (kd_cuda_keep *)calloc(1, sizeof *k);
  if (!k) return kd_error(KD_ERR_OOM, "out of host memory for a CUDA graph capture");
  k->device = device;
  k->next = kd_keep_open;
  kd_keep_open = k;
  pthread_mutex_lock(&kd_keep_mu);
  if (kd_keep_captures++ == 0) kd_dispatch_set_capture_note(kd_cuda_graph_keep_note);
  pthread_mutex_unlock(&kd_keep_mu);
  return KD_OK;
}

void kd_cuda_graph_keep_end(int device, uint64_t graph) {
  kd_cuda_keep **at = &kd_keep_open;
  while (*at && (*at)->device != device) at = &(*at)->next;
  kd_cuda_keep *k = *at;
  if (!k) return;
  *at = k->next;
  pthread_mutex_lock(&kd_keep_mu);
  if (--kd_keep_captures == 0) kd_dispatch_set_capture_note(NULL);
  if (graph) {
    k->graph = graph;
    k->next = kd_keep_graphs;
    kd_keep_graphs = k;
    k = NULL;
  }
  pthread_mutex_unlock(&kd_keep_mu);
  kd_keep_free(k);
}

void kd_cuda_graph_keep_drop(int device, uint64_t graph) {
  pthread_mutex_lock(&kd_keep_mu);
  kd_cuda_keep **at = &kd_keep_graphs;
  while (*at && ((*at)->graph != graph || (*at)->device != device)) at = &(*at)->next;
  kd_cuda_keep *k = *at;
  if (k) *at = k->next;
  pthread_mutex_unlock(&kd_keep_mu);
  kd_keep_free(k); /* outside the lock: a release may free device memory */
}
