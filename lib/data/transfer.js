// transfer.js - batches across threads. A DataLoader worker's batch is a tree of tensors, typed
// arrays, numbers, strings, arrays, plain objects and Maps; tensors cannot cross threads as JS
// objects, so encode() replaces each tensor by {dtype, shape, data} with `data` a typed array
// copy of its values (t.dataSync(): float16/bfloat16 come as Float32Array, which holds them
// exactly) and lists the typed arrays' buffers for transfer (moved, not copied), and disposes
// the worker's tensors. decode() on the receiving thread makes the tensors again
// (kd.tensor(data, {dtype}).reshape(shape)): CPU tensors, contiguous, not requiring grad.
'use strict';

const TENSOR = '__kindlingTensor';

module.exports = function makeTransfer(kd, Tensor) {
  const isWhole = (a) => a.byteOffset === 0 && a.byteLength === a.buffer.byteLength
    && !(typeof SharedArrayBuffer !== 'undefined' && a.buffer instanceof SharedArrayBuffer);

  function plain(x) {
    if (x === null || typeof x !== 'object') return false;
    const p = Object.getPrototypeOf(x);
    return p === Object.prototype || p === null;
  }

  /** {value, transfer}: the batch with tensors as plain records, and the buffers to move. */
  function encode(batch) {
    const transfer = new Set();
    const walk = (x, depth) => {
      if (depth > 64 || x === null || typeof x !== 'object') return x;
      if (x instanceof Tensor) {
        const data = x.dataSync();
        const out = { [TENSOR]: true, dtype: x.dtype, shape: x.shape.slice(), data };
        if (isWhole(data)) transfer.add(data.buffer);
        x.dispose();
        return out;
      }
      if (ArrayBuffer.isView(x)) return x;
      if (Array.isArray(x)) return x.map((v) => walk(v, depth + 1));
      if (x instanceof Map) return new Map([...x].map(([k, v]) => [k, walk(v, depth + 1)]));
      if (plain(x)) {
        const out = {};
        for (const k of Object.keys(x)) out[k] = walk(x[k], depth + 1);
        return out;
      }
      return x;
    };
    const value = walk(batch, 0);
    return { value, transfer: [...transfer] };
  }

  /** The batch again, tensors rebuilt on this thread. */
  function decode(value) {
    const walk = (x, depth) => {
      if (depth > 64 || x === null || typeof x !== 'object' || ArrayBuffer.isView(x)) return x;
      if (x[TENSOR] === true) {
        const t = kd.tensor(x.data, { dtype: x.dtype });
        if (t.ndim === 1 && x.shape.length === 1) return t;
        const r = t.reshape(x.shape);
        if (r !== t) t.dispose();
        return r;
      }
      if (Array.isArray(x)) return x.map((v) => walk(v, depth + 1));
      if (x instanceof Map) return new Map([...x].map(([k, v]) => [k, walk(v, depth + 1)]));
      if (plain(x)) {
        const out = {};
        for (const k of Object.keys(x)) out[k] = walk(x[k], depth + 1);
        return out;
      }
      return x;
    };
    return walk(value, 0);
  }

  return { encode, decode };
};
