#!/usr/bin/env node
// pack-smoke.js - kindling as a user gets it: `npm pack`, then `npm install <tarball>` into an
// empty app with an empty HOME and no npm settings from the caller (KINDLING_CUDA=0, so no nvcc;
// node-gyp's dist-url points nowhere, so a build that needed to download Node headers fails),
// then checks that the installed package keeps nothing of build/ but the files that run, and
// runs three smoke programs from the app, each computing a tensor op and checking its value:
// CommonJS (require), ES module (namespace, default and named imports) and strict TypeScript
// (type-checked with `tsc --strict` by the project's own typescript, then run).
// Needs the npm registry for kindling's dependencies. Run by .ci/run after `npm test`.
//   node tools/pack-smoke.js [--keep]      --keep: leave the temporary app for inspection
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { RUNTIME_FILES } = require('./build');

const root = path.resolve(__dirname, '..');
const keep = process.argv.includes('--keep');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kindling-pack-smoke-'));
const home = path.join(tmp, 'home');
const app = path.join(tmp, 'app');
fs.mkdirSync(home);
fs.mkdirSync(app);

// A new user's environment: none of the caller's npm settings (npm run exports npm_config_*).
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
Object.assign(env, { HOME: home, KINDLING_CUDA: '0', npm_config_dist_url: 'http://127.0.0.1:9/no-header-downloads' });

function step(what, cmd, args, opts = {}) {
  console.log(`pack-smoke: ${what}`);
  const r = spawnSync(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', maxBuffer: 64 << 20, ...opts });
  if (r.error || r.status !== 0) {
    process.stdout.write(r.stdout || '');
    process.stderr.write(r.stderr || '');
    throw new Error(`${what}: ${r.error ? r.error.message : `'${[cmd, ...args].join(' ')}' exited with status ${r.status}`}`);
  }
  return r.stdout;
}

/** Every file under dir, relative, sorted. */
function listFiles(dir) {
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => !e.isDirectory())
    .map((e) => path.relative(dir, path.join(e.parentPath || e.path, e.name))).sort();
}

const SMOKE = {
  'smoke.cjs': `
const assert = require('node:assert/strict');
const kd = require('kindling');
const y = kd.tensor([[1, 2], [3, 4]]).matmul(kd.tensor([[1], [10]]));
assert.deepEqual(y.arraySync(), [[21], [43]]);
assert.equal(kd.noGrad(() => kd.ones([3]).requiresGrad_().mul(2)).requiresGrad, false);
console.log('CommonJS: ok');
`,
  'smoke.mjs': `
import assert from 'node:assert/strict';
import * as kd from 'kindling';
import kdDefault from 'kindling';
import { tensor, tidy, noGrad } from 'kindling';
const s = tidy(() => tensor([1.5, 2.5, 3]).mul(2).sum().item());
assert.equal(s, 14);
assert.equal(noGrad(() => kd.ones([2]).requiresGrad_().add(1)).requiresGrad, false);
assert.equal(kdDefault.zeros, kd.zeros);
console.log('ES module: ok');
`,
  'smoke-ts.mts': `
import * as kd from 'kindling';
import { tensor, type Tensor, type DType } from 'kindling';
const a: Tensor = tensor([[1, 2], [3, 4]], { dtype: 'float64' });
const dtype: DType = a.dtype;
const total: number = kd.tidy(() => a.matmul(a).sum().item());
if (total !== 54 || dtype !== 'float64') throw new Error(\`TypeScript: expected 54 float64, got \${total} \${dtype}\`);
const grads: boolean = kd.isGradEnabled();
console.log(\`TypeScript: ok (grad mode \${grads})\`);
`,
};

let ok = false;
try {
  const packed = JSON.parse(step('npm pack', 'npm', ['pack', '--json', '--pack-destination', tmp], { cwd: root }));
  const tarball = path.join(tmp, packed[0].filename);
  console.log(`pack-smoke: ${packed[0].filename}: ${packed[0].entryCount} files, ${(packed[0].size / 1024).toFixed(0)} KiB`);

  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'kindling-pack-smoke', version: '1.0.0', private: true }, null, 2));
  step('npm install <tarball> (builds the addon)', 'npm', ['install', '--no-audit', '--no-fund', tarball], { cwd: app });

  const pkg = path.join(app, 'node_modules', 'kindling');
  const left = listFiles(path.join(pkg, 'build')).filter((f) => !RUNTIME_FILES.includes(f));
  if (left.length) throw new Error(`build intermediates left in the installed package: ${left.slice(0, 10).join(', ')}${left.length > 10 ? ', ...' : ''}`);
  if (!fs.existsSync(path.join(pkg, 'build', 'Release', 'kindling.node'))) throw new Error('no build/Release/kindling.node in the installed package');
  if (fs.existsSync(path.join(home, '.cache', 'node-gyp'))) throw new Error('node-gyp downloaded Node headers during the install');

  for (const [name, src] of Object.entries(SMOKE)) fs.writeFileSync(path.join(app, name), src);
  process.stdout.write(step('CommonJS smoke', process.execPath, ['smoke.cjs'], { cwd: app }));
  process.stdout.write(step('ES module smoke', process.execPath, ['smoke.mjs'], { cwd: app }));
  // The declarations reference Node's types; a TypeScript user has @types/node: the project's.
  step('tsc --strict smoke-ts.mts', process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '--strict',
    '--noEmitOnError', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext',
    '--typeRoots', path.join(root, 'node_modules', '@types'), '--types', 'node', '--outDir', 'out', 'smoke-ts.mts'], { cwd: app });
  process.stdout.write(step('TypeScript smoke', process.execPath, [path.join('out', 'smoke-ts.mjs')], { cwd: app }));
  ok = true;
} catch (e) {
  console.error(`pack-smoke: FAILED: ${e.message}`);
  process.exitCode = 1;
} finally {
  if (keep) console.log(`pack-smoke: kept ${tmp}`);
  else fs.rmSync(tmp, { recursive: true, force: true });
}
if (ok) console.log('pack-smoke: ok');
