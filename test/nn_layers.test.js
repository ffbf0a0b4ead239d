// nn_layers.test.js - the activation, dropout, loss, distance, shuffle and EmbeddingBag modules of
// lib/nn/ beyond the first set. Parity with PyTorch 1.13 (test/fixtures/nn_layers.json, written by
// tools/fixtures/nn_layers.py: outputs, parameter and input gradients) on the CPU and, where a
// GPU or the emulated one is there, on it; then what fixtures cannot pin: random masks and slopes
// (dropouts in training, RReLU, gumbelSoftmax), in-place forms, extraRepr, parameters and
// PyTorch's constructor errors.
'use strict';

const { kd, assert, values, expectKdError } = require('./helpers');
const { moduleParityTests } = require('./module_parity');

const nn = kd.nn;
const F = nn.functional;

moduleParityTests('nn_layers', 'kd.nn layers vs PyTorch (outputs, parameter and input gradients)');
if (kd.cuda.isAvailable()) moduleParityTests('nn_layers', 'kd.nn layers vs PyTorch on cuda', 'cuda');

describe('kd.nn layers: repr as PyTorch prints it', function () {
  const cases = [
    [() => new nn.ELU(), 'ELU(alpha=1.0)'], [() => new nn.ELU(0.5, true), 'ELU(alpha=0.5, inplace=True)'],
    [() => new nn.CELU(2.0), 'CELU(alpha=2.0)'], [() => new nn.SELU(true), 'SELU(inplace=True)'], [() => new nn.GLU(), 'GLU(dim=-1)'],
    [() => new nn.Hardshrink(), 'Hardshrink(0.5)'], [() => new nn.Softshrink(0.3), 'Softshrink(0.3)'],
    [() => new nn.Hardtanh(-2, 2), 'Hardtanh(min_val=-2.0, max_val=2.0)'], [() => new nn.ReLU6(), 'ReLU6()'],
    [() => new nn.ReLU6(true), 'ReLU6(inplace=True)'], [() => new nn.Softplus(), 'Softplus(beta=1, threshold=20)'],
    [() => new nn.Threshold(0.1, 20), 'Threshold(threshold=0.1, value=20.0)'],
    [() => new nn.RReLU(), 'RReLU(lower=0.125, upper=0.3333333333333333)'],
    [() => new nn.RReLU(0.1, 0.3, true), 'RReLU(lower=0.1, upper=0.3, inplace=True)'],
    [() => new nn.Softmin(1), 'Softmin(dim=1)'], [() => new nn.Softmin(), 'Softmin(dim=None)'], [() => new nn.PReLU(3), 'PReLU(num_parameters=3)'],
    [() => new nn.Mish(), 'Mish()'], [() => new nn.Hardswish(), 'Hardswish()'], [() => new nn.Dropout1d(0.2), 'Dropout1d(p=0.2, inplace=False)'],
    [() => new nn.AlphaDropout(), 'AlphaDropout(p=0.5, inplace=False)'],
    [() => new nn.FeatureAlphaDropout(0.3, true), 'FeatureAlphaDropout(p=0.3, inplace=True)'], [() => new nn.KLDivLoss(), 'KLDivLoss()'],
    [() => new nn.CTCLoss(), 'CTCLoss()'], [() => new nn.PixelShuffle(3), 'PixelShuffle(upscale_factor=3)'],
    [() => new nn.PixelUnshuffle(2), 'PixelUnshuffle(downscale_factor=2)'],
    [() => new nn.EmbeddingBag(5, 3, { mode: 'sum', paddingIdx: 1 }), 'EmbeddingBag(5, 3, mode=sum, padding_idx=1)'],
    [() => new nn.PairwiseDistance(), 'PairwiseDistance()'], [() => new nn.Softmax2d(), 'Softmax2d()'], [() => new nn.Tanhshrink(), 'Tanhshrink()'],
  ];
  for (const [make, want] of cases) it(want, function () { assert.equal(String(make()), want); });
  it('AdaptiveLogSoftmaxWithLoss shows its head and tails', function () {
    const s = String(new nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6]));
    assert.match(s, /\(head\): Linear\(in_features=8, out_features=5, bias=False\)/);
    assert.match(s, /\(1\): Linear\(in_features=2, out_features=3, bias=False\)/);
  });
});

