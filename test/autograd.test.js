// autograd.test.js - the engine and the autograd API: graphs (diamonds, shared subgraphs, multiple
// outputs, a 100,000-op chain), accumulation across backward calls, retainGraph/createGraph/inputs,
// autograd.grad, hooks and their order, retainGrad, detach, the modes (sync and async), inference
// mode, in-place rules and PyTorch's errors, custom Functions, gradcheck/gradgradcheck and
// detectAnomaly. Per-op gradients against PyTorch are in autograd_parity.test.js.
'use strict';

const helpers = require('./helpers');

const { kd, assert, values, collectGarbage } = helpers;
// expectKdError with an optional pattern the message must match.
const expectKdError = (fn, codes, re) => {
  const err = helpers.expectKdError(fn, codes, re ? String(re) : '');
  if (re) assert.match(err.message, re);
  return err;
};

const f64 = (data, opts = {}) => kd.tensor(data, { dtype: 'float64', ...opts });
const leaf = (data) => f64(data, { requiresGrad: true });
const close = (a, e, tol = 1e-12) => {
  assert.equal(a.length, e.length);
  a.forEach((x, i) => assert.ok(Math.abs(x - e[i]) <= tol * (1 + Math.abs(e[i])), `[${i}] ${x} vs ${e[i]}`));
};

describe('autograd: tensor API', function () {
  it('requiresGrad, isLeaf, gradFn and its nextFunctions', function () {
    const a = leaf([1, 2]);
    const b = f64([3, 4]);
    assert.equal(a.requiresGrad, true);
    assert.equal(b.requiresGrad, false);
    assert.equal(a.isLeaf, true);
    assert.equal(a.gradFn, null);
    const c = a.mul(b);
    assert.equal(c.requiresGrad, true);
    assert.equal(c.isLeaf, false);
    assert.equal(c.gradFn.name, 'MulBackward0');
    const next = c.gradFn.nextFunctions;
    assert.equal(next.length, 2);
    assert.equal(next[0][0].name, 'AccumulateGrad');
    assert.equal(next[0][0].variable.shape[0], 2);
    assert.equal(next[1][0], null, 'b does not require grad');
    assert.equal(b.mul(2).requiresGrad, false, 'ops on tensors without grad are not recorded');
  });

  it('factories and kd.tensor take requiresGrad', function () {
    assert.equal(kd.zeros(2, 3, { requiresGrad: true }).requiresGrad, true);
    assert.equal(kd.randn([2], { dtype: 'float64', requiresGrad: true }).requiresGrad, true);
    assert.equal(kd.onesLike(kd.ones(2), { requiresGrad: true }).requiresGrad, true);
    assert.equal(kd.tensor([1.5], { requiresGrad: true }).requiresGrad, true);
    assert.equal(kd.zeros(2, { requiresGrad: false }).requiresGrad, false);
  });

  it('requiresGrad only for floating dtypes; not on non-leaves', function () {
    expectKdError(() => kd.tensor([1, 2]).requiresGrad_(), 'KD_DTYPE_MISMATCH');
    const c = leaf([1]).mul(2);
    expectKdError(() => { c.requiresGrad = false; }, 'KD_INVALID_ARGUMENT');
    assert.throws(() => { leaf([1]).requiresGrad = 1; }, /boolean/);
  });

  it('grad can be set, read and cleared', function () {
    const a = leaf([1, 2]);
    a.grad = f64([5, 6]);
    assert.deepEqual(values(a.grad), [5, 6]);
    a.grad = null;
    assert.equal(a.grad, null);
    expectKdError(() => { a.grad = f64([1, 2, 3]); }, 'KD_SHAPE_MISMATCH');
  });

  it('detach shares data and cuts the graph; detach_ in place', function () {
    const a = leaf([1, 2]);
    const b = a.mul(2);
    const d = b.detach();
    assert.equal(d.requiresGrad, false);
    assert.equal(d.gradFn, null);
    d.add_(1); // shares storage with b
    assert.deepEqual(values(b), [3, 5]);
    const e = a.mul(3);
    e.detach_();
    assert.equal(e.requiresGrad, false);
    assert.equal(e.isLeaf, true);
  });
});

