// cpp_extension.js - kd.utils.cppExtension.load({ name, sources, extraCflags }): compiles C sources
// written against include/kindling.h with the system C compiler ($CC, else cc) into a shared object,
// cached by the hash of what goes into it (the sources, the flags, kindling.h), in
// $KINDLING_EXTENSIONS_DIR or ~/.cache/kindling/extensions, loads it and makes the ops it defines
// callable as kd.ops.<namespace>.<name> (as torch.utils.cpp_extension.load). .cu sources are not
// supported yet.
'use strict';

const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { KindlingError, typeError } = require('./errors');

const INCLUDE_DIR = path.join(__dirname, '..', 'include');

module.exports = function makeCppExtension(N, adopt) {
  const loaded = new Map(); // shared-object path -> the module object

  function cacheDir() {
    return process.env.KINDLING_EXTENSIONS_DIR || path.join(os.homedir(), '.cache', 'kindling', 'extensions');
  }

  /**
   * Compiles (or finds in the cache) and loads a C extension; returns { name, path, ops } where
   * ops maps each op's name to its function (also kd.ops.<namespace>.<name>).
   */
  function load({ name, sources, extraCflags = [], verbose = false } = {}) {
    if (typeof name !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw typeError('cppExtension.load: name must be an identifier');
    if (!Array.isArray(sources) || sources.length === 0 || !sources.every((s) => typeof s === 'string')) {
      throw typeError('cppExtension.load: sources must be a non-empty array of file paths');
    }
    if (!Array.isArray(extraCflags) || !extraCflags.every((s) => typeof s === 'string')) throw typeError('cppExtension.load: extraCflags must be an array of strings');
    const cu = sources.find((s) => s.endsWith('.cu'));
    if (cu) throw new KindlingError(`cppExtension.load: CUDA sources (${cu}) are not supported yet`, 'KD_NOT_SUPPORTED');
    const cc = process.env.CC || 'cc';
    const hash = crypto.createHash('sha256');
    hash.update(JSON.stringify({ extraCflags, abi: 1 }));
    hash.update(fs.readFileSync(path.join(INCLUDE_DIR, 'kindling.h')));
    for (const s of sources) hash.update(fs.readFileSync(s));
    const dir = cacheDir();
    const so = path.join(dir, `${name}-${hash.digest('hex').slice(0, 20)}.so`);
    if (loaded.has(so)) return loaded.get(so);
    let built = false;
    if (!fs.existsSync(so)) {
      fs.mkdirSync(dir, { recursive: true });
      const tmp = `${so}.${process.pid}.tmp`;
      const args = ['-shared', '-fPIC', '-O2', '-std=gnu11', `-I${INCLUDE_DIR}`, ...extraCflags, ...sources, '-o', tmp, '-lm'];
      if (verbose) process.stderr.write(`kindling: ${cc} ${args.join(' ')}\n`);
      const r = spawnSync(cc, args, { encoding: 'utf8' });
      if (r.error || r.status !== 0) {
        fs.rmSync(tmp, { force: true });
        const why = r.error ? r.error.message : r.stderr.trim();
        throw new KindlingError(`cppExtension.load: compiling '${name}' failed:\n${why}`, 'KD_BUILD_FAILED');
      }
      fs.renameSync(tmp, so); // atomic: a concurrent load sees the whole file or none
      built = true;
    }
    const ops = {};
    for (const info of N.library.loadExtension(so)) ops[info.name.split('::')[1]] = adopt(info);
    const mod = Object.freeze({ name, path: so, built, ops: Object.freeze(ops) });
    loaded.set(so, mod);
    return mod;
  }

  return { load };
};
