// pytorch_examples_conv.js - the training-step time of the ported convolutional pytorch/examples
// programs (examples/pytorch/{dcgan,super_resolution,fast_neural_style}) at the originals' sizes,
// beside bench/pytorch_examples_conv.py, which times the originals' steps in PyTorch:
//   dcgan               batch 64, nz 100, ngf 64, ndf 64, 3x64x64 images: one iteration (D and G updates)
//   super_resolution    batch 64, upscale factor 3, 1x85x85 inputs -> 1x255x255 (BSDS300's crops)
//   fast_neural_style   batch 4, 3x256x256, TransformerNet + VGG-16 to relu4_3
// Random inputs; the step is the programs' own (trainStep / train()). Prints one JSON line per
// program: the median of `--repeat` timed steps after one warm-up step, in ms.
//   node bench/pytorch_examples_conv.js [--only dcgan] [--repeat 3] [--threads 1]
'use strict';

const { parseArgs } = require('node:util');
const kd = require('..');

const { values: opt } = parseArgs({ options: { only: { type: 'string' }, repeat: { type: 'string', default: '3' }, threads: { type: 'string', default: '1' } } });
kd.setNumThreads(Number(opt.threads));
kd.manualSeed(0);

const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];

async function time(name, step) {
  await step();
  const ms = [];
  for (let i = 0; i < Number(opt.repeat); i++) {
    const t0 = performance.now();
    await step();
    ms.push(performance.now() - t0);
  }
  console.log(JSON.stringify({ name, medianMs: Math.round(median(ms)), ms: ms.map(Math.round), threads: kd.getNumThreads() }));
}

const benches = {
  async dcgan() {
    const { Generator, Discriminator, weightsInit, trainStep } = require('../examples/pytorch/dcgan/main');
    const netG = new Generator(1, 100, 64, 3);
    const netD = new Discriminator(1, 3, 64);
    netG.apply(weightsInit);
    netD.apply(weightsInit);
    const nets = {
      netD, netG, criterion: new kd.nn.BCELoss(),
      optimizerD: new kd.optim.Adam(netD.parameters(), { lr: 0.0002, betas: [0.5, 0.999] }),
      optimizerG: new kd.optim.Adam(netG.parameters(), { lr: 0.0002, betas: [0.5, 0.999] }),
    };
    const real = kd.rand(64, 3, 64, 64).mul(2).sub(1);
    const noise = kd.randn(64, 100, 1, 1);
    await time('dcgan', () => trainStep(nets, real, noise));
  },
  async super_resolution() {
    const { Net } = require('../examples/pytorch/super_resolution/model');
    const { train } = require('../examples/pytorch/super_resolution/main');
    const model = new Net(3);
    const ds = new kd.utils.data.TensorDataset(kd.rand(64, 1, 85, 85), kd.rand(64, 1, 255, 255));
    const ctx = {
      model, criterion: new kd.nn.MSELoss(), optimizer: new kd.optim.Adam(model.parameters(), { lr: 0.01 }),
      trainingDataLoader: new kd.utils.data.DataLoader(ds, { batchSize: 64 }), device: 'cpu', log: () => {},
    };
    await time('super_resolution', () => train(1, ctx));
  },
  async fast_neural_style() {
    const { TransformerNet } = require('../examples/pytorch/fast_neural_style/neural_style/transformer_net');
    const { Vgg16 } = require('../examples/pytorch/fast_neural_style/neural_style/vgg');
    const { trainStep, styleGrams } = require('../examples/pytorch/fast_neural_style/neural_style/neural_style');
    const transformer = new TransformerNet();
    const vgg = new Vgg16();
    const ctx = {
      transformer, vgg, optimizer: new kd.optim.Adam(transformer.parameters(), { lr: 1e-3 }), mseLoss: new kd.nn.MSELoss(),
      gramStyle: styleGrams(vgg, kd.rand(3, 256, 256).mul(255), 4, 'cpu'), contentWeight: 1e5, styleWeight: 1e10,
    };
    const x = kd.rand(4, 3, 256, 256).mul(255);
    await time('fast_neural_style', () => trainStep(ctx, x));
  },
};

(async () => {
  for (const [name, run] of Object.entries(benches)) if (!opt.only || opt.only === name) await run();
})();
