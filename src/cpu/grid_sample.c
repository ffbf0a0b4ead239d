/* grid_sample.c - the kernel of gridSample and gridSampleBackward (PyTorch 1.13's grid_sampler_2d /
 * grid_sampler_3d and their backward), selected by op->code:
 *   forward   output (N, C, H', W') or (N, C, D', H', W') = input (N, C, [D,] H, W) sampled at the
 *             positions grid (N, [D',] H', W', nd), nd = 2 or 3, x (width) first, -1 .. 1 spanning
 *             the input (the corner pixels' centres with alignCorners, their outer edges without).
 *   backward  gradInput (scattered: several positions may read one input element) and/or gradGrid.
 * Modes: bilinear (trilinear on 5-D), nearest (ties to even, as nearbyint), bicubic (4-D only,
 * A = -0.75 as upsampling); paddingMode zeros (outside reads 0), border (clamped) and reflection
 * (mirrored at the edges, then clamped). The coordinate arithmetic is ATen's GridSampler.h
 * (grid_sampler_compute_source_index[_set_grad], reflect_coordinates, clip_coordinates,
 * safe_downgrade_to_int_range, get_cubic_coefficients_grad) in the compute dtype, with the
 * weights and the order of the sums of its scalar kernels (GridSampler.cpp, GridSampler.cu), so
 * both backends give PyTorch's values.
 * Checks and messages are ATen's check_grid_sampler_common / _2d / _3d and the dtype dispatch.
 * Tensors are made contiguous in the compute dtype (float32 or float64; float16 on a device
 * computes in float32). CPU: forward and the grid gradient run in parallel over the output
 * positions (each position loops over the channels); the input gradient over the batch (a
 * sample's positions scatter into its own slice only). On a device everything goes to
 * KD_DEV_OP_GRID_SAMPLE (cuda/ops_grid_sample.cu). */
#include <math.h>
#include <stdio.h>

#include "cpu/nn_common.h"
#include "cpu/device_op_ptrs.h"
#include "cpu/grid_sample_math.h"

typedef struct kd_gs_job {
  kd_gs_geom geo;
  bool f64;
  int64_t N, C, P, S; /* batch, channels, output positions per sample, input elements per plane */
  const char *x, *grid, *gout;
  char *y, *gx, *gg;
} kd_gs_job;

#define KD_GS_LOOPS(T, SFX)                                                                              \
  /* forward over output positions [q0, q1) of all samples */                                          \
  static inline __attribute__((always_inline)) void kd_gs_fwd_##SFX(const kd_gs_job *j, int64_t q0, int64_t q1, const int ND, \
                                                                     const int MODE) {                   \
    kd_gs_taps_##SFX t;                                                                                  \
    kd_gs_geom geo = j->geo; /* the rank and mode as constants, so the taps' loops unroll */            \
    geo.nd = ND;                                                                                         \
    geo.mode = MODE;                                                                                     \
    for (int64_t q = q0; q < q1; q++) {                                                                  \
      const int64_t n = q / j->P, p = q % j->P;                                                          \
      kd_gs_taps_of_##SFX(&geo, (const T *)j->grid + q * ND, &t);                                        \
      const T *x = (const T *)j->x + n * j->C * j->S;                                                    \
      T *y = (T *)j->y + n * j->C * j->P + p;                                                            \
      for (int64_t c = 0; c < j->C; c++, x += j->S, y += j->P) *y = kd_gs_read_##SFX(&t, x, ND, MODE);   \
    }                                                                                                    \
  }                                                                                                      \
  /* input gradient of samples [n0, n1) (gx zeroed) */                                                 \
  static inline __attribute__((always_inline)) void kd_gs_bwd_input_##SFX(const kd_gs_job *j, int64_t n0, int64_t n1,      \
                                                                           const int ND, const int MODE) { \
    kd_gs_taps_##SFX t;                                                                                  \
    kd_gs_geom geo = j->geo;                                                                             \
    geo.nd = ND;                                                                                         \
    geo.mode = MODE;                                                                                     \
    for (int64_t n = n0; n < n1; n++)                                                                    \
      for (int64_t p = 0; p < j->P; p++) {                                                               \
        kd_gs_taps_of_##SFX(&geo, (const T *)j->grid + (n * j->P + p) * ND, &t);                         \
        T *gx = (T *)j->gx + n * j->C * j->S;                                                            \
        const T *go = (const T *)j->gout + n * j->C * j->P + p;                                          \
        for (int64_t c = 0; c < j->C; c++, gx += j->S, go += j->P) {                                     \
          const T g = *go;                                                                               \
          KD_GS_SCATTER(t, g, ND, MODE, KD_GS_ADD);                                                      \
        }                                                                                                \
      }                                                                                                  \
  }                                                                                                      \
  /* grid gradient of output positions [q0, q1) */                                                     \
  static inline __attribute__((always_inline)) void kd_gs_bwd_grid_##SFX(const kd_gs_job *j, int64_t q0, int64_t q1,       \
                                                                          const int ND, const int MODE) { \
    kd_gs_taps_##SFX t;                                                                                  \
    kd_gs_geom geo = j->geo;                                                                             \
    geo.nd = ND;                                                                                         \
    geo.mode = MODE;                                                                                     \
    for (int64_t q = q0; q < q1; q++) {                                                                  \
      T *gg = (T *)j->gg + q * ND;                                                                       \
      T acc[3] = {0, 0, 0};                                                                              \
      if (MODE != KD_GS_NEAREST) { /* nearest has no gradient: zeros, as PyTorch */                      \
        const int64_t n = q / j->P, p = q % j->P;                                                        \
        kd_gs_taps_of_##SFX(&geo, (const T *)j->grid + q * ND, &t);                                      \
        const T *x = (const T *)j->x + n * j->C * j->S;                                                  \
        const T *go = (const T *)j->gout + n * j->C * j->P + p;                                          \
        for (int64_t c = 0; c < j->C; c++, x += j->S, go += j->P) kd_gs_grid_acc_##SFX(&t, x, *go, ND, MODE, acc); \
        for (int a = 0; a < ND; a++) acc[a] *= t.gm[a];                                                  \
      }                                                                                                  \
      for (int a = 0; a < ND; a++) gg[a] = acc[a];                                                       \
    }                                                                                                    \
  }
