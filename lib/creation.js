// creation.js - kd.tensor(data, {dtype, device}) and the runtime functions (seed, memory,
// threads). The factory ops (zeros, arange, randn, ...) are generated (lib/ops.gen.js).
//
// dtype inference follows PyTorch: booleans only -> bool; all numbers integer-valued -> int64;
// any other number (fraction, NaN, Infinity) -> float32. JS has no separate integer type, so
// kd.tensor([1, 2]) is int64 exactly like torch.tensor([1, 2]); write kd.tensor([1, 2],
// {dtype: 'float32'}) (or include a fraction) for floats. With requiresGrad and no dtype, numbers
// give float32: kd.tensor(2.0, {requiresGrad: true}) means torch.tensor(2., requires_grad=True),
// as JS cannot write 2.0 apart from 2 (booleans, bigints and typed arrays keep their dtype, and
// PyTorch's error). Typed arrays keep their type.
'use strict';

const { KindlingError, typeError } = require('./errors');
const { Tensor, describe } = require('./tensor');
const dtypes = require('./dtypes');

// The raw typed array constructor of each dtype (what the binding's fromTypedArray takes).
const RAW = {
  float32: Float32Array, float64: Float64Array, float16: Uint16Array, bfloat16: Uint16Array,
  int8: Int8Array, uint8: Uint8Array, int16: Int16Array, int32: Int32Array, int64: BigInt64Array, bool: Uint8Array,
};
const INT_RANGE = {
  int8: [-128, 127], uint8: [0, 255], int16: [-32768, 32767], int32: [-2147483648, 2147483647],
  int64: [-9223372036854775808, 9223372036854775807],
};
const F16 = typeof Float16Array === 'function' ? Float16Array : null; // eslint-disable-line no-undef

const ragged = (msg) => new KindlingError(`tensor(): ${msg}; nested arrays must be rectangular`, 'KD_SHAPE_MISMATCH');

