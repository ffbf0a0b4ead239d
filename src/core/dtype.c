/* dtype.c - the dtype table, dtype names, scalar conversion and PyTorch's promotion rules. */
#include "core/dtype.h"

#include <math.h>
#include <string.h>

const kd_dtype_info kd_dtype_table[KD_DTYPE_COUNT] = {
    [KD_DTYPE_F32] = {.name = "float32", .size = 4, .kind = KD_KIND_FLOAT, .is_signed = true},
    [KD_DTYPE_F64] = {.name = "float64", .size = 8, .kind = KD_KIND_FLOAT, .is_signed = true},
    [KD_DTYPE_F16] = {.name = "float16", .size = 2, .kind = KD_KIND_FLOAT, .is_signed = true},
    [KD_DTYPE_BF16] = {.name = "bfloat16", .size = 2, .kind = KD_KIND_FLOAT, .is_signed = true},
    [KD_DTYPE_I8] = {.name = "int8", .size = 1, .kind = KD_KIND_INT, .is_signed = true},
    [KD_DTYPE_U8] = {.name = "uint8", .size = 1, .kind = KD_KIND_INT, .is_signed = false},
    [KD_DTYPE_I16] = {.name = "int16", .size = 2, .kind = KD_KIND_INT, .is_signed = true},
    [KD_DTYPE_I32] = {.name = "int32", .size = 4, .kind = KD_KIND_INT, .is_signed = true},
    [KD_DTYPE_I64] = {.name = "int64", .size = 8, .kind = KD_KIND_INT, .is_signed = true},
    [KD_DTYPE_BOOL] = {.name = "bool", .size = 1, .kind = KD_KIND_BOOL, .is_signed = false},
};

/* PyTorch's aliases (torch.float is torch.float32, ...): the one table of them, for C and JS. */
static const struct { const char *alias; kd_dtype dtype; } kd_dtype_aliases[] = {
    {"float", KD_DTYPE_F32},  {"double", KD_DTYPE_F64}, {"half", KD_DTYPE_F16},
    {"short", KD_DTYPE_I16},  {"int", KD_DTYPE_I32},    {"long", KD_DTYPE_I64},
};

bool kd_dtype_parse(const char *name, kd_dtype *out) {
  if (strncmp(name, "torch.", 6) == 0) name += 6;
  for (int i = 0; i < KD_DTYPE_COUNT; i++)
    if (strcmp(name, kd_dtype_table[i].name) == 0) { *out = (kd_dtype)i; return true; }
  for (size_t i = 0; i < sizeof kd_dtype_aliases / sizeof kd_dtype_aliases[0]; i++)
    if (strcmp(name, kd_dtype_aliases[i].alias) == 0) { *out = kd_dtype_aliases[i].dtype; return true; }
  return false;
}

kd_dtype kd_scalar_default_dtype(kd_scalar s) {
  return s.kind == KD_KIND_FLOAT ? KD_DTYPE_DEFAULT : s.kind == KD_KIND_INT ? KD_DTYPE_I64 : KD_DTYPE_BOOL;
}

/* Float -> integer conversion that never invokes undefined behaviour: NaN -> 0,
 * out-of-range values saturate (PyTorch leaves these unspecified). */
static int64_t kd_double_to_i64(double d) {
  if (isnan(d)) return 0;
  if (d >= 9223372036854775807.0) return INT64_MAX;
  if (d <= -9223372036854775808.0) return INT64_MIN;
  return (int64_t)d;
}

void kd_scalar_store(kd_scalar s, kd_dtype t, void *dst) {
  double d = kd_scalar_to_double(s);
  int64_t i = s.kind == KD_KIND_FLOAT ? kd_double_to_i64(s.v.f) : kd_scalar_to_int(s);
  switch (t) {
    case KD_DTYPE_F32: { float v = (float)d; memcpy(dst, &v, 4); break; }
    case KD_DTYPE_F64: memcpy(dst, &d, 8); break;
    case KD_DTYPE_F16: { uint16_t v = kd_f32_to_f16((float)d); memcpy(dst, &v, 2); break; }
    case KD_DTYPE_BF16: { uint16_t v = kd_f32_to_bf16((float)d); memcpy(dst, &v, 2); break; }
    case KD_DTYPE_I8: { int8_t v = (int8_t)i; memcpy(dst, &v, 1); break; }
    case KD_DTYPE_U8: { uint8_t v = (uint8_t)i; memcpy(dst, &v, 1); break; }
    case KD_DTYPE_I16: { int16_t v = (int16_t)i; memcpy(dst, &v, 2); break; }
    case KD_DTYPE_I32: { int32_t v = (int32_t)i; memcpy(dst, &v, 4); break; }
    case KD_DTYPE_I64: memcpy(dst, &i, 8); break;
    case KD_DTYPE_BOOL: { uint8_t v = s.kind == KD_KIND_FLOAT ? d != 0.0 : i != 0; memcpy(dst, &v, 1); break; }
    default: break;
  }
}

