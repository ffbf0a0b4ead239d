// torch.js - the PyTorch peer: runs bench/peers/torch_peer.py once per bench run with every
// (case, size) that has a PyTorch version, with the same timing rule and thread count, on the
// same device ('cpu' or 'cuda').
'use strict';
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const script = path.join(__dirname, '..', 'peers', 'torch_peer.py');

/** The Python to use: KINDLING_BENCH_PYTHON, else /usr/bin/python3, else python3 on PATH. */
function pythonCandidates() {
  if (process.env.KINDLING_BENCH_PYTHON) return [process.env.KINDLING_BENCH_PYTHON];
  return ['/usr/bin/python3', 'python3'];
}

/**
 * @param {{name: string, size: number}[]} cases
 * @returns {{torch: string, threads: number, python: string, results: object[]} | {error: string}}
 */
function runTorch(cases, { threads, device = 'cpu', warmupS, minSampleS, repeats }) {
  const request = JSON.stringify({ threads, device, warmup_s: warmupS, min_sample_s: minSampleS, repeats, cases });
  let lastErr = 'no python3 found';
  for (const py of pythonCandidates()) {
    const probe = spawnSync(py, ['-c', 'import torch'], { encoding: 'utf8' });
    if (probe.error) { lastErr = `${py}: ${probe.error.code || probe.error.message}`; continue; }
    if (probe.status !== 0) { lastErr = `${py}: cannot import torch`; continue; }
    const env = { ...process.env, OMP_NUM_THREADS: String(threads), MKL_NUM_THREADS: String(threads),
      OPENBLAS_NUM_THREADS: String(threads) };
    const r = spawnSync(py, [script], { input: request, encoding: 'utf8', env, timeout: 1800e3, maxBuffer: 64 << 20 });
    if (r.error) return { error: `${py} ${path.basename(script)}: ${r.error.message}` };
    if (r.status !== 0) return { error: `${path.basename(script)} failed: ${(r.stderr || '').trim().split('\n').slice(-2).join(' | ')}` };
    try {
      return { python: py, ...JSON.parse(r.stdout) };
    } catch {
      return { error: `${path.basename(script)}: unreadable output` };
    }
  }
  return { error: lastErr };
}

module.exports = { runTorch };
