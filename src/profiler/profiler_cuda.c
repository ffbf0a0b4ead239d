/* profiler_cuda.c - the CUDA side of the profiler. An op on a CUDA device gets a timing event
 * (a mark) recorded on the device's current stream before and after it, as PyTorch's profiler with
 * use_cuda; each kernel launch, reported by the CUDA library's launch observer, gets a mark just
 * before it and belongs to the innermost open event. Nothing waits per op: when the profile stops,
 * each stream's last mark is waited on with an event query loop (not a device synchronisation, so
 * errors pending on the stream stay for the next sync point), then an op's time is the time
 * between its marks and a kernel's the time from its mark to the next mark on its stream.
 * See profiler.h. */
#include <sched.h>
#include <stdlib.h>

#include "cuda_bridge/bridge.h"
#include "profiler/profiler.h"
#include "../../cuda/kd_cuda_api.h"

static const kd_cuda_api *kd_prof_api(void) {
  const kd_cuda_api *api;
  return kd_cuda_api_get(&api) == KD_OK ? api : NULL;
}

static int32_t kd_prof_mark_on(kd_prof_session *s, const kd_cuda_api *api, int device, uintptr_t stream) {
  if (s->n_marks == s->cap_marks) {
    int32_t cap = s->cap_marks ? s->cap_marks * 2 : 256;
    kd_prof_mark *m = (kd_prof_mark *)realloc(s->marks, (size_t)cap * sizeof *m);
    if (!m) return -1;
    s->marks = m;
    s->cap_marks = cap;
  }
  void *ev = NULL;
  if (api->event_create(device, 1, &ev) != KD_CUDA_OK) return -1;
  if (api->event_record(ev, device, stream) != KD_CUDA_OK) {
    api->event_destroy(ev);
    return -1;
  }
  s->marks[s->n_marks] = (kd_prof_mark){.event = ev, .device = (int16_t)device, .stream = stream, .cpu_ns = kd_profiler_now(s)};
  return s->n_marks++;
}

int32_t kd_profiler_cuda_mark(kd_prof_session *s, int device) {
  const kd_cuda_api *api = kd_prof_api();
  uintptr_t stream;
  if (!api || api->current_stream(device, &stream) != KD_CUDA_OK) return -1;
  return kd_prof_mark_on(s, api, device, stream);
}

/* The library's launch observer: a mark before the kernel, the kernel under the innermost event. */
static void kd_prof_on_launch(void *user, const char *kernel, int device, uintptr_t stream) {
  (void)user;
  kd_prof_session *s = kd_profiler_session();
  const kd_cuda_api *api = kd_prof_api();
  if (!s || !s->cuda || !s->depth || !api) return;
  if (s->n_kernels == s->cap_kernels) {
    int32_t cap = s->cap_kernels ? s->cap_kernels * 2 : 256;
    kd_prof_kernel *k = (kd_prof_kernel *)realloc(s->kernels, (size_t)cap * sizeof *k);
    if (!k) { s->dropped++; return; }
    s->kernels = k;
    s->cap_kernels = cap;
  }
  int32_t mark = kd_prof_mark_on(s, api, device, stream);
  if (mark < 0) { s->dropped++; return; }
  s->kernels[s->n_kernels++] = (kd_prof_kernel){.name = kernel, .event = s->stack[s->depth - 1], .mark = mark, .device = (int16_t)device, .stream = stream, .start_ns = -1, .dur_ns = -1};
}

static int kd_prof_observing; /* whether the observer is set (turning it off never loads CUDA) */

void kd_profiler_cuda_observe(bool on) {
  if (!on && !__atomic_load_n(&kd_prof_observing, __ATOMIC_RELAXED)) return;
  const kd_cuda_api *api = kd_prof_api();
  if (!api) return;
  api->set_launch_observer(on ? kd_prof_on_launch : NULL, NULL);
  __atomic_store_n(&kd_prof_observing, on, __ATOMIC_RELAXED);
}

static double kd_prof_elapsed_ns(const kd_cuda_api *api, const kd_prof_mark *a, const kd_prof_mark *b) {
  float ms = 0;
  return api->event_elapsed_time(a->event, b->event, &ms) == KD_CUDA_OK ? (double)ms * 1e6 : -1;
}

#define KD_PROF_STREAMS 64 /* (device, stream) pairs told apart at stop; more share the last slot */

void kd_profiler_cuda_finish(kd_prof_session *s) {
  const kd_cuda_api *api = kd_prof_api();
  int32_t *next = (int32_t *)malloc((size_t)s->n_marks * sizeof *next);
  if (!api || !next) {
    free(next);
    return;
  }
  /* backwards: each stream's last mark is waited on; next[i] = the next mark on i's stream */
  struct { int16_t device; uintptr_t stream; int32_t later; } seen[KD_PROF_STREAMS];
  int n_seen = 0;
  for (int32_t i = s->n_marks - 1; i >= 0; i--) {
    const kd_prof_mark *m = &s->marks[i];
    int k = 0;
    while (k < n_seen && !(seen[k].device == m->device && seen[k].stream == m->stream)) k++;
    if (k == n_seen) {
      int done = 0;
      while (api->event_query(m->event, &done) == KD_CUDA_OK && !done) sched_yield();
      if (n_seen < KD_PROF_STREAMS) n_seen++;
      else k = KD_PROF_STREAMS - 1;
      seen[k].device = m->device;
      seen[k].stream = m->stream;
      seen[k].later = -1;
    }
    next[i] = seen[k].later;
    seen[k].later = i;
  }
  for (int64_t i = 0; i < s->n; i++) {
    kd_prof_event *e = &s->events[i];
    if (e->cuda_start >= 0 && e->cuda_end >= 0) e->cuda_ns = kd_prof_elapsed_ns(api, &s->marks[e->cuda_start], &s->marks[e->cuda_end]);
  }
  /* a kernel starts at its device's first mark's CPU time plus the GPU time since that mark */
  int32_t first_of[KD_PROF_STREAMS];
  for (int d = 0; d < KD_PROF_STREAMS; d++) first_of[d] = -1;
  for (int32_t i = s->n_marks - 1; i >= 0; i--)
    if (s->marks[i].device >= 0 && s->marks[i].device < KD_PROF_STREAMS) first_of[s->marks[i].device] = i;
  for (int32_t i = 0; i < s->n_kernels; i++) {
    kd_prof_kernel *k = &s->kernels[i];
    const kd_prof_mark *m = &s->marks[k->mark];
    if (next[k->mark] >= 0) k->dur_ns = kd_prof_elapsed_ns(api, m, &s->marks[next[k->mark]]);
    int32_t first = m->device >= 0 && m->device < KD_PROF_STREAMS ? first_of[m->device] : -1;
    double since = first >= 0 ? kd_prof_elapsed_ns(api, &s->marks[first], m) : -1;
    if (since >= 0) k->start_ns = (double)s->marks[first].cpu_ns + since;
  }
  free(next);
  for (int32_t i = 0; i < s->n_marks; i++) api->event_destroy(s->marks[i].event);
  s->n_marks = 0;
}

void kd_profiler_cuda_free(kd_prof_session *s) {
  const kd_cuda_api *api = s->n_marks ? kd_prof_api() : NULL;
  for (int32_t i = 0; api && i < s->n_marks; i++) api->event_destroy(s->marks[i].event);
  free(s->marks);
  free(s->kernels);
}
