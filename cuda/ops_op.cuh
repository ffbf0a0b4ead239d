/* ops_op.cuh - what the non-pointwise launchers (ops_op.cu's kd_cu_op entry, ops_index.cu,
 * ops_optim.cu) share: the kd_cuda_op -> kd_cu_iter conversion and the launchers. */
#ifndef KD_CUDA_OPS_OP_CUH
#define KD_CUDA_OPS_OP_CUH

#include "iter.cuh"

/* The iteration of a kd_cuda_op (scalar operands resolved, see ops_op.cu). */
kd_cuda_status kd_cu_op_iter(const kd_cuda_op *o, kd_cu_iter<KD_CUDA_OP_MAX_OPS> *it);

/* Operand k's value at byte offset off: from parameter space for a host scalar, else memory. */
template <typename T, int N, typename I>
__device__ __forceinline__ T kd_cu_op_get(const kd_cu_iter<N> &it, int k, I off) {
  if (it.scalar_mask & (1u << k)) {
    T v;
    memcpy(&v, &it.scalar[k], sizeof(T));
    return v;
  }
  return *(const T *)(it.data[k] + off);
}

kd_cuda_status kd_cu_ix_check(int device, kd_cuda_op *o);
kd_cuda_status kd_cu_ix_gather(int device, kd_cuda_op *o);
kd_cuda_status kd_cu_ix_scatter(int device, kd_cuda_op *o);
kd_cuda_status kd_cu_optim(int device, kd_cuda_op *o);
kd_cuda_status kd_cu_amp(int device, kd_cuda_op *o); /* ops_amp.cu */
kd_cuda_status kd_cu_graph_op(int device, kd_cuda_op *o); /* graphs.cu */

#endif
