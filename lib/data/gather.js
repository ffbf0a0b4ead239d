// gather.js - kd.data.gatherRows: the rows `indices` of each tensor (t.indexSelect(0, indices)),
// assembled off the main thread. The native side (src/napi/data_async.c) runs the gather on the
// libuv thread pool and resolves the Promise with the new tensors, so the event loop and the
// training step keep running meanwhile; DataLoader's `for await` uses it for prefetching.
//
//   const [x, y] = await kd.data.gatherRows([images, labels], [5, 0, 17]);
//
// The results are contiguous, keep their sources' dtypes and never require grad. The gather holds
// its own reference on every source until it settles: disposing a source meanwhile is safe (the
// gather still reads the data it was given; see Note [Disposing a gather's sources]). Errors (a
// disposed or non-CPU tensor, an index out of range) are rejections carrying a `code`. Gathers
// share libuv's pool (UV_THREADPOOL_SIZE threads, default 4) with fs, dns and zlib work.
'use strict';

const { typeError } = require('../errors');

module.exports = function makeGather(kd, Tensor, N) {
  // Indices as a typed array the native side copies: Int32Array/BigInt64Array/Float64Array as
  // given, anything array-like as a Float64Array (checked for integers natively).
  function indexArray(indices) {
    if (indices instanceof Int32Array || indices instanceof BigInt64Array || indices instanceof Float64Array) return indices;
    if (Array.isArray(indices) || ArrayBuffer.isView(indices)) return Float64Array.from(indices, Number);
    throw typeError('gatherRows: indices must be an array of integers or an integer typed array');
  }

  /** A Promise of [t.indexSelect(0, indices) for each tensor], gathered on the libuv thread pool. */
  function gatherRows(tensors, indices) {
    try {
      if (!Array.isArray(tensors) || !tensors.every((t) => t instanceof Tensor)) {
        throw typeError('gatherRows: expected an array of tensors');
      }
      const idx = indexArray(indices);
      return N.gatherRows(tensors.map((t) => t._h), idx).then((handles) => handles.map((h) => new Tensor(h)));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  return { gatherRows };
};
