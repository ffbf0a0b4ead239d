#!/usr/bin/env node
// neural_style.js - pytorch/examples' fast_neural_style/neural_style/neural_style.py in kindling,
// line by line: `train` fits a TransformerNet (transformer_net.js) to a style with the perceptual
// losses of a frozen VGG-16 (vgg.js): content loss on relu2_2, style loss on the Gram matrices of
// relu1_2 .. relu4_3, Adam; `eval` stylizes an image with a trained model.
//
//   node examples/pytorch/fast_neural_style/neural_style/neural_style.js train --dataset <folder of class folders of PNGs> \
//        --style-image style.png --save-model-dir models --epochs 2
//   node examples/pytorch/fast_neural_style/neural_style/neural_style.js train --dataset synthetic --save-model-dir /tmp/m \
//        --image-size 64 --max-steps 2 --log-interval 1
//   node examples/pytorch/fast_neural_style/neural_style/neural_style.js eval --content-image in.png --model m.safetensors --output-image out.png
//
// Differences from the original, forced by what is not there offline: images are PNG; VGG-16's
// ImageNet weights are a download, so --vgg-weights (added) takes them as a safetensors file of
// torchvision's vgg16 state dict, and without it the VGG gets deterministic weights (vgg.js), with
// which the losses train but do not transfer a style; --dataset also takes `synthetic` (generated
// images) and `fashion-mnist`; without --style-image the style is a generated image; models and
// checkpoints are safetensors state dicts; there is no ONNX export or onnxruntime path;
// --max-steps N (added) stops each epoch after N batches. See ../README.md.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const kd = require('../../../..');
const { ArgumentParser } = require('../../dcgan/argparse');
const utils = require('./utils');
const { TransformerNet } = require('./transformer_net');
const { Vgg16 } = require('./vgg');
const { ImageFolder, SyntheticImages, syntheticRgb, trainTransform } = require('./datasets');

const { Adam } = kd.optim;
const { DataLoader } = kd.utils.data;

const pyFloat = (v) => (Number.isInteger(v) && Math.abs(v) < 1e16 ? v.toFixed(1) : String(v));
const ctime = (d = new Date()) => {
  const [wd, mon, day, year, time] = d.toString().split(' ');
  return `${wd} ${mon} ${day.replace(/^0/, ' ')} ${time} ${year}`;
};

function checkPaths(args) {
  try {
    if (!fs.existsSync(args.saveModelDir)) fs.mkdirSync(args.saveModelDir, { recursive: true });
    if (args.checkpointModelDir !== null && !fs.existsSync(args.checkpointModelDir)) fs.mkdirSync(args.checkpointModelDir, { recursive: true });
  } catch (e) {
    console.log(e);
    process.exit(1);
  }
}

/** The training images of --dataset: an ImageFolder of PNGs, or 'synthetic' / 'fashion-mnist'. */
function trainDatasetOf(args, transform) {
  if (args.dataset === 'synthetic') return new SyntheticImages(64, args.imageSize, 3, transform);
  if (args.dataset === 'fashion-mnist') {
    const { loadFashionMnistRgb } = require('./fashion_mnist');
    return loadFashionMnistRgb(transform);
  }
  return new ImageFolder(args.dataset, transform);
}

/**
 * One iteration of the original's batch loop: the transformer's output and the input through the
 * VGG, content loss (relu2_2) and style loss (Gram matrices against gramStyle), one Adam step.
 * Returns the content and style losses as numbers.
 */
function trainStep({ transformer, vgg, optimizer, mseLoss, gramStyle, contentWeight, styleWeight }, x) {
  return kd.tidy(() => {
    const nBatch = x.size(0);
    optimizer.zeroGrad();

    let y = transformer(x);

    y = utils.normalizeBatch(y);
    x = utils.normalizeBatch(x.clone());

    const featuresY = vgg(y);
    const featuresX = vgg(x);

    const contentLoss = mseLoss(featuresY.relu2_2, featuresX.relu2_2).mul(contentWeight);

    let styleLoss = kd.tensor(0.0);
    featuresY.forEach((ftY, i) => {
      const gmS = gramStyle[i];
      const gmY = utils.gramMatrix(ftY);
      styleLoss = styleLoss.add(mseLoss(gmY, gmS.narrow(0, 0, nBatch)));
    });
    styleLoss = styleLoss.mul(styleWeight);

    const totalLoss = contentLoss.add(styleLoss);
    totalLoss.backward();
    optimizer.step();

    return { contentLoss: contentLoss.item(), styleLoss: styleLoss.item() };
  });
}

