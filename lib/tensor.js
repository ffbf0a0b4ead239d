// tensor.js - the Tensor class: a thin JS object around a native tensor handle (`_h`).
// Op methods (t.add, t.sum, ...) are installed on the prototype by lib/ops.gen.js; this file
// holds metadata getters, data access, printing, device/dtype moves and disposal.
//
// The constructor runs once per op result (see Note [Tidy scopes] in lib/tidy.js), so it only
// stores the handle and, while a tidy scope is active, records the tensor there.
'use strict';

const util = require('node:util');
const tidyState = require('./tidy').state;
const { track } = require('./tidy');
const { formatTensor, isSummarized, summaryView } = require('./format');
const { typeError, KindlingRangeError, KindlingError } = require('./errors');
const { DTYPES, dtypeOrDevice } = require('./dtypes');
const { nestedArrays, checkNestedFits } = require('./nested');

let N = null; // the native binding, set by bind()
let generatedTo = null; // the generated `to` op method

const disposeSymbol = Symbol.dispose || Symbol.for('nodejs.dispose');

class Tensor {
  /** @internal Wraps a native handle; use kd.tensor() and the factory functions instead. */
  constructor(handle) {
    this._h = handle;
    if (tidyState.active !== 0) track(this);
  }

  /** The size of each dim, as a new plain array. */
  get shape() { return N.shape(this._h); }
  /** The element type: 'float32', 'int64', ... */
  get dtype() { return N.dtype(this._h); }
  /** 'cpu' or 'cuda:N'. */
  get device() { return N.device(this._h); }
  /** The number of dims. */
  get ndim() { return N.ndim(this._h); }
  /** Bumped by every in-place op on this tensor's storage. */
  get version() { return N.version(this._h); }
  /** True after dispose(). */
  get isDisposed() { return N.isDisposed(this._h); }

  /** The number of elements. */
  numel() { return N.numel(this._h); }
  /** dim(): alias of ndim, as in PyTorch. */
  dim() { return N.ndim(this._h); }
  /** The size of one dim (negative counts from the end), or the whole shape. */
  size(dim) {
    const shape = N.shape(this._h);
    if (dim === undefined) return shape;
    return shape[normDim(dim, shape.length, 'size')];
  }
  /** The stride (in elements) of one dim, or all strides. */
  stride(dim) {
    const strides = N.strides(this._h);
    if (dim === undefined) return strides;
    return strides[normDim(dim, strides.length, 'stride')];
  }
  /** The offset (in elements) of the first element in the storage. */
  storageOffset() { return N.storageOffset(this._h); }
  /** True when the elements are laid out row-major without gaps. */
  isContiguous() { return N.isContiguous(this._h); }

  /**
   * A copy of the elements in row-major order, as a typed array: Float32Array for float32,
   * float16 and bfloat16, Float64Array, Int8Array, Uint8Array (uint8 and bool), Int16Array,
   * Int32Array, BigInt64Array (int64). Blocks until the data is on the host.
   */
  dataSync() { return hostValues(this._h); }
  /**
   * dataSync() as a Promise; on a CUDA tensor the copy lands without blocking the event loop.
   * (It was `t.data()` before the first release: `t.data` is now PyTorch's property, a Tensor.)
   */
  async dataAsync() { return this.dataSync(); }

  /**
   * PyTorch's `tensor.data`: a new Tensor sharing this one's storage, outside autograd
   * (requiresGrad false, no grad_fn), as detach(): `p.data.normal_(0, 0.1)`, `h = h.data`.
   * In-place ops on it bump the version this tensor shares (PyTorch's .data has a counter of its
   * own), so changing a value saved for a backward pass not yet run is still an error.
   * Not a method: the asynchronous read is `await t.dataAsync()`.
   */
  get data() { return new Tensor(N.autograd.detach(this._h)); }
  /**
   * `p.data = t` (PyTorch's set_data): this tensor takes t's storage, shape, strides and dtype,
   * keeping its own autograd state (requiresGrad, grad, hooks), so every holder of it (a module,
   * an optimizer) sees the new data. The device type must be the same (cpu or cuda); a tensor
   * that requires grad needs a floating point t. See Note [set_data] in src/autograd/node.c.
   */
  set data(t) {
    if (!(t instanceof Tensor)) throw typeError(`Variable data has to be a tensor, but got ${describe(t)}`);
    N.autograd.setData(this._h, t._h);
  }

