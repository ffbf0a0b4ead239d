// data.js - Fashion-MNIST from the gzip'd IDX files (Debian's dataset-fashion-mnist installs them
// in /usr/share/datasets/fashion-mnist/; FASHION_MNIST_DIR points elsewhere), read with node:zlib.
//
// IDX format: a big-endian header - magic 0x00000803 (uint8 images, 3 dims) or 0x00000801 (uint8
// labels, 1 dim), then one uint32 per dim - and the uint8 data, row-major.
//
//   const { train, test } = loadFashionMnist();   // { images: Tensor [n,1,28,28] float32, labels: Tensor [n] int64 }
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const zlib = require('node:zlib');
const kd = require('../..');

const DEFAULT_DIR = '/usr/share/datasets/fashion-mnist';
const FILES = {
  train: ['train-images-idx3-ubyte', 'train-labels-idx1-ubyte'],
  test: ['t10k-images-idx3-ubyte', 't10k-labels-idx1-ubyte'],
};
const CLASSES = ['T-shirt/top', 'Trouser', 'Pullover', 'Dress', 'Coat', 'Sandal', 'Shirt', 'Sneaker', 'Bag', 'Ankle boot'];
// Mean and standard deviation of the training images' pixels (in [0, 1]).
const MEAN = 0.2860;
const STD = 0.3530;

class DatasetMissingError extends Error {}

function findFile(dir, base) {
  for (const name of [`${base}.gz`, base]) {
    const f = path.join(dir, name);
    if (fs.existsSync(f)) return f;
  }
  throw new DatasetMissingError(
    `Fashion-MNIST not found: ${path.join(dir, `${base}.gz`)} is missing.\n` +
    'Install it with `sudo apt-get install dataset-fashion-mnist` (Debian/Ubuntu), or download the four\n' +
    '*-ubyte.gz files from https://github.com/zalandoresearch/fashion-mnist and set FASHION_MNIST_DIR=<folder>.');
}

/** The dims and uint8 data of one IDX file (gzip'd or not). */
function readIdx(file) {
  let buf = fs.readFileSync(file);
  if (buf[0] === 0x1f && buf[1] === 0x8b) buf = zlib.gunzipSync(buf);
  if (buf.length < 4 || buf[0] !== 0 || buf[1] !== 0 || buf[2] !== 0x08) throw new Error(`${file}: not a uint8 IDX file`);
  const ndim = buf[3];
  const dims = [];
  for (let i = 0; i < ndim; i++) dims.push(buf.readUInt32BE(4 + 4 * i));
  const offset = 4 + 4 * ndim;
  const count = dims.reduce((a, b) => a * b, 1);
  if (buf.length < offset + count) throw new Error(`${file}: truncated (expected ${count} bytes of data)`);
  return { dims, data: buf.subarray(offset, offset + count) };
}

/** One split: images normalised ((x / 255 - MEAN) / STD) as float32 [n, 1, 28, 28], labels int64 [n]. */
function loadSplit(dir, split, limit = Infinity) {
  const [imgBase, lblBase] = FILES[split];
  const img = readIdx(findFile(dir, imgBase));
  const lbl = readIdx(findFile(dir, lblBase));
  const [n0, h, w] = img.dims;
  if (lbl.dims[0] !== n0) throw new Error(`${split}: ${n0} images but ${lbl.dims[0]} labels`);
  const n = Math.min(n0, limit);
  const pixels = new Float32Array(n * h * w);
  const scale = 1 / (255 * STD);
  for (let i = 0; i < pixels.length; i++) pixels[i] = img.data[i] * scale - MEAN / STD;
  const labels = new BigInt64Array(n);
  for (let i = 0; i < n; i++) labels[i] = BigInt(lbl.data[i]);
  const flat = kd.tensor(pixels);
  const images = flat.view(n, 1, h, w);
  flat.dispose();
  return { images, labels: kd.tensor(labels) };
}

/** { train, test } tensors; options: dir (FASHION_MNIST_DIR or the Debian folder), limit (samples per split). */
function loadFashionMnist(options = {}) {
  const dir = options.dir || process.env.FASHION_MNIST_DIR || DEFAULT_DIR;
  if (!fs.existsSync(dir)) {
    throw new DatasetMissingError(
      `Fashion-MNIST not found: the folder ${dir} does not exist.\n` +
      'Install it with `sudo apt-get install dataset-fashion-mnist` (Debian/Ubuntu), or download the four\n' +
      '*-ubyte.gz files from https://github.com/zalandoresearch/fashion-mnist and set FASHION_MNIST_DIR=<folder>.');
  }
  const limit = options.limit || Infinity;
  return { train: loadSplit(dir, 'train', limit), test: loadSplit(dir, 'test', limit) };
}

module.exports = { loadFashionMnist, readIdx, DatasetMissingError, CLASSES, MEAN, STD };
