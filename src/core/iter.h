/* iter.h - THE strided iterator: every CPU elementwise and reduction kernel runs through it.
 *
 * Note [Strided iteration]
 * A kernel describes its operands (outputs first, then inputs) as data pointer + dtype +
 * sizes + strides in elements. kd_iter_build broadcasts them to one iteration shape
 * (right-aligned, size-1 and missing dims get stride 0; a 0-d operand is a scalar broadcast
 * everywhere), orders the dims so the innermost one is the one with the smallest strides,
 * and coalesces dims that are contiguous for every operand. A contiguous elementwise op ends
 * up as ONE dim of length numel with stride == element size: the fast path, which the
 * kernel's inner loop detects by its strides.
 *
 * A reduction is the same iteration with the output given the input's full shape and stride
 * 0 along the reduced dims: the inner loop computes out[i*so] = op(out[i*so], in[i*si]) and
 * works for inner (so == 0) and outer (so != 0) reductions alike. Initialise outputs first.
 * KD_ITER_REDUCE_INNER additionally puts the reduced dims innermost, so a reduction over a
 * single dim is seen by ONE loop call of that dim's full length (argmax-style kernels use the
 * loop index as the position along the dim).
 *
 * kd_iter_for_each calls loop(ctx, data, strides, n) over runs of the innermost dim, in
 * parallel on the thread pool once numel >= KD_PARALLEL_GRAIN: elementwise iterations split
 * anywhere; iterations with reduced dims split only along an outer dim that every output
 * owns (non-zero stride), so two threads never write the same element. */
#ifndef KD_ITER_H
#define KD_ITER_H

#include <stdbool.h>
#include <stdint.h>

#include "core/dtype.h"
#include "core/status.h"
#include "core/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KD_ITER_MAX_OPS 8

typedef struct kd_iter_operand {
  char *data;             /* first element */
  kd_dtype dtype;
  int ndim;               /* 0: a scalar, broadcast everywhere */
  const int64_t *sizes;
  const int64_t *strides; /* in elements */
} kd_iter_operand;

/* Operand view of a tensor (sizes/strides point into the tensor). */
static inline kd_iter_operand kd_iter_operand_of(const kd_tensor *t) {
  kd_iter_operand op;
  op.data = kd_tensor_data(t);
  op.dtype = t->dtype;
  op.ndim = t->ndim;
  op.sizes = t->sizes;
  op.strides = t->strides;
  return op;
}

enum {
  KD_ITER_REDUCE_INNER = 1u << 0, /* reduced dims innermost, one loop call per full reduced run */
  KD_ITER_SERIAL = 1u << 1,       /* never split across threads */
};

typedef struct kd_iter {
  int nops, nout;
  int ndim;                                  /* after coalescing; dim 0 is the innermost */
  int64_t numel;
  int64_t shape[KD_MAX_DIMS];
  int64_t strides[KD_ITER_MAX_OPS][KD_MAX_DIMS]; /* bytes */
  char *data[KD_ITER_MAX_OPS];
  kd_dtype dtypes[KD_ITER_MAX_OPS];
  unsigned flags;
  bool has_reduced_dims;                     /* some output has stride 0 along a dim of size > 1 */
} kd_iter;

/* Inner loop: n elements; strides[k] is operand k's byte stride along the run. */
typedef void (*kd_iter_loop_fn)(void *ctx, char **data, const int64_t *strides, int64_t n);

/* Outputs must already have the full broadcast shape (give reduction outputs the input's
 * shape with stride 0 on reduced dims); inputs broadcast to it. */
kd_status kd_iter_build(kd_iter *it, const kd_iter_operand *ops, int nops, int nout, unsigned flags);
void kd_iter_for_each(const kd_iter *it, kd_iter_loop_fn loop, void *ctx);

/* True when every operand is contiguous (one coalesced dim, stride == element size). */
bool kd_iter_is_contiguous(const kd_iter *it);

#ifdef __cplusplus
}
#endif
#endif
