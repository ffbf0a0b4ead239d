/* runtime.cpp - the emulated GPU's devices, errors and memory: a configurable number of devices
 * that describe themselves as emulated H100s, device memory from the host heap with a settable
 * capacity (so out-of-memory paths run), pinned host memory, pointer attributes, and copies and
 * memsets in stream order (streams.cpp) with CUDA's rules for when a copy blocks the host.
 *
 * Note [Emulator counters]: kernel launches, blocks and threads run, device synchronisations
 * (cudaStreamSynchronize, cudaDeviceSynchronize, cudaEventSynchronize, every copy that blocks the
 * host, cudaFree's implicit synchronisation) and bytes copied each way are counted, the stand-in
 * for GPU performance on a machine without one (kd.cuda.emulator.stats()). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <map>

#include "emu.h"
#include "kd_cuda_api.h"

namespace kd_emu {

counters g_count;

static size_t parse_size(const char *s, size_t dflt) {
  if (!s || !*s) return dflt;
  char *end = nullptr;
  double v = strtod(s, &end);
  if (end == s || v < 0) return dflt;
  switch (*end) {
    case 'k': case 'K': v *= 1024.0; break;
    case 'm': case 'M': v *= 1024.0 * 1024.0; break;
    case 'g': case 'G': v *= 1024.0 * 1024.0 * 1024.0; break;
    default: break;
  }
  return (size_t)v;
}

const config &cfg() {
  static const config c = [] {
    config k;
    const char *d = getenv("KINDLING_CUDA_EMU_DEVICES");
    k.devices = d && *d ? atoi(d) : 2;
    if (k.devices < 0) k.devices = 0;
    if (k.devices > 8) k.devices = 8;
    k.memory = parse_size(getenv("KINDLING_CUDA_EMU_MEMORY"), (size_t)8 << 30);
    const char *s = getenv("KINDLING_CUDA_EMU_SEED");
    k.seed = s && *s ? strtoull(s, nullptr, 0) : 0x6b696e646c696e67ull;
    k.sms = 132;
    k.stack_size = (size_t)256 << 10;
    return k;
  }();
  return c;
}

static device_state *g_devices = new device_state[8];
device_state &dev(int device) { return g_devices[device < 0 ? 0 : device > 7 ? 7 : device]; }

static thread_local int tls_device = 0;
int current_device() { return tls_device; }

/* ---- errors ---- */
static thread_local cudaError_t tls_last = cudaSuccess;
static char g_fault[256];

cudaError_t set_last_error(cudaError_t e) {
  if (e != cudaSuccess) tls_last = e;
  return e;
}

void set_sticky(int device, cudaError_t e, const char *what) {
  int expected = 0;
  if (dev(device).sticky.compare_exchange_strong(expected, (int)e))
    snprintf(g_fault, sizeof g_fault, "%s on emulated device %d", what, device);
}

cudaError_t sticky(int device) { return (cudaError_t)dev(device).sticky.load(); }

/* ---- memory ---- */
struct region {
  size_t size;
  int device; /* -1: pinned host memory */
};
static std::mutex g_mem_mu;
static std::map<uintptr_t, region> *g_regions = new std::map<uintptr_t, region>();

int classify(const void *p, size_t n, int *device) {
  std::lock_guard<std::mutex> lk(g_mem_mu);
  auto it = g_regions->upper_bound((uintptr_t)p);
  if (it == g_regions->begin()) return 0;
  --it;
  const uintptr_t a = (uintptr_t)p;
  if (a >= it->first + it->second.size) return 0;
  if (device) *device = it->second.device;
  if (n > it->first + it->second.size - a) return it->second.device >= 0 ? -1 : 0;
  return it->second.device >= 0 ? 2 : 1;
}

static void region_add(void *p, size_t size, int device) {
  std::lock_guard<std::mutex> lk(g_mem_mu);
  (*g_regions)[(uintptr_t)p] = region{size, device};
}

/* Removes the region starting exactly at p; false if there is none of that kind. */
static bool region_remove(void *p, bool device_memory, region *out) {
  std::lock_guard<std::mutex> lk(g_mem_mu);
  auto it = g_regions->find((uintptr_t)p);
  if (it == g_regions->end() || (it->second.device >= 0) != device_memory) return false;
  *out = it->second;
  g_regions->erase(it);
  return true;
}

