// train.js - pytorch/examples' mnist_hogwild/train.py ported to kindling: train() (run in a
// worker thread by ./main.js, on the shared model), test(), trainEpoch() and testEpoch().
// In a worker, the model is rebuilt from the parameters main.js shared
// (kd.multiprocessing.rebuildTensor): every worker's optimizer updates the same weights.
'use strict';

const { isMainThread, workerData, threadId } = require('node:worker_threads');
const kd = require('../../..');
const { optim } = kd;
const F = kd.nn.functional;

function train(rank, args, model, device, dataset, dataloaderKwargs) {
  kd.manualSeed(args.seed + rank);

  const trainLoader = new kd.data.DataLoader(dataset, dataloaderKwargs);

  const optimizer = new optim.SGD(model.parameters(), { lr: args.lr, momentum: args.momentum });
  for (let epoch = 1; epoch <= args.epochs; epoch++) {
    trainEpoch(epoch, args, model, device, trainLoader, optimizer);
  }
}

function test(args, model, device, dataset, dataloaderKwargs) {
  kd.manualSeed(args.seed);

  const testLoader = new kd.data.DataLoader(dataset, dataloaderKwargs);

  testEpoch(model, device, testLoader);
}

function trainEpoch(epoch, args, model, device, dataLoader, optimizer) {
  model.train();
  const pid = `${process.pid}:${threadId}`; // one process: the worker thread's id tells them apart
  let batchIdx = 0;
  for (const [data, target] of dataLoader) {
    optimizer.zeroGrad();
    const output = model(data.to(device));
    const loss = F.nllLoss(output, target.to(device));
    loss.backward();
    optimizer.step();
    if (batchIdx % args.logInterval === 0) {
      console.log(`${pid}\tTrain Epoch: ${epoch} [${batchIdx * data.shape[0]}/${dataLoader.dataset.length} ` +
        `(${(100 * batchIdx / dataLoader.length).toFixed(0)}%)]\tLoss: ${loss.item().toFixed(6)}`);
      if (args.dryRun) break;
    }
    batchIdx++;
  }
}

function testEpoch(model, device, dataLoader) {
  model.eval();
  let testLoss = 0;
  let correct = 0;
  kd.noGrad(() => {
    for (const [data, target] of dataLoader) {
      const output = model(data.to(device));
      testLoss += F.nllLoss(output, target.to(device), { reduction: 'sum' }).item(); // sum up batch loss
      const pred = output.max(1)[1]; // get the index of the max log-probability
      correct += pred.eq(target.to(device)).sum().item();
    }
  });

  testLoss /= dataLoader.dataset.length;
  console.log(`\nTest set: Average loss: ${testLoss.toFixed(4)}, Accuracy: ${correct}/${dataLoader.dataset.length} ` +
    `(${(100 * correct / dataLoader.dataset.length).toFixed(0)}%)\n`);
}

module.exports = { train, test, trainEpoch, testEpoch };

// In a worker started by main.js: the shared model and this worker's dataset, then train().
if (!isMainThread && workerData && workerData.hogwild) {
  const { rank, args, model: shared, device, dataloaderKwargs } = workerData.hogwild;
  const { Net, makeDatasets } = require('./main');
  const model = new Net().to(device); // p.data = t needs the same device type
  for (const [name, p] of model.namedParameters()) p.data = kd.multiprocessing.rebuildTensor(shared[name]);
  const [dataset1] = makeDatasets(args);
  train(rank, args, model, device, dataset1, dataloaderKwargs);
}
