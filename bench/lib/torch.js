// torch.js - the PyTorch peer: starts bench/peers/torch_peer.py once per bench run (a JSON-lines
// server), with the bench's thread count and device ('cpu' or 'cuda'); the bench then asks it
// for one (case, size) at a time, right after timing kindling on it. Its OpenMP threads wait
// passively (OMP_WAIT_POLICY=PASSIVE, Note [Passive OpenMP peers] in bench/lib/load.js).
'use strict';
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { LinePeer } = require('./peer');
const { passiveOpenMP } = require('./load');

const script = path.join(__dirname, '..', 'peers', 'torch_peer.py');

/** The Python to use: KINDLING_BENCH_PYTHON, else /usr/bin/python3, else python3 on PATH. */
function pythonCandidates() {
  if (process.env.KINDLING_BENCH_PYTHON) return [process.env.KINDLING_BENCH_PYTHON];
  return ['/usr/bin/python3', 'python3'];
}

/**
 * @returns {Promise<{peer: LinePeer, info: {torch, threads, device, gpu?, python}} | {error: string}>}
 */
async function startTorch({ threads, device = 'cpu' }) {
  let lastErr = 'no python3 found';
  for (const py of pythonCandidates()) {
    const probe = spawnSync(py, ['-c', 'import torch'], { encoding: 'utf8' });
    if (probe.error) { lastErr = `${py}: ${probe.error.code || probe.error.message}`; continue; }
    if (probe.status !== 0) { lastErr = `${py}: cannot import torch`; continue; }
    // Idle OpenMP threads wait passively: Note [Passive OpenMP peers] in bench/lib/load.js
    const env = passiveOpenMP({ ...process.env, OMP_NUM_THREADS: String(threads), MKL_NUM_THREADS: String(threads),
      OPENBLAS_NUM_THREADS: String(threads) });
    const peer = new LinePeer(path.basename(script), py, [script], env);
    const hello = await peer.request({ threads, device });
    if (hello.error) return { error: hello.error };
    return { peer, info: { python: py, ...hello } };
  }
  return { error: lastErr };
}

module.exports = { startTorch };
