// nn_module_devices.test.js - kd.nn.Module.ipu() / xpu() (lib/nn/module_devices.js): as PyTorch 1.13
// on a build without IPU / XPU support, an error with PyTorch's message at the first tensor, the
// module returned unchanged when it has none.
'use strict';
const assert = require('node:assert');
const kd = require('..');

describe('nn.Module.ipu / xpu', () => {
  for (const type of ['ipu', 'xpu']) {
    it(`${type}() fails as PyTorch without ${type} support, leaving the parameters`, () => {
      const m = new kd.nn.Linear(2, 3);
      const w = m.weight;
      assert.throws(() => m[type](), (e) => e instanceof kd.KindlingError && e.code === 'KD_NOT_SUPPORTED' &&
        e.message === `kindling is not linked with support for ${type} devices`);
      assert.throws(() => m[type](`${type}:1`), (e) => e.code === 'KD_NOT_SUPPORTED');
      assert.throws(() => m[type](0), (e) => e.code === 'KD_INVALID_ARGUMENT' && e.message === `Invalid device, must be ${type} device`);
      assert.throws(() => m[type]('cuda'), (e) => e.code === 'KD_INVALID_ARGUMENT');
      assert.throws(() => m[type](-1), (e) => e.message === 'Device index must not be negative');
      assert.throws(() => m[type]({}), (e) => e instanceof TypeError);
      assert.strictEqual(m.weight, w);
      assert.equal(m.weight.device, 'cpu');
    });
    it(`${type}() of a module without tensors returns it`, () => {
      const m = new kd.nn.Sequential(new kd.nn.ReLU(), new kd.nn.Tanh());
      assert.strictEqual(m[type](), m);
    });
  }
});
