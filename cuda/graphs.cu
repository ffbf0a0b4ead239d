/* graphs.cu - CUDA graphs: capture of the current stream, replay, reset (KD_CUDA_OP_GRAPH in
 * kd_cuda_api.h), as PyTorch's at::cuda::CUDAGraph.
 *
 * A capture begins with cudaStreamBeginCapture on the device's current stream, in the mode the
 * caller picks (kd.cuda's default: thread-local, where synchronising or unsafe calls from this
 * thread fail and invalidate it and other threads are unaffected), and routes the allocations of that stream to the graph's private pool in the
 * caching allocator (Note [Graph-private pools] in caching_allocator_core.c): the addresses the
 * graph's kernels were captured with stay reserved for it. The end instantiates the graph; a
 * replay is one cudaGraphLaunch on the current stream; a reset destroys graph and executable and
 * drops the graph's use of its pool. A capture that failed (invalidated by a synchronising call)
 * or is discarded also drops its use of the pool. Random ops captured read their seed and offset
 * from two device words of the graph, written before each replay (Note [Random ops in CUDA
 * graphs] in philox_state.cuh). */
#include <atomic>
#include <mutex>
#include <new>

#include "kd_cuda_internal.h"
#include "ops_op.cuh"
#include "philox_state.cuh"

struct kd_cu_graph {
  int device;
  uint64_t pool;
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  uint64_t *philox;        /* {seed, base offset} read by its random kernels (device memory) */
  bool random;             /* whether it captured a random op */
  uint64_t increment;      /* generator offsets its capture took: each replay advances by this */
  uint64_t philox_host[2]; /* the staging of the replay's copy into philox */
};

/* The captures running (a slot each), for the random launches captured into them: on their
 * origin stream or on a stream joined to the capture (by an event wait), known by capture id. */
struct kd_cu_graph_capture {
  int device;
  cudaStream_t stream; /* the origin stream; NULL: a free slot */
  unsigned long long id; /* CUDA's capture id */
  uint64_t *philox;
  uint64_t base_offset; /* the generator offset at capture begin */
  bool random;
};
static kd_cu_graph_capture kd_cu_captures[16];
static std::mutex kd_cu_captures_mu;

/* The slot of the capture begun on stream s of `device` (s NULL: a free slot), or NULL. Under the lock. */
static kd_cu_graph_capture *kd_cu_capture_of(int device, cudaStream_t s) {
  for (kd_cu_graph_capture &c : kd_cu_captures)
    if (c.stream == s && (!s || c.device == device)) return &c;
  return NULL;
}

static std::atomic<uint64_t> kd_cu_graph_pools{0};

kd_cu_philox kd_cu_graph_philox(int device, cudaStream_t s, uint64_t seed, uint64_t offset) {
  kd_cu_philox ph = {seed, offset, NULL, 0};
  if (!s || s == cudaStreamLegacy) return ph;
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  unsigned long long id = 0;
  if (cudaStreamGetCaptureInfo(s, &st, &id) != cudaSuccess) {
    (void)cudaGetLastError();
    return ph;
  }
  if (st != cudaStreamCaptureStatusActive) return ph;
  std::lock_guard<std::mutex> lock(kd_cu_captures_mu);
  for (kd_cu_graph_capture &c : kd_cu_captures) {
    if (!c.stream || c.device != device || c.id != id) continue;
    c.random = true;
    ph.graph = c.philox;
    ph.increment = offset - c.base_offset;
    break;
  }
  return ph;
}

