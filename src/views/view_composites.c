/* view_composites.c - view ops defined in terms of the primitive views (and a copy where
 * PyTorch copies): reshape, flatten, t, expand_as, chunk, split. They call other ops through
 * the dispatcher, so they work on every device and, later, under autograd. */
#include <stdlib.h>
#include <string.h>

#include "ops/kernel.h"
#include "views/view_geometry.h"

KD_KERNEL(kd_composite_reshape) {
  kd_tensor *self = args[0].v.t;
  int n = args[1].v.ilist.n;
  if (n > KD_MAX_DIMS) return kd_error(KD_ERR_INVALID_ARGUMENT, "reshape: at most %d dims are supported", KD_MAX_DIMS);
  int64_t sizes[KD_MAX_DIMS], strides[KD_MAX_DIMS];
  KD_TRY(kd_view_infer_size(args[1].v.ilist.data, n, kd_tensor_numel(self), sizes));
  kd_tensor *src = self, *copy = NULL;
  if (!kd_view_compute_strides(self->sizes, self->strides, self->ndim, sizes, n, strides)) {
    kd_value a[1] = {kd_value_tensor(self)};
    KD_TRY(kd_call1(KD_OP_clone, a, &copy));
    src = copy;
  }
  kd_value a[2] = {kd_value_tensor(src), kd_value_intlist(sizes, n)};
  kd_tensor *out = NULL;
  kd_status st = kd_call1(KD_OP_view, a, &out);
  kd_tensor_release(copy);
  if (st != KD_OK) return st;
  kd_out_take(outs, 0, out);
  return KD_OK;
}

KD_KERNEL(kd_composite_flatten) {
  kd_tensor *self = args[0].v.t;
  int s, e;
  KD_TRY(kd_shape_wrap_dim(args[1].v.i, self->ndim, &s));
  KD_TRY(kd_shape_wrap_dim(args[2].v.i, self->ndim, &e));
  if (s > e) return kd_error(KD_ERR_INVALID_ARGUMENT, "flatten() has invalid args: start_dim cannot come after end_dim");
  int64_t sizes[KD_MAX_DIMS];
  int n = 0;
  if (self->ndim == 0) {
    sizes[n++] = 1;
  } else {
    for (int i = 0; i < s; i++) sizes[n++] = self->sizes[i];
    int64_t m = 1;
    for (int i = s; i <= e; i++) m *= self->sizes[i];
    sizes[n++] = m;
    for (int i = e + 1; i < self->ndim; i++) sizes[n++] = self->sizes[i];
  }
  kd_value a[2] = {kd_value_tensor(self), kd_value_intlist(sizes, n)};
  kd_tensor *out = NULL;
  KD_TRY(kd_call1(KD_OP_reshape, a, &out));
  kd_out_take(outs, 0, out);
  return KD_OK;
}

KD_KERNEL(kd_composite_t) {
  kd_tensor *self = args[0].v.t;
  if (self->ndim > 2)
    return kd_error(KD_ERR_SHAPE, "t() expects a tensor with <= 2 dimensions, but self is %dD", self->ndim);
  kd_value a[3] = {kd_value_tensor(self), kd_value_int(0), kd_value_int(self->ndim == 2 ? 1 : 0)};
  kd_tensor *out = NULL;
  KD_TRY(kd_call1(KD_OP_transpose, a, &out));
  kd_out_take(outs, 0, out);
  return KD_OK;
}

KD_KERNEL(kd_composite_expand_as) {
  kd_tensor *other = args[1].v.t;
  kd_value a[2] = {args[0], kd_value_intlist(other->sizes, other->ndim)};
  kd_tensor *out = NULL;
  KD_TRY(kd_call1(KD_OP_expand, a, &out));
  kd_out_take(outs, 0, out);
  return KD_OK;
}

