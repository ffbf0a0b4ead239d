#!/usr/bin/env node
// run.js - kindling's benchmark harness (`npm run bench`).
//
// Runs every case of bench/cases.js on kindling and on its peers, measured in the same run
// with the same timing rule (bench/lib/timing.js) and the same thread count:
//   PyTorch   bench/peers/torch_peer.py under /usr/bin/python3 (KINDLING_BENCH_PYTHON)
//   native    C programs under bench/native/, built with gcc into bench/out/bin/ on first use:
//             stream (STREAM-style bandwidth: the limit of elementwise ops) and sgemm
//             (cblas_sgemm straight from OpenBLAS)
// A peer that cannot run is skipped with the reason printed. Prints a table and the machine,
// and writes everything (all samples included) to bench/out/<date>.json.
//
//   node bench/run.js [--quick] [--filter <substring>] [--threads <n>] [--rounds <n>]
//                     [--no-torch] [--no-native] [--markdown] [--out <file.json>]
//
// Note [Rounds]
// Kindling and each peer run at different moments, so load from other processes that comes
// and goes biases one side. --rounds N runs the whole sequence N times, alternating the order
// (kindling first, then peers first, ...), and keeps for each implementation and size the
// round with the lowest median (STREAM: the highest bandwidth). Every round is in the JSON.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const os = require('node:os');

const root = path.resolve(__dirname, '..');

function parseArgs(argv) {
  const o = { quick: false, filter: null, threads: 0, rounds: 1, torch: true, native: true, markdown: false, out: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--quick') o.quick = true;
    else if (a === '--filter') o.filter = value();
    else if (a.startsWith('--filter=')) o.filter = a.slice(9);
    else if (a === '--threads') o.threads = Number(value());
    else if (a.startsWith('--threads=')) o.threads = Number(a.slice(10));
    else if (a === '--rounds') o.rounds = Number(value());
    else if (a.startsWith('--rounds=')) o.rounds = Number(a.slice(9));
    else if (a === '--no-torch') o.torch = false;
    else if (a === '--no-native') o.native = false;
    else if (a === '--markdown') o.markdown = true;
    else if (a === '--out') o.out = value();
    else if (a === '--help' || a === '-h') o.help = true;
    else throw new Error(`unknown option ${a} (try --help)`);
  }
  if (!Number.isInteger(o.threads) || o.threads < 0) throw new Error('--threads must be a positive integer');
  if (!Number.isInteger(o.rounds) || o.rounds < 1) throw new Error('--rounds must be a positive integer');
  return o;
}

const HELP = `usage: node bench/run.js [options]
  --quick            fewer sizes and shorter samples
  --filter <text>    only cases whose name contains <text>
  --threads <n>      threads for kindling, OpenBLAS, PyTorch and the native programs
                     (default: KINDLING_NUM_THREADS, else the number of CPUs)
  --rounds <n>       run everything n times in alternating order and keep each side's
                     best round (default 1; see Note [Rounds] in bench/run.js)
  --no-torch         skip the PyTorch peer
  --no-native        skip the native programs (STREAM, cblas_sgemm)
  --markdown         print the table as Markdown
  --out <file>       where to write the JSON (default bench/out/<date>.json)`;

let opts;
try {
  opts = parseArgs(process.argv.slice(2));
} catch (e) {
  console.error(`bench: ${e.message}`);
  process.exit(2);
}
if (opts.help) {
  console.log(HELP);
  process.exit(0);
}

// Pin every library to the same thread count BEFORE kindling (and its OpenBLAS) loads.
const threads = opts.threads || Number(process.env.KINDLING_NUM_THREADS) || os.cpus().length;
process.env.KINDLING_NUM_THREADS = String(threads);
process.env.OPENBLAS_NUM_THREADS = String(threads);
process.env.OMP_NUM_THREADS = String(threads);

const { measure } = require('./lib/timing');
const { describeMachine, llcBytes } = require('./lib/machine');
const native = require('./lib/native');
const { runTorch } = require('./lib/torch');
const allCases = require('./cases');

const timing = opts.quick
  ? { warmupS: 0.03, minSampleS: 0.02, repeats: 5 }
  : { warmupS: 0.1, minSampleS: 0.05, repeats: 11 };

const cases = allCases
  .filter((c) => !opts.filter || c.name.includes(opts.filter))
  .map((c) => ({ ...c, runSizes: opts.quick ? c.quickSizes || c.sizes : c.sizes }));
if (!cases.length) {
  console.error(`bench: no case matches --filter ${opts.filter} (cases: ${allCases.map((c) => c.name).join(', ')})`);
  process.exit(2);
}

const skipped = []; // {what, reason}
const skip = (what, reason) => {
  skipped.push({ what, reason });
  console.log(`  skip ${what}: ${reason}`);
};

