/* grid_sample_math.h - the coordinate arithmetic of gridSample, once, for the CPU loops
 * (src/cpu/grid_sample.c) and the device kernels (cuda/ops_grid_sample.cu, which compiles this as
 * device code, as rnn_cell_math.h is shared): ATen's GridSampler.h (grid_sampler_unnormalize_set_grad,
 * reflect_coordinates_set_grad, clip_coordinates_set_grad, safe_downgrade_to_int_range,
 * in the compute dtype; the cubic weights are cpu/cubic_coeffs.h), and the
 * taps of one output position: which input elements it reads and with which weights (and the
 * weights' derivatives along each axis, for the grid gradient). Written for a type T by a macro,
 * names kd_gs_<fn>_f32 and kd_gs_<fn>_f64. */
#ifndef KD_GRID_SAMPLE_MATH_H
#define KD_GRID_SAMPLE_MATH_H

#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "cubic_coeffs.h"

#ifdef __CUDACC__
#define KD_GS_QUAL static __device__ __forceinline__
#else
#define KD_GS_QUAL static inline
#endif

enum { KD_GS_BILINEAR = 0, KD_GS_NEAREST = 1, KD_GS_BICUBIC = 2 };
enum { KD_GS_ZEROS = 0, KD_GS_BORDER = 1, KD_GS_REFLECTION = 2 };

/* What the taps depend on: nd = 2 or 3 spatial dims, mode, padding, alignCorners, and the input's
 * spatial sizes D, H, W (D = 1 for nd = 2). */
typedef struct kd_gs_geom {
  int nd, mode, pad;
  bool align;
  int64_t in[3];
} kd_gs_geom;



/* Casting a float to int is undefined outside int's range; x86 gives INT_MIN, which the
 * reflection's parity below sees (even), so values past the range reflect as ATen's on x86. */
KD_GS_QUAL int kd_gs_flips(double f) { return f >= (double)INT_MIN && f <= (double)INT_MAX ? (int)f : INT_MIN; }

#define KD_GS_COORDS(T, SFX, FLOOR, FMOD)                                                          \
  KD_GS_QUAL T kd_gs_clip_##SFX(T in, int64_t lim) {                                                  \
    T m = in < (T)0 ? (T)0 : in; /* std::max(in, 0), std::min(lim - 1, .): NaN goes to lim - 1 */        \
    return m < (T)(lim - 1) ? m : (T)(lim - 1);                                                          \
  }                                                                                                      \
  KD_GS_QUAL T kd_gs_clip_grad_##SFX(T in, int64_t lim, T *g) {                                       \
    if (in <= (T)0) { *g = 0; return 0; }                                                                \
    T mx = (T)(lim - 1);                                                                                 \
    if (in >= mx) { *g = 0; return mx; }                                                                 \
    *g = 1;                                                                                              \
    return in;                                                                                           \
  }                                                                                                      \
  KD_GS_QUAL T kd_gs_reflect_##SFX(T in, int64_t lo2, int64_t hi2, T *g) {                            \
    if (lo2 == hi2) { *g = 0; return 0; }                                                                \
    T mn = (T)lo2 / 2, span = (T)(hi2 - lo2) / 2, mult = 1;                                              \
    in = in - mn;                                                                                        \
    if (in < (T)0) { mult = -1; in = -in; }                                                              \
    T extra = FMOD(in, span);                                                                            \
    int flips = kd_gs_flips((double)FLOOR(in / span));                                                   \
    if (flips % 2 == 0) { *g = mult; return extra + mn; }                                                \
    *g = -mult;                                                                                          \
    return span - extra + mn;                                                                            \
  }                                                                                                      \
  KD_GS_QUAL T kd_gs_safe_##SFX(T x) {                                                                \
    if (x > (T)(INT_MAX - 1) || x < (T)INT_MIN || !isfinite(x)) return (T)-100.0;                        \
    return x;                                                                                            \
  }                                                                                                      \
  /* compute_coordinates (padding applied to an unnormalized position), with its gradient */          \
  KD_GS_QUAL T kd_gs_pad_##SFX(T c, int64_t size, int pad, bool align, T *g) {                        \
    T gc = 1, gr = 1;                                                                                    \
    if (pad == KD_GS_BORDER) {                                                                           \
      c = kd_gs_clip_grad_##SFX(c, size, &gc);                                                           \
    } else if (pad == KD_GS_REFLECTION) {                                                                \
      c = align ? kd_gs_reflect_##SFX(c, 0, 2 * (size - 1), &gr) : kd_gs_reflect_##SFX(c, -1, 2 * size - 1, &gr); \
      c = kd_gs_clip_grad_##SFX(c, size, &gc);                                                           \
    }                                                                                                    \
    *g = gr * gc;                                                                                        \
    return kd_gs_safe_##SFX(c);                                                                          \
  }                                                                                                      \
  /* grid_sampler_unnormalize_set_grad */                                                              \
  KD_GS_QUAL T kd_gs_unnorm_##SFX(T c, int64_t size, bool align, T *g) {                              \
    if (align) { *g = (T)(size - 1) / 2; return ((c + 1) / 2) * (T)(size - 1); }                          \
    *g = (T)size / 2;                                                                                    \
    return ((c + 1) * (T)size - 1) / 2;                                                                  \
  }


