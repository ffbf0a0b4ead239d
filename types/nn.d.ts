// nn.d.ts - TypeScript declarations of kd.nn (lib/nn/): Module, Parameter, layers, losses,
// containers, init and utils. They extend the `nn` namespace that ./ops.gen.d.ts declares for
// kd.nn.functional (a module augmentation), so `kd.nn.Linear` and `kd.nn.functional.linear` both
// resolve. Modules are callable: `model(x)` runs forward with the hooks.
import type { Tensor, DTypeLike, DeviceLike } from './index';

type Reduction = 'none' | 'mean' | 'sum';
type IntOrPair = number | readonly number[];
interface FactoryOptions { dtype?: DTypeLike | null; device?: DeviceLike | null }

declare module './ops.gen' {
  namespace nn {
    /** Handle returned by the hook registrations. */
    interface RemovableHandle { readonly id: number; remove(): void }

    /**
     * Base class of layers and models. Assign Parameters and Modules as properties (they are
     * registered), registerBuffer() buffers, and define forward(). Instances are callable.
     */
    class Module {
      constructor();
      /** True in training mode (the default); see train() / eval(). */
      training: boolean;
      /** The computation; call the module itself to run hooks too. */
      forward(...args: any[]): any;
      registerParameter(name: string, param: Parameter | null): void;
      registerBuffer(name: string, tensor: Tensor | null, options?: { persistent?: boolean }): void;
      registerModule(name: string, module: Module | null): void;
      addModule(name: string, module: Module | null): void;
      parameters(recurse?: boolean): Parameter[];
      namedParameters(options?: { prefix?: string; recurse?: boolean; removeDuplicate?: boolean }): [string, Parameter][];
      buffers(recurse?: boolean): Tensor[];
      namedBuffers(options?: { prefix?: string; recurse?: boolean; removeDuplicate?: boolean }): [string, Tensor][];
      children(): Module[];
      namedChildren(): [string, Module][];
      modules(): Module[];
      namedModules(options?: { prefix?: string; removeDuplicate?: boolean }): [string, Module][];
      getSubmodule(target: string): Module;
      train(mode?: boolean): this;
      eval(): this;
      requiresGrad_(requiresGrad?: boolean): this;
      zeroGrad(options?: { setToNone?: boolean } | boolean): void;
      apply(fn: (module: Module) => void): this;
      to(dtypeOrDevice: DTypeLike | DeviceLike | Tensor, options?: FactoryOptions): this;
      to(options: FactoryOptions & { memoryFormat?: string; nonBlocking?: boolean }): this;
      float(): this; double(): this; half(): this; bfloat16(): this; cpu(): this; cuda(index?: number): this;
      /** PyTorch's IPU / XPU moves: kindling has neither device, so these fail (KD_NOT_SUPPORTED) as PyTorch built without them, unless the module holds no tensor. */
      ipu(device?: number | string | null): this; xpu(device?: number | string | null): this;
      /** Parameters and persistent buffers under PyTorch's dotted snake_case keys. */
      stateDict(options?: { prefix?: string; keepVars?: boolean }): Record<string, Tensor>;
      loadStateDict(stateDict: Record<string, Tensor> | Map<string, Tensor>, options?: { strict?: boolean }): { missingKeys: string[]; unexpectedKeys: string[] };
      registerForwardPreHook(hook: (module: Module, args: any[]) => any): RemovableHandle;
      registerForwardHook(hook: (module: Module, args: any[], output: any) => any): RemovableHandle;
      /** hook(module, gradInput, gradOutput) once the gradients of the call's tensor inputs are known; may return new gradInput. */
      registerFullBackwardHook(hook: (module: Module, gradInput: (Tensor | null)[], gradOutput: (Tensor | null)[]) => (Tensor | null)[] | void): RemovableHandle;
      /** PyTorch's deprecated backward hook, run as a full backward hook. */
      registerBackwardHook(hook: (module: Module, gradInput: (Tensor | null)[], gradOutput: (Tensor | null)[]) => (Tensor | null)[] | void): RemovableHandle;
      /** The parameter at a dotted path ('layers.0.weight'). */
      getParameter(target: string): Parameter;
      /** The buffer at a dotted path ('bn.running_mean'). */
      getBuffer(target: string): Tensor;
      /** Override to save a value under '<prefix>_extra_state' in the state dict. */
      getExtraState(): any;
      /** Override to restore what getExtraState() saved. */
      setExtraState(state: any): void;
      /** Parameters and buffers moved to device, uninitialised. */
      toEmpty(options: { device: DeviceLike } | DeviceLike): this;
      /** shareMemory_() on every parameter and buffer (kd.multiprocessing hands them to worker threads). */
      shareMemory(): this;
      /** Every parameter and buffer cast to a dtype or legacy type name ('torch.DoubleTensor'). */
      type(dstType: DTypeLike | string): this;
      /** hook(module, stateDict, prefix, localMetadata) after stateDict(); may return a replacement. */
      _registerStateDictHook(hook: (module: Module, stateDict: Record<string, any>, prefix: string, localMetadata: object) => Record<string, any> | void): RemovableHandle;
      /** hook(stateDict, prefix, localMetadata, strict, missingKeys, unexpectedKeys, errorMsgs) before this module loads (withModule: module first). */
      _registerLoadStateDictPreHook(hook: (...args: any[]) => void, withModule?: boolean): RemovableHandle;
      /** hook(module, {missingKeys, unexpectedKeys}) after loadStateDict(); may change the lists in place. */
      registerLoadStateDictPostHook(hook: (module: Module, incompatibleKeys: { missingKeys: string[]; unexpectedKeys: string[] }) => void): RemovableHandle;
      extraRepr(): string;
      toString(): string;
    }
    interface Module { (...args: any[]): any }

    /** torch.nn.modules.module's global hooks: they run for every module call, before the module's own. */
    namespace modules.module {
      function registerModuleForwardPreHook(hook: (module: Module, args: any[]) => any): RemovableHandle;
      function registerModuleForwardHook(hook: (module: Module, args: any[], output: any) => any): RemovableHandle;
      function registerModuleFullBackwardHook(hook: (module: Module, gradInput: (Tensor | null)[], gradOutput: (Tensor | null)[]) => (Tensor | null)[] | void): RemovableHandle;
      function registerModuleBackwardHook(hook: (module: Module, gradInput: (Tensor | null)[], gradOutput: (Tensor | null)[]) => (Tensor | null)[] | void): RemovableHandle;
    }

    /** A Tensor that modules register as a parameter (a leaf with requiresGrad, default true). */
    interface Parameter extends Tensor {
      requiresGrad: boolean;
      grad: Tensor | null;
    }
    /** `new kd.nn.Parameter(t)`, or `kd.nn.Parameter(t)` without `new`. */
    const Parameter: {
      new (data?: Tensor | null, requiresGrad?: boolean): Parameter;
      (data?: Tensor | null, requiresGrad?: boolean): Parameter;
      readonly prototype: Parameter;
    };
    type UninitializedOptions = { requiresGrad?: boolean; device?: string | null; dtype?: string | null };
    type MaterializeOptions = { device?: string | null; dtype?: string | null };
    /** A parameter of unknown size (lib/nn/uninitialized.js): any use but dtype/device/requiresGrad throws until materialize(). */
    interface UninitializedParameter extends Parameter {
      /** Gives it uninitialised storage of this shape; the same object is then a Parameter. */
      materialize(shape: number | readonly number[], options?: MaterializeOptions): Parameter;
    }
    const UninitializedParameter: { new (requiresGrad?: boolean | UninitializedOptions, options?: UninitializedOptions): UninitializedParameter };
    /** A buffer of unknown size; materialize() makes it a Tensor. */
    interface UninitializedBuffer extends Tensor {
      materialize(shape: number | readonly number[], options?: MaterializeOptions): Tensor;
    }
    const UninitializedBuffer: { new (requiresGrad?: boolean | UninitializedOptions, options?: UninitializedOptions): UninitializedBuffer };
    namespace parameter {
      /** True for an UninitializedParameter or UninitializedBuffer (not materialized yet). */
      function isLazy(t: unknown): boolean;
    }

    /** Modules with one tensor input and one tensor output. */
    class UnaryModule extends Module { forward(input: Tensor): Tensor }
    interface UnaryModule { (input: Tensor): Tensor }

    class Identity extends UnaryModule {}
    class Linear extends UnaryModule {
      constructor(inFeatures: number, outFeatures: number, bias?: boolean, options?: FactoryOptions & { bias?: boolean });
      constructor(inFeatures: number, outFeatures: number, options?: FactoryOptions & { bias?: boolean });
      inFeatures: number; outFeatures: number; weight: Parameter; bias: Parameter | null;
      resetParameters(): void;
    }
    class Bilinear extends Module {
      constructor(in1Features: number, in2Features: number, outFeatures: number, bias?: boolean | (FactoryOptions & { bias?: boolean }));
      weight: Parameter; bias: Parameter | null;
      forward(input1: Tensor, input2: Tensor): Tensor;
      resetParameters(): void;
    }
    interface Bilinear { (input1: Tensor, input2: Tensor): Tensor }
    class Embedding extends UnaryModule {
      constructor(numEmbeddings: number, embeddingDim: number, paddingIdx?: number | null | (FactoryOptions & { paddingIdx?: number | null; weight?: Tensor }));
      constructor(numEmbeddings: number, embeddingDim: number, options?: FactoryOptions & { paddingIdx?: number | null; weight?: Tensor });
      numEmbeddings: number; embeddingDim: number; paddingIdx: number | null; weight: Parameter;
      static fromPretrained(embeddings: Tensor, options?: { freeze?: boolean; paddingIdx?: number | null }): Embedding;
    }
    class Flatten extends UnaryModule { constructor(startDim?: number | { startDim?: number; endDim?: number }, endDim?: number) }
    class Unflatten extends UnaryModule { constructor(dim: number, unflattenedSize: readonly number[]) }

