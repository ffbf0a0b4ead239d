// nested.js - Tensor#arraySync's nested arrays, built from the row-major values. Only the arrays
// the result holds are made: below a dim of size 0 there is nothing, so the dims after it are
// never walked (shape [0, 2**40] gives [], [3, 0, 2**40] gives [[], [], []], as PyTorch's
// tolist()). A result the JavaScript heap cannot hold (shape [2**31, 0, 2**31]: 2^31 empty arrays)
// is refused with KD_OUT_OF_MEMORY before anything is built, as V8 would otherwise end the
// process when its heap runs out (Python's tolist() raises MemoryError there).
'use strict';

const v8 = require('node:v8');
const { KindlingError } = require('./errors');

// Heap bytes per array (JSArray header and its elements' header, 64-bit pointers) and per element
// slot (a pointer, or an unboxed double).
const BYTES_PER_ARRAY = 64;
const BYTES_PER_SLOT = 8;

/** The heap bytes the nested arrays of a tensor of `shape` take, roughly (a float, may be huge). */
function nestedBytes(shape) {
  let arrays = 1;
  let slots = 0;
  let count = 1; // arrays at the current depth
  for (let d = 0; d < shape.length && count > 0; d++) {
    slots += count * shape[d];
    count *= shape[d];
    if (d < shape.length - 1) arrays += count;
  }
  return arrays * BYTES_PER_ARRAY + slots * BYTES_PER_SLOT;
}

const gb = (bytes) => `${(bytes / 2 ** 30).toFixed(1)} GB`;

/** Throws KD_OUT_OF_MEMORY when the nested arrays of `shape` cannot fit in the free JS heap. */
function checkNestedFits(shape, where) {
  const need = nestedBytes(shape);
  if (need < 2 ** 24) return; // 16 MB: no need to ask V8
  const { heap_size_limit: limit, used_heap_size: used } = v8.getHeapStatistics();
  if (need > limit - used) {
    throw new KindlingError(`${where}: the nested arrays of a tensor of shape [${shape.join(', ')}] would take ` +
      `about ${gb(need)} of JavaScript heap, more than the ${gb(limit - used)} free; ` +
      'read its values with dataSync() or print it, or slice it first', 'KD_OUT_OF_MEMORY');
  }
}

/**
 * Nested arrays of `shape` holding data's values in row-major order, each passed through conv
 * when given (a 0-d shape gives the single value).
 */
function nestedArrays(data, shape, conv) {
  if (shape.length === 0) return conv ? conv(data[0]) : data[0];
  const last = shape.length - 1;
  let pos = 0;
  const build = (d) => {
    const n = shape[d];
    const out = new Array(n);
    if (d === last) {
      for (let i = 0; i < n; i++) out[i] = conv ? conv(data[pos++]) : data[pos++];
    } else {
      for (let i = 0; i < n; i++) out[i] = build(d + 1);
    }
    return out;
  };
  return build(0);
}

module.exports = { nestedArrays, checkNestedFits, nestedBytes };
