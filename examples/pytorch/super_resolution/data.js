// data.js - pytorch/examples' super_resolution/data.py in kindling: the training and test sets.
// The original downloads BSDS300 (200 + 100 photographs, their 256x256 centre crops); offline,
// this port uses either
//   'fashion-mnist'  Fashion-MNIST's 60000 / 10000 28x28 images (crop 28 - 28 % upscaleFactor), or
//   'synthetic'      200 / 100 synthetic 256x256 images (crop 256 - 256 % upscaleFactor, the
//                    original's sizes), made by dataset.js.
// Each set is returned as a kd.utils.data.fromModule dataset, which DataLoader worker threads load.
'use strict';

const path = require('node:path');
const kd = require('../../..');

const FASHION_MNIST_DIR = process.env.FASHION_MNIST_DIR || '/usr/share/datasets/fashion-mnist';
const DATASET = path.join(__dirname, 'dataset.js');

function calculateValidCropSize(cropSize, upscaleFactor) {
  return cropSize - (cropSize % upscaleFactor);
}

function getSet(train, upscaleFactor, dataset) {
  if (dataset === 'fashion-mnist') {
    const cropSize = calculateValidCropSize(28, upscaleFactor);
    return kd.utils.data.fromModule({ module: DATASET, export: 'DatasetFromIdx', args: [FASHION_MNIST_DIR, train, cropSize, upscaleFactor] });
  }
  if (dataset === 'synthetic') {
    const cropSize = calculateValidCropSize(256, upscaleFactor);
    return kd.utils.data.fromModule({ module: DATASET, export: 'DatasetSynthetic', args: [train ? 200 : 100, 256, train ? 1 : 2, cropSize, upscaleFactor] });
  }
  throw new Error(`unknown dataset '${dataset}': fashion-mnist or synthetic`);
}

function getTrainingSet(upscaleFactor, dataset = 'fashion-mnist') {
  return getSet(true, upscaleFactor, dataset);
}

function getTestSet(upscaleFactor, dataset = 'fashion-mnist') {
  return getSet(false, upscaleFactor, dataset);
}

module.exports = { getTrainingSet, getTestSet, calculateValidCropSize };
