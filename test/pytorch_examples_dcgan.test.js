// pytorch_examples_dcgan.test.js - examples/pytorch/dcgan (pytorch/examples' dcgan/main.py ported)
// against PyTorch 1.13: from the same initial weights (test/fixtures/pytorch_examples/dcgan.*,
// written by tools/fixtures/pytorch_examples/dcgan.py from the original's Generator,
// Discriminator and weights_init), 5 iterations of the training loop on the same real batches and
// noise give the same Loss_D, Loss_G, D(x), D(G(z)) as PyTorch's. Also: weightsInit draws what it
// should, and the program's --dry-run runs end to end (fake data and, when installed,
// Fashion-MNIST) and writes its images and checkpoints.
//
// Tolerance: relative 2e-5. The fixture's float64 run of the same steps differs from PyTorch's
// float32 run by at most 5e-7 (relative): that is float32 rounding through ~20 layers and 5 Adam
// steps. kindling's float32 kernels round differently from PyTorch's (other summation orders in
// convolutions and reductions), so the bound is 40 times that gap; a wrong op (e.g. BCELoss's
// log clamp, LeakyReLU's slope, Adam's bias correction, BatchNorm's biased variance) moves the
// values by 1e-3 or more.
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const kd = require('..');
const { Generator, Discriminator, weightsInit, trainStep } = require('../examples/pytorch/dcgan/main');
const { lcgTensor, loadFixture, loadInto, assertSteps, runExample } = require('./pytorch_examples_helpers');

const { expected, tensors } = loadFixture('dcgan');
const devices = ['cpu', ...(kd.cuda.isAvailable() ? ['cuda'] : [])];

/** The 5 fixture steps in kindling on `device`, from the fixture's initial weights. */
function runSteps(device) {
  const { nz, ngf, ndf, nc, batchSize, lr, beta1, steps } = expected.config;
  const netG = new Generator(1, nz, ngf, nc);
  const netD = new Discriminator(1, nc, ndf);
  loadInto(netG, tensors, 'netG.');
  loadInto(netD, tensors, 'netD.');
  netG.to(device);
  netD.to(device);
  const nets = {
    netD, netG, criterion: new kd.nn.BCELoss(),
    optimizerD: new kd.optim.Adam(netD.parameters(), { lr, betas: [beta1, 0.999] }),
    optimizerG: new kd.optim.Adam(netG.parameters(), { lr, betas: [beta1, 0.999] }),
  };
  const { real, noise } = expected.inputs;
  const out = [];
  for (let k = 0; k < steps; k++) {
    kd.tidy(() => {
      const x = lcgTensor(real.seed + k, [batchSize, nc, 64, 64], real.lo, real.hi).to(device);
      const z = lcgTensor(noise.seed + k, [batchSize, nz, 1, 1], noise.lo, noise.hi).to(device);
      out.push(trainStep(nets, x, z, device));
    });
  }
  return out;
}

describe('examples/pytorch/dcgan', function () {
  this.timeout(120000);

  for (const device of devices) {
    it(`5 training iterations match PyTorch's losses (${device})`, function () {
      assertSteps(runSteps(device), expected.steps, { rtol: 2e-5 });
    });
  }

  it('the losses differ from PyTorch when the first step is skipped (the comparison can fail)', function () {
    assert.throws(() => assertSteps(runSteps('cpu').slice(1), expected.steps.slice(0, 4), { rtol: 2e-5 }), /step 0/);
  });

  it('weightsInit: conv weights N(0, 0.02), BatchNorm weights N(1, 0.02) and zero biases', function () {
    kd.manualSeed(1);
    const netG = new Generator(1, 100, 64, 3);
    netG.apply(weightsInit);
    const w = netG.main[3].weight; // ConvTranspose2d(512, 256, 4, 2, 1)
    assert.ok(Math.abs(w.mean().item()) < 2e-4);
    assert.ok(Math.abs(w.std().item() - 0.02) < 2e-4);
    const bn = netG.main[1];
    assert.ok(Math.abs(bn.weight.mean().item() - 1) < 0.01 && Math.abs(bn.weight.std().item() - 0.02) < 0.005);
    assert.equal(bn.bias.abs().sum().item(), 0);
  });

  it('the Discriminator returns one probability per image, the Generator 64x64 images', function () {
    kd.tidy(() => {
      const g = new Generator(1, 8, 4, 3);
      const d = new Discriminator(1, 3, 4);
      const fake = g(kd.randn(2, 8, 1, 1));
      assert.deepEqual(fake.shape, [2, 3, 64, 64]);
      const p = d(fake);
      assert.deepEqual(p.shape, [2]);
      assert.ok(p.min().item() > 0 && p.max().item() < 1);
    });
  });

  describe('main.js --dry-run', function () {
    let outf;
    beforeEach(() => { outf = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-dcgan-')); });
    afterEach(() => fs.rmSync(outf, { recursive: true, force: true }));

    const check = (stdout) => {
      assert.match(stdout, /^\[0\/1\]\[0\/\d+\] Loss_D: \d+\.\d{4} Loss_G: \d+\.\d{4} D\(x\): \d\.\d{4} D\(G\(z\)\): \d\.\d{4} \/ \d\.\d{4}$/m);
      for (const f of ['real_samples.png', 'fake_samples_epoch_000.png', 'netG_epoch_0.safetensors', 'netD_epoch_0.safetensors']) {
        assert.ok(fs.existsSync(path.join(outf, f)), f);
      }
      const png = fs.readFileSync(path.join(outf, 'real_samples.png'));
      assert.equal(png.subarray(1, 4).toString(), 'PNG');
    };

    it('--dataset fake (one worker thread), small widths', async function () {
      const { stdout } = await runExample('examples/pytorch/dcgan/main.js',
        ['--dataset', 'fake', '--dry-run', '--batchSize', '8', '--ngf', '16', '--ndf', '16', '--workers', '1', '--manualSeed', '1', '--outf', outf]);
      assert.match(stdout, /Random Seed: {2}1/);
      check(stdout);
      // the checkpoint loads back through --netG / --netD
      const again = await runExample('examples/pytorch/dcgan/main.js',
        ['--dataset', 'fake', '--dry-run', '--batchSize', '8', '--ngf', '16', '--ndf', '16', '--workers', '0', '--outf', outf,
          '--netG', path.join(outf, 'netG_epoch_0.safetensors'), '--netD', path.join(outf, 'netD_epoch_0.safetensors')]);
      check(again.stdout);
    });

    it('--dataset fashion-mnist (when installed)', async function () {
      if (!fs.existsSync('/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz')) this.skip();
      const { stdout } = await runExample('examples/pytorch/dcgan/main.js',
        ['--dataset', 'fashion-mnist', '--dry-run', '--batchSize', '8', '--ngf', '16', '--ndf', '16', '--workers', '0', '--outf', outf]);
      check(stdout);
      assert.match(stdout, /\[0\/7500\]/);
    });

    it('a missing --dataset is an argparse error', async function () {
      await assert.rejects(runExample('examples/pytorch/dcgan/main.js', ['--dry-run']),
        (e) => e.code === 2 && /the following arguments are required: --dataset/.test(e.stderr));
    });
  });
});
