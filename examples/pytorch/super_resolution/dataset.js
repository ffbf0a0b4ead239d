// dataset.js - pytorch/examples' super_resolution/dataset.py in kindling: DatasetFromFolder's
// role (a sample is the luminance (Y) of one image, as input (after inputTransform) and target
// (after targetTransform)), over the images this port has offline, since BSDS300 is a download:
//   DatasetFromIdx(root, train, cropSize, upscaleFactor)  the images of an MNIST-format IDX file
//       (Fashion-MNIST: `apt-get install dataset-fashion-mnist`); grey images are their own Y.
//   DatasetSynthetic(count, imageSize, seed, cropSize, upscaleFactor)  `count` smooth random
//       images (sums of a few seeded sinusoids and a disc, in [0, 1]), for the original's sizes.
// Both take the transforms of data.js by their parameters (cropSize, upscaleFactor), because a
// DataLoader worker thread rebuilds a dataset from its module and plain arguments.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const kd = require('../../..');
const { readIdx } = require('../../fashion-mnist/data');
const { inputTransform, targetTransform } = require('./transforms');

class DatasetFromIdx extends kd.utils.data.Dataset {
  constructor(root, train, cropSize, upscaleFactor) {
    super();
    const base = `${train ? 'train' : 't10k'}-images-idx3-ubyte`;
    const file = [`${base}.gz`, base].map((f) => path.join(root, f)).find((f) => fs.existsSync(f));
    if (!file) {
      throw new Error(`${path.join(root, `${base}.gz`)} not found (Fashion-MNIST: \`apt-get install dataset-fashion-mnist\`, or --dataset synthetic)`);
    }
    const { dims, data } = readIdx(file);
    this.dims = dims;
    this.pixels = data;
    this.inputTransform = inputTransform(cropSize, upscaleFactor);
    this.targetTransform = targetTransform(cropSize);
  }

  get length() { return this.dims[0]; }

  get(index) {
    const [, h, w] = this.dims;
    return kd.tidy(() => {
      const input = kd.tensor(this.pixels.subarray(index * h * w, (index + 1) * h * w)).view(1, h, w); // load_img: Y
      const target = input.clone();
      return [this.inputTransform(input), this.targetTransform(target)];
    });
  }
}

/** The uint8 [1, size, size] synthetic image `index` of a set seeded `seed`. */
function syntheticImage(index, size, seed) {
  const g = new kd.utils.data.Generator(seed * 100003 + index);
  const waves = Array.from({ length: 4 }, () => [g.uniform() * 0.3, g.uniform() * 0.3, g.uniform() * 6.3, 0.1 + 0.15 * g.uniform()]);
  const [cx, cy, r] = [g.uniform() * size, g.uniform() * size, size * (0.1 + 0.3 * g.uniform())];
  const px = new Uint8Array(size * size);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      let v = 0.35 + ((x - cx) ** 2 + (y - cy) ** 2 < r * r ? 0.25 : 0);
      for (const [fx, fy, ph, a] of waves) v += a * Math.sin(fx * x + fy * y + ph);
      px[y * size + x] = Math.max(0, Math.min(255, Math.round(v * 255)));
    }
  }
  return px;
}

class DatasetSynthetic extends kd.utils.data.Dataset {
  constructor(count, imageSize, seed, cropSize, upscaleFactor) {
    super();
    this.count = count;
    this.imageSize = imageSize;
    this.seed = seed;
    this.inputTransform = inputTransform(cropSize, upscaleFactor);
    this.targetTransform = targetTransform(cropSize);
  }

  get length() { return this.count; }

  get(index) {
    return kd.tidy(() => {
      const input = kd.tensor(syntheticImage(index, this.imageSize, this.seed)).view(1, this.imageSize, this.imageSize);
      const target = input.clone();
      return [this.inputTransform(input), this.targetTransform(target)];
    });
  }
}

module.exports = { DatasetFromIdx, DatasetSynthetic, syntheticImage };
