/* gemm_bf16_amx.c - bfloat16 matrix products on AMX tiles (Sapphire Rapids and later), for
 * gemm_bf16.c: the same product as its VDPBF16PS kernel (Note [bfloat16 dot-product GEMM]) on
 * the tile matrix unit, several times faster.
 *
 * Note [bfloat16 GEMM on AMX tiles]
 * TDPBF16PS multiplies a tile of 16 rows x 32 bfloat16 of A by a tile of 16 k-pairs x 16
 * columns of B (each 32-bit element a (b[2p][j], b[2p+1][j]) pair, the layout the VDPBF16PS
 * kernel packs B in) and adds the products to a 16 x 16 float32 tile of C, 1024 bytes each. The
 * eight tile registers hold a 32 x 32 block of C (tiles 0-3), two A tiles (4, 5) and two B tiles
 * (6, 7): per 32 values of k, four loads and four products. Both operands are packed once per
 * product (gemm_bf16_pack.h) with k padded to a multiple of 32 and rows and columns to
 * multiples of 32, all with zeros, so every tile is whole and each is 1024 contiguous bytes:
 * A as 16 x 16-word tiles, row tile by row tile; B as 16-column panels of k-pairs. Work is cut
 * into units of one 32-column panel of C by up to KD_AMX_GROUP row blocks, run in parallel on
 * kindling's pool; a unit walks k in chunks of KD_AMX_KSTEPS x 32, so the chunk of its B panel
 * stays in L1 while its row blocks sweep it, and keeps its blocks' float32 sums in a local
 * buffer between chunks; C is rounded to bfloat16 once, at the end. Units run row-group-major,
 * so the A rows of a group stay in L2 while the B panels stream by.
 * Each kd_parallel_for chunk configures the tiles on its thread (_tile_loadconfig, palette 1,
 * every tile 16 rows x 64 bytes) and releases them when done (_tile_release), so a thread holds
 * tile state only while it runs this kernel. Like VDPBF16PS and oneDNN's AMX kernels,
 * TDPBF16PS treats bfloat16 subnormal inputs as zero and flushes subnormal sums to zero, and
 * rounds to nearest even whatever MXCSR says. AMX instructions are compiled for this file only
 * (the target pragma below; the compiler never emits them by itself) and run only where
 * kd_cpu_has_amx_bf16(): the CPU has AMX-TILE and AMX-BF16, the OS saves the tile state (XCR0)
 * and has granted it to the process (Linux: arch_prctl(ARCH_REQ_XCOMP_PERM)), and
 * KINDLING_AMX=0 is not set (Note [CPU capability dispatch]). */
#include <stdint.h>
#include <string.h>

#include "core/alloc_host.h"
#include "core/dtype.h"
#include "core/parallel.h"
#include "core/status.h"

#include "cpu/gemm_bf16_amx.h"
#include "cpu/gemm_bf16_pack.h"

#if defined(__AVX512F__) && defined(__x86_64__) && defined(__GNUC__)
#pragma GCC target("amx-tile,amx-bf16") /* run only when kd_cpu_has_amx_bf16() */
#include <immintrin.h>

#define KD_AMX_TILE 16   /* rows of a tile; a row is 64 bytes: 16 float32, or 16 words of two bfloat16 */
#define KD_AMX_BLOCK 32  /* C is computed in 32 x 32 blocks (2 x 2 tiles) */
#define KD_AMX_GROUP 4   /* row blocks of one unit, sharing each chunk of the unit's B panel */
#define KD_AMX_KSTEPS 8  /* k steps (32 values of k) per chunk: a 16 KiB chunk of the B panel */

/* The LDTILECFG operand (palette 1). */
typedef struct kd_amx_config {
  uint8_t palette_id, start_row;
  uint8_t reserved[14];
  uint16_t colsb[16]; /* bytes per row of each tile */
  uint8_t rows[16];
} __attribute__((aligned(64))) kd_amx_config;

typedef struct kd_amx_job {
  const uint32_t *ap;   /* packed A: mblocks * 2 row tiles, each ksteps tiles of 16 x 16 words */
  const uint32_t *bp;   /* packed B: nblocks * 2 panels of 16 columns, each ksteps * 16 pairs */
  uint16_t *c;          /* bfloat16 C of this batch, m x n contiguous */
  int64_t m, n, ksteps, mblocks, nblocks, groups;
} kd_amx_job;

/* The whole struct is the asm's operand, so the compiler keeps every store to it. */
static inline void kd_amx_load_config(const kd_amx_config *cfg) {
  __asm__ volatile("ldtilecfg %0" ::"m"(*cfg));
}

/* Steps [s0, s1) of the 32 x 32 block whose float32 sums are `acc` (row stride 32), starting
 * from zero when `fresh`. a0/a1: the block's two row tiles; b0/b1: its two column panels. */
