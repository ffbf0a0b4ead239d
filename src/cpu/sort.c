/* sort.c - sort, argsort and topk (kd_cpu_sort) and unique (kd_cpu_unique).
 *
 * Every element is mapped to a 64-bit key whose unsigned order is the value order: floats
 * (halves via float) through their IEEE bits with -0 folded into +0 and every NaN as the
 * largest key (PyTorch's order), integers with the sign bit flipped; descending order uses the
 * complemented key. Rows (the elements along `dim`) are sorted as (key, index) pairs by a
 * stable LSD radix sort that skips the byte passes where all keys agree (small rows: insertion
 * sort), so sort is always stable. These kernels need whole rows, so instead of the iterator
 * they split the rows over the thread pool (kd_parallel_for) and read/write each row with its
 * stride; topk keeps the k first keys in a heap (k <= n / 4) or selects them with a quickselect
 * before sorting them.
 * Device tensors: the rows are made contiguous with dim last and handed to the device op
 * (KD_DEV_OP_SORT / KD_DEV_OP_UNIQUE, cuda/ops_sort.cu), which sorts with the same key order. */
#include <stdlib.h>

#include "core/parallel.h"
#include "cpu/cpu_loops.h"
#include "cpu/device_op_ptrs.h"

typedef struct kd_sk {
  uint64_t key;
  int64_t idx;
} kd_sk;

static inline uint64_t kd_key_of_double(double d) {
  if (d != d) return UINT64_MAX;
  if (d == 0) d = 0.0;
  uint64_t b;
  memcpy(&b, &d, 8);
  return (b >> 63) ? ~b : (b | (1ull << 63));
}

static inline uint64_t kd_key_of(const char *p, kd_dtype dt) {
  switch (dt) {
    case KD_DTYPE_F32: return kd_key_of_double(*(const float *)p);
    case KD_DTYPE_F64: return kd_key_of_double(*(const double *)p);
    case KD_DTYPE_F16: return kd_key_of_double(kd_f16_to_f32(*(const uint16_t *)p));
    case KD_DTYPE_BF16: return kd_key_of_double(kd_bf16_to_f32(*(const uint16_t *)p));
    case KD_DTYPE_I8: return (uint64_t)(int64_t)*(const int8_t *)p ^ (1ull << 63);
    case KD_DTYPE_I16: return (uint64_t)(int64_t)*(const int16_t *)p ^ (1ull << 63);
    case KD_DTYPE_I32: return (uint64_t)(int64_t)*(const int32_t *)p ^ (1ull << 63);
    case KD_DTYPE_I64: return (uint64_t)*(const int64_t *)p ^ (1ull << 63);
    default: return *(const uint8_t *)p; /* uint8, bool */
  }
}

/* Stable sort of a[0..n) by key; tmp has room for n pairs. */
static void kd_sk_sort(kd_sk *a, kd_sk *tmp, int64_t n) {
  if (n <= 32) {
    for (int64_t i = 1; i < n; i++) {
      kd_sk x = a[i];
      int64_t j = i;
      while (j > 0 && a[j - 1].key > x.key) { a[j] = a[j - 1]; j--; }
      a[j] = x;
    }
    return;
  }
  uint32_t (*h)[256] = calloc(8, sizeof *h);
  if (!h) { /* no memory for histograms: insertion sort (correct, slow) */
    for (int64_t i = 1; i < n; i++) {
      kd_sk x = a[i];
      int64_t j = i;
      while (j > 0 && a[j - 1].key > x.key) { a[j] = a[j - 1]; j--; }
      a[j] = x;
    }
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    uint64_t k = a[i].key;
    for (int b = 0; b < 8; b++) h[b][(k >> (8 * b)) & 0xff]++;
  }
  kd_sk *src = a, *dst = tmp;
  for (int b = 0; b < 8; b++) {
    uint32_t *hb = h[b];
    if (hb[(src[0].key >> (8 * b)) & 0xff] == (uint32_t)n) continue; /* every key has this byte */
    uint32_t sum = 0;
    for (int v = 0; v < 256; v++) { uint32_t c = hb[v]; hb[v] = sum; sum += c; }
    for (int64_t i = 0; i < n; i++) dst[hb[(src[i].key >> (8 * b)) & 0xff]++] = src[i];
    kd_sk *t = src; src = dst; dst = t;
  }
  if (src != a) memcpy(a, src, sizeof(kd_sk) * (size_t)n);
  free(h);
}

