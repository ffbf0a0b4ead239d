# node-gyp build of the CPU addon kindling.node. It never links CUDA: the CUDA backend is
# a separate shared library built by tools/build.js with nvcc and dlopen'ed at run time.
# The addon is compiled for plain x86-64 (no -march): it runs on any x86-64 CPU. The hot kernel
# files (node tools/list-sources.js dispatched) are compiled once more per CPU level into the
# static libraries below, with the level's flags and symbol suffix, and cpu_dispatch.c picks the
# level at load (Note [CPU capability dispatch] in src/cpu/cpu_capability.h).
{
  'target_defaults': {
    'include_dirs': [
      '<!(node -p "require(\'node-api-headers\').include_dir")',
      'src',
      '<!(node tools/find-blas.js include_dirs)',
    ],
    'defines': [
      'NAPI_VERSION=9',
      '<!(node tools/find-blas.js defines)',
    ],
    'cflags!': [ '-fno-exceptions', '-O2', '-O3' ],
    # -fno-math-errno (PyTorch builds with it too): no C code here reads errno after a libm
    # call, and with errno semantics gcc keeps sqrt/rsqrt as scalar calls (a libm call for
    # every negative input) instead of vsqrtps, so the pointwise, norm and optimizer loops
    # do not vectorize.
    'cflags_c': [ '-std=gnu11', '-O3', '-fvisibility=hidden', '-Wall', '-Wextra', '-Wno-unused-parameter',
                  '-Wno-sign-compare', '-Wno-missing-field-initializers', '-fno-strict-aliasing',
                  '-fno-math-errno', '-fPIC' ],
  },
  'targets': [
    {
      'target_name': 'kindling',
      'sources': [ '<!@(node tools/list-sources.js)', '<!@(node tools/find-blas.js sources)' ],
      'dependencies': [ 'kindling_cpu_default' ],
      'conditions': [
        [ 'target_arch=="x64"', { 'dependencies': [ 'kindling_cpu_avx2', 'kindling_cpu_avx512' ] } ],
      ],
      'libraries': [ '<!@(node tools/find-blas.js libraries)', '-lpthread', '-ldl', '-lm' ],
    },
    # The dispatched kernel files at the baseline (every CPU).
    {
      'target_name': 'kindling_cpu_default',
      'type': 'static_library',
      'sources': [ '<!@(node tools/list-sources.js dispatched)' ],
      'defines': [ 'KD_CPU_LEVEL=default' ],
      'cflags_c': [ '-include', 'cpu/cpu_level.h' ],
    },
  ],
  'conditions': [
    [ 'target_arch=="x64"', {
      'targets': [
        # PyTorch's AVX2 level: Haswell, Zen 1 and later.
        {
          'target_name': 'kindling_cpu_avx2',
          'type': 'static_library',
          'sources': [ '<!@(node tools/list-sources.js dispatched)' ],
          'defines': [ 'KD_CPU_LEVEL=avx2' ],
          'cflags_c': [ '-include', 'cpu/cpu_level.h', '-mavx2', '-mfma', '-mf16c', '-mbmi', '-mbmi2', '-mlzcnt' ],
        },
        # PyTorch's AVX512 level: Skylake-SP, Zen 4 and later (gemm_bf16.c adds AVX512-BF16).
        # Tuned for Skylake-SP rather than gcc's generic tuning, which never emits vector gathers
        # (the indexed loops of index_loops.c ran 1.2x slower than in a -march=native build) and
        # vectorizes loops 512 bits wide (cumsum along dim 0 ran 1.7x slower; the Skylake-SP
        # tuning vectorizes 256 bits wide with AVX-512's instructions, as -march=native does on
        # Ice Lake and later).
        {
          'target_name': 'kindling_cpu_avx512',
          'type': 'static_library',
          'sources': [ '<!@(node tools/list-sources.js dispatched)' ],
          'defines': [ 'KD_CPU_LEVEL=avx512' ],
          'cflags_c': [ '-include', 'cpu/cpu_level.h', '-mavx2', '-mfma', '-mf16c', '-mbmi', '-mbmi2', '-mlzcnt',
                        '-mavx512f', '-mavx512bw', '-mavx512vl', '-mavx512dq', '-mtune=skylake-avx512' ],
        },
      ],
    } ],
  ],
}
