/* ops_index.cu - CUDA indexing: the index check, the gather loop and the scatter loop of
 * src/cpu/index_common.c (Note [Indexing through the iterator] in cpu/index_common.h). The CPU
 * kernels (index_gather.c, index_scatter.c) do every check, build the restrided iteration and
 * call the device hook for device tensors, so indexSelect, gather, take, index, scatter,
 * scatterAdd, scatterReduce (sum/prod/amax/amin), indexAdd, indexCopy, indexFill and indexPut
 * all land on the two kernels here.
 *
 * Out-of-range indices: checked BEFORE the kernel that uses them (KD_CUDA_OP_IX_CHECK): a small
 * kernel wraps negatives in place, records the first bad value in the device's fault record and
 * clamps bad indices to 0, without a host read; the host throws the CPU's message at the next
 * sync point (Note [Deferred index errors] in deferred_check.cuh). Without a record (i[2] = 0)
 * the host reads the lowest bad position synchronously. The gather/scatter kernels then trust
 * their indices.
 *
 * Scatter reductions are atomic: atomicAdd for float/double/half/bfloat16/int32/int64 sums, a
 * compare-and-swap loop on the aligned 32- or 64-bit word holding the element otherwise (any
 * dtype, add/mul/max/min; NaN propagates through max/min as on the CPU). Repeated indices thus
 * accumulate in an unspecified order (float sums may differ from the CPU by rounding), and a
 * plain scatter (copy) with repeated indices keeps one of the values, as PyTorch's CUDA does. */
#include "deferred_check.cuh"
#include "ops_op.cuh"

typedef kd_cu_iter<KD_CUDA_OP_MAX_OPS> kd_cu_it8;

/* Byte offset into the indexed operand: sum_k index_k * stride_k. */
struct kd_cu_ix_geo {
  int nidx;
  int64_t stride[KD_CUDA_OP_MAX_OPS - 2];
};

template <typename I>
__device__ __forceinline__ int64_t kd_cu_ix_off(const kd_cu_it8 &it, const kd_cu_ix_geo &g, const I (&off)[8]) {
  int64_t o = 0;
  for (int k = 0; k < g.nidx; k++) o += kd_cu_op_get<int64_t>(it, 2 + k, off[2 + k]) * g.stride[k];
  return o;
}

/* ---- the index check ---- */
__global__ void kd_cu_ix_check_kernel(int64_t *p, int64_t n, int64_t size, int allow_neg, unsigned long long *bad) {
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t v = p[i];
    if (v < 0 && allow_neg) v += size;
    if (v < 0 || v >= size) atomicMin(bad, (unsigned long long)i);
    else p[i] = v;
  }
}

#define KD_CU_IX_MAX_DEVICES 64
static unsigned long long *kd_cu_ix_words[KD_CU_IX_MAX_DEVICES];

kd_cuda_status kd_cu_ix_check(int device, kd_cuda_op *o) {
  if (o->numel == 0) return KD_CUDA_OK;
  if (device < 0 || device >= KD_CU_IX_MAX_DEVICES || !o->data[0])
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "index check: bad arguments");
  if (o->i[2]) {
    kd_cu_check_rule r = {o->i[0], 0, (int)o->i[1], 0};
    return kd_cu_deferred_check(device, (int64_t *)o->data[0], o->numel, r, 1, 1, o->i[2], o->i[3]);
  }
  cudaStream_t s = kd_cu_stream(device);
  if (!kd_cu_ix_words[device]) KD_CU_CHECK(cudaMalloc((void **)&kd_cu_ix_words[device], sizeof(unsigned long long)));
  unsigned long long *w = kd_cu_ix_words[device], none = ~0ull, got = 0;
  KD_CU_CHECK(cudaMemsetAsync(w, 0xff, sizeof none, s)); /* "no bad position": ~0, with no host copy */
  KD_LAUNCH(kd_cu_grid(device, o->numel), KD_CU_THREADS, 0, s, kd_cu_ix_check_kernel)((int64_t *)o->data[0], o->numel, o->i[0],
                                                                              (int)o->i[1], w);
  KD_CU_CHECK_LAUNCH("the index check kernel");
  /* into pageable memory: the copy returns once it has landed (the one sync of the check) */
  KD_CU_CHECK(cudaMemcpyAsync(&got, w, sizeof got, cudaMemcpyDeviceToHost, s));
  if (got != none) {
    int64_t v = 0;
    KD_CU_CHECK(cudaMemcpy(&v, (int64_t *)o->data[0] + got, sizeof v, cudaMemcpyDeviceToHost));
    o->result[0] = 1;
    o->result[1] = v;
  }
  return KD_CUDA_OK;
}

