#!/usr/bin/env node
// epoch.js - time per training epoch of the Fashion-MNIST example (issue 7): kindling's
// examples/fashion-mnist/train.js against its PyTorch twin (bench/peers/fashion_mnist_torch.py:
// same data, model, batch size, shuffling, Adam + cosine schedule, per-epoch test evaluation),
// each run as its own process, alternating kindling / PyTorch for --rounds rounds so that load
// from elsewhere hits both alike. An epoch's time is the training loop only (data loading and
// batching included, test evaluation excluded), as both programs report it.
//
//   node bench/epoch.js [--model cnn|mlp] [--epochs 1] [--rounds 2] [--batch-size 64]
//                       [--threads N] [--device cpu|cuda] [--markdown]
//
// Prints per side the best and the median epoch over all rounds, the ratio kindling/PyTorch of
// the best epochs, CPU seconds per epoch and the test accuracy after the last epoch; writes
// everything to bench/out/epoch-<date>.json. Needs the dataset (apt-get install
// dataset-fashion-mnist) and, for the peer, python3 with torch (else it is skipped, with the reason).
'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { parseArgs } = require('node:util');
const { describeMachine } = require('./lib/machine');
const { passiveOpenMP, readLoad, loadSpan, formatLoad } = require('./lib/load');

const root = path.join(__dirname, '..');
const { values: o } = parseArgs({
  options: {
    model: { type: 'string', default: 'cnn' },
    epochs: { type: 'string', default: '1' },
    rounds: { type: 'string', default: '2' },
    'batch-size': { type: 'string', default: '64' },
    threads: { type: 'string' },
    device: { type: 'string', default: 'cpu' },
    markdown: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (o.help) {
  console.log(fs.readFileSync(__filename, 'utf8').split('\n').slice(1, 15).map((l) => l.replace(/^\/\/ ?/, '')).join('\n'));
  process.exit(0);
}
const threads = Number(o.threads || process.env.KINDLING_NUM_THREADS || os.cpus().length);
// PyTorch's OpenMP threads wait passively: Note [Passive OpenMP peers] in bench/lib/load.js
const env = passiveOpenMP({ ...process.env, KINDLING_NUM_THREADS: String(threads), OPENBLAS_NUM_THREADS: String(threads),
  OMP_NUM_THREADS: String(threads), MKL_NUM_THREADS: String(threads) });
if (!env.OPENBLAS_THREAD_TIMEOUT) env.OPENBLAS_THREAD_TIMEOUT = '22'; // as bench/run.js: see bench/RESULTS.md
const common = ['--model', o.model, '--epochs', o.epochs, '--batch-size', o['batch-size'], '--threads', String(threads),
  '--device', o.device];

/** kindling's epochs: train.js writes its per-epoch history next to the weights. */
function runKindling() {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-epoch-'));
  try {
    const r = spawnSync(process.execPath, [path.join(root, 'examples', 'fashion-mnist', 'train.js'), ...common,
      '--quiet', '--out', out], { env, encoding: 'utf8' });
    if (r.status !== 0) return { error: (r.stderr || r.stdout || `exit ${r.status}`).trim().split('\n').pop() };
    return { epochs: JSON.parse(fs.readFileSync(path.join(out, `fashion-mnist-${o.model}-history.json`), 'utf8')).history };
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
}

/** PyTorch's epochs, one JSON line each; `{error}` when there is no python with torch. */
function runTorch() {
  const py = process.env.KINDLING_BENCH_PYTHON || '/usr/bin/python3';
  const probe = spawnSync(py, ['-c', 'import torch'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) return { error: `${py} cannot import torch` };
  const r = spawnSync(py, [path.join(__dirname, 'peers', 'fashion_mnist_torch.py'), ...common], { env, encoding: 'utf8' });
  if (r.status !== 0) return { error: (r.stderr || r.stdout || `exit ${r.status}`).trim().split('\n').pop() };
  return { epochs: r.stdout.trim().split('\n').map((l) => JSON.parse(l)) };
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };

function main() {
  const machine = describeMachine(root);
  const loadBefore = readLoad();
  console.log(`load average ${machine.loadAverage.map((x) => x.toFixed(2)).join(' ')}; ${o.model}, batch ${o['batch-size']}, ` +
    `${o.epochs} epoch(s) x ${o.rounds} rounds, ${threads} threads, device ${o.device}`);
  const sides = { kindling: [], torch: [] };
  const errors = {};
  for (let r = 0; r < Number(o.rounds); r++) {
    const order = r % 2 === 0 ? ['kindling', 'torch'] : ['torch', 'kindling'];
    for (const side of order) {
      if (errors[side]) continue;
      const res = side === 'kindling' ? runKindling() : runTorch();
      if (res.error) { errors[side] = res.error; console.log(`${side}: skipped (${res.error})`); continue; }
      sides[side].push(...res.epochs.map((e) => ({ ...e, round: r })));
      const last = res.epochs[res.epochs.length - 1];
      console.log(`round ${r + 1} ${side.padEnd(8)} ${res.epochs.map((e) => `${e.seconds.toFixed(2)} s`).join(', ')}` +
        ` (test acc ${last.testAcc.toFixed(4)})`);
    }
  }
  if (errors.kindling) { console.error(`kindling failed: ${errors.kindling}`); process.exit(1); }
  const stat = (es) => es.length ? {
    best: Math.min(...es.map((e) => e.seconds)), median: median(es.map((e) => e.seconds)),
    cpu: median(es.map((e) => e.cpuSeconds)), acc: es[es.length - 1].testAcc,
  } : null;
  const k = stat(sides.kindling), t = stat(sides.torch);
  const rows = [['side', 'best epoch', 'median epoch', 'CPU s / epoch', 'images/s (best)', 'test acc (last)'],
    ...[['kindling', k], ['PyTorch', t]].filter(([, s]) => s).map(([name, s]) => [name, `${s.best.toFixed(2)} s`,
      `${s.median.toFixed(2)} s`, s.cpu.toFixed(1), (60000 / s.best).toFixed(0), s.acc.toFixed(4)])];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  if (o.markdown) {
    console.log(`\n| ${rows[0].join(' | ')} |\n|${rows[0].map(() => '---').join('|')}|`);
    for (const r of rows.slice(1)) console.log(`| ${r.join(' | ')} |`);
  } else {
    console.log('');
    for (const [i, r] of rows.entries()) {
      console.log(r.map((c, j) => c.padStart(widths[j])).join('  '));
      if (i === 0) console.log(widths.map((w) => '-'.repeat(w)).join('  '));
    }
  }
  const load = loadSpan(threads, loadBefore, readLoad());
  console.log(`\n${formatLoad(load, threads)}`);
  const ratio = t ? k.best / t.best : null;
  console.log(ratio ? `\nkindling/PyTorch, best epoch: ${ratio.toFixed(2)}x (median epochs: ${(k.median / t.median).toFixed(2)}x)` :
    `\nPyTorch skipped: ${errors.torch}`);
  console.log(`machine: ${machine.cpu}; ${machine.logicalCpus} logical CPUs; ${machine.os}; node ${machine.node}; ` +
    `threads ${threads}; commit ${machine.commit || 'none'}`);
  const outDir = path.join(__dirname, 'out');
  fs.mkdirSync(outDir, { recursive: true });
  const file = path.join(outDir, `epoch-${new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19)}Z.json`);
  fs.writeFileSync(file, `${JSON.stringify({ options: o, threads, machine, kindling: sides.kindling, torch: sides.torch,
    errors, ratio, load }, null, 1)}\n`);
  console.log(`results: ${path.relative(process.cwd(), file)}`);
}

main();
