/* rnn_cell.c - the fused pointwise steps of the recurrent layers (src/ops/oplist/rnn.js): one
 * kernel, kd_cpu_rnn_cell, whose KD_RNN_* code picks the LSTM step, the GRU step or their
 * gradients. Each reads the [B, k*H] gate rows and the [B, H] states once and writes every
 * output once (PyTorch's CUDA _thnn_fused_lstm_cell / _thnn_fused_gru_cell; its CPU path runs
 * ~10 separate ops per step instead). Inputs are made contiguous in the compute dtype first
 * (float16/bfloat16 compute in float32, as nn_common.h's kernels); on a device the same
 * contiguous buffers go to the device kernel (KD_DEV_OP_RNN_CELL, cuda/ops_rnn.cu). The element
 * math, and the formulas, are in rnn_cell_math.h, which both compile. Compiled once per CPU
 * level (Note [CPU capability dispatch] in cpu_capability.h): exp and tanh run 16 floats wide on
 * AVX-512. */
#include <math.h>
#include <string.h>

#include "cpu/device_op.h"
#include "cpu/device_op_ptrs.h"
#include "cpu/nn_common.h"
#include "cpu/rnn_cell_math.h"

#define KD_RNN_MAX_IO 6

static const char *kd_rnn_name(int code) {
  switch (code) {
    case KD_RNN_LSTM: return "lstmCell";
    case KD_RNN_LSTM_BACKWARD: return "lstmCellBackward";
    case KD_RNN_GRU: return "gruCell";
    default: return "gruCellBackward";
  }
}

/* Every element of the [B, H] state, row by row: a row function per step takes its rows as
 * `restrict` parameters and is not inlined (inlined into the loop over rows, gcc loses the
 * restrict and gives up on the alias checks of this many pointers), so the element function
 * inlines into a loop that vectorizes, exp and tanh through libmvec (unary_math.h); the NULL
 * test of gw is made once per row. p[] holds the op's inputs, then its outputs, then
 * gradWorkspace (or NULL) for the backward codes. */
