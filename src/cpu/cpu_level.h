/* cpu_level.h - forced first into every per-level compilation of the dispatched kernel files
 * (binding.gyp: -include cpu/cpu_level.h -DKD_CPU_LEVEL=<level>): renames every symbol those
 * files define to <name>_<level>, so the default, avx2 and avx512 copies of one file link into
 * one addon side by side. cpu_dispatch.c defines the unsuffixed names as forwarders to the level
 * in use (Note [CPU capability dispatch]). A file added to the dispatched list adds its
 * symbols here and, for those called from outside the list, a forwarder in cpu_dispatch.c; a
 * symbol left out is defined once per level and the link fails on the duplicate. */
#ifndef KD_CPU_LEVEL_H
#define KD_CPU_LEVEL_H

#ifndef KD_CPU_LEVEL
#error "cpu/cpu_level.h is for the per-level builds of the dispatched kernel files (KD_CPU_LEVEL=default|avx2|avx512)"
#endif

#define KD_CPU_LEVEL_SYM(name) KD_CPU_LEVEL_SYM_(name, KD_CPU_LEVEL)
#define KD_CPU_LEVEL_SYM_(name, level) KD_CPU_LEVEL_SYM__(name, level)
#define KD_CPU_LEVEL_SYM__(name, level) name##_##level

/* binary.c */
#define kd_cpu_binary KD_CPU_LEVEL_SYM(kd_cpu_binary)
#define kd_cpu_binary_not KD_CPU_LEVEL_SYM(kd_cpu_binary_not)
#define kd_cpu_masked_fill KD_CPU_LEVEL_SYM(kd_cpu_masked_fill)
#define kd_cpu_where KD_CPU_LEVEL_SYM(kd_cpu_where)
/* unary.c, ternary.c */
#define kd_cpu_unary KD_CPU_LEVEL_SYM(kd_cpu_unary)
#define kd_cpu_ternary KD_CPU_LEVEL_SYM(kd_cpu_ternary)
/* reduce.c */
#define kd_cpu_reduce KD_CPU_LEVEL_SYM(kd_cpu_reduce)
#define kd_cpu_arg_reduce KD_CPU_LEVEL_SYM(kd_cpu_arg_reduce)
#define kd_cpu_reduce_backward KD_CPU_LEVEL_SYM(kd_cpu_reduce_backward)
/* softmax.c, norm.c */
#define kd_cpu_softmax KD_CPU_LEVEL_SYM(kd_cpu_softmax)
#define kd_cpu_layer_norm KD_CPU_LEVEL_SYM(kd_cpu_layer_norm)
#define kd_cpu_layer_norm_backward KD_CPU_LEVEL_SYM(kd_cpu_layer_norm_backward)
/* copy.c */
#define kd_cpu_copy KD_CPU_LEVEL_SYM(kd_cpu_copy)
#define kd_cpu_fill KD_CPU_LEVEL_SYM(kd_cpu_fill)
#define kd_cpu_copy_into KD_CPU_LEVEL_SYM(kd_cpu_copy_into)
/* pool.c */
#define kd_cpu_pool KD_CPU_LEVEL_SYM(kd_cpu_pool)
/* scan.c */
#define kd_cpu_scan KD_CPU_LEVEL_SYM(kd_cpu_scan)
/* optim.c */
#define kd_cpu_optim KD_CPU_LEVEL_SYM(kd_cpu_optim)
/* rnn_cell.c */
#define kd_cpu_rnn_cell KD_CPU_LEVEL_SYM(kd_cpu_rnn_cell)
/* index_loops.c */
#define kd_ix_all_in_range KD_CPU_LEVEL_SYM(kd_ix_all_in_range)
#define kd_ix_run_gather KD_CPU_LEVEL_SYM(kd_ix_run_gather)
#define kd_ix_run_scatter KD_CPU_LEVEL_SYM(kd_ix_run_scatter)
/* gemm_bf16.c */
#define kd_gemm_bf16 KD_CPU_LEVEL_SYM(kd_gemm_bf16)
#define kd_gemm_bf16_available KD_CPU_LEVEL_SYM(kd_gemm_bf16_available)
#define kd_bf_pack_units KD_CPU_LEVEL_SYM(kd_bf_pack_units)
#define kd_bf_pack_run KD_CPU_LEVEL_SYM(kd_bf_pack_run)
/* qlinear.c */
#define kd_cpu_qlinear_pack KD_CPU_LEVEL_SYM(kd_cpu_qlinear_pack)
#define kd_cpu_qlinear_dynamic KD_CPU_LEVEL_SYM(kd_cpu_qlinear_dynamic)
/* attention_loops.c */
#define kd_attn_run_cpu KD_CPU_LEVEL_SYM(kd_attn_run_cpu)
/* gemm_bf16_amx.c */
#define kd_gemm_bf16_amx KD_CPU_LEVEL_SYM(kd_gemm_bf16_amx)

#endif
