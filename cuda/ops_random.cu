/* ops_random.cu - CUDA random numbers: rand, randn, randint and nativeDropout's masks, the
 * same numbers as the CPU for the same (seed, offset): element i of the contiguous output is
 * computed by the per-element functions of src/core/random.h (Note [Random number mapping]),
 * which this file includes as CUDA code, so the mapping exists once. One thread per element
 * (grid-stride); a thread recomputes its element's Philox block (10 cheap rounds), which
 * keeps the code obviously equal to the CPU's. The generator offset was taken on the host by
 * the CPU kernel (kd_random_next_offset), exactly as for a CPU tensor; in a graph capture the
 * kernel reads it from the graph (Note [Random ops in CUDA graphs] in philox_state.cuh). */
#include "core/random.h"
#include "ops_reduce.cuh"
#include "philox_state.cuh"

template <typename T>
__global__ void kd_rand_k(const kd_cuda_random r, const kd_cu_philox ph) {
  uint64_t seed, offset;
  ph.unpack(seed, offset);
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  T *y = (T *)r.y;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < r.n; i += step) {
    const uint64_t u = (uint64_t)i;
    if (r.kind == KD_CUDA_RANDOM_INT) {
      y[i] = kd_cu_to<T>::from(kd_random_int(seed, offset, u, r.low, r.range));
      continue;
    }
    if constexpr (std::is_same<T, double>::value) {
      y[i] = r.kind == KD_CUDA_RANDOM_UNIFORM ? kd_random_uniform_f64(seed, offset, u)
                                               : kd_random_normal_f64(seed, offset, u);
    } else if constexpr (std::is_same<T, float>::value || std::is_same<T, __half>::value ||
                         std::is_same<T, __nv_bfloat16>::value) {
      float v;
      if (r.kind == KD_CUDA_RANDOM_UNIFORM) {
        uint32_t w[4];
        kd_philox_block(seed, offset, u >> 2, w);
        const uint32_t word = w[u & 3];
        if constexpr (std::is_same<T, __half>::value) v = kd_random_u32_to_f16val(word);
        else if constexpr (std::is_same<T, __nv_bfloat16>::value) v = kd_random_u32_to_bf16val(word);
        else v = kd_random_u32_to_f32(word);
      } else {
        v = (float)kd_random_normal_f32(seed, offset, u);
      }
      y[i] = kd_cu_to<T>::from(v);
    }
  }
}

template <typename T>
__global__ void kd_dropout_k(const kd_cuda_random r, const kd_cu_philox ph) {
  uint64_t seed, offset;
  ph.unpack(seed, offset);
  typedef typename kd_cu_ct<T>::type CT;
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  const T *x = (const T *)r.x;
  T *y = (T *)r.y;
  uint8_t *mask = (uint8_t *)r.mask;
  const CT scale = (CT)r.scale;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < r.n; i += step) {
    const bool keep = kd_random_uniform_f32(seed, offset, (uint64_t)i) < r.keep_below;
    mask[i] = keep;
    y[i] = kd_cu_st<T>(keep ? kd_cu_ld(x[i]) * scale : (CT)0);
  }
}

kd_cuda_status kd_cu_random(int device, const kd_cuda_random *r) {
  if (!r || (!r->y && r->n > 0)) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "random: null argument");
  if (r->n <= 0) return KD_CUDA_OK;
  const bool fl = r->dtype == KD_DTYPE_F32 || r->dtype == KD_DTYPE_F64 || r->dtype == KD_DTYPE_F16 ||
                  r->dtype == KD_DTYPE_BF16;
  if (r->kind == KD_CUDA_RANDOM_DROPOUT && (!r->x || !r->mask || !fl))
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "random: dropout needs a floating input and a mask");
  if ((r->kind == KD_CUDA_RANDOM_UNIFORM || r->kind == KD_CUDA_RANDOM_NORMAL) && !fl)
    return kd_cu_not_supported("rand/randn", r->dtype);
  if (r->kind == KD_CUDA_RANDOM_INT && r->range == 0)
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "random: empty range");
  if (r->kind < KD_CUDA_RANDOM_UNIFORM || r->kind > KD_CUDA_RANDOM_DROPOUT)
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "random: unknown kind %d", (int)r->kind);
  kd_cu_device_guard guard;
  KD_CU_TRY(guard.enter(device));
  cudaStream_t s = kd_cu_stream(device);
  const unsigned grid = kd_cu_grid(device, r->n);
  const kd_cu_philox ph = kd_cu_graph_philox(device, s, r->seed, r->offset);
  switch (r->dtype) {
#define KD_RAND_CASE(DT, T)                                                          \
  case DT:                                                                           \
    if (r->kind == KD_CUDA_RANDOM_DROPOUT) KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_dropout_k<T>)(*r, ph); \
    else KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_rand_k<T>)(*r, ph);                            \
    break;
    KD_CU_FOR_EACH_DTYPE(KD_RAND_CASE)
#undef KD_RAND_CASE
    default: return kd_cu_not_supported("random", r->dtype);
  }
  KD_CU_CHECK_LAUNCH("a random kernel");
  return KD_CUDA_OK;
}
