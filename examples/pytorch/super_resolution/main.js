#!/usr/bin/env node
// main.js - pytorch/examples' super_resolution/main.py in kindling, line by line: trains the
// sub-pixel network of model.js (PixelShuffle) to upscale the luminance of images by
// --upscale_factor, with MSELoss and Adam, printing the loss of each iteration and the test PSNR
// of each epoch, and saving the model after each epoch (model_epoch_N.safetensors, in the
// current folder, with the upscale factor in its metadata for super_resolve.js).
//
//   node examples/pytorch/super_resolution/main.js --upscale_factor 3 --batchSize 4 --testBatchSize 100 --nEpochs 30 --lr 0.001
//   node examples/pytorch/super_resolution/main.js --upscale_factor 3 --dataset synthetic      # 256x256 crops
//   node examples/pytorch/super_resolution/main.js --upscale_factor 3 --nEpochs 1 --max-steps 2  # a quick check
//
// Differences from the original: BSDS300 is a download, so the images are Fashion-MNIST's
// (default) or synthetic ones at the original's 256x256 (--dataset, see data.js); --max-steps N
// (added) stops each epoch's training and test after N batches; the checkpoint is a safetensors
// state dict instead of a pickled module. See README.md.
'use strict';

const kd = require('../../..');
const { ArgumentParser, namespace } = require('../dcgan/argparse');
const { Net } = require('./model');
const { getTrainingSet, getTestSet } = require('./data');

const nn = kd.nn;
const optim = kd.optim;

function parseOptions(argv) {
  // Training settings
  const parser = new ArgumentParser({ description: 'PyTorch Super Res Example' });
  parser.addArgument('--upscale_factor', { type: 'int', required: true, help: 'super resolution upscale factor' });
  parser.addArgument('--batchSize', { type: 'int', default: 64, help: 'training batch size' });
  parser.addArgument('--testBatchSize', { type: 'int', default: 10, help: 'testing batch size' });
  parser.addArgument('--nEpochs', { type: 'int', default: 2, help: 'number of epochs to train for' });
  parser.addArgument('--lr', { type: 'float', default: 0.01, help: 'Learning Rate. Default=0.01' });
  parser.addArgument('--accel', { action: 'store_true', help: 'Enables acceleration for training, if available' });
  parser.addArgument('--threads', { type: 'int', default: 4, help: 'number of threads for data loader to use' });
  parser.addArgument('--seed', { type: 'int', default: 123, help: 'random seed to use. Default=123' });
  parser.addArgument('--dataset', { default: 'fashion-mnist', help: 'fashion-mnist | synthetic (the images trained on; BSDS300 is a download)' });
  parser.addArgument('--max-steps', { type: 'int', default: 0, help: 'stop each epoch after this many batches (0: all)' });
  return parser.parseArgs(argv);
}

/** One epoch of the original's train(epoch); returns the loss of each iteration. */
async function train(epoch, { model, criterion, optimizer, trainingDataLoader, device, maxSteps = 0, log = console.log }) {
  let epochLoss = 0;
  const losses = [];
  let iteration = 1;
  const n = maxSteps > 0 ? Math.min(maxSteps, trainingDataLoader.length) : trainingDataLoader.length;
  for await (const batch of trainingDataLoader) {
    kd.tidy(() => {
      const [input, target] = [batch[0].to(device), batch[1].to(device)];

      optimizer.zeroGrad();
      const loss = criterion(model(input), target);
      epochLoss += loss.item();
      loss.backward();
      optimizer.step();

      losses.push(loss.item());
      log(`===> Epoch[${epoch}](${iteration}/${trainingDataLoader.length}): Loss: ${loss.item().toFixed(4)}`);
    });
    kd.dispose(batch);
    if (iteration++ === n) break;
  }

  log(`===> Epoch ${epoch} Complete: Avg. Loss: ${(epochLoss / n).toFixed(4)}`);
  return losses;
}

/** The original's test(): the mean PSNR of the test set; returns it. */
async function test({ model, criterion, testingDataLoader, device, maxSteps = 0, log = console.log }) {
  let avgPsnr = 0;
  let count = 0;
  const n = maxSteps > 0 ? Math.min(maxSteps, testingDataLoader.length) : testingDataLoader.length;
  for await (const batch of testingDataLoader) {
    kd.noGrad(() => kd.tidy(() => {
      const [input, target] = [batch[0].to(device), batch[1].to(device)];

      const prediction = model(input);
      const mse = criterion(prediction, target);
      const psnr = 10 * Math.log10(1 / mse.item());
      avgPsnr += psnr;
    }));
    kd.dispose(batch);
    if (++count === n) break;
  }
  log(`===> Avg. PSNR: ${(avgPsnr / n).toFixed(4)} dB`);
  return avgPsnr / n;
}

async function checkpoint(epoch, model, upscaleFactor) {
  const modelOutPath = `model_epoch_${epoch}.safetensors`;
  await kd.save(model.stateDict(), modelOutPath, { metadata: { upscaleFactor: String(upscaleFactor) } });
  console.log(`Checkpoint saved to ${modelOutPath}`);
}

async function main(argv = process.argv.slice(2)) {
  const opt = parseOptions(argv);

  console.log(namespace(opt));

  kd.manualSeed(opt.seed);

  const device = opt.accel && kd.cuda.isAvailable() ? 'cuda' : 'cpu';

  console.log('===> Loading datasets');
  const trainSet = getTrainingSet(opt.upscaleFactor, opt.dataset);
  const testSet = getTestSet(opt.upscaleFactor, opt.dataset);
  const trainingDataLoader = new kd.utils.data.DataLoader(trainSet, { numWorkers: opt.threads, batchSize: opt.batchSize, shuffle: true });
  const testingDataLoader = new kd.utils.data.DataLoader(testSet, { numWorkers: opt.threads, batchSize: opt.testBatchSize, shuffle: false });

  console.log('===> Building model');
  const model = new Net(opt.upscaleFactor).to(device);
  const criterion = new nn.MSELoss();

  const optimizer = new optim.Adam(model.parameters(), { lr: opt.lr });

  const ctx = { model, criterion, optimizer, trainingDataLoader, testingDataLoader, device, maxSteps: opt.maxSteps };
  for (let epoch = 1; epoch < opt.nEpochs + 1; epoch++) {
    await train(epoch, ctx);
    await test(ctx);
    await checkpoint(epoch, model, opt.upscaleFactor);
  }
}

if (require.main === module) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}

module.exports = { train, test, parseOptions, main };
