/* factory.c - CPU factories computed from the element index: arange, linspace and the random
 * ops (rand, randn, randint). Each runs the iterator over its fresh contiguous output and
 * derives every element from its index alone (the index is the byte offset from the start
 * divided by the element size), so results do not depend on the thread count. */
#include "cpu/cpu_loops.h"
#include "core/random.h"
#include "cpu/device_hooks.h"
#include "cpu/device_op.h"
#include "cpu/random_dist.h"

kd_cpu_device_random_fn kd_cpu_device_random = NULL;

#include <stdio.h>

typedef struct kd_index_ctx {
  char *base;  /* first element of the contiguous output */
  kd_dtype dtype;
  /* arange: start + step * i; linspace: the symmetric formula around `half` */
  double fstart, fstep, fend;
  int64_t istart, istep;
  int64_t steps, half;
  /* random */
  uint64_t seed, offset;
  int64_t low;
  uint64_t range;
} kd_index_ctx;

static inline int64_t kd_index_of(const kd_index_ctx *c, char *p) {
  return (int64_t)((p - c->base) / (int64_t)kd_dtype_size(c->dtype));
}

/* Switch cases storing VALUE_F(i) (a double) or VALUE_I(i) (an int64), defined by the loop
 * before it expands them, into the run's elements converted to the output dtype: one switch
 * per run, not per element. */
#define KD_STORE_F_CASE(SFX, DT, T, CT, LD, ST, MS, K, UT)                                    \
  case DT: for (int64_t k = 0; k < n; k++) *(T *)(p + k * s) = KD_CAST(K, F, T, CT, ST, VALUE_F(i0 + k)); break;
#define KD_STORE_I_CASE(SFX, DT, T, CT, LD, ST, MS, K, UT)                                    \
  case DT: for (int64_t k = 0; k < n; k++) *(T *)(p + k * s) = KD_CAST(K, I, T, CT, ST, VALUE_I(i0 + k)); break;

/* ---- arange ---- */
static void kd_arange_loop(void *ctx, char **data, const int64_t *strides, int64_t n) {
  const kd_index_ctx *c = (const kd_index_ctx *)ctx;
  char *p = data[0];
  const int64_t s = strides[0], i0 = kd_index_of(c, p);
  if (kd_dtype_is_float(c->dtype)) {
#define VALUE_F(i) (c->fstart + c->fstep * (double)(i))
    switch (c->dtype) { KD_ROWS_FLOAT(KD_STORE_F_CASE) default: break; }
#undef VALUE_F
  } else {
#define VALUE_I(i) ((int64_t)((uint64_t)c->istart + (uint64_t)c->istep * (uint64_t)(i)))
    switch (c->dtype) { KD_ROWS_INT(KD_STORE_I_CASE) default: break; }
#undef VALUE_I
  }
}

static void kd_linspace_loop(void *ctx, char **data, const int64_t *strides, int64_t n);

static kd_status kd_run_index_fill(kd_tensor *out, kd_iter_loop_fn loop, kd_index_ctx *c) {
  c->base = kd_tensor_data(out);
  c->dtype = out->dtype;
  kd_iter_operand o = kd_iter_operand_of(out);
  kd_iter it;
  KD_TRY(kd_iter_build(&it, &o, 1, 1, 0));
  if (kd_tensor_device(out).type != KD_DEVICE_CPU) { /* the device hook: the same formulas per index */
    if (!it.numel) return KD_OK;
    kd_dev_op d;
    memset(&d, 0, sizeof d);
    d.kind = KD_DEV_OP_ARANGE;
    d.code = loop == kd_linspace_loop;
    d.dtype = out->dtype;
    d.it = &it;
    d.ops = &o;
    d.d[0] = c->fstart;
    d.d[1] = c->fstep;
    d.d[2] = c->fend;
    d.i[0] = c->istart;
    d.i[1] = c->istep;
    d.i[2] = c->steps;
    d.i[3] = c->half;
    return kd_cpu_device_run(kd_tensor_device(out), &d);
  }
  kd_iter_for_each(&it, loop, c);
  return KD_OK;
}

static kd_status kd_finish_factory(kd_tensor *out, kd_iter_loop_fn loop, kd_index_ctx *c, kd_value *outs) {
  kd_status st = kd_run_index_fill(out, loop, c);
  if (st != KD_OK) {
    kd_tensor_release(out);
    return st;
  }
  kd_out_take(outs, 0, out);
  return KD_OK;
}

