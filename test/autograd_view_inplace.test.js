// autograd_view_inplace.test.js - in-place ops on views under autograd (CopySlices; views whose
// base changed in place get AsStridedBackward0) and the gradient of asStrided, against PyTorch
// (test/fixtures/autograd_views.json from tools/fixtures/autograd_views.py; its asStrided op cases
// are also checked, with gradcheck, by autograd_parity.test.js), plus PyTorch's errors.
'use strict';

const { kd, assert, fixture, buildArg, values, decode, collectGarbage } = require('./helpers');

// The scenarios of tools/fixtures/autograd_views.py, same names: (leaves) => [outputs, gradFns].
const SCENARIOS = {
  'narrow mul_': ({ x, y }) => {
    const b = x.mul(1.5);
    const v = b.narrow(0, 1, 2);
    v.mul_(y);
    return [[b.mul(b)], { base: b.gradFn, view: v.gradFn }];
  },
  'select copy_ into a buffer': ({ x }) => {
    const buf = kd.zeros([3, 4], { dtype: x.dtype });
    const v = buf.select(0, 1);
    v.copy_(x);
    return [[buf.exp()], { base: buf.gradFn, view: v.gradFn }];
  },
  'slice add_ where only the other arg requires grad': ({ x, w }) => {
    const b = x.detach().clone();
    const v = b.slice(1, 0, 4, 2);
    v.add_(w);
    return [[b.mul(x.detach())], { base: b.gradFn, view: v.gradFn }];
  },
  'transpose mul_ (non-contiguous view)': ({ x, y }) => {
    const b = x.mul(2);
    const v = b.t();
    v.mul_(y);
    return [[b.sin()], { base: b.gradFn, view: v.gradFn }];
  },
  'view of a view of a view': ({ x }) => {
    const b = x.sin();
    const v = b.view([12]).narrow(0, 2, 5);
    const w = v.slice(0, 1, 4);
    w.mul_(3);
    return [[b.mul(b), v], { base: b.gradFn, view: v.gradFn, inner: w.gradFn }];
  },
  'diagonal mul_': ({ x, y }) => {
    const b = x.clone();
    const v = b.diagonal();
    v.mul_(y);
    return [[b.pow(2)], { base: b.gradFn, view: v.gradFn }];
  },
  'indexPut_ on a view': ({ x, vals }) => {
    const b = x.clone();
    const v = b.select(0, 1);
    v.indexPut_([kd.tensor([0, 2], { dtype: 'int64' })], vals);
    return [[b.mul(b)], { base: b.gradFn, view: v.gradFn }];
  },
  'in-place on the base after taking a view': ({ x, y }) => {
    const b = x.clone();
    const v = b.select(0, 1);
    b.mul_(y);
    return [[v.mul(v)], { base: b.gradFn, view: v.gradFn }];
  },
  'copy_ from a tensor that requires grad': ({ x, y }) => {
    const b = x.clone();
    b.narrow(1, 1, 2).copy_(y);
    return [[b.exp()], { base: b.gradFn }];
  },
  'loop writing rows of a buffer': ({ x }) => {
    const buf = kd.zeros([3, 2], { dtype: x.dtype });
    for (let i = 0; i < 3; i++) buf.select(0, i).copy_(x.select(0, i).sin().mul(i + 1));
    return [[buf.mul(buf)], { base: buf.gradFn, row: buf.select(0, 1).gradFn }];
  },
  'exp_ on a view (saved result)': ({ x }) => {
    const b = x.mul(1);
    b.narrow(0, 0, 2).exp_();
    return [[b.mul(2)], { base: b.gradFn }];
  },
  'relu inplace on a strided slice': ({ x }) => {
    const b = x.add(0);
    new kd.nn.ReLU(true).forward(b.slice(0, 1).slice(1, null, null, 2)); // relu_ on the view
    return [[b.mul(b)], { base: b.gradFn }];
  },
  'two views of one base modified in turn': ({ x, y }) => {
    const b = x.clone();
    const v1 = b.select(0, 0);
    const v2 = b.select(0, 2);
    v1.mul_(y);
    v2.add_(v1);
    return [[b.mul(b), v1, v2], { base: b.gradFn, v1: v1.gradFn, v2: v2.gradFn }];
  },
  'asStrided of a non-leaf': ({ x }) => {
    const v = x.mul(2).asStrided([3, 3], [1, 1], 1);
    return [[v.mul(v)], { view: v.gradFn }];
  },
  'saved tensor modified through a view (error)': ({ x }) => {
    const y = x.exp();
    y.select(0, 0).mul_(2);
    return [[y], {}];
  },
};