/* Moves the k smallest keys (ties broken by index) to a[0..k). */
static inline bool kd_sk_less(kd_sk x, kd_sk y) { return x.key < y.key || (x.key == y.key && x.idx < y.idx); }
static void kd_sk_select(kd_sk *a, int64_t n, int64_t k) {
  int64_t lo = 0, hi = n - 1;
  while (hi > lo) {
    int64_t mid = lo + (hi - lo) / 2;
    kd_sk p = a[mid];
    if (kd_sk_less(a[hi], a[lo])) { kd_sk t = a[hi]; a[hi] = a[lo]; a[lo] = t; }
    if (kd_sk_less(p, a[lo])) p = a[lo];
    else if (kd_sk_less(a[hi], p)) p = a[hi];
    int64_t i = lo, j = hi;
    while (i <= j) {
      while (kd_sk_less(a[i], p)) i++;
      while (kd_sk_less(p, a[j])) j--;
      if (i <= j) { kd_sk t = a[i]; a[i] = a[j]; a[j] = t; i++; j--; }
    }
    if (k - 1 <= j) hi = j;
    else if (k - 1 >= i) lo = i;
    else break;
  }
}

/* Keeps the k smallest pairs (by key, then index) of the row in a[0..k), sorted: a max-heap
 * of the k best so far, so a row costs one key compare per element (for rows in index order,
 * a later element with an equal key never enters). Used by topk when k is small against n,
 * where it beats a quickselect over the whole row. */
static void kd_sk_sift(kd_sk *h, int64_t k, int64_t i) {
  kd_sk x = h[i];
  for (;;) {
    int64_t c = 2 * i + 1;
    if (c >= k) break;
    if (c + 1 < k && kd_sk_less(h[c], h[c + 1])) c++;
    if (!kd_sk_less(x, h[c])) break;
    h[i] = h[c];
    i = c;
  }
  h[i] = x;
}
static void kd_sk_heap_sort(kd_sk *a, int64_t k) { /* a[0..k) a max-heap -> ascending (key, index) */
  for (int64_t m = k - 1; m > 0; m--) {
    kd_sk t = a[0]; a[0] = a[m]; a[m] = t;
    kd_sk_sift(a, m, 0);
  }
}

/* buf[e] = (key of row[e * st], e), complemented when desc; the dtype switch is outside the loop. */
#define KD_KEYS_LOOP(EXPR)                                                                     \
  for (int64_t e = 0; e < n; e++) {                                                            \
    const char *p = row + e * st;                                                              \
    uint64_t key = (EXPR);                                                                     \
    buf[e].key = key ^ flip;                                                                   \
    buf[e].idx = e;                                                                            \
  }
static void kd_sk_fill(kd_sk *buf, const char *row, int64_t n, int64_t st, kd_dtype dt, bool desc) {
  const uint64_t flip = desc ? ~0ull : 0;
  switch (dt) {
    case KD_DTYPE_F32: KD_KEYS_LOOP(kd_key_of_double(*(const float *)p)); break;
    case KD_DTYPE_F64: KD_KEYS_LOOP(kd_key_of_double(*(const double *)p)); break;
    default: KD_KEYS_LOOP(kd_key_of(p, dt)); break;
  }
}

/* The heap selection above, made as the row's keys are: the k first keys fill the heap, and each
 * later element's key is compared with the heap's top as soon as it is made, so the row is read
 * once and only k keys are stored (no pass writing n keys and a second reading them). */
#define KD_HEAP_TOPK_LOOP(EXPR)                                                                \
  for (int64_t e = 0; e < k; e++) {                                                            \
    const char *p = row + e * st;                                                              \
    a[e].key = (EXPR) ^ flip;                                                                  \
    a[e].idx = e;                                                                              \
  }                                                                                            \
  for (int64_t i = k / 2 - 1; i >= 0; i--) kd_sk_sift(a, k, i);                               \
  for (int64_t e = k; e < n; e++) {                                                            \
    const char *p = row + e * st;                                                              \
    uint64_t key = (EXPR) ^ flip;                                                              \
    if (key < a[0].key) {                                                                      \
      a[0].key = key;                                                                          \
      a[0].idx = e;                                                                            \
      kd_sk_sift(a, k, 0);                                                                     \
    }                                                                                          \
  }
