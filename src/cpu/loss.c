/* loss.c - CPU loss kernels:
 *   kd_cpu_pointwise_loss           mseLoss, l1Loss, smoothL1Loss, binaryCrossEntropy and
 *                                   binaryCrossEntropyWithLogits (op code KD_LOSS_*): the
 *                                   elementwise loss through the strided iterator (input,
 *                                   target, weight and posWeight broadcast, computed in
 *                                   float32/float64), then sum or mean through the sum/mean ops.
 *   kd_cpu_pointwise_loss_backward  their input (or target) gradients, elementwise likewise.
 *   kd_cpu_nll_loss(_backward)      nllLoss over (C), (N, C) and (N, C, d1, ...) inputs with
 *                                   class-index targets: a gather, so it reads a contiguous copy
 *                                   of the input ([N, C, D] indexing) rather than iterating.
 * crossEntropy is the composite logSoftmax + nllLoss (src/ops/nn_composites.c), as in PyTorch.
 * On a device the same passes go to the device hook (KD_DEV_OP_LOSS, KD_DEV_OP_NLL_CHECK,
 * KD_DEV_OP_NLL; cuda/ops_loss.cu) and the sums to the sum op.
 * Messages are PyTorch's (the shape ones name torch.Size as F.binary_cross_entropy does). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cpu/cpu_loops.h"
#include "cpu/device_op.h"

enum { KD_RED_NONE = 0, KD_RED_MEAN = 1, KD_RED_SUM = 2 };

static kd_status kd_loss_reduction(const kd_value *v, int *out) {
  *out = KD_RED_MEAN;
  const char *s = v->kind == KD_VALUE_STRING ? v->v.str : "mean";
  if (!strcmp(s, "none")) *out = KD_RED_NONE;
  else if (!strcmp(s, "mean")) *out = KD_RED_MEAN;
  else if (!strcmp(s, "sum")) *out = KD_RED_SUM;
  else return kd_error(KD_ERR_INVALID_ARGUMENT, "%s is not a valid value for reduction", s);
  return KD_OK;
}

/* "torch.Size([2, 3])" */
static const char *kd_loss_torch_size(const kd_tensor *t, char *buf, int n) {
  char s[128];
  kd_shape_format(t->sizes, t->ndim, s, sizeof s);
  snprintf(buf, (size_t)n, "torch.Size(%s)", s);
  return buf;
}

static bool kd_loss_same_shape(const kd_tensor *a, const kd_tensor *b) {
  return a->ndim == b->ndim && memcmp(a->sizes, b->sizes, sizeof(int64_t) * a->ndim) == 0;
}

/* ---- elementwise losses and their gradients ---- */
/* Operands: 0 out, 1 input, 2 target, 3 weight, 4 posWeight, [5 grad]; all of type T. */
typedef struct kd_loss_ctx {
  int code;     /* KD_LOSS_* (forward) or kind 1..4 (backward) */
  bool target;  /* backward: the gradient with respect to target */
  bool has_pw;
  double beta, gscale;
} kd_loss_ctx;

