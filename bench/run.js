#!/usr/bin/env node
// run.js - kindling's benchmark harness (`npm run bench`; `--help` lists the options).
//
// Runs every case of bench/cases.js on kindling and on its peers, measured in the same run
// with the same timing rule (bench/lib/timing.js) and the same thread count:
//   PyTorch   bench/peers/torch_peer.py under /usr/bin/python3 (KINDLING_BENCH_PYTHON), on
//             the bench's device (CPU, or CUDA with --device cuda)
//   tfjs      TensorFlow.js's CPU backend (pure JS, one thread), installed on first use into
//             bench/.cache/tfjs (bench/lib/tfjs.js, bench/peers/tfjs_peer.js); CPU runs only
//   native    C programs under bench/native/, built with gcc into bench/out/bin/ on first use:
//             stream (STREAM-style bandwidth: the limit of elementwise ops) and sgemm
//             (cblas_sgemm straight from OpenBLAS); on --device cuda the limit is PyTorch's
//             device-to-device copy bandwidth instead
// A peer that cannot run, and a case whose op is not in this build yet, is skipped with the
// reason printed. Prints a table and the machine, writes everything (all samples included) to
// bench/out/<date>.json and a chart of the ratios to bench/out/<date>.svg. Never fails on time.
//
// Note [Rounds]
// Load from other processes that comes and goes biases whichever side runs during it, even with
// the sides interleaved case by case (Note [Interleaving]). --rounds N runs the whole sequence N
// times, alternating the order (kindling first, then peers first, natives last then first), and
// keeps for each implementation and size the round with the lowest median (STREAM: the highest
// bandwidth). Every round is in the JSON.
// --check-repeat runs the whole suite (with its rounds) twice and compares the ratios.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const os = require('node:os');
const { parseArgs, HELP } = require('./lib/args');

const root = path.resolve(__dirname, '..');

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
// OpenBLAS's idle threads spin for 2^28 cycles (~0.1 s) after each call by default: in one
// process that keeps the cores of the next side's sample busy (Note [Paired samples]). 2^22
// cycles (~1.5 ms) stays warm across the calls of one training step and is over well within a
// sample's settle period. Kindling, PyTorch and the native sgemm all get it (unless set).
if (!process.env.OPENBLAS_THREAD_TIMEOUT) process.env.OPENBLAS_THREAD_TIMEOUT = '22';

const { prepare, sample, prepareAsync, sampleAsync, summary } = require('./lib/timing');
const { describeMachine, llcBytes } = require('./lib/machine');
const native = require('./lib/native');
const { startTorch } = require('./lib/torch');
const { startTfjs } = require('./lib/tfjs');
const { renderChart } = require('./lib/chart');
const { fmtTime, formatTable, formatHeadlines, LOADED_MARK } = require('./lib/format');
const { compareRuns, formatRepeat } = require('./lib/repeat');
const { machineKey, updateResults } = require('./lib/results');
const { readLoad, isLoaded, loadSpan, formatLoad } = require('./lib/load');
const allCases = require('./cases');

const dev = opts.device;
const cuda = dev === 'cuda';
const timing = opts.quick
  ? { warmupS: 0.03, minSampleS: 0.02, repeats: 5, settleS: 0.002 }
  : { warmupS: 0.1, minSampleS: 0.05, repeats: 11, settleS: 0.01 };
// tfjs is pure JS: a size is not run once a smaller one of the same case took longer than this.
const tfjsCapS = opts.quick ? 0.05 : 0.5;
const D2D_ELEMENTS = 1 << 26; // 256 MiB per buffer for the GPU copy limit

