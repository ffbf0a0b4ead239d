/* search.c - searchsorted and bucketize (kd_cpu_searchsorted): for each value, a binary search
 * of the innermost dim of the sorted sequence (one row for a 1-D sequence, else the row of the
 * same leading indices), PyTorch's lower bound (first element >= value; NaN values go last) or,
 * with right / side='right', upper bound (first element > value), optionally through a sorter
 * (the indices that sort each row). Sequence and values are compared in their promoted dtype
 * (PyTorch's promote_types: a JS number counts as a float64/int64 tensor, not a wrapped
 * number), both made contiguous; float16/bfloat16 compare in float32 (exact). Values are split
 * over the thread pool. Device tensors: the same contiguous buffers go to the device op
 * KD_DEV_OP_SEARCH (cuda/ops_search.cu: one thread per value); a sorter is range-checked first
 * with KD_DEV_OP_IX_CHECK (one sync, as the CPU's check). */
#include <stdio.h>
#include <stdlib.h>

#include "core/parallel.h"
#include "cpu/device_op_ptrs.h"

typedef struct kd_search_ctx {
  const char *seq, *val;
  const int64_t *sorter;
  void *out;
  int64_t n;        /* row length */
  int64_t per_row;  /* values per row (0: one row for all values) */
  bool right, int32;
  kd_dtype dt;
} kd_search_ctx;

/* PyTorch's cus_lower_bound / cus_upper_bound: !(mid >= v) resp. !(mid > v) moves right, so a
 * NaN value lands after every element. */
#define KD_SEARCH_LOOP(T, CT, LD)                                                               \
  for (int64_t i = begin; i < end; i++) {                                                       \
    const int64_t row = c->per_row ? i / c->per_row : 0;                                        \
    const T *bd = (const T *)c->seq + row * c->n;                                               \
    const int64_t *so = c->sorter ? c->sorter + row * c->n : NULL;                              \
    const CT v = LD(((const T *)c->val)[i]);                                                    \
    int64_t lo = 0, hi = c->n;                                                                  \
    while (lo < hi) {                                                                           \
      const int64_t mid = lo + ((hi - lo) >> 1);                                                \
      const CT m = LD(bd[so ? so[mid] : mid]);                                                  \
      if (c->right ? !(m > v) : !(m >= v)) lo = mid + 1;                                        \
      else hi = mid;                                                                            \
    }                                                                                           \
    if (c->int32) ((int32_t *)c->out)[i] = (int32_t)lo;                                         \
    else ((int64_t *)c->out)[i] = lo;                                                           \
  }

static void kd_search_run(void *p, int64_t begin, int64_t end) {
  const kd_search_ctx *c = (const kd_search_ctx *)p;
  switch (c->dt) {
    case KD_DTYPE_F32: KD_SEARCH_LOOP(float, float, KD_LD_ID) break;
    case KD_DTYPE_F64: KD_SEARCH_LOOP(double, double, KD_LD_ID) break;
    case KD_DTYPE_F16: KD_SEARCH_LOOP(uint16_t, float, kd_f16_to_f32) break;
    case KD_DTYPE_BF16: KD_SEARCH_LOOP(uint16_t, float, kd_bf16_to_f32) break;
    case KD_DTYPE_I8: KD_SEARCH_LOOP(int8_t, int8_t, KD_LD_ID) break;
    case KD_DTYPE_I16: KD_SEARCH_LOOP(int16_t, int16_t, KD_LD_ID) break;
    case KD_DTYPE_I32: KD_SEARCH_LOOP(int32_t, int32_t, KD_LD_ID) break;
    case KD_DTYPE_I64: KD_SEARCH_LOOP(int64_t, int64_t, KD_LD_ID) break;
    default: KD_SEARCH_LOOP(uint8_t, uint8_t, KD_LD_ID) break; /* uint8, bool */
  }
}

static void kd_search_sizes(char *buf, size_t n, const kd_tensor *t) {
  size_t o = (size_t)snprintf(buf, n, "[");
  for (int d = 0; d < t->ndim && o < n; d++) o += (size_t)snprintf(buf + o, n - o, d ? ", %lld" : "%lld", (long long)t->sizes[d]);
  if (o < n) snprintf(buf + o, n - o, "]");
}

