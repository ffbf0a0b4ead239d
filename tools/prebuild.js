#!/usr/bin/env node
// prebuild.js - the packages users install without compiling (`npm run prebuilt`; not "prebuild",
// which npm would run before every `npm run build`):
//   dist/kindling-<version>.tgz: the npm package (npm pack of this checkout) with
//     prebuilds/linux-x64/kindling.node: the checkout's addon (build/, compiled for plain x86-64;
//     the hot kernels dispatch to AVX2 and AVX-512 at run time) linked again with OpenBLAS in it
//     (tools/find-blas.js, KINDLING_BLAS_STATIC=1), so it needs nothing at run time but glibc.
//     Objects already compiled are reused; build/ is linked back as it was. Its kindling.json says
//     the glibc it needs, which lib/binary.js checks before loading it. The sources stay in the
//     package: other platforms, or --build-from-source, build as before.
//   with --cuda, also dist/kindling-cuda-linux-x64-<version>.tgz: the optional package holding
//     libkindling_cuda.so (sm_80, sm_86, sm_89, sm_90 and PTX for newer GPUs; the CUDA runtime
//     linked statically, cuBLAS/cuSOLVER dynamically), which the CUDA bridge finds in node_modules.
// The addon's dynamic dependencies are checked (readelf -d): anything but glibc's libraries fails.
//   node tools/prebuild.js [--cuda] [--cuda-library=FILE] [--out=DIR] [--keep]
//   --cuda-library=FILE   package FILE as the CUDA library instead of building it with nvcc
//   KINDLING_CUDA_ARCHS   the GPU architectures (default 80,86,89,90)
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { buildCuda, nodeGyp } = require('./build');
const { CUDA_PACKAGE, versionAtLeast } = require('../lib/binary');

const root = path.resolve(__dirname, '..');
const opts = Object.fromEntries(process.argv.slice(2).map((a) => {
  const m = /^--([^=]+)(?:=(.*))?$/.exec(a);
  if (!m) throw new Error(`prebuild: unknown argument ${a}`);
  return [m[1], m[2] === undefined ? true : m[2]];
}));
const outDir = path.resolve(opts.out || path.join(root, 'dist'));
const CUDA_ARCHS = (process.env.KINDLING_CUDA_ARCHS || '80,86,89,90').split(',');
// The libraries glibc itself provides: all a prebuilt addon may need at run time.
const GLIBC_LIBRARIES = ['libc.so.6', 'libm.so.6', 'libmvec.so.1', 'libpthread.so.0', 'libdl.so.2', 'librt.so.1', 'ld-linux-x86-64.so.2'];

function run(cmd, args, options = {}) {
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8', maxBuffer: 64 << 20, ...options });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`prebuild: '${cmd} ${args.join(' ')}' failed with status ${r.status}\n${r.stdout || ''}`);
  return r.stdout;
}

/** npm pack of dir into dest; returns the tarball's path. */
function npmPack(dir, dest) {
  const [info] = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', dest], { cwd: dir }));
  return path.join(dest, info.filename);
}

/** The shared libraries file needs (readelf -d) and the newest glibc symbol version it uses. */
function dynamicDeps(file) {
  const needed = [...run('readelf', ['-d', file]).matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g)].map((m) => m[1]);
  const versions = [...run('objdump', ['-T', file]).matchAll(/\bGLIBC_(\d+(?:\.\d+)+)\b/g)].map((m) => m[1]);
  const newest = versions.reduce((a, b) => (versionAtLeast(a, b) ? a : b), '2.2.5');
  return { needed, glibc: newest };
}

/** Links the checkout's addon with OpenBLAS static (node-gyp configure + build: what is compiled
 * already is reused, as the compile commands do not change, so after a build only the link runs),
 * then links it back as it was; returns a copy of the static one, in dir. */
