/* ops_rnn.cu - the device kernels of the fused LSTM/GRU steps and their gradients
 * (KD_CUDA_OP_RNN_CELL, src/cpu/rnn_cell.c holds the CPU loops and the formulas): one thread per
 * element (b, j) of the [B, H] state, grid-stride; consecutive threads read consecutive j of
 * each gate block of a row, so every load and store is coalesced. One launch per step, no sync. */
#include "ops_shape.cuh"

template <typename T> __device__ static inline T kd_cu_rnn_exp(T x);
template <> __device__ inline float kd_cu_rnn_exp<float>(float x) { return expf(x); }
template <> __device__ inline double kd_cu_rnn_exp<double>(double x) { return exp(x); }
template <typename T> __device__ static inline T kd_cu_rnn_tanh(T x);
template <> __device__ inline float kd_cu_rnn_tanh<float>(float x) { return tanhf(x); }
template <> __device__ inline double kd_cu_rnn_tanh<double>(double x) { return tanh(x); }
template <typename T> __device__ static inline T kd_cu_rnn_sig(T x) { return (T)1 / ((T)1 + kd_cu_rnn_exp<T>(-x)); }

struct kd_cu_rnn_p {
  void *p[8];
  int64_t B, H;
};

template <typename T>
__global__ void kd_cu_lstm_kernel(const kd_cu_rnn_p a) {
  const int64_t H = a.H;
  const T *g = (const T *)a.p[0], *cx = (const T *)a.p[1];
  T *hy = (T *)a.p[2], *cy = (T *)a.p[3], *ws = (T *)a.p[4];
  KD_CU_FOR(k, a.B * H) {
    const int64_t b = k / H, j = k - b * H;
    const T *gr = g + b * 4 * H;
    const T i = kd_cu_rnn_sig<T>(gr[j]), f = kd_cu_rnn_sig<T>(gr[H + j]);
    const T gg = kd_cu_rnn_tanh<T>(gr[2 * H + j]), o = kd_cu_rnn_sig<T>(gr[3 * H + j]);
    const T c = f * cx[k] + i * gg;
    cy[k] = c;
    hy[k] = o * kd_cu_rnn_tanh<T>(c);
    T *wr = ws + b * 4 * H;
    wr[j] = i; wr[H + j] = f; wr[2 * H + j] = gg; wr[3 * H + j] = o;
  }
}

template <typename T>
__global__ void kd_cu_lstm_backward_kernel(const kd_cu_rnn_p a) {
  const int64_t H = a.H;
  const T *ghy = (const T *)a.p[0], *gcy = (const T *)a.p[1], *cx = (const T *)a.p[2];
  const T *cy = (const T *)a.p[3], *ws = (const T *)a.p[4];
  T *gg = (T *)a.p[5], *gcx = (T *)a.p[6];
  KD_CU_FOR(k, a.B * H) {
    const int64_t b = k / H, j = k - b * H;
    const T *wr = ws + b * 4 * H;
    T *gr = gg + b * 4 * H;
    const T i = wr[j], f = wr[H + j], g = wr[2 * H + j], o = wr[3 * H + j];
    const T tc = kd_cu_rnn_tanh<T>(cy[k]);
    const T dc = gcy[k] + ghy[k] * o * ((T)1 - tc * tc);
    gr[j] = dc * g * i * ((T)1 - i);
    gr[H + j] = dc * cx[k] * f * ((T)1 - f);
    gr[2 * H + j] = dc * i * ((T)1 - g * g);
    gr[3 * H + j] = ghy[k] * tc * o * ((T)1 - o);
    gcx[k] = dc * f;
  }
}

template <typename T>
__global__ void kd_cu_gru_kernel(const kd_cu_rnn_p a) {
  const int64_t H = a.H;
  const T *xg = (const T *)a.p[0], *hg = (const T *)a.p[1], *hx = (const T *)a.p[2];
  T *hy = (T *)a.p[3], *ws = (T *)a.p[4];
  KD_CU_FOR(k, a.B * H) {
    const int64_t b = k / H, j = k - b * H;
    const T *xr = xg + b * 3 * H, *hr = hg + b * 3 * H;
    const T r = kd_cu_rnn_sig<T>(xr[j] + hr[j]);
    const T z = kd_cu_rnn_sig<T>(xr[H + j] + hr[H + j]);
    const T hn = hr[2 * H + j];
    const T n = kd_cu_rnn_tanh<T>(xr[2 * H + j] + r * hn);
    const T h = hx[k];
    hy[k] = n + z * (h - n);
    T *wr = ws + b * 4 * H;
    wr[j] = r; wr[H + j] = z; wr[2 * H + j] = n; wr[3 * H + j] = hn;
  }
}

template <typename T>
__global__ void kd_cu_gru_backward_kernel(const kd_cu_rnn_p a) {
  const int64_t H = a.H;
  const T *ghy = (const T *)a.p[0], *hx = (const T *)a.p[1], *ws = (const T *)a.p[2];
  T *gx = (T *)a.p[3], *gh = (T *)a.p[4], *ghx = (T *)a.p[5];
  KD_CU_FOR(k, a.B * H) {
    const int64_t b = k / H, j = k - b * H;
    const T *wr = ws + b * 4 * H;
    const T r = wr[j], z = wr[H + j], n = wr[2 * H + j], hn = wr[3 * H + j];
    const T gy = ghy[k];
    const T dn = gy * ((T)1 - z) * ((T)1 - n * n);
    const T dz = gy * (hx[k] - n) * z * ((T)1 - z);
    const T dr = dn * hn * r * ((T)1 - r);
    T *xr = gx + b * 3 * H, *hr = gh + b * 3 * H;
    xr[j] = dr; xr[H + j] = dz; xr[2 * H + j] = dn;
    hr[j] = dr; hr[H + j] = dz; hr[2 * H + j] = dn * r;
    ghx[k] = gy * z;
  }
}

template <typename T>
static kd_cuda_status kd_cu_rnn_cell_t(int device, int code, const kd_cu_rnn_p &a) {
  const unsigned grid = kd_cu_grid(device, a.B * a.H);
  cudaStream_t s = kd_cu_stream(device);
  switch (code) {
    case 0: KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_cu_lstm_kernel<T>)(a); break;
    case 1: KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_cu_lstm_backward_kernel<T>)(a); break;
    case 2: KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_cu_gru_kernel<T>)(a); break;
    default: KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_cu_gru_backward_kernel<T>)(a); break;
  }
  KD_CU_CHECK_LAUNCH("the fused RNN cell kernel");
  return KD_CUDA_OK;
}

kd_cuda_status kd_cu_rnn_cell(int device, kd_cuda_op *o) {
  static const int nops[4] = {5, 7, 5, 6};
  const int64_t B = o->i[0], H = o->i[1];
  if (o->code < 0 || o->code > 3 || o->nops != nops[o->code] || B < 0 || H < 0)
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "fused RNN cell: bad arguments");
  if (B == 0 || H == 0) return KD_CUDA_OK;
  kd_cu_rnn_p a;
  memset(&a, 0, sizeof a);
  for (int k = 0; k < o->nops; k++) a.p[k] = o->data[k];
  a.B = B;
  a.H = H;
  if (o->dtype == KD_DTYPE_F32) return kd_cu_rnn_cell_t<float>(device, o->code, a);
  if (o->dtype == KD_DTYPE_F64) return kd_cu_rnn_cell_t<double>(device, o->code, a);
  return kd_cu_not_supported("fused RNN cell", o->dtype);
}
