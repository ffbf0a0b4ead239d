// cpp_extension.js - kd.utils.cppExtension.load({ name, sources, extraCflags, extraCudaCflags }):
// compiles C sources (and .cu CUDA sources) written against include/kindling.h into a shared
// object, cached by the hash of what goes into it, in $KINDLING_EXTENSIONS_DIR or
// ~/.cache/kindling/extensions, loads it and makes the ops it defines callable as
// kd.ops.<namespace>.<name> (as torch.utils.cpp_extension.load). C sources go to the system C
// compiler ($CC, else cc); .cu sources to nvcc ($CUDA_HOME, $CUDA_PATH or /usr/local/cuda) for the
// architectures kindling's CUDA library is built for, or, with KINDLING_CUDA=emulate, to the host
// C++ compiler against cuda/emulator and linked to the emulated GPU kindling runs on.
// Whatever goes wrong while building (a cache dir that cannot be made or written, a source that
// cannot be read, a compiler error) is a KindlingError with code KD_BUILD_FAILED. Sources reach
// the compilers as absolute paths, so a name starting with '-' is never read as an option.
'use strict';

const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { KindlingError, typeError } = require('./errors');
const { chooseBinary, BUILD_FILE } = require('./binary');
const { withFsErrors, makeDirs } = require('./files');

const ROOT = path.join(__dirname, '..');
const INCLUDE_DIR = path.join(ROOT, 'include');
const EMULATOR_INCLUDE_DIR = path.join(ROOT, 'cuda', 'emulator', 'include');
const EMULATOR_LIBRARY = 'libkindling_cuda_emu.so';

/** nvcc and its toolkit: $CUDA_HOME, $CUDA_PATH, /usr/local/cuda, else nvcc on the PATH; null if none. */
function findNvcc() {
  for (const home of [process.env.CUDA_HOME, process.env.CUDA_PATH, '/usr/local/cuda'].filter(Boolean)) {
    const nvcc = path.join(home, 'bin', 'nvcc');
    if (fs.existsSync(nvcc)) return { home, nvcc };
  }
  const which = spawnSync('sh', ['-c', 'command -v nvcc'], { encoding: 'utf8' });
  const nvcc = which.status === 0 ? which.stdout.trim() : '';
  return nvcc ? { home: path.resolve(path.dirname(nvcc), '..'), nvcc } : null;
}

/** nvcc's -gencode flags for the architectures of kindling's CUDA library (tools/build.js):
 * KINDLING_CUDA_ARCHS (default 80,90), a cubin per arch and PTX for the newest. */
function gencodeFlags() {
  const archs = (process.env.KINDLING_CUDA_ARCHS || '80,90').split(',').map((s) => s.trim()).filter(Boolean);
  const last = archs[archs.length - 1];
  return [...archs.map((a) => `-gencode=arch=compute_${a},code=sm_${a}`), `-gencode=arch=compute_${last},code=compute_${last}`];
}

/** The emulated GPU's library that kindling loads (src/cuda_bridge/bridge.c looks in the same places). */
function emulatorLibrary() {
  if (process.env.KINDLING_CUDA_LIBRARY) return process.env.KINDLING_CUDA_LIBRARY;
  const dirs = [path.dirname(chooseBinary().file), path.dirname(BUILD_FILE)];
  const found = dirs.map((d) => path.join(d, EMULATOR_LIBRARY)).find((f) => fs.existsSync(f));
  if (!found) {
    throw new KindlingError('cppExtension.load: KINDLING_CUDA=emulate, but the emulated GPU is not built (run `npm run build:emulator`)',
      'KD_NOT_SUPPORTED');
  }
  return found;
}

/** How .cu sources are built: { kind: 'nvcc', nvcc, home } or { kind: 'emulate', cxx, library }. */
function cudaToolchain() {
  if (process.env.KINDLING_CUDA === 'emulate') return { kind: 'emulate', cxx: process.env.CXX || 'g++', library: path.resolve(emulatorLibrary()) };
  const nvcc = findNvcc();
  if (!nvcc) {
    throw new KindlingError('cppExtension.load: .cu sources need nvcc (set CUDA_HOME to the CUDA toolkit), '
      + 'or KINDLING_CUDA=emulate to build them for the emulated GPU', 'KD_NOT_SUPPORTED');
  }
  return { kind: 'nvcc', ...nvcc };
}

