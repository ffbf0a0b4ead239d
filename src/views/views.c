/* views.c - the primitive view ops: each returns a tensor sharing self's storage with new
 * sizes/strides/offset, in O(1), on any device (registered as `generic` kernels). */
#include <string.h>

#include "ops/kernel.h"
#include "views/view_geometry.h"

/* outs[0] = a view of self with the given geometry. */
static kd_status kd_view_make(const kd_tensor *self, const int64_t *sizes, const int64_t *strides, int ndim,
                              int64_t offset, kd_value *outs) {
  kd_tensor *v = NULL;
  KD_TRY(kd_tensor_new_view(self, sizes, strides, ndim, offset, &v));
  kd_out_take(outs, 0, v);
  return KD_OK;
}

KD_KERNEL(kd_view_view) {
  const kd_tensor *self = args[0].v.t;
  int n = args[1].v.ilist.n;
  if (n > KD_MAX_DIMS) return kd_error(KD_ERR_INVALID_ARGUMENT, "view: at most %d dims are supported", KD_MAX_DIMS);
  int64_t sizes[KD_MAX_DIMS], strides[KD_MAX_DIMS];
  KD_TRY(kd_view_infer_size(args[1].v.ilist.data, n, kd_tensor_numel(self), sizes));
  if (!kd_view_compute_strides(self->sizes, self->strides, self->ndim, sizes, n, strides))
    return kd_error(KD_ERR_SHAPE, "view size is not compatible with input tensor's size and stride (at least one "
                    "dimension spans across two contiguous subspaces). Use .reshape(...) instead.");
  return kd_view_make(self, sizes, strides, n, self->offset, outs);
}

KD_KERNEL(kd_view_transpose) {
  const kd_tensor *self = args[0].v.t;
  int d0, d1;
  KD_TRY(kd_shape_wrap_dim(args[1].v.i, self->ndim, &d0));
  KD_TRY(kd_shape_wrap_dim(args[2].v.i, self->ndim, &d1));
  int64_t sizes[KD_MAX_DIMS], strides[KD_MAX_DIMS];
  memcpy(sizes, self->sizes, sizeof sizes);
  memcpy(strides, self->strides, sizeof strides);
  if (self->ndim > 0) {
    sizes[d0] = self->sizes[d1]; sizes[d1] = self->sizes[d0];
    strides[d0] = self->strides[d1]; strides[d1] = self->strides[d0];
  }
  return kd_view_make(self, sizes, strides, self->ndim, self->offset, outs);
}

KD_KERNEL(kd_view_permute) {
  const kd_tensor *self = args[0].v.t;
  int n = args[1].v.ilist.n;
  if (n != self->ndim)
    return kd_error(KD_ERR_SHAPE, "permute(sparse_coo): number of dimensions in the tensor input does not match the "
                    "length of the desired ordering of dimensions i.e. input.dim() = %d is not equal to len(dims) = %d",
                    self->ndim, n);
  int64_t sizes[KD_MAX_DIMS], strides[KD_MAX_DIMS];
  bool seen[KD_MAX_DIMS] = {false};
  for (int i = 0; i < n; i++) {
    int d;
    KD_TRY(kd_shape_wrap_dim(args[1].v.ilist.data[i], self->ndim, &d));
    if (seen[d]) return kd_error(KD_ERR_INVALID_ARGUMENT, "permute(): duplicate dims are not allowed.");
    seen[d] = true;
    sizes[i] = self->sizes[d];
    strides[i] = self->strides[d];
  }
  return kd_view_make(self, sizes, strides, n, self->offset, outs);
}

KD_KERNEL(kd_view_narrow) {
  const kd_tensor *self = args[0].v.t;
  if (self->ndim == 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "narrow() cannot be applied to a 0-dim tensor.");
  int d;
  KD_TRY(kd_shape_wrap_dim(args[1].v.i, self->ndim, &d));
  int64_t size = self->sizes[d], start = args[2].v.i, length = args[3].v.i;
  if (start < -size || start > size)
    return kd_error(KD_ERR_INDEX, "start out of range (expected to be in range of [%lld, %lld], but got %lld)",
                    (long long)-size, (long long)size, (long long)start);
  if (start < 0) start += size;
  if (length < 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "narrow(): length must be non-negative.");
  if (length > size - start) /* start + length may not fit in int64 */
    return kd_error(KD_ERR_INDEX, "start (%lld) + length (%lld) exceeds dimension size (%lld).", (long long)start,
                    (long long)length, (long long)size);
  int64_t sizes[KD_MAX_DIMS];
  memcpy(sizes, self->sizes, sizeof sizes);
  sizes[d] = length;
  return kd_view_make(self, sizes, self->strides, self->ndim, self->offset + start * self->strides[d], outs);
}

