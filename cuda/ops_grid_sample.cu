/* ops_grid_sample.cu - the device kernels of gridSample and its gradients (KD_CUDA_OP_GRID_SAMPLE;
 * src/cpu/grid_sample.c checks, makes the tensors contiguous in the compute dtype and lays out the
 * operands; src/cpu/grid_sample_math.h holds the coordinate arithmetic and taps both compile).
 * One thread per output position (n, p), grid-stride, as ATen's grid_sampler_2d_kernel:
 *   forward      reads its grid entry, computes the taps once, then loops over the channels;
 *                consecutive threads are consecutive positions, so the grid reads and the
 *                output writes (y[n][c][p]) are coalesced; the input reads are the gather.
 *   input grad   the same walk over gradOutput (coalesced), atomicAdd of weight * gradient into
 *                the input gradient (zeroed first on the stream): positions that share an input
 *                element add in an unspecified order, as on PyTorch's CUDA.
 *   grid grad    the same walk, accumulating the weights' derivatives times the input values in
 *                registers, one coalesced write of nd values per position (zeros for nearest).
 * The kernels are instantiated per dtype, spatial rank and mode, so the taps' loops unroll and
 * their arrays stay in registers. No host sync. */
#include "ops_shape.cuh"

#include "../src/cpu/grid_sample_math.h"

struct kd_cu_gs_p {
  kd_gs_geom geo;
  int64_t N, C, P, S;
  const void *x, *grid, *gout;
  void *y, *gx, *gg;
};

/* A position's taps, with the rank and mode as constants so that their loops unroll and their
 * arrays stay in registers. */
#define KD_CU_GS_TAPS(T, SFX)                                                                      \
  kd_gs_geom geo = a.geo;                                                                          \
  geo.nd = ND;                                                                                     \
  geo.mode = MODE;                                                                                 \
  const int64_t n = q / a.P, p = q % a.P;                                                          \
  kd_gs_taps_##SFX t;                                                                              \
  kd_gs_taps_of_##SFX(&geo, (const T *)a.grid + q * ND, &t)

#define KD_CU_GS_KERNELS(T, SFX)                                                                   \
  template <int ND, int MODE>                                                                      \
  __global__ void kd_cu_gs_fwd_##SFX(const kd_cu_gs_p a) {                                         \
    KD_CU_FOR(q, a.N * a.P) {                                                                      \
      KD_CU_GS_TAPS(T, SFX);                                                                       \
      const T *x = (const T *)a.x + n * a.C * a.S;                                                 \
      T *y = (T *)a.y + n * a.C * a.P + p;                                                         \
      for (int64_t c = 0; c < a.C; c++, x += a.S, y += a.P) *y = kd_gs_read_##SFX(&t, x, ND, MODE); \
    }                                                                                              \
  }                                                                                                \
  template <int ND, int MODE>                                                                      \
  __global__ void kd_cu_gs_bwd_input_##SFX(const kd_cu_gs_p a) {                                   \
    KD_CU_FOR(q, a.N * a.P) {                                                                      \
      KD_CU_GS_TAPS(T, SFX);                                                                       \
      T *gx = (T *)a.gx + n * a.C * a.S;                                                           \
      const T *go = (const T *)a.gout + n * a.C * a.P + p;                                         \
      for (int64_t c = 0; c < a.C; c++, gx += a.S, go += a.P) {                                    \
        const T g = *go;                                                                           \
        KD_GS_SCATTER(t, g, ND, MODE, KD_CU_GS_ADD);                                               \
      }                                                                                            \
    }                                                                                              \
  }                                                                                                \
  template <int ND, int MODE>                                                                      \
  __global__ void kd_cu_gs_bwd_grid_##SFX(const kd_cu_gs_p a) {                                    \
    KD_CU_FOR(q, a.N * a.P) {                                                                      \
      T *gg = (T *)a.gg + q * ND;                                                                  \
      T acc[3] = {0, 0, 0};                                                                        \
      if (MODE != KD_GS_NEAREST) { /* nearest has no gradient: zeros, as PyTorch */                \
        KD_CU_GS_TAPS(T, SFX);                                                                     \
        const T *x = (const T *)a.x + n * a.C * a.S;                                               \
        const T *go = (const T *)a.gout + n * a.C * a.P + p;                                       \
        for (int64_t c = 0; c < a.C; c++, x += a.S, go += a.P) kd_gs_grid_acc_##SFX(&t, x, *go, ND, MODE, acc); \
        for (int d = 0; d < ND; d++) acc[d] *= t.gm[d];                                            \
      }                                                                                            \
      for (int d = 0; d < ND; d++) gg[d] = acc[d];                                                 \
    }                                                                                              \
  }
