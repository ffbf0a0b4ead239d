#!/usr/bin/env node
// make-model.js - writes the model the inference server serves: the Fashion-MNIST MLP
// (784 -> 256 -> 128 -> 10) with PyTorch's default initialisation from a fixed seed (random
// weights: the server's job is batching and latency, not accuracy; a model trained by
// examples/fashion-mnist can be served the same way if saved with mlp.js's saveMlp).
//
//   node examples/inference-server/make-model.js [--out model.safetensors] [--hidden 256,128] [--seed 0]
'use strict';

const path = require('node:path');
const fs = require('node:fs');
const { parseArgs } = require('node:util');
const kd = require('../..');
const { MLP, saveMlp } = require('./mlp');

function makeModel({ out = path.join(__dirname, 'out', 'model.safetensors'), hidden = [256, 128], seed = 0, inFeatures = 784 } = {}) {
  kd.manualSeed(seed);
  const model = new MLP({ inFeatures, hidden, classes: 10 });
  fs.mkdirSync(path.dirname(out), { recursive: true });
  saveMlp(model, out);
  const nParams = model.parameters().reduce((s, p) => s + p.numel(), 0);
  kd.dispose(model.parameters());
  return { out, nParams };
}

if (require.main === module) {
  const { values } = parseArgs({
    options: {
      out: { type: 'string', default: path.join(__dirname, 'out', 'model.safetensors') },
      hidden: { type: 'string', default: '256,128' },
      seed: { type: 'string', default: '0' },
    },
  });
  const hidden = values.hidden.split(',').filter(Boolean).map(Number);
  const { out, nParams } = makeModel({ out: values.out, hidden, seed: Number(values.seed) });
  console.log(`wrote ${path.relative(process.cwd(), out)}: MLP 784 -> ${hidden.join(' -> ')} -> 10, ${nParams} parameters`);
}

module.exports = { makeModel };
