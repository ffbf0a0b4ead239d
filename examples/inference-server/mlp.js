// mlp.js - the model the inference-server example serves: the Fashion-MNIST MLP (784 -> hidden
// layers with ReLU -> 10 classes), saved as safetensors with its architecture and class names in
// the file's metadata, so that server.js can rebuild it from the file alone.
'use strict';

const kd = require('../..');

const CLASSES = ['T-shirt/top', 'Trouser', 'Pullover', 'Dress', 'Coat', 'Sandal', 'Shirt', 'Sneaker', 'Bag', 'Ankle boot'];

/** Sequential(Flatten, Linear, ReLU, ..., Linear): state dict keys 'layers.1.weight', ... */
class MLP extends kd.nn.Module {
  constructor({ inFeatures = 784, hidden = [256, 128], classes = 10 } = {}) {
    super();
    this.config = { inFeatures, hidden, classes };
    const mods = [new kd.nn.Flatten()];
    let n = inFeatures;
    for (const h of hidden) { mods.push(new kd.nn.Linear(n, h), new kd.nn.ReLU()); n = h; }
    mods.push(new kd.nn.Linear(n, classes));
    this.layers = new kd.nn.Sequential(...mods);
  }
  forward(x) { return this.layers(x); }
}

/** Saves `model` to `path` with its config and class names as metadata. */
function saveMlp(model, path, classNames = CLASSES) {
  kd.saveSync(model.stateDict(), path, { metadata: { format: 'kindling-mlp', config: JSON.stringify(model.config), classes: JSON.stringify(classNames) } });
}

/** Rebuilds the model saved by saveMlp (in eval mode, on `device`): {model, classes, config}. */
function loadMlp(path, { device = 'cpu' } = {}) {
  const meta = kd.safetensors.loadMetadata(path);
  if (meta.format !== 'kindling-mlp' || !meta.config) throw new Error(`${path} was not written by make-model.js (no 'kindling-mlp' metadata)`);
  const config = JSON.parse(meta.config);
  const classes = meta.classes ? JSON.parse(meta.classes) : null;
  const model = new MLP(config);
  const sd = kd.loadSync(path);
  model.loadStateDict(sd, { strict: true });
  kd.dispose(Object.values(sd));
  if (device !== 'cpu') model.to(device);
  model.eval();
  return { model, config, classes };
}

module.exports = { MLP, CLASSES, saveMlp, loadMlp };
