// model.js - a GPT-2 decoder (Hugging Face's architecture and parameter names) with a preallocated
// key/value cache, for inference: GPT2Model (embeddings, blocks, final LayerNorm) and
// GPT2LMHeadModel (the same plus the output head tied to the token embedding). A Hugging Face GPT-2
// checkpoint loads by name (fromPretrained(dir), fromSafetensors(path), loadHuggingFace(dict));
// generate() and stream() decode (./generation.js), ./generate.js is the command line.
//
// The layout follows transformers' modeling_gpt2.py: Conv1D projections store their weight as
// [in, out] (y = x @ W + b, computed with addmm as Conv1D.forward does), the MLP uses the tanh
// approximation of GELU ("gelu_new"), LayerNorms use eps 1e-5, attention scales by 1/sqrt(headDim).
'use strict';

const kd = require('../..');
const { fromHuggingFace, fromPretrainedDir } = require('../hf_checkpoint');
const generation = require('./generation');

const nn = kd.nn;
const F = kd.nn.functional;

/** GPT-2's hyperparameters (Hugging Face's GPT2Config names, camelCased); defaults are GPT-2 small. */
function gpt2Config(options = {}) {
  const c = {
    vocabSize: 50257, nPositions: 1024, nEmbd: 768, nLayer: 12, nHead: 12, layerNormEpsilon: 1e-5,
    ...options,
  };
  for (const k of ['vocabSize', 'nPositions', 'nEmbd', 'nLayer', 'nHead']) {
    if (!Number.isInteger(c[k]) || c[k] <= 0) throw new RangeError(`GPT-2 config: ${k} must be a positive integer, got ${c[k]}`);
  }
  if (c.nEmbd % c.nHead !== 0) throw new RangeError(`GPT-2 config: nEmbd (${c.nEmbd}) must be divisible by nHead (${c.nHead})`);
  return c;
}

/**
 * The config of a Hugging Face GPT-2 config.json (its object): vocab_size, n_positions, n_embd,
 * n_layer, n_head, layer_norm_epsilon. Throws for what this model does not implement (another
 * activation than gelu_new, an inner size other than 4 * n_embd, unscaled or reordered attention).
 */
function configFromHuggingFace(json) {
  if (json === null || typeof json !== 'object') throw new TypeError('configFromHuggingFace: expected the object of a config.json');
  const unsupported = [
    ['activation_function', 'gelu_new'], ['n_inner', null], ['scale_attn_weights', true],
    ['scale_attn_by_inverse_layer_idx', false], ['reorder_and_upcast_attn', false],
  ].filter(([k, ok]) => k in json && json[k] !== ok && !(k === 'n_inner' && json[k] === 4 * json.n_embd));
  if (unsupported.length) {
    throw new RangeError(`GPT-2 config: unsupported ${unsupported.map(([k]) => `${k}=${JSON.stringify(json[k])}`).join(', ')}`);
  }
  const names = { vocab_size: 'vocabSize', n_positions: 'nPositions', n_embd: 'nEmbd', n_layer: 'nLayer', n_head: 'nHead', layer_norm_epsilon: 'layerNormEpsilon' };
  const c = {};
  for (const [hf, ours] of Object.entries(names)) if (json[hf] !== undefined) c[ours] = json[hf];
  return gpt2Config(c);
}

/** Hugging Face's Conv1D: a linear layer whose weight is stored [nx, nf] (in, out). */
class Conv1D extends nn.Module {
  constructor(nx, nf) {
    super();
    this.nf = nf;
    this.weight = new nn.Parameter(kd.empty(nx, nf));
    this.bias = new nn.Parameter(kd.zeros(nf));
    nn.init.normal_(this.weight, 0, 0.02);
  }

  forward(x) {
    const shape = x.shape;
    const y = kd.addmm(this.bias, x.reshape(-1, shape[shape.length - 1]), this.weight);
    return y.view(...shape.slice(0, -1), this.nf);
  }
}

/**
 * Per-layer key/value buffers [2, batch, nHead, maxLength, headDim] (keys, then values), allocated
 * once: each forward writes its new keys and values into the next slice with one copy and attends
 * over the filled prefix.
 */
