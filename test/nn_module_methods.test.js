// nn_module_methods.test.js - torch.nn.Module's methods beyond the basics tested in
// nn_modules.test.js: backward hooks (module and global), global forward hooks, getParameter /
// getBuffer, extra state, state-dict hooks, toEmpty, shareMemory, type; and the expected values
// of PyTorch 1.13 where they are deterministic (a Linear's input gradient is gradOutput @ W).
'use strict';

const { kd, assert } = require('./helpers');

const nn = kd.nn;
const f = (data, options = {}) => kd.tensor(data, { dtype: 'float32', ...options });
const vals = (t) => Array.from(t.dataSync(), Number);
const near = (a, b, what) => {
  assert.equal(a.length, b.length, what);
  a.forEach((v, i) => assert.ok(Math.abs(v - b[i]) < 1e-5, `${what}[${i}]: ${v} vs ${b[i]}`));
};

function linear23() {
  const m = new nn.Linear(2, 3);
  kd.noGrad(() => {
    m.weight.copy_(f([[1, 2], [3, 4], [5, 6]]));
    m.bias.copy_(f([0.5, -0.5, 1]));
  });
  return m;
}

describe('nn.Module backward hooks', function () {
  it('registerFullBackwardHook: gradInput and gradOutput of the call, once per backward', function () {
    const m = linear23();
    const calls = [];
    const h = m.registerFullBackwardHook((mod, gradInput, gradOutput) => {
      assert.equal(mod, m);
      calls.push({ gi: gradInput.map((g) => (g === null ? null : vals(g))), go: gradOutput.map(vals) });
    });
    const x = f([[1, -1]], { requiresGrad: true });
    const gy = f([[1, 2, 3]]);
    m(x).backward(gy);
    assert.equal(calls.length, 1);
    near(calls[0].go[0], [1, 2, 3], 'gradOutput');
    // PyTorch: grad_input[0] = grad_output @ W = [1*1+2*3+3*5, 1*2+2*4+3*6] = [22, 28]
    near(calls[0].gi[0], [22, 28], 'gradInput');
    near(vals(x.grad), [22, 28], 'x.grad');
    h.remove();
    x.grad = null;
    m(x).backward(gy);
    assert.equal(calls.length, 1, 'removed');
  });

  it('a hook may replace gradInput; a wrong count is an error', function () {
    const m = linear23();
    m.registerFullBackwardHook((_m, gi) => [gi[0].mul(10)]);
    const x = f([[1, -1]], { requiresGrad: true });
    m(x).sum().backward();
    near(vals(x.grad), [90, 120], 'replaced'); // ones @ W = [9, 12], times 10
    const m2 = linear23();
    m2.registerFullBackwardHook((_m, gi) => [gi[0], gi[0]]);
    const x2 = f([[1, -1]], { requiresGrad: true });
    assert.throws(() => m2(x2).sum().backward(), /invalid number of grad_input, got 2, but expected 1/);
  });

  it('with no input requiring grad, the hook runs with gradInput null (parameters still get gradients)', function () {
    const m = linear23();
    let got = null;
    m.registerFullBackwardHook((_m, gi, go) => { got = { gi, go: go.map(vals) }; });
    m(f([[1, -1]])).sum().backward();
    assert.deepEqual(got.gi, [null]);
    near(got.go[0], [1, 1, 1], 'gradOutput');
    near(vals(m.weight.grad), [1, -1, 1, -1, 1, -1], 'weight.grad');
  });

  it('regular and full backward hooks cannot be mixed; no wrapping without grad mode', function () {
    const m = linear23();
    m.registerBackwardHook(() => {});
    assert.throws(() => m.registerFullBackwardHook(() => {}), /Cannot use both regular backward hooks and full backward hooks/);
    const y = kd.noGrad(() => m(f([[1, 2]], { requiresGrad: true })));
    assert.equal(y.gradFn, null);
  });

  it('global hooks: forward pre-hooks and hooks run before the module\'s own, for every module', function () {
    const order = [];
    const m = new nn.Sequential(linear23(), new nn.ReLU());
    const g1 = nn.modules.module.registerModuleForwardPreHook((mod) => { order.push(`gpre:${mod.constructor.name}`); });
    const g2 = nn.modules.module.registerModuleForwardHook((mod) => { order.push(`ghook:${mod.constructor.name}`); });
    const h = m.registerForwardHook(() => { order.push('own'); });
    let bw = 0;
    const g3 = nn.modules.module.registerModuleFullBackwardHook(() => { bw++; });
    try {
      m(f([[1, 2]], { requiresGrad: true })).sum().backward();
    } finally {
      g1.remove(); g2.remove(); g3.remove(); h.remove();
    }
    assert.deepEqual(order, ['gpre:Sequential', 'gpre:Linear', 'ghook:Linear', 'gpre:ReLU', 'ghook:ReLU', 'ghook:Sequential', 'own']);
    assert.equal(bw, 3);
    order.length = 0;
    m(f([[1, 2]]));
    assert.deepEqual(order, [], 'removed');
  });
});

