#!/usr/bin/env node
// cpu_levels.js - a few hot CPU ops at each CPU capability level (Note [CPU capability dispatch]
// in src/cpu/cpu_capability.h), each level in its own process (KINDLING_CPU_CAPABILITY), with the
// timing rule of bench/lib/timing.js. Rounds alternate the order of the levels and keep each
// level's best median, as bench/run.js does (Note [Rounds]): the machine may be shared.
//   node bench/cpu_levels.js [--rounds 3] [--ref DIR]
// --ref DIR adds another kindling checkout with its own build (e.g. one built with -march=native)
// as a column, run at its own default level.
'use strict';

const { spawnSync } = require('node:child_process');
const path = require('node:path');

const CASES = {
  'add f32 [1M]': (kd) => { const a = kd.ones([1 << 20]), b = kd.ones([1 << 20]); return () => a.add(b); },
  'add bf16 [1M]': (kd) => { const a = kd.ones([1 << 20], { dtype: 'bfloat16' }), b = kd.ones([1 << 20], { dtype: 'bfloat16' }); return () => a.add(b); },
  'exp f32 [1M]': (kd) => { const a = kd.ones([1 << 20]); return () => kd.exp(a); },
  'sum f32 [4M]': (kd) => { const a = kd.ones([1 << 22]); return () => a.sum(); },
  'sum f32 [1024,1024] dim 0': (kd) => { const a = kd.ones([1024, 1024]); return () => a.sum(0); },
  'softmax f32 [256,4096]': (kd) => { const a = kd.ones([256, 4096]); return () => kd.softmax(a, 1); },
  'layerNorm f32 [256,4096]': (kd) => { const a = kd.ones([256, 4096]); return () => kd.nn.functional.layerNorm(a, [4096]); },
  'to f16 f32 [1M]': (kd) => { const a = kd.ones([1 << 20]); return () => a.to('float16'); },
  'maxPool2d f32 [8,32,64,64] k3s2': (kd) => { const a = kd.ones([8, 32, 64, 64]); return () => kd.nn.functional.maxPool2d(a, 3, 2); },
  'matmul bf16 512x512x512': (kd) => { const a = kd.ones([512, 512], { dtype: 'bfloat16' }), b = kd.ones([512, 512], { dtype: 'bfloat16' }); return () => kd.matmul(a, b); },
  'conv2d f32 [8,32,56,56] w[64,32,3,3]': (kd) => { const x = kd.ones([8, 32, 56, 56]), w = kd.ones([64, 32, 3, 3]); return () => kd.nn.functional.conv2d(x, w, null, 1, 1); },
};

function child() {
  const { prepare, sample, median } = require('./lib/timing');
  const kd = require(path.join(process.env.KD_BENCH_ROOT, 'lib'));
  const out = { level: kd.build.cpuCapability || 'native', ms: {} };
  for (const [name, make] of Object.entries(CASES)) {
    const op = make(kd);
    const fn = () => op().dispose();
    const batch = prepare(fn, { warmupS: 0.2, minSampleS: 0.05 });
    const samples = [];
    for (let i = 0; i < 7; i++) samples.push(sample(fn, batch));
    out.ms[name] = median(samples) * 1e3;
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}

function main() {
  const args = process.argv.slice(2);
  const opt = (name, dflt) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : dflt; };
  const rounds = Number(opt('--rounds', 3));
  const ref = opt('--ref', null);
  const root = path.resolve(__dirname, '..');
  const configs = [
    ...['default', 'avx2', 'avx512'].map((level) => ({ name: level, root, level })),
    ...(ref ? [{ name: `ref (${path.basename(path.resolve(ref))})`, root: path.resolve(ref), level: undefined }] : []),
  ];
  const best = {};
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 ? [...configs].reverse() : configs;
    for (const c of order) {
      const env = { ...process.env, KD_BENCH_ROOT: c.root };
      if (c.level) env.KINDLING_CPU_CAPABILITY = c.level;
      else delete env.KINDLING_CPU_CAPABILITY;
      const p = spawnSync(process.execPath, [__filename, '--child'], { env, encoding: 'utf8' });
      if (p.status !== 0) { console.error(`${c.name}: ${p.stderr}`); process.exit(1); }
      const res = JSON.parse(p.stdout.trim().split('\n').pop());
      if (c.level && res.level !== c.level) { console.error(`${c.name}: ran at ${res.level}`); process.exit(1); }
      best[c.name] ??= {};
      for (const [k, v] of Object.entries(res.ms)) best[c.name][k] = Math.min(best[c.name][k] ?? Infinity, v);
    }
  }
  const names = configs.map((c) => c.name);
  console.log(`| op (ms, best of ${rounds} rounds' medians) | ${names.join(' | ')} |`);
  console.log(`|---|${names.map(() => '---:').join('|')}|`);
  for (const k of Object.keys(CASES)) console.log(`| ${k} | ${names.map((n) => best[n][k].toFixed(3)).join(' | ')} |`);
  console.log(`\nload average: ${require('node:os').loadavg().map((x) => x.toFixed(1)).join(' ')}, ${require('node:os').cpus().length} CPUs`);
}

if (process.argv[2] === '--child') child();
else main();
