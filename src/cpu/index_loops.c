/* index_loops.c - the per-element loops of the indexing kernels: the range check of an index
 * tensor (kd_ix_all_in_range) and the gather and scatter loops (kd_ix_run_gather,
 * kd_ix_run_scatter), run on the iteration over output, source and index operands that
 * index_common.c, index_gather.c, index_scatter.c, index_mask.c and select.c build (Note
 * [Indexing through the iterator] in index_common.h). Compiled once per CPU level (Note [CPU
 * capability dispatch] in cpu_capability.h): the indexed loops become vector gathers with AVX2
 * and AVX-512. */
#include "cpu/index_common.h"
#include "cpu/reduce.h"

#include "cpu/device_op.h"

#include <string.h>

bool kd_ix_all_in_range(const int64_t *q, int64_t n, int64_t size) {
  int64_t bad = 0;
  for (int64_t i = 0; i < n; i++) bad |= (int64_t)((uint64_t)q[i] >= (uint64_t)size);
  return !bad;
}

/* ---- gather and scatter ---- */
#define KD_IX_OFFSET(i)                                                                        \
  int64_t off = 0;                                                                             \
  for (int k = 0; k < c->nidx; k++) off += *(const int64_t *)(data[2 + k] + (i) * strides[2 + k]) * c->stride[k]

/* One index operand and a power-of-two element size: the common case, kept tight. */
#define KD_IX_GATHER1(UT_)                                                                     \
  for (int64_t i = 0; i < n; i++)                                                              \
    *(UT_ *)(o + i * so) = *(const UT_ *)(s + i * ss + *(const int64_t *)(ix + i * si) * st)
#define KD_IX_SCATTER1(UT_)                                                                    \
  for (int64_t i = 0; i < n; i++)                                                              \
    *(UT_ *)(o + i * so + *(const int64_t *)(ix + i * si) * st) = *(const UT_ *)(s + i * ss)

/* Fast paths of the one-index gather, by the run's strides (contiguous output):
 * index constant along the run (index_select / index along an outer dim): a row copy;
 * source constant along the run (index_select / gather along the inner dim): out[i] = s[ix[i]];
 * both contiguous (gather along an outer dim): out[i] = s[i + ix[i]]. Plain indexed loops gcc
 * turns into vector gathers. */
#define KD_IX_GATHER_FAST(UT_)                                                                 \
  do {                                                                                         \
    UT_ *o_ = (UT_ *)o;                                                                        \
    const int64_t *ix_ = (const int64_t *)ix;                                                  \
    if (ss == 0 && si == 8 && st % (int64_t)sizeof(UT_) == 0) {                                \
      const UT_ *s_ = (const UT_ *)s;                                                          \
      const int64_t se_ = st / (int64_t)sizeof(UT_);                                           \
      for (int64_t i = 0; i < n; i++) o_[i] = s_[ix_[i] * se_];                                \
      return;                                                                                  \
    }                                                                                          \
    if (ss == (int64_t)sizeof(UT_) && si == 8 && st % (int64_t)sizeof(UT_) == 0) {            \
      const UT_ *s_ = (const UT_ *)s;                                                          \
      const int64_t se_ = st / (int64_t)sizeof(UT_);                                           \
      for (int64_t i = 0; i < n; i++) o_[i] = s_[i + ix_[i] * se_];                            \
      return;                                                                                  \
    }                                                                                          \
  } while (0)

