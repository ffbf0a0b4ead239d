#!/usr/bin/env node
// coverage-cuda.js - `npm run coverage:cuda`: line coverage of the CUDA backend (cuda/*.cu,
// *.cuh, *.c, *.h) and of its bridge in the addon (src/cuda_bridge/*.c) by the emulated CUDA
// suite (test/emulated-gpu.mocharc.json). Builds, incrementally, the gcov variants
// build/Release/libkindling_cuda_emu_cov.so (build-emulator.js --coverage) and
// build/cov/Release/kindling.node (the addon with --coverage; addon-variant.js), clears their
// counters, runs the suite on them (child processes add to the same counters), then reads the
// counters with gcov's JSON output and prints a table per file and the total. A line counts as
// covered when any instantiation of it (templates, headers included by several files) ran.
//   node tools/coverage-cuda.js                   build, run the emulated suite, report
//   node tools/coverage-cuda.js --no-build        run and report (the variants are built)
//   node tools/coverage-cuda.js --report          report the counters of the last run only
//   node tools/coverage-cuda.js test/x.test.js    these test files instead of the emulated suite
//   --json=FILE                                   also write the per-file figures as JSON
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { root, buildAddonVariant, buildEmulator, addonVariantEnv, bin } = require('./addon-variant');

const argv = process.argv.slice(2);
const opt = (name) => argv.includes(name);
const jsonOut = (argv.find((a) => a.startsWith('--json=')) || '').slice('--json='.length);
const files = argv.filter((a) => !a.startsWith('--'));

const release = path.join(root, 'build', 'Release');
const emuObjDir = path.join(root, 'build', 'emu-obj-cov');
const addonObjDir = path.join(root, 'build', 'cov', 'Release', 'obj.target');
// The files reported, and which build's counters are theirs: the CUDA sources from the emulated
// GPU's objects; the bridge from the addon's (the addon also includes cuda/caching_allocator_core.c,
// for the fake allocator: that run is not the CUDA backend's).
const REPORTED = [
  { dir: path.join(root, 'cuda'), exts: ['.cu', '.cuh', '.c', '.h'], objDir: emuObjDir },
  { dir: path.join(root, 'src', 'cuda_bridge'), exts: ['.c', '.h'], objDir: addonObjDir },
];

const seconds = (t0) => `${((Date.now() - t0) / 1000).toFixed(0)} s`;

function walk(dir, ext) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? walk(p, ext) : e.name.endsWith(ext) ? [p] : [];
  });
}

function clearCounters() {
  for (const d of [emuObjDir, addonObjDir]) for (const f of walk(d, '.gcda')) fs.unlinkSync(f);
}

