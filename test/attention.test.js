// attention.test.js - kd.nn.functional.scaledDotProductAttention and its fused kernels
// (kd._internal.sdpaFlash / sdpaFlashBackward, src/cpu/attention.c, cuda/ops_attention.cu):
// PyTorch's math composition as fixtures (test/fixtures/attention.json, values and gradients);
// large and long cases against the composition computed here in float64; finite differences
// (float64) for query, key, value and a float mask; fused dropout equal to the composition's
// nativeDropout for the seed, forward and backward; PyTorch 2's errors; the emulated GPU against the CPU.
'use strict';

const { kd, assert, expectKdError, parityTests } = require('./helpers');

const F = kd.nn.functional;

parityTests('attention');

/** The math composition (PyTorch 2's documented reference), with kindling ops. */
function reference(q, k, v, mask = null, causal = false, scale = null) {
  const E = q.shape[q.shape.length - 1];
  let a = q.matmul(k.transpose(-2, -1)).mul(scale == null ? 1 / Math.sqrt(E) : scale);
  const L = q.shape[q.shape.length - 2], S = k.shape[k.shape.length - 2];
  if (causal) a = a.maskedFill(kd.ones([L, S], { dtype: 'bool', device: q.device }).tril().logicalNot(), -Infinity);
  if (mask && mask.dtype === 'bool') a = a.maskedFill(mask.logicalNot(), -Infinity);
  else if (mask) a = a.add(mask);
  return kd.softmax(a, -1).matmul(v);
}

function randn(shape, seed, dtype = 'float64', device = 'cpu') {
  kd.manualSeed(seed);
  return kd.randn(shape, { dtype }).to(device);
}

function maxDiff(a, b) {
  return a.detach().to('cpu').double().sub(b.detach().to('cpu').double()).abs().max().item();
}