    interface ConvOptions extends FactoryOptions {
      stride?: IntOrPair; padding?: IntOrPair | 'same' | 'valid'; dilation?: IntOrPair; groups?: number; bias?: boolean;
      paddingMode?: 'zeros' | 'reflect' | 'replicate' | 'circular';
    }
    class Conv1d extends UnaryModule {
      constructor(inChannels: number, outChannels: number, kernelSize: IntOrPair, ...rest: Array<IntOrPair | string | boolean | ConvOptions>);
      weight: Parameter; bias: Parameter | null;
    }
    class Conv2d extends UnaryModule {
      constructor(inChannels: number, outChannels: number, kernelSize: IntOrPair, ...rest: Array<IntOrPair | string | boolean | ConvOptions>);
      weight: Parameter; bias: Parameter | null;
    }
    class ConvTranspose2d extends Module {
      constructor(inChannels: number, outChannels: number, kernelSize: IntOrPair, ...rest: Array<IntOrPair | boolean | (ConvOptions & { outputPadding?: IntOrPair })>);
      weight: Parameter; bias: Parameter | null;
      forward(input: Tensor, outputSize?: readonly number[]): Tensor;
    }
    interface ConvTranspose2d { (input: Tensor, outputSize?: readonly number[]): Tensor }
    class MaxPool2d extends Module {
      constructor(kernelSize: IntOrPair, ...rest: Array<IntOrPair | boolean | null | { stride?: IntOrPair | null; padding?: IntOrPair; dilation?: IntOrPair; returnIndices?: boolean; ceilMode?: boolean }>);
    }
    interface MaxPool2d { (input: Tensor): any }
    class AvgPool2d extends UnaryModule {
      constructor(kernelSize: IntOrPair, ...rest: Array<IntOrPair | boolean | null | { stride?: IntOrPair | null; padding?: IntOrPair; ceilMode?: boolean; countIncludePad?: boolean; divisorOverride?: number | null }>);
    }
    class AdaptiveAvgPool2d extends UnaryModule { constructor(outputSize: number | readonly (number | null)[]) }

    interface BatchNormOptions extends FactoryOptions { eps?: number; momentum?: number | null; affine?: boolean; trackRunningStats?: boolean }
    class BatchNorm1d extends UnaryModule {
      constructor(numFeatures: number, ...rest: Array<number | null | boolean | BatchNormOptions>);
      weight: Parameter | null; bias: Parameter | null; runningMean: Tensor | null; runningVar: Tensor | null; numBatchesTracked: Tensor | null;
      resetRunningStats(): void;
    }
    class BatchNorm2d extends BatchNorm1d {}
    class LayerNorm extends UnaryModule {
      constructor(normalizedShape: number | readonly number[], eps?: number | (FactoryOptions & { eps?: number; elementwiseAffine?: boolean; bias?: boolean }), elementwiseAffine?: boolean);
      weight: Parameter | null; bias: Parameter | null;
    }
    class GroupNorm extends UnaryModule {
      constructor(numGroups: number, numChannels: number, eps?: number | (FactoryOptions & { eps?: number; affine?: boolean }), affine?: boolean);
      weight: Parameter | null; bias: Parameter | null;
    }

    // ---- convolution, pooling, padding, normalisation and upsampling beyond the above
    //      (lib/nn/conv.js, pooling.js, fold.js, padding.js, norm_instance.js, upsampling.js)
    interface PoolOptions { stride?: IntOrPair | null; padding?: IntOrPair; dilation?: IntOrPair; returnIndices?: boolean; ceilMode?: boolean }
    /** (values, indices) with PyTorch's names; indices are flat positions in each input plane. */
    type PoolWithIndices = [Tensor, Tensor] & { values: Tensor; indices: Tensor };
    class Conv3d extends UnaryModule {
      constructor(inChannels: number, outChannels: number, kernelSize: IntOrPair, ...rest: Array<IntOrPair | string | boolean | ConvOptions>);
      weight: Parameter; bias: Parameter | null;
    }
    class ConvTranspose1d extends Module {
      constructor(inChannels: number, outChannels: number, kernelSize: IntOrPair, ...rest: Array<IntOrPair | boolean | (ConvOptions & { outputPadding?: IntOrPair })>);
      weight: Parameter; bias: Parameter | null;
      forward(input: Tensor, outputSize?: readonly number[] | { outputSize?: readonly number[] }): Tensor;
    }
    interface ConvTranspose1d { (input: Tensor, outputSize?: readonly number[] | { outputSize?: readonly number[] }): Tensor }
    class ConvTranspose3d extends ConvTranspose1d {}
    class Fold extends UnaryModule {
      constructor(outputSize: IntOrPair, kernelSize: IntOrPair, ...rest: Array<IntOrPair | { dilation?: IntOrPair; padding?: IntOrPair; stride?: IntOrPair }>);
    }
    class Unfold extends UnaryModule {
      constructor(kernelSize: IntOrPair, ...rest: Array<IntOrPair | { dilation?: IntOrPair; padding?: IntOrPair; stride?: IntOrPair }>);
    }
    class MaxPool1d extends Module { constructor(kernelSize: IntOrPair, ...rest: Array<IntOrPair | boolean | null | PoolOptions>) }
    interface MaxPool1d { (input: Tensor): any }
    class MaxPool3d extends MaxPool1d {}
    class AvgPool1d extends UnaryModule {
      constructor(kernelSize: IntOrPair, ...rest: Array<IntOrPair | boolean | null | { stride?: IntOrPair | null; padding?: IntOrPair; ceilMode?: boolean; countIncludePad?: boolean }>);
    }
    class AvgPool3d extends UnaryModule {
      constructor(kernelSize: IntOrPair, ...rest: Array<IntOrPair | boolean | null | { stride?: IntOrPair | null; padding?: IntOrPair; ceilMode?: boolean; countIncludePad?: boolean; divisorOverride?: number | null }>);
    }
    class AdaptiveAvgPool1d extends UnaryModule { constructor(outputSize: IntOrPair) }
    class AdaptiveAvgPool3d extends UnaryModule { constructor(outputSize: number | readonly (number | null)[]) }
    class AdaptiveMaxPool1d extends Module { constructor(outputSize: number | readonly (number | null)[], returnIndices?: boolean | { returnIndices?: boolean }) }
    interface AdaptiveMaxPool1d { (input: Tensor): any }
    class AdaptiveMaxPool2d extends AdaptiveMaxPool1d {}
    class AdaptiveMaxPool3d extends AdaptiveMaxPool1d {}
    class LPPool1d extends UnaryModule {
      constructor(normType: number, kernelSize: IntOrPair, stride?: IntOrPair | null | { stride?: IntOrPair | null; ceilMode?: boolean }, ceilMode?: boolean);
    }
    class LPPool2d extends LPPool1d {}
    interface FractionalMaxPoolOptions { outputSize?: IntOrPair | null; outputRatio?: number | readonly number[] | null; returnIndices?: boolean; _randomSamples?: Tensor | null }
    class FractionalMaxPool2d extends Module { constructor(kernelSize: IntOrPair, ...rest: Array<IntOrPair | number | boolean | Tensor | null | FractionalMaxPoolOptions>) }
    interface FractionalMaxPool2d { (input: Tensor): any }
    class FractionalMaxPool3d extends FractionalMaxPool2d {}
    class MaxUnpool1d extends Module {
      constructor(kernelSize: IntOrPair, stride?: IntOrPair | null | { stride?: IntOrPair | null; padding?: IntOrPair }, padding?: IntOrPair);
      forward(input: Tensor, indices: Tensor, outputSize?: readonly number[] | null): Tensor;
    }
    interface MaxUnpool1d { (input: Tensor, indices: Tensor, outputSize?: readonly number[] | null): Tensor }
    class MaxUnpool2d extends MaxUnpool1d {}
    class MaxUnpool3d extends MaxUnpool1d {}
    class BatchNorm3d extends BatchNorm1d {}
    class InstanceNorm1d extends UnaryModule {
      constructor(numFeatures: number, ...rest: Array<number | null | boolean | BatchNormOptions>);
      weight: Parameter | null; bias: Parameter | null; runningMean: Tensor | null; runningVar: Tensor | null; numBatchesTracked: Tensor | null;
      resetRunningStats(): void;
    }
    class InstanceNorm2d extends InstanceNorm1d {}
    class InstanceNorm3d extends InstanceNorm1d {}
    class LocalResponseNorm extends UnaryModule { constructor(size: number, ...rest: Array<number | { alpha?: number; beta?: number; k?: number }>) }
    class CrossMapLRN2d extends LocalResponseNorm {}
    class ConstantPad1d extends UnaryModule { constructor(padding: IntOrPair, value: number) }
    class ConstantPad2d extends ConstantPad1d {}
    class ConstantPad3d extends ConstantPad1d {}
    class ZeroPad2d extends UnaryModule { constructor(padding: IntOrPair) }
    class ReflectionPad1d extends ZeroPad2d {}
    class ReflectionPad2d extends ZeroPad2d {}
    class ReflectionPad3d extends ZeroPad2d {}
    class ReplicationPad1d extends ZeroPad2d {}
    class ReplicationPad2d extends ZeroPad2d {}
    class ReplicationPad3d extends ZeroPad2d {}
    interface UpsampleOptions { size?: IntOrPair | null; scaleFactor?: number | readonly number[] | null; mode?: 'nearest' | 'linear' | 'bilinear' | 'bicubic' | 'trilinear' | 'area' | 'nearest-exact'; alignCorners?: boolean | null; recomputeScaleFactor?: boolean | null }
    class Upsample extends UnaryModule { constructor(size?: IntOrPair | null | UpsampleOptions, ...rest: Array<number | readonly number[] | string | boolean | null | UpsampleOptions>) }
    class UpsamplingNearest2d extends UnaryModule { constructor(size?: IntOrPair | null | { size?: IntOrPair | null; scaleFactor?: number | readonly number[] | null }, scaleFactor?: number | readonly number[] | null) }
    class UpsamplingBilinear2d extends UpsamplingNearest2d {}
    /** PyTorch's deprecated resizing functions, F.bilinear and F.multiHeadAttentionForward (lib/nn/upsampling.js, linear.js, attention.js). */
    namespace functional {
      type ResizeOptions = { size?: IntOrPair | null; scaleFactor?: number | readonly number[] | null };
      /** Deprecated: interpolate(input, size, scaleFactor, mode, alignCorners). */
      function upsample(input: Tensor, size?: IntOrPair | null | (ResizeOptions & { mode?: UpsampleOptions['mode']; alignCorners?: boolean | null }),
        scaleFactor?: number | readonly number[] | null, mode?: UpsampleOptions['mode'], alignCorners?: boolean | null): Tensor;
      /** Deprecated: interpolate with mode 'nearest'. */
      function upsampleNearest(input: Tensor, size?: IntOrPair | null | ResizeOptions, scaleFactor?: number | readonly number[] | null): Tensor;
      /** Deprecated: interpolate with mode 'bilinear', alignCorners true. */
      function upsampleBilinear(input: Tensor, size?: IntOrPair | null | ResizeOptions, scaleFactor?: number | readonly number[] | null): Tensor;
      /** x1^T A x2 + b over the last dims; weight [out, in1, in2]. */
      function bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias?: Tensor | null | { bias?: Tensor | null }): Tensor;
      interface MhaOptions {
        training?: boolean; keyPaddingMask?: Tensor | null; needWeights?: boolean; attnMask?: Tensor | null; useSeparateProjWeight?: boolean;
        qProjWeight?: Tensor | null; kProjWeight?: Tensor | null; vProjWeight?: Tensor | null; staticK?: Tensor | null; staticV?: Tensor | null;
        averageAttnWeights?: boolean;
      }
      type MhaResult = [Tensor, Tensor | null] & { output: Tensor; weights: Tensor | null };
      /** Time-major 1-D convolution: input [T, B, Cin], weight [K, Cin, Cout], bias [Cout] (lib/nn/conv_tbc.js). */
      function convTbc(input: Tensor, weight: Tensor, bias: Tensor, pad?: number | { pad?: number }): Tensor;
      /** PyTorch's functional multi-head attention over (L, N, E) query, (S, N, E) key/value (lib/nn/attention.js). */
      function multiHeadAttentionForward(query: Tensor, key: Tensor, value: Tensor, embedDimToCheck: number, numHeads: number,
        inProjWeight: Tensor | null, inProjBias: Tensor | null, biasK: Tensor | null, biasV: Tensor | null, addZeroAttn: boolean, dropoutP: number,
        outProjWeight: Tensor, outProjBias: Tensor | null, ...rest: Array<boolean | Tensor | null | MhaOptions>): MhaResult;
    }

