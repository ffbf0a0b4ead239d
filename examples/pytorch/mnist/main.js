// main.js - pytorch/examples' mnist/main.py (a CNN trained with Adadelta and StepLR), ported
// line by line to kindling. Fashion-MNIST stands in for MNIST (same format; synthetic data when
// it is not installed: see ../common/datasets.js).
//
//   node examples/pytorch/mnist/main.js                       # 14 epochs, as the original
//   node examples/pytorch/mnist/main.js --dry-run --limit 2000   # a quick check
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
    this.conv1 = new nn.Conv2d(1, 32, 3, 1);
    this.conv2 = new nn.Conv2d(32, 64, 3, 1);
    this.dropout1 = new nn.Dropout(0.25);
    this.dropout2 = new nn.Dropout(0.5);
    this.fc1 = new nn.Linear(9216, 128);
    this.fc2 = new nn.Linear(128, 10);
  }

  forward(x) {
    x = this.conv1(x);
    x = F.relu(x);
    x = this.conv2(x);
    x = F.relu(x);
    x = F.maxPool2d(x, 2);
    x = this.dropout1(x);
    x = kd.flatten(x, 1);
    x = this.fc1(x);
    x = F.relu(x);
    x = this.dropout2(x);
    x = this.fc2(x);
    const output = F.logSoftmax(x, { dim: 1 });
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

function test(model, device, testLoader) {
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
    }
  });

  testLoss /= testLoader.dataset.length;

  console.log(`\nTest set: Average loss: ${testLoss.toFixed(4)}, Accuracy: ${correct}/${testLoader.dataset.length} ` +
    `(${(100 * correct / testLoader.dataset.length).toFixed(0)}%)\n`);
}

function makeParser() {
  // Training settings
  const parser = new ArgumentParser({ description: 'PyTorch MNIST Example' });
  parser.addArgument('--batch-size', { type: 'int', default: 64, metavar: 'N', help: 'input batch size for training (default: 64)' });
  parser.addArgument('--test-batch-size', { type: 'int', default: 1000, metavar: 'N', help: 'input batch size for testing (default: 1000)' });
  parser.addArgument('--epochs', { type: 'int', default: 14, metavar: 'N', help: 'number of epochs to train (default: 14)' });
  parser.addArgument('--lr', { type: 'float', default: 1.0, metavar: 'LR', help: 'learning rate (default: 1.0)' });
  parser.addArgument('--gamma', { type: 'float', default: 0.7, metavar: 'M', help: 'Learning rate step gamma (default: 0.7)' });
  parser.addArgument('--no-accel', { action: 'store_true', help: 'disables accelerator' });
  parser.addArgument('--dry-run', { action: 'store_true', help: 'quickly check a single pass' });
  parser.addArgument('--seed', { type: 'int', default: 1, metavar: 'S', help: 'random seed (default: 1)' });
  parser.addArgument('--log-interval', { type: 'int', default: 10, metavar: 'N', help: 'how many batches to wait before logging training status' });
  parser.addArgument('--save-model', { action: 'store_true', help: 'For Saving the current Model' });
  parser.addArgument('--limit', { type: 'int', default: 0, metavar: 'N', help: 'use only the first N samples of each split (kindling addition; 0: all)' });
  return parser;
}

function main(argv) {
  const args = makeParser().parseArgs(argv);

  const useAccel = !args.noAccel && kd.cuda.isAvailable();

  kd.manualSeed(args.seed);

  const device = useAccel ? 'cuda' : 'cpu';

  const trainKwargs = { batchSize: args.batchSize };
  const testKwargs = { batchSize: args.testBatchSize };
  if (useAccel) {
    const accelKwargs = { pinMemory: true, shuffle: true };
    Object.assign(trainKwargs, accelKwargs);
    Object.assign(testKwargs, accelKwargs);
  }

  const transform = transforms.Compose([
    transforms.ToTensor(),
    transforms.Normalize([0.1307], [0.3081]),
  ]);
  const dataset1 = new datasets.MNIST('../data', { train: true, download: true, transform, limit: args.limit });
  const dataset2 = new datasets.MNIST('../data', { train: false, transform, limit: args.limit });
  const trainLoader = new kd.data.DataLoader(dataset1, trainKwargs);
  const testLoader = new kd.data.DataLoader(dataset2, testKwargs);

  const model = new Net().to(device);
  const optimizer = new optim.Adadelta(model.parameters(), { lr: args.lr });

  const scheduler = new StepLR(optimizer, { stepSize: 1, gamma: args.gamma });
  for (let epoch = 1; epoch <= args.epochs; epoch++) {
    train(args, model, device, trainLoader, optimizer, epoch);
    test(model, device, testLoader);
    scheduler.step();
  }

  if (args.saveModel) kd.saveSync(model.stateDict(), 'mnist_cnn.safetensors');
}

module.exports = { Net, train, test, makeParser, main };

if (require.main === module) main();
