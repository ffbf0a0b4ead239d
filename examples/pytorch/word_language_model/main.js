#!/usr/bin/env node
// main.js - word_language_model/main.py of pytorch/examples, line for line: trains a word-level
// language model (RNN_TANH, RNN_RELU, LSTM, GRU or Transformer) on a corpus folder of train.txt,
// valid.txt and test.txt with truncated backpropagation through time, gradient clipping and a
// plain SGD update written by hand (or AdamW with --use-optimizer), anneals the learning rate
// when the validation loss stops improving, saves the best model and reports the test loss.
// The default corpus is the small text shipped in data/fire-keeper (see its README); --data
// takes any folder laid out as wikitext-2 is.
//
//   node examples/pytorch/word_language_model/main.js --epochs 6
//   node examples/pytorch/word_language_model/main.js --epochs 6 --model Transformer --lr 5
//   node examples/pytorch/word_language_model/main.js --dry-run
'use strict';

const path = require('node:path');
const kd = require('../../..');
const { ArgumentParser } = require('./argparse');
const data = require('./data');
const { RNNModel, TransformerModel, saveModel, loadModel } = require('./model');

const nn = kd.nn;

const parser = new ArgumentParser({ description: 'PyTorch Wikitext-2 RNN/LSTM/GRU/Transformer Language Model' });
parser.addArgument('--data', { type: 'str', default: path.join(__dirname, 'data', 'fire-keeper'),
  help: 'location of the data corpus' });
parser.addArgument('--model', { type: 'str', default: 'LSTM',
  help: 'type of network (RNN_TANH, RNN_RELU, LSTM, GRU, Transformer)' });
parser.addArgument('--emsize', { type: 'int', default: 200,
  help: 'size of word embeddings' });
parser.addArgument('--nhid', { type: 'int', default: 200,
  help: 'number of hidden units per layer' });
parser.addArgument('--nlayers', { type: 'int', default: 2,
  help: 'number of layers' });
parser.addArgument('--lr', { type: 'float', default: 20,
  help: 'initial learning rate' });
parser.addArgument('--clip', { type: 'float', default: 0.25,
  help: 'gradient clipping' });
parser.addArgument('--epochs', { type: 'int', default: 40,
  help: 'upper epoch limit' });
parser.addArgument('--batch_size', { type: 'int', default: 20, metavar: 'N',
  help: 'batch size' });
parser.addArgument('--bptt', { type: 'int', default: 35,
  help: 'sequence length' });
parser.addArgument('--dropout', { type: 'float', default: 0.2,
  help: 'dropout applied to layers (0 = no dropout)' });
parser.addArgument('--tied', { action: 'store_true',
  help: 'tie the word embedding and softmax weights' });
parser.addArgument('--seed', { type: 'int', default: 1111,
  help: 'random seed' });
parser.addArgument('--log-interval', { type: 'int', default: 200, metavar: 'N',
  help: 'report interval' });
parser.addArgument('--save', { type: 'str', default: 'model.safetensors',
  help: 'path to save the final model' });
parser.addArgument('--nhead', { type: 'int', default: 2,
  help: 'the number of heads in the encoder/decoder of the transformer model' });
parser.addArgument('--dry-run', { action: 'store_true',
  help: 'verify the code and the model' });
parser.addArgument('--accel', { action: 'store_true',
  help: 'Enables accelerated training' });
parser.addArgument('--use-optimizer', { action: 'store_true',
  help: 'Uses AdamW optimizer for gradient updating' });
const args = parser.parseArgs();

// Set the random seed manually for reproducibility.
kd.manualSeed(args.seed);

let device;
if (args.accel && kd.cuda.isAvailable()) {
  device = 'cuda';
} else {
  device = 'cpu';
}

console.log('Using device:', device);

// Python's str.format specs used below: {:Nd} and {:N.Pf}.
const d = (n, w) => String(n).padStart(w);
const f = (x, w, p) => x.toFixed(p).padStart(w);

/// ////////////////////////////////////////////////////////////////////////////
// Load data
/// ////////////////////////////////////////////////////////////////////////////

const corpus = new data.Corpus(args.data);

// Starting from sequential data, batchify arranges the dataset into columns.
// For instance, with the alphabet as the sequence and batch size 4, we'd get
// ┌ a g m s ┐
// │ b h n t │
// │ c i o u │
// │ d j p v │
// │ e k q w │
// └ f l r x ┘.
// These columns are treated as independent by the model, which means that the
// dependence of e. g. 'g' on 'f' can not be learned, but allows more efficient
// batch processing.

