// model.js - a BERT encoder (Hugging Face's BertModel: architecture and parameter names) for
// inference: embeddings (word + position + token type, LayerNorm), post-LayerNorm encoder layers
// (self-attention through kd.nn.functional.scaledDotProductAttention, exact GELU feed-forward) and
// the tanh pooler over the first token. A Hugging Face BERT safetensors checkpoint loads by name
// with loadHuggingFace() (BertModel's names, or BertFor*'s under `bert.`). The LayerNorms are
// properties named layerNorm (state-dict key layer_norm, as module keys are snake_case) and
// Hugging Face's `LayerNorm` keys map onto them.
'use strict';

const kd = require('../..');
const { fromHuggingFace, fromPretrainedDir } = require('../hf_checkpoint');

const nn = kd.nn;
const F = kd.nn.functional;

/** BERT's hyperparameters (Hugging Face's BertConfig names, camelCased); defaults are BERT-base. */
function bertConfig(options = {}) {
  const c = {
    vocabSize: 30522, hiddenSize: 768, numHiddenLayers: 12, numAttentionHeads: 12, intermediateSize: 3072,
    maxPositionEmbeddings: 512, typeVocabSize: 2, layerNormEps: 1e-12,
    ...options,
  };
  for (const k of ['vocabSize', 'hiddenSize', 'numHiddenLayers', 'numAttentionHeads', 'intermediateSize', 'maxPositionEmbeddings', 'typeVocabSize']) {
    if (!Number.isInteger(c[k]) || c[k] <= 0) throw new RangeError(`BERT config: ${k} must be a positive integer, got ${c[k]}`);
  }
  if (c.hiddenSize % c.numAttentionHeads !== 0) {
    throw new RangeError(`BERT config: hiddenSize (${c.hiddenSize}) must be divisible by numAttentionHeads (${c.numAttentionHeads})`);
  }
  return c;
}

/**
 * The config of a Hugging Face BERT config.json (its object). Throws for what this model does not
 * implement (another hidden_act than gelu, relative position embeddings).
 */
function configFromHuggingFace(json) {
  if (json === null || typeof json !== 'object') throw new TypeError('configFromHuggingFace: expected the object of a config.json');
  const unsupported = [['hidden_act', 'gelu'], ['position_embedding_type', 'absolute']].filter(([k, ok]) => k in json && json[k] !== ok);
  if (unsupported.length) {
    throw new RangeError(`BERT config: unsupported ${unsupported.map(([k]) => `${k}=${JSON.stringify(json[k])}`).join(', ')}`);
  }
  const c = {};
  for (const ours of Object.keys(bertConfig())) {
    const hf = ours.replace(/[A-Z]/g, (m) => `_${m.toLowerCase()}`);
    if (json[hf] !== undefined) c[ours] = json[hf];
  }
  return bertConfig(c);
}

/** Word + position + token type embeddings, then LayerNorm (BertEmbeddings). */
class BertEmbeddings extends nn.Module {
  constructor(c) {
    super();
    this.word_embeddings = new nn.Embedding(c.vocabSize, c.hiddenSize);
    this.position_embeddings = new nn.Embedding(c.maxPositionEmbeddings, c.hiddenSize);
    this.token_type_embeddings = new nn.Embedding(c.typeVocabSize, c.hiddenSize);
    this.layerNorm = new nn.LayerNorm(c.hiddenSize, { eps: c.layerNormEps });
  }

  forward(inputIds, tokenTypeIds) {
    const T = inputIds.shape[1];
    const pos = kd.arange(T, { device: inputIds.device });
    const x = this.word_embeddings(inputIds).add(this.position_embeddings(pos)).add(this.token_type_embeddings(tokenTypeIds));
    return this.layerNorm(x);
  }
}

/** Multi-head self-attention (BertSelfAttention): separate query, key and value projections. */
class BertSelfAttention extends nn.Module {
  constructor(c) {
    super();
    this.nHead = c.numAttentionHeads;
    this.query = new nn.Linear(c.hiddenSize, c.hiddenSize);
    this.key = new nn.Linear(c.hiddenSize, c.hiddenSize);
    this.value = new nn.Linear(c.hiddenSize, c.hiddenSize);
  }

  /** x (B, T, C), mask: additive (B, 1, 1, T) or null -> (B, T, C). */
  forward(x, mask) {
    const [B, T, C] = x.shape;
    const heads = (t) => t.view(B, T, this.nHead, C / this.nHead).transpose(1, 2);
    const y = F.scaledDotProductAttention(heads(this.query(x)), heads(this.key(x)), heads(this.value(x)), mask);
    return y.transpose(1, 2).reshape(B, T, C);
  }
}

/** A dense projection, then LayerNorm of it plus the residual (BertSelfOutput, BertOutput). */
class BertResidualOutput extends nn.Module {
  constructor(inSize, c) {
    super();
    this.dense = new nn.Linear(inSize, c.hiddenSize);
    this.layerNorm = new nn.LayerNorm(c.hiddenSize, { eps: c.layerNormEps });
  }

  forward(h, residual) { return this.layerNorm(this.dense(h).add(residual)); }
}

class BertAttention extends nn.Module {
  constructor(c) {
    super();
    this.self = new BertSelfAttention(c);
    this.output = new BertResidualOutput(c.hiddenSize, c);
  }

  forward(x, mask) { return this.output(this.self(x, mask), x); }
}

