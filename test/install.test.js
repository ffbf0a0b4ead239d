// install.test.js - what a new user meets before the first tensor: `npm test` runs every check,
// a missing or unloadable native addon is a clear error saying how to rebuild it, and the build
// (tools/build.js) leaves only what runs: CUDA object files go once the library is linked, and a
// dependency install keeps nothing of build/ but the addon and the CUDA library.
// (tools/pack-smoke.js installs the packed package into an app and checks the same there.)
'use strict';

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const assert = require('node:assert/strict');

const ROOT = path.join(__dirname, '..');

describe('installation', function () {
  this.timeout(60000);
  let tmp;
  before(() => { tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kindling-install-')); });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('npm test runs the type check also when a unit test fails, and fails', function () {
    // tsc takes a minute on a loaded 2-core machine, more with the ASan runtime preloaded
    // (npm run test:asan)
    this.timeout(240000);
    const failing = path.join(tmp, 'failing.test.js');
    fs.writeFileSync(failing, "it('fails on purpose', () => { throw new Error('failing on purpose'); });\n");
    // --no-config: only this file, not the suite of .mocharc.js
    const r = spawnSync(process.execPath, [path.join(ROOT, 'tools', 'test.js'), '--no-config', failing],
      { cwd: ROOT, encoding: 'utf8', timeout: 220000 });
    assert.notEqual(r.status, 0, `tools/test.js exited 0 with a failing test:\n${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /npm test: mocha failed \(exit status \d+\); tsc -p test\/types passed/);
  });

  describe('a missing or unloadable native addon', function () {
    // A copy of lib/ and package.json without a build (or with a broken one), loaded in a child.
    function loadCopy(addonBytes) {
      const pkg = fs.mkdtempSync(path.join(tmp, 'pkg-'));
      fs.cpSync(path.join(ROOT, 'lib'), path.join(pkg, 'lib'), { recursive: true });
      fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(pkg, 'package.json'));
      if (addonBytes !== null) {
        fs.mkdirSync(path.join(pkg, 'build', 'Release'), { recursive: true });
        fs.writeFileSync(path.join(pkg, 'build', 'Release', 'kindling.node'), addonBytes);
      }
      const r = spawnSync(process.execPath, ['-e', `
        try { require(${JSON.stringify(pkg)}); console.log('{"loaded": true}'); }
        catch (e) { console.log(JSON.stringify({ name: e.name, code: e.code, message: e.message })); }`],
      { encoding: 'utf8', timeout: 30000 });
      assert.equal(r.status, 0, r.stderr);
      return { pkg, err: JSON.parse(r.stdout) };
    }

    it('not built: a KindlingError saying to run npm rebuild kindling', function () {
      const { pkg, err } = loadCopy(null);
      assert.equal(err.name, 'KindlingError');
      assert.equal(err.code, 'KD_NOT_BUILT');
      assert.match(err.message, /native addon is not built/);
      assert.ok(err.message.includes(path.join(pkg, 'build', 'Release', 'kindling.node')), err.message);
      assert.match(err.message, /run `npm rebuild kindling`/);
    });

    it('not loadable (a broken file): the same advice, with the loader\'s reason', function () {
      const { err } = loadCopy('not a shared object');
      assert.equal(err.code, 'KD_NOT_BUILT');
      assert.match(err.message, /native addon could not be loaded \(.*kindling\.node/);
      assert.match(err.message, /run `npm rebuild kindling`/);
    });
  });

  describe('build intermediates (tools/build.js)', function () {
    const build = require(path.join(ROOT, 'tools', 'build.js'));
    const files = (dir) => fs.readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => !e.isDirectory()).map((e) => path.relative(dir, path.join(e.parentPath || e.path, e.name))).sort();
    const touch = (f) => { fs.mkdirSync(path.dirname(f), { recursive: true }); fs.writeFileSync(f, 'x'); };

    it('pruneBuild keeps the addon and the CUDA library, and nothing else', function () {
      const dir = fs.mkdtempSync(path.join(tmp, 'build-'));
      for (const f of ['Makefile', 'config.gypi', 'binding.Makefile', 'kindling.target.mk', 'cuda-obj/ops.o',
        'Release/kindling.node', 'Release/libkindling_cuda.so', 'Release/.deps/Release/kindling.node.d',
        'Release/obj.target/kindling/src/core/tensor.o', 'Release/obj.target/kindling.node']) touch(path.join(dir, f));
      const removed = build.pruneBuild(dir);
      assert.deepEqual(files(dir), ['Release/kindling.node', 'Release/libkindling_cuda.so']);
      assert.ok(removed.includes('cuda-obj') && removed.includes(path.join('Release', 'obj.target')), String(removed));
      assert.deepEqual(build.pruneBuild(path.join(dir, 'absent')), []);
    });

    it('a package inside node_modules prunes; a checkout does not', function () {
      assert.equal(build.isDependencyInstall(path.join(tmp, 'app', 'node_modules', 'kindling')), true);
      assert.equal(build.isDependencyInstall(path.join(tmp, 'app', 'node_modules', '@scope', 'kindling')), true);
      assert.equal(build.isDependencyInstall(ROOT), false);
    });

    it('the CUDA library links cuBLAS, and cuSOLVER once a file of cuda/ includes cusolverDn.h', function () {
      const pkg = fs.mkdtempSync(path.join(tmp, 'pkg-libs-'));
      touch(path.join(pkg, 'cuda', 'a.cu'));
      fs.writeFileSync(path.join(pkg, 'cuda', 'notes.h'), '// cusolverDn.h is not included here\n');
      assert.deepEqual(build.cudaLibraries(pkg), ['-lcublas']);
      fs.writeFileSync(path.join(pkg, 'cuda', 'ops_linalg.cu'), '#include <cublas_v2.h>\n#include <cusolverDn.h>\n');
      assert.deepEqual(build.cudaLibraries(pkg), ['-lcublas', '-lcusolver']);
    });

    // buildCuda with a stand-in nvcc (CUDA_HOME/bin/nvcc) that writes its -o file, in a child
    describe('CUDA object files are deleted once the library is linked', function () {
      function buildWithFakeNvcc(failLink) {
        const cudaHome = path.join(tmp, 'cuda-home');
        const nvcc = path.join(cudaHome, 'bin', 'nvcc');
        if (!fs.existsSync(nvcc)) {
          touch(nvcc);
          fs.writeFileSync(nvcc, `#!/bin/sh
out=""; shared=0
while [ $# -gt 0 ]; do case "$1" in -o) out="$2"; shift ;; -shared) shared=1 ;; esac; shift; done
if [ "$shared" = 1 ] && [ "$FAIL_LINK" = 1 ]; then exit 3; fi
printf object > "$out"
`);
          fs.chmodSync(nvcc, 0o755);
        }
        const pkg = fs.mkdtempSync(path.join(tmp, 'pkg-cuda-'));
        for (const f of ['cuda/a.cu', 'cuda/b.cu', 'cuda/kd_cuda_api.h']) touch(path.join(pkg, f));
        const env = { ...process.env, CUDA_HOME: cudaHome, FAIL_LINK: failLink ? '1' : '0' };
        delete env.KINDLING_CUDA;
        const r = spawnSync(process.execPath, ['-e', `
          const b = require(${JSON.stringify(path.join(ROOT, 'tools', 'build.js'))});
          try { b.buildCuda(${JSON.stringify(pkg)}); console.log('status 0'); }
          catch (e) { if (!(e instanceof b.BuildError)) throw e; console.log('status ' + e.status); }`],
        { encoding: 'utf8', env, timeout: 30000 });
        assert.equal(r.status, 0, r.stderr);
        return { pkg, out: r.stdout };
      }

      it('after a link', function () {
        const { pkg, out } = buildWithFakeNvcc(false);
        assert.match(out, /nvcc cuda\/a\.cu[\s\S]*status 0/);
        assert.deepEqual(files(path.join(pkg, 'build')), ['Release/libkindling_cuda.so']);
      });

      it('after a failed link too', function () {
        const { pkg, out } = buildWithFakeNvcc(true);
        assert.match(out, /status 3/);
        assert.deepEqual(files(path.join(pkg, 'build')), []);
      });
    });
  });
});
