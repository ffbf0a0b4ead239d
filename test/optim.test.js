// optim.test.js - kd.optim against PyTorch 1.13 (test/fixtures/optim.json, written by
// tools/fixtures/optim.py): every optimizer and option combination from the same initial
// parameters and the same explicit gradients, parameters after 1, 3 and 5 steps; parameter
// groups; parameters without gradients on some steps; float64/float16/bfloat16; the lr
// schedulers' lr sequences over 30 steps; constructor errors. Plus what fixtures cannot say:
// stateDict round trips, zeroGrad, step(closure), mutable group lr, non-contiguous parameters,
// the fused internal ops (single and foreach forms, errors, version bumps), large parameters
// across the parallel grain against a float64 reference.
'use strict';

const { kd, assert, fixture, values, expectKdError, collectGarbage } = require('./helpers');

const FIX = fixture('optim');
const I = kd._internal;
const F = (v) => kd.tensor(v, { dtype: 'float32' });
const TOL = { float32: [1e-5, 1e-6], float64: [1e-7, 1e-9], float16: [4e-3, 2e-3], bfloat16: [3e-2, 1.6e-2] };

function closeList(got, exp, [rtol, atol], what) {
  assert.equal(got.length, exp.length, `${what}: length`);
  for (let i = 0; i < exp.length; i++) {
    const ok = Math.abs(got[i] - exp[i]) <= atol + rtol * Math.abs(exp[i]);
    if (!ok) assert.fail(`${what}: [${i}] got ${got[i]} expected ${exp[i]}`);
  }
}

/** The params of fixture case c (leaves requiring grad), optionally made non-contiguous. */
function makeParams(c, { noncontig = false } = {}) {
  return c.params.map((vals, i) => {
    const shape = c.shapes[i];
    let t = kd.tensor(vals, { dtype: c.dtype }).reshape(shape);
    if (noncontig && shape.length === 2) {
      // same values, transposed storage: contiguous().t() of the transpose
      t = t.t().contiguous().t();
    }
    return t.requiresGrad_();
  });
}

function makeOptimizer(c, params) {
  const Cls = kd.optim[c.optim];
  if (!c.groups) return new Cls(params, c.options);
  return new Cls(c.groups.map((g) => ({ params: g.params.map((i) => params[i]), ...(g.options || {}) })), c.options);
}

function setGrads(c, params, step) {
  params.forEach((p, i) => {
    const g = c.grads[step][i];
    p.grad = g === null ? null : kd.tensor(g, { dtype: c.dtype }).reshape(c.shapes[i]);
  });
}

function checkParams(c, params, exp, what) {
  params.forEach((p, i) => closeList(values(p), exp[i], TOL[c.dtype], `${what} param ${i}`));
}

