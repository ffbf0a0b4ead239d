/* random_ops.c - the random ops beyond rand/randn/randint: the in-place fillers (uniform_,
 * normal_, bernoulli_, exponential_, random_, geometric_, cauchy_, logNormal_), the sampling ops
 * that are "a new tensor, then a filler" (bernoulli, poisson), normal's four overloads and
 * randperm. Device-agnostic kernels: every check with PyTorch's message here, then the draws of
 * random_dist.c (a CPU loop or the device's kernel), so the same seed gives the same numbers on
 * every device (Note [Random distributions] in core/random.h). */
#include <stdio.h>

#include "cpu/random_dist.h"

/* ---- small op calls (below autograd: these run inside a kernel) ---- */
static kd_status kd_rnd_call_release(kd_op_id id, kd_value *args) {
  kd_value o[KD_OP_MAX_OUTS];
  KD_TRY(kd_call(id, args, o));
  for (int i = 0; i < KD_OP_MAX_OUTS; i++) kd_value_release(&o[i]);
  return KD_OK;
}
static kd_status kd_rnd_copy_into(kd_tensor *dst, kd_tensor *src) {
  kd_value a[2] = {kd_value_tensor(dst), kd_value_tensor(src)};
  return kd_rnd_call_release(KD_OP_copy_, a);
}

/* Whether every element of t is >= 0 (NaN is not), on any device. */
static kd_status kd_rnd_all_nonneg(kd_tensor *t, bool *ok) {
  *ok = true;
  if (kd_tensor_numel(t) == 0) return KD_OK;
  kd_value g[2] = {kd_value_tensor(t), kd_value_scalar(kd_scalar_i(0))};
  kd_tensor *ge = NULL, *all = NULL;
  KD_TRY(kd_call1(KD_OP_ge, g, &ge));
  kd_value a[3] = {kd_value_tensor(ge), kd_value_none(), kd_value_bool(false)};
  kd_status st = kd_call1(KD_OP_all, a, &all);
  kd_tensor_release(ge);
  KD_TRY(st);
  kd_scalar v;
  st = kd_cpu_item(all, &v);
  kd_tensor_release(all);
  KD_TRY(st);
  *ok = kd_scalar_to_double(v) != 0;
  return KD_OK;
}

static kd_status kd_rnd_not_implemented(const char *kernel, kd_dtype dt) {
  return kd_error(KD_ERR_NOT_SUPPORTED, "\"%s\" not implemented for '%s'", kernel, kd_cpu_torch_name(dt));
}

/* Draws r into self (any strides): directly when self is contiguous and nothing can fail late,
 * else into a contiguous temporary copied in afterwards, so a bad parameter leaves self as it was. */
static kd_status kd_rnd_fill_self(kd_tensor *self, kd_random_dist_args *r, kd_tensor *param, const char *bad_msg) {
  bool bad = false;
  if (!param && kd_tensor_is_contiguous(self)) return kd_random_dist_fill(self, r, NULL, &bad);
  kd_tensor *tmp = NULL;
  KD_TRY(kd_tensor_empty(self->sizes, self->ndim, self->dtype, kd_tensor_device(self), &tmp));
  kd_status st = kd_random_dist_fill(tmp, r, param, &bad);
  if (st == KD_OK && bad) st = kd_error(KD_ERR_INVALID_ARGUMENT, "%s", bad_msg);
  if (st == KD_OK) st = kd_rnd_copy_into(self, tmp);
  kd_tensor_release(tmp);
  return st;
}

/* ---- uniform_'s bounds (PyTorch's check_uniform_bounds) ---- */
static double kd_rnd_float_max(kd_dtype dt) {
  switch (dt) {
    case KD_DTYPE_F64: return 1.7976931348623157e308;
    case KD_DTYPE_F16: return 65504.0;
    case KD_DTYPE_BF16: return 3.3895313892515355e38;
    default: return 3.4028234663852886e38;
  }
}
static const char *kd_rnd_cpp_float_name(kd_dtype dt) {
  switch (dt) {
    case KD_DTYPE_F64: return "double";
    case KD_DTYPE_F16: return "c10::Half";
    case KD_DTYPE_BF16: return "c10::BFloat16";
    default: return "float";
  }
}
static kd_status kd_rnd_check_uniform(kd_dtype dt, double from, double to) {
  const double mx = kd_rnd_float_max(dt);
  if (!(from >= -mx && from <= mx)) return kd_error(KD_ERR_INVALID_ARGUMENT, "from is out of bounds for %s", kd_rnd_cpp_float_name(dt));
  if (!(to >= -mx && to <= mx)) return kd_error(KD_ERR_INVALID_ARGUMENT, "to is out of bounds for %s", kd_rnd_cpp_float_name(dt));
  if (!(from <= to))
    return kd_error(KD_ERR_INVALID_ARGUMENT, "uniform_ expects to return a [from, to) range, but found from=%g > to=%g", from, to);
  if (!(to - from <= mx))
    return kd_error(KD_ERR_INVALID_ARGUMENT,
                    "uniform_ expects to-from <= std::numeric_limits<%s>::max(), but found to=%g and from=%g which result in to-from to exceed the limit",
                    kd_cpu_torch_name(dt), to, from);
  return KD_OK;
}

