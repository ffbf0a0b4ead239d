// model.d.ts - types of examples/gpt2/model.js: the GPT-2 decoder (Hugging Face's names), its
// key/value cache and generation entry points.
import * as kd from 'kindling';
import type { Tensor, DTypeLike, DeviceLike } from 'kindling';
import type { GenerateOptions } from './generation';

/** GPT-2's hyperparameters (Hugging Face's GPT2Config names, camelCased). */
export interface GPT2Config {
  vocabSize: number;
  nPositions: number;
  nEmbd: number;
  nLayer: number;
  nHead: number;
  layerNormEpsilon: number;
}

/** The config with GPT-2 small's defaults (50257, 1024, 768, 12, 12, 1e-5) for what is not given. */
export function gpt2Config(options?: Partial<GPT2Config>): GPT2Config;

/** The config of a Hugging Face GPT-2 config.json object (throws for variants this model does not implement). */
export function configFromHuggingFace(json: Record<string, unknown>): GPT2Config;

/** Hugging Face's Conv1D: y = x @ weight + bias, weight [in, out]. */
export class Conv1D extends kd.nn.Module {
  constructor(nx: number, nf: number);
  weight: kd.nn.Parameter;
  bias: kd.nn.Parameter;
  forward(x: Tensor): Tensor;
}

/** Per-layer key/value buffers [2, batch, nHead, maxLength, headDim] (keys, then values), allocated once. */
export class KVCache {
  constructor(config: GPT2Config, batch: number, maxLength: number, options?: { device?: DeviceLike; dtype?: DTypeLike });
  readonly batch: number;
  readonly maxLength: number;
  /** Positions filled so far. */
  length: number;
  kv: Tensor[];
  /** Fixed-shape decoding: the next token's position on the device (int64 [1]), or null. */
  position: Tensor | null;
  /** 0 .. maxLength - 1 on the device while decoding with fixed shapes, or null. */
  positions: Tensor | null;
  /** Writes kv [2, batch, nHead, T, headDim] after the filled positions of layer i; returns the filled keys and values. */
  update(i: number, kv: Tensor): [Tensor, Tensor];
  /**
   * Switches to fixed-shape decoding (one token per forward at the device-held position, all
   * maxLength positions attended with the unfilled ones masked; what a CUDA graph captures) and
   * sets the position to length; padding: each row's left padding (number[]), for padded prompts.
   */
  beginFixedShapeDecoding(padding?: number[] | null): void;
  readonly fixedShape: boolean;
  /** Left padding of each row (int64 [batch]) in fixed-shape decoding of padded rows, or null. */
  padding: Tensor | null;
  /** The keys that are not padding (bool [batch, maxLength]), or null. */
  keyMask: Tensor | null;
  /** (1 or batch, 1, 1, maxLength) bool: the positions a fixed-shape step attends to. */
  fixedShapeMask(): Tensor;
  /** The position of a fixed-shape step's token: [1], or (batch, 1) counting each row's tokens only. */
  fixedShapePosition(): Tensor;
  dispose(): void;
}

export class GPT2Attention extends kd.nn.Module {
  constructor(config: GPT2Config);
  c_attn: Conv1D;
  c_proj: Conv1D;
  /** bias: an additive (B, 1, T, past + T) mask replacing the causal one. */
  forward(x: Tensor, cache?: KVCache | null, layer?: number, bias?: Tensor | null): Tensor;
}

export class GPT2MLP extends kd.nn.Module {
  constructor(config: GPT2Config);
  c_fc: Conv1D;
  c_proj: Conv1D;
  forward(x: Tensor): Tensor;
}

export class GPT2Block extends kd.nn.Module {
  constructor(config: GPT2Config);
  ln_1: kd.nn.LayerNorm;
  attn: GPT2Attention;
  ln_2: kd.nn.LayerNorm;
  mlp: GPT2MLP;
  forward(x: Tensor, cache?: KVCache | null, layer?: number, bias?: Tensor | null): Tensor;
}

/**
 * The transformer: inputIds int64 (B, T) -> hidden states (B, T, nEmbd). attentionMask (B, past + T):
 * 1 for tokens, 0 for (left) padding.
 */
export class GPT2Model extends kd.nn.Module {
  constructor(config: GPT2Config);
  config: GPT2Config;
  wte: kd.nn.Embedding;
  wpe: kd.nn.Embedding;
  h: kd.nn.ModuleList & GPT2Block[];
  ln_f: kd.nn.LayerNorm;
  forward(inputIds: Tensor, cache?: KVCache | null, options?: { attentionMask?: Tensor | null }): Tensor;
}

export interface GPT2ForwardOptions {
  /** Logits of the last position only (B, 1, vocabSize). */
  lastOnly?: boolean;
  /** (B, past + T): 1 for tokens, 0 for (left) padding. */
  attentionMask?: Tensor | null;
}

/** GPT-2 with its output head tied to transformer.wte: inputIds (B, T) -> logits (B, T, vocabSize). */
export class GPT2LMHeadModel extends kd.nn.Module {
  constructor(config?: Partial<GPT2Config>);
  config: GPT2Config;
  transformer: GPT2Model;
  forward(inputIds: Tensor, cache?: KVCache | null, options?: GPT2ForwardOptions): Tensor;
  /** A cache on the model's device and dtype (maxLength defaults to nPositions). */
  makeCache(batch: number, maxLength?: number): KVCache;
  /** The prompt followed by the generated tokens (number[][] for several prompt rows, which may differ in length). */
  generate(inputIds: number[] | Tensor, options?: GenerateOptions): Promise<number[]>;
  generate(inputIds: number[][], options?: GenerateOptions): Promise<number[][]>;
  /** The generated tokens one step at a time (number[] per step for several prompt rows). */
  stream(inputIds: number[] | Tensor, options?: GenerateOptions): AsyncGenerator<number, void, undefined>;
  stream(inputIds: number[][], options?: GenerateOptions): AsyncGenerator<number[], void, undefined>;
  /** Loads a Hugging Face GPT-2 state dict (with or without the `transformer.` prefix). */
  loadHuggingFace(stateDict: Record<string, Tensor>): this;
  /** A model from a Hugging Face GPT-2 folder (config.json and model.safetensors). */
  static fromPretrained(dir: string, options?: { device?: DeviceLike }): GPT2LMHeadModel;
  /** Builds the model and loads a Hugging Face GPT-2 safetensors file. */
  static fromSafetensors(path: string, config?: Partial<GPT2Config>, options?: { device?: DeviceLike }): GPT2LMHeadModel;
}
export interface GPT2LMHeadModel { (inputIds: Tensor, cache?: KVCache | null, options?: GPT2ForwardOptions): Tensor }
