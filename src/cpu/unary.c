/* unary.c - CPU pointwise unary ops (neg, abs, exp, log, sqrt, relu, sigmoid, tanh) and their
 * in-place forms. exp/log/sqrt/sigmoid/tanh of integer or bool inputs compute in float32
 * (PyTorch's default dtype); neg/abs/relu keep the dtype. */
#include "cpu/cpu_loops.h"

/* Cases per kind; `x` is the CT input. NaN propagates through relu as in PyTorch. */
#define KD_UNARY_CASES_F(T, CT, LD, ST, MS, UT)                                               \
  case KD_UNARY_NEG: KD_LOOP1(T, T, CT, LD, ST, -x); break;                                   \
  case KD_UNARY_ABS: KD_LOOP1(T, T, CT, LD, ST, fabs##MS(x)); break;                          \
  case KD_UNARY_EXP: KD_LOOP1(T, T, CT, LD, ST, exp##MS(x)); break;                           \
  case KD_UNARY_LOG: KD_LOOP1(T, T, CT, LD, ST, log##MS(x)); break;                           \
  case KD_UNARY_SQRT: KD_LOOP1(T, T, CT, LD, ST, sqrt##MS(x)); break;                         \
  case KD_UNARY_RELU: KD_LOOP1(T, T, CT, LD, ST, x < (CT)0 ? (CT)0 : x); break;               \
  case KD_UNARY_SIGMOID: KD_LOOP1(T, T, CT, LD, ST, (CT)1 / ((CT)1 + exp##MS(-x))); break;    \
  case KD_UNARY_TANH: KD_LOOP1(T, T, CT, LD, ST, tanh##MS(x)); break;
#define KD_UNARY_CASES_I(T, CT, LD, ST, MS, UT)                                               \
  case KD_UNARY_NEG: KD_LOOP1(T, T, CT, LD, ST, (CT)((UT)0 - (UT)x)); break;                  \
  case KD_UNARY_ABS: KD_LOOP1(T, T, CT, LD, ST, KD_IS_NEG(x) ? (CT)((UT)0 - (UT)x) : x); break; \
  case KD_UNARY_RELU: KD_LOOP1(T, T, CT, LD, ST, KD_IS_NEG(x) ? (CT)0 : x); break;
#define KD_UNARY_CASES_B(T, CT, LD, ST, MS, UT) /* every op on bool errors or promotes */

#define KD_DEF_UNARY(SFX, DT, T, CT, LD, ST, MS, K, UT)                                       \
  static void kd_unary_loop_##SFX(void *ctx, char **data, const int64_t *strides, int64_t n) { \
    switch (*(const int *)ctx) {                                                              \
      KD_UNARY_CASES_##K(T, CT, LD, ST, MS, UT)                                               \
      default: break;                                                                         \
    }                                                                                         \
  }
KD_ROWS_ALL(KD_DEF_UNARY)
#define KD_UNARY_ENTRY(SFX, DT, ...) KD_LOOP_ENTRY(kd_unary_loop_, SFX, DT)
static const kd_iter_loop_fn kd_unary_loops[KD_DTYPE_COUNT] = {KD_ROWS_ALL(KD_UNARY_ENTRY)};

KD_KERNEL(kd_cpu_unary) {
  kd_tensor *self = args[0].v.t;
  int code = op->code;
  bool inplace = kd_op_is_inplace(op);
  bool to_float = code == KD_UNARY_EXP || code == KD_UNARY_LOG || code == KD_UNARY_SQRT ||
                  code == KD_UNARY_SIGMOID || code == KD_UNARY_TANH;
  if (self->dtype == KD_DTYPE_BOOL) {
    if (code == KD_UNARY_NEG)
      return kd_error(KD_ERR_DTYPE,
                      "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a "
                      "mask, use the `~` or `logical_not()` operator instead.");
    if (code == KD_UNARY_RELU) return kd_error(KD_ERR_DTYPE, "Boolean inputs not supported for relu");
    if (code == KD_UNARY_ABS) return kd_error(KD_ERR_DTYPE, "\"abs_cpu\" not implemented for 'Bool'");
  }
  kd_dtype ct = to_float && !kd_dtype_is_float(self->dtype) ? KD_DTYPE_DEFAULT : self->dtype;
  if (inplace) {
    KD_TRY(kd_cpu_check_inplace_cast(ct, self->dtype));
    KD_TRY(kd_cpu_check_no_internal_overlap(self));
  }

  kd_tensor *in = NULL, *out = NULL;
  kd_status st = kd_cpu_cast(self, ct, false, &in);
  if (st != KD_OK) return st;
  /* in place writes straight into self (ct == self's dtype here: can_cast passed and the
   * only dtype change is int -> float, which it refuses) */
  if (inplace) {
    out = self;
    kd_tensor_retain(out);
  } else {
    st = kd_tensor_empty(self->sizes, self->ndim, ct, kd_tensor_device(self), &out);
  }
  if (st == KD_OK) {
    kd_iter_operand ops[2] = {kd_iter_operand_of(out), kd_iter_operand_of(in)};
    kd_iter it;
    st = kd_iter_build(&it, ops, 2, 1, 0);
    if (st == KD_OK) kd_iter_for_each(&it, kd_unary_loops[ct], &code);
  }
  kd_tensor_release(in);
  if (st != KD_OK) {
    if (out) kd_tensor_release(out);
    return st;
  }
  kd_out_take(outs, 0, out);
  return KD_OK;
}