static kd_status kd_scalar_arg(const kd_op_info *op, const kd_value *v, const char *name, kd_scalar *out) {
  if (v->kind != KD_VALUE_SCALAR) return kd_error(KD_ERR_TYPE, "%s(): argument '%s' must be a number", op->name, name);
  *out = v->v.s;
  return KD_OK;
}

static void kd_format_scalar(kd_scalar s, char *buf, size_t n) {
  if (s.kind == KD_KIND_FLOAT) snprintf(buf, n, "%g", s.v.f);
  else snprintf(buf, n, "%lld", (long long)kd_scalar_to_int(s));
}

KD_KERNEL(kd_cpu_arange) {
  kd_scalar start, end, step;
  KD_TRY(kd_scalar_arg(op, &args[0], "start", &start));
  if (args[1].kind == KD_VALUE_NONE) { /* arange(end) */
    end = start;
    start = kd_scalar_i(0);
  } else {
    KD_TRY(kd_scalar_arg(op, &args[1], "end", &end));
  }
  KD_TRY(kd_scalar_arg(op, &args[2], "step", &step));
  bool all_int = start.kind != KD_KIND_FLOAT && end.kind != KD_KIND_FLOAT && step.kind != KD_KIND_FLOAT;
  kd_dtype dt = kd_arg_dtype_or(&args[3], all_int ? KD_DTYPE_I64 : KD_DTYPE_DEFAULT);
  if (dt == KD_DTYPE_BOOL) return kd_error(KD_ERR_DTYPE, "\"arange_cpu\" not implemented for 'Bool'");

  kd_index_ctx c;
  memset(&c, 0, sizeof c);
  double size_d;
  bool step_zero, finite = true, consistent;
  if (kd_dtype_is_float(dt)) {
    c.fstart = kd_scalar_to_double(start);
    c.fend = kd_scalar_to_double(end);
    c.fstep = kd_scalar_to_double(step);
    size_d = ceil((c.fend - c.fstart) / c.fstep);
    step_zero = c.fstep == 0;
    finite = isfinite(c.fstart) && isfinite(c.fend);
    consistent = (c.fstep > 0 && c.fend >= c.fstart) || (c.fstep < 0 && c.fend <= c.fstart);
  } else { /* integers compute in int64 (PyTorch's accumulate type), from truncated bounds */
    c.istart = kd_scalar_to_int(start);
    int64_t iend = kd_scalar_to_int(end);
    c.istep = kd_scalar_to_int(step);
    step_zero = c.istep == 0;
    if (dt == KD_DTYPE_I64) { /* ceil(|end - start| / |step|), exact in uint64 (the distance may not fit int64) */
      bool up = c.istep > 0;
      uint64_t dist = up ? (uint64_t)iend - (uint64_t)c.istart : (uint64_t)c.istart - (uint64_t)iend;
      uint64_t ustep = up ? (uint64_t)c.istep : -(uint64_t)c.istep;
      bool inside = up ? iend >= c.istart : iend <= c.istart;
      size_d = step_zero || !inside ? 0 : (double)(dist / ustep + (dist % ustep != 0));
    } else { /* PyTorch sizes the other integer dtypes from the untruncated bounds */
      size_d = ceil((kd_scalar_to_double(end) - kd_scalar_to_double(start)) / kd_scalar_to_double(step));
    }
    consistent = (c.istep > 0 && iend >= c.istart) || (c.istep < 0 && iend <= c.istart);
  }
  if (step_zero) return kd_error(KD_ERR_INVALID_ARGUMENT, "step must be nonzero");
  if (!finite) {
    char a[40], b[40];
    kd_format_scalar(start, a, sizeof a);
    kd_format_scalar(end, b, sizeof b);
    return kd_error(KD_ERR_INVALID_ARGUMENT, "unsupported range: %s -> %s", a, b);
  }
  if (!consistent) return kd_error(KD_ERR_INVALID_ARGUMENT, "upper bound and larger bound inconsistent with step sign");
  if (!(size_d >= 0 && size_d < 9.2233720368547758e18)) /* 2^63: the first size that does not fit */
    return kd_error(KD_ERR_INVALID_ARGUMENT, "invalid size, possible overflow?");
  int64_t size = (int64_t)size_d;
  kd_tensor *out;
  KD_TRY(kd_tensor_empty(&size, 1, dt, kd_cpu_factory_device(op, args), &out));
  return kd_finish_factory(out, kd_arange_loop, &c, outs);
}

