// nn_rnn.test.js - the recurrent layers: kd.nn.RNN / LSTM / GRU, their cells and
// kd.nn.utils.rnn. Parity with PyTorch 1.13 (test/fixtures/rnn.json, written by
// tools/fixtures/rnn.py): each module loads PyTorch's state dict and must reproduce the output,
// the final states and the gradients of the input, the initial states and every parameter (padded,
// batch-first, unbatched and packed inputs with unsorted lengths, multi-layer, bidirectional,
// projections). Then the fused step ops against finite differences (float64) and a plain-op
// reference, the same on the emulated GPU when it is there, constructor defaults and
// initialisation, dropout between layers, and PyTorch's errors.
'use strict';

const { kd, assert, fixture, buildArg, values, decode } = require('./helpers');

const nn = kd.nn;
const U = nn.utils.rnn;
const RNN = fixture('rnn');

function close(t, spec, what, dtype) {
  assert.ok(t instanceof kd.Tensor, `${what}: expected a Tensor`);
  assert.deepEqual(t.shape, spec.shape, `${what}: shape`);
  const a = values(t);
  const e = spec.data.map(decode);
  const rtol = dtype === 'float32' ? 1e-4 : 1e-9;
  const scale = e.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
  const atol = (dtype === 'float32' ? 1e-5 : 1e-11) * Math.max(1, scale);
  const bad = [];
  for (let i = 0; i < e.length; i++) if (!(Math.abs(a[i] - e[i]) <= atol + rtol * Math.abs(e[i]))) bad.push(i);
  if (bad.length) assert.fail(`${what}: ${bad.length}/${e.length} differ: ${bad.slice(0, 4).map((i) => `[${i}] got ${a[i]} expected ${e[i]}`).join('; ')}`);
}

function build(s) {
  const args = (s.args || []).slice();
  if (s.kwargs) args.push({ ...s.kwargs });
  return new nn[s.module](...args);
}

function loaded(c, device) {
  const m = build(c.spec).to(c.dtype);
  const sd = {};
  for (const [k, v] of Object.entries(c.state)) sd[k] = buildArg(v);
  m.loadStateDict(sd);
  return device ? m.to(device) : m;
}

const leaf = (spec, device) => {
  const t = buildArg(spec);
  return (device ? t.to(device) : t).detach().requiresGrad_();
};

function runModuleCase(c, device) {
  const m = loaded(c, device);
  const x = leaf(c.input, device);
  const hx = c.hx === null ? null : Array.isArray(c.hx) ? c.hx.map((h) => leaf(h, device)) : leaf(c.hx, device);
  let input = x;
  if (c.packed) input = U.packPaddedSequence(x, c.packed.lengths, { batchFirst: !!c.packed.batchFirst, enforceSorted: c.packed.enforceSorted !== false });
  const [o, st] = hx === null ? m(input) : m(input, hx);
  const lstm = c.spec.module === 'LSTM';
  const [hN, cN] = lstm ? st : [st, null];
  const od = c.packed ? o.data : o;
  if (c.packed) assert.ok(o instanceof U.PackedSequence, 'a PackedSequence in, a PackedSequence out');
  close(od, c.output, 'output', c.dtype);
  close(hN, c.hN, 'hN', c.dtype);
  if (lstm) close(cN, c.cN, 'cN', c.dtype);
  if (c.packed) {
    const [padded, lengths] = U.padPackedSequence(o, { batchFirst: !!c.packed.batchFirst });
    close(padded, c.padded, 'padPackedSequence(output)', c.dtype);
    assert.deepEqual(values(lengths), c.lengths);
  }
  const outs = lstm ? [od, hN, cN] : [od, hN];
  kd.autograd.backward(outs, c.gradOutputs.map((g) => (device ? buildArg(g).to(device) : buildArg(g))));
  const params = new Map(m.namedParameters());
  assert.deepEqual([...params.keys()].sort(), Object.keys(c.grads).sort(), 'parameter names');
  for (const [k, e] of Object.entries(c.grads)) close(params.get(k).grad, e, `gradient of ${k}`, c.dtype);
  close(x.grad, c.inputGrad, 'gradient of the input', c.dtype);
  if (c.hxGrads) c.hxGrads.forEach((e, i) => close(hx.length ? hx[i].grad : hx.grad, e, `gradient of hx[${i}]`, c.dtype));
}

