/* conv.c - CPU kernel of conv1d, conv2d, convTranspose2d and the convolution backward ops
 * (conv2dBackwardInput, conv2dBackwardWeight; they serve conv1d too), selected by op->code.
 *
 * Method: im2col + gemm (OpenBLAS sgemm/dgemm when built with it, see nn_common.h), the columns
 * built a block of output rows at a time (Note [Convolution column blocks]); a 1x1 convolution
 * with stride 1 and no padding multiplies the input directly, and a depthwise one (one input and
 * one output channel per group) runs direct loops. Work is split over
 * the batch on kindling's pool (one im2col buffer per thread, BLAS single-threaded inside);
 * a batch of one runs on the calling thread with OpenBLAS's own threads. The weight gradient
 * sums per-thread partials. 1-D convolutions are 2-D ones with height 1.
 *   forward            out[n, g] = W[g] (O/g x K) @ im2col(x[n, g]) (K x L) + bias
 *   backward input     gx[n, g]  = col2im(W[g]^T @ gy[n, g])   (= convTranspose2d's forward)
 *   backward weight    gW[g]    += gy[n, g] @ im2col(x[n, g])^T
 * Inputs are first made contiguous in the compute dtype (float32 for float16/bfloat16, whose
 * results are rounded back); integer inputs compute in wrapping 64-bit arithmetic where PyTorch
 * 1.13's CPU convolutions take them (kd_conv_compute_dtype). Checks and
 * messages follow PyTorch 1.13's (ConvUtils.h check_shape_forward, "padding='same'").
 * Device tensors: the same checks and contiguous operands, then the device op (KD_DEV_OP_CONV,
 * cuda/ops_conv.cu: im2col + cuBLAS), where float16/bfloat16 stay 16-bit (fp32 accumulation). */
#include <stdio.h>

#include "cpu/device_op_ptrs.h"
#include "cpu/nn_common.h"

typedef struct kd_conv_geom {
  int64_t n, c, h, w;      /* conv input (for convTranspose2d: its output) */
  int64_t o, oh, ow;       /* conv output channels and size (convTranspose2d: its input) */
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  int64_t groups, cg, og;  /* channels per group: input, output */
  bool direct;             /* 1x1, stride 1, no padding: im2col(x) == x */
  bool depthwise;          /* one input and one output channel per group: direct loops */
} kd_conv_geom;

/* Note [Convolution column blocks]
 * im2col of a whole image is K x L (a 64-channel 3x3 convolution of a 224x224 image: 115 MB),
 * written once and read back by the GEMM from memory. The passes instead build the columns of
 * a block of output rows at a time, sized to stay in the cache (KD_CONV_COL_BYTES), and run one
 * GEMM per block into the matching columns of the output (ldc = L). */
#define KD_CONV_COL_BYTES ((int64_t)1 << 20)

/* Output rows per column block: at least one, at most all. */
static int64_t kd_conv_block_rows(const kd_conv_geom *g, int64_t K, size_t es) {
  int64_t row = K * g->ow * (int64_t)es;
  int64_t r = row > 0 ? KD_CONV_COL_BYTES / row : g->oh;
  if (r < 1) r = 1;
  if (r > g->oh) r = g->oh;
  return r;
}

#define T float
#define SFX f32
#include "cpu/conv_loops.inc"
#undef T
#undef SFX
#define T double
#define SFX f64
#include "cpu/conv_loops.inc"
#undef T
#undef SFX
#define T uint64_t
#define SFX u64
#include "cpu/conv_loops.inc"
#undef T
#undef SFX

typedef enum { KD_CONV_PASS_FWD, KD_CONV_PASS_BWD_INPUT, KD_CONV_PASS_BWD_WEIGHT } kd_conv_pass;

typedef struct kd_conv_job {
  kd_conv_geom g;
  kd_conv_pass pass;
  kd_dtype cdt;             /* F32, F64, or I64 (integer inputs, computed as uint64_t: wrapping) */
  const char *a, *b, *bias; /* fwd: x, w, bias; bwd input: gy, w; bwd weight: gy, x */
  char *out;                /* fwd: out; bwd input: gx; bwd weight: per-chunk partials (nchunks x O x K) */
  int64_t nchunks;
  kd_status err;
} kd_conv_job;

