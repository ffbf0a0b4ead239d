/* graph.cpp - stream capture and CUDA graphs on the emulated GPU.
 *
 * Note [Emulated stream capture]: cudaStreamBeginCapture puts a (non-legacy) stream in capture
 * mode. Work submitted to a capturing stream is recorded, not run: enqueue_op (streams.cpp)
 * appends the operation it would have queued (a kernel with its arguments copied at the launch,
 * a copy, a memset, a host function, a library call) to the capture as a re-runnable node. An
 * event recorded on a capturing stream marks a point of the capture; another stream that waits
 * for it joins the capture, and must be waited for by the origin stream before
 * cudaStreamEndCapture (else cudaErrorStreamCaptureUnjoined). The nodes are kept in issue order,
 * which respects every dependency, so a replay runs them in that order. As in CUDA:
 *   - a call that would synchronise with captured work fails with
 *     cudaErrorStreamCaptureUnsupported and invalidates the capture: cudaStreamSynchronize or
 *     cudaStreamQuery of a capturing stream, cudaDeviceSynchronize, a copy from or to pageable
 *     memory or a blocking cudaMemcpy on a capturing stream; querying or synchronising an event
 *     recorded in a capture is cudaErrorCapturedEvent;
 *   - work on the legacy stream while a blocking stream captures is
 *     cudaErrorStreamCaptureImplicit (it would have to wait for captured work) and invalidates;
 *   - "unsafe" calls (cudaMalloc, cudaFree, cudaHostAlloc, cudaFreeHost) are refused with
 *     cudaErrorStreamCaptureUnsupported, invalidating the capture, unless the calling thread's
 *     mode (cudaThreadExchangeStreamCaptureMode) is relaxed, or no capture concerns it (a
 *     thread-local capture of another thread, any relaxed capture);
 *   - once invalidated, work on the capture's streams fails with
 *     cudaErrorStreamCaptureInvalidated and cudaStreamEndCapture returns that error and no graph;
 *   - cudaMallocAsync on a capturing stream is a graph allocation: the memory belongs to the
 *     graph until the last of the graph and its executables is destroyed.
 * cudaGraphLaunch enqueues the whole graph as ONE operation of the launch stream: it counts as
 * one launch (and one graph launch); the kernels it replays are counted as graph_kernels. */
#include <atomic>

#include "emu.h"

namespace kd_emu {

static std::atomic<unsigned long long> g_capture_ids{0};
static std::vector<std::shared_ptr<capture>> *g_captures = new std::vector<std::shared_ptr<capture>>();
static thread_local int tls_capture_mode = cudaStreamCaptureModeGlobal;

/* What a graph and its executables share: the nodes and the graph allocations. */
struct graph_body {
  int device = 0;
  std::vector<graph_node> nodes;
  std::vector<void *> allocations;
  uint64_t kernels = 0;
  ~graph_body() {
    for (void *p : allocations) release_device_memory(p); /* the last replay has finished */
  }
};

void capture_invalidate_locked(capture *c) { c->invalidated = true; }

/* Called with g_mu held: the capture is over; its streams capture no more. */
static void capture_finish_locked(const std::shared_ptr<capture> &c) {
  c->ended = true;
  for (CUstream_st *t : dev(c->device).streams)
    if (t->cap == c) t->cap = nullptr;
  for (size_t i = 0; i < g_captures->size(); i++)
    if ((*g_captures)[i] == c) {
      g_captures->erase(g_captures->begin() + (long)i);
      break;
    }
}

void capture_drop_stream_locked(CUstream_st *s) {
  std::shared_ptr<capture> c = s->cap;
  capture_invalidate_locked(c.get());
  s->cap = nullptr;
  for (size_t i = 0; i < c->joined.size(); i++)
    if (c->joined[i] == s) c->joined.erase(c->joined.begin() + (long)i--);
  if (c->origin == s) capture_finish_locked(c); /* nobody can end it any more */
}

std::shared_ptr<capture> capture_of(CUstream_st *s) {
  std::lock_guard<std::mutex> lk(g_mu);
  return s->cap;
}

bool legacy_implicit_locked(int device, bool invalidate) {
  bool implicit = false;
  for (CUstream_st *t : dev(device).streams)
    if (t->cap && !(t->flags & cudaStreamNonBlocking)) {
      if (invalidate) capture_invalidate_locked(t->cap.get());
      implicit = true;
    }
  return implicit;
}

cudaError_t capture_forbid(CUstream_st *s) {
  std::lock_guard<std::mutex> lk(g_mu);
  if (s->cap) {
    capture_invalidate_locked(s->cap.get());
    return cudaErrorStreamCaptureUnsupported;
  }
  return s->legacy && legacy_implicit_locked(s->device, true) ? cudaErrorStreamCaptureImplicit : cudaSuccess;
}

cudaError_t capture_unsafe_call(void) {
  if (tls_capture_mode == cudaStreamCaptureModeRelaxed) return cudaSuccess;
  std::lock_guard<std::mutex> lk(g_mu);
  bool refused = false;
  for (auto &c : *g_captures) {
    const bool concerns = c->mode == cudaStreamCaptureModeGlobal ||
                          (c->mode == cudaStreamCaptureModeThreadLocal && c->thread == std::this_thread::get_id());
    if (concerns) {
      capture_invalidate_locked(c.get());
      refused = true;
    }
  }
  return refused ? cudaErrorStreamCaptureUnsupported : cudaSuccess;
}

cudaError_t capture_device_sync(int device) {
  std::lock_guard<std::mutex> lk(g_mu);
  bool refused = false;
  for (auto &c : *g_captures)
    if (c->device == device) {
      capture_invalidate_locked(c.get());
      refused = true;
    }
  return refused ? cudaErrorStreamCaptureUnsupported : cudaSuccess;
}

}  // namespace kd_emu

