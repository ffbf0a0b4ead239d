/* streams.cpp - emulated streams, events, host functions and synchronisation
 * (Note [Emulated streams] in emu.h). */
#include <time.h>

#include "emu.h"

namespace kd_emu {

std::mutex &g_mu = *new std::mutex();
std::condition_variable &g_cv = *new std::condition_variable();

static double now_ms() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static bool ready(const CUstream_st::op &o) {
  for (auto &d : o.deps)
    if (d.first->completed < d.second) return false;
  return true;
}

static void worker_main(CUstream_st *s) {
  std::unique_lock<std::mutex> lk(g_mu);
  for (;;) {
    g_cv.wait(lk, [s] { return s->stopping || (!s->q.empty() && ready(s->q.front())); });
    if (s->q.empty()) return; /* stopping and drained */
    std::function<void()> fn = std::move(s->q.front().fn);
    const uint64_t seq = s->q.front().seq;
    lk.unlock();
    if (fn && sticky(s->device) == cudaSuccess) { /* after a fault the device runs nothing more */
      try {
        fn();
      } catch (const fault &f) {
        set_sticky(s->device, f.error, "an emulated library kernel");
      }
    }
    fn = nullptr;
    lk.lock();
    s->q.pop_front();
    s->completed = seq;
    g_cv.notify_all();
  }
}

/* Makes a stream and its thread. Called with g_mu held. */
static CUstream_st *stream_new(int device, unsigned flags, int priority, bool legacy) {
  CUstream_st *s = new CUstream_st();
  s->device = device;
  s->flags = flags;
  s->priority = priority;
  s->legacy = legacy;
  s->worker = std::thread(worker_main, s);
  dev(device).streams.push_back(s);
  return s;
}

CUstream_st *legacy_stream(int device) {
  device_state &d = dev(device);
  std::lock_guard<std::mutex> lk(g_mu);
  if (!d.legacy) d.legacy = stream_new(device, 0, 0, true);
  return d.legacy;
}

CUstream_st *resolve(cudaStream_t s) {
  if (s && s != cudaStreamLegacy && s != cudaStreamPerThread) return s;
  return legacy_stream(current_device());
}

cudaError_t enqueue_op(CUstream_st *s, std::function<void()> fn, const std::pair<CUstream_st *, uint64_t> *extra,
                       uint64_t *seq, int launches) {
  cudaError_t e = sticky(s->device);
  if (e != cudaSuccess) return e;
  std::lock_guard<std::mutex> lk(g_mu);
  if (seq) *seq = 0;
  if (s->cap) { /* recorded, not run (Note [Emulated stream capture] in graph.cpp) */
    capture *c = s->cap.get();
    if (c->invalidated) return cudaErrorStreamCaptureInvalidated;
    if (fn) c->nodes.push_back(graph_node{std::move(fn), launches});
    s->cap_last = c->nodes.size();
    return cudaSuccess;
  }
  /* the legacy stream would have to wait for a capturing blocking stream */
  if (s->legacy && legacy_implicit_locked(s->device, true)) return cudaErrorStreamCaptureImplicit;
  CUstream_st::op o;
  o.seq = ++s->submitted;
  o.fn = std::move(fn);
  device_state &d = dev(s->device);
  if (s->legacy) { /* the legacy stream waits for the work of every blocking stream issued before */
    for (CUstream_st *t : d.streams)
      if (t != s && !(t->flags & cudaStreamNonBlocking) && t->submitted > t->completed)
        o.deps.push_back({t, t->submitted});
  } else if (!(s->flags & cudaStreamNonBlocking) && d.legacy && d.legacy->submitted > d.legacy->completed) {
    o.deps.push_back({d.legacy, d.legacy->submitted}); /* and blocking streams wait for the legacy stream */
  }
  if (extra && extra->first) o.deps.push_back(*extra);
  s->q.push_back(std::move(o));
  if (seq) *seq = s->submitted;
  g_count.launches += (uint64_t)launches;
  g_cv.notify_all();
  return cudaSuccess;
}

void wait_for(CUstream_st *s, uint64_t seq) {
  std::unique_lock<std::mutex> lk(g_mu);
  g_cv.wait(lk, [s, seq] { return s->completed >= seq; });
}

void wait_device(int device) {
  std::unique_lock<std::mutex> lk(g_mu);
  device_state &d = dev(device);
  std::vector<std::pair<CUstream_st *, uint64_t>> targets;
  for (CUstream_st *s : d.streams) targets.push_back({s, s->submitted});
  g_cv.wait(lk, [&] {
    for (auto &t : targets)
      if (t.first->completed < t.second) return false;
    return true;
  });
}

cudaError_t enqueue(cudaStream_t stream, const char *name, int launches, std::function<void()> fn) {
  (void)name;
  CUstream_st *s = resolve(stream);
  cudaError_t e = enqueue_op(s, std::move(fn), nullptr, nullptr, launches);
  return e == cudaSuccess ? e : set_last_error(e);
}

}  // namespace kd_emu

