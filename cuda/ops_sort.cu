/* ops_sort.cu - CUDA sort, argsort, topk (KD_CUDA_OP_SORT), unique (KD_CUDA_OP_UNIQUE) and
 * median / median.dim (KD_CUDA_OP_MEDIAN) on CUB. The CPU kernels (src/cpu/sort.c, median.c)
 * check the arguments, move the sorted dim last and make the input contiguous, so every launch
 * here sees `rows` contiguous rows of n elements; they copy the results back into place.
 *
 * Keys: as sort.c, every element maps to an unsigned integer of its own width whose order is the
 * value order: floats through their IEEE bits (-0 folded into +0, every NaN the largest key,
 * float16/bfloat16 on their 16 bits), signed integers with the sign bit flipped, uint8/bool as
 * they are; descending order complements the key. Rows are then sorted as (key, position) pairs
 * by CUB's radix sorts, which are stable, so equal values keep their order as on the CPU:
 * cub::DeviceRadixSort for one row, cub::DeviceSegmentedSort::StableSortPairs for many. topk
 * sorts whole rows and keeps the first k (simple; a selection would be faster for k << n).
 * median takes element (n - 1) / 2 of the ascending row, or the row's first NaN when its last
 * key is NaN, at the first sorted position of its key: the stable order makes that the value's
 * first occurrence in the row, as median.c's index. unique sorts the rows (for unique(dim),
 * rows of m elements are ordered lexicographically by m stable sorts, last column first),
 * marks where the key row changes, numbers the groups with a prefix sum and reads the group
 * count back (synchronous, as the output size depends on it).
 *
 * Temporary storage comes from the caching allocator (kd_cu_scratch). UNVERIFIED: written and
 * compiled without a GPU; test/cuda_parity.test.js compares every sorting fixture with the CPU. */
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include "ops_sort.cuh"

/* ---- keys ---- */
template <typename T> struct kd_cu_skey;
template <> struct kd_cu_skey<float> {
  typedef uint32_t K;
  static constexpr bool is_float = true;
  static __device__ __forceinline__ K of(float x) {
    if (x != x) return 0xffffffffu;
    uint32_t b = __float_as_uint(x == 0.0f ? 0.0f : x);
    return (b >> 31) ? ~b : (b | 0x80000000u);
  }
};
template <> struct kd_cu_skey<double> {
  typedef unsigned long long K;
  static constexpr bool is_float = true;
  static __device__ __forceinline__ K of(double x) {
    if (x != x) return ~0ull;
    unsigned long long b = (unsigned long long)__double_as_longlong(x == 0.0 ? 0.0 : x);
    return (b >> 63) ? ~b : (b | (1ull << 63));
  }
};
/* float16 / bfloat16 on their bits: NaN when the exponent is all ones and the mantissa not 0. */
template <uint16_t INF>
__device__ __forceinline__ uint16_t kd_cu_skey16(uint16_t b) {
  if ((b & 0x7fffu) > INF) return 0xffffu;
  if ((b & 0x7fffu) == 0) b = 0;
  return (b >> 15) ? (uint16_t)~b : (uint16_t)(b | 0x8000u);
}
template <> struct kd_cu_skey<__half> {
  typedef uint16_t K;
  static constexpr bool is_float = true;
  static __device__ __forceinline__ K of(__half x) { return kd_cu_skey16<0x7c00u>(__half_as_ushort(x)); }
};
template <> struct kd_cu_skey<__nv_bfloat16> {
  typedef uint16_t K;
  static constexpr bool is_float = true;
  static __device__ __forceinline__ K of(__nv_bfloat16 x) { return kd_cu_skey16<0x7f80u>(__bfloat16_as_ushort(x)); }
};
template <> struct kd_cu_skey<int8_t> {
  typedef uint8_t K;
  static constexpr bool is_float = false;
  static __device__ __forceinline__ K of(int8_t x) { return (uint8_t)((uint8_t)x ^ 0x80u); }
};
template <> struct kd_cu_skey<uint8_t> { /* uint8 and bool */
  typedef uint8_t K;
  static constexpr bool is_float = false;
  static __device__ __forceinline__ K of(uint8_t x) { return x; }
};
template <> struct kd_cu_skey<int16_t> {
  typedef uint16_t K;
  static constexpr bool is_float = false;
  static __device__ __forceinline__ K of(int16_t x) { return (uint16_t)((uint16_t)x ^ 0x8000u); }
};
template <> struct kd_cu_skey<int32_t> {
  typedef uint32_t K;
  static constexpr bool is_float = false;
  static __device__ __forceinline__ K of(int32_t x) { return (uint32_t)x ^ 0x80000000u; }
};
template <> struct kd_cu_skey<int64_t> {
  typedef unsigned long long K;
  static constexpr bool is_float = false;
  static __device__ __forceinline__ K of(int64_t x) { return (unsigned long long)x ^ (1ull << 63); }
};

