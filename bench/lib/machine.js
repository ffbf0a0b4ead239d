// machine.js - what the bench ran on: CPU model, cores, caches, memory, software versions.
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const { spawnSync } = require('node:child_process');

function readFirst(file) {
  try { return fs.readFileSync(file, 'utf8').trim(); } catch { return null; }
}

/** Size in bytes of the last-level cache of CPU 0 (null when unknown). */
function llcBytes() {
  let best = null;
  for (let i = 0; i < 8; i++) {
    const size = readFirst(`/sys/devices/system/cpu/cpu0/cache/index${i}/size`);
    if (!size) continue;
    const m = /^(\d+)([KMG]?)/.exec(size);
    if (!m) continue;
    const bytes = Number(m[1]) * { '': 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3 }[m[2]];
    if (best === null || bytes > best) best = bytes;
  }
  return best;
}

function cpuInfo() {
  const text = readFirst('/proc/cpuinfo') || '';
  const model = (/^model name\s*:\s*(.*)$/m.exec(text) || [])[1] || (os.cpus()[0] || {}).model || 'unknown';
  const flags = ((/^flags\s*:\s*(.*)$/m.exec(text) || [])[1] || '').split(/\s+/);
  const simd = ['avx512f', 'avx512_bf16', 'avx2', 'fma', 'f16c', 'neon', 'asimd'].filter((f) => flags.includes(f));
  const physical = new Set();
  for (const block of text.split(/\n\n/)) {
    const p = (/^physical id\s*:\s*(\d+)/m.exec(block) || [])[1];
    const c = (/^core id\s*:\s*(\d+)/m.exec(block) || [])[1];
    if (p !== undefined && c !== undefined) physical.add(`${p}:${c}`);
  }
  return { model, logicalCpus: os.cpus().length, physicalCores: physical.size || null, simd };
}

function gitCommit(root) {
  const r = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) return null;
  // bench/RESULTS.md is what the bench writes: editing it does not change what was measured
  const dirty = spawnSync('git', ['status', '--porcelain', '--untracked-files=no', '--', '.', ':!bench/RESULTS.md'],
    { cwd: root, encoding: 'utf8' });
  return r.stdout.trim() + (dirty.status === 0 && dirty.stdout.trim() ? '+dirty' : '');
}

function describeMachine(root) {
  const cpu = cpuInfo();
  return {
    cpu: cpu.model,
    logicalCpus: cpu.logicalCpus,
    physicalCores: cpu.physicalCores,
    simd: cpu.simd,
    llcBytes: llcBytes(),
    memoryBytes: os.totalmem(),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    loadAverage: os.loadavg(),
    commit: gitCommit(root),
  };
}

module.exports = { describeMachine, llcBytes };
