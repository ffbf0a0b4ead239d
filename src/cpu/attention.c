/* attention.c - the fused scaled dot-product attention kernels: sdpaFlash (output and the
 * log-sum-exp of each query row) and sdpaFlashBackward (the gradients of query, key and value,
 * recomputed from the log-sum-exp), the ops kd.nn.functional.scaledDotProductAttention runs
 * (src/ops/nn_composites.c says when).
 *
 * Note [Fused attention]
 * query [..., L, E], key [..., S, E], value [..., S, Ev], an optional mask broadcastable to
 * [..., L, S] (bool: true takes part; float: added to the scores), isCausal (key j takes part in
 * query row i when j <= i: PyTorch 2.0/2.1's upper-left mask) and the scale. The batch dims of all
 * four broadcast; outputs have the broadcast batch shape and are contiguous. The [L, S] scores are
 * never materialised: each task takes BQ query rows and walks the keys in blocks of BK, keeping
 * the running row maximum m, the running sum l of exp(s - m) and the unnormalised output, rescaled
 * by exp(m_old - m_new) when the maximum grows (the online softmax of flash attention). The
 * forward is parallel over (batch, query block); the backward over the batch: per batch it walks
 * key blocks, and inside them query blocks, recomputing P = exp(s - lse) and accumulating
 * dV += P^T dO, dS = P * (dO V^T - rowsum(dO * O)), dQ += scale dS K, dK += scale dS^T Q. The
 * block products go to BLAS (kd_nn_gemm_*, single-threaded inside the pool as nn_common.h does),
 * read in place from strided rows. This file checks the operands and lays out the plan
 * (attention.h); the CPU loops are attention_loops.c, compiled per CPU level. A row whose keys are all masked gives NaN, as softmax does.
 * Dropout (p > 0) zeroes weight (n, i, j) of the contiguous [batch, L, S] weights when its float32
 * Philox draw for (seed, offset, (n L + i) S + j) is not below 1 - p and scales the others by
 * 1 / (1 - p): the mask nativeDropout would draw on the materialised weights with the same generator
 * state, so the composition reproduces it. The forward takes one generator offset and returns
 * (seed, offset) as philoxState; the backward redraws the same mask from it: the normaliser l and
 * the log-sum-exp use the undropped weights, dV += (P Z)^T dO, dS = P (Z dO V^T - D).
 * On a device the same checks run and the launch goes to KD_DEV_OP_ATTENTION
 * (cuda/ops_attention.cu), whose iteration carries each operand's strides: dims 0 and 1 have size
 * 1 and hold the column and row strides, dims 2.. are the batch dims (innermost first). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/random.h"
#include "cpu/attention.h"
#include "cpu/cpu_loops.h"
#include "cpu/device_op.h"
#include "ops/kernel.h"

/* Records tensor t as operand k with `core` trailing dims (2: rows and columns; 1: rows only):
 * its batch dims are right-aligned with the plan's (stride 0 where it broadcasts). */
static void kd_attn_operand(kd_attn_plan *p, int k, const kd_tensor *t, int core) {
  p->data[k] = kd_tensor_data(t);
  int64_t st[KD_MAX_DIMS + 2];
  const int nd = p->nb + core, lead = nd - t->ndim; /* a mask may have fewer dims: leading 1s */
  for (int d = 0; d < nd; d++) {
    int td = d - lead;
    st[d] = td >= 0 && t->sizes[td] != 1 ? t->strides[td] : 0;
  }
  for (int d = 0; d < p->nb; d++) p->bst[k][d] = st[d];
  p->rs[k] = st[p->nb];
  p->cs[k] = core == 2 ? st[p->nb + 1] : 0;
}

static kd_status kd_attn_same_device(const kd_tensor *a, const kd_tensor *b) {
  if (b && !kd_device_eq(kd_tensor_device(a), kd_tensor_device(b)))
    return kd_error(KD_ERR_DEVICE, "Expected all tensors to be on the same device, but found at least two devices");
  return KD_OK;
}

/* Checks the operands and fills the plan's shapes (not yet the data). t[] holds q, k, v, mask
 * (or NULL); for the backward also gradOutput, output, logsumexp. PyTorch 2's checks
 * (validate_sdpa_input) and the shapes; `fused`: also the dtypes the kernels take. */
