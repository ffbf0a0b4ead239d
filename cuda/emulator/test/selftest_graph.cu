/* selftest_graph.cu - the emulated GPU's stream capture and graphs (Note [Emulated stream
 * capture] in cuda/emulator/graph.cpp): work is recorded, not run; a replay runs it in order as
 * one launch; synchronising and unsafe calls fail with CUDA's error codes and invalidate. */
#include "kd_cuda_internal.h"
#include "selftest.h"

extern "C" int kd_cuda_emulator_stats(kd_cuda_emu_stats *out);

static kd_cuda_emu_stats stats_now() {
  kd_cuda_emu_stats s;
  kd_cuda_emulator_stats(&s);
  return s;
}

__global__ void k_graph_axpy(float *y, const float *x, float a, int n) {
  int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void k_graph_add1(float *y, int n) {
  int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) y[i] += 1.0f;
}

static void host_count(void *p) { ++*(int *)p; }

void test_graph_capture() {
  const int n = 100;
  dev_buf<float> x(n), y(n);
  x.put(std::vector<float>(n, 2.0f));
  cudaStream_t s, s2;
  CK(cudaStreamCreate(&s));
  CK(cudaStreamCreate(&s2));
  cudaEvent_t fork, join;
  CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  CK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
  static int host_calls = 0;
  float *pinned = nullptr;
  CK(cudaHostAlloc((void **)&pinned, sizeof(float), 0));
  CHECK(cudaStreamBeginCapture(nullptr, cudaStreamCaptureModeGlobal) == cudaErrorStreamCaptureUnsupported,
        "capturing the legacy stream");
  cudaGetLastError();
  const uint64_t launches0 = stats_now().launches;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaErrorIllegalState, "a second begin");
  cudaGetLastError();
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  unsigned long long id = 0;
  CK(cudaStreamGetCaptureInfo(s, &st, &id));
  CHECK(st == cudaStreamCaptureStatusActive && id != 0, "capture info: status %d id %llu", (int)st, id);
  KD_LAUNCH(1, 128, 0, s, k_graph_axpy)(y.p, x.p, 3.0f, n); /* y += 3 x */
  CK(cudaEventRecord(fork, s));
  CK(cudaStreamWaitEvent(s2, fork, 0)); /* s2 joins the capture */
  CK(cudaStreamIsCapturing(s2, &st));
  CHECK(st == cudaStreamCaptureStatusActive, "s2 did not join the capture");
  KD_LAUNCH(1, 128, 0, s2, k_graph_add1)(y.p, n); /* y += 1 */
  CK(cudaEventRecord(join, s2));
  CK(cudaStreamWaitEvent(s, join, 0));
  CK(cudaMemcpyAsync(pinned, y.p, sizeof(float), cudaMemcpyDeviceToHost, s));
  CK(cudaLaunchHostFunc(s, host_count, &host_calls));
  CHECK(cudaEventQuery(join) == cudaErrorCapturedEvent, "querying a captured event");
  cudaGetLastError();
  cudaGraph_t graph = nullptr;
  CK(cudaStreamEndCapture(s, &graph));
  CHECK(graph != nullptr, "no graph");
  CHECK(stats_now().launches == launches0, "capture launched %llu kernels",
        (unsigned long long)(stats_now().launches - launches0));
  CHECK(y.get()[0] == 0.0f && host_calls == 0, "captured work ran (y %g, host %d)", y.get()[0], host_calls);
  cudaGraphExec_t exec = nullptr;
  CK(cudaGraphInstantiate(&exec, graph, 0));
  const kd_cuda_emu_stats before = stats_now();
  for (int r = 0; r < 3; r++) CK(cudaGraphLaunch(exec, s));
  CK(cudaStreamSynchronize(s));
  CHECK(y.get()[n - 1] == 21.0f && *pinned == 21.0f && host_calls == 3, "3 replays: y %g pinned %g host %d",
        y.get()[n - 1], *pinned, host_calls);
  const kd_cuda_emu_stats after = stats_now();
  CHECK(after.launches - before.launches == 3 && after.graph_launches - before.graph_launches == 3 &&
            after.graph_kernels - before.graph_kernels == 6,
        "3 replays counted %llu launches, %llu graph kernels", (unsigned long long)(after.launches - before.launches),
        (unsigned long long)(after.graph_kernels - before.graph_kernels));
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(graph));

  /* a synchronising call invalidates; later work and the end report it */
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  CHECK(cudaStreamSynchronize(s) == cudaErrorStreamCaptureUnsupported, "cudaStreamSynchronize while capturing");
  KD_LAUNCH(1, 128, 0, s, k_graph_add1)(y.p, n);
  CHECK(cudaGetLastError() == cudaErrorStreamCaptureInvalidated, "a launch into an invalidated capture");
  CK(cudaStreamIsCapturing(s, &st));
  CHECK(st == cudaStreamCaptureStatusInvalidated, "status %d after invalidation", (int)st);
  graph = (cudaGraph_t)1;
  CHECK(cudaStreamEndCapture(s, &graph) == cudaErrorStreamCaptureInvalidated && graph == nullptr,
        "end of an invalidated capture");
  cudaGetLastError();

  /* legacy-stream work while a blocking stream captures: implicit synchronisation */
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  float h = 0;
  CHECK(cudaMemcpy(&h, y.p, sizeof h, cudaMemcpyDeviceToHost) == cudaErrorStreamCaptureImplicit,
        "a blocking cudaMemcpy while capturing");
  CHECK(cudaStreamEndCapture(s, &graph) == cudaErrorStreamCaptureInvalidated, "end after an implicit sync");
  cudaGetLastError();

  /* unsafe calls: refused in thread-local mode, allowed once the thread is relaxed */
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  CK(cudaThreadExchangeStreamCaptureMode(&mode));
  void *p = nullptr;
  CK(cudaMalloc(&p, 256));
  CK(cudaThreadExchangeStreamCaptureMode(&mode));
  CHECK(mode == cudaStreamCaptureModeRelaxed, "the mode was not swapped back");
  KD_LAUNCH(1, 128, 0, s, k_graph_add1)(y.p, n);
  CK(cudaStreamEndCapture(s, &graph));
  CK(cudaGraphDestroy(graph));
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  CHECK(cudaFree(p) == cudaErrorStreamCaptureUnsupported, "cudaFree while capturing (thread-local mode)");
  CHECK(cudaStreamEndCapture(s, &graph) == cudaErrorStreamCaptureInvalidated, "end after cudaFree");
  cudaGetLastError();
  CK(cudaFree(p));

  /* a joined stream not waited for: unjoined */
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  CK(cudaEventRecord(fork, s));
  CK(cudaStreamWaitEvent(s2, fork, 0));
  KD_LAUNCH(1, 128, 0, s2, k_graph_add1)(y.p, n);
  CHECK(cudaStreamEndCapture(s, &graph) == cudaErrorStreamCaptureUnjoined, "end with unjoined work");
  cudaGetLastError();
  CK(cudaStreamIsCapturing(s2, &st));
  CHECK(st == cudaStreamCaptureStatusNone, "s2 still capturing after the end");
  CK(cudaDeviceSynchronize()); /* the device is usable again */

  /* destroying the stream of a capture ends it: unsafe calls are allowed again */
  cudaStream_t s3;
  CK(cudaStreamCreate(&s3));
  CK(cudaStreamBeginCapture(s3, cudaStreamCaptureModeThreadLocal));
  CK(cudaStreamDestroy(s3));
  CK(cudaMalloc(&p, 256));
  CK(cudaFree(p));

  cudaFreeHost(pinned);
  cudaEventDestroy(fork);
  cudaEventDestroy(join);
  CK(cudaStreamDestroy(s));
  CK(cudaStreamDestroy(s2));
  printf("ok graphs (capture records without running; events join streams; replay = one launch; sync, implicit, "
         "unsafe and unjoined errors invalidate)\n");
}