/* ---- gather: out = src at the index offsets (bits moved, es bytes) ---- */
template <typename U, typename I>
__global__ void kd_cu_ix_gather_kernel(const kd_cu_it8 it, const kd_cu_ix_geo g) {
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < it.numel; i += step) {
    I off[8];
    kd_cu_iter_offsets<I, 8>(it, (I)i, off);
    const int64_t x = kd_cu_ix_off<I>(it, g, off);
    U v;
    if (it.scalar_mask & 2u) memcpy(&v, &it.scalar[1], sizeof v); /* take of a 1-element host value */
    else v = *(const U *)(it.data[1] + off[1] + x);
    *(U *)(it.data[0] + off[0]) = v;
  }
}

template <typename U>
static kd_cuda_status kd_cu_ix_gather_t(int device, const kd_cu_it8 &it, const kd_cu_ix_geo &g) {
  cudaStream_t s = kd_cu_stream(device);
  const unsigned grid = kd_cu_grid(device, it.numel);
  if (kd_cu_iter_fits_32(it)) KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_cu_ix_gather_kernel<U, int32_t>)(it, g);
  else KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_cu_ix_gather_kernel<U, int64_t>)(it, g);
  KD_CU_CHECK_LAUNCH("the gather kernel");
  return KD_CUDA_OK;
}

static kd_cuda_status kd_cu_ix_geo_of(const kd_cuda_op *o, kd_cu_ix_geo *g) {
  memset(g, 0, sizeof *g);
  g->nidx = (int)o->i[0];
  if (g->nidx < 0 || g->nidx > KD_CUDA_OP_MAX_OPS - 2 || g->nidx + 2 != o->nops)
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "indexing: %d index operands for %d operands", g->nidx, (int)o->nops);
  for (int k = 0; k < g->nidx; k++) g->stride[k] = k < 6 ? o->i[2 + k] : 0;
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_ix_gather(int device, kd_cuda_op *o) {
  kd_cu_it8 it;
  kd_cu_ix_geo g;
  KD_CU_TRY(kd_cu_op_iter(o, &it));
  KD_CU_TRY(kd_cu_ix_geo_of(o, &g));
  if (it.numel == 0) return KD_CUDA_OK;
  switch (o->i[1]) {
    case 1: return kd_cu_ix_gather_t<uint8_t>(device, it, g);
    case 2: return kd_cu_ix_gather_t<uint16_t>(device, it, g);
    case 4: return kd_cu_ix_gather_t<uint32_t>(device, it, g);
    case 8: return kd_cu_ix_gather_t<unsigned long long>(device, it, g);
    default: return kd_cu_error(KD_CUDA_ERR_NOT_SUPPORTED, "gather: element size %lld", (long long)o->i[1]);
  }
}

/* ---- scatter: dst op= src ---- */
enum { KD_CU_IX_COPY = 0, KD_CU_IX_ADD, KD_CU_IX_MUL, KD_CU_IX_MAX, KD_CU_IX_MIN }; /* == cpu/index_common.h */

template <typename CT>
__device__ __forceinline__ bool kd_cu_isnan(CT x) { return x != x; }

/* a op b in the compute type (integers wrap), as index_common.c's reduction loops. */
template <typename T>
__device__ __forceinline__ T kd_cu_ix_combine(int mode, T a, T b) {
  typedef typename kd_cu_ct<T>::type CT;
  const CT x = kd_cu_ld(a), y = kd_cu_ld(b);
  CT r;
  if constexpr (std::is_same<CT, int64_t>::value) {
    if (mode == KD_CU_IX_ADD) r = (int64_t)((uint64_t)x + (uint64_t)y);
    else if (mode == KD_CU_IX_MUL) r = (int64_t)((uint64_t)x * (uint64_t)y);
    else if (mode == KD_CU_IX_MAX) r = y > x ? y : x;
    else r = y < x ? y : x;
  } else {
    if (mode == KD_CU_IX_ADD) r = x + y;
    else if (mode == KD_CU_IX_MUL) r = x * y;
    else if (mode == KD_CU_IX_MAX) r = (kd_cu_isnan(y) || y > x) ? y : x;
    else r = (kd_cu_isnan(y) || y < x) ? y : x;
  }
  return kd_cu_st<T>(r);
}

