/* attention_loops.c - the CPU loops of the fused attention (Note [Fused attention] in
 * attention.c, which checks the operands and lays out the kd_attn_plan they run): block products
 * on BLAS, the online softmax, dropout and the gradients. Compiled once per CPU level
 * (DISPATCHED_SOURCES: the exponentials go to libmvec's AVX2/AVX-512 variants, the scaling and
 * masking loops vectorise); cpu_dispatch.c forwards kd_attn_run_cpu to the level in use. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "core/random.h"
#include "cpu/attention.h"
#include "cpu/nn_common.h"
#include "cpu/unary_math.h"

/* Maximum of init and x[0, n), and the sum of x[0, n): eight lanes, so gcc vectorises the
 * reductions without reassociating a single accumulator (no -ffast-math). NaN is ignored by the
 * maximum; it reaches the output through exp and the sum. */
#define KD_ATTN_REDUCE(SFX, T)                                                                                         \
  static inline T kd_attn_max_##SFX(const T *x, int64_t n, T init) {                                                   \
    T m[8] = {init, init, init, init, init, init, init, init};                                                         \
    int64_t c = 0;                                                                                                     \
    for (; c + 8 <= n; c += 8)                                                                                         \
      for (int j = 0; j < 8; j++) m[j] = x[c + j] > m[j] ? x[c + j] : m[j];                                            \
    for (; c < n; c++) m[0] = x[c] > m[0] ? x[c] : m[0];                                                               \
    for (int j = 1; j < 8; j++) m[0] = m[j] > m[0] ? m[j] : m[0];                                                      \
    return m[0];                                                                                                       \
  }                                                                                                                    \
  static inline T kd_attn_sum_##SFX(const T *x, int64_t n) {                                                           \
    T a[8] = {0, 0, 0, 0, 0, 0, 0, 0};                                                                                 \
    int64_t c = 0;                                                                                                     \
    for (; c + 8 <= n; c += 8)                                                                                         \
      for (int j = 0; j < 8; j++) a[j] += x[c + j];                                                                    \
    for (; c < n; c++) a[0] += x[c];                                                                                   \
    return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));                                          \
  }
KD_ATTN_REDUCE(f32, float)
KD_ATTN_REDUCE(f64, double)

/* Dropout of the weights w[0, nk) of row i, keys j0..: w * keep / (1 - p), keep drawn for element
 * (n, i, j) of the contiguous [batch, L, S] weights as nativeDropout draws it. */
#define KD_ATTN_DROP(SFX, T)                                                                                           \
  static inline void kd_attn_drop_##SFX(const kd_attn_plan *p, int64_t n, int64_t i, int64_t j0, int64_t nk, T *w) {   \
    const float keep_below = (float)(1.0 - p->dropout);                                                                \
    const T f = p->dropout >= 1 ? (T)0 : (T)(1.0 / (1.0 - p->dropout));                                                \
    const uint64_t base = ((uint64_t)n * (uint64_t)p->L + (uint64_t)i) * (uint64_t)p->S + (uint64_t)j0;               \
    for (int64_t c = 0; c < nk; c++)                                                                                   \
      w[c] = kd_random_uniform_f32(p->seed, p->offset, base + (uint64_t)c) < keep_below ? w[c] * f : (T)0;            \
  }
KD_ATTN_DROP(f32, float)
KD_ATTN_DROP(f64, double)