using namespace kd_emu;

cudaError_t cudaStreamCreateWithPriority(cudaStream_t *pStream, unsigned int flags, int priority) {
  if (!pStream || (flags & ~1u)) return set_last_error(cudaErrorInvalidValue);
  int d = current_device();
  cudaError_t e = sticky(d);
  if (e != cudaSuccess) return e;
  if (priority > 0) priority = 0;
  if (priority < -5) priority = -5;
  std::lock_guard<std::mutex> lk(g_mu);
  *pStream = stream_new(d, flags, priority, false);
  return cudaSuccess;
}
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags) {
  return cudaStreamCreateWithPriority(pStream, flags, 0);
}
cudaError_t cudaStreamCreate(cudaStream_t *pStream) { return cudaStreamCreateWithPriority(pStream, 0, 0); }

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  if (!stream || stream == cudaStreamLegacy || stream == cudaStreamPerThread)
    return set_last_error(cudaErrorInvalidResourceHandle);
  CUstream_st *s = stream;
  {
    std::lock_guard<std::mutex> lk(g_mu);
    if (s->cap) capture_drop_stream_locked(s); /* a capture it takes part in is invalidated */
    s->stopping = true; /* its thread finishes the queued work, then ends */
    auto &v = dev(s->device).streams;
    for (size_t i = 0; i < v.size(); i++)
      if (v[i] == s) {
        v.erase(v.begin() + (long)i);
        break;
      }
    g_cv.notify_all();
  }
  s->worker.join();
  delete s;
  return cudaSuccess;
}

cudaError_t cudaStreamQuery(cudaStream_t stream) {
  CUstream_st *s = resolve(stream);
  cudaError_t e = sticky(s->device);
  if (e != cudaSuccess) return e;
  if ((e = capture_forbid(s)) != cudaSuccess) return set_last_error(e);
  std::lock_guard<std::mutex> lk(g_mu);
  return s->completed >= s->submitted ? cudaSuccess : cudaErrorNotReady; /* not recorded as a last error */
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  CUstream_st *s = resolve(stream);
  cudaError_t e = capture_forbid(s);
  if (e != cudaSuccess) return set_last_error(e);
  uint64_t target;
  {
    std::lock_guard<std::mutex> lk(g_mu);
    target = s->submitted;
  }
  g_count.syncs++;
  wait_for(s, target);
  return sticky(s->device);
}

