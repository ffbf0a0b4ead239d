/* ops_conv.cu - CUDA convolution (KD_CUDA_OP_CONV): conv1d, conv2d, convTranspose2d and the
 * convolution backward ops, as src/cpu/conv.c (which does every check, makes the operands
 * contiguous and allocates; 1-D convolutions arrive as 2-D ones with h = kh = 1):
 *   forward         out[n, g] = bias + W[g] (og x K) @ im2col(x[n, g]) (K x L)   (gemm beta = 1)
 *   input gradient  gx[n, g]  = col2im(W[g]^T @ gy[n, g])   (= convTranspose2d's forward, + bias)
 *   weight gradient gW[g]    = sum_n gy[n, g] @ im2col(x[n, g])^T
 * with K = (c / groups) * kh * kw, L = oh * ow. im2col/col2im are kernels over a buffer of a
 * chunk of samples (bounded to KD_CU_CONV_COL_BYTES); the products are cuBLAS strided-batched
 * gemms over the samples of the chunk (one per group), or, for the weight gradient, over the
 * groups (one per sample, accumulating with beta = 1). A 1x1 convolution with stride 1 and no
 * padding multiplies the input directly (im2col(x) == x). col2im gathers (each input position
 * sums the columns that read it), so no atomics and a deterministic result.
 * Dtypes: float32, float64, float16/bfloat16 kept in 16 bits with fp32 accumulation (cublasGemmEx
 * compute 32F; the weight gradient accumulates over the samples in a float32 buffer). No TF32.
 * Not the strided iterator: windows overlap, the work is gemms over im2col buffers.
 * UNVERIFIED: written and compiled without a GPU (test/cuda_parity.test.js checks it). */
#include "ops_sort.cuh"

/* ops_matmul.cu: row-major strided-batched gemm on the device's cuBLAS handle. */
kd_cuda_status kd_cu_gemm_rm(int device, int32_t ab_dtype, int32_t c_dtype, bool ta, bool tb, int64_t m, int64_t n,
                             int64_t k, double alpha, const void *a, int64_t lda, int64_t sa, const void *b, int64_t ldb,
                             int64_t sb, double beta, void *c, int64_t ldc, int64_t sc, int64_t batch);

#define KD_CU_CONV_COL_BYTES ((size_t)256 << 20)

struct kd_cu_conv_geom {
  int64_t n, c, h, w, o, oh, ow, groups;
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  int64_t cg, og, K, L, CK; /* derived: channels per group, K, L, rows of a sample's im2col */
};

/* col[s] (CK x L) = im2col of sample s of x (ns samples, c channels of h x w). */
template <typename T>
__global__ void kd_cu_im2col(const kd_cu_conv_geom g, const T *x, T *col, int64_t ns) {
  const int64_t total = ns * g.CK * g.L, step = (int64_t)gridDim.x * blockDim.x;
  const T zero = kd_cu_st<T>(0.0f);
  for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += step) {
    const int64_t l = t % g.L, r = (t / g.L) % g.CK, s = t / (g.L * g.CK);
    const int64_t ch = r / (g.kh * g.kw), i = (r / g.kw) % g.kh, j = r % g.kw;
    const int64_t iy = (l / g.ow) * g.sh - g.ph + i * g.dh, ix = (l % g.ow) * g.sw - g.pw + j * g.dw;
    col[t] = (iy >= 0 && iy < g.h && ix >= 0 && ix < g.w) ? x[((s * g.c + ch) * g.h + iy) * g.w + ix] : zero;
  }
}

/* x[s] (c x h x w) = col2im(col[s]): every position sums the column entries that im2col read from it.
 * col is float32 (C) for float16/bfloat16 x, so the sums round once. */
