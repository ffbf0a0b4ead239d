// args.js - binds JS call arguments to an op's schema (the `rt` that lib/ops.gen.js calls).
//
// Schema tuples come from the op list: [name, type, kwOnly, optional]. A call is
//   positional arguments in PyTorch's order, then optionally one options object naming any
//   argument:   kd.sum(x, 1, true)   x.sum({dim: 1, keepdim: true})   x.add(y, {alpha: 2})
// Varargs shapes: when an op's only positional parameter (after self) is int[], the numbers
// may be spread: kd.zeros(2, 3) == kd.zeros([2, 3]), t.view(2, -1). Ops marked `varargs` take
// their last positional Tensor[] spread too: kd.einsum('ij,jk->ik', a, b), and
// kd.meshgrid(x, y, {indexing: 'xy'}) == kd.meshgrid([x, y], {indexing: 'xy'}).
// Overloads (max() vs max(dim, keepdim)) are tried in order; the first that binds wins.
// Ops marked `numberSelf` take a number as `self` in their function form, as PyTorch takes a
// Python number there (torch.pow(2, t), torch.sub(1, t), torch.xlogy(2, t)): see numberSelf below.
// Anything that does not bind is a KindlingTypeError (code KD_INVALID_TYPE) naming the
// argument, before any native code runs.
'use strict';

const { KindlingError, typeError } = require('./errors');
const { unknownDtypeMessage } = require('./dtypes');

const TYPE_NAMES = {
  'Tensor': 'a Tensor', 'Tensor?': 'a Tensor or null', 'Tensor|Scalar': 'a Tensor, a number or a boolean',
  'Scalar': 'a number or a boolean', 'Scalar?': 'a number, a boolean or null', 'int': 'an integer',
  'int?': 'an integer or null', 'int|int[]': 'an integer or an array of integers',
  'int[]': 'an array of integers', 'int[]?': 'an integer, an array of integers or null', 'float': 'a number',
  'bool': 'a boolean', 'dtype?': 'a dtype string', 'device?': 'a device string', 'str?': 'a string',
  'Tensor[]': 'an array of Tensors', 'float?': 'a number or null', 'bool?': 'a boolean or null', 'str': 'a string',
  'Tensor?[]': 'an array of Tensors or nulls', 'float[]?': 'a number, an array of numbers or null',
  'int[1]': 'an integer or an array of integers', 'int[1]?': 'an integer, an array of integers or null',
  'int[2]': 'an integer or an array of integers', 'int[2]?': 'an integer, an array of integers or null',
  'int[3]': 'an integer or an array of integers', 'int[3]?': 'an integer, an array of integers or null',
};
const SIG_TYPES = {
  'Tensor': 'Tensor', 'Tensor?': 'Tensor', 'Tensor|Scalar': 'Tensor|number', 'Scalar': 'number',
  'Scalar?': 'number', 'int': 'int', 'int?': 'int', 'int|int[]': 'int|int[]', 'int[]': 'int[]',
  'int[]?': 'int[]', 'float': 'number', 'bool': 'boolean', 'dtype?': 'dtype', 'device?': 'device',
  'str?': 'string', 'Tensor[]': 'Tensor[]', 'float?': 'number', 'bool?': 'boolean', 'str': 'string',
  'Tensor?[]': '(Tensor|null)[]', 'float[]?': 'number[]',
  'int[1]': 'int|int[]', 'int[1]?': 'int|int[]', 'int[2]': 'int|int[]', 'int[2]?': 'int|int[]', 'int[3]': 'int|int[]', 'int[3]?': 'int|int[]',
};

const BAD = Symbol('bad');
// Note [Numbers as self]: PyTorch's parser turns a Python number given as `self` of add, sub,
// mul, div, pow, remainder, xlogy, ... into a "wrapped number" 0-d tensor. kindling makes it a
// 0-d tensor of the dtype PyTorch's result_type(other, number) gives (other's dtype unless the
// number's category, bool < integer < float, is higher: then int64 or float32), on other's
// device, so the kernel's promotion of (that tensor, other) is PyTorch's and the number keeps
// the precision of the computation. It never requires grad: autograd flows to other only.
const CATEGORY = { bool: 0, uint8: 1, int8: 1, int16: 1, int32: 1, int64: 1, float16: 2, bfloat16: 2, float32: 2, float64: 2 };
function numberDtype(v, other) {
  // Note [JS numbers as scalars] (src/napi/ops.c): an integer-valued number is an integer
  const cat = typeof v === 'boolean' ? 0
    : typeof v === 'bigint' || (Number.isInteger(v) && Math.abs(v) <= 9007199254740992) ? 1 : 2;
  // beside a float tensor with dims, a float64 0-d tensor promotes the same way and keeps the
  // number whole for ops that compute in float64 (floatPower(2.1, t))
  if (cat === 2 && CATEGORY[other.dtype] === 2 && other.ndim > 0) return 'float64';
  if (cat <= CATEGORY[other.dtype]) return other.dtype;
  return cat === 1 ? 'int64' : 'float32';
}
class NumberSelf {
  constructor(value, other) { this.value = value; this.other = other; }
}
const INT_DTYPES = new Set(['int8', 'uint8', 'int16', 'int32', 'int64']);

