#!/usr/bin/env node
// main.js - pytorch/examples' vae/main.py (a variational auto-encoder, Kingma and Welling),
// ported line by line to kindling. Fashion-MNIST stands in for MNIST (same format; synthetic data
// when it is not installed: see ../common/datasets.js). Reconstructions and samples are written
// as PNG grids to examples/pytorch/vae/results/ (git-ignored).
//
//   node examples/pytorch/vae/main.js                          # 10 epochs, as the original
//   node examples/pytorch/vae/main.js --epochs 1 --limit 512   # a quick check
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const kd = require('../../..');
const { nn, optim } = kd;
const F = nn.functional;
const { ArgumentParser } = require('../common/argparse');
const { datasets, transforms } = require('../common/datasets');
const { saveImage } = require('../dcgan/vutils'); // torchvision.utils.save_image

const RESULTS = path.join(__dirname, 'results');

function makeParser() {
  const parser = new ArgumentParser({ description: 'VAE MNIST Example' });
  parser.addArgument('--batch-size', { type: 'int', default: 128, metavar: 'N', help: 'input batch size for training (default: 128)' });
  parser.addArgument('--epochs', { type: 'int', default: 10, metavar: 'N', help: 'number of epochs to train (default: 10)' });
  parser.addArgument('--no-accel', { action: 'store_true', help: 'disables accelerator' });
  parser.addArgument('--seed', { type: 'int', default: 1, metavar: 'S', help: 'random seed (default: 1)' });
  parser.addArgument('--log-interval', { type: 'int', default: 10, metavar: 'N', help: 'how many batches to wait before logging training status' });
  parser.addArgument('--limit', { type: 'int', default: 0, metavar: 'N', help: 'use only the first N samples of each split (kindling addition; 0: all)' });
  return parser;
}

class VAE extends nn.Module {
  constructor() {
    super();

    this.fc1 = new nn.Linear(784, 400);
    this.fc21 = new nn.Linear(400, 20);
    this.fc22 = new nn.Linear(400, 20);
    this.fc3 = new nn.Linear(20, 400);
    this.fc4 = new nn.Linear(400, 784);
  }

  encode(x) {
    const h1 = F.relu(this.fc1(x));
    return [this.fc21(h1), this.fc22(h1)];
  }

  reparameterize(mu, logvar) {
    const std = kd.exp(logvar.mul(0.5));
    const eps = kd.randnLike(std);
    return mu.add(eps.mul(std));
  }

  decode(z) {
    const h3 = F.relu(this.fc3(z));
    return kd.sigmoid(this.fc4(h3));
  }

  forward(x) {
    const [mu, logvar] = this.encode(x.view(-1, 784));
    const z = this.reparameterize(mu, logvar);
    return [this.decode(z), mu, logvar];
  }
}

// Reconstruction + KL divergence losses summed over all elements and batch
function lossFunction(reconX, x, mu, logvar) {
  const BCE = F.binaryCrossEntropy(reconX, x.view(-1, 784), { reduction: 'sum' });

  // see Appendix B from VAE paper:
  // Kingma and Welling. Auto-Encoding Variational Bayes. ICLR, 2014
  // https://arxiv.org/abs/1312.6114
  // 0.5 * sum(1 + log(sigma^2) - mu^2 - sigma^2)
  const KLD = kd.sum(logvar.add(1).sub(mu.pow(2)).sub(logvar.exp())).mul(-0.5);

  return BCE.add(KLD);
}

let args, device, trainLoader, testLoader, model, optimizer;

function train(epoch) {
  model.train();
  let trainLoss = 0;
  let batchIdx = 0;
  for (let [data] of trainLoader) {
    data = data.to(device);
    optimizer.zeroGrad();
    const [reconBatch, mu, logvar] = model(data);
    const loss = lossFunction(reconBatch, data, mu, logvar);
    loss.backward();
    trainLoss += loss.item();
    optimizer.step();
    if (batchIdx % args.logInterval === 0) {
      console.log(`Train Epoch: ${epoch} [${batchIdx * data.shape[0]}/${trainLoader.dataset.length} ` +
        `(${(100 * batchIdx / trainLoader.length).toFixed(0)}%)]\tLoss: ${(loss.item() / data.shape[0]).toFixed(6)}`);
    }
    batchIdx++;
  }

  console.log(`====> Epoch: ${epoch} Average loss: ${(trainLoss / trainLoader.dataset.length).toFixed(4)}`);
}

function test(epoch) {
  model.eval();
  let testLoss = 0;
  kd.noGrad(() => {
    let i = 0;
    for (let [data] of testLoader) {
      data = data.to(device);
      const [reconBatch, mu, logvar] = model(data);
      testLoss += lossFunction(reconBatch, data, mu, logvar).item();
      if (i === 0) {
        const n = Math.min(data.size(0), 8);
        const comparison = kd.cat([data.slice(0, 0, n),
          reconBatch.view(args.batchSize, 1, 28, 28).slice(0, 0, n)]);
        saveImage(comparison.cpu(), path.join(RESULTS, `reconstruction_${epoch}.png`), { nrow: n });
      }
      i++;
    }
  });

  testLoss /= testLoader.dataset.length;
  console.log(`====> Test set loss: ${testLoss.toFixed(4)}`);
}

function main(argv) {
  fs.mkdirSync(RESULTS, { recursive: true }); // the original's results/ folder is in its repository
  args = makeParser().parseArgs(argv);

  const useAccel = !args.noAccel && kd.cuda.isAvailable();

  kd.manualSeed(args.seed);

  device = useAccel ? 'cuda' : 'cpu';

  console.log(`Using device: ${device}`);

  const kwargs = useAccel ? { pinMemory: true } : {};
  trainLoader = new kd.data.DataLoader(
    new datasets.MNIST('../data', { train: true, download: true, transform: transforms.ToTensor(), limit: args.limit }),
    { batchSize: args.batchSize, shuffle: true, ...kwargs });
  testLoader = new kd.data.DataLoader(
    new datasets.MNIST('../data', { train: false, transform: transforms.ToTensor(), limit: args.limit }),
    { batchSize: args.batchSize, shuffle: false, ...kwargs });

  model = new VAE().to(device);
  optimizer = new optim.Adam(model.parameters(), { lr: 1e-3 });

  for (let epoch = 1; epoch <= args.epochs; epoch++) {
    train(epoch);
    test(epoch);
    kd.noGrad(() => {
      let sample = kd.randn(64, 20).to(device);
      sample = model.decode(sample).cpu();
      saveImage(sample.view(64, 1, 28, 28), path.join(RESULTS, `sample_${epoch}.png`));
    });
  }
}

module.exports = { VAE, lossFunction, makeParser, main };

if (require.main === module) main();