describe('kd.optim optimizers (PyTorch fixtures)', function () {
  for (const c of FIX.optimizers) {
    it(c.name, function () {
      const params = makeParams(c);
      const opt = makeOptimizer(c, params);
      for (let s = 0; s < 5; s++) {
        setGrads(c, params, s);
        opt.step();
        if (s === 0) checkParams(c, params, c.after1, 'after 1 step');
        if (s === 2) checkParams(c, params, c.after3, 'after 3 steps');
      }
      checkParams(c, params, c.after5, 'after 5 steps');
    });
  }

  for (const c of FIX.optimizers.filter((k) => /^Adam/.test(k.optim) && /^float(32|64)$/.test(k.dtype))) {
    it(`${c.name}, capturable (the step on the parameters' device)`, function () {
      const params = makeParams(c);
      const opt = makeOptimizer({ ...c, options: { ...c.options, capturable: true } }, params);
      for (let s = 0; s < 5; s++) {
        setGrads(c, params, s);
        opt.step();
        if (s === 2) checkParams(c, params, c.after3, 'after 3 steps');
      }
      checkParams(c, params, c.after5, 'after 5 steps');
      for (const st of opt.state.values()) assert.ok(st.step instanceof kd.Tensor && st.step.item() >= 1, 'the step is a tensor');
    });
  }

  it('non-contiguous parameters give the same trajectories', function () {
    for (const c of FIX.optimizers.filter((x) => x.dtype === 'float32' && !x.groups)) {
      const params = makeParams(c, { noncontig: true });
      assert.ok(!params[0].isContiguous());
      const opt = makeOptimizer(c, params);
      for (let s = 0; s < 5; s++) {
        setGrads(c, params, s);
        opt.step();
      }
      checkParams(c, params, c.after5, `${c.name} non-contiguous`);
    }
  });

  it('stateDict round trip: save after 3 steps, load into a new optimizer, continue', function () {
    for (const c of FIX.optimizers.filter((x) => x.dtype === 'float32')) {
      const params = makeParams(c);
      const opt = makeOptimizer(c, params);
      for (let s = 0; s < 3; s++) { setGrads(c, params, s); opt.step(); }
      const sd = opt.stateDict();
      assert.equal(sd.paramGroups.length, (c.groups || [0]).length);
      assert.deepEqual(sd.paramGroups.flatMap((g) => g.params).sort(), params.map((_, i) => i));
      // a fresh model holding the values after 3 steps, and a fresh optimizer
      const params2 = params.map((p) => p.detach().clone().requiresGrad_());
      const opt2 = makeOptimizer(c, params2);
      opt2.loadStateDict(sd);
      // the loaded state is a copy: stepping the old optimizer does not change it
      setGrads(c, params, 3); opt.step();
      for (let s = 3; s < 5; s++) { setGrads(c, params2, s); opt2.step(); }
      checkParams(c, params2, c.after5, `${c.name} resumed`);
    }
  });
});

