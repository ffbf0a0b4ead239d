/* norm.c - CPU layer normalisation: kd._internal.nativeLayerNorm (output, mean, rstd) and
 * its input gradient kd._internal.layerNormBackward. groupNorm and batchNorm are composites
 * (src/ops/nn_composites.c); groupNorm runs through nativeLayerNorm on a [N, G, -1] view.
 *
 * Like softmax this works on whole rows (the trailing normalizedShape dims, N elements), not
 * through the strided iterator: inputs are made contiguous in the compute dtype first
 * (kd_cpu_cast: float32 for float32/float16/bfloat16, float64 for float64), so a row is N
 * adjacent values, and rows are split over the thread pool. Each row is two passes over
 * values that stay in L1 (sum, then sum of squared deviations: no cancellation), then one
 * fused write pass y = (x - mean) * rstd * w + b, all vectorised with 16 independent lanes.
 * mean and rstd keep the input's leading dims with size-1 normalized dims (PyTorch's
 * shapes), in float32 for half inputs. */
#include <math.h>
#include <stdio.h>

#include "core/parallel.h"
#include "cpu/cpu_loops.h"
#include "cpu/device_hooks.h"

typedef struct kd_ln_job {
  const char *x, *w, *b, *g; /* g: the incoming gradient (backward) */
  char *y, *mean, *rstd;
  int64_t n;
  double eps;
} kd_ln_job;

#define KD_DEF_LN(SFX, T, SQRT)                                                               \
  static T kd_ln_sum_##SFX(const T *x, int64_t n) {                                           \
    T acc[16] = {0};                                                                          \
    int64_t i = 0;                                                                            \
    for (; i + 16 <= n; i += 16)                                                              \
      for (int k = 0; k < 16; k++) acc[k] += x[i + k];                                        \
    T s = 0;                                                                                  \
    for (int k = 0; k < 16; k++) s += acc[k];                                                 \
    for (; i < n; i++) s += x[i];                                                             \
    return s;                                                                                 \
  }                                                                                           \
  static T kd_ln_sqdev_##SFX(const T *x, int64_t n, T m) {                                    \
    T acc[16] = {0};                                                                          \
    int64_t i = 0;                                                                            \
    for (; i + 16 <= n; i += 16)                                                              \
      for (int k = 0; k < 16; k++) { T d = x[i + k] - m; acc[k] += d * d; }                   \
    T s = 0;                                                                                  \
    for (int k = 0; k < 16; k++) s += acc[k];                                                 \
    for (; i < n; i++) { T d = x[i] - m; s += d * d; }                                        \
    return s;                                                                                 \
  }                                                                                           \
  static void kd_ln_fwd_##SFX(void *p, int64_t begin, int64_t end) {                          \
    const kd_ln_job *j = (const kd_ln_job *)p;                                                \
    const int64_t n = j->n;                                                                   \
    const T *w = (const T *)j->w, *b = (const T *)j->b;                                       \
    for (int64_t r = begin; r < end; r++) {                                                   \
      const T *x = (const T *)j->x + r * n;                                                   \
      T *y = (T *)j->y + r * n;                                                               \
      T m = kd_ln_sum_##SFX(x, n) / (T)n;                                                     \
      T var = kd_ln_sqdev_##SFX(x, n, m) / (T)n;                                              \
      T rs = (T)1 / SQRT(var + (T)j->eps);                                                    \
      ((T *)j->mean)[r] = m;                                                                  \
      ((T *)j->rstd)[r] = rs;                                                                 \
      if (w && b) for (int64_t i = 0; i < n; i++) y[i] = (x[i] - m) * rs * w[i] + b[i];       \
      else if (w) for (int64_t i = 0; i < n; i++) y[i] = (x[i] - m) * rs * w[i];              \
      else if (b) for (int64_t i = 0; i < n; i++) y[i] = (x[i] - m) * rs + b[i];              \
      else for (int64_t i = 0; i < n; i++) y[i] = (x[i] - m) * rs;                            \
    }                                                                                         \
  }                                                                                           \
  /* dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)), gw = g * w, xhat = (x - mean) * rstd */ \
  static void kd_ln_bwd_##SFX(void *p, int64_t begin, int64_t end) {                          \
    const kd_ln_job *j = (const kd_ln_job *)p;                                                \
    const int64_t n = j->n;                                                                   \
    const T *w = (const T *)j->w;                                                             \
    for (int64_t r = begin; r < end; r++) {                                                   \
      const T *x = (const T *)j->x + r * n, *g = (const T *)j->g + r * n;                     \
      T *dx = (T *)j->y + r * n;                                                              \
      const T m = ((const T *)j->mean)[r], rs = ((const T *)j->rstd)[r];                      \
      T a[16] = {0}, c[16] = {0};                                                             \
      int64_t i = 0;                                                                          \
      for (; i + 16 <= n; i += 16)                                                            \
        for (int k = 0; k < 16; k++) {                                                        \
          T gw = w ? g[i + k] * w[i + k] : g[i + k];                                          \
          a[k] += gw;                                                                         \
          c[k] += gw * (x[i + k] - m);                                                        \
        }                                                                                     \
      T sa = 0, sc = 0;                                                                       \
      for (int k = 0; k < 16; k++) { sa += a[k]; sc += c[k]; }                                \
      for (; i < n; i++) {                                                                    \
        T gw = w ? g[i] * w[i] : g[i];                                                        \
        sa += gw;                                                                             \
        sc += gw * (x[i] - m);                                                                \
      }                                                                                       \
      const T ma = sa / (T)n, mc = sc * rs / (T)n; /* mean(gw), mean(gw * xhat) */            \
      for (i = 0; i < n; i++) {                                                               \
        T gw = w ? g[i] * w[i] : g[i];                                                        \
        dx[i] = rs * (gw - ma - (x[i] - m) * rs * mc);                                        \
      }                                                                                       \
    }                                                                                         \
  }
