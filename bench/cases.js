// cases.js - the benchmark cases. Each case is data plus three small functions, so adding
// one is adding an entry here (and, for a comparison, a function of the same name in
// bench/peers/torch_peer.py's CASES and bench/peers/tfjs_peer.js's CASES):
//   name        id, shared with the peers; --filter matches it
//   title       what is measured, one line
//   sizes       problem sizes; quickSizes: the subset --quick runs
//   label(n)    how a size prints
//   requires(kd, dev) -> reason | null   why the case cannot run (an op not there yet); the
//               case is then skipped with that reason, so it starts working when the op lands
//   setup(kd, n, dev) -> state    inputs on device dev ('cpu' | 'cuda'), created once per size
//   run(state)               ONE call of the op, result disposed (timed, batched)
//   async       run returns a Promise, awaited call by call (dataAsync() round trip)
//   teardown(state)          disposes the inputs
//   perCallUnit 'us' to show the time per call in microseconds (overhead cases)
//   rate        {unit, of(n, seconds)}: a throughput to show (GB/s, GFLOP/s, M/s)
//   limit       'stream.copy' | 'stream.triad' | 'stream.add': % of that measured bandwidth
//               (on --device cuda: of the device-to-device copy bandwidth), shown for sizes
//               whose bytes(n) are >= 2x the last-level cache (smaller ones run from cache)
//   bytes(n)    bytes one call moves (for the limit rule above)
//   headline    sizes that are targets of the project: repeated in the summary and charted
//   peers       {torch: true, tfjs: true, native: 'sgemm'}: peers to run on the same sizes;
//               tfjs (pure JS, slow) may instead give the largest size to run it on, or
//               'full' for runs without --quick only
'use strict';

const human = (n) => (n >= 1 << 20 && n % (1 << 20) === 0 ? `${n >> 20}M`
  : n >= 1024 && n % 1024 === 0 ? `${n >> 10}K` : String(n));
const square = (n) => `${n}x${n}`;

/** randn on the CPU (the generator every device shares), then moved to dev. */
function randn(kd, shape, dev) {
  const t = kd.randn(shape);
  if (dev === 'cpu') return t;
  const d = t.to(dev);
  t.dispose();
  return d;
}
const disposeAll = (s) => { for (const v of Object.values(s)) if (v && typeof v.dispose === 'function') v.dispose(); };
const needs = (what, has) => (has ? null : `${what} is missing in this build (not merged yet)`);
const fnOf = (kd, path) => path.split('.').reduce((o, k) => (o ? o[k] : undefined), kd);
const requireFn = (path) => (kd) => needs(`kd.${path}`, typeof fnOf(kd, path) === 'function');

const ROWS = 1024; // softmax / layerNorm rows have this many columns

