// types/optim.d.ts - TypeScript declarations of kd.optim (lib/optim/): the optimizers,
// kd.optim.lrScheduler and kd.optim.swaUtils. Re-exported by ./index.d.ts as `optim`.
import type { Tensor } from './index';
import { nn } from './ops.gen';
import './nn';

type Module = nn.Module;

/** A parameter group: its tensors and the hyperparameters that override the optimizer's defaults. */
export interface ParamGroup<O> { params: Tensor | Iterable<Tensor> }
export type ParamGroupInput<O> = { params: Tensor | Iterable<Tensor> } & Partial<O>;
/** A group as the optimizer holds it: every hyperparameter filled in (mutable, e.g. `lr`). */
export type FilledGroup<O> = { params: Tensor[]; initialLr?: number; [key: string]: unknown } & O;

/** `optimizer.stateDict()`: per-parameter state keyed by parameter index (numbered through the
 * groups in order) and the groups with `params` as those indices (PyTorch's layout). */
export interface OptimizerStateDict {
  state: { [index: number]: { [key: string]: Tensor | number | null } };
  paramGroups: ({ params: number[] } & { [key: string]: unknown })[];
}

export declare class Optimizer<O extends object = { lr: number }> {
  protected constructor(params: Iterable<Tensor> | Iterable<ParamGroupInput<O>>, defaults: O);
  readonly defaults: O;
  paramGroups: FilledGroup<O>[];
  state: Map<Tensor, { [key: string]: Tensor | number | null }>;
  /** Adds a group; options left out take the optimizer's defaults. */
  addParamGroup(group: ParamGroupInput<O>): void;
  /** Resets gradients to null (default) or, with `setToNone: false`, to zeros in place. */
  zeroGrad(options?: { setToNone?: boolean }): void;
  /** Frees the state tensors now; a later step() starts the state afresh. Parameters are untouched. */
  dispose(): void;
  [Symbol.dispose](): void;
  /** One update of every parameter that has a gradient; with a closure, runs it first (grad
   * enabled) and returns its result. */
  step(): undefined;
  step<L>(closure: () => L): L;
  stateDict(): OptimizerStateDict;
  loadStateDict(stateDict: OptimizerStateDict): void;
}

/** PyTorch's `foreach` (null: its default): accepted and kept in the groups; kindling's updates
 * always run over a whole group at once. */
interface ForeachOption { foreach: boolean | null }
/** PyTorch's `differentiable`: true runs an update autograd records (non-leaf tensors allowed). */
interface DifferentiableOption { differentiable: boolean }
export interface SGDOptions extends ForeachOption, DifferentiableOption {
  lr: number; momentum: number; dampening: number; weightDecay: number; nesterov: boolean; maximize: boolean;
}
export interface AdamOptions extends ForeachOption {
  lr: number; betas: [number, number]; eps: number; weightDecay: number; amsgrad: boolean; maximize: boolean;
  /** The step count lives on the parameter's device, so a step can be captured in a CUDA graph (kd.cuda.graph). */
  capturable: boolean;
  /** Adam only (as in PyTorch 1.13): an update autograd records; see DifferentiableOption. */
  differentiable?: boolean;
  /** Adam only: accepted (kindling's update is always one fused pass). */
  fused?: boolean;
}
export interface RMSpropOptions extends ForeachOption, DifferentiableOption {
  lr: number; alpha: number; eps: number; weightDecay: number; momentum: number; centered: boolean; maximize: boolean;
}
export interface AdagradOptions extends ForeachOption {
  lr: number; lrDecay: number; weightDecay: number; initialAccumulatorValue: number; eps: number; maximize: boolean;
}
export interface AdadeltaOptions extends ForeachOption { lr: number; rho: number; eps: number; weightDecay: number; maximize: boolean }
export interface AdamaxOptions extends ForeachOption { lr: number; betas: [number, number]; eps: number; weightDecay: number; maximize: boolean }
export interface ASGDOptions extends ForeachOption {
  lr: number; lambd: number; alpha: number; t0: number; weightDecay: number; maximize: boolean;
}
export interface NAdamOptions extends ForeachOption { lr: number; betas: [number, number]; eps: number; weightDecay: number; momentumDecay: number }
export interface RAdamOptions extends ForeachOption { lr: number; betas: [number, number]; eps: number; weightDecay: number }
export interface RpropOptions extends ForeachOption {
  lr: number; etas: [number, number]; stepSizes: [number, number]; maximize: boolean;
}
export interface SparseAdamOptions { lr: number; betas: [number, number]; eps: number; maximize: boolean }
export interface LBFGSOptions {
  lr: number; maxIter: number; maxEval: number | null; toleranceGrad: number; toleranceChange: number;
  historySize: number; lineSearchFn: 'strong_wolfe' | null;
}