static void kd_sk_heap_topk(kd_sk *a, const char *row, int64_t n, int64_t st, kd_dtype dt, bool desc, int64_t k) {
  const uint64_t flip = desc ? ~0ull : 0;
  switch (dt) {
    case KD_DTYPE_F32: KD_HEAP_TOPK_LOOP(kd_key_of_double(*(const float *)p)); break;
    case KD_DTYPE_F64: KD_HEAP_TOPK_LOOP(kd_key_of_double(*(const double *)p)); break;
    default: KD_HEAP_TOPK_LOOP(kd_key_of(p, dt)); break;
  }
  kd_sk_heap_sort(a, k); /* sorted either way (unsorted order is unspecified) */
}

typedef struct kd_sort_job {
  const kd_tensor *self;
  kd_tensor *values, *indices; /* values may be NULL (argsort) */
  int dim;
  int64_t n, k;                /* row length, elements kept (k < n: topk) */
  bool desc, topk, sorted;
  int nouter;
  int64_t outer_sizes[KD_MAX_DIMS], s_st[KD_MAX_DIMS], v_st[KD_MAX_DIMS], i_st[KD_MAX_DIMS];
  int fail;
} kd_sort_job;

static void kd_sort_rows(void *p, int64_t begin, int64_t end) {
  kd_sort_job *j = (kd_sort_job *)p;
  int64_t n = j->n;
  kd_sk *buf = malloc(sizeof(kd_sk) * (size_t)(2 * n + 1));
  if (!buf) { __atomic_store_n(&j->fail, 1, __ATOMIC_RELAXED); return; }
  kd_dtype dt = j->self->dtype;
  size_t es = kd_dtype_size(dt);
  int d = j->dim;
  int64_t sdim = j->self->ndim ? j->self->strides[d] : 0;
  int64_t vdim = j->values && j->values->ndim ? j->values->strides[d] : 0;
  int64_t idim = j->indices->ndim ? j->indices->strides[d] : 0;
  char *s0 = kd_tensor_data(j->self), *v0 = j->values ? kd_tensor_data(j->values) : NULL;
  int64_t *i0 = (int64_t *)kd_tensor_data(j->indices);
  for (int64_t r = begin; r < end; r++) {
    int64_t so = 0, vo = 0, io = 0, rem = r;
    for (int q = j->nouter - 1; q >= 0; q--) {
      int64_t c = rem % j->outer_sizes[q];
      rem /= j->outer_sizes[q];
      so += c * j->s_st[q];
      vo += c * j->v_st[q];
      io += c * j->i_st[q];
    }
    const char *row = s0 + so * (int64_t)es;
    int64_t k = j->k;
    if (j->topk && k < n && n > 64 && k * 4 <= n) {
      kd_sk_heap_topk(buf, row, n, sdim * (int64_t)es, dt, j->desc, k);
    } else {
      kd_sk_fill(buf, row, n, sdim * (int64_t)es, dt, j->desc);
      if (j->topk && k < n && n > 64) {
        kd_sk_select(buf, n, k);
        if (j->sorted) { /* by (key, index): the selection scrambled the index order of ties */
          for (int64_t i = k / 2 - 1; i >= 0; i--) kd_sk_sift(buf, k, i);
          kd_sk_heap_sort(buf, k);
        }
      } else {
        kd_sk_sort(buf, buf + n, n);
      }
    }
    for (int64_t e = 0; e < k; e++) {
      i0[io + e * idim] = buf[e].idx;
      if (v0) memcpy(v0 + (vo + e * vdim) * (int64_t)es, row + buf[e].idx * sdim * (int64_t)es, es);
    }
  }
  free(buf);
}

/* ---- device tensors ---- */

/* t's view with dim moved last. */
static kd_status kd_sort_dim_last(kd_tensor *t, int dim, kd_tensor **out) {
  int64_t sz[KD_MAX_DIMS], stv[KD_MAX_DIMS];
  int q = 0;
  for (int d = 0; d < t->ndim; d++)
    if (d != dim) sz[q] = t->sizes[d], stv[q++] = t->strides[d];
  if (t->ndim) sz[q] = t->sizes[dim], stv[q++] = t->strides[dim];
  return kd_tensor_new_view(t, sz, stv, t->ndim, t->offset, out);
}