describe('nn.Module members and state', function () {
  it('getParameter / getBuffer by dotted path, with PyTorch\'s errors', function () {
    const m = new nn.Sequential(new nn.Linear(3, 2), new nn.BatchNorm1d(2));
    assert.equal(m.getParameter('0.weight'), m[0].weight);
    assert.equal(m.getBuffer('1.running_mean'), m[1].runningMean);
    assert.equal(m.getBuffer('1.runningVar'), m[1].runningVar);
    assert.throws(() => m.getParameter('1.running_mean'), /`running_mean` is not an nn.Parameter/);
    assert.throws(() => m.getBuffer('0.weight'), /`weight` is not a buffer/);
    assert.throws(() => m.getParameter('0.foo'), /Linear has no attribute `foo`/);
    assert.throws(() => m.getParameter('5.weight'), /has no attribute `5`/);
  });

  it('extra state: saved as _extra_state (after own entries, before children), restored, missing when absent', function () {
    class WithState extends nn.Module {
      constructor() { super(); this.l = new nn.Linear(1, 1); this.v = 5; }
      getExtraState() { return { v: this.v }; }
      setExtraState(s) { this.v = s.v; }
    }
    const a = new WithState();
    const sd = a.stateDict();
    assert.deepEqual(Object.keys(sd), ['_extra_state', 'l.weight', 'l.bias']); // PyTorch's order
    const b = new WithState();
    b.v = 0;
    assert.deepEqual(b.loadStateDict(sd), { missingKeys: [], unexpectedKeys: [] });
    assert.equal(b.v, 5);
    assert.throws(() => b.loadStateDict({ 'l.weight': kd.zeros(1, 1), 'l.bias': kd.zeros(1) }), /Missing key\(s\) in state_dict: "_extra_state"/);
    assert.throws(() => new nn.Linear(1, 1).getExtraState(), (e) => e.code === 'KD_NOT_SUPPORTED');
  });

  it('state-dict hooks: _registerStateDictHook, load pre-hooks renaming keys, post hooks', function () {
    const m = new nn.Linear(2, 1);
    const h = m._registerStateDictHook((mod, sd, prefix) => { sd[`${prefix}extra`] = kd.ones(1); });
    assert.ok('extra' in m.stateDict());
    h.remove();
    assert.ok(!('extra' in m.stateDict()));
    // a checkpoint with old names: a pre-hook renames them
    m._registerLoadStateDictPreHook((sd, prefix) => {
      for (const k of Object.keys(sd)) {
        if (k.startsWith(`${prefix}w_old`)) { sd[`${prefix}weight`] = sd[k]; delete sd[k]; }
      }
    });
    m.loadStateDict({ w_old: f([[3, 4]]), bias: f([1]) });
    assert.deepEqual(vals(m.weight), [3, 4]);
    let seen = null;
    m.registerLoadStateDictPostHook((mod, keys) => { seen = { ...keys }; keys.missingKeys.length = 0; });
    const r = m.loadStateDict({ w_old: f([[5, 6]]) }); // bias missing, cleared by the post hook
    assert.deepEqual(seen.missingKeys, []); // already cleared (the same array)
    assert.deepEqual(r.missingKeys, []);
    assert.deepEqual(vals(m.weight), [5, 6]);
    const w = new nn.Linear(2, 1);
    w._registerLoadStateDictPreHook((mod, sd) => { assert.equal(mod, w); sd.bias = kd.zeros(1); }, true);
    w.loadStateDict({ weight: kd.zeros(1, 2) });
  });

  it('loadStateDict(strict false) returns the missing and unexpected keys; persistent false buffers are not saved', function () {
    const m = new nn.Linear(2, 1);
    m.registerBuffer('scratch', kd.zeros(2), { persistent: false });
    assert.deepEqual(Object.keys(m.stateDict()), ['weight', 'bias']);
    const r = m.loadStateDict({ weight: kd.zeros(1, 2), foo: kd.zeros(1) }, { strict: false });
    assert.deepEqual(r, { missingKeys: ['bias'], unexpectedKeys: ['foo'] });
  });

  it('toEmpty keeps the parameter objects on the same device type; shareMemory returns the module; type casts every tensor', function () {
    const m = new nn.Sequential(new nn.Linear(2, 3), new nn.BatchNorm1d(3));
    const w = m[0].weight;
    assert.equal(m.toEmpty({ device: 'cpu' }), m);
    assert.equal(m[0].weight, w);
    assert.deepEqual(w.shape, [3, 2]);
    assert.ok(w.requiresGrad);
    assert.throws(() => m.toEmpty(), /expected \{device\}/);
    assert.equal(m.shareMemory(), m);
    m.type('float64');
    assert.equal(m[0].weight.dtype, 'float64');
    assert.equal(m[1].numBatchesTracked.dtype, 'float64'); // type() casts integer buffers too, as PyTorch
    m.type('torch.FloatTensor');
    assert.equal(m[0].weight.dtype, 'float32');
  });

  it('to() accepts memoryFormat; namedModules(prefix, removeDuplicate); zeroGrad(false) zeroes', function () {
    const l = new nn.Linear(2, 2);
    const m = new nn.Sequential(l, l);
    assert.equal(m.to({ memoryFormat: 'channelsLast' }), m);
    assert.deepEqual(m.namedModules({ prefix: 'net' }).map((e) => e[0]), ['net', 'net.0']);
    assert.deepEqual(m.namedModules({ removeDuplicate: false }).map((e) => e[0]), ['', '0', '1']);
    m(kd.ones(1, 2)).sum().backward();
    m.zeroGrad(false);
    assert.deepEqual(vals(l.weight.grad), [0, 0, 0, 0]);
    m.zeroGrad();
    assert.equal(l.weight.grad, null);
  });
});

