// quantization.test.js - kd.ao.quantization.quantizeDynamic and kd.ao.nn.quantized.dynamic.Linear.
// Parity with PyTorch 1.13's quantize_dynamic (test/fixtures/quantization.json, written by
// tools/fixtures/quantization.py): the int8 weights and scales are equal, and so are the outputs,
// bit for bit (Note [int8 dynamic linear numerics] in src/cpu/qlinear.c: the integer product is
// exact and every float step is the same float32 operation), at every CPU level of the int8
// GEMM. Then an independent JS model of the same arithmetic on a large random layer (row and
// column tiles, the thread pool), the module API (state dict, printing, qconfig specs, inplace,
// errors) and a quantized Fashion-MNIST MLP (a synthetic task without the data set) whose
// accuracy stays within 0.5 points of float32.
'use strict';

const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { kd, assert } = require('./helpers');

const fixture = require('./fixtures/quantization.json');
const Q = () => kd.ao.quantization;

function floatLinear(c) {
  const lin = new kd.nn.Linear(c.inFeatures, c.outFeatures, c.bias !== null);
  kd.noGrad(() => {
    lin.weight.copy_(kd.tensor(c.weight).reshape([c.outFeatures, c.inFeatures]));
    if (c.bias) lin.bias.copy_(kd.tensor(c.bias));
  });
  return lin;
}

function quantized(c) {
  const qc = c.perChannel ? Q().perChannelDynamicQConfig : Q().defaultDynamicQConfig;
  const model = new kd.nn.Sequential(floatLinear(c));
  return Q().quantizeDynamic(model, new Map([[kd.nn.Linear, qc]]), 'qint8')[0];
}

const input = (c) => kd.tensor(c.input.data, { dtype: 'float32' }).reshape(c.input.shape);
const bits = (a) => Array.from(new Uint32Array(Float32Array.from(a).buffer));

describe('kd.ao.quantization.quantizeDynamic vs PyTorch 1.13', function () {
  for (const c of fixture.cases) {
    it(c.name, function () {
      const q = quantized(c);
      assert.ok(q instanceof kd.ao.nn.quantized.dynamic.Linear);
      const w = q.weight();
      assert.deepStrictEqual(Array.from(w.intRepr().dataSync()), c.weightInt8, 'int8 weight');
      const scales = c.perChannel ? Array.from(w.qPerChannelScales().dataSync()) : [w.qScale()];
      assert.deepStrictEqual(scales, c.weightScales, 'weight scales');
      const y = q(input(c));
      const expectedShape = [...c.input.shape.slice(0, -1), c.outFeatures];
      assert.deepStrictEqual(y.shape, expectedShape);
      assert.strictEqual(y.dtype, 'float32');
      assert.deepStrictEqual(bits(y.dataSync()), bits(c.output), 'output (bit for bit)');
    });
  }

  it('every CPU level of the int8 GEMM gives PyTorch\'s outputs bit for bit', function () {
    this.timeout(120000);
    const script = path.join(__dirname, 'quantization_child.js');
    const large = new Set(); // the hash of a large layer's output (k blocks, row blocks): one value at every level
    for (const [level, env, kernel] of [['default', {}, 'scalar'], ['avx2', {}, 'avx2'], ['avx512', { KINDLING_VNNI: '0' }, 'avx512bw'],
      ['avx512', {}, 'avx512vnni']]) {
      const out = execFileSync(process.execPath, [script], {
        env: { ...process.env, ...env, KINDLING_CPU_CAPABILITY: level }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'],
      });
      const r = JSON.parse(out.trim().split('\n').pop());
      assert.strictEqual(r.mismatches, 0, `${kernel} (ran: ${r.kernel}): ${r.mismatches} outputs differ`);
      large.add(r.large);
      if (r.level === level && (kernel !== 'avx512vnni' || r.kernel === kernel)) assert.strictEqual(r.kernel, kernel);
      assert.strictEqual(r.cases, fixture.cases.length);
    }
    assert.strictEqual(large.size, 1, 'a large layer gives the same bits at every level');
  });
});