/* A contiguous buffer for the view v: v itself when contiguous, else a new tensor of its shape. */
static kd_status kd_sort_buffer(kd_tensor *v, kd_tensor **out) {
  if (kd_tensor_is_contiguous(v)) {
    kd_tensor_retain(v);
    *out = v;
    return KD_OK;
  }
  return kd_tensor_empty(v->sizes, v->ndim, v->dtype, kd_tensor_device(v), out);
}

/* sort/argsort/topk of a device tensor: rows of n along dim, the k first kept. */
static kd_status kd_sort_device(kd_tensor *self, int dim, int64_t n, int64_t k, bool desc, kd_tensor *values,
                                kd_tensor *indices) {
  kd_tensor *sv = NULL, *x = NULL, *vv = NULL, *iv = NULL, *vb = NULL, *ib = NULL;
  kd_status st = kd_sort_dim_last(self, dim, &sv);
  if (st == KD_OK) st = kd_cpu_cast(sv, self->dtype, true, &x);
  if (st == KD_OK && values) st = kd_sort_dim_last(values, dim, &vv);
  if (st == KD_OK && values) st = kd_sort_buffer(vv, &vb);
  if (st == KD_OK) st = kd_sort_dim_last(indices, dim, &iv);
  if (st == KD_OK) st = kd_sort_buffer(iv, &ib);
  if (st == KD_OK) {
    kd_dev_op op;
    memset(&op, 0, sizeof op);
    op.kind = KD_DEV_OP_SORT;
    op.dtype = self->dtype;
    op.i[0] = kd_tensor_numel(x) / n;
    op.i[1] = n;
    op.i[2] = k;
    op.i[3] = desc;
    void *p[3] = {kd_dev_ptr(x), kd_dev_ptr(vb), kd_dev_ptr(ib)};
    kd_dtype dts[3] = {self->dtype, self->dtype, KD_DTYPE_I64};
    st = kd_dev_op_run_ptrs(kd_tensor_device(self), &op, 3, p, dts);
  }
  if (st == KD_OK && vb && vb != vv) st = kd_cpu_copy_into(vv, vb);
  if (st == KD_OK && ib != iv) st = kd_cpu_copy_into(iv, ib);
  kd_tensor *all[6] = {sv, x, vv, iv, vb, ib};
  for (int q = 0; q < 6; q++)
    if (all[q]) kd_tensor_release(all[q]);
  return st;
}

KD_KERNEL(kd_cpu_sort) {
  (void)ks;
  kd_tensor *self = args[0].v.t;
  bool topk = op->code == KD_SORT_TOPK, argsort = op->code == KD_SORT_ARGSORT;
  int64_t dimv = topk ? args[2].v.i : args[1].v.i;
  int dim;
  KD_TRY(kd_shape_wrap_dim(dimv, self->ndim, &dim));
  int64_t n = self->ndim ? self->sizes[dim] : 1, k = n;
  bool desc = topk ? args[3].v.b : args[2].v.b;
  bool sorted = topk ? args[4].v.b : true;
  if (topk) {
    k = args[1].v.i;
    if (k < 0 || k > n) return kd_error(KD_ERR_INDEX, "selected index k out of range");
  }
  int64_t osizes[KD_MAX_DIMS];
  memcpy(osizes, self->sizes, sizeof(int64_t) * self->ndim);
  if (self->ndim) osizes[dim] = k;
  kd_tensor *values = NULL, *indices = NULL;
  kd_status st = KD_OK;
  if (!argsort) st = kd_tensor_empty(osizes, self->ndim, self->dtype, kd_tensor_device(self), &values);
  if (st == KD_OK) st = kd_tensor_empty(osizes, self->ndim, KD_DTYPE_I64, kd_tensor_device(self), &indices);
  if (st == KD_OK && kd_tensor_numel(self) > 0 && k > 0 && kd_tensor_device(self).type != KD_DEVICE_CPU) {
    st = kd_sort_device(self, dim, n, k, desc, values, indices);
  } else if (st == KD_OK && kd_tensor_numel(self) > 0 && k > 0) {
    kd_sort_job j;
    memset(&j, 0, sizeof j);
    j.self = self, j.values = values, j.indices = indices, j.dim = dim, j.n = n, j.k = k;
    j.desc = desc, j.topk = topk, j.sorted = sorted;
    int64_t rows = 1;
    for (int d = 0; d < self->ndim; d++) {
      if (d == dim) continue;
      j.outer_sizes[j.nouter] = self->sizes[d];
      j.s_st[j.nouter] = self->strides[d];
      j.v_st[j.nouter] = values ? values->strides[d] : 0;
      j.i_st[j.nouter] = indices->strides[d];
      j.nouter++;
      rows *= self->sizes[d];
    }
    int64_t grain = n >= KD_PARALLEL_GRAIN ? 1 : (KD_PARALLEL_GRAIN + n - 1) / n;
    kd_parallel_for(0, rows, grain, kd_sort_rows, &j);
    if (j.fail) st = kd_error(KD_ERR_OOM, "out of host memory in sort");
  }
  if (st != KD_OK) {
    if (values) kd_tensor_release(values);
    if (indices) kd_tensor_release(indices);
    return st;
  }
  if (argsort) {
    kd_out_take(outs, 0, indices);
  } else {
    kd_out_take(outs, 0, values);
    kd_out_take(outs, 1, indices);
  }
  return KD_OK;
}

