/* nn_composites.c - kd.nn.functional ops written with other ops through kd_call, so they run
 * on every device and autograd differentiates them through the ops they call (no backward
 * formulas of their own):
 *   layerNorm       nativeLayerNorm, keeping only the output
 *   groupNorm       input viewed as [N, G, -1], nativeLayerNorm over the last dim, then the
 *                   per-channel weight and bias (broadcast as [C, 1, ...])
 *   batchNorm       batch statistics (training, or no running stats given) or running ones;
 *                   training updates runningMean/runningVar in place (unbiased variance, as
 *                   PyTorch) below autograd, so the update is never recorded
 *   dropout         the input itself when not training or p == 0, else nativeDropout
 *   crossEntropy    logSoftmax over the class dim, then nllLoss (class indices) or
 *                   -sum(target * logp) (class probabilities), with PyTorch's label smoothing
 *   scaledDotProductAttention  the fused sdpaFlash, or softmax(q k^T * scale + mask) v (causal mask from
 *                              arange) with dropout; sdpaFlashGrad its gradient (fused or composed)
 * Every intermediate tensor goes into a kd_nn_scope released at the end on every path. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "autograd/autograd.h"
#include "core/random.h"
#include "cpu/attention.h"
#include "ops/kernel.h"

#define KD_NN_SCOPE_MAX 48

typedef struct kd_nn_scope {
  kd_tensor *t[KD_NN_SCOPE_MAX];
  int n;
} kd_nn_scope;

static void kd_nn_release(kd_nn_scope *s) {
  for (int i = 0; i < s->n; i++) kd_tensor_release(s->t[i]);
  s->n = 0;
}

/* kd_call1 whose result goes into the scope. */
static kd_status kd_nn_call(kd_nn_scope *s, kd_op_id op, kd_value *args, kd_tensor **out) {
  if (s->n >= KD_NN_SCOPE_MAX) return kd_error(KD_ERR_INTERNAL, "nn composite: scope full");
  KD_TRY(kd_call1(op, args, out));
  s->t[s->n++] = *out;
  return KD_OK;
}
static kd_value kd_nn_t(kd_tensor *t) { return t ? kd_value_tensor(t) : kd_value_none(); }
static kd_value kd_nn_f(double d) { return kd_value_scalar(kd_scalar_f(d)); }

static kd_status kd_nn_bin(kd_nn_scope *s, kd_op_id op, kd_value a, kd_value b, kd_tensor **out) {
  /* the third argument: alpha for add/sub, roundingMode (none) for div; unused by the others */
  kd_value v[3] = {a, b, op == KD_OP_add || op == KD_OP_sub ? kd_value_scalar(kd_scalar_i(1)) : kd_value_none()};
  return kd_nn_call(s, op, v, out);
}
static kd_status kd_nn_reshape(kd_nn_scope *s, kd_tensor *t, const int64_t *shape, int n, kd_tensor **out) {
  static const int64_t none[1] = {0};
  kd_value a[2] = {kd_value_tensor(t), kd_value_intlist(n ? shape : none, n)};
  return kd_nn_call(s, KD_OP_reshape, a, out);
}
static kd_status kd_nn_to(kd_nn_scope *s, kd_tensor *t, kd_dtype dt, kd_tensor **out) {
  kd_value a[4] = {kd_value_tensor(t), kd_value_dtype(dt), kd_value_none(), kd_value_bool(false)};
  return kd_nn_call(s, KD_OP_to, a, out);
}
/* sum or mean over `dims` (NULL: all) */
static kd_status kd_nn_reduce(kd_nn_scope *s, kd_op_id op, kd_tensor *t, const int64_t *dims, int nd, bool keepdim,
                              kd_tensor **out) {
  kd_value a[4] = {kd_value_tensor(t), dims ? kd_value_intlist(dims, nd) : kd_value_none(), kd_value_bool(keepdim),
                   kd_value_none()};
  return kd_nn_call(s, op, a, out);
}
static kd_status kd_nn_where(kd_nn_scope *s, kd_tensor *c, kd_value a, kd_value b, kd_tensor **out) {
  kd_value v[3] = {kd_value_tensor(c), a, b};
  return kd_nn_call(s, KD_OP_where, v, out);
}
/* Calls an op with several outputs: keeps output `keep`, releases the others. */
static kd_status kd_nn_call_pick(kd_nn_scope *s, kd_op_id op, kd_value *args, int keep, kd_tensor **out) {
  if (s->n >= KD_NN_SCOPE_MAX) return kd_error(KD_ERR_INTERNAL, "nn composite: scope full");
  kd_value outs[KD_OP_MAX_OUTS];
  for (int i = 0; i < KD_OP_MAX_OUTS; i++) outs[i] = kd_value_none();
  KD_TRY(kd_call(op, args, outs));
  for (int i = 0; i < KD_OP_MAX_OUTS; i++) {
    if (i == keep) continue;
    kd_value_release(&outs[i]);
  }
  *out = outs[keep].v.t;
  s->t[s->n++] = *out;
  return KD_OK;
}
static kd_status kd_nn_finish(kd_nn_scope *s, kd_status st, kd_tensor *result, kd_value *outs) {
  if (st == KD_OK) kd_out_retain(outs, 0, result);
  kd_nn_release(s);
  return st;
}
#define KD_NN_TRY(expr)                                  \
  do {                                                   \
    st = (expr);                                         \
    if (st != KD_OK) return kd_nn_finish(&s, st, NULL, outs); \
  } while (0)

