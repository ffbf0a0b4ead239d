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
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { root, buildAddonVariant, buildEmulator, addonVariantEnv, bin } = require('./addon-variant');

const SANITIZE = ['-fsanitize=address,undefined', '-fno-omit-frame-pointer', '-fno-sanitize-recover=undefined'];
const release = path.join(root, 'build', 'Release');
const argv = process.argv.slice(2);
const noBuild = argv.includes('--no-build');
const files = argv.filter((a) => !a.startsWith('--'));

const seconds = (t0) => `${((Date.now() - t0) / 1000).toFixed(0)} s`;

function runtimeLibrary(name) {
  const cc = process.env.CC || 'gcc';
  const file = execFileSync(cc, [`-print-file-name=${name}`], { encoding: 'utf8' }).trim();
  if (!path.isAbsolute(file)) throw new Error(`${cc} does not know ${name} (install the compiler's sanitizer runtime)`);
  return file;
}

// useAfterReturn: detect_stack_use_after_return, which checks that the fibers' switch annotations
// (cuda/emulator/grid.cpp) keep the fake stacks right; it maps a fake stack for every GPU thread,
// so it is on for the self-test only (the Fashion-MNIST smoke run: 81 s without, over 5 min with).
function sanitizerEnv(logDir, useAfterReturn) {
  return {
    // allow_user_segv_handler: Node installs its own SIGSEGV handler
    ASAN_OPTIONS: ['detect_leaks=0', `detect_stack_use_after_return=${useAfterReturn ? 1 : 0}`, 'allow_user_segv_handler=1',
      `log_path=${path.join(logDir, 'asan')}`].join(':'),
    UBSAN_OPTIONS: ['print_stacktrace=1', 'halt_on_error=1'].join(':'),
  };
}

// A sanitizer's report in a process's output (UBSan of gcc 12 ignores log_path and writes to
// stderr; a test that runs a child shows the child's stderr in its failure message).
const REPORT_LINE = /^(SUMMARY: (Address|UndefinedBehavior)Sanitizer.*|.*runtime error: .*|==\d+==ERROR: .*)$/gm;

/** Runs cmd, its output shown as it comes and kept; resolves to the outcome and the report lines in it. */
function step(name, cmd, args, env) {
  const t0 = Date.now();
  console.log(`\nkindling: ${name}`);
  return new Promise((resolve) => {
    const p = spawn(cmd, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let out = '';
    p.stdout.on('data', (d) => { process.stdout.write(d); out += d; });
    p.stderr.on('data', (d) => { process.stderr.write(d); out += d; });
    const done = (error, status, signal) => {
      const ok = !error && status === 0;
      const outcome = ok ? 'passed' : `failed (${error ? error.message : signal || `exit status ${status}`})`;
      console.log(`kindling: ${name}: ${outcome} in ${seconds(t0)}`);
      resolve({ name, ok, outcome, time: seconds(t0), reports: [...new Set(out.match(REPORT_LINE) || [])] });
    };
    p.on('error', (e) => done(e));
    p.on('close', (status, signal) => done(null, status, signal));
  });
}

/** The reports in logDir (ASan's log_path): one file per process that found something. */
function logReports(logDir) {
  return fs.readdirSync(logDir).sort().map((f) => {
    const text = fs.readFileSync(path.join(logDir, f), 'utf8');
    return { file: path.join(logDir, f), text, summary: text.match(REPORT_LINE) || [] };
  });
}

async function main() {
  const t0 = Date.now();
  let addon = path.join(root, 'build', 'asan', 'Release', 'kindling.node');
  if (!noBuild) {
    buildEmulator([]);
    buildEmulator(['--sanitize']);
    addon = buildAddonVariant('asan', { cflags: ['-O1', '-g', ...SANITIZE], ldflags: SANITIZE });
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
  const preload = [runtimeLibrary('libasan.so'), process.env.LD_PRELOAD].filter(Boolean).join(':');
  // --exit: mocha sometimes waits on after the last test (a native handle of the CUDA async
  // completion stays referenced); npm test shows that, this run is about the sanitizers
  const mocha = files.length ? [bin('mocha', 'mocha.js'), '--exit', '--no-config', '--timeout', '120000', ...files]
    : [bin('mocha', 'mocha.js'), '--exit', '--config', path.join('test', 'emulated-gpu.mocharc.json')];
  results.push(await step(`mocha on the emulated GPU under ASan+UBSan (${files.length ? files.join(' ') : 'test/emulated-gpu.mocharc.json'})`,
    process.execPath, mocha, {
      ...sanitizerEnv(logDir, false),
      ...addonVariantEnv(addon),
      LD_PRELOAD: preload,
      KINDLING_CUDA: 'emulate',
      KINDLING_CUDA_LIBRARY: path.join(release, 'libkindling_cuda_emu_asan.so'),
    }));

  const found = logReports(logDir);
  for (const r of found) {
    console.log(`\n---- ${r.file}`);
    console.log(r.text.length > 20000 ? `${r.text.slice(0, 20000)}\n[... ${r.text.length - 20000} more characters in the file]` : r.text);
  }
  const inOutput = results.flatMap((r) => r.reports.map((line) => `${r.name}: ${line}`));
  console.log('\nkindling: ASan+UBSan run of the emulated GPU');
  for (const r of results) console.log(`  ${r.name}: ${r.outcome}, ${r.time}`);
  console.log(`  sanitizer reports: ${found.length + inOutput.length}${found.length ? ` (files in ${logDir})` : ''}`);
  for (const r of found) for (const s of r.summary) console.log(`    ${path.basename(r.file)}: ${s}`);
  for (const line of inOutput) console.log(`    ${line}`);
  console.log(`  time: ${seconds(t0)} (building ${((built - t0) / 1000).toFixed(0)} s)`);
  if (!found.length) fs.rmSync(logDir, { recursive: true, force: true });
  if (found.length || inOutput.length || results.some((r) => !r.ok)) process.exitCode = 1;
}

main().catch((e) => {
  console.error(`kindling: ${e.message}`);
  process.exitCode = 1;
});
