/* special_math.h - the special functions of the special family (src/cpu/special.c and
 * cuda/ops_special.cu share them): gamma family (digamma, trigamma, polygamma, zeta, the
 * regularized incomplete gamma functions), modified Bessel functions i0/i0e/i1/i1e, Bessel
 * j0/j1, the normal distribution (ndtr, ndtri, log_ndtr), erfcx, and the small ones (entr, sinc,
 * logit, xlogy, xlog1py, logaddexp, logaddexp2, nextafter of 16-bit floats, gcd).
 * Plain C, also compiled as CUDA device code: special_math.inc holds the functions once, written
 * for a type T, and this header includes it twice (T = float, names kd_sm_<fn>_f; T = double,
 * names kd_sm_<fn>_d), the C way of a template. float32 computes in float and float64 in double,
 * as PyTorch's CPU kernels do (zeta, and so polygamma n >= 2, in double for both: PyTorch's CPU
 * accumulate type of float is double); float16/bfloat16 come in as float.
 *
 * Note [Special function algorithms]
 * The algorithms and coefficients are the ones PyTorch 1.13 uses (aten/src/ATen/native/Math.h):
 * Cephes (Stephen L. Moshier) for digamma, zeta, i0/i0e/i1/i1e (Chebyshev expansions), ndtri and
 * j0/j1; SciPy's igam/igamc (DLMF 8.11.4, 8.7.3, 8.9.2 and the uniform asymptotic expansion
 * 8.12.3/8.12.4, with Boost's Lanczos approximation) for the incomplete gamma functions.
 * erfcx is exp(x^2) erfc(x) with exp(x^2) computed from the exact split x^2 = hi + lo (fma) while
 * erfc(x) is a normal number (x < 26 in double, x < 9 in float), and Laplace's continued fraction
 * beyond (12 terms: exact to the last bit of a double from x = 9 on); x < 0 uses erfcx(x) = 2 exp(x^2) - erfcx(-x).
 * Cephes' copyright (3-clause BSD, Steven Moshier) and SciPy's (BSD) cover the coefficients. */
#ifndef KD_SPECIAL_MATH_H
#define KD_SPECIAL_MATH_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define KD_SM_QUAL static __device__ __forceinline__
#define KD_SM_LGAMMA(x) lgamma(x)
#define KD_SM_LGAMMAF(x) lgammaf(x)
#else
#define KD_SM_QUAL static inline
/* lgamma() writes the global signgam: the reentrant forms, as the kernels run on threads */
double lgamma_r(double, int *);
float lgammaf_r(float, int *);
static inline double kd_sm_lgamma_r(double x) { int s; return lgamma_r(x, &s); }
static inline float kd_sm_lgammaf_r(float x) { int s; return lgammaf_r(x, &s); }
#define KD_SM_LGAMMA(x) kd_sm_lgamma_r(x)
#define KD_SM_LGAMMAF(x) kd_sm_lgammaf_r(x)
#endif

#define KD_SM_PI 3.14159265358979323846

/* Hurwitz zeta(x, q) (Cephes zeta), in double for both compute types. */
KD_SM_QUAL double kd_sm_zeta(double x, double q) {
  static const double A[] = {12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
                             7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
                             -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18};
  const double MACHEP = 1.11022302462515654042e-16;
  if (x == 1.0) return INFINITY;
  if (x < 1.0) return NAN;
  if (q <= 0.0) {
    if (q == floor(q)) return INFINITY;
    if (x != floor(x)) return NAN; /* q^-x not real */
  }
  double s = pow(q, -x), a = q, b = 0.0;
  int i = 0;
  while (i < 9 || a <= 9.0) {
    i += 1;
    a += 1.0;
    b = pow(a, -x);
    s += b;
    if (-MACHEP * s < b && b < MACHEP * s) return s;
  }
  const double w = a;
  s += b * w / (x - 1.0);
  s -= 0.5 * b;
  double k = 0.0;
  a = 1.0;
  for (i = 0; i < 12; i++) {
    a *= x + k;
    b /= w;
    double t = a * b / A[i];
    s += t;
    if (fabs(t / s) < MACHEP) return s;
    k += 1.0;
    a *= x + k;
    b /= w;
    k += 1.0;
  }
  return s;
}