static kd_status kd_attn_check(const char *fn, kd_tensor *const *t, bool backward, bool causal, bool fused, kd_attn_plan *p) {
  memset(p, 0, sizeof *p);
  const kd_tensor *q = t[A_Q], *k = t[A_K], *v = t[A_V], *m = t[A_M];
  if (k->dtype != q->dtype || v->dtype != q->dtype)
    return kd_error(KD_ERR_DTYPE, "Expected query, key, and value to have the same dtype, but got query.dtype: torch.%s "
                    "key.dtype: torch.%s and value.dtype: torch.%s instead.", kd_dtype_name(q->dtype), kd_dtype_name(k->dtype),
                    kd_dtype_name(v->dtype));
  for (int i = 1; i < A_NOPS; i++) KD_TRY(kd_attn_same_device(q, t[i]));
  if (q->ndim < 2 || k->ndim < 2 || v->ndim < 2)
    return kd_error(KD_ERR_SHAPE, "Expected query, key, and value to all be at least 2 dimensional, but got query.dim: %d "
                    "key.dim: %d and value.dim: %d instead.", q->ndim, k->ndim, v->ndim);
  if (m && m->dtype != KD_DTYPE_BOOL && m->dtype != q->dtype)
    return kd_error(KD_ERR_DTYPE, "Expected attn_mask dtype to be bool or to match query dtype, but got attn_mask.dtype: "
                    "torch.%s and query.dtype: torch.%s instead.", kd_dtype_name(m->dtype), kd_dtype_name(q->dtype));
  if (fused && q->dtype != KD_DTYPE_F32 && q->dtype != KD_DTYPE_F64)
    return kd_error(KD_ERR_DTYPE, "%s: expected query of dtype float32 or float64, but got %s", fn, kd_dtype_name(q->dtype));
  p->dtype = q->dtype;
  p->L = q->sizes[q->ndim - 2];
  p->E = q->sizes[q->ndim - 1];
  p->S = k->sizes[k->ndim - 2];
  p->Ev = v->sizes[v->ndim - 1];
  if (k->sizes[k->ndim - 1] != p->E)
    return kd_error(KD_ERR_SHAPE, "%s: query and key must have the same last dim, but got %lld and %lld", fn,
                    (long long)p->E, (long long)k->sizes[k->ndim - 1]);
  if (v->sizes[v->ndim - 2] != p->S)
    return kd_error(KD_ERR_SHAPE, "%s: key and value must have the same sequence length (dim -2), but got %lld and %lld",
                    fn, (long long)p->S, (long long)v->sizes[v->ndim - 2]);
  if (m && causal)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                    "is_causal=True");
  /* the batch shape: q, k, v batch dims and the mask's dims before [L, S], broadcast */
  int nb = q->ndim - 2;
  memcpy(p->bshape, q->sizes, sizeof(int64_t) * nb);
  const kd_tensor *others[3] = {k, v, m};
  for (int i = 0; i < 3; i++) {
    const kd_tensor *o = others[i];
    if (!o) continue;
    int ob = o->ndim >= 2 ? o->ndim - 2 : 0;
    int64_t out[KD_MAX_DIMS];
    int nout = 0;
    kd_status st = kd_shape_broadcast(p->bshape, nb, o->sizes, ob, out, &nout);
    if (st != KD_OK) return st;
    memcpy(p->bshape, out, sizeof(int64_t) * nout);
    nb = nout;
  }
  if (nb + 2 > KD_MAX_DIMS) return kd_error(KD_ERR_SHAPE, "%s: too many dims", fn);
  p->nb = nb;
  if (m) { /* its last two dims (or fewer) must broadcast to [L, S] */
    int64_t ls[2] = {p->L, p->S};
    for (int d = 0; d < 2 && d < m->ndim; d++) {
      int64_t sz = m->sizes[m->ndim - 1 - d], want = ls[1 - d];
      if (sz != 1 && sz != want)
        return kd_error(KD_ERR_SHAPE, "%s: attn_mask with last dims of size %lld does not broadcast to the scores' "
                        "[..., %lld, %lld]", fn, (long long)sz, (long long)p->L, (long long)p->S);
    }
    p->mask_kind = m->dtype == KD_DTYPE_BOOL ? 1 : 2;
  }
  int64_t nbatch = 1;
  for (int d = 0; d < nb; d++)
    if (kd_mul_overflows(nbatch, p->bshape[d], &nbatch)) return kd_error(KD_ERR_SHAPE, "%s: the batch is too large", fn);
  p->nbatch = nbatch;
  if (backward) {
    const kd_tensor *g = t[A_G], *o = t[A_O], *l = t[A_LSE];
    const kd_tensor *chk[2] = {g, o};
    for (int i = 0; i < 2; i++) {
      const kd_tensor *x = chk[i];
      bool ok = x->dtype == q->dtype && x->ndim == nb + 2 && x->sizes[nb] == p->L && x->sizes[nb + 1] == p->Ev;
      for (int d = 0; ok && d < nb; d++) ok = x->sizes[d] == p->bshape[d];
      if (!ok) return kd_error(KD_ERR_SHAPE, "%s: %s must be the forward's output: [batch..., %lld, %lld] of %s", fn,
                               i == 0 ? "grad_output" : "output", (long long)p->L, (long long)p->Ev, kd_dtype_name(q->dtype));
    }
    bool ok = l->dtype == q->dtype && l->ndim == nb + 1 && l->sizes[nb] == p->L;
    for (int d = 0; ok && d < nb; d++) ok = l->sizes[d] == p->bshape[d];
    if (!ok) return kd_error(KD_ERR_SHAPE, "%s: logsumexp must be the forward's: [batch..., %lld] of %s", fn, (long long)p->L,
                             kd_dtype_name(q->dtype));
  }
  int64_t numel;
  int64_t sz[3] = {nbatch, p->L > p->S ? p->L : p->S, (p->E > p->Ev ? p->E : p->Ev) + 1};
  if (kd_shape_numel_checked(sz, 3, &numel) != KD_OK) return kd_error(KD_ERR_SHAPE, "%s: the output is too large", fn);
  return KD_OK;
}