/* PyTorch's searchsorted_pre_check (and bucketize's boundaries check). */
static kd_status kd_search_check(const kd_op_info *op, const kd_tensor *seq, const kd_tensor *val, bool right,
                                 const kd_value *side, const kd_tensor *sorter) {
  if (op->code == KD_SEARCH_BUCKETIZE) {
    if (seq->ndim != 1) return kd_error(KD_ERR_SHAPE, "boundaries tensor must be 1 dimension, but got dim(%d)", seq->ndim);
    return KD_OK;
  }
  if (side->kind == KD_VALUE_STRING) {
    const char *s = side->v.str;
    if (strcmp(s, "left") != 0 && strcmp(s, "right") != 0)
      return kd_error(KD_ERR_INVALID_ARGUMENT, "torch.searchsorted(): side can only be 'left' or 'right' but got %s", s);
    if (right && strcmp(s, "right") != 0)
      return kd_error(KD_ERR_INVALID_ARGUMENT,
                      "torch.searchsorted(): side and right can't be set to opposites, got side of %s while right was True", s);
  }
  char a[256], b[256];
  if (sorter) {
    if (sorter->ndim != seq->ndim || memcmp(sorter->sizes, seq->sizes, sizeof(int64_t) * (size_t)seq->ndim) != 0) {
      kd_search_sizes(a, sizeof a, seq);
      kd_search_sizes(b, sizeof b, sorter);
      return kd_error(KD_ERR_SHAPE,
                      "torch.searchsorted(): boundary and sorter must have the same size, but got boundary tensor %sand got "
                      "sorter tensor %s", a, b);
    }
    if (sorter->dtype != KD_DTYPE_I64)
      return kd_error(KD_ERR_DTYPE, "torch.searchsorted(): sorter must be a tensor of long dtype but got dtype %s",
                      kd_cpu_torch_name(sorter->dtype));
  }
  if (seq->ndim == 0)
    return kd_error(KD_ERR_SHAPE, "torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 dimension");
  bool matched = seq->ndim == val->ndim;
  for (int d = 0; matched && d < seq->ndim - 1; d++) matched = seq->sizes[d] == val->sizes[d];
  if (seq->ndim != 1 && !matched) {
    kd_search_sizes(a, sizeof a, seq);
    kd_search_sizes(b, sizeof b, val);
    return kd_error(KD_ERR_SHAPE,
                    "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries "
                    "tensor and input value tensor must match, but we got boundaries tensor %s and input value tensor %s", a, b);
  }
  return KD_OK;
}

/* A JS number as PyTorch's scalar_to_tensor: a 0-d float64, int64 or bool tensor on dev. */
static kd_status kd_search_scalar_tensor(kd_scalar s, kd_device dev, kd_tensor **out) {
  kd_dtype dt = s.kind == KD_KIND_FLOAT ? KD_DTYPE_F64 : s.kind == KD_KIND_INT ? KD_DTYPE_I64 : KD_DTYPE_BOOL;
  kd_tensor *h;
  KD_TRY(kd_tensor_empty(NULL, 0, dt, kd_device_cpu(), &h));
  kd_scalar_store(s, dt, kd_tensor_data(h));
  if (dev.type == KD_DEVICE_CPU) {
    *out = h;
    return KD_OK;
  }
  kd_status st = kd_tensor_empty(NULL, 0, dt, dev, out);
  if (st == KD_OK) {
    st = kd_cpu_copy_into(*out, h);
    if (st != KD_OK) kd_tensor_release(*out);
  }
  kd_tensor_release(h);
  return st;
}

/* Device tensors: the sorter's range check, then one thread per value. */
static kd_status kd_search_device(kd_search_ctx *c, kd_tensor *seq, kd_tensor *val, kd_tensor *sorter, kd_tensor *out,
                                  int64_t total) {
  kd_device dev = kd_tensor_device(seq);
  if (sorter) {
    kd_dev_op chk;
    memset(&chk, 0, sizeof chk);
    chk.kind = KD_DEV_OP_IX_CHECK;
    chk.data = kd_tensor_data(sorter);
    chk.numel = kd_tensor_numel(sorter);
    chk.i[0] = c->n;
    KD_TRY(kd_cpu_device_run(dev, &chk));
    if (chk.result[0])
      return kd_error(KD_ERR_INDEX, "torch.searchsorted(): sorter index %lld is out of range for a sequence of %lld elements",
                      (long long)chk.result[1], (long long)c->n);
  }
  kd_dev_op op;
  memset(&op, 0, sizeof op);
  op.kind = KD_DEV_OP_SEARCH;
  op.dtype = c->dt;
  op.i[0] = total;
  op.i[1] = c->n;
  op.i[2] = c->per_row;
  op.i[3] = c->right;
  op.i[4] = c->int32;
  void *p[4] = {kd_dev_ptr(seq), kd_dev_ptr(val), kd_dev_ptr(sorter), kd_dev_ptr(out)};
  kd_dtype dts[4] = {c->dt, c->dt, KD_DTYPE_I64, c->int32 ? KD_DTYPE_I32 : KD_DTYPE_I64};
  return kd_dev_op_run_ptrs(dev, &op, 4, p, dts);
}

