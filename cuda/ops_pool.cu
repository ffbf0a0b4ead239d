/* ops_pool.cu - CUDA 2-D pooling (KD_CUDA_OP_POOL): maxPool2d (values and argmax positions),
 * avgPool2d, adaptiveAvgPool2d and their backward ops, on contiguous (planes, H, W) buffers of
 * float32/float64 prepared by src/cpu/pool.c (which does every check and casts float16/bfloat16
 * to float32 and back, as on the CPU). The window arithmetic is pool_loops.inc's (PyTorch's), so
 * ties, NaN and padding behave as on the CPU.
 *   forward: one thread per output element, looping over its window;
 *   backward: the gradient is zeroed, then one thread per output element adds its share to
 *   every input position of its window (max: to its argmax position) with atomicAdd, the
 *   adjoint of the forward loop. Overlapping windows thus sum in an unspecified order (float
 *   rounding may differ from the CPU in the last bits, as PyTorch's CUDA pooling backward).
 * Not the strided iterator: windows overlap, so the output is not an elementwise map of the input.
 * UNVERIFIED: written and compiled without a GPU (test/cuda_parity.test.js checks it). */
#include "ops_sort.cuh"

struct kd_cu_pool_geom {
  int64_t planes, h, w, oh, ow;
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  int64_t divisor;
  int count_include_pad;
};

template <typename T>
__global__ void kd_cu_pool_max(const kd_cu_pool_geom g, const T *x, T *y, int64_t *ind) {
  const int64_t total = g.planes * g.oh * g.ow, step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += step) {
    const int64_t ox = t % g.ow, oy = (t / g.ow) % g.oh, p = t / (g.ow * g.oh);
    const T *xp = x + p * g.h * g.w;
    int64_t ih0 = oy * g.sh - g.ph, ih1 = ih0 + (g.kh - 1) * g.dh + 1;
    if (ih1 > g.h) ih1 = g.h;
    while (ih0 < 0) ih0 += g.dh;
    int64_t iw0 = ox * g.sw - g.pw, iw1 = iw0 + (g.kw - 1) * g.dw + 1;
    if (iw1 > g.w) iw1 = g.w;
    while (iw0 < 0) iw0 += g.dw;
    int64_t mi = ih0 * g.w + iw0;
    T mv = (T)-INFINITY;
    for (int64_t ih = ih0; ih < ih1; ih += g.dh)
      for (int64_t iw = iw0; iw < iw1; iw += g.dw) {
        const T v = xp[ih * g.w + iw];
        if (v > mv || v != v) {
          mv = v;
          mi = ih * g.w + iw;
        }
      }
    y[t] = mv;
    if (ind) ind[t] = mi;
  }
}

template <typename T>
__global__ void kd_cu_pool_max_bwd(const kd_cu_pool_geom g, const T *gy, const int64_t *ind, T *gx) {
  const int64_t L = g.oh * g.ow, HW = g.h * g.w, total = g.planes * L, step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += step) {
    const int64_t i = ind[t];
    if (i >= 0 && i < HW) atomicAdd(gx + (t / L) * HW + i, gy[t]);
  }
}

/* The avgPool2d window of output (oy, ox) clipped to the input, and its divisor (as pool_loops.inc). */
__device__ __forceinline__ bool kd_cu_pool_avg_window(const kd_cu_pool_geom &g, int64_t oy, int64_t ox, int64_t *r,
                                                      int64_t *div) {
  int64_t ih0 = oy * g.sh - g.ph, iw0 = ox * g.sw - g.pw;
  int64_t ih1 = ih0 + g.kh, iw1 = iw0 + g.kw;
  if (ih1 > g.h + g.ph) ih1 = g.h + g.ph;
  if (iw1 > g.w + g.pw) iw1 = g.w + g.pw;
  const int64_t pool = (ih1 - ih0) * (iw1 - iw0);
  if (ih0 < 0) ih0 = 0;
  if (iw0 < 0) iw0 = 0;
  if (ih1 > g.h) ih1 = g.h;
  if (iw1 > g.w) iw1 = g.w;
  r[0] = ih0;
  r[1] = ih1;
  r[2] = iw0;
  r[3] = iw1;
  if (ih0 >= ih1 || iw0 >= iw1) return false;
  *div = g.divisor ? g.divisor : g.count_include_pad ? pool : (ih1 - ih0) * (iw1 - iw0);
  return true;
}

/* The adaptive window of output (oy, ox): [r0, r1) x [r2, r3). */
__device__ __forceinline__ void kd_cu_pool_adaptive_window(const kd_cu_pool_geom &g, int64_t oy, int64_t ox, int64_t *r) {
  r[0] = oy * g.h / g.oh;
  r[1] = ((oy + 1) * g.h + g.oh - 1) / g.oh;
  r[2] = ox * g.w / g.ow;
  r[3] = ((ox + 1) * g.w + g.ow - 1) / g.ow;
}