/* Splits self along dim into pieces of the given lengths (narrow views): a Tensor[] output. */
static kd_status kd_split_into(kd_tensor *self, int dim, const int64_t *lengths, int n, kd_value *outs) {
  kd_tensor **list = (kd_tensor **)calloc(n > 0 ? n : 1, sizeof(kd_tensor *));
  if (!list) return kd_error(KD_ERR_OOM, "out of memory");
  int64_t start = 0;
  for (int i = 0; i < n; i++) {
    kd_value a[4] = {kd_value_tensor(self), kd_value_int(dim), kd_value_int(start), kd_value_int(lengths[i])};
    kd_status st = kd_call1(KD_OP_narrow, a, &list[i]);
    if (st != KD_OK) {
      for (int j = 0; j < i; j++) kd_tensor_release(list[j]);
      free(list);
      return st;
    }
    start += lengths[i];
  }
  outs[0].kind = KD_VALUE_TENSORLIST;
  outs[0].v.tlist.data = list;
  outs[0].v.tlist.n = n;
  return KD_OK;
}

/* Equal pieces of `size` (the last one smaller): torch.split with an int. */
static kd_status kd_split_equal(kd_tensor *self, int dim, int64_t size, kd_value *outs) {
  int64_t dim_size = self->sizes[dim];
  if (size < 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "split expects split_size be non-negative, but got split_size=%lld", (long long)size);
  if (size == 0 && dim_size != 0)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "split_size can only be 0 if dimension size is 0, but got dimension size of %lld", (long long)dim_size);
  int64_t n = size == 0 ? 1 : kd_ceil_div(dim_size, size);
  if (n == 0) n = 1;
  if (n > INT32_MAX) return kd_error(KD_ERR_OOM, "split: %lld pieces are too many", (long long)n);
  int64_t *lengths = (int64_t *)malloc(sizeof(int64_t) * n);
  if (!lengths) return kd_error(KD_ERR_OOM, "out of memory");
  for (int64_t i = 0; i < n; i++) {
    int64_t rest = dim_size - i * size;
    lengths[i] = rest < size ? rest : size;
  }
  kd_status st = kd_split_into(self, dim, lengths, (int)n, outs);
  free(lengths);
  return st;
}

KD_KERNEL(kd_composite_split) {
  kd_tensor *self = args[0].v.t;
  if (self->ndim == 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "split expects at least a 1-dimensional tensor");
  int dim;
  KD_TRY(kd_shape_wrap_dim(args[2].v.i, self->ndim, &dim));
  if (args[1].kind == KD_VALUE_INT) return kd_split_equal(self, dim, args[1].v.i, outs);
  const int64_t *sizes = args[1].v.ilist.data;
  int n = args[1].v.ilist.n;
  int64_t total = 0;
  bool over = false;
  for (int i = 0; i < n; i++) {
    if (sizes[i] < 0)
      return kd_error(KD_ERR_INVALID_ARGUMENT, "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes=%lld", (long long)sizes[i]);
    if (!over) over = kd_add_overflows(total, sizes[i], &total); /* no sum past int64 matches a size */
  }
  if (over || total != self->sizes[dim]) {
    char buf[256];
    return kd_error(KD_ERR_SHAPE, "split_with_sizes expects split_sizes to sum exactly to %lld (input tensor's size at "
                    "dimension %d), but got split_sizes=%s", (long long)self->sizes[dim], dim,
                    kd_shape_format(sizes, n, buf, sizeof buf));
  }
  return kd_split_into(self, dim, sizes, n, outs);
}

KD_KERNEL(kd_composite_chunk) {
  kd_tensor *self = args[0].v.t;
  if (self->ndim == 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "chunk expects at least a 1-dimensional tensor");
  int64_t chunks = args[1].v.i;
  if (chunks <= 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "chunk expects `chunks` to be greater than 0, got: %lld", (long long)chunks);
  int dim;
  KD_TRY(kd_shape_wrap_dim(args[2].v.i, self->ndim, &dim));
  int64_t size = kd_ceil_div(self->sizes[dim], chunks);
  if (size == 0 && self->sizes[dim] == 0) { /* PyTorch: `chunks` empty pieces */
    if (chunks > INT32_MAX) return kd_error(KD_ERR_OOM, "chunk: %lld pieces are too many", (long long)chunks);
    int64_t *lengths = (int64_t *)calloc(chunks, sizeof(int64_t));
    if (!lengths) return kd_error(KD_ERR_OOM, "out of memory");
    kd_status st = kd_split_into(self, dim, lengths, (int)chunks, outs);
    free(lengths);
    return st;
  }
  return kd_split_equal(self, dim, size, outs);
}