/* keys[i] = key(x[i]) ^ flip, pos[i] = i % n. */
template <typename T>
__global__ void kd_cu_sort_fill(const T *x, typename kd_cu_skey<T>::K *keys, int64_t *pos, int64_t total, int64_t n,
                                typename kd_cu_skey<T>::K flip) {
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += step) {
    keys[i] = kd_cu_skey<T>::of(x[i]) ^ flip;
    pos[i] = i % n;
  }
}

__global__ void kd_cu_sort_offsets(int64_t *off, int64_t rows, int64_t n) {
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r <= rows; r += step) off[r] = r * n;
}

/* The k first of each sorted row: indices, and the values gathered from the input. */
template <typename T>
__global__ void kd_cu_sort_take(const T *x, const int64_t *spos, T *values, int64_t *indices, int64_t rows, int64_t n,
                                int64_t k) {
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < rows * k; j += step) {
    const int64_t r = j / k, e = j % k;
    const int64_t p = spos[r * n + e];
    indices[j] = p;
    if (values) values[j] = x[r * n + p];
  }
}

/* Stable sort of rows x n (key, position) pairs: sorted keys to kout, positions to pout. */
template <typename K>
static kd_cuda_status kd_cu_sort_pairs(int device, const K *kin, K *kout, const int64_t *pin, int64_t *pout, int64_t rows,
                                       int64_t n) {
  cudaStream_t s = kd_cu_stream(device);
  const int64_t total = rows * n;
  size_t bytes = 0;
  kd_cu_scratch tmp(device);
  if (rows == 1) {
    KD_CU_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, kin, kout, pin, pout, total, 0, (int)(8 * sizeof(K)), s));
    KD_CU_TRY(tmp.alloc(bytes));
    KD_CU_CHECK(cub::DeviceRadixSort::SortPairs(tmp.p, bytes, kin, kout, pin, pout, total, 0, (int)(8 * sizeof(K)), s));
    return KD_CUDA_OK;
  }
  kd_cu_scratch off(device);
  KD_CU_TRY(off.alloc(sizeof(int64_t) * (size_t)(rows + 1)));
  KD_LAUNCH(kd_cu_grid(device, rows + 1), KD_CU_THREADS, 0, s, kd_cu_sort_offsets)(off.as<int64_t>(), rows, n);
  KD_CU_CHECK_LAUNCH("the sort offsets kernel");
  const int64_t *ob = off.as<int64_t>(), *oe = off.as<int64_t>() + 1;
  KD_CU_CHECK(cub::DeviceSegmentedSort::StableSortPairs(nullptr, bytes, kin, kout, pin, pout, total, rows, ob, oe, s));
  KD_CU_TRY(tmp.alloc(bytes));
  KD_CU_CHECK(cub::DeviceSegmentedSort::StableSortPairs(tmp.p, bytes, kin, kout, pin, pout, total, rows, ob, oe, s));
  return KD_CUDA_OK;
}

/* Keys and positions of the rows, sorted (ascending keys, complemented when desc). */
template <typename T>
static kd_cuda_status kd_cu_sorted_rows(int device, const T *x, int64_t rows, int64_t n, bool desc, kd_cu_scratch &keys,
                                        kd_cu_scratch &spos) {
  typedef typename kd_cu_skey<T>::K K;
  cudaStream_t s = kd_cu_stream(device);
  const int64_t total = rows * n;
  kd_cu_scratch kin(device), pin(device);
  KD_CU_TRY(kin.alloc(sizeof(K) * (size_t)total));
  KD_CU_TRY(pin.alloc(sizeof(int64_t) * (size_t)total));
  KD_CU_TRY(keys.alloc(sizeof(K) * (size_t)total));
  KD_CU_TRY(spos.alloc(sizeof(int64_t) * (size_t)total));
  KD_LAUNCH(kd_cu_grid(device, total), KD_CU_THREADS, 0, s, kd_cu_sort_fill<T>)(x, kin.as<K>(), pin.as<int64_t>(), total, n,
                                                                          desc ? (K)~(K)0 : (K)0);
  KD_CU_CHECK_LAUNCH("the sort key kernel");
  return kd_cu_sort_pairs<K>(device, kin.as<K>(), keys.as<K>(), pin.as<int64_t>(), spos.as<int64_t>(), rows, n);
}

