/* reduce_common.c - the reduction family's shared scaffolding (reduce.h): dim-list parsing, the
 * keepdim geometry, and the parallel runner that splits an iteration along a dim the outputs own.
 * Kept apart from reduce.c, whose loops are compiled once per CPU level (Note [CPU capability
 * dispatch]), because scan.c, median.c and index_common.c call it directly. */
#include <string.h>

#include "core/parallel.h"
#include "cpu/reduce.h"

kd_status kd_red_parse_dims(const kd_tensor *self, const kd_value *dim, bool reduced[KD_MAX_DIMS]) {
  int nd = self->ndim;
  memset(reduced, 0, sizeof(bool) * KD_MAX_DIMS);
  if (dim->kind == KD_VALUE_NONE || (dim->kind == KD_VALUE_INTLIST && dim->v.ilist.n == 0)) {
    for (int d = 0; d < nd; d++) reduced[d] = true;
    return KD_OK;
  }
  if (dim->kind == KD_VALUE_INT) { /* tolerate a bare int */
    int w;
    KD_TRY(kd_shape_wrap_dim(dim->v.i, nd, &w));
    if (nd) reduced[w] = true;
    return KD_OK;
  }
  if (dim->kind != KD_VALUE_INTLIST) return kd_error(KD_ERR_TYPE, "dim must be an integer or a list of integers");
  bool seen[KD_MAX_DIMS] = {false};
  for (int i = 0; i < dim->v.ilist.n; i++) {
    int w;
    KD_TRY(kd_shape_wrap_dim(dim->v.ilist.data[i], nd, &w));
    if (seen[w]) return kd_error(KD_ERR_INVALID_ARGUMENT, "dim %d appears multiple times in the list of dims", w);
    seen[w] = true;
    if (nd) reduced[w] = true;
  }
  return KD_OK;
}

void kd_red_geometry(const kd_tensor *self, const bool reduced[KD_MAX_DIMS], bool keepdim, int64_t *out_sizes,
                     int *out_nd, int64_t *op_strides, int64_t *count) {
  int64_t keep[KD_MAX_DIMS];
  int n = 0;
  *count = 1;
  for (int d = 0; d < self->ndim; d++) {
    keep[d] = reduced[d] ? 1 : self->sizes[d];
    if (reduced[d]) *count *= self->sizes[d];
    if (!reduced[d] || keepdim) out_sizes[n++] = keep[d];
  }
  *out_nd = n;
  kd_shape_contiguous_strides(keep, self->ndim, op_strides);
  for (int d = 0; d < self->ndim; d++)
    if (reduced[d]) op_strides[d] = 0;
}

kd_iter_operand kd_red_operand(const kd_tensor *t, const kd_tensor *shape_of, const int64_t *strides) {
  kd_iter_operand o = kd_iter_operand_of(t);
  o.ndim = shape_of->ndim;
  o.sizes = shape_of->sizes;
  o.strides = strides;
  return o;
}

void kd_red_sub_iter(const kd_iter *it, int d, int64_t begin, int64_t end, kd_iter *sub) {
  *sub = *it;
  sub->flags |= KD_ITER_SERIAL;
  sub->numel = it->numel / it->shape[d] * (end - begin);
  sub->shape[d] = end - begin;
  for (int k = 0; k < it->nops; k++) sub->data[k] = it->data[k] + begin * it->strides[k][d];
}

typedef struct kd_split_job {
  const kd_iter *it;
  kd_iter_loop_fn loop;
  void *ctx;
  int dim;
} kd_split_job;

static void kd_split_body(void *p, int64_t begin, int64_t end) {
  kd_split_job *j = (kd_split_job *)p;
  kd_iter sub;
  kd_red_sub_iter(j->it, j->dim, begin, end, &sub);
  kd_iter_for_each(&sub, j->loop, j->ctx);
}

bool kd_red_run_owned(const kd_iter *it, kd_iter_loop_fn loop, void *ctx, int64_t work_per_elem) {
  int nt = kd_get_num_threads();
  if (it->numel == 0) return true;
  if (it->numel * work_per_elem < KD_PARALLEL_GRAIN || nt < 2 || it->ndim == 0) {
    kd_iter serial = *it;
    serial.flags |= KD_ITER_SERIAL;
    kd_iter_for_each(&serial, loop, ctx);
    return true;
  }
  for (int d = it->ndim - 1; d >= 0; d--) {
    bool owned = true;
    for (int k = 0; k < it->nout && owned; k++) owned = it->strides[k][d] != 0;
    int64_t minlen = d == 0 && it->ndim > 1 ? 64 * nt : 2 * nt; /* keep inner runs long enough */
    if (!owned || it->shape[d] < minlen) continue;
    int64_t inner = it->numel / it->shape[d] * work_per_elem;
    int64_t grain = (KD_PARALLEL_GRAIN + inner - 1) / inner;
    if (d == 0) grain = (it->shape[0] + nt - 1) / nt; /* inner dim: one long strip per thread */
    kd_split_job j = {it, loop, ctx, d};
    kd_parallel_for(0, it->shape[d], grain, kd_split_body, &j);
    return true;
  }
  return false;
}