module.exports = function makeRuntime(Tensor, dtypeSet, describe) {
  function isOptions(v) {
    return v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Tensor) && !ArrayBuffer.isView(v);
  }
  const isInt = (v) => Number.isInteger(v) || typeof v === 'bigint';
  const isScalar = (v) => typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint';

  // Lists are copied, each element read once: what is checked is what native code gets, and a
  // getter (or Proxy) on the caller's array runs here, before any tensor argument is unwrapped.
  function intList(v) {
    if (ArrayBuffer.isView(v) && !(v instanceof DataView)) return Array.from(v, (x) => (typeof x === 'bigint' ? Number(x) : x));
    if (!Array.isArray(v)) return BAD;
    const out = new Array(v.length);
    for (let i = 0; i < out.length; i++) {
      const x = v[i];
      if (!isInt(x)) return BAD;
      out[i] = x;
    }
    return out;
  }

  // PyTorch's argument parser takes a 0-d integer tensor that does not require grad where an
  // int is expected (narrow(x, 0, torch.tensor(1), 2)): its value, or BAD. Only when no overload
  // binds without it (invoke's second pass), so max(x, tensor(1)) stays max(Tensor, Tensor).
  let intTensors = false;
  function intTensorValue(v) {
    if (!intTensors || !(v instanceof Tensor) || v.ndim !== 0 || v.requiresGrad) return BAD;
    if (!INT_DTYPES.has(v.dtype)) return BAD;
    return v.item();
  }

  // The native value for v as `type`, or BAD.
  function convert(type, v) {
    switch (type) {
      case 'Tensor': case 'Tensor?': return v instanceof Tensor ? v._h : BAD;
      case 'Tensor|Scalar': return v instanceof Tensor ? v._h : isScalar(v) ? v : BAD;
      case 'Scalar': case 'Scalar?': return isScalar(v) ? v : BAD;
      case 'int': case 'int?': return isInt(v) ? v : intTensorValue(v);
      case 'int|int[]': return isInt(v) ? v : intList(v);
      case 'int[]': return intList(v);
      case 'int[]?': return isInt(v) ? [v] : intList(v);
      case 'int[1]': case 'int[1]?': case 'int[2]': case 'int[2]?': case 'int[3]': case 'int[3]?':
        // PyTorch's IntArrayRef[N] takes one int for the N-element list (logsumexp(x, 1))
        return isInt(v) ? new Array(Number(type[4])).fill(v) : intList(v);
      case 'float': case 'float?': return typeof v === 'number' ? v : BAD;
      case 'bool': case 'bool?': return typeof v === 'boolean' ? v : BAD;
      case 'float[]?': {
        if (typeof v === 'number') return [v];
        if (!Array.isArray(v)) return BAD;
        const out = new Array(v.length);
        for (let i = 0; i < out.length; i++) {
          const x = v[i];
          if (typeof x !== 'number') return BAD;
          out[i] = x;
        }
        return out;
      }
      case 'dtype?': return typeof v === 'string' && dtypeSet.has(v) ? v : BAD;
      case 'device?': case 'str?': case 'str': return typeof v === 'string' ? v : BAD;
      case 'Tensor?[]': {
        if (!Array.isArray(v)) return BAD;
        const out = new Array(v.length);
        for (let i = 0; i < out.length; i++) {
          const x = v[i];
          if (x == null) out[i] = null;
          else if (x instanceof Tensor) out[i] = x._h;
          else return BAD;
        }
        return out;
      }
      case 'Tensor[]': {
        if (!Array.isArray(v)) return BAD;
        const out = new Array(v.length);
        for (let i = 0; i < out.length; i++) {
          const x = v[i];
          if (!(x instanceof Tensor)) return BAD;
          out[i] = x._h;
        }
        return out;
      }
      default: return BAD;
    }
  }

  // Per-overload facts, computed on first use: positional parameter indices, names -> index.
  function meta(o, isMethod) {
    const key = isMethod ? '_methodMeta' : '_fnMeta';
    if (o[key]) return o[key];
    const first = isMethod ? 1 : 0;
    const positional = [];
    const byName = Object.create(null);
    for (let i = first; i < o.args.length; i++) {
      const a = o.args[i];
      if (!a[2]) positional.push(i);
      byName[a[0]] = i;
    }
    const varargs = positional.length === 1 && o.args[positional[0]][1] === 'int[]';
    // the last positional Tensor[] of an op marked varargs takes the tensors spread (einsum)
    const last = positional[positional.length - 1];
    const tensorVarargs = o.varargs === true && last !== undefined && o.args[last][1] === 'Tensor[]' ? positional.length - 1 : -1;
    const jsName = o.name.split('.')[0];
    const parts = [];
    for (let i = first; i < o.args.length; i++) {
      const a = o.args[i];
      if (a[2] && !parts.includes('*')) parts.push('*');
      parts.push(`${a[0]}${a[3] ? '?' : ''}: ${SIG_TYPES[a[1]]}`);
    }
    const sig = parts.join(', ');
    const m = { first, positional, byName, varargs, tensorVarargs, jsName, sig };
    Object.defineProperty(o, key, { value: m, enumerable: false });
    return m;
  }

  // Binds argv to o; returns the native argument array or an error string.
  function bind(o, m, self, argv) {
    let n = argv.length;
    let opts = null;
    if (n > 0 && isOptions(argv[n - 1])) opts = argv[--n];
    const vals = new Array(o.args.length);
    const pos = m.positional;
    const spreadNone = m.varargs && o.varargs === true && n === 0 && (opts === null || opts[o.args[pos[0]][0]] === undefined);
    if (spreadNone || (m.varargs && (n > 1 || (n === 1 && !Array.isArray(argv[0]) && !ArrayBuffer.isView(argv[0]))))) {
      const list = new Array(n);
      for (let i = 0; i < n; i++) list[i] = argv[i];
      vals[pos[0]] = list;
    } else if (m.tensorVarargs >= 0 && ((n > m.tensorVarargs && argv[m.tensorVarargs] instanceof Tensor) ||
        // no tensors at all (kd.blockDiag()), unless the options object names the list
        (n === m.tensorVarargs && (opts === null || opts[o.args[pos[m.tensorVarargs]][0]] === undefined)))) {
      const k = m.tensorVarargs;
      for (let i = 0; i < k; i++) vals[pos[i]] = argv[i];
      vals[pos[k]] = Array.prototype.slice.call(argv, k, n);
    } else {
      if (n > pos.length) {
        return `takes ${pos.length} positional argument${pos.length === 1 ? '' : 's'} but ${n} ${n === 1 ? 'was' : 'were'} given`;
      }
      for (let i = 0; i < n; i++) vals[pos[i]] = argv[i];
    }
    if (opts !== null) {
      for (const k of Object.keys(opts)) {
        const v = opts[k];
        const i = m.byName[k];
        if (i === undefined) return `unexpected option '${k}'`;
        if (v === undefined) continue;
        if (vals[i] !== undefined) return `got multiple values for argument '${k}'`;
        vals[i] = v;
      }
    }
    let numberSelf = null;
    if (o.numberSelf === true && m.first === 0 && isScalar(vals[0]) && vals[1] instanceof Tensor) {
      numberSelf = new NumberSelf(vals[0], vals[1]);
      vals[0] = vals[1]; // bound as the tensor it stands beside; replaced in call()
    }
    for (let i = m.first; i < o.args.length; i++) {
      const a = o.args[i];
      const v = vals[i];
      if (v === undefined || v === null) {
        if (!a[3]) return `missing required argument '${a[0]}'`;
        vals[i] = undefined;
        continue;
      }
      const c = convert(a[1], v);
      if (c === BAD) {
        if (Array.isArray(v) && a[1] !== 'Tensor[]' && a[1] !== 'Tensor|Scalar') {
          const j = v.findIndex((e) => !isInt(e));
          if (j >= 0) return `argument '${a[0]}' must be ${TYPE_NAMES[a[1]]}, but element ${j} is ${describe(v[j])}`;
        }
        if (a[1] === 'Tensor[]' && Array.isArray(v)) {
          const j = v.findIndex((e) => !(e instanceof Tensor));
          return `argument '${a[0]}' must be ${TYPE_NAMES[a[1]]}, but element ${j} is ${describe(v[j])}`;
        }
        if (a[1] === 'dtype?' && typeof v === 'string') return unknownDtypeMessage(v);
        return `argument '${a[0]}' must be ${TYPE_NAMES[a[1]]}, not ${describe(v)}`;
      }
      vals[i] = c;
    }
    if (m.first === 1) vals[0] = self._h;
    if (numberSelf !== null) vals[0] = numberSelf;
    return vals;
  }

  // An op that returns one of its inputs unchanged (contiguous() of a contiguous tensor, to()
  // with nothing to do) gets that input's own handle back from the native entry, and returns
  // the same Tensor object, as PyTorch returns the same Python object.
  function sameInput(out, self, argv) {
    if (self !== null && self._h === out) return self;
    for (let i = 0; i < argv.length; i++) if (argv[i] instanceof Tensor && argv[i]._h === out) return argv[i];
    return null;
  }

  // A bool result (allclose, equal): the native 0-d bool tensor read as a JS boolean and freed.
  function wrapBool(handle) {
    const t = new Tensor(handle);
    try {
      return t.item();
    } finally {
      t.dispose();
    }
  }

  function wrap(o, self, out, argv) {
    if (o.inplace) return self;
    if (o.ret === 'bool') return wrapBool(out);
    if (o.ret === 'tensor') return sameInput(out, self, argv) || new Tensor(out);
    if (o.ret === 'list') return wrapList(out);
    return wrapTuple(out, o.names);
  }

  // a 0-d tensor among the arguments (or the values of an options object)
  function hasScalarTensor(v) {
    if (v instanceof Tensor) return v.ndim === 0;
    return isOptions(v) && Object.values(v).some((x) => x instanceof Tensor && x.ndim === 0);
  }

  function call(o, self, vals, argv) {
    if (typeof o.fn !== 'function') {
      throw new KindlingError(`${o.name} is not available in this build of kindling`, 'KD_NOT_SUPPORTED');
    }
    if (vals[0] instanceof NumberSelf) return callNumberSelf(o, vals, argv);
    return wrap(o, self, o.fn(...vals), argv);
  }

  // See Note [Numbers as self].
  function callNumberSelf(o, vals, argv) {
    const { value, other } = vals[0];
    const wrapped = rt.numberTensor(typeof value === 'bigint' ? Number(value) : value, numberDtype(value, other), other.device);
    try {
      vals[0] = wrapped._h;
      return wrap(o, null, o.fn(...vals), argv);
    } finally {
      wrapped.dispose();
    }
  }

  function invoke(overloads, self, argv) {
    const isMethod = self !== null;
    if (isMethod && !(self instanceof Tensor)) {
      throw typeError(`${overloads[0].name.split('.')[0]}() must be called on a Tensor`);
    }
    let errors = null;
    for (let k = 0; k < overloads.length; k++) {
      const o = overloads[k];
      const m = meta(o, isMethod);
      const vals = bind(o, m, self, argv);
      if (typeof vals === 'string') {
        (errors || (errors = [])).push(vals);
        continue;
      }
      return call(o, self, vals, argv);
    }
    if (Array.prototype.some.call(argv, hasScalarTensor)) {
      for (let k = 0; k < overloads.length; k++) {
        const o = overloads[k];
        intTensors = true;
        let vals;
        try {
          vals = bind(o, meta(o, isMethod), self, argv);
        } finally {
          intTensors = false;
        }
        if (typeof vals !== 'string') return call(o, self, vals, argv);
      }
    }
    const m0 = meta(overloads[0], isMethod);
    const name = (isMethod ? 'Tensor.' : '') + m0.jsName;
    if (overloads.length === 1) throw typeError(`${name}(): ${errors[0]}`);
    const got = Array.prototype.map.call(argv, (v) => describe(v)).join(', ');
    const sigs = overloads.map((o, i) => ` * (${meta(o, isMethod).sig}): ${errors[i]}`).join('\n');
    throw typeError(`${name}() received an invalid combination of arguments - got (${got}), but expected one of:\n${sigs}`);
  }

  function wrapList(handles) {
    const out = new Array(handles.length);
    for (let i = 0; i < handles.length; i++) out[i] = new Tensor(handles[i]);
    return out;
  }

  function wrapTuple(handles, names) {
    const out = wrapList(handles);
    for (let i = 0; i < names.length; i++) {
      Object.defineProperty(out, names[i], { value: out[i], enumerable: false, writable: true, configurable: true });
    }
    return out;
  }

  // The object at a dotted path under kd ('nn.functional' -> kd.nn.functional), created on first
  // use: generated ops declared with `ns` install their functions there.
  function namespace(kd, dotted) {
    let o = kd;
    for (const part of dotted.split('.')) {
      if (o[part] === undefined) o[part] = {};
      o = o[part];
    }
    return o;
  }

  // numberTensor(value, dtype, device): a 0-d tensor, installed by lib/index.js (kd.full)
  const rt = { invoke, wrapList, wrapTuple, wrapBool, namespace, numberTensor: null };
  return rt;
};
