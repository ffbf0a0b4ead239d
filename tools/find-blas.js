#!/usr/bin/env node
// Used by binding.gyp at configure time: prints the gyp settings that link OpenBLAS when
// its CBLAS header and library are installed (Debian: libopenblas-dev), nothing otherwise.
//   node tools/find-blas.js defines|libraries|include_dirs
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

const found = process.env.KINDLING_BLAS === '0' ? null : (() => {
  const h = candidates.find((c) => fs.existsSync(c.header));
  const l = libs.find((p) => fs.existsSync(p));
  return h && l ? { inc: h.inc, lib: l } : null;
})();

const what = process.argv[2];
if (what === 'defines') process.stdout.write(found ? 'KD_HAVE_CBLAS=1' : 'KD_HAVE_CBLAS=0');
else if (what === 'libraries') process.stdout.write(found ? '-lopenblas' : '');
else if (what === 'include_dirs') process.stdout.write(found ? found.inc : '');
else if (what === 'summary') process.stdout.write(found ? `OpenBLAS: ${found.lib}` : 'OpenBLAS: not found');
