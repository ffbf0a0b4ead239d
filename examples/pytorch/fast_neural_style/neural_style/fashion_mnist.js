// fashion_mnist.js - Fashion-MNIST's training images as RGB content images for neural_style.js
// (--dataset fashion-mnist): each 28x28 grey image replicated to 3 channels (PIL's
// convert('RGB')), then the training transform. The IDX files come from Debian's
// dataset-fashion-mnist (/usr/share/datasets/fashion-mnist, FASHION_MNIST_DIR elsewhere).
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const kd = require('../../../..');
const { readIdx } = require('../../../fashion-mnist/data');

class FashionMnistRgb extends kd.utils.data.Dataset {
  constructor(transform, dir = process.env.FASHION_MNIST_DIR || '/usr/share/datasets/fashion-mnist') {
    super();
    const file = path.join(dir, 'train-images-idx3-ubyte.gz');
    if (!fs.existsSync(file)) throw new Error(`${file} not found (\`apt-get install dataset-fashion-mnist\`)`);
    const { dims, data } = readIdx(file);
    Object.assign(this, { dims, data, transform });
  }

  get length() { return this.dims[0]; }

  get(index) {
    const [, h, w] = this.dims;
    return kd.tidy(() => {
      const img = kd.tensor(this.data.subarray(index * h * w, (index + 1) * h * w)).view(1, h, w).expand(3, h, w);
      return [this.transform ? this.transform(img) : img.contiguous(), 0];
    });
  }
}

const loadFashionMnistRgb = (transform) => new FashionMnistRgb(transform);

module.exports = { FashionMnistRgb, loadFashionMnistRgb };