/* gcd of two integers as int64 (PyTorch's calc_gcd: of the absolute values). */
KD_SM_QUAL int64_t kd_sm_gcd(int64_t a, int64_t b) {
  uint64_t x = a < 0 ? 0 - (uint64_t)a : (uint64_t)a, y = b < 0 ? 0 - (uint64_t)b : (uint64_t)b;
  while (x != 0) {
    uint64_t c = x;
    x = y % x;
    y = c;
  }
  return (int64_t)y;
}

/* The bits of a float16 value held exactly in a float, and back. */
KD_SM_QUAL uint32_t kd_sm_f16_bits(float v) {
  uint32_t sign = signbit(v) ? 0x8000u : 0u;
  float a = fabsf(v);
  if (a != a) return 0x7e00u;
  if (a == INFINITY) return sign | 0x7c00u;
  if (a < 6.103515625e-05f) return sign | (uint32_t)(a * 16777216.0f); /* subnormal: a / 2^-24 */
  int e;
  float m = frexpf(a, &e); /* a = m 2^e, m in [0.5, 1) */
  return sign | ((uint32_t)(e - 1 + 15) << 10) | (uint32_t)((m * 2.0f - 1.0f) * 1024.0f);
}
KD_SM_QUAL float kd_sm_f16_value(uint32_t h) {
  float s = (h & 0x8000u) ? -1.0f : 1.0f;
  uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) return s * (float)m * 5.9604644775390625e-08f;
  if (e == 31) return m ? NAN : s * INFINITY;
  return s * ldexpf(1.0f + (float)m / 1024.0f, (int)e - 15);
}
/* nextafter in float16 (bf16 == 0) or bfloat16 (bf16 != 0) of values held exactly in floats:
 * the next representable value of the 16-bit type after a toward b. */
KD_SM_QUAL float kd_sm_nextafter16(float a, float b, int bf16) {
  if (a != a || b != b) return NAN;
  if (a == b) return b;
  uint32_t bits;
  if (bf16) {
    union { float f; uint32_t u; } c;
    c.f = a;
    bits = c.u >> 16;
  } else {
    bits = kd_sm_f16_bits(a);
  }
  if (a == 0.0f) bits = (signbit(b) ? 0x8000u : 0u) | 1u;
  else if ((a < b) == (a > 0.0f)) bits += 1;
  else bits -= 1;
  if (bf16) {
    union { float f; uint32_t u; } c;
    c.u = bits << 16;
    return c.f;
  }
  return kd_sm_f16_value(bits);
}

#define KD_SM_T float
#define KD_SMF(name) kd_sm_##name##_f
#define KD_SMM(fn) fn##f
#define KD_SM_LG(x) KD_SM_LGAMMAF(x)
#define KD_SM_MACHEP 5.9604644775390625e-8
#define KD_SM_MAXLOG 88.72283905206835
#define KD_SM_BIG 16777216.0
#define KD_SM_BIGINV 5.9604644775390625e-8
#define KD_SM_ERFCX_DIRECT 9.0f
#include "special_math.inc"

#define KD_SM_T double
#define KD_SMF(name) kd_sm_##name##_d
#define KD_SMM(fn) fn
#define KD_SM_LG(x) KD_SM_LGAMMA(x)
#define KD_SM_MACHEP 1.11022302462515654042e-16
#define KD_SM_MAXLOG 7.09782712893383996843e2
#define KD_SM_BIG 4.503599627370496e15
#define KD_SM_BIGINV 2.22044604925031308085e-16
#define KD_SM_ERFCX_DIRECT 26.0
#include "special_math.inc"

#endif
