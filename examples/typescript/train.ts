// train.ts - kindling from TypeScript: a small classifier (a kd.nn.Module subclass), AdamW, a
// StepLR schedule, a DataLoader over a TensorDataset, a progress bar and a saved state dict.
// Type-checked by `npm test` (test/types/tsconfig.json lists this file). Run it with
//   npx tsc -p examples/typescript && node examples/typescript/out/train.js
// or with Node >= 23.6 directly: node examples/typescript/train.ts
import * as kd from 'kindling';
import type { Tensor } from 'kindling';

/** Two spirals (two classes) in the plane, n points each. */
function spirals(n: number): { x: Tensor; y: Tensor } {
  const pts = new Float32Array(4 * n);
  const labels = new BigInt64Array(2 * n);
  for (let c = 0; c < 2; c++) {
    for (let i = 0; i < n; i++) {
      const r = i / n;
      const t = 4 * r + c * Math.PI + 0.1 * Math.sin(37 * i);
      const k = c * n + i;
      pts[2 * k] = r * Math.cos(t);
      pts[2 * k + 1] = r * Math.sin(t);
      labels[k] = BigInt(c);
    }
  }
  return kd.tidy(() => ({ x: kd.tensor(pts).view(2 * n, 2), y: kd.tensor(labels) }));
}

class Classifier extends kd.nn.Module {
  fc1: kd.nn.Linear;
  fc2: kd.nn.Linear;
  fc3: kd.nn.Linear;
  constructor(hidden: number) {
    super();
    this.fc1 = new kd.nn.Linear(2, hidden);
    this.fc2 = new kd.nn.Linear(hidden, hidden);
    this.fc3 = new kd.nn.Linear(hidden, 2);
  }
  forward(x: Tensor): Tensor {
    return this.fc3(kd.relu(this.fc2(kd.relu(this.fc1(x)))));
  }
}

async function main(): Promise<void> {
  kd.manualSeed(0);
  const { x, y } = spirals(256);
  const model = new Classifier(64);
  const optimizer = new kd.optim.AdamW(model.parameters(), { lr: 1e-2, weightDecay: 1e-4 });
  const scheduler = new kd.optim.lrScheduler.StepLR(optimizer, { stepSize: 20, gamma: 0.5 });
  const loader = new kd.data.DataLoader<Tensor[]>(new kd.data.TensorDataset(x, y), { batchSize: 64, shuffle: true, seed: 0 });
  const lossFn = new kd.nn.CrossEntropyLoss();
  const epochs = 60;
  const bar = new kd.train.ProgressBar({ total: epochs, label: 'spirals', unit: 'epoch' });
  const history: { epoch: number; loss: number; accuracy: number }[] = [];

  for (let epoch = 1; epoch <= epochs; epoch++) {
    let total = 0;
    for await (const [xb, yb] of loader) {
      total += kd.tidy(() => {
        optimizer.zeroGrad();
        const loss: Tensor = lossFn(model(xb), yb);
        loss.backward();
        optimizer.step();
        return loss.item() * yb.shape[0];
      });
      kd.dispose([xb, yb]);
    }
    scheduler.step();
    const accuracy = kd.noGrad(() => kd.tidy(() => {
      const logits: Tensor = model(x); // a module's call returns its forward's result (typed any)
      return logits.argmax(1).eq(y).to('float32').mean().item();
    }));
    history.push({ epoch, loss: total / x.shape[0], accuracy });
    bar.tick({ loss: total / x.shape[0], acc: accuracy });
  }
  bar.finish();
  console.log(kd.train.table(history.filter((r) => r.epoch % 10 === 0)));
  const file = `${process.env.TMPDIR ?? '/tmp'}/kindling-spirals.safetensors`;
  await kd.save(model.stateDict(), file);
  const loaded: Record<string, Tensor> = await kd.load(file);
  console.log(`saved ${Object.keys(loaded).join(', ')} to ${file}`);
  kd.dispose([x, y, loaded, model.parameters()]);
  if (history[history.length - 1].accuracy < 0.95) process.exitCode = 1;
}

main().catch((e: unknown) => { console.error(e); process.exit(1); });
