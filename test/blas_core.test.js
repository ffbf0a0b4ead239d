// blas_core.test.js - lib/blas_core.js: OPENBLAS_CORETYPE from the CPU's flags, never over the
// user's own choice.
'use strict';

const { assert } = require('./helpers');
const { chooseBlasCore, coreTypeForFlags } = require('../lib/blas_core');

describe('OpenBLAS core type from the CPU flags', function () {
  it('AVX-512 -> SkylakeX, AVX2 + FMA -> Haswell, older -> OpenBLAS decides', function () {
    const flags = (s) => new Set(s.split(' '));
    assert.equal(coreTypeForFlags(flags('sse3 avx avx2 fma avx512f avx512cd avx512bw avx512dq avx512vl')), 'SkylakeX');
    assert.equal(coreTypeForFlags(flags('sse3 avx avx2 fma avx512f')), 'Haswell'); // Knights Landing's subset
    assert.equal(coreTypeForFlags(flags('sse3 avx avx2 fma')), 'Haswell');
    assert.equal(coreTypeForFlags(flags('sse3 avx avx2')), null);
    assert.equal(coreTypeForFlags(flags('sse3 sse4_2')), null);
  });
  it('keeps a core type the user set', function () {
    const env = { OPENBLAS_CORETYPE: 'Sandybridge' };
    assert.equal(chooseBlasCore(env), null);
    assert.equal(env.OPENBLAS_CORETYPE, 'Sandybridge');
  });
  it('sets one on Linux x64 from /proc/cpuinfo when unset', function () {
    if (process.platform !== 'linux' || process.arch !== 'x64') this.skip();
    const env = {};
    const core = chooseBlasCore(env);
    assert.equal(env.OPENBLAS_CORETYPE, core === null ? undefined : core);
  });
});