function buildStaticAddon(dir) {
  const built = path.join(root, 'build', 'Release', 'kindling.node');
  const copy = path.join(dir, 'kindling.node');
  const env = { ...process.env, KINDLING_CUDA: '0' };
  console.log('prebuild: building the addon (OpenBLAS static, no -march)');
  const t0 = Date.now();
  try {
    nodeGyp(['configure'], { ...env, KINDLING_BLAS_STATIC: '1' });
    nodeGyp(['build'], { ...env, KINDLING_BLAS_STATIC: '1' });
    const native = fs.readdirSync(path.join(root, 'build')).filter((f) => f.endsWith('.mk'))
      .filter((f) => /-march=native|-mtune=native/.test(fs.readFileSync(path.join(root, 'build', f), 'utf8')));
    if (native.length) throw new Error(`prebuild: ${native.join(', ')} compile for this machine's CPU (-march=native)`);
    fs.copyFileSync(built, copy);
  } finally {
    delete env.KINDLING_BLAS_STATIC;
    nodeGyp(['configure'], env);
    nodeGyp(['build'], env);
  }
  console.log(`prebuild: built in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  return copy;
}

function prebuildAddon(tmp, version) {
  // The package as npm packs it, with the prebuilt addon added.
  const tarball = npmPack(root, tmp);
  const stage = path.join(tmp, 'stage');
  fs.mkdirSync(stage);
  run('tar', ['-xzf', tarball, '-C', stage]);
  fs.rmSync(tarball);
  const pkg = path.join(stage, 'package');
  // The published package names the CUDA package as an optional dependency (npm installs it where
  // its os/cpu fit, and goes on without it elsewhere); the repository does not, so that its lock
  // file stays in step with package.json before the CUDA package is published.
  const pkgJson = path.join(pkg, 'package.json');
  const manifestJson = JSON.parse(fs.readFileSync(pkgJson, 'utf8'));
  manifestJson.optionalDependencies = { ...manifestJson.optionalDependencies, [CUDA_PACKAGE]: version };
  fs.writeFileSync(pkgJson, JSON.stringify(manifestJson, null, 2) + '\n');
  const built = buildStaticAddon(tmp);
  const deps = dynamicDeps(built);
  const foreign = deps.needed.filter((l) => !GLIBC_LIBRARIES.includes(l));
  if (foreign.length) throw new Error(`prebuild: kindling.node needs ${foreign.join(', ')} at run time (only glibc's libraries may be needed)`);

  const where = path.join(pkg, 'prebuilds', `${process.platform}-${process.arch}`);
  fs.mkdirSync(where, { recursive: true });
  fs.copyFileSync(built, path.join(where, 'kindling.node'));
  run('strip', ['--strip-unneeded', path.join(where, 'kindling.node')]);
  const blas = run(process.execPath, [path.join(__dirname, 'find-blas.js'), 'summary'], { env: { ...process.env, KINDLING_BLAS_STATIC: '1' } });
  const manifest = { name: 'kindling', version, platform: process.platform, arch: process.arch, libc: 'glibc',
    glibc: deps.glibc, needed: deps.needed, blasLink: 'static', blas, napiVersion: 9, cpu: 'x86-64 baseline + AVX2/AVX-512 kernels chosen at run time' };
  fs.writeFileSync(path.join(where, 'kindling.json'), JSON.stringify(manifest, null, 2) + '\n');
  const out = npmPack(pkg, outDir);
  const size = fs.statSync(path.join(where, 'kindling.node')).size;
  console.log(`prebuild: ${path.relative(root, out)}: ${(fs.statSync(out).size / 1048576).toFixed(1)} MiB `
    + `(kindling.node ${(size / 1048576).toFixed(1)} MiB; needs ${deps.needed.join(', ')}; glibc >= ${deps.glibc})`);
  return out;
}

function prebuildCuda(tmp, version) {
  const name = CUDA_PACKAGE;
  const pkg = path.join(tmp, name);
  fs.mkdirSync(pkg);
  const lib = path.join(pkg, 'libkindling_cuda.so');
  if (typeof opts['cuda-library'] === 'string') {
    fs.copyFileSync(path.resolve(opts['cuda-library']), lib);
  } else {
    const t0 = Date.now();
    if (!buildCuda(root, { archs: CUDA_ARCHS, out: lib })) throw new Error('prebuild: --cuda needs nvcc (CUDA_HOME or PATH)');
    console.log(`prebuild: libkindling_cuda.so built in ${((Date.now() - t0) / 60000).toFixed(1)} min`);
  }
  fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({
    name, version, description: `kindling's CUDA backend for ${process.platform}-${process.arch} (installed by kindling as an optional dependency)`,
    os: [process.platform], cpu: [process.arch], files: ['libkindling_cuda.so', 'README.md'], license: 'MIT',
  }, null, 2) + '\n');
  fs.writeFileSync(path.join(pkg, 'README.md'), `# ${name}\n\nlibkindling_cuda.so, kindling's CUDA backend, `
    + `built for sm_${CUDA_ARCHS.join(', sm_')} with PTX for newer GPUs. kindling installs it as an optional dependency `
    + 'and loads it when a CUDA tensor is first used. It needs the NVIDIA driver and the CUDA runtime libraries '
    + '(cuBLAS, cuSOLVER) of its CUDA major version.\n');
  const out = npmPack(pkg, outDir);
  console.log(`prebuild: ${path.relative(root, out)}: ${(fs.statSync(out).size / 1048576).toFixed(1)} MiB (needs ${dynamicDeps(lib).needed.join(', ')})`);
  return out;
}

function main() {
  if (process.platform !== 'linux' || process.arch !== 'x64') throw new Error('prebuild: makes linux-x64 binaries, on linux-x64');
  const { version } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  fs.mkdirSync(outDir, { recursive: true });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kindling-prebuild-'));
  try {
    prebuildAddon(tmp, version);
    if (opts.cuda || opts['cuda-library']) prebuildCuda(tmp, version);
  } finally {
    if (opts.keep) console.log(`prebuild: kept ${tmp}`);
    else fs.rmSync(tmp, { recursive: true, force: true });
  }
}

if (require.main === module) {
  try { main(); } catch (e) { console.error(e.message); process.exit(1); }
}
module.exports = { dynamicDeps, GLIBC_LIBRARIES };