module.exports = [
  {
    name: 'add.overhead',
    title: 'a.add(b) on 1-element float32 tensors: per-op overhead from JS',
    sizes: [1],
    label: () => '1',
    setup: (kd, n, dev) => ({ a: randn(kd, [n], dev), b: randn(kd, [n], dev) }),
    run: (s) => { s.a.add(s.b).dispose(); },
    teardown: disposeAll,
    perCallUnit: 'us',
    headline: [1],
    peers: { torch: true, tfjs: true },
  },
  {
    name: 'matmul.overhead',
    title: 'kd.matmul(a, b) on 4x4 float32 matrices: per-op overhead of a tiny matmul',
    sizes: [4],
    label: square,
    setup: (kd, n, dev) => ({ kd, a: randn(kd, [n, n], dev), b: randn(kd, [n, n], dev) }),
    run: (s) => { s.kd.matmul(s.a, s.b).dispose(); },
    teardown: disposeAll,
    perCallUnit: 'us',
    headline: [4],
    peers: { torch: true, tfjs: true },
  },
  // The same two calls with a recorded graph (a requires grad): the autograd overhead per op.
  ...[['add.overhead.grad', 1, (s) => { s.a.add(s.b).dispose(); }, 'a.add(b) on 1-element'],
    ['matmul.overhead.grad', 4, (s) => { s.kd.matmul(s.a, s.b).dispose(); }, 'kd.matmul(a, b) on 4x4']].map(([name, n, run, what]) => ({
    name,
    title: `${what} float32 tensors, a.requiresGrad_(): per-op overhead with autograd recording`,
    sizes: [n],
    label: n === 1 ? () => '1' : square,
    requires: (kd) => needs('Tensor#requiresGrad_ (autograd)', typeof kd.Tensor.prototype.requiresGrad_ === 'function'),
    setup: (kd, size, dev) => {
      const shape = size === 1 ? [1] : [size, size];
      return { kd, a: randn(kd, shape, dev).requiresGrad_(), b: randn(kd, shape, dev) };
    },
    run,
    teardown: disposeAll,
    perCallUnit: 'us',
    headline: [n],
    peers: { torch: true },
  })),
  {
    name: 'add',
    title: 'c = a.add(b), float32, into a new tensor (12 bytes/element)',
    sizes: [1 << 10, 1 << 14, 1 << 18, 1 << 20, 1 << 22, 1 << 24, 1 << 26],
    quickSizes: [1 << 10, 1 << 20, 1 << 24],
    label: human,
    setup: (kd, n, dev) => ({ a: randn(kd, [n], dev), b: randn(kd, [n], dev) }),
    run: (s) => { s.a.add(s.b).dispose(); },
    teardown: disposeAll,
    rate: { unit: 'GB/s', of: (n, sec) => (12 * n) / sec / 1e9 },
    bytes: (n) => 12 * n,
    limit: 'stream.copy',
    headline: [1 << 24],
    peers: { torch: true, tfjs: 1 << 24 },
  },
  ...[['sum', 'over all elements', null], ['sum.dim0', 'over dim 0', 0], ['sum.dim1', 'over dim 1', 1]].map(([name, what, dim]) => ({
    name,
    title: `x.sum(${dim === null ? '' : dim}) of an n x n float32 tensor (${what})`,
    sizes: [256, 1024, 4096],
    quickSizes: [1024, 4096],
    label: square,
    setup: (kd, n, dev) => ({ x: randn(kd, [n, n], dev) }),
    run: dim === null ? (s) => { s.x.sum().dispose(); } : (s) => { s.x.sum(dim).dispose(); },
    teardown: disposeAll,
    rate: { unit: 'GB/s', of: (n, sec) => (4 * n * n) / sec / 1e9 },
    bytes: (n) => 4 * n * n,
    limit: 'stream.copy',
    headline: [4096],
    peers: { torch: true, tfjs: true },
  })),
  {
    name: 'matmul',
    title: 'kd.matmul(a, b), float32, n x n',
    sizes: [64, 128, 256, 512, 1024, 2048, 4096],
    quickSizes: [64, 256, 1024],
    label: square,
    setup: (kd, n, dev) => ({ kd, a: randn(kd, [n, n], dev), b: randn(kd, [n, n], dev) }),
    run: (s) => { s.kd.matmul(s.a, s.b).dispose(); },
    teardown: disposeAll,
    rate: { unit: 'GFLOP/s', of: (n, sec) => (2 * n ** 3) / sec / 1e9 },
    headline: [1024],
    peers: { torch: true, tfjs: 512, native: 'sgemm' },
  },
  {
    name: 'matmul.bf16',
    title: 'kd.matmul(a, b), bfloat16 (float32 accumulation), n x n',
    sizes: [256, 1024, 2048],
    quickSizes: [256],
    label: square,
    setup: (kd, n, dev) => {
      const a = randn(kd, [n, n], dev), b = randn(kd, [n, n], dev);
      const s = { kd, a: a.to('bfloat16'), b: b.to('bfloat16') };
      kd.dispose([a, b]);
      return s;
    },
    run: (s) => { s.kd.matmul(s.a, s.b).dispose(); },
    teardown: disposeAll,
    rate: { unit: 'GFLOP/s', of: (n, sec) => (2 * n ** 3) / sec / 1e9 },
    peers: { torch: true },
  },
  ...[['softmax', 1], ['softmax.dim0', 0]].map(([name, dim]) => ({
    name,
    title: `kd.softmax(x, ${dim}) of an n x ${ROWS} float32 tensor`,
    sizes: [256, 4096],
    quickSizes: [4096],
    label: (n) => `${n}x${ROWS}`,
    requires: requireFn('softmax'),
    setup: (kd, n, dev) => ({ kd, x: randn(kd, [n, ROWS], dev) }),
    run: (s) => { s.kd.softmax(s.x, dim).dispose(); },
    teardown: disposeAll,
    rate: { unit: 'GB/s', of: (n, sec) => (8 * n * ROWS) / sec / 1e9 },
    headline: [4096],
    peers: { torch: true, tfjs: dim === 1 ? 256 : false },
  })),
  {
    name: 'layerNorm',
    title: `kd.nn.functional.layerNorm(x, [${ROWS}]) of an n x ${ROWS} float32 tensor (no weight/bias)`,
    sizes: [256, 4096],
    quickSizes: [4096],
    label: (n) => `${n}x${ROWS}`,
    requires: requireFn('nn.functional.layerNorm'),
    setup: (kd, n, dev) => ({ kd, x: randn(kd, [n, ROWS], dev) }),
    run: (s) => { s.kd.nn.functional.layerNorm(s.x, [ROWS]).dispose(); },
    teardown: disposeAll,
    rate: { unit: 'GB/s', of: (n, sec) => (8 * n * ROWS) / sec / 1e9 },
    headline: [4096],
    peers: { torch: true },
  },
  ...[['cumsum.dim1', 1], ['cumsum.dim0', 0]].map(([name, dim]) => ({
    name,
    title: `kd.cumsum(x, ${dim}) of an n x n float32 tensor`,
    sizes: [1024, 4096],
    quickSizes: [1024],
    label: square,
    requires: requireFn('cumsum'),
    setup: (kd, n, dev) => ({ kd, x: randn(kd, [n, n], dev) }),
    run: (s) => { s.kd.cumsum(s.x, dim).dispose(); },
    teardown: disposeAll,
    rate: { unit: 'GB/s', of: (n, sec) => (8 * n * n) / sec / 1e9 },
    headline: [1024],
    peers: { torch: true, tfjs: 1024 },
  })),
  // The Fashion-MNIST CNN's convolutions: n images of 28x28, 3x3 kernels, padding 1.
  ...[['conv2d.c32', 32, 64, [32], [32], 'full'], ['conv2d.c1', 1, 32, [64], [64], true]].map(([name, cin, cout, sizes, quickSizes, tfjs]) => ({
    name,
    title: `kd.nn.functional.conv2d: [n, ${cin}, 28, 28] * [${cout}, ${cin}, 3, 3], padding 1, float32`,
    sizes,
    quickSizes,
    label: (n) => `${n}x${cin}x28x28->${cout}`,
    requires: requireFn('nn.functional.conv2d'),
    setup: (kd, n, dev) => ({ kd, x: randn(kd, [n, cin, 28, 28], dev), w: randn(kd, [cout, cin, 3, 3], dev) }),
    run: (s) => { s.kd.nn.functional.conv2d(s.x, s.w, { padding: 1 }).dispose(); },
    teardown: disposeAll,
    rate: { unit: 'GFLOP/s', of: (n, sec) => (2 * n * cout * cin * 9 * 28 * 28) / sec / 1e9 },
    headline: sizes,
    peers: { torch: true, tfjs },
  })),
  // Training steps of examples/fashion-mnist's models (the same model, init scheme, batch, Adam
  // and thread count in bench/peers/torch_peer.py): an epoch of 60000 images is ceil(60000 / n)
  // such steps, so 60000 / (images/s) is the time per training epoch without data loading.
  ...[['train.mlp.step', 'mlp', 'MLP 784-256-10'], ['train.cnn.step', 'cnn', '2-conv CNN']].map(([name, kind, what]) => ({
    name,
    title: `one training step of the Fashion-MNIST ${what} (zeroGrad, forward, cross-entropy, backward, Adam), batch n, float32`,
    sizes: [64],
    label: (n) => `batch ${n}`,
    requires: (kd) => needs('kd.nn / kd.optim', !!(kd.nn && kd.nn.Sequential && kd.optim && kd.optim.Adam)),
    setup: (kd, n, dev) => {
      kd.manualSeed(0);
      let model = kd.tidy(() => require('../examples/fashion-mnist/models')(kd)[kind]());
      if (dev !== 'cpu') model = model.to(dev);
      const opt = new kd.optim.Adam(model.parameters(), { lr: 1e-3 });
      const y0 = kd.randint(0, 10, [n]);
      const y = dev === 'cpu' ? y0 : y0.to(dev);
      if (y !== y0) y0.dispose();
      return { kd, model, opt, x: randn(kd, [n, 1, 28, 28], dev), y, lossFn: new kd.nn.CrossEntropyLoss() };
    },
    run: (s) => s.kd.tidy(() => {
      s.opt.zeroGrad();
      s.lossFn(s.model(s.x), s.y).backward();
      s.opt.step();
    }),
    teardown: (s) => {
      s.opt.zeroGrad();
      s.kd.dispose([s.x, s.y, s.model.parameters(), [...s.opt.state.values()]]);
    },
    rate: { unit: 'img/s', of: (n, sec) => n / sec },
    headline: [64],
    peers: { torch: true },
  })),
  // Inference of torchvision's models (examples/vision/models; torchvision's own in the peer):
  // one forward of n 224x224 images in eval mode under kd.inferenceMode (torch.inference_mode),
  // random weights. Batch 32 runs without --quick only. The .fused cases (the convolutional
  // networks) fold BatchNorm into the convolutions first (fuseConvBn; torch.fx.experimental.optimization.fuse in the peer).
  ...[['resnet18', 'ResNet-18', true], ['mobilenet_v2', 'MobileNetV2', true], ['vit_b_16', 'ViT-B/16', false]].flatMap(([arch, what, convBn]) => (convBn ? [false, true] : [false]).map((fused) => ({
    name: `vision.${arch}${fused ? '.fused' : ''}`,
    title: `${what} inference${fused ? ', BatchNorm folded into the convolutions' : ''}: forward of n 3x224x224 images, eval mode, float32`,
    sizes: [1, 32],
    quickSizes: [1],
    label: (n) => `batch ${n}`,
    requires: (kd) => needs('kd.nn.Conv2d / BatchNorm2d', !!(kd.nn && kd.nn.Conv2d && kd.nn.BatchNorm2d)),
    setup: (kd, n, dev) => {
      kd.manualSeed(0);
      const vision = require('../examples/vision/models')(kd);
      let model = vision.getModel(arch).eval();
      if (fused) vision.fuseConvBn(model);
      if (dev !== 'cpu') model = model.to(dev);
      return { kd, model, x: randn(kd, [n, 3, 224, 224], dev) };
    },
    run: (s) => { s.kd.inferenceMode(() => s.model(s.x)).dispose(); },
    teardown: (s) => { s.kd.dispose([s.x, s.model.parameters(), s.model.buffers()]); },
    rate: { unit: 'img/s', of: (n, sec) => n / sec },
    headline: [1, 32],
    peers: { torch: true },
  }))),
  // The recurrent layer of pytorch/examples' word_language_model (emsize = nhid = 200, 2 layers,
  // dropout 0.2 between them, bptt 35, batch n): forward from a given state and backward of the
  // output, in training mode, gradients cleared after each step (the same in torch_peer.py).
  ...[['lstm.wlm.step', 'LSTM'], ['gru.wlm.step', 'GRU']].map(([name, mod]) => ({
    name,
    title: `word_language_model's 2-layer ${mod} (200 -> 200, dropout 0.2), bptt 35, batch n, float32: forward + backward`,
    sizes: [20],
    label: (n) => `batch ${n}`,
    requires: (kd) => needs(`kd.nn.${mod}`, !!(kd.nn && kd.nn[mod])),
    setup: (kd, n, dev) => {
      kd.manualSeed(0);
      let model = new kd.nn[mod](200, 200, 2, { dropout: 0.2 });
      if (dev !== 'cpu') model = model.to(dev);
      const h = () => randn(kd, [2, n, 200], dev);
      return {
        kd, model, lstm: mod === 'LSTM', x: randn(kd, [35, n, 200], dev).requiresGrad_(), g: randn(kd, [35, n, 200], dev),
        h0: h(), c0: h(),
      };
    },
    run: (s) => s.kd.tidy(() => {
      const [out] = s.model(s.x, s.lstm ? [s.h0, s.c0] : s.h0);
      out.backward(s.g);
      for (const p of s.model.parameters()) p.grad = null;
      s.x.grad = null;
    }),
    teardown: (s) => { s.kd.dispose([s.x, s.g, s.h0, s.c0, s.model.parameters()]); },
    rate: { unit: 'steps/s', of: (n, sec) => 1 / sec },
    headline: [20],
    peers: { torch: true },
  })),
  // A spatial transformer's sampling: F.gridSample, bilinear, zeros padding, alignCorners false,
  // float32 input [n, 32, 64, 64] at a [n, 64, 64, 2] grid of positions in [-1.1, 1.1]: the
  // forward, and forward + backward for the input and the grid (gradients cleared after each
  // step; the same in torch_peer.py).
  ...[['gridSample.bilinear', false], ['gridSample.bilinear.grad', true]].map(([name, grad]) => ({
    name,
    title: `kd.nn.functional.gridSample bilinear: [n, 32, 64, 64] at a [n, 64, 64, 2] grid, float32${grad ? ': forward + backward (input and grid)' : ''}`,
    sizes: [8],
    label: (n) => `${n}x32x64x64`,
    requires: requireFn('nn.functional.gridSample'),
    setup: (kd, n, dev) => {
      kd.manualSeed(0);
      const x = randn(kd, [n, 32, 64, 64], dev);
      const g0 = kd.tidy(() => kd.rand([n, 64, 64, 2]).mul(2.2).sub(1.1));
      const g = dev === 'cpu' ? g0 : g0.to(dev);
      if (g !== g0) g0.dispose();
      if (grad) { x.requiresGrad_(); g.requiresGrad_(); }
      return { kd, x, g, go: grad ? randn(kd, [n, 32, 64, 64], dev) : null };
    },
    run: grad
      ? (s) => s.kd.tidy(() => {
        s.kd.nn.functional.gridSample(s.x, s.g, { alignCorners: false }).backward(s.go);
        s.x.grad = null;
        s.g.grad = null;
      })
      : (s) => { s.kd.nn.functional.gridSample(s.x, s.g, { alignCorners: false }).dispose(); },
    teardown: (s) => { s.kd.dispose([s.x, s.g, s.go].filter(Boolean)); },
    rate: { unit: 'Mpos/s', of: (n, sec) => (n * 64 * 64) / sec / 1e6 },
    headline: [8],
    peers: { torch: true },
  })),
  // One training step of pytorch/examples' word_language_model as main.py runs it with its
  // defaults (LSTM, emsize = nhid = 200, 2 layers, dropout 0.2, bptt 35, batch 20, lr 20, clip
  // 0.25), for a vocabulary of n words: 537 is the corpus examples/pytorch/word_language_model
  // ships, 33278 wikitext-2's. model.zeroGrad(), embedding -> LSTM (from the previous step's
  // detached state) -> linear decoder -> logSoftmax -> NLLLoss, backward, clipGradNorm_, the
  // hand-written SGD update of every parameter and loss.item(); the same in torch_peer.py.
  {
    name: 'wlm.lstm.train_step',
    title: "word_language_model's training step: 2-layer LSTM 200, bptt 35, batch 20, vocabulary n, clip + SGD, float32",
    sizes: [537, 33278],
    quickSizes: [537],
    label: (n) => `vocab ${n}`,
    requires: (kd) => needs('kd.nn.LSTM', !!(kd.nn && kd.nn.LSTM)),
    setup: (kd, n, dev) => {
      kd.manualSeed(0);
      const { nn } = kd;
      class RNNModel extends nn.Module {
        constructor() {
          super();
          this.drop = new nn.Dropout(0.2);
          this.encoder = new nn.Embedding(n, 200);
          this.rnn = new nn.LSTM(200, 200, 2, { dropout: 0.2 });
          this.decoder = new nn.Linear(200, n);
        }

        forward(input, hidden) {
          const [output, h] = this.rnn(this.drop(this.encoder(input)), hidden);
          return [nn.functional.logSoftmax(this.decoder(this.drop(output)).view(-1, n), { dim: 1 }), h];
        }
      }
      const model = new RNNModel().to(dev);
      const ids = (shape) => { const t = kd.randint(0, n, shape); const d = t.to(dev); if (d !== t) t.dispose(); return d; };
      const hidden = [kd.zeros([2, 20, 200], { device: dev }), kd.zeros([2, 20, 200], { device: dev })];
      return { kd, model, criterion: new nn.NLLLoss(), data: ids([35, 20]), targets: ids([700]), hidden };
    },
    run: (s) => {
      const { kd, model } = s;
      const previous = s.hidden;
      s.hidden = kd.tidy(() => {
        model.zeroGrad();
        const [output, hidden] = model(s.data, previous.map((h) => h.detach()));
        const loss = s.criterion(output, s.targets);
        loss.backward();
        kd.nn.utils.clipGradNorm_(model.parameters(), 0.25);
        for (const p of model.parameters()) p.data.add_(p.grad, { alpha: -20 });
        loss.item();
        return hidden.map((h) => h.detach());
      });
      kd.dispose(previous);
    },
    teardown: (s) => { s.kd.dispose([s.data, s.targets, s.hidden, s.model.parameters()]); },
    rate: { unit: 'steps/s', of: (n, sec) => 1 / sec },
    headline: [537],
    peers: { torch: true },
  },
  // One optimizer step over the Fashion-MNIST CNN's parameters (50K floats in 6 tensors) with
  // fixed gradients; PyTorch's side uses its foreach implementation (bench/peers/torch_peer.py).
  ...[['SGD', { lr: 0.01, momentum: 0.9 }], ['Adam', {}], ['Adadelta', {}], ['Adamax', {}], ['ASGD', { lr: 1e-3 }],
    ['NAdam', {}], ['RAdam', {}], ['Rprop', { lr: 1e-3 }], ['RMSprop', {}], ['Adagrad', {}]].map(([optName, options]) => ({
    name: `optim.${optName}.step`,
    title: `kd.optim.${optName} step() over the Fashion-MNIST CNN's parameters, float32 (PyTorch: foreach=True)`,
    sizes: [1],
    label: () => 'cnn',
    requires: (kd) => needs(`kd.optim.${optName}`, !!(kd.optim && kd.optim[optName])),
    setup: (kd, n, dev) => {
      kd.manualSeed(0);
      let model = kd.tidy(() => require('../examples/fashion-mnist/models')(kd).cnn());
      if (dev !== 'cpu') model = model.to(dev);
      const params = model.parameters();
      for (const p of params) p.grad = kd.tidy(() => kd.randnLike(p).mul(0.01));
      const opt = new kd.optim[optName](params, options);
      for (let i = 0; i < 5; i++) opt.step(); // the state exists before timing
      return { kd, params, opt };
    },
    run: (s) => s.opt.step(),
    teardown: (s) => {
      s.opt.dispose();
      s.opt.zeroGrad();
      s.kd.dispose(s.params);
    },
    perCallUnit: 'us',
    headline: [1],
    peers: { torch: true },
  })),
  ...[['alloc.small', 16, '16 floats'], ['alloc.1mb', 1 << 18, '1 MB']].map(([name, n, what]) => ({
    name,
    title: `kd.empty([n]).dispose(): allocation churn, ${what} (create + dispose rate)`,
    sizes: [n],
    label: human,
    setup: (kd, size, dev) => ({ kd, shape: [size], opts: { device: dev } }),
    run: (s) => { s.kd.empty(s.shape, s.opts).dispose(); },
    teardown: () => {},
    perCallUnit: 'us',
    rate: { unit: 'M/s', of: (size, sec) => 1 / sec / 1e6 },
    headline: [n],
    peers: { torch: true, tfjs: true },
  })),
  {
    name: 'data.roundtrip',
    title: 'await t.dataAsync() of a 1-element float32 tensor: read-back latency',
    sizes: [1],
    label: () => '1',
    setup: (kd, n, dev) => ({ t: randn(kd, [n], dev) }),
    run: (s) => s.t.dataAsync(),
    async: true,
    teardown: disposeAll,
    perCallUnit: 'us',
    headline: [1],
    peers: { torch: true, tfjs: true },
  },
  // CPU kernel speed checks (issue 4): indexing, sorting, small batched gemms, shape copies,
  // activations and arg-reductions over an outer dim, each against the same torch call.
  ...[
    ['indexSelect.dim0', 'kd.indexSelect(x, 0, idx): x [n, n], idx [n] int64', (kd, n, dev) => ({ kd, x: randn(kd, [n, n], dev), i: kd.randint(0, n, [n]).to(dev) }), (s) => s.kd.indexSelect(s.x, 0, s.i)],
    ['indexSelect.dim1', 'kd.indexSelect(x, 1, idx): x [n, n], idx [n] int64', (kd, n, dev) => ({ kd, x: randn(kd, [n, n], dev), i: kd.randint(0, n, [n]).to(dev) }), (s) => s.kd.indexSelect(s.x, 1, s.i)],
    ['gather.dim1', 'kd.gather(x, 1, idx): x, idx [n, n]', (kd, n, dev) => ({ kd, x: randn(kd, [n, n], dev), i: kd.randint(0, n, [n, n]).to(dev) }), (s) => s.kd.gather(s.x, 1, s.i)],
    ['index.tensor', 'x.index([idx]): advanced indexing of rows, x [n, n], idx [n]', (kd, n, dev) => ({ x: randn(kd, [n, n], dev), i: kd.randint(0, n, [n]).to(dev) }), (s) => s.x.index([s.i])],
    ['scatterAdd.dim0', 'kd.scatterAdd(x, 0, idx, src): all [n, n]', (kd, n, dev) => ({ kd, x: randn(kd, [n, n], dev), i: kd.randint(0, n, [n, n]).to(dev), s: randn(kd, [n, n], dev) }), (s) => s.kd.scatterAdd(s.x, 0, s.i, s.s)],
    ['topk.k10', 'kd.topk(x, 10).values: x [n, n], along the last dim', (kd, n, dev) => ({ kd, x: randn(kd, [n, n], dev) }), (s) => s.kd.topk(s.x, 10).values],
    ['bmm.attention', 'kd.bmm(a, b): [32, n, 32] @ [32, 32, n] (attention scores, 8 batches x 4 heads)', (kd, n, dev) => ({ kd, a: randn(kd, [32, n, 32], dev), b: randn(kd, [32, 32, n], dev) }), (s) => s.kd.bmm(s.a, s.b)],
    ['cat.dim1', 'kd.cat([a, b], 1): two [n, n]', (kd, n, dev) => ({ kd, a: randn(kd, [n, n], dev), b: randn(kd, [n, n], dev) }), (s) => s.kd.cat([s.a, s.b], 1)],
    ['flip.dim1', 'kd.flip(x, [1]): x [n, n]', (kd, n, dev) => ({ kd, x: randn(kd, [n, n], dev) }), (s) => s.kd.flip(s.x, [1])],
    ['repeat.2x2', 'x.repeat([2, 2]): x [n, n]', (kd, n, dev) => ({ x: randn(kd, [n, n], dev) }), (s) => s.x.repeat([2, 2])],
    ['elu', 'kd.nn.functional.elu(x): x [n * n]', (kd, n, dev) => ({ kd, x: randn(kd, [n * n], dev) }), (s) => s.kd.nn.functional.elu(s.x)],
    ['softplus', 'kd.nn.functional.softplus(x): x [n * n]', (kd, n, dev) => ({ kd, x: randn(kd, [n * n], dev) }), (s) => s.kd.nn.functional.softplus(s.x)],
    ['rsqrt', 'kd.rsqrt(x): x [n * n] (half of it negative)', (kd, n, dev) => ({ kd, x: randn(kd, [n * n], dev) }), (s) => s.kd.rsqrt(s.x)],
    ['argmax.dim0', 'kd.argmax(x, 0): x [n, n], over the outer dim', (kd, n, dev) => ({ kd, x: randn(kd, [n, n], dev) }), (s) => s.kd.argmax(s.x, 0)],
  ].map(([name, title, setup, call]) => ({
    name: `kernel.${name}`,
    title,
    sizes: name === 'bmm.attention' ? [64, 128] : [1024],
    label: name === 'bmm.attention' ? (n) => `32x${n}x32` : square,
    setup,
    run: (s) => { call(s).dispose(); },
    teardown: disposeAll,
    peers: { torch: true },
  })),

  // The reference for the autograd recording overhead (issue 5: add.overhead.grad must cost
  // <= 0.5 us more than this): the same a.add(b) with a.requiresGrad, under setGradEnabled(false).
  {
    name: 'add.overhead.nograd',
    title: 'a.add(b) on 1-element float32 tensors, a.requiresGrad_() under setGradEnabled(false): the no-recording reference',
    sizes: [1],
    label: () => '1',
    requires: (kd) => needs('kd.setGradEnabled (autograd)', typeof kd.setGradEnabled === 'function'),
    setup: (kd, n, dev) => {
      kd.setGradEnabled(false);
      return { kd, a: randn(kd, [n], dev).requiresGrad_(), b: randn(kd, [n], dev) };
    },
    run: (s) => { s.a.add(s.b).dispose(); },
    teardown: (s) => { s.kd.setGradEnabled(true); disposeAll(s); },
    perCallUnit: 'us',
    headline: [1],
    peers: { torch: true },
  },
  // One training step of a 2-layer MLP (issue 5: forward + backward within 1.2x of PyTorch):
  // linear(784 -> 256) + relu + linear(256 -> 10) + crossEntropy, backward, grads cleared.
  {
    name: 'mlp.step.grad',
    title: 'MLP 784-256-10 float32, batch n: forward (linear-relu-linear-crossEntropy) + backward',
    sizes: [64],
    label: (n) => `batch ${n}`,
    requires: (kd) => needs('kd.nn.functional.crossEntropy and autograd',
      typeof fnOf(kd, 'nn.functional.crossEntropy') === 'function' && typeof kd.Tensor.prototype.backward === 'function'),
    setup: (kd, n, dev) => {
      const param = (shape, scale) => {
        const r = randn(kd, shape, dev);
        const p = r.mul(scale);
        r.dispose();
        return p.requiresGrad_();
      };
      const y = kd.randint(0, 10, [n]);
      return {
        F: kd.nn.functional, x: randn(kd, [n, 784], dev), y: dev === 'cpu' ? y : y.to(dev),
        w1: param([256, 784], 0.05), b1: param([256], 0.05), w2: param([10, 256], 0.05), b2: param([10], 0.05),
      };
    },
    run: (s) => {
      const { F } = s;
      const h = F.linear(s.x, s.w1, s.b1), r = F.relu(h), o = F.linear(r, s.w2, s.b2), loss = F.crossEntropy(o, s.y);
      loss.backward();
      h.dispose(); r.dispose(); o.dispose(); loss.dispose();
      for (const p of [s.w1, s.b1, s.w2, s.b2]) p.grad = null;
    },
    teardown: disposeAll,
    rate: { unit: 'steps/s', of: (n, sec) => 1 / sec },
    headline: [64],
    peers: { torch: true },
  },
  // Attention of one GPT-2-sized layer: batch 1, 12 heads of 64, L = S = n, float32; the peer is
  // PyTorch 1.13's math composition softmax(q k^T / 8) v (1.13 has no fused attention).
  // GFLOP/s counts the two products (4 n^2 * 64 per head) forward, three times that with backward.
  ...[['sdpa', false], ['sdpa.grad', true]].map(([name, grad]) => ({
    name,
    title: `kd.nn.functional.scaledDotProductAttention: [1, 12, n, 64] float32 query, key, value${grad ? ', forward + backward' : ''}`,
    sizes: [128, 1024],
    quickSizes: [128],
    label: (n) => `1x12x${n}x64`,
    requires: requireFn('nn.functional.scaledDotProductAttention'),
    setup: (kd, n, dev) => {
      const t = () => (grad ? randn(kd, [1, 12, n, 64], dev).requiresGrad_() : randn(kd, [1, 12, n, 64], dev));
      return { F: kd.nn.functional, q: t(), k: t(), v: t(), g: randn(kd, [1, 12, n, 64], dev) };
    },
    run: (s) => {
      const y = s.F.scaledDotProductAttention(s.q, s.k, s.v);
      if (grad) {
        y.backward(s.g);
        for (const p of [s.q, s.k, s.v]) { p.grad.dispose(); p.grad = null; }
      }
      y.dispose();
    },
    teardown: disposeAll,
    rate: { unit: 'GFLOP/s', of: (n, sec) => ((grad ? 3 : 1) * 4 * 12 * n * n * 64) / sec / 1e9 },
    headline: [128, 1024],
    peers: { torch: true },
  })),
  // GPT-2 small decoding (examples/gpt2; bench/peers/torch_peer.py runs the same model written in
  // torch, tools/fixtures/gpt2_torch.py): random weights, batch 1, a 32-token prompt, then n greedy
  // tokens through the preallocated KV cache, each read back to the host as generation does.
  {
    name: 'gpt2.decode',
    title: 'GPT-2 small (12 layers, 768 wide, 12 heads) float32, batch 1: prompt 32, then n greedy tokens with a KV cache',
    sizes: [32],
    label: (n) => `32+${n} tokens`,
    requires: (kd) => needs('kd.nn.functional.scaledDotProductAttention', typeof fnOf(kd, 'nn.functional.scaledDotProductAttention') === 'function'),
    setup: (kd, n, dev) => {
      const { GPT2LMHeadModel } = require('../examples/gpt2/model');
      kd.manualSeed(0);
      const model = kd.tidy(() => new GPT2LMHeadModel({ nLayer: 12, nEmbd: 768, nHead: 12 }).eval());
      if (dev !== 'cpu') model.to(dev);
      return { kd, model, n, prompt: Array.from({ length: 32 }, (_, i) => (i * 131) % 50257) };
    },
    run: (s) => s.model.generate(s.prompt, { maxNewTokens: s.n }),
    async: true,
    teardown: (s) => { s.kd.dispose(s.model.parameters()); },
    rate: { unit: 'tokens/s', of: (n, sec) => n / sec },
    headline: [32],
    peers: { torch: true },
  },
];

