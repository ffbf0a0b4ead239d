// autocast.test.js - automatic mixed precision: kd.autocast against PyTorch 1.13's CPU autocast
// (test/fixtures/autocast.json from tools/fixtures/autocast.py): output dtype and values of every
// op with a CPU policy, an MLP's loss and float32 gradients; scopes (nesting, enabled: false,
// concurrent async scopes), the cast cache, the other device type, the CUDA policy table through
// the policy query, and kd.amp.GradScaler (fused unscale / update-scale kernels, the training
// sequence of its algorithm, its errors).
'use strict';

const { kd, assert, fixture, buildArg, callOp, assertTensorClose, assertValuesClose, values, decode,
  expectKdError, assertKdError, assertMessageLike, codesForTorchError, collectGarbage } = require('./helpers');

const F = kd.nn.functional;
const POLICY = require('../src/ops/autocast_policy.js');
const OPLIST = require('../src/ops/oplist');
const AC = fixture('autocast');
const cpu = (fn) => kd.autocast({ deviceType: 'cpu' }, fn);
const stats = () => kd._internal.autocastStats();

// bfloat16 results: PyTorch 1.13's bfloat16 CPU matmul accumulates in bfloat16, kindling's in
// float32, so allow two bfloat16 ulps more than assert_close's default.
const BF16 = { rtol: 3e-2, atol: 2e-2 };
function closeLoose(t, spec, what, tol = BF16) {
  assert.equal(t.dtype, spec.dtype, `${what}: dtype`);
  assert.deepEqual(t.shape, spec.shape, `${what}: shape`);
  const a = values(t);
  const e = spec.data.map(decode);
  const bad = [];
  e.forEach((y, i) => {
    const x = a[i];
    const ok = Number.isNaN(y) ? Number.isNaN(x) : !Number.isFinite(y) ? x === y : Math.abs(x - y) <= tol.atol + tol.rtol * Math.abs(y);
    if (!ok) bad.push(`[${i}] got ${x} expected ${y}`);
  });
  assert.ok(bad.length === 0, `${what}: ${bad.length}/${e.length} differ: ${bad.slice(0, 4).join('; ')}`);
}

describe('autocast: ops under CPU autocast vs PyTorch 1.13', function () {
  for (const c of AC.ops) {
    it(c.name, function () {
      const args = c.args.map(buildArg);
      if (c.error) {
        let err = null;
        try { cpu(() => callOp(c, args)); } catch (e) { err = e; }
        assert.ok(err, `${c.name}: PyTorch raises "${c.error.message}"`);
        assertKdError(err, codesForTorchError(c.error), c.name);
        assertMessageLike(err.message, c.error.message, c.name);
        return;
      }
      const r = cpu(() => callOp(c, args));
      if (c.expected.dtype === 'bfloat16') closeLoose(r, c.expected, c.name);
      else assertTensorClose(r, c.expected, c.name);
      // outside the scope the same call is not cast (policy ops only)
    });
  }

  it('outside a scope nothing is cast', function () {
    const a = kd.randn(3, 4);
    assert.equal(kd.mm(a, a.t()).dtype, 'float32');
    assert.equal(F.linear(a, a).dtype, 'float32');
  });

  it('in-place ops are never autocast', function () {
    const a = kd.randn(2, 3, { dtype: 'bfloat16' });
    cpu(() => {
      assert.equal(a.exp_().dtype, 'bfloat16');
      const b = kd.randn(2, 3);
      assert.equal(b.addmm_ ? 'float32' : b.dtype, 'float32');
    });
  });

  it('large inputs (past the parallel grain) match a float64 reference of the bfloat16 inputs', function () {
    const a = kd.randn(64, 600);
    const b = kd.randn(600, 80);
    const r = cpu(() => kd.mm(a, b));
    assert.equal(r.dtype, 'bfloat16');
    const ref = kd.mm(a.to('bfloat16').to('float64'), b.to('bfloat16').to('float64'));
    const got = values(r.to('float64'));
    const want = values(ref);
    let bad = 0;
    for (let i = 0; i < want.length; i++) if (Math.abs(got[i] - want[i]) > 0.02 * Math.abs(want[i]) + 0.1) bad++;
    assert.equal(bad, 0);
  });
});

