/* ops_shape.cu - CUDA kernels of the shape, factory and small backward ops whose CPU kernels
 * hand their prepared launch to the device hook (src/cpu/device_op.h):
 *   KD_CUDA_OP_TRI            tril/triu (shape_copy.c): after the copy, zero the masked part
 *   KD_CUDA_OP_ARANGE         arange/linspace (factory.c): element i from its index, the CPU's formulas
 *   KD_CUDA_OP_ONE_HOT        oneHot (index_mask.c): out[j] = (v[j / nc] == j % nc)
 *   KD_CUDA_OP_MASKED         maskedSelect(+Backward) (index_mask.c): positions from a cumsum of the mask
 *   KD_CUDA_OP_ACT_BACKWARD   gelu/silu/mish/elu backward (unary_backward.c)
 *   KD_CUDA_OP_PROD_BACKWARD  prodBackward's last pass (reduce.c)
 * cat and flip need no kernel here: they are copies (kd_cpu_copy_into -> the CUDA copy_).
 * One thread per element, grid-stride, 64-bit index math (simple first; these ops are not hot).
 * UNVERIFIED: written and compiled without a GPU; test/cuda_parity.test.js checks them on one. */
#include <type_traits>

#include "ops_math.cuh"
#include "ops_shape.cuh"

template <typename T>
struct kd_cu_is_float {
  static constexpr bool value = std::is_same<T, float>::value || std::is_same<T, double>::value ||
                                std::is_same<T, __half>::value || std::is_same<T, __nv_bfloat16>::value;
};

/* Unsigned storage of an element size (bits moved, no conversion). */
#define KD_CU_BY_SIZE(es, F, ...)                                                            \
  switch (es) {                                                                              \
    case 1: return F<uint8_t>(__VA_ARGS__);                                                  \
    case 2: return F<uint16_t>(__VA_ARGS__);                                                 \
    case 4: return F<uint32_t>(__VA_ARGS__);                                                 \
    case 8: return F<unsigned long long>(__VA_ARGS__);                                       \
    default: return kd_cu_error(KD_CUDA_ERR_NOT_SUPPORTED, "element size %d", (int)(es));    \
  }

/* ---- tril / triu: the iteration is dst's dims uncoalesced, dim 0 = columns, dim 1 = rows ---- */
template <typename U>
__global__ void kd_cu_tri_kernel(const kd_cu_it8 it, int64_t k, bool lower) {
  const int64_t cols = it.shape[0], rows = it.shape[1];
  KD_CU_FOR(i, it.numel) {
    const int64_t j = i % cols, r = (i / cols) % rows;
    if (lower ? j > r + k : j < r + k) {
      int64_t off[8];
      kd_cu_iter_offsets<int64_t, 8>(it, i, off);
      *(U *)(it.data[0] + off[0]) = (U)0;
    }
  }
}
template <typename U>
static kd_cuda_status kd_cu_tri_t(int device, const kd_cu_it8 &it, int64_t k, bool lower) {
  KD_LAUNCH(kd_cu_grid(device, it.numel), KD_CU_THREADS, 0, kd_cu_stream(device), kd_cu_tri_kernel<U>)(it, k, lower);
  KD_CU_CHECK_LAUNCH("the tril/triu kernel");
  return KD_CUDA_OK;
}
static kd_cuda_status kd_cu_tri(int device, kd_cuda_op *o) {
  kd_cu_it8 it;
  KD_CU_TRY(kd_cu_op_iter(o, &it));
  if (it.ndim < 2 || it.scalar_mask) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "tril/triu: bad iteration");
  if (it.numel == 0) return KD_CUDA_OK;
  KD_CU_BY_SIZE(kd_cu_dtype_size(o->dtype), kd_cu_tri_t, device, it, o->i[0], o->i[1] != 0)
}

