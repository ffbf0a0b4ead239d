// nn_uninitialized.test.js - kd.nn.UninitializedParameter, kd.nn.UninitializedBuffer and
// kd.nn.parameter.isLazy (lib/nn/uninitialized.js) as PyTorch 1.13's: metadata before
// materialisation, PyTorch's errors for any other use, materialize() turning the same object into
// a Parameter / Tensor of the given shape, dtype and device.
'use strict';

const assert = require('assert');
const kd = require('..');

const { nn } = kd;
const uninitialized = (e) => e instanceof kd.KindlingError && e.code === 'KD_INVALID_ARGUMENT' && /Attempted to use an uninitialized parameter/.test(e.message);

describe('kd.nn.UninitializedParameter / UninitializedBuffer', function () {
  it('hold dtype, device and requiresGrad; any use before materialize throws PyTorch\'s error', function () {
    const p = new nn.UninitializedParameter();
    assert.ok(p instanceof nn.Parameter && p instanceof kd.Tensor);
    assert.ok(nn.parameter.isLazy(p));
    assert.equal(p.dtype, 'float32');
    assert.equal(p.device, 'cpu');
    assert.equal(p.requiresGrad, true);
    assert.equal(String(p), '<UninitializedParameter>');
    assert.throws(() => p.shape, /Can't access the shape of an uninitialized parameter or buffer/);
    assert.throws(() => p.add(1), uninitialized);
    assert.throws(() => kd.mul(p, 2), uninitialized);
    assert.throws(() => p.sum(), uninitialized);
    assert.throws(() => p.dataSync(), uninitialized);
    assert.throws(() => p.shareMemory_(), /Can't share memory on an uninitialized parameter or buffer/);
    const b = new nn.UninitializedBuffer({ dtype: 'float64' });
    assert.ok(nn.parameter.isLazy(b) && !(b instanceof nn.Parameter));
    assert.equal(b.requiresGrad, false);
    assert.equal(b.dtype, 'float64');
    assert.throws(() => b.mean(), uninitialized);
    assert.equal(new nn.UninitializedParameter(false).requiresGrad, false);
    assert.throws(() => new nn.UninitializedParameter('yes'), TypeError);
    assert.ok(!nn.parameter.isLazy(new nn.Parameter(kd.zeros(2))) && !nn.parameter.isLazy(kd.zeros(2)));
  });

  it('materialize makes the same object a Parameter or Tensor of the shape, keeping dtype, device, requiresGrad', function () {
    const p = new nn.UninitializedParameter({ dtype: 'float64' });
    const same = p;
    assert.equal(p.materialize([2, 3]), same);
    assert.ok(!nn.parameter.isLazy(p));
    assert.ok(p instanceof nn.Parameter);
    assert.equal(typeof p.materialize, 'undefined');
    assert.deepStrictEqual(p.shape, [2, 3]);
    assert.equal(p.dtype, 'float64');
    assert.ok(p.requiresGrad && p.isLeaf);
    kd.noGrad(() => p.fill_(2));
    p.mul(3).sum().backward();
    assert.deepStrictEqual(p.grad.arraySync(), [[3, 3, 3], [3, 3, 3]]);
    const q = new nn.UninitializedParameter(false);
    q.materialize(4, { dtype: 'float64' });
    assert.deepStrictEqual(q.shape, [4]);
    assert.equal(q.dtype, 'float64');
    assert.equal(q.requiresGrad, false);
    const b = new nn.UninitializedBuffer();
    b.materialize([0]);
    assert.ok(b instanceof kd.Tensor && !(b instanceof nn.Parameter) && !nn.parameter.isLazy(b));
    assert.deepStrictEqual(b.shape, [0]);
    assert.throws(() => new nn.UninitializedBuffer().materialize([-1]), TypeError);
  });

  it('a module registers one and lists it; using the module before materialisation throws', function () {
    const m = new nn.Module();
    m.registerParameter('weight', new nn.UninitializedParameter());
    assert.equal(m.parameters().length, 1);
    assert.ok(nn.parameter.isLazy(m.weight));
    assert.throws(() => kd.nn.functional.linear(kd.ones([1, 2]), m.weight), uninitialized);
    m.weight.materialize([3, 2]);
    kd.noGrad(() => m.weight.fill_(1));
    assert.deepStrictEqual(kd.nn.functional.linear(kd.ones([1, 2]), m.weight).arraySync(), [[2, 2, 2]]);
  });
});