KD_KERNEL(kd_view_select) {
  const kd_tensor *self = args[0].v.t;
  if (self->ndim == 0) return kd_error(KD_ERR_INDEX, "select() cannot be applied to a 0-dim tensor.");
  int d;
  KD_TRY(kd_shape_wrap_dim(args[1].v.i, self->ndim, &d));
  int64_t size = self->sizes[d], index = args[2].v.i;
  if (index < -size || index >= size) {
    char buf[256];
    return kd_error(KD_ERR_INDEX, "select(): index %lld out of range for tensor of size %s at dimension %d",
                    (long long)index, kd_shape_format(self->sizes, self->ndim, buf, sizeof buf), d);
  }
  if (index < 0) index += size;
  int64_t sizes[KD_MAX_DIMS], strides[KD_MAX_DIMS];
  int n = 0;
  for (int i = 0; i < self->ndim; i++) {
    if (i == d) continue;
    sizes[n] = self->sizes[i];
    strides[n++] = self->strides[i];
  }
  return kd_view_make(self, sizes, strides, n, self->offset + index * self->strides[d], outs);
}

KD_KERNEL(kd_view_slice) {
  const kd_tensor *self = args[0].v.t;
  if (self->ndim == 0) return kd_error(KD_ERR_INDEX, "slice() cannot be applied to a 0-dim tensor.");
  int d;
  KD_TRY(kd_shape_wrap_dim(args[1].v.i, self->ndim, &d));
  int64_t size = self->sizes[d], step = args[4].v.i;
  if (step <= 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "slice step must be positive");
  int64_t start = args[2].kind == KD_VALUE_INT ? args[2].v.i : 0;
  int64_t end = args[3].kind == KD_VALUE_INT ? args[3].v.i : size;
  if (start < 0) start += size;
  if (end < 0) end += size;
  if (start < 0) start = 0;
  if (start > size) start = size;
  if (end < start) end = start;
  if (end > size) end = size;
  int64_t sizes[KD_MAX_DIMS], strides[KD_MAX_DIMS];
  memcpy(sizes, self->sizes, sizeof sizes);
  memcpy(strides, self->strides, sizeof strides);
  sizes[d] = kd_ceil_div(end - start, step);
  /* the stride of a dim of size 1 is never used (and self->strides[d] * step may not fit): keep
   * it; otherwise (sizes[d] - 1) * step < size, so it fits within self's own extent */
  if (sizes[d] > 1) strides[d] = self->strides[d] * step;
  return kd_view_make(self, sizes, strides, self->ndim, self->offset + start * self->strides[d], outs);
}

KD_KERNEL(kd_view_unsqueeze) {
  const kd_tensor *self = args[0].v.t;
  if (self->ndim >= KD_MAX_DIMS) return kd_error(KD_ERR_INVALID_ARGUMENT, "unsqueeze: at most %d dims", KD_MAX_DIMS);
  int d;
  KD_TRY(kd_shape_wrap_dim(args[1].v.i, self->ndim + 1, &d));
  int64_t sizes[KD_MAX_DIMS], strides[KD_MAX_DIMS];
  for (int i = 0, j = 0; i <= self->ndim; i++) {
    if (i == d) {
      sizes[i] = 1;
      strides[i] = 1;
      if (d < self->ndim && kd_mul_overflows(self->sizes[d], self->strides[d], &strides[i])) strides[i] = 1;
    } else {
      sizes[i] = self->sizes[j];
      strides[i] = self->strides[j++];
    }
  }
  return kd_view_make(self, sizes, strides, self->ndim + 1, self->offset, outs);
}

KD_KERNEL(kd_view_squeeze) {
  const kd_tensor *self = args[0].v.t;
  bool drop[KD_MAX_DIMS] = {false};
  if (args[1].kind == KD_VALUE_INTLIST) {
    for (int i = 0; i < args[1].v.ilist.n; i++) {
      int d;
      KD_TRY(kd_shape_wrap_dim(args[1].v.ilist.data[i], self->ndim, &d));
      if (self->ndim > 0 && self->sizes[d] == 1) drop[d] = true;
    }
  } else {
    for (int i = 0; i < self->ndim; i++) drop[i] = self->sizes[i] == 1;
  }
  int64_t sizes[KD_MAX_DIMS], strides[KD_MAX_DIMS];
  int n = 0;
  for (int i = 0; i < self->ndim; i++) {
    if (drop[i]) continue;
    sizes[n] = self->sizes[i];
    strides[n++] = self->strides[i];
  }
  return kd_view_make(self, sizes, strides, n, self->offset, outs);
}

