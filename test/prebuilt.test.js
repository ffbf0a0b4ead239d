// prebuilt.test.js - the prebuilt addon and the optional CUDA package, on copies of the package
// in a temporary folder: lib/binary.js loads prebuilds/<os>-<arch>/kindling.node when its
// kindling.json fits this machine and build/Release otherwise, tools/install.js skips the source
// build only when a prebuilt binary fits and no source build was asked for, and the CUDA bridge
// finds libkindling_cuda.so in node_modules/kindling-cuda-linux-x64 (and says which CUDA runtime
// library is missing when one is). tools/pack-smoke.js --prebuilt installs the real tarball.
'use strict';

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const assert = require('node:assert/strict');
const binary = require('../lib/binary');

const ROOT = path.join(__dirname, '..');
const RELEASE = path.join(ROOT, 'build', 'Release');
const PLATFORM = `${process.platform}-${process.arch}`;

describe('prebuilt binaries', function () {
  this.timeout(60000);
  let tmp;
  before(() => { tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kindling-prebuilt-')); });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  // A copy of the package (lib/, tools/install.js, package.json) with a prebuilt addon (a copy of
  // the built one) and the given kindling.json, and with build/Release/kindling.node when withBuild.
  function packageCopy({ manifest = { libc: 'glibc', glibc: '2.17', blasLink: 'static' }, withBuild = false } = {}) {
    const pkg = fs.mkdtempSync(path.join(tmp, 'pkg-'));
    fs.cpSync(path.join(ROOT, 'lib'), path.join(pkg, 'lib'), { recursive: true });
    fs.mkdirSync(path.join(pkg, 'tools'));
    fs.copyFileSync(path.join(ROOT, 'tools', 'install.js'), path.join(pkg, 'tools', 'install.js'));
    fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(pkg, 'package.json'));
    const where = path.join(pkg, 'prebuilds', PLATFORM);
    fs.mkdirSync(where, { recursive: true });
    fs.copyFileSync(path.join(RELEASE, 'kindling.node'), path.join(where, 'kindling.node'));
    if (manifest) fs.writeFileSync(path.join(where, 'kindling.json'), JSON.stringify(manifest));
    if (withBuild) {
      fs.mkdirSync(path.join(pkg, 'build', 'Release'), { recursive: true });
      fs.copyFileSync(path.join(RELEASE, 'kindling.node'), path.join(pkg, 'build', 'Release', 'kindling.node'));
    }
    return pkg;
  }

  // Runs script in a child with cwd pkg; its last stdout line is JSON.
  function child(pkg, script, env = {}) {
    const r = spawnSync(process.execPath, ['-e', script], {
      cwd: pkg, encoding: 'utf8', timeout: 30000,
      env: { ...process.env, KINDLING_CUDA: '', KINDLING_CUDA_LIBRARY: '', KINDLING_BUILD_FROM_SOURCE: '', npm_config_build_from_source: '', ...env },
    });
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout.trim().split('\n').pop());
  }
  const LOAD = `try { const kd = require('.'); console.log(JSON.stringify({ build: kd.build, sum: kd.arange(4).sum().item() })); }
    catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })); }`;

  describe('the loader (lib/binary.js)', function () {
    it('loads the prebuilt addon when it fits, and says so in kd.build', function () {
      const pkg = packageCopy();
      const r = child(pkg, LOAD);
      assert.equal(r.sum, 6);
      assert.equal(r.build.binary, 'prebuilt');
      assert.equal(r.build.binaryPath, path.join(pkg, 'prebuilds', PLATFORM, 'kindling.node'));
      if (r.build.blas) assert.match(r.build.blasLibrary, /^OpenBLAS .* \(linked into the addon\)$/);
      else assert.equal(r.build.blasLibrary, null);
    });

    it('prefers a source build in build/Release (a checkout, --build-from-source)', function () {
      const pkg = packageCopy({ withBuild: true });
      const r = child(pkg, LOAD);
      assert.equal(r.build.binary, 'build');
      assert.equal(r.build.binaryPath, path.join(pkg, 'build', 'Release', 'kindling.node'));
      if (r.build.blas) assert.match(r.build.blasLibrary, /\(the system libopenblas\)$/);
    });

    it('passes over a prebuilt addon that needs a newer glibc, saying why when nothing else is built', function () {
      const pkg = packageCopy({ manifest: { libc: 'glibc', glibc: '99.0' } });
      const r = child(pkg, LOAD);
      assert.equal(r.code, 'KD_NOT_BUILT');
      assert.match(r.message, /native addon is not built \(no .*build\/Release\/kindling\.node; the prebuilt linux-x64 binary needs glibc 99\.0 or newer \(this system has \d+\.\d+\)\)/);
      assert.match(r.message, /run `npm rebuild kindling`/);
    });

    it('passes over a prebuilt folder without kindling.json', function () {
      const pkg = packageCopy({ manifest: null });
      assert.deepEqual(binary.findPrebuilt(pkg), { file: null, why: `no prebuilt binary for ${PLATFORM}` });
      assert.equal(child(pkg, LOAD).code, 'KD_NOT_BUILT');
    });

    it('compares glibc versions numerically', function () {
      assert.equal(binary.versionAtLeast('2.36', '2.17'), true);
      assert.equal(binary.versionAtLeast('2.9', '2.17'), false);
      assert.equal(binary.versionAtLeast('2.17', '2.17'), true);
      assert.equal(binary.versionAtLeast('3', '2.38'), true);
      assert.match(binary.runtimeGlibc(), /^\d+\.\d+/);
    });
  });

  describe('the install script (tools/install.js)', function () {
    const reason = (pkg, env) => child(pkg, "console.log(JSON.stringify(require('./tools/install.js').sourceBuildReason()))", env);

    it('skips the source build when a prebuilt addon fits', function () {
      assert.equal(reason(packageCopy()), '');
    });

    it('builds from source when asked, or when no prebuilt addon fits', function () {
      const pkg = packageCopy();
      assert.equal(reason(pkg, { KINDLING_BUILD_FROM_SOURCE: '1' }), 'KINDLING_BUILD_FROM_SOURCE is set');
      assert.equal(reason(pkg, { npm_config_build_from_source: 'true' }), '--build-from-source was given');
      assert.equal(reason(pkg, { KINDLING_BUILD_FROM_SOURCE: '0' }), '');
      assert.match(reason(packageCopy({ manifest: { libc: 'glibc', glibc: '99.0' } })), /needs glibc 99\.0 or newer/);
      assert.equal(reason(packageCopy({ manifest: null })), `no prebuilt binary for ${PLATFORM}`);
    });

    it('a source build without OpenBLAS warns what is slower and how to fix it', function () {
      const { NO_BLAS_WARNING } = require('../tools/build');
      assert.match(NO_BLAS_WARNING, /WARNING: built without OpenBLAS/);
      assert.match(NO_BLAS_WARNING, /2-5x slower/);
      assert.match(NO_BLAS_WARNING, /apt-get install libopenblas-dev/);
    });
  });

  describe('the optional CUDA package (kindling-cuda-linux-x64)', function () {
    // kindling-cuda-linux-x64 installed next to the package copy, as npm places it, holding lib.
    function withCudaPackage(pkg, writeLib) {
      const dir = path.join(pkg, 'node_modules', binary.CUDA_PACKAGE);
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: binary.CUDA_PACKAGE, version: '0.1.0' }));
      writeLib(path.join(dir, 'libkindling_cuda.so'));
      return dir;
    }
    const CUDA = "const kd = require('.'); console.log(JSON.stringify({ found: kd.build.cuda, available: kd.cuda.isAvailable(), reason: kd.cuda.unavailableReason() }))";

    it('without it, the reason says how to get the CUDA backend', function () {
      const r = child(packageCopy(), CUDA);
      assert.equal(r.found, false);
      assert.match(r.reason, /libkindling_cuda\.so not found: install the optional package kindling-cuda-linux-x64 .*looked in .*prebuilds\/linux-x64, .*build\/Release\)/);
    });

    it('the bridge finds its library in node_modules, for a prebuilt and a source-built addon', function () {
      for (const withBuild of [false, true]) {
        const pkg = packageCopy({ withBuild });
        const dir = withCudaPackage(pkg, (lib) => fs.writeFileSync(lib, 'not a shared object'));
        const r = child(pkg, CUDA);
        assert.equal(r.found, true, JSON.stringify(r));
        assert.equal(r.available, false);
        assert.ok(r.reason.startsWith(`could not load ${path.join(dir, 'libkindling_cuda.so')}: `), r.reason);
      }
    });

    it('a missing CUDA runtime library is named, with where to get it', function () {
      if (spawnSync('cc', ['--version']).status !== 0) this.skip();
      const pkg = packageCopy();
      // a library linking libcublas.so.99 (a version no toolkit has), whose stub is then deleted: as on a machine with the
      // driver but without the CUDA runtime libraries
      const stubs = fs.mkdtempSync(path.join(tmp, 'stubs-'));
      const cc = (args) => { const r = spawnSync('cc', args, { encoding: 'utf8' }); assert.equal(r.status, 0, r.stderr); };
      fs.writeFileSync(path.join(stubs, 'stub.c'), 'int cublasCreate_v2(void) { return 0; }\n');
      cc(['-shared', '-fPIC', '-o', path.join(stubs, 'libcublas.so'), '-Wl,-soname,libcublas.so.99', path.join(stubs, 'stub.c')]);
      fs.writeFileSync(path.join(stubs, 'lib.c'), 'int cublasCreate_v2(void);\nint kd_uses_cublas(void) { return cublasCreate_v2(); }\n');
      withCudaPackage(pkg, (lib) => cc(['-shared', '-fPIC', '-o', lib, path.join(stubs, 'lib.c'), `-L${stubs}`, '-lcublas', '-Wl,--no-as-needed']));
      fs.rmSync(stubs, { recursive: true });
      const r = child(pkg, CUDA);
      assert.equal(r.found, true);
      assert.equal(r.available, false);
      assert.match(r.reason, /^libcublas\.so\.99, a CUDA 99 runtime library that .*libkindling_cuda\.so needs, is not installed or not on the library path: install the CUDA 99 runtime libraries .*nvidia-cublas-cu99/);
    });

    it('npm run prebuilt -- --cuda compiles for sm_80, sm_86, sm_89, sm_90 and PTX, into the package', function () {
      // tools/build.js buildCuda as tools/prebuild.js calls it, with a stand-in nvcc that logs its arguments
      const cudaHome = fs.mkdtempSync(path.join(tmp, 'cuda-home-'));
      const nvcc = path.join(cudaHome, 'bin', 'nvcc');
      fs.mkdirSync(path.dirname(nvcc));
      fs.writeFileSync(nvcc, `#!/bin/sh
echo "$@" >> "${cudaHome}/calls"
out=""; while [ $# -gt 0 ]; do [ "$1" = -o ] && out="$2"; shift; done; printf x > "$out"
`);
      fs.chmodSync(nvcc, 0o755);
      const pkg = fs.mkdtempSync(path.join(tmp, 'pkg-cu-'));
      fs.mkdirSync(path.join(pkg, 'cuda'));
      fs.writeFileSync(path.join(pkg, 'cuda', 'a.cu'), '');
      const out = path.join(pkg, 'kindling-cuda-linux-x64', 'libkindling_cuda.so');
      const r = child(ROOT, `const b = require('./tools/build.js');
        console.log(JSON.stringify(b.buildCuda(${JSON.stringify(pkg)}, { archs: ['80', '86', '89', '90'], out: ${JSON.stringify(out)} })))`,
      { CUDA_HOME: cudaHome });
      assert.equal(r, true);
      assert.ok(fs.existsSync(out));
      const calls = fs.readFileSync(path.join(cudaHome, 'calls'), 'utf8').trim().split('\n');
      assert.equal(calls.length, 2); // compile a.cu, link
      for (const call of calls) {
        const gencode = call.split(' ').filter((a) => a.startsWith('-gencode='));
        assert.deepEqual(gencode, ['80', '86', '89', '90'].map((a) => `-gencode=arch=compute_${a},code=sm_${a}`)
          .concat('-gencode=arch=compute_90,code=compute_90'));
      }
      assert.match(calls[1], /^-shared .* -o \S+libkindling_cuda\.so .* -cudart static .*-lcublas/);
    });

    it('the emulated GPU, packaged as the CUDA library, runs from node_modules', function () {
      const emu = path.join(RELEASE, 'libkindling_cuda_emu.so');
      if (!fs.existsSync(emu)) this.skip(); // npm run build:emulator
      const pkg = packageCopy();
      withCudaPackage(pkg, (lib) => fs.copyFileSync(emu, lib));
      const r = child(pkg, `const kd = require('.'); console.log(JSON.stringify({ available: kd.cuda.isAvailable(), reason: kd.cuda.unavailableReason(),
        sum: kd.cuda.isAvailable() ? kd.arange(5, { device: 'cuda' }).mul(2).sum().item() : null }))`);
      assert.equal(r.available, true, r.reason);
      assert.equal(r.sum, 20);
    });
  });
});
