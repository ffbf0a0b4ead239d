/* ctc.c - the CTC loss kernels (PyTorch 1.13's _ctc_loss and _ctc_loss_backward: the forward
 * and backward variables of Graves et al. 2006 over the extended targets blank, l1, blank, l2,
 * ..., blank, in log space):
 *   kd_cpu_ctc_loss           (negLogLikelihood [N], logAlpha [N, T, Lmax]) of logProbs
 *                             [T, N, C] and targets [N, S] (padded) or the 1-D concatenation;
 *                             Lmax = 2 * max(targetLengths) + 1.
 *   kd_cpu_ctc_loss_backward  the gradient for logProbs, PyTorch's: (exp(lp) - exp(lcab + nll -
 *                             lp)) * gradOutput, lcab the log of the sum of alpha * beta over the
 *                             states of each class; 0 past each input length, and 0 for an
 *                             infinite loss with zeroInfinity (NaN without, as in PyTorch).
 * Both compute in float64 on contiguous copies and give results in logProbs' dtype (float32 or
 * float64, PyTorch's CPU dtypes). The per-sample lengths are host lists (PyTorch's IntArrayRef);
 * on a device the recursions go to the device hook (KD_DEV_OP_CTC, cuda/ops_ctc.cu).
 * Messages are PyTorch's ctc_loss_cpu ones. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_loops.h"
#include "cpu/device_op.h"

typedef struct {
  int64_t T, N, C, L, blank;
  int64_t *meta; /* malloc'ed: per sample input length, target length, offset of its targets */
} kd_ctc_geom;

static kd_status kd_ctc_check(const kd_tensor *lp, const kd_tensor *tg, const kd_value *il, const kd_value *tl,
                              int64_t blank, kd_ctc_geom *g) {
  memset(g, 0, sizeof *g);
  if (lp->dtype != KD_DTYPE_F32 && lp->dtype != KD_DTYPE_F64)
    return kd_error(KD_ERR_DTYPE, "\"ctc_loss_cpu\" not implemented for '%s'", kd_cpu_torch_name(lp->dtype));
  if (tg->dtype != KD_DTYPE_I64 && tg->dtype != KD_DTYPE_I32)
    return kd_error(KD_ERR_DTYPE, "ctc_loss: expected targets to be Long or Int, but got %s", kd_cpu_torch_name(tg->dtype));
  if (lp->ndim != 3) return kd_error(KD_ERR_SHAPE, "ctc_loss: expected log_probs to be 3-D (T, N, C), got %d-D", lp->ndim);
  if (!kd_device_eq(kd_tensor_device(lp), kd_tensor_device(tg)) && kd_tensor_device(tg).type != KD_DEVICE_CPU)
    return kd_error(KD_ERR_DEVICE, "ctc_loss: targets must be on the CPU or on log_probs' device");
  g->T = lp->sizes[0];
  g->N = lp->sizes[1];
  g->C = lp->sizes[2];
  g->blank = blank;
  if (blank < 0 || blank >= g->C) return kd_error(KD_ERR_INVALID_ARGUMENT, "blank must be in label range");
  if (il->v.ilist.n != g->N) return kd_error(KD_ERR_SHAPE, "input_lengths must be of size batch_size");
  if (tl->v.ilist.n != g->N) return kd_error(KD_ERR_SHAPE, "target_lengths must be of size batch_size");
  int64_t maxlen = 0, pos = 0;
  for (int64_t b = 0; b < g->N; b++) {
    int64_t l = tl->v.ilist.data[b];
    if (l < 0) return kd_error(KD_ERR_INVALID_ARGUMENT, "Expected target_lengths to be non-negative, but got value %lld", (long long)l);
    if (l > maxlen) maxlen = l;
    if (kd_add_overflows(pos, l, &pos)) return kd_error(KD_ERR_INVALID_ARGUMENT, "ctc_loss: target lengths overflow");
    int64_t x = il->v.ilist.data[b];
    if (x > g->T || x < 0)
      return kd_error(KD_ERR_INVALID_ARGUMENT,
                      "Expected input_lengths to have value at most %lld, but got value %lld (while checking arguments for ctc_loss_cpu)",
                      (long long)g->T, (long long)x);
  }
  if (maxlen > (INT64_MAX - 1) / 2) return kd_error(KD_ERR_INVALID_ARGUMENT, "ctc_loss: target length too large");
  g->L = 2 * maxlen + 1;
  if (tg->ndim == 1) {
    if (tg->sizes[0] < pos)
      return kd_error(KD_ERR_SHAPE, "Expected tensor to have size at least %lld at dimension 0, but got size %lld for argument #2 'targets' (while checking arguments for ctc_loss_cpu)",
                      (long long)pos, (long long)tg->sizes[0]);
  } else if (tg->ndim == 2) {
    if (tg->sizes[0] != g->N)
      return kd_error(KD_ERR_SHAPE, "Expected tensor to have size %lld at dimension 0, but got size %lld for argument #2 'targets' (while checking arguments for ctc_loss_cpu)",
                      (long long)g->N, (long long)tg->sizes[0]);
    if (tg->sizes[1] < maxlen)
      return kd_error(KD_ERR_SHAPE, "Expected tensor to have size at least %lld at dimension 1, but got size %lld for argument #2 'targets' (while checking arguments for ctc_loss_cpu)",
                      (long long)maxlen, (long long)tg->sizes[1]);
  } else {
    return kd_error(KD_ERR_SHAPE, "ctc_loss: expected targets to be 1-D or 2-D, got %d-D", tg->ndim);
  }
  int64_t n3;
  if (kd_mul_overflows(g->N, 3, &n3)) return kd_error(KD_ERR_INVALID_ARGUMENT, "ctc_loss: batch too large");
  g->meta = (int64_t *)malloc((size_t)(n3 > 0 ? n3 : 1) * sizeof(int64_t));
  if (!g->meta) return kd_error(KD_ERR_OOM, "ctc_loss: out of memory");
  int64_t off = 0;
  for (int64_t b = 0; b < g->N; b++) {
    g->meta[3 * b] = il->v.ilist.data[b];
    g->meta[3 * b + 1] = tl->v.ilist.data[b];
    g->meta[3 * b + 2] = tg->ndim == 1 ? off : b * tg->sizes[1];
    off += tl->v.ilist.data[b];
  }
  return KD_OK;
}