#define KD_DEF_LOSS(SFX, T, LOG, LOG1P, EXP, FABS)                                            \
  static T kd_loss_elem_##SFX(const kd_loss_ctx *c, T x, T t, T w, T pw) {                    \
    switch (c->code) {                                                                        \
      case KD_LOSS_MSE: return (x - t) * (x - t);                                             \
      case KD_LOSS_L1: return FABS(x - t);                                                    \
      case KD_LOSS_SMOOTH_L1: {                                                               \
        T d = FABS(x - t), b = (T)c->beta;                                                    \
        return b == 0 ? d : d < b ? (T)0.5 * d * d / b : d - (T)0.5 * b;                      \
      }                                                                                       \
      case KD_LOSS_BCE: {                                                                     \
        T l1 = LOG1P(-x), l0 = LOG(x);                                                        \
        l1 = l1 < (T)-100 ? (T)-100 : l1;                                                     \
        l0 = l0 < (T)-100 ? (T)-100 : l0;                                                     \
        return w * ((t - 1) * l1 - t * l0);                                                   \
      }                                                                                       \
      default: { /* KD_LOSS_BCE_LOGITS */                                                     \
        T m = -x > 0 ? -x : (T)0;                                                             \
        T lw = c->has_pw ? (pw - 1) * t + 1 : (T)1;                                           \
        return w * ((1 - t) * x + lw * (LOG(EXP(-m) + EXP(-x - m)) + m));                     \
      }                                                                                       \
    }                                                                                         \
  }                                                                                           \
  static T kd_loss_grad_##SFX(const kd_loss_ctx *c, T x, T t, T w, T pw) {                    \
    T d = x - t, sg = d > 0 ? (T)1 : d < 0 ? (T)-1 : (T)0, r;                                  \
    switch (c->code) {                                                                        \
      case 1: r = sg; break;                                                                  \
      case 2: r = c->beta == 0 || !(FABS(d) < (T)c->beta) ? sg : d / (T)c->beta; break;        \
      case 3:                                                                                 \
        if (c->target) {                                                                      \
          T l1 = LOG1P(-x), l0 = LOG(x);                                                      \
          l1 = l1 < (T)-100 ? (T)-100 : l1;                                                   \
          l0 = l0 < (T)-100 ? (T)-100 : l0;                                                   \
          return w * (l1 - l0);                                                               \
        } else {                                                                              \
          T den = (1 - x) * x;                                                                \
          return w * d / (den > (T)1e-12 ? den : (T)1e-12);                                   \
        }                                                                                     \
      default: {                                                                              \
        T sig = 1 / (1 + EXP(-x));                                                            \
        T ls = x < 0 ? x - LOG1P(EXP(x)) : -LOG1P(EXP(-x)); /* log(sigmoid(x)) */             \
        T p = c->has_pw ? pw : (T)1;                                                          \
        if (c->target) return w * (-x - (p - 1) * ls);                                        \
        T lw = (p - 1) * t + 1;                                                               \
        return w * ((1 - t) - lw + lw * sig);                                                 \
      }                                                                                       \
    }                                                                                         \
    return c->target ? -r : r;                                                                \
  }                                                                                           \
  static void kd_loss_loop_##SFX(void *p, char **data, const int64_t *s, int64_t n) {         \
    const kd_loss_ctx *c = (const kd_loss_ctx *)p;                                            \
    for (int64_t i = 0; i < n; i++) {                                                         \
      T x = *(const T *)(data[1] + i * s[1]), t = *(const T *)(data[2] + i * s[2]);           \
      T w = *(const T *)(data[3] + i * s[3]), pw = *(const T *)(data[4] + i * s[4]);          \
      *(T *)(data[0] + i * s[0]) = kd_loss_elem_##SFX(c, x, t, w, pw);                        \
    }                                                                                         \
  }                                                                                           \
  static void kd_loss_bwd_loop_##SFX(void *p, char **data, const int64_t *s, int64_t n) {     \
    const kd_loss_ctx *c = (const kd_loss_ctx *)p;                                            \
    const T gs = (T)c->gscale;                                                                \
    for (int64_t i = 0; i < n; i++) {                                                         \
      T x = *(const T *)(data[1] + i * s[1]), t = *(const T *)(data[2] + i * s[2]);           \
      T w = *(const T *)(data[3] + i * s[3]), pw = *(const T *)(data[4] + i * s[4]);          \
      T g = *(const T *)(data[5] + i * s[5]) * gs;                                            \
      *(T *)(data[0] + i * s[0]) = g * kd_loss_grad_##SFX(c, x, t, w, pw);                    \
    }                                                                                         \
  }
KD_DEF_LOSS(f32, float, logf, log1pf, expf, fabsf)
KD_DEF_LOSS(f64, double, log, log1p, exp, fabs)

static const char *kd_loss_name(int code) {
  switch (code) {
    case KD_LOSS_MSE: return "mse_cpu";
    case KD_LOSS_L1: return "l1_cpu";
    case KD_LOSS_SMOOTH_L1: return "smooth_l1_cpu";
    case KD_LOSS_BCE: return "binary_cross_entropy";
    default: return "binary_cross_entropy_with_logits";
  }
}

/* Shared set-up of the forward and backward elementwise passes: checks, the broadcast shape,
 * the operands cast to the compute dtype. tmp[] collects what to release. */
typedef struct kd_loss_io {
  kd_tensor *in[5]; /* input, target, weight, posWeight, grad (cast; NULL when absent) */
  kd_dtype rdt, cdt;
  int64_t shape[KD_MAX_DIMS];
  int nd;
} kd_loss_io;

static void kd_loss_io_release(kd_loss_io *io) {
  for (int i = 0; i < 5; i++)
    if (io->in[i]) kd_tensor_release(io->in[i]);
}