/* ---- unique ---- */

/* Context of the row comparison of unique(dim): rows of m keys. */
static _Thread_local const uint64_t *kd_uq_tkeys;
static _Thread_local int64_t kd_uq_tm;
static int kd_uq_cmp_rows(int64_t a, int64_t b) {
  const uint64_t *x = kd_uq_tkeys + a * kd_uq_tm, *y = kd_uq_tkeys + b * kd_uq_tm;
  for (int64_t i = 0; i < kd_uq_tm; i++)
    if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
  return 0;
}
/* Stable merge sort of row ids by their keys. */
static void kd_uq_msort(int64_t *a, int64_t *tmp, int64_t n) {
  if (n < 2) return;
  int64_t h = n / 2;
  kd_uq_msort(a, tmp, h);
  kd_uq_msort(a + h, tmp, n - h);
  int64_t i = 0, j = h, o = 0;
  while (i < h && j < n) tmp[o++] = kd_uq_cmp_rows(a[j], a[i]) < 0 ? a[j++] : a[i++];
  while (i < h) tmp[o++] = a[i++];
  while (j < n) tmp[o++] = a[j++];
  memcpy(a, tmp, sizeof(int64_t) * (size_t)n);
}

/* unique of a device tensor: x holds n contiguous rows of m elements (self with dim first). */
static kd_status kd_unique_device(kd_tensor *self, kd_tensor *x, bool has_dim, int dim, int64_t n, int64_t m, bool want_inv,
                                  bool want_cnt, kd_value *outs) {
  kd_device dev = kd_tensor_device(self);
  kd_dtype dt = self->dtype;
  int nd = has_dim ? self->ndim : 1;
  int64_t usz[KD_MAX_DIMS], one = 1, groups = 0;
  if (has_dim) memcpy(usz, x->sizes, sizeof(int64_t) * (size_t)x->ndim);
  else usz[0] = n;
  kd_tensor *u = NULL, *inv = NULL, *cnt = NULL, *un = NULL, *out = NULL, *cv = NULL;
  kd_status st = kd_tensor_empty(usz, nd, dt, dev, &u);
  if (st == KD_OK)
    st = has_dim ? kd_tensor_empty(&n, 1, KD_DTYPE_I64, dev, &inv) : kd_tensor_empty(self->sizes, self->ndim, KD_DTYPE_I64, dev, &inv);
  if (st == KD_OK) st = kd_tensor_empty(&n, 1, KD_DTYPE_I64, dev, &cnt);
  if (st == KD_OK && n > 0) {
    if (m < 1) {
      st = kd_error(KD_ERR_NOT_SUPPORTED, "unique: slices with no elements are not supported on this device");
    } else {
      st = kd_dev_unique_rows(dev, KD_DEV_OP_UNIQUE, dt, n, m, x, u, inv, cnt, &groups);
    }
  }
  if (st == KD_OK) { /* the first `groups` rows, then dim moved back */
    if (nd == 0) {
      un = u;
      kd_tensor_retain(un);
    } else {
      usz[0] = groups;
      st = kd_tensor_new_view(u, usz, u->strides, nd, u->offset, &un);
    }
  }
  if (st == KD_OK && has_dim && nd > 1 && dim != 0) {
    int64_t vs[KD_MAX_DIMS], vst[KD_MAX_DIMS];
    int q = 1;
    for (int d = 0; d < nd; d++) {
      if (d == dim) vs[d] = un->sizes[0], vst[d] = un->strides[0];
      else vs[d] = un->sizes[q], vst[d] = un->strides[q], q++;
    }
    kd_tensor *v;
    st = kd_tensor_new_view(un, vs, vst, nd, un->offset, &v);
    if (st == KD_OK) {
      st = kd_cpu_cast(v, dt, true, &out);
      kd_tensor_release(v);
    }
  } else if (st == KD_OK) {
    out = un;
    kd_tensor_retain(out);
  }
  if (st == KD_OK) st = kd_tensor_new_view(cnt, &groups, &one, 1, cnt->offset, &cv);
  kd_tensor *tmp[3] = {u, un, cnt};
  for (int q = 0; q < 3; q++)
    if (tmp[q]) kd_tensor_release(tmp[q]);
  return kd_cpu_unique_result(st, out, inv, cv, want_inv, want_cnt, outs);
}

