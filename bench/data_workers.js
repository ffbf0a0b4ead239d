#!/usr/bin/env node
// data_workers.js - DataLoader numWorkers 0 vs 1 vs 2: one pass over a dataset whose get(i) costs
// CPU time (a stand-in for decoding an image: `--work` sin/cos evaluations per sample, then a
// 784-float sample), collated into batches of --batch, while the loop body does nothing. With
// workers the samples are made in worker threads and the batches' buffers transferred; the
// numbers say how much of the per-sample work leaves the main thread, and what a batch costs to
// cross threads when the per-sample work is 0.
//
//   node bench/data_workers.js [--n 4096] [--batch 64] [--work 20000] [--passes 3]
// Prints the best pass per loader (passes interleaved so machine load hits them alike).
'use strict';

const kd = require('..');

const args = process.argv.slice(2);
const opt = (name, def) => { const i = args.indexOf(`--${name}`); return i >= 0 ? Number(args[i + 1]) : def; };
const N = opt('n', 4096);
const BATCH = opt('batch', 64);
const WORK = opt('work', 20000);
const PASSES = opt('passes', 3);

// The dataset, as a self-contained factory so worker threads can load it too.
const factory = `() => new (class extends kd.data.Dataset {
  get length() { return ${N}; }
  get(i) {
    let acc = 0;
    for (let k = 0; k < ${WORK}; k++) acc += Math.sin(i + k) * Math.cos(k);
    const x = new Float32Array(784);
    for (let k = 0; k < 784; k++) x[k] = acc + k;
    return [x, i % 10];
  }
})()`;
// eslint-disable-next-line no-new-func
const make = new Function('kd', `return ${factory};`)(kd);

async function pass(loader) {
  const t0 = performance.now();
  let n = 0;
  for await (const [x, y] of loader) { n += x.shape[0]; x.dispose(); y.dispose(); }
  if (n !== N) throw new Error(`saw ${n} samples`);
  return performance.now() - t0;
}

async function main() {
  const loaders = {
    'numWorkers 0': new kd.data.DataLoader(make(), { batchSize: BATCH, prefetch: 0 }),
    'numWorkers 1': new kd.data.DataLoader(make, { batchSize: BATCH, numWorkers: 1, persistentWorkers: true }),
    'numWorkers 2': new kd.data.DataLoader(make, { batchSize: BATCH, numWorkers: 2, persistentWorkers: true }),
  };
  const best = {};
  for (let p = 0; p < PASSES + 1; p++) { // the first pass starts the workers: not counted
    for (const [name, l] of Object.entries(loaders)) {
      const ms = await pass(l);
      if (p > 0) best[name] = Math.min(best[name] ?? Infinity, ms);
    }
  }
  console.log(`${N} samples, batch ${BATCH}, ${WORK} sin/cos per sample; best of ${PASSES} passes`);
  for (const [name, ms] of Object.entries(best)) console.log(`  ${name.padEnd(13)} ${ms.toFixed(1).padStart(8)} ms  ${(N / ms * 1000).toFixed(0).padStart(7)} samples/s`);
  for (const l of Object.values(loaders)) await l.shutdown();
}

main().catch((e) => { console.error(e); process.exit(1); });