/* ---- linspace: PyTorch's symmetric formula (exact endpoints) ---- */
static void kd_linspace_loop(void *ctx, char **data, const int64_t *strides, int64_t n) {
  const kd_index_ctx *c = (const kd_index_ctx *)ctx;
  char *p = data[0];
  const int64_t s = strides[0], i0 = kd_index_of(c, p);
  switch (c->dtype) {
    case KD_DTYPE_F64:
      for (int64_t k = 0; k < n; k++) {
        int64_t i = i0 + k;
        *(double *)(p + k * s) = i < c->half ? c->fstart + c->fstep * (double)i
                                             : c->fend - c->fstep * (double)(c->steps - 1 - i);
      }
      break;
    case KD_DTYPE_F32: case KD_DTYPE_F16: case KD_DTYPE_BF16: { /* computed in float */
      const float fs = (float)c->fstart, fe = (float)c->fend, st = (float)c->fstep;
#define VALUE_F(i) ((i) < c->half ? fs + st * (float)(i) : fe - st * (float)(c->steps - 1 - (i)))
      switch (c->dtype) { KD_ROWS_FLOAT(KD_STORE_F_CASE) default: break; }
#undef VALUE_F
      break;
    }
    default: { /* integers and bool: start/end in the dtype, step in double */
#define VALUE_F(i) ((i) < c->half ? (double)c->istart + c->fstep * (double)(i)                \
                                  : (double)c->fend - c->fstep * (double)(c->steps - 1 - (i)))
      switch (c->dtype) { KD_ROWS_INT(KD_STORE_F_CASE) KD_ROWS_BOOL(KD_STORE_F_CASE) default: break; }
#undef VALUE_F
      break;
    }
  }
}

KD_KERNEL(kd_cpu_linspace) {
  kd_scalar start, end;
  KD_TRY(kd_scalar_arg(op, &args[0], "start", &start));
  KD_TRY(kd_scalar_arg(op, &args[1], "end", &end));
  if (args[2].kind != KD_VALUE_INT) return kd_error(KD_ERR_TYPE, "linspace(): argument 'steps' must be an integer");
  int64_t steps = args[2].v.i;
  if (steps < 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "number of steps must be non-negative");
  kd_dtype dt = kd_arg_dtype_or(&args[3], KD_DTYPE_DEFAULT);
  if (dt == KD_DTYPE_BOOL && steps > 1) /* PyTorch fills 0 or 1 elements without its kernel */
    return kd_error(KD_ERR_DTYPE, "\"linspace_cpu\" not implemented for 'Bool'");
  kd_index_ctx c;
  memset(&c, 0, sizeof c);
  c.steps = steps;
  c.half = steps / 2;
  if (kd_dtype_is_float(dt)) {
    c.fstart = kd_scalar_to_double(start);
    c.fend = kd_scalar_to_double(end);
    if (dt != KD_DTYPE_F64) { /* float arithmetic, as PyTorch's float kernel */
      float fs = (float)c.fstart, fe = (float)c.fend;
      c.fstep = steps > 1 ? (double)((fe - fs) / (float)(steps - 1)) : 0.0;
    } else {
      c.fstep = steps > 1 ? (c.fend - c.fstart) / (double)(steps - 1) : 0.0;
    }
  } else { /* start/end converted to the dtype first (truncation), step in double */
    uint64_t bs = 0, be = 0;
    kd_scalar_store(start, dt, &bs);
    kd_scalar_store(end, dt, &be);
    c.istart = kd_scalar_to_int(kd_scalar_load(dt, &bs));
    c.fend = (double)kd_scalar_to_int(kd_scalar_load(dt, &be));
    c.fstep = steps > 1 ? (c.fend - (double)c.istart) / (double)(steps - 1) : 0.0;
  }
  if (steps == 1) c.half = 1; /* the single value is start */
  kd_tensor *out;
  KD_TRY(kd_tensor_empty(&steps, 1, dt, kd_cpu_factory_device(op, args), &out));
  return kd_finish_factory(out, kd_linspace_loop, &c, outs);
}

/* ---- random: see Note [Random number mapping] in core/random.h ---- */
/* Runs the statement(s) in ... for each element k of a run (element index i0 + k), computing
 * each Philox block once: w_[0..3] is the element's block and j its slot in the block
 * (SHIFT 2: four elements per block, w_[j] is its word; SHIFT 1: two per block, words 2j and
 * 2j + 1). See Note [Random number mapping]. */
