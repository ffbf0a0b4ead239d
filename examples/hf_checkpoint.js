// hf_checkpoint.js - builds an example model (examples/gpt2, examples/bert) from a Hugging Face
// safetensors checkpoint: reads the file on the CPU, hands the tensors to the model's
// loadHuggingFace() (which maps Hugging Face's names onto the model's), frees them, and moves the
// model, in eval mode, to the device.
'use strict';

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

module.exports = { fromHuggingFace };
