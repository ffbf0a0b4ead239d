// lib/cuda.js - the kd.cuda namespace: CUDA availability and device queries, on top of
// binding.cuda (src/napi/cuda.c). The CUDA library is loaded on first use; when it cannot be
// (no toolkit at build time, no driver, no GPU) isAvailable() is false, deviceCount() is 0,
// unavailableReason() says why, and every other function throws a KD_CUDA_UNAVAILABLE error.
// A `device` argument is an index (0), a string ('cuda', 'cuda:1'), or left out for the
// current device. Arguments are checked first: a wrong kind of value is a KindlingTypeError
// (KD_INVALID_TYPE) and a bad device a KD_INVALID_ARGUMENT error, with or without CUDA.
'use strict';

const { KindlingError, typeError } = require('./errors');
const { describe, smallHostValues } = require('./tensor');

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

/**
 * @typedef {object} EmulatorStats  kd.cuda.emulator.stats(): totals since the backend loaded.
 * @property {number} launches  @property {number} blocks  @property {number} threads
 * @property {number} syncs
 * @property {number} bytesHostToDevice  @property {number} bytesDeviceToHost  @property {number} bytesDeviceToDevice
 * @property {number} copiesHostToDevice @property {number} copiesDeviceToHost @property {number} copiesDeviceToDevice
 * @property {number} mallocs  @property {number} frees  @property {number} hostFunctions
 * @property {number} devices  @property {number} memory  @property {number} seed
 * @property {string} fault
 */

/**
 * The caching allocator's core on a fake device (no GPU needed): for tests of the allocator's
 * policy (test/cuda_allocator.test.js). Addresses are numbers with no memory behind them;
 * stream events complete only when completeEvents() is called.
 * @private
 */
// Tensor methods for CUDA: dataAsync()/array() without blocking, pinMemory(), isPinned(),
// recordStream(), and to(..., {nonBlocking}). Installed on the Tensor prototype here so the
// CUDA-specific code stays in this file.
function installTensorMethods(binding, streamArg) {
  const native = binding.cuda;
  const { Tensor } = require('./tensor');
  const ctors = {
    float32: Float32Array, float64: Float64Array, int8: Int8Array, uint8: Uint8Array, bool: Uint8Array,
    int16: Int16Array, int32: Int32Array, int64: BigInt64Array, float16: Uint16Array, bfloat16: Uint16Array,
  };
  const syncArray = Tensor.prototype.array;
  const isCuda = (t) => String(t.device).startsWith('cuda');
  async function cudaData(t) {
    const buf = await native.tensorDataAsync(t._h);
    const dt = t.dtype;
    const raw = new ctors[dt](buf);
    if (dt === 'float16') return binding.float16ToFloat32(raw);
    if (dt === 'bfloat16') return binding.bfloat16ToFloat32(raw);
    return raw;
  }
  // A CPU tensor's data: a copy taken now, in a resolved Promise (no thread hop: nothing can be
  // pending on it, Note [dataAsync() of a CPU tensor] in src/napi/tensor.c); hostData is null for a
  // CUDA tensor, whose copy then lands asynchronously. Errors (a disposed tensor) are rejections.
  Tensor.prototype.dataAsync = function dataAsync() {
    let host;
    try {
      host = smallHostValues(this._h); // Note [Reading small tensors] in src/napi/tensor.c
      if (host === null) host = binding.hostData(this._h);
    } catch (e) {
      return Promise.reject(e);
    }
    return host !== null ? Promise.resolve(host) : cudaData(this);
  };
  Tensor.prototype.array = async function array() {
    if (!isCuda(this)) return syncArray.call(this);
    await native.synchronizeAsync(Number(this.device.slice(5)) || 0,
      native.currentStream(Number(this.device.slice(5)) || 0));
    return this.arraySync();
  };
  /** A copy of this CPU tensor in pinned (page-locked) host memory, for fast asynchronous copies. */
  Tensor.prototype.pinMemory = function pinMemory() { return new Tensor(native.pinMemory(this._h)); };
  /** Whether this tensor's memory is pinned host memory. */
  Tensor.prototype.isPinned = function isPinned() { return native.isPinned(this._h); };
  /** Marks this CUDA tensor's memory as used by `stream` (not reused before that work is done). */
  Tensor.prototype.recordStream = function recordStream(stream) {
    native.recordStream(this._h, streamArg(stream, 'recordStream(stream)')._h);
  };
  const to = Tensor.prototype.to;
  Tensor.prototype.to = function toWithNonBlocking(target, options) {
    let nb = false;
    const strip = (o) => {
      if (o && typeof o === 'object' && !Array.isArray(o) && !(o instanceof Tensor) && 'nonBlocking' in o) {
        nb = !!o.nonBlocking;
        const { nonBlocking, ...rest } = o; // eslint-disable-line no-unused-vars
        return rest;
      }
      return o;
    };
    target = strip(target);
    options = strip(options);
    if (!nb) return options === undefined ? to.call(this, target) : to.call(this, target, options);
    native.setNonBlocking(true);
    try {
      return options === undefined ? to.call(this, target) : to.call(this, target, options);
    } finally {
      native.setNonBlocking(false);
    }
  };
}