// int8 dynamic quantization (kd.ao.quantization.quantizeDynamic, docs/QUANTIZATION.md): a float32
// kd.nn.Linear and the same layer quantized to qint8 weights (the input quantized per call), at
// BERT/GPT-2 MLP sizes, batch n rows, no grad. The peer is PyTorch 1.13's quantize_dynamic.
function linearCase(inF, outF, int8) {
  return {
    name: `linear.${int8 ? 'int8' : 'f32'}.${inF}x${outF}`,
    title: `${int8 ? 'int8 dynamic quantized' : 'float32'} Linear ${inF} -> ${outF}, batch n (forward, no grad)`,
    sizes: [1, 32],
    label: (n) => `batch ${n}`,
    requires: (kd, dev) => (dev !== 'cpu' ? 'the int8 dynamic Linear runs on the CPU' : needs('kd.ao.quantization.quantizeDynamic', !!(kd.ao && kd.ao.quantization))),
    setup: (kd, n) => {
      kd.manualSeed(0);
      let model = kd.tidy(() => new kd.nn.Sequential(new kd.nn.Linear(inF, outF)).eval());
      if (int8) model = kd.ao.quantization.quantizeDynamic(model, new Set([kd.nn.Linear]));
      kd.setGradEnabled(false);
      return { kd, model, x: kd.randn([n, inF]) };
    },
    run: (s) => { s.model(s.x).dispose(); },
    teardown: (s) => { s.kd.setGradEnabled(true); s.x.dispose(); },
    rate: { unit: 'GOP/s', of: (n, sec) => (2 * n * inF * outF) / sec / 1e9 },
    headline: [1, 32],
    peers: { torch: true },
  };
}
module.exports.push(...[false, true].flatMap((int8) => [linearCase(768, 3072, int8), linearCase(3072, 768, int8)]));
