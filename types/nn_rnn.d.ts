// nn_rnn.d.ts - TypeScript declarations of kindling's recurrent layers (lib/nn/rnn.js,
// rnn_cell.js) and kd.nn.utils.rnn (lib/nn/rnn_utils.js), added to the `nn` namespace of
// ./ops.gen.d.ts as ./nn.d.ts does.
import type { Tensor, DTypeLike, DeviceLike } from './index';

interface RnnFactoryOptions { dtype?: DTypeLike | null; device?: DeviceLike | null }

declare module './ops.gen' {
  namespace nn {
    /** RNNPositionalArgs arguments after inputSize, hiddenSize: numLayers, bias, batchFirst, dropout, bidirectional (LSTM: projSize). */
    type RNNPositionalArgs = (number | boolean)[];
    interface RNNOptions extends RnnFactoryOptions {
      numLayers?: number; bias?: boolean; batchFirst?: boolean; dropout?: number; bidirectional?: boolean;
    }

    /**
     * Shared base of RNN, LSTM and GRU. Parameters are named as PyTorch's state dict
     * (weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0, *_reverse, weight_hr_l0); the
     * properties are their camelCase forms (weightIhL0, weightHhL0Reverse, ...).
     */
    class RNNBase extends Module {
      mode: 'LSTM' | 'GRU' | 'RNN_TANH' | 'RNN_RELU';
      inputSize: number; hiddenSize: number; numLayers: number; bias: boolean; batchFirst: boolean;
      dropout: number; bidirectional: boolean; projSize: number;
      /** The parameters per layer and direction, in PyTorch's order. */
      readonly allWeights: Parameter[][];
      /** Every parameter U(-1/sqrt(hiddenSize), 1/sqrt(hiddenSize)). */
      resetParameters(): void;
      /** A no-op (as PyTorch's on the CPU). */
      flattenParameters(): void;
      [parameter: `weight${string}` | `bias${string}`]: any;
    }

    /**
     * Elman RNN with tanh (default) or relu. Input [T, B, inputSize] ([B, T, inputSize] with
     * batchFirst, [T, inputSize] unbatched) or a PackedSequence; hx [numLayers * dirs, B, hiddenSize].
     */
    class RNN extends RNNBase {
      /** RNN(inputSize, hiddenSize, numLayers?, bias?, batchFirst?, dropout?, bidirectional?, options?). */
      constructor(inputSize: number, hiddenSize: number, ...rest: RNNPositionalArgs);
      constructor(inputSize: number, hiddenSize: number, ...rest: [...RNNPositionalArgs, RNNOptions & { nonlinearity?: 'tanh' | 'relu' }]);
      nonlinearity: 'tanh' | 'relu';
      forward(input: Tensor, hx?: Tensor | null): [Tensor, Tensor];
      forward(input: utils.rnn.PackedSequence, hx?: Tensor | null): [utils.rnn.PackedSequence, Tensor];
    }
    interface RNN {
      (input: Tensor, hx?: Tensor | null): [Tensor, Tensor];
      (input: utils.rnn.PackedSequence, hx?: Tensor | null): [utils.rnn.PackedSequence, Tensor];
    }

    /** GRU; input and hx as RNN's. */
    class GRU extends RNNBase {
      /** GRU(inputSize, hiddenSize, numLayers?, bias?, batchFirst?, dropout?, bidirectional?, options?). */
      constructor(inputSize: number, hiddenSize: number, ...rest: RNNPositionalArgs);
      constructor(inputSize: number, hiddenSize: number, ...rest: [...RNNPositionalArgs, RNNOptions]);
      forward(input: Tensor, hx?: Tensor | null): [Tensor, Tensor];
      forward(input: utils.rnn.PackedSequence, hx?: Tensor | null): [utils.rnn.PackedSequence, Tensor];
    }
    interface GRU {
      (input: Tensor, hx?: Tensor | null): [Tensor, Tensor];
      (input: utils.rnn.PackedSequence, hx?: Tensor | null): [utils.rnn.PackedSequence, Tensor];
    }

    /**
     * LSTM (projSize > 0: hidden states projected to projSize). forward(input, [h0, c0]?) ->
     * [output, [hN, cN]].
     */
    class LSTM extends RNNBase {
      /** LSTM(inputSize, hiddenSize, numLayers?, bias?, batchFirst?, dropout?, bidirectional?, projSize?, options?). */
      constructor(inputSize: number, hiddenSize: number, ...rest: RNNPositionalArgs);
      constructor(inputSize: number, hiddenSize: number, ...rest: [...RNNPositionalArgs, RNNOptions & { projSize?: number }]);
      forward(input: Tensor, hx?: [Tensor, Tensor] | null): [Tensor, [Tensor, Tensor]];
      forward(input: utils.rnn.PackedSequence, hx?: [Tensor, Tensor] | null): [utils.rnn.PackedSequence, [Tensor, Tensor]];
    }
    interface LSTM {
      (input: Tensor, hx?: [Tensor, Tensor] | null): [Tensor, [Tensor, Tensor]];
      (input: utils.rnn.PackedSequence, hx?: [Tensor, Tensor] | null): [utils.rnn.PackedSequence, [Tensor, Tensor]];
    }

