/* ops_op.cu - the entry of every non-pointwise launch (kd_cu_op, ABI version 4): validates the
 * kd_cuda_op, resolves its scalar operands (a host scalar is read here and passed by value; a
 * one-element device operand keeps its pointer) and picks the family's launcher
 * (ops_index.cu, ops_optim.cu). */
#include "ops_op.cuh"
#include "ops_sort.cuh"

#include "ops_shape.cuh"

kd_cuda_status kd_cu_linalg(int device, kd_cuda_op *o); /* ops_linalg.cu */
kd_cuda_status kd_cu_rnn_cell(int device, kd_cuda_op *o); /* ops_rnn.cu */
kd_cuda_status kd_cu_qlinear(int device, kd_cuda_op *o); /* ops_qlinear.cu */
kd_cuda_status kd_cu_attention(int device, kd_cuda_op *o); /* ops_attention.cu */

kd_cuda_status kd_cu_op_iter(const kd_cuda_op *o, kd_cu_iter<KD_CUDA_OP_MAX_OPS> *it) {
  if (o->nops < 1 || o->nops > KD_CUDA_OP_MAX_OPS || o->ndim < 0 || o->ndim > KD_CUDA_MAX_DIMS)
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "op: %d operands, %d dims", (int)o->nops, (int)o->ndim);
  memset(it, 0, sizeof *it);
  it->ndim = o->ndim;
  it->numel = o->numel;
  for (int d = 0; d < o->ndim; d++) it->shape[d] = o->shape[d];
  for (int k = 0; k < o->nops; k++) {
    it->data[k] = (char *)o->data[k];
    if (o->scalar_mask & (1u << k)) {
      cudaPointerAttributes a;
      memset(&a, 0, sizeof a);
      if (cudaPointerGetAttributes(&a, o->data[k]) != cudaSuccess) (void)cudaGetLastError();
      if (a.type != cudaMemoryTypeDevice && a.type != cudaMemoryTypeManaged) { /* a host scalar: by value */
        const size_t es = kd_cu_dtype_size(o->dtypes[k]);
        if (es == 0 || es > 8) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "op: bad scalar dtype %d", (int)o->dtypes[k]);
        memcpy(&it->scalar[k], o->data[k], es);
        it->scalar_mask |= 1u << k;
        it->data[k] = NULL;
      }
      continue; /* strides stay 0 */
    }
    for (int d = 0; d < o->ndim; d++) it->strides[k][d] = o->strides[k][d];
  }
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_op(int device, kd_cuda_op *o) {
  if (!o) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "op: null argument");
  o->result[0] = o->result[1] = 0;
  kd_cu_device_guard g;
  KD_CU_TRY(g.enter(device));
  switch (o->kind) {
    case KD_CUDA_OP_IX_CHECK: return kd_cu_ix_check(device, o);
    case KD_CUDA_OP_IX_GATHER: return kd_cu_ix_gather(device, o);
    case KD_CUDA_OP_IX_SCATTER: return kd_cu_ix_scatter(device, o);
    case KD_CUDA_OP_OPTIM: return kd_cu_optim(device, o);
    /* kinds 40..63: sorting, convolution, pooling (ops_sort.cuh) */
    case KD_CUDA_OP_SORT: return kd_cu_sort(device, o);
    case KD_CUDA_OP_UNIQUE: return kd_cu_unique(device, o);
    case KD_CUDA_OP_MEDIAN: return kd_cu_median(device, o);
    case KD_CUDA_OP_CONV: return kd_cu_conv(device, o);
    case KD_CUDA_OP_POOL: return kd_cu_pool(device, o);
    case KD_CUDA_OP_SCAN: return kd_cu_scan_op(device, o);
    case KD_CUDA_OP_AMP: return kd_cu_amp(device, o);
    /* kinds 30..33: searching and counting (ops_search.cu) */
    case KD_CUDA_OP_SEARCH: case KD_CUDA_OP_HIST: case KD_CUDA_OP_UNIQUE_CONSECUTIVE: case KD_CUDA_OP_SELECT:
      return kd_cu_search_op(device, o);
    case KD_CUDA_OP_TRI_INDICES: return kd_cu_tri_indices(device, o);
    case KD_CUDA_OP_RNN_CELL: return kd_cu_rnn_cell(device, o);
    case KD_CUDA_OP_QLINEAR: return kd_cu_qlinear(device, o);
    case KD_CUDA_OP_ATTENTION: return kd_cu_attention(device, o);
    case KD_CUDA_OP_LINALG_LU: case KD_CUDA_OP_LINALG_CHOLESKY: case KD_CUDA_OP_LINALG_QR: case KD_CUDA_OP_LINALG_SVD:
    case KD_CUDA_OP_LINALG_EIGH: return kd_cu_linalg(device, o);

    /* shape, factory, padding, loss and activation-backward kinds (ops_shape.cuh) */
    case KD_CUDA_OP_TRI: case KD_CUDA_OP_ARANGE: case KD_CUDA_OP_ONE_HOT: case KD_CUDA_OP_MASKED:
    case KD_CUDA_OP_ACT_BACKWARD: case KD_CUDA_OP_PROD_BACKWARD: return kd_cu_shape_op(device, o);
    case KD_CUDA_OP_PAD: case KD_CUDA_OP_INTERP: return kd_cu_pad_op(device, o);
    case KD_CUDA_OP_LOSS: case KD_CUDA_OP_NLL_CHECK: case KD_CUDA_OP_NLL: return kd_cu_loss_op(device, o);
    case KD_CUDA_OP_RANDOM_DIST: case KD_CUDA_OP_MULTINOMIAL: return kd_cu_random_op(device, o);
    case KD_CUDA_OP_CTC: return kd_cu_ctc_op(device, o);
    case KD_CUDA_OP_GRID_SAMPLE: return kd_cu_grid_sample_op(device, o);
    case KD_CUDA_OP_GRAPH: return kd_cu_graph_op(device, o);
    default: return kd_cu_error(KD_CUDA_ERR_NOT_SUPPORTED, "op: unknown kind %d", (int)o->kind);
  }
}
