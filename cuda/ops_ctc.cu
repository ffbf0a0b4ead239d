/* ops_ctc.cu - CUDA kernels of the CTC loss (KD_CUDA_OP_CTC; src/cpu/ctc.c is the CPU kernel
 * and the caller: it casts logProbs to contiguous float64 and builds the int64 list of lengths,
 * target offsets and targets, so one float64 instantiation serves every dtype).
 *   code 0  forward: one block per sample walks the time steps in order; its threads share the
 *           extended states s of a step (alpha[t][s] needs alpha[t-1][s-2..s]) and meet at a
 *           __syncthreads between steps; the block's first thread then writes the sample's
 *           negative log-likelihood. logAlpha is [N, T, Lmax], -inf outside each sample's
 *           states and steps.
 *   code 1  backward: the same walk backwards in time for logBeta (the scratch), then one block
 *           per (t, n) row of the gradient: its threads write the gradient of the classes with
 *           no state (lcab = -inf), meet, and the first state of each class (its "leader")
 *           writes (exp(lp) - exp(lcab + nll - lp)) * g, lcab summed over that class's states,
 *           so every class is written by one thread and no atomics are needed.
 * Target classes outside [0, C) are clamped when read (the CPU checks them; a device does not
 * read its targets back). */
#include <math.h>

#include "ops_shape.cuh"

struct kd_cu_ctc_p {
  const double *lp;
  const int64_t *ints; /* [3N] (input length, target length, target offset) then the targets */
  int64_t T, N, C, L, blank;
};

__device__ __forceinline__ double kd_cu_ctc_lse3(double a, double b, double c) {
  double m = a > b ? a : b;
  m = c > m ? c : m;
  if (m == -INFINITY) return -INFINITY;
  return m + log(exp(a - m) + exp(b - m) + exp(c - m));
}

/* The class of state s of a sample whose targets start at tg (clamped to [0, C)). */
__device__ __forceinline__ int64_t kd_cu_ctc_label(const kd_cu_ctc_p &p, const int64_t *tg, int64_t s) {
  if (!(s & 1)) return p.blank;
  int64_t c = tg[s >> 1];
  return c < 0 ? 0 : c >= p.C ? p.C - 1 : c;
}

/* Sample b's lengths and targets; fills its [T, Lmax] slice of v (logAlpha or logBeta) with -inf. */
struct kd_cu_ctc_sample {
  int64_t il, tl, ls;
  const int64_t *tg;
  double *v;
};
__device__ kd_cu_ctc_sample kd_cu_ctc_begin(const kd_cu_ctc_p &p, int64_t b, double *base) {
  kd_cu_ctc_sample q;
  q.il = p.ints[3 * b];
  q.tl = p.ints[3 * b + 1];
  q.ls = 2 * q.tl + 1;
  q.tg = p.ints + 3 * p.N + p.ints[3 * b + 2];
  q.v = base + b * p.T * p.L;
  for (int64_t i = threadIdx.x; i < p.T * p.L; i += blockDim.x) q.v[i] = -INFINITY;
  __syncthreads();
  return q;
}

