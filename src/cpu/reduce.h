/* reduce.h - what the reduction-family kernel files (reduce.c, scan.c, median.c,
 * reduce_backward.c) share: dim-list parsing, the keepdim geometry of a reduction, and the
 * parallel runner that splits an iteration along a dim the outputs own. */
#ifndef KD_CPU_REDUCE_H
#define KD_CPU_REDUCE_H

#include "cpu/cpu_loops.h"

/* reduced[d] for each dim named by `dim` (int, int list, or none/empty list = every dim),
 * wrapping negative dims; PyTorch's errors for out-of-range and repeated dims. */
kd_status kd_red_parse_dims(const kd_tensor *self, const kd_value *dim, bool reduced[KD_MAX_DIMS]);

/* Output sizes (keepdim or not), the keepdim strides (in elements) of a contiguous output
 * with zeros on reduced dims (for an operand given self's sizes), and the reduced count. */
void kd_red_geometry(const kd_tensor *self, const bool reduced[KD_MAX_DIMS], bool keepdim, int64_t *out_sizes,
                     int *out_nd, int64_t *op_strides, int64_t *count);

/* An operand with t's data and dtype but shape_of's sizes and the given strides. */
kd_iter_operand kd_red_operand(const kd_tensor *t, const kd_tensor *shape_of, const int64_t *strides);

/* Runs the iteration like kd_iter_for_each, but in parallel whenever the work (numel times
 * `work_per_elem`) is large, splitting along the outermost dim every output owns (non-zero
 * stride) that is long enough; returns false (and runs nothing) when no such dim exists and
 * the work is large, so the caller can split another way. */
bool kd_red_run_owned(const kd_iter *it, kd_iter_loop_fn loop, void *ctx, int64_t work_per_elem);

/* The same iteration restricted to [begin, end) along dim d (data pointers advanced). */
void kd_red_sub_iter(const kd_iter *it, int d, int64_t begin, int64_t end, kd_iter *sub);

#endif
