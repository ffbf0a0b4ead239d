// lib/cuda_graphs.js - CUDA graphs, as PyTorch's torch.cuda.CUDAGraph, torch.cuda.graph,
// torch.cuda.graph_pool_handle and torch.cuda.make_graphed_callables: capture the kernels of a
// step once, replay them with one launch. Native side: binding.cuda.graphOp (src/napi/cuda.c)
// -> KD_CUDA_OP_GRAPH (cuda/graphs.cu); memory of a capture comes from a graph-private pool of
// the caching allocator (Note [Graph-private pools] in cuda/caching_allocator_core.c).
//
// Rules of capture (as on a GPU): a captured function runs its kernels ONCE, at replay, on the
// tensors it used during capture: inputs must be static tensors updated in place (copy_)
// between replays, and its outputs are static tensors overwritten by each replay. A host read
// (item(), dataSync(), dataAsync()), a device synchronisation or an op whose output shape depends on
// the data (nonzero, maskedSelect, unique) fails during capture with KD_CUDA_GRAPH_CAPTURE; the
// capture is then discarded and the device stays usable. Run the function once or twice before
// capturing (warm-up): lazily created library handles and pinned buffers must exist first.
// Random ops draw fresh numbers at each replay: replay k draws what the k-th eager run would
// from the same seed (Note [Random ops in CUDA graphs] in cuda/philox_state.cuh).
// A graph keeps every storage its captured kernels read or write (static inputs included) until
// reset(), dispose() or its collection: disposing a captured tensor cannot let a replay write
// into memory given to another tensor (Note [Storages a CUDA graph keeps] in
// src/cuda_bridge/graph_keep.c).
'use strict';

const { KindlingError, typeError } = require('./errors');
const { describe } = require('./tensor');

// KD_CUDA_GRAPH_* in cuda/kd_cuda_api.h
const POOL_NEW = 0, BEGIN = 1, END = 2, REPLAY = 3, RESET = 4, STATUS = 5, POOL_USES = 6;
// cudaStreamCaptureMode
const MODES = { global: 0, thread_local: 1, relaxed: 2 };