/* PyTorch's ScalarType names, for messages. */
static const char *kd_nn_scalar_name(kd_dtype t) {
  static const char *const names[KD_DTYPE_COUNT] = {
      [KD_DTYPE_F32] = "Float", [KD_DTYPE_F64] = "Double", [KD_DTYPE_F16] = "Half", [KD_DTYPE_BF16] = "BFloat16",
      [KD_DTYPE_I8] = "Char",   [KD_DTYPE_U8] = "Byte",    [KD_DTYPE_I16] = "Short", [KD_DTYPE_I32] = "Int",
      [KD_DTYPE_I64] = "Long",  [KD_DTYPE_BOOL] = "Bool",
  };
  return (unsigned)t < KD_DTYPE_COUNT ? names[t] : "?";
}

static kd_tensor *kd_nn_opt(const kd_value *v) { return v->kind == KD_VALUE_TENSOR ? v->v.t : NULL; }

/* ---- layerNorm ---- */
KD_KERNEL(kd_composite_layer_norm) {
  (void)op;
  (void)ks;
  kd_nn_scope s = {.n = 0};
  kd_status st;
  kd_tensor *y;
  kd_value a[5] = {args[0], args[1], args[2], args[3], args[4]};
  KD_NN_TRY(kd_nn_call_pick(&s, KD_OP_nativeLayerNorm, a, 0, &y));
  return kd_nn_finish(&s, KD_OK, y, outs);
}

/* [C] -> [C, 1, ..., 1] with ndim - 1 dims in all, for per-channel affine terms. */
static kd_status kd_nn_channel_view(kd_nn_scope *s, kd_tensor *t, int64_t c, int ndim, kd_tensor **out) {
  int64_t shape[KD_MAX_DIMS];
  shape[0] = c;
  for (int i = 1; i < ndim - 1; i++) shape[i] = 1;
  return kd_nn_reshape(s, t, shape, ndim - 1 > 0 ? ndim - 1 : 1, out);
}

/* ---- groupNorm ---- */
KD_KERNEL(kd_composite_group_norm) {
  (void)op;
  (void)ks;
  kd_nn_scope s = {.n = 0};
  kd_status st;
  kd_tensor *input = args[0].v.t, *w = kd_nn_opt(&args[2]), *b = kd_nn_opt(&args[3]);
  int64_t g = args[1].v.i;
  char b1[128], b2[128];
  if (input->ndim < 2)
    return kd_error(KD_ERR_INDEX, "Dimension out of range (expected to be in range of [-%d, %d], but got 1)",
                    input->ndim ? input->ndim : 1, input->ndim ? input->ndim - 1 : 0);
  int64_t n = input->sizes[0], c = input->sizes[1];
  if (g <= 0 || c % g != 0)
    return kd_error(KD_ERR_SHAPE, "Expected number of channels in input to be divisible by num_groups, but got input of "
                    "shape %s and num_groups=%lld", kd_shape_format(input->sizes, input->ndim, b1, 128), (long long)g);
  if (w && (w->ndim != 1 || w->sizes[0] != c))
    return kd_error(KD_ERR_SHAPE, "Expected weight to be a vector of size equal to the number of channels in input, but "
                    "got weight of shape %s and input of shape %s", kd_shape_format(w->sizes, w->ndim, b1, 128),
                    kd_shape_format(input->sizes, input->ndim, b2, 128));
  if (b && (b->ndim != 1 || b->sizes[0] != c))
    return kd_error(KD_ERR_SHAPE, "Expected bias to be a vector of size equal to the number of channels in input, but "
                    "got bias of shape %s and input of shape %s", kd_shape_format(b->sizes, b->ndim, b1, 128),
                    kd_shape_format(input->sizes, input->ndim, b2, 128));
  kd_dtype odt = input->dtype;
  if (odt == KD_DTYPE_F16 || odt == KD_DTYPE_BF16) { /* one rounding at the end, as PyTorch's fused kernel */
    KD_NN_TRY(kd_nn_to(&s, input, KD_DTYPE_F32, &input));
    if (w) KD_NN_TRY(kd_nn_to(&s, w, KD_DTYPE_F32, &w));
    if (b) KD_NN_TRY(kd_nn_to(&s, b, KD_DTYPE_F32, &b));
  }
  int64_t per = kd_shape_numel(input->sizes + 2, input->ndim - 2) * (c / g);
  int64_t shape3[3] = {n, g, per};
  kd_tensor *x3, *y;
  KD_NN_TRY(kd_nn_reshape(&s, input, shape3, 3, &x3));
  kd_value a[5] = {kd_value_tensor(x3), kd_value_intlist(&shape3[2], 1), kd_value_none(), kd_value_none(), args[4]};
  KD_NN_TRY(kd_nn_call_pick(&s, KD_OP_nativeLayerNorm, a, 0, &y));
  KD_NN_TRY(kd_nn_reshape(&s, y, input->sizes, input->ndim, &y));
  if (w) {
    kd_tensor *wv;
    KD_NN_TRY(kd_nn_channel_view(&s, w, c, input->ndim, &wv));
    KD_NN_TRY(kd_nn_bin(&s, KD_OP_mul, kd_value_tensor(y), kd_value_tensor(wv), &y));
  }
  if (b) {
    kd_tensor *bv;
    KD_NN_TRY(kd_nn_channel_view(&s, b, c, input->ndim, &bv));
    KD_NN_TRY(kd_nn_bin(&s, KD_OP_add, kd_value_tensor(y), kd_value_tensor(bv), &y));
  }
  if (y->dtype != odt) KD_NN_TRY(kd_nn_to(&s, y, odt, &y));
  return kd_nn_finish(&s, KD_OK, y, outs);
}

