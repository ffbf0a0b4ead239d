#!/usr/bin/env node
// train.js - trains the small GPT-style character model of model.js on a text file (by default
// data/gnu-licenses.txt, the GNU GPL/LGPL texts shipped by Debian's base-files package), with
// AdamW, a warmup + cosine learning-rate schedule and gradient clipping; shows a progress bar,
// reports train/validation loss against the unigram entropy of the text, writes the loss curve
// as an SVG, saves the model with kd.save (safetensors, config and vocabulary in the metadata)
// and samples text with temperature and top-k.
//
//   node examples/char-transformer/train.js                 # ~600 steps, a few minutes on 2 cores
//   node examples/char-transformer/train.js --steps 3000 --device cuda
//   node examples/char-transformer/train.js --help
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { parseArgs } = require('node:util');
const kd = require('../..');
const { CharGPT, Vocab, sample } = require('./model');
const { ProgressBar, fmtTime } = require('./progress');

const F = kd.nn.functional;

const OPTIONS = {
  steps: { type: 'string', default: '600', help: 'training steps' },
  device: { type: 'string', default: 'cpu', help: "'cpu' or 'cuda'" },
  text: { type: 'string', default: path.join(__dirname, 'data', 'gnu-licenses.txt'), help: 'training text (UTF-8)' },
  out: { type: 'string', default: path.join(__dirname, 'out'), help: 'output folder (model.safetensors, loss.svg)' },
  batch: { type: 'string', default: '32', help: 'sequences per batch' },
  block: { type: 'string', default: '64', help: 'context length' },
  dim: { type: 'string', default: '128', help: 'model width' },
  layers: { type: 'string', default: '3', help: 'transformer blocks' },
  heads: { type: 'string', default: '4', help: 'attention heads' },
  lr: { type: 'string', default: '3e-3', help: 'peak learning rate' },
  'eval-every': { type: 'string', default: '100', help: 'steps between validation estimates' },
  'sample-len': { type: 'string', default: '400', help: 'characters to sample after training' },
  temperature: { type: 'string', default: '0.8', help: 'sampling temperature' },
  'top-k': { type: 'string', default: '10', help: 'sample among the k most likely characters (0 = all)' },
  prompt: { type: 'string', default: '', help: 'text to start sampling from (default: the start of a paragraph)' },
  seed: { type: 'string', default: '1337', help: 'random seed' },
  threads: { type: 'string', default: '', help: 'CPU threads (default: all cores)' },
  help: { type: 'boolean', short: 'h', default: false, help: 'this message' },
};

function usage() {
  const lines = Object.entries(OPTIONS).map(([k, o]) => `  --${k.padEnd(12)} ${o.help}${o.type === 'string' ? ` (default ${o.default || 'none'})` : ''}`);
  return `usage: node examples/char-transformer/train.js [options]\n${lines.join('\n')}`;
}

// A small deterministic generator for batch offsets and sampling (mulberry32).
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Unigram entropy of the token stream in nats: the loss of a model that knows only frequencies.
function unigramEntropy(ids, vocabSize) {
  const counts = new Float64Array(vocabSize);
  for (const i of ids) counts[i]++;
  let h = 0;
  for (const c of counts) if (c > 0) { const p = c / ids.length; h -= p * Math.log(p); }
  return h;
}

// x, y: int64 (B, T) tensors of random windows of `ids` (y is x shifted by one).
function getBatch(ids, B, T, rand, device) {
  const x = new BigInt64Array(B * T);
  const y = new BigInt64Array(B * T);
  for (let b = 0; b < B; b++) {
    const off = Math.floor(rand() * (ids.length - T - 1));
    for (let t = 0; t < T; t++) {
      x[b * T + t] = BigInt(ids[off + t]);
      y[b * T + t] = BigInt(ids[off + t + 1]);
    }
  }
  return [kd.tensor(x, { device }).view(B, T), kd.tensor(y, { device }).view(B, T)];
}

function lossOf(model, x, y) {
  const logits = model(x);
  return F.crossEntropy(logits.view(-1, logits.shape[2]), y.view(-1));
}

function estimateLoss(model, ids, B, T, rand, device, batches = 4) {
  model.eval();
  const loss = kd.inferenceMode(() => kd.tidy(() => {
    let s = 0;
    for (let i = 0; i < batches; i++) s += lossOf(model, ...getBatch(ids, B, T, rand, device)).item();
    return s / batches;
  }));
  model.train();
  return loss;
}

