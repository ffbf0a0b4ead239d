/* ops_optim.cu - CUDA fused optimizer steps: the device half of src/cpu/optim.c. The CPU kernel
 * checks the lists, folds the scalars (step size, bias corrections) and, per parameter, builds
 * ONE iteration over [param, present state..., grad] (outputs in place); this file runs that
 * iteration with the same element updates as optim.c's KD_*_ELEM macros (same order of
 * operations; state rounded through its storage type where optim.c does), so single and
 * foreach forms of SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, RAdam, Adamax, NAdam, ASGD and
 * Rprop all land here (optim.c's kd_optim_ctx says which fields the later ones reuse). float16/bfloat16
 * compute in float. One thread per element, grid-stride; 64-bit index math only when needed. */
#include "ops/op_codes.gen.h"
#include "ops_op.cuh"

typedef kd_cu_iter<KD_CUDA_OP_MAX_OPS> kd_cu_it8;

struct kd_cu_optim_p {
  int code, nops, k_buf, k_gavg, k_max;
  bool maximize, nesterov, first, decoupled;
  double lr, a, b, eps, wd, mom, damp, step_size, bc2_sqrt, bc1, rect;
};

template <typename T, typename CT>
__device__ __forceinline__ CT kd_cu_rt(CT v) { return (CT)kd_cu_ld(kd_cu_st<T>(v)); } /* round through T */

/* Adam's moment estimates (Adam, AdamW, RAdam): updated, stored, returned rounded through T. */
template <typename T, typename CT>
__device__ __forceinline__ void kd_cu_moments(T &ms, T &vs, CT g, const kd_cu_optim_p &c, CT &m, CT &v) {
  m = kd_cu_ld(ms) * (CT)c.a + (CT)(1.0 - c.a) * g;
  v = kd_cu_ld(vs) * (CT)c.b + (CT)(1.0 - c.b) * g * g;
  ms = kd_cu_st<T>(m);
  vs = kd_cu_st<T>(v);
  m = kd_cu_rt<T>(m);
  v = kd_cu_rt<T>(v);
}

