// model.d.ts - types of examples/bert/model.js: the BERT encoder (Hugging Face's BertModel names).
import * as kd from 'kindling';
import type { Tensor, DeviceLike } from 'kindling';

/** BERT's hyperparameters (Hugging Face's BertConfig names, camelCased). */
export interface BertConfig {
  vocabSize: number;
  hiddenSize: number;
  numHiddenLayers: number;
  numAttentionHeads: number;
  intermediateSize: number;
  maxPositionEmbeddings: number;
  typeVocabSize: number;
  layerNormEps: number;
}

/** The config with BERT-base's defaults (30522, 768, 12, 12, 3072, 512, 2, 1e-12) for what is not given. */
export function bertConfig(options?: Partial<BertConfig>): BertConfig;

/** The config of a Hugging Face BERT config.json object (throws for variants this model does not implement). */
export function configFromHuggingFace(json: Record<string, unknown>): BertConfig;

export interface BertOutput {
  /** (B, T, hiddenSize) */
  lastHiddenState: Tensor;
  /** tanh(dense(first token)), (B, hiddenSize) */
  poolerOutput: Tensor;
}

export interface BertForwardOptions {
  /** (B, T): 1 for tokens to attend to, 0 for padding (default: all 1). */
  attentionMask?: Tensor | null;
  /** (B, T) int64 segment ids (default: all 0). */
  tokenTypeIds?: Tensor | null;
}

export class BertEmbeddings extends kd.nn.Module {
  constructor(config: BertConfig);
  word_embeddings: kd.nn.Embedding;
  position_embeddings: kd.nn.Embedding;
  token_type_embeddings: kd.nn.Embedding;
  layerNorm: kd.nn.LayerNorm;
  forward(inputIds: Tensor, tokenTypeIds: Tensor): Tensor;
}
export class BertSelfAttention extends kd.nn.Module {
  constructor(config: BertConfig);
  query: kd.nn.Linear;
  key: kd.nn.Linear;
  value: kd.nn.Linear;
  forward(x: Tensor, mask: Tensor | null): Tensor;
}
export class BertLayer extends kd.nn.Module {
  constructor(config: BertConfig);
  forward(x: Tensor, mask: Tensor | null): Tensor;
}
export class BertEncoder extends kd.nn.Module {
  constructor(config: BertConfig);
  layer: kd.nn.ModuleList & BertLayer[];
  forward(x: Tensor, mask: Tensor | null): Tensor;
}
export class BertPooler extends kd.nn.Module {
  constructor(config: BertConfig);
  dense: kd.nn.Linear;
  forward(h: Tensor): Tensor;
}

/** BertModel: inputIds int64 (B, T) -> { lastHiddenState, poolerOutput }. */
export class BertModel extends kd.nn.Module {
  constructor(config?: Partial<BertConfig>);
  config: BertConfig;
  embeddings: BertEmbeddings;
  encoder: BertEncoder;
  pooler: BertPooler;
  forward(inputIds: Tensor, options?: BertForwardOptions): BertOutput;
  /** Loads a Hugging Face BERT state dict (BertModel's names or BertFor*'s under `bert.`). */
  loadHuggingFace(stateDict: Record<string, Tensor>): this;
  /** A model from a Hugging Face BERT folder (config.json and model.safetensors). */
  static fromPretrained(dir: string, options?: { device?: DeviceLike }): BertModel;
  /** Builds the model and loads a Hugging Face BERT safetensors file. */
  static fromSafetensors(path: string, config?: Partial<BertConfig>, options?: { device?: DeviceLike }): BertModel;
}
export interface BertModel { (inputIds: Tensor, options?: BertForwardOptions): BertOutput }