/** The Gram matrices of the style image's VGG features, for a batch of batchSize. */
function styleGrams(vgg, style, batchSize, device) {
  return kd.noGrad(() => kd.tidy(() => {
    const s = style.repeat(batchSize, 1, 1, 1).to(device);
    const featuresStyle = vgg(utils.normalizeBatch(s));
    return featuresStyle.map((y) => utils.gramMatrix(y));
  }));
}

async function train(args) {
  const device = args.accel ? 'cuda' : 'cpu';

  console.log(`Using device: ${device}`);

  kd.manualSeed(args.seed);

  const transform = trainTransform(args.imageSize);
  const trainDataset = trainDatasetOf(args, transform);
  const trainLoader = new DataLoader(trainDataset, { batchSize: args.batchSize });

  const transformer = new TransformerNet().to(device);
  const optimizer = new Adam(transformer.parameters(), { lr: args.lr });
  const mseLoss = new kd.nn.MSELoss();

  const vgg = new Vgg16({ requiresGrad: false, weights: args.vggWeights }).to(device);
  // style_transform: ToTensor, mul(255)
  const style = kd.tidy(() => {
    const img = args.styleImage !== null ? utils.loadImage(args.styleImage, args.styleSize) : syntheticRgb(0, args.styleSize || 256, 11);
    return img.to('float32').div(255).mul(255);
  });
  const gramStyle = styleGrams(vgg, style, args.batchSize, device);
  const ctx = { transformer, vgg, optimizer, mseLoss, gramStyle, contentWeight: args.contentWeight, styleWeight: args.styleWeight };

  for (let e = 0; e < args.epochs; e++) {
    transformer.train();
    let aggContentLoss = 0.0;
    let aggStyleLoss = 0.0;
    let count = 0;
    let batchId = 0;
    for await (const [x] of trainLoader) {
      const nBatch = x.size(0);
      count += nBatch;
      const xd = x.to(device);
      const r = trainStep(ctx, xd);
      kd.dispose([x, xd]);

      aggContentLoss += r.contentLoss;
      aggStyleLoss += r.styleLoss;

      if ((batchId + 1) % args.logInterval === 0) {
        const mesg = `${ctime()}\tEpoch ${e + 1}:\t[${count}/${trainDataset.length}]\tcontent: ${(aggContentLoss / (batchId + 1)).toFixed(6)}` +
          `\tstyle: ${(aggStyleLoss / (batchId + 1)).toFixed(6)}\ttotal: ${((aggContentLoss + aggStyleLoss) / (batchId + 1)).toFixed(6)}`;
        console.log(mesg);
      }

      if (args.checkpointModelDir !== null && (batchId + 1) % args.checkpointInterval === 0) {
        transformer.eval().cpu();
        const ckptModelFilename = `ckpt_epoch_${e}_batch_id_${batchId + 1}.safetensors`;
        const ckptModelPath = path.join(args.checkpointModelDir, ckptModelFilename);
        await kd.save(transformer.stateDict(), ckptModelPath);
        transformer.to(device).train();
      }
      batchId++;
      if (args.maxSteps > 0 && batchId === args.maxSteps) break;
    }
  }

  // save model
  transformer.eval().cpu();
  const timestamp = new Date().toISOString().replace(/\..*/, '').replace('T', '_').replace(/:/g, '-');
  const saveModelFilename = `epoch_${args.epochs}_${timestamp}_${pyFloat(args.contentWeight)}_${pyFloat(args.styleWeight)}.safetensors`;
  const saveModelPath = path.join(args.saveModelDir, saveModelFilename);
  await kd.save(transformer.stateDict(), saveModelPath);

  console.log('\nDone, trained model saved at', saveModelPath);
  return saveModelPath;
}

function stylize(args) {
  const device = args.accel ? 'cuda' : 'cpu';

  console.log(`Using device: ${device}`);

  const output = kd.noGrad(() => kd.tidy(() => {
    let contentImage = utils.loadImage(args.contentImage, null, args.contentScale);
    contentImage = contentImage.to('float32').div(255).mul(255); // content_transform: ToTensor, mul(255)
    contentImage = contentImage.unsqueeze(0).to(device);

    const styleModel = new TransformerNet();
    const stateDict = kd.loadSync(args.model);
    // remove saved deprecated running_* keys in InstanceNorm from the checkpoint
    for (const k of Object.keys(stateDict)) {
      if (/in\d+\.running_(mean|var)$/.test(k)) {
        stateDict[k].dispose();
        delete stateDict[k];
      }
    }
    styleModel.loadStateDict(stateDict);
    styleModel.to(device);
    styleModel.eval();
    return styleModel(contentImage).cpu();
  }));
  utils.saveImage(args.outputImage, output.select(0, 0));
  output.dispose();
}