const scenarios = fixture('autograd_views').filter((c) => c.scenario);
const lossOf = (outs) => outs.map((o) => o.sum()).reduce((a, b) => a.add(b));

describe('autograd: in-place ops on views (PyTorch scenarios)', function () {
  it('every scenario of the fixture has a JS twin', function () {
    for (const c of scenarios) assert.ok(SCENARIOS[c.scenario], `no JS scenario '${c.scenario}'`);
    assert.ok(scenarios.length >= 12);
  });
  for (const c of scenarios) {
    it(c.scenario, function () {
      const leaves = {};
      for (const [k, s] of Object.entries(c.inputs)) leaves[k] = buildArg(s).requiresGrad_();
      const [outs, fns] = SCENARIOS[c.scenario](leaves);
      if (c.names) {
        for (const [k, name] of Object.entries(c.names)) {
          assert.equal(fns[k] ? fns[k].name : null, name, `gradFn of ${k}`);
        }
      }
      if (c.error) {
        assert.throws(() => lossOf(outs).backward(), (e) => e.message.startsWith(c.error.message.split(':')[0]));
        return;
      }
      lossOf(outs).backward();
      for (const [k, g] of Object.entries(c.grads)) {
        const got = leaves[k].grad;
        if (g === null) {
          assert.ok(got === null || values(got).every((v) => v === 0), `${k} has a gradient, PyTorch none`);
          continue;
        }
        assert.deepEqual(got.shape, g.shape, `shape of ${k}.grad`);
        const e = g.data.map(decode);
        values(got).forEach((v, i) => assert.ok(Math.abs(v - e[i]) <= 1e-10 + 1e-7 * Math.abs(e[i]), `${k}.grad[${i}]: ${v} vs ${e[i]}`));
      }
    });
  }
});

describe('autograd: gradcheck through in-place ops on views', function () {
  const gc = ['narrow mul_', 'select copy_ into a buffer', 'transpose mul_ (non-contiguous view)', 'diagonal mul_',
    'in-place on the base after taking a view', 'loop writing rows of a buffer', 'exp_ on a view (saved result)',
    'two views of one base modified in turn', 'asStrided of a non-leaf', 'indexPut_ on a view'];
  for (const name of gc) {
    it(name, function () {
      const c = scenarios.find((s) => s.scenario === name);
      const keys = Object.keys(c.inputs);
      const inputs = keys.map((k) => buildArg(c.inputs[k]).requiresGrad_());
      const fn = (...xs) => {
        const leaves = {};
        keys.forEach((k, i) => { leaves[k] = xs[i]; });
        return lossOf(SCENARIOS[name](leaves)[0]);
      };
      assert.ok(kd.autograd.gradcheck(fn, inputs, { atol: 1e-5, rtol: 1e-3 }));
    });
  }
  it('gradgradcheck: CopySlices and AsStridedBackward0 are differentiable', function () {
    for (const name of ['narrow mul_', 'exp_ on a view (saved result)', 'in-place on the base after taking a view',
      'loop writing rows of a buffer', 'two views of one base modified in turn', 'diagonal mul_', 'asStrided of a non-leaf',
      'transpose mul_ (non-contiguous view)']) {
      const c = scenarios.find((s) => s.scenario === name);
      const keys = Object.keys(c.inputs);
      const inputs = keys.map((k) => buildArg(c.inputs[k]).requiresGrad_());
      const fn = (...xs) => {
        const leaves = {};
        keys.forEach((k, i) => { leaves[k] = xs[i]; });
        return lossOf(SCENARIOS[name](leaves)[0]);
      };
      assert.ok(kd.autograd.gradgradcheck(fn, inputs), name);
    }
  });
  it('gradcheck and gradgradcheck of asStrided (overlapping output and input)', function () {
    const x = kd.tensor([0.5, -1.25, 2, 0.75, 1.5, -0.25], { dtype: 'float64' }).requiresGrad_();
    assert.ok(kd.autograd.gradcheck((t) => t.asStrided([3, 3], [1, 1], 0).mul(2), [x]));
    assert.ok(kd.autograd.gradgradcheck((t) => t.asStrided([3, 3], [1, 1], 0).pow(2), [x]));
    assert.ok(kd.autograd.gradcheck((t) => t.asStrided([2, 2], [1, 2], 1), [x]));
    const e = kd.tensor([0.5, -1.25, 2], { dtype: 'float64' }).requiresGrad_();
    assert.ok(kd.autograd.gradcheck((t) => t.expand([2, 3]).asStrided([2, 2], [1, 1], 0).mul(3), [e]));
  });
});

