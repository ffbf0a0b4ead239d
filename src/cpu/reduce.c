/* reduce.c - CPU reductions: sum and mean over dims, max/min of all elements, and the
 * index-returning reductions max.dim, min.dim and argmax.
 *
 * sum/mean accumulate in double (floating inputs) or in wrapping 64-bit integers (integer
 * and bool inputs) in an accumulator tensor shaped like the output, then convert into the
 * output. A reduction runs through the iterator with the accumulator given the input's
 * shape and stride 0 on the reduced dims (see Note [Strided iteration]); a full reduction
 * of a large contiguous input is instead split into fixed chunks of KD_PARALLEL_GRAIN
 * elements whose partial results are combined in order, so it runs on every thread and its
 * result does not depend on the thread count. */
#include <stdlib.h>

#include "core/parallel.h"
#include "cpu/cpu_loops.h"

/* ---- accumulation types per kind ---- */
#define KD_ACC_F double
#define KD_ACC_I uint64_t
#define KD_ACC_B uint64_t
#define KD_ACC_LD_F(x) ((double)(x))
#define KD_ACC_LD_I(x) ((uint64_t)(int64_t)(x))
#define KD_ACC_LD_B(x) ((uint64_t)(x))
#define KD_ISNAN_F(x) ((x) != (x))
#define KD_ISNAN_I(x) 0
#define KD_ISNAN_B(x) 0

/* sum: acc (operand 0, stride 0 along reduced runs) += input (operand 1). Inner runs use
 * eight independent partial sums (a fixed order: deterministic). */
#define KD_DEF_SUM(SFX, DT, T, CT, LD, ST, MS, K, UT)                                         \
  static void kd_sum_loop_##SFX(void *ctx, char **data, const int64_t *strides, int64_t n) {  \
    typedef KD_ACC_##K acc_t;                                                                 \
    char *po = data[0], *pi = data[1];                                                        \
    const int64_t so = strides[0], si = strides[1];                                           \
    if (so == 0) {                                                                            \
      acc_t s[8] = {0, 0, 0, 0, 0, 0, 0, 0};                                                  \
      int64_t i = 0;                                                                          \
      if (si == (int64_t)sizeof(T)) {                                                         \
        const T *x = (const T *)pi;                                                           \
        for (; i + 8 <= n; i += 8)                                                            \
          for (int k = 0; k < 8; k++) s[k] += KD_ACC_LD_##K(LD(x[i + k]));                    \
        for (; i < n; i++) s[0] += KD_ACC_LD_##K(LD(x[i]));                                   \
      } else {                                                                                \
        for (; i < n; i++) s[0] += KD_ACC_LD_##K(LD(*(const T *)(pi + i * si)));              \
      }                                                                                       \
      *(acc_t *)po += ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));      \
    } else if (so == (int64_t)sizeof(acc_t) && si == (int64_t)sizeof(T)) {                    \
      acc_t *o = (acc_t *)po;                                                                 \
      const T *x = (const T *)pi;                                                             \
      for (int64_t i = 0; i < n; i++) o[i] += KD_ACC_LD_##K(LD(x[i]));                        \
    } else {                                                                                  \
      for (int64_t i = 0; i < n; i++)                                                         \
        *(acc_t *)(po + i * so) += KD_ACC_LD_##K(LD(*(const T *)(pi + i * si)));              \
    }                                                                                         \
  }
KD_ROWS_ALL(KD_DEF_SUM)
#define KD_SUM_ENTRY(SFX, DT, ...) KD_LOOP_ENTRY(kd_sum_loop_, SFX, DT)
static const kd_iter_loop_fn kd_sum_loops[KD_DTYPE_COUNT] = {KD_ROWS_ALL(KD_SUM_ENTRY)};

/* max/min of everything: operand 0 is the running result (stride 0, initialised with an
 * element), NaN propagates (a NaN lane stays NaN: x > NaN is false). Contiguous runs use
 * eight independent lanes so the compare-and-select vectorizes. ctx: int, 1 for max. */