kd_scalar kd_scalar_load(kd_dtype t, const void *src) {
  switch (t) {
    case KD_DTYPE_F32: { float v; memcpy(&v, src, 4); return kd_scalar_f(v); }
    case KD_DTYPE_F64: { double v; memcpy(&v, src, 8); return kd_scalar_f(v); }
    case KD_DTYPE_F16: { uint16_t v; memcpy(&v, src, 2); return kd_scalar_f(kd_f16_to_f32(v)); }
    case KD_DTYPE_BF16: { uint16_t v; memcpy(&v, src, 2); return kd_scalar_f(kd_bf16_to_f32(v)); }
    case KD_DTYPE_I8: { int8_t v; memcpy(&v, src, 1); return kd_scalar_i(v); }
    case KD_DTYPE_U8: { uint8_t v; memcpy(&v, src, 1); return kd_scalar_i(v); }
    case KD_DTYPE_I16: { int16_t v; memcpy(&v, src, 2); return kd_scalar_i(v); }
    case KD_DTYPE_I32: { int32_t v; memcpy(&v, src, 4); return kd_scalar_i(v); }
    case KD_DTYPE_I64: { int64_t v; memcpy(&v, src, 8); return kd_scalar_i(v); }
    case KD_DTYPE_BOOL: { uint8_t v; memcpy(&v, src, 1); return kd_scalar_b(v != 0); }
    default: return kd_scalar_i(0);
  }
}

kd_dtype kd_promote_types(kd_dtype a, kd_dtype b) {
  if (a == b) return a;
  const kd_dtype_info *ia = &kd_dtype_table[a], *ib = &kd_dtype_table[b];
  if (ia->kind != ib->kind) return ia->kind > ib->kind ? a : b;
  if (ia->kind == KD_KIND_FLOAT) {
    if (ia->size == 2 && ib->size == 2) return KD_DTYPE_F32; /* float16 + bfloat16 */
    return ia->size > ib->size ? a : b;
  }
  /* integers */
  if (ia->is_signed == ib->is_signed) return ia->size > ib->size ? a : b;
  kd_dtype s = ia->is_signed ? a : b, u = ia->is_signed ? b : a; /* only uint8 is unsigned */
  (void)u;
  return kd_dtype_table[s].size > 1 ? s : KD_DTYPE_I16;
}

void kd_result_type_init(kd_result_type_state *st) { memset(st, 0, sizeof *st); }

static void kd_rt_merge(int *has, kd_dtype *acc, kd_dtype t) {
  *acc = *has ? kd_promote_types(*acc, t) : t;
  *has = 1;
}

void kd_result_type_add_tensor(kd_result_type_state *st, kd_dtype dtype, int ndim) {
  if (ndim > 0) kd_rt_merge(&st->has_dim, &st->dim_result, dtype);
  else kd_rt_merge(&st->has_zero_dim, &st->zero_dim_result, dtype);
}

void kd_result_type_add_scalar(kd_result_type_state *st, kd_scalar s) {
  kd_rt_merge(&st->has_wrapped, &st->wrapped_result, kd_scalar_default_dtype(s));
}

/* torch's combine_categories: the higher-priority level wins unless the lower one is of a
 * higher category (float over int/bool, or anything over bool). has_* = 0 is "Undefined". */
static void kd_rt_combine(int has_hi, kd_dtype hi, int has_lo, kd_dtype lo, int *has_out, kd_dtype *out) {
  if (!has_hi) { *has_out = has_lo; *out = lo; return; }
  *has_out = 1;
  if (!has_lo || kd_dtype_is_float(hi)) { *out = hi; return; }
  if (hi == KD_DTYPE_BOOL || kd_dtype_is_float(lo)) { *out = kd_promote_types(hi, lo); return; }
  *out = hi;
}

kd_dtype kd_result_type_finish(const kd_result_type_state *st) {
  int has_lo;
  kd_dtype lo, out;
  int has_out;
  kd_rt_combine(st->has_zero_dim, st->zero_dim_result, st->has_wrapped, st->wrapped_result, &has_lo, &lo);
  kd_rt_combine(st->has_dim, st->dim_result, has_lo, lo, &has_out, &out);
  return has_out ? out : KD_DTYPE_DEFAULT;
}

bool kd_can_cast(kd_dtype from, kd_dtype to) {
  if (kd_dtype_is_float(from) && !kd_dtype_is_float(to)) return false;
  if (from != KD_DTYPE_BOOL && to == KD_DTYPE_BOOL) return false;
  return true;
}