function runCellCase(c, device) {
  const m = loaded(c, device);
  const x = leaf(c.input, device);
  const hx = c.hx === null ? null : Array.isArray(c.hx) ? c.hx.map((h) => leaf(h, device)) : leaf(c.hx, device);
  const r = hx === null ? m(x) : m(x, hx);
  const outs = Array.isArray(r) ? r : [r];
  c.outputs.forEach((e, i) => close(outs[i], e, `output ${i}`, c.dtype));
  kd.autograd.backward(outs, c.gradOutputs.map((g) => (device ? buildArg(g).to(device) : buildArg(g))));
  const params = new Map(m.namedParameters());
  assert.deepEqual([...params.keys()].sort(), Object.keys(c.grads).sort(), 'parameter names');
  for (const [k, e] of Object.entries(c.grads)) close(params.get(k).grad, e, `gradient of ${k}`, c.dtype);
  close(x.grad, c.inputGrad, 'gradient of the input', c.dtype);
  if (c.hxGrads) c.hxGrads.forEach((e, i) => close(Array.isArray(hx) ? hx[i].grad : hx.grad, e, `gradient of hx[${i}]`, c.dtype));
}

describe('kd.nn recurrent layers vs PyTorch (same weights, inputs, gradients)', function () {
  for (const c of RNN.modules) it(c.name, function () { runModuleCase(c); });
  for (const c of RNN.cells) it(c.name, function () { runCellCase(c); });
});

describe('kd.nn.utils.rnn vs PyTorch', function () {
  for (const c of RNN.pack) {
    it(c.name, function () {
      const seqs = c.sequences.map((s) => buildArg(s));
      const padded = U.padSequence(seqs, { batchFirst: c.batchFirst, paddingValue: c.paddingValue });
      close(padded, c.padded, 'padSequence');
      const packed = U.packSequence(seqs, { enforceSorted: c.enforceSorted });
      close(packed.data, c.data, 'packSequence data');
      assert.deepEqual(values(packed.batchSizes), c.batchSizes);
      assert.deepEqual(packed.sortedIndices === null ? null : values(packed.sortedIndices), c.sortedIndices);
      assert.deepEqual(packed.unsortedIndices === null ? null : values(packed.unsortedIndices), c.unsortedIndices);
      const [back, lengths] = U.padPackedSequence(packed, { batchFirst: c.batchFirst, paddingValue: c.paddingValue, totalLength: c.totalLength });
      close(back, c.repadded, 'padPackedSequence');
      assert.deepEqual(values(lengths), c.lengths);
      const lens = seqs.map((s) => s.shape[0]);
      const again = U.packPaddedSequence(padded, lens, { batchFirst: c.batchFirst, enforceSorted: c.enforceSorted });
      close(again.data, c.data, 'packPaddedSequence data');
      const un = U.unpackSequence(packed);
      un.forEach((s, i) => assert.deepEqual(values(s), values(seqs[i]), `unpackSequence ${i}`));
      const unp = U.unpadSequence(padded, lens, { batchFirst: c.batchFirst });
      unp.forEach((s, i) => assert.deepEqual(values(s), values(seqs[i]), `unpadSequence ${i}`));
    });
  }

  it('gradients flow through packing and padding (indexSelect backward)', function () {
    const a = kd.tensor([[1, 2], [3, 4], [5, 6]], { dtype: 'float64', requiresGrad: true });
    const b = kd.tensor([[7, 8]], { dtype: 'float64', requiresGrad: true });
    const packed = U.packSequence([b, a], { enforceSorted: false });
    const [padded] = U.padPackedSequence(packed, { batchFirst: true });
    padded.mul(kd.arange(12, { dtype: 'float64' }).reshape([2, 3, 2])).sum().backward();
    assert.deepEqual(b.grad.arraySync(), [[0, 1]]);
    assert.deepEqual(a.grad.arraySync(), [[6, 7], [8, 9], [10, 11]]);
  });

  it('errors as PyTorch', function () {
    const x = kd.zeros([3, 2, 1]);
    assert.throws(() => U.packPaddedSequence(x, [1, 2]), { code: 'KD_INVALID_ARGUMENT', message: /must be sorted in decreasing order/ });
    assert.throws(() => U.packPaddedSequence(x, [2, 0], { enforceSorted: false }), { code: 'KD_INVALID_ARGUMENT', message: /greater than 0/ });
    assert.throws(() => U.packPaddedSequence(x, [2, 1, 1]), { code: 'KD_SHAPE_MISMATCH', message: /batch_size=2/ });
    const p = U.packPaddedSequence(x, [3, 2]);
    assert.throws(() => U.padPackedSequence(p, { totalLength: 2 }), { code: 'KD_INVALID_ARGUMENT', message: /total_length=2 and max sequence length being 3/ });
    assert.throws(() => new U.PackedSequence(x, [3, 2]), TypeError);
  });
});