describe('scaledDotProductAttention: fused kernels vs the math composition', function () {
  const configs = [
    ['plain [2,3,150,16] x 200 keys', [2, 3, 150, 16], [2, 3, 200, 16], [2, 3, 200, 24], {}],
    ['causal L=S=130', [2, 130, 8], [2, 130, 8], [2, 130, 8], { isCausal: true }],
    ['causal L>S', [97, 8], [33, 8], [33, 5], { isCausal: true }],
    ['bool mask [1,1,L,S] and scale', [2, 2, 70, 8], [2, 2, 90, 8], [2, 2, 90, 8], { mask: 'bool', scale: 0.2 }],
    ['float mask [L,S] broadcast', [2, 2, 40, 8], [2, 2, 65, 8], [2, 2, 65, 8], { mask: 'float' }],
  ];
  for (const [name, qs, ks, vs, o] of configs) {
    it(`${name}: output float64 and float32, gradients float64`, function () {
      kd.tidy(() => {
        const q = randn(qs, 1).requiresGrad_(), k = randn(ks, 2).requiresGrad_(), v = randn(vs, 3).requiresGrad_();
        const L = qs[qs.length - 2], S = ks[ks.length - 2];
        let mask = null;
        if (o.mask === 'bool') mask = randn([1, 1, L, S], 4).gt(-0.8);
        if (o.mask === 'float') mask = randn([L, S], 5);
        const y = F.scaledDotProductAttention(q, k, v, { attnMask: mask, isCausal: !!o.isCausal, scale: o.scale });
        const r = reference(q, k, v, mask, !!o.isCausal, o.scale);
        assert.deepStrictEqual(y.shape, r.shape);
        assert.ok(maxDiff(y, r) < 1e-12, `output differs by ${maxDiff(y, r)}`);
        const g = randn(r.shape, 6);
        const gy = kd.autograd.grad([y], [q, k, v], [g]);
        const gr = kd.autograd.grad([r], [q, k, v], [g]);
        for (let i = 0; i < 3; i++) assert.ok(maxDiff(gy[i], gr[i]) < 1e-11, `grad ${i} differs by ${maxDiff(gy[i], gr[i])}`);
        const y32 = F.scaledDotProductAttention(q.detach().float(), k.detach().float(), v.detach().float(),
          { attnMask: mask && mask.dtype === 'float64' ? mask.float() : mask, isCausal: !!o.isCausal, scale: o.scale });
        assert.strictEqual(y32.dtype, 'float32');
        assert.ok(maxDiff(y32, r) < 2e-5, `float32 output differs by ${maxDiff(y32, r)}`);
      });
    });
  }

  it('a long sequence (L = S = 1024, causal) matches the composition; backward too', function () {
    this.timeout(60000);
    kd.tidy(() => {
      const q = randn([1, 2, 1024, 16], 7, 'float32').requiresGrad_(), k = randn([1, 2, 1024, 16], 8, 'float32').requiresGrad_();
      const v = randn([1, 2, 1024, 16], 9, 'float32').requiresGrad_();
      const y = F.scaledDotProductAttention(q, k, v, null, 0, true);
      const [q64, k64, v64] = [q, k, v].map((t) => t.detach().double().requiresGrad_());
      const r = reference(q64, k64, v64, null, true);
      assert.ok(maxDiff(y, r) < 1e-5, `output differs by ${maxDiff(y, r)}`);
      const g = randn([1, 2, 1024, 16], 10, 'float32');
      const gy = kd.autograd.grad([y], [q, k, v], [g]);
      const gr = kd.autograd.grad([r], [q64, k64, v64], [g.double()]);
      for (let i = 0; i < 3; i++) assert.ok(maxDiff(gy[i], gr[i]) < 1e-4, `grad ${i} differs by ${maxDiff(gy[i], gr[i])}`);
    });
  });

  it('the fused op returns the log-sum-exp of each row\'s scaled, masked scores', function () {
    kd.tidy(() => {
      const q = randn([2, 5, 4], 11), k = randn([2, 70, 4], 12), v = randn([2, 70, 3], 13);
      const [out, lse] = kd._internal.sdpaFlash(q, k, v, null, 0, true, 0.5);
      const s = q.matmul(k.transpose(-2, -1)).mul(0.5)
        .maskedFill(kd.ones([5, 70], { dtype: 'bool' }).tril().logicalNot(), -Infinity);
      assert.ok(maxDiff(lse, kd.logsumexp(s, -1)) < 1e-12);
      assert.ok(maxDiff(out, reference(q, k, v, null, true, 0.5)) < 1e-12);
    });
  });

  it('head dim 0: zero scores, so the weights are uniform (PyTorch 2 scales query and key, never 0 * inf)', function () {
    kd.tidy(() => {
      const v = randn([2, 4, 5], 17);
      const want = v.mean(1, true).expand([2, 3, 5]);
      assert.ok(maxDiff(F.scaledDotProductAttention(kd.zeros([2, 3, 0], { dtype: 'float64' }), kd.zeros([2, 4, 0], { dtype: 'float64' }), v), want) < 1e-12);
      if (kd.cuda.isAvailable()) {
        const yd = F.scaledDotProductAttention(kd.zeros([2, 3, 0], { dtype: 'float64', device: 'cuda' }), kd.zeros([2, 4, 0], { dtype: 'float64', device: 'cuda' }), v.to('cuda'));
        assert.ok(maxDiff(yd, want) < 1e-12);
      }
    });
  });

  it('a row whose keys are all masked gives NaN, as softmax does', function () {
    kd.tidy(() => {
      const q = randn([3, 4], 14), k = randn([5, 4], 15), v = randn([5, 2], 16);
      const mask = kd.tensor([[true, false, true, true, true], [false, false, false, false, false], [true, true, true, true, true]]);
      const y = F.scaledDotProductAttention(q, k, v, mask).arraySync();
      assert.ok(y[1].every(Number.isNaN) && y[0].every(Number.isFinite) && y[2].every(Number.isFinite));
    });
  });
});

describe('sdpaFlashGrad called directly', function () {
  it('checks the ranks it reads before the composition reads them (a fuzzed 0-dim call read out of bounds)', function () {
    const t = kd.ones([]).requiresGrad_();
    expectKdError(() => kd._internal.sdpaFlashGrad(t, t, t, t, null, t, t, t, 0, false, 0, false), 'KD_SHAPE_MISMATCH');
    const q = kd.randn([2, 3, 4]).requiresGrad_();
    expectKdError(() => kd._internal.sdpaFlashGrad(t, q, q, q, null, t, t, t, 0, false, 0.5, false), 'KD_SHAPE_MISMATCH');
    kd.dispose([t, q]);
  });
});