static kd_status kd_loss_prepare(int code, kd_tensor *const src[5], kd_loss_io *io) {
  memset(io, 0, sizeof *io);
  kd_tensor *input = src[0], *target = src[1];
  char b1[160], b2[160];
  if (code == KD_LOSS_BCE && !kd_loss_same_shape(input, target))
    return kd_error(KD_ERR_SHAPE, "Using a target size (%s) that is different to the input size (%s) is deprecated. "
                    "Please ensure they have the same size.", kd_loss_torch_size(target, b1, 160),
                    kd_loss_torch_size(input, b2, 160));
  if (code == KD_LOSS_BCE_LOGITS && !kd_loss_same_shape(input, target))
    return kd_error(KD_ERR_SHAPE, "Target size (%s) must be the same as input size (%s)",
                    kd_loss_torch_size(target, b1, 160), kd_loss_torch_size(input, b2, 160));
  io->rdt = kd_promote_types(input->dtype, target->dtype);
  for (int i = 2; i < 5; i++)
    if (src[i] && kd_dtype_is_float(src[i]->dtype)) io->rdt = kd_promote_types(io->rdt, src[i]->dtype);
  if (!kd_dtype_is_float(io->rdt))
    return kd_error(KD_ERR_NOT_SUPPORTED, "\"%s\" not implemented for '%s'", kd_loss_name(code), kd_cpu_torch_name(io->rdt));
  io->cdt = io->rdt == KD_DTYPE_F64 ? KD_DTYPE_F64 : KD_DTYPE_F32;
  io->nd = input->ndim;
  memcpy(io->shape, input->sizes, sizeof(int64_t) * input->ndim);
  for (int i = 1; i < 5; i++) {
    if (!src[i]) continue;
    int64_t out[KD_MAX_DIMS];
    int no;
    KD_TRY(kd_shape_broadcast(io->shape, io->nd, src[i]->sizes, src[i]->ndim, out, &no));
    memcpy(io->shape, out, sizeof(int64_t) * no);
    io->nd = no;
  }
  for (int i = 0; i < 5; i++) {
    if (!src[i]) continue;
    kd_status st = kd_cpu_cast(src[i], io->cdt, false, &io->in[i]);
    if (st != KD_OK) {
      kd_loss_io_release(io);
      return st;
    }
  }
  return KD_OK;
}

/* binaryCrossEntropy's error for an input outside [0, 1] (on a device: at the next sync point). */
static kd_status kd_bce_bad_input(int64_t bad, const int64_t args[3]) {
  (void)bad;
  (void)args;
  return kd_error(KD_ERR_INVALID_ARGUMENT, "all elements of input should be between 0 and 1");
}

/* Runs `loop` writing `out` (compute dtype, the broadcast shape) from io's operands; on a
 * device, KD_DEV_OP_LOSS (*bad: binaryCrossEntropy's input left [0, 1], checked there). */
static kd_status kd_loss_run(kd_loss_io *io, kd_tensor *out, bool with_grad, kd_iter_loop_fn loop, kd_loss_ctx *c,
                             bool *bad) {
  double one64 = 1.0;
  float one32 = 1.0f;
  void *one = io->cdt == KD_DTYPE_F64 ? (void *)&one64 : (void *)&one32;
  kd_iter_operand ops[6];
  ops[0] = kd_iter_operand_of(out);
  for (int i = 0; i < 4; i++) ops[i + 1] = io->in[i] ? kd_iter_operand_of(io->in[i]) : kd_cpu_scalar_operand(one, io->cdt);
  int nops = 5;
  if (with_grad) ops[nops++] = kd_iter_operand_of(io->in[4]);
  kd_iter it;
  KD_TRY(kd_iter_build(&it, ops, nops, 1, 0));
  if (kd_tensor_device(out).type != KD_DEVICE_CPU) {
    if (!it.numel) return KD_OK;
    kd_dev_op d;
    memset(&d, 0, sizeof d);
    d.kind = KD_DEV_OP_LOSS;
    d.code = with_grad;
    d.dtype = io->cdt;
    d.it = &it;
    d.ops = ops;
    d.i[0] = with_grad ? c->code : c->code == KD_LOSS_MSE ? 0 : c->code == KD_LOSS_L1 ? 1 : c->code == KD_LOSS_SMOOTH_L1 ? 2
           : c->code == KD_LOSS_BCE ? 3 : 4;
    d.i[1] = c->target;
    d.i[2] = c->has_pw;
    d.i[3] = !with_grad && c->code == KD_LOSS_BCE;
    if (d.i[3]) d.fail = kd_bce_bad_input; /* raised at the next sync point where the device can */
    d.d[0] = c->beta;
    d.d[1] = c->gscale;
    KD_TRY(kd_cpu_device_run(kd_tensor_device(out), &d));
    if (bad) *bad = d.result[0] != 0; /* a device that checked without a record */
    return KD_OK;
  }
  kd_iter_for_each(&it, loop, c);
  return KD_OK;
}

