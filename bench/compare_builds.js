#!/usr/bin/env node
// compare_builds.js - two kindling builds timed against each other on the CPU cases of the bench
// (bench/cases.js, --quick sizes unless --full), e.g. the prebuilt package against a source build
// of the same commit compiled with -march=native, or a change against main:
//   node bench/compare_builds.js --a DIR --b DIR [--rounds 3] [--full] [--filter text] [--threads n] [--json FILE]
// DIR is a kindling checkout (with its build) or an installed package (node_modules/kindling).
// Each build runs in a peer process of its own (bench/peers/kindling_peer.js), so both load
// their own addon and BLAS. The two take their samples of a case in turn, one by one, the side
// going first alternating from sample to sample, case to case and round to round (Note [Paired
// samples] in bench/lib/timing.js); each side keeps its best median over the rounds (Note
// [Rounds] in bench/run.js). Prints per case the two times and a/b, and how many ratios are
// within --tolerance (default 5%). Never fails on time.
'use strict';

const os = require('node:os');
const fs = require('node:fs');
const path = require('node:path');
const { parseArgs } = require('node:util');
const { LinePeer } = require('./lib/peer');
const { median } = require('./lib/timing');
const { describeMachine } = require('./lib/machine');
const { fmtTime } = require('./lib/format');
const { readLoad, loadSpan, formatLoad } = require('./lib/load');
const CASES = require('./cases');

const { values: opts } = parseArgs({
  options: {
    a: { type: 'string' }, b: { type: 'string' }, rounds: { type: 'string', default: '3' },
    full: { type: 'boolean', default: false }, filter: { type: 'string' }, threads: { type: 'string' },
    tolerance: { type: 'string', default: '0.05' }, json: { type: 'string' }, help: { type: 'boolean', default: false },
  },
});
if (opts.help || !opts.a || !opts.b) {
  console.log('usage: node bench/compare_builds.js --a DIR --b DIR [--rounds 3] [--full] [--filter text] [--threads n] [--tolerance 0.05] [--json FILE]');
  process.exit(opts.help ? 0 : 2);
}
const threads = Number(opts.threads || process.env.KINDLING_NUM_THREADS || os.cpus().length);
const env = { ...process.env, KINDLING_NUM_THREADS: String(threads), OPENBLAS_NUM_THREADS: String(threads), OMP_NUM_THREADS: String(threads) };
if (!env.OPENBLAS_THREAD_TIMEOUT) env.OPENBLAS_THREAD_TIMEOUT = '22'; // as bench/run.js
delete env.KINDLING_CPU_CAPABILITY; // each build at the level it picks itself
const timing = opts.full ? { warmupS: 0.1, minSampleS: 0.05, repeats: 11, settleS: 0.01 } : { warmupS: 0.03, minSampleS: 0.02, repeats: 7, settleS: 0.002 };
const rounds = Number(opts.rounds);
const cases = CASES.filter((c) => !opts.filter || opts.filter.split('|').some((f) => c.name.includes(f)));
const tolerance = Number(opts.tolerance);

async function start(label, dir) {
  const root = path.resolve(dir);
  const peer = new LinePeer(`kindling (${label})`, process.execPath, [path.join(__dirname, 'peers', 'kindling_peer.js')], env);
  const hello = await peer.request({ root, threads });
  if (hello.error) throw new Error(`${label}: ${hello.error}`);
  return { label, peer, hello };
}

/** One (case, size) on both sides, samples in turn; {side label -> median seconds | {error}}. */
async function measure(sides, c, n, flip) {
  const out = {};
  const open = [];
  for (const s of sides) {
    const o = await s.peer.request({ op: 'open', name: c.name, size: n, warmup_s: timing.warmupS, min_sample_s: timing.minSampleS });
    if (o.error) out[s.label] = { error: o.error }; else open.push({ s, samples: [] });
  }
  for (let r = 0; r < timing.repeats; r++) {
    const order = (r + flip) % 2 ? [...open].reverse() : open;
    for (const o of order) {
      const x = await o.s.peer.request({ op: 'sample', settle_s: timing.settleS });
      if (x.error) out[o.s.label] = { error: x.error }; else o.samples.push(x.sample_s);
    }
  }
  for (const o of open) {
    await o.s.peer.request({ op: 'close' });
    if (!out[o.s.label]) out[o.s.label] = median(o.samples);
  }
  return out;
}

async function main() {
  const machine = describeMachine(path.resolve(__dirname, '..'));
  const sides = [await start('a', opts.a), await start('b', opts.b)];
  for (const s of sides) console.log(`${s.label}: ${s.hello.root} (${s.hello.binary} ${s.hello.binaryPath || ''}; ${s.hello.cpuCapability}; ${s.hello.blas})`);
  const loadBefore = readLoad();
  console.log(`${rounds} round(s) of ${cases.length} cases (${opts.full ? 'all' : 'quick'} sizes), ${threads} threads`);
  const best = new Map(); // `${name} ${size}` -> {c, n, a, b}
  let k = 0;
  for (let r = 0; r < rounds; r++) {
    for (const c of cases) {
      for (const n of opts.full ? c.sizes : c.quickSizes || c.sizes) {
        const key = `${c.name} ${c.label(n)}`;
        const m = await measure(r % 2 ? [...sides].reverse() : sides, c, n, k++);
        const cur = best.get(key) || { c, n, a: Infinity, b: Infinity, errors: [] };
        for (const s of ['a', 'b']) {
          if (typeof m[s] === 'number') cur[s] = Math.min(cur[s], m[s]);
          else cur.errors.push(`${s}: ${m[s].error}`);
        }
        best.set(key, cur);
        if (process.stdout.isTTY) process.stdout.write(`\r  round ${r + 1}/${rounds}: ${key}`.padEnd(70));
      }
    }
  }
  if (process.stdout.isTTY) process.stdout.write('\r'.padEnd(72) + '\r');
  for (const s of sides) s.peer.close();
  const rows = [];
  console.log(`| case | a | b | a/b |\n|---|---:|---:|---:|`);
  for (const [key, v] of best) {
    if (v.errors.length && !(Number.isFinite(v.a) && Number.isFinite(v.b))) { console.log(`| ${key} | ${v.errors[0]} | | |`); continue; }
    const ratio = v.a / v.b;
    rows.push({ case: key, a_s: v.a, b_s: v.b, ratio });
    const unit = v.c.perCallUnit;
    console.log(`| ${key} | ${fmtTime(v.a, unit)} | ${fmtTime(v.b, unit)} | ${ratio.toFixed(3)}${Math.abs(ratio - 1) > tolerance ? ' *' : ''} |`);
  }
  const load = loadSpan(threads, loadBefore, readLoad());
  console.log(`\n${formatLoad(load, threads)}`);
  const within = rows.filter((r) => Math.abs(r.ratio - 1) <= tolerance).length;
  const geo = Math.exp(rows.reduce((s, r) => s + Math.log(r.ratio), 0) / rows.length);
  console.log(`\n${within} of ${rows.length} ratios within ${(tolerance * 100).toFixed(0)}% (* outside); geometric mean a/b ${geo.toFixed(3)}; ` +
    `best of ${rounds} rounds' medians. ${machine.cpu}, ${machine.logicalCpus} CPUs, ${machine.node}.`);
  if (opts.json) fs.writeFileSync(opts.json, JSON.stringify({ machine, sides: sides.map((s) => s.hello), rounds, timing, rows, load }, null, 1));
}

main().catch((e) => { console.error(`compare_builds: ${e.message}`); process.exit(1); });
