// model.js - a small GPT-style character model for examples/char-transformer: token + position
// embeddings, N pre-LayerNorm blocks (causal multi-head self-attention through
// kd.nn.functional.scaledDotProductAttention with isCausal, then a GELU MLP), a final LayerNorm
// and an untied output head. Also the character vocabulary and the sampler (temperature, top-k).
'use strict';

const kd = require('../..');

const nn = kd.nn;
const F = kd.nn.functional;

/** Causal multi-head self-attention: one packed q/k/v projection, then SDPA with isCausal. */
class CausalSelfAttention extends nn.Module {
  constructor(dModel, nHead) {
    super();
    if (dModel % nHead !== 0) throw new Error(`dModel (${dModel}) must be divisible by nHead (${nHead})`);
    this.nHead = nHead;
    this.qkv = new nn.Linear(dModel, 3 * dModel);
    this.proj = new nn.Linear(dModel, dModel);
  }

  forward(x) {
    const [B, T, C] = x.shape;
    const H = this.nHead;
    // (B, T, 3C) -> (3, B, H, T, hd): q, k and v, each (B, H, T, hd)
    const qkv = this.qkv(x).view(B, T, 3, H, C / H).permute(2, 0, 3, 1, 4);
    const [q, k, v] = qkv.unbind(0);
    const y = F.scaledDotProductAttention(q, k, v, null, 0, true); // (B, H, T, hd)
    return this.proj(y.transpose(1, 2).reshape(B, T, C));
  }
}

/** One pre-LN transformer block: x + attn(ln1(x)), then x + mlp(ln2(x)). */
class Block extends nn.Module {
  constructor(dModel, nHead) {
    super();
    this.ln1 = new nn.LayerNorm(dModel);
    this.attn = new CausalSelfAttention(dModel, nHead);
    this.ln2 = new nn.LayerNorm(dModel);
    this.fc1 = new nn.Linear(dModel, 4 * dModel);
    this.fc2 = new nn.Linear(4 * dModel, dModel);
  }

  forward(x) {
    x = x.add(this.attn(this.ln1(x)));
    return x.add(this.fc2(F.gelu(this.fc1(this.ln2(x)))));
  }
}

/** The GPT: forward(idx int64 (B, T)) -> logits (B, T, vocabSize). */
class CharGPT extends nn.Module {
  constructor({ vocabSize, blockSize = 64, dModel = 128, nHead = 4, nLayer = 3 } = {}) {
    super();
    this.config = { vocabSize, blockSize, dModel, nHead, nLayer };
    this.tokEmb = new nn.Embedding(vocabSize, dModel);
    this.posEmb = new nn.Embedding(blockSize, dModel);
    this.blocks = new nn.ModuleList(Array.from({ length: nLayer }, () => new Block(dModel, nHead)));
    this.lnF = new nn.LayerNorm(dModel);
    this.head = new nn.Linear(dModel, vocabSize, { bias: false });
    // GPT-2's initialisation: N(0, 0.02) for linear and embedding weights, zero biases.
    for (const [name, p] of this.namedParameters()) {
      if (name.endsWith('.bias')) nn.init.zeros_(p);
      else if (p.ndim === 2) nn.init.normal_(p, 0, 0.02);
    }
  }

  forward(idx) {
    const T = idx.shape[1];
    if (T > this.config.blockSize) throw new Error(`sequence of length ${T} is longer than blockSize ${this.config.blockSize}`);
    const pos = kd.arange(T, { device: idx.device });
    let x = this.tokEmb(idx).add(this.posEmb(pos));
    for (const block of this.blocks) x = block(x);
    return this.head(this.lnF(x));
  }
}

/** The characters of `text`, sorted: encode(str) -> number[], decode(number[]) -> str. */
class Vocab {
  constructor(chars) {
    this.chars = chars;
    this.index = new Map(chars.map((c, i) => [c, i]));
  }
  static fromText(text) { return new Vocab([...new Set(text)].sort()); }
  get size() { return this.chars.length; }
  encode(s) {
    return Array.from(s, (c) => {
      const i = this.index.get(c);
      if (i === undefined) throw new Error(`character ${JSON.stringify(c)} is not in the vocabulary`);
      return i;
    });
  }
  decode(ids) { return ids.map((i) => this.chars[i]).join(''); }
}

/**
 * Samples `n` new tokens after `prompt` (number[]): each step takes the logits of the last
 * position divided by `temperature`, keeps the `topK` largest (0 = all), and draws from their
 * softmax with `rand` (a () => [0, 1) function). Runs under kd.inferenceMode and kd.tidy.
 */
function sample(model, prompt, n, { temperature = 0.8, topK = 10, rand = Math.random, device = 'cpu' } = {}) {
  const { blockSize } = model.config;
  const ids = prompt.slice();
  const wasTraining = model.training;
  model.eval();
  kd.inferenceMode(() => {
    for (let i = 0; i < n; i++) {
      const ctx = ids.slice(-blockSize);
      const [probs, choices] = kd.tidy(() => {
        const idx = kd.tensor(BigInt64Array.from(ctx, BigInt), { device }).view(1, -1);
        let logits = model(idx).select(1, -1).view(-1).div(temperature); // (vocab)
        let index = null;
        if (topK > 0 && topK < logits.shape[0]) {
          const top = logits.topk(topK);
          logits = top.values;
          index = top.indices;
        }
        return [F.softmax(logits, -1).cpu().dataSync(), index ? index.cpu().dataSync() : null];
      });
      let r = rand();
      let pick = probs.length - 1;
      for (let j = 0; j < probs.length; j++) {
        r -= probs[j];
        if (r < 0) { pick = j; break; }
      }
      ids.push(choices ? Number(choices[pick]) : pick);
    }
  });
  model.train(wasTraining);
  return ids.slice(prompt.length);
}

module.exports = { CharGPT, Block, CausalSelfAttention, Vocab, sample };