describe('nn.ParameterList / nn.ParameterDict', function () {
  it('ParameterList registers its items (a Tensor becomes a Parameter), prints as PyTorch', function () {
    const t = kd.zeros(2, 3);
    const pl = new nn.ParameterList([t, new nn.Parameter(kd.ones(3))]);
    assert.equal(pl.length, 2);
    assert.ok(pl.at(0) instanceof nn.Parameter);
    t.add_(1); // shares the storage
    assert.deepEqual(vals(pl.at(0)), [1, 1, 1, 1, 1, 1]);
    assert.deepEqual(Object.keys(pl.stateDict()), ['0', '1']);
    pl.append(kd.zeros(1));
    assert.equal(pl.parameters().length, 3);
    assert.equal(pl.at(-1), pl[2]);
    assert.equal(String(pl), 'ParameterList(\n    (0): Parameter containing: [torch.float32 of size 2x3]\n    (1): Parameter containing: [torch.float32 of size 3]\n    (2): Parameter containing: [torch.float32 of size 1]\n)');
    class Owner extends nn.Module { constructor() { super(); this.ps = new nn.ParameterList([kd.zeros(2)]); } }
    assert.deepEqual(Object.keys(new Owner().stateDict()), ['ps.0']);
    assert.throws(() => pl.at(3), RangeError);
  });

  it('ParameterDict: keys in insertion order, get/pop/update/setdefault, state dict and print', function () {
    const pd = new nn.ParameterDict({ b: kd.zeros(2), a: kd.ones(1) });
    assert.deepEqual(pd.keys(), ['b', 'a']);
    assert.ok(pd.get('a') instanceof nn.Parameter);
    assert.equal(pd.get('zz', null), null);
    assert.throws(() => pd.get('zz'), /KeyError: 'zz'/);
    pd.update([['c', kd.zeros(3)]]);
    assert.deepEqual(Object.keys(pd.stateDict()), ['b', 'a', 'c']);
    const c = pd.pop('c');
    assert.deepEqual(c.shape, [3]);
    assert.deepEqual(pd.keys(), ['b', 'a']);
    assert.equal(pd.parameters().length, 2);
    assert.equal(pd.setdefault('a', kd.zeros(5)), pd.a);
    assert.equal(String(pd), 'ParameterDict(\n    (b): Parameter containing: [torch.float32 of size 2]\n    (a): Parameter containing: [torch.float32 of size 1]\n)');
    assert.deepEqual(nn.ParameterDict.fromkeys(['x', 'y'], kd.zeros(1)).keys(), ['x', 'y']);
  });
});

