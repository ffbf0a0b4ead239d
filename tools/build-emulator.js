#!/usr/bin/env node
// Builds the emulated GPU: the same cuda/*.cu sources as the CUDA backend, compiled by the host
// C++ compiler against cuda/emulator (a CPU implementation of the parts of the CUDA runtime,
// cuBLAS, cuSOLVER and CUB they use) into build/Release/libkindling_cuda_emu.so. With KINDLING_CUDA=emulate
// in the environment, kindling loads it as its CUDA backend (docs/CUDA.md, "The emulated GPU").
// Needs no CUDA toolkit. Incremental: a source is recompiled when it or any header is newer
// than its object.
//   node tools/build-emulator.js               npm run build:emulator
//   node tools/build-emulator.js --sanitize    AddressSanitizer + UBSan build (libkindling_cuda_emu_asan.so)
//   node tools/build-emulator.js --coverage    gcov-instrumented build (libkindling_cuda_emu_cov.so)
//   CXX=clang++                                another compiler; KINDLING_JOBS=n parallel jobs
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const args = new Set(process.argv.slice(2));
const variant = args.has('--sanitize') ? 'asan' : args.has('--coverage') ? 'cov' : '';
const cxx = process.env.CXX || 'g++';

function blas() {
  const run = (what) => require('node:child_process')
    .execFileSync(process.execPath, [path.join(__dirname, 'find-blas.js'), what], { encoding: 'utf8' }).trim();
  return run('defines') === 'KD_HAVE_CBLAS=1' ? { inc: run('include_dirs'), lib: run('libraries') } : null;
}

const flags = ['-x', 'c++', '-std=c++17', '-fPIC', '-fvisibility=hidden', '-Wall', '-Wno-unused-function',
  '-Wno-unused-variable', '-Wno-unused-but-set-variable', '-Wno-sign-compare', '-Wno-unknown-pragmas',
  '-Wno-missing-field-initializers', '-Wno-class-memaccess',
  // nvcc includes cuda_runtime.h in every .cu file; so does this build
  '-include', 'cuda_runtime.h',
  '-I' + path.join(root, 'cuda', 'emulator', 'include'), '-I' + path.join(root, 'cuda', 'emulator'),
  '-I' + path.join(root, 'cuda'), '-I' + path.join(root, 'src')];
if (variant === 'asan') flags.push('-O1', '-g', '-fsanitize=address,undefined', '-fno-omit-frame-pointer', '-fno-sanitize-recover=undefined');
else if (variant === 'cov') flags.push('-O0', '-g', '--coverage');
else flags.push('-O2', '-g0');
const b = blas();
const linkLibs = ['-lpthread'];
if (b) {
  flags.push('-DKD_EMU_CBLAS_HEADER=<cblas.h>', '-I' + b.inc);
  linkLibs.unshift(b.lib);
} else {
  flags.push('-DKD_EMU_NO_BLAS=1');
  console.log('kindling: OpenBLAS not found; the emulated cuBLAS uses its own loops (slower; apt-get install libopenblas-dev)');
}

const objDir = path.join(root, 'build', `emu-obj${variant ? '-' + variant : ''}`);
const out = path.join(root, 'build', 'Release', `libkindling_cuda_emu${variant ? '_' + variant : ''}.so`);
fs.mkdirSync(objDir, { recursive: true });
fs.mkdirSync(path.dirname(out), { recursive: true });

const list = (dir, exts) => fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
  const p = path.join(dir, e.name);
  if (e.isDirectory()) return list(p, exts);
  return exts.some((x) => e.name.endsWith(x)) ? [p] : [];
});
const cudaDir = path.join(root, 'cuda');
const sources = [
  ...fs.readdirSync(cudaDir).filter((f) => f.endsWith('.cu')).map((f) => path.join(cudaDir, f)),
  ...fs.readdirSync(path.join(cudaDir, 'emulator')).filter((f) => f.endsWith('.cpp')).map((f) => path.join(cudaDir, 'emulator', f)),
];
const headers = [...list(cudaDir, ['.h', '.cuh', '.c']), ...list(path.join(root, 'src', 'core'), ['.h'])];
const newestHeader = Math.max(...headers.map((h) => fs.statSync(h).mtimeMs), fs.statSync(__filename).mtimeMs);

function compile(src) {
  const obj = path.join(objDir, path.relative(cudaDir, src).replace(/[\/]/g, '-').replace(/\.(cu|cpp)$/, '.o'));
  if (fs.existsSync(obj)) {
    const t = fs.statSync(obj).mtimeMs;
    if (t > fs.statSync(src).mtimeMs && t > newestHeader) return Promise.resolve(obj);
  }
  console.log(`kindling: ${cxx} (emulated GPU) ${path.relative(root, src)}`);
  return new Promise((resolve, reject) => {
    const p = spawn(cxx, [...flags, '-c', src, '-o', obj], { stdio: 'inherit', cwd: root });
    p.on('error', reject);
    p.on('exit', (code) => (code === 0 ? resolve(obj) : reject(new Error(`${cxx} failed on ${src}`))));
  });
}

async function main() {
  const jobs = Math.max(1, Number(process.env.KINDLING_JOBS) || os.availableParallelism?.() || os.cpus().length);
  const queue = [...sources];
  const objs = [];
  await Promise.all(Array.from({ length: jobs }, async () => {
    while (queue.length) objs.push(await compile(queue.shift()));
  }));
  const linkFlags = variant === 'asan' ? ['-fsanitize=address,undefined'] : variant === 'cov' ? ['--coverage'] : [];
  await new Promise((resolve, reject) => {
    const p = spawn(cxx, ['-shared', ...linkFlags, '-o', out, ...objs.sort(), ...linkLibs], { stdio: 'inherit', cwd: root });
    p.on('error', reject);
    p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error('link failed'))));
  });
  console.log(`kindling: built ${path.relative(root, out)} (the emulated GPU; use it with KINDLING_CUDA=emulate)`);
  // The emulator's own test program (test/cuda_emulator.test.js runs it): the runtime's objects
  // and the .cu files of cuda/emulator/test/, without kindling's kernels (but with the launch
  // observer that KD_LAUNCH reports to).
  const testDir = path.join(cudaDir, 'emulator', 'test');
  const selftest = [];
  for (const f of fs.readdirSync(testDir).filter((x) => x.endsWith('.cu')).sort())
    selftest.push(await compile(path.join(testDir, f)));
  const runtimeObjs = objs.filter((o) => path.basename(o).startsWith('emulator-') || path.basename(o) === 'launch_observer.o');
  const exe = path.join(root, 'build', 'Release', `kd_emu_selftest${variant ? '_' + variant : ''}`);
  await new Promise((resolve, reject) => {
    const p = spawn(cxx, [...linkFlags, '-o', exe, ...selftest, ...runtimeObjs, ...linkLibs], { stdio: 'inherit', cwd: root });
    p.on('error', reject);
    p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error('linking the self-test failed'))));
  });
}

main().catch((e) => {
  console.error(`kindling: ${e.message}`);
  process.exit(1);
});
