/* index_common.h - what the indexing kernels (index_gather.c, index_scatter.c, index_mask.c) share:
 * index preparation (int64, bounds-checked before anything is written, negatives wrapped where
 * the op allows them), the geometry of advanced indexing (aten::index.Tensor), and the two
 * strided loops every indexing op runs through the iterator.
 *
 * Note [Indexing through the iterator]
 * As PyTorch's index/gather kernels do, every op is an elementwise iteration over the RESULT's
 * shape (gather: index's shape; index_select: self's shape with index.numel() along dim; index:
 * the advanced-indexing result shape). The indexed tensor is an operand "restrided" to that
 * shape with stride 0 along the indexed dims, and each index tensor is an int64 operand
 * (stride 0 where it broadcasts). The loop adds sum_k index_k * stride_k (bytes) to the indexed
 * operand's pointer. Scatters write through the restrided operand given as the iteration's
 * OUTPUT: its stride-0 dims make the iterator split threads only along dims that operand owns,
 * so two threads never touch one element and repeated indices accumulate in order. */
#ifndef KD_INDEX_COMMON_H
#define KD_INDEX_COMMON_H

#include "cpu/cpu_loops.h"

#define KD_IX_MAX_INDICES (KD_ITER_MAX_OPS - 2)

/* Scatter modes. */
enum { KD_IX_COPY = 0, KD_IX_ADD, KD_IX_MUL, KD_IX_MAX, KD_IX_MIN };

typedef struct kd_ix_ctx {
  int nidx;                           /* index operands after the two data operands */
  int64_t stride[KD_IX_MAX_INDICES];  /* bytes per index step, per index operand */
  int64_t es;                         /* element size */
  int mode;                           /* scatter mode */
  kd_device dev;                      /* where the data lives (zero: the CPU); else the device hook runs */
  int64_t bound[KD_IX_MAX_INDICES];   /* > 0: gathers check index k against [0, bound) in their loop */
} kd_ix_ctx;

/* How an out-of-range index is reported. */
typedef enum kd_ix_msg {
  KD_IX_MSG_BOUNDS,     /* "index 5 is out of bounds for dimension 0 with size 3" */
  KD_IX_MSG_SELF,       /* "index out of range in self" */
  KD_IX_MSG_TAKE,       /* "out of range: tried to access index 10 on a tensor of 6 elements." */
  KD_IX_MSG_INDEX_COPY, /* "index_copy_(): index 5 is out of bounds for dimension 0 with size 3" */
  KD_IX_MSG_INDEX_FILL, /* "index_fill_(): index 5 is out of bounds for dimension 0 with size 3" */
} kd_ix_msg;

/* A new contiguous int64 copy of index with every value checked against [-size, size) (negatives
 * wrapped) when allow_neg, else [0, size). */
kd_status kd_ix_prepare(const kd_tensor *index, int64_t size, bool allow_neg, kd_ix_msg msg, int dim,
                        kd_tensor **out);

/* Note [Index checks inside the gather]
 * A gather's int64 contiguous CPU index is not read twice: instead of a check pass before the
 * gather (single-threaded, a whole extra read of the index), kd_ix_prepare_gather hands it over
 * unchecked with its bound in kd_ix_ctx.bound, and the gather loop, in every thread, checks each
 * index just before it reads through it, as PyTorch's cpu_scatter_gather_base_kernel does (a
 * scalar loop: see kd_ix_gather1_checked in index_loops.c), or, where an index is constant along
 * the run or there are several, each block of indices (KD_IX_CHECK_BLOCK, in L1) before the
 * block is gathered. An index out of range stops the loops before anything is read through it;
 * kd_ix_gather_error then builds the message of the bad index exactly as the check pass would
 * (nothing is returned but the error). Indices that need a copy (another dtype, a view,
 * negatives to wrap, a device) still go through kd_ix_prepare. */