// The loss curves as a small standalone SVG.
function lossSvg(train, val, unigram) {
  const W = 640; const H = 360; const P = 48;
  const all = [...train.map((p) => p[1]), ...val.map((p) => p[1]), unigram];
  const ymax = Math.ceil(Math.max(...all)); const ymin = Math.floor(Math.min(...all));
  const xmax = Math.max(1, ...train.map((p) => p[0]));
  const X = (s) => P + (s / xmax) * (W - 2 * P);
  const Y = (l) => H - P - ((l - ymin) / Math.max(ymax - ymin, 1e-9)) * (H - 2 * P);
  const line = (pts, color) => `<polyline fill="none" stroke="${color}" stroke-width="1.5" points="${pts.map(([s, l]) => `${X(s).toFixed(1)},${Y(l).toFixed(1)}`).join(' ')}"/>`;
  const ticks = [];
  for (let v = ymin; v <= ymax; v += 0.5) ticks.push(`<text x="${P - 6}" y="${Y(v) + 4}" text-anchor="end" font-size="11">${v.toFixed(1)}</text><line x1="${P}" x2="${W - P}" y1="${Y(v)}" y2="${Y(v)}" stroke="#eee"/>`);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif">
<rect width="100%" height="100%" fill="white"/>
${ticks.join('\n')}
<line x1="${P}" x2="${W - P}" y1="${Y(unigram)}" y2="${Y(unigram)}" stroke="#999" stroke-dasharray="4 3"/>
<text x="${W - P}" y="${Y(unigram) - 4}" text-anchor="end" font-size="11" fill="#666">unigram entropy ${unigram.toFixed(2)}</text>
${line(train, '#1f77b4')}
${val.length ? line(val, '#d62728') : ''}
<text x="${W / 2}" y="${H - 12}" text-anchor="middle" font-size="12">step (blue: train loss, red: validation loss, nats/char)</text>
<text x="${P}" y="${P - 16}" font-size="13">char-transformer loss</text>
</svg>
`;
}

async function main(argv) {
  let values;
  try {
    ({ values } = parseArgs({ args: argv, options: Object.fromEntries(Object.entries(OPTIONS).map(([k, o]) => [k, o.short ? { type: o.type, short: o.short, default: o.default } : { type: o.type, default: o.default }])) }));
  } catch (e) {
    console.error(`${e.message}\n${usage()}`);
    return 2;
  }
  if (values.help) { console.log(usage()); return 0; }
  const int = (k) => {
    const v = Number(values[k]);
    if (!Number.isInteger(v) || v < 0) throw new Error(`--${k} must be a non-negative integer, got '${values[k]}'`);
    return v;
  };
  const steps = int('steps'); const B = int('batch'); const T = int('block');
  const seed = int('seed'); const evalEvery = Math.max(1, int('eval-every'));
  const lr = Number(values.lr);
  let device = values.device;
  if (device.startsWith('cuda') && !kd.cuda.isAvailable()) {
    console.error(`--device ${device}: CUDA is not available (kindling was built without the CUDA backend, or there is no GPU)`);
    return 1;
  }
  if (values.threads) kd.setNumThreads(int('threads'));
  kd.manualSeed(seed);
  const rand = rng(seed);

  // ---- data: characters -> ids, 90% train / 10% validation ---------------------------------
  const text = fs.readFileSync(values.text, 'utf8');
  const vocab = Vocab.fromText(text);
  const ids = Int32Array.from(vocab.encode(text));
  if (ids.length < 4 * (T + 2)) throw new Error(`the text is too short (${ids.length} characters) for --block ${T}`);
  const nTrain = Math.floor(ids.length * 0.9);
  const trainIds = ids.subarray(0, nTrain);
  const valIds = ids.subarray(nTrain);
  const unigram = unigramEntropy(trainIds, vocab.size);
  console.log(`text: ${path.relative(process.cwd(), values.text) || values.text}, ${ids.length} characters, vocabulary ${vocab.size}, ` +
    `unigram entropy ${unigram.toFixed(3)} nats/char (uniform: ${Math.log(vocab.size).toFixed(3)})`);

  // ---- model and optimizer -------------------------------------------------------------------
  const model = new CharGPT({ vocabSize: vocab.size, blockSize: T, dModel: int('dim'), nHead: int('heads'), nLayer: int('layers') });
  if (device !== 'cpu') model.to(device);
  const nParams = model.parameters().reduce((s, p) => s + p.numel(), 0);
  console.log(`model: ${JSON.stringify(model.config)}, ${nParams} parameters, device ${device}, threads ${kd.getNumThreads ? kd.getNumThreads() : '?'}`);
  // weight decay on matrices only (not on biases, LayerNorm weights)
  const decay = model.parameters().filter((p) => p.ndim >= 2);
  const noDecay = model.parameters().filter((p) => p.ndim < 2);
  const opt = new kd.optim.AdamW([{ params: decay, weightDecay: 0.1 }, { params: noDecay, weightDecay: 0 }], { lr, betas: [0.9, 0.99] });
  const warmup = Math.min(50, Math.floor(steps / 10));
  const lrAt = (s) => (s < warmup ? lr * (s + 1) / warmup : 0.1 * lr + 0.9 * lr * 0.5 * (1 + Math.cos(Math.PI * (s - warmup) / Math.max(1, steps - warmup))));

  // ---- training ------------------------------------------------------------------------------
  const trainCurve = []; const valCurve = [];
  const bar = new ProgressBar(steps, { label: 'train ' });
  let smooth = null;
  const t0 = performance.now();
  for (let step = 0; step < steps; step++) {
    for (const g of opt.paramGroups) g.lr = lrAt(step);
    const loss = kd.tidy(() => {
      const [x, y] = getBatch(trainIds, B, T, rand, device);
      const l = lossOf(model, x, y);
      opt.zeroGrad();
      l.backward();
      kd.nn.utils.clipGradNorm_(model.parameters(), 1.0);
      return l.item();
    });
    opt.step(); // outside the tidy: the optimizer's state tensors are created on the first step
    if (!Number.isFinite(loss)) throw new Error(`loss is ${loss} at step ${step}`);
    smooth = smooth === null ? loss : 0.9 * smooth + 0.1 * loss;
    trainCurve.push([step + 1, loss]);
    if ((step + 1) % evalEvery === 0 || step + 1 === steps) {
      const v = estimateLoss(model, valIds.length > T + 2 ? valIds : trainIds, B, T, rand, device);
      valCurve.push([step + 1, v]);
      bar.log(`step ${String(step + 1).padStart(5)}  train loss ${smooth.toFixed(3)}  val loss ${v.toFixed(3)}  lr ${lrAt(step).toExponential(2)}`);
    }
    bar.update(step + 1, `loss ${smooth.toFixed(3)}`);
  }
  bar.done();
  const seconds = (performance.now() - t0) / 1000;

  // ---- results: summary, curve, model ---------------------------------------------------------
  const finalVal = valCurve.length ? valCurve[valCurve.length - 1][1] : NaN;
  console.log(`\ntrained ${steps} steps in ${fmtTime(seconds)} (${(steps / Math.max(seconds, 1e-9)).toFixed(2)} steps/s, ` +
    `${Math.round(steps * B * T / Math.max(seconds, 1e-9))} tokens/s)`);
  console.log(`loss: start ${trainCurve.length ? trainCurve[0][1].toFixed(3) : '-'}, final train (smoothed) ${smooth === null ? '-' : smooth.toFixed(3)}, ` +
    `final validation ${finalVal.toFixed(3)}; unigram entropy ${unigram.toFixed(3)} nats/char`);
  fs.mkdirSync(values.out, { recursive: true });
  const svgPath = path.join(values.out, 'loss.svg');
  if (trainCurve.length) fs.writeFileSync(svgPath, lossSvg(trainCurve, valCurve, unigram));
  const modelPath = path.join(values.out, 'model.safetensors');
  await kd.save(model.stateDict(), modelPath, {
    metadata: { config: JSON.stringify(model.config), vocab: JSON.stringify(vocab.chars), steps: String(steps), valLoss: String(finalVal) },
  });
  console.log(`saved ${path.relative(process.cwd(), modelPath)} and ${path.relative(process.cwd(), svgPath)}`);

  // ---- sampling --------------------------------------------------------------------------------
  const n = int('sample-len');
  if (n > 0) {
    let prompt = values.prompt;
    if (!prompt) {
      // start after a blank line of the validation text
      const start = text.indexOf('\n\n', nTrain);
      prompt = start >= 0 ? text.slice(start + 2, start + 2 + Math.min(16, T)) : text.slice(0, Math.min(16, T));
    }
    const out = sample(model, vocab.encode(prompt), n, { temperature: Number(values.temperature), topK: int('top-k'), rand, device });
    console.log(`\nsample (temperature ${values.temperature}, top-k ${values['top-k']}):\n${'-'.repeat(60)}\n${prompt}${vocab.decode(out)}\n${'-'.repeat(60)}`);
  }
  kd.dispose(model.parameters());
  return 0;
}

if (require.main === module) {
  main(process.argv.slice(2)).then((code) => { process.exitCode = code; }, (e) => { console.error(e.stack || String(e)); process.exitCode = 1; });
}

module.exports = { main };
