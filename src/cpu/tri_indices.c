/* tri_indices.c - trilIndices/triuIndices: the [2, N] coordinates of the lower (upper) triangle
 * of a row x col matrix whose offset-th diagonal bounds it, row by row. The size comes from a
 * closed-form count of the elements in the rows above a row (integers only, exact for any
 * size); the CPU fills the output row by row, and on a device the kernel
 * (KD_DEV_OP_TRI_INDICES, cuda/ops_shape_construct.cu) finds the row of each output column by a
 * binary search over the same count, so no host work or copy is needed there. */
#include "cpu/cpu_loops.h"
#include "cpu/device_op.h"

/* sum_{i<r} max(i + b, 0) and sum_{i<r} max(a - i, 0), modulo 2^64 (each product halves its
 * even factor first), so differences of them are exact whenever the true difference fits. */
static uint64_t kd_tri_ramp_up(int64_t r, int64_t b) {
  int64_t lo = b < 0 ? -b : 0;
  if (r <= lo) return 0;
  uint64_t n = (uint64_t)(r - lo), ends = (uint64_t)(lo + b) + (uint64_t)(r - 1 + b);
  return n % 2 == 0 ? (n / 2) * ends : n * (ends / 2);
}
static uint64_t kd_tri_ramp_down(int64_t r, int64_t a) {
  if (a <= 0) return 0;
  uint64_t m = (uint64_t)(r < a ? r : a);
  return m * (uint64_t)a - (m % 2 == 0 ? (m / 2) * (m - 1) : m * ((m - 1) / 2));
}
/* Elements of the triangle in rows [0, r): row i holds clamp(i + offset + 1, 0, col) elements
 * (lower) or clamp(col - offset - i, 0, col) (upper); clamp(x, 0, col) = max(x, 0) - max(x - col, 0). */
static int64_t kd_tri_before(int64_t r, int64_t col, int64_t offset, bool lower) {
  if (lower) return (int64_t)(kd_tri_ramp_up(r, offset + 1) - kd_tri_ramp_up(r, offset + 1 - col));
  return (int64_t)(kd_tri_ramp_down(r, col - offset) - kd_tri_ramp_down(r, -offset));
}

typedef struct kd_tri_ctx {
  int64_t row, col, offset, n;
  bool lower;
  kd_dtype dtype;
  char *out; /* contiguous [2, n] */
} kd_tri_ctx;

/* Row by row on the CPU (the device kernel finds each element's row by a binary search over
 * kd_tri_before instead). */
static void kd_tri_fill(const kd_tri_ctx *c) {
  int64_t k = 0;
  for (int64_t r = 0; r < c->row && k < c->n; r++) {
    int64_t first = c->lower ? 0 : (r + c->offset > 0 ? r + c->offset : 0);
    int64_t end = c->lower ? r + c->offset + 1 : c->col;
    if (end > c->col) end = c->col;
    for (int64_t cc = first; cc < end; cc++, k++) {
      if (c->dtype == KD_DTYPE_I64) {
        ((int64_t *)c->out)[k] = r;
        ((int64_t *)c->out)[c->n + k] = cc;
      } else {
        ((int32_t *)c->out)[k] = (int32_t)r;
        ((int32_t *)c->out)[c->n + k] = (int32_t)cc;
      }
    }
  }
}

KD_KERNEL(kd_cpu_tri_indices) {
  (void)ks;
  bool lower = op->code == KD_TRIIDX_LOWER;
  const char *name = lower ? "tril_indices" : "triu_indices";
  int64_t row = args[0].v.i, col = args[1].v.i, offset = args[2].v.i;
  kd_dtype dt = kd_arg_dtype_or(&args[3], KD_DTYPE_I64);
  if (dt != KD_DTYPE_I64 && dt != KD_DTYPE_I32)
    return kd_error(KD_ERR_NOT_SUPPORTED, "\"%s\" not implemented for '%s'", name, kd_dtype_torch_name(dt));
  if (row < 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "row must be non-negative, got%lld", (long long)row);
  if (col < 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "col must be non-negative, got%lld", (long long)col);
  /* offsets beyond the matrix change nothing; clamping them keeps the sums below in range */
  if (offset > col) offset = col;
  if (offset < -row) offset = -row;
  int64_t cells;
  if (kd_mul_overflows(row, col, &cells) || cells > ((int64_t)1 << 52))
    return kd_error(KD_ERR_INVALID_ARGUMENT, "%s: a %lld x %lld matrix is too large", name, (long long)row, (long long)col);
  kd_tri_ctx c = {row, col, offset, row ? kd_tri_before(row, col, offset, lower) : 0, lower, dt, NULL};
  if (dt == KD_DTYPE_I32 && (row > INT32_MAX || col > INT32_MAX))
    return kd_error(KD_ERR_INVALID_ARGUMENT, "%s: %lld x %lld coordinates do not fit int32", name, (long long)row, (long long)col);
  int64_t sizes[2] = {2, c.n};
  kd_tensor *out;
  kd_device dev = kd_cpu_factory_device(op, args);
  KD_TRY(kd_tensor_empty(sizes, 2, dt, dev, &out));
  kd_status st = KD_OK;
  if (c.n > 0 && dev.type != KD_DEVICE_CPU) {
    kd_iter_operand o = kd_iter_operand_of(out);
    kd_iter it;
    st = kd_iter_build(&it, &o, 1, 1, 0);
    if (st == KD_OK) {
      kd_dev_op d;
      memset(&d, 0, sizeof d);
      d.kind = KD_DEV_OP_TRI_INDICES;
      d.code = lower;
      d.dtype = dt;
      d.it = &it;
      d.ops = &o;
      d.i[0] = row;
      d.i[1] = col;
      d.i[2] = offset;
      d.i[3] = c.n;
      st = kd_cpu_device_run(dev, &d);
    }
  } else if (c.n > 0) {
    c.out = (char *)kd_tensor_data(out);
    kd_tri_fill(&c);
  }
  if (st != KD_OK) {
    kd_tensor_release(out);
    return st;
  }
  kd_out_take(outs, 0, out);
  return KD_OK;
}
