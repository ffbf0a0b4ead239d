// collate.js - kd.data.defaultCollate: a list of samples -> one batch, as PyTorch's
// default_collate, recursively:
//   Tensors                 -> kd.stack(samples) (a new leading batch dim)
//   numbers                 -> a 1-D tensor: int64 when all are integers, else float64
//                              (PyTorch: Python ints -> int64, floats -> float64)
//   booleans                -> a 1-D bool tensor
//   bigints                 -> a 1-D int64 tensor
//   typed arrays            -> a [batch, length] tensor of their dtype (all the same length)
//   strings                 -> the array of strings, unchanged
//   plain objects / Maps    -> the same keys, each collated over the samples
//   arrays (tuples)         -> transposed: [collate(all first elements), collate(all second), ...]
//                              (every sample must have the same length); an array that also
//                              names its elements (kindling's multi-output results, `r.values`,
//                              `r.indices`: PyTorch's namedtuples) gives a batch with the same names
// Anything else (null, undefined, functions, class instances) is a TypeError.
// kd.data.defaultConvert is PyTorch's default_convert (the collate of a DataLoader without
// auto-batching, batchSize: null): typed arrays become tensors of their dtype, arrays, plain
// objects and Maps are converted element by element, everything else is returned unchanged.
'use strict';

const { KindlingError, typeError } = require('../errors');
const { mapTree, RECURSE, copyNames } = require('./tree');

module.exports = function makeCollate(kd, Tensor) {
  function kindOf(x) {
    if (x instanceof Tensor) return 'tensor';
    if (typeof x === 'number') return 'number';
    if (typeof x === 'boolean') return 'boolean';
    if (typeof x === 'bigint') return 'bigint';
    if (typeof x === 'string') return 'string';
    if (Array.isArray(x)) return 'array';
    if (ArrayBuffer.isView(x) && !(x instanceof DataView)) return 'typed';
    if (x instanceof Map) return 'map';
    if (x !== null && typeof x === 'object') {
      const p = Object.getPrototypeOf(x);
      if (p === Object.prototype || p === null) return 'object';
    }
    return null;
  }

  const describe = (x) => (x === null ? 'null' : Array.isArray(x) ? 'an array' : typeof x === 'object' ? `a ${x.constructor ? x.constructor.name : 'object'}` : typeof x);

  function collate(batch, path) {
    const elem = batch[0];
    const kind = kindOf(elem);
    if (kind === null) {
      throw typeError(`defaultCollate: batch must contain tensors, numbers, booleans, strings, typed arrays, objects or arrays; found ${describe(elem)}${path}`);
    }
    for (let i = 1; i < batch.length; i++) {
      if (kindOf(batch[i]) !== kind) {
        throw typeError(`defaultCollate: sample ${i}${path} is ${describe(batch[i])} but sample 0 is ${describe(elem)}`);
      }
    }
    switch (kind) {
      case 'tensor':
        return kd.stack(batch, 0);
      case 'number': {
        const allInt = batch.every(Number.isInteger);
        if (allInt) {
          const a = new BigInt64Array(batch.length);
          for (let i = 0; i < batch.length; i++) a[i] = BigInt(batch[i]);
          return kd.tensor(a);
        }
        return kd.tensor(Float64Array.from(batch));
      }
      case 'boolean':
        return kd.tensor(batch, { dtype: 'bool' });
      case 'bigint':
        return kd.tensor(BigInt64Array.from(batch));
      case 'string':
        return batch.slice();
      case 'typed': {
        const C = elem.constructor;
        const len = elem.length;
        for (let i = 1; i < batch.length; i++) {
          if (batch[i].constructor !== C || batch[i].length !== len) {
            throw new KindlingError(`defaultCollate: typed arrays${path} must all have the same type and length`, 'KD_SHAPE_MISMATCH');
          }
        }
        const flat = new C(len * batch.length);
        for (let i = 0; i < batch.length; i++) flat.set(batch[i], i * len);
        const opts = C === Uint16Array ? { dtype: 'float16' } : undefined;
        const t = kd.tensor(flat, opts);
        const out = t.reshape([batch.length, len]);
        if (out !== t) t.dispose();
        return out;
      }
      case 'object': {
        const out = {};
        for (const k of Object.keys(elem)) {
          out[k] = collate(batch.map((d, i) => {
            if (!Object.prototype.hasOwnProperty.call(d, k)) throw typeError(`defaultCollate: sample ${i}${path} has no key '${k}'`);
            return d[k];
          }), `${path}.${k}`);
        }
        return out;
      }
      case 'map': {
        const out = new Map();
        for (const k of elem.keys()) {
          out.set(k, collate(batch.map((d, i) => {
            if (!d.has(k)) throw typeError(`defaultCollate: sample ${i}${path} has no key '${String(k)}'`);
            return d.get(k);
          }), `${path}.${String(k)}`));
        }
        return out;
      }
      default: { // array
        const len = elem.length;
        if (!batch.every((d) => d.length === len)) {
          throw new KindlingError('each element in list of batch should be of equal size', 'KD_SHAPE_MISMATCH');
        }
        const out = new Array(len);
        for (let j = 0; j < len; j++) out[j] = collate(batch.map((d) => d[j]), `${path}[${j}]`);
        return copyNames(elem, out);
      }
    }
  }

  /** Collates a non-empty array of samples into a batch (see the file header). */
  function defaultCollate(batch) {
    if (!Array.isArray(batch)) throw typeError('defaultCollate: expected an array of samples');
    if (batch.length === 0) throw new KindlingError('defaultCollate: the batch is empty', 'KD_INVALID_ARGUMENT');
    return collate(batch, '');
  }

  /** PyTorch's default_convert: typed arrays -> tensors, recursively (see the file header). */
  function defaultConvert(data) {
    return mapTree(data, (x) => {
      if (kindOf(x) === 'typed') return kd.tensor(x, x instanceof Uint16Array ? { dtype: 'float16' } : undefined);
      return x instanceof Tensor ? x : RECURSE;
    });
  }

  return { defaultCollate, defaultConvert };
};
