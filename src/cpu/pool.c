/* pool.c - CPU kernel of maxPool2d (values, or values and indices), avgPool2d,
 * adaptiveAvgPool2d and their backward ops (maxPool2dBackward scatters by the argmax indices),
 * selected by op->code. Inputs (N, C, H, W) or (C, H, W) are made contiguous in the compute
 * dtype (float32 for float16/bfloat16) and processed plane by plane (N * C planes), in
 * parallel over planes on kindling's pool: windows overlap, so the strided iterator's
 * elementwise split does not fit. Indices are flat positions h * W + w in each input plane,
 * as PyTorch's. Shapes, checks and messages follow PyTorch 1.13 (Pool.h pool2d_shape_check).
 * Device tensors: the same checks and contiguous buffers, then the device op (KD_DEV_OP_POOL,
 * cuda/ops_pool.cu) instead of kd_pool_run. */
#include <math.h>
#include <stdio.h>

#include "cpu/device_op_ptrs.h"
#include "cpu/nn_common.h"

typedef struct kd_pool_geom {
  int64_t planes, h, w, oh, ow;
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  int64_t divisor;        /* avgPool2d divisorOverride, 0 if none */
  bool count_include_pad;
} kd_pool_geom;

#define T float
#define SFX f32
#include "cpu/pool_loops.inc"
#undef T
#undef SFX
#define T double
#define SFX f64
#include "cpu/pool_loops.inc"
#undef T
#undef SFX

/* PyTorch's pooling_output_shape. */
static int64_t kd_pool_out_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil_mode) {
  int64_t num = in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t q = num >= 0 ? num / stride : -((-num + stride - 1) / stride);
  int64_t out = q + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) out--;
  return out;
}

/* A 2-element size argument: a number or a list of 1 or 2 (PyTorch: "must either be a single
 * int, or a tuple of two ints"); `empty_def`: an absent or empty list takes def[]. */
static kd_status kd_pool_pair(const kd_value *v, const int64_t *def, const char *fn, const char *what, int64_t *out) {
  if (v->kind == KD_VALUE_NONE || (v->kind == KD_VALUE_INTLIST && v->v.ilist.n == 0 && def)) {
    if (!def) return kd_error(KD_ERR_INVALID_ARGUMENT, "%s: %s must either be a single int, or a tuple of two ints", fn, what);
    out[0] = def[0]; out[1] = def[1];
    return KD_OK;
  }
  if (v->kind == KD_VALUE_INT) { out[0] = out[1] = v->v.i; return KD_OK; }
  if (v->kind == KD_VALUE_INTLIST && (v->v.ilist.n == 1 || v->v.ilist.n == 2)) {
    out[0] = v->v.ilist.data[0];
    out[1] = v->v.ilist.data[v->v.ilist.n - 1];
    return KD_OK;
  }
  if (strcmp(what, "stride") == 0)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "%s: stride must either be omitted, a single int, or a tuple of two ints", fn);
  return kd_error(KD_ERR_INVALID_ARGUMENT, "%s: %s must either be a single int, or a tuple of two ints", fn, what);
}

typedef struct kd_pool_job {
  kd_pool_geom g;
  int code;
  bool f64;
  const char *x, *gy;
  const int64_t *ind_in;
  char *y;
  int64_t *ind;
} kd_pool_job;

