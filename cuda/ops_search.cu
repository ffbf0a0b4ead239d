/* ops_search.cu - the searching and counting kinds 30..33 of kd_cuda_op (kd_cu_search_op):
 * searchsorted/bucketize (KD_CUDA_OP_SEARCH), histc/bincount (KD_CUDA_OP_HIST),
 * uniqueConsecutive (KD_CUDA_OP_UNIQUE_CONSECUTIVE) and kthvalue/mode (KD_CUDA_OP_SELECT).
 * The CPU kernels (src/cpu/search.c, histogram.c, unique_consecutive.c, select.c) check the
 * arguments and make every operand a contiguous buffer; the results are those of the CPU loops:
 *   - search: one thread per value, PyTorch's lower/upper bound binary search of its row (through
 *     the sorter when given), compared in the compute type (float for float16/bfloat16).
 *   - hist: bins of up to KD_HIST_SHARED counted per block in shared memory, then added to the
 *     global bins with one atomic per non-empty bin and block; more bins go straight to global
 *     atomics. histc counts in uint64 (exact) and converts once; bincount adds 1 into the int64
 *     output or the float32/float64 weights into an output of theirs (atomics: the order of the
 *     float additions differs from the CPU's sequential one by rounding only).
 *   - uniqueConsecutive: a flag per row where it differs from the previous one (values compared
 *     with !=, so NaN never equals NaN), an inclusive prefix sum of the flags (CUB) numbering the
 *     runs, then the outputs, each run's length from its first and last rows; the run count is
 *     read back at the end, the one sync (as PyTorch's CUDA: the output size depends on it).
 *   - select: one thread per row: kthvalue runs PyTorch's CPU quickselect on a scratch copy of
 *     the row (so tie indices equal the CPU's); mode counts the runs of the sorted row.
 * UNVERIFIED on a GPU: written for an H100 and run on the emulated GPU (test/cuda_parity.test.js
 * compares every search fixture with the CPU). */
#include <cub/device/device_scan.cuh>

#include "ops_sort.cuh"

#define KD_HIST_SHARED 4096 /* bins a block counts in shared memory (32 KiB of 8-byte counters) */

/* ---- searchsorted ---- */
template <typename T>
__global__ void kd_cu_search_k(const T *seq, const T *val, const int64_t *sorter, void *out, int64_t total, int64_t n,
                               int64_t per_row, bool right, bool out32) {
  typedef typename kd_cu_ct<T>::type CT;
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += step) {
    const int64_t row = per_row ? i / per_row : 0;
    const T *bd = seq + row * n;
    const int64_t *so = sorter ? sorter + row * n : nullptr;
    const CT v = kd_cu_ld(val[i]);
    int64_t lo = 0, hi = n;
    while (lo < hi) {
      const int64_t mid = lo + ((hi - lo) >> 1);
      const CT m = kd_cu_ld(bd[so ? so[mid] : mid]);
      if (right ? !(m > v) : !(m >= v)) lo = mid + 1;
      else hi = mid;
    }
    if (out32) ((int32_t *)out)[i] = (int32_t)lo;
    else ((int64_t *)out)[i] = lo;
  }
}

template <typename T>
static kd_cuda_status kd_cu_search_t(int device, kd_cuda_op *o) {
  const int64_t total = o->i[0];
  KD_LAUNCH(kd_cu_grid(device, total), KD_CU_THREADS, 0, kd_cu_stream(device), kd_cu_search_k<T>)(
      (const T *)o->data[0], (const T *)o->data[1], (const int64_t *)o->data[2], o->data[3], total, o->i[1], o->i[2],
      o->i[3] != 0, o->i[4] != 0);
  KD_CU_CHECK_LAUNCH("the searchsorted kernel");
  return KD_CUDA_OK;
}

/* ---- histc / bincount ---- */

/* The bin of histc's element v in [lo, hi] (PyTorch's linear interpolation; integers in
 * integer arithmetic, as PyTorch's CUDA), -1 outside. */
