// cuda_graphs.test.js - CUDA graphs (kd.cuda.CUDAGraph, kd.cuda.graph, graphPoolHandle,
// makeGraphedCallables; lib/cuda_graphs.js, cuda/graphs.cu): a replay computes exactly what the
// eager code computes, is one launch, uses the graph's private memory pool (shared on request,
// returned by reset()), and what cannot be captured fails with KD_CUDA_GRAPH_CAPTURE leaving the
// device usable. Runs where CUDA is available: on a GPU, or on the emulated GPU in `npm test`
// (where the launch counts are checked too).
'use strict';

const { kd, assert } = require('./helpers');

const same = (a, b, what) => {
  const x = a.dataSync(), y = b.dataSync();
  assert.strictEqual(x.length, y.length, `${what}: lengths`);
  for (let i = 0; i < x.length; i++) assert.ok(Object.is(x[i], y[i]), `${what}: element ${i}: ${x[i]} vs ${y[i]}`);
};

const mlp = () => kd.tidy(() => new kd.nn.Sequential(new kd.nn.Linear(8, 16), new kd.nn.ReLU(), new kd.nn.Linear(16, 4)));

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
    const make = () => {
      const model = mlp().to('cuda');
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

  it('pools: captures share a pool on request, reset() gives the memory back', function () {
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
    same(y1, kd.tidy(() => x.mul(2).add(1)), 'g1');
    same(y2, kd.tidy(() => x.mul(3).add(1)), 'g2');
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

  it('makeGraphedCallables: graphed forward and backward give the eager outputs and gradients', function () {
    kd.manualSeed(4);
    const init = mlp();
    const copyOf = () => {
      const m = mlp().to('cuda');
      kd.noGrad(() => m.parameters().forEach((p, i) => p.copy_(init.parameters()[i].to('cuda'))));
      return m;
    };
    const eager = copyOf();
    const graphed = kd.cuda.makeGraphedCallables(copyOf(), [kd.randn([5, 8], { device: 'cuda' })]);
    for (let step = 0; step < 3; step++) {
      const x = kd.randn([5, 8], { device: 'cuda' }), y = kd.randn([5, 4], { device: 'cuda' });
      const outs = [graphed, eager].map((m) => {
        m.zeroGrad();
        const out = m.forward(x);
        kd.nn.functional.mseLoss(out, y).backward();
        return out.detach().clone();
      });
      same(outs[0], outs[1], `step ${step}: output`);
      eager.parameters().forEach((p, i) => same(graphed.parameters()[i].grad, p.grad, `step ${step}: gradient ${i}`));
    }
    graphed.eval();
    const x = kd.randn([2, 8], { device: 'cuda' });
    same(kd.noGrad(() => graphed.forward(x)), kd.noGrad(() => eager.forward(x)), 'eval mode runs the module itself');
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
    ];
    for (const [what, fn] of refused) {
      const g = new kd.cuda.CUDAGraph();
      assert.throws(() => kd.cuda.graph(g, fn), (e) => e instanceof kd.KindlingError && e.code === 'KD_CUDA_GRAPH_CAPTURE', what);
      assert.throws(() => g.replay(), /has not been captured/, `${what}: no graph`);
      assert.strictEqual(kd.cuda.isCurrentStreamCapturing(), false);
      assert.deepStrictEqual(Array.from(x.mul(3).dataSync()), [3, 0, 6], `${what}: the device works afterwards`);
    }
    for (const [what, fn] of [['synchronize()', () => kd.cuda.synchronize()], ['data()', () => x.data()]]) {
      const g = new kd.cuda.CUDAGraph();
      await assert.rejects(kd.cuda.graph(g, async () => fn()), (e) => e.code === 'KD_CUDA_GRAPH_CAPTURE', what);
      assert.deepStrictEqual(Array.from(await x.add(1).data()), [2, 1, 3], `${what}: the device works afterwards`);
    }
    // random ops take the generator's seed and offset at launch: a replay would repeat the
    // capture's numbers, so they are refused (the capture discarded, the device usable)
    const probs = kd.tensor([0.2, 0.3, 0.5], { device: 'cuda' });
    const randomOps = [
      ['rand', () => kd.rand([4], { device: 'cuda' })],
      ['randn', () => kd.randn([4], { device: 'cuda' })],
      ['randint', () => kd.randint(0, 5, [4], { device: 'cuda' })],
      ['randperm', () => kd.randperm(4, { device: 'cuda' })],
      ['dropout', () => kd.nn.functional.dropout(x, { p: 0.5, training: true })],
      ['bernoulli', () => x.bernoulli({ p: 0.5 })],
      ['uniform_', () => x.clone().uniform_()],
      ['normal_', () => x.clone().normal_()],
      ['exponential_', () => x.clone().exponential_()],
      ['multinomial', () => probs.multinomial(2, true)],
    ];
    for (const [what, fn] of randomOps) {
      fn().dispose(); // eager: fine
      const g = new kd.cuda.CUDAGraph();
      assert.throws(() => kd.cuda.graph(g, fn), (e) => e instanceof kd.KindlingError && e.code === 'KD_CUDA_GRAPH_CAPTURE' &&
        /random ops .* cannot be captured in a CUDA graph yet/.test(e.message) && /repeat the numbers/.test(e.message), what);
      assert.throws(() => g.replay(), /has not been captured/, `${what}: no graph`);
      assert.strictEqual(kd.cuda.isCurrentStreamCapturing(), false);
      assert.deepStrictEqual(Array.from(x.mul(3).dataSync()), [3, 0, 6], `${what}: the device works afterwards`);
      kd.manualSeed(5);
      const a = fn().to('cpu');
      kd.manualSeed(5);
      same(fn().to('cpu'), a, `${what}: random ops work afterwards`);
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
