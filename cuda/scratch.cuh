/* scratch.cuh - kd_cu_scratch, the temporary device buffer every multi-pass CUDA launcher
 * (reductions, losses, sort, convolution, pooling) takes its workspace from. */
#ifndef KD_CUDA_SCRATCH_CUH
#define KD_CUDA_SCRATCH_CUH

#include "kd_cuda_internal.h"

/* A device buffer from the caching allocator (memory.cu), given back when the object dies. The
 * allocator's blocks belong to the current stream and every launch here is on that stream, so
 * freeing right after enqueuing the work that uses the buffer is safe (stream order). */
struct kd_cu_scratch {
  int device;
  void *p;
  explicit kd_cu_scratch(int dev) : device(dev), p(nullptr) {}
  ~kd_cu_scratch() {
    if (p) kd_cu_free(device, p);
  }
  kd_cuda_status alloc(size_t nbytes) {
    if (p) kd_cu_free(device, p);
    p = nullptr;
    return kd_cu_malloc(device, nbytes ? nbytes : 1, &p);
  }
  template <typename T>
  T *as() const {
    return (T *)p;
  }
  kd_cu_scratch(const kd_cu_scratch &) = delete;
  kd_cu_scratch &operator=(const kd_cu_scratch &) = delete;
};

#endif