describe('autograd: engine', function () {
  it('scalar backward accumulates into leaves', function () {
    const x = leaf([1, 2, 3]);
    const y = leaf([4, 5, 6]);
    x.mul(y).add(x.exp()).sum().backward();
    close(values(x.grad), [1, 2, 3].map((v, i) => [4, 5, 6][i] + Math.exp(v)));
    close(values(y.grad), [1, 2, 3]);
  });

  it('diamond: one tensor feeding two paths sums both', function () {
    const x = leaf([2]);
    const a = x.mul(3);
    const b = x.mul(x);
    a.add(b).backward(f64([1]));
    close(values(x.grad), [3 + 4]);
  });

  it('shared subgraph used twice, and a deep diamond ladder', function () {
    const x = leaf([1.5]);
    const s = x.exp(); // shared
    s.mul(s).add(s).sum().backward();
    const e = Math.exp(1.5);
    close(values(x.grad), [2 * e * e + e]);
    const y = leaf([1.01]);
    let t = y;
    for (let i = 0; i < 50; i++) t = t.add(t.mul(0)); // each step: t + 0*t, two paths per level
    t.sum().backward();
    close(values(y.grad), [1]);
  });

  it('multiple outputs: gradients of both outputs of max(dim)', function () {
    const x = leaf([[1, 5, 3], [7, 2, 4]]);
    const [v] = x.max(1);
    v.sum().backward();
    assert.deepEqual(values(x.grad), [0, 1, 0, 1, 0, 0]);
    const y = leaf([[1, 2], [3, 4]]);
    const parts = y.chunk(2, 0);
    parts[0].mul(2).add(parts[1].mul(3)).sum().backward();
    assert.deepEqual(values(y.grad), [2, 2, 3, 3]);
  });

  it('broadcasting: gradients are summed back to the input shape', function () {
    const a = leaf([[1, 2, 3], [4, 5, 6]]);
    const b = leaf([1, 10, 100]);
    const c = leaf(2); // 0-d
    a.mul(b).mul(c).sum().backward();
    assert.deepEqual(values(b.grad), [10, 14, 18]);
    assert.deepEqual(values(a.grad), [2, 20, 200, 2, 20, 200]);
    assert.deepEqual(c.grad.shape, []);
    assert.equal(c.grad.item(), 1 * 1 + 2 * 10 + 3 * 100 + 4 + 50 + 600);
  });

  it('mixed dtypes: gradients come back in each input dtype', function () {
    const a = kd.tensor([1, 2], { dtype: 'float32', requiresGrad: true });
    const b = leaf([3, 4]);
    const y = a.mul(b); // promoted to float64
    assert.equal(y.dtype, 'float64');
    y.sum().backward();
    assert.equal(a.grad.dtype, 'float32');
    assert.deepEqual(values(a.grad), [3, 4]);
  });

  it('a chain of 100,000 ops runs without stack overflow (and frees without recursion)', function () {
    this.timeout(60000);
    const x = leaf([1]);
    let h = x;
    for (let i = 0; i < 100000; i++) h = h.mul(1.00001);
    h.sum().backward();
    close(values(x.grad), [Math.pow(1.00001, 100000)], 1e-9);
    h.dispose();
  });

  it('gradients accumulate across backward calls until cleared', function () {
    const x = leaf([1, 2]);
    x.mul(3).sum().backward();
    x.mul(3).sum().backward();
    assert.deepEqual(values(x.grad), [6, 6]);
    x.grad = null;
    x.mul(3).sum().backward();
    assert.deepEqual(values(x.grad), [3, 3]);
  });

  it('retainGraph allows a second backward; without it PyTorch\'s error', function () {
    const x = leaf([1, 2]);
    const y = x.exp().sum();
    y.backward({ retainGraph: true });
    y.backward();
    close(values(x.grad), [2 * Math.E, 2 * Math.exp(2)]);
    expectKdError(() => y.backward(), 'KD_INVALID_ARGUMENT', /backward through the graph a second time/);
  });

  it('backward of a non-scalar needs a gradient; the gradient must match the shape', function () {
    const x = leaf([1, 2]);
    expectKdError(() => x.mul(2).backward(), 'KD_INVALID_ARGUMENT', /grad can be implicitly created only for scalar outputs/);
    expectKdError(() => x.mul(2).backward(f64([1, 2, 3])), 'KD_SHAPE_MISMATCH');
    x.mul(2).backward(f64([1, 10]));
    assert.deepEqual(values(x.grad), [2, 20]);
  });

  it('backward of a tensor that does not require grad throws', function () {
    expectKdError(() => f64([1]).sum().backward(), 'KD_INVALID_ARGUMENT', /does not require grad/);
  });

  it('backward({inputs}) accumulates only into the given tensors', function () {
    const a = leaf([1]);
    const b = leaf([2]);
    a.mul(b).sum().backward({ inputs: [a] });
    assert.deepEqual(values(a.grad), [2]);
    assert.equal(b.grad, null);
  });

  it('autograd.grad returns gradients without touching .grad; allowUnused', function () {
    const a = leaf([1, 2]);
    const b = leaf([3]);
    const c = leaf([5]);
    const [ga, gb] = kd.autograd.grad(a.mul(b).sum(), [a, b]);
    assert.deepEqual(values(ga), [3, 3]);
    assert.deepEqual(values(gb), [3]);
    assert.equal(a.grad, null);
    expectKdError(() => kd.autograd.grad(a.mul(b).sum(), [a, c]), 'KD_INVALID_ARGUMENT', /not have been used in the graph/);
    const r = kd.autograd.grad(a.mul(b).sum(), [a, c], null, { allowUnused: true });
    assert.equal(r[1], null);
  });

  it('createGraph: higher-order gradients', function () {
    const x = leaf([2]);
    const y = x.pow(3);
    const [g] = kd.autograd.grad(y.sum(), [x], null, { createGraph: true });
    assert.equal(g.item(), 12);
    assert.ok(g.requiresGrad);
    const [g2] = kd.autograd.grad(g.sum(), [x], null, { createGraph: true });
    assert.equal(g2.item(), 12); // 6x
    const [g3] = kd.autograd.grad(g2.sum(), [x]);
    assert.equal(g3.item(), 6);
  });

  it('a gradient of a gradient through backward(createGraph)', function () {
    const x = leaf([1, 2]);
    x.mul(x).mul(x).sum().backward({ createGraph: true });
    const gx = x.grad; // 3x^2
    x.grad = null;
    gx.sum().backward();
    assert.deepEqual(values(x.grad), [6, 12]);
  });
});

