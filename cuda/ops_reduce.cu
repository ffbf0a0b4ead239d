/* ops_reduce.cu - CUDA reductions: every value reduction of src/cpu/reduce.c (sum, nansum,
 * mean, nanmean, prod, max/min/amax/amin, var/std and varMean/stdMean, norm, logsumexp, all,
 * any, countNonzero) and the index reductions (max.dim/min.dim, argmax/argmin).
 *
 * The host side is the CPU kernel (Note [Device kernels through the CPU kernels]): it checked
 * the arguments with PyTorch's messages, cast the input to the compute dtype and allocated the
 * outputs; its device hook sends a kd_cuda_reduce here. The input is seen as
 * (output index o, reduced index r) -> in[keep_off(o) + red_off(r)] with kept dims in the
 * output's row-major order and reduced dims (value reductions: sorted by decreasing stride,
 * so consecutive r are adjacent in memory; index reductions: the one reduced dim, so r is the
 * index PyTorch reports).
 *
 * Like the CPU (Note [Reduction accumulators]) every reduction is one or two accumulate
 * passes into an accumulator array with one element per output, then a pointwise "post" pass
 * that writes the output dtype (mean divides, std takes the root, ...). Accumulators: float
 * for float16/bfloat16 inputs (double when the output is float64), double for float32 and
 * float64 (as the CPU; a reduction is bound by memory, so the wider adds cost nothing), int64
 * with wrapping arithmetic for integers and bool (and for all/any/countNonzero). A pass picks
 * one of three kernels:
 *   thread per output  when a kept dim is the fastest in memory (a column reduction: adjacent
 *                      threads read adjacent elements), or every reduced run has one element;
 *   warp per output    for short reduced runs (<= 2048 elements), warp shuffles at the end;
 *   block per output   for long runs; when there are few outputs (a full reduction) each
 *                      output's run is split over G blocks writing partial accumulators that
 *                      a second kernel combines (the two-pass tree).
 * The accumulate step and combine of a kind are those of the CPU loops (NaN propagates in
 * max/min; the first index wins ties and the first NaN wins in the index reductions). */
#include <type_traits>

#include "ops/op_codes.gen.h"
#include "ops_math.cuh"
#include "ops_reduce.cuh"

/* accumulate kinds (reduce.c's KD_RK_*) */
enum {
  KD_CRK_SUM, KD_CRK_NANSUM, KD_CRK_PROD, KD_CRK_MAX, KD_CRK_MIN, KD_CRK_ALL, KD_CRK_ANY, KD_CRK_COUNT_NZ,
  KD_CRK_NOTNAN, KD_CRK_ABS_SUM, KD_CRK_SQ_SUM, KD_CRK_ABS_MAX, KD_CRK_ABS_MIN, KD_CRK_POW_SUM, KD_CRK_CSQ,
  KD_CRK_CEXP,
};

struct kd_cu_red_geom {
  int32_t nk, nr;
  int64_t ks[KD_CUDA_MAX_DIMS], kst[KD_CUDA_MAX_DIMS]; /* kept: row-major, element strides */
  int64_t rs[KD_CUDA_MAX_DIMS], rst[KD_CUDA_MAX_DIMS]; /* reduced: row-major over rs */
};

__device__ __forceinline__ int64_t kd_red_keep_off(const kd_cu_red_geom &g, int64_t o) {
  int64_t off = 0;
  for (int d = g.nk - 1; d >= 0; d--) {
    const int64_t s = g.ks[d];
    off += (o % s) * g.kst[d];
    o /= s;
  }
  return off;
}

__device__ __forceinline__ int64_t kd_red_red_off(const kd_cu_red_geom &g, int64_t r) {
  if (g.nr == 1) return r * g.rst[0];
  int64_t off = 0;
  for (int d = g.nr - 1; d >= 0; d--) {
    const int64_t s = g.rs[d];
    off += (r % s) * g.rst[d];
    r /= s;
  }
  return off;
}