#define KD_RNN_LOOPS(S, T)                                                                         \
  static __attribute__((noinline)) void kd_rnn_row_lstm_##S(const T *restrict g, const T *restrict cx, T *restrict hy,       \
                                  T *restrict cy, T *restrict ws, int64_t H) {                    \
    for (int64_t j = 0; j < H; j++) kd_rnn_lstm_##S(g, cx, hy, cy, ws, H, j);                      \
  }                                                                                               \
  static __attribute__((noinline)) void kd_rnn_row_lstm_backward_##S(const T *restrict ghy, const T *restrict gcy,          \
                                           const T *restrict cx, const T *restrict cy,            \
                                           const T *restrict ws, T *restrict gg, T *restrict gcx, \
                                           const T *restrict gw, int64_t H) {                     \
    if (gw)                                                                                       \
      for (int64_t j = 0; j < H; j++) kd_rnn_lstm_backward_##S(ghy, gcy, cx, cy, ws, gg, gcx, gw, H, j); \
    else                                                                                          \
      for (int64_t j = 0; j < H; j++) kd_rnn_lstm_backward_##S(ghy, gcy, cx, cy, ws, gg, gcx, NULL, H, j); \
  }                                                                                               \
  static __attribute__((noinline)) void kd_rnn_row_gru_##S(const T *restrict xg, const T *restrict hg, const T *restrict hx, \
                                 T *restrict hy, T *restrict ws, int64_t H) {                     \
    for (int64_t j = 0; j < H; j++) kd_rnn_gru_##S(xg, hg, hx, hy, ws, H, j);                      \
  }                                                                                               \
  static __attribute__((noinline)) void kd_rnn_row_gru_backward_##S(const T *restrict ghy, const T *restrict hx,             \
                                          const T *restrict ws, T *restrict gx, T *restrict gh,   \
                                          T *restrict ghx, const T *restrict gw, int64_t H) {     \
    if (gw)                                                                                       \
      for (int64_t j = 0; j < H; j++) kd_rnn_gru_backward_##S(ghy, hx, ws, gx, gh, ghx, gw, H, j); \
    else                                                                                          \
      for (int64_t j = 0; j < H; j++) kd_rnn_gru_backward_##S(ghy, hx, ws, gx, gh, ghx, NULL, H, j); \
  }                                                                                               \
  static void kd_rnn_loop_lstm_##S(void *const *p, int64_t B, int64_t H) {                        \
    for (int64_t b = 0; b < B; b++)                                                               \
      kd_rnn_row_lstm_##S((const T *)p[0] + b * 4 * H, (const T *)p[1] + b * H, (T *)p[2] + b * H, \
                          (T *)p[3] + b * H, (T *)p[4] + b * 4 * H, H);                           \
  }                                                                                               \
  static void kd_rnn_loop_lstm_backward_##S(void *const *p, int64_t B, int64_t H) {               \
    for (int64_t b = 0; b < B; b++)                                                               \
      kd_rnn_row_lstm_backward_##S((const T *)p[0] + b * H, (const T *)p[1] + b * H, (const T *)p[2] + b * H, \
                                   (const T *)p[3] + b * H, (const T *)p[4] + b * 4 * H, (T *)p[5] + b * 4 * H, \
                                   (T *)p[6] + b * H, p[7] ? (const T *)p[7] + b * 4 * H : NULL, H); \
  }                                                                                               \
  static void kd_rnn_loop_gru_##S(void *const *p, int64_t B, int64_t H) {                         \
    for (int64_t b = 0; b < B; b++)                                                               \
      kd_rnn_row_gru_##S((const T *)p[0] + b * 3 * H, (const T *)p[1] + b * 3 * H, (const T *)p[2] + b * H, \
                         (T *)p[3] + b * H, (T *)p[4] + b * 4 * H, H);                            \
  }                                                                                               \
  static void kd_rnn_loop_gru_backward_##S(void *const *p, int64_t B, int64_t H) {                \
    for (int64_t b = 0; b < B; b++)                                                               \
      kd_rnn_row_gru_backward_##S((const T *)p[0] + b * H, (const T *)p[1] + b * H, (const T *)p[2] + b * 4 * H, \
                                  (T *)p[3] + b * 3 * H, (T *)p[4] + b * 3 * H, (T *)p[5] + b * H, \
                                  p[6] ? (const T *)p[6] + b * 4 * H : NULL, H);                  \
  }
KD_RNN_LOOPS(f, float)
KD_RNN_LOOPS(d, double)
static void (*const kd_rnn_loops[4][2])(void *const *, int64_t, int64_t) = {
    {kd_rnn_loop_lstm_f, kd_rnn_loop_lstm_d}, {kd_rnn_loop_lstm_backward_f, kd_rnn_loop_lstm_backward_d},
    {kd_rnn_loop_gru_f, kd_rnn_loop_gru_d}, {kd_rnn_loop_gru_backward_f, kd_rnn_loop_gru_backward_d}};

