#!/usr/bin/env node
// main.js - pytorch/examples' mnist_hogwild/main.py (Hogwild: several workers train one shared
// model at once, without locks), ported line by line to kindling. PyTorch's processes
// (torch.multiprocessing) are worker threads here: model.shareMemory() shares the parameters,
// kd.multiprocessing.reduceTensor hands them to each worker (./train.js), whose optimizer updates
// the same bytes. Fashion-MNIST stands in for MNIST (same format; synthetic data when it is not
// installed: see ../common/datasets.js).
//
//   node examples/pytorch/mnist_hogwild/main.js                                 # 2 workers, 10 epochs
//   node examples/pytorch/mnist_hogwild/main.js --dry-run --epochs 1 --limit 1000   # a quick check
'use strict';

const path = require('node:path');
const { Worker } = require('node:worker_threads');
const kd = require('../../..');
const { nn } = kd;
const F = nn.functional;
const { ArgumentParser } = require('../common/argparse');
const { datasets, transforms } = require('../common/datasets');
const { test } = require('./train');

// Training settings
function makeParser() {
  const parser = new ArgumentParser({ description: 'PyTorch MNIST Example' });
  parser.addArgument('--batch-size', { type: 'int', default: 64, metavar: 'N', help: 'input batch size for training (default: 64)' });
  parser.addArgument('--test-batch-size', { type: 'int', default: 1000, metavar: 'N', help: 'input batch size for testing (default: 1000)' });
  parser.addArgument('--epochs', { type: 'int', default: 10, metavar: 'N', help: 'number of epochs to train (default: 10)' });
  parser.addArgument('--lr', { type: 'float', default: 0.01, metavar: 'LR', help: 'learning rate (default: 0.01)' });
  parser.addArgument('--momentum', { type: 'float', default: 0.5, metavar: 'M', help: 'SGD momentum (default: 0.5)' });
  parser.addArgument('--seed', { type: 'int', default: 1, metavar: 'S', help: 'random seed (default: 1)' });
  parser.addArgument('--log-interval', { type: 'int', default: 10, metavar: 'N', help: 'how many batches to wait before logging training status' });
  parser.addArgument('--num-processes', { type: 'int', default: 2, metavar: 'N', help: 'how many training processes to use (default: 2)' });
  parser.addArgument('--cuda', { action: 'store_true', help: 'enables CUDA training' });
  parser.addArgument('--save_model', { action: 'store_true', help: 'save the trained model to state_dict' });
  parser.addArgument('--dry-run', { action: 'store_true', help: 'quickly check a single pass' });
  parser.addArgument('--limit', { type: 'int', default: 0, metavar: 'N', help: 'use only the first N samples of each split (kindling addition; 0: all)' });
  return parser;
}

class Net extends nn.Module {
  constructor() {
    super();
    this.conv1 = new nn.Conv2d(1, 10, { kernelSize: 5 });
    this.conv2 = new nn.Conv2d(10, 20, { kernelSize: 5 });
    this.conv2_drop = new nn.Dropout2d();
    this.fc1 = new nn.Linear(320, 50);
    this.fc2 = new nn.Linear(50, 10);
  }

  forward(x) {
    x = F.relu(F.maxPool2d(this.conv1(x), 2));
    x = F.relu(F.maxPool2d(this.conv2_drop(this.conv2(x)), 2));
    x = x.view(-1, 320);
    x = F.relu(this.fc1(x));
    x = F.dropout(x, { training: this.training });
    x = this.fc2(x);
    return F.logSoftmax(x, { dim: 1 });
  }
}

/** The two datasets of the program (the workers make the training one again: see ./train.js). */
function makeDatasets(args) {
  const transform = transforms.Compose([
    transforms.ToTensor(),
    transforms.Normalize([0.1307], [0.3081]),
  ]);
  const dataset1 = new datasets.MNIST('../data', { train: true, download: true, transform, limit: args.limit });
  const dataset2 = new datasets.MNIST('../data', { train: false, transform, limit: args.limit });
  return [dataset1, dataset2];
}

/** Runs train(rank, ...) of ./train.js in a worker thread on the shared model; resolves when it exits. */
function startProcess(rank, args, model, device, dataloaderKwargs) {
  const state = {};
  for (const [name, p] of model.namedParameters()) state[name] = kd.multiprocessing.reduceTensor(p);
  const p = new Worker(path.join(__dirname, 'train.js'), { workerData: { hogwild: { rank, args, model: state, device, dataloaderKwargs } } });
  return new Promise((resolve, reject) => {
    p.once('error', reject);
    p.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`worker ${rank} exited with code ${code}`))));
  });
}

async function main(argv) {
  const args = makeParser().parseArgs(argv);

  const useCuda = args.cuda && kd.cuda.isAvailable();
  const device = useCuda ? 'cuda' : 'cpu';

  const [, dataset2] = makeDatasets(args);
  const kwargs = { batchSize: args.batchSize, shuffle: true };
  if (useCuda) Object.assign(kwargs, { pinMemory: true });

  kd.manualSeed(args.seed);

  const model = new Net().to(device);
  model.shareMemory(); // gradients are allocated lazily, so they are not shared here

  const processes = [];
  for (let rank = 0; rank < args.numProcesses; rank++) {
    // We first train the model across `numProcesses` workers
    processes.push(startProcess(rank, args, model, device, kwargs));
  }
  await Promise.all(processes);

  if (args.saveModel) kd.saveSync(model.stateDict(), 'MNIST_hogwild.safetensors');

  // Once training is complete, we can test the model
  test(args, model, device, dataset2, kwargs);
}

module.exports = { Net, makeParser, makeDatasets, main };

if (require.main === module) main().catch((e) => { console.error(e); process.exitCode = 1; });