  /**
   * The elements as nested arrays (a number or boolean for a 0-d tensor; int64 as numbers).
   * A KD_OUT_OF_MEMORY error when they would not fit in the JavaScript heap.
   */
  arraySync() {
    const shape = N.shape(this._h);
    checkNestedFits(shape, 'arraySync()');
    const data = this.dataSync();
    const isBool = N.dtype(this._h) === 'bool';
    return nestedArrays(data, shape, data instanceof BigInt64Array ? Number : isBool ? (v) => v !== 0 : null);
  }
  /** arraySync() as a Promise. */
  async array() { return this.arraySync(); }

  /** The value of a one-element tensor, as a number (or boolean for bool tensors). */
  item() { return N.item(this._h); }

  /**
   * This tensor with another dtype and/or on another device. Accepts a dtype ('float64', or
   * a PyTorch alias such as 'double'), a device ('cuda', 'cuda:1', 'cpu'), a Tensor (its dtype and device), or an options
   * object {dtype, device, copy}; an options object may also follow a dtype or device.
   * Returns a tensor sharing this one's data when nothing changes (unless copy is true).
   */
  to(target, options) {
    let opts;
    if (typeof target === 'string') {
      opts = dtypeOrDevice(target, 'to()');
    } else if (target instanceof Tensor) {
      opts = { dtype: target.dtype, device: target.device };
    } else if (target === undefined || target === null) {
      opts = {};
    } else if (typeof target === 'object' && !Array.isArray(target)) {
      if (options !== undefined) throw typeError('to(): an options object must be the last argument');
      return generatedTo.call(this, target);
    } else {
      throw typeError(`to(): expected a dtype, a device, a Tensor or an options object, got ${describe(target)}`);
    }
    if (options !== undefined) {
      if (options === null || typeof options !== 'object' || Array.isArray(options)) {
        throw typeError(`to(): options must be an object, got ${describe(options)}`);
      }
      opts = { ...options, ...opts };
    }
    return generatedTo.call(this, opts);
  }
  /** to('cpu'). */
  cpu() { return this.to({ device: 'cpu' }); }
  /** to('cuda') or to('cuda:<index>'). */
  cuda(index) {
    if (index === undefined || index === null) return this.to({ device: 'cuda' });
    if (!Number.isInteger(index) || index < 0) {
      throw typeError(`cuda(index): index must be a non-negative integer, got ${describe(index)}`);
    }
    return this.to({ device: `cuda:${index}` });
  }

  /** Frees this tensor's reference to its data now. Safe to call more than once. */
  dispose() { N.dispose(this._h); }
  /** `using t = kd.zeros(3)` disposes t at the end of the block. */
  [disposeSymbol]() { N.dispose(this._h); }

  /** PyTorch's str(): tensor([1., 2.], requires_grad=True); only the values shown are read. */
  toString() {
    const h = this._h;
    if (N.isDisposed(h)) return 'tensor(<disposed>)';
    const shape = N.shape(h);
    const gradFn = N.autograd.gradFnName(h); // a name, no node handle: See kd_ag_grad_fn_name
    return formatTensor({
      shape, dtype: N.dtype(h), device: N.device(h),
      data: isSummarized(shape) ? summaryValues(h, shape) : hostValues(h),
      requiresGrad: N.autograd.requiresGrad(h), gradFn,
    });
  }
  [util.inspect.custom]() { return this.toString(); }

  // ---------------------------------------------------------------------------------------
  // PyTorch's transpose properties (views, so autograd flows through them), and the field that
  // keeps a Tensor from being structured-cloned (See Note [A Tensor is not cloneable]).

  _noClone = NOT_CLONEABLE;

  /** The dims reversed: permute(ndim - 1, ..., 0), a view (a 0-d or 1-d tensor: a view of itself). */
  get T() {
    const dims = [];
    for (let d = this.ndim - 1; d >= 0; d--) dims.push(d);
    return this.permute(dims);
  }
  /** The last two dims swapped: transpose(-2, -1), a view (0-d: a view of itself; 1-d: an error). */
  get mT() { return matrixAdjoint(this, 'mT'); }
  /** The conjugate transpose of a matrix (2-D; 0-d: a view of itself); for real dtypes the same as T. */
  get H() {
    const n = this.ndim;
    if (n !== 2 && n !== 0) {
      throw new KindlingError(`tensor.H is only supported on matrices (2-D tensors). Got ${n}-D tensor.${n > 2 ? ' For batches of matrices, consider using tensor.mH' : ''}`,
        'KD_INVALID_ARGUMENT');
    }
    return n === 0 ? this.permute([]) : this.transpose(-2, -1);
  }
  /** The conjugate transpose of the last two dims; for real dtypes the same as mT. */
  get mH() { return matrixAdjoint(this, 'mH'); }
}