describe('kd.nn dropouts in training', function () {
  beforeEach(function () { kd.manualSeed(7); });
  const scale = (p) => 1 / (1 - p);

  it('Dropout1d/2d/3d zero whole channels and scale the rest by 1/(1-p), at rate p', function () {
    for (const [C, shape] of [[nn.Dropout1d, [40, 50, 3]], [nn.Dropout2d, [40, 50, 2, 2]], [nn.Dropout3d, [40, 50, 2, 1, 2]]]) {
      const m = new C(0.3);
      const y = m(kd.ones(shape));
      const per = shape.slice(2).reduce((a, b) => a * b, 1);
      const v = values(y);
      let zeros = 0;
      for (let ch = 0; ch < 40 * 50; ch++) {
        const slice = v.slice(ch * per, (ch + 1) * per);
        assert.ok(slice.every((x) => x === slice[0]), `${C.name}: channel ${ch} is not one value`);
        assert.ok(slice[0] === 0 || Math.abs(slice[0] - scale(0.3)) < 1e-6);
        if (slice[0] === 0) zeros++;
      }
      assert.ok(Math.abs(zeros / 2000 - 0.3) < 0.05, `${C.name}: dropped ${zeros / 2000}`);
      m.eval();
      assert.ok(values(m(kd.ones(shape))).every((v) => v === 1), 'eval is the identity');
    }
  });

  it('dropout1d takes unbatched (C, L) input; dropout2d reads 3-D input as (N, C, L)', function () {
    const y = F.dropout1d(kd.ones([200, 4]), 0.5);
    assert.deepEqual(y.shape, [200, 4]);
    const rows = y.arraySync();
    assert.ok(rows.every((r) => r.every((x) => x === r[0])));
    const z = F.dropout2d(kd.ones([3, 100, 4]), 0.5).arraySync();
    assert.ok(z.every((n) => n.every((r) => r.every((x) => x === r[0]))));
  });

  it('the gradient is the mask', function () {
    const x = kd.ones([30, 20, 2]).requiresGrad_();
    const y = F.dropout1d(x, 0.4);
    y.sum().backward();
    assert.deepEqual(values(x.grad), values(y));
  });

  it('inplace writes into the input and returns it', function () {
    const x = kd.ones([50, 10, 2]);
    const y = F.dropout2d(x, 0.5, true, true);
    assert.equal(y, x);
    assert.ok(values(x).some((v) => v === 0) && values(x).some((v) => v === 2));
    const u = kd.ones([10, 3]);
    assert.equal(F.dropout1d(u, 0.5, true, true), u);
    assert.ok(values(u).every((v) => v === 0 || v === 2));
    const w = kd.ones([100]);
    assert.equal(F.dropout(w, 0.5, true, true), w);
    assert.ok(values(w).some((v) => v === 0));
  });

  it('AlphaDropout keeps zero mean and unit variance and maps dropped values to a fixed point', function () {
    const x = kd.randn([200000], { dtype: 'float64' });
    const y = F.alphaDropout(x, 0.2, true);
    const mean = y.mean().item();
    const std = y.std().item();
    assert.ok(Math.abs(mean) < 0.02 && Math.abs(std - 1) < 0.02, `mean ${mean}, std ${std}`);
    const alpha = 1.7580993408473766;
    const a = 1 / Math.sqrt((alpha * alpha * 0.2 + 1) * 0.8);
    const dropped = -alpha * a + alpha * a * 0.2; // a * (-alpha) + b with the mask at 0
    const n = values(y.sub(dropped).abs().lt(1e-9)).filter(Boolean).length;
    assert.ok(Math.abs(n / 200000 - 0.2) < 0.01);
    assert.equal(F.alphaDropout(x, 0.2), x, 'training defaults to false');
  });

  it('FeatureAlphaDropout applies one affine map per channel', function () {
    const x = kd.zeros([30, 40, 3]);
    const y = new nn.FeatureAlphaDropout(0.5)(x).arraySync();
    assert.ok(y.every((n) => n.every((r) => r.every((v) => v === r[0]))));
    const vals = new Set(y.flat(2).map((v) => v.toFixed(6)));
    assert.equal(vals.size, 2);
  });

  it('p = 1 zeroes everything; p outside [0, 1] and ranks dropout1d does not take are errors', function () {
    assert.ok(values(F.dropout3d(kd.ones([2, 2, 1, 1, 1]), 1.0)).every((v) => v === 0));
    expectKdError(() => F.dropout1d(kd.ones([2, 3]), 1.5), 'KD_INVALID_ARGUMENT');
    expectKdError(() => new nn.Dropout2d(-0.1), 'KD_INVALID_ARGUMENT');
    expectKdError(() => new nn.AlphaDropout(2), 'KD_INVALID_ARGUMENT');
    const e = expectKdError(() => F.dropout1d(kd.ones([2, 3, 4, 5]), 0.5), 'KD_SHAPE_MISMATCH');
    assert.match(e.message, /Expected 2D or 3D input, but received a 4D input/);
    expectKdError(() => F.featureAlphaDropout(kd.ones([4]), 0.5, true), 'KD_SHAPE_MISMATCH');
  });
});