describe('kd._internal.lstmCell / gruCell (the fused steps)', function () {
  const I = kd._internal;
  const r64 = (shape, seed) => {
    kd.manualSeed(seed);
    return kd.randn(shape, { dtype: 'float64' }).requiresGrad_();
  };

  it('lstmCell: finite differences (float64), first and both outputs', function () {
    const g = r64([3, 8], 1);
    const c = r64([3, 2], 2);
    assert.ok(kd.autograd.gradcheck((a, b) => { const r = I.lstmCell(a, b); return [r[0], r[1]]; }, [g, c]));
    assert.ok(kd.autograd.gradcheck((a, b) => I.lstmCell(a, b)[0], [g, c]));
  });

  it('second derivatives: gradgradcheck of both steps, also through the workspace (float64)', function () {
    const g = r64([2, 8], 11);
    const c = r64([2, 2], 12);
    assert.ok(kd.autograd.gradgradcheck((a, b) => { const r = I.lstmCell(a, b); return [r[0], r[1]]; }, [g, c]));
    assert.ok(kd.autograd.gradgradcheck((a, b) => { const r = I.lstmCell(a, b); return [r[0], r[1], r[2]]; }, [g, c]));
    const args = [r64([2, 6], 13), r64([2, 6], 14), r64([2, 2], 15)];
    assert.ok(kd.autograd.gradgradcheck((a, b, h) => I.gruCell(a, b, h)[0], args));
    assert.ok(kd.autograd.gradgradcheck((a, b, h) => { const r = I.gruCell(a, b, h); return [r[0], r[1]]; }, args));
    // the backward ops themselves, with a workspace gradient
    const ws = r64([2, 8], 16).sigmoid().detach().requiresGrad_();
    const bw = (gh, gc, cx, cy, w, gw) => { const r = I.lstmCellBackward(gh, gc, cx, cy, w, gw); return [r[0], r[1]]; };
    assert.ok(kd.autograd.gradcheck(bw, [r64([2, 2], 17), r64([2, 2], 18), r64([2, 2], 19), r64([2, 2], 20), ws, r64([2, 8], 21)]));
    const gws = r64([2, 8], 22).sigmoid().detach().requiresGrad_();
    assert.ok(kd.autograd.gradcheck((gy, h, w, gw) => { const r = I.gruCellBackward(gy, h, w, gw); return [r[0], r[1], r[2]]; },
      [r64([2, 2], 23), r64([2, 2], 24), gws, r64([2, 8], 25)]));
  });

  it('double backward through the cells (LSTMCell, GRUCell) with states', function () {
    kd.manualSeed(26);
    const cell = new nn.LSTMCell(2, 3).to('float64');
    const x = kd.randn([2, 2], { dtype: 'float64' }).requiresGrad_();
    const h0 = kd.randn([2, 3], { dtype: 'float64' }).requiresGrad_();
    const c0 = kd.randn([2, 3], { dtype: 'float64' }).requiresGrad_();
    assert.ok(kd.autograd.gradgradcheck((a, h, c) => { const [h1, c1] = cell(a, [h, c]); return [h1, c1]; }, [x, h0, c0]));
    const gcell = new nn.GRUCell(2, 3).to('float64');
    assert.ok(kd.autograd.gradgradcheck((a, h) => gcell(a, h), [x, h0]));
  });

  it('double backward through the layers (gradgradcheck, float64; packed, bidirectional, projection)', function () {
    kd.manualSeed(27);
    const lstm = new nn.LSTM(2, 3, 2, { bidirectional: true, projSize: 2 }).to('float64');
    const x = kd.randn([3, 2, 2], { dtype: 'float64' }).requiresGrad_();
    const h0 = kd.randn([4, 2, 2], { dtype: 'float64' }).requiresGrad_();
    const c0 = kd.randn([4, 2, 3], { dtype: 'float64' });
    assert.ok(kd.autograd.gradgradcheck((a, h) => { const [o, [hn, cn]] = lstm(a, [h, c0]); return [o, hn, cn]; }, [x, h0]));
    const gru = new nn.GRU(2, 3, { bidirectional: true }).to('float64');
    assert.ok(kd.autograd.gradgradcheck((a) => gru(U.packPaddedSequence(a, [1, 3], { enforceSorted: false }))[0].data, [x]));
    const rnn = new nn.RNN(2, 3, { nonlinearity: 'tanh' }).to('float64');
    assert.ok(kd.autograd.gradgradcheck((a) => rnn(a)[0], [x]));
    // and the weights: the second derivative reaches them too
    const w = lstm.weightHhL1Reverse;
    const [o] = lstm(x);
    const [gw] = kd.autograd.grad([o.square().sum()], [w], null, { createGraph: true });
    const [gx] = kd.autograd.grad([gw.square().sum()], [x]);
    assert.ok(gx.abs().sum().item() > 0);
  });

  it('gruCell: finite differences (float64)', function () {
    assert.ok(kd.autograd.gradcheck((a, b, h) => I.gruCell(a, b, h)[0], [r64([2, 9], 3), r64([2, 9], 4), r64([2, 3], 5)]));
  });

  it('match the same math written with plain ops (float32, non-contiguous inputs)', function () {
    kd.manualSeed(9);
    const gates = kd.randn([20, 5, 3]).permute([1, 0, 2]).reshape([5, 60]).narrow(1, 0, 40).mul(2); // [5, 40]
    const cx = kd.randn([10, 5]).t();
    const [hy, cy, ws] = I.lstmCell(gates, cx);
    const [i, f, g, o] = gates.chunk(4, 1);
    const c2 = f.sigmoid().mul(cx).add(i.sigmoid().mul(g.tanh()));
    const h2 = o.sigmoid().mul(c2.tanh());
    assert.ok(kd.allclose(cy, c2, 1e-5, 1e-6));
    assert.ok(kd.allclose(hy, h2, 1e-5, 1e-6));
    assert.ok(kd.allclose(ws, kd.cat([i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()], 1), 1e-6, 1e-7));
    const xg = kd.randn([5, 30]);
    const hg = kd.randn([5, 30]);
    const hx = kd.randn([5, 10]);
    const [gy] = I.gruCell(xg, hg, hx);
    const [xr, xz, xn] = xg.chunk(3, 1);
    const [hr, hz, hn] = hg.chunk(3, 1);
    const r = xr.add(hr).sigmoid();
    const z = xz.add(hz).sigmoid();
    const n = xn.add(r.mul(hn)).tanh();
    assert.ok(kd.allclose(gy, n.add(z.mul(hx.sub(n))), 1e-5, 1e-6));
  });

  it('float16 and bfloat16 compute in float32 and keep their dtype; integer inputs are refused', function () {
    for (const dt of ['float16', 'bfloat16']) {
      const [hy, cy, ws] = I.lstmCell(kd.ones([2, 8], { dtype: dt }), kd.ones([2, 2], { dtype: dt }));
      assert.equal(hy.dtype, dt);
      assert.equal(ws.dtype, dt);
      assert.ok(Math.abs(cy.dataSync()[0] - (1 / (1 + Math.exp(-1)) * (1 + Math.tanh(1)))) < 1e-2);
    }
    assert.throws(() => I.lstmCell(kd.ones([2, 8], { dtype: 'int32' }), kd.ones([2, 2], { dtype: 'int32' })), { code: 'KD_NOT_SUPPORTED' });
  });

  it('errors for bad shapes; mixed float dtypes promote', function () {
    assert.throws(() => I.lstmCell(kd.ones([2, 7]), kd.ones([2, 2])), { code: 'KD_SHAPE_MISMATCH', message: /gates must be \[2, 8\]/ });
    assert.throws(() => I.lstmCell(kd.ones([2, 8]), kd.ones([2])), { code: 'KD_SHAPE_MISMATCH', message: /cx must be 2-D/ });
    const [hp] = I.lstmCell(kd.full([2, 8], 0.5, { dtype: 'bfloat16' }), kd.ones([2, 2], { dtype: 'float64' }));
    assert.equal(hp.dtype, 'float64', 'mixed dtypes promote (autocast gates next to a float32 state)');
    const s = 1 / (1 + Math.exp(-0.5));
    assert.ok(Math.abs(hp.dataSync()[0] - s * Math.tanh(s + s * Math.tanh(0.5))) < 1e-15);
    assert.throws(() => I.gruCell(kd.ones([2, 9]), kd.ones([2, 6]), kd.ones([2, 3])), { code: 'KD_SHAPE_MISMATCH', message: /hiddenGates/ });
    assert.throws(() => I.gruCellBackward(kd.ones([2, 3]), kd.ones([2, 3]), kd.ones([2, 9])), { code: 'KD_SHAPE_MISMATCH', message: /workspace/ });
    const [a, b, c] = I.lstmCell(kd.ones([0, 8]), kd.ones([0, 2]));
    assert.deepEqual([a.shape, b.shape, c.shape], [[0, 2], [0, 2], [0, 8]]);
  });
});