describe('autograd: hooks and retainGrad', function () {
  it('hooks run in registration order and may replace the gradient; remove() works', function () {
    const x = leaf([1, 2]);
    const order = [];
    const h1 = x.registerHook((g) => { order.push('a'); return g.mul(2); });
    x.registerHook((g) => { order.push(['b', values(g)]); });
    x.mul(3).sum().backward();
    assert.deepEqual(order, ['a', ['b', [6, 6]]]);
    assert.deepEqual(values(x.grad), [6, 6]);
    h1.remove();
    x.grad = null;
    order.length = 0;
    x.mul(3).sum().backward();
    assert.deepEqual(values(x.grad), [3, 3]);
    assert.equal(order.length, 1);
  });

  it('hooks on non-leaves see the gradient flowing through them', function () {
    const x = leaf([1, 2]);
    const y = x.mul(2);
    let seen = null;
    y.registerHook((g) => { seen = values(g); return g.mul(10); });
    y.mul(3).sum().backward();
    assert.deepEqual(seen, [3, 3]);
    assert.deepEqual(values(x.grad), [60, 60]);
  });

  it('a throwing hook becomes the error of backward', function () {
    const x = leaf([1]);
    x.registerHook(() => { throw new Error('boom'); });
    assert.throws(() => x.mul(2).sum().backward(), /boom/);
  });

  // PyTorch's check of a hook's result: a replacement keeps the gradient's shape, dtype, device
  describe('a hook may not change the shape, dtype or device of the gradient', function () {
    const kinds = {
      leaf: () => { const x = leaf([1, 2, 3]); return { watched: x, root: () => x.mul(2).sum(), x }; },
      'non-leaf': () => { const x = leaf([1, 2, 3]); const y = x.mul(2); return { watched: y, root: () => y.mul(3).sum(), x }; },
      'leaf through autograd.grad': () => { const x = leaf([1, 2, 3]); return { watched: x, root: () => x.mul(2).sum(), x, grad: true }; },
    };
    const bad = [
      ['the size', function resize() { return kd.ones([7], { dtype: 'float64' }); }, 'KD_SHAPE_MISMATCH', "hook 'resize' has changed the size of value"],
      ['the size (a broadcastable one)', function toRow(g) { return g.unsqueeze(0); }, 'KD_SHAPE_MISMATCH', "hook 'toRow' has changed the size of value"],
      ['the dtype', function toF32(g) { return g.to('float32'); }, 'KD_DTYPE_MISMATCH', "hook 'toF32' has changed the type of value (was float64 got float32)"],
      ['the size, anonymously', () => kd.ones([2], { dtype: 'float64' }), 'KD_SHAPE_MISMATCH', "hook '<anonymous>' has changed the size of value"],
    ];
    for (const [kind, make] of Object.entries(kinds)) {
      for (const [what, hook, code, msg] of bad) {
        it(`${kind}: ${what}`, function () {
          const { watched, root, x, grad } = make();
          watched.registerHook(hook);
          const err = expectKdError(() => (grad ? kd.autograd.grad(root(), x) : root().backward()), code);
          assert.equal(err.message, msg);
          assert.equal(x.grad, null, 'nothing accumulated');
        });
      }
    }
    it('the device (on a machine with a GPU, or the emulated one)', function () {
      if (!kd.cuda.isAvailable()) this.skip();
      for (const make of Object.values(kinds)) {
        const { watched, root, x, grad } = make();
        watched.registerHook(function toCuda(g) { return g.to('cuda'); });
        const err = expectKdError(() => (grad ? kd.autograd.grad(root(), x) : root().backward()), 'KD_DEVICE_MISMATCH');
        assert.equal(err.message, "hook 'toCuda' has changed the type of value (was a cpu tensor got a cuda:0 tensor)");
      }
    });
    it('a replacement of the same shape, dtype and device is fine', function () {
      const x = leaf([1, 2, 3]);
      x.registerHook((g) => kd.full([3], 5, { dtype: 'float64' }));
      x.mul(2).sum().backward();
      assert.deepEqual(values(x.grad), [5, 5, 5]);
    });
  });

  it('retainGrad keeps the gradient of a non-leaf; leaves need no retainGrad', function () {
    const x = leaf([1, 2]);
    const y = x.mul(2);
    y.retainGrad();
    assert.ok(y.retainsGrad);
    y.mul(y).sum().backward();
    assert.deepEqual(values(y.grad), [4, 8]);
    const z = x.mul(2);
    z.sum().backward();
    assert.equal(z.grad, null, 'no .grad on non-leaves without retainGrad');
  });
});

