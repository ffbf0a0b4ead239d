// generation.js - autoregressive decoding for a causal language model with a key/value cache
// (examples/gpt2/model.js): stream(model, inputIds, options) is an async iterator of new token
// ids, generate(model, inputIds, options) collects them after the prompt. Greedy (argmax) or
// sampling (temperature, then top-k, then top-p, in Hugging Face's order of logits warpers)
// with a seeded generator, so a seed gives the same tokens on every device. On CUDA each token
// after the prompt is one replay of a captured CUDA graph (cudaGraph: false decodes eagerly).
//
// The model must offer model.config.nPositions, model.makeCache(batch, maxLength) and
// model(inputIds (B, T) int64, cache, { lastOnly: true }) -> logits (B, 1, vocab).
'use strict';

const kd = require('../..');
const { GraphedDecodeStep } = require('./graph_step');

const F = kd.nn.functional;

/** A seeded uniform [0, 1) generator (splitmix32): the same sequence for the same seed everywhere. */
function seededRandom(seed) {
  let s = Number(BigInt.asUintN(32, BigInt(seed))) >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    z = (z ^ (z >>> 16)) >>> 0;
    return z / 4294967296;
  };
}

function checkOptions(options, vocab) {
  const o = {
    maxNewTokens: 20, temperature: 1.0, topK: 0, topP: 1.0, doSample: false, eosTokenId: null, seed: null, cudaGraph: true,
    ...options,
  };
  if (!Number.isInteger(o.maxNewTokens) || o.maxNewTokens < 0) throw new RangeError(`maxNewTokens must be a non-negative integer, got ${o.maxNewTokens}`);
  if (!(typeof o.temperature === 'number' && o.temperature > 0)) throw new RangeError(`temperature must be a positive number, got ${o.temperature}`);
  if (!Number.isInteger(o.topK) || o.topK < 0) throw new RangeError(`topK must be a non-negative integer, got ${o.topK}`);
  if (!(typeof o.topP === 'number' && o.topP > 0 && o.topP <= 1)) throw new RangeError(`topP must be a number in (0, 1], got ${o.topP}`);
  if (typeof o.doSample !== 'boolean') throw new TypeError(`doSample must be a boolean, got ${typeof o.doSample}`);
  if (o.eosTokenId !== null && !(Number.isInteger(o.eosTokenId) && o.eosTokenId >= 0 && o.eosTokenId < vocab)) {
    throw new RangeError(`eosTokenId must be null or a token id in [0, ${vocab}), got ${o.eosTokenId}`);
  }
  if (o.seed !== null && !Number.isInteger(o.seed)) throw new TypeError(`seed must be null or an integer, got ${o.seed}`);
  if (typeof o.cudaGraph !== 'boolean') throw new TypeError(`cudaGraph must be a boolean, got ${typeof o.cudaGraph}`);
  return o;
}

/**
 * Prompt rows as number[][] (rows may differ in length: generation left-pads them) and whether
 * the caller gave one row (a flat array or a 1-D tensor).
 */
function promptRows(inputIds, vocab) {
  let rows;
  let single = false;
  if (inputIds instanceof kd.Tensor) {
    if (inputIds.ndim !== 1 && inputIds.ndim !== 2) throw new RangeError(`inputIds must be 1-D or 2-D, got shape [${inputIds.shape}]`);
    single = inputIds.ndim === 1;
    const a = inputIds.cpu().arraySync();
    rows = (single ? [a] : a).map((r) => r.map(Number));
  } else if (Array.isArray(inputIds) && inputIds.length > 0 && Array.isArray(inputIds[0])) {
    rows = inputIds;
  } else if (Array.isArray(inputIds)) {
    rows = [inputIds];
    single = true;
  } else {
    throw new TypeError('inputIds must be a number[], a number[][] or an int tensor');
  }
  for (const r of rows) {
    if (!Array.isArray(r) || r.length === 0) throw new RangeError('every row of inputIds must hold at least one token');
    for (const id of r) {
      if (!Number.isInteger(id) || id < 0 || id >= vocab) throw new RangeError(`token id ${id} is out of range [0, ${vocab})`);
    }
  }
  return { rows, single };
}

/** The sampled index (into `probs`, sorted descending) after top-p truncation, drawn with rand(). */
function drawTopP(probs, topP, rand) {
  let keep = probs.length;
  if (topP < 1) { // the smallest prefix whose mass reaches topP (at least one token)
    let cum = 0;
    for (let i = 0; i < probs.length; i++) {
      cum += probs[i];
      if (cum >= topP) { keep = i + 1; break; }
    }
  }
  let total = 0;
  for (let i = 0; i < keep; i++) total += probs[i];
  let r = rand() * total;
  for (let i = 0; i < keep; i++) {
    r -= probs[i];
    if (r < 0) return i;
  }
  return keep - 1;
}

/**
 * What the next tokens are chosen from, as device tensors: the argmax of logits (B, vocab), or
 * for sampling the candidates in descending order (the top k, or all of them sorted) with their
 * probabilities after the temperature.
 */
