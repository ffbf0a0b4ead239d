// nn_temporaries.test.js - building layers and optimizers leaves no tensors behind: every
// constructor, resetParameters(), Module.to(), the optimizers' constructors and kd.nn.utils make
// exactly the tensors their result owns (kd.memory().liveTensors counts them), and dispose
// their temporaries (initialisers' draws, the tensors parameters are made from, norms) instead of
// leaving them to the garbage collector. The GC runs before each count, so garbage of earlier
// tests cannot be collected during one.
'use strict';

const v8 = require('node:v8');
const vm = require('node:vm');
const { kd, assert, collectGarbage } = require('./helpers');

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');
const nn = kd.nn;

/** How many more tensors are alive after fn() than before, and fn's result. */
function made(fn) {
  gc();
  const before = collectGarbage().liveTensors;
  const result = fn();
  return { result, count: kd.memory().liveTensors - before };
}

/** The distinct tensors a module owns: its parameters and buffers. */
function owned(m) {
  return new Set([...m.parameters(), ...m.buffers()]).size;
}

const LAYERS = {
  'Linear(4, 3)': () => new nn.Linear(4, 3),
  'Linear(4, 3, bias=false)': () => new nn.Linear(4, 3, false),
  'Bilinear(2, 3, 4)': () => new nn.Bilinear(2, 3, 4),
  'Embedding(10, 4)': () => new nn.Embedding(10, 4),
  'Embedding(10, 4, paddingIdx=0)': () => new nn.Embedding(10, 4, { paddingIdx: 0 }),
  'Conv1d(2, 3, 3)': () => new nn.Conv1d(2, 3, 3),
  'Conv2d(2, 3, 3)': () => new nn.Conv2d(2, 3, 3),
  'ConvTranspose2d(2, 3, 3)': () => new nn.ConvTranspose2d(2, 3, 3),
  'BatchNorm1d(4)': () => new nn.BatchNorm1d(4),
  'BatchNorm2d(4)': () => new nn.BatchNorm2d(4),
  'LayerNorm(4)': () => new nn.LayerNorm(4),
  'GroupNorm(2, 4)': () => new nn.GroupNorm(2, 4),
  'MultiheadAttention(8, 2)': () => new nn.MultiheadAttention(8, 2),
  'MultiheadAttention(8, 2, kdim, vdim, addBiasKv)': () => new nn.MultiheadAttention(8, 2, { kdim: 4, vdim: 4, addBiasKv: true }),
  'TransformerEncoderLayer(8, 2)': () => new nn.TransformerEncoderLayer(8, 2, { dimFeedforward: 16 }),
  'TransformerDecoderLayer(8, 2)': () => new nn.TransformerDecoderLayer(8, 2, { dimFeedforward: 16 }),
  'Transformer(8, 2, 2, 1)': () => new nn.Transformer(8, 2, 2, 1, 16),
  'Sequential(Linear, ReLU, Linear)': () => new nn.Sequential(new nn.Linear(4, 3), new nn.ReLU(), new nn.Linear(3, 2)),
};

describe('nn: no temporaries left to the garbage collector', function () {
  for (const [name, build] of Object.entries(LAYERS)) {
    it(`new ${name} makes only its parameters and buffers, and so does resetParameters()`, function () {
      const { result: m, count } = made(build);
      assert.equal(count, owned(m), `${count - owned(m)} temporaries left by the constructor`);
      const reset = [...m.modules()].filter((c) => typeof c.resetParameters === 'function');
      assert.equal(made(() => reset.forEach((c) => c.resetParameters())).count, 0, 'temporaries left by resetParameters()');
      kd.dispose([...m.parameters(), ...m.buffers()]);
    });
  }

  it('new Parameter() without data makes one tensor', function () {
    const { result: p, count } = made(() => new nn.Parameter());
    assert.equal(count, 1);
    p.dispose();
  });

  it('Module.to() makes only the converted parameters and their gradients', function () {
    const m = new nn.Linear(4, 3);
    kd.tidy(() => m(kd.randn([2, 4])).sum().backward());
    const old = [...m.parameters()];
    const { count } = made(() => m.to('float64'));
    assert.equal(count, 4, 'two parameters and two gradients');
    assert.equal(m.weight.grad.dtype, 'float64');
    const now = [...m.parameters()];
    kd.dispose([...old, ...old.map((p) => p.grad), ...now, ...now.map((p) => p.grad)]);
  });

  it('optimizer constructors make only the state they keep', function () {
    const m = new nn.Linear(4, 3);
    const params = [...m.parameters()];
    const optimizers = {
      SGD: [() => new kd.optim.SGD(params, { lr: 0.1, momentum: 0.9 }), 0],
      Adam: [() => new kd.optim.Adam(params), 0],
      AdamW: [() => new kd.optim.AdamW(params), 0],
      RMSprop: [() => new kd.optim.RMSprop(params), 0],
      Adagrad: [() => new kd.optim.Adagrad(params), params.length], // its sums, made eagerly as PyTorch
    };
    for (const [name, [build, state]] of Object.entries(optimizers)) {
      const { result: opt, count } = made(build);
      assert.equal(count, state, name);
      for (const s of opt.state.values()) kd.dispose(s);
    }
    kd.dispose(params);
  });

  it('kd.nn.utils makes only what it returns', function () {
    const m = new nn.Linear(4, 3);
    const params = [...m.parameters()];
    kd.tidy(() => m(kd.randn([2, 4])).sum().backward());
    for (const normType of [2, Infinity]) {
      const { result: norm, count } = made(() => nn.utils.clipGradNorm_(params, 0.1, normType));
      assert.equal(count, 1, `clipGradNorm_ with normType ${normType} returns its norm and keeps nothing else`);
      norm.dispose();
    }
    const flatten = () => { nn.utils.parametersToVector(params).dispose(); };
    assert.equal(made(flatten).count, 0, 'parametersToVector: nothing outlives the vector');
    const flat = kd.noGrad(() => nn.utils.parametersToVector(params));
    assert.equal(made(() => nn.utils.vectorToParameters(flat, params)).count, 0, 'vectorToParameters');
    kd.dispose([flat, ...params.map((p) => p.grad), ...params]);
  });
});
