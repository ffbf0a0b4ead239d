#!/usr/bin/env node
// test.js - `npm test`: the mocha suite, the type check of the public API (tsc -p test/types),
// and, when the emulated GPU is built (`npm run build:emulator`), the CUDA test files again with
// KINDLING_CUDA=emulate (test/emulated-gpu.mocharc.json), so every CUDA code path runs without a
// GPU. All steps always run, so a failing unit test never hides a type error; the exit status is
// non-zero when any fails. The emulated run exits when its tests are done ("exit": true): a
// safety net, so that a handle a test leaves open cannot keep the run waiting. Arguments go to the first mocha run (and skip
// the emulated one):
//   npm test -- --grep matmul        node tools/test.js test/data.test.js
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const bin = (pkg, file) => path.join(path.dirname(require.resolve(`${pkg}/package.json`, { paths: [root] })), 'bin', file);

const steps = [
  { name: 'mocha', args: [bin('mocha', 'mocha.js'), ...process.argv.slice(2)] },
  { name: 'tsc -p test/types', args: [bin('typescript', 'tsc'), '-p', path.join('test', 'types')] },
];
const emulator = path.join(root, 'build', 'Release', 'libkindling_cuda_emu.so');
if (process.argv.length <= 2 && fs.existsSync(emulator)) {
  steps.push({
    name: 'mocha on the emulated GPU',
    args: [bin('mocha', 'mocha.js'), '--config', path.join('test', 'emulated-gpu.mocharc.json')],
    env: { KINDLING_CUDA: 'emulate' },
  });
} else if (process.argv.length <= 2) {
  console.log('npm test: the emulated GPU is not built (npm run build:emulator), so the CUDA tests ran only as far as a machine without CUDA allows');
}

const outcomes = steps.map((step) => {
  const r = spawnSync(process.execPath, step.args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...step.env } });
  const ok = !r.error && r.status === 0;
  if (!ok) process.exitCode = 1;
  return `${step.name} ${ok ? 'passed' : `failed (${r.error ? r.error.message : r.signal || `exit status ${r.status}`})`}`;
});
console.log(`npm test: ${outcomes.join('; ')}`);
