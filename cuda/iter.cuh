/* iter.cuh - THE CUDA iterator: the device half of core/iter.h's strided iterator.
 *
 * Note [CUDA iteration]
 * The host builds the iteration with kd_iter_build (broadcasting, dim ordering, coalescing;
 * see Note [Strided iteration]) and passes it here as kd_cuda_ew (kd_cuda_api.h). A launch
 * copies it into kd_cu_iter<N>, a small struct passed to the kernel BY VALUE (kernel
 * parameter space, no device allocation): up to 4 operands (operand 0 the output), up to 16
 * dims with dim 0 innermost, byte strides (0 = broadcast). An operand may be a host scalar
 * (a JS number): its bits travel in `scalar[k]` and the kernel reads them from parameter space.
 *
 * Index math: element i of the iteration has, for every operand k,
 *   offset_k(i) = sum_d ((i / prod_{e<d} shape[e]) % shape[d]) * strides[k][d]   (bytes)
 * computed with 32-bit integers when the element count and every operand's byte extent fit in
 * int32 (kd_cu_iter_fits_32), else 64-bit. Fast path: when every tensor operand is
 * contiguous (one dim, stride == element size) the kernel runs a flat loop, VEC elements per
 * thread step with 16-byte (or narrower) vector loads and stores when every pointer is
 * aligned (kd_cu_iter::aligned), element by element at the tail. Grid-stride loops. */
#ifndef KD_CUDA_ITER_CUH
#define KD_CUDA_ITER_CUH

#include <stdint.h>
#include <string.h>

#include <type_traits>

#include "convert.cuh"
#include "kd_cuda_api.h"
#include "kd_cuda_internal.h"

#define KD_CU_ITER_MAX_OPS 4

template <int N>
struct kd_cu_iter {
  int32_t ndim;            /* 0: a single element */
  uint32_t scalar_mask;    /* bit k: operand k is a host scalar (value in scalar[k]) */
  int64_t numel;
  int64_t shape[KD_CUDA_MAX_DIMS];
  int64_t strides[N][KD_CUDA_MAX_DIMS]; /* bytes */
  char *data[N];
  uint64_t scalar[N];
};

/* Fills an iterator from the ABI struct; false if it has more than N operands. */
template <int N>
static inline bool kd_cu_iter_from(const kd_cuda_ew *e, kd_cu_iter<N> *it) {
  if (e->nops > N || e->nops < 1 || e->ndim < 0 || e->ndim > KD_CUDA_MAX_DIMS) return false;
  memset(it, 0, sizeof *it);
  it->ndim = e->ndim;
  it->numel = e->numel;
  for (int d = 0; d < e->ndim; d++) it->shape[d] = e->shape[d];
  for (int k = 0; k < e->nops; k++) {
    it->data[k] = (char *)e->data[k];
    it->scalar[k] = e->scalar[k];
    if (!e->data[k]) it->scalar_mask |= 1u << k;
    for (int d = 0; d < e->ndim; d++) it->strides[k][d] = it->data[k] ? e->strides[k][d] : 0;
  }
  return true;
}

/* Whether 32-bit index math is exact: numel and each operand's byte span fit in int32. */
template <int N>
static inline bool kd_cu_iter_fits_32(const kd_cu_iter<N> &it) {
  if (it.numel > INT32_MAX) return false;
  for (int k = 0; k < N; k++) {
    int64_t span = 0;
    for (int d = 0; d < it.ndim; d++) {
      int64_t s = it.strides[k][d] < 0 ? -it.strides[k][d] : it.strides[k][d];
      span += s * (it.shape[d] - 1);
    }
    if (span > INT32_MAX / 2) return false;
  }
  return true;
}

/* Every tensor operand contiguous (element sizes es[k]): the flat fast path applies. */
template <int N>
static inline bool kd_cu_iter_contiguous(const kd_cu_iter<N> &it, const int *es, int nops) {
  if (it.ndim > 1) return false;
  for (int k = 0; k < nops; k++)
    if (!(it.scalar_mask & (1u << k)) && it.ndim == 1 && it.strides[k][0] != es[k]) return false;
  return true;
}

/* Every tensor operand's first element aligned to VEC elements of its size (for vector I/O). */
template <int N>
static inline bool kd_cu_iter_aligned(const kd_cu_iter<N> &it, const int *es, int nops, int vec) {
  for (int k = 0; k < nops; k++)
    if (!(it.scalar_mask & (1u << k)) && ((uintptr_t)it.data[k] % (uintptr_t)(es[k] * vec)) != 0) return false;
  return true;
}