/* Calls CALL(SFX, T) for the job's compute dtype. */
#define KD_CONV_TYPED(cdt, CALL)                     \
  switch (cdt) {                                     \
    case KD_DTYPE_F64: CALL(f64, double); break;     \
    case KD_DTYPE_I64: CALL(u64, uint64_t); break;   \
    default: CALL(f32, float); break;                \
  }

static void kd_conv_run_chunk(void *ctx, int64_t c0, int64_t c1) {
  kd_conv_job *j = (kd_conv_job *)ctx;
  for (int64_t ci = c0; ci < c1; ci++) {
    int64_t n0 = j->g.n * ci / j->nchunks, n1 = j->g.n * (ci + 1) / j->nchunks;
    int64_t wn = j->g.o * j->g.cg * j->g.kh * j->g.kw;
    kd_status st = KD_OK;
#define KD_CONV_PASS(SFX, T)                                                                                       \
  if (j->pass == KD_CONV_PASS_FWD)                                                                                 \
    st = kd_conv_fwd_##SFX(&j->g, (const T *)j->a, (const T *)j->b, (const T *)j->bias, (T *)j->out, n0, n1);      \
  else if (j->pass == KD_CONV_PASS_BWD_INPUT)                                                                      \
    st = kd_conv_bwd_input_##SFX(&j->g, (const T *)j->a, (const T *)j->b, (T *)j->out, n0, n1);                    \
  else                                                                                                             \
    st = kd_conv_bwd_weight_##SFX(&j->g, (const T *)j->a, (const T *)j->b, (T *)j->out + ci * wn, n0, n1);
    KD_CONV_TYPED(j->cdt, KD_CONV_PASS)
#undef KD_CONV_PASS
    if (st != KD_OK) __atomic_store_n(&j->err, st, __ATOMIC_RELAXED);
  }
}

/* Runs one pass over the whole batch, in parallel over samples. For the weight pass, `out` is
 * the final gW (O x K): partials are summed into it. */
static kd_status kd_conv_run(kd_conv_job *j) {
  int64_t L = j->g.oh * j->g.ow, K = j->g.cg * j->g.kh * j->g.kw;
  double work = (double)j->g.n * (double)j->g.o * (double)L * (double)K;
  int64_t nt = kd_get_num_threads();
  j->nchunks = j->g.n < nt ? j->g.n : nt;
  if (work < 65536.0 || j->nchunks < 1) j->nchunks = 1;
  j->err = KD_OK;
  size_t es = j->cdt == KD_DTYPE_F32 ? 4 : 8;
  int64_t wn = j->g.o * K;
  char *final = j->out;
  if (j->pass == KD_CONV_PASS_BWD_WEIGHT) {
    if (j->nchunks > 1) {
      j->out = (char *)calloc((size_t)(j->nchunks * wn), es);
      if (!j->out) return kd_error(KD_ERR_OOM, "out of host memory in convolution backward");
    } else
      memset(final, 0, (size_t)wn * es);
  }
  if (j->g.n > 0) {
    kd_nn_parallel_blas(j->nchunks, kd_conv_run_chunk, j);
  }
  if (j->pass == KD_CONV_PASS_BWD_WEIGHT && j->nchunks > 1) {
#define KD_CONV_SUM_PARTIALS(SFX, T)                                               \
  for (int64_t i = 0; i < wn; i++) {                                               \
    T s = 0;                                                                       \
    for (int64_t c = 0; c < j->nchunks; c++) s += ((const T *)j->out)[c * wn + i]; \
    ((T *)final)[i] = s;                                                           \
  }
    KD_CONV_TYPED(j->cdt, KD_CONV_SUM_PARTIALS)
#undef KD_CONV_SUM_PARTIALS
    free(j->out);
    j->out = final;
  }
  if (j->err != KD_OK) return kd_error(KD_ERR_OOM, "out of host memory in convolution");
  return KD_OK;
}

