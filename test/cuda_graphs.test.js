// cuda_graphs.test.js - CUDA graphs (kd.cuda.CUDAGraph, kd.cuda.graph, graphPoolHandle,
// makeGraphedCallables; lib/cuda_graphs.js, cuda/graphs.cu): a replay computes exactly what the
// eager code computes, is one launch, uses the graph's private memory pool (shared on request,
// returned by reset()), and what cannot be captured fails with KD_CUDA_GRAPH_CAPTURE leaving the
// device usable. Runs where CUDA is available: on a GPU, or on the emulated GPU in `npm test`
// (where the launch counts are checked too).
'use strict';

const { kd, assert, collectGarbage } = require('./helpers');

const same = (a, b, what) => {
  const x = a.dataSync(), y = b.dataSync();
  assert.strictEqual(x.length, y.length, `${what}: lengths`);
  for (let i = 0; i < x.length; i++) assert.ok(Object.is(x[i], y[i]), `${what}: element ${i}: ${x[i]} vs ${y[i]}`);
};

const mlp = () => kd.tidy(() => new kd.nn.Sequential(new kd.nn.Linear(8, 16), new kd.nn.ReLU(), new kd.nn.Linear(16, 4)));
const dropoutMlp = () => kd.tidy(() => new kd.nn.Sequential(new kd.nn.Linear(8, 16), new kd.nn.ReLU(), new kd.nn.Dropout(0.5), new kd.nn.Linear(16, 4)));

// A model from build() on the GPU with the parameters of `init`, a capturable Adam, and its
// training step (mse loss, backward, optimizer step) returning the loss.
const trainer = (build, init) => {
  const model = build().to('cuda');
  kd.noGrad(() => model.parameters().forEach((p, i) => p.copy_(init.parameters()[i].to('cuda'))));
  const opt = new kd.optim.Adam(model.parameters(), { lr: 0.01, capturable: true });
  const step = (x, y) => kd.tidy(() => {
    const loss = kd.nn.functional.mseLoss(model.forward(x), y);
    loss.backward();
    opt.step();
    return loss;
  });
  return { model, opt, step };
};