type Params<O> = Iterable<Tensor> | Iterable<ParamGroupInput<O>>;

/** Stochastic gradient descent (lr is required). */
export declare class SGD extends Optimizer<SGDOptions> {
  constructor(params: Params<SGDOptions>, options: number | ({ lr: number } & Partial<SGDOptions>));
}
/** Adam (lr 1e-3, betas [0.9, 0.999], eps 1e-8, weightDecay 0 as an L2 term). */
export declare class Adam extends Optimizer<AdamOptions> {
  constructor(params: Params<AdamOptions>, options?: number | Partial<AdamOptions>);
}
/** AdamW: Adam with decoupled weight decay (default 1e-2). */
export declare class AdamW extends Adam {
  constructor(params: Params<AdamOptions>, options?: number | Partial<AdamOptions>);
}
/** RMSprop (lr 1e-2, alpha 0.99, eps 1e-8). */
export declare class RMSprop extends Optimizer<RMSpropOptions> {
  constructor(params: Params<RMSpropOptions>, options?: number | Partial<RMSpropOptions>);
}
/** Adagrad (lr 1e-2, eps 1e-10). */
export declare class Adagrad extends Optimizer<AdagradOptions> {
  constructor(params: Params<AdagradOptions>, options?: number | Partial<AdagradOptions>);
}

/** Adadelta (lr 1, rho 0.9, eps 1e-6). */
export declare class Adadelta extends Optimizer<AdadeltaOptions> {
  constructor(params: Params<AdadeltaOptions>, options?: number | Partial<AdadeltaOptions>);
}
/** Adamax: Adam with the infinity norm (lr 2e-3). */
export declare class Adamax extends Optimizer<AdamaxOptions> {
  constructor(params: Params<AdamaxOptions>, options?: number | Partial<AdamaxOptions>);
}
/** Averaged SGD (lr 1e-2, lambd 1e-4, alpha 0.75, t0 1e6); state `ax` is the running average. */
export declare class ASGD extends Optimizer<ASGDOptions> {
  constructor(params: Params<ASGDOptions>, options?: number | Partial<ASGDOptions>);
}
/** NAdam: Adam with Nesterov momentum (lr 2e-3, momentumDecay 4e-3). */
export declare class NAdam extends Optimizer<NAdamOptions> {
  constructor(params: Params<NAdamOptions>, options?: number | Partial<NAdamOptions>);
}
/** RAdam: rectified Adam (lr 1e-3). */
export declare class RAdam extends Optimizer<RAdamOptions> {
  constructor(params: Params<RAdamOptions>, options?: number | Partial<RAdamOptions>);
}
/** Rprop: resilient backpropagation (lr 1e-2, etas [0.5, 1.2], stepSizes [1e-6, 50]). */
export declare class Rprop extends Optimizer<RpropOptions> {
  constructor(params: Params<RpropOptions>, options?: number | Partial<RpropOptions>);
}
/** SparseAdam: kindling's gradients are dense, and step() refuses dense gradients as PyTorch does. */
export declare class SparseAdam extends Optimizer<SparseAdamOptions> {
  constructor(params: Params<SparseAdamOptions>, options?: number | Partial<SparseAdamOptions>);
}
/** L-BFGS over the flattened parameters (one group); step(closure) needs the closure (step()
 * throws) and returns the closure's first loss. */
export declare class LBFGS extends Optimizer<LBFGSOptions> {
  constructor(params: Iterable<Tensor>, options?: number | Partial<LBFGSOptions>);
}

