// tensor_conveniences.js - PyTorch's small Tensor conveniences that ported programs use, written
// over existing ops: tolist, viewAs/reshapeAs/typeAs, newZeros/newOnes/newFull/newEmpty/newTensor,
// the dtype shorthands (float(), long(), ...), type() with the legacy names ('torch.FloatTensor',
// 'torch.cuda.FloatTensor'), nelement, isCuda, ravel; and the legacy constructors kd.FloatTensor,
// kd.LongTensor, ..., kd.cuda.FloatTensor, ... and a callable kd.Tensor(...).
'use strict';

const { typeError, KindlingError } = require('./errors');
const { parseDtype, checkDtype } = require('./dtypes');

// dtype -> PyTorch's legacy tensor type name (torch.<Name>, torch.cuda.<Name>)
const LEGACY = Object.freeze({
  float32: 'FloatTensor', float64: 'DoubleTensor', float16: 'HalfTensor', bfloat16: 'BFloat16Tensor',
  uint8: 'ByteTensor', int8: 'CharTensor', int16: 'ShortTensor', int32: 'IntTensor', int64: 'LongTensor',
  bool: 'BoolTensor',
});
const LEGACY_DTYPE = new Map(Object.entries(LEGACY).map(([d, n]) => [n, d]));

// The dtype shorthands: t.float() is t.to('float32'), ...
const SHORTHANDS = Object.freeze({
  float: 'float32', double: 'float64', half: 'float16', bfloat16: 'bfloat16', long: 'int64',
  int: 'int32', short: 'int16', char: 'int8', byte: 'uint8', bool: 'bool',
});

const isPlainObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && !ArrayBuffer.isView(v) &&
  Object.getPrototypeOf(v) === Object.prototype;

