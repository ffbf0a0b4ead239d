// nn_utils.test.js - kd.nn.utils against PyTorch 1.13 (test/fixtures/nn_utils.json, written by
// tools/fixtures/nn_utils.py): gradient clipping, weightNorm (values and gradients), batch-norm
// fusion and prune's deterministic methods; spectralNorm, functionalCall, skipInit and the random
// pruning methods by their structure.
'use strict';

const { kd, assert, fixture } = require('./helpers');

const nn = kd.nn;
const U = nn.utils;
const F = fixture('nn_utils');
const vals = (t) => Array.from(t.dataSync(), Number);
const build = (s) => kd.tensor(s.data, { dtype: 'float64' }).reshape(s.shape);
function close(t, s, what, tol = 1e-10) {
  assert.deepEqual(t.shape, s.shape, `${what}: shape`);
  const a = vals(t);
  s.data.forEach((e, i) => assert.ok(Math.abs(a[i] - e) <= tol * Math.max(1, Math.abs(e)), `${what}[${i}]: ${a[i]} vs ${e}`));
}

describe('nn.utils gradient clipping and vectors', function () {
  it('clipGradNorm_ for norm types 2, 1, inf, 0.5, 3 (PyTorch fixtures)', function () {
    for (const c of F.clip) {
      const ps = [new nn.Parameter(kd.zeros([2, 3], { dtype: 'float64' })), new nn.Parameter(kd.zeros([4], { dtype: 'float64' }))];
      ps[0].grad = build(c.inputs[0]);
      ps[1].grad = build(c.inputs[1]);
      const total = U.clipGradNorm_(ps, c.maxNorm, c.normType === 'inf' ? Infinity : c.normType);
      assert.ok(Math.abs(total.item() - c.total) < 1e-9, `${c.normType}: total ${total.item()} vs ${c.total}`);
      close(ps[0].grad, c.grads[0], `${c.normType}/${c.maxNorm} grad 0`);
      close(ps[1].grad, c.grads[1], `${c.normType}/${c.maxNorm} grad 1`);
    }
  });

  it('clipGradNorm_: errorIfNonfinite, no gradients, the deprecated name', function () {
    const p = new nn.Parameter(kd.zeros(2));
    p.grad = kd.tensor([Infinity, 1]);
    assert.throws(() => U.clipGradNorm_([p], 1, 2, { errorIfNonfinite: true }), /total norm of order 2 for gradients from `parameters` is non-finite/);
    assert.equal(U.clipGradNorm_([new nn.Parameter(kd.zeros(2))], 1).item(), 0);
    p.grad = kd.tensor([3, 4], { dtype: 'float32' });
    assert.ok(Math.abs(U.clipGradNorm(p, 1).item() - 5) < 1e-6);
  });

  it('clipGradValue_ clamps to [-v, v]; a negative v clamps everything to v, as PyTorch', function () {
    for (const c of F.clipValue) {
      const p = new nn.Parameter(kd.zeros([5], { dtype: 'float64' }));
      p.grad = build(c.input);
      U.clipGradValue_([p], c.clipValue);
      close(p.grad, c.grad, `clipValue ${c.clipValue}`);
    }
  });

  it('parametersToVector / vectorToParameters (the parameters then share the vector\'s storage)', function () {
    const a = new nn.Parameter(kd.tensor([[1, 2], [3, 4]], { dtype: 'float32' }));
    const b = new nn.Parameter(kd.tensor([5, 6], { dtype: 'float32' }));
    const v = U.parametersToVector([a, b]);
    assert.deepEqual(vals(v), [1, 2, 3, 4, 5, 6]);
    const w = kd.arange(10, 17, { dtype: 'float32' });
    U.vectorToParameters(w, [a, b]);
    assert.deepEqual(vals(a), [10, 11, 12, 13]);
    assert.deepEqual(vals(b), [14, 15]);
    w.zero_();
    assert.deepEqual(vals(a), [0, 0, 0, 0]);
    assert.throws(() => U.vectorToParameters([1, 2], [a]), /expected torch.Tensor, but got: Array/);
    assert.throws(() => U.vectorToParameters(kd.zeros(3), [a]), (e) => e.code === 'KD_SHAPE_MISMATCH');
  });
});

