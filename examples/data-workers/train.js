// train.js - a DataLoader with worker threads: two workers make the batches of a dataset module
// (dataset.js) while the main thread trains a small MLP; the shuffle order is PyTorch's for the
// same generator seed. Run: node examples/data-workers/train.js
'use strict';

const path = require('node:path');
const kd = require('../..');

async function main() {
  const loader = new kd.data.DataLoader(
    { module: path.join(__dirname, 'dataset.js'), export: 'make', args: [2048] },
    { batchSize: 64, shuffle: true, numWorkers: 2, persistentWorkers: true, generator: new kd.data.Generator(0) },
  );
  kd.manualSeed(0);
  const model = new kd.nn.Sequential(new kd.nn.Linear(2, 64), new kd.nn.Tanh(), new kd.nn.Linear(64, 64), new kd.nn.Tanh(), new kd.nn.Linear(64, 2));
  const opt = new kd.optim.Adam(model.parameters(), { lr: 0.02 });
  for (let epoch = 0; epoch < 8; epoch++) {
    let total = 0;
    let batches = 0;
    for await (const [x, y] of loader) {
      total += kd.tidy(() => {
        opt.zeroGrad();
        const loss = kd.nn.functional.crossEntropy(model.forward(x), y);
        loss.backward();
        opt.step();
        return loss.item();
      });
      batches++;
      x.dispose();
      y.dispose();
    }
    console.log(`epoch ${epoch}: loss ${(total / batches).toFixed(4)} over ${batches} batches`);
  }
  await loader.shutdown();
}

main().catch((e) => { console.error(e); process.exit(1); });