describe('autocast: training an MLP (PyTorch fixture)', function () {
  it('loss, activation dtypes and float32 gradients match PyTorch', function () {
    const m = AC.mlp;
    const x = buildArg(m.x);
    const params = m.params.map((s) => buildArg(s).requiresGrad_());
    const [w1, b1, w2, b2] = params;
    const tgt = buildArg(m.target);
    let h, logits;
    const loss = cpu(() => {
      h = F.relu(F.linear(x, w1, b1));
      logits = F.linear(h, w2, b2);
      return F.crossEntropy(logits, tgt);
    });
    assert.equal(h.dtype, m.hiddenDtype);
    assert.equal(logits.dtype, m.logitsDtype);
    assert.equal(loss.dtype, 'float32');
    closeLoose(loss, m.loss, 'loss', { rtol: 2e-2, atol: 2e-2 });
    loss.backward();
    params.forEach((p, i) => {
      assert.equal(p.grad.dtype, 'float32', `grad ${i} dtype`);
      closeLoose(p.grad, m.grads[i], `grad ${i}`, { rtol: 5e-2, atol: 3e-2 });
    });
  });

  it('casts are recorded: gradients reach float32 leaves through the cast', function () {
    const w = kd.randn(4, 3, { requiresGrad: true });
    const x = kd.randn(2, 4);
    const y = cpu(() => kd.mm(x, w));
    assert.equal(y.dtype, 'bfloat16');
    assert.ok(y.gradFn !== null);
    y.to('float32').sum().backward();
    assert.equal(w.grad.dtype, 'float32');
    const want = values(x.to('bfloat16').to('float32').sum(0));
    const g = values(w.grad);
    for (let r = 0; r < 4; r++) for (let c = 0; c < 3; c++) assert.ok(Math.abs(g[r * 3 + c] - want[r]) < 1e-2);
  });
});

describe('autocast: scopes', function () {
  it('state inside and after a scope; dtype per device type', function () {
    assert.equal(kd.isAutocastEnabled('cpu'), false);
    assert.equal(kd.isAutocastEnabled('cuda'), false);
    assert.equal(kd.getAutocastDtype('cpu'), 'bfloat16');
    assert.equal(kd.getAutocastDtype('cuda'), 'float16');
    const r = cpu(() => {
      assert.equal(kd.isAutocastEnabled('cpu'), true);
      assert.equal(kd.isAutocastEnabled('cuda'), false);
      return 42;
    });
    assert.equal(r, 42);
    assert.equal(kd.isAutocastEnabled('cpu'), false);
    kd.autocast({ deviceType: 'cuda', dtype: 'bfloat16' }, () => {
      assert.equal(kd.isAutocastEnabled('cuda'), true);
      assert.equal(kd.getAutocastDtype('cuda'), 'bfloat16');
    });
    assert.equal(kd.getAutocastDtype('cuda'), 'float16');
  });

  it('nesting and enabled: false inside an enabled scope', function () {
    const a = kd.randn(2, 3);
    const b = kd.randn(3, 2);
    cpu(() => {
      assert.equal(kd.mm(a, b).dtype, 'bfloat16');
      kd.autocast({ deviceType: 'cpu', enabled: false }, () => {
        assert.equal(kd.isAutocastEnabled('cpu'), false);
        assert.equal(kd.mm(a, b).dtype, 'float32');
        cpu(() => assert.equal(kd.mm(a, b).dtype, 'bfloat16'));
        assert.equal(kd.mm(a, b).dtype, 'float32');
      });
      assert.equal(kd.mm(a, b).dtype, 'bfloat16');
      kd.autocast({ deviceType: 'cuda' }, () => {
        assert.equal(kd.isAutocastEnabled('cpu'), true, 'a cuda scope leaves cpu autocast on');
        assert.equal(kd.mm(a, b).dtype, 'bfloat16');
      });
    });
    assert.equal(kd.mm(a, b).dtype, 'float32');
  });

  it('a throwing scope restores the state', function () {
    assert.throws(() => cpu(() => { throw new Error('boom'); }), /boom/);
    assert.equal(kd.isAutocastEnabled('cpu'), false);
    assert.equal(kd.mm(kd.ones(1, 1), kd.ones(1, 1)).dtype, 'float32');
  });

  it('async scopes: state across awaits, restored after', async function () {
    const a = kd.randn(2, 2);
    const p = cpu(async () => {
      assert.equal(kd.mm(a, a).dtype, 'bfloat16');
      await new Promise((r) => setTimeout(r, 5));
      assert.equal(kd.isAutocastEnabled('cpu'), true);
      assert.equal(kd.mm(a, a).dtype, 'bfloat16');
      return 'done';
    });
    // the caller continues outside the scope while it is pending
    assert.equal(kd.isAutocastEnabled('cpu'), false);
    assert.equal(kd.mm(a, a).dtype, 'float32');
    assert.equal(await p, 'done');
    assert.equal(kd.isAutocastEnabled('cpu'), false);
    assert.equal(kd.mm(a, a).dtype, 'float32');
  });

  it("two concurrent async scopes with different settings don't see each other's state", async function () {
    const a = kd.randn(2, 2);
    const seen = { on: [], off: [] };
    const tick = () => new Promise((r) => setImmediate(r));
    const on = cpu(async () => {
      for (let i = 0; i < 5; i++) {
        seen.on.push([kd.isAutocastEnabled('cpu'), kd.mm(a, a).dtype]);
        await tick();
      }
    });
    const off = kd.autocast({ deviceType: 'cpu', enabled: false }, async () => {
      for (let i = 0; i < 5; i++) {
        seen.off.push([kd.isAutocastEnabled('cpu'), kd.mm(a, a).dtype]);
        await tick();
      }
    });
    const grads = kd.noGrad(async () => {
      for (let i = 0; i < 5; i++) { assert.equal(kd.isAutocastEnabled('cpu'), false); await tick(); }
    });
    await Promise.all([on, off, grads]);
    assert.deepEqual(seen.on, Array(5).fill([true, 'bfloat16']));
    assert.deepEqual(seen.off, Array(5).fill([false, 'float32']));
    assert.equal(kd.isAutocastEnabled('cpu'), false);
    assert.equal(kd.isGradEnabled(), true);
  });

  it('grad modes and autocast scopes combine (sync and async)', async function () {
    const w = kd.randn(2, 2, { requiresGrad: true });
    cpu(() => kd.noGrad(() => {
      const y = kd.mm(w, w);
      assert.equal(y.dtype, 'bfloat16');
      assert.equal(y.requiresGrad, false);
    }));
    await kd.noGrad(async () => {
      await cpu(async () => {
        await null;
        const y = kd.mm(w, w);
        assert.equal(y.dtype, 'bfloat16');
        assert.equal(y.requiresGrad, false);
      });
      assert.equal(kd.isAutocastEnabled('cpu'), false);
    });
    assert.equal(kd.isGradEnabled(), true);
  });
});

