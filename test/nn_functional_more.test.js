// nn_functional_more.test.js - kd.nn.functional's deprecated resizing wrappers (upsample,
// upsampleNearest, upsampleBilinear) and bilinear against PyTorch 1.13
// (test/fixtures/nn_functional_more.json, written by tools/fixtures/nn_functional_more.py): values
// and errors here; the recorded gradients run in autograd_parity.test.js (gradcheck on float64).
// Then what fixtures cannot say: the call forms, nn.Bilinear sharing F.bilinear.
'use strict';

const assert = require('assert');
const kd = require('..');
const { parityTests } = require('./helpers');

const F = kd.nn.functional;

parityTests('nn_functional_more', 'kd.nn.functional upsample* and bilinear (PyTorch fixtures)');

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
});
