/* shape_views.c - the view ops of the shape family: unfold (sliding windows) and diagonal.
 * Like src/views/views.c they only compute a new geometry over self's storage, in O(1), on
 * any device (`generic` kernels). */
#include <string.h>

#include "ops/kernel.h"

KD_KERNEL(kd_view_unfold) {
  (void)op;
  (void)ks;
  const kd_tensor *self = args[0].v.t;
  int64_t size = args[2].v.i, step = args[3].v.i;
  int d;
  KD_TRY(kd_shape_wrap_dim(args[1].v.i, self->ndim, &d));
  int64_t dsize = self->ndim == 0 ? 1 : self->sizes[d], dstride = self->ndim == 0 ? 1 : self->strides[d];
  if (size > dsize)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "maximum size for tensor at dimension %d is %lld but size is %lld", d,
                    (long long)dsize, (long long)size);
  if (size < 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "size is %lld but must be >= 0", (long long)size);
  if (step <= 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "step is %lld but must be > 0", (long long)step);
  if (self->ndim >= KD_MAX_DIMS) return kd_error(KD_ERR_INVALID_ARGUMENT, "unfold: at most %d dims", KD_MAX_DIMS);
  int64_t sizes[KD_MAX_DIMS], strides[KD_MAX_DIMS];
  memcpy(sizes, self->sizes, sizeof(int64_t) * self->ndim);
  memcpy(strides, self->strides, sizeof(int64_t) * self->ndim);
  if (self->ndim > 0) {
    sizes[d] = (dsize - size) / step + 1;
    /* a window count of 1 never uses the stride (dstride * step may not fit); otherwise
     * step <= dsize - size, so it fits within self's own extent */
    strides[d] = sizes[d] > 1 ? dstride * step : dstride;
  }
  sizes[self->ndim] = size;
  strides[self->ndim] = dstride;
  kd_tensor *v;
  KD_TRY(kd_tensor_new_view(self, sizes, strides, self->ndim + 1, self->offset, &v));
  kd_out_take(outs, 0, v);
  return KD_OK;
}

KD_KERNEL(kd_view_diagonal) {
  (void)op;
  (void)ks;
  const kd_tensor *self = args[0].v.t;
  int64_t offset = args[1].v.i;
  int d1, d2;
  KD_TRY(kd_shape_wrap_dim(args[2].v.i, self->ndim, &d1));
  KD_TRY(kd_shape_wrap_dim(args[3].v.i, self->ndim, &d2));
  if (d1 == d2) return kd_error(KD_ERR_INVALID_ARGUMENT, "diagonal dimensions cannot be identical %lld, %lld",
                                (long long)args[2].v.i, (long long)args[3].v.i);
  int64_t s1 = self->sizes[d1], s2 = self->sizes[d2], len, start = self->offset;
  if (offset >= 0) {
    len = s1 < s2 - offset ? s1 : s2 - offset;
  } else {
    len = s1 + offset < s2 ? s1 + offset : s2;
  }
  if (len < 0) len = 0;
  if (len > 0) start += offset >= 0 ? offset * self->strides[d2] : -offset * self->strides[d1];
  int64_t sizes[KD_MAX_DIMS], strides[KD_MAX_DIMS];
  int n = 0;
  for (int i = 0; i < self->ndim; i++) {
    if (i == d1 || i == d2) continue;
    sizes[n] = self->sizes[i];
    strides[n++] = self->strides[i];
  }
  sizes[n] = len;
  strides[n++] = self->strides[d1] + self->strides[d2];
  kd_tensor *v;
  KD_TRY(kd_tensor_new_view(self, sizes, strides, n, start, &v));
  kd_out_take(outs, 0, v);
  return KD_OK;
}
