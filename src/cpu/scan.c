/* scan.c - CPU scans along one dim: cumsum, cumprod (floating inputs accumulate in double,
 * integer and bool ones as int64, as PyTorch), cummax/cummin (values and the index of the last
 * of ties; NaN propagates), cumprodBackward (exact with zeros in the line) and logcumsumexp
 * (PyTorch's log_add_exp accumulated in double). On a device, cumsum/cumprod go through the rows
 * hook and the others through KD_DEV_OP_SCAN.
 *
 * Lines: THE iterator runs over the other dims (operands given size 1 along dim), and the
 * loop scans each line it is handed along dim using the dim's byte strides from the context.
 * A loop call gets n lines at once; they are scanned in blocks of 64 interleaved lines, so
 * that when lines are adjacent in memory (a scan over an outer dim) the block is one
 * contiguous vector per step, and when the dim itself is contiguous the 64 independent
 * running sums hide the add latency. Large scans split the lines across threads
 * (kd_red_run_owned). */
#include <math.h>
#include <stdlib.h>

#include "core/parallel.h"
#include "cpu/reduce.h"
#include "cpu/device_hooks.h"
#include "cpu/device_op_ptrs.h"
#include "dispatch/keys.h"

#define KD_SCAN_BLOCK 64

typedef struct kd_scan_ctx {
  int code;
  int64_t len;
  int64_t sd[4]; /* byte stride along dim of each operand */
} kd_scan_ctx;

/* cumsum / cumprod: operands out (T), in (T); AT the accumulator type. */
#define KD_SCAN_RUN(T, CT, LD, ST, AT, IDENT, STEP)                                                          \
  do {                                                                                        \
    const int64_t so = strides[0], si = strides[1], sdo = c->sd[0], sdi = c->sd[1];           \
    /* adjacent lines: wide blocks vectorize; lines apart in memory: few streams at once */   \
    const int64_t blk = si == (int64_t)sizeof(T) ? KD_SCAN_BLOCK : 4;                         \
    for (int64_t i0 = 0; i0 < n; i0 += blk) {                                                 \
      int nb = (int)(n - i0 < blk ? n - i0 : blk);                                            \
      AT acc[KD_SCAN_BLOCK];                                                                  \
      for (int j = 0; j < nb; j++) acc[j] = (IDENT);                                          \
      char *o0 = data[0] + i0 * so, *x0 = data[1] + i0 * si;                                  \
      if (so == (int64_t)sizeof(T) && si == (int64_t)sizeof(T)) {                             \
        for (int64_t k = 0; k < c->len; k++) {                                                \
          T *o = (T *)(o0 + k * sdo);                                                         \
          const T *xs = (const T *)(x0 + k * sdi);                                            \
          for (int j = 0; j < nb; j++) { AT a = acc[j]; CT x = LD(xs[j]); acc[j] = (STEP); o[j] = ST((CT)acc[j]); } \
        }                                                                                     \
      } else {                                                                                \
        for (int64_t k = 0; k < c->len; k++)                                                  \
          for (int j = 0; j < nb; j++) {                                                      \
            AT a = acc[j];                                                                    \
            CT x = LD(*(const T *)(x0 + j * si + k * sdi));                                   \
            acc[j] = (STEP);                                                                  \
            *(T *)(o0 + j * so + k * sdo) = ST((CT)acc[j]);                                   \
          }                                                                                   \
      }                                                                                       \
    }                                                                                         \
  } while (0)

#define KD_SCAN_F(T, CT, LD, ST, SUM) if (SUM) KD_SCAN_RUN(T, CT, LD, ST, double, 0, a + (double)x); else KD_SCAN_RUN(T, CT, LD, ST, double, 1, a * (double)x)
#define KD_SCAN_I(T, CT, LD, ST, SUM)                                                                        \
  if (SUM) KD_SCAN_RUN(T, CT, LD, ST, uint64_t, 0, a + (uint64_t)(int64_t)x); else KD_SCAN_RUN(T, CT, LD, ST, uint64_t, 1, a * (uint64_t)(int64_t)x)
#define KD_SCAN_B KD_SCAN_I
#define KD_DEF_SCAN(SFX, DT, T, CT, LD, ST, MS, K, UT)                                        \
  static void kd_scan_loop_##SFX(void *ctx, char **data, const int64_t *strides, int64_t n) { \
    const kd_scan_ctx *c = (const kd_scan_ctx *)ctx;                                          \
    KD_SCAN_##K(T, CT, LD, ST, c->code == KD_SCAN_CUMSUM);                                                   \
  }