// Note [A Tensor is not cloneable]
// Structured cloning (worker.postMessage, MessagePort, BroadcastChannel, structuredClone) copies
// an object's own enumerable data, without its prototype. A Tensor's handle (`_h`, a JS External:
// Note [Tensor handles] in src/napi/handle_table.c) cannot be cloned, so cloning a Tensor fails
// anyway, but with V8's "[object Object] could not be cloned". So every Tensor holds a Symbol in
// an own enumerable field set before `_h`, and cloning one throws a DataCloneError whose message
// says what to post instead. The field is one store per tensor made (about 2 ns,
// against the microseconds of the op that made it).
const NOT_CLONEABLE = Symbol('a kindling Tensor cannot be posted or structured-cloned: post `await t.dataAsync()` (a typed array) and `t.shape` instead, and rebuild it with kd.tensor()');

// mT / mH: PyTorch's rule (tensor.mT on a 1-D tensor is an error; a 0-d tensor is its own
// transpose). kindling has no complex dtypes, so the conjugate is the tensor itself.
function matrixAdjoint(t, name) {
  const n = t.ndim;
  if (n === 1) throw new KindlingError(`tensor.${name} is only supported on matrices or batches of matrices. Got 1-D tensor.`, 'KD_INVALID_ARGUMENT');
  return n === 0 ? t.permute([]) : t.transpose(-2, -1);
}

// The elements of the tensor behind handle h, row-major, as dataSync() returns them.
// The values of a CPU tensor of at most 8 elements, read through the environment's small
// buffer (Note [Reading small tensors] in src/napi/tensor.c), or null for any other tensor.
const SMALL_CTORS = [Float32Array, Float64Array, Int8Array, Uint8Array, Int16Array, Int32Array, BigInt64Array];
let smallViews = null;
function smallHostValues(h) {
  const code = N.hostSmall(h);
  if (code < 0) return null;
  if (smallViews === null) {
    const buf = N.smallBuffer();
    smallViews = SMALL_CTORS.map((C) => new C(buf));
  }
  const kind = code >> 4, n = code & 15;
  const src = smallViews[kind];
  const out = new SMALL_CTORS[kind](n);
  for (let i = 0; i < n; i++) out[i] = src[i];
  return out;
}

function hostValues(h) {
  const small = smallHostValues(h);
  if (small !== null) return small;
  const raw = N.toTypedArray(h);
  if (raw instanceof Uint16Array) {
    return N.dtype(h) === 'bfloat16' ? N.bfloat16ToFloat32(raw) : N.float16ToFloat32(raw);
  }
  return raw;
}

// The values a summarised print shows, read through a view of them (format.js summaryView) so
// that only those are copied, however large the tensor (an expanded [1e9] view reads 6).
function summaryValues(h, shape) {
  const { size, stride, offset } = summaryView(shape, N.strides(h), N.storageOffset(h));
  const detached = N.autograd.detach(h);
  let view = null;
  try {
    view = N.ops.asStrided(detached, size, stride, offset);
    return hostValues(view);
  } finally {
    if (view !== null) N.dispose(view);
    N.dispose(detached);
  }
}

function normDim(dim, ndim, what) {
  if (!Number.isInteger(dim)) throw typeError(`${what}(dim): dim must be an integer, got ${describe(dim)}`);
  if (ndim === 0) throw new KindlingRangeError(`Dimension specified as ${dim} but tensor has no dimensions`);
  const n = ndim;
  if (dim < -n || dim >= n) {
    throw new KindlingRangeError(`Dimension out of range (expected to be in range of [${-n}, ${n - 1}], but got ${dim})`);
  }
  return dim < 0 ? dim + ndim : dim;
}

function describe(v) {
  if (v === null) return 'null';
  if (v === undefined) return 'undefined';
  if (Array.isArray(v)) return 'an array';
  if (v instanceof Tensor) return 'a Tensor';
  if (typeof v === 'object') {
    const name = v.constructor && v.constructor.name;
    return name && name !== 'Object' ? `a ${name}` : 'an object';
  }
  if (typeof v === 'string') return `'${v}'`;
  return `${typeof v} ${String(v)}`;
}

/** Called by lib/index.js once the binding and the generated ops are installed. */
function bind(binding) { N = binding; }
function setGeneratedTo(fn) { generatedTo = fn; }

module.exports = { Tensor, DTYPES, bind, setGeneratedTo, describe, smallHostValues };