describe('Lazy modules', function () {
  it('LazyLinear takes its input size from the first call and becomes a Linear, initialised as one', function () {
    kd.manualSeed(3);
    const lazyLayer = new nn.LazyLinear(4);
    const w = lazyLayer.weight;
    assert.deepEqual(lazyLayer.parameters().map((p) => nn.parameter.isLazy(p)), [true, true], 'PyTorch\'s UninitializedParameters');
    assert.deepEqual(Object.keys(lazyLayer.stateDict()), ['weight', 'bias']);
    assert.throws(() => kd.nn.functional.linear(kd.randn(2, 7), w), /Attempted to use an uninitialized parameter/);
    assert.ok(lazyLayer.hasUninitializedParams());
    const x = kd.randn(2, 7);
    kd.manualSeed(5);
    const y = lazyLayer(x);
    assert.deepEqual(y.shape, [2, 4]);
    assert.ok(lazyLayer instanceof nn.Linear);
    assert.equal(lazyLayer.inFeatures, 7);
    assert.deepEqual(lazyLayer.namedParameters().map((e) => e[0]), ['weight', 'bias']);
    assert.equal(lazyLayer.weight, w, 'materialized in place');
    assert.ok(!nn.parameter.isLazy(w) && w instanceof nn.Parameter && w.requiresGrad);
    kd.manualSeed(5);
    const eager = new nn.Linear(7, 4);
    assert.deepEqual(vals(lazyLayer.weight), vals(eager.weight)); // the same initialisation
    assert.equal(String(lazyLayer), 'Linear(in_features=7, out_features=4, bias=True)');
    const opts = new nn.LazyLinear({ outFeatures: 2, bias: false });
    opts(kd.zeros(1, 3));
    assert.deepEqual(opts.weight.shape, [2, 3]);
    assert.equal(opts.parameters().length, 1, 'bias: false');
    const lbn = new nn.LazyBatchNorm2d();
    assert.ok(nn.parameter.isLazy(lbn.runningMean) && !nn.parameter.isLazy(lbn.numBatchesTracked), 'sized buffers are UninitializedBuffers');
    assert.equal(new nn.LazyInstanceNorm1d().parameters().length, 0, 'affine false: no parameters');
  });

  it('casts made before the first call apply to the parameters made by it; buffers are registered', function () {
    const bn = new nn.LazyBatchNorm1d();
    bn.double();
    const y = bn(kd.randn(4, 3, { dtype: 'float64' }));
    assert.deepEqual(y.shape, [4, 3]);
    assert.equal(bn.weight.dtype, 'float64');
    assert.equal(bn.runningMean.dtype, 'float64');
    assert.deepEqual(Object.keys(bn.stateDict()), ['weight', 'bias', 'running_mean', 'running_var', 'num_batches_tracked']);
    assert.ok(bn instanceof nn.BatchNorm1d);
  });

  it('lazy convolutions read the channel dim of batched and unbatched inputs, with PyTorch\'s error for other ranks', function () {
    const c = new nn.LazyConv2d(8, 3, { padding: 1 });
    assert.deepEqual(c(kd.randn(5, 6, 6)).shape, [8, 6, 6]);
    assert.equal(c.inChannels, 5);
    const c1 = new nn.LazyConv1d(2, 3);
    assert.throws(() => c1(kd.randn(3)), /Expected 2D \(unbatched\) or 3D \(batched\) input to LazyConv1d, but got input of size: \[3\]/);
    const t = new nn.LazyConvTranspose2d(4, 2, { stride: 2 });
    assert.deepEqual(t(kd.randn(1, 3, 5, 5)).shape, [1, 4, 10, 10]);
    assert.deepEqual(t.weight.shape, [3, 4, 2, 2]);
  });

  it('loadStateDict materialises a lazy module from the state dict\'s shapes (grouped convolutions too)', function () {
    const src = new nn.Linear(7, 4);
    const l = new nn.LazyLinear(4);
    assert.deepEqual(l.loadStateDict(src.stateDict()), { missingKeys: [], unexpectedKeys: [] });
    assert.ok(l instanceof nn.Linear);
    assert.deepEqual(vals(l.weight), vals(src.weight));
    const lc = new nn.LazyConv2d(4, 3, { groups: 2 });
    lc.loadStateDict(new nn.Conv2d(6, 4, 3, { groups: 2 }).stateDict());
    assert.equal(lc.inChannels, 6);
    const lb = new nn.LazyBatchNorm2d();
    lb.loadStateDict(new nn.BatchNorm2d(5).stateDict());
    assert.equal(lb.numFeatures, 5);
    const seq = new nn.Sequential(new nn.LazyLinear(3), new nn.ReLU());
    seq.loadStateDict(new nn.Sequential(new nn.Linear(2, 3), new nn.ReLU()).stateDict());
    assert.equal(seq[0].inFeatures, 2);
  });

  it('kd.nn.lazy makes the lazy variant of any layer in one line', function () {
    const LazyGroupNorm = nn.lazy(nn.GroupNorm, 'numGroups', () => 1);
    const g = new LazyGroupNorm(4);
    g(kd.randn(2, 4, 3));
    assert.ok(g instanceof nn.GroupNorm);
    assert.equal(g.numGroups, 1);
  });
});

if (kd.cuda.isAvailable()) {
  describe('nn.Module methods on CUDA', function () {
    it('toEmpty moves to the GPU; a full backward hook sees CUDA gradients', function () {
      const m = linear23();
      m.toEmpty({ device: 'cuda' });
      assert.equal(m.weight.device, 'cuda:0');
      kd.noGrad(() => m.weight.copy_(f([[1, 2], [3, 4], [5, 6]])));
      let gi = null;
      m.registerFullBackwardHook((_m, g) => { gi = g[0]; });
      const x = f([[1, -1]], { device: 'cuda', requiresGrad: true });
      m(x).sum().backward();
      assert.equal(gi.device, 'cuda:0');
      near(vals(gi.cpu()), [9, 12], 'gradInput');
    });
  });
}
