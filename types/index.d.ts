// types/index.d.ts - TypeScript declarations for kindling (hand-written; the op functions and
// Tensor op methods come from ./ops.gen.d.ts, generated from src/ops/oplist/).
/// <reference types="node" />

import type { TensorOpMethods } from './ops.gen';

export * from './ops.gen';
// kd.nn modules, init and utils: added to the `nn` namespace of ./ops.gen (see ./nn.d.ts).
import './nn';
// kd.nn's recurrent layers and kd.nn.utils.rnn (see ./nn_rnn.d.ts).
import './nn_rnn';
// kd.nn.DataParallel, kd.nn.parallel and kd.nn.SyncBatchNorm (see ./nn_parallel.d.ts).
import './nn_parallel';
// kd.multiprocessing and Tensor#shareMemory_ (see ./multiprocessing.d.ts).
import './multiprocessing';
// kd.distributed: rendezvous stores (see ./distributed.d.ts).
import './distributed';
// kd.distributions and kd.broadcastShapes / broadcastTensors / broadcastTo (see ./distributions.d.ts).
export * from './distributions';
// kd.fft: fftfreq, rfftfreq, fftshift, ifftshift (see ./fft.d.ts).
export * from './fft';

/** Element types. float32 is the default for floating-point data. */
export type DType =
  | 'float32' | 'float64' | 'float16' | 'bfloat16'
  | 'int8' | 'uint8' | 'int16' | 'int32' | 'int64' | 'bool';

/**
 * A dtype as accepted by kindling: a DType or one of PyTorch's aliases, `'float'` (float32),
 * `'double'` (float64), `'half'` (float16), `'long'` (int64), `'int'` (int32), `'short'` (int16).
 * `tensor.dtype` always reports the DType name.
 */
export type DTypeLike = DType | 'float' | 'double' | 'half' | 'long' | 'int' | 'short';

/** A device as reported by `tensor.device`: `'cpu'` or `'cuda:<index>'`. */
export type Device = 'cpu' | `cuda:${number}`;

/** A device as accepted by kindling: `'cpu'`, `'cuda'` (the current GPU) or `'cuda:<index>'`. */
export type DeviceLike = Device | 'cuda';

/** What `dataSync()` / `dataAsync()` return: float16 and bfloat16 come back as Float32Array,
 *  int64 as BigInt64Array, bool (and uint8) as Uint8Array of 0/1. */
export type DataArray =
  | Float32Array | Float64Array | Int8Array | Uint8Array | Int16Array | Int32Array | BigInt64Array;

/** Typed arrays `kd.tensor()` accepts (Uint16Array only with dtype float16/bfloat16, as raw bits). */
export type TypedArrayData =
  | Float32Array | Float64Array | Int8Array | Uint8Array | Uint8ClampedArray | Int16Array | Uint16Array
  | Int32Array | BigInt64Array;

/** Nested arrays of numbers or booleans (rectangular), or a single number or boolean. */
export type TensorData = number | boolean | bigint | TypedArrayData | readonly TensorData[];

/** What `arraySync()` / `array()` return: nested arrays (a bare value for a 0-d tensor). */
export type NestedArray = number | boolean | NestedArray[];

/** Options of `kd.tensor()`. */
export interface TensorOptions {
  /** Element type; inferred from the data when left out (see `tensor`). */
  dtype?: DTypeLike | null;
  /** Where the tensor lives; `'cpu'` when left out. */
  device?: DeviceLike | null;
  /** Record operations on this tensor for autograd (floating-point dtypes only); without a dtype,
   *  numbers then give float32 (`kd.tensor(2, {requiresGrad: true})` is `tensor(2., requires_grad=True)`). */
  requiresGrad?: boolean;
}

/** Options of `Tensor#to()`. */
export interface ToOptions {
  dtype?: DTypeLike | null;
  device?: DeviceLike | null;
  /** Copy even when neither dtype nor device changes. Default false. */
  copy?: boolean;
  /** CPU -> CUDA from pinned memory: do not wait for the copy (lib/cuda.js). Default false. */
  nonBlocking?: boolean;
}

/**
 * An n-dimensional array on a device, with PyTorch's semantics (views share storage, in-place
 * ops end with `_`). Tensors hold native memory that the garbage collector cannot see: free
 * them with `dispose()`, `kd.tidy()` or `using`.
 *
 * Create tensors with `kd.tensor()` and the factory functions (`kd.zeros`, `kd.randn`, ...);
 * the constructor is internal.
 */
export declare class Tensor {
  private constructor();
  /** The size of each dim, as a new plain array. */
  readonly shape: number[];
  /** The element type. */
  readonly dtype: DType;
  /** `'cpu'` or `'cuda:<index>'`. */
  readonly device: Device;
  /** The number of dims. */
  readonly ndim: number;
  /** Counter bumped by every in-place op on this tensor's storage. */
  readonly version: number;
  /** True after `dispose()`. */
  readonly isDisposed: boolean;
  /** The dims reversed (`permute(ndim - 1, ..., 0)`): a view, a new handle each time. */
  readonly T: Tensor;
  /** The last two dims swapped (`transpose(-2, -1)`): a view; a 0-d tensor's is itself (a view), a 1-d tensor has none (KD_INVALID_ARGUMENT). */
  readonly mT: Tensor;
  /** The conjugate transpose of a matrix (2-D; 0-d: a view of itself): for kindling's real dtypes the same as `T`. */
  readonly H: Tensor;
  /** The conjugate transpose of the last two dims: for kindling's real dtypes the same as `mT`. */
  readonly mH: Tensor;