/* ---- value reductions: one functor, the kind uniform across a launch ---- */
template <typename A>
__device__ __forceinline__ A kd_red_lowest() {
  if constexpr (std::is_floating_point<A>::value) return -(A)INFINITY;
  else return INT64_MIN;
}
template <typename A>
__device__ __forceinline__ A kd_red_highest() {
  if constexpr (std::is_floating_point<A>::value) return (A)INFINITY;
  else return INT64_MAX;
}
template <typename A>
__device__ __forceinline__ A kd_red_rmax(A a, A x) { return (x > a || x != x) ? x : a; }
template <typename A>
__device__ __forceinline__ A kd_red_rmin(A a, A x) { return (x < a || x != x) ? x : a; }

template <typename T, typename A>
struct kd_red_vop {
  int kind;
  A p; /* norm's order (KD_CRK_POW_SUM) */

  __device__ __forceinline__ A ident() const {
    switch (kind) {
      case KD_CRK_PROD:
      case KD_CRK_ALL: return (A)1;
      case KD_CRK_MAX: return kd_red_lowest<A>();
      case KD_CRK_MIN:
      case KD_CRK_ABS_MIN: return kd_red_highest<A>();
      default: return (A)0;
    }
  }

  __device__ __forceinline__ A comb(A a, A b) const {
    if constexpr (std::is_floating_point<A>::value) {
      switch (kind) {
        case KD_CRK_PROD: return a * b;
        case KD_CRK_MAX:
        case KD_CRK_ABS_MAX: return kd_red_rmax(a, b);
        case KD_CRK_MIN:
        case KD_CRK_ABS_MIN: return kd_red_rmin(a, b);
        case KD_CRK_ALL: return (A)(a != (A)0 && b != (A)0);
        case KD_CRK_ANY: return (A)(a != (A)0 || b != (A)0);
        default: return a + b;
      }
    } else {
      switch (kind) {
        case KD_CRK_PROD: return (int64_t)((uint64_t)a * (uint64_t)b);
        case KD_CRK_MAX: return b > a ? b : a;
        case KD_CRK_MIN: return b < a ? b : a;
        case KD_CRK_ALL: return a & b;
        case KD_CRK_ANY: return a | b;
        default: return (int64_t)((uint64_t)a + (uint64_t)b);
      }
    }
  }

  __device__ __forceinline__ A step(A a, T raw, int64_t, A c) const {
    const auto x = kd_cu_canon(raw); /* float, double, int64 or bool */
    if constexpr (std::is_floating_point<A>::value) {
      const A v = (A)x;
      switch (kind) {
        case KD_CRK_SUM: return a + v;
        case KD_CRK_NANSUM: return v != v ? a : a + v;
        case KD_CRK_PROD: return a * v;
        case KD_CRK_MAX: return kd_red_rmax(a, v);
        case KD_CRK_MIN: return kd_red_rmin(a, v);
        case KD_CRK_ALL: return (A)(a != (A)0 && v != (A)0);
        case KD_CRK_ANY: return (A)(a != (A)0 || v != (A)0);
        case KD_CRK_COUNT_NZ: return a + (A)(v != (A)0);
        case KD_CRK_NOTNAN: return a + (A)(v == v);
        case KD_CRK_ABS_SUM: return a + kd_cm_fabs(v);
        case KD_CRK_SQ_SUM: return a + v * v;
        case KD_CRK_ABS_MAX: return kd_red_rmax(a, kd_cm_fabs(v));
        case KD_CRK_ABS_MIN: return kd_red_rmin(a, kd_cm_fabs(v));
        case KD_CRK_POW_SUM: return a + kd_cm_pow(kd_cm_fabs(v), p);
        case KD_CRK_CSQ: {
          const A d = v - c;
          return a + d * d;
        }
        case KD_CRK_CEXP: return a + kd_cm_exp(v - c);
        default: return a;
      }
    } else {
      const bool nz = x != 0;
      switch (kind) {
        case KD_CRK_ALL: return a & (int64_t)nz;
        case KD_CRK_ANY: return a | (int64_t)nz;
        case KD_CRK_COUNT_NZ: return a + (int64_t)nz;
        case KD_CRK_PROD: return (int64_t)((uint64_t)a * (uint64_t)(int64_t)x);
        case KD_CRK_MAX: return (int64_t)x > a ? (int64_t)x : a;
        case KD_CRK_MIN: return (int64_t)x < a ? (int64_t)x : a;
        default: return (int64_t)((uint64_t)a + (uint64_t)(int64_t)x); /* sum, nansum */
      }
    }
  }
};