template <typename CT>
__device__ __forceinline__ int64_t kd_cu_histc_bin(CT v, CT lo, CT hi, int64_t bins) {
  if (v < lo || v > hi) return -1;
  int64_t pos;
  if constexpr (std::is_floating_point<CT>::value) {
    if (v != v) return 0; /* NaN: the first bin, as the CPU (histogram.c) */
    pos = (int64_t)((v - lo) * (CT)bins / (hi - lo));
  } else {
    pos = (int64_t)((uint64_t)(v - lo) * (uint64_t)bins / (uint64_t)(hi - lo));
  }
  return pos >= bins ? bins - 1 : pos < 0 ? 0 : pos;
}

/* Adds to the bins of element i: histc (w == nullptr, code 0) or bincount (its value, and its
 * weight or 1). A is the counter type: uint64 counts, float or double weights. */
template <typename T, typename A, bool HISTC>
__device__ __forceinline__ void kd_cu_hist_one(const T *x, const A *w, int64_t i, double lo, double hi, int64_t bins,
                                               int64_t *bin, A *add) {
  typedef typename kd_cu_ct<T>::type CT;
  if constexpr (HISTC) {
    *bin = kd_cu_histc_bin<CT>(kd_cu_ld(x[i]), (CT)lo, (CT)hi, bins);
    *add = (A)1;
  } else {
    *bin = (int64_t)kd_cu_ld(x[i]);
    *add = w ? w[i] : (A)1;
  }
}

/* SHARED: the block counts into shared bins first (bins <= KD_HIST_SHARED), then adds each
 * non-empty one to the global bins; else every element is a global atomic. */
template <typename T, typename A, bool HISTC, bool SHARED>
__global__ void kd_cu_hist_k(const T *x, const A *w, A *bins_out, int64_t n, int64_t bins, double lo, double hi) {
  A *acc = bins_out;
  if constexpr (SHARED) {
    __shared__ A sh[KD_HIST_SHARED];
    for (int64_t b = threadIdx.x; b < bins; b += blockDim.x) sh[b] = (A)0;
    __syncthreads();
    acc = sh;
  }
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t bin;
    A add;
    kd_cu_hist_one<T, A, HISTC>(x, w, i, lo, hi, bins, &bin, &add);
    if (bin >= 0) atomicAdd(&acc[bin], add);
  }
  if constexpr (SHARED) {
    __syncthreads();
    for (int64_t b = threadIdx.x; b < bins; b += blockDim.x)
      if (acc[b] != (A)0) atomicAdd(&bins_out[b], acc[b]);
  }
}

template <typename T>
__global__ void kd_cu_hist_store_k(const unsigned long long *counts, T *out, int64_t bins) {
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t b = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; b < bins; b += step)
    out[b] = kd_cu_st<T>((typename kd_cu_ct<T>::type)counts[b]);
}

/* The bins into acc (zeroed here when `zero`), shared-memory blocks when they fit. */
template <typename T, typename A, bool HISTC>
static kd_cuda_status kd_cu_hist_count(int device, const T *x, const A *w, A *acc, int64_t n, int64_t bins, double lo,
                                       double hi, bool zero) {
  cudaStream_t s = kd_cu_stream(device);
  if (zero) KD_CU_CHECK(cudaMemsetAsync(acc, 0, sizeof(A) * (size_t)bins, s));
  if (n == 0) return KD_CUDA_OK;
  if (bins <= KD_HIST_SHARED)
    KD_LAUNCH(kd_cu_grid(device, n), KD_CU_THREADS, 0, s, kd_cu_hist_k<T, A, HISTC, true>)(x, w, acc, n, bins, lo, hi);
  else
    KD_LAUNCH(kd_cu_grid(device, n), KD_CU_THREADS, 0, s, kd_cu_hist_k<T, A, HISTC, false>)(x, w, acc, n, bins, lo, hi);
  KD_CU_CHECK_LAUNCH("the histogram kernel");
  return KD_CUDA_OK;
}

