#!/usr/bin/env node
// main.js - pytorch/examples' dcgan/main.py (Deep Convolutional GANs) in kindling, line by line:
// the same Generator and Discriminator, weights_init, BCELoss, Adam with betas (beta1, 0.999),
// flags and printouts. Runs on the CPU (or CUDA with --accel).
//
//   node examples/pytorch/dcgan/main.js --dataset fake --dry-run                  # one step, 64x64
//   node examples/pytorch/dcgan/main.js --dataset fashion-mnist --niter 5 --outf /tmp/dcgan
//   node examples/pytorch/dcgan/main.js --dataset mnist --dataroot <folder of MNIST .gz files>
//
// Differences from the original, all forced by what is not there offline or in one process:
// the data sets are `fake` (torchvision's FakeData), `mnist` (MNIST-format IDX files in
// --dataroot) and `fashion-mnist` (the same, --dataroot defaulting to Debian's
// dataset-fashion-mnist folder); cifar10/lsun/imagenet/folder/lfw need downloads or image
// decoders and are refused. Checkpoints are safetensors (netG_epoch_N.safetensors, loaded back
// with --netG/--netD) instead of pickles; sample images are PNG (vutils.js). --ngpu > 1 runs on
// one device (kindling has no DataParallel). Each training step runs in kd.tidy, which frees its
// intermediate tensors at once. See README.md.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const kd = require('../../..');
const { ArgumentParser, namespace } = require('./argparse');
const vutils = require('./vutils');
const { FASHION_MNIST_DIR } = require('./datasets');

const nn = kd.nn;
const optim = kd.optim;

// custom weights initialization called on netG and netD
function weightsInit(m) {
  const classname = m.constructor.name;
  if (classname.indexOf('Conv') !== -1) {
    nn.init.normal_(m.weight, 0.0, 0.02);
  } else if (classname.indexOf('BatchNorm') !== -1) {
    nn.init.normal_(m.weight, 1.0, 0.02);
    nn.init.zeros_(m.bias);
  }
}

class Generator extends nn.Module {
  constructor(ngpu, nz, ngf, nc) {
    super();
    this.ngpu = ngpu;
    this.main = new nn.Sequential(
      // input is Z, going into a convolution
      new nn.ConvTranspose2d(nz, ngf * 8, 4, 1, 0, { bias: false }),
      new nn.BatchNorm2d(ngf * 8),
      new nn.ReLU(true),
      // state size. (ngf*8) x 4 x 4
      new nn.ConvTranspose2d(ngf * 8, ngf * 4, 4, 2, 1, { bias: false }),
      new nn.BatchNorm2d(ngf * 4),
      new nn.ReLU(true),
      // state size. (ngf*4) x 8 x 8
      new nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, { bias: false }),
      new nn.BatchNorm2d(ngf * 2),
      new nn.ReLU(true),
      // state size. (ngf*2) x 16 x 16
      new nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, { bias: false }),
      new nn.BatchNorm2d(ngf),
      new nn.ReLU(true),
      // state size. (ngf) x 32 x 32
      new nn.ConvTranspose2d(ngf, nc, 4, 2, 1, { bias: false }),
      new nn.Tanh(),
      // state size. (nc) x 64 x 64
    );
  }

  forward(input) {
    return this.main(input);
  }
}

class Discriminator extends nn.Module {
  constructor(ngpu, nc, ndf) {
    super();
    this.ngpu = ngpu;
    this.main = new nn.Sequential(
      // input is (nc) x 64 x 64
      new nn.Conv2d(nc, ndf, 4, 2, 1, { bias: false }),
      new nn.LeakyReLU(0.2, true),
      // state size. (ndf) x 32 x 32
      new nn.Conv2d(ndf, ndf * 2, 4, 2, 1, { bias: false }),
      new nn.BatchNorm2d(ndf * 2),
      new nn.LeakyReLU(0.2, true),
      // state size. (ndf*2) x 16 x 16
      new nn.Conv2d(ndf * 2, ndf * 4, 4, 2, 1, { bias: false }),
      new nn.BatchNorm2d(ndf * 4),
      new nn.LeakyReLU(0.2, true),
      // state size. (ndf*4) x 8 x 8
      new nn.Conv2d(ndf * 4, ndf * 8, 4, 2, 1, { bias: false }),
      new nn.BatchNorm2d(ndf * 8),
      new nn.LeakyReLU(0.2, true),
      // state size. (ndf*8) x 4 x 4
      new nn.Conv2d(ndf * 8, 1, 4, 1, 0, { bias: false }),
      new nn.Sigmoid(),
    );
  }

