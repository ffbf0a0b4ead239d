/* device_op.h - the device hook of the non-pointwise CPU kernels (indexing, optimizers): as
 * kd_cpu_device_ew for pointwise passes (Note [Device kernels through the CPU kernels] in
 * ops/ew_codes.h), a kernel that has done its checks and built its iteration hands it, with the
 * family's parameters, to kd_cpu_device_op when the tensors live on a device. The CUDA bridge
 * sets the hook when libkindling_cuda.so loads and maps a kd_dev_op onto the library's
 * kd_cuda_op (same kinds and parameter meanings, see cuda/kd_cuda_api.h). */
#ifndef KD_CPU_DEVICE_OP_H
#define KD_CPU_DEVICE_OP_H

#include "cpu/cpu_loops.h"

/* Kinds (values of kd_cuda_op_kind). */
enum { KD_DEV_OP_IX_CHECK = 1, KD_DEV_OP_IX_GATHER, KD_DEV_OP_IX_SCATTER, KD_DEV_OP_OPTIM };
/* Kinds 40..63: sort/unique/median, convolution, pooling (pointer operands, no iteration: see
 * cpu/device_op_ptrs.h; codes KD_DEV_POOL_* / KD_DEV_CONV_* as the ABI's). */
enum { KD_DEV_OP_SORT = 40, KD_DEV_OP_UNIQUE = 41, KD_DEV_OP_MEDIAN = 42, KD_DEV_OP_CONV = 43, KD_DEV_OP_POOL = 44,
       KD_DEV_OP_SCAN = 45 /* cummax/cummin/cumprodBackward (src/cpu/scan.c) */ };
/* Kinds 30..34: searching and counting (pointer operands as 40..63; cuda/ops_search.cu):
 * searchsorted/bucketize (src/cpu/search.c), histc/bincount (histogram.c), uniqueConsecutive
 * (unique_consecutive.c), kthvalue/mode (select.c). */
enum { KD_DEV_OP_SEARCH = 30, KD_DEV_OP_HIST = 31, KD_DEV_OP_UNIQUE_CONSECUTIVE = 32, KD_DEV_OP_SELECT = 33 };
/* gradient scaling (src/cpu/amp.c): code KD_AMP_UNSCALE over one gradient's iteration, or
 * KD_AMP_UPDATE_SCALE with no iteration; device addresses in i[] (see KD_CUDA_OP_AMP). */
enum { KD_DEV_OP_AMP = 46 };
/* trilIndices/triuIndices (src/cpu/tri_indices.c, cuda/ops_shape_construct.cu): see KD_CUDA_OP_TRI_INDICES. */
enum { KD_DEV_OP_TRI_INDICES = 37 };
/* the fused LSTM/GRU steps and their gradients (src/cpu/rnn_cell.c, cuda/ops_rnn.cu): pointer
 * operands as the kinds 40..63; see KD_CUDA_OP_RNN_CELL. */
enum { KD_DEV_OP_RNN_CELL = 52 };
/* gridSample and its gradients (src/cpu/grid_sample.c, cuda/ops_grid_sample.cu): pointer operands
 * as the kinds 40..63; see KD_CUDA_OP_GRID_SAMPLE. */
enum { KD_DEV_OP_GRID_SAMPLE = 53 };
/* the int8 dynamic quantized linear layer (src/cpu/qlinear.c, cuda/ops_qlinear.cu): pointer
 * operands as the kinds 40..63; see KD_CUDA_OP_QLINEAR. */
enum { KD_DEV_OP_QLINEAR = 54 };
/* the fused scaled dot-product attention and its gradients (src/cpu/attention.c,
 * cuda/ops_attention.cu; Note [Fused attention]); see KD_CUDA_OP_ATTENTION. */
enum { KD_DEV_OP_ATTENTION = 55 };
/* kd.linalg's factorizations (src/cpu/linalg_lapack.c; KD_CUDA_OP_LINALG_* in cuda/kd_cuda_api.h):
 * pointer operands as the kinds 40..63. */
enum { KD_DEV_OP_LINALG_LU = 47, KD_DEV_OP_LINALG_CHOLESKY = 48, KD_DEV_OP_LINALG_QR = 49, KD_DEV_OP_LINALG_SVD = 50,
       KD_DEV_OP_LINALG_EIGH = 51 };
enum {
  KD_DEV_POOL_MAX = 0, KD_DEV_POOL_MAX_BACKWARD, KD_DEV_POOL_AVG, KD_DEV_POOL_AVG_BACKWARD,
  KD_DEV_POOL_ADAPTIVE_AVG, KD_DEV_POOL_ADAPTIVE_AVG_BACKWARD,
};
enum { KD_DEV_CONV_FORWARD = 0, KD_DEV_CONV_BACKWARD_INPUT, KD_DEV_CONV_BACKWARD_WEIGHT };

/* Shape, factory, padding, loss and activation-backward kinds (cuda/ops_shape.cu, ops_pad.cu,
 * ops_loss.cu; parameters documented with KD_CUDA_OP_* in cuda/kd_cuda_api.h). Device addresses
 * beyond the iteration's operands travel in i[] as integers. */
enum {
  KD_DEV_OP_TRI = 16, KD_DEV_OP_ARANGE = 17, KD_DEV_OP_ONE_HOT = 18, KD_DEV_OP_MASKED = 19,
  KD_DEV_OP_ACT_BACKWARD = 20, KD_DEV_OP_PROD_BACKWARD = 21, KD_DEV_OP_PAD = 22, KD_DEV_OP_INTERP = 23,
  KD_DEV_OP_LOSS = 24, KD_DEV_OP_NLL_CHECK = 25, KD_DEV_OP_NLL = 26,
};

/* random distributions (src/cpu/random_dist.c, multinomial.c; parameters with KD_CUDA_OP_RANDOM_DIST
 * and KD_CUDA_OP_MULTINOMIAL in cuda/kd_cuda_api.h) */
enum { KD_DEV_OP_RANDOM_DIST = 27, KD_DEV_OP_MULTINOMIAL = 28 };
/* the CTC loss's recursions (src/cpu/ctc.c, cuda/ops_ctc.cu): see KD_CUDA_OP_CTC. */
enum { KD_DEV_OP_CTC = 29 };

typedef struct kd_dev_op {
  int32_t kind, code;
  kd_dtype dtype;
  const kd_iter *it;            /* the built iteration (NULL for IX_CHECK) */
  const kd_iter_operand *ops;   /* its operands; sizes == NULL && ndim == 0: a one-element operand */
  void *data;                   /* IX_CHECK: the contiguous int64 list */
  int64_t numel;                /* IX_CHECK: its length */
  int64_t i[8];
  double d[12];
  int64_t result[2];            /* out */
  /* IX_CHECK / NLL_CHECK / LOSS (its input-range check): the error for a bad value v, fail(v, fail_args). A device that checks
   * without waiting keeps it and raises it at the next sync point (Note [Deferred index errors]
   * in cuda/deferred_check.cuh); otherwise it sets result[] and the caller raises at once. */
  kd_status (*fail)(int64_t bad, const int64_t args[3]);
  int64_t fail_args[3];
} kd_dev_op;

typedef kd_status (*kd_cpu_device_op_fn)(kd_device dev, kd_dev_op *op);
extern kd_cpu_device_op_fn kd_cpu_device_op;

/* Runs op on dev through the hook (KD_ERR_NOT_SUPPORTED when the device has none). */
kd_status kd_cpu_device_run(kd_device dev, kd_dev_op *op);

#endif