KD_KERNEL(kd_cpu_pointwise_loss) {
  (void)ks;
  int code = op->code, red;
  kd_tensor *src[5] = {args[0].v.t, args[1].v.t, NULL, NULL, NULL};
  int rarg = 2;
  kd_loss_ctx c = {code, false, false, 1.0, 1.0};
  if (code == KD_LOSS_BCE || code == KD_LOSS_BCE_LOGITS) {
    src[2] = args[2].kind == KD_VALUE_TENSOR ? args[2].v.t : NULL;
    rarg = 3;
    if (code == KD_LOSS_BCE_LOGITS) src[3] = args[4].kind == KD_VALUE_TENSOR ? args[4].v.t : NULL;
    c.has_pw = src[3] != NULL;
  }
  KD_TRY(kd_loss_reduction(&args[rarg], &red));
  if (code == KD_LOSS_SMOOTH_L1) {
    c.beta = args[3].v.d;
    if (c.beta < 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "smooth_l1_loss does not support negative values for beta.");
  }
  kd_loss_io io;
  KD_TRY(kd_loss_prepare(code, src, &io));
  kd_tensor *l = NULL, *r = NULL, *out = NULL;
  kd_status st = kd_tensor_empty(io.shape, io.nd, io.cdt, kd_tensor_device(src[0]), &l);
  bool bad = false, dev = kd_tensor_device(src[0]).type != KD_DEVICE_CPU;
  if (st == KD_OK)
    st = kd_loss_run(&io, l, false, io.cdt == KD_DTYPE_F64 ? kd_loss_loop_f64 : kd_loss_loop_f32, &c, &bad);
  if (st == KD_OK && bad) st = kd_bce_bad_input(0, NULL);
  if (st == KD_OK && code == KD_LOSS_BCE && !dev) { /* PyTorch checks the input range while computing */
    kd_tensor *x = io.in[0];
    int64_t n = kd_tensor_numel(x);
    kd_tensor *xc = NULL;
    st = kd_cpu_cast(x, io.cdt, true, &xc);
    for (int64_t i = 0; st == KD_OK && i < n; i++) {
      double v = io.cdt == KD_DTYPE_F64 ? ((double *)kd_tensor_data(xc))[i] : ((float *)kd_tensor_data(xc))[i];
      if (!(v >= 0 && v <= 1)) st = kd_bce_bad_input(0, NULL);
    }
    if (xc) kd_tensor_release(xc);
  }
  if (st == KD_OK) {
    if (red == KD_RED_NONE) {
      r = l;
      kd_tensor_retain(r);
    } else {
      kd_value a[4] = {kd_value_tensor(l), kd_value_none(), kd_value_bool(false), kd_value_none()};
      st = kd_call1(red == KD_RED_MEAN ? KD_OP_mean : KD_OP_sum, a, &r);
    }
  }
  if (st == KD_OK) st = kd_cpu_cast(r, io.rdt, false, &out);
  if (l) kd_tensor_release(l);
  if (r) kd_tensor_release(r);
  kd_loss_io_release(&io);
  if (st != KD_OK) return st;
  kd_out_take(outs, 0, out);
  return KD_OK;
}

KD_KERNEL(kd_cpu_pointwise_loss_backward) {
  (void)op;
  (void)ks;
  kd_tensor *src[5] = {args[1].v.t, args[2].v.t, args[3].kind == KD_VALUE_TENSOR ? args[3].v.t : NULL,
                       args[4].kind == KD_VALUE_TENSOR ? args[4].v.t : NULL, args[0].v.t};
  int red;
  KD_TRY(kd_loss_reduction(&args[5], &red));
  int64_t kind = args[7].v.i;
  if (kind < 1 || kind > 4) return kd_error(KD_ERR_INVALID_ARGUMENT, "pointwiseLossBackward: kind must be 1..4, got %lld", (long long)kind);
  kd_loss_ctx c = {(int)kind, args[8].v.b, src[3] != NULL, args[6].v.d, 1.0};
  kd_loss_io io;
  KD_TRY(kd_loss_prepare(0, src, &io)); /* code 0: no same-shape rule (the forward checked) */
  if (red == KD_RED_MEAN) {
    int64_t n = 1;
    for (int d = 0; d < io.nd; d++) n *= io.shape[d];
    c.gscale = 1.0 / (double)n;
  }
  kd_tensor *g = NULL, *out = NULL;
  kd_status st = kd_tensor_empty(io.shape, io.nd, io.cdt, kd_tensor_device(src[0]), &g);
  if (st == KD_OK)
    st = kd_loss_run(&io, g, true, io.cdt == KD_DTYPE_F64 ? kd_loss_bwd_loop_f64 : kd_loss_bwd_loop_f32, &c, NULL);
  if (st == KD_OK) st = kd_cpu_cast(g, io.rdt, false, &out);
  if (g) kd_tensor_release(g);
  kd_loss_io_release(&io);
  if (st != KD_OK) return st;
  kd_out_take(outs, 0, out);
  return KD_OK;
}

/* ---- nll_loss ---- */
typedef struct kd_nll_geom {
  int64_t n, c, d; /* input seen as [n, c, d] */
} kd_nll_geom;

