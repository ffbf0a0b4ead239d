// native.js - the native limit programs (bench/native/*.c): compiled with gcc into
// bench/out/bin/ on first use (and again when the source changes), then run with the bench's
// thread count. Each returns {error} instead of throwing when it cannot be built or run, so
// the bench prints the reason and goes on.
'use strict';
const { passiveOpenMP } = require('./load');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const root = path.resolve(__dirname, '..', '..');
const binDir = path.join(root, 'bench', 'out', 'bin');

function findBlas() {
  const run = (what) => spawnSync(process.execPath, [path.join(root, 'tools', 'find-blas.js'), what], { encoding: 'utf8' });
  const defines = run('defines');
  if (defines.status !== 0 || !defines.stdout.includes('KD_HAVE_CBLAS=1')) return null;
  return { include: run('include_dirs').stdout.trim(), libs: run('libraries').stdout.trim().split(/\s+/).filter(Boolean) };
}

const recipes = {
  stream: () => ({
    src: 'bench/native/stream.c',
    // OpenMP when the compiler has it; a serial build otherwise (reported as threads: 1).
    variants: [['-O3', '-march=native', '-fopenmp'], ['-O3', '-march=native']],
    libs: [],
  }),
  sgemm: () => {
    const blas = findBlas();
    if (!blas) return { error: 'OpenBLAS (cblas.h + libopenblas) not found by tools/find-blas.js' };
    return { src: 'bench/native/sgemm.c', variants: [['-O2', `-I${blas.include}`]], libs: blas.libs };
  },
};

const built = new Map();

/** Path of the compiled program, or {error}. */
function ensureBuilt(name) {
  if (built.has(name)) return built.get(name);
  const r = recipes[name]();
  let result;
  if (r.error) {
    result = { error: r.error };
  } else {
    const src = path.join(root, r.src);
    const bin = path.join(binDir, name);
    fs.mkdirSync(binDir, { recursive: true });
    const fresh = fs.existsSync(bin) && fs.statSync(bin).mtimeMs >= fs.statSync(src).mtimeMs;
    if (fresh) {
      result = { bin };
    } else {
      let lastErr = 'gcc not found';
      for (const flags of r.variants) {
        const c = spawnSync('gcc', [...flags, src, '-o', bin, ...r.libs, '-lm'], { encoding: 'utf8' });
        if (c.error) { lastErr = `gcc: ${c.error.message}`; break; }
        if (c.status === 0) { result = { bin }; break; }
        lastErr = `gcc failed: ${(c.stderr || '').trim().split('\n').slice(-3).join(' | ')}`;
      }
      if (!result) result = { error: lastErr };
    }
  }
  built.set(name, result);
  return result;
}

function runJson(name, args, env) {
  const b = ensureBuilt(name);
  if (b.error) return { error: b.error };
  const r = spawnSync(b.bin, args.map(String), { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 600e3 });
  if (r.error) return { error: `${name}: ${r.error.message}` };
  if (r.status !== 0) return { error: `${name} exited with ${r.status}: ${(r.stderr || '').trim()}` };
  try { return JSON.parse(r.stdout); } catch { return { error: `${name}: unreadable output ${r.stdout.slice(0, 200)}` }; }
}

/** STREAM copy/triad/add bandwidth: {copy: {gbps_median, ...}, triad, add} or {error}. */
function stream(threads, elements, repeats) {
  return runJson('stream', [elements, repeats], passiveOpenMP({ ...process.env, OMP_NUM_THREADS: String(threads), OMP_PROC_BIND: 'false' }));
}

/** cblas_sgemm on n x n float32 matrices: {blas, threads, results: [{n, median_s, ...}]} or {error}. */
function sgemm(threads, sizes, { minSampleS, repeats }) {
  return runJson('sgemm', [threads, minSampleS, repeats, ...sizes], { OPENBLAS_NUM_THREADS: String(threads) });
}

module.exports = { stream, sgemm, ensureBuilt };