#define KD_PHILOX_RUN(c, i0, n, SHIFT, ...)                                                   \
  do {                                                                                        \
    uint32_t w_[4];                                                                           \
    const uint64_t per_ = (uint64_t)1 << (SHIFT);                                             \
    uint64_t i_ = (i0);                                                                       \
    int64_t k = 0;                                                                            \
    while (k < (n)) {                                                                         \
      kd_philox_block((c)->seed, (c)->offset, i_ >> (SHIFT), w_);                             \
      for (uint64_t j = i_ & (per_ - 1); j < per_ && k < (n); j++, k++, i_++) { __VA_ARGS__; } \
    }                                                                                         \
  } while (0)

static void kd_uniform_loop(void *ctx, char **data, const int64_t *strides, int64_t n) {
  const kd_index_ctx *c = (const kd_index_ctx *)ctx;
  char *p = data[0];
  const int64_t s = strides[0];
  const uint64_t i0 = (uint64_t)kd_index_of(c, p);
  switch (c->dtype) {
    case KD_DTYPE_F32: KD_PHILOX_RUN(c, i0, n, 2, *(float *)(p + k * s) = kd_random_u32_to_f32(w_[j])); break;
    case KD_DTYPE_F16:
      KD_PHILOX_RUN(c, i0, n, 2, *(uint16_t *)(p + k * s) = kd_f32_to_f16(kd_random_u32_to_f16val(w_[j])));
      break;
    case KD_DTYPE_BF16:
      KD_PHILOX_RUN(c, i0, n, 2, *(uint16_t *)(p + k * s) = kd_f32_to_bf16(kd_random_u32_to_bf16val(w_[j])));
      break;
    case KD_DTYPE_F64:
      KD_PHILOX_RUN(c, i0, n, 1,
                    *(double *)(p + k * s) = kd_random_u64_to_f64(kd_random_words64(w_[2 * j], w_[2 * j + 1])));
      break;
    default: break;
  }
}

static void kd_normal_loop(void *ctx, char **data, const int64_t *strides, int64_t n) {
  const kd_index_ctx *c = (const kd_index_ctx *)ctx;
  char *p = data[0];
  const int64_t s = strides[0];
  const uint64_t i0 = (uint64_t)kd_index_of(c, p);
  double z[2];
  if (c->dtype == KD_DTYPE_F64) { /* one block -> two normals */
    KD_PHILOX_RUN(c, i0, n, 1, {
      if (j == 0 || k == 0)
        kd_random_box_muller64(kd_random_words64(w_[0], w_[1]), kd_random_words64(w_[2], w_[3]), z);
      *(double *)(p + k * s) = z[j];
    });
    return;
  }
  /* float32 family: one block -> two pairs -> four normals */
  KD_PHILOX_RUN(c, i0, n, 2, {
    if ((j & 1) == 0 || k == 0) kd_random_box_muller32(w_[j & 2], w_[(j & 2) + 1], z);
    double v = z[j & 1];
    switch (c->dtype) {
      case KD_DTYPE_F32: *(float *)(p + k * s) = (float)v; break;
      case KD_DTYPE_F16: *(uint16_t *)(p + k * s) = kd_f32_to_f16((float)v); break;
      case KD_DTYPE_BF16: *(uint16_t *)(p + k * s) = kd_f32_to_bf16((float)v); break;
      default: break;
    }
  });
}

static inline int64_t kd_randint_at(const kd_index_ctx *c, uint64_t i, uint32_t w[4], uint64_t *blk) {
  if (i >> 1 != *blk) kd_philox_block(c->seed, c->offset, *blk = i >> 1, w);
  int j = (int)(i & 1) * 2;
  return (int64_t)((uint64_t)c->low + kd_random_words64(w[j], w[j + 1]) % c->range);
}

static void kd_randint_loop(void *ctx, char **data, const int64_t *strides, int64_t n) {
  const kd_index_ctx *c = (const kd_index_ctx *)ctx;
  char *p = data[0];
  const int64_t s = strides[0];
  const uint64_t i0 = (uint64_t)kd_index_of(c, p);
  /* one block serves two elements: draw per element via a small cache */
#define VALUE_I(i) kd_randint_at(c, (uint64_t)(i), w, &blk)
  uint32_t w[4];
  uint64_t blk = UINT64_MAX;
  switch (c->dtype) { KD_ROWS_ALL(KD_STORE_I_CASE) default: break; }
#undef VALUE_I
}

