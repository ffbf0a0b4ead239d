/* interpolate.c - CPU kernel of interpolate (modes 'nearest' and 'nearest-exact' on 3-D, 4-D and
 * 5-D input, 'linear' on (N, C, L), 'bilinear' and 'bicubic' on (N, C, H, W), 'trilinear' on
 * (N, C, D, H, W)) and interpolateBackward, selected by op->code. 'area' is adaptive average
 * pooling (lib/nn_pool.js).
 * Every mode is separable: each spatial axis has, per output position, k taps (source index and
 * weight; k = 1 nearest, 2 linear, 4 cubic), and an output element is the nested weighted sum
 * over the taps of depth, height and width, outermost first, as PyTorch's CPU kernels
 * (UpSampleKernel.cpp) evaluate it. The taps follow PyTorch's UpSample.h (nearest_idx,
 * nearest_exact_idx, area_pixel_compute_scale / area_pixel_compute_source_index,
 * guard_index_and_lambda, get_cubic_upsample_coefficients with A = -0.75 and indices clamped to
 * the border), computed in the compute dtype; with antialias (bilinear, bicubic), PyTorch's
 * _compute_weights_aa windows, as many taps as the widest (computed in double); a given scaleFactor is used as is (1/scale), unless
 * recomputeScaleFactor, which keeps only the output size. An axis the input lacks is a size-1
 * axis with one tap. Inputs are made contiguous in the compute dtype (float32 for float16,
 * bfloat16 and, for the nearest modes, uint8), and planes (N * C) run in parallel on kindling's
 * pool (the backward scatters within a plane only). On a device the taps are copied over and
 * KD_DEV_OP_INTERP (cuda/ops_pad.cu) runs one thread per output element. */
#include <math.h>
#include <stdio.h>

#include "cpu/nn_common.h"
#include "cpu/device_op.h"
#include "cpu/cubic_coeffs.h"

#define KD_INTERP_AXES 3
#define KD_INTERP_MAX_TAPS 4

typedef enum kd_interp_kind {
  KD_INTERP_KIND_NEAREST,
  KD_INTERP_KIND_NEAREST_EXACT,
  KD_INTERP_KIND_LINEAR,
  KD_INTERP_KIND_CUBIC,
} kd_interp_kind;

/* One spatial axis: in -> out, with k taps per output position (idx / w hold out * k entries). */
typedef struct kd_interp_axis {
  int64_t in, out;
  int k;
  int64_t *idx;
  double *w;
  float *wf; /* w in float32, for the float32 loops */
} kd_interp_axis;

typedef struct kd_interp_job {
  int64_t planes;
  bool f64, backward;
  bool ragged; /* antialiased: taps of index -1 end a window (KD_INTERP_TAP) */
  kd_interp_axis ax[KD_INTERP_AXES]; /* depth, height, width */
  const char *src;
  char *dst;
} kd_interp_job;

/* PyTorch's compute_scales_value / area_pixel_compute_scale, in float or double. */
static double kd_interp_scale(int64_t in, int64_t out, bool has_scale, double scale, bool align, bool f64) {
  if (align) {
    if (out <= 1) return 0;
    return f64 ? (double)(in - 1) / (double)(out - 1) : (double)((float)(in - 1) / (float)(out - 1));
  }
  if (f64) return has_scale ? 1.0 / scale : (double)in / (double)out;
  return has_scale ? (double)(float)(1.0 / scale) : (double)((float)in / (float)out);
}

/* area_pixel_compute_source_index (cubic: no clamp of negative positions). */
static double kd_interp_source(double s, int64_t o, bool align, bool cubic, bool f64) {
  double src;
  if (f64) src = align ? s * (double)o : s * ((double)o + 0.5) - 0.5;
  else src = align ? (double)((float)s * (float)o) : (double)((float)s * ((float)o + 0.5f) - 0.5f);
  return !align && !cubic && src < 0 ? 0 : src;
}

/* get_cubic_upsample_coefficients (cpu/cubic_coeffs.h): the four weights of positions i-1 .. i+2
 * at fraction t, computed in float or double, stored as doubles. */
KD_CUBIC_COEFFS(float, f32d, double) /* float arithmetic, double weights */
KD_CUBIC_COEFFS(double, f64, double)

