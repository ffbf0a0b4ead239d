/* unique_consecutive.c - uniqueConsecutive (kd_cpu_unique_consecutive): each run of equal
 * consecutive elements (of the flattened input; with dim, of the slices along dim) collapsed to
 * its first, with the run index of every element (inverse, input-shaped; [size(dim)] with dim)
 * and the run lengths. Equality is PyTorch's: values compared with != (so NaN never equals
 * NaN; -0 equals 0), a slice equal to the previous one when all its elements are.
 * The input is made contiguous with dim first: n rows of m elements (m = 1 without dim). The
 * CPU and the device op (KD_DEV_OP_UNIQUE_CONSECUTIVE, cuda/ops_search.cu: flags, a prefix sum,
 * then the outputs, the run count read back with one sync as PyTorch's CUDA does) fill the same
 * buffers: the G distinct rows first in a buffer of n rows, the inverse, the G run lengths. */
#include <stdlib.h>

#include "cpu/device_op_ptrs.h"

#define KD_UC_DIFFERS(T, CT, LD) \
  for (int64_t q = 0; q < m && !d; q++) d = LD(((const T *)a)[q]) != LD(((const T *)b)[q]);

/* Whether row a (m elements of dt) differs from row b. */
static bool kd_uc_rows_differ(const char *a, const char *b, int64_t m, kd_dtype dt) {
  bool d = false;
  switch (dt) {
    case KD_DTYPE_F32: KD_UC_DIFFERS(float, float, KD_LD_ID) break;
    case KD_DTYPE_F64: KD_UC_DIFFERS(double, double, KD_LD_ID) break;
    case KD_DTYPE_F16: KD_UC_DIFFERS(uint16_t, float, kd_f16_to_f32) break;
    case KD_DTYPE_BF16: KD_UC_DIFFERS(uint16_t, float, kd_bf16_to_f32) break;
    default: d = memcmp(a, b, (size_t)m * kd_dtype_size(dt)) != 0; break; /* integers, bool: bits */
  }
  return d;
}

/* Elements (m == 1): the same runs with a typed comparison in the loop. */
#define KD_UC_FLAT(T, CT, LD)                                                                   \
  do {                                                                                          \
    const T *xv = (const T *)x;                                                                 \
    T *ov = (T *)out;                                                                           \
    for (int64_t i = 0; i < n; i++) {                                                           \
      if (i == 0 || LD(xv[i]) != LD(xv[i - 1])) {                                               \
        ov[++g] = xv[i];                                                                        \
        cnt[g] = 0;                                                                             \
      }                                                                                         \
      inv[i] = g;                                                                               \
      cnt[g]++;                                                                                 \
    }                                                                                           \
  } while (0)

/* The runs of x (n rows of m) into out (G rows), inv (n) and cnt (G); returns G. */
static int64_t kd_uc_host(const char *x, int64_t n, int64_t m, kd_dtype dt, char *out, int64_t *inv, int64_t *cnt) {
  int64_t g = -1;
  if (m == 1) {
    switch (dt) {
      case KD_DTYPE_F32: KD_UC_FLAT(float, float, KD_LD_ID); break;
      case KD_DTYPE_F64: KD_UC_FLAT(double, double, KD_LD_ID); break;
      case KD_DTYPE_F16: KD_UC_FLAT(uint16_t, float, kd_f16_to_f32); break;
      case KD_DTYPE_BF16: KD_UC_FLAT(uint16_t, float, kd_bf16_to_f32); break;
      case KD_DTYPE_I8: KD_UC_FLAT(int8_t, int8_t, KD_LD_ID); break;
      case KD_DTYPE_I16: KD_UC_FLAT(int16_t, int16_t, KD_LD_ID); break;
      case KD_DTYPE_I32: KD_UC_FLAT(int32_t, int32_t, KD_LD_ID); break;
      case KD_DTYPE_I64: KD_UC_FLAT(int64_t, int64_t, KD_LD_ID); break;
      default: KD_UC_FLAT(uint8_t, uint8_t, KD_LD_ID); break; /* uint8, bool */
    }
    return g + 1;
  }
  const size_t row = (size_t)m * kd_dtype_size(dt);
  for (int64_t i = 0; i < n; i++) {
    if (i == 0 || kd_uc_rows_differ(x + (size_t)i * row, x + (size_t)(i - 1) * row, m, dt)) {
      g++;
      memcpy(out + (size_t)g * row, x + (size_t)i * row, row);
      cnt[g] = 0;
    }
    inv[i] = g;
    cnt[g]++;
  }
  return g + 1;
}

