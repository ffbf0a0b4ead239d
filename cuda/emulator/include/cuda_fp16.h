/* cuda_fp16.h (emulated GPU) - __half for the host compiler: IEEE binary16 storage with
 * round-to-nearest-even conversions from float and exact conversions to float, as CUDA's. */
#ifndef KD_EMU_CUDA_FP16_H
#define KD_EMU_CUDA_FP16_H

#include <stdint.h>
#include <string.h>

namespace kd_emu {
static inline uint16_t float_to_half_bits(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu)); /* NaN stays NaN */
  if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);                       /* overflow -> inf */
  if (ax < 0x38800000u) {                                                          /* subnormal or 0 */
    if (ax < 0x33000000u) return (uint16_t)sign;                                   /* < half of min subnormal */
    const uint32_t e = ax >> 23, m = (ax & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126u - e; /* 14..24 */
    uint32_t r = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (r & 1u))) r++;
    return (uint16_t)(sign | r);
  }
  uint32_t r = ((ax >> 13) - (112u << 10));
  const uint32_t rem = ax & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) r++;
  return (uint16_t)(sign | r);
}
static inline float half_bits_to_float(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  uint32_t x;
  if (e == 0) {
    if (m == 0) x = sign;
    else { /* subnormal: normalise */
      int k = 0;
      uint32_t mm = m;
      while (!(mm & 0x400u)) { mm <<= 1; k++; }
      x = sign | ((uint32_t)(113 - k) << 23) | ((mm & 0x3ffu) << 13);
    }
  } else if (e == 31) x = sign | 0x7f800000u | (m << 13);
  else x = sign | ((e + 112u) << 23) | (m << 13);
  float f;
  memcpy(&f, &x, 4);
  return f;
}
}  // namespace kd_emu

struct __half {
  uint16_t __x;
  __half() = default;
  __half(float f) : __x(kd_emu::float_to_half_bits(f)) {}
  __half(double d) : __x(kd_emu::float_to_half_bits((float)d)) {}
  operator float() const { return kd_emu::half_bits_to_float(__x); }
};
typedef struct __half half;

static inline __half __float2half_rn(float f) { return __half(f); }
static inline __half __float2half(float f) { return __half(f); }
static inline float __half2float(__half h) { return (float)h; }
static inline unsigned short __half_as_ushort(__half h) { return h.__x; }
static inline __half __ushort_as_half(unsigned short u) {
  __half h;
  h.__x = u;
  return h;
}

#endif
