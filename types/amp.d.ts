// types/amp.d.ts - TypeScript declarations of automatic mixed precision (lib/autocast.js,
// lib/amp.js): kd.autocast, kd.isAutocastEnabled, kd.getAutocastDtype and kd.amp.GradScaler.
// Re-exported by ./index.d.ts.
import type { Tensor, DType, DTypeLike } from './index';

/** The device types autocast distinguishes. */
export type AutocastDeviceType = 'cpu' | 'cuda';

/** Options of kd.autocast (PyTorch's torch.autocast arguments). */
export interface AutocastOptions {
  /** Which device type's ops are autocast: 'cpu' (bfloat16) or 'cuda' (float16 or bfloat16). */
  deviceType: AutocastDeviceType;
  /** The lower-precision dtype (default: the current one of the device type, initially bfloat16
   * on the CPU and float16 on CUDA). A floating dtype the device type does not autocast to emits
   * a warning and disables the scope, as PyTorch; a non-floating dtype is an error. */
  dtype?: DTypeLike;
  /** false runs fn with autocast off for the device type (default true). */
  enabled?: boolean;
  /** Cache the lower-precision copies of float32 leaf tensors that require grad (weights) for the
   * life of the outermost scope (default: the current setting, initially true). */
  cacheEnabled?: boolean;
}

/**
 * Runs fn (sync or async) with automatic mixed precision: inside, ops with an autocast policy
 * cast their floating inputs (matmul/linear/conv to the lower-precision dtype; losses,
 * reductions and some pointwise ops to float32; cat/stack to the widest input), as PyTorch's
 * `torch.autocast`. Casts are recorded by autograd, so float32 parameters get float32 gradients.
 * @example
 * const loss = kd.autocast({ deviceType: 'cpu' }, () => lossFn(model.forward(x), y));
 * scaler.scale(loss).backward();
 */
export declare function autocast<T>(options: AutocastOptions, fn: () => T): T;
/** Whether autocast is on for the device type here. */
export declare function isAutocastEnabled(deviceType: AutocastDeviceType): boolean;
/** The lower-precision dtype autocast casts to for the device type here. */
export declare function getAutocastDtype(deviceType: AutocastDeviceType): DType;

/** Options of amp.GradScaler (PyTorch's defaults). */
export interface GradScalerOptions {
  /** Initial scale factor (2 ** 16). */
  initScale?: number;
  /** Factor the scale grows by after growthInterval steps without inf/NaN gradients (2). */
  growthFactor?: number;
  /** Factor the scale shrinks by after a step with inf/NaN gradients (0.5). */
  backoffFactor?: number;
  /** Steps without inf/NaN gradients between growths (2000). */
  growthInterval?: number;
  /** false: every method is a pass-through (scale returns its argument, step calls optimizer.step). */
  enabled?: boolean;
}

/** GradScaler.stateDict() (empty when disabled). */
export interface GradScalerStateDict {
  scale?: number;
  growthFactor?: number;
  backoffFactor?: number;
  growthInterval?: number;
  _growthTracker?: number;
}

/** What GradScaler needs of an optimizer: its parameter groups and step(). */
export interface ScalableOptimizer {
  paramGroups: { params: Tensor[] }[];
  step(...args: any[]): unknown;
}

export declare namespace amp {
  /** kd.autocast. */
  const autocast: typeof import('./amp').autocast;
  /**
   * Gradient scaling for mixed precision training (PyTorch's torch.cuda.amp.GradScaler, on the
   * CPU and CUDA). Unscaling and the inf/NaN check run as one native call per device over all
   * of an optimizer's gradients.
   * @example
   * const scaler = new kd.amp.GradScaler();
   * opt.zeroGrad();
   * const loss = kd.autocast({ deviceType: 'cuda' }, () => lossFn(model.forward(x), y));
   * scaler.scale(loss).backward();
   * scaler.step(opt);   // skipped when a gradient is inf/NaN
   * scaler.update();    // backoff or growth of the scale
   */
  class GradScaler {
    constructor(options?: GradScalerOptions);
    /** outputs times the scale factor (a tensor, or nested arrays of tensors). */
    scale<T extends Tensor | readonly unknown[]>(outputs: T): T;
    /** Divides the optimizer's gradients by the scale in place (at most once per step; e.g.
     * before gradient clipping). */
    unscale_(optimizer: ScalableOptimizer): void;
    /** Unscales (unless unscale_ ran) and calls optimizer.step(...args) unless a gradient is
     * inf/NaN; returns its result (undefined when skipped). */
    step(optimizer: ScalableOptimizer, ...args: unknown[]): unknown;
    /** Updates the scale for the next step, or sets it (a number or a 1-element float32 tensor). */
    update(newScale?: number | Tensor): void;
    /** The current scale (1 when disabled). */
    getScale(): number;
    getGrowthFactor(): number;
    setGrowthFactor(v: number): void;
    getBackoffFactor(): number;
    setBackoffFactor(v: number): void;
    getGrowthInterval(): number;
    setGrowthInterval(v: number): void;
    isEnabled(): boolean;
    stateDict(): GradScalerStateDict;
    loadStateDict(stateDict: GradScalerStateDict): void;
  }
}
