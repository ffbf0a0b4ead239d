// utils.js - pytorch/examples' fast_neural_style/neural_style/utils.py in kindling: loading and
// saving images, the Gram matrix of features and ImageNet normalisation of a batch. Images are
// PNG (../../dcgan/vutils.js's codec) held as uint8 tensors [3, H, W] where the original holds PIL
// images; resizing (the original's Image.ANTIALIAS, a Lanczos filter) is antialiased bicubic.
'use strict';

const fs = require('node:fs');
const kd = require('../../../..');
const { decodePng, encodePng } = require('../../dcgan/vutils');

/** A PNG file as a uint8 RGB tensor [3, H, W] (PIL's convert('RGB'): grey replicated, alpha dropped). */
function readRgb(filename) {
  const { width, height, channels, data } = decodePng(fs.readFileSync(filename));
  return kd.tidy(() => {
    let img = kd.tensor(data).view(height, width, channels).permute(2, 0, 1);
    if (channels <= 2) img = img.narrow(0, 0, 1).expand(3, height, width);
    else img = img.narrow(0, 0, 3);
    return img.contiguous();
  });
}

/** uint8 [C, H, W] resized to [C, h, w] (antialiased bicubic), rounded back to uint8. */
function resizeImage(img, h, w) {
  return kd.tidy(() => kd.nn.functional.interpolate(img.unsqueeze(0).to('float32'), { size: [h, w], mode: 'bicubic', alignCorners: false, antialias: true })
    .squeeze(0).round().clamp(0, 255).to('uint8'));
}

function loadImage(filename, size = null, scale = null) {
  let img = readRgb(filename);
  const [h, w] = img.shape.slice(1);
  if (size !== null) {
    img = resizeImage(img, size, size);
  } else if (scale !== null) {
    img = resizeImage(img, Math.trunc(h / scale), Math.trunc(w / scale));
  }
  return img;
}

function saveImage(filename, data) {
  const img = kd.tidy(() => data.clone().clamp(0, 255).permute(1, 2, 0).to('uint8').contiguous());
  const [h, w] = img.shape;
  fs.writeFileSync(filename, encodePng(img.dataSync(), w, h));
  img.dispose();
}

function gramMatrix(y) {
  const [b, ch, h, w] = y.size();
  const features = y.view(b, ch, w * h);
  const featuresT = features.transpose(1, 2);
  const gram = features.bmm(featuresT).div(ch * h * w);
  return gram;
}

function normalizeBatch(batch) {
  // normalize using imagenet mean and std
  const mean = batch.newTensor([0.485, 0.456, 0.406]).view(-1, 1, 1);
  const std = batch.newTensor([0.229, 0.224, 0.225]).view(-1, 1, 1);
  batch = batch.div_(255.0);
  return batch.sub(mean).div(std);
}

module.exports = { loadImage, saveImage, gramMatrix, normalizeBatch, readRgb, resizeImage };
