/* ops_loss.cu - CUDA kernels of the losses (src/cpu/loss.c):
 *   KD_CUDA_OP_LOSS       the elementwise pass of mseLoss, l1Loss, smoothL1Loss,
 *                         binaryCrossEntropy(WithLogits) and of pointwiseLossBackward, with
 *                         loss.c's formulas (float32/float64; the CPU kernel has cast and
 *                         broadcast the operands and reduces the result with the sum/mean ops,
 *                         i.e. the CUDA reduction machinery). binaryCrossEntropy's input-range
 *                         check is folded into its pass: a flag word, recorded in the device's
 *                         fault record and raised at the next sync point (Note [Deferred index
 *                         errors] in deferred_check.cuh; read synchronously without a record).
 *   KD_CUDA_OP_NLL_CHECK  nllLoss's target check ("Target 5 is out of bounds."): the first bad
 *                         target goes to the device's fault record, thrown at the next sync
 *                         point (Note [Deferred index errors] in deferred_check.cuh; read
 *                         synchronously without a record).
 *   KD_CUDA_OP_NLL        nllLoss's per-element losses and weights (the host sums them with the
 *                         sum op for 'sum'/'mean') and nllLossBackward's scatter (each target
 *                         writes its own element: no atomics).
 * UNVERIFIED: written and compiled without a GPU; test/cuda_parity.test.js checks them on one. */
#include "deferred_check.cuh"
#include "ops_math.cuh"
#include "ops_reduce.cuh"
#include "ops_shape.cuh"

/* ---- pointwise losses ---- */
struct kd_cu_loss_p {
  int backward, elem, target, has_pw, check;
  double beta, gscale;
};

template <typename T>
__device__ __forceinline__ T kd_cu_loss_elem(const kd_cu_loss_p &c, T x, T t, T w, T pw) {
  switch (c.elem) {
    case 0: return (x - t) * (x - t);
    case 1: return kd_cm_fabs(x - t);
    case 2: {
      const T d = kd_cm_fabs(x - t), b = (T)c.beta;
      return b == 0 ? d : d < b ? (T)0.5 * d * d / b : d - (T)0.5 * b;
    }
    case 3: {
      T l1 = kd_cm_log1p(-x), l0 = kd_cm_log(x);
      l1 = l1 < (T)-100 ? (T)-100 : l1;
      l0 = l0 < (T)-100 ? (T)-100 : l0;
      return w * ((t - 1) * l1 - t * l0);
    }
    default: {
      const T m = -x > 0 ? -x : (T)0;
      const T lw = c.has_pw ? (pw - 1) * t + 1 : (T)1;
      return w * ((1 - t) * x + lw * (kd_cm_log(kd_cm_exp(-m) + kd_cm_exp(-x - m)) + m));
    }
  }
}

template <typename T>
__device__ __forceinline__ T kd_cu_loss_grad(const kd_cu_loss_p &c, T x, T t, T w, T pw) {
  const T d = x - t, sg = d > 0 ? (T)1 : d < 0 ? (T)-1 : (T)0;
  T r;
  switch (c.elem) {
    case 1: r = sg; break;
    case 2: r = c.beta == 0 || !(kd_cm_fabs(d) < (T)c.beta) ? sg : d / (T)c.beta; break;
    case 3:
      if (c.target) {
        T l1 = kd_cm_log1p(-x), l0 = kd_cm_log(x);
        l1 = l1 < (T)-100 ? (T)-100 : l1;
        l0 = l0 < (T)-100 ? (T)-100 : l0;
        return w * (l1 - l0);
      } else {
        const T den = (1 - x) * x;
        return w * d / (den > (T)1e-12 ? den : (T)1e-12);
      }
    default: {
      const T sig = 1 / (1 + kd_cm_exp(-x));
      const T ls = x < 0 ? x - kd_cm_log1p(kd_cm_exp(x)) : -kd_cm_log1p(kd_cm_exp(-x)); /* log(sigmoid(x)) */
      const T p = c.has_pw ? pw : (T)1;
      if (c.target) return w * (-x - (p - 1) * ls);
      const T lw = (p - 1) * t + 1;
      return w * ((1 - t) - lw + lw * sig);
    }
  }
  return c.target ? -r : r;
}