describe('nn.utils.weightNorm / spectralNorm', function () {
  it('weightNorm: g and v parameters, PyTorch\'s output and gradients for dim 0, 1 and null', function () {
    for (const c of F.weightNorm) {
      const lin = new nn.Linear(3, 2).double();
      kd.noGrad(() => { lin.weight.copy_(build(c.weight)); lin.bias.copy_(kd.tensor([0.1, -0.2], { dtype: 'float64' })); });
      U.weightNorm(lin, 'weight', c.dim);
      assert.deepEqual(Object.keys(lin.stateDict()), c.keys);
      close(lin.weightG, c.g, `g dim=${c.dim}`);
      const y = lin(build(c.x));
      close(y, c.y, `y dim=${c.dim}`);
      y.mul(build(c.gy)).sum().backward();
      close(lin.weightG.grad, c.gradG, `grad g dim=${c.dim}`, 1e-9);
      close(lin.weightV.grad, c.gradV, `grad v dim=${c.dim}`, 1e-9);
    }
  });

  it('removeWeightNorm gives back a weight Parameter with the same values; errors', function () {
    const lin = new nn.Linear(3, 2);
    const x = kd.randn(2, 3);
    const before = vals(lin(x));
    U.weightNorm(lin);
    assert.throws(() => U.weightNorm(lin), /Cannot register two weight_norm hooks on the same parameter weight/);
    const y = vals(lin(x));
    y.forEach((v, i) => assert.ok(Math.abs(v - before[i]) < 1e-5));
    U.removeWeightNorm(lin);
    assert.deepEqual(Object.keys(lin.stateDict()), ['bias', 'weight']);
    assert.ok(lin.weight instanceof nn.Parameter);
    assert.throws(() => U.removeWeightNorm(lin), /weight_norm of 'weight' not found/);
  });

  it('spectralNorm: the weight divided by its largest singular value (power iteration in training mode)', function () {
    kd.manualSeed(4);
    const lin = U.spectralNorm(new nn.Linear(5, 4));
    assert.deepEqual(Object.keys(lin.stateDict()), ['bias', 'weight_orig', 'weight_u', 'weight_v']);
    const x = kd.randn(2, 5);
    for (let i = 0; i < 30; i++) lin(x);
    const sigma = kd.linalg.svdvals(lin.weight).max().item();
    assert.ok(Math.abs(sigma - 1) < 1e-3, `sigma ${sigma}`);
    const u = vals(lin.weightU);
    lin.eval();
    lin(x);
    assert.deepEqual(vals(lin.weightU), u, 'no power iteration in eval mode');
    lin.train();
    lin(x).sum().backward();
    assert.deepEqual(lin.weightOrig.grad.shape, [4, 5]);
    const conv = U.spectralNorm(new nn.ConvTranspose2d(3, 2, 2));
    assert.deepEqual(conv.weightU.shape, [2], 'dim 1 for ConvTranspose');
    U.removeSpectralNorm(lin);
    assert.deepEqual(Object.keys(lin.stateDict()), ['bias', 'weight']);
    assert.throws(() => U.spectralNorm(new nn.Linear(2, 2), { nPowerIterations: 0 }), /Expected n_power_iterations to be positive, but got n_power_iterations=0/);
  });
});

