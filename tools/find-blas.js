#!/usr/bin/env node
// Used by binding.gyp at configure time: prints the gyp settings that link OpenBLAS when
// its CBLAS header and library are installed (Debian: libopenblas-dev), nothing otherwise.
// KINDLING_BLAS_STATIC=1 (tools/prebuild.js) links OpenBLAS into the addon from libopenblas.a,
// its symbols kept private (--exclude-libs), with libgcc linked in too, so the binary needs no
// BLAS (nor anything but glibc) installed where it runs;
// the one GNU Fortran runtime routine its LAPACK needs is compiled in (`sources`:
// tools/blas/gfortran_concat_string.c), as libgfortran.a cannot go into a shared object.
//   node tools/find-blas.js defines|libraries|include_dirs|sources|summary
'use strict';
const fs = require('node:fs');

const candidates = [
  { header: '/usr/include/x86_64-linux-gnu/cblas.h', inc: '/usr/include/x86_64-linux-gnu' },
  { header: '/usr/include/aarch64-linux-gnu/cblas.h', inc: '/usr/include/aarch64-linux-gnu' },
  { header: '/usr/include/openblas/cblas.h', inc: '/usr/include/openblas' },
  { header: '/usr/local/include/cblas.h', inc: '/usr/local/include' },
  { header: '/usr/include/cblas.h', inc: '/usr/include' },
];
const libs = ['/usr/lib/x86_64-linux-gnu/libopenblas.so', '/usr/lib/aarch64-linux-gnu/libopenblas.so',
  '/usr/lib/libopenblas.so', '/usr/local/lib/libopenblas.so', '/usr/lib64/libopenblas.so'];

const staticLink = process.env.KINDLING_BLAS_STATIC === '1';

/** libopenblas.a next to the shared library (throws when it is missing). */
function staticArchive(sharedLib) {
  const archive = fs.realpathSync(sharedLib).replace(/libopenblasp?-r[0-9.]+\.so$/, 'libopenblas.so').replace(/\.so[.0-9]*$/, '.a');
  if (!fs.existsSync(archive)) throw new Error(`KINDLING_BLAS_STATIC=1: no ${archive} (apt-get install libopenblas-dev)`);
  return archive;
}

const found = process.env.KINDLING_BLAS === '0' ? null : (() => {
  const h = candidates.find((c) => fs.existsSync(c.header));
  const l = libs.find((p) => fs.existsSync(p));
  return h && l ? { inc: h.inc, lib: l } : null;
})();

function libraries() {
  if (!found) return '';
  if (!staticLink) return '-lopenblas';
  // -static-libgcc: libopenblas.a calls libgcc helpers (__powidf2), from libgcc.a, not libgcc_s.so
  return ['-Wl,--exclude-libs,ALL', '-static-libgcc', staticArchive(found.lib)].join(' ');
}

const what = process.argv[2];
if (what === 'defines') process.stdout.write(found ? 'KD_HAVE_CBLAS=1' : 'KD_HAVE_CBLAS=0');
else if (what === 'libraries') process.stdout.write(libraries());
else if (what === 'include_dirs') process.stdout.write(found ? found.inc : '');
else if (what === 'sources') process.stdout.write(found && staticLink ? 'tools/blas/gfortran_concat_string.c' : '');
else if (what === 'summary') process.stdout.write(found ? `OpenBLAS: ${staticLink ? `${staticArchive(found.lib)} (static)` : found.lib}` : 'OpenBLAS: not found');
