// hf_checkpoint.js - builds an example model (examples/gpt2, examples/bert) from a Hugging Face
// safetensors checkpoint: reads the file on the CPU, hands the tensors to the model's
// loadHuggingFace() (which maps Hugging Face's names onto the model's), frees them, and moves the
// model, in eval mode, to the device. fromPretrainedDir reads a save_pretrained folder
// (config.json through the model's own config mapping, then model.safetensors).
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const kd = require('..');

/** A new Model(config) loaded from the safetensors file at `path`, on `device`. */
function fromHuggingFace(Model, path, config = {}, { device = 'cpu' } = {}) {
  const model = new Model(config);
  const sd = kd.loadSync(path);
  try {
    model.loadHuggingFace(sd);
  } finally {
    for (const t of Object.values(sd)) t.dispose();
  }
  model.eval();
  return device === 'cpu' ? model : model.to(device);
}

/** fromHuggingFace over dir/model.safetensors, with the config configOf(dir/config.json's object). */
function fromPretrainedDir(Model, configOf, dir, options = {}) {
  const config = configOf(JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8')));
  return fromHuggingFace(Model, path.join(dir, 'model.safetensors'), config, options);
}

module.exports = { fromHuggingFace, fromPretrainedDir };