/* ---- random_'s range (PyTorch's random_from_to_impl): sets r->low and r->range ---- */
static int kd_rnd_float_digits(kd_dtype dt) {
  switch (dt) {
    case KD_DTYPE_F64: return 53;
    case KD_DTYPE_F16: return 11;
    case KD_DTYPE_BF16: return 8;
    default: return 24;
  }
}
static int64_t kd_rnd_int_max(kd_dtype dt) {
  switch (dt) {
    case KD_DTYPE_I8: return INT8_MAX;
    case KD_DTYPE_U8: return UINT8_MAX;
    case KD_DTYPE_I16: return INT16_MAX;
    case KD_DTYPE_I32: return INT32_MAX;
    case KD_DTYPE_BOOL: return 1;
    default: return INT64_MAX;
  }
}
static kd_status kd_rnd_random_range(kd_dtype dt, int64_t from, bool has_to, int64_t to, kd_random_dist_args *r) {
  r->low = from;
  if (has_to) { /* [from, to) */
    if (from >= to)
      return kd_error(KD_ERR_INVALID_ARGUMENT, "random_ expects 'from' to be less than 'to', but got from=%lld >= to=%lld",
                      (long long)from, (long long)to);
    if (!kd_dtype_is_float(dt)) KD_TRY(kd_check_int_bounds(from, to, dt));
    r->range = (uint64_t)to - (uint64_t)from;
    return KD_OK;
  }
  if (from == INT64_MIN && !kd_dtype_is_float(dt) && dt == KD_DTYPE_I64) { /* the whole 64-bit range */
    r->range = 0;
    return KD_OK;
  }
  int64_t to_inc;
  if (kd_dtype_is_float(dt)) { /* [from, 2^digits] */
    to_inc = (int64_t)1 << kd_rnd_float_digits(dt);
    if (!(from < to_inc))
      return kd_error(KD_ERR_INVALID_ARGUMENT,
                      "random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' casted to dtype, but got from=%lld > to_inc=%lld",
                      (long long)from, (long long)to_inc);
  } else { /* [from, the dtype's largest] */
    to_inc = kd_rnd_int_max(dt);
    if (dt != KD_DTYPE_I64) KD_TRY(kd_check_int_bounds(from, to_inc + 1, dt));
  }
  r->range = (uint64_t)to_inc - (uint64_t)from + 1;
  return KD_OK;
}

/* Which dtypes a filler takes (PyTorch's CPU dispatch) and its kernel name in the refusal. */
static kd_status kd_rnd_check_dtype(int code, kd_dtype dt) {
  const bool fl = kd_dtype_is_float(dt);
  switch (code) {
    case KD_RANDFILL_UNIFORM: return fl ? KD_OK : kd_rnd_not_implemented("check_uniform_bounds", dt);
    case KD_RANDFILL_NORMAL: return fl ? KD_OK : kd_rnd_not_implemented("normal_kernel_cpu", dt);
    case KD_RANDFILL_LOG_NORMAL: return fl ? KD_OK : kd_rnd_not_implemented("log_normal_cpu", dt);
    case KD_RANDFILL_EXPONENTIAL: return fl ? KD_OK : kd_rnd_not_implemented("exponential_cpu", dt);
    case KD_RANDFILL_CAUCHY: return fl ? KD_OK : kd_rnd_not_implemented("cauchy_cpu", dt);
    case KD_RANDFILL_GEOMETRIC: return dt != KD_DTYPE_BOOL ? KD_OK : kd_rnd_not_implemented("geometric_cpu", dt);
    case KD_RANDFILL_POISSON: return fl ? KD_OK : kd_rnd_not_implemented("poisson_cpu", dt);
    default: return KD_OK; /* bernoulli, random_: every dtype */
  }
}

