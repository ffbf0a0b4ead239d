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
};

struct CUevent_st {
  int device = 0;
  unsigned flags = 0;
  CUstream_st *stream = nullptr; /* of the last record; nullptr if never recorded */
  uint64_t seq = 0;
  std::shared_ptr<std::atomic<double>> time; /* ms on the host's monotonic clock, stamped when reached */
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
 * returns its sequence number through *seq. Fails with the device's sticky error. */
cudaError_t enqueue_op(CUstream_st *s, std::function<void()> fn, const std::pair<CUstream_st *, uint64_t> *extra,
                       uint64_t *seq);
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
  std::atomic<uint64_t> launches{0}, syncs{0}, h2d_bytes{0}, d2h_bytes{0}, d2d_bytes{0}, h2d_copies{0},
      d2h_copies{0}, d2d_copies{0}, mallocs{0}, frees{0}, host_funcs{0}, blocks{0}, threads{0};
};
extern counters g_count;

/* Which memory p..p+n lies in: 2 device memory of *device, 1 pinned host memory, 0 other (and
 * -1 when it starts in a device allocation but runs past its end). */
int classify(const void *p, size_t n, int *device);

}  // namespace kd_emu

#endif