/* ---- arange (code 0) / linspace (code 1), as factory.c's loops ---- */
struct kd_cu_range_p {
  int lin;
  double fstart, fstep, fend;
  int64_t istart, istep, steps, half;
};
template <typename T>
__global__ void kd_cu_range_kernel(char *out, int64_t stride, int64_t n, const kd_cu_range_p p) {
  KD_CU_FOR(i, n) {
    T *y = (T *)(out + i * stride);
    if (!p.lin) {
      if constexpr (kd_cu_is_float<T>::value) *y = kd_cu_to<T>::from(p.fstart + p.fstep * (double)i);
      else *y = kd_cu_to<T>::from((int64_t)((uint64_t)p.istart + (uint64_t)p.istep * (uint64_t)i));
    } else if constexpr (std::is_same<T, double>::value) {
      *y = i < p.half ? p.fstart + p.fstep * (double)i : p.fend - p.fstep * (double)(p.steps - 1 - i);
    } else if constexpr (kd_cu_is_float<T>::value) { /* float arithmetic, as the CPU's float kernel */
      const float fs = (float)p.fstart, fe = (float)p.fend, st = (float)p.fstep;
      *y = kd_cu_to<T>::from(i < p.half ? fs + st * (float)i : fe - st * (float)(p.steps - 1 - i));
    } else { /* integers and bool: start/end in the dtype, step in double */
      *y = kd_cu_to<T>::from(i < p.half ? (double)p.istart + p.fstep * (double)i
                                        : p.fend - p.fstep * (double)(p.steps - 1 - i));
    }
  }
}
static kd_cuda_status kd_cu_range(int device, kd_cuda_op *o) {
  kd_cu_it8 it;
  KD_CU_TRY(kd_cu_op_iter(o, &it));
  if (it.ndim > 1 || it.scalar_mask) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "arange: bad iteration");
  if (it.numel == 0) return KD_CUDA_OK;
  kd_cu_range_p p;
  p.lin = o->code == 1;
  p.fstart = o->d[0]; p.fstep = o->d[1]; p.fend = o->d[2];
  p.istart = o->i[0]; p.istep = o->i[1]; p.steps = o->i[2]; p.half = o->i[3];
  const int64_t stride = it.ndim ? it.strides[0][0] : 0;
  const unsigned grid = kd_cu_grid(device, it.numel);
  cudaStream_t s = kd_cu_stream(device);
  switch (o->dtype) {
#define KD_CU_RANGE_CASE(DT, T)                                                               \
  case DT: KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_cu_range_kernel<T>)(it.data[0], stride, it.numel, p); break;
    KD_CU_FOR_EACH_DTYPE(KD_CU_RANGE_CASE)
#undef KD_CU_RANGE_CASE
    default: return kd_cu_not_supported("arange/linspace", o->dtype);
  }
  KD_CU_CHECK_LAUNCH("the arange/linspace kernel");
  return KD_CUDA_OK;
}

/* ---- oneHot: a fresh contiguous int64 [n, nc] output ---- */
__global__ void kd_cu_one_hot_kernel(int64_t *out, const int64_t *v, int64_t n, int64_t nc) {
  KD_CU_FOR(j, n) out[j] = v[j / nc] == j % nc ? 1 : 0;
}
static kd_cuda_status kd_cu_one_hot(int device, kd_cuda_op *o) {
  kd_cu_it8 it;
  KD_CU_TRY(kd_cu_op_iter(o, &it));
  const int64_t nc = o->i[0];
  if (it.ndim > 1 || nc < 0 || (it.ndim == 1 && it.strides[0][0] != 8))
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "oneHot: bad arguments");
  if (it.numel == 0 || nc == 0) return KD_CUDA_OK;
  KD_LAUNCH(kd_cu_grid(device, it.numel), KD_CU_THREADS, 0, kd_cu_stream(device), kd_cu_one_hot_kernel)(
      (int64_t *)it.data[0], kd_cu_addr<const int64_t>(o->i[1]), it.numel, nc);
  KD_CU_CHECK_LAUNCH("the oneHot kernel");
  return KD_CUDA_OK;
}