static cudaError_t device_alloc(void **p, size_t size, int device) {
  device_state &d = dev(device);
  size_t used = d.used.load();
  do {
    if (size > cfg().memory - used) return cudaErrorMemoryAllocation;
  } while (!d.used.compare_exchange_weak(used, used + size));
  void *q = nullptr;
  if (posix_memalign(&q, 256, size ? size : 1) != 0) {
    d.used -= size;
    return cudaErrorMemoryAllocation;
  }
  region_add(q, size, device);
  g_count.mallocs++;
  *p = q;
  return cudaSuccess;
}

static void device_release(void *p, const region &r) {
  free(p);
  dev(r.device).used -= r.size;
  g_count.frees++;
}

void release_device_memory(void *p) {
  region r;
  if (region_remove(p, true, &r)) device_release(p, r);
}

}  // namespace kd_emu

using namespace kd_emu;

/* ---- devices ---- */
cudaError_t cudaGetDeviceCount(int *count) {
  if (!count) return set_last_error(cudaErrorInvalidValue);
  *count = cfg().devices;
  return cfg().devices > 0 ? cudaSuccess : set_last_error(cudaErrorNoDevice);
}
cudaError_t cudaGetDevice(int *device) {
  if (!device) return set_last_error(cudaErrorInvalidValue);
  *device = tls_device;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int device) {
  if (device < 0 || device >= cfg().devices) return set_last_error(cudaErrorInvalidDevice);
  tls_device = device;
  return cudaSuccess;
}
cudaError_t cudaRuntimeGetVersion(int *v) {
  if (!v) return set_last_error(cudaErrorInvalidValue);
  *v = CUDART_VERSION;
  return cudaSuccess;
}
cudaError_t cudaDriverGetVersion(int *v) {
  if (!v) return set_last_error(cudaErrorInvalidValue);
  *v = CUDART_VERSION;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int device) {
  if (!p) return set_last_error(cudaErrorInvalidValue);
  if (device < 0 || device >= cfg().devices) return set_last_error(cudaErrorInvalidDevice);
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "kindling emulated GPU (H100-like, runs on the CPU)");
  p->totalGlobalMem = cfg().memory;
  p->sharedMemPerBlock = 48 << 10;
  p->sharedMemPerBlockOptin = 227 << 10;
  p->regsPerBlock = 65536;
  p->warpSize = 32;
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsDim[0] = 1024;
  p->maxThreadsDim[1] = 1024;
  p->maxThreadsDim[2] = 64;
  p->maxGridSize[0] = 2147483647;
  p->maxGridSize[1] = 65535;
  p->maxGridSize[2] = 65535;
  p->major = 9;
  p->minor = 0;
  p->multiProcessorCount = cfg().sms;
  p->clockRate = 1755000;
  p->l2CacheSize = 50 << 20;
  p->maxThreadsPerMultiProcessor = 2048;
  p->canMapHostMemory = 1;
  p->concurrentKernels = 1;
  p->unifiedAddressing = 1;
  p->pciBusID = device + 1;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device) {
  if (!value) return set_last_error(cudaErrorInvalidValue);
  if (device < 0 || device >= cfg().devices) return set_last_error(cudaErrorInvalidDevice);
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: *value = 1024; break;
    case cudaDevAttrMaxGridDimY: *value = 65535; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *value = 48 << 10; break;
    case cudaDevAttrWarpSize: *value = 32; break;
    case cudaDevAttrClockRate: *value = 1755000; break;
    case cudaDevAttrMultiProcessorCount: *value = cfg().sms; break;
    case cudaDevAttrComputeCapabilityMajor: *value = 9; break;
    case cudaDevAttrComputeCapabilityMinor: *value = 0; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = 227 << 10; break;
    default: return set_last_error(cudaErrorInvalidValue);
  }
  return cudaSuccess;
}

cudaError_t cudaDeviceCanAccessPeer(int *can, int device, int peer) {
  if (!can) return set_last_error(cudaErrorInvalidValue);
  if (device < 0 || device >= cfg().devices || peer < 0 || peer >= cfg().devices)
    return set_last_error(cudaErrorInvalidDevice);
  *can = device != peer;
  return cudaSuccess;
}

