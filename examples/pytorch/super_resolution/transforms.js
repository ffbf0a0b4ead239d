// transforms.js - the torchvision transforms super_resolution/data.py composes, on uint8 image
// tensors [C, H, W]: CenterCrop(size), Resize(size) (bilinear, antialiased, as on a PIL image; the
// result rounded back to uint8 as PIL keeps 8-bit images) and ToTensor (float32 / 255), and
// data.py's input_transform / target_transform built from them.
'use strict';

const kd = require('../../..');

const compose = (fns) => (x) => fns.reduce((y, f) => f(y), x);

/** transforms.CenterCrop(size): the centred size x size window (torchvision's rounding). */
const centerCrop = (size) => (img) => {
  const [h, w] = img.shape.slice(-2);
  const top = Math.round((h - size) / 2);
  const left = Math.round((w - size) / 2);
  return img.narrow(-2, top, size).narrow(-1, left, size);
};

/** transforms.Resize(size) of a square uint8 image: antialiased bilinear, rounded to uint8. */
const resize = (size) => (img) => kd.tidy(() => kd.nn.functional.interpolate(img.unsqueeze(0).to('float32'),
  { size: [size, size], mode: 'bilinear', alignCorners: false, antialias: true }).squeeze(0).round().clamp(0, 255).to('uint8'));

/** transforms.ToTensor(): uint8 [C, H, W] -> float32 in [0, 1]. */
const toTensor = () => (img) => img.to('float32').div(255);

function inputTransform(cropSize, upscaleFactor) {
  return compose([centerCrop(cropSize), resize(Math.floor(cropSize / upscaleFactor)), toTensor()]);
}

function targetTransform(cropSize) {
  return compose([centerCrop(cropSize), toTensor()]);
}

module.exports = { compose, centerCrop, resize, toTensor, inputTransform, targetTransform };
