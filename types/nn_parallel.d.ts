// nn_parallel.d.ts - TypeScript declarations of kd.nn.DataParallel and kd.nn.parallel
// (lib/nn/data_parallel.js) and kd.nn.SyncBatchNorm (lib/nn/sync_batchnorm.js), added to the
// `nn` namespace of ./ops.gen.d.ts as ./nn.d.ts does.
import type { Tensor } from './index';

/** A CUDA device: its index, or 'cuda' / 'cuda:N'. */
type CudaDeviceId = number | string;

declare module './ops.gen' {
  namespace nn {
    interface DataParallelOptions {
      /** CUDA devices to run on (default: all). */
      deviceIds?: readonly CudaDeviceId[] | null;
      /** Where outputs are gathered (default deviceIds[0]; -1 for the CPU). */
      outputDevice?: CudaDeviceId | null;
      /** The dim inputs are scattered and outputs gathered along (default 0). */
      dim?: number;
    }
    /**
     * Runs `module` on chunks of its inputs on several CUDA devices and gathers the outputs
     * (torch.nn.DataParallel); without CUDA, calls the module. State-dict keys have the `module.` prefix.
     */
    class DataParallel<M extends Module = Module> extends Module {
      constructor(module: M, options?: DataParallelOptions);
      constructor(module: M, deviceIds?: readonly CudaDeviceId[] | null, outputDevice?: CudaDeviceId | null, dim?: number);
      readonly module: M;
      /** The devices' indices ([] without CUDA). */
      readonly deviceIds: number[];
      readonly outputDevice?: number;
      readonly dim?: number;
      forward(...inputs: any[]): any;
    }
    interface DataParallel<M extends Module = Module> { (...inputs: any[]): any }

    namespace parallel {
      const DataParallel: typeof nn.DataParallel;
      /** module(...inputs) run as DataParallel runs it (torch.nn.parallel.data_parallel). */
      function dataParallel(module: Module, inputs: any, options?: DataParallelOptions): any;
      /** One value per device: tensors chunked along dim, arrays and plain objects walked, other values shared. */
      function scatter(inputs: any, deviceIds: readonly CudaDeviceId[], dim?: number): any[];
      /** The replicas' outputs as one value on targetDevice (-1: the CPU): tensors concatenated along dim. */
      function gather(outputs: readonly any[], targetDevice: CudaDeviceId, dim?: number): any;
      /** One replica of `module` per device (differentiable copies of its parameters unless detach). */
      function replicate<M extends Module>(module: M, deviceIds: readonly CudaDeviceId[], detach?: boolean): M[];
      /** modules[i](...inputs[i]) with devices[i] as the current CUDA device. */
      function parallelApply(modules: readonly Module[], inputs: readonly any[], devices?: readonly CudaDeviceId[] | null): any[];
    }

    /**
     * Batch normalisation whose training statistics are synchronised across a process group
     * (torch.nn.SyncBatchNorm). Inputs must be CUDA tensors of 2+ dims. kindling has no process
     * groups yet: training mode throws KD_NO_PROCESS_GROUP unless `processGroup` reports size() 1.
     */
    class SyncBatchNorm extends UnaryModule {
      constructor(numFeatures: number, ...rest: Array<number | null | boolean | (BatchNormOptions & { processGroup?: { size(): number } | null })>);
      weight: Parameter | null; bias: Parameter | null; runningMean: Tensor | null; runningVar: Tensor | null; numBatchesTracked: Tensor | null;
      readonly numFeatures: number; eps: number; momentum: number | null; readonly affine: boolean; readonly trackRunningStats: boolean;
      processGroup: { size(): number } | null;
      resetRunningStats(): void;
      /** `module` with every BatchNorm*d (and SyncBatchNorm) below it replaced by a SyncBatchNorm sharing its parameters and buffers. */
      static convertSyncBatchnorm<M extends Module>(module: M, processGroup?: { size(): number } | null): M | SyncBatchNorm;
    }
  }
}
