// module_report.js - kindling's modules against PyTorch's module test database (ModuleInfo):
// replays every sample recorded by tools/opinfo/generate_modules.py and prints, per device, the
// module_db entries kindling has, the forward and gradient pass rates (over the modules kindling
// has, and over all of module_db's samples), and per module its passing samples and first failure.
//
//   node tools/opinfo/module_report.js                 (npm run moduleinfo:report) CPU, and CUDA when available
//   node tools/opinfo/module_report.js --device cuda   one device
//   node tools/opinfo/module_report.js --failures      also every failing sample with its reason
//   node tools/opinfo/module_report.js --write-known   rewrites test/moduleinfo_known_failures.json to the
//                                                      failures seen (reasons and mayDiffer lists kept)
//   node tools/opinfo/module_report.js --markdown      writes docs/MODULEINFO.md (the per-module table);
//                                                      a device not run keeps its rows from
//                                                      tools/opinfo/module_pass_rates.json
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const { kd } = require('../../test/helpers');
const { knownAs } = require('../../test/opinfo_helpers');
const { loadAll, loadKnownFailures, hasModule, runModuleSample, KNOWN_FAILURES } = require('../../test/moduleinfo_helpers');
const { writeKnownFailures } = require('./known_failures');

const ROOT = path.join(__dirname, '..', '..');
const RATES = path.join(__dirname, 'module_pass_rates.json');
const DOC = path.join(ROOT, 'docs', 'MODULEINFO.md');

const argv = process.argv.slice(2);
const devArg = argv.includes('--device') ? argv[argv.indexOf('--device') + 1] : null;
const devices = devArg ? [devArg] : ['cpu', ...(kd.cuda.isAvailable() ? ['cuda'] : [])];
const docs = loadAll();
const known = loadKnownFailures();
const pct = (a, b) => (b ? `${((100 * a) / b).toFixed(2)}%` : '-');

const seen = {};
const results = {}; // device -> {modules: {Module: {missing} | {forward: [pass, total], grad: [pass, total], first}}, device}
for (const device of devices) {
  const modules = {};
  const fails = {};
  for (const doc of docs) {
    if (!hasModule(doc)) {
      modules[doc.module] = { missing: true, samples: doc.samples.length };
      continue;
    }
    const row = { forward: [0, 0], grad: [0, 0], first: null };
    const k = known[device][doc.module] || {};
    const f = { forward: [], grad: [], first: null };
    for (const s of doc.samples) {
      let r;
      try {
        r = kd.tidy(() => runModuleSample(doc, s, device));
      } catch (e) {
        r = { forward: `the harness itself threw ${e && e.message}` };
      }
      row.forward[1]++;
      if (!r.forward) row.forward[0]++;
      if (r.grad !== undefined) { row.grad[1]++; if (!r.grad) row.grad[0]++; }
      const msg = r.forward ? `${s.id} (${s.desc || 'default'}): ${r.forward}` : r.grad ? `${s.id} (${s.desc || 'default'}) grad: ${r.grad}` : null;
      if (msg && !row.first) row.first = msg;
      if (r.forward && knownAs(k, 'forward', s.id) !== 'mayDiffer') { f.forward.push(s.id); f.first = f.first || msg; }
      if (r.grad && knownAs(k, 'grad', s.id) !== 'mayDiffer') { f.grad.push(s.id); f.first = f.first || msg; }
      if (argv.includes('--failures') && msg) console.log(`  ${device} ${doc.module} ${msg}`);
    }
    if (f.forward.length || f.grad.length) fails[doc.module] = f;
    modules[doc.module] = row;
  }
  seen[device] = fails;
  results[device] = { modules };
  if (device === 'cuda') results[device].device = process.env.KINDLING_CUDA === 'emulate' ? 'emulated GPU' : 'GPU';
  const rows = Object.values(modules);
  const sum = (kind) => rows.filter((r) => !r.missing).reduce((a, r) => [a[0] + r[kind][0], a[1] + r[kind][1]], [0, 0]);
  const fwd = sum('forward');
  const grad = sum('grad');
  const all = docs.reduce((n, d) => n + d.samples.length, 0);
  const allGrad = docs.reduce((n, d) => n + d.samples.filter((s) => s.grads).length, 0);
  const covered = rows.filter((r) => !r.missing).length;
  console.log(`ModuleInfo parity on ${device} (PyTorch ${docs[0] ? docs[0].torch : '?'} module_db):`);
  console.log(`  module_db entries kindling has: ${covered} / ${docs.length}`);
  console.log(`  forward samples pass:  ${fwd[0]} / ${fwd[1]} (${pct(fwd[0], fwd[1])}) of the modules kindling has; ${fwd[0]} / ${all} (${pct(fwd[0], all)}) of all`);
  console.log(`  gradient samples pass: ${grad[0]} / ${grad[1]} (${pct(grad[0], grad[1])}) of the modules kindling has; ${grad[0]} / ${allGrad} (${pct(grad[0], allGrad)}) of all`);
  for (const [name, r] of Object.entries(modules)) {
    if (r.missing) console.log(`  ${name.padEnd(26)} missing (${r.samples} samples)`);
    else console.log(`  ${name.padEnd(26)} forward ${r.forward[0]}/${r.forward[1]}, grad ${r.grad[0]}/${r.grad[1]}${r.first ? `; ${r.first.slice(0, 200)}` : ''}`);
  }
}

