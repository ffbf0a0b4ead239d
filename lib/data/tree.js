// tree.js - mapTree: the one walk over a batch's structure that collation, pinning and the
// worker transfer share. A batch is a tree of arrays, Maps and plain objects with anything at
// the leaves; mapTree(x, leaf) rebuilds it with leaf(v) in place of every value v for which
// leaf returns something other than RECURSE (containers recurse when leaf returns RECURSE).
// Arrays keep the names they give their elements (kindling's multi-output results: `r.values`,
// `r.indices`, not enumerable). Depth is bounded (64): deeper values are returned as they are.
'use strict';

const RECURSE = Symbol('recurse');

function isPlainObject(x) {
  if (x === null || typeof x !== 'object') return false;
  const p = Object.getPrototypeOf(x);
  return p === Object.prototype || p === null;
}

// The names `src` gives its elements (own non-index properties holding one of them), given to
// the same positions of `out`.
function copyNames(src, out) {
  for (const name of Object.getOwnPropertyNames(src)) {
    if (name === 'length' || /^(0|[1-9][0-9]*)$/.test(name)) continue;
    const j = src.indexOf(src[name]);
    if (j >= 0) Object.defineProperty(out, name, { value: out[j], writable: true, enumerable: false, configurable: true });
  }
  return out;
}

function mapTree(x, leaf, depth = 0) {
  if (depth > 64) return x;
  const r = leaf(x);
  if (r !== RECURSE) return r;
  if (Array.isArray(x)) return copyNames(x, Array.from(x, (v) => mapTree(v, leaf, depth + 1)));
  if (x instanceof Map) return new Map([...x].map(([k, v]) => [k, mapTree(v, leaf, depth + 1)]));
  if (isPlainObject(x)) {
    const out = {};
    for (const k of Object.keys(x)) out[k] = mapTree(x[k], leaf, depth + 1);
    return out;
  }
  return x;
}

module.exports = { mapTree, RECURSE, copyNames, isPlainObject };