/* ---- the CPU loops, once per float type ---- */
#define KD_ATTN_LOOPS(SFX, T, EXP, LOG)                                                                                \
  /* Scores of one block, scaled, masked (-inf where left out); returns nothing. */                                    \
  static void kd_attn_scores_##SFX(const kd_attn_plan *p, int64_t n, int64_t i0, int64_t nq, int64_t j0, int64_t nk,   \
                                   const T *qp, const T *kp, T *sb) {                                                  \
    kd_nn_gemm_##SFX(false, true, nq, nk, p->E, (T)p->scale, qp + i0 * p->rs[A_Q], p->rs[A_Q] ? p->rs[A_Q] : p->E,      \
                     kp + j0 * p->rs[A_K], p->rs[A_K] ? p->rs[A_K] : p->E, (T)0, sb, KD_ATTN_BK);                      \
    const char *mp = p->mask_kind ? p->data[A_M] + kd_attn_offset(p, A_M, n) * (int64_t)kd_dtype_size(p->mask_kind == 1 ? KD_DTYPE_BOOL : p->dtype) : NULL; \
    for (int64_t r = 0; r < nq; r++) {                                                                                 \
      T *s = sb + r * KD_ATTN_BK;                                                                                      \
      int64_t i = i0 + r;                                                                                              \
      if (p->causal)                                                                                                   \
        for (int64_t c = 0; c < nk; c++)                                                                               \
          if (j0 + c > i) s[c] = (T)-INFINITY;                                                                         \
      if (p->mask_kind == 1) {                                                                                         \
        const bool *mr = (const bool *)mp + i * p->rs[A_M] + j0 * p->cs[A_M];                                          \
        for (int64_t c = 0; c < nk; c++)                                                                               \
          if (!mr[c * p->cs[A_M]]) s[c] = (T)-INFINITY;                                                                \
      } else if (p->mask_kind == 2) {                                                                                  \
        const T *mr = (const T *)mp + i * p->rs[A_M] + j0 * p->cs[A_M];                                                \
        for (int64_t c = 0; c < nk; c++) s[c] += mr[c * p->cs[A_M]];                                                   \
      }                                                                                                                \
    }                                                                                                                  \
  }                                                                                                                    \
  static void kd_attn_forward_##SFX(void *ctx, int64_t b0, int64_t b1) {                                               \
    const kd_attn_plan *p = (const kd_attn_plan *)ctx;                                                                 \
    const int64_t nqb = (p->L + KD_ATTN_BQ - 1) / KD_ATTN_BQ, Ev = p->Ev;                                              \
    T *sb = (T *)malloc(sizeof(T) * (KD_ATTN_BQ * (KD_ATTN_BK + Ev + 2) + 1));                                         \
    if (!sb) return; /* the caller saw the allocation succeed once; see kd_attn_run */                                 \
    T *acc = sb + KD_ATTN_BQ * KD_ATTN_BK, *mx = acc + KD_ATTN_BQ * Ev, *sum = mx + KD_ATTN_BQ;                        \
    for (int64_t item = b0; item < b1; item++) {                                                                       \
      const int64_t n = item / nqb, i0 = (item % nqb) * KD_ATTN_BQ;                                                    \
      const int64_t nq = p->L - i0 < KD_ATTN_BQ ? p->L - i0 : KD_ATTN_BQ;                                              \
      const T *qp = (const T *)p->data[A_Q] + kd_attn_offset(p, A_Q, n);                                               \
      const T *kp = (const T *)p->data[A_K] + kd_attn_offset(p, A_K, n);                                               \
      const T *vp = (const T *)p->data[A_V] + kd_attn_offset(p, A_V, n);                                               \
      for (int64_t r = 0; r < nq; r++) { mx[r] = (T)-INFINITY; sum[r] = 0; }                                          \
      memset(acc, 0, sizeof(T) * nq * Ev);                                                                             \
      const int64_t kend = p->causal ? (p->S < i0 + nq ? p->S : i0 + nq) : p->S;                                      \
      for (int64_t j0 = 0; j0 < kend; j0 += KD_ATTN_BK) {                                                              \
        const int64_t nk = kend - j0 < KD_ATTN_BK ? kend - j0 : KD_ATTN_BK;                                            \
        kd_attn_scores_##SFX(p, n, i0, nq, j0, nk, qp, kp, sb);                                                        \
        for (int64_t r = 0; r < nq; r++) {                                                                             \
          T *s = sb + r * KD_ATTN_BK;                                                                                  \
          T mnew = kd_attn_max_##SFX(s, nk, mx[r]);                                                                    \
          if (mnew == (T)-INFINITY) { /* every key so far left out */                                                  \
            for (int64_t c = 0; c < nk; c++) s[c] = 0;                                                                 \
            continue;                                                                                                  \
          }                                                                                                            \
          T corr = EXP(mx[r] - mnew);                                                                                  \
          for (int64_t c = 0; c < nk; c++) s[c] = EXP(s[c] - mnew); /* vectorised (libmvec) */                         \
          sum[r] = sum[r] * corr + kd_attn_sum_##SFX(s, nk);                                                           \
          if (p->dropout > 0) kd_attn_drop_##SFX(p, n, i0 + r, j0, nk, s);                                              \
          mx[r] = mnew;                                                                                                \
          if (corr != (T)1) for (int64_t e = 0; e < Ev; e++) acc[r * Ev + e] *= corr;                                  \
        }                                                                                                              \
        kd_nn_gemm_##SFX(false, false, nq, Ev, nk, (T)1, sb, KD_ATTN_BK, vp + j0 * p->rs[A_V],                          \
                         p->rs[A_V] ? p->rs[A_V] : Ev, (T)1, acc, Ev > 0 ? Ev : 1);                                    \
      }                                                                                                                \
      T *op = (T *)p->out + (n * p->L + i0) * Ev, *lp = (T *)p->lse + n * p->L + i0;                                   \
      for (int64_t r = 0; r < nq; r++) {                                                                               \
        T inv = (T)1 / sum[r];                                                                                         \
        for (int64_t e = 0; e < Ev; e++) op[r * Ev + e] = sum[r] == 0 ? (T)NAN : acc[r * Ev + e] * inv;                \
        lp[r] = mx[r] + LOG(sum[r]);                                                                                   \
      }                                                                                                                \
    }                                                                                                                  \
    free(sb);                                                                                                          \
  }                                                                                                                    \
  static void kd_attn_backward_##SFX(void *ctx, int64_t b0, int64_t b1) {                                              \
    const kd_attn_plan *p = (const kd_attn_plan *)ctx;                                                                 \
    const int64_t L = p->L, S = p->S, E = p->E, Ev = p->Ev;                                                            \
    T *sb = (T *)malloc(sizeof(T) * (3 * KD_ATTN_BQ * KD_ATTN_BK + L + 1));                                            \
    if (!sb) return;                                                                                                   \
    T *db = sb + KD_ATTN_BQ * KD_ATTN_BK, *zb = db + KD_ATTN_BQ * KD_ATTN_BK, *dd = zb + KD_ATTN_BQ * KD_ATTN_BK;       \
    const T scale = (T)p->scale;                                                                                       \
    for (int64_t n = b0; n < b1; n++) {                                                                                \
      const T *qp = (const T *)p->data[A_Q] + kd_attn_offset(p, A_Q, n);                                               \
      const T *kp = (const T *)p->data[A_K] + kd_attn_offset(p, A_K, n);                                               \
      const T *vp = (const T *)p->data[A_V] + kd_attn_offset(p, A_V, n);                                               \
      const T *gp = (const T *)p->data[A_G] + kd_attn_offset(p, A_G, n);                                               \
      const T *op = (const T *)p->data[A_O] + kd_attn_offset(p, A_O, n);                                               \
      const T *lp = (const T *)p->data[A_LSE] + kd_attn_offset(p, A_LSE, n);                                           \
      T *dq = (T *)p->dq + n * L * E, *dk = (T *)p->dk + n * S * E, *dv = (T *)p->dv + n * S * Ev;                     \
      memset(dq, 0, sizeof(T) * L * E);                                                                                \
      memset(dk, 0, sizeof(T) * S * E);                                                                                \
      memset(dv, 0, sizeof(T) * S * Ev);                                                                               \
      for (int64_t i = 0; i < L; i++) { /* D = rowsum(dO * O) */                                                       \
        T d = 0;                                                                                                       \
        for (int64_t e = 0; e < Ev; e++) d += gp[i * p->rs[A_G] + e * p->cs[A_G]] * op[i * p->rs[A_O] + e * p->cs[A_O]]; \
        dd[i] = d;                                                                                                     \
      }                                                                                                                \
      const int64_t grs = p->rs[A_G] ? p->rs[A_G] : Ev, krs = p->rs[A_K] ? p->rs[A_K] : E;                             \
      const int64_t vrs = p->rs[A_V] ? p->rs[A_V] : Ev, qrs = p->rs[A_Q] ? p->rs[A_Q] : E;                             \
      for (int64_t j0 = 0; j0 < S; j0 += KD_ATTN_BK) {                                                                 \
        const int64_t nk = S - j0 < KD_ATTN_BK ? S - j0 : KD_ATTN_BK;                                                  \
        for (int64_t i0 = p->causal ? j0 / KD_ATTN_BQ * KD_ATTN_BQ : 0; i0 < L; i0 += KD_ATTN_BQ) {                    \
          const int64_t nq = L - i0 < KD_ATTN_BQ ? L - i0 : KD_ATTN_BQ;                                                \
          kd_attn_scores_##SFX(p, n, i0, nq, j0, nk, qp, kp, sb);                                                      \
          for (int64_t r = 0; r < nq; r++) {                                                                           \
            T *s = sb + r * KD_ATTN_BK, l = lp[(i0 + r) * p->rs[A_LSE]];                                               \
            for (int64_t c = 0; c < nk; c++) s[c] = EXP(s[c] - l);                                                     \
          }                                                                                                            \
          const T *pd = sb; /* the weights as the forward used them: dropped, or P itself */                           \
          if (p->dropout > 0) {                                                                                        \
            for (int64_t r = 0; r < nq; r++) {                                                                         \
              memcpy(zb + r * KD_ATTN_BK, sb + r * KD_ATTN_BK, sizeof(T) * nk);                                        \
              kd_attn_drop_##SFX(p, n, i0 + r, j0, nk, zb + r * KD_ATTN_BK);                                           \
            }                                                                                                          \
            pd = zb;                                                                                                   \
          }                                                                                                            \
          kd_nn_gemm_##SFX(true, false, nk, Ev, nq, (T)1, pd, KD_ATTN_BK, gp + i0 * p->rs[A_G], grs, (T)1,             \
                           dv + j0 * Ev, Ev > 0 ? Ev : 1);                                                             \
          kd_nn_gemm_##SFX(false, true, nq, nk, Ev, (T)1, gp + i0 * p->rs[A_G], grs, vp + j0 * p->rs[A_V], vrs, (T)0,  \
                           db, KD_ATTN_BK);                                                                            \
          for (int64_t r = 0; r < nq; r++) { /* dS = P (Z dP' - D), Z the kept weights' 1 / (1 - p) */                 \
            T *s = sb + r * KD_ATTN_BK, *g = db + r * KD_ATTN_BK, d = dd[i0 + r];                                      \
            if (p->dropout > 0) kd_attn_drop_##SFX(p, n, i0 + r, j0, nk, g);                                           \
            for (int64_t c = 0; c < nk; c++) g[c] = s[c] * (g[c] - d);                                                 \
          }                                                                                                            \
          kd_nn_gemm_##SFX(false, false, nq, E, nk, scale, db, KD_ATTN_BK, kp + j0 * p->rs[A_K], krs, (T)1,            \
                           dq + i0 * E, E > 0 ? E : 1);                                                                \
          kd_nn_gemm_##SFX(true, false, nk, E, nq, scale, db, KD_ATTN_BK, qp + i0 * p->rs[A_Q], qrs, (T)1,             \
                           dk + j0 * E, E > 0 ? E : 1);                                                                \
        }                                                                                                              \
      }                                                                                                                \
    }                                                                                                                  \
    free(sb);                                                                                                          \
  }