#define KD_GS_ADD(o, v) gx[o] += (v)
KD_GS_LOOPS(float, f32)
KD_GS_LOOPS(double, f64)

enum { KD_GS_PASS_FORWARD, KD_GS_PASS_INPUT, KD_GS_PASS_GRID };
typedef struct {
  const kd_gs_job *j;
  int pass;
} kd_gs_task;

/* One pass over [a, b) for the rank and mode given as constants (ND, MODE). */
#define KD_GS_PASS(SFX, ND, MODE)                                                                        \
  do {                                                                                                   \
    if (t->pass == KD_GS_PASS_FORWARD) kd_gs_fwd_##SFX(j, a, b, ND, MODE);                               \
    else if (t->pass == KD_GS_PASS_INPUT) kd_gs_bwd_input_##SFX(j, a, b, ND, MODE);                      \
    else kd_gs_bwd_grid_##SFX(j, a, b, ND, MODE);                                                        \
  } while (0)
#define KD_GS_PASSES(SFX)                                                                                \
  static void kd_gs_passes_##SFX(const kd_gs_task *t, int64_t a, int64_t b) {                            \
    const kd_gs_job *j = t->j;                                                                           \
    switch (j->geo.nd * 4 + j->geo.mode) {                                                               \
      case 2 * 4 + KD_GS_BILINEAR: KD_GS_PASS(SFX, 2, KD_GS_BILINEAR); break;                            \
      case 2 * 4 + KD_GS_NEAREST: KD_GS_PASS(SFX, 2, KD_GS_NEAREST); break;                              \
      case 2 * 4 + KD_GS_BICUBIC: KD_GS_PASS(SFX, 2, KD_GS_BICUBIC); break;                              \
      case 3 * 4 + KD_GS_BILINEAR: KD_GS_PASS(SFX, 3, KD_GS_BILINEAR); break;                            \
      default: KD_GS_PASS(SFX, 3, KD_GS_NEAREST); break;                                                 \
    }                                                                                                    \
  }
KD_GS_PASSES(f32)
KD_GS_PASSES(f64)

static void kd_gs_chunk(void *ctx, int64_t a, int64_t b) {
  const kd_gs_task *t = (const kd_gs_task *)ctx;
  if (t->j->f64) kd_gs_passes_f64(t, a, b);
  else kd_gs_passes_f32(t, a, b);
}

/* Runs one pass on the CPU pool: forward and grid gradient over the N * P positions, the input
 * gradient over the N samples. */