  /** The number of elements. */
  numel(): number;
  /** The number of dims (PyTorch's `dim()`). */
  dim(): number;
  /** The shape (PyTorch's `size()`). */
  size(): number[];
  /** The size of one dim; negative dims count from the end. */
  size(dim: number): number;
  /** The strides, in elements. */
  stride(): number[];
  /** The stride of one dim, in elements; negative dims count from the end. */
  stride(dim: number): number;
  /** Offset of the first element in the storage, in elements. */
  storageOffset(): number;
  /** True when the elements are laid out row-major without gaps. */
  isContiguous(): boolean;

  /** A copy of the elements in row-major order (blocks until the data is on the host). */
  dataSync(): DataArray;
  /**
   * A copy of the elements in row-major order, taken at the call: resolved at once for a CPU
   * tensor, when the device-to-host copy lands for a CUDA tensor (never blocking). Rejects
   * (KD_DISPOSED) for a disposed tensor.
   */
  dataAsync(): Promise<DataArray>;
  /**
   * PyTorch's `tensor.data`: a new Tensor sharing this one's storage, outside autograd
   * (`p.data.normal_(0, 0.1)`, `h = h.data`). Assigning (`p.data = t`, PyTorch's set_data) makes
   * this tensor take t's storage, shape and dtype, keeping its autograd state; the device type
   * must match. Not a method: the asynchronous read is `dataAsync()`.
   */
  get data(): Tensor;
  set data(t: Tensor);
  /** The elements as nested arrays; int64 values as numbers, bool as booleans. */
  arraySync(): NestedArray;
  /** The elements as nested arrays. */
  array(): Promise<NestedArray>;
  /** The value of a one-element tensor (a boolean for bool tensors: write `t.item<boolean>()`). */
  item(): number;
  /** The value of a one-element tensor: `t.item<boolean>()` for bool tensors. */
  item<T extends number | boolean>(): T;

  /** This tensor converted to dtype (a view of the same data when nothing changes). */
  to(dtype: DTypeLike, options?: ToOptions): Tensor;
  /** This tensor moved to device. */
  to(device: DeviceLike, options?: ToOptions): Tensor;
  /** This tensor with other's dtype and device. */
  to(other: Tensor, options?: ToOptions): Tensor;
  /** This tensor converted and/or moved: `t.to({dtype: 'float16', device: 'cuda'})`. */
  to(options?: ToOptions): Tensor;
  /** `to('cpu')`. */
  cpu(): Tensor;
  /** `to('cuda')`, or `to('cuda:<index>')`. */
  cuda(index?: number): Tensor;

  /** Frees this tensor's reference to its data now. Safe to call more than once. */
  dispose(): void;
  /** Lets `using t = kd.zeros(3)` dispose `t` at the end of the block. */
  [Symbol.dispose](): void;
  /** PyTorch-style text: `tensor([[1., 2.], [3., 4.]])`. */
  toString(): string;

  // ---- autograd
  /** Whether operations on this tensor are recorded for autograd (settable on leaves). */
  requiresGrad: boolean;
  /** Sets requiresGrad (default true) and returns this tensor. */
  requiresGrad_(requiresGrad?: boolean): this;
  /** The gradient accumulated by backward() (leaves, and non-leaves after retainGrad()). */
  grad: Tensor | null;
  /** The graph node that made this tensor (null for leaves). */
  readonly gradFn: autograd.Node | null;
  /** True for tensors not made by a recorded op (user-created, or requiresGrad false). */
  readonly isLeaf: boolean;
  /** True after retainGrad() on a non-leaf. */
  readonly retainsGrad: boolean;
  /** Keeps .grad of this non-leaf after backward. */
  retainGrad(): void;
  /** A tensor sharing this one's data, cut off from the graph. */
  detach(): Tensor;
  /** Cuts this tensor off from the graph, in place. */
  detach_(): this;
  /** True for tensors made in inference mode (they cannot be saved for backward). */
  isInference(): boolean;
  /** fn(grad) runs when this tensor's gradient is computed; it may return a replacement gradient
   * of the same shape, dtype and device (anything else makes backward throw, as PyTorch does). */
  registerHook(fn: (grad: Tensor) => Tensor | void): { remove(): void };
  /** Computes gradients of this tensor (a scalar, or pass `gradient`) and accumulates them into leaves' .grad. */
  backward(gradient?: Tensor | null, options?: BackwardOptions): void;
  backward(options: BackwardOptions): void;

