#!/usr/bin/env node
// super_resolve.js - pytorch/examples' super_resolution/super_resolve.py in kindling: upscales a
// PNG image with a model saved by main.js. As the original: the image goes to YCbCr (PIL's
// full-range JPEG conversion), the network upscales Y, Cb and Cr are resized bicubically, and the
// result goes back to RGB.
//
//   node examples/pytorch/super_resolution/super_resolve.js --input_image in.png --model model_epoch_30.safetensors --output_filename out.png
//
// Differences from the original: PNG in and out (vutils.js's codec; PIL reads any format); the
// model is main.js's safetensors checkpoint, whose metadata holds the upscale factor (the
// original unpickles the whole module).
'use strict';

const fs = require('node:fs');
const kd = require('../../..');
const { ArgumentParser, namespace } = require('../dcgan/argparse');
const { decodePng, encodePng } = require('../dcgan/vutils');
const { Net } = require('./model');

/** RGB bytes -> [Y, Cb, Cr] float32 planes [1, 1, H, W] in 0..255 (PIL's 'YCbCr' conversion, before rounding). */
function rgbToYCbCr({ width, height, channels, data }) {
  const n = width * height;
  const planes = [new Float32Array(n), new Float32Array(n), new Float32Array(n)];
  for (let i = 0; i < n; i++) {
    const grey = channels < 3;
    const r = data[i * channels];
    const g = grey ? r : data[i * channels + 1];
    const b = grey ? r : data[i * channels + 2];
    planes[0][i] = 0.299 * r + 0.587 * g + 0.114 * b;
    planes[1][i] = 128 - 0.168736 * r - 0.331264 * g + 0.5 * b;
    planes[2][i] = 128 + 0.5 * r - 0.418688 * g - 0.081312 * b;
  }
  // PIL keeps 8-bit planes
  return planes.map((p) => kd.tensor(p.map((v) => Math.min(255, Math.max(0, Math.round(v))))).view(1, 1, height, width));
}

/** [Y, Cb, Cr] planes of one size (values 0..255) -> RGB bytes. */
function yCbCrToRgb(y, cb, cr) {
  const [Y, Cb, Cr] = [y, cb, cr].map((t) => t.contiguous().dataSync());
  const out = new Uint8Array(Y.length * 3);
  const clip = (v) => Math.min(255, Math.max(0, Math.round(v)));
  for (let i = 0; i < Y.length; i++) {
    out[i * 3] = clip(Y[i] + 1.402 * (Cr[i] - 128));
    out[i * 3 + 1] = clip(Y[i] - 0.344136 * (Cb[i] - 128) - 0.714136 * (Cr[i] - 128));
    out[i * 3 + 2] = clip(Y[i] + 1.772 * (Cb[i] - 128));
  }
  return out;
}

function main(argv = process.argv.slice(2)) {
  // Training settings
  const parser = new ArgumentParser({ description: 'PyTorch Super Res Example' });
  parser.addArgument('--input_image', { type: 'str', required: true, help: 'input image to use' });
  parser.addArgument('--model', { type: 'str', required: true, help: 'model file to use' });
  parser.addArgument('--output_filename', { type: 'str', help: 'where to save the output image' });
  parser.addArgument('--accel', { action: 'store_true', help: 'Enables acceleration device, if available' });
  const opt = parser.parseArgs(argv);

  console.log(namespace(opt));
  const img = decodePng(fs.readFileSync(opt.inputImage));
  const [y, cb, cr] = rgbToYCbCr(img);

  const upscaleFactor = Number(kd.safetensors.loadMetadata(opt.model).upscaleFactor);
  if (!Number.isInteger(upscaleFactor) || upscaleFactor < 1) throw new Error(`${opt.model}: no upscaleFactor in its metadata (main.js writes it)`);
  let model = new Net(upscaleFactor);
  model.loadStateDict(kd.loadSync(opt.model));

  let input = y.div(255.0); // img_to_tensor(y).view(1, -1, h, w)

  if (opt.accel && kd.cuda.isAvailable()) {
    model = model.to('cuda');
    input = input.to('cuda');
  }

  const rgb = kd.noGrad(() => kd.tidy(() => {
    let out = model(input);
    out = out.cpu();
    const outImgY = out.mul(255.0).clamp(0, 255).trunc(); // np.uint8 of the clipped values

    const size = outImgY.shape.slice(2);
    const resize = (t) => kd.nn.functional.interpolate(t, { size, mode: 'bicubic', alignCorners: false }).round().clamp(0, 255);
    return yCbCrToRgb(outImgY, resize(cb), resize(cr));
  }));
  const [h, w] = [img.height * upscaleFactor, img.width * upscaleFactor];
  fs.writeFileSync(opt.outputFilename, encodePng(rgb, w, h));
  console.log('output image saved to ', opt.outputFilename);
}

if (require.main === module) main();

module.exports = { rgbToYCbCr, yCbCrToRgb, main };