function batchify(data, bsz) {
  return kd.tidy(() => {
    // Work out how cleanly we can divide the dataset into bsz parts.
    const nbatch = Math.floor(data.size(0) / bsz);
    // Trim off any extra elements that wouldn't cleanly fit (remainders).
    data = data.narrow(0, 0, nbatch * bsz);
    // Evenly divide the data across the bsz batches.
    data = data.view(bsz, -1).t().contiguous();
    return data.to(device);
  });
}

const evalBatchSize = 10;
const trainData = batchify(corpus.train, args.batchSize);
const valData = batchify(corpus.valid, evalBatchSize);
const testData = batchify(corpus.test, evalBatchSize);

/// ////////////////////////////////////////////////////////////////////////////
// Build the model
/// ////////////////////////////////////////////////////////////////////////////

const ntokens = corpus.dictionary.length;
let model;
if (args.model === 'Transformer') {
  model = new TransformerModel(ntokens, args.emsize, args.nhead, args.nhid, args.nlayers, args.dropout).to(device);
} else {
  model = new RNNModel(args.model, ntokens, args.emsize, args.nhid, args.nlayers, args.dropout, args.tied).to(device);
}

const criterion = new nn.NLLLoss();
let optimizer;
if (args.useOptimizer) {
  optimizer = new kd.optim.AdamW(model.parameters(), { lr: args.lr });
}

/// ////////////////////////////////////////////////////////////////////////////
// Training code
/// ////////////////////////////////////////////////////////////////////////////

/** Wraps hidden states in new Tensors, to detach them from their history. */
function repackageHidden(h) {
  if (h instanceof kd.Tensor) {
    return h.detach();
  } else {
    return h.map((v) => repackageHidden(v));
  }
}

// getBatch subdivides the source data into chunks of length args.bptt.
// If source is equal to the example output of the batchify function, with
// a bptt-limit of 2, we'd get the following two Variables for i = 0:
// ┌ a g m s ┐ ┌ b h n t ┐
// └ b h n t ┘ └ c i o u ┘
// Note that despite the name of the function, the subdivison of data is not
// done along the batch dimension (i.e. dimension 1), since that was handled
// by the batchify function. The chunks are along dimension 0, corresponding
// to the seq_len dimension in the LSTM.

function getBatch(source, i) {
  const seqLen = Math.min(args.bptt, source.size(0) - 1 - i);
  const data = source.index(kd.slice(i, i + seqLen));
  const target = source.index(kd.slice(i + 1, i + 1 + seqLen)).view(-1);
  return [data, target];
}

function evaluate(dataSource) {
  // Turn on evaluation mode which disables dropout.
  model.eval();
  let totalLoss = 0.0;
  const ntokens = corpus.dictionary.length;
  let hidden;
  if (args.model !== 'Transformer') {
    hidden = model.initHidden(evalBatchSize);
  }
  kd.noGrad(() => kd.tidy(() => {
    for (let i = 0; i < dataSource.size(0) - 1; i += args.bptt) {
      kd.tidy(() => {
        const [data, targets] = getBatch(dataSource, i);
        let output;
        if (args.model === 'Transformer') {
          output = model(data);
          output = output.view(-1, ntokens);
        } else {
          [output, hidden] = model(data, hidden);
          hidden = repackageHidden(hidden);
        }
        totalLoss += data.size(0) * criterion(output, targets).item();
        return hidden; // the next batch starts from it
      });
    }
  }));
  return totalLoss / (dataSource.size(0) - 1);
}

// Ctrl + C stops the training early (see the epoch loop below): the handler sets a flag that the
// batch loop checks, as Python raises KeyboardInterrupt between two statements.
class KeyboardInterrupt extends Error {}
let interrupted = false;

