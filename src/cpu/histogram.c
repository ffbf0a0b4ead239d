/* histogram.c - histc (kd_cpu_histc) and bincount (kd_cpu_bincount).
 * histc follows PyTorch 1.13's CPU histogram: the range [min, max] (the data's own when
 * min == max, widened by 1 on each side when that is one point) must be finite with min < max;
 * an element x in it goes to bin (x - min) * bins / (max - min) computed in the input's compute
 * dtype (float32 for float32/float16/bfloat16, float64 for float64), the last bin including max;
 * elements outside are skipped and NaN counts in the first bin (PyTorch 1.13's CPU result: its
 * range test lets NaN through). Counts are exact (int64, rounded to the output dtype
 * once). Integer inputs (which PyTorch's CUDA takes and its CPU refuses) bin in integer
 * arithmetic with the range truncated, as PyTorch's CUDA. The elements are split over the thread pool,
 * each chunk counting into its own bins before adding them to the shared ones.
 * bincount: counts (int64) of each value of a 1-D non-negative integer tensor, or the sums of
 * weights: float32 weights sum in float32, any other weights in float64 (PyTorch's rule), in
 * element order. The output has max(max + 1, minlength) bins; reading max (and the check for
 * negative values) is one sync on a device, as PyTorch's.
 * Device tensors: contiguous buffers to KD_DEV_OP_HIST (cuda/ops_search.cu: code 0 histc,
 * code 1 bincount; shared-memory bins per block, then global atomics). */
#include <math.h>
#include <stdlib.h>

#include "core/parallel.h"
#include "cpu/device_op_ptrs.h"

/* ---- histc ---- */

typedef struct kd_histc_ctx {
  const char *x;
  int64_t *counts, bins;
  double lo, hi;
  kd_dtype dt;
  int oom;
} kd_histc_ctx;

#define KD_HISTC_LOOP(T, CT, LD)                                                                \
  do {                                                                                          \
    const CT lo = (CT)c->lo, hi = (CT)c->hi, nb = (CT)c->bins;                                  \
    const T *x = (const T *)c->x;                                                               \
    for (int64_t i = begin; i < end; i++) {                                                     \
      const CT v = LD(x[i]);                                                                    \
      if (v < lo || v > hi) continue;                                                           \
      int64_t pos = v != v ? 0 : (int64_t)((v - lo) * nb / (hi - lo));                          \
      if (pos >= c->bins) pos = c->bins - 1;                                                    \
      if (pos < 0) pos = 0;                                                                     \
      local[pos]++;                                                                             \
    }                                                                                           \
  } while (0)

/* integers: (x - min) * bins / (max - min) in integer arithmetic (PyTorch's CUDA; unsigned, so
 * no overflow is undefined) */
#define KD_HISTC_INT_LOOP(T)                                                                    \
  do {                                                                                          \
    const int64_t lo = (int64_t)c->lo, hi = (int64_t)c->hi;                                     \
    const T *x = (const T *)c->x;                                                               \
    for (int64_t i = begin; i < end; i++) {                                                     \
      const int64_t v = (int64_t)x[i];                                                          \
      if (v < lo || v > hi) continue;                                                           \
      int64_t pos = (int64_t)((uint64_t)(v - lo) * (uint64_t)c->bins / (uint64_t)(hi - lo));    \
      local[pos >= c->bins ? c->bins - 1 : pos < 0 ? 0 : pos]++;                                \
    }                                                                                           \
  } while (0)

static void kd_histc_run(void *p, int64_t begin, int64_t end) {
  kd_histc_ctx *c = (kd_histc_ctx *)p;
  int64_t *local = calloc((size_t)c->bins, sizeof(int64_t));
  if (!local) { __atomic_store_n(&c->oom, 1, __ATOMIC_RELAXED); return; }
  switch (c->dt) {
    case KD_DTYPE_F32: KD_HISTC_LOOP(float, float, KD_LD_ID); break;
    case KD_DTYPE_F64: KD_HISTC_LOOP(double, double, KD_LD_ID); break;
    case KD_DTYPE_F16: KD_HISTC_LOOP(uint16_t, float, kd_f16_to_f32); break;
    case KD_DTYPE_BF16: KD_HISTC_LOOP(uint16_t, float, kd_bf16_to_f32); break;
    case KD_DTYPE_I8: KD_HISTC_INT_LOOP(int8_t); break;
    case KD_DTYPE_U8: KD_HISTC_INT_LOOP(uint8_t); break;
    case KD_DTYPE_I16: KD_HISTC_INT_LOOP(int16_t); break;
    case KD_DTYPE_I32: KD_HISTC_INT_LOOP(int32_t); break;
    default: KD_HISTC_INT_LOOP(int64_t); break;
  }
  for (int64_t b = 0; b < c->bins; b++)
    if (local[b]) __atomic_fetch_add(&c->counts[b], local[b], __ATOMIC_RELAXED);
  free(local);
}

