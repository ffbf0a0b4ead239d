// lib/cuda.js - the kd.cuda namespace: CUDA availability and device queries, on top of
// binding.cuda (src/napi/cuda.c). The CUDA library is loaded on first use; when it cannot be
// (no toolkit at build time, no driver, no GPU) isAvailable() is false, deviceCount() is 0,
// unavailableReason() says why, and every other function throws a KD_CUDA_UNAVAILABLE error.
// A `device` argument is an index (0), a string ('cuda', 'cuda:1'), or left out for the
// current device.
'use strict';

/**
 * @typedef {number | string} CudaDeviceLike  An index such as 0, or 'cuda' / 'cuda:N'.
 */

/**
 * @typedef {object} CudaDeviceProperties
 * @property {string} name                 e.g. 'NVIDIA H100 80GB HBM3'
 * @property {number} totalMemory          device memory in bytes
 * @property {number} major                compute capability, major
 * @property {number} minor                compute capability, minor
 * @property {number} multiProcessorCount  number of streaming multiprocessors
 */

module.exports = (binding) => {
  const native = binding.cuda;
  return {
    /**
     * Whether CUDA can be used: the CUDA library was built, a driver and at least one GPU are
     * present. Never throws.
     * @returns {boolean}
     * @example if (kd.cuda.isAvailable()) x = x.to('cuda');
     */
    isAvailable: () => native.isAvailable(),

    /**
     * Why CUDA is unavailable (e.g. 'CUDA driver not found (...)'), or '' when it is available.
     * Never throws.
     * @returns {string}
     */
    unavailableReason: () => native.unavailableReason(),

    /**
     * Number of visible CUDA GPUs; 0 when CUDA is unavailable. Never throws.
     * @returns {number}
     */
    deviceCount: () => native.deviceCount(),

    /**
     * Index of the current CUDA device of this thread (what 'cuda' means).
     * @returns {number}
     * @throws {Error} KD_CUDA_UNAVAILABLE when CUDA cannot be used.
     */
    currentDevice: () => native.currentDevice(),

    /**
     * Makes `device` the current CUDA device of this thread.
     * @param {CudaDeviceLike} device
     * @returns {void}
     * @throws {Error} KD_CUDA_UNAVAILABLE, or KD_INVALID_ARGUMENT for a device that does not exist.
     */
    setDevice: (device) => native.setDevice(device),

    /**
     * Name of a CUDA device.
     * @param {CudaDeviceLike} [device] defaults to the current device
     * @returns {string}
     */
    getDeviceName: (device) => native.getDeviceName(device),

    /**
     * Properties of a CUDA device.
     * @param {CudaDeviceLike} [device] defaults to the current device
     * @returns {CudaDeviceProperties}
     */
    getDeviceProperties: (device) => native.getDeviceProperties(device),

    /**
     * Waits for all work queued on a CUDA device, and reports errors of kernels that ran.
     * The returned Promise rejects with the error. (For now the wait blocks the calling thread;
     * it will move off the event loop when streams and events arrive.)
     * @param {CudaDeviceLike} [device] defaults to the current device
     * @returns {Promise<void>}
     */
    synchronize: async (device) => {
      native.synchronize(device);
    },
  };
};
