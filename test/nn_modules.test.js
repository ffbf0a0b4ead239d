// nn_modules.test.js - kd.nn modules. Parity with PyTorch (test/fixtures/modules.json, written by
// tools/fixtures/modules.py): every layer loads PyTorch's state dict and must reproduce the
// forward output, the parameter and input gradients of sum(output * gradOutput), and the running
// statistics after a training step. Then module semantics: registration, nested names, state
// dict round trips and errors, train/eval, hooks, to(dtype), containers, init statistics, utils.
'use strict';

const { kd, assert, values } = require('./helpers');
const { moduleParityTests } = require('./module_parity');

const nn = kd.nn;

moduleParityTests('modules', 'kd.nn modules vs PyTorch (same weights, inputs, gradients)');

describe('kd.nn.Module semantics', function () {
  class Block extends nn.Module {
    constructor() {
      super();
      this.fc = new nn.Linear(3, 4);
      this.scale = new nn.Parameter(kd.ones([4]));
      this.registerBuffer('steps', kd.zeros([1]));
      this.registerBuffer('cache', kd.zeros([2]), { persistent: false });
      this.note = 'plain attribute';
    }
    forward(x) { return this.fc(x).mul(this.scale); }
  }
  class Net extends nn.Module {
    head = new nn.Linear(4, 2); // class fields register too
    constructor() {
      super();
      this.layers = new nn.ModuleList([new Block(), new Block()]);
    }
    forward(x) {
      for (const b of this.layers) x = b(x).narrow(1, 0, 3);
      return this.head(kd.cat([x, x.narrow(1, 0, 1)], 1));
    }
  }

  it('registers parameters, buffers and submodules on assignment, with nested PyTorch names', function () {
    const net = new Net();
    assert.equal(typeof net, 'function');
    assert.ok(net instanceof nn.Module && net instanceof Net);
    assert.deepEqual(net.namedParameters().map((e) => e[0]), [
      'head.weight', 'head.bias', 'layers.0.scale', 'layers.0.fc.weight', 'layers.0.fc.bias',
      'layers.1.scale', 'layers.1.fc.weight', 'layers.1.fc.bias']);
    assert.equal(net.parameters().length, 8);
    assert.equal(net.parameters(false).length, 0);
    assert.equal(net.head.parameters(false).length, 2);
    assert.deepEqual(net.namedBuffers().map((e) => e[0]), ['layers.0.steps', 'layers.0.cache', 'layers.1.steps', 'layers.1.cache']);
    assert.deepEqual(net.namedChildren().map((e) => e[0]), ['head', 'layers']);
    assert.deepEqual(net.namedModules().map((e) => e[0]), ['', 'head', 'layers', 'layers.0', 'layers.0.fc', 'layers.1', 'layers.1.fc']);
    assert.equal(net.modules().length, 7);
    assert.equal(net.children().length, 2);
    assert.deepEqual(Object.keys(net.stateDict()), [
      'head.weight', 'head.bias', 'layers.0.scale', 'layers.0.steps', 'layers.0.fc.weight', 'layers.0.fc.bias',
      'layers.1.scale', 'layers.1.steps', 'layers.1.fc.weight', 'layers.1.fc.bias']);
    assert.equal(net.getSubmodule('layers.1.fc'), net.layers[1].fc);
    // camelCase properties become snake_case keys
    const bn = new nn.BatchNorm1d(2);
    assert.deepEqual(Object.keys(bn.stateDict()), ['weight', 'bias', 'running_mean', 'running_var', 'num_batches_tracked']);
    assert.ok(bn.runningMean instanceof kd.Tensor);
  });

  it('keeps registered kinds consistent: wrong assignments throw, null keeps the slot, delete unregisters', function () {
    const lin = new nn.Linear(2, 2);
    assert.throws(() => { lin.weight = kd.ones([2, 2]); }, /cannot assign 'Tensor' as parameter 'weight'/);
    assert.throws(() => { lin.weight = 3; }, TypeError);
    lin.bias = null;
    assert.deepEqual(lin.namedParameters().map((e) => e[0]), ['weight']);
    assert.equal(lin(kd.ones([1, 2])).shape[1], 2);
    lin.bias = new nn.Parameter(kd.zeros([2]));
    assert.deepEqual(Object.keys(lin.stateDict()), ['weight', 'bias']);
    delete lin.bias;
    assert.deepEqual(Object.keys(lin.stateDict()), ['weight']);
    const seq = new nn.Sequential(new nn.ReLU());
    assert.throws(() => { seq[0] = 5; }, /as child module '0'/);
    const bn = new nn.BatchNorm1d(2);
    assert.throws(() => { bn.runningMean = 'x'; }, /as buffer 'runningMean'/);
    bn.runningMean = kd.ones([2]);
    assert.deepEqual(bn.runningMean.arraySync(), [1, 1]);
    assert.throws(() => lin.registerBuffer('forward', kd.zeros(1)), /already exists/);
    assert.throws(() => lin.registerParameter('a.b', null), /can't contain "."/);
    const p = nn.Parameter(kd.ones([2]));
    assert.ok(p instanceof nn.Parameter && p instanceof kd.Tensor && p.requiresGrad && p.isLeaf);
    assert.equal(new nn.Parameter(kd.ones([2]), false).requiresGrad, false);
  });

  it('parameters survive kd.tidy and are shared with the data they were made from', function () {
    const lin = kd.tidy(() => new nn.Linear(3, 3));
    assert.equal(lin.weight.isDisposed, false);
    assert.equal(lin(kd.ones([1, 3])).shape[1], 3);
    const base = kd.zeros([2]);
    const p = new nn.Parameter(base);
    kd.noGrad(() => p.fill_(7));
    assert.deepEqual(base.arraySync(), [7, 7]);
  });

  it('stateDict round trip, strict and non-strict loading, shape mismatch', function () {
    kd.manualSeed(1);
    const a = new Net();
    const b = new Net();
    const x = kd.randn([2, 3]);
    assert.notDeepEqual(a(x).arraySync(), b(x).arraySync());
    const sd = a.stateDict();
    assert.ok(sd['head.weight'].requiresGrad === false);
    const r = b.loadStateDict(sd);
    assert.deepEqual(r, { missingKeys: [], unexpectedKeys: [] });
    assert.deepEqual(a(x).arraySync(), b(x).arraySync());
    // loading copies: changing a afterwards does not change b
    kd.noGrad(() => a.head.weight.fill_(0));
    assert.notDeepEqual(a(x).arraySync(), b(x).arraySync());
    const partial = { ...sd, extra: kd.zeros(1) };
    delete partial['head.bias'];
    assert.throws(() => b.loadStateDict(partial), (e) => /Error\(s\) in loading state_dict for Net:\n\tMissing key\(s\) in state_dict: "head.bias". \n\tUnexpected key\(s\) in state_dict: "extra". /.test(e.message));
    assert.deepEqual(b.loadStateDict(partial, { strict: false }), { missingKeys: ['head.bias'], unexpectedKeys: ['extra'] });
    assert.throws(() => b.loadStateDict({ ...sd, 'head.weight': kd.zeros([3, 3]) }),
      /size mismatch for head.weight: copying a param with shape \[3, 3\] from checkpoint, the shape in current model is \[2, 4\]/);
    // a Map works too, and keepVars gives the parameters themselves
    b.loadStateDict(new Map(Object.entries(sd)));
    assert.equal(a.stateDict({ keepVars: true })['head.bias'], a.head.bias);
  });

  it('train/eval reach every submodule: dropout and batch norm', function () {
    const net = new nn.Sequential(new nn.Dropout(0.5), new nn.BatchNorm1d(4));
    assert.equal(net.training, true);
    net.eval();
    assert.ok(net.modules().every((m) => m.training === false));
    const x = kd.randn([64, 4]);
    assert.deepEqual(net[0](x).arraySync(), x.arraySync()); // eval dropout = identity
    assert.deepEqual(net[1].numBatchesTracked.item(), 0);
    net.train();
    const y = net[0](kd.ones([1000]));
    const v = values(y);
    const zeros = v.filter((e) => e === 0).length;
    assert.ok(zeros > 400 && zeros < 600, `dropout zeroed ${zeros}/1000`);
    assert.ok(v.every((e) => e === 0 || Math.abs(e - 2) < 1e-6));
    net[1](x);
    assert.equal(net[1].numBatchesTracked.item(), 1);
    const mean = values(x.mean(0));
    values(net[1].runningMean).forEach((m, i) => assert.ok(Math.abs(m - 0.1 * mean[i]) < 1e-5));
    assert.throws(() => net.train('yes'), /training mode is expected to be boolean/);
  });

  it('forward hooks and pre-hooks, with removal', function () {
    const lin = new nn.Linear(2, 2);
    const calls = [];
    const h1 = lin.registerForwardPreHook((m, args) => { calls.push('pre'); return [args[0].mul(0)]; });
    const h2 = lin.registerForwardHook((m, args, out) => { calls.push('post'); assert.equal(m, lin); return out.add(1); });
    const y = lin(kd.ones([1, 2]));
    assert.deepEqual(calls, ['pre', 'post']);
    const expect = values(lin.bias.add(1));
    values(y).forEach((v, i) => assert.ok(Math.abs(v - expect[i]) < 1e-6));
    h1.remove();
    h2.remove();
    lin(kd.ones([1, 2]));
    assert.equal(calls.length, 2);
    assert.throws(() => new nn.Module()(kd.ones(1)), /missing the required "forward" function/);
  });

  it('to(dtype) casts floating parameters and buffers, not integer buffers; zeroGrad; apply; requiresGrad_', function () {
    const net = new nn.Sequential(new nn.Linear(3, 2), new nn.BatchNorm1d(2));
    net.to('float64');
    assert.ok(net.parameters().every((p) => p.dtype === 'float64' && p instanceof nn.Parameter && p.requiresGrad));
    assert.equal(net[1].runningMean.dtype, 'float64');
    assert.equal(net[1].numBatchesTracked.dtype, 'int64');
    const y = net(kd.randn([4, 3], { dtype: 'float64' }));
    assert.equal(y.dtype, 'float64');
    y.sum().backward();
    assert.ok(net.parameters().every((p) => p.grad !== null));
    net.zeroGrad({ setToNone: false });
    assert.ok(net.parameters().every((p) => p.grad !== null && values(p.grad).every((v) => v === 0)));
    net.zeroGrad();
    assert.ok(net.parameters().every((p) => p.grad === null));
    net.float();
    assert.equal(net[0].weight.dtype, 'float32');
    assert.throws(() => net.to('int32'), /only accepts floating point/);
    const seen = [];
    assert.equal(net.apply((m) => seen.push(m.constructor.name)), net);
    assert.deepEqual(seen, ['Linear', 'BatchNorm1d', 'Sequential']);
    net.requiresGrad_(false);
    assert.ok(net.parameters().every((p) => !p.requiresGrad));
  });

  it('prints like PyTorch', function () {
    const net = new nn.Sequential(new nn.Linear(2, 3), new nn.ReLU(), new nn.Conv2d(1, 2, 3, { padding: 1, bias: false }));
    assert.equal(String(net), 'Sequential(\n  (0): Linear(in_features=2, out_features=3, bias=True)\n  (1): ReLU()\n' +
      '  (2): Conv2d(1, 2, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), bias=False)\n)');
  });
});

describe('kd.nn containers', function () {
  it('Sequential: positional or named, indexing, append/insert/pop, iteration', function () {
    const s = new nn.Sequential(new nn.Linear(2, 3), new nn.ReLU());
    assert.equal(s.length, 2);
    assert.equal(s.at(-1), s[1]);
    s.append(new nn.Linear(3, 1));
    assert.deepEqual(Object.keys(s.stateDict()), ['0.weight', '0.bias', '2.weight', '2.bias']);
    assert.deepEqual(s(kd.ones([4, 2])).shape, [4, 1]);
    s.insert(1, new nn.Tanh());
    assert.deepEqual([...s].map((m) => m.constructor.name), ['Linear', 'Tanh', 'ReLU', 'Linear']);
    assert.equal(s.pop(1).constructor.name, 'Tanh');
    assert.deepEqual(Object.keys(s.stateDict()), ['0.weight', '0.bias', '2.weight', '2.bias']);
    const named = new nn.Sequential({ fc: new nn.Linear(2, 2), act: new nn.ReLU() });
    assert.deepEqual(Object.keys(named.stateDict()), ['fc.weight', 'fc.bias']);
    assert.ok(named.fc instanceof nn.Linear);
    assert.throws(() => new nn.Sequential(3), /not a Module subclass/);
    assert.throws(() => s.at(9), RangeError);
  });
  it('ModuleList and ModuleDict register their items', function () {
    const l = new nn.ModuleList([new nn.Linear(1, 1)]);
    l.append(new nn.Linear(1, 2)).extend([new nn.ReLU()]);
    assert.equal(l.length, 3);
    assert.deepEqual(l.namedParameters().map((e) => e[0]), ['0.weight', '0.bias', '1.weight', '1.bias']);
    const d = new nn.ModuleDict({ enc: new nn.Linear(2, 2) });
    d.set('dec', new nn.Linear(2, 1));
    assert.deepEqual(d.keys(), ['enc', 'dec']);
    assert.equal(d.get('dec'), d.dec);
    assert.ok(d.has('enc') && !d.has('x'));
    assert.deepEqual(Object.keys(d.stateDict()), ['enc.weight', 'enc.bias', 'dec.weight', 'dec.bias']);
    d.pop('enc');
    assert.deepEqual(Object.keys(d.stateDict()), ['dec.weight', 'dec.bias']);
    assert.throws(() => d.set('keys', new nn.ReLU()), /already exists/);
  });
});

describe('kd.nn layers: arguments and errors', function () {
  it('checks constructor arguments as PyTorch does', function () {
    assert.throws(() => new nn.Conv2d(3, 4, 3, { groups: 2 }), /in_channels must be divisible by groups/);
    assert.throws(() => new nn.Dropout(1.5), /dropout probability has to be between 0 and 1, but got 1.5/);
    assert.throws(() => new nn.GroupNorm(3, 4), /num_channels must be divisible by num_groups/);
    assert.throws(() => new nn.MultiheadAttention(6, 4), /embed_dim must be divisible by num_heads/);
    assert.throws(() => new nn.Embedding(3, 2, 5), /Padding_idx must be within num_embeddings/);
    assert.throws(() => new nn.Linear(2, 3, { bais: false }), /unexpected keyword argument 'bais'/);
    assert.throws(() => new nn.MSELoss({ reduction: 'avg' }), /avg is not a valid value for reduction/);
    assert.throws(() => new nn.BatchNorm2d(3)(kd.ones([2, 3])), /expected 4D input \(got 2D input\)/);
    assert.throws(() => new nn.BatchNorm1d(3)(kd.ones([2, 3, 1, 1])), /expected 2D or 3D input \(got 4D input\)/);
  });
  it('positional and options forms agree; Linear(in, out, false) has no bias', function () {
    assert.equal(new nn.Linear(2, 3, false).bias, null);
    assert.equal(new nn.Linear(2, 3, { bias: false }).bias, null);
    const c = new nn.Conv2d(2, 4, [3, 1], 2, 1, { dtype: 'float64' });
    assert.deepEqual(c.weight.shape, [4, 2, 3, 1]);
    assert.equal(c.weight.dtype, 'float64');
    assert.deepEqual(c.stride, [2, 2]);
    assert.deepEqual(new nn.ConvTranspose2d(2, 3, 3, { stride: 2 })(kd.ones([1, 2, 4, 4]), [1, 3, 10, 10]).shape, [1, 3, 10, 10]);
    const e = nn.Embedding.fromPretrained(kd.eye(3));
    assert.equal(e.weight.requiresGrad, false);
    assert.deepEqual(e(kd.tensor([2])).arraySync(), [[0, 0, 1]]);
    const [out, w] = new nn.MultiheadAttention(4, 2)(kd.ones([3, 1, 4]), kd.ones([3, 1, 4]), kd.ones([3, 1, 4]), { isCausal: true });
    assert.deepEqual(out.shape, [3, 1, 4]);
    assert.deepEqual(w.arraySync()[0][0].slice(1), [0, 0]); // the first query sees only the first key
  });
});

describe('kd.nn.init', function () {
  const stats = (t) => {
    const v = values(t);
    const mean = v.reduce((a, b) => a + b, 0) / v.length;
    const std = Math.sqrt(v.reduce((a, b) => a + (b - mean) ** 2, 0) / v.length);
    return { mean, std, min: v.reduce((a, b) => Math.min(a, b), Infinity), max: v.reduce((a, b) => Math.max(a, b), -Infinity) };
  };
  it('default Linear/Conv initialisation: U(+-1/sqrt(fanIn)) for weight and bias', function () {
    kd.manualSeed(3);
    const lin = new nn.Linear(400, 500);
    const b = 1 / Math.sqrt(400);
    const s = stats(lin.weight);
    assert.ok(s.min >= -b && s.max <= b && s.max > 0.99 * b && s.min < -0.99 * b);
    assert.ok(Math.abs(s.mean) < 0.01 * b);
    assert.ok(Math.abs(s.std - b / Math.sqrt(3)) < 0.01 * b);
    const sb = stats(lin.bias);
    assert.ok(sb.min >= -b && sb.max <= b);
    const conv = new nn.Conv2d(16, 32, 3);
    const bc = 1 / Math.sqrt(16 * 9);
    const sc = stats(conv.weight);
    assert.ok(sc.min >= -bc && sc.max <= bc && Math.abs(sc.std - bc / Math.sqrt(3)) < 0.03 * bc);
    const emb = stats(new nn.Embedding(1000, 100).weight);
    assert.ok(Math.abs(emb.mean) < 0.01 && Math.abs(emb.std - 1) < 0.01);
    const mha = new nn.MultiheadAttention(64, 4);
    const bx = Math.sqrt(6 / (64 + 192));
    const sm = stats(mha.inProjWeight);
    assert.ok(sm.min >= -bx && sm.max <= bx && sm.max > 0.98 * bx);
    assert.ok(values(mha.inProjBias).every((v) => v === 0) && values(mha.outProj.bias).every((v) => v === 0));
  });
  it('init functions: bounds, moments, gains, fan errors, seeded', function () {
    const init = nn.init;
    const t = kd.empty([200, 300]);
    kd.manualSeed(5);
    init.uniform_(t, -2, 3);
    let s = stats(t);
    assert.ok(s.min >= -2 && s.max < 3 && Math.abs(s.mean - 0.5) < 0.03);
    const first = values(t).slice(0, 5);
    kd.manualSeed(5);
    init.uniform_(t, { a: -2, b: 3 });
    assert.deepEqual(values(t).slice(0, 5), first);
    init.normal_(t, 1, 2);
    s = stats(t);
    assert.ok(Math.abs(s.mean - 1) < 0.03 && Math.abs(s.std - 2) < 0.03);
    init.truncNormal_(t, 0, 1, -1, 1.5);
    s = stats(t);
    assert.ok(s.min >= -1 && s.max <= 1.5);
    assert.ok(Math.abs(s.mean - 0.1423) < 0.02, `truncated normal mean ${s.mean}`);
    init.xavierUniform_(t, 2);
    s = stats(t);
    const bx = 2 * Math.sqrt(6 / 500);
    assert.ok(s.max <= bx && s.min >= -bx && s.max > 0.99 * bx);
    init.xavierNormal_(t);
    assert.ok(Math.abs(stats(t).std - Math.sqrt(2 / 500)) < 0.002);
    init.kaimingNormal_(t, { mode: 'fan_out', nonlinearity: 'relu' });
    assert.ok(Math.abs(stats(t).std - Math.sqrt(2 / 200)) < 0.003);
    init.kaimingUniform_(t, 0, 'fan_in', 'relu');
    s = stats(t);
    assert.ok(s.max <= Math.sqrt(6 / 300) && s.max > 0.99 * Math.sqrt(6 / 300));
    init.constant_(t, 0.25);
    assert.ok(values(t).every((v) => v === 0.25));
    init.ones_(t); assert.equal(t.sum().item(), 60000);
    init.zeros_(t); assert.equal(t.sum().item(), 0);
    assert.equal(init.calculateGain('relu'), Math.sqrt(2));
    assert.equal(init.calculateGain('tanh'), 5 / 3);
    assert.equal(init.calculateGain('leaky_relu', 0.2), Math.sqrt(2 / 1.04));
    assert.equal(init.calculateGain('selu'), 0.75);
    assert.throws(() => init.calculateGain('foo'), /Unsupported nonlinearity foo/);
    assert.throws(() => init.xavierUniform_(kd.empty([3])), /Fan in and fan out can not be computed for tensor with fewer than 2 dimensions/);
    // in place on a parameter without recording a graph
    const p = new nn.Parameter(kd.empty([2, 2]));
    assert.equal(init.normal_(p), p);
    assert.equal(p.gradFn, null);
    assert.ok(p.isLeaf);
    const h = kd.empty([10, 10], { dtype: 'float16' });
    init.uniform_(h, -1, 1);
    assert.ok(values(h).every((v) => v >= -1 && v <= 1));
  });
});

describe('kd.nn.utils', function () {
  const { clipGradNorm_, clipGradValue_, parametersToVector, vectorToParameters } = nn.utils;
  function withGrads(gs) {
    return gs.map((g) => { const p = new nn.Parameter(kd.zeros([g.length])); p.grad = kd.tensor(g, { dtype: 'float32' }); return p; });
  }
  it('clipGradNorm_ returns the total norm and scales the gradients', function () {
    const ps = withGrads([[3, 0], [0, 4]]);
    const n = clipGradNorm_(ps, 1);
    assert.ok(Math.abs(n.item() - 5) < 1e-6);
    assert.ok(Math.abs(ps[0].grad.arraySync()[0] - 3 / (5 + 1e-6)) < 1e-6);
    const qs = withGrads([[3, -7], [1, 4]]);
    assert.equal(clipGradNorm_(qs, 100, Infinity).item(), 7);
    assert.deepEqual(qs[1].grad.arraySync(), [1, 4]); // below maxNorm: unchanged
    const rs = withGrads([[1, 1]]);
    assert.ok(Math.abs(clipGradNorm_(rs, 1, 1).item() - 2) < 1e-6);
    const bad = withGrads([[NaN, 1]]);
    assert.throws(() => clipGradNorm_(bad, 1, { errorIfNonfinite: true }), /non-finite/);
    assert.equal(clipGradNorm_([new nn.Parameter(kd.zeros(2))], 1).item(), 0);
  });
  it('clipGradValue_, parametersToVector, vectorToParameters', function () {
    const ps = withGrads([[3, -0.5], [-4, 0.1]]);
    clipGradValue_(ps, 1);
    assert.deepEqual(ps.map((p) => p.grad.arraySync()), [[1, -0.5], [-1, values(kd.tensor([0.1]))[0]]]);
    const lin = new nn.Linear(2, 2);
    const v = parametersToVector(lin.parameters());
    assert.deepEqual(v.shape, [6]);
    vectorToParameters(kd.arange(6, { dtype: 'float32' }), lin.parameters());
    assert.deepEqual(lin.weight.arraySync(), [[0, 1], [2, 3]]);
    assert.deepEqual(lin.bias.arraySync(), [4, 5]);
    assert.throws(() => vectorToParameters(kd.zeros(5), lin.parameters()), /5 elements/);
  });
});

describe('kd.nn training end to end', function () {
  it('an MLP fits a small regression with manual SGD', function () {
    kd.manualSeed(0);
    const model = new nn.Sequential(new nn.Linear(2, 16), new nn.Tanh(), new nn.Linear(16, 1));
    const x = kd.randn([64, 2]);
    const y = x.narrow(1, 0, 1).mul(2).sub(x.narrow(1, 1, 1));
    const lossFn = new nn.MSELoss();
    let first;
    let last;
    for (let step = 0; step < 200; step++) {
      kd.tidy(() => {
        model.zeroGrad();
        const loss = lossFn(model(x), y);
        loss.backward();
        kd.noGrad(() => { for (const p of model.parameters()) p.sub_(p.grad.mul(0.1)); });
        if (step === 0) first = loss.item();
        last = loss.item();
      });
    }
    assert.ok(last < first * 0.05, `loss ${first} -> ${last}`);
  });
});
