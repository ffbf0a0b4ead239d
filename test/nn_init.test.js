// nn_init.test.js - kd.nn.init against PyTorch 1.13 (test/fixtures/nn_init.json, written by
// tools/fixtures/nn_init.py): the deterministic initialisers (dirac_, eye_), calculateGain for every
// nonlinearity, fan in/out and the errors; the random ones (orthogonal_, sparse_, ...) by their
// structure and statistics, since kindling's generator is not PyTorch's.
'use strict';

const { kd, assert, fixture } = require('./helpers');

const init = kd.nn.init;
const F = fixture('nn_init');
const vals = (t) => Array.from(t.dataSync(), Number);
const isValueError = (spec) => (e) => e.code === 'KD_INVALID_ARGUMENT' && e.message === spec.message;

describe('nn.init (PyTorch fixtures)', function () {
  it('dirac_ with groups, for 3-5 dim weights', function () {
    for (const c of F.dirac) {
      const t = kd.empty(c.shape);
      assert.equal(init.dirac_(t, c.groups), t);
      assert.deepEqual(vals(t), c.data, `${c.shape} groups=${c.groups}`);
    }
  });

  it('eye_', function () {
    for (const c of F.eye) assert.deepEqual(vals(init.eye_(kd.empty(c.shape))), c.data, String(c.shape));
  });

  it('calculateGain for every nonlinearity; fan in and fan out', function () {
    for (const c of F.gain) {
      const got = init.calculateGain(c.nonlinearity, c.param);
      assert.ok(Math.abs(got - c.value) < 1e-15, `${c.nonlinearity} ${c.param}: ${got} vs ${c.value}`);
    }
    assert.equal(init.calculateGain('leakyRelu', 0.2), init.calculateGain('leaky_relu', 0.2));
    for (const c of F.fan) assert.deepEqual(init._calculateFanInAndFanOut(kd.empty(c.shape)), c.value, String(c.shape));
  });

  it('errors', function () {
    const E = F.errors;
    assert.throws(() => init.calculateGain('gelu'), isValueError(E.gain_unsupported));
    assert.throws(() => init.calculateGain('leaky_relu', true), /negative_slope true not a valid number/);
    assert.throws(() => init.orthogonal_(kd.empty(3)), isValueError(E.orthogonal_1d));
    assert.throws(() => init.sparse_(kd.empty(2, 2, 2), 0.1), isValueError(E.sparse_3d));
    assert.throws(() => init.dirac_(kd.empty(2, 2)), isValueError(E.dirac_2d));
    assert.throws(() => init.dirac_(kd.empty(3, 2, 2), 2), isValueError(E.dirac_groups));
    assert.throws(() => init.eye_(kd.empty(2, 2, 2)), isValueError(E.eye_3d));
    assert.throws(() => init.xavierUniform_(kd.empty(3)), isValueError(E.fan_1d));
    assert.throws(() => init.kaimingUniform_(kd.empty(2, 2), { mode: 'fan_avg' }), isValueError(E.kaiming_mode));
  });
});