/* ---- index reductions: (value, index) pairs; index -1 is the empty accumulator ---- */
template <typename V>
struct kd_red_argacc {
  V v;
  int64_t i;
};

template <typename T>
struct kd_red_aop {
  typedef typename kd_cu_ct<T>::type V;
  typedef kd_red_argacc<V> A;
  int is_max;

  __device__ __forceinline__ A ident() const { return A{(V)0, -1}; }
  /* order-independent: NaN first (lowest index among NaNs), then the extreme value, ties to
   * the lowest index, so any combining tree gives the sequential answer */
  __device__ __forceinline__ A comb(A a, A b) const {
    if (a.i < 0) return b;
    if (b.i < 0) return a;
    const bool an = a.v != a.v, bn = b.v != b.v;
    if (an || bn) {
      if (an && bn) return a.i <= b.i ? a : b;
      return an ? a : b;
    }
    if (b.v == a.v) return a.i <= b.i ? a : b;
    return (is_max ? b.v > a.v : b.v < a.v) ? b : a;
  }
  __device__ __forceinline__ A step(A a, T raw, int64_t r, A) const { return comb(a, A{kd_cu_ld(raw), r}); }
};

/* ---- the accumulate kernels (Op: ident, step, comb); center: one value per output or NULL ---- */
template <typename T, typename A, typename Op>
__global__ void kd_red_thread_k(const T *in, const kd_cu_red_geom g, const Op op, const A *center, A *acc,
                                int64_t onumel, int64_t count) {
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t o = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; o < onumel; o += step) {
    const T *base = in + kd_red_keep_off(g, o);
    const A c = center ? center[o] : A();
    A a = op.ident();
    for (int64_t r = 0; r < count; r++) a = op.step(a, base[kd_red_red_off(g, r)], r, c);
    acc[o] = a;
  }
}

template <typename T, typename A, typename Op>
__global__ void kd_red_warp_k(const T *in, const kd_cu_red_geom g, const Op op, const A *center, A *acc,
                              int64_t onumel, int64_t count) {
  const int lane = threadIdx.x & 31;
  const int64_t nw = ((int64_t)gridDim.x * blockDim.x) >> 5;
  for (int64_t o = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5; o < onumel; o += nw) {
    const T *base = in + kd_red_keep_off(g, o);
    const A c = center ? center[o] : A();
    A a = op.ident();
    for (int64_t r = lane; r < count; r += 32) a = op.step(a, base[kd_red_red_off(g, r)], r, c);
    a = kd_cu_warp_reduce(a, op);
    if (lane == 0) acc[o] = a;
  }
}

/* Block b handles output b / G, reduced range [(b % G) * chunk, +chunk); writes dst[b]. */
template <typename T, typename A, typename Op>
__global__ void kd_red_block_k(const T *in, const kd_cu_red_geom g, const Op op, const A *center, A *dst,
                               int64_t onumel, int64_t count, int64_t G, int64_t chunk) {
  for (int64_t b = blockIdx.x; b < onumel * G; b += gridDim.x) {
    const int64_t o = b / G, r0 = (b % G) * chunk;
    const int64_t r1 = r0 + chunk < count ? r0 + chunk : count;
    const T *base = in + kd_red_keep_off(g, o);
    const A c = center ? center[o] : A();
    A a = op.ident();
    for (int64_t r = r0 + threadIdx.x; r < r1; r += blockDim.x) a = op.step(a, base[kd_red_red_off(g, r)], r, c);
    a = kd_cu_block_reduce(a, op);
    if (threadIdx.x == 0) dst[b] = a;
  }
}

/* acc[o] = combination of part[o * G .. o * G + G), one warp per output. */
template <typename A, typename Op>
__global__ void kd_red_combine_k(const A *part, const Op op, A *acc, int64_t onumel, int64_t G) {
  const int lane = threadIdx.x & 31;
  const int64_t nw = ((int64_t)gridDim.x * blockDim.x) >> 5;
  for (int64_t o = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5; o < onumel; o += nw) {
    A a = op.ident();
    for (int64_t j = lane; j < G; j += 32) a = op.comb(a, part[o * G + j]);
    a = kd_cu_warp_reduce(a, op);
    if (lane == 0) acc[o] = a;
  }
}

