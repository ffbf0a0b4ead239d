/* ops_qlinear.cu - the device kernels of the int8 dynamic quantized linear layer
 * (KD_CUDA_OP_QLINEAR; src/cpu/qlinear.c lays out the operands, Note [int8 dynamic linear
 * numerics] there gives the arithmetic, which these kernels reproduce bit for bit). Four launches
 * on the stream, no sync:
 *   1. partial min/max of the input, one pair per block (block reduction in shared memory);
 *   2. one block reduces the partials and one thread picks the input's qparams
 *      (ChooseQuantizationParams, in double) into the scratch buffer;
 *   3. the input quantized to uint8 and stored minus 128 as int8 (so that __dp4a, signed x
 *      signed, multiplies it with the int8 weight: sum((xq - 128) * w) + 128 * colsum), rows padded
 *      to the packed weight's k;
 *   4. the GEMM: 64 x 64 output tiles per block of 16 x 16 threads, each thread 4 x 4 outputs;
 *      per step the block stages 64 rows x 32 k of the input and 32 k x 64 columns of the packed
 *      weight (Note [Packed int8 weights]: 16 consecutive 32-bit words per panel and k group,
 *      so the loads are coalesced) in shared memory, and every thread runs __dp4a over 4 bytes of
 *      k at a time; the epilogue dequantizes with IEEE float32 operations that are never fused. */
#include "ops_shape.cuh"

#define KD_QL_TM 64
#define KD_QL_TN 64
#define KD_QL_TKW 8 /* k words (4 bytes each) per step */
#define KD_QL_RED 256 /* threads of the min/max blocks, and the most partials */

struct kd_cu_ql_p {
  const float *x;
  const int *w;          /* packed weight as 32-bit words */
  const int *colsum;
  const float *wscale;
  const float *bias;
  float *y;
  signed char *xs;       /* m x kp, quantized input minus 128 */
  float *scratch;        /* 2 * KD_QL_RED partials, then inv (float) and zp (int) */
  int64_t m, k, n, kp, numel;
  int nscale, reduce_range, nblocks;
};

__global__ void kd_cu_ql_minmax_kernel(const kd_cu_ql_p a) {
  __shared__ float smin[KD_QL_RED], smax[KD_QL_RED];
  float mn = a.x[0], mx = a.x[0];
  KD_CU_FOR(i, a.numel) {
    const float v = a.x[i];
    mn = v < mn ? v : mn;
    mx = v > mx ? v : mx;
  }
  smin[threadIdx.x] = mn;
  smax[threadIdx.x] = mx;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      smin[threadIdx.x] = smin[threadIdx.x + s] < smin[threadIdx.x] ? smin[threadIdx.x + s] : smin[threadIdx.x];
      smax[threadIdx.x] = smax[threadIdx.x + s] > smax[threadIdx.x] ? smax[threadIdx.x + s] : smax[threadIdx.x];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    a.scratch[blockIdx.x] = smin[0];
    a.scratch[KD_QL_RED + blockIdx.x] = smax[0];
  }
}