template <typename T>
static kd_cuda_status kd_cu_sort_t(int device, kd_cuda_op *o) {
  const int64_t rows = o->i[0], n = o->i[1], k = o->i[2];
  kd_cu_scratch keys(device), spos(device);
  KD_CU_TRY(kd_cu_sorted_rows<T>(device, (const T *)o->data[0], rows, n, o->i[3] != 0, keys, spos));
  cudaStream_t s = kd_cu_stream(device);
  KD_LAUNCH(kd_cu_grid(device, rows * k), KD_CU_THREADS, 0, s, kd_cu_sort_take<T>)(
      (const T *)o->data[0], spos.as<int64_t>(), (T *)o->data[1], (int64_t *)o->data[2], rows, n, k);
  KD_CU_CHECK_LAUNCH("the sort gather kernel");
  return KD_CUDA_OK;
}

/* ---- median ---- */
template <typename T>
__global__ void kd_cu_median_take(const T *x, const typename kd_cu_skey<T>::K *keys, const int64_t *spos, T *values,
                                  int64_t *indices, int64_t rows, int64_t n) {
  typedef typename kd_cu_skey<T>::K K;
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += step) {
    const K *kr = keys + r * n;
    /* the median's key, or NaN's when the row holds one; then its first sorted position (binary
       search), which the stable sort makes the first occurrence in the row */
    const K want = kd_cu_skey<T>::is_float && kr[n - 1] == (K)~(K)0 ? (K)~(K)0 : kr[(n - 1) / 2];
    int64_t lo = 0, hi = n - 1;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (kr[mid] >= want) hi = mid;
      else lo = mid + 1;
    }
    const int64_t p = spos[r * n + lo];
    values[r] = x[r * n + p];
    indices[r] = p;
  }
}

template <typename T>
static kd_cuda_status kd_cu_median_t(int device, kd_cuda_op *o) {
  typedef typename kd_cu_skey<T>::K K;
  const int64_t rows = o->i[0], n = o->i[1];
  kd_cu_scratch keys(device), spos(device);
  KD_CU_TRY(kd_cu_sorted_rows<T>(device, (const T *)o->data[0], rows, n, false, keys, spos));
  KD_LAUNCH(kd_cu_grid(device, rows), KD_CU_THREADS, 0, kd_cu_stream(device), kd_cu_median_take<T>)(
      (const T *)o->data[0], keys.as<K>(), spos.as<int64_t>(), (T *)o->data[1], (int64_t *)o->data[2], rows, n);
  KD_CU_CHECK_LAUNCH("the median kernel");
  return KD_CUDA_OK;
}

/* ---- unique ---- */
/* keys[i] = key of element `col` of row perm[i] (rows of m elements). */
template <typename T>
__global__ void kd_cu_unique_col(const T *x, const int64_t *perm, typename kd_cu_skey<T>::K *keys, int64_t n, int64_t m,
                                 int64_t col) {
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
    keys[i] = kd_cu_skey<T>::of(x[perm[i] * m + col]);
}

/* flag[i] = 1 where sorted row i starts a group (its keys differ from row i - 1's). */
template <typename T>
__global__ void kd_cu_unique_flags(const T *x, const int64_t *order, int64_t *flag, int64_t n, int64_t m) {
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t f = 1;
    if (i > 0) {
      const T *a = x + order[i] * m, *b = x + order[i - 1] * m;
      f = 0;
      for (int64_t q = 0; q < m && !f; q++) f = kd_cu_skey<T>::of(a[q]) != kd_cu_skey<T>::of(b[q]);
    }
    flag[i] = f;
  }
}

/* gid[i] = 1 + group of sorted row i: the inverse, the distinct rows, the counts. */
template <typename T>
__global__ void kd_cu_unique_out(const T *x, const int64_t *order, const int64_t *flag, const int64_t *gid, T *out,
                                 int64_t *inv, unsigned long long *cnt, int64_t n, int64_t m) {
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    const int64_t g = gid[i] - 1, r = order[i];
    inv[r] = g;
    atomicAdd(cnt + g, 1ull);
    if (flag[i])
      for (int64_t q = 0; q < m; q++) out[g * m + q] = x[r * m + q];
  }
}