KD_KERNEL(kd_cpu_searchsorted) {
  (void)ks;
  const bool bucketize = op->code == KD_SEARCH_BUCKETIZE;
  kd_value *seqv = &args[bucketize ? 1 : 0], *valv = &args[bucketize ? 0 : 1];
  kd_tensor *seq = seqv->v.t, *sorter = !bucketize && args[5].kind == KD_VALUE_TENSOR ? args[5].v.t : NULL;
  const bool int32 = args[2].v.b;
  bool right = args[3].v.b;
  kd_device dev = kd_tensor_device(seq);
  kd_tensor *val0 = NULL;
  if (valv->kind == KD_VALUE_TENSOR) {
    val0 = valv->v.t;
    kd_tensor_retain(val0);
  } else {
    KD_TRY(kd_search_scalar_tensor(valv->v.s, dev, &val0));
  }
  kd_status st = kd_search_check(op, seq, val0, right, bucketize ? NULL : &args[4], sorter);
  if (st == KD_OK && sorter && kd_tensor_device(sorter).type != dev.type)
    st = kd_error(KD_ERR_DEVICE, "torch.searchsorted(): sorter and boundary tensors should be on the same device");
  if (st == KD_OK && kd_tensor_device(val0).type != dev.type)
    st = kd_error(KD_ERR_DEVICE, "torch.searchsorted(): boundaries and input value tensors should be on the same device");
  if (!bucketize && args[4].kind == KD_VALUE_STRING) right = strcmp(args[4].v.str, "right") == 0;
  const int64_t n = seq->ndim ? seq->sizes[seq->ndim - 1] : 1;
  if (st == KD_OK && int32 && n >= INT32_MAX)
    st = kd_error(KD_ERR_INVALID_ARGUMENT,
                  "torch.searchsorted(): the size of boundaries' last dimension should be less than %d, but we got %lld",
                  INT32_MAX, (long long)n);
  if (st != KD_OK) {
    kd_tensor_release(val0);
    return st;
  }
  kd_dtype dt = kd_promote_types(seq->dtype, val0->dtype);
  kd_tensor *s = NULL, *v = NULL, *so = NULL, *out = NULL;
  st = kd_cpu_cast(seq, dt, true, &s);
  if (st == KD_OK) st = kd_cpu_cast(val0, dt, true, &v);
  if (st == KD_OK && sorter) st = kd_cpu_cast(sorter, KD_DTYPE_I64, true, &so);
  if (st == KD_OK) st = kd_tensor_empty(val0->sizes, val0->ndim, int32 ? KD_DTYPE_I32 : KD_DTYPE_I64, dev, &out);
  const int64_t total = kd_tensor_numel(val0);
  kd_search_ctx c = {NULL, NULL, NULL, NULL, n, 0, right, int32, dt};
  if (seq->ndim > 1) c.per_row = val0->sizes[val0->ndim - 1];
  if (st == KD_OK && total > 0 && dev.type != KD_DEVICE_CPU) {
    st = kd_search_device(&c, s, v, so, out, total);
  } else if (st == KD_OK && total > 0) {
    c.seq = kd_tensor_data(s);
    c.val = kd_tensor_data(v);
    c.sorter = so ? (const int64_t *)kd_tensor_data(so) : NULL;
    c.out = kd_tensor_data(out);
    for (int64_t i = 0; so && i < kd_tensor_numel(so); i++)
      if (c.sorter[i] < 0 || c.sorter[i] >= n) {
        st = kd_error(KD_ERR_INDEX, "torch.searchsorted(): sorter index %lld is out of range for a sequence of %lld elements",
                      (long long)c.sorter[i], (long long)n);
        break;
      }
    if (st == KD_OK) kd_parallel_for(0, total, KD_PARALLEL_GRAIN / 16, kd_search_run, &c);
  }
  kd_tensor *tmp[4] = {val0, s, v, so};
  for (int q = 0; q < 4; q++)
    if (tmp[q]) kd_tensor_release(tmp[q]);
  if (st != KD_OK) {
    if (out) kd_tensor_release(out);
    return st;
  }
  kd_out_take(outs, 0, out);
  return KD_OK;
}
