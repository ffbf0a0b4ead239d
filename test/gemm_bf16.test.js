// gemm_bf16.test.js - the bfloat16 GEMM kernels (src/cpu/gemm_bf16.c, gemm_bf16_amx.c): the one
// kd.build.bf16Gemm reports is the best this CPU has (AMX tiles, AVX512-BF16 dot products, or
// float32), and each this CPU runs (AMX, AMX turned off with KINDLING_AMX=0, the avx2 level)
// gives the float64 product of the same bfloat16 inputs within float32 accumulation and one
// bfloat16 rounding, for products and their gradients of many shapes and layouts
// (test/gemm_bf16_cases.js), in a worker thread too, and flushes subnormals as PyTorch's
// oneDNN kernels do.
'use strict';

const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { kd, assert, cpuFlags } = require('./helpers');
const { run } = require('./gemm_bf16_cases');

const root = path.resolve(__dirname, '..');

/** The kernel this CPU should get at its best level, from /proc/cpuinfo's flags. */
function bestKernelFromCpuinfo() {
  const flags = cpuFlags();
  const has = (...f) => f.every((x) => flags.has(x));
  const avx512 = ['avx2', 'fma', 'f16c', 'bmi1', 'bmi2', 'abm', 'avx512f', 'avx512bw', 'avx512vl', 'avx512dq'];
  if (!has(...avx512, 'avx512_bf16')) return 'none';
  return has('amx_tile', 'amx_bf16') ? 'amx' : 'avx512bf16';
}
const best = bestKernelFromCpuinfo();

function runChild(env) {
  const e = { ...process.env };
  delete e.KINDLING_AMX;
  delete e.KINDLING_CPU_CAPABILITY;
  const r = spawnSync(process.execPath, [path.join(__dirname, 'gemm_bf16_cases.js')],
    { cwd: root, env: { ...e, ...env }, encoding: 'utf8', timeout: 120000 });
  assert.equal(r.status, 0, `child exited with ${r.status} ${r.signal || ''}: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

describe('bfloat16 GEMM kernels', function () {
  this.timeout(120000);

  it('kd.build.bf16Gemm is the best kernel this CPU has', function () {
    assert.equal(runChild({}).kernel, best);
    if (!process.env.KINDLING_AMX && !process.env.KINDLING_CPU_CAPABILITY) assert.equal(kd.build.bf16Gemm, best);
  });

  it(`products and gradients in this process (${kd.build.bf16Gemm}) match float64`, function () {
    const r = run();
    assert.ok(r.cases >= 20, `only ${r.cases} cases ran`);
    assert.deepEqual(r.failures, []);
  });

  const kernels = [
    ['amx', {}, best === 'amx'],
    ['avx512bf16', { KINDLING_AMX: '0' }, best !== 'none'],
    ['none', { KINDLING_CPU_CAPABILITY: 'avx2' }, best !== 'none'],
  ];
  for (const [kernel, env, runs] of kernels) {
    (runs ? it : it.skip)(`${kernel} (${JSON.stringify(env)}): products and gradients match float64`, function () {
      const r = runChild(env);
      assert.equal(r.kernel, kernel);
      assert.deepEqual(r.failures, []);
    });
  }

  // Tiles are configured on each thread that runs the kernel; the OS grants them per process.
  it('a worker thread runs the same kernel with the same results', async function () {
    const { Worker } = require('node:worker_threads');
    const code = `const { parentPort } = require('node:worker_threads');
      parentPort.postMessage(require(${JSON.stringify(path.join(__dirname, 'gemm_bf16_cases.js'))}).run());`;
    const r = await new Promise((resolve, reject) => {
      const w = new Worker(code, { eval: true });
      w.once('message', resolve);
      w.once('error', reject);
    });
    assert.equal(r.kernel, kd.build.bf16Gemm);
    assert.deepEqual(r.failures, []);
  });

  // PyTorch 1.13 (oneDNN, AMX or AVX512-BF16) on this product gives 0 for both: bfloat16
  // subnormal inputs count as zero, and subnormal sums are flushed to zero.
  (best !== 'none' ? it : it.skip)('subnormal inputs and sums are zero, as in oneDNN', function () {
    const code = `const kd = require('./lib');
      const a = kd.full([64, 64], 1e-39).to('bfloat16'), b = kd.ones([64, 64], { dtype: 'bfloat16' });
      const t = kd.full([64, 64], 1e-20).to('bfloat16');
      process.stdout.write(JSON.stringify([kd.build.bf16Gemm, a.to('float32').dataSync()[0],
        Array.from(kd.matmul(a, b).to('float32').dataSync()).some((v) => v !== 0),
        Array.from(kd.matmul(t, t).to('float32').dataSync()).some((v) => v !== 0)]));`;
    for (const env of [{}, { KINDLING_AMX: '0' }]) {
      const e = { ...process.env, ...env };
      if (!env.KINDLING_AMX) delete e.KINDLING_AMX;
      const r = spawnSync(process.execPath, ['-e', code], { cwd: root, env: e, encoding: 'utf8', timeout: 60000 });
      assert.equal(r.status, 0, r.stderr);
      const [kernel, input, nonzeroSub, nonzeroTiny] = JSON.parse(r.stdout);
      assert.ok(input > 0 && input < 1.2e-38, `the input ${input} is a bfloat16 subnormal`);
      assert.equal(nonzeroSub, false, `${kernel}: subnormal inputs give zero`);
      assert.equal(nonzeroTiny, false, `${kernel}: subnormal sums are flushed to zero`);
    }
  });
});
