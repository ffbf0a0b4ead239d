// nn_conv_pool.test.js - kd.nn convolution, pooling, padding, normalisation and upsampling modules
// beyond those of nn_modules.test.js: parity with PyTorch (test/fixtures/conv_pool_modules.json,
// written by tools/fixtures/conv_pool_modules.py), then call forms, errors, reprs and devices.
'use strict';

const { kd, assert, parityTests, values, expectKdError, assertMessageLike } = require('./helpers');
const { moduleParityTests } = require('./module_parity');

const nn = kd.nn;
const F = nn.functional;

moduleParityTests('conv_pool_modules', 'kd.nn conv/pool/pad/norm/upsampling modules vs PyTorch');
if (kd.cuda.isAvailable()) moduleParityTests('conv_pool_modules', 'kd.nn conv/pool/pad/norm/upsampling modules vs PyTorch on CUDA', 'cuda');

parityTests('conv_pool', 'nn.functional conv3d/convTranspose/fold/pool/norm composites (PyTorch fixtures)');

describe('kd.nn conv/pool/pad/norm modules: PyTorch errors', function () {
  // [what, fn, codes, PyTorch 1.13's message]
  const cases = [
    ['Conv3d groups', () => new nn.Conv3d(3, 4, 3, { groups: 2 }), 'KD_INVALID_ARGUMENT', 'in_channels must be divisible by groups'],
    ["Conv3d 'same' strided", () => new nn.Conv3d(2, 2, 3, { padding: 'same', stride: 2 }), 'KD_INVALID_ARGUMENT',
      "padding='same' is not supported for strided convolutions"],
    ['ConvTranspose1d reflect', () => new nn.ConvTranspose1d(2, 2, 3, { paddingMode: 'reflect' }), 'KD_INVALID_ARGUMENT',
      'Only "zeros" padding mode is supported for ConvTranspose1d'],
    ['ReflectionPad1d too large', () => new nn.ReflectionPad1d(3)(kd.randn(1, 1, 3)), 'KD_INVALID_ARGUMENT',
      'Argument #4: Padding size should be less than the corresponding input dimension, but got: padding (3, 3) at dimension 2 of input [1, 1, 3]'],
    ['ReflectionPad3d too large', () => new nn.ReflectionPad3d(2)(kd.randn(1, 1, 2, 3, 3)), 'KD_INVALID_ARGUMENT',
      'Argument #8: Padding size should be less than the corresponding input dimension, but got: padding (2, 2) at dimension 2 of input [1, 1, 2, 3, 3]'],
    ['InstanceNorm2d 2-D input', () => new nn.InstanceNorm2d(3)(kd.randn(3, 4)), 'KD_INVALID_ARGUMENT', 'expected 3D or 4D input (got 2D input)'],
    ['InstanceNorm3d 2-D input', () => new nn.InstanceNorm3d(3)(kd.randn(3, 4)), 'KD_INVALID_ARGUMENT', 'expected 4D or 5D input (got 2D input)'],
    ['FractionalMaxPool2d no size', () => new nn.FractionalMaxPool2d(2), 'KD_INVALID_ARGUMENT',
      'FractionalMaxPool2d requires specifying either an output size, or a pooling ratio'],
    ['FractionalMaxPool2d ratio', () => new nn.FractionalMaxPool2d(2, { outputRatio: 1.5 }), 'KD_INVALID_ARGUMENT', 'output_ratio must be between 0 and 1 (got 1.5)'],
    ['MaxPool3d kernel 0', () => new nn.MaxPool3d(0)(kd.randn(1, 1, 3, 3, 3)), 'KD_INVALID_ARGUMENT', 'stride should not be zero'],
    ['MaxPool1d kernel 0', () => new nn.MaxPool1d(0)(kd.randn(1, 1, 3)), 'KD_INVALID_ARGUMENT', 'max_pool1d() kernel_size must be greater than zero, but got 0'],
    ['Upsample no size', () => new nn.Upsample()(kd.randn(1, 1, 3, 3)), 'KD_INVALID_ARGUMENT', 'either size or scale_factor should be defined'],
    ['BatchNorm3d 3-D input', () => new nn.BatchNorm3d(2)(kd.randn(2, 2, 3)), 'KD_SHAPE_MISMATCH', 'expected 5D input (got 3D input)'],
    ['ConvTranspose3d outputSize', () => new nn.ConvTranspose3d(2, 2, 3, { stride: 2 })(kd.randn(1, 2, 2, 2, 2), [9, 9, 9]), 'KD_INVALID_ARGUMENT',
      'requested an output size of [9, 9, 9], but valid sizes range from [5, 5, 5] to [6, 6, 6] (for an input of [2, 2, 2])'],
    ['MaxUnpool2d int32 indices', () => new nn.MaxUnpool2d(2)(kd.randn(1, 1, 2, 2), kd.zeros([1, 1, 2, 2], { dtype: 'int32' })), 'KD_DTYPE_MISMATCH',
      'elements in indices should be type int64 but got: Int'],
    ['AdaptiveMaxPool2d empty dim', () => new nn.AdaptiveMaxPool2d(2)(kd.randn(1, 1, 0, 3)), 'KD_SHAPE_MISMATCH',
      'adaptive_max_pool2d(): Expected input to have non-zero size for non-batch dimensions, but input has sizes [1, 1, 0, 3] with dimension 2 being empty'],
    ['Conv3d channels', () => new nn.Conv3d(2, 2, 3)(kd.randn(1, 2, 3, 3)), 'KD_SHAPE_MISMATCH',
      'Given groups=1, weight of size [2, 2, 3, 3, 3], expected input[1, 1, 2, 3, 3] to have 2 channels, but got 1 channels instead'],
    ['LocalResponseNorm 2-D', () => new nn.LocalResponseNorm(2)(kd.randn(2, 3)), 'KD_INVALID_ARGUMENT', 'Expected 3D or higher dimensionality input (got 2 dimensions)'],
    ['F.avgPool3d padding', () => F.avgPool3d(kd.randn(1, 1, 4, 4, 4), 2, null, 2), 'KD_INVALID_ARGUMENT',
      'pad should be at most half of kernel size, but got pad=2 and kernel_size=2'],
    ['F.fold output size 0', () => F.fold(kd.randn(1, 4, 1), [0, 2], 2), 'KD_INVALID_ARGUMENT',
      'output_size should be greater than zero, but got output_height: 0 output_width: 2'],
  ];
  for (const [what, fn, code, message] of cases) {
    it(what, function () {
      const err = expectKdError(fn, code, what);
      assertMessageLike(err.message, message, what);
    });
  }
  it('reprs', function () {
    assert.equal(String(new nn.MaxPool3d(2)), 'MaxPool3d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)');
    assert.equal(String(new nn.AvgPool1d(3)), 'AvgPool1d(kernel_size=(3,), stride=(3,), padding=(0,))');
    assert.equal(String(new nn.LPPool2d(2, 3)), 'LPPool2d(norm_type=2, kernel_size=3, stride=None, ceil_mode=False)');
    assert.equal(String(new nn.MaxUnpool2d(2)), 'MaxUnpool2d(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0))');
    assert.equal(String(new nn.AdaptiveMaxPool3d([2, null, 3])), 'AdaptiveMaxPool3d(output_size=(2, None, 3))');
    assert.equal(String(new nn.Fold(3, 2)), 'Fold(output_size=3, kernel_size=2, dilation=1, padding=0, stride=1)');
    assert.equal(String(new nn.Unfold(2)), 'Unfold(kernel_size=2, dilation=1, padding=0, stride=1)');
    assert.equal(String(new nn.Conv3d(2, 3, 3, { paddingMode: 'circular', padding: 1 })),
      'Conv3d(2, 3, kernel_size=(3, 3, 3), stride=(1, 1, 1), padding=(1, 1, 1), padding_mode=circular)');
    assert.equal(String(new nn.ConvTranspose1d(2, 3, 3)), 'ConvTranspose1d(2, 3, kernel_size=(3,), stride=(1,))');
    assert.equal(String(new nn.InstanceNorm3d(4)), 'InstanceNorm3d(4, eps=1e-05, momentum=0.1, affine=False, track_running_stats=False)');
    assert.equal(String(new nn.LocalResponseNorm(2)), 'LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)');
    assert.equal(String(new nn.Upsample({ size: [3, 4] })), 'Upsample(size=(3, 4), mode=nearest)');
    assert.equal(String(new nn.UpsamplingBilinear2d({ scaleFactor: 2 })), 'UpsamplingBilinear2d(scale_factor=2.0, mode=bilinear)');
    assert.equal(String(new nn.ReflectionPad2d(2)), 'ReflectionPad2d((2, 2, 2, 2))');
    assert.equal(String(new nn.ConstantPad1d(2, 3.5)), 'ConstantPad1d(padding=(2, 2), value=3.5)');
  });
});