template <typename T>
static kd_cuda_status kd_cu_histc_t(int device, kd_cuda_op *o) {
  const int64_t n = o->i[0], bins = o->i[1];
  kd_cu_scratch counts(device);
  KD_CU_TRY(counts.alloc(sizeof(unsigned long long) * (size_t)bins));
  KD_CU_TRY((kd_cu_hist_count<T, unsigned long long, true>(device, (const T *)o->data[0], nullptr,
                                                            counts.as<unsigned long long>(), n, bins, o->d[0], o->d[1], true)));
  KD_LAUNCH(kd_cu_grid(device, bins), KD_CU_THREADS, 0, kd_cu_stream(device), kd_cu_hist_store_k<T>)(
      counts.as<unsigned long long>(), (T *)o->data[1], bins);
  KD_CU_CHECK_LAUNCH("the histc store kernel");
  return KD_CUDA_OK;
}

template <typename T>
static kd_cuda_status kd_cu_bincount_t(int device, kd_cuda_op *o) {
  const int64_t n = o->i[0], bins = o->i[1];
  const T *x = (const T *)o->data[0];
  if (!o->data[1])
    return kd_cu_hist_count<T, unsigned long long, false>(device, x, nullptr, (unsigned long long *)o->data[2], n, bins, 0,
                                                          0, false);
  if (o->dtypes[1] == KD_DTYPE_F32)
    return kd_cu_hist_count<T, float, false>(device, x, (const float *)o->data[1], (float *)o->data[2], n, bins, 0, 0, false);
  return kd_cu_hist_count<T, double, false>(device, x, (const double *)o->data[1], (double *)o->data[2], n, bins, 0, 0, false);
}

/* ---- uniqueConsecutive ---- */
template <typename T>
__global__ void kd_cu_uc_flags_k(const T *x, int64_t *flag, int64_t n, int64_t m) {
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t f = 1;
    if (i > 0) {
      f = 0;
      for (int64_t q = 0; q < m && !f; q++) f = kd_cu_ld(x[i * m + q]) != kd_cu_ld(x[(i - 1) * m + q]);
    }
    flag[i] = f;
  }
}

/* gid[i] = 1 + run of row i: the inverse, the first row of each run, where each run starts. */
template <typename T>
__global__ void kd_cu_uc_out_k(const T *x, const int64_t *flag, const int64_t *gid, T *out, int64_t *inv, int64_t *start,
                               int64_t n, int64_t m) {
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    const int64_t g = gid[i] - 1;
    inv[i] = g;
    if (flag[i]) {
      start[g] = i;
      for (int64_t q = 0; q < m; q++) out[g * m + q] = x[i * m + q];
    }
  }
}

/* The length of each run, written by its last row. */
__global__ void kd_cu_uc_counts_k(const int64_t *flag, const int64_t *gid, const int64_t *start, int64_t *cnt, int64_t n) {
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
    if (i == n - 1 || flag[i + 1]) {
      const int64_t g = gid[i] - 1;
      cnt[g] = i + 1 - start[g];
    }
}

template <typename T>
static kd_cuda_status kd_cu_uc_t(int device, kd_cuda_op *o) {
  const int64_t n = o->i[0], m = o->i[1];
  const T *x = (const T *)o->data[0];
  cudaStream_t s = kd_cu_stream(device);
  kd_cu_scratch flag(device), gid(device), start(device), tmp(device);
  KD_CU_TRY(flag.alloc(sizeof(int64_t) * (size_t)n));
  KD_CU_TRY(gid.alloc(sizeof(int64_t) * (size_t)n));
  KD_CU_TRY(start.alloc(sizeof(int64_t) * (size_t)n));
  const unsigned grid = kd_cu_grid(device, n);
  KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_cu_uc_flags_k<T>)(x, flag.as<int64_t>(), n, m);
  KD_CU_CHECK_LAUNCH("the uniqueConsecutive flag kernel");
  size_t bytes = 0;
  KD_CU_CHECK(cub::DeviceScan::InclusiveSum(nullptr, bytes, flag.as<int64_t>(), gid.as<int64_t>(), n, s));
  KD_CU_TRY(tmp.alloc(bytes));
  KD_CU_CHECK(cub::DeviceScan::InclusiveSum(tmp.p, bytes, flag.as<int64_t>(), gid.as<int64_t>(), n, s));
  KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_cu_uc_out_k<T>)(x, flag.as<int64_t>(), gid.as<int64_t>(), (T *)o->data[1],
                                                         (int64_t *)o->data[2], start.as<int64_t>(), n, m);
  KD_CU_CHECK_LAUNCH("the uniqueConsecutive output kernel");
  KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_cu_uc_counts_k)(flag.as<int64_t>(), gid.as<int64_t>(), start.as<int64_t>(),
                                                         (int64_t *)o->data[3], n);
  KD_CU_CHECK_LAUNCH("the uniqueConsecutive count kernel");
  int64_t runs = 0;
  KD_CU_CHECK(cudaMemcpyAsync(&runs, gid.as<int64_t>() + (n - 1), sizeof runs, cudaMemcpyDeviceToHost, s));
  KD_CU_CHECK(cudaStreamSynchronize(s));
  o->result[0] = runs;
  return KD_CUDA_OK;
}

