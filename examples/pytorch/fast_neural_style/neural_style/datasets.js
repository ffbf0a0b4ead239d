// datasets.js - the training images of the fast-neural-style port, as kd.utils.data datasets of
// [image, classIndex] (torchvision's datasets.ImageFolder's samples):
//   ImageFolder(root, transform)  torchvision's ImageFolder over PNG files: root holds one folder
//       per class, classes sorted by name, files sorted within each (PNG only: no JPEG decoder).
//   SyntheticImages(count, size, seed)  `count` generated RGB images [3, size, size] (uint8), each
//       channel a smooth random image of ../../super_resolution/dataset.js; for running offline.
// And the training transform of neural_style.py: Resize(size) (shorter edge, antialiased
// bilinear), CenterCrop(size), ToTensor, x.mul(255).
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const kd = require('../../../..');
const { readRgb } = require('./utils');
const { syntheticImage } = require('../../super_resolution/dataset');
const { centerCrop } = require('../../super_resolution/transforms');

class ImageFolder extends kd.utils.data.Dataset {
  constructor(root, transform = null) {
    super();
    if (!fs.existsSync(root) || !fs.statSync(root).isDirectory()) throw new Error(`ImageFolder: ${root} is not a folder`);
    this.classes = fs.readdirSync(root).filter((d) => fs.statSync(path.join(root, d)).isDirectory()).sort();
    this.samples = [];
    this.classes.forEach((c, i) => {
      for (const f of fs.readdirSync(path.join(root, c)).sort()) {
        if (f.toLowerCase().endsWith('.png')) this.samples.push([path.join(root, c, f), i]);
      }
    });
    if (this.samples.length === 0) throw new Error(`ImageFolder: found no PNG files in the subfolders of ${root}`);
    this.transform = transform;
  }

  get length() { return this.samples.length; }

  get(index) {
    const [file, target] = this.samples[index];
    const img = readRgb(file);
    return [this.transform ? kd.tidy(() => this.transform(img)) : img, target];
  }
}

/** A generated RGB image [3, size, size] (uint8): three synthetic channels. */
function syntheticRgb(index, size, seed) {
  const planes = [0, 1, 2].map((c) => syntheticImage(3 * index + c, size, seed));
  const rgb = new Uint8Array(3 * size * size);
  planes.forEach((p, c) => rgb.set(p, c * size * size));
  return kd.tensor(rgb).view(3, size, size);
}

class SyntheticImages extends kd.utils.data.Dataset {
  constructor(count, size, seed = 3, transform = null) {
    super();
    Object.assign(this, { count, size, seed, transform });
  }

  get length() { return this.count; }

  get(index) {
    const img = syntheticRgb(index, this.size, this.seed);
    return [this.transform ? kd.tidy(() => this.transform(img)) : img, 0];
  }
}

/** transforms.Resize(size) (shorter edge to size, antialiased bilinear), CenterCrop(size), ToTensor, mul(255). */
function trainTransform(size) {
  return (img) => {
    const [h, w] = img.shape.slice(1);
    const [nh, nw] = h <= w ? [size, Math.trunc(size * w / h)] : [Math.trunc(size * h / w), size];
    let x = img.unsqueeze(0).to('float32');
    if (nh !== h || nw !== w) x = kd.nn.functional.interpolate(x, { size: [nh, nw], mode: 'bilinear', alignCorners: false, antialias: true }).round().clamp(0, 255);
    return centerCrop(size)(x.squeeze(0)).div(255).mul(255);
  };
}

module.exports = { ImageFolder, SyntheticImages, syntheticRgb, trainTransform };
