#!/usr/bin/env node
// pack-smoke.js - kindling as a user gets it: `npm pack`, then `npm install <tarball>` into an
// empty app with an empty HOME and no npm settings from the caller (KINDLING_CUDA=0, so no nvcc;
// node-gyp's dist-url points nowhere, so a build that needed to download Node headers fails),
// then checks that the installed package keeps nothing of build/ but the files that run, and
// runs three smoke programs from the app, each computing a tensor op and checking its value:
// CommonJS (require), ES module (namespace, default and named imports) and strict TypeScript
// (type-checked with `tsc --strict` by the project's own typescript, then run). The CommonJS one
// also times a 1024x1024 matmul (fails only when absurdly slow), trains a few steps, saves and
// loads safetensors and computes in a worker thread.
// --prebuilt: the prebuilt package instead (tools/prebuild.js, or --tarball=FILE): installed with
// a PATH holding only node and npm (no compiler, no make), timed; checks that nothing was compiled,
// that the prebuilt addon was loaded and links no libopenblas, and runs the CommonJS smoke again
// at each KINDLING_CPU_CAPABILITY this CPU has. --cuda-tarball=FILE installs the optional CUDA
// package too and checks the bridge finds its library; --cuda-library=FILE makes that package
// from FILE (tools/prebuild.js --cuda --cuda-library=FILE: e.g. the library a source build made).
// Needs the npm registry for kindling's dependencies. Run by .ci/run after `npm test`.
//   node tools/pack-smoke.js [--keep] [--prebuilt [--tarball=FILE] [--cuda-tarball=FILE | --cuda-library=FILE]]
//   --keep: leave the temporary app for inspection
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { RUNTIME_FILES } = require('./build');
const { CUDA_PACKAGE } = require('../lib/binary');

const root = path.resolve(__dirname, '..');
const keep = process.argv.includes('--keep');
const prebuilt = process.argv.includes('--prebuilt');
const argValue = (name) => { const a = process.argv.find((x) => x.startsWith(`--${name}=`)); return a ? path.resolve(a.slice(name.length + 3)) : null; };
const CAPABILITIES = ['default', 'avx2', 'avx512'];
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kindling-pack-smoke-'));
const home = path.join(tmp, 'home');
const app = path.join(tmp, 'app');
fs.mkdirSync(home);
fs.mkdirSync(app);