/* ---- maskedSelect (code 0): ops [pos, mask, self], out[pos - 1] = self where mask;
 * maskedSelectBackward (code 1): ops [out, mask, pos], out = mask ? g[pos - 1] : 0.
 * pos is the inclusive cumsum of the mask in row-major order (computed by the host through
 * cumsum), so the iteration's own order does not matter. ---- */
template <typename U>
__global__ void kd_cu_masked_kernel(const kd_cu_it8 it, U *flat, bool backward) {
  KD_CU_FOR(i, it.numel) {
    int64_t off[8];
    kd_cu_iter_offsets<int64_t, 8>(it, i, off);
    const bool m = *(const uint8_t *)(it.data[1] + off[1]) != 0;
    if (!backward) {
      if (m) flat[*(const int64_t *)(it.data[0] + off[0]) - 1] = *(const U *)(it.data[2] + off[2]);
    } else {
      *(U *)(it.data[0] + off[0]) = m ? flat[*(const int64_t *)(it.data[2] + off[2]) - 1] : (U)0;
    }
  }
}
template <typename U>
static kd_cuda_status kd_cu_masked_t(int device, const kd_cu_it8 &it, int64_t flat, bool backward) {
  KD_LAUNCH(kd_cu_grid(device, it.numel), KD_CU_THREADS, 0, kd_cu_stream(device), kd_cu_masked_kernel<U>)(
      it, kd_cu_addr<U>(flat), backward);
  KD_CU_CHECK_LAUNCH("the maskedSelect kernel");
  return KD_CUDA_OK;
}
static kd_cuda_status kd_cu_masked(int device, kd_cuda_op *o) {
  kd_cu_it8 it;
  KD_CU_TRY(kd_cu_op_iter(o, &it));
  if (o->nops != 3 || it.scalar_mask) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "maskedSelect: bad operands");
  if (it.numel == 0) return KD_CUDA_OK;
  KD_CU_BY_SIZE(o->i[1], kd_cu_masked_t, device, it, o->i[0], o->code == 1)
}

/* ---- activation backward: ops [out, grad, x] of one float dtype, unary_backward.c's formulas.
 * i[0]: 0 gelu, 1 gelu tanh, 2 silu, 3 mish, 4 elu (x the input), 5 elu (x the result);
 * d[0..2]: elu's negcoef (alpha * scale), poscoef (scale), negiptcoef (inputScale). ---- */
template <typename CT>
__device__ __forceinline__ CT kd_cu_actbw(int v, CT a, CT b, CT ng, CT ps, CT ni) {
  switch (v) {
    case 0: return a * ((CT)0.5 * ((CT)1 + kd_cm_erf(b * (CT)0.70710678118654752)) +
                        b * kd_cm_exp((CT)-0.5 * b * b) * (CT)0.39894228040143268);
    case 1: {
      const CT kb = (CT)0.7978845608028654, kk = (CT)0.044715;
      const CT th = kd_cm_tanh(kb * (b + kk * b * b * b));
      return a * ((CT)0.5 * ((CT)1 + th) + (CT)0.5 * b * ((CT)1 - th * th) * kb * ((CT)1 + (CT)3 * kk * b * b));
    }
    case 2: return a / ((CT)1 + kd_cm_exp(-b)) * ((CT)1 + b * ((CT)1 - (CT)1 / ((CT)1 + kd_cm_exp(-b))));
    case 3: {
      const CT tsp = kd_cm_tanh(kd_cm_log1p(kd_cm_exp(b)));
      return a * (tsp + b / ((CT)1 + kd_cm_exp(-b)) * ((CT)1 - tsp * tsp));
    }
    case 4: return b <= (CT)0 ? a * ni * ng * kd_cm_exp(b * ni) : a * ps;
    default: return b <= (CT)0 ? a * ni * (b + ng) : a * ps;
  }
}
template <typename T>
__global__ void kd_cu_actbw_kernel(const kd_cu_it8 it, int v, double ng, double ps, double ni) {
  typedef typename kd_cu_ct<T>::type CT;
  KD_CU_FOR(i, it.numel) {
    int64_t off[8];
    kd_cu_iter_offsets<int64_t, 8>(it, i, off);
    const CT a = kd_cu_ld(kd_cu_op_get<T>(it, 1, off[1])), b = kd_cu_ld(kd_cu_op_get<T>(it, 2, off[2]));
    *(T *)(it.data[0] + off[0]) = kd_cu_st<T>(kd_cu_actbw<CT>(v, a, b, (CT)ng, (CT)ps, (CT)ni));
  }
}