// The compilers' environment: this process's, without sanitizer runtimes in LD_PRELOAD (a Node
// run under ASan/UBSan preloads them; nvcc's own tools crash with them loaded).
function compilerEnv() {
  const pre = process.env.LD_PRELOAD;
  if (!pre) return process.env;
  const kept = pre.split(/[:\s]+/).filter((p) => p && !/lib(asan|ubsan|tsan|lsan)[^/]*$/.test(p));
  const env = { ...process.env };
  if (kept.length) env.LD_PRELOAD = kept.join(':');
  else delete env.LD_PRELOAD;
  return env;
}

// file-system failures while building are KD_BUILD_FAILED, saying what was being done
const fsStep = (what, fn) => withFsErrors(what, fn, 'KD_BUILD_FAILED');
const buildFailed = (msg, cause) => {
  const err = new KindlingError(`cppExtension.load: ${msg}`, 'KD_BUILD_FAILED');
  if (cause) err.cause = cause;
  return err;
};

function run(name, cmd, args, verbose) {
  if (verbose) process.stderr.write(`kindling: ${cmd} ${args.join(' ')}\n`);
  const r = spawnSync(cmd, args, { encoding: 'utf8', env: compilerEnv() });
  if (r.error || r.status !== 0) {
    const why = r.error ? r.error.message : `${r.stdout}${r.stderr}`.trim();
    throw buildFailed(`compiling '${name}' failed:\n${why}`, r.error);
  }
}

/** Compiles sources into the shared object out: C sources alone in one compiler call; with .cu
 * sources, each source to an object, linked by nvcc (or the host C++ compiler against the emulated
 * GPU's library). */
function compile({ name, sources, extraCflags, extraCudaCflags, verbose }, cuda, out) {
  const cc = process.env.CC || 'cc';
  const cflags = ['-fPIC', '-O2', '-std=gnu11', `-I${INCLUDE_DIR}`, ...extraCflags];
  if (!cuda) return run(name, cc, ['-shared', ...cflags, ...sources, '-o', out, '-lm'], verbose);
  const objDir = fsStep('cppExtension.load: cannot make a temporary dir in the cache dir', () => fs.mkdtempSync(`${out}.obj-`));
  try {
    const objs = sources.map((src, i) => {
      const obj = path.join(objDir, `${i}-${path.basename(src)}.o`);
      if (!src.endsWith('.cu')) run(name, cc, ['-c', ...cflags, src, '-o', obj], verbose);
      else if (cuda.kind === 'nvcc') {
        run(name, cuda.nvcc, ['-c', '-O3', '-std=c++17', '-Xcompiler', '-fPIC', `-I${INCLUDE_DIR}`, ...gencodeFlags(),
          ...extraCudaCflags, src, '-o', obj], verbose);
      } else {
        // As tools/build-emulator.js compiles kindling's own kernels: C++ with the emulated runtime
        // header included first, as nvcc includes cuda_runtime.h.
        run(name, cuda.cxx, ['-c', '-x', 'c++', '-std=c++17', '-fPIC', '-O2', '-include', 'cuda_runtime.h',
          `-I${EMULATOR_INCLUDE_DIR}`, `-I${INCLUDE_DIR}`, ...extraCudaCflags, src, '-o', obj], verbose);
      }
      return obj;
    });
    if (cuda.kind === 'nvcc') {
      run(name, cuda.nvcc, ['-shared', ...gencodeFlags(), ...objs, '-o', out, '-lm'], verbose);
    } else {
      // Linked to the library by its path, which the loader finds already loaded by kindling:
      // the extension's kernels run on the same emulated devices and streams.
      run(name, cuda.cxx, ['-shared', ...objs, cuda.library, '-o', out, '-lm', '-lpthread'], verbose);
    }
  } finally {
    fs.rmSync(objDir, { recursive: true, force: true });
  }
}