/* ---- errors ---- */
cudaError_t cudaGetLastError(void) {
  cudaError_t e = tls_last;
  tls_last = cudaSuccess;
  return e != cudaSuccess ? e : sticky(tls_device);
}
cudaError_t cudaPeekAtLastError(void) { return tls_last != cudaSuccess ? tls_last : sticky(tls_device); }

#define KD_EMU_ERRORS(X)                                                                       \
  X(cudaSuccess, "no error")                                                                   \
  X(cudaErrorInvalidValue, "invalid argument")                                                 \
  X(cudaErrorMemoryAllocation, "out of memory")                                                \
  X(cudaErrorInitializationError, "initialization error")                                      \
  X(cudaErrorCudartUnloading, "driver shutting down")                                          \
  X(cudaErrorInvalidConfiguration, "invalid configuration argument")                           \
  X(cudaErrorInvalidPitchValue, "invalid pitch argument")                                      \
  X(cudaErrorInvalidSymbol, "invalid device symbol")                                           \
  X(cudaErrorInvalidHostPointer, "invalid host pointer")                                       \
  X(cudaErrorInvalidDevicePointer, "invalid device pointer")                                   \
  X(cudaErrorInvalidMemcpyDirection, "invalid copy direction for memcpy")                      \
  X(cudaErrorInsufficientDriver, "CUDA driver version is insufficient for CUDA runtime version") \
  X(cudaErrorInvalidResourceHandle, "invalid resource handle")                                 \
  X(cudaErrorNoDevice, "no CUDA-capable device is detected")                                   \
  X(cudaErrorInvalidDevice, "invalid device ordinal")                                          \
  X(cudaErrorNoKernelImageForDevice, "no kernel image is available for execution on the device") \
  X(cudaErrorECCUncorrectable, "uncorrectable ECC error encountered")                          \
  X(cudaErrorPeerAccessUnsupported, "peer access is not supported between these two devices") \
  X(cudaErrorNotReady, "device not ready")                                                     \
  X(cudaErrorIllegalAddress, "an illegal memory access was encountered")                       \
  X(cudaErrorLaunchOutOfResources, "too many resources requested for launch")                  \
  X(cudaErrorLaunchTimeout, "the launch timed out and was terminated")                         \
  X(cudaErrorHardwareStackError, "hardware stack error")                                       \
  X(cudaErrorIllegalInstruction, "an illegal instruction was encountered")                     \
  X(cudaErrorMisalignedAddress, "misaligned address")                                          \
  X(cudaErrorInvalidAddressSpace, "operation not supported on global/shared address space")    \
  X(cudaErrorInvalidPc, "invalid program counter")                                             \
  X(cudaErrorLaunchFailure, "unspecified launch failure")                                      \
  X(cudaErrorAssert, "device-side assert triggered")                                           \
  X(cudaErrorSystemDriverMismatch, "system has unsupported display driver / cuda driver combination") \
  X(cudaErrorCompatNotSupportedOnDevice, "forward compatibility was attempted on non supported HW") \
  X(cudaErrorIllegalState, "the operation cannot be performed in the present state")         \
  X(cudaErrorStreamCaptureUnsupported, "operation not permitted when stream is capturing")     \
  X(cudaErrorStreamCaptureInvalidated, "operation failed due to a previous error during capture") \
  X(cudaErrorStreamCaptureMerge, "operation would result in a merge of separate capture sequences") \
  X(cudaErrorStreamCaptureUnmatched, "capture was not ended in the same stream as it began")   \
  X(cudaErrorStreamCaptureUnjoined, "capturing stream has unjoined work")                      \
  X(cudaErrorStreamCaptureIsolation, "dependency created on uncaptured work in another stream") \
  X(cudaErrorStreamCaptureImplicit, "operation would make the legacy stream depend on a capturing blocking stream") \
  X(cudaErrorCapturedEvent, "operation not permitted on an event last recorded in a capturing stream") \
  X(cudaErrorStreamCaptureWrongThread, "attempt to terminate a thread-local capture sequence from another thread") \
  X(cudaErrorNotSupported, "operation not supported")                                          \
  X(cudaErrorUnknown, "unknown error")