describe('scaledDotProductAttention: gradients against finite differences (float64)', function () {
  const x = (shape, seed) => randn(shape, seed).requiresGrad_();
  it('query, key, value across the blocks, causal', function () {
    this.timeout(60000);
    assert.ok(kd.autograd.gradcheck((q, k, v) => F.scaledDotProductAttention(q, k, v, null, 0, true),
      [x([35, 2], 20), x([70, 2], 21), x([70, 2], 22)]));
  });
  it('with a bool mask and batch broadcast', function () {
    this.timeout(60000);
    const mask = randn([3, 66], 23).gt(-1);
    assert.ok(kd.autograd.gradcheck((q, k, v) => F.scaledDotProductAttention(q, k, v, mask),
      [x([2, 3, 2], 24), x([66, 2], 25), x([2, 66, 3], 26)]));
  });
  it('a float mask that requires grad (the composition)', function () {
    assert.ok(kd.autograd.gradcheck((q, k, v, m) => F.scaledDotProductAttention(q, k, v, m),
      [x([3, 2], 27), x([4, 2], 28), x([4, 2], 29), x([3, 4], 30)]));
  });
  it('the fused op itself: a float mask that requires grad', function () {
    assert.ok(kd.autograd.gradcheck((q, k, v, m) => kd._internal.sdpaFlash(q, k, v, m, 0, false, 0.8)[0],
      [x([2, 3, 2], 41), x([2, 4, 2], 42), x([2, 4, 3], 43), x([3, 4], 44)]));
  });
  it('double backward through the fused op (gradgradcheck)', function () {
    this.timeout(60000);
    const mask = randn([3, 5], 31).gt(-1);
    assert.ok(kd.autograd.gradgradcheck((q, k, v) => F.scaledDotProductAttention(q, k, v, mask, 0, false, { scale: 0.6 }),
      [x([3, 2], 32), x([5, 2], 33), x([5, 2], 34)]));
  });
  it('the fused backward matches the composition\'s gradient (kd._internal.sdpaFlashBackward)', function () {
    kd.tidy(() => {
      const q = randn([2, 40, 3], 35), k = randn([2, 70, 3], 36), v = randn([2, 70, 4], 37), g = randn([2, 40, 4], 38);
      const [out, lse, st] = kd._internal.sdpaFlash(q, k, v, null, 0, false, 0.4);
      const fused = kd._internal.sdpaFlashBackward(g, q, k, v, null, out, lse, st, 0, false, 0.4);
      const [q2, k2, v2] = [q, k, v].map((t) => t.clone().requiresGrad_());
      const want = kd.autograd.grad([reference(q2, k2, v2, null, false, 0.4)], [q2, k2, v2], [g]);
      for (let i = 0; i < 3; i++) assert.ok(maxDiff(fused[i], want[i]) < 1e-12);
    });
  });
});