describe('nn.init (structure and statistics)', function () {
  const gram = (m) => m.matmul(m.t());
  const nearIdentity = (g, scale, what) => {
    const n = g.shape[0];
    const a = g.arraySync();
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        const want = i === j ? scale : 0;
        assert.ok(Math.abs(a[i][j] - want) < 1e-4 * Math.max(1, scale), `${what}[${i}][${j}] = ${a[i][j]}`);
      }
    }
  };

  it('orthogonal_: orthonormal rows (wide) or columns (tall), times gain; any number of dims', function () {
    kd.manualSeed(0);
    const wide = init.orthogonal_(kd.empty(3, 7));
    nearIdentity(gram(wide), 1, 'W W^T');
    const tall = init.orthogonal_(kd.empty(7, 3), 2);
    nearIdentity(gram(tall.t()), 4, 'W^T W (gain 2)');
    const conv = init.orthogonal_(kd.empty(4, 2, 3, 3), { gain: 0.5 });
    nearIdentity(gram(conv.reshape(4, 18)), 0.25, 'conv weight');
    const d = init.orthogonal_(kd.empty(5, 5, { dtype: 'float64' }));
    nearIdentity(gram(d), 1, 'float64');
    assert.deepEqual(init.orthogonal_(kd.empty(0, 3)).shape, [0, 3]);
    // the values are random: two draws differ
    assert.notDeepEqual(vals(init.orthogonal_(kd.empty(3, 3))), vals(init.orthogonal_(kd.empty(3, 3))));
  });

  it('orthogonal_ of a parameter does not record autograd', function () {
    const p = new kd.nn.Parameter(kd.empty(4, 4));
    init.orthogonal_(p);
    assert.equal(p.gradFn, null);
    assert.ok(p.requiresGrad);
  });

  it('sparse_: ceil(sparsity * rows) zeros in each column, at different rows, the rest N(0, std^2)', function () {
    kd.manualSeed(1);
    const t = init.sparse_(kd.empty(200, 50), 0.1, 0.5);
    const zeros = t.eq(0).sum(0);
    assert.deepEqual(vals(zeros), new Array(50).fill(20));
    const rowsHit = t.eq(0).sum(1);
    assert.ok(vals(rowsHit).some((v) => v !== vals(rowsHit)[0]), 'rows vary between columns');
    const nz = t.flatten().index(t.flatten().ne(0));
    const std = Math.sqrt(vals(nz.pow(2).mean())[0]);
    assert.ok(Math.abs(std - 0.5) < 0.02, `std ${std}`);
    assert.equal(vals(init.sparse_(kd.empty(3, 4), 0.5).eq(0).sum(0)).join(), '2,2,2,2'); // ceil(1.5)
  });

  it('deprecated names without the underscore run the same function and warn once', function () {
    const warnings = [];
    const on = (w) => warnings.push(w);
    process.on('warning', on);
    try {
      const t = init.uniform(kd.empty(1000), 2, 3);
      const v = vals(t);
      assert.ok(v.every((x) => x >= 2 && x < 3));
      init.uniform(kd.empty(2));
      init.eye(kd.empty(2, 2));
      assert.deepEqual(vals(init.dirac(kd.empty(1, 1, 3))), [0, 1, 0]);
    } finally {
      return new Promise((resolve) => setImmediate(() => {
        process.off('warning', on);
        const msgs = warnings.map((w) => w.message);
        assert.equal(msgs.filter((m) => m === 'nn.init.uniform is now deprecated in favor of nn.init.uniform_.').length, 1);
        assert.ok(msgs.includes('nn.init.eye is now deprecated in favor of nn.init.eye_.'));
        resolve();
      }));
    }
  });
});

if (kd.cuda.isAvailable()) {
  describe('nn.init on CUDA', function () {
    it('orthogonal_, sparse_, dirac_, eye_ fill CUDA tensors', function () {
      kd.manualSeed(2);
      const w = init.orthogonal_(kd.empty(4, 6, { device: 'cuda' }));
      assert.equal(w.device, 'cuda:0');
      const g = w.matmul(w.t()).cpu();
      assert.ok(g.sub(kd.eye(4)).abs().max().item() < 1e-4);
      assert.deepEqual(vals(init.sparse_(kd.empty(4, 3, { device: 'cuda' }), 0.5).eq(0).sum(0).cpu()), [2, 2, 2]);
      const c = F.dirac[1];
      assert.deepEqual(vals(init.dirac_(kd.empty(c.shape, { device: 'cuda' }), c.groups).cpu()), c.data);
      assert.deepEqual(vals(init.eye_(kd.empty(2, 2, { device: 'cuda' })).cpu()), [1, 0, 0, 1]);
    });
  });
}