  forward(input) {
    const output = this.main(input);
    return output.view(-1, 1).squeeze(1);
  }
}

const realLabel = 1;
const fakeLabel = 0;

/**
 * One iteration of the original's loop body: (1) update D on a real batch and on G(noise),
 * (2) update G. `noise` is the [batch, nz, 1, 1] draw the original makes inside the loop (given
 * here so that a test can replay PyTorch's). Returns errD, errG, D_x, D_G_z1, D_G_z2 as numbers.
 */
function trainStep({ netD, netG, criterion, optimizerD, optimizerG }, realCpu, noise, device = 'cpu') {
  return kd.tidy(() => {
    ////////////////////////////////////////////////////////////
    // (1) Update D network: maximize log(D(x)) + log(1 - D(G(z)))
    ////////////////////////////////////////////////////////////
    // train with real
    netD.zeroGrad();
    const batchSize = realCpu.size(0);
    const label = kd.full([batchSize], realLabel, { dtype: realCpu.dtype, device });

    let output = netD(realCpu);
    const errDReal = criterion(output, label);
    errDReal.backward();
    const Dx = output.mean().item();

    // train with fake
    const fake = netG(noise);
    label.fill_(fakeLabel);
    output = netD(fake.detach());
    const errDFake = criterion(output, label);
    errDFake.backward();
    const DGz1 = output.mean().item();
    const errD = errDReal.add(errDFake);
    optimizerD.step();

    ////////////////////////////////////////////////////////////
    // (2) Update G network: maximize log(D(G(z)))
    ////////////////////////////////////////////////////////////
    netG.zeroGrad();
    label.fill_(realLabel); // fake labels are real for generator cost
    output = netD(fake);
    const errG = criterion(output, label);
    errG.backward();
    const DGz2 = output.mean().item();
    optimizerG.step();
    return { errD: errD.item(), errG: errG.item(), Dx, DGz1, DGz2 };
  });
}

function parseOptions(argv) {
  const parser = new ArgumentParser();
  parser.addArgument('--dataset', { required: true, help: 'fake | mnist | fashion-mnist (cifar10 | lsun | imagenet | folder | lfw need downloads)' });
  parser.addArgument('--dataroot', { help: 'path to dataset' });
  parser.addArgument('--workers', { type: 'int', help: 'number of data loading workers', default: 2 });
  parser.addArgument('--batchSize', { type: 'int', default: 64, help: 'input batch size' });
  parser.addArgument('--imageSize', { type: 'int', default: 64, help: 'the height / width of the input image to network' });
  parser.addArgument('--nz', { type: 'int', default: 100, help: 'size of the latent z vector' });
  parser.addArgument('--ngf', { type: 'int', default: 64, help: 'number of generator filters' });
  parser.addArgument('--ndf', { type: 'int', default: 64, help: 'number of discriminator filters' });
  parser.addArgument('--niter', { type: 'int', default: 25, help: 'number of epochs to train for' });
  parser.addArgument('--lr', { type: 'float', default: 0.0002, help: 'learning rate, default=0.0002' });
  parser.addArgument('--beta1', { type: 'float', default: 0.5, help: 'beta1 for adam. default=0.5' });
  parser.addArgument('--dry-run', { action: 'store_true', help: 'check a single training cycle works' });
  parser.addArgument('--ngpu', { type: 'int', default: 1, help: 'number of GPUs to use' });
  parser.addArgument('--netG', { default: '', help: 'path to netG (to continue training)' });
  parser.addArgument('--netD', { default: '', help: 'path to netD (to continue training)' });
  parser.addArgument('--outf', { default: '.', help: 'folder to output images and model checkpoints' });
  parser.addArgument('--manualSeed', { type: 'int', help: 'manual seed' });
  parser.addArgument('--classes', { default: 'bedroom', help: 'comma separated list of classes for the lsun data set' });
  parser.addArgument('--accel', { action: 'store_true', default: false, help: 'enables accelerator' });
  return parser.parseArgs(argv);
}