static void kd_gs_run_cpu(const kd_gs_job *j, int pass) {
  kd_gs_task t = {j, pass};
  const int64_t taps = j->geo.mode == KD_GS_BICUBIC ? 16 : j->geo.mode == KD_GS_NEAREST ? 1 : (1 << j->geo.nd);
  const int64_t per_pos = (j->C > 0 ? j->C : 1) * taps;
  if (pass == KD_GS_PASS_INPUT) {
    const int64_t per = j->P * per_pos, grain = KD_PARALLEL_GRAIN / (per > 0 ? per : 1);
    kd_parallel_for(0, j->N, grain < 1 ? 1 : grain, kd_gs_chunk, &t);
  } else {
    const int64_t grain = KD_PARALLEL_GRAIN / per_pos;
    kd_parallel_for(0, j->N * j->P, grain < 1 ? 1 : grain, kd_gs_chunk, &t);
  }
}

/* The device launch (cuda/ops_grid_sample.cu; parameters with KD_CUDA_OP_GRID_SAMPLE). */
static kd_status kd_gs_run_device(const kd_gs_job *j, kd_device dev, kd_dtype cdt, int pass, const int64_t *out_sp) {
  kd_dev_op o;
  memset(&o, 0, sizeof o);
  o.kind = KD_DEV_OP_GRID_SAMPLE;
  o.code = pass;
  o.dtype = cdt;
  o.i[0] = j->N;
  o.i[1] = j->C;
  for (int a = 0; a < 3; a++) {
    o.i[2 + a] = j->geo.in[a];
    o.i[5 + a] = out_sp[a];
  }
  o.d[0] = j->geo.nd;
  o.d[1] = j->geo.mode;
  o.d[2] = j->geo.pad;
  o.d[3] = j->geo.align ? 1 : 0;
  void *ptrs[5] = {(void *)j->x, (void *)j->grid, pass == KD_GS_PASS_FORWARD ? (void *)j->y : (void *)j->gout,
                   pass == KD_GS_PASS_INPUT ? (void *)j->gx : NULL, pass == KD_GS_PASS_GRID ? (void *)j->gg : NULL};
  const kd_dtype dts[5] = {cdt, cdt, cdt, cdt, cdt};
  return kd_dev_op_run_ptrs(dev, &o, 5, ptrs, dts);
}

static const char *kd_gs_list(char *buf, size_t cap, const int64_t *s, int n) {
  size_t p = (size_t)snprintf(buf, cap, "[");
  for (int i = 0; i < n && p < cap; i++) p += (size_t)snprintf(buf + p, cap - p, i ? ", %lld" : "%lld", (long long)s[i]);
  if (p < cap) snprintf(buf + p, cap - p, "]");
  return buf;
}
static const char *kd_gs_sizes(char *buf, size_t cap, const kd_tensor *t) { return kd_gs_list(buf, cap, t->sizes, t->ndim); }

/* ATen's checks of grid_sampler_{2,3}d (check_grid_sampler_common, then the rank), the mode and
 * padding names of F.grid_sample, and the dtype dispatch. */