describe('autograd: views and in-place ops, semantics', function () {
  const ones = () => kd.ones([3, 4], { requiresGrad: true });

  it('the base gets CopySlices, the view AsStridedBackward0, both require grad', function () {
    const a = ones();
    const b = a.clone();
    const v = b.select(0, 0);
    assert.equal(v.gradFn.name, 'SelectBackward0');
    v.mul_(2);
    assert.equal(b.gradFn.name, 'CopySlices');
    assert.equal(v.gradFn.name, 'AsStridedBackward0');
    assert.ok(v.requiresGrad && !v.isLeaf && b.requiresGrad);
    assert.equal(b.gradFn.nextFunctions.length, 1); // the base's history before the in-place op
    b.sum().backward();
    assert.deepEqual(values(a.grad), [2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1]);
  });

  it('a buffer that did not require grad starts requiring it; its views follow', function () {
    const buf = kd.zeros([2, 3]);
    const row0 = buf.select(0, 0);
    assert.ok(!row0.requiresGrad && row0.gradFn === null);
    const x = kd.ones([3], { requiresGrad: true });
    buf.select(0, 1).copy_(x.mul(3));
    assert.ok(buf.requiresGrad);
    assert.equal(buf.gradFn.name, 'CopySlices');
    assert.ok(row0.requiresGrad);
    assert.equal(row0.gradFn.name, 'AsStridedBackward0');
    row0.sum().add(buf.sum()).backward();
    assert.deepEqual(values(x.grad), [3, 3, 3]);
  });

  it('version counter: a saved tensor modified through a view fails at backward', function () {
    const x = kd.ones([2, 3], { requiresGrad: true });
    const y = x.exp();
    y.select(0, 0).mul_(2);
    assert.throws(() => y.sum().backward(), /modified by an inplace operation/);
  });

  it('views made under noGrad of a tensor that does not require grad can be written under noGrad', function () {
    const buf = kd.zeros([2, 2]);
    kd.noGrad(() => buf.select(0, 1).fill_(3));
    assert.deepEqual(values(buf), [0, 0, 3, 3]);
    const w = kd.ones([2, 2], { requiresGrad: true });
    kd.noGrad(() => w.select(0, 0).mul_(2)); // in-place on a leaf's view is fine without grad mode
    assert.deepEqual(values(w), [2, 2, 1, 1]);
  });

  it('detach_ of a view is refused; detach() of a view is a leaf', function () {
    const v = kd.zeros([2, 2]).select(0, 0);
    assert.throws(() => v.detach_(), /Can't detach views in-place/);
    const d = ones().clone().select(0, 0).detach();
    assert.ok(d.isLeaf && !d.requiresGrad);
  });

  it('views created in inferenceMode are not tracked (as before)', function () {
    const base = kd.zeros([3]);
    let iv;
    kd.inferenceMode(() => { iv = base.narrow(0, 0, 2); });
    kd.inferenceMode(() => iv.fill_(2));
    assert.deepEqual(values(base), [2, 2, 0]);
    assert.ok(!base.requiresGrad);
  });

  it('a chain of 20000 row writes backpropagates and frees without recursion', function () {
    const n = 20000;
    const x = kd.ones([1], { requiresGrad: true });
    const buf = kd.zeros([n]);
    for (let i = 0; i < n; i++) buf.narrow(0, i, 1).copy_(x);
    buf.sum().backward();
    assert.deepEqual(values(x.grad), [n]);
  });
});

// An in-place op whose other argument is self, or a view of self (x.mul_(x)), saves that
// argument's old value as it saves self's: the gradient is that of the old value (PyTorch saves
// the tensor itself and fails at backward, "modified by an inplace operation"), and no cycle
// self -> node -> self keeps the tensors alive after they are disposed.
describe('autograd: in-place ops that take self as another argument', function () {
  const x0 = [1.5, -2, 3];
  const cases = {
    // d/dx of the op's result at x0, by hand
    'x.mul_(x)': { run: (x) => x.mul_(x), grad: x0.map((v) => 2 * v) },
    'x.addcmul_(x, x, {value: 2})': { run: (x) => x.addcmul_(x, x, { value: 2 }), grad: x0.map((v) => 1 + 4 * v) },
    'x.mul_(view of x)': { run: (x) => x.mul_(x.view([3, 1]).view([3])), grad: x0.map((v) => 2 * v) },
    // clamp(x, 0, x) is x itself (below 0 the max, x, wins): the gradient reaches x either way
    'x.clamp_(0, x)': { run: (x) => x.clamp_(kd.zeros([], { dtype: 'float64' }), x), grad: [1, 1, 1] },
  };
  for (const [name, { run, grad }] of Object.entries(cases)) {
    it(`${name}: the old value's gradient, nothing left alive`, function () {
      const live = collectGarbage().liveTensors;
      const leaf = kd.tensor(x0, { dtype: 'float64', requiresGrad: true });
      kd.tidy(() => {
        const x = leaf.mul(1);
        run(x);
        x.sum().backward();
      });
      const g = leaf.grad;
      assert.deepEqual(values(g), grad);
      g.dispose();
      leaf.dispose();
      assert.equal(kd.memory().liveTensors, live);
    });
  }
});

// What a node saves holds no tensor with a history (Note [Saved tensors hold no tensor with a
// history] in src/autograd/autograd.h): an in-place op whose other argument was computed from a
// view of the tensor it modifies would otherwise close a cycle tensor -> grad_fn -> saved
// tensor -> ... -> view -> base (the same tensor) that no dispose or GC frees.
describe('autograd: saved tensors make no reference cycles', function () {
  const x0 = [1.5, -2, 3, 0.5, -1, 2];
  // grad: the leaf's gradient; null: the view saved by the other argument's history was
  // modified by the in-place op, and backward says so, as PyTorch's does
  const cases = {
    // MaxBackward0 saves the view, ClampBackward0 the max
    'c.clamp_(max of a view of c)': { run: (c) => c.clamp_(c.narrow(0, 0, 2).max()), grad: null },
    'c.clampMin_(max of a view of c)': { run: (c) => c.clampMin_(c.narrow(0, 0, 2).max()), grad: null },
    // PowBackward0 saves the view
    'c.sub_(sum of the square of a view of c)': { run: (c) => c.sub_(c.narrow(0, 1, 2).pow(2).sum()), grad: null },
    // CatBackward0 saves its list of inputs (only their shapes are read)
    'c.add_(sum of cat of views of c)': {
      run: (c) => c.add_(kd.cat([c.narrow(0, 0, 2), c.narrow(0, 4, 1)]).sum()),
      grad: [7, 7, 1, 1, 7, 1],
    },
    // an in-place op on a view: the base's history becomes CopySlices of a node whose other
    // argument's history saved another view of the base
    'a view of c mul_ (sum of the square of another view of c)': {
      run: (c) => c.narrow(0, 0, 2).mul_(c.narrow(0, 4, 2).pow(2).sum()),
      grad: null,
    },
  };
  for (const [name, { run, grad }] of Object.entries(cases)) {
    it(`${name}: nothing left alive after dispose`, function () {
      const live = collectGarbage().liveTensors;
      const leaf = kd.tensor(x0, { dtype: 'float64', requiresGrad: true });
      const c = leaf.clone();
      kd.tidy(() => { run(c); });
      if (grad) {
        c.sum().backward({ retainGraph: true }); // the saved values stay with the graph
        assert.deepEqual(values(leaf.grad), grad);
        leaf.grad.dispose();
      } else {
        assert.throws(() => c.sum().backward(), /modified by an inplace operation/);
      }
      kd.dispose([leaf, c]);
      assert.equal(collectGarbage().liveTensors, live);
    });
  }

  it('a leaf saved by a node, then given a history through that node, is freed', function () {
    const live = collectGarbage().liveTensors;
    const w = kd.tensor([1, 2], { dtype: 'float64', requiresGrad: true });
    const y = w.mul(w);
    w.requiresGrad_(false);
    w.add_(y); // w's history now leads to MulBackward0, which saved w
    assert.equal(w.isLeaf, false);
    kd.dispose([w, y]);
    assert.equal(collectGarbage().liveTensors, live);
  });

  it('saved views and leaves still fail at backward once modified in place', function () {
    const x = kd.tensor([1, 2, 3], { dtype: 'float64', requiresGrad: true });
    const b = x.mul(1);
    const y = b.narrow(0, 0, 2).pow(2);
    b.mul_(2);
    assert.throws(() => y.sum().backward(), (e) => {
      assert.equal(e.code, 'KD_INVALID_ARGUMENT');
      assert.match(e.message, /^one of the variables needed for gradient computation has been modified by an inplace operation: \[float64 tensor \[2\]\], which is output 0 of \w+, is at version 1; expected version 0 instead/);
      return true;
    });
    const z = x.pow(2);
    kd.noGrad(() => x.add_(1));
    assert.throws(() => z.sum().backward(), (e) => {
      // a leaf: named by no node, as PyTorch
      assert.match(e.message, /: \[float64 tensor \[3\]\] is at version 1; expected version 0 instead/);
      return true;
    });
  });

  it('double backward through saved views and leaves reaches the leaf', function () {
    const x = kd.tensor([1, 2, 3], { dtype: 'float64', requiresGrad: true });
    // d/dx sum(x^3) = 3x^2 through a view (saved by PowBackward) and the leaf (saved by MulBackward)
    const v = x.mul(1).narrow(0, 0, 3);
    const y = v.pow(2).mul(x).sum();
    const [g] = kd.autograd.grad(y, x, null, { createGraph: true });
    assert.deepEqual(values(g), [3, 12, 27]);
    g.sum().backward();
    assert.deepEqual(values(x.grad), [6, 12, 18]);
  });
});

describe('autograd: errors for in-place ops on views (PyTorch messages)', function () {
  const a = () => kd.ones([3, 4], { requiresGrad: true });
  const MULTI = ' is a view and is being modified inplace. This view is the output of a function that returns multiple '
    + 'views. Such functions do not allow the output views to be modified inplace. You should replace the inplace '
    + 'operation by an out-of-place one.';
  const NOGRAD = 'A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given that '
    + "this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view and the inplace either both inside the no_grad block (if you don't want the inplace to be tracked) or both outside (if you want the inplace to be tracked).";
  const throwsMsg = (fn, msg) => assert.throws(fn, (e) => {
    assert.equal(e.message, msg);
    return true;
  });

  it('a view of a leaf that requires grad', function () {
    throwsMsg(() => a().select(0, 0).mul_(2), 'a view of a leaf Variable that requires grad is being used in an in-place operation.');
    throwsMsg(() => a().t().copy_(kd.zeros([4, 3])), 'a view of a leaf Variable that requires grad is being used in an in-place operation.');
  });
  it('outputs of split/chunk/unbind', function () {
    throwsMsg(() => a().clone().split(2)[0].mul_(2), `Output 0 of SplitBackward0${MULTI}`);
    throwsMsg(() => a().clone().split([1, 2])[1].mul_(2), `Output 1 of SplitWithSizesBackward0${MULTI}`);
    throwsMsg(() => a().clone().chunk(2)[1].mul_(2), `Output 1 of SplitBackward0${MULTI}`);
    throwsMsg(() => a().clone().unbind(0)[2].add_(1), `Output 2 of UnbindBackward0${MULTI}`);
    throwsMsg(() => kd.zeros([3, 4]).split(2)[0].copy_(a().narrow(0, 0, 2)),
      `A view was created in no_grad mode and is being modified inplace with grad mode enabled.${MULTI.slice(' is a view and is being modified inplace.'.length)}`);
    // without grad mode they are plain writes
    const parts = kd.zeros([4]).split(2);
    kd.noGrad(() => parts[1].fill_(1));
  });
  it('a view made under noGrad of a tensor that requires grad, modified with grad mode on', function () {
    let v;
    const x = a();
    kd.noGrad(() => { v = x.select(0, 0); });
    assert.ok(v.requiresGrad);
    assert.equal(v.gradFn, null);
    throwsMsg(() => v.mul_(2), NOGRAD);
    const c = x.clone();
    let w;
    kd.noGrad(() => { w = c.select(0, 0); });
    throwsMsg(() => w.mul_(2), NOGRAD);
    c.mul_(2);
    throwsMsg(() => w.gradFn, NOGRAD.replace('is being modified', 'its base or another view of its base has been modified'));
    let nb;
    const buf = kd.zeros([3, 4]);
    kd.noGrad(() => { nb = buf.select(0, 0); });
    throwsMsg(() => nb.copy_(x.select(0, 0)), NOGRAD);
  });
});