  /** PyTorch-style indexing (`t[key]`): integers, kd.slice(), null (new axis), '...', index tensors or arrays. */
  index(key: IndexKey | { indices: IndexKey }): Tensor;
  /** `t[key] = values` (or `+=` with accumulate), in place; key as in index(). */
  indexPut_(key: IndexKey, values: Tensor | number | boolean, accumulate?: boolean | { accumulate?: boolean }): this;
  indexPut_(options: { indices: IndexKey; values: Tensor; accumulate?: boolean }): this;
}

/** Options of Tensor#backward and autograd.backward. */
export interface BackwardOptions {
  /** Keep the graph's saved tensors for another backward (default: createGraph). */
  retainGraph?: boolean;
  /** Record the backward pass itself, for higher-order gradients. */
  createGraph?: boolean;
  /** Accumulate only into these tensors' .grad. */
  inputs?: Tensor | readonly Tensor[];
}

/** Runs fn with gradient recording off (sync or async). */
export declare function noGrad<T>(fn: () => T): T;
/** Runs fn with gradient recording on (sync or async). */
export declare function enableGrad<T>(fn: () => T): T;
/** Turns recording on or off outside noGrad/enableGrad scopes. */
export declare function setGradEnabled(on: boolean): void;
/** Whether operations are recorded for autograd now. */
export declare function isGradEnabled(): boolean;
/** Runs fn in inference mode: nothing is recorded and the tensors it makes cannot be saved for backward later. */
export declare function inferenceMode<T>(fn: () => T): T;
/** Whether inference mode is on. */
export declare function isInferenceModeEnabled(): boolean;

export declare namespace autograd {
  /** A node of the autograd graph (a tensor's gradFn). */
  class Node {
    /** PyTorch's name: 'MulBackward0', 'AccumulateGrad', ... */
    readonly name: string;
    /** Where this node's gradients go: [node or null, input slot] per input. */
    readonly nextFunctions: [Node | null, number][];
    /** For AccumulateGrad nodes: the leaf tensor. */
    readonly variable: Tensor | undefined;
    /** True when both objects stand for the same graph node. */
    equals(other: Node): boolean;
  }
  interface GradOptions {
    retainGraph?: boolean;
    createGraph?: boolean;
    /** Return null (instead of throwing) for inputs the outputs do not depend on. */
    allowUnused?: boolean;
  }
  /** Gradients of outputs w.r.t. inputs, returned (not accumulated into .grad). */
  function grad(outputs: Tensor | readonly Tensor[], inputs: Tensor | readonly Tensor[],
    gradOutputs?: Tensor | readonly (Tensor | null)[] | null, options?: GradOptions): (Tensor | null)[];
  /** backward() of several tensors at once. */
  function backward(tensors: Tensor | readonly Tensor[], gradTensors?: Tensor | readonly (Tensor | null)[] | null,
    options?: BackwardOptions): void;
  /** Runs fn with anomaly detection: a NaN produced in backward names the node and its forward call site. */
  function detectAnomaly<T>(fn: () => T): T;
  interface GradcheckOptions { eps?: number; atol?: number; rtol?: number; raiseException?: boolean }
  /** Compares autograd's gradients of fn with float64 finite differences. */
  function gradcheck(fn: (...inputs: any[]) => Tensor | readonly Tensor[], inputs: Tensor | readonly unknown[],
    options?: GradcheckOptions): boolean;
  /** gradcheck of the first derivatives (second-order check). */
  function gradgradcheck(fn: (...inputs: any[]) => Tensor | readonly Tensor[], inputs: Tensor | readonly unknown[],
    gradOutputs?: Tensor | readonly Tensor[] | GradcheckOptions, options?: GradcheckOptions): boolean;
  /** The ctx object of a custom Function. */
  class FunctionCtx {
    /** Per forward argument: whether its gradient is needed. */
    readonly needsInputGrad: boolean[];
    /** Saves tensors for backward (checked against in-place changes when read back). */
    saveForBackward(...tensors: (Tensor | null)[]): void;
    /** The tensors given to saveForBackward (in backward: new Tensors, disposed when it returns;
     * after a backward without retainGraph, reading them is an error). */
    readonly savedTensors: (Tensor | null)[];
    /** Marks outputs that get no gradient. */
    markNonDifferentiable(...tensors: Tensor[]): void;
    /** Pass null (instead of zeros) for outputs that got no gradient. */
    setMaterializeGrads(v: boolean): void;
    [key: string]: unknown;
  }
  /** A differentiable function written in JS: subclass with static forward(ctx, ...args) and
   * static backward(ctx, ...grads), then call Sub.apply(...args). */
  class Function {
    static apply(...args: unknown[]): any;
  }
}