static unsigned kd_red_blocks(int device, int64_t n) {
  int sms = kd_cu_sm_count(device);
  int64_t cap = (int64_t)(sms > 0 ? sms : 128) * 32;
  if (n > cap) n = cap;
  return (unsigned)(n < 1 ? 1 : n);
}

/* One accumulate pass: acc[o] for every output o. */
template <typename T, typename A, typename Op>
static kd_cuda_status kd_red_pass(int device, const T *in, const kd_cu_red_geom &g, int64_t onumel, int64_t count,
                                  const Op &op, const A *center, A *acc) {
  cudaStream_t s = kd_cu_stream(device);
  const int sms = kd_cu_sm_count(device) > 0 ? kd_cu_sm_count(device) : 128;
  int64_t kmin = INT64_MAX, rmin = INT64_MAX;
  for (int d = 0; d < g.nk; d++) {
    int64_t st = g.kst[d] < 0 ? -g.kst[d] : g.kst[d];
    if (g.ks[d] > 1 && st < kmin) kmin = st;
  }
  for (int d = 0; d < g.nr; d++) {
    int64_t st = g.rst[d] < 0 ? -g.rst[d] : g.rst[d];
    if (g.rs[d] > 1 && st < rmin) rmin = st;
  }
  const int threads = KD_CU_THREADS;
  if (count <= 1 || (kmin < rmin && onumel >= (int64_t)32 * sms)) {
    KD_LAUNCH(kd_cu_grid(device, onumel), threads, 0, s, kd_red_thread_k<T, A, Op>)(in, g, op, center, acc, onumel, count);
    KD_CU_CHECK_LAUNCH("a reduction kernel");
    return KD_CUDA_OK;
  }
  if (count <= 2048) {
    KD_LAUNCH(kd_red_blocks(device, (onumel * 32 + threads - 1) / threads), threads, 0, s, kd_red_warp_k<T, A, Op>)(
        in, g, op, center, acc, onumel, count);
    KD_CU_CHECK_LAUNCH("a reduction kernel");
    return KD_CUDA_OK;
  }
  int64_t G = 1;
  if (onumel < (int64_t)2 * sms) {
    G = ((int64_t)4 * sms + onumel - 1) / onumel;
    int64_t most = (count + 2047) / 2048;
    if (G > most) G = most;
    if (G > 1024) G = 1024;
    if (G < 1) G = 1;
  }
  const int64_t chunk = (count + G - 1) / G;
  if (G == 1) {
    KD_LAUNCH(kd_red_blocks(device, onumel), threads, 0, s, kd_red_block_k<T, A, Op>)(in, g, op, center, acc, onumel, count,
                                                                               1, chunk);
    KD_CU_CHECK_LAUNCH("a reduction kernel");
    return KD_CUDA_OK;
  }
  kd_cu_scratch part(device);
  KD_CU_TRY(part.alloc((size_t)(onumel * G) * sizeof(A)));
  KD_LAUNCH(kd_red_blocks(device, onumel * G), threads, 0, s, kd_red_block_k<T, A, Op>)(in, g, op, center, (A *)part.p,
                                                                                 onumel, count, G, chunk);
  KD_CU_CHECK_LAUNCH("a reduction kernel");
  KD_LAUNCH(kd_red_blocks(device, (onumel * 32 + threads - 1) / threads), threads, 0, s, kd_red_combine_k<A, Op>)(
      (const A *)part.p, op, acc, onumel, G);
  KD_CU_CHECK_LAUNCH("a reduction kernel");
  return KD_CUDA_OK;
}

/* ---- post passes: accumulators -> outputs ---- */
enum {
  KD_RPOST_COPY, KD_RPOST_MEAN, KD_RPOST_NANMEAN, KD_RPOST_VAR_CENTER, KD_RPOST_VAR, KD_RPOST_STD, KD_RPOST_LSE_CENTER,
  KD_RPOST_LSE, KD_RPOST_NORM, KD_RPOST_NORM_SQRT, KD_RPOST_NORM_POW,
};

