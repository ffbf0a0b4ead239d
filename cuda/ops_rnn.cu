/* ops_rnn.cu - the device kernels of the fused LSTM/GRU steps and their gradients
 * (KD_CUDA_OP_RNN_CELL; src/cpu/rnn_cell.c lays out the operands, src/cpu/rnn_cell_math.h holds
 * the element math both compile): one thread per element (b, j) of the [B, H] state,
 * grid-stride; consecutive threads read consecutive j of each gate block of a row, so every load
 * and store is coalesced. One launch per step, no sync. */
#include "ops_shape.cuh"

#include "../src/cpu/rnn_cell_math.h"

struct kd_cu_rnn_p {
  void *p[8];
  int64_t B, H;
};

/* One kernel per step and type around rnn_cell_math.h's element function: thread k is element
 * (b, j) of the [B, H] state, given its rows of each buffer. */
#define KD_CU_RNN_KERNELS(S, T)                                                                    \
  __global__ void kd_cu_rnn_lstm_##S##_kernel(const kd_cu_rnn_p a) {                              \
    const int64_t H = a.H;                                                                        \
    KD_CU_FOR(k, a.B * H) {                                                                       \
      const int64_t b = k / H;                                                                    \
      kd_rnn_lstm_##S((const T *)a.p[0] + b * 4 * H, (const T *)a.p[1] + b * H, (T *)a.p[2] + b * H, \
                      (T *)a.p[3] + b * H, (T *)a.p[4] + b * 4 * H, H, k - b * H);                \
    }                                                                                             \
  }                                                                                               \
  __global__ void kd_cu_rnn_lstm_backward_##S##_kernel(const kd_cu_rnn_p a) {                     \
    const int64_t H = a.H;                                                                        \
    KD_CU_FOR(k, a.B * H) {                                                                       \
      const int64_t b = k / H;                                                                    \
      kd_rnn_lstm_backward_##S((const T *)a.p[0] + b * H, (const T *)a.p[1] + b * H,              \
                               (const T *)a.p[2] + b * H, (const T *)a.p[3] + b * H,              \
                               (const T *)a.p[4] + b * 4 * H, (T *)a.p[5] + b * 4 * H, (T *)a.p[6] + b * H, \
                               a.p[7] ? (const T *)a.p[7] + b * 4 * H : (const T *)0, H, k - b * H); \
    }                                                                                             \
  }                                                                                               \
  __global__ void kd_cu_rnn_gru_##S##_kernel(const kd_cu_rnn_p a) {                               \
    const int64_t H = a.H;                                                                        \
    KD_CU_FOR(k, a.B * H) {                                                                       \
      const int64_t b = k / H;                                                                    \
      kd_rnn_gru_##S((const T *)a.p[0] + b * 3 * H, (const T *)a.p[1] + b * 3 * H, (const T *)a.p[2] + b * H, \
                     (T *)a.p[3] + b * H, (T *)a.p[4] + b * 4 * H, H, k - b * H);                 \
    }                                                                                             \
  }                                                                                               \
  __global__ void kd_cu_rnn_gru_backward_##S##_kernel(const kd_cu_rnn_p a) {                      \
    const int64_t H = a.H;                                                                        \
    KD_CU_FOR(k, a.B * H) {                                                                       \
      const int64_t b = k / H;                                                                    \
      kd_rnn_gru_backward_##S((const T *)a.p[0] + b * H, (const T *)a.p[1] + b * H, (const T *)a.p[2] + b * 4 * H, \
                              (T *)a.p[3] + b * 3 * H, (T *)a.p[4] + b * 3 * H, (T *)a.p[5] + b * H, \
                              a.p[6] ? (const T *)a.p[6] + b * 4 * H : (const T *)0, H, k - b * H); \
    }                                                                                             \
  }
KD_CU_RNN_KERNELS(f, float)
KD_CU_RNN_KERNELS(d, double)

kd_cuda_status kd_cu_rnn_cell(int device, kd_cuda_op *o) {
  static const int nops[4] = {5, 8, 5, 7};
  const int64_t B = o->i[0], H = o->i[1];
  if (o->code < 0 || o->code > 3 || o->nops != nops[o->code] || B < 0 || H < 0)
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "fused RNN cell: bad arguments");
  if (B == 0 || H == 0) return KD_CUDA_OK;
  kd_cu_rnn_p a;
  memset(&a, 0, sizeof a);
  for (int k = 0; k < o->nops; k++) a.p[k] = o->data[k];
  a.B = B;
  a.H = H;
  if (o->dtype != KD_DTYPE_F32 && o->dtype != KD_DTYPE_F64) return kd_cu_not_supported("fused RNN cell", o->dtype);
  const unsigned grid = kd_cu_grid(device, B * H);
  cudaStream_t s = kd_cu_stream(device);
#define KD_CU_RNN_LAUNCH(FN) KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_cu_rnn_##FN##_kernel)(a)
  switch (o->code * 2 + (o->dtype == KD_DTYPE_F64)) {
    case 0: KD_CU_RNN_LAUNCH(lstm_f); break;
    case 1: KD_CU_RNN_LAUNCH(lstm_d); break;
    case 2: KD_CU_RNN_LAUNCH(lstm_backward_f); break;
    case 3: KD_CU_RNN_LAUNCH(lstm_backward_d); break;
    case 4: KD_CU_RNN_LAUNCH(gru_f); break;
    case 5: KD_CU_RNN_LAUNCH(gru_d); break;
    case 6: KD_CU_RNN_LAUNCH(gru_backward_f); break;
    default: KD_CU_RNN_LAUNCH(gru_backward_d); break;
  }
#undef KD_CU_RNN_LAUNCH
  KD_CU_CHECK_LAUNCH("the fused RNN cell kernel");
  return KD_CUDA_OK;
}