KD_ROWS_ALL(KD_DEF_SCAN)
#define KD_SCAN_ENTRY(SFX, DT, ...) KD_LOOP_ENTRY(kd_scan_loop_, SFX, DT)
static const kd_iter_loop_fn kd_scan_loops[KD_DTYPE_COUNT] = {KD_ROWS_ALL(KD_SCAN_ENTRY)};

/* cummax / cummin: operands values (T), indices (int64), in (T), one line at a time. */
#define KD_DEF_CUMX(SFX, DT, T, CT, LD, ST, MS, K, UT)                                        \
  static void kd_cumx_loop_##SFX(void *ctx, char **data, const int64_t *strides, int64_t n) { \
    const kd_scan_ctx *c = (const kd_scan_ctx *)ctx;                                          \
    bool mx = c->code == KD_SCAN_CUMMAX;                                                      \
    for (int64_t i = 0; i < n; i++) {                                                         \
      char *pv = data[0] + i * strides[0], *px = data[1] + i * strides[1], *pi = data[2] + i * strides[2]; \
      CT best = LD(*(const T *)pi);                                                           \
      int64_t bi = 0;                                                                         \
      for (int64_t k = 0; k < c->len; k++) {                                                  \
        CT x = LD(*(const T *)(pi + k * c->sd[2]));                                           \
        if (x != x || (best == best && (mx ? x >= best : x <= best))) { best = x; bi = k; }   \
        *(T *)(pv + k * c->sd[0]) = ST(best);                                                 \
        *(int64_t *)(px + k * c->sd[1]) = bi;                                                 \
      }                                                                                       \
    }                                                                                         \
  }
KD_ROWS_ALL(KD_DEF_CUMX)
#define KD_CUMX_ENTRY(SFX, DT, ...) KD_LOOP_ENTRY(kd_cumx_loop_, SFX, DT)
static const kd_iter_loop_fn kd_cumx_loops[KD_DTYPE_COUNT] = {KD_ROWS_ALL(KD_CUMX_ENTRY)};

/* cumprodBackward: operands gin, grad, self, result (all T), one line at a time.
 * z = the first zero of the line: for k < z, gin_k = sum_{k<=j<z} g_j out_j / x_k; gin_z =
 * sum_{j>=z} g_j prod_{i<=j, i!=z} x_i; after z, 0. */
#define KD_DEF_CPB(SFX, DT, T, CT, LD, ST, MS, K, UT)                                         \
  static void kd_cpb_loop_##SFX(void *ctx, char **data, const int64_t *strides, int64_t n) {  \
    const kd_scan_ctx *c = (const kd_scan_ctx *)ctx;                                          \
    const int64_t len = c->len;                                                               \
    for (int64_t i = 0; i < n; i++) {                                                         \
      char *po = data[0] + i * strides[0], *pg = data[1] + i * strides[1];                    \
      char *px = data[2] + i * strides[2], *pr = data[3] + i * strides[3];                    \
      int64_t z = len;                                                                        \
      for (int64_t k = 0; k < len && z == len; k++) if (LD(*(const T *)(px + k * c->sd[2])) == 0) z = k; \
      double s = 0;                                                                           \
      for (int64_t k = len - 1; k >= 0; k--) {                                                \
        double gk = 0;                                                                        \
        if (k < z) {                                                                          \
          s += (double)LD(*(const T *)(pg + k * c->sd[1])) * (double)LD(*(const T *)(pr + k * c->sd[3])); \
          gk = s / (double)LD(*(const T *)(px + k * c->sd[2]));                               \
        } else if (k == z) {                                                                  \
          double q = z > 0 ? (double)LD(*(const T *)(pr + (z - 1) * c->sd[3])) : 1.0;         \
          double acc = (double)LD(*(const T *)(pg + z * c->sd[1])) * q;                       \
          for (int64_t j = z + 1; j < len; j++) {                                             \
            q *= (double)LD(*(const T *)(px + j * c->sd[2]));                                 \
            acc += (double)LD(*(const T *)(pg + j * c->sd[1])) * q;                           \
          }                                                                                   \
          gk = acc;                                                                           \
        }                                                                                     \
        *(T *)(po + k * c->sd[0]) = ST((CT)gk);                                               \
      }                                                                                       \
    }                                                                                         \
  }