template <typename T>
static kd_cuda_status kd_cu_unique_t(int device, kd_cuda_op *o) {
  typedef typename kd_cu_skey<T>::K K;
  const int64_t n = o->i[0], m = o->i[1];
  const T *x = (const T *)o->data[0];
  cudaStream_t s = kd_cu_stream(device);
  if (n == 0) return KD_CUDA_OK;
  kd_cu_scratch keys(device), order(device);
  if (m == 1) {
    KD_CU_TRY(kd_cu_sorted_rows<T>(device, x, 1, n, false, keys, order));
  } else { /* lexicographic: stable sorts by column m - 1, ..., 0 */
    kd_cu_scratch kin(device), pin(device);
    KD_CU_TRY(kin.alloc(sizeof(K) * (size_t)n));
    KD_CU_TRY(keys.alloc(sizeof(K) * (size_t)n));
    KD_CU_TRY(pin.alloc(sizeof(int64_t) * (size_t)n));
    KD_CU_TRY(order.alloc(sizeof(int64_t) * (size_t)n));
    KD_LAUNCH(kd_cu_grid(device, n), KD_CU_THREADS, 0, s, kd_cu_sort_offsets)(pin.as<int64_t>(), n - 1, 1); /* iota */
    KD_CU_CHECK_LAUNCH("the unique iota kernel");
    for (int64_t col = m - 1; col >= 0; col--) {
      KD_LAUNCH(kd_cu_grid(device, n), KD_CU_THREADS, 0, s, kd_cu_unique_col<T>)(x, pin.as<int64_t>(), kin.as<K>(), n, m, col);
      KD_CU_CHECK_LAUNCH("the unique column kernel");
      KD_CU_TRY(kd_cu_sort_pairs<K>(device, kin.as<K>(), keys.as<K>(), pin.as<int64_t>(), order.as<int64_t>(), 1, n));
      if (col > 0) std::swap(pin.p, order.p);
    }
  }
  kd_cu_scratch flag(device), gid(device), tmp(device);
  KD_CU_TRY(flag.alloc(sizeof(int64_t) * (size_t)n));
  KD_CU_TRY(gid.alloc(sizeof(int64_t) * (size_t)n));
  KD_LAUNCH(kd_cu_grid(device, n), KD_CU_THREADS, 0, s, kd_cu_unique_flags<T>)(x, order.as<int64_t>(), flag.as<int64_t>(), n, m);
  KD_CU_CHECK_LAUNCH("the unique flag kernel");
  size_t bytes = 0;
  KD_CU_CHECK(cub::DeviceScan::InclusiveSum(nullptr, bytes, flag.as<int64_t>(), gid.as<int64_t>(), n, s));
  KD_CU_TRY(tmp.alloc(bytes));
  KD_CU_CHECK(cub::DeviceScan::InclusiveSum(tmp.p, bytes, flag.as<int64_t>(), gid.as<int64_t>(), n, s));
  KD_CU_CHECK(cudaMemsetAsync(o->data[3], 0, sizeof(int64_t) * (size_t)n, s));
  KD_LAUNCH(kd_cu_grid(device, n), KD_CU_THREADS, 0, s, kd_cu_unique_out<T>)(x, order.as<int64_t>(), flag.as<int64_t>(),
                                                                     gid.as<int64_t>(), (T *)o->data[1], (int64_t *)o->data[2],
                                                                     (unsigned long long *)o->data[3], n, m);
  KD_CU_CHECK_LAUNCH("the unique output kernel");
  int64_t groups = 0;
  KD_CU_CHECK(cudaMemcpyAsync(&groups, gid.as<int64_t>() + (n - 1), sizeof groups, cudaMemcpyDeviceToHost, s));
  KD_CU_CHECK(cudaStreamSynchronize(s));
  o->result[0] = groups;
  return KD_CUDA_OK;
}

/* ---- entries (KD_CU_SORT_DISPATCH in ops_sort.cuh) ---- */
static kd_cuda_status kd_cu_sort_check(const kd_cuda_op *o, int nops, const char *what) {
  if (o->nops < nops || !o->data[0])
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "%s: %d operands, expected %d", what, (int)o->nops, nops);
  if (o->i[0] < 0 || o->i[1] < 0) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "%s: negative size", what);
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_sort(int device, kd_cuda_op *o) {
  KD_CU_TRY(kd_cu_sort_check(o, 3, "sort"));
  if (o->i[2] < 0 || o->i[2] > o->i[1] || !o->data[2]) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "sort: bad k");
  if (o->i[0] == 0 || o->i[1] == 0 || o->i[2] == 0) return KD_CUDA_OK;
  KD_CU_SORT_DISPATCH(kd_cu_sort_t, "sort")
}

kd_cuda_status kd_cu_median(int device, kd_cuda_op *o) {
  KD_CU_TRY(kd_cu_sort_check(o, 3, "median"));
  if (o->i[1] == 0 && o->i[0] > 0) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "median: empty rows");
  if (o->i[0] == 0) return KD_CUDA_OK;
  if (o->dtype == KD_DTYPE_BOOL) return kd_cu_not_supported("median", o->dtype);
  KD_CU_SORT_DISPATCH(kd_cu_median_t, "median")
}

kd_cuda_status kd_cu_unique(int device, kd_cuda_op *o) {
  KD_CU_TRY(kd_cu_sort_check(o, 4, "unique"));
  if (o->i[1] < 1) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "unique: rows of %lld elements", (long long)o->i[1]);
  KD_CU_SORT_DISPATCH(kd_cu_unique_t, "unique")
}