kd_status kd_sdpa_check(const kd_tensor *q, const kd_tensor *k, const kd_tensor *v, const kd_tensor *mask, bool causal) {
  kd_tensor *t[A_NOPS] = {(kd_tensor *)q, (kd_tensor *)k, (kd_tensor *)v, (kd_tensor *)mask, NULL, NULL, NULL};
  kd_attn_plan p;
  return kd_attn_check("scaled_dot_product_attention", t, false, causal, false, &p);
}

/* Tensors the CPU path hands to BLAS need unit column strides and row strides of at least the
 * row length; others are copied contiguous (a rare layout: an expanded or stepped last dim). */
static kd_status kd_attn_blas_ready(kd_tensor *t, kd_tensor **keep, kd_tensor **out) {
  *out = t;
  int64_t rows = t->sizes[t->ndim - 2], cols = t->sizes[t->ndim - 1];
  int64_t rs = t->strides[t->ndim - 2], cs = t->strides[t->ndim - 1];
  if ((cols <= 1 || cs == 1) && (rows <= 1 || rs >= cols) && rs <= INT32_MAX) return KD_OK;
  kd_value a[2] = {kd_value_tensor(t), kd_value_none()};
  KD_TRY(kd_call1(KD_OP_contiguous, a, keep));
  *out = *keep;
  return KD_OK;
}

static kd_status kd_attn_fill(kd_tensor *t, double v) {
  kd_value a[2] = {kd_value_tensor(t), kd_value_scalar(kd_scalar_f(v))};
  kd_tensor *r = NULL;
  kd_status st = kd_call1(KD_OP_fill_, a, &r);
  if (r) kd_tensor_release(r);
  return st;
}

/* Output shape [batch..., a] or [batch..., a, b] (b < 0: none). */
static kd_status kd_attn_alloc(const kd_attn_plan *p, int64_t a, int64_t b, kd_device dev, kd_tensor **out) {
  int64_t sz[KD_MAX_DIMS];
  memcpy(sz, p->bshape, sizeof(int64_t) * p->nb);
  sz[p->nb] = a;
  if (b >= 0) sz[p->nb + 1] = b;
  return kd_tensor_empty(sz, p->nb + (b >= 0 ? 2 : 1), p->dtype, dev, out);
}

