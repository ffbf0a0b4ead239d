/* ops_sort.cuh - the launchers of the kinds 40..63 of kd_cuda_op (sort, unique, median in
 * ops_sort.cu; convolution in ops_conv.cu; pooling in ops_pool.cu), called by ops_op.cu's
 * kd_cu_op, and the scratch buffer they share. */
#ifndef KD_CUDA_OPS_SORT_CUH
#define KD_CUDA_OPS_SORT_CUH

#include "iter.cuh"

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

/* The window of the convolution and pooling kinds, d[0..7] = kh, kw, sh, sw, ph, pw, dh, dw
 * (exact integers in doubles), into a geometry with those fields. */
template <typename G>
inline void kd_cu_read_window(G &g, const double *d) {
  g.kh = (int64_t)d[0];
  g.kw = (int64_t)d[1];
  g.sh = (int64_t)d[2];
  g.sw = (int64_t)d[3];
  g.ph = (int64_t)d[4];
  g.pw = (int64_t)d[5];
  g.dh = (int64_t)d[6];
  g.dw = (int64_t)d[7];
}

kd_cuda_status kd_cu_sort(int device, kd_cuda_op *o);   /* KD_CUDA_OP_SORT */
kd_cuda_status kd_cu_unique(int device, kd_cuda_op *o); /* KD_CUDA_OP_UNIQUE */
kd_cuda_status kd_cu_median(int device, kd_cuda_op *o); /* KD_CUDA_OP_MEDIAN */
kd_cuda_status kd_cu_conv(int device, kd_cuda_op *o);   /* KD_CUDA_OP_CONV (ops_conv.cu) */
kd_cuda_status kd_cu_pool(int device, kd_cuda_op *o);   /* KD_CUDA_OP_POOL (ops_pool.cu) */
kd_cuda_status kd_cu_scan_op(int device, kd_cuda_op *o); /* kind 45: cummax/cummin/cumprodBackward (ops_scan.cu) */

#endif
