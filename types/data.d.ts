// data.d.ts - kd.data: datasets, samplers, DataLoader (worker threads too), collation, randomSplit, the PyTorch-compatible Generator (lib/data/).
import type { Tensor } from './index';

/**
 * PyTorch's CPU generator (mt19937) in JS: seeded alike, it gives torch.Generator's numbers and
 * the orders of torch.randperm / randint / multinomial, so samplers, shuffles and randomSplit
 * match PyTorch 1.13's for the same seed.
 */
export declare class Generator {
  /** Seeded with `seed` (default PyTorch's 67280421310721); negative seeds wrap to 64 bits. */
  constructor(seed?: number | bigint);
  /** Resets the sequence to `seed`'s start (torch's manual_seed). */
  manualSeed(seed: number | bigint): this;
  /** Seeds from a non-deterministic source; returns the seed. */
  seed(): number | bigint;
  initialSeed(): number | bigint;
  getState(): GeneratorState;
  setState(state: GeneratorState): this;
  /** The next 32 random bits as an unsigned integer. */
  random(): number;
  /** Same as random(). */
  nextUint32(): number;
  /** The next 64 random bits: (random() << 32) | random(). */
  random64(): bigint;
  /** A double in [0, 1) from 53 random bits. */
  uniform(): number;
  /** An Exp(1) variate: -log(1 - uniform()). */
  exponential(): number;
  /** An integer in [0, n), as torch.randint(n) draws it. */
  below(n: number): number;
  /** torch.randint(high, [size], generator=g).tolist(). */
  randint(high: number, size: number): number[];
  /** torch.randperm(n, generator=g).tolist() (n at most 2^32: more is KD_NOT_SUPPORTED). */
  randperm(n: number): number[];
  /** randperm(n) as a Uint32Array (4 bytes an index). */
  permutation(n: number): Uint32Array;
  /** torch.multinomial(float64 weights, numSamples, replacement, generator=g).tolist(). */
  multinomial(weights: ArrayLike<number>, numSamples: number, replacement?: boolean): number[];
}
export interface GeneratorState { seed: number | bigint; mt: Uint32Array; index: number }

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

/** An iterable-style dataset: subclasses implement [Symbol.iterator]() or [Symbol.asyncIterator](). */
export declare abstract class IterableDataset<T = unknown> extends Dataset<T> {
  [Symbol.iterator]?(): Iterator<T>;
  [Symbol.asyncIterator]?(): AsyncIterator<T>;
}

/** The samples of several map-style datasets, one after the other. */
export declare class ConcatDataset<T = unknown> extends Dataset<T> {
  constructor(datasets: Iterable<Dataset<T> | { get(i: number): T | Promise<T>; readonly length: number }>);
  readonly datasets: Dataset<T>[];
  readonly cumulativeSizes: number[];
  get(i: number): T | Promise<T>;
}