/** A Python-style slice for Tensor#index: `kd.slice(1, null, 2)` is `1::2`. */
export declare class Slice {
  readonly start: number | null;
  readonly stop: number | null;
  readonly step: number | null;
}
/** One item of an index key. */
export type IndexItem = number | Slice | null | '...' | Tensor | readonly number[] | readonly boolean[] | readonly (readonly number[])[];
/** An index key: one item or an array of items. */
export type IndexKey = IndexItem | readonly IndexItem[];
/** A slice start:stop:step (null for a default bound). */
export declare function slice(start?: number | null, stop?: number | null, step?: number | null): Slice;
export interface Tensor extends TensorOpMethods {}
/** Aliases of generated Tensor op methods (lib/index.js). */
export interface Tensor {
  /** `random_` under another name: fills this tensor with random integers (see `random_`). */
  randomInt_: TensorOpMethods['random_'];
}
export interface Tensor {
  /** The n-th derivative of digamma at this tensor: kd.polygamma(n, this). */
  polygamma(n: number): Tensor;
  /** Fills this tensor with value: a number, a boolean, or a 0-d Tensor (PyTorch's fill_.Tensor:
   * a broadcasting copy_ of it, through which value gets its gradient). */
  fill_(value: number | boolean | Tensor, options?: { value?: number | boolean }): this;
  fill_(options: { value: number | boolean }): this;
}
/** PyTorch's Tensor conveniences (lib/tensor_conveniences.js). */
export interface Tensor {
  /** The elements as nested arrays (a number or boolean for a 0-d tensor). */
  tolist(): NestedArray | number | boolean;
  /** view(other.shape). */
  viewAs(other: Tensor): Tensor;
  /** reshape(other.shape). */
  reshapeAs(other: Tensor): Tensor;
  /** This tensor with other's dtype and device (itself when both match). */
  typeAs(other: Tensor): Tensor;
  /** The number of elements, as numel(). */
  nelement(): number;
  /** A 1-D tensor of the elements (a view when possible). */
  ravel(): Tensor;
  /** True for a tensor on a CUDA device. */
  readonly isCuda: boolean;
  /** Zeros of `size` with this tensor's dtype and device unless given. */
  newZeros(size: readonly number[], options?: NewTensorOptions): Tensor;
  newZeros(...size: number[]): Tensor;
  /** Ones of `size` with this tensor's dtype and device unless given. */
  newOnes(size: readonly number[], options?: NewTensorOptions): Tensor;
  newOnes(...size: number[]): Tensor;
  /** Uninitialised memory of `size` with this tensor's dtype and device unless given. */
  newEmpty(size: readonly number[], options?: NewTensorOptions): Tensor;
  newEmpty(...size: number[]): Tensor;
  /** `size` filled with fillValue, with this tensor's dtype and device unless given. */
  newFull(size: readonly number[], fillValue: number | boolean, options?: NewTensorOptions): Tensor;
  /** A copy of data with this tensor's dtype and device unless given. */
  newTensor(data: TensorData | Tensor, options?: NewTensorOptions): Tensor;
  /** to('float32') (this tensor when it already is). */
  float(options?: { memoryFormat?: string }): Tensor;
  /** to('float64'). */
  double(options?: { memoryFormat?: string }): Tensor;
  /** to('float16'). */
  half(options?: { memoryFormat?: string }): Tensor;
  /** to('bfloat16'). */
  bfloat16(options?: { memoryFormat?: string }): Tensor;
  /** to('int64'). */
  long(options?: { memoryFormat?: string }): Tensor;
  /** to('int32'). */
  int(options?: { memoryFormat?: string }): Tensor;
  /** to('int16'). */
  short(options?: { memoryFormat?: string }): Tensor;
  /** to('int8'). */
  char(options?: { memoryFormat?: string }): Tensor;
  /** to('uint8'). */
  byte(options?: { memoryFormat?: string }): Tensor;
  /** to('bool'). */
  bool(options?: { memoryFormat?: string }): Tensor;
  /** The legacy type name: 'torch.FloatTensor', 'torch.cuda.LongTensor', ... */
  type(): string;
  /** Converted to a dtype, a legacy name ('torch.cuda.FloatTensor' also moves it) or a legacy constructor. */
  type(dtype: DTypeLike | string | LegacyTensorConstructor, options?: { nonBlocking?: boolean }): Tensor;
}
/** Options of Tensor#newZeros and friends: this tensor's dtype and device by default. */
export interface NewTensorOptions { dtype?: DTypeLike; device?: DeviceLike; requiresGrad?: boolean }
/**
 * A legacy constructor (kd.FloatTensor, kd.cuda.LongTensor, ...): `(2, 3)` uninitialised,
 * `([1, 2])` from data, `()` empty, `(t)` t itself when its type matches. `t instanceof
 * kd.FloatTensor` checks the dtype and device type.
 */
