/* dtype.h - the dtype table (one row per dtype, indexed by kd_dtype), float16/bfloat16
 * conversion, host scalars, and PyTorch's type promotion (torch.result_type).
 * Header-only helpers are static inline so the CUDA backend (nvcc, C++) can use them too. */
#ifndef KD_DTYPE_H
#define KD_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kd_dtype {
  KD_DTYPE_F32 = 0,
  KD_DTYPE_F64,
  KD_DTYPE_F16,
  KD_DTYPE_BF16,
  KD_DTYPE_I8,
  KD_DTYPE_U8,
  KD_DTYPE_I16,
  KD_DTYPE_I32,
  KD_DTYPE_I64,
  KD_DTYPE_BOOL,
  KD_DTYPE_COUNT
} kd_dtype;

#define KD_DTYPE_DEFAULT KD_DTYPE_F32

typedef enum kd_dtype_kind { KD_KIND_BOOL = 0, KD_KIND_INT = 1, KD_KIND_FLOAT = 2 } kd_dtype_kind;

typedef struct kd_dtype_info {
  const char *name;    /* "float32": the name JS uses                 */
  size_t size;         /* bytes per element                           */
  kd_dtype_kind kind;  /* bool < int < float, for promotion           */
  bool is_signed;
} kd_dtype_info;

extern const kd_dtype_info kd_dtype_table[KD_DTYPE_COUNT];

static inline size_t kd_dtype_size(kd_dtype t) { return kd_dtype_table[t].size; }
static inline bool kd_dtype_is_float(kd_dtype t) { return kd_dtype_table[t].kind == KD_KIND_FLOAT; }
static inline bool kd_dtype_is_int(kd_dtype t) { return kd_dtype_table[t].kind == KD_KIND_INT; }
static inline const char *kd_dtype_name(kd_dtype t) {
  return (unsigned)t < KD_DTYPE_COUNT ? kd_dtype_table[t].name : "invalid";
}
/* PyTorch's scalar type name ("Float", "Long", ...), for messages that follow PyTorch's. */
static inline const char *kd_dtype_torch_name(kd_dtype t) {
  static const char *const names[KD_DTYPE_COUNT] = {
      [KD_DTYPE_F32] = "Float", [KD_DTYPE_F64] = "Double", [KD_DTYPE_F16] = "Half", [KD_DTYPE_BF16] = "BFloat16",
      [KD_DTYPE_I8] = "Char",   [KD_DTYPE_U8] = "Byte",    [KD_DTYPE_I16] = "Short", [KD_DTYPE_I32] = "Int",
      [KD_DTYPE_I64] = "Long",  [KD_DTYPE_BOOL] = "Bool",
  };
  return (unsigned)t < KD_DTYPE_COUNT ? names[t] : "?";
}
/* Parses "float32", "float", "half", "int64", "long", ... (an optional "torch." prefix too); returns
 * false if unknown. The one parser of dtype strings: JS reads every name through it
 * (binding.parseDtype, lib/dtypes.js). */
bool kd_dtype_parse(const char *name, kd_dtype *out);

/* ---- float16 / bfloat16 <-> float32 (round to nearest even; NaN stays NaN) ---- */
static inline float kd_f32_from_bits(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint32_t kd_bits_from_f32(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

/* With F16C (the avx2 and avx512 copies of the dispatched kernel files, Note [CPU capability
 * dispatch] in cpu/cpu_capability.h; the baseline build has no F16C) the conversions are single
 * instructions, which the compiler also vectorises in conversion loops. They round and treat
 * infinities and subnormals exactly as the portable code below (checked over every float32 and
 * float16 bit pattern when this was written); a signalling NaN half widens to a quiet NaN (the
 * portable code keeps the payload as it is), as in PyTorch's vectorised conversions. */
#if defined(__F16C__) && !defined(__CUDACC__)
#include <immintrin.h>
static inline float kd_f16_to_f32(uint16_t h) { return _cvtsh_ss(h); }
static inline uint16_t kd_f32_to_f16(float f) { return (uint16_t)_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT); }
#define KD_F16_PORTABLE(name) name##_portable
#else
#define KD_F16_PORTABLE(name) name
#endif

static inline float KD_F16_PORTABLE(kd_f16_to_f32)(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  if (exp == 0x1f) return kd_f32_from_bits(sign | 0x7f800000u | (man << 13));
  if (exp == 0) {
    if (man == 0) return kd_f32_from_bits(sign);
    float f = (float)man * 5.9604644775390625e-8f; /* man * 2^-24 */
    return sign ? -f : f;
  }
  return kd_f32_from_bits(sign | ((exp + 112u) << 23) | (man << 13));
}

static inline uint16_t KD_F16_PORTABLE(kd_f32_to_f16)(float f) {
  uint32_t x = kd_bits_from_f32(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) return (uint16_t)(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u | ((ax >> 13) & 0x3ffu) : 0));
  if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds to >= 65520: inf */
  if (ax < 0x38800000u) {                                    /* subnormal half or zero */
    if (ax < 0x33000000u) return (uint16_t)sign;             /* < 2^-25: rounds to 0 */
    uint32_t e = ax >> 23, m = (ax & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126u - e; /* 14 + (112 - e) + ... : bring to 2^-24 units */
    uint32_t r = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (r & 1u))) r++;
    return (uint16_t)(sign | r);
  }
  uint32_t r = ax - 0x38000000u; /* rebias 127 -> 15 */
  uint32_t lsb = (r >> 13) & 1u;
  r += 0xfffu + lsb;
  return (uint16_t)(sign | (r >> 13));
}

