/* gemm_bf16_amx.h - the bfloat16 GEMM on AMX tiles (gemm_bf16_amx.c, Note [bfloat16 GEMM on AMX
 * tiles]), called by gemm_bf16.c's avx512 copy when kd_cpu_has_amx_bf16(). */
#ifndef KD_CPU_GEMM_BF16_AMX_H
#define KD_CPU_GEMM_BF16_AMX_H

#include <stdbool.h>
#include <stdint.h>

#include "core/status.h"

/* As kd_gemm_bf16 (gemm_bf16.h); run only where kd_cpu_has_amx_bf16(). */
kd_status kd_gemm_bf16_amx(int64_t batch, int64_t m, int64_t n, int64_t k, const char *a, int64_t a_bs, int64_t a_rs,
                           int64_t a_cs, const char *b, int64_t b_bs, int64_t b_rs, int64_t b_cs, char *c, bool *done);

#endif
