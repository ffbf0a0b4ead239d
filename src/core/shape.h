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

/* Note [Checked shape arithmetic]
 * Sizes, strides, offsets and user integers are int64; any sum or product of them that can be
 * chosen by a caller is computed with these helpers, which report overflow instead of wrapping
 * (signed overflow is undefined behaviour in C, and a wrapped bound check lets a view reach
 * outside its storage). They return true when the exact result does not fit (then *out holds
 * the wrapped value and must not be used). */
static inline bool kd_add_overflows(int64_t a, int64_t b, int64_t *out) { return __builtin_add_overflow(a, b, out); }
static inline bool kd_sub_overflows(int64_t a, int64_t b, int64_t *out) { return __builtin_sub_overflow(a, b, out); }
static inline bool kd_mul_overflows(int64_t a, int64_t b, int64_t *out) { return __builtin_mul_overflow(a, b, out); }

/* ceil(a / b) for a >= 0, b > 0, without the overflow of (a + b - 1) / b. */
static inline int64_t kd_ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0); }

/* The number of elements of a shape of non-negative sizes: "numel: integer multiplication
 * overflow" (PyTorch's message) when it does not fit in int64. */
kd_status kd_shape_numel_checked(const int64_t *sizes, int ndim, int64_t *out);

/* The range of element indices a strided geometry touches: [*lowest, *highest], counting the
 * offset; for an empty geometry (a size of 0) *lowest = offset and *highest = offset - 1.
 * "Storage size calculation overflowed with sizes=[3] and strides=[4611686018427388928]" when a
 * bound does not fit in int64. */
kd_status kd_shape_extent(const int64_t *sizes, const int64_t *strides, int ndim, int64_t offset, int64_t *lowest,
                          int64_t *highest);

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