class KVCache {
  constructor(config, batch, maxLength, { device = 'cpu', dtype = 'float32' } = {}) {
    if (!Number.isInteger(batch) || batch <= 0) throw new RangeError(`KVCache: batch must be a positive integer, got ${batch}`);
    if (!Number.isInteger(maxLength) || maxLength <= 0 || maxLength > config.nPositions) {
      throw new RangeError(`KVCache: maxLength must be an integer in [1, nPositions=${config.nPositions}], got ${maxLength}`);
    }
    const shape = [2, batch, config.nHead, maxLength, config.nEmbd / config.nHead];
    this.batch = batch;
    this.maxLength = maxLength;
    this.length = 0; // positions filled
    this.kv = Array.from({ length: config.nLayer }, () => kd.keep(kd.zeros(shape, { device, dtype })));
    this.position = null; // fixed-shape decoding: the position of the next token, int64 [1] on the device
    this.positions = null; // and 0 .. maxLength - 1, to mask the positions not yet filled
    this.padding = null; // and with left-padded rows: each row's padding, int64 [batch]
    this.keyMask = null; // and the keys that are not padding, bool [batch, maxLength]
  }

  /**
   * Fixed-shape decoding (what a CUDA graph of one decode step needs): from now on a one-token
   * forward reads its position from the device tensor `position` (set to `length` here),
   * writes its keys and values there, attends over all maxLength positions with the unfilled
   * ones masked, and advances `position` on the device. `length` is then the caller's to keep.
   * padding (number[] of batch, or null): the left padding of each row, as generation's
   * attentionMask has it; a row's positions then count its tokens only, and its padding is masked.
   */
  beginFixedShapeDecoding(padding = null) {
    const device = this.kv[0].device;
    if (!this.position) {
      this.position = kd.keep(kd.zeros([1], { dtype: 'int64', device }));
      this.positions = kd.keep(kd.arange(this.maxLength, { device }));
    }
    if (padding && !this.padding) {
      if (!Array.isArray(padding) || padding.length !== this.batch || !padding.every((n) => Number.isInteger(n) && n >= 0 && n < this.maxLength)) {
        throw new RangeError(`KVCache: padding must be ${this.batch} integers in [0, maxLength), got ${padding}`);
      }
      this.padding = kd.keep(kd.tensor(padding.map(BigInt), { dtype: 'int64', device }));
      this.keyMask = kd.keep(kd.inferenceMode(() => this.positions.ge(this.padding.view(this.batch, 1))));
    }
    kd.noGrad(() => this.position.fill_(this.length));
  }

  /** Whether beginFixedShapeDecoding() was called. */
  get fixedShape() { return this.position !== null; }

  /**
   * The keys a fixed-shape step may attend to: (1 or batch, 1, 1, maxLength) bool, true up to
   * `position` (and not padding).
   */
  fixedShapeMask() {
    const upTo = this.positions.le(this.position);
    if (!this.keyMask) return upTo.view(1, 1, 1, this.maxLength);
    return this.keyMask.logicalAnd(upTo).view(this.batch, 1, 1, this.maxLength);
  }

  /** The position of a fixed-shape step's token: [1], or (batch, 1) counting each row's tokens only. */
  fixedShapePosition() { return this.padding ? this.position.sub(this.padding).view(this.batch, 1) : this.position; }

  /**
   * Writes kv [2, batch, nHead, T, headDim] (new keys, then values) at the current length of
   * layer i; returns the filled keys and values, each [batch, nHead, length + T, headDim]
   * (in fixed-shape decoding: at `position`, and all maxLength positions).
   */
  update(i, kv) {
    if (this.position) {
      this.kv[i].indexCopy_(3, this.position, kv);
      return [this.kv[i].select(0, 0), this.kv[i].select(0, 1)];
    }
    const start = this.length;
    const T = kv.shape[3];
    this.kv[i].narrow(3, start, T).copy_(kv);
    const filled = this.kv[i].narrow(3, 0, start + T);
    return [filled.select(0, 0), filled.select(0, 1)];
  }

  /** Frees the buffers. */
  dispose() {
    for (const t of [...this.kv, this.position, this.positions, this.padding, this.keyMask]) if (t) t.dispose();
    this.kv = [];
    this.position = null;
    this.positions = null;
    this.padding = null;
    this.keyMask = null;
  }
}

/** Causal multi-head self-attention (GPT2Attention): c_attn packs q, k and v; c_proj projects back. */
class GPT2Attention extends nn.Module {
  constructor(config) {
    super();
    this.nHead = config.nHead;
    this.nEmbd = config.nEmbd;
    this.c_attn = new Conv1D(config.nEmbd, 3 * config.nEmbd);
    this.c_proj = new Conv1D(config.nEmbd, config.nEmbd);
  }