/* avgPool2d (ADAPTIVE false) or adaptiveAvgPool2d forward. */
template <typename T, bool ADAPTIVE>
__global__ void kd_cu_pool_avg(const kd_cu_pool_geom g, const T *x, T *y) {
  const int64_t total = g.planes * g.oh * g.ow, step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += step) {
    const int64_t ox = t % g.ow, oy = (t / g.ow) % g.oh, p = t / (g.ow * g.oh);
    const T *xp = x + p * g.h * g.w;
    int64_t r[4], div = 1;
    if (ADAPTIVE) {
      kd_cu_pool_adaptive_window(g, oy, ox, r);
      div = (r[1] - r[0]) * (r[3] - r[2]);
    } else if (!kd_cu_pool_avg_window(g, oy, ox, r, &div)) {
      y[t] = 0;
      continue;
    }
    T s = 0;
    for (int64_t ih = r[0]; ih < r[1]; ih++)
      for (int64_t iw = r[2]; iw < r[3]; iw++) s += xp[ih * g.w + iw];
    y[t] = s / (T)div;
  }
}

template <typename T, bool ADAPTIVE>
__global__ void kd_cu_pool_avg_bwd(const kd_cu_pool_geom g, const T *gy, T *gx) {
  const int64_t total = g.planes * g.oh * g.ow, step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += step) {
    const int64_t ox = t % g.ow, oy = (t / g.ow) % g.oh, p = t / (g.ow * g.oh);
    T *gp = gx + p * g.h * g.w;
    int64_t r[4], div = 1;
    if (ADAPTIVE) {
      kd_cu_pool_adaptive_window(g, oy, ox, r);
      div = (r[1] - r[0]) * (r[3] - r[2]);
    } else if (!kd_cu_pool_avg_window(g, oy, ox, r, &div)) {
      continue;
    }
    const T v = gy[t] / (T)div;
    for (int64_t ih = r[0]; ih < r[1]; ih++)
      for (int64_t iw = r[2]; iw < r[3]; iw++) atomicAdd(gp + ih * g.w + iw, v);
  }
}

template <typename T>
static kd_cuda_status kd_cu_pool_t(int device, const kd_cuda_op *o, const kd_cu_pool_geom &g) {
  cudaStream_t s = kd_cu_stream(device);
  const int64_t nout = g.planes * g.oh * g.ow;
  const unsigned grid = kd_cu_grid(device, nout);
  const T *in = (const T *)o->data[0];
  T *out = (T *)o->data[1];
  int64_t *ind = (int64_t *)o->data[2];
  const bool bwd = o->code == KD_CUDA_POOL_MAX_BACKWARD || o->code == KD_CUDA_POOL_AVG_BACKWARD ||
                   o->code == KD_CUDA_POOL_ADAPTIVE_AVG_BACKWARD;
  if (bwd) KD_CU_CHECK(cudaMemsetAsync(out, 0, sizeof(T) * (size_t)(g.planes * g.h * g.w), s));
  if (nout == 0) return KD_CUDA_OK;
  switch (o->code) {
    case KD_CUDA_POOL_MAX: KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_cu_pool_max<T>)(g, in, out, ind); break;
    case KD_CUDA_POOL_MAX_BACKWARD:
      if (!ind) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "max pooling backward: no indices");
      KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_cu_pool_max_bwd<T>)(g, in, ind, out);
      break;
    case KD_CUDA_POOL_AVG: KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_cu_pool_avg<T, false>)(g, in, out); break;
    case KD_CUDA_POOL_AVG_BACKWARD: KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_cu_pool_avg_bwd<T, false>)(g, in, out); break;
    case KD_CUDA_POOL_ADAPTIVE_AVG: KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_cu_pool_avg<T, true>)(g, in, out); break;
    case KD_CUDA_POOL_ADAPTIVE_AVG_BACKWARD: KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_cu_pool_avg_bwd<T, true>)(g, in, out); break;
    default: return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "pool: bad code %d", (int)o->code);
  }
  KD_CU_CHECK_LAUNCH("a pooling kernel");
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_pool(int device, kd_cuda_op *o) {
  if (o->nops < 3 || !o->data[0] || !o->data[1])
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "pool: %d operands", (int)o->nops);
  kd_cu_pool_geom g;
  g.planes = o->i[0];
  g.h = o->i[1];
  g.w = o->i[2];
  g.oh = o->i[3];
  g.ow = o->i[4];
  g.divisor = o->i[5];
  g.count_include_pad = (int)o->i[6];
  kd_cu_read_window(g, o->d);
  if (g.planes < 0 || g.h < 0 || g.w < 0 || g.oh < 0 || g.ow < 0 || g.sh < 1 || g.sw < 1 || g.dh < 1 || g.dw < 1)
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "pool: bad geometry");
  const bool adaptive = o->code == KD_CUDA_POOL_ADAPTIVE_AVG || o->code == KD_CUDA_POOL_ADAPTIVE_AVG_BACKWARD;
  if (adaptive && (g.oh == 0 || g.ow == 0) && g.planes * g.oh * g.ow != 0)
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "pool: bad geometry");
  switch (o->dtype) {
    case KD_DTYPE_F32: return kd_cu_pool_t<float>(device, o, g);
    case KD_DTYPE_F64: return kd_cu_pool_t<double>(device, o, g);
    default: return kd_cu_not_supported("pooling", o->dtype);
  }
}