/* One pass on a device (KD_DEV_CONV_* code; operands as kd_conv_job's, bias for the forward
 * and transposed passes), every buffer contiguous of dtype dt. */
static kd_status kd_conv_device(const kd_conv_geom *g, int code, kd_dtype dt, kd_device dev, const void *a, const void *b,
                                const void *bias, void *out) {
  kd_dev_op op;
  memset(&op, 0, sizeof op);
  op.kind = KD_DEV_OP_CONV;
  op.code = code;
  op.dtype = dt;
  const int64_t iv[8] = {g->n, g->c, g->h, g->w, g->o, g->oh, g->ow, g->groups};
  const int64_t dv[8] = {g->kh, g->kw, g->sh, g->sw, g->ph, g->pw, g->dh, g->dw};
  for (int q = 0; q < 8; q++) op.i[q] = iv[q], op.d[q] = (double)dv[q];
  void *p[4] = {(void *)a, (void *)b, (void *)bias, out};
  kd_dtype dts[4] = {dt, dt, dt, dt};
  return kd_dev_op_run_ptrs(dev, &op, 4, p, dts);
}

/* The dtype a convolution of x computes in (before kd_conv_device_dtype): kd_nn_compute_dtype's,
 * plus PyTorch 1.13's integer CPU convolutions, conv1d/conv2d of every integer type and
 * convTranspose2d of int64, computed in wrapping 64-bit arithmetic (equal, modulo the type's
 * width, to the type's own wrapping arithmetic) and converted back. */
static kd_status kd_conv_compute_dtype(const kd_tensor *x, bool transposed, const char *kernel, kd_dtype *cdt) {
  kd_dtype dt = x->dtype;
  if (kd_tensor_device(x).type == KD_DEVICE_CPU && !kd_dtype_is_float(dt) && dt != KD_DTYPE_BOOL &&
      (!transposed || dt == KD_DTYPE_I64)) {
    *cdt = KD_DTYPE_I64;
    return KD_OK;
  }
  return kd_nn_compute_dtype(dt, kernel, cdt);
}

/* The compute dtype on a device: float16/bfloat16 stay (cuBLAS accumulates in float32). */
static kd_dtype kd_conv_device_dtype(const kd_tensor *t, kd_dtype cdt) {
  if (kd_tensor_device(t).type != KD_DEVICE_CPU && (t->dtype == KD_DTYPE_F16 || t->dtype == KD_DTYPE_BF16)) return t->dtype;
  return cdt;
}

/* ---- argument parsing and PyTorch's checks ---- */

typedef struct kd_conv_params {
  int nd;                       /* spatial dims: 1 or 2 */
  int64_t stride[2], pad[2], dil[2], outpad[2];
  bool same;                    /* padding='same' (pad[] then holds the left/top padding) */
  int64_t groups;
} kd_conv_params;

/* stride/padding/dilation/groups at args[si], args[si+1], args[di], args[gi]. */
static kd_status kd_conv_read_params(const kd_value *args, int si, int di, int gi, int nd, const char *fn,
                                     kd_conv_params *p) {
  p->nd = nd;
  p->same = false;
  KD_TRY(kd_nn_ints(&args[si], nd, 1, fn, "stride", p->stride));
  KD_TRY(kd_nn_ints(&args[di], nd, 1, fn, "dilation", p->dil));
  const kd_value *pv = &args[si + 1];
  if (pv->kind == KD_VALUE_STRING) {
    if (strcmp(pv->v.str, "valid") == 0) {
      p->pad[0] = p->pad[1] = 0;
    } else if (strcmp(pv->v.str, "same") == 0) {
      p->same = true;
      p->pad[0] = p->pad[1] = 0;
    } else
      return kd_error(KD_ERR_INVALID_ARGUMENT, "Invalid padding string: '%s'", pv->v.str);
  } else
    KD_TRY(kd_nn_ints(pv, nd, 0, fn, "padding", p->pad));
  p->groups = args[gi].kind == KD_VALUE_INT ? args[gi].v.i : 1;
  for (int i = 0; i < nd; i++) {
    if (p->stride[i] <= 0) return kd_error(KD_ERR_NOT_SUPPORTED, "non-positive stride is not supported");
    if (p->pad[i] < 0) return kd_error(KD_ERR_NOT_SUPPORTED, "negative padding is not supported");
    if (p->dil[i] <= 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "dilation should be greater than zero");
  }
  if (p->groups <= 0) return kd_error(KD_ERR_NOT_SUPPORTED, "non-positive groups is not supported");
  if (p->same)
    for (int i = 0; i < nd; i++)
      if (p->stride[i] != 1)
        return kd_error(KD_ERR_NOT_SUPPORTED, "padding='same' is not supported for strided convolutions");
  return KD_OK;
}

