// nn_module_tensor_attributes.test.js - Note [Tensor attributes] (lib/nn/module.js): a Tensor
// written on a module as a plain attribute (a mask a forward caches for the next call, as
// word_language_model's TransformerModel keeps self.src_mask) belongs to the module: a kd.tidy
// scope that made it does not dispose it; dispose() and the other tensors of the scope still work.
'use strict';

const assert = require('node:assert/strict');
const kd = require('..');

describe('nn.Module tensor attributes', function () {
  class Cached extends kd.nn.Module {
    constructor() {
      super();
      this.lin = new kd.nn.Linear(3, 3);
      this.mask = null;
    }

    forward(x) {
      if (this.mask === null || this.mask.size(0) !== x.size(0)) this.mask = kd.log(kd.tril(kd.ones(x.size(0), x.size(0))));
      return this.lin(x).add(this.mask.sum(1, true).clamp({ min: -1 }));
    }
  }

  it('a tensor a forward stores on the module outlives the tidy scope it was made in', function () {
    const m = new Cached();
    const x = kd.ones(4, 3);
    const first = kd.tidy(() => m(x).sum().item());
    assert.ok(m.mask instanceof kd.Tensor);
    assert.equal(m.mask.isDisposed, false);
    const second = kd.tidy(() => m(x).sum().item()); // reads the cached mask
    assert.equal(second, first);
    assert.deepEqual(m.mask.arraySync()[0], [0, -Infinity, -Infinity, -Infinity]);
  });

  it('the other tensors of the scope are still disposed; the attribute is freed by dispose()', function () {
    const m = new Cached();
    let x; let y;
    kd.tidy(() => { x = kd.ones(2, 3); y = m(x); });
    assert.equal(x.isDisposed, true);
    assert.equal(y.isDisposed, true);
    assert.equal(m.mask.isDisposed, false, 'only the cached mask is left');
    m.mask.dispose();
    assert.equal(m.mask.isDisposed, true);
  });

  it('a buffer assigned inside a scope survives it too; a plain non-tensor value is untouched', function () {
    const m = new kd.nn.Module();
    m.registerBuffer('running', null);
    kd.tidy(() => { m.running = kd.ones(2); m.note = 'x'; });
    assert.deepEqual(m.running.arraySync(), [1, 1]);
    assert.equal(m.note, 'x');
    assert.deepEqual(m.stateDict().running.arraySync(), [1, 1]);
  });
});
