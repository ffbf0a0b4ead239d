/* ops_random_dist.cu - CUDA kernels of the random distributions (KD_CUDA_OP_RANDOM_DIST: the
 * in-place fillers, bernoulli, poisson, randperm's keys) and of multinomial's row passes
 * (KD_CUDA_OP_MULTINOMIAL). Element i computes exactly what src/cpu/random_dist.c and
 * multinomial.c compute, with the per-element functions of src/core/random.h (Note [Random
 * distributions]), so a seed gives the CPU's numbers. One thread per element (grid-stride), each
 * recomputing its Philox block; multinomial's running sums are one thread per row, in order, as
 * the CPU sums them (a parallel scan would round differently). Parameter checks report through
 * one device flag read back synchronously, as the nllLoss target check does. */
#include "core/random.h"
#include "ops_shape.cuh"
#include "philox_state.cuh"
#include "scratch.cuh"

template <typename T>
__global__ void kd_cu_dist_k(T *y, int64_t n, kd_random_dist_args r, const kd_cu_philox ph, const double *param, int *bad) {
  ph.unpack(r.seed, r.offset);
  KD_CU_FOR(e, n) {
    const uint64_t i = (uint64_t)e;
    if (r.code == KD_RANDOM_DIST_POISSON) {
      const double rate = param[e];
      if (!(rate >= 0)) {
        *bad = 1;
        continue;
      }
      y[e] = kd_cu_to<T>::from(kd_random_poisson(r.seed, r.offset, i, rate));
      continue;
    }
    double p = r.a;
    if (param) {
      p = param[e];
      if (!(p >= 0 && p <= 1)) {
        *bad = 1;
        continue;
      }
    }
    uint32_t w[4];
    kd_philox_block(r.seed, r.offset, kd_random_dist_block(&r, i), w);
    if (r.code == KD_RANDOM_DIST_INT) {
      const int64_t x = kd_random_dist_int(&r, w, i);
      if constexpr (std::is_floating_point<T>::value || std::is_same<T, __half>::value ||
                    std::is_same<T, __nv_bfloat16>::value)
        y[e] = kd_cu_to<T>::from((double)x); /* through double, as the CPU rounds */
      else
        y[e] = kd_cu_to<T>::from(x);
    } else {
      y[e] = kd_cu_to<T>::from(kd_random_dist_value(&r, w, i, p));
    }
  }
}

static kd_cuda_status kd_cu_random_dist(int device, kd_cuda_op *o) {
  if (o->numel <= 0) return KD_CUDA_OK;
  if (!o->data[0] || o->code < KD_RANDOM_DIST_UNIFORM || o->code > KD_RANDOM_DIST_POISSON)
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "random distribution: bad arguments");
  kd_random_dist_args r;
  memset(&r, 0, sizeof r);
  r.code = o->code;
  r.seed = (uint64_t)o->i[0];
  r.offset = (uint64_t)o->i[1];
  r.low = o->i[3];
  r.range = (uint64_t)o->i[4];
  r.ubits = (int)o->i[5];
  r.a = o->d[0];
  r.b = o->d[1];
  const double *param = kd_cu_addr<const double>(o->i[2]);
  if (r.code == KD_RANDOM_DIST_POISSON && !param)
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "random distribution: poisson without rates");
  cudaStream_t s = kd_cu_stream(device);
  kd_cu_scratch flag(device);
  if (param) {
    KD_CU_TRY(flag.alloc(sizeof(int)));
    KD_CU_CHECK(cudaMemsetAsync(flag.p, 0, sizeof(int), s));
  }
  const unsigned grid = kd_cu_grid(device, o->numel);
  const kd_cu_philox ph = kd_cu_graph_philox(device, s, r.seed, r.offset);
  switch (o->dtype) {
#define KD_DIST_CASE(DT, T)                                                                                    \
  case DT:                                                                                                     \
    KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_cu_dist_k<T>)((T *)o->data[0], o->numel, r, ph, param, (int *)flag.p); \
    break;
    KD_CU_FOR_EACH_DTYPE(KD_DIST_CASE)
#undef KD_DIST_CASE
    default: return kd_cu_not_supported("random distribution", o->dtype);
  }
  KD_CU_CHECK_LAUNCH("a random distribution kernel");
  if (param) {
    int got = 0;
    KD_CU_CHECK(cudaMemcpyAsync(&got, flag.p, sizeof got, cudaMemcpyDeviceToHost, s)); /* to pageable: blocking */
    o->result[0] = got;
  }
  return KD_CUDA_OK;
}

/* ---- multinomial's row passes ---- */
/* flags[0]: the lowest element index holding a negative/NaN probability, flags[1]: the lowest
 * holding +inf (both ~0 when none), flags[2]: 1 when a row sums to 0. */