describe('kd.optim errors and API', function () {
  it('dispose() frees the state tensors now; a later step starts the state afresh', function () {
    const p = kd.tensor([1, 2, 3], { dtype: 'float32', requiresGrad: true });
    const opt = new kd.optim.Adam([p], { lr: 0.1 });
    const live0 = collectGarbage().liveTensors;
    p.mul(p).sum().backward();
    opt.step();
    const st = opt.state.get(p);
    const states = [st.expAvg, st.expAvgSq];
    assert.ok(kd.memory().liveTensors > live0);
    opt.dispose();
    assert.ok(states.every((t) => t.isDisposed));
    assert.equal(opt.state.size, 0);
    assert.equal(p.isDisposed, false, 'parameters belong to the model');
    // afresh: the same first step as a new optimizer from the same point
    const q = kd.tensor(Array.from(p.dataSync()), { requiresGrad: true });
    const fresh = new kd.optim.Adam([q], { lr: 0.1 });
    for (const [x, o] of [[p, opt], [q, fresh]]) { o.zeroGrad(); x.mul(x).sum().backward(); o.step(); }
    assert.deepEqual(Array.from(p.dataSync()), Array.from(q.dataSync()));
    opt[Symbol.dispose]();
    fresh.dispose();
    assert.equal(opt.state.size, 0);
    kd.dispose([p.grad, q.grad, p, q]);
  });

  for (const e of FIX.errors) {
    it(`${e.optim} ${JSON.stringify(e.options)}: ${e.message}`, function () {
      const err = expectKdError(() => new kd.optim[e.optim]([kd.zeros(2).requiresGrad_()], e.options), 'KD_INVALID_ARGUMENT');
      // Python prints floats as 1.0 where JS prints 1
      assert.equal(err.message.replace(/(\d)\.0\b/g, '$1'), e.message.replace(/(\d)\.0\b/g, '$1'));
    });
  }

  it('rejects bad params', function () {
    expectKdError(() => new kd.optim.SGD([], { lr: 0.1 }), 'KD_INVALID_ARGUMENT');
    expectKdError(() => new kd.optim.SGD(kd.zeros(2), { lr: 0.1 }), 'KD_INVALID_TYPE');
    expectKdError(() => new kd.optim.SGD([kd.zeros(2).requiresGrad_()]), 'KD_INVALID_ARGUMENT'); // lr required
    const a = kd.zeros(2).requiresGrad_();
    const nonLeaf = a.mul(2);
    expectKdError(() => new kd.optim.Adam([nonLeaf]), 'KD_INVALID_ARGUMENT');
    const opt = new kd.optim.SGD([a], { lr: 0.1 });
    expectKdError(() => opt.addParamGroup({ params: [a] }), 'KD_INVALID_ARGUMENT');
  });

  it('zeroGrad sets gradients to null, or to zeros with setToNone: false', function () {
    const p = kd.ones(3).requiresGrad_();
    const opt = new kd.optim.SGD([p], { lr: 0.1 });
    p.mul(2).sum().backward();
    assert.deepEqual(values(p.grad), [2, 2, 2]);
    opt.zeroGrad({ setToNone: false });
    assert.deepEqual(values(p.grad), [0, 0, 0]);
    p.mul(3).sum().backward();
    assert.deepEqual(values(p.grad), [3, 3, 3]);
    opt.zeroGrad();
    assert.equal(p.grad, null);
    opt.step(); // no gradient: nothing happens
    assert.deepEqual(values(p), [1, 1, 1]);
  });

  it('step(closure) evaluates the loss with grad enabled and returns it; a real training loop', function () {
    const w = kd.tensor([0.5, -0.3]).requiresGrad_();
    const x = kd.tensor([[1, 2], [3, 4], [5, 6]], { dtype: 'float32' });
    const y = kd.tensor([1, 2, 3], { dtype: 'float32' });
    const opt = new kd.optim.Adam([w], { lr: 0.05 });
    let first;
    let last;
    for (let i = 0; i < 200; i++) {
      const loss = kd.noGrad(() => opt.step(() => {
        opt.zeroGrad();
        const l = x.matmul(w).sub(y).pow(2).mean();
        l.backward();
        return l;
      }));
      if (i === 0) first = loss.item();
      last = loss.item();
      assert.ok(w.isLeaf && w.requiresGrad && w.gradFn === null);
    }
    assert.ok(last < first * 0.01, `loss ${first} -> ${last}`);
  });

  it('paramGroups[i].lr is mutable and addParamGroup takes the defaults', function () {
    const a = kd.zeros(2).requiresGrad_();
    const b = kd.zeros(2).requiresGrad_();
    const opt = new kd.optim.SGD([a], { lr: 0.1, momentum: 0.9 });
    opt.addParamGroup({ params: b, lr: 1 });
    assert.equal(opt.paramGroups[1].momentum, 0.9);
    opt.paramGroups[0].lr = 0.5;
    a.grad = kd.ones(2);
    b.grad = kd.ones(2);
    opt.step();
    assert.deepEqual(values(a), [-0.5, -0.5]);
    assert.deepEqual(values(b), [-1, -1]);
  });

  it('updates bump the parameter version, so a graph that saved the old value refuses backward', function () {
    const p = kd.ones(3).requiresGrad_();
    const opt = new kd.optim.SGD([p], { lr: 0.1 });
    const loss = p.mul(p).sum();
    p.grad = kd.ones(3);
    opt.step();
    assert.throws(() => loss.backward(), /modified by an inplace operation|version/);
  });
});

