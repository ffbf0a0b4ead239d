// number_first.test.js - binary ops called with a number as self (kd.pow(2, t), kd.sub(1, t),
// kd.xlogy(2, t); Note [Numbers as self] in lib/args.js): PyTorch parity from
// test/fixtures/number_first.json (tools/fixtures/number_first.py: values, promotion, gradients,
// errors), then what fixtures cannot say: the call forms, the ops PyTorch refuses a number
// first for, methods, and that the 0-d tensor made for the number is freed.
'use strict';
const assert = require('node:assert');
const kd = require('..');
const { parityTests } = require('./helpers');

parityTests('number_first');

const values = (t) => Array.from(t.dataSync());
const isTypeError = (e) => e instanceof kd.KindlingError && e.code === 'KD_INVALID_TYPE';

describe('number first: call forms', () => {
  it('positional, by name, and with keyword options', () => {
    const t = kd.tensor([1, 2, 4]);
    assert.deepEqual(values(kd.sub(1, t)), [0, -1, -3]);
    assert.deepEqual(values(kd.sub({ self: 1, other: t })), [0, -1, -3]);
    assert.deepEqual(values(kd.sub(1, { other: t, alpha: 2 })), [-1, -3, -7]);
    assert.deepEqual(values(kd.div(1, t, { roundingMode: 'floor' })), [1, 0, 0]);
    assert.deepEqual(values(kd.pow(2, t)), [2, 4, 16]);
    assert.deepEqual(values(kd.special.xlogy(0, t)), [0, 0, 0]);
  });

  it('ops PyTorch 1.13 refuses a number first for stay type errors', () => {
    const t = kd.tensor([1, 2, 4]);
    for (const f of [kd.fmod, kd.atan2, kd.lt, kd.le, kd.gt, kd.ge, kd.eq, kd.ne, kd.maximum, kd.minimum, kd.hypot, kd.igamma]) {
      assert.throws(() => f(2, t), isTypeError, f.name);
    }
    assert.throws(() => kd.add(1, 2), isTypeError); // no tensor at all
    assert.throws(() => t.add(1, 2), isTypeError); // methods keep their tensor self
  });

  it('autograd flows to the tensor only', () => {
    const x = kd.tensor([0.5, 1.5], { requiresGrad: true });
    kd.pow(2, x).sum().backward();
    const expected = [2 ** 0.5 * Math.log(2), 2 ** 1.5 * Math.log(2)];
    values(x.grad).forEach((g, i) => assert.ok(Math.abs(g - expected[i]) < 1e-6, `${g} vs ${expected[i]}`));
  });

  it('the 0-d tensor made for the number is freed', () => {
    const t = kd.tensor([1, 2]);
    const before = kd.memory().liveTensors;
    const r = kd.mul(3, t);
    assert.equal(kd.memory().liveTensors, before + 1);
    r.dispose();
    assert.equal(kd.memory().liveTensors, before);
  });

  it('inside tidy', () => {
    const t = kd.tensor([2, 4]);
    const r = kd.tidy(() => kd.div(8, t));
    assert.deepEqual(values(r), [4, 2]);
  });
});
