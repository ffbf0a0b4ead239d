// quantization_rnn.test.js - kd.ao.quantization.quantizeDynamic on kd.nn.LSTM and GRU
// (kd.ao.nn.quantized.dynamic.LSTM / GRU) vs PyTorch 1.13's quantize_dynamic
// (test/fixtures/quantization_rnn.json, written by tools/fixtures/quantization_rnn.py): outputs
// and final states. Each step's products are the int8 dynamic linear layer (bit for bit, see
// test/quantization.test.js); the gate math is float32, where the sigmoid / tanh of another
// library may differ by an ulp, hence a float32 tolerance (which quantization errors, ~1e-2, far
// exceed: a wrong quantization step fails it).
'use strict';

const { kd, assert } = require('./helpers');

const fixture = require('./fixtures/quantization_rnn.json');
const Q = () => kd.ao.quantization;
const T = (s) => kd.tensor(s.data, { dtype: 'float32' }).reshape(s.shape);

function close(actual, expected, what) {
  assert.deepStrictEqual(actual.shape, expected.shape, `${what} shape`);
  const a = actual.dataSync();
  let worst = 0;
  expected.data.forEach((e, i) => { worst = Math.max(worst, Math.abs(a[i] - e) / (1e-5 + 1e-5 * Math.abs(e))); });
  assert.ok(worst <= 1, `${what}: off by ${worst.toFixed(2)} x the tolerance (atol = rtol = 1e-5)`);
}

function floatModule(c) {
  const m = new kd.nn[c.mode](c.inputSize, c.hiddenSize, { numLayers: c.numLayers, bidirectional: c.bidirectional, batchFirst: c.batchFirst });
  const sd = {};
  for (const [k, v] of Object.entries(c.state)) sd[k] = T(v);
  m.loadStateDict(sd);
  return m;
}

describe('kd.ao.nn.quantized.dynamic.LSTM / GRU vs PyTorch 1.13', function () {
  for (const c of fixture.cases) {
    it(c.name, function () {
      const qc = c.perChannel ? Q().perChannelDynamicQConfig : Q().defaultDynamicQConfig;
      const q = Q().quantizeDynamic(new kd.nn.Sequential(floatModule(c)), new Map([[kd.nn[c.mode], qc]]))[0];
      assert.ok(q instanceof kd.ao.nn.quantized.dynamic[c.mode]);
      const hx = c.hx === null ? null : c.mode === 'LSTM' ? c.hx.map(T) : T(c.hx[0]);
      const [out, state] = q(T(c.input), hx);
      close(out, c.output, 'output');
      close(c.mode === 'LSTM' ? state[0] : state, c.hN, 'hN');
      if (c.mode === 'LSTM') close(state[1], c.cN, 'cN');
    });
  }
});

describe('kd.ao.nn.quantized.dynamic.LSTM / GRU', function () {
  it('quantizeDynamic swaps LSTM and GRU by default; printing, state dict round trip, unbatched input', function () {
    kd.manualSeed(1);
    const model = new kd.nn.Sequential(new kd.nn.LSTM(4, 5, { numLayers: 2 }), new kd.nn.GRU(5, 3, { bidirectional: true }));
    const q = Q().quantizeDynamic(model);
    assert.strictEqual(String(q[0]), 'DynamicQuantizedLSTM(4, 5, num_layers=2)');
    assert.strictEqual(String(q[1]), 'DynamicQuantizedGRU(5, 3, bidirectional=True)');
    const keys = Object.keys(q.stateDict());
    assert.ok(keys.includes('0._all_weight_values.1.hh.weight') && keys.includes('1._all_weight_values.1.ih.weight_scale'), keys.join(' '));
    const other = Q().quantizeDynamic(new kd.nn.Sequential(new kd.nn.LSTM(4, 5, { numLayers: 2 }), new kd.nn.GRU(5, 3, { bidirectional: true })));
    other.loadStateDict(q.stateDict());
    const x = kd.randn([6, 2, 4]);
    const [a] = q[0](x);
    const [b] = other[0](x);
    assert.deepStrictEqual(Array.from(b.dataSync()), Array.from(a.dataSync()));
    // unbatched [T, I] is batch 1 without the batch dim
    const [u, [hu]] = q[0](x.select(1, 0));
    assert.deepStrictEqual(u.shape, [6, 5]);
    assert.deepStrictEqual(hu.shape, [2, 5]);
    assert.deepStrictEqual(Array.from(u.dataSync()), Array.from(q[0](x.narrow(1, 0, 1))[0].squeeze(1).dataSync()));
    assert.throws(() => q[0](kd.randn([3, 2, 7])), (e) => e.code === 'KD_SHAPE_MISMATCH');
    const packed = kd.nn.utils.rnn.packPaddedSequence(x, [6, 4]);
    assert.throws(() => q[0](packed), (e) => e.code === 'KD_NOT_SUPPORTED');
  });
});

describe('kd.ao.nn.quantized.dynamic.LSTM / GRU on the GPU', function () {
  before(function () {
    if (!kd.cuda.isAvailable()) this.skip();
  });

  it('a model moved to the GPU gives the CPU\'s results (int8 products bit for bit, float gate steps)', function () {
    this.timeout(300000);
    kd.manualSeed(0);
    const q = Q().quantizeDynamic(new kd.nn.Sequential(new kd.nn.LSTM(4, 5, { numLayers: 2, bidirectional: true }), new kd.nn.GRU(10, 3)));
    const x = kd.randn([6, 2, 4]);
    const [cpuOut] = q[1](q[0](x)[0]);
    q.to('cuda');
    const [gpuOut, hN] = q[1](q[0](x.to('cuda'))[0]);
    assert.ok(gpuOut.device.startsWith('cuda'));
    assert.deepStrictEqual(hN.shape, [1, 2, 3]);
    close(gpuOut.to('cpu'), { shape: cpuOut.shape, data: Array.from(cpuOut.dataSync()) }, 'output');
  });
});