describe('kd.nn random activations', function () {
  beforeEach(function () { kd.manualSeed(3); });

  it('RReLU in training draws one slope in [lower, upper] per negative element; the gradient is that slope', function () {
    const m = new nn.RReLU(0.1, 0.3);
    const x = kd.linspace(-2, 2, 4000).requiresGrad_();
    const y = m(x);
    y.sum().backward();
    const xs = values(x);
    const ys = values(y);
    const gs = values(x.grad);
    const slopes = new Set();
    xs.forEach((v, i) => {
      if (v > 0) { assert.equal(ys[i], v); assert.equal(gs[i], 1); return; }
      if (v === 0) return;
      const s = ys[i] / v;
      assert.ok(s >= 0.1 - 1e-6 && s <= 0.3 + 1e-6, `slope ${s}`);
      assert.ok(Math.abs(gs[i] - s) < 1e-5);
      slopes.add(s.toFixed(5));
    });
    assert.ok(slopes.size > 1000, 'slopes are drawn per element');
    m.eval();
    assert.ok(Math.abs(m(kd.tensor([-1], { dtype: 'float32' })).item() + 0.2) < 1e-7, 'eval uses (lower + upper) / 2');
  });

  it('gumbelSoftmax samples are distributions; hard ones are one-hot with the soft gradient', function () {
    const logits = kd.tensor([[1, 2, 3], [0, 0, 5]], { requiresGrad: true });
    const y = F.gumbelSoftmax(logits, 0.5);
    values(y.sum(-1)).forEach((s) => assert.ok(Math.abs(s - 1) < 1e-6));
    const h = F.gumbelSoftmax(logits, { tau: 1, hard: true });
    h.arraySync().forEach((r) => { assert.equal(r.filter((v) => v === 1).length, 1); assert.equal(r.filter((v) => v === 0).length, 2); });
    h.mul(kd.tensor([[1, 2, 3], [4, 5, 6]])).sum().backward();
    assert.ok(values(logits.grad).some((g) => g !== 0));
    // the class frequencies follow softmax(logits)
    const draws = F.gumbelSoftmax(kd.tensor([0, Math.log(3)]).expand([20000, 2]), { hard: true }).mean(0);
    assert.ok(Math.abs(draws.arraySync()[1] - 0.75) < 0.02);
  });
});

describe('kd.nn.functional in-place activations', function () {
  const base = () => kd.tensor([-2, -0.5, 0.25, 3]);
  for (const [name, args, inplaceName] of [['elu', [0.5], 'elu_'], ['relu', [], 'relu_'], ['leakyRelu', [0.2], 'leakyRelu_'],
    ['hardtanh', [-1, 1], 'hardtanh_'], ['celu', [1.5], 'celu_'], ['threshold', [0, 9], 'threshold_'], ['selu', [], 'selu_'],
    ['rrelu', [0.1, 0.3, false], 'rrelu_'], ['relu6', [], null], ['silu', [], null], ['hardswish', [], null]]) {
    it(`${name}(..., inplace) and ${inplaceName || name} write into the input`, function () {
      const expect = values(F[name](base(), ...args));
      const x = base();
      assert.equal(F[name](x, ...args, true), x);
      assert.deepEqual(values(x), expect);
      if (inplaceName) {
        const z = base();
        assert.equal(F[inplaceName](z, ...args), z);
        assert.deepEqual(values(z), expect);
      }
    });
  }
  it('modules pass inplace on', function () {
    const x = base();
    assert.equal(new nn.Hardtanh(-1, 1, true)(x), x);
    assert.deepEqual(values(x), [-1, -0.5, 0.25, 1]);
  });
});