/* Byte offsets of element i for every operand (see Note [CUDA iteration]). */
template <typename I, int N>
__device__ __forceinline__ void kd_cu_iter_offsets(const kd_cu_iter<N> &it, I i, I (&off)[N]) {
#pragma unroll
  for (int k = 0; k < N; k++) off[k] = 0;
  for (int d = 0; d < it.ndim; d++) {
    const I s = (I)it.shape[d];
    const I c = i % s;
    i /= s;
#pragma unroll
    for (int k = 0; k < N; k++) off[k] += c * (I)it.strides[k][d];
  }
}

/* ---- typed loads and stores: storage type <-> compute type ----
 * compute types: float (float32/float16/bfloat16), double, int64 (integers and bool: 0/1). */
template <typename T> struct kd_cu_ct { typedef int64_t type; };
template <> struct kd_cu_ct<float> { typedef float type; };
template <> struct kd_cu_ct<double> { typedef double type; };
template <> struct kd_cu_ct<__half> { typedef float type; };
template <> struct kd_cu_ct<__nv_bfloat16> { typedef float type; };

template <typename T>
__device__ __forceinline__ typename kd_cu_ct<T>::type kd_cu_ld(T x) {
  return (typename kd_cu_ct<T>::type)kd_cu_canon(x);
}
template <typename T, typename V>
__device__ __forceinline__ T kd_cu_st(V v) {
  return kd_cu_to<T>::from(v);
}
/* Rounds a compute value to the storage type and back (float16/bfloat16 intermediates). */
template <typename T, typename V>
__device__ __forceinline__ V kd_cu_rnd(V v) {
  return (V)kd_cu_ld<T>(kd_cu_st<T>(v));
}

/* A placeholder storage type for absent inputs (operands past nops: data[k] is NULL and their
 * scalar_mask bit is clear). Nothing is ever read for them. */
struct kd_cu_none {
  uint8_t v;
};
__device__ __forceinline__ int64_t kd_cu_canon(kd_cu_none) { return 0; }
template <typename T> constexpr bool kd_cu_absent = std::is_same<T, kd_cu_none>::value;

/* The value of operand k at byte offset off: a host scalar from parameter space, else memory. */
template <typename T, int K, int N, typename I>
__device__ __forceinline__ T kd_cu_iter_get(const kd_cu_iter<N> &it, I off) {
  if constexpr (kd_cu_absent<T>) {
    return T{};
  } else {
    if (it.scalar_mask & (1u << K)) {
      T v;
      memcpy(&v, &it.scalar[K], sizeof(T));
      return v;
    }
    return *(const T *)(it.data[K] + off);
  }
}

template <typename T, int V>
struct alignas(sizeof(T) * V) kd_cu_vec {
  T v[V];
};

/* ---- the pointwise kernel: out = f(in1, in2, in3) over the iteration ----
 * OT, T1, T2, T3 storage types (kd_cu_none for absent inputs); f takes and returns compute
 * values. MODE 0: strided, 32-bit; 1: strided, 64-bit; 2: contiguous; 3: contiguous + aligned
 * vector I/O. */