KD_KERNEL(kd_cpu_unique) {
  (void)op, (void)ks;
  kd_tensor *self = args[0].v.t;
  bool want_inv = args[2].v.b, want_cnt = args[3].v.b;
  bool has_dim = args[4].kind == KD_VALUE_INT;
  int dim = 0;
  if (has_dim) KD_TRY(kd_shape_wrap_dim(args[4].v.i, self->ndim, &dim));
  /* x: self with dim moved first, contiguous: n rows of m elements (m = 1 without dim) */
  kd_tensor *x = NULL;
  if (has_dim && self->ndim > 0) {
    int64_t sz[KD_MAX_DIMS], stv[KD_MAX_DIMS];
    int q = 0;
    sz[q] = self->sizes[dim], stv[q++] = self->strides[dim];
    for (int d = 0; d < self->ndim; d++)
      if (d != dim) sz[q] = self->sizes[d], stv[q++] = self->strides[d];
    kd_tensor *v;
    KD_TRY(kd_tensor_new_view(self, sz, stv, self->ndim, self->offset, &v));
    kd_status st = kd_cpu_cast(v, v->dtype, true, &x);
    kd_tensor_release(v);
    KD_TRY(st);
  } else {
    KD_TRY(kd_cpu_cast(self, self->dtype, true, &x));
  }
  int64_t total = kd_tensor_numel(x);
  int64_t n = has_dim ? (self->ndim ? self->sizes[dim] : 1) : total;
  int64_t m = n ? total / n : 0;
  if (has_dim && n == 0) m = 1;
  if (!has_dim) m = 1;
  if (has_dim && self->ndim > 0) {
    m = 1;
    for (int d = 0; d < self->ndim; d++) if (d != dim) m *= self->sizes[d];
  }
  if (kd_tensor_device(self).type != KD_DEVICE_CPU) {
    kd_status st = kd_unique_device(self, x, has_dim, dim, n, m, want_inv, want_cnt, outs);
    kd_tensor_release(x);
    return st;
  }
  kd_dtype dt = self->dtype;
  size_t es = kd_dtype_size(dt);
  const char *xd = kd_tensor_data(x);
  kd_status st = KD_OK;
  int64_t *order = malloc(sizeof(int64_t) * (size_t)(n + 1));
  int64_t *group = malloc(sizeof(int64_t) * (size_t)(n + 1)); /* group id of each sorted position */
  int64_t ngroups = 0;
  if (!order || !group) st = kd_error(KD_ERR_OOM, "out of host memory in unique");
  if (st == KD_OK && !has_dim) {
    kd_sk *buf = malloc(sizeof(kd_sk) * (size_t)(2 * n + 1));
    if (!buf) st = kd_error(KD_ERR_OOM, "out of host memory in unique");
    else {
      for (int64_t i = 0; i < n; i++) buf[i].key = kd_key_of(xd + i * (int64_t)es, dt), buf[i].idx = i;
      kd_sk_sort(buf, buf + n, n);
      for (int64_t i = 0; i < n; i++) {
        order[i] = buf[i].idx;
        if (i == 0 || buf[i].key != buf[i - 1].key) ngroups++;
        group[i] = ngroups - 1;
      }
      free(buf);
    }
  } else if (st == KD_OK) {
    uint64_t *keys = malloc(sizeof(uint64_t) * (size_t)(total + 1));
    int64_t *tmp = malloc(sizeof(int64_t) * (size_t)(n + 1));
    if (!keys || !tmp) st = kd_error(KD_ERR_OOM, "out of host memory in unique");
    else {
      for (int64_t i = 0; i < total; i++) keys[i] = kd_key_of(xd + i * (int64_t)es, dt);
      kd_uq_tkeys = keys, kd_uq_tm = m;
      for (int64_t i = 0; i < n; i++) order[i] = i;
      kd_uq_msort(order, tmp, n);
      for (int64_t i = 0; i < n; i++) {
        if (i == 0 || kd_uq_cmp_rows(order[i], order[i - 1]) != 0) ngroups++;
        group[i] = ngroups - 1;
      }
    }
    free(keys);
    free(tmp);
  }
  kd_tensor *out = NULL, *inv = NULL, *cnt = NULL;
  if (st == KD_OK) { /* unique values / slices, in the moved layout, then moved back */
    int64_t sz[KD_MAX_DIMS];
    int nd = has_dim ? (self->ndim ? self->ndim : 0) : 1;
    if (has_dim) { memcpy(sz, x->sizes, sizeof(int64_t) * x->ndim); if (nd) sz[0] = ngroups; }
    else sz[0] = ngroups;
    kd_tensor *u;
    st = kd_tensor_empty(sz, nd, dt, kd_tensor_device(self), &u);
    if (st == KD_OK) {
      char *ud = kd_tensor_data(u);
      for (int64_t i = 0; i < n; i++)
        if (i == 0 || group[i] != group[i - 1])
          memcpy(ud + group[i] * m * (int64_t)es, xd + order[i] * m * (int64_t)es, (size_t)m * es);
      if (has_dim && nd > 1 && dim != 0) {
        int64_t vs[KD_MAX_DIMS], vst[KD_MAX_DIMS], cs[KD_MAX_DIMS];
        kd_shape_contiguous_strides(u->sizes, nd, cs);
        int q = 1;
        for (int d = 0; d < nd; d++) {
          if (d == dim) vs[d] = u->sizes[0], vst[d] = cs[0];
          else vs[d] = u->sizes[q], vst[d] = cs[q], q++;
        }
        kd_tensor *v;
        st = kd_tensor_new_view(u, vs, vst, nd, u->offset, &v);
        if (st == KD_OK) { st = kd_cpu_cast(v, dt, true, &out); kd_tensor_release(v); }
        kd_tensor_release(u);
      } else {
        out = u;
      }
    }
  }
  if (st == KD_OK) {
    int64_t isz = has_dim ? n : 0;
    if (has_dim) st = kd_tensor_empty(&isz, 1, KD_DTYPE_I64, kd_tensor_device(self), &inv);
    else st = kd_tensor_empty(self->sizes, self->ndim, KD_DTYPE_I64, kd_tensor_device(self), &inv);
    if (st == KD_OK) {
      int64_t *iv = (int64_t *)kd_tensor_data(inv);
      for (int64_t i = 0; i < n; i++) iv[order[i]] = group[i];
    }
  }
  if (st == KD_OK) {
    st = kd_tensor_empty(&ngroups, 1, KD_DTYPE_I64, kd_tensor_device(self), &cnt);
    if (st == KD_OK) {
      int64_t *cv = (int64_t *)kd_tensor_data(cnt);
      memset(cv, 0, sizeof(int64_t) * (size_t)ngroups);
      for (int64_t i = 0; i < n; i++) cv[group[i]]++;
    }
  }
  free(order);
  free(group);
  kd_tensor_release(x);
  return kd_cpu_unique_result(st, out, inv, cnt, want_inv, want_cnt, outs);
}