static void kd_pool_chunk(void *ctx, int64_t p0, int64_t p1) {
  const kd_pool_job *j = (const kd_pool_job *)ctx;
  const kd_pool_geom *g = &j->g;
  switch (j->code) {
    case KD_POOL_MAX:
      if (j->f64) kd_pool_max_f64(g, (const double *)j->x, (double *)j->y, j->ind, p0, p1);
      else kd_pool_max_f32(g, (const float *)j->x, (float *)j->y, j->ind, p0, p1);
      break;
    case KD_POOL_MAX_BACKWARD:
      if (j->f64) kd_pool_max_bwd_f64(g, (const double *)j->gy, j->ind_in, (double *)j->y, p0, p1);
      else kd_pool_max_bwd_f32(g, (const float *)j->gy, j->ind_in, (float *)j->y, p0, p1);
      break;
    case KD_POOL_AVG:
      if (j->f64) kd_pool_avg_f64(g, (const double *)j->x, (double *)j->y, p0, p1);
      else kd_pool_avg_f32(g, (const float *)j->x, (float *)j->y, p0, p1);
      break;
    case KD_POOL_AVG_BACKWARD:
      if (j->f64) kd_pool_avg_bwd_f64(g, (const double *)j->gy, (double *)j->y, p0, p1);
      else kd_pool_avg_bwd_f32(g, (const float *)j->gy, (float *)j->y, p0, p1);
      break;
    case KD_POOL_ADAPTIVE_AVG:
      if (j->f64) kd_pool_adaptive_f64(g, (const double *)j->x, (double *)j->y, p0, p1);
      else kd_pool_adaptive_f32(g, (const float *)j->x, (float *)j->y, p0, p1);
      break;
    case KD_POOL_ADAPTIVE_AVG_BACKWARD:
      if (j->f64) kd_pool_adaptive_bwd_f64(g, (const double *)j->gy, (double *)j->y, p0, p1);
      else kd_pool_adaptive_bwd_f32(g, (const float *)j->gy, (float *)j->y, p0, p1);
      break;
    default: break;
  }
}

static void kd_pool_run(kd_pool_job *j) {
  const kd_pool_geom *g = &j->g;
  int64_t per = g->oh * g->ow * g->kh * g->kw + g->h * g->w;
  if (per < 1) per = 1;
  int64_t grain = KD_PARALLEL_GRAIN / per;
  if (grain < 1) grain = 1;
  if (g->planes > 0) kd_parallel_for(0, g->planes, grain, kd_pool_chunk, j);
}

/* kd_pool_run on a device: the job's pass (code KD_POOL_*) through the device op. */
static kd_status kd_pool_device(const kd_pool_job *j, kd_device dev) {
  const kd_pool_geom *g = &j->g;
  kd_dev_op op;
  memset(&op, 0, sizeof op);
  op.kind = KD_DEV_OP_POOL;
  op.dtype = j->f64 ? KD_DTYPE_F64 : KD_DTYPE_F32;
  switch (j->code) {
    case KD_POOL_MAX: op.code = KD_DEV_POOL_MAX; break;
    case KD_POOL_MAX_BACKWARD: op.code = KD_DEV_POOL_MAX_BACKWARD; break;
    case KD_POOL_AVG: op.code = KD_DEV_POOL_AVG; break;
    case KD_POOL_AVG_BACKWARD: op.code = KD_DEV_POOL_AVG_BACKWARD; break;
    case KD_POOL_ADAPTIVE_AVG: op.code = KD_DEV_POOL_ADAPTIVE_AVG; break;
    case KD_POOL_ADAPTIVE_AVG_BACKWARD: op.code = KD_DEV_POOL_ADAPTIVE_AVG_BACKWARD; break;
    default: return kd_error(KD_ERR_INTERNAL, "pool: code %d", j->code);
  }
  const int64_t iv[7] = {g->planes, g->h, g->w, g->oh, g->ow, g->divisor, g->count_include_pad ? 1 : 0};
  const int64_t dv[8] = {g->kh, g->kw, g->sh, g->sw, g->ph, g->pw, g->dh, g->dw};
  for (int q = 0; q < 7; q++) op.i[q] = iv[q];
  for (int q = 0; q < 8; q++) op.d[q] = (double)dv[q];
  bool bwd = j->code == KD_POOL_MAX_BACKWARD || j->code == KD_POOL_AVG_BACKWARD || j->code == KD_POOL_ADAPTIVE_AVG_BACKWARD;
  void *p[3] = {(void *)(bwd ? j->gy : j->x), j->y, bwd ? (void *)j->ind_in : (void *)j->ind};
  kd_dtype dts[3] = {op.dtype, op.dtype, KD_DTYPE_I64};
  return kd_dev_op_run_ptrs(dev, &op, 3, p, dts);
}

