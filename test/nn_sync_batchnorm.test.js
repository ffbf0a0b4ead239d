// nn_sync_batchnorm.test.js - kd.nn.SyncBatchNorm (lib/nn/sync_batchnorm.js) against PyTorch 1.13
// (test/fixtures/parallel.json, tools/fixtures/parallel.py): PyTorch's errors (a CPU input in
// every mode, dims, channels, no process group), repr, convertSyncBatchnorm on a model (types,
// training flags, shared parameters and buffers, state-dict keys, repr); on CUDA (the emulated
// GPU), the outputs, gradients and running statistics of eval mode and of training in a group of
// one process, in float64, against what PyTorch's SyncBatchNorm computes without synchronising.
'use strict';

const { kd, assert, fixture, assertArrayClose } = require('./helpers');

const { syncbn: fx } = fixture('parallel');
const { SyncBatchNorm } = kd.nn;
const f64 = { dtype: 'float64' };
const oneProcess = { size: () => 1 };

describe('kd.nn.SyncBatchNorm', () => {
  it('prints as PyTorch, takes processGroup as an option or the sixth argument', () => {
    assert.strictEqual(String(new SyncBatchNorm(4)), fx.repr[0]);
    assert.strictEqual(String(new SyncBatchNorm(2, { eps: 1e-3, momentum: null, affine: false, trackRunningStats: false })), fx.repr[1]);
    assert.strictEqual(String(new SyncBatchNorm(2, 1e-3, null, false, false, oneProcess)), fx.repr[1]);
    assert.strictEqual(new SyncBatchNorm(2, 1e-3, null, false, false, oneProcess).processGroup, oneProcess);
    assert.strictEqual(new SyncBatchNorm(2, { processGroup: oneProcess }).processGroup, oneProcess);
    assert.strictEqual(new SyncBatchNorm(2).processGroup, null);
    assert.deepStrictEqual(Object.keys(new SyncBatchNorm(2).stateDict()), ['weight', 'bias', 'running_mean', 'running_var', 'num_batches_tracked']);
  });

  it('refuses a CPU input in every mode, before any other check (PyTorch\'s message)', () => {
    const m = new SyncBatchNorm(3);
    for (const [x, mode] of [[kd.randn([2, 3]), 'eval'], [kd.randn([2, 3]), 'train'], [kd.randn([3]), 'train']]) {
      m.train(mode === 'train');
      assert.throws(() => m(x), { code: 'KD_DEVICE_MISMATCH', message: fx.errors.cpu_input.message });
    }
    assert.strictEqual(fx.errors.cpu_input_1d.message, fx.errors.cpu_input.message);
    assert.strictEqual(m.numBatchesTracked.item(), 0);
  });

  it('convertSyncBatchnorm converts as PyTorch 1.13 (shared tensors, training flags, keys, repr)', () => {
    const model = new kd.nn.Sequential(new kd.nn.Conv2d(2, 3, 1), new kd.nn.BatchNorm2d(3),
      new kd.nn.Sequential(new kd.nn.Linear(4, 4), new kd.nn.BatchNorm1d(4, { momentum: null, affine: false })),
      new kd.nn.BatchNorm3d(2, { trackRunningStats: false }), new SyncBatchNorm(5, { eps: 1e-3 }));
    model.getSubmodule('2').eval();
    model.getSubmodule('3').eval();
    const before = model.stateDict({ keepVars: true });
    const oldBn = model.getSubmodule('1');
    model.getSubmodule('1').qconfig = 'q';
    const conv = SyncBatchNorm.convertSyncBatchnorm(model, oneProcess);
    assert.strictEqual(conv, model);
    assert.deepStrictEqual(conv.namedModules().map(([n, m]) => [n, m.constructor.name, m.training]), fx.convert.modules);
    assert.deepStrictEqual(Object.keys(conv.stateDict()), fx.convert.stateDictKeys);
    const after = conv.stateDict({ keepVars: true });
    for (const k of Object.keys(before)) assert.strictEqual(after[k], before[k], k); // the same tensors (PyTorch: the same storage)
    assert.strictEqual(fx.convert.shared, true);
    assert.strictEqual(String(conv), fx.convert.repr);
    const sbn = conv.getSubmodule('1');
    assert.ok(sbn instanceof SyncBatchNorm && sbn !== oldBn);
    assert.strictEqual(sbn.processGroup, oneProcess);
    assert.strictEqual(sbn.qconfig, 'q');
    assert.ok(conv.getSubmodule('4') instanceof SyncBatchNorm);
    const single = SyncBatchNorm.convertSyncBatchnorm(new kd.nn.BatchNorm1d(6, { eps: 1e-3, momentum: 0.2 }).eval());
    assert.strictEqual(String(single), fx.convert.single);
    assert.strictEqual(single.training, fx.convert.singleTraining);
    const lin = new kd.nn.Linear(2, 2);
    assert.strictEqual(SyncBatchNorm.convertSyncBatchnorm(lin), lin);
  });

  describe('on CUDA', function () {
    before(function () { if (!kd.cuda.isAvailable()) this.skip(); });

    it(`computes PyTorch's values in eval mode and in a group of one (${fx.cases.length} cases, float64)`, () => {
      for (const c of fx.cases) {
        const what = JSON.stringify({ shape: c.shape, training: c.training, track: c.track, affine: c.affine, momentum: c.momentum });
        const C = c.shape[1];
        const m = new SyncBatchNorm(C, { momentum: c.momentum, affine: c.affine, trackRunningStats: c.track, processGroup: oneProcess }).double().to('cuda');
        kd.noGrad(() => {
          if (c.affine) { m.weight.copy_(kd.tensor(c.weight, f64)); m.bias.copy_(kd.tensor(c.bias, f64)); }
          if (c.track) { m.runningMean.copy_(kd.tensor(c.runningMean, f64)); m.runningVar.copy_(kd.tensor(c.runningVar, f64)); m.numBatchesTracked.fill_(2); }
        });
        m.train(c.training);
        const x = kd.tensor(c.input, f64).reshape(c.shape).to('cuda').requiresGrad_();
        const y = m(x);
        assert.strictEqual(y.device, 'cuda:0');
        assertArrayClose(Array.from(y.to('cpu').dataSync()), c.output, 'float64', `${what} output`);
        const w = kd.arange(y.numel(), f64).reshape(y.shape).cos().to('cuda');
        y.mul(w).sum().backward();
        assertArrayClose(Array.from(x.grad.to('cpu').dataSync()), c.inputGrad, 'float64', `${what} input grad`);
        if (c.affine) assertArrayClose(m.weight.grad.to('cpu').arraySync(), c.weightGrad, 'float64', `${what} weight grad`);
        if (c.track) {
          assertArrayClose(m.runningMean.to('cpu').arraySync(), c.runningMeanAfter, 'float64', `${what} running mean`);
          assertArrayClose(m.runningVar.to('cpu').arraySync(), c.runningVarAfter, 'float64', `${what} running var`);
          assert.strictEqual(Number(m.numBatchesTracked.item()), c.numBatchesTrackedAfter, what);
        }
      }
    });

    it('throws PyTorch\'s errors; training without a process group is KD_NO_PROCESS_GROUP', () => {
      const m = new SyncBatchNorm(3).to('cuda');
      assert.throws(() => m(kd.randn([3]).to('cuda')), { code: 'KD_SHAPE_MISMATCH', message: fx.errors.dims.message });
      assert.throws(() => m(kd.randn([2, 0, 3]).to('cuda')), { code: 'KD_SHAPE_MISMATCH', message: fx.errors.channels.message });
      const x = kd.randn([4, 3]).to('cuda');
      assert.throws(() => m(x), (e) => e.code === 'KD_NO_PROCESS_GROUP' && e.message.includes(fx.errors.no_group.message));
      // as PyTorch's forward, the batch was counted before the world size was asked for
      assert.strictEqual(Number(m.numBatchesTracked.item()), 1);
      assert.throws(() => new SyncBatchNorm(3, { processGroup: { size: () => 2 } }).to('cuda')(x), { code: 'KD_NO_PROCESS_GROUP' });
      assert.throws(() => new SyncBatchNorm(3, { processGroup: 'world' }).to('cuda')(x), TypeError);
      // eval mode needs no synchronisation, with or without running statistics
      assert.deepStrictEqual(m.eval()(x).shape, [4, 3]);
      assert.deepStrictEqual(new SyncBatchNorm(3, { trackRunningStats: false }).to('cuda').eval()(x).shape, [4, 3]);
    });
  });
});