/* The device launch (Note [Fused attention]: the iteration carries the strides). */
static kd_status kd_attn_run_device(kd_device dev, kd_attn_plan *p, bool backward) {
  kd_dev_op d;
  memset(&d, 0, sizeof d);
  d.kind = KD_DEV_OP_ATTENTION;
  d.code = backward ? 1 : 0;
  d.dtype = p->dtype;
  d.i[0] = p->L;
  d.i[1] = p->S;
  d.i[2] = p->E;
  d.i[3] = p->Ev;
  d.i[4] = (int64_t)p->seed;
  d.i[5] = (int64_t)p->offset;
  d.d[0] = p->scale;
  d.d[1] = (double)((p->causal ? 1 : 0) | (p->mask_kind << 1));
  d.d[2] = p->dropout;
  static const int64_t one = 1;
  kd_iter it;
  kd_iter_operand ops[KD_ITER_MAX_OPS];
  memset(&it, 0, sizeof it);
  memset(ops, 0, sizeof ops);
  const int nin = backward ? A_NOPS : 4;
  it.nops = nin + 1;
  it.ndim = p->nb + 2;
  it.numel = p->nbatch;
  it.shape[0] = it.shape[1] = 1;
  for (int dd = 0; dd < p->nb; dd++) it.shape[2 + dd] = p->bshape[p->nb - 1 - dd];
  for (int k = 0; k < it.nops; k++) {
    kd_dtype dt = k == A_M && p->mask_kind == 1 ? KD_DTYPE_BOOL : p->dtype;
    size_t es = kd_dtype_size(dt);
    it.dtypes[k] = dt;
    ops[k].dtype = dt;
    ops[k].sizes = &one;
    if (k < nin) {
      it.data[k] = (char *)p->data[k];
      it.strides[k][0] = p->cs[k] * (int64_t)es;
      it.strides[k][1] = p->rs[k] * (int64_t)es;
      for (int dd = 0; dd < p->nb; dd++) it.strides[k][2 + dd] = p->bst[k][p->nb - 1 - dd] * (int64_t)es;
    } else {
      it.data[k] = backward ? p->dq : p->out; /* the first output; the others by address */
    }
    ops[k].data = it.data[k];
  }
  if (backward) {
    d.i[6] = (int64_t)(intptr_t)p->dk;
    d.i[7] = (int64_t)(intptr_t)p->dv;
  } else {
    d.i[6] = (int64_t)(intptr_t)p->lse;
  }
  d.it = &it;
  d.ops = ops;
  return kd_cpu_device_run(dev, &d);
}

/* Both kernels: checks, the outputs (forward: output [batch, L, Ev], logsumexp [batch, L];
 * backward: gradQuery [batch, L, E], gradKey [batch, S, E], gradValue [batch, S, Ev]), then the
 * loops. With no keys or no queries nothing flows: zero outputs (the empty sums), lse -inf. */