/* kd_pool_run on the job's device. */
static kd_status kd_pool_run_on(kd_pool_job *j, kd_device dev) {
  if (dev.type != KD_DEVICE_CPU) return kd_pool_device(j, dev);
  kd_pool_run(j);
  return KD_OK;
}

typedef struct kd_pool_temps { kd_tensor *t[6]; int n; } kd_pool_temps;
static void kd_pool_keep(kd_pool_temps *s, kd_tensor *t) { s->t[s->n++] = t; }

static kd_status kd_pool_impl(const kd_op_info *op, kd_value *args, kd_pool_temps *tmp, kd_value *outs) {
  char b1[96];
  int code = op->code;
  bool bwd = code == KD_POOL_MAX_BACKWARD || code == KD_POOL_AVG_BACKWARD || code == KD_POOL_ADAPTIVE_AVG_BACKWARD;
  kd_tensor *x = args[bwd ? 1 : 0].v.t, *gy = bwd ? args[0].v.t : NULL;
  int a0 = bwd ? 2 : 1; /* first pooling parameter */
  bool is_max = code == KD_POOL_MAX || code == KD_POOL_MAX_BACKWARD;
  bool is_adaptive = code == KD_POOL_ADAPTIVE_AVG || code == KD_POOL_ADAPTIVE_AVG_BACKWARD;
  const char *fn = is_max ? "max_pool2d" : is_adaptive ? "adaptive_avg_pool2d" : "avg_pool2d";
  kd_pool_geom g;
  memset(&g, 0, sizeof g);
  g.kh = g.kw = g.sh = g.sw = g.dh = g.dw = 1;

  if (x->ndim != 3 && x->ndim != 4) {
    if (is_adaptive)
      return kd_error(KD_ERR_SHAPE, "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got %s",
                      kd_shape_format(x->sizes, x->ndim, b1, (int)sizeof b1));
    return kd_error(KD_ERR_SHAPE, "non-empty 3D or 4D (batch mode) tensor expected for input");
  }
  int64_t C = x->sizes[x->ndim - 3];
  g.h = x->sizes[x->ndim - 2];
  g.w = x->sizes[x->ndim - 1];
  g.planes = C * (x->ndim == 4 ? x->sizes[0] : 1);

  if (is_adaptive) {
    int64_t os[2];
    const kd_value *v = &args[1];
    if (!bwd) {
      if (v->kind == KD_VALUE_INT) { os[0] = os[1] = v->v.i; }
      else if (v->kind == KD_VALUE_INTLIST && v->v.ilist.n == 2) { os[0] = v->v.ilist.data[0]; os[1] = v->v.ilist.data[1]; }
      else if (v->kind == KD_VALUE_INTLIST && v->v.ilist.n == 1) { os[0] = os[1] = v->v.ilist.data[0]; }
      else return kd_error(KD_ERR_INVALID_ARGUMENT, "adaptive_avg_pool2d: output_size must be 2");
      if (os[0] < 0 || os[1] < 0)
        return kd_error(KD_ERR_INVALID_ARGUMENT, "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but received {%lld, %lld}",
                        (long long)os[0], (long long)os[1]);
    } else {
      if (gy->ndim != x->ndim) return kd_error(KD_ERR_SHAPE, "adaptive_avg_pool2d_backward: gradOutput and input must have the same number of dimensions");
      os[0] = gy->sizes[gy->ndim - 2];
      os[1] = gy->sizes[gy->ndim - 1];
    }
    for (int i = 1; i < x->ndim; i++)
      if (x->sizes[i] == 0)
        return kd_error(KD_ERR_SHAPE, "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch dimensions, but input has sizes %s with dimension %d being empty",
                        kd_shape_format(x->sizes, x->ndim, b1, (int)sizeof b1), i);
    g.oh = os[0];
    g.ow = os[1];
  } else {
    int64_t k[2], s[2], p[2], d[2] = {1, 1};
    KD_TRY(kd_pool_pair(&args[a0], NULL, fn, "kernel_size", k));
    KD_TRY(kd_pool_pair(&args[a0 + 1], k, fn, "stride", s));
    int64_t zero[2] = {0, 0}, one[2] = {1, 1};
    KD_TRY(kd_pool_pair(&args[a0 + 2], zero, fn, "padding", p));
    bool ceil_mode;
    if (is_max) {
      KD_TRY(kd_pool_pair(&args[a0 + 3], one, fn, "dilation", d));
      ceil_mode = args[a0 + 4].v.b;
    } else {
      ceil_mode = args[a0 + 3].v.b;
      g.count_include_pad = args[a0 + 4].v.b;
      if (args[a0 + 5].kind == KD_VALUE_INT) {
        g.divisor = args[a0 + 5].v.i;
        if (g.divisor == 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "divisor must be not zero");
      }
    }
    if (s[0] == 0 || s[1] == 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "stride should not be zero");
    if (k[0] <= 0 || k[1] <= 0)
      return kd_error(KD_ERR_INVALID_ARGUMENT, "kernel size should be greater than zero, but got kH: %lld kW: %lld",
                      (long long)k[0], (long long)k[1]);
    if (s[0] < 0 || s[1] < 0)
      return kd_error(KD_ERR_INVALID_ARGUMENT, "stride should be greater than zero, but got dH: %lld dW: %lld",
                      (long long)s[0], (long long)s[1]);
    if (d[0] <= 0 || d[1] <= 0)
      return kd_error(KD_ERR_INVALID_ARGUMENT, "dilation should be greater than zero, but got dilationH: %lld dilationW: %lld",
                      (long long)d[0], (long long)d[1]);
    for (int i = 0; i < 2; i++)
      if (p[i] < 0 || p[i] > k[i] / 2)
        return kd_error(KD_ERR_INVALID_ARGUMENT, "pad should be at most half of kernel size, but got pad=%lld and kernel_size=%lld",
                        (long long)p[i], (long long)k[i]);
    g.kh = k[0]; g.kw = k[1]; g.sh = s[0]; g.sw = s[1]; g.ph = p[0]; g.pw = p[1]; g.dh = d[0]; g.dw = d[1];
    g.oh = kd_pool_out_size(g.h, k[0], p[0], s[0], d[0], ceil_mode);
    g.ow = kd_pool_out_size(g.w, k[1], p[1], s[1], d[1], ceil_mode);
    for (int i = 1; i < x->ndim; i++)
      if (x->sizes[i] == 0)
        return kd_error(KD_ERR_SHAPE, "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:%s",
                        kd_shape_format(x->sizes, x->ndim, b1, (int)sizeof b1));
    if (g.oh < 1 || g.ow < 1)
      return kd_error(KD_ERR_SHAPE, "Given input size: (%lldx%lldx%lld). Calculated output size: (%lldx%lldx%lld). Output size is too small",
                      (long long)C, (long long)g.h, (long long)g.w, (long long)C, (long long)g.oh, (long long)g.ow);
  }

  int64_t ys[4];
  for (int i = 0; i < x->ndim - 2; i++) ys[i] = x->sizes[i];
  ys[x->ndim - 2] = g.oh;
  ys[x->ndim - 1] = g.ow;
  if (bwd) {
    bool ok = gy->ndim == x->ndim;
    for (int i = 0; ok && i < x->ndim; i++) ok = gy->sizes[i] == ys[i];
    if (!ok)
      return kd_error(KD_ERR_SHAPE, "%s_backward: gradOutput of size %s does not match the pooled size", fn,
                      kd_shape_format(gy->sizes, gy->ndim, b1, (int)sizeof b1));
    if (gy->dtype != x->dtype)
      return kd_error(KD_ERR_DTYPE, "expected scalar type %s but found %s", kd_cpu_torch_name(x->dtype), kd_cpu_torch_name(gy->dtype));
  }
  kd_dtype cdt = KD_DTYPE_F32;
  KD_TRY(kd_nn_compute_dtype(x->dtype, bwd ? (is_max ? "max_pool2d_backward" : is_adaptive ? "adaptive_avg_pool2d_backward_cpu" : "avg_pool2d_backward_out_frame")
                                           : (is_max ? "max_pool2d" : is_adaptive ? "adaptive_avg_pool2d" : "avg_pool2d_out_frame"), &cdt));
  kd_pool_job j;
  memset(&j, 0, sizeof j);
  j.g = g;
  j.f64 = cdt == KD_DTYPE_F64;
  kd_device dev = kd_tensor_device(x);

  if (!bwd) {
    kd_tensor *xc, *y, *ind = NULL;
    KD_TRY(kd_nn_prep(x, cdt, &xc)); kd_pool_keep(tmp, xc);
    KD_TRY(kd_tensor_empty(ys, x->ndim, cdt, dev, &y)); kd_pool_keep(tmp, y);
    if (is_max) { KD_TRY(kd_tensor_empty(ys, x->ndim, KD_DTYPE_I64, dev, &ind)); kd_pool_keep(tmp, ind); }
    j.code = code;
    j.x = kd_tensor_data(xc);
    j.y = kd_tensor_data(y);
    j.ind = ind ? (int64_t *)kd_tensor_data(ind) : NULL;
    KD_TRY(kd_pool_run_on(&j, dev));
    kd_tensor *r;
    kd_tensor_retain(y);
    KD_TRY(kd_nn_finish(y, x->dtype, &r));
    kd_out_take(outs, 0, r);
    if (is_max && op->nouts == 2) kd_out_retain(outs, 1, ind);
    return KD_OK;
  }

  kd_tensor *gyc, *gx, *ind = NULL;
  KD_TRY(kd_nn_prep(gy, cdt, &gyc)); kd_pool_keep(tmp, gyc);
  KD_TRY(kd_tensor_empty(x->sizes, x->ndim, cdt, dev, &gx)); kd_pool_keep(tmp, gx);
  if (dev.type == KD_DEVICE_CPU) memset(kd_tensor_data(gx), 0, (size_t)kd_tensor_numel(gx) * kd_dtype_size(cdt)); /* the device op zeroes */
  if (is_max) {
    if (args[7].kind == KD_VALUE_TENSOR) {
      kd_tensor *iv = args[7].v.t;
      bool ok = iv->ndim == x->ndim && iv->dtype == KD_DTYPE_I64;
      for (int i = 0; ok && i < x->ndim; i++) ok = iv->sizes[i] == ys[i];
      if (!ok) return kd_error(KD_ERR_SHAPE, "max_pool2d_backward: indices must be int64 of the pooled size %s",
                               kd_shape_format(ys, x->ndim, b1, (int)sizeof b1));
      KD_TRY(kd_cpu_cast(iv, KD_DTYPE_I64, true, &ind)); kd_pool_keep(tmp, ind);
    } else { /* recompute the argmax positions */
      kd_tensor *xc, *y;
      KD_TRY(kd_nn_prep(x, cdt, &xc)); kd_pool_keep(tmp, xc);
      KD_TRY(kd_tensor_empty(ys, x->ndim, cdt, dev, &y)); kd_pool_keep(tmp, y);
      KD_TRY(kd_tensor_empty(ys, x->ndim, KD_DTYPE_I64, dev, &ind)); kd_pool_keep(tmp, ind);
      kd_pool_job f = j;
      f.code = KD_POOL_MAX;
      f.x = kd_tensor_data(xc);
      f.y = kd_tensor_data(y);
      f.ind = (int64_t *)kd_tensor_data(ind);
      KD_TRY(kd_pool_run_on(&f, dev));
    }
    j.ind_in = (const int64_t *)kd_tensor_data(ind);
  }
  j.code = code;
  j.gy = kd_tensor_data(gyc);
  j.y = kd_tensor_data(gx);
  KD_TRY(kd_pool_run_on(&j, dev));
  kd_tensor *r;
  kd_tensor_retain(gx);
  KD_TRY(kd_nn_finish(gx, x->dtype, &r));
  kd_out_take(outs, 0, r);
  return KD_OK;
}

KD_KERNEL(kd_cpu_pool) {
  (void)ks;
  kd_pool_temps tmp = {.n = 0};
  kd_status st = kd_pool_impl(op, args, &tmp, outs);
  for (int i = 0; i < tmp.n; i++) kd_tensor_release(tmp.t[i]);
  return st;
}