static kd_status kd_gs_check(const kd_tensor *x, const kd_tensor *g, const char *mode, const char *pad, int *imode, int *ipad) {
  char b1[160], b2[160];
  if (strcmp(mode, "bilinear") == 0) *imode = KD_GS_BILINEAR;
  else if (strcmp(mode, "nearest") == 0) *imode = KD_GS_NEAREST;
  else if (strcmp(mode, "bicubic") == 0) *imode = KD_GS_BICUBIC;
  else return kd_error(KD_ERR_INVALID_ARGUMENT, "nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: '%s'", mode);
  if (strcmp(pad, "zeros") == 0) *ipad = KD_GS_ZEROS;
  else if (strcmp(pad, "border") == 0) *ipad = KD_GS_BORDER;
  else if (strcmp(pad, "reflection") == 0) *ipad = KD_GS_REFLECTION;
  else return kd_error(KD_ERR_INVALID_ARGUMENT, "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or 'reflection', but got: '%s'", pad);
  if (x->ndim == 0 || g->ndim == 0) return kd_error(KD_ERR_INDEX, "Dimension specified as 0 but tensor has no dimensions");
  if (x->sizes[0] != g->sizes[0])
    return kd_error(KD_ERR_SHAPE, "grid_sampler(): expected grid and input to have same batch size, but got input with sizes %s and grid with sizes %s",
                    kd_gs_sizes(b1, sizeof b1, x), kd_gs_sizes(b2, sizeof b2, g));
  if (g->sizes[g->ndim - 1] != x->ndim - 2)
    return kd_error(KD_ERR_SHAPE, "grid_sampler(): expected grid to have size %d in last dimension, but got grid with sizes %s", x->ndim - 2,
                    kd_gs_sizes(b2, sizeof b2, g));
  for (int i = 2; i < x->ndim; i++)
    if (x->sizes[i] <= 0)
      return kd_error(KD_ERR_SHAPE, "grid_sampler(): expected input to have non-empty spatial dimensions, but input has sizes %s with dimension %d being empty",
                      kd_gs_sizes(b1, sizeof b1, x), i);
  const bool two = x->ndim == 4;
  if (!(x->ndim == (two ? 4 : 5) && g->ndim == x->ndim))
    return kd_error(KD_ERR_SHAPE, "grid_sampler(): expected %dD input and grid with same number of dimensions, but got input with sizes %s and grid with sizes %s",
                    two ? 4 : 5, kd_gs_sizes(b1, sizeof b1, x), kd_gs_sizes(b2, sizeof b2, g));
  if (!two && *imode == KD_GS_BICUBIC) return kd_error(KD_ERR_INVALID_ARGUMENT, "grid_sampler(): bicubic interpolation only supports 4D input");
  const bool cpu = kd_tensor_device(x).type == KD_DEVICE_CPU;
  const kd_dtype dt = x->dtype;
  if (!(dt == KD_DTYPE_F32 || dt == KD_DTYPE_F64 || (!cpu && dt == KD_DTYPE_F16))) {
    if (!cpu) return kd_error(KD_ERR_NOT_SUPPORTED, "\"grid_sampler_%s_cuda\" not implemented for '%s'", two ? "2d" : "3d", kd_cpu_torch_name(dt));
    if (two) return kd_error(KD_ERR_NOT_SUPPORTED, "grid_sampler_2d_cpu not implemented for %s", kd_cpu_torch_name(dt));
    return kd_error(KD_ERR_NOT_SUPPORTED, "\"grid_sampler3d_cpu\" not implemented for '%s'", kd_cpu_torch_name(dt));
  }
  if (g->dtype != dt)
    return kd_error(KD_ERR_DTYPE, "expected scalar type %s but found %s", kd_cpu_torch_name(dt), kd_cpu_torch_name(g->dtype));
  return KD_OK;
}

#define KD_GS_TMP 8
typedef struct {
  kd_tensor *t[KD_GS_TMP];
  int n;
} kd_gs_tmps;
static kd_tensor *kd_gs_keep(kd_gs_tmps *k, kd_tensor *t) {
  k->t[k->n++] = t;
  return t;
}

