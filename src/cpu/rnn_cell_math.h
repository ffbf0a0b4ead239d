/* rnn_cell_math.h - the element math of the fused LSTM/GRU steps and their gradients, once, for
 * the CPU loops (src/cpu/rnn_cell.c) and the device kernels (cuda/ops_rnn.cu, which compiles
 * this as device code, as special_math.h is shared). Each function computes element (b, j) of
 * the [B, H] state from contiguous row-major buffers; p[] holds the op's inputs then outputs in
 * the order of its schema (src/ops/oplist/rnn.js). Written for a type T by a macro, the C way of
 * a template: names kd_rnn_<step>_f (float: float32, and float16/bfloat16 converted) and
 * kd_rnn_<step>_d (double).
 *
 *   lstm           gates [B, 4H] (i, f, g, o pre-activations), cx -> hy, cy, ws [B, 4H]:
 *                  i, f, o = sigmoid, g = tanh; cy = f*cx + i*g; hy = o*tanh(cy); ws = (i, f, g, o)
 *   lstm_backward  gradHy, gradCy, cx, cy, ws -> gradGates [B, 4H], gradCx (then p[7]: gradWs or NULL):
 *                  dc = gcy + ghy*o*(1 - tanh(cy)^2); di = dc*g*i(1-i), df = dc*cx*f(1-f),
 *                  dg = dc*i*(1-g^2), do = ghy*tanh(cy)*o(1-o); gcx = dc*f; a gradient of ws
 *                  adds (Wi*i(1-i), Wf*f(1-f), Wg*(1-g^2), Wo*o(1-o)) to the gates'
 *   gru            xg, hg [B, 3H] (r, z, n parts of the input and hidden projections), hx -> hy,
 *                  ws [B, 4H]: r = sigmoid(xr + hr), z = sigmoid(xz + hz), n = tanh(xn + r*hn),
 *                  hy = n + z*(hx - n); ws = (r, z, n, hn)
 *   gru_backward   gradHy, hx, ws -> gradInputGates, gradHiddenGates [B, 3H], gradHx (then p[6]:
 *                  gradWs = (Wr, Wz, Wn, Whn) or NULL, zeros):
 *                  dn = (ghy*(1-z) + Wn)*(1-n^2), dz = (ghy*(hx-n) + Wz)*z(1-z),
 *                  dr = (dn*hn + Wr)*r(1-r); input gates (dr, dz, dn), hidden gates
 *                  (dr, dz, dn*r + Whn); ghx = ghy*z */
#ifndef KD_RNN_CELL_MATH_H
#define KD_RNN_CELL_MATH_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define KD_RC_QUAL static __device__ __forceinline__
#else
#define KD_RC_QUAL static inline
#endif