describe('kd.nn layer parameters and errors', function () {
  it('PReLU holds numParameters slopes, filled with init, in the dtype asked for', function () {
    const m = new nn.PReLU(3, 0.1, { dtype: 'float64' });
    assert.deepEqual(m.namedParameters().map((e) => e[0]), ['weight']);
    assert.equal(m.weight.dtype, 'float64');
    assert.deepEqual(values(m.weight).map((v) => +v.toFixed(6)), [0.1, 0.1, 0.1]);
    expectKdError(() => m(kd.ones([2, 4], { dtype: 'float64' })), 'KD_SHAPE_MISMATCH');
  });

  it('constructor checks follow PyTorch', function () {
    assert.throws(() => new nn.Hardtanh(1, 0), kd.KindlingError);
    expectKdError(() => new nn.MultiMarginLoss(3), 'KD_INVALID_ARGUMENT');
    expectKdError(() => new nn.MultiMarginLoss(1, 1, kd.ones([2, 2])), 'KD_INVALID_ARGUMENT');
    expectKdError(() => new nn.TripletMarginWithDistanceLoss({ margin: 0 }), 'KD_INVALID_ARGUMENT');
    expectKdError(() => new nn.HuberLoss('avg'), 'KD_INVALID_ARGUMENT');
    expectKdError(() => new nn.KLDivLoss({ reduction: 'avg' }), 'KD_INVALID_ARGUMENT');
    assert.equal(new nn.KLDivLoss({ reduction: 'batchmean' }).reduction, 'batchmean');
    assert.equal(new nn.SoftMarginLoss(false).reduction, 'sum', 'legacy sizeAverage=false');
    assert.equal(new nn.SoftMarginLoss(null, false).reduction, 'none', 'legacy reduce=false');
    expectKdError(() => new nn.AdaptiveLogSoftmaxWithLoss(4, 10, [5, 3]), 'KD_INVALID_ARGUMENT');
    expectKdError(() => new nn.AdaptiveLogSoftmaxWithLoss(4, 10, [3, 10]), 'KD_INVALID_ARGUMENT');
    expectKdError(() => new nn.EmbeddingBag(4, 2, { mode: 'min' }), 'KD_INVALID_ARGUMENT');
    expectKdError(() => new nn.EmbeddingBag(4, 2, { paddingIdx: 4 }), 'KD_INVALID_ARGUMENT');
    assert.throws(() => new nn.ELU({ alhpa: 1 }), TypeError);
    expectKdError(() => new nn.Softmax2d()(kd.ones([2, 2])), 'KD_SHAPE_MISMATCH');
  });

  it('TripletMarginWithDistanceLoss takes any distance function', function () {
    const cos = (a, b) => kd.tensor(1).sub(F.cosineSimilarity(a, b));
    const [a, p, n] = [kd.randn([4, 3]), kd.randn([4, 3]), kd.randn([4, 3])];
    const got = new nn.TripletMarginWithDistanceLoss({ distanceFunction: cos, margin: 0.5 })(a, p, n).item();
    const want = cos(a, p).sub(cos(a, n)).add(0.5).clampMin(0).mean().item();
    assert.ok(Math.abs(got - want) < 1e-6);
  });
});

describe('kd.nn.AdaptiveLogSoftmaxWithLoss', function () {
  beforeEach(function () { kd.manualSeed(11); });
  it('logProb is a distribution whose target entries are the forward output; predict is its argmax', function () {
    const m = new nn.AdaptiveLogSoftmaxWithLoss(6, 10, [2, 5], { divValue: 2 });
    const x = kd.randn([7, 6]);
    const t = kd.tensor([0, 1, 2, 4, 5, 9, 7], { dtype: 'int64' });
    const lp = m.logProb(x);
    assert.deepEqual(lp.shape, [7, 10]);
    values(lp.exp().sum(1)).forEach((s) => assert.ok(Math.abs(s - 1) < 1e-5));
    const r = m(x, t);
    assert.equal(r.output, r[0]);
    assert.equal(r.loss, r[1]);
    const picked = values(lp.gather(1, t.unsqueeze(1)).squeeze(1));
    values(r.output).forEach((v, i) => assert.ok(Math.abs(v - picked[i]) < 1e-5));
    assert.ok(Math.abs(r.loss.item() + r.output.mean().item()) < 1e-6);
    assert.deepEqual(values(m.predict(x)), values(lp.argmax(1)));
    // rows whose head argmax is a cluster, and rows that are not
    const big = kd.randn([64, 6]).mul(3);
    assert.deepEqual(values(m.predict(big)), values(m.logProb(big).argmax(1)));
  });
  it('targets out of range and mismatched shapes are errors', function () {
    const m = new nn.AdaptiveLogSoftmaxWithLoss(4, 6, [2]);
    expectKdError(() => m(kd.randn([2, 4]), kd.tensor([0, 6], { dtype: 'int64' })), 'KD_INDEX_OUT_OF_RANGE');
    expectKdError(() => m(kd.randn([3, 4]), kd.tensor([0, 1], { dtype: 'int64' })), 'KD_SHAPE_MISMATCH');
    expectKdError(() => m(kd.randn([3, 4]), kd.zeros([3, 1], { dtype: 'int64' })), 'KD_NOT_SUPPORTED');
  });
});