    /** kd.nn.functional composites (lib/nn/functional_conv.js, functional_pool.js, norm_instance.js). */
    namespace functional {
      type ConvPadding = IntOrPair | 'same' | 'valid';
      function conv3d(input: Tensor, weight: Tensor, bias?: Tensor | null, stride?: IntOrPair, padding?: ConvPadding, dilation?: IntOrPair, groups?: number,
        options?: { bias?: Tensor | null; stride?: IntOrPair; padding?: ConvPadding; dilation?: IntOrPair; groups?: number }): Tensor;
      function conv3d(input: Tensor, weight: Tensor, options: { bias?: Tensor | null; stride?: IntOrPair; padding?: ConvPadding; dilation?: IntOrPair; groups?: number }): Tensor;
      interface ConvTransposeOptions { bias?: Tensor | null; stride?: IntOrPair; padding?: IntOrPair; outputPadding?: IntOrPair; groups?: number; dilation?: IntOrPair }
      function convTranspose1d(input: Tensor, weight: Tensor, bias?: Tensor | null | ConvTransposeOptions, stride?: IntOrPair, padding?: IntOrPair, outputPadding?: IntOrPair, groups?: number, dilation?: IntOrPair, options?: ConvTransposeOptions): Tensor;
      function convTranspose3d(input: Tensor, weight: Tensor, bias?: Tensor | null | ConvTransposeOptions, stride?: IntOrPair, padding?: IntOrPair, outputPadding?: IntOrPair, groups?: number, dilation?: IntOrPair, options?: ConvTransposeOptions): Tensor;
      interface BlockOptions { dilation?: IntOrPair; padding?: IntOrPair; stride?: IntOrPair }
      function unfold(input: Tensor, kernelSize: IntOrPair, dilation?: IntOrPair | BlockOptions, padding?: IntOrPair, stride?: IntOrPair, options?: BlockOptions): Tensor;
      function fold(input: Tensor, outputSize: IntOrPair, kernelSize: IntOrPair, dilation?: IntOrPair | BlockOptions, padding?: IntOrPair, stride?: IntOrPair, options?: BlockOptions): Tensor;
      type PoolArg = IntOrPair | boolean | null | PoolOptions;
      function maxPool1d(input: Tensor, kernelSize: IntOrPair, ...rest: PoolArg[]): any;
      function maxPool3d(input: Tensor, kernelSize: IntOrPair, ...rest: PoolArg[]): any;
      function maxPool1dWithIndices(input: Tensor, kernelSize: IntOrPair, ...rest: PoolArg[]): PoolWithIndices;
      function maxPool3dWithIndices(input: Tensor, kernelSize: IntOrPair, ...rest: PoolArg[]): PoolWithIndices;
      type AvgPoolArg = IntOrPair | boolean | null | { stride?: IntOrPair | null; padding?: IntOrPair; ceilMode?: boolean; countIncludePad?: boolean; divisorOverride?: number | null };
      function avgPool1d(input: Tensor, kernelSize: IntOrPair, ...rest: AvgPoolArg[]): Tensor;
      function avgPool3d(input: Tensor, kernelSize: IntOrPair, ...rest: AvgPoolArg[]): Tensor;
      function adaptiveAvgPool1d(input: Tensor, outputSize: IntOrPair): Tensor;
      function adaptiveAvgPool3d(input: Tensor, outputSize: number | readonly (number | null)[]): Tensor;
      type AdaptiveSize = number | readonly (number | null)[];
      function adaptiveMaxPool1d(input: Tensor, outputSize: AdaptiveSize, returnIndices?: boolean | { returnIndices?: boolean }): any;
      function adaptiveMaxPool2d(input: Tensor, outputSize: AdaptiveSize, returnIndices?: boolean | { returnIndices?: boolean }): any;
      function adaptiveMaxPool3d(input: Tensor, outputSize: AdaptiveSize, returnIndices?: boolean | { returnIndices?: boolean }): any;
      function adaptiveMaxPool1dWithIndices(input: Tensor, outputSize: AdaptiveSize): PoolWithIndices;
      function adaptiveMaxPool2dWithIndices(input: Tensor, outputSize: AdaptiveSize): PoolWithIndices;
      function adaptiveMaxPool3dWithIndices(input: Tensor, outputSize: AdaptiveSize): PoolWithIndices;
      type FractionalArg = IntOrPair | number | boolean | Tensor | null | FractionalMaxPoolOptions;
      function fractionalMaxPool2d(input: Tensor, kernelSize: IntOrPair, ...rest: FractionalArg[]): any;
      function fractionalMaxPool3d(input: Tensor, kernelSize: IntOrPair, ...rest: FractionalArg[]): any;
      function fractionalMaxPool2dWithIndices(input: Tensor, kernelSize: IntOrPair, ...rest: FractionalArg[]): PoolWithIndices;
      function fractionalMaxPool3dWithIndices(input: Tensor, kernelSize: IntOrPair, ...rest: FractionalArg[]): PoolWithIndices;
      function lpPool1d(input: Tensor, normType: number, kernelSize: IntOrPair, stride?: IntOrPair | null | { stride?: IntOrPair | null; ceilMode?: boolean }, ceilMode?: boolean): Tensor;
      function lpPool2d(input: Tensor, normType: number, kernelSize: IntOrPair, stride?: IntOrPair | null | { stride?: IntOrPair | null; ceilMode?: boolean }, ceilMode?: boolean): Tensor;
      type UnpoolArg = IntOrPair | null | { stride?: IntOrPair | null; padding?: IntOrPair; outputSize?: readonly number[] | null };
      function maxUnpool1d(input: Tensor, indices: Tensor, kernelSize: IntOrPair, ...rest: UnpoolArg[]): Tensor;
      function maxUnpool2d(input: Tensor, indices: Tensor, kernelSize: IntOrPair, ...rest: UnpoolArg[]): Tensor;
      function maxUnpool3d(input: Tensor, indices: Tensor, kernelSize: IntOrPair, ...rest: UnpoolArg[]): Tensor;
      interface InstanceNormOptions { runningMean?: Tensor | null; runningVar?: Tensor | null; weight?: Tensor | null; bias?: Tensor | null; useInputStats?: boolean; momentum?: number; eps?: number }
      function instanceNorm(input: Tensor, runningMean?: Tensor | null | InstanceNormOptions, runningVar?: Tensor | null, weight?: Tensor | null, bias?: Tensor | null,
        useInputStats?: boolean, momentum?: number, eps?: number, options?: InstanceNormOptions): Tensor;
      function localResponseNorm(input: Tensor, size: number, alpha?: number | { alpha?: number; beta?: number; k?: number }, beta?: number, k?: number,
        options?: { alpha?: number; beta?: number; k?: number }): Tensor;
    }