/* ---- kthvalue / mode ---- */

template <typename CT>
__device__ __forceinline__ bool kd_cu_gt_or_nan(CT x, CT y) {
  return (x != x && y == y) || x > y;
}

/* PyTorch's quick_select_template (src/cpu/select.c has the same steps). */
template <typename CT>
__device__ void kd_cu_qselect(CT *v, int64_t *ix, int64_t n, int64_t k) {
  auto swap = [&](int64_t a, int64_t b) {
    const CT tv = v[a];
    v[a] = v[b];
    v[b] = tv;
    const int64_t ti = ix[a];
    ix[a] = ix[b];
    ix[b] = ti;
  };
  int64_t L = 0, R = n - 1;
  for (;;) {
    if (R <= L) return;
    if (R == L + 1) {
      if (kd_cu_gt_or_nan(v[L], v[R])) swap(L, R);
      return;
    }
    const int64_t P = L + (R - L) / 2;
    swap(P, L + 1);
    if (kd_cu_gt_or_nan(v[L + 1], v[R])) swap(L + 1, R);
    if (kd_cu_gt_or_nan(v[L], v[R])) swap(L, R);
    if (kd_cu_gt_or_nan(v[L + 1], v[L])) swap(L + 1, L);
    int64_t i = L + 1, j = R;
    const CT piv = v[L];
    for (;;) {
      do i++; while (kd_cu_gt_or_nan(piv, v[i]));
      do j--; while (kd_cu_gt_or_nan(v[j], piv));
      if (j < i) break;
      swap(i, j);
    }
    swap(L, j);
    if (j <= k) L = i;
    if (j >= k) R = j - 1;
  }
}

template <typename T>
__global__ void kd_cu_kth_k(const T *x, typename kd_cu_ct<T>::type *v, int64_t *ix, T *values, int64_t *indices, int64_t rows,
                            int64_t n, int64_t k) {
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += step) {
    const T *row = x + r * n;
    auto *vr = v + r * n;
    int64_t *ir = ix + r * n;
    for (int64_t e = 0; e < n; e++) vr[e] = kd_cu_ld(row[e]), ir[e] = e;
    kd_cu_qselect(vr, ir, n, k - 1);
    values[r] = row[ir[k - 1]];
    indices[r] = ir[k - 1];
  }
}

/* mode of sorted rows: the first longest run, its last position. */
template <typename T>
__global__ void kd_cu_mode_k(const T *sv, const int64_t *si, T *values, int64_t *indices, int64_t rows, int64_t n) {
  typedef typename kd_cu_ct<T>::type CT;
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += step) {
    const T *vr = sv + r * n;
    int64_t best = 0, best_at = 0, run = 0;
    for (int64_t e = 0; e < n; e++) {
      run++;
      bool last = e == n - 1;
      if (!last) {
        const CT a = kd_cu_ld(vr[e]), b = kd_cu_ld(vr[e + 1]);
        last = !(a == b || (a != a && b != b));
      }
      if (last) {
        if (run > best) best = run, best_at = e;
        run = 0;
      }
    }
    values[r] = vr[best_at];
    indices[r] = si[r * n + best_at];
  }
}

