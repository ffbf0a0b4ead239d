/* ops_shape.cuh - what the shape/factory (ops_shape.cu), padding/interpolation (ops_pad.cu) and
 * loss (ops_loss.cu) launchers share: their entries from ops_op.cu's kd_cu_op switch (kinds
 * KD_CUDA_OP_TRI .. KD_CUDA_OP_NLL) and small helpers. */
#ifndef KD_CUDA_OPS_SHAPE_CUH
#define KD_CUDA_OPS_SHAPE_CUH

#include "ops_op.cuh"

typedef kd_cu_iter<KD_CUDA_OP_MAX_OPS> kd_cu_it8;

/* A device address carried in an int64 parameter slot (i[]). */
template <typename T>
static inline T *kd_cu_addr(int64_t v) { return (T *)(uintptr_t)v; }

/* Grid-stride loop over [0, n). */
#define KD_CU_FOR(i, n)                                                                      \
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x, kd_cu_step_ = (int64_t)gridDim.x * blockDim.x; \
       i < (n); i += kd_cu_step_)

/* Entries (kd_cu_op dispatches on o->kind). */
kd_cuda_status kd_cu_shape_op(int device, kd_cuda_op *o); /* TRI, ARANGE, ONE_HOT, MASKED, ACT_BACKWARD, PROD_BACKWARD */
kd_cuda_status kd_cu_pad_op(int device, kd_cuda_op *o);   /* PAD, INTERP */
kd_cuda_status kd_cu_loss_op(int device, kd_cuda_op *o);  /* LOSS, NLL_CHECK, NLL */
kd_cuda_status kd_cu_ctc_op(int device, kd_cuda_op *o);   /* CTC (ops_ctc.cu) */
kd_cuda_status kd_cu_grid_sample_op(int device, kd_cuda_op *o); /* GRID_SAMPLE (ops_grid_sample.cu) */
kd_cuda_status kd_cu_random_op(int device, kd_cuda_op *o); /* RANDOM_DIST, MULTINOMIAL (ops_random_dist.cu) */
kd_cuda_status kd_cu_tri_indices(int device, kd_cuda_op *o); /* TRI_INDICES (ops_shape_construct.cu) */

#endif