static kd_status kd_attn_kernel(kd_tensor **t, bool backward, bool causal, double scale, double dropout,
                                const kd_tensor *state, kd_value *outs) {
  kd_attn_plan p;
  const char *fn = backward ? "sdpaFlashBackward" : "sdpaFlash";
  KD_TRY(kd_attn_check(fn, t, backward, causal, true, &p));
  if (!(dropout >= 0 && dropout <= 1))
    return kd_error(KD_ERR_INVALID_ARGUMENT, "dropout probability has to be between 0 and 1, but got %g", dropout);
  if (backward && dropout > 0 && (state->dtype != KD_DTYPE_I64 || kd_tensor_numel(state) != 2 ||
                                  kd_tensor_device(state).type != KD_DEVICE_CPU || !kd_tensor_is_contiguous(state)))
    return kd_error(KD_ERR_INVALID_ARGUMENT, "%s: philoxState must be the forward's: 2 int64 on the CPU (seed, offset)", fn);
  p.causal = causal;
  p.scale = scale;
  p.dropout = dropout;
  kd_tensor *st_out = NULL;
  if (!backward) { /* the dropout's stream: one generator offset per call, none without dropout */
    static const int64_t two = 2;
    KD_TRY(kd_tensor_empty(&two, 1, KD_DTYPE_I64, kd_device_cpu(), &st_out));
    if (dropout > 0) p.offset = kd_random_next_offset(&p.seed);
    ((int64_t *)kd_tensor_data(st_out))[0] = (int64_t)p.seed;
    ((int64_t *)kd_tensor_data(st_out))[1] = (int64_t)p.offset;
  } else if (dropout > 0) {
    p.seed = (uint64_t)((const int64_t *)kd_tensor_data(state))[0];
    p.offset = (uint64_t)((const int64_t *)kd_tensor_data(state))[1];
  }
  kd_device dev = kd_tensor_device(t[A_Q]);
  bool cpu = dev.type == KD_DEVICE_CPU;
  kd_tensor *keep[A_NOPS] = {NULL}, *o[3] = {NULL, NULL, NULL};
  const int nout = backward ? 3 : 2;
  const int64_t shape[2][3][2] = {{{p.L, p.Ev}, {p.L, -1}, {0, 0}}, {{p.L, p.E}, {p.S, p.E}, {p.S, p.Ev}}};
  char **slot[2][3] = {{&p.out, &p.lse, NULL}, {&p.dq, &p.dk, &p.dv}};
  kd_status st = KD_OK;
  for (int i = 0; cpu && i < A_NOPS && st == KD_OK; i++)
    if (t[i] && i != A_M && i != A_LSE) st = kd_attn_blas_ready(t[i], &keep[i], &t[i]);
  for (int j = 0; j < nout && st == KD_OK; j++) st = kd_attn_alloc(&p, shape[backward][j][0], shape[backward][j][1], dev, &o[j]);
  if (st == KD_OK) {
    for (int i = 0; i < A_NOPS; i++)
      if (t[i]) kd_attn_operand(&p, i, t[i], i == A_LSE ? 1 : 2);
    int64_t total = 0;
    for (int j = 0; j < nout; j++) {
      *slot[backward][j] = kd_tensor_data(o[j]);
      total += kd_tensor_numel(o[j]);
    }
    if (total > 0 && (p.L == 0 || p.S == 0)) {
      for (int j = 0; j < nout && st == KD_OK; j++) st = kd_attn_fill(o[j], !backward && j == 1 ? -INFINITY : 0.0);
    } else if (total > 0) {
      st = cpu ? kd_attn_run_cpu(&p, backward) : kd_attn_run_device(dev, &p, backward);
    }
  }
  for (int i = 0; i < A_NOPS; i++)
    if (keep[i]) kd_tensor_release(keep[i]);
  for (int j = 0; j < nout; j++) {
    if (st == KD_OK) kd_out_take(outs, j, o[j]);
    else if (o[j]) kd_tensor_release(o[j]);
  }
  if (st_out) {
    if (st == KD_OK) kd_out_take(outs, 2, st_out);
    else kd_tensor_release(st_out);
  }
  return st;
}

/* sdpaFlash(query, key, value, attnMask?, dropoutP, isCausal, scale) -> (output, logsumexp, philoxState) */
KD_KERNEL(kd_cpu_sdpa_flash) {
  (void)op;
  (void)ks;
  kd_tensor *t[A_NOPS] = {args[0].v.t, args[1].v.t, args[2].v.t,
                          args[3].kind == KD_VALUE_TENSOR ? args[3].v.t : NULL, NULL, NULL, NULL};
  return kd_attn_kernel(t, false, args[5].v.b, args[6].v.d, args[4].v.d, NULL, outs);
}

/* sdpaFlashBackward(gradOutput, query, key, value, attnMask?, output, logsumexp, philoxState, dropoutP,
 * isCausal, scale) -> (gradQuery, gradKey, gradValue), each with the broadcast batch shape. */
KD_KERNEL(kd_cpu_sdpa_flash_backward) {
  (void)op;
  (void)ks;
  kd_tensor *t[A_NOPS] = {args[1].v.t, args[2].v.t, args[3].v.t, args[4].kind == KD_VALUE_TENSOR ? args[4].v.t : NULL,
                          args[0].v.t, args[5].v.t, args[6].v.t};
  return kd_attn_kernel(t, true, args[9].v.b, args[10].v.d, args[8].v.d, args[7].v.t, outs);
}