function parseOptions(argv) {
  const mainArgParser = new ArgumentParser({ description: 'parser for fast-neural-style' });
  const subparsers = mainArgParser.addSubparsers({ title: 'subcommands', dest: 'subcommand' });

  const trainArgParser = subparsers.addParser('train', { help: 'parser for training arguments' });
  trainArgParser.addArgument('--epochs', { type: 'int', default: 2, help: 'number of training epochs, default is 2' });
  trainArgParser.addArgument('--batch-size', { type: 'int', default: 4, help: 'batch size for training, default is 4' });
  trainArgParser.addArgument('--dataset', { type: 'str', required: true,
    help: 'path to training dataset, the path should point to a folder containing another folder with all the training images (PNG); or synthetic, or fashion-mnist' });
  trainArgParser.addArgument('--style-image', { type: 'str', default: null, help: 'path to style-image (PNG; default: a generated image)' });
  trainArgParser.addArgument('--save-model-dir', { type: 'str', required: true, help: 'path to folder where trained model will be saved.' });
  trainArgParser.addArgument('--checkpoint-model-dir', { type: 'str', default: null, help: 'path to folder where checkpoints of trained models will be saved' });
  trainArgParser.addArgument('--image-size', { type: 'int', default: 256, help: 'size of training images, default is 256 X 256' });
  trainArgParser.addArgument('--style-size', { type: 'int', default: null, help: 'size of style-image, default is the original size of style image' });
  trainArgParser.addArgument('--accel', { action: 'store_true', help: 'use accelerator' });
  trainArgParser.addArgument('--seed', { type: 'int', default: 42, help: 'random seed for training' });
  trainArgParser.addArgument('--content-weight', { type: 'float', default: 1e5, help: 'weight for content-loss, default is 1e5' });
  trainArgParser.addArgument('--style-weight', { type: 'float', default: 1e10, help: 'weight for style-loss, default is 1e10' });
  trainArgParser.addArgument('--lr', { type: 'float', default: 1e-3, help: 'learning rate, default is 1e-3' });
  trainArgParser.addArgument('--log-interval', { type: 'int', default: 500, help: 'number of images after which the training loss is logged, default is 500' });
  trainArgParser.addArgument('--checkpoint-interval', { type: 'int', default: 2000, help: 'number of batches after which a checkpoint of the trained model will be created' });
  trainArgParser.addArgument('--vgg-weights', { type: 'str', default: null, help: "torchvision's vgg16 state dict as safetensors (default: deterministic weights)" });
  trainArgParser.addArgument('--max-steps', { type: 'int', default: 0, help: 'stop each epoch after this many batches (0: all)' });

  const evalArgParser = subparsers.addParser('eval', { help: 'parser for evaluation/stylizing arguments' });
  evalArgParser.addArgument('--content-image', { type: 'str', required: true, help: 'path to content image you want to stylize' });
  evalArgParser.addArgument('--content-scale', { type: 'float', default: null, help: 'factor for scaling down the content image' });
  evalArgParser.addArgument('--output-image', { type: 'str', required: true, help: 'path for saving the output image' });
  evalArgParser.addArgument('--model', { type: 'str', required: true, help: 'saved model to be used for stylizing the image (safetensors)' });
  evalArgParser.addArgument('--accel', { action: 'store_true', help: 'use accelerator' });

  return mainArgParser.parseArgs(argv);
}

async function main(argv = process.argv.slice(2)) {
  const args = parseOptions(argv);

  if (args.subcommand === null) {
    console.log('ERROR: specify either train or eval');
    process.exit(1);
  }
  if (args.accel && !kd.cuda.isAvailable()) {
    console.log('ERROR: accelerator is not available, try running on CPU');
    process.exit(1);
  }
  if (!args.accel && kd.cuda.isAvailable()) {
    console.log('WARNING: accelerator is available, run with --accel to enable it');
  }

  if (args.subcommand === 'train') {
    checkPaths(args);
    await train(args);
  } else {
    stylize(args);
  }
}

if (require.main === module) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}

module.exports = { train, stylize, trainStep, styleGrams, parseOptions, main };
