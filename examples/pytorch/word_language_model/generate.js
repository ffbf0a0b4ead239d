#!/usr/bin/env node
/// ////////////////////////////////////////////////////////////////////////////
// Language Modeling on Wikitext-2
//
// This file generates new sentences sampled from the language model.
//
// generate.js - word_language_model/generate.py of pytorch/examples, line for line: loads the
// model main.js saved, samples --words words from it (with --temperature) and writes them to
// --outf, twenty words a line.
/// ////////////////////////////////////////////////////////////////////////////
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const kd = require('../../..');
const { ArgumentParser } = require('./argparse');
const data = require('./data');
const { loadModel } = require('./model');

const parser = new ArgumentParser({ description: 'PyTorch Wikitext-2 Language Model' });
// Model parameters.
parser.addArgument('--data', { type: 'str', default: path.join(__dirname, 'data', 'fire-keeper'),
  help: 'location of the data corpus' });
parser.addArgument('--checkpoint', { type: 'str', default: './model.safetensors',
  help: 'model checkpoint to use' });
parser.addArgument('--outf', { type: 'str', default: 'generated.txt',
  help: 'output file for generated text' });
parser.addArgument('--words', { type: 'int', default: 1000,
  help: 'number of words to generate' });
parser.addArgument('--seed', { type: 'int', default: 1111,
  help: 'random seed' });
parser.addArgument('--temperature', { type: 'float', default: 1.0,
  help: 'temperature - higher will increase diversity' });
parser.addArgument('--log-interval', { type: 'int', default: 100,
  help: 'reporting interval' });
parser.addArgument('--accel', { action: 'store_true',
  help: 'use accelerator' });
const args = parser.parseArgs();

// Set the random seed manually for reproducibility.
kd.manualSeed(args.seed);

let device;
if (args.accel && kd.cuda.isAvailable()) {
  device = 'cuda';
} else {
  device = 'cpu';
}

if (args.temperature < 1e-3) {
  parser.error('--temperature has to be greater or equal 1e-3.');
}

const model = loadModel(args.checkpoint, { device });
model.eval();

const corpus = new data.Corpus(args.data);
const ntokens = corpus.dictionary.length;

const isTransformerModel = model.modelType === 'Transformer';
let hidden;
if (!isTransformerModel) {
  hidden = model.initHidden(1);
}
let input = kd.randint(ntokens, [1, 1], { dtype: 'int64' }).to(device);

const outf = fs.openSync(args.outf, 'w');
try {
  kd.noGrad(() => { // no tracking history
    for (let i = 0; i < args.words; i++) {
      const wordIdx = kd.tidy(() => {
        let wordIdx;
        if (isTransformerModel) {
          const output = model(input, false);
          const wordWeights = output.index(-1).squeeze().div(args.temperature).exp().cpu();
          wordIdx = kd.multinomial(wordWeights, 1).index(0);
          const wordTensor = kd.tensor([[wordIdx.item()]]).long().to(device);
          input = kd.cat([input, wordTensor], 0);
          return [wordIdx.item(), input];
        }
        let output;
        [output, hidden] = model(input, hidden);
        const wordWeights = output.squeeze().div(args.temperature).exp().cpu();
        wordIdx = kd.multinomial(wordWeights, 1).index(0);
        input.fill_(wordIdx);
        return [wordIdx.item(), hidden];
      })[0];

      const word = corpus.dictionary.idx2word[wordIdx];

      fs.writeSync(outf, word + (i % 20 === 19 ? '\n' : ' '));

      if (i % args.logInterval === 0) {
        console.log(`| Generated ${i}/${args.words} words`);
      }
    }
  });
} finally {
  fs.closeSync(outf);
}
