// generation.d.ts - types of examples/gpt2/generation.js: decoding options, generate and stream.
import type { Tensor } from 'kindling';

export interface GenerateOptions {
  /** New tokens to generate (default 20). */
  maxNewTokens?: number;
  /** Divides the logits before sampling (default 1). */
  temperature?: number;
  /** Keep the k most likely tokens (default 0: all). */
  topK?: number;
  /** Keep the smallest set of tokens whose probability reaches p (default 1). */
  topP?: number;
  /** Sample instead of taking the argmax (default false). */
  doSample?: boolean;
  /** Stop once every row has produced this token (default null). */
  eosTokenId?: number | null;
  /** Seed of the sampling generator (default null: a random seed). */
  seed?: number | null;
  /**
   * On CUDA, run each one-token step after the prompt as one replay of a captured CUDA graph
   * (default true; ignored on the CPU).
   */
  cudaGraph?: boolean;
}

/** A model generate/stream can drive: a config, a cache factory, and forward with a cache. */
export interface CausalLM {
  config: { vocabSize: number; nPositions: number };
  training: boolean;
  transformer: { wte: { weight: Tensor } };
  makeCache(batch: number, maxLength: number): { dispose(): void };
  (inputIds: Tensor, cache: unknown, options: { lastOnly: boolean }): Tensor;
  eval(): unknown;
  train(mode?: boolean): unknown;
}

export function stream(model: CausalLM, inputIds: number[] | Tensor, options?: GenerateOptions): AsyncGenerator<number, void, undefined>;
export function stream(model: CausalLM, inputIds: number[][], options?: GenerateOptions): AsyncGenerator<number[], void, undefined>;
export function generate(model: CausalLM, inputIds: number[] | Tensor, options?: GenerateOptions): Promise<number[]>;
export function generate(model: CausalLM, inputIds: number[][], options?: GenerateOptions): Promise<number[][]>;
/** A seeded uniform [0, 1) generator. */
export function seededRandom(seed: number): () => number;
/** The index drawn from probabilities sorted descending, after top-p truncation. */
export function drawTopP(probs: Float32Array | number[], topP: number, rand: () => number): number;
/** The options with their defaults, checked (RangeError or TypeError otherwise). */
export function checkOptions(options: GenerateOptions, vocab: number): Required<GenerateOptions>;
/** What the next tokens of logits (B, vocab) are chosen from: [argmax], or [candidate ids, their probabilities] when sampling. */
export function candidates(logits: Tensor, options: Required<GenerateOptions>): Tensor[];
/** The next token of each of B rows from candidates()' values read to the host. */
export function pickTokens(host: ArrayLike<number | bigint>[], B: number, options: Required<GenerateOptions>, rand: () => number): number[];
