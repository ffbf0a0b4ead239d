/* rnn_cell.c - the fused pointwise steps of the recurrent layers (src/ops/oplist/rnn.js): one
 * kernel, kd_cpu_rnn_cell, whose KD_RNN_* code picks the LSTM step, the GRU step or their
 * gradients. Each reads the [B, k*H] gate rows and the [B, H] states once and writes every
 * output once (PyTorch's CUDA _thnn_fused_lstm_cell / _thnn_fused_gru_cell; its CPU path runs
 * ~10 separate ops per step instead). Inputs are made contiguous in the compute dtype first
 * (float16/bfloat16 compute in float32, as nn_common.h's kernels); on a device the same
 * contiguous buffers go to the device kernel (KD_DEV_OP_RNN_CELL, cuda/ops_rnn.cu), whose
 * element math is the same as the macros below.
 *
 *   LSTM  gates [B, 4H] (i, f, g, o pre-activations), cx [B, H] -> hy, cy [B, H], ws [B, 4H]:
 *         i, f, o = sigmoid, g = tanh; cy = f*cx + i*g; hy = o*tanh(cy); ws = (i, f, g, o)
 *   GRU   xg, hg [B, 3H] (r, z, n parts of the input and hidden projections), hx [B, H]
 *         -> hy [B, H], ws [B, 4H]: r = sigmoid(xr + hr), z = sigmoid(xz + hz),
 *         n = tanh(xn + r*hn), hy = n + z*(hx - n); ws = (r, z, n, hn)
 * The backward codes take the gradients of the outputs and the saved tensors and return the
 * gradients of the inputs (the formulas are written out next to each loop). */
#include <math.h>
#include <string.h>

#include "cpu/device_op.h"
#include "cpu/device_op_ptrs.h"
#include "cpu/nn_common.h"

#define KD_RNN_MAX_IO 6

static const char *kd_rnn_name(int code) {
  switch (code) {
    case KD_RNN_LSTM: return "lstmCell";
    case KD_RNN_LSTM_BACKWARD: return "lstmCellBackward";
    case KD_RNN_GRU: return "gruCell";
    default: return "gruCellBackward";
  }
}

/* The loops, per compute type (T float or double; EXP/TANH its functions). p[] are the
 * contiguous inputs then outputs, in the order of the op's schema and returns. */