describe('nn.utils fusion, stateless, skipInit', function () {
  it('fuseConvBnEval / fuseConvBnWeights / fuseLinearBnEval (PyTorch fixtures)', function () {
    const c = F.fusion.conv;
    const conv = new nn.Conv2d(2, 3, 2).double().eval();
    const bn = new nn.BatchNorm2d(3).double().eval();
    kd.noGrad(() => {
      conv.weight.copy_(build(c.weight)); conv.bias.copy_(build(c.bias));
      bn.runningMean.copy_(build(c.rm)); bn.runningVar.copy_(build(c.rv)); bn.weight.copy_(build(c.bnW)); bn.bias.copy_(build(c.bnB));
    });
    const fused = U.fusion.fuseConvBnEval(conv, bn);
    assert.ok(fused instanceof nn.Conv2d && fused !== conv);
    close(fused.weight, c.fusedWeight, 'fused conv weight');
    close(fused.bias, c.fusedBias, 'fused conv bias');
    close(conv.weight, c.weight, 'the original is unchanged');
    const x = kd.randn([1, 2, 4, 4], { dtype: 'float64' });
    assert.ok(fused(x).sub(bn(conv(x))).abs().max().item() < 1e-12);
    const l = F.fusion.linear;
    const lin = new nn.Linear(3, 3).double().eval();
    const bn1 = new nn.BatchNorm1d(3).double().eval();
    kd.noGrad(() => {
      lin.weight.copy_(build(l.weight)); lin.bias.copy_(build(l.bias));
      bn1.runningMean.copy_(build(c.rm)); bn1.runningVar.copy_(build(c.rv)); bn1.weight.copy_(build(c.bnW)); bn1.bias.copy_(build(c.bnB));
    });
    const fl = U.fuseLinearBnEval(lin, bn1);
    close(fl.weight, l.fusedWeight, 'fused linear weight');
    close(fl.bias, l.fusedBias, 'fused linear bias');
    assert.throws(() => U.fuseConvBnEval(conv.train(), bn), /Fusion only for eval!/);
  });

  it('stateless.functionalCall swaps tensors in for one call (gradients reach them) and restores the module', function () {
    const lin = new nn.Linear(3, 2);
    const w0 = lin.weight;
    const w = kd.ones([2, 3], { requiresGrad: true });
    const b = kd.zeros([2]);
    const y = U.stateless.functionalCall(lin, { weight: w, bias: b }, [kd.tensor([[1, 2, 3]], { dtype: 'float32' })]);
    assert.deepEqual(vals(y), [6, 6]);
    y.sum().backward();
    assert.deepEqual(vals(w.grad), [1, 2, 3, 1, 2, 3]);
    assert.equal(lin.weight, w0);
    assert.deepEqual(lin.namedParameters().map((e) => e[0]), ['weight', 'bias']);
    const seq = new nn.Sequential(new nn.Linear(2, 2), new nn.BatchNorm1d(2));
    const rm = kd.tensor([1, 1], { dtype: 'float32' });
    seq.eval();
    const out = U.stateless.functionalCall(seq, new Map([['1.running_mean', rm]]), kd.zeros(1, 2));
    assert.deepEqual(out.shape, [1, 2]);
    assert.notEqual(seq[1].runningMean, rm);
    assert.deepEqual(Object.keys(seq.stateDict()), ['0.weight', '0.bias', '1.weight', '1.bias', '1.running_mean', '1.running_var', '1.num_batches_tracked']);
  });

  it('skipInit builds a module without running the initialisers', function () {
    kd.manualSeed(9);
    const before = vals(kd.rand(4));
    kd.manualSeed(9);
    const m = U.skipInit(nn.Linear, 3, 2);
    assert.deepEqual(m.weight.shape, [2, 3]);
    assert.deepEqual(vals(kd.rand(4)), before, 'no random numbers drawn');
    assert.throws(() => U.skipInit(Object), /must be a kd.nn.Module subclass/);
  });
});