// ---- kindling ---------------------------------------------------------------------------
let kd = null;
try {
  kd = require(root);
  if (typeof kd.setNumThreads === 'function') kd.setNumThreads(threads);
} catch (e) {
  kd = null;
  skip('kindling', `cannot load the addon (${e.message.split('\n')[0]}); run npm run build`);
}

const liveTensors = () => {
  try {
    const m = kd.memory();
    return m.liveTensors ?? m.tensors ?? null;
  } catch { return null; }
};

function runKindling() {
  const out = [];
  if (!kd) return out;
  for (const c of cases) {
    for (const n of c.runSizes) {
      const label = `${c.name} ${c.label(n)}`;
      process.stdout.write(`  kindling ${label} ... `);
      let state = null;
      try {
        const live0 = liveTensors();
        state = c.setup(kd, n);
        const r = measure(() => c.run(state), timing);
        c.teardown(state);
        state = null;
        const live1 = liveTensors();
        out.push({ name: c.name, size: n, batch: r.batch, median_s: r.medianS, best_s: r.bestS, samples: r.samples,
          live_tensors_before: live0, live_tensors_after: live1 });
        console.log(fmtTime(r.medianS, c.perCallUnit));
        if (live0 !== null && live1 !== null && live1 !== live0)
          console.log(`    warning: ${live1 - live0} tensors still alive after ${label}`);
      } catch (e) {
        if (state) try { c.teardown(state); } catch { /* already reported */ }
        console.log(`failed: ${e.message}`);
        out.push({ name: c.name, size: n, error: e.message });
      }
    }
  }
  return out;
}

// ---- peers ------------------------------------------------------------------------------
function runStream() {
  const wanted = cases.some((c) => c.limit && c.limit.startsWith('stream.'));
  if (!wanted) return null;
  if (!opts.native) { skip('STREAM', '--no-native'); return null; }
  // Arrays of >= 4x the last-level cache (the STREAM rule), and at least the largest add.
  const llc = llcBytes() || 32 << 20;
  const elements = Math.max(1 << 24, Math.ceil((4 * llc) / 4));
  process.stdout.write(`  native stream (${(elements / (1 << 20)).toFixed(0)}M floats/array) ... `);
  const r = native.stream(threads, elements, opts.quick ? 5 : 11);
  if (r.error) { console.log('skipped'); skip('STREAM', r.error); return null; }
  console.log(`copy ${r.copy.gbps_median.toFixed(1)} GB/s, triad ${r.triad.gbps_median.toFixed(1)} GB/s`);
  return r;
}

function runSgemm() {
  const sizes = [...new Set(cases.filter((c) => c.peers && c.peers.native === 'sgemm').flatMap((c) => c.runSizes))];
  if (!sizes.length) return null;
  if (!opts.native) { skip('cblas_sgemm', '--no-native'); return null; }
  process.stdout.write(`  native cblas_sgemm ${sizes.join(', ')} ... `);
  const r = native.sgemm(threads, sizes, timing);
  if (r.error) { console.log('skipped'); skip('cblas_sgemm', r.error); return null; }
  console.log(`${r.blas.trim()}, ${r.threads} threads`);
  return r;
}

function runTorchPeer() {
  const list = cases.filter((c) => c.peers && c.peers.torch).flatMap((c) => c.runSizes.map((size) => ({ name: c.name, size })));
  if (!list.length) return null;
  if (!opts.torch) { skip('PyTorch', '--no-torch'); return null; }
  process.stdout.write(`  PyTorch (${list.length} measurements) ... `);
  const r = runTorch(list, { threads, ...timing });
  if (r.error) { console.log('skipped'); skip('PyTorch', r.error); return null; }
  console.log(`torch ${r.torch}, ${r.threads} threads (${r.python})`);
  return r;
}

// ---- formatting ---------------------------------------------------------------------------
function fmtTime(s, unit) {
  if (s === undefined || s === null || !Number.isFinite(s)) return '-';
  if (unit === 'us') return `${(s * 1e6).toFixed(2)} us`;
  if (s < 1e-6) return `${(s * 1e9).toFixed(1)} ns`;
  if (s < 1e-3) return `${(s * 1e6).toFixed(s < 1e-5 ? 2 : 1)} us`;
  if (s < 1) return `${(s * 1e3).toFixed(s < 1e-2 ? 3 : 2)} ms`;
  return `${s.toFixed(3)} s`;
}
const fmtRatio = (a, b) => (a && b ? `${(a / b).toFixed(2)}x` : '-');
const fmtRate = (v, unit) => (v === null || v === undefined ? '-' : `${v >= 100 ? v.toFixed(0) : v.toFixed(1)} ${unit}`);