/* Checks a 2-D [B, k*H] operand of the op. */
static kd_status kd_rnn_check(const char *name, const char *what, const kd_tensor *t, int64_t B, int64_t cols,
                              const kd_tensor *first) {
  if (t->ndim != 2 || t->sizes[0] != B || t->sizes[1] != cols)
    return kd_error(KD_ERR_SHAPE, "%s: %s must be [%lld, %lld], got a %d-D tensor of %lld elements", name, what,
                    (long long)B, (long long)cols, t->ndim, (long long)kd_tensor_numel(t));
  if (!kd_dtype_is_float(t->dtype))
    return kd_error(KD_ERR_NOT_SUPPORTED, "\"%s\" not implemented for '%s' (%s)", name, kd_cpu_torch_name(t->dtype), what);
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
  static const char *const in_names[4][6] = {
      {"gates", "cx"}, {"gradHy", "gradCy", "cx", "cy", "workspace", "gradWorkspace"}, {"inputGates", "hiddenGates", "hx"},
      {"gradHy", "hx", "workspace", "gradWorkspace"}};
  static const int in_w[4][6] = {{4, 1}, {1, 1, 1, 1, 4, 4}, {3, 3, 1}, {1, 1, 4, 4}};
  static const int out_w[4][3] = {{1, 1, 4}, {4, 1}, {1, 4}, {3, 3, 1}};
  /* the backward codes' last input, gradWorkspace, is optional and goes after the outputs */
  static const int n_in[4] = {2, 5, 3, 3}, n_out[4] = {3, 2, 2, 3};
  static const bool has_opt[4] = {false, true, false, true};
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
  /* the inputs' promoted dtype (gates of a lower-precision matmul next to a float32 state under
   * autocast: as PyTorch's unfused cell, whose pointwise ops promote) */
  const kd_tensor *first = args[0].v.t;
  const kd_tensor *opt = has_opt[c] && args[ni].kind == KD_VALUE_TENSOR ? args[ni].v.t : NULL;
  for (int k = 0; k < ni; k++) KD_TRY(kd_rnn_check(name, in_names[c][k], args[k].v.t, B, in_w[c][k] * H, first));
  if (opt) KD_TRY(kd_rnn_check(name, in_names[c][ni], opt, B, 4 * H, first));
  kd_dtype dt = first->dtype;
  for (int k = 1; k < ni; k++) dt = kd_promote_types(dt, args[k].v.t->dtype);
  if (opt) dt = kd_promote_types(dt, opt->dtype);
  kd_dtype cdt = KD_DTYPE_F32;
  KD_TRY(kd_nn_compute_dtype(dt, name, &cdt));

  kd_device dev = kd_tensor_device(first);
  kd_tensor *io[KD_RNN_MAX_IO + 2];
  memset(io, 0, sizeof io);
  kd_status st = KD_OK;
  for (int k = 0; k < ni && st == KD_OK; k++) st = kd_nn_prep(args[k].v.t, cdt, &io[k]);
  for (int k = 0; k < no && st == KD_OK; k++) {
    int64_t sizes[2] = {B, out_w[c][k] * H};
    st = kd_tensor_empty(sizes, 2, cdt, dev, &io[ni + k]);
  }
  kd_tensor *optc = NULL;
  if (st == KD_OK && opt) st = kd_nn_prep((kd_tensor *)opt, cdt, &optc);
  const int np = ni + no + (has_opt[c] ? 1 : 0);
  if (st == KD_OK && B * H > 0) {
    void *p[KD_RNN_MAX_IO + 2];
    kd_dtype dts[KD_RNN_MAX_IO + 2];
    for (int k = 0; k < ni + no; k++) {
      p[k] = kd_tensor_data(io[k]);
      dts[k] = cdt;
    }
    if (has_opt[c]) {
      p[ni + no] = optc ? kd_tensor_data(optc) : NULL;
      dts[ni + no] = cdt;
    }
    if (dev.type != KD_DEVICE_CPU) {
      kd_dev_op d;
      memset(&d, 0, sizeof d);
      d.kind = KD_DEV_OP_RNN_CELL;
      d.code = c;
      d.dtype = cdt;
      d.i[0] = B;
      d.i[1] = H;
      st = kd_dev_op_run_ptrs(dev, &d, np, p, dts);
    } else {
      kd_rnn_loops[c][cdt == KD_DTYPE_F64](p, B, H);
    }
  }
  for (int k = 0; k < ni; k++) if (io[k]) kd_tensor_release(io[k]);
  if (optc) kd_tensor_release(optc);
  for (int k = 0; k < no && st == KD_OK; k++) {
    kd_tensor *r = NULL;
    st = kd_nn_finish(io[ni + k], dt, &r); /* releases io[ni + k] unless it is returned */
    io[ni + k] = r;
  }
  if (st != KD_OK) {
    for (int k = 0; k < no; k++) if (io[ni + k]) kd_tensor_release(io[ni + k]);
    return st;
  }
  for (int k = 0; k < no; k++) kd_out_take(outs, k, io[ni + k]);
  return KD_OK;
}