KD_ATTN_LOOPS(f32, float, kd_vm_expf, logf)
KD_ATTN_LOOPS(f64, double, kd_vm_exp, log)

/* Runs the CPU loops (after a trial allocation of the largest work buffer, so an out-of-memory
 * is an error here rather than a silent skip inside a task). */
kd_status kd_attn_run_cpu(kd_attn_plan *p, bool backward) {
  size_t es = kd_dtype_size(p->dtype);
  size_t need = backward ? es * (3 * KD_ATTN_BQ * KD_ATTN_BK + (size_t)p->L + 1)
                         : es * (KD_ATTN_BQ * (KD_ATTN_BK + (size_t)p->Ev + 2) + 1);
  void *trial = malloc(need);
  if (!trial) return kd_error(KD_ERR_OOM, "scaled_dot_product_attention: out of memory for %zu bytes", need);
  free(trial);
  bool f64 = p->dtype == KD_DTYPE_F64;
  if (backward) {
    kd_nn_parallel_blas(p->nbatch, f64 ? kd_attn_backward_f64 : kd_attn_backward_f32, p);
  } else {
    int64_t items = p->nbatch * ((p->L + KD_ATTN_BQ - 1) / KD_ATTN_BQ);
    kd_nn_parallel_blas(items, f64 ? kd_attn_forward_f64 : kd_attn_forward_f32, p);
  }
  return KD_OK;
}