#define KD_MINMAX_STEP(CMP, K, m, x) ((x) CMP (m) || KD_ISNAN_##K(x) ? (x) : (m))
#define KD_MINMAX_RUN(CMP, T, CT, LD, K)                                                      \
  do {                                                                                        \
    int64_t i = 0;                                                                            \
    if (si == (int64_t)sizeof(T) && n >= 16) {                                                \
      const T *xs = (const T *)pi;                                                            \
      CT acc[8];                                                                              \
      for (int k = 0; k < 8; k++) acc[k] = m;                                                 \
      for (; i + 8 <= n; i += 8)                                                              \
        for (int k = 0; k < 8; k++) {                                                         \
          CT x = LD(xs[i + k]);                                                               \
          acc[k] = KD_MINMAX_STEP(CMP, K, acc[k], x);                                         \
        }                                                                                     \
      for (int k = 0; k < 8; k++) m = KD_MINMAX_STEP(CMP, K, m, acc[k]);                      \
    }                                                                                         \
    for (; i < n; i++) {                                                                      \
      CT x = LD(*(const T *)(pi + i * si));                                                   \
      m = KD_MINMAX_STEP(CMP, K, m, x);                                                       \
    }                                                                                         \
  } while (0)
#define KD_DEF_MINMAX(SFX, DT, T, CT, LD, ST, MS, K, UT)                                      \
  static void kd_minmax_loop_##SFX(void *ctx, char **data, const int64_t *strides, int64_t n) { \
    char *pi = data[1];                                                                       \
    const int64_t si = strides[1];                                                            \
    CT m = LD(*(const T *)data[0]);                                                           \
    if (*(const int *)ctx) KD_MINMAX_RUN(>, T, CT, LD, K);                                    \
    else KD_MINMAX_RUN(<, T, CT, LD, K);                                                      \
    *(T *)data[0] = ST(m);                                                                    \
  }
KD_ROWS_ALL(KD_DEF_MINMAX)
#define KD_MINMAX_ENTRY(SFX, DT, ...) KD_LOOP_ENTRY(kd_minmax_loop_, SFX, DT)
static const kd_iter_loop_fn kd_minmax_loops[KD_DTYPE_COUNT] = {KD_ROWS_ALL(KD_MINMAX_ENTRY)};

/* max.dim / min.dim / argmax with KD_ITER_REDUCE_INNER: operands values, indices, input.
 * A run with output strides 0 is one whole reduced run (the loop index is the position);
 * otherwise the reduced dim has size 1 and every element is its own result. PyTorch's
 * rule: the first index wins ties and the first NaN wins over everything. */