static void kd_amx_block(const uint32_t *a0, const uint32_t *a1, const uint32_t *b0, const uint32_t *b1,
                         int64_t s0, int64_t s1, float *acc, bool fresh) {
  const long cs = KD_AMX_BLOCK * sizeof(float), ts = 64; /* strides in bytes: acc rows, packed tile rows */
  if (fresh) {
    _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
  } else {
    _tile_loadd(0, acc, cs);
    _tile_loadd(1, acc + KD_AMX_TILE, cs);
    _tile_loadd(2, acc + KD_AMX_TILE * KD_AMX_BLOCK, cs);
    _tile_loadd(3, acc + KD_AMX_TILE * KD_AMX_BLOCK + KD_AMX_TILE, cs);
  }
  for (int64_t s = s0; s < s1; s++) {
    const int64_t at = s * KD_AMX_TILE * KD_AMX_TILE; /* words to step s's tile */
    _tile_loadd(4, a0 + at, ts);
    _tile_loadd(5, a1 + at, ts);
    _tile_loadd(6, b0 + at, ts);
    _tile_loadd(7, b1 + at, ts);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  _tile_stored(0, acc, cs);
  _tile_stored(1, acc + KD_AMX_TILE, cs);
  _tile_stored(2, acc + KD_AMX_TILE * KD_AMX_BLOCK, cs);
  _tile_stored(3, acc + KD_AMX_TILE * KD_AMX_BLOCK + KD_AMX_TILE, cs);
}

/* Units [u0, u1): u = row group * nblocks + column block. */
static void kd_amx_units(void *ctx, int64_t u0, int64_t u1) {
  const kd_amx_job *j = (const kd_amx_job *)ctx;
  kd_amx_config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.palette_id = 1;
  for (int t = 0; t < 8; t++) {
    cfg.rows[t] = KD_AMX_TILE;
    cfg.colsb[t] = 64;
  }
  kd_amx_load_config(&cfg);
  float acc[KD_AMX_GROUP][KD_AMX_BLOCK * KD_AMX_BLOCK] __attribute__((aligned(64)));
  const int64_t tile_words = j->ksteps * KD_AMX_TILE * KD_AMX_TILE; /* one row tile of A or one B panel */
  for (int64_t u = u0; u < u1; u++) {
    const int64_t g = u / j->nblocks, bn = u % j->nblocks;
    const int64_t bm0 = g * KD_AMX_GROUP;
    const int64_t nb = j->mblocks - bm0 < KD_AMX_GROUP ? j->mblocks - bm0 : KD_AMX_GROUP;
    const uint32_t *b0 = j->bp + 2 * bn * tile_words, *b1 = b0 + tile_words;
    for (int64_t s0 = 0; s0 < j->ksteps; s0 += KD_AMX_KSTEPS) {
      const int64_t s1 = s0 + KD_AMX_KSTEPS < j->ksteps ? s0 + KD_AMX_KSTEPS : j->ksteps;
      for (int64_t i = 0; i < nb; i++) {
        const uint32_t *a0 = j->ap + 2 * (bm0 + i) * tile_words;
        kd_amx_block(a0, a0 + tile_words, b0, b1, s0, s1, acc[i], s0 == 0);
      }
    }
    const int64_t c0 = bn * KD_AMX_BLOCK, cols = j->n - c0 < KD_AMX_BLOCK ? j->n - c0 : KD_AMX_BLOCK;
    for (int64_t i = 0; i < nb; i++) {
      const int64_t r0 = (bm0 + i) * KD_AMX_BLOCK, rows = j->m - r0 < KD_AMX_BLOCK ? j->m - r0 : KD_AMX_BLOCK;
      for (int64_t r = 0; r < rows; r++) {
        uint16_t *crow = j->c + (r0 + r) * j->n + c0;
        const float *v = acc[i] + r * KD_AMX_BLOCK;
        for (int64_t q = 0; q < cols; q++) crow[q] = kd_f32_to_bf16(v[q]);
      }
    }
  }
  _tile_release();
}

kd_status kd_gemm_bf16_amx(int64_t batch, int64_t m, int64_t n, int64_t k, const char *a, int64_t a_bs, int64_t a_rs,
                           int64_t a_cs, const char *b, int64_t b_bs, int64_t b_rs, int64_t b_cs, char *c, bool *done) {
  *done = false;
  const int64_t ksteps = (k + 2 * KD_AMX_TILE - 1) / (2 * KD_AMX_TILE), kpp = ksteps * KD_AMX_TILE;
  const int64_t mblocks = (m + KD_AMX_BLOCK - 1) / KD_AMX_BLOCK, nblocks = (n + KD_AMX_BLOCK - 1) / KD_AMX_BLOCK;
  const int64_t groups = (mblocks + KD_AMX_GROUP - 1) / KD_AMX_GROUP;
  const size_t a_words = (size_t)(mblocks * KD_AMX_BLOCK) * (size_t)kpp;
  const size_t b_words = (size_t)(nblocks * KD_AMX_BLOCK) * (size_t)kpp;
  uint32_t *buf = NULL;
  if (kd_host_alloc((a_words + b_words) * 4, (void **)&buf) != KD_OK) return KD_OK; /* matmul.c has other routes */
  uint32_t *ap = buf, *bp = buf + a_words;
  const int64_t per_unit = KD_AMX_GROUP * KD_AMX_BLOCK * KD_AMX_BLOCK * 2 * kpp; /* multiply-adds */
  for (int64_t bi = 0; bi < batch; bi++) {
    kd_bf_pack pa = {(const uint16_t *)a + bi * a_bs, a_rs, a_cs, m, k, kpp, KD_AMX_TILE, KD_AMX_TILE, ap};
    kd_bf_pack_run(&pa, mblocks * KD_AMX_BLOCK / KD_AMX_TILE);
    /* B's columns as rows */
    kd_bf_pack pb = {(const uint16_t *)b + bi * b_bs, b_cs, b_rs, n, k, kpp, KD_AMX_TILE, 1, bp};
    kd_bf_pack_run(&pb, nblocks * KD_AMX_BLOCK / KD_AMX_TILE);
    kd_amx_job j = {ap, bp, (uint16_t *)c + bi * m * n, m, n, ksteps, mblocks, nblocks, groups};
    kd_parallel_for(0, groups * nblocks, 1 + KD_PARALLEL_GRAIN / per_unit, kd_amx_units, &j);
  }
  kd_host_free(buf, (a_words + b_words) * 4);
  *done = true;
  return KD_OK;
}

#else /* not the avx512 copy: gemm_bf16.c calls the kernel from that copy only */
typedef int kd_gemm_bf16_amx_unused; /* ISO C wants a declaration in every file */
#endif
