#!/usr/bin/env node
// data_prefetch.js - DataLoader prefetch on vs off (issue 7): one epoch over a Fashion-MNIST-sized
// TensorDataset (60000 x 784 float32 images, int64 labels; random data) with a small MLP training
// step (Linear(784, 256) -> ReLU -> Linear(256, 10), cross entropy, SGD), shuffled.
//
//   node bench/data_prefetch.js [--batch 64] [--epochs 3] [--hidden 256]
//
// Loaders compared (same seed, same batches):
//   background   `for await`, prefetch 2: batches gathered on the libuv thread pool (kd.data.gatherRows)
//   main-thread  `for await`, prefetch 2, through a dataset that hides its row tensors (only get and
//                getBatch): batches built in setImmediate tasks on the main thread (the old path)
//   off          `for await`, prefetch 0: each batch gathered on the main thread when asked for
// Prints per loader the best epoch's wall time (of --epochs, the loaders interleaved epoch by
// epoch so load from other processes hits them alike), the time the training loop spent waiting
// in `await` for its next batch (what prefetch hides; the least robust to load is the wall time),
// the best epoch of the loader alone (no training step), and of the training steps alone
// (batches gathered beforehand).
'use strict';

const kd = require('..');

const args = process.argv.slice(2);
const opt = (name, def) => { const i = args.indexOf(`--${name}`); return i >= 0 ? Number(args[i + 1]) : def; };
const BATCH = opt('batch', 64);
const EPOCHS = opt('epochs', 5);
const HIDDEN = opt('hidden', 256);
const N = 60000;
const now = () => performance.now();

kd.manualSeed(0);
const images = kd.rand([N, 784]);
const labels = kd.randint(0, 10, [N]);
const ds = new kd.data.TensorDataset(images, labels);
// The same samples with no row tensors: DataLoader takes the main-thread path.
const hidden = { get length() { return N; }, get: (i) => ds.get(i), getBatch: (idx) => ds.getBatch(idx) };

const model = kd.tidy(() => new kd.nn.Sequential(new kd.nn.Linear(784, HIDDEN), new kd.nn.ReLU(), new kd.nn.Linear(HIDDEN, 10)));
const optimizer = new kd.optim.SGD(model.parameters(), { lr: 0.01 });
const lossFn = new kd.nn.CrossEntropyLoss();
function step(x, y) {
  kd.tidy(() => {
    const loss = lossFn(model(x), y);
    optimizer.zeroGrad();
    loss.backward();
    optimizer.step();
  });
}

// One epoch: [wall ms, ms the loop spent waiting for its next batch (the stall prefetch hides)].
async function epoch(dataset, prefetch, train) {
  const loader = new kd.data.DataLoader(dataset, { batchSize: BATCH, shuffle: true, seed: 1, prefetch });
  const it = loader[Symbol.asyncIterator]();
  const t0 = now();
  let wait = 0;
  for (;;) {
    const w0 = now();
    const r = await it.next();
    wait += now() - w0;
    if (r.done) break;
    const [x, y] = r.value;
    if (train) step(x, y);
    kd.dispose([x, y]);
  }
  return [now() - t0, wait];
}

(async () => {
  console.log(`Fashion-MNIST-sized epoch: ${N} x 784 float32, batch ${BATCH}, MLP 784-${HIDDEN}-10, SGD; ` +
    `${kd.getNumThreads()} threads, best of ${EPOCHS} epochs`);
  await epoch(ds, 2, true); // warm up (allocator caches, JIT)
  const loaders = [['background (prefetch 2)', ds, 2], ['main-thread (prefetch 2)', hidden, 2], ['off (prefetch 0)', ds, 0]];
  const rows = loaders.map(([name]) => [name, Infinity, Infinity, Infinity]);
  // the training steps alone, on batches gathered beforehand
  const batches = [...new kd.data.DataLoader(ds, { batchSize: BATCH, shuffle: true, seed: 1 })];
  let compute = Infinity;
  for (let e = 0; e < EPOCHS; e++) {
    for (let i = 0; i < loaders.length; i++) {
      const [, dataset, prefetch] = loaders[i];
      const [train, wait] = await epoch(dataset, prefetch, true);
      rows[i][1] = Math.min(rows[i][1], train);
      rows[i][2] = Math.min(rows[i][2], wait);
      rows[i][3] = Math.min(rows[i][3], (await epoch(dataset, prefetch, false))[0]);
    }
    const t0 = now();
    for (const [x, y] of batches) step(x, y);
    compute = Math.min(compute, now() - t0);
  }
  for (const b of batches) kd.dispose(b);
  const ms = (x, w) => `${x.toFixed(0)} ms`.padStart(w);
  console.log(`${'loader'.padEnd(26)} ${'epoch (train)'.padStart(14)} ${'waiting for batches'.padStart(20)} ${'epoch (load only)'.padStart(18)}`);
  for (const [name, train, wait, load] of rows) console.log(`${name.padEnd(26)} ${ms(train, 14)} ${ms(wait, 20)} ${ms(load, 18)}`);
  console.log(`${'training steps alone'.padEnd(26)} ${`${compute.toFixed(0)} ms`.padStart(14)}`);
})();