describe('scaledDotProductAttention: dropout (fused)', function () {
  /** The composition with nativeDropout of the weights, as PyTorch 2's math reference. */
  function droppedReference(q, k, v, p, mask = null, causal = false) {
    const E = q.shape[q.shape.length - 1], L = q.shape[q.shape.length - 2], S = k.shape[k.shape.length - 2];
    let a = q.matmul(k.transpose(-2, -1)).mul(1 / Math.sqrt(E));
    if (causal) a = a.maskedFill(kd.ones([L, S], { dtype: 'bool' }).tril().logicalNot(), -Infinity);
    if (mask) a = a.maskedFill(mask.logicalNot(), -Infinity);
    const [dropped, keep] = kd._internal.nativeDropout(kd.softmax(a, -1), p, true);
    return [dropped.matmul(v), keep];
  }
  const cases = [
    ['across the blocks', [2, 70, 4], [2, 150, 4], [2, 150, 3], 0.3, false, false],
    ['causal, 4-D', [2, 2, 33, 4], [2, 2, 40, 4], [2, 2, 40, 5], 0.5, true, false],
    ['bool mask', [3, 20, 4], [3, 70, 4], [3, 70, 4], 0.2, false, true],
  ];
  for (const [name, qs, ks, vs, p, causal, withMask] of cases) {
    it(`${name}: drops the weights nativeDropout drops for the seed; gradients use the same mask`, function () {
      kd.tidy(() => {
        const q = randn(qs, 40).requiresGrad_(), k = randn(ks, 41).requiresGrad_(), v = randn(vs, 42).requiresGrad_();
        const mask = withMask ? randn([qs[qs.length - 2], ks[ks.length - 2]], 43).gt(-1) : null;
        kd.manualSeed(5);
        const y = F.scaledDotProductAttention(q, k, v, { attnMask: mask, dropoutP: p, isCausal: causal });
        const gy = kd.autograd.grad([y], [q, k, v], [randn(y.shape, 44)]);
        kd.manualSeed(5);
        const [r, keep] = droppedReference(q, k, v, p, mask, causal);
        assert.ok(keep.logicalNot().any().item() && keep.any().item(), 'some weights are dropped, some kept');
        assert.ok(maxDiff(y, r) < 1e-12, `output differs by ${maxDiff(y, r)}`);
        const gr = kd.autograd.grad([r], [q, k, v], [randn(y.shape, 44)]);
        for (let i = 0; i < 3; i++) assert.ok(maxDiff(gy[i], gr[i]) < 1e-12, `grad ${i} differs by ${maxDiff(gy[i], gr[i])}`);
        kd.manualSeed(5);
        assert.strictEqual(maxDiff(F.scaledDotProductAttention(q, k, v, { attnMask: mask, dropoutP: p, isCausal: causal }), y), 0,
          'deterministic for a seed');
        assert.ok(maxDiff(F.scaledDotProductAttention(q, k, v, { attnMask: mask, dropoutP: p, isCausal: causal }), y) > 0,
          'the next call draws another mask');
      });
    });
  }
  it('finite differences and double backward with dropout (the mask fixed by the seed)', function () {
    this.timeout(60000);
    const x = (shape, seed) => randn(shape, seed).requiresGrad_();
    const f = (q, k, v) => { kd.manualSeed(9); return F.scaledDotProductAttention(q, k, v, null, 0.3); };
    const args = [x([2, 5, 2], 45), x([2, 7, 2], 46), x([2, 7, 3], 47)];
    assert.ok(kd.autograd.gradcheck(f, args));
    assert.ok(kd.autograd.gradgradcheck(f, args));
  });
  it('a float mask that requires grad, through the fused op with dropout', function () {
    const x = (shape, seed) => randn(shape, seed).requiresGrad_();
    const f = (q, k, v, m) => { kd.manualSeed(3); return kd._internal.sdpaFlash(q, k, v, m, 0.25, false, 0.7)[0]; };
    assert.ok(kd.autograd.gradcheck(f, [x([3, 2], 48), x([6, 2], 49), x([6, 2], 50), x([3, 6], 51)]));
  });
  it('dropoutP = 1 zeroes the output; dropoutP outside [0, 1] is an error', function () {
    const q = randn([3, 4], 43);
    assert.strictEqual(F.scaledDotProductAttention(q, q, q, null, 1).abs().sum().item(), 0);
    expectKdError(() => F.scaledDotProductAttention(q, q, q, null, 1.5), 'KD_INVALID_ARGUMENT');
    expectKdError(() => kd._internal.sdpaFlash(q, q, q, null, -0.5, false, 1), 'KD_INVALID_ARGUMENT');
  });
});