/* The in-place fillers, and bernoulli/poisson as "a new tensor of self's shape, then a filler"
 * (self being bernoulli's probabilities / poisson's rates). Parameter checks come before the
 * dtype check where PyTorch's do (normal_, exponential_, geometric_, logNormal_, bernoulli_). */
KD_KERNEL(kd_random_filler) {
  (void)ks;
  const int code = op->code;
  const bool inplace = kd_op_is_inplace(op);
  kd_tensor *self = args[0].v.t;
  kd_random_dist_args r;
  memset(&r, 0, sizeof r);
  kd_tensor *p = NULL; /* a tensor of per-element parameters (bernoulli_.Tensor, bernoulli, poisson) */
  const char *bad_msg = NULL;
  switch (code) {
    case KD_RANDFILL_UNIFORM:
      r.code = KD_RANDOM_DIST_UNIFORM;
      r.a = args[1].v.d;
      r.b = args[2].v.d;
      KD_TRY(kd_rnd_check_dtype(code, self->dtype));
      KD_TRY(kd_rnd_check_uniform(self->dtype, r.a, r.b));
      break;
    case KD_RANDFILL_NORMAL:
    case KD_RANDFILL_LOG_NORMAL:
      r.code = code == KD_RANDFILL_NORMAL ? KD_RANDOM_DIST_NORMAL : KD_RANDOM_DIST_LOG_NORMAL;
      r.a = args[1].v.d;
      r.b = args[2].v.d;
      if (code == KD_RANDFILL_NORMAL && !(r.b >= 0))
        return kd_error(KD_ERR_INVALID_ARGUMENT, "normal expects std >= 0.0, but found std %g", r.b);
      if (code == KD_RANDFILL_LOG_NORMAL && !(r.b > 0))
        return kd_error(KD_ERR_INVALID_ARGUMENT, "log_normal_ expects std > 0.0, but found std=%g", r.b);
      break;
    case KD_RANDFILL_EXPONENTIAL:
      r.code = KD_RANDOM_DIST_EXPONENTIAL;
      r.a = args[1].v.d;
      if (!(r.a >= 0)) return kd_error(KD_ERR_INVALID_ARGUMENT, "exponential_ expects lambda >= 0.0, but found lambda=%g", r.a);
      break;
    case KD_RANDFILL_CAUCHY:
      r.code = KD_RANDOM_DIST_CAUCHY;
      r.a = args[1].v.d;
      r.b = args[2].v.d;
      break;
    case KD_RANDFILL_GEOMETRIC:
      r.code = KD_RANDOM_DIST_GEOMETRIC;
      r.a = args[1].v.d;
      if (!(r.a > 0 && r.a < 1)) return kd_error(KD_ERR_INVALID_ARGUMENT, "geometric_ expects p to be in (0, 1), but got p=%g", r.a);
      break;
    case KD_RANDFILL_BERNOULLI:
      r.code = KD_RANDOM_DIST_BERNOULLI;
      r.a = args[1].v.d;
      if (!(r.a >= 0 && r.a <= 1)) return kd_error(KD_ERR_INVALID_ARGUMENT, "bernoulli_ expects p to be in [0, 1], but got p=%g", r.a);
      break;
    case KD_RANDFILL_BERNOULLI_TENSOR:
    case KD_RANDFILL_POISSON: {
      r.code = code == KD_RANDFILL_POISSON ? KD_RANDOM_DIST_POISSON : KD_RANDOM_DIST_BERNOULLI;
      p = inplace ? args[1].v.t : self;
      if (!kd_dtype_is_float(p->dtype))
        return kd_rnd_not_implemented(code == KD_RANDFILL_POISSON ? "poisson_cpu" : "bernoulli_tensor_cpu_p_", p->dtype);
      bad_msg = code == KD_RANDFILL_POISSON ? "invalid Poisson rate, expected rate to be non-negative"
                                            : "Expected p_in >= 0 && p_in <= 1 to be true, but got false.";
      break;
    }
    case KD_RANDFILL_RANDOM:
    case KD_RANDFILL_RANDOM_TO:
    case KD_RANDFILL_RANDOM_FROM: {
      r.code = KD_RANDOM_DIST_INT;
      int64_t from = code == KD_RANDFILL_RANDOM_FROM ? args[1].v.i : 0;
      bool has_to = code == KD_RANDFILL_RANDOM_TO || (code == KD_RANDFILL_RANDOM_FROM && args[2].kind == KD_VALUE_INT);
      int64_t to = code == KD_RANDFILL_RANDOM_TO ? args[1].v.i : has_to ? args[2].v.i : 0;
      KD_TRY(kd_rnd_random_range(self->dtype, from, has_to, to, &r));
      break;
    }
    default: return kd_error(KD_ERR_INTERNAL, "%s: unknown random filler", op->name);
  }
  if (code != KD_RANDFILL_UNIFORM) KD_TRY(kd_rnd_check_dtype(code, self->dtype));

  kd_tensor *out = self; /* the tensor drawn into: self, or a new one of self's shape */
  if (inplace) {
    KD_TRY(kd_cpu_check_no_internal_overlap(self));
    kd_tensor_retain(self);
  } else {
    KD_TRY(kd_tensor_empty(self->sizes, self->ndim, self->dtype, kd_tensor_device(self), &out));
  }
  kd_tensor *param = NULL;
  kd_status st = KD_OK;
  if (p) { /* the parameters as float64 in out's shape (bernoulli_'s p broadcast to self) */
    kd_tensor *px = p;
    if (inplace) {
      kd_value e[2] = {kd_value_tensor(p), kd_value_intlist(self->sizes, self->ndim)};
      st = kd_call1(KD_OP_expand, e, &px);
    } else {
      kd_tensor_retain(px);
    }
    if (st == KD_OK) {
      st = kd_random_f64_copy(px, &param);
      kd_tensor_release(px);
    }
  }
  if (st == KD_OK && inplace) {
    st = kd_rnd_fill_self(out, &r, param, bad_msg);
  } else if (st == KD_OK) { /* a new tensor: a bad parameter fails after the draw, nothing to restore */
    bool bad = false;
    st = kd_random_dist_fill(out, &r, param, &bad);
    if (st == KD_OK && bad) st = kd_error(KD_ERR_INVALID_ARGUMENT, "%s", bad_msg);
  }
  if (param) kd_tensor_release(param);
  if (st != KD_OK) {
    kd_tensor_release(out);
    return st;
  }
  kd_out_take(outs, 0, out);
  return KD_OK;
}