template <typename T, typename C>
__global__ void kd_cu_col2im(const kd_cu_conv_geom g, const C *col, T *x, int64_t ns, const T *bias) {
  typedef typename kd_cu_ct<T>::type CT;
  const int64_t total = ns * g.c * g.h * g.w, step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += step) {
    const int64_t ix = t % g.w, iy = (t / g.w) % g.h, ch = (t / (g.w * g.h)) % g.c, s = t / (g.w * g.h * g.c);
    const C *cs = col + s * g.CK * g.L;
    CT acc = bias ? kd_cu_ld(bias[ch]) : (CT)0;
    for (int64_t i = 0; i < g.kh; i++) {
      const int64_t hy = iy + g.ph - i * g.dh;
      if (hy < 0 || hy % g.sh != 0 || hy / g.sh >= g.oh) continue;
      for (int64_t j = 0; j < g.kw; j++) {
        const int64_t wx = ix + g.pw - j * g.dw;
        if (wx < 0 || wx % g.sw != 0 || wx / g.sw >= g.ow) continue;
        acc += kd_cu_ld(cs[((ch * g.kh + i) * g.kw + j) * g.L + (hy / g.sh) * g.ow + wx / g.sw]);
      }
    }
    x[t] = kd_cu_st<T>(acc);
  }
}

/* out[t] = bias[(t / inner) % ch] (+ out[t] when add). */
template <typename T>
__global__ void kd_cu_conv_bias(T *out, const T *bias, int64_t total, int64_t inner, int64_t ch, bool add) {
  typedef typename kd_cu_ct<T>::type CT;
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += step)
    out[t] = kd_cu_st<T>((add ? kd_cu_ld(out[t]) : (CT)0) + kd_cu_ld(bias[(t / inner) % ch]));
}

template <typename T>
static kd_cuda_status kd_cu_conv_bias_run(int device, T *out, const T *bias, int64_t total, int64_t inner, int64_t ch,
                                          bool add) {
  if (!bias || total == 0) return KD_CUDA_OK;
  KD_LAUNCH(kd_cu_grid(device, total), KD_CU_THREADS, 0, kd_cu_stream(device), kd_cu_conv_bias<T>)(out, bias, total, inner, ch, add);
  KD_CU_CHECK_LAUNCH("the convolution bias kernel");
  return KD_CUDA_OK;
}

/* Samples per chunk: the im2col buffer of a chunk stays under KD_CU_CONV_COL_BYTES. */
static int64_t kd_cu_conv_chunk(const kd_cu_conv_geom &g, size_t es) {
  const size_t per = (size_t)g.CK * (size_t)g.L * es;
  int64_t nb = per ? (int64_t)(KD_CU_CONV_COL_BYTES / per) : g.n;
  if (nb < 1) nb = 1;
  return nb < g.n ? nb : g.n;
}

/* The gemm operand of samples [n0, n0 + ns) of x (n, c, h, w): x itself for a direct (1x1)
 * convolution, else their im2col in col (launched on the current stream); *stride is the
 * distance between two samples' operands. */
template <typename T>
static kd_cuda_status kd_cu_conv_columns(int device, const kd_cu_conv_geom &g, bool direct, const T *x, int64_t n0,
                                         int64_t ns, kd_cu_scratch &col, unsigned grid, const T **src, int64_t *stride) {
  *src = x + n0 * g.c * g.h * g.w;
  *stride = g.c * g.h * g.w;
  if (direct) return KD_CUDA_OK;
  KD_LAUNCH(grid, KD_CU_THREADS, 0, kd_cu_stream(device), kd_cu_im2col<T>)(g, *src, col.as<T>(), ns);
  KD_CU_CHECK_LAUNCH("the im2col kernel");
  *src = col.as<T>();
  *stride = g.CK * g.L;
  return KD_CUDA_OK;
}