/* ---- batchNorm ---- */
static kd_status kd_nn_check_channels(const kd_tensor *t, const char *name, int64_t c) {
  if (t && kd_tensor_numel(t) != c)
    return kd_error(KD_ERR_SHAPE, "%s should contain %lld elements not %lld", name, (long long)c,
                    (long long)kd_tensor_numel(t));
  return KD_OK;
}

/* running = (1 - m) * running + m * stat, in place and below autograd. */
static kd_status kd_nn_update_running(kd_nn_scope *s, kd_tensor *running, kd_tensor *stat, double m) {
  kd_dispatch_tls saved = kd_dispatch_tls_get(), tls = saved;
  tls.excluded |= KD_KEYSET(KD_KEY_AUTOGRAD);
  kd_dispatch_tls_set(tls);
  kd_tensor *flat, *a, *b, *r;
  int64_t c = kd_tensor_numel(running);
  kd_status st = kd_nn_reshape(s, stat, &c, 1, &flat);
  if (st == KD_OK) st = kd_nn_bin(s, KD_OP_mul, kd_value_tensor(running), kd_nn_f(1.0 - m), &a);
  if (st == KD_OK) st = kd_nn_bin(s, KD_OP_mul, kd_value_tensor(flat), kd_nn_f(m), &b);
  if (st == KD_OK) st = kd_nn_bin(s, KD_OP_add, kd_value_tensor(a), kd_value_tensor(b), &r);
  if (st == KD_OK) {
    kd_tensor *rv = NULL;
    if (running->ndim != 1) st = kd_nn_reshape(s, r, running->sizes, running->ndim, &rv);
    else rv = r;
    if (st == KD_OK) {
      kd_value v[2] = {kd_value_tensor(running), kd_value_tensor(rv)};
      kd_value o[KD_OP_MAX_OUTS] = {kd_value_none()};
      st = kd_call(KD_OP_copy_, v, o);
      if (st == KD_OK) kd_value_release(&o[0]);
    }
  }
  kd_dispatch_tls_set(saved);
  return st;
}

