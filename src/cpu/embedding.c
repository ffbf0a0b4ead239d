/* embedding.c - CPU embedding lookup (kd.nn.functional.embedding) and its weight gradient
 * (kd._internal.embeddingBackward).
 *
 * Forward: out[i, :] = weight[idx[i], :] for every index of `input` (int64 or int32, any
 * shape, any strides): indices are converted to a contiguous int64 list by kd_cpu_cast (the
 * iterator's conversion loop) and checked against num_embeddings first (PyTorch's "index out of
 * range in self"); a gather of whole rows is not an iterator loop,
 * then whole rows are copied (memcpy when weight's rows are contiguous, else strided), rows
 * split over the thread pool. Backward: gradOutput rows summed into a zero [num, dim] tensor
 * (float32 accumulation for half types), serially in index order (deterministic), skipping
 * paddingIdx. On a device both are the indexing kernels (cpu/index_common.h, cuda/ops_index.cu):
 * indices checked by the device index check, then a gather of rows, or an atomic scatter-add of
 * gradient rows (float32 accumulation for half types; order unspecified, as PyTorch's CUDA)
 * followed by zeroing the paddingIdx row (which equals skipping it). */
#include <stdlib.h>

#include "core/parallel.h"
#include "cpu/cpu_loops.h"
#include "cpu/index_common.h"

static kd_status kd_emb_index_dtype(const kd_tensor *input);

/* Device indices: a contiguous int64 copy checked against [0, num) on the device. */
static kd_status kd_emb_indices_dev(const kd_tensor *input, int64_t num, kd_tensor **out) {
  KD_TRY(kd_emb_index_dtype(input));
  return kd_ix_prepare(input, num, false, KD_IX_MSG_SELF, 0, out);
}

/* [n, dim] iteration of rows picked by idx: op 0 `a` (contiguous [n, dim] when rows_out, else
 * the restrided weight-shaped tensor), op 1 the other side, op 2 the indices. */
static kd_status kd_emb_dev(kd_tensor *rows, kd_tensor *table, kd_tensor *idx, int64_t n, int64_t dim, bool gather) {
  int64_t sizes[2] = {n, dim}, rst[2] = {dim, 1}, tst[2] = {0, table->strides[1]}, ist[2] = {1, 0};
  kd_ix_ctx c;
  memset(&c, 0, sizeof c);
  c.nidx = 1;
  c.stride[0] = table->strides[0] * (int64_t)kd_dtype_size(table->dtype);
  c.es = (int64_t)kd_dtype_size(table->dtype);
  c.mode = KD_IX_ADD;
  c.dev = kd_tensor_device(table);
  kd_iter_operand r = kd_ix_operand(rows, sizes, rst, 2), t = kd_ix_operand(table, sizes, tst, 2);
  kd_iter_operand ops[3] = {gather ? r : t, gather ? t : r, kd_ix_operand(idx, sizes, ist, 2)};
  return gather ? kd_ix_run_gather(ops, 3, &c) : kd_ix_run_scatter(ops, 3, &c);
}

/* The indices of `input` as a malloc'ed contiguous int64 array (count in *n), checked
 * to lie in [0, num). */