/* The taps of one output position: element offsets in a plane (-1: outside, reads 0) and
 * weights. Bilinear/nearest: n taps of weight w[k], and dw[k][a], the derivative of w[k] along
 * axis a (x, y, z); bicubic: 16 taps k = 4 * i + jj (i along x, jj along y) of the separable
 * weights cx[i] * cy[jj] and their derivatives dcx, dcy. gm[a]: d position / d grid value. */
#define KD_GS_MAX_TAPS 16

#define KD_GS_TAPS(T, SFX, FLOOR, NEARBYINT)                                                                              \
  typedef struct {                                                                                       \
    int n;                                                                                               \
    int64_t off[KD_GS_MAX_TAPS];                                                                         \
    T w[8], dw[8][3];                                                                                    \
    T cx[4], cy[4], dcx[4], dcy[4];                                                                      \
    T gm[3];                                                                                             \
  } kd_gs_taps_##SFX;                                                                                    \
                                                                                                         \
  KD_GS_QUAL void kd_gs_taps_of_##SFX(const kd_gs_geom *j, const T *g, kd_gs_taps_##SFX *t) {             \
    const int nd = j->nd;                                                                                \
    int64_t size[3];                                                                                     \
    T c[3];                                                                                              \
    for (int a = 0; a < nd; a++) size[a] = j->in[2 - a];                                                 \
    if (j->mode == KD_GS_BICUBIC) { /* taps at floor - 1 .. floor + 2, each one padded */               \
      T f[2];                                                                                            \
      for (int a = 0; a < 2; a++) {                                                                      \
        c[a] = kd_gs_unnorm_##SFX(g[a], size[a], j->align, &t->gm[a]);                                   \
        f[a] = FLOOR(c[a]);                                                                           \
      }                                                                                                  \
      kd_cubic_coeffs_##SFX(c[0] - f[0], t->cx);                                                         \
      kd_cubic_coeffs_grad_##SFX(c[0] - f[0], t->dcx);                                                     \
      kd_cubic_coeffs_##SFX(c[1] - f[1], t->cy);                                                         \
      kd_cubic_coeffs_grad_##SFX(c[1] - f[1], t->dcy);                                                     \
      for (int i = 0; i < 4; i++)                                                                        \
        for (int jj = 0; jj < 4; jj++) {                                                                 \
          T unused;                                                                                      \
          T px = kd_gs_pad_##SFX(f[0] - (T)1 + (T)i, size[0], j->pad, j->align, &unused);                 \
          T py = kd_gs_pad_##SFX(f[1] - (T)1 + (T)jj, size[1], j->pad, j->align, &unused);                \
          int64_t ix = (int64_t)px, iy = (int64_t)py;                                                    \
          t->off[i * 4 + jj] = ix >= 0 && ix < size[0] && iy >= 0 && iy < size[1] ? iy * size[0] + ix : -1; \
        }                                                                                                \
      t->n = 16;                                                                                         \
      return;                                                                                            \
    }                                                                                                    \
    for (int a = 0; a < nd; a++) {                                                                       \
      T gu, gp;                                                                                          \
      c[a] = kd_gs_unnorm_##SFX(g[a], size[a], j->align, &gu);                                           \
      c[a] = kd_gs_pad_##SFX(c[a], size[a], j->pad, j->align, &gp);                                      \
      t->gm[a] = gu * gp;                                                                                \
    }                                                                                                    \
    if (j->mode == KD_GS_NEAREST) {                                                                      \
      bool ok = true;                                                                                    \
      int64_t off = 0;                                                                                   \
      for (int a = nd - 1; a >= 0; a--) {                                                                \
        int64_t i = (int64_t)NEARBYINT(c[a]);                                                            \
        ok = ok && i >= 0 && i < size[a];                                                                \
        off = off * size[a] + i;                                                                         \
      }                                                                                                  \
      t->n = 1;                                                                                          \
      t->off[0] = ok ? off : -1;                                                                         \
      t->w[0] = 1;                                                                                       \
      return;                                                                                            \
    }                                                                                                    \
    /* bilinear: corner k has bit a set for the upper neighbour along axis a. A NaN position makes  \
     * NaN weights (the output NaN, as PyTorch's CPU kernel), although it reads no element. */         \
    int64_t i0[3];                                                                                       \
    T w[3][2];                                                                                           \
    for (int a = 0; a < nd; a++) {                                                                       \
      i0[a] = (int64_t)FLOOR(c[a]);                                                                      \
      w[a][0] = (T)(i0[a] + 1) - c[a];                                                                   \
      w[a][1] = c[a] - (T)i0[a];                                                                         \
      if (g[a] != g[a]) w[a][0] = w[a][1] = g[a];                                                        \
    }                                                                                                    \
    t->n = 1 << nd;                                                                                      \
    for (int k = 0; k < t->n; k++) {                                                                     \
      bool ok = true;                                                                                    \
      int64_t off = 0;                                                                                   \
      for (int a = nd - 1; a >= 0; a--) {                                                                \
        int64_t i = i0[a] + ((k >> a) & 1);                                                              \
        ok = ok && i >= 0 && i < size[a];                                                                \
        off = off * size[a] + i;                                                                         \
      }                                                                                                  \
      t->off[k] = ok ? off : -1;                                                                         \
      T wt = w[0][k & 1];                                                                                \
      for (int a = 1; a < nd; a++) wt *= w[a][(k >> a) & 1];                                             \
      t->w[k] = wt;                                                                                      \
      for (int a = 0; a < nd; a++) { /* the other axes' weights, signed by the side along a */           \
        T d = (k >> a) & 1 ? (T)1 : (T)-1;                                                               \
        for (int b = 0; b < nd; b++)                                                                     \
          if (b != a) d *= w[b][(k >> b) & 1];                                                           \
        t->dw[k][a] = d;                                                                                 \
      }                                                                                                  \
    }                                                                                                    \
  }

