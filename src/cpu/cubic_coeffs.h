/* cubic_coeffs.h - PyTorch's cubic convolution weights (A = -0.75), once, for interpolate's bicubic
 * taps (src/cpu/interpolate.c) and gridSample's (src/cpu/grid_sample_math.h, also compiled as
 * device code by cuda/ops_grid_sample.cu): get_cubic_upsample_coefficients (UpSample.h), the
 * weights of positions i-1 .. i+2 at fraction t, and get_cubic_coefficients_grad (GridSampler.h),
 * their derivatives in t, in the order of PyTorch's arithmetic. Written for a type T by a macro,
 * names kd_cubic_coeffs_<sfx> and kd_cubic_coeffs_grad_<sfx> (sfx f32, f64). */
#ifndef KD_CUBIC_COEFFS_H
#define KD_CUBIC_COEFFS_H

#ifdef __CUDACC__
#define KD_CUBIC_QUAL static __device__ __forceinline__
#else
#define KD_CUBIC_QUAL static inline
#endif

#define KD_CUBIC_COEFFS(T, SFX, W)                                                                      \
  KD_CUBIC_QUAL void kd_cubic_coeffs_##SFX(T t, W *w) {                                                 \
    const T A = (T)-0.75;                                                                              \
    T x1 = t, x2 = (T)1 - t, y;                                                                        \
    y = x1 + (T)1;                                                                                     \
    w[0] = ((A * y - (T)5 * A) * y + (T)8 * A) * y - (T)4 * A;                                         \
    w[1] = ((A + (T)2) * x1 - (A + (T)3)) * x1 * x1 + (T)1;                                            \
    w[2] = ((A + (T)2) * x2 - (A + (T)3)) * x2 * x2 + (T)1;                                            \
    y = x2 + (T)1;                                                                                     \
    w[3] = ((A * y - (T)5 * A) * y + (T)8 * A) * y - (T)4 * A;                                         \
  }                                                                                                    \
  KD_CUBIC_QUAL void kd_cubic_coeffs_grad_##SFX(T t, T *dw) {                                           \
    const T A = (T)-0.75;                                                                              \
    T x = (T)-1 - t;                                                                                   \
    dw[0] = ((T)-3 * A * x - (T)10 * A) * x - (T)8 * A;                                                \
    x = -t;                                                                                            \
    dw[1] = ((T)-3 * (A + (T)2) * x - (T)2 * (A + (T)3)) * x;                                          \
    x = (T)1 - t;                                                                                      \
    dw[2] = ((T)3 * (A + (T)2) * x - (T)2 * (A + (T)3)) * x;                                           \
    x = (T)2 - t;                                                                                      \
    dw[3] = ((T)3 * A * x - (T)10 * A) * x + (T)8 * A;                                                 \
  }

#endif