/* _compute_weights_aa's filters: a triangle (bilinear) and the a = -0.5 cubic (bicubic). */
static double kd_interp_aa_filter(double x, bool cubic) {
  x = fabs(x);
  if (!cubic) return x < 1.0 ? 1.0 - x : 0.0;
  const double a = -0.5;
  if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
  if (x < 2.0) return (((x - 5.0) * x + 8.0) * x - 4.0) * a;
  return 0.0;
}

/* The antialiasing filter's half-width in source positions: stretched by the scale when
 * downsampling. */
static double kd_interp_aa_support(double s, bool cubic) { return (cubic ? 2.0 : 1.0) * (s >= 1.0 ? s : 1.0); }

/* Taps per output position of an antialiased axis: the widest window (at most the input). */
static int64_t kd_interp_aa_taps(const kd_interp_axis *a, bool has_scale, double scale, bool align, bool cubic) {
  double s = kd_interp_scale(a->in, a->out, has_scale, scale, align, true);
  double k = ceil(kd_interp_aa_support(s, cubic)) * 2.0 + 1.0;
  return k < (double)a->in ? (int64_t)k : a->in;
}

/* Antialiased taps (_compute_weights_aa): the filter around each output's centre in the input,
 * normalised to sum 1; taps past the window weigh 0. */
static void kd_interp_taps_aa(kd_interp_axis *a, bool has_scale, double scale, bool align, bool cubic) {
  const int64_t in = a->in;
  const double s = kd_interp_scale(in, a->out, has_scale, scale, align, true);
  const double support = kd_interp_aa_support(s, cubic), invscale = s >= 1.0 ? 1.0 / s : 1.0;
  for (int64_t o = 0; o < a->out; o++) {
    int64_t *ix = a->idx + o * a->k;
    double *w = a->w + o * a->k;
    const double center = s * ((double)o + 0.5);
    int64_t lo = (int64_t)(center - support + 0.5), hi = (int64_t)(center + support + 0.5);
    if (lo < 0) lo = 0;
    if (hi > in) hi = in;
    int64_t n = hi - lo < 0 ? 0 : hi - lo > a->k ? a->k : hi - lo;
    double total = 0;
    for (int64_t t = 0; t < n; t++) {
      w[t] = kd_interp_aa_filter(((double)(t + lo) - center + 0.5) * invscale, cubic);
      total += w[t];
    }
    for (int64_t t = 0; t < a->k; t++) {
      if (t < n) {
        ix[t] = lo + t;
        if (total != 0.0) w[t] /= total;
      } else {
        ix[t] = t == 0 ? (lo < in ? lo : in - 1) : -1; /* see KD_INTERP_TAP */
        w[t] = 0;
      }
    }
  }
}

/* The taps of one axis (a->in, a->out, a->k set). */
static void kd_interp_taps(kd_interp_axis *a, kd_interp_kind kind, bool has_scale, double scale, bool align, bool f64) {
  const int64_t in = a->in, out = a->out;
  const double s = kd_interp_scale(in, out, has_scale, scale, align && kind >= KD_INTERP_KIND_LINEAR, f64);
  for (int64_t o = 0; o < out; o++) {
    int64_t *ix = a->idx + o * a->k;
    double *w = a->w + o * a->k;
    if (kind == KD_INTERP_KIND_NEAREST || kind == KD_INTERP_KIND_NEAREST_EXACT) {
      int64_t i;
      if (kind == KD_INTERP_KIND_NEAREST && out == in) i = o;
      else if (kind == KD_INTERP_KIND_NEAREST && out == 2 * in) i = o >> 1;
      else {
        /* the scale is a float on every dtype, as nearest_neighbor_compute_source_index's */
        float sf = has_scale ? (float)(1.0 / scale) : (float)in / (float)out;
        float pos = kind == KD_INTERP_KIND_NEAREST ? (float)o * sf : (float)(((double)o + 0.5) * (double)sf);
        i = (int64_t)floorf(pos);
        if (i > in - 1) i = in - 1;
      }
      ix[0] = i;
      w[0] = 1;
      continue;
    }
    if (kind == KD_INTERP_KIND_LINEAR && out == in) { /* compute_source_index_and_lambda copies */
      ix[0] = ix[1] = o;
      w[0] = 1;
      w[1] = 0;
      continue;
    }
    const double src = kd_interp_source(s, o, align, kind == KD_INTERP_KIND_CUBIC, f64);
    if (kind == KD_INTERP_KIND_LINEAR) {
      int64_t i0 = (int64_t)src;
      if (i0 > in - 1) i0 = in - 1;
      double l1 = f64 ? src - (double)i0 : (double)((float)src - (float)i0);
      if (l1 < 0) l1 = 0;
      if (l1 > 1) l1 = 1;
      ix[0] = i0;
      ix[1] = i0 + (i0 < in - 1 ? 1 : 0);
      w[0] = f64 ? 1.0 - l1 : (double)(1.0f - (float)l1);
      w[1] = l1;
      continue;
    }
    /* cubic: guard_index_and_lambda, then the four neighbours clamped to [0, in - 1] */
    int64_t i0 = (int64_t)(f64 ? floor(src) : (double)floorf((float)src));
    if (i0 > in - 1) i0 = in - 1;
    double t = f64 ? src - (double)i0 : (double)((float)src - (float)i0);
    if (t < 0) t = 0;
    if (t > 1) t = 1;
    if (f64) kd_cubic_coeffs_f64(t, w);
    else kd_cubic_coeffs_f32d((float)t, w);
    for (int j = 0; j < 4; j++) {
      int64_t i = i0 - 1 + j;
      ix[j] = i < 0 ? 0 : i > in - 1 ? in - 1 : i;
    }
  }
}

