/* optim.c - CPU kernel of the fused optimizer updates (src/ops/oplist/optim.js): one kernel,
 * kd_cpu_optim, with KD_OPTIM_* codes selecting SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, RAdam,
 * Adamax, NAdam, ASGD or Rprop. For each
 * parameter it runs ONE pass of the strided iterator over the parameter and its state tensors
 * (outputs, written in place) and the gradient (the last operand), so an Adam step reads and
 * writes every element once instead of through the ~8 temporaries of PyTorch's single-tensor
 * path. The arithmetic follows PyTorch 1.13's torch/optim/<name>.py op by op (same order of
 * operations and scalar folding) so results match to rounding. The single forms (`adamStep_`)
 * take tensors, the foreach forms (`foreachAdamStep_`) tensor lists; both are read into lists
 * here. Everything is checked before anything is written; float16/bfloat16 compute in float32.
 * Updated tensors get their version bumped (they are in-place writes). Compiled once per CPU level
 * (Note [CPU capability dispatch] in cpu_capability.h). */
#include "core/storage.h"
#include "cpu/cpu_loops.h"
#include "cpu/device_op.h"

/* The build keeps math-errno (see unary_math.h), under which gcc does not vectorize sqrt; the
 * square roots here only ever see sums of squares, so errno never matters. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-math-errno")
#endif

#define KD_OPTIM_MAX_LISTS 5

typedef struct kd_optim_ctx {
  int code;
  int nops;
  int k_buf, k_gavg, k_max; /* operand index of optional state (-1: absent) */
  double lr, a, b, eps, wd, mom, damp, step_size, bc2_sqrt;
  double bc1, rect; /* RAdam: the first bias correction; the rectification (0: not rectified this step) */
  bool maximize, nesterov, first, decoupled;
} kd_optim_ctx;
/* Fields the later updates reuse (they travel in the same 11 doubles to the device):
 *   Adamax  a, b: betas; step_size: lr / (1 - beta1^step)
 *   NAdam   a, b: betas; damp: 1 - beta2^step; step_size, mom: the gradient's and expAvg's coefficients
 *   ASGD    a: 1 - lambd * eta; lr: eta; mom: mu
 *   Rprop   a, b: etaminus, etaplus; damp, mom: the step size's bounds */

static inline float kd_optim_sqrtf(float x) { return __builtin_sqrtf(x); }
static inline double kd_optim_sqrt(double x) { return __builtin_sqrt(x); }

/* Element updates: P, G, S1, S2, S3 are lvalues of storage type T (param, grad, state). */
/* The gradient of most updates: p_ and g_ loaded, negated with maximize, plus L2 weight decay. */
#define KD_OPTIM_GRAD(CT, LD, P, G)                                                           \
  CT p_ = LD(P), g_ = LD(G);                                                                  \
  g_ = maximize ? -g_ : g_;                                                                     \
  if (use_wd) g_ = g_ + wd * p_

/* Adam's moment estimates (Adam, AdamW, RAdam): m_ and v_ updated, stored, read back rounded. */
#define KD_OPTIM_MOMENTS(CT, LD, ST, M, V)                                                    \
  CT m_ = LD(M) * b1 + omb1 * g_;                                                             \
  CT v_ = LD(V) * b2 + omb2 * g_ * g_;                                                        \
  M = ST(m_);                                                                                 \
  V = ST(v_);                                                                                 \
  m_ = LD(ST(m_));                                                                            \
  v_ = LD(ST(v_))

#define KD_SGD_ELEM(CT, LD, ST, P, G, B)                                                      \
  do {                                                                                        \
    KD_OPTIM_GRAD(CT, LD, P, G);                                                              \
    if (has_buf) {                                                                            \
      CT b_ = first ? g_ : LD(B) * mom + omd * g_;                                            \
      B = ST(b_);                                                                             \
      g_ = nesterov ? g_ + mom * b_ : b_;                                                     \
    }                                                                                         \
    P = ST(p_ + nlr * g_);                                                                    \
  } while (0)

#define KD_ADAM_ELEM(CT, SQ, LD, ST, P, G, M, V, VM)                                          \
  do {                                                                                        \
    CT p_ = LD(P), g_ = LD(G);                                                                \
    g_ = maximize ? -g_ : g_;                                                                   \
    if (decoupled) p_ = p_ * decay;                                                           \
    else if (use_wd) g_ = g_ + wd * p_;                                                      \
    KD_OPTIM_MOMENTS(CT, LD, ST, M, V);                                                       \
    CT d_;                                                                                    \
    if (has_max) {                                                                            \
      CT x_ = LD(VM);                                                                         \
      x_ = (x_ > v_ || x_ != x_) ? x_ : v_;                                                   \
      VM = ST(x_);                                                                            \
      d_ = SQ(LD(ST(x_))) / bc2s + eps;                                                       \
    } else {                                                                                  \
      d_ = SQ(v_) / bc2s + eps;                                                               \
    }                                                                                         \
    P = ST(p_ + nss * (m_ / d_));                                                             \
  } while (0)

