// oplist/define.js - shorthand constructors for op-list entries of common shapes (unary and binary
// pointwise ops, comparisons, factories, *Like factories). Part of the op list (see ./index.js).
'use strict';

const unary = (name, code, doc, extra = {}) => ({
  name, args: 'Tensor self', returns: 'Tensor', variants: ['function', 'method', 'inplace'],
  kind: 'pointwise', code, cpu: 'kd_cpu_unary', doc, ...extra,
});
const binary = (name, code, doc, extra = {}) => ({
  name, args: 'Tensor self, Tensor|Scalar other', returns: 'Tensor', variants: ['function', 'method', 'inplace'],
  kind: 'pointwise', code, cpu: 'kd_cpu_binary', doc, ...extra,
});
const compare = (name, code, doc) => binary(name, code, doc, { flags: ['nondiff'] });
const factory = (name, args, doc, extra = {}) => ({
  name, args, returns: 'Tensor', variants: ['function'], kind: 'factory', doc, ...extra,
});
const like = (name, args, code, doc) => ({
  name, args, returns: 'Tensor', variants: ['function'], kind: 'factory', code, composite: 'kd_composite_like', doc,
});

module.exports = { unary, binary, compare, factory, like };