/* Copies src into dst (any devices). */
static kd_status kd_ctc_copy(kd_tensor *dst, kd_tensor *src) {
  kd_value a[2] = {kd_value_tensor(dst), kd_value_tensor(src)}, o[KD_OP_MAX_OUTS];
  KD_TRY(kd_call(KD_OP_copy_, a, o));
  for (int i = 0; i < KD_OP_MAX_OUTS; i++) kd_value_release(&o[i]);
  return KD_OK;
}

/* The int64 list the kernels read, on dev: meta [3N] then the targets (int64). Targets on the
 * CPU are checked to be classes here; a device's kernels clamp them instead (no read back). */
static kd_status kd_ctc_ints(const kd_ctc_geom *g, kd_tensor *tg, kd_device dev, kd_tensor **out) {
  kd_tensor *t = NULL, *host = NULL, *d = NULL;
  KD_TRY(kd_cpu_cast(tg, KD_DTYPE_I64, true, &t));
  const bool tg_cpu = kd_tensor_device(t).type == KD_DEVICE_CPU;
  const int64_t nt = kd_tensor_numel(t), n = 3 * g->N + nt;
  kd_status st = kd_tensor_empty(&n, 1, KD_DTYPE_I64, kd_device_cpu(), &host);
  if (st == KD_OK) {
    int64_t *h = (int64_t *)kd_tensor_data(host);
    memcpy(h, g->meta, (size_t)(3 * g->N) * sizeof(int64_t));
    if (tg_cpu && nt) memcpy(h + 3 * g->N, kd_tensor_data(t), (size_t)nt * sizeof(int64_t));
    for (int64_t b = 0; tg_cpu && b < g->N && st == KD_OK; b++)
      for (int64_t s = 0; s < g->meta[3 * b + 1]; s++) {
        int64_t c = h[3 * g->N + g->meta[3 * b + 2] + s];
        if (c < 0 || c >= g->C) {
          st = kd_error(KD_ERR_INDEX, "ctc_loss: target %lld is out of bounds for %lld classes", (long long)c, (long long)g->C);
          break;
        }
      }
  }
  if (st == KD_OK && dev.type != KD_DEVICE_CPU) {
    st = kd_tensor_empty(&n, 1, KD_DTYPE_I64, dev, &d);
    if (st == KD_OK) st = kd_ctc_copy(d, host);
    if (st == KD_OK && !tg_cpu && nt) {
      kd_tensor *tail = NULL;
      kd_value na[4] = {kd_value_tensor(d), kd_value_int(0), kd_value_int(3 * g->N), kd_value_int(nt)};
      st = kd_call1(KD_OP_narrow, na, &tail);
      kd_tensor *flat = NULL; /* the targets as one row, like tail */
      int64_t minus1 = -1;
      kd_value ra[2] = {kd_value_tensor(t), kd_value_intlist(&minus1, 1)};
      if (st == KD_OK) st = kd_call1(KD_OP_reshape, ra, &flat);
      if (st == KD_OK) st = kd_ctc_copy(tail, flat);
      if (flat) kd_tensor_release(flat);
      if (tail) kd_tensor_release(tail);
    }
  }
  kd_tensor_release(t);
  if (d) {
    kd_tensor_release(host);
    host = d;
  }
  if (st != KD_OK) {
    if (host) kd_tensor_release(host);
    return st;
  }
  *out = host;
  return KD_OK;
}