template <typename T>
__global__ void kd_cu_loss_kernel(const kd_cu_it8 it, const kd_cu_loss_p c, int *bad) {
  KD_CU_FOR(i, it.numel) {
    int64_t off[8];
    kd_cu_iter_offsets<int64_t, 8>(it, i, off);
    const T x = kd_cu_op_get<T>(it, 1, off[1]), t = kd_cu_op_get<T>(it, 2, off[2]);
    const T w = kd_cu_op_get<T>(it, 3, off[3]), pw = kd_cu_op_get<T>(it, 4, off[4]);
    T r;
    if (c.backward) {
      r = kd_cu_op_get<T>(it, 5, off[5]) * (T)c.gscale * kd_cu_loss_grad<T>(c, x, t, w, pw);
    } else {
      r = kd_cu_loss_elem<T>(c, x, t, w, pw);
      if (c.check && !(x >= 0 && x <= 1)) *bad = 1;
    }
    *(T *)(it.data[0] + off[0]) = r;
  }
}

template <typename T>
static kd_cuda_status kd_cu_loss_t(int device, kd_cuda_op *o, const kd_cu_it8 &it, const kd_cu_loss_p &c) {
  cudaStream_t s = kd_cu_stream(device);
  kd_cu_scratch flag(device);
  if (c.check) {
    KD_CU_TRY(flag.alloc(sizeof(int)));
    KD_CU_CHECK(cudaMemsetAsync(flag.p, 0, sizeof(int), s));
  }
  KD_LAUNCH(kd_cu_grid(device, it.numel), KD_CU_THREADS, 0, s, kd_cu_loss_kernel<T>)(it, c, (int *)flag.p);
  KD_CU_CHECK_LAUNCH("the loss kernel");
  if (c.check && o->i[4]) return kd_cu_deferred_flag(device, (const int *)flag.p, o->i[4], o->i[5]);
  if (c.check) {
    int got = 0;
    KD_CU_CHECK(cudaMemcpyAsync(&got, flag.p, sizeof got, cudaMemcpyDeviceToHost, s)); /* to pageable: blocking */
    o->result[0] = got;
  }
  return KD_CUDA_OK;
}

static kd_cuda_status kd_cu_loss(int device, kd_cuda_op *o) {
  kd_cu_it8 it;
  KD_CU_TRY(kd_cu_op_iter(o, &it));
  kd_cu_loss_p c;
  c.backward = o->code == 1;
  c.elem = (int)o->i[0];
  c.target = o->i[1] != 0;
  c.has_pw = o->i[2] != 0;
  c.check = !c.backward && o->i[3] != 0;
  c.beta = o->d[0];
  c.gscale = o->d[1];
  if (o->nops != (c.backward ? 6 : 5) || (it.scalar_mask & 7u) || c.elem < 0 || c.elem > 4)
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "loss: bad operands");
  if (it.numel == 0) return KD_CUDA_OK;
  switch (o->dtype) {
    case KD_DTYPE_F32: return kd_cu_loss_t<float>(device, o, it, c);
    case KD_DTYPE_F64: return kd_cu_loss_t<double>(device, o, it, c);
    default: return kd_cu_not_supported("loss", o->dtype);
  }
}

/* ---- nllLoss ---- */
__global__ void kd_cu_nll_check_kernel(const int64_t *t, int64_t n, int64_t classes, int64_t ignore,
                                       unsigned long long *bad) {
  KD_CU_FOR(i, n) {
    const int64_t v = t[i];
    if (v != ignore && (v < 0 || v >= classes)) atomicMin(bad, (unsigned long long)i);
  }
}

static kd_cuda_status kd_cu_nll_check(int device, kd_cuda_op *o) {
  if (o->numel == 0) return KD_CUDA_OK;
  if (!o->data[0]) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "nllLoss check: bad arguments");
  if (o->i[2]) { /* the targets are the caller's tensor: recorded, not clamped (the nll kernels skip them) */
    kd_cu_check_rule r = {o->i[0], o->i[1], 0, 1};
    return kd_cu_deferred_check(device, (int64_t *)o->data[0], o->numel, r, 0, 0, o->i[2], o->i[3]);
  }
  cudaStream_t s = kd_cu_stream(device);
  kd_cu_scratch w(device);
  KD_CU_TRY(w.alloc(sizeof(unsigned long long)));
  unsigned long long none = ~0ull, got = 0;
  KD_CU_CHECK(cudaMemsetAsync(w.p, 0xff, sizeof none, s)); /* "no bad position": ~0, with no host copy */
  const int64_t *t = (const int64_t *)o->data[0];
  KD_LAUNCH(kd_cu_grid(device, o->numel), KD_CU_THREADS, 0, s, kd_cu_nll_check_kernel)(t, o->numel, o->i[0], o->i[1],
                                                                                (unsigned long long *)w.p);
  KD_CU_CHECK_LAUNCH("the nllLoss target check");
  /* into pageable memory: the copy returns once it has landed (the one sync of the check) */
  KD_CU_CHECK(cudaMemcpyAsync(&got, w.p, sizeof got, cudaMemcpyDeviceToHost, s));
  if (got != none) {
    int64_t v = 0;
    KD_CU_CHECK(cudaMemcpyAsync(&v, t + got, sizeof v, cudaMemcpyDeviceToHost, s)); /* blocking, as above */
    o->result[0] = 1;
    o->result[1] = v;
  }
  return KD_CUDA_OK;
}

