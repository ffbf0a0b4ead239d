/* host_alloc.cu - the pinned (page-locked) host memory caching allocator, after PyTorch's
 * CachingHostAllocator: sizes rounded up to a power of two (at least 4 KiB), blocks from
 * cudaHostAlloc kept after free in per-size free lists, and a block used by an asynchronous
 * copy (kd_cu_host_record records an event on the copy's stream) goes back to its free list
 * only once those events have completed. Live blocks are found by address (ordered map, so an
 * interior pointer of a view finds its block). One mutex. Memory is given back only at exit. */
#include <map>
#include <mutex>
#include <vector>

#include "kd_cuda_internal.h"

typedef struct kd_cu_host_block {
  size_t size;
  bool allocated;
  std::vector<cudaEvent_t> events;
} kd_cu_host_block;

static std::mutex kd_cu_host_mu;
static std::map<char *, kd_cu_host_block> *kd_cu_host_blocks;  /* every block, by address */
static std::multimap<size_t, char *> *kd_cu_host_free_lists;   /* free blocks by size */

static size_t kd_cu_host_round(size_t n) {
  size_t r = 4096;
  while (r < n) r <<= 1;
  return r;
}

/* Moves freed blocks whose events completed to the free lists. Called with the mutex held. */
static void kd_cu_host_process_events(void) {
  for (auto &kv : *kd_cu_host_blocks) {
    kd_cu_host_block &b = kv.second;
    if (b.allocated || b.events.empty()) continue;
    bool done = true;
    for (cudaEvent_t e : b.events) {
      cudaError_t r = cudaEventQuery(e);
      if (r == cudaErrorNotReady) {
        (void)cudaGetLastError();
        done = false;
        break;
      }
      if (r != cudaSuccess) (void)cudaGetLastError();
    }
    if (!done) continue;
    for (cudaEvent_t e : b.events) cudaEventDestroy(e);
    b.events.clear();
    kd_cu_host_free_lists->insert({b.size, kv.first});
  }
}

kd_cuda_status kd_cu_host_alloc(size_t nbytes, void **out) {
  *out = NULL;
  KD_CU_TRY(kd_cu_ready());
  if (nbytes == 0) return KD_CUDA_OK;
  size_t size = kd_cu_host_round(nbytes);
  std::lock_guard<std::mutex> lock(kd_cu_host_mu);
  if (!kd_cu_host_blocks) {
    kd_cu_host_blocks = new std::map<char *, kd_cu_host_block>();
    kd_cu_host_free_lists = new std::multimap<size_t, char *>();
  }
  kd_cu_host_process_events();
  auto it = kd_cu_host_free_lists->find(size);
  if (it != kd_cu_host_free_lists->end()) {
    char *p = it->second;
    kd_cu_host_free_lists->erase(it);
    (*kd_cu_host_blocks)[p].allocated = true;
    *out = p;
    return KD_CUDA_OK;
  }
  void *p = NULL;
  cudaError_t e = cudaHostAlloc(&p, size, cudaHostAllocDefault);
  if (e != cudaSuccess) {
    /* Give the cached blocks back and retry once. */
    (void)cudaGetLastError();
    for (auto f = kd_cu_host_free_lists->begin(); f != kd_cu_host_free_lists->end(); ++f) {
      cudaFreeHost(f->second);
      kd_cu_host_blocks->erase(f->second);
    }
    kd_cu_host_free_lists->clear();
    e = cudaHostAlloc(&p, size, cudaHostAllocDefault);
    if (e != cudaSuccess) return kd_cu_fail(e, "cudaHostAlloc (pinned host memory)");
  }
  kd_cu_host_block b;
  b.size = size;
  b.allocated = true;
  (*kd_cu_host_blocks)[(char *)p] = b;
  *out = p;
  return KD_CUDA_OK;
}

void kd_cu_host_free(void *ptr) {
  if (!ptr) return;
  std::lock_guard<std::mutex> lock(kd_cu_host_mu);
  if (!kd_cu_host_blocks) return;
  auto it = kd_cu_host_blocks->find((char *)ptr);
  if (it == kd_cu_host_blocks->end() || !it->second.allocated) return;
  it->second.allocated = false;
  if (it->second.events.empty()) kd_cu_host_free_lists->insert({it->second.size, it->first});
  /* else: kd_cu_host_process_events moves it once its copies are done */
}

/* The block holding p, or end(). Called with the mutex held. */
static std::map<char *, kd_cu_host_block>::iterator kd_cu_host_find(const void *p) {
  auto it = kd_cu_host_blocks->upper_bound((char *)p);
  if (it == kd_cu_host_blocks->begin()) return kd_cu_host_blocks->end();
  --it;
  if ((const char *)p >= it->first + it->second.size) return kd_cu_host_blocks->end();
  return it;
}

int kd_cu_host_owns(const void *ptr) {
  std::lock_guard<std::mutex> lock(kd_cu_host_mu);
  if (!kd_cu_host_blocks || !ptr) return 0;
  auto it = kd_cu_host_find(ptr);
  return it != kd_cu_host_blocks->end() && it->second.allocated;
}

void kd_cu_host_record(const void *ptr, cudaStream_t stream) {
  std::lock_guard<std::mutex> lock(kd_cu_host_mu);
  if (!kd_cu_host_blocks || !ptr) return;
  auto it = kd_cu_host_find(ptr);
  if (it == kd_cu_host_blocks->end()) return;
  cudaEvent_t e = NULL;
  if (cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess) {
    (void)cudaGetLastError();
    cudaStreamSynchronize(stream); /* no event: make the copy safe by waiting */
    return;
  }
  if (cudaEventRecord(e, stream) != cudaSuccess) {
    (void)cudaGetLastError();
    cudaEventDestroy(e);
    cudaStreamSynchronize(stream);
    return;
  }
  it->second.events.push_back(e);
}