KD_ROWS_FLOAT(KD_DEF_CPB)
#define KD_CPB_ENTRY(SFX, DT, ...) KD_LOOP_ENTRY(kd_cpb_loop_, SFX, DT)
static const kd_iter_loop_fn kd_cpb_loops[KD_DTYPE_COUNT] = {KD_ROWS_FLOAT(KD_CPB_ENTRY)};

/* logcumsumexp: operands out, in (float T), one line at a time; PyTorch's log_add_exp in double
 * (NaN propagates; equal infinities stay as they are). */
static inline double kd_log_add_exp(double x, double y) {
  const double mn = y != y ? y : (y < x ? y : x), mx = y != y ? y : (x < y ? y : x);
  if (mn != mx || isfinite(mn)) return log1p(exp(mn - mx)) + mx;
  return x;
}
#define KD_DEF_LCSE(SFX, DT, T, CT, LD, ST, MS, K, UT)                                        \
  static void kd_lcse_loop_##SFX(void *ctx, char **data, const int64_t *strides, int64_t n) { \
    const kd_scan_ctx *c = (const kd_scan_ctx *)ctx;                                          \
    for (int64_t i = 0; i < n; i++) {                                                         \
      char *po = data[0] + i * strides[0], *px = data[1] + i * strides[1];                    \
      double acc = -INFINITY;                                                                 \
      for (int64_t k = 0; k < c->len; k++) {                                                  \
        acc = kd_log_add_exp((double)LD(*(const T *)(px + k * c->sd[1])), acc);               \
        *(T *)(po + k * c->sd[0]) = ST((CT)acc);                                              \
      }                                                                                       \
    }                                                                                         \
  }
KD_ROWS_FLOAT(KD_DEF_LCSE)
#define KD_LCSE_ENTRY(SFX, DT, ...) KD_LOOP_ENTRY(kd_lcse_loop_, SFX, DT)
static const kd_iter_loop_fn kd_lcse_loops[KD_DTYPE_COUNT] = {KD_ROWS_FLOAT(KD_LCSE_ENTRY)};

/* Runs `loop` over the lines of dim `dim` of the operands (all with `shape`'s sizes). */
static kd_status kd_scan_lines(kd_tensor **ts, int nops, int nout, const kd_tensor *shape, int dim, kd_iter_loop_fn loop,
                               kd_scan_ctx *c) {
  int64_t lsizes[KD_MAX_DIMS];
  int nd = shape->ndim;
  memcpy(lsizes, shape->sizes, sizeof(int64_t) * (size_t)nd);
  c->len = nd ? shape->sizes[dim] : 1;
  if (nd) lsizes[dim] = 1;
  kd_iter_operand ops[4];
  for (int k = 0; k < nops; k++) {
    ops[k] = kd_iter_operand_of(ts[k]);
    ops[k].ndim = nd;
    ops[k].sizes = lsizes;
    c->sd[k] = nd ? ts[k]->strides[dim] * (int64_t)kd_dtype_size(ts[k]->dtype) : 0;
  }
  if (kd_tensor_numel(shape) == 0) return KD_OK;
  kd_iter it;
  KD_TRY(kd_iter_build(&it, ops, nops, nout, 0));
  if (!kd_red_run_owned(&it, loop, c, c->len)) {
    it.flags |= KD_ITER_SERIAL;
    kd_iter_for_each(&it, loop, c);
  }
  return KD_OK;
}

/* cummax/cummin (grad == NULL) and cumprodBackward of device tensors: contiguous buffers seen
 * as [outer, len, inner] for the device's KD_DEV_OP_SCAN kernel (one thread per line, the loops
 * above). Outputs: values and int64 indices, or the input gradient. */