const char *cudaGetErrorName(cudaError_t e) {
  switch (e) {
#define KD_EMU_NAME(code, text) case code: return #code;
    KD_EMU_ERRORS(KD_EMU_NAME)
#undef KD_EMU_NAME
    default: return "cudaErrorUnknown";
  }
}
const char *cudaGetErrorString(cudaError_t e) {
  switch (e) {
#define KD_EMU_TEXT(code, text) case code: return text;
    KD_EMU_ERRORS(KD_EMU_TEXT)
#undef KD_EMU_TEXT
    default: return "unrecognized error code";
  }
}

/* ---- memory ---- */
cudaError_t cudaMalloc(void **p, size_t size) {
  if (!p) return set_last_error(cudaErrorInvalidValue);
  *p = nullptr;
  cudaError_t e = sticky(tls_device);
  if (e != cudaSuccess) return e;
  if (size == 0) return cudaSuccess;
  if ((e = capture_unsafe_call()) != cudaSuccess) return set_last_error(e);
  return set_last_error(device_alloc(p, size, tls_device));
}

cudaError_t cudaMallocAsync(void **p, size_t size, cudaStream_t stream) {
  if (!p) return set_last_error(cudaErrorInvalidValue);
  *p = nullptr;
  CUstream_st *s = resolve(stream);
  cudaError_t e = sticky(s->device);
  if (e != cudaSuccess) return e;
  if (size == 0) return cudaSuccess;
  e = set_last_error(device_alloc(p, size, s->device)); /* usable at once, so also in stream order */
  if (e == cudaSuccess) {
    std::lock_guard<std::mutex> lk(g_mu);
    if (s->cap) s->cap->allocations.push_back(*p); /* a graph allocation: lives as long as the graph */
  }
  return e;
}

cudaError_t cudaFree(void *p) {
  if (!p) return cudaSuccess;
  cudaError_t e = capture_unsafe_call();
  if (e != cudaSuccess) return set_last_error(e);
  region r;
  if (!region_remove(p, true, &r)) return set_last_error(cudaErrorInvalidValue);
  g_count.syncs++; /* cudaFree synchronises the device */
  wait_device(r.device);
  device_release(p, r);
  return sticky(r.device);
}

cudaError_t cudaFreeAsync(void *p, cudaStream_t stream) {
  if (!p) return cudaSuccess;
  CUstream_st *cs = resolve(stream);
  {
    std::lock_guard<std::mutex> lk(g_mu);
    if (cs->cap) { /* a free node: the memory of a graph allocation stays the graph's until it is destroyed */
      if (cs->cap->invalidated) return set_last_error(cudaErrorStreamCaptureInvalidated);
      for (void *q : cs->cap->allocations)
        if (q == p) return cudaSuccess;
      capture_invalidate_locked(cs->cap.get()); /* freeing memory allocated outside the graph */
      return set_last_error(cudaErrorStreamCaptureUnsupported);
    }
  }
  region r;
  if (!region_remove(p, true, &r)) return set_last_error(cudaErrorInvalidValue);
  cudaError_t e = enqueue_op(resolve(stream), [p, r] { device_release(p, r); }, nullptr, nullptr);
  if (e != cudaSuccess) device_release(p, r); /* the device is faulted: nothing runs on it any more */
  return e == cudaSuccess ? e : set_last_error(e);
}

cudaError_t cudaHostAlloc(void **p, size_t size, unsigned int flags) {
  if (!p || (flags & ~0xfu)) return set_last_error(cudaErrorInvalidValue);
  *p = nullptr;
  if (size == 0) return cudaSuccess;
  cudaError_t e = capture_unsafe_call();
  if (e != cudaSuccess) return set_last_error(e);
  void *q = nullptr;
  if (posix_memalign(&q, 4096, size) != 0) return set_last_error(cudaErrorMemoryAllocation);
  region_add(q, size, -1);
  *p = q;
  return cudaSuccess;
}
cudaError_t cudaMallocHost(void **p, size_t size) { return cudaHostAlloc(p, size, 0); }