  /**
   * x (B, T, C); bias: an additive (B, 1, T, past + T) mask, or a boolean one broadcasting to it,
   * that replaces the causal one, or null.
   */
  forward(x, cache = null, layer = 0, bias = null) {
    const [B, T, C] = x.shape;
    const H = this.nHead;
    const qkv = this.c_attn(x).view(B, T, 3, H, C / H).permute(2, 0, 3, 1, 4); // (3, B, H, T, hd)
    const q = qkv.select(0, 0);
    const past = cache ? cache.length : 0;
    const [k, v] = cache ? cache.update(layer, qkv.narrow(0, 1, 2)) : [qkv.select(0, 1), qkv.select(0, 2)];
    let y;
    if (bias) {
      y = F.scaledDotProductAttention(q, k, v, bias);
    } else if (T === 1) {
      y = F.scaledDotProductAttention(q, k, v); // one new position sees every cached one
    } else if (past === 0) {
      y = F.scaledDotProductAttention(q, k, v, null, 0, true);
    } else { // several new positions after a filled cache: query i sees keys 0 .. past + i
      const rows = kd.arange(past, past + T, { device: x.device }).unsqueeze(-1);
      const mask = kd.arange(past + T, { device: x.device }).le(rows);
      y = F.scaledDotProductAttention(q, k, v, mask);
    }
    return this.c_proj(y.transpose(1, 2).reshape(B, T, C));
  }
}

/** The feed-forward block (GPT2MLP): c_fc to 4 * nEmbd, tanh-approximated GELU, c_proj back. */
class GPT2MLP extends nn.Module {
  constructor(config) {
    super();
    this.c_fc = new Conv1D(config.nEmbd, 4 * config.nEmbd);
    this.c_proj = new Conv1D(4 * config.nEmbd, config.nEmbd);
  }

  forward(x) { return this.c_proj(F.gelu(this.c_fc(x), { approximate: 'tanh' })); }
}

/** One pre-LayerNorm block (GPT2Block): x + attn(ln_1(x)), then x + mlp(ln_2(x)). */
class GPT2Block extends nn.Module {
  constructor(config) {
    super();
    this.ln_1 = new nn.LayerNorm(config.nEmbd, { eps: config.layerNormEpsilon });
    this.attn = new GPT2Attention(config);
    this.ln_2 = new nn.LayerNorm(config.nEmbd, { eps: config.layerNormEpsilon });
    this.mlp = new GPT2MLP(config);
  }

  forward(x, cache = null, layer = 0, bias = null) {
    x = x.add(this.attn(this.ln_1(x), cache, layer, bias));
    return x.add(this.mlp(this.ln_2(x)));
  }
}

/**
 * The transformer (GPT2Model): forward(inputIds int64 (B, T), cache?, { attentionMask }) -> hidden
 * states (B, T, nEmbd). attentionMask (B, past + T), 1 for tokens and 0 for padding (left padding
 * for prompts of different lengths), as Hugging Face's: positions count only the tokens
 * (cumsum(mask) - 1), and padded keys get the float32 minimum added to their scores, so no row of
 * the softmax is empty.
 */
class GPT2Model extends nn.Module {
  constructor(config) {
    super();
    this.config = config;
    this.wte = new nn.Embedding(config.vocabSize, config.nEmbd);
    this.wpe = new nn.Embedding(config.nPositions, config.nEmbd);
    this.h = new nn.ModuleList(Array.from({ length: config.nLayer }, () => new GPT2Block(config)));
    this.ln_f = new nn.LayerNorm(config.nEmbd, { eps: config.layerNormEpsilon });
    nn.init.normal_(this.wte.weight, 0, 0.02);
    nn.init.normal_(this.wpe.weight, 0, 0.01);
  }