export interface LegacyTensorConstructor {
  (...size: number[]): Tensor;
  (data: TensorData | Tensor, options?: { device?: DeviceLike }): Tensor;
  (size: number, ...rest: (number | { device?: DeviceLike })[]): Tensor;
}
export declare const FloatTensor: LegacyTensorConstructor;
export declare const DoubleTensor: LegacyTensorConstructor;
export declare const HalfTensor: LegacyTensorConstructor;
export declare const BFloat16Tensor: LegacyTensorConstructor;
export declare const ByteTensor: LegacyTensorConstructor;
export declare const CharTensor: LegacyTensorConstructor;
export declare const ShortTensor: LegacyTensorConstructor;
export declare const IntTensor: LegacyTensorConstructor;
export declare const LongTensor: LegacyTensorConstructor;
export declare const BoolTensor: LegacyTensorConstructor;
/** The CUDA legacy constructors (kd.cuda.FloatTensor, ...). */
export interface CudaNamespace {
  FloatTensor: LegacyTensorConstructor; DoubleTensor: LegacyTensorConstructor; HalfTensor: LegacyTensorConstructor;
  BFloat16Tensor: LegacyTensorConstructor; ByteTensor: LegacyTensorConstructor; CharTensor: LegacyTensorConstructor;
  ShortTensor: LegacyTensorConstructor; IntTensor: LegacyTensorConstructor; LongTensor: LegacyTensorConstructor;
  BoolTensor: LegacyTensorConstructor;
}
/** CUDA-related Tensor methods (lib/cuda.js). */
export interface Tensor {
  /** A copy of this CPU tensor in pinned host memory (KD_CUDA_UNAVAILABLE without CUDA). */
  pinMemory(): Tensor;
  /** Whether this tensor lives in pinned host memory (false without CUDA). */
  isPinned(): boolean;
  /** Marks this CUDA tensor's memory as used by `stream`: not reused before that work is done. */
  recordStream(stream: CudaStream): void;
}

/**
 * A new tensor holding a copy of `data`: nested arrays of numbers or booleans, a number or a
 * boolean (0-d), or a typed array (1-D; its type picks the dtype). Without `dtype`, like
 * PyTorch: only booleans -> bool; all numbers integer-valued -> int64; otherwise float32.
 * @example kd.tensor([[1.5, 2], [3, 4]])            // float32, shape [2, 2]
 * @example kd.tensor([1, 2, 3], {dtype: 'float32'})
 */
export declare function tensor(data: TensorData | Tensor, options?: TensorOptions): Tensor;

/** True for kindling tensors. */
export declare function isTensor(x: unknown): x is Tensor;
/** The contraction of `a` and `b` over dims: `n` pairs the last n dims of a with the first n of b
 * (default 2); `[dimsA, dimsB]` pairs the listed dims (after torch.tensordot). */
export declare function tensordot(a: Tensor, b: Tensor, dims?: number | Tensor | readonly [number | readonly number[], number | readonly number[]],
  options?: { dims?: number | Tensor | readonly [number | readonly number[], number | readonly number[]] }): Tensor;
export declare function tensordot(a: Tensor, b: Tensor, options: { dims?: number | Tensor | readonly [number | readonly number[], number | readonly number[]] }): Tensor;

/** Random integers in [0, high) (PyTorch's randint(high, size)) or in [low, high); int64 unless
 * dtype says otherwise. (Declared here, over the generated randint, for the first form.) */
export declare function randint(high: number, size: readonly number[], options?: { dtype?: DTypeLike | null; device?: DeviceLike | null; requiresGrad?: boolean }): Tensor;
export declare function randint(low: number, high: number, size: readonly number[], options?: { low?: number; high?: number; size?: readonly number[]; dtype?: DTypeLike | null; device?: DeviceLike | null; requiresGrad?: boolean }): Tensor;
export declare function randint(options: { low: number; high: number; size: readonly number[]; dtype?: DTypeLike | null; device?: DeviceLike | null }): Tensor;

/** The dtype names, float32 (the default) first. */
export declare const dtypes: readonly DType[];

/**
 * Runs `fn` and disposes every tensor created during it, except the tensors it returns (a
 * Tensor, or Tensors inside a returned array or plain object) and those passed to `keep`.
 * `fn` may be async: `await kd.tidy(async () => ...)`; concurrent async tidies stay apart.
 */
export declare function tidy<T>(fn: () => T): T;
/** `tidy(fn)` with a name (for debugging). */
export declare function tidy<T>(name: string, fn: () => T): T;
/** Exempts `t` from every tidy scope (dispose it by hand). Returns `t`. */
export declare function keep<T extends Tensor>(t: T): T;
/** Disposes a Tensor, or every Tensor inside an array, plain object, Map or Set. */
export declare function dispose(x: Tensor | object): void;

/** Seeds the random number generator of every device (Philox4x32-10). */
export declare function manualSeed(seed: number | bigint): void;
/** The seed in use. */
export declare function initialSeed(): bigint;

/** Memory statistics. */
export interface MemoryInfo {
  /** Native tensors alive (JS handles not yet disposed or collected). */
  liveTensors: number;
  /** Bytes of host memory held by live storages. */
  hostBytesInUse: number;
  /** Bytes the host caching allocator has handed out. */
  hostBytesAllocated: number;
  /** Bytes the host caching allocator keeps for reuse. */
  hostBytesCached: number;
  /** Highest hostBytesAllocated so far. */
  hostBytesPeak: number;
  /** Bytes of GPU memory held by live storages. */
  cudaBytesInUse: number;
}
/** Memory statistics. */
export declare function memory(): MemoryInfo;
/** Returns cached host memory to the system. */
export declare function emptyCache(): void;
/** Sets the number of threads CPU kernels use. */
export declare function setNumThreads(n: number): void;
/** The number of threads CPU kernels use. */
export declare function getNumThreads(): number;