    class ReLU extends UnaryModule { constructor(inplace?: boolean | { inplace?: boolean }) }
    class LeakyReLU extends UnaryModule { constructor(negativeSlope?: number | { negativeSlope?: number; inplace?: boolean }, inplace?: boolean) }
    class GELU extends UnaryModule { constructor(approximate?: 'none' | 'tanh' | { approximate?: 'none' | 'tanh' }) }
    class SiLU extends UnaryModule { constructor(inplace?: boolean | { inplace?: boolean }) }
    class Tanh extends UnaryModule {}
    class Sigmoid extends UnaryModule {}
    class Softmax extends UnaryModule { constructor(dim?: number | null | { dim?: number | null }) }
    class LogSoftmax extends UnaryModule { constructor(dim?: number | null | { dim?: number | null }) }
    class Dropout extends UnaryModule { constructor(p?: number | { p?: number; inplace?: boolean }, inplace?: boolean) }

    /** Runs its modules in order. `new Sequential(a, b)` or `new Sequential({name: a, ...})`. */
    class Sequential extends UnaryModule {
      constructor(...modules: Module[]);
      constructor(named: Record<string, Module> | Map<string, Module>);
      readonly length: number;
      [index: number]: Module;
      at(index: number): Module;
      set(index: number, module: Module): void;
      append(module: Module): this;
      extend(modules: Iterable<Module>): this;
      insert(index: number, module: Module): void;
      pop(index?: number): Module;
      slice(start?: number, end?: number): Sequential;
      [Symbol.iterator](): Iterator<Module>;
    }
    class ModuleList extends Module {
      constructor(modules?: Iterable<Module>);
      readonly length: number;
      [index: number]: Module;
      at(index: number): Module;
      set(index: number, module: Module): void;
      append(module: Module): this;
      extend(modules: Iterable<Module>): this;
      insert(index: number, module: Module): void;
      pop(index?: number): Module;
      slice(start?: number, end?: number): ModuleList;
      [Symbol.iterator](): Iterator<Module>;
    }
    /** Parameters in a list (a Tensor is made a Parameter); registered under '0', '1', ... */
    class ParameterList extends Module {
      constructor(values?: Iterable<Tensor | any>);
      readonly length: number;
      [index: number]: Parameter;
      at(index: number): Parameter;
      set(index: number, value: Tensor | any): void;
      append(value: Tensor | any): this;
      extend(values: Iterable<Tensor | any>): this;
      [Symbol.iterator](): Iterator<Parameter>;
    }
    /** Parameters by key (a Tensor is made a Parameter), in insertion order. */
    class ParameterDict extends Module {
      constructor(parameters?: Record<string, Tensor> | Map<string, Tensor> | Iterable<[string, Tensor]> | ParameterDict);
      readonly length: number;
      get(key: string, defaultValue?: any): Parameter;
      set(key: string, value: Tensor | any): void;
      has(key: string): boolean;
      pop(key: string): Parameter;
      popitem(): [string, Parameter];
      setdefault(key: string, value?: Tensor | null): Parameter;
      delete(key: string): boolean;
      clear(): void;
      keys(): string[];
      values(): Parameter[];
      entries(): [string, Parameter][];
      items(): [string, Parameter][];
      copy(): ParameterDict;
      update(parameters: Record<string, Tensor> | Map<string, Tensor> | Iterable<[string, Tensor]> | ParameterDict): void;
      static fromkeys(keys: Iterable<string>, value?: Tensor | null): ParameterDict;
      [Symbol.iterator](): Iterator<string>;
    }

    /** A lazy module: parameters made by the first call, from its input's size; it then becomes an instance of its layer. */
    interface LazyModule { hasUninitializedParams(): boolean; initializeParameters(input: Tensor): void }
    /** LazyLinear(outFeatures, bias?, options?): inFeatures from the input's last dim. */
    class LazyLinear extends UnaryModule implements LazyModule {
      constructor(outFeatures: number, bias?: boolean | (FactoryOptions & { bias?: boolean }), options?: FactoryOptions);
      constructor(options: FactoryOptions & { outFeatures: number; bias?: boolean });
      hasUninitializedParams(): boolean; initializeParameters(input: Tensor): void;
    }
    /** Lazy convolutions: the arguments of the layer without inChannels (the input's channel dim). */
    class LazyConv1d extends UnaryModule implements LazyModule {
      constructor(outChannels: number, kernelSize: IntOrPair, ...rest: Array<IntOrPair | string | boolean | ConvOptions>);
      hasUninitializedParams(): boolean; initializeParameters(input: Tensor): void;
    }
    class LazyConv2d extends LazyConv1d {}
    class LazyConvTranspose2d extends Module implements LazyModule {
      constructor(outChannels: number, kernelSize: IntOrPair, ...rest: Array<IntOrPair | boolean | (ConvOptions & { outputPadding?: IntOrPair })>);
      forward(input: Tensor, outputSize?: readonly number[]): Tensor;
      hasUninitializedParams(): boolean; initializeParameters(input: Tensor): void;
    }
    interface LazyConvTranspose2d { (input: Tensor, outputSize?: readonly number[]): Tensor }
    /** Lazy batch norms: numFeatures from the input's dim 1. */
    class LazyBatchNorm1d extends UnaryModule implements LazyModule {
      constructor(...rest: Array<number | null | boolean | BatchNormOptions>);
      hasUninitializedParams(): boolean; initializeParameters(input: Tensor): void;
    }
    class LazyBatchNorm2d extends LazyBatchNorm1d {}
    /** The lazy variant of a layer whose first constructor argument (`key` in an options object) is infer(input). */
    function lazy<C extends new (...args: any[]) => Module>(Base: C, key: string, infer: (input: Tensor, args: any[]) => number): new (...args: any[]) => InstanceType<C> & LazyModule;
    class ModuleDict extends Module {
      constructor(modules?: Record<string, Module> | Map<string, Module> | Iterable<[string, Module]>);
      readonly length: number;
      get(key: string): Module;
      set(key: string, module: Module): void;
      has(key: string): boolean;
      pop(key: string): Module;
      delete(key: string): boolean;
      clear(): void;
      keys(): string[];
      values(): Module[];
      entries(): [string, Module][];
      update(modules: Record<string, Module> | Map<string, Module> | Iterable<[string, Module]>): void;
      [Symbol.iterator](): Iterator<string>;
    }

