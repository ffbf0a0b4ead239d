/* select.c - kthvalue and mode along one dim (kd_cpu_select_rows), as (values, indices).
 * The lines along dim are made contiguous with dim last: `rows` rows of n elements.
 * kthvalue: PyTorch's CPU quickselect (quick_select_template: median-of-three pivot, NaN the
 * largest) on a copy of each row with its positions, element k - 1 taken; running the same
 * partition steps gives the same index as PyTorch when k-th values tie. Rows are split over the
 * thread pool. float16/bfloat16 select in float32 (exact).
 * mode: the rows sorted (stable, through the sort op, so on any device), then each row's runs
 * of equal values counted: the first longest run wins (the smallest of the most frequent values,
 * as PyTorch), its index the last of the run, which the stable order makes the value's last
 * occurrence (PyTorch's CPU answer for rows its sort keeps stable). NaNs count as one value.
 * Device tensors: KD_DEV_OP_SELECT (cuda/ops_search.cu), code 0 kthvalue on the contiguous
 * rows, code 1 mode on the sorted values and positions; one thread per row. */
#include <stdlib.h>

#include "core/parallel.h"
#include "cpu/device_op_ptrs.h"

/* ---- kthvalue: PyTorch's quick_select_template, swapping values and positions together ---- */
#define KD_GT_OR_NAN(x, y) (((x) != (x) && (y) == (y)) || (x) > (y))
#define KD_DEF_QSELECT(SFX, CT)                                                                 \
  static void kd_qselect_##SFX(CT *v, int64_t *ix, int64_t n, int64_t k) {                      \
    int64_t L = 0, R = n - 1;                                                                   \
    for (;;) {                                                                                  \
      if (R <= L) return;                                                                       \
      if (R == L + 1) {                                                                         \
        if (KD_GT_OR_NAN(v[L], v[R])) KD_QS_SWAP(L, R);                                         \
        return;                                                                                 \
      }                                                                                         \
      int64_t P = L + (R - L) / 2;                                                              \
      KD_QS_SWAP(P, L + 1);                                                                     \
      if (KD_GT_OR_NAN(v[L + 1], v[R])) KD_QS_SWAP(L + 1, R);                                   \
      if (KD_GT_OR_NAN(v[L], v[R])) KD_QS_SWAP(L, R);                                           \
      if (KD_GT_OR_NAN(v[L + 1], v[L])) KD_QS_SWAP(L + 1, L);                                   \
      int64_t i = L + 1, j = R;                                                                 \
      const CT piv = v[L];                                                                      \
      for (;;) {                                                                                \
        do i++; while (KD_GT_OR_NAN(piv, v[i]));                                                \
        do j--; while (KD_GT_OR_NAN(v[j], piv));                                                \
        if (j < i) break;                                                                       \
        KD_QS_SWAP(i, j);                                                                       \
      }                                                                                         \
      KD_QS_SWAP(L, j);                                                                         \
      if (j <= k) L = i;                                                                        \
      if (j >= k) R = j - 1;                                                                    \
    }                                                                                           \
  }
#define KD_QS_SWAP(a, b)                                                                        \
  do {                                                                                          \
    __typeof__(v[0]) tv_ = v[a]; v[a] = v[b]; v[b] = tv_;                                       \
    int64_t ti_ = ix[a]; ix[a] = ix[b]; ix[b] = ti_;                                            \
  } while (0)
KD_DEF_QSELECT(f, float)
KD_DEF_QSELECT(d, double)
KD_DEF_QSELECT(l, int64_t)

typedef struct kd_kth_ctx {
  const char *x;
  char *values;
  int64_t *indices;
  int64_t n, k;
  kd_dtype dt;
  int oom;
} kd_kth_ctx;

#define KD_KTH_ROWS(T, CT, LD, SFX)                                                             \
  do {                                                                                          \
    CT *v = (CT *)buf;                                                                          \
    for (int64_t r = begin; r < end; r++) {                                                     \
      const T *row = (const T *)c->x + r * n;                                                   \
      for (int64_t e = 0; e < n; e++) v[e] = (CT)LD(row[e]), ix[e] = e;                         \
      kd_qselect_##SFX(v, ix, n, c->k - 1);                                                     \
      ((T *)c->values)[r] = row[ix[c->k - 1]];                                                  \
      c->indices[r] = ix[c->k - 1];                                                             \
    }                                                                                           \
  } while (0)

