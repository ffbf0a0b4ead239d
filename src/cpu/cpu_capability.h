/* cpu_capability.h - which instruction-set level the hot CPU kernels run at, chosen once at load.
 *
 * Note [CPU capability dispatch]
 * The addon is compiled for plain x86-64, so one binary runs on any x86-64 CPU. The hot kernel
 * files (KD_CPU_DISPATCHED_SOURCES in tools/list-sources.js: pointwise, reductions, softmax,
 * layer norm, conversions, pooling, scans, the gather/scatter loops, the optimizers' updates,
 * the bfloat16 GEMM) are compiled once more per level, with that level's flags and a per-level
 * symbol suffix (cpu/cpu_level.h renames every symbol they define: kd_cpu_binary becomes
 * kd_cpu_binary_default, _avx2 or _avx512). cpu_dispatch.c keeps
 * the unsuffixed names as one-line forwarders through the table of the level in use, picked on
 * first use from cpuid and xgetbv (the OS must save the AVX / AVX-512 registers), as PyTorch's
 * DispatchStub picks ATEN_CPU_CAPABILITY:
 *   default  the baseline build (SSE2)
 *   avx2     AVX2 + FMA + F16C + BMI1/2 + LZCNT (Haswell, Zen 1 and later)
 *   avx512   avx2 + AVX-512 F/BW/VL/DQ (Skylake-SP, Zen 4 and later), tuned for Skylake-SP
 *            (binding.gyp says why); the bfloat16 GEMM also needs AVX512-BF16 and checks for it
 *            itself (kd_cpu_has_avx512_bf16), and runs on AMX tiles where the CPU has AMX-BF16
 *            and the OS grants the tile state (kd_cpu_has_amx_bf16; KINDLING_AMX=0 turns AMX
 *            off, leaving the AVX512-BF16 kernel)
 * KINDLING_CPU_CAPABILITY=default|avx2|avx512 forces a level. As PyTorch does with an invalid
 * ATEN_CPU_CAPABILITY, an unknown value is ignored with a warning; a level this CPU cannot run
 * (PyTorch would die of SIGILL) is also refused with a warning, and the best level it supports
 * is used (kd_cpu_capability_warning). Non-x86 builds have the default level only. */
#ifndef KD_CPU_CAPABILITY_H
#define KD_CPU_CAPABILITY_H

#include <stdbool.h>

typedef enum kd_cpu_level {
  KD_CPU_LEVEL_DEFAULT = 0,
  KD_CPU_LEVEL_AVX2 = 1,
  KD_CPU_LEVEL_AVX512 = 2,
  KD_CPU_LEVEL_COUNT
} kd_cpu_level;

/* The level in use (decided on the first call; thread-safe). */
kd_cpu_level kd_cpu_capability(void);
/* The best level this CPU and OS support. */
kd_cpu_level kd_cpu_capability_supported(void);
/* "default", "avx2", "avx512". */
const char *kd_cpu_capability_name(kd_cpu_level level);
/* Why KINDLING_CPU_CAPABILITY was not followed, or NULL (a message for a JS warning). */
const char *kd_cpu_capability_warning(void);
/* Whether the CPU runs AVX512-VNNI (VPDPBUSD, the int8 GEMM of qlinear.c), the avx512 level is in
 * use and KINDLING_VNNI is not 0 (which leaves the AVX512BW kernel). */
bool kd_cpu_has_avx512_vnni(void);
/* Whether the CPU runs AVX512-BF16 (VDPBF16PS) with the OS saving AVX-512 state. */
bool kd_cpu_has_avx512_bf16(void);
/* Whether the bfloat16 GEMM may use AMX tiles: AVX512-BF16 as above, AMX-TILE and AMX-BF16, the
 * OS saves the tile state and granted it to this process (asked on the first call), and
 * KINDLING_AMX is not 0 (Note [bfloat16 GEMM on AMX tiles]). */
bool kd_cpu_has_amx_bf16(void);

#endif
