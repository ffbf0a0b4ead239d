// nn_data_parallel.test.js - kd.nn.DataParallel (lib/nn/data_parallel.js). Without CUDA: the
// module is called directly (PyTorch 1.13's output, state-dict keys and repr from
// test/fixtures/parallel.json). On CUDA devices (the emulated GPU: KINDLING_CUDA=emulate, two
// devices): outputs and gradients equal to the module's own in float64, replica 0's buffer
// updates kept, nested inputs and outputs, outputDevice, dim, fewer chunks than devices, grad
// mode, hooks per replica, the current device per replica, and PyTorch's errors.
'use strict';

const { kd, assert, fixture, assertArrayClose } = require('./helpers');

const { dataparallel: fx } = fixture('parallel');
const { DataParallel } = kd.nn;
const cuda = kd.cuda.isAvailable() && kd.cuda.deviceCount() >= 2;
const f64 = { dtype: 'float64' };

function model(device) {
  kd.manualSeed(3);
  const m = new kd.nn.Sequential(new kd.nn.Linear(3, 4), new kd.nn.Tanh(), new kd.nn.Linear(4, 2)).double();
  return device ? m.to(device) : m;
}
const grads = (m) => m.parameters().map((p) => p.grad.to('cpu').arraySync());

describe('kd.nn.DataParallel', () => {
  it('is kd.nn.parallel.DataParallel', () => {
    assert.strictEqual(kd.nn.parallel.DataParallel, DataParallel);
    assert.throws(() => new DataParallel({}), TypeError);
  });

  describe('without CUDA', function () {
    before(function () { if (kd.cuda.isAvailable()) this.skip(); });

    it('calls the module: PyTorch\'s output, state-dict keys and repr', () => {
      const lin = new kd.nn.Linear(3, 2).double();
      kd.noGrad(() => {
        lin.weight.copy_(kd.tensor(fx.weight, f64).reshape([2, 3]));
        lin.bias.copy_(kd.tensor(fx.bias, f64));
      });
      const dp = new DataParallel(new kd.nn.Sequential(lin, new kd.nn.BatchNorm1d(2).double()));
      assert.deepStrictEqual(dp.deviceIds, fx.deviceIds);
      const y = dp(kd.tensor(fx.input, f64).reshape([4, 3]));
      assertArrayClose(y.arraySync(), fx.output, 'float64');
      assert.deepStrictEqual(Object.keys(dp.stateDict()), fx.stateDictKeys);
      assert.strictEqual(String(dp), fx.repr);
      assert.strictEqual(dp.module.getSubmodule('0'), lin);
    });

    it('passes any arguments and returns the module\'s value', () => {
      class Echo extends kd.nn.Module { forward(...a) { return a; } }
      const x = kd.ones([2]);
      const out = new DataParallel(new Echo())(x, 5, { k: 'v' });
      assert.strictEqual(out[0], x);
      assert.deepStrictEqual(out.slice(1), [5, { k: 'v' }]);
    });
  });

  describe('on CUDA devices', function () {
    before(function () { if (!cuda) this.skip(); });

    it('gives the module\'s output and gradients (float64)', () => {
      const ref = model('cuda:0');
      const m = model('cuda:0');
      const x = kd.randn([7, 3], f64);
      const xa = x.clone().requiresGrad_();
      const xb = x.clone().requiresGrad_();
      const dp = new DataParallel(m);
      assert.deepStrictEqual(dp.deviceIds, Array.from({ length: kd.cuda.deviceCount() }, (_, i) => i));
      assert.strictEqual(dp.outputDevice, 0);
      const y = dp(xa);
      assert.strictEqual(y.device, 'cuda:0');
      const yRef = ref(xb.to('cuda:0'));
      assertArrayClose(y.to('cpu').arraySync(), yRef.to('cpu').arraySync(), 'float64');
      const w = kd.randn([7, 2], f64).to('cuda:0');
      y.mul(w).sum().backward();
      yRef.mul(w).sum().backward();
      const g = grads(m);
      const gRef = grads(ref);
      for (let i = 0; i < g.length; i++) assertArrayClose(g[i], gRef[i], 'float64', `parameter ${i}`);
      assert.ok(m.parameters().every((p) => p.grad.device === 'cuda:0'));
      assert.strictEqual(xa.grad.device, 'cpu');
      assertArrayClose(xa.grad.arraySync(), xb.grad.arraySync(), 'float64', 'input grad');
      assert.strictEqual(String(dp.stateDict()['module.0.weight'].device), 'cuda:0');
      assert.deepStrictEqual(Object.keys(dp.stateDict()), ['module.0.weight', 'module.0.bias', 'module.2.weight', 'module.2.bias']);
    });

    it('keeps replica 0\'s in-place buffer updates (BatchNorm running statistics)', () => {
      const bn = new kd.nn.BatchNorm1d(3).double().to('cuda:0');
      const ref = new kd.nn.BatchNorm1d(3).double();
      const x = kd.randn([6, 3], f64);
      new DataParallel(bn, { deviceIds: [0, 1] })(x);
      ref(x.slice(0, 0, 3));
      assert.strictEqual(bn.numBatchesTracked.item(), 1);
      assertArrayClose(bn.runningMean.to('cpu').arraySync(), ref.runningMean.arraySync(), 'float64');
      assertArrayClose(bn.runningVar.to('cpu').arraySync(), ref.runningVar.arraySync(), 'float64');
    });

    it('scatters nested inputs, shares other values, gathers nested outputs', () => {
      class Nested extends kd.nn.Module {
        forward({ a, b }, [c, k]) {
          return { sum: a.add(b).mul(k), list: [c.neg(), null], device: [kd.fullLike(a, kd.cuda.currentDevice())] };
        }
      }
      const a = kd.randn([4, 2], f64);
      const b = kd.randn([4, 2], f64);
      const c = kd.randn([4], f64);
      const out = new DataParallel(new Nested(), { outputDevice: 1 })({ a, b }, [c, 3]);
      assert.strictEqual(out.sum.device, 'cuda:1');
      assertArrayClose(out.sum.to('cpu').arraySync(), a.add(b).mul(3).arraySync(), 'float64');
      assertArrayClose(out.list[0].to('cpu').arraySync(), c.neg().arraySync(), 'float64');
      assert.strictEqual(out.list[1], null);
      // rows 0-1 ran on device 0, rows 2-3 on device 1 (the replica's current device)
      assert.deepStrictEqual(out.device[0].to('cpu').arraySync(), [[0, 0], [0, 0], [1, 1], [1, 1]]);
    });

    it('gathers on the CPU with outputDevice -1, scatters along dim', () => {
      const m = new kd.nn.Linear(5, 2).double().to('cuda:0');
      const x = kd.randn([3, 5], f64);
      class T extends kd.nn.Module {
        constructor() { super(); this.lin = m; }
        forward(v) { return this.lin(v.transpose(0, 1)).transpose(0, 1); }
      }
      const y = new DataParallel(new T(), { outputDevice: -1, dim: 1 })(x.transpose(0, 1).contiguous());
      assert.strictEqual(y.device, 'cpu');
      assertArrayClose(y.arraySync(), m(x.to('cuda:0')).transpose(0, 1).to('cpu').arraySync(), 'float64');
    });

    it('runs one replica when the batch gives fewer chunks than devices; none without inputs', () => {
      let calls = 0;
      const m = model('cuda:0');
      m.registerForwardHook(() => { calls++; });
      const x = kd.randn([1, 3], f64);
      const y = new DataParallel(m)(x);
      assert.strictEqual(calls, 1);
      assertArrayClose(y.to('cpu').arraySync(), m(x.to('cuda:0')).to('cpu').arraySync(), 'float64');
      class Const extends kd.nn.Module { forward() { return kd.ones([2], { device: 'cuda' }); } }
      assert.deepStrictEqual(new DataParallel(new Const())().shape, [2]);
    });

    it('runs the hooks once per replica; replicas keep no attribute writes', () => {
      let calls = 0;
      class Counter extends kd.nn.Module {
        constructor() { super(); this.count = 0; this.lin = new kd.nn.Linear(2, 2); }
        forward(x) { this.count++; return this.lin(x); }
      }
      const m = new Counter().to('cuda:0');
      m.registerForwardPreHook(() => { calls++; });
      new DataParallel(m)(kd.randn([4, 2]));
      assert.strictEqual(calls, 2);
      assert.strictEqual(m.count, 0);
    });

    it('leaves no tensors behind a kd.tidy step', () => {
      const m = new kd.nn.Sequential(new kd.nn.Linear(3, 4), new kd.nn.BatchNorm1d(4)).to('cuda:0');
      const dp = new DataParallel(m);
      const x = kd.randn([8, 3]);
      const step = () => kd.tidy(() => { dp(x).sum().backward(); });
      step();
      const live = kd.memory().liveTensors;
      for (let i = 0; i < 4; i++) step();
      assert.ok(kd.memory().liveTensors <= live, `${kd.memory().liveTensors} live tensors after 5 steps, ${live} after 1`);
    });

    it('under noGrad the replicas are detached', () => {
      const m = model('cuda:0');
      const y = kd.noGrad(() => new DataParallel(m)(kd.randn([4, 3], f64)));
      assert.strictEqual(y.requiresGrad, false);
    });

    it('one device: the module moves there and is called on the scattered input', () => {
      const m = model();
      const dp = new DataParallel(m, { deviceIds: [1] });
      assert.strictEqual(m.parameters()[0].device, 'cuda:1');
      const y = dp(kd.randn([3, 3], f64));
      assert.strictEqual(y.device, 'cuda:1');
      assert.strictEqual(new DataParallel(model(), ['cuda:1'], 'cuda:1').outputDevice, 1);
    });

    it('scalars are gathered into a vector, with PyTorch\'s warning', async () => {
      const seen = [];
      const listen = (w) => seen.push(w.message);
      process.on('warning', listen);
      class S extends kd.nn.Module { forward(x) { return x.sum(); } }
      const x = kd.ones([4, 2]);
      const y = new DataParallel(new S())(x);
      assert.deepStrictEqual(y.to('cpu').arraySync(), [4, 4]);
      await new Promise((resolve) => setImmediate(resolve));
      process.off('warning', listen);
      assert.deepStrictEqual(seen, ['Was asked to gather along dimension 0, but all input tensors were scalars; will instead unsqueeze and return a vector.']);
    });

    it('kd.nn.parallel.dataParallel is the functional form', () => {
      const m = model('cuda:0');
      const x = kd.randn([5, 3], f64);
      const y = kd.nn.parallel.dataParallel(m, x, { outputDevice: -1 });
      assertArrayClose(y.arraySync(), m(x.to('cuda:0')).to('cpu').arraySync(), 'float64');
    });

    it('parallelApply without devices runs each module on its input\'s device', () => {
      class Where extends kd.nn.Module { forward() { return kd.cuda.currentDevice(); } }
      const out = kd.nn.parallel.parallelApply([new Where(), new Where()], [[{ x: kd.ones([1]).to('cuda:1') }], [kd.ones([1]).to('cuda:0')]]);
      assert.deepStrictEqual(out, [1, 0]);
    });

    it('throws PyTorch\'s errors', () => {
      assert.throws(() => new DataParallel(model())(kd.randn([4, 3], f64)), (e) => e.code === 'KD_DEVICE_MISMATCH'
        && e.message === 'module must have its parameters and buffers on device cuda:0 (device_ids[0]) but found one of them on device: cpu');
      assert.throws(() => new DataParallel(model(), { deviceIds: [] }), RangeError);
      assert.throws(() => new DataParallel(model(), { outputDevice: 'cpu' }), { code: 'KD_INVALID_ARGUMENT', message: 'Expected a non cpu device, but got: cpu' });
      assert.throws(() => new DataParallel(model(), { deviceIds: [0, 7] }), { code: 'KD_INVALID_ARGUMENT' });
      class Cpu extends kd.nn.Module { forward(x) { return x.to('cpu'); } }
      assert.throws(() => new DataParallel(new Cpu())(kd.ones([4])), { code: 'KD_DEVICE_MISMATCH', message: /Gather function not implemented for CPU tensors/ });
      class Num extends kd.nn.Module { forward() { return 1; } }
      assert.throws(() => new DataParallel(new Num())(kd.ones([4])), TypeError);
      class Keys extends kd.nn.Module { forward(x) { return kd.cuda.currentDevice() === 0 ? { a: x } : { a: x, b: x }; } }
      assert.throws(() => new DataParallel(new Keys())(kd.ones([4])), { message: 'All dicts must have the same number of keys' });
      class Bad extends kd.nn.Module { forward(x) { return x.reshape([7]); } }
      assert.throws(() => new DataParallel(new Bad())(kd.ones([4])), (e) => typeof e.code === 'string' && /^Caught \w+ in replica 0 on device 0\.\nOriginal /.test(e.message));
      assert.throws(() => new DataParallel(model('cuda:0'))(kd.tensor(1)), /chunk expects at least a 1-dimensional tensor/);
      assert.strictEqual(kd.cuda.currentDevice(), 0);
    });
  });
});