describe('kd._internal fused optimizer ops', function () {
  it('single and foreach forms agree; the single form returns the parameter', function () {
    const p1 = F([1, 2, 3]);
    const p2 = F([1, 2, 3]);
    const g = F([0.5, -1, 2]);
    const m1 = kd.zeros(3); const v1 = kd.zeros(3);
    const m2 = kd.zeros(3); const v2 = kd.zeros(3);
    const r = I.adamStep_(p1, g, m1, v1, null, 0.1, 0.9, 0.999, 1e-8, 0, 1, false);
    assert.equal(r, p1);
    const l = I.foreachAdamStep_([p2], [g], [m2], [v2], [], 0.1, 0.9, 0.999, 1e-8, 0, 1, false);
    assert.deepEqual(l, []);
    assert.deepEqual(values(p1), values(p2));
    assert.deepEqual(values(m1), values(m2));
    // Adam's first step moves every coordinate by lr * sign(g)
    closeList(values(p1), [0.9, 2.1, 2.9], [1e-6, 1e-6], 'adam step 1');
  });

  it('checks lists, shapes and dtypes before writing anything', function () {
    const p = F([1, 2, 3]);
    expectKdError(() => I.foreachSgdStep_([p], [kd.zeros(4)], [], 0.1), 'KD_SHAPE_MISMATCH');
    expectKdError(() => I.foreachSgdStep_([p], [kd.zeros(3, { dtype: 'float64' })], [], 0.1), 'KD_DTYPE_MISMATCH');
    expectKdError(() => I.foreachSgdStep_([p], [], [], 0.1), 'KD_INVALID_ARGUMENT');
    expectKdError(() => I.foreachSgdStep_([p], [kd.zeros(3)], [], 0.1, 0.9), 'KD_INVALID_ARGUMENT');
    expectKdError(() => I.foreachSgdStep_([kd.tensor([1, 2], { dtype: 'int64' })], [kd.tensor([1, 2], { dtype: 'int64' })], [], 0.1), 'KD_DTYPE_MISMATCH');
    expectKdError(() => I.foreachAdamStep_([p], [kd.ones(3)], [kd.zeros(3)], [kd.zeros(3)], [], 0.1, 0.9, 0.999, 1e-8, 0, 0), 'KD_INVALID_ARGUMENT');
    expectKdError(() => I.sgdStep_(kd.zeros(1).expand(3), kd.ones(3), null, 0.1), 'KD_INVALID_ARGUMENT');
    // a list where the second entry is bad leaves the first untouched
    const q = F([1, 2, 3]);
    expectKdError(() => I.foreachSgdStep_([q, p], [kd.ones(3), kd.ones(2)], [], 0.1), 'KD_SHAPE_MISMATCH');
    assert.deepEqual(values(q), [1, 2, 3]);
  });

  it('large parameters across the parallel grain match a float64 reference (Adam, amsgrad, weight decay)', function () {
    const n = 100003;
    const pv = new Float64Array(n); const gv = new Float64Array(n);
    let s = 7;
    for (let i = 0; i < n; i++) {
      s = (Math.imul(1664525, s) + 1013904223) >>> 0; pv[i] = s / 4294967296 - 0.5;
      s = (Math.imul(1664525, s) + 1013904223) >>> 0; gv[i] = (s / 4294967296 - 0.5) * 4;
    }
    const p = kd.tensor(Float32Array.from(pv)).requiresGrad_();
    const opt = new kd.optim.Adam([p], { lr: 0.01, weightDecay: 0.1, amsgrad: true });
    const ref = Float64Array.from(Float32Array.from(pv));
    const m = new Float64Array(n); const v = new Float64Array(n); const vm = new Float64Array(n);
    for (let step = 1; step <= 3; step++) {
      p.grad = kd.tensor(Float32Array.from(gv));
      opt.step();
      const bc1 = 1 - 0.9 ** step; const bc2 = 1 - 0.999 ** step;
      for (let i = 0; i < n; i++) {
        const g = Math.fround(gv[i]) + 0.1 * ref[i];
        m[i] = 0.9 * m[i] + 0.1 * g; v[i] = 0.999 * v[i] + 0.001 * g * g; vm[i] = Math.max(vm[i], v[i]);
        ref[i] -= (0.01 / bc1) * m[i] / (Math.sqrt(vm[i]) / Math.sqrt(bc2) + 1e-8);
      }
    }
    closeList(values(p), Array.from(ref), [1e-4, 1e-5], 'large Adam');
  });
});