/* The smallest and largest element of t (any device; one sync on a device). */
static kd_status kd_hist_extrema(kd_tensor *t, kd_scalar *lo, kd_scalar *hi) {
  kd_tensor *a = NULL, *b = NULL;
  kd_value args[3] = {kd_value_tensor(t), kd_value_none(), kd_value_bool(false)};
  kd_status st = kd_call1(KD_OP_amin, args, &a);
  if (st == KD_OK) st = kd_call1(KD_OP_amax, args, &b);
  if (st == KD_OK) st = kd_cpu_item(a, lo);
  if (st == KD_OK) st = kd_cpu_item(b, hi);
  if (a) kd_tensor_release(a);
  if (b) kd_tensor_release(b);
  return st;
}

KD_KERNEL(kd_cpu_histc) {
  (void)op, (void)ks;
  kd_tensor *self = args[0].v.t;
  const int64_t bins = args[1].v.i;
  if (self->dtype == KD_DTYPE_BOOL)
    return kd_error(KD_ERR_NOT_SUPPORTED, "\"histogram_cpu\" not implemented for '%s'", kd_cpu_torch_name(self->dtype));
  double lo = kd_scalar_to_double(args[2].v.s), hi = kd_scalar_to_double(args[3].v.s);
  if (lo == hi && kd_tensor_numel(self) > 0) {
    kd_scalar a, b;
    KD_TRY(kd_hist_extrema(self, &a, &b));
    lo = kd_scalar_to_double(a);
    hi = kd_scalar_to_double(b);
  }
  if (lo == hi) lo -= 1, hi += 1;
  if (isinf(lo) || isinf(hi) || isnan(lo) || isnan(hi))
    return kd_error(KD_ERR_INVALID_ARGUMENT, "torch.histc: range of [%g, %g] is not finite", lo, hi);
  if (!(lo < hi)) return kd_error(KD_ERR_INVALID_ARGUMENT, "torch.histc: max must be larger than min");
  if (bins <= 0)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "torch.histogram(): bins must be > 0, but got %lld for dimension 0", (long long)bins);
  /* the range's ends as the input dtype holds them (PyTorch's bin edges are a tensor of it);
   * integers truncated, as PyTorch's CUDA */
  if (!kd_dtype_is_float(self->dtype)) {
    lo = (double)(int64_t)lo, hi = (double)(int64_t)hi;
    if (!(lo < hi)) return kd_error(KD_ERR_INVALID_ARGUMENT, "torch.histc: max must be larger than min");
  } else if (self->dtype != KD_DTYPE_F64) {
    lo = (float)lo, hi = (float)hi;
  }
  kd_device dev = kd_tensor_device(self);
  kd_tensor *x = NULL, *out = NULL;
  KD_TRY(kd_cpu_cast(self, self->dtype, true, &x));
  kd_status st = kd_tensor_empty(&bins, 1, self->dtype, dev, &out);
  const int64_t n = kd_tensor_numel(x);
  if (st == KD_OK && dev.type != KD_DEVICE_CPU) {
    kd_dev_op o;
    memset(&o, 0, sizeof o);
    o.kind = KD_DEV_OP_HIST;
    o.code = 0;
    o.dtype = self->dtype;
    o.i[0] = n;
    o.i[1] = bins;
    o.d[0] = lo;
    o.d[1] = hi;
    void *p[2] = {kd_dev_ptr(x), kd_dev_ptr(out)};
    kd_dtype dts[2] = {self->dtype, self->dtype};
    st = kd_dev_op_run_ptrs(dev, &o, 2, p, dts);
  } else if (st == KD_OK) {
    kd_histc_ctx c = {kd_tensor_data(x), calloc((size_t)bins, sizeof(int64_t)), bins, lo, hi, self->dtype, 0};
    if (!c.counts) st = kd_error(KD_ERR_OOM, "out of host memory in histc");
    if (st == KD_OK && n > 0) kd_parallel_for(0, n, KD_PARALLEL_GRAIN, kd_histc_run, &c);
    if (st == KD_OK && c.oom) st = kd_error(KD_ERR_OOM, "out of host memory in histc");
    if (st == KD_OK) {
      char *o = kd_tensor_data(out);
      const size_t es = kd_dtype_size(self->dtype);
      for (int64_t b = 0; b < bins; b++) kd_scalar_store(kd_scalar_f((double)c.counts[b]), self->dtype, o + b * (int64_t)es);
    }
    free(c.counts);
  }
  kd_tensor_release(x);
  if (st != KD_OK) {
    if (out) kd_tensor_release(out);
    return st;
  }
  kd_out_take(outs, 0, out);
  return KD_OK;
}

/* ---- bincount ---- */

#define KD_BINCOUNT_LOOP(T)                                                                     \
  do {                                                                                          \
    const T *x = (const T *)xd;                                                                 \
    if (!w32 && !w64)                                                                           \
      for (int64_t i = 0; i < n; i++) ((int64_t *)od)[(int64_t)x[i]]++;                         \
    else if (w32)                                                                               \
      for (int64_t i = 0; i < n; i++) ((float *)od)[(int64_t)x[i]] += w32[i];                   \
    else                                                                                        \
      for (int64_t i = 0; i < n; i++) ((double *)od)[(int64_t)x[i]] += w64[i];                  \
  } while (0)