describe('kd.nn.LSTM / GRU / RNN: construction, defaults, modes, errors', function () {
  it('parameters: PyTorch names, shapes and init range; allWeights; repr', function () {
    const m = new nn.LSTM(3, 5, 2, { bidirectional: true, projSize: 2 });
    const names = [...m.namedParameters()].map(([k, p]) => `${k}:${p.shape.join('x')}`);
    assert.deepEqual(names, [
      'weight_ih_l0:20x3', 'weight_hh_l0:20x2', 'bias_ih_l0:20', 'bias_hh_l0:20', 'weight_hr_l0:2x5',
      'weight_ih_l0_reverse:20x3', 'weight_hh_l0_reverse:20x2', 'bias_ih_l0_reverse:20', 'bias_hh_l0_reverse:20', 'weight_hr_l0_reverse:2x5',
      'weight_ih_l1:20x4', 'weight_hh_l1:20x2', 'bias_ih_l1:20', 'bias_hh_l1:20', 'weight_hr_l1:2x5',
      'weight_ih_l1_reverse:20x4', 'weight_hh_l1_reverse:20x2', 'bias_ih_l1_reverse:20', 'bias_hh_l1_reverse:20', 'weight_hr_l1_reverse:2x5',
    ]);
    const bound = 1 / Math.sqrt(5);
    for (const p of m.parameters()) for (const v of values(p)) assert.ok(Math.abs(v) <= bound);
    assert.equal(m.allWeights.length, 4);
    assert.equal(m.allWeights[1][0], m.weightIhL0Reverse);
    assert.match(String(m), /LSTM\(3, 5, proj_size=2, num_layers=2, bidirectional=True\)/);
    assert.match(String(new nn.GRU(3, 5, 2, false, true, 1)), /GRU\(3, 5, num_layers=2, bias=False, batch_first=True, dropout=1\.0\)/);
    const g = new nn.GRU(4, 3, { bias: false, batchFirst: true });
    assert.deepEqual([...g.namedParameters()].map(([k]) => k), ['weight_ih_l0', 'weight_hh_l0']);
    assert.equal(g.weightIhL0.shape[0], 9);
    const r = new nn.RNN(2, 3, { nonlinearity: 'relu' });
    assert.equal(r.mode, 'RNN_RELU');
    assert.equal(new nn.RNN(2, 3).mode, 'RNN_TANH');
    const cell = new nn.LSTMCell(3, 4);
    assert.deepEqual([...cell.namedParameters()].map(([k, p]) => `${k}:${p.shape.join('x')}`), ['weight_ih:16x3', 'weight_hh:16x4', 'bias_ih:16', 'bias_hh:16']);
    assert.deepEqual([...new nn.RNNCell(3, 4, false).namedParameters()].map(([k]) => k), ['weight_ih', 'weight_hh']);
  });

  it('a PyTorch state dict loads by name; stateDict round trip', function () {
    const c = RNN.modules.find((x) => x.name === 'LSTM projSize bidirectional');
    const m = loaded(c);
    const sd = m.stateDict();
    assert.deepEqual(Object.keys(sd).sort(), Object.keys(c.state).sort());
  });

  it('no initial state means zeros; outputs do not depend on the batch order of a packed input', function () {
    kd.manualSeed(3);
    const m = new nn.GRU(3, 4, 2);
    const x = kd.randn([5, 2, 3]);
    const [a, ha] = m(x);
    const [b, hb] = m(x, kd.zeros([2, 2, 4]));
    assert.ok(kd.equal(a, b) && kd.equal(ha, hb));
    const p1 = U.packPaddedSequence(x, [5, 3]);
    const p2 = U.packPaddedSequence(x.flip([1]), [3, 5], { enforceSorted: false });
    const [o1, h1] = m(p1);
    const [o2, h2] = m(p2);
    assert.ok(kd.allclose(o1.data, o2.data));
    assert.ok(kd.allclose(h1, h2.flip([1])));
  });

  it('runs under CPU autocast (bfloat16 matmuls, float32 states promote as PyTorch)', function () {
    kd.manualSeed(8);
    for (const m of [new nn.LSTM(3, 4, 2), new nn.GRU(3, 4), new nn.LSTMCell(3, 4)]) {
      const x = kd.randn([5, 2, 3]);
      const input = m instanceof nn.LSTMCell ? x.select(0, 0) : x;
      const ref = m(input);
      const low = kd.autocast({ deviceType: 'cpu' }, () => m(input));
      assert.ok(kd.allclose(low[0].to('float32'), ref[0], 0.05, 0.05), `${m.constructor.name} under autocast`);
    }
  });

  it('inference under noGrad builds no graph; dropout only between layers and only in training', function () {
    kd.manualSeed(4);
    const m = new nn.LSTM(3, 4, 3, { dropout: 0.5 });
    const x = kd.randn([4, 2, 3]);
    const [y] = kd.noGrad(() => m(x));
    assert.equal(y.gradFn, null);
    m.eval();
    const [e1] = m(x);
    const [e2] = m(x);
    assert.ok(kd.equal(e1, e2));
    m.train();
    kd.manualSeed(1);
    const [t1] = m(x);
    kd.manualSeed(2);
    const [t2] = m(x);
    assert.ok(!kd.allclose(t1, t2), 'dropout changes the training output');
    const one = new nn.LSTM(3, 4, { dropout: 0 });
    one.train();
    const [u1] = one(x);
    const [u2] = one(x);
    assert.ok(kd.equal(u1, u2));
  });

  it('a long sequence: one graph node per layer and direction, gradient still correct (float64 gradcheck)', function () {
    kd.manualSeed(5);
    const m = new nn.LSTM(2, 3, 2, { bidirectional: true }).to('float64');
    const x = kd.randn([6, 2, 2], { dtype: 'float64' }).requiresGrad_();
    const h0 = kd.randn([4, 2, 3], { dtype: 'float64' }).requiresGrad_();
    const c0 = kd.randn([4, 2, 3], { dtype: 'float64' }).requiresGrad_();
    assert.ok(kd.autograd.gradcheck((a, h, c) => { const [o, [hn, cn]] = m(a, [h, c]); return [o, hn, cn]; }, [x, h0, c0]));
    const g = new nn.GRU(2, 3, { bidirectional: true }).to('float64');
    const p = (a) => g(U.packPaddedSequence(a, [4, 6, 1], { enforceSorted: false }))[0].data;
    const x3 = kd.randn([6, 3, 2], { dtype: 'float64' }).requiresGrad_();
    assert.ok(kd.autograd.gradcheck(p, [x3]));
  });

  it('leaves no tensors behind: forward keeps its outputs, backward frees what the layer saved', function () {
    const { collectGarbage } = require('./helpers');
    kd.manualSeed(6);
    for (const [name, make] of [['LSTM', () => new nn.LSTM(3, 4, 2, { bidirectional: true, projSize: 2 })], ['GRU', () => new nn.GRU(3, 4, 2)]]) {
      const m = make();
      const x = kd.randn([5, 2, 3]).requiresGrad_();
      const packed = kd.noGrad(() => U.packPaddedSequence(x, [5, 3]));
      packed.data.requiresGrad_(); // a leaf: the count sees the layer's tensors only
      for (const input of [x, x, packed, packed]) { // each twice: the first run's wrappers are collected by the second's count
        const leaf = input === x ? x : packed.data;
        collectGarbage(); // garbage of earlier tests is finalized by the second collection
        const before = collectGarbage().liveTensors;
        const [o, st] = m(input);
        const outs = [input === x ? o : o.data, ...(Array.isArray(st) ? st : [st])];
        const ones = outs.map((t) => kd.onesLike(t));
        kd.autograd.backward(outs, ones);
        kd.dispose(ones);
        assert.ok([leaf, ...m.parameters()].every((t) => t.grad !== null), `${name}: every gradient is there`);
        kd.dispose(outs);
        for (const t of [leaf, ...m.parameters()]) t.grad = null;
        collectGarbage();
        // <= 0: the count is the process's, and a worker thread of an earlier test may free its
        // environment's tensors meanwhile; a tensor the layer left behind makes it positive
        const left = collectGarbage().liveTensors - before;
        assert.ok(left <= 0, `${name} ${input === x ? 'padded' : 'packed'}: ${left} tensors left behind`);
      }
      kd.dispose([x, packed.data, packed.batchSizes, ...m.parameters()]);
    }
  });

  it('errors as PyTorch', function () {
    assert.throws(() => new nn.LSTM(3, 4, { dropout: 1.5 }), { code: 'KD_INVALID_ARGUMENT', message: /dropout should be a number in range \[0, 1\]/ });
    assert.throws(() => new nn.LSTM(3, 4, { projSize: 4 }), { code: 'KD_INVALID_ARGUMENT', message: /proj_size has to be smaller than hidden_size/ });
    assert.throws(() => new nn.LSTM(3, 4, { projSize: -1 }), { code: 'KD_INVALID_ARGUMENT', message: /proj_size should be a positive integer/ });
    assert.throws(() => new nn.GRU(3, 4, { projSize: 2 }), { code: 'KD_INVALID_ARGUMENT', message: /only supported for LSTM/ });
    assert.throws(() => new nn.RNN(3, 4, { nonlinearity: 'sigmoid' }), { code: 'KD_INVALID_ARGUMENT', message: /Unknown nonlinearity 'sigmoid'/ });
    assert.throws(() => new nn.LSTM(3, 4.5), TypeError);
    const m = new nn.LSTM(3, 4, 2);
    assert.throws(() => m(kd.zeros([5, 2, 4])), { code: 'KD_SHAPE_MISMATCH', message: 'input.size(-1) must be equal to input_size. Expected 3, got 4' });
    assert.throws(() => m(kd.zeros([3])), { code: 'KD_SHAPE_MISMATCH', message: 'input must have 3 dimensions, got 2' });
    assert.throws(() => m(kd.zeros([0, 2, 3])), { code: 'KD_INVALID_ARGUMENT', message: 'Expected sequence length to be larger than 0 in RNN' });
    assert.deepEqual(m(kd.zeros([4, 0, 3]))[1][0].shape, [2, 0, 4], 'an empty batch is fine');
    assert.throws(() => m(kd.zeros([5, 2, 3]), [kd.zeros([1, 2, 4]), kd.zeros([2, 2, 4])]),
      { code: 'KD_SHAPE_MISMATCH', message: 'Expected hidden[0] size (2, 2, 4), got [1, 2, 4]' });
    assert.throws(() => m(kd.zeros([5, 2, 3]), [kd.zeros([2, 2, 4]), kd.zeros([2, 3, 4])]),
      { code: 'KD_SHAPE_MISMATCH', message: 'Expected hidden[1] size (2, 2, 4), got [2, 3, 4]' });
    assert.throws(() => m(kd.zeros([5, 2, 3]), [kd.zeros([2, 4]), kd.zeros([2, 4])]),
      { code: 'KD_SHAPE_MISMATCH', message: 'For batched 3-D input, hx and cx should also be 3-D but got (2-D, 2-D) tensors' });
    assert.throws(() => m(kd.zeros([5, 3]), [kd.zeros([2, 1, 4]), kd.zeros([2, 1, 4])]),
      { code: 'KD_SHAPE_MISMATCH', message: 'For unbatched 2-D input, hx and cx should also be 2-D but got (3-D, 3-D) tensors' });
    assert.throws(() => m(kd.zeros([5, 2, 3]), kd.zeros([2, 2, 4])), TypeError);
    const g = new nn.GRU(3, 4);
    assert.throws(() => g(kd.zeros([5, 2, 3]), kd.zeros([2, 2, 4])), { code: 'KD_SHAPE_MISMATCH', message: 'Expected hidden size (1, 2, 4), got [2, 2, 4]' });
    assert.throws(() => g(kd.zeros([5, 3]), kd.zeros([1, 1, 4])), { code: 'KD_SHAPE_MISMATCH', message: 'For unbatched 2-D input, hx should also be 2-D but got 3-D tensor' });
    const p = U.packSequence([kd.zeros([2, 3]), kd.zeros([1, 3])]);
    assert.throws(() => g(p, kd.zeros([1, 3, 4])), { code: 'KD_SHAPE_MISMATCH', message: 'Expected hidden size (1, 2, 4), got [1, 3, 4]' });
    const cell = new nn.LSTMCell(3, 4);
    assert.throws(() => cell(kd.zeros([2, 2, 3])), { code: 'KD_SHAPE_MISMATCH', message: 'LSTMCell: Expected input to be 1-D or 2-D but received 3-D tensor' });
    assert.throws(() => cell(kd.zeros([2, 2])), { code: 'KD_SHAPE_MISMATCH', message: 'input has inconsistent input_size: got 2 expected 3' });
    assert.throws(() => cell(kd.zeros([2, 3]), [kd.zeros([3, 4]), kd.zeros([2, 4])]), { code: 'KD_SHAPE_MISMATCH', message: "Input batch size 2 doesn't match hidden0 batch size 3" });
    assert.throws(() => cell(kd.zeros([2, 3]), [kd.zeros([2, 4]), kd.zeros([2, 5])]), { code: 'KD_SHAPE_MISMATCH', message: 'hidden1 has inconsistent hidden_size: got 5, expected 4' });
    assert.throws(() => new nn.GRUCell(3, 4)(kd.zeros([2, 3]), kd.zeros([2, 3])), { code: 'KD_SHAPE_MISMATCH', message: 'hidden has inconsistent hidden_size: got 3, expected 4' });
  });
});

