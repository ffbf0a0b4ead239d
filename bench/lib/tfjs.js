// tfjs.js - the TensorFlow.js peer (CPU backend, pure JS): installed on demand into a cache
// folder (bench/.cache/tfjs, or $KINDLING_BENCH_CACHE/tfjs; git-ignored) with
//   npm install --prefix <cache> @tensorflow/tfjs --no-audit --no-fund
// never a dependency of kindling. Then bench/peers/tfjs_peer.js measures the cases in a child
// process (same timing rule, asked one case at a time), so tfjs stays out of kindling's process.
// Every failure comes back as {error} for the bench to print and skip.
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { LinePeer } = require('./peer');

const cacheRoot = process.env.KINDLING_BENCH_CACHE || path.join(__dirname, '..', '.cache');
const cacheDir = path.join(cacheRoot, 'tfjs');
const peerScript = path.join(__dirname, '..', 'peers', 'tfjs_peer.js');
const pkgJson = path.join(cacheDir, 'node_modules', '@tensorflow', 'tfjs', 'package.json');

const firstLines = (s, n = 2) => String(s || '').trim().split('\n').filter(Boolean).slice(-n).join(' | ');

function writableDir(dir) {
  try { fs.accessSync(dir, fs.constants.W_OK); return fs.statSync(dir).isDirectory(); } catch { return false; }
}

/** Installs tfjs into the cache when it is not there: {dir, version, installed} or {error}. */
function ensureTfjs(log = () => {}) {
  const version = () => JSON.parse(fs.readFileSync(pkgJson, 'utf8')).version;
  try { return { dir: cacheDir, version: version(), installed: false }; } catch { /* not installed yet */ }
  try { fs.mkdirSync(cacheDir, { recursive: true }); } catch (e) { return { error: `cannot create ${cacheDir}: ${e.message}` }; }
  // npm needs a HOME and a cache it can write: a throwaway one, so an empty or read-only HOME works.
  const npmCache = fs.mkdtempSync(path.join(os.tmpdir(), 'kindling-bench-npm-'));
  const env = { ...process.env, npm_config_cache: npmCache, npm_config_update_notifier: 'false',
    npm_config_fund: 'false', npm_config_audit: 'false' };
  if (!env.HOME || !writableDir(env.HOME)) env.HOME = npmCache;
  const rel = path.relative(process.cwd(), cacheDir);
  log(`installing @tensorflow/tfjs into ${rel && !rel.startsWith('..') ? rel : cacheDir} (once) ... `);
  const args = ['install', '--prefix', cacheDir, '@tensorflow/tfjs', '--no-audit', '--no-fund', '--loglevel=error'];
  const r = spawnSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', args, { env, encoding: 'utf8', timeout: 300e3 });
  fs.rmSync(npmCache, { recursive: true, force: true });
  if (r.error) return { error: `npm install @tensorflow/tfjs: ${r.error.code === 'ENOENT' ? 'npm not found on PATH' : r.error.code || r.error.message}` };
  if (r.status !== 0) return { error: `npm install @tensorflow/tfjs failed (${r.status}): ${firstLines(r.stderr)}` };
  try { return { dir: cacheDir, version: version(), installed: true }; } catch {
    return { error: `npm install @tensorflow/tfjs left no ${path.relative(cacheDir, pkgJson)}` };
  }
}

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
