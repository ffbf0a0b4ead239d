/* ops_scan.cu - CUDA cumsum and cumprod along one dim, and (kind KD_CUDA_OP_SCAN of kd_cu_op)
 * cummax/cummin and cumprodBackward, (src/cpu/scan.c's host side made the
 * input contiguous in the output dtype and allocated the contiguous output), seen as
 * [outer, len, inner]. When inner > 1: one thread per line (outer * inner lines), a sequential
 * scan down the line, so results are in the CPU's order; adjacent threads own adjacent lines, so
 * every step is one coalesced load and store. When inner == 1 (the scan runs along the last dim)
 * that layout would make every thread walk its own row, uncoalesced: one block per row instead,
 * KD_SCAN_BLOCK elements at a time with a block-wide scan (CUB's BlockScan) plus the carry of the
 * chunks before, as PyTorch's scan of the innermost dim. Accumulators: double for every floating
 * dtype (as the CPU; the row scan adds in a tree, so the last bits of a double result may differ
 * from the CPU's sequential order), uint64 with wrapping for integers and bool (as the CPU's
 * int64, exactly); each prefix is rounded to the dtype once. */
#include <cub/block/block_scan.cuh>

#include "ops_reduce.cuh"

template <typename T>
__global__ void kd_scan_k(const T *x, T *y, int64_t outer, int64_t len, int64_t inner, bool sum) {
  typedef typename kd_cu_ct<T>::type CT;
  const int64_t n = outer * inner, step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; c < n; c += step) {
    const int64_t o = c / inner, j = c % inner;
    const T *xc = x + o * len * inner + j;
    T *yc = y + o * len * inner + j;
    if constexpr (std::is_floating_point<CT>::value) {
      double a = sum ? 0.0 : 1.0;
      for (int64_t k = 0; k < len; k++) {
        const double v = (double)kd_cu_ld(xc[k * inner]);
        a = sum ? a + v : a * v;
        yc[k * inner] = kd_cu_st<T>((CT)a);
      }
    } else {
      uint64_t a = sum ? 0 : 1;
      for (int64_t k = 0; k < len; k++) {
        const uint64_t v = (uint64_t)kd_cu_ld(xc[k * inner]);
        a = sum ? a + v : a * v;
        yc[k * inner] = kd_cu_st<T>((int64_t)a);
      }
    }
  }
}

#define KD_SCAN_BLOCK 256

template <typename A>
struct kd_scan_combine {
  bool sum;
  __device__ __forceinline__ A operator()(A a, A b) const { return sum ? a + b : a * b; }
};

/* inner == 1: block b scans rows b, b + gridDim.x, ... */
template <typename T>
__global__ void __launch_bounds__(KD_SCAN_BLOCK) kd_scan_rows_k(const T *x, T *y, int64_t rows, int64_t len, bool sum) {
  typedef typename kd_cu_ct<T>::type CT;
  typedef typename std::conditional<std::is_floating_point<CT>::value, double, uint64_t>::type A;
  typedef cub::BlockScan<A, KD_SCAN_BLOCK> Scan;
  __shared__ typename Scan::TempStorage tmp;
  const kd_scan_combine<A> op{sum};
  const A ident = sum ? (A)0 : (A)1;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T *xr = x + row * len;
    T *yr = y + row * len;
    A carry = ident;
    for (int64_t k0 = 0; k0 < len; k0 += KD_SCAN_BLOCK) {
      const int64_t k = k0 + threadIdx.x;
      A v = k < len ? (A)kd_cu_ld(xr[k]) : ident, incl, chunk;
      Scan(tmp).InclusiveScan(v, incl, op, chunk);
      if (k < len) {
        if constexpr (std::is_floating_point<CT>::value) yr[k] = kd_cu_st<T>((CT)op(carry, incl));
        else yr[k] = kd_cu_st<T>((int64_t)op(carry, incl));
      }
      carry = op(carry, chunk);
      __syncthreads(); /* tmp is reused by the next chunk */
    }
  }
}

