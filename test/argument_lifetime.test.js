// argument_lifetime.test.js - JS code run while an op's arguments are read (an array element
// that is a getter, or a Proxy) cannot free a tensor the op is about to use: lib/args.js reads
// each argument once, before native code runs, and a tensor the native call unwrapped that is
// disposed while the call runs (by a getter, or by a JS kernel) is freed only when the call
// returns (Note [Arguments are held for the call] in src/napi/ops.c).
'use strict';

const path = require('node:path');
const { kd, assert, expectKdError } = require('./helpers');

const N = require(path.join(__dirname, '..', 'build', 'Release', 'kindling.node'));

// Allocations of the size a freed tensor struct had: if the op still pointed at a disposed
// tensor, it would now read one of these ([7, 5, 4]) instead.
function churn(keep) {
  for (let i = 0; i < 64; i++) keep.push(kd.zeros([7, 5, 4]));
}

describe('argument lifetime', function () {
  it('an int-list element is read once, before any tensor is unwrapped', function () {
    const a = kd.arange(6, { dtype: 'float32' }).reshape([2, 3]);
    const keep = [];
    const dims = [1, 0];
    let reads = 0;
    Object.defineProperty(dims, 1, {
      get() {
        if (++reads === 2) { a.dispose(); churn(keep); } // a second read would be inside the native call
        return 0;
      },
    });
    const p = a.permute(dims);
    assert.equal(reads, 1);
    assert.deepEqual(p.shape, [3, 2]);
    assert.deepEqual(Array.from(p.contiguous().dataSync()), [0, 3, 1, 4, 2, 5]);
    keep.forEach((t) => t.dispose());
  });

  it('a getter that disposes the tensor argument first gives KD_DISPOSED', function () {
    const a = kd.ones([2, 3]);
    const dims = [1, 0];
    Object.defineProperty(dims, 1, { get() { a.dispose(); return 0; } });
    expectKdError(() => a.permute(dims), 'KD_DISPOSED');
  });

  it('native entry: a tensor disposed while a later argument is read stays alive for the call', function () {
    const a = kd.arange(6, { dtype: 'float32' }).reshape([2, 3]);
    const keep = [];
    const dims = [1, 0];
    Object.defineProperty(dims, 1, { get() { a.dispose(); churn(keep); return 0; } });
    const h = N.ops.permute(a._h, dims);
    assert.deepEqual(N.shape(h), [3, 2]);
    const p = new kd.Tensor(h);
    assert.deepEqual(Array.from(p.contiguous().dataSync()), [0, 3, 1, 4, 2, 5]);
    keep.forEach((t) => t.dispose());
  });

  it('native entry: a tensor-list element disposed by a later element\'s getter stays alive', function () {
    const a = kd.tensor([1, 2], { dtype: 'float32' });
    const b = kd.tensor([3], { dtype: 'float32' });
    const keep = [];
    const list = [a._h, null];
    Object.defineProperty(list, 1, { get() { a.dispose(); churn(keep); return b._h; } });
    const c = new kd.Tensor(N.ops.cat(list, 0));
    assert.deepEqual(Array.from(c.dataSync()), [1, 2, 3]);
    keep.forEach((t) => t.dispose());
  });

  describe('a JS kernel (kd.library) running inside the call', function () {
    let n = 0;
    const define = (schema, fn) => {
      const ns = `life${++n}`;
      kd.library.define(`${ns}::${schema}`);
      kd.library.impl(`${ns}::${schema.slice(0, schema.indexOf('('))}`, 'cpu', fn);
      return kd.ops[ns];
    };
    const live = () => kd.memory().liveTensors;

    it('disposes the caller\'s argument: the call finishes on it, and it is freed when the call returns', function () {
      const keep = [];
      let victim;
      const ops = define('f(Tensor x, Tensor y) -> Tensor', (x, y) => {
        victim.dispose();
        churn(keep);
        return x.add(y);
      });
      const n0 = live();
      victim = kd.arange(6, { dtype: 'float32' });
      const r = ops.f(victim, victim);
      assert.equal(victim.isDisposed, true);
      assert.deepEqual(Array.from(r.dataSync()), [0, 2, 4, 6, 8, 10]);
      keep.forEach((t) => t.dispose());
      r.dispose();
      assert.equal(live(), n0, 'the reference the call took over is released');
    });

    it('a temporary it makes and disposes is freed at once, not when the call returns', function () {
      let during = -1;
      const ops = define('g(Tensor x) -> Tensor', (x) => {
        const before = live();
        const t = kd.zeros([1000]);
        t.dispose();
        during = live() - before;
        return x.mul(2);
      });
      const x = kd.ones([3]);
      const r = ops.g(x);
      assert.equal(during, 0);
      kd.dispose([x, r]);
    });

    it('nested calls: a tensor of both calls disposed in the inner kernel lives until the outer call returns', function () {
      let victim;
      const inner = define('inner(Tensor x) -> Tensor', (x) => { victim.dispose(); return x.mul(3); });
      const outer = define('outer(Tensor x) -> Tensor', (x) => {
        const y = inner.inner(victim);
        const z = y.add(x);
        y.dispose();
        return z;
      });
      const n0 = live();
      victim = kd.arange(4, { dtype: 'float32' });
      const r = outer.outer(victim);
      assert.deepEqual(Array.from(r.dataSync()), [0, 4, 8, 12]);
      r.dispose();
      assert.equal(live(), n0);
    });
  });
});
