#!/usr/bin/env node
// main.js - pytorch/examples' mnist_rnn/main.py (an LSTM reads each image row by row; BatchNorm,
// dropout and two Linear layers classify its last output; Adadelta with StepLR), ported line by
// line to kindling. Fashion-MNIST stands in for MNIST (same format; synthetic data when it is not
// installed: see ../common/datasets.js).
//
//   node examples/pytorch/mnist_rnn/main.js                        # 14 epochs, as the original
//   node examples/pytorch/mnist_rnn/main.js --dry-run --limit 2000    # a quick check
'use strict';

const kd = require('../../..');
const { nn, optim } = kd;
const F = nn.functional;
const { StepLR } = optim.lrScheduler;
const { ArgumentParser } = require('../common/argparse');
const { datasets, transforms } = require('../common/datasets');

class Net extends nn.Module {
  constructor() {
    super();
    this.rnn = new nn.LSTM({ inputSize: 28, hiddenSize: 64, batchFirst: true });
    this.batchnorm = new nn.BatchNorm1d(64);
    this.dropout1 = new nn.Dropout2d(0.25);
    this.dropout2 = new nn.Dropout2d(0.5);
    this.fc1 = new nn.Linear(64, 32);
    this.fc2 = new nn.Linear(32, 10);
  }

  forward(input) {
    // Shape of input is (batch_size,1, 28, 28)
    // converting shape of input to (batch_size, 28, 28)
    // as required by RNN when batch_first is set True
    input = input.reshape(-1, 28, 28);
    let [output, hidden] = this.rnn(input); // eslint-disable-line no-unused-vars, prefer-const

    // RNN output shape is (seq_len, batch, input_size)
    // Get last output of RNN
    output = output.index([kd.slice(), -1, kd.slice()]);
    output = this.batchnorm(output);
    output = this.dropout1(output);
    output = this.fc1(output);
    output = F.relu(output);
    output = this.dropout2(output);
    output = this.fc2(output);
    output = F.logSoftmax(output, { dim: 1 });
    return output;
  }
}

function train(args, model, device, trainLoader, optimizer, epoch) {
  model.train();
  let batchIdx = 0;
  for (let [data, target] of trainLoader) {
    [data, target] = [data.to(device), target.to(device)];
    optimizer.zeroGrad();
    const output = model(data);
    const loss = F.nllLoss(output, target);
    loss.backward();
    optimizer.step();
    if (batchIdx % args.logInterval === 0) {
      console.log(`Train Epoch: ${epoch} [${batchIdx * data.shape[0]}/${trainLoader.dataset.length} ` +
        `(${(100 * batchIdx / trainLoader.length).toFixed(0)}%)]\tLoss: ${loss.item().toFixed(6)}`);
      if (args.dryRun) break;
    }
    batchIdx++;
  }
}

function test(args, model, device, testLoader) {
  model.eval();
  let testLoss = 0;
  let correct = 0;
  kd.noGrad(() => {
    for (let [data, target] of testLoader) {
      [data, target] = [data.to(device), target.to(device)];
      const output = model(data);
      testLoss += F.nllLoss(output, target, { reduction: 'sum' }).item(); // sum up batch loss
      const pred = output.argmax({ dim: 1, keepdim: true }); // get the index of the max log-probability
      correct += pred.eq(target.viewAs(pred)).sum().item();
      if (args.dryRun) break;
    }
  });

  testLoss /= testLoader.dataset.length;

  console.log(`\nTest set: Average loss: ${testLoss.toFixed(4)}, Accuracy: ${correct}/${testLoader.dataset.length} ` +
    `(${(100 * correct / testLoader.dataset.length).toFixed(0)}%)\n`);
}

function makeParser() {
  // Training settings
  const parser = new ArgumentParser({ description: 'PyTorch MNIST Example using RNN' });
  parser.addArgument('--batch-size', { type: 'int', default: 64, metavar: 'N', help: 'input batch size for training (default: 64)' });
  parser.addArgument('--test-batch-size', { type: 'int', default: 1000, metavar: 'N', help: 'input batch size for testing (default: 1000)' });
  parser.addArgument('--epochs', { type: 'int', default: 14, metavar: 'N', help: 'number of epochs to train (default: 14)' });
  parser.addArgument('--lr', { type: 'float', default: 0.1, metavar: 'LR', help: 'learning rate (default: 0.1)' });
  parser.addArgument('--gamma', { type: 'float', default: 0.7, metavar: 'M', help: 'learning rate step gamma (default: 0.7)' });
  parser.addArgument('--accel', { action: 'store_true', help: 'enables accelerator' });
  parser.addArgument('--dry-run', { action: 'store_true', help: 'quickly check a single pass' });
  parser.addArgument('--seed', { type: 'int', default: 1, metavar: 'S', help: 'random seed (default: 1)' });
  parser.addArgument('--log-interval', { type: 'int', default: 10, metavar: 'N', help: 'how many batches to wait before logging training status' });
  parser.addArgument('--save-model', { action: 'store_true', help: 'for Saving the current Model' });
  parser.addArgument('--limit', { type: 'int', default: 0, metavar: 'N', help: 'use only the first N samples of each split (kindling addition; 0: all)' });
  return parser;
}

function main(argv) {
  const args = makeParser().parseArgs(argv);

  const device = args.accel ? 'cuda' : 'cpu';

  kd.manualSeed(args.seed);

  const kwargs = args.accel ? { pinMemory: true } : {};
  const transform = transforms.Compose([
    transforms.ToTensor(),
    transforms.Normalize([0.1307], [0.3081]),
  ]);
  const trainLoader = new kd.data.DataLoader(
    new datasets.MNIST('../data', { train: true, download: true, transform, limit: args.limit }),
    { batchSize: args.batchSize, shuffle: true, ...kwargs });
  const testLoader = new kd.data.DataLoader(
    new datasets.MNIST('../data', { train: false, transform, limit: args.limit }),
    { batchSize: args.testBatchSize, shuffle: true, ...kwargs });

  const model = new Net().to(device);
  const optimizer = new optim.Adadelta(model.parameters(), { lr: args.lr });

  const scheduler = new StepLR(optimizer, { stepSize: 1, gamma: args.gamma });
  for (let epoch = 1; epoch <= args.epochs; epoch++) {
    train(args, model, device, trainLoader, optimizer, epoch);
    test(args, model, device, testLoader);
    scheduler.step();
  }

  if (args.saveModel) kd.saveSync(model.stateDict(), 'mnist_rnn.safetensors');
}

module.exports = { Net, train, test, makeParser, main };

if (require.main === module) main();