describe('kd.nn conv/pool/pad/norm: call forms and state dicts', function () {
  it('positional and options forms agree', function () {
    const x = kd.randn(1, 2, 5, 6, 4);
    const w = kd.randn(3, 2, 2, 3, 2);
    assert.deepEqual(values(F.conv3d(x, w, null, 2, 1)), values(F.conv3d(x, w, { stride: 2, padding: 1 })));
    assert.deepEqual(values(F.maxPool3d(x, 2, null, 1)), values(F.maxPool3d(x, { kernelSize: 2, padding: 1 })));
    const [v, i] = F.maxPool3d(x, 2, { returnIndices: true });
    assert.deepEqual(F.maxPool3d(x, 2, { returnIndices: true }).indices.shape, i.shape);
    assert.ok(F.maxPool3dWithIndices(x, 2).values instanceof kd.Tensor);
    assert.deepEqual(values(F.maxUnpool3d(v, i, 2, { outputSize: [5, 6, 4] })), values(F.maxUnpool3d(v, i, 2, null, 0, [5, 6, 4])));
  });
  it('state dict names are PyTorch\'s', function () {
    assert.deepEqual(Object.keys(new nn.InstanceNorm2d(3, { affine: true, trackRunningStats: true }).stateDict()),
      ['weight', 'bias', 'running_mean', 'running_var', 'num_batches_tracked']);
    assert.deepEqual(Object.keys(new nn.InstanceNorm1d(3).stateDict()), []);
    assert.deepEqual(Object.keys(new nn.Conv3d(2, 3, 3).stateDict()), ['weight', 'bias']);
    assert.deepEqual(new nn.ConvTranspose3d(4, 6, [1, 2, 3], { groups: 2 }).weight.shape, [4, 3, 1, 2, 3]);
    assert.deepEqual(Object.keys(new nn.FractionalMaxPool2d(2, { outputSize: 3, _randomSamples: kd.rand(1, 1, 2) }).stateDict()), ['_random_samples']);
  });
  it('maxPool3d agrees with maxPool2d on a depth of one', function () {
    const x = kd.randn(2, 3, 1, 7, 6);
    const [a, ai] = F.maxPool3d(x, [1, 3, 2], [1, 2, 2], [0, 1, 1], 1, true, true);
    const [b, bi] = F.maxPool2d(x.squeeze(2), [3, 2], [2, 2], [1, 1], 1, true, true);
    assert.deepEqual(values(a.squeeze(2)), values(b));
    assert.deepEqual(values(ai.squeeze(2)), values(bi));
  });
  it('fold is the adjoint of unfold', function () {
    const x = kd.randn(2, 3, 7, 6, { dtype: 'float64' });
    const y = kd.randn(2, 3 * 6, 12, { dtype: 'float64' });
    const opts = { kernelSize: [2, 3], dilation: [2, 1], padding: 1, stride: 2 };
    const lhs = F.unfold(x, opts).mul(y).sum().item();
    const rhs = x.mul(F.fold(y, [7, 6], opts)).sum().item();
    assert.ok(Math.abs(lhs - rhs) < 1e-9 * Math.max(1, Math.abs(lhs)), `${lhs} vs ${rhs}`);
  });
  it('conv3d on a float64 random case matches a direct sum', function () {
    const x = kd.randn(1, 2, 4, 3, 5, { dtype: 'float64' });
    const w = kd.randn(2, 1, 2, 2, 3, { dtype: 'float64' });
    const y = values(F.conv3d(x, w, null, [1, 1, 2], [1, 0, 1], [2, 1, 1], 2));
    const X = values(x), W = values(w);
    const [D, H, Wd] = [4, 3, 5];
    const od = Math.floor((4 + 2 - 2 * 1 - 1) / 1) + 1, oh = 2, ow = Math.floor((5 + 2 - 3) / 2) + 1;
    let q = 0, worst = 0;
    for (let o = 0; o < 2; o++) {
      for (let a = 0; a < od; a++) {
        for (let b = 0; b < oh; b++) {
          for (let c = 0; c < ow; c++) {
            let s = 0;
            for (let i = 0; i < 2; i++) {
              for (let j = 0; j < 2; j++) {
                for (let k = 0; k < 3; k++) {
                  const d = a - 1 + 2 * i, h = b + j, ww = 2 * c - 1 + k;
                  if (d >= 0 && d < D && h < H && ww >= 0 && ww < Wd) s += X[((o * D + d) * H + h) * Wd + ww] * W[((o * 2 + i) * 2 + j) * 3 + k];
                }
              }
            }
            worst = Math.max(worst, Math.abs(s - y[q++]));
          }
        }
      }
    }
    assert.equal(q, y.length);
    assert.ok(worst < 1e-12, `max error ${worst}`);
  });
});

