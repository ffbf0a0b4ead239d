// multiprocessing.d.ts - kd.multiprocessing: tensors shared between worker threads (lib/multiprocessing.js).
import type { Tensor } from './index';

declare module './index' {
  interface Tensor {
    /** Makes the tensor shareable with worker threads (registers it; idempotent); returns it. */
    shareMemory_(): this;
    /** Whether the tensor was shared (shareMemory_) or rebuilt from a shared tensor. */
    isShared(): boolean;
  }
  namespace multiprocessing {
    /** A plain object (postMessage / workerData) standing for t in another thread. */
    interface ReducedTensor { readonly __kindlingSharedTensor: true; readonly id: number; readonly requiresGrad: boolean; readonly parameter: boolean }
    /** Shares t and returns what another thread rebuilds it from. */
    function reduceTensor(t: Tensor): ReducedTensor;
    /** A tensor over the same bytes as the reduced one (a Parameter when that was one). */
    function rebuildTensor(r: ReducedTensor): Tensor;
  }
}
export {};
