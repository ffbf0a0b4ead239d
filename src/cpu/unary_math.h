/* unary_math.h - libm functions as the unary kernels call them: kd_vm_<fn><MS>(x), e.g.
 * kd_vm_expf, kd_vm_exp. On glibc/x86-64 they are the libm symbols redeclared `const` with
 * `simd`, so gcc vectorizes contiguous loops into calls of glibc's libmvec (_ZGVeN16v_expf on
 * AVX-512, _ZGVdN8v_expf on AVX2, ...; libm.so pulls libmvec in AS_NEEDED) without
 * -ffast-math (glibc declares the plain names simd only under __FAST_MATH__). The build uses
 * -fno-math-errno (binding.gyp), so sqrt inlines to vsqrtps as well.
 * libmvec is accurate to 4 ulp. Elsewhere they are the plain libm functions.
 * Also kd_erfinv, PyTorch's calc_erfinv (rational approximation, two Newton steps). */
#ifndef KD_UNARY_MATH_H
#define KD_UNARY_MATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#define KD_VM_FUNCS(X)                                                                        \
  X(exp) X(exp2) X(expm1) X(log) X(log2) X(log10) X(log1p) X(sin) X(cos) X(tan) X(asin)      \
  X(acos) X(atan) X(sinh) X(cosh) X(tanh) X(asinh) X(acosh) X(atanh) X(erf) X(erfc)

#if defined(__GLIBC__) && defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define KD_VM_DECL(fn)                                                                        \
  double kd_vm_##fn(double) __asm__(#fn) __attribute__((simd("notinbranch"), const, nothrow)); \
  float kd_vm_##fn##f(float) __asm__(#fn "f") __attribute__((simd("notinbranch"), const, nothrow));
#else
#define KD_VM_DECL(fn)                                                                        \
  static inline double kd_vm_##fn(double x) { return fn(x); }                                 \
  static inline float kd_vm_##fn##f(float x) { return fn##f(x); }
#endif
KD_VM_FUNCS(KD_VM_DECL)
#undef KD_VM_DECL

/* c ? a : b as a bit blend. gcc does not if-convert a select that consumes the result of a
 * simd call (the loop stays scalar, "control flow in loop"); a blend of the bits has no
 * control flow, so elu/selu/softplus vectorize. Both sides are computed: keep them finite-safe. */
static inline float kd_vm_self(int c, float a, float b) {
  uint32_t ua, ub, m = -(uint32_t)(c != 0);
  memcpy(&ua, &a, 4);
  memcpy(&ub, &b, 4);
  ua = (ua & m) | (ub & ~m);
  memcpy(&a, &ua, 4);
  return a;
}
static inline double kd_vm_sel(int c, double a, double b) {
  uint64_t ua, ub, m = -(uint64_t)(c != 0);
  memcpy(&ua, &a, 8);
  memcpy(&ub, &b, 8);
  ua = (ua & m) | (ub & ~m);
  memcpy(&a, &ua, 8);
  return a;
}

static inline double kd_erfinv(double y) {
  static const double a[4] = {0.886226899, -1.645349621, 0.914624893, -0.140543331};
  static const double b[4] = {-2.118377725, 1.442710462, -0.329097515, 0.012229801};
  static const double c[4] = {-1.970840454, -1.624906493, 3.429567803, 1.641345311};
  static const double d[2] = {3.543889200, 1.637067800};
  const double ay = fabs(y);
  if (ay > 1.0) return NAN;
  if (ay == 1.0) return copysign(INFINITY, y);
  double x;
  if (ay <= 0.7) {
    const double z = y * y;
    const double num = ((a[3] * z + a[2]) * z + a[1]) * z + a[0];
    const double dem = (((b[3] * z + b[2]) * z + b[1]) * z + b[0]) * z + 1.0;
    x = y * num / dem;
  } else {
    const double z = sqrt(-log((1.0 - ay) / 2.0));
    const double num = ((c[3] * z + c[2]) * z + c[1]) * z + c[0];
    const double dem = (d[1] * z + d[0]) * z + 1.0;
    x = copysign(num, y) / dem;
  }
  x = x - (erf(x) - y) / (1.1283791670955126 * exp(-x * x));
  x = x - (erf(x) - y) / (1.1283791670955126 * exp(-x * x));
  return x;
}

#endif