async function main(argv = process.argv.slice(2)) {
  const opt = parseOptions(argv);
  console.log(namespace(opt));

  fs.mkdirSync(opt.outf, { recursive: true });

  if (opt.manualSeed === null) opt.manualSeed = 1 + Math.floor(Math.random() * 10000);
  console.log('Random Seed: ', opt.manualSeed);
  kd.manualSeed(opt.manualSeed);

  const device = opt.accel && kd.cuda.isAvailable() ? 'cuda' : 'cpu';
  console.log(`Using device: ${device}`);

  if (opt.dataroot === null && opt.dataset.toLowerCase() !== 'fake' && opt.dataset !== 'fashion-mnist') {
    throw new Error(`\`dataroot\` parameter is required for dataset "${opt.dataset}"`);
  }

  const datasets = path.join(__dirname, 'datasets.js');
  let dataset;
  let nc;
  if (opt.dataset === 'mnist' || opt.dataset === 'fashion-mnist') {
    dataset = kd.utils.data.fromModule({ module: datasets, export: 'IdxImages', args: [opt.dataroot || FASHION_MNIST_DIR, opt.imageSize] });
    nc = 1;
  } else if (opt.dataset === 'fake') {
    dataset = kd.utils.data.fromModule({ module: datasets, export: 'FakeData', args: [[3, opt.imageSize, opt.imageSize]] });
    nc = 3;
  } else {
    throw new Error(`dataset "${opt.dataset}" is not available in this port: use fake, mnist (--dataroot with MNIST-format files) or fashion-mnist`);
  }

  const dataloader = new kd.utils.data.DataLoader(dataset, { batchSize: opt.batchSize, shuffle: true, numWorkers: opt.workers });

  const ngpu = opt.ngpu;
  const nz = opt.nz;
  const ngf = opt.ngf;
  const ndf = opt.ndf;

  const netG = new Generator(ngpu, nz, ngf, nc).to(device);
  netG.apply(weightsInit);
  if (opt.netG !== '') netG.loadStateDict(kd.loadSync(opt.netG));
  console.log(String(netG));

  const netD = new Discriminator(ngpu, nc, ndf).to(device);
  netD.apply(weightsInit);
  if (opt.netD !== '') netD.loadStateDict(kd.loadSync(opt.netD));
  console.log(String(netD));

  const criterion = new nn.BCELoss();

  const fixedNoise = kd.randn([opt.batchSize, nz, 1, 1], { device });

  // setup optimizer
  const optimizerD = new optim.Adam(netD.parameters(), { lr: opt.lr, betas: [opt.beta1, 0.999] });
  const optimizerG = new optim.Adam(netG.parameters(), { lr: opt.lr, betas: [opt.beta1, 0.999] });
  const nets = { netD, netG, criterion, optimizerD, optimizerG };

  if (opt.dryRun) opt.niter = 1;

  for (let epoch = 0; epoch < opt.niter; epoch++) {
    let i = 0;
    for await (const data of dataloader) {
      const realCpu = data[0].to(device);
      const batchSize = realCpu.size(0);
      const noise = kd.randn([batchSize, nz, 1, 1], { device });
      const r = trainStep(nets, realCpu, noise, device);

      console.log(`[${epoch}/${opt.niter}][${i}/${dataloader.length}] Loss_D: ${r.errD.toFixed(4)} Loss_G: ${r.errG.toFixed(4)} ` +
        `D(x): ${r.Dx.toFixed(4)} D(G(z)): ${r.DGz1.toFixed(4)} / ${r.DGz2.toFixed(4)}`);
      if (i % 100 === 0) {
        vutils.saveImage(realCpu, `${opt.outf}/real_samples.png`, { normalize: true });
        kd.tidy(() => {
          const fake = netG(fixedNoise);
          vutils.saveImage(fake.detach(), `${opt.outf}/fake_samples_epoch_${String(epoch).padStart(3, '0')}.png`, { normalize: true });
        });
      }
      kd.dispose([data, realCpu, noise]);
      i++;

      if (opt.dryRun) break;
    }
    // do checkpointing
    await kd.save(netG.stateDict(), `${opt.outf}/netG_epoch_${epoch}.safetensors`);
    await kd.save(netD.stateDict(), `${opt.outf}/netD_epoch_${epoch}.safetensors`);
  }
}

if (require.main === module) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}

module.exports = { Generator, Discriminator, weightsInit, trainStep, parseOptions, main };