/* Fills g for a convolution of input sizes is[] (batched, 2 + nd dims) with weight sizes ws[]
 * (O, C/groups, k...), checking as PyTorch's check_shape_forward. transposed: the input of the
 * op is the conv's output (convTranspose2d); then ws = (C_in, C_out/groups, k...). */
static kd_status kd_conv_geometry(const int64_t *is, const int64_t *ws, const kd_conv_params *p, bool transposed,
                                  kd_conv_geom *g) {
  char b1[96], b2[96];
  int nd = p->nd, wd = nd + 2;
  int64_t k[2] = {1, 1}, sz[2] = {1, is[2]};
  if (nd == 2) { k[0] = ws[2]; k[1] = ws[3]; sz[0] = is[2]; sz[1] = is[3]; }
  else k[1] = ws[2];
  if (ws[0] < p->groups)
    return kd_error(KD_ERR_SHAPE, "Given groups=%lld, expected weight to be at least %lld at dimension 0, but got weight of size %s instead",
                    (long long)p->groups, (long long)p->groups, kd_shape_format(ws, wd, b1, (int)sizeof b1));
  if (ws[0] % p->groups != 0)
    return kd_error(KD_ERR_SHAPE, "Given groups=%lld, expected weight to be divisible by %lld at dimension 0, but got weight of size %s instead",
                    (long long)p->groups, (long long)p->groups, kd_shape_format(ws, wd, b1, (int)sizeof b1));
  int64_t in_ch = transposed ? ws[0] : ws[1] * p->groups;
  if (is[1] != in_ch) {
    if (transposed)
      return kd_error(KD_ERR_SHAPE, "Given transposed=1, weight of size %s, expected input%s to have %lld channels, but got %lld channels instead",
                      kd_shape_format(ws, wd, b1, (int)sizeof b1), kd_shape_format(is, wd, b2, (int)sizeof b2), (long long)in_ch, (long long)is[1]);
    return kd_error(KD_ERR_SHAPE, "Given groups=%lld, weight of size %s, expected input%s to have %lld channels, but got %lld channels instead",
                    (long long)p->groups, kd_shape_format(ws, wd, b1, (int)sizeof b1), kd_shape_format(is, wd, b2, (int)sizeof b2),
                    (long long)in_ch, (long long)is[1]);
  }
  g->n = is[0];
  g->groups = p->groups;
  g->kh = k[0]; g->kw = k[1];
  int off = 2 - nd; /* 1-D: dim 0 of the 2-D geometry is the dummy height */
  int64_t s2[2] = {1, 1}, p2[2] = {0, 0}, d2[2] = {1, 1}, op2[2] = {0, 0};
  for (int i = 0; i < nd; i++) { s2[i + off] = p->stride[i]; p2[i + off] = p->pad[i]; d2[i + off] = p->dil[i]; op2[i + off] = p->outpad[i]; }
  g->sh = s2[0]; g->sw = s2[1]; g->dh = d2[0]; g->dw = d2[1];
  /* every size below is computed from user integers: check they fit in int64 first (See Note
   * [Checked shape arithmetic] in core/shape.h) */
  for (int i = 0; i < 2; i++) {
    int64_t span, padded, full;
    bool over = kd_mul_overflows(d2[i], k[i] - 1, &span) || kd_add_overflows(span, 1, &span) ||
                kd_mul_overflows(p2[i], 2, &padded) || kd_add_overflows(padded, sz[i], &padded) ||
                (transposed && (kd_mul_overflows(sz[i] - 1, s2[i], &full) || kd_add_overflows(full, span, &full) ||
                                kd_add_overflows(full, op2[i], &full)));
    if (over)
      return kd_error(KD_ERR_INVALID_ARGUMENT, "convolution: the sizes from stride %lld, padding %lld and dilation %lld "
                      "overflow int64", (long long)s2[i], (long long)p2[i], (long long)d2[i]);
  }
  if (!transposed) {
    g->c = is[1]; g->h = sz[0]; g->w = sz[1];
    g->o = ws[0];
    int64_t out[2];
    for (int i = 0; i < 2; i++) {
      int64_t span = d2[i] * (k[i] - 1) + 1;
      if (p->same) {
        p2[i] = (span - 1) / 2; /* PyTorch pads the odd extra on the right/bottom */
        out[i] = sz[i];
      } else {
        if (sz[i] + 2 * p2[i] < span) {
          int64_t ps[2], ks[2];
          for (int q = 0; q < nd; q++) { ps[q] = sz[q + off] + 2 * p2[q + off]; ks[q] = d2[q + off] * (k[q + off] - 1) + 1; }
          if (nd == 2)
            return kd_error(KD_ERR_SHAPE, "Calculated padded input size per channel: (%lld x %lld). Kernel size: (%lld x %lld). Kernel size can't be greater than actual input size",
                            (long long)ps[0], (long long)ps[1], (long long)ks[0], (long long)ks[1]);
          return kd_error(KD_ERR_SHAPE, "Calculated padded input size per channel: (%lld). Kernel size: (%lld). Kernel size can't be greater than actual input size",
                          (long long)ps[0], (long long)ks[0]);
        }
        out[i] = (sz[i] + 2 * p2[i] - span) / s2[i] + 1;
      }
    }
    g->oh = out[0]; g->ow = out[1];
  } else {
    g->o = is[1]; g->oh = sz[0]; g->ow = sz[1];
    g->c = ws[1] * p->groups;
    int64_t out[2];
    for (int i = 0; i < 2; i++) {
      if (op2[i] < 0 || (op2[i] >= s2[i] && op2[i] >= d2[i]))
        return kd_error(KD_ERR_INVALID_ARGUMENT, "output padding must be smaller than either stride or dilation, but got output_padding_height: %lld output_padding_width: %lld stride_height: %lld stride_width: %lld dilation_height: %lld dilation_width: %lld",
                        (long long)op2[0], (long long)op2[1], (long long)s2[0], (long long)s2[1], (long long)d2[0], (long long)d2[1]);
      out[i] = (sz[i] - 1) * s2[i] - 2 * p2[i] + d2[i] * (k[i] - 1) + op2[i] + 1;
    }
    if (out[0] <= 0 || out[1] <= 0) {
      if (nd == 2)
        return kd_error(KD_ERR_SHAPE, "Given input size per channel: (%lld x %lld). Calculated output size per channel: (%lld x %lld). Output size is too small",
                        (long long)sz[0], (long long)sz[1], (long long)out[0], (long long)out[1]);
      return kd_error(KD_ERR_SHAPE, "Given input size per channel: (%lld). Calculated output size per channel: (%lld). Output size is too small",
                      (long long)sz[1], (long long)out[1]);
    }
    g->h = out[0]; g->w = out[1];
  }
  g->ph = p2[0]; g->pw = p2[1];
  g->cg = g->c / g->groups;
  g->og = g->o / g->groups;
  g->direct = g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && g->ph == 0 && g->pw == 0;
  g->depthwise = g->cg == 1 && g->og == 1 && !g->direct;
  return KD_OK;
}