/* ---- normal: PyTorch's four overloads, composed as PyTorch composes them (normal_(0, 1) or
 * normal_(0, std), then mul_(std) and add_(mean)), so the numbers are normal_'s ---- */
KD_KERNEL(kd_random_normal) {
  (void)ks;
  const int code = op->code;
  kd_tensor *mean_t = code == KD_RANDNORMAL_TT || code == KD_RANDNORMAL_TF ? args[0].v.t : NULL;
  kd_tensor *std_t = code == KD_RANDNORMAL_TT || code == KD_RANDNORMAL_FT ? args[1].v.t : NULL;
  const double mean = mean_t ? 0 : args[0].v.d, stdv = std_t ? 1 : args[1].v.d;
  if (std_t) {
    bool ok;
    KD_TRY(kd_rnd_all_nonneg(std_t, &ok));
    if (!ok) return kd_error(KD_ERR_INVALID_ARGUMENT, "normal expects all elements of std >= 0.0");
  } else if (!(stdv >= 0)) {
    return kd_error(KD_ERR_INVALID_ARGUMENT, "normal expects std >= 0.0, but found std %g", stdv);
  }
  int64_t shape[KD_MAX_DIMS];
  int ndim;
  kd_dtype dt;
  kd_device dev;
  if (code == KD_RANDNORMAL_FF) {
    if (args[2].v.ilist.n > KD_MAX_DIMS) return kd_error(KD_ERR_INVALID_ARGUMENT, "normal(): too many dimensions");
    ndim = args[2].v.ilist.n;
    memcpy(shape, args[2].v.ilist.data, sizeof(int64_t) * (size_t)ndim);
    dt = kd_arg_dtype_or(&args[3], KD_DTYPE_DEFAULT);
    dev = kd_cpu_factory_device(op, args);
  } else if (code == KD_RANDNORMAL_TT) {
    KD_TRY(kd_shape_broadcast(mean_t->sizes, mean_t->ndim, std_t->sizes, std_t->ndim, shape, &ndim));
    dt = mean_t->dtype;
    dev = kd_tensor_device(mean_t);
  } else {
    kd_tensor *like = mean_t ? mean_t : std_t;
    ndim = like->ndim;
    memcpy(shape, like->sizes, sizeof(int64_t) * (size_t)ndim);
    dt = like->dtype;
    dev = kd_tensor_device(like);
  }
  KD_TRY(kd_rnd_check_dtype(KD_RANDFILL_NORMAL, dt));
  kd_tensor *out = NULL;
  KD_TRY(kd_tensor_empty(shape, ndim, dt, dev, &out));
  kd_random_dist_args r;
  memset(&r, 0, sizeof r);
  r.code = KD_RANDOM_DIST_NORMAL;
  r.a = code == KD_RANDNORMAL_FF ? mean : 0;
  r.b = std_t ? 1 : stdv;
  bool bad;
  kd_status st = kd_random_dist_fill(out, &r, NULL, &bad);
  if (st == KD_OK && std_t) {
    kd_value m[2] = {kd_value_tensor(out), kd_value_tensor(std_t)};
    st = kd_rnd_call_release(KD_OP_mul_, m);
  }
  if (st == KD_OK && code != KD_RANDNORMAL_FF) {
    kd_value a[3] = {kd_value_tensor(out), mean_t ? kd_value_tensor(mean_t) : kd_value_scalar(kd_scalar_f(mean)), kd_value_none()};
    st = kd_rnd_call_release(KD_OP_add_, a);
  }
  if (st != KD_OK) {
    kd_tensor_release(out);
    return st;
  }
  kd_out_take(outs, 0, out);
  return KD_OK;
}