static kd_status kd_emb_index_dtype(const kd_tensor *input) {
  if (input->dtype != KD_DTYPE_I64 && input->dtype != KD_DTYPE_I32) {
    const char *tn = input->dtype == KD_DTYPE_F32 ? "torch.FloatTensor" : input->dtype == KD_DTYPE_F64 ? "torch.DoubleTensor"
                   : input->dtype == KD_DTYPE_F16 ? "torch.HalfTensor" : input->dtype == KD_DTYPE_BF16 ? "torch.BFloat16Tensor"
                   : input->dtype == KD_DTYPE_BOOL ? "torch.BoolTensor" : input->dtype == KD_DTYPE_U8 ? "torch.ByteTensor"
                   : input->dtype == KD_DTYPE_I8 ? "torch.CharTensor" : "torch.ShortTensor";
    return kd_error(KD_ERR_DTYPE, "Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                    "Long, Int; but got %s instead (while checking arguments for embedding)", tn);
  }
  return KD_OK;
}

static kd_status kd_emb_indices(const kd_tensor *input, int64_t num, int64_t **out, int64_t *n) {
  KD_TRY(kd_emb_index_dtype(input));
  kd_tensor *c;
  KD_TRY(kd_cpu_cast((kd_tensor *)input, KD_DTYPE_I64, true, &c));
  int64_t cnt = kd_tensor_numel(c);
  int64_t *idx = (int64_t *)malloc(sizeof(int64_t) * (size_t)(cnt > 0 ? cnt : 1));
  if (!idx) {
    kd_tensor_release(c);
    return kd_error(KD_ERR_OOM, "out of host memory in embedding");
  }
  if (cnt) memcpy(idx, kd_tensor_data(c), sizeof(int64_t) * (size_t)cnt);
  kd_tensor_release(c);
  for (int64_t i = 0; i < cnt; i++)
    if (idx[i] < 0 || idx[i] >= num) {
      free(idx);
      return kd_error(KD_ERR_INDEX, "index out of range in self");
    }
  *out = idx;
  *n = cnt;
  return KD_OK;
}

typedef struct kd_emb_job {
  const int64_t *idx;
  const char *w;
  char *out;
  int64_t dim, es, wrow, wcol; /* weight strides in bytes */
} kd_emb_job;

static void kd_emb_rows(void *p, int64_t begin, int64_t end) {
  const kd_emb_job *j = (const kd_emb_job *)p;
  int64_t rowbytes = j->dim * j->es;
  for (int64_t i = begin; i < end; i++) {
    const char *src = j->w + j->idx[i] * j->wrow;
    char *dst = j->out + i * rowbytes;
    if (j->wcol == j->es) {
      memcpy(dst, src, (size_t)rowbytes);
    } else {
      for (int64_t k = 0; k < j->dim; k++) memcpy(dst + k * j->es, src + k * j->wcol, (size_t)j->es);
    }
  }
}

KD_KERNEL(kd_cpu_embedding) {
  (void)op;
  (void)ks;
  kd_tensor *input = args[0].v.t, *weight = args[1].v.t;
  if (weight->ndim != 2) return kd_error(KD_ERR_SHAPE, "'weight' must be 2-D");
  if (input->ndim + 1 > KD_MAX_DIMS) return kd_error(KD_ERR_INVALID_ARGUMENT, "embedding: too many dims");
  if (kd_tensor_device(weight).type != KD_DEVICE_CPU) {
    kd_tensor *ix, *out;
    KD_TRY(kd_emb_indices_dev(input, weight->sizes[0], &ix));
    int64_t sizes[KD_MAX_DIMS];
    memcpy(sizes, input->sizes, sizeof(int64_t) * input->ndim);
    sizes[input->ndim] = weight->sizes[1];
    kd_status st = kd_tensor_empty(sizes, input->ndim + 1, weight->dtype, kd_tensor_device(weight), &out);
    if (st == KD_OK) st = kd_emb_dev(out, weight, ix, kd_tensor_numel(ix), weight->sizes[1], true);
    kd_tensor_release(ix);
    if (st != KD_OK) {
      if (out) kd_tensor_release(out);
      return st;
    }
    kd_out_take(outs, 0, out);
    return KD_OK;
  }
  int64_t *idx, n;
  KD_TRY(kd_emb_indices(input, weight->sizes[0], &idx, &n));
  int64_t sizes[KD_MAX_DIMS];
  memcpy(sizes, input->sizes, sizeof(int64_t) * input->ndim);
  sizes[input->ndim] = weight->sizes[1];
  kd_tensor *out;
  kd_status st = kd_tensor_empty(sizes, input->ndim + 1, weight->dtype, kd_tensor_device(weight), &out);
  if (st == KD_OK && n > 0 && weight->sizes[1] > 0) {
    int64_t es = (int64_t)kd_dtype_size(weight->dtype);
    kd_emb_job j = {idx, kd_tensor_data(weight), kd_tensor_data(out), weight->sizes[1], es, weight->strides[0] * es,
                    weight->strides[1] * es};
    int64_t grain = KD_PARALLEL_GRAIN / weight->sizes[1];
    kd_parallel_for(0, n, grain > 0 ? grain : 1, kd_emb_rows, &j);
  }
  free(idx);
  if (st != KD_OK) return st;
  kd_out_take(outs, 0, out);
  return KD_OK;
}

static kd_status kd_emb_backward_dev(kd_tensor *g, kd_tensor *input, int64_t num, int64_t dim, int64_t pad, kd_value *outs) {
  kd_tensor *ix;
  KD_TRY(kd_emb_indices_dev(input, num, &ix));
  int64_t n = kd_tensor_numel(ix);
  if (kd_tensor_numel(g) != n * dim) {
    kd_tensor_release(ix);
    return kd_error(KD_ERR_SHAPE, "embeddingBackward: grad has %lld elements, expected %lld",
                    (long long)kd_tensor_numel(g), (long long)(n * dim));
  }
  kd_dtype cdt = g->dtype == KD_DTYPE_F64 ? KD_DTYPE_F64 : KD_DTYPE_F32;
  kd_tensor *gc = NULL, *acc = NULL, *zero = NULL, *row = NULL, *out = NULL;
  int64_t sizes[2] = {num, dim};
  kd_status st = kd_cpu_cast(g, cdt, true, &gc);
  if (st == KD_OK) st = kd_tensor_empty(sizes, 2, cdt, kd_tensor_device(g), &acc);
  if (st == KD_OK) st = kd_tensor_empty(NULL, 0, KD_DTYPE_F64, kd_device_cpu(), &zero);
  if (st == KD_OK) {
    *(double *)kd_tensor_data(zero) = 0.0;
    if (num * dim > 0) st = kd_cpu_copy_into(acc, zero);
  }
  if (st == KD_OK && n * dim > 0) st = kd_emb_dev(gc, acc, ix, n, dim, false);
  if (st == KD_OK && pad >= 0 && pad < num && dim > 0) { /* the paddingIdx row gets no gradient */
    int64_t one = 1;
    st = kd_tensor_new_view(acc, &dim, &one, 1, acc->offset + pad * dim, &row);
    if (st == KD_OK) st = kd_cpu_copy_into(row, zero);
  }
  if (st == KD_OK) st = kd_cpu_cast(acc, g->dtype, false, &out);
  kd_tensor_release(ix);
  if (gc) kd_tensor_release(gc);
  if (acc) kd_tensor_release(acc);
  if (zero) kd_tensor_release(zero);
  if (row) kd_tensor_release(row);
  if (st != KD_OK) return st;
  kd_out_take(outs, 0, out);
  return KD_OK;
}

KD_KERNEL(kd_cpu_embedding_backward) {
  (void)op;
  (void)ks;
  kd_tensor *g = args[0].v.t, *input = args[1].v.t;
  const kd_value *ws = &args[2];
  if (ws->v.ilist.n != 2) return kd_error(KD_ERR_SHAPE, "embeddingBackward: weightShape must have 2 sizes");
  int64_t num = ws->v.ilist.data[0], dim = ws->v.ilist.data[1];
  if (num < 0 || dim < 0)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "embeddingBackward: weightShape [%lld, %lld] has a negative size", (long long)num,
                    (long long)dim);
  int64_t pad = -1; /* none */
  if (args[3].kind == KD_VALUE_INT) pad = args[3].v.i < 0 ? args[3].v.i + num : args[3].v.i;
  if (!kd_dtype_is_float(g->dtype))
    return kd_error(KD_ERR_NOT_SUPPORTED, "\"embedding_backward\" not implemented for '%s'", kd_cpu_torch_name(g->dtype));
  if (kd_tensor_device(g).type != KD_DEVICE_CPU) return kd_emb_backward_dev(g, input, num, dim, pad, outs);
  int64_t *idx, n;
  KD_TRY(kd_emb_indices(input, num, &idx, &n));
  if (kd_tensor_numel(g) != n * dim) {
    free(idx);
    return kd_error(KD_ERR_SHAPE, "embeddingBackward: grad has %lld elements, expected %lld",
                    (long long)kd_tensor_numel(g), (long long)(n * dim));
  }
  kd_dtype cdt = g->dtype == KD_DTYPE_F64 ? KD_DTYPE_F64 : KD_DTYPE_F32;
  kd_tensor *gc = NULL, *acc = NULL, *out = NULL;
  int64_t sizes[2] = {num, dim};
  kd_status st = kd_cpu_cast(g, cdt, true, &gc);
  if (st == KD_OK) st = kd_tensor_empty(sizes, 2, cdt, kd_tensor_device(g), &acc);
  if (st == KD_OK) {
    memset(kd_tensor_data(acc), 0, (size_t)(num * dim) * kd_dtype_size(cdt));
    if (cdt == KD_DTYPE_F32) {
      float *a = (float *)kd_tensor_data(acc);
      const float *gr = (const float *)kd_tensor_data(gc);
      for (int64_t i = 0; i < n; i++) {
        if (idx[i] == pad) continue;
        float *row = a + idx[i] * dim;
        const float *src = gr + i * dim;
        for (int64_t k = 0; k < dim; k++) row[k] += src[k];
      }
    } else {
      double *a = (double *)kd_tensor_data(acc);
      const double *gr = (const double *)kd_tensor_data(gc);
      for (int64_t i = 0; i < n; i++) {
        if (idx[i] == pad) continue;
        double *row = a + idx[i] * dim;
        const double *src = gr + i * dim;
        for (int64_t k = 0; k < dim; k++) row[k] += src[k];
      }
    }
    if (cdt == g->dtype) {
      out = acc;
      acc = NULL;
    } else {
      st = kd_tensor_empty(sizes, 2, g->dtype, kd_tensor_device(g), &out);
      if (st == KD_OK) st = kd_cpu_copy_into(out, acc);
    }
  }
  free(idx);
  if (gc) kd_tensor_release(gc);
  if (acc) kd_tensor_release(acc);
  if (st != KD_OK) {
    if (out) kd_tensor_release(out);
    return st;
  }
  kd_out_take(outs, 0, out);
  return KD_OK;
}