describe('CUDA graphs', function () {
  if (!kd.cuda.isAvailable()) return; // nothing to capture without a CUDA device
  this.timeout(120000);
  const emulated = kd.cuda.emulator.isEnabled();
  const reserved = () => kd.cuda.memoryStats()['reserved_bytes.all.current'];

  it('an MLP forward: each replay equals the eager forward exactly, as one launch', function () {
    kd.manualSeed(1);
    const model = mlp().to('cuda');
    const xs = [0, 1, 2, 3].map(() => kd.randn([5, 8]));
    const staticX = xs[0].to('cuda');
    kd.noGrad(() => model.forward(staticX)).dispose(); // warm-up
    const g = new kd.cuda.CUDAGraph();
    const out = kd.cuda.graph(g, () => kd.noGrad(() => model.forward(staticX)));
    assert.deepStrictEqual(out.shape, [5, 4]);
    for (const x of xs) {
      const xc = x.to('cuda');
      staticX.copy_(xc);
      const before = emulated ? kd.cuda.emulator.stats() : null;
      g.replay();
      if (emulated) {
        const after = kd.cuda.emulator.stats();
        assert.strictEqual(after.launches - before.launches, 1, 'a replay is one launch');
        assert.strictEqual(after.graphLaunches - before.graphLaunches, 1);
        assert.ok(after.graphKernels - before.graphKernels >= 3, `the replay ran ${after.graphKernels - before.graphKernels} kernels`);
      }
      const eager = kd.noGrad(() => model.forward(xc));
      same(out, eager, 'replay vs eager');
      kd.dispose([xc, eager]);
    }
    g.reset();
    kd.dispose([out, staticX, ...xs, ...model.parameters()]);
  });

  it('an MLP training step with Adam (capturable): replays match eager steps, one launch each', function () {
    kd.manualSeed(2);
    const init = mlp();
    const data = [0, 1, 2, 3, 4].map(() => [kd.randn([6, 8]), kd.randn([6, 4])]);
    const make = () => trainer(mlp, init);
    // eager reference
    const ref = make();
    // graphed: warm up one step (lazily made state and handles), capture the next ones
    const gr = make();
    const sx = data[0][0].to('cuda'), sy = data[0][1].to('cuda');
    for (const m of [ref, gr]) {
      m.opt.zeroGrad();
      m.step(sx, sy).dispose();
    }
    gr.opt.zeroGrad();
    const g = new kd.cuda.CUDAGraph();
    const staticLoss = kd.cuda.graph(g, () => gr.step(sx, sy));
    for (const [x, y] of data.slice(1)) {
      sx.copy_(x.to('cuda'));
      sy.copy_(y.to('cuda'));
      const before = emulated ? kd.cuda.emulator.stats() : null;
      g.replay();
      if (emulated) assert.strictEqual(kd.cuda.emulator.stats().launches - before.launches, 1, 'one launch per step');
      ref.opt.zeroGrad();
      const loss = ref.step(x.to('cuda'), y.to('cuda'));
      same(staticLoss, loss, 'loss');
      ref.model.parameters().forEach((p, i) => same(gr.model.parameters()[i], p, `parameter ${i}`));
      loss.dispose();
    }
    g.reset();
  });

  it('random ops: replay k draws what the k-th eager run draws from the same seed', function () {
    const cuda = { device: 'cuda' };
    const differ = (a, b) => Array.from(a.dataSync()).some((v, i) => v !== b.dataSync()[i]);
    const runs = (seed, k, fn) => {
      kd.manualSeed(seed);
      return Array.from({ length: k }, () => fn().map((t) => t.to('cpu')));
    };
    // randn: fresh numbers on each replay, reproduced after manualSeed
    const g = new kd.cuda.CUDAGraph();
    const out = kd.cuda.graph(g, () => kd.randn([64], cuda));
    const replayed = runs(7, 3, () => { g.replay(); return [out]; });
    const eager = runs(7, 3, () => [kd.randn([64], cuda)]);
    replayed.forEach(([t], k) => same(t, eager[k][0], `randn: replay ${k} vs eager run ${k}`));
    assert.ok(differ(replayed[0][0], replayed[1][0]) && differ(replayed[1][0], replayed[2][0]), 'each replay draws fresh numbers');
    same(runs(7, 1, () => { g.replay(); return [out]; })[0][0], replayed[0][0], 'manualSeed then a replay reproduces');
    kd.manualSeed(7);
    g.replay();
    same(kd.randn([64], cuda).to('cpu'), eager[1][0], 'a replay advances the generator as an eager run does');
    g.reset();
    // several kinds in one graph (uniform, integer, bernoulli, the in-place fillers, dropout)
    const x = kd.randn([33], cuda);
    const several = () => [kd.rand([5], cuda), kd.randint(0, 100, [7], cuda), x.bernoulli({ p: 0.3 }), x.clone().normal_(),
      x.clone().exponential_(), kd.nn.functional.dropout(x, { p: 0.5, training: true }), kd.rand([3], { device: 'cuda', dtype: 'float64' })];
    several(); // warm-up
    const g2 = new kd.cuda.CUDAGraph();
    const outs = kd.cuda.graph(g2, several);
    const replayed2 = runs(11, 3, () => { g2.replay(); return outs; });
    const eager2 = runs(11, 3, several);
    replayed2.forEach((ts, k) => ts.forEach((t, i) => same(t, eager2[k][i], `op ${i}: replay ${k} vs eager run ${k}`)));
    assert.ok(differ(replayed2[0][0], replayed2[1][0]), 'rand: fresh numbers on each replay');
    g2.reset();
    // a random op on a side stream joined to the capture (fork and join by events)
    const side = new kd.cuda.Stream();
    const forked = () => {
      side.waitStream(kd.cuda.currentStream());
      const r = kd.cuda.withStream(side, () => kd.rand([9], cuda));
      kd.cuda.currentStream().waitStream(side);
      return [r, kd.randn([4], cuda)];
    };
    const g3 = new kd.cuda.CUDAGraph();
    const outs3 = kd.cuda.graph(g3, forked);
    const replayed3 = runs(13, 2, () => { g3.replay(); return outs3; });
    const eager3 = runs(13, 2, forked);
    replayed3.forEach((ts, k) => ts.forEach((t, i) => same(t, eager3[k][i], `joined stream: op ${i}: replay ${k} vs eager run ${k}`)));
    g3.reset();
  });

  it('a dropout MLP training step: replays match eager steps from the same seed', function () {
    kd.manualSeed(3);
    const init = dropoutMlp();
    const data = [0, 1, 2, 3, 4].map(() => [kd.randn([6, 8]).to('cuda'), kd.randn([6, 4]).to('cuda')]);
    const make = () => trainer(dropoutMlp, init);
    const warm = (t) => {
      kd.manualSeed(4);
      t.opt.zeroGrad();
      t.step(data[0][0], data[0][1]).dispose();
      t.opt.zeroGrad();
    };
    // graphed: warm up, capture, then replay the steps from seed 5
    const gr = make();
    warm(gr);
    const sx = data[0][0].clone(), sy = data[0][1].clone();
    const g = new kd.cuda.CUDAGraph();
    const staticLoss = kd.cuda.graph(g, () => gr.step(sx, sy));
    kd.manualSeed(5);
    const graphed = data.slice(1).map(([x, y]) => {
      sx.copy_(x);
      sy.copy_(y);
      const before = emulated ? kd.cuda.emulator.stats() : null;
      g.replay();
      if (emulated) assert.strictEqual(kd.cuda.emulator.stats().launches - before.launches, 1, 'one launch per step');
      return [staticLoss.to('cpu'), ...gr.model.parameters().map((p) => p.to('cpu'))];
    });
    // eager: the same steps from seed 5
    const ref = make();
    warm(ref);
    kd.manualSeed(5);
    data.slice(1).forEach(([x, y], k) => {
      ref.opt.zeroGrad();
      const loss = ref.step(x, y);
      same(graphed[k][0], loss, `step ${k}: loss`);
      ref.model.parameters().forEach((p, i) => same(graphed[k][i + 1], p, `step ${k}: parameter ${i}`));
      loss.dispose();
    });
    assert.ok(graphed[0][0].item() !== graphed[1][0].item(), 'losses change from step to step');
    g.reset();
  });

  it('pools: captures share a pool on request, reset() gives the memory back', function () {
    collectGarbage(); // tensors earlier tests left to the GC are freed now, not in the middle of the counts
    kd.cuda.emptyCache();
    const base = reserved();
    const x = kd.randn([256, 256], { device: 'cuda' });
    kd.tidy(() => x.mul(2).add(1)).dispose(); // warm-up
    const pool = kd.cuda.graphPoolHandle();
    assert.strictEqual(pool.uses(), 0);
    const g1 = new kd.cuda.CUDAGraph(), g2 = new kd.cuda.CUDAGraph();
    const y1 = kd.cuda.graph(g1, () => kd.tidy(() => x.mul(2).add(1)), { pool });
    const afterG1 = reserved();
    assert.ok(afterG1 > base, 'the capture reserved memory for its pool');
    const y2 = kd.cuda.graph(g2, () => kd.tidy(() => x.mul(3).add(1)), { pool: g1.pool() });
    assert.strictEqual(pool.uses(), 2);
    assert.strictEqual(g2.pool()._id, pool._id);
    assert.strictEqual(reserved(), afterG1, 'the second capture reused the shared pool');
    kd.cuda.emptyCache();
    assert.strictEqual(reserved(), afterG1, 'emptyCache keeps the memory of live graphs');
    g1.replay();
    g2.replay();
    kd.tidy(() => { // (the eager references are freed here, so that the pools' memory is all that is left below)
      same(y1, x.mul(2).add(1), 'g1');
      same(y2, x.mul(3).add(1), 'g2');
    });
    // a graph with its own pool reserves more
    const g3 = new kd.cuda.CUDAGraph();
    const y3 = kd.cuda.graph(g3, () => kd.tidy(() => x.mul(4)));
    assert.ok(reserved() > afterG1, 'a new pool is separate');
    assert.notStrictEqual(g3.pool()._id, pool._id);
    g1.reset();
    assert.strictEqual(pool.uses(), 1);
    g2.reset();
    assert.strictEqual(pool.uses(), 0);
    g3.reset();
    kd.dispose([y1, y2, y3, x]);
    kd.cuda.emptyCache();
    assert.strictEqual(reserved(), base, 'reset graphs give their pools back');
  });

  it('a graph keeps the tensors it captured: a replay after dispose() never writes into new tensors', function () {
    const x = kd.zeros([1024], { device: 'cuda' });
    const y = kd.zeros([1024], { device: 'cuda' });
    x.add_(7); // warm-up
    const g = new kd.cuda.CUDAGraph();
    const out = kd.cuda.graph(g, () => { x.add_(7); y.copy_(x); return x.mul(2); }); // an input from before the capture, one from the pool
    kd.dispose([x, y, out]);
    const fresh = () => [0, 1, 2, 3].map(() => kd.zeros([1024], { device: 'cuda' }));
    const check = (ts, what) => ts.forEach((t, i) => assert.deepStrictEqual(Array.from(new Set(t.dataSync())), [0], `${what}: fresh tensor ${i}`));
    const a = fresh();
    g.replay();
    g.replay();
    check(a, 'after dispose');
    kd.dispose(a);
    kd.cuda.emptyCache(); // the kept storages are not cached blocks: nothing the graph uses is given back
    const b = fresh();
    g.replay();
    check(b, 'after emptyCache');
    kd.dispose(b);
    collectGarbage();
    const before = kd.cuda.memoryAllocated();
    g.dispose(); // releases what it kept
    assert.ok(kd.cuda.memoryAllocated() < before, 'dispose() released the kept storages');
    assert.throws(() => g.replay(), /has not been captured/);
  });

  it('makeGraphedCallables: graphed forward and backward give the eager outputs and gradients (with dropout too)', function () {
    for (const build of [mlp, dropoutMlp]) {
      kd.manualSeed(4);
      const init = build();
      const copyOf = () => {
        const m = build().to('cuda');
        kd.noGrad(() => m.parameters().forEach((p, i) => p.copy_(init.parameters()[i].to('cuda'))));
        return m;
      };
      const eager = copyOf();
      const graphed = kd.cuda.makeGraphedCallables(copyOf(), [kd.randn([5, 8], { device: 'cuda' })]);
      for (let step = 0; step < 3; step++) {
        const x = kd.randn([5, 8], { device: 'cuda' }), y = kd.randn([5, 4], { device: 'cuda' });
        const outs = [graphed, eager].map((m) => {
          m.zeroGrad();
          kd.manualSeed(100 + step); // dropout draws the same mask in both
          const out = m.forward(x);
          kd.nn.functional.mseLoss(out, y).backward();
          return out.detach().clone();
        });
        same(outs[0], outs[1], `${build.name}: step ${step}: output`);
        eager.parameters().forEach((p, i) => same(graphed.parameters()[i].grad, p.grad, `${build.name}: step ${step}: gradient ${i}`));
      }
      graphed.eval();
      eager.eval();
      const x = kd.randn([2, 8], { device: 'cuda' });
      same(kd.noGrad(() => graphed.forward(x)), kd.noGrad(() => eager.forward(x)), `${build.name}: eval mode runs the module itself`);
    }
  });

  it('deferred index checks are captured: a bad index in a replay is reported at the next sync point', function () {
    const x = kd.arange(12, { dtype: 'float32', device: 'cuda' }).reshape([4, 3]);
    const idx = kd.tensor([2, 0], { dtype: 'int64', device: 'cuda' });
    x.indexSelect(0, idx).dispose(); // warm-up (the device's fault record)
    const g = new kd.cuda.CUDAGraph();
    const y = kd.cuda.graph(g, () => x.indexSelect(0, idx));
    idx.copy_(kd.tensor([3, 1], { dtype: 'int64', device: 'cuda' }));
    g.replay();
    assert.deepStrictEqual(Array.from(y.dataSync()), [9, 10, 11, 3, 4, 5]);
    idx.copy_(kd.tensor([1, 4], { dtype: 'int64', device: 'cuda' }));
    g.replay();
    assert.throws(() => y.dataSync(), (e) => e.code === 'KD_INDEX_OUT_OF_RANGE' && /out of range/.test(e.message));
    idx.copy_(kd.tensor([0, 0], { dtype: 'int64', device: 'cuda' }));
    g.replay();
    assert.deepStrictEqual(Array.from(y.dataSync()), [0, 1, 2, 0, 1, 2], 'later replays run normally');
    g.reset();
    kd.dispose([x, idx, y]);
  });

  it('an async function can be captured', async function () {
    const x = kd.randn([4, 4], { device: 'cuda' });
    x.exp().dispose();
    const g = new kd.cuda.CUDAGraph();
    const y = await kd.cuda.graph(g, async () => {
      await null;
      return x.exp();
    });
    x.copy_(kd.ones([4, 4], { device: 'cuda' }));
    g.replay();
    same(y, x.exp(), 'exp replayed');
    g.reset();
    kd.dispose([x, y]);
  });

  it('what cannot be captured fails with KD_CUDA_GRAPH_CAPTURE and leaves the device usable', async function () {
    const x = kd.tensor([1, 0, 2], { dtype: 'float32', device: 'cuda' });
    x.mul(2).dispose();
    const refused = [
      ['item()', () => x.sum().item()],
      ['dataSync()', () => x.mul(2).dataSync()],
      ['nonzero', () => kd.nonzero(x)],
      ['maskedSelect', () => x.maskedSelect(x.gt(0))],
      ['unique', () => kd.unique(x)],
      ['multinomial (its check reads the device)', () => x.abs().multinomial(2, true)],
    ];
    for (const [what, fn] of refused) {
      const g = new kd.cuda.CUDAGraph();
      assert.throws(() => kd.cuda.graph(g, fn), (e) => e instanceof kd.KindlingError && e.code === 'KD_CUDA_GRAPH_CAPTURE', what);
      assert.throws(() => g.replay(), /has not been captured/, `${what}: no graph`);
      assert.strictEqual(kd.cuda.isCurrentStreamCapturing(), false);
      assert.deepStrictEqual(Array.from(x.mul(3).dataSync()), [3, 0, 6], `${what}: the device works afterwards`);
    }
    for (const [what, fn] of [['synchronize()', () => kd.cuda.synchronize()], ['dataAsync()', () => x.dataAsync()]]) {
      const g = new kd.cuda.CUDAGraph();
      await assert.rejects(kd.cuda.graph(g, async () => fn()), (e) => e.code === 'KD_CUDA_GRAPH_CAPTURE', what);
      assert.deepStrictEqual(Array.from(await x.add(1).dataAsync()), [2, 1, 3], `${what}: the device works afterwards`);
    }
    const p = kd.randn([3], { device: 'cuda' }).requiresGrad_();
    p.grad = kd.onesLike(p);
    const fused = new kd.optim.Adam([p]);
    fused.step();
    assert.throws(() => kd.cuda.graph(new kd.cuda.CUDAGraph(), () => fused.step()),
      (e) => e.code === 'KD_CUDA_GRAPH_CAPTURE' && /capturable/.test(e.message), 'a non-capturable Adam step');
    // every capture mode of PyTorch's capture_error_mode captures and replays
    for (const captureErrorMode of ['global', 'thread_local', 'relaxed']) {
      const gm = new kd.cuda.CUDAGraph();
      const r = kd.cuda.graph(gm, () => x.mul(5), { captureErrorMode });
      gm.replay();
      same(r, x.mul(5), captureErrorMode);
      gm.reset();
    }
    assert.throws(() => kd.cuda.graph(new kd.cuda.CUDAGraph(), () => 1, { captureErrorMode: 'loose' }), /captureErrorMode/);
    const g = new kd.cuda.CUDAGraph();
    assert.throws(() => g.captureBegin(), /non-default stream/);
    assert.throws(() => kd.cuda.graph(g, () => 1, { pool: 3 }), /pool must be a handle/);
    x.dispose();
  });
});