static inline double kd_ctc_lse2(double a, double b) {
  double m = a > b ? a : b;
  if (m == -INFINITY) return -INFINITY;
  return m + log(exp(a - m) + exp(b - m));
}
static inline double kd_ctc_lse3(double a, double b, double c) {
  double m = a > b ? a : b;
  if (c > m) m = c;
  if (m == -INFINITY) return -INFINITY;
  return m + log(exp(a - m) + exp(b - m) + exp(c - m));
}

/* The class of extended state s of sample b (tg: that sample's targets). */
static inline int64_t kd_ctc_label(const int64_t *tg, int64_t s, int64_t blank) { return (s & 1) ? tg[s >> 1] : blank; }

static void kd_ctc_forward_cpu(const kd_ctc_geom *g, const double *lp, const int64_t *ints, double *la, double *nll) {
  const int64_t T = g->T, N = g->N, C = g->C, L = g->L;
  for (int64_t b = 0; b < N; b++) {
    const int64_t il = ints[3 * b], tl = ints[3 * b + 1];
    const int64_t *tg = ints + 3 * N + ints[3 * b + 2];
    double *a = la + b * T * L;
    for (int64_t i = 0; i < T * L; i++) a[i] = -INFINITY;
    if (il == 0) {
      nll[b] = tl == 0 ? 0.0 : INFINITY;
      continue;
    }
    const int64_t ls = 2 * tl + 1;
    a[0] = lp[b * C + g->blank];
    if (tl > 0) a[1] = lp[b * C + tg[0]];
    for (int64_t t = 1; t < il; t++) {
      const double *prev = a + (t - 1) * L, *row = lp + (t * N + b) * C;
      double *cur = a + t * L;
      for (int64_t s = 0; s < ls; s++) {
        const int64_t c = kd_ctc_label(tg, s, g->blank);
        double l1 = prev[s], l2 = s > 0 ? prev[s - 1] : -INFINITY, l3 = -INFINITY;
        if ((s & 1) && s > 1 && tg[(s >> 1) - 1] != c) l3 = prev[s - 2];
        double v = kd_ctc_lse3(l1, l2, l3);
        cur[s] = v == -INFINITY ? -INFINITY : v + row[c];
      }
    }
    const double *last = a + (il - 1) * L;
    nll[b] = -kd_ctc_lse2(last[ls - 1], tl > 0 ? last[ls - 2] : -INFINITY);
  }
}

static void kd_ctc_backward_cpu(const kd_ctc_geom *g, const double *lp, const int64_t *ints, const double *nll,
                                const double *la, const double *go, bool zero_inf, double *lb, double *lcab, double *gi) {
  const int64_t T = g->T, N = g->N, C = g->C, L = g->L;
  for (int64_t b = 0; b < N; b++) {
    const int64_t il = ints[3 * b], tl = ints[3 * b + 1];
    const int64_t *tg = ints + 3 * N + ints[3 * b + 2];
    const int64_t ls = 2 * tl + 1;
    const double *a = la + b * T * L;
    const double gr = go[b], nb = nll[b];
    if (zero_inf && nb == INFINITY) {
      for (int64_t t = 0; t < T; t++) memset(gi + (t * N + b) * C, 0, (size_t)C * sizeof(double));
      continue;
    }
    for (int64_t i = 0; i < T * L; i++) lb[i] = -INFINITY;
    if (il > 0) {
      double *lastb = lb + (il - 1) * L;
      const double *row = lp + ((il - 1) * N + b) * C;
      lastb[ls - 1] = row[g->blank];
      if (tl > 0) lastb[ls - 2] = row[tg[tl - 1]];
    }
    for (int64_t t = il - 2; t >= 0; t--) {
      const double *next = lb + (t + 1) * L, *row = lp + (t * N + b) * C;
      double *cur = lb + t * L;
      for (int64_t s = 0; s < ls; s++) {
        const int64_t c = kd_ctc_label(tg, s, g->blank);
        double l1 = next[s], l2 = s < ls - 1 ? next[s + 1] : -INFINITY, l3 = -INFINITY;
        if ((s & 1) && s < ls - 2 && tg[(s >> 1) + 1] != c) l3 = next[s + 2];
        double v = kd_ctc_lse3(l1, l2, l3);
        cur[s] = v == -INFINITY ? -INFINITY : v + row[c];
      }
    }
    for (int64_t t = 0; t < T; t++) {
      double *out = gi + (t * N + b) * C;
      if (t >= il) {
        memset(out, 0, (size_t)C * sizeof(double));
        continue;
      }
      const double *row = lp + (t * N + b) * C;
      for (int64_t c = 0; c < C; c++) lcab[c] = -INFINITY;
      for (int64_t s = 0; s < ls; s++) {
        const int64_t c = kd_ctc_label(tg, s, g->blank);
        lcab[c] = kd_ctc_lse2(lcab[c], a[t * L + s] + lb[t * L + s]);
      }
      for (int64_t c = 0; c < C; c++) out[c] = (exp(row[c]) - exp(lcab[c] + nb - row[c])) * gr;
    }
  }
}