describe('conv2d CPU paths: column blocks and depthwise loops', function () {
  this.timeout(60000);
  const maxDiff = (a, b) => { const x = values(a), y = values(b); let m = 0; x.forEach((v, i) => { m = Math.max(m, Math.abs(v - y[i])); }); return m; };
  it('an image whose columns span several blocks matches unfold + matmul (forward and gradients)', function () {
    // K * ow * 4 bytes = 64 * 9 * 600 * 4 > 1 MB: one output row per column block
    const x = kd.randn(2, 64, 5, 600, { dtype: 'float64' }).requiresGrad_();
    const w = kd.randn(3, 64, 3, 3, { dtype: 'float64' }).requiresGrad_();
    const g = kd.randn(2, 3, 3, 300, { dtype: 'float64' });
    const y = F.conv2d(x, w, null, [1, 2], [0, 1], [1, 1]);
    const [gx, gw] = kd.autograd.grad([y], [x, w], [g]);
    const cols = F.unfold(x, [3, 3], 1, [0, 1], [1, 2]);                // (2, 576, 900)
    const ref = w.view(3, -1).matmul(cols).view(2, 3, 3, 300);
    const [rx, rw] = kd.autograd.grad([ref], [x, w], [g]);
    assert.ok(maxDiff(y, ref) < 1e-10);
    assert.ok(maxDiff(gx, rx) < 1e-10);
    assert.ok(maxDiff(gw, rw) < 1e-10);
  });
  for (const [stride, padding, dilation] of [[1, 1, 1], [2, 0, 1], [[2, 1], [2, 1], [2, 3]]]) {
    it(`depthwise stride ${stride} padding ${padding} dilation ${dilation} matches a block-diagonal dense convolution`, function () {
      const c = 4;
      const x = kd.randn(3, c, 9, 11, { dtype: 'float64' }).requiresGrad_();
      const w = kd.randn(c, 1, 3, 2, { dtype: 'float64' }).requiresGrad_();
      const b = kd.randn(c, { dtype: 'float64' }).requiresGrad_();
      const y = F.conv2d(x, w, b, stride, padding, dilation, c);
      const g = kd.randnLike(y);
      const [gx, gw, gb] = kd.autograd.grad([y], [x, w, b], [g]);
      const mask = kd.eye(c, { dtype: 'float64' }).view(c, c, 1, 1);
      const dense = w.expand(c, c, 3, 2).mul(mask);                   // zero off the diagonal
      const ref = F.conv2d(x, dense, b, stride, padding, dilation, 1);
      const [rx, rw, rb] = kd.autograd.grad([ref], [x, w, b], [g]);
      assert.ok(maxDiff(y, ref) < 1e-10);
      assert.ok(maxDiff(gx, rx) < 1e-10);
      assert.ok(maxDiff(gw, rw) < 1e-10);
      assert.ok(maxDiff(gb, rb) < 1e-10);
    });
  }
  it('depthwise transposed convolution matches the dense one', function () {
    const c = 3;
    const x = kd.randn(2, c, 5, 4, { dtype: 'float64' });
    const w = kd.randn(c, 1, 3, 3, { dtype: 'float64' });
    const mask = kd.eye(c, { dtype: 'float64' }).view(c, c, 1, 1);
    const y = F.convTranspose2d(x, w, null, 2, 1, 1, c);
    const ref = F.convTranspose2d(x, w.expand(c, c, 3, 3).mul(mask), null, 2, 1, 1, 1);
    assert.ok(maxDiff(y, ref) < 1e-10);
  });
});

