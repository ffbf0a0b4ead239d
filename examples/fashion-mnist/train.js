#!/usr/bin/env node
// train.js - trains an MLP or a 2-conv CNN on Fashion-MNIST and reports test accuracy.
//
//   node examples/fashion-mnist/train.js                      # MLP, 10 epochs (~0.89)
//   node examples/fashion-mnist/train.js --model cnn          # CNN, 5 epochs (~0.91-0.92)
//   node examples/fashion-mnist/train.js --model cnn --device cuda --epochs 10 --batch-size 128
//   node examples/fashion-mnist/train.js --model cnn --device cuda --amp   # mixed precision
//
// Options: --model mlp|cnn, --epochs N, --batch-size N, --lr X (Adam), --device cpu|cuda,
// --threads N, --seed N, --limit N (samples per split, for a quick try), --out DIR, --quiet,
// --amp (forward and loss under kd.autocast: bfloat16 on the CPU, float16 with a GradScaler on CUDA).
// Adam with a cosine learning-rate schedule over the epochs, cross-entropy loss.
// Shows a progress bar per epoch (rate and ETA, on stderr), prints a summary table, and writes the
// trained weights (kd.save, safetensors), the per-epoch history (JSON) and the loss/accuracy
// curves (SVG) to examples/fashion-mnist/out/ (git-ignored).
'use strict';

const path = require('node:path');
const fs = require('node:fs');
const { parseArgs } = require('node:util');
const kd = require('../..');
const { loadFashionMnist, DatasetMissingError } = require('./data');
const models = require('./models')(kd);

const DEFAULT_EPOCHS = { mlp: 10, cnn: 5 };

function options() {
  const { values } = parseArgs({
    options: {
      model: { type: 'string', default: 'mlp' },
      epochs: { type: 'string' },
      'batch-size': { type: 'string', default: '64' },
      lr: { type: 'string', default: '1e-3' },
      device: { type: 'string', default: 'cpu' },
      threads: { type: 'string' },
      seed: { type: 'string', default: '0' },
      limit: { type: 'string' },
      out: { type: 'string', default: path.join(__dirname, 'out') },
      quiet: { type: 'boolean', default: false },
      amp: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    console.log(fs.readFileSync(__filename, 'utf8').split('\n').slice(1, 13).map((l) => l.replace(/^\/\/ ?/, '')).join('\n'));
    process.exit(0);
  }
  if (!models[values.model]) throw new Error(`--model must be one of ${Object.keys(models).join(', ')}, got '${values.model}'`);
  const int = (v, what) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n <= 0) throw new Error(`${what} must be a positive integer, got '${v}'`);
    return n;
  };
  return {
    model: values.model,
    epochs: values.epochs === undefined ? DEFAULT_EPOCHS[values.model] : int(values.epochs, '--epochs'),
    batchSize: int(values['batch-size'], '--batch-size'),
    lr: Number(values.lr),
    device: values.device,
    threads: values.threads === undefined ? null : int(values.threads, '--threads'),
    seed: Number(values.seed),
    limit: values.limit === undefined ? null : int(values.limit, '--limit'),
    out: values.out,
    quiet: values.quiet,
    amp: values.amp,
  };
}

/** Mean loss and accuracy over a split, in batches of 1000, without recording a graph. */
function evaluate(model, images, labels, device) {
  model.eval();
  const n = images.shape[0];
  let lossSum = 0;
  let correct = 0;
  kd.noGrad(() => {
    for (let i = 0; i < n; i += 1000) {
      kd.tidy(() => {
        const m = Math.min(1000, n - i);
        const x = images.narrow(0, i, m).to(device);
        const y = labels.narrow(0, i, m).to(device);
        const logits = model(x);
        lossSum += kd.nn.functional.crossEntropy(logits, y, { reduction: 'sum' }).item();
        correct += logits.argmax(1).eq(y).sum().item();
      });
    }
  });
  model.train();
  return { loss: lossSum / n, acc: correct / n };
}