describe('recurrent layers on the emulated GPU', function () {
  before(function () {
    if (!kd.cuda.isAvailable()) this.skip();
  });
  for (const name of ['LSTM packed unsorted lengths bidirectional', 'LSTM projSize bidirectional', 'GRU packed unsorted lengths bidirectional', 'RNN tanh 2 layers', 'LSTM float32 2 layers', 'GRU float32 2 layers']) {
    it(name, function () { runModuleCase(RNN.modules.find((c) => c.name === name), 'cuda'); });
  }
  for (const c of RNN.cells) it(c.name, function () { runCellCase(c, 'cuda'); });
  it('the fused steps: first and second derivatives against finite differences (float64), the CPU result', function () {
    const I = kd._internal;
    kd.manualSeed(7);
    const g = kd.randn([3, 8], { dtype: 'float64' });
    const c = kd.randn([3, 2], { dtype: 'float64' });
    const gd = g.to('cuda').requiresGrad_();
    const cd = c.to('cuda').requiresGrad_();
    assert.ok(kd.autograd.gradcheck((a, b) => { const r = I.lstmCell(a, b); return [r[0], r[1]]; }, [gd, cd]));
    const cpu = I.lstmCell(g, c);
    const dev = I.lstmCell(gd, cd);
    for (let k = 0; k < 3; k++) assert.ok(kd.allclose(dev[k].cpu(), cpu[k], 1e-12, 1e-14));
    const h = kd.randn([3, 2], { dtype: 'float64' });
    const xg = kd.randn([3, 6], { dtype: 'float64' });
    const hg = kd.randn([3, 6], { dtype: 'float64' });
    assert.ok(kd.autograd.gradcheck((a, b, hh) => I.gruCell(a, b, hh)[0],
      [xg.to('cuda').requiresGrad_(), hg.to('cuda').requiresGrad_(), h.to('cuda').requiresGrad_()]));
    assert.ok(kd.autograd.gradgradcheck((a, b) => { const r = I.lstmCell(a, b); return [r[0], r[1], r[2]]; }, [gd, cd]));
    assert.ok(kd.autograd.gradgradcheck((a, b, hh) => { const r = I.gruCell(a, b, hh); return [r[0], r[1]]; },
      [xg.to('cuda').requiresGrad_(), hg.to('cuda').requiresGrad_(), h.to('cuda').requiresGrad_()]));
    const half = (t) => t.to('cuda').to('float16');
    const f16 = I.gruCell(half(xg), half(hg), half(h))[0];
    assert.equal(f16.dtype, 'float16');
    assert.ok(kd.allclose(f16.cpu().to('float64'), I.gruCell(xg, hg, h)[0], 1e-2, 1e-2));
  });
});
