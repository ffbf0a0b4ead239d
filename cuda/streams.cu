/* streams.cu - streams, events and completion callbacks.
 *
 * The current stream is per host thread and device (kd_cu_tls_stream, read by kd_cu_stream);
 * NULL means the legacy default stream. Streams made here are created with cudaStreamDefault
 * flags, so they order with the legacy default stream: a host function enqueued on the legacy
 * stream runs after all earlier work of the device, which is how synchronize() completes
 * without blocking a thread. Streams are never destroyed (as PyTorch's stream pool).
 *
 * Completion: launch_host_func enqueues fn with cudaLaunchHostFunc on a stream; event_host_func
 * makes a per-device internal stream (non-blocking, so it waits for nothing but the event) wait
 * for the event and enqueues fn there. fn runs on a CUDA-internal thread and must not call CUDA.
 *
 * spin: a test kernel that busy-waits about `ms` milliseconds (clock64 against the SM clock
 * rate), for the "timers keep firing while a kernel runs" test; with ms < 0 it busy-waits -ms
 * milliseconds and then traps, a device fault (sticky, as an illegal address is), for the tests
 * of what a faulted device does to work in flight. */
#include <mutex>

#include "kd_cuda_internal.h"

thread_local cudaStream_t kd_cu_tls_stream[KD_CU_MAX_STREAM_DEVICES];

static cudaStream_t kd_cu_waiters[KD_CU_MAX_STREAM_DEVICES];
static std::mutex kd_cu_waiters_mu;

kd_cuda_status kd_cu_stream_create(int device, int priority, uintptr_t *out) {
  *out = 0;
  kd_cu_device_guard g;
  KD_CU_TRY(g.enter(device));
  int lo = 0, hi = 0;
  KD_CU_CHECK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
  /* PyTorch: priority 0 is the default, negative numbers are higher priority. */
  int p = priority < hi ? hi : priority > lo ? lo : priority;
  cudaStream_t s = NULL;
  KD_CU_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamDefault, p));
  *out = (uintptr_t)s;
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_stream_query(int device, uintptr_t stream, int *done) {
  *done = 0;
  kd_cu_device_guard g;
  KD_CU_TRY(g.enter(device));
  cudaError_t e = cudaStreamQuery(kd_cu_stream_of(stream));
  if (e == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return KD_CUDA_OK;
  }
  if (e != cudaSuccess) return kd_cu_fail(e, "cudaStreamQuery");
  *done = 1;
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_current_stream(int device, uintptr_t *out) {
  *out = 0;
  KD_CU_TRY(kd_cu_check_device(device));
  if (device >= KD_CU_MAX_STREAM_DEVICES) return KD_CUDA_OK;
  *out = kd_cu_stream_handle(kd_cu_stream(device));
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_set_current_stream(int device, uintptr_t stream) {
  KD_CU_TRY(kd_cu_check_device(device));
  if (device >= KD_CU_MAX_STREAM_DEVICES)
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "streams are supported on the first %d devices",
                       KD_CU_MAX_STREAM_DEVICES);
  kd_cu_tls_stream[device] = stream ? (cudaStream_t)stream : NULL;
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_event_create(int device, int enable_timing, void **out) {
  *out = NULL;
  kd_cu_device_guard g;
  KD_CU_TRY(g.enter(device));
  cudaEvent_t e = NULL;
  KD_CU_CHECK(cudaEventCreateWithFlags(&e, enable_timing ? cudaEventDefault : cudaEventDisableTiming));
  *out = (void *)e;
  return KD_CUDA_OK;
}

void kd_cu_event_destroy(void *event) {
  if (event && cudaEventDestroy((cudaEvent_t)event) != cudaSuccess) (void)cudaGetLastError();
}

kd_cuda_status kd_cu_event_record(void *event, int device, uintptr_t stream) {
  kd_cu_device_guard g;
  KD_CU_TRY(g.enter(device));
  KD_CU_CHECK(cudaEventRecord((cudaEvent_t)event, kd_cu_stream_of(stream)));
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_event_query(void *event, int *done) {
  *done = 0;
  KD_CU_TRY(kd_cu_ready());
  cudaError_t e = cudaEventQuery((cudaEvent_t)event);
  if (e == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return KD_CUDA_OK;
  }
  if (e != cudaSuccess) return kd_cu_fail(e, "cudaEventQuery");
  *done = 1;
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_event_elapsed_time(void *start, void *end, float *ms) {
  *ms = 0;
  KD_CU_TRY(kd_cu_ready());
  KD_CU_CHECK(cudaEventElapsedTime(ms, (cudaEvent_t)start, (cudaEvent_t)end));
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_stream_wait_event(int device, uintptr_t stream, void *event) {
  kd_cu_device_guard g;
  KD_CU_TRY(g.enter(device));
  KD_CU_CHECK(cudaStreamWaitEvent(kd_cu_stream_of(stream), (cudaEvent_t)event, 0));
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_launch_host_func(int device, uintptr_t stream, void (*fn)(void *), void *user) {
  kd_cu_device_guard g;
  KD_CU_TRY(g.enter(device));
  KD_CU_CHECK(cudaLaunchHostFunc(kd_cu_stream_of(stream), fn, user));
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_event_host_func(int device, void *event, void (*fn)(void *), void *user) {
  kd_cu_device_guard g;
  KD_CU_TRY(g.enter(device));
  if (device >= KD_CU_MAX_STREAM_DEVICES)
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "events are supported on the first %d devices",
                       KD_CU_MAX_STREAM_DEVICES);
  cudaStream_t w;
  {
    std::lock_guard<std::mutex> lock(kd_cu_waiters_mu);
    if (!kd_cu_waiters[device]) KD_CU_CHECK(cudaStreamCreateWithFlags(&kd_cu_waiters[device], cudaStreamNonBlocking));
    w = kd_cu_waiters[device];
  }
  KD_CU_CHECK(cudaStreamWaitEvent(w, (cudaEvent_t)event, 0));
  KD_CU_CHECK(cudaLaunchHostFunc(w, fn, user));
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_peek_error(int device) {
  KD_CU_TRY(kd_cu_ready());
  (void)device;
  cudaError_t e = cudaPeekAtLastError();
  if (e != cudaSuccess) return kd_cu_fail(e, "an earlier asynchronous CUDA call");
  return KD_CUDA_OK;
}

__global__ void kd_cu_spin_kernel(long long cycles, int fault) {
  long long start = clock64();
  while (clock64() - start < cycles) {
  }
  if (fault) __trap();
}

kd_cuda_status kd_cu_spin(int device, double ms) {
  kd_cu_device_guard g;
  KD_CU_TRY(g.enter(device));
  int khz = 0;
  KD_CU_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device));
  if (khz <= 0) khz = 1500000;
  int fault = ms < 0;
  long long cycles = (long long)((fault ? -ms : ms) * (double)khz);
  KD_LAUNCH(1, 1, 0, kd_cu_stream(device), kd_cu_spin_kernel)(cycles, fault);
  KD_CU_CHECK_LAUNCH("spin kernel");
  return KD_CUDA_OK;
}