using namespace kd_emu;

struct CUgraph_st {
  std::shared_ptr<graph_body> body;
};
struct CUgraphExec_st {
  std::shared_ptr<graph_body> body;
};

cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode) {
  if (!mode || (int)*mode < 0 || (int)*mode > 2) return set_last_error(cudaErrorInvalidValue);
  const int prev = tls_capture_mode;
  tls_capture_mode = (int)*mode;
  *mode = (enum cudaStreamCaptureMode)prev;
  return cudaSuccess;
}

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode) {
  if ((int)mode < 0 || (int)mode > 2) return set_last_error(cudaErrorInvalidValue);
  if (!stream || stream == cudaStreamLegacy || stream == cudaStreamPerThread)
    return set_last_error(cudaErrorStreamCaptureUnsupported); /* the legacy stream cannot capture */
  CUstream_st *s = stream;
  cudaError_t e = sticky(s->device);
  if (e != cudaSuccess) return e;
  std::lock_guard<std::mutex> lk(g_mu);
  if (s->cap) return set_last_error(cudaErrorIllegalState);
  auto c = std::make_shared<capture>();
  c->id = ++g_capture_ids;
  c->device = s->device;
  c->mode = (int)mode;
  c->thread = std::this_thread::get_id();
  c->origin = s;
  s->cap = c;
  s->cap_last = 0;
  g_captures->push_back(c);
  return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph) {
  if (!pGraph) return set_last_error(cudaErrorInvalidValue);
  *pGraph = nullptr;
  if (!stream || stream == cudaStreamLegacy || stream == cudaStreamPerThread)
    return set_last_error(cudaErrorIllegalState);
  CUstream_st *s = stream;
  std::shared_ptr<capture> c;
  {
    std::lock_guard<std::mutex> lk(g_mu);
    if (!s->cap) return set_last_error(cudaErrorIllegalState);
    if (s->cap->origin != s) { /* ended on a stream that joined it */
      capture_invalidate_locked(s->cap.get());
      return set_last_error(cudaErrorStreamCaptureUnmatched);
    }
    c = s->cap;
    if (c->mode != cudaStreamCaptureModeRelaxed && c->thread != std::this_thread::get_id())
      return set_last_error(cudaErrorStreamCaptureWrongThread);
    capture_finish_locked(c);
  }
  auto body = std::make_shared<graph_body>();
  body->device = c->device;
  body->allocations = std::move(c->allocations); /* freed with the graph, also when it is not returned */
  if (c->invalidated) return set_last_error(cudaErrorStreamCaptureInvalidated);
  if (!c->joined.empty()) return set_last_error(cudaErrorStreamCaptureUnjoined);
  body->nodes = std::move(c->nodes);
  for (auto &n : body->nodes) body->kernels += (uint64_t)n.launches;
  *pGraph = new CUgraph_st{body};
  return cudaSuccess;
}

cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, enum cudaStreamCaptureStatus *status,
                                     unsigned long long *id) {
  if (!status) return set_last_error(cudaErrorInvalidValue);
  CUstream_st *s = resolve(stream);
  std::lock_guard<std::mutex> lk(g_mu);
  if (s->legacy && legacy_implicit_locked(s->device, false)) return set_last_error(cudaErrorStreamCaptureImplicit);
  *status = !s->cap ? cudaStreamCaptureStatusNone
                    : s->cap->invalidated ? cudaStreamCaptureStatusInvalidated : cudaStreamCaptureStatusActive;
  if (id && s->cap) *id = s->cap->id;
  return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *status) {
  return cudaStreamGetCaptureInfo(stream, status, nullptr);
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph, unsigned long long flags) {
  if (!pGraphExec || !graph || flags) return set_last_error(cudaErrorInvalidValue);
  *pGraphExec = new CUgraphExec_st{graph->body};
  return cudaSuccess;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
  if (!exec) return set_last_error(cudaErrorInvalidResourceHandle);
  CUstream_st *s = resolve(stream);
  std::shared_ptr<graph_body> body = exec->body;
  if (s->device != body->device) return set_last_error(cudaErrorInvalidValue);
  const bool captured = capture_of(s) != nullptr; /* launched into a capture: a child graph node */
  cudaError_t e = enqueue_op(
      s,
      [body] {
        for (auto &n : body->nodes) {
          if (sticky(body->device) != cudaSuccess) return; /* a fault ends the replay */
          n.fn();
        }
      },
      nullptr, nullptr, captured ? (int)body->kernels : 1);
  if (e != cudaSuccess) return set_last_error(e);
  if (!captured) {
    g_count.graph_launches++;
    g_count.graph_kernels += body->kernels;
  }
  return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  if (!exec) return set_last_error(cudaErrorInvalidResourceHandle);
  delete exec; /* a launch in flight keeps the body */
  return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  if (!graph) return set_last_error(cudaErrorInvalidResourceHandle);
  delete graph;
  return cudaSuccess;
}