function buildRows(kdResults, torch, sgemm, stream) {
  const find = (list, name, size) => (list || []).find((r) => r.name === name && r.size === size && !r.error);
  const rows = [];
  for (const c of cases) {
    for (const n of c.runSizes) {
      const k = find(kdResults, c.name, n);
      const t = torch && find(torch.results, c.name, n);
      const g = c.peers && c.peers.native === 'sgemm' && sgemm ? sgemm.results.find((r) => r.n === n) : null;
      const kRate = k && c.rate ? c.rate.of(n, k.median_s) : null;
      let limitPct = null;
      const llc = llcBytes();
      const outOfCache = !c.bytes || !llc || c.bytes(n) >= 2 * llc;
      if (c.limit && stream && kRate !== null && outOfCache) {
        const which = c.limit.split('.')[1];
        if (stream[which]) limitPct = (100 * kRate) / stream[which].gbps_median;
      }
      // STREAM copy counts 8 bytes/element, an add 12: STREAM's add kernel is the like-for-like figure.
      const addPct = limitPct !== null && stream.add ? (100 * kRate) / stream.add.gbps_median : null;
      rows.push({
        case: c.name,
        size: c.label(n),
        kindling_s: k ? k.median_s : null,
        torch_s: t ? t.median_s : null,
        native_s: g ? g.median_s : null,
        kindling_rate: kRate,
        torch_rate: t && c.rate ? c.rate.of(n, t.median_s) : null,
        native_rate: g && c.rate ? c.rate.of(n, g.median_s) : null,
        rate_unit: c.rate ? c.rate.unit : null,
        limit: c.limit || null,
        limit_pct: limitPct,
        stream_add_pct: addPct,
        in_cache: !outOfCache,
        headline: !!(c.headline && c.headline.includes(n)),
        title: c.title,
        unit: c.perCallUnit || null,
      });
    }
  }
  return rows;
}

function printTable(rows, markdown) {
  const header = ['case', 'size', 'kindling', 'torch', 'kd/torch', 'native', 'kd/native', 'kindling rate', 'torch rate',
    'native rate', '% of limit'];
  const body = rows.map((r) => [
    r.case, r.size, fmtTime(r.kindling_s, r.unit), fmtTime(r.torch_s, r.unit), fmtRatio(r.kindling_s, r.torch_s),
    fmtTime(r.native_s, r.unit), fmtRatio(r.kindling_s, r.native_s), fmtRate(r.kindling_rate, r.rate_unit),
    fmtRate(r.torch_rate, r.rate_unit), fmtRate(r.native_rate, r.rate_unit),
    r.limit_pct !== null ? `${r.limit_pct.toFixed(0)}% ${r.limit}` : r.limit && r.in_cache ? '(in cache)' : '-',
  ]);
  if (markdown) {
    console.log(`| ${header.join(' | ')} |`);
    console.log(`|${header.map((h, i) => (i < 2 ? '---' : '---:')).join('|')}|`);
    for (const b of body) console.log(`| ${b.join(' | ')} |`);
    return;
  }
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells) => cells.map((x, i) => (i < 2 ? x.padEnd(widths[i]) : x.padStart(widths[i]))).join('  ');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const b of body) console.log(line(b));
}

/** The project's targets (cases' `headline` sizes), one line each. */
function printHeadlines(rows) {
  const hs = rows.filter((r) => r.headline);
  if (!hs.length) return;
  console.log('\nheadlines (median):');
  for (const r of hs) {
    const parts = [`kindling ${fmtTime(r.kindling_s, r.unit)}`];
    if (r.kindling_rate !== null) parts[0] += ` = ${fmtRate(r.kindling_rate, r.rate_unit)}`;
    if (r.limit_pct !== null) parts.push(`${r.limit_pct.toFixed(0)}% of ${r.limit}`);
    if (r.stream_add_pct !== null && r.limit !== 'stream.add') parts.push(`${r.stream_add_pct.toFixed(0)}% of stream.add`);
    if (r.torch_s) parts.push(`PyTorch ${fmtTime(r.torch_s, r.unit)} (kindling/PyTorch ${fmtRatio(r.kindling_s, r.torch_s)})`);
    if (r.native_s) parts.push(`cblas_sgemm ${fmtTime(r.native_s, r.unit)} (kindling/BLAS ${fmtRatio(r.kindling_s, r.native_s)})`);
    console.log(`  ${r.title} [${r.size}]: ${parts.join('; ')}`);
  }
}