static void kd_ix_gather_loop(void *p, char **data, const int64_t *strides, int64_t n) {
  const kd_ix_ctx *c = (const kd_ix_ctx *)p;
  char *o = data[0], *s = data[1];
  const int64_t so = strides[0], ss = strides[1];
  if (c->nidx == 1) {
    const char *ix = data[2];
    const int64_t si = strides[2], st = c->stride[0];
    if (si == 0 && so == c->es && ss == c->es) {
      memcpy(o, s + *(const int64_t *)ix * st, (size_t)(n * c->es));
      return;
    }
    if (so == c->es) {
      switch (c->es) {
        case 4: KD_IX_GATHER_FAST(uint32_t); break;
        case 8: KD_IX_GATHER_FAST(uint64_t); break;
        default: break;
      }
    }
    switch (c->es) {
      case 1: KD_IX_GATHER1(uint8_t); return;
      case 2: KD_IX_GATHER1(uint16_t); return;
      case 4: KD_IX_GATHER1(uint32_t); return;
      case 8: KD_IX_GATHER1(uint64_t); return;
      default: break;
    }
  }
  for (int64_t i = 0; i < n; i++) {
    KD_IX_OFFSET(i);
    memcpy(o + i * so, s + i * ss + off, (size_t)c->es);
  }
}

static void kd_ix_scatter_copy_loop(void *p, char **data, const int64_t *strides, int64_t n) {
  const kd_ix_ctx *c = (const kd_ix_ctx *)p;
  char *o = data[0], *s = data[1];
  const int64_t so = strides[0], ss = strides[1];
  if (c->nidx == 1) {
    const char *ix = data[2];
    const int64_t si = strides[2], st = c->stride[0];
    switch (c->es) {
      case 1: KD_IX_SCATTER1(uint8_t); return;
      case 2: KD_IX_SCATTER1(uint16_t); return;
      case 4: KD_IX_SCATTER1(uint32_t); return;
      case 8: KD_IX_SCATTER1(uint64_t); return;
      default: break;
    }
  }
  for (int64_t i = 0; i < n; i++) {
    KD_IX_OFFSET(i);
    memcpy(o + i * so + off, s + i * ss, (size_t)c->es);
  }
}