KD_KERNEL(kd_cpu_unique_consecutive) {
  (void)op, (void)ks;
  kd_tensor *self = args[0].v.t;
  const bool want_inv = args[1].v.b, want_cnt = args[2].v.b, has_dim = args[3].kind == KD_VALUE_INT;
  kd_device dev = kd_tensor_device(self);
  kd_dtype dt = self->dtype;
  int dim = 0;
  if (has_dim) {
    if (self->ndim == 0)
      return kd_error(KD_ERR_INDEX, "Dimension specified as %lld but tensor has no dimensions", (long long)args[3].v.i);
    KD_TRY(kd_shape_wrap_dim(args[3].v.i, self->ndim, &dim));
    if (kd_tensor_numel(self) == 0) {
      int zeros = 0;
      for (int d = 0; d < self->ndim; d++) zeros += self->sizes[d] == 0;
      if (zeros != 1)
        return kd_error(KD_ERR_INVALID_ARGUMENT, "Number of zero sized dimensions is more than one, so unique cannot be applied ");
      if (self->sizes[dim] != 0)
        return kd_error(KD_ERR_INVALID_ARGUMENT,
                        "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied");
    }
  }
  /* x: self with dim first, contiguous: n rows of m */
  int64_t sz[KD_MAX_DIMS], stv[KD_MAX_DIMS];
  int nd = self->ndim, q = 0;
  if (has_dim) {
    sz[q] = self->sizes[dim], stv[q++] = self->strides[dim];
    for (int d = 0; d < nd; d++)
      if (d != dim) sz[q] = self->sizes[d], stv[q++] = self->strides[d];
  }
  kd_tensor *v = NULL, *x = NULL, *buf = NULL, *inv = NULL, *cnt = NULL;
  kd_status st = has_dim ? kd_tensor_new_view(self, sz, stv, nd, self->offset, &v) : KD_OK;
  if (st == KD_OK) st = kd_cpu_cast(has_dim ? v : self, dt, true, &x);
  const int64_t total = kd_tensor_numel(self);
  const int64_t n = has_dim ? self->sizes[dim] : total;
  const int64_t m = has_dim ? (n ? total / n : 0) : 1;
  int64_t bsz[KD_MAX_DIMS];
  int bnd = has_dim ? nd : 1;
  if (has_dim) memcpy(bsz, sz, sizeof(int64_t) * (size_t)nd);
  else bsz[0] = n;
  if (st == KD_OK) st = kd_tensor_empty(bsz, bnd, dt, dev, &buf);
  if (st == KD_OK)
    st = has_dim ? kd_tensor_empty(&n, 1, KD_DTYPE_I64, dev, &inv) : kd_tensor_empty(self->sizes, nd, KD_DTYPE_I64, dev, &inv);
  if (st == KD_OK) st = kd_tensor_empty(&n, 1, KD_DTYPE_I64, dev, &cnt);
  int64_t groups = 0;
  if (st == KD_OK && n > 0 && dev.type != KD_DEVICE_CPU) {
    st = kd_dev_unique_rows(dev, KD_DEV_OP_UNIQUE_CONSECUTIVE, dt, n, m, x, buf, inv, cnt, &groups);
  } else if (st == KD_OK && n > 0) {
    groups = kd_uc_host(kd_tensor_data(x), n, m, dt, kd_tensor_data(buf), (int64_t *)kd_tensor_data(inv),
                        (int64_t *)kd_tensor_data(cnt));
  }
  /* the first `groups` rows of buf with dim moved back, and the first `groups` counts */
  kd_tensor *uv = NULL, *u = NULL, *cv = NULL;
  if (st == KD_OK) {
    int64_t usz[KD_MAX_DIMS], ust[KD_MAX_DIMS];
    memcpy(usz, buf->sizes, sizeof(int64_t) * (size_t)bnd);
    memcpy(ust, buf->strides, sizeof(int64_t) * (size_t)bnd);
    usz[0] = groups;
    if (has_dim && dim != 0) { /* rows back to dim: a permuted view, copied */
      int64_t psz[KD_MAX_DIMS], pst[KD_MAX_DIMS];
      int r = 1;
      for (int d = 0; d < nd; d++) {
        if (d == dim) psz[d] = usz[0], pst[d] = ust[0];
        else psz[d] = usz[r], pst[d] = ust[r], r++;
      }
      st = kd_tensor_new_view(buf, psz, pst, nd, buf->offset, &uv);
      if (st == KD_OK) st = kd_cpu_cast(uv, dt, true, &u);
    } else {
      st = kd_tensor_new_view(buf, usz, ust, bnd, buf->offset, &u);
    }
  }
  const int64_t one = 1;
  if (st == KD_OK) st = kd_tensor_new_view(cnt, &groups, &one, 1, cnt->offset, &cv);
  kd_tensor *tmp[5] = {v, x, buf, uv, cnt};
  for (int k = 0; k < 5; k++)
    if (tmp[k]) kd_tensor_release(tmp[k]);
  return kd_cpu_unique_result(st, u, inv, cv, want_inv, want_cnt, outs);
}
