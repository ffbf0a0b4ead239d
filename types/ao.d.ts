// ao.d.ts - TypeScript declarations of kd.ao (lib/ao/): int8 dynamic quantization,
// kd.ao.quantization.quantizeDynamic and kd.ao.nn.quantized.dynamic.Linear (docs/QUANTIZATION.md).
import type { Tensor } from './index';
import type { nn as NN } from './ops.gen';

/** A quantized tensor's dtype: the weights of dynamic quantization are 'qint8'. */
export type QuantizedDType = 'qint8' | 'quint8' | 'float16' | 'quint4x2';

/** What PyTorch's qint8 QTensor answers about a quantized weight (read-only). */
export declare class QuantizedTensor {
  readonly dtype: QuantizedDType;
  readonly shape: number[];
  readonly device: string;
  readonly isQuantized: true;
  size(dim?: number): number | number[];
  dim(): number;
  /** 'torch.per_tensor_affine' or 'torch.per_channel_affine'. */
  qscheme(): 'torch.per_tensor_affine' | 'torch.per_channel_affine';
  /** The int8 values (a copy). */
  intRepr(): Tensor;
  qScale(): number;
  qZeroPoint(): number;
  /** float64 [channels]. */
  qPerChannelScales(): Tensor;
  /** int64 [channels]. */
  qPerChannelZeroPoints(): Tensor;
  qPerChannelAxis(): number;
  /** float32: (q - zeroPoint) * scale. */
  dequantize(): Tensor;
}

export declare namespace quantization {
  type QScheme = 'per_tensor_affine' | 'per_tensor_symmetric' | 'per_channel_affine' | 'per_channel_symmetric'
    | 'torch.per_tensor_affine' | 'torch.per_tensor_symmetric' | 'torch.per_channel_affine' | 'torch.per_channel_symmetric';
  interface ObserverOptions { dtype?: 'qint8' | 'quint8'; qscheme?: QScheme; reduceRange?: boolean; chAxis?: number }
  /** An observer factory (PyTorch's Observer.with_args). */
  interface ObserverFactory<T = ObserverBase> { (): T; observerClass: Function; options: object }
  class ObserverBase {
    dtype: 'qint8' | 'quint8'; qscheme: string; reduceRange: boolean; quantMin: number; quantMax: number;
    minVal: number[] | null; maxVal: number[] | null;
    forward(x: Tensor): Tensor;
    /** [scale (float32), zeroPoint (int64)]. */
    calculateQparams(): [Tensor, Tensor];
  }
  class MinMaxObserver extends ObserverBase {
    constructor(opts?: ObserverOptions);
    static withArgs(opts?: ObserverOptions): ObserverFactory<MinMaxObserver>;
  }
  class PerChannelMinMaxObserver extends ObserverBase {
    constructor(opts?: ObserverOptions);
    static withArgs(opts?: ObserverOptions): ObserverFactory<PerChannelMinMaxObserver>;
  }
  class PlaceholderObserver {
    constructor(opts?: { dtype?: string; computeDtype?: string | null });
    dtype: string; computeDtype: string | null;
    forward(x: Tensor): Tensor;
    static withArgs(opts?: { dtype?: string; computeDtype?: string | null }): ObserverFactory<PlaceholderObserver>;
  }
  /** PyTorch's QConfig(activation, weight): observer factories. */
  class QConfig {
    constructor(opts: { activation: ObserverFactory<any>; weight: ObserverFactory<any> });
    constructor(activation: ObserverFactory<any>, weight: ObserverFactory<any>);
    readonly activation: ObserverFactory<any>;
    readonly weight: ObserverFactory<any>;
  }
  /** qint8 weights with one symmetric scale per tensor; the input quantized per call. */
  const defaultDynamicQConfig: QConfig;
  /** qint8 weights with one symmetric scale per output feature. */
  const perChannelDynamicQConfig: QConfig;
  const defaultDynamicQuantObserver: ObserverFactory<PlaceholderObserver>;
  const defaultWeightObserver: ObserverFactory<MinMaxObserver>;
  const defaultPerChannelWeightObserver: ObserverFactory<PerChannelMinMaxObserver>;
  /** Module classes (or their kd.nn names, or submodule names) -> qconfig (null: not quantized). */
  type QConfigSpec = Set<Function | string> | (Function | string)[] | Map<Function | string, QConfig | null>
    | Record<string, QConfig | null>;
  interface QuantizeDynamicOptions { dtype?: QuantizedDType; mapping?: Map<Function, Function> | null; inplace?: boolean }
  /**
   * PyTorch's quantize_dynamic: every kd.nn.Linear, LSTM and GRU with a qconfig (default: all of
   * them, with defaultDynamicQConfig) becomes its kd.ao.nn.quantized.dynamic counterpart. A copy
   * unless inplace.
   */
  function quantizeDynamic<M extends NN.Module>(model: M, qconfigSpec?: QConfigSpec | null, dtype?: QuantizedDType,
    mapping?: Map<Function, Function> | null, inplace?: boolean): M;
  function quantizeDynamic<M extends NN.Module>(model: M, qconfigSpec: QConfigSpec | null, options: QuantizeDynamicOptions): M;
  /** The classes quantizeDynamic swaps by default (kd.nn.Linear, LSTM, GRU -> their dynamic quantized forms). */
  function getDefaultDynamicQuantModuleMappings(): Map<Function, Function>;
}