    /** Shared base of the cells: weightIh [k*H, I], weightHh [k*H, H], biasIh, biasHh (state dict: weight_ih, ...). */
    class RNNCellBase extends Module {
      inputSize: number; hiddenSize: number; bias: boolean;
      weightIh: Parameter; weightHh: Parameter; biasIh: Parameter | null; biasHh: Parameter | null;
      resetParameters(): void;
    }
    class RNNCell extends RNNCellBase {
      constructor(inputSize: number, hiddenSize: number, bias?: boolean, nonlinearity?: 'tanh' | 'relu', options?: RnnFactoryOptions);
      constructor(inputSize: number, hiddenSize: number, options?: RnnFactoryOptions & { bias?: boolean; nonlinearity?: 'tanh' | 'relu' });
      nonlinearity: 'tanh' | 'relu';
      forward(input: Tensor, hx?: Tensor | null): Tensor;
    }
    interface RNNCell { (input: Tensor, hx?: Tensor | null): Tensor }
    class GRUCell extends RNNCellBase {
      constructor(inputSize: number, hiddenSize: number, bias?: boolean, options?: RnnFactoryOptions);
      constructor(inputSize: number, hiddenSize: number, options?: RnnFactoryOptions & { bias?: boolean });
      forward(input: Tensor, hx?: Tensor | null): Tensor;
    }
    interface GRUCell { (input: Tensor, hx?: Tensor | null): Tensor }
    class LSTMCell extends RNNCellBase {
      constructor(inputSize: number, hiddenSize: number, bias?: boolean, options?: RnnFactoryOptions);
      constructor(inputSize: number, hiddenSize: number, options?: RnnFactoryOptions & { bias?: boolean });
      forward(input: Tensor, hx?: [Tensor, Tensor] | null): [Tensor, Tensor];
    }
    interface LSTMCell { (input: Tensor, hx?: [Tensor, Tensor] | null): [Tensor, Tensor] }

    namespace utils {
      /** Variable-length sequences (PyTorch's torch.nn.utils.rnn). */
      namespace rnn {
        /**
         * Rows of every sequence in time-major order; batchSizes (int64, CPU) the number of
         * sequences at each step. Iterates as [data, batchSizes, sortedIndices, unsortedIndices].
         */
        class PackedSequence implements Iterable<Tensor | null> {
          constructor(data: Tensor, batchSizes: Tensor, sortedIndices?: Tensor | null, unsortedIndices?: Tensor | null);
          data: Tensor; batchSizes: Tensor; sortedIndices: Tensor | null; unsortedIndices: Tensor | null;
          readonly isCuda: boolean;
          to(...args: any[]): PackedSequence;
          cpu(): PackedSequence;
          cuda(device?: number | DeviceLike): PackedSequence;
          double(): PackedSequence; float(): PackedSequence; half(): PackedSequence;
          [Symbol.iterator](): Iterator<Tensor | null>;
        }
        type Lengths = Tensor | readonly number[];
        function packPaddedSequence(input: Tensor, lengths: Lengths, batchFirst?: boolean, enforceSorted?: boolean): PackedSequence;
        function packPaddedSequence(input: Tensor, lengths: Lengths, options?: { batchFirst?: boolean; enforceSorted?: boolean }): PackedSequence;
        /** [padded, lengths] in the original batch order. */
        function padPackedSequence(sequence: PackedSequence, batchFirst?: boolean, paddingValue?: number, totalLength?: number | null): [Tensor, Tensor];
        function padPackedSequence(sequence: PackedSequence, options?: { batchFirst?: boolean; paddingValue?: number; totalLength?: number | null }): [Tensor, Tensor];
        function padSequence(sequences: readonly Tensor[], batchFirst?: boolean, paddingValue?: number): Tensor;
        function padSequence(sequences: readonly Tensor[], options?: { batchFirst?: boolean; paddingValue?: number }): Tensor;
        function packSequence(sequences: readonly Tensor[], enforceSorted?: boolean | { enforceSorted?: boolean }): PackedSequence;
        function unpadSequence(padded: Tensor, lengths: Lengths, batchFirst?: boolean | { batchFirst?: boolean }): Tensor[];
        function unpackSequence(packed: PackedSequence): Tensor[];
        /** The inverse of a permutation (int64). */
        function invertPermutation(perm: Tensor): Tensor;
      }
    }
  }
}