describe('kd.optim.lrScheduler (PyTorch fixtures)', function () {
  const S = kd.optim.lrScheduler;
  for (const c of FIX.schedulers) {
    it(c.name, function () {
      const ps = [kd.zeros(2).requiresGrad_(), kd.zeros(3).requiresGrad_()];
      const Opt = kd.optim[c.optim];
      const opt = c.groupOptions
        ? new Opt([{ params: [ps[0]] }, { params: [ps[1]], ...c.groupOptions }], c.optimOptions)
        : new Opt(ps, c.optimOptions);
      const make = (name, args, options) => new S[name](opt, ...args, options);
      const sched = c.scheduler === 'SequentialLR'
        ? new S.SequentialLR(opt, c.inner.map((i) => make(i.scheduler, i.args, i.options)), ...c.args, c.options)
        : make(c.scheduler, c.args, c.options);
      for (let step = 0; step < c.lrs.length; step++) {
        closeList(opt.paramGroups.map((g) => g.lr), c.lrs[step], [1e-12, 1e-15], `lr at step ${step}`);
        if (c.momentums) {
          const mom = opt.paramGroups.map((g) => (g.betas ? g.betas[0] : g.momentum));
          closeList(mom, c.momentums[step], [1e-12, 1e-15], `momentum at step ${step}`);
        }
        if (step > 0) closeList(sched.getLastLr(), c.lrs[step], [1e-12, 1e-15], `getLastLr at step ${step}`);
        opt.step();
        if (c.metrics) sched.step(c.metrics[step]);
        else sched.step();
      }
    });
  }

  it('stateDict round trip continues the same schedule', function () {
    const mk = () => {
      const p = kd.zeros(2).requiresGrad_();
      const opt = new kd.optim.SGD([p], { lr: 0.1, momentum: 0.9 });
      return { opt, sched: new S.CosineAnnealingLR(opt, 10, { etaMin: 0.001 }) };
    };
    const a = mk();
    for (let i = 0; i < 7; i++) a.sched.step();
    const b = mk();
    b.opt.loadStateDict(a.opt.stateDict());
    b.sched.loadStateDict(a.sched.stateDict());
    assert.equal(b.sched.lastEpoch, 7);
    for (let i = 0; i < 10; i++) {
      a.sched.step(); b.sched.step();
      assert.equal(b.opt.paramGroups[0].lr, a.opt.paramGroups[0].lr);
    }
    assert.deepEqual(b.sched.getLastLr(), a.sched.getLastLr());
  });

  it('rejects bad arguments as PyTorch does', function () {
    const opt = new kd.optim.SGD([kd.zeros(2).requiresGrad_()], { lr: 0.1 });
    expectKdError(() => new S.LinearLR(opt, { startFactor: 0 }), 'KD_INVALID_ARGUMENT');
    expectKdError(() => new S.ReduceLROnPlateau(opt, { factor: 1 }), 'KD_INVALID_ARGUMENT');
    expectKdError(() => new S.StepLR({}, 3), 'KD_INVALID_TYPE');
    const one = new S.OneCycleLR(opt, 0.1, { totalSteps: 2 });
    one.step();
    one.step();
    expectKdError(() => one.step(), 'KD_INVALID_ARGUMENT');
    const adagrad = new kd.optim.Adagrad([kd.zeros(2).requiresGrad_()]);
    expectKdError(() => new S.OneCycleLR(adagrad, 0.1, { totalSteps: 5 }), 'KD_INVALID_ARGUMENT');
  });
});

describe('optim: state survives kd.tidy', function () {
  it('the first step() inside a tidy keeps the lazily made state (every optimizer)', function () {
    const { kd, assert } = require('./helpers');
    for (const make of [(p) => new kd.optim.Adam([p]), (p) => new kd.optim.AdamW([p], { amsgrad: true }),
      (p) => new kd.optim.SGD([p], { lr: 0.1, momentum: 0.9 }), (p) => new kd.optim.RMSprop([p], { momentum: 0.5, centered: true }),
      (p) => new kd.optim.Adagrad([p])]) {
      const p = kd.ones([3], { requiresGrad: true });
      const opt = make(p);
      for (let i = 0; i < 3; i++) {
        kd.tidy(() => {
          opt.zeroGrad();
          p.mul(p).sum().backward();
          opt.step();
        });
      }
      assert.ok(p.dataSync().every(Number.isFinite));
    }
  });
});