cudaError_t cudaFreeHost(void *p) {
  if (!p) return cudaSuccess;
  cudaError_t e = capture_unsafe_call();
  if (e != cudaSuccess) return set_last_error(e);
  region r;
  if (!region_remove(p, false, &r)) return set_last_error(cudaErrorInvalidValue);
  free(p);
  return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total) {
  size_t used = dev(tls_device).used.load();
  if (free_bytes) *free_bytes = cfg().memory - used;
  if (total) *total = cfg().memory;
  return cudaSuccess;
}

cudaError_t cudaPointerGetAttributes(cudaPointerAttributes *a, const void *p) {
  if (!a) return set_last_error(cudaErrorInvalidValue);
  memset(a, 0, sizeof *a);
  int device = -2;
  switch (classify(p, 1, &device)) {
    case 2:
      a->type = cudaMemoryTypeDevice;
      a->device = device;
      a->devicePointer = (void *)p;
      break;
    case 1:
      a->type = cudaMemoryTypeHost;
      a->device = tls_device;
      a->devicePointer = (void *)p;
      a->hostPointer = (void *)p;
      break;
    default:
      a->type = cudaMemoryTypeUnregistered;
      a->device = -2;
      a->hostPointer = (void *)p;
      break;
  }
  return cudaSuccess;
}

/* ---- copies and memsets ---- */
/* The direction of a copy after checking its pointers: device ranges must lie inside one device
 * allocation and host pointers outside device memory, as the GPU's address translation would
 * enforce; -1 when they do not. */
static int copy_direction(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind) {
  const int cd = classify(dst, n, nullptr), cs = classify(src, n, nullptr);
  if (cd < 0 || cs < 0) return -1;
  const bool dd = cd == 2, sd = cs == 2;
  switch (kind) {
    case cudaMemcpyHostToDevice: return dd && !sd ? 1 : -1;
    case cudaMemcpyDeviceToHost: return sd && !dd ? 2 : -1;
    case cudaMemcpyDeviceToDevice: return dd && sd ? 3 : -1;
    case cudaMemcpyHostToHost: return !dd && !sd ? 0 : -1;
    case cudaMemcpyDefault: return dd ? (sd ? 3 : 1) : (sd ? 2 : 0);
  }
  return -1;
}

static cudaError_t copy_async(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, CUstream_st *s,
                              bool blocking) {
  if (n == 0) return cudaSuccess;
  if (!dst || !src) return set_last_error(cudaErrorInvalidValue);
  const int dir = copy_direction(dst, src, n, kind);
  if (dir < 0) return set_last_error(cudaErrorInvalidValue);
  std::function<void()> fn;
  bool wait = blocking;
  const bool pageable = (dir == 1 && classify(src, n, nullptr) != 1) || (dir == 2 && classify(dst, n, nullptr) != 1) ||
                        dir == 0;
  if (pageable || blocking) { /* a copy that blocks the host cannot be captured */
    cudaError_t e = capture_forbid(s);
    if (e != cudaSuccess) return set_last_error(e);
  }
  if (dir == 1 && classify(src, n, nullptr) != 1) {
    /* from pageable memory: staged before the call returns, so src may be reused at once */
    char *stage = (char *)malloc(n);
    if (!stage) return set_last_error(cudaErrorMemoryAllocation);
    memcpy(stage, src, n);
    fn = [dst, stage, n] {
      memcpy(dst, stage, n);
      free(stage);
    };
  } else {
    fn = [dst, src, n] { memmove(dst, src, n); };
    if (dir == 2 && classify(dst, n, nullptr) != 1) wait = true; /* to pageable memory: returns when done */
    if (dir == 0) wait = true;
  }
  uint64_t seq = 0;
  cudaError_t e = enqueue_op(s, std::move(fn), nullptr, &seq);
  if (e != cudaSuccess) return set_last_error(e);
  switch (dir) {
    case 1: g_count.h2d_bytes += n; g_count.h2d_copies++; break;
    case 2: g_count.d2h_bytes += n; g_count.d2h_copies++; break;
    case 3: g_count.d2d_bytes += n; g_count.d2d_copies++; break;
    default: break;
  }
  if (wait) {
    g_count.syncs++;
    wait_for(s, seq);
    return sticky(s->device);
  }
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, cudaStream_t stream) {
  return copy_async(dst, src, n, kind, resolve(stream), false);
}
cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind) {
  return copy_async(dst, src, n, kind, resolve(nullptr), true);
}