async function train() {
  // Turn on training mode which enables dropout.
  model.train();
  let totalLoss = 0.0;
  let startTime = performance.now();
  const ntokens = corpus.dictionary.length;
  let hidden;
  if (args.model !== 'Transformer') {
    hidden = model.initHidden(args.batchSize);
  }
  for (let batch = 0, i = 0; i < trainData.size(0) - 1; batch++, i += args.bptt) {
    const previous = hidden;
    kd.tidy(() => {
      const [data, targets] = getBatch(trainData, i);
      // Starting each batch, we detach the hidden state from how it was previously produced.
      // If we didn't, the model would try backpropagating all the way to start of the dataset.
      if (args.useOptimizer) {
        optimizer.zeroGrad();
      } else {
        model.zeroGrad();
      }
      let output;
      if (args.model === 'Transformer') {
        output = model(data);
        output = output.view(-1, ntokens);
      } else {
        hidden = repackageHidden(hidden);
        [output, hidden] = model(data, hidden);
      }
      const loss = criterion(output, targets);
      loss.backward();

      // `clipGradNorm_` helps prevent the exploding gradient problem in RNNs / LSTMs.
      kd.nn.utils.clipGradNorm_(model.parameters(), args.clip);
      if (args.useOptimizer) {
        optimizer.step();
      } else {
        for (const p of model.parameters()) {
          p.data.add_(p.grad, { alpha: -lr });
        }
      }

      totalLoss += loss.item();
      return hidden; // the next batch starts from it
    });
    kd.dispose(previous);

    if (batch % args.logInterval === 0 && batch > 0) {
      const curLoss = totalLoss / args.logInterval;
      const elapsed = (performance.now() - startTime) / 1000;
      console.log(`| epoch ${d(epoch, 3)} | ${d(batch, 5)}/${d(Math.floor(trainData.size(0) / args.bptt), 5)} batches | ` +
        `lr ${f(lr, 2, 2)} | ms/batch ${f(elapsed * 1000 / args.logInterval, 5, 2)} | ` +
        `loss ${f(curLoss, 5, 2)} | ppl ${f(Math.exp(curLoss), 8, 2)}`);
      totalLoss = 0;
      startTime = performance.now();
    }
    if (args.dryRun) {
      break;
    }
    await new Promise(setImmediate); // lets a Ctrl + C in
    if (interrupted) throw new KeyboardInterrupt();
  }
  kd.dispose(hidden);
}

// Loop over epochs.
let lr = args.lr;
let bestValLoss = null;
let epoch;

async function main() {
  // At any point you can hit Ctrl + C to break out of training early.
  const onInterrupt = () => { interrupted = true; };
  process.once('SIGINT', onInterrupt);
  try {
    for (epoch = 1; epoch <= args.epochs; epoch++) {
      const epochStartTime = performance.now();
      await train();
      const valLoss = evaluate(valData);
      console.log('-'.repeat(89));
      console.log(`| end of epoch ${d(epoch, 3)} | time: ${f((performance.now() - epochStartTime) / 1000, 5, 2)}s | ` +
        `valid loss ${f(valLoss, 5, 2)} | valid ppl ${f(Math.exp(valLoss), 8, 2)}`);
      console.log('-'.repeat(89));
      // Save the model if the validation loss is the best we've seen so far.
      if (!bestValLoss || valLoss < bestValLoss) {
        saveModel(model, args.save);
        bestValLoss = valLoss;
      } else {
        // Anneal the learning rate if no improvement has been seen in the validation dataset.
        lr /= 4.0;
      }
    }
  } catch (e) {
    if (!(e instanceof KeyboardInterrupt)) throw e;
    console.log('-'.repeat(89));
    console.log('Exiting from training early');
  } finally {
    process.removeListener('SIGINT', onInterrupt);
  }

  // Load the best saved model.
  model = loadModel(args.save, { device });
  // after load the rnn params are not a continuous chunk of memory
  // this makes them a continuous chunk, and will speed up forward pass
  // Currently, only rnn model supports flattenParameters function.
  if (['RNN_TANH', 'RNN_RELU', 'LSTM', 'GRU'].includes(args.model)) {
    model.rnn.flattenParameters();
  }

  // Run on test data.
  const testLoss = evaluate(testData);
  console.log('='.repeat(89));
  console.log(`| End of training | test loss ${f(testLoss, 5, 2)} | test ppl ${f(Math.exp(testLoss), 8, 2)}`);
  console.log('='.repeat(89));
}

if (require.main === module) {
  main().catch((e) => {
    console.error(e);
    process.exitCode = 1;
  });
}

// What test/pytorch_examples_word_language_model.test.js reaches into (it sets process.argv,
// requires this file, loads PyTorch's initial weights into the model and runs main()).
module.exports = { args, corpus, criterion, main, get model() { return model; } };
