/* ops_pad.cu - CUDA kernels of pad ('reflect', 'replicate', 'circular') / padBackward (src/cpu/pad.c) and
 * interpolate (every mode but 'area': nearest, nearest-exact, linear, bilinear, bicubic, trilinear) /
 * interpolateBackward (src/cpu/interpolate.c).
 * The CPU kernels check, make the tensors contiguous in the compute dtype and allocate; constant
 * padding is a fill plus a window copy there (the CUDA fill_/copy_), so only the index-mapped
 * modes come here. Source positions are computed per element exactly as pad.c's index maps;
 * interpolation uses the taps (indices, weights) interpolate.c computed on the host and
 * copied to the device, so both backends read the same positions and weights.
 * Forward: one thread per output element (a gather). Backward: one thread per output-gradient
 * element, atomicAdd into the zeroed input gradient (float32/float64): sums of overlapping
 * taps land in an unspecified order, as on PyTorch's CUDA.
 * UNVERIFIED: written and compiled without a GPU; test/cuda_parity.test.js checks them on one. */
#include "ops_shape.cuh"

/* ---- pad ---- */
struct kd_cu_pad_p {
  int k, mode; /* 0 reflect, 1 replicate, 2 circular (src/cpu/pad.c) */
  int64_t in[3], out[3], lo[3]; /* padded dims padded to 3 with leading size-1 dims */
  int64_t cut[3], crop[3];      /* circular: the size left after negative pads, and its start */
};

__device__ __forceinline__ int64_t kd_cu_pad_src(int64_t o, int64_t lo, int64_t in, int mode, int64_t cut,
                                                 int64_t crop) {
  int64_t i = o - lo;
  if (mode == 0) {
    if (i < 0) i = -i;
    if (i >= in) i = 2 * (in - 1) - i;
  } else if (mode == 2) { /* negative pads crop first, then what is left wraps */
    i = o - (lo > 0 ? lo : 0);
    i = ((i % cut) + cut) % cut + crop;
  } else {
    if (i < 0) i = 0;
    if (i >= in) i = in - 1;
  }
  return i;
}

/* Source (input) linear index of output linear index e. */
__device__ __forceinline__ int64_t kd_cu_pad_map(const kd_cu_pad_p &p, int64_t e) {
  const int64_t c = e % p.out[2], b = (e / p.out[2]) % p.out[1], a = (e / (p.out[2] * p.out[1])) % p.out[0];
  const int64_t r = e / (p.out[2] * p.out[1] * p.out[0]);
  const int64_t sa = kd_cu_pad_src(a, p.lo[0], p.in[0], p.mode, p.cut[0], p.crop[0]),
                sb = kd_cu_pad_src(b, p.lo[1], p.in[1], p.mode, p.cut[1], p.crop[1]),
                sc = kd_cu_pad_src(c, p.lo[2], p.in[2], p.mode, p.cut[2], p.crop[2]);
  return ((r * p.in[0] + sa) * p.in[1] + sb) * p.in[2] + sc;
}

template <typename U>
__global__ void kd_cu_pad_fwd_kernel(U *dst, const U *src, int64_t n, const kd_cu_pad_p p) {
  KD_CU_FOR(e, n) dst[e] = src[kd_cu_pad_map(p, e)];
}
template <typename T>
__global__ void kd_cu_pad_bwd_kernel(T *gin, const T *gout, int64_t n, const kd_cu_pad_p p) {
  KD_CU_FOR(e, n) atomicAdd(gin + kd_cu_pad_map(p, e), gout[e]);
}

template <typename U>
static kd_cuda_status kd_cu_pad_fwd_t(int device, void *dst, const void *src, int64_t n, const kd_cu_pad_p &p) {
  KD_LAUNCH(kd_cu_grid(device, n), KD_CU_THREADS, 0, kd_cu_stream(device), kd_cu_pad_fwd_kernel<U>)((U *)dst, (const U *)src, n, p);
  KD_CU_CHECK_LAUNCH("the pad kernel");
  return KD_CUDA_OK;
}
template <typename T>
static kd_cuda_status kd_cu_pad_bwd_t(int device, void *dst, const void *src, int64_t n, int64_t in_numel,
                                      const kd_cu_pad_p &p) {
  cudaStream_t s = kd_cu_stream(device);
  KD_CU_CHECK(cudaMemsetAsync(dst, 0, (size_t)in_numel * sizeof(T), s));
  if (n > 0) {
    KD_LAUNCH(kd_cu_grid(device, n), KD_CU_THREADS, 0, s, kd_cu_pad_bwd_kernel<T>)((T *)dst, (const T *)src, n, p);
    KD_CU_CHECK_LAUNCH("the pad backward kernel");
  }
  return KD_CUDA_OK;
}