describe('autocast: the cast cache', function () {
  it('a weight used twice is cast once; the cache empties when the outermost scope exits', function () {
    const w = kd.randn(4, 4, { requiresGrad: true });
    const x = kd.randn(2, 4);
    const s0 = stats();
    cpu(() => {
      const y = kd.mm(x, w);
      const z = kd.mm(y.to('float32'), w);
      z.to('float32').sum().backward();
      const s = stats();
      // x, y' once each (not cached: not leaves requiring grad), w once, then a hit
      assert.equal(s.cacheHits - s0.cacheHits, 1);
      assert.equal(s.cached, 1);
      cpu(() => { kd.mm(x, w); });
      assert.equal(stats().cached, 1, 'a nested scope keeps the cache');
      assert.equal(stats().cacheHits - s0.cacheHits, 2);
    });
    assert.equal(stats().cached, 0);
    assert.equal(w.grad.dtype, 'float32');
  });

  it('casts and cached copies are freed: no tensor outlives the scope', function () {
    const w = kd.randn(8, 8, { requiresGrad: true });
    const x = kd.randn(4, 8);
    const step = () => kd.tidy(() => {
      const loss = cpu(() => F.mseLoss(kd.mm(kd.mm(x, w), w), x));
      loss.backward();
      return undefined;
    });
    step();
    w.grad = null;
    const live = collectGarbage().liveTensors;
    for (let i = 0; i < 3; i++) { step(); w.grad = null; }
    assert.equal(kd.memory().liveTensors, live);
    assert.equal(stats().cached, 0);
  });

  it('cacheEnabled: false, non-leaves, and in-place changes of the weight', function () {
    const w = kd.randn(3, 3, { requiresGrad: true });
    const x = kd.randn(3, 3);
    let s0 = stats();
    kd.autocast({ deviceType: 'cpu', cacheEnabled: false }, () => { kd.mm(x, w); kd.mm(x, w); });
    assert.equal(stats().cacheHits - s0.cacheHits, 0);
    assert.equal(stats().casts - s0.casts, 4);
    s0 = stats();
    cpu(() => {
      const v = w.mul(1); // not a leaf
      kd.mm(x, v); kd.mm(x, v);
      assert.equal(stats().cacheHits - s0.cacheHits, 0);
      kd.mm(x, w);
      kd.noGrad(() => w.add_(1)); // the cached copy is stale now
      const y = kd.mm(kd.eye(3), w);
      assert.equal(stats().cacheHits - s0.cacheHits, 0);
      assertValuesClose(values(y.to('float32')), values(w.to('bfloat16').to('float32')), 'bfloat16', 'fresh cast after add_');
      kd.mm(x, w);
      assert.equal(stats().cacheHits - s0.cacheHits, 1);
    });
  });
});