module.exports = function makeCudaGraphs(native, cuda) {
  /** An opaque handle of a graph memory pool, to share one pool between graphs (`pool` options). */
  const MAKE = Symbol('GraphPoolHandle');
  class GraphPoolHandle {
    constructor(token, id, device) {
      if (token !== MAKE) throw typeError('kd.cuda.GraphPoolHandle is not constructed directly: kd.cuda.graphPoolHandle() or graph.pool() give one');
      this._id = id;
      this.device = device;
      Object.freeze(this);
    }
    /** How many captured graphs use the pool now (0 once all were reset). */
    uses() { return native.graphOp(this.device, POOL_USES, this._id, 0); }
  }

  const poolArg = (pool, device, where) => {
    if (pool === undefined || pool === null) return 0;
    if (!(pool instanceof GraphPoolHandle)) throw typeError(`${where}: pool must be a handle from kd.cuda.graphPoolHandle() or graph.pool(), got ${describe(pool)}`);
    if (pool.device !== device) throw new KindlingError(`${where}: the pool belongs to cuda:${pool.device}, the capture is on cuda:${device}`, 'KD_DEVICE_MISMATCH');
    return pool._id;
  };

  /**
   * A CUDA graph (torch.cuda.CUDAGraph): captureBegin() / captureEnd() around the work to record
   * (on a non-default stream: kd.cuda.graph() provides one), then replay() runs it again with one
   * launch, on the current stream. reset() frees the graph and its use of its memory pool.
   */
  // A graph collected without reset() is reset then (its storages and pool use are released).
  const collected = new FinalizationRegistry(({ device, graph }) => {
    try { native.graphOp(device, RESET, graph, 0); } catch { /* the device is gone: nothing left to free */ }
  });

  class CUDAGraph {
    constructor() {
      this._graph = 0;
      this._pool = 0;
      this._device = -1;
      this._capturing = false;
    }

    /**
     * Begins capturing the current stream of the current device (not the default stream).
     * @param {{pool?: GraphPoolHandle, captureErrorMode?: 'global'|'thread_local'|'relaxed'}} [opts]
     *   pool: share the memory pool of another graph or of kd.cuda.graphPoolHandle() (graphs
     *   sharing a pool must be replayed in capture order); captureErrorMode: which other calls
     *   CUDA refuses during the capture, as PyTorch's capture_error_mode (default 'thread_local':
     *   those of this thread)
     */
    captureBegin(opts = {}) {
      if (opts === null || typeof opts !== 'object') throw typeError(`captureBegin(options): options must be an object, got ${describe(opts)}`);
      if (this._capturing) throw new KindlingError('captureBegin(): this graph is already capturing', 'KD_INVALID_ARGUMENT');
      if (this._graph) throw new KindlingError('captureBegin(): this graph was already captured; call reset() first', 'KD_INVALID_ARGUMENT');
      const device = cuda.currentDevice();
      const pool = poolArg(opts.pool, device, 'captureBegin(options)');
      const mode = MODES[opts.captureErrorMode ?? 'thread_local'];
      if (mode === undefined) throw typeError(`captureBegin(options): captureErrorMode must be 'global', 'thread_local' or 'relaxed', got ${describe(opts.captureErrorMode)}`);
      this._pool = native.graphOp(device, BEGIN, pool, mode);
      this._device = device;
      this._capturing = true;
    }

    /** Ends the capture and instantiates the graph. Throws if the capture failed (it is then discarded). */
    captureEnd() {
      if (!this._capturing) throw new KindlingError('captureEnd(): captureBegin() was not called', 'KD_INVALID_ARGUMENT');
      this._capturing = false;
      try {
        this._graph = native.graphOp(this._device, END, this._pool, 0);
        collected.register(this, { device: this._device, graph: this._graph }, this);
      } catch (e) {
        this._pool = 0;
        throw e;
      }
    }

    /** @private Discards a capture that failed (the device stays usable). */
    _abort() {
      if (!this._capturing) return;
      this._capturing = false;
      native.graphOp(this._device, END, this._pool, 1);
      this._pool = 0;
    }

    /** Replays the captured work on the current stream: one graph launch (its random ops draw from the generator, which advances). */
    replay() {
      if (!this._graph) throw new KindlingError('replay(): the graph has not been captured (call captureBegin()/captureEnd() or kd.cuda.graph())', 'KD_INVALID_ARGUMENT');
      native.graphOp(this._device, REPLAY, this._graph, 0);
    }

    /**
     * Frees the graph and releases the tensors' storages it kept alive; its memory pool goes
     * back to the allocator once no graph uses it.
     */
    reset() {
      if (this._capturing) this._abort();
      if (this._graph) {
        collected.unregister(this);
        native.graphOp(this._device, RESET, this._graph, 0);
      }
      this._graph = 0;
      this._pool = 0;
    }

    /** The same as reset() (also `using g = new kd.cuda.CUDAGraph()`). */
    dispose() { this.reset(); }
    [Symbol.dispose || Symbol.for('nodejs.dispose')]() { this.reset(); }

    /** The graph's memory pool, to share with a later capture ({pool: g.pool()}). */
    pool() {
      if (!this._pool) throw new KindlingError('pool(): the graph has no memory pool (capture it first)', 'KD_INVALID_ARGUMENT');
      return new GraphPoolHandle(MAKE, this._pool, this._device);
    }
  }

  const captureStreams = new Map();
  const captureStream = (device) => {
    if (!captureStreams.has(device)) captureStreams.set(device, new cuda.Stream({ device }));
    return captureStreams.get(device);
  };

  /**
   * Captures fn into g (torch.cuda.graph): on a side stream (opts.stream, or one per device),
   * between g.captureBegin({pool}) and g.captureEnd(). fn may return a Promise (the capture ends
   * when it settles; nothing else may use the device meanwhile). Returns what fn returns. If fn
   * throws, the capture is discarded and the error rethrown.
   * @param {CUDAGraph} g
   * @param {() => any} fn
   * @param {{pool?: GraphPoolHandle, stream?: object, captureErrorMode?: string}} [opts] as captureBegin's, and
   *   the stream to capture on
   */
  function graph(g, fn, opts = {}) {
    if (!(g instanceof CUDAGraph)) throw typeError(`graph(g, fn): g must be a kd.cuda.CUDAGraph, got ${describe(g)}`);
    if (typeof fn !== 'function') throw typeError(`graph(g, fn): fn must be a function, got ${describe(fn)}`);
    if (opts === null || typeof opts !== 'object') throw typeError(`graph(g, fn, options): options must be an object, got ${describe(opts)}`);
    const stream = opts.stream ?? captureStream(cuda.currentDevice());
    return cuda.withStream(stream, () => {
      g.captureBegin({ pool: opts.pool, captureErrorMode: opts.captureErrorMode });
      let result;
      try {
        result = fn();
      } catch (e) {
        g._abort();
        throw e;
      }
      if (result && typeof result.then === 'function') {
        return Promise.resolve(result).then(
          (v) => { g.captureEnd(); return v; },
          (e) => { g._abort(); throw e; });
      }
      g.captureEnd();
      return result;
    });
  }

  /**
   * A new memory pool handle (torch.cuda.graph_pool_handle), for captures that share memory.
   * @param {number|string} [device]
   */
  function graphPoolHandle(device) {
    const d = device === undefined ? cuda.currentDevice() : native.deviceIndex(device);
    return new GraphPoolHandle(MAKE, native.graphOp(d, POOL_NEW, 0, 0), d);
  }

  /** Whether the current stream of the current device is capturing a graph. */
  function isCurrentStreamCapturing() {
    return native.graphOp(cuda.currentDevice(), STATUS, 0, 0) !== 0;
  }

  /**
   * Graphed versions of a module or function (torch.cuda.make_graphed_callables): the forward
   * and the backward are each captured once (after three warm-up iterations, on a side stream,
   * sharing one memory pool) with `sampleInputs` as the static inputs. The result runs as one
   * autograd function: it copies its inputs into the static inputs, replays the forward graph
   * and returns the static outputs (overwritten by the next call, as in PyTorch); its backward
   * copies the incoming gradients into static gradient buffers, replays the backward graph and
   * hands the gradients of the inputs and of the module's parameters to autograd. Inputs must
   * have the shapes, dtypes and requiresGrad of the samples. For a module, the module is
   * returned with forward graphed while it is in training mode (eval mode runs the original).
   * @param {object|Function} module a kd.nn.Module or a function of tensors returning tensors
   * @param {object|object[]} sampleInputs a tensor or an array of tensors (on the CUDA device)
   */
  function makeGraphedCallables(module, sampleInputs) {
    const kd = require('./index');
    const isModule = module instanceof kd.nn.Module;
    if (!isModule && typeof module !== 'function') throw typeError(`makeGraphedCallables(module, sampleInputs): expected a kd.nn.Module or a function, got ${describe(module)}`);
    const inputs = Array.isArray(sampleInputs) ? sampleInputs : [sampleInputs];
    if (!inputs.length || !inputs.every((t) => t instanceof kd.Tensor && t.device.startsWith('cuda'))) {
      throw typeError('makeGraphedCallables(module, sampleInputs): sampleInputs must be CUDA tensors');
    }
    const original = isModule ? module.forward.bind(module) : module;
    const params = isModule ? module.parameters().filter((p) => p.requiresGrad) : [];
    const wrt = [...inputs.filter((t) => t.requiresGrad), ...params];
    const asArray = (o) => (Array.isArray(o) ? o : [o]);
    const keepAll = (ts) => ts.map((t) => (t ? kd.keep(t) : t)); // static tensors outlive any tidy scope
    const device = Number(inputs[0].device.split(':')[1] || 0);
    const pool = graphPoolHandle(device);
    const stream = captureStream(device);
    const gradsOf = (outs, gos) => kd.autograd.grad(outs, wrt, gos, { allowUnused: true });
    cuda.withStream(stream, () => {
      for (let i = 0; i < 3; i++) kd.tidy(() => { const outs = asArray(original(...inputs)); gradsOf(outs, outs.map((o) => kd.onesLike(o))); });
    });
    const fwd = new CUDAGraph(), bwd = new CUDAGraph();
    let single = false;
    const staticOutputs = keepAll(graph(fwd, () => kd.tidy(() => {
      const o = original(...inputs);
      single = !Array.isArray(o);
      return asArray(o);
    }), { pool, stream }));
    const staticGradOutputs = keepAll(staticOutputs.map((o) => kd.zerosLike(o)));
    const staticGrads = keepAll(graph(bwd, () => kd.tidy(() => gradsOf(staticOutputs, staticGradOutputs)), { pool, stream }));

    class Graphed extends kd.autograd.Function {
      static forward(ctx, ...args) {
        inputs.forEach((t, i) => { if (args[i] !== t) t.copy_(args[i]); });
        fwd.replay();
        const outs = staticOutputs.map((o) => o.detach());
        return single ? outs[0] : outs;
      }
      static backward(ctx, ...grads) {
        grads.forEach((g, i) => { if (g) staticGradOutputs[i].copy_(g); else staticGradOutputs[i].zero_(); });
        bwd.replay();
        let k = 0;
        const take = () => { const g = staticGrads[k++]; return g ? g.clone() : null; };
        return [...inputs.map((t) => (t.requiresGrad ? take() : null)), ...params.map(take)];
      }
    }
    const graphed = (...args) => {
      if (args.length !== inputs.length) throw typeError(`graphed callable: expected ${inputs.length} inputs, got ${args.length}`);
      return Graphed.apply(...args, ...params);
    };
    if (!isModule) return graphed;
    module.forward = (...args) => (module.training ? graphed(...args) : original(...args));
    return module;
  }

  return { CUDAGraph, GraphPoolHandle, graph, graphPoolHandle, isCurrentStreamCapturing, makeGraphedCallables };
};