static kd_status kd_nll_check(const kd_tensor *input, const kd_tensor *target, const kd_tensor *weight, kd_nll_geom *g) {
  char b1[128], b2[128];
  if (input->ndim < 1) return kd_error(KD_ERR_SHAPE, "input tensor should be 1D or 2D");
  if (!kd_dtype_is_float(input->dtype))
    return kd_error(KD_ERR_NOT_SUPPORTED, "\"nll_loss_out_frame\" not implemented for '%s'", kd_cpu_torch_name(input->dtype));
  if (target->dtype != KD_DTYPE_I64 && target->dtype != KD_DTYPE_U8)
    return kd_error(KD_ERR_DTYPE, "expected scalar type Long but found %s", kd_cpu_torch_name(target->dtype));
  if (input->ndim >= 2 && target->ndim >= 1 && input->sizes[0] != target->sizes[0])
    return kd_error(KD_ERR_SHAPE, "Expected input batch_size (%lld) to match target batch_size (%lld).",
                    (long long)input->sizes[0], (long long)target->sizes[0]);
  if (input->ndim <= 2) {
    if (target->ndim > 1) return kd_error(KD_ERR_SHAPE, "1D target tensor expected, multi-target not supported");
    if (input->ndim == 2 && target->ndim != 1)
      return kd_error(KD_ERR_SHAPE, "Expected input batch_size (%lld) to match target batch_size (%lld).",
                      (long long)input->sizes[0], (long long)(target->ndim ? target->sizes[0] : 1));
    if (input->ndim == 1 && target->ndim != 0)
      return kd_error(KD_ERR_SHAPE, "0D or 1D target tensor expected, multi-target not supported");
    g->n = input->ndim == 2 ? input->sizes[0] : 1;
    g->c = input->sizes[input->ndim - 1];
    g->d = 1;
  } else {
    int64_t want[KD_MAX_DIMS];
    want[0] = input->sizes[0];
    for (int i = 2; i < input->ndim; i++) want[i - 1] = input->sizes[i];
    if (target->ndim != input->ndim - 1 || memcmp(want, target->sizes, sizeof(int64_t) * (input->ndim - 1)) != 0)
      return kd_error(KD_ERR_SHAPE, "Expected target size %s, got %s", kd_shape_format(want, input->ndim - 1, b1, 128),
                      kd_shape_format(target->sizes, target->ndim, b2, 128));
    g->n = input->sizes[0];
    g->c = input->sizes[1];
    g->d = kd_shape_numel(input->sizes + 2, input->ndim - 2);
  }
  if (weight && kd_tensor_numel(weight) != g->c)
    return kd_error(KD_ERR_SHAPE, "weight tensor should be defined either for all %lld classes or no classes but got "
                    "weight tensor of shape: %s", (long long)g->c, kd_shape_format(weight->sizes, weight->ndim, b1, 128));
  return KD_OK;
}

/* Contiguous copies: x (compute dtype), target (int64), weight (double, or NULL). */
typedef struct kd_nll_data {
  kd_tensor *x, *t;
  double *w;
} kd_nll_data;

static void kd_nll_data_release(kd_nll_data *d) {
  if (d->x) kd_tensor_release(d->x);
  if (d->t) kd_tensor_release(d->t);
  free(d->w);
}

static kd_status kd_nll_load(const kd_tensor *input, const kd_tensor *target, const kd_tensor *weight,
                             const kd_nll_geom *g, int64_t ignore, kd_nll_data *d) {
  memset(d, 0, sizeof *d);
  kd_dtype cdt = input->dtype == KD_DTYPE_F64 ? KD_DTYPE_F64 : KD_DTYPE_F32;
  kd_status st = kd_cpu_cast((kd_tensor *)input, cdt, true, &d->x);
  if (st == KD_OK) st = kd_cpu_cast((kd_tensor *)target, KD_DTYPE_I64, true, &d->t);
  if (st == KD_OK && weight) {
    kd_tensor *wc = NULL;
    st = kd_cpu_cast((kd_tensor *)weight, KD_DTYPE_F64, true, &wc);
    if (st == KD_OK) {
      d->w = (double *)malloc(sizeof(double) * (size_t)(g->c > 0 ? g->c : 1));
      if (!d->w) st = kd_error(KD_ERR_OOM, "out of host memory in nll_loss");
      else if (g->c) memcpy(d->w, kd_tensor_data(wc), sizeof(double) * (size_t)g->c);
      kd_tensor_release(wc);
    }
  }
  if (st == KD_OK) {
    const int64_t *t = (const int64_t *)kd_tensor_data(d->t);
    int64_t nt = g->n * g->d;
    for (int64_t i = 0; i < nt; i++)
      if (t[i] != ignore && (t[i] < 0 || t[i] >= g->c)) {
        st = kd_error(KD_ERR_INDEX, "Target %lld is out of bounds.", (long long)t[i]);
        break;
      }
  }
  if (st != KD_OK) kd_nll_data_release(d);
  return st;
}