class BertIntermediate extends nn.Module {
  constructor(c) {
    super();
    this.dense = new nn.Linear(c.hiddenSize, c.intermediateSize);
  }

  forward(x) { return F.gelu(this.dense(x)); }
}

/** One post-LayerNorm encoder layer (BertLayer): attention, then the GELU feed-forward. */
class BertLayer extends nn.Module {
  constructor(c) {
    super();
    this.attention = new BertAttention(c);
    this.intermediate = new BertIntermediate(c);
    this.output = new BertResidualOutput(c.intermediateSize, c);
  }

  forward(x, mask) {
    const a = this.attention(x, mask);
    return this.output(this.intermediate(a), a);
  }
}

class BertEncoder extends nn.Module {
  constructor(c) {
    super();
    this.layer = new nn.ModuleList(Array.from({ length: c.numHiddenLayers }, () => new BertLayer(c)));
  }

  forward(x, mask) {
    for (const l of this.layer) x = l(x, mask);
    return x;
  }
}

/** tanh(dense(first token's hidden state)) (BertPooler). */
class BertPooler extends nn.Module {
  constructor(c) {
    super();
    this.dense = new nn.Linear(c.hiddenSize, c.hiddenSize);
  }

  forward(h) { return kd.tanh(this.dense(h.select(1, 0))); }
}

// Entries of Hugging Face BERT state dicts this model does not keep: the position_ids buffer and
// the pretraining heads of BertForPreTraining / BertForMaskedLM checkpoints.
const HF_SKIPPED = /(^|\.)embeddings\.position_ids$|^cls\./;

/**
 * BertModel: forward(inputIds int64 (B, T), { attentionMask, tokenTypeIds }) ->
 * { lastHiddenState (B, T, hiddenSize), poolerOutput (B, hiddenSize) }. attentionMask (B, T) holds
 * 1 for tokens to attend to and 0 for padding; Hugging Face adds the float32 minimum to the
 * scores of masked keys, and so does this model.
 */
class BertModel extends nn.Module {
  constructor(config = {}) {
    super();
    this.config = bertConfig(config);
    this.embeddings = new BertEmbeddings(this.config);
    this.encoder = new BertEncoder(this.config);
    this.pooler = new BertPooler(this.config);
    for (const [name, p] of this.namedParameters()) { // BERT's initialisation: N(0, 0.02), zero biases
      if (name.endsWith('layer_norm.weight')) nn.init.ones_(p);
      else if (name.endsWith('.bias')) nn.init.zeros_(p);
      else nn.init.normal_(p, 0, 0.02);
    }
  }

  forward(inputIds, { attentionMask = null, tokenTypeIds = null } = {}) {
    if (!(inputIds instanceof kd.Tensor) || inputIds.ndim !== 2) throw new RangeError('BertModel: inputIds must be an int tensor (batch, length)');
    const [B, T] = inputIds.shape;
    if (T > this.config.maxPositionEmbeddings) {
      throw new RangeError(`BertModel: length ${T} exceeds maxPositionEmbeddings=${this.config.maxPositionEmbeddings}`);
    }
    for (const [name, t] of [['attentionMask', attentionMask], ['tokenTypeIds', tokenTypeIds]]) {
      if (t !== null && !(t instanceof kd.Tensor && t.shape.length === 2 && t.shape[0] === B && t.shape[1] === T)) {
        throw new RangeError(`BertModel: ${name} must be a tensor of inputIds' shape [${B}, ${T}]`);
      }
    }
    const types = tokenTypeIds ?? kd.zeros([B, T], { dtype: 'int64', device: inputIds.device });
    let mask = null;
    if (attentionMask !== null) { // (1 - mask) * finfo(float32).min, as (B, 1, 1, T)
      const dtype = this.embeddings.word_embeddings.weight.dtype;
      mask = kd.ones([], { dtype, device: inputIds.device }).sub(attentionMask.to(dtype)).mul(-3.4028234663852886e38).view(B, 1, 1, T);
    }
    const h = this.encoder(this.embeddings(inputIds, types), mask);
    return { lastHiddenState: h, poolerOutput: this.pooler(h) };
  }

  /**
   * Loads a Hugging Face BERT state dict: BertModel's names, or BertFor*'s under `bert.` (their
   * heads are skipped), `LayerNorm` (as layer_norm) and its old gamma/beta names. Strict otherwise.
   */
  loadHuggingFace(stateDict) {
    const sd = {};
    for (const [name0, t] of Object.entries(stateDict)) {
      const name = name0.replace(/^bert\./, '').replace(/LayerNorm\.gamma$/, 'LayerNorm.weight').replace(/LayerNorm\.beta$/, 'LayerNorm.bias')
        .replace(/\.LayerNorm\./, '.layer_norm.');
      if (!HF_SKIPPED.test(name)) sd[name] = t;
    }
    this.loadStateDict(sd);
    return this;
  }

  /** A model from a Hugging Face BERT folder: its config.json and model.safetensors. */
  static fromPretrained(dir, options = {}) { return fromPretrainedDir(BertModel, configFromHuggingFace, dir, options); }

  /** A model built from the config and loaded from a Hugging Face BERT safetensors file. */
  static fromSafetensors(path, config = {}, options = {}) { return fromHuggingFace(BertModel, path, config, options); }

}

module.exports = { bertConfig, configFromHuggingFace, BertModel, BertEmbeddings, BertSelfAttention, BertLayer, BertEncoder, BertPooler };