template <typename OT, typename T1, typename T2, typename T3, int MODE, int VEC, typename F>
__global__ void kd_cu_pointwise_kernel(const kd_cu_iter<4> it, F f) {
  const int64_t n = it.numel;
  const int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  if constexpr (MODE == 0 || MODE == 1) {
    typedef typename std::conditional<MODE == 0, int32_t, int64_t>::type I;
    for (int64_t i = tid; i < n; i += step) {
      I off[4];
      kd_cu_iter_offsets<I, 4>(it, (I)i, off);
      auto r = f(kd_cu_ld(kd_cu_iter_get<T1, 1>(it, off[1])), kd_cu_ld(kd_cu_iter_get<T2, 2>(it, off[2])),
                 kd_cu_ld(kd_cu_iter_get<T3, 3>(it, off[3])));
      *(OT *)(it.data[0] + off[0]) = kd_cu_st<OT>(r);
    }
  } else {
  /* contiguous: element j of operand k is at j * sizeof(T) (0 for scalars; absent inputs read
   * nothing, as scalars) */
  const bool s1 = (it.scalar_mask & 2u) || kd_cu_absent<T1>, s2 = (it.scalar_mask & 4u) || kd_cu_absent<T2>,
             s3 = (it.scalar_mask & 8u) || kd_cu_absent<T3>;
  OT *o = (OT *)it.data[0];
  const T1 *a = (const T1 *)it.data[1];
  const T2 *b = (const T2 *)it.data[2];
  const T3 *c = (const T3 *)it.data[3];
  const T1 a0 = kd_cu_iter_get<T1, 1>(it, 0);
  const T2 b0 = kd_cu_iter_get<T2, 2>(it, 0);
  const T3 c0 = kd_cu_iter_get<T3, 3>(it, 0);
  if constexpr (MODE == 3) {
    const int64_t nv = n / VEC;
    for (int64_t v = tid; v < nv; v += step) {
      kd_cu_vec<OT, VEC> ov;
      kd_cu_vec<T1, VEC> av;
      kd_cu_vec<T2, VEC> bv;
      kd_cu_vec<T3, VEC> cv;
      if (!s1) av = ((const kd_cu_vec<T1, VEC> *)a)[v];
      if (!s2) bv = ((const kd_cu_vec<T2, VEC> *)b)[v];
      if (!s3) cv = ((const kd_cu_vec<T3, VEC> *)c)[v];
#pragma unroll
      for (int j = 0; j < VEC; j++)
        ov.v[j] = kd_cu_st<OT>(f(kd_cu_ld(s1 ? a0 : av.v[j]), kd_cu_ld(s2 ? b0 : bv.v[j]), kd_cu_ld(s3 ? c0 : cv.v[j])));
      ((kd_cu_vec<OT, VEC> *)o)[v] = ov;
    }
    for (int64_t i = nv * VEC + tid; i < n; i += step)
      o[i] = kd_cu_st<OT>(f(kd_cu_ld(s1 ? a0 : a[i]), kd_cu_ld(s2 ? b0 : b[i]), kd_cu_ld(s3 ? c0 : c[i])));
  } else {
    for (int64_t i = tid; i < n; i += step)
      o[i] = kd_cu_st<OT>(f(kd_cu_ld(s1 ? a0 : a[i]), kd_cu_ld(s2 ? b0 : b[i]), kd_cu_ld(s3 ? c0 : c[i])));
  }
  }
}

/* Launches the pointwise kernel over `it` with nin (1..3) inputs, choosing the mode. */
template <typename OT, typename T1, typename T2, typename T3, typename F>
static kd_cuda_status kd_cu_pointwise(int device, const kd_cu_iter<4> &it, int nin, F f) {
  if (it.numel == 0) return KD_CUDA_OK;
  const int es[4] = {(int)sizeof(OT), (int)sizeof(T1), (int)sizeof(T2), (int)sizeof(T3)};
  const int nops = nin + 1;
  cudaStream_t s = kd_cu_stream(device);
  constexpr int VEC = 16 / sizeof(OT) > 8 ? 8 : (16 / sizeof(OT) < 2 ? 2 : 16 / sizeof(OT));
  if (kd_cu_iter_contiguous(it, es, nops)) {
    if (kd_cu_iter_aligned(it, es, nops, VEC)) {
      const unsigned grid = kd_cu_grid(device, (it.numel + VEC - 1) / VEC);
      KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_cu_pointwise_kernel<OT, T1, T2, T3, 3, VEC, F>)(it, f);
    } else {
      KD_LAUNCH(kd_cu_grid(device, it.numel), KD_CU_THREADS, 0, s, kd_cu_pointwise_kernel<OT, T1, T2, T3, 2, VEC, F>)(it, f);
    }
  } else if (kd_cu_iter_fits_32(it)) {
    KD_LAUNCH(kd_cu_grid(device, it.numel), KD_CU_THREADS, 0, s, kd_cu_pointwise_kernel<OT, T1, T2, T3, 0, 1, F>)(it, f);
  } else {
    KD_LAUNCH(kd_cu_grid(device, it.numel), KD_CU_THREADS, 0, s, kd_cu_pointwise_kernel<OT, T1, T2, T3, 1, 1, F>)(it, f);
  }
  KD_CU_CHECK_LAUNCH("a pointwise kernel");
  return KD_CUDA_OK;
}

/* ---- shared by the ops_*.cu launchers (ops_common.cu) ---- */
/* A status for an op/dtype pair a backend lacks (bridge maps it to KD_ERR_NOT_SUPPORTED). */
kd_cuda_status kd_cu_not_supported(const char *what, int32_t dtype);
/* The per-device flag word kernels raise (integer division by zero): reset before a launch,
 * read (synchronously) after it. */
kd_cuda_status kd_cu_flags_reset(int device, int32_t **dev_flag);
kd_cuda_status kd_cu_flags_read(int device, int32_t *dev_flag, int32_t *out);

kd_cuda_status kd_cu_unary(int device, const kd_cuda_ew *e, int32_t *flags);
kd_cuda_status kd_cu_binary(int device, const kd_cuda_ew *e, int32_t *flags);
kd_cuda_status kd_cu_ternary(int device, const kd_cuda_ew *e, int32_t *flags);
kd_cuda_status kd_cu_special(int device, const kd_cuda_ew *e, int32_t *flags);

#endif