KD_KERNEL(kd_composite_batch_norm) {
  (void)op;
  (void)ks;
  kd_nn_scope s = {.n = 0};
  kd_status st;
  kd_tensor *input = args[0].v.t, *rm = kd_nn_opt(&args[1]), *rv = kd_nn_opt(&args[2]);
  kd_tensor *w = kd_nn_opt(&args[3]), *b = kd_nn_opt(&args[4]);
  bool training = args[5].v.b;
  double momentum = args[6].v.d, eps = args[7].v.d;
  char b1[128];
  if (input->ndim < 2 && kd_tensor_numel(input) == 0) { /* PyTorch returns an empty input's clone */
    kd_tensor *y = NULL;
    KD_TRY(kd_call1(KD_OP_clone, args, &y));
    kd_out_take(outs, 0, y);
    return KD_OK;
  }
  if (input->ndim < 2)
    return kd_error(KD_ERR_INDEX, "Dimension out of range (expected to be in range of [-%d, %d], but got 1)",
                    input->ndim ? input->ndim : 1, input->ndim ? input->ndim - 1 : 0);
  int64_t c = input->sizes[1];
  if (training && kd_tensor_numel(input) / (c ? c : 1) == 1) {
    kd_shape_format(input->sizes, input->ndim, b1, 128);
    return kd_error(KD_ERR_INVALID_ARGUMENT, "Expected more than 1 value per channel when training, got input size "
                    "torch.Size(%s)", b1);
  }
  if (!training && (!rm || !rv))
    return kd_error(KD_ERR_INVALID_ARGUMENT, "running_%s must be defined in evaluation mode", !rm ? "mean" : "var");
  KD_TRY(kd_nn_check_channels(rm, "running_mean", c));
  KD_TRY(kd_nn_check_channels(rv, "running_var", c));
  KD_TRY(kd_nn_check_channels(w, "weight", c));
  KD_TRY(kd_nn_check_channels(b, "bias", c));
  int64_t dims[KD_MAX_DIMS];
  int nd = 0;
  for (int d = 0; d < input->ndim; d++)
    if (d != 1) dims[nd++] = d;
  kd_tensor *mean, *var, *xc, *y;
  if (training) {
    kd_tensor *sq;
    KD_NN_TRY(kd_nn_reduce(&s, KD_OP_mean, input, dims, nd, true, &mean));
    KD_NN_TRY(kd_nn_bin(&s, KD_OP_sub, kd_value_tensor(input), kd_value_tensor(mean), &xc));
    KD_NN_TRY(kd_nn_bin(&s, KD_OP_mul, kd_value_tensor(xc), kd_value_tensor(xc), &sq));
    KD_NN_TRY(kd_nn_reduce(&s, KD_OP_mean, sq, dims, nd, true, &var));
    int64_t cnt = kd_tensor_numel(input) / (c ? c : 1);
    if (rm) KD_NN_TRY(kd_nn_update_running(&s, rm, mean, momentum));
    if (rv) {
      kd_tensor *unb;
      KD_NN_TRY(kd_nn_bin(&s, KD_OP_mul, kd_value_tensor(var), kd_nn_f((double)cnt / (double)(cnt - 1)), &unb));
      KD_NN_TRY(kd_nn_update_running(&s, rv, unb, momentum));
    }
  } else {
    KD_NN_TRY(kd_nn_channel_view(&s, rm, c, input->ndim, &mean));
    KD_NN_TRY(kd_nn_channel_view(&s, rv, c, input->ndim, &var));
    KD_NN_TRY(kd_nn_bin(&s, KD_OP_sub, kd_value_tensor(input), kd_value_tensor(mean), &xc));
  }
  kd_tensor *ve, *rstd;
  KD_NN_TRY(kd_nn_bin(&s, KD_OP_add, kd_value_tensor(var), kd_nn_f(eps), &ve));
  KD_NN_TRY(kd_nn_bin(&s, KD_OP_pow, kd_value_tensor(ve), kd_nn_f(-0.5), &rstd));
  KD_NN_TRY(kd_nn_bin(&s, KD_OP_mul, kd_value_tensor(xc), kd_value_tensor(rstd), &y));
  if (w) {
    kd_tensor *wv;
    KD_NN_TRY(kd_nn_channel_view(&s, w, c, input->ndim, &wv));
    KD_NN_TRY(kd_nn_bin(&s, KD_OP_mul, kd_value_tensor(y), kd_value_tensor(wv), &y));
  }
  if (b) {
    kd_tensor *bv;
    KD_NN_TRY(kd_nn_channel_view(&s, b, c, input->ndim, &bv));
    KD_NN_TRY(kd_nn_bin(&s, KD_OP_add, kd_value_tensor(y), kd_value_tensor(bv), &y));
  }
  return kd_nn_finish(&s, KD_OK, y, outs);
}

/* ---- dropout ---- */
KD_KERNEL(kd_composite_dropout) {
  (void)op;
  (void)ks;
  kd_tensor *input = args[0].v.t;
  double p = args[1].v.d;
  bool training = args[2].v.b;
  if (!(p >= 0 && p <= 1))
    return kd_error(KD_ERR_INVALID_ARGUMENT, "dropout probability has to be between 0 and 1, but got %g", p);
  if (!training || p == 0 || kd_tensor_numel(input) == 0) {
    kd_out_retain(outs, 0, input);
    return KD_OK;
  }
  kd_nn_scope s = {.n = 0};
  kd_status st;
  kd_tensor *y;
  kd_value a[3] = {kd_value_tensor(input), kd_value_double(p), kd_value_bool(true)};
  KD_NN_TRY(kd_nn_call_pick(&s, KD_OP_nativeDropout, a, 0, &y));
  return kd_nn_finish(&s, KD_OK, y, outs);
}

