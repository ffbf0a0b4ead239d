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

/**
 * The caching allocator's core on a fake device (no GPU needed): for tests of the allocator's
 * policy (test/cuda_allocator.test.js). Addresses are numbers with no memory behind them;
 * stream events complete only when completeEvents() is called.
 * @private
 */
// Tensor methods for CUDA: data()/array() without blocking, pinMemory(), isPinned(),
// recordStream(), and to(..., {nonBlocking}). Installed on the Tensor prototype here so the
// CUDA-specific code stays in this file.
function installTensorMethods(binding) {
  const native = binding.cuda;
  const { Tensor } = require('./tensor');
  const ctors = {
    float32: Float32Array, float64: Float64Array, int8: Int8Array, uint8: Uint8Array, bool: Uint8Array,
    int16: Int16Array, int32: Int32Array, int64: BigInt64Array, float16: Uint16Array, bfloat16: Uint16Array,
  };
  const syncData = Tensor.prototype.data;
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
  Tensor.prototype.data = function data() { return isCuda(this) ? cudaData(this) : syncData.call(this); };
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
  Tensor.prototype.recordStream = function recordStream(stream) { native.recordStream(this._h, stream._h); };
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
    static parseConf(conf) { return native.fakeAllocParseConf(conf); }
  };
}

module.exports = (binding) => {
  const native = binding.cuda;
  const typeError = (msg) => { const e = new TypeError(msg); e.code = 'KD_TYPE_ERROR'; return e; };
  const statsOf = (device) => JSON.parse(native.memoryStatsJson(device));
  const deviceIndex = (device) => (typeof device === 'number' ? device
    : device === undefined || device === null || device === 'cuda' ? native.currentDevice()
      : Number(String(device).replace(/^cuda:/, '')));

  /** A CUDA stream: work queued on it runs in order; different streams may overlap. */
  class Stream {
    /**
     * @param {{device?: CudaDeviceLike, priority?: number}} [opts] priority: 0 default, negative is higher
     */
    constructor(opts = {}) {
      if (opts && opts._handle !== undefined) {
        this._h = opts._handle;
        this.device = opts._device;
        return;
      }
      this.device = deviceIndex(opts.device);
      this._h = native.streamCreate(this.device, opts.priority ?? 0);
    }
    /** True when all work queued on the stream has finished. */
    query() { return native.streamQuery(this.device, this._h); }
    /** Resolves when all work queued so far on the stream has finished (no thread blocks). */
    async synchronize() { return native.synchronizeAsync(this.device, this._h); }
    /** Work queued on this stream from now on waits for `event`. */
    waitEvent(event) { native.streamWaitEvent(this.device, this._h, event._ev()); }
    /** Work queued on this stream from now on waits for the work queued so far on `stream`. */
    waitStream(stream) { const e = new Event(); e.record(stream); this.waitEvent(e); }
    /** Records a new event on this stream. */
    recordEvent(event) { const e = event || new Event(); e.record(this); return e; }
    equals(other) { return other instanceof Stream && other._h === this._h && other.device === this.device; }
    get handle() { return this._h; }
  }
  const wrapStream = (h, d) => new Stream({ _handle: h, _device: d });

  /** A CUDA event: a marker in a stream's work, to wait on, query or time. */
  class Event {
    /** @param {{enableTiming?: boolean}} [opts] */
    constructor(opts = {}) {
      this.enableTiming = !!opts.enableTiming;
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
      const s = stream || wrapStream(native.currentStream(native.currentDevice()), native.currentDevice());
      if (!this._e) { this.device = s.device; this._e = native.eventCreate(this.device, this.enableTiming); }
      native.eventRecord(this._e, s.device, s._h);
    }
    /** True when the work recorded before the event has finished (or it was never recorded). */
    query() { return this._e ? native.eventQuery(this._e) : true; }
    /** Resolves when the event has completed; no thread blocks. */
    async synchronize() { if (this._e) await native.eventSynchronizeAsync(this._e, this.device); }
    /** Milliseconds between this event and `end` (both recorded, with enableTiming). */
    elapsedTime(end) { return native.eventElapsedTime(this._ev(), end._ev()); }
    /** Makes `stream` (default: the current one) wait for this event. */
    wait(stream) { (stream || wrapStream(native.currentStream(this.device ?? undefined), this.device ?? native.currentDevice())).waitEvent(this); }
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
    synchronize: async (device) => native.synchronizeAsync(device),

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
    memorySummary: (device) => native.memorySummary(device),
    /**
     * Every segment reserved from the device and its blocks:
     * [{device, address, totalSize, allocatedSize, activeSize, requestedSize, stream,
     *   segmentType: 'small'|'large', blocks: [{address, size, requestedSize, state}]}].
     */
    memorySnapshot: (device) => JSON.parse(native.memorySnapshotJson(device)),
    /** Gives every cached, unused segment back to the device (after pending stream uses). */
    emptyCache: (device) => native.emptyCache(device),
    /** Resets the peaks of memoryStats() to the current values. */
    resetPeakMemoryStats: (device) => native.resetPeakMemoryStats(device),
    /** Caps the memory this process reserves on the device at fraction * total. */
    setPerProcessMemoryFraction: (fraction, device) => native.setPerProcessMemoryFraction(fraction, device),

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
      if (stream === null || stream === undefined) return fn();
      if (!(stream instanceof Stream)) throw typeError('withStream(stream, fn): stream must be a kd.cuda.Stream');
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
    /** @private test hook: a kernel that spins about `ms` milliseconds on the current stream. */
    _spin: (ms, device) => native.spin(deviceIndex(device), ms),
  };
  installTensorMethods(binding);
  return api;
};