// An independent model of the arithmetic (Note [int8 dynamic linear numerics]) in JS doubles
// rounded with Math.fround wherever the kernel rounds to float32.
function referenceForward(x, m, k, wq, wscales, bias, n) {
  const f = Math.fround;
  let mn = 0;
  let mx = 0;
  for (const v of x) { mn = Math.min(mn, v); mx = Math.max(mx, v); }
  const qmin = 0;
  const qmax = 127;
  let scale = (mx - mn) / (qmax - qmin);
  if (f(scale) === 0 || !Number.isFinite(f(1 / f(scale)))) scale = 0.1;
  assert.ok(scale >= 6.1e-5, 'the reference covers ordinary ranges');
  const zmin = qmin - mn / scale;
  const zmax = qmax - mx / scale;
  const z0 = Math.abs(qmin) - Math.abs(mn / scale) < Math.abs(qmax) - Math.abs(mx / scale) ? zmin : zmax;
  const rint = (v) => { const r = Math.round(v); return Math.abs(v % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r; };
  const zp = z0 < qmin ? qmin : z0 > qmax ? qmax : rint(z0);
  const inv = f(1 / scale);
  const xq = x.map((v) => Math.min(255, Math.max(0, rint(f(v * inv)) + zp)));
  const y = new Float32Array(m * n);
  for (let j = 0; j < n; j++) {
    const s = f(inv * f(1 / wscales[wscales.length === 1 ? 0 : j]));
    const mult = f(1 / s);
    let colsum = 0;
    for (let t = 0; t < k; t++) colsum += wq[j * k + t];
    for (let i = 0; i < m; i++) {
      let acc = 0;
      for (let t = 0; t < k; t++) acc += xq[i * k + t] * wq[j * k + t];
      acc -= zp * colsum;
      y[i * n + j] = bias ? f(f(f(acc) + f(bias[j] * s)) * mult) : f(f(acc) * mult);
    }
  }
  return y;
}

describe('kd.ao.nn.quantized.dynamic.Linear', function () {
  it('large layers (row and column tiles, k blocks, threads) equal a JS model of the arithmetic bit for bit', function () {
    this.timeout(60000);
    for (const [m, k, n, perChannel] of [[70, 301, 133, false], [33, 260, 64, true], [1, 515, 97, true], [20, 2100, 70, false]]) {
      kd.manualSeed(m + k + n);
      const lin = new kd.nn.Linear(k, n);
      const qc = perChannel ? Q().perChannelDynamicQConfig : Q().defaultDynamicQConfig;
      const q = Q().quantizeDynamic(new kd.nn.Sequential(lin), { Linear: qc })[0];
      const x = kd.randn([m, k]).mul(1.5).add(0.3);
      const w = q.weight();
      const scales = perChannel ? Array.from(w.qPerChannelScales().dataSync()) : [w.qScale()];
      const ref = referenceForward(Array.from(x.dataSync()), m, k, Array.from(w.intRepr().dataSync()), scales,
        Array.from(lin.bias.dataSync()), n);
      assert.deepStrictEqual(bits(q(x).dataSync()), bits(ref), `${m}x${k}->${n}`);
    }
  });

  it('is close to the float layer (within the quantization error)', function () {
    kd.manualSeed(3);
    const lin = new kd.nn.Linear(64, 32);
    const q = Q().quantizeDynamic(new kd.nn.Sequential(lin))[0];
    const x = kd.randn([8, 64]);
    const err = q(x).sub(lin(x)).abs().max().item();
    assert.ok(err > 0 && err < 0.05, `max error ${err}`);
  });

  it('state dict: PyTorch\'s scale and zero_point, the weight, its scales and the bias; loads back', function () {
    kd.manualSeed(4);
    const model = new kd.nn.Sequential(new kd.nn.Linear(6, 5), new kd.nn.ReLU(), new kd.nn.Linear(5, 3, false));
    const q = Q().quantizeDynamic(model, new Set([kd.nn.Linear]));
    const sd = q.stateDict();
    assert.deepStrictEqual(Object.keys(sd).sort(), [
      '0._packed_params.bias', '0._packed_params.weight', '0._packed_params.weight_scale', '0.scale', '0.zero_point',
      '2._packed_params.weight', '2._packed_params.weight_scale', '2.scale', '2.zero_point',
    ]);
    assert.strictEqual(sd['0.scale'].item(), 1);
    assert.strictEqual(sd['0.zero_point'].dtype, 'int64');
    assert.strictEqual(sd['0._packed_params.weight'].dtype, 'int8');
    assert.deepStrictEqual(sd['0._packed_params.weight_scale'].shape, []);
    const other = Q().quantizeDynamic(new kd.nn.Sequential(new kd.nn.Linear(6, 5), new kd.nn.ReLU(), new kd.nn.Linear(5, 3, false)));
    other.loadStateDict(sd);
    const x = kd.randn([4, 6]);
    assert.deepStrictEqual(Array.from(other(x).dataSync()), Array.from(q(x).dataSync()));
    const pc = Q().quantizeDynamic(model, { 0: Q().perChannelDynamicQConfig });
    assert.deepStrictEqual(pc.stateDict()['0._packed_params.weight_scale'].shape, [5]);
  });

  it('prints as PyTorch, exposes scale, zeroPoint, weight() and bias()', function () {
    const model = new kd.nn.Sequential(new kd.nn.Linear(4, 3), new kd.nn.ReLU(), new kd.nn.Linear(3, 2, false));
    const q = Q().quantizeDynamic(model, { 0: Q().perChannelDynamicQConfig });
    assert.strictEqual(String(q), 'Sequential(\n' +
      '  (0): DynamicQuantizedLinear(in_features=4, out_features=3, dtype=torch.qint8, qscheme=torch.per_channel_affine)\n' +
      '  (1): ReLU()\n' +
      '  (2): Linear(in_features=3, out_features=2, bias=False)\n)');
    const l = q[0];
    assert.strictEqual(l.scale, 1.0);
    assert.strictEqual(l.zeroPoint, 0);
    assert.strictEqual(l.weight().qscheme(), 'torch.per_channel_affine');
    assert.strictEqual(l.weight().qPerChannelAxis(), 0);
    assert.deepStrictEqual(Array.from(l.bias().dataSync()), Array.from(model[0].bias.dataSync()));
    assert.strictEqual(q[2].constructor, kd.nn.Linear);
    const all = Q().quantizeDynamic(model);
    assert.strictEqual(all[2].extraRepr(), 'in_features=3, out_features=2, dtype=torch.qint8, qscheme=torch.per_tensor_affine');
    assert.strictEqual(all[2].bias(), null);
    assert.throws(() => all[2].weight().qPerChannelScales(), /per channel/);
  });

  it('qconfig specs: classes, class names, submodule names, dicts; inplace', function () {
    const make = () => new kd.nn.Sequential(new kd.nn.Linear(4, 3), new kd.nn.Sequential(new kd.nn.Linear(3, 3)), new kd.nn.Linear(3, 2));
    const D = kd.ao.nn.quantized.dynamic.Linear;
    const kinds = (m) => [m[0], m[1][0], m[2]].map((l) => l instanceof D);
    assert.deepStrictEqual(kinds(Q().quantizeDynamic(make(), ['Linear'])), [true, true, true]);
    assert.deepStrictEqual(kinds(Q().quantizeDynamic(make(), new Set(['1']))), [false, true, false]);
    assert.deepStrictEqual(kinds(Q().quantizeDynamic(make(), { '1.0': Q().defaultDynamicQConfig, 2: Q().defaultDynamicQConfig })), [false, true, true]);
    assert.deepStrictEqual(kinds(Q().quantizeDynamic(make(), { Linear: Q().defaultDynamicQConfig, '1.0': null })), [true, false, true]);
    // a class entry wins over the parent's name entry (PyTorch's propagate_qconfig_)
    assert.deepStrictEqual(kinds(Q().quantizeDynamic(make(), { Linear: Q().defaultDynamicQConfig, 1: null })), [true, true, true]);
    const m = make();
    assert.strictEqual(Q().quantizeDynamic(m, null, { inplace: true }), m);
    assert.ok(m[0] instanceof D);
    const m2 = make();
    const q2 = Q().quantizeDynamic(m2);
    assert.notStrictEqual(q2, m2);
    assert.ok(m2[0] instanceof kd.nn.Linear, 'the original is left as it was');
  });

  it('errors: dtypes, inputs', function () {
    const m = new kd.nn.Sequential(new kd.nn.Linear(4, 3));
    assert.throws(() => Q().quantizeDynamic(m, null, 'float16'), (e) => e.code === 'KD_NOT_SUPPORTED');
    assert.throws(() => Q().quantizeDynamic(m, null, 'float32'), /Don't know how to quantize with default settings for float32/);
    assert.throws(() => Q().quantizeDynamic({}, null), TypeError);
    const q = Q().quantizeDynamic(m)[0];
    assert.throws(() => q(kd.randn([2, 5])), (e) => e.code === 'KD_SHAPE_MISMATCH');
    assert.throws(() => q(kd.randn([2, 4], { dtype: 'float64' })), (e) => e.code === 'KD_DTYPE_MISMATCH');
    assert.deepStrictEqual(q(kd.zeros([0, 4])).shape, [0, 3]);
    assert.throws(() => kd._internal.qlinearDynamic(kd.randn([2, 4]), kd.zeros([7], { dtype: 'int8' }), kd.ones([1]), null, 4, 3),
      (e) => e.code === 'KD_INVALID_ARGUMENT');
    assert.throws(() => kd._internal.qlinearPackWeight(kd.zeros([3, 4])), (e) => e.code === 'KD_DTYPE_MISMATCH');
    // the int32 sums hold 255 * 128 * 65536 at most: longer rows are refused
    assert.throws(() => kd._internal.qlinearPackWeight(kd.zeros([2, 65537], { dtype: 'int8' })), /in_features up to 65536/);
  });
});

describe('a quantized MLP keeps its accuracy', function () {
  this.timeout(300000);

  function dataset() {
    try {
      const { loadFashionMnist } = require('../examples/fashion-mnist/data');
      const d = loadFashionMnist({ limit: 12000 });
      const flat = (s, n) => ({ x: s.images.reshape([-1, 784]).narrow(0, 0, n), y: s.labels.narrow(0, 0, n) });
      return { name: 'Fashion-MNIST', train: flat(d.train, 12000), test: flat(d.test, 5000), dim: 784 };
    } catch (e) {
      if (!/not found/.test(e.message)) throw e;
      // a synthetic task: 10 Gaussian clusters in 64 dimensions
      kd.manualSeed(11);
      const centers = kd.randn([10, 64]).mul(0.6);
      const draw = (n) => {
        const y = kd.randint(0, 10, [n]);
        return { x: centers.index([y]).add(kd.randn([n, 64])), y };
      };
      return { name: 'synthetic', train: draw(8000), test: draw(4000), dim: 64 };
    }
  }

  const accuracy = (model, d) => kd.noGrad(() => model(d.x).argmax(1).eq(d.y).to('float32').mean().item() * 100);

  it('int8 dynamic quantization stays within 0.5 points of float32', function () {
    const d = dataset();
    kd.manualSeed(0);
    const model = new kd.nn.Sequential(new kd.nn.Linear(d.dim, 256), new kd.nn.ReLU(), new kd.nn.Linear(256, 128), new kd.nn.ReLU(),
      new kd.nn.Linear(128, 10));
    const opt = new kd.optim.Adam(model.parameters(), { lr: 1e-3 });
    const n = d.train.x.shape[0];
    for (let epoch = 0; epoch < 3; epoch++) {
      const perm = kd.randperm(n);
      for (let i = 0; i + 100 <= n; i += 100) {
        kd.tidy(() => {
          const idx = perm.narrow(0, i, 100);
          const loss = kd.nn.functional.crossEntropy(model(d.train.x.index([idx])), d.train.y.index([idx]));
          opt.zeroGrad();
          loss.backward();
          opt.step();
        });
      }
    }
    model.eval();
    const f = accuracy(model, d.test);
    const q = accuracy(Q().quantizeDynamic(model), d.test);
    assert.ok(f > (d.name === 'synthetic' ? 60 : 80), `float32 accuracy ${f} on ${d.name}`);
    assert.ok(Math.abs(q - f) <= 0.5, `${d.name}: float32 ${f.toFixed(2)}%, int8 ${q.toFixed(2)}%`);
  });
});

describe('kd.ao.nn.quantized.dynamic.Linear on the GPU', function () {
  before(function () {
    if (!kd.cuda.isAvailable()) this.skip();
  });

  it('the dp4a kernel gives PyTorch\'s outputs bit for bit (a model moved to the GPU, and one quantized there)', function () {
    this.timeout(300000);
    for (const c of fixture.cases.filter((_, i) => i % 3 === 0)) {
      const q = quantized(c).to('cuda');
      assert.strictEqual(q._packedParams.packed.device.startsWith('cuda'), true);
      const y = q(input(c).to('cuda'));
      assert.ok(y.device.startsWith('cuda'));
      assert.deepStrictEqual(bits(y.to('cpu').dataSync()), bits(c.output), c.name);
    }
    const c = fixture.cases.find((x) => x.name.startsWith('tiles'));
    const model = new kd.nn.Sequential(floatLinear(c)).to('cuda');
    const q = Q().quantizeDynamic(model)[0];
    assert.deepStrictEqual(Array.from(q.weight().intRepr().to('cpu').dataSync()), c.weightInt8);
    assert.deepStrictEqual(bits(q(input(c).to('cuda')).to('cpu').dataSync()), bits(c.output));
  });

  it('a larger layer (several 64 x 64 tiles, k steps) equals the CPU kernel', function () {
    this.timeout(300000);
    kd.manualSeed(9);
    const q = Q().quantizeDynamic(new kd.nn.Sequential(new kd.nn.Linear(200, 150)), { Linear: Q().perChannelDynamicQConfig })[0];
    const x = kd.randn([70, 200]);
    const cpu = q(x).dataSync();
    q.to('cuda');
    assert.deepStrictEqual(bits(q(x.to('cuda')).to('cpu').dataSync()), bits(cpu));
    assert.throws(() => q(x), (e) => e.code === 'KD_DEVICE_MISMATCH');
  });
});