__global__ void kd_cu_mn_check_k(const double *p, int64_t n, unsigned long long *flags) {
  KD_CU_FOR(e, n) {
    const double v = p[e];
    if (!(v >= 0)) atomicMin(&flags[0], (unsigned long long)e);
    else if (!isfinite(v)) atomicMin(&flags[1], (unsigned long long)e);
  }
}
__global__ void kd_cu_mn_rowsum_k(const double *p, int64_t rows, int64_t C, unsigned long long *flags) {
  KD_CU_FOR(r, rows) {
    double sum = 0;
    for (int64_t c = 0; c < C; c++) sum += p[r * C + c];
    if (!(sum > 0)) flags[2] = 1;
  }
}
__global__ void kd_cu_mn_keys_k(double *p, int64_t n, const kd_cu_philox ph) {
  uint64_t seed, offset;
  ph.unpack(seed, offset);
  KD_CU_FOR(e, n) p[e] = kd_random_multinomial_key(seed, offset, (uint64_t)e, p[e]);
}
__global__ void kd_cu_mn_cdf_k(double *p, int64_t rows, int64_t C) {
  KD_CU_FOR(r, rows) {
    double sum = 0;
    for (int64_t c = 0; c < C; c++) p[r * C + c] = sum += p[r * C + c];
  }
}
__global__ void kd_cu_mn_sample_k(int64_t *out, const double *cdf, int64_t rows, int64_t C, int64_t S,
                                  const kd_cu_philox ph) {
  uint64_t seed, offset;
  ph.unpack(seed, offset);
  KD_CU_FOR(e, rows * S) {
    const int64_t r = e / S;
    out[e] = kd_random_multinomial_pick(cdf + r * C, C, kd_random_uniform_f64(seed, offset, (uint64_t)e));
  }
}

static kd_cuda_status kd_cu_multinomial(int device, kd_cuda_op *o) {
  const int64_t rows = o->i[0], C = o->i[1], S = o->i[5];
  const uint64_t seed = (uint64_t)o->i[2], offset = (uint64_t)o->i[3];
  if (rows <= 0 || C <= 0) return KD_CUDA_OK;
  if (!o->data[0]) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "multinomial: bad arguments");
  cudaStream_t s = kd_cu_stream(device);
  double *p = (double *)o->data[0];
  switch (o->code) {
    case 0: {
      kd_cu_scratch w(device);
      KD_CU_TRY(w.alloc(3 * sizeof(unsigned long long)));
      KD_CU_CHECK(cudaMemsetAsync(w.p, 0xff, 2 * sizeof(unsigned long long), s));
      KD_CU_CHECK(cudaMemsetAsync(w.as<unsigned long long>() + 2, 0, sizeof(unsigned long long), s));
      KD_LAUNCH(kd_cu_grid(device, rows * C), KD_CU_THREADS, 0, s, kd_cu_mn_check_k)(p, rows * C, w.as<unsigned long long>());
      KD_LAUNCH(kd_cu_grid(device, rows), KD_CU_THREADS, 0, s, kd_cu_mn_rowsum_k)(p, rows, C, w.as<unsigned long long>());
      KD_CU_CHECK_LAUNCH("the multinomial check");
      unsigned long long got[3] = {0, 0, 0};
      KD_CU_CHECK(cudaMemcpyAsync(got, w.p, sizeof got, cudaMemcpyDeviceToHost, s)); /* to pageable: blocking */
      if (got[0] != ~0ull || got[1] != ~0ull) o->result[0] = got[0] <= got[1] ? 1 : 2;
      o->result[1] = got[2] != 0;
      return KD_CUDA_OK;
    }
    case 1: KD_LAUNCH(kd_cu_grid(device, rows * C), KD_CU_THREADS, 0, s, kd_cu_mn_keys_k)(p, rows * C, kd_cu_graph_philox(device, s, seed, offset)); break;
    case 2: KD_LAUNCH(kd_cu_grid(device, rows), KD_CU_THREADS, 0, s, kd_cu_mn_cdf_k)(p, rows, C); break;
    case 3: {
      const double *cdf = kd_cu_addr<const double>(o->i[4]);
      if (!cdf || S <= 0) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "multinomial: bad sample arguments");
      KD_LAUNCH(kd_cu_grid(device, rows * S), KD_CU_THREADS, 0, s, kd_cu_mn_sample_k)((int64_t *)o->data[0], cdf, rows, C, S,
                                                                                     kd_cu_graph_philox(device, s, seed, offset));
      break;
    }
    default: return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "multinomial: unknown pass %d", (int)o->code);
  }
  KD_CU_CHECK_LAUNCH("a multinomial kernel");
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_random_op(int device, kd_cuda_op *o) {
  return o->kind == KD_CUDA_OP_RANDOM_DIST ? kd_cu_random_dist(device, o) : kd_cu_multinomial(device, o);
}
