// sanitizers.js - running kindling under AddressSanitizer + UndefinedBehaviorSanitizer: the
// instrumented addon (build/asan/Release/kindling.node, built by addon-variant.js with the flags
// below), the environment a Node process needs to run it (the ASan runtime LD_PRELOADed, since
// Node itself is not instrumented; leak detection off, as a Node process does not free everything
// at exit; UBSan halting on the first error; reports logged to a directory), and the steps that
// run under it with their reports collected. Used by tools/test-asan.js (the mocha suite),
// tools/test-emulator-asan.js (the emulated GPU) and tools/fuzz.js (--asan).
'use strict';
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { root, buildAddonVariant, addonVariantEnv } = require('./addon-variant');

const SANITIZE = ['-fsanitize=address,undefined', '-fno-omit-frame-pointer', '-fno-sanitize-recover=undefined'];
const ASAN_ADDON = path.join(root, 'build', 'asan', 'Release', 'kindling.node');

/** Builds (incrementally) the addon with ASan + UBSan; returns its path. */
function buildAsanAddon() {
  return buildAddonVariant('asan', { cflags: ['-O1', '-g', ...SANITIZE], ldflags: SANITIZE });
}

/** The absolute path of one of the compiler's runtime libraries, e.g. libasan.so. */
function runtimeLibrary(name) {
  const cc = process.env.CC || 'gcc';
  const file = execFileSync(cc, [`-print-file-name=${name}`], { encoding: 'utf8' }).trim();
  if (!path.isAbsolute(file)) throw new Error(`${cc} does not know ${name} (install the compiler's sanitizer runtime)`);
  return file;
}

// useAfterReturn: detect_stack_use_after_return, which checks that the fibers' switch annotations
// (cuda/emulator/grid.cpp) keep the fake stacks right; it maps a fake stack for every GPU thread,
// so it is on for the emulator's self-test only (the Fashion-MNIST smoke run: 81 s without, over
// 5 min with).
function sanitizerEnv(logDir, useAfterReturn = false) {
  return {
    // allow_user_segv_handler: Node installs its own SIGSEGV handler. allocator_may_return_null:
    // a request larger than ASan's allocator serves (1 << 40 bytes) fails as malloc does without
    // it, returning NULL (kindling's KD_OUT_OF_MEMORY path), instead of aborting the process.
    ASAN_OPTIONS: ['detect_leaks=0', `detect_stack_use_after_return=${useAfterReturn ? 1 : 0}`, 'allow_user_segv_handler=1',
      'allocator_may_return_null=1',
      `log_path=${path.join(logDir, 'asan')}`].join(':'),
    UBSAN_OPTIONS: ['print_stacktrace=1', 'halt_on_error=1'].join(':'),
  };
}

/** The environment of a Node process that runs lib/index.js on the ASan addon at `addon`. */
function asanNodeEnv(logDir, addon = ASAN_ADDON) {
  const preload = [runtimeLibrary('libasan.so'), process.env.LD_PRELOAD].filter(Boolean).join(':');
  return { ...sanitizerEnv(logDir, false), ...addonVariantEnv(addon), LD_PRELOAD: preload };
}

// A sanitizer's report in a process's output (UBSan of gcc 12 ignores log_path and writes to
// stderr; a test that runs a child shows the child's stderr in its failure message).
const REPORT_LINE = /^(SUMMARY: (Address|UndefinedBehavior)Sanitizer.*|.*runtime error: .*|==\d+==ERROR: .*)$/gm;

const seconds = (t0) => `${((Date.now() - t0) / 1000).toFixed(0)} s`;

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

/**
 * The reports in logDir (ASan's log_path): one file per process that found something. Files with
 * warnings only ("failed to allocate 0x... bytes", see allocator_may_return_null) are left out.
 */
function logReports(logDir) {
  return fs.readdirSync(logDir).sort().map((f) => {
    const text = fs.readFileSync(path.join(logDir, f), 'utf8');
    return { file: path.join(logDir, f), text, summary: text.match(REPORT_LINE) || [] };
  }).filter((r) => r.summary.length);
}

/**
 * Prints the reports of logDir and the steps' outcomes under `title`; sets a non-zero exit status
 * when a step failed or any report was found; removes logDir when it is empty.
 */
function summarize(title, logDir, results, t0, built) {
  const found = logReports(logDir);
  for (const r of found) {
    console.log(`\n---- ${r.file}`);
    console.log(r.text.length > 20000 ? `${r.text.slice(0, 20000)}\n[... ${r.text.length - 20000} more characters in the file]` : r.text);
  }
  const inOutput = results.flatMap((r) => r.reports.map((line) => `${r.name}: ${line}`));
  console.log(`\nkindling: ${title}`);
  for (const r of results) console.log(`  ${r.name}: ${r.outcome}, ${r.time}`);
  console.log(`  sanitizer reports: ${found.length + inOutput.length}${found.length ? ` (files in ${logDir})` : ''}`);
  for (const r of found) for (const s of r.summary) console.log(`    ${path.basename(r.file)}: ${s}`);
  for (const line of inOutput) console.log(`    ${line}`);
  console.log(`  time: ${seconds(t0)} (building ${((built - t0) / 1000).toFixed(0)} s)`);
  if (!found.length) fs.rmSync(logDir, { recursive: true, force: true }); // warnings only, or nothing
  if (found.length || inOutput.length || results.some((r) => !r.ok)) process.exitCode = 1;
}

module.exports = { SANITIZE, ASAN_ADDON, REPORT_LINE, buildAsanAddon, runtimeLibrary, sanitizerEnv, asanNodeEnv, step, logReports, summarize };