module.exports = function makeCppExtension(N, adopt) {
  const loaded = new Map(); // shared-object path -> the module object

  // absolute, so that the paths handed to the compilers cannot read as options
  function cacheDir() {
    return path.resolve(process.env.KINDLING_EXTENSIONS_DIR || path.join(os.homedir(), '.cache', 'kindling', 'extensions'));
  }
  const cacheDirName = (dir) => `the extension cache dir '${dir}'${process.env.KINDLING_EXTENSIONS_DIR ? ' ($KINDLING_EXTENSIONS_DIR)' : ''}`;

  function checkOptions({ name, sources, extraCflags = [], extraCudaCflags = [], verbose = false } = {}) {
    if (typeof name !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw typeError('cppExtension.load: name must be an identifier');
    if (!Array.isArray(sources) || sources.length === 0 || !sources.every((s) => typeof s === 'string')) {
      throw typeError('cppExtension.load: sources must be a non-empty array of file paths');
    }
    for (const [key, flags] of [['extraCflags', extraCflags], ['extraCudaCflags', extraCudaCflags]]) {
      if (!Array.isArray(flags) || !flags.every((s) => typeof s === 'string')) throw typeError(`cppExtension.load: ${key} must be an array of strings`);
    }
    return { name, sources: sources.map((src) => path.resolve(src)), extraCflags, extraCudaCflags, verbose };
  }

  /**
   * Compiles the extension into the cache unless it is there already; returns { path, built }
   * without loading it.
   */
  function build(options) {
    const opts = checkOptions(options);
    const cuda = opts.sources.some((s) => s.endsWith('.cu')) ? cudaToolchain() : null;
    const hash = crypto.createHash('sha256');
    hash.update(JSON.stringify({ extraCflags: opts.extraCflags, abi: 1 }));
    if (cuda) {
      // nvcc: the architectures; the emulated GPU: its runtime's header and the library linked to
      const target = cuda.kind === 'nvcc' ? gencodeFlags()
        : [fs.readFileSync(path.join(EMULATOR_INCLUDE_DIR, 'cuda_runtime.h'), 'utf8'), cuda.library];
      hash.update(JSON.stringify({ cuda: cuda.kind, target, extraCudaCflags: opts.extraCudaCflags }));
    }
    for (const h of ['kindling.h', 'kindling_cuda.h']) hash.update(fs.readFileSync(path.join(INCLUDE_DIR, h)));
    for (const src of opts.sources) hash.update(fsStep(`cppExtension.load: cannot read the source '${src}'`, () => fs.readFileSync(src)));
    const dir = cacheDir();
    const suffix = cuda && cuda.kind === 'emulate' ? '-emu' : '';
    const so = path.join(dir, `${opts.name}-${hash.digest('hex').slice(0, 20)}${suffix}.so`);
    if (fs.existsSync(so)) return { path: so, built: false };
    fsStep(`cppExtension.load: cannot create ${cacheDirName(dir)}`, () => makeDirs(dir));
    const tmp = `${so}.${process.pid}.tmp`;
    try {
      compile(opts, cuda, tmp);
      fsStep(`cppExtension.load: cannot write to ${cacheDirName(dir)}`, () => fs.renameSync(tmp, so)); // atomic: a concurrent load sees the whole file or none
    } catch (e) {
      try { fs.rmSync(tmp, { force: true }); } catch { /* the error that matters is e */ }
      throw e;
    }
    return { path: so, built: true };
  }

  /**
   * Compiles (or finds in the cache) and loads an extension; returns { name, path, built, ops }
   * where ops maps each op's name to its function (also kd.ops.<namespace>.<name>).
   */
  function load(options) {
    const { name } = checkOptions(options);
    const { path: so, built } = build(options);
    if (loaded.has(so)) return loaded.get(so);
    const ops = Object.create(null); // op names come from the extension: no prototype to reach
    for (const info of N.library.loadExtension(so)) ops[info.name.split('::')[1]] = adopt(info);
    const mod = Object.freeze({ name, path: so, built, ops: Object.freeze(ops) });
    loaded.set(so, mod);
    return mod;
  }

  return { load, build };
};