#define KD_DEF_ARG(SFX, DT, T, CT, LD, ST, MS, K, UT)                                         \
  static void kd_arg_loop_##SFX(void *ctx, char **data, const int64_t *strides, int64_t n) {  \
    char *pv = data[0], *px = data[1], *pi = data[2];                                         \
    const int64_t sv = strides[0], sx = strides[1], si = strides[2];                          \
    if (sv == 0 && sx == 0) {                                                                 \
      CT best = LD(*(const T *)pi);                                                           \
      int64_t bi = 0;                                                                         \
      if (*(const int *)ctx) {                                                                \
        for (int64_t i = 0; i < n; i++) {                                                     \
          CT x = LD(*(const T *)(pi + i * si));                                               \
          if (!(x <= best)) { best = x; bi = i; if (KD_ISNAN_##K(x)) break; }                 \
        }                                                                                     \
      } else {                                                                                \
        for (int64_t i = 0; i < n; i++) {                                                     \
          CT x = LD(*(const T *)(pi + i * si));                                               \
          if (!(x >= best)) { best = x; bi = i; if (KD_ISNAN_##K(x)) break; }                 \
        }                                                                                     \
      }                                                                                       \
      *(T *)pv = ST(best);                                                                    \
      *(int64_t *)px = bi;                                                                    \
    } else {                                                                                  \
      for (int64_t i = 0; i < n; i++) {                                                       \
        *(T *)(pv + i * sv) = *(const T *)(pi + i * si);                                      \
        *(int64_t *)(px + i * sx) = 0;                                                        \
      }                                                                                       \
    }                                                                                         \
  }
KD_ROWS_ALL(KD_DEF_ARG)
#define KD_ARG_ENTRY(SFX, DT, ...) KD_LOOP_ENTRY(kd_arg_loop_, SFX, DT)
static const kd_iter_loop_fn kd_arg_loops[KD_DTYPE_COUNT] = {KD_ROWS_ALL(KD_ARG_ENTRY)};

/* ---- full reduction of a contiguous input in fixed chunks ---- */
#define KD_REDUCE_CHUNK ((int64_t)KD_PARALLEL_GRAIN)

typedef struct kd_chunk_job {
  kd_iter_loop_fn loop;
  void *ctx;
  char *in;
  int64_t es;       /* input element size */
  char *partials;   /* one accumulator per chunk */
  int64_t acc_size;
  int64_t numel;
  bool init_first;  /* start each partial from the chunk's first element (max/min) */
} kd_chunk_job;

static void kd_chunk_body(void *p, int64_t begin, int64_t end) {
  kd_chunk_job *j = (kd_chunk_job *)p;
  for (int64_t c = begin; c < end; c++) {
    int64_t start = c * KD_REDUCE_CHUNK;
    int64_t len = j->numel - start < KD_REDUCE_CHUNK ? j->numel - start : KD_REDUCE_CHUNK;
    char *data[2] = {j->partials + c * j->acc_size, j->in + start * j->es};
    int64_t strides[2] = {0, j->es};
    if (j->init_first) memcpy(data[0], data[1], (size_t)j->es);
    j->loop(j->ctx, data, strides, len);
  }
}

/* Runs loop over the contiguous input in chunks; returns the malloc'ed partials (nchunks). */
static kd_status kd_reduce_chunks(kd_iter_loop_fn loop, void *ctx, char *in, int64_t es, int64_t numel,
                                  int64_t acc_size, bool init_first, char **partials, int64_t *nchunks) {
  int64_t nc = (numel + KD_REDUCE_CHUNK - 1) / KD_REDUCE_CHUNK;
  char *p = (char *)calloc((size_t)nc, (size_t)acc_size);
  if (!p) return kd_error(KD_ERR_OOM, "out of host memory in a reduction");
  kd_chunk_job j = {loop, ctx, in, es, p, acc_size, numel, init_first};
  kd_parallel_for(0, nc, 1, kd_chunk_body, &j);
  *partials = p;
  *nchunks = nc;
  return KD_OK;
}

/* ---- argument parsing ---- */
static kd_status kd_parse_dims(const kd_tensor *self, const kd_value *dim, bool reduced[KD_MAX_DIMS]) {
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

/* Output sizes (keepdim or not), the keepdim strides of a contiguous output with zeros on
 * reduced dims (the output operand, with the input's sizes), and the reduced count. */
static void kd_reduced_geometry(const kd_tensor *self, const bool reduced[KD_MAX_DIMS], bool keepdim,
                                int64_t *out_sizes, int *out_nd, int64_t *op_strides, int64_t *count) {
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

static kd_iter_operand kd_operand_with(const kd_tensor *t, const kd_tensor *shape_of, const int64_t *strides) {
  kd_iter_operand o = kd_iter_operand_of(t);
  o.ndim = shape_of->ndim;
  o.sizes = shape_of->sizes;
  o.strides = strides;
  return o;
}

/* ---- sum / mean ---- */
static kd_status kd_sum_mean(const kd_op_info *op, kd_value *args, kd_value *outs) {
  kd_tensor *self = args[0].v.t;
  bool mean = op->code == KD_REDUCE_MEAN;
  bool keepdim = args[2].kind == KD_VALUE_BOOL && args[2].v.b;
  kd_dtype odt;
  if (mean) {
    if (args[3].kind == KD_VALUE_DTYPE) {
      odt = args[3].v.dtype;
      if (!kd_dtype_is_float(odt))
        return kd_error(KD_ERR_DTYPE, "mean(): could not infer output dtype. Optional dtype must be either a "
                                      "floating point or complex dtype. Got: %s", kd_cpu_torch_name(odt));
    } else {
      odt = self->dtype;
      if (!kd_dtype_is_float(odt))
        return kd_error(KD_ERR_DTYPE, "mean(): could not infer output dtype. Input dtype must be either a "
                                      "floating point or complex dtype. Got: %s", kd_cpu_torch_name(odt));
    }
  } else {
    odt = kd_arg_dtype_or(&args[3], kd_dtype_is_float(self->dtype) ? self->dtype : KD_DTYPE_I64);
  }
  bool reduced[KD_MAX_DIMS];
  KD_TRY(kd_parse_dims(self, &args[1], reduced));
  int64_t osizes[KD_MAX_DIMS], ostrides[KD_MAX_DIMS], count;
  int ond;
  kd_reduced_geometry(self, reduced, keepdim, osizes, &ond, ostrides, &count);

  /* accumulate in double for floating outputs, int64 otherwise; the input converts first
   * only when its kind differs from the output's (PyTorch casts to `dtype` first) */
  bool facc = kd_dtype_is_float(odt);
  kd_dtype accdt = facc ? KD_DTYPE_F64 : KD_DTYPE_I64;
  bool same_kind = facc == kd_dtype_is_float(self->dtype) && (odt != KD_DTYPE_BOOL || self->dtype == KD_DTYPE_BOOL);
  kd_tensor *out = NULL, *acc = NULL, *in = NULL;
  KD_TRY(kd_tensor_empty(osizes, ond, odt, kd_tensor_device(self), &out));
  kd_status st = KD_OK;
  if (odt == accdt) {
    acc = out;
    kd_tensor_retain(acc);
  } else {
    st = kd_tensor_empty(osizes, ond, accdt, kd_tensor_device(self), &acc);
  }
  if (st == KD_OK) st = kd_cpu_cast(self, same_kind ? self->dtype : odt, false, &in);
  if (st == KD_OK) {
    int64_t onumel = kd_tensor_numel(acc), inumel = kd_tensor_numel(in);
    memset(kd_tensor_data(acc), 0, (size_t)onumel * 8);
    kd_iter_loop_fn loop = kd_sum_loops[in->dtype];
    if (onumel == 1 && inumel > KD_REDUCE_CHUNK && kd_tensor_is_contiguous(in)) {
      char *partials = NULL;
      int64_t nc = 0;
      st = kd_reduce_chunks(loop, NULL, kd_tensor_data(in), (int64_t)kd_dtype_size(in->dtype), inumel, 8, false,
                            &partials, &nc);
      if (st == KD_OK) {
        if (facc) {
          double s = 0;
          for (int64_t c = 0; c < nc; c++) s += ((double *)partials)[c];
          *(double *)kd_tensor_data(acc) = s;
        } else {
          uint64_t s = 0;
          for (int64_t c = 0; c < nc; c++) s += ((uint64_t *)partials)[c];
          *(uint64_t *)kd_tensor_data(acc) = s;
        }
        free(partials);
      }
    } else {
      kd_iter_operand ops[2] = {kd_operand_with(acc, in, ostrides), kd_iter_operand_of(in)};
      kd_iter it;
      st = kd_iter_build(&it, ops, 2, 1, 0);
      if (st == KD_OK) kd_iter_for_each(&it, loop, NULL);
    }
    if (st == KD_OK && mean) {
      double *a = (double *)kd_tensor_data(acc), dcount = (double)count; /* 0 / 0: NaN for empty */
      for (int64_t i = 0; i < onumel; i++) a[i] /= dcount;
    }
    if (st == KD_OK && acc != out) st = kd_cpu_copy_into(out, acc);
  }
  if (in) kd_tensor_release(in);
  if (acc) kd_tensor_release(acc);
  if (st != KD_OK) {
    kd_tensor_release(out);
    return st;
  }
  kd_out_take(outs, 0, out);
  return KD_OK;
}

/* ---- max() / min() of all elements ---- */
static kd_status kd_minmax_all(const kd_op_info *op, kd_value *args, kd_value *outs) {
  kd_tensor *self = args[0].v.t;
  bool is_max = op->code == KD_REDUCE_MAX;
  int64_t numel = kd_tensor_numel(self);
  if (numel == 0)
    return kd_error(KD_ERR_INVALID_ARGUMENT,
                    "%s(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim "
                    "with the 'dim' argument.", is_max ? "max" : "min");
  kd_tensor *out;
  KD_TRY(kd_tensor_empty(NULL, 0, self->dtype, kd_tensor_device(self), &out));
  size_t es = kd_dtype_size(self->dtype);
  memcpy(kd_tensor_data(out), kd_tensor_data(self), es); /* the element at all-zero indices */
  int ctx = is_max;
  kd_iter_loop_fn loop = kd_minmax_loops[self->dtype];
  kd_status st = KD_OK;
  if (numel > KD_REDUCE_CHUNK && kd_tensor_is_contiguous(self)) {
    char *partials = NULL;
    int64_t nc = 0;
    st = kd_reduce_chunks(loop, &ctx, kd_tensor_data(self), (int64_t)es, numel, (int64_t)es, true, &partials, &nc);
    if (st == KD_OK) { /* combine the partials (contiguous, of self's dtype) with the same loop */
      char *data[2] = {kd_tensor_data(out), partials};
      int64_t strides[2] = {0, (int64_t)es};
      loop(&ctx, data, strides, nc);
      free(partials);
    }
  } else {
    int64_t zero[KD_MAX_DIMS] = {0};
    kd_iter_operand ops[2] = {kd_operand_with(out, self, zero), kd_iter_operand_of(self)};
    kd_iter it;
    st = kd_iter_build(&it, ops, 2, 1, 0);
    if (st == KD_OK) kd_iter_for_each(&it, loop, &ctx);
  }
  if (st != KD_OK) {
    kd_tensor_release(out);
    return st;
  }
  kd_out_take(outs, 0, out);
  return KD_OK;
}

KD_KERNEL(kd_cpu_reduce) {
  switch (op->code) {
    case KD_REDUCE_SUM:
    case KD_REDUCE_MEAN: return kd_sum_mean(op, args, outs);
    case KD_REDUCE_MAX:
    case KD_REDUCE_MIN: return kd_minmax_all(op, args, outs);
    default: return kd_error(KD_ERR_INTERNAL, "kd_cpu_reduce: unknown op '%s'", op->name);
  }
}

/* ---- max.dim / min.dim / argmax ---- */
KD_KERNEL(kd_cpu_arg_reduce) {
  kd_tensor *self = args[0].v.t;
  bool argmax = op->code == KD_REDUCE_ARGMAX;
  int is_max = op->code != KD_REDUCE_MIN;
  const char *name = argmax ? "argmax" : is_max ? "max" : "min";
  bool keepdim = args[2].kind == KD_VALUE_BOOL && args[2].v.b;

  kd_tensor *in = NULL; /* the tensor reduced: self, or self flattened for argmax without dim */
  int dim;
  int64_t osizes[KD_MAX_DIMS];
  int ond;
  if (argmax && args[1].kind == KD_VALUE_NONE) {
    int64_t numel = kd_tensor_numel(self);
    if (numel == 0)
      return kd_error(KD_ERR_INDEX, "argmax(): Expected reduction dim to be specified for input.numel() == 0.");
    kd_tensor *c;
    KD_TRY(kd_cpu_cast(self, self->dtype, true, &c));
    int64_t one = 1;
    kd_status st = kd_tensor_new_view(c, &numel, &one, 1, c->offset, &in);
    kd_tensor_release(c);
    KD_TRY(st);
    dim = 0;
    ond = keepdim ? self->ndim : 0;
    for (int d = 0; d < ond; d++) osizes[d] = 1;
  } else {
    int64_t dv = args[1].kind == KD_VALUE_INT ? args[1].v.i : 0;
    if (args[1].kind != KD_VALUE_INT) return kd_error(KD_ERR_TYPE, "%s(): argument 'dim' must be an integer", name);
    KD_TRY(kd_shape_wrap_dim(dv, self->ndim, &dim));
    if (self->ndim > 0 && self->sizes[dim] == 0)
      return kd_error(KD_ERR_INDEX, "%s(): Expected reduction dim %d to have non-zero size.", name, dim);
    in = self;
    kd_tensor_retain(in);
    ond = 0;
    for (int d = 0; d < self->ndim; d++)
      if (d != dim || keepdim) osizes[ond++] = d == dim ? 1 : self->sizes[d];
  }
  /* PyTorch has no bool argmax kernel; it skips it for an empty result or a size-1 dim */
  bool flat = args[1].kind == KD_VALUE_NONE;
  if (argmax && self->dtype == KD_DTYPE_BOOL && kd_tensor_numel(in) > 0 && (flat || self->ndim == 0 || in->sizes[dim] > 1)) {
    kd_tensor_release(in);
    return kd_error(KD_ERR_DTYPE, "\"argmax_cpu\" not implemented for 'Bool'");
  }
  bool reduced[KD_MAX_DIMS] = {false};
  if (in->ndim) reduced[dim] = true;
  int64_t dummy_sizes[KD_MAX_DIMS], ostrides[KD_MAX_DIMS], count;
  int dummy_nd;
  kd_reduced_geometry(in, reduced, true, dummy_sizes, &dummy_nd, ostrides, &count);

  kd_tensor *values = NULL, *indices = NULL;
  kd_status st = kd_tensor_empty(osizes, ond, self->dtype, kd_tensor_device(self), &values);
  if (st == KD_OK) st = kd_tensor_empty(osizes, ond, KD_DTYPE_I64, kd_tensor_device(self), &indices);
  if (st == KD_OK) {
    kd_iter_operand ops[3] = {kd_operand_with(values, in, ostrides), kd_operand_with(indices, in, ostrides),
                              kd_iter_operand_of(in)};
    kd_iter it;
    st = kd_iter_build(&it, ops, 3, 2, KD_ITER_REDUCE_INNER);
    if (st == KD_OK) kd_iter_for_each(&it, kd_arg_loops[self->dtype], &is_max);
  }
  kd_tensor_release(in);
  if (st != KD_OK) {
    if (values) kd_tensor_release(values);
    if (indices) kd_tensor_release(indices);
    return st;
  }
  if (argmax) {
    kd_tensor_release(values);
    kd_out_take(outs, 0, indices);
  } else {
    kd_out_take(outs, 0, values);
    kd_out_take(outs, 1, indices);
  }
  return KD_OK;
}