/* Antialiased windows are ragged: an output's taps past its window have index -1 (the first tap
 * is always real) and the generic instance stops there, so they add nothing (not 0 * inf = NaN);
 * the fixed-count instances never see them. */
#define KD_INTERP_TAP(K_, t, index) ((K_) || (t) == 0 || (index) >= 0)

/* Forward: y[od, oh, ow] = sum_a (sum_b (sum_c x[id_a, ih_b, iw_c] * ww_c) * wh_b) * wd_a, each sum
 * started from its first term; the depth sum accumulates in the output row. Backward: the same
 * weights scatter the output gradient. The row loops are instantiated for the tap counts the modes
 * use (height x width: 1 x 2 linear, 2 x 2 bilinear/trilinear, 4 x 4 bicubic; nearest is a gather),
 * so their tap loops unroll; other counts take the generic instance (KH, KW = 0: the job's). */
#define KD_INTERP_ROW_FWD(T, W, KH_, KW_, XR)                                                          \
  {                                                                                                    \
    const int KH = KH_ ? KH_ : ah->k, KW = KW_ ? KW_ : aw->k;                                          \
    for (int64_t ow = 0; ow < aw->out; ow++) {                                                         \
      const int64_t *iw = aw->idx + ow * KW;                                                           \
      const T *ww = aw->W + ow * KW;                                                                   \
      T acc_h = 0;                                                                                     \
      for (int b = 0; b < KH && KD_INTERP_TAP(KH_, b, ah->idx[oh * KH + b]); b++) {                    \
        const T *xr = XR(b);                                                                           \
        T acc_w = xr[iw[0]] * ww[0];                                                                   \
        for (int c = 1; c < KW && KD_INTERP_TAP(KW_, c, iw[c]); c++) acc_w += xr[iw[c]] * ww[c];        \
        const T th = acc_w * wh[b];                                                                    \
        acc_h = b ? acc_h + th : th;                                                                   \
      }                                                                                                \
      yr[ow] = a ? yr[ow] + acc_h * wd : acc_h * wd;                                                   \
    }                                                                                                  \
  }
#define KD_INTERP_ROW_BWD(T, W, KH_, KW_, XR)                                                          \
  {                                                                                                    \
    const int KH = KH_ ? KH_ : ah->k, KW = KW_ ? KW_ : aw->k;                                          \
    for (int64_t ow = 0; ow < aw->out; ow++) {                                                         \
      const int64_t *iw = aw->idx + ow * KW;                                                           \
      const T *ww = aw->W + ow * KW;                                                                   \
      const T ga = gr[ow] * wd;                                                                        \
      for (int b = 0; b < KH && KD_INTERP_TAP(KH_, b, ah->idx[oh * KH + b]); b++) {                    \
        T *xr = XR(b);                                                                                 \
        const T gb = ga * wh[b];                                                                       \
        for (int c = 0; c < KW && KD_INTERP_TAP(KW_, c, iw[c]); c++) xr[iw[c]] += gb * ww[c];           \
      }                                                                                                \
    }                                                                                                  \
  }