#define KD_RNN_CELL_MATH(SFX, T, EXP, TANH)                                                          \
  KD_RC_QUAL T kd_rnn_sig_##SFX(T x) { return (T)1 / ((T)1 + EXP(-x)); }                            \
                                                                                                   \
  KD_RC_QUAL void kd_rnn_lstm_##SFX(void *const *p, int64_t H, int64_t b, int64_t j) {              \
    const T *gr = (const T *)p[0] + b * 4 * H;                                                     \
    const int64_t k = b * H + j;                                                                   \
    const T i = kd_rnn_sig_##SFX(gr[j]), f = kd_rnn_sig_##SFX(gr[H + j]);                          \
    const T g = TANH(gr[2 * H + j]), o = kd_rnn_sig_##SFX(gr[3 * H + j]);                          \
    const T c = f * ((const T *)p[1])[k] + i * g;                                                  \
    ((T *)p[3])[k] = c;                                                                            \
    ((T *)p[2])[k] = o * TANH(c);                                                                  \
    T *wr = (T *)p[4] + b * 4 * H;                                                                 \
    wr[j] = i;                                                                                     \
    wr[H + j] = f;                                                                                 \
    wr[2 * H + j] = g;                                                                             \
    wr[3 * H + j] = o;                                                                             \
  }                                                                                                \
                                                                                                   \
  KD_RC_QUAL void kd_rnn_lstm_backward_##SFX(void *const *p, int64_t H, int64_t b, int64_t j) {     \
    const int64_t k = b * H + j;                                                                   \
    const T *wr = (const T *)p[4] + b * 4 * H;                                                     \
    const T i = wr[j], f = wr[H + j], g = wr[2 * H + j], o = wr[3 * H + j];                        \
    const T ghy = ((const T *)p[0])[k];                                                            \
    const T tc = TANH(((const T *)p[3])[k]);                                                       \
    const T dc = ((const T *)p[1])[k] + ghy * o * ((T)1 - tc * tc);                                \
    T *gr = (T *)p[5] + b * 4 * H;                                                                 \
    gr[j] = dc * g * i * ((T)1 - i);                                                               \
    gr[H + j] = dc * ((const T *)p[2])[k] * f * ((T)1 - f);                                        \
    gr[2 * H + j] = dc * i * ((T)1 - g * g);                                                       \
    gr[3 * H + j] = ghy * tc * o * ((T)1 - o);                                                     \
    ((T *)p[6])[k] = dc * f;                                                                       \
    if (p[7]) { /* gradWorkspace: through the activations */                                       \
      const T *w = (const T *)p[7] + b * 4 * H;                                                    \
      gr[j] += w[j] * i * ((T)1 - i);                                                              \
      gr[H + j] += w[H + j] * f * ((T)1 - f);                                                      \
      gr[2 * H + j] += w[2 * H + j] * ((T)1 - g * g);                                              \
      gr[3 * H + j] += w[3 * H + j] * o * ((T)1 - o);                                              \
    }                                                                                              \
  }                                                                                                \
                                                                                                   \
  KD_RC_QUAL void kd_rnn_gru_##SFX(void *const *p, int64_t H, int64_t b, int64_t j) {               \
    const T *xr = (const T *)p[0] + b * 3 * H, *hr = (const T *)p[1] + b * 3 * H;                  \
    const int64_t k = b * H + j;                                                                   \
    const T r = kd_rnn_sig_##SFX(xr[j] + hr[j]);                                                   \
    const T z = kd_rnn_sig_##SFX(xr[H + j] + hr[H + j]);                                           \
    const T hn = hr[2 * H + j];                                                                    \
    const T n = TANH(xr[2 * H + j] + r * hn);                                                      \
    ((T *)p[3])[k] = n + z * (((const T *)p[2])[k] - n);                                           \
    T *wr = (T *)p[4] + b * 4 * H;                                                                 \
    wr[j] = r;                                                                                     \
    wr[H + j] = z;                                                                                 \
    wr[2 * H + j] = n;                                                                             \
    wr[3 * H + j] = hn;                                                                            \
  }                                                                                                \
                                                                                                   \
  KD_RC_QUAL void kd_rnn_gru_backward_##SFX(void *const *p, int64_t H, int64_t b, int64_t j) {      \
    const int64_t k = b * H + j;                                                                   \
    const T *wr = (const T *)p[2] + b * 4 * H;                                                     \
    const T r = wr[j], z = wr[H + j], n = wr[2 * H + j], hn = wr[3 * H + j];                       \
    const T gy = ((const T *)p[0])[k];                                                             \
    const T *w = p[6] ? (const T *)p[6] + b * 4 * H : (const T *)0; /* gradWorkspace */           \
    const T wr_ = w ? w[j] : (T)0, wz = w ? w[H + j] : (T)0;                                       \
    const T wn = w ? w[2 * H + j] : (T)0, whn = w ? w[3 * H + j] : (T)0;                           \
    const T dn = (gy * ((T)1 - z) + wn) * ((T)1 - n * n);                                          \
    const T dz = (gy * (((const T *)p[1])[k] - n) + wz) * z * ((T)1 - z);                          \
    const T dr = (dn * hn + wr_) * r * ((T)1 - r);                                                 \
    T *xg = (T *)p[3] + b * 3 * H, *hg = (T *)p[4] + b * 3 * H;                                    \
    xg[j] = dr;                                                                                    \
    xg[H + j] = dz;                                                                                \
    xg[2 * H + j] = dn;                                                                            \
    hg[j] = dr;                                                                                    \
    hg[H + j] = dz;                                                                                \
    hg[2 * H + j] = dn * r + whn;                                                                  \
    ((T *)p[5])[k] = gy * z;                                                                       \
  }

KD_RNN_CELL_MATH(f, float, expf, tanhf)
KD_RNN_CELL_MATH(d, double, exp, tanh)

#endif