KD_DEF_LN(f32, float, sqrtf)
KD_DEF_LN(f64, double, sqrt)

/* PyTorch's _check_layer_norm_inputs; *rows and *n: the [M, N] view of input. */
static kd_status kd_ln_check(const kd_tensor *input, const kd_value *shape, const kd_tensor *w, const kd_tensor *b,
                             int64_t *rows, int64_t *n) {
  const int64_t *ns = shape->v.ilist.data;
  int nn = shape->v.ilist.n;
  char b1[128], b2[128];
  if (nn < 1)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "Expected normalized_shape to be at least 1-dimensional, i.e., containing "
                    "at least one element, but got normalized_shape = []");
  if (w && (w->ndim != nn || memcmp(w->sizes, ns, sizeof(int64_t) * nn) != 0))
    return kd_error(KD_ERR_SHAPE, "Expected weight to be of same shape as normalized_shape, but got weight of shape %s "
                    "and normalized_shape = %s", kd_shape_format(w->sizes, w->ndim, b1, 128),
                    kd_shape_format(ns, nn, b2, 128));
  if (b && (b->ndim != nn || memcmp(b->sizes, ns, sizeof(int64_t) * nn) != 0))
    return kd_error(KD_ERR_SHAPE, "Expected bias to be of same shape as normalized_shape, but got bias of shape %s "
                    "and normalized_shape = %s", kd_shape_format(b->sizes, b->ndim, b1, 128),
                    kd_shape_format(ns, nn, b2, 128));
  int axis = input->ndim - nn;
  if (axis < 0 || memcmp(input->sizes + axis, ns, sizeof(int64_t) * nn) != 0) {
    char star[160];
    kd_shape_format(ns, nn, b1, 128);
    snprintf(star, sizeof star, "[*, %s", b1 + 1);
    return kd_error(KD_ERR_SHAPE, "Given normalized_shape=%s, expected input with shape %s, but got input of size%s",
                    b1, star, kd_shape_format(input->sizes, input->ndim, b2, 128));
  }
  *rows = kd_shape_numel(input->sizes, axis);
  *n = kd_shape_numel(ns, nn);
  return KD_OK;
}