static inline float kd_bf16_to_f32(uint16_t b) { return kd_f32_from_bits((uint32_t)b << 16); }
static inline uint16_t kd_f32_to_bf16(float f) {
  uint32_t x = kd_bits_from_f32(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u); /* quiet NaN */
  x += 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)(x >> 16);
}

/* ---- scalars: the numbers JS passes (double, int64 or bool) ---- */
typedef struct kd_scalar {
  kd_dtype_kind kind; /* KD_KIND_FLOAT: f, KD_KIND_INT: i, KD_KIND_BOOL: b */
  union { double f; int64_t i; bool b; } v;
} kd_scalar;

static inline kd_scalar kd_scalar_f(double f) { kd_scalar s; s.kind = KD_KIND_FLOAT; s.v.f = f; return s; }
static inline kd_scalar kd_scalar_i(int64_t i) { kd_scalar s; s.kind = KD_KIND_INT; s.v.i = i; return s; }
static inline kd_scalar kd_scalar_b(bool b) { kd_scalar s; s.kind = KD_KIND_BOOL; s.v.b = b; return s; }
static inline double kd_scalar_to_double(kd_scalar s) {
  return s.kind == KD_KIND_FLOAT ? s.v.f : s.kind == KD_KIND_INT ? (double)s.v.i : (double)s.v.b;
}
static inline int64_t kd_scalar_to_int(kd_scalar s) {
  return s.kind == KD_KIND_FLOAT ? (int64_t)s.v.f : s.kind == KD_KIND_INT ? s.v.i : (int64_t)s.v.b;
}
/* The dtype a lone scalar gets as a tensor: float32, int64 or bool. */
kd_dtype kd_scalar_default_dtype(kd_scalar s);
/* Writes `s` converted to dtype `t` into `dst` (kd_dtype_size(t) bytes). */
void kd_scalar_store(kd_scalar s, kd_dtype t, void *dst);
/* Reads one element of dtype `t` as a scalar (float kinds as double, ints as int64). */
kd_scalar kd_scalar_load(kd_dtype t, const void *src);

/* ---- promotion (torch.promote_types and torch.result_type) ---- */
kd_dtype kd_promote_types(kd_dtype a, kd_dtype b);

/* Accumulates the operands of one op into a result type, with PyTorch's three priority
 * levels: tensors with dims > 0-dim tensors > wrapped numbers (JS numbers). */
typedef struct kd_result_type_state {
  int has_dim, has_zero_dim, has_wrapped;
  kd_dtype dim_result, zero_dim_result, wrapped_result;
} kd_result_type_state;
void kd_result_type_init(kd_result_type_state *st);
void kd_result_type_add_tensor(kd_result_type_state *st, kd_dtype dtype, int ndim);
void kd_result_type_add_scalar(kd_result_type_state *st, kd_scalar s);
kd_dtype kd_result_type_finish(const kd_result_type_state *st);
/* Whether a value of dtype `from` may be written into `to` by an in-place op
 * (torch.can_cast: no float->int, no int->bool narrowing of kind). */
bool kd_can_cast(kd_dtype from, kd_dtype to);

#ifdef __cplusplus
}
#endif
#endif