/* The float64 contiguous copy of t (on its device). */
static kd_status kd_ctc_f64(kd_tensor *t, kd_tensor **out) { return kd_cpu_cast(t, KD_DTYPE_F64, true, out); }

static kd_status kd_ctc_run_dev(kd_device dev, int code, const kd_ctc_geom *g, kd_tensor *lp, kd_tensor *ints, kd_tensor *out,
                                kd_tensor *nll, kd_tensor *la, kd_tensor *go, kd_tensor *scratch, bool zero_inf) {
  kd_dev_op o;
  memset(&o, 0, sizeof o);
  o.kind = KD_DEV_OP_CTC;
  o.code = code;
  o.dtype = KD_DTYPE_F64;
  o.data = kd_tensor_data(out);
  o.numel = g->N;
  o.i[0] = (int64_t)(intptr_t)kd_tensor_data(lp);
  o.i[1] = (int64_t)(intptr_t)kd_tensor_data(ints);
  o.i[2] = (int64_t)(intptr_t)kd_tensor_data(nll);
  o.i[3] = la ? (int64_t)(intptr_t)kd_tensor_data(la) : 0;
  o.i[4] = go ? (int64_t)(intptr_t)kd_tensor_data(go) : 0;
  o.i[5] = scratch ? (int64_t)(intptr_t)kd_tensor_data(scratch) : 0;
  o.d[0] = (double)g->T;
  o.d[1] = (double)g->C;
  o.d[2] = (double)g->L;
  o.d[3] = (double)g->blank;
  o.d[4] = zero_inf ? 1.0 : 0.0;
  return kd_cpu_device_run(dev, &o);
}

/* Casts t (float64) to dtype into *out and releases t. */
static kd_status kd_ctc_finish(kd_tensor *t, kd_dtype dtype, kd_tensor **out) {
  kd_status st = kd_cpu_cast(t, dtype, false, out);
  kd_tensor_release(t);
  return st;
}

KD_KERNEL(kd_cpu_ctc_loss) {
  (void)op;
  (void)ks;
  kd_tensor *lp = args[0].v.t, *tg = args[1].v.t;
  kd_ctc_geom g;
  KD_TRY(kd_ctc_check(lp, tg, &args[2], &args[3], args[4].v.i, &g));
  kd_device dev = kd_tensor_device(lp);
  kd_tensor *x = NULL, *ints = NULL, *nll = NULL, *la = NULL, *nll_out = NULL, *la_out = NULL;
  int64_t n = g.N, lsz[3] = {g.N, g.T, g.L};
  kd_status st = kd_ctc_f64(lp, &x);
  if (st == KD_OK) st = kd_ctc_ints(&g, tg, dev, &ints);
  if (st == KD_OK) st = kd_tensor_empty(&n, 1, KD_DTYPE_F64, dev, &nll);
  if (st == KD_OK) st = kd_tensor_empty(lsz, 3, KD_DTYPE_F64, dev, &la);
  if (st == KD_OK && g.N > 0) {
    if (dev.type == KD_DEVICE_CPU)
      kd_ctc_forward_cpu(&g, (const double *)kd_tensor_data(x), (const int64_t *)kd_tensor_data(ints),
                         (double *)kd_tensor_data(la), (double *)kd_tensor_data(nll));
    else
      st = kd_ctc_run_dev(dev, 0, &g, x, ints, la, nll, NULL, NULL, NULL, false);
  }
  if (x) kd_tensor_release(x);
  if (ints) kd_tensor_release(ints);
  free(g.meta);
  if (st == KD_OK) {
    st = kd_ctc_finish(nll, lp->dtype, &nll_out);
    nll = NULL;
  }
  if (st == KD_OK) {
    st = kd_ctc_finish(la, lp->dtype, &la_out);
    la = NULL;
  }
  if (nll) kd_tensor_release(nll);
  if (la) kd_tensor_release(la);
  if (st != KD_OK) {
    if (nll_out) kd_tensor_release(nll_out);
    return st;
  }
  kd_out_take(outs, 0, nll_out);
  kd_out_take(outs, 1, la_out);
  return KD_OK;
}