template <typename O, typename A>
__global__ void kd_red_post_k(int mode, const A *a1, const A *a2, A *center, O *out, O *out2, int64_t n, double count,
                              double div, double p) {
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t o = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; o < n; o += step) {
    if constexpr (std::is_floating_point<A>::value) {
      A v = a1[o];
      switch (mode) {
        case KD_RPOST_MEAN: v = v / (A)count; break;
        case KD_RPOST_NANMEAN: v = v / a2[o]; break;
        case KD_RPOST_VAR_CENTER: center[o] = v / (A)count; continue;
        case KD_RPOST_VAR:
        case KD_RPOST_STD:
          if (out2) out2[o] = kd_cu_to<O>::from(v / (A)count);
          v = a2[o] / (A)div;
          if (mode == KD_RPOST_STD) v = kd_cm_sqrt(v);
          break;
        case KD_RPOST_LSE_CENTER: center[o] = (v == (A)INFINITY || v == -(A)INFINITY) ? (A)0 : v; continue;
        case KD_RPOST_LSE: v = kd_cm_log(a2[o]) + center[o]; break;
        case KD_RPOST_NORM: v = count == 0 ? (A)0 : v; break;
        case KD_RPOST_NORM_SQRT: v = count == 0 ? (A)0 : kd_cm_sqrt(v); break;
        case KD_RPOST_NORM_POW: v = count == 0 ? (A)0 : kd_cm_pow(v, (A)(1.0 / p)); break;
        default: break;
      }
      out[o] = kd_cu_to<O>::from(v);
    } else {
      out[o] = kd_cu_to<O>::from(a1[o]);
    }
  }
}

template <typename A>
static kd_cuda_status kd_red_post(int device, int mode, int32_t odt, const A *a1, const A *a2, A *center, void *out,
                                  void *out2, int64_t n, double count, double div, double p) {
  cudaStream_t s = kd_cu_stream(device);
  const unsigned grid = kd_cu_grid(device, n);
  switch (odt) {
#define KD_RED_POST_CASE(DT, O)                                                                            \
  case DT:                                                                                                 \
    KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_red_post_k<O, A>)(mode, a1, a2, center, (O *)out, (O *)out2, n, count, div, p); \
    break;
    KD_CU_FOR_EACH_DTYPE(KD_RED_POST_CASE)
#undef KD_RED_POST_CASE
    default: return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "reduce: invalid output dtype %d", (int)odt);
  }
  KD_CU_CHECK_LAUNCH("a reduction epilogue");
  return KD_CUDA_OK;
}

template <typename T>
__global__ void kd_red_arg_post_k(const kd_red_argacc<typename kd_cu_ct<T>::type> *acc, T *values, int64_t *indices,
                                  int64_t n) {
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t o = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; o < n; o += step) {
    if (values) values[o] = kd_cu_to<T>::from(acc[o].v);
    indices[o] = acc[o].i < 0 ? 0 : acc[o].i;
  }
}

/* ---- per input dtype ---- */

/* A value reduction with accumulator A: passes, then the post pass. */
template <typename T, typename A>
static kd_cuda_status kd_red_values(int device, const kd_cuda_reduce *r, const kd_cu_red_geom &g, int kind, int post) {
  const int64_t n = r->onumel;
  kd_cu_scratch buf(device);
  KD_CU_TRY(buf.alloc((size_t)n * 3 * sizeof(A)));
  A *a1 = (A *)buf.p, *a2 = a1 + n, *center = a2 + n;
  const T *in = (const T *)r->in;
  kd_red_vop<T, A> op{kind, (A)r->p};
  const double cnt = (double)r->count;
  const double div = cnt - r->correction > 0 ? cnt - r->correction : 0;
  KD_CU_TRY(kd_red_pass(device, in, g, n, r->count, op, (const A *)nullptr, a1));
  if constexpr (std::is_floating_point<A>::value) {
    if (post == KD_RPOST_NANMEAN) {
      kd_red_vop<T, A> op2{KD_CRK_NOTNAN, (A)0};
      KD_CU_TRY(kd_red_pass(device, in, g, n, r->count, op2, (const A *)nullptr, a2));
    } else if (post == KD_RPOST_VAR || post == KD_RPOST_STD || post == KD_RPOST_LSE) {
      const bool lse = post == KD_RPOST_LSE;
      KD_CU_TRY(kd_red_post(device, lse ? KD_RPOST_LSE_CENTER : KD_RPOST_VAR_CENTER, r->out_dtype, a1, a2, center,
                               r->out, nullptr, n, cnt, div, r->p));
      kd_red_vop<T, A> op2{lse ? KD_CRK_CEXP : KD_CRK_CSQ, (A)0};
      KD_CU_TRY(kd_red_pass(device, in, g, n, r->count, op2, (const A *)center, a2));
    }
  }
  return kd_red_post<A>(device, post, r->out_dtype, a1, a2, center, r->out, r->out2, n, cnt, div, r->p);
}