async function main() {
  const opt = options();
  if (opt.device !== 'cpu' && !opt.device.startsWith('cuda')) throw new Error(`--device must be cpu or cuda, got '${opt.device}'`);
  if (opt.device.startsWith('cuda') && !kd.cuda.isAvailable()) {
    throw new Error('--device cuda: CUDA is not available (kindling built without nvcc, or no GPU/driver); run without --device');
  }
  if (opt.threads) kd.setNumThreads(opt.threads);
  kd.manualSeed(opt.seed);

  const t0 = performance.now();
  const { train, test } = loadFashionMnist({ limit: opt.limit });
  const nTrain = train.images.shape[0];
  console.log(`Fashion-MNIST: ${nTrain} training and ${test.images.shape[0]} test images ` +
    `(loaded in ${((performance.now() - t0) / 1000).toFixed(1)} s)`);

  let model = kd.tidy(() => models[opt.model]()); // parameters survive tidy; init temporaries go
  if (opt.device !== 'cpu') model = model.to(opt.device);
  const nParams = model.parameters().reduce((a, p) => a + p.numel(), 0);
  console.log(`model ${opt.model} (${nParams} parameters) on ${opt.device}, Adam lr ${opt.lr} (cosine to 0), ` +
    `batch ${opt.batchSize}, ${opt.epochs} epochs, ${kd.getNumThreads()} CPU threads` +
    `${opt.amp ? `, autocast ${opt.device.startsWith('cuda') ? 'float16' : 'bfloat16'}` : ''}`);
  const optimizer = new kd.optim.Adam(model.parameters(), { lr: opt.lr });
  // The learning rate follows a cosine from lr down to 0 over the epochs (steadier last epochs).
  const scheduler = new kd.optim.lrScheduler.CosineAnnealingLR(optimizer, opt.epochs);
  const loader = new kd.data.DataLoader(new kd.data.TensorDataset(train.images, train.labels),
    { batchSize: opt.batchSize, shuffle: true, seed: opt.seed });
  const lossFn = new kd.nn.CrossEntropyLoss();
  // --amp: the forward pass and the loss under autocast (PyTorch's recipe); float16 gradients can
  // underflow, so on CUDA the loss is scaled (GradScaler); CPU autocast is bfloat16, which has
  // float32's range and needs no scaling.
  const deviceType = opt.device.startsWith('cuda') ? 'cuda' : 'cpu';
  const scaler = new kd.amp.GradScaler({ enabled: opt.amp && deviceType === 'cuda' });
  const forward = (x, y) => {
    const run = () => { const logits = model(x); return [logits, lossFn(logits, y)]; };
    return opt.amp ? kd.autocast({ deviceType }, run) : run();
  };

  const history = [];
  for (let epoch = 1; epoch <= opt.epochs; epoch++) {
    const bar = new kd.train.ProgressBar({
      total: nTrain, label: `epoch ${epoch}/${opt.epochs}`, unit: 'img', enabled: !opt.quiet,
    });
    const start = performance.now();
    const cpu0 = process.cpuUsage(); // CPU time too: on a busy machine wall time overstates the cost
    // Running sums stay on the device (no sync per step); read for the bar every 50 steps.
    const lossSum = kd.zeros([], { device: opt.device });
    const correct = kd.zeros([], { dtype: 'int64', device: opt.device });
    let seen = 0;
    let step = 0;
    for await (const [xb, yb] of loader) {
      const n = yb.shape[0];
      kd.tidy(() => {
        const x = opt.device === 'cpu' ? xb : xb.to(opt.device);
        const y = opt.device === 'cpu' ? yb : yb.to(opt.device);
        const [logits, loss] = forward(x, y);
        optimizer.zeroGrad();
        scaler.scale(loss).backward();
        scaler.step(optimizer);
        scaler.update();
        kd.noGrad(() => {
          lossSum.add_(loss.detach(), { alpha: n });
          correct.add_(logits.argmax(1).eq(y).sum());
        });
      });
      seen += n;
      kd.dispose([xb, yb]);
      if (++step % 50 === 0 || seen === nTrain) {
        bar.set({ loss: lossSum.item() / seen, acc: correct.item() / seen });
      }
      bar.tick(n);
    }
    const trainLoss = lossSum.item() / seen;
    const trainAcc = correct.item() / seen;
    kd.dispose([lossSum, correct]);
    const seconds = (performance.now() - start) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const cpuSeconds = (cpu.user + cpu.system) / 1e6;
    scheduler.step();
    const ev = evaluate(model, test.images, test.labels, opt.device);
    bar.finish({ loss: trainLoss, acc: trainAcc, 'test acc': ev.acc });
    history.push({ epoch, trainLoss, testLoss: ev.loss, trainAcc, testAcc: ev.acc, seconds, cpuSeconds });
  }

  console.log(`\n${kd.train.table(history)}\n`);
  const last = history[history.length - 1];
  const mean = history.reduce((a, r) => a + r.seconds, 0) / history.length;
  const meanCpu = history.reduce((a, r) => a + r.cpuSeconds, 0) / history.length;
  console.log(`test accuracy ${last.testAcc.toFixed(4)} after ${opt.epochs} epochs; ` +
    `${mean.toFixed(1)} s per training epoch (${(nTrain / mean).toFixed(0)} images/s; ${meanCpu.toFixed(1)} s of CPU time)`);

  fs.mkdirSync(opt.out, { recursive: true });
  const base = path.join(opt.out, `fashion-mnist-${opt.model}`);
  await kd.save(model.stateDict(), `${base}.safetensors`, { metadata: { model: opt.model, testAcc: String(last.testAcc) } });
  fs.writeFileSync(`${base}-history.json`, `${JSON.stringify({ options: opt, history }, null, 1)}\n`);
  kd.train.writeCurves(`${base}-curves.svg`, history, { title: `Fashion-MNIST ${opt.model}` });
  console.log(`wrote ${base}.safetensors, ${base}-history.json and ${base}-curves.svg`);
  kd.dispose([train, test]);
}

main().catch((e) => {
  if (e instanceof DatasetMissingError) {
    console.error(e.message);
    process.exit(2);
  }
  console.error(e instanceof Error && !(e instanceof kd.KindlingError) && /^--/.test(e.message) ? e.message : e);
  process.exit(1);
});