struct kd_cu_nll_p {
  const int64_t *t;
  const double *w, *go;
  double *tw;
  int64_t c, d, ignore, n;
  double scale;
  bool per_elem;
};

template <typename T>
__global__ void kd_cu_nll_fwd_kernel(double *loss, const T *x, const kd_cu_nll_p p) {
  KD_CU_FOR(i, p.n) {
    const int64_t cls = p.t[i], b = i / p.d, k = i % p.d;
    if (cls == p.ignore || cls < 0 || cls >= p.c) { /* out of range: recorded by the check */
      loss[i] = 0.0;
      if (p.tw) p.tw[i] = 0.0;
      continue;
    }
    const double w = p.w ? p.w[cls] : 1.0;
    loss[i] = -w * (double)x[(b * p.c + cls) * p.d + k];
    if (p.tw) p.tw[i] = w;
  }
}

__global__ void kd_cu_nll_bwd_kernel(double *gi, const kd_cu_nll_p p) {
  KD_CU_FOR(i, p.n) {
    const int64_t cls = p.t[i], b = i / p.d, k = i % p.d;
    if (cls == p.ignore || cls < 0 || cls >= p.c) continue;
    const double gv = p.per_elem ? p.go[i] : p.go[0] * p.scale;
    gi[(b * p.c + cls) * p.d + k] = -(p.w ? p.w[cls] : 1.0) * gv;
  }
}

static kd_cuda_status kd_cu_nll(int device, kd_cuda_op *o) {
  kd_cu_nll_p p;
  p.t = kd_cu_addr<const int64_t>(o->i[1]);
  p.w = kd_cu_addr<const double>(o->i[2]);
  p.tw = kd_cu_addr<double>(o->i[3]);
  p.c = o->i[4];
  p.d = o->i[5];
  p.ignore = o->i[6];
  p.go = kd_cu_addr<const double>(o->i[7]);
  p.n = o->numel;
  p.scale = o->d[0];
  p.per_elem = o->d[1] != 0;
  if (p.c < 0 || p.d < 1 || p.n < 0) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "nllLoss: bad arguments");
  /* an empty batch: both outputs are empty (no storage, data[0] NULL) */
  if (p.n == 0) return KD_CUDA_OK;
  if (!o->data[0]) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "nllLoss: bad arguments");
  cudaStream_t s = kd_cu_stream(device);
  if (o->code == 1) {
    KD_CU_CHECK(cudaMemsetAsync(o->data[0], 0, (size_t)(p.n / p.d * p.c * p.d) * sizeof(double), s));
    KD_LAUNCH(kd_cu_grid(device, p.n), KD_CU_THREADS, 0, s, kd_cu_nll_bwd_kernel)((double *)o->data[0], p);
  } else {
    const unsigned grid = kd_cu_grid(device, p.n);
    if (o->dtype == KD_DTYPE_F64)
      KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_cu_nll_fwd_kernel<double>)((double *)o->data[0], kd_cu_addr<const double>(o->i[0]), p);
    else if (o->dtype == KD_DTYPE_F32)
      KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_cu_nll_fwd_kernel<float>)((double *)o->data[0], kd_cu_addr<const float>(o->i[0]), p);
    else
      return kd_cu_not_supported("nllLoss", o->dtype);
  }
  KD_CU_CHECK_LAUNCH("the nllLoss kernel");
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_loss_op(int device, kd_cuda_op *o) {
  switch (o->kind) {
    case KD_CUDA_OP_LOSS: return kd_cu_loss(device, o);
    case KD_CUDA_OP_NLL_CHECK: return kd_cu_nll_check(device, o);
    case KD_CUDA_OP_NLL: return kd_cu_nll(device, o);
    default: return kd_cu_error(KD_CUDA_ERR_NOT_SUPPORTED, "op: unknown kind %d", (int)o->kind);
  }
}