template <typename T>
static kd_cuda_status kd_cu_select_t(int device, kd_cuda_op *o) {
  typedef typename kd_cu_ct<T>::type CT;
  const int64_t rows = o->i[0], n = o->i[1];
  cudaStream_t s = kd_cu_stream(device);
  if (o->code == 1) {
    KD_LAUNCH(kd_cu_grid(device, rows), KD_CU_THREADS, 0, s, kd_cu_mode_k<T>)((const T *)o->data[0], (const int64_t *)o->data[1],
                                                                           (T *)o->data[2], (int64_t *)o->data[3], rows, n);
    KD_CU_CHECK_LAUNCH("the mode kernel");
    return KD_CUDA_OK;
  }
  kd_cu_scratch v(device), ix(device);
  KD_CU_TRY(v.alloc(sizeof(CT) * (size_t)(rows * n)));
  KD_CU_TRY(ix.alloc(sizeof(int64_t) * (size_t)(rows * n)));
  KD_LAUNCH(kd_cu_grid(device, rows), KD_CU_THREADS, 0, s, kd_cu_kth_k<T>)((const T *)o->data[0], v.as<CT>(), ix.as<int64_t>(),
                                                                        (T *)o->data[2], (int64_t *)o->data[3], rows, n,
                                                                        o->i[2]);
  KD_CU_CHECK_LAUNCH("the kthvalue kernel");
  return KD_CUDA_OK;
}

/* ---- entry ---- */
#define KD_CU_INT_DISPATCH(FN, what)                                     \
  switch (o->dtype) {                                                    \
    case KD_DTYPE_I8: return FN<int8_t>(device, o);                      \
    case KD_DTYPE_U8: return FN<uint8_t>(device, o);                     \
    case KD_DTYPE_I16: return FN<int16_t>(device, o);                    \
    case KD_DTYPE_I32: return FN<int32_t>(device, o);                    \
    case KD_DTYPE_I64: return FN<int64_t>(device, o);                    \
    default: return kd_cu_not_supported(what, o->dtype);                 \
  }
kd_cuda_status kd_cu_search_op(int device, kd_cuda_op *o) {
  if (o->i[0] < 0 || o->i[1] < 0) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "search op %d: negative size", (int)o->kind);
  switch (o->kind) {
    case KD_CUDA_OP_SEARCH: /* an empty sequence (i[1] == 0) has no data: every value lands at 0 */
      if (o->nops < 4 || !o->data[1] || !o->data[3] || (o->i[1] > 0 && !o->data[0]))
        return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "searchsorted: bad operands");
      if (o->i[0] == 0) return KD_CUDA_OK;
      KD_CU_SORT_DISPATCH(kd_cu_search_t, "searchsorted")
    case KD_CUDA_OP_HIST:
      if (o->nops < 2 || (o->i[0] > 0 && !o->data[0]))
        return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "histc/bincount: bad operands");
      if (o->code == 0) {
        if (o->i[1] < 1 || !o->data[1]) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "histc: %lld bins", (long long)o->i[1]);
        if (o->dtype == KD_DTYPE_BOOL) return kd_cu_not_supported("histc", o->dtype);
        KD_CU_SORT_DISPATCH(kd_cu_histc_t, "histc")
      }
      if (o->nops < 3 || !o->data[2]) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "bincount: 3 operands expected");
      KD_CU_INT_DISPATCH(kd_cu_bincount_t, "bincount")
    case KD_CUDA_OP_UNIQUE_CONSECUTIVE:
      if (o->nops < 4 || o->i[1] < 1) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "uniqueConsecutive: bad operands");
      if (o->i[0] == 0) return KD_CUDA_OK;
      if (!o->data[0] || !o->data[1] || !o->data[2] || !o->data[3])
        return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "uniqueConsecutive: bad operands");
      KD_CU_SORT_DISPATCH(kd_cu_uc_t, "uniqueConsecutive")
    case KD_CUDA_OP_SELECT:
      if (o->nops < 4 || o->i[1] < 1 || (o->code == 0 && (o->i[2] < 1 || o->i[2] > o->i[1])))
        return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "kthvalue/mode: bad operands");
      if (o->i[0] == 0) return KD_CUDA_OK;
      if (!o->data[0] || !o->data[2] || !o->data[3] || (o->code == 1 && !o->data[1]))
        return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "kthvalue/mode: bad operands");
      KD_CU_SORT_DISPATCH(kd_cu_select_t, "kthvalue/mode")
    default: return kd_cu_error(KD_CUDA_ERR_NOT_SUPPORTED, "op: unknown kind %d", (int)o->kind);
  }
}