static void kd_kth_run(void *p, int64_t begin, int64_t end) {
  kd_kth_ctx *c = (kd_kth_ctx *)p;
  const int64_t n = c->n;
  void *buf = malloc(sizeof(double) * (size_t)n);
  int64_t *ix = malloc(sizeof(int64_t) * (size_t)n);
  if (!buf || !ix) {
    __atomic_store_n(&c->oom, 1, __ATOMIC_RELAXED);
  } else {
    switch (c->dt) {
      case KD_DTYPE_F32: KD_KTH_ROWS(float, float, KD_LD_ID, f); break;
      case KD_DTYPE_F64: KD_KTH_ROWS(double, double, KD_LD_ID, d); break;
      case KD_DTYPE_F16: KD_KTH_ROWS(uint16_t, float, kd_f16_to_f32, f); break;
      case KD_DTYPE_BF16: KD_KTH_ROWS(uint16_t, float, kd_bf16_to_f32, f); break;
      case KD_DTYPE_I8: KD_KTH_ROWS(int8_t, int64_t, KD_LD_ID, l); break;
      case KD_DTYPE_I16: KD_KTH_ROWS(int16_t, int64_t, KD_LD_ID, l); break;
      case KD_DTYPE_I32: KD_KTH_ROWS(int32_t, int64_t, KD_LD_ID, l); break;
      case KD_DTYPE_I64: KD_KTH_ROWS(int64_t, int64_t, KD_LD_ID, l); break;
      default: KD_KTH_ROWS(uint8_t, int64_t, KD_LD_ID, l); break; /* uint8, bool */
    }
  }
  free(buf);
  free(ix);
}

/* ---- mode: runs of the sorted rows ---- */
static void kd_mode_host(const char *sv, const int64_t *si, int64_t rows, int64_t n, kd_dtype dt, char *values,
                         int64_t *indices) {
  const size_t es = kd_dtype_size(dt);
  for (int64_t r = 0; r < rows; r++) {
    const char *vr = sv + (size_t)(r * n) * es;
    const int64_t *ir = si + r * n;
    int64_t best = 0, best_at = 0, run = 0;
    for (int64_t e = 0; e < n; e++) {
      run++;
      /* equal as the sort's order sees them: same bits, or both NaN / both zeros for floats */
      bool last = e == n - 1;
      if (!last) {
        kd_scalar a = kd_scalar_load(dt, vr + (size_t)e * es), b = kd_scalar_load(dt, vr + (size_t)(e + 1) * es);
        if (a.kind == KD_KIND_FLOAT) last = !(a.v.f == b.v.f || (a.v.f != a.v.f && b.v.f != b.v.f));
        else last = memcmp(vr + (size_t)e * es, vr + (size_t)(e + 1) * es, es) != 0;
      }
      if (last) {
        if (run > best) best = run, best_at = e;
        run = 0;
      }
    }
    memcpy(values + (size_t)r * es, vr + (size_t)best_at * es, es);
    indices[r] = ir[best_at];
  }
}

/* x (rows x n, contiguous, any device) sorted along its last dim: values and positions. */
static kd_status kd_mode_sorted(kd_tensor *x, kd_tensor **sv, kd_tensor **si) {
  kd_value a[4] = {kd_value_tensor(x), kd_value_int(-1), kd_value_bool(false), kd_value_bool(true)};
  kd_value o[KD_OP_MAX_OUTS];
  for (int i = 0; i < KD_OP_MAX_OUTS; i++) o[i] = kd_value_none();
  KD_TRY(kd_call(KD_OP_sort, a, o));
  *sv = o[0].v.t;
  *si = o[1].v.t;
  return KD_OK;
}