kd_cuda_status kd_cu_scan_rows(int device, const kd_cuda_rows *r) {
  const bool sum = r->op == KD_CUDA_ROWS_CUMSUM;
  cudaStream_t s = kd_cu_stream(device);
  if (r->outer * r->inner == 0 || r->len == 0) return KD_CUDA_OK;
  const bool rows = r->inner == 1 && r->len > 1;
  const unsigned grid = rows ? (unsigned)(r->outer < 65535 ? r->outer : 65535) : kd_cu_grid(device, r->outer * r->inner);
  switch (r->dtype) {
#define KD_SCAN_CASE(DT, T)                                                                                       \
  case DT:                                                                                                        \
    if (rows)                                                                                                     \
      KD_LAUNCH(grid, KD_SCAN_BLOCK, 0, s, kd_scan_rows_k<T>)((const T *)r->x, (T *)r->y, r->outer, r->len, sum);      \
    else                                                                                                          \
      KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_scan_k<T>)((const T *)r->x, (T *)r->y, r->outer, r->len, r->inner, sum); \
    break;
    KD_CU_FOR_EACH_DTYPE(KD_SCAN_CASE)
#undef KD_SCAN_CASE
    default: return kd_cu_not_supported("cumsum/cumprod", r->dtype);
  }
  KD_CU_CHECK_LAUNCH("a scan kernel");
  return KD_CUDA_OK;
}

/* ---- cummax / cummin / cumprodBackward (kd_cuda_op kind KD_CUDA_OP_SCAN) ----
 * The same line layout and one thread per line, with src/cpu/scan.c's loops: cummax/cummin keep
 * the last of ties and propagate NaN; cumprodBackward is exact with zeros (z = the first zero
 * of the line: before it s / x_k with s the suffix sum of g_j out_j, at it a forward product,
 * after it 0), in double. */
template <typename T>
__global__ void kd_cumx_k(const T *x, T *values, int64_t *indices, int64_t outer, int64_t len, int64_t inner, bool mx) {
  typedef typename kd_cu_ct<T>::type CT;
  const int64_t n = outer * inner, step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; c < n; c += step) {
    const int64_t base = (c / inner) * len * inner + c % inner;
    CT best = kd_cu_ld(x[base]);
    int64_t bi = 0;
    for (int64_t k = 0; k < len; k++) {
      const CT v = kd_cu_ld(x[base + k * inner]);
      if (v != v || (best == best && (mx ? v >= best : v <= best))) {
        best = v;
        bi = k;
      }
      values[base + k * inner] = kd_cu_st<T>(best);
      indices[base + k * inner] = bi;
    }
  }
}

template <typename T>
__global__ void kd_cumprod_backward_k(const T *x, const T *g, const T *r, T *out, int64_t outer, int64_t len,
                                      int64_t inner) {
  typedef typename kd_cu_ct<T>::type CT;
  const int64_t n = outer * inner, step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; c < n; c += step) {
    const int64_t base = (c / inner) * len * inner + c % inner;
#define KD_AT(p, k) ((double)kd_cu_ld((p)[base + (k) * inner]))
    int64_t z = len;
    for (int64_t k = 0; k < len && z == len; k++)
      if (KD_AT(x, k) == 0) z = k;
    double s = 0;
    for (int64_t k = len - 1; k >= 0; k--) {
      double gk = 0;
      if (k < z) {
        s += KD_AT(g, k) * KD_AT(r, k);
        gk = s / KD_AT(x, k);
      } else if (k == z) {
        double q = z > 0 ? KD_AT(r, z - 1) : 1.0, acc = KD_AT(g, z) * q;
        for (int64_t j = z + 1; j < len; j++) {
          q *= KD_AT(x, j);
          acc += KD_AT(g, j) * q;
        }
        gk = acc;
      }
      out[base + k * inner] = kd_cu_st<T>((CT)gk);
    }
#undef KD_AT
  }
}