/* The device hook for one layer norm pass (rows of n contiguous values). */
static kd_status kd_ln_device(kd_device dev, int op, kd_dtype cdt, int64_t rows, int64_t n, double eps, const kd_tensor *x,
                              const kd_tensor *g, const kd_tensor *w, const kd_tensor *b, kd_tensor *y, kd_tensor *mean,
                              kd_tensor *rstd) {
  if (!kd_cpu_device_rows) return kd_error(KD_ERR_NOT_SUPPORTED, "no layer norm kernel is registered for this device");
  kd_dev_rows r;
  memset(&r, 0, sizeof r);
  r.dev = dev;
  r.op = op;
  r.dtype = cdt;
  r.outer = rows;
  r.len = n;
  r.inner = 1;
  r.eps = eps;
  r.x = kd_tensor_data(x);
  r.g = g ? kd_tensor_data(g) : NULL;
  r.w = w ? kd_tensor_data(w) : NULL;
  r.b = b ? kd_tensor_data(b) : NULL;
  r.y = kd_tensor_data(y);
  r.mean = kd_tensor_data(mean);
  r.rstd = kd_tensor_data(rstd);
  return kd_cpu_device_rows(&r);
}

static kd_status kd_ln_dtype_check(const kd_tensor *input, const char *name) {
  if (!kd_dtype_is_float(input->dtype))
    return kd_error(KD_ERR_NOT_SUPPORTED, "\"%s\" not implemented for '%s'", name, kd_cpu_torch_name(input->dtype));
  return KD_OK;
}

/* Releases up to 8 tensors (NULLs skipped). */
static void kd_ln_release(kd_tensor **t, int n) {
  for (int i = 0; i < n; i++)
    if (t[i]) kd_tensor_release(t[i]);
}

KD_KERNEL(kd_cpu_layer_norm) {
  (void)op;
  (void)ks;
  kd_tensor *input = args[0].v.t;
  kd_tensor *w = args[2].kind == KD_VALUE_TENSOR ? args[2].v.t : NULL;
  kd_tensor *b = args[3].kind == KD_VALUE_TENSOR ? args[3].v.t : NULL;
  double eps = args[4].v.d;
  int64_t rows, n;
  KD_TRY(kd_ln_dtype_check(input, "LayerNormKernelImpl"));
  KD_TRY(kd_ln_check(input, &args[1], w, b, &rows, &n));
  kd_dtype cdt = input->dtype == KD_DTYPE_F64 ? KD_DTYPE_F64 : KD_DTYPE_F32;
  int axis = input->ndim - args[1].v.ilist.n;
  int64_t stat_sizes[KD_MAX_DIMS];
  for (int d = 0; d < input->ndim; d++) stat_sizes[d] = d < axis ? input->sizes[d] : 1;
  /* t: 0 out, 1 mean, 2 rstd, 3 x, 4 w, 5 b, 6 y (compute-dtype output when out is half) */
  kd_tensor *t[7] = {NULL};
  kd_device dev = kd_tensor_device(input);
  kd_status st = kd_tensor_empty(input->sizes, input->ndim, input->dtype, dev, &t[0]);
  if (st == KD_OK) st = kd_tensor_empty(stat_sizes, input->ndim, cdt, dev, &t[1]);
  if (st == KD_OK) st = kd_tensor_empty(stat_sizes, input->ndim, cdt, dev, &t[2]);
  if (st == KD_OK) st = kd_cpu_cast(input, cdt, true, &t[3]);
  if (st == KD_OK && w) st = kd_cpu_cast(w, cdt, true, &t[4]);
  if (st == KD_OK && b) st = kd_cpu_cast(b, cdt, true, &t[5]);
  if (st == KD_OK) {
    if (cdt == input->dtype) {
      t[6] = t[0];
      kd_tensor_retain(t[6]);
    } else {
      st = kd_tensor_empty(input->sizes, input->ndim, cdt, dev, &t[6]);
    }
  }
  if (st == KD_OK && rows > 0 && dev.type != KD_DEVICE_CPU) {
    st = kd_ln_device(dev, KD_DEV_ROWS_LAYER_NORM, cdt, rows, n, eps, t[3], NULL, t[4], t[5], t[6], t[1], t[2]);
    if (st == KD_OK && t[6] != t[0]) st = kd_cpu_copy_into(t[0], t[6]);
  } else if (st == KD_OK && rows > 0) {
    kd_ln_job j = {kd_tensor_data(t[3]), w ? kd_tensor_data(t[4]) : NULL, b ? kd_tensor_data(t[5]) : NULL, NULL,
                   kd_tensor_data(t[6]), kd_tensor_data(t[1]), kd_tensor_data(t[2]), n, eps};
    int64_t grain = KD_PARALLEL_GRAIN / (n > 0 ? n : 1);
    kd_parallel_for(0, rows, grain > 0 ? grain : 1, cdt == KD_DTYPE_F32 ? kd_ln_fwd_f32 : kd_ln_fwd_f64, &j);
    if (t[6] != t[0]) st = kd_cpu_copy_into(t[0], t[6]);
  }
  kd_ln_release(t + 3, 4);
  if (st != KD_OK) {
    kd_ln_release(t, 3);
    return st;
  }
  kd_out_take(outs, 0, t[0]);
  kd_out_take(outs, 1, t[1]);
  kd_out_take(outs, 2, t[2]);
  return KD_OK;
}

