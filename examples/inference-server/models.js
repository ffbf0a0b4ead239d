// models.js - the classifiers server.js serves through /predict, built from a spec that can cross
// to a worker_thread (plain data):
//   {kind: 'mlp', path}            the Fashion-MNIST MLP written by make-model.js (mlp.js)
//   {kind: 'vision', name, ...}    a torchvision classifier of examples/vision/models ('resnet18',
//                                  'mobilenet_v2', ...): options weights (a safetensors state dict;
//                                  random weights without it), labels (a file of class names, one
//                                  a line), imageSize (the side of the square input, 224),
//                                  numClasses (1000), width (ResNets' layer1 channels, 64),
//                                  widthMult (MobileNets, 1), fuse (fold BatchNorm, true)
// loadClassifier(spec, {device}) -> {model, config, classes} with config {kind, inFeatures (values
// per input), inputShape (one input's shape), classes (count)}, the model in eval mode.
'use strict';

const fs = require('node:fs');

/** The names --model takes for a vision classifier. */
const VISION_NAMES = ['resnet18', 'resnet34', 'resnet50', 'mobilenet_v2', 'mobilenet_v3_small', 'mobilenet_v3_large', 'efficientnet_b0'];

function loadVision(kd, spec, device) {
  const { name, weights = null, labels = null, imageSize = 224, numClasses = 1000, width, widthMult, fuse = true } = spec;
  if (!VISION_NAMES.includes(name)) throw new RangeError(`unknown vision model '${name}' (known: ${VISION_NAMES.join(', ')})`);
  if (!Number.isInteger(imageSize) || imageSize < 8) throw new RangeError(`imageSize must be an integer >= 8, got ${imageSize}`);
  const vision = require('../vision/models')(kd);
  const options = { numClasses };
  if (width !== undefined) options.width = width;
  if (widthMult !== undefined) options.widthMult = widthMult;
  const model = vision.getModel(name, options).eval();
  if (weights) {
    const sd = kd.loadSync(weights);
    try { model.loadStateDict(sd); } finally { kd.dispose(Object.values(sd)); }
  }
  if (fuse) vision.fuseConvBn(model); // inference only: BatchNorm folded into the convolutions
  if (device !== 'cpu') model.to(device);
  let classes = null;
  if (labels) {
    classes = fs.readFileSync(labels, 'utf8').split('\n').filter((l) => l.length);
    if (classes.length !== numClasses) throw new RangeError(`${labels} names ${classes.length} classes, the model has ${numClasses}`);
  }
  const inputShape = [3, imageSize, imageSize];
  return { model, classes, config: { kind: 'vision', name, inFeatures: 3 * imageSize * imageSize, inputShape, classes: numClasses, weights: weights ? 'loaded' : 'random' } };
}

/** The model of `spec` (a string: an MLP file) in eval mode on `device`: {model, config, classes}. */
function loadClassifier(spec, { device = 'cpu' } = {}) {
  const kd = require('../..');
  if (typeof spec === 'string') spec = { kind: 'mlp', path: spec };
  if (spec.kind === 'mlp') {
    const { loadMlp } = require('./mlp');
    const r = loadMlp(spec.path, { device });
    return { ...r, config: { kind: 'mlp', ...r.config, inputShape: [r.config.inFeatures] } };
  }
  if (spec.kind === 'vision') return loadVision(kd, spec, device);
  throw new RangeError(`unknown model kind '${spec.kind}'`);
}

module.exports = { loadClassifier, VISION_NAMES };