/* ---- crossEntropy ---- */
KD_KERNEL(kd_composite_cross_entropy) {
  (void)op;
  (void)ks;
  kd_nn_scope s = {.n = 0};
  kd_status st;
  kd_tensor *input = args[0].v.t, *target = args[1].v.t, *w = kd_nn_opt(&args[2]);
  int64_t ignore = args[3].v.i;
  const char *red = args[4].kind == KD_VALUE_STRING ? args[4].v.str : "mean";
  double ls = args[5].v.d;
  if (strcmp(red, "none") && strcmp(red, "mean") && strcmp(red, "sum"))
    return kd_error(KD_ERR_INVALID_ARGUMENT, "%s is not a valid value for reduction", red);
  if (!(ls >= 0 && ls <= 1))
    return kd_error(KD_ERR_INVALID_ARGUMENT, "label_smoothing must be between 0.0 and 1.0. Got: %g", ls);
  if (input->ndim < 1) return kd_error(KD_ERR_SHAPE, "input tensor should be 1D or 2D");
  int cdim = input->ndim == 1 ? 0 : 1;
  int64_t ncls = input->sizes[cdim];
  int64_t cd = cdim;
  kd_tensor *logp, *r;
  kd_value la[3] = {kd_value_tensor(input), kd_value_int(cdim), kd_value_none()};
  bool probs = input->ndim == target->ndim && !memcmp(input->sizes, target->sizes, sizeof(int64_t) * input->ndim);
  if (probs && !kd_dtype_is_float(target->dtype))
    return kd_error(KD_ERR_DTYPE, "Expected floating point type for target with class probabilities, got %s",
                    kd_nn_scalar_name(target->dtype));
  if (w && kd_tensor_numel(w) != ncls)
    return kd_error(KD_ERR_SHAPE, "weight tensor should be defined either for all %lld classes or no classes but got "
                    "weight tensor of shape: [%lld]", (long long)ncls, (long long)kd_tensor_numel(w));
  KD_NN_TRY(kd_nn_call(&s, KD_OP_logSoftmax, la, &logp));
  kd_tensor *wv = NULL; /* weight as [C, 1, ...] broadcasting against (N, C, d...) */
  if (w) KD_NN_TRY(kd_nn_channel_view(&s, w, ncls, input->ndim - cdim + 1, &wv));
  if (probs) {
    kd_tensor *t = target, *prod, *sum;
    if (ls > 0) {
      KD_NN_TRY(kd_nn_bin(&s, KD_OP_mul, kd_value_tensor(t), kd_nn_f(1.0 - ls), &t));
      KD_NN_TRY(kd_nn_bin(&s, KD_OP_add, kd_value_tensor(t), kd_nn_f(ls / (double)ncls), &t));
    }
    KD_NN_TRY(kd_nn_bin(&s, KD_OP_mul, kd_value_tensor(logp), kd_value_tensor(t), &prod));
    if (wv) KD_NN_TRY(kd_nn_bin(&s, KD_OP_mul, kd_value_tensor(prod), kd_value_tensor(wv), &prod));
    if (!strcmp(red, "none")) KD_NN_TRY(kd_nn_reduce(&s, KD_OP_sum, prod, &cd, 1, false, &sum));
    else KD_NN_TRY(kd_nn_reduce(&s, KD_OP_sum, prod, NULL, 0, false, &sum));
    KD_NN_TRY(kd_nn_call(&s, KD_OP_neg, (kd_value[]){kd_value_tensor(sum)}, &r));
    if (!strcmp(red, "mean")) {
      double denom = (double)kd_tensor_numel(input) / (double)ncls;
      KD_NN_TRY(kd_nn_bin(&s, KD_OP_div, kd_value_tensor(r), kd_nn_f(kd_tensor_numel(input) ? denom : NAN), &r));
    }
    return kd_nn_finish(&s, KD_OK, r, outs);
  }
  kd_value na[5] = {kd_value_tensor(logp), kd_value_tensor(target), kd_nn_t(w), args[3], args[4]};
  KD_NN_TRY(kd_nn_call(&s, KD_OP_nllLoss, na, &r));
  if (ls <= 0) return kd_nn_finish(&s, KD_OK, r, outs);
  /* label smoothing, as PyTorch's cross_entropy_loss_label_smoothing */
  kd_tensor *sm, *mask, *prod = logp, *sl;
  if (wv) KD_NN_TRY(kd_nn_bin(&s, KD_OP_mul, kd_value_tensor(logp), kd_value_tensor(wv), &prod));
  KD_NN_TRY(kd_nn_reduce(&s, KD_OP_sum, prod, &cd, 1, false, &sm));
  KD_NN_TRY(kd_nn_call(&s, KD_OP_neg, (kd_value[]){kd_value_tensor(sm)}, &sm));
  KD_NN_TRY(kd_nn_bin(&s, KD_OP_eq, kd_value_tensor(target), kd_value_scalar(kd_scalar_i(ignore)), &mask));
  KD_NN_TRY(kd_nn_where(&s, mask, kd_nn_f(0.0), kd_value_tensor(sm), &sm));
  if (!strcmp(red, "sum")) {
    KD_NN_TRY(kd_nn_reduce(&s, KD_OP_sum, sm, NULL, 0, false, &sl));
  } else if (!strcmp(red, "none")) {
    sl = sm;
  } else if (!w) { /* sum / number of non-ignored targets */
    kd_tensor *keep, *cnt;
    KD_NN_TRY(kd_nn_bin(&s, KD_OP_ne, kd_value_tensor(target), kd_value_scalar(kd_scalar_i(ignore)), &keep));
    KD_NN_TRY(kd_nn_reduce(&s, KD_OP_sum, keep, NULL, 0, false, &cnt));
    KD_NN_TRY(kd_nn_reduce(&s, KD_OP_sum, sm, NULL, 0, false, &sl));
    KD_NN_TRY(kd_nn_bin(&s, KD_OP_div, kd_value_tensor(sl), kd_value_tensor(cnt), &sl));
  } else { /* sum / total weight of the non-ignored targets */
    kd_tensor *tt, *w2, *wt, *tw;
    int64_t w2s[2] = {ncls, 1};
    KD_NN_TRY(kd_nn_where(&s, mask, kd_value_scalar(kd_scalar_i(0)), kd_value_tensor(target), &tt));
    KD_NN_TRY(kd_nn_reshape(&s, w, w2s, 2, &w2));
    kd_value ea[3] = {kd_value_tensor(tt), kd_value_tensor(w2), kd_value_none()};
    KD_NN_TRY(kd_nn_call(&s, KD_OP_embedding, ea, &wt));
    KD_NN_TRY(kd_nn_reshape(&s, wt, target->sizes, target->ndim, &wt));
    KD_NN_TRY(kd_nn_where(&s, mask, kd_nn_f(0.0), kd_value_tensor(wt), &wt));
    KD_NN_TRY(kd_nn_reduce(&s, KD_OP_sum, wt, NULL, 0, false, &tw));
    KD_NN_TRY(kd_nn_reduce(&s, KD_OP_sum, sm, NULL, 0, false, &sl));
    KD_NN_TRY(kd_nn_bin(&s, KD_OP_div, kd_value_tensor(sl), kd_value_tensor(tw), &sl));
  }
  KD_NN_TRY(kd_nn_bin(&s, KD_OP_mul, kd_value_tensor(r), kd_nn_f(1.0 - ls), &r));
  KD_NN_TRY(kd_nn_bin(&s, KD_OP_mul, kd_value_tensor(sl), kd_nn_f(ls / (double)ncls), &sl));
  KD_NN_TRY(kd_nn_bin(&s, KD_OP_add, kd_value_tensor(r), kd_value_tensor(sl), &r));
  return kd_nn_finish(&s, KD_OK, r, outs);
}