    interface MultiheadAttentionForwardOptions {
      keyPaddingMask?: Tensor | null; needWeights?: boolean; attnMask?: Tensor | null; averageAttnWeights?: boolean; isCausal?: boolean;
    }
    /** [output, weights] with the names `output` and `weights` (weights null when needWeights is false). */
    type AttentionResult = [Tensor, Tensor | null] & { output: Tensor; weights: Tensor | null };
    class MultiheadAttention extends Module {
      constructor(embedDim: number, numHeads: number, options?: FactoryOptions & {
        dropout?: number; bias?: boolean; addBiasKv?: boolean; addZeroAttn?: boolean; kdim?: number | null; vdim?: number | null; batchFirst?: boolean;
      });
      constructor(embedDim: number, numHeads: number, dropout?: number, ...rest: any[]);
      inProjWeight: Parameter | null; inProjBias: Parameter | null; outProj: Linear;
      qProjWeight: Parameter | null; kProjWeight: Parameter | null; vProjWeight: Parameter | null;
      forward(query: Tensor, key: Tensor, value: Tensor, options?: MultiheadAttentionForwardOptions): AttentionResult;
    }
    interface MultiheadAttention { (query: Tensor, key: Tensor, value: Tensor, options?: MultiheadAttentionForwardOptions): AttentionResult }
    class TransformerEncoderLayer extends Module {
      constructor(dModel: number, nhead: number, options?: FactoryOptions & {
        dimFeedforward?: number; dropout?: number; activation?: 'relu' | 'gelu' | ((x: Tensor) => Tensor); layerNormEps?: number;
        batchFirst?: boolean; normFirst?: boolean; bias?: boolean;
      });
      constructor(dModel: number, nhead: number, dimFeedforward?: number, ...rest: any[]);
      selfAttn: MultiheadAttention; linear1: Linear; linear2: Linear; norm1: LayerNorm; norm2: LayerNorm;
      forward(src: Tensor, options?: { srcMask?: Tensor | null; srcKeyPaddingMask?: Tensor | null; isCausal?: boolean }): Tensor;
    }
    interface TransformerEncoderLayer { (src: Tensor, options?: { srcMask?: Tensor | null; srcKeyPaddingMask?: Tensor | null; isCausal?: boolean }): Tensor }
    interface TransformerDecoderForwardOptions {
      tgtMask?: Tensor | null; memoryMask?: Tensor | null; tgtKeyPaddingMask?: Tensor | null; memoryKeyPaddingMask?: Tensor | null;
      /** A causal mask where tgtMask / memoryMask is not given (MultiheadAttention's isCausal). */
      tgtIsCausal?: boolean; memoryIsCausal?: boolean;
    }
    interface TransformerLayerOptions extends FactoryOptions {
      dimFeedforward?: number; dropout?: number; activation?: 'relu' | 'gelu' | ((x: Tensor) => Tensor); layerNormEps?: number;
      batchFirst?: boolean; normFirst?: boolean;
    }
    /** Self-attention, attention over memory, feed-forward; a residual and layer norm around each. */
    class TransformerDecoderLayer extends Module {
      constructor(dModel: number, nhead: number, options?: TransformerLayerOptions & { bias?: boolean });
      constructor(dModel: number, nhead: number, dimFeedforward?: number, ...rest: any[]);
      selfAttn: MultiheadAttention; multiheadAttn: MultiheadAttention; linear1: Linear; linear2: Linear;
      norm1: LayerNorm; norm2: LayerNorm; norm3: LayerNorm; normFirst: boolean;
      forward(tgt: Tensor, memory: Tensor, options?: TransformerDecoderForwardOptions): Tensor;
    }
    interface TransformerDecoderLayer { (tgt: Tensor, memory: Tensor, options?: TransformerDecoderForwardOptions): Tensor }
    /**
     * numLayers deep copies of encoderLayer, then norm. In eval mode without autograd, with a key padding mask and
     * enableNestedTensor, the result is PyTorch's nested-tensor one: zero at padded positions, as long as the longest sequence.
     */
    class TransformerEncoder extends Module {
      constructor(encoderLayer: Module, numLayers: number, norm?: Module | null, options?: { enableNestedTensor?: boolean; maskCheck?: boolean });
      constructor(encoderLayer: Module, numLayers: number, options?: { norm?: Module | null; enableNestedTensor?: boolean; maskCheck?: boolean });
      layers: ModuleList; numLayers: number; norm: Module | null;
      forward(src: Tensor, options?: { mask?: Tensor | null; srcKeyPaddingMask?: Tensor | null; isCausal?: boolean }): Tensor;
    }
    interface TransformerEncoder { (src: Tensor, options?: { mask?: Tensor | null; srcKeyPaddingMask?: Tensor | null; isCausal?: boolean }): Tensor }
    /** numLayers deep copies of decoderLayer, then norm. */
    class TransformerDecoder extends Module {
      constructor(decoderLayer: Module, numLayers: number, norm?: Module | null);
      constructor(decoderLayer: Module, numLayers: number, options?: { norm?: Module | null });
      layers: ModuleList; numLayers: number; norm: Module | null;
      forward(tgt: Tensor, memory: Tensor, options?: TransformerDecoderForwardOptions): Tensor;
    }
    interface TransformerDecoder { (tgt: Tensor, memory: Tensor, options?: TransformerDecoderForwardOptions): Tensor }
    interface TransformerForwardOptions extends TransformerDecoderForwardOptions { srcMask?: Tensor | null; srcKeyPaddingMask?: Tensor | null }
    /** The encoder-decoder transformer; parameters with more than one dimension start xavierUniform_. */
    class Transformer extends Module {
      constructor(options?: TransformerLayerOptions & {
        dModel?: number; nhead?: number; numEncoderLayers?: number; numDecoderLayers?: number;
        customEncoder?: Module | null; customDecoder?: Module | null;
      });
      constructor(dModel?: number, nhead?: number, numEncoderLayers?: number, numDecoderLayers?: number, ...rest: any[]);
      encoder: Module; decoder: Module; dModel: number; nhead: number; batchFirst: boolean;
      forward(src: Tensor, tgt: Tensor, options?: TransformerForwardOptions): Tensor;
      /** [sz, sz]: -Infinity above the diagonal, 0 elsewhere (float32 unless dtype is given). */
      static generateSquareSubsequentMask(sz: number, device?: DeviceLike | FactoryOptions): Tensor;
    }
    interface Transformer { (src: Tensor, tgt: Tensor, options?: TransformerForwardOptions): Tensor }

    /** Losses: loss(input, target) -> Tensor. */
    class LossModule extends Module { reduction: Reduction; forward(input: Tensor, target: Tensor): Tensor }
    interface LossModule { (input: Tensor, target: Tensor): Tensor }
    class MSELoss extends LossModule { constructor(reduction?: Reduction | { reduction?: Reduction }) }
    class L1Loss extends LossModule { constructor(reduction?: Reduction | { reduction?: Reduction }) }
    class SmoothL1Loss extends LossModule { constructor(reduction?: Reduction | { reduction?: Reduction; beta?: number }, beta?: number) }
    class CrossEntropyLoss extends LossModule {
      constructor(options?: { weight?: Tensor | null; ignoreIndex?: number; reduction?: Reduction; labelSmoothing?: number });
      constructor(weight?: Tensor | null, ignoreIndex?: number, reduction?: Reduction, labelSmoothing?: number);
    }
    class NLLLoss extends LossModule {
      constructor(options?: { weight?: Tensor | null; ignoreIndex?: number; reduction?: Reduction });
      constructor(weight?: Tensor | null, ignoreIndex?: number, reduction?: Reduction);
    }
    class BCELoss extends LossModule {
      constructor(options?: { weight?: Tensor | null; reduction?: Reduction });
      constructor(weight?: Tensor | null, reduction?: Reduction);
    }
    class BCEWithLogitsLoss extends LossModule {
      constructor(options?: { weight?: Tensor | null; reduction?: Reduction; posWeight?: Tensor | null });
      constructor(weight?: Tensor | null, reduction?: Reduction, posWeight?: Tensor | null);
    }

    /** More activations (lib/nn/activation_extra.js): PyTorch 1.13's arguments, positional or in an options object. */
    class ELU extends UnaryModule { constructor(alpha?: number | { alpha?: number; inplace?: boolean }, inplace?: boolean); alpha: number; inplace: boolean }
    class CELU extends UnaryModule { constructor(alpha?: number | { alpha?: number; inplace?: boolean }, inplace?: boolean); alpha: number; inplace: boolean }
    class SELU extends UnaryModule { constructor(inplace?: boolean | { inplace?: boolean }) }
    class GLU extends UnaryModule { constructor(dim?: number | { dim?: number }); dim: number }
    class Hardshrink extends UnaryModule { constructor(lambd?: number | { lambd?: number }); lambd: number }
    class Softshrink extends UnaryModule { constructor(lambd?: number | { lambd?: number }); lambd: number }
    class Hardsigmoid extends UnaryModule { constructor(inplace?: boolean | { inplace?: boolean }) }
    class Hardswish extends UnaryModule { constructor(inplace?: boolean | { inplace?: boolean }) }
    class Hardtanh extends UnaryModule {
      constructor(minVal?: number | { minVal?: number; maxVal?: number; inplace?: boolean }, maxVal?: number, inplace?: boolean);
      minVal: number; maxVal: number; inplace: boolean;
    }
    class ReLU6 extends Hardtanh { constructor(inplace?: boolean | { inplace?: boolean }) }
    class LogSigmoid extends UnaryModule {}
    class Mish extends UnaryModule { constructor(inplace?: boolean | { inplace?: boolean }) }
    class Softplus extends UnaryModule { constructor(beta?: number | { beta?: number; threshold?: number }, threshold?: number); beta: number; threshold: number }
    class Softsign extends UnaryModule {}
    class Tanhshrink extends UnaryModule {}
    class Threshold extends UnaryModule {
      constructor(threshold: number, value: number, inplace?: boolean | { inplace?: boolean });
      constructor(options: { threshold: number; value: number; inplace?: boolean });
      threshold: number; value: number; inplace: boolean;
    }
    /** Random slopes in [lower, upper] for negative inputs in training, their mean in eval. */
    class RReLU extends UnaryModule { constructor(lower?: number | { lower?: number; upper?: number; inplace?: boolean }, upper?: number, inplace?: boolean); lower: number; upper: number }
    class Softmin extends UnaryModule { constructor(dim?: number | null | { dim?: number | null }); dim: number | null }
    /** softmax over the channels of (C, H, W) or (N, C, H, W) input. */
    class Softmax2d extends UnaryModule {}
    /** A learnable slope for negative inputs: one, or one per channel (dim 1). */
    class PReLU extends UnaryModule {
      constructor(numParameters?: number | ({ numParameters?: number; init?: number } & FactoryOptions), init?: number, options?: FactoryOptions);
      numParameters: number; weight: Parameter;
    }

    /** Channel-wise and alpha dropouts (lib/nn/dropout.js): DropoutNd(p = 0.5, inplace = false). */
    class Dropout1d extends UnaryModule { constructor(p?: number | { p?: number; inplace?: boolean }, inplace?: boolean); p: number; inplace: boolean }
    class Dropout2d extends Dropout1d {}
    class Dropout3d extends Dropout1d {}
    class AlphaDropout extends Dropout1d {}
    class FeatureAlphaDropout extends Dropout1d {}

