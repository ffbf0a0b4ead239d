/* caching_allocator.cu - the CUDA side of the caching allocator: one kd_ca (the policy, in
 * caching_allocator_core.c, #included here because tools/build.js compiles only .cu files) per
 * device, created on first use with KINDLING_CUDA_ALLOC_CONF, and the device operations it is
 * given: cudaMalloc/cudaFree, events from a small per-device pool, cudaMemGetInfo.
 * kd_cu_malloc / kd_cu_free (memory.cu) call kd_cu_ca_malloc / kd_cu_ca_free; a block is
 * associated with the calling thread's current stream at allocation time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mutex>
#include <new>
#include <vector>

#include "kd_cuda_internal.h"

#include "caching_allocator_core.c"

#define KD_CU_CA_MAX_DEVICES 64

typedef struct kd_cu_ca_dev {
  int device;
  std::mutex events_mu;
  std::vector<cudaEvent_t> free_events; /* recycled, timing disabled */
} kd_cu_ca_dev;

static kd_ca *kd_cu_cas[KD_CU_CA_MAX_DEVICES];
/* The device contexts live as long as the process (allocators are never destroyed). */
static std::mutex kd_cu_ca_create_mu;
static kd_ca_config kd_cu_ca_conf;
static char kd_cu_ca_conf_error[256];
static bool kd_cu_ca_conf_ok;

/* The device ops are called with the allocator's device current (kd_cu_malloc enters it). */
static int kd_cu_ca_dev_malloc(void *ctx, size_t n, void **out, char *err, size_t errn) {
  kd_cu_ca_dev *d = (kd_cu_ca_dev *)ctx;
  kd_cu_device_guard g;
  if (g.enter(d->device) != KD_CUDA_OK) {
    snprintf(err, errn, "%s", kd_cu_last_error());
    return -1;
  }
  /* As PyTorch: cudaMalloc is legal while this thread captures a graph only in relaxed mode
   * (the allocation is not part of the graph; the private pool keeps it for the graph). */
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  const bool swapped = cudaThreadExchangeStreamCaptureMode(&mode) == cudaSuccess;
  cudaError_t e = cudaMalloc(out, n);
  if (swapped) (void)cudaThreadExchangeStreamCaptureMode(&mode);
  if (e == cudaSuccess) return 0;
  (void)cudaGetLastError();
  if (e == cudaErrorMemoryAllocation) return 1;
  snprintf(err, errn, "CUDA error: %s (%s) in cudaMalloc", cudaGetErrorString(e), cudaGetErrorName(e));
  return -1;
}

static void kd_cu_ca_dev_free(void *ctx, void *p) {
  kd_cu_ca_dev *d = (kd_cu_ca_dev *)ctx;
  kd_cu_device_guard g;
  if (g.enter(d->device) != KD_CUDA_OK) return;
  if (cudaFree(p) != cudaSuccess) (void)cudaGetLastError();
}