template <typename T, typename I>
__global__ void kd_cu_optim_kernel(const kd_cu_it8 it, const kd_cu_optim_p c) {
  typedef typename kd_cu_ct<T>::type CT;
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  const int kg = c.nops - 1;
  const CT wd = (CT)c.wd, eps = (CT)c.eps;
  const bool use_wd = c.wd != 0;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < it.numel; i += step) {
    I off[8];
    kd_cu_iter_offsets<I, 8>(it, (I)i, off);
#define KD_CU_AT(k) (*(T *)(it.data[k] + off[k]))
    CT p = kd_cu_ld(KD_CU_AT(0)), g = kd_cu_ld(KD_CU_AT(kg));
    g = c.maximize ? -g : g;
    if (c.code == KD_OPTIM_SGD) {
      const CT mom = (CT)c.mom, omd = (CT)(1.0 - c.damp), nlr = (CT)(-c.lr);
      if (use_wd) g = g + wd * p;
      if (c.k_buf >= 0) {
        const CT b = c.first ? g : kd_cu_ld(KD_CU_AT(c.k_buf)) * mom + omd * g;
        KD_CU_AT(c.k_buf) = kd_cu_st<T>(b);
        g = c.nesterov ? g + mom * b : b;
      }
      KD_CU_AT(0) = kd_cu_st<T>(p + nlr * g);
    } else if (c.code == KD_OPTIM_ADAM || c.code == KD_OPTIM_ADAMW) {
      const CT bc2s = (CT)c.bc2_sqrt;
      const CT nss = (CT)(-c.step_size), decay = (CT)(1.0 - c.lr * c.wd);
      if (c.decoupled) p = p * decay;
      else if (use_wd) g = g + wd * p;
      CT m, v;
      kd_cu_moments<T, CT>(KD_CU_AT(1), KD_CU_AT(2), g, c, m, v);
      CT d;
      if (c.k_max >= 0) {
        CT x = kd_cu_ld(KD_CU_AT(c.k_max));
        x = (x > v || x != x) ? x : v;
        KD_CU_AT(c.k_max) = kd_cu_st<T>(x);
        d = sqrt(kd_cu_rt<T>(x)) / bc2s + eps;
      } else {
        d = sqrt(v) / bc2s + eps;
      }
      KD_CU_AT(0) = kd_cu_st<T>(p + nss * (m / d));
    } else if (c.code == KD_OPTIM_RMSPROP) {
      const CT alpha = (CT)c.a, oma = (CT)(1.0 - c.a), mom = (CT)c.mom, nlr = (CT)(-c.lr);
      if (use_wd) g = g + wd * p;
      CT s = kd_cu_ld(KD_CU_AT(1)) * alpha + oma * g * g;
      KD_CU_AT(1) = kd_cu_st<T>(s);
      s = kd_cu_rt<T>(s);
      CT avg;
      if (c.k_gavg >= 0) {
        CT ga = kd_cu_ld(KD_CU_AT(c.k_gavg)) * alpha + oma * g;
        KD_CU_AT(c.k_gavg) = kd_cu_st<T>(ga);
        ga = kd_cu_rt<T>(ga);
        avg = sqrt(s + (CT)-1 * ga * ga);
      } else {
        avg = sqrt(s);
      }
      avg = avg + eps;
      if (c.k_buf >= 0) {
        const CT b = kd_cu_ld(KD_CU_AT(c.k_buf)) * mom + g / avg;
        KD_CU_AT(c.k_buf) = kd_cu_st<T>(b);
        KD_CU_AT(0) = kd_cu_st<T>(p + nlr * kd_cu_rt<T>(b));
      } else {
        KD_CU_AT(0) = kd_cu_st<T>(p + nlr * (g / avg));
      }
    } else if (c.code == KD_OPTIM_ADAGRAD) {
      const CT nlr = (CT)(-c.step_size);
      if (use_wd) g = g + wd * p;
      const CT s = kd_cu_ld(KD_CU_AT(1)) + g * g;
      KD_CU_AT(1) = kd_cu_st<T>(s);
      const CT sd = sqrt(kd_cu_rt<T>(s)) + eps;
      KD_CU_AT(0) = kd_cu_st<T>(p + nlr * (g / sd));
    } else if (c.code == KD_OPTIM_ADADELTA) {
      const CT rho = (CT)c.a, omr = (CT)(1.0 - c.a), nlr = (CT)(-c.lr);
      if (use_wd) g = g + wd * p;
      const CT s = kd_cu_ld(KD_CU_AT(1)) * rho + omr * g * g;
      KD_CU_AT(1) = kd_cu_st<T>(s);
      const CT sd = sqrt(kd_cu_rt<T>(s) + eps);
      const CT a = kd_cu_ld(KD_CU_AT(2));
      const CT d = kd_cu_rt<T>(sqrt(a + eps) / sd * g);
      KD_CU_AT(2) = kd_cu_st<T>(a * rho + omr * d * d);
      KD_CU_AT(0) = kd_cu_st<T>(p + nlr * d);
    } else if (c.code == KD_OPTIM_ADAMAX) {
      if (use_wd) g = g + wd * p;
      CT m = kd_cu_ld(KD_CU_AT(1)) * (CT)c.a + (CT)(1.0 - c.a) * g;
      KD_CU_AT(1) = kd_cu_st<T>(m);
      m = kd_cu_rt<T>(m);
      CT u = kd_cu_rt<T>(kd_cu_ld(KD_CU_AT(2)) * (CT)c.b);
      const CT a = kd_cu_rt<T>((g < 0 ? -g : g) + eps);
      u = (u > a || u != u) ? u : a;
      KD_CU_AT(2) = kd_cu_st<T>(u);
      KD_CU_AT(0) = kd_cu_st<T>(p + (CT)(-c.step_size) * m / u);
    } else if (c.code == KD_OPTIM_NADAM) {
      if (use_wd) g = g + wd * p;
      CT m, v;
      kd_cu_moments<T, CT>(KD_CU_AT(1), KD_CU_AT(2), g, c, m, v);
      const CT d = sqrt(kd_cu_rt<T>(v / (CT)c.damp)) + eps;
      p = kd_cu_rt<T>(p + (CT)c.step_size * g / d);
      KD_CU_AT(0) = kd_cu_st<T>(p + (CT)c.mom * m / d);
    } else if (c.code == KD_OPTIM_ASGD) {
      if (use_wd) g = g + wd * p;
      p = kd_cu_rt<T>(p * (CT)c.a);
      p = kd_cu_rt<T>(p + (CT)(-c.lr) * g);
      KD_CU_AT(0) = kd_cu_st<T>(p);
      if (c.mom == 1) KD_CU_AT(1) = kd_cu_st<T>(p);
      else {
        const CT ax = kd_cu_ld(KD_CU_AT(1));
        KD_CU_AT(1) = kd_cu_st<T>(ax + kd_cu_rt<T>(kd_cu_rt<T>(p - ax) * (CT)c.mom));
      }
    } else if (c.code == KD_OPTIM_RPROP) {
      const CT etaminus = kd_cu_rt<T>((CT)c.a), etaplus = kd_cu_rt<T>((CT)c.b);
      const CT smin = (CT)c.damp, smax = (CT)c.mom;
      const CT x = kd_cu_rt<T>(g * kd_cu_ld(KD_CU_AT(1)));
      const CT s = x > 0 ? etaplus : x < 0 ? etaminus : (CT)1;
      CT st = kd_cu_rt<T>(kd_cu_ld(KD_CU_AT(2)) * s);
      st = st < smin ? smin : st > smax ? smax : st;
      KD_CU_AT(2) = kd_cu_st<T>(st);
      if (s == etaminus) g = 0;
      const CT sg = g > 0 ? (CT)1 : g < 0 ? (CT)-1 : (CT)0;
      KD_CU_AT(0) = kd_cu_st<T>(p + ((CT)-1 * sg) * st);
      KD_CU_AT(1) = kd_cu_st<T>(g);
    } else { /* RAdam (no maximize in PyTorch 1.13) */
      const CT bc2s = (CT)c.bc2_sqrt, bc1 = (CT)c.bc1, lr = (CT)c.lr, rect = (CT)c.rect;
      if (use_wd) g = g + wd * p;
      CT m, v;
      kd_cu_moments<T, CT>(KD_CU_AT(1), KD_CU_AT(2), g, c, m, v);
      const CT cm = kd_cu_rt<T>(m / bc1) * lr;
      if (c.rect != 0) KD_CU_AT(0) = kd_cu_st<T>(p - cm * ((CT)1 / (sqrt(v) + eps) * bc2s) * rect);
      else KD_CU_AT(0) = kd_cu_st<T>(p - cm);
    }
#undef KD_CU_AT
  }
}

