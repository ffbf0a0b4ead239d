/* as_strided_backward.c - the gradient of asStrided, PyTorch's as_strided_backward
 * (FunctionsManual.cpp) as a composite of kindling ops: so it runs on any device and autograd
 * sees the ops it calls (double backward). The picture: both geometries index one storage.
 *   1. squeeze size-1 and sum stride-0 dims of the output; an empty output or input: zeros;
 *   2. a zero buffer of the storage span both geometries touch (relative to the lower offset);
 *   3. the output geometry scatters grad into it: copy_ through an asStrided view, or indexAdd_
 *      of flat positions when the output geometry may overlap itself (summing);
 *   4. when the input geometry may overlap itself, each position is divided by how many input
 *      elements share it;
 *   5. the result is the buffer read through the input geometry. */
#include <stdlib.h>
#include <string.h>

#include "ops/kernel.h"
#include "ops/ops_gen.h"

/* NOTE [ Detecting Memory Overlap Within A Strided Tensor ] (PyTorch): sorted by stride, each
 * stride must exceed the furthest element of the dims below it. */
static bool kd_maybe_overlapping(const int64_t *sizes, const int64_t *strides, int n) {
  int idx[KD_MAX_DIMS];
  for (int i = 0; i < n; i++) idx[i] = i;
  for (int i = 1; i < n; i++) /* insertion sort by stride */
    for (int j = i; j > 0 && strides[idx[j - 1]] > strides[idx[j]]; j--) {
      int t = idx[j]; idx[j] = idx[j - 1]; idx[j - 1] = t;
    }
  int64_t max_index = 0;
  for (int k = 0; k < n; k++) {
    int i = idx[k];
    if (strides[i] <= max_index) return true;
    max_index += strides[i] * (sizes[i] - 1);
  }
  return false;
}

static int64_t kd_min_storage_size(const int64_t *sizes, const int64_t *strides, int n, int64_t offset) {
  int64_t s = offset + 1;
  for (int i = 0; i < n; i++) {
    if (sizes[i] == 0) return offset;
    s += (sizes[i] - 1) * strides[i];
  }
  return s;
}

#define KD_AS_TRY(expr)              \
  do {                               \
    if ((st = (expr)) != KD_OK) goto done; \
  } while (0)

static void kd_swap(kd_tensor **slot, kd_tensor *t) {
  if (*slot) kd_tensor_release(*slot);
  *slot = t;
}

static kd_status kd_call_inplace(kd_op_id op, kd_value *a) {
  kd_value o[KD_OP_MAX_OUTS];
  KD_TRY(kd_call(op, a, o));
  for (int i = 0; i < KD_OP_MAX_OUTS; i++) kd_value_release(&o[i]);
  return KD_OK;
}