#define KD_RMSPROP_ELEM(CT, SQ, LD, ST, P, G, S, GA, B)                                       \
  do {                                                                                        \
    KD_OPTIM_GRAD(CT, LD, P, G);                                                              \
    CT s_ = LD(S) * alpha + oma * g_ * g_;                                                    \
    S = ST(s_);                                                                               \
    s_ = LD(ST(s_));                                                                          \
    CT avg_;                                                                                  \
    if (has_gavg) {                                                                           \
      CT ga_ = LD(GA) * alpha + oma * g_;                                                     \
      GA = ST(ga_);                                                                           \
      ga_ = LD(ST(ga_));                                                                      \
      avg_ = SQ(s_ + (CT)-1 * ga_ * ga_);                                                     \
    } else {                                                                                  \
      avg_ = SQ(s_);                                                                          \
    }                                                                                         \
    avg_ = avg_ + eps;                                                                        \
    if (has_buf) {                                                                            \
      CT b_ = LD(B) * mom + g_ / avg_;                                                        \
      B = ST(b_);                                                                             \
      P = ST(p_ + nlr * LD(ST(b_)));                                                          \
    } else {                                                                                  \
      P = ST(p_ + nlr * (g_ / avg_));                                                         \
    }                                                                                         \
  } while (0)

#define KD_ADAGRAD_ELEM(CT, SQ, LD, ST, P, G, S)                                              \
  do {                                                                                        \
    KD_OPTIM_GRAD(CT, LD, P, G);                                                              \
    CT s_ = LD(S) + g_ * g_;                                                                  \
    S = ST(s_);                                                                               \
    CT std_ = SQ(LD(ST(s_))) + eps;                                                           \
    P = ST(p_ + nlr * (g_ / std_));                                                           \
  } while (0)

/* Adadelta: rho in a, 1 - rho as omr; P, G, S, A: param, grad, squareAvg, accDelta. */
#define KD_ADADELTA_ELEM(CT, SQ, LD, ST, P, G, S, A)                                          \
  do {                                                                                        \
    KD_OPTIM_GRAD(CT, LD, P, G);                                                              \
    CT s_ = LD(S) * rho + omr * g_ * g_;                                                      \
    S = ST(s_);                                                                               \
    const CT std_ = SQ(LD(ST(s_)) + eps);                                                     \
    const CT a_ = LD(A);                                                                      \
    const CT d_ = LD(ST(SQ(a_ + eps) / std_ * g_));                                           \
    A = ST(a_ * rho + omr * d_ * d_);                                                         \
    P = ST(p_ + nlr * d_);                                                                    \
  } while (0)

/* RAdam: ((expAvg / bc1) * lr) * (1 / (sqrt(expAvgSq) + eps) * sqrt(bc2)) * rect once rectified,
 * (expAvg / bc1) * lr before, subtracted from the parameter (PyTorch's order of operations). */
#define KD_RADAM_ELEM(CT, SQ, LD, ST, P, G, M, V)                                             \
  do {                                                                                        \
    KD_OPTIM_GRAD(CT, LD, P, G); /* maximize: false (PyTorch 1.13's RAdam has none) */        \
    KD_OPTIM_MOMENTS(CT, LD, ST, M, V);                                                       \
    const CT c_ = LD(ST(m_ / bc1)) * lr;                                                      \
    if (rectified) P = ST(p_ - c_ * ((CT)1 / (SQ(v_) + eps) * bc2s) * rect);                  \
    else P = ST(p_ - c_);                                                                     \
  } while (0)

/* Adamax: expAvg M, the infinity norm U (max(U * beta2, |g| + eps), NaN-propagating as amax). */
#define KD_ADAMAX_ELEM(CT, LD, ST, P, G, M, U)                                                \
  do {                                                                                        \
    KD_OPTIM_GRAD(CT, LD, P, G);                                                              \
    CT m_ = LD(M) * b1 + omb1 * g_;                                                           \
    M = ST(m_);                                                                               \
    m_ = LD(ST(m_));                                                                          \
    CT u_ = LD(ST(LD(U) * b2));                                                               \
    const CT a_ = LD(ST((g_ < 0 ? -g_ : g_) + eps));                                          \
    u_ = (u_ > a_ || u_ != u_) ? u_ : a_;                                                     \
    U = ST(u_);                                                                               \
    P = ST(p_ + nclr * m_ / u_);                                                              \
  } while (0)

/* NAdam: the moments, then two addcdiv steps over one denominator (PyTorch's order). */
#define KD_NADAM_ELEM(CT, SQ, LD, ST, P, G, M, V)                                             \
  do {                                                                                        \
    KD_OPTIM_GRAD(CT, LD, P, G);                                                              \
    KD_OPTIM_MOMENTS(CT, LD, ST, M, V);                                                       \
    const CT d_ = SQ(LD(ST(v_ / bc2))) + eps;                                                 \
    p_ = LD(ST(p_ + gcoef * g_ / d_));                                                        \
    P = ST(p_ + mcoef * m_ / d_);                                                             \
  } while (0)

/* ASGD: decay, SGD step, then the running average AX (a copy while mu is 1). */
#define KD_ASGD_ELEM(CT, LD, ST, P, G, AX)                                                    \
  do {                                                                                        \
    KD_OPTIM_GRAD(CT, LD, P, G);                                                              \
    p_ = LD(ST(p_ * decay));                                                                  \
    p_ = LD(ST(p_ + neta * g_));                                                              \
    P = ST(p_);                                                                               \
    if (mu_one) AX = ST(p_);                                                                  \
    else {                                                                                    \
      const CT ax_ = LD(AX);                                                                  \
      AX = ST(ax_ + LD(ST(LD(ST(p_ - ax_)) * mu)));                                           \
    }                                                                                         \
  } while (0)

