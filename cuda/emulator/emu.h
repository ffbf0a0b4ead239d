/* emu.h - what the emulated GPU's runtime files share (runtime.cpp, streams.cpp, grid.cpp,
 * cublas.cpp): its configuration, device state, errors, the stream queues and the counters.
 *
 * Note [Emulated streams]: every stream (each device's legacy default stream too) is a FIFO of
 * operations run in order by a host thread of its own, so the calling thread races ahead of the
 * work it enqueued exactly as with a GPU, and two streams really run at the same time. An
 * operation may wait for other streams to reach a point (a sequence number): that is how the
 * legacy stream's implicit synchronisation with blocking streams, cudaStreamWaitEvent and
 * event queries are expressed. One mutex and one condition variable guard all queues. */
#ifndef KD_EMU_EMU_H
#define KD_EMU_EMU_H

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "cuda_runtime.h"

namespace kd_emu {
/* One recorded operation of a stream capture (Note [Emulated stream capture] in graph.cpp):
 * re-runnable work (a kernel with its arguments copied at capture, a copy, a memset, a host
 * function, a library call) and the kernel launches it stands for. */
struct graph_node {
  std::function<void()> fn;
  int launches;
};
/* A capture sequence: the operations of its streams in issue order (a valid topological order
 * of the graph CUDA would build). Under g_mu. */
struct capture {
  unsigned long long id = 0;
  int device = 0;
  int mode = 0;                         /* cudaStreamCaptureMode */
  std::thread::id thread;               /* the thread that began it */
  CUstream_st *origin = nullptr;
  bool invalidated = false;
  bool ended = false;
  std::vector<graph_node> nodes;
  std::vector<CUstream_st *> joined;    /* streams that joined through cudaStreamWaitEvent */
  std::vector<void *> allocations;      /* cudaMallocAsync made while capturing: the graph's memory */
};
}  // namespace kd_emu

struct CUstream_st {
  int device = 0;
  unsigned flags = 0;
  int priority = 0;
  bool legacy = false;
  struct op {
    uint64_t seq;
    std::function<void()> fn; /* empty: a marker (event record, stream wait) */
    std::vector<std::pair<CUstream_st *, uint64_t>> deps;
  };
  std::deque<op> q;       /* under kd_emu::g_mu */
  uint64_t submitted = 0; /* sequence number of the last operation enqueued */
  uint64_t completed = 0; /* sequence number of the last operation finished */
  bool stopping = false;
  std::thread worker;
  std::shared_ptr<kd_emu::capture> cap; /* the capture it takes part in, under g_mu */
  size_t cap_last = 0;                  /* nodes of that capture when it last recorded one */
};

struct CUevent_st {
  int device = 0;
  unsigned flags = 0;
  CUstream_st *stream = nullptr; /* of the last record; nullptr if never recorded */
  uint64_t seq = 0;
  std::shared_ptr<std::atomic<double>> time; /* ms on the host's monotonic clock, stamped when reached */
  std::shared_ptr<kd_emu::capture> cap;      /* last recorded in a capturing stream: that capture */
  CUstream_st *cap_stream = nullptr;         /* ... on this stream, */
  size_t cap_node = 0;                       /* ... after this many of its nodes */
};