/* A peer copy's arguments: both devices exist and each range lies in one allocation of its device. */
static cudaError_t peer_check(void *dst, int dd, const void *src, int sd, size_t n) {
  if (dd < 0 || dd >= cfg().devices || sd < 0 || sd >= cfg().devices) return set_last_error(cudaErrorInvalidDevice);
  int d1 = -1, d2 = -1;
  if (n && (classify(dst, n, &d1) != 2 || classify(src, n, &d2) != 2 || d1 != dd || d2 != sd))
    return set_last_error(cudaErrorInvalidValue);
  return cudaSuccess;
}

cudaError_t cudaMemcpyPeerAsync(void *dst, int dd, const void *src, int sd, size_t n, cudaStream_t stream) {
  cudaError_t e = peer_check(dst, dd, src, sd, n);
  if (e != cudaSuccess) return e;
  return copy_async(dst, src, n, cudaMemcpyDeviceToDevice, resolve(stream), false);
}

cudaError_t cudaMemcpyPeer(void *dst, int dd, const void *src, int sd, size_t n) {
  cudaError_t e = peer_check(dst, dd, src, sd, n);
  if (e != cudaSuccess || n == 0) return e;
  /* Serialised with all work of both devices: on the destination's legacy stream after the
   * source's legacy stream, which in turn waits for the copy. */
  CUstream_st *ls = legacy_stream(sd), *ld = legacy_stream(dd);
  std::pair<CUstream_st *, uint64_t> after_src;
  {
    std::lock_guard<std::mutex> lk(g_mu);
    after_src = {ls, ls->submitted};
  }
  uint64_t seq = 0;
  e = enqueue_op(ld, [dst, src, n] { memcpy(dst, src, n); }, &after_src, &seq);
  if (e != cudaSuccess) return set_last_error(e);
  if (ls != ld) {
    std::pair<CUstream_st *, uint64_t> copy_done{ld, seq};
    enqueue_op(ls, nullptr, &copy_done, nullptr);
  }
  g_count.d2d_bytes += n;
  g_count.d2d_copies++;
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void *p, int value, size_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  if (classify(p, n, nullptr) != 2) return set_last_error(cudaErrorInvalidValue);
  cudaError_t e = enqueue_op(resolve(stream), [p, value, n] { memset(p, value, n); }, nullptr, nullptr);
  return e == cudaSuccess ? e : set_last_error(e);
}

cudaError_t cudaMemset(void *p, int value, size_t n) {
  cudaError_t e = cudaMemsetAsync(p, value, n, nullptr);
  if (e != cudaSuccess) return e;
  return cudaStreamSynchronize(nullptr);
}

/* ---- the counters, for the bridge (kd_cuda_api.h) ---- */
extern "C" __attribute__((visibility("default"))) int kd_cuda_emulator_stats(kd_cuda_emu_stats *out) {
  if (!out) return -1;
  memset(out, 0, sizeof *out);
  out->launches = g_count.launches.load();
  out->blocks = g_count.blocks.load();
  out->threads = g_count.threads.load();
  out->syncs = g_count.syncs.load();
  out->h2d_bytes = g_count.h2d_bytes.load();
  out->d2h_bytes = g_count.d2h_bytes.load();
  out->d2d_bytes = g_count.d2d_bytes.load();
  out->h2d_copies = g_count.h2d_copies.load();
  out->d2h_copies = g_count.d2h_copies.load();
  out->d2d_copies = g_count.d2d_copies.load();
  out->mallocs = g_count.mallocs.load();
  out->frees = g_count.frees.load();
  out->host_funcs = g_count.host_funcs.load();
  out->graph_launches = g_count.graph_launches.load();
  out->graph_kernels = g_count.graph_kernels.load();
  out->devices = cfg().devices;
  out->memory = cfg().memory;
  out->seed = cfg().seed;
  snprintf(out->fault, sizeof out->fault, "%s", g_fault);
  return 0;
}