describe('float64 gradchecks of the composites', function () {
  this.timeout(120000);
  const r = (...s) => kd.randn(s, { dtype: 'float64' }).requiresGrad_();
  const cases = [
    ['conv3d stride, padding, dilation, groups', () => [r(1, 2, 4, 3, 4), r(2, 1, 2, 2, 2), r(2)],
      (x, w, b) => F.conv3d(x, w, b, [2, 1, 1], [1, 0, 1], [1, 2, 1], 2)],
    ['convTranspose3d stride, outputPadding', () => [r(1, 2, 2, 2, 3), r(2, 1, 2, 2, 2), r(1)],
      (x, w, b) => F.convTranspose3d(x, w, b, [2, 1, 2], [0, 1, 0], [1, 0, 1])],
    ['convTranspose1d groups', () => [r(2, 4, 3), r(4, 1, 3)], (x, w) => F.convTranspose1d(x, w, null, 2, 1, 1, 2)],
    ['fold / unfold', () => [r(1, 8, 6)], (x) => F.unfold(F.fold(x, [3, 4], 2), 2, { padding: 1 })],
    ['maxPool3d', () => [r(1, 2, 3, 4, 4)], (x) => F.maxPool3d(x, 2, 1, 1)],
    ['avgPool3d ceil, countIncludePad false', () => [r(1, 1, 3, 4, 5)], (x) => F.avgPool3d(x, 2, 2, 1, true, false)],
    ['adaptiveMaxPool3d', () => [r(1, 2, 3, 5, 4)], (x) => F.adaptiveMaxPool3d(x, [2, 3, 2])],
    ['adaptiveAvgPool3d', () => [r(1, 2, 3, 5, 4)], (x) => F.adaptiveAvgPool3d(x, [2, 3, 3])],
    ['fractionalMaxPool2d', () => [r(1, 2, 6, 7)], (x) => F.fractionalMaxPool2d(x, 2, [3, 4], { _randomSamples: kd.tensor([[[0.2, 0.7], [0.5, 0.1]]], { dtype: 'float64' }) })],
    ['maxUnpool2d', () => [r(1, 1, 2, 2)], (x) => F.maxUnpool2d(x, kd.tensor([[[[0, 3], [9, 14]]]], { dtype: 'int64' }), 2, { outputSize: [4, 4] })],
    ['instanceNorm weight bias', () => [r(2, 3, 5), r(3), r(3)], (x, w, b) => F.instanceNorm(x, null, null, w, b)],
    ['localResponseNorm', () => [r(2, 5, 3, 2)], (x) => F.localResponseNorm(x, 3, 0.5, 0.75, 2)],
  ];
  for (const [what, make, fn] of cases) {
    it(what, function () {
      assert.ok(kd.autograd.gradcheck(fn, make()));
    });
  }
});
