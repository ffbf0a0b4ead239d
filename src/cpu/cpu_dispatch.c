/* cpu_dispatch.c - the unsuffixed entry points of the kernel files compiled once per CPU level:
 * each forwards to its copy for the level in use (Note [CPU capability dispatch]). The rest of
 * the addon (the op table, matmul.c, every kernel that converts an operand) calls these. */
#include "cpu/attention.h"
#include "cpu/cpu_capability.h"
#include "cpu/cpu_loops.h"
#include "cpu/gemm_bf16.h"
#include "cpu/index_common.h"

/* The dispatched kernels with the kernel signature (ops/kernel.h); cpu/cpu_level.h renames them. */
#define KD_CPU_DISPATCHED_KERNELS(X)                                                          \
  X(kd_cpu_binary) X(kd_cpu_binary_not) X(kd_cpu_masked_fill) X(kd_cpu_where)                 \
  X(kd_cpu_unary) X(kd_cpu_ternary)                                                           \
  X(kd_cpu_reduce) X(kd_cpu_arg_reduce) X(kd_cpu_reduce_backward)                             \
  X(kd_cpu_softmax) X(kd_cpu_layer_norm) X(kd_cpu_layer_norm_backward)                        \
  X(kd_cpu_copy) X(kd_cpu_fill) X(kd_cpu_pool) X(kd_cpu_scan) X(kd_cpu_optim) X(kd_cpu_rnn_cell)    \
  X(kd_cpu_qlinear_pack) X(kd_cpu_qlinear_dynamic)

typedef kd_status (*kd_cpu_kernel_fn)(const kd_op_info *op, kd_keyset ks, kd_value *args, kd_value *outs);

/* One level's copies. */
typedef struct kd_cpu_level_table {
#define KD_SLOT(name) kd_cpu_kernel_fn name;
  KD_CPU_DISPATCHED_KERNELS(KD_SLOT)
#undef KD_SLOT
  kd_status (*kd_cpu_copy_into)(kd_tensor *dst, const kd_tensor *src);
  bool (*kd_ix_all_in_range)(const int64_t *q, int64_t n, int64_t size);
  kd_status (*kd_ix_run_gather)(kd_iter_operand *ops, int nops, const kd_ix_ctx *ctx);
  kd_status (*kd_ix_run_scatter)(kd_iter_operand *ops, int nops, const kd_ix_ctx *ctx);
  bool (*kd_gemm_bf16_available)(void);
  kd_status (*kd_gemm_bf16)(int64_t batch, int64_t m, int64_t n, int64_t k, const char *a, int64_t a_bs,
                            int64_t a_rs, int64_t a_cs, const char *b, int64_t b_bs, int64_t b_rs, int64_t b_cs,
                            char *c, bool *done);
  kd_status (*kd_attn_run_cpu)(kd_attn_plan *p, bool backward);
} kd_cpu_level_table;

/* Declarations of one level's copies, and its table. */
#define KD_CPU_LEVEL_DECLS(LEVEL)                                                             \
  KD_CPU_DISPATCHED_KERNELS(KD_DECL_##LEVEL)                                                  \
  kd_status kd_cpu_copy_into_##LEVEL(kd_tensor *dst, const kd_tensor *src);                   \
  bool kd_ix_all_in_range_##LEVEL(const int64_t *q, int64_t n, int64_t size);                \
  kd_status kd_ix_run_gather_##LEVEL(kd_iter_operand *ops, int nops, const kd_ix_ctx *ctx);   \
  kd_status kd_ix_run_scatter_##LEVEL(kd_iter_operand *ops, int nops, const kd_ix_ctx *ctx);  \
  bool kd_gemm_bf16_available_##LEVEL(void);                                                  \
  kd_status kd_gemm_bf16_##LEVEL(int64_t batch, int64_t m, int64_t n, int64_t k, const char *a, int64_t a_bs, \
                                 int64_t a_rs, int64_t a_cs, const char *b, int64_t b_bs, int64_t b_rs,       \
                                 int64_t b_cs, char *c, bool *done);                          \
  kd_status kd_attn_run_cpu_##LEVEL(kd_attn_plan *p, bool backward);