describe('autograd: modes', function () {
  it('noGrad / enableGrad / setGradEnabled / isGradEnabled', function () {
    const x = leaf([1]);
    assert.equal(kd.isGradEnabled(), true);
    const y = kd.noGrad(() => {
      assert.equal(kd.isGradEnabled(), false);
      const inner = kd.enableGrad(() => x.mul(2));
      assert.equal(inner.requiresGrad, true);
      return x.mul(2);
    });
    assert.equal(y.requiresGrad, false);
    assert.equal(kd.isGradEnabled(), true);
    kd.setGradEnabled(false);
    try {
      assert.equal(x.mul(2).requiresGrad, false);
    } finally {
      kd.setGradEnabled(true);
    }
    assert.equal(x.mul(2).requiresGrad, true);
  });

  it('noGrad restores the mode when fn throws', function () {
    assert.throws(() => kd.noGrad(() => { throw new Error('x'); }), /x/);
    assert.equal(kd.isGradEnabled(), true);
  });

  it('async noGrad keeps its mode across awaits, and interleaved code keeps its own', async function () {
    const x = leaf([1]);
    const tick = () => new Promise((r) => setTimeout(r, 5));
    const results = {};
    const a = kd.noGrad(async () => {
      await tick();
      results.inside1 = x.mul(2).requiresGrad;
      await tick();
      results.inside2 = x.mul(2).requiresGrad;
    });
    const b = (async () => {
      await tick();
      results.outside = x.mul(2).requiresGrad;
    })();
    await Promise.all([a, b]);
    assert.deepEqual(results, { inside1: false, inside2: false, outside: true });
    assert.equal(x.mul(2).requiresGrad, true);
  });

  it('inferenceMode: nothing recorded; inference tensors cannot be saved for backward', function () {
    const x = leaf([1, 2]);
    const t = kd.inferenceMode(() => {
      assert.equal(kd.isInferenceModeEnabled(), true);
      assert.equal(x.mul(2).requiresGrad, false);
      return kd.ones([2], { dtype: 'float64' });
    });
    assert.equal(t.isInference(), true);
    assert.equal(x.isInference(), false);
    expectKdError(() => x.mul(t), 'KD_INVALID_ARGUMENT', /Inference tensors cannot be saved for backward/);
    x.add(t).sum().backward(); // add does not save t
    assert.deepEqual(values(x.grad), [1, 1]);
    assert.equal(t.clone().isInference(), false, 'a clone outside inference mode is a normal tensor');
  });

  it('async inferenceMode', async function () {
    const t = await kd.inferenceMode(async () => {
      await new Promise((r) => setTimeout(r, 1));
      return kd.ones([1]);
    });
    assert.equal(t.isInference(), true);
    assert.equal(kd.isInferenceModeEnabled(), false);
  });
});

