#!/usr/bin/env node
// The package's install script (`npm install kindling`): nothing to compile when the package holds
// a prebuilt addon that fits this machine (lib/binary.js); a source build (tools/build.js)
// otherwise, or when asked for with `npm install --build-from-source` or
// KINDLING_BUILD_FROM_SOURCE=1. KINDLING_CUDA=emulate still builds the emulated GPU next to a
// prebuilt addon (build/Release/libkindling_cuda_emu.so, found by the CUDA bridge there).
'use strict';
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { findPrebuilt } = require('../lib/binary');

/** Why a source build is wanted ('' when the prebuilt binary is used). */
function sourceBuildReason(env = process.env) {
  const truthy = (v) => v !== undefined && v !== '' && v !== '0' && v !== 'false';
  if (truthy(env.KINDLING_BUILD_FROM_SOURCE)) return 'KINDLING_BUILD_FROM_SOURCE is set';
  // npm passes `--build-from-source` to scripts as npm_config_build_from_source
  if (truthy(env.npm_config_build_from_source)) return '--build-from-source was given';
  const pre = findPrebuilt();
  return pre.file ? '' : pre.why;
}

function runNode(script) {
  const r = spawnSync(process.execPath, [path.join(__dirname, script)], { stdio: 'inherit' });
  if (r.error) throw r.error;
  if (r.status !== 0) process.exit(r.status || 1);
}

function main() {
  const why = sourceBuildReason();
  if (why) {
    console.log(`kindling: building from source (${why})`);
    runNode('build.js');
    return;
  }
  console.log(`kindling: using the prebuilt binary for ${process.platform}-${process.arch} (npm install --build-from-source to compile it here)`);
  if (process.env.KINDLING_CUDA === 'emulate') {
    runNode('build-emulator.js');
    // as tools/build.js does: a dependency install keeps only the library of build/
    const { pruneBuild, isDependencyInstall } = require('./build');
    if (isDependencyInstall() && process.env.KINDLING_KEEP_BUILD !== '1') pruneBuild(path.join(__dirname, '..', 'build'));
  }
}

if (require.main === module) main();
module.exports = { sourceBuildReason };