/* ---- nll_loss on a device: contiguous copies there, the target check and the per-element
 * losses/weights (or gradients) as KD_DEV_OP_NLL_CHECK / KD_DEV_OP_NLL, sums by the sum op. ---- */
typedef struct kd_nll_dev {
  kd_tensor *x, *t, *w;
} kd_nll_dev;

static void kd_nll_dev_release(kd_nll_dev *d) {
  if (d->x) kd_tensor_release(d->x);
  if (d->t) kd_tensor_release(d->t);
  if (d->w) kd_tensor_release(d->w);
}

/* nllLoss's message for a bad target found on the device. */
static kd_status kd_nll_bad_target(int64_t bad, const int64_t args[3]) {
  (void)args;
  return kd_error(KD_ERR_INDEX, "Target %lld is out of bounds.", (long long)bad);
}

static kd_status kd_nll_dev_load(const kd_tensor *input, const kd_tensor *target, const kd_tensor *weight,
                                 const kd_nll_geom *g, int64_t ignore, kd_nll_dev *d) {
  memset(d, 0, sizeof *d);
  kd_dtype cdt = input->dtype == KD_DTYPE_F64 ? KD_DTYPE_F64 : KD_DTYPE_F32;
  kd_status st = kd_cpu_cast((kd_tensor *)input, cdt, true, &d->x);
  if (st == KD_OK) st = kd_cpu_cast((kd_tensor *)target, KD_DTYPE_I64, true, &d->t);
  if (st == KD_OK && weight) st = kd_cpu_cast((kd_tensor *)weight, KD_DTYPE_F64, true, &d->w);
  if (st == KD_OK) {
    kd_dev_op o;
    memset(&o, 0, sizeof o);
    o.kind = KD_DEV_OP_NLL_CHECK;
    o.data = kd_tensor_data(d->t);
    o.numel = g->n * g->d;
    o.i[0] = g->c;
    o.i[1] = ignore;
    o.fail = kd_nll_bad_target;
    st = kd_cpu_device_run(kd_tensor_device(input), &o);
    if (st == KD_OK && o.result[0]) st = kd_nll_bad_target(o.result[1], o.fail_args);
  }
  if (st != KD_OK) kd_nll_dev_release(d);
  return st;
}

/* Per-element losses into l (float64, n * d elements) and weights into tw (or NULL). */
static kd_status kd_nll_dev_elems(const kd_nll_dev *d, const kd_nll_geom *g, int64_t ignore, kd_tensor *l, kd_tensor *tw) {
  kd_dev_op o;
  memset(&o, 0, sizeof o);
  o.kind = KD_DEV_OP_NLL;
  o.dtype = d->x->dtype;
  o.data = kd_tensor_data(l);
  o.numel = g->n * g->d;
  o.i[0] = (int64_t)(intptr_t)kd_tensor_data(d->x);
  o.i[1] = (int64_t)(intptr_t)kd_tensor_data(d->t);
  o.i[2] = d->w ? (int64_t)(intptr_t)kd_tensor_data(d->w) : 0;
  o.i[3] = tw ? (int64_t)(intptr_t)kd_tensor_data(tw) : 0;
  o.i[4] = g->c;
  o.i[5] = g->d;
  o.i[6] = ignore;
  return kd_cpu_device_run(kd_tensor_device(l), &o);
}

/* sum(t) as a new 0-d float64 tensor. */
static kd_status kd_nll_sum(kd_tensor *t, kd_tensor **out) {
  kd_value a[4] = {kd_value_tensor(t), kd_value_none(), kd_value_bool(false), kd_value_none()};
  return kd_call1(KD_OP_sum, a, out);
}

static kd_status kd_nll_loss_dev(const kd_tensor *input, const kd_tensor *target, const kd_tensor *weight,
                                 const kd_nll_geom *g, int64_t ignore, int red, kd_tensor **l) {
  kd_nll_dev d;
  KD_TRY(kd_nll_dev_load(input, target, weight, g, ignore, &d));
  kd_device dev = kd_tensor_device(input);
  int64_t ne = g->n * g->d;
  kd_tensor *e = NULL, *tw = NULL, *s = NULL, *sw = NULL;
  kd_status st;
  if (red == KD_RED_NONE) {
    st = kd_tensor_empty(target->sizes, target->ndim, KD_DTYPE_F64, dev, l);
    if (st == KD_OK) st = kd_nll_dev_elems(&d, g, ignore, *l, NULL);
  } else {
    st = kd_tensor_empty(&ne, 1, KD_DTYPE_F64, dev, &e);
    if (st == KD_OK && red == KD_RED_MEAN) st = kd_tensor_empty(&ne, 1, KD_DTYPE_F64, dev, &tw);
    if (st == KD_OK) st = kd_nll_dev_elems(&d, g, ignore, e, tw);
    if (st == KD_OK) st = kd_nll_sum(e, red == KD_RED_MEAN ? &s : l);
    if (st == KD_OK && red == KD_RED_MEAN) st = kd_nll_sum(tw, &sw);
    if (st == KD_OK && red == KD_RED_MEAN) {
      kd_value a[3] = {kd_value_tensor(s), kd_value_tensor(sw), kd_value_none()};
      st = kd_call1(KD_OP_div, a, l);
    }
  }
  if (e) kd_tensor_release(e);
  if (tw) kd_tensor_release(tw);
  if (s) kd_tensor_release(s);
  if (sw) kd_tensor_release(sw);
  kd_nll_dev_release(&d);
  return st;
}

