/* autograd_fused.c - fused kernels that backward formulas call (op list:
 * src/ops/oplist/autograd_fused.js), so a gradient that would take several pointwise passes and
 * temporaries takes one.
 *   thresholdBackward(gradOutput, self, threshold) = self <= threshold ? 0 : gradOutput
 *     (PyTorch's threshold_backward: the gradient of relu and threshold in ONE pass instead of
 *     `where(result > 0, grad, 0)`'s comparison, bool temporary and select).
 * Registered as a generic kernel, the same function for every device (Note [Device kernels
 * through the CPU kernels] in src/ops/ew_codes.h): result type, checks, broadcasting and casts
 * here, then one pass: the CPU loop through the strided iterator (any strides, threads), or the
 * device's binary code KD_BX_THRESHOLD_BW. */
#include "cpu/cpu_loops.h"
#include "ops/ew_codes.h"
#include "ops/ops_gen.h"

/* out = b <= threshold ? 0 : a, with a = gradOutput, b = self, in the compute type CT; the
 * threshold is the kd_ew_desc's, as the device reads it: p[0] for floating rows, i[0] (already
 * in the dtype's range) for integer rows. */
#define KD_THR_F(d) ((d)->p[0])
#define KD_THR_I(d) ((d)->i[0])
#define KD_DEF_THRESHOLD_BW(SFX, DT, T, CT, LD, ST, MS, K, U)                                  \
  static void kd_threshold_bw_loop_##SFX(void *ctx, char **data, const int64_t *strides, int64_t n) { \
    const CT th = (CT)KD_THR_##K((const kd_ew_desc *)ctx);                                    \
    KD_LOOP2(T, T, CT, LD, ST, (b <= th ? (CT)0 : a));                                        \
  }
KD_ROWS_FLOAT(KD_DEF_THRESHOLD_BW)
KD_ROWS_INT(KD_DEF_THRESHOLD_BW)

#define KD_THR_ENTRY(SFX, DT, T, CT, LD, ST, MS, K, U) [DT] = kd_threshold_bw_loop_##SFX,
static const kd_iter_loop_fn kd_threshold_bw_loops[KD_DTYPE_COUNT] = {KD_ROWS_FLOAT(KD_THR_ENTRY) KD_ROWS_INT(KD_THR_ENTRY)};

KD_KERNEL(kd_threshold_backward) {
  (void)op;
  (void)ks;
  kd_tensor *grad = args[0].v.t, *self = args[1].v.t;
  kd_scalar th = args[2].v.s;
  if (!kd_device_eq(kd_tensor_device(grad), kd_tensor_device(self)))
    return kd_error(KD_ERR_DEVICE, "Expected all tensors to be on the same device, but found at least two devices");

  kd_result_type_state rs;
  kd_result_type_init(&rs);
  kd_result_type_add_tensor(&rs, grad->dtype, grad->ndim);
  kd_result_type_add_tensor(&rs, self->dtype, self->ndim);
  kd_dtype ct = kd_result_type_finish(&rs);
  kd_iter_loop_fn loop = (int)ct < KD_DTYPE_COUNT ? kd_threshold_bw_loops[ct] : NULL;
  if (!loop) return kd_error(KD_ERR_NOT_SUPPORTED, "\"threshold_cpu\" not implemented for '%s'", kd_cpu_torch_name(ct));
  int64_t shape[KD_MAX_DIMS];
  int nd = 0;
  KD_TRY(kd_shape_broadcast(grad->sizes, grad->ndim, self->sizes, self->ndim, shape, &nd));

  kd_tensor *g = NULL, *s = NULL, *out = NULL;
  kd_status st = kd_cpu_cast(grad, ct, false, &g);
  if (st == KD_OK) st = kd_cpu_cast(self, ct, false, &s);
  if (st == KD_OK) st = kd_tensor_empty(shape, nd, ct, kd_tensor_device(grad), &out);
  if (st == KD_OK) {
    kd_ew_desc d;
    memset(&d, 0, sizeof d);
    d.family = KD_EW_BINARY;
    d.code = KD_BX_THRESHOLD_BW;
    d.p[0] = kd_scalar_to_double(th);
    if (!kd_dtype_is_float(ct)) { /* the threshold as the dtype holds it */
      int64_t raw = 0;
      kd_scalar_store(th, ct, &raw);
      d.i[0] = kd_scalar_to_int(kd_scalar_load(ct, &raw));
    }
    kd_iter_operand ops[3] = {kd_iter_operand_of(out), kd_iter_operand_of(g), kd_iter_operand_of(s)};
    kd_iter it;
    st = kd_iter_build(&it, ops, 3, 1, 0);
    if (st == KD_OK) st = kd_cpu_iter_run(kd_tensor_device(out), &it, ops, loop, &d, &d);
  }
  if (g) kd_tensor_release(g);
  if (s) kd_tensor_release(s);
  if (st != KD_OK) {
    if (out) kd_tensor_release(out);
    return st;
  }
  kd_out_take(outs, 0, out);
  return KD_OK;
}