#define KD_CU_GS_ADD(o, v) atomicAdd(gx + (o), (v))
KD_CU_GS_KERNELS(float, f32)
KD_CU_GS_KERNELS(double, f64)

/* Launches pass `code` (0 forward, 1 input gradient, 2 grid gradient) for rank ND, mode MODE. */
#define KD_CU_GS_LAUNCH(SFX, ND, MODE)                                                             \
  do {                                                                                             \
    if (o->code == 0) KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_cu_gs_fwd_##SFX<ND, MODE>)(a);      \
    else if (o->code == 1) KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_cu_gs_bwd_input_##SFX<ND, MODE>)(a); \
    else KD_LAUNCH(grid, KD_CU_THREADS, 0, s, kd_cu_gs_bwd_grid_##SFX<ND, MODE>)(a);              \
  } while (0)

#define KD_CU_GS_DISPATCH(SFX)                                                                     \
  do {                                                                                             \
    if (a.geo.nd == 2) {                                                                           \
      if (a.geo.mode == KD_GS_BILINEAR) KD_CU_GS_LAUNCH(SFX, 2, KD_GS_BILINEAR);                   \
      else if (a.geo.mode == KD_GS_NEAREST) KD_CU_GS_LAUNCH(SFX, 2, KD_GS_NEAREST);                \
      else KD_CU_GS_LAUNCH(SFX, 2, KD_GS_BICUBIC);                                                 \
    } else {                                                                                       \
      if (a.geo.mode == KD_GS_BILINEAR) KD_CU_GS_LAUNCH(SFX, 3, KD_GS_BILINEAR);                   \
      else KD_CU_GS_LAUNCH(SFX, 3, KD_GS_NEAREST);                                                 \
    }                                                                                              \
  } while (0)

kd_cuda_status kd_cu_grid_sample_op(int device, kd_cuda_op *o) {
  kd_cu_gs_p a;
  memset(&a, 0, sizeof a);
  a.N = o->i[0];
  a.C = o->i[1];
  a.geo.nd = (int)o->d[0];
  a.geo.mode = (int)o->d[1];
  a.geo.pad = (int)o->d[2];
  a.geo.align = o->d[3] != 0;
  a.S = a.P = 1;
  bool ok = o->nops >= 5 && a.N >= 0 && a.C >= 0 && (a.geo.nd == 2 || a.geo.nd == 3) && a.geo.mode >= 0 && a.geo.mode <= 2 &&
            a.geo.pad >= 0 && a.geo.pad <= 2 && !(a.geo.nd == 3 && a.geo.mode == KD_GS_BICUBIC) && o->code >= 0 && o->code <= 2;
  for (int d = 0; ok && d < 3; d++) {
    a.geo.in[d] = o->i[2 + d];
    ok = a.geo.in[d] >= 1 && o->i[5 + d] >= 0;
    a.S *= a.geo.in[d];
    a.P *= o->i[5 + d];
  }
  if (!ok) return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "grid_sample: bad arguments");
  a.x = o->data[0];
  a.grid = o->data[1];
  if (o->code == 0) a.y = o->data[2];
  else a.gout = o->data[2];
  a.gx = o->data[3];
  a.gg = o->data[4];
  if ((o->code == 0 && !a.y) || (o->code == 1 && !a.gx) || (o->code == 2 && !a.gg))
    return kd_cu_error(KD_CUDA_ERR_INVALID_ARGUMENT, "grid_sample: missing operand");
  cudaStream_t s = kd_cu_stream(device);
  const size_t esz = o->dtype == KD_DTYPE_F64 ? sizeof(double) : sizeof(float);
  if (o->code == 1) KD_CU_CHECK(cudaMemsetAsync(a.gx, 0, (size_t)(a.N * a.C * a.S) * esz, s));
  const int64_t n = a.N * a.P;
  if (n == 0) return KD_CUDA_OK;
  const auto grid = kd_cu_grid(device, n);
  switch (o->dtype) {
    case KD_DTYPE_F32: KD_CU_GS_DISPATCH(f32); break;
    case KD_DTYPE_F64: KD_CU_GS_DISPATCH(f64); break;
    default: return kd_cu_not_supported("grid_sample", o->dtype);
  }
  KD_CU_CHECK_LAUNCH("the grid_sample kernel");
  return KD_CUDA_OK;
}