__global__ void kd_cu_ctc_alpha_kernel(kd_cu_ctc_p p, double *la, double *nll) {
  for (int64_t b = blockIdx.x; b < p.N; b += gridDim.x) {
    const kd_cu_ctc_sample q = kd_cu_ctc_begin(p, b, la);
    const int64_t il = q.il, tl = q.tl, ls = q.ls;
    const int64_t *tg = q.tg;
    double *a = q.v;
    if (il > 0) {
      for (int64_t s = threadIdx.x; s < ls && s < 2; s += blockDim.x) a[s] = p.lp[b * p.C + kd_cu_ctc_label(p, tg, s)];
      __syncthreads();
      for (int64_t t = 1; t < il; t++) {
        const double *prev = a + (t - 1) * p.L, *row = p.lp + (t * p.N + b) * p.C;
        for (int64_t s = threadIdx.x; s < ls; s += blockDim.x) {
          const int64_t c = kd_cu_ctc_label(p, tg, s);
          const double l1 = prev[s], l2 = s > 0 ? prev[s - 1] : -INFINITY;
          const double l3 = ((s & 1) && s > 1 && kd_cu_ctc_label(p, tg, s - 2) != c) ? prev[s - 2] : -INFINITY;
          const double v = kd_cu_ctc_lse3(l1, l2, l3);
          a[t * p.L + s] = v == -INFINITY ? -INFINITY : v + row[c];
        }
        __syncthreads();
      }
    }
    if (threadIdx.x == 0) {
      if (il == 0) {
        nll[b] = tl == 0 ? 0.0 : INFINITY;
      } else {
        const double *last = a + (il - 1) * p.L;
        nll[b] = -kd_cu_ctc_lse3(last[ls - 1], tl > 0 ? last[ls - 2] : -INFINITY, -INFINITY);
      }
    }
    __syncthreads();
  }
}

__global__ void kd_cu_ctc_beta_kernel(kd_cu_ctc_p p, double *lb) {
  for (int64_t b = blockIdx.x; b < p.N; b += gridDim.x) {
    const kd_cu_ctc_sample q = kd_cu_ctc_begin(p, b, lb);
    const int64_t il = q.il, tl = q.tl, ls = q.ls;
    const int64_t *tg = q.tg;
    double *bt = q.v;
    if (il > 0) {
      const double *row = p.lp + ((il - 1) * p.N + b) * p.C;
      for (int64_t s = ls - 1 - (int64_t)threadIdx.x; s >= 0 && s >= ls - 2; s -= blockDim.x)
        bt[(il - 1) * p.L + s] = row[kd_cu_ctc_label(p, tg, s)];
      __syncthreads();
      for (int64_t t = il - 2; t >= 0; t--) {
        const double *next = bt + (t + 1) * p.L;
        row = p.lp + (t * p.N + b) * p.C;
        for (int64_t s = threadIdx.x; s < ls; s += blockDim.x) {
          const int64_t c = kd_cu_ctc_label(p, tg, s);
          const double l1 = next[s], l2 = s < ls - 1 ? next[s + 1] : -INFINITY;
          const double l3 = ((s & 1) && s < ls - 2 && kd_cu_ctc_label(p, tg, s + 2) != c) ? next[s + 2] : -INFINITY;
          const double v = kd_cu_ctc_lse3(l1, l2, l3);
          bt[t * p.L + s] = v == -INFINITY ? -INFINITY : v + row[c];
        }
        __syncthreads();
      }
    }
    __syncthreads();
  }
}

/* One block per (t, b) row of the gradient [T, N, C]. */
__global__ void kd_cu_ctc_grad_kernel(kd_cu_ctc_p p, const double *la, const double *lb, const double *nll, const double *go,
                                      bool zero_inf, double *gi) {
  for (int64_t r = blockIdx.x; r < p.T * p.N; r += gridDim.x) {
    const int64_t t = r / p.N, b = r % p.N;
    const int64_t il = p.ints[3 * b], tl = p.ints[3 * b + 1], ls = 2 * tl + 1;
    const int64_t *tg = p.ints + 3 * p.N + p.ints[3 * b + 2];
    const double *row = p.lp + r * p.C;
    double *out = gi + r * p.C;
    const double gr = go[b], nb = nll[b];
    const bool zero = t >= il || (zero_inf && nb == INFINITY);
    /* classes with no state: lcab = -inf, so exp(lp) * g (NaN for an infinite loss, as on the CPU) */
    for (int64_t c = threadIdx.x; c < p.C; c += blockDim.x) out[c] = zero ? 0.0 : (exp(row[c]) - exp(-INFINITY + nb - row[c])) * gr;
    __syncthreads();
    if (!zero) {
      const double *a = la + (b * p.T + t) * p.L, *bt = lb + (b * p.T + t) * p.L;
      for (int64_t s = threadIdx.x; s < ls; s += blockDim.x) {
        const int64_t c = kd_cu_ctc_label(p, tg, s);
        bool leader = true;
        for (int64_t q = 0; q < s && leader; q++) leader = kd_cu_ctc_label(p, tg, q) != c;
        if (!leader) continue;
        double m = -INFINITY;
        for (int64_t q = s; q < ls; q++)
          if (kd_cu_ctc_label(p, tg, q) == c && a[q] + bt[q] > m) m = a[q] + bt[q];
        double lcab = -INFINITY;
        if (m != -INFINITY) {
          double sum = 0;
          for (int64_t q = s; q < ls; q++)
            if (kd_cu_ctc_label(p, tg, q) == c) sum += exp(a[q] + bt[q] - m);
          lcab = m + log(sum);
        }
        out[c] = (exp(row[c]) - exp(lcab + nb - row[c])) * gr;
      }
    }
    __syncthreads();
  }
}

