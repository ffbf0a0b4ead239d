#!/usr/bin/env node
// test-emulator-asan.js - `npm run test:emulator:asan`: the emulated GPU's self-test and the
// emulated CUDA mocha suite (test/emulated-gpu.mocharc.json) under AddressSanitizer and UBSan, so
// the out-of-bounds reads and writes, uses after free and undefined behaviour of the CUDA kernels,
// the emulator and the addon (which a GPU would hide) are reported. Builds, incrementally:
//   build/Release/libkindling_cuda_emu_asan.so, kd_emu_selftest_asan  (build-emulator.js --sanitize)
//   build/asan/Release/kindling.node  (the addon with -fsanitize=address,undefined; addon-variant.js)
//   build/Release/libkindling_cuda_emu.so  (the plain emulated GPU: test/cuda_emulator.test.js
//                                           runs only when it is built)
// Node itself is not instrumented: the ASan runtime is LD_PRELOADed and leak detection is off (a
// Node process does not free everything at exit). Every process (children of the tests too)
// writes its ASan reports to a log directory, UBSan's go to stderr (where a test that runs a child
// shows them when it fails); all are listed at the end, and the exit status is non-zero when a
// step failed or any report was found. The tests' own failures are reported as usual (the
// emulated suite's functional failures show up here too).
//   node tools/test-emulator-asan.js                 everything
//   node tools/test-emulator-asan.js --no-build      run only (the variants are built)
//   node tools/test-emulator-asan.js test/x.test.js  these test files instead of the emulated suite
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { root, buildEmulator, bin } = require('./addon-variant');
const { ASAN_ADDON, buildAsanAddon, sanitizerEnv, asanNodeEnv, step, summarize } = require('./sanitizers');

const release = path.join(root, 'build', 'Release');
const argv = process.argv.slice(2);
const noBuild = argv.includes('--no-build');
const files = argv.filter((a) => !a.startsWith('--'));

async function main() {
  const t0 = Date.now();
  let addon = ASAN_ADDON;
  if (!noBuild) {
    buildEmulator([]);
    buildEmulator(['--sanitize']);
    addon = buildAsanAddon();
  }
  const built = Date.now();
  for (const f of [addon, path.join(release, 'libkindling_cuda_emu_asan.so'), path.join(release, 'kd_emu_selftest_asan')])
    if (!fs.existsSync(f)) throw new Error(`${path.relative(root, f)} is not built (run without --no-build)`);

  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-asan-'));
  const results = [];
  if (!files.length) {
    // the self-test executable links the sanitizer runtimes itself
    for (const seed of ['1', '12345'])
      results.push(await step(`emulator self-test (seed ${seed})`, path.join(release, 'kd_emu_selftest_asan'), [],
        { ...sanitizerEnv(logDir, true), KINDLING_CUDA_EMU_DEVICES: '3', KINDLING_CUDA_EMU_SEED: seed }));
  }
  // --exit: mocha sometimes waits on after the last test (a native handle of the CUDA async
  // completion stays referenced); npm test shows that, this run is about the sanitizers
  const mocha = files.length ? [bin('mocha', 'mocha.js'), '--exit', '--no-config', '--timeout', '120000', ...files]
    : [bin('mocha', 'mocha.js'), '--exit', '--config', path.join('test', 'emulated-gpu.mocharc.json')];
  results.push(await step(`mocha on the emulated GPU under ASan+UBSan (${files.length ? files.join(' ') : 'test/emulated-gpu.mocharc.json'})`,
    process.execPath, mocha, {
      ...asanNodeEnv(logDir, addon),
      KINDLING_CUDA: 'emulate',
      KINDLING_CUDA_LIBRARY: path.join(release, 'libkindling_cuda_emu_asan.so'),
    }));
  summarize('ASan+UBSan run of the emulated GPU', logDir, results, t0, built);
}

main().catch((e) => {
  console.error(`kindling: ${e.message}`);
  process.exitCode = 1;
});