function makeFakeAllocator(native) {
  return class FakeAllocator {
    /** @param {{capacity?: number, conf?: string}} [opts] */
    constructor(opts = {}) {
      this._h = native.fakeAllocCreate(opts.capacity ?? 2 ** 40, opts.conf ?? '');
    }
    malloc(nbytes, stream = 0) { return native.fakeAllocMalloc(this._h, nbytes, stream); }
    free(ptr) { native.fakeAllocFree(this._h, ptr); }
    recordStream(ptr, stream) { native.fakeAllocRecordStream(this._h, ptr, stream); }
    stats() { return JSON.parse(native.fakeAllocQuery(this._h, 'stats')); }
    snapshot() { return JSON.parse(native.fakeAllocQuery(this._h, 'snapshot')); }
    summary() { return native.fakeAllocQuery(this._h, 'summary'); }
    device() { return JSON.parse(native.fakeAllocQuery(this._h, 'device')); }
    emptyCache() { native.fakeAllocQuery(this._h, 'emptyCache'); }
    resetPeak() { native.fakeAllocQuery(this._h, 'resetPeak'); }
    resetAccumulated() { native.fakeAllocQuery(this._h, 'resetAccumulated'); }
    processEvents() { return native.fakeAllocQuery(this._h, 'processEvents'); }
    completeEvents() { native.fakeAllocQuery(this._h, 'completeEvents'); }
    setMemoryFraction(f) { native.fakeAllocSetFraction(this._h, f); }
    beginCapture(pool, stream) { native.fakeAllocCapture(this._h, 0, pool, stream); }
    endCapture(stream) { native.fakeAllocCapture(this._h, 1, 0, stream); }
    releasePool(pool) { native.fakeAllocCapture(this._h, 2, pool, 0); }
    poolUses(pool) { return native.fakeAllocCapture(this._h, 3, pool, 0); }
    static parseConf(conf) { return native.fakeAllocParseConf(conf); }
  };
}