/* rows[b]: the source rows of the height taps, hoisted when there are at most KD_INTERP_MAX_TAPS
 * (antialiasing has more: then each is found in the loop) */
#define KD_INTERP_ROW_HOISTED(b) rows[b]
#define KD_INTERP_ROW_FOUND(b) (xd + (ah->idx[oh * ah->k + (b)] < 0 ? 0 : ah->idx[oh * ah->k + (b)]) * aw->in)
#define KD_INTERP_DISPATCH(ROW, T, W)                                                                   \
  if (!j->ragged && ah->k == 1 && aw->k == 2) ROW(T, W, 1, 2, KD_INTERP_ROW_HOISTED)                   \
  else if (!j->ragged && ah->k == 2 && aw->k == 2) ROW(T, W, 2, 2, KD_INTERP_ROW_HOISTED)              \
  else if (!j->ragged && ah->k == 4 && aw->k == 4) ROW(T, W, 4, 4, KD_INTERP_ROW_HOISTED)              \
  else if (ah->k <= KD_INTERP_MAX_TAPS) ROW(T, W, 0, 0, KD_INTERP_ROW_HOISTED)                         \
  else ROW(T, W, 0, 0, KD_INTERP_ROW_FOUND)

#define KD_INTERP_LOOPS(T, SFX, W)                                                                     \
  static void kd_interp_fwd_##SFX(const kd_interp_job *j, int64_t p0, int64_t p1) {                    \
    const kd_interp_axis *ad = &j->ax[0], *ah = &j->ax[1], *aw = &j->ax[2];                            \
    const int64_t hw = ah->in * aw->in, ohw = ah->out * aw->out;                                       \
    const bool gather = ad->k == 1 && ah->k == 1 && aw->k == 1;                                        \
    const T *rows[KD_INTERP_MAX_TAPS];                                                                 \
    for (int64_t p = p0; p < p1; p++) {                                                                \
      const T *x = (const T *)j->src + p * ad->in * hw;                                                \
      T *y = (T *)j->dst + p * ad->out * ohw;                                                          \
      for (int64_t od = 0; od < ad->out; od++)                                                         \
        for (int64_t oh = 0; oh < ah->out; oh++) {                                                     \
          T *yr = y + od * ohw + oh * aw->out;                                                         \
          const T *wh = ah->W + oh * ah->k;                                                            \
          if (gather) { /* nearest: every weight is 1 */                                               \
            const T *xr = x + ad->idx[od] * hw + ah->idx[oh] * aw->in;                                 \
            for (int64_t ow = 0; ow < aw->out; ow++) yr[ow] = xr[aw->idx[ow]];                         \
            continue;                                                                                  \
          }                                                                                            \
          for (int a = 0; a < ad->k; a++) {                                                            \
            const T *xd = x + ad->idx[od * ad->k + a] * hw;                                            \
            const T wd = ad->W[od * ad->k + a];                                                        \
            for (int b = 0; b < ah->k && b < KD_INTERP_MAX_TAPS; b++) rows[b] = KD_INTERP_ROW_FOUND(b);  \
            KD_INTERP_DISPATCH(KD_INTERP_ROW_FWD, T, W)                                                \
          }                                                                                            \
        }                                                                                              \
    }                                                                                                  \
  }                                                                                                    \
  static void kd_interp_bwd_##SFX(const kd_interp_job *j, int64_t p0, int64_t p1) {                    \
    const kd_interp_axis *ad = &j->ax[0], *ah = &j->ax[1], *aw = &j->ax[2];                            \
    const int64_t hw = ah->in * aw->in, ohw = ah->out * aw->out;                                       \
    T *rows[KD_INTERP_MAX_TAPS];                                                                       \
    for (int64_t p = p0; p < p1; p++) {                                                                \
      const T *gy = (const T *)j->src + p * ad->out * ohw;                                             \
      T *gx = (T *)j->dst + p * ad->in * hw;                                                           \
      memset(gx, 0, (size_t)(ad->in * hw) * sizeof(T));                                                \
      for (int64_t od = 0; od < ad->out; od++)                                                         \
        for (int64_t oh = 0; oh < ah->out; oh++) {                                                     \
          const T *gr = gy + od * ohw + oh * aw->out;                                                  \
          const T *wh = ah->W + oh * ah->k;                                                            \
          for (int a = 0; a < ad->k; a++) {                                                            \
            T *xd = gx + ad->idx[od * ad->k + a] * hw;                                                 \
            const T wd = ad->W[od * ad->k + a];                                                        \
            for (int b = 0; b < ah->k && b < KD_INTERP_MAX_TAPS; b++) rows[b] = KD_INTERP_ROW_FOUND(b);  \
            if (ah->k == 1 && aw->k == 1) {                                                            \
              for (int64_t ow = 0; ow < aw->out; ow++) rows[0][aw->idx[ow]] += gr[ow];                 \
              continue;                                                                                \
            }                                                                                          \
            KD_INTERP_DISPATCH(KD_INTERP_ROW_BWD, T, W)                                                \
          }                                                                                            \
        }                                                                                              \
    }                                                                                                  \
  }