/* Rprop: per-element step sizes S grown or shrunk by the sign of grad * PREV; where the sign
 * flipped the gradient counts as 0 (and is remembered as 0). */
#define KD_RPROP_ELEM(CT, LD, ST, P, G, PREV, S)                                              \
  do {                                                                                        \
    const CT p_ = LD(P); /* (no comma: KD_RUN passes this on expanded) */                     \
    CT g_ = LD(G);                                                                            \
    g_ = maximize ? -g_ : g_;                                                                   \
    const CT x_ = LD(ST(g_ * LD(PREV)));                                                      \
    const CT s_ = x_ > 0 ? etaplus : x_ < 0 ? etaminus : (CT)1;                               \
    CT st_ = LD(ST(LD(S) * s_));                                                              \
    st_ = st_ < smin ? smin : st_ > smax ? smax : st_;                                        \
    S = ST(st_);                                                                              \
    if (s_ == etaminus) g_ = 0;                                                               \
    const CT sg_ = g_ > 0 ? (CT)1 : g_ < 0 ? (CT)-1 : (CT)0;                                  \
    P = ST(p_ + ((CT)-1 * sg_) * st_);                                                        \
    PREV = ST(g_);                                                                            \
  } while (0)

/* KD_SPEC(flag, RT, CODE): CODE twice, with the const bool `flag` true and false (selected by
 * RT), so the contiguous loops have no branches on options and vectorize. */
#define KD_SPEC(NAME, RT, ...)                                                                \
  if (RT) { const bool NAME = true; __VA_ARGS__ } else { const bool NAME = false; __VA_ARGS__ }

/* Contiguous runs use restrict pointers (no alias versioning) and specialised flags (SPEC
 * wraps the loop); other runs index by strides. */
#define KD_AT(T, k) (*(T *)(data[k] + i * strides[k]))
#define KD_SPEC_NONE(...) __VA_ARGS__
#define KD_RUN(T, ELEM_CONTIG, ELEM_STRIDED) KD_RUN_SPEC(T, KD_SPEC_NONE, ELEM_CONTIG, ELEM_STRIDED)
#define KD_RUN_SPEC(T, SPEC, ELEM_CONTIG, ELEM_STRIDED)                                                  \
  do {                                                                                        \
    bool contig_ = true;                                                                      \
    for (int k_ = 0; k_ < c->nops; k_++) contig_ = contig_ && strides[k_] == (int64_t)sizeof(T); \
    if (contig_) {                                                                            \
      T *restrict p = (T *)data[0];                                                           \
      T *restrict s1 = (T *)data[c->nops > 2 ? 1 : 0];                                        \
      T *restrict s2 = (T *)data[c->nops > 3 ? 2 : 0];                                        \
      T *restrict s3 = (T *)data[c->nops > 4 ? 3 : 0];                                        \
      const T *restrict g = (const T *)data[c->nops - 1];                                     \
      (void)s1; (void)s2; (void)s3;                                                           \
      SPEC(for (int64_t i = 0; i < n; i++) ELEM_CONTIG;)                                      \
    } else {                                                                                  \
      for (int64_t i = 0; i < n; i++) ELEM_STRIDED;                                           \
    }                                                                                         \
  } while (0)

#define KD_SGD_SPEC(...) KD_SPEC(has_buf, c->k_buf >= 0, KD_SPEC(first, c->first, KD_SPEC(use_wd, c->wd != 0, __VA_ARGS__)))
#define KD_ADAM_SPEC(...) KD_SPEC(has_max, c->k_max >= 0, KD_SPEC(decoupled, c->decoupled, KD_SPEC(use_wd, c->wd != 0, __VA_ARGS__)))
#define KD_RMSPROP_SPEC(...) KD_SPEC(has_buf, c->k_buf >= 0, KD_SPEC(use_wd, c->wd != 0, __VA_ARGS__))
#define KD_ADAGRAD_SPEC(...) KD_SPEC(use_wd, c->wd != 0, __VA_ARGS__)
#define KD_ADADELTA_SPEC(...) KD_SPEC(use_wd, c->wd != 0, __VA_ARGS__)
#define KD_RADAM_SPEC(...) KD_SPEC(rectified, c->rect != 0, KD_SPEC(use_wd, c->wd != 0, __VA_ARGS__))
#define KD_ADAMAX_SPEC(...) KD_SPEC(use_wd, c->wd != 0, __VA_ARGS__)
#define KD_NADAM_SPEC(...) KD_SPEC(use_wd, c->wd != 0, __VA_ARGS__)
#define KD_ASGD_SPEC(...) KD_SPEC(mu_one, c->mom == 1, KD_SPEC(use_wd, c->wd != 0, __VA_ARGS__))

