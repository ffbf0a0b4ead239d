/* iter.c - the strided iterator. See Note [Strided iteration] in iter.h. */
#include "core/iter.h"

#include <string.h>

#include "core/parallel.h"
#include "core/shape.h"

/* True when every operand has ops[0]'s sizes and is row-major contiguous (strides of size-1 dims
 * do not count); *numel gets the element count. */
static bool kd_iter_all_same_contiguous(const kd_iter_operand *ops, int nops, int64_t *numel) {
  int nd = ops[0].ndim;
  for (int k = 1; k < nops; k++) {
    if (ops[k].ndim != nd) return false;
    for (int d = 0; d < nd; d++) /* a loop, not memcmp: a call costs more than these few dims */
      if (ops[k].sizes[d] != ops[0].sizes[d]) return false;
  }
  int64_t n = 1;
  for (int d = nd - 1; d >= 0; d--) {
    int64_t size = ops[0].sizes[d];
    if (size != 1)
      for (int k = 0; k < nops; k++)
        if (ops[k].strides[d] != n) return false;
    if (size == 0 || kd_mul_overflows(n, size, &n)) return false; /* empty: the general steps */
  }
  *numel = n;
  return true;
}

kd_status kd_iter_build(kd_iter *it, const kd_iter_operand *ops, int nops, int nout, unsigned flags) {
  if (nops > KD_ITER_MAX_OPS || nout > nops) return kd_error(KD_ERR_INTERNAL, "iterator: too many operands");
  int64_t numel;
  if (nops > 0 && kd_iter_all_same_contiguous(ops, nops, &numel) && numel > 0) {
    /* the common case, in a few instructions: what the steps below give for it, one dim (none
     * for a single element) with every stride the element size */
    it->nops = nops;
    it->nout = nout;
    it->flags = flags;
    it->numel = numel;
    it->ndim = numel > 1;
    it->shape[0] = numel;
    it->has_reduced_dims = false;
    for (int k = 0; k < nops; k++) {
      it->data[k] = ops[k].data;
      it->dtypes[k] = ops[k].dtype;
      it->strides[k][0] = (int64_t)kd_dtype_size(ops[k].dtype);
    }
    return KD_OK;
  }
  memset(it, 0, sizeof *it);
  it->nops = nops;
  it->nout = nout;
  it->flags = flags;

  /* 1. iteration shape: the outputs' shape if any, else the broadcast of the inputs */
  int64_t shape[KD_MAX_DIMS];
  int nd = 0;
  for (int k = nout; k < nops; k++) {
    int64_t tmp[KD_MAX_DIMS];
    int nt;
    KD_TRY(kd_shape_broadcast(shape, nd, ops[k].sizes, ops[k].ndim, tmp, &nt));
    memcpy(shape, tmp, sizeof(int64_t) * nt);
    nd = nt;
  }
  for (int k = 0; k < nout; k++) {
    if (k == 0 && nops == nout) { nd = ops[0].ndim; memcpy(shape, ops[0].sizes, sizeof(int64_t) * nd); }
    bool same = ops[k].ndim == nd;
    for (int d = 0; same && d < nd; d++) same = ops[k].sizes[d] == shape[d];
    if (!same) {
      /* inputs may broadcast up to an output (a.add_(b) with b smaller), never the reverse */
      int64_t tmp[KD_MAX_DIMS];
      int nt;
      char a[128], b[128];
      if (kd_shape_broadcast(ops[k].sizes, ops[k].ndim, shape, nd, tmp, &nt) != KD_OK || nt != ops[k].ndim ||
          memcmp(tmp, ops[k].sizes, sizeof(int64_t) * nt) != 0)
        return kd_error(KD_ERR_SHAPE, "output with shape %s doesn't match the broadcast shape %s",
                        kd_shape_format(ops[k].sizes, ops[k].ndim, a, sizeof a), kd_shape_format(shape, nd, b, sizeof b));
      nd = nt;
      memcpy(shape, tmp, sizeof(int64_t) * nt);
    }
  }

  /* 2. per-operand byte strides in iteration order, innermost first (perm[i] = source dim) */
  int perm[KD_MAX_DIMS];
  for (int i = 0; i < nd; i++) perm[i] = nd - 1 - i;
  int64_t st[KD_ITER_MAX_OPS][KD_MAX_DIMS];
  for (int k = 0; k < nops; k++) {
    int64_t es = (int64_t)kd_dtype_size(ops[k].dtype);
    int off = nd - ops[k].ndim;
    for (int d = 0; d < nd; d++) {
      int sd = d - off;
      /* only an empty operand's strides can be too large to scale (see below) */
      if (sd < 0 || ops[k].sizes[sd] == 1 || kd_mul_overflows(ops[k].strides[sd], es, &st[k][d])) st[k][d] = 0;
    }
    it->data[k] = ops[k].data;
    it->dtypes[k] = ops[k].dtype;
  }

  /* 3. order dims: insertion sort, deciding each pair by the first operand whose strides
   * are both non-zero (PyTorch's reorder_dimensions); ties keep row-major order */
  for (int i = 1; i < nd; i++) {
    for (int j = i; j > 0; j--) {
      int d0 = perm[j], d1 = perm[j - 1]; /* is d0 (now outer) faster than d1? */
      int swap = 0;
      for (int k = 0; k < nops; k++) {
        int64_t s0 = st[k][d0], s1 = st[k][d1];
        if (s0 == 0 || s1 == 0) continue;
        if (s0 < s1) swap = 1;
        else if (s0 > s1) swap = -1;
        if (swap) break;
      }
      if (swap <= 0) break;
      perm[j] = d1;
      perm[j - 1] = d0;
    }
  }
  bool reduced[KD_MAX_DIMS];
  for (int d = 0; d < nd; d++) {
    reduced[d] = false;
    for (int k = 0; k < nout; k++)
      if (st[k][d] == 0 && shape[d] > 1) reduced[d] = true;
    if (reduced[d]) it->has_reduced_dims = true;
  }
  if (flags & KD_ITER_REDUCE_INNER) { /* stable partition: reduced dims first */
    int p2[KD_MAX_DIMS], n2 = 0;
    for (int i = 0; i < nd; i++) if (reduced[perm[i]]) p2[n2++] = perm[i];
    for (int i = 0; i < nd; i++) if (!reduced[perm[i]]) p2[n2++] = perm[i];
    memcpy(perm, p2, sizeof(int) * nd);
  }

  /* 4. drop size-1 dims and coalesce neighbours contiguous for every operand. An empty
   * iteration has no dims at all: its other sizes and strides may not even multiply within
   * int64 ([0, 2^62, 4]), and nothing reads them. */
  int n = 0;
  it->numel = 1;
  for (int d = 0; d < nd; d++)
    if (shape[d] == 0) it->numel = 0;
  for (int i = 0; i < nd && it->numel != 0; i++) {
    int d = perm[i];
    it->numel *= shape[d];
    if (shape[d] == 1) continue;
    if (n > 0) {
      bool can = true;
      /* a reduced dim (output stride 0) never merges with a kept one: 0 != stride * size */
      for (int k = 0; k < nops && can; k++) can = st[k][d] == it->strides[k][n - 1] * it->shape[n - 1];
      if (can) {
        it->shape[n - 1] *= shape[d];
        continue;
      }
    }
    it->shape[n] = shape[d];
    for (int k = 0; k < nops; k++) it->strides[k][n] = st[k][d];
    n++;
  }
  if (it->numel == 0) n = 0;
  it->ndim = n;
  return KD_OK;
}