template <typename T>
static kd_cuda_status kd_cu_optim_t(int device, const kd_cu_it8 &it, const kd_cu_optim_p &c) {
  cudaStream_t s = kd_cu_stream(device);
  const unsigned grid = kd_cu_grid(device, it.numel);
  if (kd_cu_iter_fits_32(it)) KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_cu_optim_kernel<T, int32_t>)(it, c);
  else KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_cu_optim_kernel<T, int64_t>)(it, c);
  KD_CU_CHECK_LAUNCH("the optimizer kernel");
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_optim(int device, kd_cuda_op *o) {
  kd_cu_it8 it;
  KD_CU_TRY(kd_cu_op_iter(o, &it));
  if (it.scalar_mask || o->nops < 2) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "optimizer step: bad operands");
  kd_cu_optim_p c;
  c.code = o->code;
  c.nops = o->nops;
  c.k_buf = (int)o->i[0];
  c.k_gavg = (int)o->i[1];
  c.k_max = (int)o->i[2];
  c.maximize = o->i[3] != 0;
  c.nesterov = o->i[4] != 0;
  c.first = o->i[5] != 0;
  c.decoupled = o->i[6] != 0;
  c.lr = o->d[0]; c.a = o->d[1]; c.b = o->d[2]; c.eps = o->d[3]; c.wd = o->d[4];
  c.mom = o->d[5]; c.damp = o->d[6]; c.step_size = o->d[7]; c.bc2_sqrt = o->d[8]; c.bc1 = o->d[9]; c.rect = o->d[10];
  const int ks[3] = {c.k_buf, c.k_gavg, c.k_max};
  for (int j = 0; j < 3; j++)
    if (ks[j] >= c.nops - 1 || ks[j] == 0 || ks[j] < -1) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "optimizer step: bad state operand");
  if (it.numel == 0) return KD_CUDA_OK;
  switch (o->dtype) {
    case KD_DTYPE_F32: return kd_cu_optim_t<float>(device, it, c);
    case KD_DTYPE_F64: return kd_cu_optim_t<double>(device, it, c);
    case KD_DTYPE_F16: return kd_cu_optim_t<__half>(device, it, c);
    case KD_DTYPE_BF16: return kd_cu_optim_t<__nv_bfloat16>(device, it, c);
    default: return kd_cu_not_supported("optimizer step", o->dtype);
  }
}