// A new user's environment: none of the caller's npm settings (npm run exports npm_config_*).
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
Object.assign(env, { HOME: home, KINDLING_CUDA: '0', npm_config_dist_url: 'http://127.0.0.1:9/no-header-downloads', npm_config_update_notifier: 'false' });
if (prebuilt) {
  // node, npm and sh (npm runs scripts with it) only: a machine without build tools
  const bin = path.join(tmp, 'bin');
  fs.mkdirSync(bin);
  fs.symlinkSync(process.execPath, path.join(bin, 'node'));
  fs.symlinkSync('/bin/sh', path.join(bin, 'sh'));
  const npm = spawnSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).stdout.trim();
  if (!npm) throw new Error('pack-smoke: npm is not on the PATH');
  fs.symlinkSync(fs.realpathSync(npm), path.join(bin, 'npm'));
  env.PATH = bin;
  delete env.KINDLING_CUDA;
  const tools = spawnSync('/bin/sh', ['-c', 'for t in cc gcc g++ make python3 node-gyp; do command -v $t; done'], { env, encoding: 'utf8' }).stdout.trim();
  if (tools) throw new Error(`pack-smoke: build tools on the PATH: ${tools}`);
}

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
const fs = require('node:fs');
const { Worker } = require('node:worker_threads');
const kd = require('kindling');
const y = kd.tensor([[1, 2], [3, 4]]).matmul(kd.tensor([[1], [10]]));
assert.deepEqual(y.arraySync(), [[21], [43]]);
assert.equal(kd.noGrad(() => kd.ones([3]).requiresGrad_().mul(2)).requiresGrad, false);
if (process.env.SMOKE_BINARY) assert.equal(kd.build.binary, process.env.SMOKE_BINARY);
if (process.env.KINDLING_CPU_CAPABILITY) assert.equal(kd.build.cpuCapability, process.env.KINDLING_CPU_CAPABILITY);
// 1024x1024 float32 matmul: checked against a float64 row, timed (best of 5)
kd.manualSeed(0);
const a = kd.randn([1024, 1024]), b = kd.randn([1024, 1024]);
let best = Infinity, c;
for (let i = 0; i < 5; i++) { const t0 = process.hrtime.bigint(); if (c) c.dispose(); c = a.matmul(b); best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e6); }
const row = kd.tidy(() => a.narrow(0, 7, 1).to('float64').matmul(b.to('float64')).sub(c.narrow(0, 7, 1).to('float64')).abs().max().item());
assert.ok(row < 1e-3, 'matmul row error ' + row);
// sane: OpenBLAS takes ~10-60 ms here, kindling's own kernels a few times that; seconds mean something is broken
assert.ok(best < 2000, 'a 1024x1024 matmul took ' + best.toFixed(0) + ' ms');
// a few training steps of a small regression: the loss falls
const X = kd.randn([64, 8]), wTrue = kd.randn([8, 1]), Y = X.matmul(wTrue);
const model = kd.tidy(() => new kd.nn.Sequential(new kd.nn.Linear(8, 16), new kd.nn.ReLU(), new kd.nn.Linear(16, 1)));
const opt = new kd.optim.Adam(model.parameters(), { lr: 0.01 });
const lossFn = new kd.nn.MSELoss();
const losses = [];
for (let i = 0; i < 30; i++) losses.push(kd.tidy(() => { opt.zeroGrad(); const l = lossFn(model(X), Y); l.backward(); opt.step(); return l.item(); }));
assert.ok(losses[29] < losses[0] * 0.7, 'training did not reduce the loss: ' + losses[0] + ' -> ' + losses[29]);
// safetensors save/load round trip
const file = 'smoke.safetensors';
kd.saveSync(model.stateDict(), file);
const back = kd.loadSync(file);
for (const [k, v] of Object.entries(model.stateDict())) assert.deepEqual(back[k].arraySync(), v.arraySync(), k);
fs.unlinkSync(file);
// a worker thread loads the addon and computes
new Worker("const kd = require('kindling'); require('node:worker_threads').parentPort.postMessage(kd.arange(5).sum().item());", { eval: true })
  .once('message', (v) => {
    assert.equal(v, 10);
    console.log('CommonJS: ok (' + kd.build.binary + ' addon, ' + kd.build.cpuCapability + ', matmul 1024 ' + best.toFixed(1) + ' ms, loss '
      + losses[0].toFixed(3) + ' -> ' + losses[29].toFixed(3) + ')');
  });
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

/** The source package (npm pack) or the prebuilt one (tools/prebuild.js, or --tarball). */
function packTarball() {
  if (!prebuilt) {
    const packed = JSON.parse(step('npm pack', 'npm', ['pack', '--json', '--pack-destination', tmp], { cwd: root }));
    console.log(`pack-smoke: ${packed[0].filename}: ${packed[0].entryCount} files, ${(packed[0].size / 1024).toFixed(0)} KiB`);
    return { tarball: path.join(tmp, packed[0].filename), cudaTarball: null };
  }
  let tarball = argValue('tarball');
  let cudaTarball = argValue('cuda-tarball');
  if (!tarball) {
    const out = path.join(tmp, 'dist');
    const cudaLibrary = argValue('cuda-library');
    const args = [`--out=${out}`, ...(cudaLibrary ? ['--cuda', `--cuda-library=${cudaLibrary}`] : [])];
    process.stdout.write(step(`npm run prebuilt -- ${args.join(' ')}`, process.execPath, [path.join(__dirname, 'prebuild.js'), ...args], { cwd: root, env: process.env }));
    tarball = path.join(out, fs.readdirSync(out).find((f) => /^kindling-\d.*\.tgz$/.test(f)));
    if (cudaLibrary) cudaTarball = path.join(out, fs.readdirSync(out).find((f) => f.startsWith(`${CUDA_PACKAGE}-`) && f.endsWith('.tgz')));
  }
  for (const t of [tarball, cudaTarball].filter(Boolean)) console.log(`pack-smoke: ${path.basename(t)}: ${(fs.statSync(t).size / 1048576).toFixed(1)} MiB`);
  return { tarball, cudaTarball };
}

