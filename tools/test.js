#!/usr/bin/env node
// test.js - `npm test`: the mocha suite, then the type check of the public API
// (tsc -p test/types). Both always run, so a failing unit test never hides a type error;
// the exit status is non-zero when either fails. Arguments go to mocha:
//   npm test -- --grep matmul        node tools/test.js test/data.test.js
'use strict';
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const bin = (pkg, file) => path.join(path.dirname(require.resolve(`${pkg}/package.json`, { paths: [root] })), 'bin', file);

const steps = [
  { name: 'mocha', args: [bin('mocha', 'mocha.js'), ...process.argv.slice(2)] },
  { name: 'tsc -p test/types', args: [bin('typescript', 'tsc'), '-p', path.join('test', 'types')] },
];

const outcomes = steps.map((step) => {
  const r = spawnSync(process.execPath, step.args, { cwd: root, stdio: 'inherit' });
  const ok = !r.error && r.status === 0;
  if (!ok) process.exitCode = 1;
  return `${step.name} ${ok ? 'passed' : `failed (${r.error ? r.error.message : r.signal || `exit status ${r.status}`})`}`;
});
console.log(`npm test: ${outcomes.join('; ')}`);