static const char *kd_conv_cpp_name(kd_dtype t) {
  switch (t) {
    case KD_DTYPE_F32: return "float";
    case KD_DTYPE_F64: return "double";
    case KD_DTYPE_F16: return "c10::Half";
    case KD_DTYPE_BF16: return "c10::BFloat16";
    default: return kd_cpu_torch_name(t);
  }
}

/* ---- the kernel ---- */

/* Releases the temporaries of one call. */
typedef struct kd_conv_temps { kd_tensor *t[6]; int n; } kd_conv_temps;
static kd_tensor *kd_conv_keep(kd_conv_temps *s, kd_tensor *t) { s->t[s->n++] = t; return t; }
static void kd_conv_release(kd_conv_temps *s) { for (int i = 0; i < s->n; i++) kd_tensor_release(s->t[i]); s->n = 0; }

static kd_status kd_conv_impl(const kd_op_info *op, kd_value *args, kd_conv_temps *tmp, kd_tensor **result) {
  int code = op->code;
  char b1[96], b2[96];
  kd_conv_params p;
  memset(&p, 0, sizeof p);
  const char *fname = code == KD_CONV_1D ? "conv1d" : code == KD_CONV_TRANSPOSE_2D ? "conv_transpose2d" : "conv2d";

  if (code == KD_CONV_1D || code == KD_CONV_2D || code == KD_CONV_TRANSPOSE_2D) {
    kd_tensor *x = args[0].v.t, *w = args[1].v.t;
    kd_tensor *bias = args[2].kind == KD_VALUE_TENSOR ? args[2].v.t : NULL;
    int nd = code == KD_CONV_1D ? 1 : 2;
    if (x->ndim != nd + 1 && x->ndim != nd + 2)
      return kd_error(KD_ERR_SHAPE, "Expected %dD (unbatched) or %dD (batched) input to %s, but got input of size: %s",
                      nd + 1, nd + 2, fname, kd_shape_format(x->sizes, x->ndim, b1, (int)sizeof b1));
    if (code == KD_CONV_TRANSPOSE_2D) {
      KD_TRY(kd_conv_read_params(args, 3, 7, 6, nd, fname, &p));
      KD_TRY(kd_nn_ints(&args[5], nd, 0, fname, "output_padding", p.outpad));
    } else
      KD_TRY(kd_conv_read_params(args, 3, 5, 6, nd, fname, &p));
    bool batched = x->ndim == nd + 2;
    int64_t is[4];
    is[0] = batched ? x->sizes[0] : 1;
    for (int i = 0; i < nd + 1; i++) is[i + 1] = x->sizes[i + (batched ? 1 : 0)];
    if (w->ndim != nd + 2)
      return kd_error(KD_ERR_SHAPE, "Expected %d-dimensional input for %d-dimensional weight %s, but got %d-dimensional input of size %s instead",
                      w->ndim, w->ndim, kd_shape_format(w->sizes, w->ndim, b1, (int)sizeof b1), nd + 2,
                      kd_shape_format(is, nd + 2, b2, (int)sizeof b2));
    if (x->dtype != w->dtype)
      return kd_error(KD_ERR_DTYPE, "expected scalar type %s but found %s", kd_cpu_torch_name(x->dtype), kd_cpu_torch_name(w->dtype));
    if (bias && bias->dtype != x->dtype)
      return kd_error(KD_ERR_DTYPE, "Input type (%s) and bias type (%s) should be the same", kd_conv_cpp_name(x->dtype),
                      kd_conv_cpp_name(bias->dtype));
    kd_conv_geom g;
    KD_TRY(kd_conv_geometry(is, w->sizes, &p, code == KD_CONV_TRANSPOSE_2D, &g));
    int64_t nb = code == KD_CONV_TRANSPOSE_2D ? w->sizes[1] * p.groups : w->sizes[0];
    if (bias && (bias->ndim != 1 || bias->sizes[0] != nb))
      return kd_error(KD_ERR_SHAPE, "Given %sweight of size %s, expected bias to be 1-dimensional with %lld elements, but got bias of size %s instead",
                      code == KD_CONV_TRANSPOSE_2D ? "transposed=1, " : "", kd_shape_format(w->sizes, w->ndim, b1, (int)sizeof b1),
                      (long long)nb, kd_shape_format(bias->sizes, bias->ndim, b2, (int)sizeof b2));
    kd_dtype cdt = KD_DTYPE_F32;
    KD_TRY(kd_conv_compute_dtype(x, code == KD_CONV_TRANSPOSE_2D,
                                 code == KD_CONV_TRANSPOSE_2D ? "slow_conv_transpose2d_out_cpu" : "slow_conv2d_cpu", &cdt));
    cdt = kd_conv_device_dtype(x, cdt);
    bool on_dev = kd_tensor_device(x).type != KD_DEVICE_CPU;
    kd_tensor *xc, *wc, *bc = NULL;
    KD_TRY(kd_nn_prep(x, cdt, &xc)); kd_conv_keep(tmp, xc);
    KD_TRY(kd_nn_prep(w, cdt, &wc)); kd_conv_keep(tmp, wc);
    if (bias) { KD_TRY(kd_nn_prep(bias, cdt, &bc)); kd_conv_keep(tmp, bc); }
    int64_t os[4];
    int on = 0;
    if (batched) os[on++] = g.n;
    if (code == KD_CONV_TRANSPOSE_2D) { os[on++] = g.c; os[on++] = g.h; os[on++] = g.w; }
    else { os[on++] = g.o; if (nd == 2) os[on++] = g.oh; os[on++] = g.ow; }
    kd_tensor *out;
    KD_TRY(kd_tensor_empty(os, on, cdt, kd_tensor_device(x), &out));
    kd_conv_keep(tmp, out);
    kd_conv_job j;
    memset(&j, 0, sizeof j);
    j.g = g;
    j.cdt = cdt;
    j.out = kd_tensor_data(out);
    if (on_dev) {
      KD_TRY(kd_conv_device(&g, code == KD_CONV_TRANSPOSE_2D ? KD_DEV_CONV_BACKWARD_INPUT : KD_DEV_CONV_FORWARD, cdt,
                            kd_tensor_device(x), kd_tensor_data(xc), kd_tensor_data(wc), bc ? kd_tensor_data(bc) : NULL,
                            j.out));
    } else if (code == KD_CONV_TRANSPOSE_2D) {
      j.pass = KD_CONV_PASS_BWD_INPUT;
      j.a = kd_tensor_data(xc); j.b = kd_tensor_data(wc);
      KD_TRY(kd_conv_run(&j));
      if (bc) { /* add the bias per output channel */
        int64_t HW = g.h * g.w;
        for (int64_t n = 0; n < g.n; n++)
          for (int64_t c = 0; c < g.c; c++) {
#define KD_CONV_ADD_BIAS(SFX, T)                                                  \
  {                                                                               \
    T b = ((const T *)kd_tensor_data(bc))[c], *o = (T *)j.out + (n * g.c + c) * HW; \
    for (int64_t i = 0; i < HW; i++) o[i] += b;                                   \
  }
            KD_CONV_TYPED(cdt, KD_CONV_ADD_BIAS)
#undef KD_CONV_ADD_BIAS
          }
      }
    } else {
      j.pass = KD_CONV_PASS_FWD;
      j.a = kd_tensor_data(xc); j.b = kd_tensor_data(wc); j.bias = bc ? kd_tensor_data(bc) : NULL;
      KD_TRY(kd_conv_run(&j));
    }
    kd_tensor_retain(out);
    return kd_nn_finish(out, x->dtype, result);
  }

  /* backward ops: (gradOutput, weight|input, sizes, stride, padding, dilation, groups) */
  bool bw_input = code == KD_CONV_BACKWARD_INPUT;
  kd_tensor *gy = args[0].v.t, *other = args[1].v.t;
  const kd_value *sv = &args[2];
  fname = bw_input ? "conv2dBackwardInput" : "conv2dBackwardWeight";
  if (sv->kind != KD_VALUE_INTLIST) return kd_error(KD_ERR_INVALID_ARGUMENT, "%s: sizes must be a list", fname);
  const int64_t *ws = bw_input ? other->sizes : sv->v.ilist.data;
  int wd = bw_input ? other->ndim : sv->v.ilist.n;
  const int64_t *xs = bw_input ? sv->v.ilist.data : other->sizes;
  int xd = bw_input ? sv->v.ilist.n : other->ndim;
  if (wd != 3 && wd != 4) return kd_error(KD_ERR_SHAPE, "%s: expected a 3-D or 4-D weight, got %d dims", fname, wd);
  int nd = wd - 2;
  if (xd != nd + 1 && xd != nd + 2)
    return kd_error(KD_ERR_SHAPE, "%s: expected a %dD or %dD input, but got input of size: %s", fname, nd + 1, nd + 2,
                    kd_shape_format(xs, xd, b1, (int)sizeof b1));
  KD_TRY(kd_conv_read_params(args, 3, 5, 6, nd, fname, &p));
  bool batched = xd == nd + 2;
  int64_t is[4];
  is[0] = batched ? xs[0] : 1;
  for (int i = 0; i < nd + 1; i++) is[i + 1] = xs[i + (batched ? 1 : 0)];
  kd_conv_geom g;
  KD_TRY(kd_conv_geometry(is, ws, &p, false, &g));
  int64_t gys[4] = {g.n, g.o, g.oh, g.ow};
  if (nd == 1) gys[2] = g.ow;
  bool ok = gy->ndim == xd;
  for (int i = 0; ok && i < nd + 1; i++) ok = gy->sizes[i + (batched ? 1 : 0)] == gys[i + 1];
  if (ok && batched) ok = gy->sizes[0] == g.n;
  if (!ok)
    return kd_error(KD_ERR_SHAPE, "%s: gradOutput of size %s does not match the convolution's output size", fname,
                    kd_shape_format(gy->sizes, gy->ndim, b1, (int)sizeof b1));
  if (gy->dtype != other->dtype)
    return kd_error(KD_ERR_DTYPE, "expected scalar type %s but found %s", kd_cpu_torch_name(gy->dtype), kd_cpu_torch_name(other->dtype));
  kd_dtype cdt = KD_DTYPE_F32;
  KD_TRY(kd_nn_compute_dtype(gy->dtype, "slow_conv2d_backward_cpu", &cdt));
  cdt = kd_conv_device_dtype(gy, cdt);
  kd_tensor *gyc, *oc;
  KD_TRY(kd_nn_prep(gy, cdt, &gyc)); kd_conv_keep(tmp, gyc);
  KD_TRY(kd_nn_prep(other, cdt, &oc)); kd_conv_keep(tmp, oc);
  kd_tensor *out;
  KD_TRY(kd_tensor_empty(bw_input ? xs : ws, bw_input ? xd : wd, cdt, kd_tensor_device(gy), &out));
  kd_conv_keep(tmp, out);
  kd_conv_job j;
  memset(&j, 0, sizeof j);
  j.g = g;
  j.cdt = cdt;
  j.pass = bw_input ? KD_CONV_PASS_BWD_INPUT : KD_CONV_PASS_BWD_WEIGHT;
  j.a = kd_tensor_data(gyc);
  j.b = kd_tensor_data(oc);
  j.out = kd_tensor_data(out);
  if (kd_tensor_device(gy).type != KD_DEVICE_CPU)
    KD_TRY(kd_conv_device(&g, bw_input ? KD_DEV_CONV_BACKWARD_INPUT : KD_DEV_CONV_BACKWARD_WEIGHT, cdt, kd_tensor_device(gy),
                          j.a, j.b, NULL, j.out));
  else
    KD_TRY(kd_conv_run(&j));
  kd_tensor_retain(out);
  return kd_nn_finish(out, gy->dtype, result);
}

KD_KERNEL(kd_cpu_conv) {
  (void)ks;
  kd_conv_temps tmp = {.n = 0};
  kd_tensor *r = NULL;
  kd_status st = kd_conv_impl(op, args, &tmp, &r);
  kd_conv_release(&tmp);
  if (st != KD_OK) return st;
  kd_out_take(outs, 0, r);
  return KD_OK;
}