describe('autocast: device types', function () {
  it('a cuda scope does not touch CPU tensors', function () {
    const a = kd.randn(2, 3);
    kd.autocast({ deviceType: 'cuda' }, () => {
      assert.equal(kd.isAutocastEnabled('cuda'), true);
      assert.equal(kd.isAutocastEnabled('cpu'), false);
      assert.equal(kd.mm(a, a.t()).dtype, 'float32');
      assert.equal(F.linear(a, a).dtype, 'float32');
      assert.equal(a.to('float16').exp().dtype, 'float16');
    });
  });

  it("the op table carries PyTorch 1.13's policies per device type", function () {
    const P = kd._internal.autocastPolicy;
    assert.equal(P('mm', 'cuda'), 'lower');
    assert.equal(P('mm', 'cpu'), 'lower');
    assert.equal(P('conv2d.padding', 'cpu'), 'lower');
    assert.equal(P('convTranspose2d', 'cuda'), 'lower');
    assert.equal(P('convTranspose2d', 'cpu'), null);
    assert.equal(P('softmax', 'cuda'), 'fp32SetOptDtype');
    assert.equal(P('softmax', 'cpu'), null);
    assert.equal(P('exp', 'cuda'), 'fp32');
    assert.equal(P('exp_', 'cuda'), null, 'in-place ops have no policy');
    assert.equal(P('layerNorm', 'cuda'), 'fp32');
    assert.equal(P('crossEntropy', 'cuda'), null);
    assert.equal(P('crossEntropy', 'cpu'), 'fp32');
    assert.equal(P('cat', 'cuda'), 'promote');
    assert.equal(P('addcmul', 'cuda'), 'promote');
    assert.equal(P('addcmul', 'cpu'), null);
    assert.equal(P('binaryCrossEntropy', 'cuda'), 'banned');
    assert.equal(P('binaryCrossEntropy', 'cpu'), 'fp32');
    assert.equal(P('relu', 'cuda'), null);
    expectKdError(() => P('noSuchOp', 'cpu'), 'KD_INVALID_ARGUMENT');
  });

  it('every op of the list has the policy src/ops/autocast_policy.js gives its name', function () {
    const pol = { cpu: new Map(), cuda: new Map() };
    for (const dev of ['cpu', 'cuda']) for (const [p, names] of Object.entries(POLICY[dev])) for (const n of names) pol[dev].set(n, p);
    for (const e of OPLIST) {
      if (e.inplaceOnly) continue;
      for (const dev of ['cpu', 'cuda']) {
        const want = (e.autocast && e.autocast[dev]) || pol[dev].get(e.name.split('.')[0]) || null;
        assert.equal(kd._internal.autocastPolicy(e.name, dev), e.inplaceOnly ? null : want, `${e.name} on ${dev}`);
      }
    }
  });

  it('CUDA dtype decisions (float16 default), without a GPU', function () {
    const plan = kd._internal.autocastPlan;
    assert.deepEqual(plan('lower', 'float16', ['float32', 'float64', 'bfloat16', 'float16', 'int64', 'bool']).dtypes,
      ['float16', 'float64', 'float16', 'float16', 'int64', 'bool']);
    assert.deepEqual(plan('fp32', 'float16', ['float16', 'bfloat16', 'float64', 'int32']).dtypes, ['float32', 'float32', 'float64', 'int32']);
    assert.deepEqual(plan('promote', 'float16', ['float16', 'float16']).dtypes, ['float16', 'float16']);
    assert.deepEqual(plan('promote', 'float16', ['float16', 'float32', 'float64']).dtypes, ['float32', 'float32', 'float64']);
    assert.deepEqual(plan('promote', 'float16', ['int64', 'float16']).dtypes, ['int64', 'float16']);
    assert.deepEqual(plan('fp32SetOptDtype', 'float16', ['float16']), { dtypes: ['float16'], setDtype: 'float32' });
    assert.deepEqual(plan('fp32SetOptDtype', 'float16', ['float64']), { dtypes: ['float64'], setDtype: null });
    assert.deepEqual(plan('fp32SetOptDtype', 'float16', ['int64']), { dtypes: ['int64'], setDtype: null });
    assert.deepEqual(plan('lower', 'bfloat16', ['float32']).dtypes, ['bfloat16']);
    expectKdError(() => plan('nope', 'float16', []), 'KD_INVALID_ARGUMENT');
  });
});