module.exports = function installTensorConveniences(kd, Tensor, describe) {
  const P = Tensor.prototype;
  const legacyCtors = new Map(); // constructor function -> {dtype, cuda}

  // 'torch.FloatTensor' / 'torch.cuda.LongTensor' / a legacy constructor -> {dtype, cuda}, or null
  function legacyType(v) {
    if (typeof v === 'function') return legacyCtors.get(v) || null;
    if (typeof v !== 'string') return null;
    const m = /^torch\.(cuda\.)?([A-Za-z0-9]+)$/.exec(v);
    if (m === null || !LEGACY_DTYPE.has(m[2])) return null;
    return { dtype: LEGACY_DTYPE.get(m[2]), cuda: m[1] !== undefined };
  }
  function legacyName(t) {
    return `torch.${t.device.startsWith('cuda') ? 'cuda.' : ''}${LEGACY[t.dtype]}`;
  }

  /** The elements as nested arrays (a number or boolean for a 0-d tensor): PyTorch's tolist(). */
  P.tolist = function tolist() { return this.arraySync(); };
  /** view(other.shape). */
  P.viewAs = function viewAs(other) { return this.view(tensorArg(other, 'viewAs(other)').shape); };
  /** reshape(other.shape). */
  P.reshapeAs = function reshapeAs(other) { return this.reshape(tensorArg(other, 'reshapeAs(other)').shape); };
  /** This tensor with other's dtype and on other's device (itself when both already match). */
  P.typeAs = function typeAs(other) {
    const o = tensorArg(other, 'typeAs(other)');
    return this.to({ dtype: o.dtype, device: o.device });
  };
  /** The number of elements (numel()). */
  P.nelement = function nelement() { return this.numel(); };
  /** A 1-D tensor of the elements, a view when possible: reshape(-1). */
  P.ravel = function ravel() { return this.reshape(-1); };
  Object.defineProperty(P, 'isCuda', {
    /** True for a tensor on a CUDA device. */
    get() { return this.device.startsWith('cuda'); },
    configurable: true,
  });

  for (const [name, dtype] of Object.entries(SHORTHANDS)) {
    // t.float(), t.long(), ...: to(dtype); memoryFormat (an options object) is accepted.
    const fn = function (options) {
      if (options !== undefined && !isPlainObject(options)) {
        throw typeError(`${name}(): expected an options object ({memoryFormat}), got ${describe(options)}`);
      }
      return this.to({ dtype });
    };
    Object.defineProperty(fn, 'name', { value: name });
    P[name] = fn;
  }

  /**
   * type(): the legacy type name ('torch.FloatTensor', 'torch.cuda.LongTensor'). type(t): this
   * tensor converted to t, a dtype ('float64'), a legacy name (a 'torch.cuda.*' name also moves it
   * to the GPU, a 'torch.*' one to the CPU) or a legacy constructor (kd.DoubleTensor); itself when
   * nothing changes. Options: {nonBlocking}.
   */
  P.type = function type(dtype, options) {
    if (dtype === undefined || dtype === null) return legacyName(this);
    const opts = options !== undefined && isPlainObject(options) && options.nonBlocking ? { nonBlocking: true } : {};
    const legacy = legacyType(dtype);
    if (legacy !== null) {
      const onCuda = this.device.startsWith('cuda');
      const device = legacy.cuda ? (onCuda ? this.device : 'cuda') : 'cpu';
      return this.to({ dtype: legacy.dtype, device, ...opts });
    }
    if (typeof dtype === 'string' && parseDtype(dtype) !== null && !/^torch\./.test(dtype)) {
      return this.to({ dtype: parseDtype(dtype), ...opts });
    }
    throw new KindlingError(`invalid type: ${typeof dtype === 'string' ? `'${dtype}'` : describe(dtype)}`, 'KD_INVALID_ARGUMENT');
  };

  // newZeros(size, {dtype, device, requiresGrad}) and friends: the dtype and device default to
  // this tensor's. The size is an array or varargs (newZeros(2, 3)).
  function newOptions(t, opts, where) {
    if (opts !== undefined && opts !== null && !isPlainObject(opts)) {
      throw typeError(`${where}: options must be an object ({dtype, device, requiresGrad}), got ${describe(opts)}`);
    }
    const o = opts || {};
    for (const k of Object.keys(o)) {
      if (k !== 'dtype' && k !== 'device' && k !== 'requiresGrad' && k !== 'layout' && k !== 'pinMemory') {
        throw typeError(`${where}: unexpected option '${k}' (expected dtype, device, requiresGrad)`);
      }
    }
    return {
      dtype: o.dtype != null ? checkDtype(o.dtype, where) : t.dtype,
      device: o.device != null ? o.device : t.device,
      requiresGrad: !!o.requiresGrad,
    };
  }
  function sizeAndOptions(args, where) {
    let opts;
    if (args.length && isPlainObject(args[args.length - 1])) opts = args[args.length - 1];
    const sizes = opts === undefined ? args : args.slice(0, -1);
    const size = sizes.length === 1 && Array.isArray(sizes[0]) ? sizes[0] : sizes;
    if (!size.every((s) => Number.isInteger(s))) {
      throw typeError(`${where}: size must be an array of integers or integers, got ${describe(sizes.length === 1 ? sizes[0] : sizes)}`);
    }
    return { size, opts };
  }
  const factory = (name, make) => function (...args) {
    const { size, opts } = sizeAndOptions(args, `${name}(size)`);
    return make(size, newOptions(this, opts, `${name}()`));
  };
  /** Zeros of `size`, with this tensor's dtype and device unless given. */
  P.newZeros = factory('newZeros', (size, o) => kd.zeros(size, o));
  /** Ones of `size`, with this tensor's dtype and device unless given. */
  P.newOnes = factory('newOnes', (size, o) => kd.ones(size, o));
  /** Uninitialised memory of `size`, with this tensor's dtype and device unless given. */
  P.newEmpty = factory('newEmpty', (size, o) => kd.empty(size, o));
  /** `size` filled with fillValue, with this tensor's dtype and device unless given. */
  P.newFull = function newFull(size, fillValue, options) {
    if (!Array.isArray(size) || !size.every((s) => Number.isInteger(s))) {
      throw typeError(`newFull(size, fillValue): size must be an array of integers, got ${describe(size)}`);
    }
    return kd.full(size, fillValue, newOptions(this, options, 'newFull()'));
  };
  /** A new tensor (a copy) of data, with this tensor's dtype and device unless given. */
  P.newTensor = function newTensor(data, options) {
    return kd.tensor(data, newOptions(this, options, 'newTensor()'));
  };

  function tensorArg(v, where) {
    if (!(v instanceof Tensor)) throw typeError(`${where}: other must be a Tensor, got ${describe(v)}`);
    return v;
  }

  // ---- legacy constructors ------------------------------------------------------------------
  // kd.FloatTensor(2, 3) (uninitialised, as PyTorch), kd.FloatTensor([1, 2]) (from data, in the
  // constructor's dtype: LongTensor([1.7]) truncates), kd.FloatTensor() (empty), kd.FloatTensor(t)
  // (t itself when its type matches, else an error). With or without `new`.
  function makeLegacy(dtype, cuda) {
    const qualified = `torch.${cuda ? 'cuda.' : ''}${LEGACY[dtype]}`;
    const build = (args) => {
      let opts;
      if (args.length && isPlainObject(args[args.length - 1])) opts = args[args.length - 1];
      const rest = opts === undefined ? args : args.slice(0, -1);
      let device = cuda ? 'cuda' : 'cpu';
      if (opts !== undefined) {
        for (const k of Object.keys(opts)) {
          if (k !== 'device') throw typeError(`${qualified}(): unexpected option '${k}' (expected device)`);
        }
        if (opts.device != null) {
          const want = cuda ? 'cuda' : 'cpu';
          const got = String(opts.device).split(':')[0];
          if (got !== want) {
            throw new KindlingError(`legacy constructor expects device type: ${want} but device type: ${got} was passed`, 'KD_DEVICE_MISMATCH');
          }
          device = opts.device;
        }
      }
      if (rest.length === 0) return kd.empty([0], { dtype, device });
      if (rest.length === 1 && rest[0] instanceof Tensor) {
        const t = rest[0];
        if (t.dtype !== dtype || t.device.startsWith('cuda') !== cuda) {
          throw new KindlingError(`expected ${qualified} (got ${legacyName(t)})`, 'KD_DTYPE_MISMATCH');
        }
        return t;
      }
      if (rest.every((s) => Number.isInteger(s))) return kd.empty(rest, { dtype, device });
      if (rest.length === 1 && (Array.isArray(rest[0]) || (ArrayBuffer.isView(rest[0]) && !(rest[0] instanceof DataView)))) {
        return kd.tensor(rest[0], { dtype, device });
      }
      throw typeError(`${qualified}(): expected sizes (integers), data (an array or typed array) or a Tensor, got ${rest.map(describe).join(', ')}`);
    };
    const ctor = function (...args) { return build(args); };
    Object.defineProperty(ctor, 'name', { value: LEGACY[dtype] });
    // instanceof: a tensor of this type (torch.FloatTensor's isinstance check)
    Object.defineProperty(ctor, Symbol.hasInstance, {
      value: (t) => t instanceof Tensor && t.dtype === dtype && t.device.startsWith('cuda') === cuda,
    });
    legacyCtors.set(ctor, { dtype, cuda });
    return ctor;
  }
  for (const dtype of Object.keys(LEGACY)) {
    kd[LEGACY[dtype]] = makeLegacy(dtype, false);
    kd.cuda[LEGACY[dtype]] = makeLegacy(dtype, true);
  }

  // kd.Tensor(...) called as a function is torch.Tensor(...): the float32 legacy constructor.
  // kd.Tensor stays the class for `instanceof` and subclassing; `new kd.Tensor(handle)` is the
  // internal wrapper of a native handle, as before.
  const floatCtor = kd.FloatTensor;
  const proxy = new Proxy(Tensor, { apply: (_target, _this, args) => floatCtor(...args) });
  return proxy;
};

module.exports.LEGACY = LEGACY;