describe('nn.utils.prune', function () {
  const P = U.prune;
  const F2 = F.prune;
  const mk = () => {
    const m = new nn.Linear(3, 4).double();
    kd.noGrad(() => m.weight.copy_(build(F2.l1.weight)));
    return m;
  };
  const maskOf = (m) => vals(m.weightMask);

  it('l1Unstructured: weight_orig, weight_mask, the masked weight and PyTorch\'s mask', function () {
    const m = mk();
    P.l1Unstructured(m, 'weight', 0.25);
    assert.deepEqual(maskOf(m), F2.l1.mask.data);
    assert.deepEqual(Object.keys(m.stateDict()), F2.l1.keys);
    close(m.weight, F2.l1.pruned, 'pruned weight');
    const y = m(kd.ones([1, 3], { dtype: 'float64' }));
    y.sum().backward();
    assert.deepEqual(vals(m.weightOrig.grad), F2.l1.mask.data, 'gradients only through kept entries');
    assert.ok(P.isPruned(m));
  });

  it('pruning twice combines the methods (PruningContainer); ln_structured along dims 0 and 1; global', function () {
    let m = mk();
    P.l1Unstructured(m, 'weight', 5);
    P.l1Unstructured(m, 'weight', 2);
    assert.deepEqual(maskOf(m), F2.l1Iterative.mask.data);
    m = mk();
    P.lnStructured(m, 'weight', 0.5, 2, 0);
    assert.deepEqual(maskOf(m), F2.ln.mask.data);
    m = mk();
    P.lnStructured(m, 'weight', { amount: 1, n: 1, dim: 1 });
    assert.deepEqual(maskOf(m), F2.lnDim1.mask.data);
    const a = mk();
    const b = new nn.Linear(4, 2).double();
    kd.noGrad(() => b.weight.copy_(build(F2.global.b)));
    P.globalUnstructured([[a, 'weight'], [b, 'weight']], P.L1Unstructured, { amount: 7 });
    assert.deepEqual(maskOf(a), F2.global.maskA.data);
    assert.deepEqual(maskOf(b), F2.global.maskB.data);
    assert.throws(() => P.globalUnstructured([[a, 'weight']], P.LnStructured, { amount: 1, n: 2 }), /Only "unstructured" PRUNING_TYPE supported/);
  });

  it('random methods prune the right counts; remove makes it permanent; identity and custom masks', function () {
    kd.manualSeed(0);
    let m = mk();
    P.randomUnstructured(m, 'weight', 5);
    assert.equal(maskOf(m).filter((v) => v === 0).length, 5);
    m = mk();
    P.randomStructured(m, 'weight', 0.5, 0); // round(0.5 * 4) = 2 rows
    const rows = m.weightMask.sum(1);
    assert.deepEqual(vals(rows).sort(), [0, 0, 3, 3]);
    const before = vals(m.weight);
    P.remove(m, 'weight');
    assert.deepEqual(Object.keys(m.stateDict()), ['bias', 'weight']);
    assert.deepEqual(vals(m.weight), before);
    assert.ok(!P.isPruned(m));
    m = mk();
    P.identity(m, 'weight');
    assert.deepEqual(maskOf(m), new Array(12).fill(1));
    P.customFromMask(m, 'weight', kd.tensor([[1, 0, 1], [1, 1, 1], [0, 0, 0], [1, 1, 1]]));
    assert.deepEqual(maskOf(m), [1, 0, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1]);
    // amounts: Python's round (halves to even) and the errors
    m = mk();
    P.l1Unstructured(m, 'weight', 0.125); // 1.5 -> 2
    assert.equal(maskOf(m).filter((v) => v === 0).length, 2);
    assert.throws(() => P.l1Unstructured(mk(), 'weight', 1.5), /amount=1.5 should either be a float in the range \[0, 1\] or a non-negative integer/);
    assert.throws(() => P.l1Unstructured(mk(), 'weight', 13), /amount=13 should be smaller than the number of parameters to prune=12/);
    assert.throws(() => P.lnStructured(mk(), 'bias', 1, 2, 0), /Structured pruning can only be applied to multidimensional tensors/);
    assert.throws(() => P.remove(mk(), 'weight'), /has to be pruned before pruning can be removed/);
  });

  it('a custom BasePruningMethod subclass', function () {
    class EveryOther extends P.BasePruningMethod {
      computeMask(t, defaultMask) {
        const mask = defaultMask.clone();
        const flat = mask.reshape(-1);
        for (let i = 0; i < flat.shape[0]; i += 2) flat.index(i).fill_(0);
        return flat.reshape(t.shape);
      }
    }
    EveryOther.PRUNING_TYPE = 'unstructured';
    const m = mk();
    EveryOther.apply(m, 'weight');
    assert.deepEqual(maskOf(m), [0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1]);
    const pruned = new EveryOther().prune(kd.ones(4));
    assert.deepEqual(vals(pruned), [0, 1, 0, 1]);
  });
});