type AnyOptimizer = Optimizer<any>;

export declare namespace lrScheduler {
  /** Base of the epoch-based schedulers. */
  class LRScheduler {
    readonly optimizer: AnyOptimizer;
    lastEpoch: number;
    baseLrs: number[];
    /** Print each new lr as PyTorch's `verbose` does. */
    verbose: boolean;
    /** Advances one epoch; `step(epoch)` (deprecated as in PyTorch: warns once) jumps to `epoch`
     * with the closed form. */
    step(epoch?: number): void;
    /** The lrs the last step() set, one per group. */
    getLastLr(): number[];
    stateDict(): { [key: string]: unknown };
    loadStateDict(stateDict: { [key: string]: unknown }): void;
  }
  class StepLR extends LRScheduler {
    constructor(optimizer: AnyOptimizer, stepSize: number, options?: { gamma?: number; lastEpoch?: number; verbose?: boolean });
    constructor(optimizer: AnyOptimizer, options: { stepSize: number; gamma?: number; lastEpoch?: number; verbose?: boolean });
  }
  class MultiStepLR extends LRScheduler {
    constructor(optimizer: AnyOptimizer, milestones: readonly number[], options?: { gamma?: number; lastEpoch?: number; verbose?: boolean });
    constructor(optimizer: AnyOptimizer, options: { milestones: readonly number[]; gamma?: number; lastEpoch?: number; verbose?: boolean });
  }
  class ExponentialLR extends LRScheduler {
    constructor(optimizer: AnyOptimizer, gamma: number, options?: { lastEpoch?: number; verbose?: boolean });
    constructor(optimizer: AnyOptimizer, options: { gamma: number; lastEpoch?: number; verbose?: boolean });
  }
  class CosineAnnealingLR extends LRScheduler {
    constructor(optimizer: AnyOptimizer, TMax: number, options?: { etaMin?: number; lastEpoch?: number; verbose?: boolean });
    constructor(optimizer: AnyOptimizer, options: { TMax: number; etaMin?: number; lastEpoch?: number; verbose?: boolean });
  }
  class LinearLR extends LRScheduler {
    constructor(optimizer: AnyOptimizer, options?: { startFactor?: number; endFactor?: number; totalIters?: number; lastEpoch?: number; verbose?: boolean });
  }
  interface OneCycleOptions {
    totalSteps?: number | null; epochs?: number | null; stepsPerEpoch?: number | null; pctStart?: number;
    annealStrategy?: 'cos' | 'linear'; cycleMomentum?: boolean; baseMomentum?: number | number[];
    maxMomentum?: number | number[]; divFactor?: number; finalDivFactor?: number; threePhase?: boolean; lastEpoch?: number; verbose?: boolean;
  }
  class OneCycleLR extends LRScheduler {
    constructor(optimizer: AnyOptimizer, maxLr: number | readonly number[], options?: OneCycleOptions);
    constructor(optimizer: AnyOptimizer, options: OneCycleOptions & { maxLr: number | readonly number[] });
    totalSteps: number;
  }
  class ReduceLROnPlateau {
    constructor(optimizer: AnyOptimizer, options?: {
      mode?: 'min' | 'max'; factor?: number; patience?: number; threshold?: number; thresholdMode?: 'rel' | 'abs';
      cooldown?: number; minLr?: number | readonly number[]; eps?: number; verbose?: boolean;
    });
    readonly optimizer: AnyOptimizer;
    lastEpoch: number;
    best: number;
    numBadEpochs: number;
    /** One epoch's metric (a number or a one-element tensor). */
    step(metric: number | Tensor, epoch?: number): void;
    getLastLr(): number[];
    stateDict(): { [key: string]: unknown };
    loadStateDict(stateDict: { [key: string]: unknown }): void;
  }
  class SequentialLR {
    constructor(optimizer: AnyOptimizer, schedulers: readonly LRScheduler[], milestones: readonly number[], options?: { lastEpoch?: number; verbose?: boolean });
    readonly optimizer: AnyOptimizer;
    lastEpoch: number;
    step(): void;
    getLastLr(): number[];
    stateDict(): { [key: string]: unknown };
    loadStateDict(stateDict: { [key: string]: unknown }): void;
  }
  type LrLambda = (epoch: number) => number;
  class LambdaLR extends LRScheduler {
    /** lr = initial lr * lrLambda(epoch) (one function, or one per group). */
    constructor(optimizer: AnyOptimizer, lrLambda: LrLambda | readonly LrLambda[], options?: { lastEpoch?: number; verbose?: boolean });
    readonly lrLambdas: LrLambda[];
  }
  class MultiplicativeLR extends LRScheduler {
    /** lr *= lrLambda(epoch) at each step after the first. */
    constructor(optimizer: AnyOptimizer, lrLambda: LrLambda | readonly LrLambda[], options?: { lastEpoch?: number; verbose?: boolean });
    readonly lrLambdas: LrLambda[];
  }
  class ConstantLR extends LRScheduler {
    constructor(optimizer: AnyOptimizer, options?: { factor?: number; totalIters?: number; lastEpoch?: number; verbose?: boolean });
  }
  class PolynomialLR extends LRScheduler {
    constructor(optimizer: AnyOptimizer, options?: { totalIters?: number; power?: number; lastEpoch?: number; verbose?: boolean });
  }
  interface CyclicOptions {
    stepSizeUp?: number; stepSizeDown?: number | null; mode?: 'triangular' | 'triangular2' | 'exp_range'; gamma?: number;
    scaleFn?: ((x: number) => number) | null; scaleMode?: 'cycle' | 'iterations'; cycleMomentum?: boolean;
    baseMomentum?: number | readonly number[]; maxMomentum?: number | readonly number[]; lastEpoch?: number; verbose?: boolean;
  }
  class CyclicLR extends LRScheduler {
    /** Cycles each group's lr between baseLr and maxLr (and momentum the other way). */
    constructor(optimizer: AnyOptimizer, baseLr: number | readonly number[], maxLr: number | readonly number[], options?: CyclicOptions);
    scaleFn(x: number): number;
  }
  class CosineAnnealingWarmRestarts extends LRScheduler {
    constructor(optimizer: AnyOptimizer, T0: number, options?: { TMult?: number; etaMin?: number; lastEpoch?: number; verbose?: boolean });
    /** step() advances one epoch; step(epoch) takes fractional epochs (epoch + batch / batches). */
    step(epoch?: number): void;
    T0: number; Ti: number; TMult: number; TCur: number; etaMin: number;
  }
  class ChainedScheduler {
    /** Steps every scheduler (of one optimizer) at each step(). */
    constructor(schedulers: readonly LRScheduler[]);
    readonly optimizer: AnyOptimizer;
    step(): void;
    getLastLr(): number[];
    stateDict(): { [key: string]: unknown };
    loadStateDict(stateDict: { [key: string]: unknown }): void;
  }
}

