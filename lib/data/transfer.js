// transfer.js - batches across threads. A DataLoader worker's batch is a tree of tensors, typed
// arrays, numbers, strings, arrays, plain objects and Maps; tensors cannot cross threads as JS
// objects, so encode() replaces each tensor by {dtype, shape, data} with `data` a typed array
// copy of its values (t.dataSync(): float16/bfloat16 come as Float32Array, which holds them
// exactly) and lists the typed arrays' buffers for transfer (moved, not copied), and disposes
// the worker's tensors. decode() on the receiving thread makes the tensors again
// (kd.tensor(data, {dtype}).reshape(shape)): CPU tensors, contiguous, not requiring grad. The
// bytes are copied twice, each time within a thread (out of the worker's tensor, into the main
// thread's allocator); between threads they move without a copy.
'use strict';

const { mapTree, RECURSE } = require('./tree');

const TENSOR = '__kindlingTensor';

module.exports = function makeTransfer(kd, Tensor) {
  const isWhole = (a) => a.byteOffset === 0 && a.byteLength === a.buffer.byteLength
    && !(typeof SharedArrayBuffer !== 'undefined' && a.buffer instanceof SharedArrayBuffer);
  const container = (x) => x !== null && typeof x === 'object' && !ArrayBuffer.isView(x);

  /** {value, transfer}: the batch with tensors as plain records, and the buffers to move. */
  function encode(batch) {
    const transfer = new Set();
    const value = mapTree(batch, (x) => {
      if (!(x instanceof Tensor)) return container(x) ? RECURSE : x;
      const data = x.dataSync();
      if (isWhole(data)) transfer.add(data.buffer);
      const out = { [TENSOR]: true, dtype: x.dtype, shape: x.shape.slice(), data };
      x.dispose();
      return out;
    });
    return { value, transfer: [...transfer] };
  }

  /** The batch again, tensors rebuilt on this thread. */
  function decode(value) {
    return mapTree(value, (x) => {
      if (!container(x)) return x;
      if (x[TENSOR] !== true) return RECURSE;
      const t = kd.tensor(x.data, { dtype: x.dtype });
      if (t.ndim === 1 && x.shape.length === 1) return t;
      const r = t.reshape(x.shape);
      if (r !== t) t.dispose();
      return r;
    });
  }

  return { encode, decode };
};
