/* kd_cuda_internal.h - what the .cu files of cuda/ share and nothing else sees: the thread-local
 * error message, CUDA error checking that returns a status (never exits), the "ready" check
 * every entry point starts with, a device guard, the current stream, and launch sizes.
 * C++17 (nvcc). All symbols have hidden visibility (-fvisibility=hidden). */
#ifndef KD_CUDA_INTERNAL_H
#define KD_CUDA_INTERNAL_H

#include <cuda_runtime.h>
#include <stdint.h>

#include "kd_cuda_api.h"

/* KD_LAUNCH(grid, block, smem, stream, kernel)(args...) is kernel<<<grid, block, smem, stream>>>(args...),
 * written as a macro so that the same line also builds for the emulated GPU (cuda/emulator), where
 * the host compiler turns it into a call that enqueues the grid on the stream. Either way the
 * launch is first reported to the profiler's observer, when one is set (launch_observer.cu). */
void kd_cu_note_launch(const char *kernel, cudaStream_t stream);
#ifdef KD_CUDA_EMULATED
#define KD_LAUNCH(grid, block, smem, stream, ...) \
  kd_cu_note_launch(#__VA_ARGS__, stream), kd_emu::launch(grid, block, smem, stream, #__VA_ARGS__, __VA_ARGS__)
#else
#define KD_LAUNCH(grid, block, smem, stream, ...) kd_cu_note_launch(#__VA_ARGS__, stream), __VA_ARGS__<<<grid, block, smem, stream>>>
#endif

/* ---- errors (api.cu) ---- */
/* Sets this thread's message (printf-style) and returns s. */
kd_cuda_status kd_cu_error(kd_cuda_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *kd_cu_last_error(void);
const char *kd_cu_status_name(kd_cuda_status s);

/* Maps a failed CUDA call to a status and message "CUDA error: <string> (<name>) in <what>";
 * clears the runtime's non-sticky last error so it is not reported twice. */
kd_cuda_status kd_cu_fail(cudaError_t e, const char *what);

#define KD_CU_CHECK(call)                                                                   \
  do {                                                                                      \
    cudaError_t kd_cu_e_ = (call);                                                          \
    if (kd_cu_e_ != cudaSuccess) return kd_cu_fail(kd_cu_e_, #call);                        \
  } while (0)

/* After a kernel launch: launch errors (bad configuration, no kernel image for this GPU). */
#define KD_CU_CHECK_LAUNCH(what)                                                            \
  do {                                                                                      \
    cudaError_t kd_cu_e_ = cudaGetLastError();                                              \
    if (kd_cu_e_ != cudaSuccess) return kd_cu_fail(kd_cu_e_, what);                         \
  } while (0)

#define KD_CU_TRY(expr)                                                                     \
  do {                                                                                      \
    kd_cuda_status kd_cu_s_ = (expr);                                                       \
    if (kd_cu_s_ != KD_CUDA_OK) return kd_cu_s_;                                            \
  } while (0)

/* ---- runtime and devices (device.cu) ---- */
kd_cuda_status kd_cu_init(void);
/* The init status, with its message re-set on this thread on failure: every entry point
 * starts with KD_CU_TRY(kd_cu_ready()). */
kd_cuda_status kd_cu_ready(void);
/* Ready, and 0 <= device < count. */
kd_cuda_status kd_cu_check_device(int device);
/* Multiprocessor count of a device (cached; 0 if unknown). */
int kd_cu_sm_count(int device);
void kd_cu_versions(int *runtime, int *driver);
kd_cuda_status kd_cu_device_count(int *out);
kd_cuda_status kd_cu_current_device(int *out);
kd_cuda_status kd_cu_set_device(int device);
kd_cuda_status kd_cu_device_name(int device, char *buf, size_t n);
kd_cuda_status kd_cu_device_properties(int device, kd_cuda_device_props *out);
kd_cuda_status kd_cu_synchronize(int device);

/* Makes `device` current for the guard's lifetime and restores the previous device after.
 * Check enter()'s status before doing any work. */
class kd_cu_device_guard {
 public:
  kd_cu_device_guard() : prev_(-1) {}
  kd_cuda_status enter(int device) {
    KD_CU_TRY(kd_cu_check_device(device));
    int cur = -1;
    KD_CU_CHECK(cudaGetDevice(&cur));
    if (cur != device) {
      KD_CU_CHECK(cudaSetDevice(device));
      prev_ = cur;
    }
    return KD_CUDA_OK;
  }
  ~kd_cu_device_guard() {
    if (prev_ >= 0) cudaSetDevice(prev_);
  }
  kd_cu_device_guard(const kd_cu_device_guard &) = delete;
  kd_cu_device_guard &operator=(const kd_cu_device_guard &) = delete;

 private:
  int prev_;
};

/* The stream work for `device` is enqueued on: this thread's current stream of the device
 * (streams.cu), the legacy default stream unless set_current_stream changed it. */
#define KD_CU_MAX_STREAM_DEVICES 64
extern thread_local cudaStream_t kd_cu_tls_stream[KD_CU_MAX_STREAM_DEVICES];
static inline cudaStream_t kd_cu_stream(int device) {
  cudaStream_t s = (device >= 0 && device < KD_CU_MAX_STREAM_DEVICES) ? kd_cu_tls_stream[device] : NULL;
  return s ? s : cudaStreamLegacy;
}
/* ABI stream handles: 0 is the legacy default stream. */
static inline cudaStream_t kd_cu_stream_of(uintptr_t h) { return h ? (cudaStream_t)h : cudaStreamLegacy; }
static inline uintptr_t kd_cu_stream_handle(cudaStream_t s) { return s == cudaStreamLegacy ? 0 : (uintptr_t)s; }

/* ---- memory (memory.cu) ---- */
kd_cuda_status kd_cu_malloc(int device, size_t nbytes, void **out);
kd_cuda_status kd_cu_free(int device, void *ptr);
kd_cuda_status kd_cu_memcpy_h2d(int device, void *dst, const void *src, size_t nbytes);
kd_cuda_status kd_cu_memcpy_d2h(int device, void *dst, const void *src, size_t nbytes);
kd_cuda_status kd_cu_memcpy_d2d(int dst_device, void *dst, int src_device, const void *src, size_t nbytes);

/* ---- caching allocator (caching_allocator.cu), pinned host memory (host_alloc.cu),
 * streams and events (streams.cu) ---- */
kd_cuda_status kd_cu_record_stream(int device, void *ptr, uintptr_t stream);
/* Graph-private pools of the device's allocator (Note [Graph-private pools]). */
kd_cuda_status kd_cu_ca_begin_capture(int device, uint64_t pool, uintptr_t stream);
void kd_cu_ca_end_capture(int device, uintptr_t stream);
void kd_cu_ca_release_pool(int device, uint64_t pool);
int kd_cu_ca_pool_uses(int device, uint64_t pool);
kd_cuda_status kd_cu_memory_stats_json(int device, char **out);
kd_cuda_status kd_cu_memory_snapshot_json(int device, char **out);
kd_cuda_status kd_cu_memory_summary(int device, char **out);
void kd_cu_free_string(char *s);
kd_cuda_status kd_cu_empty_cache(int device);
kd_cuda_status kd_cu_reset_peak_memory_stats(int device);
kd_cuda_status kd_cu_set_memory_fraction(int device, double fraction);
kd_cuda_status kd_cu_stream_create(int device, int priority, uintptr_t *out);
kd_cuda_status kd_cu_stream_query(int device, uintptr_t stream, int *done);
kd_cuda_status kd_cu_current_stream(int device, uintptr_t *out);
kd_cuda_status kd_cu_set_current_stream(int device, uintptr_t stream);
kd_cuda_status kd_cu_event_create(int device, int enable_timing, void **out);
void kd_cu_event_destroy(void *event);
kd_cuda_status kd_cu_event_record(void *event, int device, uintptr_t stream);
kd_cuda_status kd_cu_event_query(void *event, int *done);
kd_cuda_status kd_cu_event_elapsed_time(void *start, void *end, float *ms);
kd_cuda_status kd_cu_stream_wait_event(int device, uintptr_t stream, void *event);
kd_cuda_status kd_cu_launch_host_func(int device, uintptr_t stream, void (*fn)(void *), void *user);
kd_cuda_status kd_cu_event_host_func(int device, void *event, void (*fn)(void *), void *user);
kd_cuda_status kd_cu_peek_error(int device);
kd_cuda_status kd_cu_host_alloc(size_t nbytes, void **out);
void kd_cu_host_free(void *ptr);
int kd_cu_host_owns(const void *ptr);
/* Records an event on `stream` for the pinned block holding ptr (no-op for other pointers). */
void kd_cu_host_record(const void *ptr, cudaStream_t stream);
kd_cuda_status kd_cu_memcpy_h2d_async(int device, void *dst, const void *src, size_t nbytes);
kd_cuda_status kd_cu_memcpy_d2h_async(int device, void *dst, const void *src, size_t nbytes);
kd_cuda_status kd_cu_spin(int device, double ms);

/* ---- kernels (copy.cu, fill.cu) ---- */
kd_cuda_status kd_cu_copy(int device, const kd_cuda_array *dst, const kd_cuda_array *src);
kd_cuda_status kd_cu_fill(int device, const kd_cuda_array *dst, const void *value);

/* ---- shared by the kernel files (layout.cu) ---- */
#define KD_CU_THREADS 256

/* Element size of a kd_dtype value, 0 if invalid. */
size_t kd_cu_dtype_size(int32_t dtype);

/* Up to two operands iterated together over one shape, after coalescing (see layout.cu). */
typedef struct kd_cu_layout {
  int32_t ndim;                       /* >= 1; dim ndim-1 is the innermost */
  int64_t sizes[KD_CUDA_MAX_DIMS];
  int64_t strides[2][KD_CUDA_MAX_DIMS]; /* elements, per operand */
} kd_cu_layout;

/* Validates `a` (and `b` if not NULL: same ndim and sizes) and builds their joint layout:
 * size-1 dims dropped, dims merged where every operand is contiguous across them. Writes
 * numel; a 0-element operand gives numel 0 (nothing to do). */
kd_cuda_status kd_cu_layout_build(const kd_cuda_array *a, const kd_cuda_array *b, kd_cu_layout *out, int64_t *numel);
/* Offsets (in elements) of linear index i in operands 0 and 1 of a layout: the index math of
 * every strided kernel (host-callable so it can be tested without a GPU). */
__host__ __device__ __forceinline__ void kd_cu_layout_offsets(const kd_cu_layout &L, int64_t i, int64_t *o0,
                                                              int64_t *o1) {
  int64_t a = 0, b = 0;
  for (int d = L.ndim - 1; d >= 0; d--) {
    const int64_t size = L.sizes[d];
    const int64_t c = i % size;
    i /= size;
    a += c * L.strides[0][d];
    b += c * L.strides[1][d];
  }
  *o0 = a;
  *o1 = b;
}

/* Grid size for a grid-stride loop over n elements. */
unsigned kd_cu_grid(int device, int64_t n);

#endif