/* ---- randperm: the stable ascending order of n random 64-bit keys (the whole int64 range),
 * sorted by the device's sort, so CPU and CUDA give the same permutation ---- */
KD_KERNEL(kd_random_randperm) {
  (void)ks;
  const int64_t n = args[0].v.i;
  const kd_dtype dt = kd_arg_dtype_or(&args[1], KD_DTYPE_I64);
  const kd_device dev = kd_cpu_factory_device(op, args);
  if (n < 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "Trying to create tensor with negative dimension %lld: [%lld]", (long long)n, (long long)n);
  if (dt == KD_DTYPE_BOOL) return kd_rnd_not_implemented("randperm", dt);
  if (dt == KD_DTYPE_F16 && n > 2049) return kd_error(KD_ERR_INVALID_ARGUMENT, "n cannot be greater than 2049 for Half type.");
  if (dt == KD_DTYPE_F32 && n > (1 << 24) + 1) return kd_error(KD_ERR_INVALID_ARGUMENT, "n cannot be greater than 2^24+1 for Float type.");
  if (dt == KD_DTYPE_F64 && n > ((int64_t)1 << 53) + 1)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "n cannot be greater than 2^53+1 for Double type.");
  if (!kd_dtype_is_float(dt)) KD_TRY(kd_cpu_scalar_check_fits(kd_scalar_i(n > 0 ? n - 1 : n), dt));
  kd_tensor *keys = NULL;
  KD_TRY(kd_tensor_empty(&n, 1, KD_DTYPE_I64, dev, &keys));
  kd_random_dist_args r;
  memset(&r, 0, sizeof r);
  r.code = KD_RANDOM_DIST_INT;
  r.range = 0; /* all 2^64 values */
  bool bad;
  kd_status st = kd_random_dist_fill(keys, &r, NULL, &bad);
  kd_value o[KD_OP_MAX_OUTS];
  for (int i = 0; i < KD_OP_MAX_OUTS; i++) o[i] = kd_value_none();
  if (st == KD_OK) {
    kd_value a[4] = {kd_value_tensor(keys), kd_value_int(0), kd_value_bool(false), kd_value_bool(true)};
    st = kd_call(KD_OP_sort, a, o);
  }
  kd_tensor_release(keys);
  kd_tensor *perm = NULL;
  if (st == KD_OK) {
    if (dt == KD_DTYPE_I64) {
      perm = o[1].v.t;
      kd_tensor_retain(perm);
    } else {
      kd_value c[4] = {o[1], kd_value_dtype(dt), kd_value_none(), kd_value_bool(false)};
      st = kd_call1(KD_OP_to, c, &perm);
    }
  }
  for (int i = 0; i < KD_OP_MAX_OUTS; i++) kd_value_release(&o[i]);
  KD_TRY(st);
  kd_out_take(outs, 0, perm);
  return KD_OK;
}
