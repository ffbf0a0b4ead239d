/* random_dist.c - the filling engine of the random distributions: one function writes the draws
 * of Note [Random distributions] (core/random.h) into a contiguous tensor, with a CPU loop over
 * the iterator (each element from its index alone, so the thread count does not matter) or, for
 * a tensor on a device, one KD_DEV_OP_RANDOM_DIST launch computing the same numbers. */
#include "cpu/random_dist.h"

#include <stdatomic.h>

#include "cpu/device_op.h"

typedef struct kd_dist_ctx {
  kd_random_dist_args r;
  char *base;
  kd_dtype dtype;
  const double *param; /* per-element parameter, or NULL */
  atomic_int bad;
} kd_dist_ctx;

/* Stores the double v into element k of a run of dtype dt (floats rounded once; integer dtypes
 * from an integral v; bool v != 0). */
static inline void kd_dist_store(kd_dtype dt, char *p, double v) {
  switch (dt) {
    case KD_DTYPE_F32: *(float *)p = (float)v; break;
    case KD_DTYPE_F64: *(double *)p = v; break;
    case KD_DTYPE_F16: *(uint16_t *)p = kd_f32_to_f16((float)v); break;
    case KD_DTYPE_BF16: *(uint16_t *)p = kd_f32_to_bf16((float)v); break;
    case KD_DTYPE_I8: *(int8_t *)p = (int8_t)kd_cpu_f2i(v); break;
    case KD_DTYPE_U8: *(uint8_t *)p = (uint8_t)kd_cpu_f2i(v); break;
    case KD_DTYPE_I16: *(int16_t *)p = (int16_t)kd_cpu_f2i(v); break;
    case KD_DTYPE_I32: *(int32_t *)p = (int32_t)kd_cpu_f2i(v); break;
    case KD_DTYPE_I64: *(int64_t *)p = kd_cpu_f2i(v); break;
    case KD_DTYPE_BOOL: *(uint8_t *)p = v != 0; break;
    default: break;
  }
}
/* The integer draw x into an element: integer dtypes wrap as a C cast, floats round. */
static inline void kd_dist_store_int(kd_dtype dt, char *p, int64_t x) {
  switch (dt) {
    case KD_DTYPE_I8: *(int8_t *)p = (int8_t)x; break;
    case KD_DTYPE_U8: *(uint8_t *)p = (uint8_t)x; break;
    case KD_DTYPE_I16: *(int16_t *)p = (int16_t)x; break;
    case KD_DTYPE_I32: *(int32_t *)p = (int32_t)x; break;
    case KD_DTYPE_I64: *(int64_t *)p = x; break;
    case KD_DTYPE_BOOL: *(uint8_t *)p = x != 0; break;
    default: kd_dist_store(dt, p, (double)x); break;
  }
}

static void kd_dist_loop(void *ctx, char **data, const int64_t *strides, int64_t n) {
  kd_dist_ctx *c = (kd_dist_ctx *)ctx;
  const kd_random_dist_args *r = &c->r;
  char *p = data[0];
  const int64_t s = strides[0], es = (int64_t)kd_dtype_size(c->dtype);
  const uint64_t i0 = (uint64_t)((p - c->base) / es);
  uint32_t w[4];
  uint64_t blk = UINT64_MAX;
  bool bad = false;
  const bool normal = r->code == KD_RANDOM_DIST_NORMAL || r->code == KD_RANDOM_DIST_LOG_NORMAL;
  double z[2] = {0, 0};
  for (int64_t k = 0; k < n; k++) {
    const uint64_t i = i0 + (uint64_t)k;
    char *e = p + k * s;
    if (r->code == KD_RANDOM_DIST_POISSON) {
      const double rate = c->param[i];
      if (!(rate >= 0)) {
        bad = true;
        continue;
      }
      kd_dist_store(c->dtype, e, kd_random_poisson(r->seed, r->offset, i, rate));
      continue;
    }
    double pr = r->a;
    if (c->param) {
      pr = c->param[i];
      if (!(pr >= 0 && pr <= 1)) {
        bad = true;
        continue;
      }
    }
    const uint64_t b = kd_random_dist_block(r, i);
    if (b != blk) kd_philox_block(r->seed, r->offset, blk = b, w);
    if (r->code == KD_RANDOM_DIST_INT) {
      kd_dist_store_int(c->dtype, e, kd_random_dist_int(r, w, i));
    } else if (normal) { /* one Box-Muller pair serves two elements */
      if ((i & 1) == 0 || k == 0) kd_random_dist_normal_pair(r, w, i, z);
      kd_dist_store(c->dtype, e, kd_random_dist_from_normal(r, z[i & 1]));
    } else {
      kd_dist_store(c->dtype, e, kd_random_dist_value(r, w, i, pr));
    }
  }
  if (bad) atomic_store_explicit(&c->bad, 1, memory_order_relaxed);
}

static int kd_dist_ubits(kd_dtype dt) {
  switch (dt) {
    case KD_DTYPE_F64: return 53;
    case KD_DTYPE_F16: return 11;
    case KD_DTYPE_BF16: return 8;
    default: return 24;
  }
}

kd_status kd_random_dist_fill(kd_tensor *out, kd_random_dist_args *r, const kd_tensor *param, bool *bad) {
  *bad = false;
  r->ubits = kd_dist_ubits(out->dtype);
  r->offset = kd_random_next_offset(&r->seed);
  const int64_t n = kd_tensor_numel(out);
  if (n == 0) return KD_OK;
  if (kd_tensor_device(out).type != KD_DEVICE_CPU) {
    kd_dev_op d;
    memset(&d, 0, sizeof d);
    d.kind = KD_DEV_OP_RANDOM_DIST;
    d.code = r->code;
    d.dtype = out->dtype;
    d.data = kd_tensor_data(out);
    d.numel = n;
    d.i[0] = (int64_t)r->seed;
    d.i[1] = (int64_t)r->offset;
    d.i[2] = param ? (int64_t)(intptr_t)kd_tensor_data(param) : 0;
    d.i[3] = r->low;
    d.i[4] = (int64_t)r->range;
    d.i[5] = r->ubits;
    d.d[0] = r->a;
    d.d[1] = r->b;
    KD_TRY(kd_cpu_device_run(kd_tensor_device(out), &d));
    *bad = d.result[0] != 0;
    return KD_OK;
  }
  kd_dist_ctx c;
  memset(&c, 0, sizeof c);
  c.r = *r;
  c.base = kd_tensor_data(out);
  c.dtype = out->dtype;
  c.param = param ? (const double *)kd_tensor_data(param) : NULL;
  atomic_init(&c.bad, 0);
  kd_iter_operand o = kd_iter_operand_of(out);
  kd_iter it;
  KD_TRY(kd_iter_build(&it, &o, 1, 1, 0));
  kd_iter_for_each(&it, kd_dist_loop, &c);
  *bad = atomic_load(&c.bad) != 0;
  return KD_OK;
}

kd_status kd_random_f64_copy(kd_tensor *t, kd_tensor **out) {
  kd_tensor *c = NULL;
  KD_TRY(kd_tensor_empty(t->sizes, t->ndim, KD_DTYPE_F64, kd_tensor_device(t), &c));
  kd_value a[2] = {kd_value_tensor(c), kd_value_tensor(t)};
  kd_value o[KD_OP_MAX_OUTS];
  kd_status st = kd_call(KD_OP_copy_, a, o);
  if (st != KD_OK) {
    kd_tensor_release(c);
    return st;
  }
  for (int i = 0; i < KD_OP_MAX_OUTS; i++) kd_value_release(&o[i]);
  *out = c;
  return KD_OK;
}