export declare namespace nn {
  namespace quantized {
    namespace dynamic {
      /** PyTorch's LinearPackedParams: the int8 weight, its scales and the bias (buffers), and their packed form. */
      class LinearPackedParams extends NN.Module {
        constructor(dtype?: 'qint8');
        dtype: 'qint8';
        weight: Tensor | null;
        weightScale: Tensor | null;
        bias: Tensor | null;
        packed: Tensor | null;
      }
      /** PyTorch's DynamicQuantizedLinear: float32 in and out, qint8 weights, the input quantized per call. */
      class Linear extends NN.Module {
        constructor(inFeatures: number, outFeatures: number, bias?: boolean, opts?: { dtype?: 'qint8' });
        inFeatures: number;
        outFeatures: number;
        /** The output qparams of PyTorch's static quantized Linear (1.0 and 0; unused here). */
        scale: number;
        zeroPoint: number;
        version: number;
        forward(input: Tensor): Tensor;
        weight(): QuantizedTensor;
        bias(): Tensor | null;
        setWeightBias(weight: QuantizedTensor, bias: Tensor | null): void;
        static fromFloat(mod: NN.Linear, qconfig?: quantization.QConfig | null): Linear;
      }
      interface RNNOptions { numLayers?: number; bias?: boolean; batchFirst?: boolean; dropout?: number; bidirectional?: boolean; dtype?: 'qint8' }
      /** PyTorch's DynamicQuantizedLSTM: qint8 W_ih / W_hh per layer and direction; padded or unbatched input. */
      class LSTM extends NN.Module {
        constructor(inputSize: number, hiddenSize: number, opts?: RNNOptions);
        inputSize: number; hiddenSize: number; numLayers: number; batchFirst: boolean; dropout: number; bidirectional: boolean;
        forward(input: Tensor, hx?: [Tensor, Tensor] | null): [Tensor, [Tensor, Tensor]];
        static fromFloat(mod: NN.LSTM, qconfig?: quantization.QConfig | null): LSTM;
      }
      /** PyTorch's DynamicQuantizedGRU. */
      class GRU extends NN.Module {
        constructor(inputSize: number, hiddenSize: number, opts?: RNNOptions);
        inputSize: number; hiddenSize: number; numLayers: number; batchFirst: boolean; dropout: number; bidirectional: boolean;
        forward(input: Tensor, hx?: Tensor | null): [Tensor, Tensor];
        static fromFloat(mod: NN.GRU, qconfig?: quantization.QConfig | null): GRU;
      }
    }
  }
}