bool kd_iter_is_contiguous(const kd_iter *it) {
  if (it->ndim > 1) return false;
  if (it->ndim == 0) return true;
  for (int k = 0; k < it->nops; k++)
    if (it->strides[k][0] != (int64_t)kd_dtype_size(it->dtypes[k])) return false;
  return true;
}

typedef struct kd_iter_job {
  const kd_iter *it;
  kd_iter_loop_fn loop;
  void *ctx;
  int split_dim; /* -1: split the flat index space; else split this dim only */
} kd_iter_job;

/* Runs the flat element range [begin, end) of the iteration (row-major over dims, dim 0
 * innermost), calling loop over runs of dim 0. */
static void kd_iter_run_flat(const kd_iter *it, kd_iter_loop_fn loop, void *ctx, int64_t begin, int64_t end) {
  int nops = it->nops, nd = it->ndim;
  if (nd == 0) {
    if (begin < end) {
      int64_t zero[KD_ITER_MAX_OPS] = {0};
      char *ptrs[KD_ITER_MAX_OPS];
      memcpy(ptrs, it->data, sizeof(char *) * nops);
      loop(ctx, ptrs, zero, 1);
    }
    return;
  }
  int64_t idx[KD_MAX_DIMS];
  int64_t rem = begin;
  char *ptrs[KD_ITER_MAX_OPS];
  for (int k = 0; k < nops; k++) ptrs[k] = it->data[k];
  for (int d = 0; d < nd; d++) {
    idx[d] = rem % it->shape[d];
    rem /= it->shape[d];
    for (int k = 0; k < nops; k++) ptrs[k] += idx[d] * it->strides[k][d];
  }
  int64_t inner[KD_ITER_MAX_OPS];
  for (int k = 0; k < nops; k++) inner[k] = it->strides[k][0];
  int64_t pos = begin;
  while (pos < end) {
    int64_t run = it->shape[0] - idx[0];
    if (run > end - pos) run = end - pos;
    loop(ctx, ptrs, inner, run);
    pos += run;
    if (pos >= end) break;
    /* advance: dim 0 wrapped to 0, carry into outer dims */
    for (int k = 0; k < nops; k++) ptrs[k] += run * it->strides[k][0];
    idx[0] += run;
    for (int d = 0; d < nd && idx[d] == it->shape[d]; d++) {
      for (int k = 0; k < nops; k++) ptrs[k] -= it->shape[d] * it->strides[k][d];
      idx[d] = 0;
      if (d + 1 < nd) {
        idx[d + 1]++;
        for (int k = 0; k < nops; k++) ptrs[k] += it->strides[k][d + 1];
      }
    }
  }
}