    /** More losses (lib/nn/loss_extra.js). sizeAverage/reduce are PyTorch's legacy arguments: they override reduction. */
    interface LegacyReduction { sizeAverage?: boolean | null; reduce?: boolean | null; reduction?: Reduction }
    class KLDivLoss extends LossModule {
      constructor(options?: { sizeAverage?: boolean | null; reduce?: boolean | null; reduction?: Reduction | 'batchmean'; logTarget?: boolean });
      constructor(sizeAverage?: boolean | null, reduce?: boolean | null, reduction?: Reduction | 'batchmean', logTarget?: boolean);
    }
    class HuberLoss extends LossModule { constructor(reduction?: Reduction | { reduction?: Reduction; delta?: number }, delta?: number) }
    class PoissonNLLLoss extends LossModule {
      constructor(options?: LegacyReduction & { logInput?: boolean; full?: boolean; eps?: number });
      constructor(logInput?: boolean, full?: boolean, sizeAverage?: boolean | null, eps?: number, reduce?: boolean | null, reduction?: Reduction);
    }
    /** loss(input, target, var). */
    class GaussianNLLLoss extends Module {
      constructor(options?: { full?: boolean; eps?: number; reduction?: Reduction });
      reduction: Reduction;
      forward(input: Tensor, target: Tensor, variance: Tensor): Tensor;
    }
    interface GaussianNLLLoss { (input: Tensor, target: Tensor, variance: Tensor): Tensor }
    /** loss(input1, input2, target). */
    class MarginRankingLoss extends Module {
      constructor(margin?: number | (LegacyReduction & { margin?: number }), sizeAverage?: boolean | null, reduce?: boolean | null, reduction?: Reduction);
      reduction: Reduction;
      forward(input1: Tensor, input2: Tensor, target: Tensor): Tensor;
    }
    interface MarginRankingLoss { (input1: Tensor, input2: Tensor, target: Tensor): Tensor }
    class HingeEmbeddingLoss extends LossModule {
      constructor(margin?: number | (LegacyReduction & { margin?: number }), sizeAverage?: boolean | null, reduce?: boolean | null, reduction?: Reduction);
    }
    /** target: class indices per row, ended by the first -1. */
    class MultiLabelMarginLoss extends LossModule { constructor(sizeAverage?: boolean | null | LegacyReduction, reduce?: boolean | null, reduction?: Reduction) }
    class SoftMarginLoss extends LossModule { constructor(sizeAverage?: boolean | null | LegacyReduction, reduce?: boolean | null, reduction?: Reduction) }
    class MultiLabelSoftMarginLoss extends LossModule {
      constructor(options?: LegacyReduction & { weight?: Tensor | null });
      constructor(weight?: Tensor | null, sizeAverage?: boolean | null, reduce?: boolean | null, reduction?: Reduction);
    }
    /** loss(input1, input2, target). */
    class CosineEmbeddingLoss extends MarginRankingLoss {}
    class MultiMarginLoss extends LossModule {
      constructor(options?: LegacyReduction & { p?: 1 | 2; margin?: number; weight?: Tensor | null });
      constructor(p?: 1 | 2, margin?: number, weight?: Tensor | null, sizeAverage?: boolean | null, reduce?: boolean | null, reduction?: Reduction);
    }
    /** loss(anchor, positive, negative). */
    class TripletMarginLoss extends Module {
      constructor(options?: LegacyReduction & { margin?: number; p?: number; eps?: number; swap?: boolean });
      constructor(margin?: number, p?: number, eps?: number, swap?: boolean, sizeAverage?: boolean | null, reduce?: boolean | null, reduction?: Reduction);
      reduction: Reduction;
      forward(anchor: Tensor, positive: Tensor, negative: Tensor): Tensor;
    }
    interface TripletMarginLoss { (anchor: Tensor, positive: Tensor, negative: Tensor): Tensor }
    class TripletMarginWithDistanceLoss extends Module {
      constructor(options?: { distanceFunction?: ((x: Tensor, y: Tensor) => Tensor) | null; margin?: number; swap?: boolean; reduction?: Reduction });
      reduction: Reduction;
      forward(anchor: Tensor, positive: Tensor, negative: Tensor): Tensor;
    }
    interface TripletMarginWithDistanceLoss { (anchor: Tensor, positive: Tensor, negative: Tensor): Tensor }
    type Lengths = Tensor | readonly number[] | number;
    /** Connectionist temporal classification: loss(logProbs (T, N, C) or (T, C), targets, inputLengths, targetLengths). */
    class CTCLoss extends Module {
      constructor(blank?: number | { blank?: number; reduction?: Reduction; zeroInfinity?: boolean }, reduction?: Reduction, zeroInfinity?: boolean);
      blank: number; reduction: Reduction; zeroInfinity: boolean;
      forward(logProbs: Tensor, targets: Tensor, inputLengths: Lengths, targetLengths: Lengths): Tensor;
    }
    interface CTCLoss { (logProbs: Tensor, targets: Tensor, inputLengths: Lengths, targetLengths: Lengths): Tensor }

    /** Distances, shuffles, bags (lib/nn/distance.js, shuffle.js, embedding_bag.js). */
    class PairwiseDistance extends Module {
      constructor(p?: number | { p?: number; eps?: number; keepdim?: boolean }, eps?: number, keepdim?: boolean);
      forward(x1: Tensor, x2: Tensor): Tensor;
    }
    interface PairwiseDistance { (x1: Tensor, x2: Tensor): Tensor }
    class CosineSimilarity extends Module {
      constructor(dim?: number | { dim?: number; eps?: number }, eps?: number);
      forward(x1: Tensor, x2: Tensor): Tensor;
    }
    interface CosineSimilarity { (x1: Tensor, x2: Tensor): Tensor }
    class PixelShuffle extends UnaryModule { constructor(upscaleFactor: number | { upscaleFactor: number }); upscaleFactor: number }
    class PixelUnshuffle extends UnaryModule { constructor(downscaleFactor: number | { downscaleFactor: number }); downscaleFactor: number }
    class ChannelShuffle extends UnaryModule { constructor(groups: number | { groups: number }); groups: number }
    type BagMode = 'sum' | 'mean' | 'max';
    interface EmbeddingBagOptions extends FactoryOptions {
      maxNorm?: number | null; normType?: number; scaleGradByFreq?: boolean; mode?: BagMode; sparse?: boolean;
      _weight?: Tensor | null; includeLastOffset?: boolean; paddingIdx?: number | null;
    }
    /** Sums, means or maxima of bags of embeddings: forward(input, offsets?, perSampleWeights?). */
    class EmbeddingBag extends Module {
      constructor(numEmbeddings: number, embeddingDim: number, options?: EmbeddingBagOptions);
      constructor(options: EmbeddingBagOptions & { numEmbeddings: number; embeddingDim: number });
      numEmbeddings: number; embeddingDim: number; mode: BagMode; paddingIdx: number | null; includeLastOffset: boolean; weight: Parameter;
      forward(input: Tensor, offsets?: Tensor | null, perSampleWeights?: Tensor | null): Tensor;
      static fromPretrained(embeddings: Tensor, options?: EmbeddingBagOptions & { freeze?: boolean }): EmbeddingBag;
    }
    interface EmbeddingBag { (input: Tensor, offsets?: Tensor | null, perSampleWeights?: Tensor | null): Tensor }
    type ASMOutput = [Tensor, Tensor] & { output: Tensor; loss: Tensor };
    /** Efficient softmax approximation: forward(input, target) -> [output, loss]; logProb(input); predict(input). */
    class AdaptiveLogSoftmaxWithLoss extends Module {
      constructor(inFeatures: number, nClasses: number, cutoffs: readonly number[], divValue?: number | ({ divValue?: number; headBias?: boolean } & FactoryOptions), headBias?: boolean);
      inFeatures: number; nClasses: number; cutoffs: number[]; divValue: number; headBias: boolean;
      shortlistSize: number; nClusters: number; headSize: number; head: Linear; tail: ModuleList;
      forward(input: Tensor, target: Tensor): ASMOutput;
      logProb(input: Tensor): Tensor;
      predict(input: Tensor): Tensor;
    }
    interface AdaptiveLogSoftmaxWithLoss { (input: Tensor, target: Tensor): ASMOutput }