template <typename T>
static kd_cuda_status kd_red_typed(int device, const kd_cuda_reduce *r, const kd_cu_red_geom &g) {
  typedef typename kd_cu_ct<T>::type CT;
  const int64_t n = r->onumel;
  if (r->arg) {
    typedef typename kd_red_aop<T>::A A;
    kd_cu_scratch buf(device);
    KD_CU_TRY(buf.alloc((size_t)n * sizeof(A)));
    const int is_max = r->code == KD_REDUCE_MAX || r->code == KD_REDUCE_ARGMAX;
    kd_red_aop<T> op{is_max};
    KD_CU_TRY(kd_red_pass(device, (const T *)r->in, g, n, r->count, op, (const A *)nullptr, (A *)buf.p));
    KD_LAUNCH(kd_cu_grid(device, n), KD_CU_THREADS, 0, kd_cu_stream(device), kd_red_arg_post_k<T>)(
        (const A *)buf.p, (T *)r->out, (int64_t *)r->out2, n);
    KD_CU_CHECK_LAUNCH("an index reduction epilogue");
    return KD_CUDA_OK;
  }
  constexpr bool fl = std::is_floating_point<CT>::value;
  int kind = KD_CRK_SUM, post = KD_RPOST_COPY;
  bool iacc = !fl;
  switch (r->code) {
    case KD_REDUCE_SUM: kind = KD_CRK_SUM; break;
    case KD_REDUCE_NANSUM: kind = KD_CRK_NANSUM; break;
    case KD_REDUCE_PROD: kind = KD_CRK_PROD; break;
    case KD_REDUCE_MAX:
    case KD_REDUCE_AMAX: kind = KD_CRK_MAX; break;
    case KD_REDUCE_MIN:
    case KD_REDUCE_AMIN: kind = KD_CRK_MIN; break;
    case KD_REDUCE_ALL: kind = KD_CRK_ALL; iacc = true; break;
    case KD_REDUCE_ANY: kind = KD_CRK_ANY; iacc = true; break;
    case KD_REDUCE_COUNT_NONZERO: kind = KD_CRK_COUNT_NZ; iacc = true; break;
    case KD_REDUCE_MEAN: kind = KD_CRK_SUM; post = KD_RPOST_MEAN; break;
    case KD_REDUCE_NANMEAN: kind = KD_CRK_NANSUM; post = KD_RPOST_NANMEAN; break;
    case KD_REDUCE_VAR:
    case KD_REDUCE_VAR_MEAN: kind = KD_CRK_SUM; post = KD_RPOST_VAR; break;
    case KD_REDUCE_STD:
    case KD_REDUCE_STD_MEAN: kind = KD_CRK_SUM; post = KD_RPOST_STD; break;
    case KD_REDUCE_LOGSUMEXP: kind = KD_CRK_MAX; post = KD_RPOST_LSE; break;
    case KD_REDUCE_NORM: {
      const double p = r->p;
      if (p == 0) kind = KD_CRK_COUNT_NZ, post = KD_RPOST_NORM;
      else if (p == 1) kind = KD_CRK_ABS_SUM, post = KD_RPOST_NORM;
      else if (p == 2) kind = KD_CRK_SQ_SUM, post = KD_RPOST_NORM_SQRT;
      else if (isinf(p)) kind = p > 0 ? KD_CRK_ABS_MAX : KD_CRK_ABS_MIN, post = KD_RPOST_NORM;
      else kind = KD_CRK_POW_SUM, post = KD_RPOST_NORM_POW;
      break;
    }
    default: return kd_cu_error(KD_CUDA_ERR_NOT_SUPPORTED, "reduce: op code %d is not implemented on CUDA", (int)r->code);
  }
  if (post != KD_RPOST_COPY && !fl)
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "reduce: op code %d needs a floating input", (int)r->code);
  if (iacc) return kd_red_values<T, int64_t>(device, r, g, kind, post);
  /* float32 accumulates in double, as the CPU (free: a reduction is bound by memory); so does
   * a float16/bfloat16 input reduced into a float64 output (sum/mean with dtype=float64: PyTorch
   * casts the input to float64 first, and the CPU accumulates in double) */
  typedef typename std::conditional<std::is_same<T, float>::value, double, CT>::type FA;
  if constexpr (fl) {
    if (r->out_dtype == KD_DTYPE_F64) return kd_red_values<T, double>(device, r, g, kind, post);
    return kd_red_values<T, FA>(device, r, g, kind, post);
  }
  return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "reduce: no accumulator");
}

