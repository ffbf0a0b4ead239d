/* interpolate.c - CPU kernel of interpolate (modes 'nearest', 'linear' on (N, C, L),
 * 'bilinear' on (N, C, H, W)) and interpolateBackward, selected by op->code.
 * Source positions are PyTorch's (UpSample.h: nearest_idx, area_pixel_compute_scale /
 * area_pixel_compute_source_index, computed in the compute dtype; a given scaleFactor is used
 * as is, 1/scale, as F.interpolate does without recompute_scale_factor). The per-axis taps
 * (two indices, two weights) are precomputed once; 1-D inputs are 2-D with height 1. Inputs
 * are made contiguous in the compute dtype (float32 for float16/bfloat16), and planes (N * C)
 * run in parallel on kindling's pool (the backward scatters within a plane only). On a device the
 * taps are copied over and KD_DEV_OP_INTERP (cuda/ops_pad.cu) runs one thread per output element. */
#include <math.h>
#include <stdio.h>

#include "cpu/nn_common.h"
#include "cpu/device_op.h"

typedef struct kd_interp_axis {
  int64_t *i0, *i1;
  double *l0, *l1;
} kd_interp_axis;

typedef struct kd_interp_job {
  int64_t planes, h, w, oh, ow;
  bool nearest, f64, backward;
  kd_interp_axis ax[2]; /* 0: height, 1: width */
  const char *src;
  char *dst;
} kd_interp_job;

/* Taps of one axis: in -> out with an optional scale factor. */
static void kd_interp_taps(kd_interp_axis *a, int64_t in, int64_t out, bool has_scale, double scale, bool nearest,
                           bool align, bool f64) {
  for (int64_t o = 0; o < out; o++) {
    if (nearest) {
      int64_t i;
      if (out == in) i = o;
      else if (out == 2 * in) i = o >> 1;
      else {
        float s = has_scale ? (float)(1.0 / scale) : (float)in / (float)out;
        i = (int64_t)floorf((float)o * s);
        if (i > in - 1) i = in - 1;
      }
      a->i0[o] = a->i1[o] = i;
      a->l0[o] = 1;
      a->l1[o] = 0;
      continue;
    }
    double src;
    if (f64) {
      double s = align ? (out > 1 ? (double)(in - 1) / (double)(out - 1) : 0.0) : has_scale ? 1.0 / scale : (double)in / (double)out;
      src = align ? s * (double)o : s * ((double)o + 0.5) - 0.5;
      if (!align && src < 0) src = 0;
    } else {
      float s = align ? (out > 1 ? (float)(in - 1) / (float)(out - 1) : 0.0f) : has_scale ? (float)(1.0 / scale) : (float)in / (float)out;
      float sf = align ? s * (float)o : s * ((float)o + 0.5f) - 0.5f;
      if (!align && sf < 0) sf = 0;
      src = sf;
    }
    int64_t i0 = (int64_t)src;
    if (i0 > in - 1) i0 = in - 1;
    double l1 = src - (double)i0;
    if (!f64) l1 = (float)((float)src - (float)i0);
    if (l1 < 0) l1 = 0;
    if (l1 > 1) l1 = 1;
    a->i0[o] = i0;
    a->i1[o] = i0 + (i0 < in - 1 ? 1 : 0);
    a->l1[o] = l1;
    a->l0[o] = f64 ? 1.0 - l1 : (double)(1.0f - (float)l1);
  }
}