static kd_status kd_scan_device(int code, kd_tensor *self, int dim, kd_tensor *grad, kd_tensor *result, kd_value *outs) {
  kd_device dev = kd_tensor_device(self);
  kd_dtype dt = self->dtype;
  kd_tensor *x = NULL, *g = NULL, *r = NULL, *o0 = NULL, *o1 = NULL;
  kd_status st = kd_cpu_cast(self, dt, true, &x);
  if (st == KD_OK && grad) st = kd_cpu_cast(grad, dt, true, &g);
  if (st == KD_OK && grad) st = kd_cpu_cast(result, dt, true, &r);
  if (st == KD_OK) st = kd_tensor_empty(self->sizes, self->ndim, dt, dev, &o0);
  if (st == KD_OK && !grad) st = kd_tensor_empty(self->sizes, self->ndim, KD_DTYPE_I64, dev, &o1);
  if (st == KD_OK && kd_tensor_numel(self) > 0) {
    kd_dev_op op;
    memset(&op, 0, sizeof op);
    op.kind = KD_DEV_OP_SCAN;
    op.code = code == KD_SCAN_CUMMAX ? 0 : code == KD_SCAN_CUMMIN ? 1 : 2;
    op.dtype = dt;
    op.i[0] = op.i[2] = 1;
    op.i[1] = self->ndim ? self->sizes[dim] : 1;
    for (int d = 0; d < dim; d++) op.i[0] *= self->sizes[d];
    for (int d = dim + 1; d < self->ndim; d++) op.i[2] *= self->sizes[d];
    if (grad) {
      void *p[4] = {kd_dev_ptr(x), kd_dev_ptr(g), kd_dev_ptr(r), kd_dev_ptr(o0)};
      const kd_dtype dts[4] = {dt, dt, dt, dt};
      st = kd_dev_op_run_ptrs(dev, &op, 4, p, dts);
    } else {
      void *p[3] = {kd_dev_ptr(x), kd_dev_ptr(o0), kd_dev_ptr(o1)};
      const kd_dtype dts[3] = {dt, dt, KD_DTYPE_I64};
      st = kd_dev_op_run_ptrs(dev, &op, 3, p, dts);
    }
  }
  if (x) kd_tensor_release(x);
  if (g) kd_tensor_release(g);
  if (r) kd_tensor_release(r);
  if (st != KD_OK) {
    if (o0) kd_tensor_release(o0);
    if (o1) kd_tensor_release(o1);
    return st;
  }
  kd_out_take(outs, 0, o0);
  if (o1) kd_out_take(outs, 1, o1);
  return KD_OK;
}