    /** kd.nn.functional beyond the generated ops (lib/nn/functional_*.js, dropout.js, ctc.js, ...). */
    namespace functional {
      type R = Reduction;
      interface Legacy { sizeAverage?: boolean | null; reduce?: boolean | null; reduction?: R }
      // activations (inplace: write into input and return it)
      function relu(input: Tensor, inplace?: boolean): Tensor;
      function relu_(input: Tensor): Tensor;
      function relu6(input: Tensor, inplace?: boolean): Tensor;
      function elu(input: Tensor, alpha?: number, inplace?: boolean): Tensor;
      function elu_(input: Tensor, alpha?: number): Tensor;
      function selu(input: Tensor, inplace?: boolean): Tensor;
      function selu_(input: Tensor): Tensor;
      function celu(input: Tensor, alpha?: number | { alpha?: number; inplace?: boolean }, inplace?: boolean): Tensor;
      function celu_(input: Tensor, alpha?: number): Tensor;
      function leakyRelu(input: Tensor, negativeSlope?: number, inplace?: boolean): Tensor;
      function leakyRelu_(input: Tensor, negativeSlope?: number): Tensor;
      function hardtanh(input: Tensor, minVal?: number, maxVal?: number, inplace?: boolean): Tensor;
      function hardtanh_(input: Tensor, minVal?: number, maxVal?: number): Tensor;
      function silu(input: Tensor, inplace?: boolean): Tensor;
      function mish(input: Tensor, inplace?: boolean): Tensor;
      function hardsigmoid(input: Tensor, inplace?: boolean): Tensor;
      function hardswish(input: Tensor, inplace?: boolean): Tensor;
      function hardshrink(input: Tensor, lambd?: number | { lambd?: number }): Tensor;
      function softshrink(input: Tensor, lambd?: number | { lambd?: number }): Tensor;
      function tanhshrink(input: Tensor): Tensor;
      function softsign(input: Tensor): Tensor;
      function softmin(input: Tensor, dim?: number | null | { dim?: number | null; dtype?: DTypeLike | null }, _stacklevel?: number, dtype?: DTypeLike | null): Tensor;
      function threshold(input: Tensor, threshold: number, value: number, inplace?: boolean): Tensor;
      function threshold_(input: Tensor, threshold: number, value: number): Tensor;
      function glu(input: Tensor, dim?: number | { dim?: number }): Tensor;
      function prelu(input: Tensor, weight: Tensor): Tensor;
      function rrelu(input: Tensor, lower?: number | { lower?: number; upper?: number; training?: boolean; inplace?: boolean }, upper?: number, training?: boolean, inplace?: boolean): Tensor;
      function rrelu_(input: Tensor, lower?: number, upper?: number, training?: boolean): Tensor;
      function gumbelSoftmax(logits: Tensor, tau?: number | { tau?: number; hard?: boolean; eps?: number; dim?: number }, hard?: boolean, eps?: number, dim?: number): Tensor;
      function normalize(input: Tensor, p?: number | { p?: number; dim?: number; eps?: number; out?: Tensor | null }, dim?: number, eps?: number, out?: Tensor | null): Tensor;
      // dropouts
      interface DropoutOptions { p?: number; training?: boolean; inplace?: boolean }
      function dropout(input: Tensor, p?: number | DropoutOptions, training?: boolean, inplace?: boolean): Tensor;
      function dropout1d(input: Tensor, p?: number | DropoutOptions, training?: boolean, inplace?: boolean): Tensor;
      function dropout2d(input: Tensor, p?: number | DropoutOptions, training?: boolean, inplace?: boolean): Tensor;
      function dropout3d(input: Tensor, p?: number | DropoutOptions, training?: boolean, inplace?: boolean): Tensor;
      /** training defaults to false, as in PyTorch. */
      function alphaDropout(input: Tensor, p?: number | DropoutOptions, training?: boolean, inplace?: boolean): Tensor;
      function featureAlphaDropout(input: Tensor, p?: number | DropoutOptions, training?: boolean, inplace?: boolean): Tensor;
      // losses
      function klDiv(input: Tensor, target: Tensor, options?: { sizeAverage?: boolean | null; reduce?: boolean | null; reduction?: R | 'batchmean'; logTarget?: boolean }): Tensor;
      function klDiv(input: Tensor, target: Tensor, sizeAverage?: boolean | null, reduce?: boolean | null, reduction?: R | 'batchmean', logTarget?: boolean): Tensor;
      function huberLoss(input: Tensor, target: Tensor, reduction?: R | { reduction?: R; delta?: number }, delta?: number): Tensor;
      function poissonNllLoss(input: Tensor, target: Tensor, options?: Legacy & { logInput?: boolean; full?: boolean; eps?: number }): Tensor;
      function poissonNllLoss(input: Tensor, target: Tensor, logInput?: boolean, full?: boolean, sizeAverage?: boolean | null, eps?: number, reduce?: boolean | null, reduction?: R): Tensor;
      function gaussianNllLoss(input: Tensor, target: Tensor, variance: Tensor, full?: boolean | { full?: boolean; eps?: number; reduction?: R }, eps?: number, reduction?: R): Tensor;
      function marginRankingLoss(input1: Tensor, input2: Tensor, target: Tensor, margin?: number | (Legacy & { margin?: number }), sizeAverage?: boolean | null, reduce?: boolean | null, reduction?: R): Tensor;
      function hingeEmbeddingLoss(input: Tensor, target: Tensor, margin?: number | (Legacy & { margin?: number }), sizeAverage?: boolean | null, reduce?: boolean | null, reduction?: R): Tensor;
      function multilabelMarginLoss(input: Tensor, target: Tensor, sizeAverage?: boolean | null | Legacy, reduce?: boolean | null, reduction?: R): Tensor;
      function softMarginLoss(input: Tensor, target: Tensor, sizeAverage?: boolean | null | Legacy, reduce?: boolean | null, reduction?: R): Tensor;
      function multilabelSoftMarginLoss(input: Tensor, target: Tensor, weight?: Tensor | null | (Legacy & { weight?: Tensor | null }), sizeAverage?: boolean | null, reduce?: boolean | null, reduction?: R): Tensor;
      function cosineEmbeddingLoss(input1: Tensor, input2: Tensor, target: Tensor, margin?: number | (Legacy & { margin?: number }), sizeAverage?: boolean | null, reduce?: boolean | null, reduction?: R): Tensor;
      function multiMarginLoss(input: Tensor, target: Tensor, options?: Legacy & { p?: 1 | 2; margin?: number; weight?: Tensor | null }): Tensor;
      function multiMarginLoss(input: Tensor, target: Tensor, p?: 1 | 2, margin?: number, weight?: Tensor | null, sizeAverage?: boolean | null, reduce?: boolean | null, reduction?: R): Tensor;
      function tripletMarginLoss(anchor: Tensor, positive: Tensor, negative: Tensor, options?: Legacy & { margin?: number; p?: number; eps?: number; swap?: boolean }): Tensor;
      function tripletMarginLoss(anchor: Tensor, positive: Tensor, negative: Tensor, margin?: number, p?: number, eps?: number, swap?: boolean, sizeAverage?: boolean | null, reduce?: boolean | null, reduction?: R): Tensor;
      function tripletMarginWithDistanceLoss(anchor: Tensor, positive: Tensor, negative: Tensor, options?: { distanceFunction?: ((x: Tensor, y: Tensor) => Tensor) | null; margin?: number; swap?: boolean; reduction?: R }): Tensor;
      /** gridSample with its options after the grid (the generated declaration has the positional form). */
      function gridSample(input: Tensor, grid: Tensor, options: { mode?: 'bilinear' | 'nearest' | 'bicubic'; paddingMode?: 'zeros' | 'border' | 'reflection'; alignCorners?: boolean | null }): Tensor;
      /** The sampling grid (N, H, W, 2) of 2-D affine maps theta (N, 2, 3) for size [N, C, H, W], or (N, D, H, W, 3) of theta (N, 3, 4) for [N, C, D, H, W]; alignCorners defaults to false. Differentiable in theta. */
      function affineGrid(theta: Tensor, size: readonly number[], alignCorners?: boolean | null): Tensor;
      function affineGrid(theta: Tensor, size: readonly number[], options: { alignCorners?: boolean | null }): Tensor;
      function ctcLoss(logProbs: Tensor, targets: Tensor, inputLengths: Tensor | readonly number[] | number, targetLengths: Tensor | readonly number[] | number,
        blank?: number | { blank?: number; reduction?: R; zeroInfinity?: boolean }, reduction?: R, zeroInfinity?: boolean): Tensor;
      // distances, shuffles, bags
      function pairwiseDistance(x1: Tensor, x2: Tensor, p?: number | { p?: number; eps?: number; keepdim?: boolean }, eps?: number, keepdim?: boolean): Tensor;
      function cosineSimilarity(x1: Tensor, x2: Tensor, dim?: number | { dim?: number; eps?: number }, eps?: number): Tensor;
      function pdist(input: Tensor, p?: number | { p?: number }): Tensor;
      function pixelShuffle(input: Tensor, upscaleFactor: number): Tensor;
      function pixelUnshuffle(input: Tensor, downscaleFactor: number): Tensor;
      function channelShuffle(input: Tensor, groups: number): Tensor;
      function nativeChannelShuffle(input: Tensor, groups: number): Tensor;
      interface EmbeddingBagFnOptions {
        offsets?: Tensor | null; mode?: 'sum' | 'mean' | 'max'; perSampleWeights?: Tensor | null; includeLastOffset?: boolean; paddingIdx?: number | null;
        maxNorm?: number | null; normType?: number; scaleGradByFreq?: boolean; sparse?: boolean;
      }
      function embeddingBag(input: Tensor, weight: Tensor, options?: EmbeddingBagFnOptions): Tensor;
      function embeddingBag(input: Tensor, weight: Tensor, offsets: Tensor | null, options?: EmbeddingBagFnOptions): Tensor;
      function embeddingBag(input: Tensor, weight: Tensor, offsets?: Tensor | null, maxNorm?: number | null, normType?: number, scaleGradByFreq?: boolean,
        mode?: 'sum' | 'mean' | 'max', sparse?: boolean, perSampleWeights?: Tensor | null, includeLastOffset?: boolean, paddingIdx?: number | null): Tensor;
    }