KD_KERNEL(kd_cpu_layer_norm_backward) {
  (void)op;
  (void)ks;
  kd_tensor *g = args[0].v.t, *input = args[1].v.t, *mean = args[3].v.t, *rstd = args[4].v.t;
  kd_tensor *w = args[5].kind == KD_VALUE_TENSOR ? args[5].v.t : NULL;
  int64_t rows, n;
  KD_TRY(kd_ln_dtype_check(input, "LayerNormBackwardKernelImpl"));
  KD_TRY(kd_ln_check(input, &args[2], w, NULL, &rows, &n));
  char b1[128], b2[128];
  if (g->ndim != input->ndim || memcmp(g->sizes, input->sizes, sizeof(int64_t) * input->ndim) != 0)
    return kd_error(KD_ERR_SHAPE, "layerNormBackward: grad of shape %s does not match input of shape %s",
                    kd_shape_format(g->sizes, g->ndim, b1, 128), kd_shape_format(input->sizes, input->ndim, b2, 128));
  if (kd_tensor_numel(mean) != rows || kd_tensor_numel(rstd) != rows)
    return kd_error(KD_ERR_SHAPE, "layerNormBackward: mean and rstd must have %lld elements", (long long)rows);
  kd_dtype cdt = input->dtype == KD_DTYPE_F64 ? KD_DTYPE_F64 : KD_DTYPE_F32;
  /* t: 0 out, 1 x, 2 g, 3 w, 4 mean, 5 rstd, 6 dx in cdt */
  kd_tensor *t[7] = {NULL};
  kd_device dev = kd_tensor_device(input);
  kd_status st = kd_tensor_empty(input->sizes, input->ndim, input->dtype, dev, &t[0]);
  if (st == KD_OK) st = kd_cpu_cast(input, cdt, true, &t[1]);
  if (st == KD_OK) st = kd_cpu_cast(g, cdt, true, &t[2]);
  if (st == KD_OK && w) st = kd_cpu_cast(w, cdt, true, &t[3]);
  if (st == KD_OK) st = kd_cpu_cast(mean, cdt, true, &t[4]);
  if (st == KD_OK) st = kd_cpu_cast(rstd, cdt, true, &t[5]);
  if (st == KD_OK) {
    if (cdt == input->dtype) {
      t[6] = t[0];
      kd_tensor_retain(t[6]);
    } else {
      st = kd_tensor_empty(input->sizes, input->ndim, cdt, dev, &t[6]);
    }
  }
  if (st == KD_OK && rows > 0 && dev.type != KD_DEVICE_CPU) {
    st = kd_ln_device(dev, KD_DEV_ROWS_LAYER_NORM_BACKWARD, cdt, rows, n, 0, t[1], t[2], t[3], NULL, t[6], t[4], t[5]);
    if (st == KD_OK && t[6] != t[0]) st = kd_cpu_copy_into(t[0], t[6]);
  } else if (st == KD_OK && rows > 0) {
    kd_ln_job j = {kd_tensor_data(t[1]), w ? kd_tensor_data(t[3]) : NULL, NULL, kd_tensor_data(t[2]),
                   kd_tensor_data(t[6]), kd_tensor_data(t[4]), kd_tensor_data(t[5]), n, 0};
    int64_t grain = KD_PARALLEL_GRAIN / (n > 0 ? n : 1);
    kd_parallel_for(0, rows, grain > 0 ? grain : 1, cdt == KD_DTYPE_F32 ? kd_ln_bwd_f32 : kd_ln_bwd_f64, &j);
    if (t[6] != t[0]) st = kd_cpu_copy_into(t[0], t[6]);
  }
  kd_ln_release(t + 1, 6);
  if (st != KD_OK) {
    kd_tensor_release(t[0]);
    return st;
  }
  kd_out_take(outs, 0, t[0]);
  return KD_OK;
}
