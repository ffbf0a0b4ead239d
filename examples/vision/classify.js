#!/usr/bin/env node
// classify.js - image classification with a torchvision model in kindling: builds the model
// (examples/vision/models), loads its torchvision state dict from safetensors, applies
// torchvision's ImageNet transform to an RGB image and prints the top-5 classes.
//   node examples/vision/classify.js --model resnet18 --weights resnet18.safetensors \
//        --labels resnet18.labels.txt --image photo.ppm
// Weights: `python3 examples/vision/export_torchvision.py resnet18 DIR` writes
// DIR/resnet18.safetensors and DIR/resnet18.labels.txt from torchvision's pretrained weights.
// Images: binary PPM (P6, 8-bit RGB: `convert photo.jpg photo.ppm`), read as a uint8 [3, H, W]
// tensor; without --image a synthetic gradient stands in. BatchNorm is folded into the
// convolutions (fuseConvBn) after loading. --options '{"numClasses": 10}' passes
// constructor options; --device cuda runs on the GPU. Exit status 1 with one line on bad input.
'use strict';

const fs = require('node:fs');
const kd = require('../..');
const vision = require('./models')(kd);

const USAGE = `usage: node examples/vision/classify.js --model NAME [--weights FILE.safetensors] [--labels FILE]
                                   [--image FILE.ppm] [--options JSON] [--device cpu|cuda] [--top K]
models: ${vision.modelNames.join(', ')}`;

function parseArgs(argv) {
  const o = { model: 'resnet18', weights: null, labels: null, image: null, options: {}, device: 'cpu', top: 5 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--help' || a === '-h') { o.help = true; continue; }
    const key = a.replace(/^--/, '');
    if (!a.startsWith('--') || !(key in o)) throw new Error(`unknown argument ${a}`);
    const v = argv[++i];
    if (v === undefined) throw new Error(`${a} needs a value`);
    o[key] = key === 'options' ? JSON.parse(v) : key === 'top' ? Number(v) : v;
  }
  if (!Number.isInteger(o.top) || o.top < 1) throw new Error('--top must be a positive integer');
  return o;
}

/** A binary PPM (P6, maxval 255) as a uint8 [3, H, W] tensor. */
function readPpm(file) {
  const buf = fs.readFileSync(file);
  const fields = [];
  let i = 0;
  while (fields.length < 4) { // magic, width, height, maxval; '#' comments between them
    while (i < buf.length && /\s/.test(String.fromCharCode(buf[i]))) i++;
    if (buf[i] === 0x23) { while (i < buf.length && buf[i] !== 0x0a) i++; continue; }
    const start = i;
    while (i < buf.length && !/\s/.test(String.fromCharCode(buf[i]))) i++;
    if (start === i) throw new Error(`${file}: not a binary PPM (P6) file`);
    fields.push(buf.toString('latin1', start, i));
  }
  const [magic, w, h, maxval] = [fields[0], Number(fields[1]), Number(fields[2]), Number(fields[3])];
  if (magic !== 'P6' || maxval !== 255 || !(w > 0 && h > 0)) throw new Error(`${file}: only 8-bit binary PPM (P6, maxval 255) is read`);
  const data = buf.subarray(i + 1, i + 1 + w * h * 3);
  if (data.length !== w * h * 3) throw new Error(`${file}: truncated pixel data`);
  return kd.tidy(() => kd.tensor(new Uint8Array(data), { dtype: 'uint8' }).reshape([h, w, 3]).permute([2, 0, 1]).contiguous());
}

/** A 3 x 300 x 400 colour gradient (stands in for a photo). */
function syntheticImage() {
  return kd.tidy(() => {
    const ys = kd.linspace(0, 255, 300).reshape([1, 300, 1]).expand([1, 300, 400]);
    const xs = kd.linspace(0, 255, 400).reshape([1, 1, 400]).expand([1, 300, 400]);
    return kd.cat([ys, xs, ys.add(xs).div(2)], 0).round().to('uint8');
  });
}

function main() {
  const o = parseArgs(process.argv.slice(2));
  if (o.help) { console.log(USAGE); return; }
  const model = vision.getModel(o.model, o.options).eval();
  if (o.weights) {
    const sd = kd.loadSync(o.weights);
    model.loadStateDict(sd);
    kd.dispose(Object.values(sd));
  } else {
    console.log('(no --weights: random weights, the classes below mean nothing)');
  }
  vision.fuseConvBn(model); // inference only: BatchNorm folded into the convolutions
  if (o.device !== 'cpu') model.to(o.device);
  const labels = o.labels ? fs.readFileSync(o.labels, 'utf8').split('\n').filter((l) => l.length) : null;
  const image = o.image ? readPpm(o.image) : syntheticImage();
  const { probs, indices } = kd.tidy(() => kd.inferenceMode(() => {
    const size = model.imageSize ?? 224; // a ViT's input size; torchvision's presets resize to 256 / 224 of the crop
    const x = vision.transforms.imageClassification(image, { cropSize: size, resizeSize: Math.floor(size * 256 / 224) }).unsqueeze(0).to(o.device);
    const p = model(x).softmax(1).squeeze(0);
    const top = kd.topk(p, Math.min(o.top, p.shape[0]));
    return { probs: top.values.cpu().arraySync(), indices: top.indices.cpu().arraySync() };
  }));
  console.log(`${o.model}: top-${indices.length} of ${o.image || 'a synthetic image'} [${image.shape.join(', ')}]`);
  indices.forEach((c, i) => {
    console.log(`  ${(100 * probs[i]).toFixed(2).padStart(6)}%  ${String(c).padStart(4)}  ${labels ? labels[c] ?? '?' : `class ${c}`}`);
  });
}

try {
  main();
} catch (e) {
  console.error(`classify: ${e.message.split('\n')[0]}`);
  console.error(USAGE);
  process.exitCode = 1;
}
