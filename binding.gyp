# node-gyp build of the CPU addon kindling.node. It never links CUDA: the CUDA backend is
# a separate shared library built by tools/build.js with nvcc and dlopen'ed at run time.
{
  'targets': [
    {
      'target_name': 'kindling',
      'sources': [ '<!@(node tools/list-sources.js)' ],
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
                    '-march=native', '-fno-math-errno' ],
      'libraries': [ '<!(node tools/find-blas.js libraries)', '-lpthread', '-ldl', '-lm' ],
    },
  ],
}
