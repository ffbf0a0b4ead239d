// autograd_nondiff.test.js - the `nondiff` flag of the op list is a promise that an op's outputs
// carry no gradient (autograd lets it run on tensors that require grad and its outputs never do).
// Wrongly set on an op with floating outputs it turns a missing derivative into a silent zero
// (issue 5: prodBackward, layerNormBackward, pointwiseLossBackward were such). So every nondiff op
// is listed here with its reason, and those whose reason is "bool/integer output" are probed on
// float64 inputs that require grad; every other op that is neither composite nor a factory must
// have a backward formula (or be listed as refused, an error at the call).
'use strict';

const { kd, assert } = require('./helpers');
const OPS = require('../src/ops/oplist');

const BOOL = 'bool output';
const INT = 'integer output (indices, counts)';
const OPTIM = 'optimizer update: in-place on parameters under noGrad, never part of a graph';
const QUANTIZED = "int8 dynamic quantization's kernels: PyTorch's quantized::linear_prepack / linear_dynamic have no derivative either";
const NONDIFF = {
  eq: BOOL, ne: BOOL, lt: BOOL, le: BOOL, gt: BOOL, ge: BOOL, isclose: BOOL,
  logicalAnd: BOOL, logicalOr: BOOL, logicalXor: BOOL, logicalNot: BOOL,
  isnan: BOOL, isinf: BOOL, isfinite: BOOL, isposinf: BOOL, isneginf: BOOL, all: BOOL, any: BOOL,
  bitwiseAnd: 'integer/bool-only op (PyTorch refuses floating inputs)',
  bitwiseOr: 'integer/bool-only op (PyTorch refuses floating inputs)',
  bitwiseXor: 'integer/bool-only op (PyTorch refuses floating inputs)',
  bitwiseNot: 'integer/bool-only op (PyTorch refuses floating inputs)',
  argmax: INT, argmin: INT, argsort: INT, countNonzero: INT, nonzero: INT, oneHot: INT,
  multinomial: INT,
  'bernoulli.p': "PyTorch's bernoulli(self, p=...) output does not require grad (its value does not depend on self's)",
  linalgMatrixRank: INT,
  unique: "PyTorch has no derivative either (_unique2: 'not implemented' at backward); kept nondiff so " +
    'the forward runs on tensors that require grad, its values never require grad',
  searchsorted: INT, bucketize: INT, uniqueConsecutive: "PyTorch has no derivative either (unique_consecutive: 'not implemented'); " +
    'kept nondiff so the forward runs on tensors that require grad',
  histc: 'counts (floating, but PyTorch has no derivative: histc is not differentiable)',
  bincount: 'counts or sums of weights at integer positions (PyTorch has no derivative: not differentiable)',
  isin: BOOL,
  sgdStep_: OPTIM, foreachSgdStep_: OPTIM, adamStep_: OPTIM, foreachAdamStep_: OPTIM, adamwStep_: OPTIM,
  foreachAdamwStep_: OPTIM, rmspropStep_: OPTIM, foreachRmspropStep_: OPTIM, adagradStep_: OPTIM,
  foreachAdagradStep_: OPTIM, adadeltaStep_: OPTIM, foreachAdadeltaStep_: OPTIM, radamStep_: OPTIM, foreachRadamStep_: OPTIM,
  adamaxStep_: OPTIM, foreachAdamaxStep_: OPTIM, nadamStep_: OPTIM, foreachNadamStep_: OPTIM, asgdStep_: OPTIM, foreachAsgdStep_: OPTIM,
  rpropStep_: OPTIM, foreachRpropStep_: OPTIM,
  qlinearPackWeight: QUANTIZED, qlinearDynamic: QUANTIZED, // internal, but not backward ops
  ampForeachNonFiniteCheckAndUnscale_: OPTIM, ampUpdateScale_: OPTIM, // GradScaler's part of the step (lib/amp.js)
  gcd: 'integer-only op (PyTorch refuses floating inputs)',
  lcm: 'integer-only op (PyTorch refuses floating inputs)',
};
// PyTorch 1.13 marks the outputs of these torch.special functions non-differentiable (their
// results never require grad)
for (const n of ['besselJ0', 'besselJ1', 'besselY0', 'besselY1', 'modifiedBesselI0', 'modifiedBesselI1', 'modifiedBesselK0',
  'modifiedBesselK1', 'scaledModifiedBesselK0', 'scaledModifiedBesselK1', 'sphericalBesselJ0', 'airyAi',
  'chebyshevPolynomialT', 'chebyshevPolynomialU', 'chebyshevPolynomialV', 'chebyshevPolynomialW',
  'shiftedChebyshevPolynomialT', 'shiftedChebyshevPolynomialU', 'shiftedChebyshevPolynomialV',
  'shiftedChebyshevPolynomialW', 'hermitePolynomialH', 'hermitePolynomialHe', 'laguerrePolynomialL',
  'legendrePolynomialP']) {
  NONDIFF[n] = 'PyTorch 1.13 marks its output non-differentiable (special_* with output_differentiability False)';
}
// Ops with tensor arguments, no formula and no decomposition: autograd refuses them when an
// argument requires grad ("the derivative for 'X' is not implemented"), an error, never a zero.
const REFUSED = {
  asStrided: 'no as_strided backward yet (PyTorch has one: a scatter over the storage geometry)',
  nextafter: "PyTorch refuses it too (derivatives.yaml: not_implemented(\"nextafter\"))",
  heaviside: 'PyTorch refuses it too ("derivative for aten::heaviside is not implemented")',
  ctcLossBackward: 'PyTorch refuses it too (derivatives.yaml: _ctc_loss_backward has no derivative)',
  gridSampleBackward: 'PyTorch refuses it too (derivatives.yaml: grid_sampler_2d_backward / grid_sampler_3d_backward have no derivative)',
  sdpaFlashBackward: 'PyTorch refuses it too (_scaled_dot_product_flash_attention_backward has no derivative); ' +
    'sdpaFlash\'s gradient goes through sdpaFlashGrad, which runs the math composition when a graph of it is recorded',
};