/* What one position does with one channel plane, shared by the CPU loops and the device kernels
 * (nd and mode are constants there, so the loops unroll):
 *   kd_gs_read_<sfx>      the sampled value: bicubic along x in each row, then along y
 *                         (cubic_interp1d); otherwise the weighted taps, where a tap outside
 *                         reads 0 (a NaN weight still makes NaN, as PyTorch's CPU kernel)
 *   kd_gs_grid_acc_<sfx>  adds g times the derivative of that value along each axis to acc[]
 *   KD_GS_SCATTER         ADD(offset, value) for each tap inside: its share of the gradient g */
#define KD_GS_CHANNEL(T, SFX)                                                                            \
  KD_GS_QUAL T kd_gs_read_##SFX(const kd_gs_taps_##SFX *t, const T *x, int nd, int mode) {              \
    T s = 0;                                                                                             \
    if (mode == KD_GS_BICUBIC) {                                                                         \
      for (int jj = 0; jj < 4; jj++) {                                                                   \
        T r = 0;                                                                                         \
        for (int i = 0; i < 4; i++) {                                                                    \
          const int64_t o = t->off[i * 4 + jj];                                                          \
          r += (o >= 0 ? x[o] : (T)0) * t->cx[i];                                                        \
        }                                                                                                \
        s += r * t->cy[jj];                                                                              \
      }                                                                                                  \
      return s;                                                                                          \
    }                                                                                                    \
    const int n = mode == KD_GS_NEAREST ? 1 : 1 << nd;                                                   \
    for (int k = 0; k < n; k++) s += (t->off[k] >= 0 ? x[t->off[k]] : (T)0) * t->w[k];                  \
    return s;                                                                                            \
  }                                                                                                      \
  KD_GS_QUAL void kd_gs_grid_acc_##SFX(const kd_gs_taps_##SFX *t, const T *x, T g, int nd, int mode, T *acc) { \
    if (mode == KD_GS_BICUBIC) {                                                                         \
      for (int i = 0; i < 4; i++)                                                                        \
        for (int jj = 0; jj < 4; jj++) {                                                                 \
          const int64_t o = t->off[i * 4 + jj];                                                          \
          const T v = o >= 0 ? x[o] : (T)0;                                                              \
          acc[0] -= v * t->dcx[i] * t->cy[jj] * g;                                                       \
          acc[1] -= v * t->dcy[jj] * t->cx[i] * g;                                                       \
        }                                                                                                \
      return;                                                                                            \
    }                                                                                                    \
    for (int k = 0; k < (1 << nd); k++) {                                                                \
      if (t->off[k] < 0) continue;                                                                       \
      const T v = x[t->off[k]];                                                                          \
      for (int a = 0; a < nd; a++) acc[a] += v * t->dw[k][a] * g;                                        \
    }                                                                                                    \
  }
#define KD_GS_SCATTER(t, g, nd, mode, ADD)                                                               \
  do {                                                                                                   \
    if ((mode) == KD_GS_BICUBIC) {                                                                       \
      for (int i_ = 0; i_ < 4; i_++)                                                                     \
        for (int j_ = 0; j_ < 4; j_++)                                                                   \
          if ((t).off[i_ * 4 + j_] >= 0) ADD((t).off[i_ * 4 + j_], (g) * (t).cx[i_] * (t).cy[j_]);         \
    } else {                                                                                             \
      for (int k_ = 0; k_ < ((mode) == KD_GS_NEAREST ? 1 : 1 << (nd)); k_++)                             \
        if ((t).off[k_] >= 0) ADD((t).off[k_], (t).w[k_] * (g));                                         \
    }                                                                                                    \
  } while (0)

KD_CUBIC_COEFFS(float, f32, float)
KD_CUBIC_COEFFS(double, f64, double)
KD_GS_COORDS(float, f32, floorf, fmodf)
KD_GS_COORDS(double, f64, floor, fmod)
KD_GS_TAPS(float, f32, floorf, nearbyintf)
KD_GS_TAPS(double, f64, floor, nearbyint)
KD_GS_CHANNEL(float, f32)
KD_GS_CHANNEL(double, f64)

#endif
