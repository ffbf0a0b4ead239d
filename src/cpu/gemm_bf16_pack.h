/* gemm_bf16_pack.h - packs a bfloat16 GEMM operand into 32-bit words of k pairs, the layout both
 * bfloat16 kernels read (gemm_bf16.c, gemm_bf16_amx.c; Note [bfloat16 dot-product GEMM]).
 *
 * The operand is seen as `rows` rows of k values: A's rows, or B's columns. Word (r, p) holds
 * (x[r][2p], x[r][2p+1]) in its low and high halves; pairs past k, the odd tail and rows past
 * `rows` are 0. Rows are grouped in blocks of `block_rows`, pairs in groups of `group`, and word
 * (r, p) is stored at
 *   ((r / block_rows) * (kpp / group) + p / group) * block_rows * group + (r % block_rows) * group + p % group
 * so block_rows = 1, group = 1 is row-major (kpp words a row), group = 1 gives panels of
 * block_rows interleaved rows (VDPBF16PS's B, AMX's B tiles), and block_rows = group = 16 gives
 * AMX A tiles of 16 rows x 16 words one after the other. Only the avx512 copies use it. */
#ifndef KD_CPU_GEMM_BF16_PACK_H
#define KD_CPU_GEMM_BF16_PACK_H

#include <stdint.h>

typedef struct kd_bf_pack {
  const uint16_t *src;   /* x[r][q] = src[r * rs + q * cs] */
  int64_t rs, cs;        /* strides in elements: from row to row, along k */
  int64_t rows, k;       /* rows that exist, and k */
  int64_t kpp;           /* pairs stored per row: >= (k + 1) / 2, a multiple of group */
  int64_t block_rows, group;
  uint32_t *dst;
  int64_t row_blocks;    /* set by kd_bf_pack_run */
} kd_bf_pack;

/* Packs units [u0, u1) of one row block and one pair each (see kd_bf_pack_units); a kd_parallel_fn. */
void kd_bf_pack_units(void *ctx, int64_t u0, int64_t u1);

/* Packs `row_blocks` blocks (rows past q->rows are zero) on kindling's pool. */
void kd_bf_pack_run(kd_bf_pack *q, int64_t row_blocks);

#endif