const skipped = []; // {what, reason}
const skip = (what, reason) => {
  if (skipped.some((s) => s.what === what && s.reason === reason)) return; // said once (rounds, --check-repeat)
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

if (cuda && !(kd && kd.cuda.isAvailable())) {
  const why = !kd ? 'kindling is not built' : kd.cuda.unavailableReason() || 'kd.cuda.isAvailable() is false';
  console.log(`bench --device cuda: no usable GPU (${why}); nothing to run.`);
  process.exit(0);
}
const sync = cuda ? () => { kd.cuda.synchronize().catch(() => {}); } : null;

// On the emulated GPU (KINDLING_CUDA=emulate) the CPU runs the kernels: each case runs at its
// smallest size, and the counters per call (countEmulated) are what the run reports.
const emulated = cuda && !!kd && kd.cuda.isAvailable() && kd.cuda.emulator.isEnabled();
let cases = allCases.filter((c) => !opts.filter || opts.filter.split('|').some((f) => c.name.includes(f)));
if (!cases.length) {
  console.error(`bench: no case matches --filter ${opts.filter} (cases: ${allCases.map((c) => c.name).join(', ')})`);
  process.exit(2);
}
const unavailable = []; // cases whose op this build lacks: reported once, run by nobody
cases = cases.filter((c) => {
  const reason = kd && c.requires ? c.requires(kd, dev) : null;
  if (reason) unavailable.push({ what: c.name, reason });
  return !reason;
}).map((c) => ({ ...c, runSizes: emulated ? [Math.min(...c.sizes)] : opts.quick ? c.quickSizes || c.sizes : c.sizes }));

const liveTensors = () => {
  try {
    const m = kd.memory();
    return m.liveTensors ?? m.tensors ?? null;
  } catch { return null; }
};

/**
 * Times kindling and its peers (PyTorch, tfjs: `peers`, [{which, label}]; may be empty) on one
 * (case, size) with paired samples (Note [Paired samples] in bench/lib/timing.js): every side
 * warms up and calibrates, then they take their samples in turn, the side going first rotating
 * from sample to sample (alone, kindling samples back to back, without settling). Returns
 * {kd: kindling's record ({error} when it fails), peers: {which: record}}.
 */
async function measurePaired(c, n, peers) {
  let state = null;
  const sides = peers.map((p) => ({ ...p, open: false, err: null, batch: 0, samples: [] }));
  const closeAll = async () => {
    for (const p of sides) if (p.open) { p.open = false; await ask(p.which, p.label, { op: 'close' }); }
  };
  const settleS = peers.length ? timing.settleS : 0;
  const load = [readLoad(), null]; // around this case: Note [Loaded runs] in bench/lib/load.js
  const record = (batch, samples) => {
    const x = summary(batch, samples);
    return { name: c.name, size: n, batch: x.batch, median_s: x.medianS, best_s: x.bestS, samples: x.samples,
      paired: peers.length > 0, load };
  };
  try {
    const live0 = liveTensors();
    state = c.setup(kd, n, dev);
    const fn = () => c.run(state);
    const kBatch = c.async ? await prepareAsync(fn, timing) : prepare(fn, timing, sync);
    for (const p of sides) {
      const o = await ask(p.which, p.label, { op: 'open', name: c.name, size: n, warmup_s: timing.warmupS,
        min_sample_s: timing.minSampleS });
      if (o.error) p.err = o.error; else { p.open = true; p.batch = o.batch; }
    }
    const kS = [];
    const turns = [async () => kS.push(c.async ? await sampleAsync(fn, kBatch, settleS)
      : sample(fn, kBatch, settleS, sync))];
    for (const p of sides) {
      turns.push(async () => {
        if (p.err) return;
        const x = await ask(p.which, p.label, { op: 'sample', settle_s: timing.settleS });
        if (x.error) p.err = x.error; else p.samples.push(x.sample_s);
      });
    }
    for (let r = 0; r < timing.repeats; r++)
      for (let i = 0; i < turns.length; i++) await turns[(i + r) % turns.length]();
    await closeAll();
    load[1] = readLoad();
    c.teardown(state);
    state = null;
    const live1 = liveTensors();
    if (live0 !== null && live1 !== null && live1 !== live0)
      console.log(`    warning: ${live1 - live0} tensors still alive after ${c.name} ${c.label(n)}`);
    const out = { kd: { ...record(kBatch, kS), live_tensors_before: live0, live_tensors_after: live1 }, peers: {} };
    for (const p of sides) out.peers[p.which] = p.err ? { name: c.name, size: n, error: p.err } : record(p.batch, p.samples);
    return out;
  } catch (e) {
    if (state) try { c.teardown(state); } catch { /* already reported */ }
    await closeAll();
    const out = { kd: { name: c.name, size: n, error: String(e.message).split('\n')[0] }, peers: {} };
    for (const p of sides) out.peers[p.which] = { name: c.name, size: n, error: 'kindling failed' };
    return out;
  }
}

// ---- peers ------------------------------------------------------------------------------
function runStream() {
  const wanted = cases.some((c) => c.limit && c.limit.startsWith('stream.'));
  if (!wanted || cuda) return null;
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
  if (!sizes.length || cuda) return null;
  if (!opts.native) { skip('cblas_sgemm', '--no-native'); return null; }
  process.stdout.write(`  native cblas_sgemm ${sizes.join(', ')} ... `);
  const r = native.sgemm(threads, sizes, timing);
  if (r.error) { console.log('skipped'); skip('cblas_sgemm', r.error); return null; }
  console.log(`${r.blas.trim()}, ${r.threads} threads`);
  return r;
}

// Note [Interleaving]
// The peers are processes started once (bench/lib/peer.js) and asked for one (case, size) at a
// time. Kindling and PyTorch take their samples of a case in turn, one by one (Note [Paired
// samples] in bench/lib/timing.js), so load from other processes that comes and goes hits both
// sides of the ratio alike; tfjs (one thread, small sizes) measures right after them. The order
// alternates from sample to sample, from case to case and from round to round.
const live = { torch: null, tfjs: null }; // {peer, info} of the running peers

async function startPeers() {
  const wants = (p) => cases.some((c) => c.peers && c.peers[p]);
  if (wants('torch') || (cuda && opts.native)) {
    if (!opts.torch) skip('PyTorch', '--no-torch');
    else {
      process.stdout.write(`  PyTorch ${dev} ... `);
      const r = await startTorch({ threads, device: dev });
      if (r.error) { console.log('skipped'); skip('PyTorch', r.error); } else {
        live.torch = r;
        console.log(`torch ${r.info.torch}, ${r.info.threads} threads${r.info.gpu ? `, ${r.info.gpu}` : ''}, ` +
          `OMP_WAIT_POLICY=${r.info.omp_wait_policy || 'unset'} (${r.info.python})`);
      }
    }
  }
  if (wants('tfjs')) {
    if (cuda) skip('TensorFlow.js', 'CPU backend only; not a peer on --device cuda');
    else if (!opts.tfjs) skip('TensorFlow.js', '--no-tfjs');
    else {
      process.stdout.write('  TensorFlow.js cpu ... ');
      const r = await startTfjs({ capS: tfjsCapS }, (m) => process.stdout.write(m));
      if (r.error) { console.log('skipped'); skip('TensorFlow.js', r.error); } else {
        live.tfjs = r;
        console.log(`tfjs ${r.info.tfjs}, backend ${r.info.backend}, 1 thread (pure JS)`);
      }
    }
  }
}

const stopPeers = () => { for (const p of Object.values(live)) if (p) p.peer.close(); };

const tfjsOn = (c, size) => {
  const t = c.peers && c.peers.tfjs;
  return t === true || (t === 'full' && !opts.quick) || (typeof t === 'number' && size <= t);
};

/** Asks a peer for one measurement (or sends it a paired-sample request); a peer that died is dropped (said once). */
async function ask(which, label, nameOrRequest, size) {
  const p = live[which];
  if (!p) return { error: `${label} is not running` };
  const req = typeof nameOrRequest === 'object' ? nameOrRequest
    : { name: nameOrRequest, size, warmup_s: timing.warmupS, min_sample_s: timing.minSampleS, repeats: timing.repeats };
  const r = await p.peer.request(req);
  if (r.error && p.peer.dead) {
    skip(label, p.peer.dead);
    live[which] = null;
  }
  return r;
}

/** One round: every (case, size) on kindling and its peers in turn, then the native programs. */
async function runRound(r) {
  const round = { kindling: [] };
  for (const which of ['torch', 'tfjs']) if (live[which]) round[which] = { ...live[which].info, results: [] };
  const natives = () => { round.stream = runStream(); round.sgemm = runSgemm(); };
  if (r % 2) natives();
  let k = 0;
  for (const c of cases) {
    for (const n of c.runSizes) {
      const said = [];
      const say = (i, who, x) => { said[i] = `${who} ${x.error ? `failed: ${x.error}` : fmtTime(x.median_s, c.perCallUnit)}`; };
      const peers = [];
      if (live.torch && c.peers && c.peers.torch) peers.push({ which: 'torch', label: 'PyTorch', i: 1 });
      if (live.tfjs && tfjsOn(c, n)) peers.push({ which: 'tfjs', label: 'TensorFlow.js', i: 2 });
      process.stdout.write(`  ${c.name} ${c.label(n)}: `);
      if (kd) { // kindling and its peers, sample by sample
        const m = await measurePaired(c, n, (r + k++) % 2 ? [...peers].reverse() : peers);
        round.kindling.push(m.kd);
        say(0, 'kindling', m.kd);
        for (const p of peers) {
          if (round[p.which]) round[p.which].results.push(m.peers[p.which]);
          say(p.i, p.which, m.peers[p.which]);
        }
      }
      console.log(said.filter(Boolean).join(', '));
    }
  }
  if (cuda && opts.native && live.torch) {
    const x = await ask('torch', 'PyTorch', 'limit.d2d_copy', D2D_ELEMENTS);
    if (round.torch) round.torch.results.push(x);
    if (x.error) skip('device-to-device copy limit', x.error);
  }
  if (!(r % 2)) natives();
  return round;
}

/** The GPU's limit: device-to-device copy bandwidth, from PyTorch's copy_ (reads + writes). */
function d2dFrom(torch) {
  const r = torch && torch.results.find((x) => x.name === 'limit.d2d_copy' && !x.error);
  if (!r) return null;
  return { elements: r.size, median_s: r.median_s, gbps_median: (8 * r.size) / r.median_s / 1e9,
    gbps_best: (8 * r.size) / r.best_s / 1e9 };
}

// ---- rows ---------------------------------------------------------------------------------
function buildRows(kdResults, { torch, tfjs, sgemm, stream, d2d }) {
  const find = (list, name, size) => (list || []).find((r) => r.name === name && r.size === size && !r.error);
  const llc = cuda ? 64 << 20 : llcBytes(); // on a GPU: beyond its L2 (50 MiB on an H100)
  const rows = [];
  for (const c of cases) {
    for (const n of c.runSizes) {
      const k = find(kdResults, c.name, n);
      const kErr = !k && (kdResults || []).find((r) => r.name === c.name && r.size === n);
      const t = torch && find(torch.results, c.name, n);
      const j = tfjs && find(tfjs.results, c.name, n);
      const g = c.peers && c.peers.native === 'sgemm' && sgemm ? sgemm.results.find((r) => r.n === n) : null;
      const kRate = k && c.rate ? c.rate.of(n, k.median_s) : null;
      let limitPct = null;
      let limit = c.limit || null;
      const outOfCache = !c.bytes || !llc || c.bytes(n) >= 2 * llc;
      if (limit && cuda) limit = 'd2d.copy';
      if (limit && kRate !== null && outOfCache) {
        if (cuda && d2d) limitPct = (100 * kRate) / d2d.gbps_median;
        else if (!cuda && stream && stream[limit.split('.')[1]]) limitPct = (100 * kRate) / stream[limit.split('.')[1]].gbps_median;
      }
      // STREAM copy counts 8 bytes/element, an add 12: STREAM's add kernel is the like-for-like figure.
      const addPct = !cuda && limitPct !== null && stream.add ? (100 * kRate) / stream.add.gbps_median : null;
      rows.push({
        case: c.name,
        size: c.label(n),
        n,
        kindling_s: k ? k.median_s : null,
        kindling_error: kErr ? kErr.error : null,
        torch_s: t ? t.median_s : null,
        tfjs_s: j ? j.median_s : null,
        native_s: g ? g.median_s : null,
        kindling_rate: kRate,
        torch_rate: t && c.rate ? c.rate.of(n, t.median_s) : null,
        tfjs_rate: j && c.rate ? c.rate.of(n, j.median_s) : null,
        native_rate: g && c.rate ? c.rate.of(n, g.median_s) : null,
        rate_unit: c.rate ? c.rate.unit : null,
        limit,
        limit_pct: limitPct,
        stream_add_pct: addPct,
        in_cache: !outOfCache,
        // measured while the machine was loaded (Note [Loaded runs] in bench/lib/load.js)
        loaded: [k, t, j].some((x) => x && x.load && isLoaded(threads, ...x.load)),
        headline: !!(c.headline && c.headline.includes(n)),
        title: c.title,
        unit: c.perCallUnit || null,
      });
    }
  }
  return rows;
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
  const merge = (name, key) => {
    const list = rounds.map((r) => r[name]).filter(Boolean);
    return list.length ? { ...list[0], results: pick(list.map((x) => x.results), key) } : null;
  };
  const kdResults = pick(rounds.map((r) => r.kindling), byCase);
  const torch = merge('torch', byCase);
  const tfjs = merge('tfjs', byCase);
  const sgemm = merge('sgemm', (r) => r.n);
  const streams = rounds.map((r) => r.stream).filter(Boolean);
  const stream = streams.length ? streams.reduce((a, b) => (b.copy.gbps_median > a.copy.gbps_median ? b : a)) : null;
  return { kdResults, peers: { torch, tfjs, sgemm, stream, d2d: d2dFrom(torch) } };
}

/** Runs the suite (opts.rounds rounds): {rounds, kdResults, peers, rows}. */
async function runSuite() {
  const rounds = [];
  for (let r = 0; r < opts.rounds; r++) {
    if (opts.rounds > 1) console.log(`round ${r + 1} of ${opts.rounds}`);
    const round = await runRound(r);
    rounds.push(round);
    // native programs that cannot run will not run in later rounds (or the second run) either
    opts.native = opts.native && (!!round.stream || !!round.sgemm || cuda);
  }
  const { kdResults, peers } = bestOfRounds(rounds);
  return { rounds, kdResults, peers, rows: buildRows(kdResults, peers) };
}

// ---- the emulated GPU's counters ---------------------------------------------------------
// On the emulated GPU (KINDLING_CUDA=emulate) timings are CPU timings, not GPU ones; what stands
// in for GPU performance is what each call asks of the device: kernel launches, device syncs and
// host<->device copies per call (kd.cuda.emulator.stats(), Note [Emulator counters]).
/** Per case and size: launches, syncs and copies of one call (after a warm-up call). */
async function countEmulated() {
  const out = [];
  for (const c of cases) {
    for (const n of c.runSizes) {
      let state = null;
      try {
        state = c.setup(kd, n, dev);
        await c.run(state); // warm-up: handles, workspaces, cached blocks
        await kd.cuda.synchronize();
        const a = kd.cuda.emulator.stats();
        await c.run(state);
        await kd.cuda.synchronize();
        const b = kd.cuda.emulator.stats();
        const d = (k) => b[k] - a[k]; // kd.cuda.synchronize() waits through a host function: no sync counted
        out.push({ case: c.name, size: c.label(n), launches: d('launches'), syncs: d('syncs'),
          h2d: d('copiesHostToDevice'), d2h: d('copiesDeviceToHost') });
      } catch (e) {
        out.push({ case: c.name, size: c.label(n), error: e.message });
      } finally {
        if (state && c.teardown) c.teardown(state);
      }
    }
  }
  return out;
}

function formatCounters(list) {
  const lines = ['emulated GPU, per call (what each call asks of the device; the emulator measures no GPU time):',
    `${'case'.padEnd(24)} ${'size'.padEnd(12)} ${'launches'.padStart(8)} ${'syncs'.padStart(6)} ${'H2D'.padStart(4)} ${'D2H'.padStart(4)}`];
  for (const r of list) {
    lines.push(r.error ? `${r.case.padEnd(24)} ${r.size.padEnd(12)} failed: ${r.error}`
      : `${r.case.padEnd(24)} ${r.size.padEnd(12)} ${String(r.launches).padStart(8)} ${String(r.syncs).padStart(6)} ` +
        `${String(r.h2d).padStart(4)} ${String(r.d2h).padStart(4)}`);
  }
  return lines.join('\n');
}

// ---- main -------------------------------------------------------------------------------
function machineLine(machine, peers, gpu) {
  const { torch, tfjs, sgemm } = peers;
  return `${machine.cpu}; ${machine.logicalCpus} logical CPUs; SIMD ${machine.simd.join(' ') || '?'}; ` +
    `LLC ${machine.llcBytes ? `${machine.llcBytes >> 20} MiB` : '?'}; ${(machine.memoryBytes / 2 ** 30).toFixed(0)} GiB; ` +
    `${gpu ? `GPU ${gpu}; ` : ''}${machine.os}; node ${machine.node}${torch ? `; torch ${torch.torch}` : ''}` +
    `${tfjs ? `; tfjs ${tfjs.tfjs}` : ''}${sgemm ? `; ${sgemm.blas.trim()}` : ''}; threads ${threads}; commit ${machine.commit || 'none'}`;
}

function limitLines(peers) {
  const { stream, d2d } = peers;
  const out = [];
  if (stream) {
    out.push(`STREAM (${threads} threads, float32 arrays of ${(stream.elements / (1 << 20)).toFixed(0)}M): ` +
      ['copy', 'triad', 'add'].map((k) => `${k} ${stream[k].gbps_median.toFixed(1)} GB/s (best ${stream[k].gbps_best.toFixed(1)})`).join(', '));
  }
  if (d2d) out.push(`device-to-device copy (PyTorch copy_, ${d2d.elements >> 18} MiB): ${d2d.gbps_median.toFixed(0)} GB/s (best ${d2d.gbps_best.toFixed(0)})`);
  return out;
}

async function main() {
  const machine = describeMachine(root);
  let gpu = null;
  if (cuda) try { gpu = kd.cuda.getDeviceName(); } catch { gpu = 'cuda'; }
  machine.gpu = gpu;
  const started = new Date();
  console.log(`kindling bench${opts.quick ? ' (quick)' : ''} on ${dev}${gpu ? ` (${gpu})` : ''}: ${cases.map((c) => c.name).join(', ')}`);
  console.log(`  machine: ${machine.cpu}, ${machine.logicalCpus} logical CPUs` +
    `${machine.physicalCores ? ` (${machine.physicalCores} cores)` : ''}, threads: ${threads} ` +
    `(KINDLING_NUM_THREADS = OPENBLAS_NUM_THREADS = OMP_NUM_THREADS = torch.set_num_threads)`);
  const loadBefore = readLoad();
  console.log(`  ${formatLoad(loadSpan(threads, loadBefore, undefined), threads)}`);
  for (const u of unavailable) skip(u.what, u.reason);

  if (emulated) { // timings of the emulator would be CPU timings: count instead (countEmulated)
    const counters = await countEmulated();
    console.log(`\n${formatCounters(counters)}`);
    const file = opts.out ? path.resolve(opts.out)
      : path.join(root, 'bench', 'out', `${started.toISOString().replace(/:/g, '-').replace(/\.\d+Z$/, 'Z')}-emulated-gpu.json`);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, JSON.stringify({ date: started.toISOString(), device: dev, emulated_gpu: true, machine,
      kindling: { build: kd.build, version: kd.version }, emulated_gpu_counters: counters }, null, 1) + '\n');
    console.log(`results: ${path.relative(process.cwd(), file)}`);
    return;
  }
  await startPeers();
  const first = await runSuite();
  let second = null;
  if (opts.checkRepeat) {
    console.log('check-repeat: second run');
    second = await runSuite();
  }
  stopPeers();
  const final = second || first;
  const { rows, peers } = final;
  const load = loadSpan(threads, loadBefore, readLoad());
  const loadLine = formatLoad(load, threads, LOADED_MARK);

  console.log('');
  console.log(formatTable(rows, opts.markdown));
  console.log(loadLine);
  for (const l of limitLines(peers)) console.log(`\n${l}`);
  console.log(`machine: ${machineLine(machine, peers, gpu)}`);
  for (const s of skipped) console.log(`skipped ${s.what}: ${s.reason}`);
  const heads = formatHeadlines(rows);
  if (heads.length) console.log(`\nheadlines (median):\n${heads.join('\n')}`);
  let repeat = null;
  if (second) {
    repeat = compareRuns(first.rows, second.rows);
    console.log(`\n${formatRepeat(repeat).join('\n')}`);
  }

  const stamp = started.toISOString().replace(/:/g, '-').replace(/\.\d+Z$/, 'Z');
  const file = opts.out ? path.resolve(opts.out) : path.join(root, 'bench', 'out', `${stamp}${cuda ? '-cuda' : ''}.json`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const report = {
    date: started.toISOString(),
    device: dev,
    quick: opts.quick,
    filter: opts.filter,
    threads,
    rounds: opts.rounds,
    timing,
    tfjs_cap_s: tfjsCapS,
    machine: { ...machine, loadAverageAfter: os.loadavg() },
    load,
    kindling: { loaded: !!kd, build: kd ? kd.build : null, version: kd ? kd.version : null, results: final.kdResults },
    peers,
    rows,
    all_rounds: opts.rounds > 1 ? final.rounds : undefined,
    check_repeat: second ? { first_rows: first.rows, first_kindling: first.kdResults, first_peers: first.peers,
      first_rounds: opts.rounds > 1 ? first.rounds : undefined, comparison: repeat } : undefined,
    skipped,
  };
  fs.writeFileSync(file, JSON.stringify(report, null, 1) + '\n');
  const svgFile = file.replace(/\.json$/, '') + '.svg';
  const title = `kindling vs peers on ${dev}${opts.quick ? ' (quick)' : ''}: time ratio, ${started.toISOString().slice(0, 10)}`;
  const subtitle = `${machine.cpu}${gpu ? `, ${gpu}` : ''}, ${threads} threads, commit ${machine.commit || 'none'}`;
  fs.writeFileSync(svgFile, renderChart(rows, { title, subtitle }));
  console.log(`results: ${path.relative(process.cwd(), file)}`);
  console.log(`chart:   ${path.relative(process.cwd(), svgFile)}`);

  if (opts.updateResults) {
    const body = [
      `## ${machine.cpu}, ${machine.logicalCpus} logical CPUs${gpu ? `, ${gpu}` : ''}, ${dev}: ${started.toISOString().slice(0, 10)}, commit ${machine.commit || 'none'}`,
      '',
      `\`npm run bench -- ${process.argv.slice(2).filter((a) => a !== '--update-results').join(' ')}\`` +
        ` (${opts.rounds} round${opts.rounds > 1 ? 's' : ''}${opts.quick ? ', quick' : ''}). ${machineLine(machine, peers, gpu)}.`,
      '',
      formatTable(rows, true),
      '',
      `${loadLine[0].toUpperCase()}${loadLine.slice(1)}.`,
      '',
      ...limitLines(peers).map((l) => `${l}\n`),
      ...(heads.length ? ['Headlines (median):', '', ...heads.map((h) => `- ${h.trim()}`), ''] : []),
      ...(skipped.length ? ['Skipped:', '', ...skipped.map((s) => `- ${s.what}: ${s.reason}`), ''] : []),
      ...(repeat ? ['Repeatability (`--check-repeat`):', '', '```', ...formatRepeat(repeat), '```', ''] : []),
    ].join('\n');
    const f = updateResults(machineKey(machine, dev, gpu), body);
    console.log(`updated: ${path.relative(process.cwd(), f)}`);
  }
}

main().catch((e) => {
  stopPeers();
  console.error(`bench: ${e.stack || e}`);
  process.exit(1);
});