static kd_status kd_gs_impl(const kd_op_info *op, kd_value *args, kd_value *outs, kd_gs_tmps *tmp) {
  const bool bwd = op->code == KD_GRID_SAMPLE_BACKWARD;
  const int a0 = bwd ? 1 : 0;
  kd_tensor *x = args[a0].v.t, *g = args[a0 + 1].v.t, *go = bwd ? args[0].v.t : NULL;
  const kd_value *alignv = &args[a0 + 4];
  const bool want_input = !bwd || args[6].v.b, want_grid = !bwd || args[7].v.b;
  kd_gs_job j;
  memset(&j, 0, sizeof j);
  KD_TRY(kd_gs_check(x, g, args[a0 + 2].v.str, args[a0 + 3].v.str, &j.geo.mode, &j.geo.pad));
  j.geo.nd = x->ndim - 2;
  j.geo.align = alignv->kind == KD_VALUE_BOOL && alignv->v.b;
  j.N = x->sizes[0];
  j.C = x->sizes[1];
  int64_t ys[5] = {x->sizes[0], x->sizes[1], 1, 1, 1}, out_sp[3] = {1, 1, 1};
  for (int a = 0; a < j.geo.nd; a++) {
    j.geo.in[3 - j.geo.nd + a] = x->sizes[2 + a];
    out_sp[3 - j.geo.nd + a] = g->sizes[1 + a];
    ys[2 + a] = g->sizes[1 + a];
  }
  if (j.geo.nd == 2) j.geo.in[0] = 1;
  int64_t ynumel = 0;
  KD_TRY(kd_shape_numel_checked(ys, x->ndim, &ynumel));
  KD_TRY(kd_shape_numel_checked(j.geo.in, 3, &j.S));
  KD_TRY(kd_shape_numel_checked(out_sp, 3, &j.P));
  if (bwd) {
    char b1[160], b2[160];
    bool ok = go->ndim == x->ndim;
    for (int i = 0; ok && i < x->ndim; i++) ok = go->sizes[i] == ys[i];
    if (!ok)
      return kd_error(KD_ERR_SHAPE, "gridSampleBackward: gradOutput of size %s does not match the output size %s", kd_gs_sizes(b1, sizeof b1, go),
                      kd_gs_list(b2, sizeof b2, ys, x->ndim));
    if (go->dtype != x->dtype)
      return kd_error(KD_ERR_DTYPE, "expected scalar type %s but found %s", kd_cpu_torch_name(x->dtype), kd_cpu_torch_name(go->dtype));
  }
  const kd_device dev = kd_tensor_device(x);
  const bool cpu = dev.type == KD_DEVICE_CPU;
  const kd_dtype cdt = x->dtype == KD_DTYPE_F64 ? KD_DTYPE_F64 : KD_DTYPE_F32;
  j.f64 = cdt == KD_DTYPE_F64;
  kd_tensor *xc, *gc, *goc = NULL;
  KD_TRY(kd_nn_prep(x, cdt, &xc));
  kd_gs_keep(tmp, xc);
  KD_TRY(kd_nn_prep(g, cdt, &gc));
  kd_gs_keep(tmp, gc);
  j.x = kd_tensor_data(xc);
  j.grid = kd_tensor_data(gc);
  if (!bwd) {
    kd_tensor *y;
    KD_TRY(kd_tensor_empty(ys, x->ndim, cdt, dev, &y));
    kd_gs_keep(tmp, y);
    j.y = kd_tensor_data(y);
    if (ynumel > 0) {
      if (cpu) kd_gs_run_cpu(&j, KD_GS_PASS_FORWARD);
      else KD_TRY(kd_gs_run_device(&j, dev, cdt, KD_GS_PASS_FORWARD, out_sp));
    }
    kd_tensor_retain(y);
    kd_tensor *r;
    KD_TRY(kd_nn_finish(y, x->dtype, &r));
    kd_out_take(outs, 0, r);
    return KD_OK;
  }
  KD_TRY(kd_nn_prep(go, cdt, &goc));
  kd_gs_keep(tmp, goc);
  j.gout = kd_tensor_data(goc);
  const int64_t empty = 0;
  kd_tensor *res[2] = {NULL, NULL};
  const kd_tensor *like[2] = {x, g};
  for (int k = 0; k < 2; k++) {
    const bool want = k == 0 ? want_input : want_grid;
    kd_tensor *r;
    if (!want) { /* not asked for: an empty tensor */
      KD_TRY(kd_tensor_empty(&empty, 1, like[k]->dtype, dev, &r));
      res[k] = kd_gs_keep(tmp, r);
      continue;
    }
    KD_TRY(kd_tensor_empty(like[k]->sizes, like[k]->ndim, cdt, dev, &r));
    kd_gs_keep(tmp, r);
    int64_t numel = 0;
    KD_TRY(kd_shape_numel_checked(r->sizes, r->ndim, &numel));
    if (k == 0) j.gx = kd_tensor_data(r);
    else j.gg = kd_tensor_data(r);
    const int pass = k == 0 ? KD_GS_PASS_INPUT : KD_GS_PASS_GRID;
    if (numel > 0) {
      if (cpu) {
        if (k == 0) memset(j.gx, 0, (size_t)numel * (j.f64 ? sizeof(double) : sizeof(float)));
        kd_gs_run_cpu(&j, pass);
      } else {
        KD_TRY(kd_gs_run_device(&j, dev, cdt, pass, out_sp));
      }
    }
    kd_tensor_retain(r);
    kd_tensor *fin;
    KD_TRY(kd_nn_finish(r, like[k]->dtype, &fin));
    res[k] = kd_gs_keep(tmp, fin);
  }
  for (int k = 0; k < 2; k++) {
    kd_tensor_retain(res[k]);
    kd_out_take(outs, k, res[k]);
  }
  return KD_OK;
}

KD_KERNEL(kd_cpu_grid_sample) {
  (void)ks;
  kd_gs_tmps tmp;
  tmp.n = 0;
  kd_status st = kd_gs_impl(op, args, outs, &tmp);
  for (int i = 0; i < tmp.n; i++) kd_tensor_release(tmp.t[i]);
  return st;
}