/** Facts about this build of kindling (fixed when the module loads). */
export interface BuildInfo {
  /** CPU matmul uses a BLAS library (OpenBLAS found at build time). */
  readonly blas: boolean;
  /**
   * The CUDA backend was built: its library (libkindling_cuda.so; with KINDLING_CUDA=emulate the
   * emulated GPU's, libkindling_cuda_emu.so) is next to the addon, or at $KINDLING_CUDA_LIBRARY.
   * It is not loaded to answer this; whether a driver and a GPU let it run is `cuda.isAvailable()`.
   */
  readonly cuda: boolean;
  /**
   * The instruction-set level the hot CPU kernels (pointwise, reductions, softmax, layer norm,
   * conversions, pooling, the bfloat16 GEMM) run at: the best this CPU supports, or the level
   * forced with KINDLING_CPU_CAPABILITY=default|avx2|avx512 (an unknown or unsupported value is
   * ignored with a warning). 'default' on CPUs other than x86-64.
   */
  readonly cpuCapability: 'default' | 'avx2' | 'avx512';
  /**
   * The kernel bfloat16 matrix products run on: 'amx' (AMX tiles: the avx512 level on a CPU with
   * AMX-BF16, such as Sapphire Rapids, whose OS grants the tile state), 'avx512bf16' (VDPBF16PS
   * dot products: the avx512 level on a CPU with AVX512-BF16, or AMX turned off with
   * KINDLING_AMX=0) or 'none' (operands widened to float32). All accumulate in float32 and
   * round the result to bfloat16 once.
   */
  readonly bf16Gemm: 'amx' | 'avx512bf16' | 'none';
  /** The kernel of the int8 dynamic quantized Linear (KINDLING_VNNI=0 turns VNNI off). */
  readonly int8Gemm: 'avx512vnni' | 'avx512bw' | 'avx2' | 'scalar';
  /** OpenBLAS's description of itself (version, target core, threads) and how it is linked
   * ('linked into the addon' for the prebuilt binary, 'the system libopenblas' for a source
   * build); null without a BLAS. */
  readonly blasLibrary: string | null;
  /** Where the addon came from: 'prebuilt' (shipped in the package, prebuilds/<os>-<arch>) or
   * 'build' (compiled from source into build/Release). */
  readonly binary: 'prebuilt' | 'build';
  /** The addon's file. */
  readonly binaryPath: string;
}
/** Facts about this build: a BLAS for CPU matmul, the CUDA backend library, the CPU level. */
export declare const build: BuildInfo;
/** The package version. */
export declare const version: string;

/** The `code` of kindling errors. */
export type ErrorCode =
  | 'KD_INVALID_ARGUMENT' | 'KD_INVALID_TYPE' | 'KD_SHAPE_MISMATCH' | 'KD_DTYPE_MISMATCH'
  | 'KD_DEVICE_MISMATCH' | 'KD_INDEX_OUT_OF_RANGE' | 'KD_OUT_OF_MEMORY' | 'KD_DISPOSED'
  | 'KD_WORKER_EXITED' | 'KD_TIMEOUT' | 'KD_NO_PROCESS_GROUP'
  | 'KD_NOT_SUPPORTED' | 'KD_CUDA_UNAVAILABLE' | 'KD_CUDA_ERROR' | 'KD_CUDA_OOM' | 'KD_INTERNAL'
  | 'KD_NOT_BUILT' | 'KD_INVALID_FILE' | 'KD_GRADCHECK' | 'KD_CUDA_GRAPH_CAPTURE' | 'KD_LINALG_ERROR'
  | 'KD_INVALID_SCHEMA' | 'KD_ALREADY_DEFINED' | 'KD_BUILD_FAILED' | 'KD_IO_ERROR' | 'KD_ERROR'
  | 'KD_DISTRIBUTED' | 'KD_CONNECTION_CLOSED';

/**
 * Base class of kindling's errors (shape, dtype, device mismatches, out of memory, ...).
 * `err instanceof KindlingError` is true for every error kindling throws, KindlingTypeError and
 * KindlingRangeError included (they extend TypeError and RangeError).
 */
export declare class KindlingError extends Error {
  constructor(message: string, code?: ErrorCode);
  readonly code: ErrorCode;
  /** True for KindlingError and its subclasses, KindlingTypeError and KindlingRangeError. */
  static [Symbol.hasInstance](value: unknown): value is KindlingError;
}
/** A value of the wrong kind (code KD_INVALID_TYPE); also `instanceof KindlingError`. */
export declare class KindlingTypeError extends TypeError implements KindlingError {
  constructor(message: string, code?: ErrorCode);
  readonly code: ErrorCode;
  readonly name: 'KindlingTypeError';
}
/** An index or dim out of range (code KD_INDEX_OUT_OF_RANGE); also `instanceof KindlingError`. */
export declare class KindlingRangeError extends RangeError implements KindlingError {
  constructor(message: string, code?: ErrorCode);
  readonly code: ErrorCode;
  readonly name: 'KindlingRangeError';
}

