/* profiler_cuda.c - the CUDA side of the profiler: timing events recorded on the current stream
 * of a CUDA op's device before and after the op (as PyTorch's profiler with use_cuda), read once
 * the profile stops by waiting on each device's last mark (an event query loop: no device
 * synchronisation per op, none of the stream's pending errors consumed). See profiler.h. */
#include <sched.h>

#include "cuda_bridge/bridge.h"
#include "profiler/profiler.h"
#include "../../cuda/kd_cuda_api.h"

void *kd_profiler_cuda_mark(int device) {
  const kd_cuda_api *api;
  uintptr_t stream;
  void *ev = NULL;
  if (kd_cuda_api_get(&api) != KD_OK) return NULL;
  if (api->current_stream(device, &stream) != KD_CUDA_OK) return NULL;
  if (api->event_create(device, 1, &ev) != KD_CUDA_OK) return NULL;
  if (api->event_record(ev, device, stream) != KD_CUDA_OK) {
    api->event_destroy(ev);
    return NULL;
  }
  return ev;
}

bool kd_profiler_cuda_wait(void *mark) {
  const kd_cuda_api *api;
  int done = 0;
  if (!mark || kd_cuda_api_get(&api) != KD_OK) return false;
  while (api->event_query(mark, &done) == KD_CUDA_OK && !done) sched_yield();
  return done != 0;
}

double kd_profiler_cuda_elapsed_ns(void *start, void *end) {
  const kd_cuda_api *api;
  float ms = 0;
  if (!start || !end || kd_cuda_api_get(&api) != KD_OK) return -1;
  return api->event_elapsed_time(start, end, &ms) == KD_CUDA_OK ? (double)ms * 1e6 : -1;
}

void kd_profiler_cuda_release(void *mark) {
  const kd_cuda_api *api;
  if (mark && kd_cuda_api_get(&api) == KD_OK) api->event_destroy(mark);
}