KD_KERNEL(kd_cpu_ctc_loss_backward) {
  (void)op;
  (void)ks;
  kd_tensor *grad = args[0].v.t, *lp = args[1].v.t, *tg = args[2].v.t, *nllt = args[5].v.t, *lat = args[6].v.t;
  bool zero_inf = args[8].v.b;
  kd_ctc_geom g;
  KD_TRY(kd_ctc_check(lp, tg, &args[3], &args[4], args[7].v.i, &g));
  kd_status st = KD_OK;
  if (kd_tensor_numel(grad) != g.N || kd_tensor_numel(nllt) != g.N)
    st = kd_error(KD_ERR_SHAPE, "ctcLossBackward: gradOutput and negLogLikelihood must have %lld elements", (long long)g.N);
  else if (lat->ndim != 3 || lat->sizes[0] != g.N || lat->sizes[1] != g.T || lat->sizes[2] != g.L)
    st = kd_error(KD_ERR_SHAPE, "ctcLossBackward: logAlpha must be [%lld, %lld, %lld]", (long long)g.N, (long long)g.T, (long long)g.L);
  if (st != KD_OK) {
    free(g.meta);
    return st;
  }
  kd_device dev = kd_tensor_device(lp);
  kd_tensor *x = NULL, *ints = NULL, *go = NULL, *nll = NULL, *la = NULL, *lb = NULL, *gi = NULL, *out = NULL;
  int64_t lsz[3] = {g.N, g.T, g.L};
  st = kd_ctc_f64(lp, &x);
  if (st == KD_OK) st = kd_ctc_ints(&g, tg, dev, &ints);
  if (st == KD_OK) st = kd_ctc_f64(grad, &go);
  if (st == KD_OK) st = kd_ctc_f64(nllt, &nll);
  if (st == KD_OK) st = kd_ctc_f64(lat, &la);
  if (st == KD_OK) st = kd_tensor_empty(lp->sizes, 3, KD_DTYPE_F64, dev, &gi);
  if (st == KD_OK && kd_tensor_numel(gi) > 0) {
    if (dev.type == KD_DEVICE_CPU) {
      int64_t one = g.T * g.L;
      double *lcab = (double *)malloc((size_t)(g.C > 0 ? g.C : 1) * sizeof(double));
      st = kd_tensor_empty(&one, 1, KD_DTYPE_F64, dev, &lb);
      if (!lcab) st = kd_error(KD_ERR_OOM, "ctc_loss backward: out of memory");
      if (st == KD_OK)
        kd_ctc_backward_cpu(&g, (const double *)kd_tensor_data(x), (const int64_t *)kd_tensor_data(ints),
                            (const double *)kd_tensor_data(nll), (const double *)kd_tensor_data(la),
                            (const double *)kd_tensor_data(go), zero_inf, (double *)kd_tensor_data(lb), lcab,
                            (double *)kd_tensor_data(gi));
      free(lcab);
    } else {
      st = kd_tensor_empty(lsz, 3, KD_DTYPE_F64, dev, &lb);
      if (st == KD_OK) st = kd_ctc_run_dev(dev, 1, &g, x, ints, gi, nll, la, go, lb, zero_inf);
    }
  }
  kd_tensor *rel[] = {x, ints, go, nll, la, lb};
  for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++)
    if (rel[i]) kd_tensor_release(rel[i]);
  free(g.meta);
  if (st == KD_OK) {
    st = kd_ctc_finish(gi, lp->dtype, &out);
    gi = NULL;
  }
  if (gi) kd_tensor_release(gi);
  KD_TRY(st);
  kd_out_take(outs, 0, out);
  return KD_OK;
}
