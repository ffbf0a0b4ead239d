#!/usr/bin/env node
// Builds kindling: the CPU addon (build/Release/kindling.node) with node-gyp, then,
// when nvcc is found, the CUDA backend (build/Release/libkindling_cuda.so), which the
// addon dlopens on first CUDA use. Works offline with an empty HOME: node-gyp gets
// tools/nodedir as its nodedir, and the Node-API headers come from node-api-headers.
//   node tools/build.js            build everything that can be built here
//   KINDLING_CUDA=0                skip the CUDA backend
//   KINDLING_CUDA_ARCHS=80,90      GPU architectures for nvcc (default 80,90)
//   CUDA_HOME=/usr/local/cuda      where to look for nvcc
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', cwd: root, ...opts });
  if (r.error) throw r.error;
  if (r.status !== 0) {
    console.error(`kindling: '${cmd} ${args.join(' ')}' failed with status ${r.status}`);
    process.exit(r.status || 1);
  }
}

function nodeGypCommand() {
  // npm sets npm_config_node_gyp to its bundled copy during lifecycle scripts.
  const candidates = [process.env.npm_config_node_gyp];
  try { candidates.push(require.resolve('node-gyp/bin/node-gyp.js')); } catch { /* not installed */ }
  const npmDir = path.join(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm');
  candidates.push(path.join(npmDir, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'));
  for (const c of candidates) if (c && fs.existsSync(c)) return c;
  console.error('kindling: node-gyp not found (it ships with npm; or `npm install node-gyp`)');
  process.exit(1);
}

function buildAddon() {
  const gyp = nodeGypCommand();
  const nodedir = path.join(root, 'tools', 'nodedir');
  const env = { ...process.env };
  // Never let a user's npmrc or environment point node-gyp at another nodedir.
  delete env.npm_config_nodedir;
  delete env.NPM_CONFIG_NODEDIR;
  run(process.execPath, [gyp, 'rebuild', `--nodedir=${nodedir}`, `--jobs=max`], { env });
}

function findNvcc() {
  if (process.env.KINDLING_CUDA === '0') return null;
  const homes = [process.env.CUDA_HOME, process.env.CUDA_PATH, '/usr/local/cuda'].filter(Boolean);
  for (const h of homes) {
    const nvcc = path.join(h, 'bin', 'nvcc');
    if (fs.existsSync(nvcc)) return { home: h, nvcc };
  }
  const which = spawnSync('sh', ['-c', 'command -v nvcc'], { encoding: 'utf8' });
  if (which.status === 0 && which.stdout.trim()) {
    const nvcc = which.stdout.trim();
    return { home: path.resolve(path.dirname(nvcc), '..'), nvcc };
  }
  return null;
}

function buildCuda() {
  const cuda = findNvcc();
  const out = path.join(root, 'build', 'Release', 'libkindling_cuda.so');
  if (!cuda) {
    console.log('kindling: nvcc not found; building without the CUDA backend (kd.cuda.isAvailable() will be false)');
    return;
  }
  const archs = (process.env.KINDLING_CUDA_ARCHS || '80,90').split(',').map((s) => s.trim()).filter(Boolean);
  const gencode = [];
  for (const a of archs) gencode.push(`-gencode=arch=compute_${a},code=sm_${a}`);
  // PTX for the newest arch so future GPUs can JIT it.
  gencode.push(`-gencode=arch=compute_${archs[archs.length - 1]},code=compute_${archs[archs.length - 1]}`);
  const sources = fs.readdirSync(path.join(root, 'cuda')).filter((f) => f.endsWith('.cu')).map((f) => path.join('cuda', f));
  const objDir = path.join(root, 'build', 'cuda-obj');
  fs.mkdirSync(objDir, { recursive: true });
  const common = ['-O3', '-std=c++17', '-Xcompiler', '-fPIC', '-Xcompiler', '-fvisibility=hidden',
    '-Isrc', '-Icuda', ...gencode];
  const objs = [];
  for (const src of sources) {
    const obj = path.join(objDir, path.basename(src, '.cu') + '.o');
    console.log(`kindling: nvcc ${src}`);
    run(cuda.nvcc, [...common, '-c', src, '-o', obj]);
    objs.push(obj);
  }
  run(cuda.nvcc, ['-shared', ...gencode, '-o', out, ...objs, '-cudart', 'static',
    `-L${path.join(cuda.home, 'lib64')}`, '-lcublas', '-Xlinker', `-rpath=${path.join(cuda.home, 'lib64')}`]);
  console.log(`kindling: built ${path.relative(root, out)} for sm_${archs.join(', sm_')}`);
}

buildAddon();
buildCuda();
