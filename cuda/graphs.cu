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
 * or is discarded also drops its use of the pool. */
#include <atomic>
#include <new>

#include "kd_cuda_internal.h"
#include "ops_op.cuh"

struct kd_cu_graph {
  int device;
  uint64_t pool;
  cudaGraph_t graph;
  cudaGraphExec_t exec;
};

static std::atomic<uint64_t> kd_cu_graph_pools{0};

/* Ends the capture of stream s: the graph, or NULL with the error (the capture is then over too). */
static kd_cuda_status kd_cu_graph_end(int device, cudaStream_t s, uint64_t pool, bool discard, kd_cu_graph **out) {
  *out = NULL;
  cudaGraph_t graph = NULL;
  cudaError_t e = cudaStreamEndCapture(s, &graph);
  kd_cu_ca_end_capture(device, kd_cu_stream_handle(s));
  if (e != cudaSuccess || discard) {
    (void)cudaGetLastError();
    if (graph) cudaGraphDestroy(graph);
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
    kd_cu_ca_release_pool(device, pool);
    if (e != cudaSuccess) return kd_cu_fail(e, "cudaGraphInstantiate");
    return kd_cu_error(KD_CUDA_ERR_OOM, "out of host memory for a CUDA graph");
  }
  g->device = device;
  g->pool = pool;
  g->graph = graph;
  g->exec = exec;
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
      const uint64_t pool = o->i[0] ? (uint64_t)o->i[0] : ++kd_cu_graph_pools;
      KD_CU_TRY(kd_cu_ca_begin_capture(device, pool, kd_cu_stream_handle(s)));
      cudaError_t e = cudaStreamBeginCapture(s, (cudaStreamCaptureMode)o->i[1]);
      if (e != cudaSuccess) {
        kd_cu_ca_end_capture(device, kd_cu_stream_handle(s));
        kd_cu_ca_release_pool(device, pool);
        return kd_cu_fail(e, "cudaStreamBeginCapture");
      }
      o->result[0] = (int64_t)pool;
      return KD_CUDA_OK;
    }
    case KD_CUDA_GRAPH_END: {
      kd_cu_graph *g = NULL;
      KD_CU_TRY(kd_cu_graph_end(device, s, (uint64_t)o->i[0], o->i[1] != 0, &g));
      o->result[0] = (int64_t)(intptr_t)g;
      return KD_CUDA_OK;
    }
    case KD_CUDA_GRAPH_REPLAY: {
      kd_cu_graph *g = (kd_cu_graph *)(intptr_t)o->i[0];
      if (!g || g->device != device) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "replay: not a graph of cuda:%d", device);
      KD_CU_CHECK(cudaGraphLaunch(g->exec, s));
      return KD_CUDA_OK;
    }
    case KD_CUDA_GRAPH_RESET: {
      kd_cu_graph *g = (kd_cu_graph *)(intptr_t)o->i[0];
      if (!g || g->device != device) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "reset: not a graph of cuda:%d", device);
      cudaGraphExecDestroy(g->exec); /* a replay in flight finishes first (CUDA keeps what it needs) */
      cudaGraphDestroy(g->graph);
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
