// autograd.js - the JS face of the autograd engine (src/autograd, src/napi/autograd.c):
// Tensor#requiresGrad/grad/gradFn/isLeaf/retainGrad/detach/registerHook/backward,
// kd.autograd.{grad, backward, Function, gradcheck, gradgradcheck, detectAnomaly}, and the
// modes kd.noGrad / enableGrad / setGradEnabled / isGradEnabled / inferenceMode.
//
// Note [Grad modes and async functions]: the modes are thread-local flags in C. A mode
// function given a sync function sets the flag, runs it and restores it. Given an async
// function it also runs it inside an AsyncLocalStorage scope; while any such scope is pending,
// every op call first re-applies the mode of the scope it runs in (rt.syncMode, called from the
// generated op functions when rt.modeActive), so interleaved async code sees its own mode.
'use strict';

const { AsyncLocalStorage } = require('node:async_hooks');
const { KindlingError, typeError } = require('./errors');

module.exports = function installAutograd(kd, Tensor, N, rt) {
  const A = N.autograd;
  const als = new AsyncLocalStorage();
  let globalMode = { grad: true, inference: false };
  let current = globalMode;
  let pendingAsync = 0;

  function apply(m) {
    if (m.grad !== current.grad) A.setGradEnabled(m.grad);
    if (m.inference !== current.inference) A.setInferenceMode(m.inference);
    current = m;
  }
  rt.modeActive = false;
  rt.syncMode = () => apply(als.getStore() || globalMode);

  function withMode(mode, fn, what) {
    if (typeof fn !== 'function') throw typeError(`${what}() expects a function`);
    if (rt.modeActive) rt.syncMode();
    current = { grad: A.isGradEnabled(), inference: A.isInferenceMode() }; // the engine may have changed it
    const prev = current;
    apply(mode);
    let r;
    try {
      r = als.run(mode, fn);
    } catch (e) {
      apply(prev);
      throw e;
    }
    apply(prev);
    if (r && typeof r.then === 'function') {
      pendingAsync++;
      rt.modeActive = true;
      return Promise.resolve(r).finally(() => {
        if (--pendingAsync === 0) rt.modeActive = false;
        rt.syncMode();
      });
    }
    return r;
  }
  const modeNow = () => (rt.modeActive ? als.getStore() || globalMode : current);

  /** Runs fn with gradient recording off (sync or async). */
  kd.noGrad = (fn) => withMode({ ...modeNow(), grad: false }, fn, 'noGrad');
  /** Runs fn with gradient recording on (sync or async). */
  kd.enableGrad = (fn) => withMode({ ...modeNow(), grad: true }, fn, 'enableGrad');
  /** Turns gradient recording on or off for code outside noGrad/enableGrad scopes. */
  kd.setGradEnabled = (on) => {
    if (typeof on !== 'boolean') throw typeError('setGradEnabled() expects a boolean');
    const store = rt.modeActive ? als.getStore() : undefined;
    if (store) store.grad = on;
    else globalMode = { ...globalMode, grad: on };
    apply(store ? { ...store } : globalMode);
  };
  /** Whether operations are recorded for autograd right now. */
  kd.isGradEnabled = () => modeNow().grad;
  /** Runs fn in inference mode: no recording at all, and the tensors it makes cannot be saved
   * for backward later. (sync or async) */
  kd.inferenceMode = (fn) => withMode({ grad: false, inference: true }, fn, 'inferenceMode');
  kd.isInferenceModeEnabled = () => modeNow().inference;

  // Factories take requiresGrad as PyTorch's do: kd.zeros(2, 3, {requiresGrad: true}).
  const FACTORIES = ['empty', 'zeros', 'ones', 'full', 'arange', 'linspace', 'eye', 'rand', 'randn', 'randint',
    'emptyLike', 'zerosLike', 'onesLike', 'fullLike', 'randLike', 'randnLike', 'randintLike'];
  // Note [Factories' fast path]
  // kd.empty([16], {device}) was a third slower than torch.empty: the general binding in
  // lib/args.js (overload matching, list copying, options parsing) cost as much as the native
  // call. The factories of one size list and keyword dtype/device take a direct path for the
  // common call shape: a plain array of at most 8 non-negative integers, then at most an
  // options object whose own keys are dtype (a dtype's name), device ('cpu', 'cuda', 'cuda:N')
  // and requiresGrad (a boolean). The list is copied (native code reads the copy, so no getter runs inside the call);
  // anything else, including every error, goes the general way.
  const SIZE_FACTORIES = new Set(['empty', 'zeros', 'ones', 'rand', 'randn']);
  const OPTION_OK = {
    dtype: (v) => DTYPE_NAMES.has(v),
    device: (v) => typeof v === 'string' && /^(cpu|cuda(:\d{1,3})?)$/.test(v),
    requiresGrad: (v) => typeof v === 'boolean',
  };
  const DTYPE_NAMES = new Set(require('./dtypes').DTYPES);
  function plainSizes(a) {
    if (!Array.isArray(a) || a.length > 8) return null;
    const out = new Array(a.length);
    for (let i = 0; i < a.length; i++) {
      const v = a[i];
      if (!Number.isInteger(v) || v < 0) return null;
      out[i] = v;
    }
    return out;
  }
  function plainOptions(o) {
    if (o === undefined) return true;
    if (o === null || typeof o !== 'object' || Object.getPrototypeOf(o) !== Object.prototype) return false;
    for (const k of Object.keys(o)) {
      const v = o[k];
      if (!Object.prototype.hasOwnProperty.call(OPTION_OK, k) || (v !== undefined && !OPTION_OK[k](v))) return false;
    }
    return true;
  }
  for (const name of FACTORIES) {
    const f = kd[name];
    if (typeof f !== 'function') continue;
    const native = SIZE_FACTORIES.has(name) ? N.ops[name] : null;
    kd[name] = function factory(...args) {
      if (native !== null && args.length <= 2 && plainOptions(args[1])) {
        const sizes = plainSizes(args[0]);
        if (sizes !== null) {
          if (rt.modeActive) rt.syncMode();
          const o = args[1];
          const t = new Tensor(o === undefined ? native(sizes, undefined, undefined) : native(sizes, o.dtype, o.device));
          if (o !== undefined && o.requiresGrad) t.requiresGrad_(true);
          return t;
        }
      }
      const last = args[args.length - 1];
      if (last !== null && typeof last === 'object' && !Array.isArray(last) && !(last instanceof Tensor) && 'requiresGrad' in last) {
        const { requiresGrad, ...rest } = last;
        args[args.length - 1] = rest;
        const t = f.apply(this, args);
        if (requiresGrad) t.requiresGrad_(true);
        return t;
      }
      return f.apply(this, args);
    };
    Object.defineProperty(kd[name], 'name', { value: name });
  }

  // ---------------------------------------------------------------- Tensor API
  const P = Tensor.prototype;
  Object.defineProperty(P, 'requiresGrad', {
    get() { return A.requiresGrad(this._h); },
    set(v) {
      if (typeof v !== 'boolean') throw typeError('requiresGrad must be a boolean');
      A.setRequiresGrad(this._h, v);
    },
    configurable: true,
  });
  /** Sets requiresGrad (default true) and returns this. */
  P.requiresGrad_ = function requiresGrad_(requiresGrad = true) {
    this.requiresGrad = requiresGrad;
    return this;
  };
  Object.defineProperty(P, 'grad', {
    get() {
      const h = A.grad(this._h);
      return h === null ? null : new Tensor(h);
    },
    set(g) {
      if (g !== null && g !== undefined && !(g instanceof Tensor)) throw typeError('grad must be a Tensor or null');
      A.setGrad(this._h, g ? g._h : null);
    },
    configurable: true,
  });
  Object.defineProperty(P, 'gradFn', {
    get() {
      const n = A.gradFn(this._h);
      return n === null ? null : new Node(n);
    },
    configurable: true,
  });
  Object.defineProperty(P, 'isLeaf', { get() { return A.isLeaf(this._h); }, configurable: true });
  Object.defineProperty(P, 'retainsGrad', { get() { return A.retainsGrad(this._h); }, configurable: true });
  Object.defineProperty(P, 'isInference', { value: function isInference() { return A.isInference(this._h); }, configurable: true, writable: true });
  /** Keeps .grad of this non-leaf tensor after backward. */
  P.retainGrad = function retainGrad() { A.retainGrad(this._h); };
  /** A tensor sharing this one's data, cut off from the graph. */
  P.detach = function detach() { return new Tensor(A.detach(this._h)); };
  /** Cuts this tensor off from the graph, in place. */
  P.detach_ = function detach_() { A.detach_(this._h); return this; };
  /** fn(grad) runs when this tensor's gradient is computed; it may return a replacement of the
   * same shape, dtype and device (else backward throws). Returns a handle whose remove()
   * unregisters it. */
  P.registerHook = function registerHook(fn) {
    if (typeof fn !== 'function') throw typeError('registerHook() expects a function');
    const self = this;
    const id = A.registerHook(this._h, hookCaller(fn), fn.name);
    return { remove() { A.removeHook(self._h, id); } };
  };
  // The function handed to the engine is held by the native tensor through a strong reference,
  // so it must not reach the tensor's JS object: a closure made inside registerHook would share
  // its scope (and `self`), and the tensor, its hook and its graph would never be freed.
  function hookCaller(fn) {
    return (gh) => {
      const r = fn(new Tensor(gh));
      if (r === undefined || r === null) return undefined;
      if (!(r instanceof Tensor)) throw typeError('a hook must return a Tensor or nothing');
      return r._h;
    };
  }
  /** Computes the gradient of this tensor w.r.t. the graph leaves (accumulated into .grad). */
  P.backward = function backward(gradient, options) {
    if (gradient !== undefined && gradient !== null && !(gradient instanceof Tensor)) {
      if (typeof gradient === 'object' && options === undefined) { options = gradient; gradient = undefined; }
      else throw typeError('backward(gradient?, options?): gradient must be a Tensor');
    }
    return runBackward([this], [gradient || null], options || {});
  };

  function runBackward(tensors, grads, { retainGraph, createGraph = false, inputs } = {}) {
    if (inputs !== undefined) {
      if (inputs instanceof Tensor) inputs = [inputs];
      if (!Array.isArray(inputs) || inputs.length === 0) throw typeError("backward(): 'inputs' must be a non-empty array of Tensors");
    }
    const keep = retainGraph === undefined ? createGraph : retainGraph;
    if (rt.modeActive) rt.syncMode();
    A.run(tensors.map(handleOf('tensors')), grads.map((g) => (g ? handleOf('grad_tensors')(g) : null)),
      inputs ? inputs.map(handleOf('inputs')) : null, !!keep, !!createGraph, true, false);
  }

  const handleOf = (what) => (t) => {
    if (!(t instanceof Tensor)) throw typeError(`${what} must be Tensors, got ${typeof t}`);
    return t._h;
  };

  // ---------------------------------------------------------------- grad_fn nodes
  class Node {
    constructor(h) { Object.defineProperty(this, '_n', { value: h }); }
    /** PyTorch's name: 'MulBackward0', 'AccumulateGrad', ... */
    get name() { return A.nodeName(this._n); }
    /** [[Node|null, inputNr], ...]: where this node's gradients go. */
    get nextFunctions() { return A.nodeNext(this._n).map(([n, nr]) => [n === null ? null : new Node(n), nr]); }
    /** For AccumulateGrad nodes: the leaf tensor. */
    get variable() {
      const h = A.nodeLeaf(this._n);
      return h === null ? undefined : new Tensor(h);
    }
    /** True when both objects stand for the same graph node. */
    equals(other) { return other instanceof Node && A.nodeSame(this._n, other._n); }
    toString() { return `<${this.name}>`; }
    [Symbol.for('nodejs.util.inspect.custom')]() { return `<${this.name}>`; }
  }

  // ---------------------------------------------------------------- kd.autograd
  const autograd = kd.autograd || (kd.autograd = {});
  autograd.Node = Node;

  /** Gradients of outputs w.r.t. inputs (returned, not accumulated into .grad). */
  autograd.grad = function grad(outputs, inputs, gradOutputs, options = {}) {
    if (gradOutputs && !Array.isArray(gradOutputs) && !(gradOutputs instanceof Tensor)) { options = gradOutputs; gradOutputs = undefined; }
    const outs = outputs instanceof Tensor ? [outputs] : outputs;
    const ins = inputs instanceof Tensor ? [inputs] : inputs;
    if (!Array.isArray(outs) || !Array.isArray(ins)) throw typeError('autograd.grad(outputs, inputs, gradOutputs?, options?) expects Tensors or arrays of Tensors');
    let gos = gradOutputs instanceof Tensor ? [gradOutputs] : gradOutputs || outs.map(() => null);
    if (gos.length !== outs.length) throw new KindlingError(`grad_outputs should have the same length as outputs (${gos.length} vs ${outs.length})`, 'KD_INVALID_ARGUMENT');
    const { retainGraph, createGraph = false, allowUnused = false } = options;
    const keep = retainGraph === undefined ? createGraph : retainGraph;
    if (rt.modeActive) rt.syncMode();
    const r = A.run(outs.map(handleOf('outputs')), gos.map((g) => (g ? handleOf('grad_outputs')(g) : null)),
      ins.map(handleOf('inputs')), !!keep, !!createGraph, false, !!allowUnused);
    return r.map((h) => (h === null ? null : new Tensor(h)));
  };
  /** backward() of several tensors at once. */
  autograd.backward = function backwardMany(tensors, gradTensors, options = {}) {
    const ts = tensors instanceof Tensor ? [tensors] : tensors;
    const gs = gradTensors instanceof Tensor ? [gradTensors] : gradTensors || ts.map(() => null);
    return runBackward(ts, gs, options);
  };

  /** Runs fn with anomaly detection: a backward that produces NaN names the node that did, with
   * the forward call site when known. */
  autograd.detectAnomaly = function detectAnomaly(fn) {
    if (typeof fn !== 'function') throw typeError('detectAnomaly() expects a function');
    // the forward call site of each recorded op: the stack without the frames inside kindling
    const here = __dirname;
    A.setAnomalyEnabled(true, () => String(new Error().stack).split('\n').slice(1)
      .filter((l) => !l.includes(here)).slice(0, 8).join('\n'));
    let r;
    try {
      r = fn();
    } catch (e) {
      A.setAnomalyEnabled(false);
      throw e;
    }
    if (r && typeof r.then === 'function') return Promise.resolve(r).finally(() => A.setAnomalyEnabled(false));
    A.setAnomalyEnabled(false);
    return r;
  };

  require('./autograd_function')(autograd, kd, Tensor, A);
  require('./gradcheck')(autograd, kd, Tensor);
  return autograd;
};
