#!/usr/bin/env node
// generate.js - streams tokens from a GPT-2 (examples/gpt2/model.js). With --model it loads a
// Hugging Face GPT-2 folder (config.json, model.safetensors); with --weights a safetensors file
// (GPT-2 small's config unless --layers/--width/... say otherwise); without either, it builds a
// small random model, so it runs anywhere in a second.
//
//   node examples/gpt2/generate.js                         # small random model, greedy
//   node examples/gpt2/generate.js --sample --top-k 20 --seed 1
//   node examples/gpt2/generate.js --weights model.safetensors --prompt 464,3290 --tokens 40
//   node examples/gpt2/generate.js --model path/to/gpt2     # config.json + model.safetensors
//   node examples/gpt2/generate.js --device cuda
//
// Prints the new token ids as they come, then the tokens per second. Token ids, not text: the
// example carries no tokenizer (pass ids from one with --prompt).
'use strict';

const { parseArgs } = require('node:util');
const kd = require('../..');
const { GPT2LMHeadModel } = require('./model');

const USAGE = `usage: node examples/gpt2/generate.js [options]
  --model DIR        a Hugging Face GPT-2 folder (config.json, model.safetensors)
  --weights FILE     a Hugging Face GPT-2 safetensors file (default: a small random model)
  --prompt IDS       comma-separated token ids (default: 1,2,3,4)
  --tokens N         new tokens to generate (default: 32)
  --sample           sample instead of greedy decoding
  --temperature T    sampling temperature (default: 1)
  --top-k K          keep the K most likely tokens (default: 0, all)
  --top-p P          keep the smallest set of tokens whose probability reaches P (default: 1)
  --seed S           sampling seed (default: 0)
  --eos ID           stop at this token id
  --layers/--width/--heads/--vocab/--positions N   the model's shape
  --device DEV       cpu (default) or cuda
  --eager            on CUDA, run every step eagerly (default: each token one replay of a CUDA graph)`;

function parse(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      model: { type: 'string' }, weights: { type: 'string' }, prompt: { type: 'string', default: '1,2,3,4' }, tokens: { type: 'string', default: '32' },
      sample: { type: 'boolean', default: false }, temperature: { type: 'string', default: '1' },
      'top-k': { type: 'string', default: '0' }, 'top-p': { type: 'string', default: '1' }, seed: { type: 'string', default: '0' },
      eos: { type: 'string' }, layers: { type: 'string' }, width: { type: 'string' }, heads: { type: 'string' },
      vocab: { type: 'string' }, positions: { type: 'string' }, device: { type: 'string', default: 'cpu' },
      eager: { type: 'boolean', default: false }, help: { type: 'boolean', default: false },
    },
  });
  return values;
}

async function main(argv = process.argv.slice(2), out = process.stdout) {
  const a = parse(argv);
  if (a.help) { out.write(`${USAGE}\n`); return null; }
  const int = (s) => (s === undefined ? undefined : Number(s));
  const small = a.weights ? {} : { vocabSize: 256, nPositions: 128, nEmbd: 64, nLayer: 2, nHead: 4 };
  const config = { ...small };
  for (const [k, opt] of [['nLayer', 'layers'], ['nEmbd', 'width'], ['nHead', 'heads'], ['vocabSize', 'vocab'], ['nPositions', 'positions']]) {
    if (a[opt] !== undefined) config[k] = int(a[opt]);
  }
  let model;
  if (a.model) {
    model = GPT2LMHeadModel.fromPretrained(a.model, { device: a.device });
  } else if (a.weights) {
    model = GPT2LMHeadModel.fromSafetensors(a.weights, config, { device: a.device });
  } else {
    kd.manualSeed(Number(a.seed));
    model = new GPT2LMHeadModel(config).eval();
    if (a.device !== 'cpu') model.to(a.device);
  }
  const prompt = a.prompt.split(',').map(Number);
  const options = {
    maxNewTokens: int(a.tokens), doSample: a.sample, temperature: Number(a.temperature), topK: int(a['top-k']),
    topP: Number(a['top-p']), seed: int(a.seed), eosTokenId: a.eos === undefined ? null : int(a.eos), cudaGraph: !a.eager,
  };
  out.write(`prompt: ${prompt.join(' ')}\n`);
  const tokens = [];
  const t0 = process.hrtime.bigint();
  for await (const id of model.stream(prompt, options)) {
    tokens.push(id);
    out.write(`${tokens.length === 1 ? '' : ' '}${id}`);
  }
  const sec = Number(process.hrtime.bigint() - t0) / 1e9;
  out.write(`\n${tokens.length} tokens in ${sec.toFixed(3)} s (${(tokens.length / sec).toFixed(1)} tokens/s)\n`);
  return tokens;
}

module.exports = { main };

if (require.main === module) {
  main().catch((e) => {
    process.stderr.write(`${e.message}\n`);
    process.exitCode = 1;
  });
}