/* ---- scaledDotProductAttention ---- */
/* The scaled, masked scores q k^T * scale (+ mask, or -inf where a bool or the causal mask
 * leaves a key out): the math composition's first steps, differentiable. */
static kd_status kd_nn_sdpa_scores(kd_nn_scope *s, kd_tensor *q, kd_tensor *k, kd_tensor *mask, bool causal, double scale,
                                   kd_tensor **out) {
  kd_tensor *kt, *attn;
  int64_t L = q->sizes[q->ndim - 2], S = k->sizes[k->ndim - 2];
  kd_value ta[3] = {kd_value_tensor(k), kd_value_int(-2), kd_value_int(-1)};
  KD_TRY(kd_nn_call(s, KD_OP_transpose, ta, &kt));
  KD_TRY(kd_nn_bin(s, KD_OP_matmul, kd_value_tensor(q), kd_value_tensor(kt), &attn));
  if (q->sizes[q->ndim - 1] > 0) /* E == 0: zero scores, whatever the scale (1/sqrt(0) = inf), as PyTorch 2 */
    KD_TRY(kd_nn_bin(s, KD_OP_mul, kd_value_tensor(attn), kd_nn_f(scale), &attn));
  if (causal) {
    kd_tensor *rows, *cols, *keep;
    kd_value ra[5] = {kd_value_scalar(kd_scalar_i(L)), kd_value_none(), kd_value_scalar(kd_scalar_i(1)), kd_value_none(),
                      kd_value_device(kd_tensor_device(q))};
    KD_TRY(kd_nn_call(s, KD_OP_arange, ra, &rows));
    ra[0] = kd_value_scalar(kd_scalar_i(S));
    KD_TRY(kd_nn_call(s, KD_OP_arange, ra, &cols));
    kd_value ua[2] = {kd_value_tensor(rows), kd_value_int(-1)};
    KD_TRY(kd_nn_call(s, KD_OP_unsqueeze, ua, &rows));
    KD_TRY(kd_nn_bin(s, KD_OP_ge, kd_value_tensor(rows), kd_value_tensor(cols), &keep));
    KD_TRY(kd_nn_where(s, keep, kd_value_tensor(attn), kd_nn_f(-INFINITY), &attn));
  } else if (mask && mask->dtype == KD_DTYPE_BOOL) {
    KD_TRY(kd_nn_where(s, mask, kd_value_tensor(attn), kd_nn_f(-INFINITY), &attn));
  } else if (mask) {
    KD_TRY(kd_nn_bin(s, KD_OP_add, kd_value_tensor(attn), kd_value_tensor(mask), &attn));
  }
  *out = attn;
  return KD_OK;
}

/* PyTorch 2's scaled_dot_product_attention. The fused kernels (sdpaFlash, Note [Fused attention]
 * in src/cpu/attention.c; dropout included) run it unless a float mask requires grad (its
 * gradient comes from the math composition) or, on a device, a head dim exceeds the device
 * kernel's; the math composition (the scores, softmax, dropout of the weights, the product with
 * value) runs those, as PyTorch's math backend does. float16/bfloat16 compute in float32 and
 * round once. */