if (argv.includes('--write-known')) {
  writeKnownFailures(KNOWN_FAILURES, 'Samples of PyTorch\'s ModuleInfo database (test/fixtures/moduleinfo) that kindling is known to fail, per device and module, '
      + 'each with the reason. test/moduleinfo.test.js fails on a failure not listed here and on a listed one that now passes; '
      + 'a nondeterministic sample goes under mayDiffer; `node tools/opinfo/module_report.js --write-known` rewrites the lists '
      + '(keeping the reasons and the mayDiffer lists).', seen, known);
}

if (argv.includes('--markdown')) {
  const old = fs.existsSync(RATES) ? JSON.parse(fs.readFileSync(RATES, 'utf8')) : {};
  const rates = { ...old, ...results };
  for (const r of Object.values(rates)) for (const row of Object.values(r.modules)) delete row.first;
  fs.writeFileSync(RATES, `${JSON.stringify(rates, null, 1)}\n`);
  const devs = Object.keys(rates);
  const cell = (r, kind) => (r.missing ? 'missing' : `${r[kind][0]}/${r[kind][1]}`);
  const lines = [
    '# Modules against PyTorch\'s ModuleInfo database',
    '',
    `PyTorch ${docs[0] ? docs[0].torch : ''} tests its modules with \`module_db\` (\`torch/testing/_internal/common_modules.py\`):`,
    `${docs.length} ModuleInfo entries, each with sample constructor and forward arguments. \`tools/opinfo/generate_modules.py\``,
    'records every sample for float32 and float64 (training and eval mode where the module\'s differ) with PyTorch\'s',
    'state dict, outputs and input and parameter gradients; `test/moduleinfo.test.js` builds the kindling module, loads',
    'the state dict and compares. Known failures, with their reasons, are in `test/moduleinfo_known_failures.json`.',
    'A module kindling does not have is "missing". Generated by `node tools/opinfo/module_report.js --markdown`',
    '(`npm run moduleinfo:report` prints it).',
    '',
    'A sample whose output depends on the random generator (dropout in training mode) would compare only shapes and',
    'dtypes, as kindling\'s generator is not PyTorch\'s (PyTorch\'s harness freezes its RNG state instead); none of',
    'PyTorch 1.13\'s samples does. Keyword arguments are camelCased (`dim_feedforward` -> `dimFeedforward`), a function',
    'argument is kindling\'s function of the same name (`F.gelu` -> `kd.nn.functional.gelu`).',
    '',
    'When a module lands, its samples run with no change here: run `npx mocha test/moduleinfo.test.js`, list what it',
    'fails (with reasons) with `node tools/opinfo/module_report.js --write-known` on the CPU and with',
    '`KINDLING_CUDA=emulate ... --device cuda`, and refresh this page with `--markdown` (once per device).',
    '',
  ];
  for (const d of devs) {
    const rows = Object.values(rates[d].modules);
    const has = rows.filter((r) => !r.missing);
    const s = (kind) => has.reduce((a, r) => [a[0] + r[kind][0], a[1] + r[kind][1]], [0, 0]);
    const f = s('forward');
    const g = s('grad');
    lines.push(`- ${d === 'cuda' ? `CUDA (${rates[d].device || 'GPU'})` : 'CPU'}: ${has.length} of ${rows.length} modules; forward samples pass ${f[0]}/${f[1]} (${pct(f[0], f[1])}), gradient samples ${g[0]}/${g[1]} (${pct(g[0], g[1])})`);
  }
  lines.push('', `| module | ${devs.map((d) => `${d} forward | ${d} gradient`).join(' | ')} |`, `|---|${devs.map(() => '---:|---:').join('|')}|`);
  for (const name of Object.keys(rates[devs[0]].modules)) {
    lines.push(`| ${name} | ${devs.map((d) => { const r = rates[d].modules[name] || { missing: true }; return `${cell(r, 'forward')} | ${cell(r, 'grad')}`; }).join(' | ')} |`);
  }
  lines.push('');
  fs.writeFileSync(DOC, lines.join('\n'));
  console.log(`wrote ${path.relative(process.cwd(), DOC)} and ${path.relative(process.cwd(), RATES)}`);
}
