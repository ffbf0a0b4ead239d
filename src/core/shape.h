/* shape.h - shape arithmetic shared by every layer: contiguous strides, contiguity,
 * dimension wrapping and broadcasting, with PyTorch's error messages. */
#ifndef KD_SHAPE_H
#define KD_SHAPE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

void kd_shape_contiguous_strides(const int64_t *sizes, int ndim, int64_t *strides_out);
/* Row-major contiguous, ignoring the strides of size-1 dims (as PyTorch does). */
bool kd_shape_is_contiguous(const int64_t *sizes, const int64_t *strides, int ndim);
int64_t kd_shape_numel(const int64_t *sizes, int ndim);

/* Wraps a possibly negative dim into [0, ndim); a 0-d tensor accepts -1 and 0.
 * "Dimension out of range (expected to be in range of [-2, 1], but got 2)". */
kd_status kd_shape_wrap_dim(int64_t dim, int ndim, int *out);

/* Broadcasts a with b (right-aligned); writes the result shape and its ndim.
 * "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1" */
kd_status kd_shape_broadcast(const int64_t *a, int na, const int64_t *b, int nb, int64_t *out, int *nout);

/* Formats a shape as "[2, 3]" into buf. */
const char *kd_shape_format(const int64_t *sizes, int ndim, char *buf, int n);

#ifdef __cplusplus
}
#endif
#endif