KD_KERNEL(kd_composite_sdpa) {
  (void)op;
  (void)ks;
  kd_nn_scope s = {.n = 0};
  kd_status st;
  kd_tensor *q = args[0].v.t, *k = args[1].v.t, *v = args[2].v.t, *mask = kd_nn_opt(&args[3]);
  double p = args[4].v.d;
  bool causal = args[5].v.b;
  KD_TRY(kd_sdpa_check(q, k, v, mask, causal));
  if (!(p >= 0 && p <= 1))
    return kd_error(KD_ERR_INVALID_ARGUMENT, "dropout probability has to be between 0 and 1, but got %g", p);
  if (!kd_dtype_is_float(q->dtype))
    return kd_error(KD_ERR_DTYPE, "scaled_dot_product_attention: expected a floating-point query, but got %s",
                    kd_dtype_name(q->dtype));
  int64_t E = q->sizes[q->ndim - 1], Ev = v->sizes[v->ndim - 1];
  double scale = args[6].kind == KD_VALUE_DOUBLE ? args[6].v.d : 1.0 / sqrt((double)E);
  kd_dtype odt = q->dtype;
  if (odt == KD_DTYPE_F16 || odt == KD_DTYPE_BF16) { /* halves: computed in float32, rounded once */
    KD_NN_TRY(kd_nn_to(&s, q, KD_DTYPE_F32, &q));
    KD_NN_TRY(kd_nn_to(&s, k, KD_DTYPE_F32, &k));
    KD_NN_TRY(kd_nn_to(&s, v, KD_DTYPE_F32, &v));
    if (mask && mask->dtype != KD_DTYPE_BOOL) KD_NN_TRY(kd_nn_to(&s, mask, KD_DTYPE_F32, &mask));
  }
  kd_tensor *out;
  bool mask_grad = mask && mask->dtype != KD_DTYPE_BOOL && kd_grad_enabled() && kd_requires_grad(mask);
  bool device = kd_tensor_device(q).type != KD_DEVICE_CPU;
  if (!mask_grad && (!device || (E <= KD_SDPA_DEVICE_MAX_HEAD_DIM && Ev <= KD_SDPA_DEVICE_MAX_HEAD_DIM))) {
    kd_value fa[7] = {kd_value_tensor(q), kd_value_tensor(k), kd_value_tensor(v), kd_nn_t(mask), kd_value_double(p),
                      kd_value_bool(causal), kd_value_double(scale)};
    KD_NN_TRY(kd_nn_call_pick(&s, KD_OP_sdpaFlash, fa, 0, &out));
  } else {
    kd_tensor *attn, *pr;
    KD_NN_TRY(kd_nn_sdpa_scores(&s, q, k, mask, causal, scale, &attn));
    kd_value sa[3] = {kd_value_tensor(attn), kd_value_int(-1), kd_value_none()};
    KD_NN_TRY(kd_nn_call(&s, KD_OP_softmax, sa, &pr));
    if (p > 0) {
      kd_value da[3] = {kd_value_tensor(pr), kd_value_double(p), kd_value_bool(true)};
      KD_NN_TRY(kd_nn_call_pick(&s, KD_OP_nativeDropout, da, 0, &pr));
    }
    KD_NN_TRY(kd_nn_bin(&s, KD_OP_matmul, kd_value_tensor(pr), kd_value_tensor(v), &out));
  }
  if (out->dtype != odt) KD_NN_TRY(kd_nn_to(&s, out, odt, &out));
  return kd_nn_finish(&s, KD_OK, out, outs);
}

/* sdpaFlashGrad: the fused gradient kernel, unless a graph of the gradient is being recorded
 * (backward with createGraph) or maskGrad asks for a float mask's: then the math composition's
 * gradient, differentiable, with the weights P recomputed by softmax and the forward's dropout
 * redrawn by nativeDropout from philoxState (the same mask: Note [Fused attention]), Z its kept
 * elements' 1 / (1 - p):
 *   dV = (P Z)^T dO, G = Z dO V^T, dS = P (G - rowsum(G P)), dQ = scale dS K, dK = scale dS^T Q,
 *   and dS itself for the mask (output 3). */