/* quant_utils::ChooseQuantizationParams (src/cpu/qlinear.c's kd_ql_choose). */
__global__ void kd_cu_ql_qparams_kernel(const kd_cu_ql_p a) {
  __shared__ float smin[KD_QL_RED], smax[KD_QL_RED];
  const unsigned t = threadIdx.x;
  smin[t] = t < (unsigned)a.nblocks ? a.scratch[t] : a.scratch[0];
  smax[t] = t < (unsigned)a.nblocks ? a.scratch[KD_QL_RED + t] : a.scratch[KD_QL_RED];
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s) {
      smin[t] = smin[t + s] < smin[t] ? smin[t + s] : smin[t];
      smax[t] = smax[t + s] > smax[t] ? smax[t + s] : smax[t];
    }
    __syncthreads();
  }
  if (t != 0) return;
  int qmin = 0, qmax = 255;
  if (a.reduce_range) {
    qmin /= 2;
    qmax /= 2;
  }
  float mn = smin[0] < 0.f ? smin[0] : 0.f, mx = smax[0] > 0.f ? smax[0] : 0.f;
  double scale = ((double)mx - mn) / (qmax - qmin);
  if ((float)scale == 0.0f || isinf(__fdiv_rn(1.0f, (float)scale))) scale = 0.1;
  const float small = 6.1e-5f;
  if (scale < small) {
    const float org = (float)scale;
    scale = small;
    if (mn == 0.0f) mx = __fmul_rn(small, (float)(qmax - qmin));
    else if (mx == 0.0f) mn = -__fmul_rn(small, (float)(qmax - qmin));
    else {
      const float amp = __fdiv_rn(small, org);
      mn = __fmul_rn(mn, amp);
      mx = __fmul_rn(mx, amp);
    }
  }
  const double zmin = qmin - mn / scale, zmax = qmax - mx / scale;
  const double emin = fabs((double)qmin) - fabs(mn / scale), emax = fabs((double)qmax) - fabs(mx / scale);
  const double z0 = emin < emax ? zmin : zmax;
  const int zp = z0 < qmin ? qmin : z0 > qmax ? qmax : (int)rint(z0);
  a.scratch[2 * KD_QL_RED] = (float)(1.0 / scale);
  a.scratch[2 * KD_QL_RED + 1] = __int_as_float(zp);
}

__global__ void kd_cu_ql_quantize_kernel(const kd_cu_ql_p a) {
  const float inv = a.scratch[2 * KD_QL_RED];
  const int zp = __float_as_int(a.scratch[2 * KD_QL_RED + 1]);
  KD_CU_FOR(e, a.m * a.kp) {
    const int64_t r = e / a.kp, c = e - r * a.kp;
    int q = 0;
    if (c < a.k) {
      q = (int)rintf(__fmul_rn(a.x[r * a.k + c], inv)) + zp;
      q = q < 0 ? 0 : q > 255 ? 255 : q;
    }
    a.xs[e] = (signed char)(q - 128);
  }
}

__global__ void kd_cu_ql_gemm_kernel(const kd_cu_ql_p a) {
  __shared__ int sa[KD_QL_TM][KD_QL_TKW + 1]; /* +1: no bank conflicts on the column reads */
  __shared__ int sb[KD_QL_TKW][KD_QL_TN];
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
  const int64_t row0 = (int64_t)blockIdx.y * KD_QL_TM, col0 = (int64_t)blockIdx.x * KD_QL_TN;
  const int64_t kw = a.kp / 4; /* k words */
  const int *xw = (const int *)a.xs;
  int acc[4][4];
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) acc[i][j] = 0;
  for (int64_t g0 = 0; g0 < kw; g0 += KD_QL_TKW) {
    /* input: 64 rows x 8 words, 2 per thread (consecutive threads read consecutive words) */
    for (int e = tid; e < KD_QL_TM * KD_QL_TKW; e += 256) {
      const int r = e / KD_QL_TKW, g = e % KD_QL_TKW;
      const int64_t gr = row0 + r, gg = g0 + g;
      sa[r][g] = gr < a.m && gg < kw ? xw[gr * kw + gg] : 0;
    }
    /* weight: 8 words x 64 columns = 4 panels; panel p, group g, column c at (p * kw + g) * 16 + c */
    for (int e = tid; e < KD_QL_TKW * KD_QL_TN; e += 256) {
      const int c = e % KD_QL_TN, g = e / KD_QL_TN;
      const int64_t gc = col0 + c, gg = g0 + g, np = (a.n + 31) / 32 * 32;
      sb[g][c] = gc < np && gg < kw ? a.w[((gc / 16) * kw + gg) * 16 + gc % 16] : 0;
    }
    __syncthreads();
    for (int g = 0; g < KD_QL_TKW; g++) {
      int av[4], bv[4];
      for (int i = 0; i < 4; i++) av[i] = sa[ty + 16 * i][g];
      for (int j = 0; j < 4; j++) bv[j] = sb[g][tx + 16 * j];
      for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) acc[i][j] = __dp4a(av[i], bv[j], acc[i][j]);
    }
    __syncthreads();
  }
  const float inv = a.scratch[2 * KD_QL_RED];
  const int zp = __float_as_int(a.scratch[2 * KD_QL_RED + 1]);
  for (int j = 0; j < 4; j++) {
    const int64_t c = col0 + tx + 16 * j;
    if (c >= a.n) continue;
    const float wi = (float)(1.0 / (double)a.wscale[a.nscale == 1 ? 0 : c]);
    const float s = __fmul_rn(inv, wi), mult = __fdiv_rn(1.0f, s);
    const int corr = (128 - zp) * a.colsum[c];
    for (int i = 0; i < 4; i++) {
      const int64_t r = row0 + ty + 16 * i;
      if (r >= a.m) continue;
      const float v = (float)(acc[i][j] + corr);
      a.y[r * a.n + c] = a.bias ? __fmul_rn(__fadd_rn(v, __fmul_rn(a.bias[c], s)), mult) : __fmul_rn(v, mult);
    }
  }
}