/** A CUDA device for `kd.cuda` functions: an index (0), or `'cuda'` / `'cuda:<index>'`. */
export type CudaDeviceLike = number | 'cuda' | `cuda:${number}`;

/** Properties of a CUDA device. */
export interface CudaDeviceProperties {
  /** e.g. 'NVIDIA H100 80GB HBM3' */
  name: string;
  /** Device memory in bytes. */
  totalMemory: number;
  /** Compute capability, major. */
  major: number;
  /** Compute capability, minor. */
  minor: number;
  /** Number of streaming multiprocessors. */
  multiProcessorCount: number;
}

/**
 * `kd.cuda`: CUDA availability and device queries (lib/cuda.js). Tensors move with
 * `t.to('cuda')` / `t.cuda()`. When CUDA cannot be used (not built, no driver, no GPU),
 * `isAvailable()` is false and the functions that need a GPU throw KD_CUDA_UNAVAILABLE.
 */
/** `kd.cuda.emulator.stats()`: the emulated GPU's counters, totals since the backend loaded. */
export interface EmulatorStats {
  /** Kernel launches (a cuBLAS or CUB call counts as a launch). */
  launches: number;
  blocks: number;
  threads: number;
  /** Calls that blocked the host until device work finished (syncs, blocking copies, cudaFree). */
  syncs: number;
  bytesHostToDevice: number;
  bytesDeviceToHost: number;
  bytesDeviceToDevice: number;
  copiesHostToDevice: number;
  copiesDeviceToHost: number;
  copiesDeviceToDevice: number;
  mallocs: number;
  frees: number;
  hostFunctions: number;
  /** The configuration: KINDLING_CUDA_EMU_DEVICES, KINDLING_CUDA_EMU_MEMORY (bytes per device), KINDLING_CUDA_EMU_SEED. */
  devices: number;
  memory: number;
  seed: number;
  /** What made a device's error sticky ('' if nothing did). */
  fault: string;
  /** CUDA graph replays (each also counts as one of `launches`) and the kernels they ran. */
  graphLaunches: number;
  graphKernels: number;
}

/** A memory pool of CUDA graphs (kd.cuda.graphPoolHandle(), graph.pool()), to share between captures. */
export interface CudaGraphPoolHandle {
  readonly device: number;
  /** How many captured graphs use the pool now. */
  uses(): number;
}

/**
 * A CUDA graph (torch.cuda.CUDAGraph): captured work replayed with one launch. Inputs are
 * static tensors updated in place between replays; outputs are overwritten by each replay.
 * Host reads, device syncs and data-dependent shapes fail during capture (KD_CUDA_GRAPH_CAPTURE).
 */
export declare class CudaGraph {
  constructor();
  /** Begins capturing this thread's current stream (not the default stream). */
  captureBegin(options?: { pool?: CudaGraphPoolHandle; captureErrorMode?: 'global' | 'thread_local' | 'relaxed' }): void;
  captureEnd(): void;
  /** One launch of the captured work on the current stream. */
  replay(): void;
  /** Frees the graph, the storages it kept alive (every tensor its kernels use) and its use of its memory pool. */
  reset(): void;
  /** The same as reset(). */
  dispose(): void;
  [Symbol.dispose](): void;
  pool(): CudaGraphPoolHandle;
}