describe('kd.nn.EmbeddingBag', function () {
  it('fromPretrained keeps the weights (frozen by default) and bags by offsets, with perSampleWeights', function () {
    const w = kd.tensor([[1, 2], [3, 4], [5, 6]], { dtype: 'float32' });
    const m = nn.EmbeddingBag.fromPretrained(w, { mode: 'sum' });
    assert.equal(m.weight.requiresGrad, false);
    const y = m(kd.tensor([0, 2, 1, 1], { dtype: 'int64' }), kd.tensor([0, 1], { dtype: 'int64' }), kd.tensor([2, 1, 1, 0.5]));
    assert.deepEqual(y.arraySync(), [[2, 4], [5 + 4.5, 6 + 6]]);
    assert.equal(nn.EmbeddingBag.fromPretrained(w, { freeze: false }).weight.requiresGrad, true);
    expectKdError(() => nn.EmbeddingBag.fromPretrained(kd.ones([3])), 'KD_SHAPE_MISMATCH');
  });
});

describe('kd.nn.functional.ctcLoss', function () {
  it('matches finite differences through logSoftmax (float64)', function () {
    kd.manualSeed(5);
    const logits = kd.randn([6, 2, 4], { dtype: 'float64' }).requiresGrad_();
    const targets = kd.tensor([[1, 2, 2], [3, 1, 0]], { dtype: 'int64' });
    for (const reduction of ['mean', 'sum', 'none']) {
      assert.ok(kd.autograd.gradcheck((z) => F.ctcLoss(z.logSoftmax(2), targets, [6, 5], [3, 2], { reduction }), [logits],
        { atol: 1e-6, rtol: 1e-4 }));
    }
  });
  it('an impossible alignment is an infinite loss with NaN gradients (PyTorch\'s); zeroInfinity makes both 0', function () {
    const lp = kd.randn([2, 1, 3]).logSoftmax(2).detach().requiresGrad_();
    const t = kd.tensor([[1, 1]], { dtype: 'int64' });
    const l = F.ctcLoss(lp, t, [2], [2], { reduction: 'sum' });
    assert.equal(l.item(), Infinity);
    l.backward();
    assert.ok(values(lp.grad).every(Number.isNaN));
    lp.grad = null;
    const z = F.ctcLoss(lp, t, [2], [2], { zeroInfinity: true });
    assert.equal(z.item(), 0);
    z.backward();
    assert.ok(values(lp.grad).every((v) => v === 0));
  });
  it('checks its arguments as PyTorch does', function () {
    const lp = kd.randn([4, 2, 3]).logSoftmax(2);
    const t = kd.tensor([[1, 2], [2, 1]], { dtype: 'int64' });
    expectKdError(() => F.ctcLoss(lp, t, [4, 4], [2, 2], 3), 'KD_INVALID_ARGUMENT');
    expectKdError(() => F.ctcLoss(lp, t, [5, 4], [2, 2]), 'KD_INVALID_ARGUMENT');
    expectKdError(() => F.ctcLoss(lp, t, [4, 4, 4], [2, 2]), 'KD_SHAPE_MISMATCH');
    expectKdError(() => F.ctcLoss(lp, t, [4, 4], [3, 2]), 'KD_SHAPE_MISMATCH');
    expectKdError(() => F.ctcLoss(lp, kd.tensor([[1, 7], [2, 1]], { dtype: 'int64' }), [4, 4], [2, 2]), 'KD_INDEX_OUT_OF_RANGE');
    expectKdError(() => F.ctcLoss(lp.to('float16'), t, [4, 4], [2, 2]));
    expectKdError(() => F.ctcLoss(lp, t, [4, 4], [2, 2], { reduction: 'avg' }), 'KD_INVALID_ARGUMENT');
    assert.throws(() => F.ctcLoss(lp, t, [4.5, 4], [2, 2]), TypeError);
  });
  it('runs in float32 under CPU autocast (PyTorch\'s fp32 policy), and refuses bfloat16 outside it', function () {
    const lp = kd.randn([5, 2, 4]).logSoftmax(2).to('bfloat16');
    const t = kd.tensor([[1, 2], [3, 3]], { dtype: 'int64' });
    const r = kd.autocast({ deviceType: 'cpu' }, () => F.ctcLoss(lp, t, [5, 5], [2, 2]));
    assert.equal(r.dtype, 'float32');
    assert.ok(Math.abs(r.item() - F.ctcLoss(lp.to('float32'), t, [5, 5], [2, 2]).item()) < 1e-5);
    expectKdError(() => F.ctcLoss(lp, t, [5, 5], [2, 2]), 'KD_DTYPE_MISMATCH');
  });
  it('takes long inputs (the recursion is one native op, not one op per step)', function () {
    const T = 400;
    const lp = kd.randn([T, 3, 20], { dtype: 'float64' }).logSoftmax(2);
    const t = kd.randint(1, 20, [3, 50]);
    const l = F.ctcLoss(lp, t, [T, T - 7, 300], [50, 40, 1], { reduction: 'none' });
    values(l).forEach((v) => assert.ok(Number.isFinite(v) && v > 0));
  });
  (kd.cuda.isAvailable() ? it : it.skip)('runs on the GPU with targets and lengths on the CPU', function () {
    const lp = kd.randn([5, 2, 4]).logSoftmax(2);
    const t = kd.tensor([[1, 2], [3, 3]], { dtype: 'int64' });
    const cpu = F.ctcLoss(lp, t, [5, 5], [2, 2]).item();
    const gpu = F.ctcLoss(lp.to('cuda'), t, kd.tensor([5, 5], { dtype: 'int64' }), [2, 2]);
    assert.equal(gpu.device, 'cuda:0');
    assert.ok(Math.abs(gpu.item() - cpu) < 1e-5);
  });
});