static kd_cuda_status kd_cu_pad(int device, kd_cuda_op *o) {
  kd_cu_pad_p p;
  p.k = (int)o->i[1];
  p.mode = (int)o->i[2];
  /* an empty output (or input, backward) has no buffer: checked below once there is work */
  if (p.k < 1 || p.k > 3 || o->numel < 0) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "pad: bad arguments");
  const int64_t outer = o->i[4];
  int64_t in_numel = outer;
  for (int d = 0; d < 3; d++) p.in[d] = p.out[d] = p.cut[d] = 1, p.lo[d] = p.crop[d] = 0;
  for (int d = 0; d < p.k; d++) {
    const int j = 3 - p.k + d;
    p.in[j] = (int64_t)o->d[d];
    p.out[j] = (int64_t)o->d[3 + d];
    p.lo[j] = (int64_t)o->d[6 + d];
    if (p.mode == 2) {
      p.cut[j] = o->i[5 + d];
      p.crop[j] = (int64_t)o->d[9 + d];
      if (p.cut[j] <= 0 && p.out[j] > 0) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "pad: bad arguments");
    }
    in_numel *= p.in[j];
  }
  const void *src = kd_cu_addr<const void>(o->i[0]);
  if (o->code == 0) {
    if (o->numel == 0) return KD_CUDA_OK;
    if (!o->data[0] || !src) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "pad: bad arguments");
    switch (o->i[3]) {
      case 1: return kd_cu_pad_fwd_t<uint8_t>(device, o->data[0], src, o->numel, p);
      case 2: return kd_cu_pad_fwd_t<uint16_t>(device, o->data[0], src, o->numel, p);
      case 4: return kd_cu_pad_fwd_t<uint32_t>(device, o->data[0], src, o->numel, p);
      case 8: return kd_cu_pad_fwd_t<unsigned long long>(device, o->data[0], src, o->numel, p);
      default: return kd_cu_error(KD_CUDA_ERR_NOT_SUPPORTED, "pad: element size %lld", (long long)o->i[3]);
    }
  }
  if (in_numel == 0) return KD_CUDA_OK;
  if (!o->data[0] || (o->numel > 0 && !src)) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "pad: bad arguments");
  return o->i[3] ? kd_cu_pad_bwd_t<double>(device, o->data[0], src, o->numel, in_numel, p)
                 : kd_cu_pad_bwd_t<float>(device, o->data[0], src, o->numel, in_numel, p);
}

/* ---- interpolate ---- */
#define KD_CU_INTERP_AXES 3
struct kd_cu_interp_p {
  int64_t planes;
  int64_t in[KD_CU_INTERP_AXES], out[KD_CU_INTERP_AXES]; /* depth, height, width */
  int k[KD_CU_INTERP_AXES];                               /* taps per output position (antialias: many) */
  const int64_t *idx[KD_CU_INTERP_AXES];                  /* [out * k] source indices per axis */
  const double *w[KD_CU_INTERP_AXES];                     /* [out * k] weights per axis */
};

/* The nested weighted sum of interpolate.c (depth outermost, each sum started from its first term);
 * a tap of index -1 ends an antialiased window (KD_INTERP_TAP in interpolate.c). */