kd_cuda_status kd_cu_ctc_op(int device, kd_cuda_op *o) {
  kd_cu_ctc_p p;
  p.lp = kd_cu_addr<const double>(o->i[0]);
  p.ints = kd_cu_addr<const int64_t>(o->i[1]);
  p.N = o->numel;
  p.T = (int64_t)o->d[0];
  p.C = (int64_t)o->d[1];
  p.L = (int64_t)o->d[2];
  p.blank = (int64_t)o->d[3];
  if (p.N < 0 || p.T < 0 || p.C < 1 || p.L < 1 || p.blank < 0 || p.blank >= p.C || (!o->data[0] && p.T > 0) || !p.ints || !o->i[2])
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "ctcLoss: bad arguments");
  if (p.N == 0 || p.T == 0) {
    if (o->code == 0 && p.N > 0) { /* no steps: every likelihood is that of an empty input */
      KD_LAUNCH(1, 32, 0, kd_cu_stream(device), kd_cu_ctc_alpha_kernel)(p, (double *)o->data[0], kd_cu_addr<double>(o->i[2]));
      KD_CU_CHECK_LAUNCH("the ctcLoss forward kernel");
    }
    return KD_CUDA_OK;
  }
  cudaStream_t s = kd_cu_stream(device);
  const unsigned threads = p.L >= 256 ? 256 : p.L >= 128 ? 128 : p.L >= 64 ? 64 : 32;
  const unsigned samples = (unsigned)(p.N < 65535 ? p.N : 65535);
  if (o->code == 0) {
    KD_LAUNCH(samples, threads, 0, s, kd_cu_ctc_alpha_kernel)(p, (double *)o->data[0], kd_cu_addr<double>(o->i[2]));
    KD_CU_CHECK_LAUNCH("the ctcLoss forward kernel");
    return KD_CUDA_OK;
  }
  if (!o->i[3] || !o->i[4] || !o->i[5]) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "ctcLoss backward: bad arguments");
  double *lb = kd_cu_addr<double>(o->i[5]);
  KD_LAUNCH(samples, threads, 0, s, kd_cu_ctc_beta_kernel)(p, lb);
  KD_CU_CHECK_LAUNCH("the ctcLoss beta kernel");
  const int64_t rows = p.T * p.N;
  const unsigned grid = (unsigned)(rows < 65535 ? rows : 65535);
  const unsigned gthreads = p.C >= 256 || p.L >= 256 ? 256 : 64;
  KD_LAUNCH(grid, gthreads, 0, s, kd_cu_ctc_grad_kernel)(p, kd_cu_addr<const double>(o->i[3]), lb,
                                                          kd_cu_addr<const double>(o->i[2]),
                                                          kd_cu_addr<const double>(o->i[4]), o->d[4] != 0, (double *)o->data[0]);
  KD_CU_CHECK_LAUNCH("the ctcLoss gradient kernel");
  return KD_CUDA_OK;
}