namespace kd_emu {

struct config {
  int devices;         /* KINDLING_CUDA_EMU_DEVICES (default 2) */
  size_t memory;       /* bytes per device: KINDLING_CUDA_EMU_MEMORY (default 8 GiB; K/M/G suffixes) */
  uint64_t seed;       /* KINDLING_CUDA_EMU_SEED: the order of blocks and of threads between barriers */
  int sms;             /* multiprocessors reported (132, as an H100 SXM) */
  size_t stack_size;   /* per GPU thread */
};
const config &cfg();

struct device_state {
  std::atomic<size_t> used{0};
  std::atomic<int> sticky{0};          /* a cudaError_t that every later call returns */
  CUstream_st *legacy = nullptr;       /* created on first use, under g_mu */
  std::vector<CUstream_st *> streams;  /* every stream of the device, under g_mu */
};
device_state &dev(int device);
int current_device();

/* Never destroyed: stream threads may still wait on them while the process exits. */
extern std::mutex &g_mu;
extern std::condition_variable &g_cv;

/* Records a non-sticky error for cudaGetLastError and returns it. */
cudaError_t set_last_error(cudaError_t e);
/* Makes e sticky on the device (a fault while running device work). */
void set_sticky(int device, cudaError_t e, const char *what);
/* The device's sticky error, or cudaSuccess. */
cudaError_t sticky(int device);

/* The device's legacy default stream (made on first use). */
CUstream_st *legacy_stream(int device);
/* NULL, cudaStreamLegacy and cudaStreamPerThread -> the current device's legacy stream. */
CUstream_st *resolve(cudaStream_t s);
/* Enqueues fn (may be empty) on s with the implicit legacy-stream dependencies and `extra`;
 * returns its sequence number through *seq (0 when captured). Fails with the device's sticky
 * error. `launches`: the kernel launches fn stands for (counted). On a capturing stream fn is
 * recorded instead (Note [Emulated stream capture] in graph.cpp); legacy-stream work while a
 * blocking stream captures fails with cudaErrorStreamCaptureImplicit. */
cudaError_t enqueue_op(CUstream_st *s, std::function<void()> fn, const std::pair<CUstream_st *, uint64_t> *extra,
                       uint64_t *seq, int launches = 0);
/* Capture checks (graph.cpp), each taking g_mu. capture_of: the capture s takes part in (null
 * if none). capture_forbid: s is capturing, so a synchronising call on it fails: the capture
 * is invalidated and cudaErrorStreamCaptureUnsupported returned (cudaSuccess when s is not
 * capturing; the legacy stream: cudaErrorStreamCaptureImplicit when a blocking stream of its
 * device captures). capture_unsafe_call: a call CUDA deems unsafe during capture (cudaMalloc,
 * cudaFree, ...) from this thread, per cudaThreadExchangeStreamCaptureMode's rules.
 * capture_device_sync: a device-wide synchronisation while a stream of the device captures. */
std::shared_ptr<capture> capture_of(CUstream_st *s);
cudaError_t capture_forbid(CUstream_st *s);
cudaError_t capture_unsafe_call(void);
cudaError_t capture_device_sync(int device);
/* Called with g_mu held: invalidates the capture (its streams' later work fails). */
void capture_invalidate_locked(capture *c);
/* Called with g_mu held: whether a blocking stream of the device captures (legacy-stream work
 * would then synchronise with captured work: cudaErrorStreamCaptureImplicit); with
 * `invalidate`, those captures are invalidated. */
bool legacy_implicit_locked(int device, bool invalidate);
/* Called with g_mu held, for a stream being destroyed: invalidates its capture and removes the
 * stream from it (the whole capture when the stream began it). */
void capture_drop_stream_locked(CUstream_st *s);
/* Blocks until s has completed operation seq. */
void wait_for(CUstream_st *s, uint64_t seq);
/* Blocks until every stream of the device is idle. */
void wait_device(int device);

/* Thrown by trap() outside a GPU thread (inside an emulated library kernel); the stream's thread
 * catches it and makes the device's error sticky. */
struct fault {
  cudaError_t error;
};

/* Counters (Note [Emulator counters] in runtime.cpp). */
struct counters {
  std::atomic<uint64_t> graph_launches{0}, graph_kernels{0}, launches{0}, syncs{0}, h2d_bytes{0}, d2h_bytes{0}, d2d_bytes{0}, h2d_copies{0},
      d2h_copies{0}, d2d_copies{0}, mallocs{0}, frees{0}, host_funcs{0}, blocks{0}, threads{0};
};
extern counters g_count;

/* Gives a device allocation back at once (no synchronisation; the caller knows it is unused). */
void release_device_memory(void *p);

/* Which memory p..p+n lies in: 2 device memory of *device, 1 pinned host memory, 0 other (and
 * -1 when it starts in a device allocation but runs past its end). */
int classify(const void *p, size_t n, int *device);

}  // namespace kd_emu

#endif