describe("autocast: the CUDA table's policies run on CPU tensors (test hook)", function () {
  // kd._internal.autocastSetPolicy puts an op's CUDA policy in its CPU column, so the kernel
  // paths that only the CUDA table uses (fp32SetOptDtype, banned, promote of pointwise ops) run
  // here without a GPU.
  const set = kd._internal.autocastSetPolicy;
  const changed = [];
  const asCuda = (op) => {
    assert.equal(set(op, 'cpu', kd._internal.autocastPolicy(op, 'cuda')), true, `${op} has an Autocast kernel`);
    changed.push(op);
  };
  afterEach(function () { while (changed.length) set(changed.pop(), 'cpu', null); });

  it('fp32SetOptDtype: dtype=float32 unless given, only for an eligible first argument', function () {
    for (const op of ['softmax', 'logSoftmax', 'sum', 'cumsum', 'prod']) asCuda(op);
    const h = kd.randn(2, 3).to('bfloat16');
    const s0 = stats();
    cpu(() => {
      assert.equal(h.softmax(1).dtype, 'float32');
      assertValuesClose(values(h.softmax(1)), values(h.to('float32').softmax(1)), 'float32', 'softmax in float32');
      assert.equal(h.softmax(1, { dtype: 'float64' }).dtype, 'float64', 'an explicit dtype wins');
      assert.equal(h.to('float64').logSoftmax(1).dtype, 'float64', 'float64 is not eligible');
      assert.equal(h.sum().dtype, 'float32');
      assert.equal(h.cumsum(0).dtype, 'float32');
      assert.equal(h.prod().dtype, 'float32');
      assert.equal(kd.ones(3, { dtype: 'int32' }).sum().dtype, 'int64');
    });
    assert.equal(stats().casts - s0.casts, 0, 'no casts: the dtype argument does it');
  });

  it('fp32, promote and native', function () {
    for (const op of ['exp', 'pow', 'addcmul', 'atan2', 'layerNorm', 'vdot']) asCuda(op);
    const h = kd.randn(2, 4).to('bfloat16');
    const f = kd.randn(2, 4);
    cpu(() => {
      assert.equal(h.exp().dtype, 'float32');
      assert.equal(h.pow(2).dtype, 'float32');
      assert.equal(kd.addcmul(h, h, f).dtype, 'float32');
      assert.equal(kd.addcmul(h, h, h).dtype, 'bfloat16');
      assert.equal(kd.atan2(h, f.to('float64')).dtype, 'float64', 'float64 is ignored by promote, then the op promotes');
      const s0 = stats();
      const ln = F.layerNorm(h, [4], { weight: kd.ones(4).to('bfloat16'), bias: kd.zeros(4).to('bfloat16') });
      assert.equal(ln.dtype, 'float32');
      assert.equal(stats().casts - s0.casts, 3, 'the composite casts its three inputs once, nativeLayerNorm inside none');
      assert.equal(kd.vdot(f.select(0, 0), f.select(0, 1)).dtype, 'float32');
    });
  });

  it('banned: binaryCrossEntropy (PyTorch\'s message)', function () {
    asCuda('binaryCrossEntropy');
    const p = kd.full([3], 0.5);
    const e = expectKdError(() => cpu(() => F.binaryCrossEntropy(p, p)), 'KD_NOT_SUPPORTED');
    assert.match(e.message, /unsafe to autocast/);
    assert.equal(F.binaryCrossEntropy(p, p).dtype, 'float32', 'outside the scope it runs');
  });

  it('lower on a list longer than the stack slots (cat of 100 tensors, promote)', function () {
    const parts = Array.from({ length: 100 }, (_, i) => (i === 57 ? kd.ones(1) : kd.ones(1).to('bfloat16')));
    const s0 = stats();
    const r = cpu(() => kd.cat(parts));
    assert.equal(r.dtype, 'float32');
    assert.equal(stats().casts - s0.casts, 99);
    assert.deepEqual(values(r), Array(100).fill(1));
  });

  it('hook errors', function () {
    expectKdError(() => set('mm', 'cpu', 'nope'), 'KD_INVALID_ARGUMENT');
    expectKdError(() => set('noSuchOp', 'cpu', 'fp32'), 'KD_INVALID_ARGUMENT');
    assert.equal(set('relu', 'cpu', null), false, 'relu has no Autocast kernel');
  });
});

