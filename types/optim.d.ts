// types/optim.d.ts - TypeScript declarations of kd.optim (lib/optim/): optimizers with fused
// native updates and kd.optim.lrScheduler. Re-exported by ./index.d.ts as `optim`.
import type { Tensor } from './index';

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

export interface SGDOptions { lr: number; momentum: number; dampening: number; weightDecay: number; nesterov: boolean; maximize: boolean }
export interface AdamOptions {
  lr: number; betas: [number, number]; eps: number; weightDecay: number; amsgrad: boolean; maximize: boolean;
  /** The step count lives on the parameter's device, so a step can be captured in a CUDA graph (kd.cuda.graph). */
  capturable: boolean;
}
export interface RMSpropOptions { lr: number; alpha: number; eps: number; weightDecay: number; momentum: number; centered: boolean; maximize: boolean }
export interface AdagradOptions { lr: number; lrDecay: number; weightDecay: number; initialAccumulatorValue: number; eps: number; maximize: boolean }

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

type AnyOptimizer = Optimizer<any>;

export declare namespace lrScheduler {
  /** Base of the epoch-based schedulers. */
  class LRScheduler {
    readonly optimizer: AnyOptimizer;
    lastEpoch: number;
    baseLrs: number[];
    /** Advances one epoch (or jumps to `epoch` with the closed form). */
    step(epoch?: number): void;
    /** The lrs the last step() set, one per group. */
    getLastLr(): number[];
    stateDict(): { [key: string]: unknown };
    loadStateDict(stateDict: { [key: string]: unknown }): void;
  }
  class StepLR extends LRScheduler {
    constructor(optimizer: AnyOptimizer, stepSize: number, options?: { gamma?: number; lastEpoch?: number });
    constructor(optimizer: AnyOptimizer, options: { stepSize: number; gamma?: number; lastEpoch?: number });
  }
  class MultiStepLR extends LRScheduler {
    constructor(optimizer: AnyOptimizer, milestones: readonly number[], options?: { gamma?: number; lastEpoch?: number });
    constructor(optimizer: AnyOptimizer, options: { milestones: readonly number[]; gamma?: number; lastEpoch?: number });
  }
  class ExponentialLR extends LRScheduler {
    constructor(optimizer: AnyOptimizer, gamma: number, options?: { lastEpoch?: number });
    constructor(optimizer: AnyOptimizer, options: { gamma: number; lastEpoch?: number });
  }
  class CosineAnnealingLR extends LRScheduler {
    constructor(optimizer: AnyOptimizer, TMax: number, options?: { etaMin?: number; lastEpoch?: number });
    constructor(optimizer: AnyOptimizer, options: { TMax: number; etaMin?: number; lastEpoch?: number });
  }
  class LinearLR extends LRScheduler {
    constructor(optimizer: AnyOptimizer, options?: { startFactor?: number; endFactor?: number; totalIters?: number; lastEpoch?: number });
  }
  interface OneCycleOptions {
    totalSteps?: number | null; epochs?: number | null; stepsPerEpoch?: number | null; pctStart?: number;
    annealStrategy?: 'cos' | 'linear'; cycleMomentum?: boolean; baseMomentum?: number | number[];
    maxMomentum?: number | number[]; divFactor?: number; finalDivFactor?: number; threePhase?: boolean; lastEpoch?: number;
  }
  class OneCycleLR extends LRScheduler {
    constructor(optimizer: AnyOptimizer, maxLr: number | readonly number[], options?: OneCycleOptions);
    constructor(optimizer: AnyOptimizer, options: OneCycleOptions & { maxLr: number | readonly number[] });
    totalSteps: number;
  }
  class ReduceLROnPlateau {
    constructor(optimizer: AnyOptimizer, options?: {
      mode?: 'min' | 'max'; factor?: number; patience?: number; threshold?: number; thresholdMode?: 'rel' | 'abs';
      cooldown?: number; minLr?: number | readonly number[]; eps?: number;
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
    constructor(optimizer: AnyOptimizer, schedulers: readonly LRScheduler[], milestones: readonly number[], options?: { lastEpoch?: number });
    readonly optimizer: AnyOptimizer;
    lastEpoch: number;
    step(): void;
    getLastLr(): number[];
    stateDict(): { [key: string]: unknown };
    loadStateDict(stateDict: { [key: string]: unknown }): void;
  }
}