describe('autograd: in-place rules', function () {
  it('modifying a saved tensor gives PyTorch\'s error at backward', function () {
    const x = leaf([1, 2]);
    const y = x.exp();
    const s = y.sum(); // SumBackward saves nothing, ExpBackward saves its result
    y.mul_(2);
    expectKdError(() => s.backward(), 'KD_INVALID_ARGUMENT',
      /one of the variables needed for gradient computation has been modified by an inplace operation/);
  });

  it('in-place on a leaf that requires grad is refused; allowed under noGrad', function () {
    const x = leaf([1, 2]);
    expectKdError(() => x.add_(1), 'KD_INVALID_ARGUMENT', /a leaf Variable that requires grad is being used in an in-place operation/);
    kd.noGrad(() => x.add_(1));
    assert.deepEqual(values(x), [2, 3]);
  });

  it('in-place on a non-leaf rebases its history (correct gradients)', function () {
    const x = leaf([1, 2]);
    const y = x.mul(2);
    y.mul_(x); // y = 2x * x
    assert.equal(y.gradFn.name, 'MulBackward0');
    y.sum().backward();
    assert.deepEqual(values(x.grad), [4, 8]);
  });

  it('copy_ into a fresh tensor carries the gradient of the source', function () {
    const x = leaf([1, 2]);
    const z = kd.zeros([2], { dtype: 'float64' });
    z.copy_(x.mul(3));
    z.sum().backward();
    assert.deepEqual(values(x.grad), [3, 3]);
  });

  it('in-place on a view of a tensor that requires grad rewrites the base history (CopySlices)', function () {
    const x = leaf([1, 2, 3, 4]);
    const b = x.mul(1);
    const v = b.view(2, 2);
    v.mul_(2);
    assert.equal(b.gradFn.name, 'CopySlices');
    assert.equal(v.gradFn.name, 'AsStridedBackward0');
    b.sum().backward();
    assert.deepEqual(values(x.grad), [2, 2, 2, 2]);
    expectKdError(() => leaf([1, 2]).view(2).add_(1), 'KD_INVALID_ARGUMENT', /a view of a leaf Variable/);
  });
});

describe('autograd: hostile lists', function () {
  it('a list whose length does not fit is an error before anything is allocated or read', function () {
    const x = leaf([1, 2]);
    const y = x.mul(2).sum();
    const huge = (first) => { const h = [first]; h.length = 2 ** 32 - 1; return h; };
    const inputs = [x];
    inputs.map = () => huge(x._h);
    expectKdError(() => kd.autograd.grad(y, inputs, null, { retainGraph: true }), 'KD_INVALID_ARGUMENT', /too many inputs/);
    const grads = [null];
    grads.map = () => huge(null);
    expectKdError(() => kd.autograd.grad([y], [x], grads), 'KD_INVALID_ARGUMENT', /too many grad_tensors/);
  });
});