module.exports = (binding) => {
  const native = binding.cuda;
  // The index a device argument names; the native parser reports a bad one, then a missing CUDA.
  const deviceIndex = (device) => native.deviceIndex(device);
  const statsOf = (device) => JSON.parse(native.memoryStatsJson(deviceIndex(device)));
  const optionsArg = (opts, where) => {
    if (opts === undefined || opts === null) return {};
    if (typeof opts !== 'object' || Array.isArray(opts)) throw typeError(`${where}: options must be an object`);
    return opts;
  };
  const streamArg = (stream, where) => {
    if (!(stream instanceof Stream)) throw typeError(`${where}: expected a kd.cuda.Stream, got ${describe(stream)}`);
    return stream;
  };
  const eventArg = (event, where) => {
    if (!(event instanceof Event)) throw typeError(`${where}: expected a kd.cuda.Event, got ${describe(event)}`);
    return event;
  };

  /** A CUDA stream: work queued on it runs in order; different streams may overlap. */
  class Stream {
    /**
     * @param {{device?: CudaDeviceLike, priority?: number}} [opts] priority: 0 default, negative is higher
     */
    constructor(opts) {
      opts = optionsArg(opts, 'Stream(options)');
      if (opts._handle !== undefined) {
        this._h = opts._handle;
        this.device = opts._device;
        return;
      }
      const priority = opts.priority ?? 0;
      if (!Number.isInteger(priority)) throw typeError(`Stream(options): priority must be an integer, got ${describe(priority)}`);
      this.device = deviceIndex(opts.device);
      this._h = native.streamCreate(this.device, priority);
    }
    /** True when all work queued on the stream has finished. */
    query() { return native.streamQuery(this.device, this._h); }
    /** Resolves when all work queued so far on the stream has finished (no thread blocks). */
    async synchronize() { return native.synchronizeAsync(this.device, this._h); }
    /** Work queued on this stream from now on waits for `event`. */
    waitEvent(event) { native.streamWaitEvent(this.device, this._h, eventArg(event, 'waitEvent(event)')._ev()); }
    /** Work queued on this stream from now on waits for the work queued so far on `stream`. */
    waitStream(stream) {
      streamArg(stream, 'waitStream(stream)');
      const e = new Event();
      e.record(stream);
      this.waitEvent(e);
    }
    /** Records an event (a new one unless given) on this stream. */
    recordEvent(event) {
      const e = event === undefined || event === null ? new Event() : eventArg(event, 'recordEvent(event)');
      e.record(this);
      return e;
    }
    equals(other) { return other instanceof Stream && other._h === this._h && other.device === this.device; }
    get handle() { return this._h; }
  }
  const wrapStream = (h, d) => new Stream({ _handle: h, _device: d });

  /** A CUDA event: a marker in a stream's work, to wait on, query or time. */
  class Event {
    /** @param {{enableTiming?: boolean}} [opts] */
    constructor(opts) {
      opts = optionsArg(opts, 'Event(options)');
      const { enableTiming = false } = opts;
      if (typeof enableTiming !== 'boolean') throw typeError(`Event(options): enableTiming must be a boolean, got ${describe(enableTiming)}`);
      this.enableTiming = enableTiming;
      this._e = null;
      this.device = null;
    }
    _ev() {
      if (!this._e) {
        this.device = native.currentDevice();
        this._e = native.eventCreate(this.device, this.enableTiming);
      }
      return this._e;
    }
    /** Records the event on `stream` (default: the current stream). */
    record(stream) {
      const s = stream === undefined || stream === null ? api.currentStream() : streamArg(stream, 'record(stream)');
      if (!this._e) { this.device = s.device; this._e = native.eventCreate(this.device, this.enableTiming); }
      native.eventRecord(this._e, s.device, s._h);
    }
    /** True when the work recorded before the event has finished (or it was never recorded). */
    query() { return this._e ? native.eventQuery(this._e) : true; }
    /** Resolves when the event has completed; no thread blocks. */
    async synchronize() { if (this._e) await native.eventSynchronizeAsync(this._e, this.device); }
    /** Milliseconds between this event and `end` (both recorded, with enableTiming). */
    elapsedTime(end) {
      eventArg(end, 'elapsedTime(end)');
      return native.eventElapsedTime(this._ev(), end._ev());
    }
    /** Makes `stream` (default: the current one of the event's device) wait for this event. */
    wait(stream) {
      const s = stream === undefined || stream === null ? api.currentStream(this.device ?? undefined) : streamArg(stream, 'wait(stream)');
      s.waitEvent(this);
    }
  }

  const api = {
    /** @private test hooks */
    _testing: { FakeAllocator: makeFakeAllocator(native) },

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
     * Waits (without blocking any thread) for all work queued on a CUDA device so far; rejects
     * with the error of a kernel that failed.
     * @param {CudaDeviceLike} [device] defaults to the current device
     * @returns {Promise<void>}
     */
    synchronize: async (device) => native.synchronizeAsync(deviceIndex(device)),

    // ---- memory (the caching allocator; see docs/CUDA.md) ----
    /** Bytes in tensors allocated on the device (rounded block sizes), as PyTorch. */
    memoryAllocated: (device) => statsOf(device)['allocated_bytes.all.current'],
    /** Peak of memoryAllocated since start or resetPeakMemoryStats(). */
    maxMemoryAllocated: (device) => statsOf(device)['allocated_bytes.all.peak'],
    /** Bytes reserved from the device by the caching allocator (allocated + cached). */
    memoryReserved: (device) => statsOf(device)['reserved_bytes.all.current'],
    /** Peak of memoryReserved. */
    maxMemoryReserved: (device) => statsOf(device)['reserved_bytes.all.peak'],
    /**
     * The allocator's statistics with PyTorch's keys: 'allocated_bytes.all.current',
     * 'reserved_bytes.large_pool.peak', 'num_alloc_retries', 'num_ooms', ...
     * @returns {Record<string, number>}
     */
    memoryStats: (device) => statsOf(device),
    /** A readable table of memoryStats() (PyTorch's memory_summary). */
    memorySummary: (device) => native.memorySummary(deviceIndex(device)),
    /**
     * Every segment reserved from the device and its blocks:
     * [{device, address, totalSize, allocatedSize, activeSize, requestedSize, stream,
     *   segmentType: 'small'|'large', blocks: [{address, size, requestedSize, state}]}].
     */
    memorySnapshot: (device) => JSON.parse(native.memorySnapshotJson(deviceIndex(device))),
    /** Gives every cached, unused segment back to the device (after pending stream uses). */
    emptyCache: (device) => native.emptyCache(deviceIndex(device)),
    /** Resets the peaks of memoryStats() to the current values. */
    resetPeakMemoryStats: (device) => native.resetPeakMemoryStats(deviceIndex(device)),
    /** Caps the memory this process reserves on the device at fraction * total (0 <= fraction <= 1). */
    setPerProcessMemoryFraction: (fraction, device) => {
      if (typeof fraction !== 'number') throw typeError(`setPerProcessMemoryFraction(): fraction must be a number, got ${describe(fraction)}`);
      if (!(fraction >= 0 && fraction <= 1)) {
        throw new KindlingError(`Invalid fraction value: ${fraction}. Allowed range: 0~1`, 'KD_INVALID_ARGUMENT');
      }
      native.setPerProcessMemoryFraction(fraction, deviceIndex(device));
    },

    // ---- streams and events ----
    Stream,
    Event,
    /** This thread's current stream on a device (the default stream unless withStream set one). */
    currentStream: (device) => {
      const d = deviceIndex(device);
      return wrapStream(native.currentStream(d), d);
    },
    /** The default stream of a device. */
    defaultStream: (device) => {
      const d = deviceIndex(device);
      return wrapStream(0, d);
    },
    /**
     * Runs fn with `stream` as the current stream of its device; restores the previous one
     * when fn returns, or when the Promise it returns settles.
     */
    withStream: (stream, fn) => {
      if (typeof fn !== 'function') throw typeError(`withStream(stream, fn): fn must be a function, got ${describe(fn)}`);
      if (stream === null || stream === undefined) return fn();
      streamArg(stream, 'withStream(stream, fn)');
      const prev = native.currentStream(stream.device);
      native.setCurrentStream(stream.device, stream._h);
      let result;
      try {
        result = fn();
      } catch (e) {
        native.setCurrentStream(stream.device, prev);
        throw e;
      }
      if (result && typeof result.then === 'function') {
        return Promise.resolve(result).finally(() => native.setCurrentStream(stream.device, prev));
      }
      native.setCurrentStream(stream.device, prev);
      return result;
    },
    /**
     * The emulated GPU (KINDLING_CUDA=emulate after `npm run build:emulator`): kindling's CUDA
     * kernels run on the CPU, for testing `device: 'cuda'` code on machines without a GPU.
     */
    emulator: {
      /** Whether the CUDA backend in use is the emulated GPU. Never throws. */
      isEnabled: () => native.emulatorStats() !== null,
      /**
       * Counters since the backend loaded, the stand-in for GPU performance on a machine without
       * one: kernel launches (cuBLAS and CUB calls count as launches), blocks and threads run,
       * device synchronisations (stream/device/event syncs, copies that block the host, cudaFree),
       * bytes and copies per direction, device mallocs/frees, host functions; and the
       * configuration (devices, memory per device, seed) and `fault`, what made a device's error
       * sticky ('' if nothing).
       * @returns {EmulatorStats}
       */
      stats: () => {
        const s = native.emulatorStats();
        if (s === null) {
          const why = native.isAvailable() ? 'the CUDA backend in use is a real GPU' : `CUDA is not available: ${native.unavailableReason()}`;
          throw new KindlingError(`kd.cuda.emulator.stats(): the emulated GPU is not in use (${why}; set KINDLING_CUDA=emulate)`, 'KD_CUDA_UNAVAILABLE');
        }
        return s;
      },
    },
    /** @private test hook: a kernel that spins about `ms` milliseconds on the current stream. */
    _spin: (ms, device) => native.spin(deviceIndex(device), ms),
    /** @private test hook: a kernel that faults (a trap, sticky) after about `ms` milliseconds. */
    _fault: (ms, device) => native.spin(deviceIndex(device), -Math.max(ms, 0.001)),
  };
  // CUDA graphs: CUDAGraph, graph, graphPoolHandle, makeGraphedCallables (lib/cuda_graphs.js)
  Object.assign(api, require('./cuda_graphs')(native, api));
  installTensorMethods(binding, streamArg);
  return api;
};
