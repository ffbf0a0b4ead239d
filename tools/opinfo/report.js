// report.js - kindling's parity with PyTorch by PyTorch's own test database (OpInfo): replays
// every sample recorded by tools/opinfo/generate.py and prints op_db entries covered / total,
// the forward and gradient pass rates, and the failures grouped by OpInfo.
//
//   node tools/opinfo/report.js                 CPU (and CUDA when kd.cuda.isAvailable())
//   node tools/opinfo/report.js --device cuda   one device
//   node tools/opinfo/report.js --failures      also list every failing sample with its reason
//   node tools/opinfo/report.js --write-known   rewrite test/opinfo_known_failures.json to the
//                                               failures seen (reasons and mayDiffer lists of
//                                               nondeterministic samples already written are kept),
//                                               and the pass rates in tools/opinfo/pass_rates.json
//                                               (rendered into docs/OPS.md by npm run gen)
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const { kd } = require('../../test/helpers');
const { loadAll, loadKnownFailures, runSample, knownAs, KNOWN_FAILURES } = require('../../test/opinfo_helpers');
const { writeKnownFailures } = require('./known_failures');

const argv = process.argv.slice(2);
const devArg = argv.includes('--device') ? argv[argv.indexOf('--device') + 1] : null;
const devices = devArg ? [devArg] : ['cpu', ...(kd.cuda.isAvailable() ? ['cuda'] : [])];
const coverage = JSON.parse(fs.readFileSync(path.join(__dirname, 'coverage.json'), 'utf8'));

const PASS_RATES = path.join(__dirname, 'pass_rates.json');
const docs = loadAll();
const known = loadKnownFailures();
const seen = {};
const rates = {};
for (const device of devices) {
  const fails = {};
  let fwd = 0; let fwdPass = 0; let grad = 0; let gradPass = 0; let err = 0; let errPass = 0;
  for (const doc of docs) {
    for (const s of doc.samples) {
      let r;
      try {
        r = kd.tidy(() => runSample(doc, s, device));
      } catch (e) {
        r = { forward: `the test itself threw ${e && e.message}` };
      }
      if (s.error) { err++; if (!r.forward) errPass++; } else { fwd++; if (!r.forward) fwdPass++; }
      if (r.grad !== undefined) { grad++; if (!r.grad) gradPass++; }
      // a nondeterministic sample (mayDiffer) stays out of the lists of failures
      const k = known[device][doc.opinfo] || {};
      const listFwd = r.forward && knownAs(k, 'forward', s.id) !== 'mayDiffer';
      const listGrad = r.grad && knownAs(k, 'grad', s.id) !== 'mayDiffer';
      const f = fails[doc.opinfo] || { forward: [], grad: [], first: null };
      if (listFwd) { f.forward.push(s.id); f.first = f.first || `${s.id}: ${r.forward}`; }
      if (listGrad) { f.grad.push(s.id); if (!listFwd) f.first = f.first || `${s.id} grad: ${r.grad}`; }
      if (listFwd || listGrad) fails[doc.opinfo] = f;
      if (argv.includes('--failures') && (r.forward || r.grad)) {
        console.log(`  ${device} ${doc.opinfo} ${s.id}: ${r.forward || `grad: ${r.grad}`}`);
      }
    }
  }
  seen[device] = fails;
  rates[device] = { forward: [fwdPass, fwd], grad: [gradPass, grad], errors: [errPass, err] };
  const pct = (a, b) => (b ? ((100 * a) / b).toFixed(2) : '-');
  const covered = coverage.entries.filter((e) => !e.missing).length;
  console.log(`OpInfo parity on ${device} (PyTorch ${coverage.torch} op_db):`);
  console.log(`  op_db entries covered: ${covered} / ${coverage.total} (${pct(covered, coverage.total)}%)`);
  console.log(`  forward samples pass:  ${fwdPass} / ${fwd} (${pct(fwdPass, fwd)}%)`);
  console.log(`  gradient samples pass: ${gradPass} / ${grad} (${pct(gradPass, grad)}%)`);
  console.log(`  error samples pass:    ${errPass} / ${err} (${pct(errPass, err)}%)`);
  const worst = Object.entries(fails).sort((a, b) => (b[1].forward.length + b[1].grad.length) - (a[1].forward.length + a[1].grad.length));
  for (const [op, f] of worst) console.log(`  ${op}: ${f.forward.length} forward, ${f.grad.length} grad failing; ${f.first.slice(0, 220)}`);
}

if (argv.includes('--write-known')) {
  writeKnownFailures(KNOWN_FAILURES, 'Samples of PyTorch\'s OpInfo database (test/fixtures/opinfo) that kindling is known to fail, per device and OpInfo, '
      + 'each with the reason. test/opinfo.test.js fails on a failure not listed here and on a listed one that now passes; '
      + 'a nondeterministic sample goes under mayDiffer (it may pass or differ in values, and fails any other way); '
      + '`node tools/opinfo/report.js --write-known` rewrites the lists (keeping the reasons and the mayDiffer lists).', seen, known);
  // [passing, total] per device; a device not run keeps its numbers
  const old = fs.existsSync(PASS_RATES) ? JSON.parse(fs.readFileSync(PASS_RATES, 'utf8')) : {};
  const next = { ...old, ...rates };
  if (rates.cuda) next.cuda.device = kd.cuda.isAvailable() && process.env.KINDLING_CUDA === 'emulate' ? 'emulated GPU' : 'GPU';
  fs.writeFileSync(PASS_RATES, `${JSON.stringify(next, null, 1)}\n`);
  console.log(`wrote ${path.relative(process.cwd(), PASS_RATES)}`);
}