/* *addr = *addr op v, atomically: a CAS loop on the aligned word holding the element. */
template <typename T>
__device__ __forceinline__ void kd_cu_ix_atomic(T *addr, int mode, T v) {
  if constexpr (sizeof(T) == 8) {
    unsigned long long *w = (unsigned long long *)addr;
    unsigned long long old = *(volatile unsigned long long *)w, assumed;
    do {
      assumed = old;
      T cur, nw;
      memcpy(&cur, &assumed, 8);
      nw = kd_cu_ix_combine<T>(mode, cur, v);
      unsigned long long nb;
      memcpy(&nb, &nw, 8);
      old = atomicCAS(w, assumed, nb);
    } while (assumed != old);
  } else {
    const uintptr_t p = (uintptr_t)addr;
    unsigned int *w = (unsigned int *)(p & ~(uintptr_t)3);
    const unsigned shift = (unsigned)(p & 3) * 8;
    const unsigned mask = (sizeof(T) == 4 ? 0xffffffffu : ((1u << (8 * sizeof(T))) - 1u)) << shift;
    unsigned old = *(volatile unsigned *)w, assumed;
    do {
      assumed = old;
      const unsigned bits = (assumed & mask) >> shift;
      T cur, nw;
      memcpy(&cur, &bits, sizeof(T));
      nw = kd_cu_ix_combine<T>(mode, cur, v);
      unsigned nb = 0;
      memcpy(&nb, &nw, sizeof(T));
      old = atomicCAS(w, assumed, (assumed & ~mask) | ((nb << shift) & mask));
    } while (assumed != old);
  }
}

/* Native atomic adds where the hardware has them (sm_80+: half and bfloat16 too). */
template <typename T>
__device__ __forceinline__ void kd_cu_ix_rmw(T *addr, int mode, T v) {
  if (mode == KD_CU_IX_ADD) {
    if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value || std::is_same<T, int32_t>::value ||
                  std::is_same<T, __half>::value || std::is_same<T, __nv_bfloat16>::value) {
      atomicAdd(addr, v);
      return;
    } else if constexpr (std::is_same<T, int64_t>::value) {
      atomicAdd((unsigned long long *)addr, (unsigned long long)v);
      return;
    }
  }
  kd_cu_ix_atomic<T>(addr, mode, v);
}

template <typename T, typename I>
__global__ void kd_cu_ix_scatter_kernel(const kd_cu_it8 it, const kd_cu_ix_geo g, int mode) {
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < it.numel; i += step) {
    I off[8];
    kd_cu_iter_offsets<I, 8>(it, (I)i, off);
    T *d = (T *)(it.data[0] + off[0] + kd_cu_ix_off<I>(it, g, off));
    const T v = kd_cu_op_get<T>(it, 1, off[1]);
    if (mode == KD_CU_IX_COPY) *d = v;
    else kd_cu_ix_rmw<T>(d, mode, v);
  }
}

template <typename T>
static kd_cuda_status kd_cu_ix_scatter_t(int device, const kd_cu_it8 &it, const kd_cu_ix_geo &g, int mode) {
  cudaStream_t s = kd_cu_stream(device);
  const unsigned grid = kd_cu_grid(device, it.numel);
  if (kd_cu_iter_fits_32(it)) KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_cu_ix_scatter_kernel<T, int32_t>)(it, g, mode);
  else KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_cu_ix_scatter_kernel<T, int64_t>)(it, g, mode);
  KD_CU_CHECK_LAUNCH("the scatter kernel");
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_ix_scatter(int device, kd_cuda_op *o) {
  kd_cu_it8 it;
  kd_cu_ix_geo g;
  KD_CU_TRY(kd_cu_op_iter(o, &it));
  KD_CU_TRY(kd_cu_ix_geo_of(o, &g));
  if (o->code < KD_CU_IX_COPY || o->code > KD_CU_IX_MIN)
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "scatter: bad mode %d", (int)o->code);
  if (it.numel == 0) return KD_CUDA_OK;
  const int m = o->code;
  switch (o->dtype) {
    case KD_DTYPE_F32: return kd_cu_ix_scatter_t<float>(device, it, g, m);
    case KD_DTYPE_F64: return kd_cu_ix_scatter_t<double>(device, it, g, m);
    case KD_DTYPE_F16: return kd_cu_ix_scatter_t<__half>(device, it, g, m);
    case KD_DTYPE_BF16: return kd_cu_ix_scatter_t<__nv_bfloat16>(device, it, g, m);
    case KD_DTYPE_I8: return kd_cu_ix_scatter_t<int8_t>(device, it, g, m);
    case KD_DTYPE_U8: return kd_cu_ix_scatter_t<uint8_t>(device, it, g, m);
    case KD_DTYPE_I16: return kd_cu_ix_scatter_t<int16_t>(device, it, g, m);
    case KD_DTYPE_I32: return kd_cu_ix_scatter_t<int32_t>(device, it, g, m);
    case KD_DTYPE_I64: return kd_cu_ix_scatter_t<int64_t>(device, it, g, m);
    case KD_DTYPE_BOOL: return kd_cu_ix_scatter_t<kd_cu_bool>(device, it, g, m);
    default: return kd_cu_not_supported("scatter", o->dtype);
  }
}