KD_KERNEL(kd_composite_as_strided_backward) {
  (void)op;
  (void)ks;
  kd_tensor *grad = args[0].v.t;
  const int64_t *isz = args[1].v.ilist.data, *ist = args[2].v.ilist.data;
  int in_nd = args[1].v.ilist.n;
  int64_t in_off = args[3].v.i;
  const int64_t *osz = args[4].v.ilist.data, *ost = args[5].v.ilist.data;
  int out_nd = args[4].v.ilist.n;
  int64_t out_off = args[6].v.i;
  if (in_nd != args[2].v.ilist.n || out_nd != args[5].v.ilist.n || out_nd != grad->ndim || in_nd > KD_MAX_DIMS)
    return kd_error(KD_ERR_SHAPE, "asStridedBackward: sizes and strides do not match");
  /* both geometries as asStrided accepts them, with extents inside int64: the spans, overlap
   * tests and storage sizes below then cannot overflow */
  for (int which = 0; which < 2; which++) {
    const int64_t *sz = which ? osz : isz, *sd = which ? ost : ist;
    int nd = which ? out_nd : in_nd;
    int64_t off = which ? out_off : in_off, lo, hi;
    if (off < 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "asStridedBackward: invalid storage offset %lld", (long long)off);
    for (int i = 0; i < nd; i++)
      if (sz[i] < 0 || sd[i] < 0)
        return kd_error(KD_ERR_INVALID_ARGUMENT, "asStridedBackward: negative size or stride (%lld, %lld)", (long long)sz[i],
                        (long long)sd[i]);
    KD_TRY(kd_shape_extent(sz, sd, nd, off, &lo, &hi));
    if (hi == INT64_MAX) return kd_error(KD_ERR_INVALID_ARGUMENT, "asStridedBackward: the storage size overflows int64");
  }
  kd_status st = KD_OK;
  kd_tensor *g = grad, *storage = NULL, *idx = NULL, *tmp = NULL, *count = NULL, *res = NULL;
  kd_tensor_retain(g);
  kd_device dev = kd_tensor_device(grad);
  bool empty_out = false, empty_in = false;
  for (int i = 0; i < out_nd; i++) if (osz[i] == 0) empty_out = true;
  for (int i = 0; i < in_nd; i++) if (isz[i] == 0) empty_in = true;
  if (empty_out || empty_in) {
    kd_value a[3] = {kd_value_intlist(isz, in_nd), kd_value_dtype(grad->dtype), kd_value_device(dev)};
    KD_AS_TRY(kd_call1(KD_OP_zeros, a, &res));
    goto done;
  }
  /* 1. the output geometry without size-1 dims (squeezed) and stride-0 dims (summed) */
  int64_t os[KD_MAX_DIMS], ot[KD_MAX_DIMS];
  int on = 0;
  for (int i = out_nd - 1; i >= 0; i--) {
    if (osz[i] == 1) {
      int64_t d = i;
      kd_value a[2] = {kd_value_tensor(g), kd_value_intlist(&d, 1)};
      KD_AS_TRY(kd_call1(KD_OP_squeeze, a, &tmp));
      kd_swap(&g, tmp);
    } else if (ost[i] == 0) {
      int64_t d = i;
      kd_value a[4] = {kd_value_tensor(g), kd_value_intlist(&d, 1), kd_value_bool(false), kd_value_none()};
      KD_AS_TRY(kd_call1(KD_OP_sum, a, &tmp));
      kd_swap(&g, tmp);
    } else {
      memmove(os + 1, os, sizeof(int64_t) * on);
      memmove(ot + 1, ot, sizeof(int64_t) * on);
      os[0] = osz[i];
      ot[0] = ost[i];
      on++;
    }
  }
  tmp = NULL;
  bool out_overlap = kd_maybe_overlapping(os, ot, on);
  int64_t is[KD_MAX_DIMS], it[KD_MAX_DIMS];
  int inn = 0;
  for (int i = 0; i < in_nd; i++)
    if (isz[i] != 1) { is[inn] = isz[i]; it[inn] = ist[i]; inn++; }
  bool in_overlap = kd_maybe_overlapping(is, it, inn);
  /* 2. the storage both geometries see */
  int64_t shared = in_off < out_off ? in_off : out_off;
  int64_t in_eff = in_off - shared, out_eff = out_off - shared;
  int64_t a1 = kd_min_storage_size(is, it, inn, in_eff), a2 = kd_min_storage_size(os, ot, on, out_eff);
  int64_t base_size = a1 > a2 ? a1 : a2;
  {
    kd_value a[3] = {kd_value_intlist(&base_size, 1), kd_value_dtype(grad->dtype), kd_value_device(dev)};
    KD_AS_TRY(kd_call1(KD_OP_zeros, a, &storage));
  }
  if (in_overlap || out_overlap) {
    kd_value a[5] = {kd_value_scalar(kd_scalar_i(0)), kd_value_scalar(kd_scalar_i(base_size)),
                     kd_value_scalar(kd_scalar_i(1)), kd_value_dtype(KD_DTYPE_I64), kd_value_device(dev)};
    KD_AS_TRY(kd_call1(KD_OP_arange, a, &idx));
  }
  /* 3. scatter grad through the output geometry */
  if (out_overlap) {
    kd_tensor *oi = NULL, *flat_i = NULL, *flat_g = NULL;
    int64_t m1 = -1;
    kd_value a[4] = {kd_value_tensor(idx), kd_value_intlist(os, on), kd_value_intlist(ot, on), kd_value_int(out_eff)};
    st = kd_call1(KD_OP_asStrided, a, &oi);
    if (st == KD_OK) {
      kd_value b[2] = {kd_value_tensor(oi), kd_value_intlist(&m1, 1)};
      st = kd_call1(KD_OP_reshape, b, &flat_i);
    }
    if (st == KD_OK) {
      kd_value b[2] = {kd_value_tensor(g), kd_value_intlist(&m1, 1)};
      st = kd_call1(KD_OP_reshape, b, &flat_g);
    }
    if (st == KD_OK) {
      kd_value b[5] = {kd_value_tensor(storage), kd_value_int(0), kd_value_tensor(flat_i), kd_value_tensor(flat_g),
                       kd_value_scalar(kd_scalar_i(1))};
      st = kd_call_inplace(KD_OP_indexAdd_, b);
    }
    if (oi) kd_tensor_release(oi);
    if (flat_i) kd_tensor_release(flat_i);
    if (flat_g) kd_tensor_release(flat_g);
    if (st != KD_OK) goto done;
  } else {
    kd_value a[4] = {kd_value_tensor(storage), kd_value_intlist(os, on), kd_value_intlist(ot, on), kd_value_int(out_eff)};
    KD_AS_TRY(kd_call1(KD_OP_asStrided, a, &tmp));
    kd_value b[2] = {kd_value_tensor(tmp), kd_value_tensor(g)};
    st = kd_call_inplace(KD_OP_copy_, b);
    kd_tensor_release(tmp);
    tmp = NULL;
    if (st != KD_OK) goto done;
  }
  /* 4. positions the input geometry reads several times share their gradient */
  if (in_overlap) {
    kd_tensor *ii = NULL, *flat_i = NULL, *ones = NULL;
    int64_t m1 = -1;
    kd_value a[3] = {kd_value_intlist(&base_size, 1), kd_value_dtype(grad->dtype), kd_value_device(dev)};
    st = kd_call1(KD_OP_zeros, a, &count);
    if (st == KD_OK) {
      kd_value b[4] = {kd_value_tensor(idx), kd_value_intlist(is, inn), kd_value_intlist(it, inn), kd_value_int(in_eff)};
      st = kd_call1(KD_OP_asStrided, b, &ii);
    }
    if (st == KD_OK) {
      kd_value b[2] = {kd_value_tensor(ii), kd_value_intlist(&m1, 1)};
      st = kd_call1(KD_OP_reshape, b, &flat_i);
    }
    if (st == KD_OK) {
      kd_value b[3] = {kd_value_intlist(flat_i->sizes, 1), kd_value_dtype(grad->dtype), kd_value_device(dev)};
      st = kd_call1(KD_OP_ones, b, &ones);
    }
    if (st == KD_OK) {
      kd_value b[5] = {kd_value_tensor(count), kd_value_int(0), kd_value_tensor(flat_i), kd_value_tensor(ones),
                       kd_value_scalar(kd_scalar_i(1))};
      st = kd_call_inplace(KD_OP_indexAdd_, b);
    }
    if (st == KD_OK) {
      kd_value b[3] = {kd_value_tensor(storage), kd_value_tensor(count), kd_value_none()};
      st = kd_call_inplace(KD_OP_div_, b); /* NaN outside the visible range, as PyTorch */
    }
    if (ii) kd_tensor_release(ii);
    if (flat_i) kd_tensor_release(flat_i);
    if (ones) kd_tensor_release(ones);
    if (st != KD_OK) goto done;
  }
  /* 5. read back through the input geometry */
  {
    kd_value a[4] = {kd_value_tensor(storage), kd_value_intlist(isz, in_nd), kd_value_intlist(ist, in_nd),
                     kd_value_int(in_eff)};
    KD_AS_TRY(kd_call1(KD_OP_asStrided, a, &res));
  }
done:
  if (g) kd_tensor_release(g);
  if (storage) kd_tensor_release(storage);
  if (idx) kd_tensor_release(idx);
  if (count) kd_tensor_release(count);
  if (st != KD_OK) {
    if (res) kd_tensor_release(res);
    return st;
  }
  kd_out_take(outs, 0, res);
  return KD_OK;
}