/* PyTorch's C++ type names in randint's bounds messages. */
const char *kd_cpp_type_name(kd_dtype t) {
  switch (t) {
    case KD_DTYPE_I8: return "signed char";
    case KD_DTYPE_U8: return "unsigned char";
    case KD_DTYPE_I16: return "short int";
    case KD_DTYPE_I32: return "int";
    case KD_DTYPE_I64: return "long int";
    case KD_DTYPE_BOOL: return "bool";
    default: return kd_dtype_name(t);
  }
}

kd_status kd_check_int_bounds(int64_t low, int64_t high, kd_dtype dt) {
  int64_t lo, hi;
  switch (dt) {
    case KD_DTYPE_I8: lo = INT8_MIN; hi = INT8_MAX; break;
    case KD_DTYPE_U8: lo = 0; hi = UINT8_MAX; break;
    case KD_DTYPE_I16: lo = INT16_MIN; hi = INT16_MAX; break;
    case KD_DTYPE_I32: lo = INT32_MIN; hi = INT32_MAX; break;
    case KD_DTYPE_BOOL: lo = 0; hi = 1; break;
    default: return KD_OK;
  }
  if (low < lo || low > hi) return kd_error(KD_ERR_INVALID_ARGUMENT, "from is out of bounds for %s", kd_cpp_type_name(dt));
  if (high - 1 < lo || high - 1 > hi)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "to - 1 is out of bounds for %s", kd_cpp_type_name(dt));
  return KD_OK;
}

KD_KERNEL(kd_cpu_random) {
  int code = op->code;
  int a = code == KD_RANDOM_INT ? 2 : 0; /* index of `size` */
  if (args[a].kind != KD_VALUE_INTLIST) return kd_error(KD_ERR_TYPE, "%s(): argument 'size' must be a list of integers", op->name);
  kd_dtype dt = kd_arg_dtype_or(&args[a + 1], code == KD_RANDOM_INT ? KD_DTYPE_I64 : KD_DTYPE_DEFAULT);
  kd_index_ctx c;
  memset(&c, 0, sizeof c);
  kd_iter_loop_fn loop;
  if (code == KD_RANDOM_INT) {
    int64_t low = args[0].v.i, high = args[1].v.i;
    if (low >= high)
      return kd_error(KD_ERR_INVALID_ARGUMENT, "random_ expects 'from' to be less than 'to', but got from=%lld >= to=%lld",
                      (long long)low, (long long)high);
    KD_TRY(kd_check_int_bounds(low, high, dt));
    c.low = low;
    c.range = (uint64_t)high - (uint64_t)low;
    loop = kd_randint_loop;
  } else {
    if (!kd_dtype_is_float(dt))
      return kd_error(KD_ERR_DTYPE, "\"%s\" not implemented for '%s'",
                      code == KD_RANDOM_UNIFORM ? "check_uniform_bounds" : "normal_kernel_cpu", kd_cpu_torch_name(dt));
    loop = code == KD_RANDOM_UNIFORM ? kd_uniform_loop : kd_normal_loop;
  }
  kd_tensor *out;
  KD_TRY(kd_tensor_empty(args[a].v.ilist.data, args[a].v.ilist.n, dt, kd_cpu_factory_device(op, args), &out));
  c.offset = kd_random_next_offset(&c.seed);
  if (kd_tensor_device(out).type != KD_DEVICE_CPU) { /* the device hook: the same numbers */
    kd_dev_random r;
    memset(&r, 0, sizeof r);
    r.dev = kd_tensor_device(out);
    r.kind = code == KD_RANDOM_INT ? KD_DEV_RANDOM_INT : code == KD_RANDOM_UNIFORM ? KD_DEV_RANDOM_UNIFORM : KD_DEV_RANDOM_NORMAL;
    r.dtype = dt;
    r.n = kd_tensor_numel(out);
    r.seed = c.seed;
    r.offset = c.offset;
    r.low = c.low;
    r.range = c.range;
    r.y = kd_tensor_data(out);
    kd_status st = kd_cpu_device_random ? kd_cpu_device_random(&r)
                                        : kd_error(KD_ERR_NOT_SUPPORTED, "no random kernels are registered for this device");
    if (st != KD_OK) {
      kd_tensor_release(out);
      return st;
    }
    kd_out_take(outs, 0, out);
    return KD_OK;
  }
  return kd_finish_factory(out, loop, &c, outs);
}
