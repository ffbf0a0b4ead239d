/* rnn_cell_math.h - the element math of the fused LSTM/GRU steps and their gradients, once, for
 * the CPU loops (src/cpu/rnn_cell.c) and the device kernels (cuda/ops_rnn.cu, which compiles
 * this as device code, as special_math.h is shared). Each function computes column j of one row
 * of the [B, H] state, given that row of each contiguous row-major buffer (gates rows [k*H]);
 * the CPU calls it in a loop over j, which gcc vectorizes (exp and tanh through libmvec,
 * unary_math.h), a device thread per element. Written for a type T by a macro, the C way of a
 * template: names kd_rnn_<step>_f (float: float32, and float16/bfloat16 converted) and
 * kd_rnn_<step>_d (double). gw, the gradient of the workspace, may be NULL (no such term).
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
#define KD_RC_EXPF expf
#define KD_RC_TANHF tanhf
#define KD_RC_EXP exp
#define KD_RC_TANH tanh
#else
#include "cpu/unary_math.h"
#define KD_RC_QUAL static inline
#define KD_RC_EXPF kd_vm_expf
#define KD_RC_TANHF kd_vm_tanhf
#define KD_RC_EXP kd_vm_exp
#define KD_RC_TANH kd_vm_tanh
#endif

#define KD_RNN_CELL_MATH(SFX, T, EXP, TANH)                                                          \
  KD_RC_QUAL T kd_rnn_sig_##SFX(T x) { return (T)1 / ((T)1 + EXP(-x)); }                            \
                                                                                                   \
  KD_RC_QUAL void kd_rnn_lstm_##SFX(const T *g, const T *cx, T *hy, T *cy, T *ws, int64_t H,        \
                                    int64_t j) {                                                   \
    const T i = kd_rnn_sig_##SFX(g[j]), f = kd_rnn_sig_##SFX(g[H + j]);                            \
    const T gg = TANH(g[2 * H + j]), o = kd_rnn_sig_##SFX(g[3 * H + j]);                           \
    const T c = f * cx[j] + i * gg;                                                                \
    cy[j] = c;                                                                                     \
    hy[j] = o * TANH(c);                                                                           \
    ws[j] = i;                                                                                     \
    ws[H + j] = f;                                                                                 \
    ws[2 * H + j] = gg;                                                                            \
    ws[3 * H + j] = o;                                                                             \
  }                                                                                                \
                                                                                                   \
  KD_RC_QUAL void kd_rnn_lstm_backward_##SFX(const T *ghy, const T *gcy, const T *cx, const T *cy,  \
                                             const T *ws, T *gg, T *gcx, const T *gw, int64_t H,    \
                                             int64_t j) {                                          \
    const T i = ws[j], f = ws[H + j], g = ws[2 * H + j], o = ws[3 * H + j];                        \
    const T tc = TANH(cy[j]);                                                                      \
    const T dc = gcy[j] + ghy[j] * o * ((T)1 - tc * tc);                                           \
    T di = dc * g, df = dc * cx[j], dg = dc * i, dov = ghy[j] * tc;                                 \
    if (gw) { /* the workspace's own gradient, before the activations' derivatives */              \
      di += gw[j];                                                                                 \
      df += gw[H + j];                                                                             \
      dg += gw[2 * H + j];                                                                         \
      dov += gw[3 * H + j];                                                                        \
    }                                                                                              \
    gg[j] = di * i * ((T)1 - i);                                                                   \
    gg[H + j] = df * f * ((T)1 - f);                                                               \
    gg[2 * H + j] = dg * ((T)1 - g * g);                                                           \
    gg[3 * H + j] = dov * o * ((T)1 - o);                                                          \
    gcx[j] = dc * f;                                                                               \
  }                                                                                                \
                                                                                                   \
  KD_RC_QUAL void kd_rnn_gru_##SFX(const T *xg, const T *hg, const T *hx, T *hy, T *ws, int64_t H,  \
                                   int64_t j) {                                                    \
    const T r = kd_rnn_sig_##SFX(xg[j] + hg[j]);                                                   \
    const T z = kd_rnn_sig_##SFX(xg[H + j] + hg[H + j]);                                           \
    const T hn = hg[2 * H + j];                                                                    \
    const T n = TANH(xg[2 * H + j] + r * hn);                                                      \
    hy[j] = n + z * (hx[j] - n);                                                                   \
    ws[j] = r;                                                                                     \
    ws[H + j] = z;                                                                                 \
    ws[2 * H + j] = n;                                                                             \
    ws[3 * H + j] = hn;                                                                            \
  }                                                                                                \
                                                                                                   \
  KD_RC_QUAL void kd_rnn_gru_backward_##SFX(const T *ghy, const T *hx, const T *ws, T *gx, T *gh,   \
                                            T *ghx, const T *gw, int64_t H, int64_t j) {           \
    const T r = ws[j], z = ws[H + j], n = ws[2 * H + j], hn = ws[3 * H + j];                       \
    const T gy = ghy[j];                                                                           \
    T dn = gy * ((T)1 - z), dz = gy * (hx[j] - n), whn = (T)0, wr = (T)0;                          \
    if (gw) {                                                                                      \
      wr = gw[j];                                                                                  \
      dz += gw[H + j];                                                                             \
      dn += gw[2 * H + j];                                                                         \
      whn = gw[3 * H + j];                                                                         \
    }                                                                                              \
    dn *= (T)1 - n * n;                                                                            \
    dz *= z * ((T)1 - z);                                                                          \
    const T dr = (dn * hn + wr) * r * ((T)1 - r);                                                  \
    gx[j] = dr;                                                                                    \
    gx[H + j] = dz;                                                                                \
    gx[2 * H + j] = dn;                                                                            \
    gh[j] = dr;                                                                                    \
    gh[H + j] = dz;                                                                                \
    gh[2 * H + j] = dn * r + whn;                                                                  \
    ghx[j] = gy * z;                                                                               \
  }

KD_RNN_CELL_MATH(f, float, KD_RC_EXPF, KD_RC_TANHF)
KD_RNN_CELL_MATH(d, double, KD_RC_EXP, KD_RC_TANH)

#endif
