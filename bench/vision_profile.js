#!/usr/bin/env node
// vision_profile.js - where one forward of a torchvision model (examples/vision/models) spends
// its time: kd.profiler's table of ops (total ms and calls), then the convolutions by kind
// (k x k dense, 1x1, depthwise) with their share of the forward. One warm-up forward first.
//   node bench/vision_profile.js [--model resnet18] [--batch 1] [--size 224] [--device cpu]
'use strict';

const kd = require('..');
const vision = require('../examples/vision/models')(kd);

const argv = process.argv.slice(2);
const flag = (name, dflt) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : dflt);
const arch = flag('--model', 'resnet18');
const n = Number(flag('--batch', 1));
const size = Number(flag('--size', 224));
const device = flag('--device', 'cpu');

kd.manualSeed(0);
const model = vision.getModel(arch).eval().to(device);
const x = kd.randn([n, 3, size, size]).to(device);
const forward = () => kd.inferenceMode(() => model(x)).dispose();
forward();
const t0 = process.hrtime.bigint();
const prof = kd.profiler.profile({ recordShapes: true, activities: device === 'cpu' ? ['cpu'] : ['cpu', 'cuda'] }, forward);
const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;

console.log(`${arch}, batch ${n}, ${size}x${size}, ${device}: one forward ${wallMs.toFixed(1)} ms (profiled)`);
console.log(prof.keyAverages().table({ sortBy: 'cpu_time_total', rowLimit: 12 }));

const kinds = new Map();
for (const e of prof.events()) {
  if (e.name !== 'aten::conv2d' || !e.inputShapes || !e.inputShapes[1]) continue;
  const w = e.inputShapes[1];
  const kind = w[1] === 1 && w[0] > 1 ? `depthwise ${w[2]}x${w[3]}` : `dense ${w[2]}x${w[3]}`;
  const k = kinds.get(kind) || { calls: 0, ms: 0 };
  k.calls++;
  k.ms += e.cpuTimeTotal / 1000;
  kinds.set(kind, k);
}
console.log('conv2d by kind:');
for (const [kind, k] of [...kinds].sort((a, b) => b[1].ms - a[1].ms)) {
  console.log(`  ${kind.padEnd(14)} ${String(k.calls).padStart(4)} calls  ${k.ms.toFixed(1).padStart(8)} ms  ${(100 * k.ms / wallMs).toFixed(1).padStart(5)}% of the forward`);
}