/* Ends the capture of stream s: the graph, or NULL with the error (the capture is then over too). */
static kd_cuda_status kd_cu_graph_end(int device, cudaStream_t s, uint64_t pool, bool discard, uint64_t end_offset,
                                      kd_cu_graph **out) {
  *out = NULL;
  cudaGraph_t graph = NULL;
  cudaError_t e = cudaStreamEndCapture(s, &graph);
  kd_cu_ca_end_capture(device, kd_cu_stream_handle(s));
  kd_cu_graph_capture capture = kd_cu_graph_capture();
  {
    std::lock_guard<std::mutex> lock(kd_cu_captures_mu);
    if (kd_cu_graph_capture *c = kd_cu_capture_of(device, s)) {
      capture = *c;
      *c = kd_cu_graph_capture();
    }
  }
  if (e != cudaSuccess || discard) {
    (void)cudaGetLastError();
    if (graph) cudaGraphDestroy(graph);
    if (capture.philox) cudaFree(capture.philox);
    kd_cu_ca_release_pool(device, pool);
    if (discard) return KD_CUDA_OK;
    return kd_cu_fail(e, "cudaStreamEndCapture");
  }
  cudaGraphExec_t exec = NULL;
  e = cudaGraphInstantiate(&exec, graph, 0);
  kd_cu_graph *g = e == cudaSuccess ? new (std::nothrow) kd_cu_graph() : NULL;
  if (!g) {
    if (exec) cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    if (capture.philox) cudaFree(capture.philox);
    kd_cu_ca_release_pool(device, pool);
    if (e != cudaSuccess) return kd_cu_fail(e, "cudaGraphInstantiate");
    return kd_cu_error(KD_CUDA_ERR_OOM, "out of host memory for a CUDA graph");
  }
  g->device = device;
  g->pool = pool;
  g->graph = graph;
  g->exec = exec;
  g->philox = capture.philox;
  g->random = capture.random;
  g->increment = end_offset - capture.base_offset;
  *out = g;
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_graph_op(int device, kd_cuda_op *o) {
  cudaStream_t s = kd_cu_stream(device);
  switch (o->code) {
    case KD_CUDA_GRAPH_POOL_NEW:
      o->result[0] = (int64_t)++kd_cu_graph_pools;
      return KD_CUDA_OK;
    case KD_CUDA_GRAPH_BEGIN: {
      if (s == cudaStreamLegacy)
        return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "CUDA graphs must be captured on a non-default stream");
      if (o->i[1] < 0 || o->i[1] > 2) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "graph: bad capture mode %lld", (long long)o->i[1]);
      std::lock_guard<std::mutex> lock(kd_cu_captures_mu);
      kd_cu_graph_capture *slot = kd_cu_capture_of(device, NULL);
      if (!slot) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "graph: more than 16 captures at once");
      const uint64_t pool = o->i[0] ? (uint64_t)o->i[0] : ++kd_cu_graph_pools;
      uint64_t *philox = NULL;
      KD_CU_CHECK(cudaMalloc((void **)&philox, 2 * sizeof(uint64_t))); /* before the capture: not captured */
      kd_cuda_status st = kd_cu_ca_begin_capture(device, pool, kd_cu_stream_handle(s));
      if (st != KD_CUDA_OK) {
        cudaFree(philox);
        return st;
      }
      cudaError_t e = cudaStreamBeginCapture(s, (cudaStreamCaptureMode)o->i[1]);
      if (e != cudaSuccess) {
        cudaFree(philox);
        kd_cu_ca_end_capture(device, kd_cu_stream_handle(s));
        kd_cu_ca_release_pool(device, pool);
        return kd_cu_fail(e, "cudaStreamBeginCapture");
      }
      cudaStreamCaptureStatus st_now = cudaStreamCaptureStatusNone; /* the id of a capture just begun on s */
      (void)cudaStreamGetCaptureInfo(s, &st_now, &slot->id);
      slot->device = device;
      slot->stream = s;
      slot->philox = philox;
      slot->base_offset = (uint64_t)o->i[2];
      slot->random = false;
      o->result[0] = (int64_t)pool;
      return KD_CUDA_OK;
    }
    case KD_CUDA_GRAPH_END: {
      kd_cu_graph *g = NULL;
      KD_CU_TRY(kd_cu_graph_end(device, s, (uint64_t)o->i[0], o->i[1] != 0, (uint64_t)o->i[2], &g));
      o->result[0] = (int64_t)(intptr_t)g;
      return KD_CUDA_OK;
    }
    case KD_CUDA_GRAPH_REPLAY: {
      kd_cu_graph *g = (kd_cu_graph *)(intptr_t)o->i[0];
      if (!g || g->device != device) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "replay: not a graph of cuda:%d", device);
      if (g->random) { /* this replay's seed and base offset (the copy is staged before it returns) */
        g->philox_host[0] = (uint64_t)o->i[2];
        g->philox_host[1] = (uint64_t)o->i[3];
        KD_CU_CHECK(cudaMemcpyAsync(g->philox, g->philox_host, sizeof g->philox_host, cudaMemcpyHostToDevice, s));
      }
      KD_CU_CHECK(cudaGraphLaunch(g->exec, s));
      o->result[1] = (int64_t)g->increment;
      return KD_CUDA_OK;
    }
    case KD_CUDA_GRAPH_RESET: {
      kd_cu_graph *g = (kd_cu_graph *)(intptr_t)o->i[0];
      if (!g || g->device != device) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "reset: not a graph of cuda:%d", device);
      cudaGraphExecDestroy(g->exec); /* a replay in flight finishes first (CUDA keeps what it needs) */
      cudaGraphDestroy(g->graph);
      if (g->philox) cudaFree(g->philox); /* cudaFree waits for a replay in flight */
      kd_cu_ca_release_pool(device, g->pool);
      delete g;
      return KD_CUDA_OK;
    }
    case KD_CUDA_GRAPH_STATUS: {
      cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
      if (s != cudaStreamLegacy) KD_CU_CHECK(cudaStreamIsCapturing(s, &st));
      o->result[0] = (int64_t)st;
      return KD_CUDA_OK;
    }
    case KD_CUDA_GRAPH_POOL_USES:
      o->result[0] = kd_cu_ca_pool_uses(device, (uint64_t)o->i[0]);
      return KD_CUDA_OK;
    default: return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "graph: unknown code %d", (int)o->code);
  }
}