static kd_status kd_nll_backward_dev(kd_tensor *grad, const kd_tensor *input, const kd_tensor *target,
                                     const kd_tensor *weight, const kd_nll_geom *g, int64_t ignore, int red,
                                     kd_tensor **gi) {
  kd_nll_dev d;
  KD_TRY(kd_nll_dev_load(input, target, weight, g, ignore, &d));
  kd_device dev = kd_tensor_device(input);
  int64_t ne = g->n * g->d;
  double scale = 1.0;
  kd_tensor *gc = NULL, *e = NULL, *tw = NULL, *sw = NULL;
  kd_status st = kd_cpu_cast(grad, KD_DTYPE_F64, true, &gc);
  if (st == KD_OK && red == KD_RED_MEAN) { /* the total weight, read back (one sync) */
    st = kd_tensor_empty(&ne, 1, KD_DTYPE_F64, dev, &e);
    if (st == KD_OK) st = kd_tensor_empty(&ne, 1, KD_DTYPE_F64, dev, &tw);
    if (st == KD_OK) st = kd_nll_dev_elems(&d, g, ignore, e, tw);
    if (st == KD_OK) st = kd_nll_sum(tw, &sw);
    kd_scalar v;
    if (st == KD_OK) st = kd_cpu_item(sw, &v);
    if (st == KD_OK) scale = 1.0 / kd_scalar_to_double(v);
  }
  if (st == KD_OK) st = kd_tensor_empty(input->sizes, input->ndim, KD_DTYPE_F64, dev, gi);
  if (st == KD_OK) {
    kd_dev_op o;
    memset(&o, 0, sizeof o);
    o.kind = KD_DEV_OP_NLL;
    o.code = 1;
    o.dtype = KD_DTYPE_F64;
    o.data = kd_tensor_data(*gi);
    o.numel = ne;
    o.i[1] = (int64_t)(intptr_t)kd_tensor_data(d.t);
    o.i[2] = d.w ? (int64_t)(intptr_t)kd_tensor_data(d.w) : 0;
    o.i[4] = g->c;
    o.i[5] = g->d;
    o.i[6] = ignore;
    o.i[7] = (int64_t)(intptr_t)kd_tensor_data(gc);
    o.d[0] = scale;
    o.d[1] = red == KD_RED_NONE;
    st = kd_cpu_device_run(dev, &o);
    if (st != KD_OK) {
      kd_tensor_release(*gi);
      *gi = NULL;
    }
  }
  if (gc) kd_tensor_release(gc);
  if (e) kd_tensor_release(e);
  if (tw) kd_tensor_release(tw);
  if (sw) kd_tensor_release(sw);
  kd_nll_dev_release(&d);
  return st;
}

static inline double kd_nll_x(const kd_nll_data *d, int64_t idx) {
  return d->x->dtype == KD_DTYPE_F64 ? ((const double *)kd_tensor_data(d->x))[idx]
                                     : (double)((const float *)kd_tensor_data(d->x))[idx];
}