/* Reductions: NaN propagates through max/min (a NaN src wins; a NaN dst stays). */
#define KD_IX_ISNAN_F(x) ((x) != (x))
#define KD_IX_ISNAN_I(x) 0
#define KD_IX_ISNAN_B(x) 0
#define KD_IX_MULT_F(UT, a, b) ((UT)(a) * (UT)(b))
#define KD_IX_MULT_I(UT, a, b) ((UT)(a) * (UT)(b))
#define KD_IX_MULT_B(UT, a, b) ((a) && (b))
#define KD_IX_DEF_RED(SFX, DT, T, CT, LD, ST, MS, K, UT)                                       \
  static void kd_ix_red_##SFX(void *p, char **data, const int64_t *strides, int64_t n) {       \
    const kd_ix_ctx *c = (const kd_ix_ctx *)p;                                                 \
    char *d = data[0], *s = data[1];                                                           \
    const int mode = c->mode;                                                                  \
    if (c->nidx == 1 && mode == KD_IX_ADD) { /* scatter_add / index_add: the common case */    \
      const char *ix = data[2];                                                                \
      const int64_t sd = strides[0], ss = strides[1], si = strides[2], st = c->stride[0];      \
      for (int64_t i = 0; i < n; i++) {                                                        \
        T *dp = (T *)(d + i * sd + *(const int64_t *)(ix + i * si) * st);                      \
        *dp = ST((CT)((UT)LD(*dp) + (UT)LD(*(const T *)(s + i * ss))));                        \
      }                                                                                        \
      return;                                                                                  \
    }                                                                                          \
    for (int64_t i = 0; i < n; i++) {                                                          \
      KD_IX_OFFSET(i);                                                                         \
      T *dp = (T *)(d + i * strides[0] + off);                                                 \
      CT a = LD(*dp), b = LD(*(const T *)(s + i * strides[1]));                                \
      CT r;                                                                                    \
      if (mode == KD_IX_ADD) r = (CT)((UT)a + (UT)b);                                          \
      else if (mode == KD_IX_MUL) r = (CT)KD_IX_MULT_##K(UT, a, b);                                     \
      else if (mode == KD_IX_MAX) r = (KD_IX_ISNAN_##K(b) || b > a) ? b : a;                   \
      else r = (KD_IX_ISNAN_##K(b) || b < a) ? b : a;                                          \
      *dp = ST(r);                                                                             \
    }                                                                                          \
  }
KD_ROWS_ALL(KD_IX_DEF_RED)
#define KD_IX_RED_ENTRY(SFX, DT, ...) KD_LOOP_ENTRY(kd_ix_red_, SFX, DT)
static const kd_iter_loop_fn kd_ix_red_loops[KD_DTYPE_COUNT] = {KD_ROWS_ALL(KD_IX_RED_ENTRY)};

/* A built gather/scatter iteration on a device: the device hook (cuda/ops_index.cu). */
static kd_status kd_ix_run_device(int kind, const kd_iter *it, const kd_iter_operand *ops, const kd_ix_ctx *ctx) {
  if (!it->numel) return KD_OK;
  kd_dev_op d;
  memset(&d, 0, sizeof d);
  d.kind = kind;
  d.code = ctx->mode;
  d.dtype = ops[0].dtype;
  d.it = it;
  d.ops = ops;
  d.i[0] = ctx->nidx;
  d.i[1] = ctx->es;
  for (int k = 0; k < ctx->nidx && k < 6; k++) d.i[2 + k] = ctx->stride[k];
  return kd_cpu_device_run(ctx->dev, &d);
}

/* Whether the n indices at ix (stride si bytes) are all in [0, size). */
static bool kd_ix_run_in_range(const char *ix, int64_t si, int64_t n, int64_t size) {
  if (si == (int64_t)sizeof(int64_t)) return kd_ix_all_in_range((const int64_t *)ix, n, size);
  if (si == 0) n = 1;
  int64_t bad = 0;
  for (int64_t i = 0; i < n; i++) bad |= (int64_t)((uint64_t)*(const int64_t *)(ix + i * si) >= (uint64_t)size);
  return !bad;
}

/* The gather loop with the index checks inside (Note [Index checks inside the gather]); a bad
 * index stops every thread's loop. */
typedef struct kd_ix_checked {
  const kd_ix_ctx *c;
  int bad; /* atomic */
} kd_ix_checked;

/* One index operand whose values vary along the run: each index checked right before the read
 * through it, as PyTorch's loop does. A plain scalar loop on purpose: the early exit keeps it
 * scalar at every CPU level, and scalar loads beat vector gathers here on the CPUs measured
 * (AVX-512 vpgatherqd ran the [1024, 1024] gather 1.1x slower than this loop on Sapphire
 * Rapids); the index read is the loop's only extra work. Returns false at a bad index. */
#define KD_IX_GATHER1_CHECKED(UT_)                                                             \
  if (so == (int64_t)sizeof(UT_) && si == 8 && ss == 0 && st == (int64_t)sizeof(UT_)) {        \
    UT_ *o_ = (UT_ *)o; /* gather along the inner dim of contiguous tensors */                 \
    const UT_ *s_ = (const UT_ *)s;                                                            \
    const int64_t *ix_ = (const int64_t *)ix;                                                  \
    for (int64_t i = 0; i < n; i++) {                                                          \
      const int64_t v_ = ix_[i];                                                               \
      if ((uint64_t)v_ >= (uint64_t)bound) return false;                                       \
      o_[i] = s_[v_];                                                                          \
    }                                                                                          \
    return true;                                                                               \
  }                                                                                            \
  for (int64_t i = 0; i < n; i++) {                                                            \
    const int64_t v_ = *(const int64_t *)(ix + i * si);                                        \
    if ((uint64_t)v_ >= (uint64_t)bound) return false;                                         \
    *(UT_ *)(o + i * so) = *(const UT_ *)(s + i * ss + v_ * st);                               \
  }                                                                                            \
  return true

static bool kd_ix_gather1_checked(const kd_ix_ctx *c, char **data, const int64_t *strides, int64_t n) {
  char *o = data[0];
  const char *s = data[1], *ix = data[2];
  const int64_t so = strides[0], ss = strides[1], si = strides[2], st = c->stride[0], bound = c->bound[0];
  switch (c->es) {
    case 1: KD_IX_GATHER1_CHECKED(uint8_t);
    case 2: KD_IX_GATHER1_CHECKED(uint16_t);
    case 4: KD_IX_GATHER1_CHECKED(uint32_t);
    default: KD_IX_GATHER1_CHECKED(uint64_t);
  }
}

static void kd_ix_gather_checked_loop(void *p, char **data, const int64_t *strides, int64_t n) {
  kd_ix_checked *k = (kd_ix_checked *)p;
  const kd_ix_ctx *c = k->c;
  if (__atomic_load_n(&k->bad, __ATOMIC_RELAXED)) return;
  if (c->nidx == 1 && strides[2] != 0 && (c->es == 1 || c->es == 2 || c->es == 4 || c->es == 8)) {
    if (!kd_ix_gather1_checked(c, data, strides, n)) __atomic_store_n(&k->bad, 1, __ATOMIC_RELAXED);
    return;
  }
  /* otherwise (an index constant along the run: a row copy; several indices; other sizes):
   * a block of indices checked, then gathered through */
  const int nops = 2 + c->nidx;
  char *ptrs[KD_ITER_MAX_OPS];
  for (int j = 0; j < nops; j++) ptrs[j] = data[j];
  for (int64_t i = 0; i < n; i += KD_IX_CHECK_BLOCK) {
    const int64_t m = n - i < KD_IX_CHECK_BLOCK ? n - i : KD_IX_CHECK_BLOCK;
    if (__atomic_load_n(&k->bad, __ATOMIC_RELAXED)) return;
    for (int q = 0; q < c->nidx; q++) {
      if (c->bound[q] > 0 && !kd_ix_run_in_range(ptrs[2 + q], strides[2 + q], m, c->bound[q])) {
        __atomic_store_n(&k->bad, 1, __ATOMIC_RELAXED);
        return;
      }
    }
    kd_ix_gather_loop((void *)c, ptrs, strides, m);
    for (int j = 0; j < nops; j++) ptrs[j] += m * strides[j];
  }
}

kd_status kd_ix_run_gather(kd_iter_operand *ops, int nops, const kd_ix_ctx *ctx) {
  kd_iter it;
  KD_TRY(kd_iter_build(&it, ops, nops, 1, 0));
  if (ctx->dev.type != KD_DEVICE_CPU) return kd_ix_run_device(KD_DEV_OP_IX_GATHER, &it, ops, ctx);
  if (!it.numel) return KD_OK;
  bool check = false;
  for (int q = 0; q < ctx->nidx; q++) check = check || ctx->bound[q] > 0;
  if (!check) {
    kd_iter_for_each(&it, kd_ix_gather_loop, (void *)ctx);
    return KD_OK;
  }
  kd_ix_checked k = {ctx, 0};
  kd_iter_for_each(&it, kd_ix_gather_checked_loop, &k);
  return k.bad ? kd_error(KD_ERR_INDEX, "index out of range") : KD_OK;
}

kd_status kd_ix_run_scatter(kd_iter_operand *ops, int nops, const kd_ix_ctx *ctx) {
  kd_iter it;
  KD_TRY(kd_iter_build(&it, ops, nops, 1, 0));
  if (ctx->dev.type != KD_DEVICE_CPU) return kd_ix_run_device(KD_DEV_OP_IX_SCATTER, &it, ops, ctx);
  if (!it.numel) return KD_OK;
  kd_iter_loop_fn loop = ctx->mode == KD_IX_COPY ? kd_ix_scatter_copy_loop : kd_ix_red_loops[ops[0].dtype];
  /* split along a dim the written operand owns (its stride-0 indexed dims stay whole in each
   * thread, so repeated indices still accumulate in order); kd_iter_for_each only splits the
   * outermost dim, which is usually the indexed one */
  if (!kd_red_run_owned(&it, loop, (void *)ctx, 1)) kd_iter_for_each(&it, loop, (void *)ctx);
  return KD_OK;
}