#define KD_CPU_LEVEL_TABLE(LEVEL)                                                             \
  {KD_CPU_DISPATCHED_KERNELS(KD_ENTRY_##LEVEL).kd_cpu_copy_into = kd_cpu_copy_into_##LEVEL,   \
   .kd_ix_all_in_range = kd_ix_all_in_range_##LEVEL, .kd_ix_run_gather = kd_ix_run_gather_##LEVEL,        \
   .kd_ix_run_scatter = kd_ix_run_scatter_##LEVEL,                                           \
   .kd_gemm_bf16_available = kd_gemm_bf16_available_##LEVEL, .kd_gemm_bf16 = kd_gemm_bf16_##LEVEL,     \
   .kd_attn_run_cpu = kd_attn_run_cpu_##LEVEL}

#define KD_DECL_default(name) KD_KERNEL(name##_default);
#define KD_ENTRY_default(name) .name = name##_default,
KD_CPU_LEVEL_DECLS(default)
#if defined(__x86_64__)
#define KD_DECL_avx2(name) KD_KERNEL(name##_avx2);
#define KD_ENTRY_avx2(name) .name = name##_avx2,
#define KD_DECL_avx512(name) KD_KERNEL(name##_avx512);
#define KD_ENTRY_avx512(name) .name = name##_avx512,
KD_CPU_LEVEL_DECLS(avx2)
KD_CPU_LEVEL_DECLS(avx512)
#endif

static const kd_cpu_level_table kd_cpu_level_tables[KD_CPU_LEVEL_COUNT] = {
    [KD_CPU_LEVEL_DEFAULT] = KD_CPU_LEVEL_TABLE(default),
#if defined(__x86_64__)
    [KD_CPU_LEVEL_AVX2] = KD_CPU_LEVEL_TABLE(avx2),
    [KD_CPU_LEVEL_AVX512] = KD_CPU_LEVEL_TABLE(avx512),
#endif
};

/* The table of the level in use (kd_cpu_capability never picks a level this build lacks:
 * non-x86 CPUs report the default level). */
static inline const kd_cpu_level_table *kd_cpu_table(void) { return &kd_cpu_level_tables[kd_cpu_capability()]; }

#define KD_FORWARD(name) \
  KD_KERNEL(name) { return kd_cpu_table()->name(op, ks, args, outs); }
KD_CPU_DISPATCHED_KERNELS(KD_FORWARD)

kd_status kd_cpu_copy_into(kd_tensor *dst, const kd_tensor *src) { return kd_cpu_table()->kd_cpu_copy_into(dst, src); }

bool kd_ix_all_in_range(const int64_t *q, int64_t n, int64_t size) { return kd_cpu_table()->kd_ix_all_in_range(q, n, size); }

kd_status kd_ix_run_gather(kd_iter_operand *ops, int nops, const kd_ix_ctx *ctx) {
  return kd_cpu_table()->kd_ix_run_gather(ops, nops, ctx);
}

kd_status kd_ix_run_scatter(kd_iter_operand *ops, int nops, const kd_ix_ctx *ctx) {
  return kd_cpu_table()->kd_ix_run_scatter(ops, nops, ctx);
}

bool kd_gemm_bf16_available(void) { return kd_cpu_table()->kd_gemm_bf16_available(); }

kd_status kd_attn_run_cpu(kd_attn_plan *p, bool backward) { return kd_cpu_table()->kd_attn_run_cpu(p, backward); }

const char *kd_gemm_bf16_kernel(void) {
  if (!kd_gemm_bf16_available()) return "none";
  return kd_cpu_has_amx_bf16() ? "amx" : "avx512bf16";
}

const char *kd_qlinear_kernel(void) {
  switch (kd_cpu_capability()) {
    case KD_CPU_LEVEL_AVX512: return kd_cpu_has_avx512_vnni() ? "avx512vnni" : "avx512bw";
    case KD_CPU_LEVEL_AVX2: return "avx2";
    default: return "scalar";
  }
}

kd_status kd_gemm_bf16(int64_t batch, int64_t m, int64_t n, int64_t k, const char *a, int64_t a_bs, int64_t a_rs,
                       int64_t a_cs, const char *b, int64_t b_bs, int64_t b_rs, int64_t b_cs, char *c, bool *done) {
  return kd_cpu_table()->kd_gemm_bf16(batch, m, n, k, a, a_bs, a_rs, a_cs, b, b_bs, b_rs, b_cs, c, done);
}