cudaError_t cudaDeviceSynchronize(void) {
  const int d = current_device();
  resolve(nullptr);
  cudaError_t e = capture_device_sync(d);
  if (e != cudaSuccess) return set_last_error(e);
  g_count.syncs++;
  wait_device(d);
  return sticky(d);
}

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData) {
  if (!fn) return set_last_error(cudaErrorInvalidValue);
  CUstream_st *s = resolve(stream);
  cudaError_t e = enqueue_op(s, [fn, userData] { fn(userData); }, nullptr, nullptr);
  if (e != cudaSuccess) return set_last_error(e);
  g_count.host_funcs++;
  return cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags) {
  if (!event || (flags & ~7u)) return set_last_error(cudaErrorInvalidValue);
  CUevent_st *e = new CUevent_st();
  e->device = current_device();
  e->flags = flags;
  *event = e;
  return cudaSuccess;
}
cudaError_t cudaEventCreate(cudaEvent_t *event) { return cudaEventCreateWithFlags(event, 0); }

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  if (!event) return set_last_error(cudaErrorInvalidResourceHandle);
  delete event; /* a pending record still owns its time stamp (shared) */
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  if (!event) return set_last_error(cudaErrorInvalidResourceHandle);
  CUstream_st *s = resolve(stream);
  if (s->device != event->device) return set_last_error(cudaErrorInvalidResourceHandle);
  {
    std::lock_guard<std::mutex> lk(g_mu);
    if (s->cap) { /* a point of the capture, which other streams may wait for (and so join it) */
      if (s->cap->invalidated) return set_last_error(cudaErrorStreamCaptureInvalidated);
      event->cap = s->cap;
      event->cap_stream = s;
      event->cap_node = s->cap->nodes.size();
      return cudaSuccess;
    }
    event->cap = nullptr;
  }
  auto stamp = std::make_shared<std::atomic<double>>(0.0);
  uint64_t seq = 0;
  cudaError_t e = enqueue_op(s, [stamp] { stamp->store(now_ms()); }, nullptr, &seq);
  if (e != cudaSuccess) return set_last_error(e);
  std::lock_guard<std::mutex> lk(g_mu);
  event->stream = s;
  event->seq = seq;
  event->time = stamp;
  return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
  if (!event) return set_last_error(cudaErrorInvalidResourceHandle);
  cudaError_t e = sticky(event->device);
  if (e != cudaSuccess) return e;
  std::lock_guard<std::mutex> lk(g_mu);
  if (event->cap && !event->cap->ended) return set_last_error(cudaErrorCapturedEvent);
  if (!event->stream) return cudaSuccess; /* never recorded: complete, as in CUDA */
  return event->stream->completed >= event->seq ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  if (!event) return set_last_error(cudaErrorInvalidResourceHandle);
  CUstream_st *s;
  uint64_t seq;
  {
    std::lock_guard<std::mutex> lk(g_mu);
    if (event->cap && !event->cap->ended) return set_last_error(cudaErrorCapturedEvent);
    s = event->stream;
    seq = event->seq;
  }
  if (s) {
    g_count.syncs++;
    wait_for(s, seq);
  }
  return sticky(event->device);
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end) {
  if (!ms || !start || !end) return set_last_error(cudaErrorInvalidResourceHandle);
  if ((start->flags | end->flags) & cudaEventDisableTiming) return set_last_error(cudaErrorInvalidResourceHandle);
  std::lock_guard<std::mutex> lk(g_mu);
  if (!start->stream || !end->stream) return set_last_error(cudaErrorInvalidResourceHandle);
  if (start->stream->completed < start->seq || end->stream->completed < end->seq) return cudaErrorNotReady;
  *ms = (float)(end->time->load() - start->time->load());
  return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
  if (!event || flags) return set_last_error(cudaErrorInvalidValue);
  CUstream_st *s = resolve(stream);
  std::pair<CUstream_st *, uint64_t> dep{nullptr, 0};
  {
    std::lock_guard<std::mutex> lk(g_mu);
    capture *c = event->cap && !event->cap->ended ? event->cap.get() : nullptr;
    if (c) { /* waiting for a point of a capture: s joins it (or, in it, depends on it) */
      if (s->cap && s->cap.get() != c) {
        capture_invalidate_locked(s->cap.get());
        return set_last_error(cudaErrorStreamCaptureMerge);
      }
      if (s->legacy) {
        capture_invalidate_locked(c);
        return set_last_error(cudaErrorStreamCaptureImplicit);
      }
      if (!s->cap) {
        s->cap = event->cap;
        s->cap_last = event->cap_node;
        c->joined.push_back(s);
      }
      CUstream_st *from = event->cap_stream;
      if (s == c->origin && from != c->origin && event->cap_node >= from->cap_last) /* rejoined */
        for (size_t i = 0; i < c->joined.size(); i++)
          if (c->joined[i] == from) c->joined.erase(c->joined.begin() + (long)i--);
      return cudaSuccess;
    }
    if (s->cap && event->stream) { /* a capture may not depend on work outside it */
      capture_invalidate_locked(s->cap.get());
      return set_last_error(cudaErrorStreamCaptureIsolation);
    }
    dep = {event->stream, event->seq};
  }
  if (!dep.first) return cudaSuccess; /* never recorded: nothing to wait for */
  cudaError_t e = enqueue_op(s, nullptr, &dep, nullptr);
  return e == cudaSuccess ? e : set_last_error(e);
}

cudaError_t cudaDeviceGetStreamPriorityRange(int *leastPriority, int *greatestPriority) {
  if (leastPriority) *leastPriority = 0;
  if (greatestPriority) *greatestPriority = -5;
  return cudaSuccess;
}