  forward(inputIds, cache = null, { attentionMask = null } = {}) {
    if (inputIds.ndim !== 2) throw new RangeError(`GPT2Model: inputIds must be (batch, length), got shape [${inputIds.shape}]`);
    const [B, T] = inputIds.shape;
    const past = cache ? cache.length : 0;
    if (past + T > this.config.nPositions) {
      throw new RangeError(`GPT2Model: ${past + T} positions exceed nPositions=${this.config.nPositions}`);
    }
    if (cache) {
      if (cache.batch !== B) throw new RangeError(`GPT2Model: the cache holds batch ${cache.batch}, inputIds has batch ${B}`);
      if (past + T > cache.maxLength) throw new RangeError(`GPT2Model: ${past + T} positions exceed the cache's maxLength=${cache.maxLength}`);
    }
    const device = inputIds.device;
    let pos;
    let bias = null;
    if (cache && cache.fixedShape) { // one token at the device-held position, see KVCache
      if (T !== 1 || attentionMask !== null) throw new RangeError('GPT2Model: fixed-shape decoding takes one token per row and no attentionMask');
      let x = this.wte(inputIds).add(this.wpe(cache.fixedShapePosition()));
      const mask = cache.fixedShapeMask();
      for (let i = 0; i < this.h.length; i++) x = this.h[i](x, cache, i, mask);
      cache.position.add_(1);
      return this.ln_f(x);
    }
    if (attentionMask !== null) {
      const ms = attentionMask instanceof kd.Tensor ? attentionMask.shape : null;
      if (!ms || ms.length !== 2 || ms[0] !== B || ms[1] !== past + T) {
        throw new RangeError(`GPT2Model: attentionMask must be a (batch, past + length) = [${B}, ${past + T}] tensor`);
      }
      const keep = attentionMask.ne(0); // (B, S)
      pos = keep.cumsum(-1).sub(1).clamp(0).narrow(1, past, T); // (B, T)
      const causal = kd.arange(past + T, { device }).le(kd.arange(past, past + T, { device }).unsqueeze(-1)); // (T, S)
      const allowed = causal.logicalAnd(keep.view(B, 1, 1, past + T)); // (B, 1, T, S)
      bias = kd.where(allowed, 0, -3.4028234663852886e38).to(this.wte.weight.dtype);
    } else {
      pos = kd.arange(past, past + T, { device });
    }
    let x = this.wte(inputIds).add(this.wpe(pos));
    for (let i = 0; i < this.h.length; i++) x = this.h[i](x, cache, i, bias);
    if (cache) cache.length += T;
    return this.ln_f(x);
  }
}

// Buffers and tied copies a Hugging Face GPT-2 state dict may hold that this model does not keep:
// the causal-mask buffers of older transformers versions, and lm_head.weight (tied to wte).
const HF_SKIPPED = /(^|\.)attn\.(bias|masked_bias)$|^lm_head\.weight$/;

/**
 * GPT2LMHeadModel: forward(inputIds, cache?) -> logits (B, T, vocabSize). The head shares its
 * weight with transformer.wte (tied, as Hugging Face's GPT-2), so the state dict holds it once.
 */
class GPT2LMHeadModel extends nn.Module {
  constructor(config = {}) {
    super();
    this.config = gpt2Config(config);
    this.transformer = new GPT2Model(this.config);
  }

  /**
   * Logits of every position, or only of the last one with { lastOnly: true } (B, 1, vocabSize);
   * attentionMask as GPT2Model's.
   */
  forward(inputIds, cache = null, { lastOnly = false, attentionMask = null } = {}) {
    let h = this.transformer(inputIds, cache, { attentionMask });
    if (lastOnly && h.shape[1] > 1) h = h.narrow(1, h.shape[1] - 1, 1);
    return F.linear(h, this.transformer.wte.weight);
  }

  /** A KVCache for this model: batch rows, room for maxLength positions, on the model's device and dtype. */
  makeCache(batch, maxLength = this.config.nPositions) {
    const w = this.transformer.wte.weight;
    return new KVCache(this.config, batch, maxLength, { device: w.device, dtype: w.dtype });
  }

  /** The prompt and up to maxNewTokens generated tokens (see ./generation.js for the options). */
  generate(inputIds, options) { return generation.generate(this, inputIds, options); }

  /** The generated tokens as an async iterator, one per step (see ./generation.js). */
  stream(inputIds, options) { return generation.stream(this, inputIds, options); }

  /**
   * Loads a Hugging Face GPT-2 state dict (GPT2LMHeadModel's names with `transformer.`, or
   * GPT2Model's without it, as the Hub's model.safetensors has them); attention-mask buffers and
   * the tied lm_head.weight are skipped. Strict otherwise: missing or unknown names throw.
   */
  loadHuggingFace(stateDict) {
    const sd = {};
    for (const [name, t] of Object.entries(stateDict)) {
      if (HF_SKIPPED.test(name)) continue;
      sd[name.startsWith('transformer.') ? name : `transformer.${name}`] = t;
    }
    this.loadStateDict(sd);
    return this;
  }

  /**
   * A model from a Hugging Face GPT-2 folder: its config.json and model.safetensors (as
   * save_pretrained writes them and the Hub serves them).
   */
  static fromPretrained(dir, options = {}) { return fromPretrainedDir(GPT2LMHeadModel, configFromHuggingFace, dir, options); }

  /** A model built from the config and loaded from a Hugging Face GPT-2 safetensors file. */
  static fromSafetensors(path, config = {}, options = {}) { return fromHuggingFace(GPT2LMHeadModel, path, config, options); }

}

module.exports = { gpt2Config, configFromHuggingFace, Conv1D, KVCache, GPT2Attention, GPT2MLP, GPT2Block, GPT2Model, GPT2LMHeadModel };
