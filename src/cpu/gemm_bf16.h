/* gemm_bf16.h - bfloat16 matrix products on AVX512-BF16 (gemm_bf16.c, Note [bfloat16
 * dot-product GEMM]), used by matmul.c. */
#ifndef KD_CPU_GEMM_BF16_H
#define KD_CPU_GEMM_BF16_H

#include <stdbool.h>
#include <stdint.h>

#include "core/status.h"

/* Whether the kernel runs here (the avx512 level is in use and the CPU has AVX512-BF16). */
bool kd_gemm_bf16_available(void);

/* The kernel bfloat16 products run on: "amx" (gemm_bf16_amx.c), "avx512bf16" (gemm_bf16.c) or
 * "none" (matmul.c widens to float32); kd.build.bf16Gemm. Defined in cpu_dispatch.c. */
const char *kd_gemm_bf16_kernel(void);
/* The kernel of the int8 dynamic linear layer (qlinear.c, Note [Packed int8 weights]): "avx512vnni",
 * "avx512bw", "avx2" or "scalar" (cpu_dispatch.c). */
const char *kd_qlinear_kernel(void);

/* C[b] (contiguous batch x m x n bfloat16) = A[b] @ B[b], bfloat16 operands given by data and
 * strides in elements, float32 accumulation; m, n, k > 0. *done = false when it declined (no
 * kernel in this build, or no memory for the packed operands): the caller takes another route. */
kd_status kd_gemm_bf16(int64_t batch, int64_t m, int64_t n, int64_t k, const char *a, int64_t a_bs, int64_t a_rs,
                       int64_t a_cs, const char *b, int64_t b_bs, int64_t b_rs, int64_t b_cs, char *c, bool *done);

#endif
