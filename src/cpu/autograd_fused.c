/* autograd_fused.c - fused kernels that backward formulas call (op list:
 * src/ops/oplist/autograd_fused.js), so a gradient that would take several pointwise passes and
 * temporaries takes one.
 *   thresholdBackward(gradOutput, self, threshold) = self <= threshold ? 0 : gradOutput
 *     (PyTorch's threshold_backward: the gradient of relu and threshold in ONE pass instead of
 *     `where(result > 0, grad, 0)`'s comparison, bool temporary and select).
 * Registered as a generic kernel: on the CPU it runs its own loop through the strided iterator
 * (broadcasting, any strides, threads); on other devices it decomposes into le + where, which
 * every backend has. */
#include "cpu/cpu_loops.h"
#include "ops/ops_gen.h"

/* out = b <= threshold ? 0 : a, with a = gradOutput, b = self, in the compute type CT. */
#define KD_DEF_THRESHOLD_BW(SFX, DT, T, CT, LD, ST, MS, K, U)                                  \
  static void kd_threshold_bw_loop_##SFX(void *ctx, char **data, const int64_t *strides, int64_t n) { \
    const CT th = (CT)(*(const double *)ctx);                                                 \
    KD_LOOP2(T, T, CT, LD, ST, (b <= th ? (CT)0 : a));                                        \
  }
KD_ROWS_FLOAT(KD_DEF_THRESHOLD_BW)
KD_ROWS_INT(KD_DEF_THRESHOLD_BW)

#define KD_THR_ENTRY(SFX, DT, T, CT, LD, ST, MS, K, U) [DT] = kd_threshold_bw_loop_##SFX,
static const kd_iter_loop_fn kd_threshold_bw_loops[KD_DTYPE_COUNT] = {KD_ROWS_FLOAT(KD_THR_ENTRY) KD_ROWS_INT(KD_THR_ENTRY)};

/* Other devices: where(self <= threshold, 0, gradOutput). */
static kd_status kd_threshold_backward_composite(kd_tensor *grad, kd_tensor *self, kd_scalar th, kd_value *outs) {
  kd_tensor *mask = NULL, *r = NULL;
  kd_value a[2] = {kd_value_tensor(self), kd_value_scalar(th)};
  KD_TRY(kd_call1(KD_OP_le, a, &mask));
  kd_value w[3] = {kd_value_tensor(mask), kd_value_scalar(kd_scalar_i(0)), kd_value_tensor(grad)};
  kd_status st = kd_call1(KD_OP_where, w, &r);
  kd_tensor_release(mask);
  if (st != KD_OK) return st;
  kd_out_take(outs, 0, r);
  return KD_OK;
}

KD_KERNEL(kd_threshold_backward) {
  (void)op;
  (void)ks;
  kd_tensor *grad = args[0].v.t, *self = args[1].v.t;
  kd_scalar th = args[2].v.s;
  if (!kd_device_eq(kd_tensor_device(grad), kd_tensor_device(self)))
    return kd_error(KD_ERR_DEVICE, "Expected all tensors to be on the same device, but found at least two devices");
  if (kd_tensor_device(grad).type != KD_DEVICE_CPU) return kd_threshold_backward_composite(grad, self, th, outs);

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
  if (st == KD_OK) st = kd_tensor_empty(shape, nd, ct, kd_device_cpu(), &out);
  if (st == KD_OK) {
    kd_iter_operand ops[3] = {kd_iter_operand_of(out), kd_iter_operand_of(g), kd_iter_operand_of(s)};
    kd_iter it;
    st = kd_iter_build(&it, ops, 3, 1, 0);
    double thd = kd_scalar_to_double(th);
    if (st == KD_OK) kd_iter_for_each(&it, loop, &thd);
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
