// data.d.ts - kd.data: datasets, DataLoader, default collation, randomSplit (lib/data/).
import type { Tensor } from './index';

/** Seeded random source of shuffles and splits: xoshiro128** seeded by SplitMix32, Fisher-Yates permutations. */
export declare class Generator {
  constructor(seed?: number | bigint);
  /** Resets the sequence to `seed`'s start. */
  manualSeed(seed: number | bigint): this;
  initialSeed(): number | bigint;
  getState(): number[];
  setState(state: number[]): this;
  /** The next 32 random bits as an unsigned integer. */
  nextUint32(): number;
  /** A uniform integer in [0, n). */
  below(n: number): number;
  /** A random permutation of 0..n-1 (n at most 2^32: more is KD_NOT_SUPPORTED). */
  randperm(n: number): number[];
  /** randperm(n) as a Uint32Array (4 bytes an index). */
  permutation(n: number): Uint32Array;
}

/** A map-style dataset: `length` samples, `get(i)` returns one (or a Promise of one). */
export declare abstract class Dataset<T = unknown> {
  get(i: number): T | Promise<T>;
  get length(): number;
  /** Optional: the collated batch for these indices at once (DataLoader's fast path). */
  getBatch?(indices: number[]): unknown;
  /**
   * Optional: the CPU tensors whose rows (dim 0) are the samples, as an array or a plain object;
   * the batch for `indices` is then the same array/object of `t.indexSelect(0, indices)`, and
   * DataLoader's `for await` gathers it in the background (see {@link gatherRows}). Used when the
   * dataset has no getBatch of its own.
   */
  rowTensors?(): Tensor[] | Record<string, Tensor>;
}

/** Samples are the i-th rows of each tensor: get(i) -> [t0[i], t1[i], ...]. */
export declare class TensorDataset extends Dataset<Tensor[]> {
  constructor(...tensors: Tensor[]);
  readonly tensors: Tensor[];
  get(i: number): Tensor[];
  /** One indexSelect per tensor. */
  getBatch(indices: number[]): Tensor[];
  /** `tensors`: batches are gathered in the background during `for await`. */
  rowTensors(): Tensor[];
}

/** The samples of `dataset` at `indices`. */
export declare class Subset<T = unknown> extends Dataset<T> {
  constructor(dataset: Dataset<T>, indices: ArrayLike<number>);
  readonly dataset: Dataset<T>;
  readonly indices: number[];
  get(i: number): T | Promise<T>;
}

export interface DataLoaderOptions<B = any> {
  /** Samples per batch (default 1). */
  batchSize?: number;
  /** Shuffle the indices each pass (default false). */
  shuffle?: boolean;
  /** The generator for shuffling (its state advances each pass). */
  generator?: Generator;
  /** Seed of a generator of the loader's own (instead of `generator`). */
  seed?: number | bigint;
  /** Drop the last, smaller batch (default false). */
  dropLast?: boolean;
  /** Samples -> batch (default: defaultCollate). */
  collate?: (samples: any[]) => B;
  /**
   * Batches assembled ahead during `for await` (default 2; 0 turns prefetch off). With row tensors
   * on the CPU (TensorDataset, a Subset of one, `rowTensors()`) and the default collate, batches are
   * gathered on the libuv thread pool, overlapping the loop body's compute; otherwise they are built
   * on the main thread in setImmediate tasks (overlapping I/O and awaited GPU work only).
   */
  prefetch?: number;
}

/**
 * Batches of a dataset: `for await (const b of loader)` (with prefetch) or sync `for...of`.
 * Disposing the dataset's tensors during a `for await` epoch makes the next batch reject with
 * code KD_DISPOSED (gathers in flight keep their own references).
 */
export declare class DataLoader<B = any> implements Iterable<B>, AsyncIterable<B> {
  constructor(dataset: Dataset<any> | { get(i: number): unknown; readonly length: number }, options?: DataLoaderOptions<B>);
  readonly dataset: Dataset<any>;
  readonly batchSize: number;
  readonly shuffle: boolean;
  readonly dropLast: boolean;
  readonly prefetch: number;
  /** The number of batches in one pass. */
  readonly length: number;
  [Symbol.iterator](): Iterator<B>;
  [Symbol.asyncIterator](): AsyncIterator<B>;
}

/** PyTorch's default_collate: stacks tensors, numbers -> tensors, recurses into arrays/objects/Maps. */
export declare function defaultCollate(samples: unknown[]): any;

export interface RandomSplitOptions {
  seed?: number | bigint;
  generator?: Generator;
}
/** Non-overlapping random subsets with the given lengths or fractions. */
export declare function randomSplit<T>(dataset: Dataset<T>, lengths: number[], options?: RandomSplitOptions): Subset<T>[];

/**
 * The rows `indices` of each tensor (`t.indexSelect(0, indices)`), gathered on the libuv thread
 * pool: the Promise resolves with new contiguous tensors that never require grad. Sources must be
 * CPU tensors with at least one dim; the gather keeps them alive until it settles, so disposing
 * one meanwhile is safe. Errors (an index out of range, a disposed tensor) reject with a `code`.
 */
export declare function gatherRows(tensors: Tensor[], indices: ArrayLike<number> | Int32Array | BigInt64Array | Float64Array): Promise<Tensor[]>;
