// autograd_fused.test.js - the fused backward ops (src/ops/oplist/autograd_fused.js,
// src/cpu/autograd_fused.c): PyTorch parity fixtures, a large input across the parallel grain,
// and the backward formulas that use them (relu; mm/addmm/linear with column-major operands).
'use strict';

const kd = require('..');
const { assert, parityTests } = require('./helpers');

parityTests('autograd_fused');

/** Whether two tensors hold the same values (shape and elements, to 1e-10 relative). */
function close(a, b) {
  if (a.shape.join() !== b.shape.join()) return false;
  const x = a.contiguous().dataSync(), y = b.contiguous().dataSync();
  return x.every((v, i) => Math.abs(v - y[i]) <= 1e-10 * (1 + Math.abs(y[i])));
}

describe('autograd_fused', function () {
  it('thresholdBackward on a large strided input matches where(self > t, grad, 0)', function () {
    const g = kd.randn([300, 257]);
    const s = kd.randn([257, 300]).t();
    const got = kd._internal.thresholdBackward(g, s, 0.1);
    const want = kd.where(s.gt(0.1), g, 0);
    assert.deepStrictEqual(Array.from(got.dataSync()), Array.from(want.dataSync()));
  });

  it('relu backward passes the gradient where the result is positive', function () {
    const x = kd.tensor([-1.5, 0, 2, 3]).requiresGrad_();
    kd.relu(x).mul(kd.tensor([1, 2, 3, 4])).sum().backward();
    assert.deepStrictEqual(Array.from(x.grad.dataSync()), [0, 0, 3, 4]);
  });

  it('linear backward: weight gradient is contiguous and matches the float64 reference', function () {
    const x = kd.randn([5, 7], { dtype: 'float64' });
    const w = kd.randn([3, 7], { dtype: 'float64' }).requiresGrad_();
    const b = kd.randn([3], { dtype: 'float64' }).requiresGrad_();
    const g = kd.randn([5, 3], { dtype: 'float64' });
    kd.nn.functional.linear(x, w, b).backward(g);
    assert.ok(w.grad.isContiguous());
    const want = g.t().mm(x);
    assert.ok(close(w.grad, want));
    assert.ok(close(b.grad, g.sum(0)));
  });

  it('mm backward with column-major and row-major operands matches the plain formulas', function () {
    for (const [ta, tb] of [[false, false], [true, false], [false, true], [true, true]]) {
      const a0 = ta ? kd.randn([6, 4], { dtype: 'float64' }) : kd.randn([4, 6], { dtype: 'float64' });
      const b0 = tb ? kd.randn([5, 6], { dtype: 'float64' }) : kd.randn([6, 5], { dtype: 'float64' });
      const a = a0.requiresGrad_(), b = b0.requiresGrad_();
      const av = ta ? a.t() : a, bv = tb ? b.t() : b;
      const g = kd.randn([4, 5], { dtype: 'float64' });
      av.mm(bv).backward(g);
      const ga = kd.noGrad(() => g.mm(bv.t())), gb = kd.noGrad(() => av.t().mm(g));
      assert.ok(close(a.grad, ta ? ga.t() : ga), `mat1 ${ta} ${tb}`);
      assert.ok(close(b.grad, tb ? gb.t() : gb), `mat2 ${ta} ${tb}`);
      assert.ok(a.grad.isContiguous() && b.grad.isContiguous());
    }
  });

  it('addmm backward scales by alpha and beta when they are not 1', function () {
    const s = kd.randn([4, 5], { dtype: 'float64' }).requiresGrad_();
    const m1 = kd.randn([4, 3], { dtype: 'float64' }).requiresGrad_();
    const m2 = kd.randn([5, 3], { dtype: 'float64' }).requiresGrad_();
    const g = kd.randn([4, 5], { dtype: 'float64' });
    kd.addmm(s, m1, m2.t(), { beta: 0.5, alpha: 2 }).backward(g);
    assert.ok(close(s.grad, g.mul(0.5)));
    assert.ok(close(m1.grad, kd.noGrad(() => g.mm(m2)).mul(2)));
    assert.ok(close(m2.grad, kd.noGrad(() => g.t().mm(m1)).mul(2)));
  });
});