KD_KERNEL(kd_cpu_scan) {
  int code = op->code;
  kd_tensor *self = args[code == KD_SCAN_CUMPROD_BACKWARD ? 1 : 0].v.t;
  int64_t dv = args[code == KD_SCAN_CUMPROD_BACKWARD ? 2 : 1].v.i;
  int dim;
  KD_TRY(kd_shape_wrap_dim(dv, self->ndim, &dim));
  if (self->ndim == 0) dim = 0;
  kd_scan_ctx c = {code, 0, {0, 0, 0, 0}};
  kd_status st;
  kd_device dev = kd_tensor_device(self);
  if (code == KD_SCAN_CUMSUM || code == KD_SCAN_CUMPROD) {
    bool fl = kd_dtype_is_float(self->dtype);
    kd_dtype odt = kd_arg_dtype_or(&args[2], fl ? self->dtype : KD_DTYPE_I64);
    kd_tensor *in = NULL, *out = NULL;
    KD_TRY(kd_cpu_cast(self, odt, dev.type != KD_DEVICE_CPU, &in));
    st = kd_tensor_empty(self->sizes, self->ndim, odt, dev, &out);
    if (st == KD_OK && dev.type != KD_DEVICE_CPU) { /* the device hook, on contiguous [outer, len, inner] */
      kd_dev_rows r;
      memset(&r, 0, sizeof r);
      r.dev = dev;
      r.op = code == KD_SCAN_CUMSUM ? KD_DEV_ROWS_CUMSUM : KD_DEV_ROWS_CUMPROD;
      r.dtype = odt;
      r.len = self->ndim ? self->sizes[dim] : 1;
      r.outer = r.inner = 1;
      for (int d = 0; d < dim; d++) r.outer *= self->sizes[d];
      for (int d = dim + 1; d < self->ndim; d++) r.inner *= self->sizes[d];
      r.x = kd_tensor_data(in);
      r.y = kd_tensor_data(out);
      st = kd_cpu_device_rows ? kd_cpu_device_rows(&r)
                              : kd_error(KD_ERR_NOT_SUPPORTED, "no scan kernel is registered for this device");
    } else if (st == KD_OK) {
      kd_tensor *ts[2] = {out, in};
      st = kd_scan_lines(ts, 2, 1, self, dim, kd_scan_loops[odt], &c);
    }
    kd_tensor_release(in);
    if (st != KD_OK) {
      if (out) kd_tensor_release(out);
      return st;
    }
    kd_out_take(outs, 0, out);
    return KD_OK;
  }
  if (code == KD_SCAN_CUMMAX || code == KD_SCAN_CUMMIN) {
    if (dev.type != KD_DEVICE_CPU) return kd_scan_device(code, self, dim, NULL, NULL, outs);
    kd_tensor *values = NULL, *indices = NULL;
    st = kd_tensor_empty(self->sizes, self->ndim, self->dtype, kd_device_cpu(), &values);
    if (st == KD_OK) st = kd_tensor_empty(self->sizes, self->ndim, KD_DTYPE_I64, kd_device_cpu(), &indices);
    if (st == KD_OK) {
      kd_tensor *ts[3] = {values, indices, self};
      st = kd_scan_lines(ts, 3, 2, self, dim, kd_cumx_loops[self->dtype], &c);
    }
    if (st != KD_OK) {
      if (values) kd_tensor_release(values);
      if (indices) kd_tensor_release(indices);
      return st;
    }
    kd_out_take(outs, 0, values);
    kd_out_take(outs, 1, indices);
    return KD_OK;
  }
  if (code == KD_SCAN_LOGCUMSUMEXP) {
    if (!kd_dtype_is_float(self->dtype))
      return kd_error(KD_ERR_NOT_SUPPORTED, "\"logcumsumexp_out_cpu\" not implemented for '%s'", kd_cpu_torch_name(self->dtype));
    kd_tensor *in = NULL, *out = NULL;
    KD_TRY(kd_cpu_cast(self, self->dtype, dev.type != KD_DEVICE_CPU, &in));
    st = kd_tensor_empty(self->sizes, self->ndim, self->dtype, dev, &out);
    if (st == KD_OK && dev.type != KD_DEVICE_CPU && kd_tensor_numel(self) > 0) { /* KD_DEV_OP_SCAN code 3 */
      kd_dev_op o;
      memset(&o, 0, sizeof o);
      o.kind = KD_DEV_OP_SCAN;
      o.code = 3;
      o.dtype = self->dtype;
      o.i[0] = o.i[2] = 1;
      o.i[1] = self->ndim ? self->sizes[dim] : 1;
      for (int d = 0; d < dim; d++) o.i[0] *= self->sizes[d];
      for (int d = dim + 1; d < self->ndim; d++) o.i[2] *= self->sizes[d];
      void *p[2] = {kd_dev_ptr(in), kd_dev_ptr(out)};
      const kd_dtype dts[2] = {self->dtype, self->dtype};
      st = kd_dev_op_run_ptrs(dev, &o, 2, p, dts);
    } else if (st == KD_OK && dev.type == KD_DEVICE_CPU) {
      kd_tensor *ts[2] = {out, in};
      st = kd_scan_lines(ts, 2, 1, self, dim, kd_lcse_loops[self->dtype], &c);
    }
    kd_tensor_release(in);
    if (st != KD_OK) {
      if (out) kd_tensor_release(out);
      return st;
    }
    kd_out_take(outs, 0, out);
    return KD_OK;
  }
  if (code == KD_SCAN_CUMPROD_BACKWARD) {
    kd_tensor *grad = args[0].v.t, *result = args[3].v.t;
    if (!kd_dtype_is_float(self->dtype))
      return kd_error(KD_ERR_DTYPE, "cumprodBackward(): expected a floating point input, got %s", kd_cpu_torch_name(self->dtype));
    if (grad->ndim != self->ndim || result->ndim != self->ndim ||
        memcmp(grad->sizes, self->sizes, sizeof(int64_t) * (size_t)self->ndim) != 0 ||
        memcmp(result->sizes, self->sizes, sizeof(int64_t) * (size_t)self->ndim) != 0)
      return kd_error(KD_ERR_SHAPE, "cumprodBackward(): grad, self and result must have the same shape");
    if (dev.type != KD_DEVICE_CPU) return kd_scan_device(code, self, dim, grad, result, outs);
    kd_tensor *g = NULL, *r = NULL, *out = NULL;
    st = kd_cpu_cast(grad, self->dtype, false, &g);
    if (st == KD_OK) st = kd_cpu_cast(result, self->dtype, false, &r);
    if (st == KD_OK) st = kd_tensor_empty(self->sizes, self->ndim, self->dtype, kd_device_cpu(), &out);
    if (st == KD_OK) {
      kd_tensor *ts[4] = {out, g, self, r};
      st = kd_scan_lines(ts, 4, 1, self, dim, kd_cpb_loops[self->dtype], &c);
    }
    if (g) kd_tensor_release(g);
    if (r) kd_tensor_release(r);
    if (st != KD_OK) {
      if (out) kd_tensor_release(out);
      return st;
    }
    kd_out_take(outs, 0, out);
    return KD_OK;
  }
  return kd_error(KD_ERR_INTERNAL, "kd_cpu_scan: unknown op '%s'", op->name);
}
