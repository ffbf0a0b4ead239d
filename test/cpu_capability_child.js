// cpu_capability_child.js - run by test/cpu_capability.test.js in a child process with
// KINDLING_CPU_CAPABILITY set (Note [CPU capability dispatch]): runs the PyTorch fixture cases of
// the families whose kernels are compiled per CPU level, and computes a probe of large inputs
// (long enough for the vector loops and their tails, and for the parallel paths) of every
// dispatched kernel family. Prints one JSON line: the level in use, the failed fixture cases,
// and the probe's values.
'use strict';

const { kd, fixture, runOpCase } = require('./helpers');

const FAMILIES = ['binary', 'unary', 'pointwise', 'reductions', 'nn', 'conv', 'matmul', 'indexing'];

const failures = [];
let cases = 0;
for (const family of FAMILIES) {
  for (const c of fixture(family)) {
    cases++;
    try {
      runOpCase(c);
    } catch (e) {
      failures.push(`${family}: ${c.op}: ${c.name}: ${String(e.message).split('\n')[0]}`);
    }
  }
}

// Deterministic inputs (no RNG): values in [lo, hi) from a fixed linear congruential sequence.
function filled(shape, dtype, lo = -3, hi = 3, seed = 1) {
  const n = shape.reduce((a, b) => a * b, 1);
  const v = new Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    v[i] = lo + ((hi - lo) * s) / 4294967296;
    if (dtype.startsWith('int')) v[i] = Math.floor(v[i]);
  }
  return kd.tensor(v, { dtype }).reshape(shape);
}
const F = kd.nn.functional;
const N = 4099; // not a multiple of any vector width
const x = filled([N], 'float32', -3, 3, 1), y = filled([N], 'float32', 0.5, 4, 2);
const rows = filled([37, 515], 'float32', -8, 8, 3);
const probe = {
  add_f32: x.add(y),
  mul_f16: x.to('float16').mul(y.to('float16')),
  div_bf16: x.to('bfloat16').div(y.to('bfloat16')),
  sub_f64: x.to('float64').sub(y.to('float64'), { alpha: 0.5 }),
  add_i32: filled([N], 'int32', -1000, 1000, 4).add(filled([N], 'int32', -1000, 1000, 5)),
  maximum_f32: kd.maximum(x, y),
  where_f32: kd.where(x.gt(0), x, y),
  exp_f32: kd.exp(x),
  tanh_f32: kd.tanh(x),
  sigmoid_bf16: kd.sigmoid(x.to('bfloat16')),
  sqrt_f16: kd.sqrt(y.to('float16')),
  addcmul_f32: kd.addcmul(x, y, x, { value: 0.25 }),
  sum_f32: rows.sum(),
  sum_dim0_f32: rows.sum(0),
  mean_dim1_f64: rows.to('float64').mean(1),
  sum_bf16: rows.to('bfloat16').sum(1),
  amax_f32: kd.amax(rows, 1),
  argmax_f32: kd.argmax(rows, 1),
  var_f32: rows.var(1),
  logsumexp_f32: kd.logsumexp(rows, [1]),
  sum_i64: filled([N], 'int64', -1e6, 1e6, 6).sum(),
  softmax_f32: kd.softmax(rows, 1),
  log_softmax_bf16: kd.logSoftmax(rows.to('bfloat16'), 1),
  softmax_dim0_f32: kd.softmax(rows, 0),
  layer_norm_f32: F.layerNorm(rows, [515], filled([515], 'float32', 0.5, 1.5, 7), filled([515], 'float32', -1, 1, 8)),
  to_f16: x.mul(1000).to('float16'),
  to_bf16: x.to('bfloat16'),
  to_i32: x.mul(100).to('int32'),
  to_f32_from_f16: x.to('float16').to('float32'),
  max_pool2d_f32: F.maxPool2d(filled([2, 3, 33, 35], 'float32', -1, 1, 9), 3, 2, 1),
  avg_pool2d_f32: F.avgPool2d(filled([2, 3, 33, 35], 'float32', -1, 1, 10), 2),
  matmul_bf16: kd.matmul(filled([67, 96], 'bfloat16', -1, 1, 11), filled([96, 45], 'bfloat16', -1, 1, 12)),
  cumsum_dim0_f32: kd.cumsum(rows, 0),
  cumsum_dim1_f32: kd.cumsum(rows, 1),
  cumprod_dim1_f64: kd.cumprod(rows.to('float64').div(8), 1),
  cummax_dim0_f32: kd.cummax(rows, 0).values,
  logcumsumexp_dim1_f32: kd.logcumsumexp(rows, 1),
  cumsum_i32: kd.cumsum(filled([N], 'int32', -1000, 1000, 15), 0),
  gather_dim1_f32: kd.gather(rows, 1, filled([37, 300], 'int64', 0, 515, 16)),
  gather_dim0_f64: kd.gather(rows.to('float64'), 0, filled([20, 515], 'int64', 0, 37, 17)),
  index_select_dim1_f32: kd.indexSelect(rows, 1, filled([400], 'int64', 0, 515, 18)),
  index_tensor_f16: rows.to('float16').index([filled([50], 'int64', 0, 37, 19)]),
  scatter_add_dim0_f32: kd.zeros([37, 515]).scatterAdd(0, filled([37, 515], 'int64', 0, 37, 20), rows),
  scatter_dim1_i64: kd.zeros([37, 515], { dtype: 'int64' }).scatter(1, filled([37, 515], 'int64', 0, 515, 21).argsort(1), filled([37, 515], 'int64', -50, 50, 22)),
  index_add_dim1_f32: kd.zeros([37, 515]).indexAdd(1, filled([515], 'int64', 0, 515, 23), rows),
  adam_f32: (() => {
    const p = filled([N], 'float32', -1, 1, 24), g = filled([N], 'float32', -1, 1, 25);
    const opt = new kd.optim.Adam([p], { lr: 0.01, weightDecay: 0.01 });
    for (let s = 0; s < 3; s++) { p.grad = g.mul(s + 1); opt.step(); }
    return p.detach();
  })(),
  conv2d_f32: F.conv2d(filled([2, 3, 17, 19], 'float32', -1, 1, 13), filled([8, 3, 3, 3], 'float32', -1, 1, 14), null, 1, 1),
};
const out = {};
for (const [k, t] of Object.entries(probe)) out[k] = { dtype: t.dtype, values: Array.from(t.dataSync(), Number) };
process.stdout.write(JSON.stringify({ level: kd.build.cpuCapability, cases, failures, probe: out }) + '\n');