/** gcov's JSON for one counter file: { files: [{ file, lines: [{ line_number, count }] }], ... }. */
function gcovJson(gcda) {
  const r = spawnSync(process.env.GCOV || 'gcov', ['--json-format', '--stdout', '--object-directory', path.dirname(gcda), gcda],
    { cwd: root, encoding: 'utf8', maxBuffer: 1 << 30 });
  if (r.error) throw new Error(`gcov: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`gcov failed on ${gcda}: ${r.stderr}`);
  return r.stdout.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
}

/** Per reported source file: Map(line -> executed). */
function collect() {
  const byFile = new Map();
  for (const { dir, exts, objDir } of REPORTED) {
    const mine = (f) => f.startsWith(dir + path.sep) && !f.startsWith(path.join(root, 'cuda', 'emulator') + path.sep) &&
      exts.some((x) => f.endsWith(x));
    for (const gcda of walk(objDir, '.gcda')) {
      for (const doc of gcovJson(gcda)) {
        const cwd = doc.current_working_directory || root;
        for (const f of doc.files) {
          const file = path.resolve(cwd, f.file);
          if (!mine(file)) continue;
          if (!byFile.has(file)) byFile.set(file, new Map());
          const lines = byFile.get(file);
          for (const l of f.lines) lines.set(l.line_number, lines.get(l.line_number) || l.count > 0);
        }
      }
    }
  }
  return byFile;
}

function report(byFile) {
  // every reported source, also those no object compiled (0 lines known) or never loaded
  for (const { dir, exts } of REPORTED)
    for (const e of fs.readdirSync(dir)) {
      const f = path.join(dir, e);
      if (exts.some((x) => e.endsWith(x)) && fs.statSync(f).isFile() && !byFile.has(f)) byFile.set(f, new Map());
    }
  const rows = [...byFile.entries()].map(([file, lines]) => {
    const total = lines.size;
    const hit = [...lines.values()].filter(Boolean).length;
    return { file: path.relative(root, file), lines: total, covered: hit, percent: total ? (100 * hit) / total : null };
  }).sort((a, b) => a.file.localeCompare(b.file));
  const width = Math.max(...rows.map((r) => r.file.length), 'total'.length);
  const pct = (p) => (p === null ? '    -' : `${p.toFixed(1).padStart(5)}%`);
  console.log(`\n${'file'.padEnd(width)}  ${'lines'.padStart(6)}  ${'covered'.padStart(7)}  ${'%'.padStart(6)}`);
  for (const r of rows) console.log(`${r.file.padEnd(width)}  ${String(r.lines).padStart(6)}  ${String(r.covered).padStart(7)}  ${pct(r.percent)}`);
  const sum = (k, pred) => rows.filter(pred).reduce((s, r) => s + r[k], 0);
  const totals = [['cuda/', (r) => r.file.startsWith('cuda/')], ['src/cuda_bridge/', (r) => r.file.startsWith('src/')],
    ['total', () => true]].map(([name, pred]) => {
    const lines = sum('lines', pred), covered = sum('covered', pred);
    return { file: name, lines, covered, percent: lines ? (100 * covered) / lines : null };
  });
  console.log('-'.repeat(width + 26));
  for (const r of totals) console.log(`${r.file.padEnd(width)}  ${String(r.lines).padStart(6)}  ${String(r.covered).padStart(7)}  ${pct(r.percent)}`);
  if (jsonOut) fs.writeFileSync(jsonOut, JSON.stringify({ files: rows, totals }, null, 2) + '\n');
  return totals[totals.length - 1];
}

function main() {
  const t0 = Date.now();
  let built = t0, ran = t0, ok = true;
  const addon = path.join(root, 'build', 'cov', 'Release', 'kindling.node');
  if (!opt('--report')) {
    if (!opt('--no-build')) {
      buildEmulator([]); // test/cuda_emulator.test.js runs only when the plain emulated GPU is built
      buildEmulator(['--coverage']);
      buildAddonVariant('cov', { cflags: ['-O0', '-g', '--coverage'], ldflags: ['--coverage'] });
      built = Date.now();
    }
    const lib = path.join(release, 'libkindling_cuda_emu_cov.so');
    for (const f of [addon, lib]) if (!fs.existsSync(f)) throw new Error(`${path.relative(root, f)} is not built (run without --no-build)`);
    clearCounters();
    // --exit: the counters are written when the process exits normally, and mocha sometimes waits
    // on after the last test (a native handle of the CUDA async completion stays referenced)
    const mocha = files.length ? [bin('mocha', 'mocha.js'), '--exit', '--no-config', '--timeout', '120000', ...files]
      : [bin('mocha', 'mocha.js'), '--exit', '--config', path.join('test', 'emulated-gpu.mocharc.json')];
    console.log(`\nkindling: mocha on the emulated GPU with coverage counters (${files.length ? files.join(' ') : 'test/emulated-gpu.mocharc.json'})`);
    const r = spawnSync(process.execPath, mocha, {
      cwd: root,
      stdio: 'inherit',
      env: { ...process.env, ...addonVariantEnv(addon), KINDLING_CUDA: 'emulate', KINDLING_CUDA_LIBRARY: lib },
    });
    ok = !r.error && r.status === 0;
    ran = Date.now();
    console.log(`kindling: the suite ${ok ? 'passed' : `failed (${r.error ? r.error.message : r.signal || `exit status ${r.status}`}); coverage of what ran`} in ${((ran - built) / 1000).toFixed(0)} s`);
  }
  const total = report(collect());
  console.log(`\nkindling: line coverage of the CUDA backend on the emulated GPU: ${total.percent === null ? '-' : total.percent.toFixed(1)}% ` +
    `(${total.covered} of ${total.lines} lines); time ${seconds(t0)} (building ${((built - t0) / 1000).toFixed(0)} s, ` +
    `tests ${((ran - built) / 1000).toFixed(0)} s, gcov ${seconds(ran)})`);
  if (!ok) process.exitCode = 1;
}

try {
  main();
} catch (e) {
  console.error(`kindling: ${e.message}`);
  process.exitCode = 1;
}