describe('nn.utils.parametrize and parametrizations', function () {
  const PZ = U.parametrize;
  class Symmetric extends nn.Module {
    forward(X) { return X.triu().add(X.triu(1).mT); }
    rightInverse(A) { return A.triu(); }
  }

  it('typeBeforeParametrizations: the class before registering, the own class without', function () {
    const l = new nn.Linear(3, 3);
    assert.equal(PZ.typeBeforeParametrizations(l), nn.Linear);
    PZ.registerParametrization(l, 'weight', new Symmetric());
    assert.equal(l.constructor.name, 'ParametrizedLinear');
    assert.equal(PZ.typeBeforeParametrizations(l), nn.Linear);
    PZ.removeParametrizations(l, 'weight');
    assert.equal(PZ.typeBeforeParametrizations(l), nn.Linear);
    assert.throws(() => PZ.typeBeforeParametrizations({}), TypeError);
  });

  it('transferParametrizationsAndParams: the same parametrizations and shared originals, as PyTorch\'s', function () {
    class Double extends nn.Module { forward(X) { return X.mul(2); } rightInverse(X) { return X.div(2); } }
    class Split extends nn.Module { forward(a, b) { return a.add(b); } rightInverse(X) { return [X.mul(0.25), X.mul(0.75)]; } }
    const from = new nn.Linear(3, 3, { dtype: 'float64' });
    const sym = new Symmetric();
    PZ.registerParametrization(from, 'weight', sym);
    PZ.registerParametrization(from, 'weight', new Double());
    PZ.registerParametrization(from, 'bias', new Split());
    const to = new nn.Linear(3, 3, { dtype: 'float64' });
    assert.equal(PZ.transferParametrizationsAndParams(from, to), to);
    assert.equal(to.constructor.name, 'ParametrizedLinear');
    assert.equal([...to.parametrizations.weight][0], sym, 'the same parametrization modules');
    assert.equal(to.parametrizations.weight.length, 2);
    assert.equal(to.parametrizations.weight.original, from.parametrizations.weight.original, 'the same original Parameter');
    assert.equal(to.parametrizations.bias.original0, from.parametrizations.bias.original0);
    assert.equal(to.parametrizations.bias.original1, from.parametrizations.bias.original1);
    assert.deepEqual(vals(to.weight), vals(from.weight));
    assert.deepEqual(vals(to.bias), vals(from.bias));
    kd.noGrad(() => from.parametrizations.weight.original.add_(1));
    assert.deepEqual(vals(to.weight), vals(from.weight), 'shared: a change shows in both');
    // one tensor; a tensor toModule lacks is created from the parametrized value
    const bare = new nn.Module();
    PZ.transferParametrizationsAndParams(from, bare, 'weight');
    assert.ok(PZ.isParametrized(bare, 'weight') && !PZ.isParametrized(bare, 'bias'));
    assert.deepEqual(vals(bare.weight), vals(from.weight));
    assert.deepEqual(Object.keys(bare.stateDict()), ['parametrizations.weight.original']);
    // nothing to transfer; a tensor that is not parametrized
    const plain = new nn.Linear(2, 2);
    assert.equal(PZ.transferParametrizationsAndParams(plain, to), to);
    assert.ok(!PZ.isParametrized(plain));
    assert.throws(() => PZ.transferParametrizationsAndParams(from, new nn.Linear(3, 3), 'foo'), (e) => e.code === 'KD_INVALID_ARGUMENT' && /does not have a parametrization on foo/.test(e.message));
    assert.throws(() => PZ.transferParametrizationsAndParams(from, {}), TypeError);
  });

  it('registerParametrization: the tensor computed from parametrizations.<name>.original, a class of its own, PyTorch\'s keys and print', function () {
    const l = new nn.Linear(3, 3);
    const w = l.weight;
    PZ.registerParametrization(l, 'weight', new Symmetric());
    assert.equal(l.constructor.name, 'ParametrizedLinear');
    assert.ok(l instanceof nn.Linear);
    assert.ok(PZ.isParametrized(l) && PZ.isParametrized(l, 'weight') && !PZ.isParametrized(l, 'bias'));
    assert.equal(l.parametrizations.weight.original, w, 'the original Parameter object (optimizers keep working)');
    assert.deepEqual(Object.keys(l.stateDict()), ['bias', 'parametrizations.weight.original']);
    assert.equal(l.weight.sub(l.weight.mT).abs().max().item(), 0);
    assert.equal(String(l), 'ParametrizedLinear(\n  in_features=3, out_features=3, bias=True\n  (parametrizations): ModuleDict(\n    (weight): ParametrizationList(\n      (0): Symmetric()\n    )\n  )\n)');
    l(kd.ones(1, 3)).sum().backward();
    assert.deepEqual(w.grad.shape, [3, 3]);
    assert.deepEqual(vals(w.grad.tril(-1)), new Array(9).fill(0), 'no gradient below the diagonal (triu)');
    // assigning runs rightInverse
    const s = kd.tensor([[1, 2, 3], [2, 4, 5], [3, 5, 6]], { dtype: 'float32' });
    l.weight = s;
    assert.deepEqual(vals(l.weight), vals(s));
    assert.deepEqual(vals(w), [1, 2, 3, 0, 4, 5, 0, 0, 6]);
    // a second parametrization is chained; the checks refuse a change of shape
    class Double extends nn.Module { forward(X) { return X.mul(2); } rightInverse(X) { return X.div(2); } }
    PZ.registerParametrization(l, 'weight', new Double());
    assert.deepEqual(vals(l.weight), vals(s.mul(2)));
    class Row extends nn.Module { forward(X) { return X.narrow(0, 0, 1); } }
    assert.throws(() => PZ.registerParametrization(l, 'weight', new Row()), /may not change the shape of the tensor, unless the `unsafe` flag is enabled/);
    assert.throws(() => PZ.registerParametrization(l, 'foo', new Double()), /does not have a parameter, a buffer, or a parametrized element with name 'foo'/);
  });

  it('removeParametrizations keeps the value (or the original) and the class goes back; cached() computes once', function () {
    const l = new nn.Linear(3, 3);
    PZ.registerParametrization(l, 'weight', new Symmetric());
    const sym = vals(l.weight);
    let calls = 0;
    const hook = l.parametrizations.weight.registerForwardHook(() => { calls++; });
    PZ.cached(() => { void l.weight; void l.weight; });
    assert.equal(calls, 1);
    void l.weight;
    assert.equal(calls, 2);
    hook.remove();
    PZ.removeParametrizations(l, 'weight');
    assert.equal(l.constructor.name, 'Linear');
    assert.ok(l.weight instanceof nn.Parameter);
    assert.deepEqual(vals(l.weight), sym);
    assert.deepEqual(Object.keys(l.stateDict()), ['bias', 'weight']);
    assert.ok(!('parametrizations' in l));
    const m = new nn.Linear(2, 2);
    const before = vals(m.weight);
    PZ.registerParametrization(m, 'weight', new Symmetric(), { unsafe: true });
    PZ.removeParametrizations(m, 'weight', false);
    assert.deepEqual(vals(m.weight), [before[0], before[1], 0, before[3]], 'the original (rightInverse applied at registration)');
    assert.throws(() => PZ.removeParametrizations(m, 'weight'), /does not have a parametrization on weight/);
  });

  it('parametrizations.orthogonal: matrix_exp, cayley and householder, with and without trivialization (PyTorch fixtures, values and gradients)', function () {
    for (const c of F.orthogonal) {
      const lin = new nn.Linear(c.shape[1], c.shape[0]).double();
      kd.noGrad(() => lin.weight.copy_(build(c.weight0)));
      U.parametrizations.orthogonal(lin, 'weight', c.map, { useTrivialization: c.trivialization });
      const what = `${c.shape} ${c.map} trivialization=${c.trivialization}`;
      close(lin.weight, c.weight, `${what}: weight`, 1e-12);
      close(lin.parametrizations.weight.original, c.original, `${what}: original`, 1e-12);
      lin.weight.mul(build(c.gy)).sum().backward();
      close(lin.parametrizations.weight.original.grad, c.grad, `${what}: gradient`, 1e-12);
    }
  });

  it('parametrizations.orthogonal: stays orthogonal through an optimizer step; assigning an orthogonal matrix', function () {
    kd.manualSeed(6);
    const lin = U.parametrizations.orthogonal(new nn.Linear(6, 3));
    assert.deepEqual(Object.keys(lin.stateDict()), ['bias', 'parametrizations.weight.original', 'parametrizations.weight.0.base']);
    const opt = new kd.optim.SGD(lin.parameters(), { lr: 0.5 });
    lin(kd.randn(4, 6)).pow(2).sum().backward();
    opt.step();
    const W = lin.weight;
    assert.ok(W.matmul(W.mT).sub(kd.eye(3)).abs().max().item() < 1e-5);
    const sq = U.parametrizations.orthogonal(new nn.Linear(4, 4));
    const q = kd.linalg.qr(kd.randn(4, 4))[0];
    sq.weight = q;
    assert.ok(sq.weight.sub(q).abs().max().item() < 1e-5);
    assert.throws(() => U.parametrizations.orthogonal(new nn.Linear(2, 2), 'weight', 'qr'), /orthogonal_map has to be one of/);
    assert.throws(() => U.parametrizations.orthogonal(new nn.Linear(2, 2), 'bias'), /Expected a matrix or batch of matrices. Got a tensor of 1 dimensions./);
  });

  it('parametrizations.spectralNorm: sigma 1, buffers _u and _v, power iteration only in training', function () {
    kd.manualSeed(7);
    const l = U.parametrizations.spectralNorm(new nn.Linear(5, 4));
    assert.deepEqual(Object.keys(l.stateDict()), ['bias', 'parametrizations.weight.original', 'parametrizations.weight.0._u', 'parametrizations.weight.0._v']);
    const sigma = kd.linalg.svdvals(l.weight).max().item();
    assert.ok(Math.abs(sigma - 1) < 1e-3, `sigma ${sigma}`);
    l.eval();
    const u = vals(l.parametrizations.weight[0]._u);
    void l.weight;
    assert.deepEqual(vals(l.parametrizations.weight[0]._u), u);
    const ct = U.parametrizations.spectralNorm(new nn.ConvTranspose2d(3, 2, 2));
    assert.equal(ct.parametrizations.weight[0].dim, 1);
  });
});