/** Merges rounds: per (implementation, case, size) the lowest median; STREAM's best copy. */
function bestOfRounds(rounds) {
  const pick = (lists, key) => {
    const best = new Map();
    for (const list of lists) {
      for (const r of list || []) {
        const k = key(r);
        const cur = best.get(k);
        if (!cur || (cur.error && !r.error) || (!r.error && r.median_s < cur.median_s)) best.set(k, r);
      }
    }
    return [...best.values()];
  };
  const byCase = (r) => `${r.name}\u0000${r.size}`;
  const kdResults = pick(rounds.map((r) => r.kindling), byCase);
  const torchRounds = rounds.map((r) => r.torch).filter(Boolean);
  const torch = torchRounds.length ? { ...torchRounds[0], results: pick(torchRounds.map((t) => t.results), byCase) } : null;
  const sgemmRounds = rounds.map((r) => r.sgemm).filter(Boolean);
  const sgemm = sgemmRounds.length ? { ...sgemmRounds[0], results: pick(sgemmRounds.map((g) => g.results), (r) => r.n) } : null;
  const streams = rounds.map((r) => r.stream).filter(Boolean);
  const stream = streams.length ? streams.reduce((a, b) => (b.copy.gbps_median > a.copy.gbps_median ? b : a)) : null;
  return { kdResults, torch, stream, sgemm };
}

// ---- main -------------------------------------------------------------------------------
function main() {
  const machine = describeMachine(root);
  const started = new Date();
  console.log(`kindling bench${opts.quick ? ' (quick)' : ''}: ${cases.map((c) => c.name).join(', ')}`);
  console.log(`  machine: ${machine.cpu}, ${machine.logicalCpus} logical CPUs` +
    `${machine.physicalCores ? ` (${machine.physicalCores} cores)` : ''}, threads: ${threads} ` +
    `(KINDLING_NUM_THREADS = OPENBLAS_NUM_THREADS = OMP_NUM_THREADS = torch.set_num_threads)`);
  const load = machine.loadAverage[0];
  if (load > 0.5) console.log(`  note: load average ${load.toFixed(2)} before starting: other work may skew timings`);

  const rounds = [];
  for (let r = 0; r < opts.rounds; r++) {
    if (opts.rounds > 1) console.log(`round ${r + 1} of ${opts.rounds}`);
    const round = {};
    const steps = [() => { round.kindling = runKindling(); }, () => { round.torch = runTorchPeer(); },
      () => { round.stream = runStream(); }, () => { round.sgemm = runSgemm(); }];
    for (const step of r % 2 ? steps.reverse() : steps) step();
    rounds.push(round);
    if (r === 0 && opts.rounds > 1) { // a peer that cannot run will not run in later rounds either
      opts.torch = opts.torch && !!round.torch;
      opts.native = opts.native && (!!round.stream || !!round.sgemm);
    }
  }
  const { kdResults, torch, stream, sgemm } = bestOfRounds(rounds);

  const rows = buildRows(kdResults, torch, sgemm, stream);
  console.log('');
  printTable(rows, opts.markdown);
  if (stream) {
    console.log(`\nSTREAM (${threads} threads, float32 arrays of ${(stream.elements / (1 << 20)).toFixed(0)}M): ` +
      ['copy', 'triad', 'add'].map((k) => `${k} ${stream[k].gbps_median.toFixed(1)} GB/s (best ${stream[k].gbps_best.toFixed(1)})`).join(', '));
  }
  console.log(`machine: ${machine.cpu}; ${machine.logicalCpus} logical CPUs; SIMD ${machine.simd.join(' ') || '?'}; ` +
    `LLC ${machine.llcBytes ? `${machine.llcBytes >> 20} MiB` : '?'}; ${(machine.memoryBytes / 2 ** 30).toFixed(0)} GiB; ` +
    `${machine.os}; node ${machine.node}${torch ? `; torch ${torch.torch}` : ''}${sgemm ? `; ${sgemm.blas.trim()}` : ''}; ` +
    `threads ${threads}; commit ${machine.commit || 'none'}`);
  for (const s of skipped) console.log(`skipped ${s.what}: ${s.reason}`);
  printHeadlines(rows);

  const stamp = started.toISOString().replace(/:/g, '-').replace(/\.\d+Z$/, 'Z');
  const file = opts.out ? path.resolve(opts.out) : path.join(root, 'bench', 'out', `${stamp}.json`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const report = {
    date: started.toISOString(),
    quick: opts.quick,
    filter: opts.filter,
    threads,
    rounds: opts.rounds,
    timing,
    machine: { ...machine, loadAverageAfter: os.loadavg() },
    kindling: { loaded: !!kd, build: kd ? kd.build : null, version: kd ? kd.version : null, results: kdResults },
    peers: { torch, stream, sgemm },
    rows,
    all_rounds: opts.rounds > 1 ? rounds : undefined,
    skipped,
  };
  fs.writeFileSync(file, JSON.stringify(report, null, 1) + '\n');
  console.log(`results: ${path.relative(process.cwd(), file)}`);
}

main();
