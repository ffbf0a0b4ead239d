// npm_cache.js - installs an npm package that a bench peer needs, on first use, into a cache
// folder (bench/.cache/<dir>, or $KINDLING_BENCH_CACHE/<dir>; git-ignored) with
//   npm install --prefix <cache> <package> --no-audit --no-fund
// never a dependency of kindling. Used by the tfjs peer (bench/lib/tfjs.js) and the
// onnxruntime-node comparison (bench/vision_ort.js).
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const cacheRoot = process.env.KINDLING_BENCH_CACHE || path.join(__dirname, '..', '.cache');
const lastLines = (s, n = 2) => String(s || '').trim().split('\n').filter(Boolean).slice(-n).join(' | ');

function writableDir(dir) {
  try { fs.accessSync(dir, fs.constants.W_OK); return fs.statSync(dir).isDirectory(); } catch { return false; }
}

/**
 * Installs `pkg` into cacheRoot/dir when it is not there (extraEnv: for its install script).
 * @returns {{dir: string, version: string, installed: boolean} | {error: string}}
 */
function ensurePackage(pkg, dir, log = () => {}, extraEnv = {}) {
  const cacheDir = path.join(cacheRoot, dir);
  const pkgJson = path.join(cacheDir, 'node_modules', ...pkg.split('/'), 'package.json');
  const version = () => JSON.parse(fs.readFileSync(pkgJson, 'utf8')).version;
  try { return { dir: cacheDir, version: version(), installed: false }; } catch { /* not installed yet */ }
  try { fs.mkdirSync(cacheDir, { recursive: true }); } catch (e) { return { error: `cannot create ${cacheDir}: ${e.message}` }; }
  // npm needs a HOME and a cache it can write: a throwaway one, so an empty or read-only HOME works.
  const npmCache = fs.mkdtempSync(path.join(os.tmpdir(), 'kindling-bench-npm-'));
  const env = { ...process.env, ...extraEnv, npm_config_cache: npmCache, npm_config_update_notifier: 'false',
    npm_config_fund: 'false', npm_config_audit: 'false' };
  if (!env.HOME || !writableDir(env.HOME)) env.HOME = npmCache;
  const rel = path.relative(process.cwd(), cacheDir);
  log(`installing ${pkg} into ${rel && !rel.startsWith('..') ? rel : cacheDir} (once) ... `);
  const args = ['install', '--prefix', cacheDir, pkg, '--no-audit', '--no-fund', '--loglevel=error'];
  const r = spawnSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', args, { env, encoding: 'utf8', timeout: 300e3 });
  fs.rmSync(npmCache, { recursive: true, force: true });
  if (r.error) return { error: `npm install ${pkg}: ${r.error.code === 'ENOENT' ? 'npm not found on PATH' : r.error.code || r.error.message}` };
  if (r.status !== 0) return { error: `npm install ${pkg} failed (${r.status}): ${lastLines(r.stderr)}` };
  try { return { dir: cacheDir, version: version(), installed: true }; } catch {
    return { error: `npm install ${pkg} left no ${path.relative(cacheDir, pkgJson)}` };
  }
}

module.exports = { ensurePackage, cacheRoot };
