// binary.js - which native addon this package runs: build/Release/kindling.node when a source
// build made one (a checkout, `npm install --build-from-source`, or a platform without a prebuilt
// binary), else the prebuilt prebuilds/<os>-<arch>/kindling.node when it fits this machine (os,
// arch, and a glibc at least as new as the one it was linked against, from its kindling.json).
// Used by lib/index.js (to load it) and tools/install.js (to skip the source build).
'use strict';

const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const BUILD_FILE = path.join(root, 'build', 'Release', 'kindling.node');
// The optional package holding the CUDA backend for this platform (libkindling_cuda.so).
const CUDA_PACKAGE = `kindling-cuda-${process.platform}-${process.arch}`;

function prebuiltDir(dir = root) {
  return path.join(dir, 'prebuilds', `${process.platform}-${process.arch}`);
}

/** The glibc this process runs with ('2.36'), or null (musl, or not Linux). */
function runtimeGlibc() {
  if (process.platform !== 'linux') return null;
  const header = process.report && process.report.getReport().header;
  return (header && header.glibcVersionRuntime) || null;
}

function versionAtLeast(have, need) {
  const a = have.split('.').map(Number);
  const b = need.split('.').map(Number);
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if ((a[i] || 0) !== (b[i] || 0)) return (a[i] || 0) > (b[i] || 0);
  }
  return true;
}

/** The prebuilt addon of dir's package for this machine: { file, manifest } when one fits,
 * { file: null, why } otherwise. */
function findPrebuilt(dir = root) {
  const where = prebuiltDir(dir);
  const manifestFile = path.join(where, 'kindling.json');
  if (!fs.existsSync(manifestFile)) return { file: null, why: `no prebuilt binary for ${process.platform}-${process.arch}` };
  const manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8'));
  if (manifest.libc === 'glibc') {
    const glibc = runtimeGlibc();
    if (!glibc) return { file: null, why: `the prebuilt ${process.platform}-${process.arch} binary needs glibc (this is not a glibc system)` };
    if (!versionAtLeast(glibc, manifest.glibc)) {
      return { file: null, why: `the prebuilt ${process.platform}-${process.arch} binary needs glibc ${manifest.glibc} or newer (this system has ${glibc})` };
    }
  }
  return { file: path.join(where, 'kindling.node'), manifest };
}

/** The addon to load: { file, source: 'build' | 'prebuilt', manifest }. */
function chooseBinary() {
  if (fs.existsSync(BUILD_FILE)) return { file: BUILD_FILE, source: 'build', manifest: null };
  const pre = findPrebuilt();
  if (pre.file) return { file: pre.file, source: 'prebuilt', manifest: pre.manifest };
  return { file: BUILD_FILE, source: 'build', manifest: null, why: pre.why };
}

/** Directories for the CUDA bridge to search after the addon's own: build/Release (a prebuilt
 * addon's emulated GPU is built there) and the optional CUDA package's folder, when installed. */
function cudaLibraryDirs(binary) {
  const dirs = [];
  if (binary.source === 'prebuilt') dirs.push(path.dirname(BUILD_FILE));
  try {
    dirs.push(path.dirname(require.resolve(`${CUDA_PACKAGE}/package.json`, { paths: [root] })));
  } catch { /* the optional package is not installed (or not for this platform) */ }
  return dirs;
}

module.exports = { chooseBinary, findPrebuilt, cudaLibraryDirs, runtimeGlibc, versionAtLeast, prebuiltDir, BUILD_FILE, CUDA_PACKAGE };