KD_INTERP_LOOPS(float, f32, wf)
KD_INTERP_LOOPS(double, f64, w)

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

/* The device launch: the host taps (ib: int64, lb: double, `total` each, axis after axis) copied
 * to the device. */
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
    d.numel = j->planes * j->ax[0].out * j->ax[1].out * j->ax[2].out;
    d.i[0] = (int64_t)(intptr_t)j->src;
    d.i[1] = (int64_t)(intptr_t)kd_tensor_data(di);
    d.i[2] = (int64_t)(intptr_t)kd_tensor_data(dl);
    d.i[3] = j->planes;
    for (int a = 0; a < KD_INTERP_AXES; a++) {
      d.d[a] = (double)j->ax[a].in;
      d.d[3 + a] = (double)j->ax[a].out;
      d.d[6 + a] = (double)j->ax[a].k;
    }
    st = kd_cpu_device_run(dev, &d);
  }
  /* the taps are freed at once: the caching allocator reuses them only in stream order */
  if (hi) kd_tensor_release(hi);
  if (hl) kd_tensor_release(hl);
  if (di) kd_tensor_release(di);
  if (dl) kd_tensor_release(dl);
  return st;
}

static const char *const kd_interp_modes = "nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact";

/* The mode of `name` for an input of xd dims (F.interpolate's checks and messages). */
static kd_status kd_interp_mode(const char *name, int xd, kd_interp_kind *kind) {
  static const struct { const char *name; kd_interp_kind kind; int nd; } table[] = {
    {"nearest", KD_INTERP_KIND_NEAREST, 0},   {"nearest-exact", KD_INTERP_KIND_NEAREST_EXACT, 0},
    {"linear", KD_INTERP_KIND_LINEAR, 1},     {"bilinear", KD_INTERP_KIND_LINEAR, 2},
    {"trilinear", KD_INTERP_KIND_LINEAR, 3},  {"bicubic", KD_INTERP_KIND_CUBIC, 2},
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
    if (strcmp(name, table[i].name) != 0) continue;
    int nd = table[i].nd;
    *kind = table[i].kind;
    if (xd >= 3 && xd <= 5 && nd != 0 && xd - 2 != nd && table[i].kind != KD_INTERP_KIND_CUBIC)
      return kd_error(KD_ERR_INVALID_ARGUMENT, "Got %dD input, but %s mode needs %dD input", xd, name, nd + 2);
    if (xd >= 3 && xd <= 5 && (nd == 0 || xd - 2 == nd)) return KD_OK;
    break;
  }
  return kd_error(KD_ERR_INVALID_ARGUMENT, "Input Error: Only 3D, 4D and 5D input Tensors supported (got %dD) for the modes: %s (got %s)",
                  xd, kd_interp_modes, name);
}

