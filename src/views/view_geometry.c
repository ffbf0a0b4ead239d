/* view_geometry.c - infer_size and computeStride, as in PyTorch (aten/src/ATen/TensorUtils.cpp). */
#include "views/view_geometry.h"

#include "core/shape.h"
#include "core/tensor.h"

kd_status kd_view_infer_size(const int64_t *shape, int n, int64_t numel, int64_t *out) {
  int infer = -1;
  int64_t known = 1;
  char buf[256];
  for (int i = 0; i < n; i++) {
    if (shape[i] == -1) {
      if (infer >= 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "only one dimension can be inferred");
      infer = i;
    } else if (shape[i] < 0) {
      return kd_error(KD_ERR_INVALID_ARGUMENT, "invalid shape dimension %lld", (long long)shape[i]);
    } else if (__builtin_mul_overflow(known, shape[i], &known)) {
      return kd_error(KD_ERR_INVALID_ARGUMENT, "numel: integer multiplication overflow");
    }
    out[i] = shape[i];
  }
  if (infer >= 0 && known > 0 && numel % known == 0) {
    out[infer] = numel / known;
  } else if (infer >= 0 && known == 0 && numel == 0) {
    return kd_error(KD_ERR_SHAPE, "cannot reshape tensor of 0 elements into shape %s because the unspecified "
                    "dimension size -1 can be any value and is ambiguous", kd_shape_format(shape, n, buf, sizeof buf));
  } else if (infer >= 0 || known != numel) {
    return kd_error(KD_ERR_SHAPE, "shape '%s' is invalid for input of size %lld", kd_shape_format(shape, n, buf, sizeof buf),
                    (long long)numel);
  }
  return KD_OK;
}

bool kd_view_compute_strides(const int64_t *sizes, const int64_t *strides, int ndim, const int64_t *new_sizes,
                             int new_ndim, int64_t *new_strides) {
  if (ndim == 0) {
    for (int i = 0; i < new_ndim; i++) new_strides[i] = 1;
    return true;
  }
  if (kd_shape_numel(sizes, ndim) == 0) {
    kd_shape_contiguous_strides(new_sizes, new_ndim, new_strides);
    return true;
  }
  int view_d = new_ndim - 1;
  int64_t chunk_base_stride = strides[ndim - 1];
  int64_t tensor_numel = 1, view_numel = 1;
  for (int tensor_d = ndim - 1; tensor_d >= 0; tensor_d--) {
    tensor_numel *= sizes[tensor_d];
    if (tensor_d == 0 || (sizes[tensor_d - 1] != 1 && strides[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
        new_strides[view_d] = view_numel * chunk_base_stride;
        view_numel *= new_sizes[view_d];
        view_d--;
      }
      if (view_numel != tensor_numel) return false;
      if (tensor_d > 0) {
        chunk_base_stride = strides[tensor_d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  return view_d == -1;
}
