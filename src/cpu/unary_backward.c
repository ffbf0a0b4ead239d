/* unary_backward.c - CPU kernels of the activations' backward ops (kd._internal.geluBackward,
 * siluBackward, mishBackward, eluBackward; codes KD_ACTBW_*): grad_input = grad * f'(x) as
 * PyTorch's gelu_backward / silu_backward / mish_backward / elu_backward compute it. grad and
 * x broadcast and promote like a binary op; floating dtypes only (float16/bfloat16 in float32).
 * One loop per floating dtype through the strided iterator; on a device the same iteration goes
 * to KD_DEV_OP_ACT_BACKWARD (cuda/ops_shape.cu). */
#include "cpu/cpu_loops.h"
#include "cpu/unary_math.h"
#include "cpu/device_op.h"

enum { KD_ABX_GELU_TANH = 100, KD_ABX_ELU_RESULT };

typedef struct kd_actbw_ctx {
  int code;
  double negcoef, poscoef, negiptcoef; /* elu: alpha * scale, scale, inputScale */
} kd_actbw_ctx;

/* `a` is grad, `b` is x (self, or elu's result when isResult) */
#define KD_ACTBW_CASES(T, CT, LD, ST, MS, c)                                                  \
  case KD_ACTBW_GELU:                                                                         \
    KD_LOOP2(T, T, CT, LD, ST,                                                                \
             a * ((CT)0.5 * ((CT)1 + kd_vm_erf##MS(b * (CT)0.70710678118654752)) +            \
                  b * kd_vm_exp##MS((CT)-0.5 * b * b) * (CT)0.39894228040143268));           \
    break;                                                                                    \
  case KD_ABX_GELU_TANH: {                                                                    \
    const CT kb = (CT)0.7978845608028654, kk = (CT)0.044715;                                  \
    KD_LOOP2(T, T, CT, LD, ST,                                                                \
             a * ((CT)0.5 * ((CT)1 + kd_vm_tanh##MS(kb * (b + kk * b * b * b))) +             \
                  (CT)0.5 * b * ((CT)1 - kd_vm_tanh##MS(kb * (b + kk * b * b * b)) *          \
                                             kd_vm_tanh##MS(kb * (b + kk * b * b * b))) *     \
                      kb * ((CT)1 + (CT)3 * kk * b * b)));                                    \
    break;                                                                                    \
  }                                                                                           \
  case KD_ACTBW_SILU:                                                                         \
    KD_LOOP2(T, T, CT, LD, ST,                                                                \
             a / ((CT)1 + kd_vm_exp##MS(-b)) * ((CT)1 + b * ((CT)1 - (CT)1 / ((CT)1 + kd_vm_exp##MS(-b))))); \
    break;                                                                                    \
  case KD_ACTBW_MISH:                                                                         \
    KD_LOOP2(T, T, CT, LD, ST,                                                                \
             a * (kd_vm_tanh##MS(kd_vm_log1p##MS(kd_vm_exp##MS(b))) +                         \
                  b / ((CT)1 + kd_vm_exp##MS(-b)) *                                           \
                      ((CT)1 - kd_vm_tanh##MS(kd_vm_log1p##MS(kd_vm_exp##MS(b))) *            \
                                   kd_vm_tanh##MS(kd_vm_log1p##MS(kd_vm_exp##MS(b))))));      \
    break;                                                                                    \
  case KD_ACTBW_ELU: {                                                                        \
    const CT ng = (CT)(c)->negcoef, ps = (CT)(c)->poscoef, ni = (CT)(c)->negiptcoef;          \
    KD_LOOP2(T, T, CT, LD, ST, b <= (CT)0 ? a * ni * ng * kd_vm_exp##MS(b * ni) : a * ps);    \
    break;                                                                                    \
  }                                                                                           \
  case KD_ABX_ELU_RESULT: {                                                                   \
    const CT ng = (CT)(c)->negcoef, ps = (CT)(c)->poscoef, ni = (CT)(c)->negiptcoef;          \
    KD_LOOP2(T, T, CT, LD, ST, b <= (CT)0 ? a * ni * (b + ng) : a * ps);                      \
    break;                                                                                    \
  }

#define KD_DEF_ACTBW(SFX, DT, T, CT, LD, ST, MS, K, UT)                                       \
  static void kd_actbw_loop_##SFX(void *ctx, char **data, const int64_t *strides, int64_t n) { \
    const kd_actbw_ctx *c_ = (const kd_actbw_ctx *)ctx;                                       \
    switch (c_->code) {                                                                       \
      KD_ACTBW_CASES(T, CT, LD, ST, MS, c_)                                                   \
      default: break;                                                                         \
    }                                                                                         \
  }
KD_ROWS_FLOAT(KD_DEF_ACTBW)
#define KD_ACTBW_ENTRY(SFX, DT, ...) KD_LOOP_ENTRY(kd_actbw_loop_, SFX, DT)
static const kd_iter_loop_fn kd_actbw_loops[KD_DTYPE_COUNT] = {KD_ROWS_FLOAT(KD_ACTBW_ENTRY)};

KD_KERNEL(kd_cpu_act_backward) {
  kd_tensor *grad = args[0].v.t, *x;
  kd_actbw_ctx ctx = {op->code, 0, 0, 0};
  const char *kname = "";
  switch (op->code) {
    case KD_ACTBW_GELU: {
      const char *a = args[2].kind == KD_VALUE_STRING && args[2].v.str ? args[2].v.str : "none";
      if (strcmp(a, "tanh") == 0) ctx.code = KD_ABX_GELU_TANH;
      else if (strcmp(a, "none") != 0)
        return kd_error(KD_ERR_INVALID_ARGUMENT, "approximate argument must be either none or tanh.");
      x = args[1].v.t;
      kname = "GeluBackwardKernelImpl";
      break;
    }
    case KD_ACTBW_SILU: x = args[1].v.t; kname = "silu_backward_cpu"; break;
    case KD_ACTBW_MISH: x = args[1].v.t; kname = "mish_backward_cpu"; break;
    case KD_ACTBW_ELU: {
      double alpha = args[1].v.d, scale = args[2].v.d, iscale = args[3].v.d;
      bool is_result = args[4].v.b;
      if (is_result && alpha < 0)
        return kd_error(KD_ERR_INVALID_ARGUMENT,
                        "In-place elu backward calculation is triggered with a negative slope which is not supported. "
                        "This is caused by calling in-place forward function with a negative slope, please call "
                        "out-of-place version instead.");
      ctx.negcoef = alpha * scale;
      ctx.poscoef = scale;
      ctx.negiptcoef = iscale;
      if (is_result) ctx.code = KD_ABX_ELU_RESULT;
      x = args[5].v.t;
      kname = "elu_backward_cpu";
      break;
    }
    default: return kd_error(KD_ERR_NOT_SUPPORTED, "unknown activation backward code %d", op->code);
  }
  kd_result_type_state rs;
  kd_result_type_init(&rs);
  kd_result_type_add_tensor(&rs, grad->dtype, grad->ndim);
  kd_result_type_add_tensor(&rs, x->dtype, x->ndim);
  kd_dtype ct = kd_result_type_finish(&rs);
  if (!kd_dtype_is_float(ct))
    return kd_error(KD_ERR_DTYPE, "\"%s\" not implemented for '%s'", kname, kd_cpu_torch_name(ct));
  int64_t shape[KD_MAX_DIMS];
  int nd;
  KD_TRY(kd_shape_broadcast(grad->sizes, grad->ndim, x->sizes, x->ndim, shape, &nd));

  kd_tensor *g = NULL, *xs = NULL, *out = NULL;
  kd_status st = kd_cpu_cast(grad, ct, false, &g);
  if (st == KD_OK) st = kd_cpu_cast(x, ct, false, &xs);
  if (st == KD_OK) st = kd_tensor_empty(shape, nd, ct, kd_tensor_device(grad), &out);
  if (st == KD_OK) {
    kd_iter_operand ops[3] = {kd_iter_operand_of(out), kd_iter_operand_of(g), kd_iter_operand_of(xs)};
    kd_iter it;
    st = kd_iter_build(&it, ops, 3, 1, 0);
    if (st == KD_OK && kd_tensor_device(out).type != KD_DEVICE_CPU) { /* cuda/ops_shape.cu */
      kd_dev_op d;
      memset(&d, 0, sizeof d);
      d.kind = KD_DEV_OP_ACT_BACKWARD;
      d.dtype = ct;
      d.it = &it;
      d.ops = ops;
      d.i[0] = ctx.code == KD_ACTBW_GELU ? 0 : ctx.code == KD_ABX_GELU_TANH ? 1 : ctx.code == KD_ACTBW_SILU ? 2
             : ctx.code == KD_ACTBW_MISH ? 3 : ctx.code == KD_ACTBW_ELU ? 4 : 5;
      d.d[0] = ctx.negcoef;
      d.d[1] = ctx.poscoef;
      d.d[2] = ctx.negiptcoef;
      if (it.numel) st = kd_cpu_device_run(kd_tensor_device(out), &d);
    } else if (st == KD_OK) {
      kd_iter_for_each(&it, kd_actbw_loops[ct], &ctx);
    }
  }
  if (g) kd_tensor_release(g);
  if (xs) kd_tensor_release(xs);
  if (st != KD_OK) {
    if (out) kd_tensor_release(out);
    return st;
  }
  kd_out_take(outs, 0, out);
  return KD_OK;
}
