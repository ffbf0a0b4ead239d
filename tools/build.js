#!/usr/bin/env node
// Builds kindling: the CPU addon (build/Release/kindling.node) with node-gyp, then,
// when nvcc is found, the CUDA backend (build/Release/libkindling_cuda.so), which the
// addon dlopens on first CUDA use. Works offline with an empty HOME: node-gyp gets
// tools/nodedir as its nodedir, and the Node-API headers come from node-api-headers.
// The CUDA object files (~45 MB) are deleted once the library is linked. Installed as a
// dependency (the package inside node_modules), the build keeps only what runs: every other
// build intermediate (node-gyp's Makefiles and object files) is deleted too; a checkout keeps
// them for incremental `make -C build BUILDTYPE=Release`.
//   node tools/build.js            build everything that can be built here
//   KINDLING_CUDA=0                skip the CUDA backend
//   KINDLING_CUDA=emulate          also build the emulated GPU (tools/build-emulator.js)
//   KINDLING_CUDA_ARCHS=80,90      GPU architectures for nvcc (default 80,90)
//   CUDA_HOME=/usr/local/cuda      where to look for nvcc
//   KINDLING_KEEP_BUILD=1          keep node-gyp's intermediates in a dependency install too
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');

// What the package needs at run time, relative to build/ (src/cuda_bridge looks for the CUDA
// library next to kindling.node).
const RUNTIME_FILES = ['Release/kindling.node', 'Release/libkindling_cuda.so', 'Release/libkindling_cuda_emu.so'];

class BuildError extends Error {
  constructor(message, status) { super(message); this.status = status; }
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', cwd: root, ...opts });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new BuildError(`kindling: '${cmd} ${args.join(' ')}' failed with status ${r.status}`, r.status || 1);
}

/** Deletes everything under buildDir but RUNTIME_FILES; returns the relative paths deleted. */
function pruneBuild(buildDir) {
  const keep = new Set(RUNTIME_FILES.map((f) => path.join(buildDir, f)));
  const removed = [];
  // true when dir still holds something kept
  const prune = (dir) => {
    let kept = false;
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (keep.has(p)) kept = true;
      else if (e.isDirectory() && !e.isSymbolicLink() && [...keep].some((k) => k.startsWith(p + path.sep)) && prune(p)) kept = true;
      else { fs.rmSync(p, { recursive: true, force: true }); removed.push(path.relative(buildDir, p)); }
    }
    return kept;
  };
  if (fs.existsSync(buildDir)) prune(buildDir);
  return removed;
}

/** True when this package was installed as a dependency (it sits inside a node_modules folder). */
function isDependencyInstall(dir = root) {
  return dir.split(path.sep).includes('node_modules');
}

