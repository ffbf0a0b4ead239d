// nn_functional_more.test.js - kd.nn.functional's deprecated resizing wrappers (upsample,
// upsampleNearest, upsampleBilinear) and bilinear against PyTorch 1.13
// (test/fixtures/nn_functional_more.json, written by tools/fixtures/nn_functional_more.py): values
// and errors here, multiHeadAttentionForward's too; the recorded gradients run in autograd_parity.test.js (gradcheck on float64).
// Then what fixtures cannot say: the call forms, nn.Bilinear sharing F.bilinear.
'use strict';

const assert = require('assert');
const kd = require('..');
const { parityTests } = require('./helpers');

const F = kd.nn.functional;

parityTests('nn_functional_more', 'kd.nn.functional upsample*, bilinear and multiHeadAttentionForward, convTbc (PyTorch fixtures)');

describe('kd.nn.functional upsample* and bilinear', function () {
  it('upsample* equal interpolate with their mode and alignCorners', function () {
    const x = kd.randn([2, 3, 4, 5], { dtype: 'float64' });
    const same = (a, b) => assert.deepStrictEqual(a.arraySync(), b.arraySync());
    same(F.upsampleBilinear(x, [7, 9]), F.interpolate(x, { size: [7, 9], mode: 'bilinear', alignCorners: true }));
    assert.notDeepStrictEqual(F.upsampleBilinear(x, [7, 9]).arraySync(),
      F.interpolate(x, { size: [7, 9], mode: 'bilinear', alignCorners: false }).arraySync());
    same(F.upsampleNearest(x, null, 2), F.interpolate(x, { scaleFactor: 2, mode: 'nearest' }));
    same(F.upsample(x, { size: [3, 3], mode: 'area' }), F.adaptiveAvgPool2d(x, [3, 3]));
    same(F.upsample(x, [6, 6], null, 'bicubic', true), F.interpolate(x, [6, 6], null, 'bicubic', true));
    assert.throws(() => F.upsampleNearest(x, [6, 6], null, 'bilinear'), TypeError);
  });

  it('nn.Bilinear forwards through F.bilinear (one computation)', function () {
    const m = new kd.nn.Bilinear(3, 4, 5, { dtype: 'float64' });
    const a = kd.randn([2, 6, 3], { dtype: 'float64' });
    const b = kd.randn([2, 6, 4], { dtype: 'float64' });
    assert.deepStrictEqual(m.forward(a, b).arraySync(), F.bilinear(a, b, m.weight, m.bias).arraySync());
    assert.deepStrictEqual(F.bilinear(a, b, m.weight, { bias: m.bias }).arraySync(), F.bilinear(a, b, m.weight, m.bias).arraySync());
    assert.throws(() => m.forward(a, b.narrow(2, 0, 3)), (e) => e.code === 'KD_SHAPE_MISMATCH' && /input2 size/.test(e.message));
    assert.throws(() => F.bilinear(a, b, m.weight.select(0, 0)), (e) => e.code === 'KD_SHAPE_MISMATCH');
    assert.throws(() => F.bilinear(a, [1], m.weight), TypeError);
  });

  it('bilinear gradients to all four arguments (float64 gradcheck)', function () {
    const t = (s) => kd.randn(s, { dtype: 'float64', requiresGrad: true });
    assert.ok(kd.autograd.gradcheck((x1, x2, w, bb) => F.bilinear(x1, x2, w, bb), [t([2, 3, 2]), t([2, 3, 4]), t([5, 2, 4]), t([5])]));
  });

  it('nn.MultiheadAttention forwards through F.multiHeadAttentionForward', function () {
    const m = new kd.nn.MultiheadAttention(6, 3, { kdim: 4, vdim: 5, batchFirst: true, dtype: 'float64' });
    const q = kd.randn([2, 3, 6], { dtype: 'float64' });
    const k = kd.randn([2, 7, 4], { dtype: 'float64' });
    const v = kd.randn([2, 7, 5], { dtype: 'float64' });
    const [out, w] = m.forward(q, k, v);
    const r = F.multiHeadAttentionForward(q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1), 6, 3, null, m.inProjBias, null, null,
      false, 0, m.outProj.weight, m.outProj.bias, { useSeparateProjWeight: true, qProjWeight: m.qProjWeight, kProjWeight: m.kProjWeight, vProjWeight: m.vProjWeight });
    assert.deepStrictEqual(out.arraySync(), r.output.transpose(0, 1).arraySync());
    assert.deepStrictEqual(w.arraySync(), r.weights.arraySync());
    assert.strictEqual(F.multiHeadAttentionForward(q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1), 6, 3, null, null, null, null,
      false, 0, m.outProj.weight, null, true, null, false, null, true, m.qProjWeight, m.kProjWeight, m.vProjWeight)[1], null);
  });

  it('multiHeadAttentionForward checks what PyTorch asserts', function () {
    const x = kd.randn([3, 2, 4]);
    const p = [4, 2, kd.randn([12, 4]), kd.randn([12]), null, null, false, 0, kd.randn([4, 4]), kd.randn([4])];
    const fails = (args, re) => assert.throws(() => F.multiHeadAttentionForward(...args), (e) => e instanceof kd.KindlingError && re.test(e.message));
    fails([x, x, x, 6, ...p.slice(1)], /expecting embedding dimension of 6, but got 4/);
    fails([x, kd.randn([5, 2, 4]), kd.randn([4, 2, 4]), ...p], /key shape \[5,2,4\] does not match value shape \[4,2,4\]/);
    fails([x, x, x, ...p, { staticK: kd.randn([3, 3, 2]) }], /static_k.size\(0\) of 4, but got 3/);
    fails([x, x, x, ...p, { staticK: kd.randn([4, 3, 3]) }], /static_k.size\(2\) of 2, but got 3/);
    fails([x.unsqueeze(0), x.unsqueeze(0), x.unsqueeze(0), ...p], /unbatched 2D or batched 3D/);
    fails([x, x.select(1, 0), x, ...p], /expected `key` and `value` to be 3-D/);
    fails([x, x, x, 4, 3, ...p.slice(2)], /not divisible by num_heads 3/);
    fails([x, x, x, ...p.slice(0, 2), null, ...p.slice(3)], /inProjWeight is null/);
    fails([x, x, x, ...p, { useSeparateProjWeight: true }], /qProjWeight is null/);
    fails([x, x, x, ...p.slice(0, 4), kd.randn([1, 1, 4]), ...p.slice(5)], /biasK and biasV/);
    fails([x, x, x, ...p, { keyPaddingMask: kd.zeros([2, 4], { dtype: 'bool' }) }], /key_padding_mask shape of \[2,3\]/);
  });

  it('multiHeadAttentionForward drops out attention weights only in training', function () {
    const x = kd.randn([3, 2, 4], { dtype: 'float64' });
    const p = [4, 2, kd.randn([12, 4], { dtype: 'float64' }), null, null, null, false, 0.9, kd.randn([4, 4], { dtype: 'float64' }), null];
    const evalW = F.multiHeadAttentionForward(x, x, x, ...p, false)[1];
    const rowSums = evalW.sum(-1).arraySync().flat();
    rowSums.forEach((s1) => assert.ok(Math.abs(s1 - 1) < 1e-12));
    const w = F.multiHeadAttentionForward(x, x, x, ...p, true, { averageAttnWeights: false })[1];
    assert.ok(w.eq(0).any().item(), 'dropout 0.9 in training zeroes some weights');
  });

  it('convTbc is conv1d over [B, C, T] (float64), on non-contiguous input too', function () {
    const x = kd.randn([40, 3, 6], { dtype: 'float64' });
    const w = kd.randn([5, 6, 7], { dtype: 'float64' });
    const b = kd.randn([7], { dtype: 'float64' });
    const ref = F.conv1d(x.permute(1, 2, 0), w.permute(2, 1, 0), b, 1, 2).permute(2, 0, 1);
    const got = F.convTbc(x, w, b, { pad: 2 });
    assert.deepStrictEqual(got.shape, [40, 3, 7]);
    assert.ok(got.sub(ref).abs().max().item() < 1e-12);
    const xt = x.transpose(0, 1).contiguous().transpose(0, 1);
    assert.ok(!xt.isContiguous());
    assert.deepStrictEqual(F.convTbc(xt, w, b, 2).arraySync(), got.arraySync());
    assert.throws(() => F.convTbc(x, w), TypeError);
    assert.throws(() => F.convTbc(x, w, b.float()), (e) => e.code === 'KD_DTYPE_MISMATCH');
  });
});