describe('autograd: custom Functions', function () {
  class Cube extends kd.autograd.Function {
    static forward(ctx, x) {
      ctx.saveForBackward(x);
      return x.mul(x).mul(x);
    }
    static backward(ctx, g) {
      const [x] = ctx.savedTensors;
      return g.mul(x.mul(x).mul(3));
    }
  }

  it('forward/backward, saved tensors, gradFn name, needsInputGrad', function () {
    const x = leaf([1, 2]);
    const y = Cube.apply(x);
    assert.equal(y.gradFn.name, 'CubeBackward');
    y.sum().backward();
    assert.deepEqual(values(x.grad), [3, 12]);
    let needs = null;
    class Probe extends kd.autograd.Function {
      static forward(ctx, a, b) { needs = ctx.needsInputGrad; return a.add(b); }
      static backward(ctx, g) { return [g, g]; }
    }
    Probe.apply(x, f64([1, 1]));
    assert.deepEqual(needs, [true, false]);
  });

  it('gradcheck passes on a custom Function; double backward through it', function () {
    const x = kd.randn([4], { dtype: 'float64' }).requiresGrad_();
    assert.ok(kd.autograd.gradcheck((t) => Cube.apply(t), [x]));
    const [g] = kd.autograd.grad(Cube.apply(x).sum(), [x], null, { createGraph: true });
    const [g2] = kd.autograd.grad(g.sum(), [x]);
    close(values(g2), values(x).map((v) => 6 * v), 1e-9);
  });

  it('markNonDifferentiable and several outputs', function () {
    class SortLike extends kd.autograd.Function {
      static forward(ctx, x) {
        const [v, i] = x.sort();
        ctx.markNonDifferentiable(i);
        ctx.saveForBackward(i);
        return [v, i];
      }
      static backward(ctx, gv) {
        const [i] = ctx.savedTensors;
        return kd.zerosLike(gv).scatter(0, i, gv);
      }
    }
    const x = leaf([3, 1, 2]);
    const [v, i] = SortLike.apply(x);
    assert.equal(i.requiresGrad, false);
    v.mul(f64([1, 10, 100])).sum().backward();
    assert.deepEqual(values(x.grad), [100, 1, 10]);
  });

  it('what ctx saves goes with the graph (no GC needed); read back after a release is an error', function () {
    class ExpTwice extends kd.autograd.Function {
      static forward(ctx, x) {
        const e = x.exp();
        ctx.saveForBackward(e);
        ctx.scale = kd.tensor(2, { dtype: x.dtype });
        return e.mul(2);
      }
      static backward(ctx, g) { return g.mul(ctx.savedTensors[0]).mul(ctx.scale); }
    }
    const once = () => {
      const x = kd.randn([50], { dtype: 'float64' }).requiresGrad_();
      kd.tidy(() => ExpTwice.apply(x).sum().backward());
      close(values(x.grad), values(x).map((v) => 2 * Math.exp(v)), 1e-12);
      x.dispose();
      kd.tidy(() => { ExpTwice.apply(kd.randn([50]).requiresGrad_()); });
    };
    once();
    collectGarbage();
    const before = collectGarbage().liveTensors;
    for (let i = 0; i < 20; i++) once();
    assert.equal(collectGarbage().liveTensors, before); // without a turn of the event loop
    const x = leaf([0, 1]);
    const y = ExpTwice.apply(x);
    y.sum().backward();
    assert.throws(() => y.sum().backward(), /backward through the graph a second time/);
  });

  it('a backward must return gradients (Tensors or null): anything else is an error', function () {
    for (const bad of [5, 'g', {}, [5]]) {
      class Odd extends kd.autograd.Function {
        static forward(ctx, x) { return x.mul(2); }
        static backward() { return bad; }
      }
      expectKdError(() => Odd.apply(leaf([1, 2])).sum().backward(), 'KD_INVALID_ARGUMENT', /returned (a number|a string|an object|an invalid gradient)/);
    }
  });

  it('a backward returning the wrong gradient shape is an error, not a crash', function () {
    class Bad extends kd.autograd.Function {
      static forward(ctx, x) { return x.mul(2); }
      static backward() { return f64([1, 2, 3]); }
    }
    expectKdError(() => Bad.apply(leaf([1, 2])).sum().backward(), 'KD_SHAPE_MISMATCH');
  });
});