module.exports = function makeCreation(N) {
  function checkDtype(dtype, where) {
    if (dtype === undefined || dtype === null) return undefined;
    return dtypes.checkDtype(dtype, where);
  }

  function checkDevice(device, where) {
    if (device === undefined || device === null) return 'cpu';
    if (typeof device !== 'string') {
      throw typeError(`${where}: device must be a string such as 'cpu' or 'cuda:0', got ${describe(device)}`);
    }
    return device;
  }

  // A handle converted to dtype (the input handle is released when a new one is made).
  function convertHandle(h, dtype) {
    const out = N.ops.to(h, dtype, undefined, undefined);
    if (out !== h) N.dispose(h);
    return out;
  }

  function fromTyped(arr, opts) {
    let src = arr;
    let srcDtype;
    if (arr instanceof Float32Array) srcDtype = 'float32';
    else if (arr instanceof Float64Array) srcDtype = 'float64';
    else if (arr instanceof Int32Array) srcDtype = 'int32';
    else if (arr instanceof BigInt64Array) srcDtype = 'int64';
    else if (arr instanceof Uint8Array) srcDtype = opts.dtype === 'bool' ? null : 'uint8';
    else if (arr instanceof Uint8ClampedArray) {
      srcDtype = 'uint8';
      src = new Uint8Array(arr.buffer, arr.byteOffset, arr.length);
    }
    else if (arr instanceof Int8Array) srcDtype = 'int8';
    else if (arr instanceof Int16Array) srcDtype = 'int16';
    else if (F16 !== null && arr instanceof F16) {
      srcDtype = 'float16';
      src = new Uint16Array(arr.buffer, arr.byteOffset, arr.length);
    } else if (arr instanceof Uint16Array) {
      if (opts.dtype !== 'float16' && opts.dtype !== 'bfloat16') {
        throw typeError('tensor(): a Uint16Array holds raw float16/bfloat16 bits; ' +
          "pass {dtype: 'float16'} or {dtype: 'bfloat16'}");
      }
      srcDtype = opts.dtype;
    } else {
      throw typeError(`tensor(): unsupported typed array ${arr.constructor.name} (there is no matching dtype)`);
    }
    if (srcDtype === null) {
      // Uint8Array -> bool: any nonzero byte is true
      const b = new Uint8Array(arr.length);
      for (let i = 0; i < arr.length; i++) b[i] = arr[i] !== 0 ? 1 : 0;
      return N.fromTypedArray(b, [arr.length], 'bool', opts.device);
    }
    const h = N.fromTypedArray(src, [src.length], srcDtype, opts.device);
    return opts.dtype && opts.dtype !== srcDtype ? convertHandle(h, opts.dtype) : h;
  }

  // Walks nested arrays: checks they are rectangular and hold numbers/booleans, writes the
  // values (booleans as 0/1) into a Float64Array and reports what kinds of values it saw.
  function flatten(data) {
    const shape = [];
    for (let x = data; Array.isArray(x) || (ArrayBuffer.isView(x) && !(x instanceof DataView)); x = x[0]) {
      shape.push(x.length);
      if (x.length === 0) break;
    }
    let numel = 1;
    for (const s of shape) numel *= s;
    const values = new Float64Array(numel);
    const seen = { bool: false, number: false, float: false, bigint: false };
    let pos = 0;
    const path = [];
    const at = () => `[${path.join('][')}]`;
    const walk = (x, d) => {
      if (d === shape.length) {
        if (typeof x === 'number') {
          seen.number = true;
          if (!seen.float && !Number.isInteger(x)) seen.float = true;
          values[pos++] = x;
        } else if (typeof x === 'boolean') {
          seen.bool = true;
          values[pos++] = x ? 1 : 0;
        } else if (typeof x === 'bigint') {
          seen.number = true;
          seen.bigint = true;
          values[pos++] = Number(x);
        } else if (Array.isArray(x) || ArrayBuffer.isView(x)) {
          throw ragged(`expected a number or boolean at dim ${d} (index ${at()}), got an array`);
        } else {
          throw typeError(`tensor(): expected numbers or booleans, got ${describe(x)} at index ${at()}`);
        }
        return;
      }
      const isSeq = Array.isArray(x) || (ArrayBuffer.isView(x) && !(x instanceof DataView));
      if (!isSeq) {
        if (typeof x === 'number' || typeof x === 'boolean' || typeof x === 'bigint') {
          throw ragged(`expected a sequence of length ${shape[d]} at dim ${d} (index ${at()}), got ${describe(x)}`);
        }
        throw typeError(`tensor(): expected numbers or booleans, got ${describe(x)} at index ${at()}`);
      }
      if (x.length !== shape[d]) {
        throw ragged(`expected a sequence of length ${shape[d]} at dim ${d} (got ${x.length})`);
      }
      for (let i = 0; i < x.length; i++) {
        path.push(i);
        walk(x[i], d + 1);
        path.pop();
      }
    };
    walk(data, 0);
    return { shape, values, seen };
  }

  function fromValues(values, shape, dtype, device, seen, data) {
    const n = values.length;
    if (dtype === 'float64') return N.fromTypedArray(values, shape, 'float64', device);
    if (dtype === 'float32') return N.fromTypedArray(new Float32Array(values), shape, 'float32', device);
    if (dtype === 'float16' || dtype === 'bfloat16') {
      const f = new Float32Array(values);
      const bits = dtype === 'float16' ? N.float32ToFloat16(f) : N.float32ToBfloat16(f);
      return N.fromTypedArray(bits, shape, dtype, device);
    }
    if (dtype === 'bool') {
      const b = new Uint8Array(n);
      for (let i = 0; i < n; i++) b[i] = values[i] !== 0 ? 1 : 0;
      return N.fromTypedArray(b, shape, 'bool', device);
    }
    // integer dtypes: truncate toward zero like PyTorch, refuse values that do not fit
    const [lo, hi] = INT_RANGE[dtype];
    for (let i = 0; i < n; i++) {
      const v = Math.trunc(values[i]);
      if (!(v >= lo && v <= hi) || (dtype === 'int64' && v >= 9223372036854775807)) {
        const msg = `tensor(): value ${values[i]} cannot be converted to ${dtype} without overflow`;
        throw new KindlingError(msg, 'KD_INVALID_ARGUMENT');
      }
    }
    if (dtype !== 'int64') return N.fromTypedArray(new RAW[dtype](values), shape, dtype, device);
    if (seen.bigint) return N.fromTypedArray(int64Exact(data, n), shape, 'int64', device);
    if (n <= 4096) {
      const out = new BigInt64Array(n);
      for (let i = 0; i < n; i++) out[i] = BigInt(Math.trunc(values[i]));
      return N.fromTypedArray(out, shape, 'int64', device);
    }
    return convertHandle(N.fromTypedArray(values, shape, 'float64', device), 'int64');
  }

  // BigInt leaves keep all 64 bits (numbers beyond 2^53 would not).
  function int64Exact(data, n) {
    const out = new BigInt64Array(n);
    let pos = 0;
    const walk = (x) => {
      if (Array.isArray(x) || ArrayBuffer.isView(x)) {
        for (let i = 0; i < x.length; i++) walk(x[i]);
        return;
      }
      out[pos++] = typeof x === 'bigint' ? x : BigInt(Math.trunc(typeof x === 'boolean' ? +x : x));
    };
    walk(data);
    return out;
  }

  /**
   * A new tensor holding a copy of data: nested arrays of numbers or booleans, a number or a
   * boolean (0-d), or a typed array (1-D; its type gives the dtype).
   */
  function tensor(data, options) {
    const requiresGrad = !!(options && options.requiresGrad);
    const t = makeTensor(data, options, requiresGrad);
    if (requiresGrad) t.requiresGrad_(true);
    return t;
  }

  function makeTensor(data, options, requiresGrad) {
    let dtype;
    let device = 'cpu';
    if (options !== undefined && options !== null) {
      if (typeof options !== 'object' || Array.isArray(options)) {
        throw typeError(`tensor(data, options): options must be an object, got ${describe(options)}`);
      }
      for (const k of Object.keys(options)) {
        if (k !== 'dtype' && k !== 'device' && k !== 'requiresGrad') {
          throw typeError(`tensor(): unexpected option '${k}' (expected dtype, device, requiresGrad)`);
        }
      }
      dtype = checkDtype(options.dtype, 'tensor()');
      device = checkDevice(options.device, 'tensor()');
    }
    if (data instanceof Tensor) {
      const dev = options && options.device != null ? device : data.device;
      return data.to({ dtype: dtype || data.dtype, device: dev, copy: true });
    }
    if (ArrayBuffer.isView(data) && !(data instanceof DataView)) {
      return new Tensor(fromTyped(data, { dtype, device }));
    }
    if (typeof data === 'number' || typeof data === 'boolean' || typeof data === 'bigint' || Array.isArray(data)) {
      const { shape, values, seen } = flatten(data);
      if (!dtype) {
        const floating = seen.float || (requiresGrad && seen.number && !seen.bigint);
        dtype = floating ? 'float32' : seen.number ? 'int64' : seen.bool ? 'bool' : 'float32';
      }
      return new Tensor(fromValues(values, shape, dtype, device, seen, data));
    }
    throw typeError('tensor(data): data must be a number, a boolean, a (nested) array or a typed array, ' +
      `got ${describe(data)}`);
  }

  return {
    tensor,
    /** Seeds the random number generator of every device (Philox4x32-10). */
    manualSeed(seed) { N.manualSeed(seed); },
    /** The seed in use (set by manualSeed, or chosen at start-up). */
    initialSeed() { return N.initialSeed(); },
    /** Allocator statistics: live tensors and host/CUDA bytes. */
    memory() { return N.memory(); },
    /** Returns cached host memory blocks to the system. */
    emptyCache() { N.emptyCache(); },
    /** Sets the number of threads CPU kernels use. */
    setNumThreads(n) { N.setNumThreads(n); },
    /** The number of threads CPU kernels use. */
    getNumThreads() { return N.getNumThreads(); },
  };
};
