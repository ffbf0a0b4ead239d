/* ops_reduce.cuh - what the reduction-shaped CUDA files share (ops_reduce.cu, ops_softmax.cu,
 * ops_norm.cu): warp and block reductions of any trivially copyable accumulator type combined
 * by a functor `op.comb(a, b)` (the accumulator travels through shuffles as 32-bit words),
 * a scratch buffer from the caching allocator freed on every path, and the entries of the
 * version-4 ABI slots (reduce, rows, random). */
#ifndef KD_CUDA_OPS_REDUCE_CUH
#define KD_CUDA_OPS_REDUCE_CUH

#include "iter.cuh"
#include "scratch.cuh"

/* a shifted down by `delta` lanes (every lane of the warp must call it). */
template <typename A>
__device__ __forceinline__ A kd_cu_shfl_down(A a, int delta) {
  constexpr int W = (int)((sizeof(A) + 3) / 4);
  union {
    A a;
    uint32_t w[W];
  } u;
  u.a = a;
#pragma unroll
  for (int k = 0; k < W; k++) u.w[k] = __shfl_down_sync(0xffffffffu, u.w[k], delta);
  return u.a;
}

/* The warp's combined value, valid in lane 0. */
template <typename A, typename Op>
__device__ __forceinline__ A kd_cu_warp_reduce(A a, const Op &op) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) a = op.comb(a, kd_cu_shfl_down(a, off));
  return a;
}

/* The block's combined value, valid in thread 0; every thread of the block must call it
 * (blockDim.x a multiple of 32, at most 1024). Ends with a barrier so it can be called again. */
template <typename A, typename Op>
__device__ __forceinline__ A kd_cu_block_reduce(A a, const Op &op) {
  __shared__ __align__(16) unsigned char kd_cu_red_smem[32 * sizeof(A)];
  A *sm = (A *)kd_cu_red_smem;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = (blockDim.x + 31) >> 5;
  a = kd_cu_warp_reduce(a, op);
  if (lane == 0) sm[warp] = a;
  __syncthreads();
  if (warp == 0) {
    a = lane < nwarps ? sm[lane] : op.ident();
    a = kd_cu_warp_reduce(a, op);
  }
  __syncthreads();
  return a;
}

/* The combined value broadcast to every thread of the block (same calling rules). */
template <typename A, typename Op>
__device__ __forceinline__ A kd_cu_block_allreduce(A a, const Op &op) {
  __shared__ __align__(16) unsigned char kd_cu_red_bcast[sizeof(A)];
  a = kd_cu_block_reduce(a, op);
  if (threadIdx.x == 0) *(A *)kd_cu_red_bcast = a;
  __syncthreads();
  a = *(A *)kd_cu_red_bcast;
  __syncthreads();
  return a;
}

/* Sum and max functors for the row kernels (max propagates NaN, as the CPU's). */
template <typename A>
struct kd_cu_sum_op {
  __device__ __forceinline__ A ident() const { return (A)0; }
  __device__ __forceinline__ A comb(A a, A b) const { return a + b; }
};
template <typename A>
struct kd_cu_max_op {
  __device__ __forceinline__ A ident() const { return -(A)INFINITY; }
  __device__ __forceinline__ A comb(A a, A b) const { return (b > a || b != b) ? b : a; }
};

/* ---- the version-4 entries ---- */
kd_cuda_status kd_cu_reduce(int device, const kd_cuda_reduce *r);         /* ops_reduce.cu  */
kd_cuda_status kd_cu_rows(int device, const kd_cuda_rows *r);             /* ops_softmax.cu */
kd_cuda_status kd_cu_scan_rows(int device, const kd_cuda_rows *r);        /* ops_scan.cu    */
kd_cuda_status kd_cu_layer_norm_rows(int device, const kd_cuda_rows *r);  /* ops_norm.cu    */
kd_cuda_status kd_cu_random(int device, const kd_cuda_random *r);         /* ops_random.cu  */

#endif
