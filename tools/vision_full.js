#!/usr/bin/env node
// vision_full.js - `npm run test:vision:full`: the full-size torchvision models of
// examples/vision/models (ResNet-18/50, MobileNetV2, MobileNetV3-Small/Large, EfficientNet-B0, ViT-B/16,
// ImageNet widths, 1000 classes) against torchvision 0.14 on one 224x224 input. Needs PyTorch and
// torchvision for /usr/bin/python3 (or $PYTHON): tools/fixtures/vision.py --full writes random
// weights, input and logits (about 600 MB with ViT-B/16) into a temporary directory, removed afterwards.
// Prints one line per model and exits non-zero when a model is off by more than 1e-4 relative to
// its largest logit, as is and after fuseConvBn. --keep DIR writes into DIR and keeps it; --cuda
// runs on kd.cuda too; --model NAME checks that model only.
'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const kd = require('..');
const vision = require('../examples/vision/models')(kd);

const TOL = 1e-4;
const argv = process.argv.slice(2);
const keep = argv.includes('--keep') ? argv[argv.indexOf('--keep') + 1] : null;
const devices = argv.includes('--cuda') ? ['cpu', 'cuda'] : ['cpu'];
const python = process.env.PYTHON || '/usr/bin/python3';

const dir = keep || fs.mkdtempSync(path.join(os.tmpdir(), 'kd-vision-full-'));
let failed = 0;
try {
  process.stderr.write(`writing the torchvision references into ${dir} ...\n`);
  const only = argv.includes('--model') ? ['--model', argv[argv.indexOf('--model') + 1]] : [];
  execFileSync(python, [path.join(__dirname, 'fixtures', 'vision.py'), '--full', dir, ...only], { stdio: ['ignore', 'inherit', 'inherit'] });
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  for (const [name, m] of Object.entries(manifest.models)) {
    const model = vision.getModel(m.arch, m.options).eval();
    const sd = kd.loadSync(path.join(dir, `${name}.safetensors`));
    model.loadStateDict(sd);
    for (const t of Object.values(sd)) t.dispose();
    const io = kd.loadSync(path.join(dir, `${name}.io.safetensors`));
    const runs = devices.map((device) => [device, false]).concat([['cpu', true]]); // last: BatchNorm folded
    for (const [device, fused] of runs) {
      if (fused) vision.fuseConvBn(model.to('cpu'));
      else if (device !== 'cpu') model.to(device);
      const t0 = process.hrtime.bigint();
      const err = kd.tidy(() => {
        const y = kd.inferenceMode(() => model(io.input.to(device)));
        return y.cpu().sub(io.logits).abs().max().item() / Math.max(1, io.logits.abs().max().item());
      });
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      const ok = err <= TOL;
      if (!ok) failed++;
      console.log(`${ok ? 'ok  ' : 'FAIL'} ${name.padEnd(20)} ${(fused ? `${device}, fuseConvBn` : device).padEnd(15)} max relative error ${err.toExponential(2)}  (${ms.toFixed(0)} ms)`);
    }
    model.to('cpu');
    for (const t of [...model.parameters(), ...model.buffers(), ...Object.values(io)]) t.dispose();
  }
} finally {
  if (!keep) fs.rmSync(dir, { recursive: true, force: true });
}
console.log(failed ? `${failed} failed` : 'all within tolerance');
process.exitCode = failed ? 1 : 0;
