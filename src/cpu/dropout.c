/* dropout.c - CPU kernel of kd._internal.nativeDropout(input, p, train) -> (output, mask), the
 * op behind kd.nn.functional.dropout (src/ops/nn_composites.c).
 *
 * Element i of the (contiguous, row-major) input is kept when the float32 uniform draw of
 * Note [Random number mapping] (src/core/random.h) for (seed, offset, i) is < 1 - p, as
 * PyTorch's bernoulli_(1 - p); kept elements are scaled by 1 / (1 - p) (0 when p == 1).
 * One generator offset per call, so results do not depend on threads. The input is read
 * contiguous in its own dtype (kd_cpu_cast copies only non-contiguous inputs); halves are
 * computed in float32. Elementwise with a random stream indexed by the element's position,
 * so this is a plain parallel loop over blocks of four elements (one Philox block each)
 * rather than an iterator loop. */
#include "core/parallel.h"
#include "core/random.h"
#include "cpu/cpu_loops.h"
#include "cpu/device_hooks.h"

typedef struct kd_drop_job {
  const char *x;
  char *y;
  uint8_t *mask;
  int64_t n;
  uint64_t seed, offset;
  float keep_below; /* 1 - p */
  double scale;
} kd_drop_job;

#define KD_DEF_DROP(SFX, DT, T, CT, LD, ST, MS, K, UT)                                        \
  static void kd_drop_##SFX(void *p, int64_t begin, int64_t end) {                            \
    const kd_drop_job *j = (const kd_drop_job *)p;                                            \
    const T *x = (const T *)j->x;                                                             \
    T *y = (T *)j->y;                                                                         \
    const CT scale = (CT)j->scale;                                                            \
    for (int64_t blk = begin; blk < end; blk++) {                                             \
      uint32_t w[4];                                                                          \
      kd_philox_block(j->seed, j->offset, (uint64_t)blk, w);                                  \
      int64_t i0 = blk * 4, i1 = i0 + 4 < j->n ? i0 + 4 : j->n;                               \
      for (int64_t i = i0; i < i1; i++) {                                                     \
        uint8_t keep = kd_random_u32_to_f32(w[i - i0]) < j->keep_below;                       \
        j->mask[i] = keep;                                                                    \
        y[i] = ST(keep ? LD(x[i]) * scale : (CT)0);                                           \
      }                                                                                       \
    }                                                                                         \
  }
KD_ROWS_FLOAT(KD_DEF_DROP)
#define KD_DROP_ENTRY(SFX, DT, ...) [DT] = kd_drop_##SFX,
static const kd_parallel_fn kd_drop_fns[KD_DTYPE_COUNT] = {KD_ROWS_FLOAT(KD_DROP_ENTRY)};

KD_KERNEL(kd_cpu_native_dropout) {
  (void)op;
  (void)ks;
  kd_tensor *input = args[0].v.t;
  double p = args[1].v.d;
  bool train = args[2].v.b;
  if (!(p >= 0 && p <= 1)) return kd_error(KD_ERR_INVALID_ARGUMENT, "dropout probability has to be between 0 and 1, but got %g", p);
  if (!kd_dtype_is_float(input->dtype))
    return kd_error(KD_ERR_NOT_SUPPORTED, "\"bernoulli_scalar_cpu_\" not implemented for '%s'", kd_cpu_torch_name(input->dtype));
  kd_device dev = kd_tensor_device(input);
  kd_tensor *y = NULL, *mask = NULL, *x = NULL;
  kd_status st = kd_tensor_empty(input->sizes, input->ndim, input->dtype, dev, &y);
  if (st == KD_OK) st = kd_tensor_empty(input->sizes, input->ndim, KD_DTYPE_BOOL, dev, &mask);
  int64_t n = kd_tensor_numel(input);
  if (st == KD_OK && dev.type != KD_DEVICE_CPU) { /* the device hook; eval: keep all, no draw */
    st = kd_cpu_cast(input, input->dtype, true, &x);
    if (st == KD_OK && n > 0) {
      kd_dev_random r;
      memset(&r, 0, sizeof r);
      r.dev = dev;
      r.kind = KD_DEV_RANDOM_DROPOUT;
      r.dtype = input->dtype;
      r.n = n;
      if (train) r.offset = kd_random_next_offset(&r.seed);
      r.keep_below = train ? (float)(1.0 - p) : 2.0f;
      r.scale = !train ? 1.0 : p == 1 ? 0.0 : 1.0 / (1.0 - p);
      r.x = kd_tensor_data(x);
      r.y = kd_tensor_data(y);
      r.mask = kd_tensor_data(mask);
      st = kd_cpu_device_random ? kd_cpu_device_random(&r)
                                : kd_error(KD_ERR_NOT_SUPPORTED, "no random kernels are registered for this device");
    }
  } else if (st == KD_OK && !train) {
    memset(kd_tensor_data(mask), 1, (size_t)n);
    st = kd_cpu_copy_into(y, input);
  } else if (st == KD_OK) {
    st = kd_cpu_cast(input, input->dtype, true, &x);
    if (st == KD_OK && n > 0) {
      kd_drop_job j;
      j.x = kd_tensor_data(x);
      j.y = kd_tensor_data(y);
      j.mask = (uint8_t *)kd_tensor_data(mask);
      j.n = n;
      j.offset = kd_random_next_offset(&j.seed);
      j.keep_below = (float)(1.0 - p);
      j.scale = p == 1 ? 0.0 : 1.0 / (1.0 - p);
      kd_parallel_for(0, (n + 3) / 4, KD_PARALLEL_GRAIN / 4, kd_drop_fns[input->dtype], &j);
    }
  }
  if (x) kd_tensor_release(x);
  if (st != KD_OK) {
    if (y) kd_tensor_release(y);
    if (mask) kd_tensor_release(mask);
    return st;
  }
  kd_out_take(outs, 0, y);
  kd_out_take(outs, 1, mask);
  return KD_OK;
}
