/* cuda_bf16.h (emulated GPU) - __nv_bfloat16 for the host compiler: the top half of a float,
 * rounded to nearest even (NaN kept quiet), as CUDA's conversions. */
#ifndef KD_EMU_CUDA_BF16_H
#define KD_EMU_CUDA_BF16_H

#include <stdint.h>
#include <string.h>

namespace kd_emu {
static inline uint16_t float_to_bf16_bits(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)(x >> 16);
}
static inline float bf16_bits_to_float(uint16_t b) {
  const uint32_t x = (uint32_t)b << 16;
  float f;
  memcpy(&f, &x, 4);
  return f;
}
}  // namespace kd_emu

struct __nv_bfloat16 {
  uint16_t __x;
  __nv_bfloat16() = default;
  __nv_bfloat16(float f) : __x(kd_emu::float_to_bf16_bits(f)) {}
  __nv_bfloat16(double d) : __x(kd_emu::float_to_bf16_bits((float)d)) {}
  operator float() const { return kd_emu::bf16_bits_to_float(__x); }
};
typedef struct __nv_bfloat16 nv_bfloat16;

static inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16(f); }
static inline __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }
static inline float __bfloat162float(__nv_bfloat16 b) { return (float)b; }
static inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 b) { return b.__x; }
static inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short u) {
  __nv_bfloat16 b;
  b.__x = u;
  return b;
}

#endif
