/* cpu_capability.c - detects the CPU's instruction-set level (cpuid, xgetbv) and applies the
 * KINDLING_CPU_CAPABILITY override, once. See Note [CPU capability dispatch]. */
#include "cpu/cpu_capability.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#if defined(__x86_64__)
#include <cpuid.h>
#define KD_CPU_X86 1
#else
#define KD_CPU_X86 0
#endif

static const char *const kd_cpu_level_names[KD_CPU_LEVEL_COUNT] = {
    [KD_CPU_LEVEL_DEFAULT] = "default",
    [KD_CPU_LEVEL_AVX2] = "avx2",
    [KD_CPU_LEVEL_AVX512] = "avx512",
};

static pthread_once_t kd_cpu_once = PTHREAD_ONCE_INIT;
static kd_cpu_level kd_cpu_supported = KD_CPU_LEVEL_DEFAULT, kd_cpu_chosen = KD_CPU_LEVEL_DEFAULT;
static bool kd_cpu_bf16 = false;
static bool kd_cpu_vnni = false;   /* AVX512-VNNI (the int8 GEMM of qlinear.c) */
static bool kd_cpu_amx_hw = false;  /* AMX-TILE + AMX-BF16, tile state enabled in XCR0 */
static pthread_once_t kd_cpu_amx_once = PTHREAD_ONCE_INIT;
static bool kd_cpu_amx = false;     /* ... and granted to this process, and not turned off */
static char kd_cpu_warning[256];

#if KD_CPU_X86
/* XCR0 (which register states the OS saves); only valid when CPUID.1:ECX.OSXSAVE is set. */
static uint64_t kd_cpu_xcr0(void) {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((uint64_t)hi << 32) | lo;
}

static void kd_cpu_detect(void) {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return;
  const bool fma = c & bit_FMA, f16c = c & bit_F16C, osxsave = c & bit_OSXSAVE, avx = c & bit_AVX;
  if (!osxsave || !avx) return;
  const uint64_t xcr0 = kd_cpu_xcr0();
  const bool os_ymm = (xcr0 & 0x6) == 0x6;     /* SSE and AVX state */
  const bool os_zmm = (xcr0 & 0xe6) == 0xe6;   /* + opmask, ZMM0-15 upper halves, ZMM16-31 */
  if (__get_cpuid_max(0, NULL) < 7) return;
  __cpuid_count(7, 0, a, b, c, d);
  const bool avx2 = b & bit_AVX2, bmi1 = b & bit_BMI, bmi2 = b & bit_BMI2;
  const bool avx512 = (b & bit_AVX512F) && (b & bit_AVX512BW) && (b & bit_AVX512VL) && (b & bit_AVX512DQ);
  unsigned a1 = 0, b1 = 0, c1 = 0, d1 = 0;
  __cpuid_count(7, 1, a1, b1, c1, d1);
  unsigned ea = 0, eb = 0, ec = 0, ed = 0;
  const bool lzcnt = __get_cpuid(0x80000001, &ea, &eb, &ec, &ed) && (ec & bit_LZCNT);
  if (os_ymm && avx2 && fma && f16c && bmi1 && bmi2 && lzcnt) {
    kd_cpu_supported = KD_CPU_LEVEL_AVX2;
    if (os_zmm && avx512) {
      kd_cpu_supported = KD_CPU_LEVEL_AVX512;
      kd_cpu_bf16 = (a1 & bit_AVX512BF16) != 0;
      kd_cpu_vnni = (c & bit_AVX512VNNI) != 0;
      const bool amx = (d & (1u << 24)) && (d & (1u << 22)); /* CPUID.(7,0):EDX AMX-TILE, AMX-BF16 */
      const bool os_tiles = (xcr0 & 0x60000) == 0x60000;   /* XTILECFG and XTILEDATA */
      kd_cpu_amx_hw = kd_cpu_bf16 && amx && os_tiles;
    }
  }
}
#else
static void kd_cpu_detect(void) {}
#endif

static void kd_cpu_vnni_env(void);

static void kd_cpu_choose(void) {
  kd_cpu_detect();
  kd_cpu_vnni_env();
  kd_cpu_chosen = kd_cpu_supported;
  const char *env = getenv("KINDLING_CPU_CAPABILITY");
  if (!env || !*env) return;
  int wanted = -1;
  for (int l = 0; l < KD_CPU_LEVEL_COUNT; l++)
    if (strcmp(env, kd_cpu_level_names[l]) == 0) wanted = l;
  if (wanted < 0)
    snprintf(kd_cpu_warning, sizeof kd_cpu_warning,
             "ignoring invalid value for KINDLING_CPU_CAPABILITY: '%.40s' (expected default, avx2 or avx512); using %s",
             env, kd_cpu_level_names[kd_cpu_supported]);
  else if (wanted > (int)kd_cpu_supported)
    snprintf(kd_cpu_warning, sizeof kd_cpu_warning,
             "KINDLING_CPU_CAPABILITY=%s is not supported by this CPU; using %s", env,
             kd_cpu_level_names[kd_cpu_supported]);
  else
    kd_cpu_chosen = (kd_cpu_level)wanted;
}

kd_cpu_level kd_cpu_capability(void) {
  pthread_once(&kd_cpu_once, kd_cpu_choose);
  return kd_cpu_chosen;
}

kd_cpu_level kd_cpu_capability_supported(void) {
  pthread_once(&kd_cpu_once, kd_cpu_choose);
  return kd_cpu_supported;
}

const char *kd_cpu_capability_name(kd_cpu_level level) {
  return (unsigned)level < KD_CPU_LEVEL_COUNT ? kd_cpu_level_names[level] : "invalid";
}

const char *kd_cpu_capability_warning(void) {
  pthread_once(&kd_cpu_once, kd_cpu_choose);
  return kd_cpu_warning[0] ? kd_cpu_warning : NULL;
}

/* Asks the OS for the tile state once (Linux: arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA),
 * which enlarges the signal frames of the process's threads; it fails where a thread's
 * alternate signal stack is too small for them, and the VDPBF16PS kernel is used). */
static void kd_cpu_amx_request(void) {
  pthread_once(&kd_cpu_once, kd_cpu_choose);
  const char *env = getenv("KINDLING_AMX");
  if (!kd_cpu_amx_hw || (env && strcmp(env, "0") == 0)) return;
#if defined(__linux__) && KD_CPU_X86
  kd_cpu_amx = syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XFEATURE_XTILEDATA */) == 0;
#endif
}

bool kd_cpu_has_amx_bf16(void) {
  pthread_once(&kd_cpu_amx_once, kd_cpu_amx_request);
  return kd_cpu_amx;
}

bool kd_cpu_has_avx512_vnni(void) {
  pthread_once(&kd_cpu_once, kd_cpu_choose);
  return kd_cpu_vnni && kd_cpu_chosen == KD_CPU_LEVEL_AVX512;
}

static void kd_cpu_vnni_env(void) {
  const char *env = getenv("KINDLING_VNNI");
  if (env && strcmp(env, "0") == 0) kd_cpu_vnni = false;
}

bool kd_cpu_has_avx512_bf16(void) {
  pthread_once(&kd_cpu_once, kd_cpu_choose);
  return kd_cpu_bf16;
}