describe('autograd: gradcheck and anomaly detection', function () {
  it('gradcheck catches a wrong derivative', function () {
    class Wrong extends kd.autograd.Function {
      static forward(ctx, x) { return x.mul(x); }
      static backward(ctx, g) { return g; }
    }
    const x = kd.randn([3], { dtype: 'float64' }).requiresGrad_();
    assert.equal(kd.autograd.gradcheck((t) => Wrong.apply(t), [x], { raiseException: false }), false);
    assert.throws(() => kd.autograd.gradcheck((t) => Wrong.apply(t), [x]), /Jacobian mismatch/);
  });

  it('gradgradcheck on a composition', function () {
    const a = kd.randn([2, 3], { dtype: 'float64' }).requiresGrad_();
    const b = kd.randn([3], { dtype: 'float64' }).requiresGrad_();
    assert.ok(kd.autograd.gradgradcheck((p, q) => p.mul(q).tanh().sum(1), [a, b]));
  });

  it('detectAnomaly names the node that made a NaN and the forward call site', function () {
    const x = leaf([0, 1]);
    let err = null;
    try {
      kd.autograd.detectAnomaly(() => x.sqrt().mul(0).sum().backward());
    } catch (e) {
      err = e;
    }
    assert.ok(err, 'anomaly mode throws');
    assert.match(err.message, /SqrtBackward0/);
    assert.match(err.message, /autograd\.test\.js/);
    const y = leaf([0, 1]);
    y.sqrt().mul(0).sum().backward(); // without anomaly mode: NaN, no error
    assert.ok(Number.isNaN(values(y.grad)[0]));
  });
});

describe('autograd: ops without a derivative', function () {
  it('asStrided, the last op without one, now has a derivative (AsStridedBackward0)', function () {
    const x = leaf([1, 2]);
    const y = x.asStrided([2], [1]);
    assert.equal(y.gradFn.name, 'AsStridedBackward0');
    y.sum().backward();
    assert.deepEqual(values(x.grad), [1, 1]);
  });
  it('nondiff ops give outputs that do not require grad', function () {
    const x = leaf([1, 2]);
    assert.equal(x.gt(1).requiresGrad, false);
    assert.equal(x.argmax().requiresGrad, false);
  });
});

// Note [Hooks may do anything] (src/autograd/engine.c): hooks are user code run in the middle of
// backward. Each scenario runs in a child process, so a use-after-free shows as a failed test
// rather than a crashed test run.
describe('hooks that change the graph under the engine', function () {
  const { spawnSync } = require('node:child_process');
  const path = require('node:path');
  const run = (body) => {
    const src = `const kd = require(${JSON.stringify(path.join(__dirname, '..'))});\n${body}`;
    const r = spawnSync(process.execPath, ['-e', src], { encoding: 'utf8' });
    assert.equal(r.status, 0, `child exited with ${r.status} (signal ${r.signal}): ${r.stderr}`);
    return JSON.parse(r.stdout);
  };

  it('a leaf hook may dispose its leaf', function () {
    const out = run(`
      const x = kd.ones([3], { requiresGrad: true });
      const w = kd.ones([3], { requiresGrad: true });
      const keep = [];
      x.registerHook(() => {
        x.dispose();
        for (let i = 0; i < 64; i++) keep.push(kd.ones([3], { requiresGrad: true }).mul(1)); // reuse freed memory
      });
      x.mul(2).add(w).sum().backward();
      console.log(JSON.stringify({ w: Array.from(w.grad.dataSync()), disposed: x.isDisposed }));`);
    assert.deepEqual(out, { w: [1, 1, 1], disposed: true });
  });

  it('a hook may remove itself and later hooks; removed hooks do not run', function () {
    const out = run(`
      const z = kd.ones([2], { requiresGrad: true });
      const order = [];
      const h1 = z.registerHook(() => { order.push(1); h1.remove(); h2.remove(); });
      const h2 = z.registerHook(() => { order.push(2); });
      z.registerHook((g) => { order.push(3); return g.mul(10); });
      z.mul(3).sum().backward();
      z.mul(3).sum().backward();
      console.log(JSON.stringify({ order, grad: Array.from(z.grad.dataSync()) }));`);
    assert.deepEqual(out, { order: [1, 3, 3], grad: [60, 60] });
  });

  it('a non-leaf hook may dispose the tensor it watches (retainGrad on)', function () {
    const out = run(`
      const x = kd.ones([2], { requiresGrad: true });
      const y = x.mul(2);
      y.retainGrad();
      const keep = [];
      y.registerHook((g) => { y.dispose(); for (let i = 0; i < 64; i++) keep.push(kd.ones([2]).mul(1)); return g.mul(3); });
      y.sum().backward();
      console.log(JSON.stringify({ x: Array.from(x.grad.dataSync()) }));`);
    assert.deepEqual(out, { x: [6, 6] });
  });
});