KD_KERNEL(kd_cpu_nll_loss) {
  (void)op;
  (void)ks;
  kd_tensor *input = args[0].v.t, *target = args[1].v.t;
  kd_tensor *weight = args[2].kind == KD_VALUE_TENSOR ? args[2].v.t : NULL;
  int64_t ignore = args[3].v.i;
  int red;
  KD_TRY(kd_loss_reduction(&args[4], &red));
  kd_nll_geom g;
  KD_TRY(kd_nll_check(input, target, weight, &g));
  if (kd_tensor_device(input).type != KD_DEVICE_CPU) {
    kd_tensor *l = NULL, *out = NULL;
    kd_status st = kd_nll_loss_dev(input, target, weight, &g, ignore, red, &l);
    if (st == KD_OK) st = kd_cpu_cast(l, input->dtype, false, &out);
    if (l) kd_tensor_release(l);
    KD_TRY(st);
    kd_out_take(outs, 0, out);
    return KD_OK;
  }
  kd_nll_data d;
  KD_TRY(kd_nll_load(input, target, weight, &g, ignore, &d));
  const int64_t *t = (const int64_t *)kd_tensor_data(d.t);
  kd_tensor *l = NULL, *out = NULL;
  kd_status st;
  if (red == KD_RED_NONE) {
    st = kd_tensor_empty(target->sizes, target->ndim, KD_DTYPE_F64, kd_tensor_device(input), &l);
    if (st == KD_OK) {
      double *o = (double *)kd_tensor_data(l);
      for (int64_t n = 0; n < g.n; n++)
        for (int64_t k = 0; k < g.d; k++) {
          int64_t cls = t[n * g.d + k];
          o[n * g.d + k] = cls == ignore ? 0.0 : -(d.w ? d.w[cls] : 1.0) * kd_nll_x(&d, (n * g.c + cls) * g.d + k);
        }
    }
  } else {
    double sum = 0, tw = 0;
    for (int64_t n = 0; n < g.n; n++)
      for (int64_t k = 0; k < g.d; k++) {
        int64_t cls = t[n * g.d + k];
        if (cls == ignore) continue;
        double w = d.w ? d.w[cls] : 1.0;
        sum -= w * kd_nll_x(&d, (n * g.c + cls) * g.d + k);
        tw += w;
      }
    st = kd_tensor_empty(NULL, 0, KD_DTYPE_F64, kd_tensor_device(input), &l);
    if (st == KD_OK) *(double *)kd_tensor_data(l) = red == KD_RED_MEAN ? sum / tw : sum;
  }
  if (st == KD_OK) st = kd_cpu_cast(l, input->dtype, false, &out);
  if (l) kd_tensor_release(l);
  kd_nll_data_release(&d);
  if (st != KD_OK) return st;
  kd_out_take(outs, 0, out);
  return KD_OK;
}

KD_KERNEL(kd_cpu_nll_loss_backward) {
  (void)op;
  (void)ks;
  kd_tensor *grad = args[0].v.t, *input = args[1].v.t, *target = args[2].v.t;
  kd_tensor *weight = args[3].kind == KD_VALUE_TENSOR ? args[3].v.t : NULL;
  int64_t ignore = args[4].v.i;
  int red;
  KD_TRY(kd_loss_reduction(&args[5], &red));
  kd_nll_geom g;
  KD_TRY(kd_nll_check(input, target, weight, &g));
  int64_t want = red == KD_RED_NONE ? g.n * g.d : 1;
  if (kd_tensor_numel(grad) != want)
    return kd_error(KD_ERR_SHAPE, "nllLossBackward: grad has %lld elements, expected %lld",
                    (long long)kd_tensor_numel(grad), (long long)want);
  if (kd_tensor_device(input).type != KD_DEVICE_CPU) {
    kd_tensor *gi = NULL, *out = NULL;
    kd_status st = kd_nll_backward_dev(grad, input, target, weight, &g, ignore, red, &gi);
    if (st == KD_OK) st = kd_cpu_cast(gi, input->dtype, false, &out);
    if (gi) kd_tensor_release(gi);
    KD_TRY(st);
    kd_out_take(outs, 0, out);
    return KD_OK;
  }
  kd_nll_data d;
  KD_TRY(kd_nll_load(input, target, weight, &g, ignore, &d));
  const int64_t *t = (const int64_t *)kd_tensor_data(d.t);
  kd_tensor *gc = NULL, *gi = NULL, *out = NULL;
  kd_status st = kd_cpu_cast(grad, KD_DTYPE_F64, true, &gc);
  if (st == KD_OK) st = kd_tensor_empty(input->sizes, input->ndim, KD_DTYPE_F64, kd_tensor_device(input), &gi);
  if (st == KD_OK) {
    const double *go = (const double *)kd_tensor_data(gc);
    double *o = (double *)kd_tensor_data(gi);
    memset(o, 0, sizeof(double) * (size_t)kd_tensor_numel(gi));
    double scale = 1.0;
    if (red == KD_RED_MEAN) {
      double tw = 0;
      for (int64_t i = 0; i < g.n * g.d; i++)
        if (t[i] != ignore) tw += d.w ? d.w[t[i]] : 1.0;
      scale = 1.0 / tw;
    }
    for (int64_t n = 0; n < g.n; n++)
      for (int64_t k = 0; k < g.d; k++) {
        int64_t cls = t[n * g.d + k];
        if (cls == ignore) continue;
        double gv = red == KD_RED_NONE ? go[n * g.d + k] : go[0] * scale;
        o[(n * g.c + cls) * g.d + k] = -(d.w ? d.w[cls] : 1.0) * gv;
      }
    st = kd_cpu_cast(gi, input->dtype, false, &out);
  }
  if (gc) kd_tensor_release(gc);
  if (gi) kd_tensor_release(gi);
  kd_nll_data_release(&d);
  if (st != KD_OK) return st;
  kd_out_take(outs, 0, out);
  return KD_OK;
}