const isNondiff = (e) => (e.flags || []).includes('nondiff');
const tensorArgs = (e) => e.args.split(',').map((s) => s.trim().replace(/^\*\s*/, '')).filter((s) => /^Tensor/.test(s));

describe('autograd: nondiff ops', function () {
  it('every nondiff op is listed with its reason', function () {
    const flagged = OPS.filter(isNondiff).map((e) => e.name);
    const unlisted = flagged.filter((n) => !NONDIFF[n]);
    assert.deepStrictEqual(unlisted, [], `nondiff without a reason: ${unlisted.join(', ')}`);
    const stale = Object.keys(NONDIFF).filter((n) => !flagged.includes(n));
    assert.deepStrictEqual(stale, [], `listed but not nondiff: ${stale.join(', ')}`);
  });

  it('no internal backward op is nondiff (their derivatives are double backward)', function () {
    const bad = OPS.filter((e) => isNondiff(e) && (e.ns || []).includes('_internal') && NONDIFF[e.name] !== OPTIM && NONDIFF[e.name] !== QUANTIZED)
      .map((e) => e.name);
    assert.deepStrictEqual(bad, []);
  });

  it('every other op with tensor arguments has a formula, a decomposition, or is refused', function () {
    const missing = OPS.filter((e) => !isNondiff(e) && !e.backward && !e.composite && tensorArgs(e).length > 0 && !REFUSED[e.name])
      .map((e) => e.name);
    assert.deepStrictEqual(missing, [], `no derivative: ${missing.join(', ')}`);
  });

  it('the internal backward ops have a formula for each floating tensor argument', function () {
    // integer/bool tensor arguments (indices, targets, masks) by name
    const INTEGER = new Set(['input:embeddingBackward', 'target:nllLossBackward', 'indices:maxPool2dBackward', 'mask:maskedSelectBackward',
      'targets:ctcLossForward']);
    // loss weights: the forward ops refuse gradients for them too (as PyTorch)
    const FIXED = new Set(['weight:nllLossBackward', 'weight:pointwiseLossBackward', 'posWeight:pointwiseLossBackward']);
    const gaps = [];
    for (const e of OPS.filter((o) => (o.ns || []).includes('_internal') && o.backward)) {
      for (const a of tensorArgs(e)) {
        const name = a.split(/\s+/)[1].split('=')[0];
        const key = `${name}:${e.name}`;
        if (!(name in e.backward) && !INTEGER.has(key) && !FIXED.has(key)) gaps.push(key);
      }
    }
    assert.deepStrictEqual(gaps, []);
  });

  it("no op with formulas names a tensor argument 'result' or 'grad' (the formula names shadow it)", function () {
    // 'grad' is allowed as the only tensor argument of an op linear in it (sliceBackward): there
    // the incoming gradient is what the formula means
    const bad = OPS.filter((e) => e.backward).filter((e) => {
      const names = tensorArgs(e).map((a) => a.split(/\s+/)[1].split('=')[0]);
      return names.some((n) => /^result\d*$/.test(n)) || (names.length > 1 && names.some((n) => /^grad\d*$/.test(n)));
    }).map((e) => e.name);
    assert.deepStrictEqual(bad, []);
  });

  it('the ops listed for a bool or integer output give one, without grad, on float inputs that require grad', function () {
    const a = kd.tensor([[0.5, -1, 2], [0, 3, -0.25]], { dtype: 'float64' }).requiresGrad_();
    const b = kd.tensor([0.5, 1, 2], { dtype: 'float64' }).requiresGrad_();
    const probes = {
      eq: () => kd.eq(a, b), ne: () => kd.ne(a, b), lt: () => kd.lt(a, b), le: () => kd.le(a, b),
      gt: () => kd.gt(a, b), ge: () => kd.ge(a, b), isclose: () => kd.isclose(a, b),
      logicalAnd: () => kd.logicalAnd(a, b), logicalOr: () => kd.logicalOr(a, b), logicalXor: () => kd.logicalXor(a, b),
      logicalNot: () => kd.logicalNot(a), isnan: () => kd.isnan(a), isinf: () => kd.isinf(a), isfinite: () => kd.isfinite(a),
      isposinf: () => kd.isposinf(a), isneginf: () => kd.isneginf(a), all: () => kd.all(a), any: () => kd.any(a),
      argmax: () => kd.argmax(a), argmin: () => kd.argmin(a, 1), argsort: () => kd.argsort(a),
      countNonzero: () => kd.countNonzero(a), nonzero: () => kd.nonzero(a),
      multinomial: () => kd.multinomial(a.abs(), 2),
      searchsorted: () => kd.searchsorted(b, a), bucketize: () => kd.bucketize(a, b), isin: () => kd.isin(a, b),
      linalgMatrixRank: () => kd.linalg.matrixRank(a),
    };
    for (const [name, reason] of Object.entries(NONDIFF)) {
      if (reason !== BOOL && reason !== INT) continue;
      if (!probes[name]) continue; // oneHot: integer input only
      const out = probes[name]();
      assert.ok(!['float16', 'bfloat16', 'float32', 'float64'].includes(out.dtype), `${name} gives ${out.dtype}`);
      assert.strictEqual(out.requiresGrad, false, name);
    }
    assert.strictEqual(Object.values(NONDIFF).filter((r) => r === BOOL || r === INT).length - 1, Object.keys(probes).length);
  });

  it('every op that is not nondiff has a derivative (asStrided, the last without a formula: AsStridedBackward0)', function () {
    const x = kd.tensor([1, 2, 3, 4], { dtype: 'float64' }).requiresGrad_();
    const y = kd.asStrided(x, [2], [2]);
    assert.equal(y.gradFn.name, 'AsStridedBackward0');
    y.sum().backward();
    assert.deepEqual(Array.from(x.grad.dataSync()), [1, 0, 1, 0]);
  });

  it('the former nondiff backward ops now propagate second derivatives (not zeros)', function () {
    const x = kd.tensor([[0.3, -1.2, 2.0], [0.7, 0.1, -0.4]], { dtype: 'float64' }).requiresGrad_();
    const cases = [
      (t) => kd.prod(t, 1).sum(),
      (t) => kd.cumprod(t.abs().add(0.5), 1).sum(),
      (t) => kd.nn.functional.layerNorm(t, [3]).pow(3).sum(),
      (t) => kd.nn.functional.smoothL1Loss(t, kd.zerosLike(t), { beta: 5 }),
      (t) => kd.nn.functional.binaryCrossEntropyWithLogits(t, kd.onesLike(t).mul(0.3)),
      (t) => kd.nn.functional.binaryCrossEntropy(t.sigmoid(), kd.onesLike(t).mul(0.3)),
    ];
    for (const f of cases) {
      const [g] = kd.autograd.grad([f(x)], [x], null, { createGraph: true });
      assert.ok(g.requiresGrad);
      const [h] = kd.autograd.grad([g.mul(g).sum()], [x]);
      assert.ok(h.abs().sum().item() > 1e-6, String(f));
    }
  });
});