describe('autocast: bad input', function () {
  it('unknown device type, bad dtype, bad options -> errors with a code', function () {
    expectKdError(() => kd.autocast({ deviceType: 'tpu' }, () => {}), 'KD_INVALID_ARGUMENT');
    expectKdError(() => kd.autocast({ deviceType: 'cuda:0' }, () => {}), 'KD_INVALID_ARGUMENT');
    expectKdError(() => kd.autocast({}, () => {}), 'KD_INVALID_ARGUMENT');
    expectKdError(() => kd.autocast({ deviceType: 'cpu', dtype: 'int32' }, () => {}), 'KD_INVALID_ARGUMENT');
    expectKdError(() => kd.autocast({ deviceType: 'cpu', dtype: 'float8' }, () => {}), 'KD_INVALID_TYPE');
    expectKdError(() => kd.autocast({ deviceType: 'cpu', enabled: 1 }, () => {}), 'KD_INVALID_TYPE');
    expectKdError(() => kd.autocast({ deviceType: 'cpu' }), 'KD_INVALID_TYPE');
    expectKdError(() => kd.autocast('cpu', () => {}), 'KD_INVALID_TYPE');
    expectKdError(() => kd.isAutocastEnabled('gpu'), 'KD_INVALID_ARGUMENT');
    expectKdError(() => kd.getAutocastDtype(), 'KD_INVALID_ARGUMENT');
    assert.equal(kd.isAutocastEnabled('cpu'), false);
  });

  it('CPU autocast with float16 warns and disables, as PyTorch 1.13', async function () {
    const warnings = [];
    const emit = process.emitWarning;
    process.emitWarning = (message, opts) => warnings.push({ message, code: opts && opts.code });
    try {
      const a = kd.randn(2, 2);
      kd.autocast({ deviceType: 'cpu', dtype: 'float16' }, () => {
        assert.equal(kd.isAutocastEnabled('cpu'), false);
        assert.equal(kd.getAutocastDtype('cpu'), 'float16');
        assert.equal(kd.mm(a, a).dtype, 'float32');
      });
      kd.autocast({ deviceType: 'cuda', dtype: 'float32' }, () => assert.equal(kd.isAutocastEnabled('cuda'), false));
    } finally {
      process.emitWarning = emit;
    }
    assert.equal(warnings.length, 2);
    assert.match(warnings[0].message, /CPU Autocast only supports dtype of torch.bfloat16/);
    assert.equal(warnings[0].code, 'KD_AUTOCAST_DTYPE');
    assert.match(warnings[1].message, /CUDA Autocast only supports dtypes of torch.float16 and torch.bfloat16/);
  });
});

