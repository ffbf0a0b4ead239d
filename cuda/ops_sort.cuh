/* ops_sort.cuh - the launchers of the kinds 40..63 of kd_cuda_op (sort, unique, median in
 * ops_sort.cu; convolution in ops_conv.cu; pooling in ops_pool.cu), called by ops_op.cu's
 * kd_cu_op. */
#ifndef KD_CUDA_OPS_SORT_CUH
#define KD_CUDA_OPS_SORT_CUH

#include "iter.cuh"
#include "scratch.cuh"

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

/* `return FN<T>(device, o)` for o->dtype's element type (bool as uint8), in a launcher. */
#define KD_CU_SORT_DISPATCH(FN, what)                                                       \
  switch (o->dtype) {                                                                       \
    case KD_DTYPE_F32: return FN<float>(device, o);                                         \
    case KD_DTYPE_F64: return FN<double>(device, o);                                        \
    case KD_DTYPE_F16: return FN<__half>(device, o);                                        \
    case KD_DTYPE_BF16: return FN<__nv_bfloat16>(device, o);                                \
    case KD_DTYPE_I8: return FN<int8_t>(device, o);                                         \
    case KD_DTYPE_U8:                                                                       \
    case KD_DTYPE_BOOL: return FN<uint8_t>(device, o);                                      \
    case KD_DTYPE_I16: return FN<int16_t>(device, o);                                       \
    case KD_DTYPE_I32: return FN<int32_t>(device, o);                                       \
    case KD_DTYPE_I64: return FN<int64_t>(device, o);                                       \
    default: return kd_cu_not_supported(what, o->dtype);                                    \
  }

kd_cuda_status kd_cu_sort(int device, kd_cuda_op *o);   /* KD_CUDA_OP_SORT */
kd_cuda_status kd_cu_unique(int device, kd_cuda_op *o); /* KD_CUDA_OP_UNIQUE */
kd_cuda_status kd_cu_median(int device, kd_cuda_op *o); /* KD_CUDA_OP_MEDIAN */
kd_cuda_status kd_cu_conv(int device, kd_cuda_op *o);   /* KD_CUDA_OP_CONV (ops_conv.cu) */
kd_cuda_status kd_cu_pool(int device, kd_cuda_op *o);   /* KD_CUDA_OP_POOL (ops_pool.cu) */
kd_cuda_status kd_cu_scan_op(int device, kd_cuda_op *o); /* kind 45: cummax/cummin/cumprodBackward (ops_scan.cu) */
kd_cuda_status kd_cu_search_op(int device, kd_cuda_op *o); /* kinds 30..33: searching and counting (ops_search.cu) */

#endif