describe('scaledDotProductAttention: call forms and errors', function () {
  const q = randn([2, 3, 4], 50, 'float32'), k = randn([2, 5, 4], 51, 'float32'), v = randn([2, 5, 6], 52, 'float32');
  it('positional and options object give the same result; scale defaults to 1/sqrt(E)', function () {
    const a = F.scaledDotProductAttention(q, k, v, null, 0, false, { scale: 0.5 });
    const b = F.scaledDotProductAttention(q, k, v, { scale: 0.5 });
    const c = F.scaledDotProductAttention({ query: q, key: k, value: v, scale: 0.5 });
    assert.strictEqual(maxDiff(a, b), 0);
    assert.strictEqual(maxDiff(a, c), 0);
    assert.strictEqual(maxDiff(F.scaledDotProductAttention(q, k, v), F.scaledDotProductAttention(q, k, v, { scale: 0.5 })), 0);
    assert.deepStrictEqual(a.shape, [2, 3, 6]);
  });
  it('PyTorch 2\'s checks', function () {
    const err = (fn, code, re) => { const e = expectKdError(fn, code); assert.match(e.message, re); };
    err(() => F.scaledDotProductAttention(q, k, v, kd.ones([3, 5], { dtype: 'bool' }), 0, true), 'KD_INVALID_ARGUMENT',
      /Explicit attn_mask should not be set when is_causal=True/);
    err(() => F.scaledDotProductAttention(randn([4], 1, 'float32'), k, v), 'KD_SHAPE_MISMATCH', /at least 2 dimensional.*query\.dim: 1/);
    err(() => F.scaledDotProductAttention(q, k.double(), v), 'KD_DTYPE_MISMATCH', /same dtype.*key\.dtype: torch\.float64/);
    err(() => F.scaledDotProductAttention(q, k, v, kd.ones([3, 5], { dtype: 'int64' })), 'KD_DTYPE_MISMATCH',
      /attn_mask dtype to be bool or to match query dtype/);
    err(() => F.scaledDotProductAttention(q, randn([2, 5, 3], 53, 'float32'), v), 'KD_SHAPE_MISMATCH', /same last dim/);
    err(() => F.scaledDotProductAttention(q, k, randn([2, 4, 6], 54, 'float32')), 'KD_SHAPE_MISMATCH', /same sequence length/);
    err(() => F.scaledDotProductAttention(q, k, v, kd.ones([4, 5], { dtype: 'bool' })), 'KD_SHAPE_MISMATCH', /does not broadcast/);
    err(() => F.scaledDotProductAttention(q, randn([3, 5, 4], 55, 'float32'), randn([3, 5, 6], 56, 'float32')), 'KD_SHAPE_MISMATCH', /broadcast|match/);
    err(() => kd._internal.sdpaFlash(q.half(), k.half(), v.half(), null, 0, false, 1), 'KD_DTYPE_MISMATCH', /float32 or float64/);
    const [out, lse, st] = kd._internal.sdpaFlash(q, k, v, null, 0, false, 1);
    err(() => kd._internal.sdpaFlashBackward(out, q, k, v, null, out, lse.unsqueeze(-1), st, 0, false, 1), 'KD_SHAPE_MISMATCH', /logsumexp/);
    err(() => kd._internal.sdpaFlashBackward(out.narrow(-1, 0, 2), q, k, v, null, out, lse, st, 0, false, 1), 'KD_SHAPE_MISMATCH', /grad_output/);
    err(() => kd._internal.sdpaFlashBackward(out, q, k, v, null, out, lse, st.float(), 0.5, false, 1), 'KD_INVALID_ARGUMENT', /philoxState/);
  });
});