#define KD_INTERP_LOOPS(T, SFX)                                                                          \
  static void kd_interp_fwd_##SFX(const kd_interp_job *j, int64_t p0, int64_t p1) {                     \
    const kd_interp_axis *ah = &j->ax[0], *aw = &j->ax[1];                                              \
    for (int64_t p = p0; p < p1; p++) {                                                                 \
      const T *x = (const T *)j->src + p * j->h * j->w;                                                 \
      T *y = (T *)j->dst + p * j->oh * j->ow;                                                           \
      for (int64_t oy = 0; oy < j->oh; oy++) {                                                          \
        const T *r0 = x + ah->i0[oy] * j->w, *r1 = x + ah->i1[oy] * j->w;                               \
        T *yr = y + oy * j->ow;                                                                         \
        if (j->nearest) {                                                                               \
          for (int64_t ox = 0; ox < j->ow; ox++) yr[ox] = r0[aw->i0[ox]];                               \
          continue;                                                                                     \
        }                                                                                               \
        const T h0 = (T)ah->l0[oy], h1 = (T)ah->l1[oy];                                                 \
        for (int64_t ox = 0; ox < j->ow; ox++) {                                                        \
          const int64_t a = aw->i0[ox], b = aw->i1[ox];                                                 \
          const T w0 = (T)aw->l0[ox], w1 = (T)aw->l1[ox];                                               \
          yr[ox] = h0 * (w0 * r0[a] + w1 * r0[b]) + h1 * (w0 * r1[a] + w1 * r1[b]);                     \
        }                                                                                               \
      }                                                                                                 \
    }                                                                                                   \
  }                                                                                                     \
  static void kd_interp_bwd_##SFX(const kd_interp_job *j, int64_t p0, int64_t p1) {                     \
    const kd_interp_axis *ah = &j->ax[0], *aw = &j->ax[1];                                              \
    for (int64_t p = p0; p < p1; p++) {                                                                 \
      const T *gy = (const T *)j->src + p * j->oh * j->ow;                                              \
      T *gx = (T *)j->dst + p * j->h * j->w;                                                            \
      memset(gx, 0, (size_t)(j->h * j->w) * sizeof(T));                                                 \
      for (int64_t oy = 0; oy < j->oh; oy++) {                                                          \
        T *r0 = gx + ah->i0[oy] * j->w, *r1 = gx + ah->i1[oy] * j->w;                                   \
        const T h0 = (T)ah->l0[oy], h1 = (T)ah->l1[oy];                                                 \
        const T *gr = gy + oy * j->ow;                                                                  \
        for (int64_t ox = 0; ox < j->ow; ox++) {                                                        \
          const int64_t a = aw->i0[ox], b = aw->i1[ox];                                                 \
          const T w0 = (T)aw->l0[ox], w1 = (T)aw->l1[ox], g = gr[ox];                                   \
          r0[a] += h0 * w0 * g;                                                                         \
          r0[b] += h0 * w1 * g;                                                                         \
          r1[a] += h1 * w0 * g;                                                                         \
          r1[b] += h1 * w1 * g;                                                                         \
        }                                                                                               \
      }                                                                                                 \
    }                                                                                                   \
  }
KD_INTERP_LOOPS(float, f32)
KD_INTERP_LOOPS(double, f64)

static void kd_interp_chunk(void *ctx, int64_t p0, int64_t p1) {
  const kd_interp_job *j = (const kd_interp_job *)ctx;
  if (j->backward) {
    if (j->f64) kd_interp_bwd_f64(j, p0, p1);
    else kd_interp_bwd_f32(j, p0, p1);
  } else {
    if (j->f64) kd_interp_fwd_f64(j, p0, p1);
    else kd_interp_fwd_f32(j, p0, p1);
  }
}

static const char *kd_interp_list(char *buf, size_t cap, const int64_t *s, int n) {
  size_t p = 0;
  p += (size_t)snprintf(buf + p, cap - p, "[");
  for (int i = 0; i < n && p < cap; i++) p += (size_t)snprintf(buf + p, cap - p, i ? ", %lld" : "%lld", (long long)s[i]);
  if (p < cap) snprintf(buf + p, cap - p, "]");
  return buf;
}

/* The device launch: the host taps (ib: int64, lb: double, `total` each) copied to the device. */
static kd_status kd_interp_device(const kd_interp_job *j, const int64_t *ib, const double *lb, int64_t total, kd_device dev,
                                  kd_dtype cdt, bool bwd) {
  kd_tensor *hi = NULL, *hl = NULL, *di = NULL, *dl = NULL;
  kd_status st = kd_tensor_empty(&total, 1, KD_DTYPE_I64, kd_device_cpu(), &hi);
  if (st == KD_OK) st = kd_tensor_empty(&total, 1, KD_DTYPE_F64, kd_device_cpu(), &hl);
  if (st == KD_OK) {
    memcpy(kd_tensor_data(hi), ib, (size_t)total * sizeof(int64_t));
    memcpy(kd_tensor_data(hl), lb, (size_t)total * sizeof(double));
    st = kd_tensor_empty(&total, 1, KD_DTYPE_I64, dev, &di);
  }
  if (st == KD_OK) st = kd_tensor_empty(&total, 1, KD_DTYPE_F64, dev, &dl);
  if (st == KD_OK) st = kd_cpu_copy_into(di, hi);
  if (st == KD_OK) st = kd_cpu_copy_into(dl, hl);
  if (st == KD_OK) {
    kd_dev_op d;
    memset(&d, 0, sizeof d);
    d.kind = KD_DEV_OP_INTERP;
    d.code = bwd;
    d.dtype = cdt;
    d.data = j->dst;
    d.numel = j->planes * j->oh * j->ow;
    d.i[0] = (int64_t)(intptr_t)j->src;
    d.i[1] = (int64_t)(intptr_t)kd_tensor_data(di);
    d.i[2] = (int64_t)(intptr_t)kd_tensor_data(dl);
    d.i[3] = j->planes;
    d.i[4] = j->h;
    d.i[5] = j->w;
    d.i[6] = j->oh;
    d.i[7] = j->ow;
    d.d[0] = j->nearest;
    st = kd_cpu_device_run(dev, &d);
  }
  /* the taps are freed at once: the caching allocator reuses them only in stream order */
  if (hi) kd_tensor_release(hi);
  if (hl) kd_tensor_release(hl);
  if (di) kd_tensor_release(di);
  if (dl) kd_tensor_release(dl);
  return st;
}