/* PyTorch's name of the kernel that refuses dtype (for its message). */
static const char *kd_interp_kernel_name(kd_interp_kind kind, int nd) {
  switch (kind) {
    case KD_INTERP_KIND_LINEAR:
      return nd == 1 ? "compute_indices_weights_linear" : nd == 2 ? "upsample_bilinear2d_channels_last" : "upsample_trilinear3d_channels_last";
    case KD_INTERP_KIND_CUBIC: return "compute_indices_weights_cubic";
    default: return nd == 1 ? "compute_indices_weights_nearest" : nd == 2 ? "upsample_nearest2d_channels_last" : "upsample_nearest3d_channels_last";
  }
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
  int a0 = bwd ? 2 : 1;
  const kd_value *sizev = &args[a0], *scalev = &args[a0 + 1], *alignv = &args[a0 + 3], *recomputev = &args[a0 + 4];
  bool antialias = args[a0 + 5].kind == KD_VALUE_BOOL && args[a0 + 5].v.b;
  const char *mode = args[a0 + 2].v.str;
  bool nearest_mode = strcmp(mode, "nearest") == 0 || strcmp(mode, "nearest-exact") == 0;
  if (nearest_mode && alignv->kind == KD_VALUE_BOOL)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | trilinear");
  kd_interp_kind kind = KD_INTERP_KIND_NEAREST;
  KD_TRY(kd_interp_mode(mode, xd, &kind));
  int nd = xd - 2;
  bool align = alignv->kind == KD_VALUE_BOOL && alignv->v.b;
  bool has_size = sizev->kind == KD_VALUE_INTLIST, has_scale = scalev->kind == KD_VALUE_DOUBLELIST;
  bool recompute = recomputev->kind == KD_VALUE_BOOL && recomputev->v.b;
  if (has_size && has_scale) return kd_error(KD_ERR_INVALID_ARGUMENT, "only one of size or scale_factor should be defined");
  if (!has_size && !has_scale) return kd_error(KD_ERR_INVALID_ARGUMENT, "either size or scale_factor should be defined");
  if (recompute && has_size) return kd_error(KD_ERR_INVALID_ARGUMENT, "recompute_scale_factor is not meaningful with an explicit size.");
  if (antialias && !(nd == 2 && (kind == KD_INTERP_KIND_CUBIC || strcmp(mode, "bilinear") == 0)))
    return kd_error(KD_ERR_INVALID_ARGUMENT, "Anti-alias option is only supported for bilinear and bicubic modes");
  /* spatial axes right-aligned into (depth, height, width) */
  int64_t in[KD_INTERP_AXES] = {1, 1, 1}, out[KD_INTERP_AXES] = {1, 1, 1};
  double scale[KD_INTERP_AXES] = {0, 0, 0};
  bool sc[KD_INTERP_AXES] = {false, false, false};
  int off = KD_INTERP_AXES - nd;
  for (int i = 0; i < nd; i++) in[off + i] = xs[2 + i];
  if (has_size) {
    int n = sizev->v.ilist.n;
    if (n != 1 && n != nd)
      return kd_error(KD_ERR_INVALID_ARGUMENT, "Input and output must have the same number of spatial dimensions, but got input with spatial dimensions of %s and output size of %s. Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format.",
                      kd_interp_list(b1, sizeof b1, xs + 2, nd), kd_interp_list(b2, sizeof b2, sizev->v.ilist.data, n));
    for (int i = 0; i < nd; i++) out[off + i] = sizev->v.ilist.data[n == 1 ? 0 : i];
  } else {
    int n = scalev->v.dlist.n;
    if (n != 1 && n != nd)
      return kd_error(KD_ERR_INVALID_ARGUMENT, "Input and scale_factor must have the same number of spatial dimensions, but got input with spatial dimensions of %s and scale_factor of shape %d. Please provide input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format.",
                      kd_interp_list(b1, sizeof b1, xs + 2, nd), n);
    for (int i = 0; i < nd; i++) {
      double s = scalev->v.dlist.data[n == 1 ? 0 : i];
      double o = floor((double)in[off + i] * s);
      if (!(o > -1e18 && o < 1e18)) o = 0; /* NaN / huge scale: refused by the size check below */
      scale[off + i] = s;
      sc[off + i] = !recompute;
      out[off + i] = (int64_t)o;
    }
  }
  for (int i = 0; i < KD_INTERP_AXES; i++)
    if (in[i] <= 0 || out[i] <= 0)
      return kd_error(KD_ERR_INVALID_ARGUMENT, "Input and output sizes should be greater than 0, but got input (%s) and output (%s)",
                      kd_interp_list(b1, sizeof b1, in + off, nd), kd_interp_list(b2, sizeof b2, out + off, nd));
  int64_t ys[5];
  ys[0] = xs[0];
  ys[1] = xs[1];
  for (int i = 0; i < nd; i++) ys[2 + i] = out[off + i];
  int64_t onumel = 0;
  KD_TRY(kd_shape_numel_checked(ys, xd, &onumel));
  if (bwd) {
    bool ok = src->ndim == xd;
    for (int i = 0; ok && i < xd; i++) ok = src->sizes[i] == ys[i];
    if (!ok) return kd_error(KD_ERR_SHAPE, "interpolateBackward: gradOutput of size %s does not match the output size %s",
                             kd_interp_list(b1, sizeof b1, src->sizes, src->ndim), kd_interp_list(b2, sizeof b2, ys, xd));
  }
  kd_dtype cdt = KD_DTYPE_F32;
  bool nearest = kind == KD_INTERP_KIND_NEAREST || kind == KD_INTERP_KIND_NEAREST_EXACT;
  if (!(nearest && !bwd && src->dtype == KD_DTYPE_U8)) KD_TRY(kd_nn_compute_dtype(src->dtype, kd_interp_kernel_name(kind, nd), &cdt));
  kd_tensor *sc_t, *o;
  KD_TRY(kd_nn_prep(src, cdt, &sc_t));
  tmp[(*ntmp)++] = sc_t;
  KD_TRY(kd_tensor_empty(bwd ? xs : ys, xd, cdt, kd_tensor_device(src), &o));
  tmp[(*ntmp)++] = o;
  kd_interp_job j;
  memset(&j, 0, sizeof j);
  j.planes = xs[0] * xs[1];
  j.f64 = cdt == KD_DTYPE_F64;
  j.backward = bwd;
  j.ragged = antialias;
  j.src = kd_tensor_data(sc_t);
  j.dst = kd_tensor_data(o);
  int taps = nearest ? 1 : kind == KD_INTERP_KIND_LINEAR ? 2 : KD_INTERP_MAX_TAPS;
  int64_t total = 0;
  for (int i = 0; i < KD_INTERP_AXES; i++) {
    j.ax[i].in = in[i];
    j.ax[i].out = out[i];
    int64_t k = i < off ? 1 : antialias ? kd_interp_aa_taps(&j.ax[i], sc[i], scale[i], align, kind == KD_INTERP_KIND_CUBIC) : taps;
    int64_t n = 0;
    if (k > INT32_MAX || kd_mul_overflows(out[i], k, &n) || kd_add_overflows(total, n, &total))
      return kd_error(KD_ERR_INVALID_ARGUMENT, "interpolate: too many antialiasing taps for an input of size %lld", (long long)in[i]);
    j.ax[i].k = (int)k;
  }
  int64_t *ib = (int64_t *)malloc((size_t)total * sizeof(int64_t));
  double *lb = (double *)malloc((size_t)total * sizeof(double));
  float *fb = (float *)malloc((size_t)total * sizeof(float));
  if (!ib || !lb || !fb) { free(ib); free(lb); free(fb); return kd_error(KD_ERR_OOM, "out of host memory in interpolate"); }
  int64_t pos = 0;
  for (int i = 0; i < KD_INTERP_AXES; i++) {
    j.ax[i].idx = ib + pos;
    j.ax[i].w = lb + pos;
    j.ax[i].wf = fb + pos;
    pos += out[i] * j.ax[i].k;
    if (i < off) { j.ax[i].idx[0] = 0; j.ax[i].w[0] = 1; }
    else if (antialias) kd_interp_taps_aa(&j.ax[i], sc[i], scale[i], align, kind == KD_INTERP_KIND_CUBIC);
    else kd_interp_taps(&j.ax[i], kind, sc[i], scale[i], align, j.f64);
  }
  for (int64_t t = 0; t < total; t++) fb[t] = (float)lb[t];
  if (j.planes == 0) { /* nothing to compute (an empty batch) */
    free(ib);
    free(lb);
    free(fb);
    kd_tensor_retain(o);
    return kd_nn_finish(o, src->dtype, result);
  }
  if (kd_tensor_device(src).type != KD_DEVICE_CPU) { /* cuda/ops_pad.cu, with these taps copied over */
    kd_status st = kd_interp_device(&j, ib, lb, total, kd_tensor_device(src), cdt, bwd);
    free(ib);
    free(lb);
    free(fb);
    KD_TRY(st);
    kd_tensor_retain(o);
    return kd_nn_finish(o, src->dtype, result);
  }
  int64_t per = onumel / (j.planes > 0 ? j.planes : 1) * (int64_t)j.ax[0].k * j.ax[1].k * j.ax[2].k + in[0] * in[1] * in[2];
  int64_t grain = KD_PARALLEL_GRAIN / (per > 0 ? per : 1);
  kd_parallel_for(0, j.planes, grain < 1 ? 1 : grain, kd_interp_chunk, &j);
  free(ib);
  free(lb);
  free(fb);
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