static int kd_cu_ca_event_record(void *ctx, uintptr_t stream, void **out) {
  kd_cu_ca_dev *d = (kd_cu_ca_dev *)ctx;
  kd_cu_device_guard g;
  if (g.enter(d->device) != KD_CUDA_OK) return -1;
  cudaEvent_t ev = NULL;
  {
    std::lock_guard<std::mutex> lock(d->events_mu);
    if (!d->free_events.empty()) {
      ev = d->free_events.back();
      d->free_events.pop_back();
    }
  }
  if (!ev && cudaEventCreateWithFlags(&ev, cudaEventDisableTiming) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  if (cudaEventRecord(ev, kd_cu_stream_of(stream)) != cudaSuccess) {
    (void)cudaGetLastError();
    cudaEventDestroy(ev);
    return -1;
  }
  *out = (void *)ev;
  return 0;
}

static int kd_cu_ca_event_query(void *ctx, void *ev) {
  cudaError_t e = cudaEventQuery((cudaEvent_t)ev);
  if (e == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return 0;
  }
  if (e != cudaSuccess) (void)cudaGetLastError();
  return 1;
}

static void kd_cu_ca_event_sync(void *ctx, void *ev) {
  if (cudaEventSynchronize((cudaEvent_t)ev) != cudaSuccess) (void)cudaGetLastError();
}

static void kd_cu_ca_event_release(void *ctx, void *ev) {
  kd_cu_ca_dev *d = (kd_cu_ca_dev *)ctx;
  std::lock_guard<std::mutex> lock(d->events_mu);
  d->free_events.push_back((cudaEvent_t)ev);
}

static void kd_cu_ca_mem_info(void *ctx, size_t *free_b, size_t *total_b) {
  kd_cu_ca_dev *d = (kd_cu_ca_dev *)ctx;
  *free_b = *total_b = 0;
  kd_cu_device_guard g;
  if (g.enter(d->device) != KD_CUDA_OK) return;
  if (cudaMemGetInfo(free_b, total_b) != cudaSuccess) (void)cudaGetLastError();
}

/* The allocator of a device (created on first use). */
static kd_cuda_status kd_cu_ca_get(int device, kd_ca **out) {
  KD_CU_TRY(kd_cu_check_device(device));
  if (device >= KD_CU_CA_MAX_DEVICES)
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "cuda:%d: at most %d devices are supported", device,
                       KD_CU_CA_MAX_DEVICES);
  kd_ca *a = __atomic_load_n(&kd_cu_cas[device], __ATOMIC_ACQUIRE);
  if (a) {
    *out = a;
    return KD_CUDA_OK;
  }
  std::lock_guard<std::mutex> lock(kd_cu_ca_create_mu);
  static bool parsed = false;
  if (!parsed) {
    parsed = true;
    kd_cu_ca_conf_ok = kd_ca_parse_conf(getenv("KINDLING_CUDA_ALLOC_CONF"), &kd_cu_ca_conf, kd_cu_ca_conf_error,
                                        sizeof kd_cu_ca_conf_error) == 0;
  }
  if (!kd_cu_ca_conf_ok)
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "KINDLING_CUDA_ALLOC_CONF: %s", kd_cu_ca_conf_error);
  a = kd_cu_cas[device];
  if (!a) {
    kd_cu_ca_dev *d = new (std::nothrow) kd_cu_ca_dev();
    if (!d) return kd_cu_error(KD_CUDA_ERR_OOM, "out of host memory creating the CUDA allocator");
    d->device = device;
    kd_ca_device_ops ops = {d,
                            kd_cu_ca_dev_malloc,
                            kd_cu_ca_dev_free,
                            kd_cu_ca_event_record,
                            kd_cu_ca_event_query,
                            kd_cu_ca_event_sync,
                            kd_cu_ca_event_release,
                            kd_cu_ca_mem_info};
    a = kd_ca_create(&ops, &kd_cu_ca_conf, device);
    if (!a) {
      delete d;
      return kd_cu_error(KD_CUDA_ERR_OOM, "out of host memory creating the CUDA allocator");
    }
    __atomic_store_n(&kd_cu_cas[device], a, __ATOMIC_RELEASE);
  }
  *out = a;
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_ca_malloc(int device, size_t nbytes, void **out) {
  *out = NULL;
  kd_ca *a;
  KD_CU_TRY(kd_cu_ca_get(device, &a));
  char err[1024];
  int r = kd_ca_malloc(a, nbytes, kd_cu_stream_handle(kd_cu_stream(device)), out, err, sizeof err);
  if (r == 1) return kd_cu_error(KD_CUDA_ERR_OOM, "%s", err);
  if (r != 0) return kd_cu_error(KD_CUDA_ERR_RUNTIME, "%s", err);
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_ca_free(int device, void *ptr) {
  if (!ptr) return KD_CUDA_OK;
  kd_ca *a;
  KD_CU_TRY(kd_cu_ca_get(device, &a));
  if (kd_ca_free(a, ptr) != 0)
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "free: %p was not allocated by the CUDA caching allocator of cuda:%d",
                       ptr, device);
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_record_stream(int device, void *ptr, uintptr_t stream) {
  kd_ca *a;
  KD_CU_TRY(kd_cu_ca_get(device, &a));
  if (kd_ca_record_stream(a, ptr, stream) != 0)
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "recordStream: the tensor's memory was not allocated by the "
                       "CUDA caching allocator of cuda:%d", device);
  return KD_CUDA_OK;
}

static kd_cuda_status kd_cu_ca_string(char *s, char **out) {
  *out = s;
  if (!s) return kd_cu_error(KD_CUDA_ERR_OOM, "out of host memory");
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_memory_stats_json(int device, char **out) {
  *out = NULL;
  kd_ca *a;
  KD_CU_TRY(kd_cu_ca_get(device, &a));
  return kd_cu_ca_string(kd_ca_stats_json(a), out);
}

kd_cuda_status kd_cu_memory_snapshot_json(int device, char **out) {
  *out = NULL;
  kd_ca *a;
  KD_CU_TRY(kd_cu_ca_get(device, &a));
  return kd_cu_ca_string(kd_ca_snapshot_json(a), out);
}

kd_cuda_status kd_cu_memory_summary(int device, char **out) {
  *out = NULL;
  kd_ca *a;
  KD_CU_TRY(kd_cu_ca_get(device, &a));
  return kd_cu_ca_string(kd_ca_summary(a), out);
}

void kd_cu_free_string(char *s) { free(s); }

kd_cuda_status kd_cu_empty_cache(int device) {
  kd_ca *a;
  KD_CU_TRY(kd_cu_ca_get(device, &a));
  kd_ca_empty_cache(a);
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_reset_peak_memory_stats(int device) {
  kd_ca *a;
  KD_CU_TRY(kd_cu_ca_get(device, &a));
  kd_ca_reset_peak(a);
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_set_memory_fraction(int device, double fraction) {
  kd_ca *a;
  KD_CU_TRY(kd_cu_ca_get(device, &a));
  if (kd_ca_set_memory_fraction(a, fraction) != 0)
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "Invalid fraction value: %g. It should be in [0, 1]", fraction);
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_ca_begin_capture(int device, uint64_t pool, uintptr_t stream) {
  kd_ca *a;
  KD_CU_TRY(kd_cu_ca_get(device, &a));
  if (kd_ca_begin_capture(a, pool, stream) != 0)
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "cuda:%d: cannot begin a graph capture on this stream (it already "
                       "captures, or too many captures or graph pools are live)", device);
  return KD_CUDA_OK;
}

void kd_cu_ca_end_capture(int device, uintptr_t stream) {
  kd_ca *a;
  if (kd_cu_ca_get(device, &a) == KD_CUDA_OK) kd_ca_end_capture(a, stream);
}

void kd_cu_ca_release_pool(int device, uint64_t pool) {
  kd_ca *a;
  if (kd_cu_ca_get(device, &a) == KD_CUDA_OK) (void)kd_ca_release_private_pool(a, pool);
}

int kd_cu_ca_pool_uses(int device, uint64_t pool) {
  kd_ca *a;
  return kd_cu_ca_get(device, &a) == KD_CUDA_OK ? kd_ca_private_pool_uses(a, pool) : 0;
}