describe('amp.GradScaler', function () {
  const I = kd._internal;

  it('the fused unscale kernel: values and found-inf (fixture)', function () {
    for (const c of AC.unscale) {
      const gs = c.grads.map(buildArg);
      const found = kd.zeros([1]);
      const r = I.ampForeachNonFiniteCheckAndUnscale_(gs, found, kd.full([1], c.invScale, { dtype: 'float32' }));
      assert.deepEqual(r, []);
      assert.equal(found.item(), c.foundInf, `${c.name}: foundInf`);
      gs.forEach((g, i) => assertTensorClose(g, c.expected[i], `${c.name}: grad ${i}`));
    }
  });

  it('unscale: non-contiguous and large gradients (parallel), found-inf only ever set', function () {
    const big = kd.randn(300, 300);
    const nc = kd.randn(4, 6).t();
    const before = values(nc.contiguous());
    const found = kd.ones([1]);
    I.ampForeachNonFiniteCheckAndUnscale_([big, nc], found, kd.full([1], 0.5, { dtype: 'float32' }));
    assert.equal(found.item(), 1, 'an earlier inf stays recorded');
    assertValuesClose(values(nc.contiguous()), before.map((v) => v * 0.5), 'float32', 'non-contiguous');
    const f2 = kd.zeros([1]);
    const g = kd.zeros(70000);
    g.view(-1).slice(0, 69999, 70000).fill_(NaN);
    I.ampForeachNonFiniteCheckAndUnscale_([g], f2, kd.full([1], 2, { dtype: 'float32' }));
    assert.equal(f2.item(), 1, 'a NaN at the end of a big tensor');
    I.ampForeachNonFiniteCheckAndUnscale_([], f2, kd.full([1], 2, { dtype: 'float32' }));
  });

  it('kernel errors (PyTorch messages)', function () {
    const g = [kd.ones(2)];
    expectKdError(() => I.ampForeachNonFiniteCheckAndUnscale_(g, kd.zeros(2), kd.ones(1)), 'KD_INVALID_ARGUMENT');
    expectKdError(() => I.ampForeachNonFiniteCheckAndUnscale_(g, kd.zeros(1), kd.ones(1, { dtype: 'float64' })), 'KD_DTYPE_MISMATCH');
    expectKdError(() => I.ampForeachNonFiniteCheckAndUnscale_([kd.ones(2, { dtype: 'int32' })], kd.zeros(1), kd.ones(1)), 'KD_NOT_SUPPORTED');
    const e = expectKdError(() => I.ampUpdateScale_(kd.ones(1), kd.zeros(1), kd.zeros(1), 2, 0.5, 10), 'KD_DTYPE_MISMATCH');
    assert.match(e.message, /growth_tracker must be an int tensor/);
    assert.match(expectKdError(() => I.ampUpdateScale_(kd.ones(2), kd.zeros(1, { dtype: 'int32' }), kd.zeros(1), 2, 0.5, 10)).message,
      /current_scale must be a 1-element tensor/);
  });

  it('the scale update sequence (fixture: growth, backoff, refused growth past float32)', function () {
    for (const run of AC.scalerSequence) {
      const scale = kd.full([1], run.initScale, { dtype: 'float32' });
      const tracker = kd.zeros([1], { dtype: 'int32' });
      run.foundInf.forEach((f, i) => {
        I.ampUpdateScale_(scale, tracker, kd.full([1], f, { dtype: 'float32' }), run.growthFactor, run.backoffFactor, run.growthInterval);
        assert.deepEqual([scale.item(), tracker.item()], run.expected[i], `step ${i}`);
      });
    }
  });

  it('training with SGD: scaled loss, skipped steps, scale and parameters (fixture)', function () {
    const T = AC.scalerTraining;
    const w = buildArg(T.w).requiresGrad_();
    const b = buildArg(T.b).requiresGrad_();
    const opt = new kd.optim.SGD([w, b], { lr: T.lr });
    const scaler = new kd.amp.GradScaler({ initScale: T.initScale, growthFactor: T.growthFactor,
      backoffFactor: T.backoffFactor, growthInterval: T.growthInterval });
    assert.equal(scaler.getScale(), T.initScale);
    T.steps.forEach((s, i) => {
      opt.zeroGrad();
      const loss = cpu(() => F.mseLoss(F.linear(buildArg(T.x[i]), w, b), buildArg(T.y[i])));
      closeLoose(loss, s.loss, `step ${i} loss`);
      const scaled = scaler.scale(loss);
      closeLoose(scaled, s.scaledLoss, `step ${i} scaled loss`);
      scaled.backward();
      const wBefore = values(w);
      scaler.step(opt);
      if (s.skipped) assert.deepEqual(values(w), wBefore, `step ${i} skipped`);
      scaler.update();
      assert.equal(scaler.getScale(), s.scale, `step ${i} scale`);
      assert.equal(scaler.stateDict()._growthTracker, s.growthTracker, `step ${i} tracker`);
      closeLoose(w, s.w, `step ${i} w`, { rtol: 2e-2, atol: 5e-3 });
      closeLoose(b, s.b, `step ${i} b`, { rtol: 2e-2, atol: 5e-3 });
    });
  });

  it('unscale_ before step (gradient clipping), and the stage errors', function () {
    const w = kd.randn(3, { requiresGrad: true });
    const opt = new kd.optim.SGD([w], { lr: 0.1 });
    const scaler = new kd.amp.GradScaler({ initScale: 8 });
    expectKdError(() => scaler.step(opt), 'KD_INVALID_ARGUMENT');
    expectKdError(() => scaler.update(), 'KD_INVALID_ARGUMENT');
    scaler.scale(w.sum()).backward();
    assert.deepEqual(values(w.grad), [8, 8, 8]);
    scaler.unscale_(opt);
    assert.deepEqual(values(w.grad), [1, 1, 1]);
    assert.match(expectKdError(() => scaler.unscale_(opt)).message, /already been called on this optimizer since the last update/);
    scaler.step(opt);
    assert.match(expectKdError(() => scaler.step(opt)).message, /step\(\) has already been called since the last update/);
    assert.match(expectKdError(() => scaler.unscale_(opt)).message, /unscale_\(\) is being called after step/);
    scaler.update();
    scaler.update(1024);
    assert.equal(scaler.getScale(), 1024);
    scaler.update(kd.full([1], 32, { dtype: 'float32' }));
    assert.equal(scaler.getScale(), 32);
    expectKdError(() => scaler.update(kd.full([2], 32, { dtype: 'float32' })), 'KD_INVALID_ARGUMENT');
    // float16 gradients are refused
    const h = kd.randn(2, { dtype: 'float16', requiresGrad: true });
    const o2 = new kd.optim.SGD([h], { lr: 0.1 });
    scaler.scale(h.sum()).backward();
    assert.match(expectKdError(() => scaler.unscale_(o2)).message, /Attempting to unscale FP16 gradients/);
  });

  it('training steps inside kd.tidy keep the scaler\'s state (the first scale() runs in the scope)', function () {
    const w = kd.randn(3, { requiresGrad: true });
    const opt = new kd.optim.SGD([w], { lr: 0.1 });
    const scaler = new kd.amp.GradScaler({ initScale: 8, growthInterval: 1 });
    for (let i = 0; i < 3; i++) {
      kd.tidy(() => {
        opt.zeroGrad();
        scaler.scale(w.sum()).backward();
        scaler.step(opt);
        scaler.update();
      });
    }
    assert.equal(scaler.getScale(), 64); // grew after each of the three clean steps
    assert.equal(scaler._getGrowthTracker(), 0);
    kd.dispose([w, w.grad]);
  });

  it('scale() of arrays, disabled scaler, stateDict round trip, bad options', function () {
    const scaler = new kd.amp.GradScaler({ initScale: 4 });
    const [a, [b]] = scaler.scale([kd.ones(2), [kd.full([1], 3, { dtype: 'float32' })]]);
    assert.deepEqual(values(a), [4, 4]);
    assert.deepEqual(values(b), [12]);
    const off = new kd.amp.GradScaler({ enabled: false });
    const t = kd.ones(2);
    assert.equal(off.scale(t), t);
    assert.equal(off.getScale(), 1);
    assert.deepEqual(off.stateDict(), {});
    assert.equal(off.isEnabled(), false);
    const sd = scaler.stateDict();
    assert.deepEqual(sd, { scale: 4, growthFactor: 2, backoffFactor: 0.5, growthInterval: 2000, _growthTracker: 0 });
    const other = new kd.amp.GradScaler();
    other.loadStateDict({ ...sd, scale: 128, _growthTracker: 3 });
    assert.equal(other.getScale(), 128);
    assert.equal(other.stateDict()._growthTracker, 3);
    assert.match(expectKdError(() => other.loadStateDict({})).message, /The source state dict is empty/);
    assert.match(expectKdError(() => new kd.amp.GradScaler({ growthFactor: 1 })).message, /growth factor must be > 1.0/);
    assert.match(expectKdError(() => new kd.amp.GradScaler({ backoffFactor: 1 })).message, /backoff factor must be < 1.0/);
    expectKdError(() => new kd.amp.GradScaler({ initScale: 'big' }), 'KD_INVALID_TYPE');
    assert.equal(kd.amp.autocast, kd.autocast);
  });
});