/* logcumsumexp: src/cpu/scan.c's log_add_exp (PyTorch's) accumulated in double, one thread per
 * line in the CPU's order. */
__device__ __forceinline__ double kd_log_add_exp(double x, double y) {
  const double mn = y != y ? y : (y < x ? y : x), mx = y != y ? y : (x < y ? y : x);
  if (mn != mx || isfinite(mn)) return log1p(exp(mn - mx)) + mx;
  return x;
}
template <typename T>
__global__ void kd_logcumsumexp_k(const T *x, T *y, int64_t outer, int64_t len, int64_t inner) {
  typedef typename kd_cu_ct<T>::type CT;
  const int64_t n = outer * inner, step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; c < n; c += step) {
    const int64_t base = (c / inner) * len * inner + c % inner;
    double acc = -INFINITY;
    for (int64_t k = 0; k < len; k++) {
      acc = kd_log_add_exp((double)kd_cu_ld(x[base + k * inner]), acc);
      y[base + k * inner] = kd_cu_st<T>((CT)acc);
    }
  }
}

template <typename T> struct kd_cu_is_float_t { static const bool value = false; };
template <> struct kd_cu_is_float_t<float> { static const bool value = true; };
template <> struct kd_cu_is_float_t<double> { static const bool value = true; };
template <> struct kd_cu_is_float_t<__half> { static const bool value = true; };
template <> struct kd_cu_is_float_t<__nv_bfloat16> { static const bool value = true; };

/* code 0 cummax, 1 cummin: data[0] x, data[1] values, data[2] int64 indices; code 2
 * cumprodBackward (floating dtypes): data[0] x, data[1] grad, data[2] result, data[3] out;
 * code 3 logcumsumexp (floating dtypes): data[0] x, data[1] out.
 * Contiguous [outer, len, inner]: i[0..2]. */
kd_cuda_status kd_cu_scan_op(int device, kd_cuda_op *o) {
  const int64_t outer = o->i[0], len = o->i[1], inner = o->i[2];
  if (outer * inner == 0 || len == 0) return KD_CUDA_OK;
  cudaStream_t s = kd_cu_stream(device);
  const unsigned grid = kd_cu_grid(device, outer * inner);
  switch (o->dtype) {
#define KD_SCANOP_CASE(DT, T)                                                                                      \
  case DT:                                                                                                         \
    if (o->code == 0 || o->code == 1) {                                                                            \
      KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_cumx_k<T>)((const T *)o->data[0], (T *)o->data[1], (int64_t *)o->data[2],   \
                                                  outer, len, inner, o->code == 0);                                \
    } else if (o->code == 2) {                                                                                     \
      if (!kd_cu_is_float_t<T>::value) return kd_cu_not_supported("cumprodBackward", o->dtype);                    \
      KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_cumprod_backward_k<T>)((const T *)o->data[0], (const T *)o->data[1],        \
                                                              (const T *)o->data[2], (T *)o->data[3], outer, len,  \
                                                              inner);                                              \
    } else if (o->code == 3) {                                                                                     \
      if (!kd_cu_is_float_t<T>::value) return kd_cu_not_supported("logcumsumexp", o->dtype);                       \
      KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_logcumsumexp_k<T>)((const T *)o->data[0], (T *)o->data[1], outer, len, \
                                                                 inner);                                           \
    } else                                                                                                         \
      return kd_cu_error(KD_CUDA_ERR_NOT_SUPPORTED, "scan: unknown code %d", (int)o->code);                        \
    break;
    KD_CU_FOR_EACH_DTYPE(KD_SCANOP_CASE)
#undef KD_SCANOP_CASE
    default: return kd_cu_not_supported("cummax/cummin/cumprodBackward", o->dtype);
  }
  KD_CU_CHECK_LAUNCH("a scan kernel");
  return KD_CUDA_OK;
}