KD_KERNEL(kd_cpu_select_rows) {
  (void)ks;
  const bool kth = op->code == KD_SELECT_KTHVALUE;
  const char *name = kth ? "kthvalue" : "mode";
  kd_tensor *self = args[0].v.t;
  const int64_t k = kth ? args[1].v.i : 0;
  const int64_t dimv = args[kth ? 2 : 1].v.i;
  const bool keepdim = args[kth ? 3 : 2].v.b;
  int dim;
  KD_TRY(kd_shape_wrap_dim(dimv, self->ndim, &dim));
  if (self->ndim == 0) dim = 0;
  const int64_t n = self->ndim ? self->sizes[dim] : 1;
  if (self->ndim > 0 && n == 0)
    return kd_error(KD_ERR_INDEX, "%s(): Expected reduction dim %d to have non-zero size.", name, dim);
  if (kth && (k < 1 || k > n))
    return kd_error(KD_ERR_INDEX, "kthvalue(): selected number k out of range for dimension %d", dim);
  int64_t osz[KD_MAX_DIMS], sz[KD_MAX_DIMS], stv[KD_MAX_DIMS];
  int ond = 0, q = 0;
  for (int d = 0; d < self->ndim; d++) {
    if (d != dim || keepdim) osz[ond++] = d == dim ? 1 : self->sizes[d];
    if (d != dim) sz[q] = self->sizes[d], stv[q++] = self->strides[d];
  }
  const int64_t rows = kd_tensor_numel(self) / n;
  kd_device dev = kd_tensor_device(self);
  kd_dtype dt = self->dtype;
  kd_tensor *values = NULL, *indices = NULL, *v = NULL, *x = NULL, *sv = NULL, *si = NULL;
  kd_status st = kd_tensor_empty(osz, ond, dt, dev, &values);
  if (st == KD_OK) st = kd_tensor_empty(osz, ond, KD_DTYPE_I64, dev, &indices);
  /* x: rows x n, dim last, contiguous */
  int64_t xsz[2] = {rows, n}, vst[KD_MAX_DIMS];
  memcpy(vst, stv, sizeof(int64_t) * (size_t)q);
  sz[q] = n, vst[q] = self->ndim ? self->strides[dim] : 1;
  if (st == KD_OK) st = kd_tensor_new_view(self, sz, vst, q + 1, self->offset, &v);
  if (st == KD_OK) {
    kd_tensor *c;
    st = kd_cpu_cast(v, dt, true, &c);
    if (st == KD_OK) {
      const int64_t xst[2] = {n, 1};
      st = kd_tensor_new_view(c, xsz, xst, 2, c->offset, &x);
      kd_tensor_release(c);
    }
  }
  if (st == KD_OK && !kth && rows > 0) st = kd_mode_sorted(x, &sv, &si);
  if (st == KD_OK && rows > 0 && dev.type != KD_DEVICE_CPU) {
    kd_dev_op o;
    memset(&o, 0, sizeof o);
    o.kind = KD_DEV_OP_SELECT;
    o.code = kth ? 0 : 1;
    o.dtype = dt;
    o.i[0] = rows;
    o.i[1] = n;
    o.i[2] = k;
    void *p[4] = {kd_dev_ptr(kth ? x : sv), kd_dev_ptr(si), kd_dev_ptr(values), kd_dev_ptr(indices)};
    kd_dtype dts[4] = {dt, KD_DTYPE_I64, dt, KD_DTYPE_I64};
    st = kd_dev_op_run_ptrs(dev, &o, 4, p, dts);
  } else if (st == KD_OK && rows > 0 && kth) {
    kd_kth_ctx c = {kd_tensor_data(x), kd_tensor_data(values), (int64_t *)kd_tensor_data(indices), n, k, dt, 0};
    const int64_t grain = n >= KD_PARALLEL_GRAIN ? 1 : (KD_PARALLEL_GRAIN + n - 1) / n;
    kd_parallel_for(0, rows, grain, kd_kth_run, &c);
    if (c.oom) st = kd_error(KD_ERR_OOM, "out of host memory in kthvalue");
  } else if (st == KD_OK && rows > 0) {
    kd_mode_host(kd_tensor_data(sv), (const int64_t *)kd_tensor_data(si), rows, n, dt, kd_tensor_data(values),
                 (int64_t *)kd_tensor_data(indices));
  }
  kd_tensor *tmp[4] = {v, x, sv, si};
  for (int i = 0; i < 4; i++)
    if (tmp[i]) kd_tensor_release(tmp[i]);
  if (st != KD_OK) {
    if (values) kd_tensor_release(values);
    if (indices) kd_tensor_release(indices);
    return st;
  }
  kd_out_take(outs, 0, values);
  kd_out_take(outs, 1, indices);
  return KD_OK;
}
