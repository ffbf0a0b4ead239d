#!/usr/bin/env node
// Used by binding.gyp: prints C sources under src/ (one per line), so adding a file to the core
// never means editing the build.
//   node tools/list-sources.js             every .c file but the dispatched ones (compiled once)
//   node tools/list-sources.js dispatched  the hot kernel files compiled once per CPU level
//                                          (Note [CPU capability dispatch] in src/cpu/cpu_capability.h)
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const root = path.resolve(__dirname, '..');

// Their symbols are renamed per level by src/cpu/cpu_level.h and reached through src/cpu/cpu_dispatch.c.
const DISPATCHED_SOURCES = [
  'src/cpu/binary.c', 'src/cpu/unary.c', 'src/cpu/ternary.c', 'src/cpu/reduce.c', 'src/cpu/softmax.c',
  'src/cpu/norm.c', 'src/cpu/copy.c', 'src/cpu/pool.c', 'src/cpu/gemm_bf16.c', 'src/cpu/scan.c', 'src/cpu/index_loops.c',
  'src/cpu/optim.c', 'src/cpu/gemm_bf16_amx.c', 'src/cpu/rnn_cell.c', 'src/cpu/qlinear.c', 'src/cpu/attention_loops.c',
];

function walk(dir, out) {
  for (const e of fs.readdirSync(path.join(root, dir), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const rel = path.posix.join(dir, e.name);
    if (e.isDirectory()) walk(rel, out);
    else if (e.name.endsWith('.c')) out.push(rel);
  }
  return out;
}

if (require.main === module) {
  const dispatched = process.argv[2] === 'dispatched';
  process.stdout.write(walk('src', []).filter((f) => DISPATCHED_SOURCES.includes(f) === dispatched).join('\n'));
}
module.exports = { DISPATCHED_SOURCES };