export interface CudaNamespace {
  /**
   * The emulated GPU (`KINDLING_CUDA=emulate` after `npm run build:emulator`): kindling's CUDA
   * kernels run on the CPU, for testing `device: 'cuda'` code without a GPU.
   */
  emulator: {
    /** Whether the CUDA backend in use is the emulated GPU. Never throws. */
    isEnabled(): boolean;
    /** The counters; throws KD_CUDA_UNAVAILABLE when the emulated GPU is not in use. */
    stats(): EmulatorStats;
  };
  /** Whether CUDA can be used. Never throws. */
  isAvailable(): boolean;
  /** Why CUDA is unavailable, or '' when it is available. Never throws. */
  unavailableReason(): string;
  /** Number of visible GPUs; 0 when CUDA is unavailable. Never throws. */
  deviceCount(): number;
  /** Index of this thread's current CUDA device (what 'cuda' means). */
  currentDevice(): number;
  /** Makes `device` this thread's current CUDA device. */
  setDevice(device: CudaDeviceLike): void;
  /** Name of a CUDA device (default: the current one). */
  getDeviceName(device?: CudaDeviceLike): string;
  /** Properties of a CUDA device (default: the current one). */
  getDeviceProperties(device?: CudaDeviceLike): CudaDeviceProperties;
  /** Waits (no thread blocks) for all work queued on a device; rejects with errors of kernels that ran. */
  synchronize(device?: CudaDeviceLike): Promise<void>;
  /** Bytes held by tensors on the device (rounded block sizes). */
  memoryAllocated(device?: CudaDeviceLike): number;
  maxMemoryAllocated(device?: CudaDeviceLike): number;
  /** Bytes reserved from the device by the caching allocator. */
  memoryReserved(device?: CudaDeviceLike): number;
  maxMemoryReserved(device?: CudaDeviceLike): number;
  /** PyTorch's memory_stats keys: 'allocated_bytes.all.current', 'num_ooms', ... */
  memoryStats(device?: CudaDeviceLike): Record<string, number>;
  memorySummary(device?: CudaDeviceLike): string;
  memorySnapshot(device?: CudaDeviceLike): CudaMemorySegment[];
  emptyCache(device?: CudaDeviceLike): void;
  resetPeakMemoryStats(device?: CudaDeviceLike): void;
  setPerProcessMemoryFraction(fraction: number, device?: CudaDeviceLike): void;
  Stream: typeof CudaStream;
  Event: typeof CudaEvent;
  currentStream(device?: CudaDeviceLike): CudaStream;
  defaultStream(device?: CudaDeviceLike): CudaStream;
  /** Runs fn with `stream` current; restores the previous stream when fn returns or its Promise settles. */
  withStream<T>(stream: CudaStream | null | undefined, fn: () => T): T;
  CUDAGraph: typeof CudaGraph;
  /** Captures fn into g on a side stream (torch.cuda.graph); returns what fn returns (a Promise for an async fn). */
  graph<T>(g: CudaGraph, fn: () => T, options?: { pool?: CudaGraphPoolHandle; stream?: CudaStream; captureErrorMode?: 'global' | 'thread_local' | 'relaxed' }): T;
  /** A new pool handle for captures that share memory (torch.cuda.graph_pool_handle). */
  graphPoolHandle(device?: CudaDeviceLike): CudaGraphPoolHandle;
  /** Whether this thread's current stream is capturing a graph. */
  isCurrentStreamCapturing(): boolean;
  /**
   * Forward and backward captured as CUDA graphs with sampleInputs as static inputs
   * (torch.cuda.make_graphed_callables): a module comes back with forward graphed in training
   * mode; a function comes back as its graphed version. Outputs are overwritten by the next call.
   */
  makeGraphedCallables<M extends { forward(...args: any[]): any; parameters(): Tensor[] }>(module: M, sampleInputs: Tensor | Tensor[]): M;
  makeGraphedCallables<F extends (...inputs: Tensor[]) => Tensor | Tensor[]>(fn: F, sampleInputs: Tensor | Tensor[]): F;
}

/** One segment of kd.cuda.memorySnapshot(). */
export interface CudaMemorySegment {
  device: number;
  address: number;
  totalSize: number;
  allocatedSize: number;
  activeSize: number;
  requestedSize: number;
  stream: number;
  segmentType: 'small' | 'large';
  blocks: { address: number; size: number; requestedSize: number; state: 'active_allocated' | 'active_pending_free' | 'inactive' }[];
}

/** `new kd.cuda.Stream({device, priority})`. */
export declare class CudaStream {
  constructor(opts?: { device?: CudaDeviceLike; priority?: number });
  readonly device: number;
  readonly handle: number;
  query(): boolean;
  synchronize(): Promise<void>;
  waitEvent(event: CudaEvent): void;
  waitStream(stream: CudaStream): void;
  recordEvent(event?: CudaEvent): CudaEvent;
  equals(other: unknown): boolean;
}

/** `new kd.cuda.Event({enableTiming})`. */
export declare class CudaEvent {
  constructor(opts?: { enableTiming?: boolean });
  readonly enableTiming: boolean;
  record(stream?: CudaStream): void;
  query(): boolean;
  synchronize(): Promise<void>;
  /** Milliseconds from this event to `end` (both recorded with enableTiming). */
  elapsedTime(end: CudaEvent): number;
  wait(stream?: CudaStream): void;
}
/** CUDA availability and device queries. */
export declare const cuda: CudaNamespace;

/** Datasets, DataLoader, defaultCollate, randomSplit (torch.utils.data). */
export * as data from './data';
/** safetensors save/load and checkpoints. */
export * from './serialization';

/** PyTorch 1.13's optimizers, `optim.lrScheduler` and `optim.swaUtils`; see ./optim.d.ts. */
export * as optim from './optim';
// kd.ao: int8 dynamic quantization (see ./ao.d.ts).
export * as ao from './ao';

/** The profiler (torch.profiler): profile, recordFunction, tables and Chrome traces; see ./profiler.d.ts. */
export * as profiler from './profiler';

/** Mixed precision: autocast, isAutocastEnabled, getAutocastDtype, amp.GradScaler; see ./amp.d.ts. */
export * from './amp';

/** Ops defined at run time: library.define / impl / registerAutograd / registerAutocast, and
 * ops.<namespace>.<name>; see ./library.d.ts. */
export * from './library';

/** Process-wide backend switches, after `torch.backends` (lib/backends.js). */
export declare const backends: {
  readonly cuda: {
    readonly matmul: {
      /** float32 matrix products on CUDA may use TF32 tensor cores. Default false, as PyTorch. */
      allowTF32: boolean;
    };
  };
};

/** Training helpers: progress bar, SVG loss/accuracy curves, summary table; see ./train.d.ts. */
export * as train from './train';