describe('kd.nn.functional names', function () {
  it('has every activation, loss, dropout, distance and shuffle function of torch.nn.functional 1.13', function () {
    const names = ['celu', 'celu_', 'elu', 'elu_', 'glu', 'gelu', 'hardshrink', 'hardsigmoid', 'hardswish', 'hardtanh', 'hardtanh_',
      'leakyRelu', 'leakyRelu_', 'logsigmoid', 'logSoftmax', 'mish', 'prelu', 'relu', 'relu_', 'relu6', 'rrelu', 'rrelu_', 'selu', 'selu_',
      'sigmoid', 'silu', 'softmax', 'softmin', 'softplus', 'softshrink', 'softsign', 'tanh', 'tanhshrink', 'threshold', 'threshold_',
      'gumbelSoftmax', 'normalize', 'dropout', 'dropout1d', 'dropout2d', 'dropout3d', 'alphaDropout', 'featureAlphaDropout',
      'binaryCrossEntropy', 'binaryCrossEntropyWithLogits', 'cosineEmbeddingLoss', 'crossEntropy', 'ctcLoss', 'gaussianNllLoss',
      'hingeEmbeddingLoss', 'huberLoss', 'klDiv', 'l1Loss', 'marginRankingLoss', 'mseLoss', 'multiMarginLoss', 'multilabelMarginLoss',
      'multilabelSoftMarginLoss', 'nllLoss', 'poissonNllLoss', 'smoothL1Loss', 'softMarginLoss', 'tripletMarginLoss',
      'tripletMarginWithDistanceLoss', 'cosineSimilarity', 'pairwiseDistance', 'pdist', 'pixelShuffle', 'pixelUnshuffle',
      'channelShuffle', 'nativeChannelShuffle', 'embedding', 'embeddingBag', 'oneHot'];
    assert.deepEqual(names.filter((n) => typeof F[n] !== 'function'), []);
  });
});