/** The installed package holds the prebuilt addon, nothing compiled, no libopenblas needed. */
function checkPrebuiltInstall(pkg) {
  if (fs.existsSync(path.join(pkg, 'build'))) throw new Error(`the install compiled the addon (build/ exists): ${listFiles(path.join(pkg, 'build')).slice(0, 5).join(', ')}`);
  const addon = path.join(pkg, 'prebuilds', `${process.platform}-${process.arch}`, 'kindling.node');
  const ldd = spawnSync('ldd', [addon], { encoding: 'utf8' }).stdout || '';
  if (!ldd.trim()) throw new Error(`ldd ${addon} printed nothing`);
  if (/openblas|gfortran|quadmath|not found/.test(ldd)) throw new Error(`the prebuilt addon needs libraries of this system:\n${ldd}`);
  console.log(`pack-smoke: ldd kindling.node: ${ldd.trim().split('\n').map((l) => l.trim().split(' ')[0]).join(', ')}`);
  const manifest = JSON.parse(fs.readFileSync(path.join(pkg, 'package.json'), 'utf8'));
  if ((manifest.optionalDependencies || {})[CUDA_PACKAGE] !== manifest.version) {
    throw new Error(`the prebuilt package does not name ${CUDA_PACKAGE}@${manifest.version} as an optional dependency: ${JSON.stringify(manifest.optionalDependencies)}`);
  }
}

let ok = false;
try {
  const { tarball, cudaTarball } = packTarball();

  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'kindling-pack-smoke', version: '1.0.0', private: true }, null, 2));
  const t0 = Date.now();
  step(`npm install <tarball>${prebuilt ? ' (prebuilt, no compiler on the PATH)' : ' (builds the addon)'}`, 'npm',
    ['install', '--no-audit', '--no-fund', tarball, ...(cudaTarball ? [cudaTarball] : [])], { cwd: app });
  console.log(`pack-smoke: npm install took ${((Date.now() - t0) / 1000).toFixed(1)} s`);

  const pkg = path.join(app, 'node_modules', 'kindling');
  if (prebuilt) {
    checkPrebuiltInstall(pkg);
  } else {
    const left = listFiles(path.join(pkg, 'build')).filter((f) => !RUNTIME_FILES.includes(f));
    if (left.length) throw new Error(`build intermediates left in the installed package: ${left.slice(0, 10).join(', ')}${left.length > 10 ? ', ...' : ''}`);
    if (!fs.existsSync(path.join(pkg, 'build', 'Release', 'kindling.node'))) throw new Error('no build/Release/kindling.node in the installed package');
  }
  if (fs.existsSync(path.join(home, '.cache', 'node-gyp'))) throw new Error('node-gyp downloaded Node headers during the install');

  for (const [name, src] of Object.entries(SMOKE)) fs.writeFileSync(path.join(app, name), src);
  env.SMOKE_BINARY = prebuilt ? 'prebuilt' : 'build';
  process.stdout.write(step('CommonJS smoke', process.execPath, ['smoke.cjs'], { cwd: app }));
  if (prebuilt) {
    const best = JSON.parse(step('best CPU level', process.execPath, ['-p', "JSON.stringify(require('kindling').build.cpuCapability)"], { cwd: app }));
    for (const level of CAPABILITIES.slice(0, CAPABILITIES.indexOf(best) + 1)) {
      process.stdout.write(step(`CommonJS smoke, KINDLING_CPU_CAPABILITY=${level}`, process.execPath, ['smoke.cjs'],
        { cwd: app, env: { ...env, KINDLING_CPU_CAPABILITY: level } }));
    }
  }
  if (cudaTarball) {
    const script = "const kd = require('kindling'); console.log(JSON.stringify({ found: kd.build.cuda, reason: kd.cuda.isAvailable() ? '' : kd.cuda.unavailableReason() }))";
    const r = JSON.parse(step('the CUDA package is found', process.execPath, ['-e', script], { cwd: app }));
    if (!r.found) throw new Error(`kd.build.cuda is false with kindling-cuda-linux-x64 installed (${r.reason})`);
    console.log(`pack-smoke: CUDA library found in the optional package; ${r.reason ? `unavailable here: ${r.reason}` : 'available'}`);
  }
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