#define KD_RNN_LOOPS(SFX, T, EXP, TANH)                                                              \
  static inline T kd_rnn_sig_##SFX(T x) { return (T)1 / ((T)1 + EXP(-x)); }                        \
  static void kd_rnn_run_##SFX(int code, int64_t B, int64_t H, void *const *p) {                  \
    if (code == KD_RNN_LSTM) {                                                                     \
      const T *g = (const T *)p[0], *cx = (const T *)p[1];                                          \
      T *hy = (T *)p[2], *cy = (T *)p[3], *ws = (T *)p[4];                                           \
      for (int64_t b = 0; b < B; b++) {                                                            \
        const T *gr = g + b * 4 * H;                                                               \
        T *wr = ws + b * 4 * H;                                                                    \
        for (int64_t j = 0; j < H; j++) {                                                          \
          const T i = kd_rnn_sig_##SFX(gr[j]), f = kd_rnn_sig_##SFX(gr[H + j]);                   \
          const T gg = TANH(gr[2 * H + j]), o = kd_rnn_sig_##SFX(gr[3 * H + j]);                  \
          const T c = f * cx[b * H + j] + i * gg;                                                  \
          cy[b * H + j] = c;                                                                       \
          hy[b * H + j] = o * TANH(c);                                                             \
          wr[j] = i; wr[H + j] = f; wr[2 * H + j] = gg; wr[3 * H + j] = o;                         \
        }                                                                                          \
      }                                                                                            \
    } else if (code == KD_RNN_LSTM_BACKWARD) {                                                     \
      /* dc = gcy + ghy*o*(1 - tanh(cy)^2); gates: di = dc*g*i(1-i), df = dc*cx*f(1-f),             \
       * dg = dc*i*(1-g^2), do = ghy*tanh(cy)*o(1-o); gcx = dc*f */                                \
      const T *ghy = (const T *)p[0], *gcy = (const T *)p[1], *cx = (const T *)p[2];                \
      const T *cy = (const T *)p[3], *ws = (const T *)p[4];                                          \
      T *gg = (T *)p[5], *gcx = (T *)p[6];                                                           \
      for (int64_t b = 0; b < B; b++) {                                                            \
        const T *wr = ws + b * 4 * H;                                                              \
        T *gr = gg + b * 4 * H;                                                                    \
        for (int64_t j = 0; j < H; j++) {                                                          \
          const int64_t k = b * H + j;                                                             \
          const T i = wr[j], f = wr[H + j], g = wr[2 * H + j], o = wr[3 * H + j];                  \
          const T tc = TANH(cy[k]);                                                                \
          const T dc = gcy[k] + ghy[k] * o * ((T)1 - tc * tc);                                     \
          gr[j] = dc * g * i * ((T)1 - i);                                                         \
          gr[H + j] = dc * cx[k] * f * ((T)1 - f);                                                 \
          gr[2 * H + j] = dc * i * ((T)1 - g * g);                                                 \
          gr[3 * H + j] = ghy[k] * tc * o * ((T)1 - o);                                            \
          gcx[k] = dc * f;                                                                         \
        }                                                                                          \
      }                                                                                            \
    } else if (code == KD_RNN_GRU) {                                                               \
      const T *xg = (const T *)p[0], *hg = (const T *)p[1], *hx = (const T *)p[2];                  \
      T *hy = (T *)p[3], *ws = (T *)p[4];                                                            \
      for (int64_t b = 0; b < B; b++) {                                                            \
        const T *xr = xg + b * 3 * H, *hr = hg + b * 3 * H;                                         \
        T *wr = ws + b * 4 * H;                                                                    \
        for (int64_t j = 0; j < H; j++) {                                                          \
          const T r = kd_rnn_sig_##SFX(xr[j] + hr[j]);                                             \
          const T z = kd_rnn_sig_##SFX(xr[H + j] + hr[H + j]);                                     \
          const T hn = hr[2 * H + j];                                                              \
          const T n = TANH(xr[2 * H + j] + r * hn);                                                \
          const T h = hx[b * H + j];                                                               \
          hy[b * H + j] = n + z * (h - n);                                                         \
          wr[j] = r; wr[H + j] = z; wr[2 * H + j] = n; wr[3 * H + j] = hn;                         \
        }                                                                                          \
      }                                                                                            \
    } else {                                                                                       \
      /* dn = ghy*(1-z)*(1-n^2); dz = ghy*(hx-n)*z(1-z); dr = dn*hn*r(1-r); ghx = ghy*z;            \
       * input gates (dr, dz, dn), hidden gates (dr, dz, dn*r) */                                   \
      const T *ghy = (const T *)p[0], *hx = (const T *)p[1], *ws = (const T *)p[2];                 \
      T *gx = (T *)p[3], *gh = (T *)p[4], *ghx = (T *)p[5];                                          \
      for (int64_t b = 0; b < B; b++) {                                                            \
        const T *wr = ws + b * 4 * H;                                                              \
        T *xr = gx + b * 3 * H, *hr = gh + b * 3 * H;                                               \
        for (int64_t j = 0; j < H; j++) {                                                          \
          const int64_t k = b * H + j;                                                             \
          const T r = wr[j], z = wr[H + j], n = wr[2 * H + j], hn = wr[3 * H + j];                 \
          const T gy = ghy[k];                                                                     \
          const T dn = gy * ((T)1 - z) * ((T)1 - n * n);                                           \
          const T dz = gy * (hx[k] - n) * z * ((T)1 - z);                                          \
          const T dr = dn * hn * r * ((T)1 - r);                                                   \
          xr[j] = dr; xr[H + j] = dz; xr[2 * H + j] = dn;                                          \
          hr[j] = dr; hr[H + j] = dz; hr[2 * H + j] = dn * r;                                      \
          ghx[k] = gy * z;                                                                         \
        }                                                                                          \
      }                                                                                            \
    }                                                                                              \
  }
KD_RNN_LOOPS(f32, float, expf, tanhf)
KD_RNN_LOOPS(f64, double, exp, tanh)

/* Checks a 2-D [B, k*H] operand of the op. */
static kd_status kd_rnn_check(const char *name, const char *what, const kd_tensor *t, int64_t B, int64_t cols,
                              const kd_tensor *first) {
  if (t->ndim != 2 || t->sizes[0] != B || t->sizes[1] != cols)
    return kd_error(KD_ERR_SHAPE, "%s: %s must be [%lld, %lld], got a %d-D tensor of %lld elements", name, what,
                    (long long)B, (long long)cols, t->ndim, (long long)kd_tensor_numel(t));
  if (t->dtype != first->dtype)
    return kd_error(KD_ERR_DTYPE, "%s: expected all tensors to have dtype %s, but %s is %s", name,
                    kd_cpu_torch_name(first->dtype), what, kd_cpu_torch_name(t->dtype));
  if (!kd_device_eq(kd_tensor_device(t), kd_tensor_device(first)))
    return kd_error(KD_ERR_DEVICE, "Expected all tensors to be on the same device, but found at least two devices (%s: %s)",
                    name, what);
  return KD_OK;
}