static void kd_iter_parallel_body(void *p, int64_t begin, int64_t end) {
  kd_iter_job *job = (kd_iter_job *)p;
  const kd_iter *it = job->it;
  if (job->split_dim < 0) {
    kd_iter_run_flat(it, job->loop, job->ctx, begin, end);
    return;
  }
  /* split along the outermost dim: [begin, end) are its indices */
  int64_t inner = it->numel / it->shape[it->ndim - 1];
  kd_iter_run_flat(it, job->loop, job->ctx, begin * inner, end * inner);
}

void kd_iter_for_each(const kd_iter *it, kd_iter_loop_fn loop, void *ctx) {
  if (it->numel == 0) return;
  kd_iter_job job = {it, loop, ctx, -1};
  bool parallel = !(it->flags & KD_ITER_SERIAL) && it->numel >= KD_PARALLEL_GRAIN && kd_get_num_threads() > 1;
  if (!parallel) {
    if (it->ndim <= 1) { /* one run: the same-shape contiguous case, and single elements */
      char *ptrs[KD_ITER_MAX_OPS];
      int64_t inner[KD_ITER_MAX_OPS];
      for (int k = 0; k < it->nops; k++) {
        ptrs[k] = it->data[k];
        inner[k] = it->strides[k][0];
      }
      loop(ctx, ptrs, inner, it->numel);
      return;
    }
    kd_iter_run_flat(it, loop, ctx, 0, it->numel);
    return;
  }
  if (!it->has_reduced_dims) {
    kd_parallel_for(0, it->numel, KD_PARALLEL_GRAIN, kd_iter_parallel_body, &job);
    return;
  }
  int outer = it->ndim - 1;
  bool owned = outer >= 1; /* dim 0 stays whole for REDUCE_INNER runs */
  for (int k = 0; k < it->nout && owned; k++) owned = it->strides[k][outer] != 0;
  if (!owned) {
    kd_iter_run_flat(it, loop, ctx, 0, it->numel);
    return;
  }
  job.split_dim = outer;
  int64_t inner = it->numel / it->shape[outer];
  int64_t grain = (KD_PARALLEL_GRAIN + inner - 1) / inner;
  kd_parallel_for(0, it->shape[outer], grain, kd_iter_parallel_body, &job);
}
