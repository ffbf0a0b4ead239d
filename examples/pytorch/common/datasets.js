// datasets.js - the torchvision pieces that pytorch/examples' MNIST programs use, for their ports:
//
//   datasets.MNIST(root, { train, download, transform, limit })
//       MNIST is not available offline, so this reads Fashion-MNIST, which has MNIST's format
//       (28x28 uint8 images, 10 classes, 60000 train / 10000 test) from
//       FASHION_MNIST_DIR or /usr/share/datasets/fashion-mnist (Debian's dataset-fashion-mnist).
//       Without those files it says so on stderr and makes SYNTHETIC data of the same format
//       (each class a bright bar at its own place over noise, learnable but not a benchmark).
//       `root` and `download` are accepted and ignored (nothing is downloaded); `limit` keeps
//       the first N samples (a kindling addition for short runs).
//       .data: uint8 tensor [N, 28, 28]; .targets: int64 tensor [N]; .synthetic: a boolean;
//       get(i) -> [transform(image), target] with image a uint8 tensor [28, 28] (torchvision
//       gives a PIL image) and target a number.
//   transforms.ToTensor()          uint8 [H, W] -> float32 [1, H, W] in [0, 1]
//   transforms.Normalize(mean, std), transforms.Compose([t1, t2, ...])
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const kd = require('../../..');
const { readIdx } = require('../../fashion-mnist/data');

const DEFAULT_DIR = '/usr/share/datasets/fashion-mnist';
const FILES = {
  train: ['train-images-idx3-ubyte', 'train-labels-idx1-ubyte', 60000],
  test: ['t10k-images-idx3-ubyte', 't10k-labels-idx1-ubyte', 10000],
};
const SYNTHETIC_SIZE = { train: 6000, test: 1000 };

function findFile(dir, base) {
  for (const name of [`${base}.gz`, base]) {
    const f = path.join(dir, name);
    if (fs.existsSync(f)) return f;
  }
  return null;
}

let warned = false;

/** {images: Uint8Array (n*28*28), labels: Uint8Array (n), n, synthetic} for one split. */
function loadSplit(split, limit) {
  const dir = process.env.FASHION_MNIST_DIR || DEFAULT_DIR;
  const [imgBase, lblBase] = FILES[split];
  const imgFile = findFile(dir, imgBase);
  const lblFile = findFile(dir, lblBase);
  if (imgFile && lblFile) {
    const img = readIdx(imgFile);
    const lbl = readIdx(lblFile);
    const n = Math.min(img.dims[0], lbl.dims[0], limit);
    return { images: img.data.subarray(0, n * 784), labels: lbl.data.subarray(0, n), n, synthetic: false };
  }
  if (!warned) {
    warned = true;
    process.stderr.write(`Fashion-MNIST not found in ${dir} (install dataset-fashion-mnist or set FASHION_MNIST_DIR): ` +
      'using SYNTHETIC 28x28 data (a bar per class over noise) instead.\n');
  }
  return synthetic(split, Math.min(SYNTHETIC_SIZE[split], limit));
}

/** n synthetic samples: label k puts a bright 3-pixel-wide bar (rows for k < 5, columns else) at 4 + 4*(k % 5). */
function synthetic(split, n) {
  let s = split === 'train' ? 12345 : 54321;
  const next = () => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return s; };
  const images = new Uint8Array(n * 784);
  const labels = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const k = next() % 10;
    labels[i] = k;
    const at = 4 + 4 * (k % 5);
    for (let p = 0; p < 784; p++) {
      const r = Math.floor(p / 28), c = p % 28;
      const onBar = k < 5 ? (r >= at && r < at + 3) : (c >= at && c < at + 3);
      images[i * 784 + p] = onBar ? 160 + (next() % 96) : next() % 64;
    }
  }
  return { images, labels, n, synthetic: true };
}

class MNIST extends kd.data.Dataset {
  constructor(root, { train = true, download = false, transform = null, limit = Infinity } = {}) {
    super();
    void root; void download;
    const split = loadSplit(train ? 'train' : 'test', limit || Infinity);
    this.synthetic = split.synthetic;
    this.transform = transform;
    this.data = kd.tensor(split.images).view(split.n, 28, 28);
    const targets = new BigInt64Array(split.n);
    for (let i = 0; i < split.n; i++) targets[i] = BigInt(split.labels[i]);
    this.targets = kd.tensor(targets);
    this._images = split.images;
    this._labels = split.labels;
  }

  get length() { return this._labels.length; }

  get(index) {
    const img = kd.tensor(this._images.slice(index * 784, (index + 1) * 784)).view(28, 28);
    const target = this._labels[index];
    return [this.transform ? this.transform(img) : img, target];
  }
}

const transforms = {
  ToTensor() {
    return (img) => kd.noGrad(() => img.to('float32').div(255).unsqueeze(0));
  },
  Normalize(mean, std) {
    const m = kd.tensor(mean).view(-1, 1, 1);
    const s = kd.tensor(std).view(-1, 1, 1);
    return (x) => kd.noGrad(() => x.sub(m).div(s));
  },
  Compose(list) {
    return (x) => list.reduce((v, t) => t(v), x);
  },
};

module.exports = { datasets: { MNIST }, transforms };
