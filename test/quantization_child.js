// quantization_child.js - run by test/quantization.test.js with KINDLING_CPU_CAPABILITY set: the
// dynamic quantized Linear of every fixture case at that CPU level; prints {level, kernel, cases,
// mismatches} (outputs that differ from PyTorch's bit for bit).
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
console.log(JSON.stringify({ level: kd.build.cpuCapability, kernel: kd.build.int8Gemm, cases: fixture.cases.length, mismatches }));