    /** Weight initialisers (in place, under noGrad, seeded by kd.manualSeed); each returns the tensor. */
    namespace init {
      type Nonlinearity = 'linear' | 'conv1d' | 'conv2d' | 'sigmoid' | 'tanh' | 'relu' | 'leaky_relu' | 'selu' | string;
      type Mode = 'fan_in' | 'fan_out';
      function calculateGain(nonlinearity: Nonlinearity, param?: number | null): number;
      function uniform_<T extends Tensor>(tensor: T, a?: number | { a?: number; b?: number }, b?: number): T;
      function normal_<T extends Tensor>(tensor: T, mean?: number | { mean?: number; std?: number }, std?: number): T;
      function truncNormal_<T extends Tensor>(tensor: T, mean?: number | { mean?: number; std?: number; a?: number; b?: number }, std?: number, a?: number, b?: number): T;
      function constant_<T extends Tensor>(tensor: T, val: number): T;
      function zeros_<T extends Tensor>(tensor: T): T;
      function ones_<T extends Tensor>(tensor: T): T;
      function xavierUniform_<T extends Tensor>(tensor: T, gain?: number | { gain?: number }): T;
      function xavierNormal_<T extends Tensor>(tensor: T, gain?: number | { gain?: number }): T;
      function kaimingUniform_<T extends Tensor>(tensor: T, a?: number | { a?: number; mode?: Mode; nonlinearity?: Nonlinearity }, mode?: Mode, nonlinearity?: Nonlinearity): T;
      function kaimingNormal_<T extends Tensor>(tensor: T, a?: number | { a?: number; mode?: Mode; nonlinearity?: Nonlinearity }, mode?: Mode, nonlinearity?: Nonlinearity): T;
      /** A (semi-)orthogonal matrix (QR of a normal draw), times gain; dims after the first are flattened. */
      function orthogonal_<T extends Tensor>(tensor: T, gain?: number | { gain?: number }): T;
      /** A 2-D tensor with ceil(sparsity * rows) zeros per column, the rest N(0, std^2). */
      function sparse_<T extends Tensor>(tensor: T, sparsity: number | { sparsity: number; std?: number }, std?: number): T;
      /** The Dirac delta of a 3-5 dim convolution weight (identity convolution), per group. */
      function dirac_<T extends Tensor>(tensor: T, groups?: number | { groups?: number }): T;
      /** The identity matrix (2-D). */
      function eye_<T extends Tensor>(tensor: T): T;
      /** [fanIn, fanOut] of a weight of 2 or more dims. */
      function _calculateFanInAndFanOut(tensor: Tensor): [number, number];
      /** PyTorch's deprecated names (they warn once): use the forms with the trailing underscore. */
      const uniform: typeof uniform_, normal: typeof normal_, constant: typeof constant_, eye: typeof eye_, dirac: typeof dirac_,
        xavierUniform: typeof xavierUniform_, xavierNormal: typeof xavierNormal_, kaimingUniform: typeof kaimingUniform_,
        kaimingNormal: typeof kaimingNormal_, orthogonal: typeof orthogonal_, sparse: typeof sparse_;
    }

    namespace utils {
      /** Scales gradients so their joint norm is at most maxNorm; returns the total norm (0-d). */
      function clipGradNorm_(parameters: Tensor | Iterable<Tensor>, maxNorm: number, normType?: number | 'inf' | { normType?: number | 'inf'; errorIfNonfinite?: boolean }, options?: { errorIfNonfinite?: boolean }): Tensor;
      function clipGradValue_(parameters: Tensor | Iterable<Tensor>, clipValue: number): void;
      function parametersToVector(parameters: Iterable<Tensor>): Tensor;
      /** Gives the parameters consecutive slices of vec as their data (they then share vec's storage). */
      function vectorToParameters(vec: Tensor, parameters: Iterable<Tensor>): void;
      /** The deprecated name of clipGradNorm_ (warns once). */
      function clipGradNorm(parameters: Tensor | Iterable<Tensor>, maxNorm: number, normType?: number | 'inf' | { normType?: number | 'inf'; errorIfNonfinite?: boolean }, options?: { errorIfNonfinite?: boolean }): Tensor;
      /** Reparametrises module[name] as g * v / ||v|| (parameters <name>G, <name>V; keys <name>_g, <name>_v). */
      function weightNorm<M extends Module>(module: M, name?: string | { name?: string; dim?: number | null }, dim?: number | null): M;
      function removeWeightNorm<M extends Module>(module: M, name?: string): M;
      /** Divides module[name] by its spectral norm (parameter <name>Orig, buffers <name>U, <name>V). */
      function spectralNorm<M extends Module>(module: M, name?: string | { name?: string; nPowerIterations?: number; eps?: number; dim?: number | null },
        nPowerIterations?: number, eps?: number, dim?: number | null): M;
      function removeSpectralNorm<M extends Module>(module: M, name?: string): M;
      /** new ModuleClass(...args) without running kd.nn.init's initialisers. */
      function skipInit<M extends Module, A extends any[]>(moduleClass: new (...args: A) => M, ...args: A): M;
      function fuseConvBnEval<M extends Module>(conv: M, bn: Module, transpose?: boolean): M;
      function fuseConvBnWeights(convW: Tensor, convB: Tensor | null, bnRm: Tensor, bnRv: Tensor, bnEps: number, bnW: Tensor | null, bnB: Tensor | null, transpose?: boolean): [Parameter, Parameter];
      function fuseLinearBnEval<M extends Module>(linear: M, bn: Module): M;
      function fuseLinearBnWeights(linearW: Tensor, linearB: Tensor | null, bnRm: Tensor, bnRv: Tensor, bnEps: number, bnW: Tensor, bnB: Tensor): [Parameter, Parameter];
      namespace fusion {
        const fuseConvBnEval: typeof utils.fuseConvBnEval, fuseConvBnWeights: typeof utils.fuseConvBnWeights,
          fuseLinearBnEval: typeof utils.fuseLinearBnEval, fuseLinearBnWeights: typeof utils.fuseLinearBnWeights;
      }
      namespace stateless {
        /** module(...args) with the named tensors ({'fc.weight': t}) in place of the module's own for the call. */
        function functionalCall(module: Module, parametersAndBuffers: Record<string, Tensor> | Map<string, Tensor>, args: any, kwargs?: object): any;
      }
      /** torch.nn.utils.parametrize: tensors computed from an original by modules. */
      namespace parametrize {
        /** The parametrizations of one tensor and its original(s) (module.parametrizations[name]). */
        class ParametrizationList extends ModuleList {
          readonly original: Tensor;
          rightInverse(value: Tensor | Tensor[]): void;
        }
        function registerParametrization<M extends Module>(module: M, tensorName: string, parametrization: Module, options?: { unsafe?: boolean }): M;
        function removeParametrizations<M extends Module>(module: M, tensorName: string, leaveParametrized?: boolean | { leaveParametrized?: boolean }): M;
        function isParametrized(module: Module, tensorName?: string | null): boolean;
        /** fn() with each parametrized tensor computed once. */
        function cached<T>(fn: () => T): T;
        /** The module's class before parametrizations were registered. */
        function typeBeforeParametrizations(module: Module): new (...args: any[]) => Module;
        /** Registers fromModule's parametrizations (all, or tensorName's) on toModule, sharing the originals. */
        function transferParametrizationsAndParams<M extends Module>(fromModule: Module, toModule: M, tensorName?: string | null | { tensorName?: string | null }): M;
      }
      namespace parametrizations {
        type OrthogonalMap = 'matrix_exp' | 'cayley' | 'householder';
        function orthogonal<M extends Module>(module: M, name?: string | { name?: string; orthogonalMap?: OrthogonalMap | null; useTrivialization?: boolean },
          orthogonalMap?: OrthogonalMap | null | { orthogonalMap?: OrthogonalMap | null; useTrivialization?: boolean }, options?: { useTrivialization?: boolean }): M;
        function spectralNorm<M extends Module>(module: M, name?: string | { name?: string; nPowerIterations?: number; eps?: number; dim?: number | null },
          nPowerIterations?: number, eps?: number, dim?: number | null): M;
      }
      /** torch.nn.utils.prune: masks on parameters (<name>Orig, <name>Mask, a forward pre-hook). */
      namespace prune {
        type PruningType = 'unstructured' | 'structured' | 'global';
        class BasePruningMethod {
          static PRUNING_TYPE: PruningType;
          computeMask(t: Tensor, defaultMask: Tensor): Tensor;
          applyMask(module: Module): Tensor;
          prune(t: Tensor, defaultMask?: Tensor | null, importanceScores?: Tensor | null): Tensor;
          remove(module: Module): void;
          static apply(module: Module, name: string, ...args: any[]): BasePruningMethod;
        }
        class PruningContainer extends BasePruningMethod {
          constructor(...methods: BasePruningMethod[]);
          addPruningMethod(method: BasePruningMethod): void;
          readonly length: number;
        }
        class Identity extends BasePruningMethod {}
        class RandomUnstructured extends BasePruningMethod { constructor(amount: number) }
        class L1Unstructured extends BasePruningMethod { constructor(amount: number) }
        class RandomStructured extends BasePruningMethod { constructor(amount: number, dim?: number) }
        class LnStructured extends BasePruningMethod { constructor(amount: number, n: number | 'fro', dim?: number) }
        class CustomFromMask extends BasePruningMethod { constructor(mask: Tensor) }
        function identity<M extends Module>(module: M, name: string): M;
        function randomUnstructured<M extends Module>(module: M, name: string, amount: number | { amount: number }): M;
        function l1Unstructured<M extends Module>(module: M, name: string, amount: number | { amount: number; importanceScores?: Tensor | null }, options?: { importanceScores?: Tensor | null }): M;
        function randomStructured<M extends Module>(module: M, name: string, amount: number | { amount: number; dim: number }, dim?: number): M;
        function lnStructured<M extends Module>(module: M, name: string, amount: number | { amount: number; n: number | 'fro'; dim: number; importanceScores?: Tensor | null },
          n?: number | 'fro', dim?: number, options?: { importanceScores?: Tensor | null }): M;
        function customFromMask<M extends Module>(module: M, name: string, mask: Tensor): M;
        function globalUnstructured(parameters: Iterable<[Module, string]>, pruningMethod: new (...args: any[]) => BasePruningMethod,
          options?: { amount?: number; importanceScores?: Map<[Module, string], Tensor> | null; [k: string]: any }): void;
        function remove<M extends Module>(module: M, name: string): M;
        function isPruned(module: Module): boolean;
      }
    }
  }
}