export declare namespace swaUtils {
  /** A deep copy of a model whose parameters (and buffers with useBuffers) are the running
   * average of the model's: call updateParameters(model) after optimizer steps. */
  class AveragedModel extends nn.Module {
    constructor(model: Module, options?: {
      device?: string | null;
      /** (average, model's value, number averaged so far as an int64 tensor) -> new average. */
      avgFn?: ((averaged: Tensor, current: Tensor, numAveraged: Tensor) => Tensor) | null;
      useBuffers?: boolean;
    });
    readonly module: Module;
    readonly nAveraged: Tensor;
    useBuffers: boolean;
    updateParameters(model: Module): void;
  }
  /** Anneals each group's lr to swaLr over annealEpochs ('cos' or 'linear'), then holds it. */
  class SWALR extends lrScheduler.LRScheduler {
    constructor(optimizer: AnyOptimizer, swaLr: number | readonly number[], options?: {
      annealEpochs?: number; annealStrategy?: 'cos' | 'linear'; lastEpoch?: number; verbose?: boolean;
    });
  }
  /** Recomputes every BatchNorm's running statistics with one pass over loader (tensors, or
   * arrays whose first element is the input). */
  function updateBn(loader: Iterable<Tensor | readonly unknown[]>, model: Module, device?: string | null): void;
}
