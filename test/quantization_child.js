// quantization_child.js - run by test/quantization.test.js with KINDLING_CPU_CAPABILITY set: the
// dynamic quantized Linear of every fixture case at that CPU level; prints {level, kernel, large, cases,
// mismatches} (outputs that differ from PyTorch's bit for bit) and a hash of a large layer's output.
'use strict';

const kd = require('../lib');
const fixture = require('./fixtures/quantization.json');

let mismatches = 0;
for (const c of fixture.cases) {
  const lin = new kd.nn.Linear(c.inFeatures, c.outFeatures, c.bias !== null);
  kd.noGrad(() => {
    lin.weight.copy_(kd.tensor(c.weight).reshape([c.outFeatures, c.inFeatures]));
    if (c.bias) lin.bias.copy_(kd.tensor(c.bias));
  });
  const qc = c.perChannel ? kd.ao.quantization.perChannelDynamicQConfig : kd.ao.quantization.defaultDynamicQConfig;
  const q = kd.ao.quantization.quantizeDynamic(new kd.nn.Sequential(lin), { Linear: qc })[0];
  const y = Float32Array.from(q(kd.tensor(c.input.data, { dtype: 'float32' }).reshape(c.input.shape)).dataSync());
  const e = Float32Array.from(c.output);
  for (let i = 0; i < e.length; i++) if (!Object.is(y[i], e[i])) mismatches++;
}
// a large layer (k blocks, row blocks, a partial panel): its output bits, compared across levels
kd.manualSeed(5);
const big = kd.ao.quantization.quantizeDynamic(new kd.nn.Sequential(new kd.nn.Linear(2100, 70)))[0];
const bits = new Uint32Array(Float32Array.from(big(kd.randn([70, 2100]).mul(2).add(0.5)).dataSync()).buffer);
let large = 0;
for (let i = 0; i < bits.length; i++) large = (Math.imul(large, 31) + bits[i]) >>> 0;
console.log(JSON.stringify({ level: kd.build.cpuCapability, kernel: kd.build.int8Gemm, large, cases: fixture.cases.length, mismatches }));
