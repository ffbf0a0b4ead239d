// distributions.test.js - kd.distributions.Categorical against PyTorch 1.13's values
// (test/fixtures/distributions.json, from tools/fixtures/distributions.py): normalised probs and
// logits, entropy, logProb and their gradient, in float64; sample shapes and frequencies; the
// argument checks; and kd.broadcastShapes / broadcastTensors / broadcastTo.
'use strict';

const { kd, assert } = require('./helpers');
const fx = require('./fixtures/distributions.json');

const { Categorical, Distribution } = kd.distributions;

function close(actual, expected, tol = 1e-12) {
  const a = [actual].flat(Infinity), e = [expected].flat(Infinity);
  assert.equal(a.length, e.length);
  a.forEach((x, i) => assert.ok(Math.abs(x - e[i]) <= tol * (1 + Math.abs(e[i])), `${x} vs ${e[i]} at ${i}`));
}

describe('kd.distributions.Categorical', function () {
  for (const c of fx.cases) {
    it(`${c.kind} [${kd.tensor(c.param).shape}]: probs, logits, entropy, logProb and gradients as PyTorch's`, function () {
      const p = kd.tensor(c.param, { dtype: 'float64', requiresGrad: true });
      const m = new Categorical({ [c.kind]: p });
      const v = kd.tensor(c.value);
      const lp = m.logProb(v);
      const ent = m.entropy();
      lp.sum().add(ent.sum()).backward();
      close(m.probs.tolist(), c.probs);
      close(m.logits.tolist(), c.logits);
      close(lp.tolist(), c.logProb);
      close(ent.tolist(), c.entropy);
      close(p.grad.tolist(), c.grad, 1e-10);
      assert.deepEqual(m.batchShape, c.batchShape);
      assert.deepEqual(m.sample([5]).shape, c.sampleShape);
    });
  }

  it('samples int64 values with the given probabilities', function () {
    kd.manualSeed(0);
    const m = new Categorical(kd.tensor([0.1, 0.6, 0.3]));
    const s = m.sample([20000]);
    assert.equal(s.dtype, 'int64');
    const counts = [0, 1, 2].map((k) => s.eq(k).sum().item() / 20000);
    close(counts, [0.1, 0.6, 0.3], 0.03);
    assert.deepEqual(m.sample().shape, []);
    assert.equal(m.mode.item(), 1);
    assert.deepEqual(m.enumerateSupport().tolist(), [0, 1, 2]);
  });

  it('the arguments are checked as PyTorch checks them', function () {
    assert.throws(() => new Categorical(), { code: 'KD_INVALID_ARGUMENT', message: 'Either `probs` or `logits` must be specified, but not both.' });
    assert.throws(() => new Categorical({ probs: kd.ones(2), logits: kd.ones(2) }), { code: 'KD_INVALID_ARGUMENT' });
    assert.throws(() => new Categorical(kd.tensor(1)), { message: '`probs` parameter must be at least one-dimensional.' });
    assert.throws(() => new Categorical(kd.tensor([-1, 2])), { code: 'KD_INVALID_ARGUMENT', message: /to satisfy the constraint Simplex\(\)/ });
    assert.throws(() => new Categorical({ logits: kd.tensor([NaN, 1]) }), { code: 'KD_INVALID_ARGUMENT', message: /constraint IndependentConstraint\(Real\(\), 1\)/ });
    const m = new Categorical(kd.tensor([0.5, 0.5]));
    assert.throws(() => m.logProb(kd.tensor(2)), { code: 'KD_INVALID_ARGUMENT', message: /to be within the support \(IntegerInterval\(lower_bound=0, upper_bound=1\)\)/ });
    assert.throws(() => m.logProb(kd.tensor(0.5)), { code: 'KD_INVALID_ARGUMENT' });
    assert.doesNotThrow(() => new Categorical(kd.tensor([-1, 2]), undefined, false));
    Distribution.setDefaultValidateArgs(false);
    try { assert.doesNotThrow(() => new Categorical(kd.tensor([-1, 2]))); } finally { Distribution.setDefaultValidateArgs(true); }
    assert.throws(() => new Categorical([0.5, 0.5]), { code: 'KD_INVALID_TYPE' });
  });
});

describe('kd.broadcastShapes / broadcastTensors / broadcastTo', function () {
  it('broadcastShapes gives PyTorch\'s shapes', function () {
    for (const c of fx.broadcastShapes) assert.deepEqual(kd.broadcastShapes(...c.shapes), c.out);
    assert.throws(() => kd.broadcastShapes([2], [3]), { code: 'KD_SHAPE_MISMATCH', message: 'Shape mismatch: objects cannot be broadcast to a single shape' });
  });

  it('broadcastTensors and broadcastTo expand (views)', function () {
    const a = kd.tensor([[1], [2]]);
    const b = kd.tensor([10, 20, 30]);
    const [x, y] = kd.broadcastTensors(a, b);
    assert.deepEqual(x.tolist(), [[1, 1, 1], [2, 2, 2]]);
    assert.deepEqual(y.tolist(), [[10, 20, 30], [10, 20, 30]]);
    assert.deepEqual(kd.broadcastTensors([a, b]).map((t) => t.shape), [[2, 3], [2, 3]]);
    assert.deepEqual(b.broadcastTo([2, 3]).stride(), [0, 1]);
    assert.deepEqual(kd.broadcastTo(b, [2, 3]).shape, [2, 3]);
    assert.throws(() => kd.broadcastTensors(kd.ones(2), kd.ones(3)), { code: 'KD_SHAPE_MISMATCH', message: 'The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0' });
  });
});