function nodeGypCommand() {
  // npm sets npm_config_node_gyp to its bundled copy during lifecycle scripts.
  const candidates = [process.env.npm_config_node_gyp];
  try { candidates.push(require.resolve('node-gyp/bin/node-gyp.js')); } catch { /* not installed */ }
  const npmDir = path.join(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm');
  candidates.push(path.join(npmDir, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'));
  for (const c of candidates) if (c && fs.existsSync(c)) return c;
  console.error('kindling: node-gyp not found (it ships with npm; or `npm install node-gyp`)');
  process.exit(1);
}

/** Runs node-gyp with args (rebuild, configure, build) on the package at root, offline. */
function nodeGyp(args, env = process.env) {
  const gyp = nodeGypCommand();
  const nodedir = path.join(root, 'tools', 'nodedir');
  env = { ...env };
  // Never let a user's npmrc or environment point node-gyp at another nodedir.
  delete env.npm_config_nodedir;
  delete env.NPM_CONFIG_NODEDIR;
  run(process.execPath, [gyp, ...args, `--nodedir=${nodedir}`, ...(args[0] === 'configure' ? [] : ['--jobs=max'])], { env });
}

function buildAddon() {
  nodeGyp(['rebuild']);
  const blas = spawnSync(process.execPath, [path.join(__dirname, 'find-blas.js'), 'defines'], { encoding: 'utf8' }).stdout;
  if (blas !== 'KD_HAVE_CBLAS=1') console.warn(NO_BLAS_WARNING);
}

const NO_BLAS_WARNING = 'kindling: WARNING: built without OpenBLAS (its CBLAS header and libopenblas were not found): '
  + 'matmul, conv and linear layers use kindling\'s own kernels, about 2-5x slower, and the LAPACK-based linalg '
  + 'functions (solve, inv, qr, svd, eigh, lstsq, cholesky) are unavailable. To fix: `apt-get install libopenblas-dev` '
  + '(Fedora: openblas-devel) and `npm rebuild kindling`.';

function findNvcc() {
  if (process.env.KINDLING_CUDA === '0') return null;
  const homes = [process.env.CUDA_HOME, process.env.CUDA_PATH, '/usr/local/cuda'].filter(Boolean);
  for (const h of homes) {
    const nvcc = path.join(h, 'bin', 'nvcc');
    if (fs.existsSync(nvcc)) return { home: h, nvcc };
  }
  const which = spawnSync('sh', ['-c', 'command -v nvcc'], { encoding: 'utf8' });
  if (which.status === 0 && which.stdout.trim()) {
    const nvcc = which.stdout.trim();
    return { home: path.resolve(path.dirname(nvcc), '..'), nvcc };
  }
  return null;
}

// The CUDA libraries the backend at dir links: cuBLAS always, cuSOLVER when a file of cuda/
// includes its header (libcusolver is large and pulls in cuSPARSE and cuBLASLt when loaded).
function cudaLibraries(dir) {
  const cudaDir = path.join(dir, 'cuda');
  const usesSolver = fs.readdirSync(cudaDir).filter((f) => /\.(cu|cuh|h)$/.test(f))
    .some((f) => /#\s*include\s*[<"]cusolverDn\.h[>"]/.test(fs.readFileSync(path.join(cudaDir, f), 'utf8')));
  return usesSolver ? ['-lcublas', '-lcusolver'] : ['-lcublas'];
}

// The CUDA backend of the package at dir (its cuda/*.cu) into out (dir/build/Release by default),
// for archs (KINDLING_CUDA_ARCHS, 80,90 by default): a fatbin per arch, PTX for the last.
function buildCuda(dir = root, { archs = (process.env.KINDLING_CUDA_ARCHS || '80,90').split(','),
  out = path.join(dir, 'build', 'Release', 'libkindling_cuda.so') } = {}) {
  const cuda = findNvcc();
  if (!cuda) {
    console.log('kindling: nvcc not found; building without the CUDA backend (kd.cuda.isAvailable() will be false)');
    return false;
  }
  archs = archs.map((s) => String(s).trim()).filter(Boolean);
  const gencode = [];
  for (const a of archs) gencode.push(`-gencode=arch=compute_${a},code=sm_${a}`);
  // PTX for the newest arch so future GPUs can JIT it.
  gencode.push(`-gencode=arch=compute_${archs[archs.length - 1]},code=compute_${archs[archs.length - 1]}`);
  const sources = fs.readdirSync(path.join(dir, 'cuda')).filter((f) => f.endsWith('.cu')).map((f) => path.join('cuda', f));
  // The object files are only needed until the link (every build compiles every .cu again).
  const objDir = path.join(dir, 'build', 'cuda-obj');
  fs.mkdirSync(objDir, { recursive: true });
  fs.mkdirSync(path.dirname(out), { recursive: true });
  // --threads 0: the architectures of one file compile in parallel, one thread per CPU
  // (KINDLING_NVCC_THREADS overrides; each thread of a large file needs up to 2 GB)
  const common = ['-O3', '-std=c++17', '-Xcompiler', '-fPIC', '-Xcompiler', '-fvisibility=hidden',
    '--threads', process.env.KINDLING_NVCC_THREADS || '0', '-Isrc', '-Icuda', ...gencode];
  try {
    const objs = [];
    for (const src of sources) {
      const obj = path.join(objDir, path.basename(src, '.cu') + '.o');
      console.log(`kindling: nvcc ${src}`);
      run(cuda.nvcc, [...common, '-c', src, '-o', obj], { cwd: dir });
      objs.push(obj);
    }
    run(cuda.nvcc, ['-shared', ...gencode, '-o', out, ...objs, '-cudart', 'static',
      `-L${path.join(cuda.home, 'lib64')}`, ...cudaLibraries(dir), '-Xlinker', `-rpath=${path.join(cuda.home, 'lib64')}`], { cwd: dir });
  } finally {
    fs.rmSync(objDir, { recursive: true, force: true });
  }
  console.log(`kindling: built ${path.relative(dir, out)} for sm_${archs.join(', sm_')}`);
  return true;
}

function main() {
  try {
    buildAddon();
    buildCuda();
    // KINDLING_CUDA=emulate at install: also build the emulated GPU (tools/build-emulator.js), so
    // an app's CI without a GPU can run its device: 'cuda' code with the same variable set.
    if (process.env.KINDLING_CUDA === 'emulate') run(process.execPath, [path.join(__dirname, 'build-emulator.js')]);
  } catch (e) {
    if (!(e instanceof BuildError)) throw e;
    console.error(e.message);
    process.exit(e.status);
  }
  if (isDependencyInstall() && process.env.KINDLING_KEEP_BUILD !== '1') {
    const removed = pruneBuild(path.join(root, 'build'));
    if (removed.length) console.log(`kindling: removed the build intermediates (${removed.length} entries of build/); kept ${RUNTIME_FILES.join(', ')}`);
  }
}

if (require.main === module) main();
module.exports = { nodeGyp, buildCuda, cudaLibraries, pruneBuild, isDependencyInstall, BuildError, RUNTIME_FILES, NO_BLAS_WARNING };