function candidates(logits, o) {
  if (!o.doSample) return [logits.argmax(-1)];
  const scaled = o.temperature === 1 ? logits : logits.div(o.temperature);
  const vocab = scaled.shape[1];
  const k = o.topK > 0 && o.topK < vocab ? o.topK : vocab;
  const [values, indices] = k < vocab ? scaled.topk(k, -1) : scaled.sort(-1, true);
  return [indices, F.softmax(values.float(), -1)];
}

/** The next token of every row from candidates()' host values: the argmax, or a top-p draw. */
function pickTokens([idx, probs], B, o, rand) {
  if (!o.doSample) return Array.from(idx, Number);
  const k = idx.length / B;
  const out = [];
  for (let b = 0; b < B; b++) out.push(Number(idx[b * k + drawTopP(probs.subarray(b * k, (b + 1) * k), o.topP, rand)]));
  return out;
}

/**
 * The new tokens after inputIds, one step at a time: a number per step for one prompt row, a
 * number[] (one per row) for several. Stops after maxNewTokens, or when every row has produced
 * eosTokenId (rows that finished earlier repeat it). Runs in inference mode, each step in kd.tidy;
 * the step's result is read with dataAsync(), so the event loop is free while the device works.
 */
async function* stream(model, inputIds, options = {}) {
  const { vocabSize, nPositions } = model.config;
  const o = checkOptions(options, vocabSize);
  const { rows, single } = promptRows(inputIds, vocabSize);
  const B = rows.length;
  const T = Math.max(...rows.map((r) => r.length));
  // left padding, masked out: mask[b] holds 0 for the padding, 1 for every token (prompt and new)
  const padded = rows.some((r) => r.length !== T);
  const mask = rows.map((r) => [...Array(T - r.length).fill(0), ...Array(r.length).fill(1)]);
  if (T + o.maxNewTokens > nPositions) {
    throw new RangeError(`prompt (${T}) + maxNewTokens (${o.maxNewTokens}) exceeds the model's nPositions=${nPositions}`);
  }
  if (o.maxNewTokens === 0) return;
  const rand = seededRandom(o.seed ?? Math.floor(Math.random() * 2 ** 32));
  const device = model.transformer.wte.weight.device;
  const wasTraining = model.training;
  model.eval();
  const cache = kd.inferenceMode(() => model.makeCache(B, T + o.maxNewTokens));
  // on CUDA, the one-token steps after the prompt replay one captured graph (./graph_step.js)
  const graphed = o.cudaGraph && String(device).startsWith('cuda') && o.maxNewTokens > 1
    ? new GraphedDecodeStep(model, cache, B, (logits) => candidates(logits, o),
      { feedback: !o.doSample, padding: padded ? rows.map((r) => T - r.length) : null }) : null;
  const done = new Array(B).fill(false);
  try {
    let input = rows.flatMap((r) => [...Array(T - r.length).fill(0), ...r]);
    for (let step = 0; step < o.maxNewTokens; step++) {
      const len = step === 0 ? T : 1;
      const picked = graphed && step > 0 ? graphed.step(input) : kd.inferenceMode(() => kd.tidy(() => {
        const ids = kd.tensor(BigInt64Array.from(input, BigInt), { device }).view(B, len);
        const attentionMask = padded ? kd.tensor(mask.map((m) => m.map(BigInt)), { dtype: 'int64', device }) : null;
        return candidates(model(ids, cache, { lastOnly: true, attentionMask }).select(1, 0), o); // from (B, vocab)
      }));
      let host;
      try {
        host = await Promise.all(picked.map((t) => t.dataAsync())); // the event loop runs while the device works
      } finally {
        if (!(graphed && step > 0)) kd.dispose(picked); // a graph's outputs live as long as the graph
      }
      const next = pickTokens(host, B, o, rand);
      for (let b = 0; b < B; b++) {
        if (done[b]) next[b] = o.eosTokenId;
        else if (next[b] === o.eosTokenId) done[b] = true;
      }
      for (const m of mask) m.push(1);
      yield single ? next[0] : next;
      if (done.every(Boolean)) return;
      input = next;
      await new Promise(setImmediate); // and between tokens (a CPU read resolves at once)
    }
  } finally {
    if (graphed) graphed.dispose();
    cache.dispose();
    if (wasTraining) model.train();
  }
}

/**
 * The prompt followed by its generated tokens (stream()'s tokens collected): number[] for a flat
 * prompt or a 1-D tensor, number[][] for several rows.
 */
async function generate(model, inputIds, options = {}) {
  const { rows, single } = promptRows(inputIds, model.config.vocabSize);
  const out = rows.map((r) => r.slice());
  for await (const t of stream(model, inputIds, options)) {
    if (single) out[0].push(t);
    else t.forEach((id, b) => out[b].push(id));
  }
  return single ? out[0] : out;
}

module.exports = { stream, generate, seededRandom, drawTopP, checkOptions, candidates, pickTokens };