template <typename T>
static kd_cuda_status kd_cu_conv_t(int device, const kd_cuda_op *o, const kd_cu_conv_geom &g) {
  cudaStream_t s = kd_cu_stream(device);
  const int32_t dt = o->dtype;
  const bool direct = g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0 && g.oh == g.h && g.ow == g.w;
  const int64_t HW = g.h * g.w, nb = kd_cu_conv_chunk(g, sizeof(T) < 4 ? 4 : sizeof(T)); /* float32 columns for 16-bit dtypes */
  const T *a = (const T *)o->data[0], *b = (const T *)o->data[1], *bias = (const T *)o->data[2];
  T *out = (T *)o->data[3];
  kd_cu_scratch col(device); /* im2col of a chunk (forward, weight gradient) */
  if (!direct && g.n > 0 && o->code != KD_CUDA_CONV_BACKWARD_INPUT) KD_CU_TRY(col.alloc(sizeof(T) * (size_t)(nb * g.CK * g.L)));
  const unsigned colgrid = kd_cu_grid(device, nb * g.CK * g.L);

  if (o->code == KD_CUDA_CONV_FORWARD) { /* a = x, b = w */
    /* the bias first, then the products added to it (beta = 1): one rounding for 16-bit outputs */
    const size_t obytes = sizeof(T) * (size_t)(g.n * g.o * g.L);
    if (!bias) KD_CU_CHECK(cudaMemsetAsync(out, 0, obytes, s));
    KD_CU_TRY(kd_cu_conv_bias_run<T>(device, out, bias, g.n * g.o * g.L, g.L, g.o, false));
    for (int64_t n0 = 0; n0 < g.n && g.K > 0; n0 += nb) {
      const int64_t ns = g.n - n0 < nb ? g.n - n0 : nb;
      const T *src;
      int64_t sstride;
      KD_CU_TRY(kd_cu_conv_columns<T>(device, g, direct, a, n0, ns, col, colgrid, &src, &sstride));
      for (int64_t gi = 0; gi < g.groups; gi++)
        KD_CU_TRY(kd_cu_gemm_rm(device, dt, dt, false, false, g.og, g.L, g.K, 1.0, b + gi * g.og * g.K, g.K, 0,
                                src + gi * g.K * g.L, g.L, sstride, 1.0, out + (n0 * g.o + gi * g.og) * g.L, g.L, g.o * g.L, ns));
    }
    return KD_CUDA_OK;
  }

  if (o->code == KD_CUDA_CONV_BACKWARD_INPUT) { /* a = gy, b = w */
    typedef typename kd_cu_ct<T>::type C; /* the columns: float32 for float16/bfloat16 */
    const int32_t cdt = sizeof(C) == sizeof(T) ? dt : (int32_t)KD_DTYPE_F32;
    kd_cu_scratch ccol(device);
    if (!direct && g.n > 0) KD_CU_TRY(ccol.alloc(sizeof(C) * (size_t)(nb * g.CK * g.L)));
    if (g.K == 0 || g.og == 0) { /* no products: the bias alone */
      KD_CU_CHECK(cudaMemsetAsync(out, 0, sizeof(T) * (size_t)(g.n * g.c * HW), s));
      return kd_cu_conv_bias_run<T>(device, out, bias, g.n * g.c * HW, HW, g.c, false);
    }
    for (int64_t n0 = 0; n0 < g.n && g.K > 0 && g.og > 0; n0 += nb) {
      const int64_t ns = g.n - n0 < nb ? g.n - n0 : nb;
      void *dst = direct ? (void *)(out + n0 * g.c * HW) : ccol.p;
      const int64_t dstride = direct ? g.c * HW : g.CK * g.L;
      const size_t des = direct ? sizeof(T) : sizeof(C);
      for (int64_t gi = 0; gi < g.groups; gi++)
        KD_CU_TRY(kd_cu_gemm_rm(device, dt, direct ? dt : cdt, true, false, g.K, g.L, g.og, 1.0, b + gi * g.og * g.K, g.K, 0,
                                a + (n0 * g.o + gi * g.og) * g.L, g.L, g.o * g.L, 0.0,
                                (char *)dst + des * (size_t)(gi * g.K * g.L), g.L, dstride, ns));
      if (!direct) {
        KD_LAUNCH(kd_cu_grid(device, ns * g.c * HW), KD_CU_THREADS, 0, s, kd_cu_col2im<T, C>)(g, ccol.as<C>(), out + n0 * g.c * HW, ns, bias);
        KD_CU_CHECK_LAUNCH("the col2im kernel");
      }
    }
    /* col2im added the bias; the direct path adds it now */
    return direct ? kd_cu_conv_bias_run<T>(device, out, bias, g.n * g.c * HW, HW, g.c, true) : KD_CUDA_OK;
  }

  if (o->code == KD_CUDA_CONV_BACKWARD_WEIGHT) { /* a = gy, b = x; out = gw (o x K) */
    const bool half = dt == KD_DTYPE_F16 || dt == KD_DTYPE_BF16;
    const int32_t adt = half ? (int32_t)KD_DTYPE_F32 : dt;
    const size_t acc_es = half ? sizeof(float) : sizeof(T);
    kd_cu_scratch accbuf(device);
    void *acc = out;
    if (half) {
      KD_CU_TRY(accbuf.alloc(acc_es * (size_t)(g.o * g.K)));
      acc = accbuf.p;
    }
    KD_CU_CHECK(cudaMemsetAsync(acc, 0, acc_es * (size_t)(g.o * g.K), s));
    for (int64_t n0 = 0; n0 < g.n && g.L > 0; n0 += nb) {
      const int64_t ns = g.n - n0 < nb ? g.n - n0 : nb;
      const T *src;
      int64_t sstride;
      KD_CU_TRY(kd_cu_conv_columns<T>(device, g, direct, b, n0, ns, col, colgrid, &src, &sstride));
      for (int64_t q = 0; q < ns; q++) /* gW[gi] += gy[n, gi] @ col[n, gi]^T, batched over the groups */
        KD_CU_TRY(kd_cu_gemm_rm(device, dt, adt, false, true, g.og, g.K, g.L, 1.0, a + (n0 + q) * g.o * g.L, g.L, g.og * g.L,
                                src + q * sstride, g.L, g.K * g.L, 1.0, acc, g.K, g.og * g.K, g.groups));
    }
    if (half) { /* the float32 sums to the weight's dtype */
      kd_cuda_array dst, srca;
      memset(&dst, 0, sizeof dst);
      memset(&srca, 0, sizeof srca);
      dst.data = out;
      dst.dtype = dt;
      srca.data = acc;
      srca.dtype = KD_DTYPE_F32;
      dst.ndim = srca.ndim = 1;
      dst.sizes[0] = srca.sizes[0] = g.o * g.K;
      dst.strides[0] = srca.strides[0] = 1;
      KD_CU_TRY(kd_cu_copy(device, &dst, &srca));
    }
    return KD_CUDA_OK;
  }
  return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "conv: bad code %d", (int)o->code);
}