/** The samples of several iterable-style datasets, chained (sync and async). */
export declare class ChainDataset<T = unknown> extends IterableDataset<T> {
  constructor(datasets: Iterable<IterableDataset<T> | Iterable<T> | AsyncIterable<T>>);
  readonly datasets: Array<IterableDataset<T> | Iterable<T> | AsyncIterable<T>>;
  [Symbol.iterator](): Iterator<T>;
  [Symbol.asyncIterator](): AsyncIterator<T>;
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

/** Any iterable of dataset indices (a Sampler, an array, a generator). */
export type IndexIterable = Iterable<number> & { readonly length?: number };

/** The base class of samplers: an iterable of dataset indices with a length. */
export declare abstract class Sampler<I = number> implements Iterable<I> {
  constructor(dataSource?: unknown);
  [Symbol.iterator](): Iterator<I>;
  readonly length?: number;
}
/** 0, 1, ..., dataSource.length - 1. */
export declare class SequentialSampler extends Sampler<number> {
  constructor(dataSource: { readonly length: number });
  readonly length: number;
}
export interface RandomSamplerOptions { replacement?: boolean; numSamples?: number | null; generator?: Generator | null }
/** A permutation per pass (PyTorch's order for a seeded generator); with replacement, independent draws. */
export declare class RandomSampler extends Sampler<number> {
  constructor(dataSource: { readonly length: number }, options?: RandomSamplerOptions);
  constructor(dataSource: { readonly length: number }, replacement?: boolean, numSamples?: number | null, generator?: Generator | null);
  readonly replacement: boolean;
  readonly numSamples: number;
  readonly generator: Generator | null;
  readonly length: number;
}
/** The given indices in a random order. */
export declare class SubsetRandomSampler extends Sampler<number> {
  constructor(indices: ArrayLike<number>, generator?: Generator | null | { generator?: Generator | null });
  readonly indices: ArrayLike<number>;
  readonly length: number;
}
/** numSamples indices drawn with probabilities proportional to weights (torch.multinomial). */
export declare class WeightedRandomSampler extends Sampler<number> {
  constructor(weights: ArrayLike<number> | Tensor, numSamples: number, replacement?: boolean | { replacement?: boolean; generator?: Generator | null }, generator?: Generator | null);
  readonly weights: Float64Array;
  readonly numSamples: number;
  readonly replacement: boolean;
  readonly length: number;
}
/** Arrays of batchSize indices from a sampler (the last smaller unless dropLast). */
export declare class BatchSampler extends Sampler<number[]> {
  constructor(sampler: IndexIterable, batchSize: number, dropLast: boolean);
  constructor(sampler: IndexIterable, options: { batchSize: number; dropLast: boolean });
  readonly sampler: IndexIterable;
  readonly batchSize: number;
  readonly dropLast: boolean;
  readonly length: number;
}

export interface DistributedSamplerOptions {
  /** How many processes share the dataset; required (kindling has no process group to ask). */
  numReplicas?: number;
  /** This process's rank in [0, numReplicas); required. */
  rank?: number;
  /** Shuffle with seed + epoch (default true). */
  shuffle?: boolean;
  /** Default 0; the same in every process. */
  seed?: number | bigint;
  /** Drop the tail that does not divide evenly instead of padding by repeating indices (default false). */
  dropLast?: boolean;
}
/**
 * The share of a dataset's indices that one of numReplicas processes reads (PyTorch's order for
 * seed + epoch). Without numReplicas or rank it throws KD_NO_PROCESS_GROUP.
 */
export declare class DistributedSampler extends Sampler<number> {
  constructor(dataset: { readonly length: number }, options?: DistributedSamplerOptions);
  constructor(dataset: { readonly length: number }, numReplicas?: number | null, rank?: number | null, shuffle?: boolean, seed?: number | bigint, dropLast?: boolean);
  readonly dataset: { readonly length: number };
  readonly numReplicas: number;
  readonly rank: number;
  readonly shuffle: boolean;
  readonly seed: number | bigint;
  readonly dropLast: boolean;
  readonly epoch: number | bigint;
  /** Indices per replica. */
  readonly numSamples: number;
  /** numSamples * numReplicas. */
  readonly totalSize: number;
  readonly length: number;
  /** The epoch whose order the next pass takes. */
  setEpoch(epoch: number | bigint): void;
}

/**
 * What a worker thread can load (JS objects and closures cannot be sent): a module path, a
 * module spec (a factory export is called with `args`; a class is constructed), or, as a
 * dataset, a self-contained factory function (compiled again in the worker with only `kd` and
 * `require` in scope).
 */
export type ModuleSpec = string | { module: string; export?: string; args?: unknown[] };
/** A function a worker can run: a self-contained function (sent as source) or a module spec. */
export type PortableFunction<F> = F | { module: string; export?: string };

export interface DataLoaderOptions<B = any> {
  /** Samples per batch (default 1); null turns auto-batching off (samples go through defaultConvert). */
  batchSize?: number | null;
  /** Shuffle the indices each pass with a RandomSampler (default false). */
  shuffle?: boolean | null;
  /** The indices to load (exclusive with shuffle). */
  sampler?: IndexIterable | null;
  /** Batches of indices (exclusive with batchSize, shuffle, sampler and dropLast). */
  batchSampler?: Iterable<number[]> | null;
  /**
   * Worker threads making batches (default 0: the main thread). With workers the dataset must be
   * a recipe ({@link ModuleSpec}, a factory function, or {@link fromModule}), iteration is
   * `for await` only, and tensors come back as transferred typed arrays. CPU row-tensor datasets
   * (TensorDataset) with the default collate need no threads: they are gathered on the libuv pool.
   */
  numWorkers?: number;
  /** Samples -> batch (default: defaultCollate); with workers, a self-contained function or a module spec. */
  collateFn?: PortableFunction<(samples: any) => B> | null;
  /** The older name of collateFn. */
  collate?: PortableFunction<(samples: any) => B> | null;
  /** Copy batches' CPU tensors into pinned memory (only when CUDA is available; otherwise nothing). */
  pinMemory?: boolean;
  /** Drop the last, smaller batch (default false). */
  dropLast?: boolean;
  /** Seconds to wait for a worker's batch before KD_TIMEOUT (default 0: forever). */
  timeout?: number;
  /** Runs in each worker with its id, after seeding and before loading (self-contained, or a module spec). */
  workerInitFn?: PortableFunction<(workerId: number) => void> | null;
  /** The generator for shuffling and the workers' base seed (its state advances each pass). */
  generator?: Generator | null;
  /** Seed of a generator of the loader's own (instead of `generator`). */
  seed?: number | bigint;
  /** Batches in flight per worker (default 2; only with numWorkers > 0). */
  prefetchFactor?: number;
  /** Keep the worker threads between passes (needs numWorkers > 0; see DataLoader.shutdown). */
  persistentWorkers?: boolean;
  /**
   * numWorkers 0: batches assembled ahead during `for await` (default 2; 0 turns prefetch off).
   * With row tensors on the CPU (TensorDataset, a Subset of one, `rowTensors()`) and the default
   * collate, batches are gathered on the libuv thread pool, overlapping the loop body's compute;
   * otherwise they are built on the main thread in setImmediate tasks.
   */
  prefetch?: number;
}

/**
 * Batches of a dataset: `for await (const b of loader)` (prefetch, worker threads) or sync
 * `for...of` (numWorkers 0). Errors of worker threads reject with "Caught <name> in DataLoader
 * worker <id>." and the worker's stack (`workerStack`, `workerId`); KD_WORKER_EXITED, KD_TIMEOUT.
 */
export declare class DataLoader<B = any> implements Iterable<B>, AsyncIterable<B> {
  constructor(dataset: Dataset<any> | { get(i: number): unknown; readonly length: number } | Iterable<unknown> | AsyncIterable<unknown>
    | ModuleSpec | (() => unknown), options?: DataLoaderOptions<B>);
  readonly dataset: Dataset<any>;
  readonly batchSize: number | null;
  readonly shuffle: boolean;
  readonly dropLast: boolean;
  readonly sampler: IndexIterable | null;
  readonly batchSampler: Iterable<number[]> | null;
  readonly numWorkers: number;
  readonly collateFn: ((samples: any) => B) | { module: string; export?: string };
  readonly pinMemory: boolean;
  readonly timeout: number;
  readonly generator: Generator | null;
  readonly prefetchFactor: number;
  readonly persistentWorkers: boolean;
  readonly prefetch: number;
  /** The number of batches in one pass. */
  readonly length: number;
  /** Terminates persistent worker threads (the next pass starts new ones). */
  shutdown(): Promise<void>;
  [Symbol.iterator](): Iterator<B>;
  [Symbol.asyncIterator](): AsyncIterator<B>;
}

/** PyTorch's default_collate: stacks tensors, numbers -> tensors, recurses into arrays/objects/Maps. */
export declare function defaultCollate(samples: unknown[]): any;
/** PyTorch's default_convert: typed arrays -> tensors, recursively; everything else unchanged. */
export declare function defaultConvert(data: unknown): any;

/** Inside a DataLoader worker thread: which worker this is; null elsewhere. */
export interface WorkerInfo { readonly id: number; readonly numWorkers: number; readonly seed: bigint; readonly dataset: unknown }
export declare function getWorkerInfo(): WorkerInfo | null;

/** The dataset a module makes, loaded here and carrying its recipe so DataLoader workers can load it too. */
export declare function fromModule<T = any>(spec: ModuleSpec): T;

export interface RandomSplitOptions {
  seed?: number | bigint;
  generator?: Generator;
}
/** Non-overlapping random subsets with the given lengths or fractions (torch.utils.data.random_split). */
export declare function randomSplit<T>(dataset: Dataset<T>, lengths: number[], options?: RandomSplitOptions | Generator): Subset<T>[];

/**
 * The rows `indices` of each tensor (`t.indexSelect(0, indices)`), gathered on the libuv thread
 * pool: the Promise resolves with new contiguous tensors that never require grad. Sources must be
 * CPU tensors with at least one dim; the gather keeps them alive until it settles, so disposing
 * one meanwhile is safe. Errors (an index out of range, a disposed tensor) reject with a `code`.
 */
export declare function gatherRows(tensors: Tensor[], indices: ArrayLike<number> | Int32Array | BigInt64Array | Float64Array): Promise<Tensor[]>;
