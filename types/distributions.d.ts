// distributions.d.ts - kd.distributions (lib/distributions.js) and kd.broadcastShapes /
// broadcastTo / broadcastTensors (lib/broadcast.js).
import type { Tensor } from './index';

declare module './index' {
  interface Tensor {
    /** expand(shape) as torch.broadcast_to: a view. */
    broadcastTo(...shape: number[] | [readonly number[]]): Tensor;
  }
}

/** The shape the given shapes broadcast to (torch.broadcast_shapes). */
export declare function broadcastShapes(...shapes: (number | readonly number[])[]): number[];
/** The tensors expanded to their common shape (views). */
export declare function broadcastTensors(...tensors: Tensor[] | [readonly Tensor[]]): Tensor[];
/** input expanded to shape (a view). */
export declare function broadcastTo(input: Tensor, ...shape: number[] | [readonly number[]]): Tensor;

export declare namespace distributions {
  class Distribution {
    constructor(batchShape?: readonly number[], eventShape?: readonly number[], validateArgs?: boolean | null);
    /** Whether new distributions validate their arguments (default true, as PyTorch under __debug__). */
    static setDefaultValidateArgs(value: boolean): void;
    readonly batchShape: number[];
    readonly eventShape: number[];
    sample(sampleShape?: number | readonly number[]): Tensor;
  }
  interface CategoricalOptions { probs?: Tensor; logits?: Tensor; validateArgs?: boolean | null }
  /** torch.distributions.Categorical: new Categorical(probs) or new Categorical({logits}). */
  class Categorical extends Distribution {
    constructor(probs: Tensor, logits?: Tensor | null, validateArgs?: boolean | null);
    constructor(options: CategoricalOptions);
    readonly probs: Tensor;
    readonly logits: Tensor;
    readonly paramShape: number[];
    readonly mean: Tensor;
    readonly variance: Tensor;
    readonly mode: Tensor;
    readonly support: { lowerBound: number; upperBound: number };
    /** int64 samples of shape sampleShape + batchShape (no gradient). */
    sample(sampleShape?: number | readonly number[]): Tensor;
    logProb(value: Tensor): Tensor;
    entropy(): Tensor;
    enumerateSupport(expand?: boolean): Tensor;
  }
}
