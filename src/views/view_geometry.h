/* view_geometry.h - the shape/stride arithmetic behind view ops, shared by the view kernels
 * and the composites that decide between a view and a copy (reshape). */
#ifndef KD_VIEW_GEOMETRY_H
#define KD_VIEW_GEOMETRY_H

#include <stdbool.h>
#include <stdint.h>

#include "core/status.h"

/* Resolves a single -1 in `shape` against numel (PyTorch's infer_size):
 * "shape '[2, 5]' is invalid for input of size 6", "only one dimension can be inferred". */
kd_status kd_view_infer_size(const int64_t *shape, int n, int64_t numel, int64_t *out);

/* Strides for viewing (sizes, strides) as new_sizes without copying, or false when the
 * memory layout does not allow it (PyTorch's computeStride). */
bool kd_view_compute_strides(const int64_t *sizes, const int64_t *strides, int ndim, const int64_t *new_sizes,
                             int new_ndim, int64_t *new_strides);

#endif