#define KD_OPTIM_DEF(SFX, DT, T, CT, LD, ST, MS, K, UT)                                       \
  static void kd_optim_sgd_##SFX(void *vc, char **data, const int64_t *strides, int64_t n) { \
    const kd_optim_ctx *c = (const kd_optim_ctx *)vc;                                         \
    const CT wd = (CT)c->wd, mom = (CT)c->mom, omd = (CT)(1.0 - c->damp), nlr = (CT)(-c->lr); \
    const bool maximize = c->maximize, nesterov = c->nesterov, first = c->first;              \
    const bool has_buf = c->k_buf >= 0;                                                       \
    const int kb = has_buf ? c->k_buf : 0, kg = c->nops - 1;                                  \
    const bool use_wd = c->wd != 0;                                                           \
    KD_RUN_SPEC(T, KD_SGD_SPEC, KD_SGD_ELEM(CT, LD, ST, p[i], g[i], s1[i]),                                     \
           KD_SGD_ELEM(CT, LD, ST, KD_AT(T, 0), KD_AT(T, kg), KD_AT(T, kb)));                          \
  }                                                                                           \
  static void kd_optim_adam_##SFX(void *vc, char **data, const int64_t *strides, int64_t n) { \
    const kd_optim_ctx *c = (const kd_optim_ctx *)vc;                                         \
    const CT wd = (CT)c->wd, b1 = (CT)c->a, b2 = (CT)c->b, omb1 = (CT)(1.0 - c->a);           \
    const CT omb2 = (CT)(1.0 - c->b), eps = (CT)c->eps, bc2s = (CT)c->bc2_sqrt;               \
    const CT nss = (CT)(-c->step_size), decay = (CT)(1.0 - c->lr * c->wd);                    \
    const bool maximize = c->maximize, decoupled = c->decoupled, has_max = c->k_max >= 0;     \
    const int km = has_max ? c->k_max : 0, kg = c->nops - 1;                                  \
    const bool use_wd = c->wd != 0;                                                           \
    KD_RUN_SPEC(T, KD_ADAM_SPEC, KD_ADAM_ELEM(CT, kd_optim_sqrt##MS, LD, ST, p[i], g[i], s1[i], s2[i], s3[i]),   \
           KD_ADAM_ELEM(CT, kd_optim_sqrt##MS, LD, ST, KD_AT(T, 0), KD_AT(T, kg), KD_AT(T, 1), KD_AT(T, 2), \
                        KD_AT(T, km)));                                                          \
  }                                                                                           \
  static void kd_optim_rmsprop_##SFX(void *vc, char **data, const int64_t *strides, int64_t n) { \
    const kd_optim_ctx *c = (const kd_optim_ctx *)vc;                                         \
    const CT wd = (CT)c->wd, alpha = (CT)c->a, oma = (CT)(1.0 - c->a), eps = (CT)c->eps;      \
    const CT mom = (CT)c->mom, nlr = (CT)(-c->lr);                                            \
    const bool maximize = c->maximize, has_gavg = c->k_gavg >= 0, has_buf = c->k_buf >= 0;    \
    const int ka = has_gavg ? c->k_gavg : 0, kb = has_buf ? c->k_buf : 0, kg = c->nops - 1;   \
    const bool use_wd = c->wd != 0;                                                           \
    if (has_gavg) {                                                                           \
      KD_RUN_SPEC(T, KD_RMSPROP_SPEC, KD_RMSPROP_ELEM(CT, kd_optim_sqrt##MS, LD, ST, p[i], g[i], s1[i], s2[i], s3[i]), \
             KD_RMSPROP_ELEM(CT, kd_optim_sqrt##MS, LD, ST, KD_AT(T, 0), KD_AT(T, kg), KD_AT(T, 1),    \
                             KD_AT(T, ka), KD_AT(T, kb)));                                          \
    } else {                                                                                  \
      KD_RUN_SPEC(T, KD_RMSPROP_SPEC, KD_RMSPROP_ELEM(CT, kd_optim_sqrt##MS, LD, ST, p[i], g[i], s1[i], s2[i], s2[i]), \
             KD_RMSPROP_ELEM(CT, kd_optim_sqrt##MS, LD, ST, KD_AT(T, 0), KD_AT(T, kg), KD_AT(T, 1),    \
                             KD_AT(T, ka), KD_AT(T, kb)));                                          \
    }                                                                                         \
  }                                                                                           \
  static void kd_optim_adagrad_##SFX(void *vc, char **data, const int64_t *strides, int64_t n) { \
    const kd_optim_ctx *c = (const kd_optim_ctx *)vc;                                         \
    const CT wd = (CT)c->wd, eps = (CT)c->eps, nlr = (CT)(-c->step_size);                     \
    const bool maximize = c->maximize;                                                        \
    const int kg = c->nops - 1;                                                               \
    const bool use_wd = c->wd != 0;                                                           \
    KD_RUN_SPEC(T, KD_ADAGRAD_SPEC, KD_ADAGRAD_ELEM(CT, kd_optim_sqrt##MS, LD, ST, p[i], g[i], s1[i]),              \
           KD_ADAGRAD_ELEM(CT, kd_optim_sqrt##MS, LD, ST, KD_AT(T, 0), KD_AT(T, kg), KD_AT(T, 1)));    \
  }                                                                                           \
  static void kd_optim_adadelta_##SFX(void *vc, char **data, const int64_t *strides, int64_t n) { \
    const kd_optim_ctx *c = (const kd_optim_ctx *)vc;                                         \
    const CT wd = (CT)c->wd, eps = (CT)c->eps, rho = (CT)c->a, omr = (CT)(1.0 - c->a);        \
    const CT nlr = (CT)(-c->lr);                                                              \
    const bool maximize = c->maximize;                                                        \
    const int kg = c->nops - 1;                                                               \
    const bool use_wd = c->wd != 0;                                                           \
    KD_RUN_SPEC(T, KD_ADADELTA_SPEC, KD_ADADELTA_ELEM(CT, kd_optim_sqrt##MS, LD, ST, p[i], g[i], s1[i], s2[i]), \
           KD_ADADELTA_ELEM(CT, kd_optim_sqrt##MS, LD, ST, KD_AT(T, 0), KD_AT(T, kg), KD_AT(T, 1), KD_AT(T, 2))); \
  }                                                                                           \
  static void kd_optim_radam_##SFX(void *vc, char **data, const int64_t *strides, int64_t n) { \
    const kd_optim_ctx *c = (const kd_optim_ctx *)vc;                                         \
    const CT wd = (CT)c->wd, b1 = (CT)c->a, b2 = (CT)c->b, omb1 = (CT)(1.0 - c->a);           \
    const CT omb2 = (CT)(1.0 - c->b), eps = (CT)c->eps, bc2s = (CT)c->bc2_sqrt;               \
    const CT bc1 = (CT)c->bc1, lr = (CT)c->lr, rect = (CT)c->rect;                            \
    const bool maximize = c->maximize;                                                        \
    const int kg = c->nops - 1;                                                               \
    const bool use_wd = c->wd != 0, rectified = c->rect != 0;                                 \
    KD_RUN_SPEC(T, KD_RADAM_SPEC, KD_RADAM_ELEM(CT, kd_optim_sqrt##MS, LD, ST, p[i], g[i], s1[i], s2[i]), \
           KD_RADAM_ELEM(CT, kd_optim_sqrt##MS, LD, ST, KD_AT(T, 0), KD_AT(T, kg), KD_AT(T, 1), KD_AT(T, 2))); \
  }                                                                                           \
  static void kd_optim_adamax_##SFX(void *vc, char **data, const int64_t *strides, int64_t n) { \
    const kd_optim_ctx *c = (const kd_optim_ctx *)vc;                                         \
    const CT wd = (CT)c->wd, b1 = (CT)c->a, b2 = (CT)c->b, omb1 = (CT)(1.0 - c->a);           \
    const CT eps = (CT)c->eps, nclr = (CT)(-c->step_size);                                    \
    const bool maximize = c->maximize, use_wd = c->wd != 0;                                   \
    const int kg = c->nops - 1;                                                               \
    KD_RUN_SPEC(T, KD_ADAMAX_SPEC, KD_ADAMAX_ELEM(CT, LD, ST, p[i], g[i], s1[i], s2[i]),         \
           KD_ADAMAX_ELEM(CT, LD, ST, KD_AT(T, 0), KD_AT(T, kg), KD_AT(T, 1), KD_AT(T, 2)));    \
  }                                                                                           \
  static void kd_optim_nadam_##SFX(void *vc, char **data, const int64_t *strides, int64_t n) { \
    const kd_optim_ctx *c = (const kd_optim_ctx *)vc;                                         \
    const CT wd = (CT)c->wd, b1 = (CT)c->a, b2 = (CT)c->b, omb1 = (CT)(1.0 - c->a);           \
    const CT omb2 = (CT)(1.0 - c->b), eps = (CT)c->eps, bc2 = (CT)c->damp;                    \
    const CT gcoef = (CT)c->step_size, mcoef = (CT)c->mom;                                    \
    const bool maximize = c->maximize, use_wd = c->wd != 0;                                   \
    const int kg = c->nops - 1;                                                               \
    KD_RUN_SPEC(T, KD_NADAM_SPEC, KD_NADAM_ELEM(CT, kd_optim_sqrt##MS, LD, ST, p[i], g[i], s1[i], s2[i]), \
           KD_NADAM_ELEM(CT, kd_optim_sqrt##MS, LD, ST, KD_AT(T, 0), KD_AT(T, kg), KD_AT(T, 1), KD_AT(T, 2))); \
  }                                                                                           \
  static void kd_optim_asgd_##SFX(void *vc, char **data, const int64_t *strides, int64_t n) { \
    const kd_optim_ctx *c = (const kd_optim_ctx *)vc;                                         \
    const CT wd = (CT)c->wd, decay = (CT)c->a, neta = (CT)(-c->lr), mu = (CT)c->mom;          \
    const bool maximize = c->maximize, use_wd = c->wd != 0, mu_one = c->mom == 1;             \
    const int kg = c->nops - 1;                                                               \
    KD_RUN_SPEC(T, KD_ASGD_SPEC, KD_ASGD_ELEM(CT, LD, ST, p[i], g[i], s1[i]),                  \
           KD_ASGD_ELEM(CT, LD, ST, KD_AT(T, 0), KD_AT(T, kg), KD_AT(T, 1)));                   \
  }                                                                                           \
  static void kd_optim_rprop_##SFX(void *vc, char **data, const int64_t *strides, int64_t n) { \
    const kd_optim_ctx *c = (const kd_optim_ctx *)vc;                                         \
    const CT etaminus = LD(ST((CT)c->a)), etaplus = LD(ST((CT)c->b));                         \
    const CT smin = (CT)c->damp, smax = (CT)c->mom;                                           \
    const bool maximize = c->maximize;                                                        \
    const int kg = c->nops - 1;                                                               \
    KD_RUN(T, KD_RPROP_ELEM(CT, LD, ST, p[i], g[i], s1[i], s2[i]),                             \
           KD_RPROP_ELEM(CT, LD, ST, KD_AT(T, 0), KD_AT(T, kg), KD_AT(T, 1), KD_AT(T, 2)));     \
  }
KD_ROWS_FLOAT(KD_OPTIM_DEF)

#define KD_OPTIM_ENTRY(SFX, DT, ...)                                                          \
  [DT] = {kd_optim_sgd_##SFX, kd_optim_adam_##SFX, kd_optim_rmsprop_##SFX, kd_optim_adagrad_##SFX,           \
          kd_optim_adadelta_##SFX, kd_optim_radam_##SFX, kd_optim_adamax_##SFX, kd_optim_nadam_##SFX,               \
          kd_optim_asgd_##SFX, kd_optim_rprop_##SFX},
static const kd_iter_loop_fn kd_optim_loops[KD_DTYPE_COUNT][10] = {KD_ROWS_FLOAT(KD_OPTIM_ENTRY)};

/* Row of kd_optim_loops for a code (Adam and AdamW share one loop). */
static int kd_optim_family(int code) {
  switch (code) {
    case KD_OPTIM_SGD: return 0;
    case KD_OPTIM_ADAM: case KD_OPTIM_ADAMW: return 1;
    case KD_OPTIM_RMSPROP: return 2;
    case KD_OPTIM_ADAGRAD: return 3;
    case KD_OPTIM_ADADELTA: return 4;
    case KD_OPTIM_RADAM: return 5;
    case KD_OPTIM_ADAMAX: return 6;
    case KD_OPTIM_NADAM: return 7;
    case KD_OPTIM_ASGD: return 8;
    default: return 9;
  }
}

/* The step count of the updates whose scalars depend on it (the new count: at least 1). */
static kd_status kd_optim_check_step(double step) {
  if (!(step >= 1)) return kd_error(KD_ERR_INVALID_ARGUMENT, "optimizer step: step must be at least 1, got %g", step);
  return KD_OK;
}

/* A Tensor, Tensor? or Tensor[] argument as a list. */
typedef struct kd_optim_list { kd_tensor *const *t; int n; } kd_optim_list;
static kd_optim_list kd_optim_list_of(kd_value *v) {
  kd_optim_list l = {NULL, 0};
  if (v->kind == KD_VALUE_TENSOR) { l.t = &v->v.t; l.n = 1; }
  else if (v->kind == KD_VALUE_TENSORLIST) { l.t = v->v.tlist.data; l.n = v->v.tlist.n; }
  return l;
}

static const char *kd_optim_list_name(int code, int k) {
  static const char *names[10][KD_OPTIM_MAX_LISTS] = {
    {"params", "grads", "momentumBuffers", 0, 0},
    {"params", "grads", "expAvgs", "expAvgSqs", "maxExpAvgSqs"},
    {"params", "grads", "squareAvgs", "gradAvgs", "momentumBuffers"},
    {"params", "grads", "stateSums", 0, 0},
    {"params", "grads", "squareAvgs", "accDeltas", 0},
    {"params", "grads", "expAvgs", "expAvgSqs", 0},
    {"params", "grads", "expAvgs", "expInfs", 0},
    {"params", "grads", "expAvgs", "expAvgSqs", 0},
    {"params", "grads", "axs", 0, 0},
    {"params", "grads", "prevs", "stepSizes", 0},
  };
  return names[kd_optim_family(code)][k];
}

static kd_status kd_optim_check(const kd_tensor *p, const kd_tensor *t, const char *what, int i) {
  if (!kd_device_eq(kd_tensor_device(t), kd_tensor_device(p))) {
    if (kd_tensor_device(p).type == KD_DEVICE_CPU)
      return kd_error(KD_ERR_DEVICE, "optimizer step: %s[%d] is not on the CPU", what, i);
    return kd_error(KD_ERR_DEVICE, "optimizer step: %s[%d] is not on the device of its parameter", what, i);
  }
  if (t->dtype != p->dtype)
    return kd_error(KD_ERR_DTYPE, "optimizer step: %s[%d] has dtype %s but the parameter has dtype %s", what, i,
                    kd_cpu_torch_name(t->dtype), kd_cpu_torch_name(p->dtype));
  if (t->ndim != p->ndim || memcmp(t->sizes, p->sizes, sizeof(int64_t) * p->ndim) != 0)
    return kd_error(KD_ERR_SHAPE, "optimizer step: %s[%d] must have the shape of its parameter", what, i);
  return KD_OK;
}

/* One parameter's built iteration on its device: the device hook (kd_dev_op of kind OPTIM). */
static kd_status kd_optim_device(const kd_tensor *p, const kd_iter *it, const kd_iter_operand *ops, const kd_optim_ctx *c) {
  if (!it->numel) return KD_OK;
  kd_dev_op d;
  memset(&d, 0, sizeof d);
  d.kind = KD_DEV_OP_OPTIM;
  d.code = c->code;
  d.dtype = p->dtype;
  d.it = it;
  d.ops = ops;
  d.i[0] = c->k_buf;
  d.i[1] = c->k_gavg;
  d.i[2] = c->k_max;
  d.i[3] = c->maximize;
  d.i[4] = c->nesterov;
  d.i[5] = c->first;
  d.i[6] = c->decoupled;
  const double v[11] = {c->lr, c->a, c->b, c->eps, c->wd, c->mom, c->damp, c->step_size, c->bc2_sqrt, c->bc1, c->rect};
  memcpy(d.d, v, sizeof v);
  return kd_cpu_device_run(kd_tensor_device(p), &d);
}

KD_KERNEL(kd_cpu_optim) {
  (void)ks;
  const int code = op->code;
  const int nlists = code == KD_OPTIM_SGD || code == KD_OPTIM_ADAGRAD || code == KD_OPTIM_ASGD ? 3
                     : code == KD_OPTIM_ADAM || code == KD_OPTIM_ADAMW || code == KD_OPTIM_RMSPROP ? 5 : 4;
  kd_optim_list L[KD_OPTIM_MAX_LISTS];
  for (int k = 0; k < nlists; k++) L[k] = kd_optim_list_of(&args[k]);
  kd_optim_ctx c;
  memset(&c, 0, sizeof c);
  c.code = code;
  const kd_value *s = &args[nlists];
  /* which lists must be full (n params) and which may be empty */
  bool required[KD_OPTIM_MAX_LISTS] = {true, true, false, false, false};
  switch (code) {
    case KD_OPTIM_SGD:
      c.lr = s[0].v.d; c.mom = s[1].v.d; c.damp = s[2].v.d; c.nesterov = s[3].v.b; c.wd = s[4].v.d;
      c.maximize = s[5].v.b; c.first = s[6].v.b;
      if (c.nesterov && (c.mom <= 0 || c.damp != 0))
        return kd_error(KD_ERR_INVALID_ARGUMENT, "Nesterov momentum requires a momentum and zero dampening");
      required[2] = c.mom != 0;
      break;
    case KD_OPTIM_ADAM:
    case KD_OPTIM_ADAMW: {
      c.lr = s[0].v.d; c.a = s[1].v.d; c.b = s[2].v.d; c.eps = s[3].v.d; c.wd = s[4].v.d;
      double step = s[5].v.d;
      c.maximize = s[6].v.b; c.decoupled = code == KD_OPTIM_ADAMW;
      KD_TRY(kd_optim_check_step(step));
      const double bc1 = 1.0 - pow(c.a, step), bc2 = 1.0 - pow(c.b, step);
      c.step_size = c.lr / bc1;
      c.bc2_sqrt = sqrt(bc2);
      required[2] = required[3] = true;
      break;
    }
    case KD_OPTIM_RMSPROP:
      c.lr = s[0].v.d; c.a = s[1].v.d; c.eps = s[2].v.d; c.wd = s[3].v.d; c.mom = s[4].v.d; c.maximize = s[5].v.b;
      required[2] = true;
      required[4] = c.mom > 0;
      break;
    case KD_OPTIM_ADAGRAD: {
      c.lr = s[0].v.d; double lr_decay = s[1].v.d; c.wd = s[2].v.d; c.eps = s[3].v.d;
      double step = s[4].v.d;
      c.maximize = s[5].v.b;
      KD_TRY(kd_optim_check_step(step));
      c.step_size = c.lr / (1 + (step - 1) * lr_decay);
      required[2] = true;
      break;
    }
    case KD_OPTIM_ADADELTA:
      c.lr = s[0].v.d; c.a = s[1].v.d; c.eps = s[2].v.d; c.wd = s[3].v.d; c.maximize = s[4].v.b;
      required[2] = required[3] = true;
      break;
    case KD_OPTIM_RADAM: {
      c.lr = s[0].v.d; c.a = s[1].v.d; c.b = s[2].v.d; c.eps = s[3].v.d; c.wd = s[4].v.d;
      const double step = s[5].v.d;
      KD_TRY(kd_optim_check_step(step));
      /* PyTorch 1.13's radam.py: the length of the approximated SMA decides rectification */
      c.bc1 = 1.0 - pow(c.a, step);
      const double bc2 = 1.0 - pow(c.b, step);
      c.bc2_sqrt = sqrt(bc2);
      const double rho_inf = 2.0 / (1.0 - c.b) - 1.0;
      const double rho_t = rho_inf - 2.0 * step * pow(c.b, step) / bc2;
      c.rect = rho_t > 5.0 ? sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) : 0.0;
      required[2] = required[3] = true;
      break;
    }
    case KD_OPTIM_ADAMAX: {
      c.lr = s[0].v.d; c.a = s[1].v.d; c.b = s[2].v.d; c.eps = s[3].v.d; c.wd = s[4].v.d;
      const double step = s[5].v.d;
      c.maximize = s[6].v.b;
      KD_TRY(kd_optim_check_step(step));
      c.step_size = c.lr / (1.0 - pow(c.a, step));
      required[2] = required[3] = true;
      break;
    }
    case KD_OPTIM_NADAM: {
      c.lr = s[0].v.d; c.a = s[1].v.d; c.b = s[2].v.d; c.eps = s[3].v.d; c.wd = s[4].v.d;
      const double decay = s[5].v.d, step = s[6].v.d, mu_product = s[7].v.d;
      KD_TRY(kd_optim_check_step(step));
      /* PyTorch 1.13's nadam.py; mu_product lives in a float32 tensor there */
      const double mu = c.a * (1.0 - 0.5 * pow(0.96, step * decay));
      const double mu_next = c.a * (1.0 - 0.5 * pow(0.96, (step + 1) * decay));
      const float mu_product_next = (float)((float)mu_product * (float)mu) * (float)mu_next;
      c.damp = 1.0 - pow(c.b, step);
      c.step_size = -c.lr * (1.0 - mu) / (1.0 - (double)(float)mu_product);
      c.mom = -c.lr * mu_next / (1.0 - (double)mu_product_next);
      required[2] = required[3] = true;
      break;
    }
    case KD_OPTIM_ASGD: {
      const double lambd = s[0].v.d, eta = s[1].v.d;
      c.mom = s[2].v.d; c.wd = s[3].v.d; c.maximize = s[4].v.b;
      c.a = 1.0 - lambd * eta;
      c.lr = eta;
      required[2] = true;
      break;
    }
    case KD_OPTIM_RPROP:
      c.a = s[0].v.d; c.b = s[1].v.d; c.damp = s[2].v.d; c.mom = s[3].v.d; c.maximize = s[4].v.b;
      required[2] = required[3] = true;
      break;
    default: return kd_error(KD_ERR_INTERNAL, "kd_cpu_optim: unknown code %d", code);
  }

  /* check everything before writing anything */
  const int n = L[0].n;
  for (int k = 1; k < nlists; k++) {
    if (L[k].n == n) continue;
    if (L[k].n == 0 && !required[k]) continue;
    return kd_error(KD_ERR_INVALID_ARGUMENT, "optimizer step: expected %s to hold %d tensors, got %d",
                    kd_optim_list_name(code, k), n, L[k].n);
  }
  if (code == KD_OPTIM_SGD && L[2].n == 0 && c.mom != 0)
    return kd_error(KD_ERR_INVALID_ARGUMENT, "optimizer step: momentum needs momentumBuffers");
  for (int i = 0; i < n; i++) {
    const kd_tensor *p = L[0].t[i];
    if (!kd_dtype_is_float(p->dtype))
      return kd_error(KD_ERR_DTYPE, "optimizer step: params[%d] must be a floating-point tensor, got %s", i,
                      kd_cpu_torch_name(p->dtype));
    for (int k = 0; k < nlists; k++) {
      if (L[k].n == 0) continue;
      KD_TRY(kd_optim_check(p, L[k].t[i], kd_optim_list_name(code, k), i));
      if (k != 1) KD_TRY(kd_cpu_check_no_internal_overlap(L[k].t[i]));
    }
  }

  /* one iterator pass per parameter: outputs = param and its present state, input = grad */
  for (int i = 0; i < n; i++) {
    kd_tensor *p = L[0].t[i];
    kd_iter_operand ops[KD_OPTIM_MAX_LISTS];
    int nops = 0;
    ops[nops++] = kd_iter_operand_of(p);
    c.k_buf = c.k_gavg = c.k_max = -1;
    for (int k = 2; k < nlists; k++) {
      if (L[k].n == 0) continue;
      if (code != KD_OPTIM_SGD && code != KD_OPTIM_RMSPROP && k == 4) c.k_max = nops;
      if (code == KD_OPTIM_RMSPROP && k == 3) c.k_gavg = nops;
      if ((code == KD_OPTIM_RMSPROP && k == 4) || code == KD_OPTIM_SGD) c.k_buf = nops;
      ops[nops++] = kd_iter_operand_of(L[k].t[i]);
    }
    if (code == KD_OPTIM_RMSPROP && c.mom <= 0) {
      /* a buffer passed without momentum is left alone */
      if (c.k_buf >= 0) { nops--; c.k_buf = -1; }
    }
    ops[nops++] = kd_iter_operand_of(L[1].t[i]);
    c.nops = nops;
    kd_iter it;
    KD_TRY(kd_iter_build(&it, ops, nops, nops - 1, 0));
    if (kd_tensor_device(p).type != KD_DEVICE_CPU) KD_TRY(kd_optim_device(p, &it, ops, &c)); /* cuda/ops_optim.cu */
    else kd_iter_for_each(&it, kd_optim_loops[p->dtype][kd_optim_family(code)], &c);
    for (int k = 0; k < nlists; k++)
      if (k != 1 && L[k].n) kd_storage_bump_version(L[k].t[i]->storage);
  }
  if (op->nouts == -1) {
    outs[0].kind = KD_VALUE_TENSORLIST;
    outs[0].v.tlist.data = NULL;
    outs[0].v.tlist.n = 0;
  } else {
    kd_out_retain(outs, 0, L[0].t[0]);
  }
  return KD_OK;
}
