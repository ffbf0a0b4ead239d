// tfjs.js - the TensorFlow.js peer (CPU backend, pure JS): installed on demand into a cache
// folder (bench/.cache/tfjs, or $KINDLING_BENCH_CACHE/tfjs; git-ignored) with
//   npm install --prefix <cache> @tensorflow/tfjs --no-audit --no-fund
// never a dependency of kindling. Then bench/peers/tfjs_peer.js measures the cases in a child
// process (same timing rule, asked one case at a time), so tfjs stays out of kindling's process.
// Every failure comes back as {error} for the bench to print and skip.
'use strict';
const path = require('node:path');
const { LinePeer } = require('./peer');
const { ensurePackage, cacheRoot } = require('./npm_cache');

const cacheDir = path.join(cacheRoot, 'tfjs');
const peerScript = path.join(__dirname, '..', 'peers', 'tfjs_peer.js');

/** Installs tfjs into the cache when it is not there: {dir, version, installed} or {error}. */
const ensureTfjs = (log = () => {}) => ensurePackage('@tensorflow/tfjs', 'tfjs', log);

/**
 * Installs tfjs if needed and starts bench/peers/tfjs_peer.js (a JSON-lines server). capS: a size
 * is not run once a smaller size of the same case took longer than capS per call (pure-JS matmul
 * 4096 would take hours).
 * @returns {Promise<{peer: LinePeer, info: {tfjs, backend, threads: 1, installed_now}} | {error: string}>}
 */
async function startTfjs({ capS }, log) {
  const t = ensureTfjs(log);
  if (t.error) return t;
  const peer = new LinePeer(path.basename(peerScript), process.execPath, [peerScript], process.env);
  const hello = await peer.request({ dir: t.dir, capS });
  if (hello.error) return { error: hello.error };
  return { peer, info: { installed_now: t.installed, ...hello } };
}

module.exports = { ensureTfjs, startTfjs, cacheDir };