kd_cuda_status kd_cu_reduce(int device, const kd_cuda_reduce *r) {
  if (!r) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "reduce: null argument");
  if (r->nkeep < 0 || r->nkeep > KD_CUDA_MAX_DIMS || r->nred < 0 || r->nred > KD_CUDA_MAX_DIMS ||
      (r->arg && r->nred != 1))
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "reduce: %d kept and %d reduced dims", (int)r->nkeep, (int)r->nred);
  if (kd_cu_dtype_size(r->in_dtype) == 0 || kd_cu_dtype_size(r->out_dtype) == 0)
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "reduce: invalid dtype");
  if (r->onumel < 0 || r->count < 0) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "reduce: negative extent");
  if (r->onumel == 0) return KD_CUDA_OK;
  /* an empty input (count 0, no storage: in may be NULL) still writes every output: the
   * identity through the post pass (sum 0, prod 1, mean and var NaN, logsumexp -inf) */
  if ((r->count > 0 && !r->in) || (r->arg ? !r->out2 : !r->out))
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "reduce: null argument");
  kd_cu_device_guard guard;
  KD_CU_TRY(guard.enter(device));
  kd_cu_red_geom g;
  memset(&g, 0, sizeof g);
  g.nk = r->nkeep;
  for (int d = 0; d < r->nkeep; d++) {
    g.ks[d] = r->keep_sizes[d];
    g.kst[d] = r->keep_strides[d];
  }
  /* reduced dims: size-1 dims dropped; value reductions sort by decreasing |stride| */
  int order[KD_CUDA_MAX_DIMS], nr = 0;
  for (int d = 0; d < r->nred; d++)
    if (r->red_sizes[d] != 1 || r->arg) order[nr++] = d;
  if (!r->arg) {
    for (int i = 1; i < nr; i++) /* insertion sort, stable */
      for (int j = i; j > 0; j--) {
        int64_t a = r->red_strides[order[j - 1]], b = r->red_strides[order[j]];
        if ((a < 0 ? -a : a) >= (b < 0 ? -b : b)) break;
        int t = order[j - 1];
        order[j - 1] = order[j];
        order[j] = t;
      }
  }
  g.nr = nr;
  for (int i = 0; i < nr; i++) {
    g.rs[i] = r->red_sizes[order[i]];
    g.rst[i] = r->red_strides[order[i]];
  }
  if (nr == 0) { /* count 1: one step per output */
    g.nr = 1;
    g.rs[0] = 1;
    g.rst[0] = 0;
  }
  switch (r->in_dtype) {
#define KD_RED_CASE(DT, T) \
  case DT: return kd_red_typed<T>(device, r, g);
    KD_CU_FOR_EACH_DTYPE(KD_RED_CASE)
#undef KD_RED_CASE
    default: return kd_cu_not_supported("reduce", r->in_dtype);
  }
}
