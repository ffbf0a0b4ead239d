// blas_core.js - picks OpenBLAS's kernels for this CPU before the addon (and with it OpenBLAS)
// loads. OpenBLAS built with DYNAMIC_ARCH (Debian's 0.3.21, and the static library of the
// prebuilt addon) chooses its kernels by CPU model; a model it does not know (newer Xeons, CPUs
// that a VM reports by a generic name) gets its Prescott kernels, SSE3 only: sgemm, and with it
// matmul, linear and every convolution, runs ~6x slower than it can. When the user has not set
// OPENBLAS_CORETYPE, this sets it from the CPU's own flags (Linux, /proc/cpuinfo): AVX-512
// (F, CD, BW, DQ, VL) -> SkylakeX, AVX2 with FMA -> Haswell; otherwise OpenBLAS decides. The
// variable is read once, when OpenBLAS initialises, and child processes inherit it.
'use strict';

const fs = require('node:fs');

/** The OpenBLAS core type for a set of /proc/cpuinfo flags, or null to let OpenBLAS choose. */
function coreTypeForFlags(flags) {
  const has = (f) => flags.has(f);
  if (['avx512f', 'avx512cd', 'avx512bw', 'avx512dq', 'avx512vl'].every(has)) return 'SkylakeX';
  if (has('avx2') && has('fma')) return 'Haswell';
  return null;
}

/** Sets OPENBLAS_CORETYPE from the CPU's flags when it is unset; returns what it set, or null. */
function chooseBlasCore(env = process.env) {
  if (env.OPENBLAS_CORETYPE || process.platform !== 'linux' || process.arch !== 'x64') return null;
  let text;
  try {
    text = fs.readFileSync('/proc/cpuinfo', 'utf8');
  } catch {
    return null;
  }
  const line = text.split('\n').find((l) => l.startsWith('flags'));
  if (!line) return null;
  const core = coreTypeForFlags(new Set(line.slice(line.indexOf(':') + 1).trim().split(/\s+/)));
  if (core) env.OPENBLAS_CORETYPE = core;
  return core;
}

module.exports = { chooseBlasCore, coreTypeForFlags };