template <typename T>
__global__ void kd_cu_interp_fwd_kernel(T *y, const T *x, const kd_cu_interp_p p) {
  const int64_t n = p.planes * p.out[0] * p.out[1] * p.out[2];
  const int64_t hw = p.in[1] * p.in[2];
  KD_CU_FOR(e, n) {
    const int64_t ow = e % p.out[2], oh = (e / p.out[2]) % p.out[1], od = (e / (p.out[2] * p.out[1])) % p.out[0];
    const int64_t pl = e / (p.out[2] * p.out[1] * p.out[0]);
    const T *xp = x + pl * p.in[0] * hw;
    const int64_t *iw = p.idx[2] + ow * p.k[2];
    const double *ww = p.w[2] + ow * p.k[2];
    T acc_d = 0;
    for (int a = 0; a < p.k[0]; a++) {
      const T *xd = xp + p.idx[0][od * p.k[0] + a] * hw;
      T acc_h = 0;
      for (int b = 0; b < p.k[1] && (b == 0 || p.idx[1][oh * p.k[1] + b] >= 0); b++) {
        const T *xr = xd + p.idx[1][oh * p.k[1] + b] * p.in[2];
        T acc_w = xr[iw[0]] * (T)ww[0];
        for (int c = 1; c < p.k[2] && iw[c] >= 0; c++) acc_w += xr[iw[c]] * (T)ww[c];
        const T th = acc_w * (T)p.w[1][oh * p.k[1] + b];
        acc_h = b ? acc_h + th : th;
      }
      const T td = acc_h * (T)p.w[0][od * p.k[0] + a];
      acc_d = a ? acc_d + td : td;
    }
    y[e] = acc_d;
  }
}
template <typename T>
__global__ void kd_cu_interp_bwd_kernel(T *gx, const T *gy, const kd_cu_interp_p p) {
  const int64_t n = p.planes * p.out[0] * p.out[1] * p.out[2];
  const int64_t hw = p.in[1] * p.in[2];
  KD_CU_FOR(e, n) {
    const int64_t ow = e % p.out[2], oh = (e / p.out[2]) % p.out[1], od = (e / (p.out[2] * p.out[1])) % p.out[0];
    const int64_t pl = e / (p.out[2] * p.out[1] * p.out[0]);
    T *gp = gx + pl * p.in[0] * hw;
    const int64_t *iw = p.idx[2] + ow * p.k[2];
    const double *ww = p.w[2] + ow * p.k[2];
    const T g = gy[e];
    for (int a = 0; a < p.k[0]; a++) {
      T *gd = gp + p.idx[0][od * p.k[0] + a] * hw;
      const T ga = (T)p.w[0][od * p.k[0] + a] * g;
      for (int b = 0; b < p.k[1] && (b == 0 || p.idx[1][oh * p.k[1] + b] >= 0); b++) {
        T *gr = gd + p.idx[1][oh * p.k[1] + b] * p.in[2];
        const T gb = (T)p.w[1][oh * p.k[1] + b] * ga;
        for (int c = 0; c < p.k[2] && (c == 0 || iw[c] >= 0); c++) atomicAdd(gr + iw[c], (T)ww[c] * gb);
      }
    }
  }
}

template <typename T>
static kd_cuda_status kd_cu_interp_t(int device, const kd_cuda_op *o, const kd_cu_interp_p &p) {
  cudaStream_t s = kd_cu_stream(device);
  const int64_t n = p.planes * p.out[0] * p.out[1] * p.out[2];
  if (o->code == 0) {
    if (n == 0) return KD_CUDA_OK;
    KD_LAUNCH(kd_cu_grid(device, n), KD_CU_THREADS, 0, s, kd_cu_interp_fwd_kernel<T>)((T *)o->data[0], kd_cu_addr<const T>(o->i[0]), p);
  } else {
    KD_CU_CHECK(cudaMemsetAsync(o->data[0], 0, (size_t)(p.planes * p.in[0] * p.in[1] * p.in[2]) * sizeof(T), s));
    if (n == 0) return KD_CUDA_OK;
    KD_LAUNCH(kd_cu_grid(device, n), KD_CU_THREADS, 0, s, kd_cu_interp_bwd_kernel<T>)((T *)o->data[0], kd_cu_addr<const T>(o->i[0]), p);
  }
  KD_CU_CHECK_LAUNCH("the interpolate kernel");
  return KD_CUDA_OK;
}

static kd_cuda_status kd_cu_interp(int device, kd_cuda_op *o) {
  kd_cu_interp_p p;
  p.planes = o->i[3];
  bool ok = o->data[0] != NULL && p.planes >= 0;
  for (int a = 0; a < KD_CU_INTERP_AXES; a++) {
    p.in[a] = (int64_t)o->d[a];
    p.out[a] = (int64_t)o->d[3 + a];
    p.k[a] = (int)o->d[6 + a];
    ok = ok && p.in[a] >= 1 && p.out[a] >= 1 && p.k[a] >= 1;
  }
  if (!ok) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "interpolate: bad arguments");
  const int64_t *ib = kd_cu_addr<const int64_t>(o->i[1]);
  const double *lb = kd_cu_addr<const double>(o->i[2]);
  int64_t pos = 0;
  for (int a = 0; a < KD_CU_INTERP_AXES; a++) {
    p.idx[a] = ib + pos;
    p.w[a] = lb + pos;
    pos += p.out[a] * p.k[a];
  }
  switch (o->dtype) {
    case KD_DTYPE_F32: return kd_cu_interp_t<float>(device, o, p);
    case KD_DTYPE_F64: return kd_cu_interp_t<double>(device, o, p);
    default: return kd_cu_not_supported("interpolate", o->dtype);
  }
}

kd_cuda_status kd_cu_pad_op(int device, kd_cuda_op *o) {
  switch (o->kind) {
    case KD_CUDA_OP_PAD: return kd_cu_pad(device, o);
    case KD_CUDA_OP_INTERP: return kd_cu_interp(device, o);
    default: return kd_cu_error(KD_CUDA_ERR_NOT_SUPPORTED, "op: unknown kind %d", (int)o->kind);
  }
}