kd_cuda_status kd_cu_qlinear(int device, kd_cuda_op *o) {
  const int64_t m = o->i[0], k = o->i[1], n = o->i[2], kp = o->i[3], nscale = o->i[4];
  if (o->nops != 7 || m <= 0 || k <= 0 || n <= 0 || kp < k || kp % 4 != 0 || (nscale != 1 && nscale != n))
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "quantized linear: bad arguments");
  kd_cu_ql_p a;
  memset(&a, 0, sizeof a);
  const int64_t np = (n + 31) / 32 * 32;
  a.x = (const float *)o->data[0];
  a.w = (const int *)o->data[1];
  a.colsum = (const int *)((const signed char *)o->data[1] + kp * np);
  a.wscale = (const float *)o->data[2];
  a.bias = (const float *)o->data[3];
  a.y = (float *)o->data[4];
  a.xs = (signed char *)o->data[5];
  a.scratch = (float *)o->data[6];
  a.m = m;
  a.k = k;
  a.n = n;
  a.kp = kp;
  a.numel = m * k;
  a.nscale = (int)nscale;
  a.reduce_range = (int)o->i[5];
  const unsigned grid = kd_cu_grid(device, a.numel);
  a.nblocks = (int)(grid < KD_QL_RED ? grid : KD_QL_RED);
  cudaStream_t s = kd_cu_stream(device);
  KD_LAUNCH(a.nblocks, KD_QL_RED, 0, s, kd_cu_ql_minmax_kernel)(a);
  KD_CU_CHECK_LAUNCH("the quantized linear min/max kernel");
  KD_LAUNCH(1, KD_QL_RED, 0, s, kd_cu_ql_qparams_kernel)(a);
  KD_CU_CHECK_LAUNCH("the quantized linear qparams kernel");
  KD_LAUNCH(kd_cu_grid(device, m * kp), KD_CU_THREADS, 0, s, kd_cu_ql_quantize_kernel)(a);
  KD_CU_CHECK_LAUNCH("the quantized linear quantize kernel");
  const dim3 blocks((unsigned)((n + KD_QL_TN - 1) / KD_QL_TN), (unsigned)((m + KD_QL_TM - 1) / KD_QL_TM));
  if (blocks.y > 65535) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "quantized linear: %lld rows are too many", (long long)m);
  KD_LAUNCH(blocks, dim3(16, 16), 0, s, kd_cu_ql_gemm_kernel)(a);
  KD_CU_CHECK_LAUNCH("the quantized linear GEMM kernel");
  return KD_CUDA_OK;
}
