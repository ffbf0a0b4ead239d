// datasets.js - the data sets of the DCGAN example, as kd.utils.data datasets a DataLoader worker
// thread can load by module path ({module, export, args}):
//   FakeData(imageSize, size)  torchvision's FakeData with transforms.ToTensor(): `size` images
//       [3, S, S] in [0, 1], image i drawn from its own generator seeded i + randomOffset (so any
//       worker makes the same image i). The pixels are N(0, 1) draws through ToPILImage
//       (x * 255, cast to uint8, wrapping as PyTorch's float-to-byte cast does on the CPU) and
//       ToTensor (/ 255), as torchvision's; the normal draws are kindling's (Box-Muller over
//       kd.utils.data.Generator), not the same numbers as torchvision's.
//   IdxImages(root, imageSize, train)  MNIST-format IDX files (MNIST, or Fashion-MNIST from
//       Debian's dataset-fashion-mnist in /usr/share/datasets/fashion-mnist): each 28x28 image
//       resized to imageSize (bilinear, antialiased, as transforms.Resize on a PIL image),
//       to [0, 1] and normalised with mean 0.5, std 0.5 (transforms.Normalize((0.5,), (0.5,))).
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const kd = require('../../..');
const { readIdx } = require('../../fashion-mnist/data');

const FASHION_MNIST_DIR = '/usr/share/datasets/fashion-mnist';

class FakeData extends kd.utils.data.Dataset {
  constructor(imageSize, size = 1000, numClasses = 10, randomOffset = 0) {
    super();
    this.imageSize = imageSize;
    this.size = size;
    this.numClasses = numClasses;
    this.randomOffset = randomOffset;
  }

  get length() { return this.size; }

  get(index) {
    const g = new kd.utils.data.Generator(index + this.randomOffset);
    const [c, h, w] = this.imageSize;
    const pixels = new Float32Array(c * h * w);
    for (let i = 0; i < pixels.length; i += 2) {
      // Box-Muller: two N(0, 1) draws from two uniforms in (0, 1]
      const u1 = 1 - g.uniform();
      const u2 = g.uniform();
      const r = Math.sqrt(-2 * Math.log(u1));
      const v = [r * Math.cos(2 * Math.PI * u2), r * Math.sin(2 * Math.PI * u2)];
      for (let k = 0; k < 2 && i + k < pixels.length; k++) {
        const byte = Math.trunc(v[k] * 255) & 0xff; // ToPILImage: pic.mul(255).byte()
        pixels[i + k] = byte / 255; // ToTensor
      }
    }
    const target = g.below(this.numClasses);
    return [kd.tensor(pixels).view(c, h, w), target];
  }
}

/** The uint8 images [n, 28, 28] and labels of one split of an MNIST-format data set in root. */
function readSplit(root, train) {
  const prefix = train ? 'train' : 't10k';
  const file = (base) => {
    for (const name of [`${base}.gz`, base]) {
      const f = path.join(root, name);
      if (fs.existsSync(f)) return f;
    }
    throw new Error(`${path.join(root, `${base}.gz`)} not found: the MNIST-format files (train-images-idx3-ubyte.gz, ...) ` +
      `are expected in --dataroot (Fashion-MNIST: \`apt-get install dataset-fashion-mnist\` puts them in ${FASHION_MNIST_DIR})`);
  };
  return { images: readIdx(file(`${prefix}-images-idx3-ubyte`)), labels: readIdx(file(`${prefix}-labels-idx1-ubyte`)) };
}

class IdxImages extends kd.utils.data.Dataset {
  constructor(root, imageSize, train = true) {
    super();
    const { images, labels } = readSplit(root, train);
    this.dims = images.dims;
    this.pixels = images.data;
    this.labels = labels.data;
    this.imageSize = imageSize;
  }

  get length() { return this.dims[0]; }

  get(index) {
    const [, h, w] = this.dims;
    return kd.tidy(() => {
      const u8 = kd.tensor(this.pixels.subarray(index * h * w, (index + 1) * h * w)).view(1, 1, h, w);
      let x = u8.to('float32').div(255); // ToTensor
      if (this.imageSize !== h || this.imageSize !== w) {
        x = kd.nn.functional.interpolate(x, { size: [this.imageSize, this.imageSize], mode: 'bilinear',
          alignCorners: false, antialias: true }).clamp(0, 1); // Resize
      }
      return [x.squeeze(0).sub(0.5).div(0.5), this.labels[index]]; // Normalize((0.5,), (0.5,))
    });
  }
}

module.exports = { FakeData, IdxImages, FASHION_MNIST_DIR };