KD_KERNEL(kd_view_expand) {
  const kd_tensor *self = args[0].v.t;
  const int64_t *target = args[1].v.ilist.data;
  int n = args[1].v.ilist.n;
  char a[256], b[256];
  if (n < self->ndim)
    return kd_error(KD_ERR_SHAPE, "expand(torch.FloatTensor{%s}, size=%s): the number of sizes provided (%d) must be "
                    "greater or equal to the number of dimensions in the tensor (%d)",
                    kd_shape_format(self->sizes, self->ndim, a, sizeof a), kd_shape_format(target, n, b, sizeof b), n,
                    self->ndim);
  if (n > KD_MAX_DIMS) return kd_error(KD_ERR_INVALID_ARGUMENT, "expand: at most %d dims", KD_MAX_DIMS);
  int64_t sizes[KD_MAX_DIMS], strides[KD_MAX_DIMS];
  for (int i = n - 1; i >= 0; i--) {
    int j = i - (n - self->ndim);
    int64_t want = target[i];
    if (j < 0) {
      if (want < 0)
        return kd_error(KD_ERR_INVALID_ARGUMENT, "The expanded size of the tensor (%lld) isn't allowed in a leading, "
                        "non-existing dimension %d", (long long)want, i);
      sizes[i] = want;
      strides[i] = 0;
      continue;
    }
    int64_t have = self->sizes[j];
    if (want == -1) want = have;
    if (have == want) {
      sizes[i] = have;
      strides[i] = self->strides[j];
    } else if (have == 1 && want >= 0) {
      sizes[i] = want;
      strides[i] = 0;
    } else {
      return kd_error(KD_ERR_SHAPE, "The expanded size of the tensor (%lld) must match the existing size (%lld) at "
                      "non-singleton dimension %d.  Target sizes: %s.  Tensor sizes: %s", (long long)want,
                      (long long)have, i, kd_shape_format(target, n, a, sizeof a),
                      kd_shape_format(self->sizes, self->ndim, b, sizeof b));
    }
  }
  return kd_view_make(self, sizes, strides, n, self->offset, outs);
}

KD_KERNEL(kd_view_as_strided) {
  const kd_tensor *self = args[0].v.t;
  int n = args[1].v.ilist.n;
  if (args[2].v.ilist.n != n)
    return kd_error(KD_ERR_SHAPE, "mismatch in length of strides and shape");
  if (n > KD_MAX_DIMS) return kd_error(KD_ERR_INVALID_ARGUMENT, "as_strided: at most %d dims", KD_MAX_DIMS);
  int64_t offset = args[3].kind == KD_VALUE_INT ? args[3].v.i : self->offset;
  if (offset < 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "Tensor: invalid storage offset %lld", (long long)offset);
  for (int i = 0; i < n; i++) {
    int64_t s = args[1].v.ilist.data[i], st = args[2].v.ilist.data[i];
    if (s < 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "as_strided: negative size %lld", (long long)s);
    if (st < 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "as_strided: Negative strides are not supported at the moment, got strides: %lld", (long long)st);
  }
  int64_t first, last; /* the lowest and highest element index touched */
  KD_TRY(kd_shape_extent(args[1].v.ilist.data, args[2].v.ilist.data, n, offset, &first, &last));
  bool empty = last < first;
  int64_t item = (int64_t)kd_dtype_size(self->dtype);
  int64_t capacity = (int64_t)self->storage->nbytes / item;
  int64_t needed; /* bytes */
  if (!empty && (kd_add_overflows(last, 1, &needed) || kd_mul_overflows(needed, item, &needed))) {
    char a[256], b[256];
    return kd_error(KD_ERR_INVALID_ARGUMENT, "Storage size calculation overflowed with sizes=%s and strides=%s",
                    kd_shape_format(args[1].v.ilist.data, n, a, sizeof a), kd_shape_format(args[2].v.ilist.data, n, b, sizeof b));
  }
  if (!empty && last >= capacity) {
    char a[256], b[256];
    return kd_error(KD_ERR_INDEX, "setStorage: sizes %s, strides %s, storage offset %lld, and itemsize %lld requiring a "
                    "storage size of %lld are out of bounds for storage of size %lld",
                    kd_shape_format(args[1].v.ilist.data, n, a, sizeof a), kd_shape_format(args[2].v.ilist.data, n, b, sizeof b),
                    (long long)offset, (long long)item, (long long)needed, (long long)self->storage->nbytes);
  }
  return kd_view_make(self, args[1].v.ilist.data, args[2].v.ilist.data, n, offset, outs);
}