KD_KERNEL(kd_cpu_rnn_cell) {
  (void)ks;
  const int code = op->code;
  const char *name = kd_rnn_name(code);
  /* inputs, the [B, k*H] width of each (in units of H), and the widths of the outputs */
  static const char *const in_names[4][5] = {
      {"gates", "cx"}, {"gradHy", "gradCy", "cx", "cy", "workspace"}, {"inputGates", "hiddenGates", "hx"},
      {"gradHy", "hx", "workspace"}};
  static const int in_w[4][5] = {{4, 1}, {1, 1, 1, 1, 4}, {3, 3, 1}, {1, 1, 4}};
  static const int out_w[4][3] = {{1, 1, 4}, {4, 1}, {1, 4}, {3, 3, 1}};
  static const int n_in[4] = {2, 5, 3, 3}, n_out[4] = {3, 2, 2, 3};
  const int c = code == KD_RNN_LSTM ? 0 : code == KD_RNN_LSTM_BACKWARD ? 1 : code == KD_RNN_GRU ? 2 : 3;
  const int ni = n_in[c], no = n_out[c];

  /* B and H from the state argument ([B, H]): cx for LSTM, hx for GRU, gradHy for the rest */
  const kd_tensor *state = args[c == 0 ? 1 : c == 2 ? 2 : 0].v.t;
  if (state->ndim != 2)
    return kd_error(KD_ERR_SHAPE, "%s: %s must be 2-D [batch, hidden], got %d-D", name, in_names[c][c == 0 ? 1 : c == 2 ? 2 : 0],
                    state->ndim);
  const int64_t B = state->sizes[0], H = state->sizes[1];
  int64_t widest;
  if (kd_mul_overflows(H, 4, &widest)) return kd_error(KD_ERR_INVALID_ARGUMENT, "%s: hidden size %lld is too large", name, (long long)H);
  const kd_tensor *first = args[0].v.t;
  kd_dtype cdt = KD_DTYPE_F32;
  KD_TRY(kd_nn_compute_dtype(first->dtype, name, &cdt));
  for (int k = 0; k < ni; k++) KD_TRY(kd_rnn_check(name, in_names[c][k], args[k].v.t, B, in_w[c][k] * H, first));

  kd_device dev = kd_tensor_device(first);
  kd_tensor *io[KD_RNN_MAX_IO + 2];
  memset(io, 0, sizeof io);
  kd_status st = KD_OK;
  for (int k = 0; k < ni && st == KD_OK; k++) st = kd_nn_prep(args[k].v.t, cdt, &io[k]);
  for (int k = 0; k < no && st == KD_OK; k++) {
    int64_t sizes[2] = {B, out_w[c][k] * H};
    st = kd_tensor_empty(sizes, 2, cdt, dev, &io[ni + k]);
  }
  if (st == KD_OK && B * H > 0) {
    void *p[KD_RNN_MAX_IO + 2];
    kd_dtype dts[KD_RNN_MAX_IO + 2];
    for (int k = 0; k < ni + no; k++) {
      p[k] = kd_tensor_data(io[k]);
      dts[k] = cdt;
    }
    if (dev.type != KD_DEVICE_CPU) {
      kd_dev_op d;
      memset(&d, 0, sizeof d);
      d.kind = KD_DEV_OP_RNN_CELL;
      d.code = c;
      d.dtype = cdt;
      d.i[0] = B;
      d.i[1] = H;
      st = kd_dev_op_run_ptrs(dev, &d, ni + no, p, dts);
    } else if (cdt == KD_DTYPE_F64) {
      kd_rnn_run_f64(code, B, H, p);
    } else {
      kd_rnn_run_f32(code, B, H, p);
    }
  }
  for (int k = 0; k < ni; k++) if (io[k]) kd_tensor_release(io[k]);
  for (int k = 0; k < no && st == KD_OK; k++) {
    kd_tensor *r = NULL;
    st = kd_nn_finish(io[ni + k], first->dtype, &r); /* releases io[ni + k] unless it is returned */
    io[ni + k] = r;
  }
  if (st != KD_OK) {
    for (int k = 0; k < no; k++) if (io[ni + k]) kd_tensor_release(io[ni + k]);
    return st;
  }
  for (int k = 0; k < no; k++) kd_out_take(outs, k, io[ni + k]);
  return KD_OK;
}
