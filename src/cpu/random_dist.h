/* random_dist.h - the filling engine of the random distributions (random_dist.c) and the
 * helpers the random ops share (random_ops.c, multinomial.c). See Note [Random distributions]
 * in core/random.h. */
#ifndef KD_CPU_RANDOM_DIST_H
#define KD_CPU_RANDOM_DIST_H

#include "cpu/cpu_loops.h"
#include "core/random.h"

/* Multinomial passes of KD_DEV_OP_MULTINOMIAL (codes, as cuda/kd_cuda_api.h documents). */
enum { KD_MULTINOMIAL_CHECK = 0, KD_MULTINOMIAL_KEYS, KD_MULTINOMIAL_CDF, KD_MULTINOMIAL_SAMPLE };

/* Fills `out` (contiguous, any device, any dtype the caller allowed) with the draws of r; takes
 * the op's (seed, offset) from the generator and sets r->ubits from out's dtype. param: NULL,
 * or a contiguous float64 tensor of out's numel on out's device (the bernoulli probability or
 * the poisson rate of each element). *bad: whether a parameter was outside [0, 1] (bernoulli)
 * or negative/NaN (poisson). */
kd_status kd_random_dist_fill(kd_tensor *out, kd_random_dist_args *r, const kd_tensor *param, bool *bad);

/* randint/random_ bounds of the integer dtypes, with PyTorch's messages ("from is out of bounds
 * for signed char", "to - 1 is out of bounds for bool"); factory.c. */
kd_status kd_check_int_bounds(int64_t low, int64_t high, kd_dtype dt);
/* PyTorch's C++ name of an integer dtype in those messages (factory.c). */
const char *kd_cpp_type_name(kd_dtype t);

/* A new contiguous float64 copy of t (any device): the parameter tensors and multinomial's rows. */
kd_status kd_random_f64_copy(kd_tensor *t, kd_tensor **out);

#endif