static kd_status kd_interp_impl(const kd_op_info *op, kd_value *args, kd_tensor **tmp, int *ntmp, kd_tensor **result) {
  char b1[96], b2[96];
  bool bwd = op->code == KD_INTERP_BACKWARD;
  kd_tensor *src = args[0].v.t;
  const int64_t *xs;
  int xd;
  if (bwd) {
    if (args[1].kind != KD_VALUE_INTLIST) return kd_error(KD_ERR_INVALID_ARGUMENT, "interpolateBackward: inputSize must be a list");
    xs = args[1].v.ilist.data;
    xd = args[1].v.ilist.n;
  } else {
    xs = src->sizes;
    xd = src->ndim;
  }
  int a = bwd ? 2 : 1;
  const kd_value *sizev = &args[a], *scalev = &args[a + 1], *alignv = &args[a + 3];
  const char *mode = args[a + 2].v.str;
  static const char *const modes = "nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact";
  if (xd < 3 || xd > 5)
    return kd_error(KD_ERR_NOT_SUPPORTED, "Input Error: Only 3D, 4D and 5D input Tensors supported (got %dD) for the modes: %s (got %s)",
                    xd, modes, mode);
  int nd = xd - 2;
  bool nearest = strcmp(mode, "nearest") == 0, linear = strcmp(mode, "linear") == 0, bilinear = strcmp(mode, "bilinear") == 0;
  if (!nearest && !linear && !bilinear) {
    bool known = strcmp(mode, "bicubic") == 0 || strcmp(mode, "trilinear") == 0 || strcmp(mode, "area") == 0 ||
                 strcmp(mode, "nearest-exact") == 0;
    if (known) return kd_error(KD_ERR_NOT_SUPPORTED, "interpolate: mode '%s' is not supported by kindling yet", mode);
    return kd_error(KD_ERR_NOT_SUPPORTED, "Input Error: Only 3D, 4D and 5D input Tensors supported (got %dD) for the modes: %s (got %s)",
                    xd, modes, mode);
  }
  if (nearest && alignv->kind == KD_VALUE_BOOL)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | trilinear");
  if (nd == 2 && linear) return kd_error(KD_ERR_NOT_SUPPORTED, "Got 4D input, but linear mode needs 3D input");
  if (nd == 1 && bilinear) return kd_error(KD_ERR_NOT_SUPPORTED, "Got 3D input, but bilinear mode needs 4D input");
  if (nd == 3) return kd_error(KD_ERR_NOT_SUPPORTED, "interpolate: 5-D input (mode '%s') is not supported by kindling yet", mode);
  bool align = alignv->kind == KD_VALUE_BOOL && alignv->v.b;
  bool has_size = sizev->kind == KD_VALUE_INTLIST, has_scale = scalev->kind == KD_VALUE_DOUBLELIST;
  if (has_size && has_scale) return kd_error(KD_ERR_INVALID_ARGUMENT, "only one of size or scale_factor should be defined");
  if (!has_size && !has_scale) return kd_error(KD_ERR_INVALID_ARGUMENT, "either size or scale_factor should be defined");
  int64_t out[2] = {1, 1}, in[2] = {1, xs[xd - 1]};
  double scale[2] = {0, 0};
  bool sc[2] = {false, false};
  if (nd == 2) in[0] = xs[2];
  int off = 2 - nd;
  if (has_size) {
    int n = sizev->v.ilist.n;
    if (n != 1 && n != nd)
      return kd_error(KD_ERR_INVALID_ARGUMENT, "Input and output must have the same number of spatial dimensions, but got input with spatial dimensions of %s and output size of %s. Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format.",
                      kd_interp_list(b1, sizeof b1, xs + 2, nd), kd_interp_list(b2, sizeof b2, sizev->v.ilist.data, n));
    for (int i = 0; i < nd; i++) out[i + off] = sizev->v.ilist.data[n == 1 ? 0 : i];
  } else {
    int n = scalev->v.dlist.n;
    if (n != 1 && n != nd)
      return kd_error(KD_ERR_INVALID_ARGUMENT, "Input and scale_factor must have the same number of spatial dimensions, but got input with spatial dimensions of %s and scale_factor of shape %d. Please provide input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format.",
                      kd_interp_list(b1, sizeof b1, xs + 2, nd), n);
    for (int i = 0; i < nd; i++) {
      double s = scalev->v.dlist.data[n == 1 ? 0 : i];
      scale[i + off] = s;
      sc[i + off] = true;
      out[i + off] = (int64_t)floor((double)in[i + off] * s);
    }
  }
  for (int i = 0; i < 2; i++)
    if (in[i] <= 0 || out[i] <= 0) {
      int64_t os[3] = {out[0], out[1]};
      return kd_error(KD_ERR_INVALID_ARGUMENT, "Input and output sizes should be greater than 0, but got input (%s) and output (%s)",
                      kd_interp_list(b1, sizeof b1, in + off, nd), kd_interp_list(b2, sizeof b2, os + off, nd));
    }
  int64_t ys[5];
  ys[0] = xs[0];
  ys[1] = xs[1];
  for (int i = 0; i < nd; i++) ys[2 + i] = out[i + off];
  if (bwd) {
    bool ok = src->ndim == xd;
    for (int i = 0; ok && i < xd; i++) ok = src->sizes[i] == ys[i];
    if (!ok) return kd_error(KD_ERR_SHAPE, "interpolateBackward: gradOutput of size %s does not match the output size %s",
                             kd_interp_list(b1, sizeof b1, src->sizes, src->ndim), kd_interp_list(b2, sizeof b2, ys, xd));
  }
  kd_dtype cdt = KD_DTYPE_F32;
  const char *kname = nearest ? (nd == 1 ? "upsample_nearest1d" : "upsample_nearest2d")
                              : (nd == 1 ? "upsample_linear1d" : "upsample_bilinear2d");
  KD_TRY(kd_nn_compute_dtype(src->dtype, kname, &cdt));
  kd_tensor *sc_t, *o;
  KD_TRY(kd_nn_prep(src, cdt, &sc_t));
  tmp[(*ntmp)++] = sc_t;
  KD_TRY(kd_tensor_empty(bwd ? xs : ys, xd, cdt, kd_tensor_device(src), &o));
  tmp[(*ntmp)++] = o;
  kd_interp_job j;
  memset(&j, 0, sizeof j);
  j.planes = xs[0] * xs[1];
  j.h = in[0]; j.w = in[1]; j.oh = out[0]; j.ow = out[1];
  j.nearest = nearest;
  j.f64 = cdt == KD_DTYPE_F64;
  j.backward = bwd;
  j.src = kd_tensor_data(sc_t);
  j.dst = kd_tensor_data(o);
  int64_t total = 2 * (out[0] + out[1]);
  int64_t *ib = (int64_t *)malloc((size_t)total * sizeof(int64_t));
  double *lb = (double *)malloc((size_t)total * sizeof(double));
  if (!ib || !lb) { free(ib); free(lb); return kd_error(KD_ERR_OOM, "out of host memory in interpolate"); }
  int64_t pos = 0;
  for (int i = 0; i < 2; i++) {
    j.ax[i].i0 = ib + pos; j.ax[i].i1 = ib + pos + out[i];
    j.ax[i].l0 = lb + pos; j.ax[i].l1 = lb + pos + out[i];
    pos += 2 * out[i];
    kd_interp_taps(&j.ax[i], in[i], out[i], sc[i], scale[i], nearest, align, j.f64);
  }
  if (kd_tensor_device(src).type != KD_DEVICE_CPU) { /* cuda/ops_pad.cu, with these taps copied over */
    kd_status st = kd_interp_device(&j, ib, lb, total, kd_tensor_device(src), cdt, bwd);
    free(ib);
    free(lb);
    KD_TRY(st);
    kd_tensor_retain(o);
    return kd_nn_finish(o, src->dtype, result);
  }
  int64_t per = (out[0] * out[1] + in[0] * in[1]) * (nearest ? 1 : 4);
  int64_t grain = KD_PARALLEL_GRAIN / (per > 0 ? per : 1);
  if (j.planes > 0) kd_parallel_for(0, j.planes, grain < 1 ? 1 : grain, kd_interp_chunk, &j);
  free(ib);
  free(lb);
  kd_tensor_retain(o);
  return kd_nn_finish(o, src->dtype, result);
}

KD_KERNEL(kd_cpu_interpolate) {
  (void)ks;
  kd_tensor *tmp[4];
  int ntmp = 0;
  kd_tensor *r = NULL;
  kd_status st = kd_interp_impl(op, args, tmp, &ntmp, &r);
  for (int i = 0; i < ntmp; i++) kd_tensor_release(tmp[i]);
  if (st != KD_OK) return st;
  kd_out_take(outs, 0, r);
  return KD_OK;
}