KD_KERNEL(kd_composite_sdpa_flash_grad) {
  (void)op;
  (void)ks;
  kd_tensor *g = args[0].v.t, *q = args[1].v.t, *k = args[2].v.t, *v = args[3].v.t, *mask = kd_nn_opt(&args[4]);
  kd_tensor *o = args[5].v.t, *state = args[7].v.t;
  double p = args[8].v.d, scale = args[10].v.d;
  bool mask_grad = mask && mask->dtype != KD_DTYPE_BOOL && args[11].v.b;
  bool graph = kd_grad_enabled() && (kd_requires_grad(g) || kd_requires_grad(q) || kd_requires_grad(k) ||
                                     kd_requires_grad(v) || (mask && kd_requires_grad(mask)));
  if (!graph && !mask_grad) {
    kd_status st = kd_call(KD_OP_sdpaFlashBackward, args, outs);
    outs[3] = kd_value_none();
    return st;
  }
  /* the fused path's checks are sdpaFlashBackward's; the composition reads these dims itself */
  KD_TRY(kd_sdpa_check(q, k, v, mask, args[9].v.b));
  if (o->ndim < 2 || g->ndim != o->ndim)
    return kd_error(KD_ERR_SHAPE, "sdpaFlashGrad: the output and its gradient must be at least 2-dimensional and of the "
                    "same rank, got %d and %d dimensions", o->ndim, g->ndim);
  kd_nn_scope s = {.n = 0};
  kd_status st;
  kd_tensor *attn, *pr, *pd, *prt, *vt, *dv, *dp, *t, *ds, *dss, *dst, *dq, *dk, *keep = NULL;
  KD_NN_TRY(kd_nn_sdpa_scores(&s, q, k, mask, args[9].v.b, scale, &attn));
  kd_value sa[3] = {kd_value_tensor(attn), kd_value_int(-1), kd_value_none()};
  KD_NN_TRY(kd_nn_call(&s, KD_OP_softmax, sa, &pr));
  pd = pr;
  if (p > 0) { /* the forward's mask, over the full batch shape (the output's, with S columns) */
    if (state->dtype != KD_DTYPE_I64 || kd_tensor_numel(state) != 2 || kd_tensor_device(state).type != KD_DEVICE_CPU)
      return kd_nn_finish(&s, kd_error(KD_ERR_INVALID_ARGUMENT, "sdpaFlashGrad: philoxState must be the forward's"), NULL, outs);
    int64_t shape[KD_MAX_DIMS];
    memcpy(shape, o->sizes, sizeof(int64_t) * o->ndim);
    shape[o->ndim - 1] = k->sizes[k->ndim - 2];
    kd_value ea[2] = {kd_value_tensor(pr), kd_value_intlist(shape, o->ndim)};
    KD_NN_TRY(kd_nn_call(&s, KD_OP_expand, ea, &pr));
    kd_tensor *contig = NULL;
    kd_value ca[2] = {kd_value_tensor(state), kd_value_none()};
    KD_NN_TRY(kd_nn_call(&s, KD_OP_contiguous, ca, &contig));
    const int64_t *sv = (const int64_t *)kd_tensor_data(contig);
    uint64_t seed0, offset0;
    kd_random_get_state(&seed0, &offset0);
    kd_random_set_state((uint64_t)sv[0], (uint64_t)sv[1]);
    kd_value da[3] = {kd_value_tensor(pr), kd_value_double(p), kd_value_bool(true)};
    kd_value dout[KD_OP_MAX_OUTS];
    st = kd_call(KD_OP_nativeDropout, da, dout);
    kd_random_set_state(seed0, offset0);
    if (st != KD_OK) return kd_nn_finish(&s, st, NULL, outs);
    pd = dout[0].v.t;
    keep = dout[1].v.t;
    s.t[s.n++] = pd;
    s.t[s.n++] = keep;
  }
  kd_value ta[3] = {kd_value_tensor(pd), kd_value_int(-2), kd_value_int(-1)};
  KD_NN_TRY(kd_nn_call(&s, KD_OP_transpose, ta, &prt));
  KD_NN_TRY(kd_nn_bin(&s, KD_OP_matmul, kd_value_tensor(prt), kd_value_tensor(g), &dv));
  ta[0] = kd_value_tensor(v);
  KD_NN_TRY(kd_nn_call(&s, KD_OP_transpose, ta, &vt));
  KD_NN_TRY(kd_nn_bin(&s, KD_OP_matmul, kd_value_tensor(g), kd_value_tensor(vt), &dp));
  if (keep) {
    KD_NN_TRY(kd_nn_bin(&s, KD_OP_mul, kd_value_tensor(dp), kd_value_tensor(keep), &dp));
    KD_NN_TRY(kd_nn_bin(&s, KD_OP_mul, kd_value_tensor(dp), kd_nn_f(p >= 1 ? 0.0 : 1.0 / (1.0 - p)), &dp));
  }
  KD_NN_TRY(kd_nn_bin(&s, KD_OP_mul, kd_value_tensor(dp), kd_value_tensor(pr), &t));
  int64_t last = -1;
  KD_NN_TRY(kd_nn_reduce(&s, KD_OP_sum, t, &last, 1, true, &t));
  KD_NN_TRY(kd_nn_bin(&s, KD_OP_sub, kd_value_tensor(dp), kd_value_tensor(t), &ds));
  KD_NN_TRY(kd_nn_bin(&s, KD_OP_mul, kd_value_tensor(ds), kd_value_tensor(pr), &ds));
  KD_NN_TRY(kd_nn_bin(&s, KD_OP_mul, kd_value_tensor(ds), kd_nn_f(scale), &dss));
  KD_NN_TRY(kd_nn_bin(&s, KD_OP_matmul, kd_value_tensor(dss), kd_value_tensor(k), &dq));
  ta[0] = kd_value_tensor(dss);
  KD_NN_TRY(kd_nn_call(&s, KD_OP_transpose, ta, &dst));
  KD_NN_TRY(kd_nn_bin(&s, KD_OP_matmul, kd_value_tensor(dst), kd_value_tensor(q), &dk));
  kd_out_retain(outs, 0, dq);
  kd_out_retain(outs, 1, dk);
  kd_out_retain(outs, 2, dv);
  if (mask && mask->dtype != KD_DTYPE_BOOL) kd_out_retain(outs, 3, ds);
  else outs[3] = kd_value_none();
  kd_nn_release(&s);
  return KD_OK;
}