/* ---- prodBackward: ops [out T, grad f64, nonzero product f64, zero count f64, self T] ---- */
template <typename T>
__global__ void kd_cu_prodb_kernel(const kd_cu_it8 it) {
  KD_CU_FOR(i, it.numel) {
    int64_t off[8];
    kd_cu_iter_offsets<int64_t, 8>(it, i, off);
    const double g = *(const double *)(it.data[1] + off[1]), p = *(const double *)(it.data[2] + off[2]);
    const double z = *(const double *)(it.data[3] + off[3]);
    const double x = (double)kd_cu_ld(*(const T *)(it.data[4] + off[4]));
    const double v = z == 0 ? g * p / x : (z == 1 && x == 0) ? g * p : 0.0;
    *(T *)(it.data[0] + off[0]) = kd_cu_st<T>((typename kd_cu_ct<T>::type)v);
  }
}

/* The float-dtype launches of ACT_BACKWARD and PROD_BACKWARD. */
template <typename T>
static kd_cuda_status kd_cu_float_pass(int device, const kd_cuda_op *o, const kd_cu_it8 &it) {
  const unsigned grid = kd_cu_grid(device, it.numel);
  cudaStream_t s = kd_cu_stream(device);
  if (o->kind == KD_CUDA_OP_ACT_BACKWARD)
    KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_cu_actbw_kernel<T>)(it, (int)o->i[0], o->d[0], o->d[1], o->d[2]);
  else
    KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_cu_prodb_kernel<T>)(it);
  KD_CU_CHECK_LAUNCH(o->kind == KD_CUDA_OP_ACT_BACKWARD ? "the activation backward kernel" : "the prodBackward kernel");
  return KD_CUDA_OK;
}
static kd_cuda_status kd_cu_float_op(int device, kd_cuda_op *o) {
  kd_cu_it8 it;
  KD_CU_TRY(kd_cu_op_iter(o, &it));
  if (o->nops != (o->kind == KD_CUDA_OP_ACT_BACKWARD ? 3 : 5) || (o->kind == KD_CUDA_OP_PROD_BACKWARD && it.scalar_mask))
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "op kind %d: bad operands", (int)o->kind);
  if (it.numel == 0) return KD_CUDA_OK;
  switch (o->dtype) {
    case KD_DTYPE_F32: return kd_cu_float_pass<float>(device, o, it);
    case KD_DTYPE_F64: return kd_cu_float_pass<double>(device, o, it);
    case KD_DTYPE_F16: return kd_cu_float_pass<__half>(device, o, it);
    case KD_DTYPE_BF16: return kd_cu_float_pass<__nv_bfloat16>(device, o, it);
    default: return kd_cu_not_supported(o->kind == KD_CUDA_OP_ACT_BACKWARD ? "activation backward" : "prodBackward", o->dtype);
  }
}

kd_cuda_status kd_cu_shape_op(int device, kd_cuda_op *o) {
  switch (o->kind) {
    case KD_CUDA_OP_TRI: return kd_cu_tri(device, o);
    case KD_CUDA_OP_ARANGE: return kd_cu_range(device, o);
    case KD_CUDA_OP_ONE_HOT: return kd_cu_one_hot(device, o);
    case KD_CUDA_OP_MASKED: return kd_cu_masked(device, o);
    case KD_CUDA_OP_ACT_BACKWARD:
    case KD_CUDA_OP_PROD_BACKWARD: return kd_cu_float_op(device, o);
    default: return kd_cu_error(KD_CUDA_ERR_NOT_SUPPORTED, "op: unknown kind %d", (int)o->kind);
  }
}