static void kd_bincount_host(const char *xd, kd_dtype dt, int64_t n, const float *w32, const double *w64, char *od) {
  switch (dt) {
    case KD_DTYPE_I8: KD_BINCOUNT_LOOP(int8_t); break;
    case KD_DTYPE_U8: KD_BINCOUNT_LOOP(uint8_t); break;
    case KD_DTYPE_I16: KD_BINCOUNT_LOOP(int16_t); break;
    case KD_DTYPE_I32: KD_BINCOUNT_LOOP(int32_t); break;
    default: KD_BINCOUNT_LOOP(int64_t); break;
  }
}

static kd_status kd_bincount_zeros(int64_t nbins, kd_dtype dt, kd_device dev, kd_tensor **out) {
  KD_TRY(kd_tensor_empty(&nbins, 1, dt, dev, out));
  kd_tensor *z;
  kd_status st = kd_tensor_empty(NULL, 0, KD_DTYPE_I64, kd_device_cpu(), &z);
  if (st == KD_OK) {
    *(int64_t *)kd_tensor_data(z) = 0;
    st = kd_cpu_copy_into(*out, z);
    kd_tensor_release(z);
  }
  if (st != KD_OK) kd_tensor_release(*out);
  return st;
}

KD_KERNEL(kd_cpu_bincount) {
  (void)op, (void)ks;
  kd_tensor *self = args[0].v.t, *weights = args[1].kind == KD_VALUE_TENSOR ? args[1].v.t : NULL;
  const int64_t minlength = args[2].v.i;
  kd_dtype dt = self->dtype;
  if (!kd_dtype_is_int(dt) || dt == KD_DTYPE_BOOL)
    return kd_error(KD_ERR_NOT_SUPPORTED, "\"bincount_cpu\" not implemented for '%s'", kd_cpu_torch_name(dt));
  if (minlength < 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "minlength should be >= 0");
  kd_device dev = kd_tensor_device(self);
  if (self->ndim == 1 && self->sizes[0] == 0) { /* int64 zeros, weights or not (PyTorch's) */
    kd_tensor *z;
    KD_TRY(kd_bincount_zeros(minlength, KD_DTYPE_I64, dev, &z));
    kd_out_take(outs, 0, z);
    return KD_OK;
  }
  if (self->ndim != 1) return kd_error(KD_ERR_INVALID_ARGUMENT, "bincount only supports 1-d non-negative integral inputs.");
  kd_scalar mn, mx;
  KD_TRY(kd_hist_extrema(self, &mn, &mx));
  if (kd_scalar_to_int(mn) < 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "bincount only supports 1-d non-negative integral inputs.");
  if (weights && (weights->ndim != 1 || weights->sizes[0] != self->sizes[0]))
    return kd_error(KD_ERR_SHAPE, "weights should be 1-d and have the same length as input");
  if (weights && kd_tensor_device(weights).type != dev.type)
    return kd_error(KD_ERR_DEVICE, "bincount: weights and input should be on the same device");
  if (kd_scalar_to_int(mx) == INT64_MAX)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "maximum value of input overflowed, it should be < %lld", (long long)INT64_MAX);
  int64_t nbins = kd_scalar_to_int(mx) + 1;
  if (nbins < minlength) nbins = minlength;
  const kd_dtype odt = !weights ? KD_DTYPE_I64 : weights->dtype == KD_DTYPE_F32 ? KD_DTYPE_F32 : KD_DTYPE_F64;
  kd_tensor *x = NULL, *w = NULL, *out = NULL;
  kd_status st = kd_cpu_cast(self, dt, true, &x);
  if (st == KD_OK && weights) st = kd_cpu_cast(weights, odt, true, &w);
  if (st == KD_OK) st = kd_bincount_zeros(nbins, odt, dev, &out);
  const int64_t n = self->sizes[0];
  if (st == KD_OK && dev.type != KD_DEVICE_CPU) {
    kd_dev_op o;
    memset(&o, 0, sizeof o);
    o.kind = KD_DEV_OP_HIST;
    o.code = 1;
    o.dtype = dt;
    o.i[0] = n;
    o.i[1] = nbins;
    void *p[3] = {kd_dev_ptr(x), kd_dev_ptr(w), kd_dev_ptr(out)};
    kd_dtype dts[3] = {dt, odt, odt};
    st = kd_dev_op_run_ptrs(dev, &o, 3, p, dts);
  } else if (st == KD_OK) {
    const float *w32 = w && odt == KD_DTYPE_F32 ? (const float *)kd_tensor_data(w) : NULL;
    const double *w64 = w && odt == KD_DTYPE_F64 ? (const double *)kd_tensor_data(w) : NULL;
    kd_bincount_host(kd_tensor_data(x), dt, n, w32, w64, kd_tensor_data(out));
  }
  if (x) kd_tensor_release(x);
  if (w) kd_tensor_release(w);
  if (st != KD_OK) {
    if (out) kd_tensor_release(out);
    return st;
  }
  kd_out_take(outs, 0, out);
  return KD_OK;
}