if (kd.cuda.isAvailable()) {
  describe('scaledDotProductAttention on CUDA (the device kernels) vs the CPU', function () {
    this.timeout(300000);
    const configs = [
      ['float32 [2,2,40,8] x 50 keys', 'float32', [2, 2, 40, 8], [2, 2, 50, 8], [2, 2, 50, 8], {}],
      ['float64 causal L>S, 2-D', 'float64', [45, 8], [33, 8], [33, 5], { isCausal: true }],
      ['float64 causal L<S', 'float64', [1, 20, 4], [1, 70, 4], [1, 70, 4], { isCausal: true }],
      ['float32 bool mask broadcast, key and value broadcast over the batch', 'float32', [2, 2, 33, 8], [2, 33, 8], [1, 2, 33, 8], { mask: 'bool' }],
      ['float64 float mask and scale', 'float64', [2, 17, 4], [2, 40, 4], [2, 40, 3], { mask: 'float', scale: 0.3 }],
      ['float32 head dim 100 (4 chunks)', 'float32', [1, 9, 100], [1, 35, 100], [1, 35, 70], {}],
      ['float64 head dim 200 (8 chunks)', 'float64', [1, 5, 200], [1, 7, 200], [1, 7, 200], { isCausal: true }],
      ['float32 one query row, non-contiguous key', 'float32', [1, 3, 1, 8], [1, 3, 8, 37], [1, 3, 37, 8], { kT: true }],
      ['float64 dropout 0.3, causal, bool mask broadcast', 'float64', [2, 2, 35, 8], [2, 2, 50, 8], [2, 2, 50, 8], { dropout: 0.3, mask: 'bool' }],
      ['float32 dropout 0.5, head dim 100', 'float32', [2, 9, 100], [2, 40, 100], [2, 40, 100], { dropout: 0.5, isCausal: true }],
    ];
    for (const [name, dt, qs, ks, vs, o] of configs) {
      it(`${name}: output and gradients`, function () {
        kd.tidy(() => {
          const L = qs[qs.length - 2], S = o.kT ? ks[ks.length - 1] : ks[ks.length - 2];
          let mask = null;
          if (o.mask === 'bool') mask = randn([L, S], 4).gt(-0.5);
          if (o.mask === 'float') mask = randn([2, 1, L, S], 5, dt).squeeze(1);
          const cpu = [randn(qs, 1, dt), randn(ks, 2, dt), randn(vs, 3, dt)];
          if (o.kT) cpu[1] = cpu[1].transpose(-2, -1);
          const dev = cpu.map((t) => t.to('cuda').requiresGrad_());
          const c = cpu.map((t) => t.clone().requiresGrad_());
          const opts = (m) => ({ attnMask: m, isCausal: !!o.isCausal, scale: o.scale, dropoutP: o.dropout || 0 });
          kd.manualSeed(7); // the same dropout stream on both devices
          const yd = F.scaledDotProductAttention(dev[0], dev[1], dev[2], opts(mask && mask.to('cuda')));
          kd.manualSeed(7);
          const yc = F.scaledDotProductAttention(c[0], c[1], c[2], opts(mask));
          assert.strictEqual(yd.device, 'cuda:0');
          const tol = dt === 'float64' ? 1e-12 : 2e-5;
          assert.ok(maxDiff(yd, yc) < tol, `output differs by ${maxDiff(yd, yc)}`);
          const g = randn(yc.shape, 6, dt);
          const gd = kd.autograd.grad([yd], dev, [g.to('cuda')]);
          const gc = kd.autograd.grad([yc], c, [g]);
          for (let i = 0; i < 3; i++) {
            assert.strictEqual(gd[i].device, 'cuda:0');
            assert.ok(maxDiff(gd[i], gc[i]) < tol * 10, `grad ${i} differs by ${maxDiff(gd[i], gc[i])}`);
          }
        });
      });
    }
    it('the forward is one launch; the backward two', function () {
      if (!kd.cuda.emulator) this.skip();
      kd.tidy(() => {
        const q = randn([1, 2, 7, 8], 1, 'float32', 'cuda'), k = randn([1, 2, 9, 8], 2, 'float32', 'cuda');
        const v = randn([1, 2, 9, 8], 3, 'float32', 'cuda');
        const a = kd.cuda.emulator.stats().launches;
        const [out, lse, st] = kd._internal.sdpaFlash(q, k, v, null, 0.2, true, 0.3);
        const b = kd.cuda.emulator.stats().launches;
        kd._internal.sdpaFlashBackward(out, q, k, v, null, out, lse, st, 0.2, true, 0.3);
        const c = kd.cuda.emulator.stats().launches;
        assert.deepStrictEqual([b - a, c - b], [1, 2]);
      });
    });
    it('captures into a CUDA graph (no host sync) and replays with new inputs', function () {
      kd.tidy(() => {
        const q = randn([1, 2, 20, 8], 1, 'float32', 'cuda'), k = randn([1, 2, 40, 8], 2, 'float32', 'cuda');
        const v = randn([1, 2, 40, 8], 3, 'float32', 'cuda');
        F.scaledDotProductAttention(q, k, v, null, 0, true); // warm-up
        const g = new kd.cuda.CUDAGraph();
        const out = kd.cuda.graph(g, () => F.scaledDotProductAttention(q, k, v, null, 0, true));
        q.copy_(randn([1, 2, 20, 8], 4, 'float32', 'cuda'));
        g.replay();
        const want = reference(q.to('cpu').double(), k.to('cpu').double(), v.to('cpu').double(), null, true);
        assert.ok(maxDiff(out, want) < 2e-5, `replay differs by ${maxDiff(out, want)}`);
        g.reset();
      });
    });
    it('head dims over 256 run the composition on the device', function () {
      kd.tidy(() => {
        const q = randn([3, 300], 1, 'float64'), k = randn([4, 300], 2, 'float64'), v = randn([4, 2], 3, 'float64');
        const yd = F.scaledDotProductAttention(q.to('cuda'), k.to('cuda'), v.to('cuda'));
        assert.ok(maxDiff(yd, reference(q, k, v)) < 1e-12);
        expectKdError(() => kd._internal.sdpaFlash(q.to('cuda'), k.to('cuda'), v.to('cuda'), null, 0, false, 1), ['KD_INVALID_ARGUMENT', 'KD_CUDA']);
      });
    });
  });
}