#define KD_IX_CHECK_BLOCK 512

/* kd_ix_prepare(index, size, false, ...) for a gather from self: on the CPU, an int64 contiguous
 * index comes back retained and unchecked, with *bound = size for kd_ix_ctx.bound; any other
 * index is prepared (copied, checked) as kd_ix_prepare does, with *bound = 0. */
kd_status kd_ix_prepare_gather(const kd_tensor *self, const kd_tensor *index, int64_t size, kd_ix_msg msg, int dim,
                               kd_tensor **out, int64_t *bound);
/* The error of a gather run with a deferred check (kd_ix_prepare_gather's index): when the loop
 * met an index out of range (st is KD_ERR_INDEX), the message kd_ix_prepare gives for it. */
kd_status kd_ix_gather_error(kd_status st, const kd_tensor *index, int64_t size, kd_ix_msg msg, int dim);

/* The operand of t viewed with `sizes` (ndim n) and `strides` (elements). */
static inline kd_iter_operand kd_ix_operand(const kd_tensor *t, const int64_t *sizes, const int64_t *strides, int n) {
  kd_iter_operand o = kd_iter_operand_of(t);
  o.ndim = n;
  o.sizes = sizes;
  o.strides = strides;
  return o;
}

/* Runs the gather loop: out (ops[0]) = src (ops[1]) at the index operands' offsets. */
/* Whether every one of the n indices at q is in [0, size) (index_loops.c, compiled per CPU level). */
bool kd_ix_all_in_range(const int64_t *q, int64_t n, int64_t size);
kd_status kd_ix_run_gather(kd_iter_operand *ops, int nops, const kd_ix_ctx *ctx);
/* Runs the scatter loop: dst (ops[0], the iteration's output) op= src (ops[1]). */
kd_status kd_ix_run_scatter(kd_iter_operand *ops, int nops, const kd_ix_ctx *ctx);

/* Advanced indexing geometry (aten::index.Tensor / index_put_). */
typedef struct kd_ix_adv {
  int nidx;
  int dims[KD_MAX_DIMS];           /* the self dim each index tensor indexes */
  kd_tensor *idx[KD_MAX_DIMS];     /* prepared int64 contiguous index tensors */
  int rnd;
  int64_t rshape[KD_MAX_DIMS];     /* result shape */
  int64_t src_strides[KD_MAX_DIMS];/* self restrided to rshape (elements) */
  int64_t idx_strides[KD_MAX_DIMS][KD_MAX_DIMS];
} kd_ix_adv;
kd_status kd_ix_adv_build(const kd_tensor *self, const kd_value *indices, kd_ix_adv *a);
void kd_ix_adv_free(kd_ix_adv *a);
/* Operands [slot0, self-restrided, idx...] for an advanced-index geometry; ops[0]/[1] set by caller. */
kd_status kd_ix_adv_operands(const kd_tensor *self, const kd_ix_adv *a, kd_iter_operand *ops, kd_ix_ctx *ctx);

/* [n, ndim] int64 indices of the non-zero elements of t, row-major (index_mask.c). */
kd_status kd_cpu_nonzero_of(const kd_tensor *t, kd_tensor **out);

/* Treats a 0-d tensor as 1-d of size 1 (PyTorch's ensure_nonempty_size/stride). */
static inline int64_t kd_ix_size(const kd_tensor *t, int d) { return t->ndim == 0 ? 1 : t->sizes[d]; }
static inline int64_t kd_ix_stride(const kd_tensor *t, int d) { return t->ndim == 0 ? 0 : t->strides[d]; }

/* The shape checks of gather and of the scatter family (PyTorch's gather_shape_check /
 * scatter_shape_check), index dtype included; src may be NULL (a scalar value). */
kd_status kd_ix_scatter_gather_check(const char *name, const kd_tensor *self, int dim, const kd_tensor *index,
                                     const kd_tensor *src, bool is_gather);
#endif
