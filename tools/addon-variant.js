// addon-variant.js - builds an instrumented copy of the addon (kindling.node compiled with extra
// C flags, e.g. -fsanitize=address or --coverage) into build/<name>/Release, next to the normal
// build and without touching it: the node-gyp Makefile of the checkout (build/Makefile) is run
// with its output directory and CFLAGS/LDFLAGS overridden, so the objects and the addon of the
// variant live apart and are rebuilt incrementally; the CUDA libraries of build/Release are linked
// next to it. tools/addon-variant-hook.js makes lib/index.js load the variant. Used by
// tools/test-emulator-asan.js and tools/coverage-cuda.js.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');

/** Builds build/<name>/Release/kindling.node with `cflags` and `ldflags` added; returns its path. */
function buildAddonVariant(name, { cflags, ldflags }) {
  const buildDir = path.join(root, 'build');
  if (!fs.existsSync(path.join(buildDir, 'Makefile')))
    throw new Error('build/Makefile is missing: build the addon first (npm run build)');
  const builddir = path.join(name, 'Release'); // relative to build/, as node-gyp's own
  const jobs = Math.max(1, Number(process.env.KINDLING_JOBS) || os.availableParallelism?.() || os.cpus().length);
  console.log(`kindling: building the addon with ${cflags.join(' ')} into build/${builddir}`);
  const r = spawnSync('make', ['-C', buildDir, `-j${jobs}`, 'BUILDTYPE=Release', `builddir=${builddir}`,
    `CFLAGS=${cflags.join(' ')}`, `LDFLAGS=${ldflags.join(' ')}`], { stdio: 'inherit', cwd: root });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`building the ${name} addon failed (make exit status ${r.status})`);
  // The bridge looks for the CUDA library next to kindling.node: the variant's neighbours are
  // those of build/Release (links, dangling when a library is not built, as a missing file).
  for (const lib of ['libkindling_cuda.so', 'libkindling_cuda_emu.so']) {
    const link = path.join(buildDir, builddir, lib);
    fs.rmSync(link, { force: true });
    fs.symlinkSync(path.join('..', '..', 'Release', lib), link);
  }
  return path.join(buildDir, builddir, 'kindling.node');
}

/** Runs `node tools/build-emulator.js ...args` (incremental); throws when it fails. */
function buildEmulator(args) {
  const r = spawnSync(process.execPath, [path.join(__dirname, 'build-emulator.js'), ...args], { stdio: 'inherit', cwd: root });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`node tools/build-emulator.js ${args.join(' ')} failed`);
}

/** The environment that makes lib/index.js (in this process's children) load the addon at `file`. */
function addonVariantEnv(file) {
  const hook = path.join(__dirname, 'addon-variant-hook.js');
  const opts = [process.env.NODE_OPTIONS, `--require ${JSON.stringify(hook)}`].filter(Boolean).join(' ');
  return { KINDLING_ADDON_VARIANT: file, NODE_OPTIONS: opts };
}

/** The file of an npm package's bin script, e.g. bin('mocha', 'mocha.js'). */
const bin = (pkg, file) => path.join(path.dirname(require.resolve(`${pkg}/package.json`, { paths: [root] })), 'bin', file);

module.exports = { root, buildAddonVariant, buildEmulator, addonVariantEnv, bin };