kd_cuda_status kd_cu_conv(int device, kd_cuda_op *o) {
  if (o->nops < 4) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "conv: %d operands", (int)o->nops);
  kd_cu_conv_geom g;
  g.n = o->i[0];
  g.c = o->i[1];
  g.h = o->i[2];
  g.w = o->i[3];
  g.o = o->i[4];
  g.oh = o->i[5];
  g.ow = o->i[6];
  g.groups = o->i[7];
  kd_cu_read_window(g, o->d);
  if (g.n < 0 || g.c < 0 || g.h < 0 || g.w < 0 || g.o < 0 || g.oh < 0 || g.ow < 0 || g.groups < 1 || g.kh < 1 ||
      g.kw < 1 || g.sh < 1 || g.sw < 1 || g.dh < 1 || g.dw < 1 || g.ph < 0 || g.pw < 0 || g.c % g.groups || g.o % g.groups)
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "conv: bad geometry");
  g.cg = g.c / g.groups;
  g.og = g.o / g.groups;
  g.K = g.cg * g.kh * g.kw;
  g.L = g.oh * g.ow;
  g.CK = g.c * g.kh * g.kw;
  /* elements of x, w and y; an empty operand has no storage (its pointer may be NULL) */
  const int64_t xn = g.n * g.c * g.h * g.w, wn = g.o * g.K, yn = g.n * g.o * g.L;
  int64_t in0, in1, outn;
  switch (o->code) {
    case KD_CUDA_CONV_FORWARD: in0 = xn, in1 = wn, outn = yn; break;
    case KD_CUDA_CONV_BACKWARD_INPUT: in0 = yn, in1 = wn, outn = xn; break;
    case KD_CUDA_CONV_BACKWARD_WEIGHT: in0 = yn, in1 = xn, outn = wn; break;
    default: return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "conv: bad code %d", (int)o->code);
  }
  if (outn == 0) return KD_CUDA_OK;
  if ((in0 > 0 && !o->data[0]) || (in1 > 0 && !o->data[1]) || !o->data[3])
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "conv: null operand");
  switch (o->dtype) {
    case KD_DTYPE_F32: return kd_cu_conv_t<float>(device, o, g);
    case KD_DTYPE_F64: return kd_cu_conv_t<double>(device, o, g);
    case KD_DTYPE_F16: return kd_cu_conv_t<__half>(device, o, g);
    case KD_DTYPE_BF16: return kd_cu_conv_t<__nv_bfloat16>(device, o, g);
    default: return kd_cu_not_supported("convolution", o->dtype);
  }
}