if (kd.cuda.isAvailable()) {
  describe('nn.utils on CUDA', function () {
    it('clipGradNorm_, weightNorm, spectralNorm and pruning run on CUDA parameters', function () {
      const c = F.clip.find((x) => x.normType === 2 && x.maxNorm === 0.5);
      const ps = [new nn.Parameter(kd.zeros([2, 3], { dtype: 'float64', device: 'cuda' })), new nn.Parameter(kd.zeros([4], { dtype: 'float64', device: 'cuda' }))];
      ps[0].grad = build(c.inputs[0]).cuda();
      ps[1].grad = build(c.inputs[1]).cuda();
      const total = U.clipGradNorm_(ps, c.maxNorm, 2);
      assert.equal(total.device, 'cuda:0');
      close(ps[0].grad.cpu(), c.grads[0], 'cuda grad 0');
      const lin = U.weightNorm(new nn.Linear(3, 2).cuda());
      lin(kd.ones(1, 3, { device: 'cuda' })).sum().backward();
      assert.equal(lin.weightV.grad.device, 'cuda:0');
      U.spectralNorm(new nn.Linear(3, 2).cuda())(kd.ones(1, 3, { device: 'cuda' }));
      const m = new nn.Linear(3, 4).double().cuda();
      kd.noGrad(() => m.weight.copy_(build(F.prune.l1.weight).cuda()));
      U.prune.l1Unstructured(m, 'weight', 0.25);
      assert.deepEqual(vals(m.weightMask.cpu()), F.prune.l1.mask.data);
    });
  });
}
